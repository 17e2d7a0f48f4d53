//! What a request asks for besides its path: list and watch query parameters
//! (`metav1.ListOptions`: parsing, the apiserver's defaults, its validation, continue tokens),
//! the namespace/name/selector [`Filter`] of collections, the options of writes (`dryRun`,
//! `fieldValidation`, `fieldManager`), and `DeleteOptions` (body and query).

use base64::Engine;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::apply::is_apply;
use super::negotiation::{decode_body, Query, Request};
use crate::context::Context;
use crate::discovery::ApiResource;
use crate::error::{field, ApiError, StatusCause};
use crate::filters::request_info::RequestInfo;
use crate::registry::resource::NameList;
use crate::registry::store::{DeleteOptions, Propagation};
use crate::registry::strategy::FieldValidation;
use crate::store::selector::{FieldSelector, LabelSelector};
use crate::store::{ObjectKey, StoredObject};

/// `resourceVersionMatch`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Match {
    /// `NotOlderThan` (also what an unset match means when a resourceVersion is given).
    NotOlderThan,
    /// `Exact`.
    Exact,
}

/// The list/watch options a request carries, validated.
#[derive(Debug, Clone, Default)]
pub struct ListOptions {
    /// `watch=true`.
    pub watch: bool,
    /// `resourceVersion`, as given ("" when absent).
    pub resource_version: String,
    /// `resourceVersionMatch`.
    pub resource_version_match: Option<Match>,
    /// `limit` (0: no limit).
    pub limit: usize,
    /// `continue`, decoded.
    pub continue_token: Option<ContinueToken>,
    /// `sendInitialEvents`, after the apiserver's defaulting.
    pub send_initial_events: Option<bool>,
    /// `allowWatchBookmarks`.
    pub allow_watch_bookmarks: bool,
    /// `timeoutSeconds`.
    pub timeout_seconds: Option<u64>,
}

impl ListOptions {
    /// Parses and validates the options of a list (`watch == false`) or watch request.
    pub fn parse(query: &Query, watch: bool) -> Result<ListOptions, ApiError> {
        let resource_version = query.get("resourceVersion").unwrap_or("").to_string();
        let raw_match = query.get("resourceVersionMatch").unwrap_or("");
        let mut send_initial_events = query
            .get("sendInitialEvents")
            .map(|_| query.flag("sendInitialEvents"));
        let raw_continue = query.get("continue").unwrap_or("");
        let mut effective_match = raw_match.to_string();
        // SetListOptionsDefaults (WatchList on): a legacy watch from "" or "0" is a watch that
        // sends the initial state.
        if watch
            && send_initial_events.is_none()
            && raw_match.is_empty()
            && (resource_version.is_empty() || resource_version == "0")
        {
            send_initial_events = Some(true);
            effective_match = "NotOlderThan".into();
        }
        let errs = validate(
            watch,
            &resource_version,
            &effective_match,
            send_initial_events,
            !raw_continue.is_empty(),
        );
        if !errs.is_empty() {
            return Err(ApiError::invalid("meta.k8s.io", "ListOptions", "", errs));
        }
        let limit = match query.get("limit") {
            None | Some("") => 0,
            Some(s) => s.parse::<i64>().map(|n| n.max(0) as usize).map_err(|_| {
                ApiError::bad_request(format!("limit: Invalid value: {s:?}: must be an integer"))
            })?,
        };
        let timeout_seconds = match query.get("timeoutSeconds") {
            None | Some("") => None,
            Some(s) => Some(s.parse::<u64>().map_err(|_| {
                ApiError::bad_request(format!(
                    "timeoutSeconds: Invalid value: {s:?}: must be a non-negative integer"
                ))
            })?),
        };
        let continue_token = if raw_continue.is_empty() {
            None
        } else {
            let token = ContinueToken::decode(raw_continue)?;
            if !resource_version.is_empty() && resource_version != "0" {
                return Err(ApiError::bad_request(
                    "specifying resource version is not allowed when using continue",
                ));
            }
            Some(token)
        };
        Ok(ListOptions {
            watch,
            resource_version_match: match effective_match.as_str() {
                "Exact" => Some(Match::Exact),
                "NotOlderThan" => Some(Match::NotOlderThan),
                _ => None,
            },
            resource_version,
            limit,
            continue_token,
            send_initial_events,
            allow_watch_bookmarks: query.flag("allowWatchBookmarks"),
            timeout_seconds,
        })
    }

    /// The resourceVersion as a number: `None` for "" (most recent); `Some(0)` for "0" (any).
    pub fn resource_version(&self) -> Result<Option<u64>, ApiError> {
        parse_resource_version(&self.resource_version)
    }
}

/// Parses a resourceVersion parameter, with the apiserver's error for a malformed one.
pub fn parse_resource_version(rv: &str) -> Result<Option<u64>, ApiError> {
    if rv.is_empty() {
        return Ok(None);
    }
    rv.parse::<u64>()
        .map(Some)
        .map_err(|_| ApiError::bad_request(format!("invalid resource version: {rv:?}")))
}

/// `ValidateListOptions` (with the WatchList feature on, as in current servers).
fn validate(
    watch: bool,
    rv: &str,
    matched: &str,
    send_initial_events: Option<bool>,
    has_continue: bool,
) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let path = "resourceVersionMatch";
    if watch {
        if send_initial_events.is_some() && matched != "NotOlderThan" {
            errs.push(field::forbidden(
                path,
                "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
            ));
        }
        if !matched.is_empty() {
            if send_initial_events.is_none() {
                errs.push(field::forbidden(
                    path,
                    "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
                ));
            }
            if matched != "NotOlderThan" {
                errs.push(field::not_supported(
                    path,
                    &Value::String(matched.into()),
                    &["NotOlderThan"],
                ));
            }
            if has_continue {
                errs.push(field::forbidden(
                    path,
                    "resourceVersionMatch is forbidden when continue is provided",
                ));
            }
        }
        return errs;
    }
    if !matched.is_empty() {
        if rv.is_empty() {
            errs.push(field::forbidden(
                path,
                "resourceVersionMatch is forbidden unless resourceVersion is provided",
            ));
        }
        if has_continue {
            errs.push(field::forbidden(
                path,
                "resourceVersionMatch is forbidden when continue is provided",
            ));
        }
        if matched != "Exact" && matched != "NotOlderThan" {
            errs.push(field::not_supported(
                path,
                &Value::String(matched.into()),
                &["Exact", "NotOlderThan", ""],
            ));
        }
        if matched == "Exact" && rv == "0" {
            errs.push(field::forbidden(
                path,
                "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
            ));
        }
    }
    if send_initial_events.is_some() {
        errs.push(field::forbidden(
            "sendInitialEvents",
            "sendInitialEvents is forbidden for list",
        ));
    }
    errs
}

/// Where a paginated list continues: the snapshot's resourceVersion and the last key returned.
/// Encoded like the apiserver's (base64 of `{"v","rv","start"}`); clients treat it as opaque.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContinueToken {
    /// The resourceVersion every page is read at; `None` for the latest state, what a token
    /// with a negative resourceVersion asks for (the apiserver hands one out with the 410 of a
    /// token whose state is gone, so that a client may go on with an inconsistent list).
    pub rv: Option<u64>,
    /// The last key of the previous page.
    pub after: ObjectKey,
}

#[derive(Serialize, Deserialize)]
struct Wire {
    v: String,
    rv: i64,
    start: String,
}

impl ContinueToken {
    /// The opaque string.
    pub fn encode(&self) -> String {
        let start = if self.after.namespace.is_empty() {
            format!("{}\u{0}", self.after.name)
        } else {
            format!("{}/{}\u{0}", self.after.namespace, self.after.name)
        };
        let wire = Wire {
            v: "meta.k8s.io/v1".into(),
            rv: self
                .rv
                .map_or(-1, |rv| i64::try_from(rv).unwrap_or(i64::MAX)),
            start,
        };
        let json = serde_json::to_vec(&wire).unwrap_or_default();
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(json)
    }

    /// Parses a token, with the apiserver's 400 for a malformed one (`invalid continue token:
    /// continue key is not valid: ...`, Go's base64 and JSON texts included).
    pub fn decode(s: &str) -> Result<ContinueToken, ApiError> {
        Self::decode_key(s)
            .map_err(|why| ApiError::bad_request(format!("invalid continue token: {why}")))
    }

    /// The apiserver's `DecodeContinue`, its errors as Go words them.
    fn decode_key(s: &str) -> Result<ContinueToken, String> {
        const INVALID: &str = "continue key is not valid";
        let bytes = go_raw_url_base64(s)
            .map_err(|at| format!("{INVALID}: illegal base64 data at input byte {at}"))?;
        if let Some(e) = crate::typed::syntax::syntax_error(&bytes) {
            return Err(format!("{INVALID}: {e}"));
        }
        let wire = wire_fields(&bytes).map_err(|e| format!("{INVALID}: {e}"))?;
        if wire.v != "meta.k8s.io/v1" {
            return Err(format!(
                "{INVALID}: server does not recognize this encoded version {}",
                wire.v
            ));
        }
        if wire.rv == 0 {
            return Err(format!(
                "{INVALID}: incorrect encoded start resourceVersion (version meta.k8s.io/v1)"
            ));
        }
        if wire.start.is_empty() {
            return Err(format!(
                "{INVALID}: encoded start key empty (version meta.k8s.io/v1)"
            ));
        }
        if !is_clean_key(&wire.start) {
            return Err(format!("{INVALID}: {}", wire.start));
        }
        let start = wire.start.trim_end_matches('\u{0}');
        let after = match start.split_once('/') {
            Some((ns, name)) => ObjectKey::new(ns, name),
            None => ObjectKey::new("", start),
        };
        Ok(ContinueToken {
            rv: u64::try_from(wire.rv).ok(),
            after,
        })
    }
}

/// The token's fields as Go's `json.Unmarshal` into the apiserver's `continueToken` reads them
/// (unknown keys ignored, `null` leaves the zero value), with its type errors.
fn wire_fields(bytes: &[u8]) -> Result<Wire, String> {
    let value: Value = serde_json::from_slice(bytes).map_err(|e| e.to_string())?;
    let Value::Object(map) = value else {
        return Err(format!(
            "json: cannot unmarshal {} into Go value of type storage.continueToken",
            crate::typed::syntax::go_json_kind(&value)
        ));
    };
    let type_error = |field: &str, v: &Value, go_type: &str| {
        let kind = crate::typed::syntax::go_json_kind(v);
        // Go quotes the number only where it is one that does not fit the field's type.
        let shown = if kind == "number" && go_type != "string" {
            format!("number {v}")
        } else {
            kind.to_string()
        };
        format!("json: cannot unmarshal {shown} into Go struct field continueToken.{field} of type {go_type}")
    };
    let string = |field: &str| match map.get(field) {
        None | Some(Value::Null) => Ok(String::new()),
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(type_error(field, other, "string")),
    };
    let rv = match map.get("rv") {
        None | Some(Value::Null) => 0,
        Some(n @ Value::Number(_)) => n.as_i64().ok_or_else(|| type_error("rv", n, "int64"))?,
        Some(other) => return Err(type_error("rv", other, "int64")),
    };
    Ok(Wire {
        v: string("v")?,
        rv,
        start: string("start")?,
    })
}

/// Whether `path.Clean` leaves a start key (rooted) unchanged: the apiserver's guard against
/// tokens that would range outside the listed resource.
fn is_clean_key(start: &str) -> bool {
    let rooted = start.strip_prefix('/').unwrap_or(start);
    if rooted.is_empty() {
        return start.is_empty();
    }
    !rooted
        .split('/')
        .any(|seg| seg.is_empty() || seg == "." || seg == "..")
}

/// Go's `base64.RawURLEncoding.DecodeString`: the URL alphabet, no padding, line breaks
/// skipped, non-zero trailing bits accepted; the error is the offset Go reports.
fn go_raw_url_base64(s: &str) -> Result<Vec<u8>, usize> {
    let mut digits = Vec::with_capacity(s.len());
    for (i, c) in s.bytes().enumerate() {
        let d = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'-' => 62,
            b'_' => 63,
            b'\r' | b'\n' => continue,
            _ => return Err(i),
        };
        digits.push((i, d));
    }
    if digits.len() % 4 == 1 {
        return Err(s.len() - 1);
    }
    let mut out = Vec::with_capacity(digits.len() * 3 / 4);
    for chunk in digits.chunks(4) {
        let mut acc: u32 = 0;
        for (k, &(_, d)) in chunk.iter().enumerate() {
            acc |= u32::from(d) << (18 - 6 * k);
        }
        let bytes = acc.to_be_bytes();
        out.extend_from_slice(&bytes[1..chunk.len()]);
    }
    Ok(out)
}

/// The 410 for a continue token whose snapshot is no longer kept, offering (as
/// `metadata.continue`) the token that goes on from the same key at the latest state.
pub fn continue_expired(token: &ContinueToken) -> ApiError {
    let latest = ContinueToken {
        rv: None,
        after: token.after.clone(),
    };
    let mut err = ApiError::gone("The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.");
    err.continue_token = Some(latest.encode());
    err
}

/// Namespace, name and selector restrictions of a list, watch or deletecollection.
#[derive(Default)]
pub struct Filter {
    /// Only objects in this namespace.
    pub namespace: Option<String>,
    /// Only the object of this name.
    pub name: Option<String>,
    /// `labelSelector`.
    pub labels: LabelSelector,
    /// `fieldSelector`.
    pub fields: FieldSelector,
}

impl Filter {
    /// The restrictions of a request on a collection of `res`.
    pub fn from_query(
        res: &ApiResource,
        info: &RequestInfo,
        req: &Request,
    ) -> Result<Filter, ApiError> {
        let labels = LabelSelector::parse(req.query.get("labelSelector").unwrap_or(""))
            .map_err(|e| ApiError::bad_request(e.to_string()))?;
        let selector = req.query.get("fieldSelector").unwrap_or("");
        let fields = match &res.field_selectors {
            NameList::Static(names) => FieldSelector::parse(selector, names, res.unsupported_field),
            NameList::Owned(names) => FieldSelector::parse(selector, names, res.unsupported_field),
        }
        .map_err(|e| ApiError::bad_request(e.to_string()))?;
        Ok(Filter {
            namespace: (res.namespaced && !info.namespace.is_empty())
                .then(|| info.namespace.clone()),
            name: (!info.name.is_empty()).then(|| info.name.clone()),
            labels,
            fields,
        })
    }

    /// Whether an object passes every restriction. Only selectors look into the object, so a
    /// filter without them never needs its tree.
    pub fn matches(&self, key: &ObjectKey, obj: &StoredObject) -> bool {
        let in_scope = self
            .namespace
            .as_ref()
            .is_none_or(|ns| &key.namespace == ns)
            && self.name.as_ref().is_none_or(|n| &key.name == n);
        if !in_scope || (self.labels.is_empty() && self.fields.is_empty()) {
            return in_scope;
        }
        let obj = obj.value();
        (self.labels.is_empty()
            || self
                .labels
                .matches(obj["metadata"].get("labels").and_then(Value::as_object)))
            && (self.fields.is_empty() || self.fields.matches(&obj))
    }
}

/// Sets the write options of a request on its context: `dryRun`, `fieldValidation`, and the
/// field manager recorded in `managedFields` (the `fieldManager` parameter, else one derived
/// from the User-Agent; none for server-side apply, which records its own entry).
pub fn set_write_options(ctx: &mut Context, req: &Request) -> Result<(), ApiError> {
    ctx.dry_run = req.query.all("dryRun").any(|v| v == "All");
    ctx.field_validation = FieldValidation::parse(req.query.get("fieldValidation"))?;
    ctx.field_manager = if is_apply(req) {
        None
    } else {
        Some(match req.query.get("fieldManager") {
            Some(m) if !m.is_empty() => m.to_string(),
            _ => crate::apply::default_manager(req.header("user-agent")),
        })
    };
    Ok(())
}

/// `meta.k8s.io/v1 DeleteOptions` as a request body carries it.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct DeleteOptionsBody {
    grace_period_seconds: Option<i64>,
    preconditions: Option<Preconditions>,
    orphan_dependents: Option<bool>,
    propagation_policy: Option<String>,
    dry_run: Option<Vec<String>>,
}

/// `meta.k8s.io/v1 Preconditions`.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Preconditions {
    uid: Option<String>,
    resource_version: Option<String>,
}

fn parse_propagation(p: &str) -> Result<Propagation, ApiError> {
    Propagation::parse(p).ok_or_else(|| {
        ApiError::invalid(
            "meta.k8s.io",
            "DeleteOptions",
            "",
            vec![field::not_supported(
                "propagationPolicy",
                &serde_json::json!(p),
                &["Foreground", "Background", "Orphan", "nil"],
            )],
        )
    })
}

/// `DeleteOptions` from the body (if any) and the query; a dry run in either marks the
/// request's context.
pub fn delete_options(req: &Request, ctx: &mut Context) -> Result<DeleteOptions, ApiError> {
    let body: DeleteOptionsBody = if req.body.is_empty() {
        DeleteOptionsBody::default()
    } else {
        let value = decode_body(req, "DeleteOptions", true)?;
        serde_json::from_value(value)
            .map_err(|e| ApiError::bad_request(format!("error decoding DeleteOptions: {e}")))?
    };
    if let (Some(_), Some(p)) = (body.orphan_dependents, body.propagation_policy.as_deref()) {
        // ValidateDeleteOptions: reported on propagationPolicy, with its other errors.
        let mut causes = vec![field::invalid(
            "propagationPolicy",
            &Value::String(p.to_string()),
            "orphanDependents and deletionPropagation cannot be both set",
        )];
        if let Err(e) = parse_propagation(p) {
            causes.extend(e.details.map(|d| d.causes).unwrap_or_default());
        }
        return Err(ApiError::invalid(
            "meta.k8s.io",
            "DeleteOptions",
            "",
            causes,
        ));
    }
    let mut opts = DeleteOptions {
        uid: body.preconditions.as_ref().and_then(|p| p.uid.clone()),
        resource_version: body.preconditions.and_then(|p| p.resource_version),
        grace_period_seconds: body.grace_period_seconds,
        propagation: body
            .propagation_policy
            .as_deref()
            .map(parse_propagation)
            .transpose()?,
    };
    if let Some(orphan) = body.orphan_dependents {
        opts.propagation = Some(if orphan {
            Propagation::Orphan
        } else {
            Propagation::Background
        });
    }
    if let Some(p) = req.query.get("propagationPolicy") {
        opts.propagation = Some(parse_propagation(p)?);
    }
    if let Some(g) = req
        .query
        .get("gracePeriodSeconds")
        .and_then(|s| s.parse().ok())
    {
        opts.grace_period_seconds = Some(g);
    }
    if body.dry_run.is_some_and(|d| d.iter().any(|v| v == "All")) {
        ctx.dry_run = true;
    }
    Ok(opts)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors(query: &str, watch: bool) -> Vec<String> {
        match ListOptions::parse(&Query::parse(query), watch) {
            Ok(_) => Vec::new(),
            Err(e) => e
                .details
                .map(|d| {
                    d.causes
                        .iter()
                        .map(|c| format!("{}: {}", c.field, c.message))
                        .collect()
                })
                .unwrap_or_else(|| vec![e.message]),
        }
    }

    #[test]
    fn list_rules() {
        assert!(errors("", false).is_empty());
        assert!(errors("resourceVersion=5&resourceVersionMatch=Exact", false).is_empty());
        assert_eq!(
            errors("resourceVersionMatch=Exact", false),
            ["resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"]
        );
        assert_eq!(
            errors("resourceVersion=0&resourceVersionMatch=Exact", false),
            ["resourceVersionMatch: Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\""]
        );
        assert_eq!(
            errors("resourceVersion=1&resourceVersionMatch=Newest", false),
            ["resourceVersionMatch: Unsupported value: \"Newest\": supported values: \"Exact\", \"NotOlderThan\", \"\""]
        );
        assert_eq!(
            errors("sendInitialEvents=true", false),
            ["sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list"]
        );
    }

    #[test]
    fn watch_rules() {
        assert!(errors("", true).is_empty());
        assert!(errors(
            "sendInitialEvents=true&resourceVersionMatch=NotOlderThan",
            true
        )
        .is_empty());
        assert_eq!(
            errors("resourceVersion=5&resourceVersionMatch=NotOlderThan", true),
            ["resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"]
        );
        assert_eq!(
            errors("sendInitialEvents=true", true),
            ["resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan"]
        );
        let legacy = ListOptions::parse(&Query::parse("resourceVersion=0"), true).expect("ok");
        assert_eq!(
            legacy.send_initial_events,
            Some(true),
            "defaulted like the apiserver"
        );
        let from_rv = ListOptions::parse(&Query::parse("resourceVersion=7"), true).expect("ok");
        assert_eq!(from_rv.send_initial_events, None);
    }

    #[test]
    fn continue_tokens_round_trip_and_reject_garbage() {
        let t = ContinueToken {
            rv: Some(42),
            after: ObjectKey::new("ns", "name"),
        };
        assert_eq!(ContinueToken::decode(&t.encode()).expect("decodes"), t);
        let cluster = ContinueToken {
            rv: Some(7),
            after: ObjectKey::new("", "n"),
        };
        assert_eq!(
            ContinueToken::decode(&cluster.encode()).expect("decodes"),
            cluster
        );
        let latest = ContinueToken {
            rv: None,
            after: ObjectKey::new("ns", "n"),
        };
        assert_eq!(
            ContinueToken::decode(&latest.encode()).expect("decodes"),
            latest
        );
        // {"v":"meta.k8s.io/v1","rv":-1,"start":"ns/n\u0000"}, as the apiserver writes it.
        let go = "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6LTEsInN0YXJ0IjoibnMvblx1MDAwMCJ9";
        assert_eq!(ContinueToken::decode(go).expect("decodes"), latest);
        for bad in ["", "!!", "e30", "eyJ2IjoieCIsInJ2IjoxLCJzdGFydCI6IiJ9"] {
            let err = ContinueToken::decode(bad).expect_err(bad);
            assert_eq!(err.code, 400, "{bad}");
        }
        assert_eq!(
            errors(&format!("continue={}&resourceVersion=5", t.encode()), false),
            ["specifying resource version is not allowed when using continue"]
        );
    }

    /// Each message is the real apiserver's for the token (`DecodeContinue` in
    /// k8s.io/apiserver/pkg/storage/continue.go, Go 1.26's base64 and JSON errors).
    #[rstest::rstest]
    #[case(
        "garbage",
        "continue key is not valid: invalid character '\\u0081' looking for beginning of value"
    )]
    #[case("a", "continue key is not valid: illegal base64 data at input byte 0")]
    #[case(
        "ab!c",
        "continue key is not valid: illegal base64 data at input byte 2"
    )]
    #[case(
        "ab=",
        "continue key is not valid: illegal base64 data at input byte 2"
    )]
    // {}
    #[case(
        "e30",
        "continue key is not valid: server does not recognize this encoded version "
    )]
    // {"v":"meta.k8s.io/v1","rv":0,"start":"x"}
    #[case("eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MCwic3RhcnQiOiJ4In0", "continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)")]
    // {"v":"x","rv":1,"start":""}
    #[case(
        "eyJ2IjoieCIsInJ2IjoxLCJzdGFydCI6IiJ9",
        "continue key is not valid: server does not recognize this encoded version x"
    )]
    // {"v":"meta.k8s.io/v1","rv":1,"start":""}
    #[case(
        "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiIifQ",
        "continue key is not valid: encoded start key empty (version meta.k8s.io/v1)"
    )]
    // {"v":"meta.k8s.io/v1","rv":1,"start":"../x"}
    #[case(
        "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MSwic3RhcnQiOiIuLi94In0",
        "continue key is not valid: ../x"
    )]
    // {"rv":"1"}
    #[case("eyJydiI6IjEifQ", "continue key is not valid: json: cannot unmarshal string into Go struct field continueToken.rv of type int64")]
    // []
    #[case("W10", "continue key is not valid: json: cannot unmarshal array into Go value of type storage.continueToken")]
    fn continue_token_errors(#[case] token: &str, #[case] want: &str) {
        let err = ContinueToken::decode(token).expect_err(token);
        assert_eq!(err.code, 400);
        assert_eq!(err.reason, "BadRequest");
        assert_eq!(err.message, format!("invalid continue token: {want}"));
    }
}
