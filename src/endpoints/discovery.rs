//! The non-resource endpoints: `/version`, health checks, the discovery documents (legacy and
//! aggregated) and the OpenAPI documents, all rendered once per catalog (on the first request of
//! them) and served as stored bytes.

use bytes::Bytes;
use serde_json::Value;
use warp::http::{self, StatusCode};
use warp::reply::Response;

use super::accept::{not_acceptable, Format};
use super::negotiation::{json_response, plain_not_found, AcceptEntry, Request};
use crate::discovery::documents::{Aggregated, AGGREGATED_V2, AGGREGATED_V2BETA1};
use crate::discovery::{GIT_VERSION, KUBERNETES_VERSION};
use crate::error::ApiError;
use crate::state::State;

/// Serves a request that names no resource.
pub fn serve(state: &State, req: &Request) -> Result<Response, ApiError> {
    if req.method != "GET" && req.method != "HEAD" {
        if req.path.starts_with("/api") {
            return Err(ApiError::method_not_allowed());
        }
        return Ok(plain_not_found());
    }
    let path = req.path.trim_end_matches('/');
    let parts: Vec<&str> = path.split('/').skip(1).collect();
    let registry = state.registry();
    let docs = || registry.documents();
    match parts.as_slice() {
        ["version"] => Ok(json_response(StatusCode::OK, version_info())),
        ["metrics"] => Ok(metrics(state)),
        [endpoint @ ("healthz" | "livez" | "readyz"), check @ ..] => {
            Ok(super::health::serve(endpoint, check, &req.query))
        }
        ["api"] => discovery_root(req, &docs().api, &docs().aggregated_api),
        ["apis"] => discovery_root(req, &docs().apis, &docs().aggregated_apis),
        ["api", "v1"] => match docs()
            .resource_lists
            .get(&(String::new(), "v1".to_string()))
        {
            Some(b) => legacy_document(req, b),
            None => Ok(plain_not_found()),
        },
        ["apis", group] => match docs().groups.get(*group) {
            Some(b) => legacy_document(req, b),
            None => Ok(plain_not_found()),
        },
        ["openapi", "v2"] => Ok(openapi_v2(req, &registry.openapi().v2())),
        ["openapi", "v3"] => Ok(json_response(
            StatusCode::OK,
            registry.openapi().v3_index.clone(),
        )),
        ["openapi", "v3", rest @ ..] => Ok(openapi_v3(req, registry.openapi(), &rest.join("/"))),
        ["apis", group, version] => match docs()
            .resource_lists
            .get(&(group.to_string(), version.to_string()))
        {
            Some(b) => legacy_document(req, b),
            None => not_found_below(group),
        },
        ["api", _, ..] => Err(ApiError::path_not_found()),
        ["apis", group, _, ..] => not_found_below(group),
        _ => Ok(plain_not_found()),
    }
}

/// `/metrics` in the Prometheus text format.
fn metrics(state: &State) -> Response {
    let mut resp = Response::new(Bytes::from(state.metrics.render()).into());
    resp.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; version=0.0.4; charset=utf-8"),
    );
    resp
}

/// `/openapi/v2`: the JSON document. kubectl asks for it in protobuf only, to validate on the
/// client when the server cannot; kubefake validates on the server and says so in
/// `/openapi/v3`, so it answers protobuf requests with an empty (valid) document, for which
/// kubectl skips client-side validation.
fn openapi_v2(req: &Request, json_doc: &Bytes) -> Response {
    if req.header("accept").contains("protobuf") {
        // gnostic `openapi_v2.Document { swagger: "2.0" }`: field 1, length-delimited.
        let mut resp = Response::new(Bytes::from_static(b"\x0a\x032.0").into());
        resp.headers_mut().insert(
            http::header::CONTENT_TYPE,
            http::HeaderValue::from_static(
                "application/com.github.proto-openapi.spec.v2.v1.0+protobuf",
            ),
        );
        return resp;
    }
    json_response(StatusCode::OK, json_doc.clone())
}

/// `/openapi/v3/<group-version>`: immutable (cacheable) when asked for by its current hash.
fn openapi_v3(req: &Request, openapi: &crate::discovery::openapi::OpenApi, path: &str) -> Response {
    let Some(doc) = openapi.v3.get(path) else {
        return plain_not_found();
    };
    let gzip = doc
        .gzip()
        .filter(|_| accepts_gzip(req.header("accept-encoding")));
    let mut resp = match gzip {
        Some(body) => {
            let mut resp = json_response(StatusCode::OK, body);
            resp.headers_mut().insert(
                http::header::CONTENT_ENCODING,
                http::HeaderValue::from_static("gzip"),
            );
            resp
        }
        None => json_response(StatusCode::OK, doc.json()),
    };
    resp.headers_mut().insert(
        http::header::VARY,
        http::HeaderValue::from_static("Accept-Encoding"),
    );
    let immutable = req.query.get("hash") == Some(doc.hash());
    let cache = if immutable {
        "public, immutable"
    } else {
        "no-cache, private"
    };
    resp.headers_mut().insert(
        http::header::CACHE_CONTROL,
        http::HeaderValue::from_static(cache),
    );
    if let Ok(etag) = http::HeaderValue::from_str(&format!("\"{}\"", doc.hash())) {
        resp.headers_mut().insert(http::header::ETAG, etag);
    }
    resp
}

/// Whether an Accept-Encoding header allows gzip (`gzip`, `gzip;q=0.5`, `*`; not `gzip;q=0`).
fn accepts_gzip(accept_encoding: &str) -> bool {
    accept_encoding.split(',').any(|entry| {
        let mut parts = entry.split(';').map(str::trim);
        let coding = parts.next().unwrap_or("").to_ascii_lowercase();
        let refused = parts.any(|p| matches!(p, "q=0" | "q=0.0" | "q=0.00" | "q=0.000"));
        (coding == "gzip" || coding == "*") && !refused
    })
}

/// The oldest minor version a 1.36 apiserver stays compatible with by default (its emulation
/// version minus one).
const MIN_COMPATIBILITY_MINOR: &str = "35";

/// `/version` as a default kube-apiserver 1.36 answers (binary, emulation and minimum
/// compatibility versions), written as its `WriteRawJSON` writes `version.Info`: the struct's
/// field order, indented by two spaces. Never inlined: `scripts/bench_callgrind.rs` ends a
/// measured phase when the server enters it.
#[inline(never)]
fn version_info() -> String {
    let (major, minor) = KUBERNETES_VERSION;
    let platform = format!("{}/{}", std::env::consts::OS, go_arch());
    let fields: [(&str, &str); 13] = [
        ("major", major),
        ("minor", minor),
        ("emulationMajor", major),
        ("emulationMinor", minor),
        ("minCompatibilityMajor", major),
        ("minCompatibilityMinor", MIN_COMPATIBILITY_MINOR),
        ("gitVersion", GIT_VERSION),
        ("gitCommit", "kubefake"),
        ("gitTreeState", "clean"),
        ("buildDate", "2026-04-22T00:00:00Z"),
        ("goVersion", "go1.26.0"),
        ("compiler", "gc"),
        ("platform", &platform),
    ];
    let lines: Vec<String> = fields
        .iter()
        .map(|(k, v)| format!("  \"{k}\": {}", Value::from(*v)))
        .collect();
    format!("{{\n{}\n}}", lines.join(",\n"))
}

fn go_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    }
}

/// Serves `/api` or `/apis` in the format the Accept header asks for first: aggregated v2,
/// aggregated v2beta1, or the legacy document.
/// A legacy discovery document, or the 406 of an `Accept` it cannot answer (the document is
/// found first: an unknown path is a 404 whatever the `Accept`).
fn legacy_document(req: &Request, body: &Bytes) -> Result<Response, ApiError> {
    if !legacy_acceptable(req) {
        return Err(not_acceptable(
            &[Format::Json, Format::Yaml, Format::Protobuf],
            false,
        ));
    }
    Ok(json_response(StatusCode::OK, body.clone()))
}

/// The 404 of an unknown path below `/apis/{group}`: go-restful's `Status` for a built-in
/// group, else the apiserver's plain-text not-found handler.
fn not_found_below(group: &str) -> Result<Response, ApiError> {
    if crate::registry::builtin::is_group(group) {
        return Err(ApiError::path_not_found());
    }
    Ok(plain_not_found())
}

/// Whether a legacy discovery document may answer this `Accept` (the apiserver negotiates
/// them with the default endpoint restrictions: JSON, YAML or protobuf, no transformation).
fn legacy_acceptable(req: &Request) -> bool {
    let accept = req.header("accept");
    accept.trim().is_empty()
        || AcceptEntry::parse_all(accept).any(|entry| {
            let plain = ["as", "g", "v"].iter().all(|p| entry.param(p).is_none());
            plain
                && matches!(
                    entry.media.as_str(),
                    "" | "*/*"
                        | "application/*"
                        | "application/json"
                        | "application/yaml"
                        | "application/vnd.kubernetes.protobuf"
                )
        })
}

fn discovery_root(
    req: &Request,
    legacy: &Bytes,
    aggregated: &Aggregated,
) -> Result<Response, ApiError> {
    for entry in AcceptEntry::parse_all(req.header("accept")) {
        let media = entry.media.as_str();
        let wants_aggregated = media == "application/json"
            && entry.param("g") == Some("apidiscovery.k8s.io")
            && entry.param("as") == Some("APIGroupDiscoveryList");
        if wants_aggregated {
            let (body, content_type) = match entry.param("v") {
                Some("v2") => (&aggregated.v2, AGGREGATED_V2),
                Some("v2beta1") => (&aggregated.v2beta1, AGGREGATED_V2BETA1),
                _ => continue,
            };
            if req.header("if-none-match") == aggregated.etag {
                let mut resp = Response::new(Bytes::new().into());
                *resp.status_mut() = StatusCode::NOT_MODIFIED;
                return Ok(resp);
            }
            let mut resp = json_response(StatusCode::OK, body.clone());
            let headers = resp.headers_mut();
            headers.insert(
                http::header::CONTENT_TYPE,
                http::HeaderValue::from_static(content_type),
            );
            if let Ok(etag) = http::HeaderValue::from_str(&aggregated.etag) {
                headers.insert(http::header::ETAG, etag);
            }
            headers.insert(http::header::VARY, http::HeaderValue::from_static("Accept"));
            headers.insert(
                http::header::CACHE_CONTROL,
                http::HeaderValue::from_static("public"),
            );
            return Ok(resp);
        }
        if matches!(media, "application/json" | "*/*" | "application/*" | "") {
            break;
        }
    }
    legacy_document(req, legacy)
}
