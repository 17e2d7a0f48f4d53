//! The simulated StatefulSet controller: ordered creation with claims, rolling updates from the
//! highest ordinal, and scaling down that keeps the claims.

use std::time::Duration;

use futures_util::StreamExt;
use k8s_openapi::api::apps::v1::{ControllerRevision, StatefulSet};
use k8s_openapi::api::core::v1::{PersistentVolumeClaim, Pod};
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use serde_json::{json, Value};

use super::{json_of, pods, simulated, typed};
use crate::harness::TestServer;

fn api<K>(server: &TestServer) -> Api<K>
where
    K: kube::Resource<Scope = kube::core::NamespaceResourceScope>,
    <K as kube::Resource>::DynamicType: Default,
{
    Api::namespaced(server.client.clone(), "default")
}

fn statefulset(replicas: i64, image: &str) -> StatefulSet {
    typed(
        json!({"metadata": {"name": "web"}, "spec": {"replicas": replicas,
        "serviceName": "nginx", "selector": {"matchLabels": {"app": "nginx"}},
        "template": {"metadata": {"labels": {"app": "nginx"}},
            "spec": {"containers": [{"name": "nginx", "image": image}]}},
        "volumeClaimTemplates": [{"metadata": {"name": "www"},
            "spec": {"accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}}}}]}}),
    )
}

/// The events a watch from `rv` has by now, as `(resourceVersion, type, name, object)`.
async fn events<K>(api: &Api<K>, rv: u64) -> Vec<(u64, String, String, Value)>
where
    K: kube::Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug + serde::Serialize,
{
    let mut stream = api
        .watch(&WatchParams::default(), &rv.to_string())
        .await
        .expect("watch")
        .boxed();
    let mut out = Vec::new();
    while let Ok(Some(event)) =
        tokio::time::timeout(Duration::from_millis(300), stream.next()).await
    {
        let (kind, obj) = match event.expect("event") {
            WatchEvent::Added(o) => ("ADDED", o),
            WatchEvent::Modified(o) => ("MODIFIED", o),
            WatchEvent::Deleted(o) => ("DELETED", o),
            _ => continue,
        };
        let v = json_of(&obj);
        let rv: u64 = v["metadata"]["resourceVersion"]
            .as_str()
            .and_then(|r| r.parse().ok())
            .expect("rv");
        let name = v["metadata"]["name"].as_str().unwrap_or("").to_string();
        out.push((rv, kind.to_string(), name, v));
    }
    out
}

fn is_ready(pod: &Value) -> bool {
    pod["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Ready" && c["status"] == "True")
}

#[tokio::test]
async fn a_statefulset_creates_its_pods_in_order_with_their_claims() {
    let server = simulated().await;
    let start = server.rv();
    api::<StatefulSet>(&server)
        .create(&PostParams::default(), &statefulset(3, "nginx:1.27"))
        .await
        .expect("create");
    // Every pod and claim was written before the create returned; the watches replay them.
    let mut all = events(&api::<Pod>(&server), start).await;
    all.extend(events(&api::<PersistentVolumeClaim>(&server), start).await);
    all.sort_by_key(|e| e.0);
    let added: Vec<&str> = all
        .iter()
        .filter(|e| e.1 == "ADDED")
        .map(|e| e.2.as_str())
        .collect();
    assert_eq!(
        added,
        [
            "www-web-0",
            "web-0",
            "www-web-1",
            "web-1",
            "www-web-2",
            "web-2"
        ]
    );
    // Each pod was created once the one before it was ready.
    for (prev, next) in [("web-0", "web-1"), ("web-1", "web-2")] {
        let created = all
            .iter()
            .find(|e| e.1 == "ADDED" && e.2 == next)
            .expect("added")
            .0;
        let ready_before = all
            .iter()
            .any(|e| e.2 == prev && e.0 < created && is_ready(&e.3));
        assert!(ready_before, "{next} came before {prev} was ready");
    }

    let set = json_of(&api::<StatefulSet>(&server).get("web").await.expect("get"));
    let status = &set["status"];
    let revision = status["currentRevision"].as_str().expect("revision");
    assert_eq!(status["updateRevision"], revision);
    for k in [
        "replicas",
        "readyReplicas",
        "currentReplicas",
        "updatedReplicas",
        "availableReplicas",
    ] {
        assert_eq!(status[k], 3, "{k}: {set}");
    }
    assert_eq!(
        (
            status["observedGeneration"].clone(),
            status["collisionCount"].clone()
        ),
        (json!(1), json!(0))
    );
    let history = api::<ControllerRevision>(&server)
        .get(revision)
        .await
        .expect("revision");
    let history = json_of(&history);
    assert_eq!(history["revision"], 1);
    assert_eq!(history["metadata"]["ownerReferences"][0]["name"], "web");

    let pods = pods(&server, "app=nginx").await;
    for (i, p) in pods.iter().enumerate() {
        let name = format!("web-{i}");
        assert_eq!(p["metadata"]["name"], name);
        let labels = &p["metadata"]["labels"];
        assert_eq!(labels["statefulset.kubernetes.io/pod-name"], name);
        assert_eq!(labels["apps.kubernetes.io/pod-index"], i.to_string());
        assert_eq!(labels["controller-revision-hash"], revision);
        assert_eq!(
            (
                p["spec"]["hostname"].clone(),
                p["spec"]["subdomain"].clone()
            ),
            (json!(name), json!("nginx"))
        );
        assert_eq!(
            p["spec"]["volumes"][0],
            json!({"name": "www", "persistentVolumeClaim": {"claimName": format!("www-web-{i}")}})
        );
        assert_eq!(p["status"]["phase"], "Running");
    }
}

#[tokio::test]
async fn a_statefulset_rolls_out_a_new_template_from_the_highest_ordinal() {
    let server = simulated().await;
    let sets = api::<StatefulSet>(&server);
    sets.create(&PostParams::default(), &statefulset(3, "nginx:1.27"))
        .await
        .expect("create");
    let old = json_of(&sets.get("web").await.expect("get"))["status"]["currentRevision"].clone();
    let start = server.rv();
    let image = Patch::Strategic(json!({"spec": {"template": {"spec": {"containers": [
        {"name": "nginx", "image": "nginx:1.28"}]}}}}));
    sets.patch("web", &PatchParams::default(), &image)
        .await
        .expect("patch");
    let deleted: Vec<String> = events(&api::<Pod>(&server), start)
        .await
        .into_iter()
        .filter(|e| e.1 == "DELETED")
        .map(|e| e.2)
        .collect();
    assert_eq!(deleted, ["web-2", "web-1", "web-0"]);

    let set = json_of(&sets.get("web").await.expect("get"));
    let status = &set["status"];
    let new = status["updateRevision"].as_str().expect("revision");
    assert_ne!(json!(new), old);
    assert_eq!(status["currentRevision"], new, "{set}");
    assert_eq!(
        (
            status["updatedReplicas"].clone(),
            status["readyReplicas"].clone()
        ),
        (json!(3), json!(3))
    );
    assert_eq!(status["observedGeneration"], 2);
    for p in pods(&server, "app=nginx").await {
        assert_eq!(p["metadata"]["labels"]["controller-revision-hash"], new);
        assert_eq!(p["spec"]["containers"][0]["image"], "nginx:1.28");
    }
    let revisions = api::<ControllerRevision>(&server)
        .list(&ListParams::default())
        .await
        .expect("revisions");
    let numbers: Vec<i64> = revisions.items.iter().filter_map(|r| r.revision).collect();
    assert_eq!(numbers.len(), 2);
    assert!(numbers.contains(&1) && numbers.contains(&2));
    let claims = api::<PersistentVolumeClaim>(&server)
        .list(&ListParams::default())
        .await
        .expect("claims");
    assert_eq!(claims.items.len(), 3);
}

#[tokio::test]
async fn scaling_down_removes_the_highest_ordinals_and_keeps_the_claims() {
    let server = simulated().await;
    let sets = api::<StatefulSet>(&server);
    sets.create(&PostParams::default(), &statefulset(3, "nginx:1.27"))
        .await
        .expect("create");
    let start = server.rv();
    let scale = Patch::Merge(json!({"spec": {"replicas": 1}}));
    sets.patch("web", &PatchParams::default(), &scale)
        .await
        .expect("scale");
    let deleted: Vec<String> = events(&api::<Pod>(&server), start)
        .await
        .into_iter()
        .filter(|e| e.1 == "DELETED")
        .map(|e| e.2)
        .collect();
    assert_eq!(deleted, ["web-2", "web-1"]);
    let names: Vec<Value> = pods(&server, "app=nginx")
        .await
        .iter()
        .map(|p| p["metadata"]["name"].clone())
        .collect();
    assert_eq!(names, [json!("web-0")]);
    let set = json_of(&sets.get("web").await.expect("get"));
    assert_eq!(set["status"]["replicas"], 1, "{set}");
    let claims = api::<PersistentVolumeClaim>(&server)
        .list(&ListParams::default())
        .await
        .expect("claims");
    assert_eq!(claims.items.len(), 3);
}
