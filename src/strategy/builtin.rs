//! Strategies of the built-in resources kubefake serves: core/v1 `namespaces` and
//! `apiextensions.k8s.io/v1 customresourcedefinitions`.

use serde_json::{json, Value};

use super::object_meta::{meta_mut, meta_str, now_rfc3339, NameRule};
use super::{bump_generation, Strategy};
use crate::apiextensions::{self, Crd, CLEANUP_FINALIZER};
use crate::error::{field, StatusCause};

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

/// apiextensions.k8s.io/v1 CustomResourceDefinition.
pub struct CrdStrategy;

fn storage_version(obj: &Value) -> Option<String> {
    obj["spec"]["versions"].as_array().and_then(|vs| {
        vs.iter()
            .find(|v| v["storage"] == true)
            .and_then(|v| v["name"].as_str())
            .map(str::to_string)
    })
}

impl Strategy for CrdStrategy {
    fn prepare_for_create(&self, obj: &mut Value) {
        apiextensions::apply_defaults(obj);
        let stored: Vec<String> = storage_version(obj).into_iter().collect();
        obj["status"] = json!({
            "acceptedNames": {"plural": "", "kind": ""},
            "conditions": [],
            "storedVersions": stored,
        });
    }

    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        apiextensions::apply_defaults(obj);
        obj["status"] = old.get("status").cloned().unwrap_or_else(|| json!({}));
        if let Some(v) = storage_version(obj) {
            let stored = &mut obj["status"]["storedVersions"];
            if !stored
                .as_array()
                .is_some_and(|s| s.iter().any(|x| x == &json!(v)))
            {
                let mut list = stored.as_array().cloned().unwrap_or_default();
                list.push(json!(v));
                *stored = Value::Array(list);
            }
        }
        bump_generation(obj, old, true);
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        apiextensions::validate(obj)
    }

    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        let mut errs = apiextensions::validate(obj);
        let mut immutable = vec!["group", "names.plural"];
        if apiextensions::condition_true(old, "Established") {
            immutable.extend(["scope", "names.kind"]);
        }
        for path in immutable {
            let get = |v: &Value| {
                path.split('.')
                    .try_fold(&v["spec"], |v, p| v.get(p))
                    .cloned()
                    .unwrap_or(Value::Null)
            };
            let new_v = get(obj);
            if new_v != get(old) {
                errs.push(field::invalid(
                    &format!("spec.{path}"),
                    &new_v,
                    "field is immutable",
                ));
            }
        }
        errs
    }

    fn prepare_for_delete(&self, obj: &mut Value) -> bool {
        let meta = meta_mut(obj);
        let mut finalizers: Vec<Value> = meta
            .get("finalizers")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if !finalizers.iter().any(|f| f == CLEANUP_FINALIZER) {
            finalizers.push(json!(CLEANUP_FINALIZER));
        }
        meta.insert("finalizers".into(), Value::Array(finalizers));
        set_condition(
            obj,
            "Terminating",
            "True",
            "InstanceDeletionPending",
            "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
        );
        true
    }
}

/// `SetCRDCondition`: replaces a condition of the same type (keeping its transition time when the
/// status does not flip) or appends a new one.
pub fn set_condition(obj: &mut Value, type_: &str, status: &str, reason: &str, message: &str) {
    if !obj["status"]["conditions"].is_array() {
        obj["status"]["conditions"] = json!([]);
    }
    let Some(conditions) = obj["status"]["conditions"].as_array_mut() else {
        return;
    };
    let new = |time: Value| {
        json!({"type": type_, "status": status, "lastTransitionTime": time,
               "reason": reason, "message": message})
    };
    match conditions.iter_mut().find(|c| c["type"] == type_) {
        Some(c) => {
            let time = if c["status"] == status {
                c["lastTransitionTime"].clone()
            } else {
                json!(now_rfc3339())
            };
            *c = new(time);
        }
        None => conditions.push(new(json!(now_rfc3339()))),
    }
}

/// The naming and establishing controllers in one step: accepts the requested names unless they
/// conflict with another CRD of the group, and sets NamesAccepted/Established accordingly. The
/// CRD is established as soon as its names are accepted (kubefake has no informers to wait for).
pub fn reconcile_names(obj: &mut Value, others: &[Crd]) {
    let Some(crd) = Crd::from_value(obj) else {
        return;
    };
    match apiextensions::accept_names(&crd.spec.names, &crd.spec.group, &crd.name, others) {
        Ok(names) => {
            obj["status"]["acceptedNames"] = names.to_json();
            set_condition(
                obj,
                "NamesAccepted",
                "True",
                "NoConflicts",
                "no conflicts found",
            );
            set_condition(
                obj,
                "Established",
                "True",
                "InitialNamesAccepted",
                "the initial names have been accepted",
            );
        }
        Err((reason, message)) => {
            set_condition(obj, "NamesAccepted", "False", reason, &message);
            if !crd.established {
                set_condition(
                    obj,
                    "Established",
                    "False",
                    "NotAccepted",
                    "not all names are accepted",
                );
            }
        }
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

    #[test]
    fn conditions_keep_transition_time_unless_status_flips() {
        let mut crd = json!({"status": {}});
        set_condition(&mut crd, "Established", "True", "A", "a");
        crd["status"]["conditions"][0]["lastTransitionTime"] = json!("then");
        set_condition(&mut crd, "Established", "True", "B", "b");
        assert_eq!(crd["status"]["conditions"][0]["lastTransitionTime"], "then");
        assert_eq!(crd["status"]["conditions"][0]["reason"], "B");
        set_condition(&mut crd, "Established", "False", "C", "c");
        assert_ne!(crd["status"]["conditions"][0]["lastTransitionTime"], "then");
        assert_eq!(
            crd["status"]["conditions"].as_array().map(Vec::len),
            Some(1)
        );
    }
}
