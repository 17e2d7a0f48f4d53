//! The HTTP endpoints: [`handle`] turns one request into one response. It builds the request's
//! [`Context`], resolves what the request names (a discovery document or a resource), hands it
//! to one thin function per verb family, and turns every error, and every panic, into a `Status`.
//!
//! - [`discovery`]: `/version`, health, discovery and OpenAPI documents.
//! - [`resource`]: resolves the resource, scope, subresource and verb, then dispatches to
//!   [`read`] (get, list), [`write`](mod@write) (create, update, patch), [`apply`] (server-side apply),
//!   [`delete`] (delete, deletecollection), [`watch`], [`scale`] and [`action`] (subresources
//!   served by their own code: `pods/binding`, `pods/log`).
//! - [`kubefake`]: kubefake's own API under `/kubefake/v1/` (fault rules, the request log,
//!   snapshots, reset, dumps), reached before the Kubernetes routes.
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
mod log;
pub mod metrics;
pub mod negotiation;
pub mod options;
pub mod patch;
pub mod protobuf;
pub mod read;
pub mod resource;
pub mod scale;
pub mod watch;
pub mod websocket;
pub mod write;
pub mod yaml_error;

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::Instant;

use futures_util::FutureExt;
use warp::http;
use warp::reply::Response;

use crate::context::{warning_header_value, Context, UserInfo};
use crate::error::ApiError;
use crate::filters::authentication::Credentials;
use crate::filters::authorization::{self, Attributes};
use crate::filters::faults::{Probe, Verdict};
use crate::filters::impersonation;
use crate::filters::request_info::{self, RequestInfo};
use crate::state::State;
use negotiation::{error_response, Request};

/// Handles one request. Never fails: every error becomes a `Status` response, and so does a
/// panic anywhere below (500 `InternalError`; the panicking step committed nothing, and the
/// server keeps serving). Every request but kubefake's own is then recorded in the request log.
pub async fn handle(state: Arc<State>, req: Request) -> Response {
    let arrived = Instant::now();
    let info = request_info::resolve(&req.method, &req.path, req.query.flag("watch"));
    let creds = Credentials {
        headers: &req.headers,
        peer: req.peer.as_deref(),
        store: &state.store,
    };
    let (ctx, resp) = match identify(&state, &req, &creds) {
        Ok(user) => {
            let mut ctx = Context::request(new_audit_id(), user);
            let resp = serve(&state, &req, &info, &mut ctx).await;
            (ctx, resp)
        }
        Err(err) => {
            let ctx = Context::request(new_audit_id(), Arc::default());
            (ctx, error_response(&err))
        }
    };
    let resp = with_audit_id(resp, &ctx.audit_id);
    let audit = state.options.audit_log.as_deref();
    if (state.requests.is_on() || audit.is_some()) && !kubefake::owns(&req.path) {
        let code = resp.status().as_u16();
        log::record_answered(&state, req, info, ctx, code, arrived);
    }
    resp
}

/// Serves an identified request: routes it, catching a panic, and adds its warnings.
async fn serve(
    state: &Arc<State>,
    req: &Request,
    info: &RequestInfo,
    ctx: &mut Context,
) -> Response {
    let started = std::time::Instant::now();
    let routed = AssertUnwindSafe(route(state, req, info, ctx, started)).catch_unwind();
    let outcome = if off_runtime(req) {
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
    resp
}

/// Who the request acts as: the authenticated user, or the user it may impersonate.
fn identify(
    state: &State,
    req: &Request,
    creds: &Credentials<'_>,
) -> Result<Arc<UserInfo>, ApiError> {
    let user = state.options.authentication.authenticate(creds)?;
    let mode = state.options.authorization;
    let authorize =
        |attrs: &Attributes| authorization::authorize(mode, &state.store.snapshot(), &user, attrs);
    let impersonated = impersonation::impersonate(&req.headers, &user, authorize)?;
    Ok(impersonated.map_or(user, Arc::new))
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
    info: &RequestInfo,
    ctx: &mut Context,
    started: std::time::Instant,
) -> Result<Response, ApiError> {
    if kubefake::owns(&req.path) {
        return kubefake::serve(state, req, &ctx.user).await;
    }
    let selector = req.query.get("fieldSelector").unwrap_or("");
    let asked = authorization::Request {
        info,
        method: &req.method,
        path: &req.path,
        field_selector: selector,
    };
    authorization::check(state.options.authorization, &state.store, &ctx.user, &asked)?;
    if let Some(answer) = apply_faults(state, req, info, ctx).await {
        return answer;
    }
    if info.is_resource_request {
        ctx.request_name = Some(info.name.clone());
        let served = resource::serve(state, req, info, ctx).await;
        metrics::record(state, req, info, &served, started);
        return served;
    }
    let served = discovery::serve(state, req);
    metrics::record(state, req, info, &served, started);
    served
}

/// The fault filter: a rule that fires may answer the request itself (a `Status`, a dropped
/// connection) or leave a watch fault on the context; either way the rule is on the context
/// for the request log.
async fn apply_faults(
    state: &State,
    req: &Request,
    info: &RequestInfo,
    ctx: &mut Context,
) -> Option<Result<Response, ApiError>> {
    let probe = Probe {
        info,
        field_manager: req.query.get("fieldManager").unwrap_or(""),
        user_agent: req.header("user-agent"),
        user: &ctx.user.name,
    };
    let (verdict, fired) = state.faults.filter(&probe).await;
    ctx.fault = fired;
    match verdict {
        Verdict::Serve => None,
        Verdict::Answer(err) => Some(Err(err)),
        Verdict::Drop => {
            let mut resp = Response::new(bytes::Bytes::new().into());
            resp.extensions_mut().insert(DropConnection);
            Some(Ok(resp))
        }
    }
}

/// Marks a response the server must not send: it closes the connection instead (a fault's
/// `drop`).
#[derive(Debug, Clone, Copy)]
pub struct DropConnection;

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
    crate::registry::object_meta::new_uid()
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
