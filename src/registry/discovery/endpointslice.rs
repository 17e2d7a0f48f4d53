//! The discovery.k8s.io/v1 EndpointSlice kind: port names and protocols defaulted, addresses
//! checked against the slice's immutable `addressType`, `metadata.generation` bumped on any
//! change but metadata (labels included), `deprecatedTopology` dropped on writes that change the
//! endpoints, kubectl's columns. Slices name their Service with the
//! `kubernetes.io/service-name` label (select them with `-l`).
//!
//! The `kubernetes` EndpointSlice the server starts with points at its own address, which may
//! be loopback: that slice alone is exempt from the rule that endpoints are not loopback.
//!
//! The slices of Services with a selector are the EndpointSlice controller's
//! ([`crate::controllers::endpointslice`]); deleting one reports work to it.
//!
//! Not yet: the EndpointSlice mirroring controller (Endpoints written by clients get no
//! slices); `hints` are checked for duplicates and names only.

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::{json, Value};

use crate::controllers::service_pods::{SLICE_CONTROLLER, SLICE_MANAGED_BY};
use crate::controllers::Work;
use crate::error::{field, StatusCause};
use crate::registry::builtin;
use crate::registry::core::endpoints::more;
use crate::registry::core::service::text;
use crate::registry::core::service_validation::PROTOCOLS;
use crate::registry::object_meta::{meta_mut, meta_str};
use crate::registry::resource::ApiResource;
use crate::registry::resource::ClusterInfo;
use crate::registry::strategy::{spec_changed, Strategy};
use crate::registry::table::{Column, Columns};
use crate::registry::validation::{
    dns_label_errors, dns_subdomain_errors, endpoint_ip_errors, label_value_errors,
    legacy_ip_errors, qualified_name_errors,
};
use crate::store::{ObjectKey, StoredObject};

/// The label that names a slice's Service.
pub const SERVICE_NAME_LABEL: &str = "kubernetes.io/service-name";
const ADDRESS_TYPES: [&str; 3] = ["FQDN", "IPv4", "IPv6"];

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind(
        "discovery.k8s.io",
        "v1",
        "endpointslices",
        Arc::new(EndpointSliceStrategy),
    )
    .with(|r| {
        r.table(Columns::new(vec![
            Column::name(),
            Column::computed("AddressType", "string", 0, "", |o| {
                json!(text(o, "addressType"))
            }),
            Column::computed("Ports", "string", 0, "", |o| json!(ports_cell(o))),
            Column::computed("Endpoints", "string", 0, "", |o| json!(endpoints_cell(o))),
            Column::age("string"),
        ]))
        .bootstrap(bootstrap)
    })
    .build()
}

/// The `kubernetes` EndpointSlice: the server's address and port, labelled with its Service.
fn bootstrap(cluster: &ClusterInfo) -> Vec<Value> {
    let address = cluster.address;
    let (host, port) = crate::registry::resource::server_host_port(address);
    let address_type = if host.contains(':') { "IPv6" } else { "IPv4" };
    vec![
        json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
        "metadata": {"name": "kubernetes", "namespace": "default",
            "labels": {SERVICE_NAME_LABEL: "kubernetes"}},
        "addressType": address_type,
        "endpoints": [{"addresses": [host], "conditions": {"ready": true}}],
        "ports": [{"name": "https", "port": port, "protocol": "TCP"}]}),
    ]
}

/// discovery.k8s.io/v1 EndpointSlice.
pub struct EndpointSliceStrategy;

impl Strategy for EndpointSliceStrategy {
    /// A PUT without a resourceVersion is accepted (last write wins), as the apiserver's
    /// strategy allows.
    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn defaults(&self, obj: &mut Value) {
        let ports = obj.get_mut("ports").and_then(Value::as_array_mut);
        for port in ports.into_iter().flatten() {
            if port["name"].is_null() {
                port["name"] = json!("");
            }
            if port["protocol"].is_null() {
                port["protocol"] = json!("TCP");
            }
        }
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        drop_topology(obj, None);
    }

    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        let labels_changed = obj["metadata"]["labels"] != old["metadata"]["labels"];
        if spec_changed(obj, old, false) || labels_changed {
            let next = old["metadata"]["generation"].as_i64().unwrap_or(0) + 1;
            meta_mut(obj).insert("generation".into(), json!(next));
        }
        drop_topology(obj, Some(old));
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        slice_errors(obj, None)
    }

    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        let mut errs = slice_errors(obj, Some(old));
        if obj["addressType"] != old["addressType"] {
            errs.push(field::invalid(
                "addressType",
                &obj["addressType"],
                "field is immutable",
            ));
        }
        errs
    }

    fn warnings_on_create(&self, obj: &Value) -> Vec<String> {
        if text(obj, "addressType") == "FQDN" {
            return vec!["spec.addressType: FQDN endpoints are deprecated".into()];
        }
        Vec::new()
    }

    /// A slice of the EndpointSlice controller deleted: the controller looks at its Service.
    fn after_remove(&self, obj: &StoredObject) -> Vec<Work> {
        let labels = &obj.value()["metadata"]["labels"];
        if labels[SLICE_MANAGED_BY] != SLICE_CONTROLLER {
            return Vec::new();
        }
        let Some(service) = labels[SERVICE_NAME_LABEL].as_str() else {
            return Vec::new();
        };
        let key = ObjectKey::new(meta_str(&obj.value(), "namespace"), service);
        vec![Work::EndpointSlices(key)]
    }
}

/// `dropTopologyOnV1`: `deprecatedTopology` is not written through v1; a hostname it named
/// before becomes the endpoint's `nodeName`.
fn drop_topology(obj: &mut Value, old: Option<&Value>) {
    if old.is_some_and(|o| o["endpoints"] == obj["endpoints"]) {
        return;
    }
    let previous: HashSet<String> = old
        .and_then(|o| o["endpoints"].as_array())
        .into_iter()
        .flatten()
        .filter_map(|e| e["deprecatedTopology"]["kubernetes.io/hostname"].as_str())
        .map(str::to_string)
        .collect();
    let endpoints = obj.get_mut("endpoints").and_then(Value::as_array_mut);
    for ep in endpoints.into_iter().flatten() {
        let host = ep["deprecatedTopology"]["kubernetes.io/hostname"]
            .as_str()
            .map(str::to_string);
        if let Some(host) = host.filter(|h| previous.contains(h)) {
            if ep["nodeName"].is_null() {
                ep["nodeName"] = json!(host);
            }
        }
        if let Some(e) = ep.as_object_mut() {
            e.remove("deprecatedTopology");
        }
    }
}

/// `ValidateEndpointSlice`: endpoint errors are ignored when an update leaves them unchanged.
fn slice_errors(obj: &Value, old: Option<&Value>) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let address_type = text(obj, "addressType");
    if address_type.is_empty() {
        errs.push(field::required("addressType", ""));
    } else if !ADDRESS_TYPES.contains(&address_type) {
        errs.push(field::not_supported(
            "addressType",
            &json!(address_type),
            &ADDRESS_TYPES,
        ));
    }
    errs.extend(ports_errors(&obj["ports"]));
    let unchanged = old.is_some_and(|o| o["endpoints"] == obj["endpoints"]);
    if !unchanged {
        let own = meta_str(obj, "namespace") == "default" && meta_str(obj, "name") == "kubernetes";
        errs.extend(endpoints_errors(&obj["endpoints"], address_type, own));
    }
    errs
}

fn ports_errors(ports: &Value) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let mut names = Vec::new();
    for (i, p) in ports.as_array().into_iter().flatten().enumerate() {
        let path = format!("ports[{i}]");
        let name = text(p, "name");
        if !name.is_empty() {
            errs.extend(dns_label_errors(&format!("{path}.name"), name));
        }
        if names.contains(&name) {
            errs.push(field::duplicate(&format!("{path}.name"), &json!(name)));
        } else {
            names.push(name);
        }
        match p["protocol"].as_str() {
            None => errs.push(field::required(&format!("{path}.protocol"), "")),
            Some(proto) if !PROTOCOLS.contains(&proto) => errs.push(field::not_supported(
                &format!("{path}.protocol"),
                &json!(proto),
                &PROTOCOLS,
            )),
            Some(_) => {}
        }
        if let Some(app) = p["appProtocol"].as_str() {
            errs.extend(qualified_name_errors(&format!("{path}.appProtocol"), app));
        }
    }
    errs
}

fn endpoints_errors(
    endpoints: &Value,
    address_type: &str,
    loopback_allowed: bool,
) -> Vec<StatusCause> {
    let list = endpoints.as_array().cloned().unwrap_or_default();
    if list.len() > 1000 {
        return vec![field::too_many("endpoints", list.len(), 1000)];
    }
    let mut errs = Vec::new();
    for (i, ep) in list.iter().enumerate() {
        let path = format!("endpoints[{i}]");
        let addr_path = format!("{path}.addresses");
        let addresses = crate::registry::core::service::strings(&ep["addresses"]);
        if addresses.is_empty() {
            errs.push(field::required(
                &addr_path,
                "must contain at least 1 address",
            ));
        } else if addresses.len() > 100 {
            errs.push(field::too_many(&addr_path, addresses.len(), 100));
        }
        for (j, a) in addresses.iter().enumerate() {
            errs.extend(address_errors(
                a,
                address_type,
                &addr_path,
                j,
                loopback_allowed,
            ));
        }
        if let Some(node) = ep["nodeName"].as_str() {
            errs.extend(dns_subdomain_errors(&format!("{path}.nodeName"), node));
        }
        if let Some(host) = ep["hostname"].as_str() {
            errs.extend(dns_label_errors(&format!("{path}.hostname"), host));
        }
        errs.extend(hints_errors(&ep["hints"], &format!("{path}.hints")));
    }
    errs
}

fn address_errors(
    a: &str,
    address_type: &str,
    path: &str,
    j: usize,
    loopback_allowed: bool,
) -> Vec<StatusCause> {
    let idx = format!("{path}[{j}]");
    let mut errs = Vec::new();
    let family_ok = |v6: bool| a.contains(':') == v6;
    match address_type {
        "IPv4" | "IPv6" => {
            let ip_errs = legacy_ip_errors(&idx, a, &[]);
            if !ip_errs.is_empty() {
                return ip_errs;
            }
            let v6 = address_type == "IPv6";
            if !family_ok(v6) {
                errs.push(field::invalid(
                    path,
                    &json!(a),
                    &format!("must be an {address_type} address"),
                ));
            }
            errs.extend(endpoint_ip_errors(&idx, a).into_iter().filter(|e| {
                !(loopback_allowed && e.message.ends_with("loopback range (127.0.0.0/8, ::1/128)"))
            }));
        }
        "FQDN" => errs.extend(crate::registry::validation::fqdn_errors(&idx, a)),
        _ => {}
    }
    errs
}

fn hints_errors(hints: &Value, path: &str) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    for (key, limit) in [("forZones", 8), ("forNodes", 8)] {
        let list = hints[key].as_array().cloned().unwrap_or_default();
        if list.len() > limit {
            errs.push(field::too_many(&format!("{path}.{key}"), list.len(), limit));
            continue;
        }
        let mut seen = HashSet::new();
        for (i, h) in list.iter().enumerate() {
            let name = text(h, "name");
            let name_path = format!("{path}.{key}[{i}].name");
            if !seen.insert(name.to_string()) {
                errs.push(field::duplicate(&name_path, &json!(name)));
            }
            if key == "forZones" {
                for m in label_value_errors(name) {
                    errs.push(field::invalid(&name_path, &json!(name), &m));
                }
            } else {
                errs.extend(dns_subdomain_errors(&name_path, name));
            }
        }
    }
    errs
}

/// `formatDiscoveryPorts`.
fn ports_cell(obj: &Value) -> String {
    let ports: Vec<String> = obj["ports"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|p| match (p["port"].as_i64(), p["name"].as_str()) {
            (Some(n), _) => n.to_string(),
            (None, Some(name)) => name.to_string(),
            (None, None) => "*".to_string(),
        })
        .collect();
    unset_or_more(ports)
}

/// `formatDiscoveryEndpoints`.
fn endpoints_cell(obj: &Value) -> String {
    let addresses: Vec<String> = obj["endpoints"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|e| crate::registry::core::service::strings(&e["addresses"]))
        .collect();
    unset_or_more(addresses)
}

fn unset_or_more(list: Vec<String>) -> String {
    if list.is_empty() {
        return "<unset>".into();
    }
    let count = list.len();
    more(list, count)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_and_rules() {
        let slice = json!({"addressType": "IPv4", "ports": [{"port": 80, "name": "http", "protocol": "TCP"}, {"name": "x", "protocol": "TCP"}],
            "endpoints": [{"addresses": ["10.0.0.1"]}, {"addresses": ["10.0.0.2", "fd00::1"]}]});
        assert_eq!(ports_cell(&slice), "80,x");
        assert_eq!(endpoints_cell(&slice), "10.0.0.1,10.0.0.2,fd00::1");
        let msgs: Vec<String> = slice_errors(&slice, None)
            .into_iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect();
        assert_eq!(
            msgs,
            ["endpoints[1].addresses: Invalid value: \"fd00::1\": must be an IPv4 address"]
        );
        assert_eq!(endpoints_cell(&json!({})), "<unset>");
    }

    /// `IsFullyQualifiedDomainName` as the apiserver applies it to FQDN slices.
    #[rstest::rstest]
    #[case("hook.localhost", &[])]
    #[case("hook.localhost.", &[])]
    #[case("localhost", &["endpoints[0].addresses[0]: Invalid value: \"localhost\": should be a domain with at least two segments separated by dots"])]
    #[case("Hook.x", &["endpoints[0].addresses[0]: Invalid value: \"Hook.x\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"])]
    fn fqdn_addresses(#[case] address: &str, #[case] want: &[&str]) {
        let slice = json!({"addressType": "FQDN", "endpoints": [{"addresses": [address]}]});
        let msgs: Vec<String> = slice_errors(&slice, None)
            .into_iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect();
        assert_eq!(msgs, want);
    }
}
