//! Namespace lifecycle (kube-controller-manager's namespace controller): once a namespace is
//! being deleted, delete everything in it, then remove the `kubernetes` finalizer so the
//! namespace itself goes.

use std::sync::Arc;

use serde_json::Value;

use super::crd::delete_all;
use crate::error::ApiError;
use crate::rest::namespaces_gr;
use crate::state::State;
use crate::store::{ObjectKey, StoredObject, Txn};
use crate::strategy::builtin::NAMESPACE_FINALIZER;
use crate::strategy::object_meta::finalizers;

/// Deletes the content of a terminating namespace and finishes it when nothing is left. Returns
/// the namespace's latest state (`None` once it is gone).
pub fn reconcile(state: &State, name: &str) -> Option<Arc<StoredObject>> {
    let resources: Vec<_> = state
        .registry()
        .each_resource()
        .into_iter()
        .filter(|r| r.namespaced)
        .map(|r| r.gr.clone())
        .collect();
    let result = state.store.write(|txn| {
        let key = ObjectKey::new("", name);
        let Some(ns) = txn.view().get(&namespaces_gr(), &key) else {
            return Ok(None);
        };
        if ns.metadata().get("deletionTimestamp").is_none() {
            return Ok(Some(ns));
        }
        let mut remaining = 0;
        for gr in &resources {
            remaining += delete_all(txn, gr, Some(name))?;
        }
        if remaining > 0 {
            return Ok(Some(ns));
        }
        finish(txn, &ns, &key)
    });
    match result {
        Ok(latest) => latest,
        Err(e) => {
            tracing::error!(error = %e, namespace = name, "reconciling namespace");
            None
        }
    }
}

/// Called when a namespaced object leaves the store: a terminating namespace may now be empty.
pub fn content_removed(state: &State, namespace: &str) {
    let terminating = state
        .store
        .snapshot()
        .get(&namespaces_gr(), &ObjectKey::new("", namespace))
        .is_some_and(|ns| ns.metadata().get("deletionTimestamp").is_some());
    if terminating {
        reconcile(state, namespace);
    }
}

/// Drops the `kubernetes` finalizer; the namespace goes when no other finalizer holds it.
fn finish(
    txn: &mut Txn,
    ns: &StoredObject,
    key: &ObjectKey,
) -> Result<Option<Arc<StoredObject>>, ApiError> {
    let mut obj = ns.value.clone();
    let spec_finalizers: Vec<Value> = obj["spec"]["finalizers"]
        .as_array()
        .map(|f| {
            f.iter()
                .filter(|v| *v != NAMESPACE_FINALIZER)
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    let done = spec_finalizers.is_empty() && finalizers(&obj).is_empty();
    obj["spec"]["finalizers"] = Value::Array(spec_finalizers);
    if done {
        txn.remove(&namespaces_gr(), key)?;
        Ok(None)
    } else if obj != ns.value {
        txn.put(&namespaces_gr(), key.clone(), obj).map(Some)
    } else {
        Ok(txn.view().get(&namespaces_gr(), key))
    }
}
