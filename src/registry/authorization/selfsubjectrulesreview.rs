//! The authorization/v1 SelfSubjectRulesReview kind: everything the requesting user may do in
//! a namespace (`kubectl auth can-i --list`), as the authorizer's rule resolver lists it.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::{json, Map, Value};

use super::{ReviewStrategy, GROUP};
use crate::error::ApiError;
use crate::filters::authorization::{rbac, Mode};
use crate::registry::builtin;
use crate::registry::resource::{Action, ActionCall, ApiResource};

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind(
        GROUP,
        "v1",
        "selfsubjectrulesreviews",
        Arc::new(ReviewStrategy),
    )
    .with(|r| r.served_by(Arc::new(SelfSubjectRulesReview)))
    .build()
}

struct SelfSubjectRulesReview;

impl Action for SelfSubjectRulesReview {
    fn body_kind(&self) -> Option<&'static str> {
        Some("SelfSubjectRulesReview")
    }

    fn serve<'a>(&'a self, call: ActionCall<'a>) -> BoxFuture<'a, Result<(u16, Value), ApiError>> {
        Box::pin(async move {
            let body = call.body.clone().unwrap_or(Value::Null);
            let namespace = body["spec"]["namespace"].as_str().unwrap_or("");
            if namespace.is_empty() {
                return Err(ApiError::bad_request("no namespace on request"));
            }
            let (rules, errors) = match call.state.options.authorization {
                Mode::AlwaysAllow => (vec![everything()], Vec::new()),
                Mode::Rbac => {
                    let snap = call.state.store.snapshot();
                    let (rules, errors) = rbac::rules_for(&snap, &call.ctx.user, namespace);
                    let errors: Vec<String> = errors.iter().map(|e| e.lister_message()).collect();
                    (rules, errors)
                }
            };
            let mut status = status_of(&rules);
            if !errors.is_empty() {
                status["evaluationError"] = json!(rbac::aggregate(&errors));
            }
            let review = json!({"apiVersion": format!("{GROUP}/v1"),
                "kind": "SelfSubjectRulesReview", "metadata": {}, "spec": {}, "status": status});
            Ok((201, review))
        })
    }
}

/// What the AlwaysAllow authorizer answers: every verb on everything.
fn everything() -> Value {
    json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"], "nonResourceURLs": ["*"]})
}

/// Policy rules as the review lists them: a resource rule for each rule with resources, a
/// non-resource rule for each rule with URLs.
fn status_of(rules: &[Value]) -> Value {
    let mut resource_rules = Vec::new();
    let mut non_resource_rules = Vec::new();
    let nonempty = |v: &Value| v.as_array().is_some_and(|a| !a.is_empty());
    for rule in rules {
        if nonempty(&rule["resources"]) {
            let mut r = Map::new();
            r.insert("verbs".into(), rule["verbs"].clone());
            for f in ["apiGroups", "resources", "resourceNames"] {
                if nonempty(&rule[f]) {
                    r.insert(f.into(), rule[f].clone());
                }
            }
            resource_rules.push(Value::Object(r));
        }
        if nonempty(&rule["nonResourceURLs"]) {
            non_resource_rules.push(json!({"verbs": rule["verbs"],
                "nonResourceURLs": rule["nonResourceURLs"]}));
        }
    }
    json!({"resourceRules": resource_rules, "nonResourceRules": non_resource_rules,
        "incomplete": false})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_split_into_resource_and_url_rules() {
        let rules = [
            json!({"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": []}),
            json!({"verbs": ["get"], "nonResourceURLs": ["/healthz"]}),
        ];
        let status = status_of(&rules);
        assert_eq!(
            status["resourceRules"],
            json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}])
        );
        assert_eq!(
            status["nonResourceRules"],
            json!([{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}])
        );
        let all = status_of(&[everything()]);
        assert_eq!(all["resourceRules"][0]["resources"], json!(["*"]));
    }
}
