//! core/v1 Pods: defaults, admission (service account token, priority, default tolerations),
//! validation, updates, subresources (status, binding, eviction, ephemeral containers, log),
//! field selectors, Tables, patches and protobuf.

use futures_util::StreamExt;
use k8s_openapi::api::core::v1::{Container, Pod, PodSpec};
use kube::api::{
    Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use rstest::rstest;
use serde_json::{json, Value};

use super::{column_names, table};
use crate::harness::{api_error, server, TestServer};

fn pod(name: &str, image: &str) -> Pod {
    Pod {
        metadata: kube::api::ObjectMeta {
            name: Some(name.into()),
            labels: Some([("app".to_string(), "web".to_string())].into()),
            ..Default::default()
        },
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "main".into(),
                image: Some(image.into()),
                ..Default::default()
            }],
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn pods(server: &TestServer) -> Api<Pod> {
    Api::namespaced(server.client.clone(), "default")
}

#[rstest]
#[tokio::test]
async fn create_defaults_and_admission(#[future(awt)] server: TestServer) {
    let created = pods(&server)
        .create(&PostParams::default(), &pod("web", "nginx"))
        .await
        .expect("create");
    let v = serde_json::to_value(&created).expect("json");
    let spec = &v["spec"];
    assert_eq!(v["status"]["phase"], "Pending");
    assert_eq!(v["status"]["qosClass"], "BestEffort");
    assert_eq!(v["metadata"]["generation"], 1);
    assert_eq!(spec["restartPolicy"], "Always");
    assert_eq!(spec["dnsPolicy"], "ClusterFirst");
    assert_eq!(spec["schedulerName"], "default-scheduler");
    assert_eq!(spec["terminationGracePeriodSeconds"], 30);
    assert_eq!(spec["enableServiceLinks"], true);
    assert_eq!(spec["securityContext"], json!({}));
    assert_eq!(spec["serviceAccountName"], "default");
    assert_eq!(spec["serviceAccount"], "default");
    assert_eq!(spec["priority"], 0);
    assert_eq!(spec["preemptionPolicy"], "PreemptLowerPriority");
    let c = &spec["containers"][0];
    assert_eq!(c["imagePullPolicy"], "Always");
    assert_eq!(c["terminationMessagePath"], "/dev/termination-log");
    assert_eq!(c["terminationMessagePolicy"], "File");
    assert_eq!(c["resources"], json!({}));
    let volume = &spec["volumes"][0];
    let volume_name = volume["name"].as_str().unwrap_or("");
    assert!(volume_name.starts_with("kube-api-access-"), "{volume}");
    assert_eq!(volume["projected"]["defaultMode"], 420);
    assert_eq!(
        volume["projected"]["sources"][0]["serviceAccountToken"]["expirationSeconds"],
        3607
    );
    assert_eq!(
        c["volumeMounts"][0],
        json!({"name": volume_name, "readOnly": true,
               "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"})
    );
    let tolerations = spec["tolerations"].as_array().cloned().unwrap_or_default();
    assert_eq!(
        tolerations,
        vec![
            json!({"key": "node.kubernetes.io/not-ready", "operator": "Exists",
                   "effect": "NoExecute", "tolerationSeconds": 300}),
            json!({"key": "node.kubernetes.io/unreachable", "operator": "Exists",
                   "effect": "NoExecute", "tolerationSeconds": 300}),
        ]
    );

    let mut tagged = pod("tagged", "nginx:1.27");
    if let Some(spec) = tagged.spec.as_mut() {
        spec.automount_service_account_token = Some(false);
        spec.priority_class_name = Some("system-cluster-critical".into());
    }
    let created = pods(&server)
        .create(&PostParams::default(), &tagged)
        .await
        .expect("create");
    let spec = created.spec.expect("spec");
    assert_eq!(
        spec.containers[0].image_pull_policy.as_deref(),
        Some("IfNotPresent")
    );
    assert!(
        spec.volumes.is_none(),
        "no token volume when automount is off"
    );
    assert_eq!(spec.priority, Some(2_000_000_000));

    let mut unknown = pod("unknown-class", "nginx");
    if let Some(spec) = unknown.spec.as_mut() {
        spec.priority_class_name = Some("gold".into());
    }
    let err = api_error(
        pods(&server)
            .create(&PostParams::default(), &unknown)
            .await
            .expect_err("no such class"),
    );
    assert_eq!(err.code, 403);
    assert_eq!(
        err.message,
        "pods \"unknown-class\" is forbidden: no PriorityClass with name gold was found"
    );
}

#[rstest]
#[tokio::test]
async fn validation_as_the_apiserver_words_it(#[future(awt)] server: TestServer) {
    let rv = server.rv();
    let (status, body) = server
        .post(
            "/api/v1/namespaces/default/pods",
            &json!({"metadata": {"name": "bad"}, "spec": {
                "restartPolicy": "Sometimes",
                "containers": [
                    {"name": "a", "image": "x", "ports": [{"containerPort": 70000}],
                     "resources": {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}}},
                    {"name": "a"}]}}),
        )
        .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(
        body["message"],
        "Pod \"bad\" is invalid: [spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive, spec.containers[0].resources.requests: Invalid value: \"2\": must be less than or equal to cpu limit of 1, spec.containers[1].image: Required value, spec.containers[1].name: Duplicate value: \"a\", spec.restartPolicy: Unsupported value: \"Sometimes\": supported values: \"Always\", \"OnFailure\", \"Never\"]"
    );
    assert_eq!(server.rv(), rv, "a rejected create changes nothing");

    let (status, body) = server
        .post(
            "/api/v1/namespaces/default/pods",
            &json!({"metadata": {"name": "empty"}, "spec": {"containers": []}}),
        )
        .await;
    assert_eq!(status, 422);
    assert_eq!(
        body["message"],
        "Pod \"empty\" is invalid: spec.containers: Required value"
    );

    let (status, body) = server
        .post(
            "/api/v1/namespaces/default/pods",
            &json!({"metadata": {"name": "mounts"}, "spec": {
                "volumes": [{"name": "data", "emptyDir": {}}, {"name": "data", "configMap": {"name": "c"}}],
                "containers": [{"name": "a", "image": "x",
                    "volumeMounts": [{"name": "nope", "mountPath": "/x"}]}]}}),
        )
        .await;
    assert_eq!(status, 422);
    assert_eq!(
        body["message"],
        "Pod \"mounts\" is invalid: [spec.volumes[1].name: Duplicate value: \"data\", spec.containers[0].volumeMounts[0].name: Not found: \"nope\"]"
    );
}

#[rstest]
#[tokio::test]
async fn updates_change_only_what_pods_allow(#[future(awt)] server: TestServer) {
    let api = pods(&server);
    let created = api
        .create(&PostParams::default(), &pod("web", "nginx:1"))
        .await
        .expect("create");
    let mut changed = created.clone();
    if let Some(spec) = changed.spec.as_mut() {
        spec.containers[0].image = Some("nginx:2".into());
    }
    let updated = api
        .replace("web", &PostParams::default(), &changed)
        .await
        .expect("image update");
    assert_eq!(updated.metadata.generation, Some(2));
    let mut labels_only = updated.clone();
    labels_only
        .metadata
        .labels
        .get_or_insert_with(Default::default)
        .insert("tier".into(), "front".into());
    let relabeled = api
        .replace("web", &PostParams::default(), &labels_only)
        .await
        .expect("label update");
    assert_eq!(
        relabeled.metadata.generation,
        Some(2),
        "labels leave generation"
    );

    let err = api_error(
        api.patch(
            "web",
            &PatchParams::default(),
            &Patch::Strategic(json!({"spec": {"restartPolicy": "Never"}})),
        )
        .await
        .expect_err("immutable"),
    );
    assert_eq!(err.code, 422);
    assert!(
        err.message.starts_with("Pod \"web\" is invalid: spec: Forbidden: pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)"),
        "{}",
        err.message
    );

    // A status written through the main resource is ignored; through /status it sticks.
    let mut status_change = relabeled.clone();
    status_change
        .status
        .get_or_insert_with(Default::default)
        .phase = Some("Running".into());
    let ignored = api
        .replace("web", &PostParams::default(), &status_change)
        .await
        .expect("update");
    assert_eq!(
        ignored.status.and_then(|s| s.phase).as_deref(),
        Some("Pending")
    );
    let patched = api
        .patch_status(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"phase": "Running", "podIP": "10.0.0.7"}})),
        )
        .await
        .expect("status");
    let status = patched.status.expect("status");
    assert_eq!(status.phase.as_deref(), Some("Running"));
    assert_eq!(
        status.pod_ips.unwrap_or_default()[0].ip.as_str(),
        "10.0.0.7",
        "podIPs follows podIP"
    );
}

/// The top-level `bindings` resource (create only): the pod its body names is bound; its uid
/// is dropped, its resourceVersion kept as a precondition; a bad target is the apiserver's
/// plain 500.
#[rstest]
#[tokio::test]
async fn top_level_bindings(#[future(awt)] server: TestServer) {
    let api = pods(&server);
    let created = api
        .create(&PostParams::default(), &pod("web", "nginx"))
        .await
        .expect("create");
    const PATH: &str = "/api/v1/namespaces/default/bindings";
    let (status, body) = server
        .post(
            PATH,
            &json!({"metadata": {"name": "web"}, "target": {"kind": "Pod"}}),
        )
        .await;
    assert_eq!(status, 500);
    assert_eq!(
        body,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "[target.kind: Unsupported value: \"Pod\": supported values: \"Node\", \"<empty>\", target.name: Required value]",
            "code": 500})
    );
    let (status, body) = server
        .post(
            PATH,
            &json!({"metadata": {"name": "web", "resourceVersion": "1"},
            "target": {"kind": "Node", "name": "node-1"}}),
        )
        .await;
    assert_eq!(status, 409, "{body}");
    let rv = created.metadata.resource_version.expect("rv");
    let (status, body) = server
        .post(
            PATH,
            &json!({"metadata": {"name": "web", "uid": "not-the-pods", "resourceVersion": rv},
            "target": {"kind": "Node", "name": "node-1"}}),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["status"], "Success");
    let bound = api.get("web").await.expect("get");
    assert_eq!(
        bound.spec.and_then(|s| s.node_name).as_deref(),
        Some("node-1")
    );

    let (status, _) = server.get(PATH).await;
    assert_eq!(status, 405, "bindings are create-only");
}

#[rstest]
#[tokio::test]
async fn binding_eviction_and_ephemeral_containers(#[future(awt)] server: TestServer) {
    let api = pods(&server);
    api.create(&PostParams::default(), &pod("web", "nginx"))
        .await
        .expect("create");
    let mut watch = api
        .watch(&WatchParams::default().fields("metadata.name=web"), "0")
        .await
        .expect("watch")
        .boxed();
    let (status, body) = server
        .post(
            "/api/v1/namespaces/default/pods/web/binding",
            &json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "web"},
                    "target": {"kind": "Node", "name": "node-1"}}),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["status"], "Success");
    let bound = api.get("web").await.expect("get");
    assert_eq!(
        bound.spec.as_ref().and_then(|s| s.node_name.as_deref()),
        Some("node-1")
    );
    let conditions = bound.status.and_then(|s| s.conditions).unwrap_or_default();
    assert_eq!(conditions[0].type_, "PodScheduled");
    assert_eq!(conditions[0].status, "True");
    assert_eq!(
        bound.metadata.generation,
        Some(1),
        "binding is not a spec update"
    );

    let (status, body) = server
        .post(
            "/api/v1/namespaces/default/pods/web/binding",
            &json!({"metadata": {"name": "web"}, "target": {"name": "node-2"}}),
        )
        .await;
    assert_eq!(status, 409);
    assert_eq!(
        body["message"],
        "Operation cannot be fulfilled on pods/binding \"web\": pod web is already assigned to node \"node-1\""
    );

    let ephemeral = api
        .patch_ephemeral_containers(
            "web",
            &PatchParams::default(),
            &Patch::Strategic(json!({"spec": {"ephemeralContainers": [
                {"name": "debug", "image": "busybox", "targetContainerName": "main"}]}})),
        )
        .await
        .expect("ephemeral containers");
    let ec = ephemeral
        .spec
        .and_then(|s| s.ephemeral_containers)
        .unwrap_or_default();
    assert_eq!(ec[0].image_pull_policy.as_deref(), Some("Always"));

    let (status, body) = server.get("/api/v1/namespaces/default/pods/web/log").await;
    assert_eq!(status, 400);
    assert_eq!(
        body["message"],
        "container \"main\" in pod \"web\" is waiting to start: kubefake runs no containers"
    );

    let (status, body) = server
        .post(
            "/api/v1/namespaces/default/pods/web/eviction",
            &json!({"apiVersion": "policy/v1", "kind": "Eviction", "metadata": {"name": "web"}}),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(
        api_error(api.get("web").await.expect_err("evicted")).code,
        404
    );
    let mut seen = Vec::new();
    while let Some(Ok(event)) = watch.next().await {
        let done = matches!(event, WatchEvent::Deleted(_));
        seen.push(match event {
            WatchEvent::Added(_) => "ADDED",
            WatchEvent::Modified(_) => "MODIFIED",
            WatchEvent::Deleted(_) => "DELETED",
            WatchEvent::Bookmark(_) => continue,
            WatchEvent::Error(e) => panic!("{e:?}"),
        });
        if done {
            break;
        }
    }
    assert_eq!(
        seen,
        ["ADDED", "MODIFIED", "MODIFIED", "MODIFIED", "DELETED"]
    );
}

#[rstest]
#[tokio::test]
async fn field_selectors_tables_and_protobuf(#[future(awt)] server: TestServer) {
    let api = pods(&server);
    api.create(&PostParams::default(), &pod("a", "nginx"))
        .await
        .expect("create");
    let mut b = pod("b", "nginx");
    if let Some(spec) = b.spec.as_mut() {
        spec.node_name = Some("node-1".into());
        spec.restart_policy = Some("Never".into());
    }
    api.create(&PostParams::default(), &b)
        .await
        .expect("create");
    let names = |l: kube::core::ObjectList<Pod>| -> Vec<String> {
        l.items
            .into_iter()
            .filter_map(|p| p.metadata.name)
            .collect()
    };
    let on_node = api
        .list(&ListParams::default().fields("spec.nodeName=node-1"))
        .await
        .expect("list");
    assert_eq!(names(on_node), ["b"]);
    let unscheduled = api
        .list(&ListParams::default().fields("spec.nodeName=,status.phase=Pending"))
        .await
        .expect("list");
    assert_eq!(names(unscheduled), ["a"]);
    let host_net = api
        .list(&ListParams::default().fields("spec.hostNetwork=false,spec.restartPolicy=Never"))
        .await
        .expect("list");
    assert_eq!(names(host_net), ["b"]);
    let err = api_error(
        api.list(&ListParams::default().fields("spec.image=x"))
            .await
            .expect_err("unsupported"),
    );
    assert_eq!(err.message, "field label not supported: spec.image");

    let t = table(&server, "/api/v1/namespaces/default/pods").await;
    assert_eq!(
        column_names(&t),
        [
            "Name",
            "Ready",
            "Status",
            "Restarts",
            "Age",
            "IP",
            "Node",
            "Nominated Node",
            "Readiness Gates"
        ]
    );
    let row = &t["rows"][1]["cells"];
    assert_eq!(row[0], "b");
    assert_eq!(row[1], "0/1");
    assert_eq!(row[2], "Pending");
    assert_eq!(row[3], "0");
    assert_eq!(row[5], "<none>");
    assert_eq!(row[6], "node-1");
    assert_eq!(t["columnDefinitions"][5]["priority"], 1);

    let resp = server
        .http
        .get(server.url("/api/v1/namespaces/default/pods/a"))
        .header("accept", "application/vnd.kubernetes.protobuf")
        .send()
        .await
        .expect("sent");
    assert_eq!(resp.status().as_u16(), 200);
    let bytes = resp.bytes().await.expect("body");
    assert_eq!(&bytes[..4], b"k8s\0");
    let text = String::from_utf8_lossy(&bytes);
    assert!(text.contains("default-scheduler"));

    let deleted = api
        .delete("a", &DeleteParams::default().grace_period(30))
        .await
        .expect("delete");
    let gone = deleted.left().expect("pods answer with the deleted object");
    assert_eq!(gone.metadata.name.as_deref(), Some("a"));
}

#[rstest]
#[tokio::test]
async fn patches_merge_by_the_real_keys(#[future(awt)] server: TestServer) {
    let api = pods(&server);
    let mut two = pod("two", "nginx");
    if let Some(spec) = two.spec.as_mut() {
        spec.containers.push(Container {
            name: "side".into(),
            image: Some("busybox:1".into()),
            ..Default::default()
        });
    }
    api.create(&PostParams::default(), &two)
        .await
        .expect("create");
    let patched = api
        .patch(
            "two",
            &PatchParams::default(),
            &Patch::Strategic(
                json!({"spec": {"containers": [{"name": "side", "image": "busybox:2"}]}}),
            ),
        )
        .await
        .expect("strategic merge by container name");
    let images: Vec<Option<String>> = patched
        .spec
        .expect("spec")
        .containers
        .into_iter()
        .map(|c| c.image)
        .collect();
    assert_eq!(
        images,
        [Some("nginx".to_string()), Some("busybox:2".to_string())]
    );

    let applied: Value = serde_json::to_value(
        api.patch(
            "applied",
            &PatchParams::apply("tester"),
            &Patch::Apply(
                json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "applied"},
                "spec": {"containers": [{"name": "main", "image": "nginx:1"}]}}),
            ),
        )
        .await
        .expect("apply creates"),
    )
    .expect("json");
    assert_eq!(
        applied["spec"]["containers"][0]["imagePullPolicy"],
        "IfNotPresent"
    );
    let reapplied = api
        .patch(
            "applied",
            &PatchParams::apply("other"),
            &Patch::Apply(
                json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "applied"},
                "spec": {"containers": [{"name": "main", "image": "nginx:2"}]}}),
            ),
        )
        .await;
    let err = api_error(reapplied.expect_err("conflict with the first manager"));
    assert_eq!(err.code, 409);
}
