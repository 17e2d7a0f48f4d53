//! The core/v1 PersistentVolume kind (cluster-scoped): reclaim policy `Retain` and volume mode
//! `Filesystem` by default, status reset to `Pending` with its transition time on create and
//! kept on spec writes (the `status` subresource stamps a new transition time when the phase
//! changes), the apiserver's validation of access modes, capacity, reclaim policy, volume mode
//! and the one volume source a volume has (immutable afterwards), kubectl's columns, the
//! `name` field selector the apiserver keeps for compatibility, a DELETE that answers with the
//! object. The `kubernetes.io/pv-protection` finalizer is added on create by the
//! StorageObjectInUseProtection admission plugin ([`crate::admission::storage_protection`]).
//!
//! Not yet: the PV controller (binding, reclaiming) and the pv-protection controller that
//! releases the finalizer: a deleted PersistentVolume waits, Terminating, until its finalizer
//! is removed. Each volume source's own fields (NFS server, CSI driver...) are not validated.

use std::sync::Arc;

use serde_json::{json, Value};

use crate::controllers::storage_protection::volumes_gr;
use crate::controllers::Work;
use crate::error::{field, StatusCause};
use crate::registry::builtin;
use crate::registry::core::service::text;
use crate::registry::object_meta::meta_str;
use crate::registry::object_meta::now_rfc3339;
use crate::registry::resource::ApiResource;
use crate::registry::strategy::{keep_only_status, Strategy};
use crate::registry::table::{Column, Columns};
use crate::registry::validation::positive_quantity_errors;
use crate::store::{ObjectKey, StoredObject};

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind(
        "",
        "v1",
        "persistentvolumes",
        Arc::new(PersistentVolumeStrategy),
    )
    .part("status", Arc::new(PersistentVolumeStatusStrategy))
    .with(|r| {
        r.field_selectors(&["metadata.name", "name=metadata.name"])
            .table(columns())
            .delete_returns_object()
    })
    .build()
}

/// The access modes a volume or claim may ask for.
pub const ACCESS_MODES: [&str; 4] = [
    "ReadOnlyMany",
    "ReadWriteMany",
    "ReadWriteOnce",
    "ReadWriteOncePod",
];
/// The volume modes.
pub const VOLUME_MODES: [&str; 2] = ["Block", "Filesystem"];

/// (JSON name, the apiserver's field path name) of each volume source, in its order.
pub const SOURCES: [(&str, &str); 22] = [
    ("hostPath", "hostPath"),
    ("gcePersistentDisk", "gcePersistentDisk"),
    ("awsElasticBlockStore", "awsElasticBlockStore"),
    ("glusterfs", "glusterfs"),
    ("flocker", "flocker"),
    ("nfs", "nfs"),
    ("rbd", "rbd"),
    ("quobyte", "quobyte"),
    ("cephfs", "cephFS"),
    ("iscsi", "iscsi"),
    ("cinder", "cinder"),
    ("fc", "fc"),
    ("flexVolume", "flexVolume"),
    ("azureFile", "azureFile"),
    ("vsphereVolume", "vsphereVolume"),
    ("photonPersistentDisk", "photonPersistentDisk"),
    ("portworxVolume", "portworxVolume"),
    ("azureDisk", "azureDisk"),
    ("scaleIO", "scaleIO"),
    ("local", "local"),
    ("storageos", "storageos"),
    ("csi", "csi"),
];

/// core/v1 PersistentVolume.
pub struct PersistentVolumeStrategy;

impl Strategy for PersistentVolumeStrategy {
    /// A deleted volume is released by the protection controller once unused.
    fn after_commit(&self, obj: &StoredObject) -> Vec<Work> {
        if !obj.is_deleting() {
            return Vec::new();
        }
        let key = ObjectKey::new("", meta_str(&obj.value(), "name"));
        vec![Work::StorageProtection(volumes_gr(), key)]
    }
    fn track_generation(&self) -> bool {
        false
    }

    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn defaults(&self, obj: &mut Value) {
        if text(&obj["spec"], "persistentVolumeReclaimPolicy").is_empty() {
            obj["spec"]["persistentVolumeReclaimPolicy"] = json!("Retain");
        }
        if obj["spec"]["volumeMode"].is_null() {
            obj["spec"]["volumeMode"] = json!("Filesystem");
        }
        if text(&obj["status"], "phase").is_empty() {
            obj["status"]["phase"] = json!("Pending");
        }
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        obj["status"] = json!({"phase": "Pending", "lastPhaseTransitionTime": now_rfc3339()});
    }

    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        obj["status"] = old.get("status").cloned().unwrap_or(json!({}));
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        spec_errors(&obj["spec"])
    }

    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        let mut errs = spec_errors(&obj["spec"]);
        let changed = SOURCES
            .iter()
            .any(|(k, _)| obj["spec"].get(*k) != old["spec"].get(*k));
        if changed {
            errs.push(field::forbidden(
                "spec.persistentvolumesource",
                "spec.persistentvolumesource is immutable after creation",
            ));
        }
        if obj["spec"]["volumeMode"] != old["spec"]["volumeMode"] {
            errs.push(field::invalid(
                "volumeMode",
                &obj["spec"]["volumeMode"],
                "field is immutable",
            ));
        }
        errs
    }
}

/// `persistentvolumes/status`: a phase change stamps `lastPhaseTransitionTime`.
pub struct PersistentVolumeStatusStrategy;

impl Strategy for PersistentVolumeStatusStrategy {
    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        keep_only_status(obj, old);
        if obj["status"]["phase"] != old["status"]["phase"] && obj["status"].is_object() {
            obj["status"]["lastPhaseTransitionTime"] = json!(now_rfc3339());
        }
    }
}

/// Access modes: at least one (`detail` says why), supported, ReadWriteOncePod alone.
pub fn access_mode_errors(modes: &Value, path: &str, detail: &str) -> Vec<StatusCause> {
    let list = crate::registry::core::service::strings(modes);
    let mut errs = Vec::new();
    if list.is_empty() {
        errs.push(field::required(path, detail));
    }
    let (mut once_pod, mut others) = (false, false);
    for mode in &list {
        if !ACCESS_MODES.contains(&mode.as_str()) {
            errs.push(field::not_supported(path, &json!(mode), &ACCESS_MODES));
        } else if mode == "ReadWriteOncePod" {
            once_pod = true;
        } else {
            others = true;
        }
    }
    if once_pod && others {
        errs.push(field::forbidden(
            path,
            "may not use ReadWriteOncePod with other access modes",
        ));
    }
    errs
}

/// `ValidatePersistentVolumeSpec` for a PersistentVolume object.
fn spec_errors(spec: &Value) -> Vec<StatusCause> {
    let mut errs = access_mode_errors(&spec["accessModes"], "spec.accessModes", "");
    let capacity = spec["capacity"].as_object().cloned().unwrap_or_default();
    if capacity.is_empty() {
        errs.push(field::required("spec.capacity", ""));
    }
    if !capacity.contains_key("storage") || capacity.len() > 1 {
        errs.push(field::not_supported(
            "spec.capacity",
            &Value::Object(capacity.clone()),
            &["storage"],
        ));
    }
    for (k, v) in &capacity {
        errs.extend(positive_quantity_errors(&format!("spec.capacity[{k}]"), v));
    }
    let policy = text(spec, "persistentVolumeReclaimPolicy");
    if !policy.is_empty() && !["Delete", "Recycle", "Retain"].contains(&policy) {
        errs.push(field::not_supported(
            "spec.persistentVolumeReclaimPolicy",
            &json!(policy),
            &["Delete", "Recycle", "Retain"],
        ));
    }
    let mut count = 0;
    for (key, path) in SOURCES {
        if spec[key].is_null() {
            continue;
        }
        if count > 0 {
            errs.push(field::forbidden(
                &format!("spec.{path}"),
                "may not specify more than 1 volume type",
            ));
        }
        count += 1;
    }
    if count == 0 {
        errs.push(field::required("spec", "must specify a volume type"));
    }
    if let Some(mode) = spec["volumeMode"]
        .as_str()
        .filter(|m| !VOLUME_MODES.contains(m))
    {
        errs.push(field::not_supported(
            "spec.volumeMode",
            &json!(mode),
            &VOLUME_MODES,
        ));
    }
    errs
}

/// `GetAccessModesAsString`: RWO, ROX, RWX, RWOP, in that order.
pub fn access_modes_string(modes: &Value) -> String {
    let list = crate::registry::core::service::strings(modes);
    [
        ("ReadWriteOnce", "RWO"),
        ("ReadOnlyMany", "ROX"),
        ("ReadWriteMany", "RWX"),
        ("ReadWriteOncePod", "RWOP"),
    ]
    .iter()
    .filter(|(m, _)| list.iter().any(|x| x == m))
    .map(|(_, short)| *short)
    .collect::<Vec<_>>()
    .join(",")
}

/// The storage class of a volume or claim: the field, else the beta annotation.
pub fn storage_class(obj: &Value) -> String {
    let annotation =
        obj["metadata"]["annotations"]["volume.beta.kubernetes.io/storage-class"].as_str();
    annotation
        .unwrap_or_else(|| text(&obj["spec"], "storageClassName"))
        .to_string()
}

/// Deleted objects print as Terminating.
pub fn phase(obj: &Value) -> String {
    if obj["metadata"].get("deletionTimestamp").is_some() {
        return "Terminating".into();
    }
    text(&obj["status"], "phase").to_string()
}

fn columns() -> Columns {
    Columns::new(vec![
        Column::name(),
        Column::computed("Capacity", "string", 0, "", |o| {
            json!(o["spec"]["capacity"]["storage"].as_str().unwrap_or("0"))
        }),
        Column::computed("Access Modes", "string", 0, "", |o| {
            json!(access_modes_string(&o["spec"]["accessModes"]))
        }),
        Column::computed("Reclaim Policy", "string", 0, "", |o| {
            json!(text(&o["spec"], "persistentVolumeReclaimPolicy"))
        }),
        Column::computed("Status", "string", 0, "", |o| json!(phase(o))),
        Column::computed("Claim", "string", 0, "", |o| {
            let claim = &o["spec"]["claimRef"];
            if claim.is_object() {
                json!(format!(
                    "{}/{}",
                    text(claim, "namespace"),
                    text(claim, "name")
                ))
            } else {
                json!("")
            }
        }),
        Column::computed("StorageClass", "string", 0, "", |o| json!(storage_class(o))),
        Column::computed("VolumeAttributesClass", "string", 0, "", |o| {
            json!(o["spec"]["volumeAttributesClassName"]
                .as_str()
                .unwrap_or("<unset>"))
        }),
        Column::computed("Reason", "string", 0, "", |o| {
            json!(text(&o["status"], "reason"))
        }),
        Column::age("string"),
        Column::computed("VolumeMode", "string", 1, "", |o| {
            json!(o["spec"]["volumeMode"].as_str().unwrap_or("<unset>"))
        }),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_rules() {
        let pv =
            json!({"accessModes": [], "capacity": {"storage": "0"}, "nfs": {}, "hostPath": {}});
        let msgs: Vec<String> = spec_errors(&pv)
            .into_iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect();
        assert_eq!(
            msgs,
            [
                "spec.accessModes: Required value",
                "spec.capacity[storage]: Invalid value: \"0\": must be greater than zero",
                "spec.nfs: Forbidden: may not specify more than 1 volume type",
            ]
        );
        assert_eq!(
            access_modes_string(&json!(["ReadWriteMany", "ReadWriteOnce"])),
            "RWO,RWX"
        );
    }
}
