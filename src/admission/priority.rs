//! The apiserver's Priority admission plugin. For pods: `spec.priority` (and
//! `preemptionPolicy`) come from the pod's `priorityClassName`, or from the global default
//! PriorityClass, or are 0 and `PreemptLowerPriority`; a pod naming an unknown class, or a
//! priority that differs from its class's, is refused; updates keep the priority set on create.
//! For PriorityClasses: the system classes (stored at start by the PriorityClass kind) may not be
//! deleted (kubefake has no per-kind delete hook, and a refusal that changes nothing is what
//! admission is for).
//!
//! A class marked `globalDefault` is refused while another is (the check reads the stored
//! classes before the write, as the apiserver's does, so two concurrent creates may both pass).

use futures_util::future::BoxFuture;
use serde_json::{json, Value};

use super::{Attributes, Mutating, Operation, Validating};
use crate::error::ApiError;
use crate::registry::scheduling::priorityclass::{is_system_class, GROUP};
use crate::store::{GroupResource, ObjectKey};

/// The plugin.
pub struct Priority;

impl Mutating for Priority {
    /// Creates and updates of pods.
    fn handles(&self, attrs: &Attributes<'_>) -> bool {
        attrs.is_for("", "pods")
            && attrs.subresource.is_empty()
            && matches!(attrs.operation, Operation::Create | Operation::Update)
    }

    fn admit<'a>(
        &'a self,
        attrs: &'a Attributes<'a>,
        object: &'a mut Value,
    ) -> BoxFuture<'a, Result<(), ApiError>> {
        let is_pod = object["spec"].is_object();
        let result = match attrs.operation {
            Operation::Create if is_pod => admit_create(attrs, object),
            Operation::Update if is_pod => {
                if let Some(old) = attrs.old_object {
                    for key in ["priority", "preemptionPolicy"] {
                        if object["spec"].get(key).is_none_or(Value::is_null) {
                            if let Some(v) = old["spec"].get(key) {
                                object["spec"][key] = v.clone();
                            }
                        }
                    }
                }
                Ok(())
            }
            _ => Ok(()),
        };
        Box::pin(std::future::ready(result))
    }
}

impl Validating for Priority {
    /// Writes of PriorityClasses.
    fn handles(&self, attrs: &Attributes<'_>) -> bool {
        attrs.subresource.is_empty() && attrs.is_for(GROUP, "priorityclasses")
    }

    fn validate<'a>(
        &'a self,
        attrs: &'a Attributes<'a>,
        object: Option<&'a Value>,
    ) -> BoxFuture<'a, Result<(), ApiError>> {
        let why = match attrs.operation {
            Operation::Delete if is_system_class(attrs.name) => {
                Some("this is a system priority class and cannot be deleted".to_string())
            }
            Operation::Create | Operation::Update => {
                second_default(attrs, object).map(|other| {
                    format!("PriorityClass {other} is already marked as default. Only one default can exist")
                })
            }
            _ => None,
        };
        let result = match why {
            Some(why) => Err(forbidden(attrs, &why)),
            None => Ok(()),
        };
        Box::pin(std::future::ready(result))
    }
}

/// The stored default class a class marked `globalDefault` would join, if any: on create any,
/// on update another than itself.
fn second_default(attrs: &Attributes<'_>, object: Option<&Value>) -> Option<String> {
    if object?["globalDefault"] != true {
        return None;
    }
    let (name, _, _) = default_priority(attrs);
    let joins = !name.is_empty() && (attrs.operation == Operation::Create || name != attrs.name);
    joins.then_some(name)
}

fn admit_create(attrs: &Attributes<'_>, pod: &mut Value) -> Result<(), ApiError> {
    let class_name = pod["spec"]["priorityClassName"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let (name, value, policy) = if class_name.is_empty() {
        default_priority(attrs)
    } else {
        let class = find_class(attrs, &class_name).ok_or_else(|| {
            forbidden(
                attrs,
                &format!("no PriorityClass with name {class_name} was found"),
            )
        })?;
        (class_name, class.0, class.1)
    };
    if !name.is_empty() {
        pod["spec"]["priorityClassName"] = json!(name);
    }
    if let Some(given) = pod["spec"]["priority"].as_i64() {
        if given != value {
            return Err(forbidden(
                attrs,
                &format!("the integer value of priority ({given}) must not be provided in pod spec; priority admission controller computed {value} from the given PriorityClass name"),
            ));
        }
    }
    pod["spec"]["priority"] = json!(value);
    if let Some(policy) = policy {
        if let Some(given) = pod["spec"]["preemptionPolicy"].as_str() {
            if given != policy {
                return Err(forbidden(
                    attrs,
                    &format!("the string value of PreemptionPolicy ({given}) must not be provided in pod spec; priority admission controller computed {policy} from the given PriorityClass name"),
                ));
            }
        }
        pod["spec"]["preemptionPolicy"] = json!(policy);
    }
    Ok(())
}

fn classes_gr() -> GroupResource {
    GroupResource::new(GROUP, "priorityclasses")
}

/// A class's value and preemption policy.
fn find_class(attrs: &Attributes<'_>, name: &str) -> Option<(i64, Option<String>)> {
    let stored = attrs
        .store
        .snapshot()
        .get(&classes_gr(), &ObjectKey::new("", name))?;
    let stored_tree = stored.value();
    let policy = stored_tree["preemptionPolicy"]
        .as_str()
        .unwrap_or("PreemptLowerPriority");
    Some((
        stored.value()["value"].as_i64().unwrap_or(0),
        Some(policy.to_string()),
    ))
}

/// The global default class (the lowest valued one if several claim it), or 0.
fn default_priority(attrs: &Attributes<'_>) -> (String, i64, Option<String>) {
    let snapshot = attrs.store.snapshot();
    let default = snapshot
        .list(&classes_gr(), None)
        .filter(|(_, c)| c.value()["globalDefault"] == true)
        .map(|(_, c)| c.value().clone())
        .min_by_key(|c| c["value"].as_i64().unwrap_or(0));
    match default {
        Some(c) => (
            c["metadata"]["name"].as_str().unwrap_or("").to_string(),
            c["value"].as_i64().unwrap_or(0),
            c["preemptionPolicy"].as_str().map(str::to_string),
        ),
        None => (String::new(), 0, Some("PreemptLowerPriority".to_string())),
    }
}

/// `admission.NewForbidden` for the pod.
fn forbidden(attrs: &Attributes<'_>, why: &str) -> ApiError {
    ApiError::forbidden(
        &attrs.resource.group,
        &attrs.resource.plural,
        attrs.name,
        why,
    )
}
