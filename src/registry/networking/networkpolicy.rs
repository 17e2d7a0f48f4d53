//! The networking/v1 NetworkPolicy kind: which pods a policy selects and the ingress and egress
//! peers and ports it allows. Ports default to TCP and `policyTypes` to `Ingress` (plus
//! `Egress` when egress rules are given); selectors, ports and IP blocks are validated as the
//! apiserver validates them, keeping the allowances it makes for invalid values an older object
//! already stored. Nothing enforces the policies (there is no network).

use std::sync::Arc;

use serde_json::{json, Value};

use crate::error::{field, StatusCause};
use crate::registry::builtin;
use crate::registry::resource::ApiResource;
use crate::registry::strategy::{bump_generation, Strategy};
use crate::registry::table::{Column, Columns};
use crate::registry::validation::{
    format_label_selector, invalid_each, label_selector_errors, legacy_cidr_errors,
    parse_cidr_sloppy, port_name_errors, port_number_errors, selector_has_invalid_values,
};
use crate::store::selector::generic_unsupported_field;

const POD_SELECTOR_DESCRIPTION: &str = "podSelector selects the pods to which this NetworkPolicy object applies. The array of rules is applied to any pods selected by this field. An empty selector matches all pods in the policy's namespace. Multiple network policies can select the same set of pods. In this case, the ingress rules for each are combined additively. This field is optional. If it is not specified, it defaults to an empty selector.";

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind(
        "networking.k8s.io",
        "v1",
        "networkpolicies",
        Arc::new(NetworkPolicyStrategy),
    )
    .with(|r| {
        r.unsupported_field(generic_unsupported_field)
            .table(Columns::new(vec![
                Column::name(),
                Column::computed("Pod-Selector", "string", 0, POD_SELECTOR_DESCRIPTION, |o| {
                    json!(format_label_selector(&o["spec"]["podSelector"]))
                }),
                Column::age("string"),
            ]))
    })
    .build()
}

/// What an update allows because the stored policy already had it.
struct Allow<'a> {
    invalid_label_values: bool,
    cidrs: Vec<&'a str>,
}

/// `ValidateNetworkPolicyPort`.
fn port_errors(port: &Value, path: &str) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    if let Some(p) = port["protocol"].as_str() {
        if !matches!(p, "TCP" | "UDP" | "SCTP") {
            let supported = ["TCP", "UDP", "SCTP"];
            errs.push(field::not_supported(
                &format!("{path}.protocol"),
                &json!(p),
                &supported,
            ));
        }
    }
    let (port_path, end_path) = (format!("{path}.port"), format!("{path}.endPort"));
    let end = &port["endPort"];
    match &port["port"] {
        Value::Number(n) => {
            let n = n.as_i64().unwrap_or(0);
            errs.extend(invalid_each(&port_path, &json!(n), port_number_errors(n)));
            if let Some(e) = end.as_i64() {
                if e < n {
                    let msg = "must be greater than or equal to `port`";
                    errs.push(field::invalid(&end_path, &json!(n), msg));
                }
                errs.extend(invalid_each(&end_path, end, port_number_errors(e)));
            }
        }
        Value::String(name) => {
            if !end.is_null() {
                let msg = "may not be specified when `port` is non-numeric";
                errs.push(field::invalid(&end_path, end, msg));
            }
            errs.extend(invalid_each(
                &port_path,
                &json!(name),
                port_name_errors(name),
            ));
        }
        _ if !end.is_null() => errs.push(field::invalid(
            &end_path,
            end,
            "may not be specified when `port` is not specified",
        )),
        _ => {}
    }
    errs
}

/// `ValidateIPBlock`: a CIDR and exceptions strictly inside it.
fn ip_block_errors(block: &Value, path: &str, allow: &Allow<'_>) -> Vec<StatusCause> {
    let cidr = block["cidr"].as_str().unwrap_or("");
    if cidr.is_empty() {
        return vec![field::required(&format!("{path}.cidr"), "")];
    }
    let mut errs = legacy_cidr_errors(&format!("{path}.cidr"), cidr, &allow.cidrs);
    let Some(net) = parse_cidr_sloppy(cidr) else {
        return errs;
    };
    let excepts = block["except"].as_array().into_iter().flatten();
    for (i, except) in excepts.enumerate() {
        let except = except.as_str().unwrap_or("");
        let p = format!("{path}.except[{i}]");
        errs.extend(legacy_cidr_errors(&p, except, &allow.cidrs));
        let Some(inner) = parse_cidr_sloppy(except) else {
            continue;
        };
        if !net.contains(&inner) || net.prefix >= inner.prefix {
            errs.push(field::invalid(
                &p,
                &json!(except),
                "must be a strict subset of `cidr`",
            ));
        }
    }
    errs
}

/// `ValidateNetworkPolicyPeer`: exactly one kind of peer, or selectors without an IP block.
fn peer_errors(peer: &Value, path: &str, allow: &Allow<'_>) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let mut peers = 0;
    for key in ["podSelector", "namespaceSelector"] {
        if peer[key].is_object() {
            peers += 1;
            let p = format!("{path}.{key}");
            errs.extend(label_selector_errors(
                &peer[key],
                &p,
                allow.invalid_label_values,
            ));
        }
    }
    let block = &peer["ipBlock"];
    if block.is_object() {
        peers += 1;
        errs.extend(ip_block_errors(block, &format!("{path}.ipBlock"), allow));
    }
    if peers == 0 {
        errs.push(field::required(path, "must specify a peer"));
    } else if peers > 1 && block.is_object() {
        errs.push(field::forbidden(
            path,
            "may not specify both ipBlock and another peer",
        ));
    }
    errs
}

/// The ports and peers of the `ingress` (peers in `from`) or `egress` (`to`) rules.
fn rules_errors(spec: &Value, dir: &str, peers: &str, allow: &Allow<'_>) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    for (i, rule) in spec[dir].as_array().into_iter().flatten().enumerate() {
        let path = format!("spec.{dir}[{i}]");
        let ports = rule["ports"].as_array().into_iter().flatten();
        for (j, port) in ports.enumerate() {
            errs.extend(port_errors(port, &format!("{path}.ports[{j}]")));
        }
        let list = rule[peers].as_array().into_iter().flatten();
        for (j, peer) in list.enumerate() {
            errs.extend(peer_errors(peer, &format!("{path}.{peers}[{j}]"), allow));
        }
    }
    errs
}

/// `ValidateNetworkPolicySpec`.
fn spec_errors(obj: &Value, allow: &Allow<'_>) -> Vec<StatusCause> {
    let spec = &obj["spec"];
    let selector = &spec["podSelector"];
    let mut errs = label_selector_errors(selector, "spec.podSelector", allow.invalid_label_values);
    errs.extend(rules_errors(spec, "ingress", "from", allow));
    errs.extend(rules_errors(spec, "egress", "to", allow));
    let types = spec["policyTypes"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    if types.len() > 2 {
        errs.push(field::invalid(
            "spec.policyTypes",
            &spec["policyTypes"],
            "may not specify more than two policyTypes",
        ));
        return errs;
    }
    for (i, t) in types.iter().enumerate() {
        if !matches!(t.as_str(), Some("Ingress") | Some("Egress")) {
            let path = format!("spec.policyTypes[{i}]");
            errs.push(field::not_supported(&path, t, &["Ingress", "Egress"]));
        }
    }
    errs
}

/// Every CIDR the stored policy's IP blocks hold (which an update may keep as they are).
fn stored_cidrs(old: &Value) -> Vec<&str> {
    let mut out = Vec::new();
    for (dir, peers) in [("ingress", "from"), ("egress", "to")] {
        let rules = old["spec"][dir].as_array().into_iter().flatten();
        for peer in rules.flat_map(|r| r[peers].as_array().into_iter().flatten()) {
            let block = &peer["ipBlock"];
            out.extend(block["cidr"].as_str());
            let excepts = block["except"].as_array().into_iter().flatten();
            out.extend(excepts.filter_map(Value::as_str));
        }
    }
    out
}

/// networking/v1 NetworkPolicy.
pub struct NetworkPolicyStrategy;

impl Strategy for NetworkPolicyStrategy {
    fn allow_unconditional_update(&self) -> bool {
        true
    }

    /// `SetDefaults_NetworkPolicyPort` and `SetDefaults_NetworkPolicy`.
    fn defaults(&self, obj: &mut Value) {
        for (dir, _) in [("ingress", "from"), ("egress", "to")] {
            let rules = obj
                .get_mut("spec")
                .and_then(|s| s.get_mut(dir))
                .and_then(Value::as_array_mut);
            for rule in rules.into_iter().flatten() {
                let ports = rule.get_mut("ports").and_then(Value::as_array_mut);
                for port in ports.into_iter().flatten().filter_map(Value::as_object_mut) {
                    if port.get("protocol").is_none_or(Value::is_null) {
                        port.insert("protocol".into(), json!("TCP"));
                    }
                }
            }
        }
        let spec = &obj["spec"];
        if spec["policyTypes"].as_array().is_none_or(Vec::is_empty) {
            let egress = spec["egress"].as_array().is_some_and(|e| !e.is_empty());
            let types = if egress {
                json!(["Ingress", "Egress"])
            } else {
                json!(["Ingress"])
            };
            if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
                spec.insert("policyTypes".into(), types);
            }
        }
    }

    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        bump_generation(obj, old, true);
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        let allow = Allow {
            invalid_label_values: false,
            cidrs: Vec::new(),
        };
        spec_errors(obj, &allow)
    }

    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        let allow = Allow {
            invalid_label_values: selector_has_invalid_values(&old["spec"]["podSelector"]),
            cidrs: stored_cidrs(old),
        };
        spec_errors(obj, &allow)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::rendered as messages;

    #[test]
    fn defaults_ports_and_peers() {
        let mut np = json!({"spec": {"podSelector": {}, "egress": [{"ports": [{"port": 53}]}]}});
        NetworkPolicyStrategy.defaults(&mut np);
        assert_eq!(np["spec"]["policyTypes"], json!(["Ingress", "Egress"]));
        assert_eq!(np["spec"]["egress"][0]["ports"][0]["protocol"], "TCP");
        let bad = json!({"spec": {"podSelector": {}, "ingress": [{
            "ports": [{"port": 80, "endPort": 70}, {"port": "http", "endPort": 90}, {"endPort": 5, "protocol": "ICMP"}],
            "from": [{}, {"ipBlock": {"cidr": "10.0.0.0/16", "except": ["10.1.0.0/24", "10.0.0.0/8"]},
                "podSelector": {}}]}],
            "policyTypes": ["Ingress", "Sideways"]}});
        assert_eq!(
            messages(NetworkPolicyStrategy.validate(&bad)),
            [
                "spec.ingress[0].ports[0].endPort: Invalid value: 80: must be greater than or equal to `port`",
                "spec.ingress[0].ports[1].endPort: Invalid value: 90: may not be specified when `port` is non-numeric",
                "spec.ingress[0].ports[2].protocol: Unsupported value: \"ICMP\": supported values: \"TCP\", \"UDP\", \"SCTP\"",
                "spec.ingress[0].ports[2].endPort: Invalid value: 5: may not be specified when `port` is not specified",
                "spec.ingress[0].from[0]: Required value: must specify a peer",
                "spec.ingress[0].from[1].ipBlock.except[0]: Invalid value: \"10.1.0.0/24\": must be a strict subset of `cidr`",
                "spec.ingress[0].from[1].ipBlock.except[1]: Invalid value: \"10.0.0.0/8\": must be a strict subset of `cidr`",
                "spec.ingress[0].from[1]: Forbidden: may not specify both ipBlock and another peer",
                "spec.policyTypes[1]: Unsupported value: \"Sideways\": supported values: \"Ingress\", \"Egress\"",
            ]
        );
        let old = json!({"spec": {"ingress": [{"from": [{"ipBlock": {"cidr": "10.0.0.1/8"}}]}]}});
        let kept = json!({"spec": {"ingress": [{"from": [{"ipBlock": {"cidr": "10.0.0.1/8"}}]}]}});
        assert!(NetworkPolicyStrategy
            .validate_update(&kept, &old)
            .is_empty());
        assert_eq!(NetworkPolicyStrategy.validate(&kept).len(), 1);
    }
}
