//! The networking/v1 Ingress kind (+status): rules of hosts and HTTP paths (each path with its
//! `pathType`, required in v1) routed to a Service port or a resource backend, a default
//! backend, TLS hosts and secrets, the class to use; validated as the apiserver validates them,
//! with the apiserver's allowances for invalid values an older object already stored. The
//! load balancer status is written through `/status` only. No controller admits traffic, and
//! the DefaultIngressClass admission plugin does not set the class yet.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{json, Value};

use crate::error::{field, StatusCause};
use crate::registry::builtin;
use crate::registry::object_meta::path_segment_errors;
use crate::registry::resource::ApiResource;
use crate::registry::strategy::{bump_generation, keep_only_status, Strategy};
use crate::registry::table::{Column, Columns};
use crate::registry::validation::{
    dns1123_label_errors, dns1123_subdomain_errors, invalid_each, legacy_ip_errors,
    parse_ip_sloppy, port_name_errors, port_number_errors, wildcard_dns1123_subdomain_errors,
};
use crate::store::selector::generic_unsupported_field;

/// The deprecated annotation naming an Ingress's class.
const CLASS_ANNOTATION: &str = "kubernetes.io/ingress.class";

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind("networking.k8s.io", "v1", "ingresses", Arc::new(IngressStrategy))
        .part("status", Arc::new(IngressStatusStrategy))
        .with(|r| {
            r.unsupported_field(generic_unsupported_field)
                .table(Columns::new(vec![
                    Column::name(),
                    Column::computed(
                        "Class",
                        "string",
                        0,
                        "The name of the IngressClass resource that should be used for additional configuration",
                        |o| json!(o["spec"]["ingressClassName"].as_str().unwrap_or("<none>")),
                    ),
                    Column::computed(
                        "Hosts",
                        "string",
                        0,
                        "Hosts that incoming requests are matched against before the ingress rule",
                        hosts_cell,
                    ),
                    Column::computed(
                        "Address",
                        "string",
                        0,
                        "Address is a list containing ingress points for the load-balancer",
                        address_cell,
                    ),
                    Column::computed(
                        "Ports",
                        "string",
                        0,
                        "Ports of TLS configurations that open",
                        |o| {
                            let tls = o["spec"]["tls"].as_array().is_some_and(|t| !t.is_empty());
                            json!(if tls { "80, 443" } else { "80" })
                        },
                    ),
                    Column::age("string"),
                ]))
        })
        .build()
}

/// `formatHosts`: up to three hosts, `*` when none, `+ N more...` past three.
fn hosts_cell(obj: &Value) -> Value {
    let rules = obj["spec"]["rules"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    let mut hosts: Vec<&str> = Vec::new();
    let mut more = false;
    for rule in rules {
        if hosts.len() == 3 {
            more = true;
        }
        match rule["host"].as_str() {
            Some(h) if !more && !h.is_empty() => hosts.push(h),
            _ => {}
        }
    }
    if hosts.is_empty() {
        return json!("*");
    }
    let joined = hosts.join(",");
    if more {
        json!(format!("{joined} + {} more...", rules.len() - 3))
    } else {
        json!(joined)
    }
}

/// The load balancer's IPs (or hostnames, where no IP), sorted and unique.
fn address_cell(obj: &Value) -> Value {
    let entries = obj["status"]["loadBalancer"]["ingress"].as_array();
    let addresses: BTreeSet<&str> = entries
        .into_iter()
        .flatten()
        .filter_map(|i| match i["ip"].as_str().filter(|s| !s.is_empty()) {
            Some(ip) => Some(ip),
            None => i["hostname"].as_str().filter(|s| !s.is_empty()),
        })
        .collect();
    json!(addresses.into_iter().collect::<Vec<_>>().join(","))
}

/// The allowances an update makes for what the stored object already holds.
#[derive(Default, Clone, Copy)]
struct Allow {
    invalid_secret_name: bool,
    invalid_wildcard_host_rule: bool,
}

/// A reference's required, path-segment `kind` or `name`.
fn reference_part_errors(r: &Value, key: &str, path: &str) -> Vec<StatusCause> {
    match r[key].as_str().unwrap_or("") {
        "" => vec![field::required(&format!("{path}.{key}"), "")],
        v => invalid_each(&format!("{path}.{key}"), &json!(v), path_segment_errors(v)),
    }
}

/// `validateIngressBackend`: a Service port or a resource, not both.
fn backend_errors(backend: &Value, path: &str) -> Vec<StatusCause> {
    let (resource, service) = (&backend["resource"], &backend["service"]);
    match (resource.is_object(), service.is_object()) {
        (true, true) => vec![field::invalid(
            path,
            &json!(""),
            "cannot set both resource and service backends",
        )],
        (true, false) => {
            let p = format!("{path}.resource");
            let mut errs = Vec::new();
            if let Some(group) = resource["apiGroup"].as_str() {
                let msgs = dns1123_subdomain_errors(group);
                errs.extend(invalid_each(&format!("{p}.apiGroup"), &json!(group), msgs));
            }
            errs.extend(reference_part_errors(resource, "kind", &p));
            errs.extend(reference_part_errors(resource, "name", &p));
            errs
        }
        (false, true) => service_backend_errors(service, path),
        (false, false) => vec![field::invalid(
            path,
            &json!(""),
            "resource or service backend is required",
        )],
    }
}

/// A Service backend: a DNS label name (the relaxed rule, on by default in 1.36) and one of a
/// port name or number.
fn service_backend_errors(service: &Value, path: &str) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let name_path = format!("{path}.service.name");
    match service["name"].as_str().unwrap_or("") {
        "" => errs.push(field::required(&name_path, "")),
        name => errs.extend(invalid_each(
            &name_path,
            &json!(name),
            dns1123_label_errors(name),
        )),
    }
    let port = &service["port"];
    let name = port["name"].as_str().unwrap_or("");
    let number = port["number"].as_i64().unwrap_or(0);
    match (name.is_empty(), number == 0) {
        (false, false) => errs.push(field::invalid(
            path,
            &json!(""),
            "cannot set both port name & port number",
        )),
        (false, true) => errs.extend(invalid_each(
            &format!("{path}.service.port.name"),
            &json!(name),
            port_name_errors(name),
        )),
        (true, false) => errs.extend(invalid_each(
            &format!("{path}.service.port.number"),
            &json!(number),
            port_number_errors(number),
        )),
        (true, true) => errs.push(field::required(path, "port name or number is required")),
    }
    errs
}

/// `validateHTTPIngressPath`: a path type, an absolute clean path for Exact and Prefix.
fn http_path_errors(p: &Value, path: &str) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let value = p["path"].as_str().unwrap_or("");
    let path_path = format!("{path}.path");
    let absolute = || field::invalid(&path_path, &json!(value), "must be an absolute path");
    match p["pathType"].as_str() {
        None => {
            return vec![field::required(
                &format!("{path}.pathType"),
                "pathType must be specified",
            )]
        }
        Some("Exact") | Some("Prefix") => {
            if !value.starts_with('/') {
                errs.push(absolute());
            }
            for seq in ["//", "/./", "/../", "%2f", "%2F"] {
                if value.contains(seq) {
                    let msg = format!("must not contain '{seq}'");
                    errs.push(field::invalid(&path_path, &json!(value), &msg));
                }
            }
            for suffix in ["/..", "/."] {
                if value.ends_with(suffix) {
                    let msg = format!("cannot end with '{suffix}'");
                    errs.push(field::invalid(&path_path, &json!(value), &msg));
                }
            }
        }
        Some("ImplementationSpecific") => {
            if !value.is_empty() && !value.starts_with('/') {
                errs.push(absolute());
            }
        }
        Some(other) => errs.push(field::not_supported(
            &format!("{path}.pathType"),
            &json!(other),
            &["Exact", "ImplementationSpecific", "Prefix"],
        )),
    }
    errs.extend(backend_errors(&p["backend"], &format!("{path}.backend")));
    errs
}

/// `validateIngressRuleValue`: an HTTP rule has paths, each valid.
fn rule_value_errors(rule: &Value, path: &str) -> Vec<StatusCause> {
    let http = &rule["http"];
    if !http.is_object() {
        return Vec::new();
    }
    let paths = http["paths"].as_array().map_or(&[][..], Vec::as_slice);
    let mut errs = Vec::new();
    if paths.is_empty() {
        errs.push(field::required(&format!("{path}.http.paths"), ""));
    }
    for (i, p) in paths.iter().enumerate() {
        errs.extend(http_path_errors(p, &format!("{path}.http.paths[{i}]")));
    }
    errs
}

/// A rule's or TLS entry's host: a DNS name (perhaps a wildcard one), not an IP.
fn host_errors(host: &str, path: &str, reject_ip: bool) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    if reject_ip && parse_ip_sloppy(host).is_some() {
        errs.push(field::invalid(
            path,
            &json!(host),
            "must be a DNS name, not an IP address",
        ));
    }
    let msgs = if host.contains('*') {
        wildcard_dns1123_subdomain_errors(host)
    } else {
        dns1123_subdomain_errors(host)
    };
    errs.extend(invalid_each(path, &json!(host), msgs));
    errs
}

fn rules_errors(rules: &[Value], allow: Allow) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    for (i, rule) in rules.iter().enumerate() {
        let path = format!("spec.rules[{i}]");
        let host = rule["host"].as_str().unwrap_or("");
        if !host.is_empty() {
            errs.extend(host_errors(host, &format!("{path}.host"), true));
        }
        if !host.contains('*') || !allow.invalid_wildcard_host_rule {
            errs.extend(rule_value_errors(rule, &path));
        }
    }
    errs
}

fn tls_errors(tls: &[Value], allow: Allow) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    for (i, entry) in tls.iter().enumerate() {
        let hosts = entry["hosts"].as_array().into_iter().flatten();
        for (j, host) in hosts.enumerate() {
            let host = host.as_str().unwrap_or("");
            errs.extend(host_errors(
                host,
                &format!("spec.tls[{i}].hosts[{j}]"),
                false,
            ));
        }
        let secret = entry["secretName"].as_str().unwrap_or("");
        if !allow.invalid_secret_name && !secret.is_empty() {
            let msgs = dns1123_subdomain_errors(secret);
            errs.extend(invalid_each(
                &format!("spec.tls[{i}].secretName"),
                &json!(secret),
                msgs,
            ));
        }
    }
    errs
}

/// `ValidateIngressSpec`.
fn spec_errors(obj: &Value, allow: Allow) -> Vec<StatusCause> {
    let spec = &obj["spec"];
    let rules = spec["rules"].as_array().map_or(&[][..], Vec::as_slice);
    let mut errs = Vec::new();
    let default_backend = &spec["defaultBackend"];
    if rules.is_empty() && !default_backend.is_object() {
        errs.push(field::invalid(
            "spec",
            &Value::Null,
            "either `defaultBackend` or `rules` must be specified",
        ));
    }
    if default_backend.is_object() {
        errs.extend(backend_errors(default_backend, "spec.defaultBackend"));
    }
    errs.extend(rules_errors(rules, allow));
    errs.extend(tls_errors(
        spec["tls"].as_array().map_or(&[][..], Vec::as_slice),
        allow,
    ));
    if let Some(class) = spec["ingressClassName"].as_str() {
        let msgs = dns1123_subdomain_errors(class);
        errs.extend(invalid_each("spec.ingressClassName", &json!(class), msgs));
    }
    errs
}

/// The allowances for what `old` already holds: invalid TLS secret names, wildcard-host rules
/// with invalid values.
fn allowances(old: &Value) -> Allow {
    let spec = &old["spec"];
    let tls = spec["tls"].as_array().into_iter().flatten();
    let secrets = tls
        .filter_map(|t| t["secretName"].as_str())
        .filter(|s| !s.is_empty());
    let rules = spec["rules"].as_array().into_iter().flatten();
    Allow {
        invalid_secret_name: secrets
            .into_iter()
            .any(|s| !dns1123_subdomain_errors(s).is_empty()),
        invalid_wildcard_host_rule: rules.into_iter().any(|r| {
            r["host"].as_str().is_some_and(|h| h.contains('*'))
                && !rule_value_errors(r, "").is_empty()
        }),
    }
}

/// networking/v1 Ingress.
pub struct IngressStrategy;

impl Strategy for IngressStrategy {
    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        obj["status"] = json!({"loadBalancer": {}});
    }

    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        obj["status"] = old.get("status").cloned().unwrap_or(Value::Null);
        if obj["status"].is_null() {
            if let Some(o) = obj.as_object_mut() {
                o.remove("status");
            }
        }
        bump_generation(obj, old, true);
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        let mut errs = spec_errors(obj, Allow::default());
        let annotation = &obj["metadata"]["annotations"][CLASS_ANNOTATION];
        let class = &obj["spec"]["ingressClassName"];
        if let (Some(a), Some(c)) = (annotation.as_str(), class.as_str()) {
            if a != c {
                errs.push(field::invalid(
                    &format!("annotations.{CLASS_ANNOTATION}"),
                    annotation,
                    "must match `ingressClassName` when both are specified",
                ));
            }
        }
        errs
    }

    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        spec_errors(obj, allowances(old))
    }

    fn warnings_on_create(&self, obj: &Value) -> Vec<String> {
        let annotated = obj["metadata"]["annotations"]
            .get(CLASS_ANNOTATION)
            .is_some();
        if annotated && obj["spec"]["ingressClassName"].is_null() {
            vec![format!(
                "annotation {CLASS_ANNOTATION:?} is deprecated, please use 'spec.ingressClassName' instead"
            )]
        } else {
            Vec::new()
        }
    }
}

/// `ingresses/status`: only the status changes; load balancer IPs and hostnames are checked
/// (IPs the stored status already had stay allowed).
pub struct IngressStatusStrategy;

impl Strategy for IngressStatusStrategy {
    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        keep_only_status(obj, old);
    }

    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        let old_entries = old["status"]["loadBalancer"]["ingress"].as_array();
        let old_ips: Vec<&str> = old_entries
            .into_iter()
            .flatten()
            .filter_map(|i| i["ip"].as_str())
            .filter(|ip| !ip.is_empty())
            .collect();
        let mut errs = Vec::new();
        let entries = obj["status"]["loadBalancer"]["ingress"].as_array();
        for (i, entry) in entries.into_iter().flatten().enumerate() {
            let path = format!("status.loadBalancer.ingress[{i}]");
            if let Some(ip) = entry["ip"].as_str().filter(|s| !s.is_empty()) {
                errs.extend(legacy_ip_errors(&format!("{path}.ip"), ip, &old_ips));
            }
            if let Some(host) = entry["hostname"].as_str().filter(|s| !s.is_empty()) {
                let msgs = dns1123_subdomain_errors(host);
                errs.extend(invalid_each(
                    &format!("{path}.hostname"),
                    &json!(host),
                    msgs,
                ));
                if parse_ip_sloppy(host).is_some() {
                    errs.push(field::invalid(
                        &format!("{path}.hostname"),
                        &json!(host),
                        "must be a DNS name, not an IP address",
                    ));
                }
            }
        }
        errs
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::rendered as messages;

    #[test]
    fn rules_paths_and_backends() {
        let ing = json!({"spec": {"rules": [
            {"host": "1.2.3.4", "http": {"paths": [
                {"path": "a//b/.", "pathType": "Prefix", "backend": {"service": {"name": "my.svc", "port": {}}}},
                {"path": "/x", "backend": {}},
                {"path": "/", "pathType": "Exact", "backend": {"resource": {"kind": "", "name": "x"},
                    "service": {"name": "s", "port": {"number": 80}}}}]}},
            {"host": "*.foo.com"}, {"host": "*"}]}});
        let errs = messages(IngressStrategy.validate(&ing));
        assert_eq!(
            errs[..8],
            [
                "spec.rules[0].host: Invalid value: \"1.2.3.4\": must be a DNS name, not an IP address",
                "spec.rules[0].http.paths[0].path: Invalid value: \"a//b/.\": must be an absolute path",
                "spec.rules[0].http.paths[0].path: Invalid value: \"a//b/.\": must not contain '//'",
                "spec.rules[0].http.paths[0].path: Invalid value: \"a//b/.\": cannot end with '/.'",
                "spec.rules[0].http.paths[0].backend.service.name: Invalid value: \"my.svc\": must not contain dots",
                "spec.rules[0].http.paths[0].backend: Required value: port name or number is required",
                "spec.rules[0].http.paths[1].pathType: Required value: pathType must be specified",
                "spec.rules[0].http.paths[2].backend: Invalid value: \"\": cannot set both resource and service backends",
            ]
        );
        assert!(errs[8].starts_with(
            "spec.rules[2].host: Invalid value: \"*\": a wildcard DNS-1123 subdomain"
        ));
        assert_eq!(errs.len(), 9);
        assert_eq!(
            messages(IngressStrategy.validate(&json!({"spec": {}}))),
            ["spec: Invalid value: null: either `defaultBackend` or `rules` must be specified"]
        );
    }

    #[test]
    fn cells() {
        let ing = json!({"spec": {"rules": [{"host": "a"}, {}, {"host": "b"}, {"host": "c"}, {"host": "d"}],
            "tls": [{}]},
            "status": {"loadBalancer": {"ingress": [{"ip": "10.0.0.2"}, {"hostname": "lb"}, {"ip": "10.0.0.1"}]}}});
        assert_eq!(hosts_cell(&ing), "a,b,c + 2 more...");
        assert_eq!(address_cell(&ing), "10.0.0.1,10.0.0.2,lb");
        assert_eq!(hosts_cell(&json!({})), "*");
    }
}
