//! What the endpoints and EndpointSlice controllers share (`k8s.io/endpointslice/util` and
//! friends): which Services they manage, which pods a Service selects and which of those may
//! be endpoints, a pod's readiness and addresses, the port a Service port's `targetPort`
//! names in a pod, and which Services a pod's change concerns.
//!
//! A pod's write reports only the pod ([`Work::PodServices`]); its labels before the write are
//! not known, so the Services it concerns are those of its namespace that select it now or
//! list it in their Endpoints or EndpointSlices (which covers every Service that selected it
//! before and had it as an endpoint). A namespace without such Services costs a pod write one
//! lookup of its Services.

use std::collections::HashSet;
use std::sync::Arc;

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{json, Map, Value};

use super::Work;
use crate::state::State;
use crate::store::{GroupResource, ObjectKey, Snapshot, StoredObject};

/// The label that names a slice's controller (`discovery.LabelManagedBy`).
pub const SLICE_MANAGED_BY: &str = "endpointslice.kubernetes.io/managed-by";
/// The label that names a slice's Service.
pub use crate::registry::discovery::endpointslice::SERVICE_NAME_LABEL;
/// The label both controllers put on the objects of a Service without a cluster IP.
pub const HEADLESS_LABEL: &str = "service.kubernetes.io/headless";
/// The annotation both controllers set to the time of the change that caused their write.
pub const TRIGGER_TIME_ANNOTATION: &str = "endpoints.kubernetes.io/last-change-trigger-time";

/// The services table.
pub fn services_gr() -> GroupResource {
    GroupResource::new("", "services")
}

/// The pods table.
pub fn pods_gr() -> GroupResource {
    GroupResource::new("", "pods")
}

/// The endpoints table.
pub fn endpoints_gr() -> GroupResource {
    GroupResource::new("", "endpoints")
}

/// The EndpointSlices table.
pub fn slices_gr() -> GroupResource {
    GroupResource::new("discovery.k8s.io", "endpointslices")
}

/// The selector of a Service whose endpoints the controllers manage: one with a selector (an
/// empty one is none: the apiserver's storage does not keep an empty map) that is not
/// `ExternalName`. Other Services' endpoints are the clients' (the `kubernetes` Service's, a
/// webhook's).
pub fn managed_selector(svc: &Value) -> Option<&Map<String, Value>> {
    if svc["spec"]["type"] == "ExternalName" {
        return None;
    }
    svc["spec"]["selector"]
        .as_object()
        .filter(|s| !s.is_empty())
}

/// Whether every `key: value` of a selector is among the labels.
pub fn selects(selector: &Map<String, Value>, labels: &Value) -> bool {
    selector.iter().all(|(k, v)| labels.get(k) == Some(v))
}

/// The pods of the Service's namespace that the selector selects.
pub fn selected_pods(
    snapshot: &Snapshot,
    namespace: &str,
    selector: &Map<String, Value>,
) -> Vec<Arc<StoredObject>> {
    snapshot
        .list(&pods_gr(), Some(namespace))
        .filter(|(_, p)| selects(selector, &p.value()["metadata"]["labels"]))
        .map(|(_, p)| p.clone())
        .collect()
}

/// `IsPodReady`: the `Ready` condition is `True`.
pub fn is_ready(pod: &Value) -> bool {
    ready_condition(pod).is_some_and(|c| c["status"] == "True")
}

fn ready_condition(pod: &Value) -> Option<&Value> {
    pod["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == "Ready")
}

/// `ShouldPodBeInEndpoints`: not finished, has an IP, and not being deleted unless terminating
/// pods are included.
pub fn may_be_endpoint(pod: &Value, include_terminating: bool) -> bool {
    let status = &pod["status"];
    if matches!(status["phase"].as_str(), Some("Succeeded" | "Failed")) {
        return false;
    }
    if pod_ips(pod).is_empty() {
        return false;
    }
    include_terminating || pod["metadata"].get("deletionTimestamp").is_none()
}

/// The pod's IPs: `status.podIPs`, or `status.podIP` alone.
pub fn pod_ips(pod: &Value) -> Vec<&str> {
    let many: Vec<&str> = pod["status"]["podIPs"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|ip| ip["ip"].as_str())
        .filter(|ip| !ip.is_empty())
        .collect();
    if !many.is_empty() {
        return many;
    }
    pod["status"]["podIP"]
        .as_str()
        .filter(|ip| !ip.is_empty())
        .into_iter()
        .collect()
}

/// Whether an address is IPv6 (the families are told apart as `utilnet.IsIPv6` does).
pub fn is_ipv6(ip: &str) -> bool {
    ip.contains(':')
}

/// `FindPort`: the port number a Service port's `targetPort` names in a pod: a number as it
/// is, a name as the port of that name and the Service port's protocol among the containers'
/// ports (then the sidecars', init containers that restart `Always`).
pub fn find_port(pod: &Value, service_port: &Value) -> Option<i64> {
    let target = &service_port["targetPort"];
    if let Some(n) = target.as_i64() {
        return Some(n);
    }
    let name = target.as_str()?;
    let protocol = service_port["protocol"].as_str().unwrap_or("TCP");
    let spec = &pod["spec"];
    let containers = spec["containers"].as_array().into_iter().flatten();
    let sidecars = spec["initContainers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["restartPolicy"] == "Always");
    containers
        .chain(sidecars)
        .flat_map(|c| c["ports"].as_array().into_iter().flatten())
        .find(|p| p["name"] == name && p["protocol"].as_str().unwrap_or("TCP") == protocol)
        .and_then(|p| p["containerPort"].as_i64())
}

/// `ShouldSetHostname`: the pod's hostname, when its subdomain is the Service.
pub fn hostname<'a>(pod: &'a Value, svc: &Value) -> Option<&'a str> {
    let host = pod["spec"]["hostname"].as_str().filter(|h| !h.is_empty())?;
    let same_ns = pod["metadata"]["namespace"] == svc["metadata"]["namespace"];
    (pod["spec"]["subdomain"] == svc["metadata"]["name"] && same_ns).then_some(host)
}

/// The reference an endpoint keeps to its pod.
pub fn target_ref(pod: &Value) -> Value {
    let meta = &pod["metadata"];
    json!({"kind": "Pod", "namespace": meta["namespace"], "name": meta["name"],
        "uid": meta["uid"]})
}

/// `isServiceIPSet`: the Service has a cluster IP (its objects are not labelled headless).
pub fn has_cluster_ip(svc: &Value) -> bool {
    let ip = svc["spec"]["clusterIP"].as_str().unwrap_or("");
    !ip.is_empty() && ip != "None"
}

/// The labels both controllers derive from the Service's: `skip` (keys the controller
/// reserves) dropped, the headless label when the Service has no cluster IP.
pub fn derived_labels(svc: &Value, skip: &[&str]) -> Map<String, Value> {
    let mut labels: Map<String, Value> = svc["metadata"]["labels"]
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(k, _)| !skip.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    if has_cluster_ip(svc) {
        labels.remove(HEADLESS_LABEL);
    } else {
        labels.insert(HEADLESS_LABEL.into(), json!(""));
    }
    labels
}

/// The trigger time the controllers record: the latest of the Service's creation and its
/// pods' last readiness transitions (RFC 3339). kube-controller-manager remembers what it saw
/// and records the earliest change since; kubefake keeps no such memory and records the
/// latest, which is the one change when a single pod changed.
pub fn trigger_time(svc: &Value, pods: &[Arc<StoredObject>]) -> Option<String> {
    let parse = |t: &Value| {
        t.as_str()
            .and_then(|s| DateTime::parse_from_rfc3339(s).ok())
            .map(|t| t.with_timezone(&Utc))
    };
    let created = parse(&svc["metadata"]["creationTimestamp"]);
    let transitions = pods
        .iter()
        .filter_map(|p| ready_condition(&p.value()).and_then(|c| parse(&c["lastTransitionTime"])));
    created
        .into_iter()
        .chain(transitions)
        .max()
        .map(|t| t.to_rfc3339_opts(SecondsFormat::AutoSi, true))
}

/// Sets or removes the trigger-time annotation.
pub fn set_trigger_time(obj: &mut Value, time: Option<&str>) {
    let meta = crate::registry::object_meta::meta_mut(obj);
    if !meta.get("annotations").is_some_and(Value::is_object) {
        meta.insert("annotations".into(), json!({}));
    }
    if let Some(annotations) = meta.get_mut("annotations").and_then(Value::as_object_mut) {
        match time {
            Some(t) => annotations.insert(TRIGGER_TIME_ANNOTATION.into(), json!(t)),
            None => annotations.remove(TRIGGER_TIME_ANNOTATION),
        };
    }
}

/// Which Services a pod's change concerns (see the module documentation): their Endpoints and
/// EndpointSlices work.
pub fn work_for_pod(state: &State, pod: &ObjectKey) -> Vec<Work> {
    let snapshot = state.store.snapshot();
    let ns = pod.namespace.as_str();
    let mut services = snapshot
        .list(&services_gr(), Some(ns))
        .filter(|(_, s)| managed_selector(&s.value()).is_some())
        .peekable();
    if services.peek().is_none() {
        return Vec::new();
    }
    let current = snapshot.get(&pods_gr(), pod);
    let in_slices = services_whose_slices_list(&snapshot, pod);
    let mut work = Vec::new();
    for (key, svc) in services {
        let selected = current.as_ref().is_some_and(|p| {
            managed_selector(&svc.value())
                .is_some_and(|sel| selects(sel, &p.value()["metadata"]["labels"]))
        });
        let listed = in_slices.contains(key.name.as_str())
            || snapshot
                .get(&endpoints_gr(), key)
                .is_some_and(|e| endpoints_list(&e.value(), &pod.name));
        if selected || listed {
            work.push(Work::Endpoints(key.clone()));
            work.push(Work::EndpointSlices(key.clone()));
        }
    }
    work
}

/// Whether an Endpoints object has an address whose target is the pod.
fn endpoints_list(endpoints: &Value, pod: &str) -> bool {
    let subsets = endpoints["subsets"].as_array().into_iter().flatten();
    subsets
        .flat_map(|s| {
            let ready = s["addresses"].as_array().into_iter().flatten();
            ready.chain(s["notReadyAddresses"].as_array().into_iter().flatten())
        })
        .any(|a| a["targetRef"]["kind"] == "Pod" && a["targetRef"]["name"] == pod)
}

/// The Services whose controller-managed slices have an endpoint whose target is the pod.
fn services_whose_slices_list(snapshot: &Snapshot, pod: &ObjectKey) -> HashSet<String> {
    snapshot
        .list(&slices_gr(), Some(&pod.namespace))
        .filter(|(_, s)| s.value()["metadata"]["labels"][SLICE_MANAGED_BY] == SLICE_CONTROLLER)
        .filter(|(_, s)| {
            let slice = s.value();
            let endpoints = slice["endpoints"].as_array().into_iter().flatten();
            endpoints
                .into_iter()
                .any(|e| e["targetRef"]["kind"] == "Pod" && e["targetRef"]["name"] == *pod.name)
        })
        .filter_map(|(_, s)| {
            s.value()["metadata"]["labels"][SERVICE_NAME_LABEL]
                .as_str()
                .map(str::to_string)
        })
        .collect()
}

/// The EndpointSlice controller's name in [`SLICE_MANAGED_BY`].
pub const SLICE_CONTROLLER: &str = "endpointslice-controller.k8s.io";

/// `LessEndpointAddress`: by IP (as bytes), then by the target's uid (none first): the order
/// of addresses in an Endpoints subset, and kubefake's order of a slice's endpoints.
pub fn address_order(a: (&str, &str), b: (&str, &str)) -> std::cmp::Ordering {
    a.0.as_bytes()
        .cmp(b.0.as_bytes())
        .then_with(|| a.1.cmp(b.1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(spec: Value, status: Value) -> Value {
        json!({"metadata": {"name": "p", "namespace": "ns", "uid": "u1", "labels": {"app": "web"}},
            "spec": spec, "status": status})
    }

    #[test]
    fn target_ports_resolve_by_number_or_by_name_and_protocol() {
        let p = pod(
            json!({"containers": [{"name": "c", "ports": [
                {"name": "http", "containerPort": 8080},
                {"name": "dns", "containerPort": 5353, "protocol": "UDP"}]}],
                "initContainers": [
                    {"name": "side", "restartPolicy": "Always",
                        "ports": [{"name": "metrics", "containerPort": 9090}]},
                    {"name": "init", "ports": [{"name": "setup", "containerPort": 7070}]}]}),
            json!({}),
        );
        let cases = [
            (
                json!({"port": 80, "targetPort": 8081}),
                Some(8081),
                "a number as it is",
            ),
            (
                json!({"port": 80, "targetPort": "http", "protocol": "TCP"}),
                Some(8080),
                "by name",
            ),
            (
                json!({"port": 53, "targetPort": "dns", "protocol": "UDP"}),
                Some(5353),
                "UDP",
            ),
            (
                json!({"port": 53, "targetPort": "dns", "protocol": "TCP"}),
                None,
                "protocol differs",
            ),
            (
                json!({"port": 9, "targetPort": "metrics", "protocol": "TCP"}),
                Some(9090),
                "sidecar",
            ),
            (
                json!({"port": 7, "targetPort": "setup", "protocol": "TCP"}),
                None,
                "plain init",
            ),
            (
                json!({"port": 1, "targetPort": "nope", "protocol": "TCP"}),
                None,
                "unknown name",
            ),
        ];
        for (port, want, why) in cases {
            assert_eq!(find_port(&p, &port), want, "{why}");
        }
    }

    #[test]
    fn which_pods_may_be_endpoints() {
        let ready =
            json!({"podIP": "10.0.0.1", "conditions": [{"type": "Ready", "status": "True"}]});
        let cases = [
            (
                pod(json!({}), ready.clone()),
                false,
                true,
                "ready with an IP",
            ),
            (
                pod(json!({}), json!({"podIP": "10.0.0.1"})),
                false,
                true,
                "not ready",
            ),
            (
                pod(json!({}), json!({"phase": "Pending"})),
                false,
                false,
                "no IP",
            ),
            (
                pod(
                    json!({}),
                    json!({"podIP": "10.0.0.1", "phase": "Succeeded"}),
                ),
                true,
                false,
                "finished",
            ),
        ];
        for (p, include_terminating, want, why) in cases {
            assert_eq!(may_be_endpoint(&p, include_terminating), want, "{why}");
        }
        let mut deleting = pod(json!({}), ready.clone());
        deleting["metadata"]["deletionTimestamp"] = json!("2024-01-01T00:00:00Z");
        assert!(!may_be_endpoint(&deleting, false));
        assert!(may_be_endpoint(&deleting, true));
        assert!(is_ready(&pod(json!({}), ready)));
        assert!(!is_ready(&pod(
            json!({}),
            json!({"conditions": [{"type": "Ready", "status": "False"}]})
        )));
        let two = pod(
            json!({}),
            json!({"podIP": "10.0.0.1", "podIPs": [{"ip": "10.0.0.1"}, {"ip": "fd00::1"}]}),
        );
        assert_eq!(pod_ips(&two), ["10.0.0.1", "fd00::1"]);
    }

    #[test]
    fn selectors_hostnames_and_labels() {
        let sel = json!({"app": "web"});
        let sel = sel.as_object().cloned().unwrap_or_default();
        assert!(selects(&sel, &json!({"app": "web", "tier": "x"})));
        assert!(!selects(&sel, &json!({"app": "db"})));
        assert!(!selects(&sel, &Value::Null));
        let svc = json!({"metadata": {"name": "web", "namespace": "ns", "labels": {"team": "a"}},
            "spec": {"selector": {}, "clusterIP": "None"}});
        assert!(
            managed_selector(&svc).is_none(),
            "an empty selector is none"
        );
        let mut external = svc.clone();
        external["spec"] = json!({"type": "ExternalName", "selector": {"app": "web"}});
        assert!(managed_selector(&external).is_none());
        let p = pod(json!({"hostname": "h", "subdomain": "web"}), json!({}));
        assert_eq!(hostname(&p, &svc), Some("h"));
        assert_eq!(
            hostname(&pod(json!({"hostname": "h"}), json!({})), &svc),
            None
        );
        assert_eq!(
            Value::Object(derived_labels(&svc, &[])),
            json!({"team": "a", HEADLESS_LABEL: ""})
        );
    }

    #[test]
    fn addresses_sort_by_ip_bytes_then_uid() {
        let mut list = vec![
            ("10.0.0.2", "b"),
            ("10.0.0.10", "a"),
            ("10.0.0.2", "a"),
            ("9.0.0.1", ""),
        ];
        list.sort_by(|a, b| address_order(*a, *b));
        assert_eq!(
            list,
            [
                ("10.0.0.10", "a"),
                ("10.0.0.2", "a"),
                ("10.0.0.2", "b"),
                ("9.0.0.1", "")
            ]
        );
    }

    #[test]
    fn trigger_time_is_the_latest_change() {
        let svc = json!({"metadata": {"creationTimestamp": "2024-01-01T00:00:00Z"}});
        let p = |t: &str| {
            Arc::new(StoredObject::from_parts(
                json!({"status": {"conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": t}]}}),
                bytes::Bytes::new(),
                1,
            ))
        };
        assert_eq!(
            trigger_time(&svc, &[]).as_deref(),
            Some("2024-01-01T00:00:00Z")
        );
        let pods = [p("2024-01-02T00:00:00Z"), p("2024-01-03T00:00:00+00:00")];
        assert_eq!(
            trigger_time(&svc, &pods).as_deref(),
            Some("2024-01-03T00:00:00Z")
        );
    }
}
