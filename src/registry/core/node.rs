//! The core/v1 Node kind (cluster-scoped): created with the status its kubelet reports,
//! `status.allocatable` defaulted from `status.capacity`, status kept on spec writes and written
//! through the `status` subresource, taints and pod CIDRs validated as the apiserver does (taint
//! errors under `metadata.taints`, as it reports them), the `spec.unschedulable` field selector,
//! kubectl's columns (STATUS from the Ready condition and `unschedulable`, ROLES from the
//! `node-role.kubernetes.io/*` labels, and the wide columns), a DELETE that answers with the
//! object.
//!
//! Not yet: the node lifecycle controller (no taints for not-ready nodes, no eviction), the
//! rules for updates of `podCIDR`/`providerID` and `configSource`; `proxy` finds the node and
//! answers that nothing can be reached ([`crate::registry::core::proxy`]). A
//! node without `spec.unschedulable` does not match `spec.unschedulable=false` (the apiserver
//! compares Go's `false` for it).

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{json, Value};

use crate::controllers::{simulated, Work};
use crate::error::{field, StatusCause};
use crate::registry::builtin;
use crate::registry::core::proxy::Unreachable;
use crate::registry::core::service::{strings, text};
use crate::registry::resource::ApiResource;
use crate::registry::strategy::{keep_only_status, Strategy};
use crate::registry::table::{Column, Columns};
use crate::registry::validation::{label_value_errors, qualified_name_errors};
use crate::store::StoredObject;

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind("", "v1", "nodes", Arc::new(NodeStrategy))
        .action(
            "proxy",
            Arc::new(Unreachable {
                why: "runs no kubelet for node",
            }),
        )
        .part("status", Arc::new(NodeStatusStrategy))
        .with(|r| {
            r.field_selectors(&["metadata.name", "spec.unschedulable|false"])
                .table(columns())
                .delete_returns_object()
        })
        .build()
}

/// core/v1 Node.
pub struct NodeStrategy;

impl Strategy for NodeStrategy {
    fn track_generation(&self) -> bool {
        false
    }

    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn defaults(&self, obj: &mut Value) {
        let status = &obj["status"];
        if status["allocatable"].is_null() && !status["capacity"].is_null() {
            obj["status"]["allocatable"] = obj["status"]["capacity"].clone();
        }
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
            spec.remove("configSource");
        }
        if let Some(status) = obj.get_mut("status").and_then(Value::as_object_mut) {
            status.remove("config");
        }
    }

    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        obj["status"] = old.get("status").cloned().unwrap_or(json!({}));
        if old["spec"]["configSource"].is_null() {
            if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
                spec.remove("configSource");
            }
        }
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        node_errors(obj)
    }

    /// In a simulated cluster, every DaemonSet looks at the nodes again.
    fn after_commit(&self, _obj: &StoredObject) -> Vec<Work> {
        vec![
            Work::Simulated(simulated::Sim::DaemonSets),
            Work::Simulated(simulated::Sim::RetryUnschedulable),
        ]
    }

    /// Likewise when a node goes.
    fn after_remove(&self, _obj: &StoredObject) -> Vec<Work> {
        vec![Work::Simulated(simulated::Sim::DaemonSets)]
    }
}

/// `nodes/status`: the kubelet's heartbeat and conditions.
pub struct NodeStatusStrategy;

impl Strategy for NodeStatusStrategy {
    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        keep_only_status(obj, old);
    }

    fn validate_update(&self, obj: &Value, _old: &Value) -> Vec<StatusCause> {
        node_errors(obj)
    }
}

/// `ValidateNode`: taints and pod CIDRs.
fn node_errors(node: &Value) -> Vec<StatusCause> {
    let mut errs = taint_errors(&node["spec"]["taints"]);
    let cidrs = strings(&node["spec"]["podCIDRs"]);
    for (i, cidr) in cidrs.iter().enumerate() {
        if !is_cidr(cidr) {
            errs.push(field::invalid(
                &format!("spec.podCIDRs[{i}]"),
                &json!(cidr),
                "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
            ));
        }
    }
    let dual = cidrs.len() == 2 && cidrs[0].contains(':') != cidrs[1].contains(':');
    if cidrs.len() > 1 && !dual {
        errs.push(field::invalid(
            "spec.podCIDRs",
            &json!(cidrs),
            "may specify no more than one CIDR for each IP family",
        ));
    }
    errs
}

fn is_cidr(s: &str) -> bool {
    let Some((ip, bits)) = s.split_once('/') else {
        return false;
    };
    let max = if ip.contains(':') { 128 } else { 32 };
    ip.parse::<std::net::IpAddr>().is_ok() && bits.parse::<u8>().is_ok_and(|b| b <= max)
}

/// `validateNodeTaints`: keys, values, effects, and one taint per key and effect.
fn taint_errors(taints: &Value) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let mut seen = BTreeSet::new();
    let effects = ["NoSchedule", "PreferNoSchedule", "NoExecute"];
    for (i, t) in taints.as_array().into_iter().flatten().enumerate() {
        let path = format!("metadata.taints[{i}]");
        let key = text(t, "key");
        errs.extend(qualified_name_errors(&format!("{path}.key"), key));
        let value = text(t, "value");
        let msgs = label_value_errors(value);
        if !msgs.is_empty() {
            errs.push(field::invalid(
                &format!("{path}.value"),
                &json!(value),
                &msgs.join(";"),
            ));
        }
        let effect = text(t, "effect");
        if effect.is_empty() {
            errs.push(field::required(&format!("{path}.effect"), ""));
        } else if !effects.contains(&effect) {
            errs.push(field::not_supported(
                &format!("{path}.effect"),
                &json!(effect),
                &effects,
            ));
        }
        if !seen.insert((effect.to_string(), key.to_string())) {
            // The apiserver prints the internal Taint, which has no JSON tags.
            let shown = format!(
                "{{\"Key\":{},\"Value\":{},\"Effect\":{},\"TimeAdded\":{}}}",
                json!(key),
                json!(value),
                json!(effect),
                t.get("timeAdded").unwrap_or(&Value::Null)
            );
            let mut cause = field::duplicate(&path, &Value::Null);
            cause.message =
                format!("Duplicate value: {shown}: taints must be unique by key and effect pair");
            errs.push(cause);
        }
    }
    errs
}

fn columns() -> Columns {
    Columns::new(vec![
        Column::name(),
        Column::computed("Status", "string", 0, "", |o| json!(status(o))),
        Column::computed("Roles", "string", 0, "", |o| json!(roles(o))),
        Column::age("string"),
        Column::computed("Version", "string", 0, "", |o| {
            json!(text(&o["status"]["nodeInfo"], "kubeletVersion"))
        }),
        Column::computed("Internal-IP", "string", 1, "", |o| {
            json!(address(o, "InternalIP"))
        }),
        Column::computed("External-IP", "string", 1, "", |o| {
            json!(address(o, "ExternalIP"))
        }),
        Column::computed("OS-Image", "string", 1, "", |o| {
            json!(node_info(o, "osImage"))
        }),
        Column::computed("Kernel-Version", "string", 1, "", |o| {
            let mut kernel = node_info(o, "kernelVersion");
            let arch = text(&o["status"]["nodeInfo"], "architecture");
            if !arch.is_empty() {
                kernel = format!("{kernel} ({arch})");
            }
            json!(kernel)
        }),
        Column::computed("Container-Runtime", "string", 1, "", |o| {
            json!(node_info(o, "containerRuntimeVersion"))
        }),
    ])
}

fn node_info(o: &Value, key: &str) -> String {
    match text(&o["status"]["nodeInfo"], key) {
        "" => "<unknown>".into(),
        v => v.to_string(),
    }
}

/// `Ready`/`NotReady`/`Unknown`, and `SchedulingDisabled` for cordoned nodes.
fn status(o: &Value) -> String {
    let ready = o["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .rfind(|c| c["type"] == "Ready")
        .map(|c| {
            if c["status"] == "True" {
                "Ready"
            } else {
                "NotReady"
            }
        });
    let mut parts = vec![ready.unwrap_or("Unknown").to_string()];
    if o["spec"]["unschedulable"] == true {
        parts.push("SchedulingDisabled".into());
    }
    parts.join(",")
}

/// `findNodeRoles`: `node-role.kubernetes.io/<role>` labels and `kubernetes.io/role`.
fn roles(o: &Value) -> String {
    let mut roles = BTreeSet::new();
    for (k, v) in o["metadata"]["labels"].as_object().into_iter().flatten() {
        if let Some(role) = k
            .strip_prefix("node-role.kubernetes.io/")
            .filter(|r| !r.is_empty())
        {
            roles.insert(role.to_string());
        } else if k == "kubernetes.io/role" && v.as_str().is_some_and(|s| !s.is_empty()) {
            roles.insert(v.as_str().unwrap_or("").to_string());
        }
    }
    if roles.is_empty() {
        "<none>".into()
    } else {
        roles.into_iter().collect::<Vec<_>>().join(",")
    }
}

fn address(o: &Value, kind: &str) -> String {
    o["status"]["addresses"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|a| a["type"] == kind)
        .map_or("<none>".into(), |a| text(a, "address").to_string())
}

/// Deprecated node labels and why (`nodeapi.GetNodeLabelDeprecatedMessage`).
const DEPRECATED_NODE_LABELS: [(&str, &str); 8] = [
    (
        "beta.kubernetes.io/arch",
        "deprecated since v1.14; use \"kubernetes.io/arch\" instead",
    ),
    (
        "beta.kubernetes.io/os",
        "deprecated since v1.14; use \"kubernetes.io/os\" instead",
    ),
    (
        "failure-domain.beta.kubernetes.io/region",
        "deprecated since v1.17; use \"topology.kubernetes.io/region\" instead",
    ),
    (
        "failure-domain.beta.kubernetes.io/zone",
        "deprecated since v1.17; use \"topology.kubernetes.io/zone\" instead",
    ),
    (
        "beta.kubernetes.io/instance-type",
        "deprecated since v1.17; use \"node.kubernetes.io/instance-type\" instead",
    ),
    ("app.kubernetes.io/created-by", "deprecated since v1.9"),
    (
        "scheduler.alpha.kubernetes.io/preferAvoidPods",
        "deprecated since v1.22; use Taints and Tolerations instead",
    ),
    (
        "node-role.kubernetes.io/master",
        "use \"node-role.kubernetes.io/control-plane\" instead",
    ),
];

/// Why a node label is deprecated (`nodeapi.GetNodeLabelDeprecatedMessage`), if it is.
pub fn deprecated_label(key: &str) -> Option<&'static str> {
    DEPRECATED_NODE_LABELS
        .iter()
        .find(|(label, _)| *label == key)
        .map(|(_, why)| *why)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printing_and_taints() {
        let node = json!({"metadata": {"labels": {"node-role.kubernetes.io/control-plane": "", "kubernetes.io/role": "worker"}},
            "spec": {"unschedulable": true},
            "status": {"conditions": [{"type": "Ready", "status": "True"}], "addresses": [{"type": "InternalIP", "address": "172.18.0.2"}],
                "nodeInfo": {"kubeletVersion": "v1.36.0", "kernelVersion": "6.1", "architecture": "amd64"}}});
        assert_eq!(status(&node), "Ready,SchedulingDisabled");
        assert_eq!(roles(&node), "control-plane,worker");
        assert_eq!(address(&node, "InternalIP"), "172.18.0.2");
        assert_eq!(address(&node, "ExternalIP"), "<none>");
        let taints = json!([{"key": "a", "effect": "NoSchedule"}, {"key": "a", "effect": "NoSchedule"}, {"key": "b", "effect": "Sometimes"}]);
        let msgs: Vec<String> = taint_errors(&taints)
            .into_iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect();
        assert_eq!(msgs, [
            "metadata.taints[1]: Duplicate value: {\"Key\":\"a\",\"Value\":\"\",\"Effect\":\"NoSchedule\",\"TimeAdded\":null}: taints must be unique by key and effect pair",
            "metadata.taints[2].effect: Unsupported value: \"Sometimes\": supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"",
        ]);
    }
}
