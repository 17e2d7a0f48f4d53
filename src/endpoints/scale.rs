//! `GET`/`PUT`/`PATCH` of `/scale`: the object seen as an `autoscaling/v1 Scale`; writes change
//! only the replicas, with the Scale's resourceVersion (if any) as the precondition.

use serde_json::{json, Value};
use warp::http::StatusCode;
use warp::reply::Response;

use bytes::Bytes;

use super::negotiation::decode_body;
use super::patch::{patch_type, Patch};
use super::resource::Endpoint;
use crate::error::ApiError;
use crate::filters::request_info::Verb;
use crate::registry::apiextensions::ScaleSubresource;
use crate::registry::scale;
use crate::registry::store::{self as rest, Target, UpdateSource};
use crate::store::StoredObject;

/// Serves a `/scale` request.
pub async fn serve(ep: &Endpoint<'_>) -> Result<Response, ApiError> {
    let Some(cfg) = ep.res.scale() else {
        return Err(ApiError::not_found(
            &ep.res.group,
            &ep.res.plural,
            ep.name(),
        ));
    };
    let updated = match ep.info.verb {
        Verb::Get => rest::get(ep.state, &ep.res, ep.namespace(), ep.name())?,
        Verb::Update => {
            let scale = decode_body(ep.req, "Scale", true)?;
            let name = scale["metadata"]["name"].as_str().unwrap_or("");
            if !name.is_empty() && name != ep.name() {
                return Err(ApiError::bad_request(format!(
                    "the name of the object ({name}) does not match the name on the URL ({})",
                    ep.name()
                )));
            }
            let apply = |current: &Value| apply_scale(cfg, ep.name(), current, &scale);
            write(ep, &apply).await?
        }
        _ => {
            let kind = patch_type(ep.req.header("content-type"), ep.res.patch_types)?;
            let patch = Patch::parse(kind, &ep.req.body, &ep.res.openapi.name, ep.ctx)?;
            let apply = |current: &Value| {
                let scale = patch.apply(&scale::to_scale(cfg, current)?, ep.ctx)?;
                apply_scale(cfg, ep.name(), current, &scale)
            };
            write(ep, &apply).await?
        }
    };
    let scale = scale::to_scale(cfg, &updated.value())?;
    ep.respond_json(StatusCode::OK, Bytes::from(scale.to_string()))
}

async fn write(
    ep: &Endpoint<'_>,
    apply: &(dyn Fn(&Value) -> Result<Value, ApiError> + Sync),
) -> Result<std::sync::Arc<StoredObject>, ApiError> {
    ep.update(Target::Main, UpdateSource::Patch(apply)).await
}

/// The new object from a Scale: the replicas written at the spec replicas path, the Scale's
/// resourceVersion (if any) as the precondition.
fn apply_scale(
    cfg: &ScaleSubresource,
    name: &str,
    current: &Value,
    scale: &Value,
) -> Result<Value, ApiError> {
    let replicas = scale::desired_replicas(cfg, scale, name)?;
    let mut out = current.clone();
    scale::set_replicas(cfg, &mut out, replicas);
    let rv = scale["metadata"]["resourceVersion"].as_str().unwrap_or("");
    if !rv.is_empty() {
        out["metadata"]["resourceVersion"] = json!(rv);
    }
    Ok(out)
}
