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

/// `ValidateNonnegativeField` of an integer at `pointer` (absent counts as 0).
pub fn nonnegative(obj: &Value, pointer: &str, path: &str) -> Vec<StatusCause> {
    match obj.pointer(pointer).and_then(Value::as_i64) {
        Some(v) if v < 0 => vec![field::invalid(
            path,
            &Value::from(v),
            "must be greater than or equal to 0",
        )],
        _ => Vec::new(),
    }
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

/// `metav1 ValidateLabelSelector` at `path`: label keys and values of `matchLabels`, and
/// each expression's operator, key and values.
pub fn label_selector_errors(selector: &Value, path: &str) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    if let Some(labels) = selector.get("matchLabels").and_then(Value::as_object) {
        let mut meta = serde_json::Map::new();
        meta.insert("labels".into(), Value::Object(labels.clone()));
        let mut found = Vec::new();
        crate::registry::object_meta::validate_labels_and_annotations(&meta, path, &mut found);
        for mut e in found {
            e.field = format!("{path}.matchLabels");
            errs.push(e);
        }
    }
    let exprs = selector.get("matchExpressions").and_then(Value::as_array);
    for (i, expr) in exprs.into_iter().flatten().enumerate() {
        let at = format!("{path}.matchExpressions[{i}]");
        let values: Vec<&Value> = expr["values"].as_array().into_iter().flatten().collect();
        match expr["operator"].as_str().unwrap_or("") {
            "In" | "NotIn" if values.is_empty() => errs.push(field::required(
                &format!("{at}.values"),
                "must be specified when `operator` is 'In' or 'NotIn'",
            )),
            "Exists" | "DoesNotExist" if !values.is_empty() => errs.push(field::forbidden(
                &format!("{at}.values"),
                "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            )),
            "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
            other => errs.push(field::invalid(
                &format!("{at}.operator"),
                &Value::from(other),
                "not a valid selector operator",
            )),
        }
        let key = expr["key"].as_str().unwrap_or("");
        if !crate::registry::object_meta::is_qualified_name(key) {
            errs.push(field::invalid(
                &format!("{at}.key"),
                &Value::from(key),
                crate::registry::object_meta::QUALIFIED_NAME_MSG,
            ));
        }
        for (j, v) in values.iter().enumerate() {
            let text = v.as_str().unwrap_or("");
            if !crate::registry::object_meta::is_label_value(text) {
                errs.push(field::invalid(
                    &format!("{at}.values[{j}]"),
                    &Value::from(text),
                    LABEL_VALUE_MSG,
                ));
            }
        }
    }
    errs
}

/// `IsValidLabelValue`'s message.
const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

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

#[cfg(test)]
mod tests {
    use super::*;

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
            label_selector_errors(&bad, "spec.selector")[0].message,
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
}
