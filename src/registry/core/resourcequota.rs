//! The core/v1 ResourceQuota kind: `spec.hard` and status names and quantities validated
//! (standard quota resources or qualified names, non-negative, whole counts), scopes checked and
//! immutable, status reset on create and kept on spec writes, the `status` subresource, kubectl's
//! REQUEST and LIMIT columns, a DELETE that answers with the object.
//!
//! Not yet: the quota controller (no `status.used`) and quota admission (nothing is refused for
//! exceeding a quota); `scopeSelector` is not validated.

use std::sync::Arc;

use serde_json::{json, Value};

use crate::error::{field, StatusCause};
use crate::registry::builtin;
use crate::registry::resource::ApiResource;
use crate::registry::strategy::{keep_only_status, Strategy};
use crate::registry::table::{Column, Columns};
use crate::registry::validation::{qualified_name_messages, resource_quantity_errors};

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind("", "v1", "resourcequotas", Arc::new(ResourceQuotaStrategy))
        .part("status", Arc::new(ResourceQuotaStatusStrategy))
        .with(|r| {
            r.table(Columns::new(vec![
                Column::name(),
                Column::computed("Request", "string", 0, "", |o| json!(usage(o, false))),
                Column::computed("Limit", "string", 0, "", |o| json!(usage(o, true))),
                Column::age("string"),
            ]))
            .delete_returns_object()
        })
        .build()
}

const STANDARD_QUOTA: [&str; 19] = [
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.storage",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
    "resourcequotas",
    "services",
    "replicationcontrollers",
    "secrets",
    "persistentvolumeclaims",
    "configmaps",
    "services.nodeports",
    "services.loadbalancers",
];

const SCOPES: [&str; 7] = [
    "Terminating",
    "NotTerminating",
    "BestEffort",
    "NotBestEffort",
    "PriorityClass",
    "VolumeAttributesClass",
    "CrossNamespacePodAffinity",
];

/// core/v1 ResourceQuota.
pub struct ResourceQuotaStrategy;

impl Strategy for ResourceQuotaStrategy {
    fn track_generation(&self) -> bool {
        false
    }

    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        obj["status"] = json!({});
    }

    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        obj["status"] = old.get("status").cloned().unwrap_or(json!({}));
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        let mut errs = list_errors(&obj["spec"]["hard"], "spec.hard");
        errs.extend(scope_errors(&obj["spec"]));
        errs.extend(list_errors(&obj["status"]["hard"], "status.hard"));
        errs.extend(list_errors(&obj["status"]["used"], "status.used"));
        errs
    }

    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        let mut errs = list_errors(&obj["spec"]["hard"], "spec.hard");
        errs.extend(scope_errors(&obj["spec"]));
        let scopes = |v: &Value| -> Vec<String> {
            let mut s = crate::registry::core::service::strings(&v["spec"]["scopes"]);
            s.sort();
            s.dedup();
            s
        };
        if scopes(obj) != scopes(old) {
            errs.push(field::invalid(
                "spec.scopes",
                &obj["spec"]["scopes"],
                "field is immutable",
            ));
        }
        errs
    }
}

/// `resourcequotas/status`: hard and used validated.
pub struct ResourceQuotaStatusStrategy;

impl Strategy for ResourceQuotaStatusStrategy {
    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        keep_only_status(obj, old);
    }

    fn validate_update(&self, obj: &Value, _old: &Value) -> Vec<StatusCause> {
        let mut errs = list_errors(&obj["status"]["hard"], "status.hard");
        errs.extend(list_errors(&obj["status"]["used"], "status.used"));
        errs
    }
}

/// `validateResourceName` with the quota rule: a standard quota resource or a qualified name.
pub fn quota_resource_name_errors(name: &str, path: &str) -> Vec<StatusCause> {
    let v = json!(name);
    let msgs = qualified_name_messages(name);
    if !msgs.is_empty() {
        return msgs.iter().map(|m| field::invalid(path, &v, m)).collect();
    }
    let mut errs = resource_name_errors(name, path);
    let hugepages = name.starts_with("hugepages-") || name.starts_with("requests.hugepages-");
    if !name.contains('/') && !STANDARD_QUOTA.contains(&name) && !hugepages {
        errs.push(field::invalid(
            path,
            &v,
            "must be a standard resource for quota",
        ));
    }
    errs
}

/// The resource names the apiserver knows (`standardResources`).
pub const STANDARD_RESOURCES: [&str; 20] = [
    "cpu",
    "memory",
    "ephemeral-storage",
    "requests.cpu",
    "requests.memory",
    "requests.ephemeral-storage",
    "limits.cpu",
    "limits.memory",
    "limits.ephemeral-storage",
    "pods",
    "resourcequotas",
    "services",
    "replicationcontrollers",
    "secrets",
    "configmaps",
    "persistentvolumeclaims",
    "storage",
    "requests.storage",
    "services.nodeports",
    "services.loadbalancers",
];

/// `validateResourceName`: a qualified name, standard unless prefixed.
pub fn resource_name_errors(name: &str, path: &str) -> Vec<StatusCause> {
    let v = json!(name);
    let msgs = qualified_name_messages(name);
    if !msgs.is_empty() {
        return msgs.iter().map(|m| field::invalid(path, &v, m)).collect();
    }
    let hugepages = name.starts_with("hugepages-") || name.starts_with("requests.hugepages-");
    if !name.contains('/') && !STANDARD_RESOURCES.contains(&name) && !hugepages {
        return vec![field::invalid(
            path,
            &v,
            "must be a standard resource type or fully qualified",
        )];
    }
    Vec::new()
}

/// The names and quantities of a resource list.
fn list_errors(list: &Value, path: &str) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    for (k, v) in list.as_object().into_iter().flatten() {
        let res_path = format!("{path}[{k}]");
        errs.extend(quota_resource_name_errors(k, &res_path));
        errs.extend(resource_quantity_errors(k, &res_path, v));
    }
    errs
}

/// `validateResourceQuotaScopes`: known scopes, valid for the resources, not conflicting.
fn scope_errors(spec: &Value) -> Vec<StatusCause> {
    let scopes = crate::registry::core::service::strings(&spec["scopes"]);
    if scopes.is_empty() {
        return Vec::new();
    }
    let shown = &spec["scopes"];
    let mut errs = Vec::new();
    let hard: Vec<&String> = spec["hard"]
        .as_object()
        .map(|m| m.keys().collect())
        .unwrap_or_default();
    for scope in &scopes {
        if !SCOPES.contains(&scope.as_str()) {
            errs.push(field::invalid("spec.scopes", shown, "unsupported scope"));
        }
        for k in &hard {
            if STANDARD_QUOTA.contains(&k.as_str()) && !scope_fits(scope, k) {
                errs.push(field::invalid(
                    "spec.scopes",
                    shown,
                    "unsupported scope applied to resource",
                ));
            }
        }
    }
    let has = |s: &str| scopes.iter().any(|x| x == s);
    for (a, b) in [
        ("BestEffort", "NotBestEffort"),
        ("Terminating", "NotTerminating"),
    ] {
        if has(a) && has(b) {
            errs.push(field::invalid("spec.scopes", shown, "conflicting scopes"));
        }
    }
    errs
}

/// `IsResourceQuotaScopeValidForResource`.
fn scope_fits(scope: &str, resource: &str) -> bool {
    let compute = [
        "cpu",
        "memory",
        "limits.cpu",
        "limits.memory",
        "requests.cpu",
        "requests.memory",
    ];
    match scope {
        "Terminating"
        | "NotTerminating"
        | "NotBestEffort"
        | "PriorityClass"
        | "CrossNamespacePodAffinity" => resource == "pods" || compute.contains(&resource),
        "BestEffort" => resource == "pods",
        "VolumeAttributesClass" => {
            ["persistentvolumeclaims", "requests.storage"].contains(&resource)
        }
        _ => true,
    }
}

/// `printResourceQuota`: `resource: used/hard` for each hard limit, sorted, `limits.*` in the
/// Limit column and the rest in the Request column.
fn usage(obj: &Value, limits: bool) -> String {
    let status = &obj["status"];
    let mut names: Vec<&String> = status["hard"]
        .as_object()
        .map(|m| m.keys().collect())
        .unwrap_or_default();
    names.sort();
    names
        .into_iter()
        .filter(|n| limits == (n.contains('.') && n.split('.').next() == Some("limits")))
        .map(|n| {
            let used = status["used"][n.as_str()].as_str().unwrap_or("0");
            let hard = status["hard"][n.as_str()].as_str().unwrap_or("0");
            format!("{n}: {used}/{hard}")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_quantities_and_columns() {
        let q = json!({"spec": {"hard": {"pods": "1500m", "cpu": "-1", "bogus": "1", "count/deployments.apps": "2"}}});
        let msgs: Vec<String> = ResourceQuotaStrategy
            .validate(&q)
            .into_iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect();
        assert_eq!(
            msgs,
            [
                "spec.hard[bogus]: Invalid value: \"bogus\": must be a standard resource type or fully qualified",
                "spec.hard[bogus]: Invalid value: \"bogus\": must be a standard resource for quota",
                "spec.hard[cpu]: Invalid value: \"-1\": must be greater than or equal to 0",
                "spec.hard[pods]: Invalid value: \"1500m\": must be an integer",
            ]
        );
        let shown = json!({"status": {"hard": {"pods": "10", "limits.cpu": "2", "requests.memory": "1Gi"},
            "used": {"pods": "3"}}});
        assert_eq!(usage(&shown, false), "pods: 3/10, requests.memory: 0/1Gi");
        assert_eq!(usage(&shown, true), "limits.cpu: 0/2");
    }
}
