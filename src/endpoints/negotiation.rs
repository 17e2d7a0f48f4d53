//! Content negotiation: the request as handlers see it, query parameters, media types and
//! Accept entries, request bodies decoded from JSON, YAML or protobuf, and JSON responses.

use bytes::Bytes;
use serde_json::Value;
use warp::http::{self, HeaderMap, StatusCode};
use warp::reply::Response;

use super::{json_dups, protobuf};
use crate::error::ApiError;
use crate::typed::syntax::syntax_error;

/// The largest request body the apiserver accepts (3 MiB).
pub const MAX_BODY_BYTES: usize = 3 * 1024 * 1024;

/// One HTTP request, as the handlers see it.
pub struct Request {
    /// `GET`, `POST`, ...
    pub method: String,
    /// The URL path.
    pub path: String,
    /// Decoded query parameters.
    pub query: Query,
    /// Request headers.
    pub headers: HeaderMap,
    /// The whole body (already bounded by [`MAX_BODY_BYTES`]).
    pub body: Bytes,
    /// The user of the client certificate the connection verified, if any.
    pub peer: Option<std::sync::Arc<crate::context::UserInfo>>,
    /// The client's address, when the audit log asked the connection for it.
    pub remote: Option<std::net::IpAddr>,
    /// The connection's upgrade, when the request asks for a WebSocket.
    pub upgrade: Option<super::websocket::Upgrade>,
}

impl Request {
    /// A header as a string, or "".
    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or("")
    }
}

/// Query parameters in order; repeated keys are kept.
#[derive(Debug, Default, Clone)]
pub struct Query(pub Vec<(String, String)>);

impl Query {
    /// Parses a raw query string.
    pub fn parse(raw: &str) -> Query {
        Query(
            form_urlencoded::parse(raw.as_bytes())
                .into_owned()
                .collect(),
        )
    }

    /// The first value of a parameter.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Every value of a parameter.
    pub fn all<'a>(&'a self, key: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.0
            .iter()
            .filter(move |(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// A boolean parameter as Go's `strconv.ParseBool` reads it (`1`, `t`, `true`, ...).
    pub fn flag(&self, key: &str) -> bool {
        matches!(
            self.get(key),
            Some("1" | "t" | "T" | "true" | "TRUE" | "True")
        )
    }
}

/// The media type of a Content-Type or Accept entry, without parameters, lower-cased.
pub fn media_type(value: &str) -> String {
    value
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
}

/// One entry of an Accept header: its media type and a lookup of its parameters
/// (`application/json;as=Table;v=v1;g=meta.k8s.io`).
pub struct AcceptEntry<'a> {
    /// The media type, lower-cased, without parameters.
    pub media: String,
    params: Vec<(&'a str, &'a str)>,
}

impl<'a> AcceptEntry<'a> {
    /// The entries of an Accept header, in the client's order.
    pub fn parse_all(accept: &'a str) -> impl Iterator<Item = AcceptEntry<'a>> {
        accept.split(',').map(|entry| AcceptEntry {
            media: media_type(entry),
            params: entry
                .split(';')
                .skip(1)
                .filter_map(|p| p.trim().split_once('='))
                .collect(),
        })
    }

    /// A parameter's value.
    pub fn param(&self, key: &str) -> Option<&'a str> {
        self.params.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }
}

/// A response with a JSON body.
pub fn json_response(status: StatusCode, body: impl Into<Bytes>) -> Response {
    let mut resp = Response::new(body.into().into());
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    resp
}

/// A JSON response from a tree.
pub fn json_value(status: StatusCode, v: &Value) -> Response {
    json_response(status, serde_json::to_vec(v).unwrap_or_default())
}

/// The `Status` response for an error.
/// A `retryAfterSeconds` in its details is also sent as `Retry-After`, as the apiserver's
/// `ErrorNegotiated` does.
pub fn error_response(err: &ApiError) -> Response {
    let status = StatusCode::from_u16(err.code).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    let mut resp = json_response(status, err.to_status_json());
    let retry = err.details.as_ref().and_then(|d| d.retry_after_seconds);
    if let Some(seconds) = retry.filter(|s| *s > 0) {
        resp.headers_mut()
            .insert(http::header::RETRY_AFTER, http::HeaderValue::from(seconds));
    }
    resp
}

/// The plain-text 404 the apiserver's not-found handler writes for paths nobody serves.
pub fn plain_not_found() -> Response {
    let mut resp = Response::new(Bytes::from_static(b"404 page not found\n").into());
    *resp.status_mut() = StatusCode::NOT_FOUND;
    resp.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    resp.headers_mut().insert(
        "x-content-type-options",
        http::HeaderValue::from_static("nosniff"),
    );
    resp
}

/// Decodes a request body in one of the formats the apiserver accepts for objects.
/// `expected_kind` names the type in the apiserver's decode-error message; `builtin` allows the
/// protobuf encoding that client-go and kubectl use for built-in kinds.
pub fn decode_body(req: &Request, expected_kind: &str, builtin: bool) -> Result<Value, ApiError> {
    decode_body_fields(req, expected_kind, builtin).map(|(v, _)| v)
}

/// [`decode_body`], also returning the paths of duplicated JSON keys (for `fieldValidation`).
pub fn decode_body_fields(
    req: &Request,
    expected_kind: &str,
    builtin: bool,
) -> Result<(Value, Vec<String>), ApiError> {
    decode_bytes(
        req.header("content-type"),
        &req.body,
        expected_kind,
        builtin,
    )
}

/// [`decode_body_fields`] of a Content-Type and a body. Every decoder is linear in the body:
/// JSON through [`json_dups`], YAML through serde-saphyr's default budget (alias expansion,
/// nodes, nesting and scalar bytes bounded: an alias bomb is refused), protobuf nested at most
/// [`protobuf::MAX_DEPTH`] messages.
pub fn decode_bytes(
    content_type: &str,
    body: &[u8],
    expected_kind: &str,
    builtin: bool,
) -> Result<(Value, Vec<String>), ApiError> {
    let mut duplicates = Vec::new();
    let media = media_type(content_type);
    let value: Result<Value, String> = match media.as_str() {
        "application/vnd.kubernetes.protobuf" if builtin => {
            return protobuf::decode(body).map(|v| (v, Vec::new())).map_err(|e| {
                ApiError::bad_request(format!(
                    "the object provided is unrecognized (must be of type {expected_kind}): {e} ({})",
                    summarize(body)
                ))
            });
        }
        "" | "application/json" | "*/*" => json_dups::parse(body)
            .map(|(v, dups)| {
                duplicates = dups;
                v
            })
            // Go's wording where Go's scanner refuses the body too.
            .map_err(|e| syntax_error(body).unwrap_or_else(|| e.to_string())),
        "application/yaml" | "application/x-yaml" | "text/yaml" => match decode_yaml(body) {
            Ok(v) => Ok(v),
            // The YAML serializer's `YAMLToJSON` fails before any version/kind is read.
            Err(e) => {
                return Err(ApiError::bad_request(format!(
                "the object provided is unrecognized (must be of type {expected_kind}): {e} ({})",
                summarize(body)
            )))
            }
        },
        _ => {
            return Err(ApiError::unsupported_media_type(
                content_type,
                &[
                    "application/json",
                    "application/yaml",
                    "application/vnd.kubernetes.protobuf",
                ],
            ))
        }
    };
    match value {
        Ok(v @ Value::Object(_)) => Ok((v, duplicates)),
        Ok(other) => Err(ApiError::bad_request(format!(
            "the object provided is unrecognized (must be of type {expected_kind}): couldn't get version/kind; json parse error: json: cannot unmarshal {} into Go value of type struct {{ APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" }} ({})",
            crate::typed::syntax::go_json_kind(&other),
            summarize(body)
        ))),
        Err(e) => Err(ApiError::bad_request(format!(
            "the object provided is unrecognized (must be of type {expected_kind}): couldn't get version/kind; json parse error: {e} ({})",
            summarize(body)
        ))),
    }
}

/// YAML (or JSON, a subset) as a JSON tree, within serde-saphyr's default budget: alias
/// replays, nodes, nesting depth and scalar bytes are bounded, so an alias bomb (billion laughs)
/// or deep nesting is an error, not a cost. The error is worded as sigs.k8s.io/yaml's
/// `YAMLToJSON` words it ([`super::yaml_error`]).
pub fn decode_yaml(body: &[u8]) -> Result<Value, String> {
    // JSON is YAML: a JSON document (what kube-rs, client-go and kubectl send for server-side
    // apply) decodes to the same tree through the JSON parser at a fraction of the cost. A
    // body it refuses, or with duplicated keys (an error in YAML), takes the YAML path.
    if body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{') {
        if let Ok((value, duplicates)) = json_dups::parse(body) {
            if duplicates.is_empty() {
                return Ok(value);
            }
        }
    }
    let text = std::str::from_utf8(body).map_err(|e| super::yaml_error::utf8_error(body, e))?;
    if let Some(refused) = super::yaml_error::refusal(text) {
        return Err(refused);
    }
    serde_saphyr::from_str::<Value>(text).map_err(|e| super::yaml_error::go_yaml_error(text, &e))
}

/// The apiserver's `summarizeData`: the body itself when it looks like JSON, else hex; 30 bytes.
fn summarize(body: &[u8]) -> String {
    if body.is_empty() {
        return "<empty>".into();
    }
    let head = &body[..body.len().min(30)];
    let more = if body.len() > 30 { " ..." } else { "" };
    if body[0] == b'{' {
        format!("{}{more}", String::from_utf8_lossy(head))
    } else {
        let hex: String = head.iter().map(|b| format!("{b:02x}")).collect();
        format!("{hex}{more}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_flags_and_repeats() {
        let q = Query::parse("watch=1&dryRun=All&dryRun=x&labelSelector=a%3Db");
        assert!(q.flag("watch"));
        assert!(!q.flag("missing"));
        assert_eq!(q.all("dryRun").count(), 2);
        assert_eq!(q.get("labelSelector"), Some("a=b"));
    }

    /// What the `request_bodies` fuzz target does, over its committed seed corpus (the
    /// pathological shapes of issue 12, scaled down): no panic, and every decoder answers.
    #[test]
    fn fuzz_corpus_decodes() {
        use super::super::patch::{Patch, PatchType};
        let dir = concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/scripts/fuzz/corpus/request_bodies"
        );
        let mut seen = 0;
        for entry in std::fs::read_dir(dir).expect("corpus") {
            let data = std::fs::read(entry.expect("entry").path()).expect("read");
            for media in [
                "application/json",
                "application/yaml",
                "application/vnd.kubernetes.protobuf",
            ] {
                let _ = decode_bytes(media, &data, "ConfigMap", true);
            }
            if let Ok(obj) = protobuf::decode(&data) {
                let _ = protobuf::encode(&obj);
            }
            for kind in [PatchType::Merge, PatchType::Json, PatchType::StrategicMerge] {
                let ctx = crate::context::Context::internal();
                if let Ok(patch) = Patch::parse(kind, &data, "io.k8s.api.core.v1.ConfigMap", &ctx) {
                    let _ = patch.apply(&serde_json::json!({"data": {}}), &ctx);
                }
            }
            seen += 1;
        }
        assert!(seen >= 10, "{seen} corpus files");
    }

    #[test]
    fn yaml_budgets() {
        let mut bomb = String::from("a0: &a0 [lol,lol,lol,lol,lol,lol,lol,lol,lol]\n");
        for i in 1..30 {
            let p = i - 1;
            bomb.push_str(&format!(
                "a{i}: &a{i} [*a{p},*a{p},*a{p},*a{p},*a{p},*a{p},*a{p},*a{p},*a{p}]\n"
            ));
        }
        assert!(decode_yaml(bomb.as_bytes()).is_err());
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        assert!(decode_yaml(deep.as_bytes()).is_err());
        assert_eq!(
            decode_yaml(b"a: [1, {b: c}]").expect("yaml"),
            serde_json::json!({"a": [1, {"b": "c"}]})
        );
    }

    #[test]
    fn summaries() {
        assert_eq!(summarize(b""), "<empty>");
        assert_eq!(summarize(b"{\"a\":1}"), "{\"a\":1}");
        assert_eq!(summarize(b"xy"), "7879");
    }
}
