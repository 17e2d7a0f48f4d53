//! The storage/v1 StorageClass kind: a provisioner and its parameters, with the reclaim policy
//! (`Delete`) and volume binding mode (`Immediate`) defaulted, all four immutable once
//! written, allowed topologies checked, and the `(default)` class marked in Tables as kubectl
//! shows it. Nothing provisions volumes (there is no PersistentVolume controller yet).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde_json::{json, Value};

use crate::error::{field, StatusCause};
use crate::registry::builtin;
use crate::registry::core::node::deprecated_label;
use crate::registry::resource::ApiResource;
use crate::registry::strategy::Strategy;
use crate::registry::table::{Column, Columns};
use crate::registry::validation::{invalid_each, qualified_name_messages};
use crate::store::selector::generic_unsupported_field;

/// The annotation that makes a class the default one.
pub const DEFAULT_ANNOTATION: &str = "storageclass.kubernetes.io/is-default-class";
/// Its beta spelling, still honoured.
pub const BETA_DEFAULT_ANNOTATION: &str = "storageclass.beta.kubernetes.io/is-default-class";

const MAX_PARAMETERS: usize = 512;
const MAX_PARAMETERS_SIZE: usize = 256 * 1024;

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind(
        "storage.k8s.io",
        "v1",
        "storageclasses",
        Arc::new(StorageClassStrategy),
    )
    .with(|r| {
        r.unsupported_field(generic_unsupported_field)
            .table(columns())
            .delete_returns_object()
    })
    .build()
}

/// `printStorageClass`'s columns.
fn columns() -> Columns {
    Columns::new(vec![
        Column::name_computed(name_cell),
        Column::computed(
            "Provisioner",
            "string",
            0,
            "provisioner indicates the type of the provisioner.",
            |o| json!(o["provisioner"].as_str().unwrap_or("")),
        ),
        Column::computed(
            "ReclaimPolicy",
            "string",
            0,
            "reclaimPolicy controls the reclaimPolicy for dynamically provisioned PersistentVolumes of this storage class. Defaults to Delete.",
            |o| json!(o["reclaimPolicy"].as_str().unwrap_or("Delete")),
        ),
        Column::computed(
            "VolumeBindingMode",
            "string",
            0,
            "volumeBindingMode indicates how PersistentVolumeClaims should be provisioned and bound.  When unset, VolumeBindingImmediate is used. This field is only honored by servers that enable the VolumeScheduling feature.",
            |o| json!(o["volumeBindingMode"].as_str().unwrap_or("Immediate")),
        ),
        Column::computed(
            "AllowVolumeExpansion",
            "string",
            0,
            "allowVolumeExpansion shows whether the storage class allow volume expand.",
            |o| json!(o["allowVolumeExpansion"].as_bool().unwrap_or(false)),
        ),
        Column::age("string"),
    ])
}

/// The class's name, `(default)` appended to the default class's.
fn name_cell(obj: &Value) -> Value {
    let name = obj["metadata"]["name"].as_str().unwrap_or("");
    let annotations = &obj["metadata"]["annotations"];
    let is_default = [DEFAULT_ANNOTATION, BETA_DEFAULT_ANNOTATION]
        .iter()
        .any(|a| annotations[*a] == "true");
    if is_default {
        json!(format!("{name} (default)"))
    } else {
        json!(name)
    }
}

/// storage/v1 StorageClass.
pub struct StorageClassStrategy;

fn provisioner_errors(obj: &Value) -> Vec<StatusCause> {
    driver_errors(obj, "provisioner")
}

/// A provisioner's (or a VolumeAttributesClass driver's) name at `key`: required, a qualified
/// name once lower-cased (the lower-cased value is the one quoted).
pub(super) fn driver_errors(obj: &Value, key: &str) -> Vec<StatusCause> {
    match obj[key].as_str().unwrap_or("") {
        "" => vec![field::required(key, "")],
        p => {
            let lower = p.to_lowercase();
            invalid_each(key, &json!(lower), qualified_name_messages(&lower))
        }
    }
}

fn parameters_errors(obj: &Value) -> Vec<StatusCause> {
    storage_parameters_errors(obj, true)
}

/// `validateParameters`: at most 512 entries (reported as bytes, as the apiserver does), no
/// empty key, at most 256 KiB in all; `allow_empty` or at least one entry.
pub(super) fn storage_parameters_errors(obj: &Value, allow_empty: bool) -> Vec<StatusCause> {
    let Some(params) = obj["parameters"].as_object().filter(|p| !p.is_empty()) else {
        if allow_empty {
            return Vec::new();
        }
        return vec![field::required(
            "parameters",
            "must contain at least one key/value pair",
        )];
    };
    if params.len() > MAX_PARAMETERS {
        return vec![field::too_long("parameters", MAX_PARAMETERS)];
    }
    let mut errs = Vec::new();
    let mut size = 0;
    for (k, v) in params {
        if k.is_empty() {
            errs.push(field::invalid(
                "parameters",
                &json!(k),
                "field can not be empty.",
            ));
        }
        size += k.len() + v.as_str().map_or(0, str::len);
    }
    if size > MAX_PARAMETERS_SIZE {
        errs.push(field::too_long("parameters", MAX_PARAMETERS_SIZE));
    }
    errs
}

fn policy_errors(obj: &Value) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    match obj["reclaimPolicy"].as_str() {
        None | Some("") | Some("Delete") | Some("Retain") => {}
        Some(other) => errs.push(field::not_supported(
            "reclaimPolicy",
            &json!(other),
            &["Delete", "Retain"],
        )),
    }
    match obj["volumeBindingMode"].as_str() {
        None => errs.push(field::required("volumeBindingMode", "")),
        Some("Immediate") | Some("WaitForFirstConsumer") => {}
        Some(other) => errs.push(field::not_supported(
            "volumeBindingMode",
            &json!(other),
            &["Immediate", "WaitForFirstConsumer"],
        )),
    }
    errs
}

/// `validateAllowedTopologies`: each term's expressions (values required and unique, keys
/// qualified names, keys unique); no two terms alike (an empty term counts as a repeat, as it
/// does in the apiserver).
fn topology_errors(obj: &Value) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let mut seen: Vec<BTreeMap<String, BTreeSet<String>>> = Vec::new();
    let terms = obj["allowedTopologies"].as_array().into_iter().flatten();
    for (i, term) in terms.enumerate() {
        let path = format!("allowedTopologies[{i}].matchLabelExpressions");
        let mut expressions: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        let exprs = term["matchLabelExpressions"]
            .as_array()
            .into_iter()
            .flatten();
        for (j, expr) in exprs.enumerate() {
            let p = format!("{path}[{j}]");
            let values = expr["values"].as_array().map_or(&[][..], Vec::as_slice);
            if values.is_empty() {
                errs.push(field::required(&format!("{p}.values"), ""));
            }
            let mut set = BTreeSet::new();
            for (k, v) in values.iter().enumerate() {
                let v = v.as_str().unwrap_or("").to_string();
                if !set.insert(v.clone()) {
                    errs.push(field::duplicate(&format!("{p}.values[{k}]"), &json!(v)));
                }
            }
            let key = expr["key"].as_str().unwrap_or("");
            errs.extend(invalid_each(
                &format!("{p}.key"),
                &json!(key),
                qualified_name_messages(key),
            ));
            if expressions.insert(key.to_string(), set).is_some() {
                errs.push(field::duplicate(&format!("{p}.key"), &json!(key)));
            }
        }
        if expressions.is_empty() || seen.contains(&expressions) {
            errs.push(field::duplicate(&path, &json!("")));
        }
        seen.push(expressions);
    }
    errs
}

/// `ValidateStorageClass`.
fn storage_class_errors(obj: &Value) -> Vec<StatusCause> {
    let mut errs = provisioner_errors(obj);
    errs.extend(parameters_errors(obj));
    errs.extend(policy_errors(obj));
    errs.extend(topology_errors(obj));
    errs
}

/// Whether a field is unset (absent, null, or an empty map: the apiserver compares maps
/// semantically).
fn unset(v: &Value) -> bool {
    v.is_null() || v.as_object().is_some_and(|m| m.is_empty())
}

/// `GetWarningsForStorageClass`: deprecated node labels in allowed topologies.
fn warnings(obj: &Value) -> Vec<String> {
    let mut out = Vec::new();
    let terms = obj["allowedTopologies"].as_array().into_iter().flatten();
    for (i, term) in terms.enumerate() {
        let exprs = term["matchLabelExpressions"]
            .as_array()
            .into_iter()
            .flatten();
        for (j, expr) in exprs.enumerate() {
            let key = expr["key"].as_str().unwrap_or("");
            if let Some(why) = deprecated_label(key) {
                out.push(format!(
                    "allowedTopologies[{i}].matchLabelExpressions[{j}].key: {why}"
                ));
            }
        }
    }
    out
}

impl Strategy for StorageClassStrategy {
    fn track_generation(&self) -> bool {
        false
    }

    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn defaults(&self, obj: &mut Value) {
        if obj.get("reclaimPolicy").is_none_or(Value::is_null) {
            obj["reclaimPolicy"] = json!("Delete");
        }
        if obj.get("volumeBindingMode").is_none_or(Value::is_null) {
            obj["volumeBindingMode"] = json!("Immediate");
        }
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        storage_class_errors(obj)
    }

    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        let mut errs = storage_class_errors(obj);
        for f in [
            "parameters",
            "provisioner",
            "reclaimPolicy",
            "volumeBindingMode",
        ] {
            let (new, was) = (&obj[f], &old[f]);
            if new != was && !(unset(new) && unset(was)) {
                errs.push(field::invalid(f, new, "field is immutable"));
            }
        }
        errs
    }

    fn warnings_on_create(&self, obj: &Value) -> Vec<String> {
        warnings(obj)
    }

    fn warnings_on_update(&self, obj: &Value, _old: &Value) -> Vec<String> {
        warnings(obj)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::rendered as messages;

    #[test]
    fn defaults_and_validation() {
        let mut sc = json!({"metadata": {"name": "fast"}, "provisioner": "Example.com/SSD"});
        StorageClassStrategy.defaults(&mut sc);
        assert_eq!(sc["reclaimPolicy"], "Delete");
        assert_eq!(sc["volumeBindingMode"], "Immediate");
        assert!(StorageClassStrategy.validate(&sc).is_empty());
        let bad = json!({"provisioner": "a/b/c", "reclaimPolicy": "Recycle",
            "volumeBindingMode": "Later", "parameters": {"": "x"}});
        let errs = messages(StorageClassStrategy.validate(&bad));
        assert!(errs[0].starts_with("provisioner: Invalid value: \"a/b/c\": a valid label key"));
        assert_eq!(
            errs[1],
            "parameters: Invalid value: \"\": field can not be empty."
        );
        assert_eq!(errs[2], "reclaimPolicy: Unsupported value: \"Recycle\": supported values: \"Delete\", \"Retain\"");
        assert_eq!(errs[3], "volumeBindingMode: Unsupported value: \"Later\": supported values: \"Immediate\", \"WaitForFirstConsumer\"");
    }

    #[test]
    fn topologies_and_immutability() {
        let sc = json!({"provisioner": "p", "volumeBindingMode": "Immediate", "allowedTopologies": [
            {"matchLabelExpressions": [{"key": "topology.kubernetes.io/zone", "values": ["a", "a"]}]},
            {"matchLabelExpressions": [{"key": "topology.kubernetes.io/zone", "values": ["a"]}]},
            {}]});
        assert_eq!(
            messages(StorageClassStrategy.validate(&sc)),
            [
                "allowedTopologies[0].matchLabelExpressions[0].values[1]: Duplicate value: \"a\"",
                "allowedTopologies[1].matchLabelExpressions: Duplicate value: \"\"",
                "allowedTopologies[2].matchLabelExpressions: Duplicate value: \"\"",
            ]
        );
        let old = json!({"provisioner": "p", "volumeBindingMode": "Immediate", "reclaimPolicy": "Delete"});
        let mut new = old.clone();
        new["parameters"] = json!({"type": "ssd"});
        new["reclaimPolicy"] = json!("Retain");
        assert_eq!(
            messages(StorageClassStrategy.validate_update(&new, &old)),
            [
                "parameters: Invalid value: {\"type\":\"ssd\"}: field is immutable",
                "reclaimPolicy: Invalid value: \"Retain\": field is immutable",
            ]
        );
        let zone = json!({"allowedTopologies": [{"matchLabelExpressions": [
            {"key": "failure-domain.beta.kubernetes.io/zone", "values": ["a"]}]}]});
        assert_eq!(
            warnings(&zone),
            ["allowedTopologies[0].matchLabelExpressions[0].key: deprecated since v1.17; use \"topology.kubernetes.io/zone\" instead"]
        );
        assert_eq!(
            name_cell(
                &json!({"metadata": {"name": "std", "annotations": {DEFAULT_ANNOTATION: "true"}}})
            ),
            "std (default)"
        );
    }
}
