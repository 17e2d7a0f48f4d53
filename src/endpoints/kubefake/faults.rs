//! `/kubefake/v1/faults`: add (`POST`, answers 201 `{"id": ...}`), list (`GET`, each rule
//! with `id`, `matched` and `fired`), read one, and remove one (`DELETE .../{id}`) or all.

use serde_json::json;
use warp::http::StatusCode;
use warp::reply::Response;

use super::{json, Call, Items};
use crate::error::ApiError;
use crate::filters::faults::{Fault, FaultError};

/// `GET /kubefake/v1/faults`: `{"items": [...]}` in the order they are tried.
pub fn list(call: &Call<'_>) -> Result<Response, ApiError> {
    json(
        StatusCode::OK,
        &Items {
            items: call.state.faults.list(),
        },
    )
}

/// `POST /kubefake/v1/faults`: 201 `{"id": ...}`, 400 for a rule that does not hold.
pub fn add(call: &Call<'_>) -> Result<Response, ApiError> {
    let fault = Fault::from_json(&call.req.body).map_err(refusal)?;
    let id = call.state.faults.add(fault).map_err(refusal)?;
    json(StatusCode::CREATED, &json!({"id": id}))
}

/// `GET /kubefake/v1/faults/{id}`.
pub fn get(call: &Call<'_>, id: &str) -> Result<Response, ApiError> {
    match call.state.faults.get(id) {
        Some(status) => json(StatusCode::OK, &status),
        None => Err(refusal(FaultError::NotFound(id.into()))),
    }
}

/// `DELETE /kubefake/v1/faults/{id}`: the rule as it was, with its counts.
pub fn remove(call: &Call<'_>, id: &str) -> Result<Response, ApiError> {
    let removed = call.state.faults.remove(id).map_err(refusal)?;
    json(StatusCode::OK, &removed)
}

/// `DELETE /kubefake/v1/faults`: removes every rule.
pub fn clear(call: &Call<'_>) -> Result<Response, ApiError> {
    call.state.faults.clear();
    json(StatusCode::OK, &Items { items: [(); 0] })
}

fn refusal(err: FaultError) -> ApiError {
    match err {
        FaultError::NotFound(_) => {
            let mut e = ApiError::path_not_found();
            e.message = err.to_string();
            e
        }
        _ => ApiError::bad_request(err.to_string()),
    }
}
