//! PATCH bodies: JSON merge patch (RFC 7386), JSON patch (RFC 6902), and strategic merge patch
//! where the apiserver accepts it. Server-side apply lives with its own issue.

use serde_json::Value;

use super::json_dups;
use crate::apply::json_patch::JsonPatch;
use crate::apply::strategic;
use crate::context::Context;
use crate::error::ApiError;
use crate::machinery::gofmt::{go_json, go_quote};
use crate::registry::builtin::data;
use crate::registry::strategy::FieldValidation;

/// The patch formats a PATCH can carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PatchType {
    /// `application/merge-patch+json`.
    Merge,
    /// `application/json-patch+json`.
    Json,
    /// `application/strategic-merge-patch+json` (built-in types only).
    StrategicMerge,
}

/// Picks the patch type from a Content-Type, or the apiserver's 415 listing what the resource
/// accepts.
pub fn patch_type(content_type: &str, accepted: &[&str]) -> Result<PatchType, ApiError> {
    let media = super::negotiation::media_type(content_type);
    if !accepted.contains(&media.as_str()) {
        return Err(ApiError::unsupported_media_type(content_type, accepted));
    }
    match media.as_str() {
        "application/merge-patch+json" => Ok(PatchType::Merge),
        "application/json-patch+json" => Ok(PatchType::Json),
        "application/strategic-merge-patch+json" => Ok(PatchType::StrategicMerge),
        _ => Err(ApiError::unsupported_media_type(content_type, accepted)),
    }
}

/// A parsed patch, ready to apply to any number of object versions (PATCH retries on conflicts).
pub enum Patch {
    /// Merge patch document.
    Merge(Value),
    /// Strategic merge patch document, merged by the kind's published patch strategies and
    /// merge keys (the OpenAPI definition named here).
    Strategic(Value, String),
    /// JSON patch operations, with what strict decoding found in them (unknown and duplicate
    /// fields), reported once the patch applied.
    Json(JsonPatch, Vec<String>),
}

/// The apiserver's `maxJSONPatchOperations`.
const MAX_JSON_PATCH_OPERATIONS: usize = 10_000;

impl Patch {
    /// Parses a patch body. `definition` names the OpenAPI definition of the object's kind,
    /// whose patch metadata a strategic merge patch follows; `ctx` carries the request's
    /// `fieldValidation`, which decides how a JSON patch is decoded.
    pub fn parse(
        kind: PatchType,
        body: &[u8],
        definition: &str,
        ctx: &Context,
    ) -> Result<Patch, ApiError> {
        match kind {
            PatchType::Merge | PatchType::StrategicMerge => {
                let doc: Value = serde_json::from_slice(body).map_err(decoding_error(body))?;
                if doc.is_null() && kind == PatchType::Merge {
                    // evanphx/json-patch's MergePatch refuses a null patch.
                    return Err(ApiError::bad_request("Invalid JSON Patch"));
                }
                if !doc.is_object() {
                    return Err(ApiError::bad_request(format!(
                        "error decoding patch: json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                        crate::typed::syntax::go_json_kind(&doc)
                    )));
                }
                if kind == PatchType::StrategicMerge {
                    return Ok(Patch::Strategic(doc, definition.to_string()));
                }
                Ok(Patch::Merge(doc))
            }
            PatchType::Json => parse_json_patch(body, ctx.field_validation),
        }
    }

    /// Applies the patch to an object, returning the patched copy. A JSON patch's strict
    /// decoding findings become warnings (`Warn`) or the apiserver's 422 (`Strict`) here, once
    /// the patch applied, as the apiserver reports them.
    pub fn apply(&self, current: &Value, ctx: &Context) -> Result<Value, ApiError> {
        let mut out = current.clone();
        match self {
            Patch::Merge(doc) => json_patch::merge(&mut out, doc),
            Patch::Strategic(doc, definition) => out = strategic(current, doc, definition)?,
            Patch::Json(ops, strict) => {
                // The apiserver hides the library's message behind a generic 422.
                ops.apply(&mut out).map_err(|_| {
                    let mut err = ApiError::bad_request(
                        "the server rejected our request due to an error in our request",
                    );
                    err.code = 422;
                    err.reason = "Invalid".into();
                    err.details = Some(Box::default());
                    err
                })?;
                report_strict(ctx, strict, &out)?;
            }
        }
        if !out.is_object() {
            return Err(ApiError::bad_request(
                "the patched object is not a JSON object",
            ));
        }
        Ok(out)
    }
}

/// The apiserver's `applyJSPatch` up to the application: unless `fieldValidation=Ignore`, a
/// strict decode into its `[]jsonPatchOp` (errors prefixed `error decoding patch: `), then the
/// library's `DecodePatch` (errors bare), then the cap on operations.
fn parse_json_patch(body: &[u8], validation: FieldValidation) -> Result<Patch, ApiError> {
    let strict = validation != FieldValidation::Ignore;
    let prefix = if strict { "error decoding patch: " } else { "" };
    let (doc, duplicates) = json_dups::parse(body).map_err(|e| {
        let why = crate::typed::syntax::syntax_error(body).unwrap_or_else(|| e.to_string());
        ApiError::bad_request(format!("{prefix}{why}"))
    })?;
    let mut found = Vec::new();
    if strict {
        strict_shape(&doc).map_err(|e| ApiError::bad_request(format!("{prefix}{e}")))?;
        found = strict_findings(&doc, duplicates);
    }
    let ops = crate::apply::json_patch::decode(&doc).map_err(ApiError::bad_request)?;
    if ops.len() > MAX_JSON_PATCH_OPERATIONS {
        return Err(ApiError::status(
            413,
            "RequestEntityTooLarge",
            format!(
                "Request entity too large: The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, got {}",
                ops.len()
            ),
        ));
    }
    Ok(Patch::Json(ops, found))
}

/// The fields of the apiserver's `jsonPatchOp`, which strict decoding knows.
const OPERATION_FIELDS: [&str; 4] = ["op", "path", "from", "value"];

/// The type errors of decoding into `[]jsonPatchOp` (the first one, as Go reports it).
fn strict_shape(doc: &Value) -> Result<(), String> {
    use crate::typed::syntax::go_json_kind;
    let items = match doc {
        Value::Null => return Ok(()),
        Value::Array(items) => items,
        other => {
            return Err(format!(
                "json: cannot unmarshal {} into Go value of type []handlers.jsonPatchOp",
                go_json_kind(other)
            ))
        }
    };
    for item in items {
        match item {
            Value::Null => {}
            Value::Object(op) => {
                for (key, v) in op {
                    let named = key != "value" && OPERATION_FIELDS.contains(&key.as_str());
                    if named && !(v.is_string() || v.is_null()) {
                        return Err(format!(
                            "json: cannot unmarshal {} into Go struct field jsonPatchOp.{key} of type string",
                            go_json_kind(v)
                        ));
                    }
                }
            }
            other => {
                return Err(format!(
                    "json: cannot unmarshal {} into Go value of type handlers.jsonPatchOp",
                    go_json_kind(other)
                ))
            }
        }
    }
    Ok(())
}

/// What sigs.k8s.io/json's strict decoding reports of a patch, worded as the apiserver words
/// it (`json patch unknown field "[0].x"`, `json patch duplicate field "[0].op"`): an
/// operation's unknown keys (once each, not as duplicates), then duplicated keys, at most 100.
fn strict_findings(doc: &Value, duplicates: Vec<String>) -> Vec<String> {
    let mut unknown = Vec::new();
    for (i, item) in doc.as_array().into_iter().flatten().enumerate() {
        for key in item.as_object().into_iter().flat_map(|op| op.keys()) {
            if !OPERATION_FIELDS.contains(&key.as_str()) {
                unknown.push(format!("[{i}].{key}"));
            }
        }
    }
    let duplicates = duplicates.into_iter().filter(|d| !unknown.contains(d));
    let mut found: Vec<String> = unknown
        .iter()
        .map(|p| format!("json patch unknown field {}", go_quote(p)))
        .chain(duplicates.map(|p| format!("json patch duplicate field {}", go_quote(&p))))
        .collect();
    found.truncate(100);
    found
}

/// Reports a JSON patch's strict findings once it applied: warnings, or (`Strict`) the
/// apiserver's 422 on the field `patch`, whose value is the patched object as Go marshals it.
fn report_strict(ctx: &Context, found: &[String], patched: &Value) -> Result<(), ApiError> {
    if found.is_empty() {
        return Ok(());
    }
    if ctx.field_validation != FieldValidation::Strict {
        for f in found {
            ctx.warn(f.clone());
        }
        return Ok(());
    }
    let cause = crate::error::StatusCause {
        reason: "FieldValueInvalid".into(),
        message: format!(
            "Invalid value: {}: strict decoding error: {}",
            go_quote(&go_json(patched)),
            found.join(", ")
        ),
        field: "patch".into(),
    };
    Err(ApiError::invalid("", "", "", vec![cause]))
}

/// The 400 for a patch body that does not decode, in Go's words where Go's JSON scanner
/// refuses it too (the apiserver decodes patches with sigs.k8s.io/json first).
fn decoding_error(body: &[u8]) -> impl Fn(serde_json::Error) -> ApiError + '_ {
    move |e| {
        let why = crate::typed::syntax::syntax_error(body).unwrap_or_else(|| e.to_string());
        ApiError::bad_request(format!("error decoding patch: {why}"))
    }
}

/// A strategic merge patch applied with the published patch metadata of a built-in kind; errors
/// get the apiserver's status (`interpretStrategicMergePatchError`): 400 for malformed patches
/// and directives, 422 for lists of lists and `$retainKeys` mismatches, 500 otherwise.
fn strategic(current: &Value, patch: &Value, definition: &str) -> Result<Value, ApiError> {
    let schema = data::schema_component(definition)
        .map(|root| strategic::OpenApiSchema::new(root, &data::Components));
    strategic::apply(current, patch, schema.as_ref()).map_err(|e| {
        let message = e.to_string();
        match e {
            strategic::Error::InvalidDocument
            | strategic::Error::BadDeleteFromPrimitiveList
            | strategic::Error::BadRetainKeys
            | strategic::Error::BadSetElementOrder
            | strategic::Error::TooDeep => ApiError::bad_request(message),
            strategic::Error::ListOfLists => {
                let mut err = ApiError::bad_request(
                    "the server rejected our request due to an error in our request",
                );
                err.code = 422;
                err.reason = "Invalid".into();
                err.details = Some(Box::new(crate::error::StatusDetails {
                    causes: vec![crate::error::StatusCause {
                        reason: "UnexpectedServerResponse".into(),
                        message,
                        field: String::new(),
                    }],
                    ..Default::default()
                }));
                err
            }
            // Not a Status: the apiserver answers 500 with the error's text and no reason.
            _ => {
                let mut err = ApiError::internal("");
                err.reason = "".into();
                err.message = message;
                err
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::resource::{TYPED_PATCH_TYPES, UNSTRUCTURED_PATCH_TYPES};
    use serde_json::json;

    #[test]
    fn strategic_merge_is_refused_for_custom_resources() {
        let err = patch_type(
            "application/strategic-merge-patch+json",
            UNSTRUCTURED_PATCH_TYPES,
        )
        .expect_err("415");
        assert_eq!(err.code, 415);
        assert_eq!(
            err.message,
            "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
        );
        assert!(patch_type("application/strategic-merge-patch+json", TYPED_PATCH_TYPES).is_ok());
    }

    #[test]
    fn strategic_merge_patches_follow_the_published_merge_keys() {
        let ctx = Context::internal();
        let deploy = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}]}}}});
        let patch =
            br#"{"spec":{"template":{"spec":{"containers":[{"name":"b","image":"b:2"}]}}}}"#;
        let smp = Patch::parse(
            PatchType::StrategicMerge,
            patch,
            "io.k8s.api.apps.v1.Deployment",
            &ctx,
        )
        .expect("parse");
        let out = smp.apply(&deploy, &ctx).expect("apply");
        assert_eq!(
            out["spec"]["template"]["spec"]["containers"],
            json!([{"name": "a", "image": "a:1"}, {"name": "b", "image": "b:2"}])
        );
        let bad = Patch::parse(
            PatchType::StrategicMerge,
            br#"{"spec":{"$retainKeys":"x"}}"#,
            "io.k8s.api.apps.v1.Deployment",
            &ctx,
        )
        .expect("parse");
        assert_eq!(bad.apply(&deploy, &ctx).expect_err("400").code, 400);
    }

    #[test]
    fn merge_and_json_patches() {
        let ctx = Context::internal();
        let obj = json!({"spec": {"a": 1, "b": 2}});
        let merge = Patch::parse(PatchType::Merge, br#"{"spec":{"a":null,"c":3}}"#, "", &ctx)
            .expect("parse");
        assert_eq!(
            merge.apply(&obj, &ctx).expect("apply"),
            json!({"spec": {"b": 2, "c": 3}})
        );
        let ops = Patch::parse(
            PatchType::Json,
            br#"[{"op":"replace","path":"/spec/a","value":5}]"#,
            "",
            &ctx,
        )
        .expect("parse");
        assert_eq!(ops.apply(&obj, &ctx).expect("apply")["spec"]["a"], 5);
        let failing = Patch::parse(
            PatchType::Json,
            br#"[{"op":"test","path":"/spec/a","value":9}]"#,
            "",
            &ctx,
        )
        .expect("parse");
        assert_eq!(failing.apply(&obj, &ctx).expect_err("fails").code, 422);
        assert!(Patch::parse(PatchType::Json, b"{", "", &ctx).is_err());
    }

    #[rstest::rstest]
    #[case::syntax(
        FieldValidation::Warn,
        "[{",
        "error decoding patch: unexpected end of JSON input"
    )]
    #[case::syntax_ignore(
        FieldValidation::Ignore,
        "[{\"op\" 1}]",
        "invalid character '1' after object key"
    )]
    #[case::object(FieldValidation::Warn, "{}", "error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp")]
    #[case::object_ignore(
        FieldValidation::Ignore,
        "{}",
        "json: cannot unmarshal object into Go value of type jsonpatch.Patch"
    )]
    #[case::element(FieldValidation::Strict, "[1]", "error decoding patch: json: cannot unmarshal number into Go value of type handlers.jsonPatchOp")]
    #[case::element_ignore(
        FieldValidation::Ignore,
        "[true]",
        "json: cannot unmarshal bool into Go value of type jsonpatch.Operation"
    )]
    #[case::field(FieldValidation::Warn, r#"[{"op":"add","path":5}]"#, "error decoding patch: json: cannot unmarshal number into Go struct field jsonPatchOp.path of type string")]
    fn malformed_json_patches(
        #[case] validation: FieldValidation,
        #[case] body: &str,
        #[case] message: &str,
    ) {
        let mut ctx = Context::internal();
        ctx.field_validation = validation;
        let err = Patch::parse(PatchType::Json, body.as_bytes(), "", &ctx)
            .err()
            .expect("refused");
        assert_eq!((err.code, err.message.as_str()), (400, message));
    }

    #[test]
    fn json_patches_are_capped_at_ten_thousand_operations() {
        let op = r#"{"op":"test","path":"/a"}"#;
        let body = format!("[{}]", vec![op; 10_001].join(","));
        let err = Patch::parse(PatchType::Json, body.as_bytes(), "", &Context::internal())
            .err()
            .expect("413");
        assert_eq!(err.code, 413);
        assert_eq!(
            err.message,
            "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001"
        );
    }

    #[test]
    fn strict_findings_warn_or_refuse_once_applied() {
        let body =
            br#"[{"op":"add","path":"/b","value":{"x":1,"x":2},"extra":1,"extra":2,"op":"add"}]"#;
        let mut ctx = Context::internal();
        let patch = Patch::parse(PatchType::Json, body, "", &ctx).expect("parse");
        let out = patch.apply(&json!({"a": "<"}), &ctx).expect("apply");
        assert_eq!(out, json!({"a": "<", "b": {"x": 2}}));
        assert_eq!(
            ctx.warnings(),
            vec![
                r#"json patch unknown field "[0].extra""#,
                r#"json patch duplicate field "[0].value.x""#,
                r#"json patch duplicate field "[0].op""#,
            ]
        );
        ctx.field_validation = FieldValidation::Strict;
        let err = patch.apply(&json!({"a": "<"}), &ctx).expect_err("422");
        assert_eq!(err.code, 422);
        assert_eq!(
            err.message,
            r#" "" is invalid: patch: Invalid value: "{\"a\":\"\\u003c\",\"b\":{\"x\":2}}": strict decoding error: json patch unknown field "[0].extra", json patch duplicate field "[0].value.x", json patch duplicate field "[0].op""#
        );
    }
}
