//! Snapshots of the whole state, restore and reset.
//!
//! A snapshot is the store's current [`Snapshot`]: persistent maps, so taking one is an
//! `Arc` clone, whatever the store holds. Restoring one writes the difference between the
//! current state and the snapshot as one store write ([`crate::store::Txn::restore`]): the
//! resourceVersion goes on forward, never back, objects changed since come back with new
//! resourceVersions, and watchers see the DELETED, MODIFIED and ADDED events of the difference
//! (a watcher that falls behind by more than its buffer gets a 410 Expired, as on any large
//! write). Clients' caches therefore stay valid: an informer ends up with the restored state
//! without a re-list, which is what a test that resets between cases needs. Nothing is
//! restored in place, so a resourceVersion a client holds from before never names another state.
//!
//! What is derived from stored objects follows the restore: the served resources (CRDs) are
//! rebuilt when the CRD table changed, and the controllers are told of every restored change as
//! of any other write, so they re-arm what they wait for (a simulated pod's run, a CronJob's
//! schedule) and find nothing else to do in a state they had already settled. Everything else
//! that looks derived reads the request's snapshot (admission configuration, RBAC, cluster IP
//! and node port allocations) or is keyed by content (compiled CEL, verified tokens).
//!
//! Reset restores the start state: what [`crate::ServerBuilder::start`] recorded after the
//! bootstrap objects, the CRDs and the objects it preloaded. A server starts with no fault rule
//! and an empty request log, so reset also removes every fault rule and clears the log: with
//! one server per suite and a reset per test, a test neither meets the faults of the one
//! before nor counts its requests. Restoring a snapshot, a step inside a test, leaves both.

use std::collections::HashMap;
use std::sync::Arc;

use parking_lot::Mutex;

use crate::context::Context;
use crate::controllers;
use crate::error::ApiError;
use crate::registry::apiextensions;
use crate::registry::catalog::Registry;
use crate::state::State;
use crate::store::{Event, EventType, GroupResource, Snapshot};

/// How many snapshots one server keeps; past it taking one is refused until some are deleted.
pub const MAX_SNAPSHOTS: usize = 1024;

/// Why a snapshot operation failed.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// No snapshot has this id (never taken, or deleted).
    #[error("snapshot {0:?} not found")]
    NotFound(String),
    /// [`MAX_SNAPSHOTS`] are kept already.
    #[error("too many snapshots ({MAX_SNAPSHOTS}): delete some first")]
    TooMany,
    /// The store refused the restoring write (a bug: restored states were valid once).
    #[error(transparent)]
    Store(#[from] ApiError),
    /// The handle stands for an existing cluster, which has no snapshots.
    #[error(transparent)]
    NotAvailable(#[from] crate::NotAvailable),
}

impl From<SnapshotError> for ApiError {
    fn from(e: SnapshotError) -> ApiError {
        match e {
            SnapshotError::NotFound(_) => ApiError::status(404, "NotFound", e.to_string()),
            SnapshotError::TooMany => ApiError::status(429, "TooManyRequests", e.to_string()),
            SnapshotError::Store(e) => e,
            SnapshotError::NotAvailable(_) => {
                ApiError::status(501, "NotImplemented", e.to_string())
            }
        }
    }
}

/// The snapshots of one server, by id, and its start state.
#[derive(Default)]
pub struct Snapshots {
    start: Mutex<Option<Arc<Snapshot>>>,
    taken: Mutex<Taken>,
}

#[derive(Default)]
struct Taken {
    next: u64,
    by_id: HashMap<String, Arc<Snapshot>>,
}

/// What a restore changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Restored {
    /// How many objects were put back or removed.
    pub changes: usize,
    /// The resourceVersion after the restore (the state it names is the snapshot's).
    pub resource_version: u64,
}

impl Snapshots {
    /// Records the current state as the one [`reset`] returns to.
    pub fn mark_start(&self, state: Arc<Snapshot>) {
        *self.start.lock() = Some(state);
    }

    fn start(&self) -> Option<Arc<Snapshot>> {
        self.start.lock().clone()
    }

    fn get(&self, id: &str) -> Result<Arc<Snapshot>, SnapshotError> {
        let taken = self.taken.lock();
        let found = taken.by_id.get(id).cloned();
        found.ok_or_else(|| SnapshotError::NotFound(id.to_string()))
    }
}

/// Takes a snapshot of every object (O(1)) and returns its id.
pub fn take(state: &State) -> Result<String, SnapshotError> {
    let snap = state.store.snapshot();
    let mut taken = state.snapshots.taken.lock();
    if taken.by_id.len() >= MAX_SNAPSHOTS {
        return Err(SnapshotError::TooMany);
    }
    taken.next += 1;
    let id = format!("snapshot-{}", taken.next);
    taken.by_id.insert(id.clone(), snap);
    Ok(id)
}

/// Forgets a snapshot.
pub fn delete(state: &State, id: &str) -> Result<(), SnapshotError> {
    let removed = state.snapshots.taken.lock().by_id.remove(id);
    removed
        .map(|_| ())
        .ok_or_else(|| SnapshotError::NotFound(id.to_string()))
}

/// Brings back the state of snapshot `id` (see the module documentation).
pub async fn restore(state: &State, id: &str) -> Result<Restored, SnapshotError> {
    let target = state.snapshots.get(id)?;
    restore_to(state, &target).await
}

/// Returns to the start state (see [`crate::state::State::mark_start_state`]; a state never
/// bootstrapped returns to an empty store), with no fault rule and an empty request log.
pub async fn reset(state: &State) -> Result<Restored, SnapshotError> {
    state.faults.clear();
    let target = state.snapshots.start().unwrap_or_default();
    let restored = restore_to(state, &target).await?;
    state.requests.clear();
    Ok(restored)
}

async fn restore_to(state: &State, target: &Snapshot) -> Result<Restored, SnapshotError> {
    let before = state.store.snapshot();
    let registry = state.registry();
    let events = state.store.write(|txn| txn.restore(target))?;
    let after = state.store.snapshot();
    let crds = GroupResource::new(apiextensions::GROUP, "customresourcedefinitions");
    if !before.same_table(&after, &crds) {
        state.refresh_registry();
    }
    report(state, &registry, &events).await;
    Ok(Restored {
        changes: events.len(),
        resource_version: after.rv,
    })
}

/// Tells the controllers of every restored change, as the write path does: removals with the
/// resources served before the restore, puts with those served after it.
async fn report(state: &State, before: &Registry, events: &[Arc<Event>]) {
    if events.is_empty() {
        return;
    }
    let after = state.registry();
    let ctx = Context::internal();
    let changes = async {
        for event in events {
            if event.kind == EventType::Deleted {
                if let Some(res) = before.by_group_resource(&event.resource) {
                    controllers::after_remove(state, &ctx, &res, &event.object).await;
                }
            } else if let Some(res) = after.by_group_resource(&event.resource) {
                controllers::after_commit(state, &ctx, &res, &event.object).await;
            }
        }
    };
    controllers::after_all(state, &ctx, changes).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshots_are_bounded_and_can_be_forgotten() {
        let (_tx, rx) = tokio::sync::watch::channel(false);
        let state = State::new("127.0.0.1:1".into(), crate::Options::default(), rx);
        let ids: Vec<String> = (0..MAX_SNAPSHOTS)
            .map(|_| take(&state).expect("room"))
            .collect();
        let refused = ApiError::from(take(&state).expect_err("full"));
        assert_eq!((refused.code, &*refused.reason), (429, "TooManyRequests"));
        delete(&state, &ids[0]).expect("forget one");
        let missing = ApiError::from(delete(&state, &ids[0]).expect_err("gone"));
        assert_eq!((missing.code, &*missing.reason), (404, "NotFound"));
        let id = take(&state).expect("room again");
        assert!(!ids.contains(&id), "ids are never reused");
    }
}
