//! The core/v1 Endpoints kind (deprecated since 1.33 in favour of EndpointSlices, still what
//! many clients read): port protocols defaulted to TCP, subsets validated as the apiserver
//! validates them (unless an update leaves them unchanged), kubectl's ENDPOINTS column, and the
//! deprecation warning on writes.
//!
//! The `kubernetes` Endpoints the server starts with point at its own address, which is a
//! loopback address when it listens on one: that object alone is exempt from the rule that
//! endpoints may not be loopback addresses (the apiserver's own reconciler is never given one).
//!
//! The Endpoints of Services with a selector are the endpoints controller's
//! ([`crate::controllers::endpoints`]); deleting them reports work to it, which writes them
//! again.
//!
//! Not yet: the deprecation warning on reads (the apiserver sends it on every request for v1
//! Endpoints).

use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use serde_json::{json, Value};

use super::service::text;
use super::service_validation::PROTOCOLS;
use crate::controllers::Work;
use crate::error::{field, StatusCause};
use crate::registry::builtin;
use crate::registry::object_meta::meta_str;
use crate::registry::resource::ApiResource;
use crate::registry::resource::ClusterInfo;
use crate::registry::strategy::Strategy;
use crate::registry::table::{Column, Columns};
use crate::registry::validation::{
    dns_label_errors, endpoint_ip_errors, legacy_ip_errors, port_number_errors,
    qualified_name_errors,
};
use crate::store::{GroupResource, ObjectKey, Snapshot, StoredObject};

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
fn bootstrap(cluster: &ClusterInfo) -> Vec<Value> {
    let address = cluster.address;
    let (host, port) = crate::registry::resource::server_host_port(address);
    vec![json!({"apiVersion": "v1", "kind": "Endpoints",
        "metadata": {"name": "kubernetes", "namespace": "default",
            "labels": {"endpointslice.kubernetes.io/skip-mirror": "true"}},
        "subsets": [{"addresses": [{"ip": host}],
            "ports": [{"name": "https", "port": port, "protocol": "TCP"}]}]})]
}

/// Where a webhook's Service reference leads, as cluster DNS and kube-proxy would take it: the
/// Service's port (by number) names an endpoint port, and the Service's Endpoints, or else its
/// EndpointSlices (`kubernetes.io/service-name`), give the address. The apiserver refuses
/// loopback IP addresses in both, so a webhook listening on loopback beside kubefake is named
/// either through [`crate::ServerBuilder::webhook_service`] or by an `FQDN` EndpointSlice whose
/// address is `localhost` or ends in `.localhost` (a valid FQDN the apiserver accepts, which
/// RFC 6761 reserves for loopback): it resolves to 127.0.0.1.
pub fn service_endpoint(
    snap: &Snapshot,
    namespace: &str,
    name: &str,
    port: u16,
) -> Option<SocketAddr> {
    let key = ObjectKey::new(namespace, name);
    let service = snap.get(&GroupResource::new("", "services"), &key);
    let service_port = service.as_ref().and_then(|s| {
        let slice = s.value();
        let ports = slice["spec"]["ports"].as_array()?;
        ports
            .iter()
            .find(|p| p["port"].as_u64() == Some(u64::from(port)))
            .cloned()
    });
    let port_name = service_port
        .as_ref()
        .map(|p| p["name"].as_str().unwrap_or("").to_string());
    let endpoints = snap.get(&GroupResource::new("", "endpoints"), &key);
    let from_endpoints = endpoints.as_ref().and_then(|e| {
        let e_tree = e.value();
        let subsets = e_tree["subsets"].as_array()?;
        subsets.iter().find_map(|subset| {
            let port = endpoint_port(&subset["ports"], port_name.as_deref())?;
            let ips = subset["addresses"].as_array()?;
            ips.iter()
                .find_map(|a| ip(&a["ip"]))
                .map(|ip| SocketAddr::new(ip, port))
        })
    });
    from_endpoints.or_else(|| {
        let slices = GroupResource::new("discovery.k8s.io", "endpointslices");
        snap.list(&slices, Some(namespace))
            .filter(|(_, o)| o.value()["metadata"]["labels"]["kubernetes.io/service-name"] == name)
            .find_map(|(_, o)| {
                let port = endpoint_port(&o.value()["ports"], port_name.as_deref())?;
                let o_tree = o.value();
                let endpoints = o_tree["endpoints"].as_array()?;
                let fqdn = o.value()["addressType"] == "FQDN";
                endpoints
                    .iter()
                    .flat_map(|e| e["addresses"].as_array().into_iter().flatten())
                    .find_map(|a| if fqdn { loopback_name(a) } else { ip(a) })
                    .map(|ip| SocketAddr::new(ip, port))
            })
    })
}

/// The endpoint port named as the Service port is (any, when the Service is unknown or there
/// is just one).
fn endpoint_port(ports: &Value, name: Option<&str>) -> Option<u16> {
    let ports = ports.as_array()?;
    let found = match name {
        Some(n) => ports.iter().find(|p| p["name"].as_str().unwrap_or("") == n),
        None => ports.first(),
    };
    found
        .or_else(|| (ports.len() == 1).then(|| &ports[0]))
        .and_then(|p| p["port"].as_u64())
        .and_then(|p| u16::try_from(p).ok())
}

fn ip(ip: &Value) -> Option<IpAddr> {
    ip.as_str().and_then(|s| s.parse::<IpAddr>().ok())
}

/// 127.0.0.1 for `localhost` and names under `.localhost` (RFC 6761 section 6.3: they always
/// resolve to loopback); kubefake resolves no other names.
fn loopback_name(name: &Value) -> Option<IpAddr> {
    let name = name.as_str()?.trim_end_matches('.').to_ascii_lowercase();
    (name == "localhost" || name.ends_with(".localhost")).then_some(IpAddr::from([127, 0, 0, 1]))
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

    /// Endpoints deleted: the endpoints controller writes them again when their Service is
    /// one it manages (and deletes nothing more when the Service is gone).
    fn after_remove(&self, obj: &StoredObject) -> Vec<Work> {
        let key = ObjectKey::new(
            meta_str(&obj.value(), "namespace"),
            meta_str(&obj.value(), "name"),
        );
        vec![Work::Endpoints(key)]
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
    use crate::store::Store;

    #[test]
    fn services_resolve_to_their_endpoints() {
        let store = Store::new(8, 8);
        let put = |resource: (&str, &str), name: &str, obj: Value| {
            let gr = GroupResource::new(resource.0, resource.1);
            store
                .write(|t| t.put(&gr, ObjectKey::new("hooks", name), obj))
                .expect("stored");
        };
        let meta = |name: &str| json!({"name": name, "namespace": "hooks"});
        put(
            ("", "services"),
            "conv",
            json!({"metadata": meta("conv"),
            "spec": {"ports": [{"name": "metrics", "port": 8080}, {"name": "https", "port": 443}]}}),
        );
        put(
            ("", "endpoints"),
            "conv",
            json!({"metadata": meta("conv"),
            "subsets": [{"addresses": [{"ip": "10.0.0.7"}],
                "ports": [{"name": "metrics", "port": 9090}, {"name": "https", "port": 9443}]}]}),
        );
        let mut slice_meta = meta("other-abc");
        slice_meta["labels"] = json!({"kubernetes.io/service-name": "other"});
        put(
            ("discovery.k8s.io", "endpointslices"),
            "other-abc",
            json!({"metadata": slice_meta,
            "ports": [{"port": 8443}], "endpoints": [{"addresses": ["10.0.0.8"]}]}),
        );
        let snap = store.snapshot();
        let found = |name: &str, port: u16| service_endpoint(&snap, "hooks", name, port);
        assert_eq!(found("conv", 443), "10.0.0.7:9443".parse().ok());
        assert_eq!(found("conv", 8080), "10.0.0.7:9090".parse().ok());
        assert_eq!(
            found("other", 443),
            "10.0.0.8:8443".parse().ok(),
            "no Service: the only port"
        );
        assert_eq!(found("missing", 443), None);
        let mut local_meta = meta("local-abc");
        local_meta["labels"] = json!({"kubernetes.io/service-name": "local"});
        put(
            ("discovery.k8s.io", "endpointslices"),
            "local-abc",
            json!({"metadata": local_meta, "addressType": "FQDN",
            "ports": [{"port": 9443}], "endpoints": [{"addresses": ["hook.localhost."]}]}),
        );
        let snap = store.snapshot();
        assert_eq!(
            service_endpoint(&snap, "hooks", "local", 443),
            "127.0.0.1:9443".parse().ok(),
            "an FQDN under .localhost is loopback"
        );
    }

    #[rstest::rstest]
    #[case("localhost", true)]
    #[case("hook.localhost", true)]
    #[case("Hook.LOCALHOST.", true)]
    #[case("localhost.example.com", false)]
    #[case("example.com", false)]
    #[case("127.0.0.1", false)]
    fn loopback_names(#[case] name: &str, #[case] loopback: bool) {
        assert_eq!(loopback_name(&json!(name)).is_some(), loopback, "{name}");
    }

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
