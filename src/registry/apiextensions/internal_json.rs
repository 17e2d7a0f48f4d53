//! A CRD's `spec.versions` as the apiserver quotes it in a validation error: its internal
//! type (`apiextensions.CustomResourceDefinitionVersion`), written by encoding/json, which 1.36's
//! `field.Invalid` uses for values that are neither strings nor numbers. The internal types have
//! no JSON tags: every field appears under its Go name, in the struct's order, nil as `null`.
//! Converted from v1, the per-version schema, subresources, printer columns and selectable
//! fields are moved to the spec (so `null` here) when every version has the same.

use serde_json::Value;

use super::types::{ScaleSubresource, Subresources, Version};
use crate::machinery::gofmt::{go_json, go_quote};

/// `spec.versions` in the internal form, as JSON text.
pub fn versions(versions: &[Version]) -> String {
    let first = versions.first();
    let same = |differs: &dyn Fn(&Version, &Version) -> bool| {
        first.is_none_or(|f| versions.iter().all(|v| !differs(v, f)))
    };
    let schemas = same(&|v, f| v.schema != f.schema);
    let subresources = same(&|v, f| v.subresources != f.subresources);
    let columns = same(&|v, f| v.additional_printer_columns != f.additional_printer_columns);
    let selectable = same(&|v, f| v.selectable_fields != f.selectable_fields);
    let items: Vec<String> = versions
        .iter()
        .map(|v| {
            let mut o = Obj::new();
            o.raw("Name", go_quote(&v.name));
            o.raw("Served", v.served.to_string());
            o.raw("Storage", v.storage.to_string());
            o.raw("Deprecated", v.deprecated.to_string());
            o.raw(
                "DeprecationWarning",
                v.deprecation_warning.as_deref().map_or_else(null, go_quote),
            );
            let schema = v.schema.as_ref().filter(|_| !schemas);
            o.raw("Schema", schema.map_or_else(null, validation));
            let subs = v.subresources.as_ref().filter(|_| !subresources);
            o.raw("Subresources", subs.map_or_else(null, subresources_json));
            let cols = (!columns).then_some(&v.additional_printer_columns);
            o.raw("AdditionalPrinterColumns", list(cols, column));
            let fields = (!selectable).then_some(&v.selectable_fields);
            o.raw("SelectableFields", list(fields, selectable_field));
            o.end()
        })
        .collect();
    format!("[{}]", items.join(","))
}

fn null() -> String {
    "null".into()
}

/// A struct's fields in order.
struct Obj(String);

impl Obj {
    fn new() -> Obj {
        Obj(String::from("{"))
    }

    fn raw(&mut self, name: &str, value: String) {
        if self.0.len() > 1 {
            self.0.push(',');
        }
        self.0.push_str(&format!("\"{name}\":{value}"));
    }

    fn end(mut self) -> String {
        self.0.push('}');
        self.0
    }
}

/// A slice: `null` when nil (absent or empty in v1, which encoding/json cannot tell apart here).
fn list(items: Option<&Vec<Value>>, each: fn(&Value) -> String) -> String {
    match items {
        Some(items) if !items.is_empty() => {
            let parts: Vec<String> = items.iter().map(each).collect();
            format!("[{}]", parts.join(","))
        }
        _ => null(),
    }
}

fn text(v: &Value, key: &str) -> String {
    go_quote(v[key].as_str().unwrap_or(""))
}

fn optional_text(v: &Value, key: &str) -> String {
    v[key].as_str().map_or_else(null, go_quote)
}

fn column(c: &Value) -> String {
    let mut o = Obj::new();
    for (name, key) in [
        ("Name", "name"),
        ("Type", "type"),
        ("Format", "format"),
        ("Description", "description"),
    ] {
        o.raw(name, text(c, key));
    }
    o.raw("Priority", c["priority"].as_i64().unwrap_or(0).to_string());
    o.raw("JSONPath", text(c, "jsonPath"));
    o.end()
}

fn selectable_field(f: &Value) -> String {
    let mut o = Obj::new();
    o.raw("JSONPath", text(f, "jsonPath"));
    o.end()
}

fn subresources_json(s: &Subresources) -> String {
    let mut o = Obj::new();
    o.raw(
        "Status",
        s.status.as_ref().map_or_else(null, |_| "{}".into()),
    );
    o.raw("Scale", s.scale.as_ref().map_or_else(null, scale));
    o.end()
}

fn scale(s: &ScaleSubresource) -> String {
    let mut o = Obj::new();
    o.raw("SpecReplicasPath", go_quote(&s.spec_replicas_path));
    o.raw("StatusReplicasPath", go_quote(&s.status_replicas_path));
    o.raw(
        "LabelSelectorPath",
        s.label_selector_path.as_deref().map_or_else(null, go_quote),
    );
    o.end()
}

/// `CustomResourceValidation`.
fn validation(v: &Value) -> String {
    let mut o = Obj::new();
    let root = v.get("openAPIV3Schema").filter(|s| !s.is_null());
    o.raw("OpenAPIV3Schema", root.map_or_else(null, props));
    o.end()
}

/// A JSON value held by the internal `JSON` type (decoded into `interface{}`, written back).
fn any(v: Option<&Value>) -> String {
    v.filter(|v| !v.is_null()).map_or_else(null, go_json)
}

/// A `*float64` or `*int64` as encoding/json writes it: an integral float without a fraction.
fn number(v: &Value, key: &str) -> String {
    match &v[key] {
        Value::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() && f.fract() == 0.0 && f.abs() < 1e21 => format!("{f:.0}"),
            _ => n.to_string(),
        },
        _ => null(),
    }
}

fn flag(v: &Value, key: &str) -> String {
    v[key].as_bool().unwrap_or(false).to_string()
}

fn strings(v: &Value, key: &str) -> String {
    match v[key].as_array() {
        Some(items) => {
            let parts: Vec<String> = items
                .iter()
                .map(|s| go_quote(s.as_str().unwrap_or("")))
                .collect();
            format!("[{}]", parts.join(","))
        }
        None => null(),
    }
}

fn props_list(v: &Value, key: &str) -> String {
    match v[key].as_array() {
        Some(items) => {
            let parts: Vec<String> = items.iter().map(props).collect();
            format!("[{}]", parts.join(","))
        }
        None => null(),
    }
}

/// A map of schemas, its keys sorted (as encoding/json writes maps).
fn props_map(v: &Value, key: &str, each: fn(&Value) -> String) -> String {
    match v[key].as_object() {
        Some(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let parts: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{}:{}", go_quote(k), each(&map[k])))
                .collect();
            format!("{{{}}}", parts.join(","))
        }
        None => null(),
    }
}

/// `JSONSchemaPropsOrBool`: a boolean, or a schema (which allows).
fn props_or_bool(v: &Value) -> String {
    let mut o = Obj::new();
    match v {
        Value::Bool(b) => {
            o.raw("Allows", b.to_string());
            o.raw("Schema", null());
        }
        schema => {
            o.raw("Allows", "true".into());
            o.raw("Schema", props(schema));
        }
    }
    o.end()
}

/// `JSONSchemaPropsOrArray`: one schema, or a list.
fn props_or_array(v: &Value) -> String {
    let mut o = Obj::new();
    match v {
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(props).collect();
            o.raw("Schema", null());
            o.raw("JSONSchemas", format!("[{}]", parts.join(",")));
        }
        schema => {
            o.raw("Schema", props(schema));
            o.raw("JSONSchemas", null());
        }
    }
    o.end()
}

/// `JSONSchemaPropsOrStringArray`.
fn props_or_strings(v: &Value) -> String {
    let mut o = Obj::new();
    match v {
        Value::Array(_) => {
            o.raw("Schema", null());
            o.raw("Property", strings(&serde_json::json!({"p": v}), "p"));
        }
        schema => {
            o.raw("Schema", props(schema));
            o.raw("Property", null());
        }
    }
    o.end()
}

fn external_docs(v: &Value) -> String {
    let mut o = Obj::new();
    o.raw("Description", text(v, "description"));
    o.raw("URL", text(v, "url"));
    o.end()
}

fn validation_rule(v: &Value) -> String {
    let mut o = Obj::new();
    o.raw("Rule", text(v, "rule"));
    o.raw("Message", text(v, "message"));
    o.raw("MessageExpression", text(v, "messageExpression"));
    o.raw("Reason", optional_text(v, "reason"));
    o.raw("FieldPath", text(v, "fieldPath"));
    o.raw(
        "OptionalOldSelf",
        v["optionalOldSelf"]
            .as_bool()
            .map_or_else(null, |b| b.to_string()),
    );
    o.end()
}

/// `JSONSchemaProps`, every field.
fn props(v: &Value) -> String {
    let mut o = Obj::new();
    o.raw("ID", text(v, "id"));
    o.raw("Schema", text(v, "$schema"));
    o.raw("Ref", optional_text(v, "$ref"));
    for (name, key) in [("Description", "description"), ("Type", "type")] {
        o.raw(name, text(v, key));
    }
    o.raw("Nullable", flag(v, "nullable"));
    for (name, key) in [("Format", "format"), ("Title", "title")] {
        o.raw(name, text(v, key));
    }
    o.raw("Default", any(v.get("default")));
    o.raw("Maximum", number(v, "maximum"));
    o.raw("ExclusiveMaximum", flag(v, "exclusiveMaximum"));
    o.raw("Minimum", number(v, "minimum"));
    o.raw("ExclusiveMinimum", flag(v, "exclusiveMinimum"));
    o.raw("MaxLength", number(v, "maxLength"));
    o.raw("MinLength", number(v, "minLength"));
    o.raw("Pattern", text(v, "pattern"));
    o.raw("MaxItems", number(v, "maxItems"));
    o.raw("MinItems", number(v, "minItems"));
    o.raw("UniqueItems", flag(v, "uniqueItems"));
    o.raw("MultipleOf", number(v, "multipleOf"));
    o.raw(
        "Enum",
        v["enum"].as_array().map_or_else(null, |e| {
            format!("[{}]", e.iter().map(go_json).collect::<Vec<_>>().join(","))
        }),
    );
    o.raw("MaxProperties", number(v, "maxProperties"));
    o.raw("MinProperties", number(v, "minProperties"));
    o.raw("Required", strings(v, "required"));
    o.raw(
        "Items",
        v.get("items")
            .filter(|i| !i.is_null())
            .map_or_else(null, props_or_array),
    );
    for (name, key) in [("AllOf", "allOf"), ("OneOf", "oneOf"), ("AnyOf", "anyOf")] {
        o.raw(name, props_list(v, key));
    }
    o.raw(
        "Not",
        v.get("not")
            .filter(|n| !n.is_null())
            .map_or_else(null, props),
    );
    o.raw("Properties", props_map(v, "properties", props));
    let additional = |key: &str| {
        v.get(key)
            .filter(|a| !a.is_null())
            .map_or_else(null, props_or_bool)
    };
    o.raw("AdditionalProperties", additional("additionalProperties"));
    o.raw(
        "PatternProperties",
        props_map(v, "patternProperties", props),
    );
    o.raw(
        "Dependencies",
        props_map(v, "dependencies", props_or_strings),
    );
    o.raw("AdditionalItems", additional("additionalItems"));
    o.raw("Definitions", props_map(v, "definitions", props));
    o.raw(
        "ExternalDocs",
        v.get("externalDocs")
            .filter(|d| !d.is_null())
            .map_or_else(null, external_docs),
    );
    o.raw("Example", any(v.get("example")));
    o.raw(
        "XPreserveUnknownFields",
        v["x-kubernetes-preserve-unknown-fields"]
            .as_bool()
            .map_or_else(null, |b| b.to_string()),
    );
    o.raw(
        "XEmbeddedResource",
        flag(v, "x-kubernetes-embedded-resource"),
    );
    o.raw("XIntOrString", flag(v, "x-kubernetes-int-or-string"));
    o.raw("XListMapKeys", strings(v, "x-kubernetes-list-map-keys"));
    o.raw("XListType", optional_text(v, "x-kubernetes-list-type"));
    o.raw("XMapType", optional_text(v, "x-kubernetes-map-type"));
    let rules = v["x-kubernetes-validations"].as_array();
    o.raw(
        "XValidations",
        rules.map_or_else(null, |r| {
            format!(
                "[{}]",
                r.iter().map(validation_rule).collect::<Vec<_>>().join(",")
            )
        }),
    );
    o.end()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn version(v: Value) -> Version {
        serde_json::from_value(v).expect("a version")
    }

    #[test]
    fn one_version_moves_everything_to_the_spec() {
        let v = version(json!({"name": "v1", "served": true, "storage": false,
            "schema": {"openAPIV3Schema": {"type": "object"}}, "subresources": {"status": {}}}));
        assert_eq!(
            versions(&[v]),
            r#"[{"Name":"v1","Served":true,"Storage":false,"Deprecated":false,"DeprecationWarning":null,"Schema":null,"Subresources":null,"AdditionalPrinterColumns":null,"SelectableFields":null}]"#
        );
    }

    #[test]
    fn differing_schemas_stay_with_their_versions() {
        let a = version(json!({"name": "v1", "served": true, "storage": true,
            "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}));
        let b = version(json!({"name": "v2", "served": true, "storage": true,
            "deprecated": true, "deprecationWarning": "old",
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {"b": {"type": "integer", "maximum": 5.0}, "a": {"type": "string", "enum": ["x"]}}}}}));
        let text = versions(&[a, b]);
        let parsed: Value = serde_json::from_str(&text).expect("JSON");
        let root = &parsed[0]["Schema"]["OpenAPIV3Schema"];
        assert_eq!(root["XPreserveUnknownFields"], true);
        assert_eq!(root["Properties"], Value::Null);
        assert_eq!(parsed[1]["DeprecationWarning"], "old");
        let props = &parsed[1]["Schema"]["OpenAPIV3Schema"]["Properties"];
        assert_eq!(props["b"]["Maximum"], 5);
        assert!(!text.contains("5.0"), "{text}");
        assert_eq!(props["a"]["Enum"], json!(["x"]));
        assert!(text.contains(r#""Properties":{"a":{"ID":"","Schema":"","Ref":null,"Description":"","Type":"string""#), "{text}");
        assert!(
            text.contains(
                r#""XListMapKeys":null,"XListType":null,"XMapType":null,"XValidations":null}"#
            ),
            "{text}"
        );
    }
}
