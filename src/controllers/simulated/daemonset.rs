//! The DaemonSet controller (apps/v1): one pod per node that fits the template (its
//! `nodeName`, `nodeSelector` and required node affinity, and taints it tolerates with the
//! tolerations the controller adds to every daemon pod: `not-ready` and `unreachable` for
//! `NoExecute`, the memory, disk and PID pressure and `unschedulable` taints for `NoSchedule`,
//! and `network-unavailable` for host-network pods), each pinned to its node by a required node
//! affinity on `metadata.name` and labelled `controller-revision-hash` and
//! `pod-template-generation`. Pods on nodes that no longer fit are deleted (those tolerating
//! the node's `NoExecute` taints stay), as are extra pods on a node, succeeded pods and, a
//! second after they failed, failed ones. Nodes created, changed or deleted reconcile every
//! DaemonSet (the Node strategy queues [`super::Sim::DaemonSets`]). Templates are recorded in
//! ControllerRevisions ([`super::history`]); `RollingUpdate` replaces out-of-date pods within
//! `maxUnavailable`, or with `maxSurge` starts the new pod beside the old one and deletes the
//! old one once the new one is available. The status carries `desiredNumberScheduled`,
//! `currentNumberScheduled`, `numberReady`, `numberAvailable`, `numberUnavailable`,
//! `updatedNumberScheduled`, `numberMisscheduled` and `observedGeneration`.
//!
//! Not simulated: the failed-pod back-off beyond its first second, adoption of orphan pods and
//! revisions, hash collisions between revisions (`collisionCount` is never raised; the
//! DaemonSet waits), events; a DaemonSet being deleted keeps its last status, as the real
//! controller leaves it.

use std::collections::{BTreeMap, HashSet};
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::{json, Value};

use super::history::{self, POD_REVISION_LABEL};
use super::nodes::nodes;
use super::replicaset::{available, is_ready};
use super::scheduler::{selector_matches, untolerated};
use super::{controlled_by, create_pod, delete, pods, write_status, PodName, Sim, Workload};
use crate::context::Context;
use crate::controllers::{later_once, Work};
use crate::registry::apps::daemonset::TEMPLATE_GENERATION;
use crate::registry::object_meta::meta_str;
use crate::state::State;
use crate::store::{GroupResource, ObjectKey, Snapshot};

/// The label with the template generation a daemon pod was made from.
pub const TEMPLATE_GENERATION_LABEL: &str = "pod-template-generation";
const CONTROLLER: &str = "daemon-set-controller";
/// How long a failed daemon pod stays before it is replaced.
const FAILED_POD_BACK_OFF: Duration = Duration::from_secs(1);

fn daemonsets() -> GroupResource {
    GroupResource::new("apps", "daemonsets")
}

/// Queues every DaemonSet's reconcile (the nodes changed): each once, within the request's
/// step budget.
pub async fn reconcile_all(state: &State, ctx: &Context) {
    let work: Vec<crate::controllers::Work> = state
        .store
        .snapshot()
        .list(&daemonsets(), None)
        .map(|(_, d)| {
            let key = super::key_of(&d.value());
            crate::controllers::Work::Simulated(super::Sim::Workload(
                super::Workload::DaemonSet,
                key,
            ))
        })
        .collect();
    crate::controllers::enqueue(state, ctx, work).await;
}

/// Reconciles one DaemonSet (`syncDaemonSet`).
pub async fn reconcile(state: &State, ctx: &Context, key: &ObjectKey) {
    let snapshot = state.store.snapshot();
    let Some(stored) = snapshot.get(&daemonsets(), key) else {
        return;
    };
    if stored.is_deleting() {
        return;
    }
    let ds = stored.value().clone();
    let ctx = crate::controllers::kcm(ctx, CONTROLLER);
    let uid = meta_str(&ds, "uid");
    let revisions = history::owned(&snapshot, &key.namespace, uid);
    let Some((hash, old)) = current_revision(state, &ctx, &ds, &revisions).await else {
        return;
    };
    let all_nodes = node_list(&snapshot);
    let owned = daemon_pods(&snapshot, &ds);
    let now = Utc::now();
    let plan = plan(&ds, &all_nodes, &owned, &hash, now);
    let template = pod_template(&ds, &hash);
    let prefix = format!("{}-", key.name);
    for node in &plan.create {
        let pinned = pin_to_node(&template, node);
        create_pod(state, &ctx, &ds, &pinned, PodName::Generate(&prefix), &[]).await;
    }
    for name in &plan.delete {
        delete(state, &ctx, &pods(), &ObjectKey::new(&key.namespace, name)).await;
    }
    cleanup_history(state, &ctx, &ds, &old).await;
    // The status counts the pods as they are after this sync's changes.
    let snapshot = state.store.snapshot();
    let owned = daemon_pods(&snapshot, &ds);
    let (status, ready_later) = status_of(&ds, &all_nodes, &owned, &hash);
    write_status(state, &ctx, &daemonsets(), key, &|d: &mut Value| {
        apply_status(&mut d["status"], &status)
    })
    .await;
    if let Some(delay) = [plan.recheck, ready_later].into_iter().flatten().min() {
        let work = Work::Simulated(Sim::Workload(Workload::DaemonSet, key.clone()));
        later_once(state, delay, work);
    }
}

fn node_list(snapshot: &Snapshot) -> Vec<Value> {
    snapshot
        .list(&nodes(), None)
        .map(|(_, n)| n.value().clone())
        .collect()
}

fn daemon_pods(snapshot: &Snapshot, ds: &Value) -> Vec<Value> {
    let uid = meta_str(ds, "uid");
    snapshot
        .list(&pods(), Some(meta_str(ds, "namespace")))
        .filter(|(_, p)| controlled_by(&p.value(), uid))
        .map(|(_, p)| p.value().clone())
        .collect()
}

/// `constructHistory`: the hash of the revision recording the DaemonSet's template (created,
/// or renumbered to come after the others), and the other revisions.
async fn current_revision(
    state: &State,
    ctx: &Context,
    ds: &Value,
    revisions: &[Value],
) -> Option<(String, Vec<Value>)> {
    let template = &ds["spec"]["template"];
    let data = history::data_of(template);
    let (current, old): (Vec<Value>, Vec<Value>) =
        revisions.iter().cloned().partition(|r| r["data"] == data);
    let next = old
        .iter()
        .map(history::number)
        .max()
        .unwrap_or(0)
        .saturating_add(1);
    let current = match current.into_iter().max_by_key(history::number) {
        Some(r) if history::number(&r) < next => history::renumber(state, ctx, &r, next).await,
        Some(r) => r,
        None => {
            let collisions = ds["status"]["collisionCount"].as_i64().unwrap_or(0);
            let fresh = history::new_revision(ds, template, next, collisions, POD_REVISION_LABEL);
            let stored = history::create(state, ctx, fresh).await?;
            // A revision of another template under this name: not handled (see module docs).
            if stored["data"] != data {
                tracing::warn!(revision = %meta_str(&stored, "name"), "revision name collision");
                return None;
            }
            stored
        }
    };
    let hash = current["metadata"]["labels"][POD_REVISION_LABEL]
        .as_str()
        .unwrap_or_else(|| meta_str(&current, "name"))
        .to_string();
    Some((hash, old))
}

/// `cleanupHistory`: old revisions no pod uses, beyond `revisionHistoryLimit`, oldest first.
async fn cleanup_history(state: &State, ctx: &Context, ds: &Value, old: &[Value]) {
    let limit =
        usize::try_from(ds["spec"]["revisionHistoryLimit"].as_i64().unwrap_or(10)).unwrap_or(0);
    if old.len() <= limit {
        return;
    }
    let owned = daemon_pods(&state.store.snapshot(), ds);
    let live: HashSet<&str> = owned
        .iter()
        .filter_map(|p| p["metadata"]["labels"][POD_REVISION_LABEL].as_str())
        .collect();
    let mut idle: Vec<Value> = old
        .iter()
        .filter(|r| {
            let hash = r["metadata"]["labels"][POD_REVISION_LABEL].as_str();
            !hash.is_some_and(|h| live.contains(h))
        })
        .cloned()
        .collect();
    idle.sort_by_key(history::number);
    idle.truncate(old.len() - limit);
    history::delete_all(state, ctx, &idle).await;
}

/// The template daemon pods are made from (`CreatePodTemplate`): the daemon tolerations, the
/// template generation and the revision's hash.
pub fn pod_template(ds: &Value, hash: &str) -> Value {
    let mut template = ds["spec"]["template"].clone();
    add_daemon_tolerations(&mut template["spec"]);
    if !template["metadata"]["labels"].is_object() {
        template["metadata"]["labels"] = json!({});
    }
    let labels = &mut template["metadata"]["labels"];
    if let Some(generation) = ds["metadata"]["annotations"][TEMPLATE_GENERATION].as_str() {
        labels[TEMPLATE_GENERATION_LABEL] = json!(generation);
    }
    labels[POD_REVISION_LABEL] = json!(hash);
    template
}

/// `AddOrUpdateDaemonPodTolerations`: what daemon pods tolerate whatever their template says.
pub fn add_daemon_tolerations(spec: &mut Value) {
    let mut wanted = vec![
        ("node.kubernetes.io/not-ready", "NoExecute"),
        ("node.kubernetes.io/unreachable", "NoExecute"),
        ("node.kubernetes.io/disk-pressure", "NoSchedule"),
        ("node.kubernetes.io/memory-pressure", "NoSchedule"),
        ("node.kubernetes.io/pid-pressure", "NoSchedule"),
        ("node.kubernetes.io/unschedulable", "NoSchedule"),
    ];
    if spec["hostNetwork"] == true {
        wanted.push(("node.kubernetes.io/network-unavailable", "NoSchedule"));
    }
    if !spec["tolerations"].is_array() {
        spec["tolerations"] = json!([]);
    }
    let Some(list) = spec.get_mut("tolerations").and_then(Value::as_array_mut) else {
        return;
    };
    for (key, effect) in wanted {
        let toleration = json!({"key": key, "operator": "Exists", "effect": effect});
        if !list.contains(&toleration) {
            list.push(toleration);
        }
    }
}

/// `ReplaceDaemonSetPodNodeNameNodeAffinity`: the required node affinity becomes the one term
/// naming the node.
pub fn pin_to_node(template: &Value, node: &str) -> Value {
    let mut pod = template.clone();
    let term = json!({"matchFields": [{"key": "metadata.name", "operator": "In",
        "values": [node]}]});
    let affinity = &mut pod["spec"]["affinity"];
    if !affinity.is_object() {
        *affinity = json!({});
    }
    if !affinity["nodeAffinity"].is_object() {
        affinity["nodeAffinity"] = json!({});
    }
    let required = &mut affinity["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"];
    if !required.is_object() {
        *required = json!({});
    }
    required["nodeSelectorTerms"] = json!([term]);
    pod
}

/// `GetTargetNodeName`: the node a daemon pod is bound or pinned to.
pub fn target_node(pod: &Value) -> Option<&str> {
    if let Some(node) = pod["spec"]["nodeName"].as_str().filter(|n| !n.is_empty()) {
        return Some(node);
    }
    let terms = &pod["spec"]["affinity"]["nodeAffinity"]
        ["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"];
    list(terms)
        .flat_map(|t| list(&t["matchFields"]))
        .find(|e| e["key"] == "metadata.name" && e["operator"] == "In")
        .and_then(|e| match e["values"].as_array() {
            Some(values) if values.len() == 1 => values[0].as_str(),
            _ => None,
        })
}

/// `NodeShouldRunDaemonPod`: whether a pod should start on the node, and whether one there
/// should keep running (it tolerates the node's `NoExecute` taints but not its `NoSchedule`
/// ones).
pub fn should_run(ds: &Value, node: &Value) -> (bool, bool) {
    let name = meta_str(node, "name");
    let wanted = ds["spec"]["template"]["spec"]["nodeName"]
        .as_str()
        .unwrap_or("");
    if !wanted.is_empty() && wanted != name {
        return (false, false);
    }
    let mut pod = ds["spec"]["template"].clone();
    add_daemon_tolerations(&mut pod["spec"]);
    if !selector_matches(&pod, node) {
        return (false, false);
    }
    if untolerated(&pod, node, &["NoSchedule", "NoExecute"]).is_some() {
        return (false, untolerated(&pod, node, &["NoExecute"]).is_none());
    }
    (true, true)
}

/// What one sync does to a DaemonSet's pods.
#[derive(Debug, Default, PartialEq)]
pub struct Plan {
    /// The nodes to start a pod on.
    pub create: Vec<String>,
    /// The pods to delete.
    pub delete: Vec<String>,
    /// When to look again (a failed pod's back-off, a new pod becoming available).
    pub recheck: Option<Duration>,
}

/// The pods of a DaemonSet by the node they are for (`getNodesToDaemonPods`), without the
/// finished ones being deleted.
fn by_node(pods: &[Value]) -> BTreeMap<String, Vec<&Value>> {
    let mut out: BTreeMap<String, Vec<&Value>> = BTreeMap::new();
    for pod in pods {
        if finished(pod) && deleting(pod) {
            continue;
        }
        if let Some(node) = target_node(pod) {
            out.entry(node.to_string()).or_default().push(pod);
        }
    }
    out
}

/// One sync of a DaemonSet (`manage`, then `rollingUpdate` once nothing is in flight).
pub fn plan(ds: &Value, nodes: &[Value], pods: &[Value], hash: &str, now: DateTime<Utc>) -> Plan {
    let mapped = by_node(pods);
    let mut out = Plan::default();
    // `AllowsSurge` asks for a surge of at least one pod out of one.
    let surge = max_surge(ds, 1) > 0;
    for node in nodes {
        let on_node = mapped.get(meta_str(node, "name")).map(Vec::as_slice);
        pods_for_node(ds, node, on_node, hash, surge, now, &mut out);
    }
    let running: HashSet<&str> = nodes.iter().map(|n| meta_str(n, "name")).collect();
    for (node, on_node) in &mapped {
        if !running.contains(node.as_str()) {
            let unscheduled = on_node.iter().filter(|p| target_bound(p).is_none());
            out.delete.extend(unscheduled.map(|p| name_of(p)));
        }
    }
    let in_flight = !out.create.is_empty() || !out.delete.is_empty();
    if !in_flight && ds["spec"]["updateStrategy"]["type"] == "RollingUpdate" {
        rolling_update(ds, nodes, &mapped, hash, &mut out);
    }
    out
}

/// `podsShouldBeOnNode`.
fn pods_for_node(
    ds: &Value,
    node: &Value,
    on_node: Option<&[&Value]>,
    hash: &str,
    surge: bool,
    now: DateTime<Utc>,
    out: &mut Plan,
) {
    let name = meta_str(node, "name");
    let (run, keep) = should_run(ds, node);
    let Some(on_node) = on_node else {
        if run {
            out.create.push(name.to_string());
        }
        return;
    };
    if !keep {
        let live = on_node.iter().filter(|p| !deleting(p));
        out.delete.extend(live.map(|p| name_of(p)));
        return;
    }
    let mut running: Vec<&Value> = Vec::new();
    for pod in on_node.iter().filter(|p| !deleting(p)) {
        match phase(pod) {
            "Failed" => match failed_for(pod, now) {
                Some(left) => out.recheck = Some(out.recheck.map_or(left, |r| r.min(left))),
                None => out.delete.push(name_of(pod)),
            },
            "Succeeded" => out.delete.push(name_of(pod)),
            _ => running.push(pod),
        }
    }
    running.sort_by_key(|p| oldest_first(p));
    if !surge {
        out.delete
            .extend(running.iter().skip(1).map(|p| name_of(p)));
        return;
    }
    if running.is_empty() && run {
        out.create.push(name.to_string());
    }
    if running.len() <= 1 {
        return;
    }
    // Surging: the oldest new and oldest old pod may run side by side, until the new one is
    // available or the old one is not ready.
    let min_ready = min_ready_seconds(ds);
    let (mut new, mut old) = (None, None);
    for pod in running {
        let slot = if updated(ds, pod, hash) {
            &mut new
        } else {
            &mut old
        };
        if slot.is_none() {
            *slot = Some(pod);
        } else {
            out.delete.push(name_of(pod));
        }
    }
    if let (Some(new), Some(old)) = (new, old) {
        if !is_ready(old) || available(new, min_ready).0 {
            out.delete.push(name_of(old));
        }
    }
}

/// How much longer a failed pod waits before it is replaced (`None`: no longer).
fn failed_for(pod: &Value, now: DateTime<Utc>) -> Option<Duration> {
    let finished = list(&pod["status"]["containerStatuses"])
        .filter_map(|c| c["state"]["terminated"]["finishedAt"].as_str())
        .filter_map(|t| DateTime::parse_from_rfc3339(t).ok())
        .map(|t| t.with_timezone(&Utc))
        .max()?;
    let back_off = chrono::Duration::from_std(FAILED_POD_BACK_OFF).ok()?;
    (finished + back_off - now)
        .to_std()
        .ok()
        .filter(|d| !d.is_zero())
}

/// `rollingUpdate`: out-of-date pods replaced within `maxUnavailable`, or surged within
/// `maxSurge`.
fn rolling_update(
    ds: &Value,
    nodes: &[Value],
    mapped: &BTreeMap<String, Vec<&Value>>,
    hash: &str,
    out: &mut Plan,
) {
    let wanted: Vec<&Value> = nodes.iter().filter(|n| should_run(ds, n).0).collect();
    let mut nodes_with_pods: BTreeMap<&str, &[&Value]> = mapped
        .iter()
        .map(|(n, pods)| (n.as_str(), pods.as_slice()))
        .collect();
    for node in &wanted {
        nodes_with_pods.entry(meta_str(node, "name")).or_insert(&[]);
    }
    let desired = wanted.len() as i64;
    let surge = max_surge(ds, desired);
    let mut unavailable_limit = max_unavailable(ds, desired);
    if desired > 0 && surge == 0 && unavailable_limit == 0 {
        unavailable_limit = 1;
    }
    if surge == 0 {
        replace_within_unavailability(ds, &nodes_with_pods, hash, unavailable_limit, out);
    } else {
        let node_of = |name: &str| nodes.iter().find(|n| meta_str(n, "name") == name);
        surge_within_limit(ds, &nodes_with_pods, &node_of, hash, surge, desired, out);
    }
}

/// The newest and the old pod of a node, when it has at most one of each
/// (`findUpdatedPodsOnNode`).
fn updated_and_old<'a>(
    ds: &Value,
    pods: &[&'a Value],
    hash: &str,
) -> Option<(Option<&'a Value>, Option<&'a Value>)> {
    let (mut new, mut old) = (None, None);
    for pod in pods.iter().filter(|p| !deleting(p)) {
        let slot = if updated(ds, pod, hash) {
            &mut new
        } else {
            &mut old
        };
        if slot.is_some() {
            return None;
        }
        *slot = Some(*pod);
    }
    Some((new, old))
}

/// The `maxSurge: 0` half of `rollingUpdate`.
fn replace_within_unavailability(
    ds: &Value,
    nodes: &BTreeMap<&str, &[&Value]>,
    hash: &str,
    limit: i64,
    out: &mut Plan,
) {
    let min_ready = min_ready_seconds(ds);
    let mut unavailable = 0;
    let mut replace: Vec<String> = Vec::new();
    let mut candidates: Vec<String> = Vec::new();
    for pods in nodes.values() {
        match updated_and_old(ds, pods, hash) {
            None | Some((None, None)) | Some((Some(_), Some(_))) => unavailable += 1,
            Some((Some(new), None)) => {
                if !available(new, min_ready).0 {
                    unavailable += 1;
                }
            }
            Some((None, Some(old))) => {
                if !available(old, min_ready).0 {
                    replace.push(name_of(old));
                    unavailable += 1;
                } else if unavailable < limit {
                    candidates.push(name_of(old));
                }
            }
        }
    }
    let room = usize::try_from((limit - unavailable).max(0)).unwrap_or(0);
    out.delete.extend(replace);
    out.delete.extend(candidates.into_iter().take(room));
}

/// The `maxSurge` half of `rollingUpdate`.
fn surge_within_limit<'a>(
    ds: &Value,
    nodes: &BTreeMap<&str, &[&Value]>,
    node_of: &dyn Fn(&str) -> Option<&'a Value>,
    hash: &str,
    surge: i64,
    desired: i64,
    out: &mut Plan,
) {
    let min_ready = min_ready_seconds(ds);
    let (mut surging, mut available_count) = (0, 0);
    let mut allowed: Vec<String> = Vec::new();
    let mut candidates: Vec<String> = Vec::new();
    let mut sunset: Vec<String> = Vec::new();
    for (node, pods) in nodes {
        let Some((new, old)) = updated_and_old(ds, pods, hash) else {
            surging += 1;
            continue;
        };
        if old.or(new).is_some_and(|p| available(p, min_ready).0) {
            available_count += 1;
        }
        let fits = || node_of(node).is_some_and(|n| should_run(ds, n).0);
        match (new, old) {
            (_, None) => {}
            (None, Some(old)) if !available(old, min_ready).0 => {
                if fits() {
                    allowed.push(node.to_string());
                } else {
                    out.delete.push(name_of(old));
                }
            }
            (None, Some(old)) => {
                if !fits() {
                    sunset.push(name_of(old));
                } else if surging < surge {
                    candidates.push(node.to_string());
                }
            }
            (Some(new), Some(old)) => {
                if available(new, min_ready).0 {
                    out.delete.push(name_of(old));
                } else {
                    surging += 1;
                }
            }
        }
    }
    let deletable = usize::try_from((available_count - desired).max(0)).unwrap_or(0);
    out.delete.extend(sunset.into_iter().take(deletable));
    let room = usize::try_from((surge - surging).max(0)).unwrap_or(0);
    out.create.extend(allowed);
    out.create.extend(candidates.into_iter().take(room));
}

/// `updateDaemonSetStatus`: the counts over the nodes; and when to look again for pods ready
/// but not yet available.
pub fn status_of(
    ds: &Value,
    nodes: &[Value],
    pods: &[Value],
    hash: &str,
) -> (Value, Option<Duration>) {
    let mapped = by_node(pods);
    let min_ready = min_ready_seconds(ds);
    let (mut desired, mut current, mut misscheduled) = (0, 0, 0);
    let (mut ready, mut available_count, mut updated_count) = (0, 0, 0);
    for node in nodes {
        let (run, _) = should_run(ds, node);
        let on_node = mapped.get(meta_str(node, "name"));
        if !run {
            if on_node.is_some() {
                misscheduled += 1;
            }
            continue;
        }
        desired += 1;
        let Some(oldest) = on_node.and_then(|p| p.iter().min_by_key(|p| oldest_first(p))) else {
            continue;
        };
        current += 1;
        if is_ready(oldest) {
            ready += 1;
            if available(oldest, min_ready).0 {
                available_count += 1;
            }
        }
        if updated(ds, oldest, hash) {
            updated_count += 1;
        }
    }
    let status = json!({
        "desiredNumberScheduled": desired, "currentNumberScheduled": current,
        "numberMisscheduled": misscheduled, "numberReady": ready,
        "numberAvailable": available_count, "numberUnavailable": desired - available_count,
        "updatedNumberScheduled": updated_count,
        "observedGeneration": ds["metadata"]["generation"].as_i64().unwrap_or(1),
    });
    let recheck = (min_ready > 0 && ready != available_count)
        .then(|| Duration::from_secs(u64::try_from(min_ready).unwrap_or(0)));
    (status, recheck)
}

/// Writes computed counts into a stored status; the counts the API omits when zero are left
/// out. Whether anything changed.
pub fn apply_status(status: &mut Value, computed: &Value) -> bool {
    if !status.is_object() {
        *status = json!({});
    }
    const OMITTED_AT_ZERO: [&str; 4] = [
        "numberAvailable",
        "numberUnavailable",
        "updatedNumberScheduled",
        "observedGeneration",
    ];
    let mut changed = false;
    for (k, v) in computed.as_object().into_iter().flatten() {
        let omitted = v.as_i64() == Some(0) && OMITTED_AT_ZERO.contains(&k.as_str());
        let old = status.get(k).cloned();
        if omitted {
            if old.is_some() {
                if let Some(o) = status.as_object_mut() {
                    o.remove(k);
                }
                changed = true;
            }
        } else if old.as_ref() != Some(v) {
            status[k] = v.clone();
            changed = true;
        }
    }
    changed
}

/// `SurgeCount`: `maxSurge` against the desired count (percentages round up).
fn max_surge(ds: &Value, desired: i64) -> i64 {
    rolling_value(ds, "maxSurge", desired)
}

/// `UnavailableCount`: `maxUnavailable` against the desired count (percentages round up).
fn max_unavailable(ds: &Value, desired: i64) -> i64 {
    rolling_value(ds, "maxUnavailable", desired)
}

fn rolling_value(ds: &Value, key: &str, desired: i64) -> i64 {
    let strategy = &ds["spec"]["updateStrategy"];
    if strategy["type"] != "RollingUpdate" {
        return 0;
    }
    let v = &strategy["rollingUpdate"][key];
    if let Some(n) = v.as_i64() {
        return n;
    }
    let percent: i64 = v
        .as_str()
        .and_then(|s| s.strip_suffix('%'))
        .and_then(|p| p.parse().ok())
        .unwrap_or(0);
    (percent.saturating_mul(desired) + 99) / 100
}

/// `IsPodUpdated`: the pod carries the current hash or template generation.
fn updated(ds: &Value, pod: &Value, hash: &str) -> bool {
    let labels = &pod["metadata"]["labels"];
    let generation = ds["metadata"]["annotations"][TEMPLATE_GENERATION].as_str();
    labels[POD_REVISION_LABEL] == hash
        || generation.is_some_and(|g| labels[TEMPLATE_GENERATION_LABEL] == g)
}

/// `podByCreationTimestampAndPhase`: bound pods first, then the oldest, then by name.
fn oldest_first(pod: &Value) -> (bool, String, String) {
    (
        target_bound(pod).is_none(),
        meta_str(pod, "creationTimestamp").to_string(),
        meta_str(pod, "name").to_string(),
    )
}

fn target_bound(pod: &Value) -> Option<&str> {
    pod["spec"]["nodeName"].as_str().filter(|n| !n.is_empty())
}

fn min_ready_seconds(ds: &Value) -> i64 {
    ds["spec"]["minReadySeconds"].as_i64().unwrap_or(0)
}

fn finished(pod: &Value) -> bool {
    matches!(phase(pod), "Succeeded" | "Failed")
}

fn phase(pod: &Value) -> &str {
    pod["status"]["phase"].as_str().unwrap_or("")
}

fn deleting(obj: &Value) -> bool {
    obj["metadata"].get("deletionTimestamp").is_some()
}

fn name_of(pod: &Value) -> String {
    meta_str(pod, "name").to_string()
}

fn list(v: &Value) -> impl Iterator<Item = &Value> {
    v.as_array().into_iter().flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controllers::simulated::nodes::node_object;
    use crate::controllers::simulated::SimulatedNode;
    use rstest::rstest;

    const NOW: &str = "2026-03-01T12:00:00Z";

    fn now() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(NOW)
            .map(|t| t.with_timezone(&Utc))
            .unwrap()
    }

    fn cluster() -> Vec<Value> {
        vec![
            node_object(&SimulatedNode::new("a").label("disk", "ssd"), 0),
            node_object(&SimulatedNode::new("b"), 1),
            node_object(
                &SimulatedNode::new("c").taint("dedicated", "gpu", "NoSchedule"),
                2,
            ),
        ]
    }

    fn ds(template_spec: Value, strategy: Value) -> Value {
        json!({"metadata": {"name": "agent", "namespace": "ns", "uid": "d", "generation": 1,
                "annotations": {TEMPLATE_GENERATION: "1"}},
            "spec": {"selector": {"matchLabels": {"app": "agent"}}, "updateStrategy": strategy,
                "template": {"metadata": {"labels": {"app": "agent"}}, "spec": template_spec}}})
    }

    fn rolling(unavailable: Value, surge: Value) -> Value {
        json!({"type": "RollingUpdate",
            "rollingUpdate": {"maxUnavailable": unavailable, "maxSurge": surge}})
    }

    fn pod(name: &str, node: &str, hash: &str, ready: bool) -> Value {
        json!({"metadata": {"name": name, "creationTimestamp": NOW,
                "labels": {POD_REVISION_LABEL: hash}},
            "spec": {"nodeName": node},
            "status": {"phase": "Running", "conditions": [{"type": "Ready",
                "status": if ready {"True"} else {"False"}, "lastTransitionTime": NOW}]}})
    }

    #[rstest]
    #[case::everywhere_but_the_tainted_node(json!({}), &["a", "b"])]
    #[case::tolerating_it(json!({"tolerations": [{"key": "dedicated", "operator": "Exists"}]}),
        &["a", "b", "c"])]
    #[case::selected(json!({"nodeSelector": {"disk": "ssd"}}), &["a"])]
    #[case::named(json!({"nodeName": "b"}), &["b"])]
    fn nodes_that_fit(#[case] spec: Value, #[case] expected: &[&str]) {
        let d = ds(spec, json!({"type": "OnDelete"}));
        let p = plan(&d, &cluster(), &[], "h1", now());
        assert_eq!(p.create, expected);
        assert!(p.delete.is_empty());
    }

    #[test]
    fn pods_are_pinned_and_tolerate_node_problems() {
        let d = ds(
            json!({"containers": [{"name": "c", "image": "agent"}]}),
            json!({}),
        );
        let t = pin_to_node(&pod_template(&d, "h1"), "b");
        assert_eq!(target_node(&t), Some("b"));
        assert_eq!(t["metadata"]["labels"][POD_REVISION_LABEL], "h1");
        assert_eq!(t["metadata"]["labels"][TEMPLATE_GENERATION_LABEL], "1");
        let keys: Vec<&str> = list(&t["spec"]["tolerations"])
            .filter_map(|t| t["key"].as_str())
            .collect();
        assert_eq!(keys.len(), 6);
        assert!(keys.contains(&"node.kubernetes.io/unschedulable"));
        let mut host = json!({"hostNetwork": true});
        add_daemon_tolerations(&mut host);
        add_daemon_tolerations(&mut host);
        assert_eq!(host["tolerations"].as_array().map(Vec::len), Some(7));
    }

    #[test]
    fn pods_on_nodes_that_no_longer_fit_go() {
        let d = ds(
            json!({"nodeSelector": {"disk": "ssd"}}),
            json!({"type": "OnDelete"}),
        );
        let pods = [pod("p-a", "a", "h1", true), pod("p-b", "b", "h1", true)];
        let p = plan(&d, &cluster(), &pods, "h1", now());
        assert!(p.create.is_empty());
        assert_eq!(p.delete, ["p-b"]);
        let (status, _) = status_of(&d, &cluster(), &pods, "h1");
        assert_eq!(
            status,
            json!({"desiredNumberScheduled": 1, "currentNumberScheduled": 1,
                "numberMisscheduled": 1, "numberReady": 1, "numberAvailable": 1,
                "numberUnavailable": 0, "updatedNumberScheduled": 1, "observedGeneration": 1})
        );
        let mut stored = json!({});
        assert!(apply_status(&mut stored, &status));
        assert!(stored.get("numberUnavailable").is_none());
    }

    #[test]
    fn rolling_updates_stay_within_max_unavailable() {
        let d = ds(json!({}), rolling(json!(1), json!(0)));
        let old = [pod("p-a", "a", "h0", true), pod("p-b", "b", "h0", true)];
        let p = plan(&d, &cluster(), &old, "h1", now());
        assert_eq!(p.delete, ["p-a"]);
        // One node is being replaced (no pod yet): nothing more goes.
        let p = plan(&d, &cluster(), &old[1..], "h1", now());
        assert_eq!(p.create, ["a"]);
        assert!(p.delete.is_empty());
        let new_a = pod("p-a2", "a", "h1", false);
        let p = plan(
            &d,
            &cluster(),
            &[new_a.clone(), old[1].clone()],
            "h1",
            now(),
        );
        assert!(p.delete.is_empty() && p.create.is_empty());
        let new_a = pod("p-a2", "a", "h1", true);
        let p = plan(&d, &cluster(), &[new_a, old[1].clone()], "h1", now());
        assert_eq!(p.delete, ["p-b"]);
    }

    #[test]
    fn surging_starts_the_new_pod_beside_the_old_one() {
        let d = ds(json!({}), rolling(json!(0), json!(1)));
        let old = [pod("p-a", "a", "h0", true), pod("p-b", "b", "h0", true)];
        let p = plan(&d, &cluster(), &old, "h1", now());
        assert_eq!(p.create, ["a"]);
        assert!(p.delete.is_empty());
        let mut pods = old.to_vec();
        pods.push(pod("p-a2", "a", "h1", true));
        let p = plan(&d, &cluster(), &pods, "h1", now());
        assert_eq!(p.delete, ["p-a"]);
    }

    #[test]
    fn failed_pods_are_replaced_after_a_second() {
        let d = ds(json!({}), json!({"type": "OnDelete"}));
        let mut failed = pod("p-a", "a", "h1", false);
        failed["status"]["phase"] = json!("Failed");
        failed["status"]["containerStatuses"] =
            json!([{"state": {"terminated": {"finishedAt": "2026-03-01T11:59:59.500Z"}}}]);
        let pods = [failed, pod("p-b", "b", "h1", true)];
        let p = plan(&d, &cluster(), &pods, "h1", now());
        assert!(p.delete.is_empty());
        assert_eq!(p.recheck, Some(Duration::from_millis(500)));
        let later = now() + chrono::Duration::seconds(1);
        assert_eq!(plan(&d, &cluster(), &pods, "h1", later).delete, ["p-a"]);
    }
}
