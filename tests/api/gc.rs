//! Garbage collection by ownerReferences, with each propagation policy.

use kube::api::{Api, DeleteParams, PostParams, PropagationPolicy};
use rstest::rstest;
use serde_json::{json, Value};

use crate::harness::{crontab_crd, server, CronTab, TestServer};

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

fn owner_ref(owner: &CronTab, block: bool) -> Value {
    json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
           "name": owner.metadata.name, "uid": owner.metadata.uid, "blockOwnerDeletion": block})
}

async fn child(
    server: &TestServer,
    name: &str,
    owners: Vec<Value>,
    finalizers: &[&str],
) -> CronTab {
    let body = json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
        "metadata": {"name": name, "ownerReferences": owners, "finalizers": finalizers},
        "spec": {"cronSpec": "x", "image": "i"}});
    let ct: CronTab = serde_json::from_value(body).expect("crontab");
    server
        .crontabs("default")
        .create(&PostParams::default(), &ct)
        .await
        .expect("create child")
}

async fn exists(api: &Api<CronTab>, name: &str) -> bool {
    api.get_opt(name).await.expect("get").is_some()
}

#[rstest]
#[tokio::test]
async fn background_deletion_collects_a_three_level_cascade(#[future(awt)] server: TestServer) {
    server.install_crontab_crd().await;
    let api = server.crontabs("default");
    let root = server.create_crontab("default", "root").await;
    let mid = child(&server, "mid", vec![owner_ref(&root, false)], &[]).await;
    child(&server, "leaf-a", vec![owner_ref(&mid, false)], &[]).await;
    child(&server, "leaf-b", vec![owner_ref(&mid, false)], &[]).await;
    api.delete("root", &DeleteParams::default())
        .await
        .expect("delete");
    for name in ["root", "mid", "leaf-a", "leaf-b"] {
        assert!(!exists(&api, name).await, "{name} collected");
    }
}

#[rstest]
#[tokio::test]
async fn a_dependent_with_another_owner_survives(#[future(awt)] server: TestServer) {
    server.install_crontab_crd().await;
    let api = server.crontabs("default");
    let a = server.create_crontab("default", "a").await;
    let b = server.create_crontab("default", "b").await;
    child(
        &server,
        "shared",
        vec![owner_ref(&a, false), owner_ref(&b, false)],
        &[],
    )
    .await;
    api.delete("a", &DeleteParams::default())
        .await
        .expect("delete");
    let shared = api.get("shared").await.expect("kept while b owns it");
    let owners: Vec<String> = shared
        .metadata
        .owner_references
        .unwrap_or_default()
        .into_iter()
        .map(|o| o.name)
        .collect();
    assert_eq!(owners, ["b"], "the reference to the gone owner is removed");
    api.delete("b", &DeleteParams::default())
        .await
        .expect("delete");
    assert!(!exists(&api, "shared").await);
}

#[rstest]
#[tokio::test]
async fn foreground_deletion_waits_for_blocking_dependents(#[future(awt)] server: TestServer) {
    server.install_crontab_crd().await;
    let api = server.crontabs("default");
    let owner = server.create_crontab("default", "owner").await;
    // A blocking dependent held by its own finalizer keeps the owner around.
    child(
        &server,
        "blocker",
        vec![owner_ref(&owner, true)],
        &["example.com/hold"],
    )
    .await;
    child(&server, "free", vec![owner_ref(&owner, false)], &[]).await;
    let resp = api
        .delete("owner", &DeleteParams::foreground())
        .await
        .expect("delete");
    let marked = resp.left().expect("the owner, marked");
    assert!(marked.metadata.deletion_timestamp.is_some());
    assert!(marked
        .metadata
        .finalizers
        .unwrap_or_default()
        .contains(&"foregroundDeletion".to_string()));

    let owner_now = api.get("owner").await.expect("the owner waits");
    assert!(owner_now
        .metadata
        .finalizers
        .unwrap_or_default()
        .contains(&"foregroundDeletion".to_string()));
    let blocker = api
        .get("blocker")
        .await
        .expect("the blocker is being deleted");
    assert!(blocker.metadata.deletion_timestamp.is_some());

    // Releasing the blocker lets the owner go.
    api.patch(
        "blocker",
        &Default::default(),
        &kube::api::Patch::Merge(json!({"metadata": {"finalizers": null}})),
    )
    .await
    .expect("release");
    assert!(!exists(&api, "blocker").await);
    assert!(
        !exists(&api, "owner").await,
        "the owner goes once no blocking dependent is left"
    );
    assert!(!exists(&api, "free").await);
}

/// With a grace period too: it means nothing to a kind without graceful deletion, which is
/// marked deleting with a grace of 0 (`markAsDeleting`) and goes once the collector has removed
/// the `orphan` finalizer.
#[rstest]
#[case::no_grace(None)]
#[case::grace(Some(30))]
#[tokio::test]
async fn orphan_deletion_keeps_dependents_without_the_reference(
    #[future(awt)] server: TestServer,
    #[case] grace: Option<u32>,
) {
    server.install_crontab_crd().await;
    let api = server.crontabs("default");
    let owner = server.create_crontab("default", "owner").await;
    child(&server, "kept", vec![owner_ref(&owner, true)], &[]).await;
    let dp = DeleteParams {
        propagation_policy: Some(PropagationPolicy::Orphan),
        grace_period_seconds: grace,
        ..Default::default()
    };
    api.delete("owner", &dp).await.expect("delete");
    assert!(!exists(&api, "owner").await);
    let kept = api.get("kept").await.expect("orphaned, not deleted");
    assert!(kept
        .metadata
        .owner_references
        .unwrap_or_default()
        .is_empty());
}

/// A ConfigMap has no graceful deletion either: an Orphan delete with `gracePeriodSeconds: 30`
/// completes.
#[rstest]
#[tokio::test]
async fn orphan_deletion_of_a_configmap_with_a_grace_period_completes(
    #[future(awt)] server: TestServer,
) {
    let dp = DeleteParams {
        propagation_policy: Some(PropagationPolicy::Orphan),
        grace_period_seconds: Some(30),
        ..Default::default()
    };
    let configmaps: Api<k8s_openapi::api::core::v1::ConfigMap> =
        Api::namespaced(server.client.clone(), "default");
    let cm =
        serde_json::from_value(json!({"metadata": {"name": "settings"}})).expect("a ConfigMap");
    configmaps
        .create(&PostParams::default(), &cm)
        .await
        .expect("create");
    configmaps.delete("settings", &dp).await.expect("delete");
    assert!(
        configmaps.get_opt("settings").await.expect("get").is_none(),
        "the ConfigMap is gone"
    );
}

#[rstest]
#[tokio::test]
async fn dependents_of_missing_owners_are_collected(#[future(awt)] server: TestServer) {
    server.install_crontab_crd().await;
    let api = server.crontabs("default");
    let ghost = json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab", "name": "ghost",
                       "uid": "00000000-0000-0000-0000-000000000000"});
    child(&server, "orphan", vec![ghost], &[]).await;
    assert!(
        !exists(&api, "orphan").await,
        "an owner that never existed does not keep it"
    );
    // References to kinds kubefake does not serve are left alone, as the real collector cannot
    // resolve them either.
    let unknown = json!({"apiVersion": "unserved.example.com/v1", "kind": "Widget", "name": "web",
                         "uid": "11111111-1111-1111-1111-111111111111"});
    child(&server, "unresolvable", vec![unknown], &[]).await;
    assert!(exists(&api, "unresolvable").await);
}

#[rstest]
#[tokio::test]
async fn cluster_scoped_owners_and_namespaced_dependents(#[future(awt)] server: TestServer) {
    server.install_crontab_crd().await;
    let mut cluster_crd = crontab_crd();
    cluster_crd["metadata"]["name"] = json!("clustertabs.stable.example.com");
    cluster_crd["spec"]["scope"] = json!("Cluster");
    cluster_crd["spec"]["names"] = json!({"plural": "clustertabs", "kind": "ClusterTab"});
    assert_eq!(server.post(CRDS, &cluster_crd).await.0, 201);
    let (_, owner) = server
        .post("/apis/stable.example.com/v1/clustertabs", &json!({"apiVersion": "stable.example.com/v1", "kind": "ClusterTab", "metadata": {"name": "global"}}))
        .await;
    let cluster_owner = json!({"apiVersion": "stable.example.com/v1", "kind": "ClusterTab",
        "name": "global", "uid": owner["metadata"]["uid"]});
    child(&server, "in-ns", vec![cluster_owner], &[]).await;
    // A namespaced owner of a cluster-scoped dependent is ignored.
    let ns_owner = server.create_crontab("default", "ns-owner").await;
    let (status, _) = server
        .post("/apis/stable.example.com/v1/clustertabs", &json!({"apiVersion": "stable.example.com/v1", "kind": "ClusterTab",
            "metadata": {"name": "invalid-dependent", "ownerReferences": [owner_ref(&ns_owner, false)]}}))
        .await;
    assert_eq!(status, 201);

    let resp = server
        .http
        .delete(server.url("/apis/stable.example.com/v1/clustertabs/global"))
        .send()
        .await
        .expect("delete");
    assert_eq!(resp.status(), 200);
    assert!(!exists(&server.crontabs("default"), "in-ns").await);
    server
        .crontabs("default")
        .delete("ns-owner", &DeleteParams::default())
        .await
        .expect("delete");
    assert_eq!(
        server
            .get("/apis/stable.example.com/v1/clustertabs/invalid-dependent")
            .await
            .0,
        200
    );
}

#[rstest]
#[tokio::test]
async fn watch_events_for_each_step_of_a_foreground_delete(#[future(awt)] server: TestServer) {
    use futures_util::StreamExt;
    use kube::api::{WatchEvent, WatchParams};
    server.install_crontab_crd().await;
    let api = server.crontabs("default");
    let owner = server.create_crontab("default", "owner").await;
    child(&server, "dep", vec![owner_ref(&owner, true)], &[]).await;
    let rv = server.rv().to_string();
    let mut events = api
        .watch(&WatchParams::default(), &rv)
        .await
        .expect("watch")
        .boxed();
    api.delete("owner", &DeleteParams::foreground())
        .await
        .expect("delete");
    let mut seen = Vec::new();
    let collect = async {
        while seen.len() < 3 {
            match events.next().await.expect("event").expect("ok") {
                WatchEvent::Modified(ct) => {
                    seen.push(("MODIFIED", ct.metadata.name.unwrap_or_default()))
                }
                WatchEvent::Deleted(ct) => {
                    seen.push(("DELETED", ct.metadata.name.unwrap_or_default()))
                }
                WatchEvent::Bookmark(_) => {}
                other => panic!("unexpected {other:?}"),
            }
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(10), collect)
        .await
        .expect("the events arrive");
    // Removing the last finalizer of an object being deleted deletes it in the same write, as
    // the apiserver does: no MODIFIED in between.
    assert_eq!(
        seen,
        [
            ("MODIFIED", "owner".to_string()), // deletionTimestamp + foregroundDeletion
            ("DELETED", "dep".to_string()),
            ("DELETED", "owner".to_string()),
        ]
    );
}
