//! apps/v1 (Deployments, ReplicaSets, StatefulSets, DaemonSets, ControllerRevisions) and the
//! core/v1 PodTemplates and ReplicationControllers: defaults, validation, generation,
//! status and scale subresources, field selectors, Tables, patches and protobuf.

use futures_util::StreamExt;
use k8s_openapi::api::apps::v1::{
    ControllerRevision, DaemonSet, Deployment, ReplicaSet, StatefulSet,
};
use k8s_openapi::api::core::v1::{PodTemplate, ReplicationController};
use kube::api::{
    Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use rstest::rstest;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use super::{column_names, table};
use crate::harness::{api_error, server, TestServer};

fn template() -> Value {
    json!({"metadata": {"labels": {"app": "web"}},
           "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}})
}

fn typed<T: DeserializeOwned>(v: Value) -> T {
    serde_json::from_value(v).expect("typed")
}

fn api<T>(server: &TestServer) -> Api<T>
where
    T: kube::Resource<Scope = kube::core::NamespaceResourceScope>,
    <T as kube::Resource>::DynamicType: Default,
{
    Api::namespaced(server.client.clone(), "default")
}

fn deployment(name: &str) -> Deployment {
    typed(json!({"metadata": {"name": name},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template()}}))
}

#[rstest]
#[tokio::test]
async fn deployments_defaults_generation_and_status(#[future(awt)] server: TestServer) {
    let deployments: Api<Deployment> = api(&server);
    let created = deployments
        .create(&PostParams::default(), &deployment("web"))
        .await
        .expect("create");
    let v = serde_json::to_value(&created).expect("json");
    assert_eq!(v["spec"]["replicas"], 1);
    assert_eq!(
        v["spec"]["strategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}})
    );
    assert_eq!(v["spec"]["revisionHistoryLimit"], 10);
    assert_eq!(v["spec"]["progressDeadlineSeconds"], 600);
    assert_eq!(v["spec"]["template"]["spec"]["restartPolicy"], "Always");
    assert_eq!(
        v["spec"]["template"]["spec"]["containers"][0]["imagePullPolicy"],
        "IfNotPresent"
    );
    assert_eq!(v["status"], json!({}));
    assert_eq!(v["metadata"]["generation"], 1);

    let mut watch = deployments
        .watch(
            &WatchParams::default(),
            created.metadata.resource_version.as_deref().unwrap_or("0"),
        )
        .await
        .expect("watch")
        .boxed();
    let patched = deployments
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Strategic(json!({"spec": {"template": {"spec": {"containers": [
                {"name": "web", "image": "nginx:1.28"}]}}}})),
        )
        .await
        .expect("patch");
    assert_eq!(patched.metadata.generation, Some(2));
    match watch.next().await {
        Some(Ok(WatchEvent::Modified(d))) => assert_eq!(d.metadata.generation, Some(2)),
        other => panic!("expected MODIFIED, got {other:?}"),
    }
    let annotated = deployments
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": {"note": "x"}}})),
        )
        .await
        .expect("annotate");
    assert_eq!(
        annotated.metadata.generation,
        Some(3),
        "annotations count for Deployments"
    );

    let status = deployments
        .patch_status(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 9}, "status": {"replicas": 1, "readyReplicas": 1, "observedGeneration": 3}})),
        )
        .await
        .expect("status");
    assert_eq!(status.spec.replicas, Some(1), "status keeps the spec");
    assert_eq!(
        status.status.as_ref().and_then(|s| s.ready_replicas),
        Some(1)
    );
    let err = api_error(
        deployments
            .patch_status(
                "web",
                &PatchParams::default(),
                &Patch::Merge(json!({"status": {"availableReplicas": 2}})),
            )
            .await
            .expect_err("more available than ready"),
    );
    assert_eq!(
        err.message,
        "Deployment.apps \"web\" is invalid: [status.availableReplicas: Invalid value: 2: cannot be greater than status.replicas, status.availableReplicas: Invalid value: 2: cannot be greater than readyReplicas]"
    );
    let ignored = deployments
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"replicas": 7}})),
        )
        .await
        .expect("main resource ignores status");
    assert_eq!(ignored.status.and_then(|s| s.replicas), Some(1));
}

#[rstest]
#[tokio::test]
async fn deployment_validation(#[future(awt)] server: TestServer) {
    let rv = server.rv();
    let (status, body) = server
        .post(
            "/apis/apps/v1/namespaces/default/deployments",
            &json!({"metadata": {"name": "bad"}, "spec": {
                "selector": {"matchLabels": {"app": "other"}}, "template": template()}}),
        )
        .await;
    assert_eq!(status, 422);
    assert_eq!(
        body["message"],
        "Deployment.apps \"bad\" is invalid: spec.template.metadata.labels: Invalid value: {\"app\":\"web\"}: `selector` does not match template `labels`"
    );
    let (_, body) = server
        .post(
            "/apis/apps/v1/namespaces/default/deployments",
            &json!({"metadata": {"name": "bad"}, "spec": {"template": template()}}),
        )
        .await;
    assert_eq!(
        body["message"],
        "Deployment.apps \"bad\" is invalid: [spec.selector: Required value, spec.template.metadata.labels: Invalid value: {\"app\":\"web\"}: `selector` does not match template `labels`]"
    );
    let (_, body) = server
        .post(
            "/apis/apps/v1/namespaces/default/deployments",
            &json!({"metadata": {"name": "bad"}, "spec": {
                "selector": {"matchLabels": {"app": "web"}},
                "strategy": {"rollingUpdate": {"maxUnavailable": 0, "maxSurge": 0}},
                "template": {"metadata": {"labels": {"app": "web"}},
                    "spec": {"restartPolicy": "Never", "containers": [{"name": "web", "image": "x"}]}}}}),
        )
        .await;
    assert_eq!(
        body["message"],
        "Deployment.apps \"bad\" is invalid: [spec.template.spec.restartPolicy: Unsupported value: \"Never\": supported values: \"Always\", spec.strategy.rollingUpdate.maxUnavailable: Invalid value: 0: may not be 0 when `maxSurge` is 0]"
    );
    assert_eq!(server.rv(), rv);

    let deployments: Api<Deployment> = api(&server);
    deployments
        .create(&PostParams::default(), &deployment("web"))
        .await
        .expect("create");
    let err = api_error(
        deployments
            .patch(
                "web",
                &PatchParams::default(),
                &Patch::Merge(
                    json!({"spec": {"selector": {"matchLabels": {"app": "web", "tier": "x"}},
                    "template": {"metadata": {"labels": {"tier": "x"}}}}}),
                ),
            )
            .await
            .expect_err("immutable selector"),
    );
    assert_eq!(
        err.message,
        "Deployment.apps \"web\" is invalid: spec.selector: Invalid value: {\"matchLabels\":{\"app\":\"web\",\"tier\":\"x\"}}: field is immutable"
    );
}

#[rstest]
#[tokio::test]
async fn scale_subresources(#[future(awt)] server: TestServer) {
    let deployments: Api<Deployment> = api(&server);
    deployments
        .create(&PostParams::default(), &deployment("web"))
        .await
        .expect("create");
    let scale = deployments.get_scale("web").await.expect("scale");
    assert_eq!(scale.spec.and_then(|s| s.replicas), Some(1));
    let status = scale.status.expect("status");
    assert_eq!(status.selector.as_deref(), Some("app=web"));
    assert_eq!(status.replicas, 0);
    let scaled = deployments
        .patch_scale(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 4}})),
        )
        .await
        .expect("scale up");
    assert_eq!(scaled.spec.and_then(|s| s.replicas), Some(4));
    let d = deployments.get("web").await.expect("get");
    assert_eq!(d.spec.replicas, Some(4));
    assert_eq!(d.metadata.generation, Some(2));

    let sets: Api<StatefulSet> = api(&server);
    sets.create(
        &PostParams::default(),
        &typed(json!({"metadata": {"name": "db"}, "spec": {
            "selector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "db"]}]},
            "template": template()}})),
    )
    .await
    .expect("statefulset");
    let scale = sets.get_scale("db").await.expect("scale");
    assert_eq!(
        scale.status.and_then(|s| s.selector).as_deref(),
        Some("app in (db,web)")
    );

    let rcs: Api<ReplicationController> = api(&server);
    let rc = rcs
        .create(
            &PostParams::default(),
            &typed(json!({"metadata": {"name": "old"}, "spec": {"template": {
                "metadata": {"labels": {"app": "web", "tier": "a"}},
                "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}})),
        )
        .await
        .expect("rc");
    let rc_spec = rc.spec.expect("spec");
    assert_eq!(rc_spec.replicas, Some(1));
    assert_eq!(
        rc_spec
            .selector
            .unwrap_or_default()
            .into_iter()
            .collect::<Vec<_>>(),
        [
            ("app".to_string(), "web".to_string()),
            ("tier".to_string(), "a".to_string())
        ]
    );
    assert_eq!(
        rc.metadata.labels.unwrap_or_default().len(),
        2,
        "labels default from the template"
    );
    let scale = rcs.get_scale("old").await.expect("scale");
    assert_eq!(
        scale.status.and_then(|s| s.selector).as_deref(),
        Some("app=web,tier=a")
    );

    let err = api_error(
        deployments
            .patch_scale(
                "web",
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"replicas": -1}})),
            )
            .await
            .expect_err("negative"),
    );
    assert_eq!(
        err.message,
        "Scale.autoscaling \"web\" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0"
    );
}

#[rstest]
#[tokio::test]
async fn statefulsets_daemonsets_and_revisions(#[future(awt)] server: TestServer) {
    let sets: Api<StatefulSet> = api(&server);
    let created = sets
        .create(
            &PostParams::default(),
            &typed(json!({"metadata": {"name": "db"}, "spec": {
                "serviceName": "db", "selector": {"matchLabels": {"app": "web"}},
                "template": template(),
                "volumeClaimTemplates": [{"metadata": {"name": "data"}, "spec": {
                    "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]}})),
        )
        .await
        .expect("create");
    let v = serde_json::to_value(&created).expect("json");
    assert_eq!(v["spec"]["podManagementPolicy"], "OrderedReady");
    assert_eq!(
        v["spec"]["updateStrategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 0}})
    );
    assert_eq!(
        v["spec"]["persistentVolumeClaimRetentionPolicy"],
        json!({"whenDeleted": "Retain", "whenScaled": "Retain"})
    );
    assert_eq!(
        v["spec"]["volumeClaimTemplates"][0]["spec"]["volumeMode"],
        "Filesystem"
    );
    assert_eq!(v["status"], json!({"replicas": 0, "availableReplicas": 0}));
    let err = api_error(
        sets.patch(
            "db",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"serviceName": "other"}})),
        )
        .await
        .expect_err("forbidden"),
    );
    assert_eq!(
        err.message,
        "StatefulSet.apps \"db\" is invalid: spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"
    );
    let (status, body) = server
        .post(
            "/apis/apps/v1/namespaces/default/statefulsets",
            &json!({"metadata": {"name": "a.b"}, "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": template()}}),
        )
        .await;
    assert_eq!(status, 422);
    assert_eq!(
        body["message"],
        "StatefulSet.apps \"a.b\" is invalid: metadata.name: Invalid value: \"a.b\": must not contain dots"
    );

    let daemons: Api<DaemonSet> = api(&server);
    let ds = daemons
        .create(
            &PostParams::default(),
            &typed(json!({"metadata": {"name": "agent"}, "spec": {
                "selector": {"matchLabels": {"app": "web"}}, "template": template()}})),
        )
        .await
        .expect("daemonset");
    let v = serde_json::to_value(&ds).expect("json");
    assert_eq!(
        v["spec"]["updateStrategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}})
    );
    assert_eq!(
        v["metadata"]["annotations"]["deprecated.daemonset.template.generation"],
        "1"
    );
    let updated = daemons
        .patch(
            "agent",
            &PatchParams::default(),
            &Patch::Strategic(json!({"spec": {"template": {"spec": {"containers": [{"name": "web", "image": "nginx:2"}]}}}})),
        )
        .await
        .expect("template change");
    let annotations = updated.metadata.annotations.unwrap_or_default();
    assert_eq!(annotations["deprecated.daemonset.template.generation"], "2");

    let revisions: Api<ControllerRevision> = api(&server);
    let rev = revisions
        .create(
            &PostParams::default(),
            &typed(
                json!({"metadata": {"name": "agent-1", "ownerReferences": [{"apiVersion": "apps/v1",
                "kind": "DaemonSet", "name": "agent", "uid": ds.metadata.uid, "controller": true}]},
                "data": {"spec": {}}, "revision": 1}),
            ),
        )
        .await
        .expect("revision");
    assert_eq!(rev.metadata.generation, None);
    let err = api_error(
        revisions
            .patch(
                "agent-1",
                &PatchParams::default(),
                &Patch::Merge(json!({"data": {"spec": {"x": 1}}})),
            )
            .await
            .expect_err("immutable"),
    );
    assert_eq!(
        err.message,
        "ControllerRevision.apps \"agent-1\" is invalid: data: Invalid value: {\"spec\":{\"x\":1}}: field is immutable"
    );
    let t = table(
        &server,
        "/apis/apps/v1/namespaces/default/controllerrevisions",
    )
    .await;
    assert_eq!(column_names(&t), ["Name", "Controller", "Revision", "Age"]);
    assert_eq!(t["rows"][0]["cells"][1], "daemonset.apps/agent");
}

#[rstest]
#[tokio::test]
async fn tables_field_selectors_patches_and_protobuf(#[future(awt)] server: TestServer) {
    let deployments: Api<Deployment> = api(&server);
    deployments
        .create(&PostParams::default(), &deployment("web"))
        .await
        .expect("create");
    let t = table(&server, "/apis/apps/v1/namespaces/default/deployments").await;
    assert_eq!(
        column_names(&t),
        [
            "Name",
            "Ready",
            "Up-to-date",
            "Available",
            "Age",
            "Containers",
            "Images",
            "Selector"
        ]
    );
    let cells = &t["rows"][0]["cells"];
    assert_eq!(cells[1], "0/1");
    assert_eq!(cells[5], "web");
    assert_eq!(cells[6], "nginx:1.27");
    assert_eq!(cells[7], "app=web");

    let sets: Api<ReplicaSet> = api(&server);
    for name in ["a", "b"] {
        sets.create(
            &PostParams::default(),
            &typed(json!({"metadata": {"name": name}, "spec": {
                "selector": {"matchLabels": {"app": "web"}}, "template": template()}})),
        )
        .await
        .expect("replicaset");
    }
    sets.patch_status(
        "b",
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"replicas": 2}})),
    )
    .await
    .expect("status");
    let zero = sets
        .list(&ListParams::default().fields("status.replicas=0"))
        .await
        .expect("list");
    let names: Vec<String> = zero
        .items
        .into_iter()
        .filter_map(|r| r.metadata.name)
        .collect();
    assert_eq!(names, ["a"]);
    let t = table(&server, "/apis/apps/v1/namespaces/default/replicasets").await;
    assert_eq!(
        column_names(&t),
        [
            "Name",
            "Desired",
            "Current",
            "Ready",
            "Age",
            "Containers",
            "Images",
            "Selector"
        ]
    );
    assert_eq!(t["rows"][1]["cells"][2], 2);

    let applied = deployments
        .patch(
            "applied",
            &PatchParams::apply("tester"),
            &Patch::Apply(json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "applied"},
                "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}]}}}})),
        )
        .await
        .expect("apply");
    assert_eq!(applied.spec.replicas, Some(1));
    let reapplied = deployments
        .patch(
            "applied",
            &PatchParams::apply("tester"),
            &Patch::Apply(json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "applied"},
                "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {
                    "metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "b", "image": "b:2"}]}}}})),
        )
        .await
        .expect("reapply drops a container by name");
    let images: Vec<Option<String>> = reapplied
        .spec
        .template
        .spec
        .expect("pod spec")
        .containers
        .into_iter()
        .map(|c| c.image)
        .collect();
    assert_eq!(images, [Some("b:2".to_string())]);

    let resp = server
        .http
        .get(server.url("/apis/apps/v1/namespaces/default/deployments/web"))
        .header("accept", "application/vnd.kubernetes.protobuf")
        .send()
        .await
        .expect("sent");
    assert_eq!(resp.status().as_u16(), 200);
    let bytes = resp.bytes().await.expect("body");
    assert_eq!(&bytes[..4], b"k8s\0");
    assert!(String::from_utf8_lossy(&bytes).contains("nginx:1.27"));
}

#[rstest]
#[tokio::test]
async fn pod_templates(#[future(awt)] server: TestServer) {
    let templates: Api<PodTemplate> = api(&server);
    let created = templates
        .create(
            &PostParams::default(),
            &typed(json!({"metadata": {"name": "t"}, "template": template()})),
        )
        .await
        .expect("create");
    let v = serde_json::to_value(&created).expect("json");
    assert_eq!(v["template"]["spec"]["dnsPolicy"], "ClusterFirst");
    assert!(
        v["template"]["spec"].get("enableServiceLinks").is_none(),
        "a pod-only default"
    );
    let (status, body) = server
        .post(
            "/api/v1/namespaces/default/podtemplates",
            &json!({"metadata": {"name": "bad"}, "template": {"metadata": {"labels": {"a": "-"}}, "spec": {"containers": []}}}),
        )
        .await;
    assert_eq!(status, 422);
    assert_eq!(
        body["message"],
        "PodTemplate \"bad\" is invalid: [template.labels: Invalid value: \"-\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?'), template.spec.containers: Required value]"
    );
    let t = table(&server, "/api/v1/namespaces/default/podtemplates").await;
    assert_eq!(
        column_names(&t),
        ["Name", "Containers", "Images", "Pod Labels"]
    );
    assert_eq!(t["rows"][0]["cells"][3], "app=web");
    let deleted = templates
        .delete("t", &DeleteParams::default())
        .await
        .expect("delete");
    assert!(
        deleted.left().is_some(),
        "pod templates answer with the deleted object"
    );
}
