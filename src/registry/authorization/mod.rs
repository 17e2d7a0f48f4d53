//! Kinds of `authorization.k8s.io`: the access reviews, which ask the server's authorizer a
//! question and answer it in `status` without storing anything (`kubectl auth can-i`).
//!
//! What the four kinds share lives here: reading a review's `spec` into authorization
//! attributes, its validation, and the status the answer becomes.

pub mod localsubjectaccessreview;
pub mod selfsubjectaccessreview;
pub mod selfsubjectrulesreview;
pub mod subjectaccessreview;

use serde_json::{json, Map, Value};

use crate::context::UserInfo;
use crate::error::{field, ApiError, StatusCause};
use crate::filters::authorization::{self, Attributes, Decision};
use crate::registry::resource::ActionCall;
use crate::registry::strategy::Strategy;

/// The API group.
pub const GROUP: &str = "authorization.k8s.io";

/// The reviews' strategy: they are never stored, so nothing of a stored kind's applies.
pub struct ReviewStrategy;

impl Strategy for ReviewStrategy {}

fn text(v: &Value) -> String {
    v.as_str().unwrap_or("").to_string()
}

/// `ResourceAttributesFrom` / `NonResourceAttributesFrom`: what a review's spec asks about.
pub fn attributes(spec: &Value) -> Attributes {
    let res = &spec["resourceAttributes"];
    if res.is_object() {
        let version = match text(&res["version"]) {
            v if v.is_empty() => "*".to_string(),
            v => v,
        };
        return Attributes {
            verb: text(&res["verb"]),
            resource_request: true,
            group: text(&res["group"]),
            version,
            resource: text(&res["resource"]),
            subresource: text(&res["subresource"]),
            namespace: text(&res["namespace"]),
            name: text(&res["name"]),
            path: String::new(),
        };
    }
    let non = &spec["nonResourceAttributes"];
    Attributes {
        verb: text(&non["verb"]),
        path: text(&non["path"]),
        ..Attributes::default()
    }
}

/// `ValidateSubjectAccessReviewSpec` (and its self form, which has no user to check): exactly
/// one of the attribute kinds.
pub fn spec_errors(spec: &Value, needs_subject: bool) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let (res, non) = (&spec["resourceAttributes"], &spec["nonResourceAttributes"]);
    if res.is_object() && non.is_object() {
        errs.push(field::invalid(
            "spec.nonResourceAttributes",
            non,
            "cannot be specified in combination with resourceAttributes",
        ));
    }
    if !res.is_object() && !non.is_object() {
        // The apiserver shows the (nil) nonResourceAttributes here.
        errs.push(field::invalid(
            "spec.resourceAttributes",
            &Value::Null,
            "exactly one of nonResourceAttributes or resourceAttributes must be specified",
        ));
    }
    let no_groups = spec["groups"].as_array().is_none_or(Vec::is_empty);
    if needs_subject && text(&spec["user"]).is_empty() && no_groups {
        errs.push(field::invalid(
            "spec.user",
            &json!(text(&spec["user"])),
            "at least one of user or group must be specified",
        ));
    }
    errs
}

/// Whether a review's metadata is empty (`namespace` allowed when `allow_namespace`), as the
/// apiserver requires of a question that is never stored.
pub fn metadata_errors(body: &Value, allow_namespace: bool) -> Vec<StatusCause> {
    let mut meta = body["metadata"].as_object().cloned().unwrap_or_default();
    if allow_namespace {
        meta.remove("namespace");
    }
    meta.retain(|_, v| !v.is_null());
    if meta.is_empty() {
        return Vec::new();
    }
    let detail = if allow_namespace {
        "must be empty except for namespace"
    } else {
        "must be empty"
    };
    vec![field::invalid("metadata", &Value::Object(meta), detail)]
}

/// The 422 of an invalid review.
pub fn invalid(kind: &str, errs: Vec<StatusCause>) -> ApiError {
    ApiError::invalid(GROUP, kind, "", errs)
}

/// Asks the server's authorizer, as `user`, and answers with the review and its status.
pub fn answer(call: &ActionCall<'_>, user: &UserInfo, body: Value) -> (u16, Value) {
    let attrs = attributes(&body["spec"]);
    let mode = call.state.options.authorization;
    let decision = authorization::authorize(mode, &call.state.store.snapshot(), user, &attrs);
    let mut status = Map::new();
    let (allowed, reason) = match decision {
        Decision::Allow(reason) => (true, reason),
        Decision::Deny(reason) => (false, reason),
    };
    status.insert("allowed".into(), json!(allowed));
    if !reason.is_empty() {
        status.insert("reason".into(), json!(reason));
    }
    let mut out = body;
    out["status"] = Value::Object(status);
    (201, out)
}

/// The UserInfo a SubjectAccessReview's spec describes.
pub fn spec_user(spec: &Value) -> UserInfo {
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default()
    };
    let extra = spec["extra"]
        .as_object()
        .map(|m| m.iter().map(|(k, v)| (k.clone(), strings(v))).collect())
        .unwrap_or_default();
    UserInfo {
        name: text(&spec["user"]),
        uid: text(&spec["uid"]),
        groups: strings(&spec["groups"]),
        extra,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case(json!({"resourceAttributes": {"verb": "get", "resource": "pods", "namespace": "a"}}), "get pods a * true")]
    #[case(json!({"resourceAttributes": {"verb": "list", "group": "apps", "version": "v1", "resource": "deployments"}}), "list deployments  v1 true")]
    #[case(json!({"nonResourceAttributes": {"verb": "get", "path": "/healthz"}}), "get   /healthz false")]
    fn attributes_from_specs(#[case] spec: Value, #[case] want: &str) {
        let a = attributes(&spec);
        let got = if a.resource_request {
            format!(
                "{} {} {} {} {}",
                a.verb, a.resource, a.namespace, a.version, a.resource_request
            )
        } else {
            format!("{}   {} {}", a.verb, a.path, a.resource_request)
        };
        assert_eq!(got, want);
    }

    #[rstest]
    #[case(json!({}), false, &["spec.resourceAttributes: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified"])]
    #[case(json!({"resourceAttributes": {}, "nonResourceAttributes": {}}), false, &["spec.nonResourceAttributes: Invalid value: {}: cannot be specified in combination with resourceAttributes"])]
    #[case(json!({"resourceAttributes": {}}), true, &["spec.user: Invalid value: \"\": at least one of user or group must be specified"])]
    #[case(json!({"resourceAttributes": {}, "groups": ["g"]}), true, &[])]
    fn spec_validation(#[case] spec: Value, #[case] subject: bool, #[case] want: &[&str]) {
        let got: Vec<String> = spec_errors(&spec, subject)
            .iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn metadata_must_be_empty() {
        assert!(
            metadata_errors(&json!({"metadata": {"creationTimestamp": null}}), false).is_empty()
        );
        assert_eq!(
            metadata_errors(&json!({"metadata": {"name": "x"}}), false).len(),
            1
        );
        assert!(metadata_errors(&json!({"metadata": {"namespace": "x"}}), true).is_empty());
    }
}
