//! autoscaling/v2 HorizontalPodAutoscalers through kube-rs's typed API: defaults (the CPU
//! metric, the behavior's rules), validation, the status subresource, a Table, patches.

use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use rstest::rstest;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use crate::harness::{api_error, server, TestServer};
use crate::workloads::{column_names, table};

fn typed<T: DeserializeOwned>(v: Value) -> T {
    serde_json::from_value(v).expect("typed")
}

fn hpa(name: &str, spec: Value) -> HorizontalPodAutoscaler {
    let mut spec = spec;
    spec["scaleTargetRef"] = json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"});
    typed(json!({"metadata": {"name": name}, "spec": spec}))
}

fn hpas(server: &TestServer) -> Api<HorizontalPodAutoscaler> {
    Api::namespaced(server.client.clone(), "default")
}

#[rstest]
#[tokio::test]
async fn hpa_defaults_status_and_table(#[future(awt)] server: TestServer) {
    let api = hpas(&server);
    let created = api
        .create(
            &PostParams::default(),
            &hpa("web", json!({"maxReplicas": 5, "behavior": {"scaleDown": {"stabilizationWindowSeconds": 30}}})),
        )
        .await
        .expect("create");
    let v = serde_json::to_value(&created).expect("json");
    assert_eq!(v["spec"]["minReplicas"], 1);
    assert_eq!(
        v["spec"]["metrics"],
        json!([{"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 80}}}])
    );
    assert_eq!(
        v["spec"]["behavior"],
        json!({"scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
                {"type": "Pods", "value": 4, "periodSeconds": 15},
                {"type": "Percent", "value": 100, "periodSeconds": 15}]},
               "scaleDown": {"stabilizationWindowSeconds": 30, "selectPolicy": "Max", "policies": [
                {"type": "Percent", "value": 100, "periodSeconds": 15}]}})
    );
    assert_eq!(v["status"], json!({"desiredReplicas": 0}));

    let status = json!({"status": {"currentReplicas": 2, "desiredReplicas": 3, "currentMetrics": [
        {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 55, "averageValue": "100m"}}}]}});
    let updated = api
        .patch_status("web", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .expect("status");
    assert_eq!(updated.status.and_then(|s| s.current_replicas), Some(2));
    let err = api_error(
        api.patch_status(
            "web",
            &PatchParams::default(),
            &Patch::Merge(&json!({"status": {"currentReplicas": -1}})),
        )
        .await
        .expect_err("negative"),
    );
    assert_eq!(
        err.message,
        "HorizontalPodAutoscaler.autoscaling \"web\" is invalid: status.currentReplicas: Invalid value: -1: must be greater than or equal to 0"
    );

    let t = table(
        &server,
        "/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers",
    )
    .await;
    assert_eq!(
        column_names(&t),
        [
            "Name",
            "Reference",
            "Targets",
            "MinPods",
            "MaxPods",
            "Replicas",
            "Age"
        ]
    );
    let cells = &t["rows"][0]["cells"];
    assert_eq!(cells[1], "Deployment/web");
    assert_eq!(cells[2], "cpu: 55%/80%");
    assert_eq!(cells[3], "1");
    assert_eq!(cells[4], 5);
    assert_eq!(cells[5], 2);

    // Strategic merge keeps the status; apply merges the metrics list atomically.
    let patched = api
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Strategic(json!({"spec": {"maxReplicas": 7}})),
        )
        .await
        .expect("patch");
    let v = serde_json::to_value(&patched).expect("json");
    assert_eq!(v["spec"]["maxReplicas"], 7);
    assert_eq!(v["status"]["currentReplicas"], 2);
    let applied = api
        .patch(
            "applied",
            &PatchParams::apply("tester"),
            &Patch::Apply(json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
                "metadata": {"name": "applied"},
                "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "StatefulSet", "name": "db"},
                    "minReplicas": 2, "maxReplicas": 4,
                    "metrics": [{"type": "Resource", "resource": {"name": "memory",
                        "target": {"type": "AverageValue", "averageValue": "512Mi"}}}]}})),
        )
        .await
        .expect("apply");
    assert_eq!(applied.spec.min_replicas, Some(2));
    let names: Vec<String> = api
        .list(&ListParams::default().fields("metadata.name=applied"))
        .await
        .expect("list")
        .items
        .into_iter()
        .filter_map(|h| h.metadata.name)
        .collect();
    assert_eq!(names, ["applied"]);
}

#[rstest]
#[tokio::test]
async fn hpa_validation_as_the_apiserver_words_it(#[future(awt)] server: TestServer) {
    let api = hpas(&server);
    let err = api_error(
        api.create(
            &PostParams::default(),
            &hpa("bad", json!({"minReplicas": 0, "maxReplicas": 0})),
        )
        .await
        .expect_err("replicas"),
    );
    assert_eq!(err.code, 422);
    assert_eq!(
        err.message,
        "HorizontalPodAutoscaler.autoscaling \"bad\" is invalid: [spec.minReplicas: Invalid value: 0: must be greater than or equal to 1, spec.maxReplicas: Required value: must be set and greater than 0, spec.metrics: Forbidden: must specify at least one Object or External metric to support scaling to zero replicas]"
    );
    let err = api_error(
        api.create(
            &PostParams::default(),
            &hpa("bad", json!({"minReplicas": 3, "maxReplicas": 2})),
        )
        .await
        .expect_err("bounds"),
    );
    assert_eq!(
        err.message,
        "HorizontalPodAutoscaler.autoscaling \"bad\" is invalid: spec.maxReplicas: Invalid value: 2: must be greater than or equal to `minReplicas`"
    );
    let no_group: HorizontalPodAutoscaler = typed(json!({"metadata": {"name": "bad"}, "spec": {
        "scaleTargetRef": {"apiVersion": "v1", "kind": "ReplicationController", "name": "a/b"},
        "maxReplicas": 2}}));
    let err = api_error(
        api.create(&PostParams::default(), &no_group)
            .await
            .expect_err("reference"),
    );
    assert_eq!(
        err.message,
        "HorizontalPodAutoscaler.autoscaling \"bad\" is invalid: [spec.scaleTargetRef.name: Invalid value: \"a/b\": may not contain '/', spec.scaleTargetRef.apiVersion: Invalid value: \"v1\": apiVersion must specify API group]"
    );
}
