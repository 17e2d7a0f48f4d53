//! `x-kubernetes-list-type: set|map` invariants (`listtype/validation.go`): no duplicate set
//! elements, no two map-list elements with the same keys.

use serde_json::{Map, Value};

use super::structural::Node;
use super::validation::{Seg, VPath};
use crate::error::StatusCause;
use crate::machinery::gofmt::{error_value, go_json};

fn duplicate(p: &VPath, i: usize, v: &Value) -> StatusCause {
    StatusCause {
        reason: "FieldValueDuplicate".into(),
        message: format!("Duplicate value: {}", error_value(v)),
        field: p.child(Seg::Index(i)).field(),
    }
}

/// Validates the list sets and maps below an object (the root of a custom resource).
pub fn validate_object(m: &Map<String, Value>, s: &Node, p: &VPath, out: &mut Vec<StatusCause>) {
    if !s.sub_list_types {
        return;
    }
    if let Some(add) = s.additional_schema() {
        for (k, v) in m {
            validate_value(v, add, &p.child(Seg::Key(k)), out);
        }
    }
    if !s.properties.is_empty() {
        let mut props = s.prop_cursor(m.len());
        for (k, v) in m {
            if let Some(sub) = props.get(k) {
                validate_value(v, sub, &p.child(Seg::Prop(k)), out);
            }
        }
    }
}

fn validate_value(v: &Value, s: &Node, p: &VPath, out: &mut Vec<StatusCause>) {
    if !s.sub_list_types {
        return;
    }
    match v {
        Value::Array(a) => validate_array(a, s, p, out),
        Value::Object(m) => validate_object(m, s, p, out),
        _ => {}
    }
}

/// Identity of a set element: scalars by Go value (int64 and float64 differ), compounds by JSON.
#[derive(PartialEq)]
enum Ident<'a> {
    Scalar(&'a Value),
    Compound(String),
    Unspecified,
}

fn ident(v: &Value) -> Ident<'_> {
    match v {
        Value::Object(_) | Value::Array(_) => Ident::Compound(go_json(v)),
        other => Ident::Scalar(other),
    }
}

/// Indices of the second occurrence of each duplicated element.
fn non_unique(ids: &[Ident]) -> Vec<usize> {
    let mut out = Vec::new();
    for i in 0..ids.len() {
        let before = ids[..i].iter().filter(|x| **x == ids[i]).count();
        if before == 1 {
            out.push(i);
        }
    }
    out
}

fn validate_array(a: &[Value], s: &Node, p: &VPath, out: &mut Vec<StatusCause>) {
    match s.list_type.as_deref() {
        Some("set") if a.len() > 1 => {
            let ids: Vec<Ident> = a.iter().map(ident).collect();
            for i in non_unique(&ids) {
                out.push(duplicate(p, i, &a[i]));
            }
        }
        Some("map") => validate_map(a, s, p, out),
        _ => {}
    }
    if let Some(items) = &s.items {
        for (i, v) in a.iter().enumerate() {
            validate_value(v, items, &p.child(Seg::Index(i)), out);
        }
    }
}

fn validate_map(a: &[Value], s: &Node, p: &VPath, out: &mut Vec<StatusCause>) {
    for (i, x) in a.iter().enumerate() {
        if !x.is_null() && !x.is_object() {
            out.push(StatusCause {
                reason: "FieldValueInvalid".into(),
                message: format!(
                    "Invalid value: {}: must be an object for an array of list-type map",
                    error_value(x)
                ),
                field: p.child(Seg::Index(i)).field(),
            });
            return;
        }
    }
    if a.len() <= 1 {
        return;
    }
    let ids: Vec<Ident> = if let [key] = s.list_map_keys.as_slice() {
        a.iter()
            .map(|x| match x.as_object().and_then(|m| m.get(key)) {
                None => Ident::Unspecified,
                Some(v) => ident(v),
            })
            .collect()
    } else {
        a.iter()
            .map(|x| Ident::Compound(go_json(&map_key(x, s))))
            .collect()
    };
    for i in non_unique(&ids) {
        out.push(duplicate(p, i, &map_key(&a[i], s)));
    }
}

/// The map-list key of an element: an object of its `x-kubernetes-list-map-keys` fields.
fn map_key(x: &Value, s: &Node) -> Value {
    let mut key = Map::new();
    if let Some(m) = x.as_object() {
        for k in &s.list_map_keys {
            if let Some(v) = m.get(k) {
                key.insert(k.clone(), v.clone());
            }
        }
    }
    Value::Object(key)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(schema: Value, obj: Value) -> Vec<String> {
        let n = Node::compile(&schema);
        let mut out = Vec::new();
        validate_object(
            obj.as_object().expect("object"),
            &n,
            &VPath::root(),
            &mut out,
        );
        out.into_iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect()
    }

    #[test]
    fn sets_and_maps() {
        let schema = json!({"type": "object", "properties": {
            "s": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
            "m": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                  "items": {"type": "object", "properties": {"name": {"type": "string"}, "p": {"type": "integer"}}}},
            "mm": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["a", "b"],
                  "items": {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "integer"}}}}}});
        assert_eq!(
            run(schema.clone(), json!({"s": ["a", "b", "a", "a"]})),
            vec![r#"s[2]: Duplicate value: "a""#]
        );
        assert_eq!(
            run(
                schema.clone(),
                json!({"m": [{"name": "x", "p": 1}, {"name": "x", "p": 2}]})
            ),
            vec![r#"m[1]: Duplicate value: {"name":"x"}"#]
        );
        assert_eq!(
            run(
                schema.clone(),
                json!({"mm": [{"a": "x", "b": 1}, {"a": "x", "b": 1}, {"a": "x", "b": 2}]})
            ),
            vec![r#"mm[1]: Duplicate value: {"a":"x","b":1}"#]
        );
        assert_eq!(
            run(schema.clone(), json!({"m": [{"p": 1}, {"p": 2}]})),
            vec!["m[1]: Duplicate value: {}"]
        );
        assert_eq!(
            run(schema, json!({"m": [1]})),
            vec!["m[0]: Invalid value: 1: must be an object for an array of list-type map"]
        );
    }
}
