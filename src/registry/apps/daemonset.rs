//! The apps/v1 DaemonSet kind: `SetDefaults_DaemonSet` (RollingUpdate with maxUnavailable 1
//! and maxSurge 0, ten revisions kept) and the pod template's defaults, the template generation
//! kept in the `deprecated.daemonset.template.generation` annotation (1 on create, +1 with each
//! template change, as apps/v1 stores it), a selector matching the template's labels that never
//! changes, the `status` subresource, and `kubectl get daemonsets`' columns.
//!
//! Unless the server simulates a cluster ([`crate::controllers::simulated::daemonset`]), no
//! controller runs: a DaemonSet creates no pods and its status stays as clients write it.

use std::sync::Arc;

use serde_json::{json, Value};

use super::deployment::selector_immutable;
use super::workload::{
    self, always_running_template, collision_count_kept, format_labels, int_at, int_or_percent,
    nonnegative_fields, not_more_than_100_percent, positive_int_or_percent, selector_invalid,
    selector_mismatch, Rules, Workload,
};
use crate::controllers::simulated;
use crate::error::{field, StatusCause};
use crate::registry::builtin;
use crate::registry::core::podspec::default_pod_spec;
use crate::registry::pointer::Pointer;
use crate::registry::resource::ApiResource;
use crate::registry::table::{Column, Columns};
use crate::registry::validation::{label_selector_errors, selector_is_empty, selector_matches};

/// The annotation apps/v1 keeps the template generation in.
pub const TEMPLATE_GENERATION: &str = "deprecated.daemonset.template.generation";

/// The served resource.
pub fn resource() -> ApiResource {
    let rules = Rules {
        prepare_create: |obj| {
            let given = template_generation(obj).max(1);
            set_template_generation(obj, given);
        },
        prepare_update: |obj, old| {
            let mut generation = template_generation(old);
            if obj["spec"]["template"] != old["spec"]["template"] {
                generation += 1;
            }
            set_template_generation(obj, generation);
        },
        ..Rules::new(defaults, empty_status, validate, validate_update)
    }
    .reconciled_by(simulated::Workload::DaemonSet);
    builtin::kind("apps", "v1", "daemonsets", Arc::new(Workload(rules)))
        .part("status", workload::status(false, validate_status))
        .with(|r| r.table(columns()))
        .build()
}

fn empty_status() -> Value {
    json!({"currentNumberScheduled": 0, "numberMisscheduled": 0,
           "desiredNumberScheduled": 0, "numberReady": 0})
}

/// The template generation an object's annotation records (0 when absent or unparsable).
fn template_generation(obj: &Value) -> i64 {
    obj["metadata"]["annotations"][TEMPLATE_GENERATION]
        .as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

fn set_template_generation(obj: &mut Value, generation: i64) {
    if !obj["metadata"]["annotations"].is_object() {
        obj["metadata"]["annotations"] = json!({});
    }
    obj["metadata"]["annotations"][TEMPLATE_GENERATION] = json!(generation.to_string());
}

/// `kubectl get daemonsets`.
fn columns() -> Columns {
    let names = ["Desired", "Current", "Ready", "Up-to-date", "Available"];
    let cells: [fn(&Value) -> Value; 5] = [
        |d| json!(int_at(d, "/status/desiredNumberScheduled")),
        |d| json!(int_at(d, "/status/currentNumberScheduled")),
        |d| json!(int_at(d, "/status/numberReady")),
        |d| json!(int_at(d, "/status/updatedNumberScheduled")),
        |d| json!(int_at(d, "/status/numberAvailable")),
    ];
    let mut columns = vec![Column::name()];
    for (name, cell) in names.into_iter().zip(cells) {
        columns.push(Column::computed(name, "integer", 0, "", cell));
    }
    columns.push(Column::computed("Node Selector", "string", 0, "", |d| {
        json!(format_labels(
            &d["spec"]["template"]["spec"]["nodeSelector"]
        ))
    }));
    columns.push(Column::age("string"));
    columns.push(Column::computed(
        "Containers",
        "string",
        1,
        "Names of each container in the template.",
        workload::containers_cell,
    ));
    columns.push(Column::computed(
        "Images",
        "string",
        1,
        "Images referenced by each container in the template.",
        workload::images_cell,
    ));
    columns.push(Column::computed(
        "Selector",
        "string",
        1,
        "",
        workload::selector_cell,
    ));
    Columns::new(columns)
}

/// `SetDefaults_DaemonSet` and the template's pod spec defaults.
fn defaults(obj: &mut Value) {
    let Some(spec) = obj.get_mut("spec").filter(|s| s.is_object()) else {
        return;
    };
    if !spec["updateStrategy"].is_object() {
        spec["updateStrategy"] = json!({});
    }
    let strategy = &mut spec["updateStrategy"];
    if strategy["type"].as_str().unwrap_or("").is_empty() {
        strategy["type"] = json!("RollingUpdate");
    }
    if strategy["type"] == "RollingUpdate" {
        if !strategy["rollingUpdate"].is_object() {
            strategy["rollingUpdate"] = json!({});
        }
        for (key, value) in [("maxUnavailable", 1), ("maxSurge", 0)] {
            if strategy["rollingUpdate"]
                .get(key)
                .is_none_or(Value::is_null)
            {
                strategy["rollingUpdate"][key] = json!(value);
            }
        }
    }
    if spec.get("revisionHistoryLimit").is_none_or(Value::is_null) {
        spec["revisionHistoryLimit"] = json!(10);
    }
    if let Some(pod_spec) = spec.at_mut("/template/spec") {
        default_pod_spec(pod_spec);
    }
}

/// `ValidateDaemonSetSpec`.
fn validate(obj: &Value) -> Vec<StatusCause> {
    let spec = &obj["spec"];
    let selector = &spec["selector"];
    let mut errs = label_selector_errors(selector, "spec.selector", false);
    let labels = spec.at("/template/metadata/labels").unwrap_or(&Value::Null);
    if selector_matches(selector, labels) == Some(false) {
        errs.push(selector_mismatch(labels));
    }
    if selector.is_object() && selector_is_empty(selector) {
        errs.push(selector_invalid(
            selector,
            "empty selector is invalid for daemonset",
        ));
    }
    always_running_template(spec, "DaemonSet", &mut errs);
    errs.extend(nonnegative_fields(
        obj,
        &[("/spec/minReadySeconds", "spec.minReadySeconds")],
    ));
    errs.extend(update_strategy_errors(&spec["updateStrategy"]));
    errs.extend(nonnegative_fields(
        obj,
        &[("/spec/revisionHistoryLimit", "spec.revisionHistoryLimit")],
    ));
    errs
}

/// `ValidateDaemonSetUpdateStrategy`.
fn update_strategy_errors(strategy: &Value) -> Vec<StatusCause> {
    let rolling = &strategy["rollingUpdate"];
    match strategy["type"].as_str().unwrap_or("") {
        "OnDelete" => Vec::new(),
        "RollingUpdate" if !rolling.is_object() => {
            vec![field::required("spec.updateStrategy.rollingUpdate", "")]
        }
        "RollingUpdate" => {
            let at = "spec.updateStrategy.rollingUpdate";
            let unavailable = &rolling["maxUnavailable"];
            let surge = &rolling["maxSurge"];
            let mut errs = positive_int_or_percent(unavailable, &format!("{at}.maxUnavailable"));
            errs.extend(positive_int_or_percent(surge, &format!("{at}.maxSurge")));
            errs.extend(not_more_than_100_percent(
                unavailable,
                &format!("{at}.maxUnavailable"),
            ));
            errs.extend(not_more_than_100_percent(surge, &format!("{at}.maxSurge")));
            match (int_or_percent(unavailable) != 0, int_or_percent(surge) != 0) {
                (true, true) => errs.push(field::invalid(
                    &format!("{at}.maxSurge"),
                    surge,
                    "may not be set when maxUnavailable is non-zero",
                )),
                (false, false) => errs.push(field::required(
                    &format!("{at}.maxUnavailable"),
                    "cannot be 0 when maxSurge is 0",
                )),
                _ => {}
            }
            errs
        }
        other => vec![workload::not_supported_raw(
            "spec.updateStrategy",
            &workload::go_strategy(other, rolling),
            &["RollingUpdate", "OnDelete"],
        )],
    }
}

/// `ValidateDaemonSetUpdate`: an immutable selector, then the spec's rules.
fn validate_update(obj: &Value, old: &Value) -> Vec<StatusCause> {
    let mut errs = selector_immutable(obj, old);
    errs.extend(validate(obj));
    errs
}

/// `ValidateDaemonSetStatusUpdate`.
fn validate_status(obj: &Value, old: &Value) -> Vec<StatusCause> {
    let fields = [
        (
            "/status/currentNumberScheduled",
            "status.currentNumberScheduled",
        ),
        ("/status/numberMisscheduled", "status.numberMisscheduled"),
        (
            "/status/desiredNumberScheduled",
            "status.desiredNumberScheduled",
        ),
        ("/status/numberReady", "status.numberReady"),
        ("/status/observedGeneration", "status.observedGeneration"),
        (
            "/status/updatedNumberScheduled",
            "status.updatedNumberScheduled",
        ),
        ("/status/numberAvailable", "status.numberAvailable"),
        ("/status/numberUnavailable", "status.numberUnavailable"),
        ("/status/collisionCount", "status.collisionCount"),
    ];
    let mut errs = nonnegative_fields(obj, &fields);
    errs.extend(collision_count_kept(obj, old));
    errs
}
