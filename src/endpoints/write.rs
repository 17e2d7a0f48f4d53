//! Writes of a whole object or a patch: `POST` (create), `PUT` (update) and `PATCH` with a JSON
//! merge, JSON or strategic merge patch. Each decodes the body, hands it to the generic registry
//! store, and encodes what was stored in the requested version.

use serde_json::{json, Value};
use warp::http::StatusCode;
use warp::reply::Response;

use super::negotiation::{decode_body_fields, json_response, Request};
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
    Ok(json_response(
        StatusCode::CREATED,
        ep.res.codec.encode(&created).await?,
    ))
}

/// `PUT`: replace an object (or its `/status` or `/finalize` part).
pub async fn update(ep: &Endpoint<'_>) -> Result<Response, ApiError> {
    let obj = decode_object(&ep.res, ep.ctx, ep.req)?;
    let updated = rest::update(
        ep.state,
        ep.ctx,
        &ep.res,
        ep.namespace(),
        ep.name(),
        ep.target.clone(),
        UpdateSource::Replace(obj),
    )
    .await?;
    Ok(json_response(
        StatusCode::OK,
        ep.res.codec.encode(&updated).await?,
    ))
}

/// `PATCH` with a merge, JSON or strategic merge patch; retried on conflicts, as the patch is
/// re-applied to the latest object.
pub async fn patch(ep: &Endpoint<'_>) -> Result<Response, ApiError> {
    let kind = patch_type(ep.req.header("content-type"), ep.res.patch_types)?;
    let patch = Patch::parse(kind, &ep.req.body)?;
    // The patch applies to the object as the client sees it (in its version).
    let apply = move |current: &Value| patch.apply(current);
    let updated = rest::update(
        ep.state,
        ep.ctx,
        &ep.res,
        ep.namespace(),
        ep.name(),
        ep.target.clone(),
        UpdateSource::Patch(&apply),
    )
    .await?;
    Ok(json_response(
        StatusCode::OK,
        ep.res.codec.encode(&updated).await?,
    ))
}

/// Decodes a create/update body and checks its apiVersion and kind against the endpoint, as the
/// apiserver's decoder and `ValidateTypeMeta` do. Returns the object in the request's version.
pub fn decode_object(res: &ApiResource, ctx: &Context, req: &Request) -> Result<Value, ApiError> {
    let typed = res.decoding == BodyCodec::Typed;
    let (mut obj, duplicates) = decode_body_fields(req, &res.kind, typed)?;
    ctx.field_validation
        .report(ctx, "duplicate field", &duplicates, &res.kind, &res.version)?;
    let expected = res.api_version();
    let api_version = obj
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let kind = obj
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let body = String::from_utf8_lossy(&req.body);
    if !typed {
        if kind.is_empty() {
            return Err(ApiError::bad_request(format!(
                "{} in version {:?} cannot be handled as a {}: Object 'Kind' is missing in '{}'",
                res.kind, res.version, res.kind, body
            )));
        }
        if api_version.is_empty() {
            return Err(ApiError::bad_request(format!(
                "{} in version {:?} cannot be handled as a {}: Object 'apiVersion' is missing in '{}'",
                res.kind, res.version, res.kind, body
            )));
        }
    } else {
        if api_version.is_empty() {
            obj["apiVersion"] = json!(expected);
        }
        if kind.is_empty() {
            obj["kind"] = json!(res.kind);
        }
    }
    let api_version = obj["apiVersion"].as_str().unwrap_or("").to_string();
    if api_version != expected {
        return Err(ApiError::bad_request(format!(
            "the API version in the data ({api_version}) does not match the expected API version ({expected})"
        )));
    }
    let kind = obj["kind"].as_str().unwrap_or("").to_string();
    if kind != res.kind {
        if !typed {
            return Err(ApiError::invalid(
                &res.group,
                &kind,
                meta_str(&obj, "name"),
                vec![field::invalid(
                    "kind",
                    &json!(kind),
                    &format!("must be {}", res.kind),
                )],
            ));
        }
        return Err(ApiError::bad_request(format!(
            "{kind} in version {:?} cannot be handled as a {}: no kind {kind:?} is registered for version {:?} in scheme",
            res.version, res.kind, expected
        )));
    }
    if !obj.get("metadata").is_none_or(Value::is_object) {
        return Err(ApiError::bad_request(format!(
            "{} in version {:?} cannot be handled as a {}: .metadata must be an object",
            res.kind, res.version, res.kind
        )));
    }
    // ObjectMeta's maps are map[string]string: anything else does not decode.
    for map in ["labels", "annotations"] {
        let bad = obj["metadata"]
            .get(map)
            .filter(|m| !m.is_null())
            .is_some_and(|m| {
                m.as_object()
                    .is_none_or(|o| o.values().any(|v| !v.is_string()))
            });
        if bad {
            return Err(ApiError::bad_request(format!(
                "{} in version {:?} cannot be handled as a {}: json: cannot unmarshal {} into Go struct field ObjectMeta.metadata.{map} of type string",
                res.kind, res.version, res.kind,
                if obj["metadata"][map].is_object() { "value" } else { "non-object" }
            )));
        }
    }
    Ok(obj)
}
