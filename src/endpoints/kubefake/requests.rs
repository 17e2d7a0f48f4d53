//! `/kubefake/v1/requests`: the request log (`GET`, `{"items": [...]}` oldest first, filtered
//! by query parameters: `verb`, `group`, `version`, `resource`, `subresource`, `namespace`,
//! `name`, `user`, `userAgent` (a glob), `fieldManager`, `code`, `dryRun`, `writes`, `fault`),
//! and `DELETE` to clear it.

use serde_json::json;
use warp::http::StatusCode;
use warp::reply::Response;

use super::{json, Call, Items};
use crate::error::ApiError;
use crate::filters::request_log::RequestFilter;

/// `GET /kubefake/v1/requests?verb=update&...`.
pub fn list(call: &Call<'_>) -> Result<Response, ApiError> {
    let filter = RequestFilter::from_query(
        call.req
            .query
            .0
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str())),
    )
    .map_err(|e| ApiError::bad_request(e.to_string()))?;
    json(
        StatusCode::OK,
        &Items {
            items: call.state.requests.find(&filter),
        },
    )
}

/// `DELETE /kubefake/v1/requests`: answers how many records were forgotten.
pub fn clear(call: &Call<'_>) -> Result<Response, ApiError> {
    let cleared = call.state.requests.clear();
    json(StatusCode::OK, &json!({"cleared": cleared}))
}
