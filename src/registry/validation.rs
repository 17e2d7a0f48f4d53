//! Validation helpers the built-in kinds share, worded as
//! `k8s.io/apimachinery/pkg/util/validation` and `pkg/apis/core/validation` word them.

use serde_json::Value;

use crate::error::{field, StatusCause};

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

/// `IsValidPortNum`'s message for a port outside 1-65535.
pub const PORT_RANGE_MSG: &str = "must be between 1 and 65535, inclusive";

/// `IsValidPortNum`.
pub fn port_num_errors(port: i64) -> Vec<&'static str> {
    if (1..=65535).contains(&port) {
        Vec::new()
    } else {
        vec![PORT_RANGE_MSG]
    }
}

/// `IsValidPortName` (an IANA service name).
pub fn port_name_errors(port: &str) -> Vec<&'static str> {
    let mut errs = Vec::new();
    if port.len() > 15 {
        errs.push("must be no more than 15 characters");
    }
    let charset = !port.is_empty()
        && port
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if !charset {
        errs.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)");
    }
    if !port.bytes().any(|b| b.is_ascii_lowercase()) {
        errs.push("must contain at least one letter (a-z)");
    }
    if port.contains("--") {
        errs.push("must not contain consecutive hyphens");
    }
    if port.starts_with('-') || port.ends_with('-') {
        errs.push("must not begin or end with a hyphen");
    }
    errs
}

/// `ValidatePortNumOrName`: an int-or-string port (a container port's number or name).
pub fn port_num_or_name_errors(path: &str, port: &Value) -> Vec<StatusCause> {
    match port {
        Value::String(name) => port_name_errors(name)
            .into_iter()
            .map(|m| field::invalid(path, port, m))
            .collect(),
        other => port_num_errors(other.as_i64().unwrap_or(0))
            .into_iter()
            .map(|m| field::invalid(path, other, m))
            .collect(),
    }
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

const LABEL_KEY_MSG: &str = "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

fn is_name_part(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

/// `IsQualifiedName` (`content.IsLabelKey`): every message, as Go lists them.
pub fn qualified_name_messages(value: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = value.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else {
                let msgs = crate::registry::object_meta::name_errors(
                    prefix,
                    crate::registry::object_meta::NameRule::Subdomain,
                );
                errs.extend(msgs.into_iter().map(|m| format!("prefix part {m}")));
            }
            *name
        }
        _ => {
            errs.push(format!("a valid label key {LABEL_KEY_MSG} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"));
            return errs;
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        errs.push("name part must be no more than 63 characters".to_string());
    }
    if !is_name_part(name) {
        errs.push(format!("name part {LABEL_KEY_MSG}"));
    }
    errs
}

/// `ValidateQualifiedName` at `path`.
pub fn qualified_name_errors(path: &str, value: &str) -> Vec<StatusCause> {
    qualified_name_messages(value)
        .iter()
        .map(|m| field::invalid(path, &Value::String(value.into()), m))
        .collect()
}

/// `IsValidLabelValue`.
pub fn label_value_messages(value: &str) -> Vec<&'static str> {
    let mut errs = Vec::new();
    if value.len() > 63 {
        errs.push("must be no more than 63 characters");
    }
    if !value.is_empty() && !is_name_part(value) {
        errs.push(LABEL_VALUE_MSG);
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
        for m in label_value_messages(value) {
            errs.push(field::invalid(path, v, m));
        }
    }
    errs
}

/// `netutils.ParseIPSloppy`: IPv4 octets may carry leading zeros; anything else as
/// `net.ParseIP`.
pub fn parse_ip_sloppy(value: &str) -> Option<std::net::IpAddr> {
    if let Ok(ip) = value.parse::<std::net::IpAddr>() {
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
    Some(std::net::IpAddr::from(out))
}

/// `IsValidIPForLegacyField` with strict validation (the 1.36 default): the messages of an IP
/// that does not parse, has leading zeros or is IPv4-mapped IPv6. Values in `valid_old` pass.
pub fn legacy_ip_errors(path: &str, value: &str, valid_old: &[&str]) -> Vec<StatusCause> {
    if valid_old.contains(&value) {
        return Vec::new();
    }
    let v = Value::String(value.into());
    let Some(ip) = parse_ip_sloppy(value) else {
        return vec![field::invalid(
            path,
            &v,
            "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
        )];
    };
    let mut errs = Vec::new();
    if value.parse::<std::net::IpAddr>().is_err() {
        errs.push(field::invalid(path, &v, "must not have leading 0s"));
    }
    if let std::net::IpAddr::V6(v6) = ip {
        if v6.to_ipv4_mapped().is_some() {
            errs.push(field::invalid(
                path,
                &v,
                "must not be an IPv4-mapped IPv6 address",
            ));
        }
    }
    errs
}

/// `ValidateEndpointIP`: an endpoint may not be unspecified, loopback or link-local.
pub fn endpoint_ip_errors(path: &str, value: &str) -> Vec<StatusCause> {
    let v = Value::String(value.into());
    let Some(ip) = parse_ip_sloppy(value) else {
        return vec![field::invalid(path, &v, "must be a valid IP address")];
    };
    let ip = match ip {
        std::net::IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, std::net::IpAddr::V4),
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
        std::net::IpAddr::V4(a) => (a.is_link_local(), a.octets()[..3] == [224, 0, 0]),
        std::net::IpAddr::V6(a) => (
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
    let q = q.trim();
    let split = q
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+' || c == '-'))
        .unwrap_or(q.len());
    let (number, suffix) = q.split_at(split);
    let n: f64 = number.parse().ok()?;
    let binary = |p: i32| Some(n * 1024f64.powi(p));
    let decimal = |p: i32| Some(n * 10f64.powi(p));
    match suffix {
        "" => Some(n),
        "n" => decimal(-9),
        "u" => decimal(-6),
        "m" => decimal(-3),
        "k" => decimal(3),
        "M" => decimal(6),
        "G" => decimal(9),
        "T" => decimal(12),
        "P" => decimal(15),
        "E" => decimal(18),
        "Ki" => binary(1),
        "Mi" => binary(2),
        "Gi" => binary(3),
        "Ti" => binary(4),
        "Pi" => binary(5),
        "Ei" => binary(6),
        s if s.starts_with(['e', 'E']) => decimal(s[1..].parse().ok()?),
        _ => None,
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_map_keys() {
        assert!(config_map_key_errors("key.name").is_empty());
        assert!(config_map_key_errors("KEY_NAME-1").is_empty());
        assert_eq!(config_map_key_errors("..a"), ["must not start with '..'"]);
        assert_eq!(config_map_key_errors("a/b").len(), 1);
        assert_eq!(config_map_key_errors(&"a".repeat(254)).len(), 1);
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
        assert_eq!(port_name_errors("http"), Vec::<&str>::new());
        assert_eq!(
            port_name_errors("8080"),
            ["must contain at least one letter (a-z)"]
        );
    }
}
