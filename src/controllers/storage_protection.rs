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
        (PV_PROTECTION, obj.value()["status"]["phase"] == "Bound")
    } else {
        return;
    };
    if in_use || !finalizers(&obj.value()).iter().any(|f| f == finalizer) {
        return;
    }
    let Some(res) = state.registry().by_group_resource(gr) else {
        return;
    };
    release(state, ctx, &res, key, finalizer).await;
}

/// Whether a pod of the claim's namespace uses the claim.
fn claim_in_use(snapshot: &Snapshot, key: &ObjectKey) -> bool {
    let pods = GroupResource::new("", "pods");
    snapshot
        .list(&pods, Some(&key.namespace))
        .any(|(_, pod)| pod_uses_claim(&pod.value(), &key.name))
}

/// `podUsesPVCForDeletion`: only a scheduled pod holds a claim (the kubelet refuses to start
/// one on a claim being deleted): one its `persistentVolumeClaim` volumes name, whatever its
/// phase, or, until it has finished, one of its `ephemeral` volumes' (`<pod>-<volume>`).
fn pod_uses_claim(pod: &Value, claim: &str) -> bool {
    if pod["spec"]["nodeName"].as_str().unwrap_or("").is_empty() {
        return false;
    }
    let pod_name = pod["metadata"]["name"].as_str().unwrap_or("");
    let volumes = pod["spec"]["volumes"].as_array().into_iter().flatten();
    volumes.into_iter().any(|v| {
        v["persistentVolumeClaim"]["claimName"] == claim
            || (!pod_finished(pod)
                && v["ephemeral"].is_object()
                && ephemeral_claim_name(pod_name, v) == claim)
    })
}

/// The claim an `ephemeral` volume gets: `<pod>-<volume>`.
fn ephemeral_claim_name(pod: &str, volume: &Value) -> String {
    format!("{pod}-{}", volume["name"].as_str().unwrap_or(""))
}

/// Whether a pod ran to its end (its claims are free).
pub fn pod_finished(pod: &Value) -> bool {
    matches!(
        pod["status"]["phase"].as_str(),
        Some("Succeeded" | "Failed")
    )
}

/// The claims a pod's volumes name or create (ephemeral volumes).
pub fn claims_of(pod: &Value) -> impl Iterator<Item = String> + '_ {
    let pod_name = pod["metadata"]["name"].as_str().unwrap_or("");
    pod["spec"]["volumes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(
            move |v| match v["persistentVolumeClaim"]["claimName"].as_str() {
                Some(c) => Some(c.to_string()),
                None => v["ephemeral"]
                    .is_object()
                    .then(|| ephemeral_claim_name(pod_name, v)),
            },
        )
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

    #[test]
    fn only_scheduled_pods_hold_claims() {
        let pod = |node: &str, phase: &str| {
            json!({"metadata": {"name": "p"}, "spec": {"nodeName": node, "volumes": [
                {"name": "a", "persistentVolumeClaim": {"claimName": "data"}},
                {"name": "scratch", "ephemeral": {"volumeClaimTemplate": {}}}]},
                "status": {"phase": phase}})
        };
        assert!(!pod_uses_claim(&pod("", "Pending"), "data"), "unscheduled");
        assert!(pod_uses_claim(&pod("n1", "Running"), "data"));
        assert!(
            pod_uses_claim(&pod("n1", "Succeeded"), "data"),
            "finished still holds"
        );
        assert!(pod_uses_claim(&pod("n1", "Running"), "p-scratch"));
        assert!(
            !pod_uses_claim(&pod("n1", "Failed"), "p-scratch"),
            "ephemeral freed"
        );
        assert_eq!(
            claims_of(&pod("n1", "Running")).collect::<Vec<_>>(),
            ["data", "p-scratch"]
        );
    }
}
