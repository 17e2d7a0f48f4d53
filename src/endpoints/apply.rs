//! `PATCH` with `application/apply-patch+yaml`: server-side apply. Creates the object when it
//! does not exist; otherwise merges the applier's configuration by the schema, tracking field
//! ownership in `managedFields`, and answers 409 when another manager owns a field it would
//! change (unless `force=true`).

use futures_util::future::BoxFuture;
use serde_json::{json, Value};
use warp::http::StatusCode;
use warp::reply::Response;

use super::negotiation::{decode_yaml, media_type, Request};
use super::resource::Endpoint;
use crate::apply::versions::{single_version, Versions};
use crate::error::{field, ApiError};
use crate::registry::field_managers;
use crate::registry::object_meta::{meta_mut, meta_str, now_rfc3339};
use crate::registry::store::{self as rest, UpdateSource};

/// The media type of an apply patch.
pub const APPLY_PATCH: &str = "application/apply-patch+yaml";

/// Whether a PATCH is a server-side apply.
pub fn is_apply(req: &Request) -> bool {
    media_type(req.header("content-type")) == APPLY_PATCH
}

/// Serves a server-side apply.
pub async fn apply(ep: &Endpoint<'_>) -> Result<Response, ApiError> {
    let manager = required_manager(ep)?;
    let force = ep.req.query.flag("force");
    let res = &ep.res;
    let mut config = decode_config(ep, &res.api_version(), &res.kind)?;
    check_typed(&config, res.schema.shape(), &res.api_version(), &res.kind)?;
    if ep.target.is_main() && res.has_part("status") {
        if let Some(o) = config.as_object_mut() {
            o.remove("status");
        }
    }
    let subresource = ep.target.name();
    let schema = res.schema.shape();
    let now = now_rfc3339();
    let merged = |live: Option<&Value>, versions: &Versions<'_>| -> Result<Value, ApiError> {
        crate::apply::apply(
            live,
            &config,
            manager,
            subresource,
            versions,
            force,
            schema,
            &now,
        )
        .map_err(|c| c.to_api_error(&res.group, &res.plural, ep.name()))
    };
    // The request's context records no Update entry: the apply above records its own.
    let exists = rest::get(ep.state, res, ep.namespace(), ep.name()).is_ok();
    let (status, obj) = if !exists && ep.target.is_main() {
        let mut obj = single_version(&res.api_version(), |v| merged(None, v))?;
        meta_mut(&mut obj).insert("name".into(), json!(ep.name()));
        let created = rest::create(ep.state, ep.ctx, res, ep.namespace(), obj).await?;
        (StatusCode::CREATED, created)
    } else {
        // Managers of other versions are compared in their own (conversions may await, so
        // the future owns a copy of the current object); when every manager is in this
        // version, the apply runs at once on the object as it is.
        let merged = &merged;
        let api_version = res.api_version();
        let apply = |current: &Value| -> BoxFuture<'_, Result<Value, ApiError>> {
            if !field_managers::names_other_versions(&[Some(current)], &api_version) {
                let applied = single_version(&api_version, |v| merged(Some(current), v));
                return Box::pin(std::future::ready(applied));
            }
            let current = current.clone();
            Box::pin(async move {
                field_managers::with_versions(ep.state, res, |v| merged(Some(&current), v)).await?
            })
        };
        let updated = ep
            .update(ep.target.clone(), UpdateSource::PatchAsync(&apply))
            .await?;
        (StatusCode::OK, updated)
    };
    ep.respond(status, &obj).await
}

/// The `fieldManager` an apply must name.
pub(super) fn required_manager<'r>(ep: &'r Endpoint<'_>) -> Result<&'r str, ApiError> {
    match ep.req.query.get("fieldManager").filter(|m| !m.is_empty()) {
        Some(manager) => Ok(manager),
        None => Err(ApiError::invalid(
            "meta.k8s.io",
            "PatchOptions",
            "",
            vec![field::required(
                "fieldManager",
                "is required for apply patch",
            )],
        )),
    }
}

/// The apply configuration: YAML (or JSON) naming `api_version`, `kind` and this endpoint's
/// name, without managedFields.
pub(super) fn decode_config(
    ep: &Endpoint<'_>,
    want_api_version: &str,
    want_kind: &str,
) -> Result<Value, ApiError> {
    let config = decode_yaml(&ep.req.body).map_err(|e| {
        ApiError::bad_request(format!(
            "error decoding YAML: error converting YAML to JSON: {e}"
        ))
    })?;
    if !config.is_object() {
        return Err(ApiError::bad_request(
            "error decoding YAML: the apply configuration is not an object",
        ));
    }
    // The field manager's version check comes first (`versionCheckManager`, outermost of its
    // managers), the managedFields check last (`structuredMergeManager`).
    let api_version = config["apiVersion"].as_str().unwrap_or("");
    let kind = config["kind"].as_str().unwrap_or("");
    if api_version != want_api_version || kind != want_kind {
        return Err(ApiError::bad_request(format!(
            "invalid object type: {}",
            go_gvk(api_version, kind)
        )));
    }
    if config["metadata"]
        .get("managedFields")
        .is_some_and(|m| !m.is_null())
    {
        return Err(ApiError::bad_request("metadata.managedFields must be nil"));
    }
    let name = meta_str(&config, "name");
    if !name.is_empty() && name != ep.name() {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({name}) does not match the name on the URL ({})",
            ep.name()
        )));
    }
    Ok(config)
}

/// The configuration typed against the schema: the field manager's 500 when it does not fit.
pub(super) fn check_typed(
    config: &Value,
    schema: Option<crate::schema::Shape<'_>>,
    api_version: &str,
    kind: &str,
) -> Result<(), ApiError> {
    crate::apply::validate_config(config, schema)
        .map_err(|e| untyped_patch(config, api_version, kind, &e.to_string()))
}

/// The field manager's error for a configuration it cannot type, named by the configuration's
/// own namespace and name (`objectGVKNN`); a plain error, so a 500 without a reason.
pub(super) fn untyped_patch(config: &Value, api_version: &str, kind: &str, why: &str) -> ApiError {
    ApiError::plain(format!(
        "failed to create typed patch object ({}/{}; {api_version}, Kind={kind}): {why}",
        meta_str(config, "namespace"),
        meta_str(config, "name"),
    ))
}

/// An unstructured object's GroupVersionKind as Go's `%v` writes it (`apps/v1, Kind=Deployment`,
/// `/, Kind=ConfigMap` without an apiVersion); an apiVersion with more than one `/` does not
/// parse, and the object then has no GroupVersionKind at all.
fn go_gvk(api_version: &str, kind: &str) -> String {
    let (group, version) = match api_version.split('/').collect::<Vec<_>>().as_slice() {
        [version] => ("", *version),
        [group, version] => (*group, *version),
        _ => return "/, Kind=".to_string(),
    };
    format!("{group}/{version}, Kind={kind}")
}

#[cfg(test)]
mod tests {
    use super::go_gvk;
    use rstest::rstest;

    #[rstest]
    #[case("apps/v1", "Deployment", "apps/v1, Kind=Deployment")]
    #[case("v1", "ConfigMap", "/v1, Kind=ConfigMap")]
    #[case("", "ConfigMap", "/, Kind=ConfigMap")]
    #[case("a/b/c", "X", "/, Kind=")]
    fn gvks_as_go_prints_them(#[case] api_version: &str, #[case] kind: &str, #[case] want: &str) {
        assert_eq!(go_gvk(api_version, kind), want);
    }
}
