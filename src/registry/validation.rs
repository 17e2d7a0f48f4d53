//! Validation helpers the built-in kinds share, worded as
//! `k8s.io/apimachinery/pkg/util/validation` and `pkg/apis/core/validation` word them.

use std::net::IpAddr;

use serde_json::{json, Value};

use crate::error::{field, StatusCause};
pub use crate::machinery::names::{
    c_identifier_messages, dns1035_label_errors, dns1123_label_errors, dns1123_subdomain_errors,
    label_value_errors, qualified_name_messages, regex_error, wildcard_dns1123_subdomain_errors,
};
pub use crate::machinery::selector::{format_label_selector, label_selector_string};
use crate::registry::pointer::Pointer;

/// `IsConfigMapKey`: the keys of ConfigMap and Secret data.
pub fn config_map_key_errors(key: &str) -> Vec<&'static str> {
    let mut errs = Vec::new();
    if key.len() > 253 {
        errs.push("must be no more than 253 characters");
    }
    let valid = !key.is_empty()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'));
    if !valid {
        errs.push("a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')");
    }
    match key {
        "." => errs.push("must not be '.'"),
        ".." => errs.push("must not be '..'"),
        k if k.starts_with("..") => errs.push("must not start with '..'"),
        _ => {}
    }
    errs
}

/// The errors of a map of ConfigMap/Secret keys (`data[key]: Invalid value: "key": ...`).
pub fn data_key_errors(path: &str, map: &Value) -> Vec<StatusCause> {
    let mut out = Vec::new();
    for key in map.as_object().into_iter().flat_map(|m| m.keys()) {
        for msg in config_map_key_errors(key) {
            out.push(field::invalid(
                &format!("{path}[{key}]"),
                &Value::String(key.clone()),
                msg,
            ));
        }
    }
    out
}

/// `Forbidden: field is immutable when \`immutable\` is set` for each of `fields` that changed
/// (and for `immutable` itself when unset), once the old object was immutable.
pub fn immutable_data_errors(obj: &Value, old: &Value, fields: &[&str]) -> Vec<StatusCause> {
    if old["immutable"] != true {
        return Vec::new();
    }
    let msg = "field is immutable when `immutable` is set";
    let mut out = Vec::new();
    if obj["immutable"] != true {
        out.push(field::forbidden("immutable", msg));
    }
    for f in fields {
        if obj.get(*f) != old.get(*f) {
            out.push(field::forbidden(f, msg));
        }
    }
    out
}

/// `IsValidPortNum`.
pub fn port_number_errors(port: i64) -> Vec<String> {
    if (1..=65535).contains(&port) {
        Vec::new()
    } else {
        vec![PORT_RANGE_MSG.to_string()]
    }
}

/// `IsValidPortName`: an IANA service name.
pub fn port_name_errors(port: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if port.len() > 15 {
        errs.push("must be no more than 15 characters".to_string());
    }
    if !port
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        || port.is_empty()
    {
        errs.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)".into());
    }
    if !port.bytes().any(|b| b.is_ascii_lowercase()) {
        errs.push("must contain at least one letter (a-z)".into());
    }
    if port.contains("--") {
        errs.push("must not contain consecutive hyphens".into());
    }
    if port.starts_with('-') || port.ends_with('-') {
        errs.push("must not begin or end with a hyphen".into());
    }
    errs
}

/// One `Invalid` cause per message, all about `value` at `path`.
pub fn invalid_each(path: &str, value: &Value, msgs: Vec<String>) -> Vec<StatusCause> {
    msgs.iter()
        .map(|m| field::invalid(path, value, m))
        .collect()
}

/// `ValidateLabels` of a map at `path` (keys qualified names, values label values).
pub fn labels_errors(labels: &Value, path: &str) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    for (k, v) in labels.as_object().into_iter().flatten() {
        errs.extend(invalid_each(path, &json!(k), qualified_name_messages(k)));
        let v = v.as_str().unwrap_or("");
        errs.extend(invalid_each(path, &json!(v), label_value_errors(v)));
    }
    errs
}

/// `metav1validation.ValidateLabelSelector` at `path`; `allow_invalid_values` when the stored
/// object already had invalid values (the update ratchet).
pub fn label_selector_errors(
    selector: &Value,
    path: &str,
    allow_invalid_values: bool,
) -> Vec<StatusCause> {
    if !selector.is_object() {
        return Vec::new();
    }
    let mut errs = labels_errors(&selector["matchLabels"], &format!("{path}.matchLabels"));
    let exprs = selector["matchExpressions"].as_array();
    for (i, expr) in exprs.into_iter().flatten().enumerate() {
        let p = format!("{path}.matchExpressions[{i}]");
        let values = expr["values"].as_array().map_or(&[][..], Vec::as_slice);
        match expr["operator"].as_str().unwrap_or("") {
            "In" | "NotIn" if values.is_empty() => errs.push(field::required(
                &format!("{p}.values"),
                "must be specified when `operator` is 'In' or 'NotIn'",
            )),
            "Exists" | "DoesNotExist" if !values.is_empty() => errs.push(field::forbidden(
                &format!("{p}.values"),
                "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            )),
            "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
            other => errs.push(field::invalid(
                &format!("{p}.operator"),
                &json!(other),
                "not a valid selector operator",
            )),
        }
        let key = expr["key"].as_str().unwrap_or("");
        errs.extend(invalid_each(
            &format!("{p}.key"),
            &json!(key),
            qualified_name_messages(key),
        ));
        if !allow_invalid_values {
            for (j, v) in values.iter().enumerate() {
                let v = v.as_str().unwrap_or("");
                errs.extend(invalid_each(
                    &format!("{p}.values[{j}]"),
                    &json!(v),
                    label_value_errors(v),
                ));
            }
        }
    }
    errs
}

/// Whether a label selector has a value that is not a valid label value (the stored object's
/// test of the apiserver's `AllowInvalidLabelValueInSelector` ratchet).
pub fn selector_has_invalid_values(selector: &Value) -> bool {
    !label_selector_errors(selector, "", false).is_empty()
}

/// `ValidateNonnegativeField`.
pub fn nonnegative_errors(value: &Value, path: &str) -> Vec<StatusCause> {
    match value.as_i64() {
        Some(n) if n < 0 => vec![field::invalid(
            path,
            value,
            "must be greater than or equal to 0",
        )],
        _ => Vec::new(),
    }
}

/// `ValidatePositiveIntOrPercent` and `IsNotMoreThan100Percent` of an int-or-string at `path`.
pub fn int_or_percent_errors(value: &Value, path: &str) -> Vec<StatusCause> {
    match value {
        Value::String(s) => {
            let digits = s.strip_suffix('%').unwrap_or("");
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                let msg = regex_error(
                    "a valid percent string must be a numeric string followed by an ending '%'",
                    "[0-9]+%",
                    &["1%", "93%"],
                );
                return vec![field::invalid(path, value, &msg)];
            }
            match digits.parse::<u64>() {
                Ok(n) if n <= 100 => Vec::new(),
                _ => vec![field::invalid(path, value, "must not be greater than 100%")],
            }
        }
        Value::Number(_) => nonnegative_errors(value, path),
        _ => Vec::new(),
    }
}

/// `metav1validation.ValidateConditions` of a list of `metav1.Condition` at `path`.
pub fn conditions_errors(conditions: &Value, path: &str) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (i, c) in conditions.as_array().into_iter().flatten().enumerate() {
        let p = format!("{path}[{i}]");
        let type_ = c["type"].as_str().unwrap_or("");
        if !seen.insert(type_) {
            errs.push(field::duplicate(&format!("{p}.type"), &json!(type_)));
        }
        errs.extend(invalid_each(
            &format!("{p}.type"),
            &json!(type_),
            qualified_name_messages(type_),
        ));
        let status = c["status"].as_str().unwrap_or("");
        if !matches!(status, "True" | "False" | "Unknown") {
            errs.push(field::not_supported(
                &format!("{p}.status"),
                &json!(status),
                &["False", "True", "Unknown"],
            ));
        }
        if c["observedGeneration"].as_i64().is_some_and(|g| g < 0) {
            errs.push(field::invalid(
                &format!("{p}.observedGeneration"),
                &c["observedGeneration"],
                "must be greater than or equal to zero",
            ));
        }
        if c["lastTransitionTime"].as_str().is_none_or(str::is_empty) {
            errs.push(field::required(&format!("{p}.lastTransitionTime"), ""));
        }
        errs.extend(condition_reason_errors(
            &c["reason"],
            &format!("{p}.reason"),
        ));
        if c["message"].as_str().is_some_and(|m| m.len() > 32768) {
            errs.push(field::too_long(&format!("{p}.message"), 32768));
        }
    }
    errs
}

/// A condition's reason: required, CamelCase-ish, at most 1024 bytes.
fn condition_reason_errors(reason: &Value, path: &str) -> Vec<StatusCause> {
    let r = reason.as_str().unwrap_or("");
    if r.is_empty() {
        return vec![field::required(path, "")];
    }
    let mut errs = Vec::new();
    let b = r.as_bytes();
    let valid = b[0].is_ascii_alphabetic()
        && (b.len() == 1 || b[b.len() - 1].is_ascii_alphanumeric() || b[b.len() - 1] == b'_')
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b',' | b':'));
    if !valid {
        let msg = regex_error(
            "a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_'",
            "[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?",
            &["my_name", "MY_NAME", "MyName", "ReasonA,ReasonB", "ReasonA:ReasonB"],
        );
        errs.push(field::invalid(path, reason, &msg));
    }
    if r.len() > 1024 {
        errs.push(field::too_long(path, 1024));
    }
    errs
}

/// The bits of an address, for prefix arithmetic.
fn ip_bits(ip: &IpAddr) -> (u128, u32) {
    match ip {
        IpAddr::V4(a) => (u128::from(u32::from(*a)), 32),
        IpAddr::V6(a) => (u128::from(*a), 128),
    }
}

/// A parsed CIDR: the address as written and the prefix length.
#[derive(Debug, Clone, Copy)]
pub struct Cidr {
    /// The address part, as written.
    pub ip: IpAddr,
    /// The prefix length.
    pub prefix: u32,
}

impl Cidr {
    /// The network address (the written address with the host bits cleared).
    fn network(&self) -> u128 {
        let (bits, width) = ip_bits(&self.ip);
        let host = width - self.prefix;
        if host >= 128 {
            0
        } else {
            bits >> host << host
        }
    }

    /// Whether `other`'s address lies in this network (same family).
    pub fn contains(&self, other: &Cidr) -> bool {
        let (bits, width) = ip_bits(&other.ip);
        if width != ip_bits(&self.ip).1 {
            return false;
        }
        let host = width - self.prefix;
        let net = if host >= 128 { 0 } else { bits >> host << host };
        net == self.network()
    }
}

/// `netutils.ParseCIDRSloppy`.
pub fn parse_cidr_sloppy(s: &str) -> Option<Cidr> {
    let (ip, bits) = s.split_once('/')?;
    let ip = parse_ip_sloppy(ip)?;
    if bits.is_empty() || bits.len() > 3 || !bits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let prefix: u32 = bits.parse().ok()?;
    (prefix <= ip_bits(&ip).1).then_some(Cidr { ip, prefix })
}

/// `IsValidIPForLegacyField` with strict validation (the 1.36 default), `old` values allowed.
pub fn legacy_ip_errors(path: &str, value: &str, old: &[&str]) -> Vec<StatusCause> {
    if old.contains(&value) {
        return Vec::new();
    }
    let v = json!(value);
    let Some(ip) = parse_ip_sloppy(value) else {
        return vec![field::invalid(
            path,
            &v,
            "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
        )];
    };
    let mut errs = Vec::new();
    if value.parse::<IpAddr>().is_err() {
        errs.push(field::invalid(path, &v, "must not have leading 0s"));
    }
    if matches!(ip, IpAddr::V6(a) if a.to_ipv4_mapped().is_some()) {
        errs.push(field::invalid(
            path,
            &v,
            "must not be an IPv4-mapped IPv6 address",
        ));
    }
    errs
}

/// `IsValidIP`: the legacy field's rules, then canonical form (as Go's `netip.Addr.String()`,
/// RFC 5952 for IPv6); the messages only, at most one.
pub fn ip_messages(value: &str) -> Vec<String> {
    let legacy = legacy_ip_errors("", value, &[]);
    if let Some(first) = legacy.first() {
        let msg = first.message.rsplit_once(": ").map_or("", |(_, m)| m);
        return vec![msg.to_string()];
    }
    match value.parse::<IpAddr>() {
        Ok(ip) if ip.to_string() != value => {
            vec![format!("must be in canonical form ({:?})", ip.to_string())]
        }
        _ => Vec::new(),
    }
}

/// `IsValidCIDR`: the legacy field's rules, then canonical form.
pub fn cidr_errors(path: &str, value: &str) -> Vec<StatusCause> {
    let legacy = legacy_cidr_errors(path, value, &[]);
    if !legacy.is_empty() {
        return legacy;
    }
    let Some(cidr) = parse_cidr_sloppy(value) else {
        return legacy;
    };
    let canonical = format!("{}/{}", cidr.ip, cidr.prefix);
    if canonical == value {
        return Vec::new();
    }
    vec![field::invalid(
        path,
        &json!(value),
        &format!("must be in canonical form ({canonical:?})"),
    )]
}

/// `IsValidCIDRForLegacyField` with strict validation (the 1.36 default), `old` values
/// allowed.
pub fn legacy_cidr_errors(path: &str, value: &str, old: &[&str]) -> Vec<StatusCause> {
    if old.contains(&value) {
        return Vec::new();
    }
    let v = json!(value);
    let Some(cidr) = parse_cidr_sloppy(value) else {
        return vec![field::invalid(
            path,
            &v,
            "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
        )];
    };
    let strict_ok = value.split_once('/').is_some_and(|(ip, bits)| {
        ip.parse::<IpAddr>().is_ok() && (bits == "0" || !bits.starts_with('0'))
    });
    let msg = if !strict_ok {
        "must not have leading 0s in IP or prefix length"
    } else if matches!(cidr.ip, IpAddr::V6(a) if a.to_ipv4_mapped().is_some()) {
        "must not have an IPv4-mapped IPv6 address"
    } else if cidr.network() != ip_bits(&cidr.ip).0 {
        "must not have bits set beyond the prefix length"
    } else {
        return Vec::new();
    };
    vec![field::invalid(path, &v, msg)]
}

/// `IsValidPortNum`'s message for a port outside 1-65535.
pub const PORT_RANGE_MSG: &str = "must be between 1 and 65535, inclusive";

/// `ValidatePortNumOrName`: an int-or-string port (a container port's number or name).
pub fn port_num_or_name_errors(path: &str, port: &Value) -> Vec<StatusCause> {
    let msgs = match port {
        Value::String(name) => port_name_errors(name),
        other => port_number_errors(other.as_i64().unwrap_or(0)),
    };
    invalid_each(path, port, msgs)
}

/// `ValidateDNS1123Label` at `path`.
pub fn dns_label_errors(path: &str, value: &str) -> Vec<StatusCause> {
    crate::registry::object_meta::name_errors(value, crate::registry::object_meta::NameRule::Label)
        .iter()
        .map(|m| field::invalid(path, &Value::String(value.into()), m))
        .collect()
}

/// `ValidateDNS1123Subdomain` at `path`.
pub fn dns_subdomain_errors(path: &str, value: &str) -> Vec<StatusCause> {
    crate::registry::object_meta::name_errors(
        value,
        crate::registry::object_meta::NameRule::Subdomain,
    )
    .iter()
    .map(|m| field::invalid(path, &Value::String(value.into()), m))
    .collect()
}

/// `IsFullyQualifiedDomainName` at `path`: a DNS subdomain (a trailing dot allowed) of at
/// least two labels; the first failing check is the only error.
pub fn fqdn_errors(path: &str, value: &str) -> Vec<StatusCause> {
    if value.is_empty() {
        return vec![field::required(path, "")];
    }
    let name = value.strip_suffix('.').unwrap_or(value);
    let subdomain = crate::registry::object_meta::name_errors(
        name,
        crate::registry::object_meta::NameRule::Subdomain,
    );
    if !subdomain.is_empty() {
        return vec![field::invalid(path, &json!(name), &subdomain.join(","))];
    }
    if !name.contains('.') {
        let msg = "should be a domain with at least two segments separated by dots";
        return vec![field::invalid(path, &json!(name), msg)];
    }
    name.split('.')
        .find_map(|label| {
            let errs = crate::registry::object_meta::name_errors(
                label,
                crate::registry::object_meta::NameRule::Label,
            );
            (!errs.is_empty()).then(|| field::invalid(path, &json!(label), &errs.join(",")))
        })
        .into_iter()
        .collect()
}

/// `ValidateQualifiedName` at `path`.
pub fn qualified_name_errors(path: &str, value: &str) -> Vec<StatusCause> {
    invalid_each(
        path,
        &Value::String(value.into()),
        qualified_name_messages(value),
    )
}

/// `ValidateNodeSelector` (invalid label values refused): at least one term, each term's
/// label requirements and field requirements (only `metadata.name`, one value) checked.
pub fn node_selector_errors(selector: &Value, path: &str) -> Vec<StatusCause> {
    let terms_path = format!("{path}.nodeSelectorTerms");
    let terms = selector["nodeSelectorTerms"].as_array();
    let Some(terms) = terms.filter(|t| !t.is_empty()) else {
        let msg = "must have at least one node selector term";
        return vec![field::required(&terms_path, msg)];
    };
    let mut errs = Vec::new();
    for (i, term) in terms.iter().enumerate() {
        let list = |key: &str| term[key].as_array().cloned().unwrap_or_default();
        for (j, req) in list("matchExpressions").iter().enumerate() {
            let at = format!("{terms_path}[{i}].matchExpressions[{j}]");
            errs.extend(node_selector_requirement_errors(req, &at));
        }
        for (j, req) in list("matchFields").iter().enumerate() {
            let at = format!("{terms_path}[{i}].matchFields[{j}]");
            errs.extend(node_field_requirement_errors(req, &at));
        }
    }
    errs
}

/// `ValidateNodeSelectorRequirement`: the operator's values, the key, the values' syntax.
fn node_selector_requirement_errors(req: &Value, path: &str) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let values: Vec<&str> = req["values"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|v| v.as_str().unwrap_or(""))
        .collect();
    let values_path = format!("{path}.values");
    match req["operator"].as_str().unwrap_or("") {
        "In" | "NotIn" if values.is_empty() => errs.push(field::required(
            &values_path,
            "must be specified when `operator` is 'In' or 'NotIn'",
        )),
        "Exists" | "DoesNotExist" if !values.is_empty() => errs.push(field::forbidden(
            &values_path,
            "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
        )),
        "Gt" | "Lt" if values.len() != 1 => errs.push(field::required(
            &values_path,
            "must be specified single value when `operator` is 'Lt' or 'Gt'",
        )),
        "In" | "NotIn" | "Exists" | "DoesNotExist" | "Gt" | "Lt" => {}
        op => errs.push(field::invalid(
            &format!("{path}.operator"),
            &json!(op),
            "not a valid selector operator",
        )),
    }
    let key = req["key"].as_str().unwrap_or("");
    errs.extend(qualified_name_errors(&format!("{path}.key"), key));
    for (i, value) in values.iter().enumerate() {
        let at = format!("{values_path}[{i}]");
        errs.extend(invalid_each(&at, &json!(value), label_value_errors(value)));
    }
    errs
}

/// `ValidateNodeFieldSelectorRequirement`: `metadata.name` `In` or `NotIn` one node name.
fn node_field_requirement_errors(req: &Value, path: &str) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let values: Vec<&str> = req["values"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|v| v.as_str().unwrap_or(""))
        .collect();
    match req["operator"].as_str().unwrap_or("") {
        "In" | "NotIn" if values.len() != 1 => errs.push(field::required(
            &format!("{path}.values"),
            "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
        )),
        "In" | "NotIn" => {}
        op => errs.push(field::invalid(
            &format!("{path}.operator"),
            &json!(op),
            "not a valid selector operator",
        )),
    }
    let key = req["key"].as_str().unwrap_or("");
    if key != "metadata.name" {
        let msg = "not a valid field selector key";
        errs.push(field::invalid(&format!("{path}.key"), &json!(key), msg));
        return errs;
    }
    for (i, value) in values.iter().enumerate() {
        errs.extend(dns_subdomain_errors(&format!("{path}.values[{i}]"), value));
    }
    errs
}

/// `ValidateLabels` of a map at `path` (a Service's selector, a node selector): keys are
/// qualified names, values label values, every error at `path` itself.
pub fn label_map_errors(path: &str, map: &Value) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    for (k, v) in map.as_object().into_iter().flatten() {
        errs.extend(qualified_name_errors(path, k));
        let value = v.as_str().unwrap_or("");
        errs.extend(invalid_each(path, v, label_value_errors(value)));
    }
    errs
}

/// `netutils.ParseIPSloppy`: IPv4 octets may carry leading zeros; anything else as
/// `net.ParseIP`.
pub fn parse_ip_sloppy(value: &str) -> Option<IpAddr> {
    if let Ok(ip) = value.parse::<IpAddr>() {
        return Some(ip);
    }
    if value.contains(':') {
        return None;
    }
    let octets: Vec<&str> = value.split('.').collect();
    if octets.len() != 4 {
        return None;
    }
    let mut out = [0u8; 4];
    for (slot, part) in out.iter_mut().zip(&octets) {
        if part.is_empty() || !part.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        let digits = part.trim_start_matches('0');
        *slot = if digits.is_empty() {
            0
        } else {
            digits.parse::<u8>().ok()?
        };
    }
    Some(IpAddr::from(out))
}

/// `ValidateEndpointIP`: an endpoint may not be unspecified, loopback or link-local.
pub fn endpoint_ip_errors(path: &str, value: &str) -> Vec<StatusCause> {
    let v = Value::String(value.into());
    let Some(ip) = parse_ip_sloppy(value) else {
        return vec![field::invalid(path, &v, "must be a valid IP address")];
    };
    let ip = match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    };
    let mut errs = Vec::new();
    if ip.is_unspecified() {
        errs.push(field::invalid(
            path,
            &v,
            &format!("may not be unspecified ({value})"),
        ));
    }
    if ip.is_loopback() {
        errs.push(field::invalid(
            path,
            &v,
            "may not be in the loopback range (127.0.0.0/8, ::1/128)",
        ));
    }
    let (link_local, link_local_multicast) = match ip {
        IpAddr::V4(a) => (a.is_link_local(), a.octets()[..3] == [224, 0, 0]),
        IpAddr::V6(a) => (
            a.segments()[0] & 0xffc0 == 0xfe80,
            a.segments()[0] & 0xff0f == 0xff02,
        ),
    };
    if link_local {
        errs.push(field::invalid(
            path,
            &v,
            "may not be in the link-local range (169.254.0.0/16, fe80::/10)",
        ));
    }
    if link_local_multicast {
        errs.push(field::invalid(
            path,
            &v,
            "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)",
        ));
    }
    errs
}

/// What `json.Unmarshal(data, &map[string]interface{}{})` reports, in Go's words: a syntax
/// error, or the type error of valid JSON that is not an object (`null` is accepted).
pub fn go_json_object_error(data: &[u8]) -> Option<String> {
    if let Err(e) = go_json::check(data) {
        return Some(e);
    }
    let first = data.iter().find(|b| !b" \t\r\n".contains(b)).copied();
    let kind = match first {
        Some(b'{') | Some(b'n') => return None,
        Some(b'"') => "string",
        Some(b'[') => "array",
        Some(b't') | Some(b'f') => "bool",
        _ => "number",
    };
    Some(format!(
        "json: cannot unmarshal {kind} into Go value of type map[string]interface {{}}"
    ))
}

/// A checker of JSON syntax with the messages of Go's `encoding/json` scanner.
mod go_json {
    const END: &str = "unexpected end of JSON input";

    struct Scanner<'a> {
        data: &'a [u8],
        pos: usize,
    }

    /// Go's `quoteChar`.
    fn quote(c: u8) -> String {
        match c {
            b'\'' => "'\\''".into(),
            b'"' => "'\"'".into(),
            b'\n' => "'\\n'".into(),
            b'\r' => "'\\r'".into(),
            b'\t' => "'\\t'".into(),
            c if c < 0x20 || c == 0x7f => format!("'\\x{c:02x}'"),
            c => format!("'{}'", char::from(c)),
        }
    }

    /// Checks a whole document.
    pub fn check(data: &[u8]) -> Result<(), String> {
        let mut s = Scanner { data, pos: 0 };
        s.ws();
        s.value()?;
        s.ws();
        match s.peek() {
            None => Ok(()),
            Some(c) => Err(s.invalid(c, "after top-level value")),
        }
    }

    impl Scanner<'_> {
        fn peek(&self) -> Option<u8> {
            self.data.get(self.pos).copied()
        }

        fn next(&mut self) -> Result<u8, String> {
            let c = self.peek().ok_or_else(|| END.to_string())?;
            self.pos += 1;
            Ok(c)
        }

        fn ws(&mut self) {
            while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
                self.pos += 1;
            }
        }

        fn invalid(&self, c: u8, context: &str) -> String {
            format!("invalid character {} {context}", quote(c))
        }

        fn value(&mut self) -> Result<(), String> {
            match self.next()? {
                b'{' => self.object(),
                b'[' => self.array(),
                b'"' => self.string(),
                b't' => self.literal("true"),
                b'f' => self.literal("false"),
                b'n' => self.literal("null"),
                c @ (b'-' | b'0'..=b'9') => self.number(c),
                c => Err(self.invalid(c, "looking for beginning of value")),
            }
        }

        fn object(&mut self) -> Result<(), String> {
            self.ws();
            if self.peek() == Some(b'}') {
                self.pos += 1;
                return Ok(());
            }
            loop {
                match self.next()? {
                    b'"' => self.string()?,
                    c => return Err(self.invalid(c, "looking for beginning of object key string")),
                }
                self.ws();
                match self.next()? {
                    b':' => {}
                    c => return Err(self.invalid(c, "after object key")),
                }
                self.ws();
                self.value()?;
                self.ws();
                match self.next()? {
                    b',' => self.ws(),
                    b'}' => return Ok(()),
                    c => return Err(self.invalid(c, "after object key:value pair")),
                }
            }
        }

        fn array(&mut self) -> Result<(), String> {
            self.ws();
            if self.peek() == Some(b']') {
                self.pos += 1;
                return Ok(());
            }
            loop {
                self.value()?;
                self.ws();
                match self.next()? {
                    b',' => self.ws(),
                    b']' => return Ok(()),
                    c => return Err(self.invalid(c, "after array element")),
                }
            }
        }

        fn string(&mut self) -> Result<(), String> {
            loop {
                match self.next()? {
                    b'"' => return Ok(()),
                    b'\\' => match self.next()? {
                        b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => {}
                        b'u' => {
                            for _ in 0..4 {
                                let c = self.next()?;
                                if !c.is_ascii_hexdigit() {
                                    return Err(
                                        self.invalid(c, "in \\u hexadecimal character escape")
                                    );
                                }
                            }
                        }
                        c => return Err(self.invalid(c, "in string escape code")),
                    },
                    c if c < 0x20 => return Err(self.invalid(c, "in string literal")),
                    _ => {}
                }
            }
        }

        fn digits(&mut self) {
            while matches!(self.peek(), Some(b'0'..=b'9')) {
                self.pos += 1;
            }
        }

        fn number(&mut self, first: u8) -> Result<(), String> {
            let lead = if first == b'-' { self.next()? } else { first };
            match lead {
                b'0' => {}
                b'1'..=b'9' => self.digits(),
                c => return Err(self.invalid(c, "in numeric literal")),
            }
            if self.peek() == Some(b'.') {
                self.pos += 1;
                match self.next()? {
                    b'0'..=b'9' => self.digits(),
                    c => return Err(self.invalid(c, "after decimal point in numeric literal")),
                }
            }
            if matches!(self.peek(), Some(b'e' | b'E')) {
                self.pos += 1;
                let mut c = self.next()?;
                if c == b'+' || c == b'-' {
                    c = self.next()?;
                }
                if !c.is_ascii_digit() {
                    return Err(self.invalid(c, "in exponent of numeric literal"));
                }
                self.digits();
            }
            Ok(())
        }

        fn literal(&mut self, word: &str) -> Result<(), String> {
            for expected in word.bytes().skip(1) {
                let c = self.next()?;
                if c != expected {
                    let context = format!("in literal {word} (expecting {})", quote(expected));
                    return Err(self.invalid(c, &context));
                }
            }
            Ok(())
        }
    }
}

/// The value of a quantity as Go canonicalizes it (`100m`, `1Gi`, `5e3`), as a float: enough to
/// compare quantities and to test their sign. `None` when it does not parse.
pub fn quantity_value(q: &str) -> Option<f64> {
    crate::machinery::quantity::Quantity::parse(q).map(|q| q.as_f64())
}

/// `ValidateNonnegativeQuantity`.
pub fn nonnegative_quantity_errors(path: &str, value: &Value) -> Vec<StatusCause> {
    let text = value.as_str().unwrap_or("");
    if quantity_value(text).is_some_and(|v| v < 0.0) {
        return vec![field::invalid(
            path,
            value,
            "must be greater than or equal to 0",
        )];
    }
    Vec::new()
}

/// `ValidatePositiveQuantityValue`.
pub fn positive_quantity_errors(path: &str, value: &Value) -> Vec<StatusCause> {
    let text = value.as_str().unwrap_or("");
    if quantity_value(text).is_none_or(|v| v <= 0.0) {
        return vec![field::invalid(path, value, "must be greater than zero")];
    }
    Vec::new()
}

/// Whether a canonical quantity holds a whole number (`MilliValue() % 1000 == 0`).
pub fn is_whole_quantity(q: &str) -> bool {
    quantity_value(q).is_some_and(|v| {
        let scaled = v * 1000.0;
        let milli = if (scaled - scaled.round()).abs() < 1e-6 {
            scaled.round()
        } else {
            scaled.ceil()
        };
        milli % 1000.0 == 0.0
    })
}

/// `ValidateResourceQuantityValue`: non-negative, and whole for resources counted in units.
pub fn resource_quantity_errors(resource: &str, path: &str, value: &Value) -> Vec<StatusCause> {
    let mut errs = nonnegative_quantity_errors(path, value);
    if is_integer_resource(resource) && !is_whole_quantity(value.as_str().unwrap_or("")) {
        errs.push(field::invalid(path, value, "must be an integer"));
    }
    errs
}

/// `IsIntegerResourceName`: object counts and extended resources.
pub fn is_integer_resource(name: &str) -> bool {
    const COUNTED: [&str; 9] = [
        "pods",
        "resourcequotas",
        "services",
        "replicationcontrollers",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "services.nodeports",
        "services.loadbalancers",
    ];
    COUNTED.contains(&name) || is_extended_resource(name)
}

/// `IsExtendedResourceName`: a prefixed name outside `kubernetes.io/`, not `requests.`.
pub fn is_extended_resource(name: &str) -> bool {
    let native = !name.contains('/') || name.contains("kubernetes.io/");
    if native || name.starts_with("requests.") {
        return false;
    }
    qualified_name_messages(&format!("requests.{name}")).is_empty()
}

/// `field.NotFound`: `field: Not found: <value>`.
pub fn not_found(path: &str, value: &Value) -> StatusCause {
    StatusCause {
        reason: "FieldValueNotFound".into(),
        message: format!("Not found: {}", field::go_value(value)),
        field: path.into(),
    }
}

/// `ValidateNonnegativeField` of an integer at `pointer` (absent counts as 0).
pub fn nonnegative(obj: &Value, pointer: &str, path: &str) -> Vec<StatusCause> {
    nonnegative_errors(obj.at(pointer).unwrap_or(&Value::Null), path)
}

/// `ValidateImmutableField`: `field is immutable` when the value changed.
pub fn immutable(new: &Value, old: &Value, path: &str) -> Vec<StatusCause> {
    if new == old {
        return Vec::new();
    }
    vec![field::invalid(path, new, "field is immutable")]
}

/// A `metav1.LabelSelector` as Go's encoding/json prints it in messages (`matchLabels` before
/// `matchExpressions`, empty lists left out).
pub fn selector_json(selector: &Value) -> String {
    if !selector.is_object() {
        return "null".into();
    }
    let mut parts = Vec::new();
    for key in ["matchLabels", "matchExpressions"] {
        let v = &selector[key];
        let empty = v.as_object().is_some_and(|m| m.is_empty())
            || v.as_array().is_some_and(|a| a.is_empty());
        if !v.is_null() && !empty {
            parts.push(format!("{key:?}:{v}"));
        }
    }
    format!("{{{}}}", parts.join(","))
}

/// Whether a `metav1.LabelSelector` (as `LabelSelectorAsSelector` reads it) selects these
/// labels: `None` when it does not parse (an unknown operator, or no values for `In`). An
/// absent selector selects nothing, an empty one everything.
pub fn selector_matches(selector: &Value, labels: &Value) -> Option<bool> {
    if !selector.is_object() {
        return Some(false);
    }
    use crate::registry::object_meta::{is_label_value, is_qualified_name};
    let label = |k: &str| labels.get(k).and_then(Value::as_str);
    let match_labels = selector["matchLabels"].as_object().into_iter().flatten();
    let mut by_labels = true;
    for (k, v) in match_labels {
        let v = v.as_str().unwrap_or("");
        if !is_qualified_name(k) || !is_label_value(v) {
            return None;
        }
        by_labels &= label(k) == Some(v);
    }
    let mut by_exprs = true;
    for expr in selector["matchExpressions"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let key = expr["key"].as_str().unwrap_or("");
        let values: Vec<&str> = expr["values"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        if !is_qualified_name(key) || !values.iter().all(|v| is_label_value(v)) {
            return None;
        }
        let ok = match expr["operator"].as_str().unwrap_or("") {
            "In" if !values.is_empty() => label(key).is_some_and(|v| values.contains(&v)),
            "NotIn" if !values.is_empty() => label(key).is_none_or(|v| !values.contains(&v)),
            "Exists" if values.is_empty() => label(key).is_some(),
            "DoesNotExist" if values.is_empty() => label(key).is_none(),
            _ => return None,
        };
        by_exprs &= ok;
    }
    Some(by_labels && by_exprs)
}

/// Whether a label selector has neither labels nor expressions.
pub fn selector_is_empty(selector: &Value) -> bool {
    let count = |k: &str| {
        selector[k].as_object().map_or(0, |m| m.len()) + selector[k].as_array().map_or(0, Vec::len)
    };
    count("matchLabels") + count("matchExpressions") == 0
}

/// `WebhookClientConfig` of admission webhooks and CRD conversion webhooks: exactly one of an
/// HTTPS URL or a Service.
pub fn webhook_client_config_errors(cc: &Value, path: &str) -> Vec<StatusCause> {
    match (cc["url"].as_str(), cc["service"].is_object()) {
        (Some(url), false) => url_errors(url, &format!("{path}.url")),
        (None, true) => service_errors(&cc["service"], &format!("{path}.service")),
        _ => vec![field::required(
            path,
            "exactly one of url or service is required",
        )],
    }
}

/// The parts of a URL as Go's `url.Parse` splits them.
struct UrlParts<'a> {
    scheme: &'a str,
    user: Option<&'a str>,
    host: &'a str,
    query: &'a str,
    fragment: &'a str,
}

fn split_url(url: &str) -> Result<UrlParts<'_>, String> {
    let (rest, fragment) = url.split_once('#').unwrap_or((url, ""));
    let scheme_end = rest.find(|c: char| !(c.is_ascii_alphanumeric() || "+-.".contains(c)));
    let (scheme, rest) = match scheme_end {
        Some(0) if rest.starts_with(':') => {
            return Err(format!("parse {url:?}: missing protocol scheme"))
        }
        Some(i)
            if rest[i..].starts_with(':')
                && rest.starts_with(|c: char| c.is_ascii_alphabetic()) =>
        {
            (&rest[..i], &rest[i + 1..])
        }
        _ => ("", rest),
    };
    let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (user, host) = match rest.strip_prefix("//") {
        Some(auth) => {
            let authority = auth.split('/').next().unwrap_or("");
            match authority.rsplit_once('@') {
                Some((user, host)) => (Some(user), host),
                None => (None, authority),
            }
        }
        None => (None, ""),
    };
    Ok(UrlParts {
        scheme,
        user,
        host,
        query,
        fragment,
    })
}

/// `ValidateWebhookURL` with HTTPS required.
fn url_errors(url: &str, path: &str) -> Vec<StatusCause> {
    const FORM: &str = "; desired format: https://host[/path]";
    let parts = match split_url(url) {
        Ok(p) => p,
        Err(e) => {
            return vec![field::required(
                path,
                &format!("url must be a valid URL: {e}{FORM}"),
            )]
        }
    };
    let mut errs = Vec::new();
    if parts.scheme != "https" {
        let msg = format!("'https' is the only allowed URL scheme{FORM}");
        errs.push(field::invalid(path, &json!(parts.scheme), &msg));
    }
    if parts.host.is_empty() {
        errs.push(field::invalid(
            path,
            &json!(""),
            &format!("host must be specified{FORM}"),
        ));
    }
    if let Some(user) = parts.user {
        let msg = "user information is not permitted in the URL";
        errs.push(field::invalid(path, &json!(user), msg));
    }
    if !parts.fragment.is_empty() {
        let msg = "fragments are not permitted in the URL";
        errs.push(field::invalid(path, &json!(parts.fragment), msg));
    }
    if !parts.query.is_empty() {
        let msg = "query parameters are not permitted in the URL";
        errs.push(field::invalid(path, &json!(parts.query), msg));
    }
    errs
}

/// `ValidateWebhookService`: name, namespace, port, and a path of DNS-subdomain segments.
fn service_errors(svc: &Value, path: &str) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    for key in ["name", "namespace"] {
        if svc[key].as_str().unwrap_or("").is_empty() {
            errs.push(field::required(&format!("{path}.{key}"), ""));
        }
    }
    let port = svc["port"].as_i64().unwrap_or(0);
    let port_errs = port_number_errors(port);
    if !port_errs.is_empty() {
        let msg = format!("port is not valid: {}", port_errs.join(", "));
        errs.push(field::invalid(&format!("{path}.port"), &json!(port), &msg));
    }
    let Some(url_path) = svc["path"].as_str() else {
        return errs;
    };
    errs.extend(service_path_errors(url_path, &format!("{path}.path")));
    errs
}

fn service_path_errors(url_path: &str, path: &str) -> Vec<StatusCause> {
    let shown = json!(url_path);
    if url_path.is_empty() || url_path == "/" {
        return Vec::new();
    }
    if url_path == "//" {
        return vec![field::invalid(path, &shown, "segment[0] may not be empty")];
    }
    let mut errs = Vec::new();
    if !url_path.starts_with('/') {
        errs.push(field::invalid(path, &shown, "must start with a '/'"));
    }
    let trimmed = url_path.get(1..).unwrap_or("");
    let trimmed = trimmed.strip_suffix('/').unwrap_or(trimmed);
    for (i, step) in trimmed.split('/').enumerate() {
        if step.is_empty() {
            let msg = format!("segment[{i}] may not be empty");
            errs.push(field::invalid(path, &shown, &msg));
            continue;
        }
        for failure in dns1123_subdomain_errors(step) {
            errs.push(field::invalid(
                path,
                &shown,
                &format!("segment[{i}]: {failure}"),
            ));
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::rendered;

    #[rstest::rstest]
    #[case(json!({"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": ["node-1"]}]}]}), vec![])]
    #[case(json!({}), vec!["s.nodeSelectorTerms: Required value: must have at least one node selector term"])]
    #[case(json!({"nodeSelectorTerms": [{"matchExpressions": [
        {"key": "zone", "operator": "In"},
        {"key": "zone", "operator": "Exists", "values": ["a"]},
        {"key": "zone", "operator": "Near", "values": ["-a"]}]}]}),
        vec!["s.nodeSelectorTerms[0].matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
             "s.nodeSelectorTerms[0].matchExpressions[1].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
             "s.nodeSelectorTerms[0].matchExpressions[2].operator: Invalid value: \"Near\": not a valid selector operator",
             "s.nodeSelectorTerms[0].matchExpressions[2].values[0]: Invalid value: \"-a\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"])]
    #[case(json!({"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.uid", "operator": "In", "values": ["a", "b"]}]}]}),
        vec!["s.nodeSelectorTerms[0].matchFields[0].values: Required value: must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
             "s.nodeSelectorTerms[0].matchFields[0].key: Invalid value: \"metadata.uid\": not a valid field selector key"])]
    fn node_selectors(#[case] selector: Value, #[case] want: Vec<&str>) {
        assert_eq!(rendered(node_selector_errors(&selector, "s")), want);
    }

    #[test]
    fn label_selectors() {
        let sel = serde_json::json!({"matchLabels": {"app": "web"},
            "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}]});
        let labels = serde_json::json!({"app": "web", "tier": "b"});
        assert_eq!(selector_matches(&sel, &labels), Some(true));
        assert_eq!(
            selector_matches(&sel, &serde_json::json!({"app": "web"})),
            Some(false)
        );
        assert_eq!(
            selector_matches(&serde_json::json!({}), &labels),
            Some(true)
        );
        assert_eq!(
            selector_json(&sel),
            r#"{"matchLabels":{"app":"web"},"matchExpressions":[{"key":"tier","operator":"In","values":["a","b"]}]}"#
        );
        let bad = serde_json::json!({"matchExpressions": [{"key": "k", "operator": "Exists", "values": ["x"]}]});
        assert_eq!(
            label_selector_errors(&bad, "spec.selector", false)[0].message,
            "Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
        );
    }

    #[test]
    fn config_map_keys() {
        assert!(config_map_key_errors("key.name").is_empty());
        assert!(config_map_key_errors("KEY_NAME-1").is_empty());
        assert_eq!(config_map_key_errors("..a"), ["must not start with '..'"]);
        assert_eq!(config_map_key_errors("a/b").len(), 1);
        assert_eq!(config_map_key_errors(&"a".repeat(254)).len(), 1);
    }

    #[test]
    fn qualified_names_and_label_values_as_go_words_them() {
        assert!(qualified_name_messages("ok.io/Na_me").is_empty());
        assert_eq!(
            qualified_name_messages("/x"),
            ["prefix part must be non-empty"]
        );
        let errs = qualified_name_messages("x/");
        assert_eq!(errs[0], "name part must be non-empty");
        assert_eq!(errs[1], "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')");
        assert!(qualified_name_messages("a/b/c")[0].starts_with("a valid label key must consist"));
        assert!(qualified_name_messages("Exa_mple.com/x")[0]
            .starts_with("prefix part a lowercase RFC 1123 subdomain"));
        assert_eq!(label_value_errors("-x")[0], "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')");
        assert_eq!(dns1035_label_errors("1abc")[0], "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')");
        assert_eq!(dns1123_label_errors("a.b"), ["must not contain dots"]);
        assert_eq!(wildcard_dns1123_subdomain_errors("*").len(), 1);
        assert!(wildcard_dns1123_subdomain_errors("*.example.com").is_empty());
        assert_eq!(port_name_errors("A--").len(), 4);
        assert!(port_name_errors("http-alt").is_empty());
        assert_eq!(
            port_number_errors(0),
            ["must be between 1 and 65535, inclusive"]
        );
    }

    #[test]
    fn label_selectors_validate_and_print_as_go() {
        let sel = json!({"matchLabels": {"z": "1", "a": "2"}, "matchExpressions": [
            {"key": "m", "operator": "In", "values": ["y", "x"]},
            {"key": "b", "operator": "DoesNotExist"}]});
        assert_eq!(format_label_selector(&sel), "a=2,!b,m in (x,y),z=1");
        assert_eq!(format_label_selector(&json!({})), "<none>");
        let bad = json!({"matchExpressions": [{"key": "k", "operator": "In"},
            {"key": "k", "operator": "Exists", "values": ["v"]}, {"key": "k", "operator": "Gt"}]});
        assert_eq!(format_label_selector(&bad), "<error>");
        let errs: Vec<String> = label_selector_errors(&bad, "s", false)
            .iter()
            .map(|e| format!("{}: {}", e.field, e.message))
            .collect();
        assert_eq!(
            errs,
            [
                "s.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
                "s.matchExpressions[1].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
                "s.matchExpressions[2].operator: Invalid value: \"Gt\": not a valid selector operator",
            ]
        );
    }

    #[test]
    fn percents_and_conditions() {
        assert!(int_or_percent_errors(&json!("50%"), "p").is_empty());
        assert_eq!(
            int_or_percent_errors(&json!("150%"), "p")[0].message,
            "Invalid value: \"150%\": must not be greater than 100%"
        );
        assert!(int_or_percent_errors(&json!("5"), "p")[0]
            .message
            .contains("a valid percent string must be a numeric string followed by an ending '%'"));
        assert_eq!(
            int_or_percent_errors(&json!(-1), "p")[0].message,
            "Invalid value: -1: must be greater than or equal to 0"
        );
        let conds = json!([{"type": "Ready", "status": "Maybe", "reason": "1x"}]);
        let fields: Vec<String> = conditions_errors(&conds, "status.conditions")
            .iter()
            .map(|e| e.field.clone())
            .collect();
        assert_eq!(
            fields,
            [
                "status.conditions[0].status",
                "status.conditions[0].lastTransitionTime",
                "status.conditions[0].reason"
            ]
        );
    }

    #[test]
    fn cidrs_and_ips_with_strict_validation() {
        let msg = |v: &str| {
            legacy_cidr_errors("f", v, &[])
                .first()
                .map(|e| e.message.clone())
                .unwrap_or_default()
        };
        assert_eq!(msg("10.0.0.0/8"), "");
        assert_eq!(
            msg("10.0.0.1/8"),
            "Invalid value: \"10.0.0.1/8\": must not have bits set beyond the prefix length"
        );
        assert_eq!(
            msg("010.0.0.0/8"),
            "Invalid value: \"010.0.0.0/8\": must not have leading 0s in IP or prefix length"
        );
        assert_eq!(
            msg("10.0.0.0/08"),
            "Invalid value: \"10.0.0.0/08\": must not have leading 0s in IP or prefix length"
        );
        assert_eq!(
            msg("::ffff:1.2.3.0/120"),
            "Invalid value: \"::ffff:1.2.3.0/120\": must not have an IPv4-mapped IPv6 address"
        );
        assert_eq!(msg("1.2.3.4"), "Invalid value: \"1.2.3.4\": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)");
        assert_eq!(msg("10.0.0.0/33"), "Invalid value: \"10.0.0.0/33\": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)");
        assert!(legacy_cidr_errors("f", "10.0.0.1/8", &["10.0.0.1/8"]).is_empty());
        let ip = |v: &str| {
            legacy_ip_errors("f", v, &[])
                .first()
                .map(|e| e.message.clone())
        };
        assert_eq!(
            ip("010.1.1.1").as_deref(),
            Some("Invalid value: \"010.1.1.1\": must not have leading 0s")
        );
        assert_eq!(
            ip("::ffff:1.2.3.4").as_deref(),
            Some("Invalid value: \"::ffff:1.2.3.4\": must not be an IPv4-mapped IPv6 address")
        );
        assert!(ip("1.2.3").is_some_and(|m| m.contains("must be a valid IP address")));
        assert_eq!(ip("2001:db8::1"), None);
        let net = parse_cidr_sloppy("10.0.0.0/8");
        let sub = parse_cidr_sloppy("10.1.0.0/16");
        assert!(net
            .zip(sub)
            .is_some_and(|(n, s)| n.contains(&s) && !s.contains(&n)));
    }

    #[test]
    fn quantities() {
        assert_eq!(quantity_value("100m"), Some(0.1));
        assert_eq!(quantity_value("1Gi"), Some(1073741824.0));
        assert_eq!(quantity_value("-2"), Some(-2.0));
        assert_eq!(quantity_value("5e3"), Some(5000.0));
        assert!(is_whole_quantity("2k"));
        assert!(!is_whole_quantity("1500m"));
        assert!(is_integer_resource("pods"));
        assert!(is_integer_resource("example.com/gpu"));
        assert!(!is_integer_resource("cpu"));
    }

    #[test]
    fn go_json_messages() {
        let cases: &[(&str, Option<&str>)] = &[
            ("{\"auths\": {}}", None),
            ("null", None),
            ("", Some("unexpected end of JSON input")),
            ("{\"a\": 1", Some("unexpected end of JSON input")),
            (
                "x",
                Some("invalid character 'x' looking for beginning of value"),
            ),
            (
                "{a}",
                Some("invalid character 'a' looking for beginning of object key string"),
            ),
            ("{\"a\" 1}", Some("invalid character '1' after object key")),
            (
                "{\"a\": 1 2}",
                Some("invalid character '2' after object key:value pair"),
            ),
            ("[1 2]", Some("invalid character '2' after array element")),
            ("{} x", Some("invalid character 'x' after top-level value")),
            ("tru", Some("unexpected end of JSON input")),
            (
                "trux",
                Some("invalid character 'x' in literal true (expecting 'e')"),
            ),
            ("-x", Some("invalid character 'x' in numeric literal")),
            (
                "1.x",
                Some("invalid character 'x' after decimal point in numeric literal"),
            ),
            (
                "[]",
                Some("json: cannot unmarshal array into Go value of type map[string]interface {}"),
            ),
            (
                "\"s\"",
                Some("json: cannot unmarshal string into Go value of type map[string]interface {}"),
            ),
            (
                "12",
                Some("json: cannot unmarshal number into Go value of type map[string]interface {}"),
            ),
        ];
        for (input, want) in cases {
            assert_eq!(
                go_json_object_error(input.as_bytes()).as_deref(),
                *want,
                "{input}"
            );
        }
    }

    #[test]
    fn ips_and_names() {
        assert!(legacy_ip_errors("ip", "10.1.2.3", &[]).is_empty());
        assert_eq!(
            legacy_ip_errors("ip", "010.1.2.3", &[])[0].message,
            "Invalid value: \"010.1.2.3\": must not have leading 0s"
        );
        assert_eq!(legacy_ip_errors("ip", "nope", &[]).len(), 1);
        assert_eq!(
            legacy_ip_errors("ip", "::ffff:1.2.3.4", &[])[0].message,
            "Invalid value: \"::ffff:1.2.3.4\": must not be an IPv4-mapped IPv6 address"
        );
        assert_eq!(
            endpoint_ip_errors("ip", "127.0.0.1")[0].message,
            "Invalid value: \"127.0.0.1\": may not be in the loopback range (127.0.0.0/8, ::1/128)"
        );
        assert!(endpoint_ip_errors("ip", "10.0.0.1").is_empty());
        assert_eq!(qualified_name_messages("a/b/c").len(), 1);
        assert_eq!(
            qualified_name_messages("/a"),
            ["prefix part must be non-empty"]
        );
        assert!(qualified_name_messages("example.com/a").is_empty());
        assert!(port_name_errors("http").is_empty());
        assert_eq!(
            port_name_errors("8080"),
            ["must contain at least one letter (a-z)"]
        );
    }
}
