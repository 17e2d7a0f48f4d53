//! policy/v1 PodDisruptionBudgets through kube-rs's typed API: the exclusive bounds, percents,
//! selectors, the reset and kept status, the status subresource, conditional updates, Tables,
//! patches, apply and protobuf.

use futures_util::StreamExt;
use k8s_openapi::api::policy::v1::PodDisruptionBudget;
use kube::api::{
    Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use rstest::rstest;
use serde_json::json;

use crate::harness::{api_error, server, TestServer};
use crate::rbac::{protobuf, table, typed};

const PATH: &str = "/apis/policy/v1/namespaces/default/poddisruptionbudgets";

fn pdb(name: &str, min_available: serde_json::Value) -> PodDisruptionBudget {
    typed(
        json!({"metadata": {"name": name}, "spec": {"minAvailable": min_available,
        "selector": {"matchLabels": {"app": "zookeeper"}}}}),
    )
}

#[rstest]
#[tokio::test]
async fn crud_watch_status_and_generation(#[future(awt)] server: TestServer) {
    let api: Api<PodDisruptionBudget> = Api::namespaced(server.client.clone(), "default");
    let mut sent = pdb("zk", json!(2));
    sent.status = typed(
        json!({"currentHealthy": 3, "desiredHealthy": 2, "disruptionsAllowed": 1, "expectedPods": 3}),
    );
    let created = api
        .create(&PostParams::default(), &sent)
        .await
        .expect("create");
    let status = created.status.clone().expect("an empty status");
    assert_eq!(
        (status.current_healthy, status.disruptions_allowed),
        (Some(0), Some(0))
    );
    assert_eq!(created.metadata.generation, Some(1));
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

    let counted = api
        .patch_status(
            "zk",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"currentHealthy": 3, "desiredHealthy": 2,
                "disruptionsAllowed": 1, "expectedPods": 3, "observedGeneration": 1}})),
        )
        .await
        .expect("status");
    assert_eq!(counted.status.and_then(|s| s.disruptions_allowed), Some(1));
    match watch.next().await {
        Some(Ok(WatchEvent::Modified(p))) => {
            assert_eq!(p.status.and_then(|s| s.current_healthy), Some(3))
        }
        other => panic!("expected MODIFIED, got {other:?}"),
    }
    let err = api_error(
        api.patch_status(
            "zk",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"disruptionsAllowed": -1}})),
        )
        .await
        .expect_err("negative"),
    );
    assert_eq!(
        err.message,
        "PodDisruptionBudget.policy \"zk\" is invalid: status.disruptionsAllowed: Invalid value: -1: must be greater than or equal to 0"
    );

    let raised = api
        .patch(
            "zk",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"minAvailable": "50%"}})),
        )
        .await
        .expect("spec patch");
    assert_eq!(raised.metadata.generation, Some(2));
    assert_eq!(
        raised.status.and_then(|s| s.current_healthy),
        Some(3),
        "kept"
    );

    let mut stale = created.clone();
    stale.metadata.resource_version = None;
    let err = api_error(
        api.replace("zk", &PostParams::default(), &stale)
            .await
            .expect_err("updates must name a resourceVersion"),
    );
    assert_eq!(err.code, 422);
    assert!(
        err.message.starts_with("poddisruptionbudgets.policy \"zk\" is invalid: metadata.resourceVersion: Invalid value: ")
            && err.message.ends_with(": must be specified for an update"),
        "{}",
        err.message
    );
    api.delete("zk", &DeleteParams::default())
        .await
        .expect("delete");
    assert_eq!(api_error(api.get("zk").await.expect_err("gone")).code, 404);
}

#[rstest]
#[tokio::test]
async fn validation_as_the_apiserver_words_it(#[future(awt)] server: TestServer) {
    let api: Api<PodDisruptionBudget> = Api::namespaced(server.client.clone(), "default");
    let rv = server.rv();
    let both: PodDisruptionBudget = typed(json!({"metadata": {"name": "both"},
        "spec": {"minAvailable": 1, "maxUnavailable": "150%",
            "selector": {"matchLabels": {"app": "web"}}}}));
    let err = api_error(
        api.create(&PostParams::default(), &both)
            .await
            .expect_err("exclusive"),
    );
    assert_eq!(
        err.message,
        "PodDisruptionBudget.policy \"both\" is invalid: [spec: Invalid value: {\"MinAvailable\":1,\"Selector\":{\"matchLabels\":{\"app\":\"web\"}},\"MaxUnavailable\":\"150%\",\"UnhealthyPodEvictionPolicy\":null}: minAvailable and maxUnavailable cannot be both set, spec.maxUnavailable: Invalid value: \"150%\": must not be greater than 100%]"
    );
    assert_eq!(server.rv(), rv, "a rejected create changes nothing");

    let named = api
        .create(&PostParams::default(), &pdb("Zoo_Keeper", json!("25%")))
        .await
        .expect("names are only path segments");
    assert_eq!(named.metadata.name.as_deref(), Some("Zoo_Keeper"));
}

#[rstest]
#[tokio::test]
async fn tables_selectors_patches_apply_and_protobuf(#[future(awt)] server: TestServer) {
    let api: Api<PodDisruptionBudget> = Api::namespaced(server.client.clone(), "default");
    api.create(&PostParams::default(), &pdb("zk", json!("50%")))
        .await
        .expect("create");
    let (columns, t) = table(&server, PATH).await;
    assert_eq!(
        columns,
        [
            "Name",
            "Min Available",
            "Max Unavailable",
            "Allowed Disruptions",
            "Age"
        ]
    );
    let cells = &t["rows"][0]["cells"];
    assert_eq!(cells[1], "50%");
    assert_eq!(cells[2], "N/A");
    assert_eq!(cells[3], 0);

    let listed = api
        .list(&ListParams::default().fields("metadata.name=zk"))
        .await
        .expect("field selector");
    assert_eq!(listed.items.len(), 1);

    let patched = api
        .patch(
            "zk",
            &PatchParams::default(),
            &Patch::Strategic(json!({"spec": {"minAvailable": null, "maxUnavailable": 1,
                "selector": {"matchLabels": {"tier": "db"}}}})),
        )
        .await
        .expect("strategic merge patch");
    let spec = patched.spec.unwrap_or_default();
    assert!(spec.min_available.is_none());
    let labels = spec
        .selector
        .and_then(|s| s.match_labels)
        .unwrap_or_default();
    // The selector's patch strategy is `replace`: the patch's selector is the new one.
    assert_eq!(labels.into_keys().collect::<Vec<_>>(), ["tier"]);

    let applied = api
        .patch(
            "applied",
            &PatchParams::apply("tester"),
            &Patch::Apply(
                json!({"apiVersion": "policy/v1", "kind": "PodDisruptionBudget",
                "metadata": {"name": "applied"},
                "spec": {"maxUnavailable": 1, "unhealthyPodEvictionPolicy": "AlwaysAllow"}}),
            ),
        )
        .await
        .expect("server-side apply creates");
    assert_eq!(applied.metadata.generation, Some(1));
    let decoded = protobuf(&server, &format!("{PATH}/zk")).await;
    assert_eq!(decoded["kind"], "PodDisruptionBudget");
    assert_eq!(decoded["spec"]["maxUnavailable"], 1);
}
