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

/// `field.NotFound`: `field: Not found: <value>`.
pub fn not_found(path: &str, value: &Value) -> StatusCause {
    StatusCause {
        reason: "FieldValueNotFound".into(),
        message: format!("Not found: {}", field::go_value(value)),
        field: path.into(),
    }
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
}
