//! `POST /kubefake/v1/snapshots` (201 `{"id": "..."}`), `DELETE /kubefake/v1/snapshots/{id}`,
//! `POST /kubefake/v1/snapshots/{id}/restore` and `POST /kubefake/v1/reset` (200
//! `{"resourceVersion": "...", "changes": n}`): see [`crate::tooling::snapshots`].

use serde_json::json;
use warp::http::StatusCode;
use warp::reply::Response;

use crate::endpoints::negotiation::json_value;
use crate::error::ApiError;
use crate::state::State;
use crate::tooling::snapshots::{self, Restored};

/// Takes a snapshot.
pub fn create(state: &State) -> Result<Response, ApiError> {
    let id = snapshots::take(state)?;
    Ok(json_value(StatusCode::CREATED, &json!({"id": id})))
}

/// Forgets a snapshot.
pub fn delete(state: &State, id: &str) -> Result<Response, ApiError> {
    snapshots::delete(state, id)?;
    Ok(json_value(StatusCode::OK, &json!({"id": id})))
}

/// Restores a snapshot.
pub async fn restore(state: &State, id: &str) -> Result<Response, ApiError> {
    Ok(restored(snapshots::restore(state, id).await?))
}

/// Returns to the start state.
pub async fn reset(state: &State) -> Result<Response, ApiError> {
    Ok(restored(snapshots::reset(state).await?))
}

fn restored(r: Restored) -> Response {
    let body = json!({"resourceVersion": r.resource_version.to_string(), "changes": r.changes});
    json_value(StatusCode::OK, &body)
}
