//! The rbac/v1 ClusterRole kind: cluster-wide policy rules (non-resource URLs allowed) and the
//! `aggregationRule` whose label selectors choose the roles to aggregate. The aggregation
//! itself is a controller's work, kube-controller-manager's: every commit or removal of a
//! ClusterRole queues [`Work::ClusterRoleAggregation`], and
//! [`crate::controllers::clusterrole_aggregation`] rewrites the aggregated roles' rules.

use std::sync::Arc;

use serde_json::{json, Value};

use super::rules_errors;
use crate::controllers::Work;
use crate::error::{field, StatusCause};
use crate::registry::builtin;
use crate::registry::object_meta::NameRule;
use crate::registry::resource::ApiResource;
use crate::registry::strategy::Strategy;
use crate::registry::validation::{
    label_selector_errors, label_selector_string, selector_has_invalid_values,
};
use crate::store::selector::generic_unsupported_field;
use crate::store::StoredObject;

/// The served resource: the default Table (Name, Created At).
pub fn resource() -> ApiResource {
    builtin::kind(
        super::GROUP,
        "v1",
        "clusterroles",
        Arc::new(ClusterRoleStrategy),
    )
    .with(|r| {
        r.unsupported_field(generic_unsupported_field)
            .bootstrap(super::bootstrap::cluster_roles)
    })
    .build()
}

/// rbac/v1 ClusterRole.
pub struct ClusterRoleStrategy;

/// `ValidateClusterRole`: the rules, and an aggregation rule with at least one valid selector.
fn cluster_role_errors(obj: &Value, allow_invalid_values: bool) -> Vec<StatusCause> {
    let mut errs = rules_errors(obj, false);
    let rule = &obj["aggregationRule"];
    if !rule.is_object() {
        return errs;
    }
    let selectors = rule["clusterRoleSelectors"].as_array();
    if selectors.is_none_or(Vec::is_empty) {
        errs.push(field::required(
            "aggregationRule.clusterRoleSelectors",
            "at least one clusterRoleSelector required if aggregationRule is non-nil",
        ));
    }
    for (i, selector) in selectors.into_iter().flatten().enumerate() {
        let path = format!("aggregationRule.clusterRoleSelectors[{i}]");
        errs.extend(label_selector_errors(selector, &path, allow_invalid_values));
        if label_selector_string(selector).is_none() {
            // The apiserver shows the selector it failed to build: none.
            errs.push(field::invalid(
                &path,
                &json!(null),
                "invalid label selector.",
            ));
        }
    }
    errs
}

impl Strategy for ClusterRoleStrategy {
    fn name_rule(&self) -> NameRule {
        NameRule::PathSegment
    }

    fn track_generation(&self) -> bool {
        false
    }

    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        cluster_role_errors(obj, false)
    }

    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        let old_selectors = old["aggregationRule"]["clusterRoleSelectors"].as_array();
        let ratchet = old_selectors
            .into_iter()
            .flatten()
            .any(selector_has_invalid_values);
        cluster_role_errors(obj, ratchet)
    }

    fn after_commit(&self, _obj: &StoredObject) -> Vec<Work> {
        vec![Work::ClusterRoleAggregation]
    }

    fn after_remove(&self, _obj: &StoredObject) -> Vec<Work> {
        vec![Work::ClusterRoleAggregation]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aggregation_rules_need_valid_selectors() {
        let role = json!({"aggregationRule": {"clusterRoleSelectors": [
            {"matchExpressions": [{"key": "a", "operator": "Foo"}]}]}});
        let errs: Vec<String> = ClusterRoleStrategy
            .validate(&role)
            .iter()
            .map(|e| format!("{}: {}", e.field, e.message))
            .collect();
        assert_eq!(
            errs,
            [
                "aggregationRule.clusterRoleSelectors[0].matchExpressions[0].operator: Invalid value: \"Foo\": not a valid selector operator",
                "aggregationRule.clusterRoleSelectors[0]: Invalid value: null: invalid label selector.",
            ]
        );
        let empty = json!({"aggregationRule": {}});
        assert_eq!(
            ClusterRoleStrategy.validate(&empty)[0].message,
            "Required value: at least one clusterRoleSelector required if aggregationRule is non-nil"
        );
        let fine = json!({"aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"rbac.example.com/aggregate-to-monitoring": "true"}}]},
            "rules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}]});
        assert!(ClusterRoleStrategy.validate(&fine).is_empty());
    }
}
