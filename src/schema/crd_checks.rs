//! CRD-time checks of one version's `openAPIV3Schema`, as `validateCustomResourceDefinitionValidation`
//! runs them for a new `apiextensions.k8s.io/v1` CRD: status-subresource root restrictions, the
//! structural-schema rules (`schema/validation.go`, `complete.go`), defaults (`defaulting/
//! validation.go`) and the per-node OpenAPI restrictions (`ValidateCustomResourceDefinitionOpenAPISchema`).

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::gofmt::{error_value, go_quote};
use super::objectmeta;
use super::pattern::GoRegex;
use super::pruning;
use super::structural::Node;
use super::validation::{validate_value, VPath};
use crate::error::StatusCause;

/// A field error with Go's `Error()` text available for sorting.
#[derive(Debug, Clone)]
struct E(StatusCause);

impl E {
    fn text(&self) -> String {
        format!("{}: {}", self.0.field, self.0.message)
    }
}

fn required(field: String, detail: &str) -> E {
    E(StatusCause {
        reason: "FieldValueRequired".into(),
        message: if detail.is_empty() {
            "Required value".into()
        } else {
            format!("Required value: {detail}")
        },
        field,
    })
}

fn forbidden(field: String, detail: &str) -> E {
    E(StatusCause {
        reason: "FieldValueForbidden".into(),
        message: format!("Forbidden: {detail}"),
        field,
    })
}

fn invalid(field: String, value: &Value, detail: &str) -> E {
    E(StatusCause {
        reason: "FieldValueInvalid".into(),
        message: format!("Invalid value: {}: {detail}", error_value(value)),
        field,
    })
}

fn not_supported(field: String, value: &Value, supported: &[&str]) -> E {
    let q: Vec<String> = supported.iter().map(|s| go_quote(s)).collect();
    E(StatusCause {
        reason: "FieldValueNotSupported".into(),
        message: format!(
            "Unsupported value: {}: supported values: {}",
            error_value(value),
            q.join(", ")
        ),
        field,
    })
}

fn key(path: &str, k: &str) -> String {
    format!("{path}[{k}]")
}

fn s<'a>(m: &'a Map<String, Value>, k: &str) -> &'a str {
    m.get(k).and_then(Value::as_str).unwrap_or("")
}

fn b(m: &Map<String, Value>, k: &str) -> bool {
    m.get(k).and_then(Value::as_bool).unwrap_or(false)
}

fn obj<'a>(m: &'a Map<String, Value>, k: &str) -> Option<&'a Map<String, Value>> {
    m.get(k).and_then(Value::as_object)
}

fn arr<'a>(m: &'a Map<String, Value>, k: &str) -> &'a [Value] {
    m.get(k)
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

fn props(m: &Map<String, Value>) -> Vec<(&String, &Map<String, Value>)> {
    obj(m, "properties")
        .map(|p| {
            p.iter()
                .filter_map(|(k, v)| v.as_object().map(|o| (k, o)))
                .collect()
        })
        .unwrap_or_default()
}

fn empty() -> &'static Map<String, Value> {
    static EMPTY: std::sync::OnceLock<Map<String, Value>> = std::sync::OnceLock::new();
    EMPTY.get_or_init(Map::new)
}

/// Paths (dotted, under `path`) of keys that v1 `JSONSchemaProps` does not have: `readOnly`,
/// `writeOnly`, `xml`, `deprecated`, typos... The apiserver's decoder drops these (a warning, or
/// `unknown field "<path>"` under `fieldValidation=Strict`); this lists them so the caller can do
/// the same before calling [`validate_crd_schema`].
pub fn unknown_schema_fields(schema: &Value, path: &str) -> Vec<String> {
    let mut out = Vec::new();
    unknown_walk(schema, path, &mut out, 0);
    out
}

fn unknown_walk(v: &Value, path: &str, out: &mut Vec<String>, depth: usize) {
    let Some(m) = v.as_object() else { return };
    if depth > 200 {
        return;
    }
    for (k, x) in m {
        let p = format!("{path}.{k}");
        match k.as_str() {
            "properties" | "patternProperties" | "definitions" | "dependencies" => {
                if let Some(o) = x.as_object() {
                    for (n, sub) in o {
                        if sub.is_object() {
                            unknown_walk(sub, &format!("{p}.{n}"), out, depth + 1);
                        }
                    }
                }
            }
            "items" => match x {
                Value::Array(a) => {
                    for (i, sub) in a.iter().enumerate() {
                        unknown_walk(sub, &format!("{p}[{i}]"), out, depth + 1);
                    }
                }
                other => unknown_walk(other, &p, out, depth + 1),
            },
            "allOf" | "anyOf" | "oneOf" => {
                for (i, sub) in x
                    .as_array()
                    .map_or(&[][..], Vec::as_slice)
                    .iter()
                    .enumerate()
                {
                    unknown_walk(sub, &format!("{p}[{i}]"), out, depth + 1);
                }
            }
            "not" | "additionalProperties" | "additionalItems" => {
                unknown_walk(x, &p, out, depth + 1)
            }
            k if FIELD_ORDER.contains(&k) => {}
            _ => out.push(p),
        }
    }
}

/// Type errors that would make the apiserver fail to decode the schema at all.
fn decode_errors(v: &Value, path: &str, out: &mut Vec<E>, depth: usize) {
    let Some(m) = v.as_object() else {
        out.push(invalid(path.to_string(), v, "must be a JSON object"));
        return;
    };
    if depth > 200 {
        return;
    }
    let want = |k: &str, ok: bool, what: &str, out: &mut Vec<E>| {
        if !ok {
            let val = m.get(k).cloned().unwrap_or(Value::Null);
            out.push(invalid(
                format!("{path}.{k}"),
                &val,
                &format!("must be {what}"),
            ));
        }
    };
    for (k, x) in m {
        if x.is_null() {
            continue;
        }
        match k.as_str() {
            "id"
            | "$schema"
            | "$ref"
            | "description"
            | "type"
            | "format"
            | "title"
            | "pattern"
            | "x-kubernetes-list-type"
            | "x-kubernetes-map-type" => want(k, x.is_string(), "a string", out),
            "maximum" | "minimum" | "multipleOf" => want(k, x.is_number(), "a number", out),
            "maxLength" | "minLength" | "maxItems" | "minItems" | "maxProperties"
            | "minProperties" => want(k, x.is_i64(), "an integer", out),
            "exclusiveMaximum"
            | "exclusiveMinimum"
            | "uniqueItems"
            | "nullable"
            | "x-kubernetes-preserve-unknown-fields"
            | "x-kubernetes-embedded-resource"
            | "x-kubernetes-int-or-string" => want(k, x.is_boolean(), "a boolean", out),
            "enum" | "x-kubernetes-validations" => want(k, x.is_array(), "an array", out),
            "required" | "x-kubernetes-list-map-keys" => want(
                k,
                x.as_array().is_some_and(|a| a.iter().all(Value::is_string)),
                "an array of strings",
                out,
            ),
            "properties" | "patternProperties" | "definitions" => {
                want(k, x.is_object(), "an object", out);
                if let Some(o) = x.as_object() {
                    for (n, sub) in o {
                        decode_errors(sub, &key(&format!("{path}.{k}"), n), out, depth + 1);
                    }
                }
            }
            "items" => match x {
                Value::Array(a) => {
                    for (i, sub) in a.iter().enumerate() {
                        decode_errors(sub, &format!("{path}.items[{i}]"), out, depth + 1);
                    }
                }
                other => decode_errors(other, &format!("{path}.items"), out, depth + 1),
            },
            "allOf" | "anyOf" | "oneOf" => {
                want(k, x.is_array(), "an array", out);
                for (i, sub) in x
                    .as_array()
                    .map_or(&[][..], Vec::as_slice)
                    .iter()
                    .enumerate()
                {
                    decode_errors(sub, &format!("{path}.{k}[{i}]"), out, depth + 1);
                }
            }
            "not" => decode_errors(x, &format!("{path}.not"), out, depth + 1),
            "additionalProperties" | "additionalItems" if !x.is_boolean() => {
                decode_errors(x, &format!("{path}.{k}"), out, depth + 1);
            }
            _ => {}
        }
    }
}

/// CRD-time checks of one version's schema, reported under `path` (the path of
/// `openAPIV3Schema` itself, e.g. `spec.versions[0].schema.openAPIV3Schema`): status-subresource
/// root restrictions, the structural rules with the apiserver's messages (sorted as it sorts
/// them), defaults that are not pruned or do not validate, the per-node restrictions (forbidden
/// keywords, `additionalProperties` with `properties`, `x-kubernetes-*` combinations, metadata
/// restrictions). Keys v1 `JSONSchemaProps` does not know (`readOnly`, `xml`, ...) are ignored,
/// as the apiserver's decoder drops them; see [`unknown_schema_fields`]. CEL rules in
/// `x-kubernetes-validations` are only checked for shape, not compiled.
pub fn validate_crd_schema(
    schema: &Value,
    path: &str,
    status_subresource: bool,
) -> Vec<StatusCause> {
    let mut decode = Vec::new();
    decode_errors(schema, path, &mut decode, 0);
    if !decode.is_empty() {
        return decode.into_iter().map(|e| e.0).collect();
    }
    let m = schema.as_object().unwrap_or(empty());
    let mut all: Vec<E> = Vec::new();
    if status_subresource {
        status_root(m, path, schema, &mut all);
    }
    if b(m, "nullable") {
        all.push(forbidden(
            format!("{path}.nullable"),
            "nullable cannot be true at the root",
        ));
    }
    let init_err = unsupported(m, 0);
    if init_err.is_none() {
        let mut st = Vec::new();
        invariants(m, Level::Root, path, &mut st);
        completeness_value(m, Some(m), path, path, &mut st);
        st.sort_by_key(E::text);
        if !st.is_empty() {
            all.extend(st);
        } else {
            let root = Node::compile(schema);
            let mut d = Vec::new();
            defaults(m, &root, path, true, false, &mut d);
            all.extend(d);
        }
    }
    let ssv = Ssv {
        allow_defaults: true,
        disallow_reason: String::new(),
        inside_meta: false,
    };
    openapi_checks(m, path, &ssv, true, &mut all, 0);
    if all.is_empty() {
        if let Some(e) = init_err {
            all.push(invalid(path.to_string(), &Value::String(String::new()), &e));
        }
    }
    all.into_iter().map(|e| e.0).collect()
}

const ROOT_ALLOWED: &[&str] = &[
    "description",
    "type",
    "format",
    "title",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "multipleOf",
    "required",
    "items",
    "properties",
    "externalDocs",
    "example",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-validations",
];

/// The JSON keys of v1 `JSONSchemaProps`, in its field order (so that the first offending field
/// is the one Go finds; any other key is one the decoder drops).
const FIELD_ORDER: &[&str] = &[
    "id",
    "$schema",
    "$ref",
    "description",
    "type",
    "nullable",
    "format",
    "title",
    "default",
    "maximum",
    "exclusiveMaximum",
    "minimum",
    "exclusiveMinimum",
    "maxLength",
    "minLength",
    "pattern",
    "maxItems",
    "minItems",
    "uniqueItems",
    "multipleOf",
    "enum",
    "maxProperties",
    "minProperties",
    "required",
    "items",
    "allOf",
    "oneOf",
    "anyOf",
    "not",
    "properties",
    "additionalProperties",
    "patternProperties",
    "dependencies",
    "additionalItems",
    "definitions",
    "externalDocs",
    "example",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-embedded-resource",
    "x-kubernetes-int-or-string",
    "x-kubernetes-list-map-keys",
    "x-kubernetes-list-type",
    "x-kubernetes-map-type",
    "x-kubernetes-validations",
];

fn is_zero(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::String(s) => s.is_empty(),
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
    }
}

fn status_root(m: &Map<String, Value>, path: &str, schema: &Value, all: &mut Vec<E>) {
    for f in FIELD_ORDER {
        let Some(v) = m.get(*f) else { continue };
        if is_zero(v) {
            continue;
        }
        if *f == "type" {
            if s(m, "type") != "object" {
                all.push(invalid(
                    format!("{path}.type"),
                    v,
                    r#"only "object" is allowed as the type at the root of the schema if the status subresource is enabled"#,
                ));
                break;
            }
            continue;
        }
        if !ROOT_ALLOWED.contains(f) {
            all.push(invalid(
                path.to_string(),
                schema,
                "only [Description Type Format Title Maximum ExclusiveMaximum Minimum ExclusiveMinimum MaxLength MinLength Pattern MaxItems MinItems UniqueItems MultipleOf Required Items Properties ExternalDocs Example XPreserveUnknownFields XValidations] fields are allowed at the root of the schema if the status subresource is enabled",
            ));
            break;
        }
    }
}

/// `NewStructural`'s `validateUnsupportedFields` over the whole tree: the first error, if any.
fn unsupported(m: &Map<String, Value>, depth: usize) -> Option<String> {
    if depth > 200 {
        return None;
    }
    if !s(m, "id").is_empty() {
        return Some("OpenAPIV3Schema 'id' is not supported".into());
    }
    if !s(m, "$schema").is_empty() {
        return Some("OpenAPIV3Schema 'schema' is not supported".into());
    }
    if !s(m, "$ref").is_empty() {
        return Some("OpenAPIV3Schema '$ref' is not supported".into());
    }
    if obj(m, "patternProperties").is_some_and(|p| !p.is_empty()) {
        return Some("OpenAPIV3Schema 'patternProperties' is not supported".into());
    }
    if obj(m, "dependencies").is_some_and(|p| !p.is_empty()) {
        return Some("OpenAPIV3Schema 'dependencies' is not supported".into());
    }
    if m.get("additionalItems").is_some_and(|v| !v.is_null()) {
        return Some("OpenAPIV3Schema 'additionalItems' is not supported".into());
    }
    if obj(m, "definitions").is_some_and(|p| !p.is_empty()) {
        return Some("OpenAPIV3Schema 'definitions' is not supported".into());
    }
    if m.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(false)) {
        return Some(
            "internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined"
                .into(),
        );
    }
    match m.get("items") {
        Some(Value::Array(a)) if !a.is_empty() => {
            return Some("OpenAPIV3Schema 'items' must be a schema, but is an array".into())
        }
        Some(Value::Object(i)) => {
            if let Some(e) = unsupported(i, depth + 1) {
                return Some(e);
            }
        }
        _ => {}
    }
    for (_, p) in props(m) {
        if let Some(e) = unsupported(p, depth + 1) {
            return Some(e);
        }
    }
    for k in ["additionalProperties", "not"] {
        if let Some(o) = obj(m, k) {
            if let Some(e) = unsupported(o, depth + 1) {
                return Some(e);
            }
        }
    }
    for k in ["allOf", "anyOf", "oneOf"] {
        for x in arr(m, k) {
            if let Some(e) = x.as_object().and_then(|o| unsupported(o, depth + 1)) {
                return Some(e);
            }
        }
    }
    None
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Root,
    Item,
    Field,
}

fn has_additional(m: &Map<String, Value>) -> bool {
    m.get("additionalProperties").is_some_and(|v| !v.is_null())
}

fn is_int_or_string_any_of(any_of: &[Value]) -> bool {
    any_of.len() == 2
        && ["integer", "string"].iter().zip(any_of).all(|(t, x)| {
            x.as_object().is_some_and(|o| {
                o.len() == 1 && o.get("type") == Some(&Value::String(t.to_string()))
            })
        })
}

fn invariants(m: &Map<String, Value>, lvl: Level, path: &str, out: &mut Vec<E>) {
    let ty = s(m, "type");
    let items = obj(m, "items");
    if ty == "array" && items.is_none() {
        out.push(required(format!("{path}.items"), "must be specified"));
    }
    if let Some(i) = items {
        invariants(i, Level::Item, &format!("{path}.items"), out);
    }
    for (k, p) in props(m) {
        invariants(p, Level::Field, &key(&format!("{path}.properties"), k), out);
    }
    if has_additional(m) {
        if lvl == Level::Root {
            out.push(forbidden(
                format!("{path}.additionalProperties"),
                "must not be used at the root",
            ));
        }
        if let Some(a) = obj(m, "additionalProperties") {
            invariants(
                a,
                Level::Field,
                &format!("{path}.additionalProperties"),
                out,
            );
        }
    }
    let ios = b(m, "x-kubernetes-int-or-string");
    let preserve = b(m, "x-kubernetes-preserve-unknown-fields");
    let embedded = b(m, "x-kubernetes-embedded-resource");
    if ios && preserve {
        out.push(invalid(
            format!("{path}.x-kubernetes-preserve-unknown-fields"),
            &Value::Bool(true),
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    if ios && embedded {
        out.push(invalid(
            format!("{path}.x-kubernetes-embedded-resource"),
            &Value::Bool(true),
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    let skip_any_of = is_int_or_string_any_of(arr(m, "anyOf"));
    let skip_first = arr(m, "allOf")
        .first()
        .and_then(Value::as_object)
        .is_some_and(|o| is_int_or_string_any_of(arr(o, "anyOf")));
    value_validation(m, skip_any_of, skip_first, path, out);
    let check_meta = lvl == Level::Root || embedded;
    if embedded && ty != "object" {
        if ty.is_empty() {
            out.push(required(
                format!("{path}.type"),
                "must be object if x-kubernetes-embedded-resource is true",
            ));
        } else {
            out.push(invalid(
                format!("{path}.type"),
                &Value::String(ty.into()),
                "must be object if x-kubernetes-embedded-resource is true",
            ));
        }
    } else if ty.is_empty() && !ios && !preserve {
        let detail = match lvl {
            Level::Root => "must not be empty at the root",
            Level::Item => "must not be empty for specified array items",
            Level::Field => "must not be empty for specified object fields",
        };
        out.push(required(format!("{path}.type"), detail));
    }
    if embedded && has_additional(m) {
        out.push(forbidden(
            format!("{path}.additionalProperties"),
            "must not be used if x-kubernetes-embedded-resource is set",
        ));
    }
    if lvl == Level::Root && !ty.is_empty() && ty != "object" {
        out.push(invalid(
            format!("{path}.type"),
            &Value::String(ty.into()),
            "must be object at the root",
        ));
    }
    let properties = obj(m, "properties");
    for f in ["kind", "apiVersion"] {
        if let Some(p) = properties.and_then(|p| p.get(f)).filter(|_| check_meta) {
            let t = p.as_object().map_or("", |o| s(o, "type"));
            if t != "string" {
                out.push(invalid(
                    format!("{}.type", key(&format!("{path}.properties"), f)),
                    &Value::String(t.into()),
                    "must be string",
                ));
            }
        }
    }
    if let Some(meta) = properties.and_then(|p| p.get("metadata")) {
        let mm = meta.as_object().unwrap_or(empty());
        let mpath = key(&format!("{path}.properties"), "metadata");
        let mt = s(mm, "type");
        if check_meta && mt != "object" {
            out.push(invalid(
                format!("{mpath}.type"),
                &Value::String(mt.into()),
                "must be object",
            ));
        }
        if lvl == Level::Root && !metadata_only_names(mm) {
            out.push(forbidden(
                mpath,
                "must not specify anything other than name and generateName, but metadata is implicitly specified",
            ));
        }
    }
    if embedded && !preserve && obj(m, "properties").is_none_or(Map::is_empty) {
        out.push(required(
            format!("{path}.properties"),
            "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
        ));
    }
}

/// Root `metadata` may restrict only `name` and `generateName` (everything else must be zero).
fn metadata_only_names(m: &Map<String, Value>) -> bool {
    for (k, v) in m {
        match k.as_str() {
            "type" | "default" => {}
            "properties" => {
                let Some(p) = v.as_object() else { continue };
                let names: BTreeSet<&str> = p.keys().map(String::as_str).collect();
                let ok = p.is_empty()
                    || (names.iter().all(|n| *n == "name" || *n == "generateName")
                        && !names.is_empty());
                if !ok {
                    return false;
                }
            }
            "required" | "x-kubernetes-list-map-keys" => {
                if !v.is_null() {
                    return false;
                }
            }
            _ => {
                if !is_zero(v) {
                    return false;
                }
            }
        }
    }
    true
}

fn value_validation(
    m: &Map<String, Value>,
    skip_any_of: bool,
    skip_first_all_of_any_of: bool,
    path: &str,
    out: &mut Vec<E>,
) {
    if !skip_any_of {
        for (i, x) in arr(m, "anyOf").iter().enumerate() {
            nested(
                x.as_object().unwrap_or(empty()),
                false,
                &format!("{path}.anyOf[{i}]"),
                out,
            );
        }
    }
    for (i, x) in arr(m, "allOf").iter().enumerate() {
        let skip = skip_first_all_of_any_of && i == 0;
        nested(
            x.as_object().unwrap_or(empty()),
            skip,
            &format!("{path}.allOf[{i}]"),
            out,
        );
    }
    for (i, x) in arr(m, "oneOf").iter().enumerate() {
        nested(
            x.as_object().unwrap_or(empty()),
            false,
            &format!("{path}.oneOf[{i}]"),
            out,
        );
    }
    if let Some(n) = obj(m, "not") {
        nested(n, false, &format!("{path}.not"), out);
    }
    let pattern = s(m, "pattern");
    if !pattern.is_empty() {
        if let Err(e) = &GoRegex::new(pattern).compiled {
            out.push(invalid(
                format!("{path}.pattern"),
                &Value::String(pattern.into()),
                &format!("must be a valid regular expression, but isn't: {e}"),
            ));
        }
    }
}

fn nested(m: &Map<String, Value>, skip_any_of: bool, path: &str, out: &mut Vec<E>) {
    value_validation(m, skip_any_of, false, path, out);
    if let Some(i) = obj(m, "items") {
        nested(i, false, &format!("{path}.items"), out);
    }
    for (k, p) in props(m) {
        nested(p, false, &key(&format!("{path}.properties"), k), out);
    }
    if !s(m, "type").is_empty() {
        out.push(forbidden(
            format!("{path}.type"),
            "must be empty to be structural",
        ));
    }
    match m.get("additionalProperties") {
        Some(Value::Bool(true)) | Some(Value::Object(_)) => out.push(forbidden(
            format!("{path}.additionalProperties"),
            "must be undefined to be structural",
        )),
        _ => {}
    }
    let checks: [(&str, bool, &str); 11] = [
        (
            "default",
            m.get("default").is_some_and(|v| !v.is_null()),
            "must be undefined to be structural",
        ),
        (
            "title",
            !s(m, "title").is_empty(),
            "must be empty to be structural",
        ),
        (
            "description",
            !s(m, "description").is_empty(),
            "must be empty to be structural",
        ),
        (
            "nullable",
            b(m, "nullable"),
            "must be false to be structural",
        ),
        (
            "x-kubernetes-preserve-unknown-fields",
            b(m, "x-kubernetes-preserve-unknown-fields"),
            "must be false to be structural",
        ),
        (
            "x-kubernetes-embedded-resource",
            b(m, "x-kubernetes-embedded-resource"),
            "must be false to be structural",
        ),
        (
            "x-kubernetes-int-or-string",
            b(m, "x-kubernetes-int-or-string"),
            "must be false to be structural",
        ),
        (
            "x-kubernetes-list-map-keys",
            !arr(m, "x-kubernetes-list-map-keys").is_empty(),
            "must be empty to be structural",
        ),
        (
            "x-kubernetes-list-type",
            m.get("x-kubernetes-list-type")
                .is_some_and(Value::is_string),
            "must be undefined to be structural",
        ),
        (
            "x-kubernetes-map-type",
            m.get("x-kubernetes-map-type").is_some_and(Value::is_string),
            "must be undefined to be structural",
        ),
        (
            "x-kubernetes-validations",
            !arr(m, "x-kubernetes-validations").is_empty(),
            "must be empty to be structural",
        ),
    ];
    for (k, bad, detail) in checks {
        if bad {
            out.push(forbidden(format!("{path}.{k}"), detail));
        }
    }
    if obj(m, "properties").is_some_and(|p| p.contains_key("metadata")) {
        out.push(forbidden(
            key(&format!("{path}.properties"), "metadata"),
            "must not be specified in a nested context",
        ));
    }
}

fn completeness_value(
    v: &Map<String, Value>,
    s_node: Option<&Map<String, Value>>,
    s_path: &str,
    v_path: &str,
    out: &mut Vec<E>,
) {
    if let Some(n) = obj(v, "not") {
        completeness_nested(n, s_node, s_path, &format!("{v_path}.not"), out);
    }
    for j in ["allOf", "anyOf", "oneOf"] {
        for (i, x) in arr(v, j).iter().enumerate() {
            completeness_nested(
                x.as_object().unwrap_or(empty()),
                s_node,
                s_path,
                &format!("{v_path}.{j}[{i}]"),
                out,
            );
        }
    }
}

fn completeness_nested(
    v: &Map<String, Value>,
    s_node: Option<&Map<String, Value>>,
    s_path: &str,
    v_path: &str,
    out: &mut Vec<E>,
) {
    let Some(sn) = s_node else {
        out.push(required(
            s_path.to_string(),
            &format!("because it is defined in {v_path}"),
        ));
        return;
    };
    completeness_value(v, Some(sn), s_path, v_path, out);
    if let Some(i) = obj(v, "items") {
        completeness_nested(
            i,
            obj(sn, "items"),
            &format!("{s_path}.items"),
            &format!("{v_path}.items"),
            out,
        );
    }
    for (k, p) in props(v) {
        let sp = key(&format!("{s_path}.properties"), k);
        let vp = key(&format!("{v_path}.properties"), k);
        match obj(sn, "properties").and_then(|x| x.get(k.as_str())) {
            None => out.push(required(sp, &format!("because it is defined in {vp}"))),
            Some(sf) => {
                completeness_nested(p, Some(sf.as_object().unwrap_or(empty())), &sp, &vp, out)
            }
        }
    }
}

/// `ValidateDefaults`: defaults must be pruned, carry valid embedded metadata and validate
/// against their own schema.
fn defaults(
    m: &Map<String, Value>,
    n: &Node,
    path: &str,
    resource_root: bool,
    inside_meta: bool,
    out: &mut Vec<E>,
) {
    let embedded = resource_root || n.embedded_resource;
    let inside_meta = if embedded { false } else { inside_meta };
    if let Some(d) = m.get("default").filter(|d| !d.is_null()) {
        let dpath = format!("{path}.default");
        if inside_meta {
            out.extend(validate_value(n, d, None, Some(&dpath)).into_iter().map(E));
        } else {
            let mut pruned = d.clone();
            let mut t = pruning::Tracker::default();
            pruning::prune(&mut pruned, n, n.embedded_resource, &mut t);
            if &pruned != d {
                out.push(invalid(dpath.clone(), d, "must not have unknown fields"));
            }
            let mut meta_errs = Vec::new();
            if n.embedded_resource {
                if let Some(dm) = d.as_object() {
                    for f in ["apiVersion", "kind"] {
                        if let Some(v) = dm.get(f).filter(|v| !v.is_string()) {
                            meta_errs.push(invalid(format!("{dpath}.{f}"), v, "must be a string"));
                        }
                    }
                    if let Some(meta) = dm.get("metadata") {
                        if let Err(e) = objectmeta::check_object_meta(meta) {
                            meta_errs.push(invalid(
                                format!("{dpath}.metadata"),
                                meta,
                                &e.to_string(),
                            ));
                        }
                    }
                }
            }
            if meta_errs.is_empty() {
                let mut obj_errs = Vec::new();
                objectmeta::validate(d, Some(n), &VPath::root(), &mut obj_errs);
                for c in &mut obj_errs {
                    c.field = if c.field.is_empty() {
                        dpath.clone()
                    } else {
                        format!("{dpath}.{}", c.field)
                    };
                }
                if !obj_errs.is_empty() {
                    out.extend(obj_errs.into_iter().map(E));
                } else {
                    out.extend(validate_value(n, d, None, Some(&dpath)).into_iter().map(E));
                }
            } else {
                out.extend(meta_errs.into_iter().take(1));
            }
        }
    }
    if let (Some(im), Some(inode)) = (obj(m, "items"), n.items.as_deref()) {
        defaults(im, inode, &format!("{path}.items"), false, inside_meta, out);
    }
    for (k, p) in props(m) {
        let Some(pn) = n.properties.get(k.as_str()) else {
            continue;
        };
        let sub_inside =
            inside_meta || (embedded && matches!(k.as_str(), "metadata" | "apiVersion" | "kind"));
        defaults(
            p,
            pn,
            &key(&format!("{path}.properties"), k),
            false,
            sub_inside,
            out,
        );
    }
}

/// The `specStandardValidatorV3` state threaded through the recursion.
#[derive(Clone)]
struct Ssv {
    allow_defaults: bool,
    disallow_reason: String,
    inside_meta: bool,
}

impl Ssv {
    fn forbid_defaults(&self, reason: &str) -> Ssv {
        Ssv {
            allow_defaults: false,
            disallow_reason: reason.to_string(),
            ..self.clone()
        }
    }
}

const OPENAPI_TYPES: &[&str] = &["array", "boolean", "integer", "number", "object", "string"];

fn ssv_validate(m: &Map<String, Value>, path: &str, ssv: &Ssv, out: &mut Vec<E>) {
    let ty = s(m, "type");
    if !ty.is_empty() && !OPENAPI_TYPES.contains(&ty) {
        out.push(not_supported(
            format!("{path}.type"),
            &Value::String(ty.into()),
            OPENAPI_TYPES,
        ));
    }
    if m.contains_key("default") && !ssv.allow_defaults {
        let mut detail = "must not be set".to_string();
        if !ssv.disallow_reason.is_empty() {
            detail.push(' ');
            detail.push_str(&ssv.disallow_reason);
        }
        out.push(forbidden(format!("{path}.default"), &detail));
    }
    if !s(m, "id").is_empty() {
        out.push(forbidden(format!("{path}.id"), "id is not supported"));
    }
    if m.get("additionalItems").is_some_and(|v| !v.is_null()) {
        out.push(forbidden(
            format!("{path}.additionalItems"),
            "additionalItems is not supported",
        ));
    }
    if obj(m, "patternProperties").is_some_and(|p| !p.is_empty()) {
        out.push(forbidden(
            format!("{path}.patternProperties"),
            "patternProperties is not supported",
        ));
    }
    if obj(m, "definitions").is_some_and(|p| !p.is_empty()) {
        out.push(forbidden(
            format!("{path}.definitions"),
            "definitions is not supported",
        ));
    }
    if m.get("dependencies").is_some_and(|v| !v.is_null()) {
        out.push(forbidden(
            format!("{path}.dependencies"),
            "dependencies is not supported",
        ));
    }
    if m.get("$ref").is_some_and(|v| !v.is_null()) {
        out.push(forbidden(format!("{path}.$ref"), "$ref is not supported"));
    }
    if ty == "null" {
        out.push(forbidden(
            format!("{path}.type"),
            "type cannot be set to null, use nullable as an alternative",
        ));
    }
    if m.get("items")
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty())
    {
        out.push(forbidden(
            format!("{path}.items"),
            "items must be a schema object and not an array",
        ));
    }
    if ssv.inside_meta && b(m, "x-kubernetes-embedded-resource") {
        out.push(forbidden(
            format!("{path}.x-kubernetes-embedded-resource"),
            "must not be used inside of resource meta",
        ));
    }
}

fn openapi_checks(
    m: &Map<String, Value>,
    path: &str,
    ssv: &Ssv,
    is_root: bool,
    out: &mut Vec<E>,
    depth: usize,
) {
    if depth > 200 {
        return;
    }
    ssv_validate(m, path, ssv, out);
    if b(m, "uniqueItems") {
        out.push(forbidden(
            format!("{path}.uniqueItems"),
            "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
        ));
    }
    let has_props = obj(m, "properties").is_some_and(|p| !p.is_empty());
    if let Some(add) = m.get("additionalProperties").filter(|v| !v.is_null()) {
        if has_props && add != &Value::Bool(true) {
            out.push(forbidden(
                format!("{path}.additionalProperties"),
                "additionalProperties and properties are mutual exclusive",
            ));
        }
        if let Some(a) = add.as_object() {
            let sub = if ssv.inside_meta {
                ssv.forbid_defaults("inside additionalProperties applying to object metadata")
            } else {
                ssv.clone()
            };
            openapi_checks(
                a,
                &format!("{path}.additionalProperties"),
                &sub,
                false,
                out,
                depth + 1,
            );
        }
    }
    let embedded = b(m, "x-kubernetes-embedded-resource");
    for (k, p) in props(m) {
        let mut sub = ssv.clone();
        if (is_root || embedded) && matches!(k.as_str(), "metadata" | "kind" | "apiVersion") {
            sub.inside_meta = true;
            if is_root {
                sub = sub.forbid_defaults(&format!("in top-level {k}"));
            }
        }
        openapi_checks(
            p,
            &key(&format!("{path}.properties"), k),
            &sub,
            false,
            out,
            depth + 1,
        );
    }
    if let Some(n) = obj(m, "not") {
        openapi_checks(n, &format!("{path}.not"), ssv, false, out, depth + 1);
    }
    for j in ["allOf", "oneOf", "anyOf"] {
        for (i, x) in arr(m, j).iter().enumerate() {
            if let Some(o) = x.as_object() {
                openapi_checks(o, &format!("{path}.{j}[{i}]"), ssv, false, out, depth + 1);
            }
        }
    }
    if let Some(defs) = obj(m, "definitions") {
        for (k, x) in defs {
            if let Some(o) = x.as_object() {
                openapi_checks(
                    o,
                    &key(&format!("{path}.definitions"), k),
                    ssv,
                    false,
                    out,
                    depth + 1,
                );
            }
        }
    }
    match m.get("items") {
        Some(Value::Object(i)) => {
            openapi_checks(i, &format!("{path}.items"), ssv, false, out, depth + 1)
        }
        Some(Value::Array(a)) => {
            for (i, x) in a.iter().enumerate() {
                if let Some(o) = x.as_object() {
                    openapi_checks(o, &format!("{path}.items[{i}]"), ssv, false, out, depth + 1);
                }
            }
        }
        _ => {}
    }
    if let Some(deps) = obj(m, "dependencies") {
        for (k, x) in deps {
            if let Some(o) = x.as_object() {
                openapi_checks(
                    o,
                    &key(&format!("{path}.dependencies"), k),
                    ssv,
                    false,
                    out,
                    depth + 1,
                );
            }
        }
    }
    extension_checks(m, path, out);
}

fn extension_checks(m: &Map<String, Value>, path: &str, out: &mut Vec<E>) {
    let ty = s(m, "type");
    if m.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(false)) {
        out.push(invalid(
            format!("{path}.x-kubernetes-preserve-unknown-fields"),
            &Value::Bool(false),
            "must be true or undefined",
        ));
    }
    let map_type = m.get("x-kubernetes-map-type").and_then(Value::as_str);
    if map_type.is_some() && ty != "object" {
        if ty.is_empty() {
            out.push(required(
                format!("{path}.type"),
                "must be object if x-kubernetes-map-type is specified",
            ));
        } else {
            out.push(invalid(
                format!("{path}.type"),
                &Value::String(ty.into()),
                "must be object if x-kubernetes-map-type is specified",
            ));
        }
    }
    if let Some(mt) = map_type.filter(|t| *t != "atomic" && *t != "granular") {
        out.push(not_supported(
            format!("{path}.x-kubernetes-map-type"),
            &Value::String(mt.into()),
            &["atomic", "granular"],
        ));
    }
    let list_type = m.get("x-kubernetes-list-type").and_then(Value::as_str);
    let items = obj(m, "items");
    if list_type.is_some() && ty != "array" {
        if ty.is_empty() {
            out.push(required(
                format!("{path}.type"),
                "must be array if x-kubernetes-list-type is specified",
            ));
        } else {
            out.push(invalid(
                format!("{path}.type"),
                &Value::String(ty.into()),
                "must be array if x-kubernetes-list-type is specified",
            ));
        }
    } else if let (Some("set"), Some(is)) = (list_type, items) {
        let item_list_type = is
            .get("x-kubernetes-list-type")
            .cloned()
            .unwrap_or(Value::Null);
        // Go passes the item's *string list type (nil prints as null), also for the map-type case.
        let atomic_msg = "must be atomic as item of a list with x-kubernetes-list-type=set";
        match s(is, "type") {
            "array" if item_list_type.as_str().is_some_and(|t| t != "atomic") => {
                out.push(invalid(
                    format!("{path}.items.x-kubernetes-list-type"),
                    &item_list_type,
                    atomic_msg,
                ));
            }
            "object" if s(is, "x-kubernetes-map-type") != "atomic" => {
                out.push(invalid(
                    format!("{path}.items.x-kubernetes-map-type"),
                    &item_list_type,
                    atomic_msg,
                ));
            }
            _ => {}
        }
    }
    if let Some(lt) = list_type.filter(|t| !matches!(*t, "atomic" | "set" | "map")) {
        out.push(not_supported(
            format!("{path}.x-kubernetes-list-type"),
            &Value::String(lt.into()),
            &["atomic", "set", "map"],
        ));
    }
    let keys: Vec<&str> = arr(m, "x-kubernetes-list-map-keys")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    if !keys.is_empty() {
        match list_type {
            None => out.push(required(
                format!("{path}.x-kubernetes-list-type"),
                "must be map if x-kubernetes-list-map-keys is non-empty",
            )),
            Some("map") => {}
            Some(t) => out.push(invalid(
                format!("{path}.x-kubernetes-list-type"),
                &Value::String(t.into()),
                "must be map if x-kubernetes-list-map-keys is non-empty",
            )),
        }
    }
    let keys_value = Value::Array(keys.iter().map(|k| Value::String(k.to_string())).collect());
    if list_type == Some("map") {
        if keys.is_empty() {
            out.push(required(
                format!("{path}.x-kubernetes-list-map-keys"),
                "must not be empty if x-kubernetes-list-type is map",
            ));
        }
        match m.get("items") {
            None | Some(Value::Null) => out.push(required(
                format!("{path}.items"),
                "must have a schema if x-kubernetes-list-type is map",
            )),
            Some(Value::Array(a)) => out.push(invalid(
                format!("{path}.items"),
                &Value::Array(a.clone()),
                "must only have a single schema if x-kubernetes-list-type is map",
            )),
            _ => {}
        }
        if let Some(is) = items {
            let it = s(is, "type");
            if it != "object" {
                out.push(invalid(
                    format!("{path}.items.type"),
                    &Value::String(it.into()),
                    "must be object if parent array's x-kubernetes-list-type is map",
                ));
            } else {
                let mut seen = BTreeSet::new();
                for k in &keys {
                    match obj(is, "properties").and_then(|p| p.get(*k)) {
                        Some(kp) => {
                            let kt = kp.as_object().map_or("", |o| s(o, "type"));
                            if kt == "array" || kt == "object" {
                                out.push(invalid(
                                    format!("{}.type", key(&format!("{path}.items.properties"), k)),
                                    &Value::String(it.into()),
                                    "must be a scalar type if parent array's x-kubernetes-list-type is map",
                                ));
                            }
                        }
                        None => out.push(invalid(
                            format!("{path}.x-kubernetes-list-map-keys"),
                            &keys_value,
                            "entries must all be names of item properties",
                        )),
                    }
                    if !seen.insert(*k) {
                        out.push(invalid(
                            format!("{path}.x-kubernetes-list-map-keys"),
                            &keys_value,
                            "must not contain duplicate entries",
                        ));
                    }
                }
            }
        }
    }
    // validateMapListKeysMapSet
    if let (Some(lt @ ("set" | "map")), Some(is)) = (list_type, items) {
        if b(is, "nullable") {
            out.push(forbidden(
                format!("{path}.items.nullable"),
                &format!("cannot be nullable when x-kubernetes-list-type is {lt}"),
            ));
        }
        if lt == "map" {
            let req: Vec<&str> = arr(is, "required")
                .iter()
                .filter_map(Value::as_str)
                .collect();
            for k in &keys {
                let Some(kp) = obj(is, "properties")
                    .and_then(|p| p.get(*k))
                    .and_then(Value::as_object)
                else {
                    continue;
                };
                let kpath = key(&format!("{path}.items.properties"), k);
                if !req.contains(k) && kp.get("default").is_none_or(Value::is_null) {
                    out.push(required(
                        format!("{kpath}.default"),
                        "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property",
                    ));
                }
                if b(kp, "nullable") {
                    out.push(forbidden(
                        format!("{kpath}.nullable"),
                        "this property is in x-kubernetes-list-map-keys, so it cannot be nullable",
                    ));
                }
            }
        }
    }
    for (i, rule) in arr(m, "x-kubernetes-validations").iter().enumerate() {
        let r = rule.as_object().unwrap_or(empty());
        let rpath = format!("{path}.x-kubernetes-validations[{i}]");
        let rule_s = s(r, "rule");
        let msg = s(r, "message");
        let has_newline = |x: &str| x.contains('\n') || x.contains('\r');
        if rule_s.trim().is_empty() {
            out.push(required(format!("{rpath}.rule"), "rule is not specified"));
        } else if !msg.is_empty() && msg.trim().is_empty() {
            out.push(invalid(
                format!("{rpath}.message"),
                &Value::String(msg.into()),
                "must be non-empty if specified",
            ));
        } else if has_newline(msg.trim()) {
            out.push(invalid(
                format!("{rpath}.message"),
                &Value::String(msg.into()),
                "must not contain line breaks",
            ));
        } else if has_newline(rule_s.trim()) && msg.trim().is_empty() {
            out.push(required(
                format!("{rpath}.message"),
                "message must be specified if rule contains line breaks",
            ));
        }
        let me = s(r, "messageExpression");
        if !me.is_empty() && me.trim().is_empty() {
            out.push(required(
                format!("{rpath}.messageExpression"),
                "messageExpression must be non-empty if specified",
            ));
        }
        if let Some(reason) = r.get("reason").and_then(Value::as_str) {
            const REASONS: &[&str] = &[
                "FieldValueDuplicate",
                "FieldValueForbidden",
                "FieldValueInvalid",
                "FieldValueRequired",
            ];
            if !REASONS.contains(&reason) {
                out.push(not_supported(
                    format!("{rpath}.reason"),
                    &Value::String(reason.into()),
                    REASONS,
                ));
            }
        }
        if let Some(fp) = r.get("fieldPath").and_then(Value::as_str) {
            if fp.trim().is_empty() {
                out.push(invalid(
                    format!("{rpath}.fieldPath"),
                    &Value::String(fp.into()),
                    "must be non-empty if specified",
                ));
            } else if has_newline(fp) {
                out.push(invalid(
                    format!("{rpath}.fieldPath"),
                    &Value::String(fp.into()),
                    "must not contain line breaks",
                ));
            }
        }
    }
}
