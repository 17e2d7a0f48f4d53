//! The bytes of a built-in object in Go's field order, as the apiserver's encoding/json writes
//! its typed structs: each struct's fields in declaration order (the embedded `TypeMeta`
//! first: `kind`, `apiVersion`, then `metadata`, `spec`, `status`), map keys sorted. Objects of
//! other kinds (custom resources, kinds outside the type table) are written with their keys
//! sorted, as encoding/json writes unstructured maps. Values are written as the store writes
//! them (`store::write_json`); only the order of keys differs.

use serde_json::{Map, Value};

use super::model::{MsgId, Scalar, Special, Ty, TABLE};
use crate::store::{write_json, write_json_str};

/// Appends `v` as compact JSON, a built-in kind's keys in Go's field order.
pub fn write(out: &mut Vec<u8>, v: &Value) {
    let kind = |key| v.get(key).and_then(Value::as_str).unwrap_or("");
    match (v, TABLE.kind(kind("apiVersion"), kind("kind"))) {
        (Value::Object(map), Some(id)) => write_struct(out, map, id),
        _ => write_json(out, v),
    }
}

/// `v` as compact JSON bytes (see [`write()`]).
pub fn to_vec(v: &Value) -> Vec<u8> {
    let mut out = Vec::with_capacity(512);
    write(&mut out, v);
    out
}

/// A struct's fields in declaration order; keys the type does not know (none after the
/// apiserver's decoding) last, sorted.
fn write_struct(out: &mut Vec<u8>, map: &Map<String, Value>, id: MsgId) {
    let fields = TABLE.json_fields(id);
    // Placed by field index, without sorting or allocating for the usual struct; the rare key
    // past the slots (or unknown) is sorted in after them.
    let mut slots: [Option<(&String, &Value)>; SLOTS] = [None; SLOTS];
    let mut used = 0;
    let mut rest: Vec<(usize, &String, &Value)> = Vec::new();
    for (k, v) in map {
        match fields.index(k) {
            Some(i) if i < SLOTS => {
                slots[i] = Some((k, v));
                used = used.max(i + 1);
            }
            other => rest.push((other.unwrap_or(usize::MAX), k, v)),
        }
    }
    // Stable: the unknown keys keep their sorted order.
    rest.sort_by_key(|&(i, _, _)| i);
    let placed = slots[..used]
        .iter()
        .enumerate()
        .filter_map(|(i, s)| s.map(|(k, v)| (i, k, v)));
    out.push(b'{');
    for (n, (i, key, value)) in placed.chain(rest).enumerate() {
        if n > 0 {
            out.push(b',');
        }
        write_json_str(out, key);
        out.push(b':');
        match fields.fields.get(i) {
            Some(f) => write_typed(out, value, f.field.ty),
            None => write_json(out, value),
        }
    }
    out.push(b'}');
}

/// Fields placed by index: more than any built-in struct has, inline structs flattened.
const SLOTS: usize = 64;

/// A value of a field's type: structs in their order, lists and maps of structs element by
/// element, everything else (scalars, hand-written JSON forms) as it is.
fn write_typed(out: &mut Vec<u8>, v: &Value, ty: Ty) {
    let structure = |s: Scalar| match s {
        Scalar::Message(id) if TABLE.message(id).special == Special::None => Some(id),
        _ => None,
    };
    match (ty, v) {
        (Ty::One(s), Value::Object(map)) => match structure(s) {
            Some(id) => write_struct(out, map, id),
            None => write_json(out, v),
        },
        (Ty::List(s), Value::Array(items)) if structure(s).is_some() => {
            out.push(b'[');
            for (n, item) in items.iter().enumerate() {
                if n > 0 {
                    out.push(b',');
                }
                write_typed(out, item, Ty::One(s));
            }
            out.push(b']');
        }
        (Ty::Map(s), Value::Object(map)) if structure(s).is_some() => {
            out.push(b'{');
            for (n, (key, value)) in map.iter().enumerate() {
                if n > 0 {
                    out.push(b',');
                }
                write_json_str(out, key);
                out.push(b':');
                write_typed(out, value, Ty::One(s));
            }
            out.push(b'}');
        }
        _ => write_json(out, v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn written(v: &Value) -> String {
        let mut out = Vec::new();
        write(&mut out, v);
        String::from_utf8(out).expect("UTF-8")
    }

    #[test]
    fn built_in_kinds_follow_go_struct_order() {
        let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"uid": "u", "name": "web", "namespace": "default",
                "labels": {"b": "2", "a": "1"}, "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "i",
                "ports": [{"protocol": "TCP", "containerPort": 80}]}]},
                "metadata": {"labels": {"app": "web"}}},
                "selector": {"matchLabels": {"app": "web"}}, "replicas": 1},
            "status": {"replicas": 1, "observedGeneration": 1}});
        assert_eq!(
            written(&deployment),
            concat!(
                r#"{"kind":"Deployment","apiVersion":"apps/v1","#,
                r#""metadata":{"name":"web","namespace":"default","uid":"u","#,
                r#""creationTimestamp":"2026-01-01T00:00:00Z","labels":{"a":"1","b":"2"}},"#,
                r#""spec":{"replicas":1,"selector":{"matchLabels":{"app":"web"}},"#,
                r#""template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":"#,
                r#"[{"name":"c","image":"i","ports":[{"containerPort":80,"protocol":"TCP"}]}]}}},"#,
                r#""status":{"observedGeneration":1,"replicas":1}}"#
            )
        );
    }

    #[test]
    fn configmaps_keep_their_data_sorted() {
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
            "data": {"z": "1", "a": "2"}, "binaryData": {"b": "AA=="}});
        assert_eq!(
            written(&cm),
            r#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c"},"data":{"a":"2","z":"1"},"binaryData":{"b":"AA=="}}"#
        );
    }

    #[test]
    fn other_objects_are_written_with_sorted_keys() {
        for v in [
            json!({"kind": "CronTab", "apiVersion": "stable.example.com/v1",
                "spec": {"b": 1, "a": {"d": [1, {"z": 0, "y": 1}]}}, "metadata": {"name": "x"}}),
            json!({"kind": "Deployment", "apiVersion": "apps/v999", "metadata": {}}),
            json!([1, "two"]),
        ] {
            assert_eq!(written(&v), serde_json::to_string(&v).expect("JSON"));
        }
    }

    #[test]
    fn unknown_keys_come_last_and_embedded_json_stays_as_it_is() {
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "zzz": 1, "aaa": 2,
            "metadata": {"name": "c", "managedFields": [{"manager": "m",
                "fieldsV1": {"f:data": {}, "f:b": {}}, "apiVersion": "v1"}]}});
        assert_eq!(
            written(&cm),
            concat!(
                r#"{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"c","managedFields":"#,
                r#"[{"manager":"m","apiVersion":"v1","fieldsV1":{"f:b":{},"f:data":{}}}]},"#,
                r#""aaa":2,"zzz":1}"#
            )
        );
    }
}
