//! The core/v1 ReplicationController kind: the selector and the object's labels default to the
//! template's labels, one replica by default, a non-empty selector matching the template's
//! labels, templates whose pods run forever, the `status` and `scale` subresources (the Scale's
//! selector printed from the label map), the `status.replicas` field selector, and `kubectl
//! get replicationcontrollers`' columns.
//!
//! No controller runs: a ReplicationController creates no pods.

use std::sync::Arc;

use serde_json::{json, Value};

use super::podspec::default_pod_spec;
use crate::controllers::simulated;
use crate::error::{field, StatusCause};
use crate::registry::apiextensions::SelectorFormat;
use crate::registry::apps::replicaset::{replica_columns, validate_status};
use crate::registry::apps::workload::{
    self, always_running_template, format_labels, nonnegative_fields, Rules, Workload,
};
use crate::registry::builtin;
use crate::registry::pointer::Pointer;
use crate::registry::resource::ApiResource;

/// The served resource.
pub fn resource() -> ApiResource {
    let rules = Rules::new(
        defaults,
        || json!({"replicas": 0}),
        validate,
        |obj, _| validate(obj),
    )
    .reconciled_by(simulated::Workload::ReplicationController);
    builtin::kind(
        "",
        "v1",
        "replicationcontrollers",
        Arc::new(Workload(rules)),
    )
    .scale(workload::scale(SelectorFormat::Map))
    .part("status", workload::status(false, validate_status))
    .with(|r| {
        r.field_selectors(&["metadata.name", "metadata.namespace", "status.replicas|0"])
            .table(replica_columns(|rc| {
                json!(format_labels(&rc["spec"]["selector"]))
            }))
    })
    .build()
}

/// `SetDefaults_ReplicationController` and the template's pod spec defaults.
fn defaults(obj: &mut Value) {
    let labels = obj
        .at("/spec/template/metadata/labels")
        .filter(|l| l.is_object())
        .cloned();
    if let Some(labels) = labels {
        let empty = |v: Option<&Value>| v.and_then(Value::as_object).is_none_or(|m| m.is_empty());
        if empty(obj["spec"].get("selector")) {
            obj["spec"]["selector"] = labels.clone();
        }
        if empty(obj["metadata"].get("labels")) {
            obj["metadata"]["labels"] = labels;
        }
    }
    if let Some(pod_spec) = obj.at_mut("/spec/template/spec") {
        default_pod_spec(pod_spec);
    }
}

/// `ValidateReplicationControllerSpec`.
fn validate(obj: &Value) -> Vec<StatusCause> {
    let spec = &obj["spec"];
    let mut errs = nonnegative_fields(obj, &[("/spec/minReadySeconds", "spec.minReadySeconds")]);
    let selector = spec["selector"].as_object().filter(|m| !m.is_empty());
    if selector.is_none() {
        errs.push(field::required("spec.selector", ""));
    }
    match spec.get("replicas").filter(|r| !r.is_null()) {
        None => errs.push(field::required("spec.replicas", "")),
        Some(_) => errs.extend(nonnegative_fields(
            obj,
            &[("/spec/replicas", "spec.replicas")],
        )),
    }
    let template = &spec["template"];
    if !template.is_object() {
        errs.push(field::required("spec.template", ""));
        return errs;
    }
    if let Some(selector) = selector {
        let labels = &template["metadata"]["labels"];
        let matches = selector
            .iter()
            .all(|(k, v)| labels.get(k).and_then(Value::as_str) == v.as_str());
        if !matches {
            errs.push(workload::selector_mismatch(labels));
        }
    }
    always_running_template(spec, "ReplicationController", &mut errs);
    errs
}
