//! The request log's record of one answered request, built from what the request path already
//! holds (moved, not copied, where it can).

use std::sync::Arc;
use std::time::Instant;

use chrono::Utc;

use super::negotiation::Request;
use crate::context::Context;
use crate::filters::audit::Extra;
use crate::filters::request_info::RequestInfo;
use crate::filters::request_log::{RequestLog, RequestRecord};
use crate::state::State;

/// Records a request answered with `code` in the request log and, when it is on, the audit
/// log: the one recording point of both.
pub fn record_answered(
    state: &State,
    req: Request,
    info: RequestInfo,
    ctx: Context,
    code: u16,
    arrived: Instant,
) {
    let Some(audit) = state.options.audit_log.as_deref() else {
        state
            .requests
            .record(record(req, info, ctx, code, arrived, &state.requests));
        return;
    };
    // What the event needs beyond the record, taken before the record takes the rest.
    let (user, source_ip, query) = (ctx.user.clone(), req.remote, req.query.0.clone());
    let record = record(req, info, ctx, code, arrived, &state.requests);
    let extra = Extra {
        user: &user,
        source_ip,
        query: &query,
    };
    audit.write(&record, &extra);
    state.requests.record(record);
}

/// The record of a request answered with `code`, which arrived at `arrived`.
pub fn record(
    req: Request,
    info: RequestInfo,
    ctx: Context,
    code: u16,
    arrived: Instant,
    log: &RequestLog,
) -> RequestRecord {
    let latency = arrived.elapsed();
    let verb = if info.is_resource_request {
        info.verb.as_str()
    } else {
        method_verb(&req.method)
    };
    let user_agent = req.header("user-agent").to_string();
    let field_manager = req.query.get("fieldManager").unwrap_or("").to_string();
    let dry_run = req.query.all("dryRun").any(|v| v == "All");
    RequestRecord {
        time: Utc::now() - latency,
        audit_id: ctx.audit_id,
        // Moved when the request's user is its own, copied when it is shared (a token's).
        user: Arc::try_unwrap(ctx.user).map_or_else(|shared| shared.name.clone(), |u| u.name),
        user_agent,
        method: req.method,
        path: req.path,
        verb,
        group: info.group,
        version: info.version,
        resource: info.resource,
        subresource: info.subresource,
        namespace: info.namespace,
        name: info.name,
        field_manager,
        dry_run,
        code,
        latency,
        fault: ctx.fault.map(|f| f.id),
        request_body: (log.keeps_bodies() && !req.body.is_empty()).then_some(req.body),
    }
}

/// The verb of a request that names no resource: its method in lower case, as the
/// apiserver's authorizer sees it.
fn method_verb(method: &str) -> &'static str {
    match method {
        "GET" | "HEAD" => "get",
        "POST" => "post",
        "PUT" => "put",
        "PATCH" => "patch",
        "DELETE" => "delete",
        "OPTIONS" => "options",
        _ => "other",
    }
}
