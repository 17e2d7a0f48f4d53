//! What a walk by type (managedFields, server-side apply) reads of a schema node: its type, its
//! fields, its items and values, how its lists and maps merge. A [`Shape`] reads it from a
//! compiled structural schema (a custom resource's) or from a published OpenAPI v3 schema in
//! place ([`Published`]): a built-in kind's whole schema, its `$ref`s inlined, is tens of
//! thousands of nodes (a Deployment's holds a PodSpec), where a write reaches only the fields
//! its object has. Compiling it cost the process's first write of a Deployment some 75
//! million instructions in the unoptimised builds tests use (20 ms).
//!
//! The published view answers as the compiled one does ([`Published`] says how), but for
//! recursive types, which compiling cuts where they recur (an untyped object there) and the
//! published view follows as structured-merge-diff's typed models do.

use serde_json::{Map, Value};

use super::structural::{Additional, Node};

/// Where a published schema's `$ref`s point: the schema of a definition by name.
pub type Resolve = fn(&str) -> Option<&'static Value>;

/// The prefix of a published `$ref`.
const REF_PREFIX: &str = "#/components/schemas/";

/// The definition a published `$ref` (or `allOf: [{$ref}]`) names.
pub fn reference(schema: &Map<String, Value>) -> Option<&str> {
    let target = match schema.get("allOf").and_then(Value::as_array) {
        Some(all) => all.first()?.get("$ref")?,
        None => schema.get("$ref")?,
    };
    target.as_str()?.strip_prefix(REF_PREFIX)
}

/// A schema node. See the module documentation.
#[derive(Debug, Clone, Copy)]
pub enum Shape<'a> {
    /// A node of a compiled structural schema.
    Compiled(&'a Node),
    /// A node of a published schema, read in place.
    Published(Published),
}

/// How a map's other fields are typed.
pub enum AdditionalShape<'a> {
    /// `additionalProperties: true` or `false`.
    Bool(bool),
    /// `additionalProperties` as a schema.
    Schema(Shape<'a>),
}

impl<'a> Shape<'a> {
    /// `type` (`""` when unset).
    pub fn ty(self) -> &'a str {
        match self {
            Shape::Compiled(n) => &n.ty,
            Shape::Published(p) => p.ty(),
        }
    }

    /// `x-kubernetes-map-type`.
    pub fn map_type(self) -> Option<&'a str> {
        match self {
            Shape::Compiled(n) => n.map_type.as_deref(),
            Shape::Published(p) => p.str("x-kubernetes-map-type"),
        }
    }

    /// `x-kubernetes-preserve-unknown-fields` (as the structural form sets it).
    pub fn preserve_unknown_fields(self) -> bool {
        match self {
            Shape::Compiled(n) => n.preserve_unknown_fields,
            Shape::Published(p) => p.preserve_unknown_fields(),
        }
    }

    /// The declared field `k`.
    pub fn property(self, k: &str) -> Option<Shape<'a>> {
        match self {
            Shape::Compiled(n) => n.properties.get(k).map(Shape::Compiled),
            Shape::Published(p) => p.property(k).map(Shape::Published),
        }
    }

    /// Whether no field is declared.
    pub fn no_properties(self) -> bool {
        match self {
            Shape::Compiled(n) => n.properties.is_empty(),
            Shape::Published(p) => p.properties().is_none_or(Map::is_empty),
        }
    }

    /// `additionalProperties`.
    pub fn additional(self) -> Option<AdditionalShape<'a>> {
        match self {
            Shape::Compiled(n) => match n.additional.as_ref()? {
                Additional::Bool(b) => Some(AdditionalShape::Bool(*b)),
                Additional::Schema(s) => Some(AdditionalShape::Schema(Shape::Compiled(s))),
            },
            Shape::Published(p) => match p.keyword("additionalProperties")? {
                Value::Bool(b) => Some(AdditionalShape::Bool(*b)),
                v => Some(AdditionalShape::Schema(Shape::Published(p.child(v)?))),
            },
        }
    }

    /// `items`.
    pub fn items(self) -> Option<Shape<'a>> {
        match self {
            Shape::Compiled(n) => n.items.as_deref().map(Shape::Compiled),
            Shape::Published(p) => p.child(p.keyword("items")?).map(Shape::Published),
        }
    }

    /// `x-kubernetes-list-type`.
    pub fn list_type(self) -> Option<&'a str> {
        match self {
            Shape::Compiled(n) => n.list_type.as_deref(),
            Shape::Published(p) => p.str("x-kubernetes-list-type"),
        }
    }

    /// `x-kubernetes-list-map-keys`.
    pub fn list_map_keys(self) -> Vec<&'a str> {
        match self {
            Shape::Compiled(n) => n.list_map_keys.iter().map(String::as_str).collect(),
            Shape::Published(p) => p
                .keyword("x-kubernetes-list-map-keys")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect(),
        }
    }

    /// `default` (a `null` default counts as none).
    pub fn default(self) -> Option<&'a Value> {
        match self {
            Shape::Compiled(n) => n.default.as_ref(),
            Shape::Published(p) => p.keyword("default").filter(|d| !d.is_null()),
        }
    }
}

/// A node of a published schema, read in place: the node as written and, when it is a
/// `$ref`, the definition it names. It reads as the compiled schema of the same definition
/// (`registry::builtin::schema::compile`) does: the keywords beside a `$ref` override the
/// definition's; an object that declares no fields keeps unknown ones; `IntOrString`
/// (`format: int-or-string`) and an untyped node without fields or items (`Quantity`) are
/// int-or-string; a `$ref` to nothing known is an object that keeps unknown fields.
#[derive(Debug, Clone, Copy)]
pub struct Published {
    /// The node as written.
    node: &'static Map<String, Value>,
    /// What its `$ref` names: `None` without one, `Some(None)` when nothing known.
    target: Option<Option<&'static Map<String, Value>>>,
    resolve: Resolve,
}

impl Published {
    /// The node `schema`, its `$ref`s read through `resolve`; `None` when it is not a schema.
    pub fn new(schema: &'static Value, resolve: Resolve) -> Option<Published> {
        let node = schema.as_object()?;
        let target = reference(node).map(|name| resolve(name).and_then(Value::as_object));
        Some(Published {
            node,
            target,
            resolve,
        })
    }

    fn child(&self, schema: &'static Value) -> Option<Published> {
        Published::new(schema, self.resolve)
    }

    /// The node's own schema: the definition it names, or itself.
    fn base(&self) -> Option<&'static Map<String, Value>> {
        match self.target {
            None => Some(self.node),
            Some(target) => target,
        }
    }

    /// A keyword: beside the `$ref`, else the definition's.
    fn keyword(&self, key: &str) -> Option<&'static Value> {
        if self.target.is_none() {
            return self.node.get(key);
        }
        let beside = match key {
            "allOf" | "$ref" => None,
            _ => self.node.get(key),
        };
        beside.or_else(|| self.base()?.get(key))
    }

    fn str(&self, key: &str) -> Option<&'static str> {
        self.keyword(key).and_then(Value::as_str)
    }

    fn properties(&self) -> Option<&'static Map<String, Value>> {
        self.keyword("properties").and_then(Value::as_object)
    }

    fn property(&self, k: &str) -> Option<Published> {
        self.child(self.properties()?.get(k)?)
    }

    fn ty(&self) -> &'static str {
        match self.base() {
            // A `$ref` to nothing known reads as an object that keeps unknown fields.
            None => self
                .node
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("object"),
            Some(_) => self.str("type").unwrap_or(""),
        }
    }

    fn preserve_unknown_fields(&self) -> bool {
        let Some(base) = self.base() else {
            return true;
        };
        let has = |k: &str| base.contains_key(k);
        let int_or_string = base.get("format").and_then(Value::as_str) == Some("int-or-string")
            || (!has("type") && !has("properties") && !has("items"));
        let open_object = !int_or_string
            && base.get("type").and_then(Value::as_str) == Some("object")
            && !has("properties")
            && !has("additionalProperties");
        open_object
            || self.keyword("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true))
    }
}
