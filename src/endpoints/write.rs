//! Writes of a whole object or a patch: `POST` (create), `PUT` (update) and `PATCH` with a JSON
//! merge, JSON or strategic merge patch. Each decodes the body, hands it to the generic registry
//! store, and encodes what was stored in the requested version.

use serde_json::{json, Value};
use warp::http::StatusCode;
use warp::reply::Response;

use super::negotiation::{decode_body_fields, Request};
use super::patch::{patch_type, Patch};
use super::resource::Endpoint;
use crate::context::Context;
use crate::error::{field, ApiError};
use crate::registry::object_meta::meta_str;
use crate::registry::resource::{ApiResource, BodyCodec};
use crate::registry::store::{self as rest, UpdateSource};

/// `POST`: create an object.
pub async fn create(ep: &Endpoint<'_>) -> Result<Response, ApiError> {
    let obj = decode_object(&ep.res, ep.ctx, ep.req)?;
    let created = rest::create(ep.state, ep.ctx, &ep.res, ep.namespace(), obj).await?;
    ep.respond(StatusCode::CREATED, &created).await
}

/// `PUT`: replace an object (or its `/status` or `/finalize` part).
pub async fn update(ep: &Endpoint<'_>) -> Result<Response, ApiError> {
    let obj = decode_object(&ep.res, ep.ctx, ep.req)?;
    let updated = ep
        .update(ep.target.clone(), UpdateSource::Replace(obj))
        .await?;
    ep.respond(StatusCode::OK, &updated).await
}

/// `PATCH` with a merge, JSON or strategic merge patch; retried on conflicts, as the patch is
/// re-applied to the latest object.
pub async fn patch(ep: &Endpoint<'_>) -> Result<Response, ApiError> {
    let kind = patch_type(ep.req.header("content-type"), ep.res.patch_types)?;
    let patch = Patch::parse(kind, &ep.req.body, &ep.res.openapi.name, ep.ctx)?;
    // The patch applies to the object as the client sees it (in its version).
    let ctx = ep.ctx;
    let apply = move |current: &Value| patch.apply(current, ctx);
    let updated = ep
        .update(ep.target.clone(), UpdateSource::Patch(&apply))
        .await?;
    ep.respond(StatusCode::OK, &updated).await
}

/// Decodes a create/update body and checks its apiVersion and kind against the endpoint, as the
/// apiserver's decoder and `ValidateTypeMeta` do. Returns the object in the request's version.
pub fn decode_object(res: &ApiResource, ctx: &Context, req: &Request) -> Result<Value, ApiError> {
    let typed = res.decoding == BodyCodec::Typed;
    let (mut obj, duplicates) = decode_body_fields(req, &res.kind, typed)?;
    ctx.field_validation
        .report(ctx, "duplicate field", &duplicates, &res.kind, &res.version)?;
    if typed {
        default_type_meta(res, &mut obj);
    } else {
        require_type_meta(res, &obj, req)?;
    }
    check_type_meta(res, &obj, typed)?;
    check_metadata_shape(res, &obj)?;
    Ok(obj)
}

/// The prefix of the apiserver's decode errors: `Kind in version "v1" cannot be handled as a Kind`.
fn cannot_handle(res: &ApiResource) -> String {
    format!(
        "{} in version {:?} cannot be handled as a {}",
        res.kind, res.version, res.kind
    )
}

/// The typed decoder fills in a missing `apiVersion` and `kind`.
fn default_type_meta(res: &ApiResource, obj: &mut Value) {
    if obj["apiVersion"].as_str().is_none_or(str::is_empty) {
        obj["apiVersion"] = json!(res.api_version());
    }
    if obj["kind"].as_str().is_none_or(str::is_empty) {
        obj["kind"] = json!(res.kind);
    }
}

/// The unstructured decoder requires both.
fn require_type_meta(res: &ApiResource, obj: &Value, req: &Request) -> Result<(), ApiError> {
    let body = String::from_utf8_lossy(&req.body);
    for (key, name) in [("kind", "Kind"), ("apiVersion", "apiVersion")] {
        if obj[key].as_str().unwrap_or("").is_empty() {
            return Err(ApiError::bad_request(format!(
                "{}: Object '{name}' is missing in '{body}'",
                cannot_handle(res)
            )));
        }
    }
    Ok(())
}

/// `apiVersion` and `kind` must be the endpoint's.
fn check_type_meta(res: &ApiResource, obj: &Value, typed: bool) -> Result<(), ApiError> {
    let expected = res.api_version();
    let api_version = obj["apiVersion"].as_str().unwrap_or("");
    if api_version != expected {
        return Err(ApiError::bad_request(format!(
            "the API version in the data ({api_version}) does not match the expected API version ({expected})"
        )));
    }
    let kind = obj["kind"].as_str().unwrap_or("");
    if kind == res.kind {
        return Ok(());
    }
    if !typed {
        return Err(ApiError::invalid(
            &res.group,
            kind,
            meta_str(obj, "name"),
            vec![field::invalid(
                "kind",
                &json!(kind),
                &format!("must be {}", res.kind),
            )],
        ));
    }
    Err(ApiError::bad_request(format!(
        "{kind} in version {:?} cannot be handled as a {}: no kind {kind:?} is registered for version {:?} in scheme",
        res.version, res.kind, expected
    )))
}

/// `metadata` must decode into ObjectMeta: an object whose label and annotation maps are
/// `map[string]string`.
fn check_metadata_shape(res: &ApiResource, obj: &Value) -> Result<(), ApiError> {
    if !obj.get("metadata").is_none_or(Value::is_object) {
        return Err(ApiError::bad_request(format!(
            "{}: .metadata must be an object",
            cannot_handle(res)
        )));
    }
    for map in ["labels", "annotations"] {
        let bad = obj["metadata"]
            .get(map)
            .filter(|m| !m.is_null())
            .is_some_and(|m| {
                m.as_object()
                    .is_none_or(|o| o.values().any(|v| !v.is_string()))
            });
        if bad {
            let found = if obj["metadata"][map].is_object() {
                "value"
            } else {
                "non-object"
            };
            return Err(ApiError::bad_request(format!(
                "{}: json: cannot unmarshal {found} into Go struct field ObjectMeta.metadata.{map} of type string",
                cannot_handle(res)
            )));
        }
    }
    Ok(())
}
