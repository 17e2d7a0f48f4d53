//! Request handling: route a request to discovery or to a resource, then one thin function per
//! verb (decode -> [`crate::registry::store`] -> encode).

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use serde_json::{json, Value};
use warp::http::{self, StatusCode};
use warp::reply::Response;

use super::negotiation::{
    decode_body, decode_body_fields, error_response, json_response, json_value, plain_not_found,
    Request,
};
use super::options::{self, ContinueToken, ListOptions, Match};
use super::patch::{patch_type, Patch};
use super::watch::{self, Start, WatchRequest};
use crate::discovery::documents::{Aggregated, AGGREGATED_V2, AGGREGATED_V2BETA1};
use crate::error::{field, ApiError};
use crate::filters::request_info::{self, RequestInfo, Verb};
use crate::registry::catalog::ApiResource;
use crate::registry::object_meta::meta_str;
use crate::registry::store::{
    self as rest, DeleteOptions, Deleted, Propagation, Target, UpdateSource, WriteOptions,
};
use crate::registry::strategy::FieldValidation;
use crate::registry::table::{self, Columns, IncludeObject};
use crate::state::State;
use crate::store::selector::{FieldSelector, LabelSelector};
use crate::store::{ObjectKey, StoredObject};
use crate::warnings;

/// The Kubernetes version kubefake reports and whose API it serves.
pub const KUBERNETES_VERSION: (&str, &str) = ("1", "33");

/// Handles one request. Never fails: every error becomes a `Status` response.
pub async fn handle(state: Arc<State>, req: Request) -> Response {
    let result = route(&state, &req).await;
    let resp = match result {
        Ok(resp) => resp,
        Err(err) => error_response(&err),
    };
    tracing::debug!(method = %req.method, path = %req.path, status = resp.status().as_u16(), "request");
    resp
}

async fn route(state: &Arc<State>, req: &Request) -> Result<Response, ApiError> {
    let info = request_info::resolve(&req.method, &req.path, req.query.flag("watch"));
    if info.is_resource_request {
        return resource_request(state, req, &info).await;
    }
    non_resource_request(state, req)
}

fn text(status: StatusCode, body: &'static str) -> Response {
    let mut resp = Response::new(Bytes::from_static(body.as_bytes()).into());
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    resp
}

fn non_resource_request(state: &State, req: &Request) -> Result<Response, ApiError> {
    if req.method != "GET" && req.method != "HEAD" {
        if req.path.starts_with("/api") {
            return Err(ApiError::method_not_allowed());
        }
        return Ok(plain_not_found());
    }
    let path = req.path.trim_end_matches('/');
    let parts: Vec<&str> = path.split('/').skip(1).collect();
    let registry = state.registry();
    let docs = &registry.documents;
    match parts.as_slice() {
        ["version"] => Ok(json_value(StatusCode::OK, &version_info())),
        ["healthz" | "livez" | "readyz", ..] => Ok(text(StatusCode::OK, "ok")),
        ["api"] => Ok(discovery_root(req, &docs.api, &docs.aggregated_api)),
        ["apis"] => Ok(discovery_root(req, &docs.apis, &docs.aggregated_apis)),
        ["api", "v1"] => Ok(docs
            .resource_lists
            .get(&(String::new(), "v1".to_string()))
            .map_or_else(plain_not_found, |b| {
                json_response(StatusCode::OK, b.clone())
            })),
        ["apis", group] => Ok(docs.groups.get(*group).map_or_else(plain_not_found, |b| {
            json_response(StatusCode::OK, b.clone())
        })),
        ["openapi", "v2"] => Ok(openapi_v2(req, &docs.openapi.v2)),
        ["openapi", "v3"] => Ok(json_response(StatusCode::OK, docs.openapi.v3_index.clone())),
        ["openapi", "v3", rest @ ..] => Ok(openapi_v3(req, &docs.openapi, &rest.join("/"))),
        ["apis", group, version] => Ok(docs
            .resource_lists
            .get(&(group.to_string(), version.to_string()))
            .map_or_else(plain_not_found, |b| {
                json_response(StatusCode::OK, b.clone())
            })),
        _ => Ok(plain_not_found()),
    }
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
    let mut resp = json_response(StatusCode::OK, doc.body.clone());
    let immutable = req.query.get("hash") == Some(doc.hash.as_str());
    let cache = if immutable {
        "public, immutable"
    } else {
        "no-cache, private"
    };
    resp.headers_mut().insert(
        http::header::CACHE_CONTROL,
        http::HeaderValue::from_static(cache),
    );
    if let Ok(etag) = http::HeaderValue::from_str(&format!("\"{}\"", doc.hash)) {
        resp.headers_mut().insert(http::header::ETAG, etag);
    }
    resp
}

fn version_info() -> Value {
    let (major, minor) = KUBERNETES_VERSION;
    json!({
        "major": major,
        "minor": minor,
        "gitVersion": format!("v{major}.{minor}.0"),
        "gitCommit": "kubefake",
        "gitTreeState": "clean",
        "buildDate": "2025-04-23T00:00:00Z",
        "goVersion": "go1.24.2",
        "compiler": "gc",
        "platform": format!("{}/{}", std::env::consts::OS, go_arch()),
    })
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
fn discovery_root(req: &Request, legacy: &Bytes, aggregated: &Aggregated) -> Response {
    for entry in super::negotiation::AcceptEntry::parse_all(req.header("accept")) {
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
                return resp;
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
            return resp;
        }
        if matches!(media, "application/json" | "*/*" | "application/*" | "") {
            break;
        }
    }
    json_response(StatusCode::OK, legacy.clone())
}

/// Namespace, name and selector restrictions of a list, watch or deletecollection.
#[derive(Default)]
pub struct Filter {
    /// Only objects in this namespace.
    pub namespace: Option<String>,
    /// Only the object of this name.
    pub name: Option<String>,
    /// `labelSelector`.
    pub labels: LabelSelector,
    /// `fieldSelector`.
    pub fields: FieldSelector,
}

impl Filter {
    fn from_query(
        res: &ApiResource,
        info: &RequestInfo,
        req: &Request,
    ) -> Result<Filter, ApiError> {
        let labels = LabelSelector::parse(req.query.get("labelSelector").unwrap_or(""))
            .map_err(ApiError::bad_request)?;
        let fields = FieldSelector::parse(
            req.query.get("fieldSelector").unwrap_or(""),
            res.field_selectors,
            res.unsupported_field,
        )
        .map_err(ApiError::bad_request)?;
        Ok(Filter {
            namespace: (res.namespaced && !info.namespace.is_empty())
                .then(|| info.namespace.clone()),
            name: (!info.name.is_empty()).then(|| info.name.clone()),
            labels,
            fields,
        })
    }

    /// Whether an object passes every restriction.
    pub fn matches(&self, key: &ObjectKey, obj: &Value) -> bool {
        self.namespace
            .as_ref()
            .is_none_or(|ns| &key.namespace == ns)
            && self.name.as_ref().is_none_or(|n| &key.name == n)
            && (self.labels.is_empty()
                || self
                    .labels
                    .matches(obj["metadata"].get("labels").and_then(Value::as_object)))
            && (self.fields.is_empty() || self.fields.matches(obj))
    }
}

/// An object as the requested version shows it. Custom resources are stored in their storage
/// version; with the `None` conversion strategy only `apiVersion` differs between versions.
/// Objects written before their CRD last changed are defaulted as they are read (and not
/// written back), as the apiserver defaults what it decodes from storage.
pub fn encode_object(res: &ApiResource, obj: &StoredObject) -> Bytes {
    if res.version == res.storage_version && !stale(res, obj) {
        return obj.json.clone();
    }
    Bytes::from(serde_json::to_vec(&versioned(res, obj)).unwrap_or_default())
}

/// Whether an object predates its CRD's last change (and so maybe a default).
/// Only schemas with defaults can make an older object read differently, so reads of every
/// other resource keep serving the stored bytes.
fn stale(res: &ApiResource, obj: &StoredObject) -> bool {
    res.schema.as_ref().is_some_and(|s| s.root().sub_defaults)
        && res
            .crd
            .as_ref()
            .is_some_and(|c| obj.rv < c.resource_version)
}

/// [`encode_object`]'s view as a tree.
pub fn versioned(res: &ApiResource, obj: &StoredObject) -> Value {
    let mut v = obj.value.clone();
    if stale(res, obj) {
        res.strategy.default_on_read(&mut v);
    }
    if res.version != res.storage_version {
        v["apiVersion"] = json!(res.api_version());
    }
    v
}

/// `metadata` of a list response.
#[derive(Default)]
struct ListMeta {
    rv: u64,
    continue_token: Option<String>,
    remaining_item_count: Option<usize>,
}

/// A list body assembled from already-serialised items.
fn encode_list<'a>(
    res: &ApiResource,
    meta: &ListMeta,
    items: impl Iterator<Item = &'a Arc<StoredObject>>,
) -> Bytes {
    let mut out = Vec::with_capacity(256);
    out.extend_from_slice(b"{\"apiVersion\":");
    out.extend_from_slice(json!(res.api_version()).to_string().as_bytes());
    out.extend_from_slice(b",\"items\":[");
    for (i, item) in items.enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(&encode_object(res, item));
    }
    out.extend_from_slice(b"],\"kind\":");
    out.extend_from_slice(json!(res.list_kind).to_string().as_bytes());
    let mut list_meta = json!({"resourceVersion": meta.rv.to_string()});
    if let Some(c) = &meta.continue_token {
        list_meta["continue"] = json!(c);
    }
    if let Some(n) = meta.remaining_item_count {
        list_meta["remainingItemCount"] = json!(n);
    }
    out.extend_from_slice(b",\"metadata\":");
    out.extend_from_slice(list_meta.to_string().as_bytes());
    out.push(b'}');
    Bytes::from(out)
}

async fn resource_request(
    state: &Arc<State>,
    req: &Request,
    info: &RequestInfo,
) -> Result<Response, ApiError> {
    let Some(res) = state
        .registry()
        .resolve(&info.group, &info.version, &info.resource)
    else {
        // Unknown resources of a built-in group-version get a Status; everything else falls
        // through to the apiserver's plain-text not-found handler.
        if info.group.is_empty() && info.version == "v1" {
            return Err(ApiError::path_not_found());
        }
        return Ok(plain_not_found());
    };
    let cluster_path = info.namespace.is_empty() || res.plural == "namespaces";
    let collection_verb = matches!(info.verb, Verb::List | Verb::Watch) && info.name.is_empty();
    if res.namespaced && cluster_path && !collection_verb {
        return Ok(plain_not_found());
    }
    if !res.namespaced && !cluster_path {
        return Ok(plain_not_found());
    }

    let target = match info.subresource.as_str() {
        "" => Target::Main,
        "status" if res.status_subresource => Target::Status,
        "finalize" if res.finalize_subresource => Target::Finalize,
        "scale"
            if res.scale.is_some()
                && matches!(info.verb, Verb::Get | Verb::Update | Verb::Patch) =>
        {
            return scale_request(state, &res, info, req);
        }
        "scale" if res.scale.is_some() => return Err(ApiError::method_not_allowed()),
        _ => return Err(ApiError::not_found(&res.group, &res.plural, &info.name)),
    };
    let verb_ok = match target {
        // Discovery hides update and patch of a terminating CRD's objects, but the handler
        // still serves them (finalizers must be removable); only create is refused.
        Target::Main => {
            res.allows(info.verb.as_str())
                || (res.terminating()
                    && matches!(info.verb, Verb::Update | Verb::Patch | Verb::Create))
        }
        Target::Status => matches!(info.verb, Verb::Get | Verb::Update | Verb::Patch),
        Target::Finalize => info.verb == Verb::Update,
    };
    if res.terminating() && info.verb == Verb::Create {
        return Err(rest::terminating_create_error(&res));
    }
    if !verb_ok {
        return Err(if res.crd.is_some() && info.verb != Verb::Unsupported {
            let mut err = ApiError::method_not_allowed();
            err.message = format!(
                "{} is not supported on resources of kind {:?}",
                info.verb.as_str(),
                crate::error::qualified(&res.group, &res.plural)
            );
            err.details = Some(Box::new(crate::error::StatusDetails {
                group: Some(res.group.clone()),
                kind: Some(res.plural.clone()),
                ..Default::default()
            }));
            err
        } else {
            ApiError::method_not_allowed()
        });
    }
    let write = write_options(req)?;
    let ns = info.namespace.as_str();
    match info.verb {
        Verb::Get => {
            let obj = rest::get(state, &res, ns, &info.name)?;
            if let Some(include) = table_request(req) {
                let shown = versioned(&res, &obj);
                let table = Columns::for_resource(&res).table(&[&shown], "", include, true);
                return Ok(json_value(StatusCode::OK, &table));
            }
            Ok(json_response(StatusCode::OK, encode_object(&res, &obj)))
        }
        Verb::List => list(state, &res, info, req).await,
        Verb::Watch => {
            let opts = ListOptions::parse(&req.query, true)?;
            let filter = Filter::from_query(&res, info, req)?;
            let rv = opts.resource_version()?;
            let start = match (opts.send_initial_events, rv) {
                (Some(true), rv) => {
                    wait_for_resource_version(state, rv.unwrap_or(0)).await?;
                    Start::Initial {
                        end_bookmark: opts.allow_watch_bookmarks,
                    }
                }
                (_, Some(rv)) if rv > 0 => {
                    // A resourceVersion the store has not reached yet: wait, like the watch
                    // cache, rather than skip every event up to it.
                    wait_for_resource_version(state, rv).await?;
                    Start::After(rv)
                }
                _ => Start::After(state.store.current_rv()),
            };
            let watch_req = WatchRequest {
                table: table_request(req).map(|i| (Arc::new(Columns::for_resource(&res)), i)),
                resource: res.clone(),
                filter,
                start,
                bookmarks: opts.allow_watch_bookmarks,
                timeout: opts.timeout_seconds.map(Duration::from_secs),
            };
            Ok(watch::serve(state.clone(), watch_req))
        }
        Verb::Create => {
            let (created, warnings) = warnings::collect(|| {
                let obj = decode_object(&res, req, write.fields)?;
                rest::create(state, &res, ns, obj, &write)
            });
            Ok(with_warnings(
                json_response(StatusCode::CREATED, encode_object(&res, &*created?)),
                warnings,
            ))
        }
        Verb::Update => {
            let (updated, warnings) = warnings::collect(|| {
                let obj = decode_object(&res, req, write.fields)?;
                rest::update(
                    state,
                    &res,
                    ns,
                    &info.name,
                    target,
                    UpdateSource::Replace(obj),
                    &write,
                )
            });
            Ok(with_warnings(
                json_response(StatusCode::OK, encode_object(&res, &*updated?)),
                warnings,
            ))
        }
        Verb::Patch
            if super::negotiation::media_type(req.header("content-type"))
                == "application/apply-patch+yaml" =>
        {
            server_side_apply(state, &res, info, req, target, &write)
        }
        Verb::Patch => {
            let kind = patch_type(req.header("content-type"), res.crd.is_some())?;
            let patch = Patch::parse(kind, &req.body)?;
            let storage_api_version = storage_api_version(&res);
            let apply = move |current: &Value| {
                let mut out = patch.apply(current)?;
                // The patch is applied to the object as the client sees it (its apiVersion), and
                // stored back in the storage version.
                out["apiVersion"] = json!(storage_api_version);
                Ok(out)
            };
            let (updated, warnings) = warnings::collect(|| {
                rest::update(
                    state,
                    &res,
                    ns,
                    &info.name,
                    target,
                    UpdateSource::Patch(&apply),
                    &write,
                )
            });
            Ok(with_warnings(
                json_response(StatusCode::OK, encode_object(&res, &*updated?)),
                warnings,
            ))
        }
        Verb::Delete => {
            let opts = delete_options(req)?;
            match rest::delete(state, &res, ns, &info.name, &opts)? {
                Deleted::Gone(obj) if res.crd.is_some() => Ok(json_value(
                    StatusCode::OK,
                    &rest::deleted_status(&res, &obj),
                )),
                Deleted::Gone(obj) | Deleted::Pending(obj) => {
                    Ok(json_response(StatusCode::OK, encode_object(&res, &obj)))
                }
            }
        }
        Verb::DeleteCollection => {
            let opts = delete_options(req)?;
            let filter = Filter::from_query(&res, info, req)?;
            let snap = state.store.snapshot();
            let keys: Vec<ObjectKey> = snap
                .list(&res.gr, filter.namespace.as_deref())
                .filter(|(k, o)| filter.matches(k, &o.value))
                .map(|(k, _)| k.clone())
                .collect();
            drop(snap);
            let mut deleted = Vec::new();
            for key in keys {
                match rest::delete(state, &res, &key.namespace, &key.name, &opts) {
                    Ok(Deleted::Gone(o) | Deleted::Pending(o)) => deleted.push(o),
                    Err(e) if e.code == 404 => {}
                    Err(e) => return Err(e),
                }
            }
            Ok(json_response(
                StatusCode::OK,
                encode_list(
                    &res,
                    &ListMeta {
                        rv: state.store.current_rv(),
                        ..Default::default()
                    },
                    deleted.iter(),
                ),
            ))
        }
        Verb::Unsupported => Err(ApiError::method_not_allowed()),
    }
}

/// `GET`/`PUT`/`PATCH` of `/scale`: the object seen as an `autoscaling/v1 Scale`; writes change
/// only the replicas at `specReplicasPath`, with the object's resourceVersion as precondition.
fn scale_request(
    state: &Arc<State>,
    res: &ApiResource,
    info: &RequestInfo,
    req: &Request,
) -> Result<Response, ApiError> {
    let Some(cfg) = res.scale.as_ref() else {
        return Err(ApiError::not_found(&res.group, &res.plural, &info.name));
    };
    let ns = info.namespace.as_str();
    let write = write_options(req)?;
    let scale_of = |obj: &StoredObject| -> Result<Response, ApiError> {
        Ok(json_value(
            StatusCode::OK,
            &crate::registry::scale::to_scale(cfg, &obj.value)?,
        ))
    };
    // The new object from a Scale: the replicas written at specReplicasPath, the Scale's
    // resourceVersion (if any) as the precondition.
    let apply_scale = |current: &Value, scale: &Value| -> Result<Value, ApiError> {
        let replicas = crate::registry::scale::desired_replicas(scale, &info.name)?;
        let mut out = current.clone();
        crate::registry::scale::set_replicas(cfg, &mut out, replicas);
        let rv = scale["metadata"]["resourceVersion"].as_str().unwrap_or("");
        if !rv.is_empty() {
            out["metadata"]["resourceVersion"] = json!(rv);
        }
        Ok(out)
    };
    let updated = match info.verb {
        Verb::Get => return scale_of(&*rest::get(state, res, ns, &info.name)?),
        Verb::Update => {
            let scale = decode_body(req, "Scale", true)?;
            let name = scale["metadata"]["name"].as_str().unwrap_or("");
            if !name.is_empty() && name != info.name {
                return Err(ApiError::bad_request(format!(
                    "the name of the object ({name}) does not match the name on the URL ({})",
                    info.name
                )));
            }
            let apply = |current: &Value| apply_scale(current, &scale);
            rest::update(
                state,
                res,
                ns,
                &info.name,
                Target::Main,
                UpdateSource::Patch(&apply),
                &write,
            )?
        }
        _ => {
            let kind = patch_type(req.header("content-type"), true)?;
            let patch = Patch::parse(kind, &req.body)?;
            let apply = |current: &Value| {
                let scale = patch.apply(&crate::registry::scale::to_scale(cfg, current)?)?;
                apply_scale(current, &scale)
            };
            rest::update(
                state,
                res,
                ns,
                &info.name,
                Target::Main,
                UpdateSource::Patch(&apply),
                &write,
            )?
        }
    };
    scale_of(&updated)
}

/// `dryRun` and `fieldValidation` of a write.
fn write_options(req: &Request) -> Result<WriteOptions, ApiError> {
    let field_manager = match req.query.get("fieldManager") {
        Some(m) if !m.is_empty() => m.to_string(),
        _ => crate::apply::default_manager(req.header("user-agent")),
    };
    Ok(WriteOptions {
        dry_run: req.query.all("dryRun").any(|v| v == "All"),
        fields: FieldValidation::parse(req.query.get("fieldValidation"))?,
        field_manager: Some(field_manager),
    })
}

/// `PATCH` with `application/apply-patch+yaml`: server-side apply. Creates the object when it
/// does not exist; otherwise merges the applier's configuration by the schema, tracking field
/// ownership in `managedFields`, and answers 409 when another manager owns a field it would
/// change (unless `force=true`).
fn server_side_apply(
    state: &State,
    res: &ApiResource,
    info: &RequestInfo,
    req: &Request,
    target: Target,
    write: &WriteOptions,
) -> Result<Response, ApiError> {
    let Some(manager) = req.query.get("fieldManager").filter(|m| !m.is_empty()) else {
        return Err(ApiError::invalid(
            "meta.k8s.io",
            "PatchOptions",
            "",
            vec![field::required(
                "fieldManager",
                "is required for apply patch",
            )],
        ));
    };
    let force = req.query.flag("force");
    let text = std::str::from_utf8(&req.body)
        .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))?;
    let mut config: Value = serde_saphyr::from_str(text)
        .map_err(|e| ApiError::bad_request(format!("error decoding YAML: {e}")))?;
    if !config.is_object() {
        return Err(ApiError::bad_request(
            "error decoding YAML: the apply configuration is not an object",
        ));
    }
    if config["metadata"]
        .get("managedFields")
        .is_some_and(|m| !m.is_null())
    {
        return Err(ApiError::bad_request("metadata.managedFields must be nil"));
    }
    let api_version = config["apiVersion"].as_str().unwrap_or("");
    if api_version != res.api_version() {
        return Err(ApiError::bad_request(format!(
            "the API version in the data ({api_version}) does not match the expected API version ({})",
            res.api_version()
        )));
    }
    let kind = config["kind"].as_str().unwrap_or("");
    if kind != res.kind {
        return Err(ApiError::bad_request(format!(
            "the kind in the data ({kind}) does not match the expected kind ({})",
            res.kind
        )));
    }
    let name = meta_str(&config, "name");
    if !name.is_empty() && name != info.name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({name}) does not match the name on the URL ({})",
            info.name
        )));
    }
    let schema = res.schema.as_ref().map(|s| s.root());
    if let Err(e) = crate::apply::validate_config(&config, schema) {
        let ns = if res.namespaced {
            format!("{}/", info.namespace)
        } else {
            String::new()
        };
        return Err(ApiError::internal(format!(
            "failed to create typed patch object ({ns}{}; {}, Kind={}): {e}",
            info.name,
            res.api_version(),
            res.kind
        )));
    }
    let subresource = match target {
        Target::Status => "status",
        _ => {
            // The main resource does not take status when /status exists.
            if res.status_subresource {
                if let Some(o) = config.as_object_mut() {
                    o.remove("status");
                }
            }
            ""
        }
    };
    let ns = info.namespace.as_str();
    let untracked = WriteOptions {
        field_manager: None,
        ..write.clone()
    };
    let storage = storage_api_version(res);
    let merged = |live: Option<&Value>| -> Result<Value, ApiError> {
        let now = crate::registry::object_meta::now_rfc3339();
        let mut out = crate::apply::apply(
            live,
            &config,
            manager,
            subresource,
            &res.api_version(),
            force,
            schema,
            &now,
        )
        .map_err(|c| c.to_api_error(&res.group, &res.plural, &info.name))?;
        out["apiVersion"] = json!(storage);
        Ok(out)
    };
    let exists = rest::get(state, res, ns, &info.name).is_ok();
    let (result, warnings) = warnings::collect(|| {
        if !exists && target == Target::Main {
            let mut obj = merged(None)?;
            crate::registry::object_meta::meta_mut(&mut obj)
                .insert("name".into(), json!(info.name));
            return rest::create(state, res, ns, obj, &untracked).map(|o| (StatusCode::CREATED, o));
        }
        let apply = |current: &Value| merged(Some(current));
        rest::update(
            state,
            res,
            ns,
            &info.name,
            target,
            UpdateSource::Patch(&apply),
            &untracked,
        )
        .map(|o| (StatusCode::OK, o))
    });
    let (status, obj) = result?;
    Ok(with_warnings(
        json_response(status, encode_object(res, &obj)),
        warnings,
    ))
}

/// Adds a `Warning` header per warning.
fn with_warnings(mut resp: Response, warnings: Vec<String>) -> Response {
    for w in warnings {
        if let Ok(v) = http::HeaderValue::from_str(&crate::warnings::header_value(&w)) {
            resp.headers_mut().append("warning", v);
        }
    }
    resp
}

fn storage_api_version(res: &ApiResource) -> String {
    if res.group.is_empty() {
        res.storage_version.clone()
    } else {
        format!("{}/{}", res.group, res.storage_version)
    }
}

/// `LIST`: the snapshot the options ask for, filtered, one page of it.
async fn list(
    state: &State,
    res: &ApiResource,
    info: &RequestInfo,
    req: &Request,
) -> Result<Response, ApiError> {
    let opts = ListOptions::parse(&req.query, false)?;
    let filter = Filter::from_query(res, info, req)?;
    let (snap, after) = match &opts.continue_token {
        Some(token) => (
            state
                .store
                .snapshot_at(token.rv)
                .map_err(|_| options::continue_expired())?,
            Some(token.after.clone()),
        ),
        None => (list_snapshot(state, &opts).await?, None),
    };
    // A list from "0" is served from the watch cache, which ignores limit.
    let limit = if opts.resource_version == "0" {
        0
    } else {
        opts.limit
    };
    let mut matching = snap
        .list_after(&res.gr, filter.namespace.as_deref(), after)
        .filter(|(k, o)| filter.matches(k, &o.value));
    let mut items = Vec::new();
    let mut last = None;
    for (key, obj) in matching.by_ref() {
        items.push(obj);
        last = Some(key);
        if limit > 0 && items.len() == limit {
            break;
        }
    }
    let mut meta = ListMeta {
        rv: snap.rv,
        ..Default::default()
    };
    if limit > 0 && items.len() == limit {
        let remaining = matching.count();
        if remaining > 0 {
            if let Some(key) = last {
                meta.continue_token = Some(
                    ContinueToken {
                        rv: snap.rv,
                        after: key.clone(),
                    }
                    .encode(),
                );
            }
            // Like etcd, a count is only known without selectors.
            if filter.labels.is_empty() && filter.fields.is_empty() {
                meta.remaining_item_count = Some(remaining);
            }
        }
    }
    if let Some(include) = table_request(req) {
        let shown: Vec<Value> = items.iter().map(|o| versioned(res, o)).collect();
        let refs: Vec<&Value> = shown.iter().collect();
        let mut table =
            Columns::for_resource(res).table(&refs, &meta.rv.to_string(), include, true);
        if let Some(c) = &meta.continue_token {
            table["metadata"]["continue"] = json!(c);
        }
        if let Some(n) = meta.remaining_item_count {
            table["metadata"]["remainingItemCount"] = json!(n);
        }
        return Ok(json_value(StatusCode::OK, &table));
    }
    Ok(json_response(
        StatusCode::OK,
        encode_list(res, &meta, items.into_iter()),
    ))
}

/// `Some(includeObject)` when the client asked for a Table.
fn table_request(req: &Request) -> Option<IncludeObject> {
    table::wants_table(req.header("accept"))
        .then(|| IncludeObject::parse(req.query.get("includeObject")))
}

/// The snapshot a list without a continue token reads, by `resourceVersion` and
/// `resourceVersionMatch`.
async fn list_snapshot(
    state: &State,
    opts: &ListOptions,
) -> Result<Arc<crate::store::Snapshot>, ApiError> {
    match (opts.resource_version()?, opts.resource_version_match) {
        (Some(rv), Some(Match::Exact)) => {
            wait_for_resource_version(state, rv).await?;
            state.store.snapshot_at(rv).map_err(|_| {
                ApiError::gone("The resourceVersion for the provided list is too old.")
            })
        }
        (Some(rv), _) => {
            wait_for_resource_version(state, rv).await?;
            Ok(state.store.snapshot())
        }
        (None, _) => Ok(state.store.snapshot()),
    }
}

/// Waits (up to 3 s, like the watch cache) until the store has reached `rv`; then a read "not
/// older than" it can be served. Past that, the apiserver's 504.
async fn wait_for_resource_version(state: &State, rv: u64) -> Result<(), ApiError> {
    if state.store.current_rv() >= rv {
        return Ok(());
    }
    let mut events = state.store.subscribe();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(3);
    while state.store.current_rv() < rv {
        match tokio::time::timeout_at(deadline, events.recv()).await {
            Ok(Ok(_)) | Ok(Err(tokio::sync::broadcast::error::RecvError::Lagged(_))) => {}
            Ok(Err(_)) | Err(_) => break,
        }
    }
    let current = state.store.current_rv();
    if current >= rv {
        return Ok(());
    }
    let mut err = ApiError::timeout(format!(
        "Too large resource version: {rv}, current: {current}"
    ));
    if let Some(d) = err.details.as_mut() {
        d.causes.push(crate::error::StatusCause {
            reason: "ResourceVersionTooLarge".into(),
            message: "Too large resource version".into(),
            field: String::new(),
        });
    }
    Err(err)
}

/// Decodes a create/update body and checks its apiVersion and kind against the endpoint, as the
/// apiserver's decoder and `ValidateTypeMeta` do. Returns the object in the storage version.
fn decode_object(
    res: &ApiResource,
    req: &Request,
    fields: FieldValidation,
) -> Result<Value, ApiError> {
    let (mut obj, duplicates) = decode_body_fields(req, &res.kind, res.crd.is_none())?;
    fields.report("duplicate field", &duplicates, &res.kind, &res.version)?;
    let expected = res.api_version();
    let api_version = obj
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let kind = obj
        .get("kind")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let body = String::from_utf8_lossy(&req.body);
    if res.crd.is_some() {
        if kind.is_empty() {
            return Err(ApiError::bad_request(format!(
                "{} in version {:?} cannot be handled as a {}: Object 'Kind' is missing in '{}'",
                res.kind, res.version, res.kind, body
            )));
        }
        if api_version.is_empty() {
            return Err(ApiError::bad_request(format!(
                "{} in version {:?} cannot be handled as a {}: Object 'apiVersion' is missing in '{}'",
                res.kind, res.version, res.kind, body
            )));
        }
    } else {
        if api_version.is_empty() {
            obj["apiVersion"] = json!(expected);
        }
        if kind.is_empty() {
            obj["kind"] = json!(res.kind);
        }
    }
    let api_version = obj["apiVersion"].as_str().unwrap_or("").to_string();
    if api_version != expected {
        return Err(ApiError::bad_request(format!(
            "the API version in the data ({api_version}) does not match the expected API version ({expected})"
        )));
    }
    let kind = obj["kind"].as_str().unwrap_or("").to_string();
    if kind != res.kind {
        if res.crd.is_some() {
            return Err(ApiError::invalid(
                &res.group,
                &kind,
                meta_str(&obj, "name"),
                vec![field::invalid(
                    "kind",
                    &json!(kind),
                    &format!("must be {}", res.kind),
                )],
            ));
        }
        return Err(ApiError::bad_request(format!(
            "{kind} in version {:?} cannot be handled as a {}: no kind {kind:?} is registered for version {:?} in scheme",
            res.version, res.kind, expected
        )));
    }
    if !obj.get("metadata").is_none_or(Value::is_object) {
        return Err(ApiError::bad_request(format!(
            "{} in version {:?} cannot be handled as a {}: .metadata must be an object",
            res.kind, res.version, res.kind
        )));
    }
    // ObjectMeta's maps are map[string]string: anything else does not decode.
    for map in ["labels", "annotations"] {
        let bad = obj["metadata"]
            .get(map)
            .filter(|m| !m.is_null())
            .is_some_and(|m| {
                m.as_object()
                    .is_none_or(|o| o.values().any(|v| !v.is_string()))
            });
        if bad {
            return Err(ApiError::bad_request(format!(
                "{} in version {:?} cannot be handled as a {}: json: cannot unmarshal {} into Go struct field ObjectMeta.metadata.{map} of type string",
                res.kind, res.version, res.kind,
                if obj["metadata"][map].is_object() { "value" } else { "non-object" }
            )));
        }
    }
    obj["apiVersion"] = json!(storage_api_version(res));
    Ok(obj)
}

fn parse_propagation(p: &str) -> Result<Propagation, ApiError> {
    Propagation::parse(p).ok_or_else(|| {
        ApiError::invalid(
            "meta.k8s.io",
            "DeleteOptions",
            "",
            vec![field::not_supported(
                "propagationPolicy",
                &json!(p),
                &["Foreground", "Background", "Orphan", "nil"],
            )],
        )
    })
}

/// `DeleteOptions` from the body (if any) and the query.
fn delete_options(req: &Request) -> Result<DeleteOptions, ApiError> {
    let mut opts = DeleteOptions::default();
    if !req.body.is_empty() {
        let body = decode_body(req, "DeleteOptions", true)?;
        opts.uid = body["preconditions"]["uid"].as_str().map(str::to_string);
        opts.resource_version = body["preconditions"]["resourceVersion"]
            .as_str()
            .map(str::to_string);
        opts.grace_period_seconds = body["gracePeriodSeconds"].as_i64();
        opts.dry_run = body["dryRun"]
            .as_array()
            .is_some_and(|a| a.iter().any(|v| v == "All"));
        if let Some(p) = body["propagationPolicy"].as_str() {
            opts.propagation = Some(parse_propagation(p)?);
        }
        if let Some(orphan) = body["orphanDependents"].as_bool() {
            if opts.propagation.is_some() {
                return Err(ApiError::invalid(
                    "meta.k8s.io",
                    "DeleteOptions",
                    "",
                    vec![field::invalid(
                        "orphanDependents",
                        &json!(orphan),
                        "orphanDependents and deletionPropagation cannot be both set",
                    )],
                ));
            }
            opts.propagation = Some(if orphan {
                Propagation::Orphan
            } else {
                Propagation::Background
            });
        }
    }
    if let Some(p) = req.query.get("propagationPolicy") {
        opts.propagation = Some(parse_propagation(p)?);
    }
    if let Some(g) = req
        .query
        .get("gracePeriodSeconds")
        .and_then(|s| s.parse().ok())
    {
        opts.grace_period_seconds = Some(g);
    }
    if req.query.all("dryRun").any(|v| v == "All") {
        opts.dry_run = true;
    }
    Ok(opts)
}
