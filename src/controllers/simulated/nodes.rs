//! The simulated nodes: created Ready when the server starts, each with its Lease in
//! `kube-node-lease` renewed every 10 s as a kubelet's heartbeat (the node lifecycle controller
//! would mark a node whose lease expires `NotReady`; here no lease expires).

use std::time::Duration;

use serde_json::{json, Map, Value};

use super::{now, resource, SimulatedNode, Simulation};
use crate::context::Context;
use crate::controllers::{later, Work};
use crate::registry::store as rest;
use crate::state::State;
use crate::store::{GroupResource, ObjectKey};

/// How often a kubelet renews its lease.
pub const HEARTBEAT: Duration = Duration::from_secs(10);
/// How long a lease lasts (`nodeLeaseDurationSeconds`).
const LEASE_SECONDS: i64 = 40;
/// The label marking a node as one of the simulation's (its kubelet is simulated).
pub const SIMULATED: &str = "simulation.kubefake.io/node";
/// The kubelet version the nodes report.
const KUBELET_VERSION: &str = "v1.36.0";

/// Nodes.
pub fn nodes() -> GroupResource {
    GroupResource::new("", "nodes")
}

fn leases() -> GroupResource {
    GroupResource::new("coordination.k8s.io", "leases")
}

/// Creates every node of the simulation with its Lease, and starts their heartbeats.
pub async fn create(state: &State, ctx: &Context, simulation: &Simulation) {
    let (Some(node_res), Some(lease_res)) = (resource(state, &nodes()), resource(state, &leases()))
    else {
        return;
    };
    let ctx = ctx.for_controller("kubelet").managed_by("kubelet");
    for (index, node) in simulation.nodes.iter().enumerate() {
        let created = match rest::create(state, &ctx, &node_res, "", node_object(node, index)).await
        {
            Ok(created) => created,
            Err(e) => {
                tracing::warn!(error = %e, node = %node.name, "creating a simulated node");
                continue;
            }
        };
        let lease = lease_object(&created.value());
        if let Err(e) = rest::create(state, &ctx, &lease_res, "kube-node-lease", lease).await {
            tracing::warn!(error = %e, node = %node.name, "creating a node lease");
        }
        later(
            state,
            HEARTBEAT,
            Work::Simulated(super::Sim::Heartbeat(node.name.clone())),
        );
    }
}

/// Renews a node's lease and schedules the next renewal (while the node exists).
pub async fn heartbeat(state: &State, ctx: &Context, node: &str) {
    let snapshot = state.store.snapshot();
    if snapshot.get(&nodes(), &ObjectKey::new("", node)).is_none() {
        return;
    }
    let ctx = ctx.for_controller("kubelet").managed_by("kubelet");
    let key = ObjectKey::new("kube-node-lease", node);
    super::write_object(state, &ctx, &leases(), &key, &|lease: &mut Value| {
        lease["spec"]["renewTime"] = json!(micro_now());
        true
    })
    .await;
    later(
        state,
        HEARTBEAT,
        Work::Simulated(super::Sim::Heartbeat(node.to_string())),
    );
}

/// A `MicroTime` now (the lease's times have microseconds).
fn micro_now() -> String {
    chrono::Utc::now()
        .format("%Y-%m-%dT%H:%M:%S%.6fZ")
        .to_string()
}

/// The Node object of a simulated node: labelled, tainted, with capacity, addresses, a pod
/// CIDR and Ready conditions as a kubelet registers them.
pub fn node_object(node: &SimulatedNode, index: usize) -> Value {
    let mut labels = Map::new();
    for (k, v) in [
        ("kubernetes.io/hostname", node.name.as_str()),
        ("kubernetes.io/os", "linux"),
        ("kubernetes.io/arch", "amd64"),
        ("beta.kubernetes.io/os", "linux"),
        ("beta.kubernetes.io/arch", "amd64"),
        (SIMULATED, "true"),
    ] {
        labels.insert(k.into(), json!(v));
    }
    for (k, v) in &node.labels {
        labels.insert(k.clone(), json!(v));
    }
    let capacity: Map<String, Value> = node
        .capacity
        .iter()
        .map(|(k, v)| (k.clone(), json!(v)))
        .collect();
    let time = now();
    let condition = |kind: &str, status: &str, reason: &str, message: &str| {
        json!({"type": kind, "status": status, "lastHeartbeatTime": time,
            "lastTransitionTime": time, "reason": reason, "message": message})
    };
    let mut spec = json!({"podCIDR": pod_cidr(index), "podCIDRs": [pod_cidr(index)]});
    if !node.taints.is_empty() {
        spec["taints"] = json!(node.taints);
    }
    json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": node.name, "labels": labels,
            "annotations": {"node.alpha.kubernetes.io/ttl": "0"}},
        "spec": spec,
        "status": {
            "capacity": capacity, "allocatable": capacity,
            "conditions": [
                condition("MemoryPressure", "False", "KubeletHasSufficientMemory",
                    "kubelet has sufficient memory available"),
                condition("DiskPressure", "False", "KubeletHasNoDiskPressure",
                    "kubelet has no disk pressure"),
                condition("PIDPressure", "False", "KubeletHasSufficientPID",
                    "kubelet has sufficient PID available"),
                condition("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
            ],
            "addresses": [{"type": "InternalIP", "address": node_ip(index)},
                {"type": "Hostname", "address": node.name}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {"machineID": "", "systemUUID": "", "bootID": "",
                "kernelVersion": "6.8.0", "osImage": "kubefake", "containerRuntimeVersion":
                "kubefake://1.0.0", "kubeletVersion": KUBELET_VERSION,
                "kubeProxyVersion": "", "operatingSystem": "linux", "architecture": "amd64"},
        },
    })
}

/// The Lease of a node, owned by it.
fn lease_object(node: &Value) -> Value {
    json!({
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": node["metadata"]["name"], "namespace": "kube-node-lease",
            "ownerReferences": [{"apiVersion": "v1", "kind": "Node",
                "name": node["metadata"]["name"], "uid": node["metadata"]["uid"]}]},
        "spec": {"holderIdentity": node["metadata"]["name"],
            "leaseDurationSeconds": LEASE_SECONDS, "renewTime": micro_now()},
    })
}

/// The pod network of the node at `index`: `10.244.<index>.0/24`.
fn pod_cidr(index: usize) -> String {
    format!("10.244.{}.0/24", index % 256)
}

/// The node's address: `172.18.<index / 250>.<index % 250 + 2>`.
fn node_ip(index: usize) -> String {
    format!("172.18.{}.{}", (index / 250) % 256, index % 250 + 2)
}

/// A node's `InternalIP`.
pub fn internal_ip(node: &Value) -> Option<&str> {
    node["status"]["addresses"]
        .as_array()?
        .iter()
        .find(|a| a["type"] == "InternalIP")?["address"]
        .as_str()
}

/// Whether a node is one of the simulation's (a simulated kubelet runs its pods).
pub fn is_simulated(node: &Value) -> bool {
    node["metadata"]["labels"][SIMULATED] == "true"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_is_ready_with_its_capacity_and_labels() {
        let node = SimulatedNode::new("n1")
            .label("zone", "a")
            .capacity("cpu", "2")
            .taint("dedicated", "x", "NoSchedule");
        let obj = node_object(&node, 1);
        assert_eq!(obj["metadata"]["labels"]["kubernetes.io/hostname"], "n1");
        assert_eq!(obj["metadata"]["labels"]["zone"], "a");
        assert_eq!(obj["status"]["allocatable"]["cpu"], "2");
        assert_eq!(obj["status"]["allocatable"]["pods"], "110");
        assert_eq!(obj["spec"]["podCIDR"], "10.244.1.0/24");
        assert_eq!(obj["spec"]["taints"][0]["effect"], "NoSchedule");
        assert_eq!(internal_ip(&obj), Some("172.18.0.3"));
        let ready = &obj["status"]["conditions"][3];
        assert_eq!(
            (&ready["type"], &ready["status"]),
            (&json!("Ready"), &json!("True"))
        );
        assert!(is_simulated(&obj));
    }
}
