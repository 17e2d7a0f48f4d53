//! kube-controller-manager's ClusterRole aggregation controller
//! (`clusterroleaggregation_controller.go`): a ClusterRole with an `aggregationRule` holds the
//! rules of every other ClusterRole one of its `clusterRoleSelectors` selects. That is how
//! `admin`, `edit` and `view` get their rules, and how a ClusterRole labelled
//! `rbac.authorization.k8s.io/aggregate-to-view: "true"` extends `view`.
//!
//! As the controller: any ClusterRole's create, update or delete looks at every aggregated
//! ClusterRole again (roles are few and who selects whom is not indexed); its rules are, for
//! each selector in order, the rules of the selected roles sorted by name, itself left out, each
//! rule once (`Semantic.DeepEqual`, so an absent list and an empty one are the same). The role
//! is written only when that differs from its rules, by a server-side apply of `rules` with the
//! field manager `clusterrole-aggregation-controller` (forced), through the registry store: a
//! watcher sees it MODIFIED, and the write causes another look, which finds nothing to change.
//! A selector that does not parse leaves its role as it is (the controller's sync fails).

use serde_json::{json, Value};

use crate::context::Context;
use crate::filters::authorization::rbac::covers::PolicyRule;
use crate::registry::catalog::ApiResource;
use crate::registry::object_meta::{meta_str, now_rfc3339};
use crate::registry::rbac::GROUP;
use crate::registry::store::{self as rest, Target, UpdateSource};
use crate::registry::validation::selector_matches;
use crate::state::State;
use crate::store::{GroupResource, ObjectKey};

/// The field manager of the controller's applies.
pub const FIELD_MANAGER: &str = "clusterrole-aggregation-controller";

fn cluster_roles() -> GroupResource {
    GroupResource::new(GROUP, "clusterroles")
}

/// Brings every aggregated ClusterRole up to date, in name order.
pub async fn reconcile(state: &State, ctx: &Context) {
    let Some(res) = state.registry().by_group_resource(&cluster_roles()) else {
        return;
    };
    let aggregated: Vec<String> = state
        .store
        .snapshot()
        .list(&cluster_roles(), None)
        .filter(|(_, role)| is_aggregated(&role.value()))
        .map(|(_, role)| meta_str(&role.value(), "name").to_string())
        .collect();
    for name in aggregated {
        sync(state, ctx, &res, &name).await;
    }
}

/// Whether a ClusterRole has an `aggregationRule` (even one without selectors).
fn is_aggregated(role: &Value) -> bool {
    !role["aggregationRule"].is_null()
}

/// `syncClusterRole`: one aggregated role, from the latest snapshot (an earlier sync of this
/// pass may have changed a role it selects).
async fn sync(state: &State, ctx: &Context, res: &ApiResource, name: &str) {
    let snapshot = state.store.snapshot();
    let Some(role) = snapshot.get(&cluster_roles(), &ObjectKey::new("", name)) else {
        return;
    };
    if !is_aggregated(&role.value()) {
        return;
    }
    let listed: Vec<_> = snapshot
        .list(&cluster_roles(), None)
        .map(|(_, r)| r.value())
        .collect();
    let roles: Vec<(&str, &Value)> = listed.iter().map(|r| (meta_str(r, "name"), &**r)).collect();
    let rules = match aggregate(&role.value(), &roles) {
        Ok(rules) => rules,
        Err(selector) => {
            tracing::warn!(clusterrole = %name, %selector, "an aggregationRule selector does not parse");
            return;
        }
    };
    if same_rules(&rules, &role.value()["rules"]) {
        return;
    }
    apply_rules(state, ctx, res, name, rules).await;
}

/// The rules an aggregated role should hold, given every ClusterRole as (name, object); `Err`
/// with the selector that does not parse.
pub fn aggregate(target: &Value, roles: &[(&str, &Value)]) -> Result<Vec<Value>, String> {
    let own_name = meta_str(target, "name");
    let selectors = target["aggregationRule"]["clusterRoleSelectors"].as_array();
    let mut rules: Vec<Value> = Vec::new();
    let mut seen: Vec<PolicyRule> = Vec::new();
    for selector in selectors.into_iter().flatten() {
        let mut selected = Vec::new();
        for (name, role) in roles {
            match selector_matches(selector, &role["metadata"]["labels"]) {
                None => return Err(selector.to_string()),
                Some(true) if *name != own_name => selected.push((*name, *role)),
                Some(_) => {}
            }
        }
        selected.sort_by(|a, b| a.0.cmp(b.0));
        for (_, role) in selected {
            for rule in role["rules"].as_array().into_iter().flatten() {
                let parsed = PolicyRule::from_value(rule);
                if !seen.contains(&parsed) {
                    seen.push(parsed);
                    rules.push(rule.clone());
                }
            }
        }
    }
    Ok(rules)
}

/// `Semantic.DeepEqual` of the new rules and a role's: the same rules in the same order.
fn same_rules(rules: &[Value], current: &Value) -> bool {
    let current = PolicyRule::list(current);
    current.len() == rules.len()
        && rules
            .iter()
            .zip(&current)
            .all(|(r, c)| PolicyRule::from_value(r) == *c)
}

/// `applyClusterRoles`: a forced server-side apply of `rules` (none: no `rules` in the apply
/// configuration, as the controller's typed apply configuration leaves an empty list out).
async fn apply_rules(
    state: &State,
    ctx: &Context,
    res: &ApiResource,
    name: &str,
    rules: Vec<Value>,
) {
    let mut config = json!({"apiVersion": res.api_version(), "kind": res.kind,
        "metadata": {"name": name}});
    if !rules.is_empty() {
        config["rules"] = Value::Array(rules);
    }
    let schema = res.schema.shape();
    let now = now_rfc3339();
    let api_version = res.api_version();
    let apply = |current: &Value| {
        crate::apply::versions::single_version(&api_version, |versions| {
            crate::apply::apply(
                Some(current),
                &config,
                FIELD_MANAGER,
                "",
                versions,
                true,
                schema,
                &now,
            )
        })
        .map_err(|c| c.to_api_error(&res.group, &res.plural, name))
    };
    let updated = rest::update(
        state,
        ctx,
        res,
        "",
        name,
        Target::Main,
        UpdateSource::Patch(&apply),
    )
    .await;
    match updated {
        Ok(_) => {}
        Err(e) if e.code == 404 => {}
        Err(e) => tracing::warn!(error = %e, clusterrole = %name, "aggregating a ClusterRole"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn role(name: &str, labels: Value, rules: Value) -> Value {
        json!({"metadata": {"name": name, "labels": labels}, "rules": rules})
    }

    fn rule(verb: &str, resource: &str) -> Value {
        json!({"verbs": [verb], "apiGroups": [""], "resources": [resource]})
    }

    fn aggregated(name: &str, selectors: Value) -> Value {
        json!({"metadata": {"name": name}, "aggregationRule": {"clusterRoleSelectors": selectors},
            "rules": null})
    }

    /// `b-view` and `a-view` are selected by `view=true` (and `a-view` repeats a rule of
    /// `b-view`), `edit` by `edit=true`; `extra` is selected by an expression.
    fn roles() -> Vec<Value> {
        vec![
            role(
                "b-view",
                json!({"view": "true"}),
                json!([rule("get", "pods"), rule("list", "pods")]),
            ),
            role(
                "a-view",
                json!({"view": "true"}),
                json!([rule("get", "secrets"),
                {"resources": ["pods"], "verbs": ["list"], "apiGroups": [""], "resourceNames": []}]),
            ),
            role(
                "edit",
                json!({"edit": "true", "view": "true"}),
                json!([rule("create", "pods")]),
            ),
            role("extra", json!({"tier": "x"}), json!(null)),
            role("other", json!({}), json!([rule("delete", "pods")])),
        ]
    }

    #[rstest]
    // Sorted by name within a selector, each rule once (an empty list is an absent one).
    #[case(json!([{"matchLabels": {"view": "true"}}]),
        json!([rule("get", "secrets"),
            {"resources": ["pods"], "verbs": ["list"], "apiGroups": [""], "resourceNames": []},
            rule("get", "pods"), rule("create", "pods")]))]
    // Selectors in order; rules already there from an earlier selector are not repeated.
    #[case(json!([{"matchLabels": {"edit": "true"}}, {"matchLabels": {"view": "true"}}]),
        json!([rule("create", "pods"), rule("get", "secrets"),
            {"resources": ["pods"], "verbs": ["list"], "apiGroups": [""], "resourceNames": []},
            rule("get", "pods")]))]
    #[case(json!([{"matchExpressions": [{"key": "tier", "operator": "In", "values": ["x"]}]}]), json!([]))]
    #[case(json!([{"matchLabels": {"nobody": "true"}}]), json!([]))]
    // An empty selector selects every role but the aggregated one itself.
    #[case(json!([{}]),
        json!([rule("get", "secrets"), {"resources": ["pods"], "verbs": ["list"], "apiGroups": [""], "resourceNames": []},
            rule("get", "pods"), rule("create", "pods"), rule("delete", "pods")]))]
    fn aggregation(#[case] selectors: Value, #[case] want: Value) {
        let target = {
            let mut t = aggregated("agg", selectors);
            t["metadata"]["labels"] = json!({"view": "true"});
            t["rules"] = json!([rule("get", "nodes")]);
            t
        };
        let mut all = roles();
        all.push(target.clone());
        let named: Vec<(&str, &Value)> = all.iter().map(|r| (meta_str(r, "name"), r)).collect();
        assert_eq!(
            aggregate(&target, &named),
            Ok(want.as_array().cloned().unwrap_or_default())
        );
    }

    #[test]
    fn a_selector_that_does_not_parse_is_an_error() {
        let target = aggregated(
            "agg",
            json!([{"matchExpressions": [{"key": "k", "operator": "Foo"}]}]),
        );
        let all = roles();
        let named: Vec<(&str, &Value)> = all.iter().map(|r| (meta_str(r, "name"), r)).collect();
        assert!(aggregate(&target, &named).is_err());
    }

    #[rstest]
    #[case(json!([]), json!(null), true)]
    #[case(json!([rule("get", "pods")]), json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": null}]), true)]
    #[case(json!([rule("get", "pods"), rule("list", "pods")]), json!([rule("list", "pods"), rule("get", "pods")]), false)]
    #[case(json!([rule("get", "pods")]), json!(null), false)]
    fn rules_compare_semantically(#[case] new: Value, #[case] current: Value, #[case] want: bool) {
        let new = new.as_array().cloned().unwrap_or_default();
        assert_eq!(same_rules(&new, &current), want);
    }
}
