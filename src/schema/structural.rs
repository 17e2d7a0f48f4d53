//! The compiled schema node: one `openAPIV3Schema` node with its keywords decoded once.
//!
//! The apiserver keeps two views of a CRD schema: the structural schema (`Structural`: the
//! properties/items/additionalProperties skeleton plus defaults and `x-kubernetes-*`) for
//! pruning and defaulting, and the kube-openapi `spec.Schema` (every keyword, junctors included)
//! for validation. One [`Node`] type serves both, and the CEL rules (`x-kubernetes-validations`,
//! compiled by [`crate::cel::Rules::compile`] from the same nodes): the skeleton is the tree
//! reached without entering `allOf`/`anyOf`/`oneOf`/`not`, the junctor sub-nodes carry only
//! value validations (and rules).
//! Compilation never fails: keywords of the wrong JSON type are ignored (the CRD was checked by
//! [`crate::schema::validate_crd_schema`] before it got here).

use std::cmp::Ordering;
use std::collections::{btree_map, BTreeMap};
use std::sync::LazyLock;

use serde_json::{Map, Value};

use super::formats;
use super::pattern::GoRegex;

/// `additionalProperties`: a boolean or a schema.
#[derive(Debug, Clone)]
pub enum Additional {
    /// `additionalProperties: true|false` (`Allows`, no schema).
    Bool(bool),
    /// `additionalProperties: {schema}` (allows, with a schema).
    Schema(Box<Node>),
}

/// One compiled schema node.
#[derive(Debug, Clone, Default)]
pub struct Node {
    /// `type` ("" when unset).
    pub ty: String,
    /// The types the validator checks: `[type]`, `["integer","string"]` for int-or-string, or none.
    pub types: Vec<&'static str>,
    /// `types` as a bit set of [`type_bit`]s (for the hot path).
    pub type_mask: u8,
    /// `nullable`.
    pub nullable: bool,
    /// `default` (a JSON `null` default counts as no default, as in the apiserver).
    pub default: Option<Value>,
    /// `format` after the apiserver strips formats it does not support for the type.
    pub format: String,
    /// Whether the string-format registry knows `format` (the format check applies).
    pub format_known: bool,
    /// `maximum`.
    pub maximum: Option<f64>,
    /// `exclusiveMaximum`.
    pub exclusive_maximum: bool,
    /// `minimum`.
    pub minimum: Option<f64>,
    /// `exclusiveMinimum`.
    pub exclusive_minimum: bool,
    /// `maxLength`.
    pub max_length: Option<i64>,
    /// `minLength`.
    pub min_length: Option<i64>,
    /// `pattern`, compiled with Go semantics.
    pub pattern: Option<GoRegex>,
    /// `maxItems`.
    pub max_items: Option<i64>,
    /// `minItems`.
    pub min_items: Option<i64>,
    /// `uniqueItems` (rejected in CRDs; still honoured if present).
    pub unique_items: bool,
    /// `multipleOf`.
    pub multiple_of: Option<f64>,
    /// `enum` (empty means unset).
    pub enum_values: Vec<Value>,
    /// `maxProperties`.
    pub max_properties: Option<i64>,
    /// `minProperties`.
    pub min_properties: Option<i64>,
    /// `required`.
    pub required: Vec<String>,
    /// `allOf`.
    pub all_of: Vec<Node>,
    /// `anyOf`.
    pub any_of: Vec<Node>,
    /// `oneOf`.
    pub one_of: Vec<Node>,
    /// `not`.
    pub not: Option<Box<Node>>,
    /// `properties`, ordered by name.
    pub properties: BTreeMap<String, Node>,
    /// `additionalProperties`.
    pub additional: Option<Additional>,
    /// `items` (a single schema; the array form is not supported).
    pub items: Option<Box<Node>>,
    /// `x-kubernetes-preserve-unknown-fields: true`.
    pub preserve_unknown_fields: bool,
    /// `x-kubernetes-embedded-resource: true`.
    pub embedded_resource: bool,
    /// `x-kubernetes-int-or-string: true`.
    pub int_or_string: bool,
    /// `x-kubernetes-list-type`.
    pub list_type: Option<String>,
    /// `x-kubernetes-list-map-keys`.
    pub list_map_keys: Vec<String>,
    /// `x-kubernetes-map-type`.
    pub map_type: Option<String>,
    /// Names of the properties that have a `default` (defaulting visits only these).
    pub defaulted: Vec<String>,
    /// Whether this node or a structural descendant has a `default` (defaulting skips the rest).
    pub sub_defaults: bool,
    /// Names of the properties whose subtree has a default (defaulting descends only into these,
    /// unless `additionalProperties` has defaults).
    pub sub_default_props: Vec<String>,
    /// Whether this node or a structural descendant is an embedded resource.
    pub sub_embedded: bool,
    /// Whether this node or a structural descendant is a `set` or `map` list.
    pub sub_list_types: bool,
    /// Whether `properties` is present (even empty): a rule's `fieldPath` then names fields, not
    /// `additionalProperties` keys.
    pub has_properties: bool,
    /// `x-kubernetes-validations`, for the CEL module (`None` when absent; an empty list still
    /// asks for the node's CEL type).
    pub validations: Option<Vec<ValidationRule>>,
}

/// One `x-kubernetes-validations` entry as written. The CEL module checks and compiles it, and
/// reports its errors at its position, so fields of the wrong JSON type read as absent here.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ValidationRule {
    /// `rule`: the CEL expression.
    pub rule: String,
    /// `message`.
    pub message: String,
    /// `messageExpression`.
    pub message_expression: String,
    /// `reason` (`None` when unset: `FieldValueInvalid`).
    pub reason: Option<String>,
    /// `fieldPath`, as written (the CEL module normalizes it against the schema).
    pub field_path: String,
    /// `optionalOldSelf`, unset or not.
    pub optional_old_self: Option<bool>,
}

impl ValidationRule {
    /// The `x-kubernetes-validations` of a schema node, `None` when absent (or not a list).
    fn compile_all(m: &Map<String, Value>) -> Option<Vec<ValidationRule>> {
        let rules = m.get("x-kubernetes-validations")?.as_array()?;
        Some(rules.iter().map(ValidationRule::compile).collect())
    }

    fn compile(v: &Value) -> ValidationRule {
        let Some(m) = v.as_object() else {
            return ValidationRule::default();
        };
        ValidationRule {
            rule: str_of(m, "rule"),
            message: str_of(m, "message"),
            message_expression: str_of(m, "messageExpression"),
            reason: opt_str_of(m, "reason"),
            field_path: str_of(m, "fieldPath"),
            optional_old_self: m.get("optionalOldSelf").and_then(Value::as_bool),
        }
    }
}

fn properties_with_defaults(p: &BTreeMap<String, Node>) -> Vec<String> {
    p.iter()
        .filter(|(_, n)| n.default.is_some())
        .map(|(k, _)| k.clone())
        .collect()
}

/// [`Node::type_mask`] bits of the JSON schema type names (see [`type_bit`]).
pub mod type_bits {
    /// `object`.
    pub const OBJECT: u8 = 1;
    /// `array`.
    pub const ARRAY: u8 = 2;
    /// `string`.
    pub const STRING: u8 = 4;
    /// `integer`.
    pub const INTEGER: u8 = 8;
    /// `number`.
    pub const NUMBER: u8 = 16;
    /// `boolean`.
    pub const BOOLEAN: u8 = 32;
    /// `null`.
    pub const NULL: u8 = 64;
}

/// The bit of a JSON schema type name in [`Node::type_mask`] (0 for unknown names).
pub fn type_bit(t: &str) -> u8 {
    match t {
        "object" => type_bits::OBJECT,
        "array" => type_bits::ARRAY,
        "string" => type_bits::STRING,
        "integer" => type_bits::INTEGER,
        "number" => type_bits::NUMBER,
        "boolean" => type_bits::BOOLEAN,
        "null" => type_bits::NULL,
        _ => 0,
    }
}

fn static_type(t: &str) -> Option<&'static str> {
    Some(match t {
        "object" => "object",
        "array" => "array",
        "string" => "string",
        "integer" => "integer",
        "number" => "number",
        "boolean" => "boolean",
        "null" => "null",
        _ => return None,
    })
}

fn f64_of(m: &Map<String, Value>, k: &str) -> Option<f64> {
    m.get(k).and_then(Value::as_f64)
}

fn i64_of(m: &Map<String, Value>, k: &str) -> Option<i64> {
    let v = m.get(k)?;
    v.as_i64().or_else(|| {
        v.as_f64()
            .filter(|f| f.fract() == 0.0 && f.abs() < 9.2e18)
            .map(|f| f as i64)
    })
}

fn bool_of(m: &Map<String, Value>, k: &str) -> bool {
    m.get(k).and_then(Value::as_bool).unwrap_or(false)
}

fn str_of(m: &Map<String, Value>, k: &str) -> String {
    m.get(k).and_then(Value::as_str).unwrap_or("").to_string()
}

fn opt_str_of(m: &Map<String, Value>, k: &str) -> Option<String> {
    m.get(k).and_then(Value::as_str).map(str::to_string)
}

fn strings_of(m: &Map<String, Value>, k: &str) -> Vec<String> {
    m.get(k)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn nodes_of(m: &Map<String, Value>, k: &str, depth: usize) -> Vec<Node> {
    m.get(k)
        .and_then(Value::as_array)
        .map(|a| a.iter().map(|x| Node::compile_at(x, depth + 1)).collect())
        .unwrap_or_default()
}

/// Deeper schemas than this are not compiled further (protects the stack on hostile input).
const MAX_DEPTH: usize = 200;

impl Node {
    /// Compiles one schema node (and everything below it) from JSON.
    pub fn compile(v: &Value) -> Node {
        Node::compile_at(v, 0)
    }

    fn compile_at(v: &Value, depth: usize) -> Node {
        let Some(m) = v.as_object() else {
            return Node::default();
        };
        if depth > MAX_DEPTH {
            return Node::default();
        }
        let ty = str_of(m, "type");
        let int_or_string = bool_of(m, "x-kubernetes-int-or-string");
        let types: Vec<&'static str> = if int_or_string {
            vec!["integer", "string"]
        } else if ty.is_empty() {
            Vec::new()
        } else {
            match static_type(&ty) {
                Some(t) => vec![t],
                None => Vec::new(),
            }
        };
        let format = formats::supported_format(&types, &str_of(m, "format"));
        let pattern = m
            .get("pattern")
            .and_then(Value::as_str)
            .filter(|p| !p.is_empty())
            .map(GoRegex::new);
        let properties: BTreeMap<String, Node> = m
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| {
                p.iter()
                    .map(|(k, x)| (k.clone(), Node::compile_at(x, depth + 1)))
                    .collect()
            })
            .unwrap_or_default();
        let additional = match m.get("additionalProperties") {
            Some(Value::Bool(b)) => Some(Additional::Bool(*b)),
            Some(x @ Value::Object(_)) => {
                Some(Additional::Schema(Box::new(Node::compile_at(x, depth + 1))))
            }
            _ => None,
        };
        let items = match m.get("items") {
            Some(x @ Value::Object(_)) => Some(Box::new(Node::compile_at(x, depth + 1))),
            _ => None,
        };
        let defaulted = properties_with_defaults(&properties);
        let format_known = formats::is_known(&format);
        let type_mask = types.iter().fold(0, |m, t| m | type_bit(t));
        let mut node = Node {
            type_mask,
            format_known,
            defaulted,
            ty,
            types,
            nullable: bool_of(m, "nullable"),
            default: m.get("default").filter(|d| !d.is_null()).cloned(),
            format,
            maximum: f64_of(m, "maximum"),
            exclusive_maximum: bool_of(m, "exclusiveMaximum"),
            minimum: f64_of(m, "minimum"),
            exclusive_minimum: bool_of(m, "exclusiveMinimum"),
            max_length: i64_of(m, "maxLength"),
            min_length: i64_of(m, "minLength"),
            pattern,
            max_items: i64_of(m, "maxItems"),
            min_items: i64_of(m, "minItems"),
            unique_items: bool_of(m, "uniqueItems"),
            multiple_of: f64_of(m, "multipleOf"),
            enum_values: m
                .get("enum")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
            max_properties: i64_of(m, "maxProperties"),
            min_properties: i64_of(m, "minProperties"),
            required: strings_of(m, "required"),
            all_of: nodes_of(m, "allOf", depth),
            any_of: nodes_of(m, "anyOf", depth),
            one_of: nodes_of(m, "oneOf", depth),
            not: m
                .get("not")
                .filter(|x| x.is_object())
                .map(|x| Box::new(Node::compile_at(x, depth + 1))),
            properties,
            additional,
            items,
            preserve_unknown_fields: bool_of(m, "x-kubernetes-preserve-unknown-fields"),
            embedded_resource: bool_of(m, "x-kubernetes-embedded-resource"),
            int_or_string,
            list_type: opt_str_of(m, "x-kubernetes-list-type"),
            list_map_keys: strings_of(m, "x-kubernetes-list-map-keys"),
            map_type: opt_str_of(m, "x-kubernetes-map-type"),
            has_properties: m.get("properties").is_some_and(Value::is_object),
            validations: ValidationRule::compile_all(m),
            ..Node::default()
        };
        node.compute_flags();
        node
    }

    /// Fills the `sub_*` flags from the node and its structural children.
    fn compute_flags(&mut self) {
        let children = self
            .properties
            .values()
            .chain(self.additional_schema())
            .chain(self.items.as_deref());
        let (mut d, mut e, mut l) = (false, false, false);
        for c in children {
            d |= c.sub_defaults;
            e |= c.sub_embedded;
            l |= c.sub_list_types;
        }
        self.sub_defaults = d || self.default.is_some();
        self.sub_default_props = self
            .properties
            .iter()
            .filter(|(_, n)| n.sub_defaults)
            .map(|(k, _)| k.clone())
            .collect();
        self.sub_embedded = e || self.embedded_resource;
        self.sub_list_types = l || matches!(self.list_type.as_deref(), Some("set") | Some("map"));
    }

    /// The structural schema of a field of this object: `properties[k]`, else the
    /// `additionalProperties` schema. `None` when neither applies.
    pub fn field(&self, k: &str) -> Option<&Node> {
        self.properties.get(k).or(match &self.additional {
            Some(Additional::Schema(s)) => Some(s),
            _ => None,
        })
    }

    /// The `additionalProperties` schema, when it is a schema.
    pub fn additional_schema(&self) -> Option<&Node> {
        match &self.additional {
            Some(Additional::Schema(s)) => Some(s),
            _ => None,
        }
    }

    /// A [`PropCursor`] over `properties` for an object of `keys` keys.
    pub fn prop_cursor(&self, keys: usize) -> PropCursor<'_> {
        PropCursor::new(&self.properties, keys)
    }
}

/// Whether `serde_json::Map` is a `BTreeMap`, which iterates in key order and removes without
/// reordering; unless serde_json's `preserve_order` feature is on somewhere in the build, which
/// makes it an insertion-ordered `IndexMap`.
pub(super) fn maps_are_sorted() -> bool {
    static SORTED: LazyLock<bool> = LazyLock::new(|| {
        let mut m = Map::new();
        m.insert("b".into(), Value::Null);
        m.insert("a".into(), Value::Null);
        m.keys().next().is_some_and(|k| k == "a")
    });
    *SORTED
}

/// `a.cmp(b)` for field names, which are short: eight bytes at a time, without the call to
/// `memcmp` that dominated the merge of [`PropCursor`].
#[inline]
fn cmp_names(mut a: &[u8], mut b: &[u8]) -> Ordering {
    while let (Some((x, a_rest)), Some((y, b_rest))) =
        (a.split_first_chunk::<8>(), b.split_first_chunk::<8>())
    {
        // Big-endian: integer order is byte order.
        let (x, y) = (u64::from_be_bytes(*x), u64::from_be_bytes(*y));
        if x != y {
            return x.cmp(&y);
        }
        (a, b) = (a_rest, b_rest);
    }
    for (x, y) in a.iter().zip(b) {
        if x != y {
            return x.cmp(y);
        }
    }
    a.len().cmp(&b.len())
}

/// Looks up the property schemas of an object's keys, which must be asked for in the order the
/// object iterates them (keys may be skipped). `serde_json::Map` and `properties` are both
/// sorted by key, so a single merge pass over `properties` replaces a tree search (several string
/// comparisons) per key. Few properties, a few keys against many properties, or unsorted maps
/// use the tree.
pub struct PropCursor<'a> {
    props: &'a BTreeMap<String, Node>,
    rest: btree_map::Iter<'a, String, Node>,
    next: Option<(&'a String, &'a Node)>,
    merge: bool,
}

impl<'a> PropCursor<'a> {
    /// A cursor at the first property.
    #[inline]
    pub fn new(props: &'a BTreeMap<String, Node>, keys: usize) -> PropCursor<'a> {
        // A search in a map of a few properties is as cheap as the merge, and needs no setup.
        let merge = props.len() > 3 && keys.saturating_mul(4) >= props.len() && maps_are_sorted();
        let mut rest = props.iter();
        let next = if merge { rest.next() } else { None };
        PropCursor {
            props,
            rest,
            next,
            merge,
        }
    }

    /// `properties[k]`; `k` must come after the keys asked for before.
    #[inline]
    pub fn get(&mut self, k: &str) -> Option<&'a Node> {
        if !self.merge {
            return self.props.get(k);
        }
        while let Some((name, node)) = self.next {
            match cmp_names(name.as_bytes(), k.as_bytes()) {
                Ordering::Less => self.next = self.rest.next(),
                Ordering::Equal => {
                    self.next = self.rest.next();
                    return Some(node);
                }
                Ordering::Greater => return None,
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cmp_names_is_byte_order() {
        let names = [
            "",
            "a",
            "b",
            "ab",
            "abc",
            "field000",
            "field001",
            "field0000",
            "field00",
            "fielc999",
            "apiVersion",
            "apiVersions",
            "metadata",
            "metadat",
            "z\u{0}",
            "z",
            "é",
            "e\u{301}",
            "aaaaaaaaaaaaaaab",
            "aaaaaaaaaaaaaaaa",
            "aaaaaaaaaaaaaaaaa",
            "aaaaaaab\u{0}",
        ];
        for a in names {
            for b in names {
                assert_eq!(
                    cmp_names(a.as_bytes(), b.as_bytes()),
                    a.cmp(b),
                    "{a:?} {b:?}"
                );
            }
        }
    }

    #[test]
    fn prop_cursor_finds_sorted_keys() {
        let n = Node::compile(&serde_json::json!({"type": "object", "properties": {
            "a": {}, "c": {"type": "string"}, "e": {}, "f": {}, "g": {}, "h": {}}}));
        let mut c = n.prop_cursor(6);
        assert_eq!(c.merge, maps_are_sorted());
        let found: Vec<bool> = ["", "a", "b", "c", "d", "g", "z"]
            .iter()
            .map(|k| c.get(k).is_some())
            .collect();
        assert_eq!(found, [false, true, false, true, false, true, false]);
        assert_eq!(
            n.prop_cursor(6).get("c").map(|s| s.ty.as_str()),
            Some("string")
        );
    }
}
