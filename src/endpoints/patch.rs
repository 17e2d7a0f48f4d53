//! PATCH bodies: JSON merge patch (RFC 7386), JSON patch (RFC 6902), and strategic merge patch
//! where the apiserver accepts it. Server-side apply lives with its own issue.

use serde_json::Value;

use crate::error::ApiError;

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
    /// Merge patch document (strategic merge patches are applied as merge patches: kubefake's
    /// built-in types have no list merge keys that would make them differ).
    Merge(Value),
    /// JSON patch operations.
    Json(json_patch::Patch),
}

impl Patch {
    /// Parses a patch body.
    pub fn parse(kind: PatchType, body: &[u8]) -> Result<Patch, ApiError> {
        match kind {
            PatchType::Merge | PatchType::StrategicMerge => {
                let doc: Value = serde_json::from_slice(body)
                    .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?;
                if !doc.is_object() {
                    return Err(ApiError::bad_request(
                        "error decoding patch: json: cannot unmarshal non-object into Go value of type map[string]interface {}",
                    ));
                }
                Ok(Patch::Merge(doc))
            }
            PatchType::Json => {
                let ops: json_patch::Patch = serde_json::from_slice(body)
                    .map_err(|e| ApiError::bad_request(format!("error decoding patch: {e}")))?;
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
                    err.reason = "Invalid";
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
    fn merge_and_json_patches() {
        let obj = json!({"spec": {"a": 1, "b": 2}});
        let merge = Patch::parse(PatchType::Merge, br#"{"spec":{"a":null,"c":3}}"#).expect("parse");
        assert_eq!(
            merge.apply(&obj).expect("apply"),
            json!({"spec": {"b": 2, "c": 3}})
        );
        let ops = Patch::parse(
            PatchType::Json,
            br#"[{"op":"replace","path":"/spec/a","value":5}]"#,
        )
        .expect("parse");
        assert_eq!(ops.apply(&obj).expect("apply")["spec"]["a"], 5);
        let failing = Patch::parse(
            PatchType::Json,
            br#"[{"op":"test","path":"/spec/a","value":9}]"#,
        )
        .expect("parse");
        assert_eq!(failing.apply(&obj).expect_err("fails").code, 422);
        assert!(Patch::parse(PatchType::Json, b"{").is_err());
    }
}
