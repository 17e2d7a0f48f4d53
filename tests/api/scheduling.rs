//! scheduling.k8s.io/v1 PriorityClasses through kube-rs's typed API: the two system classes
//! every cluster starts with (undeletable), the reserved `system-` prefix, the value cap, the
//! default preemption policy, immutable value and policy, Tables, patches, apply, protobuf.

use futures_util::StreamExt;
use k8s_openapi::api::scheduling::v1::PriorityClass;
use kube::api::{
    Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use rstest::rstest;
use serde_json::json;

use crate::harness::{api_error, server, TestServer};
use crate::rbac::{protobuf, table, typed};

const PATH: &str = "/apis/scheduling.k8s.io/v1/priorityclasses";

fn class(name: &str, value: i32) -> PriorityClass {
    typed(json!({"metadata": {"name": name}, "value": value, "description": "test"}))
}

#[rstest]
#[tokio::test]
async fn system_classes_exist_and_stay(#[future(awt)] server: TestServer) {
    let api: Api<PriorityClass> = Api::all(server.client.clone());
    let node = api.get("system-node-critical").await.expect("bootstrapped");
    assert_eq!(node.value, Some(2_000_001_000));
    assert_eq!(
        node.preemption_policy.as_deref(),
        Some("PreemptLowerPriority")
    );
    assert_eq!(
        node.description.as_deref(),
        Some("Used for system critical pods that must not be moved from their current node.")
    );
    let cluster = api
        .get("system-cluster-critical")
        .await
        .expect("bootstrapped");
    assert_eq!(cluster.value, Some(2_000_000_000));
    assert_eq!(cluster.global_default, None);

    let err = api_error(
        api.delete("system-node-critical", &DeleteParams::default())
            .await
            .expect_err("system classes stay"),
    );
    assert_eq!(err.code, 403);
    assert_eq!(
        err.message,
        "priorityclasses.scheduling.k8s.io \"system-node-critical\" is forbidden: this is a system priority class and cannot be deleted"
    );
    assert!(api.get("system-node-critical").await.is_ok());

    let err = api_error(
        api.create(&PostParams::default(), &class("system-mine", 5))
            .await
            .expect_err("reserved prefix"),
    );
    assert_eq!(
        err.message,
        "PriorityClass.scheduling.k8s.io \"system-mine\" is invalid: metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-mine is not a known system priority class"
    );
    let err = api_error(
        api.create(&PostParams::default(), &class("too-high", 1_000_000_001))
            .await
            .expect_err("value cap"),
    );
    assert_eq!(
        err.message,
        "PriorityClass.scheduling.k8s.io \"too-high\" is invalid: value: Forbidden: maximum allowed value of a user defined priority is 1000000000"
    );
}

#[rstest]
#[tokio::test]
async fn crud_watch_defaults_and_immutability(#[future(awt)] server: TestServer) {
    let api: Api<PriorityClass> = Api::all(server.client.clone());
    let created = api
        .create(&PostParams::default(), &class("high", 1000))
        .await
        .expect("create");
    assert_eq!(
        created.preemption_policy.as_deref(),
        Some("PreemptLowerPriority")
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

    let mut described = created.clone();
    described.description = Some("for important pods".into());
    let updated = api
        .replace("high", &PostParams::default(), &described)
        .await
        .expect("the description may change");
    assert_eq!(
        updated.metadata.generation,
        Some(1),
        "updates never bump it"
    );
    match watch.next().await {
        Some(Ok(WatchEvent::Modified(pc))) => {
            assert_eq!(pc.description.as_deref(), Some("for important pods"))
        }
        other => panic!("expected MODIFIED, got {other:?}"),
    }

    let mut changed = updated.clone();
    changed.value = Some(2000);
    changed.preemption_policy = Some("Never".into());
    let err = api_error(
        api.replace("high", &PostParams::default(), &changed)
            .await
            .expect_err("immutable"),
    );
    assert_eq!(
        err.message,
        "PriorityClass.scheduling.k8s.io \"high\" is invalid: [value: Forbidden: may not be changed in an update., preemptionPolicy: Invalid value: \"Never\": field is immutable]"
    );

    let listed = api
        .list(&ListParams::default().fields("metadata.name=high"))
        .await
        .expect("field selector");
    assert_eq!(listed.items.len(), 1);
    api.delete("high", &DeleteParams::default())
        .await
        .expect("user classes may be deleted");
    assert_eq!(
        api_error(api.get("high").await.expect_err("gone")).code,
        404
    );
}

#[rstest]
#[tokio::test]
async fn tables_patches_apply_and_protobuf(#[future(awt)] server: TestServer) {
    let api: Api<PriorityClass> = Api::all(server.client.clone());
    let mut low: PriorityClass = class("low", -10);
    low.global_default = Some(true);
    low.preemption_policy = Some("Never".into());
    api.create(&PostParams::default(), &low)
        .await
        .expect("create");
    // Only one class may be the global default.
    let mut second = class("second", 5);
    second.global_default = Some(true);
    let err = api_error(
        api.create(&PostParams::default(), &second)
            .await
            .expect_err("second default"),
    );
    assert_eq!((err.code, err.reason.as_str()), (403, "Forbidden"));
    assert_eq!(
        err.message,
        "priorityclasses.scheduling.k8s.io \"second\" is forbidden: PriorityClass low is already marked as default. Only one default can exist"
    );
    second.global_default = None;
    api.create(&PostParams::default(), &second)
        .await
        .expect("not a default");
    let err = api_error(
        api.patch(
            "second",
            &PatchParams::default(),
            &Patch::Merge(json!({"globalDefault": true})),
        )
        .await
        .expect_err("marked default"),
    );
    assert_eq!(err.code, 403);
    api.patch(
        "low",
        &PatchParams::default(),
        &Patch::Merge(json!({"description": "still the default"})),
    )
    .await
    .expect("the default itself may change");
    api.delete("second", &Default::default())
        .await
        .expect("delete");

    let (columns, t) = table(&server, &format!("{PATH}/low")).await;
    assert_eq!(
        columns,
        ["Name", "Value", "Global-Default", "Age", "PreemptionPolicy"]
    );
    let cells = &t["rows"][0]["cells"];
    assert_eq!(cells[0], "low");
    assert_eq!(cells[1], -10);
    assert_eq!(cells[2], true);
    assert_eq!(cells[4], "Never");
    let (_, all) = table(&server, PATH).await;
    assert_eq!(all["rows"].as_array().map(Vec::len), Some(3));

    let patched = api
        .patch(
            "low",
            &PatchParams::default(),
            &Patch::Strategic(
                json!({"metadata": {"labels": {"tier": "batch"}}, "description": "d"}),
            ),
        )
        .await
        .expect("strategic merge patch");
    assert_eq!(patched.description.as_deref(), Some("d"));
    let applied = api
        .patch(
            "applied",
            &PatchParams::apply("tester"),
            &Patch::Apply(
                json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                "metadata": {"name": "applied"}, "value": 7}),
            ),
        )
        .await
        .expect("server-side apply creates");
    assert_eq!(applied.value, Some(7));
    assert_eq!(
        applied.preemption_policy.as_deref(),
        Some("PreemptLowerPriority")
    );

    let decoded = protobuf(&server, &format!("{PATH}/system-cluster-critical")).await;
    assert_eq!(decoded["kind"], "PriorityClass");
    assert_eq!(decoded["value"], 2_000_000_000);
}
