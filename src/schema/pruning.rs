//! Field pruning (`pruning/algorithm.go`): removes what the structural schema does not specify
//! and records each removal in the apiserver's unknown-field wording (`spec.foo`,
//! `spec.items[0].bar`), for `fieldValidation=Strict|Warn`.

use serde_json::{Map, Value};

use super::structural::{maps_are_sorted, Node};
use super::validation::{Seg, VPath};

const META_FIELDS: [&str; 3] = ["apiVersion", "kind", "metadata"];

fn is_meta(k: &str) -> bool {
    META_FIELDS.contains(&k)
}

/// Unknown-field paths being collected.
#[derive(Default)]
pub struct Tracker {
    /// Paths of the removed fields.
    pub unknown: Vec<String>,
}

impl Tracker {
    /// Records the removal of field `k` of the object at `p`. Paths are rendered only here: on
    /// the happy path pruning builds no strings.
    fn record(&mut self, p: &VPath, k: &str) {
        self.unknown.push(p.child(Seg::Prop(k)).field());
    }
}

/// Prunes `obj` against `s`. `resource_root` treats the node as an embedded resource (its
/// apiVersion/kind/metadata are kept), as the apiserver does for the object root.
pub fn prune(obj: &mut Value, s: &Node, resource_root: bool, t: &mut Tracker) {
    prune_node(obj, Some(s), resource_root, &VPath::root(), t);
}

fn prune_node(
    x: &mut Value,
    s: Option<&Node>,
    embedded_override: bool,
    p: &VPath,
    t: &mut Tracker,
) {
    if let Some(s) = s {
        if s.preserve_unknown_fields {
            skip_prune(x, s, embedded_override, p, t);
            return;
        }
    }
    match x {
        Value::Object(m) => {
            let Some(s) = s else {
                for k in m.keys() {
                    t.record(p, k);
                }
                m.clear();
                return;
            };
            // Known fields are pruned in place; unknown ones, which are rare, are collected and
            // removed afterwards (rebuilding the map with `retain` would cost on every object).
            let mut unknown: Vec<String> = Vec::new();
            prune_fields(m, s, embedded_override, p, t, Some(&mut unknown));
            for k in &unknown {
                // apiVersion/kind/metadata directly under the root are removed silently.
                if !is_meta(k) || !p.field().is_empty() {
                    t.record(p, k);
                }
            }
            if maps_are_sorted() {
                for k in &unknown {
                    m.remove(k);
                }
            } else if !unknown.is_empty() {
                // `remove` would reorder an insertion-ordered map.
                m.retain(|k, _| !unknown.contains(k));
            }
        }
        Value::Array(a) => {
            let items = s.and_then(|s| s.items.as_deref());
            for (i, v) in a.iter_mut().enumerate() {
                prune_node(v, items, false, &p.child(Seg::Index(i)), t);
            }
        }
        _ => {}
    }
}

/// Below `x-kubernetes-preserve-unknown-fields`: unknown fields are kept, known ones pruned.
fn skip_prune(x: &mut Value, s: &Node, embedded_override: bool, p: &VPath, t: &mut Tracker) {
    match x {
        Value::Object(m) => prune_fields(m, s, embedded_override, p, t, None),
        Value::Array(a) => {
            if let Some(items) = s.items.as_deref() {
                for (i, v) in a.iter_mut().enumerate() {
                    skip_prune(v, items, false, &p.child(Seg::Index(i)), t);
                }
            }
        }
        _ => {}
    }
}

/// Prunes the values of the fields of `m` that `s` specifies (by `properties` or
/// `additionalProperties`), leaving apiVersion/kind/metadata of an embedded resource alone;
/// the names of the other fields go to `unknown`, when given.
fn prune_fields(
    m: &mut Map<String, Value>,
    s: &Node,
    embedded_override: bool,
    p: &VPath,
    t: &mut Tracker,
    mut unknown: Option<&mut Vec<String>>,
) {
    let embedded = embedded_override || s.embedded_resource;
    let mut props = s.prop_cursor(m.len());
    for (k, v) in m.iter_mut() {
        if embedded && is_meta(k) {
            continue;
        }
        if let Some(prop) = props.get(k) {
            prune_node(v, Some(prop), false, &p.child(Seg::Prop(k)), t);
        } else if s.additional.is_some() {
            prune_node(v, s.additional_schema(), false, &p.child(Seg::Prop(k)), t);
        } else if let Some(u) = unknown.as_deref_mut() {
            u.push(k.clone());
        }
    }
}

/// Whether a `null` of a field with schema `s` is dropped: neither nullable nor defaulted.
fn drops_null(s: Option<&Node>) -> bool {
    s.is_some_and(|n| !n.nullable && n.default.is_none())
}

/// `PruneNonNullableNullsWithoutDefaults`: drops `null`s of fields that are neither nullable nor
/// defaulted (nulls with a default are left for defaulting to replace).
pub fn prune_nulls(x: &mut Value, s: Option<&Node>) {
    match x {
        Value::Object(m) => {
            // Containers are visited in place; the map is rebuilt only when it holds a `null`
            // to drop.
            let mut props = s.map(|s| s.prop_cursor(m.len()));
            let mut has_dropped_null = false;
            for (k, v) in m.iter_mut() {
                // Only nulls and containers need their schema.
                if !matches!(v, Value::Null | Value::Object(_) | Value::Array(_)) {
                    continue;
                }
                let sch = s.and_then(|s| {
                    props
                        .as_mut()
                        .and_then(|p| p.get(k))
                        .or_else(|| s.additional_schema())
                });
                if v.is_null() {
                    has_dropped_null |= drops_null(sch);
                } else {
                    prune_nulls(v, sch);
                }
            }
            if has_dropped_null {
                m.retain(|k, v| {
                    !v.is_null()
                        || !drops_null(s.and_then(|s| {
                            s.properties
                                .get(k.as_str())
                                .or_else(|| s.additional_schema())
                        }))
                });
            }
        }
        Value::Array(a) => {
            let items = s.and_then(|s| s.items.as_deref());
            for v in a.iter_mut() {
                if matches!(v, Value::Object(_) | Value::Array(_)) {
                    prune_nulls(v, items);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use serde_json::json;

    fn run(schema: Value, mut obj: Value) -> (Value, Vec<String>) {
        let n = Node::compile(&schema);
        let mut t = Tracker::default();
        prune(&mut obj, &n, true, &mut t);
        t.unknown.sort();
        (obj, t.unknown)
    }

    #[test]
    fn seed_some_random_field_is_pruned() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "cronSpec": {"type": "string"}, "image": {"type": "string"}, "replicas": {"type": "integer"}}}}});
        let (obj, unknown) = run(
            schema,
            json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
                "metadata": {"name": "my-new-cron-object"},
                "spec": {"cronSpec": "* * * * */5", "image": "my-awesome-cron-image", "someRandomField": 42}}),
        );
        assert_eq!(unknown, vec!["spec.someRandomField"]);
        assert_eq!(
            obj,
            json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
                "metadata": {"name": "my-new-cron-object"},
                "spec": {"cronSpec": "* * * * */5", "image": "my-awesome-cron-image"}})
        );
    }

    #[test]
    fn seed_controlling_pruning() {
        let schema = json!({"type": "object", "properties": {"json": {
            "x-kubernetes-preserve-unknown-fields": true, "type": "object",
            "properties": {"spec": {"type": "object", "properties": {
                "foo": {"type": "string"}, "bar": {"type": "string"}}}}}}});
        let (obj, unknown) = run(
            schema,
            json!({"json": {"spec": {"foo": "abc", "bar": "def", "something": "x"},
                            "status": {"something": "x"}}}),
        );
        assert_eq!(unknown, vec!["json.spec.something"]);
        assert_eq!(
            obj,
            json!({"json": {"spec": {"foo": "abc", "bar": "def"}, "status": {"something": "x"}}})
        );
        // A bare preserve-unknown-fields node keeps anything.
        let (obj, unknown) = run(
            json!({"type": "object", "properties": {"json": {"x-kubernetes-preserve-unknown-fields": true}}}),
            json!({"json": {"a": [1, {"b": null}]}}),
        );
        assert!(unknown.is_empty());
        assert_eq!(obj, json!({"json": {"a": [1, {"b": null}]}}));
    }

    #[test]
    fn arrays_maps_and_embedded() {
        let schema = json!({"type": "object", "properties": {
            "list": {"type": "array", "items": {"type": "object", "properties": {"a": {"type": "string"}}}},
            "map": {"type": "object", "additionalProperties": {"type": "object", "properties": {"a": {"type": "string"}}}},
            "pod": {"type": "object", "x-kubernetes-embedded-resource": true, "properties": {"spec": {"type": "object"}}}}});
        let (obj, unknown) = run(
            schema,
            json!({"list": [{"a": "x", "b": 1}], "map": {"k": {"a": "x", "c": 2}},
                   "pod": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"x": 1}, "other": 1}}),
        );
        assert_eq!(
            unknown,
            vec!["list[0].b", "map.k.c", "pod.other", "pod.spec.x"]
        );
        assert_eq!(obj["pod"]["metadata"], json!({"name": "p"}));
        assert_eq!(obj["pod"]["spec"], json!({}));
    }

    /// The documentation's nullable example: its schema and an object of nulls.
    pub(in crate::schema) fn nullable_example() -> (Node, Value) {
        let n = Node::compile(
            &json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "foo": {"type": "string", "nullable": false, "default": "default"},
            "bar": {"type": "string", "nullable": true},
            "baz": {"type": "string"}}}}}),
        );
        (n, json!({"spec": {"foo": null, "bar": null, "baz": null}}))
    }

    #[test]
    fn seed_nullable_example_prunes_nulls() {
        let (n, mut obj) = nullable_example();
        prune_nulls(&mut obj, Some(&n));
        assert_eq!(obj, json!({"spec": {"foo": null, "bar": null}}));
    }
}
