//! kubefake's own HTTP API under the reserved prefix `/kubefake/v1/` (no Kubernetes path
//! starts with it): JSON in and out, every error a `Status`. It is reached before the
//! Kubernetes path parsing, and never faulted or recorded in the request log.
//!
//! It is test tooling that can make the server fail and reveals every request, so under RBAC
//! only members of `system:masters` (the kubeconfig's admin) may use it; under AlwaysAllow
//! everyone may, as everyone may do anything else.
//!
//! [`serve`] is a plain dispatch table, one line per route, to one file per feature:
//! [`faults`], [`requests`], [`snapshots`] (snapshots, restore, reset) and [`dump`], the last
//! two over [`crate::tooling`]; [`ui`], the live view, a page over all of them.

pub mod dump;
pub mod faults;
pub mod requests;
pub mod snapshots;
pub mod ui;

use std::sync::Arc;

use serde::Serialize;
use warp::http::StatusCode;
use warp::reply::Response;

use super::negotiation::{json_response, Request};
use crate::context::{UserInfo, MASTERS};
use crate::error::ApiError;
use crate::filters::authorization::{self, Attributes, Mode};
use crate::state::State;

/// The reserved prefix.
pub const PREFIX: &str = "/kubefake/";

/// The prefix of this version of the API.
const V1: &str = "/kubefake/v1/";

/// Whether a path is kubefake's own.
pub fn owns(path: &str) -> bool {
    path.starts_with(PREFIX) || path == "/kubefake"
}

/// What every route gets: the server and the request.
pub struct Call<'a> {
    /// The server.
    pub state: &'a Arc<State>,
    /// The request.
    pub req: &'a Request,
}

/// Serves a request under [`PREFIX`].
pub async fn serve(
    state: &Arc<State>,
    req: &Request,
    user: &UserInfo,
) -> Result<Response, ApiError> {
    authorize(state.options.authorization, req, user)?;
    let rest = req.path.strip_prefix(V1).unwrap_or("");
    let path: Vec<&str> = rest.split('/').filter(|s| !s.is_empty()).collect();
    let call = Call { state, req };
    match (req.method.as_str(), path.as_slice()) {
        ("GET", ["faults"]) => faults::list(&call),
        ("POST", ["faults"]) => faults::add(&call),
        ("DELETE", ["faults"]) => faults::clear(&call),
        ("GET", ["faults", id]) => faults::get(&call, id),
        ("DELETE", ["faults", id]) => faults::remove(&call, id),
        ("GET", ["requests"]) => requests::list(&call),
        ("DELETE", ["requests"]) => requests::clear(&call),
        ("POST", ["snapshots"]) => snapshots::create(state),
        ("DELETE", ["snapshots", id]) => snapshots::delete(state, id),
        ("POST", ["snapshots", id, "restore"]) => snapshots::restore(state, id).await,
        ("POST", ["reset"]) => snapshots::reset(state).await,
        ("GET", ["dump"]) => dump::get(state, req),
        ("GET", ["ui", rest @ ..]) => ui::get(req, rest),
        _ => Err(no_route(req)),
    }
}

/// Only `system:masters` under RBAC; anyone under AlwaysAllow.
fn authorize(mode: Mode, req: &Request, user: &UserInfo) -> Result<(), ApiError> {
    if mode == Mode::AlwaysAllow || user.groups.iter().any(|g| g == MASTERS) {
        return Ok(());
    }
    let attrs = Attributes {
        verb: req.method.to_ascii_lowercase(),
        path: req.path.clone(),
        ..Attributes::default()
    };
    Err(authorization::forbidden(
        user,
        &attrs,
        "kubefake's test API is for members of system:masters only",
    ))
}

fn no_route(req: &Request) -> ApiError {
    let mut err = ApiError::path_not_found();
    err.message = format!(
        "kubefake serves no {} {}: see the README for the routes under {V1}",
        req.method, req.path
    );
    err
}

/// A list answer, `{"items": [...]}`, each item's fields in their declared order.
#[derive(Serialize)]
pub struct Items<T: Serialize> {
    /// The items.
    pub items: T,
}

/// A JSON answer.
pub fn json(status: StatusCode, body: &impl Serialize) -> Result<Response, ApiError> {
    let bytes = serde_json::to_vec(body).map_err(ApiError::internal)?;
    Ok(json_response(status, bytes))
}
