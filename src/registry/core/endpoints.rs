//! The core/v1 Endpoints kind (deprecated since 1.33 in favour of EndpointSlices, still what
//! many clients read): port protocols defaulted to TCP, subsets validated as the apiserver
//! validates them (unless an update leaves them unchanged), kubectl's ENDPOINTS column, and the
//! deprecation warning on writes.
//!
//! The `kubernetes` Endpoints the server starts with point at its own address, which is a
//! loopback address when it listens on one: that object alone is exempt from the rule that
//! endpoints may not be loopback addresses (the apiserver's own reconciler is never given one).
//!
//! Not yet: the deprecation warning on reads (the apiserver sends it on every request for v1
//! Endpoints), and the endpoints controller.

use std::sync::Arc;

use serde_json::{json, Value};

use super::service::text;
use super::service_validation::PROTOCOLS;
use crate::error::{field, StatusCause};
use crate::registry::builtin;
use crate::registry::object_meta::meta_str;
use crate::registry::resource::ApiResource;
use crate::registry::strategy::Strategy;
use crate::registry::table::{Column, Columns};
use crate::registry::validation::{
    dns_label_errors, endpoint_ip_errors, legacy_ip_errors, port_number_errors,
    qualified_name_errors,
};

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind("", "v1", "endpoints", Arc::new(EndpointsStrategy))
        .with(|r| {
            r.table(Columns::new(vec![
                Column::name(),
                Column::computed("Endpoints", "string", 0, "", |o| json!(format_endpoints(o))),
                Column::age("string"),
            ]))
            .bootstrap(bootstrap)
        })
        .build()
}

/// The `kubernetes` Endpoints: the server's address and port, as the apiserver's endpoint
/// reconciler keeps them (not mirrored to an EndpointSlice: it writes that one itself).
fn bootstrap(address: &str) -> Vec<Value> {
    let (host, port) = super::service::server_host_port(address);
    vec![json!({"apiVersion": "v1", "kind": "Endpoints",
        "metadata": {"name": "kubernetes", "namespace": "default",
            "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"}},
        "subsets": [{"addresses": [{"ip": host}],
            "ports": [{"name": "https", "port": port, "protocol": "TCP"}]}]})]
}

/// The warning every write of a v1 Endpoints gets.
pub const DEPRECATION: &str =
    "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice";

/// core/v1 Endpoints.
pub struct EndpointsStrategy;

impl Strategy for EndpointsStrategy {
    fn track_generation(&self) -> bool {
        false
    }

    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn defaults(&self, obj: &mut Value) {
        let subsets = obj.get_mut("subsets").and_then(Value::as_array_mut);
        for subset in subsets.into_iter().flatten() {
            let ports = subset.get_mut("ports").and_then(Value::as_array_mut);
            for port in ports.into_iter().flatten() {
                if text(port, "protocol").is_empty() {
                    port["protocol"] = json!("TCP");
                }
            }
        }
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        subsets_errors(obj)
    }

    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        if obj["subsets"] == old["subsets"] {
            return Vec::new();
        }
        subsets_errors(obj)
    }

    fn warnings_on_create(&self, _obj: &Value) -> Vec<String> {
        vec![DEPRECATION.to_string()]
    }

    fn warnings_on_update(&self, _obj: &Value, _old: &Value) -> Vec<String> {
        vec![DEPRECATION.to_string()]
    }
}

/// The apiserver's own endpoints may point at loopback.
fn is_apiserver_endpoints(obj: &Value) -> bool {
    meta_str(obj, "namespace") == "default" && meta_str(obj, "name") == "kubernetes"
}

/// `validateEndpointSubsets`.
fn subsets_errors(obj: &Value) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let own = is_apiserver_endpoints(obj);
    for (i, ss) in obj["subsets"].as_array().into_iter().flatten().enumerate() {
        let path = format!("subsets[{i}]");
        let empty = |k: &str| ss[k].as_array().is_none_or(Vec::is_empty);
        if empty("addresses") && empty("notReadyAddresses") {
            errs.push(field::required(
                &path,
                "must specify `addresses` or `notReadyAddresses`",
            ));
        }
        for key in ["addresses", "notReadyAddresses"] {
            for (j, addr) in ss[key].as_array().into_iter().flatten().enumerate() {
                errs.extend(address_errors(addr, &format!("{path}.{key}[{j}]"), own));
            }
        }
        let ports = ss["ports"].as_array().cloned().unwrap_or_default();
        for (j, port) in ports.iter().enumerate() {
            errs.extend(port_errors(
                port,
                ports.len() > 1,
                &format!("{path}.ports[{j}]"),
            ));
        }
    }
    errs
}

fn address_errors(addr: &Value, path: &str, loopback_allowed: bool) -> Vec<StatusCause> {
    let ip_path = format!("{path}.ip");
    let ip = text(addr, "ip");
    let mut errs = legacy_ip_errors(&ip_path, ip, &[]);
    let hostname = text(addr, "hostname");
    if !hostname.is_empty() {
        errs.extend(dns_label_errors(&format!("{path}.hostname"), hostname));
    }
    if let Some(node) = addr["nodeName"].as_str() {
        errs.extend(crate::registry::validation::dns_subdomain_errors(
            &format!("{path}.nodeName"),
            node,
        ));
    }
    let endpoint_errs = endpoint_ip_errors(&ip_path, ip);
    errs.extend(endpoint_errs.into_iter().filter(|e| {
        !(loopback_allowed && e.message.ends_with("loopback range (127.0.0.0/8, ::1/128)"))
    }));
    errs
}

/// `validateEndpointPort`.
fn port_errors(port: &Value, require_name: bool, path: &str) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let name = text(port, "name");
    if require_name && name.is_empty() {
        errs.push(field::required(&format!("{path}.name"), ""));
    } else if !name.is_empty() {
        errs.extend(dns_label_errors(&format!("{path}.name"), name));
    }
    let number = port["port"].as_i64().unwrap_or(0);
    for m in port_number_errors(number) {
        errs.push(field::invalid(&format!("{path}.port"), &json!(number), &m));
    }
    let protocol = text(port, "protocol");
    if protocol.is_empty() {
        errs.push(field::required(&format!("{path}.protocol"), ""));
    } else if !PROTOCOLS.contains(&protocol) {
        errs.push(field::not_supported(
            &format!("{path}.protocol"),
            &json!(protocol),
            &PROTOCOLS,
        ));
    }
    if let Some(app) = port["appProtocol"].as_str() {
        errs.extend(qualified_name_errors(&format!("{path}.appProtocol"), app));
    }
    errs
}

/// `net.JoinHostPort`.
pub fn join_host_port(host: &str, port: i64) -> String {
    if host.contains(':') {
        format!("[{host}]:{port}")
    } else {
        format!("{host}:{port}")
    }
}

/// `formatEndpoints`: the first three ready `ip:port`s, and how many more.
fn format_endpoints(obj: &Value) -> String {
    let Some(subsets) = obj["subsets"].as_array().filter(|s| !s.is_empty()) else {
        return "<none>".into();
    };
    let mut list = Vec::new();
    let mut count = 0;
    for ss in subsets {
        let addresses: Vec<&str> = ss["addresses"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|a| text(a, "ip"))
            .collect();
        let ports = ss["ports"].as_array().cloned().unwrap_or_default();
        if ports.is_empty() {
            count += addresses.len();
            list.extend(addresses.iter().map(|a| a.to_string()));
            continue;
        }
        for p in &ports {
            count += addresses.len();
            let n = p["port"].as_i64().unwrap_or(0);
            list.extend(addresses.iter().map(|a| join_host_port(a, n)));
        }
    }
    more(list, count)
}

/// At most three entries, then `+ N more...`.
pub fn more(mut list: Vec<String>, count: usize) -> String {
    if list.len() > 3 {
        list.truncate(3);
        return format!("{} + {} more...", list.join(","), count - 3);
    }
    list.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_column() {
        let ep = json!({"subsets": [{"addresses": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}],
            "ports": [{"port": 80}, {"port": 443}]}]});
        assert_eq!(
            format_endpoints(&ep),
            "10.0.0.1:80,10.0.0.2:80,10.0.0.1:443 + 1 more..."
        );
        assert_eq!(format_endpoints(&json!({})), "<none>");
    }

    #[test]
    fn subsets_rules() {
        let ep = json!({"metadata": {"name": "web", "namespace": "default"},
            "subsets": [{"addresses": [{"ip": "127.0.0.1"}], "ports": [{"port": 80, "protocol": "TCP"}, {"port": 81, "protocol": "TCP"}]}]});
        let msgs: Vec<String> = subsets_errors(&ep)
            .into_iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect();
        assert_eq!(msgs, [
            "subsets[0].addresses[0].ip: Invalid value: \"127.0.0.1\": may not be in the loopback range (127.0.0.0/8, ::1/128)",
            "subsets[0].ports[0].name: Required value",
            "subsets[0].ports[1].name: Required value",
        ]);
        let mut own = ep.clone();
        own["metadata"]["name"] = json!("kubernetes");
        assert_eq!(subsets_errors(&own).len(), 2);
    }
}
