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

use super::reference::named;
use super::structural::{Additional, Node};

/// Where a published schema's `$ref`s point: the schema of a definition by name.
pub type Resolve = fn(&str) -> Option<&'static Value>;

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
            Shape::Published(p) => p.keywords.ty.unwrap_or(""),
        }
    }

    /// `x-kubernetes-map-type`.
    pub fn map_type(self) -> Option<&'a str> {
        match self {
            Shape::Compiled(n) => n.map_type.as_deref(),
            Shape::Published(p) => p.keywords.map_type,
        }
    }

    /// `x-kubernetes-preserve-unknown-fields` (as the structural form sets it).
    pub fn preserve_unknown_fields(self) -> bool {
        match self {
            Shape::Compiled(n) => n.preserve_unknown_fields,
            Shape::Published(p) => p.preserve_unknown_fields,
        }
    }

    /// The declared field `k`.
    pub fn property(self, k: &str) -> Option<Shape<'a>> {
        match self {
            Shape::Compiled(n) => n.properties.get(k).map(Shape::Compiled),
            Shape::Published(p) => p.property(k).map(Shape::Published),
        }
    }

    /// The declared fields' names, sorted (for tests that compare two readings).
    #[cfg(test)]
    pub fn field_names(self) -> Vec<&'a str> {
        let mut names: Vec<&str> = match self {
            Shape::Compiled(n) => n.properties.keys().map(String::as_str).collect(),
            Shape::Published(p) => p
                .keywords
                .properties
                .into_iter()
                .flatten()
                .map(|(k, _)| k.as_str())
                .collect(),
        };
        names.sort_unstable();
        names
    }

    /// Whether no field is declared.
    pub fn no_properties(self) -> bool {
        match self {
            Shape::Compiled(n) => n.properties.is_empty(),
            Shape::Published(p) => p.keywords.properties.is_none_or(Map::is_empty),
        }
    }

    /// `additionalProperties`.
    pub fn additional(self) -> Option<AdditionalShape<'a>> {
        match self {
            Shape::Compiled(n) => match n.additional.as_ref()? {
                Additional::Bool(b) => Some(AdditionalShape::Bool(*b)),
                Additional::Schema(s) => Some(AdditionalShape::Schema(Shape::Compiled(s))),
            },
            Shape::Published(p) => match p.keywords.additional? {
                Value::Bool(b) => Some(AdditionalShape::Bool(*b)),
                v => Some(AdditionalShape::Schema(Shape::Published(p.child(v)?))),
            },
        }
    }

    /// `items`.
    pub fn items(self) -> Option<Shape<'a>> {
        match self {
            Shape::Compiled(n) => n.items.as_deref().map(Shape::Compiled),
            Shape::Published(p) => p.child(p.keywords.items?).map(Shape::Published),
        }
    }

    /// `x-kubernetes-list-type`.
    pub fn list_type(self) -> Option<&'a str> {
        match self {
            Shape::Compiled(n) => n.list_type.as_deref(),
            Shape::Published(p) => p.keywords.list_type,
        }
    }

    /// `x-kubernetes-list-map-keys`.
    pub fn list_map_keys(self) -> Vec<&'a str> {
        match self {
            Shape::Compiled(n) => n.list_map_keys.iter().map(String::as_str).collect(),
            Shape::Published(p) => p
                .keywords
                .list_map_keys
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
            Shape::Published(p) => p.keywords.default.filter(|d| !d.is_null()),
        }
    }
}

/// A node of a published schema, read in place: the node as written and, when it is a
/// `$ref`, the definition it names, each read once, when the walk steps into it. It reads as the
/// compiled schema of the same definition (`registry::builtin::schema::compile`) does: the
/// keywords beside a `$ref` override the definition's; an object that declares no fields keeps
/// unknown ones; `IntOrString` (`format: int-or-string`) and an untyped node without fields or
/// items (`Quantity`) are int-or-string; a `$ref` to nothing known is an object that keeps
/// unknown fields. Two forms the published schemas do not use read differently: a definition
/// that is itself only a `$ref` is followed one step (compiling follows the chain), and
/// `properties` or `items` beside a `$ref` are read as schemas (compiling copies them as
/// they are).
#[derive(Debug, Clone, Copy)]
pub struct Published {
    /// The keywords, those beside a `$ref` over the definition's.
    keywords: Keywords,
    /// `x-kubernetes-preserve-unknown-fields` as the structural form sets it.
    preserve_unknown_fields: bool,
    resolve: Resolve,
}

/// The keywords of one node as written, read in one pass over its keys.
#[derive(Debug, Default, Clone, Copy)]
struct Keywords {
    ty: Option<&'static str>,
    int_or_string_format: bool,
    preserve_unknown_fields: Option<bool>,
    properties: Option<&'static Map<String, Value>>,
    additional: Option<&'static Value>,
    items: Option<&'static Value>,
    list_type: Option<&'static str>,
    list_map_keys: Option<&'static Vec<Value>>,
    map_type: Option<&'static str>,
    default: Option<&'static Value>,
    /// `$ref`.
    dollar_ref: Option<&'static Value>,
    /// `allOf`.
    all_of: Option<&'static Vec<Value>>,
}

impl Keywords {
    fn read(node: &'static Map<String, Value>) -> Keywords {
        let mut k = Keywords::default();
        for (key, v) in node {
            match key.as_str() {
                "type" => k.ty = v.as_str(),
                "format" => k.int_or_string_format = v.as_str() == Some("int-or-string"),
                "x-kubernetes-preserve-unknown-fields" => k.preserve_unknown_fields = v.as_bool(),
                "properties" => k.properties = v.as_object(),
                "additionalProperties" => k.additional = Some(v),
                "items" => k.items = Some(v),
                "x-kubernetes-list-type" => k.list_type = v.as_str(),
                "x-kubernetes-list-map-keys" => k.list_map_keys = v.as_array(),
                "x-kubernetes-map-type" => k.map_type = v.as_str(),
                "default" => k.default = Some(v),
                "$ref" => k.dollar_ref = Some(v),
                "allOf" => k.all_of = v.as_array(),
                _ => {}
            }
        }
        k
    }

    /// The definition its `$ref` names ([`named`]).
    fn reference(&self) -> Option<&'static str> {
        named(self.all_of, self.dollar_ref)
    }

    /// These keywords (beside a `$ref`) over the definition's.
    fn over(self, base: Keywords) -> Keywords {
        Keywords {
            ty: self.ty.or(base.ty),
            int_or_string_format: base.int_or_string_format,
            preserve_unknown_fields: self
                .preserve_unknown_fields
                .or(base.preserve_unknown_fields),
            properties: self.properties.or(base.properties),
            additional: self.additional.or(base.additional),
            items: self.items.or(base.items),
            list_type: self.list_type.or(base.list_type),
            list_map_keys: self.list_map_keys.or(base.list_map_keys),
            map_type: self.map_type.or(base.map_type),
            default: self.default.or(base.default),
            dollar_ref: None,
            all_of: None,
        }
    }

    /// Whether the structural form keeps unknown fields of a node with these keywords (an
    /// object that declares no fields), int-or-string nodes aside.
    fn open_object(&self) -> bool {
        let int_or_string = self.int_or_string_format
            || (self.ty.is_none() && self.properties.is_none() && self.items.is_none());
        !int_or_string
            && self.ty == Some("object")
            && self.properties.is_none()
            && self.additional.is_none()
    }
}

impl Published {
    /// The node `schema`, its `$ref`s read through `resolve`; `None` when it is not a schema.
    pub fn new(schema: &'static Value, resolve: Resolve) -> Option<Published> {
        let beside = Keywords::read(schema.as_object()?);
        // The structural form marks an open object as keeping unknown fields, whatever it
        // says; keywords beside a `$ref` then override the definition's, that mark included.
        let structural = |k: Keywords| k.open_object() || k.preserve_unknown_fields == Some(true);
        let (keywords, preserve_unknown_fields) = match beside.reference() {
            None => (beside, structural(beside)),
            Some(name) => match resolve(name).and_then(Value::as_object) {
                Some(target) => {
                    let base = Keywords::read(target);
                    let preserve = beside.preserve_unknown_fields.unwrap_or(structural(base));
                    (beside.over(base), preserve)
                }
                // A `$ref` to nothing known: an object that keeps unknown fields.
                None => {
                    let unknown = Keywords {
                        ty: Some("object"),
                        ..Keywords::default()
                    };
                    let preserve = beside.preserve_unknown_fields.unwrap_or(true);
                    (beside.over(unknown), preserve)
                }
            },
        };
        Some(Published {
            keywords,
            preserve_unknown_fields,
            resolve,
        })
    }

    fn child(&self, schema: &'static Value) -> Option<Published> {
        Published::new(schema, self.resolve)
    }

    fn property(&self, k: &str) -> Option<Published> {
        self.child(self.keywords.properties?.get(k)?)
    }
}
