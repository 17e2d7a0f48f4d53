//! CRD naming, establishing and cleanup (apiextensions-apiserver's naming, establishing and
//! finalizer controllers in one step).

use std::sync::Arc;

use serde_json::{json, Value};

use crate::apiextensions::{self, Crd, CLEANUP_FINALIZER};
use crate::error::ApiError;
use crate::state::State;
use crate::store::{GroupResource, ObjectKey, StoredObject, Txn};
use crate::strategy::builtin::{reconcile_names, set_condition};
use crate::strategy::object_meta::{finalizers, meta_mut, now_rfc3339};

/// The CRD table.
pub fn crds_gr() -> GroupResource {
    GroupResource::new(apiextensions::GROUP, "customresourcedefinitions")
}

/// Brings one CRD to its desired state: names accepted and established, or, when it is being
/// deleted, its objects removed and then the CRD itself. Refreshes the registry and returns the
/// CRD's latest state (`None` once it is gone).
pub fn reconcile(state: &State, name: &str) -> Option<Arc<StoredObject>> {
    let result = state.store.write(|txn| reconcile_in(txn, name));
    state.refresh_registry();
    match result {
        Ok(latest) => latest,
        Err(e) => {
            tracing::error!(error = %e, crd = name, "reconciling CRD");
            state
                .store
                .snapshot()
                .get(&crds_gr(), &ObjectKey::new("", name))
        }
    }
}

fn reconcile_in(txn: &mut Txn, name: &str) -> Result<Option<Arc<StoredObject>>, ApiError> {
    let gr = crds_gr();
    let key = ObjectKey::new("", name);
    let Some(current) = txn.view().get(&gr, &key) else {
        return Ok(None);
    };
    let mut obj = current.value.clone();
    let deleting = obj["metadata"].get("deletionTimestamp").is_some();
    if !deleting {
        let others: Vec<Crd> = txn
            .view()
            .list(&gr, None)
            .filter(|(k, _)| k.name != name)
            .filter_map(|(_, o)| Crd::from_value(&o.value))
            .collect();
        reconcile_names(&mut obj, &others);
        if obj == current.value {
            return Ok(Some(current));
        }
        return txn.put(&gr, key, obj).map(Some);
    }
    if !finalizers(&obj).iter().any(|f| f == CLEANUP_FINALIZER) {
        return Ok(Some(current));
    }
    let Some(crd) = Crd::from_value(&obj) else {
        return Ok(Some(current));
    };
    set_condition(
        &mut obj,
        "Terminating",
        "True",
        "InstanceDeletionInProgress",
        "CustomResource deletion is in progress",
    );
    if obj != current.value {
        txn.put(&gr, key.clone(), obj.clone())?;
    }
    let plural = if crd.accepted_names.plural.is_empty() {
        &crd.spec.names.plural
    } else {
        &crd.accepted_names.plural
    };
    let remaining = delete_all(txn, &GroupResource::new(&crd.spec.group, plural), None)?;
    if remaining > 0 {
        return Ok(txn.view().get(&gr, &key));
    }
    let (reason, message) = if crd.established {
        ("InstanceDeletionCompleted", "removed all instances")
    } else {
        ("NeverEstablished", "resource was never established")
    };
    set_condition(&mut obj, "Terminating", "False", reason, message);
    let left: Vec<Value> = finalizers(&obj)
        .into_iter()
        .filter(|f| f != CLEANUP_FINALIZER)
        .map(Value::String)
        .collect();
    let done = left.is_empty();
    meta_mut(&mut obj).insert("finalizers".into(), Value::Array(left));
    if done {
        txn.remove(&gr, &key)?;
        Ok(None)
    } else {
        txn.put(&gr, key, obj).map(Some)
    }
}

/// Deletes every object of a table (in one namespace, when given) the way a DeleteCollection
/// does: objects without finalizers go at once, the others get a deletionTimestamp. Returns how
/// many are still present.
pub fn delete_all(
    txn: &mut Txn,
    gr: &GroupResource,
    namespace: Option<&str>,
) -> Result<usize, ApiError> {
    let objects: Vec<(ObjectKey, Arc<StoredObject>)> = txn
        .view()
        .list(gr, namespace)
        .map(|(k, o)| (k.clone(), o.clone()))
        .collect();
    let mut remaining = 0;
    for (key, obj) in objects {
        if finalizers(&obj.value).is_empty() {
            txn.remove(gr, &key)?;
            continue;
        }
        remaining += 1;
        if obj.metadata().get("deletionTimestamp").is_none() {
            let mut marked = obj.value.clone();
            let meta = meta_mut(&mut marked);
            meta.insert("deletionTimestamp".into(), json!(now_rfc3339()));
            meta.insert("deletionGracePeriodSeconds".into(), json!(0));
            txn.put(gr, key, marked)?;
        }
    }
    Ok(remaining)
}
