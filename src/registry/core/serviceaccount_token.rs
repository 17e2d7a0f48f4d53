//! `serviceaccounts/token` (authentication/v1 TokenRequest): a signed, audience-scoped,
//! expiring token for a service account, optionally bound to a pod, secret or node so that it
//! stops authenticating when that object goes, as kube-apiserver's TokenREST issues it.

use std::time::{Duration, SystemTime};

use futures_util::future::BoxFuture;
use serde_json::{json, Value};

use crate::error::{field, ApiError, StatusDetails};
use crate::filters::authentication::jwt::{
    BoundObject, Claims, Ref, ServiceAccountRef, DEFAULT_EXPIRATION_SECONDS,
    MAX_EXPIRATION_SECONDS, MIN_EXPIRATION_SECONDS,
};
use crate::registry::object_meta::meta_str;
use crate::registry::resource::{Action, ActionCall};
use crate::store::{GroupResource, ObjectKey, Snapshot, StoredObject};

const GROUP: &str = "authentication.k8s.io";

/// The `token` subresource.
pub struct TokenRequest;

fn invalid(name: &str, path: &str, value: Value, detail: &str) -> ApiError {
    ApiError::invalid(
        GROUP,
        "TokenRequest",
        name,
        vec![field::invalid(path, &value, detail)],
    )
}

fn get(
    snap: &Snapshot,
    resource: &str,
    ns: &str,
    name: &str,
) -> Option<std::sync::Arc<StoredObject>> {
    snap.get(&GroupResource::new("", resource), &ObjectKey::new(ns, name))
}

fn reference(obj: &StoredObject) -> Ref {
    Ref {
        name: meta_str(&obj.value(), "name").to_string(),
        uid: meta_str(&obj.value(), "uid").to_string(),
    }
}

/// The object `spec.boundObjectRef` names, checked as TokenREST checks it.
fn bound_object(
    snap: &Snapshot,
    ns: &str,
    sa: &str,
    r: &Value,
) -> Result<Option<BoundObject>, ApiError> {
    if !r.is_object() {
        return Ok(None);
    }
    let kind = r["kind"].as_str().unwrap_or("");
    let api_version = r["apiVersion"].as_str().unwrap_or("");
    let name = r["name"].as_str().unwrap_or("");
    let core = api_version == "v1";
    let (bound, uid, resource) = match kind {
        "Pod" if core => {
            let pod =
                get(snap, "pods", ns, name).ok_or_else(|| ApiError::not_found("", "pods", name))?;
            if pod.value()["spec"]["serviceAccountName"]
                .as_str()
                .unwrap_or("")
                != sa
            {
                return Err(ApiError::bad_request(format!(
                    "cannot bind token for serviceaccount {sa:?} to pod running with different serviceaccount name."
                )));
            }
            let node = pod.value()["spec"]["nodeName"]
                .as_str()
                .filter(|n| !n.is_empty())
                .map(|n| {
                    get(snap, "nodes", "", n).map_or(
                        Ref {
                            name: n.to_string(),
                            uid: String::new(),
                        },
                        |o| reference(&o),
                    )
                });
            let pod_ref = reference(&pod);
            let uid = pod_ref.uid.clone();
            (BoundObject::Pod { pod: pod_ref, node }, uid, "Pod")
        }
        "Node" if core => {
            let node = get(snap, "nodes", "", name)
                .ok_or_else(|| ApiError::not_found("", "nodes", name))?;
            let node_ref = reference(&node);
            let uid = node_ref.uid.clone();
            (BoundObject::Node(node_ref), uid, "Node")
        }
        "Secret" if core => {
            let secret = get(snap, "secrets", ns, name)
                .ok_or_else(|| ApiError::not_found("", "secrets", name))?;
            let secret_ref = reference(&secret);
            let uid = secret_ref.uid.clone();
            (BoundObject::Secret(secret_ref), uid, "Secret")
        }
        _ => {
            let gvk = go_group_version_kind(api_version, kind);
            return Err(ApiError::bad_request(format!(
                "cannot bind token to object of type {gvk}"
            )));
        }
    };
    let want = r["uid"].as_str().unwrap_or("");
    if !want.is_empty() && want != uid {
        return Err(conflict(resource, name, &format!(
            "the UID in the bound object reference ({want}) does not match the UID in record. The object might have been deleted and then recreated"
        )));
    }
    Ok(Some(bound))
}

/// `schema.GroupVersionKind.String()`: `group/version, Kind=kind`.
fn go_group_version_kind(api_version: &str, kind: &str) -> String {
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    format!("{group}/{version}, Kind={kind}")
}

/// `NewConflict` for a group-resource the apiserver names by kind.
fn conflict(resource: &str, name: &str, detail: &str) -> ApiError {
    let mut err = ApiError::status(
        409,
        "Conflict",
        format!("Operation cannot be fulfilled on {resource} {name:?}: {detail}"),
    );
    err.details = Some(Box::new(StatusDetails {
        name: Some(name.to_string()),
        kind: Some(resource.to_string()),
        ..Default::default()
    }));
    err
}

impl Action for TokenRequest {
    fn body_kind(&self) -> Option<&'static str> {
        Some("TokenRequest")
    }

    fn serve<'a>(&'a self, call: ActionCall<'a>) -> BoxFuture<'a, Result<(u16, Value), ApiError>> {
        Box::pin(async move { issue(&call) })
    }
}

/// A request's own name and namespace, when given, must be the service account's.
fn check_names(req: &Value, ns: &str, name: &str) -> Result<(), ApiError> {
    let req_name = meta_str(req, "name");
    if !req_name.is_empty() && req_name != name {
        return Err(invalid(
            name,
            "metadata.name",
            json!(req_name),
            "must match the service account name if specified",
        ));
    }
    let req_ns = meta_str(req, "namespace");
    if !req_ns.is_empty() && req_ns != ns {
        return Err(invalid(
            name,
            "metadata.namespace",
            json!(req_ns),
            "must match the service account namespace if specified",
        ));
    }
    Ok(())
}

/// `spec.expirationSeconds`, defaulted and validated (`ValidateTokenRequest`).
fn expiration_seconds(spec: &Value) -> Result<i64, ApiError> {
    let seconds = spec["expirationSeconds"]
        .as_i64()
        .unwrap_or(DEFAULT_EXPIRATION_SECONDS);
    let too = if seconds < MIN_EXPIRATION_SECONDS {
        "may not specify a duration less than 10 minutes"
    } else if seconds > MAX_EXPIRATION_SECONDS {
        "may not specify a duration larger than 2^32 seconds"
    } else {
        return Ok(seconds);
    };
    Err(invalid("", "spec.expirationSeconds", json!(seconds), too))
}

/// `TokenREST.Create`.
fn issue(call: &ActionCall<'_>) -> Result<(u16, Value), ApiError> {
    let (ns, name) = (call.namespace, call.name);
    let mut req = call.body.clone().unwrap_or(Value::Null);
    check_names(&req, ns, name)?;
    let snap = call.state.store.snapshot();
    let sa = get(&snap, "serviceaccounts", ns, name)
        .ok_or_else(|| ApiError::not_found("", "serviceaccounts", name))?;
    let sa_uid = meta_str(&sa.value(), "uid").to_string();
    let req_uid = meta_str(&req, "uid").to_string();
    if !req_uid.is_empty() && req_uid != sa_uid {
        return Err(conflict("TokenRequest", name, &format!(
            "the UID in the token request ({req_uid}) does not match the UID of the service account ({sa_uid})"
        )));
    }
    let tokens = &call.state.options.authentication.service_accounts;
    let spec = &mut req["spec"];
    let mut audiences: Vec<String> = spec["audiences"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(String::from)
        .collect();
    if audiences.is_empty() {
        audiences = tokens.api_audiences.clone();
    }
    let seconds = expiration_seconds(spec)?;
    let bound = bound_object(&snap, ns, name, &spec["boundObjectRef"])?;
    let pod_bound = matches!(bound, Some(BoundObject::Pod { .. }));
    let lifetime =
        tokens
            .expiration
            .lifetime(seconds, pod_bound, &audiences, &tokens.api_audiences);
    if let Some(w) = &lifetime.warning {
        call.ctx.warn(w.clone());
    }
    let now = SystemTime::now();
    let account = ServiceAccountRef {
        namespace: ns.to_string(),
        name: name.to_string(),
        uid: sa_uid.clone(),
    };
    let claims = Claims::new(
        &tokens.issuer,
        &account,
        bound.as_ref(),
        audiences.clone(),
        &lifetime,
        now,
    );
    let key = tokens
        .signing_key()
        .ok_or_else(|| ApiError::internal("failed to generate token: no signing key"))?;
    let token = key
        .sign(&claims)
        .map_err(|e| ApiError::internal(format!("failed to generate token: {e}")))?;
    let expires = now + Duration::from_secs(lifetime.expiration_seconds.max(0) as u64);
    let stamp = |t: SystemTime| {
        chrono::DateTime::<chrono::Utc>::from(t)
            .format("%Y-%m-%dT%H:%M:%SZ")
            .to_string()
    };
    req["apiVersion"] = json!(format!("{GROUP}/v1"));
    req["kind"] = json!("TokenRequest");
    req["metadata"] =
        json!({"name": name, "namespace": ns, "uid": sa_uid, "creationTimestamp": stamp(now)});
    req["spec"]["audiences"] = json!(audiences);
    req["spec"]["expirationSeconds"] = json!(lifetime.expiration_seconds);
    req["status"] = json!({"token": token, "expirationTimestamp": stamp(expires)});
    Ok((201, req))
}
