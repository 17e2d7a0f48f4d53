//! The simulated cluster (opt-in: `kubefake serve --simulate`,
//! `Server::builder().simulate(true)`): what a small real cluster visibly does beyond the API
//! server, deterministic and in milliseconds. Ready [`nodes`] with heartbeat Leases, a
//! [`scheduler`] that binds pending pods, [`kubelet`]s that run them (no containers: statuses
//! as a kubelet reports them), and the workload controllers of kube-controller-manager:
//! [`deployment`], [`replicaset`] (ReplicaSets and ReplicationControllers), [`job`],
//! [`cronjob`], [`statefulset`] and [`daemonset`] (with the ControllerRevisions of the last two
//! written by [`history`]).
//!
//! Every step is a write through [`crate::registry::store`], like a client's, so watches see
//! the sequence of events a real cluster produces, and each step reacts to the commits of the
//! previous one through the controller work queue ([`super::Work::Simulated`]): a Deployment's
//! create returns once its ReplicaSet, its pods, their binding and their start are written.
//! Steps that happen at a later time (a pod that runs for a while, a crash-loop restart, a
//! heartbeat) are scheduled with [`super::later`]; those a controller looks for on every
//! reconcile (a CronJob's next run, a Job's deadline) with [`super::later_once`], one timer each.
//!
//! Pods are steered by annotations (on the pod, its template, or the Job that creates it):
//! [`RUN`] says how the pod's containers behave and [`DURATION`] how long before that happens.

pub mod cronjob;
pub mod daemonset;
pub mod deployment;
pub mod history;
pub mod job;
pub mod kubelet;
pub mod nodes;
pub mod replicaset;
pub mod scheduler;
pub mod statefulset;

use std::time::Duration;

use serde_json::{json, Value};

use crate::context::Context;
use crate::registry::object_meta::meta_str;
use crate::registry::resource::ApiResource;
use crate::registry::store::{self as rest, DeleteOptions, Target, UpdateSource};
use crate::state::State;
use crate::store::{GroupResource, ObjectKey, Snapshot, StoredObject};

use super::Work;

/// How a pod's containers behave: `succeed` (exit 0, the default for pods that do not restart
/// always), `fail` (exit 1), `hang` (run, never finish), `crash-loop` (exit 1 and restart with
/// a back-off, never ready), `not-ready` (run, never pass readiness), `evict` (evicted by the
/// node). Pods with `restartPolicy: Always` run until deleted unless told otherwise.
pub const RUN: &str = "simulation.kubefake.io/run";
/// How long a pod runs before what [`RUN`] says happens (a Go duration: `150ms`, `2s`, `1m`);
/// for `crash-loop`, how long each run lasts. Zero by default.
pub const DURATION: &str = "simulation.kubefake.io/duration";

/// The most replicas a simulated StatefulSet keeps (its planning holds a slot per ordinal; the
/// API allows any int32): past it, the higher ordinals are not created.
pub const MAX_REPLICAS: i64 = 100_000;

/// The simulated cluster's configuration.
#[derive(Debug, Clone)]
pub struct Simulation {
    /// The nodes the cluster has (created when the server starts).
    pub nodes: Vec<SimulatedNode>,
}

impl Default for Simulation {
    /// Three nodes, `kubefake-node-1` to `-3`, each 8 CPUs, 32 GiB and 110 pods.
    fn default() -> Self {
        Simulation::with_nodes(3)
    }
}

impl Simulation {
    /// `count` nodes named `kubefake-node-1`... with the default capacity.
    pub fn with_nodes(count: usize) -> Simulation {
        Simulation {
            nodes: (1..=count)
                .map(|i| SimulatedNode::new(&format!("kubefake-node-{i}")))
                .collect(),
        }
    }
}

/// One node of the simulated cluster.
#[derive(Debug, Clone)]
pub struct SimulatedNode {
    /// The node's name (also its `kubernetes.io/hostname` label).
    pub name: String,
    /// Labels beside the well-known ones (`kubernetes.io/hostname`, `kubernetes.io/os`,
    /// `kubernetes.io/arch`).
    pub labels: Vec<(String, String)>,
    /// Capacity (and allocatable): `cpu`, `memory`, `pods`, `ephemeral-storage`...
    pub capacity: Vec<(String, String)>,
    /// Taints (`{key, value, effect}` objects).
    pub taints: Vec<Value>,
}

impl SimulatedNode {
    /// A node with 8 CPUs, 32 GiB of memory, 100 GiB of ephemeral storage and room for 110
    /// pods, as a typical cloud worker.
    pub fn new(name: &str) -> SimulatedNode {
        let capacity = [
            ("cpu", "8"),
            ("memory", "32Gi"),
            ("ephemeral-storage", "100Gi"),
            ("pods", "110"),
        ];
        SimulatedNode {
            name: name.to_string(),
            labels: Vec::new(),
            capacity: capacity
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            taints: Vec::new(),
        }
    }

    /// Adds a label.
    pub fn label(mut self, key: &str, value: &str) -> Self {
        self.labels.push((key.into(), value.into()));
        self
    }

    /// Sets one resource's capacity.
    pub fn capacity(mut self, resource: &str, quantity: &str) -> Self {
        self.capacity.retain(|(k, _)| k != resource);
        self.capacity.push((resource.into(), quantity.into()));
        self
    }

    /// Adds a taint.
    pub fn taint(mut self, key: &str, value: &str, effect: &str) -> Self {
        self.taints
            .push(json!({"key": key, "value": value, "effect": effect}));
        self
    }
}

/// The workloads a simulated controller reconciles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Workload {
    /// apps/v1 Deployment.
    Deployment,
    /// apps/v1 ReplicaSet.
    ReplicaSet,
    /// v1 ReplicationController.
    ReplicationController,
    /// batch/v1 Job.
    Job,
    /// batch/v1 CronJob.
    CronJob,
    /// apps/v1 StatefulSet.
    StatefulSet,
    /// apps/v1 DaemonSet.
    DaemonSet,
}

impl Workload {
    /// The workload a controller owner reference names.
    fn of_owner(api_version: &str, kind: &str) -> Option<Workload> {
        match (api_version, kind) {
            ("apps/v1", "Deployment") => Some(Workload::Deployment),
            ("apps/v1", "ReplicaSet") => Some(Workload::ReplicaSet),
            ("v1", "ReplicationController") => Some(Workload::ReplicationController),
            ("batch/v1", "Job") => Some(Workload::Job),
            ("batch/v1", "CronJob") => Some(Workload::CronJob),
            ("apps/v1", "StatefulSet") => Some(Workload::StatefulSet),
            ("apps/v1", "DaemonSet") => Some(Workload::DaemonSet),
            _ => None,
        }
    }

    fn resource(self) -> GroupResource {
        match self {
            Workload::Deployment => GroupResource::new("apps", "deployments"),
            Workload::ReplicaSet => GroupResource::new("apps", "replicasets"),
            Workload::ReplicationController => GroupResource::new("", "replicationcontrollers"),
            Workload::Job => GroupResource::new("batch", "jobs"),
            Workload::CronJob => GroupResource::new("batch", "cronjobs"),
            Workload::StatefulSet => GroupResource::new("apps", "statefulsets"),
            Workload::DaemonSet => GroupResource::new("apps", "daemonsets"),
        }
    }
}

/// One step of the simulated cluster.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Sim {
    /// Create the nodes and their Leases (when the server starts).
    Nodes,
    /// Renew one node's Lease.
    Heartbeat(String),
    /// Schedule, start, finish or terminate one pod, whatever it needs next.
    Pod(ObjectKey),
    /// The time a running pod's behaviour (its duration) was waiting for has come.
    PodDue(ObjectKey),
    /// Reconcile one workload.
    Workload(Workload, ObjectKey),
    /// Reconcile every DaemonSet (a node came, went or changed).
    DaemonSets,
    /// Try the pods no node fitted again (room was made: a pod went or finished, a node came
    /// or changed), as the scheduler moves them back to its active queue.
    RetryUnschedulable,
}

/// Runs one step, when the server simulates a cluster.
pub async fn process(state: &State, ctx: &Context, sim: Sim) {
    let Some(simulation) = &state.options.simulation else {
        return;
    };
    match sim {
        Sim::Nodes => nodes::create(state, ctx, simulation).await,
        Sim::Heartbeat(node) => nodes::heartbeat(state, ctx, &node).await,
        Sim::Pod(key) => {
            if !scheduler::schedule(state, ctx, &key).await {
                kubelet::sync(state, ctx, &key).await;
            }
        }
        Sim::PodDue(key) => kubelet::finish_due(state, ctx, &key).await,
        Sim::Workload(Workload::Deployment, key) => deployment::reconcile(state, ctx, &key).await,
        Sim::Workload(w @ (Workload::ReplicaSet | Workload::ReplicationController), key) => {
            replicaset::reconcile(state, ctx, w, &key).await
        }
        Sim::Workload(Workload::Job, key) => job::reconcile(state, ctx, &key).await,
        Sim::Workload(Workload::CronJob, key) => cronjob::reconcile(state, ctx, &key).await,
        Sim::Workload(Workload::StatefulSet, key) => statefulset::reconcile(state, ctx, &key).await,
        Sim::Workload(Workload::DaemonSet, key) => daemonset::reconcile(state, ctx, &key).await,
        Sim::DaemonSets => daemonset::reconcile_all(state, ctx).await,
        Sim::RetryUnschedulable => scheduler::retry_unschedulable(state, ctx).await,
    }
}

/// The work a committed pod causes: its own next step, and its controller's reconcile (and,
/// once it finished, another chance for the pods that did not fit).
pub fn pod_changed(pod: &StoredObject) -> Vec<Work> {
    let key = key_of(&pod.value());
    let mut work = vec![Work::Simulated(Sim::Pod(key))];
    work.extend(owner_work(&pod.value()));
    if kubelet::finished(&pod.value()) {
        work.push(Work::Simulated(Sim::RetryUnschedulable));
    }
    work
}

/// The work a committed or removed workload causes: its own reconcile and its controller's.
pub fn workload_changed(workload: Workload, obj: &StoredObject) -> Vec<Work> {
    let mut work = vec![Work::Simulated(Sim::Workload(
        workload,
        key_of(&obj.value()),
    ))];
    work.extend(owner_work(&obj.value()));
    work
}

/// The reconcile of an object's controller (its owner reference with `controller: true`).
pub fn owner_work(obj: &Value) -> Option<Work> {
    let owner = controller_ref(obj)?;
    let workload = Workload::of_owner(
        owner["apiVersion"].as_str().unwrap_or(""),
        owner["kind"].as_str().unwrap_or(""),
    )?;
    let ns = meta_str(obj, "namespace");
    let name = owner["name"].as_str()?;
    Some(Work::Simulated(Sim::Workload(
        workload,
        ObjectKey::new(ns, name),
    )))
}

/// An object's controller owner reference.
pub fn controller_ref(obj: &Value) -> Option<&Value> {
    obj["metadata"]["ownerReferences"]
        .as_array()?
        .iter()
        .find(|r| r["controller"] == true)
}

/// Whether `obj` is controlled by the object with `uid`.
pub fn controlled_by(obj: &Value, uid: &str) -> bool {
    controller_ref(obj).is_some_and(|r| r["uid"] == uid)
}

/// An object's key.
pub fn key_of(obj: &Value) -> ObjectKey {
    ObjectKey::new(meta_str(obj, "namespace"), meta_str(obj, "name"))
}

/// A controller owner reference to `owner`.
pub fn owner_reference(owner: &Value) -> Value {
    json!({
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        "controller": true,
        "blockOwnerDeletion": true,
    })
}

/// The served resource of a built-in group-resource.
pub fn resource(state: &State, gr: &GroupResource) -> Option<std::sync::Arc<ApiResource>> {
    state.registry().by_group_resource(gr)
}

/// Pods.
pub fn pods() -> GroupResource {
    GroupResource::new("", "pods")
}

/// The pods of a namespace that `uid` controls, not being deleted, as stored (no copies: a
/// ReplicaSet of a thousand pods looks at them after every step).
pub fn owned_pod_objects(
    snapshot: &Snapshot,
    namespace: &str,
    uid: &str,
) -> Vec<std::sync::Arc<StoredObject>> {
    snapshot
        .list(&pods(), Some(namespace))
        .filter(|(_, p)| controlled_by(&p.value(), uid) && !p.is_deleting())
        .map(|(_, p)| p.clone())
        .collect()
}

/// The pods of a namespace that `uid` controls, not being deleted.
pub fn owned_pods(snapshot: &Snapshot, namespace: &str, uid: &str) -> Vec<Value> {
    snapshot
        .list(&pods(), Some(namespace))
        .filter(|(_, p)| controlled_by(&p.value(), uid) && !p.is_deleting())
        .map(|(_, p)| p.value().clone())
        .collect()
}

/// Creates a pod from a template (`generateName` `<prefix>`), controlled by `owner`, with the
/// template's labels, annotations and finalizers (`GetPodFromTemplate`); `extra_annotations`
/// are added where the template has none of that name.
pub async fn create_pod(
    state: &State,
    ctx: &Context,
    owner: &Value,
    template: &Value,
    name: PodName<'_>,
    extra_annotations: &[(&str, &str)],
) {
    let Some(res) = resource(state, &pods()) else {
        return;
    };
    let ns = meta_str(owner, "namespace");
    let mut meta = json!({
        "namespace": ns,
        "labels": template["metadata"]["labels"].clone(),
        "ownerReferences": [owner_reference(owner)],
    });
    match name {
        PodName::Generate(prefix) => meta["generateName"] = json!(prefix),
        PodName::Exact(n) => meta["name"] = json!(n),
    }
    if let Some(finalizers) = template["metadata"]["finalizers"].as_array() {
        meta["finalizers"] = json!(finalizers);
    }
    let mut annotations = template["metadata"]["annotations"].clone();
    for (k, v) in extra_annotations {
        if annotations.get(*k).is_none() {
            annotations[*k] = json!(v);
        }
    }
    if annotations.as_object().is_some_and(|a| !a.is_empty()) {
        meta["annotations"] = annotations;
    }
    let mut spec = template["spec"].clone();
    if !spec.is_object() {
        spec = json!({});
    }
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec});
    if let Err(e) = rest::create(state, ctx, &res, ns, pod).await {
        tracing::warn!(error = %e, owner = meta_str(owner, "name"), "creating a pod");
    }
}

/// How a created pod is named.
pub enum PodName<'a> {
    /// `generateName`.
    Generate(&'a str),
    /// A fixed name.
    Exact(&'a str),
}

/// Deletes one object (already gone is fine).
pub async fn delete(state: &State, ctx: &Context, gr: &GroupResource, key: &ObjectKey) {
    let Some(res) = resource(state, gr) else {
        return;
    };
    let deleted = rest::delete(
        state,
        ctx,
        &res,
        &key.namespace,
        &key.name,
        &DeleteOptions::default(),
    )
    .await;
    if let Err(e) = deleted {
        if e.code != 404 {
            tracing::warn!(error = %e, object = %key.name, "deleting");
        }
    }
}

/// Writes an object's status computed from the stored one (retried on conflicts); `change`
/// returns `false` when nothing needs writing.
pub async fn write_status(
    state: &State,
    ctx: &Context,
    gr: &GroupResource,
    key: &ObjectKey,
    change: &(dyn Fn(&mut Value) -> bool + Sync),
) {
    let Some(res) = resource(state, gr) else {
        return;
    };
    let Some(status) = res.subresource("status").cloned() else {
        return;
    };
    write(state, ctx, &res, key, Target::Part(status), change).await;
}

/// Writes `status` as an object's status unless the object changed since a controller read it
/// at `resource_version`: such a change queued another reconcile, which sees it, and a plan
/// computed from the older object must not undo it. The object as it is after the write (as it
/// was when nothing changed), or `None` when it changed meanwhile or went.
pub async fn write_status_at(
    state: &State,
    ctx: &Context,
    gr: &GroupResource,
    key: &ObjectKey,
    resource_version: &str,
    status: &Value,
) -> Option<Value> {
    let res = resource(state, gr)?;
    let part = res.subresource("status").cloned()?;
    let patch = |stored: &Value| {
        let mut out = stored.clone();
        out["metadata"]["resourceVersion"] = json!(resource_version);
        out["status"] = status.clone();
        Ok(out)
    };
    let source = UpdateSource::Patch(&patch);
    let target = Target::Part(part);
    match rest::update(state, ctx, &res, &key.namespace, &key.name, target, source).await {
        Ok(written) => Some(written.value().clone()),
        Err(e) => {
            if e.code != 404 && e.code != 409 {
                tracing::warn!(error = %e, object = %key.name, controller = %ctx.user.name, "writing a status");
            }
            None
        }
    }
}

/// Writes an object (its main resource) computed from the stored one; see [`write_status`].
pub async fn write_object(
    state: &State,
    ctx: &Context,
    gr: &GroupResource,
    key: &ObjectKey,
    change: &(dyn Fn(&mut Value) -> bool + Sync),
) {
    let Some(res) = resource(state, gr) else {
        return;
    };
    write(state, ctx, &res, key, Target::Main, change).await;
}

async fn write(
    state: &State,
    ctx: &Context,
    res: &ApiResource,
    key: &ObjectKey,
    target: Target,
    change: &(dyn Fn(&mut Value) -> bool + Sync),
) {
    let current = state.store.snapshot().get(&res.gr, key);
    let Some(current) = current else {
        return;
    };
    let mut probe = current.value().clone();
    if !change(&mut probe) {
        return;
    }
    let patch = |stored: &Value| {
        let mut out = stored.clone();
        change(&mut out);
        Ok(out)
    };
    let updated = rest::update(
        state,
        ctx,
        res,
        &key.namespace,
        &key.name,
        target,
        UpdateSource::Patch(&patch),
    )
    .await;
    if let Err(e) = updated {
        if e.code != 404 {
            tracing::warn!(error = %e, object = %key.name, controller = %ctx.user.name, "writing");
        }
    }
}

/// A Go duration (`1.5s`, `150ms`, `2m`, `1h30m`); `None` when it is not one, or negative.
pub fn parse_duration(s: &str) -> Option<Duration> {
    let nanos = crate::machinery::duration::parse_duration(s.trim()).ok()?;
    u64::try_from(nanos).ok().map(Duration::from_nanos)
}

/// Milli-units of a quantity (`500m` → 500, `2` → 2000, `1Gi` → 1073741824000); 0 when it is
/// not one.
pub fn milli(quantity: &str) -> i128 {
    if quantity == "0" {
        return 0;
    }
    let Some(q) = crate::cel::Quantity::parse(quantity) else {
        return 0;
    };
    let exp = q.exp + 3;
    if exp >= 0 {
        10i128
            .checked_pow(exp.unsigned_abs())
            .and_then(|p| q.mantissa.checked_mul(p))
            .unwrap_or(i128::MAX)
    } else {
        10i128
            .checked_pow(exp.unsigned_abs())
            .map_or(0, |p| q.mantissa / p)
    }
}

/// The time now, as the API writes it.
pub fn now() -> String {
    crate::registry::object_meta::now_rfc3339()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("0", Some(0))]
    #[case("150ms", Some(150))]
    #[case("2s", Some(2000))]
    #[case("1m30s", Some(90_000))]
    #[case("1.5s", Some(1500))]
    #[case("", None)]
    #[case("5", None)]
    #[case("3d", None)]
    fn go_durations(#[case] text: &str, #[case] millis: Option<u128>) {
        assert_eq!(parse_duration(text).map(|d| d.as_millis()), millis);
    }

    #[rstest]
    #[case("500m", 500)]
    #[case("2", 2000)]
    #[case("1Gi", 1_073_741_824_000)]
    #[case("1k", 1_000_000)]
    #[case("nonsense", 0)]
    fn milli_units(#[case] text: &str, #[case] expected: i128) {
        assert_eq!(milli(text), expected);
    }

    #[test]
    fn owners_name_their_workload() {
        let pod = json!({"metadata": {"namespace": "ns", "ownerReferences": [
            {"apiVersion": "v1", "kind": "ConfigMap", "name": "x", "uid": "1"},
            {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-1", "uid": "2",
             "controller": true}]}});
        assert_eq!(
            owner_work(&pod),
            Some(Work::Simulated(Sim::Workload(
                Workload::ReplicaSet,
                ObjectKey::new("ns", "web-1")
            )))
        );
        assert!(controlled_by(&pod, "2"));
        assert!(!controlled_by(&pod, "1"));
    }
}
