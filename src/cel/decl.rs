//! The CEL view of a structural schema: which CEL type every schema node has, which fields CEL
//! can see (escaped names, `metadata` reduced to `name`/`generateName`), and the size bounds the
//! cost estimator uses (`maxItems`/`maxLength`/`maxProperties`, else what fits in a 3 MiB request).
//!
//! Mirrors `k8s.io/apiserver/pkg/cel/common.SchemaDeclType` and `pkg/cel/escaping.go`.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::{Map, Value};

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

fn s_of<'a>(m: &'a Map<String, Value>, k: &str) -> &'a str {
    m.get(k).and_then(Value::as_str).unwrap_or("")
}

fn i_of(m: &Map<String, Value>, k: &str) -> Option<i64> {
    let v = m.get(k)?;
    v.as_i64()
        .or_else(|| v.as_u64().map(|_| i64::MAX))
        .or_else(|| v.as_f64().map(|f| f as i64))
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

/// Whether `s` (a schema object) already declares `kind`, `apiVersion` and the two visible
/// metadata strings, so that `WithTypeAndObjectMeta` leaves it alone.
fn has_type_and_meta(props: &Map<String, Value>) -> bool {
    let ty = |v: Option<&Value>| {
        v.and_then(|x| x.get("type"))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let meta = props.get("metadata");
    let mprops = meta.and_then(|m| m.get("properties"));
    ty(props.get("kind")) == "string"
        && ty(props.get("apiVersion")) == "string"
        && ty(meta) == "object"
        && mprops.is_some()
        && ty(mprops.and_then(|p| p.get("name"))) == "string"
        && ty(mprops.and_then(|p| p.get("generateName"))) == "string"
}

/// Builds the declaration of a schema node; `None` for nodes CEL cannot see (no type, arrays
/// without items, maps whose values are invisible).
pub fn decl_of(schema: &Value, is_resource_root: bool, name: &str) -> Option<Arc<Decl>> {
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

fn decl_at(schema: &Value, root: bool, name: &str, depth: usize) -> Option<Arc<Decl>> {
    let m = schema.as_object()?;
    if depth > 100 {
        return None;
    }
    if m.get("x-kubernetes-int-or-string").and_then(Value::as_bool) == Some(true) {
        let max = match i_of(m, "maxLength") {
            Some(l) => zero_if_negative(l).saturating_mul(4),
            None => max_string_per_request("", true),
        };
        return Some(simple(Kind::IntOrString, max, 1));
    }
    let ty = s_of(m, "type");
    let format = s_of(m, "format");
    match ty {
        "array" => {
            let items = m.get("items")?;
            let item_root = items
                .get("x-kubernetes-embedded-resource")
                .and_then(Value::as_bool)
                == Some(true);
            let elem = decl_at(items, item_root, &format!("{name}.@idx"), depth + 1)?;
            let max = match i_of(m, "maxItems") {
                Some(n) => zero_if_negative(n),
                None => ((MAX_REQUEST_SIZE - 2) / (elem.min_size + 1)) as u64,
            };
            let list = match s_of(m, "x-kubernetes-list-type") {
                "set" => ListKind::Set,
                "map" => ListKind::Map(
                    m.get("x-kubernetes-list-map-keys")
                        .and_then(Value::as_array)
                        .map(|a| {
                            a.iter()
                                .filter_map(|k| k.as_str().map(str::to_string))
                                .collect()
                        })
                        .unwrap_or_default(),
                ),
                _ => ListKind::Atomic,
            };
            Some(Arc::new(Decl {
                kind: Kind::List(elem),
                max_elements: max,
                min_size: 2,
                list,
                name: String::new(),
            }))
        }
        "object" => {
            if let Some(ap @ Value::Object(_)) = m.get("additionalProperties") {
                let ap_root = ap
                    .get("x-kubernetes-embedded-resource")
                    .and_then(Value::as_bool)
                    == Some(true);
                let elem = decl_at(ap, ap_root, &format!("{name}.@elem"), depth + 1)?;
                let max = match i_of(m, "maxProperties") {
                    Some(n) => zero_if_negative(n),
                    None => ((MAX_REQUEST_SIZE - 2) / (elem.min_size + 6)) as u64,
                };
                return Some(Arc::new(Decl {
                    kind: Kind::Map(elem),
                    max_elements: max,
                    min_size: 2,
                    list: ListKind::Atomic,
                    name: String::new(),
                }));
            }
            let empty = Map::new();
            let props = m
                .get("properties")
                .and_then(Value::as_object)
                .unwrap_or(&empty);
            let mut props_owned;
            let props = if root && !has_type_and_meta(props) {
                props_owned = props.clone();
                props_owned.insert("kind".into(), serde_json::json!({"type": "string"}));
                props_owned.insert("apiVersion".into(), serde_json::json!({"type": "string"}));
                props_owned.insert(
                    "metadata".into(),
                    serde_json::json!({"type": "object", "properties": {
                        "name": {"type": "string"}, "generateName": {"type": "string"}}}),
                );
                &props_owned
            } else {
                props
            };
            let required: Vec<&str> = m
                .get("required")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let mut fields = BTreeMap::new();
            let mut min_size = 2i64;
            for (k, p) in props {
                let p_root = p
                    .get("x-kubernetes-embedded-resource")
                    .and_then(Value::as_bool)
                    == Some(true);
                let Some(fd) = decl_at(p, p_root, &format!("{name}.{k}"), depth + 1) else {
                    continue;
                };
                let req = required.contains(&k.as_str());
                if req && p.get("default").is_none_or(Value::is_null) {
                    min_size = min_size.saturating_add(k.len() as i64 + fd.min_size + 4);
                }
                if let Some(esc) = escape(k) {
                    fields.insert(
                        esc,
                        Field {
                            json: k.clone(),
                            decl: fd,
                        },
                    );
                }
            }
            Some(Arc::new(Decl {
                kind: Kind::Object(fields),
                max_elements: 0,
                min_size,
                list: ListKind::Atomic,
                name: name.to_string(),
            }))
        }
        "string" => Some(match format {
            "byte" => simple(
                Kind::Bytes,
                match i_of(m, "maxLength") {
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
                let max = if let Some(l) = i_of(m, "maxLength") {
                    zero_if_negative(l).saturating_mul(4)
                } else if let Some(e) = m
                    .get("enum")
                    .and_then(Value::as_array)
                    .filter(|e| !e.is_empty())
                {
                    e.iter()
                        .filter_map(Value::as_str)
                        .map(|s| s.len() as u64)
                        .max()
                        .unwrap_or(0)
                } else {
                    max_string_per_request(format, false)
                };
                simple(Kind::String, max, MIN_STRING_SIZE)
            }
        }),
        "boolean" => Some(simple(Kind::Bool, 0, MIN_BOOL_SIZE)),
        "number" => Some(simple(Kind::Double, 0, MIN_NUMBER_SIZE)),
        "integer" => Some(simple(Kind::Int, 0, MIN_NUMBER_SIZE)),
        _ => None,
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
