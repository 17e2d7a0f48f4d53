//! The simulated scheduler: binds each pending pod of `default-scheduler` (no `nodeName`, no
//! scheduling gates) to a node, through `pods/binding` as kube-scheduler does. A node fits when
//! it is Ready and schedulable, the pod tolerates its `NoSchedule`/`NoExecute` taints, its
//! labels satisfy the pod's `nodeSelector` and required node affinity, and its allocatable
//! CPU, memory and pod count hold the pod's requests beside those of the pods already there.
//! Among the nodes that fit, the one with the fewest pods wins (ties by name): pods spread as
//! the default scoring spreads them, deterministically. A pod no node fits gets
//! `PodScheduled=False` with the scheduler's message, and is tried again when it changes, when a
//! pod goes or finishes, and when a node comes or changes.
//! Not simulated: pod (anti-)affinity, topology spread constraints, preemption.

use std::collections::{BTreeMap, HashMap};

use serde_json::{json, Value};

use super::nodes::nodes;
use super::{milli, pods, resource};
use crate::context::Context;
use crate::registry::core::pod::bind_to_node;
use crate::state::State;
use crate::store::{ObjectKey, Snapshot};

/// What the pods bound to a node request.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Usage {
    /// Pods on the node (not finished).
    pub pods: i128,
    /// CPU requested, in millicores.
    pub cpu: i128,
    /// Memory requested, in milli-bytes.
    pub memory: i128,
}

/// Schedules a pod if it waits for the scheduler; whether it did (the kubelet has nothing to
/// do with it yet).
pub async fn schedule(state: &State, ctx: &Context, key: &ObjectKey) -> bool {
    let snapshot = state.store.snapshot();
    let Some(pod) = snapshot.get(&pods(), key) else {
        return true;
    };
    if !waits_for_scheduler(&pod.value()) || pod.is_deleting() {
        return false;
    }
    let all_nodes: Vec<Value> = snapshot
        .list(&nodes(), None)
        .map(|(_, n)| n.value().clone())
        .collect();
    let usage = usage(&snapshot);
    let ctx = ctx
        .for_controller("default-scheduler")
        .managed_by("kube-scheduler");
    match pick_node(&pod.value(), &all_nodes, &usage) {
        Ok(node) => {
            let Some(res) = resource(state, &pods()) else {
                return true;
            };
            if let Err(e) = bind_to_node(state, &ctx, &res, &key.namespace, &key.name, &node).await
            {
                tracing::warn!(error = %e, pod = %key.name, "binding a pod");
            }
        }
        Err(message) => unschedulable(state, &ctx, key, &message).await,
    }
    true
}

/// Queues every pending pod no node fitted for another try.
pub async fn retry_unschedulable(state: &State, ctx: &Context) {
    let snapshot = state.store.snapshot();
    let waiting: Vec<crate::controllers::Work> = snapshot
        .list(&pods(), None)
        .filter(|(_, p)| {
            waits_for_scheduler(&p.value())
                && p.value()["status"]["conditions"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|c| c["type"] == "PodScheduled" && c["reason"] == "Unschedulable")
        })
        .map(|(_, p)| {
            crate::controllers::Work::Simulated(super::Sim::Pod(super::key_of(&p.value())))
        })
        .collect();
    crate::controllers::enqueue(state, ctx, waiting).await;
}

/// Whether a pod waits for this scheduler.
fn waits_for_scheduler(pod: &Value) -> bool {
    let spec = &pod["spec"];
    spec["nodeName"].as_str().unwrap_or("").is_empty()
        && matches!(
            spec["schedulerName"].as_str(),
            None | Some("") | Some("default-scheduler")
        )
        && spec["schedulingGates"].as_array().is_none_or(Vec::is_empty)
        && !matches!(
            pod["status"]["phase"].as_str(),
            Some("Succeeded" | "Failed")
        )
}

/// Marks a pod `PodScheduled=False`, `Unschedulable`, with why (unless it already says so).
async fn unschedulable(state: &State, ctx: &Context, key: &ObjectKey, message: &str) {
    let condition = json!({"type": "PodScheduled", "status": "False",
        "reason": "Unschedulable", "message": message});
    super::write_status(state, ctx, &pods(), key, &|pod: &mut Value| {
        super::kubelet::set_condition(pod, condition.clone())
    })
    .await;
}

/// What the pods on each node request.
fn usage(snapshot: &Snapshot) -> HashMap<String, Usage> {
    let mut out: HashMap<String, Usage> = HashMap::new();
    for (_, pod) in snapshot.list(&pods(), None) {
        let pod_tree = pod.value();
        let node = pod_tree["spec"]["nodeName"].as_str().unwrap_or("");
        if node.is_empty() || super::kubelet::finished(&pod.value()) {
            continue;
        }
        let (cpu, memory) = requests(&pod.value());
        let u = out.entry(node.to_string()).or_default();
        u.pods += 1;
        u.cpu += cpu;
        u.memory += memory;
    }
    out
}

/// A pod's CPU and memory requests (milli-units): its containers' sum, or its largest init
/// container's when that is more, plus its overhead.
fn requests(pod: &Value) -> (i128, i128) {
    let each = |list: &Value| -> Vec<(i128, i128)> {
        let requested =
            |c: &Value, r: &str| milli(c["resources"]["requests"][r].as_str().unwrap_or("0"));
        list.as_array()
            .into_iter()
            .flatten()
            .map(|c| (requested(c, "cpu"), requested(c, "memory")))
            .collect()
    };
    let spec = &pod["spec"];
    let containers = each(&spec["containers"])
        .into_iter()
        .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    let init = each(&spec["initContainers"])
        .into_iter()
        .fold((0, 0), |a, b| (a.0.max(b.0), a.1.max(b.1)));
    let overhead = |r: &str| spec["overhead"][r].as_str().map_or(0, milli);
    (
        containers.0.max(init.0) + overhead("cpu"),
        containers.1.max(init.1) + overhead("memory"),
    )
}

/// The node a pod goes to, or the scheduler's message when none fits:
/// `0/3 nodes are available: 1 Insufficient cpu, 2 node(s) didn't match Pod's node
/// affinity/selector. preemption: ...`.
pub fn pick_node(
    pod: &Value,
    nodes: &[Value],
    usage: &HashMap<String, Usage>,
) -> Result<String, String> {
    let mut reasons: BTreeMap<String, usize> = BTreeMap::new();
    let mut best: Option<(i128, &str)> = None;
    for node in nodes {
        let name = node["metadata"]["name"].as_str().unwrap_or("");
        let used = usage.get(name).cloned().unwrap_or_default();
        match misfit(pod, node, &used) {
            Some(reason) => *reasons.entry(reason).or_default() += 1,
            None => {
                if best.is_none_or(|(pods, n)| (used.pods, name) < (pods, n)) {
                    best = Some((used.pods, name));
                }
            }
        }
    }
    if let Some((_, name)) = best {
        return Ok(name.to_string());
    }
    let total = nodes.len();
    let listed: Vec<String> = reasons.iter().map(|(r, n)| format!("{n} {r}")).collect();
    let mut message = format!("0/{total} nodes are available");
    if !listed.is_empty() {
        message.push_str(&format!(": {}", listed.join(", ")));
    }
    message.push_str(&format!(
        ". preemption: 0/{total} nodes are available: {total} Preemption is not helpful for scheduling."
    ));
    Err(message)
}

/// Why a node does not fit a pod, as the scheduler's filters word it; `None` when it fits.
fn misfit(pod: &Value, node: &Value, used: &Usage) -> Option<String> {
    let ready = node["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Ready" && c["status"] == "True");
    if !ready {
        return Some("node(s) had untolerated taint {node.kubernetes.io/not-ready: }".into());
    }
    let cordon = json!({"key": UNSCHEDULABLE_TAINT, "effect": "NoSchedule"});
    let tolerated = |t: &Value| pod_tolerations(pod).any(|tol| tolerates(tol, t));
    if node["spec"]["unschedulable"] == true && !tolerated(&cordon) {
        return Some("node(s) were unschedulable".into());
    }
    if let Some(taint) = untolerated_taint(pod, node) {
        return Some(format!("node(s) had untolerated taint {taint}"));
    }
    if !selector_matches(pod, node) {
        return Some("node(s) didn't match Pod's node affinity/selector".into());
    }
    let allocatable = &node["status"]["allocatable"];
    let (cpu, memory) = requests(pod);
    let max_pods = milli(allocatable["pods"].as_str().unwrap_or("110")) / 1000;
    if used.pods + 1 > max_pods {
        return Some("Too many pods".into());
    }
    let room = |resource: &str, used: i128, wanted: i128| {
        wanted > 0
            && allocatable[resource]
                .as_str()
                .is_some_and(|a| used + wanted > milli(a))
    };
    if room("cpu", used.cpu, cpu) {
        return Some("Insufficient cpu".into());
    }
    if room("memory", used.memory, memory) {
        return Some("Insufficient memory".into());
    }
    None
}

/// The taint a cordoned node (`spec.unschedulable`) is treated as having.
pub const UNSCHEDULABLE_TAINT: &str = "node.kubernetes.io/unschedulable";

/// A pod's tolerations.
fn pod_tolerations(pod: &Value) -> impl Iterator<Item = &Value> {
    pod["spec"]["tolerations"].as_array().into_iter().flatten()
}

/// The first taint of the node with one of `effects` the pod does not tolerate.
pub fn untolerated<'a>(pod: &Value, node: &'a Value, effects: &[&str]) -> Option<&'a Value> {
    node["spec"]["taints"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|t| effects.contains(&t["effect"].as_str().unwrap_or("")))
        .find(|taint| !pod_tolerations(pod).any(|tol| tolerates(tol, taint)))
}

/// The first `NoSchedule`/`NoExecute` taint of the node the pod does not tolerate, as the
/// scheduler prints it (`{key: value}`).
fn untolerated_taint(pod: &Value, node: &Value) -> Option<String> {
    untolerated(pod, node, &["NoSchedule", "NoExecute"]).map(|t| {
        format!(
            "{{{}: {}}}",
            t["key"].as_str().unwrap_or(""),
            t["value"].as_str().unwrap_or("")
        )
    })
}

/// `Toleration.ToleratesTaint`.
pub fn tolerates(toleration: &Value, taint: &Value) -> bool {
    let effect = toleration["effect"].as_str().unwrap_or("");
    if !effect.is_empty() && effect != taint["effect"].as_str().unwrap_or("") {
        return false;
    }
    let key = toleration["key"].as_str().unwrap_or("");
    let exists = toleration["operator"] == "Exists";
    if key.is_empty() {
        return exists;
    }
    if key != taint["key"].as_str().unwrap_or("") {
        return false;
    }
    exists || toleration["value"].as_str().unwrap_or("") == taint["value"].as_str().unwrap_or("")
}

/// The pod's `nodeSelector` and required node affinity against the node's labels (and name).
pub fn selector_matches(pod: &Value, node: &Value) -> bool {
    let labels = &node["metadata"]["labels"];
    let selected = pod["spec"]["nodeSelector"]
        .as_object()
        .into_iter()
        .flatten()
        .all(|(k, v)| labels.get(k) == Some(v));
    let terms = pod["spec"]["affinity"]["nodeAffinity"]
        ["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
        .as_array();
    let affinity = match terms {
        Some(terms) if !terms.is_empty() => terms.iter().any(|t| term_matches(t, node)),
        _ => true,
    };
    selected && affinity
}

/// One node selector term: every expression and field requirement holds.
fn term_matches(term: &Value, node: &Value) -> bool {
    let labels = &node["metadata"]["labels"];
    let name = json!(node["metadata"]["name"]);
    let expressions = term["matchExpressions"].as_array().into_iter().flatten();
    let fields = term["matchFields"].as_array().into_iter().flatten();
    let has_any = term["matchExpressions"]
        .as_array()
        .is_some_and(|a| !a.is_empty())
        || term["matchFields"]
            .as_array()
            .is_some_and(|a| !a.is_empty());
    has_any
        && expressions
            .into_iter()
            .all(|e| requirement(e, labels.get(e["key"].as_str().unwrap_or(""))))
        && fields.into_iter().all(|e| {
            let value = (e["key"] == "metadata.name").then_some(&name);
            requirement(e, value)
        })
}

/// One `NodeSelectorRequirement` against a label's value.
fn requirement(req: &Value, value: Option<&Value>) -> bool {
    let values: Vec<&str> = req["values"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let value = value.and_then(Value::as_str);
    let number = |s: &str| s.parse::<i64>().ok();
    match req["operator"].as_str().unwrap_or("") {
        "In" => value.is_some_and(|v| values.contains(&v)),
        "NotIn" => value.is_none_or(|v| !values.contains(&v)),
        "Exists" => value.is_some(),
        "DoesNotExist" => value.is_none(),
        "Gt" => {
            matches!((value.and_then(number), values.first().and_then(|v| number(v))), (Some(a), Some(b)) if a > b)
        }
        "Lt" => {
            matches!((value.and_then(number), values.first().and_then(|v| number(v))), (Some(a), Some(b)) if a < b)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controllers::simulated::{nodes::node_object, SimulatedNode};
    use rstest::rstest;

    fn cluster() -> Vec<Value> {
        vec![
            node_object(&SimulatedNode::new("a").label("zone", "1"), 0),
            node_object(
                &SimulatedNode::new("b")
                    .label("zone", "2")
                    .capacity("cpu", "1"),
                1,
            ),
            node_object(
                &SimulatedNode::new("c").taint("dedicated", "gpu", "NoSchedule"),
                2,
            ),
        ]
    }

    fn pod(spec: Value) -> Value {
        json!({"metadata": {"name": "p"}, "spec": spec})
    }

    #[rstest]
    #[case::spreads_to_the_emptiest(json!({}), &[("a", 2), ("b", 1)], Ok("b".to_string()))]
    #[case::taints_keep_pods_off(json!({}), &[("a", 2), ("b", 2)], Ok("a".to_string()))]
    #[case::tolerations(json!({"tolerations": [{"key": "dedicated", "operator": "Equal",
        "value": "gpu", "effect": "NoSchedule"}]}), &[("a", 1), ("b", 1)], Ok("c".to_string()))]
    #[case::node_selector(json!({"nodeSelector": {"zone": "2"}}), &[], Ok("b".to_string()))]
    #[case::affinity(json!({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution":
        {"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "NotIn",
        "values": ["1"]}]}]}}}}), &[], Ok("b".to_string()))]
    #[case::capacity(json!({"nodeSelector": {"zone": "2"}, "containers": [{"name": "c",
        "resources": {"requests": {"cpu": "1500m"}}}]}), &[],
        Err("0/3 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match Pod's node affinity/selector, 1 node(s) had untolerated taint {dedicated: gpu}. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.".to_string()))]
    fn picks_a_node(
        #[case] spec: Value,
        #[case] pods_on: &[(&str, i128)],
        #[case] expected: Result<String, String>,
    ) {
        let usage: HashMap<String, Usage> = pods_on
            .iter()
            .map(|(n, p)| {
                (
                    n.to_string(),
                    Usage {
                        pods: *p,
                        ..Usage::default()
                    },
                )
            })
            .collect();
        assert_eq!(pick_node(&pod(spec), &cluster(), &usage), expected);
    }

    #[test]
    fn cordoned_nodes_take_only_pods_tolerating_it() {
        let mut cordoned = node_object(&SimulatedNode::new("a"), 0);
        cordoned["spec"]["unschedulable"] = json!(true);
        let nodes = vec![cordoned];
        let usage = HashMap::new();
        let err = pick_node(&pod(json!({})), &nodes, &usage).unwrap_err();
        assert!(err.contains("1 node(s) were unschedulable"), "{err}");
        let tolerating = pod(json!({"tolerations": [{"key": UNSCHEDULABLE_TAINT,
            "operator": "Exists", "effect": "NoSchedule"}]}));
        assert_eq!(pick_node(&tolerating, &nodes, &usage), Ok("a".to_string()));
    }

    #[test]
    fn a_full_node_takes_no_more_pods() {
        let nodes = vec![node_object(
            &SimulatedNode::new("a").capacity("pods", "2"),
            0,
        )];
        let usage = HashMap::from([(
            "a".to_string(),
            Usage {
                pods: 2,
                ..Usage::default()
            },
        )]);
        let err = pick_node(&pod(json!({})), &nodes, &usage).unwrap_err();
        assert!(
            err.starts_with("0/1 nodes are available: 1 Too many pods."),
            "{err}"
        );
    }

    #[test]
    fn requests_count_init_containers_and_overhead() {
        let p = pod(json!({
            "containers": [{"resources": {"requests": {"cpu": "100m", "memory": "1Mi"}}},
                {"resources": {"requests": {"cpu": "200m"}}}],
            "initContainers": [{"resources": {"requests": {"cpu": "500m"}}}],
            "overhead": {"cpu": "10m"}}));
        assert_eq!(requests(&p), (510, 1_048_576_000));
    }
}
