//! Label selectors and label sets as the apiserver prints them (`LabelSelectorAsSelector`,
//! `SelectorFromSet`, `FormatLabelSelector`, `FormatLabels`): requirements sorted by key.

use serde_json::Value;

use super::names::{label_value_errors, qualified_name_messages};

/// `metav1.LabelSelectorAsSelector` then `String()`: the selector's requirements sorted by key
/// (`key=value`, `key in (a,b)`, `key notin (a,b)`, `key`, `!key`), `None` when it does not
/// convert (an unknown operator, an invalid key or value).
pub fn label_selector_string(selector: &Value) -> Option<String> {
    let mut reqs: Vec<(String, String)> = Vec::new();
    for (k, v) in selector["matchLabels"].as_object().into_iter().flatten() {
        let v = v.as_str().unwrap_or("");
        if !qualified_name_messages(k).is_empty() || !label_value_errors(v).is_empty() {
            return None;
        }
        reqs.push((k.clone(), format!("{k}={v}")));
    }
    for expr in selector["matchExpressions"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let key = expr["key"].as_str().unwrap_or("");
        let mut values: Vec<&str> = expr["values"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|v| v.as_str().unwrap_or(""))
            .collect();
        let bad_values = values.iter().any(|v| !label_value_errors(v).is_empty());
        if !qualified_name_messages(key).is_empty() || bad_values {
            return None;
        }
        values.sort_unstable();
        let text = match (expr["operator"].as_str(), values.is_empty()) {
            (Some("In"), false) => format!("{key} in ({})", values.join(",")),
            (Some("NotIn"), false) => format!("{key} notin ({})", values.join(",")),
            (Some("Exists"), true) => key.to_string(),
            (Some("DoesNotExist"), true) => format!("!{key}"),
            _ => return None,
        };
        reqs.push((key.to_string(), text));
    }
    reqs.sort_by(|a, b| a.0.cmp(&b.0));
    Some(
        reqs.into_iter()
            .map(|(_, t)| t)
            .collect::<Vec<_>>()
            .join(","),
    )
}

/// `metav1.FormatLabelSelector`: the selector's string, `<none>` when it selects everything,
/// `<error>` when it does not convert.
pub fn format_label_selector(selector: &Value) -> String {
    match label_selector_string(selector) {
        None => "<error>".into(),
        Some(s) if s.is_empty() => "<none>".into(),
        Some(s) => s,
    }
}

/// A label map as `labels.SelectorFromSet(...).String()` prints it: `k=v` sorted by key.
pub fn set_string(map: &Value) -> String {
    let mut pairs: Vec<String> = map
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
        .collect();
    pairs.sort();
    pairs.join(",")
}

/// `labels.FormatLabels`: the set's string, `<none>` when empty.
pub fn format_labels(labels: &Value) -> String {
    let text = set_string(labels);
    if text.is_empty() {
        "<none>".into()
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn selectors_print_as_the_apiserver_prints_them() {
        let sel = json!({"matchLabels": {"b": "2", "a": "1"},
            "matchExpressions": [{"key": "c", "operator": "In", "values": ["y", "x"]},
                                 {"key": "aa", "operator": "DoesNotExist"}]});
        assert_eq!(
            label_selector_string(&sel).as_deref(),
            Some("a=1,!aa,b=2,c in (x,y)")
        );
        assert_eq!(format_label_selector(&json!({})), "<none>");
        let bad = json!({"matchExpressions": [{"key": "k", "operator": "Near"}]});
        assert_eq!(format_label_selector(&bad), "<error>");
        assert_eq!(set_string(&json!({"z": "1", "a": "2"})), "a=2,z=1");
        assert_eq!(format_labels(&json!({})), "<none>");
    }
}
