//! The CRD `Webhook` conversion strategy: objects go to the CRD's conversion webhook in one
//! `ConversionReview` per conversion (a list, or a burst of watch events, is one call), in the
//! first review version of `conversionReviewVersions` kubefake speaks (`v1`, `v1beta1`). What
//! comes back is checked as the apiserver checks it (the review's kind and uid for `v1`, the
//! result, the count, each object's apiVersion, kind, name, namespace and uid), and the original
//! metadata is restored except for labels and annotations, which the webhook may change. Every
//! failure is the apiserver's plain 500 (no reason, no `Internal error occurred: `)
//! `conversion webhook for <gvk> failed: ...`.

use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::{json, Map, Value};

use super::Converter;
use crate::error::{ApiError, StatusCause};
use crate::registry::object_meta::validate_labels_and_annotations;
use crate::webhook::{ClientConfig, WebhookClient};

/// How long a conversion call may take: the apiserver's webhook client timeout.
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// The ConversionReview versions kubefake sends, in the apiserver's terms.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReviewVersion {
    /// `apiextensions.k8s.io/v1`: the response's kind and uid are checked.
    V1,
    /// `apiextensions.k8s.io/v1beta1`: checked for compatibility only by result.
    V1beta1,
}

impl ReviewVersion {
    /// The first of `conversionReviewVersions` kubefake speaks.
    pub fn pick(versions: &[String]) -> Option<ReviewVersion> {
        versions.iter().find_map(|v| match v.as_str() {
            "v1" => Some(ReviewVersion::V1),
            "v1beta1" => Some(ReviewVersion::V1beta1),
            _ => None,
        })
    }

    fn api_version(self) -> &'static str {
        match self {
            ReviewVersion::V1 => "apiextensions.k8s.io/v1",
            ReviewVersion::V1beta1 => "apiextensions.k8s.io/v1beta1",
        }
    }
}

/// Converts through a CRD's conversion webhook. See the module documentation.
pub struct WebhookConverter {
    client: Arc<WebhookClient>,
    /// The webhook's client configuration, or why it cannot be used (reported per conversion,
    /// as the apiserver reports a converter it could not build).
    config: Result<ClientConfig, String>,
    review: Option<ReviewVersion>,
}

impl WebhookConverter {
    /// A converter for the CRD conversion settings `conversion` (`spec.conversion`).
    pub fn new(client: Arc<WebhookClient>, conversion: &Value) -> WebhookConverter {
        let webhook = &conversion["webhook"];
        let config = ClientConfig::from_value(&webhook["clientConfig"]).map_err(|e| e.to_string());
        let versions: Vec<String> = webhook["conversionReviewVersions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect();
        WebhookConverter {
            client,
            config,
            review: ReviewVersion::pick(&versions),
        }
    }

    async fn call(&self, objects: Vec<Value>, to: &str) -> Result<Vec<Value>, String> {
        let config = self.config.as_ref().map_err(Clone::clone)?;
        let review = self
            .review
            .ok_or_else(|| "no supported conversion review versions".to_string())?;
        let uid = uuid::Uuid::new_v4().to_string();
        let body = json!({"kind": "ConversionReview", "apiVersion": review.api_version(),
            "request": {"uid": uid, "desiredAPIVersion": to, "objects": objects}});
        let response = self
            .client
            .post(config, &body, TIMEOUT)
            .await
            .map_err(|e| e.to_string())?;
        let converted = converted_objects(&response, review, &uid)?;
        Ok(converted)
    }
}

impl Converter for WebhookConverter {
    fn convert<'a>(
        &'a self,
        objects: Vec<Value>,
        to: &'a str,
    ) -> BoxFuture<'a, Result<Vec<Value>, ApiError>> {
        Box::pin(async move {
            let Some(first) = objects.first() else {
                return Ok(objects);
            };
            let gvk = gvk_string(first);
            let failed =
                |why: String| ApiError::plain(format!("conversion webhook for {gvk} {why}"));
            let converted = self
                .call(objects.clone(), to)
                .await
                .map_err(|e| failed(format!("failed: {e}")))?;
            if converted.len() != objects.len() {
                return Err(failed(format!(
                    "returned {} objects, expected {}",
                    converted.len(),
                    objects.len()
                )));
            }
            let single = objects.len() == 1;
            objects
                .iter()
                .zip(converted)
                .enumerate()
                .map(|(i, (original, out))| accept(original, out, to, single, i).map_err(&failed))
                .collect()
        })
    }
}

/// `GroupVersionKind.String()` of an object: `group/version, Kind=Kind`.
fn gvk_string(obj: &Value) -> String {
    format!(
        "{}, Kind={}",
        obj["apiVersion"].as_str().unwrap_or(""),
        obj["kind"].as_str().unwrap_or("")
    )
}

/// `getConvertedObjectsFromResponse`: the converted objects of a successful review.
fn converted_objects(
    response: &Value,
    review: ReviewVersion,
    uid: &str,
) -> Result<Vec<Value>, String> {
    if review == ReviewVersion::V1 {
        let got = gvk_string(response);
        if got != "apiextensions.k8s.io/v1, Kind=ConversionReview" {
            return Err(format!(
                "expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got {got}"
            ));
        }
    }
    let Some(resp) = response.get("response").filter(|r| r.is_object()) else {
        return Err("no response provided".into());
    };
    if review == ReviewVersion::V1 {
        let got = resp["uid"].as_str().unwrap_or("");
        if got != uid {
            return Err(format!("expected response.uid={uid:?}, got {got:?}"));
        }
    }
    let result = &resp["result"];
    let status = result["status"].as_str().unwrap_or("");
    if status != "Success" {
        return Err(match result["message"].as_str().filter(|m| !m.is_empty()) {
            Some(m) => m.to_string(),
            None => format!("response.result.status was '{status}', not 'Success'"),
        });
    }
    Ok(resp["convertedObjects"]
        .as_array()
        .cloned()
        .unwrap_or_default())
}

/// Checks one converted object against the one sent and restores its metadata. The wording
/// differs between a single object and a list, as the apiserver's does.
fn accept(
    original: &Value,
    mut out: Value,
    to: &str,
    single: bool,
    i: usize,
) -> Result<Value, String> {
    let at = if single {
        "invalid object at index 0".to_string()
    } else {
        format!("invalid converted object at index {i}")
    };
    let got = out["apiVersion"].as_str().unwrap_or("");
    if got != to {
        return Err(format!(
            "returned {at}: invalid groupVersion (expected {to}, received {got})"
        ));
    }
    let (want, got) = (
        original["kind"].as_str().unwrap_or(""),
        out["kind"].as_str().unwrap_or(""),
    );
    if want != got {
        return Err(format!(
            "returned {at}: invalid kind (expected {want}, received {got})"
        ));
    }
    if let Some(why) = changed_identity(original, &out) {
        return Err(if single {
            format!("returned invalid object: {why}")
        } else {
            format!("returned {at}: {why}")
        });
    }
    restore_object_meta(original, &mut out).map_err(|why| {
        if single {
            format!("returned invalid metadata: {why}")
        } else {
            format!("returned invalid metadata in object at index {i}: {why}")
        }
    })?;
    Ok(out)
}

/// `validateConvertedObject`: a webhook may not change what identifies the object.
fn changed_identity(original: &Value, out: &Value) -> Option<String> {
    let field = |v: &Value, path: &[&str]| {
        path.iter()
            .try_fold(v, |v, k| v.get(*k))
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    [
        ("kind", &["kind"][..]),
        ("name", &["metadata", "name"][..]),
        ("namespace", &["metadata", "namespace"][..]),
        ("UID", &["metadata", "uid"][..]),
    ]
    .into_iter()
    .find_map(|(what, path)| {
        let (e, a) = (field(original, path), field(out, path));
        (e != a).then(|| format!("must have the same {what}: {e} != {a}"))
    })
}

/// `restoreObjectMeta`: the original metadata, with the labels and annotations the webhook
/// returned (validated when they changed).
fn restore_object_meta(original: &Value, out: &mut Value) -> Result<(), String> {
    let Some(returned) = out.get("metadata") else {
        return Err("missing metadata in converted object".into());
    };
    let Some(returned) = returned.as_object().cloned() else {
        return Err(format!(
            "invalid metadata of type {} in converted object",
            go_type(returned)
        ));
    };
    let mut meta: Map<String, Value> = original["metadata"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let mut changed = Map::new();
    for key in ["labels", "annotations"] {
        match returned.get(key).filter(|v| !v.is_null()) {
            None => {
                meta.remove(key);
            }
            Some(Value::Object(m)) => {
                if let Some((k, v)) = m.iter().find(|(_, v)| !v.is_string()) {
                    return Err(format!(
                        "metadata.{key}[{k}] must be a string, but is {} in converted object",
                        go_type(v)
                    ));
                }
                if meta.get(key) != Some(&Value::Object(m.clone())) {
                    changed.insert(key.to_string(), Value::Object(m.clone()));
                }
                meta.insert(key.to_string(), Value::Object(m.clone()));
            }
            Some(other) => {
                return Err(format!(
                    "invalid metadata.{key} of type {} in converted object",
                    go_type(other)
                ))
            }
        }
    }
    let mut errs: Vec<StatusCause> = Vec::new();
    validate_labels_and_annotations(&changed, "metadata", &mut errs);
    if !errs.is_empty() {
        return Err(aggregate(&errs));
    }
    out["metadata"] = Value::Object(meta);
    Ok(())
}

/// `ErrorList.ToAggregate().Error()`: one error alone, several in brackets.
fn aggregate(errs: &[StatusCause]) -> String {
    let rendered: Vec<String> = errs
        .iter()
        .map(|e| {
            format!(
                "{}: {}",
                e.field
                    .replace("metadata.annotations", "metadata.annotation"),
                e.message
            )
        })
        .collect();
    match rendered.as_slice() {
        [one] => one.clone(),
        _ => format!("[{}]", rendered.join(", ")),
    }
}

/// The Go type a decoded JSON value has in an unstructured object.
fn go_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_i64() || n.is_u64() => "int64",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crontab(version: &str) -> Value {
        json!({"apiVersion": format!("stable.example.com/{version}"), "kind": "CronTab",
            "metadata": {"name": "a", "namespace": "default", "uid": "u1", "resourceVersion": "5",
                "labels": {"app": "x"}},
            "spec": {"image": "i"}})
    }

    #[test]
    fn review_versions() {
        let pick =
            |v: &[&str]| ReviewVersion::pick(&v.iter().map(|s| s.to_string()).collect::<Vec<_>>());
        assert_eq!(pick(&["v2", "v1beta1", "v1"]), Some(ReviewVersion::V1beta1));
        assert_eq!(pick(&["v1"]), Some(ReviewVersion::V1));
        assert_eq!(pick(&["v9"]), None);
    }

    #[test]
    fn responses_are_checked() {
        let ok = |objects: Value| {
            json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "response": {"uid": "id", "result": {"status": "Success"}, "convertedObjects": objects}})
        };
        assert_eq!(
            converted_objects(&ok(json!([1])), ReviewVersion::V1, "id"),
            Ok(vec![json!(1)])
        );
        assert_eq!(
            converted_objects(&ok(json!([])), ReviewVersion::V1, "other"),
            Err("expected response.uid=\"other\", got \"id\"".to_string())
        );
        let failed = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "response": {"uid": "id", "result": {"status": "Failure", "message": "cannot convert"}}});
        assert_eq!(
            converted_objects(&failed, ReviewVersion::V1, "id"),
            Err("cannot convert".to_string())
        );
        let bare = json!({"response": {"result": {"status": "Failure"}}});
        assert_eq!(
            converted_objects(&bare, ReviewVersion::V1beta1, "id"),
            Err("response.result.status was 'Failure', not 'Success'".to_string())
        );
        assert_eq!(
            converted_objects(&json!({}), ReviewVersion::V1, "id"),
            Err("expected webhook response of apiextensions.k8s.io/v1, Kind=ConversionReview, got , Kind=".to_string())
        );
    }

    #[test]
    fn converted_objects_keep_their_identity_and_metadata() {
        let original = crontab("v1");
        let mut out = crontab("v2");
        out["metadata"] = json!({"name": "a", "namespace": "default", "uid": "u1",
            "resourceVersion": "999", "labels": {"app": "y"}, "finalizers": ["x"]});
        let kept = accept(&original, out, "stable.example.com/v2", true, 0).expect("accepted");
        assert_eq!(
            kept["metadata"]["resourceVersion"], "5",
            "metadata restored"
        );
        assert_eq!(
            kept["metadata"]["labels"],
            json!({"app": "y"}),
            "labels from the webhook"
        );
        assert!(kept["metadata"].get("finalizers").is_none());

        let mut renamed = crontab("v2");
        renamed["metadata"]["name"] = json!("b");
        assert_eq!(
            accept(&original, renamed.clone(), "stable.example.com/v2", true, 0),
            Err("returned invalid object: must have the same name: a != b".to_string())
        );
        assert_eq!(
            accept(&original, renamed, "stable.example.com/v2", false, 3),
            Err(
                "returned invalid converted object at index 3: must have the same name: a != b"
                    .to_string()
            )
        );
        assert_eq!(
            accept(&original, crontab("v1"), "stable.example.com/v2", true, 0),
            Err("returned invalid object at index 0: invalid groupVersion (expected stable.example.com/v2, received stable.example.com/v1)".to_string())
        );
        let mut bad_label = crontab("v2");
        bad_label["metadata"]["labels"] = json!({"app": 1});
        assert_eq!(
            accept(&original, bad_label, "stable.example.com/v2", true, 0),
            Err("returned invalid metadata: metadata.labels[app] must be a string, but is int64 in converted object".to_string())
        );
    }
}
