//! The ServiceAccount admission plugin: a pod without `serviceAccountName` runs as `default`,
//! gets the service account's image pull secrets when it names none, and, unless the pod or its
//! service account opts out (`automountServiceAccountToken: false`), a projected
//! `kube-api-access-xxxxx` volume (token, `kube-root-ca.crt`, namespace) mounted read-only at
//! `/var/run/secrets/kubernetes.io/serviceaccount` in every container without a mount there.
//!
//! A pod whose service account does not exist is refused (403, `error looking up service
//! account <ns>/<name>: serviceaccount "<name>" not found`), when it is created and again in
//! the validating phase (a mutating webhook may have changed the name), as is an ephemeral
//! container added to a pod whose account went; every active namespace has `default`
//! ([`crate::controllers::serviceaccounts`]). Mirror pods (`kubernetes.io/config.mirror`)
//! are left alone. A pod in a namespace that does not exist or is being deleted is left to
//! NamespaceLifecycle, which the apiserver runs first and kubefake checks at commit, so that
//! its refusal is the one a client sees.
//!
//! Not yet: the `kubernetes.io/enforce-mountable-secrets` checks and the restrictions on what
//! mirror pods may reference.

use futures_util::future::BoxFuture;
use serde_json::{json, Value};

use super::{Attributes, Mutating, Operation, Validating};
use crate::error::ApiError;
use crate::registry::core::namespace::is_active;
use crate::registry::object_meta::generate_name;
use crate::store::{GroupResource, ObjectKey};

/// Where the token volume is mounted.
pub const TOKEN_MOUNT_PATH: &str = "/var/run/secrets/kubernetes.io/serviceaccount";
/// The prefix of the token volume's name.
const VOLUME_PREFIX: &str = "kube-api-access-";
/// The annotation of mirror pods, which the plugin leaves alone.
const MIRROR_POD: &str = "kubernetes.io/config.mirror";

/// The plugin.
pub struct ServiceAccount;

/// Whether a request is a pod create this plugin changes.
pub fn is_pod_create(attrs: &Attributes<'_>) -> bool {
    attrs.operation == Operation::Create && attrs.subresource.is_empty() && attrs.is_for("", "pods")
}

/// Whether a request adds ephemeral containers to a pod.
fn is_ephemeral_update(attrs: &Attributes<'_>) -> bool {
    attrs.operation == Operation::Update
        && attrs.subresource == "ephemeralcontainers"
        && attrs.is_for("", "pods")
}

fn is_mirror(pod: &Value) -> bool {
    pod["metadata"]["annotations"].get(MIRROR_POD).is_some()
}

impl Mutating for ServiceAccount {
    /// Pod creates.
    fn handles(&self, attrs: &Attributes<'_>) -> bool {
        is_pod_create(attrs)
    }

    fn admit<'a>(
        &'a self,
        attrs: &'a Attributes<'a>,
        object: &'a mut Value,
    ) -> BoxFuture<'a, Result<(), ApiError>> {
        let result = if !is_mirror(object) {
            admit_pod(attrs, object)
        } else {
            Ok(())
        };
        Box::pin(std::future::ready(result))
    }
}

impl Validating for ServiceAccount {
    /// Pod creates, and updates of a pod's ephemeral containers.
    fn handles(&self, attrs: &Attributes<'_>) -> bool {
        is_pod_create(attrs) || is_ephemeral_update(attrs)
    }

    /// The account must still exist once mutating admission is done: on a pod create, and when
    /// ephemeral containers are added.
    fn validate<'a>(
        &'a self,
        attrs: &'a Attributes<'a>,
        object: Option<&'a Value>,
    ) -> BoxFuture<'a, Result<(), ApiError>> {
        let result = match object {
            Some(pod) if is_ephemeral_update(attrs) || !is_mirror(pod) => {
                let name = pod["spec"]["serviceAccountName"].as_str().unwrap_or("");
                account(attrs, pod, name).map(|_| ())
            }
            _ => Ok(()),
        };
        Box::pin(std::future::ready(result))
    }
}

/// The pod's service account, or the plugin's 403 (`admission.NewForbidden`) when it names
/// none or one that does not exist. `Null` when the namespace is not active (see the module
/// documentation).
fn account(attrs: &Attributes<'_>, pod: &Value, name: &str) -> Result<Value, ApiError> {
    let snapshot = attrs.store.snapshot();
    if !is_active(&snapshot, attrs.namespace) {
        return Ok(Value::Null);
    }
    let ns = attrs.namespace;
    if name.is_empty() {
        let pod_name = pod["metadata"]["name"].as_str().unwrap_or("");
        let why = format!("no service account specified for pod {ns}/{pod_name}");
        return Err(forbidden(attrs, pod, &why));
    }
    let key = ObjectKey::new(ns, name);
    match snapshot.get(&GroupResource::new("", "serviceaccounts"), &key) {
        Some(sa) => Ok(sa.value().clone()),
        None => {
            let why = format!(
                "error looking up service account {ns}/{name}: serviceaccount \"{name}\" not found"
            );
            Err(forbidden(attrs, pod, &why))
        }
    }
}

/// `admission.NewForbidden`: the pod named as the request names it, else by its name or
/// `generateName` (not generated yet during admission), else `Unknown`.
fn forbidden(attrs: &Attributes<'_>, pod: &Value, why: &str) -> ApiError {
    let meta = &pod["metadata"];
    let name = [
        attrs.name,
        meta_text(meta, "name"),
        meta_text(meta, "generateName"),
    ]
    .into_iter()
    .find(|n| !n.is_empty())
    .unwrap_or("Unknown");
    ApiError::forbidden(&attrs.resource.group, &attrs.resource.plural, name, why)
}

fn meta_text<'a>(meta: &'a Value, key: &str) -> &'a str {
    meta[key].as_str().unwrap_or("")
}

fn admit_pod(attrs: &Attributes<'_>, pod: &mut Value) -> Result<(), ApiError> {
    if !pod["spec"].is_object() {
        return Ok(());
    }
    let name = match pod["spec"]["serviceAccountName"].as_str() {
        Some(n) if !n.is_empty() => n.to_string(),
        _ => "default".to_string(),
    };
    pod["spec"]["serviceAccountName"] = json!(name);
    pod["spec"]["serviceAccount"] = json!(name);
    let account = account(attrs, pod, &name)?;
    let automount = pod["spec"]["automountServiceAccountToken"]
        .as_bool()
        .or_else(|| account["automountServiceAccountToken"].as_bool())
        .unwrap_or(true);
    if automount {
        mount_token(pod);
    }
    let has_secrets = pod["spec"]["imagePullSecrets"]
        .as_array()
        .is_some_and(|a| !a.is_empty());
    let account_secrets: Vec<Value> = account["imagePullSecrets"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|s| json!({"name": s["name"]}))
        .collect();
    if !has_secrets && !account_secrets.is_empty() {
        pod["spec"]["imagePullSecrets"] = Value::Array(account_secrets);
    }
    Ok(())
}

/// Mounts the token volume in every container without a mount at the token path, and adds the
/// volume when a container needed it.
fn mount_token(pod: &mut Value) {
    let existing = pod["spec"]["volumes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v["name"].as_str())
        .find(|n| n.starts_with(VOLUME_PREFIX))
        .map(str::to_string);
    let volume_name = existing
        .clone()
        .unwrap_or_else(|| generate_name(VOLUME_PREFIX));
    let mount = json!({"name": volume_name, "readOnly": true, "mountPath": TOKEN_MOUNT_PATH});
    let mut needed = false;
    for list in ["initContainers", "containers"] {
        let Some(containers) = pod["spec"].get_mut(list).and_then(Value::as_array_mut) else {
            continue;
        };
        for c in containers {
            let mounted = c["volumeMounts"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|m| m["mountPath"] == TOKEN_MOUNT_PATH);
            if mounted {
                continue;
            }
            if !c["volumeMounts"].is_array() {
                c["volumeMounts"] = json!([]);
            }
            if let Some(mounts) = c["volumeMounts"].as_array_mut() {
                mounts.push(mount.clone());
            }
            needed = true;
        }
    }
    if existing.is_none() && needed {
        if !pod["spec"]["volumes"].is_array() {
            pod["spec"]["volumes"] = json!([]);
        }
        if let Some(volumes) = pod["spec"]["volumes"].as_array_mut() {
            volumes.push(json!({"name": volume_name, "projected": token_volume_source()}));
        }
    }
}

/// `TokenVolumeSource`: a bound token (3607 s), the cluster's CA bundle and the namespace.
pub fn token_volume_source() -> Value {
    json!({
        "sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"downwardAPI": {"items": [{"path": "namespace",
                "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
        ],
        "defaultMode": 420,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_container_mounts_one_token_volume() {
        let mut pod = json!({"spec": {
            "initContainers": [{"name": "i"}],
            "containers": [{"name": "a"}, {"name": "b", "volumeMounts": [
                {"name": "own", "mountPath": TOKEN_MOUNT_PATH}]}]}});
        mount_token(&mut pod);
        let volumes = pod["spec"]["volumes"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        assert_eq!(volumes.len(), 1);
        let name = volumes[0]["name"].as_str().unwrap_or("");
        assert!(name.starts_with(VOLUME_PREFIX) && name.len() == VOLUME_PREFIX.len() + 5);
        assert_eq!(
            pod["spec"]["initContainers"][0]["volumeMounts"][0]["name"],
            name
        );
        assert_eq!(
            pod["spec"]["containers"][0]["volumeMounts"][0]["readOnly"],
            true
        );
        assert_eq!(
            pod["spec"]["containers"][1]["volumeMounts"]
                .as_array()
                .map(Vec::len),
            Some(1)
        );
    }
}
