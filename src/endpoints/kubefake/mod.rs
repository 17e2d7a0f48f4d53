//! kubefake's own HTTP API under the reserved prefix `/kubefake/v1/` (no Kubernetes path
//! starts with it): JSON in and out, every error a `Status`. It is reached before the
//! Kubernetes path parsing, and never faulted or recorded in the request log.
//!
//! It is test tooling that can make the server fail and reveals every request, so under RBAC
//! only members of `system:masters` (the kubeconfig's admin) may use it; under AlwaysAllow
//! everyone may, as everyone may do anything else.
//!
//! [`route`] is a plain dispatch table, one line per route (pure: a wrong method on a known
//! path is told from an unknown path, 405 from 404), and [`serve`] calls the route's handler in
//! one file per feature: [`faults`], [`requests`], [`snapshots`] (snapshots, restore, reset)
//! and [`dump`], the last two over [`crate::tooling`]; [`ui`], the live view, a page over all
//! of them.

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
    let Some(route) = route(&req.method, &path) else {
        return Err(no_route(req, &path));
    };
    let call = Call { state, req };
    match route {
        Route::ListFaults => faults::list(&call),
        Route::AddFault => faults::add(&call),
        Route::ClearFaults => faults::clear(&call),
        Route::GetFault(id) => faults::get(&call, id),
        Route::RemoveFault(id) => faults::remove(&call, id),
        Route::ListRequests => requests::list(&call),
        Route::ClearRequests => requests::clear(&call),
        Route::TakeSnapshot => snapshots::create(state),
        Route::DeleteSnapshot(id) => snapshots::delete(state, id),
        Route::RestoreSnapshot(id) => snapshots::restore(state, id).await,
        Route::Reset => snapshots::reset(state).await,
        Route::Dump => dump::get(state, req),
        Route::Ui(rest) => ui::get(req, rest),
    }
}

/// One of kubefake's routes, with the id its path names.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route<'p> {
    /// `GET faults`
    ListFaults,
    /// `POST faults`
    AddFault,
    /// `DELETE faults`
    ClearFaults,
    /// `GET faults/{id}`
    GetFault(&'p str),
    /// `DELETE faults/{id}`
    RemoveFault(&'p str),
    /// `GET requests`
    ListRequests,
    /// `DELETE requests`
    ClearRequests,
    /// `POST snapshots`
    TakeSnapshot,
    /// `DELETE snapshots/{id}`
    DeleteSnapshot(&'p str),
    /// `POST snapshots/{id}/restore`
    RestoreSnapshot(&'p str),
    /// `POST reset`
    Reset,
    /// `GET dump`
    Dump,
    /// `GET ui/...`: the live view's files
    Ui(&'p [&'p str]),
}

/// The methods any route is served with.
const METHODS: [&str; 3] = ["GET", "POST", "DELETE"];

/// The dispatch table: a method and the path's segments under `/kubefake/v1/` to a route.
pub fn route<'p>(method: &str, path: &'p [&'p str]) -> Option<Route<'p>> {
    Some(match (method, path) {
        ("GET", ["faults"]) => Route::ListFaults,
        ("POST", ["faults"]) => Route::AddFault,
        ("DELETE", ["faults"]) => Route::ClearFaults,
        ("GET", ["faults", id]) => Route::GetFault(id),
        ("DELETE", ["faults", id]) => Route::RemoveFault(id),
        ("GET", ["requests"]) => Route::ListRequests,
        ("DELETE", ["requests"]) => Route::ClearRequests,
        ("POST", ["snapshots"]) => Route::TakeSnapshot,
        ("DELETE", ["snapshots", id]) => Route::DeleteSnapshot(id),
        ("POST", ["snapshots", id, "restore"]) => Route::RestoreSnapshot(id),
        ("POST", ["reset"]) => Route::Reset,
        ("GET", ["dump"]) => Route::Dump,
        ("GET", ["ui", rest @ ..]) => Route::Ui(rest),
        _ => return None,
    })
}

/// The methods a path is served with: none for an unknown path.
pub fn allowed_methods(path: &[&str]) -> Vec<&'static str> {
    let served = |method: &&str| route(method, path).is_some();
    METHODS.into_iter().filter(served).collect()
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

/// 405 for a known path asked with another method, 404 for an unknown one.
fn no_route(req: &Request, path: &[&str]) -> ApiError {
    let allowed = allowed_methods(path);
    if !allowed.is_empty() {
        let mut err = ApiError::method_not_allowed();
        err.message = format!(
            "{} (kubefake serves {} with {} only)",
            err.message,
            req.path,
            allowed.join(", ")
        );
        return err;
    }
    let mut err = ApiError::path_not_found();
    err.message = format!(
        "kubefake serves no {} {}: see the README for the routes under {V1}",
        req.method, req.path
    );
    err
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("GET", "faults", Some(Route::ListFaults))]
    #[case("POST", "faults", Some(Route::AddFault))]
    #[case("DELETE", "faults", Some(Route::ClearFaults))]
    #[case("GET", "faults/fault-1", Some(Route::GetFault("fault-1")))]
    #[case("DELETE", "faults/fault-1", Some(Route::RemoveFault("fault-1")))]
    #[case("GET", "requests", Some(Route::ListRequests))]
    #[case("DELETE", "requests", Some(Route::ClearRequests))]
    #[case("POST", "snapshots", Some(Route::TakeSnapshot))]
    #[case("DELETE", "snapshots/s-1", Some(Route::DeleteSnapshot("s-1")))]
    #[case("POST", "snapshots/s-1/restore", Some(Route::RestoreSnapshot("s-1")))]
    #[case("POST", "reset", Some(Route::Reset))]
    #[case("GET", "dump", Some(Route::Dump))]
    #[case("GET", "ui/app.js", Some(Route::Ui(&["app.js"])))]
    #[case("POST", "ui", None)]
    #[case("GET", "reset", None)]
    #[case("PUT", "faults", None)]
    #[case("GET", "nothing", None)]
    #[case("POST", "snapshots/s-1/restore/more", None)]
    fn the_dispatch_table(
        #[case] method: &str,
        #[case] path: &str,
        #[case] want: Option<Route<'static>>,
    ) {
        let segments: Vec<&str> = path.split('/').collect();
        assert_eq!(route(method, &segments), want);
    }

    #[rstest]
    #[case("reset", &["POST"])]
    #[case("faults", &["GET", "POST", "DELETE"])]
    #[case("faults/x", &["GET", "DELETE"])]
    #[case("snapshots/x", &["DELETE"])]
    #[case("ui", &["GET"])]
    #[case("nothing", &[])]
    #[case("", &[])]
    fn allowed_methods_tell_405_from_404(#[case] path: &str, #[case] want: &[&str]) {
        let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        assert_eq!(allowed_methods(&segments), want);
    }
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
