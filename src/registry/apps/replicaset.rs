//! The apps/v1 ReplicaSet kind: one replica by default and the pod template's defaults, a
//! required selector that matches the template's labels and never changes, templates whose
//! pods run forever, the `status` and `scale` subresources, and `kubectl get replicasets`'
//! columns.
//!
//! No controller runs: a ReplicaSet creates no pods and its status stays as clients write it.

use std::sync::Arc;

use serde_json::{json, Value};

use super::deployment::selector_immutable;
use super::workload::{
    self, always_running_template, int_at, nonnegative_fields, replica_counters,
    selector_and_template_labels, Rules, Workload,
};
use crate::controllers::simulated;
use crate::error::StatusCause;
use crate::registry::apiextensions::SelectorFormat;
use crate::registry::builtin;
use crate::registry::core::podspec::default_pod_spec;
use crate::registry::pointer::Pointer;
use crate::registry::resource::ApiResource;
use crate::registry::table::{Column, Columns};

/// The served resource.
pub fn resource() -> ApiResource {
    let rules = Rules::new(
        defaults,
        || json!({"replicas": 0}),
        validate,
        validate_update,
    )
    .reconciled_by(simulated::Workload::ReplicaSet);
    builtin::kind("apps", "v1", "replicasets", Arc::new(Workload(rules)))
        .scale(workload::scale(SelectorFormat::LabelSelector))
        .part("status", workload::status(false, validate_status))
        .with(|r| r.field_selectors(FIELD_SELECTORS).table(columns()))
        .build()
}

/// The fields ReplicaSets may be selected by (`ReplicaSetToSelectableFields`).
const FIELD_SELECTORS: &[&str] = &["metadata.name", "metadata.namespace", "status.replicas|0"];

/// `kubectl get replicasets` and `kubectl get replicationcontrollers`: desired, current and
/// ready replicas (`-o wide` adds containers, images and the selector, printed by `selector`).
pub fn replica_columns(selector: fn(&Value) -> Value) -> Columns {
    Columns::new(vec![
        Column::name(),
        Column::computed("Desired", "integer", 0, "", |o| {
            json!(int_at(o, "/spec/replicas"))
        }),
        Column::computed("Current", "integer", 0, "", |o| {
            json!(int_at(o, "/status/replicas"))
        }),
        Column::computed("Ready", "integer", 0, "", |o| {
            json!(int_at(o, "/status/readyReplicas"))
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
        Column::computed("Selector", "string", 1, "", selector),
    ])
}

fn columns() -> Columns {
    replica_columns(workload::selector_cell)
}

/// `SetDefaults_ReplicaSet` and the template's pod spec defaults.
fn defaults(obj: &mut Value) {
    let Some(spec) = obj.get_mut("spec").filter(|s| s.is_object()) else {
        return;
    };
    if spec.get("replicas").is_none_or(Value::is_null) {
        spec["replicas"] = json!(1);
    }
    if let Some(pod_spec) = spec.at_mut("/template/spec") {
        default_pod_spec(pod_spec);
    }
}

/// `ValidateReplicaSet`.
fn validate(obj: &Value) -> Vec<StatusCause> {
    let spec = &obj["spec"];
    let mut errs = nonnegative_fields(
        obj,
        &[
            ("/spec/replicas", "spec.replicas"),
            ("/spec/minReadySeconds", "spec.minReadySeconds"),
        ],
    );
    if selector_and_template_labels(spec, "deployment", &mut errs) {
        always_running_template(spec, "ReplicaSet", &mut errs);
    }
    errs
}

/// `ValidateReplicaSetUpdate`: the spec's rules, and an immutable selector.
fn validate_update(obj: &Value, old: &Value) -> Vec<StatusCause> {
    let mut errs = validate(obj);
    errs.extend(selector_immutable(obj, old));
    errs
}

/// `ValidateReplicaSetStatusUpdate`.
pub fn validate_status(obj: &Value, _old: &Value) -> Vec<StatusCause> {
    let fields = [
        ("/status/replicas", "status.replicas"),
        (
            "/status/fullyLabeledReplicas",
            "status.fullyLabeledReplicas",
        ),
        ("/status/readyReplicas", "status.readyReplicas"),
        ("/status/availableReplicas", "status.availableReplicas"),
        ("/status/observedGeneration", "status.observedGeneration"),
        ("/status/terminatingReplicas", "status.terminatingReplicas"),
    ];
    let mut errs = nonnegative_fields(obj, &fields);
    errs.extend(replica_counters(
        &obj["status"],
        &["fullyLabeledReplicas", "readyReplicas", "availableReplicas"],
        Some("cannot be greater than readyReplicas"),
    ));
    errs
}
