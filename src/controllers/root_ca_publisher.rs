//! The root CA certificate publisher of kube-controller-manager
//! (`root-ca-certificate-publisher-controller`): every active namespace has the ConfigMap
//! `kube-root-ca.crt` whose `ca.crt` is the CA bundle that verifies the API server (what the
//! token volume of every pod mounts), with the annotation `kubernetes.io/description`. It is
//! created with the namespace, created again when deleted, and its data and annotation are
//! restored when a client changes them (other keys, labels and annotations are kept).
//!
//! The bundle is [`crate::state::Options::root_ca`]: the CA of the serving certificate when
//! the server serves HTTPS; a server on plain HTTP publishes a CA generated for the purpose
//! (once per process), which signs nothing (there is no TLS to verify) but is a well-formed
//! bundle for whoever reads it. A state built without one publishes nothing.

use serde_json::{json, Map, Value};

use super::{create_logged, edit};
use crate::context::Context;
use crate::registry::core::namespace::is_active;
use crate::state::State;
use crate::store::{GroupResource, ObjectKey};

/// The ConfigMap's name (`RootCACertConfigMapName`).
pub const CONFIG_MAP: &str = "kube-root-ca.crt";
/// The key holding the bundle.
const CA_KEY: &str = "ca.crt";
/// The annotation that says what the ConfigMap is for.
const DESCRIPTION_ANNOTATION: &str = "kubernetes.io/description";
/// Its value, word for word as kube-controller-manager writes it.
const DESCRIPTION: &str = "Contains a CA bundle that can be used to verify the kube-apiserver \
    when using internal endpoints such as the internal service IP or kubernetes.default.svc. \
    No other usage is guaranteed across distributions of Kubernetes clusters.";
/// Who the controller writes as (`system:serviceaccount:kube-system:<name>`).
pub const CONTROLLER: &str = "root-ca-cert-publisher";

/// The ConfigMaps table.
pub fn config_maps_gr() -> GroupResource {
    GroupResource::new("", "configmaps")
}

/// The ConfigMap as the publisher creates it.
fn published(namespace: &str, ca: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": CONFIG_MAP, "namespace": namespace,
            "annotations": {DESCRIPTION_ANNOTATION: DESCRIPTION}},
        "data": {CA_KEY: ca}})
}

/// Whether a stored ConfigMap already says what the publisher would: exactly the bundle as
/// data, and a description (any).
fn up_to_date(cm: &Value, ca: &str) -> bool {
    let data_ok = cm["data"]
        .as_object()
        .is_some_and(|d| d.len() == 1 && d.get(CA_KEY).and_then(Value::as_str) == Some(ca));
    let described = cm["metadata"]["annotations"][DESCRIPTION_ANNOTATION]
        .as_str()
        .is_some_and(|d| !d.is_empty());
    data_ok && described
}

/// Sets the data and the description, keeping everything else.
fn restore(cm: &mut Value, ca: &str) {
    let mut data = Map::new();
    data.insert(CA_KEY.into(), json!(ca));
    cm["data"] = Value::Object(data);
    if !cm["metadata"]["annotations"].is_object() {
        cm["metadata"]["annotations"] = json!({});
    }
    cm["metadata"]["annotations"][DESCRIPTION_ANNOTATION] = json!(DESCRIPTION);
}

/// `syncNamespace`: creates the ConfigMap in an active namespace that lacks it, or restores its
/// data and description.
pub async fn reconcile(state: &State, ctx: &Context, namespace: &str) {
    let Some(ca) = state.options.root_ca.as_deref() else {
        return;
    };
    let snapshot = state.store.snapshot();
    let key = ObjectKey::new(namespace, CONFIG_MAP);
    let current = snapshot.get(&config_maps_gr(), &key);
    let active = is_active(&snapshot, namespace);
    drop(snapshot);
    let Some(res) = state.registry().by_group_resource(&config_maps_gr()) else {
        return;
    };
    match current {
        None if active => {
            create_logged(state, ctx, &res, namespace, published(namespace, ca)).await;
        }
        None => {}
        Some(cm) if up_to_date(&cm.value(), ca) => {}
        Some(_) => {
            let why = "restoring kube-root-ca.crt";
            edit(state, ctx, &res, &key, why, &|cm: &mut Value| {
                restore(cm, ca)
            })
            .await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changed_data_or_description_is_restored() {
        let ca = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
        let fresh = published("team-a", ca);
        assert!(up_to_date(&fresh, ca));
        assert_eq!(
            fresh["metadata"]["annotations"][DESCRIPTION_ANNOTATION],
            DESCRIPTION
        );

        let mut changed = fresh.clone();
        changed["data"]["extra"] = json!("x");
        changed["metadata"]["annotations"]["mine"] = json!("kept");
        changed["metadata"]["labels"] = json!({"a": "b"});
        assert!(!up_to_date(&changed, ca), "an extra key is a change");
        restore(&mut changed, ca);
        assert!(up_to_date(&changed, ca));
        assert_eq!(changed["metadata"]["annotations"]["mine"], "kept");
        assert_eq!(changed["metadata"]["labels"], json!({"a": "b"}));

        let mut undescribed = fresh.clone();
        undescribed["metadata"]["annotations"] = json!({DESCRIPTION_ANNOTATION: ""});
        assert!(!up_to_date(&undescribed, ca));
        assert!(!up_to_date(&json!({"data": {"ca.crt": "other"}}), ca));
        assert!(!up_to_date(&json!({}), ca));
    }
}
