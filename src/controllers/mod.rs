//! The in-process controllers a real cluster runs in kube-controller-manager and
//! apiextensions-apiserver: CRD naming/establishing and cleanup, namespace lifecycle, and the
//! garbage collector.
//!
//! Controllers react to committed writes, not to polling: the write path reports each commit
//! ([`after_commit`], [`after_remove`]) and the controllers that care queue [`Work`]. The queue is
//! drained on the thread of the request that caused it, before its response is sent, so a CRD is
//! established before its create returns and a namespace deletion or a cascade has finished when
//! the DELETE returns. Work that causes more work (a cascade many levels deep) appends to the same
//! queue instead of recursing. Controllers change objects only through [`crate::registry::store`], so every
//! step is validated like a client's and produces the watch events a real cluster produces.

pub mod crd;
pub mod garbage_collector;
pub mod namespace;

use std::cell::RefCell;
use std::collections::{HashSet, VecDeque};
use std::sync::Arc;

use crate::registry::apiextensions;
use crate::registry::catalog::ApiResource;
use crate::registry::object_meta::meta_str;
use crate::state::State;
use crate::store::{owner_uids, GroupResource, ObjectKey, StoredObject};

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
}

/// Pending work, without duplicates (an item queued twice is done once).
#[derive(Default)]
struct Queue {
    order: VecDeque<Work>,
    queued: HashSet<Work>,
}

impl Queue {
    fn push(&mut self, work: Work) {
        if self.queued.insert(work.clone()) {
            self.order.push_back(work);
        }
    }

    fn pop(&mut self) -> Option<Work> {
        let work = self.order.pop_front()?;
        self.queued.remove(&work);
        Some(work)
    }
}

thread_local! {
    /// The queue being drained on this thread, if any.
    static QUEUE: RefCell<Option<Queue>> = const { RefCell::new(None) };
}

/// Queues work; if no queue is being drained on this thread, drains it now.
pub fn enqueue(state: &State, work: Vec<Work>) {
    if work.is_empty() {
        return;
    }
    let draining = QUEUE.with(|q| {
        let mut q = q.borrow_mut();
        let draining = q.is_some();
        let queue = q.get_or_insert_with(Queue::default);
        for w in work {
            queue.push(w);
        }
        draining
    });
    if draining {
        return;
    }
    // This call owns the queue: drain it, letting processed work queue more.
    loop {
        let next = QUEUE.with(|q| q.borrow_mut().as_mut().and_then(Queue::pop));
        let Some(work) = next else { break };
        process(state, work);
    }
    QUEUE.with(|q| *q.borrow_mut() = None);
}

fn process(state: &State, work: Work) {
    match work {
        Work::Crd(name) => crd::reconcile(state, &name),
        Work::Namespace(name) => namespace::reconcile(state, &name),
        Work::Owner(uid) => garbage_collector::process_owner(state, &uid),
        Work::Dependent(gr, key) => garbage_collector::process_dependent(state, &gr, &key),
    }
}

fn is_crd(res: &ApiResource) -> bool {
    res.group == apiextensions::GROUP && res.plural == "customresourcedefinitions"
}

fn is_namespace(res: &ApiResource) -> bool {
    res.group.is_empty() && res.plural == "namespaces"
}

fn deleting(obj: &StoredObject) -> bool {
    obj.metadata().get("deletionTimestamp").is_some()
}

/// Reports a committed create or update to the controllers and runs what it triggers.
pub fn after_commit(state: &State, res: &ApiResource, obj: &Arc<StoredObject>) {
    let name = meta_str(&obj.value, "name");
    let mut work = Vec::new();
    if is_crd(res) {
        work.push(Work::Crd(name.to_string()));
    }
    if is_namespace(res) && deleting(obj) {
        work.push(Work::Namespace(name.to_string()));
    }
    if deleting(obj) {
        let uid = meta_str(&obj.value, "uid");
        work.push(Work::Owner(uid.to_string()));
    }
    if owner_uids(&obj.value).next().is_some() {
        let ns = if res.namespaced {
            meta_str(&obj.value, "namespace")
        } else {
            ""
        };
        work.push(Work::Dependent(res.gr.clone(), ObjectKey::new(ns, name)));
    }
    enqueue(state, work);
}

/// Reports a removal: owners waiting for it, its own dependents, a terminating namespace or CRD
/// waiting for its content, and the registry when a CRD goes.
pub fn after_remove(state: &State, res: &ApiResource, obj: &Arc<StoredObject>) {
    if is_crd(res) {
        state.refresh_registry();
    }
    let mut work = vec![Work::Owner(meta_str(&obj.value, "uid").to_string())];
    work.extend(owner_uids(&obj.value).map(|uid| Work::Owner(uid.to_string())));
    let ns = meta_str(&obj.value, "namespace");
    if !ns.is_empty() && res.namespaced && namespace::is_terminating(state, ns) {
        work.push(Work::Namespace(ns.to_string()));
    }
    if let Some(c) = &res.crd {
        if c.terminating {
            work.push(Work::Crd(c.name.clone()));
        }
    }
    enqueue(state, work);
}
