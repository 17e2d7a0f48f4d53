//! `/kubefake/v1/ui/`: the live view, a page for a person debugging a test or a local script.
//! It is one HTML file, one script and one stylesheet, compiled into the binary, with no
//! external assets; the script reads the real Kubernetes API from the browser (aggregated
//! discovery, list, then `?watch=1` streams) and kubefake's `/kubefake/v1/requests` and
//! `/kubefake/v1/faults`.
//!
//! Like every route under `/kubefake/v1/`, it is `system:masters` only under RBAC: a browser
//! sends no credentials, so the page is for a server started with `--authorization-mode
//! AlwaysAllow`, or reached through `kubectl proxy`, which adds the kubeconfig's. The `Host`
//! check lets `localhost` and loopback addresses through, as a browser on the same machine
//! sends them.
//!
//! The assets are `&'static` bytes: serving them copies, parses and renders nothing.

use warp::http::header::{
    HeaderName, HeaderValue, CACHE_CONTROL, CONTENT_SECURITY_POLICY, CONTENT_TYPE, LOCATION,
    REFERRER_POLICY, X_CONTENT_TYPE_OPTIONS, X_FRAME_OPTIONS,
};
use warp::http::StatusCode;
use warp::reply::Response;

use crate::endpoints::negotiation::Request;
use crate::error::ApiError;

/// The page: its own script and stylesheet only, no inline script or style, and nothing from
/// another origin; it may not be framed (clickjacking) nor post forms anywhere.
pub const CONTENT_SECURITY_POLICY_VALUE: &str = "default-src 'self'; script-src 'self'; \
     style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; \
     base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/// Revalidate on every load: a page from the previous binary must not outlive it.
const CACHE: &str = "no-cache";

/// One embedded file.
struct Asset {
    name: &'static str,
    content_type: &'static str,
    body: &'static str,
}

/// Everything the page is made of; `""` is the directory itself.
const ASSETS: [Asset; 3] = [
    Asset {
        name: "index.html",
        content_type: "text/html; charset=utf-8",
        body: include_str!("index.html"),
    },
    Asset {
        name: "app.js",
        content_type: "text/javascript; charset=utf-8",
        body: include_str!("app.js"),
    },
    Asset {
        name: "app.css",
        content_type: "text/css; charset=utf-8",
        body: include_str!("app.css"),
    },
];

/// `GET /kubefake/v1/ui/{file}`: the page (also at `.../ui/`), its script and its stylesheet;
/// `.../ui` without the slash is redirected to it, so that the page's relative links resolve.
pub fn get(req: &Request, rest: &[&str]) -> Result<Response, ApiError> {
    let name = match rest {
        [] if !req.path.ends_with('/') => return Ok(redirect()),
        [] => "index.html",
        [name] => name,
        _ => "",
    };
    match ASSETS.iter().find(|a| a.name == name) {
        Some(asset) => Ok(respond(asset)),
        None => {
            let mut err = ApiError::path_not_found();
            err.message = format!(
                "the live view has no file {:?}; open /kubefake/v1/ui/",
                req.path
            );
            Err(err)
        }
    }
}

fn respond(asset: &Asset) -> Response {
    let mut resp = Response::new(asset.body.into());
    let headers = resp.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(asset.content_type));
    secure(headers);
    resp
}

/// `.../ui` -> `.../ui/`, relative so that it holds behind `kubectl proxy`'s prefixes too.
fn redirect() -> Response {
    let mut resp = Response::new(Default::default());
    *resp.status_mut() = StatusCode::MOVED_PERMANENTLY;
    let headers = resp.headers_mut();
    headers.insert(LOCATION, HeaderValue::from_static("ui/"));
    secure(headers);
    resp
}

fn secure(headers: &mut warp::http::HeaderMap) {
    headers.insert(CACHE_CONTROL, HeaderValue::from_static(CACHE));
    headers.insert(
        CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY_VALUE),
    );
    headers.insert(X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(
        HeaderName::from_static("cross-origin-opener-policy"),
        HeaderValue::from_static("same-origin"),
    );
}
