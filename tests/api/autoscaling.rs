//! autoscaling/v2 HorizontalPodAutoscalers through kube-rs's typed API: defaults (the CPU
//! metric, the behavior's rules), validation, the status subresource, a Table, patches; and
//! autoscaling/v1 over the same objects (the CPU target, the annotations carrying v2 fields).

use futures_util::StreamExt;
use k8s_openapi::api::autoscaling::v1::HorizontalPodAutoscaler as V1Hpa;
use k8s_openapi::api::autoscaling::v2::HorizontalPodAutoscaler;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
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

fn v1_hpas(server: &TestServer) -> Api<V1Hpa> {
    Api::namespaced(server.client.clone(), "default")
}

fn v1_hpa(name: &str, spec: Value) -> V1Hpa {
    let mut spec = spec;
    spec["scaleTargetRef"] = json!({"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"});
    typed(json!({"metadata": {"name": name}, "spec": spec}))
}

fn annotation(h: &V1Hpa, key: &str) -> Option<String> {
    h.metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get(key).cloned())
}

const METRICS: &str = "autoscaling.alpha.kubernetes.io/metrics";
const BEHAVIOR: &str = "autoscaling.alpha.kubernetes.io/behavior";
const CURRENT_METRICS: &str = "autoscaling.alpha.kubernetes.io/current-metrics";

#[rstest]
#[tokio::test]
async fn v1_cpu_target_is_a_v2_cpu_metric(#[future(awt)] server: TestServer) {
    let created = v1_hpas(&server)
        .create(
            &PostParams::default(),
            &v1_hpa(
                "cpu",
                json!({"maxReplicas": 4, "targetCPUUtilizationPercentage": 60}),
            ),
        )
        .await
        .expect("create v1");
    let v = serde_json::to_value(&created).expect("json");
    assert_eq!(v["apiVersion"], "autoscaling/v1");
    assert_eq!(v["spec"]["minReplicas"], 1);
    assert_eq!(v["spec"]["targetCPUUtilizationPercentage"], 60);
    assert_eq!(
        v["status"],
        json!({"currentReplicas": 0, "desiredReplicas": 0})
    );
    assert_eq!(annotation(&created, METRICS), None);

    let v2 = hpas(&server).get("cpu").await.expect("get v2");
    let v = serde_json::to_value(&v2).expect("json");
    assert_eq!(
        v["spec"]["metrics"],
        json!([{"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 60}}}])
    );
    assert!(v2.metadata.annotations.is_none());

    // No target at all: the conversion's 80% CPU metric, which v1 then shows as its target.
    let bare = v1_hpas(&server)
        .create(
            &PostParams::default(),
            &v1_hpa("bare", json!({"maxReplicas": 2})),
        )
        .await
        .expect("create bare");
    assert_eq!(bare.spec.target_cpu_utilization_percentage, Some(80));
    let v2 = hpas(&server).get("bare").await.expect("get v2");
    let metrics = v2.spec.metrics.unwrap_or_default();
    assert_eq!(metrics.len(), 1);
    assert_eq!(
        metrics[0]
            .resource
            .as_ref()
            .map(|r| r.target.average_utilization),
        Some(Some(80))
    );

    // Validation runs on the converted object, with v2's paths.
    let err = api_error(
        v1_hpas(&server)
            .create(
                &PostParams::default(),
                &v1_hpa("bad", json!({"minReplicas": 0, "maxReplicas": 0})),
            )
            .await
            .expect_err("invalid"),
    );
    assert_eq!(
        err.message,
        "HorizontalPodAutoscaler.autoscaling \"bad\" is invalid: [spec.minReplicas: Invalid value: 0: must be greater than or equal to 1, spec.maxReplicas: Required value: must be set and greater than 0, spec.metrics: Forbidden: must specify at least one Object or External metric to support scaling to zero replicas]"
    );

    // Both versions are served; kubectl picks the preferred one, v2.
    let (code, group) = server.get("/apis/autoscaling").await;
    assert_eq!(code, 200);
    assert_eq!(group["preferredVersion"]["version"], "v2");
    let (_, v1_list) = server.get("/apis/autoscaling/v1").await;
    let names: Vec<&str> = v1_list["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert_eq!(
        names,
        [
            "horizontalpodautoscalers",
            "horizontalpodautoscalers/status"
        ]
    );
}

#[rstest]
#[tokio::test]
async fn v2_fields_ride_in_v1_annotations(#[future(awt)] server: TestServer) {
    hpas(&server)
        .create(
            &PostParams::default(),
            &hpa(
                "mem",
                json!({"maxReplicas": 5,
                    "metrics": [{"type": "Resource", "resource": {"name": "memory",
                        "target": {"type": "AverageValue", "averageValue": "512Mi"}}}],
                    "behavior": {"scaleDown": {"stabilizationWindowSeconds": 30,
                        "policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]}}}),
            ),
        )
        .await
        .expect("create v2");
    let v1 = v1_hpas(&server).get("mem").await.expect("get v1");
    assert_eq!(v1.spec.target_cpu_utilization_percentage, None);
    assert_eq!(
        annotation(&v1, METRICS).as_deref(),
        Some(r#"[{"type":"Resource","resource":{"name":"memory","targetAverageValue":"512Mi"}}]"#)
    );
    assert_eq!(
        annotation(&v1, BEHAVIOR).as_deref(),
        Some(
            r#"{"ScaleUp":{"StabilizationWindowSeconds":0,"SelectPolicy":"Max","Policies":[{"Type":"Pods","Value":4,"PeriodSeconds":15},{"Type":"Percent","Value":100,"PeriodSeconds":15}],"Tolerance":null},"ScaleDown":{"StabilizationWindowSeconds":30,"SelectPolicy":"Max","Policies":[{"Type":"Pods","Value":1,"PeriodSeconds":60}],"Tolerance":null}}"#
        )
    );
    assert_eq!(annotation(&v1, CURRENT_METRICS), None);

    // An update through v1 keeps what only v2 can say.
    let mut changed = v1.clone();
    changed.spec.max_replicas = 9;
    let updated = v1_hpas(&server)
        .replace("mem", &PostParams::default(), &changed)
        .await
        .expect("replace v1");
    assert_eq!(updated.spec.max_replicas, 9);
    let v2 = hpas(&server).get("mem").await.expect("get v2");
    let v = serde_json::to_value(&v2).expect("json");
    assert_eq!(v["spec"]["maxReplicas"], 9);
    assert_eq!(
        v["spec"]["metrics"],
        json!([{"type": "Resource", "resource": {"name": "memory",
            "target": {"type": "AverageValue", "averageValue": "512Mi"}}}])
    );
    assert_eq!(
        v["spec"]["behavior"]["scaleDown"]["stabilizationWindowSeconds"],
        30
    );
    assert!(
        v2.metadata.annotations.is_none(),
        "no annotation reaches storage"
    );

    // The status subresource in v1: the CPU utilization becomes a current metric.
    let status = json!({"status": {"currentReplicas": 3, "desiredReplicas": 4,
        "currentCPUUtilizationPercentage": 55}});
    let patched = v1_hpas(&server)
        .patch_status("mem", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .expect("status v1");
    let st = patched.status.clone().expect("status");
    assert_eq!(
        (
            st.current_replicas,
            st.desired_replicas,
            st.current_cpu_utilization_percentage
        ),
        (3, 4, Some(55))
    );
    assert_eq!(
        annotation(&patched, CURRENT_METRICS).as_deref(),
        Some(
            r#"[{"type":"Resource","resource":{"name":"cpu","currentAverageUtilization":55,"currentAverageValue":"0"}}]"#
        )
    );
    assert_eq!(patched.spec.max_replicas, 9, "the spec stays");
    let v2 = hpas(&server).get("mem").await.expect("get v2");
    let v = serde_json::to_value(&v2).expect("json");
    assert_eq!(
        v["status"]["currentMetrics"],
        json!([{"type": "Resource", "resource": {"name": "cpu",
            "current": {"averageUtilization": 55}}}]),
        "no value: v1's zero quantity is only how v1 writes it"
    );
    assert_eq!(v["spec"]["metrics"][0]["resource"]["name"], "memory");

    // A main-resource write through v1 cannot change the status.
    let mut changed = patched.clone();
    changed.status = Some(Default::default());
    let kept = v1_hpas(&server)
        .replace("mem", &PostParams::default(), &changed)
        .await
        .expect("replace v1");
    assert_eq!(
        kept.status
            .and_then(|s| s.current_cpu_utilization_percentage),
        Some(55)
    );

    // kubectl's columns in v1 come from the same printer.
    let t = table(
        &server,
        "/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers",
    )
    .await;
    assert_eq!(column_names(&t)[2], "Targets");
    assert_eq!(t["rows"][0]["cells"][2], "memory: 0/512Mi");
    assert_eq!(t["rows"][0]["cells"][5], 3);
}

#[rstest]
#[tokio::test]
async fn v1_lists_and_watches_v2_writes(#[future(awt)] server: TestServer) {
    let api = v1_hpas(&server);
    let rv = api
        .list(&ListParams::default())
        .await
        .expect("list")
        .metadata
        .resource_version
        .unwrap_or_default();
    let mut watch = api
        .watch(&WatchParams::default(), &rv)
        .await
        .expect("watch")
        .boxed();
    hpas(&server)
        .create(
            &PostParams::default(),
            &hpa(
                "watched",
                json!({"maxReplicas": 3, "metrics": [{"type": "Pods", "pods": {
                    "metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "10"}}}]}),
            ),
        )
        .await
        .expect("create v2");
    match watch.next().await {
        Some(Ok(WatchEvent::Added(h))) => {
            assert_eq!(h.metadata.name.as_deref(), Some("watched"));
            assert_eq!(
                annotation(&h, METRICS).as_deref(),
                Some(r#"[{"type":"Pods","pods":{"metricName":"qps","targetAverageValue":"10"}}]"#)
            );
        }
        other => panic!("expected ADDED, got {other:?}"),
    }
    let listed = api.list(&ListParams::default()).await.expect("list");
    let names: Vec<String> = listed
        .items
        .iter()
        .filter_map(|h| h.metadata.name.clone())
        .collect();
    assert_eq!(names, ["watched"]);
    assert_eq!(listed.items[0].spec.max_replicas, 3);
}
