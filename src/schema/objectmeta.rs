//! `x-kubernetes-embedded-resource` objects (`objectmeta/`): their `metadata` is coerced to
//! ObjectMeta (unknown fields dropped) and their apiVersion/kind/metadata validated the way the
//! apiserver validates a top-level object.

use serde_json::{Map, Value};

use super::structural::Node;
use super::validation::{Seg, VPath};
use crate::error::{field, StatusCause};
use crate::registry::object_meta::{
    is_dns1123_label, is_qualified_name, validate_labels_and_annotations, QUALIFIED_NAME_MSG,
};

/// How a field of `metav1.ObjectMeta` decodes. One table serves the decoder check
/// (`check_object_meta`), pruning (the other keys are unknown fields) and server-side apply
/// (which types labels as a granular map, finalizers as a set, ...), so they cannot disagree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetaFieldType {
    /// `string`.
    String,
    /// `int64`.
    Int64,
    /// `v1.Time`: an RFC 3339 string (or "").
    Time,
    /// `map[string]string` (labels, annotations).
    StringMap,
    /// `[]string` (finalizers).
    StringList,
    /// `[]v1.OwnerReference`.
    OwnerReferences,
    /// `[]v1.ManagedFieldsEntry`.
    ManagedFields,
}

impl MetaFieldType {
    /// The Go type, as encoding/json names it in an `UnmarshalTypeError`.
    pub fn go_type(self) -> &'static str {
        match self {
            MetaFieldType::String => "string",
            MetaFieldType::Int64 => "int64",
            MetaFieldType::Time => "v1.Time",
            MetaFieldType::StringMap => "map[string]string",
            MetaFieldType::StringList => "[]string",
            MetaFieldType::OwnerReferences => "[]v1.OwnerReference",
            MetaFieldType::ManagedFields => "[]v1.ManagedFieldsEntry",
        }
    }

    /// Whether a non-null JSON value decodes into this type (`null` elements decode to zero
    /// values).
    fn decodes(self, v: &Value) -> bool {
        let all = |ok: fn(&Value) -> bool| v.as_array().is_some_and(|a| a.iter().all(ok));
        match self {
            MetaFieldType::String => v.is_string(),
            MetaFieldType::Int64 => v.is_i64(),
            MetaFieldType::Time => v
                .as_str()
                .is_some_and(|s| s.is_empty() || chrono::DateTime::parse_from_rfc3339(s).is_ok()),
            MetaFieldType::StringMap => v
                .as_object()
                .is_some_and(|o| o.values().all(|x| x.is_string() || x.is_null())),
            MetaFieldType::StringList => all(|x| x.is_string() || x.is_null()),
            MetaFieldType::OwnerReferences | MetaFieldType::ManagedFields => {
                all(|x| x.is_object() || x.is_null())
            }
        }
    }
}

/// The JSON fields of `metav1.ObjectMeta`, in its field order, with their types.
pub const OBJECT_META: [(&str, MetaFieldType); 15] = [
    ("name", MetaFieldType::String),
    ("generateName", MetaFieldType::String),
    ("namespace", MetaFieldType::String),
    ("selfLink", MetaFieldType::String),
    ("uid", MetaFieldType::String),
    ("resourceVersion", MetaFieldType::String),
    ("generation", MetaFieldType::Int64),
    ("creationTimestamp", MetaFieldType::Time),
    ("deletionTimestamp", MetaFieldType::Time),
    ("deletionGracePeriodSeconds", MetaFieldType::Int64),
    ("labels", MetaFieldType::StringMap),
    ("annotations", MetaFieldType::StringMap),
    ("ownerReferences", MetaFieldType::OwnerReferences),
    ("finalizers", MetaFieldType::StringList),
    ("managedFields", MetaFieldType::ManagedFields),
];

/// The type of ObjectMeta field `k`, or None for a key ObjectMeta does not have.
pub fn object_meta_field(k: &str) -> Option<MetaFieldType> {
    OBJECT_META.iter().find(|(f, _)| *f == k).map(|(_, t)| *t)
}

/// Why `metadata` does not decode into ObjectMeta, worded as encoding/json's
/// `UnmarshalTypeError` (the apiserver reports it as the `Invalid value` detail).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ObjectMetaError {
    /// `metadata` itself is not an object.
    #[error("json: cannot unmarshal {json_type} into Go value of type v1.ObjectMeta")]
    NotAnObject {
        /// encoding/json's name of the JSON type found (`string`, `array`, ...).
        json_type: &'static str,
    },
    /// A field has a JSON type its Go type does not decode from.
    #[error(
        "json: cannot unmarshal {json_type} into Go struct field ObjectMeta.{field} of type {}",
        .go_type.go_type()
    )]
    FieldType {
        /// encoding/json's name of the JSON type found.
        json_type: &'static str,
        /// The JSON name of the field.
        field: String,
        /// The field's type.
        go_type: MetaFieldType,
    },
}

fn go_json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Whether `metadata` decodes into ObjectMeta (unknown keys are dropped by the decoder, so only
/// the types of known ones matter).
pub fn check_object_meta(meta: &Value) -> Result<(), ObjectMetaError> {
    let m = match meta {
        Value::Null => return Ok(()),
        Value::Object(m) => m,
        other => {
            return Err(ObjectMetaError::NotAnObject {
                json_type: go_json_type(other),
            })
        }
    };
    for (k, v) in m {
        let Some(go_type) = object_meta_field(k).filter(|_| !v.is_null()) else {
            continue;
        };
        if !go_type.decodes(v) {
            return Err(ObjectMetaError::FieldType {
                json_type: go_json_type(v),
                field: k.clone(),
                go_type,
            });
        }
    }
    Ok(())
}

/// Round-trips a valid metadata object through ObjectMeta: unknown fields are removed (and
/// reported as `<prefix>.<field>`), empty optional fields dropped as `omitempty` does.
pub fn coerce_meta(meta: &mut Map<String, Value>, prefix: &str, unknown: &mut Vec<String>) {
    meta.retain(|k, v| {
        if object_meta_field(k).is_none() {
            unknown.push(format!("{prefix}.{k}"));
            return false;
        }
        match v {
            Value::Null => false,
            Value::String(s) => !s.is_empty(),
            Value::Object(o) => !o.is_empty(),
            Value::Array(a) => !a.is_empty(),
            Value::Number(_) => !(k == "generation" && v.as_i64() == Some(0)),
            _ => true,
        }
    });
}

/// `objectmeta.Coerce` below the root: prunes the metadata of embedded resources.
pub fn coerce(x: &mut Value, s: Option<&Node>, p: &VPath, unknown: &mut Vec<String>) {
    let Some(s) = s.filter(|s| s.sub_embedded) else {
        return;
    };
    match x {
        Value::Object(m) => {
            if s.embedded_resource {
                if let Some(meta) = m.get_mut("metadata") {
                    if check_object_meta(meta).is_ok() {
                        if let Value::Object(mm) = meta {
                            let prefix = p.child(Seg::Prop("metadata")).field();
                            coerce_meta(mm, &prefix, unknown);
                        }
                    }
                }
            }
            for (k, v) in m.iter_mut() {
                if let Some(prop) = s.properties.get(k) {
                    coerce(v, Some(prop), &p.child(Seg::Prop(k)), unknown);
                } else if s.additional.is_some() {
                    coerce(v, s.additional_schema(), &p.child(Seg::Key(k)), unknown);
                }
            }
        }
        Value::Array(a) => {
            for (i, v) in a.iter_mut().enumerate() {
                coerce(v, s.items.as_deref(), &p.child(Seg::Index(i)), unknown);
            }
        }
        _ => {}
    }
}

/// `objectmeta.Validate` below the root: apiVersion, kind and metadata of embedded resources.
pub fn validate(x: &Value, s: Option<&Node>, p: &VPath, out: &mut Vec<StatusCause>) {
    let Some(s) = s.filter(|s| s.sub_embedded) else {
        return;
    };
    match x {
        Value::Object(m) => {
            if s.embedded_resource {
                validate_embedded(m, p, out);
            }
            for (k, v) in m {
                if let Some(prop) = s.properties.get(k) {
                    validate(v, Some(prop), &p.child(Seg::Prop(k)), out);
                } else if s.additional.is_some() {
                    validate(v, s.additional_schema(), &p.child(Seg::Key(k)), out);
                }
            }
        }
        Value::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                validate(v, s.items.as_deref(), &p.child(Seg::Index(i)), out);
            }
        }
        _ => {}
    }
}

const DNS1035_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";
const DNS1123_LABEL_MSG: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

fn dns1035_errors(s: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if s.len() > 63 {
        errs.push("must be no more than 63 characters".to_string());
    }
    let b = s.as_bytes();
    let ok = !b.is_empty()
        && b[0].is_ascii_lowercase()
        && (b[b.len() - 1].is_ascii_lowercase() || b[b.len() - 1].is_ascii_digit())
        && b.iter()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || *c == b'-');
    if !ok {
        errs.push(DNS1035_MSG.to_string());
    }
    errs
}

fn path_segment_errors(name: &str, prefix: bool) -> Vec<String> {
    if !prefix && (name == "." || name == "..") {
        return vec![format!("may not be '{name}'")];
    }
    let mut errs = Vec::new();
    for c in ["/", "%"] {
        if name.contains(c) {
            errs.push(format!("may not contain '{c}'"));
        }
    }
    errs
}

fn invalid(path: &str, v: &Value, detail: &str) -> StatusCause {
    StatusCause {
        reason: "FieldValueInvalid".into(),
        message: format!(
            "Invalid value: {}: {detail}",
            crate::machinery::gofmt::error_value(v)
        ),
        field: path.to_string(),
    }
}

fn validate_embedded(m: &Map<String, Value>, p: &VPath, out: &mut Vec<StatusCause>) {
    let fp = |k: &'static str| p.child(Seg::Prop(k)).field();
    if !m.contains_key("apiVersion") {
        out.push(field::required(&fp("apiVersion"), ""));
    }
    if !m.contains_key("kind") {
        out.push(field::required(&fp("kind"), ""));
    }
    for (k, v) in m {
        match k.as_str() {
            "apiVersion" => match v.as_str() {
                None => out.push(invalid(&fp("apiVersion"), v, "must be a string")),
                Some("") => out.push(invalid(&fp("apiVersion"), v, "must not be empty")),
                Some(s) if s.matches('/').count() > 1 => out.push(invalid(
                    &fp("apiVersion"),
                    v,
                    &format!("unexpected GroupVersion string: {s}"),
                )),
                Some(_) => {}
            },
            "kind" => match v.as_str() {
                None => out.push(invalid(&fp("kind"), v, "must be a string")),
                Some("") => out.push(invalid(&fp("kind"), v, "must not be empty")),
                Some(s) => {
                    let errs = dns1035_errors(&s.to_lowercase());
                    if !errs.is_empty() {
                        out.push(invalid(
                            &fp("kind"),
                            v,
                            &format!(
                                "may have mixed case, but should otherwise match: {}",
                                errs.join(",")
                            ),
                        ));
                    }
                }
            },
            "metadata" => match check_object_meta(v) {
                Err(e) => out.push(invalid(&fp("metadata"), v, &e.to_string())),
                Ok(()) => {
                    if let Value::Object(meta) = v {
                        validate_meta(meta, &fp("metadata"), out);
                    }
                }
            },
            _ => {}
        }
    }
}

/// `ValidateObjectMeta` for an embedded object (create semantics, path-segment names).
fn validate_meta(meta: &Map<String, Value>, path: &str, out: &mut Vec<StatusCause>) {
    let s = |k: &str| meta.get(k).and_then(Value::as_str).unwrap_or("");
    let generate_name = s("generateName");
    if !generate_name.is_empty() {
        for msg in path_segment_errors(generate_name, true) {
            out.push(invalid(
                &format!("{path}.generateName"),
                &Value::String(generate_name.into()),
                &msg,
            ));
        }
    }
    let name = s("name");
    if !name.is_empty() {
        for msg in path_segment_errors(name, false) {
            out.push(invalid(
                &format!("{path}.name"),
                &Value::String(name.into()),
                &msg,
            ));
        }
    }
    let ns = s("namespace");
    if !ns.is_empty() {
        if ns.len() > 63 {
            out.push(invalid(
                &format!("{path}.namespace"),
                &Value::String(ns.into()),
                "must be no more than 63 characters",
            ));
        }
        if !is_dns1123_label(ns) {
            out.push(invalid(
                &format!("{path}.namespace"),
                &Value::String(ns.into()),
                DNS1123_LABEL_MSG,
            ));
        }
    }
    if let Some(g) = meta.get("generation").and_then(Value::as_i64) {
        if g < 0 {
            out.push(invalid(
                &format!("{path}.generation"),
                &Value::from(g),
                "must be greater than or equal to 0",
            ));
        }
    }
    validate_labels_and_annotations(meta, path, out);
    if let Some(fins) = meta.get("finalizers").and_then(Value::as_array) {
        for (i, f) in fins.iter().enumerate() {
            let f = f.as_str().unwrap_or("");
            if !is_qualified_name(f) {
                out.push(invalid(
                    &format!("{path}.finalizers[{i}]"),
                    &Value::String(f.into()),
                    QUALIFIED_NAME_MSG,
                ));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn embedded_schema() -> Node {
        Node::compile(&json!({"type": "object", "properties": {"foo": {
            "type": "object", "x-kubernetes-embedded-resource": true,
            "x-kubernetes-preserve-unknown-fields": true}}}))
    }

    #[test]
    fn seed_embedded_pod_is_kept_and_validated() {
        let n = embedded_schema();
        let mut obj = json!({"foo": {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "bogus": 1}, "spec": {"containers": []}}});
        let mut unknown = Vec::new();
        coerce(&mut obj, Some(&n), &VPath::root(), &mut unknown);
        assert_eq!(unknown, vec!["foo.metadata.bogus"]);
        assert_eq!(obj["foo"]["metadata"], json!({"name": "p"}));
        assert_eq!(obj["foo"]["spec"], json!({"containers": []}));
        let mut errs = Vec::new();
        validate(&obj, Some(&n), &VPath::root(), &mut errs);
        assert!(errs.is_empty(), "{errs:?}");
    }

    #[test]
    fn embedded_type_meta_errors() {
        let n = embedded_schema();
        let obj = json!({"foo": {"kind": "Not_A_Kind", "metadata": {"name": "a/b"}}});
        let mut errs = Vec::new();
        validate(&obj, Some(&n), &VPath::root(), &mut errs);
        let got: Vec<String> = errs
            .iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect();
        assert_eq!(got[0], "foo.apiVersion: Required value");
        assert!(got[1].starts_with("foo.kind: Invalid value: \"Not_A_Kind\": may have mixed case, but should otherwise match: a DNS-1035 label"), "{got:?}");
        assert_eq!(
            got[2],
            "foo.metadata.name: Invalid value: \"a/b\": may not contain '/'"
        );
        let obj = json!({"foo": {"apiVersion": 1, "kind": "Pod", "metadata": {"name": 5}}});
        let mut errs = Vec::new();
        validate(&obj, Some(&n), &VPath::root(), &mut errs);
        assert_eq!(errs[0].message, "Invalid value: 1: must be a string");
        assert_eq!(errs[1].field, "foo.metadata");
    }

    #[test]
    fn object_meta_decoding_errors() {
        let cases = [
            (json!(null), None),
            (json!({"name": "a", "bogus": 1, "labels": null}), None),
            (json!({"creationTimestamp": ""}), None),
            (json!({"finalizers": ["a", null]}), None),
            (json!("x"), Some("json: cannot unmarshal string into Go value of type v1.ObjectMeta")),
            (json!([]), Some("json: cannot unmarshal array into Go value of type v1.ObjectMeta")),
            (json!({"name": 5}), Some("json: cannot unmarshal number into Go struct field ObjectMeta.name of type string")),
            (json!({"generation": 1.5}), Some("json: cannot unmarshal number into Go struct field ObjectMeta.generation of type int64")),
            (json!({"deletionTimestamp": "yesterday"}), Some("json: cannot unmarshal string into Go struct field ObjectMeta.deletionTimestamp of type v1.Time")),
            (json!({"labels": {"a": 1}}), Some("json: cannot unmarshal object into Go struct field ObjectMeta.labels of type map[string]string")),
            (json!({"finalizers": "a"}), Some("json: cannot unmarshal string into Go struct field ObjectMeta.finalizers of type []string")),
            (json!({"ownerReferences": [1]}), Some("json: cannot unmarshal array into Go struct field ObjectMeta.ownerReferences of type []v1.OwnerReference")),
            (json!({"managedFields": {}}), Some("json: cannot unmarshal object into Go struct field ObjectMeta.managedFields of type []v1.ManagedFieldsEntry")),
        ];
        for (meta, want) in cases {
            let got = check_object_meta(&meta).err().map(|e| e.to_string());
            assert_eq!(got.as_deref(), want, "{meta}");
        }
    }

    #[test]
    fn object_meta_fields() {
        assert_eq!(object_meta_field("uid"), Some(MetaFieldType::String));
        assert_eq!(
            object_meta_field("finalizers"),
            Some(MetaFieldType::StringList)
        );
        assert_eq!(object_meta_field("clusterName"), None);
        assert_eq!(OBJECT_META.len(), 15);
    }
}
