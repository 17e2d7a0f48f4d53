//! The RBAC authorizer: the rules of every role bound to the user, visited in the apiserver's
//! order (ClusterRoleBindings, then the request namespace's RoleBindings), until one allows the
//! request. Roles are read from the request's store snapshot as stored JSON: no decoding, no
//! cache to invalidate, and a list sees one consistent set of bindings.
//!
//! A binding whose role does not exist contributes an error, which becomes the 403's reason
//! (`RBAC: clusterrole.rbac.authorization.k8s.io "x" not found`) when nothing allows the request.
//!
//! [`covers`] holds what RBAC's privilege-escalation checks compare rules with.

pub mod covers;

use serde_json::Value;

use super::{Attributes, Decision};
use crate::context::UserInfo;
use crate::machinery::gofmt::go_quote;
use crate::registry::rbac::GROUP;
use crate::store::{GroupResource, ObjectKey, Snapshot};

/// The RBAC decision for a request.
pub fn authorize(snap: &Snapshot, user: &UserInfo, attrs: &Attributes) -> Decision {
    let mut errors = Vec::new();
    let mut allowed = None;
    visit_rules(
        snap,
        user,
        &attrs.namespace,
        &mut |source, rule| match rule {
            Ok(rule) if rule_allows(attrs, rule) => {
                allowed = Some(format!("RBAC: allowed by {}", source()));
                false
            }
            Ok(_) => true,
            Err(e) => {
                errors.push(e.lister_message());
                true
            }
        },
    );
    match allowed {
        Some(reason) => Decision::Allow(reason),
        None if errors.is_empty() => Decision::Deny(String::new()),
        None => Decision::Deny(format!("RBAC: {}", aggregate(&errors))),
    }
}

/// Every rule that applies to `user` in `namespace` (cluster-wide ones included), and the
/// errors met resolving role references: what SelfSubjectRulesReview reports, and what the
/// escalation checks compare a granted role with.
pub fn rules_for(
    snap: &Snapshot,
    user: &UserInfo,
    namespace: &str,
) -> (Vec<Value>, Vec<RoleRefError>) {
    let mut rules = Vec::new();
    let mut errors = Vec::new();
    visit_rules(snap, user, namespace, &mut |_, rule| {
        match rule {
            Ok(rule) => rules.push(rule.clone()),
            Err(e) => errors.push(e),
        }
        true
    });
    (rules, errors)
}

pub use crate::machinery::gofmt::aggregate;

/// Why a binding's role reference could not be resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RoleRefError {
    /// `roleRef.kind` is neither `Role` nor `ClusterRole`.
    UnsupportedKind(String),
    /// The role does not exist (`resource` is `roles` or `clusterroles`).
    NotFound {
        /// `roles` or `clusterroles`.
        resource: &'static str,
        /// The role's name.
        name: String,
    },
}

impl RoleRefError {
    /// The error as the authorizer's informer listers word it (singular resource:
    /// `clusterrole.rbac.authorization.k8s.io "x" not found`).
    pub fn lister_message(&self) -> String {
        match self {
            RoleRefError::UnsupportedKind(kind) => unsupported_kind(kind),
            RoleRefError::NotFound { resource, name } => {
                let singular = resource.trim_end_matches('s');
                format!("{singular}.{GROUP} {} not found", go_quote(name))
            }
        }
    }

    /// The error as the registry's own getters word it (plural resource:
    /// `clusterroles.rbac.authorization.k8s.io "x" not found`): what the escalation checks,
    /// which resolve roles through the registry, report.
    pub fn registry_message(&self) -> String {
        match self {
            RoleRefError::UnsupportedKind(kind) => unsupported_kind(kind),
            RoleRefError::NotFound { resource, name } => {
                format!("{resource}.{GROUP} {} not found", go_quote(name))
            }
        }
    }
}

fn unsupported_kind(kind: &str) -> String {
    format!("unsupported role reference kind: {}", go_quote(kind))
}

/// What [`visit_rules`] calls with each rule: a lazy description of where the rule comes from,
/// and the rule or the error resolving its binding's role; `false` stops the visit.
pub type Visitor<'a> = dyn FnMut(&dyn Fn() -> String, Result<&Value, RoleRefError>) -> bool + 'a;

/// Calls `visit` with each rule bound to `user` (or the error resolving a binding's role) until
/// it answers `false`. The first argument describes where the rule comes from, lazily.
pub fn visit_rules(snap: &Snapshot, user: &UserInfo, namespace: &str, visit: &mut Visitor<'_>) {
    let cluster_bindings = GroupResource::new(GROUP, "clusterrolebindings");
    for (_, binding) in snap.list(&cluster_bindings, None) {
        if !visit_binding(snap, user, &binding.value(), "", visit) {
            return;
        }
    }
    if namespace.is_empty() {
        return;
    }
    let bindings = GroupResource::new(GROUP, "rolebindings");
    for (_, binding) in snap.list(&bindings, Some(namespace)) {
        if !visit_binding(snap, user, &binding.value(), namespace, visit) {
            return;
        }
    }
}

/// Visits the rules of one binding's role if the binding names the user; `false` stops.
fn visit_binding(
    snap: &Snapshot,
    user: &UserInfo,
    binding: &Value,
    namespace: &str,
    visit: &mut Visitor<'_>,
) -> bool {
    let subjects = binding["subjects"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    let Some(subject) = subjects
        .iter()
        .find(|s| applies_to_user(user, s, namespace))
    else {
        return true;
    };
    let role = match role_rules(snap, &binding["roleRef"], namespace) {
        Ok(role) => role,
        Err(e) => return visit(&|| String::new(), Err(e)),
    };
    let describe = || describe_binding(binding, subject, namespace);
    let role_tree = role.value();
    let rules = role_tree["rules"].as_array().map_or(&[][..], Vec::as_slice);
    rules.iter().all(|rule| visit(&describe, Ok(rule)))
}

/// The role a binding refers to (a `Role` in the binding's namespace, or a `ClusterRole`).
pub fn role_rules(
    snap: &Snapshot,
    role_ref: &Value,
    namespace: &str,
) -> Result<std::sync::Arc<crate::store::StoredObject>, RoleRefError> {
    let name = role_ref["name"].as_str().unwrap_or("");
    let (resource, ns) = match role_ref["kind"].as_str().unwrap_or("") {
        "Role" => ("roles", namespace),
        "ClusterRole" => ("clusterroles", ""),
        other => return Err(RoleRefError::UnsupportedKind(other.to_string())),
    };
    snap.get(
        &GroupResource::new(GROUP, resource),
        &ObjectKey::new(ns, name),
    )
    .ok_or_else(|| RoleRefError::NotFound {
        resource,
        name: name.to_string(),
    })
}

/// `appliesToUser`: a subject names the user, one of its groups, or its service account (a
/// ServiceAccount subject without a namespace means the binding's).
pub fn applies_to_user(user: &UserInfo, subject: &Value, namespace: &str) -> bool {
    let name = subject["name"].as_str().unwrap_or("");
    match subject["kind"].as_str().unwrap_or("") {
        "User" => user.name == name,
        "Group" => user.groups.iter().any(|g| g == name),
        "ServiceAccount" => {
            let ns = match subject["namespace"].as_str() {
                Some(ns) if !ns.is_empty() => ns,
                _ => namespace,
            };
            !ns.is_empty() && user.name == format!("system:serviceaccount:{ns}:{name}")
        }
        _ => false,
    }
}

/// Where an allowing rule came from, as the apiserver's describers word it.
fn describe_binding(binding: &Value, subject: &Value, namespace: &str) -> String {
    let s = |v: &Value| v.as_str().unwrap_or("").to_string();
    let meta = &binding["metadata"];
    let kind = s(&subject["kind"]);
    let mut subject_name = s(&subject["name"]);
    if kind == "ServiceAccount" {
        let ns = match s(&subject["namespace"]) {
            ns if ns.is_empty() => namespace.to_string(),
            ns => ns,
        };
        subject_name = format!("{subject_name}/{ns}");
    }
    let (what, name) = if namespace.is_empty() {
        ("ClusterRoleBinding", s(&meta["name"]))
    } else {
        ("RoleBinding", format!("{}/{namespace}", s(&meta["name"])))
    };
    format!(
        "{what} {name:?} of {} {:?} to {kind} {subject_name:?}",
        s(&binding["roleRef"]["kind"]),
        s(&binding["roleRef"]["name"])
    )
}

fn list_has(rule: &Value, field: &str, f: impl Fn(&str) -> bool) -> bool {
    rule[field]
        .as_array()
        .is_some_and(|items| items.iter().filter_map(Value::as_str).any(f))
}

/// `RuleAllows`: whether one policy rule covers the request.
pub fn rule_allows(attrs: &Attributes, rule: &Value) -> bool {
    let verb_ok = list_has(rule, "verbs", |v| v == "*" || v == attrs.verb);
    if !attrs.resource_request {
        return verb_ok
            && list_has(rule, "nonResourceURLs", |u| {
                u == "*"
                    || u == attrs.path
                    || u.strip_suffix('*')
                        .is_some_and(|prefix| attrs.path.starts_with(prefix))
            });
    }
    let combined = if attrs.subresource.is_empty() {
        attrs.resource.clone()
    } else {
        format!("{}/{}", attrs.resource, attrs.subresource)
    };
    let sub = &attrs.subresource;
    verb_ok
        && list_has(rule, "apiGroups", |g| g == "*" || g == attrs.group)
        && list_has(rule, "resources", |r| {
            r == "*"
                || r == combined
                || (!sub.is_empty() && r.strip_prefix("*/") == Some(sub.as_str()))
        })
        && (rule["resourceNames"].as_array().is_none_or(Vec::is_empty)
            || list_has(rule, "resourceNames", |n| n == attrs.name))
}

#[cfg(test)]
mod tests;
