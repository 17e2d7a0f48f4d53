//! The apps/v1 StatefulSet kind: `SetDefaults_StatefulSet` (OrderedReady pods, RollingUpdate
//! with partition 0, ten revisions kept, PVCs retained when deleted or scaled, one replica), the
//! claim templates' defaults, DNS-label names, a required selector matching the template's
//! labels, a spec of which only replicas, ordinals, template, update strategy, revision limit,
//! PVC retention and minReadySeconds may change, the `status` and `scale` subresources, and
//! `kubectl get statefulsets`' columns.
//!
//! Unless the server simulates a cluster ([`crate::controllers::simulated::statefulset`]), no
//! controller runs: a StatefulSet creates no pods or claims. The claim templates' own specs
//! are not validated yet.

use std::sync::Arc;

use serde_json::{json, Value};

use super::workload::{
    self, collision_count_kept, int_at, int_or_percent, nonnegative_fields,
    not_more_than_100_percent, positive_int_or_percent, replica_counters, restart_always,
    selector_and_template_labels, Rules, Workload,
};
use crate::controllers::simulated;
use crate::error::{field, StatusCause};
use crate::registry::apiextensions::SelectorFormat;
use crate::registry::builtin;
use crate::registry::core::podspec::{default_pod_spec, validate_pod_template_spec};
use crate::registry::object_meta::{name_errors, NameRule};
use crate::registry::pointer::Pointer;
use crate::registry::resource::ApiResource;
use crate::registry::table::{Column, Columns};

/// The served resource.
pub fn resource() -> ApiResource {
    let rules = Rules {
        name_rule: NameRule::Label,
        prepare_create: |obj| drop_max_unavailable(obj, &Value::Null),
        prepare_update: drop_max_unavailable,
        ..Rules::new(
            defaults,
            || json!({"replicas": 0, "availableReplicas": 0}),
            validate,
            validate_update,
        )
    }
    .reconciled_by(simulated::Workload::StatefulSet);
    builtin::kind("apps", "v1", "statefulsets", Arc::new(Workload(rules)))
        .scale(workload::scale(SelectorFormat::LabelSelector))
        .part("status", workload::status(false, validate_status))
        .with(|r| r.table(columns()))
        .build()
}

/// `dropStatefulSetDisabledFields`: `maxUnavailable` belongs to the MaxUnavailableStatefulSet
/// feature, off in 1.36, so it is dropped unless the stored object already had it.
fn drop_max_unavailable(obj: &mut Value, old: &Value) {
    let pointer = "/spec/updateStrategy/rollingUpdate/maxUnavailable";
    if old.at(pointer).is_some_and(|v| !v.is_null()) {
        return;
    }
    let rolling = obj
        .at_mut("/spec/updateStrategy/rollingUpdate")
        .and_then(Value::as_object_mut);
    if let Some(rolling) = rolling {
        rolling.remove("maxUnavailable");
    }
}

/// `kubectl get statefulsets` (`-o wide` adds containers and images).
fn columns() -> Columns {
    Columns::new(vec![
        Column::name(),
        Column::computed(
            "Ready",
            "string",
            0,
            "Number of the pod with ready state",
            |s| {
                json!(format!(
                    "{}/{}",
                    int_at(s, "/status/readyReplicas"),
                    int_at(s, "/spec/replicas")
                ))
            },
        ),
        Column::age("string"),
        Column::computed(
            "Containers",
            "string",
            1,
            "Names of each container in the template.",
            workload::containers_cell,
        ),
        Column::computed(
            "Images",
            "string",
            1,
            "Images referenced by each container in the template.",
            workload::images_cell,
        ),
    ])
}

/// Sets `obj[key]` when absent or empty.
fn default_to(obj: &mut Value, key: &str, value: Value) {
    let unset = match obj.get(key) {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => s.is_empty(),
        _ => false,
    };
    if unset {
        obj[key] = value;
    }
}

/// `SetDefaults_StatefulSet`, the claim templates' and the pod template's defaults.
fn defaults(obj: &mut Value) {
    let Some(spec) = obj.get_mut("spec").filter(|s| s.is_object()) else {
        return;
    };
    default_to(spec, "podManagementPolicy", json!("OrderedReady"));
    if !spec["updateStrategy"].is_object() {
        spec["updateStrategy"] = json!({});
    }
    let strategy = &mut spec["updateStrategy"];
    if strategy["type"].as_str().unwrap_or("").is_empty() {
        strategy["type"] = json!("RollingUpdate");
        default_to(strategy, "rollingUpdate", json!({}));
    }
    if strategy["type"] == "RollingUpdate" && strategy["rollingUpdate"].is_object() {
        default_to(&mut strategy["rollingUpdate"], "partition", json!(0));
    }
    default_to(spec, "persistentVolumeClaimRetentionPolicy", json!({}));
    let policy = &mut spec["persistentVolumeClaimRetentionPolicy"];
    default_to(policy, "whenDeleted", json!("Retain"));
    default_to(policy, "whenScaled", json!("Retain"));
    default_to(spec, "replicas", json!(1));
    default_to(spec, "revisionHistoryLimit", json!(10));
    if let Some(claims) = spec
        .get_mut("volumeClaimTemplates")
        .and_then(Value::as_array_mut)
    {
        for claim in claims.iter_mut().filter(|c| c.is_object()) {
            claim["apiVersion"] = json!("v1");
            claim["kind"] = json!("PersistentVolumeClaim");
            if !claim["spec"].is_object() {
                claim["spec"] = json!({});
            }
            default_to(&mut claim["spec"], "volumeMode", json!("Filesystem"));
            if !claim["status"].is_object() {
                claim["status"] = json!({});
            }
            default_to(&mut claim["status"], "phase", json!("Pending"));
        }
    }
    if let Some(pod_spec) = spec.at_mut("/template/spec") {
        default_pod_spec(pod_spec);
    }
}

/// `ValidateStatefulSet`.
fn validate(obj: &Value) -> Vec<StatusCause> {
    spec_errors(&obj["spec"], true)
}

/// `ValidateStatefulSetSpec`; `check_service_name` is false on updates (the name is immutable,
/// old invalid ones are tolerated).
fn spec_errors(spec: &Value, check_service_name: bool) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    match spec["podManagementPolicy"].as_str().unwrap_or("") {
        "" => errs.push(field::required("spec.podManagementPolicy", "")),
        "OrderedReady" | "Parallel" => {}
        other => errs.push(field::invalid(
            "spec.podManagementPolicy",
            &json!(other),
            "must be 'OrderedReady' or 'Parallel'",
        )),
    }
    errs.extend(update_strategy_errors(&spec["updateStrategy"]));
    let policy = &spec["persistentVolumeClaimRetentionPolicy"];
    if policy.is_object() {
        for key in ["whenDeleted", "whenScaled"] {
            let v = policy[key].as_str().unwrap_or("");
            if v != "Retain" && v != "Delete" {
                errs.push(field::not_supported(
                    &format!("spec.persistentVolumeClaimRetentionPolicy.{key}"),
                    &json!(v),
                    &["Retain", "Delete"],
                ));
            }
        }
    }
    let obj = json!({"spec": spec});
    errs.extend(nonnegative_fields(
        &obj,
        &[
            ("/spec/replicas", "spec.replicas"),
            ("/spec/minReadySeconds", "spec.minReadySeconds"),
            ("/spec/ordinals/start", "spec.ordinals.start"),
        ],
    ));
    let service = spec["serviceName"].as_str().unwrap_or("");
    if check_service_name && !service.is_empty() {
        for msg in name_errors(service, NameRule::Label) {
            errs.push(field::invalid("spec.serviceName", &json!(service), &msg));
        }
    }
    if selector_and_template_labels(spec, "statefulset", &mut errs) {
        let template = template_to_validate(spec);
        errs.extend(validate_pod_template_spec(&template, "spec.template"));
    }
    errs.extend(restart_always(&spec["template"], "StatefulSet"));
    errs
}

/// The template as validated: without the hostname and subdomain the controller sets, with
/// the volumes the claim templates add.
fn template_to_validate(spec: &Value) -> Value {
    let mut template = spec["template"].clone();
    if let Some(pod) = template.get_mut("spec").and_then(Value::as_object_mut) {
        pod.remove("hostname");
        pod.remove("subdomain");
    }
    let claims: Vec<String> = spec["volumeClaimTemplates"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c.at("/metadata/name").and_then(Value::as_str))
        .map(str::to_string)
        .collect();
    if claims.is_empty() || !template["spec"].is_object() {
        return template;
    }
    let mut volumes: Vec<Value> = claims
        .iter()
        .map(|n| json!({"name": n, "persistentVolumeClaim": {"claimName": n}}))
        .collect();
    let own = template["spec"]["volumes"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    volumes.extend(own.into_iter().filter(|v| {
        let name = v["name"].as_str().unwrap_or("");
        !claims.iter().any(|c| c == name)
    }));
    template["spec"]["volumes"] = Value::Array(volumes);
    template
}

/// The update strategy: RollingUpdate (partition, maxUnavailable) or OnDelete.
fn update_strategy_errors(strategy: &Value) -> Vec<StatusCause> {
    let rolling = &strategy["rollingUpdate"];
    let go_rolling = || {
        if rolling.is_object() {
            format!(
                "{{\"Partition\":{},\"MaxUnavailable\":{}}}",
                rolling["partition"].as_i64().unwrap_or(0),
                if rolling["maxUnavailable"].is_null() {
                    "null".to_string()
                } else {
                    rolling["maxUnavailable"].to_string()
                }
            )
        } else {
            "null".to_string()
        }
    };
    match strategy["type"].as_str().unwrap_or("") {
        "" => vec![field::required("spec.updateStrategy", "")],
        "OnDelete" if rolling.is_object() => vec![field::invalid(
            "spec.updateStrategy.rollingUpdate",
            &json!(""),
            "only allowed for updateStrategy 'RollingUpdate'",
        )
        .with_raw_value(&go_rolling())],
        "OnDelete" => Vec::new(),
        "RollingUpdate" if rolling.is_object() => {
            let at = "spec.updateStrategy.rollingUpdate";
            let obj = json!({"r": rolling});
            let mut errs =
                nonnegative_fields(&obj, &[("/r/partition", &format!("{at}.partition"))]);
            let max = &rolling["maxUnavailable"];
            if !max.is_null() {
                let path = format!("{at}.maxUnavailable");
                errs.extend(positive_int_or_percent(max, &path));
                if int_or_percent(max) == 0 {
                    errs.push(field::invalid(&path, max, "cannot be 0"));
                }
                errs.extend(not_more_than_100_percent(max, &path));
            }
            errs
        }
        "RollingUpdate" => Vec::new(),
        other => vec![field::invalid(
            "spec.updateStrategy",
            &json!(""),
            "must be 'RollingUpdate' or 'OnDelete'",
        )
        .with_raw_value(&format!(
            "{{\"Type\":{other:?},\"RollingUpdate\":{}}}",
            go_rolling()
        ))],
    }
}

/// The spec fields an update may change.
const MUTABLE: [&str; 7] = [
    "replicas",
    "ordinals",
    "template",
    "updateStrategy",
    "revisionHistoryLimit",
    "persistentVolumeClaimRetentionPolicy",
    "minReadySeconds",
];

/// `ValidateStatefulSetUpdate`.
fn validate_update(obj: &Value, old: &Value) -> Vec<StatusCause> {
    let mut errs = spec_errors(&obj["spec"], false);
    let strip = |spec: &Value| {
        let mut s = spec.clone();
        if let Some(m) = s.as_object_mut() {
            for key in MUTABLE {
                m.remove(key);
            }
        }
        s
    };
    if strip(&obj["spec"]) != strip(&old["spec"]) {
        errs.push(field::forbidden(
            "spec",
            "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
        ));
    }
    errs
}

/// `ValidateStatefulSetStatusUpdate`.
fn validate_status(obj: &Value, old: &Value) -> Vec<StatusCause> {
    let fields = [
        ("/status/replicas", "status.replicas"),
        ("/status/readyReplicas", "status.readyReplicas"),
        ("/status/currentReplicas", "status.currentReplicas"),
        ("/status/updatedReplicas", "status.updatedReplicas"),
        ("/status/availableReplicas", "status.availableReplicas"),
        ("/status/observedGeneration", "status.observedGeneration"),
        ("/status/collisionCount", "status.collisionCount"),
    ];
    let mut errs = nonnegative_fields(obj, &fields);
    errs.extend(replica_counters(
        &obj["status"],
        &[
            "readyReplicas",
            "currentReplicas",
            "updatedReplicas",
            "availableReplicas",
        ],
        Some("cannot be greater than status.readyReplicas"),
    ));
    errs.extend(collision_count_kept(obj, old));
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_as_set_defaults_statefulset() {
        let mut s =
            json!({"spec": {"volumeClaimTemplates": [{"metadata": {"name": "d"}, "spec": {}}]}});
        defaults(&mut s);
        let spec = &s["spec"];
        assert_eq!(spec["podManagementPolicy"], "OrderedReady");
        assert_eq!(
            spec["updateStrategy"],
            json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 0}})
        );
        assert_eq!(
            spec["persistentVolumeClaimRetentionPolicy"],
            json!({"whenDeleted": "Retain", "whenScaled": "Retain"})
        );
        assert_eq!(
            spec["volumeClaimTemplates"][0]["status"]["phase"],
            "Pending"
        );
        assert_eq!(
            spec["volumeClaimTemplates"][0]["spec"]["volumeMode"],
            "Filesystem"
        );
    }
}
