//! The CEL view of a structural schema: which CEL type every schema node has, which fields CEL
//! can see (escaped names, `metadata` reduced to `name`/`generateName`), and the size bounds the
//! cost estimator uses (`maxItems`/`maxLength`/`maxProperties`, else what fits in a 3 MiB request).
//!
//! Mirrors `k8s.io/apiserver/pkg/cel/common.SchemaDeclType` and `pkg/cel/escaping.go`.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use crate::schema::Node as SchemaNode;

/// The largest request body the apiserver accepts (`celconfig.MaxRequestSizeBytes`).
pub const MAX_REQUEST_SIZE: i64 = 3 * 1024 * 1024;
const MAX_DURATION_SIZE_JSON: i64 = 32;
const MAX_DATETIME_SIZE_JSON: i64 = 32;
const MIN_DURATION_SIZE_JSON: i64 = 3;
const JSON_DATE_SIZE: i64 = 12;
const MIN_DATETIME_SIZE_JSON: i64 = 21;
const MIN_STRING_SIZE: i64 = 2;
const MIN_BOOL_SIZE: i64 = 4;
const MIN_NUMBER_SIZE: i64 = 1;

/// How the elements of an array correlate and compare (`x-kubernetes-list-type`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListKind {
    /// `atomic` or unset: ordered list semantics.
    Atomic,
    /// `set`: equality ignores order, `+` is a union.
    Set,
    /// `map` with its key fields: equality ignores order, `+` merges by key.
    Map(Vec<String>),
}

/// The CEL type of one schema node.
#[derive(Debug, Clone)]
pub enum Kind {
    /// `boolean`.
    Bool,
    /// `integer`.
    Int,
    /// `number`.
    Double,
    /// `string`.
    String,
    /// `string` with `format: byte`.
    Bytes,
    /// `string` with `format: date` or `date-time`.
    Timestamp,
    /// `string` with `format: duration`.
    Duration,
    /// `x-kubernetes-int-or-string`: `dyn`, an int or a string at run time.
    IntOrString,
    /// `dyn`: declared by the server, never by a schema (an untyped schema node is invisible
    /// to CEL), e.g. an admission request's `options`.
    Dyn,
    /// `array` with `items`.
    List(Arc<Decl>),
    /// `object` with an `additionalProperties` schema: `map(string, V)`.
    Map(Arc<Decl>),
    /// `object` with `properties` (or none): a message type with the visible fields.
    Object(BTreeMap<String, Field>),
}

/// A field of an object type as CEL sees it.
#[derive(Debug, Clone)]
pub struct Field {
    /// The property name in JSON.
    pub json: String,
    /// The field's type.
    pub decl: Arc<Decl>,
}

/// One schema node's CEL declaration.
#[derive(Debug, Clone)]
pub struct Decl {
    /// The CEL type.
    pub kind: Kind,
    /// The largest number of elements (string/bytes length, list items, map entries) a value
    /// may have (`MaxElements`).
    pub max_elements: u64,
    /// The smallest serialized JSON size of a value (`MinSerializedSize`).
    pub min_size: i64,
    /// The list semantics of an array.
    pub list: ListKind,
    /// The name of an object type in messages (`selfType0.spec`).
    pub name: String,
}

const RESERVED: &[&str] = &[
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

/// Whether `s` is a CEL reserved word (escaped as `__{word}__` in property names).
pub fn is_reserved(s: &str) -> bool {
    RESERVED.contains(&s)
}

/// The field of an object a selection names: its CEL name, or for a CEL keyword the field
/// it escapes to (`self.namespace` finds `__namespace__`), as the apiserver's type provider
/// recognises keywords as field names from compatibility version 1.31 on.
pub fn object_field<'d>(fields: &'d BTreeMap<String, Field>, name: &str) -> Option<&'d Field> {
    fields
        .get(name)
        .or_else(|| is_reserved(name).then(|| fields.get(&format!("__{name}__")))?)
}

/// The CEL name of a property (`x-prop` -> `x__dash__prop`), or `None` when the name cannot be
/// expressed in CEL (it is then invisible to rules), as `cel.Escape` does.
pub fn escape(name: &str) -> Option<String> {
    if is_reserved(name) {
        return Some(format!("__{name}__"));
    }
    let mut chars = name.chars();
    let first = chars.next()?;
    let ok_first = first.is_ascii_alphabetic() || matches!(first, '_' | '.' | '-' | '/');
    if !ok_first
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-' | '/'))
    {
        return None;
    }
    let b = name.as_bytes();
    let mut out = String::with_capacity(name.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'_' && i + 1 < b.len() && b[i + 1] == b'_' {
            out.push_str("__underscores__");
            i += 2;
            continue;
        }
        match b[i] {
            b'.' => out.push_str("__dot__"),
            b'-' => out.push_str("__dash__"),
            b'/' => out.push_str("__slash__"),
            c => out.push(c as char),
        }
        i += 1;
    }
    Some(out)
}

fn zero_if_negative(v: i64) -> u64 {
    v.max(0) as u64
}

fn max_string_per_request(format: &str, int_or_string: bool) -> u64 {
    if int_or_string {
        return (MAX_REQUEST_SIZE - 2) as u64;
    }
    match format {
        "duration" => MAX_DURATION_SIZE_JSON as u64,
        "date" => JSON_DATE_SIZE as u64,
        "date-time" => MAX_DATETIME_SIZE_JSON as u64,
        _ => (MAX_REQUEST_SIZE - 2) as u64,
    }
}

/// Whether an object schema already declares `kind`, `apiVersion` and the two visible
/// metadata strings, so that `WithTypeAndObjectMeta` leaves it alone.
fn has_type_and_meta(s: &SchemaNode) -> bool {
    fn is(n: Option<&SchemaNode>, ty: &str) -> bool {
        n.is_some_and(|n| n.ty == ty)
    }
    let props = &s.properties;
    let meta = props.get("metadata");
    let meta_prop = |k: &str| meta.and_then(|m| m.properties.get(k));
    is(props.get("kind"), "string")
        && is(props.get("apiVersion"), "string")
        && is(meta, "object")
        && is(meta_prop("name"), "string")
        && is(meta_prop("generateName"), "string")
}

/// Builds the declaration of a schema node; `None` for nodes CEL cannot see (no type, arrays
/// without items, maps whose values are invisible).
pub fn decl_of(schema: &SchemaNode, is_resource_root: bool, name: &str) -> Option<Arc<Decl>> {
    decl_at(schema, is_resource_root, name, 0)
}

fn simple(kind: Kind, max: u64, min_size: i64) -> Arc<Decl> {
    Arc::new(Decl {
        kind,
        max_elements: max,
        min_size,
        list: ListKind::Atomic,
        name: String::new(),
    })
}

fn decl_at(s: &SchemaNode, root: bool, name: &str, depth: usize) -> Option<Arc<Decl>> {
    if depth > 100 {
        return None;
    }
    if s.int_or_string {
        let max = match s.max_length {
            Some(l) => zero_if_negative(l).saturating_mul(4),
            None => max_string_per_request("", true),
        };
        return Some(simple(Kind::IntOrString, max, 1));
    }
    match s.ty.as_str() {
        "array" => array_decl(s, name, depth),
        "object" => match s.additional_schema() {
            Some(values) => map_decl(s, values, name, depth),
            None => Some(object_decl(s, root, name, depth)),
        },
        "string" => Some(string_decl(s)),
        "boolean" => Some(simple(Kind::Bool, 0, MIN_BOOL_SIZE)),
        "number" => Some(simple(Kind::Double, 0, MIN_NUMBER_SIZE)),
        "integer" => Some(simple(Kind::Int, 0, MIN_NUMBER_SIZE)),
        _ => None,
    }
}

/// The list semantics of an array schema (`x-kubernetes-list-type`).
pub fn list_kind(s: &SchemaNode) -> ListKind {
    match s.list_type.as_deref() {
        Some("set") => ListKind::Set,
        Some("map") => ListKind::Map(s.list_map_keys.clone()),
        _ => ListKind::Atomic,
    }
}

/// `list(T)`, bounded by `maxItems` or by what fits in a request.
fn array_decl(s: &SchemaNode, name: &str, depth: usize) -> Option<Arc<Decl>> {
    let items = s.items.as_deref()?;
    let elem = decl_at(
        items,
        items.embedded_resource,
        &format!("{name}.@idx"),
        depth + 1,
    )?;
    let max = match s.max_items {
        Some(n) => zero_if_negative(n),
        None => ((MAX_REQUEST_SIZE - 2) / (elem.min_size + 1)) as u64,
    };
    Some(Arc::new(Decl {
        kind: Kind::List(elem),
        max_elements: max,
        min_size: 2,
        list: list_kind(s),
        name: String::new(),
    }))
}

/// `map(string, V)` of an `additionalProperties` schema, bounded by `maxProperties` or by what
/// fits in a request.
fn map_decl(s: &SchemaNode, values: &SchemaNode, name: &str, depth: usize) -> Option<Arc<Decl>> {
    let elem = decl_at(
        values,
        values.embedded_resource,
        &format!("{name}.@elem"),
        depth + 1,
    )?;
    let max = match s.max_properties {
        Some(n) => zero_if_negative(n),
        None => ((MAX_REQUEST_SIZE - 2) / (elem.min_size + 6)) as u64,
    };
    Some(Arc::new(Decl {
        kind: Kind::Map(elem),
        max_elements: max,
        min_size: 2,
        list: ListKind::Atomic,
        name: String::new(),
    }))
}

/// An object type with the visible fields; at a resource root, with `kind`, `apiVersion` and
/// `metadata.name`/`metadata.generateName` unless the schema declares them.
fn object_decl(s: &SchemaNode, root: bool, name: &str, depth: usize) -> Arc<Decl> {
    let type_and_meta = root && !has_type_and_meta(s);
    let mut fields = BTreeMap::new();
    let mut min_size = 2i64;
    let mut add = |k: &str, decl: Arc<Decl>, has_default: bool| {
        if !has_default && s.required.iter().any(|r| r == k) {
            min_size = min_size.saturating_add(k.len() as i64 + decl.min_size + 4);
        }
        if let Some(esc) = escape(k) {
            let json = k.to_string();
            fields.insert(esc, Field { json, decl });
        }
    };
    for (k, p) in &s.properties {
        if type_and_meta && matches!(k.as_str(), "kind" | "apiVersion" | "metadata") {
            continue;
        }
        let field_name = format!("{name}.{k}");
        if let Some(decl) = decl_at(p, p.embedded_resource, &field_name, depth + 1) {
            add(k, decl, p.default.is_some());
        }
    }
    if type_and_meta {
        add("kind", plain_string(), false);
        add("apiVersion", plain_string(), false);
        add("metadata", metadata_decl(name), false);
    }
    Arc::new(Decl {
        kind: Kind::Object(fields),
        max_elements: 0,
        min_size,
        list: ListKind::Atomic,
        name: name.to_string(),
    })
}

/// Declarations the server makes itself (the admission `request`, a policy's `variables`),
/// unbounded like the values of a request.
pub mod declared {
    use super::*;
    use crate::cel::types::Ty;

    /// `dyn`.
    pub fn dyn_type() -> Arc<Decl> {
        simple(Kind::Dyn, 0, 0)
    }

    /// `string`.
    pub fn string() -> Arc<Decl> {
        plain_string()
    }

    /// `bool`.
    pub fn boolean() -> Arc<Decl> {
        simple(Kind::Bool, 0, MIN_BOOL_SIZE)
    }

    /// `list(T)`.
    pub fn list(elem: Arc<Decl>) -> Arc<Decl> {
        simple(Kind::List(elem), max_string_per_request("", false), 2)
    }

    /// `map(string, V)`.
    pub fn map(value: Arc<Decl>) -> Arc<Decl> {
        simple(Kind::Map(value), max_string_per_request("", false), 2)
    }

    /// An object type named `name` with exactly `fields`.
    pub fn object(name: &str, fields: Vec<(&str, Arc<Decl>)>) -> Arc<Decl> {
        let fields = fields.into_iter().map(|(k, decl)| {
            let json = k.to_string();
            (k.to_string(), Field { json, decl })
        });
        Arc::new(Decl {
            kind: Kind::Object(fields.collect()),
            max_elements: 0,
            min_size: 2,
            list: ListKind::Atomic,
            name: name.to_string(),
        })
    }

    /// The declaration of an expression's result type, for declaring it as a field of another
    /// type (a policy's variables); types no schema can express become `dyn`.
    pub fn of_ty(ty: &Ty) -> Arc<Decl> {
        let kind = match ty {
            Ty::Schema(d) => return d.clone(),
            Ty::Bool => Kind::Bool,
            Ty::Int => Kind::Int,
            Ty::Double => Kind::Double,
            Ty::String => Kind::String,
            Ty::Bytes => Kind::Bytes,
            Ty::Timestamp => Kind::Timestamp,
            Ty::Duration => Kind::Duration,
            Ty::List(e) => Kind::List(of_ty(e)),
            Ty::Map(k, v) if matches!(**k, Ty::String) => Kind::Map(of_ty(v)),
            _ => Kind::Dyn,
        };
        simple(kind, max_string_per_request("", false), 0)
    }
}

/// A string without bounds.
fn plain_string() -> Arc<Decl> {
    simple(
        Kind::String,
        max_string_per_request("", false),
        MIN_STRING_SIZE,
    )
}

/// The metadata rules of a resource see: `name` and `generateName`.
fn metadata_decl(resource: &str) -> Arc<Decl> {
    let fields = ["name", "generateName"].map(|k| {
        let field = Field {
            json: k.to_string(),
            decl: plain_string(),
        };
        (k.to_string(), field)
    });
    Arc::new(Decl {
        kind: Kind::Object(fields.into_iter().collect()),
        max_elements: 0,
        min_size: 2,
        list: ListKind::Atomic,
        name: format!("{resource}.metadata"),
    })
}

/// Strings by format: bytes, durations, timestamps, else strings bounded by `maxLength` (in
/// bytes: four per character), the longest `enum` value, or what fits in a request.
fn string_decl(s: &SchemaNode) -> Arc<Decl> {
    let format = s.format.as_str();
    match format {
        "byte" => simple(
            Kind::Bytes,
            match s.max_length {
                Some(l) => zero_if_negative(l),
                None => max_string_per_request(format, false),
            },
            MIN_STRING_SIZE,
        ),
        "duration" => simple(
            Kind::Duration,
            max_string_per_request(format, false),
            MIN_DURATION_SIZE_JSON,
        ),
        "date" => simple(
            Kind::Timestamp,
            max_string_per_request(format, false),
            JSON_DATE_SIZE,
        ),
        "date-time" => simple(
            Kind::Timestamp,
            max_string_per_request(format, false),
            MIN_DATETIME_SIZE_JSON,
        ),
        _ => {
            let max = if let Some(l) = s.max_length {
                zero_if_negative(l).saturating_mul(4)
            } else if !s.enum_values.is_empty() {
                s.enum_values
                    .iter()
                    .filter_map(Value::as_str)
                    .map(|v| v.len() as u64)
                    .max()
                    .unwrap_or(0)
            } else {
                max_string_per_request(format, false)
            };
            simple(Kind::String, max, MIN_STRING_SIZE)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_matches_the_documented_table() {
        assert_eq!(escape("namespace").as_deref(), Some("__namespace__"));
        assert_eq!(escape("x-prop").as_deref(), Some("x__dash__prop"));
        assert_eq!(
            escape("redact__d").as_deref(),
            Some("redact__underscores__d")
        );
        assert_eq!(escape("a.b/c").as_deref(), Some("a__dot__b__slash__c"));
        assert_eq!(escape("sprint").as_deref(), Some("sprint"));
        assert_eq!(escape("1abc"), None);
        assert_eq!(escape("a b"), None);
    }
}
