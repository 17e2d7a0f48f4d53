//! RBAC's privilege-escalation prevention: a user may only create or update a Role or
//! ClusterRole granting what it already holds, and only bind a role whose permissions it holds,
//! as kube-apiserver's `policybased` RBAC storages decide (`pkg/registry/rbac`).
//!
//! A write of a role is allowed when the user is in `system:masters` (`EscalationAllowed`),
//! or may `escalate` that resource (`RoleEscalationAuthorized`, named as the request's URL
//! names it: no name for a POST), or holds every rule the role grants in the request's
//! namespace (`ConfirmNoEscalation`, compared with
//! [`covers`](crate::filters::authorization::rbac::covers)); a ClusterRole with an
//! `aggregationRule` also needs every permission (`*` on `*.*` and on every URL). A write of a
//! binding is allowed when the user is in `system:masters`, or may `bind` the referenced role
//! (resource `roles` or `clusterroles`, named by the role, in the binding's namespace), or holds
//! every rule of that role; a role that does not exist is the registry's 404. An update that
//! only changes what the garbage collector changes (owner references, finalizers) is not
//! checked. Otherwise the write gets the registry's 403 listing the permissions not held.
//!
//! The apiserver makes these checks in the kinds' storage, after mutating admission and before
//! the strategy validates; this plugin is therefore the last of the mutating phase, and refuses
//! without changing anything. Under `AlwaysAllow` the authorizer allows every `escalate` and
//! `bind`, so nothing is looked at, nor for `system:masters`.

use futures_util::future::BoxFuture;
use serde_json::Value;

use super::{Attributes, Mutating, Operation};
use crate::context::{UserInfo, MASTERS};
use crate::error::{qualified, ApiError, StatusDetails};
use crate::filters::authorization::rbac::covers::{
    compact, compact_string, go_quote_list, uncovered, PolicyRule,
};
use crate::filters::authorization::rbac::{aggregate, rules_for, RoleRefError};
use crate::filters::authorization::{self, Mode};
use crate::machinery::gofmt::go_quote;
use crate::registry::object_meta::{meta_str, path_segment_errors};
use crate::registry::rbac::GROUP;
use crate::schema::zero::is_zero;
use crate::store::{GroupResource, ObjectKey, Snapshot};

/// The plugin.
pub struct RbacEscalation;

impl Mutating for RbacEscalation {
    /// Creates and updates of the RBAC kinds, when the authorizer is not `AlwaysAllow`.
    fn handles(&self, attrs: &Attributes<'_>) -> bool {
        attrs.resource.group == GROUP
            && attrs.subresource.is_empty()
            && matches!(attrs.operation, Operation::Create | Operation::Update)
            && attrs.authorization != Mode::AlwaysAllow
    }

    fn admit<'a>(
        &'a self,
        attrs: &'a Attributes<'a>,
        object: &'a mut Value,
    ) -> BoxFuture<'a, Result<(), ApiError>> {
        let result = match write_of(attrs, object) {
            Some(write) => check(&attrs.store.snapshot(), &write),
            None => Ok(()),
        };
        Box::pin(std::future::ready(result))
    }
}

/// What is checked, or `None` when nothing is: not an RBAC kind, a delete, a user who may
/// do anything.
fn write_of<'a>(attrs: &'a Attributes<'a>, object: &'a Value) -> Option<Write<'a>> {
    let user = &attrs.ctx.user;
    if attrs.authorization == Mode::AlwaysAllow || escalation_allowed(user) {
        return None;
    }
    let res = attrs.resource;
    if res.group != GROUP || !attrs.subresource.is_empty() {
        return None;
    }
    let kind = match res.plural.as_str() {
        "roles" | "clusterroles" => Kind::Role,
        "rolebindings" | "clusterrolebindings" => Kind::Binding,
        _ => return None,
    };
    let old = match attrs.operation {
        Operation::Create => None,
        Operation::Update => attrs.old_object,
        Operation::Delete | Operation::Connect => return None,
    };
    Some(Write {
        mode: attrs.authorization,
        user,
        kind,
        resource: &res.plural,
        namespace: attrs.namespace,
        request_name: attrs.ctx.request_name.as_deref().unwrap_or(attrs.name),
        object,
        old,
    })
}

/// Whether the write is of a role or of a binding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A Role or ClusterRole: its rules are granted.
    Role,
    /// A RoleBinding or ClusterRoleBinding: its role's rules are granted.
    Binding,
}

/// One write of an RBAC object, as the escalation checks see it.
pub struct Write<'a> {
    /// How requests are authorized (`escalate` and `bind` are asked of it).
    pub mode: Mode,
    /// Who writes.
    pub user: &'a UserInfo,
    /// Role or binding.
    pub kind: Kind,
    /// The resource (`roles`, `clusterroles`, `rolebindings`, `clusterrolebindings`).
    pub resource: &'a str,
    /// The request's namespace ("" for the cluster-scoped kinds).
    pub namespace: &'a str,
    /// The name the request's URL gives (none for a POST): what `escalate` is asked about.
    pub request_name: &'a str,
    /// The new object, after mutating admission.
    pub object: &'a Value,
    /// The stored object of an update.
    pub old: Option<&'a Value>,
}

/// `EscalationAllowed`: `system:masters` may do anything.
fn escalation_allowed(user: &UserInfo) -> bool {
    user.groups.iter().any(|g| g == MASTERS)
}

/// Decides one write (of a user outside `system:masters`), reading roles and bindings from
/// `snap`.
pub fn check(snap: &Snapshot, w: &Write<'_>) -> Result<(), ApiError> {
    match w.kind {
        Kind::Role => check_role(snap, w),
        Kind::Binding => check_binding(snap, w),
    }
}

fn check_role(snap: &Snapshot, w: &Write<'_>) -> Result<(), ApiError> {
    if role_escalation_authorized(snap, w) {
        return Ok(());
    }
    if w.old
        .is_some_and(|old| only_gc_fields_change(w.object, old))
    {
        return Ok(());
    }
    let name = meta_str(w.object, "name");
    let rules = PolicyRule::list(&w.object["rules"]);
    confirm_no_escalation(snap, w.user, w.namespace, &rules)
        .map_err(|msg| forbidden(w.resource, name, &msg))?;
    let aggregates = has_aggregation_rule(w.object) || w.old.is_some_and(has_aggregation_rule);
    if w.resource == "clusterroles" && aggregates {
        confirm_no_escalation(snap, w.user, "", &full_authority()).map_err(|_| {
            let msg = "must have cluster-admin privileges to use the aggregationRule";
            forbidden(w.resource, name, msg)
        })?;
    }
    Ok(())
}

fn check_binding(snap: &Snapshot, w: &Write<'_>) -> Result<(), ApiError> {
    if w.old
        .is_some_and(|old| only_gc_fields_change(w.object, old))
    {
        return Ok(());
    }
    let role_ref = &w.object["roleRef"];
    if binding_authorized(snap, w, role_ref) {
        return Ok(());
    }
    let rules = role_ref_rules(snap, role_ref, w.namespace)?;
    let name = meta_str(w.object, "name");
    confirm_no_escalation(snap, w.user, w.namespace, &rules)
        .map_err(|msg| forbidden(w.resource, name, &msg))
}

/// `RoleEscalationAuthorized`: whether the user may `escalate` the role resource the request
/// names.
fn role_escalation_authorized(snap: &Snapshot, w: &Write<'_>) -> bool {
    let attrs = authorization::Attributes {
        verb: "escalate".into(),
        resource_request: true,
        group: GROUP.into(),
        version: "*".into(),
        resource: w.resource.into(),
        namespace: w.namespace.into(),
        name: w.request_name.into(),
        ..authorization::Attributes::default()
    };
    authorization::authorize(w.mode, snap, w.user, &attrs).allowed()
}

/// `BindingAuthorized`: whether the user may `bind` the role a binding references, in the
/// binding's namespace.
fn binding_authorized(snap: &Snapshot, w: &Write<'_>, role_ref: &Value) -> bool {
    let resource = match role_ref["kind"].as_str() {
        Some("ClusterRole") => "clusterroles",
        Some("Role") => "roles",
        _ => return false,
    };
    let s = |f: &str| role_ref[f].as_str().unwrap_or("").to_string();
    let attrs = authorization::Attributes {
        verb: "bind".into(),
        resource_request: true,
        group: s("apiGroup"),
        version: "*".into(),
        resource: resource.into(),
        namespace: w.namespace.into(),
        name: s("name"),
        ..authorization::Attributes::default()
    };
    authorization::authorize(w.mode, snap, w.user, &attrs).allowed()
}

/// `GetRoleReferenceRules` through the registry: the referenced role's rules, or the errors
/// the registry's getters give (its key function's 400s, its 404; an unsupported kind is a
/// plain error, which the apiserver serves as a 500 without a reason).
fn role_ref_rules(
    snap: &Snapshot,
    role_ref: &Value,
    namespace: &str,
) -> Result<Vec<PolicyRule>, ApiError> {
    let name = role_ref["name"].as_str().unwrap_or("");
    let (resource, ns) = match role_ref["kind"].as_str().unwrap_or("") {
        "Role" => ("roles", namespace),
        "ClusterRole" => ("clusterroles", ""),
        other => {
            let msg = RoleRefError::UnsupportedKind(other.to_string()).registry_message();
            return Err(ApiError::plain(msg));
        }
    };
    if name.is_empty() {
        return Err(ApiError::bad_request("Name parameter required."));
    }
    let msgs = path_segment_errors(name);
    if !msgs.is_empty() {
        return Err(ApiError::bad_request(format!(
            "Name parameter invalid: {}: {}",
            go_quote(name),
            msgs.join(";")
        )));
    }
    let role = snap.get(
        &GroupResource::new(GROUP, resource),
        &ObjectKey::new(ns, name),
    );
    match role {
        Some(role) => Ok(PolicyRule::list(&role.value()["rules"])),
        None => Err(ApiError::not_found(GROUP, resource, name)),
    }
}

/// `ConfirmNoEscalation`: whether the user's own rules in `namespace` cover `rules`; the
/// message says what they do not.
fn confirm_no_escalation(
    snap: &Snapshot,
    user: &UserInfo,
    namespace: &str,
    rules: &[PolicyRule],
) -> Result<(), String> {
    let (owner, errors) = rules_for(snap, user, namespace);
    let owner: Vec<PolicyRule> = owner.iter().map(PolicyRule::from_value).collect();
    let missing = uncovered(&owner, rules);
    if missing.is_empty() {
        return Ok(());
    }
    let errors: Vec<String> = errors.iter().map(RoleRefError::registry_message).collect();
    Err(escalation_message(user, missing, &errors))
}

/// The message of a refused escalation: who, the missing rules compacted and printed one per
/// line in sorted order (each once), and the errors met resolving the user's own roles.
pub fn escalation_message(
    user: &UserInfo,
    missing: Vec<PolicyRule>,
    resolution_errors: &[String],
) -> String {
    let mut shown: Vec<String> = compact(missing).iter().map(compact_string).collect();
    shown.sort();
    shown.dedup();
    let mut msg = format!(
        "user {} (groups={}) is attempting to grant RBAC permissions not currently held:\n{}",
        go_quote(&user.name),
        go_quote_list(&user.groups),
        shown.join("\n")
    );
    if !resolution_errors.is_empty() {
        let errors = aggregate(resolution_errors);
        msg.push_str(&format!("; resolution errors: [{errors}]"));
    }
    msg
}

/// `apierrors.NewForbidden` for an RBAC resource (no name when the object has none yet).
fn forbidden(resource: &str, name: &str, why: &str) -> ApiError {
    let qualified = qualified(GROUP, resource);
    let message = if name.is_empty() {
        format!("{qualified} is forbidden: {why}")
    } else {
        format!("{qualified} {} is forbidden: {why}", go_quote(name))
    };
    let mut err = ApiError::status(403, "Forbidden", message);
    err.details = Some(Box::new(StatusDetails {
        name: (!name.is_empty()).then(|| name.to_string()),
        group: Some(GROUP.to_string()),
        kind: Some(resource.to_string()),
        ..StatusDetails::default()
    }));
    err
}

/// Every permission: what using an `aggregationRule` needs.
fn full_authority() -> Vec<PolicyRule> {
    let all = vec!["*".to_string()];
    vec![
        PolicyRule {
            verbs: all.clone(),
            api_groups: all.clone(),
            resources: all.clone(),
            ..PolicyRule::default()
        },
        PolicyRule {
            verbs: all.clone(),
            non_resource_urls: all,
            ..PolicyRule::default()
        },
    ]
}

/// Whether a ClusterRole has an `aggregationRule` with at least one selector.
fn has_aggregation_rule(role: &Value) -> bool {
    role["aggregationRule"]["clusterRoleSelectors"]
        .as_array()
        .is_some_and(|s| !s.is_empty())
}

/// `IsOnlyMutatingGCFields`: whether the objects differ only in owner references, finalizers,
/// selfLink and managedFields.
pub fn only_gc_fields_change(obj: &Value, old: &Value) -> bool {
    let without_gc_fields = |v: &Value| {
        let mut v = v.clone();
        if let Some(meta) = v.get_mut("metadata").and_then(Value::as_object_mut) {
            for f in ["ownerReferences", "finalizers", "selfLink", "managedFields"] {
                meta.remove(f);
            }
        }
        v
    };
    semantically_equal(&without_gc_fields(obj), &without_gc_fields(old))
}

/// `equality.Semantic.DeepEqual` of two objects as Go structs would hold them: an absent field,
/// null, an empty list, an empty map and a zero scalar are the same.
fn semantically_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let absent = Value::Null;
            let keys = x.keys().chain(y.keys());
            keys.into_iter().all(|k| {
                semantically_equal(x.get(k).unwrap_or(&absent), y.get(k).unwrap_or(&absent))
            })
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| semantically_equal(p, q))
        }
        _ if is_zero(a) && is_zero(b) => true,
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    use crate::store::Store;

    const AUTHENTICATED: &[&str] = &["system:authenticated"];

    fn put(store: &Store, resource: &str, obj: Value) {
        let ns = meta_str(&obj, "namespace").to_string();
        let name = meta_str(&obj, "name").to_string();
        let gr = GroupResource::new(GROUP, resource);
        store
            .write(|txn| txn.put(&gr, ObjectKey::new(&ns, &name), obj))
            .expect("stored");
    }

    fn cluster_role(store: &Store, name: &str, rules: Value) {
        put(
            store,
            "clusterroles",
            json!({"metadata": {"name": name}, "rules": rules}),
        );
    }

    /// Binds `user` to a ClusterRole, cluster-wide or (with a namespace) in a namespace.
    fn bind(store: &Store, user: &str, kind: &str, role: &str, namespace: &str) {
        let meta = json!({"name": format!("{user}-{role}"), "namespace": namespace});
        let binding = json!({"metadata": meta,
            "roleRef": {"apiGroup": GROUP, "kind": kind, "name": role},
            "subjects": [{"kind": "User", "apiGroup": GROUP, "name": user}]});
        let resource = if namespace.is_empty() {
            "clusterrolebindings"
        } else {
            "rolebindings"
        };
        put(store, resource, binding);
    }

    /// bob reads pods everywhere and secrets in `team`; esc may escalate; binder may bind
    /// `secret-reader` in `team`; root holds every permission (outside system:masters); carol's
    /// binding in `team` names a Role that does not exist.
    fn cluster() -> std::sync::Arc<Snapshot> {
        let store = Store::new(10, 10);
        let pods = json!([{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]}]);
        cluster_role(&store, "pod-reader", pods);
        let secrets = json!([{"verbs": ["get"], "apiGroups": [""], "resources": ["secrets"]}]);
        cluster_role(&store, "secret-reader", secrets);
        let escalate = json!([{"verbs": ["escalate"], "apiGroups": [GROUP],
            "resources": ["roles", "clusterroles"]}]);
        cluster_role(&store, "escalator", escalate);
        let bind_one = json!([{"verbs": ["bind"], "apiGroups": [GROUP],
            "resources": ["clusterroles"], "resourceNames": ["secret-reader"]}]);
        cluster_role(&store, "binder", bind_one);
        let all = json!([{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]},
            {"verbs": ["*"], "nonResourceURLs": ["*"]}]);
        cluster_role(&store, "everything", all);
        bind(&store, "bob", "ClusterRole", "pod-reader", "");
        bind(&store, "bob", "ClusterRole", "secret-reader", "team");
        bind(&store, "esc", "ClusterRole", "escalator", "");
        bind(&store, "binder", "ClusterRole", "binder", "team");
        bind(&store, "root", "ClusterRole", "everything", "");
        bind(&store, "carol", "Role", "missing", "team");
        store.snapshot()
    }

    fn user(name: &str) -> UserInfo {
        UserInfo {
            name: name.into(),
            groups: AUTHENTICATED.iter().map(|g| g.to_string()).collect(),
            ..UserInfo::default()
        }
    }

    /// Checks `who` writing `object` (and `old`, for an update) as `resource` in `ns`: the
    /// refusal's code and message.
    fn decide(
        who: &str,
        resource: &str,
        ns: &str,
        object: Value,
        old: Option<Value>,
    ) -> Result<(), (u16, String)> {
        let user = user(who);
        let kind = if resource.ends_with("bindings") {
            Kind::Binding
        } else {
            Kind::Role
        };
        let write = Write {
            mode: Mode::Rbac,
            user: &user,
            kind,
            resource,
            namespace: ns,
            request_name: "",
            object: &object,
            old: old.as_ref(),
        };
        check(&cluster(), &write).map_err(|e| (e.code, e.message))
    }

    fn role(name: &str, rules: Value) -> Value {
        json!({"metadata": {"name": name}, "rules": rules})
    }

    fn rule(verbs: &[&str], resources: &[&str]) -> Value {
        json!({"verbs": verbs, "apiGroups": [""], "resources": resources})
    }

    const HEAD: &str = "is attempting to grant RBAC permissions not currently held:\n";

    #[rstest]
    #[case::holds_it("bob", "clusterroles", "", json!([rule(&["get"], &["pods"])]), None)]
    #[case::nothing_granted("carol", "clusterroles", "", json!(null), None)]
    #[case::not_cluster_wide("bob", "clusterroles", "", json!([rule(&["get"], &["secrets"])]),
        Some(r#"clusterroles.rbac.authorization.k8s.io "r" is forbidden: user "bob" (groups=["system:authenticated"]) HEAD{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}"#))]
    #[case::held_in_the_namespace("bob", "roles", "team", json!([rule(&["get"], &["secrets", "pods"])]), None)]
    #[case::compacted_and_sorted("bob", "roles", "team",
        json!([rule(&["get", "delete", "list", "watch"], &["pods", "configmaps"]), rule(&["get"], &["secrets"])]),
        Some(r#"roles.rbac.authorization.k8s.io "r" is forbidden: user "bob" (groups=["system:authenticated"]) HEAD{APIGroups:[""], Resources:["configmaps"], Verbs:["get" "delete" "list" "watch"]}
{APIGroups:[""], Resources:["pods"], Verbs:["delete" "watch"]}"#))]
    #[case::other_namespace("bob", "roles", "else", json!([rule(&["get"], &["secrets"])]),
        Some(r#"roles.rbac.authorization.k8s.io "r" is forbidden: user "bob" (groups=["system:authenticated"]) HEAD{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}"#))]
    #[case::escalate("esc", "clusterroles", "", json!([rule(&["*"], &["*"])]), None)]
    #[case::resolution_errors("carol", "roles", "team", json!([rule(&["get"], &["pods"])]),
        Some(r#"roles.rbac.authorization.k8s.io "r" is forbidden: user "carol" (groups=["system:authenticated"]) HEAD{APIGroups:[""], Resources:["pods"], Verbs:["get"]}; resolution errors: [roles.rbac.authorization.k8s.io "missing" not found]"#))]
    #[case::urls("bob", "clusterroles", "", json!([{"verbs": ["get"], "nonResourceURLs": ["/healthz"]}]),
        Some(r#"clusterroles.rbac.authorization.k8s.io "r" is forbidden: user "bob" (groups=["system:authenticated"]) HEAD{NonResourceURLs:["/healthz"], Verbs:["get"]}"#))]
    fn roles(
        #[case] who: &str,
        #[case] resource: &str,
        #[case] ns: &str,
        #[case] rules: Value,
        #[case] refused: Option<&str>,
    ) {
        let want = refused.map(|m| (403, m.replace("HEAD", HEAD)));
        assert_eq!(
            decide(who, resource, ns, role("r", rules), None),
            want.map_or(Ok(()), Err)
        );
    }

    #[test]
    fn aggregation_rules_need_every_permission() {
        let mut aggregated = role("agg", json!(null));
        aggregated["aggregationRule"] =
            json!({"clusterRoleSelectors": [{"matchLabels": {"a": "b"}}]});
        let want = "clusterroles.rbac.authorization.k8s.io \"agg\" is forbidden: must have cluster-admin privileges to use the aggregationRule";
        assert_eq!(
            decide("bob", "clusterroles", "", aggregated.clone(), None),
            Err((403, want.to_string()))
        );
        assert_eq!(
            decide("root", "clusterroles", "", aggregated.clone(), None),
            Ok(())
        );
        // Dropping the rule is checked too.
        let plain = role("agg", json!(null));
        assert!(decide("bob", "clusterroles", "", plain, Some(aggregated)).is_err());
    }

    #[test]
    fn a_role_without_a_name_yet_is_named_by_its_resource() {
        let obj =
            json!({"metadata": {"generateName": "r-"}, "rules": [rule(&["get"], &["secrets"])]});
        let (code, msg) = decide("bob", "clusterroles", "", obj, None).expect_err("refused");
        assert_eq!(code, 403);
        assert!(
            msg.starts_with("clusterroles.rbac.authorization.k8s.io is forbidden: user \"bob\""),
            "{msg}"
        );
    }

    #[test]
    fn updates_of_gc_fields_only_are_not_checked() {
        let old = json!({"metadata": {"name": "r", "resourceVersion": "5", "labels": {}},
            "rules": [rule(&["get"], &["secrets"])]});
        let mut gc = old.clone();
        gc["metadata"]["finalizers"] = json!(["foregroundDeletion"]);
        gc["metadata"]["ownerReferences"] = json!([{"uid": "u"}]);
        gc["metadata"].as_object_mut().map(|m| m.remove("labels"));
        assert_eq!(
            decide("bob", "clusterroles", "", gc, Some(old.clone())),
            Ok(())
        );
        let mut labelled = old.clone();
        labelled["metadata"]["labels"] = json!({"x": "y"});
        assert!(decide("bob", "clusterroles", "", labelled, Some(old)).is_err());
    }

    fn binding(kind: &str, role: &str) -> Value {
        json!({"metadata": {"name": "b"}, "roleRef": {"apiGroup": GROUP, "kind": kind, "name": role},
            "subjects": [{"kind": "User", "apiGroup": GROUP, "name": "someone"}]})
    }

    #[rstest]
    #[case::holds_the_role("bob", "rolebindings", "team", "ClusterRole", "pod-reader", None)]
    #[case::holds_it_in_the_namespace(
        "bob",
        "rolebindings",
        "team",
        "ClusterRole",
        "secret-reader",
        None
    )]
    #[case::not_cluster_wide("bob", "clusterrolebindings", "", "ClusterRole", "secret-reader",
        Some((403, r#"clusterrolebindings.rbac.authorization.k8s.io "b" is forbidden: user "bob" (groups=["system:authenticated"]) HEAD{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}"#)))]
    #[case::may_bind("binder", "rolebindings", "team", "ClusterRole", "secret-reader", None)]
    #[case::may_bind_only_there("binder", "rolebindings", "else", "ClusterRole", "secret-reader",
        Some((403, r#"rolebindings.rbac.authorization.k8s.io "b" is forbidden: user "binder" (groups=["system:authenticated"]) HEAD{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}"#)))]
    #[case::may_bind_only_that("binder", "rolebindings", "team", "ClusterRole", "pod-reader",
        Some((403, r#"rolebindings.rbac.authorization.k8s.io "b" is forbidden: user "binder" (groups=["system:authenticated"]) HEAD{APIGroups:[""], Resources:["pods"], Verbs:["get" "list"]}"#)))]
    #[case::missing_role("bob", "rolebindings", "team", "Role", "nope",
        Some((404, r#"roles.rbac.authorization.k8s.io "nope" not found"#)))]
    #[case::missing_cluster_role("bob", "clusterrolebindings", "", "ClusterRole", "nope",
        Some((404, r#"clusterroles.rbac.authorization.k8s.io "nope" not found"#)))]
    #[case::unsupported_kind("bob", "rolebindings", "team", "Robot", "r",
        Some((500, r#"unsupported role reference kind: "Robot""#)))]
    #[case::no_name("bob", "rolebindings", "team", "ClusterRole", "",
        Some((400, "Name parameter required.")))]
    #[case::bad_name("bob", "rolebindings", "team", "ClusterRole", "a/b",
        Some((400, r#"Name parameter invalid: "a/b": may not contain '/'"#)))]
    #[case::root("root", "clusterrolebindings", "", "ClusterRole", "everything", None)]
    fn bindings(
        #[case] who: &str,
        #[case] resource: &str,
        #[case] ns: &str,
        #[case] kind: &str,
        #[case] role: &str,
        #[case] refused: Option<(u16, &str)>,
    ) {
        let want = refused.map(|(code, m)| (code, m.replace("HEAD", HEAD)));
        let got = decide(who, resource, ns, binding(kind, role), None);
        assert_eq!(got, want.map_or(Ok(()), Err));
    }

    #[test]
    fn always_allow_allows_escalate_and_bind() {
        let user = user("nobody");
        let object = binding("ClusterRole", "everything");
        let write = Write {
            mode: Mode::AlwaysAllow,
            user: &user,
            kind: Kind::Binding,
            resource: "clusterrolebindings",
            namespace: "",
            request_name: "",
            object: &object,
            old: None,
        };
        assert_eq!(check(&cluster(), &write).map_err(|e| e.message), Ok(()));
        let write = Write {
            kind: Kind::Role,
            resource: "clusterroles",
            object: &object,
            ..write
        };
        assert!(check(&cluster(), &write).is_ok());
    }

    #[rstest]
    #[case(json!({"a": null}), json!({}), true)]
    #[case(json!({"a": []}), json!({"a": null}), true)]
    #[case(json!({"a": ""}), json!({}), true)]
    #[case(json!({"a": {"b": []}}), json!({"a": {}}), true)]
    #[case(json!({"a": ["x"]}), json!({"a": []}), false)]
    #[case(json!({"a": 1}), json!({}), false)]
    #[case(json!([1, 2]), json!([2, 1]), false)]
    fn semantic_equality(#[case] a: Value, #[case] b: Value, #[case] want: bool) {
        assert_eq!(semantically_equal(&a, &b), want);
        assert_eq!(semantically_equal(&b, &a), want);
    }

    #[test]
    fn messages_list_each_missing_rule_once_and_every_resolution_error() {
        let mut u = user("x\"y");
        u.groups.push("g".into());
        let missing = PolicyRule::list(
            &json!([rule(&["get"], &["pods"]), {"verbs": ["get"], "nonResourceURLs": ["/a"]},
            {"verbs": ["get"], "nonResourceURLs": ["/a"]}]),
        );
        let errors = ["e1".to_string(), "e2".to_string(), "e1".to_string()];
        assert_eq!(
            escalation_message(&u, missing, &errors),
            "user \"x\\\"y\" (groups=[\"system:authenticated\" \"g\"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[\"\"], Resources:[\"pods\"], Verbs:[\"get\"]}\n{NonResourceURLs:[\"/a\"], Verbs:[\"get\"]}; resolution errors: [[e1, e2]]"
        );
    }
}
