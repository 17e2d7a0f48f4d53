//! The core/v1 Pod kind: the pod spec's defaults and validation ([`super::podspec`]), `Pending`
//! and the QoS class on create, a spec that may only change its images, active deadline,
//! tolerations (additions) and scheduling gates (removals), `metadata.generation` that follows
//! the spec, the `status`, `ephemeralcontainers` and `resize` subresources, `binding` (what the
//! scheduler does: sets `spec.nodeName` and the `PodScheduled` condition) and `eviction`
//! (deletes the pod, marked `DisruptionTarget`), the field selectors of `kubectl get
//! --field-selector`, and `kubectl get pods`' columns.
//!
//! kubefake runs no kubelet and no containers: pods stay `Pending` until a client writes their
//! status; `log`, `exec`, `attach`, `portforward` and `proxy` answer with a 400 `Status` that
//! says so; a DELETE removes a pod at once whatever its `gracePeriodSeconds` (a real cluster
//! waits for the kubelet), unless finalizers hold it. In a simulated cluster
//! ([`crate::controllers::simulated`]) a scheduled pod's DELETE is graceful, as the apiserver's:
//! the pod stays, terminating, until its kubelet stops it. Evictions do not consult
//! PodDisruptionBudgets yet. The 422 of a forbidden spec change lists the changed fields, not
//! Go's struct diff.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::{json, Value};

use super::podspec::{default_pod_only, default_pod_spec, pod_spec_errors, qos_class};
use crate::context::Context;
use crate::controllers::storage_protection::{claims_gr, claims_of, pod_finished};
use crate::controllers::{simulated, Work};
use crate::error::{field, ApiError, StatusCause};
use crate::registry::builtin;
use crate::registry::object_meta::{meta_str, name_errors, now_rfc3339, NameRule};
use crate::registry::pointer::Pointer;
use crate::registry::resource::{Action, ActionCall, ApiResource, Stream, StreamKind, Subresource};
use crate::registry::store::{
    self as rest, DeleteOptions, Deleted, Propagation, Target, UpdateSource,
};
use crate::registry::strategy::{bump_generation, keep_only_status, Strategy};
use crate::registry::table::{age, Column, Columns};
use crate::store::{ObjectKey, StoredObject};

/// The fields pods may be selected by (`ToSelectableFields`).
pub const FIELD_SELECTORS: &[&str] = &[
    "metadata.name",
    "metadata.namespace",
    "spec.nodeName",
    "spec.restartPolicy",
    "spec.schedulerName",
    "spec.serviceAccountName",
    "spec.hostNetwork|false",
    "status.phase",
    "status.podIP",
    "status.nominatedNodeName",
];

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind("", "v1", "pods", Arc::new(PodStrategy))
        .action("attach", Arc::new(NoContainers::Attach))
        .action("binding", Arc::new(Binding))
        .part("ephemeralcontainers", Arc::new(EphemeralContainersStrategy))
        .action("eviction", Arc::new(Eviction))
        .action("exec", Arc::new(NoContainers::Exec))
        .action("log", Arc::new(NoContainers::Log))
        .action("portforward", Arc::new(NoContainers::PortForward))
        .action("proxy", Arc::new(NoContainers::Proxy))
        .part("resize", Arc::new(ResizeStrategy))
        .part("status", Arc::new(PodStatusStrategy))
        .with(|r| {
            r.field_selectors(FIELD_SELECTORS)
                .table(columns())
                .delete_returns_object()
        })
        .build()
}

/// `kubectl get pods` (`-o wide` adds IP, node, nominated node and readiness gates).
fn columns() -> Columns {
    Columns::new(vec![
        Column::name(),
        Column::computed(
            "Ready",
            "string",
            0,
            "The aggregate readiness state of this pod for accepting traffic.",
            |p| json!(printed(p).ready),
        ),
        Column::computed(
            "Status",
            "string",
            0,
            "The aggregate status of the containers in this pod.",
            |p| json!(printed(p).reason),
        ),
        Column::computed(
            "Restarts",
            "string",
            0,
            "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.",
            |p| json!(printed(p).restarts),
        ),
        Column::age("string"),
        Column::computed("IP", "string", 1, "", |p| {
            json!(or_none(text_at(p, "/status/podIPs/0/ip")))
        }),
        Column::computed("Node", "string", 1, "", |p| {
            json!(or_none(text_at(p, "/spec/nodeName")))
        }),
        Column::computed("Nominated Node", "string", 1, "", |p| {
            json!(or_none(text_at(p, "/status/nominatedNodeName")))
        }),
        Column::computed("Readiness Gates", "string", 1, "", readiness_gates),
    ])
}

fn text_at<'a>(obj: &'a Value, pointer: &str) -> &'a str {
    obj.at(pointer).and_then(Value::as_str).unwrap_or("")
}

fn or_none(s: &str) -> &str {
    if s.is_empty() {
        "<none>"
    } else {
        s
    }
}

fn list<'a>(obj: &'a Value, pointer: &str) -> impl Iterator<Item = &'a Value> {
    obj.at(pointer)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
}

/// The Readiness Gates cell: how many of the gates' conditions are true.
fn readiness_gates(pod: &Value) -> Value {
    let gates: Vec<&str> = list(pod, "/spec/readinessGates")
        .map(|g| text_at(g, "/conditionType"))
        .collect();
    if gates.is_empty() {
        return json!("<none>");
    }
    let conditions: Vec<&Value> = list(pod, "/status/conditions").collect();
    let true_count = gates
        .iter()
        .filter(|g| {
            conditions
                .iter()
                .find(|c| text_at(c, "/type") == **g)
                .is_some_and(|c| text_at(c, "/status") == "True")
        })
        .count();
    json!(format!("{true_count}/{}", gates.len()))
}

/// What `printPod` computes for a pod's row.
struct Printed {
    ready: String,
    reason: String,
    restarts: String,
}

/// `printPod`: ready containers, the status reason (init progress, waiting and terminated
/// reasons, `Terminating`), restarts with the time of the last one.
fn printed(pod: &Value) -> Printed {
    let init_specs: Vec<&Value> = list(pod, "/spec/initContainers").collect();
    let sidecar = |name: &str| {
        init_specs
            .iter()
            .any(|c| text_at(c, "/name") == name && text_at(c, "/restartPolicy") == "Always")
    };
    let mut total = list(pod, "/spec/containers").count();
    total += init_specs
        .iter()
        .filter(|c| text_at(c, "/restartPolicy") == "Always")
        .count();
    let mut reason = text_at(pod, "/status/phase").to_string();
    if !text_at(pod, "/status/reason").is_empty() {
        reason = text_at(pod, "/status/reason").to_string();
    }
    let conditions: Vec<&Value> = list(pod, "/status/conditions").collect();
    if conditions.iter().any(|c| {
        text_at(c, "/type") == "PodScheduled" && text_at(c, "/reason") == "SchedulingGated"
    }) {
        reason = "SchedulingGated".into();
    }
    let mut ready = 0;
    let mut restarts = 0;
    let mut last_restart = String::new();
    let mut sidecar_restarts = 0;
    let mut last_sidecar_restart = String::new();
    let mut initializing = false;
    let statuses: Vec<&Value> = list(pod, "/status/initContainerStatuses").collect();
    for (i, status) in statuses.iter().enumerate() {
        let count = status["restartCount"].as_i64().unwrap_or(0);
        restarts += count;
        let finished = text_at(status, "/lastState/terminated/finishedAt");
        latest(&mut last_restart, finished);
        let is_sidecar = sidecar(text_at(status, "/name"));
        if is_sidecar {
            sidecar_restarts += count;
            latest(&mut last_sidecar_restart, finished);
        }
        let terminated = status.at("/state/terminated");
        let waiting_reason = text_at(status, "/state/waiting/reason");
        if terminated.is_some_and(|t| t["exitCode"].as_i64().unwrap_or(0) == 0) {
            continue;
        }
        if is_sidecar && status["started"] == true {
            if status["ready"] == true {
                ready += 1;
            }
            continue;
        }
        initializing = true;
        reason = match terminated {
            Some(t) => init_terminated_reason(t),
            None if !waiting_reason.is_empty() && waiting_reason != "PodInitializing" => {
                format!("Init:{waiting_reason}")
            }
            None => format!("Init:{i}/{}", init_specs.len()),
        };
        break;
    }
    let initialized = conditions
        .iter()
        .find(|c| text_at(c, "/type") == "Initialized")
        .is_some_and(|c| text_at(c, "/status") == "True");
    if !initializing || initialized {
        restarts = sidecar_restarts;
        last_restart = last_sidecar_restart;
        let (r, running_ready) = container_reason(pod, reason, &mut restarts, &mut last_restart);
        reason = r;
        ready += running_ready;
    }
    let deleting = pod["metadata"].get("deletionTimestamp").is_some();
    let phase = text_at(pod, "/status/phase");
    if deleting && text_at(pod, "/status/reason") == "NodeLost" {
        reason = "Unknown".into();
    } else if deleting && phase != "Succeeded" && phase != "Failed" {
        reason = "Terminating".into();
    }
    let restarts = if restarts != 0 && !last_restart.is_empty() {
        format!("{restarts} ({} ago)", age(Some(&last_restart)))
    } else {
        restarts.to_string()
    };
    Printed {
        ready: format!("{ready}/{total}"),
        reason,
        restarts,
    }
}

/// Keeps the later of two RFC 3339 times in `acc`.
fn latest(acc: &mut String, candidate: &str) {
    if !candidate.is_empty() && candidate > acc.as_str() {
        *acc = candidate.to_string();
    }
}

fn init_terminated_reason(t: &Value) -> String {
    let reason = text_at(t, "/reason");
    if !reason.is_empty() {
        return format!("Init:{reason}");
    }
    match t["signal"].as_i64().unwrap_or(0) {
        0 => format!("Init:ExitCode:{}", t["exitCode"].as_i64().unwrap_or(0)),
        s => format!("Init:Signal:{s}"),
    }
}

/// The regular containers' part of `printPod`: their reasons (last container first) and
/// restarts; returns the reason and how many are ready and running.
fn container_reason(
    pod: &Value,
    mut reason: String,
    restarts: &mut i64,
    last_restart: &mut String,
) -> (String, usize) {
    let mut ready = 0;
    let mut has_running = false;
    let mut error_reason = String::new();
    let statuses: Vec<&Value> = list(pod, "/status/containerStatuses").collect();
    for status in statuses.iter().rev() {
        *restarts += status["restartCount"].as_i64().unwrap_or(0);
        latest(
            last_restart,
            text_at(status, "/lastState/terminated/finishedAt"),
        );
        let waiting = text_at(status, "/state/waiting/reason");
        if !waiting.is_empty() {
            reason = waiting.to_string();
        } else if let Some(t) = status.at("/state/terminated") {
            let exit = t["exitCode"].as_i64().unwrap_or(0);
            reason = match (text_at(t, "/reason"), t["signal"].as_i64().unwrap_or(0)) {
                (r, _) if !r.is_empty() => r.to_string(),
                (_, 0) => format!("ExitCode:{exit}"),
                (_, s) => format!("Signal:{s}"),
            };
            if exit != 0 {
                error_reason = reason.clone();
            }
        } else if status["ready"] == true && status.at("/state/running").is_some() {
            has_running = true;
            ready += 1;
        }
    }
    if reason == "Completed" {
        let pod_ready = list(pod, "/status/conditions")
            .any(|c| text_at(c, "/type") == "Ready" && text_at(c, "/status") == "True");
        if has_running && pod_ready {
            reason = "Running".into();
        } else if !error_reason.is_empty() {
            reason = error_reason;
        } else if has_running {
            reason = "NotReady".into();
        }
    }
    (reason, ready)
}

// ---------------------------------------------------------------------------------------------
// The strategy
// ---------------------------------------------------------------------------------------------

/// core/v1 Pod.
pub struct PodStrategy;

/// `status.podIP` and `status.podIPs` (and the host IPs) agree, as conversion makes them: the
/// singular field wins when both are set and differ.
fn sync_ips(status: &mut Value) {
    for (one, many) in [("podIP", "podIPs"), ("hostIP", "hostIPs")] {
        let single = status[one].as_str().unwrap_or("").to_string();
        let first = status
            .at(&format!("/{many}/0/ip"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        if !single.is_empty() && single != first {
            status[many] = json!([{"ip": single}]);
        } else if single.is_empty() && !first.is_empty() {
            status[one] = json!(first);
        }
    }
}

impl Strategy for PodStrategy {
    /// `CheckGracefulDelete`: the requested grace period, else the pod's
    /// `terminationGracePeriodSeconds` (30); none for a pod no node runs or one that finished.
    fn graceful_delete(&self, obj: &Value, requested: Option<i64>) -> Option<i64> {
        let scheduled = !obj["spec"]["nodeName"].as_str().unwrap_or("").is_empty();
        if !scheduled || pod_finished(obj) {
            return None;
        }
        let spec = obj["spec"]["terminationGracePeriodSeconds"].as_i64();
        requested.or(spec).or(Some(30)).filter(|g| *g > 0)
    }

    /// A pod that finished frees its claims; any change may change the endpoints of the
    /// Services that select it; in a simulated cluster, the scheduler or kubelet takes its next
    /// step and its controller looks at it.
    fn after_commit(&self, obj: &StoredObject) -> Vec<Work> {
        let mut work = simulated::pod_changed(obj);
        if pod_finished(&obj.value()) {
            work.extend(claims_work(&obj.value()));
        }
        work.push(services_work(&obj.value()));
        work
    }

    /// A pod that went frees its claims, leaves the endpoints of the Services that listed it,
    /// and its controller notices.
    fn after_remove(&self, obj: &StoredObject) -> Vec<Work> {
        let mut work = claims_work(&obj.value());
        work.push(services_work(&obj.value()));
        work.extend(simulated::owner_work(&obj.value()));
        work.push(Work::Simulated(simulated::Sim::RetryUnschedulable));
        work
    }
    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn defaults(&self, obj: &mut Value) {
        if let Some(spec) = obj.get_mut("spec") {
            default_pod_only(spec);
            default_pod_spec(spec);
        }
        if let Some(status) = obj.get_mut("status").filter(|s| s.is_object()) {
            sync_ips(status);
        }
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        let qos = qos_class(&obj["spec"]);
        obj["status"] = json!({"phase": "Pending", "qosClass": qos});
        if list(obj, "/spec/schedulingGates").next().is_some() {
            obj["status"]["conditions"] = json!([{
                "type": "PodScheduled",
                "status": "False",
                "lastProbeTime": null,
                "lastTransitionTime": now_rfc3339(),
                "reason": "SchedulingGated",
                "message": "Scheduling is blocked due to non-empty scheduling gates",
            }]);
        }
    }

    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        match old.get("status") {
            Some(s) => obj["status"] = s.clone(),
            None => {
                if let Some(o) = obj.as_object_mut() {
                    o.remove("status");
                }
            }
        }
        bump_generation(obj, old, true);
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        let mut errs = validate_pod(obj);
        if list(obj, "/spec/ephemeralContainers").next().is_some() {
            errs.push(field::forbidden(
                "spec.ephemeralContainers",
                "cannot be set on create",
            ));
        }
        let gated = list(obj, "/spec/schedulingGates").next().is_some();
        if gated && !text_at(obj, "/spec/nodeName").is_empty() {
            errs.push(field::forbidden(
                "spec.nodeName",
                "cannot be set until all schedulingGates have been cleared",
            ));
        }
        errs
    }

    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        let mut errs = validate_pod(obj);
        errs.extend(spec_update_errors(&obj["spec"], &old["spec"]));
        errs
    }

    fn warnings_on_create(&self, obj: &Value) -> Vec<String> {
        let name = meta_str(obj, "name");
        let msgs = name_errors(name, NameRule::Label);
        if msgs.is_empty() {
            return Vec::new();
        }
        vec![format!(
            "metadata.name: this is used in the Pod's hostname, which can result in surprising behavior; a DNS label is recommended: [{}]",
            msgs.join(" ")
        )]
    }
}

/// `validatePodMetadataAndSpec`: the spec, and what only pods (not templates) are held to.
fn validate_pod(obj: &Value) -> Vec<StatusCause> {
    let spec = &obj["spec"];
    let mut errs = pod_spec_errors(spec, "spec");
    if text_at(spec, "/serviceAccountName").is_empty() {
        for (vi, volume) in list(spec, "/volumes").enumerate() {
            for (si, source) in list(volume, "/projected/sources").enumerate() {
                if source
                    .get("serviceAccountToken")
                    .is_some_and(|t| !t.is_null())
                {
                    errs.push(field::forbidden(
                        &format!("spec.volumes[{vi}].projected.sources[{si}].serviceAccountToken"),
                        "must not be specified when serviceAccountName is not set",
                    ));
                }
            }
        }
    }
    for kind in ["containers", "initContainers"] {
        for (i, c) in list(spec, &format!("/{kind}")).enumerate() {
            let image = text_at(c, "/image");
            if image.len() != image.trim().len() {
                errs.push(field::invalid(
                    &format!("spec.{kind}[{i}].image"),
                    &json!(image),
                    "must not have leading or trailing whitespace",
                ));
            }
        }
    }
    errs
}

/// The fields a pod update may change (`updatablePodSpecFields`), as the 422 lists them.
const UPDATABLE: &str = "`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)";

/// `ValidatePodUpdate`'s rules for the spec: the same containers, a lower active deadline,
/// tolerations only added, scheduling gates only removed, and nothing else changed.
fn spec_update_errors(new: &Value, old: &Value) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    for kind in ["containers", "initContainers"] {
        let n: Vec<&Value> = list(new, &format!("/{kind}")).collect();
        let o = list(old, &format!("/{kind}")).count();
        if n.len() != o {
            errs.push(field::forbidden(
                &format!("spec.{kind}"),
                "pod updates may not add or remove containers",
            ));
            return errs;
        }
    }
    if let Some(e) = deadline_error(new, old) {
        errs.push(e);
        return errs;
    }
    errs.extend(toleration_update_errors(new, old));
    errs.extend(gate_update_errors(new, old));
    if new == old {
        return errs;
    }
    let munged = munged_spec(new, old);
    if munged != *old {
        let mut changed = Vec::new();
        diff_paths("spec", old, &munged, &mut changed);
        errs.push(field::forbidden(
            "spec",
            &format!(
                "pod updates may not change fields other than {UPDATABLE}\n{}",
                changed.join("\n")
            ),
        ));
    }
    errs
}

/// The active deadline may only appear or shrink.
fn deadline_error(new: &Value, old: &Value) -> Option<StatusCause> {
    let new_v = new["activeDeadlineSeconds"].as_i64();
    let old_v = old["activeDeadlineSeconds"].as_i64();
    match (new_v, old_v) {
        (Some(n), _) if !(0..=i64::from(i32::MAX)).contains(&n) => Some(field::invalid(
            "spec.activeDeadlineSeconds",
            &json!(n),
            "must be between 0 and 2147483647, inclusive",
        )),
        (Some(n), Some(o)) if o < n => Some(field::invalid(
            "spec.activeDeadlineSeconds",
            &json!(n),
            "must be less than or equal to previous value",
        )),
        (None, Some(_)) => Some(field::invalid(
            "spec.activeDeadlineSeconds",
            &Value::Null,
            "must not update from a positive integer to nil value",
        )),
        _ => None,
    }
}

/// Existing tolerations stay (only their `tolerationSeconds` may change).
fn toleration_update_errors(new: &Value, old: &Value) -> Vec<StatusCause> {
    let strip = |t: &Value| {
        let mut t = t.clone();
        if let Some(m) = t.as_object_mut() {
            m.remove("tolerationSeconds");
        }
        t
    };
    let new_list: Vec<Value> = list(new, "/tolerations").map(strip).collect();
    for o in list(old, "/tolerations") {
        if !new_list.contains(&strip(o)) {
            return vec![field::forbidden(
                "spec.tolerations",
                "existing toleration can not be modified except its tolerationSeconds",
            )];
        }
    }
    Vec::new()
}

/// Scheduling gates may only be removed.
fn gate_update_errors(new: &Value, old: &Value) -> Vec<StatusCause> {
    let old_names: Vec<&str> = list(old, "/schedulingGates")
        .map(|g| text_at(g, "/name"))
        .collect();
    list(new, "/schedulingGates")
        .enumerate()
        .filter(|(_, g)| !old_names.contains(&text_at(g, "/name")))
        .map(|(i, g)| {
            field::forbidden(
                &format!("spec.schedulingGates[{i}].name"),
                &format!(
                    "only deletion is allowed, but found new scheduling gate '{}'",
                    text_at(g, "/name")
                ),
            )
        })
        .collect()
}

/// The new spec with what may change taken from the old one.
fn munged_spec(new: &Value, old: &Value) -> Value {
    let mut munged = new.clone();
    for kind in ["containers", "initContainers"] {
        let old_images: Vec<Value> = list(old, &format!("/{kind}"))
            .map(|c| c["image"].clone())
            .collect();
        if let Some(items) = munged.get_mut(kind).and_then(Value::as_array_mut) {
            for (c, image) in items.iter_mut().zip(old_images) {
                c["image"] = image;
            }
        }
    }
    for key in ["activeDeadlineSeconds", "schedulingGates", "tolerations"] {
        match old.get(key) {
            Some(v) => munged[key] = v.clone(),
            None => {
                if let Some(m) = munged.as_object_mut() {
                    m.remove(key);
                }
            }
        }
    }
    let old_grace = old["terminationGracePeriodSeconds"].as_i64().unwrap_or(0);
    if old_grace < 0 && munged["terminationGracePeriodSeconds"] == 1 {
        munged["terminationGracePeriodSeconds"] = json!(old_grace);
    }
    if !old["schedulingGates"].is_null() && munged.get("nodeSelector") != old.get("nodeSelector") {
        let added_only = old["nodeSelector"]
            .as_object()
            .into_iter()
            .flatten()
            .all(|(k, v)| munged["nodeSelector"].get(k) == Some(v));
        if added_only {
            munged["nodeSelector"] = old["nodeSelector"].clone();
        }
    }
    munged
}

/// The paths at which two JSON values differ, as `- path: old` / `+ path: new` lines.
fn diff_paths(path: &str, old: &Value, new: &Value, out: &mut Vec<String>) {
    match (old, new) {
        (Value::Object(a), Value::Object(b)) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                let (x, y) = (
                    a.get(k).unwrap_or(&Value::Null),
                    b.get(k).unwrap_or(&Value::Null),
                );
                diff_paths(&format!("{path}.{k}"), x, y, out);
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                diff_paths(&format!("{path}[{i}]"), x, y, out);
            }
        }
        _ if old != new => {
            out.push(format!("- {path}: {old}"));
            out.push(format!("+ {path}: {new}"));
        }
        _ => {}
    }
}

// ---------------------------------------------------------------------------------------------
// Subresources written as parts of the pod
// ---------------------------------------------------------------------------------------------

/// `pods/status`: the status (and the metadata but deletion and owners) from the request, the
/// spec as stored; the QoS class and observed generations a client leaves out are kept.
pub struct PodStatusStrategy;

impl Strategy for PodStatusStrategy {
    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        obj["spec"] = old["spec"].clone();
        for key in ["deletionTimestamp", "ownerReferences"] {
            match old["metadata"].get(key) {
                Some(v) => obj["metadata"][key] = v.clone(),
                None => {
                    if let Some(m) = obj["metadata"].as_object_mut() {
                        m.remove(key);
                    }
                }
            }
        }
        if !obj["status"].is_object() {
            obj["status"] = json!({});
        }
        for key in ["qosClass", "observedGeneration"] {
            if obj["status"].get(key).is_none() {
                if let Some(v) = old["status"].get(key) {
                    obj["status"][key] = v.clone();
                }
            }
        }
    }

    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        let mut errs = Vec::new();
        let phase = text_at(obj, "/status/phase");
        let old_phase = text_at(old, "/status/phase");
        let terminal = |p: &str| p == "Succeeded" || p == "Failed";
        if terminal(old_phase) && phase != old_phase {
            errs.push(field::forbidden(
                "status.phase",
                &format!("cannot transition from terminal phase {old_phase:?} to {phase:?}"),
            ));
        }
        errs
    }
}

/// `pods/ephemeralcontainers`: only `spec.ephemeralContainers` changes, and only by additions.
pub struct EphemeralContainersStrategy;

impl Strategy for EphemeralContainersStrategy {
    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        let added = obj["spec"].get("ephemeralContainers").cloned();
        keep_only_status(obj, old);
        obj["status"] = old["status"].clone();
        match added {
            Some(list) => obj["spec"]["ephemeralContainers"] = list,
            None => {
                if let Some(spec) = obj["spec"].as_object_mut() {
                    spec.remove("ephemeralContainers");
                }
            }
        }
        bump_generation(obj, old, true);
    }

    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        let mut errs = validate_pod(obj);
        let new_list: Vec<&Value> = list(obj, "/spec/ephemeralContainers").collect();
        for o in list(old, "/spec/ephemeralContainers") {
            let name = text_at(o, "/name");
            match new_list.iter().find(|n| text_at(n, "/name") == name) {
                None => errs.push(field::forbidden(
                    "spec.ephemeralContainers",
                    &format!("existing ephemeral containers {name:?} may not be removed\n"),
                )),
                Some(n) if *n != o => errs.push(field::forbidden(
                    "spec.ephemeralContainers",
                    &format!("existing ephemeral containers {name:?} may not be changed\n"),
                )),
                Some(_) => {}
            }
        }
        errs
    }
}

/// `pods/resize`: only the containers' `resources` and `resizePolicy` change.
pub struct ResizeStrategy;

impl Strategy for ResizeStrategy {
    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        let mut spec = old["spec"].clone();
        for kind in ["containers", "initContainers"] {
            let new_list: Vec<Value> = list(obj, &format!("/spec/{kind}")).cloned().collect();
            let same_shape = spec[kind].as_array().is_some_and(|o| {
                o.len() == new_list.len()
                    && o.iter().zip(&new_list).all(|(a, b)| a["name"] == b["name"])
            });
            if !same_shape {
                return;
            }
            if let Some(items) = spec.get_mut(kind).and_then(Value::as_array_mut) {
                for (c, n) in items.iter_mut().zip(&new_list) {
                    for key in ["resources", "resizePolicy"] {
                        match n.get(key) {
                            Some(v) => c[key] = v.clone(),
                            None => {
                                if let Some(m) = c.as_object_mut() {
                                    m.remove(key);
                                }
                            }
                        }
                    }
                }
            }
        }
        keep_only_status(obj, old);
        obj["status"] = old["status"].clone();
        obj["spec"] = spec;
        bump_generation(obj, old, true);
    }

    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        let mut errs = validate_pod(obj);
        if obj["spec"]["containers"].as_array().map(Vec::len)
            != old["spec"]["containers"].as_array().map(Vec::len)
        {
            errs.push(field::forbidden(
                "spec.containers",
                "pod updates may not add or remove containers",
            ));
        }
        errs
    }
}

/// A write the subresource code computed in full: nothing is reset, nothing else validated
/// (the apiserver's binding writes storage directly).
struct Computed;

impl Strategy for Computed {}

/// Writes `f(current pod)` as computed, as a controller would (no field manager recorded), or
/// only checks it in a dry run.
async fn write_computed(
    call: &ActionCall<'_>,
    sub: &str,
    f: &(dyn Fn(&Value) -> Result<Value, ApiError> + Sync),
) -> Result<(), ApiError> {
    let mut ctx: Context = call.ctx.for_controller("kube-apiserver");
    ctx.dry_run = call.ctx.dry_run;
    let part = Arc::new(Subresource::part(sub, &[], Arc::new(Computed)));
    rest::update(
        call.state,
        &ctx,
        call.res,
        call.namespace,
        call.name,
        Target::Part(part),
        UpdateSource::Patch(f),
    )
    .await
    .map(|_| ())
}

/// `UpdatePodCondition`: sets a condition, with a new transition time when its status changes.
fn set_condition(pod: &mut Value, condition: Value) {
    if !pod["status"].is_object() {
        pod["status"] = json!({});
    }
    let kind = condition["type"].clone();
    let mut condition = condition;
    if !pod["status"]["conditions"].is_array() {
        pod["status"]["conditions"] = json!([]);
    }
    let Some(conditions) = pod["status"]["conditions"].as_array_mut() else {
        return;
    };
    match conditions.iter_mut().find(|c| c["type"] == kind) {
        Some(existing) => {
            let keep_time = existing["status"] == condition["status"];
            for key in ["lastProbeTime", "lastTransitionTime"] {
                if keep_time || key == "lastProbeTime" {
                    condition[key] = existing.get(key).cloned().unwrap_or(Value::Null);
                }
            }
            if !keep_time {
                condition["lastTransitionTime"] = json!(now_rfc3339());
            }
            *existing = condition;
        }
        None => {
            condition["lastProbeTime"] = Value::Null;
            condition["lastTransitionTime"] = json!(now_rfc3339());
            conditions.push(condition);
        }
    }
}

/// The `Status` a successful binding or eviction answers with.
fn success() -> (u16, Value) {
    (
        201,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}),
    )
}

/// A non-`Status` error of a storage function, as the apiserver reports it: a 500 with no
/// reason (`StatusReasonUnknown` is the empty reason).
fn unknown(message: String) -> ApiError {
    ApiError::plain(message)
}

/// `pods/binding`: assigns the pod to a node, as the scheduler does.
struct Binding;

impl Action for Binding {
    fn body_kind(&self) -> Option<&'static str> {
        Some("Binding")
    }

    fn serve<'a>(&'a self, call: ActionCall<'a>) -> BoxFuture<'a, Result<(u16, Value), ApiError>> {
        Box::pin(async move {
            let body = call.body.clone().unwrap_or(Value::Null);
            if meta_str(&body, "name") != call.name {
                return Err(ApiError::bad_request(
                    "name in URL does not match name in Binding object",
                ));
            }
            bind(call, body).await
        })
    }
}

/// The core/v1 `bindings` resource: a create-only way to bind the pod the body names (the
/// scheduler's older one). The create handler drops the body's uid, so only its
/// resourceVersion is a precondition.
pub fn bindings_resource() -> ApiResource {
    builtin::kind("", "v1", "bindings", Arc::new(Computed))
        .with(|r| r.served_by(Arc::new(TopLevelBinding)))
        .build()
}

/// `POST /api/v1/namespaces/{ns}/bindings`.
struct TopLevelBinding;

impl Action for TopLevelBinding {
    fn body_kind(&self) -> Option<&'static str> {
        Some("Binding")
    }

    fn serve<'a>(&'a self, call: ActionCall<'a>) -> BoxFuture<'a, Result<(u16, Value), ApiError>> {
        Box::pin(async move {
            let mut body = call.body.clone().unwrap_or(Value::Null);
            if let Some(meta) = body["metadata"].as_object_mut() {
                meta.remove("uid");
            }
            let name = meta_str(&body, "name").to_string();
            let pods = crate::registry::builtin::kinds()
                .iter()
                .find(|k| k.group().is_empty() && k.plural() == "pods")
                .map(|k| k.resource().clone())
                .ok_or_else(|| ApiError::internal("pods are not served"))?;
            let call = ActionCall {
                res: &pods,
                name: &name,
                ..call
            };
            bind(call, body).await
        })
    }
}

/// What both bindings do once the pod is named: the target checked, the pod bound.
async fn bind(call: ActionCall<'_>, body: Value) -> Result<(u16, Value), ApiError> {
    let ns = meta_str(&body, "namespace");
    if !ns.is_empty() && ns != call.namespace {
        return Err(ApiError::bad_request(
            "the namespace of the provided object does not match the namespace sent on the request",
        ));
    }
    let target_kind = text_at(&body, "/target/kind");
    let node = text_at(&body, "/target/name").to_string();
    let mut errs: Vec<String> = Vec::new();
    if !target_kind.is_empty() && target_kind != "Node" {
        errs.push(format!(
            "target.kind: Unsupported value: {target_kind:?}: supported values: \"Node\", \"<empty>\""
        ));
    }
    if node.is_empty() {
        errs.push("target.name: Required value".into());
    }
    match errs.len() {
        0 => {}
        1 => return Err(unknown(errs.remove(0))),
        _ => return Err(unknown(format!("[{}]", errs.join(", ")))),
    }
    if call.name.is_empty() {
        return Err(ApiError::bad_request("Name parameter required."));
    }
    let assign = |pod: &Value| assign(pod, &body, &node, call.name);
    write_computed(&call, "binding", &assign).await?;
    Ok(success())
}

/// What the scheduler does: binds a pod to a node (the `pods/binding` write), as `ctx`'s user.
pub async fn bind_to_node(
    state: &crate::state::State,
    ctx: &Context,
    res: &ApiResource,
    namespace: &str,
    name: &str,
    node: &str,
) -> Result<(), ApiError> {
    let binding = json!({"metadata": {"name": name}, "target": {"kind": "Node", "name": node}});
    let assign = |pod: &Value| assign(pod, &binding, node, name);
    let part = Arc::new(Subresource::part("binding", &[], Arc::new(Computed)));
    rest::update(
        state,
        ctx,
        res,
        namespace,
        name,
        Target::Part(part),
        UpdateSource::Patch(&assign),
    )
    .await
    .map(|_| ())
}

/// The pod a binding makes: on `node`, scheduled, with the binding's annotations.
fn assign(pod: &Value, binding: &Value, node: &str, name: &str) -> Result<Value, ApiError> {
    let conflict = |why: String| ApiError::conflict("", "pods/binding", name, &why);
    for (key, label) in [("uid", "UID"), ("resourceVersion", "ResourceVersion")] {
        let wanted = meta_str(binding, key);
        let actual = meta_str(pod, key);
        if !wanted.is_empty() && wanted != actual {
            return Err(ApiError::conflict(
                "",
                "pods",
                name,
                &format!(
                    "Precondition failed: {label} in precondition: {wanted}, {label} in object meta: {actual}"
                ),
            ));
        }
    }
    if pod["metadata"].get("deletionTimestamp").is_some() {
        return Err(conflict(format!(
            "pod {name} is being deleted, cannot be assigned to a host"
        )));
    }
    let current = text_at(pod, "/spec/nodeName");
    if !current.is_empty() {
        return Err(conflict(format!(
            "pod {name} is already assigned to node {current:?}"
        )));
    }
    if list(pod, "/spec/schedulingGates").next().is_some() {
        return Err(conflict(format!(
            "pod {name} has non-empty .spec.schedulingGates"
        )));
    }
    let mut out = pod.clone();
    out["spec"]["nodeName"] = json!(node);
    if let Some(status) = out["status"].as_object_mut() {
        status.remove("nominatedNodeName");
    }
    if let Some(annotations) = binding["metadata"]["annotations"].as_object() {
        if !out["metadata"]["annotations"].is_object() {
            out["metadata"]["annotations"] = json!({});
        }
        for (k, v) in annotations {
            out["metadata"]["annotations"][k] = v.clone();
        }
    }
    if let Some(labels) = binding["metadata"]["labels"].as_object() {
        if !out["metadata"]["labels"].is_object() {
            out["metadata"]["labels"] = json!({});
        }
        for (k, v) in labels {
            out["metadata"]["labels"][k] = v.clone();
        }
    }
    set_condition(&mut out, json!({"type": "PodScheduled", "status": "True"}));
    Ok(out)
}

/// `pods/eviction`: marks the pod `DisruptionTarget` and deletes it (PodDisruptionBudgets are
/// not consulted yet).
struct Eviction;

impl Action for Eviction {
    fn body_kind(&self) -> Option<&'static str> {
        Some("Eviction")
    }

    fn serve<'a>(&'a self, call: ActionCall<'a>) -> BoxFuture<'a, Result<(u16, Value), ApiError>> {
        Box::pin(async move {
            let body = call.body.clone().unwrap_or(Value::Null);
            if meta_str(&body, "name") != call.name {
                return Err(ApiError::bad_request(
                    "name in URL does not match name in Eviction object",
                ));
            }
            let opts = eviction_delete_options(&body["deleteOptions"])?;
            rest::get(call.state, call.res, call.namespace, call.name)?;
            let mark = |pod: &Value| mark_disruption(pod, &opts, call.name);
            write_computed(&call, "status", &mark).await?;
            match rest::delete(
                call.state,
                call.ctx,
                call.res,
                call.namespace,
                call.name,
                &opts,
            )
            .await?
            {
                Deleted::Gone(_) | Deleted::Pending(_) => Ok(success()),
            }
        })
    }
}

/// The `deleteOptions` an eviction carries.
fn eviction_delete_options(opts: &Value) -> Result<DeleteOptions, ApiError> {
    if opts["ignoreStoreReadErrorWithClusterBreakingPotential"] == true {
        return Err(ApiError::invalid(
            "policy",
            "Eviction",
            "",
            vec![field::invalid(
                "deleteOptions.ignoreStoreReadErrorWithClusterBreakingPotential",
                &json!(true),
                "can not be set for pod eviction, try after removing the option",
            )],
        ));
    }
    let propagation = match opts["propagationPolicy"].as_str() {
        Some(p) => Some(
            Propagation::parse(p)
                .ok_or_else(|| ApiError::bad_request(format!("invalid propagationPolicy: {p}")))?,
        ),
        None => match opts["orphanDependents"].as_bool() {
            Some(true) => Some(Propagation::Orphan),
            Some(false) => Some(Propagation::Background),
            None => None,
        },
    };
    let text = |p: &str| opts.at(p).and_then(Value::as_str).map(str::to_string);
    Ok(DeleteOptions {
        uid: text("/preconditions/uid"),
        resource_version: text("/preconditions/resourceVersion"),
        grace_period_seconds: opts["gracePeriodSeconds"].as_i64(),
        propagation,
    })
}

/// The pod with the `DisruptionTarget` condition an eviction adds before it deletes.
fn mark_disruption(pod: &Value, opts: &DeleteOptions, name: &str) -> Result<Value, ApiError> {
    // An empty precondition is no precondition here.
    fn given(p: &Option<String>) -> Option<&str> {
        p.as_deref().filter(|w| !w.is_empty())
    }
    crate::registry::store::check_preconditions(
        "",
        "Pod",
        name,
        pod,
        given(&opts.uid),
        given(&opts.resource_version),
    )?;
    let mut out = pod.clone();
    set_condition(
        &mut out,
        json!({"type": "DisruptionTarget", "status": "True",
               "reason": "EvictionByEvictionAPI", "message": "Eviction API: evicting"}),
    );
    Ok(out)
}

/// The subresources that would reach a container: kubefake runs none.
enum NoContainers {
    Attach,
    Exec,
    Log,
    PortForward,
    Proxy,
}

impl NoContainers {
    /// The apiserver's own checks (the pod, its container, its node), then the error of what
    /// would serve the connection: kubefake runs no containers.
    fn reach(&self, call: &ActionCall<'_>) -> Result<ApiError, ApiError> {
        let connection = match self {
            Self::Exec => Some("exec"),
            Self::Attach => Some("attach"),
            Self::PortForward => Some("portforward"),
            Self::Log | Self::Proxy => None,
        };
        if let Some(subresource) = connection {
            authorize_create(call, subresource)?;
        }
        let pod = rest::get(call.state, call.res, call.namespace, call.name)?;
        let pod = &pod.value();
        let query = |k: &str| {
            call.query
                .iter()
                .find(|(key, _)| key == k)
                .map_or("", |(_, v)| v.as_str())
        };
        let container = match self {
            NoContainers::PortForward | NoContainers::Proxy => String::new(),
            _ => pick_container(pod, query("container"), call.name)?,
        };
        let node = text_at(pod, "/spec/nodeName");
        let message = match self {
            NoContainers::Proxy => format!(
                "address not allowed: kubefake runs no containers, so nothing serves pod {:?}",
                call.name
            ),
            NoContainers::Log => format!(
                "container {container:?} in pod {:?} is waiting to start: kubefake runs no containers",
                call.name
            ),
            _ if node.is_empty() => {
                return Err(ApiError::bad_request(format!(
                    "pod {} does not have a host assigned",
                    call.name
                )))
            }
            NoContainers::PortForward => format!(
                "kubefake runs no containers: pod {:?} has no ports to forward",
                call.name
            ),
            _ => format!(
                "kubefake runs no containers: container {container:?} of pod {:?} cannot be reached",
                call.name
            ),
        };
        Ok(ApiError::bad_request(message))
    }
}

impl Action for NoContainers {
    fn connects(&self) -> bool {
        !matches!(self, NoContainers::Log)
    }

    fn serve<'a>(&'a self, call: ActionCall<'a>) -> BoxFuture<'a, Result<(u16, Value), ApiError>> {
        Box::pin(async move { Err(self.reach(&call)?) })
    }

    /// Exec, attach and port-forward over WebSocket are negotiated as the kubelet negotiates
    /// them, then end with the error on their error channel.
    fn stream<'a>(
        &'a self,
        call: ActionCall<'a>,
    ) -> BoxFuture<'a, Option<Result<Stream, ApiError>>> {
        let kind = match self {
            NoContainers::Exec | NoContainers::Attach => StreamKind::RemoteCommand,
            NoContainers::PortForward => StreamKind::PortForward {
                ports: call
                    .query
                    .iter()
                    .filter(|(k, _)| k == "ports")
                    .flat_map(|(_, v)| v.split(','))
                    .filter_map(|p| p.trim().parse().ok())
                    .collect(),
            },
            NoContainers::Log | NoContainers::Proxy => return Box::pin(async { None }),
        };
        Box::pin(async move { Some(self.reach(&call).map(|error| Stream { kind, error })) })
    }
}

/// `exec`, `attach` and `portforward` reached by a GET (a WebSocket upgrade) are authorized for
/// `create` as well (`AuthorizePodWebsocketUpgradeCreatePermission`, on by default in 1.36), as a
/// POST is.
fn authorize_create(call: &ActionCall<'_>, subresource: &str) -> Result<(), ApiError> {
    use crate::filters::authorization::{authorize, Attributes, Decision};
    if call.verb == "create" {
        return Ok(());
    }
    let attrs = Attributes {
        verb: "create".into(),
        resource_request: true,
        group: call.res.group.clone(),
        version: call.res.version.clone(),
        resource: call.res.plural.clone(),
        subresource: subresource.to_string(),
        namespace: call.namespace.to_string(),
        name: call.name.to_string(),
        path: String::new(),
    };
    let mode = call.state.options.authorization;
    match authorize(mode, &call.state.store.snapshot(), &call.ctx.user, &attrs) {
        Decision::Allow(_) => Ok(()),
        Decision::Deny(reason) => Err(ApiError::forbidden(
            &call.res.group,
            &call.res.plural,
            call.name,
            &reason,
        )),
    }
}

/// `validateContainer`: the named container, or the only one.
fn pick_container(pod: &Value, wanted: &str, name: &str) -> Result<String, ApiError> {
    let all: Vec<&str> = podspec_container_names(pod);
    if !wanted.is_empty() {
        if all.contains(&wanted) {
            return Ok(wanted.to_string());
        }
        return Err(ApiError::bad_request(format!(
            "container {wanted} is not valid for pod {name}"
        )));
    }
    let regular: Vec<&Value> = list(pod, "/spec/containers").collect();
    match regular.as_slice() {
        [one] => Ok(text_at(one, "/name").to_string()),
        [] => Err(ApiError::bad_request(format!(
            "a container name must be specified for pod {name}"
        ))),
        _ => Err(ApiError::bad_request(format!(
            "a container name must be specified for pod {name}, choose one of: [{}]",
            all.join(" ")
        ))),
    }
}

/// Every container's name: init, regular, then ephemeral containers.
fn podspec_container_names(pod: &Value) -> Vec<&str> {
    [
        "/spec/initContainers",
        "/spec/containers",
        "/spec/ephemeralContainers",
    ]
    .iter()
    .flat_map(|p| list(pod, p))
    .map(|c| text_at(c, "/name"))
    .collect()
}

/// Work for the endpoint controllers: look at the Services the pod concerns.
fn services_work(pod: &Value) -> Work {
    let key = ObjectKey::new(meta_str(pod, "namespace"), meta_str(pod, "name"));
    Work::PodServices(key)
}

/// Work for the protection controller: look again at each claim a pod names.
fn claims_work(pod: &Value) -> Vec<Work> {
    let ns = meta_str(pod, "namespace");
    claims_of(pod)
        .map(|c| Work::StorageProtection(claims_gr(), ObjectKey::new(ns, &c)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(spec: Value) -> Value {
        let mut p = json!({"metadata": {"name": "p"}, "spec": spec});
        PodStrategy.defaults(&mut p);
        p
    }

    #[test]
    fn defaults_as_the_apiserver_sets_them() {
        let p = pod(json!({"containers": [{"name": "a", "image": "nginx",
            "resources": {"limits": {"cpu": "1"}}}]}));
        let c = &p["spec"]["containers"][0];
        assert_eq!(c["imagePullPolicy"], "Always");
        assert_eq!(c["terminationMessagePath"], "/dev/termination-log");
        assert_eq!(c["resources"]["requests"]["cpu"], "1");
        assert_eq!(p["spec"]["enableServiceLinks"], true);
        assert_eq!(p["spec"]["dnsPolicy"], "ClusterFirst");
        assert_eq!(qos_class(&p["spec"]), "Burstable");
    }

    #[test]
    fn the_printed_row() {
        let mut p = pod(json!({"containers": [{"name": "a", "image": "x"}]}));
        p["status"] = json!({"phase": "Running", "containerStatuses": [
            {"name": "a", "ready": true, "restartCount": 0, "state": {"running": {}}}]});
        let row = printed(&p);
        assert_eq!(
            (row.ready.as_str(), row.reason.as_str()),
            ("1/1", "Running")
        );
        p["status"]["containerStatuses"][0]["state"] =
            json!({"waiting": {"reason": "CrashLoopBackOff"}});
        assert_eq!(printed(&p).reason, "CrashLoopBackOff");
    }

    #[test]
    fn spec_changes_are_refused_but_images() {
        let old = pod(json!({"containers": [{"name": "a", "image": "x"}]}));
        let mut new = old.clone();
        new["spec"]["containers"][0]["image"] = json!("y");
        assert!(spec_update_errors(&new["spec"], &old["spec"]).is_empty());
        new["spec"]["restartPolicy"] = json!("Never");
        let errs = spec_update_errors(&new["spec"], &old["spec"]);
        assert!(errs[0].message.starts_with(
            "Forbidden: pod updates may not change fields other than `spec.containers[*].image`"
        ));
        assert!(errs[0].message.contains("+ spec.restartPolicy: \"Never\""));
    }
}
