//! The in-process controllers a real cluster runs in kube-controller-manager and
//! apiextensions-apiserver: CRD naming/establishing and cleanup ([`crd`]), namespace lifecycle
//! ([`namespace`]), the garbage collector ([`garbage_collector`]), the storage protection
//! finalizers' release ([`storage_protection`]), ClusterRole aggregation
//! ([`clusterrole_aggregation`]), ValidatingAdmissionPolicy status ([`policy_status`]), what
//! every namespace holds (the `default` ServiceAccount, [`serviceaccounts`]; the
//! `kube-root-ca.crt` ConfigMap, [`root_ca_publisher`]), and the Endpoints and EndpointSlices
//! of Services with a selector ([`endpoints`], [`endpointslice`], both fed by
//! [`service_pods`]); and, when the server simulates a cluster, [`simulated`]: nodes, the
//! scheduler, kubelets and the workload controllers.
//!
//! Controllers react to committed writes, not to polling: the write path reports each commit
//! ([`after_commit`], [`after_remove`]) and the controllers that care queue [`Work`] on the
//! request's explicit [`WorkQueue`] (carried by its [`Context`]). The queue is drained by the
//! request that caused it, before its response is sent, so a CRD is established before its
//! create returns and a namespace deletion or a cascade has finished when the DELETE returns.
//! Work that causes more work (a cascade many levels deep) appends to the same queue instead of
//! recursing. Controllers change objects only through [`crate::registry::store`], so every
//! step is validated like a client's and produces the watch events a real cluster produces.
//! The server's start is the exception to draining at once ([`after_all`]): the controllers
//! look at what its bootstrap objects caused once they all exist, as kube-controller-manager
//! starts once the apiserver has created them. What happens at a later time (a simulated pod
//! that runs for a while) is queued then by [`later`], as a request of its own.

pub mod clusterrole_aggregation;
pub mod crd;
pub mod crd_registration;
pub mod endpoints;
pub mod endpointslice;
pub mod flowcontrol;
pub mod garbage_collector;
pub mod kube_controllers;
pub mod namespace;
pub mod policy_status;
pub mod root_ca_publisher;
pub mod service_ips;
pub mod service_pods;
pub mod serviceaccounts;
pub mod simulated;
pub mod storage_protection;

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;

use futures_util::future::BoxFuture;
use parking_lot::Mutex;
use serde_json::Value;

use crate::context::Context;
use crate::registry::catalog::ApiResource;
use crate::registry::object_meta::meta_str;
use crate::registry::store::{self as rest, Target, UpdateSource};
use crate::state::State;
use crate::store::{GroupResource, ObjectKey, StoredObject};

/// One thing a controller has to look at.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Work {
    /// Name, establish, or clean up (when deleting) one CRD.
    Crd(String),
    /// Delete the content of a terminating namespace, then finish it.
    Namespace(String),
    /// An owner changed or went: orphan, foreground-delete or collect its dependents.
    Owner(String),
    /// Check one object's owners: collect it when they are gone.
    Dependent(GroupResource, ObjectKey),
    /// Release a deleted claim or volume's protection finalizer when nothing uses it.
    StorageProtection(GroupResource, ObjectKey),
    /// A ClusterRole changed: bring every aggregated ClusterRole's rules up to date.
    ClusterRoleAggregation,
    /// Type-check a ValidatingAdmissionPolicy and write its status.
    PolicyStatus(String),
    /// Give an active namespace its `default` ServiceAccount if it lacks it.
    ServiceAccounts(String),
    /// Publish (or restore) an active namespace's `kube-root-ca.crt` ConfigMap.
    RootCaCert(String),
    /// A pod changed or went: bring up to date the Services that select it or list it.
    PodServices(ObjectKey),
    /// Bring the Endpoints of one Service (by its key) up to date, or delete them when the
    /// Service went.
    Endpoints(ObjectKey),
    /// Bring the EndpointSlices of one Service (by its key) up to date.
    EndpointSlices(ObjectKey),
    /// Bring the IPAddresses of one Service's cluster IPs (by its key) in step.
    ServiceIps(ObjectKey),
    /// Create the default ServiceCIDR if it went, and mark it Ready.
    DefaultServiceCidr,
    /// Bring every FlowSchema's `Dangling` condition up to date.
    FlowSchemaStatus,
    /// A bootstrap FlowSchema or priority level went: restore the configuration in a while.
    FlowControlBootstrap,
    /// Restore the bootstrap FlowSchemas and priority levels that are missing.
    FlowControlRestore,
    /// A step of the simulated cluster (nothing when the server simulates nothing).
    Simulated(simulated::Sim),
}

/// Pending work, without duplicates (an item queued twice is done once).
#[derive(Default)]
struct Pending {
    order: VecDeque<Work>,
    queued: HashSet<Work>,
    /// Whether a caller is draining the queue (others only add to it).
    draining: bool,
}

/// The work one request's commits caused, shared by the request and every controller step it
/// triggers (see [`Context::for_controller`]). Work that causes more work appends to the same
/// queue, so a cascade many levels deep is a loop, not a recursion.
#[derive(Default)]
pub struct WorkQueue {
    pending: Mutex<Pending>,
}

impl WorkQueue {
    /// Queues work (each item once while it waits).
    pub fn push(&self, work: impl IntoIterator<Item = Work>) {
        let mut p = self.pending.lock();
        for w in work {
            if p.queued.insert(w.clone()) {
                p.order.push_back(w);
            }
        }
    }

    fn pop(&self) -> Option<Work> {
        let mut p = self.pending.lock();
        let work = p.order.pop_front()?;
        p.queued.remove(&work);
        Some(work)
    }

    /// Whether nothing waits.
    pub fn is_empty(&self) -> bool {
        self.pending.lock().order.is_empty()
    }
}

/// Marks a queue as being drained; clears the mark when the drain ends, even by a panic, so a
/// later drain of the same queue is never refused.
struct Draining<'a>(&'a WorkQueue);

impl<'a> Draining<'a> {
    fn begin(queue: &'a WorkQueue) -> Option<Draining<'a>> {
        let mut p = queue.pending.lock();
        if p.draining {
            return None;
        }
        p.draining = true;
        Some(Draining(queue))
    }
}

impl Drop for Draining<'_> {
    fn drop(&mut self) {
        self.0.pending.lock().draining = false;
    }
}

/// Queues work and, unless a caller up the stack is already draining this request's queue,
/// runs every queued item (and what they queue) to completion.
pub async fn enqueue(state: &State, ctx: &Context, work: Vec<Work>) {
    if work.is_empty() {
        return;
    }
    ctx.work().push(work);
    run_queued(state, ctx).await;
}

/// Runs `writes` holding back the controller work their commits queue, then runs it all: each
/// item once, however many writes queued it, and with every object of `writes` there.
pub async fn after_all<F: std::future::Future>(
    state: &State,
    ctx: &Context,
    writes: F,
) -> F::Output {
    let out = {
        let _held = Draining::begin(ctx.work());
        writes.await
    };
    run_queued(state, ctx).await;
    out
}

/// How many steps of the simulated cluster one request runs before its response; the rest go
/// on in the background (a Deployment of a million replicas must not hold its create, or the
/// server, for hours). About 500 pods started.
pub const SIMULATED_STEPS_PER_REQUEST: usize = 2_000;

/// Runs the queued work of a request to completion, unless a caller up the stack already is;
/// simulated steps past [`SIMULATED_STEPS_PER_REQUEST`] are handed to a background request.
pub async fn run_queued(state: &State, ctx: &Context) {
    let Some(_draining) = Draining::begin(ctx.work()) else {
        return;
    };
    let mut simulated = 0;
    let mut deferred = Vec::new();
    while let Some(work) = ctx.work().pop() {
        if matches!(work, Work::Simulated(_)) {
            if simulated >= SIMULATED_STEPS_PER_REQUEST {
                deferred.push(work);
                continue;
            }
            simulated += 1;
        }
        process(state, ctx, work).await;
    }
    if !deferred.is_empty() {
        continue_later(state, deferred);
    }
}

/// Runs `work` as a request of its own, in the background, as soon as the runtime gets to it.
fn continue_later(state: &State, work: Vec<Work>) {
    spawn_later(state, std::time::Duration::ZERO, work, None);
}

/// One work item. Boxed: controller steps write through the registry store, whose commits
/// enqueue (and would otherwise make this future contain itself).
fn process<'a>(state: &'a State, ctx: &'a Context, work: Work) -> BoxFuture<'a, ()> {
    Box::pin(async move {
        if !state.options.kube_controllers.runs_work(&work) {
            return;
        }
        match work {
            Work::Crd(name) => {
                crd::reconcile(state, &ctx.for_controller("crd-controller"), &name).await;
                crd_registration::sync(state, ctx).await
            }
            Work::Namespace(name) => {
                namespace::reconcile(state, &ctx.for_controller("namespace-controller"), &name)
                    .await
            }
            Work::Owner(uid) => {
                let ctx = kcm(ctx, "generic-garbage-collector");
                garbage_collector::process_owner(state, &ctx, &uid).await
            }
            Work::Dependent(gr, key) => {
                let ctx = kcm(ctx, "generic-garbage-collector");
                garbage_collector::process_dependent(state, &ctx, &gr, &key).await
            }
            Work::StorageProtection(gr, key) => {
                let name = if gr == storage_protection::claims_gr() {
                    "pvc-protection-controller"
                } else {
                    "pv-protection-controller"
                };
                let ctx = kcm(ctx, name);
                storage_protection::reconcile(state, &ctx, &gr, &key).await
            }
            Work::PolicyStatus(name) => policy_status::reconcile(state, &name),
            Work::ServiceIps(service) => service_ips::reconcile(state, ctx, &service).await,
            Work::DefaultServiceCidr => service_ips::default_service_cidr(state, ctx).await,
            Work::FlowSchemaStatus => flowcontrol::reconcile_status(state, ctx).await,
            Work::FlowControlBootstrap => {
                later_once(state, flowcontrol::RESTORE_AFTER, Work::FlowControlRestore)
            }
            Work::FlowControlRestore => flowcontrol::restore_bootstrap(state, ctx).await,
            Work::Simulated(sim) => simulated::process(state, ctx, sim).await,
            Work::ClusterRoleAggregation => {
                let ctx = ctx.for_controller(clusterrole_aggregation::FIELD_MANAGER);
                clusterrole_aggregation::reconcile(state, &ctx).await
            }
            Work::ServiceAccounts(ns) => {
                let ctx = kcm(ctx, serviceaccounts::CONTROLLER);
                serviceaccounts::reconcile(state, &ctx, &ns).await
            }
            Work::RootCaCert(ns) => {
                let ctx = kcm(ctx, root_ca_publisher::CONTROLLER);
                root_ca_publisher::reconcile(state, &ctx, &ns).await
            }
            Work::PodServices(pod) => ctx.work().push(service_pods::work_for_pod(state, &pod)),
            Work::Endpoints(service) => {
                let ctx = kcm(ctx, endpoints::CONTROLLER);
                endpoints::reconcile(state, &ctx, &service).await
            }
            Work::EndpointSlices(service) => {
                let ctx = kcm(ctx, endpointslice::CONTROLLER);
                endpointslice::reconcile(state, &ctx, &service).await
            }
        }
    })
}

/// The context of one of kube-controller-manager's controllers: its identity, its writes
/// recorded in managedFields as `kube-controller-manager`, as the real ones are.
pub(crate) fn kcm(ctx: &Context, controller: &str) -> Context {
    ctx.for_controller(controller)
        .managed_by(CONTROLLER_MANAGER)
}

/// Runs `work` after `delay` (as its own server-side request), unless the server has stopped
/// by then: what a simulated cluster does at a later time (a Job pod that runs for a while, a
/// node's heartbeat).
pub fn later(state: &State, delay: std::time::Duration, work: Work) {
    spawn_later(state, delay, vec![work], None);
}

/// [`later`], unless the same work is already due by then: a controller that looks at a time to
/// come on every reconcile (a CronJob's next run) waits on one timer, not on one per reconcile.
pub fn later_once(state: &State, delay: std::time::Duration, work: Work) {
    if state.this().is_none() {
        return;
    }
    let Some(due) = std::time::Instant::now().checked_add(delay) else {
        return;
    };
    {
        let mut timers = state.timers.lock();
        if timers.get(&work).is_some_and(|t| *t <= due) {
            return;
        }
        timers.insert(work.clone(), due);
    }
    spawn_later(state, delay, vec![work], Some(due));
}

/// Spawns the timer of [`later`]; `due` is the [`later_once`] entry it clears when it fires.
/// The work runs as a request of its own, unless the server stopped meanwhile.
fn spawn_later(
    state: &State,
    delay: std::time::Duration,
    work: Vec<Work>,
    due: Option<std::time::Instant>,
) {
    let Some(this) = state.this() else {
        return;
    };
    let weak = Arc::downgrade(&this);
    drop(this);
    let mut shutdown = state.shutdown.clone();
    tokio::spawn(async move {
        tokio::select! {
            _ = tokio::time::sleep(delay) => {}
            _ = shutdown.changed() => return,
        }
        let Some(state) = weak.upgrade().filter(|s| !*s.shutdown.borrow()) else {
            return;
        };
        if let Some(due) = due {
            let mut timers = state.timers.lock();
            for w in &work {
                if timers.get(w) == Some(&due) {
                    timers.remove(w);
                }
            }
        }
        enqueue(&state, &Context::internal(), work).await;
    });
}

/// Reports a committed create or update to the controllers and runs what it triggers.
pub async fn after_commit(
    state: &State,
    ctx: &Context,
    res: &ApiResource,
    obj: &Arc<StoredObject>,
) {
    let tree = obj.value();
    let name = meta_str(&tree, "name");
    let mut work = res.strategy.after_commit(obj);
    if tree["metadata"].get("deletionTimestamp").is_some() {
        let uid = meta_str(&tree, "uid");
        work.push(Work::Owner(uid.to_string()));
    }
    if !obj.owner_uids().is_empty() {
        let ns = if res.namespaced {
            meta_str(&tree, "namespace")
        } else {
            ""
        };
        work.push(Work::Dependent(res.gr.clone(), ObjectKey::new(ns, name)));
    }
    enqueue(state, ctx, work).await;
}

/// Reports a removal: owners waiting for it, its own dependents, a terminating namespace or CRD
/// waiting for its content, and the registry when a CRD goes.
pub async fn after_remove(
    state: &State,
    ctx: &Context,
    res: &ApiResource,
    obj: &Arc<StoredObject>,
) {
    let mut work = res.strategy.after_remove(obj);
    work.push(Work::Owner(obj.uid().unwrap_or("").to_string()));
    work.extend(
        obj.owner_uids()
            .iter()
            .map(|uid| Work::Owner(uid.to_string())),
    );
    let ns = match obj.key() {
        Some(key) => key.namespace.clone(),
        None => meta_str(&obj.value(), "namespace").to_string(),
    };
    let ns = ns.as_str();
    if !ns.is_empty() && res.namespaced && namespace::is_terminating(state, ns) {
        work.push(Work::Namespace(ns.to_string()));
    }
    enqueue(state, ctx, work).await;
}

/// Removes one finalizer from an object (which goes when it was the last).
pub(crate) async fn release(
    state: &State,
    ctx: &Context,
    res: &ApiResource,
    key: &ObjectKey,
    finalizer: &str,
) {
    // The last one goes with the field, as the garbage collector's patch (`finalizers: null`)
    // leaves it.
    let drop_finalizer = |obj: &mut Value| {
        let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) else {
            return;
        };
        if let Some(list) = meta.get_mut("finalizers").and_then(Value::as_array_mut) {
            list.retain(|f| f != finalizer);
            if list.is_empty() {
                meta.remove("finalizers");
            }
        }
    };
    let why = format!("releasing {finalizer}");
    edit(state, ctx, res, key, &why, &drop_finalizer).await;
}

/// The field manager the apiserver records for the writes of its own controllers
/// (apiextensions-apiserver's naming, establishing and finalizer controllers, the admission
/// policy status controller): the first segment of their loopback client's user agent.
pub const APISERVER_MANAGER: &str = "kube-apiserver";

/// The field manager of kube-controller-manager's controllers (their user agents are
/// `kube-controller-manager/<version> .../<controller>`).
pub const CONTROLLER_MANAGER: &str = "kube-controller-manager";

/// Records a controller's `UpdateStatus` of `old` into `new` in managedFields, as the
/// apiserver's field manager records it: an Update entry of `manager` through the `status`
/// subresource. `res` is the written resource (its schema says how lists merge).
pub(crate) fn record_status_update(
    res: Option<&ApiResource>,
    manager: &str,
    old: &Value,
    new: &mut Value,
) {
    let Some(res) = res else { return };
    let schema = res.schema.shape();
    let now = crate::registry::object_meta::now_rfc3339();
    crate::apply::versions::single_version(&res.api_version(), |versions| {
        crate::apply::record_update(Some(old), new, manager, "status", versions, schema, &now)
    });
}

/// Creates an object through the store as a controller does: one that exists already, or a
/// namespace that is gone or being terminated, is no failure (the real controllers ignore
/// them too); any other failure is logged.
pub(crate) async fn create_logged(
    state: &State,
    ctx: &Context,
    res: &ApiResource,
    namespace: &str,
    obj: Value,
) -> Option<Arc<StoredObject>> {
    match rest::create(state, ctx, res, namespace, obj).await {
        Ok(created) => Some(created),
        Err(e) if e.code == 409 || e.code == 404 || is_namespace_terminating(&e) => None,
        Err(e) => {
            let controller = &ctx.user.name;
            tracing::warn!(error = %e, kind = %res.kind, namespace, controller = %controller, "creating");
            None
        }
    }
}

/// Deletes a cluster-scoped object the controller made, if it is still the one seen (`uid`): one
/// gone or replaced meanwhile is no failure; any other failure is logged.
pub(crate) async fn delete_logged(
    state: &State,
    ctx: &Context,
    res: &ApiResource,
    name: &str,
    uid: String,
) {
    let opts = crate::registry::store::DeleteOptions {
        uid: Some(uid),
        ..Default::default()
    };
    if let Err(e) = rest::delete(state, ctx, res, "", name, &opts).await {
        if e.code != 404 && e.code != 409 {
            let controller = &ctx.user.name;
            tracing::warn!(error = %e, kind = %res.kind, name, controller = %controller, "deleting");
        }
    }
}

/// Whether a create was refused because its namespace is being terminated (the
/// `NamespaceTerminating` cause of NamespaceLifecycle's 403).
fn is_namespace_terminating(e: &crate::error::ApiError) -> bool {
    e.details
        .as_ref()
        .is_some_and(|d| d.causes.iter().any(|c| c.reason == "NamespaceTerminating"))
}

/// Changes an object through the store (a patch, retried on conflicts). An object that went
/// meanwhile is fine; any other failure is logged.
pub(crate) async fn edit(
    state: &State,
    ctx: &Context,
    res: &ApiResource,
    key: &ObjectKey,
    why: &str,
    change: &(dyn Fn(&mut Value) + Sync),
) {
    let patch = |current: &Value| {
        let mut out = current.clone();
        change(&mut out);
        Ok(out)
    };
    let updated = rest::update(
        state,
        ctx,
        res,
        &key.namespace,
        &key.name,
        Target::Main,
        UpdateSource::Patch(&patch),
    )
    .await;
    if let Err(e) = updated
        .map(|_| ())
        .or_else(|e| if e.code == 404 { Ok(()) } else { Err(e) })
    {
        tracing::warn!(error = %e, object = %key.name, controller = %ctx.user.name, "{why}");
    }
}
