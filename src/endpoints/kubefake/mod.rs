//! kubefake's own HTTP API under `/kubefake/v1/` (a prefix no Kubernetes path uses): the test
//! tooling of [`crate::tooling`]. JSON in and out, every failure a `Status`. A dispatch table,
//! one line per route, one file per feature. When RBAC is on only `system:masters` (the
//! kubeconfig's admin) may use it, whatever roles say: it can change or show every object.

pub mod dump;
pub mod snapshots;

use std::sync::Arc;

use warp::reply::Response;

use super::negotiation::Request;
use crate::context::{UserInfo, MASTERS};
use crate::error::ApiError;
use crate::filters::authorization::{self, Attributes, Mode};
use crate::state::State;

/// The prefix of every route here.
pub const PREFIX: &str = "/kubefake/v1/";

/// Serves a request whose path starts with [`PREFIX`]; `path` is the rest.
pub async fn serve(
    state: &Arc<State>,
    req: &Request,
    user: &UserInfo,
    path: &str,
) -> Result<Response, ApiError> {
    authorize(state, req, user)?;
    let segments: Vec<&str> = path.trim_end_matches('/').split('/').collect();
    match (req.method.as_str(), segments.as_slice()) {
        ("POST", ["snapshots"]) => snapshots::create(state),
        ("DELETE", ["snapshots", id]) => snapshots::delete(state, id),
        ("POST", ["snapshots", id, "restore"]) => snapshots::restore(state, id).await,
        ("POST", ["reset"]) => snapshots::reset(state).await,
        ("GET", ["dump"]) => dump::get(state, req),
        _ => Err(ApiError::path_not_found()),
    }
}

/// Under RBAC, only the privileged group.
fn authorize(state: &State, req: &Request, user: &UserInfo) -> Result<(), ApiError> {
    if state.options.authorization == Mode::AlwaysAllow || user.groups.iter().any(|g| g == MASTERS)
    {
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
        "kubefake's API is for system:masters only",
    ))
}
