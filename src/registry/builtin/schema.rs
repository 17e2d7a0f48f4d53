//! The structural schema of a built-in kind, compiled from the published component schemas
//! ([`data::schema_component`]): `$ref`s inlined, the types Go marshals by hand given the
//! structural form the schema pipeline understands (`IntOrString` and `Quantity` are
//! int-or-string, objects without declared fields such as `RawExtension` keep unknown fields),
//! and recursive types (`JSONSchemaProps`) cut where they recur.
//!
//! Compiled once per kind and process, on first use ([`LazySchema`]): a server start compiles
//! nothing.

use std::sync::{Arc, OnceLock};

use serde_json::{json, Map, Value};

use super::data;
use crate::schema::structural::{Additional, Node};
use crate::schema::Schema;

const REF_PREFIX: &str = "#/components/schemas/";

/// A kind's schema: compiled on first use, or given ready (custom resources).
pub enum LazySchema {
    /// Already compiled (or none).
    Ready(Option<Arc<Schema>>),
    /// A built-in definition, compiled on first use.
    Builtin {
        /// The OpenAPI definition name (`io.k8s.api.apps.v1.Deployment`).
        definition: String,
        /// The compiled schema.
        cell: OnceLock<Option<Arc<Schema>>>,
    },
}

impl LazySchema {
    /// The schema of a built-in definition, compiled when first asked for.
    pub fn builtin(definition: &str) -> LazySchema {
        LazySchema::Builtin {
            definition: definition.to_string(),
            cell: OnceLock::new(),
        }
    }

    /// The schema, if the kind has one.
    pub fn get(&self) -> Option<&Schema> {
        match self {
            LazySchema::Ready(s) => s.as_deref(),
            LazySchema::Builtin { definition, cell } => cell
                .get_or_init(|| compile(definition).map(Arc::new))
                .as_deref(),
        }
    }

    /// The schema as shared (for reuse across catalog rebuilds).
    pub fn shared(&self) -> Option<Arc<Schema>> {
        match self {
            LazySchema::Ready(s) => s.clone(),
            LazySchema::Builtin { .. } => {
                self.get();
                match self {
                    LazySchema::Builtin { cell, .. } => cell.get().cloned().flatten(),
                    LazySchema::Ready(_) => None,
                }
            }
        }
    }
}

/// Compiles a built-in definition's structural schema.
pub fn compile(definition: &str) -> Option<Schema> {
    let root = data::schema_component(definition)?;
    let mut stack = vec![definition.to_string()];
    let inlined = inline(root, &mut stack);
    Some(Schema::compile(&inlined))
}

/// The definition a `$ref` (or `allOf: [{$ref}]`) names.
fn reference(schema: &Map<String, Value>) -> Option<&str> {
    let target = match schema.get("allOf").and_then(Value::as_array) {
        Some(all) => all.first()?.get("$ref")?,
        None => schema.get("$ref")?,
    };
    target.as_str()?.strip_prefix(REF_PREFIX)
}

/// A schema with every reference replaced by its (inlined) target.
fn inline(schema: &Value, stack: &mut Vec<String>) -> Value {
    let Some(obj) = schema.as_object() else {
        return schema.clone();
    };
    if let Some(name) = reference(obj) {
        let mut out = match data::schema_component(name) {
            _ if stack.iter().any(|s| s == name) => preserve_unknown(),
            Some(target) => {
                stack.push(name.to_string());
                let inlined = inline(target, stack);
                stack.pop();
                inlined
            }
            None => preserve_unknown(),
        };
        // Keywords beside the reference (a field's default, its list type) apply too.
        if let Some(out) = out.as_object_mut() {
            for (k, v) in obj
                .iter()
                .filter(|(k, _)| !matches!(k.as_str(), "allOf" | "$ref"))
            {
                out.insert(k.clone(), inline(v, stack));
            }
        }
        return out;
    }
    let mut out = Map::new();
    for (k, v) in obj {
        let value = match k.as_str() {
            "properties" => Value::Object(
                v.as_object()
                    .into_iter()
                    .flatten()
                    .map(|(name, s)| (name.clone(), inline(s, stack)))
                    .collect(),
            ),
            "items" | "additionalProperties" if v.is_object() => inline(v, stack),
            _ => v.clone(),
        };
        out.insert(k.clone(), value);
    }
    structural_form(out)
}

fn preserve_unknown() -> Value {
    json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true})
}

/// The structural form of what the published schemas leave open: `IntOrString` (`format:
/// int-or-string`) and `Quantity` (no type: a string or a number) become int-or-string; an
/// object that declares no fields (`RawExtension`, `FieldsV1`) keeps whatever it holds.
fn structural_form(mut out: Map<String, Value>) -> Value {
    let typed = out.contains_key("type");
    if out.get("format").and_then(Value::as_str) == Some("int-or-string")
        || (!typed && !out.contains_key("properties") && !out.contains_key("items"))
    {
        out.remove("format");
        out.insert("x-kubernetes-int-or-string".into(), Value::Bool(true));
        return Value::Object(out);
    }
    let open_object = out.get("type").and_then(Value::as_str) == Some("object")
        && !out.contains_key("properties")
        && !out.contains_key("additionalProperties");
    if open_object {
        out.insert(
            "x-kubernetes-preserve-unknown-fields".into(),
            Value::Bool(true),
        );
    }
    Value::Object(out)
}

/// Applies the declarative defaults a built-in type publishes (`+default` markers, as its
/// generated defaulters do) where a field is absent: only defaults other than the zero value,
/// since a Go field's zero value is what decoding left there already. Recurses into present
/// objects, list items and map values.
pub fn apply_declared_defaults(node: &Node, obj: &mut Value) {
    match obj {
        Value::Object(map) => {
            for (name, child) in &node.properties {
                match map.get_mut(name) {
                    Some(v) => apply_declared_defaults(child, v),
                    None => {
                        if let Some(d) = child.default.as_ref().filter(|d| !is_zero(d)) {
                            map.insert(name.clone(), d.clone());
                        }
                    }
                }
            }
            if let Some(Additional::Schema(values)) = &node.additional {
                for v in map.values_mut() {
                    apply_declared_defaults(values, v);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item) = &node.items {
                for v in items {
                    apply_declared_defaults(item, v);
                }
            }
        }
        _ => {}
    }
}

/// Whether a default is its type's zero value (`{}`, `""`, `0`, `false`, `[]`).
fn is_zero(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at<'a>(schema: &'a Schema, path: &str) -> &'a crate::schema::structural::Node {
        path.split('.')
            .try_fold(schema.root(), |n, f| n.field(f))
            .unwrap_or_else(|| panic!("{path}"))
    }

    #[test]
    fn kinds_compile_with_their_list_types() {
        let deploy = compile("io.k8s.api.apps.v1.Deployment").expect("compiles");
        let containers = at(&deploy, "spec.template.spec.containers");
        assert_eq!(containers.list_type.as_deref(), Some("map"));
        assert_eq!(containers.list_map_keys, ["name"]);
        assert!(at(&deploy, "spec.strategy.rollingUpdate.maxSurge").int_or_string);
        let mut d = serde_json::json!({"spec": {"template": {"spec": {"containers": [
            {"name": "a", "ports": [{"containerPort": 80}]}]}}}});
        apply_declared_defaults(deploy.root(), &mut d);
        assert_eq!(
            d["spec"]["template"]["spec"]["containers"][0]["ports"][0]["protocol"],
            "TCP"
        );
        assert!(d["spec"].get("paused").is_none(), "zero defaults stay out");
        // A recursive type is cut where it recurs, not expanded forever.
        assert!(compile(
            "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition"
        )
        .is_some());
    }
}
