//! The CustomResourceDefinition kind: its resource, its strategy (defaults, validation,
//! immutable fields, the cleanup finalizer on delete), and the condition helpers its
//! controllers use. Every committed change queues the CRD controller, which names, establishes
//! or cleans up the CRD and rebuilds the resource catalog.

use std::sync::Arc;

use serde_json::{json, Value};

use super::types::{self as apiextensions, Crd, CLEANUP_FINALIZER};
use crate::controllers::Work;
use crate::error::{field, StatusCause};
use crate::registry::builtin;
use crate::registry::object_meta::{meta_mut, meta_str, now_rfc3339};
use crate::registry::resource::ApiResource;
use crate::registry::strategy::{bump_generation, StatusStrategy, Strategy};
use crate::store::{selector, StoredObject};

/// The served resource.
pub fn resource() -> ApiResource {
    let status =
        StatusStrategy::new(|obj: &Value, old: &Value| CrdStrategy.validate_update(obj, old));
    builtin::kind(
        apiextensions::GROUP,
        "v1",
        "customresourcedefinitions",
        Arc::new(CrdStrategy),
    )
    .part("status", Arc::new(status))
    .with(|r| {
        r.unsupported_field(selector::generic_unsupported_field)
            .delete_returns_object()
    })
    .build()
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
        errs.extend(apiextensions::stored_versions_errors(obj));
        errs
    }

    fn prepare_for_delete(&self, obj: &Value) -> Option<Value> {
        let mut obj = obj.clone();
        let meta = meta_mut(&mut obj);
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
            &mut obj,
            "Terminating",
            "True",
            "InstanceDeletionPending",
            "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
        );
        Some(obj)
    }

    fn after_commit(&self, obj: &StoredObject) -> Vec<Work> {
        vec![Work::Crd(meta_str(&obj.value(), "name").to_string())]
    }

    fn after_remove(&self, obj: &StoredObject) -> Vec<Work> {
        vec![Work::Crd(meta_str(&obj.value(), "name").to_string())]
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
