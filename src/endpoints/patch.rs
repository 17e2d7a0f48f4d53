//! PATCH bodies: JSON merge patch (RFC 7386), JSON patch (RFC 6902), and strategic merge patch
//! where the apiserver accepts it. Server-side apply lives with its own issue.

use serde_json::Value;

use crate::apply::strategic;
use crate::error::ApiError;
use crate::registry::builtin::data;

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
    /// JSON patch operations.
    Json(json_patch::Patch),
}

impl Patch {
    /// Parses a patch body. `definition` names the OpenAPI definition of the object's kind,
    /// whose patch metadata a strategic merge patch follows.
    pub fn parse(kind: PatchType, body: &[u8], definition: &str) -> Result<Patch, ApiError> {
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
            PatchType::Json => {
                let ops: json_patch::Patch =
                    serde_json::from_slice(body).map_err(decoding_error(body))?;
                if ops.0.len() > 10_000 {
                    return Err(ApiError::too_large(10_000));
                }
                Ok(Patch::Json(ops))
            }
        }
    }

    /// Applies the patch to an object, returning the patched copy.
    pub fn apply(&self, current: &Value) -> Result<Value, ApiError> {
        let mut out = current.clone();
        match self {
            Patch::Merge(doc) => json_patch::merge(&mut out, doc),
            Patch::Strategic(doc, definition) => out = strategic(current, doc, definition)?,
            Patch::Json(ops) => {
                // As the apiserver's JSON patch library does, a `test` for null passes on a
                // missing path (kube-rs's finalizer helper relies on it).
                let ops: Vec<json_patch::PatchOperation> = ops
                    .0
                    .iter()
                    .filter(|op| match op {
                        json_patch::PatchOperation::Test(t) => {
                            !(t.value.is_null() && out.pointer(t.path.as_str()).is_none())
                        }
                        _ => true,
                    })
                    .cloned()
                    .collect();
                json_patch::patch(&mut out, &ops).map_err(|_| {
                    let mut err = ApiError::bad_request(
                        "the server rejected our request due to an error in our request",
                    );
                    err.code = 422;
                    err.reason = "Invalid".into();
                    err.details = Some(Box::default());
                    err
                })?;
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
    let components = data::schema_components();
    let schema = components
        .get(definition)
        .map(|root| strategic::OpenApiSchema::new(root, components));
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
        let deploy = json!({"spec": {"template": {"spec": {"containers": [
            {"name": "a", "image": "a:1"}, {"name": "b", "image": "b:1"}]}}}});
        let patch =
            br#"{"spec":{"template":{"spec":{"containers":[{"name":"b","image":"b:2"}]}}}}"#;
        let smp = Patch::parse(
            PatchType::StrategicMerge,
            patch,
            "io.k8s.api.apps.v1.Deployment",
        )
        .expect("parse");
        let out = smp.apply(&deploy).expect("apply");
        assert_eq!(
            out["spec"]["template"]["spec"]["containers"],
            json!([{"name": "a", "image": "a:1"}, {"name": "b", "image": "b:2"}])
        );
        let bad = Patch::parse(
            PatchType::StrategicMerge,
            br#"{"spec":{"$retainKeys":"x"}}"#,
            "io.k8s.api.apps.v1.Deployment",
        )
        .expect("parse");
        assert_eq!(bad.apply(&deploy).expect_err("400").code, 400);
    }

    #[test]
    fn merge_and_json_patches() {
        let obj = json!({"spec": {"a": 1, "b": 2}});
        let merge =
            Patch::parse(PatchType::Merge, br#"{"spec":{"a":null,"c":3}}"#, "").expect("parse");
        assert_eq!(
            merge.apply(&obj).expect("apply"),
            json!({"spec": {"b": 2, "c": 3}})
        );
        let ops = Patch::parse(
            PatchType::Json,
            br#"[{"op":"replace","path":"/spec/a","value":5}]"#,
            "",
        )
        .expect("parse");
        assert_eq!(ops.apply(&obj).expect("apply")["spec"]["a"], 5);
        let failing = Patch::parse(
            PatchType::Json,
            br#"[{"op":"test","path":"/spec/a","value":9}]"#,
            "",
        )
        .expect("parse");
        assert_eq!(failing.apply(&obj).expect_err("fails").code, 422);
        assert!(Patch::parse(PatchType::Json, b"{", "").is_err());
    }
}
