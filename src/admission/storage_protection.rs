//! The StorageObjectInUseProtection admission plugin: every PersistentVolumeClaim, PersistentVolume
//! and VolumeAttributesClass is created with its protection finalizer
//! (`kubernetes.io/pvc-protection`, `kubernetes.io/pv-protection`,
//! `kubernetes.io/vac-protection`), which the kube-controller-manager's protection controllers
//! remove once nothing uses the object.
//!
//! kubefake runs the claim and volume controllers ([`crate::controllers::storage_protection`]);
//! VolumeAttributesClasses are not served yet.

use futures_util::future::BoxFuture;
use serde_json::{json, Value};

use super::{Attributes, Mutating, Operation};
use crate::error::ApiError;
use crate::registry::object_meta::{finalizers, meta_mut};

/// The finalizer of PersistentVolumeClaims.
pub const PVC_PROTECTION: &str = "kubernetes.io/pvc-protection";
/// The finalizer of PersistentVolumes.
pub const PV_PROTECTION: &str = "kubernetes.io/pv-protection";
/// The finalizer of VolumeAttributesClasses.
pub const VAC_PROTECTION: &str = "kubernetes.io/vac-protection";

/// The plugin.
pub struct StorageObjectInUseProtection;

/// The finalizer a create of this resource gets, if any.
fn finalizer_for(attrs: &Attributes<'_>) -> Option<&'static str> {
    if attrs.operation != Operation::Create || !attrs.subresource.is_empty() {
        return None;
    }
    let res = attrs.resource;
    match (res.group.as_str(), res.plural.as_str()) {
        ("", "persistentvolumeclaims") => Some(PVC_PROTECTION),
        ("", "persistentvolumes") => Some(PV_PROTECTION),
        ("storage.k8s.io", "volumeattributesclasses") => Some(VAC_PROTECTION),
        _ => None,
    }
}

/// Appends `finalizer` unless the object has it.
pub fn add_finalizer(object: &mut Value, finalizer: &str) {
    let mut list = finalizers(object);
    if list.iter().any(|f| f == finalizer) {
        return;
    }
    list.push(finalizer.to_string());
    meta_mut(object).insert("finalizers".into(), json!(list));
}

impl Mutating for StorageObjectInUseProtection {
    /// Creates of the protected resources.
    fn handles(&self, attrs: &Attributes<'_>) -> bool {
        finalizer_for(attrs).is_some()
    }

    fn admit<'a>(
        &'a self,
        attrs: &'a Attributes<'a>,
        object: &'a mut Value,
    ) -> BoxFuture<'a, Result<(), ApiError>> {
        if let Some(finalizer) = finalizer_for(attrs) {
            add_finalizer(object, finalizer);
        }
        Box::pin(std::future::ready(Ok(())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finalizer_added_once() {
        let mut pvc = json!({"metadata": {"name": "c", "finalizers": ["x"]}});
        add_finalizer(&mut pvc, PVC_PROTECTION);
        add_finalizer(&mut pvc, PVC_PROTECTION);
        assert_eq!(pvc["metadata"]["finalizers"], json!(["x", PVC_PROTECTION]));
    }
}
