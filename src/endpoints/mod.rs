//! The HTTP endpoints: [`handle`] turns one request into one response. It builds the request's
//! [`Context`], resolves what the request names (a discovery document or a resource), hands it
//! to one thin function per verb family, and turns every error, and every panic, into a `Status`.
//!
//! - [`discovery`]: `/version`, health, discovery and OpenAPI documents.
//! - [`resource`]: resolves the resource, scope, subresource and verb, then dispatches to
//!   [`read`] (get, list), [`write`](mod@write) (create, update, patch), [`apply`] (server-side apply),
//!   [`delete`] (delete, deletecollection), [`watch`], [`scale`] and [`action`] (subresources
//!   served by their own code: `pods/binding`, `pods/log`).
//! - [`kubefake`]: kubefake's own API under `/kubefake/v1/` (snapshots, reset, dump).
//! - [`options`] (query parameters and `DeleteOptions`), [`negotiation`] (media types, bodies,
//!   responses), [`patch`] (patch documents), [`json_dups`] and [`protobuf`] (decoders).

pub mod accept;
pub mod action;
pub mod apply;
pub mod delete;
pub mod discovery;
pub mod health;
pub mod json_dups;
pub mod kubefake;
pub mod list_body;
pub mod metrics;
pub mod negotiation;
pub mod options;
pub mod patch;
pub mod protobuf;
pub mod read;
pub mod resource;
pub mod scale;
pub mod watch;
pub mod write;

use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures_util::FutureExt;
use warp::http;
use warp::reply::Response;

use crate::context::{warning_header_value, Context, UserInfo};
use crate::error::ApiError;
use crate::filters::authentication::Credentials;
use crate::filters::authorization::{self, Attributes};
use crate::filters::{impersonation, request_info};
use crate::state::State;
use negotiation::{error_response, Request};

/// Handles one request. Never fails: every error becomes a `Status` response, and so does a
/// panic anywhere below (500 `InternalError`; the panicking step committed nothing, and the
/// server keeps serving).
pub async fn handle(state: Arc<State>, req: Request) -> Response {
    let audit_id = new_audit_id();
    let creds = Credentials {
        headers: &req.headers,
        peer: req.peer.as_deref(),
        store: &state.store,
    };
    let user = match identify(&state, &req, &creds) {
        Ok(user) => user,
        Err(err) => return with_audit_id(error_response(&err), &audit_id),
    };
    let mut ctx = Context::request(audit_id, user);
    let started = std::time::Instant::now();
    let routed = AssertUnwindSafe(route(&state, &req, &mut ctx, started)).catch_unwind();
    let outcome = if off_runtime(&req) {
        // Decoding, schema work and encoding of a large body take CPU time in proportion to
        // it: the runtime's worker hands its other tasks to a new worker meanwhile.
        tokio::task::block_in_place(|| tokio::runtime::Handle::current().block_on(routed))
    } else {
        routed.await
    };
    let mut resp = match outcome {
        Ok(Ok(resp)) => resp,
        Ok(Err(err)) => error_response(&err),
        Err(panic) => {
            tracing::error!(
                method = %req.method,
                path = %req.path,
                audit_id = %ctx.audit_id,
                panic = panic_message(&panic),
                "a request panicked"
            );
            error_response(&ApiError::internal(
                "This request caused apiserver to panic. Look in the logs for details.",
            ))
        }
    };
    let headers = resp.headers_mut();
    for w in ctx.warnings() {
        if let Ok(v) = http::HeaderValue::from_str(&warning_header_value(&w)) {
            headers.append("warning", v);
        }
    }
    tracing::debug!(method = %req.method, path = %req.path, status = resp.status().as_u16(), "request");
    with_audit_id(resp, &ctx.audit_id)
}

/// Who the request acts as: the authenticated user, or the user it may impersonate.
fn identify(state: &State, req: &Request, creds: &Credentials<'_>) -> Result<UserInfo, ApiError> {
    let user = state.options.authentication.authenticate(creds)?;
    let mode = state.options.authorization;
    let authorize =
        |attrs: &Attributes| authorization::authorize(mode, &state.store.snapshot(), &user, attrs);
    Ok(impersonation::impersonate(&req.headers, &user, authorize)?.unwrap_or(user))
}

fn with_audit_id(mut resp: Response, audit_id: &str) -> Response {
    if let Ok(v) = http::HeaderValue::from_str(audit_id) {
        resp.headers_mut().insert("audit-id", v);
    }
    resp
}

async fn route(
    state: &Arc<State>,
    req: &Request,
    ctx: &mut Context,
    started: std::time::Instant,
) -> Result<Response, ApiError> {
    let info = request_info::resolve(&req.method, &req.path, req.query.flag("watch"));
    let selector = req.query.get("fieldSelector").unwrap_or("");
    let asked = authorization::Request {
        info: &info,
        method: &req.method,
        path: &req.path,
        field_selector: selector,
    };
    authorization::check(state.options.authorization, &state.store, &ctx.user, &asked)?;
    if let Some(rest) = req.path.strip_prefix(kubefake::PREFIX) {
        return kubefake::serve(state, req, &ctx.user, rest).await;
    }
    if info.is_resource_request {
        ctx.request_name = Some(info.name.clone());
        let served = resource::serve(state, req, &info, ctx).await;
        metrics::record(state, req, &info, &served, started);
        return served;
    }
    let served = discovery::serve(state, req);
    metrics::record(state, req, &info, &served, started);
    served
}

/// Request bodies above this size are handled off the async runtime's worker threads.
pub const LARGE_BODY_BYTES: usize = 256 * 1024;

/// Whether a request is handled with [`tokio::task::block_in_place`]: its body is larger than
/// [`LARGE_BODY_BYTES`] and the runtime has worker threads to hand the other tasks to (a
/// current-thread runtime, as in unit tests, handles it inline).
fn off_runtime(req: &Request) -> bool {
    req.body.len() > LARGE_BODY_BYTES
        && tokio::runtime::Handle::try_current()
            .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::MultiThread)
}

/// A random (version 4) UUID, as the apiserver's audit IDs are.
fn new_audit_id() -> String {
    uuid::Builder::from_random_bytes(fastrand::u128(..).to_le_bytes())
        .into_uuid()
        .to_string()
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(not a string)")
}

#[cfg(test)]
mod tests;
