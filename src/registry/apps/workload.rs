//! What the workload kinds (Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs, and the
//! core ReplicationControllers) share: the registry strategy shape (status reset on create and
//! kept on updates, `metadata.generation` following the spec, a `status` subresource that
//! keeps the spec), the template checks of controllers that run pods forever, the label
//! selector checks, and the cells `kubectl get` prints for them.

use std::sync::Arc;

use serde_json::{json, Value};

use crate::controllers::{simulated, Work};
use crate::error::{field, StatusCause};
pub use crate::machinery::selector::{format_label_selector, format_labels};
use crate::registry::apiextensions::{ScaleSubresource, SelectorFormat};
use crate::registry::core::podspec::validate_pod_template_spec;
use crate::registry::object_meta::NameRule;
use crate::registry::pointer::Pointer;
use crate::registry::strategy::{bump_generation, Strategy};
use crate::registry::validation::{
    label_selector_errors, selector_is_empty, selector_json, selector_matches,
};
use crate::store::StoredObject;

/// A workload kind's own rules, plugged into [`Workload`].
pub struct Rules {
    /// How names are validated (StatefulSets: DNS labels).
    pub name_rule: NameRule,
    /// The kind's `SetDefaults_*`.
    pub defaults: fn(&mut Value),
    /// The status a create starts with (Go's zero status, as it encodes).
    pub empty_status: fn() -> Value,
    /// Create validation.
    pub validate: fn(&Value) -> Vec<StatusCause>,
    /// Update validation, given the stored object.
    pub validate_update: fn(&Value, &Value) -> Vec<StatusCause>,
    /// Extra preparation on create (after the status reset).
    pub prepare_create: fn(&mut Value),
    /// Extra preparation on update (after status and generation).
    pub prepare_update: fn(&mut Value, &Value),
    /// Whether annotation changes bump the generation too (Deployments).
    pub annotations_bump_generation: bool,
    /// The simulated controller that reconciles the kind, if there is one (it runs only when
    /// the server simulates a cluster).
    pub controller: Option<crate::controllers::simulated::Workload>,
}

impl Rules {
    /// Rules with no extra preparation.
    pub const fn new(
        defaults: fn(&mut Value),
        empty_status: fn() -> Value,
        validate: fn(&Value) -> Vec<StatusCause>,
        validate_update: fn(&Value, &Value) -> Vec<StatusCause>,
    ) -> Rules {
        Rules {
            name_rule: NameRule::Subdomain,
            defaults,
            empty_status,
            validate,
            validate_update,
            prepare_create: |_| {},
            prepare_update: |_, _| {},
            annotations_bump_generation: false,
            controller: None,
        }
    }

    /// These rules, reconciled by `controller` in a simulated cluster.
    pub const fn reconciled_by(
        mut self,
        controller: crate::controllers::simulated::Workload,
    ) -> Rules {
        self.controller = Some(controller);
        self
    }
}

/// The main resource's strategy of a workload kind.
pub struct Workload(pub Rules);

impl Strategy for Workload {
    fn name_rule(&self) -> NameRule {
        self.0.name_rule
    }

    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn defaults(&self, obj: &mut Value) {
        (self.0.defaults)(obj);
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        obj["status"] = (self.0.empty_status)();
        (self.0.prepare_create)(obj);
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
        (self.0.prepare_update)(obj, old);
        let annotations_changed = self.0.annotations_bump_generation
            && obj["metadata"].get("annotations") != old["metadata"].get("annotations");
        if annotations_changed && !crate::registry::strategy::spec_changed(obj, old, true) {
            let next = old["metadata"]["generation"].as_i64().unwrap_or(0) + 1;
            obj["metadata"]["generation"] = json!(next);
        } else {
            bump_generation(obj, old, true);
        }
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        (self.0.validate)(obj)
    }

    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        (self.0.validate_update)(obj, old)
    }

    /// The kind's simulated controller looks at it, and so does its owner's.
    fn after_commit(&self, obj: &StoredObject) -> Vec<Work> {
        self.0
            .controller
            .map(|c| simulated::workload_changed(c, obj))
            .unwrap_or_default()
    }

    /// Its owner's controller notices it went.
    fn after_remove(&self, obj: &StoredObject) -> Vec<Work> {
        simulated::owner_work(&obj.value()).into_iter().collect()
    }
}

/// A workload's `status` subresource: the status and metadata from the request, the spec as
/// stored (and the labels too, for kinds that say so).
pub struct WorkloadStatus {
    /// Whether the stored labels are kept (Deployments).
    pub keep_labels: bool,
    /// Status validation, given the stored object.
    pub validate: fn(&Value, &Value) -> Vec<StatusCause>,
}

impl Strategy for WorkloadStatus {
    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        match old.get("spec") {
            Some(s) => obj["spec"] = s.clone(),
            None => {
                if let Some(m) = obj.as_object_mut() {
                    m.remove("spec");
                }
            }
        }
        if self.keep_labels {
            match old["metadata"].get("labels") {
                Some(l) => obj["metadata"]["labels"] = l.clone(),
                None => {
                    if let Some(m) = obj["metadata"].as_object_mut() {
                        m.remove("labels");
                    }
                }
            }
        }
    }

    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        (self.validate)(obj, old)
    }
}

/// A status subresource's strategy.
pub fn status(
    keep_labels: bool,
    validate: fn(&Value, &Value) -> Vec<StatusCause>,
) -> Arc<dyn Strategy> {
    Arc::new(WorkloadStatus {
        keep_labels,
        validate,
    })
}

/// The `scale` subresource of a kind with `spec.replicas`, `status.replicas` and a
/// `spec.selector` label selector.
pub fn scale(selector: SelectorFormat) -> ScaleSubresource {
    ScaleSubresource {
        spec_replicas_path: ".spec.replicas".into(),
        status_replicas_path: ".status.replicas".into(),
        label_selector_path: Some(".spec.selector".into()),
        selector_format: selector,
        validates_scale: true,
    }
}

/// `ValidateNonnegativeField` for each of these `(pointer, path)` pairs.
pub fn nonnegative_fields(obj: &Value, fields: &[(&str, &str)]) -> Vec<StatusCause> {
    fields
        .iter()
        .flat_map(|(pointer, path)| crate::registry::validation::nonnegative(obj, pointer, path))
        .collect()
}

/// The checks of a required `spec.selector` of the apps kinds: present, valid, not empty
/// (`empty selector is invalid for <kind>`), then the template's labels matched by it.
/// Returns whether the selector parsed (the template is validated only then).
pub fn selector_and_template_labels(spec: &Value, what: &str, errs: &mut Vec<StatusCause>) -> bool {
    let selector = &spec["selector"];
    if !selector.is_object() {
        errs.push(field::required("spec.selector", ""));
    } else {
        errs.extend(label_selector_errors(selector, "spec.selector", false));
        if selector_is_empty(selector) {
            errs.push(selector_invalid(
                selector,
                &format!("empty selector is invalid for {what}"),
            ));
        }
    }
    let labels = spec.at("/template/metadata/labels").unwrap_or(&Value::Null);
    match selector_matches(selector, labels) {
        None => {
            let detail = if what == "statefulset" {
                ""
            } else {
                "invalid label selector"
            };
            errs.push(selector_invalid(selector, detail));
            false
        }
        Some(matches) => {
            let everything = selector.is_object() && selector_is_empty(selector);
            if !(matches || everything) {
                errs.push(selector_mismatch(labels));
            }
            true
        }
    }
}

/// `spec.selector: Invalid value: <the selector as Go prints it>[: detail]`.
pub fn selector_invalid(selector: &Value, detail: &str) -> StatusCause {
    let mut message = format!("Invalid value: {}", selector_json(selector));
    if !detail.is_empty() {
        message.push_str(": ");
        message.push_str(detail);
    }
    StatusCause {
        reason: "FieldValueInvalid".into(),
        message,
        field: "spec.selector".into(),
    }
}

/// `Unsupported value: <raw>: supported values: ...` where the value is printed as Go prints
/// it (`{"Type":"Foo","RollingUpdate":null}` for an internal struct without JSON tags).
pub fn not_supported_raw(path: &str, raw: &str, supported: &[&str]) -> StatusCause {
    let mut cause = field::not_supported(path, &json!(""), supported);
    cause.message = cause.message.replacen("\"\"", raw, 1);
    cause
}

/// An update strategy as Go prints the internal struct: `{"Type":...,"RollingUpdate":...}`.
pub fn go_strategy(kind: &str, rolling: &Value) -> String {
    let rolling = if rolling.is_null() {
        "null".to_string()
    } else {
        rolling.to_string()
    };
    format!("{{\"Type\":{kind:?},\"RollingUpdate\":{rolling}}}")
}

/// `` `selector` does not match template `labels` ``.
pub fn selector_mismatch(labels: &Value) -> StatusCause {
    let shown = if labels.is_object() {
        labels.clone()
    } else {
        json!({})
    };
    field::invalid(
        "spec.template.metadata.labels",
        &shown,
        "`selector` does not match template `labels`",
    )
    .with_raw_value(&if labels.is_object() {
        shown.to_string()
    } else {
        "null".into()
    })
}

/// The template of a controller whose pods run forever: the pod template's checks, then
/// `restartPolicy: Always` and no `activeDeadlineSeconds` (`<kind> is not Supported`).
pub fn always_running_template(spec: &Value, kind: &str, errs: &mut Vec<StatusCause>) {
    let template = &spec["template"];
    errs.extend(validate_pod_template_spec(template, "spec.template"));
    errs.extend(restart_always(template, kind));
}

/// `restartPolicy: Always` and no `activeDeadlineSeconds` in a template.
pub fn restart_always(template: &Value, kind: &str) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let policy = template
        .at("/spec/restartPolicy")
        .and_then(Value::as_str)
        .unwrap_or("");
    if policy != "Always" {
        errs.push(field::not_supported(
            "spec.template.spec.restartPolicy",
            &json!(policy),
            &["Always"],
        ));
    }
    if template
        .at("/spec/activeDeadlineSeconds")
        .is_some_and(|v| !v.is_null())
    {
        errs.push(field::forbidden(
            "spec.template.spec.activeDeadlineSeconds",
            &format!("activeDeadlineSeconds in {kind} is not Supported"),
        ));
    }
    errs
}

/// Whether a value is one of Go's `IntOrString` forms that `IsValidPercent` accepts or an int.
fn percent_value(v: &Value) -> Option<i64> {
    match v {
        Value::String(s) => s
            .strip_suffix('%')
            .filter(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            .and_then(|n| n.parse().ok()),
        _ => None,
    }
}

/// `getIntOrPercentValue`.
pub fn int_or_percent(v: &Value) -> i64 {
    percent_value(v).unwrap_or_else(|| v.as_i64().unwrap_or(0))
}

/// `ValidatePositiveIntOrPercent`.
pub fn positive_int_or_percent(v: &Value, path: &str) -> Vec<StatusCause> {
    match v {
        Value::String(s) if percent_value(v).is_none() => vec![field::invalid(
            path,
            &json!(s),
            "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')",
        )],
        Value::Number(n) if n.as_i64().unwrap_or(0) < 0 => vec![field::invalid(
            path,
            v,
            "must be greater than or equal to 0",
        )],
        _ => Vec::new(),
    }
}

/// `IsNotMoreThan100Percent`.
pub fn not_more_than_100_percent(v: &Value, path: &str) -> Vec<StatusCause> {
    match percent_value(v) {
        Some(p) if p > 100 => vec![field::invalid(path, v, "must not be greater than 100%")],
        _ => Vec::new(),
    }
}

/// `cannot be greater than status.replicas` and friends, for the status counters a kind has.
pub fn replica_counters(
    status: &Value,
    within_replicas: &[&str],
    available_vs_ready: Option<&str>,
) -> Vec<StatusCause> {
    let n = |k: &str| status[k].as_i64().unwrap_or(0);
    let mut errs = Vec::new();
    for key in within_replicas {
        if n(key) > n("replicas") {
            errs.push(field::invalid(
                &format!("status.{key}"),
                &json!(n(key)),
                "cannot be greater than status.replicas",
            ));
        }
    }
    if let Some(msg) = available_vs_ready {
        if n("availableReplicas") > n("readyReplicas") {
            errs.push(field::invalid(
                "status.availableReplicas",
                &json!(n("availableReplicas")),
                msg,
            ));
        }
    }
    errs
}

/// `status.collisionCount` may not go down.
pub fn collision_count_kept(obj: &Value, old: &Value) -> Vec<StatusCause> {
    let new = obj["status"]["collisionCount"].as_i64();
    let before = old["status"]["collisionCount"].as_i64();
    match (new, before) {
        (n, Some(o)) if n.unwrap_or(0) < o || n.is_none() => vec![field::invalid(
            "status.collisionCount",
            &json!(n.unwrap_or(0)),
            "cannot be decremented",
        )],
        _ => Vec::new(),
    }
}

// ---------------------------------------------------------------------------------------------
// Printing
// ---------------------------------------------------------------------------------------------

/// `layoutContainerCells`: the containers' names and images, comma-separated.
pub fn container_cells(template: &Value) -> (String, String) {
    let containers: Vec<&Value> = template
        .at("/spec/containers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .collect();
    let join = |k: &str| {
        containers
            .iter()
            .map(|c| c[k].as_str().unwrap_or(""))
            .collect::<Vec<_>>()
            .join(",")
    };
    (join("name"), join("image"))
}

/// The Containers cell of a kind whose pod template is at `spec.template`.
pub fn containers_cell(obj: &Value) -> Value {
    json!(container_cells(&obj["spec"]["template"]).0)
}

/// The Images cell of a kind whose pod template is at `spec.template`.
pub fn images_cell(obj: &Value) -> Value {
    json!(container_cells(&obj["spec"]["template"]).1)
}

/// The Selector cell of a kind with a `spec.selector` label selector.
pub fn selector_cell(obj: &Value) -> Value {
    json!(format_label_selector(&obj["spec"]["selector"]))
}

/// An integer cell read at a JSON pointer (0 when absent).
pub fn int_at(obj: &Value, pointer: &str) -> i64 {
    obj.at(pointer).and_then(Value::as_i64).unwrap_or(0)
}
