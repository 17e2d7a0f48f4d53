//! The autoscaling/v2 HorizontalPodAutoscaler kind: `SetDefaults_HorizontalPodAutoscaler`
//! (one replica at least, 80% CPU utilization when no metric is named, the scale-up and
//! scale-down rules filled once a behavior is given), the spec's validation (replica bounds,
//! the scale target's reference, metric types, scaling rules and policies), status reset on
//! create and kept on updates, the `status` subresource, `kubectl get hpa`'s columns.
//!
//! This version is the storage version: autoscaling/v1 reads and writes the same objects
//! through a conversion ([`super::horizontalpodautoscaler_v1`]), and the annotations that
//! carry v2 fields through v1 are dropped from v2 writes, as the apiserver's v2 conversion
//! drops them.
//!
//! Not yet: the metric sources' own fields (targets, selectors) beyond their type. No
//! controller runs: nothing is scaled and the status stays as clients write it.

use std::sync::Arc;

use serde_json::{json, Value};

use crate::context::Context;
use crate::error::{field, ApiError, StatusCause};
use crate::registry::builtin;
use crate::registry::object_meta::NameRule;
use crate::registry::resource::ApiResource;
use crate::registry::strategy::{StatusStrategy, Strategy};
use crate::registry::table::{Column, Columns};
use crate::registry::validation::nonnegative;

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind(
        "autoscaling",
        "v2",
        "horizontalpodautoscalers",
        Arc::new(HpaStrategy),
    )
    .part("status", Arc::new(StatusStrategy::new(validate_status)))
    .with(|r| r.table(columns(targets)))
    .build()
}

/// The Targets cell of a v2 object.
fn targets(h: &Value) -> Value {
    json!(format_metrics(
        &h["spec"]["metrics"],
        &h["status"]["currentMetrics"]
    ))
}

/// `kubectl get hpa`, with the Targets cell computed by `targets` (the other cells read
/// fields autoscaling/v1 and v2 share).
pub(super) fn columns(targets: fn(&Value) -> Value) -> Columns {
    Columns::new(vec![
        Column::name(),
        Column::computed("Reference", "string", 0, "", |h| {
            let r = &h["spec"]["scaleTargetRef"];
            json!(format!(
                "{}/{}",
                r["kind"].as_str().unwrap_or(""),
                r["name"].as_str().unwrap_or("")
            ))
        }),
        Column::computed("Targets", "string", 0, "", targets),
        Column::computed("MinPods", "string", 0, "", |h| {
            json!(h["spec"]["minReplicas"]
                .as_i64()
                .map_or("<unset>".to_string(), |m| m.to_string()))
        }),
        Column::computed("MaxPods", "string", 0, "", |h| {
            json!(h["spec"]["maxReplicas"].as_i64().unwrap_or(0))
        }),
        Column::computed("Replicas", "string", 0, "", |h| {
            json!(h["status"]["currentReplicas"].as_i64().unwrap_or(0))
        }),
        Column::age("string"),
    ])
}

/// A quantity as Go's `Quantity.String()` prints it (the canonical form it is stored in).
fn quantity(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => "0".into(),
    }
}

/// `formatHPAMetrics`: `current/target` per metric, at most two, then `+ N more...`.
pub fn format_metrics(specs: &Value, statuses: &Value) -> String {
    let Some(specs) = specs.as_array().filter(|s| !s.is_empty()) else {
        return "<none>".into();
    };
    let list: Vec<String> = specs
        .iter()
        .enumerate()
        .map(|(i, spec)| format_metric(spec, &statuses[i]))
        .collect();
    if list.len() > 2 {
        return format!("{} + {} more...", list[..2].join(", "), list.len() - 2);
    }
    list.join(", ")
}

/// One metric's cell.
fn format_metric(spec: &Value, status: &Value) -> String {
    let unknown = || "<unknown>".to_string();
    let key = match spec["type"].as_str().unwrap_or("") {
        "External" => "external",
        "Pods" => "pods",
        "Object" => "object",
        "Resource" => "resource",
        "ContainerResource" => "containerResource",
        _ => return "<unknown type>".into(),
    };
    let source = &spec[key];
    let target = &source["target"];
    let current = &status[key]["current"];
    let present = status[key].is_object();
    if key == "pods" {
        let now = if present {
            quantity(&current["averageValue"])
        } else {
            unknown()
        };
        return format!("{now}/{}", quantity(&target["averageValue"]));
    }
    let prefix = if key == "resource" || key == "containerResource" {
        format!("{}: ", source["name"].as_str().unwrap_or(""))
    } else {
        String::new()
    };
    if !target["averageValue"].is_null() {
        let known = present && (!prefix.is_empty() || !current["averageValue"].is_null());
        let now = if known {
            quantity(&current["averageValue"])
        } else {
            unknown()
        };
        let avg = if prefix.is_empty() { " (avg)" } else { "" };
        return format!("{prefix}{now}/{}{avg}", quantity(&target["averageValue"]));
    }
    if prefix.is_empty() {
        let now = if present {
            quantity(&current["value"])
        } else {
            unknown()
        };
        return format!("{now}/{}", quantity(&target["value"]));
    }
    let now = current["averageUtilization"]
        .as_i64()
        .filter(|_| present)
        .map_or_else(unknown, |u| format!("{u}%"));
    let wanted = target["averageUtilization"]
        .as_i64()
        .map_or("<auto>".to_string(), |u| format!("{u}%"));
    format!("{prefix}{now}/{wanted}")
}

/// autoscaling/v2 HorizontalPodAutoscaler.
struct HpaStrategy;

impl Strategy for HpaStrategy {
    fn name_rule(&self) -> NameRule {
        NameRule::Subdomain
    }

    fn track_generation(&self) -> bool {
        false
    }

    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn defaults(&self, obj: &mut Value) {
        defaults(obj);
    }

    fn decode(&self, obj: &mut Value, _ctx: &Context) -> Result<(), ApiError> {
        super::hpa_conversion::drop_round_trip_annotations(obj);
        Ok(())
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        obj["status"] = json!({"desiredReplicas": 0});
    }

    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        match old.get("status") {
            Some(s) => obj["status"] = s.clone(),
            None => {
                if let Some(m) = obj.as_object_mut() {
                    m.remove("status");
                }
            }
        }
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        spec_errors(&obj["spec"], None)
    }

    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        spec_errors(&obj["spec"], Some(&old["spec"]))
    }
}

/// `SetDefaults_HorizontalPodAutoscaler` (autoscaling/v2).
pub fn defaults(obj: &mut Value) {
    let Some(spec) = obj.get_mut("spec").filter(|s| s.is_object()) else {
        return;
    };
    if spec.get("minReplicas").is_none_or(Value::is_null) {
        spec["minReplicas"] = json!(1);
    }
    if spec["metrics"].as_array().is_none_or(Vec::is_empty) {
        spec["metrics"] = json!([{"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 80}}}]);
    }
    if let Some(behavior) = spec.get_mut("behavior").filter(|b| b.is_object()) {
        let up = json!({"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
            {"type": "Pods", "value": 4, "periodSeconds": 15},
            {"type": "Percent", "value": 100, "periodSeconds": 15}]});
        let down = json!({"selectPolicy": "Max", "policies": [
            {"type": "Percent", "value": 100, "periodSeconds": 15}]});
        for (key, default) in [("scaleUp", up), ("scaleDown", down)] {
            let mut rules = default;
            if let Some(given) = behavior[key].as_object() {
                for (k, v) in given.iter().filter(|(_, v)| !v.is_null()) {
                    rules[k] = v.clone();
                }
            }
            behavior[key] = rules;
        }
    }
}

/// `validateHorizontalPodAutoscalerSpec` with the strategy's options (the stored object's
/// zero `minReplicas` or unparseable apiVersion stays allowed).
pub(super) fn spec_errors(spec: &Value, old: Option<&Value>) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let min_bound = if old.is_some_and(|o| o["minReplicas"] == 0) {
        0
    } else {
        1
    };
    let min = spec["minReplicas"].as_i64();
    if let Some(m) = min.filter(|m| *m < min_bound) {
        errs.push(field::invalid(
            "spec.minReplicas",
            &json!(m),
            &format!("must be greater than or equal to {min_bound}"),
        ));
    }
    let max = spec["maxReplicas"].as_i64().unwrap_or(0);
    if max == 0 {
        errs.push(field::required(
            "spec.maxReplicas",
            "must be set and greater than 0",
        ));
    } else if max < 0 {
        errs.push(field::invalid(
            "spec.maxReplicas",
            &json!(max),
            "must be greater than or equal to 1",
        ));
    }
    if min.is_some_and(|m| max < m) {
        errs.push(field::invalid(
            "spec.maxReplicas",
            &json!(max),
            "must be greater than or equal to `minReplicas`",
        ));
    }
    let lax_version = old.is_some_and(|o| api_version_error(&o["scaleTargetRef"]).is_some());
    errs.extend(reference_errors(
        &spec["scaleTargetRef"],
        "spec.scaleTargetRef",
        lax_version,
    ));
    errs.extend(metrics_errors(spec));
    for key in ["scaleUp", "scaleDown"] {
        let rules = &spec["behavior"][key];
        if rules.is_object() {
            errs.extend(scaling_rules_errors(rules, &format!("spec.behavior.{key}")));
        }
    }
    errs
}

/// `IsPathSegmentName`.
fn path_segment_errors(name: &str) -> Vec<String> {
    if name == "." || name == ".." {
        return vec![format!("may not be '{name}'")];
    }
    ["/", "%"]
        .iter()
        .filter(|c| name.contains(*c))
        .map(|c| format!("may not contain '{c}'"))
        .collect()
}

/// Why a reference's apiVersion is refused (no group, or no group/version form).
fn api_version_error(reference: &Value) -> Option<String> {
    let v = reference["apiVersion"].as_str().unwrap_or("");
    match v.split('/').count() {
        1 => Some("apiVersion must specify API group".into()),
        2 if v.starts_with('/') => Some("apiVersion must specify API group".into()),
        2 => None,
        _ => Some(format!("unexpected GroupVersion string: {v}")),
    }
}

/// `ValidateCrossVersionObjectReference` of the scale target.
fn reference_errors(reference: &Value, path: &str, lax_version: bool) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    for key in ["kind", "name"] {
        let at = format!("{path}.{key}");
        let value = reference[key].as_str().unwrap_or("");
        if value.is_empty() {
            errs.push(field::required(&at, ""));
        }
        for msg in path_segment_errors(value) {
            errs.push(field::invalid(&at, &json!(value), &msg));
        }
    }
    if let Some(e) = api_version_error(reference).filter(|_| !lax_version) {
        let v = reference["apiVersion"].as_str().unwrap_or("");
        errs.push(field::invalid(&format!("{path}.apiVersion"), &json!(v), &e));
    }
    errs
}

/// `validateMetrics`: each metric's type, and scaling to zero only on Object or External
/// metrics.
fn metrics_errors(spec: &Value) -> Vec<StatusCause> {
    const TYPES: [&str; 5] = [
        "ContainerResource",
        "External",
        "Object",
        "Pods",
        "Resource",
    ];
    let mut errs = Vec::new();
    let metrics = spec["metrics"].as_array().map_or(&[][..], Vec::as_slice);
    for (i, metric) in metrics.iter().enumerate() {
        let kind = metric["type"].as_str().unwrap_or("");
        let at = format!("spec.metrics[{i}].type");
        if kind.is_empty() {
            errs.push(field::required(&at, "must specify a metric source type"));
        }
        if !TYPES.contains(&kind) {
            errs.push(field::not_supported(&at, &json!(kind), &TYPES));
        }
    }
    let scales_on_objects = metrics
        .iter()
        .any(|m| m["type"] == "Object" || m["type"] == "External");
    if spec["minReplicas"] == 0 && !scales_on_objects {
        errs.push(field::forbidden(
            "spec.metrics",
            "must specify at least one Object or External metric to support scaling to zero replicas",
        ));
    }
    errs
}

/// `validateScalingRules`.
fn scaling_rules_errors(rules: &Value, path: &str) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    if let Some(w) = rules["stabilizationWindowSeconds"].as_i64() {
        let at = format!("{path}.stabilizationWindowSeconds");
        if w < 0 {
            errs.push(field::invalid(
                &at,
                &json!(w),
                "must be greater than or equal to zero",
            ));
        }
        if w > 3600 {
            errs.push(field::invalid(
                &at,
                &json!(w),
                "must be less than or equal to 3600",
            ));
        }
    }
    if let Some(p) = rules["selectPolicy"].as_str() {
        if !["Disabled", "Max", "Min"].contains(&p) {
            errs.push(field::not_supported(
                &format!("{path}.selectPolicy"),
                &json!(p),
                &["Disabled", "Max", "Min"],
            ));
        }
    }
    let policies = rules["policies"].as_array().map_or(&[][..], Vec::as_slice);
    if policies.is_empty() {
        errs.push(field::required(
            &format!("{path}.policies"),
            "must specify at least one Policy",
        ));
    }
    for (i, policy) in policies.iter().enumerate() {
        let at = format!("{path}.policies[{i}]");
        let kind = policy["type"].as_str().unwrap_or("");
        if kind != "Pods" && kind != "Percent" {
            errs.push(field::not_supported(
                &format!("{at}.type"),
                &json!(kind),
                &["Percent", "Pods"],
            ));
        }
        let value = policy["value"].as_i64().unwrap_or(0);
        if value <= 0 {
            errs.push(field::invalid(
                &format!("{at}.value"),
                &json!(value),
                "must be greater than zero",
            ));
        }
        let period = policy["periodSeconds"].as_i64().unwrap_or(0);
        if period <= 0 {
            errs.push(field::invalid(
                &format!("{at}.periodSeconds"),
                &json!(period),
                "must be greater than zero",
            ));
        }
        if period > 1800 {
            errs.push(field::invalid(
                &format!("{at}.periodSeconds"),
                &json!(period),
                "must be less than or equal to 1800",
            ));
        }
    }
    errs
}

/// `ValidateHorizontalPodAutoscalerStatusUpdate`.
pub(super) fn validate_status(obj: &Value, _old: &Value) -> Vec<StatusCause> {
    let mut errs = nonnegative(obj, "/status/currentReplicas", "status.currentReplicas");
    errs.extend(nonnegative(
        obj,
        "/status/desiredReplicas",
        "status.desiredReplicas",
    ));
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_targets() {
        let mut h = json!({"spec": {"maxReplicas": 3, "behavior": {"scaleDown": {"stabilizationWindowSeconds": 60}}}});
        defaults(&mut h);
        assert_eq!(h["spec"]["minReplicas"], 1);
        assert_eq!(h["spec"]["behavior"]["scaleUp"]["policies"][0]["value"], 4);
        assert_eq!(
            h["spec"]["behavior"]["scaleDown"]["stabilizationWindowSeconds"],
            60
        );
        assert_eq!(h["spec"]["behavior"]["scaleDown"]["selectPolicy"], "Max");
        assert_eq!(
            format_metrics(&h["spec"]["metrics"], &Value::Null),
            "cpu: <unknown>/80%"
        );
        let status = json!([{"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 42}}}]);
        assert_eq!(
            format_metrics(&h["spec"]["metrics"], &status),
            "cpu: 42%/80%"
        );
    }
}
