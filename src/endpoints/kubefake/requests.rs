//! `/kubefake/v1/requests`: the request log (`GET`, `{"items": [...]}` oldest first, filtered
//! by query parameters: `verb`, `group`, `version`, `resource`, `subresource`, `namespace`,
//! `name`, `user`, `userAgent` (a glob), `fieldManager`, `code`, `dryRun`, `writes`, `fault`;
//! `limit=N` keeps the newest N of those, so that a poller such as the live view does not
//! carry the whole log every time), and `DELETE` to clear it.

use serde_json::json;
use warp::http::StatusCode;
use warp::reply::Response;

use super::{json, Call, Items};
use crate::error::ApiError;
use crate::filters::request_log::RequestFilter;

/// `GET /kubefake/v1/requests?verb=update&...&limit=N`.
pub fn list(call: &Call<'_>) -> Result<Response, ApiError> {
    let query = &call.req.query.0;
    let filter = RequestFilter::from_query(
        query
            .iter()
            .filter(|(k, _)| k != "limit")
            .map(|(k, v)| (k.as_str(), v.as_str())),
    )
    .map_err(|e| ApiError::bad_request(e.to_string()))?;
    let limit = match call.req.query.get("limit") {
        Some(text) => Some(text.parse::<usize>().map_err(|e| {
            ApiError::bad_request(format!("limit {text:?} is not a number of requests: {e}"))
        })?),
        None => None,
    };
    let mut items = call.state.requests.find(&filter);
    if let Some(newest) = limit {
        items.drain(..items.len().saturating_sub(newest));
    }
    json(StatusCode::OK, &Items { items })
}

/// `DELETE /kubefake/v1/requests`: answers how many records were forgotten.
pub fn clear(call: &Call<'_>) -> Result<Response, ApiError> {
    let cleared = call.state.requests.clear();
    json(StatusCode::OK, &json!({"cleared": cleared}))
}
