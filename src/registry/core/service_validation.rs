//! The validation of core/v1 Services (`ValidateServiceCreate`, `ValidateServiceUpdate`,
//! `ValidateServiceStatusUpdate`, and the pre-checks of the IP family initialisation), with the
//! apiserver's messages and field paths, and the warnings it gives (`GetWarningsForService`).
//!
//! Not yet: `loadBalancerSourceRanges` CIDR syntax (only where it may be used is checked), the
//! topology annotations' deprecation warnings, and `trafficDistribution` values beyond the
//! supported list.

use std::collections::HashSet;

use serde_json::{json, Value};

use super::service::{
    externally_accessible, is_headless, needs_health_check, strings, svc_type, text,
};
use super::service_alloc::family_of;
use crate::error::{field, StatusCause};
use crate::registry::validation::{
    dns_label_errors, dns_subdomain_errors, endpoint_ip_errors, label_map_errors, legacy_ip_errors,
    port_num_or_name_errors, port_number_errors, qualified_name_errors,
};

/// The protocols of service and endpoint ports.
pub const PROTOCOLS: [&str; 3] = ["SCTP", "TCP", "UDP"];

/// Every error of a create (`old` is `None`) or an update. The IP family checks run first and,
/// when they fail, alone: the apiserver makes them before it allocates, and stops there.
pub fn validate(svc: &Value, old: Option<&Value>) -> Vec<StatusCause> {
    let mut early = cluster_ips_related_errors(svc, old);
    if early.is_empty() {
        early = ip_family_errors(svc, old);
    }
    if !early.is_empty() {
        return early;
    }
    let mut errs = Vec::new();
    if let Some(old) = old {
        errs.extend(upgrade_downgrade_errors(old, svc));
        let same_hc = svc["spec"]["healthCheckNodePort"] == old["spec"]["healthCheckNodePort"];
        if needs_health_check(old) && needs_health_check(svc) && !same_hc {
            errs.push(field::forbidden(
                "spec.healthCheckNodePort",
                "field is immutable",
            ));
        }
        let both_lb = svc_type(old) == "LoadBalancer" && svc_type(svc) == "LoadBalancer";
        let class = &svc["spec"]["loadBalancerClass"];
        if both_lb && *class != old["spec"]["loadBalancerClass"] {
            errs.push(field::invalid(
                "spec.loadBalancerClass",
                class,
                "may not change once set",
            ));
        }
    }
    errs.extend(service_errors(svc, old));
    errs
}

/// `validateService`.
fn service_errors(svc: &Value, old: Option<&Value>) -> Vec<StatusCause> {
    let spec = &svc["spec"];
    let mut errs = topology_annotation_errors(svc);
    let ports = spec["ports"].as_array().cloned().unwrap_or_default();
    let type_ = svc_type(svc);
    if ports.is_empty() && !is_headless(svc) && type_ != "ExternalName" {
        errs.push(field::required("spec.ports", ""));
    }
    errs.extend(type_specific_errors(svc));
    let mut names = HashSet::new();
    for (i, p) in ports.iter().enumerate() {
        errs.extend(port_errors(
            p,
            ports.len() > 1,
            &mut names,
            &format!("spec.ports[{i}]"),
        ));
    }
    if spec["selector"].is_object() {
        errs.extend(label_map_errors("spec.selector", &spec["selector"]));
    }
    errs.extend(session_affinity_errors(spec));
    errs.extend(cluster_ips_related_errors(svc, old));
    let old_externals = old
        .map(|o| strings(&o["spec"]["externalIPs"]))
        .unwrap_or_default();
    let old_refs: Vec<&str> = old_externals.iter().map(String::as_str).collect();
    for (i, ip) in strings(&spec["externalIPs"]).iter().enumerate() {
        let path = format!("spec.externalIPs[{i}]");
        let ip_errs = legacy_ip_errors(&path, ip, &old_refs);
        if ip_errs.is_empty() {
            errs.extend(endpoint_ip_errors(&path, ip));
        }
        errs.extend(ip_errs);
    }
    let types = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"];
    if type_.is_empty() {
        errs.push(field::required("spec.type", ""));
    } else if !types.contains(&type_) {
        errs.push(field::not_supported("spec.type", &json!(type_), &types));
    }
    errs.extend(node_port_errors(svc, &ports));
    errs.extend(load_balancer_errors(svc));
    errs.extend(traffic_policy_errors(svc));
    errs
}

/// The topology annotations must agree when both are set.
fn topology_annotation_errors(svc: &Value) -> Vec<StatusCause> {
    let annotations = &svc["metadata"]["annotations"];
    let mode = annotations.get("service.kubernetes.io/topology-mode");
    let hints = annotations.get("service.kubernetes.io/topology-aware-hints");
    match (mode, hints) {
        (Some(m), Some(h)) if m != h => vec![field::invalid(
            "metadata.annotations[service.kubernetes.io/topology-mode]",
            m,
            "must match annotations[service.kubernetes.io/topology-aware-hints] when both are specified",
        )],
        _ => Vec::new(),
    }
}

/// The rules of each type: no headless node ports or load balancers, an ExternalName's name.
fn type_specific_errors(svc: &Value) -> Vec<StatusCause> {
    let spec = &svc["spec"];
    let mut errs = Vec::new();
    match svc_type(svc) {
        t @ ("LoadBalancer" | "NodePort") if is_headless(svc) => {
            errs.push(field::invalid(
                "spec.clusterIPs[0]",
                &spec["clusterIPs"][0],
                &format!("may not be set to 'None' for {t} services"),
            ));
        }
        "ExternalName" => {
            let forbidden = "may not be set for ExternalName services";
            if !strings(&spec["clusterIPs"]).is_empty() {
                errs.push(field::forbidden("spec.clusterIPs", forbidden));
            }
            if !strings(&spec["ipFamilies"]).is_empty() {
                errs.push(field::forbidden("spec.ipFamilies", forbidden));
            }
            if !spec["ipFamilyPolicy"].is_null() {
                errs.push(field::forbidden("spec.ipFamilyPolicy", forbidden));
            }
            let cname = text(spec, "externalName");
            let cname = cname.strip_suffix('.').unwrap_or(cname);
            if cname.is_empty() {
                errs.push(field::required("spec.externalName", ""));
            } else {
                errs.extend(dns_subdomain_errors("spec.externalName", cname));
            }
        }
        _ => {}
    }
    errs
}

/// `validateServicePort`.
fn port_errors(
    p: &Value,
    require_name: bool,
    names: &mut HashSet<String>,
    path: &str,
) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let name = text(p, "name");
    if require_name && name.is_empty() {
        errs.push(field::required(&format!("{path}.name"), ""));
    } else if !name.is_empty() {
        errs.extend(dns_label_errors(&format!("{path}.name"), name));
        if !names.insert(name.to_string()) {
            errs.push(field::duplicate(&format!("{path}.name"), &json!(name)));
        }
    }
    let port = p["port"].as_i64().unwrap_or(0);
    for m in port_number_errors(port) {
        errs.push(field::invalid(&format!("{path}.port"), &json!(port), &m));
    }
    let protocol = text(p, "protocol");
    if protocol.is_empty() {
        errs.push(field::required(&format!("{path}.protocol"), ""));
    } else if !PROTOCOLS.contains(&protocol) {
        errs.push(field::not_supported(
            &format!("{path}.protocol"),
            &json!(protocol),
            &PROTOCOLS,
        ));
    }
    let target = if p["targetPort"].is_null() {
        json!(0)
    } else {
        p["targetPort"].clone()
    };
    errs.extend(port_num_or_name_errors(
        &format!("{path}.targetPort"),
        &target,
    ));
    if let Some(app) = p["appProtocol"].as_str() {
        errs.extend(qualified_name_errors(&format!("{path}.appProtocol"), app));
    }
    errs
}

/// Session affinity: a supported type, and a ClientIP timeout in (0, 86400].
fn session_affinity_errors(spec: &Value) -> Vec<StatusCause> {
    let affinity = text(spec, "sessionAffinity");
    let mut errs = Vec::new();
    if affinity.is_empty() {
        errs.push(field::required("spec.sessionAffinity", ""));
    } else if affinity != "ClientIP" && affinity != "None" {
        errs.push(field::not_supported(
            "spec.sessionAffinity",
            &json!(affinity),
            &["ClientIP", "None"],
        ));
    }
    let config = &spec["sessionAffinityConfig"];
    if affinity == "None" && !config.is_null() {
        errs.push(field::forbidden(
            "spec.sessionAffinityConfig",
            "must not be set when session affinity is None",
        ));
    }
    if affinity == "ClientIP" {
        let detail = "when session affinity type is ClientIP";
        let timeout = &config["clientIP"]["timeoutSeconds"];
        if config.is_null() {
            errs.push(field::required("spec.sessionAffinityConfig", detail));
        } else if config["clientIP"].is_null() {
            errs.push(field::required(
                "spec.sessionAffinityConfig.clientIP",
                detail,
            ));
        } else if timeout.is_null() {
            errs.push(field::required(
                "spec.sessionAffinityConfig.clientIP.timeoutSeconds",
                detail,
            ));
        } else if !(1..=86400).contains(&timeout.as_i64().unwrap_or(0)) {
            errs.push(field::invalid(
                "spec.sessionAffinityConfig.clientIP.timeoutSeconds",
                timeout,
                "must be greater than 0 and less than 86400",
            ));
        }
    }
    errs
}

/// `ValidateServiceClusterIPsRelatedFields`.
pub fn cluster_ips_related_errors(svc: &Value, old: Option<&Value>) -> Vec<StatusCause> {
    if svc_type(svc) == "ExternalName" {
        return Vec::new();
    }
    let spec = &svc["spec"];
    let ip = text(spec, "clusterIP");
    let ips = strings(&spec["clusterIPs"]);
    let ips_value = json!(ips);
    let mut errs = Vec::new();
    if !ip.is_empty() {
        if ips.is_empty() {
            errs.push(field::required("spec.clusterIPs", ""));
        } else if ips[0] != ip {
            errs.push(field::invalid(
                "spec.clusterIPs",
                &ips_value,
                "first value must match `clusterIP`",
            ));
        }
    } else if !ips.is_empty() {
        errs.push(field::invalid(
            "spec.clusterIPs",
            &ips_value,
            "must be empty when `clusterIP` is not specified",
        ));
    }
    let mut seen = HashSet::new();
    for (i, fam) in strings(&spec["ipFamilies"]).iter().enumerate() {
        let path = format!("spec.ipFamilies[{i}]");
        if fam != "IPv4" && fam != "IPv6" {
            errs.push(field::not_supported(&path, &json!(fam), &["IPv4", "IPv6"]));
        }
        if !seen.insert(fam.clone()) {
            errs.push(field::duplicate(&path, &json!(fam)));
        }
    }
    let policies = ["PreferDualStack", "RequireDualStack", "SingleStack"];
    if let Some(policy) = spec["ipFamilyPolicy"].as_str() {
        if !policies.contains(&policy) {
            errs.push(field::not_supported(
                "spec.ipFamilyPolicy",
                &json!(policy),
                &policies,
            ));
        }
    }
    let old_ips = old
        .map(|o| strings(&o["spec"]["clusterIPs"]))
        .unwrap_or_default();
    let old_refs: Vec<&str> = old_ips.iter().map(String::as_str).collect();
    let mut invalid = false;
    for (i, ip) in ips.iter().enumerate() {
        if i == 0 && ip == "None" {
            if ips.len() > 1 {
                invalid = true;
                errs.push(field::invalid(
                    "spec.clusterIPs",
                    &ips_value,
                    "'None' must be the first and only value",
                ));
            }
            continue;
        }
        let ip_errs = legacy_ip_errors(&format!("spec.clusterIPs[{i}]"), ip, &old_refs);
        invalid |= !ip_errs.is_empty();
        errs.extend(ip_errs);
    }
    if ips.len() > 2 {
        errs.push(field::invalid(
            "spec.clusterIPs",
            &ips_value,
            "may only hold up to 2 values",
        ));
    }
    if invalid {
        return errs;
    }
    if ips.len() > 1 && family_of(&ips[0]) == family_of(&ips[1]) {
        errs.push(field::invalid(
            "spec.clusterIPs",
            &ips_value,
            "may specify no more than one IP for each IP family",
        ));
    }
    if !is_headless(svc) {
        let families = strings(&spec["ipFamilies"]);
        for (i, (ip, fam)) in ips.iter().zip(&families).enumerate() {
            if fam != family_of(ip) && (fam == "IPv4" || fam == "IPv6") {
                errs.push(field::invalid(
                    &format!("spec.clusterIPs[{i}]"),
                    &json!(ip),
                    &format!("expected an {fam} value as indicated by `ipFamilies[{i}]`"),
                ));
            }
        }
    }
    errs
}

/// The checks of `initIPFamilyFields` on a single-stack IPv4 cluster.
pub fn ip_family_errors(svc: &Value, old: Option<&Value>) -> Vec<StatusCause> {
    if svc_type(svc) == "ExternalName" {
        return Vec::new();
    }
    let spec = &svc["spec"];
    let policy = &spec["ipFamilyPolicy"];
    let single = policy == "SingleStack";
    let ips = strings(&spec["clusterIPs"]);
    let families = strings(&spec["ipFamilies"]);
    let mut errs = Vec::new();
    if let Some(old) = old.filter(|_| !single) {
        let old_ips = strings(&old["spec"]["clusterIPs"]);
        let old_families = strings(&old["spec"]["ipFamilies"]);
        if ips.len() < old_ips.len() {
            errs.push(field::invalid(
                "spec.ipFamilyPolicy",
                policy,
                "must be 'SingleStack' to release the secondary cluster IP",
            ));
        }
        if families.len() < old_families.len() {
            errs.push(field::invalid(
                "spec.ipFamilyPolicy",
                policy,
                "must be 'SingleStack' to release the secondary IP family",
            ));
        }
    }
    if single && ips.len() == 2 {
        errs.push(field::invalid("spec.ipFamilyPolicy", policy, "must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified"));
    }
    if single && families.len() == 2 {
        errs.push(field::invalid("spec.ipFamilyPolicy", policy, "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified"));
    }
    for (i, ip) in ips.iter().enumerate().skip(families.len()) {
        if ip == "None" {
            break;
        }
        if family_of(ip) == "IPv6" {
            errs.push(field::invalid(
                &format!("spec.clusterIPs[{i}]"),
                &json!(ips),
                "IPv6 is not configured on this cluster",
            ));
        }
    }
    let headless_selectorless = text(spec, "clusterIP") == "None"
        && spec["selector"].as_object().is_none_or(|m| m.is_empty());
    if !errs.is_empty() || headless_selectorless {
        return errs;
    }
    if policy == "RequireDualStack" {
        errs.push(field::invalid(
            "spec.ipFamilyPolicy",
            policy,
            "this cluster is not configured for dual-stack services",
        ));
    }
    for (i, fam) in families.iter().enumerate() {
        if fam != "IPv4" {
            errs.push(field::invalid(
                &format!("spec.ipFamilies[{i}]"),
                &json!(fam),
                "not configured on this cluster",
            ));
        }
    }
    errs
}

/// `validateUpgradeDowngradeClusterIPs` and `validateUpgradeDowngradeIPFamilies` as they apply
/// to a single-stack cluster: the primary cluster IP and family never change.
fn upgrade_downgrade_errors(old: &Value, svc: &Value) -> Vec<StatusCause> {
    if svc_type(svc) == "ExternalName" || svc_type(old) == "ExternalName" {
        return Vec::new();
    }
    let mut errs = Vec::new();
    let (ips, old_ips) = (
        strings(&svc["spec"]["clusterIPs"]),
        strings(&old["spec"]["clusterIPs"]),
    );
    let ips_value = json!(ips);
    if !(is_headless(old) && is_headless(svc)) {
        if ips.len() == old_ips.len() {
            for (i, ip) in old_ips.iter().enumerate() {
                if *ip != ips[i] {
                    errs.push(field::invalid(
                        &format!("spec.clusterIPs[{i}]"),
                        &ips_value,
                        "may not change once set",
                    ));
                }
            }
        } else if ips.is_empty() {
            errs.push(field::invalid(
                "spec.clusterIPs[0]",
                &ips_value,
                "primary clusterIP can not be unset",
            ));
        } else if !old_ips.is_empty() && ips[0] != old_ips[0] {
            errs.push(field::invalid(
                "spec.clusterIPs[0]",
                &ips_value,
                "may not change once set",
            ));
        }
    }
    if is_headless(old) != is_headless(svc) || is_headless(svc) {
        return errs;
    }
    let (fams, old_fams) = (
        strings(&svc["spec"]["ipFamilies"]),
        strings(&old["spec"]["ipFamilies"]),
    );
    if fams.len() == old_fams.len() {
        for (i, fam) in old_fams.iter().enumerate() {
            if *fam != fams[i] {
                errs.push(field::invalid(
                    "spec.ipFamilies[0]",
                    &json!(fams),
                    "may not change once set",
                ));
            }
        }
    }
    errs
}

/// No node ports on ClusterIP services, no duplicate node ports or ports per protocol.
fn node_port_errors(svc: &Value, ports: &[Value]) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    if svc_type(svc) == "ClusterIP" {
        for (i, p) in ports.iter().enumerate() {
            if p["nodePort"].as_i64().unwrap_or(0) != 0 {
                errs.push(field::forbidden(
                    &format!("spec.ports[{i}].nodePort"),
                    "may not be used when `type` is 'ClusterIP'",
                ));
            }
        }
    }
    let mut node_ports = HashSet::new();
    for (i, p) in ports.iter().enumerate() {
        let node_port = p["nodePort"].as_i64().unwrap_or(0);
        if node_port != 0 && !node_ports.insert((text(p, "protocol").to_string(), node_port)) {
            errs.push(field::duplicate(
                &format!("spec.ports[{i}].nodePort"),
                &json!(node_port),
            ));
        }
    }
    let mut seen = HashSet::new();
    for (i, p) in ports.iter().enumerate() {
        let key = (
            text(p, "protocol").to_string(),
            p["port"].as_i64().unwrap_or(0),
        );
        if !seen.insert(key.clone()) {
            // The apiserver prints the internal ServicePort it compares, which has no JSON tags.
            let shown = format!(
                "{{\"Name\":\"\",\"Protocol\":{},\"AppProtocol\":null,\"Port\":{},\"TargetPort\":0,\"NodePort\":0}}",
                json!(key.0),
                key.1
            );
            let mut cause = field::duplicate(&format!("spec.ports[{i}]"), &Value::Null);
            cause.message = format!("Duplicate value: {shown}");
            errs.push(cause);
        }
    }
    errs
}

/// The fields only load balancers may use.
fn load_balancer_errors(svc: &Value) -> Vec<StatusCause> {
    let spec = &svc["spec"];
    let is_lb = svc_type(svc) == "LoadBalancer";
    let mut errs = Vec::new();
    let only_lb = "may only be used when `type` is 'LoadBalancer'";
    let ranges = spec["loadBalancerSourceRanges"]
        .as_array()
        .is_some_and(|a| !a.is_empty());
    if ranges && !is_lb {
        errs.push(field::forbidden("spec.LoadBalancerSourceRanges", only_lb));
    }
    let alloc = &spec["allocateLoadBalancerNodePorts"];
    if !alloc.is_null() && !is_lb {
        errs.push(field::forbidden(
            "spec.allocateLoadBalancerNodePorts",
            only_lb,
        ));
    }
    if is_lb && alloc.is_null() {
        errs.push(field::required("allocateLoadBalancerNodePorts", ""));
    }
    match spec["loadBalancerClass"].as_str() {
        Some(class) if is_lb => errs.extend(qualified_name_errors("spec.loadBalancerClass", class)),
        Some(_) => errs.push(field::forbidden("spec.loadBalancerClass", only_lb)),
        None => {}
    }
    errs
}

/// External and internal traffic policies, the health check port, traffic distribution.
fn traffic_policy_errors(svc: &Value) -> Vec<StatusCause> {
    let spec = &svc["spec"];
    let mut errs = Vec::new();
    let etp = text(spec, "externalTrafficPolicy");
    if !externally_accessible(svc) {
        if !etp.is_empty() {
            errs.push(field::invalid(
                "spec.externalTrafficPolicy",
                &json!(etp),
                "may only be set for externally-accessible services",
            ));
        }
    } else if etp.is_empty() {
        errs.push(field::required("spec.externalTrafficPolicy", ""));
    } else if etp != "Cluster" && etp != "Local" {
        errs.push(field::not_supported(
            "spec.externalTrafficPolicy",
            &json!(etp),
            &["Cluster", "Local"],
        ));
    }
    let hc = spec["healthCheckNodePort"].as_i64().unwrap_or(0);
    if !needs_health_check(svc) {
        if hc != 0 {
            errs.push(field::invalid("spec.healthCheckNodePort", &json!(hc), "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'"));
        }
    } else if hc == 0 {
        errs.push(field::required("spec.healthCheckNodePort", ""));
    } else {
        for m in port_number_errors(hc) {
            errs.push(field::invalid("spec.healthCheckNodePort", &json!(hc), &m));
        }
    }
    let itp = &spec["internalTrafficPolicy"];
    if itp.is_null() && ["NodePort", "LoadBalancer", "ClusterIP"].contains(&svc_type(svc)) {
        errs.push(field::required("spec.internalTrafficPolicy", ""));
    }
    if let Some(p) = itp.as_str().filter(|p| *p != "Cluster" && *p != "Local") {
        errs.push(field::not_supported(
            "spec.internalTrafficPolicy",
            &json!(p),
            &["Cluster", "Local"],
        ));
    }
    let distributions = ["PreferClose", "PreferSameZone", "PreferSameNode"];
    if let Some(d) = spec["trafficDistribution"]
        .as_str()
        .filter(|d| !distributions.contains(d))
    {
        errs.push(field::not_supported(
            "spec.trafficDistribution",
            &json!(d),
            &distributions,
        ));
    }
    errs
}

/// `ValidateLoadBalancerStatus` of a status write.
pub fn load_balancer_status_errors(svc: &Value) -> Vec<StatusCause> {
    let ingress = svc["status"]["loadBalancer"]["ingress"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if svc_type(svc) != "LoadBalancer" && !ingress.is_empty() {
        return vec![field::forbidden(
            "status.loadBalancer.ingress",
            "may only be used when `spec.type` is 'LoadBalancer'",
        )];
    }
    let mut errs = Vec::new();
    for (i, ing) in ingress.iter().enumerate() {
        let path = format!("status.loadBalancer.ingress[{i}]");
        let ip = text(ing, "ip");
        if !ip.is_empty() {
            errs.extend(legacy_ip_errors(&format!("{path}.ip"), ip, &[]));
        }
        match ing["ipMode"].as_str() {
            None if !ip.is_empty() => errs.push(field::required(
                &format!("{path}.ipMode"),
                "must be specified when `ip` is set",
            )),
            Some(_) if ip.is_empty() => errs.push(field::forbidden(
                &format!("{path}.ipMode"),
                "may not be specified when `ip` is not set",
            )),
            Some(m) if m != "Proxy" && m != "VIP" => errs.push(field::not_supported(
                &format!("{path}.ipMode"),
                &json!(m),
                &["Proxy", "VIP"],
            )),
            _ => {}
        }
        let host = text(ing, "hostname");
        if !host.is_empty() {
            errs.extend(dns_subdomain_errors(&format!("{path}.hostname"), host));
            if crate::registry::validation::parse_ip_sloppy(host).is_some() {
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

/// `GetWarningsForService`, for the cases a valid IPv4 service can hit.
pub fn warnings(svc: &Value) -> Vec<String> {
    let spec = &svc["spec"];
    let mut out = Vec::new();
    let annotations = &svc["metadata"]["annotations"];
    if annotations
        .get("service.kubernetes.io/topology-aware-hints")
        .is_some()
    {
        out.push("annotation service.kubernetes.io/topology-aware-hints is deprecated, please use service.kubernetes.io/topology-mode instead".into());
    }
    let externals = strings(&spec["externalIPs"]);
    if is_headless(svc) {
        if !text(spec, "loadBalancerIP").is_empty() {
            out.push("spec.loadBalancerIP is ignored for headless services".into());
        }
        if !externals.is_empty() {
            out.push("spec.externalIPs is ignored for headless services".into());
        }
        if text(spec, "sessionAffinity") != "None" {
            out.push("spec.SessionAffinity is ignored for headless services".into());
        }
    }
    let type_ = svc_type(svc);
    if !externals.is_empty() && !is_headless(svc) && type_ != "ExternalName" {
        out.push(
            "spec.externalIPs is deprecated and may no longer be implemented in some clusters"
                .into(),
        );
    }
    if type_ == "ExternalName" && !externals.is_empty() {
        out.push("spec.externalIPs is ignored when spec.type is \"ExternalName\"".into());
    }
    if type_ != "ExternalName" && !text(spec, "externalName").is_empty() {
        out.push("spec.externalName is ignored when spec.type is not \"ExternalName\"".into());
    }
    if text(spec, "trafficDistribution") == "PreferClose" {
        out.push(
            "spec.trafficDistribution: \"PreferClose\" is deprecated; use \"PreferSameZone\""
                .into(),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::rendered as messages;

    #[test]
    fn ports_as_the_apiserver_words_them() {
        let svc = json!({"metadata": {"name": "web"}, "spec": {"type": "ClusterIP", "sessionAffinity": "None",
            "ipFamilyPolicy": "SingleStack", "internalTrafficPolicy": "Cluster",
            "ports": [{"name": "a", "port": 80, "protocol": "TCP", "targetPort": 80},
                {"name": "b", "port": 80, "protocol": "TCP", "targetPort": 80, "nodePort": 30001},
                {"port": 70000, "protocol": "HTTP", "targetPort": "--x"}]}});
        assert_eq!(
            messages(validate(&svc, None)),
            [
                "spec.ports[2].name: Required value",
                "spec.ports[2].port: Invalid value: 70000: must be between 1 and 65535, inclusive",
                "spec.ports[2].protocol: Unsupported value: \"HTTP\": supported values: \"SCTP\", \"TCP\", \"UDP\"",
                "spec.ports[2].targetPort: Invalid value: \"--x\": must not contain consecutive hyphens",
                "spec.ports[2].targetPort: Invalid value: \"--x\": must not begin or end with a hyphen",
                "spec.ports[1].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'",
                "spec.ports[1]: Duplicate value: {\"Name\":\"\",\"Protocol\":\"TCP\",\"AppProtocol\":null,\"Port\":80,\"TargetPort\":0,\"NodePort\":0}",
            ]
        );
    }

    #[test]
    fn families_on_a_single_stack_cluster() {
        let svc = json!({"spec": {"type": "ClusterIP", "ipFamilyPolicy": "RequireDualStack", "selector": {"a": "b"}}});
        assert_eq!(
            messages(ip_family_errors(&svc, None)),
            ["spec.ipFamilyPolicy: Invalid value: \"RequireDualStack\": this cluster is not configured for dual-stack services"]
        );
        let v6 = json!({"spec": {"type": "ClusterIP", "clusterIP": "fd00::1", "clusterIPs": ["fd00::1"], "ipFamilyPolicy": "SingleStack"}});
        assert_eq!(
            messages(ip_family_errors(&v6, None)),
            ["spec.clusterIPs[0]: Invalid value: [\"fd00::1\"]: IPv6 is not configured on this cluster"]
        );
    }
}
