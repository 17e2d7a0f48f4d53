//! The core/v1 PersistentVolumeClaim kind: volume mode `Filesystem` by default, status reset to
//! `Pending` on create and kept on spec writes, the apiserver's validation (access modes and a
//! positive `resources.requests.storage` required, a spec immutable after creation but for the
//! volume name, once, and larger storage requests), the `status` subresource, kubectl's
//! columns, the `name` field selector, a DELETE that answers with the object. The
//! `kubernetes.io/pvc-protection` finalizer is added on create by the
//! StorageObjectInUseProtection admission plugin ([`crate::admission::storage_protection`]).
//!
//! Not yet: the PV controller (claims stay Pending), the pvc-protection controller that releases
//! the finalizer (a deleted claim waits, Terminating, until its finalizer is removed), and the
//! diff the apiserver appends to its "spec is immutable" message.

use std::sync::Arc;

use serde_json::{json, Value};

use super::persistentvolume::{
    access_mode_errors, access_modes_string, phase, storage_class, VOLUME_MODES,
};
use crate::controllers::storage_protection::claims_gr;
use crate::controllers::Work;
use crate::error::{field, StatusCause};
use crate::registry::builtin;
use crate::registry::core::service::text;
use crate::registry::object_meta::meta_str;
use crate::registry::resource::ApiResource;
use crate::registry::strategy::{keep_only_status, Strategy};
use crate::registry::table::{Column, Columns};
use crate::registry::validation::{
    positive_quantity_errors, quantity_value, resource_quantity_errors,
};
use crate::store::{ObjectKey, StoredObject};

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind(
        "",
        "v1",
        "persistentvolumeclaims",
        Arc::new(PersistentVolumeClaimStrategy),
    )
    .part("status", Arc::new(PersistentVolumeClaimStatusStrategy))
    .with(|r| {
        r.field_selectors(&["metadata.name", "metadata.namespace", "name=metadata.name"])
            .table(columns())
            .delete_returns_object()
    })
    .build()
}

/// core/v1 PersistentVolumeClaim.
pub struct PersistentVolumeClaimStrategy;

impl Strategy for PersistentVolumeClaimStrategy {
    /// A deleted claim is released by the protection controller once unused.
    fn after_commit(&self, obj: &StoredObject) -> Vec<Work> {
        if !obj.is_deleting() {
            return Vec::new();
        }
        let key = ObjectKey::new(
            meta_str(&obj.value(), "namespace"),
            meta_str(&obj.value(), "name"),
        );
        vec![Work::StorageProtection(claims_gr(), key)]
    }
    fn track_generation(&self) -> bool {
        false
    }

    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn defaults(&self, obj: &mut Value) {
        if obj["spec"]["volumeMode"].is_null() {
            obj["spec"]["volumeMode"] = json!("Filesystem");
        }
        if text(&obj["status"], "phase").is_empty() {
            obj["status"]["phase"] = json!("Pending");
        }
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        obj["status"] = json!({"phase": "Pending"});
    }

    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        obj["status"] = old.get("status").cloned().unwrap_or(json!({}));
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        spec_errors(&obj["spec"])
    }

    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        let mut errs = spec_errors(&obj["spec"]);
        errs.extend(immutability_errors(obj, old));
        errs
    }
}

/// `persistentvolumeclaims/status`.
pub struct PersistentVolumeClaimStatusStrategy;

impl Strategy for PersistentVolumeClaimStatusStrategy {
    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        keep_only_status(obj, old);
    }

    fn validate_update(&self, obj: &Value, _old: &Value) -> Vec<StatusCause> {
        let status = &obj["status"];
        let mut errs = access_mode_errors_if_any(&status["accessModes"]);
        for (k, v) in status["capacity"].as_object().into_iter().flatten() {
            errs.extend(resource_quantity_errors(
                k,
                &format!("status.capacity[{k}]"),
                v,
            ));
        }
        errs
    }
}

fn access_mode_errors_if_any(modes: &Value) -> Vec<StatusCause> {
    if modes.as_array().is_none_or(Vec::is_empty) {
        return Vec::new();
    }
    access_mode_errors(modes, "status.accessModes", "")
}

/// `ValidatePersistentVolumeClaimSpec`.
fn spec_errors(spec: &Value) -> Vec<StatusCause> {
    let mut errs = access_mode_errors(
        &spec["accessModes"],
        "spec.accessModes",
        "at least 1 access mode is required",
    );
    match spec["resources"]["requests"].get("storage") {
        None => errs.push(field::required("spec.resources[storage]", "")),
        Some(q) => {
            let positive = positive_quantity_errors("spec.resources[storage]", q);
            if positive.is_empty() {
                errs.extend(resource_quantity_errors(
                    "storage",
                    "spec.resources[storage]",
                    q,
                ));
            }
            errs.extend(positive);
        }
    }
    if let Some(class) = spec["storageClassName"].as_str().filter(|c| !c.is_empty()) {
        errs.extend(crate::registry::validation::dns_subdomain_errors(
            "spec.storageClassName",
            class,
        ));
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

/// A claim's spec may not change but for its volume name (once) and its storage request
/// (it may shrink back, but not to the capacity the volume has).
fn immutability_errors(obj: &Value, old: &Value) -> Vec<StatusCause> {
    let mut new_spec = obj["spec"].clone();
    let mut old_spec = old["spec"].clone();
    if text(&old_spec, "volumeName").is_empty() {
        old_spec["volumeName"] = new_spec["volumeName"].clone();
    }
    let bound = text(&obj["status"], "phase") == "Bound";
    if bound {
        new_spec["resources"]["requests"]["storage"] =
            old_spec["resources"]["requests"]["storage"].clone();
        new_spec["volumeAttributesClassName"] = old_spec["volumeAttributesClassName"].clone();
    }
    let mut errs = Vec::new();
    let strip_nulls = |v: &Value| -> Value {
        match v {
            Value::Object(m) => Value::Object(
                m.iter()
                    .filter(|(_, v)| !v.is_null())
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            ),
            other => other.clone(),
        }
    };
    if strip_nulls(&new_spec) != strip_nulls(&old_spec) {
        errs.push(field::forbidden("spec", "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims"));
    }
    let size = |v: &Value| quantity_value(v.as_str().unwrap_or("0")).unwrap_or(0.0);
    let new_size = size(&obj["spec"]["resources"]["requests"]["storage"]);
    let old_size = size(&old["spec"]["resources"]["requests"]["storage"]);
    // RecoverVolumeExpansionFailure (GA): a request may shrink, down to the status capacity.
    if new_size < old_size && new_size <= size(&old["status"]["capacity"]["storage"]) {
        errs.push(field::forbidden(
            "spec.resources.requests.storage",
            "field can not be less than status.capacity",
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

fn columns() -> Columns {
    Columns::new(vec![
        Column::name(),
        Column::computed("Status", "string", 0, "", |o| json!(phase(o))),
        Column::computed("Volume", "string", 0, "", |o| {
            json!(text(&o["spec"], "volumeName"))
        }),
        Column::computed("Capacity", "string", 0, "", |o| {
            let bound = !text(&o["spec"], "volumeName").is_empty();
            json!(if bound {
                o["status"]["capacity"]["storage"].as_str().unwrap_or("0")
            } else {
                ""
            })
        }),
        Column::computed("Access Modes", "string", 0, "", |o| {
            let bound = !text(&o["spec"], "volumeName").is_empty();
            json!(if bound {
                access_modes_string(&o["status"]["accessModes"])
            } else {
                String::new()
            })
        }),
        Column::computed("StorageClass", "string", 0, "", |o| json!(storage_class(o))),
        Column::computed("VolumeAttributesClass", "string", 0, "", |o| {
            json!(o["spec"]["volumeAttributesClassName"]
                .as_str()
                .unwrap_or("<unset>"))
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
        let msgs: Vec<String> = spec_errors(&json!({}))
            .into_iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect();
        assert_eq!(
            msgs,
            [
                "spec.accessModes: Required value: at least 1 access mode is required",
                "spec.resources[storage]: Required value",
            ]
        );
        let old = json!({"spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}},
            "status": {"phase": "Bound"}});
        let mut grown = old.clone();
        grown["spec"]["resources"]["requests"]["storage"] = json!("2Gi");
        grown["spec"]["volumeName"] = json!("pv-1");
        assert!(immutability_errors(&grown, &old).is_empty());
        let mut changed = old.clone();
        changed["spec"]["accessModes"] = json!(["ReadWriteMany"]);
        assert_eq!(immutability_errors(&changed, &old).len(), 1);
    }
}
