//! The scheduling/v1 PriorityClass kind: the priority values pods may name, with the two system
//! classes every cluster starts with (`system-node-critical`, `system-cluster-critical`),
//! which may not be deleted, the `system-` prefix reserved for them, user values capped at one
//! billion, and an immutable value and preemption policy. At most one class may be the global
//! default (the Priority admission plugin's rule, in [`crate::admission::priority`]).
//!
//! Nothing resolves a pod's priority from its class yet (the Priority plugin's pod half).

use std::sync::Arc;

use serde_json::{json, Value};

use crate::error::{field, StatusCause};
use crate::registry::builtin;
use crate::registry::resource::ApiResource;
use crate::registry::strategy::Strategy;
use crate::registry::table::{Column, Columns};
use crate::store::selector::generic_unsupported_field;

/// The group.
pub const GROUP: &str = "scheduling.k8s.io";
/// The prefix reserved for the system classes.
pub const SYSTEM_PREFIX: &str = "system-";
/// The highest value a user-defined class may have.
pub const HIGHEST_USER_DEFINABLE_PRIORITY: i64 = 1_000_000_000;
/// The system classes: name, value, description (`SystemPriorityClasses`).
pub const SYSTEM_CLASSES: [(&str, i64, &str); 2] = [
    (
        "system-node-critical",
        2 * HIGHEST_USER_DEFINABLE_PRIORITY + 1000,
        "Used for system critical pods that must not be moved from their current node.",
    ),
    (
        "system-cluster-critical",
        2 * HIGHEST_USER_DEFINABLE_PRIORITY,
        "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
    ),
];

const VALUE_DESCRIPTION: &str = "value represents the integer value of this priority class. This is the actual priority that pods receive when they have the name of this class in their pod spec.";
const GLOBAL_DEFAULT_DESCRIPTION: &str = "globalDefault specifies whether this PriorityClass should be considered as the default priority for pods that do not have any priority class. Only one PriorityClass can be marked as `globalDefault`. However, if more than one PriorityClasses exists with their `globalDefault` field set to true, the smallest value of such global default PriorityClasses will be used as the default priority.";
const PREEMPTION_DESCRIPTION: &str = "preemptionPolicy is the Policy for preempting pods with lower priority. One of Never, PreemptLowerPriority. Defaults to PreemptLowerPriority if unset.";

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind(
        GROUP,
        "v1",
        "priorityclasses",
        Arc::new(PriorityClassStrategy),
    )
    .with(|r| {
        r.unsupported_field(generic_unsupported_field)
            .table(Columns::new(vec![
                Column::name(),
                Column::computed("Value", "integer", 0, VALUE_DESCRIPTION, |o| {
                    json!(o["value"].as_i64().unwrap_or(0))
                }),
                Column::computed(
                    "Global-Default",
                    "boolean",
                    0,
                    GLOBAL_DEFAULT_DESCRIPTION,
                    |o| json!(o["globalDefault"].as_bool().unwrap_or(false)),
                ),
                Column::age("string"),
                Column::computed(
                    "PreemptionPolicy",
                    "string",
                    0,
                    PREEMPTION_DESCRIPTION,
                    |o| json!(o["preemptionPolicy"].as_str().unwrap_or("")),
                ),
            ]))
            .bootstrap(|_| system_classes())
    })
    .build()
}

/// The system classes as the apiserver creates them at start.
fn system_classes() -> Vec<Value> {
    SYSTEM_CLASSES
        .iter()
        .map(|(name, value, description)| {
            json!({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass",
                "metadata": {"name": name}, "value": value, "description": description})
        })
        .collect()
}

/// Whether `name` is one of the system classes, which may not be deleted.
pub fn is_system_class(name: &str) -> bool {
    SYSTEM_CLASSES.iter().any(|(n, _, _)| *n == name)
}

/// `IsKnownSystemPriorityClass`: why a `system-` class is not one of the system classes.
fn unknown_system_class(name: &str, value: i64, global_default: bool) -> Option<String> {
    let Some((_, want, _)) = SYSTEM_CLASSES.iter().find(|(n, _, _)| *n == name) else {
        return Some(format!("{name} is not a known system priority class"));
    };
    if value != *want {
        return Some(format!("value of {name} PriorityClass must be {want}"));
    }
    global_default.then(|| format!("globalDefault of {name} PriorityClass must be false"))
}

/// scheduling/v1 PriorityClass.
pub struct PriorityClassStrategy;

impl Strategy for PriorityClassStrategy {
    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn defaults(&self, obj: &mut Value) {
        if obj.get("preemptionPolicy").is_none_or(Value::is_null) {
            obj["preemptionPolicy"] = json!("PreemptLowerPriority");
        }
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        let mut errs = Vec::new();
        let name = obj["metadata"]["name"].as_str().unwrap_or("");
        let value = obj["value"].as_i64().unwrap_or(0);
        if name.starts_with(SYSTEM_PREFIX) {
            let global_default = obj["globalDefault"].as_bool().unwrap_or(false);
            if let Some(why) = unknown_system_class(name, value, global_default) {
                errs.push(field::forbidden(
                    "metadata.name",
                    &format!("priority class names with '{SYSTEM_PREFIX}' prefix are reserved for system use only. error: {why}"),
                ));
            }
        } else if value > HIGHEST_USER_DEFINABLE_PRIORITY {
            errs.push(field::forbidden(
                "value",
                &format!("maximum allowed value of a user defined priority is {HIGHEST_USER_DEFINABLE_PRIORITY}"),
            ));
        }
        match &obj["preemptionPolicy"] {
            Value::Null => {}
            Value::String(p) if p == "PreemptLowerPriority" || p == "Never" => {}
            Value::String(p) if p.is_empty() => errs.push(field::required("preemptionPolicy", "")),
            other => errs.push(field::not_supported(
                "preemptionPolicy",
                other,
                &["PreemptLowerPriority", "Never"],
            )),
        }
        errs
    }

    /// `ValidatePriorityClassUpdate`: only the value and the preemption policy are checked,
    /// both immutable.
    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        let mut errs = Vec::new();
        if obj["value"].as_i64().unwrap_or(0) != old["value"].as_i64().unwrap_or(0) {
            errs.push(field::forbidden(
                "value",
                "may not be changed in an update.",
            ));
        }
        if obj["preemptionPolicy"] != old["preemptionPolicy"] {
            errs.push(field::invalid(
                "preemptionPolicy",
                &obj["preemptionPolicy"],
                "field is immutable",
            ));
        }
        errs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(name: &str, value: i64) -> Value {
        json!({"metadata": {"name": name}, "value": value, "preemptionPolicy": "PreemptLowerPriority"})
    }

    #[test]
    fn system_prefix_and_value_cap() {
        let msg = |obj: &Value| {
            PriorityClassStrategy
                .validate(obj)
                .iter()
                .map(|e| format!("{}: {}", e.field, e.message))
                .collect::<Vec<_>>()
        };
        assert!(msg(&class("system-node-critical", 2_000_001_000)).is_empty());
        assert_eq!(
            msg(&class("system-foo", 5)),
            ["metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: system-foo is not a known system priority class"]
        );
        assert_eq!(
            msg(&class("system-cluster-critical", 5)),
            ["metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: value of system-cluster-critical PriorityClass must be 2000000000"]
        );
        assert_eq!(
            msg(&class("high", 1_000_000_001)),
            ["value: Forbidden: maximum allowed value of a user defined priority is 1000000000"]
        );
        let mut bad = class("p", 1);
        bad["preemptionPolicy"] = json!("Sometimes");
        assert_eq!(
            msg(&bad),
            ["preemptionPolicy: Unsupported value: \"Sometimes\": supported values: \"PreemptLowerPriority\", \"Never\""]
        );
    }

    #[test]
    fn value_and_policy_are_immutable() {
        let old = class("p", 1);
        let mut new = class("p", 2);
        new["preemptionPolicy"] = json!("Never");
        let errs: Vec<String> = PriorityClassStrategy
            .validate_update(&new, &old)
            .iter()
            .map(|e| format!("{}: {}", e.field, e.message))
            .collect();
        assert_eq!(
            errs,
            [
                "value: Forbidden: may not be changed in an update.",
                "preemptionPolicy: Invalid value: \"Never\": field is immutable"
            ]
        );
    }
}
