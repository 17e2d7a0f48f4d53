//! The core/v1 Service kind on a single-stack IPv4 cluster whose service CIDR is
//! `10.96.0.0/12` and node port range `30000-32767`, as kind and kubeadm set them up.
//!
//! What the apiserver's service registry does, in its order: `SetDefaults_Service` (session
//! affinity `None`, type `ClusterIP`, protocol `TCP`, `targetPort` = `port`, traffic policies
//! `Cluster`, `allocateLoadBalancerNodePorts`); on updates, values the server allocated are kept
//! when the client leaves them out (`patchAllocatedValues`) and `clusterIP`/`clusterIPs` are
//! kept in step (`normalizeClusterIPs`); `ipFamilyPolicy` and `ipFamilies` are filled in
//! (`SingleStack`, `IPv4`; `RequireDualStack` for headless services without a selector, as the
//! apiserver does); fields of the previous type are dropped on a type change; status is reset
//! on create and kept on updates; validation ([`super::service_validation`]); then the cluster
//! IP and node ports are allocated ([`super::service_alloc`]) inside the store's write, from
//! the Services stored, so they are unique in the server. `clusterIP: None` makes a headless
//! Service, ExternalName Services get no IP. kubectl's columns, the `spec.clusterIP` and
//! `spec.type` field selectors, a DELETE that answers with the object. Every cluster starts with
//! the `kubernetes` Service in `default` (10.96.0.1, port 443 `https` to the server's port) and
//! its Endpoints and EndpointSlice pointing at the server, as the apiserver keeps them.
//!
//! A Service with a selector gets Endpoints and EndpointSlices from the endpoints controllers
//! ([`crate::controllers::endpoints`], [`crate::controllers::endpointslice`]); its removal
//! takes its Endpoints with it.
//!
//! Not yet: dual-stack (IPv6 families are refused as on a single-stack cluster), the
//! ServiceCIDR and IPAddress objects the allocator records allocations in. `proxy` finds the
//! service and answers that nothing can be reached ([`crate::registry::core::proxy`]).

use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::service_alloc;
use super::service_validation;
use crate::controllers::service_pods::managed_selector;
use crate::controllers::Work;
use crate::error::{ApiError, StatusCause};
use crate::registry::builtin;
use crate::registry::core::proxy::Unreachable;
use crate::registry::object_meta::{meta_str, NameRule};
use crate::registry::pointer::Pointer;
use crate::registry::resource::ApiResource;
use crate::registry::resource::ClusterInfo;
use crate::registry::strategy::{keep_only_status, Strategy};
use crate::registry::table::{Column, Columns};
use crate::store::{ObjectKey, Snapshot, StoredObject};

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind("", "v1", "services", Arc::new(ServiceStrategy))
        .action(
            "proxy",
            Arc::new(Unreachable {
                why: "runs no containers, so nothing serves service",
            }),
        )
        .part("status", Arc::new(ServiceStatusStrategy))
        .with(|r| {
            r.field_selectors(&[
                "metadata.name",
                "metadata.namespace",
                "spec.clusterIP",
                "spec.type",
            ])
            .table(columns())
            .delete_returns_object()
            .bootstrap(bootstrap)
        })
        .build()
}

/// A string field, or "".
pub fn text<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key].as_str().unwrap_or("")
}

/// The strings of an array field.
pub fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(|s| s.as_str().map(str::to_string))
        .collect()
}

/// The service's type.
pub fn svc_type(svc: &Value) -> &str {
    text(&svc["spec"], "type")
}

/// `clusterIPs[0]` is `None`.
pub fn is_headless(svc: &Value) -> bool {
    svc["spec"]["clusterIPs"][0] == "None"
}

/// `ExternallyAccessible`: load balancers, node ports, and cluster IPs with external IPs.
pub fn externally_accessible(svc: &Value) -> bool {
    let externals = svc["spec"]["externalIPs"]
        .as_array()
        .is_some_and(|a| !a.is_empty());
    match svc_type(svc) {
        "LoadBalancer" | "NodePort" => true,
        "ClusterIP" => externals,
        _ => false,
    }
}

/// `NeedsHealthCheck`: a load balancer that keeps traffic local needs a health check port.
pub fn needs_health_check(svc: &Value) -> bool {
    svc_type(svc) == "LoadBalancer" && text(&svc["spec"], "externalTrafficPolicy") == "Local"
}

/// core/v1 Service.
pub struct ServiceStrategy;

impl Strategy for ServiceStrategy {
    fn name_rule(&self) -> NameRule {
        // RelaxedServiceNameValidation (beta, on in 1.36): DNS labels, digits first allowed.
        NameRule::Label
    }

    fn track_generation(&self) -> bool {
        false
    }

    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn defaults(&self, obj: &mut Value) {
        set_defaults(obj);
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        obj["status"] = json!({"loadBalancer": {}});
        normalize_cluster_ips(obj, None);
        init_ip_families(obj, None);
    }

    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        obj["status"] = old
            .get("status")
            .cloned()
            .unwrap_or(json!({"loadBalancer": {}}));
        patch_allocated_values(obj, old);
        normalize_cluster_ips(obj, Some(old));
        init_ip_families(obj, Some(old));
        drop_type_dependent_fields(obj, old);
    }

    fn allocate(
        &self,
        view: &Snapshot,
        obj: &mut Value,
        old: Option<&Value>,
        dry_run: bool,
    ) -> Result<(), ApiError> {
        service_alloc::allocate(view, obj, old, dry_run)
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        service_validation::validate(obj, None)
    }

    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        service_validation::validate(obj, Some(old))
    }

    fn warnings_on_create(&self, obj: &Value) -> Vec<String> {
        service_validation::warnings(obj)
    }

    fn warnings_on_update(&self, obj: &Value, _old: &Value) -> Vec<String> {
        service_validation::warnings(obj)
    }

    /// A Service with a selector gets its Endpoints and EndpointSlices from the controllers
    /// (one without is left alone, as the controllers leave it).
    fn after_commit(&self, obj: &StoredObject) -> Vec<Work> {
        let key = service_key(&obj.value());
        let mut work = vec![Work::ServiceIps(key.clone())];
        if managed_selector(&obj.value()).is_some() {
            work.extend([Work::Endpoints(key.clone()), Work::EndpointSlices(key)]);
        }
        work
    }

    /// A Service that went takes its Endpoints with it (the endpoints controller deletes them;
    /// the garbage collector takes its EndpointSlices, which it owns).
    fn after_remove(&self, obj: &StoredObject) -> Vec<Work> {
        let key = service_key(&obj.value());
        vec![Work::Endpoints(key.clone()), Work::ServiceIps(key)]
    }
}

fn service_key(svc: &Value) -> ObjectKey {
    ObjectKey::new(meta_str(svc, "namespace"), meta_str(svc, "name"))
}

/// `services/status`: only the status changes; load balancer ingress is validated.
pub struct ServiceStatusStrategy;

impl Strategy for ServiceStatusStrategy {
    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        keep_only_status(obj, old);
    }

    fn validate_update(&self, obj: &Value, _old: &Value) -> Vec<StatusCause> {
        service_validation::load_balancer_status_errors(obj)
    }
}

fn spec_mut(obj: &mut Value) -> &mut Map<String, Value> {
    if !obj["spec"].is_object() {
        obj["spec"] = json!({});
    }
    match obj.get_mut("spec").and_then(Value::as_object_mut) {
        Some(spec) => spec,
        None => unreachable!("spec was just made an object"),
    }
}

/// `SetDefaults_Service`.
fn set_defaults(obj: &mut Value) {
    let spec = spec_mut(obj);
    if text_of(spec, "sessionAffinity").is_empty() {
        spec.insert("sessionAffinity".into(), json!("None"));
    }
    match text_of(spec, "sessionAffinity") {
        "None" => {
            spec.remove("sessionAffinityConfig");
        }
        "ClientIP" => {
            let config = spec.get("sessionAffinityConfig").unwrap_or(&Value::Null);
            if config["clientIP"]["timeoutSeconds"].is_null() {
                spec.insert(
                    "sessionAffinityConfig".into(),
                    json!({"clientIP": {"timeoutSeconds": 10800}}),
                );
            }
        }
        _ => {}
    }
    if text_of(spec, "type").is_empty() {
        spec.insert("type".into(), json!("ClusterIP"));
    }
    let ports = spec.get_mut("ports").and_then(Value::as_array_mut);
    for port in ports.into_iter().flatten() {
        default_port(port);
    }
    let accessible = externally_accessible(obj);
    let type_ = svc_type(obj).to_string();
    let spec = spec_mut(obj);
    if accessible && text_of(spec, "externalTrafficPolicy").is_empty() {
        spec.insert("externalTrafficPolicy".into(), json!("Cluster"));
    }
    let unset = |spec: &Map<String, Value>, k: &str| spec.get(k).is_none_or(Value::is_null);
    let ip_types = ["NodePort", "LoadBalancer", "ClusterIP"];
    if unset(spec, "internalTrafficPolicy") && ip_types.contains(&type_.as_str()) {
        spec.insert("internalTrafficPolicy".into(), json!("Cluster"));
    }
    if type_ != "LoadBalancer" {
        return;
    }
    if unset(spec, "allocateLoadBalancerNodePorts") {
        spec.insert("allocateLoadBalancerNodePorts".into(), json!(true));
    }
    let ingress = obj
        .at_mut("/status/loadBalancer/ingress")
        .and_then(Value::as_array_mut);
    for ing in ingress.into_iter().flatten() {
        if !text(ing, "ip").is_empty() && ing["ipMode"].is_null() {
            ing["ipMode"] = json!("VIP");
        }
    }
}

fn text_of<'a>(map: &'a Map<String, Value>, key: &str) -> &'a str {
    map.get(key).and_then(Value::as_str).unwrap_or("")
}

/// A port's protocol defaults to TCP and its target port to its port.
fn default_port(port: &mut Value) {
    if text(port, "protocol").is_empty() {
        port["protocol"] = json!("TCP");
    }
    let target = &port["targetPort"];
    let unset = target.is_null() || *target == json!(0) || *target == json!("");
    if unset {
        port["targetPort"] = port["port"].clone();
    }
}

/// `normalizeClusterIPs`: `clusterIP` and `clusterIPs` kept in step.
fn normalize_cluster_ips(obj: &mut Value, old: Option<&Value>) {
    let ip = text(&obj["spec"], "clusterIP").to_string();
    let ips = strings(&obj["spec"]["clusterIPs"]);
    let Some(old) = old else {
        if !ip.is_empty() && ips.is_empty() {
            spec_mut(obj).insert("clusterIPs".into(), json!([ip]));
        }
        return;
    };
    let old_ip = text(&old["spec"], "clusterIP");
    let old_ips = strings(&old["spec"]["clusterIPs"]);
    let spec = spec_mut(obj);
    if !old_ips.is_empty() && ips.is_empty() && old_ip == ip {
        spec.insert("clusterIPs".into(), json!(old_ips));
    }
    if old_ip != ip {
        let same_ips = ips == old_ips;
        if !old_ip.is_empty() && ip.is_empty() {
            if same_ips {
                spec.remove("clusterIPs");
            }
        } else if same_ips {
            spec.insert("clusterIPs".into(), json!([ip]));
        }
    }
}

/// `patchAllocatedValues`: what the server allocated stays when an update leaves it out.
fn patch_allocated_values(obj: &mut Value, old: &Value) {
    let needs_ip = |s: &Value| svc_type(s) != "ExternalName";
    if needs_ip(old) && needs_ip(obj) {
        let old_spec = &old["spec"];
        let spec = spec_mut(obj);
        if spec
            .get("clusterIP")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty)
        {
            if let Some(ip) = old_spec.get("clusterIP") {
                spec.insert("clusterIP".into(), ip.clone());
            }
        }
        let empty = spec
            .get("clusterIPs")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty);
        if empty && !strings(&old_spec["clusterIPs"]).is_empty() {
            spec.insert("clusterIPs".into(), old_spec["clusterIPs"].clone());
        }
    }
    if service_alloc::needs_node_ports(old) && service_alloc::needs_node_ports(obj) {
        let node_ports = |s: &Value| -> Vec<i64> {
            s["spec"]["ports"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|p| p["nodePort"].as_i64().filter(|n| *n != 0))
                .collect()
        };
        let new_ports = node_ports(obj);
        let used: Vec<i64> = node_ports(old)
            .into_iter()
            .filter(|p| new_ports.contains(p))
            .collect();
        let by_name: Vec<(String, i64)> = old["spec"]["ports"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|p| {
                (
                    text(p, "name").to_string(),
                    p["nodePort"].as_i64().unwrap_or(0),
                )
            })
            .collect();
        let ports = spec_mut(obj).get_mut("ports").and_then(Value::as_array_mut);
        for p in ports.into_iter().flatten() {
            if p["nodePort"].as_i64().unwrap_or(0) != 0 {
                continue;
            }
            let name = text(p, "name").to_string();
            let old_value = by_name
                .iter()
                .rev()
                .find(|(n, _)| *n == name)
                .map_or(0, |(_, v)| *v);
            if old_value != 0 && !used.contains(&old_value) {
                p["nodePort"] = json!(old_value);
            }
        }
    }
    if needs_health_check(old)
        && needs_health_check(obj)
        && obj["spec"]["healthCheckNodePort"].as_i64().unwrap_or(0) == 0
    {
        let hc = old["spec"]["healthCheckNodePort"].clone();
        if !hc.is_null() {
            spec_mut(obj).insert("healthCheckNodePort".into(), hc);
        }
    }
}

/// The pure part of `initIPFamilyFields`: the family policy and families a single-stack IPv4
/// cluster gives a Service (errors are reported by validation).
fn init_ip_families(obj: &mut Value, old: Option<&Value>) {
    if svc_type(obj) == "ExternalName" {
        return;
    }
    let headless_selectorless = text(&obj["spec"], "clusterIP") == "None"
        && obj["spec"]["selector"]
            .as_object()
            .is_none_or(Map::is_empty);
    let old_policy = old
        .map(|o| o["spec"]["ipFamilyPolicy"].clone())
        .filter(|p| !p.is_null());
    if obj["spec"]["ipFamilyPolicy"].is_null() {
        let policy = match old_policy {
            Some(p) => p,
            None if headless_selectorless => json!("RequireDualStack"),
            None => json!("SingleStack"),
        };
        spec_mut(obj).insert("ipFamilyPolicy".into(), policy);
    }
    if !service_validation::ip_family_errors(obj, old).is_empty() {
        return;
    }
    let policy = text(&obj["spec"], "ipFamilyPolicy").to_string();
    let ips = strings(&obj["spec"]["clusterIPs"]);
    let mut families = strings(&obj["spec"]["ipFamilies"]);
    if let Some(old) = old {
        if policy == "SingleStack" {
            let old_spec = &old["spec"];
            if ips == strings(&old_spec["clusterIPs"]) && ips.len() > 1 {
                spec_mut(obj).insert("clusterIPs".into(), json!([ips[0]]));
            }
            if families == strings(&old_spec["ipFamilies"]) && families.len() > 1 {
                families.truncate(1);
            }
        }
    }
    for (i, ip) in ips.iter().enumerate() {
        if ip == "None" {
            break;
        }
        if i >= families.len() {
            families.push(service_alloc::family_of(ip).to_string());
        }
    }
    if families.is_empty() {
        families.push("IPv4".into());
    }
    if headless_selectorless && families.len() < 2 && policy != "SingleStack" {
        let other = if families[0] == "IPv4" {
            "IPv6"
        } else {
            "IPv4"
        };
        families.push(other.into());
    }
    spec_mut(obj).insert("ipFamilies".into(), json!(families));
}

/// `dropTypeDependentFields`: what only the previous type needed goes, unless the client
/// changed it too.
fn drop_type_dependent_fields(obj: &mut Value, old: &Value) {
    let old_spec = old["spec"].clone();
    let needs_ip = |s: &Value| svc_type(s) != "ExternalName";
    if needs_ip(old) && !needs_ip(obj) {
        let spec = spec_mut(obj);
        let same = |k: &str| {
            spec.get(k).unwrap_or(&Value::Null) == old_spec.get(k).unwrap_or(&Value::Null)
        };
        let (ips, families, policy) = (
            same("clusterIP") && same("clusterIPs"),
            same("ipFamilies"),
            same("ipFamilyPolicy"),
        );
        if ips {
            spec.remove("clusterIP");
            spec.remove("clusterIPs");
        }
        if families {
            spec.remove("ipFamilies");
        }
        if policy {
            spec.remove("ipFamilyPolicy");
        }
    }
    let node_port_type = |s: &Value| matches!(svc_type(s), "NodePort" | "LoadBalancer");
    if node_port_type(old) && !node_port_type(obj) {
        let old_ports = service_alloc::node_ports_of(old);
        let new_ports = service_alloc::node_ports_of(obj);
        if new_ports.iter().all(|p| old_ports.contains(p)) {
            let ports = spec_mut(obj).get_mut("ports").and_then(Value::as_array_mut);
            for p in ports.into_iter().flatten() {
                if let Some(p) = p.as_object_mut() {
                    p.remove("nodePort");
                }
            }
        }
    }
    let same_hc = obj["spec"]["healthCheckNodePort"] == old_spec["healthCheckNodePort"];
    if needs_health_check(old) && !needs_health_check(obj) && same_hc {
        spec_mut(obj).remove("healthCheckNodePort");
    }
    let was_lb = svc_type(old) == "LoadBalancer";
    if was_lb && svc_type(obj) != "LoadBalancer" {
        let alloc = obj["spec"]["allocateLoadBalancerNodePorts"].clone();
        if !alloc.is_null() && alloc == old_spec["allocateLoadBalancerNodePorts"] {
            spec_mut(obj).remove("allocateLoadBalancerNodePorts");
        }
        if obj["spec"]["loadBalancerClass"] == old_spec["loadBalancerClass"] {
            spec_mut(obj).remove("loadBalancerClass");
        }
    }
    let same_etp = obj["spec"]["externalTrafficPolicy"] == old_spec["externalTrafficPolicy"];
    if externally_accessible(old) && !externally_accessible(obj) && same_etp {
        spec_mut(obj).remove("externalTrafficPolicy");
    }
    if svc_type(obj) != "LoadBalancer" {
        obj["status"]["loadBalancer"] = json!({});
    }
}

/// kubectl's service columns.
fn columns() -> Columns {
    Columns::new(vec![
        Column::name(),
        Column::computed("Type", "string", 0, "", |o| json!(svc_type(o))),
        Column::computed("Cluster-IP", "string", 0, "", |o| {
            o["spec"]["clusterIPs"][0]
                .as_str()
                .map_or(json!("<none>"), |ip| json!(ip))
        }),
        Column::computed("External-IP", "string", 0, "", |o| json!(external_ip(o))),
        Column::computed("Port(s)", "string", 0, "", |o| json!(ports_cell(o))),
        Column::age("string"),
        Column::computed("Selector", "string", 1, "", |o| {
            json!(format_labels(&o["spec"]["selector"]))
        }),
    ])
}

/// `labels.FormatLabels`: `k=v` sorted by key, comma-joined, or `<none>`.
pub fn format_labels(map: &Value) -> String {
    let pairs: Vec<String> = map
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
        .collect();
    if pairs.is_empty() {
        "<none>".into()
    } else {
        pairs.join(",")
    }
}

/// `makePortString`: `port[:nodePort]/protocol`, comma-joined, or `<none>`.
fn ports_cell(svc: &Value) -> String {
    let pieces: Vec<String> = svc["spec"]["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| {
            let port = p["port"].as_i64().unwrap_or(0);
            let protocol = text(p, "protocol");
            match p["nodePort"].as_i64().unwrap_or(0) {
                0 => format!("{port}/{protocol}"),
                n => format!("{port}:{n}/{protocol}"),
            }
        })
        .collect();
    if pieces.is_empty() {
        "<none>".into()
    } else {
        pieces.join(",")
    }
}

/// `getServiceExternalIP` as the apiserver prints it (wide).
fn external_ip(svc: &Value) -> String {
    let externals = strings(&svc["spec"]["externalIPs"]);
    match svc_type(svc) {
        "ClusterIP" | "NodePort" if externals.is_empty() => "<none>".into(),
        "ClusterIP" | "NodePort" => externals.join(","),
        "LoadBalancer" => {
            let mut found: Vec<String> = svc["status"]["loadBalancer"]["ingress"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|i| {
                    let ip = text(i, "ip");
                    let host = text(i, "hostname");
                    (!ip.is_empty())
                        .then(|| ip.to_string())
                        .or_else(|| (!host.is_empty()).then(|| host.to_string()))
                })
                .collect();
            found.sort();
            found.dedup();
            found.extend(externals);
            if found.is_empty() {
                "<pending>".into()
            } else {
                found.join(",")
            }
        }
        "ExternalName" => text(&svc["spec"], "externalName").to_string(),
        _ => "<unknown>".into(),
    }
}

/// The `kubernetes` Service: port 443 (`https`) to the server's port, at the first address of
/// the service CIDR (10.96.0.1).
fn bootstrap(cluster: &ClusterInfo) -> Vec<Value> {
    let address = cluster.address;
    let (_, port) = crate::registry::resource::server_host_port(address);
    let ip = service_alloc::Range::parse(cluster.service_cidr).map_or(String::new(), |r| r.first());
    vec![json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "kubernetes", "namespace": "default",
            "labels": {"component": "apiserver", "provider": "kubernetes"}},
        "spec": {"type": "ClusterIP", "clusterIP": ip, "clusterIPs": [ip],
            "ipFamilyPolicy": "SingleStack", "sessionAffinity": "None",
            "ports": [{"name": "https", "port": 443, "protocol": "TCP", "targetPort": port}]}})]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_of_a_node_port_service() {
        let mut svc = json!({"spec": {"type": "NodePort", "ports": [{"port": 80}, {"port": 53, "protocol": "UDP", "targetPort": "dns"}]}});
        set_defaults(&mut svc);
        let spec = &svc["spec"];
        assert_eq!(spec["sessionAffinity"], "None");
        assert_eq!(spec["externalTrafficPolicy"], "Cluster");
        assert_eq!(spec["internalTrafficPolicy"], "Cluster");
        assert_eq!(
            spec["ports"][0],
            json!({"port": 80, "protocol": "TCP", "targetPort": 80})
        );
        assert_eq!(spec["ports"][1]["targetPort"], "dns");
        let mut lb = json!({"spec": {"type": "LoadBalancer", "sessionAffinity": "ClientIP"}});
        set_defaults(&mut lb);
        assert_eq!(lb["spec"]["allocateLoadBalancerNodePorts"], true);
        assert_eq!(
            lb["spec"]["sessionAffinityConfig"]["clientIP"]["timeoutSeconds"],
            10800
        );
    }

    #[test]
    fn updates_keep_allocated_values() {
        let old = json!({"spec": {"type": "NodePort", "clusterIP": "10.96.5.5", "clusterIPs": ["10.96.5.5"],
            "ipFamilyPolicy": "SingleStack", "ipFamilies": ["IPv4"],
            "ports": [{"name": "http", "port": 80, "nodePort": 30080}]}});
        let mut new =
            json!({"spec": {"type": "NodePort", "ports": [{"name": "http", "port": 80}]}});
        patch_allocated_values(&mut new, &old);
        normalize_cluster_ips(&mut new, Some(&old));
        init_ip_families(&mut new, Some(&old));
        assert_eq!(new["spec"]["clusterIPs"], json!(["10.96.5.5"]));
        assert_eq!(new["spec"]["ports"][0]["nodePort"], 30080);
        assert_eq!(new["spec"]["ipFamilies"], json!(["IPv4"]));

        let mut to_cluster_ip = old.clone();
        to_cluster_ip["spec"]["type"] = json!("ClusterIP");
        drop_type_dependent_fields(&mut to_cluster_ip, &old);
        assert!(to_cluster_ip["spec"]["ports"][0].get("nodePort").is_none());
    }

    #[test]
    fn printing() {
        let svc = json!({"spec": {"type": "LoadBalancer", "ports": [{"port": 80, "nodePort": 30001, "protocol": "TCP"}]},
            "status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}});
        assert_eq!(ports_cell(&svc), "80:30001/TCP");
        assert_eq!(external_ip(&svc), "1.2.3.4");
        assert_eq!(format_labels(&json!({"b": "2", "a": "1"})), "a=1,b=2");
    }
}
