//! rbac.authorization.k8s.io/v1 through kube-rs's typed API: roles and bindings stored and
//! validated as the apiserver does it (path-segment names, rules, role references, subjects),
//! binding defaults, the immutable roleRef, Tables, field selectors, patches, apply, protobuf.
//! The server authorizes with AlwaysAllow, so nothing here checks permissions: `rbac_authz`
//! does.
//!
//! The Table and protobuf helpers are shared with the other built-in kinds' test files.

use futures_util::StreamExt;
use k8s_openapi::api::rbac::v1::{ClusterRole, ClusterRoleBinding, Role, RoleBinding};
use kube::api::{
    Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use rstest::rstest;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use crate::harness::{api_error, server, TestServer};

const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io";
const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

/// A typed object from JSON (the tests write objects as the documentation shows them).
pub fn typed<T: DeserializeOwned>(v: Value) -> T {
    serde_json::from_value(v).expect("object of the kind")
}

/// A Table of `path`, with its column names.
pub async fn table(server: &TestServer, path: &str) -> (Vec<String>, Value) {
    let (status, body) = server
        .send(server.http.get(server.url(path)).header("accept", TABLE))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["kind"], "Table");
    let names = body["columnDefinitions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["name"].as_str().map(str::to_string))
        .collect();
    (names, body)
}

/// `path` read as protobuf, decoded back to JSON.
pub async fn protobuf(server: &TestServer, path: &str) -> Value {
    let resp = server
        .http
        .get(server.url(path))
        .header("accept", PROTOBUF)
        .send()
        .await
        .expect("sent");
    assert_eq!(resp.status().as_u16(), 200);
    let body = resp.bytes().await.expect("body");
    assert_eq!(&body[..4], b"k8s\0");
    kubefake::endpoints::protobuf::decode(&body).expect("decodes")
}

fn reader_role(name: &str) -> Role {
    typed(json!({"metadata": {"name": name},
        "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]}))
}

#[rstest]
#[tokio::test]
async fn roles_crud_watch_and_path_segment_names(#[future(awt)] server: TestServer) {
    let api: Api<Role> = Api::namespaced(server.client.clone(), "default");
    let created = api
        .create(&PostParams::default(), &reader_role("system:pod-reader"))
        .await
        .expect("a name with colons is a valid path segment");
    assert_eq!(
        created.metadata.generation, None,
        "roles track no generation"
    );
    let rv = created
        .metadata
        .resource_version
        .clone()
        .unwrap_or_default();
    let mut watch = api
        .watch(&WatchParams::default(), &rv)
        .await
        .expect("watch")
        .boxed();
    let mut changed = created.clone();
    changed.metadata.resource_version = None;
    if let Some(rules) = changed.rules.as_mut() {
        rules[0].verbs.push("watch".into());
    }
    let updated = api
        .replace("system:pod-reader", &PostParams::default(), &changed)
        .await
        .expect("an update without resourceVersion is unconditional");
    let verbs = updated.rules.unwrap_or_default()[0].verbs.clone();
    assert_eq!(verbs, ["get", "list", "watch"]);
    match watch.next().await {
        Some(Ok(WatchEvent::Modified(r))) => {
            assert_eq!(r.metadata.name.as_deref(), Some("system:pod-reader"))
        }
        other => panic!("expected MODIFIED, got {other:?}"),
    }
    api.delete("system:pod-reader", &DeleteParams::default())
        .await
        .expect("delete");
    assert_eq!(
        api_error(api.get("system:pod-reader").await.expect_err("gone")).code,
        404
    );

    let err = api_error(
        api.create(&PostParams::default(), &reader_role("a/b"))
            .await
            .expect_err("slash"),
    );
    assert_eq!(
        err.message,
        "Role.rbac.authorization.k8s.io \"a/b\" is invalid: metadata.name: Invalid value: \"a/b\": may not contain '/'"
    );
}

#[rstest]
#[tokio::test]
async fn rules_are_validated_as_the_apiserver_words_it(#[future(awt)] server: TestServer) {
    let roles: Api<Role> = Api::namespaced(server.client.clone(), "default");
    let rv = server.rv();
    let bad: Role = typed(json!({"metadata": {"name": "bad"}, "rules": [
        {"verbs": [], "apiGroups": [""]},
        {"verbs": ["get"], "nonResourceURLs": ["/healthz"]}]}));
    let err = api_error(
        roles
            .create(&PostParams::default(), &bad)
            .await
            .expect_err("invalid rules"),
    );
    assert_eq!(err.code, 422);
    assert_eq!(
        err.message,
        "Role.rbac.authorization.k8s.io \"bad\" is invalid: [rules[0].verbs: Required value: verbs must contain at least one value, rules[0].resources: Required value: resource rules must supply at least one resource, rules[1].nonResourceURLs: Invalid value: [\"/healthz\"]: namespaced rules cannot apply to non-resource URLs]"
    );
    assert_eq!(server.rv(), rv, "a rejected create changes nothing");

    let cluster_roles: Api<ClusterRole> = Api::all(server.client.clone());
    let health: ClusterRole = typed(json!({"metadata": {"name": "health"},
        "rules": [{"verbs": ["get"], "nonResourceURLs": ["/healthz", "/livez"]}]}));
    cluster_roles
        .create(&PostParams::default(), &health)
        .await
        .expect("cluster roles may name non-resource URLs");
    let aggregated: ClusterRole = typed(json!({"metadata": {"name": "monitoring"},
        "aggregationRule": {"clusterRoleSelectors": [
            {"matchLabels": {"rbac.example.com/aggregate-to-monitoring": "true"}}]}}));
    let stored = cluster_roles
        .create(&PostParams::default(), &aggregated)
        .await
        .expect("aggregated role");
    let selectors = stored
        .aggregation_rule
        .and_then(|a| a.cluster_role_selectors);
    assert_eq!(selectors.map(|s| s.len()), Some(1));
    let empty: ClusterRole = typed(json!({"metadata": {"name": "empty"}, "aggregationRule": {}}));
    let err = api_error(
        cluster_roles
            .create(&PostParams::default(), &empty)
            .await
            .expect_err("no selectors"),
    );
    assert_eq!(
        err.message,
        "ClusterRole.rbac.authorization.k8s.io \"empty\" is invalid: aggregationRule.clusterRoleSelectors: Required value: at least one clusterRoleSelector required if aggregationRule is non-nil"
    );
}

#[rstest]
#[tokio::test]
async fn bindings_default_validate_and_keep_their_role(#[future(awt)] server: TestServer) {
    let api: Api<RoleBinding> = Api::namespaced(server.client.clone(), "default");
    let binding: RoleBinding = typed(json!({"metadata": {"name": "readers"},
        "roleRef": {"apiGroup": "", "kind": "Role", "name": "pod-reader"},
        "subjects": [{"kind": "User", "name": "jane"},
            {"kind": "ServiceAccount", "name": "default", "namespace": "default"}]}));
    let created = api
        .create(&PostParams::default(), &binding)
        .await
        .expect("the role need not exist");
    assert_eq!(
        created.role_ref.api_group.as_deref(),
        Some("rbac.authorization.k8s.io")
    );
    let subjects = created.subjects.clone().unwrap_or_default();
    assert_eq!(
        subjects[0].api_group.as_deref(),
        Some("rbac.authorization.k8s.io")
    );
    assert_eq!(subjects[1].api_group, None);

    let mut moved = created.clone();
    moved.role_ref.kind = "ClusterRole".into();
    moved.role_ref.name = "view".into();
    let err = api_error(
        api.replace("readers", &PostParams::default(), &moved)
            .await
            .expect_err("roleRef is immutable"),
    );
    assert_eq!(
        err.message,
        "RoleBinding.rbac.authorization.k8s.io \"readers\" is invalid: roleRef: Invalid value: {\"APIGroup\":\"rbac.authorization.k8s.io\",\"Kind\":\"ClusterRole\",\"Name\":\"view\"}: cannot change roleRef"
    );

    let cluster: Api<ClusterRoleBinding> = Api::all(server.client.clone());
    let bad: ClusterRoleBinding = typed(json!({"metadata": {"name": "bad"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "x"},
        "subjects": [{"kind": "ServiceAccount", "name": "default"},
            {"kind": "Robot", "name": "r2"}]}));
    let err = api_error(
        cluster
            .create(&PostParams::default(), &bad)
            .await
            .expect_err("invalid binding"),
    );
    assert_eq!(
        err.message,
        "ClusterRoleBinding.rbac.authorization.k8s.io \"bad\" is invalid: [roleRef.kind: Unsupported value: \"Role\": supported values: \"ClusterRole\", subjects[0].namespace: Required value, subjects[1].kind: Unsupported value: \"Robot\": supported values: \"ServiceAccount\", \"User\", \"Group\"]"
    );
}

#[rstest]
#[tokio::test]
async fn tables_selectors_patches_and_protobuf(#[future(awt)] server: TestServer) {
    let api: Api<RoleBinding> = Api::namespaced(server.client.clone(), "default");
    for (name, user) in [("one", "jane"), ("two", "joe")] {
        let b: RoleBinding = typed(json!({"metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "User", "name": user}, {"kind": "Group", "name": "devs"},
                {"kind": "ServiceAccount", "name": "builder", "namespace": "ci"}]}));
        api.create(&PostParams::default(), &b)
            .await
            .expect("create");
    }
    let path = "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings";
    let (columns, t) = table(&server, path).await;
    assert_eq!(
        columns,
        ["Name", "Role", "Age", "Users", "Groups", "ServiceAccounts"]
    );
    assert_eq!(t["columnDefinitions"][3]["priority"], 1);
    assert_eq!(
        t["rows"][0]["cells"].as_array().map(|c| c[..2].to_vec()),
        Some(vec![json!("one"), json!("ClusterRole/view")])
    );
    assert_eq!(t["rows"][0]["cells"][3], "jane");
    assert_eq!(t["rows"][0]["cells"][5], "ci/builder");
    let (columns, _) = table(&server, "/apis/rbac.authorization.k8s.io/v1/clusterroles").await;
    assert_eq!(columns, ["Name", "Created At"]);

    let listed = api
        .list(&ListParams::default().fields("metadata.name=two"))
        .await
        .expect("field selector");
    assert_eq!(listed.items.len(), 1);
    let (status, body) = server
        .get(&format!("{path}?fieldSelector=roleRef.name%3Dview"))
        .await;
    assert_eq!(status, 400);
    assert_eq!(
        body["message"],
        "\"roleRef.name\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
    );

    // Subjects are an atomic list: a strategic merge patch replaces it whole.
    let patched = api
        .patch(
            "one",
            &PatchParams::default(),
            &Patch::Strategic(json!({"subjects": [{"kind": "Group", "name": "ops"}]})),
        )
        .await
        .expect("strategic merge patch");
    let subjects = patched.subjects.unwrap_or_default();
    assert_eq!(subjects.len(), 1);
    assert_eq!(
        subjects[0].api_group.as_deref(),
        Some("rbac.authorization.k8s.io")
    );

    let roles: Api<ClusterRole> = Api::all(server.client.clone());
    let applied = roles
        .patch(
            "applied",
            &PatchParams::apply("tester"),
            &Patch::Apply(json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
                "metadata": {"name": "applied"},
                "rules": [{"apiGroups": ["apps"], "resources": ["deployments"], "verbs": ["get"]}]})),
        )
        .await
        .expect("server-side apply creates");
    let managers: Vec<String> = applied
        .metadata
        .managed_fields
        .unwrap_or_default()
        .into_iter()
        .filter_map(|m| m.manager)
        .collect();
    assert_eq!(managers, ["tester"]);

    let decoded = protobuf(&server, &format!("{path}/one")).await;
    assert_eq!(decoded["kind"], "RoleBinding");
    assert_eq!(decoded["roleRef"]["name"], "view");
}
