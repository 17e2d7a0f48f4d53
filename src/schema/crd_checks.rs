//! CRD-time checks of one version's `openAPIV3Schema`, as `validateCustomResourceDefinitionValidation`
//! runs them for a new `apiextensions.k8s.io/v1` CRD: status-subresource root restrictions, the
//! structural-schema rules (`schema/validation.go`, `complete.go`), defaults (`defaulting/
//! validation.go`) and the per-node OpenAPI restrictions (`ValidateCustomResourceDefinitionOpenAPISchema`).
//!
//! The functions follow the apiserver's split (and are named after it): decoding, then
//! `validateStructuralInvariants` with `validateExtensions`, `validateValueValidation` and
//! `validateNestedValueValidation`, `validateStructuralCompleteness`, `ValidateDefaults`, and the
//! OpenAPI walk with `specStandardValidatorV3.validate` and the `x-kubernetes-*` checks.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::objectmeta;
use super::pattern::GoRegex;
use super::pruning;
use super::structural::Node;
use super::validation::{validate_value, VPath};
use super::zero::is_zero;
use crate::error::StatusCause;
use crate::machinery::gofmt::{error_value, go_quote};

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

/// `field.Invalid` with a string value (Go's `*string` and `Type` fields).
fn invalid_str(field: String, value: &str, detail: &str) -> E {
    invalid(field, &Value::String(value.into()), detail)
}

/// Required when the value is unset, Invalid (quoting it) otherwise: how the apiserver reports a
/// `type` or `x-kubernetes-list-type` that another keyword needs to be something else.
fn required_or_invalid(field: String, value: Option<&str>, detail: &str) -> E {
    match value {
        None => required(field, detail),
        Some(v) => invalid_str(field, v, detail),
    }
}

/// [`required_or_invalid`] for `type`, which is unset when empty.
fn type_must_be(path: &str, ty: &str, detail: &str) -> E {
    required_or_invalid(
        format!("{path}.type"),
        Some(ty).filter(|t| !t.is_empty()),
        detail,
    )
}

fn not_supported(field: String, value: &str, supported: &[&str]) -> E {
    let q: Vec<String> = supported.iter().map(|s| go_quote(s)).collect();
    E(StatusCause {
        reason: "FieldValueNotSupported".into(),
        message: format!(
            "Unsupported value: {}: supported values: {}",
            error_value(&Value::String(value.into())),
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

/// Whether `k` is set to something other than `null` (Go's non-nil pointer).
fn present(m: &Map<String, Value>, k: &str) -> bool {
    m.get(k).is_some_and(|v| !v.is_null())
}

/// Whether `k` is a non-empty object (Go's `len(map) != 0`).
fn non_empty_obj(m: &Map<String, Value>, k: &str) -> bool {
    obj(m, k).is_some_and(|p| !p.is_empty())
}

/// The strings of a string array (other elements skipped).
fn strs<'a>(m: &'a Map<String, Value>, k: &str) -> Vec<&'a str> {
    arr(m, k).iter().filter_map(Value::as_str).collect()
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

fn as_map(v: &Value) -> &Map<String, Value> {
    v.as_object().unwrap_or(empty())
}

/// What a `JSONSchemaProps` field decodes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Decodes {
    String,
    Number,
    Integer,
    Boolean,
    /// `[]JSON` or `[]ValidationRule`: any array.
    Array,
    /// `[]string`.
    Strings,
    /// `map[string]JSONSchemaProps`.
    SchemaMap,
    /// `JSONSchemaPropsOrArray`.
    SchemaOrArray,
    /// `[]JSONSchemaProps`.
    SchemaArray,
    /// `*JSONSchemaProps`.
    Schema,
    /// `JSONSchemaPropsOrBool`.
    SchemaOrBool,
    /// `JSONSchemaDependencies`: schemas or string arrays (not checked while decoding).
    Dependencies,
    /// `JSON` and `ExternalDocumentation`: not checked while decoding.
    Any,
}

impl Decodes {
    /// What the decoder wants where `x` does not decode (`a string`), or None.
    fn mismatch(self, x: &Value) -> Option<&'static str> {
        let (ok, what) = match self {
            Decodes::String => (x.is_string(), "a string"),
            Decodes::Number => (x.is_number(), "a number"),
            Decodes::Integer => (x.is_i64(), "an integer"),
            Decodes::Boolean => (x.is_boolean(), "a boolean"),
            Decodes::Array | Decodes::SchemaArray => (x.is_array(), "an array"),
            Decodes::Strings => (
                x.as_array().is_some_and(|a| a.iter().all(Value::is_string)),
                "an array of strings",
            ),
            Decodes::SchemaMap => (x.is_object(), "an object"),
            _ => (true, ""),
        };
        (!ok).then_some(what)
    }
}

/// One field of v1 `JSONSchemaProps`.
struct SchemaField {
    json: &'static str,
    decodes: Decodes,
    /// Allowed at the root of the schema of a CRD with the status subresource.
    status_root: bool,
}

const fn field(json: &'static str, decodes: Decodes, status_root: bool) -> SchemaField {
    SchemaField {
        json,
        decodes,
        status_root,
    }
}

/// The fields of v1 `JSONSchemaProps`, in its field order (so that the first offending field is
/// the one Go finds; any other key is one the decoder drops).
const JSON_SCHEMA_PROPS: &[SchemaField] = &[
    field("id", Decodes::String, false),
    field("$schema", Decodes::String, false),
    field("$ref", Decodes::String, false),
    field("description", Decodes::String, true),
    field("type", Decodes::String, true),
    field("nullable", Decodes::Boolean, false),
    field("format", Decodes::String, true),
    field("title", Decodes::String, true),
    field("default", Decodes::Any, false),
    field("maximum", Decodes::Number, true),
    field("exclusiveMaximum", Decodes::Boolean, true),
    field("minimum", Decodes::Number, true),
    field("exclusiveMinimum", Decodes::Boolean, true),
    field("maxLength", Decodes::Integer, true),
    field("minLength", Decodes::Integer, true),
    field("pattern", Decodes::String, true),
    field("maxItems", Decodes::Integer, true),
    field("minItems", Decodes::Integer, true),
    field("uniqueItems", Decodes::Boolean, true),
    field("multipleOf", Decodes::Number, true),
    field("enum", Decodes::Array, false),
    field("maxProperties", Decodes::Integer, false),
    field("minProperties", Decodes::Integer, false),
    field("required", Decodes::Strings, true),
    field("items", Decodes::SchemaOrArray, true),
    field("allOf", Decodes::SchemaArray, false),
    field("oneOf", Decodes::SchemaArray, false),
    field("anyOf", Decodes::SchemaArray, false),
    field("not", Decodes::Schema, false),
    field("properties", Decodes::SchemaMap, true),
    field("additionalProperties", Decodes::SchemaOrBool, false),
    field("patternProperties", Decodes::SchemaMap, false),
    field("dependencies", Decodes::Dependencies, false),
    field("additionalItems", Decodes::SchemaOrBool, false),
    field("definitions", Decodes::SchemaMap, false),
    field("externalDocs", Decodes::Any, true),
    field("example", Decodes::Any, true),
    field(
        "x-kubernetes-preserve-unknown-fields",
        Decodes::Boolean,
        true,
    ),
    field("x-kubernetes-embedded-resource", Decodes::Boolean, false),
    field("x-kubernetes-int-or-string", Decodes::Boolean, false),
    field("x-kubernetes-list-map-keys", Decodes::Strings, false),
    field("x-kubernetes-list-type", Decodes::String, false),
    field("x-kubernetes-map-type", Decodes::String, false),
    field("x-kubernetes-validations", Decodes::Array, true),
];

fn schema_field(k: &str) -> Option<&'static SchemaField> {
    JSON_SCHEMA_PROPS.iter().find(|f| f.json == k)
}

/// The schemas nested in field `p` (its path) holding `x`, with their paths; `key` renders the
/// path of a map entry (decoder paths `a.b`, field paths `a[b]`).
fn nested_schemas<'v>(
    p: &str,
    x: &'v Value,
    decodes: Decodes,
    key: fn(&str, &str) -> String,
) -> Vec<(String, &'v Value)> {
    let indexed = |a: &'v [Value]| -> Vec<(String, &'v Value)> {
        a.iter()
            .enumerate()
            .map(|(i, sub)| (format!("{p}[{i}]"), sub))
            .collect()
    };
    match (decodes, x) {
        (Decodes::SchemaMap | Decodes::Dependencies, Value::Object(o)) => {
            o.iter().map(|(n, sub)| (key(p, n), sub)).collect()
        }
        (Decodes::SchemaOrArray | Decodes::SchemaArray, Value::Array(a)) => indexed(a),
        (Decodes::SchemaOrArray | Decodes::Schema, _) => vec![(p.to_string(), x)],
        (Decodes::SchemaOrBool, _) if !x.is_boolean() => vec![(p.to_string(), x)],
        _ => Vec::new(),
    }
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
        let Some(f) = schema_field(k) else {
            out.push(p);
            continue;
        };
        let dotted = |p: &str, n: &str| format!("{p}.{n}");
        for (sub_path, sub) in nested_schemas(&p, x, f.decodes, dotted) {
            unknown_walk(sub, &sub_path, out, depth + 1);
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
    for (k, x) in m {
        let Some(f) = schema_field(k).filter(|_| !x.is_null()) else {
            continue;
        };
        let p = format!("{path}.{k}");
        if let Some(what) = f.decodes.mismatch(x) {
            out.push(invalid(p.clone(), x, &format!("must be {what}")));
        }
        if f.decodes != Decodes::Dependencies {
            for (sub_path, sub) in nested_schemas(&p, x, f.decodes, key) {
                decode_errors(sub, &sub_path, out, depth + 1);
            }
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
    let m = as_map(schema);
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
        structural_and_defaults(schema, m, path, &mut all);
    }
    let ssv = Ssv {
        allow_defaults: true,
        disallow_reason: String::new(),
        inside_meta: false,
    };
    openapi_checks(m, path, &ssv, true, &mut all, 0);
    if all.is_empty() {
        if let Some(e) = init_err {
            all.push(invalid_str(path.to_string(), "", &e));
        }
    }
    all.into_iter().map(|e| e.0).collect()
}

/// `ValidateStructural` (its errors sorted by text), then, for a structural schema,
/// `ValidateDefaults`.
fn structural_and_defaults(schema: &Value, m: &Map<String, Value>, path: &str, all: &mut Vec<E>) {
    let mut st = Vec::new();
    invariants(m, Level::Root, path, &mut st);
    completeness_value(m, Some(m), path, path, &mut st);
    st.sort_by_key(E::text);
    if !st.is_empty() {
        all.extend(st);
    } else {
        let root = Node::compile(schema);
        defaults(m, &root, path, true, false, all);
    }
}

/// With the status subresource, the root may only be an object and set the fields that still
/// apply once `properties.status` is taken out as the status schema.
fn status_root(m: &Map<String, Value>, path: &str, schema: &Value, all: &mut Vec<E>) {
    for f in JSON_SCHEMA_PROPS {
        let Some(v) = m.get(f.json).filter(|v| !is_zero(v)) else {
            continue;
        };
        if f.json == "type" {
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
        if !f.status_root {
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
    let keywords = [
        ("id", !s(m, "id").is_empty()),
        ("schema", !s(m, "$schema").is_empty()),
        ("$ref", !s(m, "$ref").is_empty()),
        ("patternProperties", non_empty_obj(m, "patternProperties")),
        ("dependencies", non_empty_obj(m, "dependencies")),
        ("additionalItems", present(m, "additionalItems")),
        ("definitions", non_empty_obj(m, "definitions")),
    ];
    if let Some((k, _)) = keywords.iter().find(|(_, set)| *set) {
        return Some(format!("OpenAPIV3Schema '{k}' is not supported"));
    }
    if m.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(false)) {
        return Some(
            "internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined"
                .into(),
        );
    }
    if m.get("items")
        .and_then(Value::as_array)
        .is_some_and(|a| !a.is_empty())
    {
        return Some("OpenAPIV3Schema 'items' must be a schema, but is an array".into());
    }
    let mut children: Vec<&Map<String, Value>> = obj(m, "items").into_iter().collect();
    children.extend(props(m).into_iter().map(|(_, p)| p));
    children.extend(
        ["additionalProperties", "not"]
            .iter()
            .filter_map(|k| obj(m, k)),
    );
    for k in ["allOf", "anyOf", "oneOf"] {
        children.extend(arr(m, k).iter().filter_map(Value::as_object));
    }
    children.into_iter().find_map(|c| unsupported(c, depth + 1))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Root,
    Item,
    Field,
}

fn has_additional(m: &Map<String, Value>) -> bool {
    present(m, "additionalProperties")
}

fn is_int_or_string_any_of(any_of: &[Value]) -> bool {
    any_of.len() == 2
        && ["integer", "string"].iter().zip(any_of).all(|(t, x)| {
            x.as_object().is_some_and(|o| {
                o.len() == 1 && o.get("type") == Some(&Value::String(t.to_string()))
            })
        })
}

/// `validateStructuralInvariants`: the structural rules of one node, and of the nodes below it.
fn invariants(m: &Map<String, Value>, lvl: Level, path: &str, out: &mut Vec<E>) {
    if s(m, "type") == "array" && obj(m, "items").is_none() {
        out.push(required(format!("{path}.items"), "must be specified"));
    }
    if let Some(i) = obj(m, "items") {
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
            let apath = format!("{path}.additionalProperties");
            invariants(a, Level::Field, &apath, out);
        }
    }
    validate_extensions(m, path, out);
    let skip_any_of = is_int_or_string_any_of(arr(m, "anyOf"));
    let skip_first = arr(m, "allOf")
        .first()
        .and_then(Value::as_object)
        .is_some_and(|o| is_int_or_string_any_of(arr(o, "anyOf")));
    value_validation(m, skip_any_of, skip_first, path, out);
    type_invariants(m, lvl, path, out);
    metadata_invariants(m, lvl, path, out);
}

/// `validateExtensions`: int-or-string excludes preserve-unknown-fields and embedded resources.
fn validate_extensions(m: &Map<String, Value>, path: &str, out: &mut Vec<E>) {
    if !b(m, "x-kubernetes-int-or-string") {
        return;
    }
    for k in [
        "x-kubernetes-preserve-unknown-fields",
        "x-kubernetes-embedded-resource",
    ] {
        if b(m, k) {
            out.push(invalid(
                format!("{path}.{k}"),
                &Value::Bool(true),
                "must be false if x-kubernetes-int-or-string is true",
            ));
        }
    }
}

/// The rules on `type`: set everywhere (unless int-or-string or preserving unknown fields), an
/// object at the root and for embedded resources, whose `additionalProperties` are forbidden.
fn type_invariants(m: &Map<String, Value>, lvl: Level, path: &str, out: &mut Vec<E>) {
    let ty = s(m, "type");
    let embedded = b(m, "x-kubernetes-embedded-resource");
    if embedded && ty != "object" {
        out.push(type_must_be(
            path,
            ty,
            "must be object if x-kubernetes-embedded-resource is true",
        ));
    } else if ty.is_empty()
        && !b(m, "x-kubernetes-int-or-string")
        && !b(m, "x-kubernetes-preserve-unknown-fields")
    {
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
        out.push(invalid_str(
            format!("{path}.type"),
            ty,
            "must be object at the root",
        ));
    }
}

/// The rules on apiVersion, kind and metadata of the root and of embedded resources
/// (`validateStructuralMetadataInvariants` for `metadata`), and the properties an embedded
/// resource that does not preserve unknown fields must declare.
fn metadata_invariants(m: &Map<String, Value>, lvl: Level, path: &str, out: &mut Vec<E>) {
    let embedded = b(m, "x-kubernetes-embedded-resource");
    let check_meta = lvl == Level::Root || embedded;
    let properties = obj(m, "properties");
    let ppath = format!("{path}.properties");
    for f in ["kind", "apiVersion"] {
        if let Some(p) = properties.and_then(|p| p.get(f)).filter(|_| check_meta) {
            let t = s(as_map(p), "type");
            if t != "string" {
                out.push(invalid_str(
                    format!("{}.type", key(&ppath, f)),
                    t,
                    "must be string",
                ));
            }
        }
    }
    if let Some(meta) = properties.and_then(|p| p.get("metadata")) {
        let mm = as_map(meta);
        let mpath = key(&ppath, "metadata");
        let mt = s(mm, "type");
        if check_meta && mt != "object" {
            out.push(invalid_str(format!("{mpath}.type"), mt, "must be object"));
        }
        if lvl == Level::Root && !metadata_only_names(mm) {
            out.push(forbidden(
                mpath,
                "must not specify anything other than name and generateName, but metadata is implicitly specified",
            ));
        }
    }
    if embedded
        && !b(m, "x-kubernetes-preserve-unknown-fields")
        && properties.is_none_or(Map::is_empty)
    {
        out.push(required(
            format!("{path}.properties"),
            "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
        ));
    }
}

/// Root `metadata` may restrict only `name` and `generateName` (everything else must be zero).
fn metadata_only_names(m: &Map<String, Value>) -> bool {
    m.iter().all(|(k, v)| match k.as_str() {
        "type" | "default" => true,
        "properties" => v
            .as_object()
            .is_none_or(|p| p.is_empty() || p.keys().all(|n| n == "name" || n == "generateName")),
        "required" | "x-kubernetes-list-map-keys" => v.is_null(),
        _ => is_zero(v),
    })
}

/// `validateValueValidation`: the junctors' schemas must be nested value validations (the
/// int-or-string `anyOf` excepted), and `pattern` must compile.
fn value_validation(
    m: &Map<String, Value>,
    skip_any_of: bool,
    skip_first_all_of_any_of: bool,
    path: &str,
    out: &mut Vec<E>,
) {
    let junctors = [
        ("anyOf", skip_any_of, false),
        ("allOf", false, skip_first_all_of_any_of),
        ("oneOf", false, false),
    ];
    for (j, skip_all, skip_first) in junctors {
        if skip_all {
            continue;
        }
        for (i, x) in arr(m, j).iter().enumerate() {
            let skip = skip_first && i == 0;
            nested(as_map(x), skip, &format!("{path}.{j}[{i}]"), out);
        }
    }
    if let Some(n) = obj(m, "not") {
        nested(n, false, &format!("{path}.not"), out);
    }
    let pattern = s(m, "pattern");
    if !pattern.is_empty() {
        if let Err(e) = &GoRegex::new(pattern).compiled {
            out.push(invalid_str(
                format!("{path}.pattern"),
                pattern,
                &format!("must be a valid regular expression, but isn't: {e}"),
            ));
        }
    }
}

/// `validateNestedValueValidation`: below a junctor only value validations may be set.
fn nested(m: &Map<String, Value>, skip_any_of: bool, path: &str, out: &mut Vec<E>) {
    value_validation(m, skip_any_of, false, path, out);
    if let Some(i) = obj(m, "items") {
        nested(i, false, &format!("{path}.items"), out);
    }
    for (k, p) in props(m) {
        nested(p, false, &key(&format!("{path}.properties"), k), out);
    }
    forbidden_generics(m, path, out);
    forbidden_extensions(m, path, out);
    if obj(m, "properties").is_some_and(|p| p.contains_key("metadata")) {
        out.push(forbidden(
            key(&format!("{path}.properties"), "metadata"),
            "must not be specified in a nested context",
        ));
    }
}

/// Pushes `forbidden(<path>.<k>, detail)` for each `(k, set, detail)` that is set.
fn forbid_set(path: &str, checks: &[(&str, bool, &str)], out: &mut Vec<E>) {
    for (k, set, detail) in checks {
        if *set {
            out.push(forbidden(format!("{path}.{k}"), detail));
        }
    }
}

/// `ForbiddenGenerics` of a nested value validation: what is not a value validation.
fn forbidden_generics(m: &Map<String, Value>, path: &str, out: &mut Vec<E>) {
    let additional = matches!(
        m.get("additionalProperties"),
        Some(Value::Bool(true) | Value::Object(_))
    );
    forbid_set(
        path,
        &[
            (
                "type",
                !s(m, "type").is_empty(),
                "must be empty to be structural",
            ),
            (
                "additionalProperties",
                additional,
                "must be undefined to be structural",
            ),
            (
                "default",
                present(m, "default"),
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
        ],
        out,
    );
}

/// `ForbiddenExtensions` of a nested value validation: the `x-kubernetes-*` keywords.
fn forbidden_extensions(m: &Map<String, Value>, path: &str, out: &mut Vec<E>) {
    let is_str = |k: &str| m.get(k).is_some_and(Value::is_string);
    let must_be_false = "must be false to be structural";
    forbid_set(
        path,
        &[
            (
                "x-kubernetes-preserve-unknown-fields",
                b(m, "x-kubernetes-preserve-unknown-fields"),
                must_be_false,
            ),
            (
                "x-kubernetes-embedded-resource",
                b(m, "x-kubernetes-embedded-resource"),
                must_be_false,
            ),
            (
                "x-kubernetes-int-or-string",
                b(m, "x-kubernetes-int-or-string"),
                must_be_false,
            ),
            (
                "x-kubernetes-list-map-keys",
                !arr(m, "x-kubernetes-list-map-keys").is_empty(),
                "must be empty to be structural",
            ),
            (
                "x-kubernetes-list-type",
                is_str("x-kubernetes-list-type"),
                "must be undefined to be structural",
            ),
            (
                "x-kubernetes-map-type",
                is_str("x-kubernetes-map-type"),
                "must be undefined to be structural",
            ),
            (
                "x-kubernetes-validations",
                !arr(m, "x-kubernetes-validations").is_empty(),
                "must be empty to be structural",
            ),
        ],
        out,
    );
}

/// `validateStructuralCompleteness` of a value validation: what its junctors specify.
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
            let jpath = format!("{v_path}.{j}[{i}]");
            completeness_nested(as_map(x), s_node, s_path, &jpath, out);
        }
    }
}

/// Every field and item a nested value validation specifies must be specified by the
/// structural schema too.
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
            Some(sf) => completeness_nested(p, Some(as_map(sf)), &sp, &vp, out),
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
    let inside_meta = inside_meta && !embedded;
    if let Some(d) = m.get("default").filter(|d| !d.is_null()) {
        let dpath = format!("{path}.default");
        if inside_meta {
            out.extend(validate_value(n, d, None, Some(&dpath)).into_iter().map(E));
        } else {
            default_errors(d, n, &dpath, out);
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
        let ppath = key(&format!("{path}.properties"), k);
        defaults(p, pn, &ppath, false, sub_inside, out);
    }
}

/// The errors of default `d` at `dpath` (outside resource metadata): unknown fields, then the
/// first type-meta error of an embedded resource, or else its ObjectMeta errors, or else its
/// schema errors.
fn default_errors(d: &Value, n: &Node, dpath: &str, out: &mut Vec<E>) {
    let mut pruned = d.clone();
    let mut t = pruning::Tracker::default();
    pruning::prune(&mut pruned, n, n.embedded_resource, &mut t);
    if &pruned != d {
        out.push(invalid(
            dpath.to_string(),
            d,
            "must not have unknown fields",
        ));
    }
    if let Some(e) = embedded_type_meta_error(d, n, dpath) {
        out.push(e);
        return;
    }
    let mut obj_errs = Vec::new();
    objectmeta::validate(d, Some(n), &VPath::root(), &mut obj_errs);
    if !obj_errs.is_empty() {
        out.extend(obj_errs.into_iter().map(|mut c| {
            c.field = if c.field.is_empty() {
                dpath.to_string()
            } else {
                format!("{dpath}.{}", c.field)
            };
            E(c)
        }));
    } else {
        out.extend(validate_value(n, d, None, Some(dpath)).into_iter().map(E));
    }
}

/// The first error decoding the default of an embedded resource: apiVersion and kind must be
/// strings, metadata must decode into ObjectMeta.
fn embedded_type_meta_error(d: &Value, n: &Node, dpath: &str) -> Option<E> {
    let dm = d.as_object().filter(|_| n.embedded_resource)?;
    for f in ["apiVersion", "kind"] {
        if let Some(v) = dm.get(f).filter(|v| !v.is_string()) {
            return Some(invalid(format!("{dpath}.{f}"), v, "must be a string"));
        }
    }
    let meta = dm.get("metadata")?;
    let e = objectmeta::check_object_meta(meta).err()?;
    Some(invalid(format!("{dpath}.metadata"), meta, &e.to_string()))
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

/// `specStandardValidatorV3.validate`: the OpenAPI v3 keywords CRDs do not support.
fn ssv_validate(m: &Map<String, Value>, path: &str, ssv: &Ssv, out: &mut Vec<E>) {
    let ty = s(m, "type");
    if !ty.is_empty() && !OPENAPI_TYPES.contains(&ty) {
        out.push(not_supported(format!("{path}.type"), ty, OPENAPI_TYPES));
    }
    if m.contains_key("default") && !ssv.allow_defaults {
        let mut detail = "must not be set".to_string();
        if !ssv.disallow_reason.is_empty() {
            detail.push(' ');
            detail.push_str(&ssv.disallow_reason);
        }
        out.push(forbidden(format!("{path}.default"), &detail));
    }
    let keywords = [
        ("id", !s(m, "id").is_empty()),
        ("additionalItems", present(m, "additionalItems")),
        ("patternProperties", non_empty_obj(m, "patternProperties")),
        ("definitions", non_empty_obj(m, "definitions")),
        ("dependencies", present(m, "dependencies")),
        ("$ref", present(m, "$ref")),
    ];
    for (k, set) in keywords {
        if set {
            out.push(forbidden(
                format!("{path}.{k}"),
                &format!("{k} is not supported"),
            ));
        }
    }
    forbid_set(
        path,
        &[
            (
                "type",
                ty == "null",
                "type cannot be set to null, use nullable as an alternative",
            ),
            (
                "items",
                !arr(m, "items").is_empty(),
                "items must be a schema object and not an array",
            ),
            (
                "x-kubernetes-embedded-resource",
                ssv.inside_meta && b(m, "x-kubernetes-embedded-resource"),
                "must not be used inside of resource meta",
            ),
        ],
        out,
    );
}

/// `ValidateCustomResourceDefinitionOpenAPISchema`: the per-node restrictions, depth first.
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
    additional_properties_checks(m, path, ssv, out, depth);
    let embedded = b(m, "x-kubernetes-embedded-resource");
    for (k, p) in props(m) {
        let mut sub = ssv.clone();
        if (is_root || embedded) && matches!(k.as_str(), "metadata" | "kind" | "apiVersion") {
            sub.inside_meta = true;
            if is_root {
                sub = sub.forbid_defaults(&format!("in top-level {k}"));
            }
        }
        let ppath = key(&format!("{path}.properties"), k);
        openapi_checks(p, &ppath, &sub, false, out, depth + 1);
    }
    for (sub_path, sub) in other_schemas(m, path) {
        openapi_checks(sub, &sub_path, ssv, false, out, depth + 1);
    }
    extension_checks(m, path, out);
}

/// `additionalProperties` (with `properties` only as `true`), and its schema, where defaults
/// are forbidden inside resource metadata.
fn additional_properties_checks(
    m: &Map<String, Value>,
    path: &str,
    ssv: &Ssv,
    out: &mut Vec<E>,
    depth: usize,
) {
    let Some(add) = m.get("additionalProperties").filter(|v| !v.is_null()) else {
        return;
    };
    let apath = format!("{path}.additionalProperties");
    if non_empty_obj(m, "properties") && add != &Value::Bool(true) {
        out.push(forbidden(
            apath.clone(),
            "additionalProperties and properties are mutual exclusive",
        ));
    }
    if let Some(a) = add.as_object() {
        let sub = if ssv.inside_meta {
            ssv.forbid_defaults("inside additionalProperties applying to object metadata")
        } else {
            ssv.clone()
        };
        openapi_checks(a, &apath, &sub, false, out, depth + 1);
    }
}

/// The schemas of `not`, the junctors, `definitions`, `items` and `dependencies`, in the order
/// the apiserver visits them, with their paths.
fn other_schemas<'m>(
    m: &'m Map<String, Value>,
    path: &str,
) -> Vec<(String, &'m Map<String, Value>)> {
    let mut out: Vec<(String, &Map<String, Value>)> = Vec::new();
    let keyed = |k: &str, out: &mut Vec<(String, &'m Map<String, Value>)>| {
        for (n, x) in obj(m, k).into_iter().flatten() {
            if let Some(o) = x.as_object() {
                out.push((key(&format!("{path}.{k}"), n), o));
            }
        }
    };
    let indexed = |k: &str, out: &mut Vec<(String, &'m Map<String, Value>)>| {
        for (i, x) in arr(m, k).iter().enumerate() {
            if let Some(o) = x.as_object() {
                out.push((format!("{path}.{k}[{i}]"), o));
            }
        }
    };
    if let Some(n) = obj(m, "not") {
        out.push((format!("{path}.not"), n));
    }
    for j in ["allOf", "oneOf", "anyOf"] {
        indexed(j, &mut out);
    }
    keyed("definitions", &mut out);
    match obj(m, "items") {
        Some(i) => out.push((format!("{path}.items"), i)),
        None => indexed("items", &mut out),
    }
    keyed("dependencies", &mut out);
    out
}

/// The `x-kubernetes-*` checks of one node.
fn extension_checks(m: &Map<String, Value>, path: &str, out: &mut Vec<E>) {
    if m.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(false)) {
        out.push(invalid(
            format!("{path}.x-kubernetes-preserve-unknown-fields"),
            &Value::Bool(false),
            "must be true or undefined",
        ));
    }
    map_type_checks(m, path, out);
    list_type_checks(m, path, out);
    list_map_keys_checks(m, path, out);
    map_list_keys_map_set(m, path, out);
    for (i, rule) in arr(m, "x-kubernetes-validations").iter().enumerate() {
        let rpath = format!("{path}.x-kubernetes-validations[{i}]");
        validation_rule_checks(as_map(rule), &rpath, out);
    }
}

/// The value of string extension `ext`, if set, after checking that the node's `type` is `want`
/// (`must be <want> if <ext> is specified`); with whether it is.
fn typed_extension<'m>(
    m: &'m Map<String, Value>,
    ext: &str,
    want: &str,
    path: &str,
    out: &mut Vec<E>,
) -> Option<(&'m str, bool)> {
    let value = m.get(ext).and_then(Value::as_str)?;
    let ty = s(m, "type");
    let type_ok = ty == want;
    if !type_ok {
        let detail = format!("must be {want} if {ext} is specified");
        out.push(type_must_be(path, ty, &detail));
    }
    Some((value, type_ok))
}

/// `x-kubernetes-map-type`: `atomic` or `granular`, on an object.
fn map_type_checks(m: &Map<String, Value>, path: &str, out: &mut Vec<E>) {
    let ext = "x-kubernetes-map-type";
    let Some((mt, _)) = typed_extension(m, ext, "object", path, out) else {
        return;
    };
    if mt != "atomic" && mt != "granular" {
        let supported = ["atomic", "granular"];
        out.push(not_supported(format!("{path}.{ext}"), mt, &supported));
    }
}

/// `x-kubernetes-list-type`: `atomic`, `set` or `map`, on an array; the items of a set must be
/// atomic.
fn list_type_checks(m: &Map<String, Value>, path: &str, out: &mut Vec<E>) {
    let ext = "x-kubernetes-list-type";
    let Some((lt, type_ok)) = typed_extension(m, ext, "array", path, out) else {
        return;
    };
    if let Some(is) = obj(m, "items").filter(|_| type_ok && lt == "set") {
        set_items_checks(is, path, out);
    }
    if !matches!(lt, "atomic" | "set" | "map") {
        let supported = ["atomic", "set", "map"];
        out.push(not_supported(format!("{path}.{ext}"), lt, &supported));
    }
}

/// The items of a `set` list must be atomic lists or maps.
fn set_items_checks(is: &Map<String, Value>, path: &str, out: &mut Vec<E>) {
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

/// `x-kubernetes-list-map-keys` and `x-kubernetes-list-type: map` need each other, and a map
/// list a single object item schema whose key properties exist, are scalars and are unique.
fn list_map_keys_checks(m: &Map<String, Value>, path: &str, out: &mut Vec<E>) {
    let list_type = m.get("x-kubernetes-list-type").and_then(Value::as_str);
    let keys = strs(m, "x-kubernetes-list-map-keys");
    if !keys.is_empty() && list_type != Some("map") {
        out.push(required_or_invalid(
            format!("{path}.x-kubernetes-list-type"),
            list_type,
            "must be map if x-kubernetes-list-map-keys is non-empty",
        ));
    }
    if list_type != Some("map") {
        return;
    }
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
        Some(items @ Value::Array(_)) => out.push(invalid(
            format!("{path}.items"),
            items,
            "must only have a single schema if x-kubernetes-list-type is map",
        )),
        _ => {}
    }
    if let Some(is) = obj(m, "items") {
        map_items_checks(is, &keys, path, out);
    }
}

/// The item schema of a map list: an object whose key properties exist, are scalars and are
/// named once.
fn map_items_checks(is: &Map<String, Value>, keys: &[&str], path: &str, out: &mut Vec<E>) {
    let it = s(is, "type");
    if it != "object" {
        out.push(invalid_str(
            format!("{path}.items.type"),
            it,
            "must be object if parent array's x-kubernetes-list-type is map",
        ));
        return;
    }
    let keys_value = Value::Array(keys.iter().map(|k| Value::String(k.to_string())).collect());
    let keys_path = format!("{path}.x-kubernetes-list-map-keys");
    let mut seen = BTreeSet::new();
    for k in keys {
        match obj(is, "properties").and_then(|p| p.get(*k)) {
            Some(kp) => {
                let kt = s(as_map(kp), "type");
                if kt == "array" || kt == "object" {
                    out.push(invalid_str(
                        format!("{}.type", key(&format!("{path}.items.properties"), k)),
                        it,
                        "must be a scalar type if parent array's x-kubernetes-list-type is map",
                    ));
                }
            }
            None => out.push(invalid(
                keys_path.clone(),
                &keys_value,
                "entries must all be names of item properties",
            )),
        }
        if !seen.insert(*k) {
            out.push(invalid(
                keys_path.clone(),
                &keys_value,
                "must not contain duplicate entries",
            ));
        }
    }
}

/// `validateMapListKeysMapSet`: set and map items are not nullable, and the keys of a map list
/// are required or defaulted, and not nullable.
fn map_list_keys_map_set(m: &Map<String, Value>, path: &str, out: &mut Vec<E>) {
    let list_type = m.get("x-kubernetes-list-type").and_then(Value::as_str);
    let (Some(lt @ ("set" | "map")), Some(is)) = (list_type, obj(m, "items")) else {
        return;
    };
    if b(is, "nullable") {
        out.push(forbidden(
            format!("{path}.items.nullable"),
            &format!("cannot be nullable when x-kubernetes-list-type is {lt}"),
        ));
    }
    if lt != "map" {
        return;
    }
    let req = strs(is, "required");
    for k in strs(m, "x-kubernetes-list-map-keys") {
        let Some(kp) = obj(is, "properties")
            .and_then(|p| p.get(k))
            .and_then(Value::as_object)
        else {
            continue;
        };
        let kpath = key(&format!("{path}.items.properties"), k);
        if !req.contains(&k) && !present(kp, "default") {
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

/// The shape of one `x-kubernetes-validations` rule (the rule itself is not compiled).
fn validation_rule_checks(r: &Map<String, Value>, rpath: &str, out: &mut Vec<E>) {
    let rule = s(r, "rule");
    let msg = s(r, "message");
    let has_newline = |x: &str| x.contains('\n') || x.contains('\r');
    if rule.trim().is_empty() {
        out.push(required(format!("{rpath}.rule"), "rule is not specified"));
    } else if !msg.is_empty() && msg.trim().is_empty() {
        out.push(invalid_str(
            format!("{rpath}.message"),
            msg,
            "must be non-empty if specified",
        ));
    } else if has_newline(msg.trim()) {
        out.push(invalid_str(
            format!("{rpath}.message"),
            msg,
            "must not contain line breaks",
        ));
    } else if has_newline(rule.trim()) && msg.trim().is_empty() {
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
            out.push(not_supported(format!("{rpath}.reason"), reason, REASONS));
        }
    }
    if let Some(fp) = r.get("fieldPath").and_then(Value::as_str) {
        let detail = if fp.trim().is_empty() {
            "must be non-empty if specified"
        } else if has_newline(fp) {
            "must not contain line breaks"
        } else {
            return;
        };
        out.push(invalid_str(format!("{rpath}.fieldPath"), fp, detail));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn texts(out: Vec<E>) -> Vec<String> {
        out.iter().map(E::text).collect()
    }

    #[test]
    fn decoding_kinds() {
        let cases = [
            ("type", json!(5), Some("a string")),
            ("maximum", json!("1"), Some("a number")),
            ("maxLength", json!(1.5), Some("an integer")),
            ("nullable", json!(0), Some("a boolean")),
            ("enum", json!({}), Some("an array")),
            ("allOf", json!({}), Some("an array")),
            ("required", json!(["a", 1]), Some("an array of strings")),
            ("properties", json!([]), Some("an object")),
            ("items", json!(5), None),
            ("default", json!(5), None),
            ("dependencies", json!(5), None),
            ("required", json!(["a"]), None),
        ];
        for (k, x, want) in cases {
            let f = schema_field(k).map(|f| f.decodes);
            assert_eq!(f.and_then(|d| d.mismatch(&x)), want, "{k} {x}");
        }
        assert!(schema_field("readOnly").is_none());
        let root: Vec<&str> = JSON_SCHEMA_PROPS
            .iter()
            .filter(|f| f.status_root)
            .map(|f| f.json)
            .collect();
        assert_eq!(root.len(), 22);
    }

    #[test]
    fn nested_schema_paths() {
        let dotted = |p: &str, n: &str| format!("{p}.{n}");
        let cases = [
            (
                Decodes::SchemaMap,
                json!({"a": {}, "b": 1}),
                key as fn(&str, &str) -> String,
                vec!["p[a]", "p[b]"],
            ),
            (
                Decodes::Dependencies,
                json!({"a": ["x"]}),
                dotted,
                vec!["p.a"],
            ),
            (
                Decodes::SchemaOrArray,
                json!([{}, {}]),
                key,
                vec!["p[0]", "p[1]"],
            ),
            (Decodes::SchemaOrArray, json!({}), key, vec!["p"]),
            (Decodes::SchemaArray, json!({}), key, vec![]),
            (Decodes::Schema, json!(1), key, vec!["p"]),
            (Decodes::SchemaOrBool, json!(true), key, vec![]),
            (Decodes::SchemaOrBool, json!({}), key, vec!["p"]),
            (Decodes::String, json!({}), key, vec![]),
        ];
        for (decodes, x, key, want) in cases {
            let got: Vec<String> = nested_schemas("p", &x, decodes, key)
                .into_iter()
                .map(|(p, _)| p)
                .collect();
            assert_eq!(got, want, "{decodes:?} {x}");
        }
    }

    #[test]
    fn unsupported_keywords_first_error() {
        let cases = [
            (json!({"type": "object"}), None),
            (json!({"$schema": "x", "id": "y"}), Some("OpenAPIV3Schema 'id' is not supported")),
            (json!({"$schema": "x"}), Some("OpenAPIV3Schema 'schema' is not supported")),
            (json!({"dependencies": {}}), None),
            (json!({"additionalItems": false}), Some("OpenAPIV3Schema 'additionalItems' is not supported")),
            (json!({"items": [{}]}), Some("OpenAPIV3Schema 'items' must be a schema, but is an array")),
            (json!({"properties": {"a": {"x-kubernetes-preserve-unknown-fields": false}}}),
             Some("internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined")),
            (json!({"anyOf": [{"not": {"$ref": "#"}}]}), Some("OpenAPIV3Schema '$ref' is not supported")),
        ];
        for (m, want) in cases {
            assert_eq!(unsupported(as_map(&m), 0).as_deref(), want, "{m}");
        }
    }

    #[test]
    fn required_or_invalid_by_presence() {
        let cases = [
            (
                type_must_be("p", "", "must be x"),
                "p.type: Required value: must be x",
            ),
            (
                type_must_be("p", "string", "must be x"),
                "p.type: Invalid value: \"string\": must be x",
            ),
            (
                required_or_invalid("p.l".into(), Some(""), "d"),
                "p.l: Invalid value: \"\": d",
            ),
            (
                required_or_invalid("p.l".into(), None, "d"),
                "p.l: Required value: d",
            ),
        ];
        for (e, want) in cases {
            assert_eq!(e.text(), want);
        }
    }

    #[test]
    fn validation_rule_shapes() {
        let p = "r";
        let cases = [
            (json!({"rule": "self.a"}), vec![]),
            (json!({"rule": " "}), vec!["r.rule: Required value: rule is not specified"]),
            (json!({"rule": "a", "message": " "}), vec!["r.message: Invalid value: \" \": must be non-empty if specified"]),
            (json!({"rule": "a", "message": "x\ny"}), vec!["r.message: Invalid value: \"x\\ny\": must not contain line breaks"]),
            (json!({"rule": "a\nb"}), vec!["r.message: Required value: message must be specified if rule contains line breaks"]),
            (json!({"rule": "a", "messageExpression": " "}), vec!["r.messageExpression: Required value: messageExpression must be non-empty if specified"]),
            (json!({"rule": "a", "reason": "Nope"}), vec!["r.reason: Unsupported value: \"Nope\": supported values: \"FieldValueDuplicate\", \"FieldValueForbidden\", \"FieldValueInvalid\", \"FieldValueRequired\""]),
            (json!({"rule": "a", "fieldPath": ""}), vec!["r.fieldPath: Invalid value: \"\": must be non-empty if specified"]),
            (json!({"rule": "a", "fieldPath": ".a\n"}), vec!["r.fieldPath: Invalid value: \".a\\n\": must not contain line breaks"]),
        ];
        for (rule, want) in cases {
            let mut out = Vec::new();
            validation_rule_checks(as_map(&rule), p, &mut out);
            assert_eq!(texts(out), want, "{rule}");
        }
    }

    #[test]
    fn map_list_items() {
        let cases = [
            (json!({"type": "object", "properties": {"k": {"type": "string"}}}), vec!["k"], vec![]),
            (json!({"type": "string"}), vec!["k"],
             vec!["p.items.type: Invalid value: \"string\": must be object if parent array's x-kubernetes-list-type is map"]),
            (json!({"type": "object", "properties": {"k": {"type": "object"}}}), vec!["k", "k"],
             vec!["p.items.properties[k].type: Invalid value: \"object\": must be a scalar type if parent array's x-kubernetes-list-type is map",
                  "p.items.properties[k].type: Invalid value: \"object\": must be a scalar type if parent array's x-kubernetes-list-type is map",
                  "p.x-kubernetes-list-map-keys: Invalid value: [\"k\",\"k\"]: must not contain duplicate entries"]),
            (json!({"type": "object"}), vec!["z"],
             vec!["p.x-kubernetes-list-map-keys: Invalid value: [\"z\"]: entries must all be names of item properties"]),
        ];
        for (items, keys, want) in cases {
            let mut out = Vec::new();
            map_items_checks(as_map(&items), &keys, "p", &mut out);
            assert_eq!(texts(out), want, "{items}");
        }
    }
}
