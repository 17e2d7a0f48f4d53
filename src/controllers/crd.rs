//! CRD naming, establishing and cleanup (apiextensions-apiserver's naming, establishing and
//! finalizer controllers).

use std::sync::Arc;

use serde_json::Value;

use super::APISERVER_MANAGER;
use crate::context::Context;
use crate::error::ApiError;
use crate::registry::apiextensions::crd::{reconcile_names, set_condition};
use crate::registry::apiextensions::{self, Crd, CLEANUP_FINALIZER};
use crate::registry::object_meta::{finalizers, meta_mut};
use crate::registry::resource::ApiResource;
use crate::registry::store::{self as rest, DeleteOptions};
use crate::state::State;
use crate::store::{GroupResource, ObjectKey, StoredObject};

/// The CRD table.
pub fn crds_gr() -> GroupResource {
    GroupResource::new(apiextensions::GROUP, "customresourcedefinitions")
}

/// Brings one CRD to its desired state: names accepted and established; or, once it is being
/// deleted, its objects deleted and then the CRD itself. The registry follows every change.
pub async fn reconcile(state: &State, ctx: &Context, name: &str) {
    let key = ObjectKey::new("", name);
    let res = crd_resource(state);
    let deleting = state.store.write(|txn| {
        let gr = crds_gr();
        let Some(current) = txn.view().get(&gr, &key) else {
            return Ok(None);
        };
        if current.is_deleting() {
            return Ok(Some(current));
        }
        let others: Vec<Crd> = txn
            .view()
            .list(&gr, None)
            .filter(|(k, _)| k.name != name)
            .filter_map(|(_, o)| Crd::from_value(&o.value()))
            .collect();
        let mut obj = current.value().clone();
        reconcile_names(&mut obj, &others);
        if obj != current.value() {
            super::record_status_update(
                res.as_deref(),
                APISERVER_MANAGER,
                &current.value(),
                &mut obj,
            );
            txn.put(&gr, key.clone(), obj)?;
        }
        Ok(None)
    });
    state.refresh_registry();
    match deleting {
        Ok(Some(crd))
            if finalizers(&crd.value())
                .iter()
                .any(|f| f == CLEANUP_FINALIZER) =>
        {
            if let Err(e) = clean_up(state, ctx, name).await {
                tracing::error!(error = %e, crd = name, "deleting the objects of a CRD");
            }
        }
        Ok(_) => {}
        Err(e) => tracing::error!(error = %e, crd = name, "naming a CRD"),
    }
}

/// The CRD resource, whose schema the managedFields of the controllers' writes follow.
fn crd_resource(state: &State) -> Option<Arc<ApiResource>> {
    state
        .registry()
        .resolve(apiextensions::GROUP, "v1", "customresourcedefinitions")
}

/// Sets a condition on the stored CRD (the controllers' UpdateStatus).
fn update_crd(state: &State, name: &str, change: impl Fn(&mut Value)) -> Result<(), ApiError> {
    let res = crd_resource(state);
    state.store.write(|txn| {
        let key = ObjectKey::new("", name);
        let Some(current) = txn.view().get(&crds_gr(), &key) else {
            return Ok(());
        };
        let mut obj = current.value().clone();
        change(&mut obj);
        if obj != current.value() {
            super::record_status_update(
                res.as_deref(),
                APISERVER_MANAGER,
                &current.value(),
                &mut obj,
            );
            txn.put(&crds_gr(), key, obj)?;
        }
        Ok(())
    })
}

/// The finalizer controller: delete every object, then let the CRD go.
async fn clean_up(state: &State, ctx: &Context, name: &str) -> Result<(), ApiError> {
    let Some(crd) = state
        .store
        .snapshot()
        .get(&crds_gr(), &ObjectKey::new("", name))
        .and_then(|o| Crd::from_value(&o.value()))
    else {
        return Ok(());
    };
    update_crd(state, name, |obj| {
        set_condition(
            obj,
            "Terminating",
            "True",
            "InstanceDeletionInProgress",
            "CustomResource deletion is in progress",
        );
    })?;
    let plural = if crd.accepted_names.plural.is_empty() {
        &crd.spec.names.plural
    } else {
        &crd.accepted_names.plural
    };
    let gr = GroupResource::new(&crd.spec.group, plural);
    if crd.established {
        delete_objects(state, ctx, &gr).await?;
    }
    if state.store.snapshot().count(&gr) > 0 {
        return Ok(());
    }
    if let Some(gone) = release(state, name, crd.established)? {
        if let Some(res) =
            state
                .registry()
                .resolve(apiextensions::GROUP, "v1", "customresourcedefinitions")
        {
            super::after_remove(state, ctx, &res, &gone).await;
        }
    }
    state.refresh_registry();
    Ok(())
}

/// Deletes every object of a CRD's resource not already being deleted.
async fn delete_objects(state: &State, ctx: &Context, gr: &GroupResource) -> Result<(), ApiError> {
    let Some(res) = state.registry().by_group_resource(gr) else {
        return Ok(());
    };
    let keys: Vec<ObjectKey> = state
        .store
        .snapshot()
        .list(gr, None)
        .filter(|(_, o)| !o.is_deleting())
        .map(|(k, _)| k.clone())
        .collect();
    for key in keys {
        let already = state
            .store
            .snapshot()
            .get(gr, &key)
            .is_some_and(|o| o.is_deleting());
        if already {
            continue;
        }
        let deleted = rest::delete(
            state,
            ctx,
            &res,
            &key.namespace,
            &key.name,
            &DeleteOptions::default(),
        )
        .await;
        match deleted {
            Ok(_) => {}
            Err(e) if e.code == 404 => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Sets the final Terminating condition and drops the cleanup finalizer; the CRD goes when no
/// other finalizer holds it (its last state is returned then).
fn release(
    state: &State,
    name: &str,
    established: bool,
) -> Result<Option<Arc<StoredObject>>, ApiError> {
    let (reason, message) = if established {
        ("InstanceDeletionCompleted", "removed all instances")
    } else {
        ("NeverEstablished", "resource was never established")
    };
    state.store.write(|txn| {
        let key = ObjectKey::new("", name);
        let Some(current) = txn.view().get(&crds_gr(), &key) else {
            return Ok(None);
        };
        let mut obj = current.value().clone();
        set_condition(&mut obj, "Terminating", "False", reason, message);
        let left: Vec<Value> = finalizers(&obj)
            .into_iter()
            .filter(|f| f != CLEANUP_FINALIZER)
            .map(Value::String)
            .collect();
        if left.is_empty() {
            return txn.remove(&crds_gr(), &key);
        }
        meta_mut(&mut obj).insert("finalizers".into(), Value::Array(left));
        txn.put(&crds_gr(), key, obj)?;
        Ok(None)
    })
}
