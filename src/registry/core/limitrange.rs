//! The core/v1 LimitRange kind: the defaults the apiserver gives Container limits (default
//! limit from max, default request from the default limit or from min), limit types and
//! resource names checked, the orderings min <= default request <= default <= max and the
//! limit/request ratio checked with the apiserver's messages. Printed with the default columns
//! (kubectl has no printer for LimitRanges).
//!
//! Not yet: the LimitRanger admission plugin (pods are not defaulted or refused by them).

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::resourcequota::resource_name_errors;
use crate::error::{field, StatusCause};
use crate::registry::builtin;
use crate::registry::pointer::Pointer;
use crate::registry::resource::ApiResource;
use crate::registry::strategy::Strategy;
use crate::registry::validation::{is_extended_resource, qualified_name_messages, quantity_value};

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind("", "v1", "limitranges", Arc::new(LimitRangeStrategy)).build()
}

/// core/v1 LimitRange.
pub struct LimitRangeStrategy;

impl Strategy for LimitRangeStrategy {
    fn track_generation(&self) -> bool {
        false
    }

    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn defaults(&self, obj: &mut Value) {
        let limits = obj.at_mut("/spec/limits").and_then(Value::as_array_mut);
        for item in limits.into_iter().flatten() {
            default_item(item);
        }
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        let mut errs = Vec::new();
        let mut types = BTreeSet::new();
        let items = obj["spec"]["limits"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for (i, item) in items.iter().enumerate() {
            let path = format!("spec.limits[{i}]");
            let type_ = item["type"].as_str().unwrap_or("");
            errs.extend(type_errors(type_, &format!("{path}.type")));
            if !types.insert(type_.to_string()) {
                errs.push(field::duplicate(&format!("{path}.type"), &json!(type_)));
            }
            errs.extend(item_errors(item, type_, &path));
        }
        errs
    }
}

/// `SetDefaults_LimitRangeItem`.
fn default_item(item: &mut Value) {
    if item["type"] != "Container" {
        return;
    }
    let map = |item: &Value, k: &str| item[k].as_object().cloned().unwrap_or_default();
    let (max, min) = (map(item, "max"), map(item, "min"));
    let mut default = map(item, "default");
    let mut request = map(item, "defaultRequest");
    fill(&mut default, &max);
    fill(&mut request, &default);
    fill(&mut request, &min);
    item["default"] = Value::Object(default);
    item["defaultRequest"] = Value::Object(request);
}

fn fill(into: &mut Map<String, Value>, from: &Map<String, Value>) {
    for (k, v) in from {
        into.entry(k.clone()).or_insert_with(|| v.clone());
    }
}

/// `validateLimitRangeTypeName`.
fn type_errors(type_: &str, path: &str) -> Vec<StatusCause> {
    let v = json!(type_);
    let msgs = qualified_name_messages(type_);
    if !msgs.is_empty() {
        return msgs.iter().map(|m| field::invalid(path, &v, m)).collect();
    }
    if !type_.contains('/') && !["Pod", "Container", "PersistentVolumeClaim"].contains(&type_) {
        return vec![field::invalid(
            path,
            &v,
            "must be a standard limit type or fully qualified",
        )];
    }
    Vec::new()
}

/// `validateLimitRangeResourceName`.
fn limit_resource_name_errors(type_: &str, name: &str, path: &str) -> Vec<StatusCause> {
    let v = json!(name);
    let mut errs = resource_name_errors(name, path);
    if type_ != "Pod" && type_ != "Container" {
        return errs;
    }
    let container =
        ["cpu", "memory", "ephemeral-storage"].contains(&name) || name.starts_with("hugepages-");
    let native = !name.contains('/') || name.contains("kubernetes.io/");
    if !name.contains('/') {
        if !container {
            errs.push(field::invalid(
                path,
                &v,
                "must be a standard resource for containers",
            ));
        }
    } else if !native && !is_extended_resource(name) {
        errs.push(field::invalid(
            path,
            &v,
            "doesn't follow extended resource name standard",
        ));
    }
    errs
}

/// One item's resource names, forbidden and required fields, and orderings.
fn item_errors(item: &Value, type_: &str, path: &str) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let mut keys = BTreeSet::new();
    let mut fields = vec!["max", "min"];
    if type_ == "Pod" {
        for f in ["default", "defaultRequest"] {
            if item[f].as_object().is_some_and(|m| !m.is_empty()) {
                errs.push(field::forbidden(
                    &format!("{path}.{f}"),
                    "may not be specified when `type` is 'Pod'",
                ));
            }
        }
    } else {
        fields.extend(["default", "defaultRequest"]);
    }
    fields.push("maxLimitRequestRatio");
    for f in &fields {
        for k in item[*f].as_object().into_iter().flatten().map(|(k, _)| k) {
            errs.extend(limit_resource_name_errors(
                type_,
                k,
                &format!("{path}.{f}[{k}]"),
            ));
            keys.insert(k.clone());
        }
    }
    if type_ == "PersistentVolumeClaim"
        && item["min"].get("storage").is_none()
        && item["max"].get("storage").is_none()
    {
        errs.push(field::required(
            &format!("{path}.limits"),
            "either minimum or maximum storage value is required, but neither was provided",
        ));
    }
    for k in &keys {
        errs.extend(ordering_errors(item, type_, k, path));
    }
    errs
}

/// The orderings of one resource's quantities.
fn ordering_errors(item: &Value, type_: &str, k: &str, path: &str) -> Vec<StatusCause> {
    let get = |f: &str| -> Option<(String, f64)> {
        if type_ == "Pod" && (f == "default" || f == "defaultRequest") {
            return None;
        }
        let s = item[f][k].as_str()?;
        Some((s.to_string(), quantity_value(s)?))
    };
    let (min, max, def, req, ratio) = (
        get("min"),
        get("max"),
        get("default"),
        get("defaultRequest"),
        get("maxLimitRequestRatio"),
    );
    let mut errs = Vec::new();
    let mut check = |a: &Option<(String, f64)>,
                     b: &Option<(String, f64)>,
                     at: &str,
                     shown: &Option<(String, f64)>,
                     msg: &dyn Fn(&str, &str) -> String| {
        if let (Some(a), Some(b), Some(shown)) = (a, b, shown) {
            if a.1 > b.1 {
                errs.push(field::invalid(
                    &format!("{path}.{at}[{k}]"),
                    &json!(shown.0),
                    &msg(&a.0, &b.0),
                ));
            }
        }
    };
    check(&min, &max, "min", &min, &|a, b| {
        format!("min value {a} is greater than max value {b}")
    });
    check(&min, &req, "defaultRequest", &req, &|a, b| {
        format!("min value {a} is greater than default request value {b}")
    });
    check(&req, &max, "defaultRequest", &req, &|a, b| {
        format!("default request value {a} is greater than max value {b}")
    });
    check(&req, &def, "defaultRequest", &req, &|a, b| {
        format!("default request value {a} is greater than default limit value {b}")
    });
    check(&min, &def, "default", &min, &|a, b| {
        format!("min value {a} is greater than default value {b}")
    });
    check(&def, &max, "default", &max, &|a, b| {
        format!("default value {a} is greater than max value {b}")
    });
    if let Some((shown, r)) = &ratio {
        if *r < 1.0 {
            errs.push(field::invalid(
                &format!("{path}.maxLimitRequestRatio[{k}]"),
                &json!(shown),
                &format!("ratio {shown} is less than 1"),
            ));
        }
        if let (Some(min), Some(max)) = (&min, &max) {
            let limit = max.1 / min.1;
            if *r > limit {
                errs.push(field::invalid(
                    &format!("{path}.maxLimitRequestRatio[{k}]"),
                    &json!(shown),
                    &format!("ratio {shown} is greater than max/min = {limit:.6}"),
                ));
            }
        }
    }
    let native = !k.contains('/') || k.contains("kubernetes.io/");
    let overcommit = native && !k.starts_with("hugepages-");
    if let (Some(d), Some(r)) = (&def, &req) {
        if !overcommit && d.1 != r.1 {
            errs.push(field::invalid(
                &format!("{path}.defaultRequest[{k}]"),
                &json!(r.0),
                &format!(
                    "default value {} must equal to defaultRequest value {} in {k}",
                    d.0, r.0
                ),
            ));
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn container_defaults_and_orderings() {
        let mut lr = json!({"spec": {"limits": [{"type": "Container", "max": {"cpu": "2"}, "min": {"memory": "64Mi"}}]}});
        LimitRangeStrategy.defaults(&mut lr);
        let item = &lr["spec"]["limits"][0];
        assert_eq!(item["default"], json!({"cpu": "2"}));
        assert_eq!(
            item["defaultRequest"],
            json!({"cpu": "2", "memory": "64Mi"})
        );

        let bad = json!({"spec": {"limits": [{"type": "Container", "min": {"cpu": "2"}, "max": {"cpu": "1"}},
            {"type": "Pod", "default": {"cpu": "1"}}, {"type": "Other"}]}});
        let msgs: Vec<String> = LimitRangeStrategy
            .validate(&bad)
            .into_iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect();
        assert_eq!(msgs, [
            "spec.limits[0].min[cpu]: Invalid value: \"2\": min value 2 is greater than max value 1",
            "spec.limits[1].default: Forbidden: may not be specified when `type` is 'Pod'",
            "spec.limits[2].type: Invalid value: \"Other\": must be a standard limit type or fully qualified",
        ]);
    }
}
