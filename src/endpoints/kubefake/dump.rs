//! `GET /kubefake/v1/dump[?namespace=&group=&resource=&managedFields=true]`: the objects as
//! multi-document YAML (`application/yaml`); see [`crate::tooling::dump`].

use warp::http::{self, StatusCode};
use warp::reply::Response;

use crate::endpoints::negotiation::Request;
use crate::error::ApiError;
use crate::state::State;
use crate::tooling::dump::{render, DumpFilter};

/// The dump of the current state.
pub fn get(state: &State, req: &Request) -> Result<Response, ApiError> {
    let filter = DumpFilter::from_query(|k| req.query.get(k));
    let yaml = render(&state.store.snapshot(), &filter).map_err(ApiError::internal)?;
    let mut resp = Response::new(yaml.into());
    *resp.status_mut() = StatusCode::OK;
    resp.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/yaml"),
    );
    Ok(resp)
}
