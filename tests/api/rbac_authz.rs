//! RBAC as a non-admin user sees it, over HTTP with bearer tokens on a server that authorizes
//! with RBAC: the aggregated bootstrap roles (`view`, `edit`, `admin`) grant what they grant in
//! a real cluster, a ClusterRole labelled to aggregate extends them at once, and writes of
//! roles and bindings pass the apiserver's privilege-escalation checks (a user grants only what
//! it holds, unless it may `escalate` or `bind`). Under AlwaysAllow, the library default,
//! aggregation happens too and nothing is refused.

use futures_util::StreamExt;
use k8s_openapi::api::rbac::v1::ClusterRole;
use kube::api::{Api, WatchEvent, WatchParams};
use serde_json::{json, Value};

use crate::harness::{server_with, token_http, TestServer};

const GROUP: &str = "rbac.authorization.k8s.io";
const ROLES: &str = "/apis/rbac.authorization.k8s.io/v1/namespaces/team/roles";
const BINDINGS: &str = "/apis/rbac.authorization.k8s.io/v1/namespaces/team/rolebindings";
const CLUSTER_ROLES: &str = "/apis/rbac.authorization.k8s.io/v1/clusterroles";
const CONFIGMAPS: &str = "/api/v1/namespaces/team/configmaps";

/// A server with these users (each authenticated by the token `<name>-token`) and a `team`
/// namespace.
async fn rbac_server(users: &[&str], mode: kubefake::AuthorizationMode) -> TestServer {
    let mut builder = kubefake::Server::builder().authorization_mode(mode);
    for name in users {
        let user = kubefake::UserInfo {
            name: name.to_string(),
            groups: vec!["system:authenticated".into()],
            ..kubefake::UserInfo::default()
        };
        builder = builder.token(format!("{name}-token"), user);
    }
    let server = server_with(builder).await;
    let (status, body) = server
        .post("/api/v1/namespaces", &json!({"metadata": {"name": "team"}}))
        .await;
    assert_eq!(status, 201, "{body}");
    server
}

/// A user's client.
fn as_user(server: &TestServer, name: &str) -> reqwest::Client {
    token_http(&server.handle, &format!("Bearer {name}-token"))
}

/// Sends `method path body` as `user`: status and body.
async fn call(
    server: &TestServer,
    user: &str,
    method: &str,
    path: &str,
    body: Option<&Value>,
) -> (u16, Value) {
    let client = as_user(server, user);
    let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
    let mut req = client.request(method, server.url(path));
    if let Some(body) = body {
        req = req.json(body);
    }
    server.send(req).await
}

/// As the admin: creates `body` at `path`.
async fn admin_create(server: &TestServer, path: &str, body: Value) {
    let (status, out) = server.post(path, &body).await;
    assert_eq!(status, 201, "{out}");
}

/// A RoleBinding in `team` of `user` to a role.
fn role_binding(name: &str, user: &str, kind: &str, role: &str) -> Value {
    json!({"metadata": {"name": name},
        "roleRef": {"apiGroup": GROUP, "kind": kind, "name": role},
        "subjects": [{"kind": "User", "apiGroup": GROUP, "name": user}]})
}

fn configmap(name: &str) -> Value {
    json!({"metadata": {"name": name}, "data": {"k": "v"}})
}

/// The rules of a ClusterRole, as the admin reads them.
async fn cluster_role_rules(server: &TestServer, name: &str) -> Vec<Value> {
    let (status, body) = server.get(&format!("{CLUSTER_ROLES}/{name}")).await;
    assert_eq!(status, 200, "{body}");
    body["rules"].as_array().cloned().unwrap_or_default()
}

fn grants(rules: &[Value], group: &str, resource: &str, verb: &str) -> bool {
    let has = |r: &Value, f: &str, v: &str| {
        r[f].as_array()
            .is_some_and(|l| l.iter().any(|x| x == v || x == "*"))
    };
    rules.iter().any(|r| {
        has(r, "apiGroups", group) && has(r, "resources", resource) && has(r, "verbs", verb)
    })
}

#[tokio::test]
async fn the_aggregated_bootstrap_roles_grant_what_they_grant_in_a_cluster() {
    let users = ["viewer", "editor", "boss"];
    let server = rbac_server(&users, kubefake::AuthorizationMode::Rbac).await;
    for (user, role) in [("viewer", "view"), ("editor", "edit"), ("boss", "admin")] {
        let binding = role_binding(user, user, "ClusterRole", role);
        admin_create(&server, BINDINGS, binding).await;
    }
    let view = cluster_role_rules(&server, "view").await;
    assert!(grants(&view, "", "configmaps", "list"), "{view:?}");
    assert!(
        !grants(&view, "", "secrets", "get"),
        "view does not read secrets"
    );
    let admin = cluster_role_rules(&server, "admin").await;
    assert!(grants(&admin, GROUP, "roles", "create"), "{admin:?}");

    let (status, body) = call(&server, "viewer", "GET", CONFIGMAPS, None).await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = call(&server, "viewer", "POST", CONFIGMAPS, Some(&configmap("c"))).await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(
        body["message"],
        "configmaps is forbidden: User \"viewer\" cannot create resource \"configmaps\" in API group \"\" in the namespace \"team\""
    );
    let (status, _) = call(
        &server,
        "viewer",
        "GET",
        "/api/v1/namespaces/default/configmaps",
        None,
    )
    .await;
    assert_eq!(status, 403, "bound in team only");
    let (status, _) = call(
        &server,
        "viewer",
        "GET",
        "/api/v1/namespaces/team/secrets",
        None,
    )
    .await;
    assert_eq!(status, 403);

    let (status, body) = call(&server, "editor", "POST", CONFIGMAPS, Some(&configmap("c"))).await;
    assert_eq!(status, 201, "{body}");
    let (status, _) = call(
        &server,
        "editor",
        "GET",
        "/api/v1/namespaces/team/secrets",
        None,
    )
    .await;
    assert_eq!(status, 200, "edit reads secrets");
    let role = json!({"metadata": {"name": "r"}, "rules": []});
    let (status, _) = call(&server, "editor", "POST", ROLES, Some(&role)).await;
    assert_eq!(status, 403, "edit does not write roles");

    // admin writes roles and bindings, granting what admin holds.
    let role = json!({"metadata": {"name": "cm-reader"},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}]});
    let (status, body) = call(&server, "boss", "POST", ROLES, Some(&role)).await;
    assert_eq!(status, 201, "{body}");
    let binding = role_binding("cm-readers", "someone", "Role", "cm-reader");
    let (status, body) = call(&server, "boss", "POST", BINDINGS, Some(&binding)).await;
    assert_eq!(status, 201, "{body}");
}

#[tokio::test]
async fn a_cluster_role_labelled_to_aggregate_extends_view_at_once() {
    let server = rbac_server(&["viewer"], kubefake::AuthorizationMode::Rbac).await;
    admin_create(
        &server,
        BINDINGS,
        role_binding("viewer", "viewer", "ClusterRole", "view"),
    )
    .await;
    let crontabs = "/apis/stable.example.com/v1/namespaces/team/crontabs";
    server.install_crontab_crd().await;
    let (status, _) = call(&server, "viewer", "GET", crontabs, None).await;
    assert_eq!(status, 403, "view knows nothing of crontabs yet");

    let api: Api<ClusterRole> = Api::all(server.client.clone());
    let params = WatchParams::default().fields("metadata.name=view");
    let rv = server.rv().to_string();
    let mut watch = api.watch(&params, &rv).await.expect("watch").boxed();
    let extension = json!({"metadata": {"name": "crontab-viewer",
            "labels": {"rbac.authorization.k8s.io/aggregate-to-view": "true"}},
        "rules": [{"apiGroups": ["stable.example.com"], "resources": ["crontabs"],
            "verbs": ["get", "list", "watch"]}]});
    admin_create(&server, CLUSTER_ROLES, extension).await;

    let view = cluster_role_rules(&server, "view").await;
    assert!(
        grants(&view, "stable.example.com", "crontabs", "list"),
        "{view:?}"
    );
    for role in ["edit", "admin"] {
        let rules = cluster_role_rules(&server, role).await;
        assert!(
            grants(&rules, "stable.example.com", "crontabs", "list"),
            "{role} aggregates view"
        );
    }
    let (status, body) = call(&server, "viewer", "GET", crontabs, None).await;
    assert_eq!(status, 200, "{body}");
    match watch.next().await {
        Some(Ok(WatchEvent::Modified(role))) => {
            let managers: Vec<_> = role.metadata.managed_fields.unwrap_or_default();
            let by_controller = managers
                .iter()
                .find(|m| m.manager.as_deref() == Some("clusterrole-aggregation-controller"));
            assert_eq!(
                by_controller.and_then(|m| m.operation.as_deref()),
                Some("Apply")
            );
        }
        other => panic!("expected view MODIFIED, got {other:?}"),
    }

    let (status, _) = server
        .send(
            server
                .http
                .delete(server.url(&format!("{CLUSTER_ROLES}/crontab-viewer"))),
        )
        .await;
    assert_eq!(status, 200);
    let view = cluster_role_rules(&server, "view").await;
    assert!(
        !grants(&view, "stable.example.com", "crontabs", "list"),
        "removed with its source"
    );
    let (status, _) = call(&server, "viewer", "GET", crontabs, None).await;
    assert_eq!(status, 403);
}

const NOT_HELD: &str = "is attempting to grant RBAC permissions not currently held:\n";

#[tokio::test]
async fn roles_grant_only_what_their_writer_holds_unless_it_may_escalate() {
    let server = rbac_server(&["maker"], kubefake::AuthorizationMode::Rbac).await;
    let role_maker = json!({"metadata": {"name": "role-maker"}, "rules": [
        {"apiGroups": [GROUP], "resources": ["roles"], "verbs": ["create", "update"]},
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}]});
    admin_create(&server, ROLES, role_maker).await;
    admin_create(
        &server,
        BINDINGS,
        role_binding("maker", "maker", "Role", "role-maker"),
    )
    .await;

    let held = json!({"metadata": {"name": "cm-reader"},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]});
    let (status, body) = call(&server, "maker", "POST", ROLES, Some(&held)).await;
    assert_eq!(status, 201, "{body}");

    let secrets = json!({"metadata": {"name": "secrets"}, "rules": [
        {"apiGroups": [""], "resources": ["secrets", "configmaps"], "verbs": ["get", "create"]}]});
    let before = server.rv();
    let (status, body) = call(&server, "maker", "POST", ROLES, Some(&secrets)).await;
    assert_eq!(status, 403, "{body}");
    let want = format!(
        "roles.rbac.authorization.k8s.io \"secrets\" is forbidden: user \"maker\" (groups=[\"system:authenticated\"]) {NOT_HELD}\
         {{APIGroups:[\"\"], Resources:[\"configmaps\"], Verbs:[\"create\"]}}\n\
         {{APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"get\" \"create\"]}}"
    );
    assert_eq!(body["message"], want);
    assert_eq!(body["reason"], "Forbidden");
    assert_eq!(
        body["details"],
        json!({"name": "secrets", "group": GROUP, "kind": "roles"})
    );
    assert_eq!(server.rv(), before, "nothing stored");

    // Updating a role to grant more is an escalation too.
    let mut wider = held.clone();
    wider["rules"][0]["verbs"] = json!(["get", "delete"]);
    let path = format!("{ROLES}/cm-reader");
    let (status, body) = call(&server, "maker", "PUT", &path, Some(&wider)).await;
    assert_eq!(status, 403, "{body}");

    // With `escalate` on roles, anything goes.
    let escalate = json!({"metadata": {"name": "escalator"}, "rules": [
        {"apiGroups": [GROUP], "resources": ["roles"], "verbs": ["escalate"]}]});
    admin_create(&server, ROLES, escalate).await;
    admin_create(
        &server,
        BINDINGS,
        role_binding("escalator", "maker", "Role", "escalator"),
    )
    .await;
    let (status, body) = call(&server, "maker", "POST", ROLES, Some(&secrets)).await;
    assert_eq!(status, 201, "{body}");
    let (status, body) = call(&server, "maker", "PUT", &path, Some(&wider)).await;
    assert_eq!(status, 200, "{body}");
}

#[tokio::test]
async fn aggregation_rules_need_every_permission() {
    let server = rbac_server(&["maker"], kubefake::AuthorizationMode::Rbac).await;
    let makes = json!({"metadata": {"name": "cluster-role-maker"}, "rules": [
        {"apiGroups": [GROUP], "resources": ["clusterroles"], "verbs": ["create"]}]});
    admin_create(&server, CLUSTER_ROLES, makes).await;
    let binding = json!({"metadata": {"name": "maker"},
        "roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": "cluster-role-maker"},
        "subjects": [{"kind": "User", "apiGroup": GROUP, "name": "maker"}]});
    admin_create(
        &server,
        "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
        binding,
    )
    .await;
    let aggregated = json!({"metadata": {"name": "mine"},
        "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"mine": "true"}}]}});
    let (status, body) = call(&server, "maker", "POST", CLUSTER_ROLES, Some(&aggregated)).await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(
        body["message"],
        "clusterroles.rbac.authorization.k8s.io \"mine\" is forbidden: must have cluster-admin privileges to use the aggregationRule"
    );
}

#[tokio::test]
async fn binding_needs_bind_or_the_roles_permissions() {
    let server = rbac_server(&["binder"], kubefake::AuthorizationMode::Rbac).await;
    let binder = json!({"metadata": {"name": "binder"}, "rules": [
        {"apiGroups": [GROUP], "resources": ["rolebindings"], "verbs": ["create"]},
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch"]}]});
    admin_create(&server, ROLES, binder).await;
    admin_create(
        &server,
        BINDINGS,
        role_binding("binder", "binder", "Role", "binder"),
    )
    .await;
    let cm_reader = json!({"metadata": {"name": "cm-reader"},
        "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]}]});
    admin_create(&server, ROLES, cm_reader).await;

    // The binder holds every rule of cm-reader.
    let held = role_binding("readers", "someone", "Role", "cm-reader");
    let (status, body) = call(&server, "binder", "POST", BINDINGS, Some(&held)).await;
    assert_eq!(status, 201, "{body}");

    // Not those of edit.
    let edit = role_binding("editors", "someone", "ClusterRole", "edit");
    let (status, body) = call(&server, "binder", "POST", BINDINGS, Some(&edit)).await;
    assert_eq!(status, 403, "{body}");
    let msg = body["message"].as_str().unwrap_or("");
    let head = format!(
        "rolebindings.rbac.authorization.k8s.io \"editors\" is forbidden: user \"binder\" (groups=[\"system:authenticated\"]) {NOT_HELD}"
    );
    assert!(msg.starts_with(&head), "{msg}");
    // Missing rules are broken down, merged per resource in edit's order, sorted.
    let lines = [
        r#"{APIGroups:[""], Resources:["configmaps"], Verbs:["create" "delete" "deletecollection" "patch" "update"]}"#,
        r#"{APIGroups:[""], Resources:["secrets"], Verbs:["get" "list" "watch" "create" "delete" "deletecollection" "patch" "update"]}"#,
    ];
    for line in lines {
        assert!(msg.contains(&format!("\n{line}\n")), "{msg}");
    }
    assert!(
        !msg.contains("Resources:[\"configmaps\"], Verbs:[\"get"),
        "held: {msg}"
    );

    // A role that does not exist is the registry's 404.
    let missing = role_binding("nobody", "someone", "Role", "missing");
    let (status, body) = call(&server, "binder", "POST", BINDINGS, Some(&missing)).await;
    assert_eq!(status, 404, "{body}");
    assert_eq!(
        body["message"],
        "roles.rbac.authorization.k8s.io \"missing\" not found"
    );

    // `bind` on that ClusterRole, by name, is enough.
    let may_bind = json!({"metadata": {"name": "bind-edit"}, "rules": [
        {"apiGroups": [GROUP], "resources": ["clusterroles"], "verbs": ["bind"], "resourceNames": ["edit"]}]});
    admin_create(&server, ROLES, may_bind).await;
    admin_create(
        &server,
        BINDINGS,
        role_binding("bind-edit", "binder", "Role", "bind-edit"),
    )
    .await;
    let (status, body) = call(&server, "binder", "POST", BINDINGS, Some(&edit)).await;
    assert_eq!(status, 201, "{body}");
    let admin = role_binding("admins", "someone", "ClusterRole", "admin");
    let (status, _) = call(&server, "binder", "POST", BINDINGS, Some(&admin)).await;
    assert_eq!(status, 403, "bind names edit only");
}

#[tokio::test]
async fn always_allow_aggregates_and_refuses_no_grant() {
    let server = rbac_server(&["nobody"], kubefake::AuthorizationMode::AlwaysAllow).await;
    let aggregated = json!({"metadata": {"name": "monitoring"},
        "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"monitoring": "true"}}]}});
    let (status, body) = call(&server, "nobody", "POST", CLUSTER_ROLES, Some(&aggregated)).await;
    assert_eq!(status, 201, "{body}");
    let source = json!({"metadata": {"name": "monitoring-pods", "labels": {"monitoring": "true"}},
        "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]}]});
    let (status, body) = call(&server, "nobody", "POST", CLUSTER_ROLES, Some(&source)).await;
    assert_eq!(status, 201, "{body}");
    let rules = cluster_role_rules(&server, "monitoring").await;
    assert_eq!(
        rules,
        [json!({"apiGroups": [""], "resources": ["pods"], "verbs": ["get"]})]
    );

    let everything = json!({"metadata": {"name": "everything"},
        "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]});
    let (status, body) = call(&server, "nobody", "POST", CLUSTER_ROLES, Some(&everything)).await;
    assert_eq!(status, 201, "{body}");
    let binding = json!({"metadata": {"name": "me"},
        "roleRef": {"apiGroup": GROUP, "kind": "ClusterRole", "name": "everything"},
        "subjects": [{"kind": "User", "apiGroup": GROUP, "name": "nobody"}]});
    let path = "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings";
    let (status, body) = call(&server, "nobody", "POST", path, Some(&binding)).await;
    assert_eq!(status, 201, "{body}");
}
