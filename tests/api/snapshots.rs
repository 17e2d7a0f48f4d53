//! Snapshots, restore, reset and the state dump (`/kubefake/v1/`, `ServerHandle`): objects come
//! back, the resourceVersion goes on forward, watchers see the difference, discovery follows
//! the restored CRDs, allocations and controllers follow the restored objects.

use std::collections::BTreeSet;
use std::time::Duration;

use futures_util::StreamExt;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use rstest::rstest;
use serde_json::{json, Value};

use crate::harness::{server, server_with, token_http, TestServer};

fn configmap(name: &str, value: &str) -> ConfigMap {
    serde_json::from_value(json!({"metadata": {"name": name}, "data": {"v": value}}))
        .expect("configmap")
}

async fn create_cm(api: &Api<ConfigMap>, name: &str, value: &str) {
    api.create(&PostParams::default(), &configmap(name, value))
        .await
        .expect("create");
}

async fn set_cm(api: &Api<ConfigMap>, name: &str, value: &str) {
    let patch = Patch::Merge(json!({"data": {"v": value}}));
    api.patch(name, &PatchParams::default(), &patch)
        .await
        .expect("patch");
}

async fn cm_values(api: &Api<ConfigMap>) -> Vec<(String, String)> {
    let list = api.list(&Default::default()).await.expect("list");
    list.items
        .into_iter()
        .filter(|cm| cm.metadata.name.as_deref() != Some("kube-root-ca.crt"))
        .map(|cm| {
            let name = cm.metadata.name.unwrap_or_default();
            let v = cm
                .data
                .and_then(|d| d.get("v").cloned())
                .unwrap_or_default();
            (name, v)
        })
        .collect()
}

/// Every object as (resource, namespace, name): what a dump lists.
fn identities(yaml: &str) -> BTreeSet<(String, String, String)> {
    let docs: Vec<Value> = serde_saphyr::from_multiple(yaml).expect("dump is YAML");
    docs.iter()
        .map(|d| {
            let meta = &d["metadata"];
            let text = |v: &Value| v.as_str().unwrap_or("").to_string();
            (
                text(&d["kind"]),
                text(&meta["namespace"]),
                text(&meta["name"]),
            )
        })
        .collect()
}

#[rstest]
#[tokio::test]
async fn restore_brings_back_every_object_and_the_resource_version_goes_on(
    #[future(awt)] server: TestServer,
) {
    let api: Api<ConfigMap> = Api::namespaced(server.client.clone(), "default");
    create_cm(&api, "kept", "1").await;
    create_cm(&api, "changed", "1").await;
    create_cm(&api, "removed", "1").await;
    let id = server.handle.snapshot().expect("snapshot");
    set_cm(&api, "changed", "2").await;
    create_cm(&api, "added", "1").await;
    api.delete("removed", &DeleteParams::default())
        .await
        .expect("delete");
    let before = server.rv();

    let restored = server.handle.restore(&id).await.expect("restore");

    assert_eq!(
        restored.changes, 3,
        "added removed, changed and removed back"
    );
    assert_eq!(restored.resource_version, before + 3);
    assert_eq!(
        cm_values(&api).await,
        [("changed", "1"), ("kept", "1"), ("removed", "1")]
            .map(|(n, v)| (n.to_string(), v.to_string()))
    );
    let back = api.get("removed").await.expect("get");
    let rv: u64 = back
        .metadata
        .resource_version
        .expect("rv")
        .parse()
        .expect("number");
    assert!(rv > before, "restored objects take new resourceVersions");
    set_cm(&api, "removed", "3").await;
    assert_eq!(
        server.handle.restore(&id).await.expect("again").changes,
        1,
        "only what changed since is written again"
    );
}

#[rstest]
#[tokio::test]
async fn a_watcher_sees_the_difference_of_a_restore(#[future(awt)] server: TestServer) {
    let api: Api<ConfigMap> = Api::namespaced(server.client.clone(), "default");
    create_cm(&api, "changed", "1").await;
    create_cm(&api, "removed", "1").await;
    let (status, body) = server.post("/kubefake/v1/snapshots", &json!({})).await;
    assert_eq!(status, 201, "{body}");
    let id = body["id"].as_str().expect("id").to_string();
    set_cm(&api, "changed", "2").await;
    create_cm(&api, "added", "1").await;
    api.delete("removed", &DeleteParams::default())
        .await
        .expect("delete");
    let from = server.rv().to_string();
    let mut events = api
        .watch(&WatchParams::default(), &from)
        .await
        .expect("watch")
        .boxed();

    let path = format!("/kubefake/v1/snapshots/{id}/restore");
    let (status, body) = server.post(&path, &json!({})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["changes"], 3);

    let mut seen = Vec::new();
    while seen.len() < 3 {
        let event = tokio::time::timeout(Duration::from_secs(10), events.next()).await;
        let (kind, cm) = match event.expect("an event in time") {
            Some(Ok(WatchEvent::Added(cm))) => ("ADDED", cm),
            Some(Ok(WatchEvent::Modified(cm))) => ("MODIFIED", cm),
            Some(Ok(WatchEvent::Deleted(cm))) => ("DELETED", cm),
            Some(Ok(WatchEvent::Bookmark(_))) => continue,
            other => panic!("unexpected {other:?}"),
        };
        let v = cm
            .data
            .and_then(|d| d.get("v").cloned())
            .unwrap_or_default();
        seen.push((kind, cm.metadata.name.unwrap_or_default(), v));
    }
    let expected = [
        ("DELETED", "added", "1"),
        ("MODIFIED", "changed", "1"),
        ("ADDED", "removed", "1"),
    ];
    assert_eq!(
        seen,
        expected.map(|(k, n, v)| (k, n.to_string(), v.to_string()))
    );
    assert_eq!(body["resourceVersion"], server.rv().to_string());
}

#[rstest]
#[tokio::test]
async fn discovery_follows_the_crds_of_a_restore(#[future(awt)] server: TestServer) {
    let without = server.handle.snapshot().expect("snapshot");
    server.install_crontab_crd().await;
    server.create_crontab("default", "nightly").await;
    let with = server.handle.snapshot().expect("snapshot");
    let group = "/apis/stable.example.com/v1";

    server.handle.restore(&without).await.expect("restore");
    assert_eq!(
        server.get(group).await.0,
        404,
        "a CRD created since is gone"
    );
    let (_, apis) = server.get("/apis").await;
    assert!(!apis.to_string().contains("stable.example.com"), "{apis}");

    server.handle.restore(&with).await.expect("restore");
    let (status, doc) = server.get(group).await;
    assert_eq!(status, 200, "a CRD deleted since is served again");
    assert!(doc.to_string().contains("crontabs"), "{doc}");
    let ct = server
        .crontabs("default")
        .get("nightly")
        .await
        .expect("get");
    assert_eq!(ct.spec.image, "my-awesome-cron-image");
}

#[tokio::test]
async fn reset_returns_to_the_start_state_with_the_preloaded_objects() {
    let dir = env!("CARGO_MANIFEST_DIR");
    let builder = kubefake::Server::builder()
        .crds(format!("{dir}/fixtures/crds"))
        .objects(format!("{dir}/fixtures/objects/my-crontab.yaml"));
    let server = server_with(builder).await;
    let start = identities(&server.handle.dump());
    assert!(start.contains(&(
        "CronTab".into(),
        "default".into(),
        "my-new-cron-object".into()
    )));

    let namespaces: Api<Namespace> = Api::all(server.client.clone());
    let ns = serde_json::from_value(json!({"metadata": {"name": "scratch"}})).expect("ns");
    namespaces
        .create(&PostParams::default(), &ns)
        .await
        .expect("ns");
    let api: Api<ConfigMap> = Api::namespaced(server.client.clone(), "scratch");
    create_cm(&api, "leftover", "1").await;
    server
        .crontabs("default")
        .delete("my-new-cron-object", &DeleteParams::default())
        .await
        .expect("delete");
    let before = server.rv();
    let faults = server.handle.faults().expect("a kubefake server");
    faults
        .add(kubefake::Fault::new().resource("leases").status(503))
        .expect("a fault");
    let snapshot = server.handle.snapshot().expect("snapshot");
    server.handle.restore(&snapshot).await.expect("restore");
    assert_eq!(faults.list().len(), 1, "a restore leaves the fault rules");
    let log = server.handle.requests().expect("a kubefake server");
    assert!(
        !log.entries().is_empty(),
        "a restore leaves the request log"
    );

    let (status, body) = server.post("/kubefake/v1/reset", &json!({})).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(faults.list(), vec![], "a reset removes the fault rules");
    assert_eq!(log.entries(), vec![], "and clears the request log");
    assert_eq!(identities(&server.handle.dump()), start);
    assert!(server.rv() > before);
    let ct = server.crontabs("default").get("my-new-cron-object").await;
    assert!(ct.is_ok(), "the preloaded object is back");
    let again = server.handle.reset().await.expect("reset");
    assert_eq!(
        again.changes, 0,
        "a reset of the start state changes nothing"
    );
}

#[rstest]
#[tokio::test]
async fn a_namespace_deleted_since_comes_back_with_its_content(#[future(awt)] server: TestServer) {
    let namespaces: Api<Namespace> = Api::all(server.client.clone());
    let ns = serde_json::from_value(json!({"metadata": {"name": "team"}})).expect("ns");
    namespaces
        .create(&PostParams::default(), &ns)
        .await
        .expect("ns");
    let api: Api<ConfigMap> = Api::namespaced(server.client.clone(), "team");
    create_cm(&api, "settings", "1").await;
    let id = server.handle.snapshot().expect("snapshot");
    namespaces
        .delete("team", &DeleteParams::default())
        .await
        .expect("delete");
    assert!(namespaces.get_opt("team").await.expect("get").is_none());

    server.handle.restore(&id).await.expect("restore");
    let team = namespaces.get("team").await.expect("team is back");
    let phase = team.status.and_then(|s| s.phase);
    assert_eq!(phase.as_deref(), Some("Active"));
    assert_eq!(cm_values(&api).await, [("settings".into(), "1".into())]);
    let accounts = server
        .get("/api/v1/namespaces/team/serviceaccounts/default")
        .await;
    assert_eq!(accounts.0, 200, "what the controllers made is back too");
    create_cm(&api, "more", "1").await;
}

#[rstest]
#[tokio::test]
async fn cluster_ips_follow_the_restored_services(#[future(awt)] server: TestServer) {
    let services = "/api/v1/namespaces/default/services";
    let service = |name: &str, ip: Option<&str>| {
        let mut spec = json!({"ports": [{"port": 80}]});
        if let Some(ip) = ip {
            spec["clusterIP"] = json!(ip);
        }
        json!({"metadata": {"name": name}, "spec": spec})
    };
    let id = server.handle.snapshot().expect("snapshot");
    let (status, first) = server.post(services, &service("first", None)).await;
    assert_eq!(status, 201, "{first}");
    let ip = first["spec"]["clusterIP"].as_str().expect("ip").to_string();
    let (status, _) = server.post(services, &service("taken", Some(&ip))).await;
    assert_eq!(status, 422, "the IP is allocated");

    server.handle.restore(&id).await.expect("restore");
    let (status, second) = server.post(services, &service("second", Some(&ip))).await;
    assert_eq!(status, 201, "the IP is free again: {second}");
}

#[tokio::test]
async fn reset_clears_what_the_simulated_cluster_made() {
    let server = server_with(kubefake::Server::builder().simulate(true)).await;
    let deployments = "/apis/apps/v1/namespaces/default/deployments";
    let pods = "/api/v1/namespaces/default/pods";
    let deployment = json!({"metadata": {"name": "web"}, "spec": {"replicas": 2,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]}}}});
    let (status, body) = server.post(deployments, &deployment).await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(
        server.get(pods).await.1["items"].as_array().map(Vec::len),
        Some(2)
    );

    server.handle.reset().await.expect("reset");
    assert_eq!(server.get(pods).await.1["items"], json!([]));
    let (_, nodes) = server.get("/api/v1/nodes").await;
    assert_eq!(
        nodes["items"].as_array().map(Vec::len),
        Some(3),
        "nodes stay"
    );
    let (status, body) = server.post(deployments, &deployment).await;
    assert_eq!(status, 201, "the same Deployment again: {body}");
    assert_eq!(
        server.get(pods).await.1["items"].as_array().map(Vec::len),
        Some(2)
    );
}

#[rstest]
#[tokio::test]
async fn the_dump_is_yaml_of_the_objects_a_filter_keeps(#[future(awt)] server: TestServer) {
    let api: Api<ConfigMap> = Api::namespaced(server.client.clone(), "default");
    create_cm(&api, "settings", "1").await;
    let resp = server
        .http
        .get(server.url("/kubefake/v1/dump?namespace=default&resource=configmaps"))
        .send()
        .await
        .expect("dump");
    assert_eq!(resp.status(), 200);
    let content_type = resp.headers()["content-type"].to_str().expect("ascii");
    assert_eq!(content_type, "application/yaml");
    let yaml = resp.text().await.expect("body");
    let expected: BTreeSet<_> = ["kube-root-ca.crt", "settings"]
        .map(|n| {
            (
                "ConfigMap".to_string(),
                "default".to_string(),
                n.to_string(),
            )
        })
        .into();
    assert_eq!(identities(&yaml), expected);
    assert!(!yaml.contains("managedFields"), "as kubectl get -o yaml");
    let all = identities(&server.handle.dump());
    assert!(all.contains(&("Namespace".into(), String::new(), "kube-system".into())));
    assert!(all.len() > expected.len());
}

#[rstest]
#[case::unknown_snapshot("POST", "/kubefake/v1/snapshots/nope/restore", 404, "NotFound")]
#[case::forget_unknown("DELETE", "/kubefake/v1/snapshots/nope", 404, "NotFound")]
#[case::unknown_route("GET", "/kubefake/v1/nothing", 404, "NotFound")]
#[case::wrong_method("GET", "/kubefake/v1/reset", 405, "MethodNotAllowed")]
#[case::wrong_method_with_an_id("POST", "/kubefake/v1/faults/fault-1", 405, "MethodNotAllowed")]
#[case::too_long("POST", "/kubefake/v1/reset/more", 404, "NotFound")]
#[tokio::test]
async fn mistakes_are_answered_with_a_status(
    #[future(awt)] server: TestServer,
    #[case] method: &str,
    #[case] path: &str,
    #[case] code: u16,
    #[case] reason: &str,
) {
    let method = reqwest::Method::from_bytes(method.as_bytes()).expect("method");
    let (status, body) = server
        .send(server.http.request(method, server.url(path)))
        .await;
    assert_eq!(status, code, "{body}");
    assert_eq!(body["kind"], "Status");
    assert_eq!(body["reason"], reason);
}

#[rstest]
#[tokio::test]
async fn a_snapshot_can_be_forgotten(#[future(awt)] server: TestServer) {
    let (_, body) = server.post("/kubefake/v1/snapshots", &json!({})).await;
    let id = body["id"].as_str().expect("id");
    let path = format!("/kubefake/v1/snapshots/{id}");
    let (status, _) = server.send(server.http.delete(server.url(&path))).await;
    assert_eq!(status, 200);
    let restore = format!("{path}/restore");
    assert_eq!(server.post(&restore, &json!({})).await.0, 404);
}

#[tokio::test]
async fn under_rbac_only_the_privileged_group_may_use_it() {
    let server = crate::harness::rbac_server_with_user(
        "admin-by-role",
        &["system:authenticated"],
        "user-token",
    )
    .await;
    let binding = json!({"metadata": {"name": "admin-by-role"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                    "name": "cluster-admin"},
        "subjects": [{"kind": "User", "name": "admin-by-role",
                      "apiGroup": "rbac.authorization.k8s.io"}]});
    let bindings = "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings";
    assert_eq!(server.post(bindings, &binding).await.0, 201);
    let client = token_http(&server.handle, "Bearer user-token");
    let url = server.url("/kubefake/v1/reset");
    let (status, body) = server.send(client.post(url.clone())).await;
    assert_eq!(status, 403, "{body}");
    assert_eq!(body["reason"], "Forbidden");
    let (status, body) = server
        .send(client.get(server.url("/kubefake/v1/dump")))
        .await;
    assert_eq!(status, 403, "{body}");
    let (status, body) = server.send(server.http.post(url)).await;
    assert_eq!(status, 200, "the kubeconfig's admin may: {body}");
}

/// A failing test's dump ends with the last requests of the request log.
#[rstest]
#[tokio::test]
async fn a_failing_tests_dump_shows_the_last_requests(#[future(awt)] server: TestServer) {
    let (status, _) = server
        .get("/api/v1/namespaces/default/configmaps/missing")
        .await;
    assert_eq!(status, 404);
    let printed = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let sink = printed.clone();
    let state = server.handle.state().expect("a kubefake server").clone();
    let failing = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || {
        let _dump = kubefake::tooling::dump::DumpOnPanic::with_sink(state, move |text| {
            if let Ok(mut p) = sink.lock() {
                p.push_str(text);
            }
        });
        panic!("the test failed");
    }));
    assert!(failing.is_err());
    let printed = printed.lock().map(|p| p.clone()).unwrap_or_default();
    let requests = printed
        .split("---- kubefake requests ----\n")
        .nth(1)
        .unwrap_or_default();
    assert!(
        requests.contains("GET /api/v1/namespaces/default/configmaps/missing -> 404"),
        "{printed}"
    );
}
