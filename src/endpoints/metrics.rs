//! Records each served request in [`crate::metrics`] with the labels the apiserver's
//! `MonitorRequest` gives it: resource requests by verb (`LIST`, `WATCH`, `APPLY`... as
//! `cleanVerb` reports them), dry run, group, version, resource, subresource and scope, and the
//! root health endpoints by path. `/metrics` itself, discovery and the other non-resource paths
//! are not counted, as the apiserver does not instrument them.

use std::time::Instant;

use warp::reply::Response;

use super::negotiation::Request;
use crate::error::ApiError;
use crate::filters::request_info::{RequestInfo, Verb};
use crate::metrics::RequestLabels;
use crate::state::State;

/// Subresources the apiserver reports as `CONNECT`.
const CONNECT_SUBRESOURCES: [&str; 4] = ["attach", "exec", "portforward", "proxy"];

/// Counts one request with its outcome.
pub fn record(
    state: &State,
    req: &Request,
    info: &RequestInfo,
    served: &Result<Response, ApiError>,
    started: Instant,
) {
    let code = match served {
        Ok(resp) => resp.status().as_u16(),
        Err(e) => e.code,
    };
    let labels = if info.is_resource_request {
        RequestLabels {
            verb: verb(req, info),
            dry_run: req.query.all("dryRun").any(|v| v == "All"),
            group: &info.group,
            version: &info.version,
            resource: &info.resource,
            subresource: &info.subresource,
            scope: scope(info),
            component: "apiserver",
        }
    } else {
        let path = req.path.as_str();
        if !matches!(path, "/healthz" | "/livez" | "/readyz") {
            return;
        }
        RequestLabels {
            verb: "GET",
            dry_run: false,
            group: "",
            version: "",
            resource: "",
            subresource: path,
            scope: "",
            component: "",
        }
    };
    state.metrics.observe(&labels, code, started.elapsed());
}

/// The apiserver's `cleanVerb` of a resource request.
fn verb(req: &Request, info: &RequestInfo) -> &'static str {
    if CONNECT_SUBRESOURCES.contains(&info.subresource.as_str()) {
        return "CONNECT";
    }
    match info.verb {
        Verb::Get => "GET",
        Verb::List => "LIST",
        Verb::Watch => "WATCH",
        Verb::Create => "POST",
        Verb::Update => "PUT",
        Verb::Patch if req.header("content-type") == "application/apply-patch+yaml" => "APPLY",
        Verb::Patch => "PATCH",
        Verb::Delete => "DELETE",
        Verb::DeleteCollection => "DELETECOLLECTION",
        Verb::Unsupported => "other",
    }
}

/// The apiserver's `CleanScope`.
fn scope(info: &RequestInfo) -> &'static str {
    if !info.name.is_empty() || info.verb == Verb::Create {
        "resource"
    } else if !info.namespace.is_empty() {
        "namespace"
    } else {
        "cluster"
    }
}
