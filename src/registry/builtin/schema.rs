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
use crate::schema::reference::reference;
use crate::schema::shape::{Published, Shape};
use crate::schema::zero::is_zero;
use crate::schema::Schema;

/// A kind's schema: compiled on first use, or given ready (custom resources).
pub enum LazySchema {
    /// Already compiled (or none).
    Ready(Option<Arc<Schema>>),
    /// A built-in definition, compiled on first use.
    Builtin {
        /// The OpenAPI definition name (`io.k8s.api.apps.v1.Deployment`), as published.
        definition: &'static str,
        /// Whether it is small enough to compile for the walk by type
        /// ([`data::is_small_schema`], asked once here rather than on every write).
        small: bool,
        /// The compiled schema.
        cell: OnceLock<Option<Arc<Schema>>>,
    },
}

impl LazySchema {
    /// The schema of a built-in definition, compiled when first asked for.
    pub fn builtin(definition: &'static str) -> LazySchema {
        LazySchema::Builtin {
            definition,
            small: data::is_small_schema(definition),
            cell: OnceLock::new(),
        }
    }

    /// The schema, if the kind has one.
    pub fn get(&self) -> Option<&Schema> {
        match self {
            LazySchema::Ready(s) => s.as_deref(),
            LazySchema::Builtin {
                definition, cell, ..
            } => cell
                .get_or_init(|| compile(definition).map(Arc::new))
                .as_deref(),
        }
    }

    /// What a walk by type (managedFields, server-side apply) reads of the schema: a large
    /// built-in definition is read in place ([`Shape::Published`]) rather than compiled, which
    /// a kind with a PodSpec took tens of milliseconds over in a debug build; a small one
    /// (a ConfigMap's) is compiled, which its writes then read faster.
    pub fn shape(&self) -> Option<Shape<'_>> {
        match self {
            LazySchema::Ready(s) => s.as_deref().map(|s| Shape::Compiled(s.root())),
            LazySchema::Builtin { small: true, .. } => {
                self.get().map(|s| Shape::Compiled(s.root()))
            }
            LazySchema::Builtin { definition, .. } => {
                let schema = data::schema_component(definition)?;
                Published::new(schema, data::schema_component).map(Shape::Published)
            }
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
        // Keywords beside the reference (a field's default, its list type) apply too, as
        // they are: they are values, not schemas (a `default: {}` is an empty object).
        if let Some(out) = out.as_object_mut() {
            for (k, v) in obj
                .iter()
                .filter(|(k, _)| !matches!(k.as_str(), "allOf" | "$ref"))
            {
                out.insert(k.clone(), v.clone());
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

/// The declarative defaults a built-in type publishes (`+default` markers, as its generated
/// defaulters apply them), and only where they are: what every write of the kind applies,
/// found in the published schemas without compiling the kind's whole structural schema (most
/// kinds have none, so a server's bootstrap objects need no schema at all). Only defaults
/// other than the zero value are kept, since a Go field's zero value is what decoding left
/// there already.
#[derive(Debug, Default, PartialEq)]
pub struct Defaults {
    /// The fields with a default or with defaults inside: (name, the default when the field
    /// is absent, the defaults inside when it is present).
    fields: Vec<(String, Option<Value>, Defaults)>,
    /// The defaults inside each list item.
    items: Option<Box<Defaults>>,
    /// The defaults inside each map value (`additionalProperties`).
    values: Option<Box<Defaults>>,
}

/// What the defaults walk finds at one schema node.
#[derive(Default)]
struct Walked {
    default: Option<Value>,
    inner: Defaults,
}

impl Defaults {
    /// The declared defaults of a built-in definition (none for an unknown one), found in the
    /// definitions' defaults skeletons ([`data::defaults_skeleton`]) rather than their whole
    /// schemas. Its references are followed as [`compile`] inlines them, recursive types cut
    /// where they recur.
    pub fn of(definition: &str) -> Defaults {
        let Some(root) = data::defaults_skeleton(definition) else {
            return Defaults::default();
        };
        let mut stack = vec![definition.to_string()];
        walk(root, &mut stack).inner
    }

    fn is_empty(&self) -> bool {
        self.fields.is_empty() && self.items.is_none() && self.values.is_none()
    }

    /// Applies the defaults where a field is absent; recurses into present objects, list
    /// items and map values.
    pub fn apply(&self, obj: &mut Value) {
        match obj {
            Value::Object(map) => {
                for (name, default, inner) in &self.fields {
                    match map.get_mut(name) {
                        Some(v) => inner.apply(v),
                        None => {
                            if let Some(d) = default {
                                map.insert(name.clone(), d.clone());
                            }
                        }
                    }
                }
                if let Some(values) = &self.values {
                    for v in map.values_mut() {
                        values.apply(v);
                    }
                }
            }
            Value::Array(items) => {
                if let Some(item) = &self.items {
                    for v in items {
                        item.apply(v);
                    }
                }
            }
            _ => {}
        }
    }
}

/// The defaults at and below one schema node: a reference's target's, with the keywords
/// beside the reference over them, as [`inline`] merges them.
fn walk(schema: &Value, stack: &mut Vec<String>) -> Walked {
    let Some(obj) = schema.as_object() else {
        return Walked::default();
    };
    let mut walked = match reference(obj) {
        Some(name) => match data::defaults_skeleton(name) {
            Some(target) if !stack.iter().any(|s| s == name) => {
                stack.push(name.to_string());
                let target = walk(target, stack);
                stack.pop();
                target
            }
            _ => Walked::default(),
        },
        None => Walked::default(),
    };
    if let Some(d) = obj.get("default") {
        walked.default = Some(d.clone()).filter(|d| !is_zero(d));
    }
    if let Some(properties) = obj.get("properties") {
        walked.inner.fields = properties
            .as_object()
            .into_iter()
            .flatten()
            .filter_map(|(name, s)| {
                let w = walk(s, stack);
                (w.default.is_some() || !w.inner.is_empty())
                    .then(|| (name.clone(), w.default, w.inner))
            })
            .collect();
    }
    if let Some(items) = obj.get("items") {
        walked.inner.items = nested(items, stack);
    }
    if let Some(values) = obj.get("additionalProperties") {
        walked.inner.values = nested(values, stack);
    }
    walked
}

/// The defaults inside a list item's or map value's schema, if it is one and has any.
fn nested(schema: &Value, stack: &mut Vec<String>) -> Option<Box<Defaults>> {
    if !schema.is_object() {
        return None;
    }
    Some(Box::new(walk(schema, stack).inner)).filter(|d| !d.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::schema::shape::AdditionalShape;
    use crate::schema::structural::{Additional, Node};

    /// What a walk by type reads of a node, but its fields.
    fn facts(s: Shape<'_>) -> String {
        let additional = match s.additional() {
            None => "none".to_string(),
            Some(AdditionalShape::Bool(b)) => b.to_string(),
            Some(AdditionalShape::Schema(_)) => "schema".to_string(),
        };
        format!(
            "type={:?} map={:?} preserve={} list={:?} keys={:?} default={:?} fields={} \
             additional={additional} items={}",
            s.ty(),
            s.map_type(),
            s.preserve_unknown_fields(),
            s.list_type(),
            s.list_map_keys(),
            s.default(),
            !s.no_properties(),
            s.items().is_some(),
        )
    }

    /// Walks a compiled node and the published one beside it, below `path`; returns how many
    /// nodes were compared. Compiling cuts a recursive type where it recurs (an object that
    /// keeps unknown fields) where the published view goes on: the walk stops there.
    fn compare(node: &Node, published: Shape<'_>, path: &str) -> usize {
        let compiled = Shape::Compiled(node);
        let cut = node.preserve_unknown_fields && node.properties.is_empty();
        if cut && !published.no_properties() {
            return 0;
        }
        assert_eq!(facts(compiled), facts(published), "at {path}");
        let fields = published.field_names();
        assert_eq!(compiled.field_names(), fields, "the fields at {path}");
        let mut compared = 1;
        for (name, child) in &node.properties {
            let other = published.property(name);
            let other = other.unwrap_or_else(|| panic!("{path}.{name} is not published"));
            compared += compare(child, other, &format!("{path}.{name}"));
        }
        if let (Some(items), Some(other)) = (&node.items, published.items()) {
            compared += compare(items, other, &format!("{path}[]"));
        }
        if let (Some(Additional::Schema(values)), Some(AdditionalShape::Schema(other))) =
            (&node.additional, published.additional())
        {
            compared += compare(values, other, &format!("{path}{{}}"));
        }
        compared
    }

    /// Every built-in kind's published schema, read in place, reads as its compiled schema
    /// reads, node for node (to where compiling cuts a recursive type): the walk by type may
    /// take either ([`LazySchema::shape`]).
    #[test]
    fn published_shapes_read_as_compiled_schemas() {
        let mut compared = 0;
        for kind in crate::registry::builtin::resources() {
            let definition = &*kind.openapi.name;
            let compiled = compile(definition).expect("compiles");
            let schema = data::schema_component(definition).expect("published");
            let published = Published::new(schema, data::schema_component).expect("a schema");
            let published = Shape::Published(published);
            compared += compare(compiled.root(), published, definition);
        }
        assert!(compared > 10_000, "{compared} nodes compared");
    }

    /// A small schema (a ConfigMap's) is compiled for the walk by type, a large one (a
    /// Deployment's, with its PodSpec) read in place.
    #[test]
    fn small_schemas_are_compiled_large_ones_read_in_place() {
        let shape = |definition: &'static str| LazySchema::builtin(definition);
        let config_map = shape("io.k8s.api.core.v1.ConfigMap");
        assert!(matches!(config_map.shape(), Some(Shape::Compiled(_))));
        let deployment = shape("io.k8s.api.apps.v1.Deployment");
        assert!(matches!(deployment.shape(), Some(Shape::Published(_))));
        assert!(matches!(&deployment, LazySchema::Builtin { cell, .. } if cell.get().is_none()));
    }

    /// The defaults a compiled schema declares, as the apply of the compiled schema found
    /// them before [`Defaults`] (the reference the walk is checked against).
    fn defaults_of_node(node: &Node) -> Defaults {
        let fields = node
            .properties
            .iter()
            .filter_map(|(name, child)| {
                let default = child.default.clone().filter(|d| !is_zero(d));
                let inner = defaults_of_node(child);
                (default.is_some() || !inner.is_empty()).then(|| (name.clone(), default, inner))
            })
            .collect();
        let boxed = |d: Defaults| Some(Box::new(d)).filter(|d| !d.is_empty());
        Defaults {
            fields,
            items: node
                .items
                .as_deref()
                .and_then(|n| boxed(defaults_of_node(n))),
            values: match &node.additional {
                Some(Additional::Schema(n)) => boxed(defaults_of_node(n)),
                _ => None,
            },
        }
    }

    /// The walk finds, for every built-in kind, exactly the defaults its compiled schema has.
    #[test]
    fn declared_defaults_are_those_of_the_compiled_schemas() {
        let mut with_defaults = 0;
        for name in data::kind_definition_names() {
            let compiled = compile(name).expect("compiles");
            let expected = defaults_of_node(compiled.root());
            with_defaults += usize::from(!expected.is_empty());
            assert_eq!(Defaults::of(name), expected, "{name}");
        }
        assert!(with_defaults > 10, "{with_defaults}");
        assert!(Defaults::of("io.k8s.api.core.v1.Namespace").is_empty());
        assert!(Defaults::of("no.such.Definition").is_empty());
    }

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
        Defaults::of("io.k8s.api.apps.v1.Deployment").apply(&mut d);
        assert_eq!(
            d["spec"]["template"]["spec"]["containers"][0]["ports"][0]["protocol"],
            "TCP"
        );
        assert!(d["spec"].get("paused").is_none(), "zero defaults stay out");
        // A `default: {}` beside a reference is the empty object, not a schema to inline.
        let policy = compile("io.k8s.api.admissionregistration.v1.MutatingAdmissionPolicy")
            .expect("compiles");
        assert_eq!(at(&policy, "spec").default, Some(serde_json::json!({})));
        // A recursive type is cut where it recurs, not expanded forever.
        assert!(compile(
            "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition"
        )
        .is_some());
    }
}
