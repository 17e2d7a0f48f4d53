//! The core/v1 Namespace kind.

use serde_json::{json, Value};

use crate::registry::object_meta::{meta_mut, meta_str, NameRule};
use crate::registry::strategy::Strategy;

/// The finalizer the namespace controller owns, in `spec.finalizers`.
pub const NAMESPACE_FINALIZER: &str = "kubernetes";
/// The label the apiserver stamps on every namespace.
const NAME_LABEL: &str = "kubernetes.io/metadata.name";

/// Namespaces the NamespaceLifecycle admission plugin never lets go.
const IMMORTAL_NAMESPACES: [&str; 3] = ["default", "kube-system", "kube-public"];

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

    fn prepare_for_status_update(&self, obj: &mut Value, old: &Value) {
        let status = obj.get("status").cloned().unwrap_or_else(|| json!({}));
        let meta = obj.get("metadata").cloned();
        *obj = old.clone();
        obj["status"] = status;
        if let Some(m) = meta {
            obj["metadata"] = m;
        }
        stamp_name_label(obj);
    }

    fn forbid_delete(&self, obj: &Value) -> Option<&'static str> {
        IMMORTAL_NAMESPACES
            .contains(&meta_str(obj, "name"))
            .then_some("this namespace may not be deleted")
    }

    fn prepare_for_delete(&self, obj: &mut Value) -> bool {
        obj["status"]["phase"] = json!("Terminating");
        true
    }

    fn pending_finalizers(&self, obj: &Value) -> bool {
        obj["spec"]["finalizers"]
            .as_array()
            .is_some_and(|f| !f.is_empty())
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
