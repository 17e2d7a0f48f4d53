//! The apiregistration/v1 APIService kind (+status): the registrations that tell the aggregator
//! which server answers a group-version. A local APIService (no `spec.service`) names a
//! group-version this server serves itself and is marked Available when created; every cluster
//! starts with one per built-in group-version it serves, labelled as the aggregator's
//! auto-registration labels them. An APIService naming a Service is stored and validated like the
//! real one, but kubefake proxies nothing to it and no availability controller writes its status.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{json, Value};

use crate::error::{field, StatusCause};
use crate::registry::builtin;
use crate::registry::object_meta::{now_rfc3339, path_segment_errors, NameRule};
use crate::registry::resource::ApiResource;
use crate::registry::strategy::{keep_only_status, Strategy};
use crate::registry::table::{Column, Columns};
use crate::registry::validation::{
    dns1035_label_errors, dns1123_subdomain_errors, invalid_each, port_number_errors,
};
use crate::store::selector::generic_unsupported_field;

/// The group.
pub const GROUP: &str = "apiregistration.k8s.io";
/// The label the aggregator's auto-registration puts on the APIServices it manages.
pub const AUTOMANAGED_LABEL: &str = "kube-aggregator.kubernetes.io/automanaged";

/// The kube-apiserver's `apiVersionPriorities` for the GA group-versions: group, version,
/// `groupPriorityMinimum`, `versionPriority`. Group-versions not listed get no APIService.
const PRIORITIES: &[(&str, &str, i64, i64)] = &[
    ("", "v1", 18000, 1),
    ("apps", "v1", 17800, 15),
    ("events.k8s.io", "v1", 17750, 15),
    ("authentication.k8s.io", "v1", 17700, 15),
    ("authorization.k8s.io", "v1", 17600, 15),
    ("autoscaling", "v1", 17500, 15),
    ("autoscaling", "v2", 17500, 30),
    ("batch", "v1", 17400, 15),
    ("certificates.k8s.io", "v1", 17300, 15),
    ("networking.k8s.io", "v1", 17200, 15),
    ("policy", "v1", 17100, 15),
    ("rbac.authorization.k8s.io", "v1", 17000, 15),
    ("storage.k8s.io", "v1", 16800, 15),
    ("apiextensions.k8s.io", "v1", 16700, 15),
    ("admissionregistration.k8s.io", "v1", 16700, 15),
    ("scheduling.k8s.io", "v1", 16600, 15),
    ("coordination.k8s.io", "v1", 16500, 15),
    ("node.k8s.io", "v1", 16300, 15),
    ("discovery.k8s.io", "v1", 16200, 15),
    ("resource.k8s.io", "v1", 16200, 21),
    ("flowcontrol.apiserver.k8s.io", "v1", 16100, 21),
];

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind(GROUP, "v1", "apiservices", Arc::new(ApiServiceStrategy))
        .part("status", Arc::new(ApiServiceStatusStrategy))
        .with(|r| {
            r.unsupported_field(generic_unsupported_field)
                .table(Columns::new(vec![
                    Column::name(),
                    Column::computed(
                        "Service",
                        "string",
                        0,
                        "The reference to the service that hosts this API endpoint.",
                        service_cell,
                    ),
                    Column::computed(
                        "Available",
                        "string",
                        0,
                        "Whether this service is available.",
                        available_cell,
                    ),
                    Column::age("string"),
                ]))
                .bootstrap(|_| local_api_services())
        })
        .build()
}

/// `Local`, or the Service's `namespace/name`.
fn service_cell(obj: &Value) -> Value {
    let service = &obj["spec"]["service"];
    if !service.is_object() {
        return json!("Local");
    }
    let part = |k: &str| service[k].as_str().unwrap_or("").to_string();
    json!(format!("{}/{}", part("namespace"), part("name")))
}

/// The Available condition: `True`, `False (Reason)`, or `Unknown` when there is none.
fn available_cell(obj: &Value) -> Value {
    let conditions = obj["status"]["conditions"].as_array();
    let Some(c) = conditions
        .into_iter()
        .flatten()
        .find(|c| c["type"] == "Available")
    else {
        return json!("Unknown");
    };
    let status = c["status"].as_str().unwrap_or("");
    match c["reason"].as_str().filter(|r| !r.is_empty()) {
        Some(reason) if status != "True" => json!(format!("{status} ({reason})")),
        _ => json!(status),
    }
}

/// The APIServices the aggregator registers at start: one per built-in group-version served.
fn local_api_services() -> Vec<Value> {
    let served: BTreeSet<(&str, &str)> = builtin::kinds()
        .iter()
        .map(|k| (k.group(), k.version()))
        .collect();
    PRIORITIES
        .iter()
        .filter(|(g, v, _, _)| served.contains(&(*g, *v)))
        .map(|(group, version, group_priority, version_priority)| {
            json!({"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
                "metadata": {"name": format!("{version}.{group}"),
                    "labels": {AUTOMANAGED_LABEL: "onstart"}},
                "spec": {"group": group, "version": version,
                    "groupPriorityMinimum": group_priority, "versionPriority": version_priority}})
        })
        .collect()
}

/// The condition a local APIService gets on create (`NewLocalAvailableAPIServiceCondition`).
fn local_available_condition() -> Value {
    json!({"type": "Available", "status": "True", "lastTransitionTime": now_rfc3339(),
        "reason": "Local", "message": "Local APIServices are always available"})
}

/// The decoded length of a base64 `[]byte` field, as the message of an invalid `caBundle` says.
fn decoded_len(b64: &str) -> usize {
    let trimmed = b64.trim_end_matches('=');
    trimmed.len() * 3 / 4
}

/// apiregistration/v1 APIService.
pub struct ApiServiceStrategy;

impl Strategy for ApiServiceStrategy {
    fn name_rule(&self) -> NameRule {
        NameRule::PathSegment
    }

    fn defaults(&self, obj: &mut Value) {
        // A local APIService has no `service` (omitempty): the lookup adds none.
        let Some(service) = obj.pointer_mut("/spec/service").filter(|s| s.is_object()) else {
            return;
        };
        if service.get("port").is_none_or(Value::is_null) {
            service["port"] = json!(443);
        }
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        let local = !obj["spec"]["service"].is_object();
        obj["status"] = if local {
            json!({"conditions": [local_available_condition()]})
        } else {
            json!({})
        };
    }

    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        match old.get("status") {
            Some(status) => obj["status"] = status.clone(),
            None => {
                if let Some(o) = obj.as_object_mut() {
                    o.remove("status");
                }
            }
        }
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        let spec = &obj["spec"];
        let group = spec["group"].as_str().unwrap_or("");
        let version = spec["version"].as_str().unwrap_or("");
        let mut errs = Vec::new();
        let name = obj["metadata"]["name"].as_str().unwrap_or("");
        let required = format!("{version}.{group}");
        if !name.is_empty() && path_segment_errors(name).is_empty() && name != required {
            errs.push(field::invalid(
                "metadata.name",
                &json!(name),
                &format!("must be `spec.version+\".\"+spec.group`: {required:?}"),
            ));
        }
        if group.is_empty() && version != "v1" {
            errs.push(field::required(
                "spec.group",
                "only v1 may have an empty group and it better be legacy kube",
            ));
        }
        if !group.is_empty() {
            errs.extend(invalid_each(
                "spec.group",
                &json!(group),
                dns1123_subdomain_errors(group),
            ));
        }
        errs.extend(invalid_each(
            "spec.version",
            &json!(version),
            dns1035_label_errors(version),
        ));
        errs.extend(priority_errors(spec));
        errs.extend(service_errors(spec));
        errs
    }

    fn validate_update(&self, obj: &Value, _old: &Value) -> Vec<StatusCause> {
        self.validate(obj)
    }
}

/// The two priorities' ranges.
fn priority_errors(spec: &Value) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let group_priority = spec["groupPriorityMinimum"].as_i64().unwrap_or(0);
    if !(1..=20000).contains(&group_priority) {
        errs.push(field::invalid(
            "spec.groupPriorityMinimum",
            &json!(group_priority),
            "must be positive and less than 20000",
        ));
    }
    let version_priority = spec["versionPriority"].as_i64().unwrap_or(0);
    if !(1..=1000).contains(&version_priority) {
        errs.push(field::invalid(
            "spec.versionPriority",
            &json!(version_priority),
            "must be positive and less than 1000",
        ));
    }
    errs
}

/// A local APIService takes no TLS settings; a Service reference needs its namespace, name and
/// a valid port, and skipping TLS verification excludes a CA bundle.
fn service_errors(spec: &Value) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let ca_bundle = decoded_len(spec["caBundle"].as_str().unwrap_or(""));
    let insecure = spec["insecureSkipTLSVerify"].as_bool().unwrap_or(false);
    let service = &spec["service"];
    if !service.is_object() {
        if ca_bundle != 0 {
            errs.push(field::invalid(
                "spec.caBundle",
                &json!(format!("{ca_bundle} bytes")),
                "local APIServices may not have a caBundle",
            ));
        }
        if insecure {
            errs.push(field::invalid(
                "spec.insecureSkipTLSVerify",
                &json!(true),
                "local APIServices may not have insecureSkipTLSVerify",
            ));
        }
        return errs;
    }
    for key in ["namespace", "name"] {
        if service[key].as_str().unwrap_or("").is_empty() {
            errs.push(field::required(&format!("spec.service.{key}"), ""));
        }
    }
    let port = service["port"].as_i64().unwrap_or(0);
    let port_errs = port_number_errors(port);
    if !port_errs.is_empty() {
        errs.push(field::invalid(
            "spec.service.port",
            &json!(port),
            &format!("port is not valid: {}", port_errs.join(", ")),
        ));
    }
    if insecure && ca_bundle > 0 {
        errs.push(field::invalid(
            "spec.insecureSkipTLSVerify",
            &json!(true),
            "may not be true if caBundle is present",
        ));
    }
    errs
}

/// `apiservices/status`: only the status changes; each condition's status must be True, False
/// or Unknown.
pub struct ApiServiceStatusStrategy;

impl Strategy for ApiServiceStatusStrategy {
    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        keep_only_status(obj, old);
    }

    fn validate_update(&self, obj: &Value, _old: &Value) -> Vec<StatusCause> {
        let conditions = obj["status"]["conditions"].as_array();
        conditions
            .into_iter()
            .flatten()
            .enumerate()
            .filter(|(_, c)| !matches!(c["status"].as_str(), Some("True" | "False" | "Unknown")))
            .map(|(i, c)| {
                field::not_supported(
                    &format!("status.conditions[{i}].status"),
                    &c["status"],
                    &["True", "False", "Unknown"],
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(errs: &[StatusCause]) -> Vec<String> {
        errs.iter()
            .map(|e| format!("{}: {}", e.field, e.message))
            .collect()
    }

    fn remote(name: &str, group: &str, version: &str) -> Value {
        json!({"metadata": {"name": name}, "spec": {"group": group, "version": version,
            "groupPriorityMinimum": 2000, "versionPriority": 200,
            "service": {"namespace": "wardle", "name": "api", "port": 443}}})
    }

    #[test]
    fn name_must_be_version_dot_group() {
        let ok = remote(
            "v1alpha1.wardle.example.com",
            "wardle.example.com",
            "v1alpha1",
        );
        assert!(ApiServiceStrategy.validate(&ok).is_empty());
        let bad = remote("wardle", "wardle.example.com", "v1alpha1");
        assert_eq!(
            messages(&ApiServiceStrategy.validate(&bad)),
            ["metadata.name: Invalid value: \"wardle\": must be `spec.version+\".\"+spec.group`: \"v1alpha1.wardle.example.com\""]
        );
    }

    #[test]
    fn spec_rules() {
        let mut obj = remote("v2.", "", "v2");
        obj["spec"]["groupPriorityMinimum"] = json!(0);
        obj["spec"]["versionPriority"] = json!(1001);
        obj["spec"]["service"] = json!({"port": 0});
        assert_eq!(
            messages(&ApiServiceStrategy.validate(&obj)),
            [
                "spec.group: Required value: only v1 may have an empty group and it better be legacy kube",
                "spec.groupPriorityMinimum: Invalid value: 0: must be positive and less than 20000",
                "spec.versionPriority: Invalid value: 1001: must be positive and less than 1000",
                "spec.service.namespace: Required value",
                "spec.service.name: Required value",
                "spec.service.port: Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive",
            ]
        );
        let mut local = remote("v1.x.io", "x.io", "v1");
        local["spec"]["service"] = Value::Null;
        local["spec"]["caBundle"] = json!("AAAA");
        local["spec"]["insecureSkipTLSVerify"] = json!(true);
        assert_eq!(
            messages(&ApiServiceStrategy.validate(&local)),
            [
                "spec.caBundle: Invalid value: \"3 bytes\": local APIServices may not have a caBundle",
                "spec.insecureSkipTLSVerify: Invalid value: true: local APIServices may not have insecureSkipTLSVerify",
            ]
        );
    }

    #[test]
    fn local_services_are_available_on_create() {
        let mut local =
            json!({"spec": {"group": "x.io", "version": "v1"}, "status": {"conditions": []}});
        ApiServiceStrategy.prepare_for_create(&mut local);
        assert_eq!(local["status"]["conditions"][0]["reason"], "Local");
        assert_eq!(available_cell(&local), "True");
        let mut other = remote("v1.x.io", "x.io", "v1");
        other["status"] = json!({"conditions": [{"type": "Available", "status": "True"}]});
        ApiServiceStrategy.prepare_for_create(&mut other);
        assert_eq!(other["status"], json!({}));
        assert_eq!(available_cell(&other), "Unknown");
        assert_eq!(service_cell(&other), "wardle/api");
    }

    #[test]
    fn cells() {
        let obj = json!({"status": {"conditions": [{"type": "Available", "status": "False",
            "reason": "ServiceNotFound"}]}});
        assert_eq!(available_cell(&obj), "False (ServiceNotFound)");
        assert_eq!(service_cell(&obj), "Local");
    }

    #[test]
    fn status_values() {
        let obj = json!({"status": {"conditions": [{"type": "Available", "status": "Maybe"}]}});
        assert_eq!(
            messages(&ApiServiceStatusStrategy.validate_update(&obj, &obj)),
            ["status.conditions[0].status: Unsupported value: \"Maybe\": supported values: \"True\", \"False\", \"Unknown\""]
        );
    }
}
