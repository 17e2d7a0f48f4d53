//! `GET`/`PUT`/`PATCH` (server-side apply included) of `/scale`: the object seen as an
//! `autoscaling/v1 Scale`. A write is made to the Scale, whose managedFields are the parent's
//! owners of the replicas ([`crate::apply::scale`]); the field manager records it there, and
//! the replicas, the Scale's resourceVersion (if any, as the precondition) and the mapped
//! entries go back into the object.

use std::sync::LazyLock;

use serde_json::{json, Value};
use warp::http::StatusCode;
use warp::reply::Response;

use bytes::Bytes;

use super::apply as ssa;
use super::negotiation::decode_body;
use super::patch::{patch_type, Patch};
use super::resource::Endpoint;
use crate::apply::scale::{to_parent, to_subresource, ReplicasPath};
use crate::apply::versions::single_version;
use crate::error::ApiError;
use crate::filters::request_info::Verb;
use crate::registry::apiextensions::ScaleSubresource;
use crate::registry::builtin::schema::LazySchema;
use crate::registry::object_meta::{meta_str, now_rfc3339};
use crate::registry::scale;
use crate::registry::store::{self as rest, Target, UpdateSource};
use crate::schema::Shape;

const SCALE_VERSION: &str = "autoscaling/v1";

/// The Scale's schema, for the field manager.
fn scale_schema() -> Option<Shape<'static>> {
    static SCHEMA: LazyLock<LazySchema> =
        LazyLock::new(|| LazySchema::builtin("io.k8s.api.autoscaling.v1.Scale"));
    SCHEMA.shape()
}

/// How a write makes the new Scale from the current one.
enum Change {
    /// PUT: the body.
    Replace(Value),
    /// PATCH: the patch applied.
    Patch(Patch),
    /// Server-side apply: the configuration merged by `manager`.
    Apply {
        config: Value,
        manager: String,
        force: bool,
    },
}

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
        verb => {
            let change = change(ep, cfg, verb)?;
            let write = |current: &Value| write_scale(ep, cfg, &change, current);
            let target = ep.res.subresource("scale").cloned().map(Target::Part);
            ep.update(target.unwrap_or(Target::Main), UpdateSource::Patch(&write))
                .await?
        }
    };
    let scale = scale::to_scale(cfg, &updated.value())?;
    ep.respond_json(StatusCode::OK, Bytes::from(scale.to_string()))
}

/// The change a write request asks for, decoded and checked before the object is read.
fn change(ep: &Endpoint<'_>, cfg: &ScaleSubresource, verb: Verb) -> Result<Change, ApiError> {
    if verb == Verb::Update {
        let scale = decode_body(ep.req, "Scale", true)?;
        let name = meta_str(&scale, "name");
        if !name.is_empty() && name != ep.name() {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({name}) does not match the name on the URL ({})",
                ep.name()
            )));
        }
        return Ok(Change::Replace(scale));
    }
    if !ssa::is_apply(ep.req) {
        let kind = patch_type(ep.req.header("content-type"), ep.res.patch_types)?;
        let patch = Patch::parse(kind, &ep.req.body, &ep.res.openapi.name, ep.ctx)?;
        return Ok(Change::Patch(patch));
    }
    let manager = ssa::required_manager(ep)?.to_string();
    let config = ssa::decode_config(ep, SCALE_VERSION, "Scale")?;
    if !cfg.tracks_managed_fields() {
        let why = "no corresponding type for autoscaling/v1, Kind=Scale";
        return Err(ssa::untyped_patch(&config, SCALE_VERSION, "Scale", why));
    }
    ssa::check_typed(&config, scale_schema(), SCALE_VERSION, "Scale")?;
    let force = ep.req.query.flag("force");
    Ok(Change::Apply {
        config,
        manager,
        force,
    })
}

/// The object after the change: the new Scale made from the current one, its managedFields
/// recorded, then written back.
fn write_scale(
    ep: &Endpoint<'_>,
    cfg: &ScaleSubresource,
    change: &Change,
    current: &Value,
) -> Result<Value, ApiError> {
    let api_version = ep.res.api_version();
    let replicas = ReplicasPath {
        version: &api_version,
        path: &cfg.spec_replicas_path,
        every_version: cfg.tracks_managed_fields(),
    };
    let mut old = scale::to_scale(cfg, current)?;
    to_subresource(current, &replicas, &mut old);
    let now = now_rfc3339();
    let schema = scale_schema();
    let new = match change {
        Change::Replace(body) => recorded(ep, cfg, &old, body.clone(), &now),
        Change::Patch(patch) => recorded(ep, cfg, &old, patch.apply(&old, ep.ctx)?, &now),
        Change::Apply {
            config,
            manager,
            force,
        } => single_version(SCALE_VERSION, |versions| {
            let applied = crate::apply::apply(
                Some(&old),
                config,
                manager,
                "scale",
                versions,
                *force,
                schema,
                &now,
            );
            applied.map_err(|c| c.to_api_error(&ep.res.group, &ep.res.plural, ep.name()))
        })?,
    };
    let desired = scale::desired_replicas(cfg, &new, ep.name())?;
    let mut out = current.clone();
    scale::set_replicas(cfg, &mut out, desired);
    let rv = meta_str(&new, "resourceVersion");
    if !rv.is_empty() {
        out["metadata"]["resourceVersion"] = json!(rv);
    }
    to_parent(current, &new, &replicas, &mut out);
    Ok(out)
}

/// A replaced or patched Scale with the write recorded in its managedFields by the request's
/// field manager. A custom resource's Scale records nothing: the apiserver's field manager
/// fails on it and clears them (so nobody owns the replicas after the write).
fn recorded(
    ep: &Endpoint<'_>,
    cfg: &ScaleSubresource,
    old: &Value,
    mut new: Value,
    now: &str,
) -> Value {
    if !cfg.tracks_managed_fields() {
        crate::apply::write_managed_fields(&mut new, &[]);
        return new;
    }
    match &ep.ctx.field_manager {
        Some(manager) => single_version(SCALE_VERSION, |versions| {
            crate::apply::record_update(
                Some(old),
                &mut new,
                manager,
                "scale",
                versions,
                scale_schema(),
                now,
            )
        }),
        None => {
            let entries = crate::apply::read_managed_fields(old).unwrap_or_default();
            crate::apply::write_managed_fields(&mut new, &entries);
        }
    }
    new
}
