//! Whether one set of policy rules grants everything another does, as RBAC's
//! privilege-escalation checks ask it (component-helpers' `validation.Covers`), and how the rules
//! that are not covered are printed in the 403 (`CompactRules`, then `CompactString` each).
//!
//! The servant's rules are broken down to single (group, resource, verb, resource name) or
//! (non-resource URL, verb) tuples, so each tuple is covered by one owner rule or by none: the
//! tuples left over are what the user is missing. Rules are read from stored JSON into
//! [`PolicyRule`], whose absent and empty lists are the same thing, as in Go.

use serde_json::Value;

/// An rbac/v1 `PolicyRule`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PolicyRule {
    /// `verbs` (`*` for all).
    pub verbs: Vec<String>,
    /// `apiGroups` (`*` for all, "" for core).
    pub api_groups: Vec<String>,
    /// `resources` (`*` for all, `*/scale` for a subresource of every resource).
    pub resources: Vec<String>,
    /// `resourceNames` (empty: every name).
    pub resource_names: Vec<String>,
    /// `nonResourceURLs` (a trailing `*` is a prefix match).
    pub non_resource_urls: Vec<String>,
}

impl PolicyRule {
    /// A rule as stored (fields absent or not lists of strings read as empty).
    pub fn from_value(rule: &Value) -> PolicyRule {
        let list = |field: &str| -> Vec<String> {
            rule[field]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        };
        PolicyRule {
            verbs: list("verbs"),
            api_groups: list("apiGroups"),
            resources: list("resources"),
            resource_names: list("resourceNames"),
            non_resource_urls: list("nonResourceURLs"),
        }
    }

    /// The rules of a role (its `rules`, none when null).
    pub fn list(rules: &Value) -> Vec<PolicyRule> {
        let rules = rules.as_array().into_iter().flatten();
        rules.map(PolicyRule::from_value).collect()
    }

    fn single(group: &str, resource: &str, verb: &str, name: Option<&str>) -> PolicyRule {
        PolicyRule {
            verbs: vec![verb.to_string()],
            api_groups: vec![group.to_string()],
            resources: vec![resource.to_string()],
            resource_names: name.map(|n| vec![n.to_string()]).unwrap_or_default(),
            non_resource_urls: Vec::new(),
        }
    }
}

/// `Covers`: the parts of `servant` that no rule of `owner` grants, as single-tuple rules in
/// the servant's order; empty when the owner holds everything.
pub fn uncovered(owner: &[PolicyRule], servant: &[PolicyRule]) -> Vec<PolicyRule> {
    servant
        .iter()
        .flat_map(breakdown)
        .filter(|sub| !owner.iter().any(|o| rule_covers(o, sub)))
        .collect()
}

/// `BreakdownRule`: one rule per (group, resource, verb[, resource name]), then one per
/// (non-resource URL, verb).
pub fn breakdown(rule: &PolicyRule) -> Vec<PolicyRule> {
    let mut out = Vec::new();
    for group in &rule.api_groups {
        for resource in &rule.resources {
            for verb in &rule.verbs {
                if rule.resource_names.is_empty() {
                    out.push(PolicyRule::single(group, resource, verb, None));
                }
                for name in &rule.resource_names {
                    out.push(PolicyRule::single(group, resource, verb, Some(name)));
                }
            }
        }
    }
    for url in &rule.non_resource_urls {
        for verb in &rule.verbs {
            out.push(PolicyRule {
                verbs: vec![verb.clone()],
                non_resource_urls: vec![url.clone()],
                ..PolicyRule::default()
            });
        }
    }
    out
}

fn has(set: &[String], item: &str) -> bool {
    set.iter().any(|s| s == item)
}

fn has_all(set: &[String], items: &[String]) -> bool {
    items.iter().all(|i| has(set, i))
}

/// `resourceCoversAll`: `*`, the resource itself, or `*/<subresource>` for a subresource.
fn resources_cover_all(set: &[String], covers: &[String]) -> bool {
    if has(set, "*") || has_all(set, covers) {
        return true;
    }
    covers.iter().all(|path| {
        has(set, path)
            || path
                .split_once('/')
                .is_some_and(|(_, sub)| has(set, &format!("*/{sub}")))
    })
}

/// `nonResourceURLCovers`: the same path, or a prefix ending in `*`.
fn non_resource_url_covers(owner: &str, path: &str) -> bool {
    owner == path || (owner.ends_with('*') && path.starts_with(owner.trim_end_matches('*')))
}

/// `ruleCovers`: whether one owner rule grants a single-tuple rule.
fn rule_covers(owner: &PolicyRule, sub: &PolicyRule) -> bool {
    let verbs = has(&owner.verbs, "*") || has_all(&owner.verbs, &sub.verbs);
    let groups = has(&owner.api_groups, "*") || has_all(&owner.api_groups, &sub.api_groups);
    let resources = resources_cover_all(&owner.resources, &sub.resources);
    let urls = sub.non_resource_urls.iter().all(|path| {
        owner
            .non_resource_urls
            .iter()
            .any(|o| non_resource_url_covers(o, path))
    });
    let names = owner.resource_names.is_empty()
        || (!sub.resource_names.is_empty() && has_all(&owner.resource_names, &sub.resource_names));
    verbs && groups && resources && urls && names
}

/// `CompactRules`: rules of one group, one resource and at most one resource name that differ
/// only by verb become one rule with all their verbs (in order, repeats kept); other rules stay
/// as they are, first.
pub fn compact(rules: Vec<PolicyRule>) -> Vec<PolicyRule> {
    let mut out = Vec::new();
    let mut simple: Vec<PolicyRule> = Vec::new();
    for rule in rules {
        let is_simple = rule.resource_names.len() <= 1
            && rule.non_resource_urls.is_empty()
            && rule.api_groups.len() == 1
            && rule.resources.len() == 1;
        if !is_simple {
            out.push(rule);
            continue;
        }
        let same = simple.iter_mut().find(|s| {
            s.api_groups == rule.api_groups
                && s.resources == rule.resources
                && s.resource_names == rule.resource_names
        });
        match same {
            Some(s) => s.verbs.extend(rule.verbs),
            None => simple.push(rule),
        }
    }
    out.extend(simple);
    out
}

pub use crate::machinery::gofmt::go_quote_list;

/// `CompactString`: the rule's non-empty lists, in this order:
/// `{APIGroups:[""], Resources:["pods"], Verbs:["get" "list"]}`.
pub fn compact_string(rule: &PolicyRule) -> String {
    let fields = [
        ("APIGroups", &rule.api_groups),
        ("Resources", &rule.resources),
        ("NonResourceURLs", &rule.non_resource_urls),
        ("ResourceNames", &rule.resource_names),
        ("Verbs", &rule.verbs),
    ];
    let parts: Vec<String> = fields
        .iter()
        .filter(|(_, list)| !list.is_empty())
        .map(|(name, list)| format!("{name}:{}", go_quote_list(list)))
        .collect();
    format!("{{{}}}", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    fn rules(v: Value) -> Vec<PolicyRule> {
        PolicyRule::list(&v)
    }

    fn missing(owner: Value, servant: Value) -> Vec<String> {
        let missing = uncovered(&rules(owner), &rules(servant));
        let mut shown: Vec<String> = compact(missing).iter().map(compact_string).collect();
        shown.sort();
        shown
    }

    const PODS_GET: &str = r#"{APIGroups:[""], Resources:["pods"], Verbs:["get"]}"#;

    #[rstest]
    // Verbs: the same, a subset, `*`.
    #[case(json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]),
        json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]), &[])]
    #[case(json!([{"verbs": ["*"], "apiGroups": [""], "resources": ["pods"]}]),
        json!([{"verbs": ["get", "delete"], "apiGroups": [""], "resources": ["pods"]}]), &[])]
    #[case(json!([{"verbs": ["list"], "apiGroups": [""], "resources": ["pods"]}]),
        json!([{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}]), &[PODS_GET])]
    #[case(json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]),
        json!([{"verbs": ["*"], "apiGroups": [""], "resources": ["pods"]}]),
        &[r#"{APIGroups:[""], Resources:["pods"], Verbs:["*"]}"#])]
    // API groups: `*` covers every group; a group covers only itself.
    #[case(json!([{"verbs": ["get"], "apiGroups": ["*"], "resources": ["deployments"]}]),
        json!([{"verbs": ["get"], "apiGroups": ["apps", "extensions"], "resources": ["deployments"]}]), &[])]
    #[case(json!([{"verbs": ["get"], "apiGroups": ["apps"], "resources": ["deployments"]}]),
        json!([{"verbs": ["get"], "apiGroups": ["apps", "extensions"], "resources": ["deployments"]}]),
        &[r#"{APIGroups:["extensions"], Resources:["deployments"], Verbs:["get"]}"#])]
    // Resources: `*`, `*/subresource`, and a resource does not cover its subresources.
    #[case(json!([{"verbs": ["get"], "apiGroups": ["apps"], "resources": ["*"]}]),
        json!([{"verbs": ["get"], "apiGroups": ["apps"], "resources": ["deployments", "deployments/scale"]}]), &[])]
    #[case(json!([{"verbs": ["update"], "apiGroups": ["apps"], "resources": ["*/scale"]}]),
        json!([{"verbs": ["update"], "apiGroups": ["apps"], "resources": ["deployments/scale", "deployments"]}]),
        &[r#"{APIGroups:["apps"], Resources:["deployments"], Verbs:["update"]}"#])]
    #[case(json!([{"verbs": ["update"], "apiGroups": ["apps"], "resources": ["deployments"]}]),
        json!([{"verbs": ["update"], "apiGroups": ["apps"], "resources": ["deployments/scale"]}]),
        &[r#"{APIGroups:["apps"], Resources:["deployments/scale"], Verbs:["update"]}"#])]
    #[case(json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]),
        json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["*"]}]),
        &[r#"{APIGroups:[""], Resources:["*"], Verbs:["get"]}"#])]
    // Resource names: none covers every name; names cover only those names.
    #[case(json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]),
        json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["a"]}]), &[])]
    #[case(json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["a", "b"]}]),
        json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["b", "c"]}]),
        &[r#"{APIGroups:[""], Resources:["pods"], ResourceNames:["c"], Verbs:["get"]}"#])]
    #[case(json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["a"]}]),
        json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]), &[PODS_GET])]
    // Non-resource URLs: exact, a trailing `*` as a prefix, `*` for all; resource rules never
    // cover them.
    #[case(json!([{"verbs": ["get"], "nonResourceURLs": ["/healthz", "/logs/*"]}]),
        json!([{"verbs": ["get"], "nonResourceURLs": ["/healthz", "/logs/kube.log", "/logs/"]}]), &[])]
    #[case(json!([{"verbs": ["get"], "nonResourceURLs": ["/logs/*"]}]),
        json!([{"verbs": ["get", "post"], "nonResourceURLs": ["/logs", "/logs/x"]}]),
        &[r#"{NonResourceURLs:["/logs"], Verbs:["get"]}"#, r#"{NonResourceURLs:["/logs"], Verbs:["post"]}"#,
          r#"{NonResourceURLs:["/logs/x"], Verbs:["post"]}"#])]
    #[case(json!([{"verbs": ["*"], "nonResourceURLs": ["*"]}]),
        json!([{"verbs": ["get"], "nonResourceURLs": ["/anything"]}]), &[])]
    #[case(json!([{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}]),
        json!([{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}]),
        &[r#"{NonResourceURLs:["/healthz"], Verbs:["get"]}"#])]
    #[case(json!([{"verbs": ["get"], "nonResourceURLs": ["*"]}]),
        json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]), &[PODS_GET])]
    // Rules add up; nothing held covers nothing.
    #[case(json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]},
            {"verbs": ["list"], "apiGroups": ["*"], "resources": ["*"]}]),
        json!([{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}]), &[])]
    #[case(json!([]),
        json!([{"verbs": ["get", "list"], "apiGroups": ["", "apps"], "resources": ["pods", "secrets"]}]),
        &[r#"{APIGroups:[""], Resources:["pods"], Verbs:["get" "list"]}"#,
          r#"{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list"]}"#,
          r#"{APIGroups:["apps"], Resources:["pods"], Verbs:["get" "list"]}"#,
          r#"{APIGroups:["apps"], Resources:["secrets"], Verbs:["get" "list"]}"#])]
    #[case(json!(null), json!(null), &[])]
    fn covers(#[case] owner: Value, #[case] servant: Value, #[case] want: &[&str]) {
        assert_eq!(missing(owner, servant), want);
    }

    #[test]
    fn compaction_keeps_repeats_and_leaves_complex_rules_alone() {
        let rules = rules(json!([
            {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]},
            {"verbs": ["get"], "apiGroups": [""], "resources": ["pods", "secrets"]},
            {"verbs": ["list"], "apiGroups": [""], "resources": ["pods"]},
            {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]},
            {"verbs": ["get"], "apiGroups": [""], "resources": ["pods"], "resourceNames": ["p"]},
        ]));
        let shown: Vec<String> = compact(rules).iter().map(compact_string).collect();
        assert_eq!(
            shown,
            [
                r#"{APIGroups:[""], Resources:["pods" "secrets"], Verbs:["get"]}"#,
                r#"{APIGroups:[""], Resources:["pods"], Verbs:["get" "list" "get"]}"#,
                r#"{APIGroups:[""], Resources:["pods"], ResourceNames:["p"], Verbs:["get"]}"#,
            ]
        );
    }

    #[rstest]
    #[case(&[], "[]")]
    #[case(&["system:authenticated"], r#"["system:authenticated"]"#)]
    #[case(&["a", "q\"uote"], r#"["a" "q\"uote"]"#)]
    fn quoted_lists(#[case] list: &[&str], #[case] want: &str) {
        let list: Vec<String> = list.iter().map(|s| s.to_string()).collect();
        assert_eq!(go_quote_list(&list), want);
    }
}
