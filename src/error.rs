//! The wire error: every rejection kubefake makes is a `meta.k8s.io/v1 Status`.
//!
//! Clients branch on `reason` and `code` (kube-rs `ErrorResponse`, client-go
//! `apierrors.IsNotFound`, kubectl's "Error from server (NotFound): ..."), so the constructors
//! here mirror `k8s.io/apimachinery/pkg/api/errors` one for one: same reason, same code, same
//! message shape, same `details`.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::{json, Map, Value};

/// A `meta.k8s.io/v1 StatusCause`: one field error inside an Invalid (422) status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StatusCause {
    /// `FieldValueInvalid`, `FieldValueRequired`, `FieldValueNotSupported`, ...
    pub reason: String,
    /// The message as the apiserver prints it after the field path.
    pub message: String,
    /// The JSON path of the field, e.g. `spec.replicas` or `metadata.name`.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub field: String,
}

/// Each cause as `field: message`: how unit tests compare a validation's result.
#[cfg(test)]
pub(crate) fn rendered(errs: Vec<StatusCause>) -> Vec<String> {
    errs.iter()
        .map(|c| format!("{}: {}", c.field, c.message))
        .collect()
}

/// The `details` of a Status: which object the error is about. Serialised in the apiserver's
/// field order with its omitempty rules.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct StatusDetails {
    /// Object name.
    #[serde(skip_serializing_if = "is_blank")]
    pub name: Option<String>,
    /// API group of the resource (empty for core).
    #[serde(skip_serializing_if = "is_blank")]
    pub group: Option<String>,
    /// The apiserver puts the *resource* (plural) here, not the kind, except for Invalid errors.
    #[serde(skip_serializing_if = "is_blank")]
    pub kind: Option<String>,
    /// Object uid (set on successful deletes).
    #[serde(skip_serializing_if = "is_blank")]
    pub uid: Option<String>,
    /// Field errors for 422 Invalid.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub causes: Vec<StatusCause>,
    /// Seconds a client should wait before retrying.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub retry_after_seconds: Option<u64>,
}

fn is_blank(v: &Option<String>) -> bool {
    v.as_deref().is_none_or(str::is_empty)
}

/// A failure `Status` as the apiserver's JSON encoder writes it: Go's field order (which a
/// `serde_json::Value`, a sorted map, would lose) and a trailing newline. Clients that compare
/// error bodies byte for byte (the Python client's own tests do) see what a real server sends.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct FailureStatus<'a> {
    kind: &'static str,
    api_version: &'static str,
    metadata: Map<String, Value>,
    status: &'static str,
    message: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    reason: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    details: Option<&'a StatusDetails>,
    code: u16,
}

/// An API error: the HTTP status code plus the `Status` body the real apiserver sends.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{code} {reason}: {message}")]
pub struct ApiError {
    /// HTTP status code.
    pub code: u16,
    /// Machine-readable `StatusReason` (`NotFound`, `Conflict`, ...; an admission webhook's
    /// may be any word).
    pub reason: Cow<'static, str>,
    /// Human-readable message, exactly as the apiserver words it.
    pub message: String,
    /// Which object, and for 422 the field causes.
    pub details: Option<Box<StatusDetails>>,
    /// `metadata.continue` of the `Status`: the token a 410 for a continue token whose state
    /// is gone offers for going on at the latest state.
    pub continue_token: Option<String>,
}

/// A qualified resource name as the apiserver prints it in messages: `crontabs.stable.example.com`,
/// or just `namespaces` for the core group.
pub fn qualified(group: &str, resource: &str) -> String {
    if group.is_empty() {
        resource.to_string()
    } else {
        format!("{resource}.{group}")
    }
}

impl ApiError {
    fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        ApiError {
            code,
            reason: Cow::Borrowed(reason),
            message: message.into(),
            details: None,
            continue_token: None,
        }
    }

    fn with_details(mut self, details: StatusDetails) -> Self {
        self.details = Some(Box::new(details));
        self
    }

    fn object_details(group: &str, resource: &str, name: &str) -> StatusDetails {
        StatusDetails {
            name: Some(name.to_string()),
            group: Some(group.to_string()),
            kind: Some(resource.to_string()),
            ..Default::default()
        }
    }

    /// 404 for a named object: `crontabs.stable.example.com "x" not found`.
    pub fn not_found(group: &str, resource: &str, name: &str) -> Self {
        Self::new(
            404,
            "NotFound",
            format!("{} \"{}\" not found", qualified(group, resource), name),
        )
        .with_details(Self::object_details(group, resource, name))
    }

    /// 405 `NewMethodNotSupported`: a verb the resource's storage does not implement, named.
    pub fn method_not_supported(group: &str, resource: &str, verb: &str) -> Self {
        let mut err = ApiError::method_not_allowed();
        err.message = format!(
            "{verb} is not supported on resources of kind {:?}",
            qualified(group, resource)
        );
        err.details = Some(Box::new(StatusDetails {
            group: (!group.is_empty()).then(|| group.to_string()),
            kind: Some(resource.to_string()),
            ..Default::default()
        }));
        err
    }

    /// 404 for a path the server does not serve.
    pub fn path_not_found() -> Self {
        Self::new(
            404,
            "NotFound",
            "the server could not find the requested resource",
        )
        .with_details(StatusDetails::default())
    }

    /// 409 AlreadyExists on create of an existing name.
    pub fn already_exists(group: &str, resource: &str, name: &str) -> Self {
        Self::new(
            409,
            "AlreadyExists",
            format!("{} \"{}\" already exists", qualified(group, resource), name),
        )
        .with_details(Self::object_details(group, resource, name))
    }

    /// 409 Conflict: optimistic concurrency failed (stale resourceVersion, uid precondition...).
    pub fn conflict(group: &str, resource: &str, name: &str, why: &str) -> Self {
        Self::new(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on {} \"{}\": {}",
                qualified(group, resource),
                name,
                why
            ),
        )
        .with_details(Self::object_details(group, resource, name))
    }

    /// The message etcd-backed stores give for a stale resourceVersion.
    pub const OBJECT_MODIFIED: &'static str =
        "the object has been modified; please apply your changes to the latest version and try again";

    /// 400 BadRequest with a free-form message.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    /// 422 Invalid: `<Kind>.<group> "<name>" is invalid: <causes>`.
    pub fn invalid(group: &str, kind: &str, name: &str, causes: Vec<StatusCause>) -> Self {
        let qualified_kind = if group.is_empty() {
            kind.to_string()
        } else {
            format!("{kind}.{group}")
        };
        let rendered: Vec<String> = causes
            .iter()
            .map(|c| {
                if c.field.is_empty() {
                    c.message.clone()
                } else {
                    format!("{}: {}", c.field, c.message)
                }
            })
            .collect();
        let list = match rendered.len() {
            1 => rendered[0].clone(),
            _ => format!("[{}]", rendered.join(", ")),
        };
        Self::new(
            422,
            "Invalid",
            format!("{qualified_kind} \"{name}\" is invalid: {list}"),
        )
        .with_details(StatusDetails {
            name: Some(name.to_string()),
            group: Some(group.to_string()),
            kind: Some(kind.to_string()),
            causes,
            ..Default::default()
        })
    }

    /// 403 Forbidden: `<resource> "<name>" is forbidden: <why>`.
    pub fn forbidden(group: &str, resource: &str, name: &str, why: &str) -> Self {
        Self::new(
            403,
            "Forbidden",
            format!(
                "{} \"{}\" is forbidden: {}",
                qualified(group, resource),
                name,
                why
            ),
        )
        .with_details(Self::object_details(group, resource, name))
    }

    /// 405 for a verb the resource does not support.
    pub fn method_not_allowed() -> Self {
        Self::new(
            405,
            "MethodNotAllowed",
            "the server does not allow this method on the requested resource",
        )
        .with_details(StatusDetails::default())
    }

    /// 415 for a request body in a format the endpoint does not accept.
    pub fn unsupported_media_type(content_type: &str, accepted: &[&str]) -> Self {
        Self::new(
            415,
            "UnsupportedMediaType",
            format!(
                "the body of the request was in an unknown format - accepted media types include: {}",
                accepted.join(", ")
            ),
        )
        .with_details(StatusDetails {
            causes: vec![StatusCause {
                reason: "UnexpectedServerResponse".into(),
                message: content_type.to_string(),
                field: String::new(),
            }],
            ..Default::default()
        })
    }

    /// 406 when no acceptable response format exists.
    pub fn not_acceptable(accepted: &[&str]) -> Self {
        Self::new(
            406,
            "NotAcceptable",
            format!(
                "only the following media types are accepted: {}",
                accepted.join(", ")
            ),
        )
    }

    /// 410 Gone (Expired) for a resourceVersion or continue token that is too old.
    pub fn gone(message: impl Into<String>) -> Self {
        Self::new(410, "Expired", message)
    }

    /// 504 Timeout (e.g. a resourceVersion the store has not reached), retry after a second.
    pub fn timeout(message: impl Into<String>) -> Self {
        Self::new(504, "Timeout", format!("Timeout: {}", message.into())).with_details(
            StatusDetails {
                retry_after_seconds: Some(1),
                ..Default::default()
            },
        )
    }

    /// 413 for request bodies over the apiserver's 3 MiB limit.
    pub fn too_large(limit: usize) -> Self {
        Self::new(
            413,
            "RequestEntityTooLarge",
            format!("Request entity too large: limit is {limit}"),
        )
    }

    /// Any other failure, for the HTTP layer's refusals (403 for a `Host`, 414, 431, 503).
    pub fn status(code: u16, reason: &'static str, message: impl Into<String>) -> Self {
        Self::new(code, reason, message)
    }

    /// 500 for an error that is not a `Status` where it is made: the apiserver's
    /// `ErrorToAPIStatus` answers it with the error's text and no reason (no `Internal error
    /// occurred: ` either, which only `NewInternalError` adds).
    pub fn plain(message: impl Into<String>) -> Self {
        Self::new(500, "", message)
    }

    /// A refusal whose code, reason and message another party chose: an admission webhook's
    /// `response.status`.
    pub fn rejection(code: u16, reason: String, message: String) -> Self {
        ApiError {
            code,
            reason: Cow::Owned(reason),
            message,
            details: None,
            continue_token: None,
        }
    }

    /// 500: a bug in kubefake, never a client error.
    pub fn internal(message: impl std::fmt::Display) -> Self {
        Self::new(
            500,
            "InternalError",
            format!("Internal error occurred: {message}"),
        )
    }

    /// The `meta.k8s.io/v1 Status` body in JSON, as the apiserver writes it (Go's field order, a trailing newline).
    pub fn to_status_json(&self) -> Vec<u8> {
        let mut metadata = Map::new();
        if let Some(token) = &self.continue_token {
            metadata.insert("continue".into(), Value::String(token.clone()));
        }
        let status = FailureStatus {
            kind: "Status",
            api_version: "v1",
            metadata,
            status: "Failure",
            message: &self.message,
            reason: &self.reason,
            details: self.details.as_deref(),
            code: self.code,
        };
        let mut out = serde_json::to_vec(&status).unwrap_or_default();
        out.push(b'\n');
        out
    }

    /// The `Status` as a tree, for encoders other than JSON (YAML, protobuf, watch events).
    pub fn to_status(&self) -> Value {
        let mut status = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
        });
        if let Some(token) = &self.continue_token {
            status["metadata"]["continue"] = json!(token);
        }
        if !self.reason.is_empty() {
            status["reason"] = json!(self.reason);
        }
        if let Some(details) = &self.details {
            status["details"] = details_json(details);
        }
        status["code"] = json!(self.code);
        status
    }
}

/// Renders `details` with the apiserver's field order and omitempty rules.
pub fn details_json(d: &StatusDetails) -> Value {
    serde_json::to_value(d).unwrap_or_default()
}

/// Field-error constructors in the wording of `k8s.io/apimachinery/pkg/util/validation/field`.
pub mod field {
    use super::StatusCause;
    use serde_json::Value;

    /// Renders a value the way Go's `%#v` does for the types JSON can hold.
    pub fn go_value(v: &Value) -> String {
        match v {
            Value::String(s) => format!("{s:?}"),
            Value::Null => "null".into(),
            other => other.to_string(),
        }
    }

    /// `field: Required value: <detail>`.
    pub fn required(field: &str, detail: &str) -> StatusCause {
        let message = if detail.is_empty() {
            "Required value".to_string()
        } else {
            format!("Required value: {detail}")
        };
        StatusCause {
            reason: "FieldValueRequired".into(),
            message,
            field: field.into(),
        }
    }

    /// `field: Invalid value: <value>: <detail>`.
    pub fn invalid(field: &str, value: &Value, detail: &str) -> StatusCause {
        let mut message = format!("Invalid value: {}", go_value(value));
        if !detail.is_empty() {
            message.push_str(": ");
            message.push_str(detail);
        }
        StatusCause {
            reason: "FieldValueInvalid".into(),
            message,
            field: field.into(),
        }
    }

    /// `field: Unsupported value: <value>: supported values: "a", "b"`.
    pub fn not_supported(field: &str, value: &Value, supported: &[&str]) -> StatusCause {
        let quoted: Vec<String> = supported.iter().map(|s| format!("{s:?}")).collect();
        StatusCause {
            reason: "FieldValueNotSupported".into(),
            message: format!(
                "Unsupported value: {}: supported values: {}",
                go_value(value),
                quoted.join(", ")
            ),
            field: field.into(),
        }
    }

    /// `field: Duplicate value: <value>`.
    pub fn duplicate(field: &str, value: &Value) -> StatusCause {
        StatusCause {
            reason: "FieldValueDuplicate".into(),
            message: format!("Duplicate value: {}", go_value(value)),
            field: field.into(),
        }
    }

    /// `field: Too many: <actual>: must have at most <max> items` (`field.TooMany`).
    pub fn too_many(field: &str, actual: usize, max: usize) -> StatusCause {
        let unit = if max == 1 { "item" } else { "items" };
        StatusCause {
            reason: "FieldValueTooMany".into(),
            message: format!("Too many: {actual}: must have at most {max} {unit}"),
            field: field.into(),
        }
    }

    /// `field: Too long: may not be more than <max> bytes` (the value is omitted).
    pub fn too_long(field: &str, max: usize) -> StatusCause {
        let unit = if max == 1 { "byte" } else { "bytes" };
        StatusCause {
            reason: "FieldValueTooLong".into(),
            message: format!("Too long: may not be more than {max} {unit}"),
            field: field.into(),
        }
    }

    /// `field: Forbidden: <detail>`.
    pub fn forbidden(field: &str, detail: &str) -> StatusCause {
        StatusCause {
            reason: "FieldValueForbidden".into(),
            message: format!("Forbidden: {detail}"),
            field: field.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn not_found_matches_apiserver() {
        let s = ApiError::not_found("stable.example.com", "crontabs", "x").to_status();
        assert_eq!(s["message"], "crontabs.stable.example.com \"x\" not found");
        assert_eq!(s["reason"], "NotFound");
        assert_eq!(s["code"], 404);
        assert_eq!(s["details"]["kind"], "crontabs");
        assert_eq!(s["details"]["group"], "stable.example.com");
    }

    #[test]
    fn core_group_is_unqualified() {
        let s = ApiError::not_found("", "namespaces", "nope").to_status();
        assert_eq!(s["message"], "namespaces \"nope\" not found");
        assert!(s["details"].get("group").is_none());
    }

    #[test]
    fn invalid_lists_every_cause() {
        let e = ApiError::invalid(
            "stable.example.com",
            "CronTab",
            "c",
            vec![
                field::required("metadata.name", "name or generateName is required"),
                field::invalid("spec.replicas", &serde_json::json!(15), "too big"),
            ],
        );
        assert_eq!(
            e.message,
            "CronTab.stable.example.com \"c\" is invalid: [metadata.name: Required value: name or generateName is required, spec.replicas: Invalid value: 15: too big]"
        );
        assert_eq!(
            e.to_status()["details"]["causes"][1]["field"],
            "spec.replicas"
        );
    }
}
