//! Defaulting (`defaulting/algorithm.go`): missing fields, and `null`s of non-nullable fields,
//! get a copy of their schema `default`; then defaulting descends into every field, defaulted
//! ones included, so nested defaults of a defaulted object apply too.

use serde_json::Value;

use super::structural::Node;

fn non_nullable_null(x: &Value, s: Option<&Node>) -> bool {
    x.is_null() && s.is_some_and(|s| !s.nullable)
}

/// Applies the defaults of `s` to `x`.
pub fn default(x: &mut Value, s: Option<&Node>) {
    let Some(s) = s else { return };
    if !s.sub_defaults {
        // Nothing below has a default: defaulting could only copy `null` defaults over nulls.
        return;
    }
    match x {
        Value::Object(m) => {
            if !s.defaulted.is_empty() {
                // `s.defaulted` names the properties with a default; walking `properties`
                // instead spares a lookup of each.
                for (k, prop) in &s.properties {
                    let Some(d) = &prop.default else { continue };
                    match m.get_mut(k.as_str()) {
                        None => {
                            m.insert(k.clone(), d.clone());
                        }
                        Some(v) if non_nullable_null(v, Some(prop)) => *v = d.clone(),
                        Some(_) => {}
                    }
                }
            }
            if s.additional_schema().is_some_and(|a| a.sub_defaults) {
                let mut props = s.prop_cursor(m.len());
                for (k, v) in m.iter_mut() {
                    if let Some(prop) = props.get(k) {
                        default(v, Some(prop));
                    } else {
                        let add = s.additional_schema();
                        if non_nullable_null(v, add) {
                            *v = add.and_then(|a| a.default.clone()).unwrap_or(Value::Null);
                        }
                        default(v, add);
                    }
                }
            } else {
                // Only properties with defaults below them can change (`s.sub_default_props`).
                for (k, prop) in &s.properties {
                    if prop.sub_defaults {
                        if let Some(v) = m.get_mut(k.as_str()) {
                            default(v, Some(prop));
                        }
                    }
                }
            }
        }
        Value::Array(a) => {
            let items = s.items.as_deref();
            for v in a.iter_mut() {
                if non_nullable_null(v, items) {
                    *v = items.and_then(|i| i.default.clone()).unwrap_or(Value::Null);
                }
                default(v, items);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::pruning::prune_nulls;
    use crate::schema::pruning::tests::nullable_example;
    use serde_json::json;

    #[test]
    fn seed_cron_defaults() {
        let n = Node::compile(
            &json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "cronSpec": {"type": "string", "pattern": "^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$", "default": "5 0 * * *"},
            "image": {"type": "string"},
            "replicas": {"type": "integer", "minimum": 1, "maximum": 10, "default": 1}}}}}),
        );
        let mut obj = json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
            "metadata": {"name": "my-new-cron-object"}, "spec": {"image": "my-awesome-cron-image"}});
        default(&mut obj, Some(&n));
        assert_eq!(
            obj["spec"],
            json!({"cronSpec": "5 0 * * *", "image": "my-awesome-cron-image", "replicas": 1})
        );
    }

    #[test]
    fn seed_defaulting_and_nullable() {
        let (n, mut obj) = nullable_example();
        prune_nulls(&mut obj, Some(&n));
        default(&mut obj, Some(&n));
        assert_eq!(obj, json!({"spec": {"foo": "default", "bar": null}}));
    }

    #[test]
    fn nested_defaults_apply_to_defaulted_objects() {
        let n = Node::compile(
            &json!({"type": "object", "properties": {"spec": {"type": "object", "default": {},
            "properties": {"a": {"type": "integer", "default": 3},
                           "l": {"type": "array", "items": {"type": "object", "properties": {"x": {"type": "string", "default": "d"}}}},
                           "m": {"type": "object", "additionalProperties": {"type": "string", "default": "z"}}}}}}),
        );
        let mut obj = json!({});
        default(&mut obj, Some(&n));
        assert_eq!(obj, json!({"spec": {"a": 3}}));
        let mut obj = json!({"spec": {"l": [{}, {"x": "y"}], "m": {"k": null}}});
        default(&mut obj, Some(&n));
        assert_eq!(
            obj,
            json!({"spec": {"a": 3, "l": [{"x": "d"}, {"x": "y"}], "m": {"k": "z"}}})
        );
    }
}
