//! The core/v1 Namespace kind: cluster-scoped, with `status` and `finalize` subresources, the
//! `kubernetes` finalizer the namespace controller releases, and the namespaces every cluster
//! starts with. A namespace's create (or any change while it is active) reports work to the
//! controllers that give it the `default` ServiceAccount and the `kube-root-ca.crt` ConfigMap
//! ([`crate::controllers::serviceaccounts`], [`crate::controllers::root_ca_publisher`]).

use std::sync::Arc;

use serde_json::{json, Value};

use crate::controllers::Work;
use crate::registry::builtin;
use crate::registry::object_meta::{meta_mut, meta_str, NameRule};
use crate::registry::resource::ApiResource;
use crate::registry::strategy::Strategy;
use crate::registry::table::{Column, Columns};
use crate::store::{GroupResource, ObjectKey, Snapshot, StoredObject};

/// The namespaces every cluster starts with.
pub const INITIAL_NAMESPACES: [&str; 4] =
    ["default", "kube-system", "kube-public", "kube-node-lease"];

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind("", "v1", "namespaces", Arc::new(NamespaceStrategy))
        .part("finalize", Arc::new(NamespaceFinalizeStrategy))
        .part("status", Arc::new(NamespaceStatusStrategy))
        .with(|r| {
            r.field_selectors(&["metadata.name", "status.phase"])
                .table(Columns::new(vec![
                    Column::name(),
                    Column::path(
                        "Status",
                        "string",
                        "",
                        "The status of the namespace",
                        0,
                        ".status.phase",
                    ),
                    Column::age("string"),
                ]))
                .delete_returns_object()
                .bootstrap(|_| {
                    INITIAL_NAMESPACES
                        .iter()
                        .map(|name| json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}))
                        .collect()
                })
        })
        .build()
}

/// The finalizer the namespace controller owns, in `spec.finalizers`.
pub const NAMESPACE_FINALIZER: &str = "kubernetes";
/// The label the apiserver stamps on every namespace.
const NAME_LABEL: &str = "kubernetes.io/metadata.name";

/// The namespaces table of the store.
pub fn namespaces_gr() -> GroupResource {
    GroupResource::new("", "namespaces")
}

/// Whether a namespace exists, is not being deleted and is `Active`: where the bootstrap
/// controllers create what every namespace holds.
pub fn is_active(snapshot: &Snapshot, name: &str) -> bool {
    snapshot
        .get(&namespaces_gr(), &ObjectKey::new("", name))
        .is_some_and(|ns| !ns.is_deleting() && ns.value()["status"]["phase"] == "Active")
}

/// core/v1 Namespace.
pub struct NamespaceStrategy;

fn stamp_name_label(obj: &mut Value) {
    let name = meta_str(obj, "name").to_string();
    let meta = meta_mut(obj);
    if !meta.get("labels").is_some_and(Value::is_object) {
        meta.insert("labels".into(), json!({}));
    }
    if let Some(labels) = meta.get_mut("labels").and_then(Value::as_object_mut) {
        labels.insert(NAME_LABEL.into(), json!(name));
    }
}

impl Strategy for NamespaceStrategy {
    fn name_rule(&self) -> NameRule {
        NameRule::Label
    }

    fn track_generation(&self) -> bool {
        false
    }

    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        obj["status"] = json!({"phase": "Active"});
        let mut finalizers: Vec<Value> = obj["spec"]["finalizers"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if !finalizers.iter().any(|f| f == NAMESPACE_FINALIZER) {
            finalizers.push(json!(NAMESPACE_FINALIZER));
        }
        if !obj.get("spec").is_some_and(Value::is_object) {
            obj["spec"] = json!({});
        }
        obj["spec"]["finalizers"] = Value::Array(finalizers);
        stamp_name_label(obj);
    }

    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        obj["spec"] = old.get("spec").cloned().unwrap_or_else(|| json!({}));
        obj["status"] = old.get("status").cloned().unwrap_or_else(|| json!({}));
        stamp_name_label(obj);
    }

    fn prepare_for_delete(&self, obj: &Value) -> Option<Value> {
        let mut obj = obj.clone();
        obj["status"]["phase"] = json!("Terminating");
        Some(obj)
    }

    fn pending_finalizers(&self, obj: &Value) -> bool {
        obj["spec"]["finalizers"]
            .as_array()
            .is_some_and(|f| !f.is_empty())
    }

    /// A namespace being deleted goes to the namespace controller; any other commit (its
    /// create above all) to the controllers that put the `default` ServiceAccount and the
    /// `kube-root-ca.crt` ConfigMap in every active namespace, which check and do nothing when
    /// both are there.
    fn after_commit(&self, obj: &StoredObject) -> Vec<Work> {
        let tree = obj.value();
        let name = meta_str(&tree, "name");
        if obj.is_deleting() {
            return vec![Work::Namespace(name.to_string())];
        }
        vec![
            Work::ServiceAccounts(name.to_string()),
            Work::RootCaCert(name.to_string()),
        ]
    }
}

/// `namespaces/status`: the status and the metadata from the request, the spec as stored.
pub struct NamespaceStatusStrategy;

impl Strategy for NamespaceStatusStrategy {
    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        let status = obj.get("status").cloned().unwrap_or_else(|| json!({}));
        let meta = obj.get("metadata").cloned();
        *obj = old.clone();
        obj["status"] = status;
        if let Some(m) = meta {
            obj["metadata"] = m;
        }
        stamp_name_label(obj);
    }
}

/// `namespaces/finalize`: only `spec.finalizers` (and the metadata) change.
pub struct NamespaceFinalizeStrategy;

impl Strategy for NamespaceFinalizeStrategy {
    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        let finalizers = obj["spec"]["finalizers"].clone();
        let meta = obj["metadata"].clone();
        *obj = old.clone();
        obj["spec"]["finalizers"] = finalizers;
        obj["metadata"] = meta;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn namespace_create_sets_phase_finalizer_and_label() {
        let mut ns = json!({"metadata": {"name": "team-a"}});
        NamespaceStrategy.prepare_for_create(&mut ns);
        assert_eq!(ns["status"]["phase"], "Active");
        assert_eq!(ns["spec"]["finalizers"], json!(["kubernetes"]));
        assert_eq!(ns["metadata"]["labels"][NAME_LABEL], "team-a");
    }
}
