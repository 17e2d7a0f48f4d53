//! Field pruning (`pruning/algorithm.go`): removes what the structural schema does not specify
//! and records each removal in the apiserver's unknown-field wording (`spec.foo`,
//! `spec.items[0].bar`), for `fieldValidation=Strict|Warn`.

use serde_json::Value;

use super::structural::Node;

const META_FIELDS: [&str; 3] = ["apiVersion", "kind", "metadata"];

fn is_meta(k: &str) -> bool {
    META_FIELDS.contains(&k)
}

/// Unknown-field paths being collected, with the current parent path as a reusable buffer.
#[derive(Default)]
pub struct Tracker {
    path: String,
    /// Paths of the removed fields.
    pub unknown: Vec<String>,
}

impl Tracker {
    fn record(&mut self, k: &str) {
        let mut p = self.path.clone();
        if !p.is_empty() {
            p.push('.');
        }
        p.push_str(k);
        self.unknown.push(p);
    }

    fn push_key(&mut self, k: &str) -> usize {
        let len = self.path.len();
        if len > 0 {
            self.path.push('.');
        }
        self.path.push_str(k);
        len
    }

    fn push_index(&mut self, i: usize) -> usize {
        let len = self.path.len();
        self.path.push('[');
        self.path.push_str(&i.to_string());
        self.path.push(']');
        len
    }

    fn pop(&mut self, len: usize) {
        self.path.truncate(len);
    }
}

/// Prunes `obj` against `s`. `resource_root` treats the node as an embedded resource (its
/// apiVersion/kind/metadata are kept), as the apiserver does for the object root.
pub fn prune(obj: &mut Value, s: &Node, resource_root: bool, t: &mut Tracker) {
    prune_node(obj, Some(s), resource_root, t);
}

fn prune_node(x: &mut Value, s: Option<&Node>, embedded_override: bool, t: &mut Tracker) {
    if let Some(s) = s {
        if s.preserve_unknown_fields {
            skip_prune(x, s, embedded_override, t);
            return;
        }
    }
    match x {
        Value::Object(m) => {
            let Some(s) = s else {
                for k in m.keys() {
                    t.record(k);
                }
                m.clear();
                return;
            };
            let embedded = embedded_override || s.embedded_resource;
            m.retain(|k, v| {
                if embedded && is_meta(k) {
                    return true;
                }
                if let Some(prop) = s.properties.get(k) {
                    let l = t.push_key(k);
                    prune_node(v, Some(prop), false, t);
                    t.pop(l);
                    true
                } else if s.additional.is_some() {
                    let l = t.push_key(k);
                    prune_node(v, s.additional_schema(), false, t);
                    t.pop(l);
                    true
                } else {
                    if !is_meta(k) || !t.path.is_empty() {
                        t.record(k);
                    }
                    false
                }
            });
        }
        Value::Array(a) => {
            let items = s.and_then(|s| s.items.as_deref());
            for (i, v) in a.iter_mut().enumerate() {
                let l = t.push_index(i);
                prune_node(v, items, false, t);
                t.pop(l);
            }
        }
        _ => {}
    }
}

fn skip_prune(x: &mut Value, s: &Node, embedded_override: bool, t: &mut Tracker) {
    match x {
        Value::Object(m) => {
            let embedded = embedded_override || s.embedded_resource;
            for (k, v) in m.iter_mut() {
                if embedded && is_meta(k) {
                    continue;
                }
                if let Some(prop) = s.properties.get(k) {
                    let l = t.push_key(k);
                    prune_node(v, Some(prop), false, t);
                    t.pop(l);
                } else if s.additional.is_some() {
                    let l = t.push_key(k);
                    prune_node(v, s.additional_schema(), false, t);
                    t.pop(l);
                }
            }
        }
        Value::Array(a) => {
            if let Some(items) = s.items.as_deref() {
                for (i, v) in a.iter_mut().enumerate() {
                    let l = t.push_index(i);
                    skip_prune(v, items, false, t);
                    t.pop(l);
                }
            }
        }
        _ => {}
    }
}

/// `PruneNonNullableNullsWithoutDefaults`: drops `null`s of fields that are neither nullable nor
/// defaulted (nulls with a default are left for defaulting to replace).
pub fn prune_nulls(x: &mut Value, s: Option<&Node>) {
    match x {
        Value::Object(m) => {
            m.retain(|k, v| {
                // Only nulls and containers need their schema.
                if !matches!(v, Value::Null | Value::Object(_) | Value::Array(_)) {
                    return true;
                }
                let sch = s.and_then(|s| {
                    s.properties
                        .get(k.as_str())
                        .or_else(|| s.additional_schema())
                });
                if v.is_null() {
                    return !sch.is_some_and(|n| !n.nullable && n.default.is_none());
                }
                prune_nulls(v, sch);
                true
            });
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
mod tests {
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

    #[test]
    fn seed_nullable_example_prunes_nulls() {
        let n = Node::compile(
            &json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "foo": {"type": "string", "nullable": false, "default": "default"},
            "bar": {"type": "string", "nullable": true},
            "baz": {"type": "string"}}}}}),
        );
        let mut obj = json!({"spec": {"foo": null, "bar": null, "baz": null}});
        prune_nulls(&mut obj, Some(&n));
        assert_eq!(obj, json!({"spec": {"foo": null, "bar": null}}));
    }
}
