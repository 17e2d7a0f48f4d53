use std::sync::Arc;

use rstest::rstest;
use serde_json::{json, Value};

use super::*;
use crate::filters::request_info;
use crate::store::Store;

fn put(store: &Store, resource: &str, obj: Value) {
    let ns = obj["metadata"]["namespace"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let name = obj["metadata"]["name"].as_str().unwrap().to_string();
    store
        .write(|txn| {
            txn.put(
                &GroupResource::new(GROUP, resource),
                ObjectKey::new(&ns, &name),
                obj,
            )
        })
        .unwrap();
}

/// A cluster where `reader` (ClusterRole) lets group `readers` get and list pods everywhere,
/// `cm-editor` (Role in `team`) lets service account `team/bot` update one ConfigMap and the
/// status of deployments, and a binding in `team` names a Role that does not exist.
fn cluster() -> Arc<Snapshot> {
    let store = Store::new(10, 10);
    put(
        &store,
        "clusterroles",
        json!({"metadata": {"name": "reader"}, "rules": [
            {"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods"]},
            {"verbs": ["get"], "nonResourceURLs": ["/healthz", "/logs/*"]},
        ]}),
    );
    put(
        &store,
        "clusterrolebindings",
        json!({"metadata": {"name": "readers"},
        "roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": "reader"},
        "subjects": [{"kind": "Group", "apiGroup": GROUP, "name": "readers"}]}),
    );
    put(
        &store,
        "roles",
        json!({"metadata": {"name": "cm-editor", "namespace": "team"}, "rules": [
            {"verbs": ["update"], "apiGroups": [""], "resources": ["configmaps"], "resourceNames": ["settings"]},
            {"verbs": ["*"], "apiGroups": ["apps"], "resources": ["*/status"]},
        ]}),
    );
    put(
        &store,
        "rolebindings",
        json!({"metadata": {"name": "bot", "namespace": "team"},
        "roleRef": {"apiGroup": GROUP, "kind": "Role", "name": "cm-editor"},
        "subjects": [{"kind": "ServiceAccount", "name": "bot"}]}),
    );
    put(
        &store,
        "rolebindings",
        json!({"metadata": {"name": "dangling", "namespace": "team"},
        "roleRef": {"apiGroup": GROUP, "kind": "Role", "name": "missing"},
        "subjects": [{"kind": "User", "apiGroup": GROUP, "name": "carol"}]}),
    );
    store.snapshot()
}

fn user(name: &str, groups: &[&str]) -> UserInfo {
    UserInfo {
        name: name.into(),
        groups: groups.iter().map(|g| g.to_string()).collect(),
        ..UserInfo::default()
    }
}

fn decide(who: &UserInfo, method: &str, path: &str) -> Decision {
    let info = request_info::resolve(method, path, false);
    authorize(
        &cluster(),
        who,
        &Attributes::of_request(&info, method, path, ""),
    )
}

const BOT: &str = "system:serviceaccount:team:bot";

#[rstest]
#[case("alice", &["readers"], "GET", "/api/v1/namespaces/x/pods/p", true)]
#[case("alice", &["readers"], "GET", "/api/v1/pods", true)]
#[case("alice", &["readers"], "DELETE", "/api/v1/namespaces/x/pods/p", false)]
#[case("alice", &["readers"], "GET", "/api/v1/namespaces/x/pods/p/log", false)]
#[case("alice", &["readers"], "GET", "/healthz", true)]
#[case("alice", &["readers"], "GET", "/logs/kube.log", true)]
#[case("alice", &["readers"], "GET", "/logs", false)]
#[case("alice", &[], "GET", "/api/v1/pods", false)]
#[case(BOT, &[], "PUT", "/api/v1/namespaces/team/configmaps/settings", true)]
#[case(BOT, &[], "PUT", "/api/v1/namespaces/team/configmaps/other", false)]
#[case(BOT, &[], "PUT", "/api/v1/namespaces/other/configmaps/settings", false)]
#[case(BOT, &[], "PATCH", "/apis/apps/v1/namespaces/team/deployments/d/status", true)]
#[case(BOT, &[], "PATCH", "/apis/apps/v1/namespaces/team/deployments/d", false)]
#[case(BOT, &[], "PATCH", "/apis/batch/v1/namespaces/team/jobs/j/status", false)]
#[case("system:serviceaccount:other:bot", &[], "PUT", "/api/v1/namespaces/team/configmaps/settings", false)]
fn decisions(
    #[case] name: &str,
    #[case] groups: &[&str],
    #[case] method: &str,
    #[case] path: &str,
    #[case] allowed: bool,
) {
    assert_eq!(decide(&user(name, groups), method, path).allowed(), allowed);
}

#[test]
fn allowed_says_by_which_binding() {
    let got = decide(
        &user(BOT, &[]),
        "PUT",
        "/api/v1/namespaces/team/configmaps/settings",
    );
    let want = "RBAC: allowed by RoleBinding \"bot/team\" of Role \"cm-editor\" to ServiceAccount \"bot/team\"";
    assert_eq!(got, Decision::Allow(want.into()));
    let got = decide(&user("a", &["readers"]), "GET", "/api/v1/pods");
    let want = "RBAC: allowed by ClusterRoleBinding \"readers\" of ClusterRole \"reader\" to Group \"readers\"";
    assert_eq!(got, Decision::Allow(want.into()));
}

#[test]
fn a_missing_role_is_the_reason() {
    let got = decide(&user("carol", &[]), "GET", "/api/v1/namespaces/team/pods");
    let want = "RBAC: role.rbac.authorization.k8s.io \"missing\" not found";
    assert_eq!(got, Decision::Deny(want.into()));
    assert_eq!(
        decide(&user("carol", &[]), "GET", "/api/v1/namespaces/else/pods"),
        Decision::Deny(String::new())
    );
}

#[test]
fn rules_for_lists_cluster_and_namespace_rules() {
    let snap = cluster();
    let (rules, errors) = rules_for(&snap, &user(BOT, &["readers"]), "team");
    assert_eq!((rules.len(), errors.len()), (4, 0));
    let (rules, errors) = rules_for(&snap, &user("carol", &[]), "team");
    assert_eq!((rules.len(), errors.len()), (0, 1));
}

#[rstest]
#[case(json!({"kind": "User", "name": "u"}), "u", "", true)]
#[case(json!({"kind": "Group", "name": "g"}), "x", "", true)]
#[case(json!({"kind": "ServiceAccount", "name": "sa", "namespace": "n"}), "system:serviceaccount:n:sa", "", true)]
#[case(json!({"kind": "ServiceAccount", "name": "sa"}), "system:serviceaccount:n:sa", "n", true)]
#[case(json!({"kind": "ServiceAccount", "name": "sa"}), "system:serviceaccount:n:sa", "", false)]
#[case(json!({"kind": "Other", "name": "u"}), "u", "", false)]
fn subjects(#[case] subject: Value, #[case] name: &str, #[case] ns: &str, #[case] want: bool) {
    assert_eq!(applies_to_user(&user(name, &["g"]), &subject, ns), want);
}
