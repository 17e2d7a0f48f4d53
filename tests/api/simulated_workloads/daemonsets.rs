//! The simulated DaemonSet controller: one pod per fitting node (a tainted node left out),
//! nodes joining and relabelled, and rolling updates.

use k8s_openapi::api::apps::v1::DaemonSet;
use k8s_openapi::api::core::v1::Node;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde_json::{json, Value};

use super::{json_of, pods, typed};
use crate::harness::{server_with, TestServer};

/// Two plain nodes and one tainted `dedicated=gpu:NoSchedule`.
async fn cluster() -> TestServer {
    let simulation = kubefake::Simulation {
        nodes: vec![
            kubefake::SimulatedNode::new("node-a"),
            kubefake::SimulatedNode::new("node-b"),
            kubefake::SimulatedNode::new("node-gpu").taint("dedicated", "gpu", "NoSchedule"),
        ],
    };
    server_with(kubefake::Server::builder().simulation(simulation)).await
}

fn daemonsets(server: &TestServer) -> Api<DaemonSet> {
    Api::namespaced(server.client.clone(), "default")
}

fn daemonset(node_selector: Value) -> DaemonSet {
    typed(json!({"metadata": {"name": "agent"}, "spec": {
        "selector": {"matchLabels": {"app": "agent"}},
        "template": {"metadata": {"labels": {"app": "agent"}},
            "spec": {"nodeSelector": node_selector,
                "containers": [{"name": "agent", "image": "agent:1"}]}}}}))
}

/// The nodes the DaemonSet's pods run on.
async fn placed(server: &TestServer) -> Vec<String> {
    let mut nodes: Vec<String> = pods(server, "app=agent")
        .await
        .iter()
        .filter(|p| p["metadata"].get("deletionTimestamp").is_none())
        .map(|p| p["spec"]["nodeName"].as_str().unwrap_or("").to_string())
        .collect();
    nodes.sort();
    nodes
}

#[tokio::test]
async fn a_daemonset_runs_one_pod_per_fitting_node() {
    let server = cluster().await;
    daemonsets(&server)
        .create(&PostParams::default(), &daemonset(json!({})))
        .await
        .expect("create");
    assert_eq!(placed(&server).await, ["node-a", "node-b"]);
    for p in pods(&server, "app=agent").await {
        let node = p["spec"]["nodeName"].as_str().expect("node");
        let terms = &p["spec"]["affinity"]["nodeAffinity"]
            ["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"];
        assert_eq!(
            terms,
            &json!([{"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}])
        );
        let tolerated: Vec<&str> = p["spec"]["tolerations"]
            .as_array()
            .expect("tolerations")
            .iter()
            .filter_map(|t| t["key"].as_str())
            .collect();
        assert!(
            tolerated.contains(&"node.kubernetes.io/not-ready"),
            "{tolerated:?}"
        );
        assert_eq!(p["metadata"]["labels"]["pod-template-generation"], "1");
        assert!(p["metadata"]["labels"]["controller-revision-hash"].is_string());
        assert_eq!(p["status"]["phase"], "Running");
    }
    let ds = json_of(&daemonsets(&server).get("agent").await.expect("get"));
    assert_eq!(
        ds["status"],
        json!({"desiredNumberScheduled": 2, "currentNumberScheduled": 2,
            "numberMisscheduled": 0, "numberReady": 2, "numberAvailable": 2,
            "updatedNumberScheduled": 2, "observedGeneration": 1})
    );
}

#[tokio::test]
async fn nodes_joining_and_relabelled_move_daemon_pods() {
    let server = cluster().await;
    daemonsets(&server)
        .create(&PostParams::default(), &daemonset(json!({"role": "edge"})))
        .await
        .expect("create");
    assert!(placed(&server).await.is_empty());
    let nodes: Api<Node> = Api::all(server.client.clone());
    let edge = Patch::Merge(json!({"metadata": {"labels": {"role": "edge"}}}));
    nodes
        .patch("node-a", &PatchParams::default(), &edge)
        .await
        .expect("label");
    assert_eq!(placed(&server).await, ["node-a"]);

    let joining: Node = typed(json!({"metadata": {"name": "node-new", "labels": {
            "role": "edge", "simulation.kubefake.io/node": "true"}},
        "status": {"conditions": [{"type": "Ready", "status": "True"}],
            "allocatable": {"cpu": "4", "memory": "8Gi", "pods": "110"}}}));
    nodes
        .create(&PostParams::default(), &joining)
        .await
        .expect("node");
    assert_eq!(placed(&server).await, ["node-a", "node-new"]);

    let plain = Patch::Merge(json!({"metadata": {"labels": {"role": null}}}));
    nodes
        .patch("node-a", &PatchParams::default(), &plain)
        .await
        .expect("unlabel");
    assert_eq!(placed(&server).await, ["node-new"]);
    let ds = json_of(&daemonsets(&server).get("agent").await.expect("get"));
    assert_eq!(ds["status"]["desiredNumberScheduled"], 1, "{ds}");
    assert_eq!(ds["status"]["numberMisscheduled"], 0, "{ds}");
}

#[tokio::test]
async fn a_daemonset_rolls_out_a_new_template() {
    let server = cluster().await;
    let api = daemonsets(&server);
    api.create(&PostParams::default(), &daemonset(json!({})))
        .await
        .expect("create");
    let before: Vec<Value> = pods(&server, "app=agent").await;
    let image = Patch::Strategic(json!({"spec": {"template": {"spec": {"containers": [
        {"name": "agent", "image": "agent:2"}]}}}}));
    api.patch("agent", &PatchParams::default(), &image)
        .await
        .expect("patch");
    let after = pods(&server, "app=agent").await;
    assert_eq!(after.len(), 2);
    for p in &after {
        assert_eq!(p["spec"]["containers"][0]["image"], "agent:2");
        assert_eq!(p["metadata"]["labels"]["pod-template-generation"], "2");
        assert!(!before
            .iter()
            .any(|b| b["metadata"]["name"] == p["metadata"]["name"]));
    }
    let ds = json_of(&api.get("agent").await.expect("get"));
    assert_eq!(ds["status"]["updatedNumberScheduled"], 2, "{ds}");
    assert_eq!(ds["status"]["numberAvailable"], 2, "{ds}");
    assert_eq!(ds["status"]["observedGeneration"], 2, "{ds}");
}
