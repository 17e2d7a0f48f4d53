//! The core/v1 ConfigMap kind: data keys checked as the apiserver checks them, at most 1 MiB of
//! data, and `immutable` ConfigMaps whose data can no longer change. A change to or the
//! removal of a namespace's `kube-root-ca.crt` reports work to the root CA publisher
//! ([`crate::controllers::root_ca_publisher`]), which restores it.

use std::sync::Arc;

use serde_json::{json, Value};

use crate::controllers::root_ca_publisher::CONFIG_MAP as ROOT_CA_CONFIG_MAP;
use crate::controllers::Work;
use crate::error::{field, StatusCause};
use crate::registry::builtin;
use crate::registry::object_meta::meta_str;
use crate::registry::resource::ApiResource;
use crate::registry::strategy::Strategy;
use crate::registry::table::{Column, Columns};
use crate::registry::validation::{data_key_errors, immutable_data_errors};
use crate::store::StoredObject;

/// The most bytes of `data` and `binaryData` together (`core.MaxSecretSize`).
pub const MAX_SIZE: usize = 1024 * 1024;

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind("", "v1", "configmaps", Arc::new(ConfigMapStrategy))
        .with(|r| {
            r.table(Columns::new(vec![
                Column::name(),
                Column::computed("Data", "string", 0, "", data_count),
                Column::age("string"),
            ]))
        })
        .build()
}

/// The Data column: how many keys `data` and `binaryData` hold.
fn data_count(obj: &Value) -> Value {
    let count = |f: &str| obj[f].as_object().map_or(0, |m| m.len());
    json!(count("data") + count("binaryData"))
}

/// core/v1 ConfigMap.
pub struct ConfigMapStrategy;

impl Strategy for ConfigMapStrategy {
    /// A PUT without a resourceVersion is accepted (last write wins), as the apiserver's
    /// strategy allows.
    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn track_generation(&self) -> bool {
        false
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        let mut errs = data_key_errors("data", &obj["data"]);
        let (data, binary) = (obj["data"].as_object(), obj["binaryData"].as_object());
        if let (Some(data), Some(binary)) = (data, binary) {
            for key in data.keys() {
                if binary.contains_key(key) {
                    errs.push(field::invalid(
                        &format!("data[{key}]"),
                        &json!(key),
                        "duplicate of key present in binaryData",
                    ));
                }
            }
        }
        errs.extend(data_key_errors("binaryData", &obj["binaryData"]));
        if size(obj) > MAX_SIZE {
            errs.push(field::too_long("", MAX_SIZE));
        }
        errs
    }

    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        let mut errs = immutable_data_errors(obj, old, &["data", "binaryData"]);
        errs.extend(self.validate(obj));
        errs
    }

    /// `kube-root-ca.crt` written: the publisher checks its data and description.
    fn after_commit(&self, obj: &StoredObject) -> Vec<Work> {
        root_ca_work(obj)
    }

    /// `kube-root-ca.crt` removed: the publisher creates it again.
    fn after_remove(&self, obj: &StoredObject) -> Vec<Work> {
        root_ca_work(obj)
    }
}

/// The publisher's work when the ConfigMap is the namespace's `kube-root-ca.crt`.
fn root_ca_work(cm: &StoredObject) -> Vec<Work> {
    let namespace = match cm.key() {
        Some(key) if key.name == ROOT_CA_CONFIG_MAP => key.namespace.clone(),
        Some(_) => return Vec::new(),
        None => {
            let tree = cm.value();
            if meta_str(&tree, "name") != ROOT_CA_CONFIG_MAP {
                return Vec::new();
            }
            meta_str(&tree, "namespace").into()
        }
    };
    vec![Work::RootCaCert(namespace)]
}

/// The bytes the data holds: string lengths of `data`, decoded lengths of `binaryData`.
fn size(obj: &Value) -> usize {
    let text: usize = obj["data"]
        .as_object()
        .into_iter()
        .flat_map(|m| m.values())
        .map(|v| v.as_str().map_or(0, str::len))
        .sum();
    let binary: usize = obj["binaryData"]
        .as_object()
        .into_iter()
        .flat_map(|m| m.values())
        .map(|v| v.as_str().map_or(0, |s| s.len() / 4 * 3))
        .sum();
    text + binary
}
