//! The storage protection controllers of kube-controller-manager (`pvc-protection`,
//! `pv-protection`): the StorageObjectInUseProtection admission plugin gives every claim and
//! volume a finalizer; once one is being deleted, its finalizer goes as soon as nothing uses
//! it, so the object goes too.
//!
//! In use means: a claim named by a pod of its namespace that has not finished (phase neither
//! Succeeded nor Failed); a volume whose phase is `Bound`. kubefake binds nothing, so a volume
//! is only in use when a client set its status so. A claim is looked at again when a pod that
//! named it goes or finishes.

use serde_json::Value;

use super::release;
use crate::admission::storage_protection::{PVC_PROTECTION, PV_PROTECTION};
use crate::context::Context;
use crate::registry::object_meta::finalizers;
use crate::state::State;
use crate::store::{GroupResource, ObjectKey, Snapshot};

/// Claims and volumes, the objects this controller protects.
pub fn claims_gr() -> GroupResource {
    GroupResource::new("", "persistentvolumeclaims")
}

/// See [`claims_gr`].
pub fn volumes_gr() -> GroupResource {
    GroupResource::new("", "persistentvolumes")
}

/// Releases a deleted claim or volume that nothing uses.
pub async fn reconcile(state: &State, ctx: &Context, gr: &GroupResource, key: &ObjectKey) {
    let snapshot = state.store.snapshot();
    let Some(obj) = snapshot.get(gr, key) else {
        return;
    };
    if !obj.is_deleting() {
        return;
    }
    let (finalizer, in_use) = if *gr == claims_gr() {
        (PVC_PROTECTION, claim_in_use(&snapshot, key))
    } else if *gr == volumes_gr() {
        (PV_PROTECTION, obj.value["status"]["phase"] == "Bound")
    } else {
        return;
    };
    if in_use || !finalizers(&obj.value).iter().any(|f| f == finalizer) {
        return;
    }
    let Some(res) = state.registry().by_group_resource(gr) else {
        return;
    };
    release(state, ctx, &res, key, finalizer).await;
}

/// Whether a pod of the claim's namespace that has not finished names the claim.
fn claim_in_use(snapshot: &Snapshot, key: &ObjectKey) -> bool {
    let pods = GroupResource::new("", "pods");
    snapshot
        .list(&pods, Some(&key.namespace))
        .any(|(_, pod)| !pod_finished(&pod.value) && claims_of(&pod.value).any(|c| c == key.name))
}

/// Whether a pod ran to its end (its claims are free).
pub fn pod_finished(pod: &Value) -> bool {
    matches!(
        pod["status"]["phase"].as_str(),
        Some("Succeeded" | "Failed")
    )
}

/// The claims a pod's volumes name.
pub fn claims_of(pod: &Value) -> impl Iterator<Item = &str> {
    pod["spec"]["volumes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v["persistentVolumeClaim"]["claimName"].as_str())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn claims_and_finished_pods() {
        let pod = json!({"spec": {"volumes": [
            {"name": "a", "persistentVolumeClaim": {"claimName": "data"}},
            {"name": "b", "emptyDir": {}}]},
            "status": {"phase": "Running"}});
        assert_eq!(claims_of(&pod).collect::<Vec<_>>(), ["data"]);
        assert!(!pod_finished(&pod));
        assert!(pod_finished(&json!({"status": {"phase": "Failed"}})));
        assert!(!pod_finished(&json!({})));
    }
}
