//! The endpoints controller of kube-controller-manager (`endpoints-controller`): a Service with
//! a selector ([`managed_selector`]) has an Endpoints object of its name listing the pods it
//! selects that have an IP: ready ones (condition `Ready=True`, or any when the Service
//! publishes not-ready addresses) in `addresses`, others in `notReadyAddresses`, pods being
//! deleted left out unless the Service publishes not-ready addresses; each address with the
//! pod's `targetRef`, `nodeName` and, when the pod's subdomain is the Service, its hostname;
//! ports resolved from the Service's ports ([`find_port`]), a headless Service without ports
//! listing addresses alone. Subsets are packed as `RepackSubsets` packs them: one subset per
//! set of ports sharing the same addresses. Labels are the Service's, plus
//! `endpoints.kubernetes.io/managed-by` and the headless label; the last-change trigger time
//! is annotated. When the Service goes, its Endpoints go (whoever wrote them); when the
//! Endpoints of a managed Service are deleted, they are written again.
//!
//! Differences: a pod without `nodeName` (kubefake schedules nothing) gets an address without
//! one rather than an empty name; more than 1,000 addresses are not truncated (no
//! `over-capacity` annotation); a client's change to a managed Endpoints object is undone at
//! the Service's next sync rather than at once.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::service_pods::{
    address_order, derived_labels, endpoints_gr, find_port, hostname, is_ipv6, is_ready,
    managed_selector, may_be_endpoint, pod_ips, selected_pods, services_gr, set_trigger_time,
    target_ref, trigger_time,
};
use super::{create_logged, edit};
use crate::context::Context;
use crate::registry::store::{self as rest, DeleteOptions};
use crate::state::State;
use crate::store::{ObjectKey, StoredObject};

/// Who the controller writes as (`system:serviceaccount:kube-system:<name>`).
pub const CONTROLLER: &str = "endpoint-controller";
/// The label that says the controller manages an Endpoints object (`LabelManagedBy`).
pub const MANAGED_BY: &str = "endpoints.kubernetes.io/managed-by";

/// `syncService`: writes the Endpoints of a managed Service when they differ from what its
/// pods say, or deletes the Endpoints of a Service that went.
pub async fn reconcile(state: &State, ctx: &Context, service: &ObjectKey) {
    let Some(res) = state.registry().by_group_resource(&endpoints_gr()) else {
        return;
    };
    let snapshot = state.store.snapshot();
    let Some(svc) = snapshot.get(&services_gr(), service) else {
        let opts = DeleteOptions::default();
        let deleted = rest::delete(state, ctx, &res, &service.namespace, &service.name, &opts);
        if let Err(e) = deleted.await.map(|_| ()).or_else(ignore_not_found) {
            tracing::warn!(error = %e, service = %service.name, "deleting endpoints");
        }
        return;
    };
    let svc_tree = svc.value();
    let Some(selector) = managed_selector(&svc_tree) else {
        return;
    };
    let pods = selected_pods(&snapshot, &service.namespace, selector);
    let subsets = desired_subsets(&svc.value(), &pods);
    let labels = desired_labels(&svc.value());
    let current = snapshot.get(&endpoints_gr(), service);
    drop(snapshot);
    if current
        .as_ref()
        .is_some_and(|c| up_to_date(&c.value(), &subsets, &labels))
    {
        return;
    }
    let time = trigger_time(&svc.value(), &pods);
    let write = |obj: &mut Value| {
        set_subsets(obj, &subsets);
        crate::registry::object_meta::meta_mut(obj).insert("labels".into(), json!(labels));
        set_trigger_time(obj, time.as_deref());
    };
    match current {
        Some(_) => edit(state, ctx, &res, service, "updating endpoints", &write).await,
        None => {
            let mut obj = json!({"apiVersion": "v1", "kind": "Endpoints",
                "metadata": {"name": service.name, "namespace": service.namespace}});
            write(&mut obj);
            create_logged(state, ctx, &res, &service.namespace, obj).await;
        }
    }
}

fn ignore_not_found(e: crate::error::ApiError) -> Result<(), crate::error::ApiError> {
    if e.code == 404 {
        Ok(())
    } else {
        Err(e)
    }
}

/// The Service's labels, the headless label when it has no cluster IP, and the controller's.
fn desired_labels(svc: &Value) -> Map<String, Value> {
    let mut labels = derived_labels(svc, &[]);
    labels.insert(MANAGED_BY.into(), json!(CONTROLLER));
    labels
}

/// Whether stored Endpoints already hold these subsets and labels (the trigger time aside).
fn up_to_date(current: &Value, subsets: &[Value], labels: &Map<String, Value>) -> bool {
    let stored: &[Value] = current["subsets"].as_array().map_or(&[], Vec::as_slice);
    stored == subsets && current["metadata"]["labels"].as_object() == Some(labels)
}

/// `subsets`, left out when empty (as Go's `omitempty` leaves it).
fn set_subsets(obj: &mut Value, subsets: &[Value]) {
    if let Some(o) = obj.as_object_mut() {
        if subsets.is_empty() {
            o.remove("subsets");
        } else {
            o.insert("subsets".into(), json!(subsets));
        }
    }
}

/// One address for one port (or for none: a headless Service without ports).
struct Entry {
    ip: String,
    uid: String,
    address: Value,
    ready: bool,
    port: Option<Value>,
}

/// The subsets the Service's pods make.
fn desired_subsets(svc: &Value, pods: &[Arc<StoredObject>]) -> Vec<Value> {
    let publish = svc["spec"]["publishNotReadyAddresses"] == true;
    let want_v6 = svc["spec"]["ipFamilies"][0] == "IPv6";
    let ports: &[Value] = svc["spec"]["ports"].as_array().map_or(&[], Vec::as_slice);
    let headless = svc["spec"]["clusterIP"] == "None";
    let mut entries = Vec::new();
    for pod in pods.iter().map(|p| p.value()) {
        let pod = &*pod;
        if !may_be_endpoint(pod, publish) {
            continue;
        }
        let Some(ip) = pod_ips(pod).into_iter().find(|ip| is_ipv6(ip) == want_v6) else {
            continue;
        };
        let address = address_of(pod, svc, ip);
        let entry = |port| Entry {
            ip: ip.to_string(),
            uid: pod["metadata"]["uid"].as_str().unwrap_or("").to_string(),
            address: address.clone(),
            ready: publish || is_ready(pod),
            port,
        };
        if ports.is_empty() && headless {
            entries.push(entry(None));
        }
        for sp in ports {
            if let Some(number) = find_port(pod, sp) {
                entries.push(entry(Some(endpoint_port(sp, number))));
            }
        }
    }
    repack(entries)
}

/// `podToEndpointAddressForService`, with the hostname `ShouldSetHostname` allows.
fn address_of(pod: &Value, svc: &Value, ip: &str) -> Value {
    let mut address = json!({"ip": ip, "targetRef": target_ref(pod)});
    if let Some(node) = pod["spec"]["nodeName"].as_str().filter(|n| !n.is_empty()) {
        address["nodeName"] = json!(node);
    }
    if let Some(host) = hostname(pod, svc) {
        address["hostname"] = json!(host);
    }
    address
}

/// `endpointPortFromServicePort`: the Service port's name, protocol and app protocol, with the
/// number found in the pod.
fn endpoint_port(service_port: &Value, number: i64) -> Value {
    let mut port = json!({"port": number,
        "protocol": service_port["protocol"].as_str().unwrap_or("TCP")});
    if let Some(name) = service_port["name"].as_str().filter(|n| !n.is_empty()) {
        port["name"] = json!(name);
    }
    if let Some(app) = service_port["appProtocol"].as_str() {
        port["appProtocol"] = json!(app);
    }
    port
}

/// `RepackSubsets`: every port maps to the addresses that have it (an address not ready for a
/// port once stays so); ports whose addresses (and readiness) are the same share a subset.
/// Addresses are sorted by IP then uid, ports and subsets in a stable order of their own.
fn repack(entries: Vec<Entry>) -> Vec<Value> {
    type Addresses = BTreeMap<(String, String), (bool, Value)>;
    let mut by_port: BTreeMap<String, (Option<Value>, Addresses)> = BTreeMap::new();
    for e in entries {
        let port_key = e.port.as_ref().map_or(String::new(), Value::to_string);
        let (_, addresses) = by_port.entry(port_key).or_insert((e.port, BTreeMap::new()));
        let slot = addresses
            .entry((e.ip, e.uid))
            .or_insert((e.ready, e.address));
        slot.0 = slot.0 && e.ready;
    }
    let mut groups: Vec<(Addresses, Vec<Value>)> = Vec::new();
    for (port, addresses) in by_port.into_values() {
        let group = groups
            .iter_mut()
            .find(|(a, _)| same_addresses(a, &addresses));
        match group {
            Some((_, ports)) => ports.extend(port),
            None => groups.push((addresses, port.into_iter().collect())),
        }
    }
    let mut subsets: Vec<Value> = groups.into_iter().map(|(a, p)| subset(a, p)).collect();
    subsets.sort_by_key(Value::to_string);
    subsets
}

fn same_addresses(
    a: &BTreeMap<(String, String), (bool, Value)>,
    b: &BTreeMap<(String, String), (bool, Value)>,
) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|((ka, va), (kb, vb))| ka == kb && va.0 == vb.0)
}

/// One subset: ready and not-ready addresses in address order, and its ports.
fn subset(addresses: BTreeMap<(String, String), (bool, Value)>, ports: Vec<Value>) -> Value {
    let mut sorted: Vec<_> = addresses.into_iter().collect();
    sorted.sort_by(|(a, _), (b, _)| address_order((&a.0, &a.1), (&b.0, &b.1)));
    let (ready, not_ready): (Vec<_>, Vec<_>) = sorted.into_iter().partition(|(_, (r, _))| *r);
    let list = |v: Vec<_>| -> Vec<Value> { v.into_iter().map(|(_, (_, a))| a).collect() };
    let mut out = Map::new();
    if !ready.is_empty() {
        out.insert("addresses".into(), json!(list(ready)));
    }
    if !not_ready.is_empty() {
        out.insert("notReadyAddresses".into(), json!(list(not_ready)));
    }
    if !ports.is_empty() {
        out.insert("ports".into(), json!(ports));
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controllers::service_pods::HEADLESS_LABEL;

    fn pod(name: &str, ip: &str, ready: bool, labels: Value) -> Arc<StoredObject> {
        let status = if ready { "True" } else { "False" };
        let value = json!({"metadata": {"name": name, "namespace": "ns", "uid": format!("uid-{name}"),
                "labels": labels},
            "spec": {"nodeName": "node-1", "containers": [{"name": "c",
                "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}]}]},
            "status": {"podIP": ip, "conditions": [{"type": "Ready", "status": status}]}});
        Arc::new(StoredObject::from_parts(value, bytes::Bytes::new(), 1))
    }

    fn service(spec: Value) -> Value {
        json!({"metadata": {"name": "web", "namespace": "ns", "labels": {"app": "web"}},
            "spec": spec})
    }

    #[test]
    fn ready_and_not_ready_pods_share_a_subset_per_port_set() {
        let svc = service(
            json!({"clusterIP": "10.96.0.10", "selector": {"app": "web"},
            "ports": [{"name": "web", "port": 80, "targetPort": "http", "protocol": "TCP"},
                      {"name": "raw", "port": 81, "targetPort": 9000, "protocol": "TCP"}]}),
        );
        let pods = [
            pod("b", "10.0.0.2", true, json!({})),
            pod("a", "10.0.0.10", true, json!({})),
            pod("c", "10.0.0.3", false, json!({})),
        ];
        let subsets = desired_subsets(&svc, &pods);
        assert_eq!(subsets.len(), 1, "{subsets:?}");
        let s = &subsets[0];
        let ips = |k: &str| -> Vec<&str> {
            s[k].as_array()
                .into_iter()
                .flatten()
                .filter_map(|a| a["ip"].as_str())
                .collect()
        };
        assert_eq!(ips("addresses"), ["10.0.0.10", "10.0.0.2"]);
        assert_eq!(ips("notReadyAddresses"), ["10.0.0.3"]);
        assert_eq!(
            s["ports"],
            json!([{"name": "raw", "port": 9000, "protocol": "TCP"},
                   {"name": "web", "port": 8080, "protocol": "TCP"}])
        );
        assert_eq!(
            s["addresses"][0],
            json!({"ip": "10.0.0.10", "nodeName": "node-1",
                "targetRef": {"kind": "Pod", "namespace": "ns", "name": "a", "uid": "uid-a"}})
        );
    }

    #[test]
    fn ports_a_pod_lacks_make_their_own_subset() {
        let svc = service(
            json!({"clusterIP": "10.96.0.10", "selector": {"app": "web"},
            "ports": [{"name": "web", "port": 80, "targetPort": "http", "protocol": "TCP"},
                      {"name": "admin", "port": 81, "targetPort": "admin", "protocol": "TCP"}]}),
        );
        let mut with_admin = pod("a", "10.0.0.1", true, json!({})).value().clone();
        with_admin["spec"]["containers"][0]["ports"] = json!([
            {"name": "http", "containerPort": 8080, "protocol": "TCP"},
            {"name": "admin", "containerPort": 9999, "protocol": "TCP"}]);
        let pods = [
            Arc::new(StoredObject::from_parts(with_admin, bytes::Bytes::new(), 1)),
            pod("b", "10.0.0.2", true, json!({})),
        ];
        let subsets = desired_subsets(&svc, &pods);
        assert_eq!(subsets.len(), 2, "{subsets:?}");
        let admin = subsets
            .iter()
            .find(|s| s["ports"][0]["name"] == "admin")
            .cloned()
            .unwrap_or_default();
        assert_eq!(admin["addresses"].as_array().map(Vec::len), Some(1));
    }

    #[test]
    fn publishing_not_ready_and_headless_without_ports() {
        let svc = service(json!({"clusterIP": "None", "selector": {"app": "web"},
            "publishNotReadyAddresses": true}));
        let pods = [pod("a", "10.0.0.1", false, json!({}))];
        let subsets = desired_subsets(&svc, &pods);
        assert_eq!(subsets.len(), 1);
        assert!(subsets[0].get("ports").is_none());
        assert_eq!(subsets[0]["addresses"][0]["ip"], "10.0.0.1");
        let labels = desired_labels(&svc);
        assert_eq!(labels[HEADLESS_LABEL], "");
        assert_eq!(labels[MANAGED_BY], CONTROLLER);
        let no_ports = service(json!({"clusterIP": "10.96.0.1", "selector": {"app": "web"}}));
        assert!(
            desired_subsets(&no_ports, &pods).is_empty(),
            "a cluster IP needs ports"
        );
    }

    #[test]
    fn stored_endpoints_compare_without_the_trigger_time() {
        let subsets = vec![json!({"addresses": [{"ip": "10.0.0.1"}]})];
        let labels = desired_labels(&service(json!({"clusterIP": "10.96.0.9"})));
        let mut stored = json!({"metadata": {"labels": labels.clone(),
            "annotations": {crate::controllers::service_pods::TRIGGER_TIME_ANNOTATION: "x"}},
            "subsets": subsets.clone()});
        assert!(up_to_date(&stored, &subsets, &labels));
        stored["metadata"]["labels"]["extra"] = json!("1");
        assert!(!up_to_date(&stored, &subsets, &labels));
        assert!(!up_to_date(
            &json!({"metadata": {"labels": labels.clone()}}),
            &subsets,
            &labels
        ));
        assert!(up_to_date(
            &json!({"metadata": {"labels": labels.clone()}}),
            &[],
            &labels
        ));
    }
}
