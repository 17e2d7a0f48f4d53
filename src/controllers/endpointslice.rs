//! The EndpointSlice controller of kube-controller-manager (`endpointslice-controller`): a
//! Service with a selector ([`managed_selector`]) has EndpointSlices named
//! `<service>-<5 random characters>`, labelled `kubernetes.io/service-name` and
//! `endpointslice.kubernetes.io/managed-by: endpointslice-controller.k8s.io` (plus the
//! Service's labels and the headless label), owned by the Service (so the garbage collector
//! removes them with it), one address type per IP family of the Service. Each pod it selects
//! that has an IP of the family and has not finished is an endpoint, with its conditions
//! (`serving`: Ready; `terminating`: being deleted; `ready`: serving and not terminating, or
//! always when the Service publishes not-ready addresses), `targetRef`, `nodeName`, the zone
//! of its Node when that exists, and its hostname when its subdomain is the Service. Endpoints
//! whose pods resolve the Service's ports alike share slices (the ports' names, numbers,
//! protocols), at most 100 per slice. A Service with no endpoints keeps one placeholder slice
//! without ports or endpoints, as the real controller does.
//!
//! Differences: a pod whose Node does not exist is still an endpoint (kubefake runs no nodes;
//! the real controller skips it unless the Service publishes not-ready addresses); endpoints
//! are sorted by address, and slices are filled in that order rather than by keeping each
//! endpoint where it was; a Node's zone is read when the Service is synced, not followed; a
//! client's change to a managed slice is undone at the Service's next sync (its deletion at
//! once).

use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::service_pods::{
    address_order, derived_labels, find_port, hostname, is_ipv6, is_ready, managed_selector,
    may_be_endpoint, pod_ips, selected_pods, services_gr, set_trigger_time, slices_gr, target_ref,
    trigger_time, HEADLESS_LABEL, SERVICE_NAME_LABEL, SLICE_CONTROLLER, SLICE_MANAGED_BY,
};
use super::{create_logged, edit};
use crate::context::Context;
use crate::registry::object_meta::meta_mut;
use crate::registry::store::{self as rest, DeleteOptions};
use crate::state::State;
use crate::store::{GroupResource, ObjectKey, Snapshot, StoredObject};

/// Who the controller writes as (`system:serviceaccount:kube-system:<name>`).
pub const CONTROLLER: &str = "endpointslice-controller";
/// `--max-endpoints-per-slice`'s default.
const MAX_ENDPOINTS_PER_SLICE: usize = 100;
/// The Node label an endpoint's zone comes from.
const ZONE_LABEL: &str = "topology.kubernetes.io/zone";

/// What one slice should hold.
#[derive(Debug, Clone, PartialEq)]
struct Desired {
    address_type: &'static str,
    ports: Value,
    endpoints: Vec<Value>,
}

/// One write of a sync.
#[derive(Debug, PartialEq)]
enum Step {
    /// A new slice (its name generated).
    Create(Desired),
    /// An existing slice (by name) gets this content.
    Update(String, Desired),
    /// An existing slice goes.
    Delete(String),
}

/// `syncService`: brings the slices of a managed Service to what its pods say. The slices of a
/// Service that went are the garbage collector's.
pub async fn reconcile(state: &State, ctx: &Context, service: &ObjectKey) {
    let snapshot = state.store.snapshot();
    let Some(svc) = snapshot.get(&services_gr(), service) else {
        return;
    };
    let svc_tree = svc.value();
    let Some(selector) = managed_selector(&svc_tree) else {
        return;
    };
    let pods = selected_pods(&snapshot, &service.namespace, selector);
    let existing = managed_slices(&snapshot, service);
    let zone = |node: &str| node_zone(&snapshot, node);
    let steps = plan(&svc.value(), &pods, &existing, &zone);
    drop(snapshot);
    if steps.is_empty() {
        return;
    }
    let Some(res) = state.registry().by_group_resource(&slices_gr()) else {
        return;
    };
    let svc = &svc.value();
    let labels = desired_labels(svc);
    let time = trigger_time(svc, &pods);
    let fill = |slice: &mut Value, d: &Desired| {
        slice["addressType"] = json!(d.address_type);
        slice["ports"] = d.ports.clone();
        slice["endpoints"] = json!(d.endpoints);
        meta_mut(slice).insert("labels".into(), json!(labels));
        set_trigger_time(slice, time.as_deref());
    };
    let deleting = svc["metadata"].get("deletionTimestamp").is_some();
    for step in steps {
        match step {
            Step::Create(_) if deleting => {}
            Step::Create(d) => {
                let mut slice = new_slice(svc);
                fill(&mut slice, &d);
                create_logged(state, ctx, &res, &service.namespace, slice).await;
            }
            Step::Update(name, d) => {
                let key = ObjectKey::new(&service.namespace, &name);
                let why = "updating an EndpointSlice";
                edit(state, ctx, &res, &key, why, &|s: &mut Value| fill(s, &d)).await;
            }
            Step::Delete(name) => {
                let opts = DeleteOptions::default();
                let gone = rest::delete(state, ctx, &res, &service.namespace, &name, &opts).await;
                if let Err(e) =
                    gone.map(|_| ())
                        .or_else(|e| if e.code == 404 { Ok(()) } else { Err(e) })
                {
                    tracing::warn!(error = %e, slice = %name, "deleting an EndpointSlice");
                }
            }
        }
    }
}

/// The slices labelled as this controller's for the Service, but those being deleted.
fn managed_slices(snapshot: &Snapshot, service: &ObjectKey) -> Vec<Value> {
    snapshot
        .list(&slices_gr(), Some(&service.namespace))
        .filter(|(_, s)| {
            let labels = &s.value()["metadata"]["labels"];
            labels[SERVICE_NAME_LABEL] == *service.name.as_str()
                && labels[SLICE_MANAGED_BY] == SLICE_CONTROLLER
                && !s.is_deleting()
        })
        .map(|(_, s)| s.value().clone())
        .collect()
}

/// The zone label of a Node, when the Node exists.
fn node_zone(snapshot: &Snapshot, node: &str) -> Option<String> {
    let key = ObjectKey::new("", node);
    let obj = snapshot.get(&GroupResource::new("", "nodes"), &key)?;
    obj.value()["metadata"]["labels"][ZONE_LABEL]
        .as_str()
        .filter(|z| !z.is_empty())
        .map(str::to_string)
}

/// `setEndpointSliceLabels`: the Service's labels but the reserved ones, the headless label,
/// the Service's name and the controller's.
fn desired_labels(svc: &Value) -> Map<String, Value> {
    let reserved = [SERVICE_NAME_LABEL, SLICE_MANAGED_BY, HEADLESS_LABEL];
    let mut labels = derived_labels(svc, &reserved);
    labels.insert(SERVICE_NAME_LABEL.into(), svc["metadata"]["name"].clone());
    labels.insert(SLICE_MANAGED_BY.into(), json!(SLICE_CONTROLLER));
    labels
}

/// `newEndpointSlice`: named after the Service, owned by it (as its controller).
fn new_slice(svc: &Value) -> Value {
    let meta = &svc["metadata"];
    let name = meta["name"].as_str().unwrap_or("");
    json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"generateName": format!("{name}-"), "namespace": meta["namespace"],
            "ownerReferences": [{"apiVersion": "v1", "kind": "Service", "name": name,
                "uid": meta["uid"], "controller": true, "blockOwnerDeletion": true}]}})
}

/// `getAddressTypesForService`: the Service's IP families, else its cluster IP's.
fn address_types(svc: &Value) -> Vec<&'static str> {
    let mut types = Vec::new();
    for family in svc["spec"]["ipFamilies"].as_array().into_iter().flatten() {
        let t = match family.as_str() {
            Some("IPv4") => "IPv4",
            Some("IPv6") => "IPv6",
            _ => continue,
        };
        if !types.contains(&t) {
            types.push(t);
        }
    }
    if !types.is_empty() {
        return types;
    }
    match svc["spec"]["clusterIP"].as_str() {
        Some(ip) if !ip.is_empty() && ip != "None" && is_ipv6(ip) => vec!["IPv6"],
        Some(ip) if !ip.is_empty() && ip != "None" => vec!["IPv4"],
        _ => vec!["IPv4", "IPv6"],
    }
}

/// The writes that bring `existing` (the controller's slices of the Service) to what the pods
/// say: per address type, slices keep their ports when they can, others are reused before new
/// ones are created, and what is left over goes. A slice already right is not written.
fn plan(
    svc: &Value,
    pods: &[Arc<StoredObject>],
    existing: &[Value],
    zone: &dyn Fn(&str) -> Option<String>,
) -> Vec<Step> {
    let types = address_types(svc);
    let labels = desired_labels(svc);
    let uid = &svc["metadata"]["uid"];
    let owned = |s: &Value| {
        let refs = s["metadata"]["ownerReferences"]
            .as_array()
            .into_iter()
            .flatten();
        refs.into_iter()
            .any(|o| o["uid"] == *uid && o["kind"] == "Service" && o["apiVersion"] == "v1")
    };
    let (mut creates, mut updates, mut deletes) = (Vec::new(), Vec::new(), Vec::new());
    for s in existing {
        let t = s["addressType"].as_str().unwrap_or("");
        if !owned(s) || !types.contains(&t) {
            deletes.push(Step::Delete(name_of(s)));
        }
    }
    for t in types {
        let mut mine: Vec<&Value> = existing
            .iter()
            .filter(|s| owned(s) && s["addressType"] == t)
            .collect();
        mine.sort_by_key(|s| name_of(s));
        let mut unmatched = Vec::new();
        for d in desired_slices(svc, pods, t, zone) {
            match mine.iter().position(|s| s["ports"] == d.ports) {
                Some(i) => updates.extend(update_if_changed(mine.remove(i), d, &labels)),
                None => unmatched.push(d),
            }
        }
        for d in unmatched {
            if mine.is_empty() {
                creates.push(Step::Create(d));
            } else {
                updates.extend(update_if_changed(mine.remove(0), d, &labels));
            }
        }
        deletes.extend(mine.into_iter().map(|s| Step::Delete(name_of(s))));
    }
    creates.into_iter().chain(updates).chain(deletes).collect()
}

fn name_of(slice: &Value) -> String {
    slice["metadata"]["name"].as_str().unwrap_or("").to_string()
}

/// An update of the slice to `d`, unless it holds that already.
fn update_if_changed(slice: &Value, d: Desired, labels: &Map<String, Value>) -> Option<Step> {
    let endpoints: &[Value] = slice["endpoints"].as_array().map_or(&[], Vec::as_slice);
    let same = slice["ports"] == d.ports
        && endpoints == d.endpoints.as_slice()
        && slice["metadata"]["labels"].as_object() == Some(labels);
    (!same).then(|| Step::Update(name_of(slice), d))
}

/// The slices one address type needs: endpoints grouped by the ports their pods resolve, in
/// address order, at most [`MAX_ENDPOINTS_PER_SLICE`] a slice; one empty placeholder when
/// there is no endpoint.
fn desired_slices(
    svc: &Value,
    pods: &[Arc<StoredObject>],
    address_type: &'static str,
    zone: &dyn Fn(&str) -> Option<String>,
) -> Vec<Desired> {
    let mut groups: Vec<(Value, Vec<Value>)> = Vec::new();
    for pod in pods.iter().map(|p| p.value()) {
        let pod = &*pod;
        if !may_be_endpoint(pod, true) {
            continue;
        }
        let Some(endpoint) = pod_endpoint(pod, svc, address_type, zone) else {
            continue;
        };
        let ports = endpoint_ports(svc, pod);
        match groups.iter_mut().find(|(p, _)| *p == ports) {
            Some((_, list)) => list.push(endpoint),
            None => groups.push((ports, vec![endpoint])),
        }
    }
    groups.sort_by_key(|(ports, _)| ports.to_string());
    let mut out = Vec::new();
    for (ports, mut endpoints) in groups {
        endpoints.sort_by(|a, b| address_order(endpoint_order_key(a), endpoint_order_key(b)));
        for chunk in endpoints.chunks(MAX_ENDPOINTS_PER_SLICE) {
            out.push(Desired {
                address_type,
                ports: ports.clone(),
                endpoints: chunk.to_vec(),
            });
        }
    }
    if out.is_empty() {
        out.push(Desired {
            address_type,
            ports: json!([]),
            endpoints: Vec::new(),
        });
    }
    out
}

fn endpoint_order_key(endpoint: &Value) -> (&str, &str) {
    (
        endpoint["addresses"][0].as_str().unwrap_or(""),
        endpoint["targetRef"]["uid"].as_str().unwrap_or(""),
    )
}

/// `podToEndpoint`: `None` when the pod has no address of the type.
fn pod_endpoint(
    pod: &Value,
    svc: &Value,
    address_type: &str,
    zone: &dyn Fn(&str) -> Option<String>,
) -> Option<Value> {
    let want_v6 = address_type == "IPv6";
    let addresses: Vec<&str> = pod_ips(pod)
        .into_iter()
        .filter(|ip| is_ipv6(ip) == want_v6)
        .collect();
    if addresses.is_empty() {
        return None;
    }
    let serving = is_ready(pod);
    let terminating = pod["metadata"].get("deletionTimestamp").is_some();
    let ready = svc["spec"]["publishNotReadyAddresses"] == true || (serving && !terminating);
    let mut endpoint = json!({"addresses": addresses,
        "conditions": {"ready": ready, "serving": serving, "terminating": terminating},
        "targetRef": target_ref(pod)});
    if let Some(node) = pod["spec"]["nodeName"].as_str().filter(|n| !n.is_empty()) {
        endpoint["nodeName"] = json!(node);
        if let Some(z) = zone(node) {
            endpoint["zone"] = json!(z);
        }
    }
    if let Some(host) = hostname(pod, svc) {
        endpoint["hostname"] = json!(host);
    }
    Some(endpoint)
}

/// `getEndpointPorts`: each Service port the pod resolves, with the Service port's name (empty
/// included), protocol and app protocol.
fn endpoint_ports(svc: &Value, pod: &Value) -> Value {
    let ports = svc["spec"]["ports"].as_array().into_iter().flatten();
    let out: Vec<Value> = ports
        .filter_map(|sp| {
            let number = find_port(pod, sp)?;
            let mut port = json!({"name": sp["name"].as_str().unwrap_or(""), "port": number,
                "protocol": sp["protocol"].as_str().unwrap_or("TCP")});
            if let Some(app) = sp["appProtocol"].as_str() {
                port["appProtocol"] = json!(app);
            }
            Some(port)
        })
        .collect();
    Value::Array(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(name: &str, ip: &str, ready: bool) -> Arc<StoredObject> {
        let status = if ready { "True" } else { "False" };
        let value = json!({"metadata": {"name": name, "namespace": "ns", "uid": format!("uid-{name}")},
            "spec": {"nodeName": "node-1", "containers": [{"name": "c",
                "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}]}]},
            "status": {"podIP": ip, "conditions": [{"type": "Ready", "status": status}]}});
        Arc::new(StoredObject::from_parts(value, bytes::Bytes::new(), 1))
    }

    fn service() -> Value {
        json!({"metadata": {"name": "web", "namespace": "ns", "uid": "svc-uid"},
            "spec": {"clusterIP": "10.96.0.10", "ipFamilies": ["IPv4"], "selector": {"app": "web"},
                "ports": [{"name": "web", "port": 80, "targetPort": "http", "protocol": "TCP"}]}})
    }

    fn no_zone(_: &str) -> Option<String> {
        None
    }

    fn stored(name: &str, d: &Desired, svc: &Value) -> Value {
        let mut s = new_slice(svc);
        s["metadata"]["name"] = json!(name);
        s["addressType"] = json!(d.address_type);
        s["ports"] = d.ports.clone();
        s["endpoints"] = json!(d.endpoints);
        s["metadata"]["labels"] = json!(desired_labels(svc));
        s
    }

    #[test]
    fn endpoints_carry_conditions_and_sort_by_address() {
        let svc = service();
        let mut terminating = pod("c", "10.0.0.3", true).value().clone();
        terminating["metadata"]["deletionTimestamp"] = json!("2024-01-01T00:00:00Z");
        let pods = [
            pod("b", "10.0.0.2", false),
            pod("a", "10.0.0.10", true),
            Arc::new(StoredObject::from_parts(
                terminating,
                bytes::Bytes::new(),
                1,
            )),
        ];
        let zone = |n: &str| (n == "node-1").then(|| "z1".to_string());
        let slices = desired_slices(&svc, &pods, "IPv4", &zone);
        assert_eq!(slices.len(), 1);
        let d = &slices[0];
        assert_eq!(
            d.ports,
            json!([{"name": "web", "port": 8080, "protocol": "TCP"}])
        );
        let conditions: Vec<(&str, Value)> = d
            .endpoints
            .iter()
            .map(|e| {
                (
                    e["addresses"][0].as_str().unwrap_or(""),
                    e["conditions"].clone(),
                )
            })
            .collect();
        assert_eq!(
            conditions,
            [
                (
                    "10.0.0.10",
                    json!({"ready": true, "serving": true, "terminating": false})
                ),
                (
                    "10.0.0.2",
                    json!({"ready": false, "serving": false, "terminating": false})
                ),
                (
                    "10.0.0.3",
                    json!({"ready": false, "serving": true, "terminating": true})
                ),
            ]
        );
        assert_eq!(d.endpoints[0]["zone"], "z1");
        assert_eq!(d.endpoints[0]["nodeName"], "node-1");
        assert_eq!(d.endpoints[0]["targetRef"]["name"], "a");
        assert!(desired_slices(&svc, &pods, "IPv6", &zone)[0]
            .endpoints
            .is_empty());
    }

    #[test]
    fn a_service_without_endpoints_has_a_placeholder() {
        let svc = service();
        let steps = plan(&svc, &[], &[], &no_zone);
        let placeholder = Desired {
            address_type: "IPv4",
            ports: json!([]),
            endpoints: Vec::new(),
        };
        assert_eq!(steps, [Step::Create(placeholder.clone())]);
        let existing = [stored("web-abcde", &placeholder, &svc)];
        assert!(
            plan(&svc, &[], &existing, &no_zone).is_empty(),
            "nothing to write"
        );
        let pods = [pod("a", "10.0.0.1", true)];
        let steps = plan(&svc, &pods, &existing, &no_zone);
        assert!(
            matches!(&steps[..], [Step::Update(name, d)] if name == "web-abcde" && d.endpoints.len() == 1),
            "the placeholder is reused: {steps:?}"
        );
    }

    #[test]
    fn slices_hold_at_most_a_hundred_and_strangers_go() {
        let svc = service();
        let pods: Vec<_> = (0..150)
            .map(|i| {
                pod(
                    &format!("p{i}"),
                    &format!("10.0.{}.{}", i / 200, i % 200 + 1),
                    true,
                )
            })
            .collect();
        let slices = desired_slices(&svc, &pods, "IPv4", &no_zone);
        assert_eq!(
            slices.iter().map(|d| d.endpoints.len()).collect::<Vec<_>>(),
            [100, 50]
        );
        let mut stranger = stored("web-zzzzz", &slices[0], &svc);
        stranger["metadata"]["ownerReferences"][0]["uid"] = json!("someone-else");
        let mine = stored("web-aaaaa", &slices[1], &svc);
        let steps = plan(&svc, &pods, &[stranger, mine], &no_zone);
        assert_eq!(steps.len(), 3, "{steps:?}");
        assert!(matches!(&steps[0], Step::Create(d) if d.endpoints.len() == 50));
        assert!(
            matches!(&steps[1], Step::Update(n, d) if n == "web-aaaaa" && d.endpoints.len() == 100)
        );
        assert_eq!(steps[2], Step::Delete("web-zzzzz".into()));
    }

    #[test]
    fn labels_and_address_types() {
        let mut svc = service();
        svc["metadata"]["labels"] = json!({"team": "a", SERVICE_NAME_LABEL: "spoof"});
        assert_eq!(
            Value::Object(desired_labels(&svc)),
            json!({"team": "a", SERVICE_NAME_LABEL: "web", SLICE_MANAGED_BY: SLICE_CONTROLLER})
        );
        assert_eq!(address_types(&svc), ["IPv4"]);
        assert_eq!(
            address_types(&json!({"spec": {"clusterIP": "fd00::1"}})),
            ["IPv6"]
        );
        assert_eq!(
            address_types(&json!({"spec": {"clusterIP": "None"}})),
            ["IPv4", "IPv6"]
        );
        let meta = &new_slice(&svc)["metadata"];
        assert_eq!(meta["generateName"], "web-");
        assert_eq!(meta["ownerReferences"][0]["controller"], true);
    }
}
