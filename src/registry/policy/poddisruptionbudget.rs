//! The policy/v1 PodDisruptionBudget kind (+status): how many of the selected pods must stay
//! available (`minAvailable`) or may be unavailable (`maxUnavailable`, never both), as numbers
//! or percentages, and the eviction policy for unhealthy pods. Names are only path segments, as
//! in the apiserver. Status is written through `/status` only; no disruption controller computes
//! it yet and no eviction consults it.

use std::sync::Arc;

use serde_json::{json, Value};

use crate::error::{field, StatusCause};
use crate::registry::builtin;
use crate::registry::object_meta::NameRule;
use crate::registry::resource::ApiResource;
use crate::registry::strategy::{bump_generation, keep_only_status, Strategy};
use crate::registry::table::{Column, Columns};
use crate::registry::validation::{
    conditions_errors, int_or_percent_errors, label_selector_errors, nonnegative_errors,
    selector_has_invalid_values,
};
use crate::store::selector::generic_unsupported_field;

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind(
        "policy",
        "v1",
        "poddisruptionbudgets",
        Arc::new(PdbStrategy),
    )
    .part("status", Arc::new(PdbStatusStrategy))
    .with(|r| {
        r.unsupported_field(generic_unsupported_field)
            .table(Columns::new(vec![
                Column::name(),
                Column::computed(
                    "Min Available",
                    "string",
                    0,
                    "The minimum number of pods that must be available.",
                    |o| int_or_string_cell(&o["spec"]["minAvailable"]),
                ),
                Column::computed(
                    "Max Unavailable",
                    "string",
                    0,
                    "The maximum number of pods that may be unavailable.",
                    |o| int_or_string_cell(&o["spec"]["maxUnavailable"]),
                ),
                Column::computed(
                    "Allowed Disruptions",
                    "integer",
                    0,
                    "Calculated number of pods that may be disrupted at this time.",
                    |o| json!(o["status"]["disruptionsAllowed"].as_i64().unwrap_or(0)),
                ),
                Column::age("string"),
            ]))
    })
    .build()
}

/// `IntOrString.String()`, or `N/A` when unset.
fn int_or_string_cell(v: &Value) -> Value {
    match v {
        Value::String(s) => json!(s),
        Value::Number(n) => json!(n.to_string()),
        _ => json!("N/A"),
    }
}

/// A label selector as Go's encoding/json writes it (fields in declaration order).
fn go_selector_json(s: &Value) -> String {
    if !s.is_object() {
        return "null".into();
    }
    let mut parts = Vec::new();
    if s["matchLabels"].as_object().is_some_and(|m| !m.is_empty()) {
        parts.push(format!("\"matchLabels\":{}", s["matchLabels"]));
    }
    if let Some(exprs) = s["matchExpressions"].as_array().filter(|e| !e.is_empty()) {
        let rendered: Vec<String> = exprs
            .iter()
            .map(|e| {
                let mut r = format!("{{\"key\":{},\"operator\":{}", e["key"], e["operator"]);
                if e["values"].as_array().is_some_and(|v| !v.is_empty()) {
                    r.push_str(&format!(",\"values\":{}", e["values"]));
                }
                r + "}"
            })
            .collect();
        parts.push(format!("\"matchExpressions\":[{}]", rendered.join(",")));
    }
    format!("{{{}}}", parts.join(","))
}

/// `ValidatePodDisruptionBudgetSpec`.
fn spec_errors(obj: &Value, allow_invalid_values: bool) -> Vec<StatusCause> {
    let spec = &obj["spec"];
    let mut errs = Vec::new();
    let (min, max) = (&spec["minAvailable"], &spec["maxUnavailable"]);
    if !min.is_null() && !max.is_null() {
        // The apiserver shows its internal spec, whose fields have no JSON names.
        let shown = format!(
            "{{\"MinAvailable\":{min},\"Selector\":{},\"MaxUnavailable\":{max},\"UnhealthyPodEvictionPolicy\":{}}}",
            go_selector_json(&spec["selector"]),
            spec.get("unhealthyPodEvictionPolicy").unwrap_or(&Value::Null),
        );
        errs.push(StatusCause {
            reason: "FieldValueInvalid".into(),
            message: format!(
                "Invalid value: {shown}: minAvailable and maxUnavailable cannot be both set"
            ),
            field: "spec".into(),
        });
    }
    errs.extend(int_or_percent_errors(min, "spec.minAvailable"));
    errs.extend(int_or_percent_errors(max, "spec.maxUnavailable"));
    errs.extend(label_selector_errors(
        &spec["selector"],
        "spec.selector",
        allow_invalid_values,
    ));
    if let Some(p) = spec["unhealthyPodEvictionPolicy"].as_str() {
        if !matches!(p, "IfHealthyBudget" | "AlwaysAllow") {
            errs.push(field::not_supported(
                "spec.unhealthyPodEvictionPolicy",
                &json!(p),
                &["AlwaysAllow", "IfHealthyBudget"],
            ));
        }
    }
    errs
}

/// policy/v1 PodDisruptionBudget.
pub struct PdbStrategy;

impl Strategy for PdbStrategy {
    fn name_rule(&self) -> NameRule {
        NameRule::PathSegment
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        obj["status"] = json!({"disruptionsAllowed": 0, "currentHealthy": 0,
            "desiredHealthy": 0, "expectedPods": 0});
    }

    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        match old.get("status") {
            Some(s) => obj["status"] = s.clone(),
            None => {
                if let Some(o) = obj.as_object_mut() {
                    o.remove("status");
                }
            }
        }
        bump_generation(obj, old, true);
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        spec_errors(obj, false)
    }

    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        spec_errors(obj, selector_has_invalid_values(&old["spec"]["selector"]))
    }
}

/// `poddisruptionbudgets/status`: only the status changes; its conditions and counts are
/// checked.
pub struct PdbStatusStrategy;

impl Strategy for PdbStatusStrategy {
    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        keep_only_status(obj, old);
    }

    fn validate_update(&self, obj: &Value, _old: &Value) -> Vec<StatusCause> {
        let status = &obj["status"];
        let mut errs = conditions_errors(&status["conditions"], "status.conditions");
        for f in [
            "disruptionsAllowed",
            "currentHealthy",
            "desiredHealthy",
            "expectedPods",
        ] {
            errs.extend(nonnegative_errors(&status[f], &format!("status.{f}")));
        }
        errs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exclusive_bounds_as_the_apiserver_shows_them() {
        let pdb = json!({"spec": {"minAvailable": "150%", "maxUnavailable": -1,
            "selector": {"matchLabels": {"app": "web"}}, "unhealthyPodEvictionPolicy": "Never"}});
        let errs: Vec<String> = PdbStrategy
            .validate(&pdb)
            .iter()
            .map(|e| format!("{}: {}", e.field, e.message))
            .collect();
        assert_eq!(
            errs,
            [
                "spec: Invalid value: {\"MinAvailable\":\"150%\",\"Selector\":{\"matchLabels\":{\"app\":\"web\"}},\"MaxUnavailable\":-1,\"UnhealthyPodEvictionPolicy\":\"Never\"}: minAvailable and maxUnavailable cannot be both set",
                "spec.minAvailable: Invalid value: \"150%\": must not be greater than 100%",
                "spec.maxUnavailable: Invalid value: -1: must be greater than or equal to 0",
                "spec.unhealthyPodEvictionPolicy: Unsupported value: \"Never\": supported values: \"AlwaysAllow\", \"IfHealthyBudget\"",
            ]
        );
        assert_eq!(int_or_string_cell(&json!(2)), "2");
        assert_eq!(int_or_string_cell(&Value::Null), "N/A");
    }
}
