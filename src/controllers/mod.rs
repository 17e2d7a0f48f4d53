//! The in-process controllers a real cluster runs in kube-controller-manager and
//! apiextensions-apiserver: CRD naming/establishing and cleanup, and namespace lifecycle.
//!
//! They run synchronously right after the write that concerns them ([`after_commit`],
//! [`after_remove`]), so a CRD is established before its create returns and a namespace deletion
//! has finished its cascade before the DELETE returns. They change objects only through the
//! store, so every step produces the watch events a real cluster produces.

pub mod crd;
pub mod namespace;

use std::sync::Arc;

use crate::apiextensions;
use crate::discovery::ApiResource;
use crate::state::State;
use crate::store::StoredObject;
use crate::strategy::object_meta::meta_str;

fn is_crd(res: &ApiResource) -> bool {
    res.group == apiextensions::GROUP && res.plural == "customresourcedefinitions"
}

fn is_namespace(res: &ApiResource) -> bool {
    res.group.is_empty() && res.plural == "namespaces"
}

/// Runs the controllers that care about a committed create or update. Returns the object's newer
/// state when a controller changed it (e.g. a CRD that became established).
pub fn after_commit(
    state: &State,
    res: &ApiResource,
    obj: &Arc<StoredObject>,
) -> Option<Arc<StoredObject>> {
    let name = meta_str(&obj.value, "name");
    if is_crd(res) {
        return crd::reconcile(state, name);
    }
    if is_namespace(res) && obj.metadata().get("deletionTimestamp").is_some() {
        return namespace::reconcile(state, name);
    }
    None
}

/// Runs the controllers that wait for an object to disappear: a terminating namespace waiting for
/// its content, a terminating CRD waiting for its objects, the registry for a deleted CRD.
pub fn after_remove(state: &State, res: &ApiResource, obj: &Arc<StoredObject>) {
    if is_crd(res) {
        state.refresh_registry();
        return;
    }
    let ns = meta_str(&obj.value, "namespace");
    if !ns.is_empty() && res.namespaced {
        namespace::content_removed(state, ns);
    }
    if let Some(c) = &res.crd {
        if c.terminating {
            crd::reconcile(state, &c.name);
        }
    }
}
