//! The apps/v1 Deployment kind: `SetDefaults_Deployment` (one replica, RollingUpdate 25%/25%,
//! ten revisions kept, 600 s progress deadline) and the pod template's defaults, a required
//! selector that matches the template's labels and never changes, the strategy's rules,
//! `metadata.generation` that follows the spec and the annotations, the `status` and `scale`
//! subresources, and `kubectl get deployments`' columns.
//!
//! No controller runs: a Deployment creates no ReplicaSets and its status stays as clients
//! write it.

use std::sync::Arc;

use serde_json::{json, Value};

use super::workload::{
    self, always_running_template, collision_count_kept, int_at, int_or_percent,
    nonnegative_fields, not_more_than_100_percent, positive_int_or_percent, replica_counters,
    selector_and_template_labels, Rules, Workload,
};
use crate::controllers::simulated;
use crate::error::{field, StatusCause};
use crate::registry::apiextensions::SelectorFormat;
use crate::registry::builtin;
use crate::registry::core::podspec::default_pod_spec;
use crate::registry::pointer::Pointer;
use crate::registry::resource::ApiResource;
use crate::registry::table::{Column, Columns};
use crate::registry::validation::immutable;

/// The served resource.
pub fn resource() -> ApiResource {
    let rules = Rules {
        annotations_bump_generation: true,
        ..Rules::new(defaults, || json!({}), validate, validate_update)
    }
    .reconciled_by(simulated::Workload::Deployment);
    builtin::kind("apps", "v1", "deployments", Arc::new(Workload(rules)))
        .scale(workload::scale(SelectorFormat::LabelSelector))
        .part("status", workload::status(true, validate_status))
        .with(|r| r.table(columns()))
        .build()
}

/// `kubectl get deployments` (`-o wide` adds containers, images and the selector).
fn columns() -> Columns {
    Columns::new(vec![
        Column::name(),
        Column::computed(
            "Ready",
            "string",
            0,
            "Number of the pod with ready state",
            |d| {
                json!(format!(
                    "{}/{}",
                    int_at(d, "/status/readyReplicas"),
                    int_at(d, "/spec/replicas")
                ))
            },
        ),
        Column::computed("Up-to-date", "string", 0, "", |d| {
            json!(int_at(d, "/status/updatedReplicas"))
        }),
        Column::computed("Available", "string", 0, "", |d| {
            json!(int_at(d, "/status/availableReplicas"))
        }),
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
        Column::computed("Selector", "string", 1, "", |d| {
            let s = crate::machinery::selector::label_selector_string(&d["spec"]["selector"]);
            json!(s.unwrap_or_default())
        }),
    ])
}

/// `SetDefaults_Deployment` and the template's pod spec defaults.
fn defaults(obj: &mut Value) {
    let Some(spec) = obj.get_mut("spec").filter(|s| s.is_object()) else {
        return;
    };
    if spec.get("replicas").is_none_or(Value::is_null) {
        spec["replicas"] = json!(1);
    }
    if !spec["strategy"].is_object() {
        spec["strategy"] = json!({});
    }
    let strategy = &mut spec["strategy"];
    if strategy["type"].as_str().unwrap_or("").is_empty() {
        strategy["type"] = json!("RollingUpdate");
    }
    if strategy["type"] == "RollingUpdate" {
        if !strategy["rollingUpdate"].is_object() {
            strategy["rollingUpdate"] = json!({});
        }
        for key in ["maxUnavailable", "maxSurge"] {
            if strategy["rollingUpdate"]
                .get(key)
                .is_none_or(Value::is_null)
            {
                strategy["rollingUpdate"][key] = json!("25%");
            }
        }
    }
    for (key, value) in [
        ("revisionHistoryLimit", 10),
        ("progressDeadlineSeconds", 600),
    ] {
        if spec.get(key).is_none_or(Value::is_null) {
            spec[key] = json!(value);
        }
    }
    if let Some(pod_spec) = spec.at_mut("/template/spec") {
        default_pod_spec(pod_spec);
    }
}

/// `ValidateDeployment`.
fn validate(obj: &Value) -> Vec<StatusCause> {
    let spec = &obj["spec"];
    let mut errs = nonnegative_fields(obj, &[("/spec/replicas", "spec.replicas")]);
    if selector_and_template_labels(spec, "deployment", &mut errs) {
        always_running_template(spec, "ReplicaSet", &mut errs);
    }
    errs.extend(strategy_errors(&spec["strategy"]));
    errs.extend(nonnegative_fields(
        obj,
        &[
            ("/spec/minReadySeconds", "spec.minReadySeconds"),
            ("/spec/revisionHistoryLimit", "spec.revisionHistoryLimit"),
            (
                "/spec/progressDeadlineSeconds",
                "spec.progressDeadlineSeconds",
            ),
        ],
    ));
    if let Some(deadline) = spec["progressDeadlineSeconds"].as_i64() {
        if deadline <= spec["minReadySeconds"].as_i64().unwrap_or(0) {
            errs.push(field::invalid(
                "spec.progressDeadlineSeconds",
                &json!(deadline),
                "must be greater than minReadySeconds",
            ));
        }
    }
    errs
}

/// `ValidateDeploymentStrategy`.
fn strategy_errors(strategy: &Value) -> Vec<StatusCause> {
    let rolling = &strategy["rollingUpdate"];
    match strategy["type"].as_str().unwrap_or("") {
        "Recreate" if !rolling.is_null() => vec![field::forbidden(
            "spec.strategy.rollingUpdate",
            "may not be specified when strategy `type` is 'Recreate'",
        )],
        "Recreate" => Vec::new(),
        "RollingUpdate" if !rolling.is_object() => vec![field::required(
            "spec.strategy.rollingUpdate",
            "this should be defaulted and never be nil",
        )],
        "RollingUpdate" => {
            let at = "spec.strategy.rollingUpdate";
            let unavailable = &rolling["maxUnavailable"];
            let surge = &rolling["maxSurge"];
            let mut errs = positive_int_or_percent(unavailable, &format!("{at}.maxUnavailable"));
            errs.extend(positive_int_or_percent(surge, &format!("{at}.maxSurge")));
            if int_or_percent(unavailable) == 0 && int_or_percent(surge) == 0 {
                errs.push(field::invalid(
                    &format!("{at}.maxUnavailable"),
                    unavailable,
                    "may not be 0 when `maxSurge` is 0",
                ));
            }
            errs.extend(not_more_than_100_percent(
                unavailable,
                &format!("{at}.maxUnavailable"),
            ));
            errs
        }
        other => vec![workload::not_supported_raw(
            "spec.strategy",
            &workload::go_strategy(other, rolling),
            &["Recreate", "RollingUpdate"],
        )],
    }
}

/// `ValidateDeploymentUpdate`: the spec's rules, and an immutable selector.
fn validate_update(obj: &Value, old: &Value) -> Vec<StatusCause> {
    let mut errs = validate(obj);
    errs.extend(selector_immutable(obj, old));
    errs
}

/// `spec.selector: Invalid value: {...}: field is immutable`.
pub fn selector_immutable(obj: &Value, old: &Value) -> Vec<StatusCause> {
    let (new, before) = (&obj["spec"]["selector"], &old["spec"]["selector"]);
    if immutable(new, before, "spec.selector").is_empty() {
        return Vec::new();
    }
    vec![workload::selector_invalid(new, "field is immutable")]
}

/// `ValidateDeploymentStatusUpdate`.
fn validate_status(obj: &Value, old: &Value) -> Vec<StatusCause> {
    let fields = [
        ("/status/observedGeneration", "status.observedGeneration"),
        ("/status/replicas", "status.replicas"),
        ("/status/updatedReplicas", "status.updatedReplicas"),
        ("/status/readyReplicas", "status.readyReplicas"),
        ("/status/availableReplicas", "status.availableReplicas"),
        ("/status/unavailableReplicas", "status.unavailableReplicas"),
        ("/status/terminatingReplicas", "status.terminatingReplicas"),
        ("/status/collisionCount", "status.collisionCount"),
    ];
    let mut errs = nonnegative_fields(obj, &fields);
    errs.extend(replica_counters(
        &obj["status"],
        &["updatedReplicas", "readyReplicas", "availableReplicas"],
        Some("cannot be greater than readyReplicas"),
    ));
    errs.extend(collision_count_kept(obj, old));
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_as_set_defaults_deployment() {
        let mut d = json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "image": "x:1"}]}}}});
        defaults(&mut d);
        assert_eq!(d["spec"]["replicas"], 1);
        assert_eq!(
            d["spec"]["strategy"],
            json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}})
        );
        assert_eq!(d["spec"]["revisionHistoryLimit"], 10);
        assert_eq!(d["spec"]["progressDeadlineSeconds"], 600);
        assert_eq!(d["spec"]["template"]["spec"]["restartPolicy"], "Always");
    }
}
