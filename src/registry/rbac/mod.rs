//! Kinds of `rbac.authorization.k8s.io`: roles, cluster roles and their bindings, stored and
//! validated as the apiserver stores and validates them. The RBAC authorizer
//! ([`crate::filters::authorization::rbac`]) reads them; writes of them pass the apiserver's
//! privilege-escalation checks ([`crate::admission::rbac_escalation`]: a user may only grant
//! what it holds, unless it may `escalate` or `bind`); aggregated ClusterRoles get their rules
//! from [`crate::controllers::clusterrole_aggregation`].
//!
//! What the four kinds share lives here: policy rules, role references, subjects, the bindings'
//! defaults and their Table columns.

pub mod bootstrap;
pub mod clusterrole;
pub mod clusterrolebinding;
pub mod role;
pub mod rolebinding;

use std::sync::Arc;

use serde_json::{json, Value};

use crate::error::{field, StatusCause};
use crate::registry::builtin;
use crate::registry::object_meta::{path_segment_errors, NameRule};
use crate::registry::resource::ApiResource;
use crate::registry::strategy::Strategy;
use crate::registry::table::{Column, Columns};
use crate::registry::validation::{dns1123_subdomain_errors, invalid_each};
use crate::store::selector::generic_unsupported_field;

/// The API group, which role references and user and group subjects name.
pub const GROUP: &str = "rbac.authorization.k8s.io";

fn is_empty_list(v: &Value) -> bool {
    v.as_array().is_none_or(Vec::is_empty)
}

/// `ValidatePolicyRule`: verbs, and either resource rules (API groups and resources) or
/// non-resource URLs (never in a namespaced role).
pub fn policy_rule_errors(rule: &Value, namespaced: bool, path: &str) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    if is_empty_list(&rule["verbs"]) {
        errs.push(field::required(
            &format!("{path}.verbs"),
            "verbs must contain at least one value",
        ));
    }
    if !is_empty_list(&rule["nonResourceURLs"]) {
        let urls_path = format!("{path}.nonResourceURLs");
        let urls = &rule["nonResourceURLs"];
        if namespaced {
            errs.push(field::invalid(
                &urls_path,
                urls,
                "namespaced rules cannot apply to non-resource URLs",
            ));
        }
        if ["apiGroups", "resources", "resourceNames"]
            .iter()
            .any(|f| !is_empty_list(&rule[*f]))
        {
            errs.push(field::invalid(
                &urls_path,
                urls,
                "rules cannot apply to both regular resources and non-resource URLs",
            ));
        }
        return errs;
    }
    if is_empty_list(&rule["apiGroups"]) {
        errs.push(field::required(
            &format!("{path}.apiGroups"),
            "resource rules must supply at least one api group",
        ));
    }
    if is_empty_list(&rule["resources"]) {
        errs.push(field::required(
            &format!("{path}.resources"),
            "resource rules must supply at least one resource",
        ));
    }
    errs
}

/// The errors of every rule in `rules`.
pub fn rules_errors(obj: &Value, namespaced: bool) -> Vec<StatusCause> {
    let rules = obj["rules"].as_array().into_iter().flatten();
    rules
        .enumerate()
        .flat_map(|(i, r)| policy_rule_errors(r, namespaced, &format!("rules[{i}]")))
        .collect()
}

/// A binding's `roleRef`: this group, one of `kinds`, a path-segment name.
pub fn role_ref_errors(obj: &Value, kinds: &[&str]) -> Vec<StatusCause> {
    let role_ref = &obj["roleRef"];
    let mut errs = Vec::new();
    let group = role_ref["apiGroup"].as_str().unwrap_or("");
    if group != GROUP {
        errs.push(field::not_supported(
            "roleRef.apiGroup",
            &json!(group),
            &[GROUP],
        ));
    }
    let kind = role_ref["kind"].as_str().unwrap_or("");
    if !kinds.contains(&kind) {
        errs.push(field::not_supported("roleRef.kind", &json!(kind), kinds));
    }
    match role_ref["name"].as_str().unwrap_or("") {
        "" => errs.push(field::required("roleRef.name", "")),
        name => errs.extend(invalid_each(
            "roleRef.name",
            &json!(name),
            path_segment_errors(name),
        )),
    }
    errs
}

/// `ValidateRoleBindingSubject`; a ServiceAccount of a cluster-wide binding names its
/// namespace.
pub fn subject_errors(subject: &Value, namespaced: bool, path: &str) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let name = subject["name"].as_str().unwrap_or("");
    if name.is_empty() {
        errs.push(field::required(&format!("{path}.name"), ""));
    }
    let group = subject["apiGroup"].as_str().unwrap_or("");
    let group_path = format!("{path}.apiGroup");
    match subject["kind"].as_str().unwrap_or("") {
        "ServiceAccount" => {
            if !name.is_empty() {
                let msgs = dns1123_subdomain_errors(name);
                errs.extend(invalid_each(&format!("{path}.name"), &json!(name), msgs));
            }
            if !group.is_empty() {
                errs.push(field::not_supported(&group_path, &json!(group), &[""]));
            }
            if !namespaced && subject["namespace"].as_str().is_none_or(str::is_empty) {
                errs.push(field::required(&format!("{path}.namespace"), ""));
            }
        }
        "User" | "Group" => {
            if group != GROUP {
                errs.push(field::not_supported(&group_path, &json!(group), &[GROUP]));
            }
        }
        other => errs.push(field::not_supported(
            &format!("{path}.kind"),
            &json!(other),
            &["ServiceAccount", "User", "Group"],
        )),
    }
    errs
}

/// rbac/v1 RoleBinding and ClusterRoleBinding: one strategy, told which role kinds the binding
/// may reference and whether its ServiceAccount subjects may leave out their namespace.
pub struct BindingStrategy {
    /// `Role` and `ClusterRole` for RoleBindings, `ClusterRole` for ClusterRoleBindings.
    pub role_kinds: &'static [&'static str],
    /// Whether the binding lives in a namespace (its subjects' namespace defaults to it).
    pub namespaced: bool,
}

impl Strategy for BindingStrategy {
    fn name_rule(&self) -> NameRule {
        NameRule::PathSegment
    }

    fn track_generation(&self) -> bool {
        false
    }

    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn defaults(&self, obj: &mut Value) {
        binding_defaults(obj);
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        binding_errors(obj, self.role_kinds, self.namespaced)
    }

    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        binding_update_errors(obj, old, self.role_kinds, self.namespaced)
    }
}

/// The served resource of a binding kind, with `printRoleBinding`'s columns.
pub fn binding_resource(
    plural: &str,
    strategy: Arc<BindingStrategy>,
    role_description: &'static str,
    of: &str,
    bootstrap: fn(&crate::registry::resource::ClusterInfo) -> Vec<Value>,
) -> ApiResource {
    builtin::kind(GROUP, "v1", plural, strategy)
        .with(|r| {
            r.unsupported_field(generic_unsupported_field)
                .table(Columns::new(binding_columns(role_description, of)))
                .bootstrap(bootstrap)
        })
        .build()
}

/// A binding's validation on create: its role reference and subjects.
fn binding_errors(obj: &Value, kinds: &[&str], namespaced: bool) -> Vec<StatusCause> {
    let mut errs = role_ref_errors(obj, kinds);
    let subjects = obj["subjects"].as_array().into_iter().flatten();
    for (i, s) in subjects.enumerate() {
        errs.extend(subject_errors(s, namespaced, &format!("subjects[{i}]")));
    }
    errs
}

/// A binding's validation on update: as on create, and `roleRef` may not change.
fn binding_update_errors(
    obj: &Value,
    old: &Value,
    kinds: &[&str],
    namespaced: bool,
) -> Vec<StatusCause> {
    let mut errs = binding_errors(obj, kinds, namespaced);
    let part = |v: &Value, f: &str| v["roleRef"][f].as_str().unwrap_or("").to_string();
    let changed = ["apiGroup", "kind", "name"]
        .iter()
        .any(|f| part(obj, f) != part(old, f));
    if changed {
        // The apiserver prints its internal RoleRef, whose fields have no JSON names.
        let shown = json!({"APIGroup": part(obj, "apiGroup"), "Kind": part(obj, "kind"),
            "Name": part(obj, "name")});
        errs.push(field::invalid("roleRef", &shown, "cannot change roleRef"));
    }
    errs
}

/// `SetDefaults_RoleBinding`/`ClusterRoleBinding` and `SetDefaults_Subject`: the role
/// reference's group, and the group of User and Group subjects.
fn binding_defaults(obj: &mut Value) {
    match obj.get_mut("roleRef") {
        Some(Value::Object(r)) => {
            if r.get("apiGroup")
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
            {
                r.insert("apiGroup".into(), json!(GROUP));
            }
        }
        None | Some(Value::Null) => obj["roleRef"] = json!({"apiGroup": GROUP}),
        Some(_) => {}
    }
    let subjects = obj.get_mut("subjects").and_then(Value::as_array_mut);
    for s in subjects.into_iter().flatten() {
        let Some(s) = s.as_object_mut() else { continue };
        let unset = s
            .get("apiGroup")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty);
        let kind = s.get("kind").and_then(Value::as_str).unwrap_or("");
        if unset && matches!(kind, "User" | "Group") {
            s.insert("apiGroup".into(), json!(GROUP));
        }
    }
}

/// The Table columns of both bindings (`printRoleBinding`): the role as `Kind/name`, then the
/// `-o wide` subjects by kind.
fn binding_columns(role_description: &'static str, of: &str) -> Vec<Column> {
    vec![
        Column::name(),
        Column::computed("Role", "string", 0, role_description, role_cell),
        Column::age("string"),
        Column::computed("Users", "string", 1, format!("Users in the {of}"), |o| {
            json!(subjects_of(o, "User"))
        }),
        Column::computed("Groups", "string", 1, format!("Groups in the {of}"), |o| {
            json!(subjects_of(o, "Group"))
        }),
        Column::computed(
            "ServiceAccounts",
            "string",
            1,
            format!("ServiceAccounts in the {of}"),
            |o| json!(subjects_of(o, "ServiceAccount")),
        ),
    ]
}

fn role_cell(obj: &Value) -> Value {
    let r = &obj["roleRef"];
    json!(format!(
        "{}/{}",
        r["kind"].as_str().unwrap_or(""),
        r["name"].as_str().unwrap_or("")
    ))
}

/// `rbac.SubjectsStrings` for one kind, joined: service accounts as `namespace/name`.
fn subjects_of(obj: &Value, kind: &str) -> String {
    let subjects = obj["subjects"].as_array().into_iter().flatten();
    let names: Vec<String> = subjects
        .filter(|s| s["kind"] == kind)
        .map(|s| {
            let name = s["name"].as_str().unwrap_or("");
            if kind == "ServiceAccount" {
                format!("{}/{name}", s["namespace"].as_str().unwrap_or(""))
            } else {
                name.to_string()
            }
        })
        .collect();
    names.join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(errs: &[StatusCause]) -> Vec<String> {
        errs.iter()
            .map(|e| format!("{}: {}", e.field, e.message))
            .collect()
    }

    #[test]
    fn rules_as_the_apiserver_checks_them() {
        let role = json!({"rules": [{"verbs": []},
            {"verbs": ["get"], "nonResourceURLs": ["/x"], "apiGroups": [""]}]});
        assert_eq!(
            messages(&rules_errors(&role, true)),
            [
                "rules[0].verbs: Required value: verbs must contain at least one value",
                "rules[0].apiGroups: Required value: resource rules must supply at least one api group",
                "rules[0].resources: Required value: resource rules must supply at least one resource",
                "rules[1].nonResourceURLs: Invalid value: [\"/x\"]: namespaced rules cannot apply to non-resource URLs",
                "rules[1].nonResourceURLs: Invalid value: [\"/x\"]: rules cannot apply to both regular resources and non-resource URLs",
            ]
        );
    }

    #[test]
    fn subjects_and_role_refs() {
        let binding = json!({"roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": "edit"},
            "subjects": [{"kind": "ServiceAccount", "name": "Bad_Name"},
                {"kind": "User", "name": "u", "apiGroup": "x"}, {"kind": "Robot", "name": ""}]});
        let old = json!({"roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": "view"}});
        let errs = messages(&binding_update_errors(
            &binding,
            &old,
            &["Role", "ClusterRole"],
            true,
        ));
        assert_eq!(errs.len(), 5, "{errs:?}");
        assert!(errs[0].starts_with(
            "subjects[0].name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain"
        ));
        assert_eq!(errs[1], "subjects[1].apiGroup: Unsupported value: \"x\": supported values: \"rbac.authorization.k8s.io\"");
        assert_eq!(errs[2], "subjects[2].name: Required value");
        assert_eq!(errs[3], "subjects[2].kind: Unsupported value: \"Robot\": supported values: \"ServiceAccount\", \"User\", \"Group\"");
        assert_eq!(errs[4], "roleRef: Invalid value: {\"APIGroup\":\"rbac.authorization.k8s.io\",\"Kind\":\"ClusterRole\",\"Name\":\"edit\"}: cannot change roleRef");
        let cluster_wide = json!({"kind": "ServiceAccount", "name": "sa"});
        assert_eq!(
            messages(&subject_errors(&cluster_wide, false, "subjects[0]")),
            ["subjects[0].namespace: Required value"]
        );
    }

    #[test]
    fn binding_defaults_and_cells() {
        let mut b = json!({"roleRef": {"kind": "Role", "name": "r"}, "subjects": [
            {"kind": "User", "name": "jane"}, {"kind": "ServiceAccount", "name": "sa", "namespace": "ns"},
            {"kind": "Group", "name": "devs"}, {"kind": "User", "name": "joe"}]});
        binding_defaults(&mut b);
        assert_eq!(b["roleRef"]["apiGroup"], GROUP);
        assert_eq!(b["subjects"][0]["apiGroup"], GROUP);
        assert!(b["subjects"][1].get("apiGroup").is_none());
        assert_eq!(role_cell(&b), "Role/r");
        assert_eq!(subjects_of(&b, "User"), "jane, joe");
        assert_eq!(subjects_of(&b, "ServiceAccount"), "ns/sa");
    }
}
