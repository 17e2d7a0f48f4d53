//! Requests to action subresources (`pods/binding`, `pods/eviction`, `pods/log`): the body, when
//! the action reads one, is decoded as its kind; the action answers with a status code and a
//! JSON document, rendered in the negotiated format.

use std::sync::Arc;

use bytes::Bytes;
use warp::http::StatusCode;
use warp::reply::Response;

use super::negotiation::decode_body;
use super::resource::Endpoint;
use crate::error::ApiError;
use crate::registry::resource::{Action, ActionCall};

/// Serves a request to an action subresource.
pub async fn serve(ep: &Endpoint<'_>, action: &Arc<dyn Action>) -> Result<Response, ApiError> {
    let body = match action.body_kind() {
        Some(kind) if ep.info.verb.as_str() == "create" => Some(decode_body(ep.req, kind, true)?),
        _ => None,
    };
    let call = ActionCall {
        state: ep.state,
        ctx: ep.ctx,
        res: &ep.res,
        namespace: ep.namespace(),
        name: ep.name(),
        verb: ep.info.verb.as_str(),
        body,
        query: &ep.req.query.0,
    };
    let (code, json) = action.serve(call).await?;
    let status = StatusCode::from_u16(code).unwrap_or(StatusCode::OK);
    ep.respond_json(status, Bytes::from(json.to_string()))
}
