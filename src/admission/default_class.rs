//! The DefaultStorageClass and DefaultIngressClass admission plugins: a PersistentVolumeClaim
//! created without a class gets the default StorageClass, an Ingress created without a class
//! gets the default IngressClass. The default is the class annotated
//! `...is-default-class: "true"`; when several are, the newest (then the first by name), as
//! the apiserver chooses. With no default class nothing changes.

use futures_util::future::BoxFuture;
use serde_json::{json, Value};

use super::{Attributes, Mutating, Operation};
use crate::error::ApiError;
use crate::registry::networking::ingressclass::DEFAULT_ANNOTATION as INGRESS_DEFAULT;
use crate::registry::storage::storageclass::{BETA_DEFAULT_ANNOTATION, DEFAULT_ANNOTATION};
use crate::store::{GroupResource, Store};

/// The legacy annotation that names a claim's class.
const BETA_CLAIM_CLASS: &str = "volume.beta.kubernetes.io/storage-class";
/// The legacy annotation that names an Ingress's class.
const INGRESS_CLASS_ANNOTATION: &str = "kubernetes.io/ingress.class";

/// The DefaultStorageClass plugin.
pub struct DefaultStorageClass;

/// The DefaultIngressClass plugin.
pub struct DefaultIngressClass;

/// Whether the request creates an object of this resource (not a subresource).
fn creates(attrs: &Attributes<'_>, group: &str, plural: &str) -> bool {
    attrs.operation == Operation::Create
        && attrs.subresource.is_empty()
        && attrs.is_for(group, plural)
}

fn annotation<'v>(obj: &'v Value, key: &str) -> Option<&'v Value> {
    obj["metadata"]["annotations"].get(key)
}

/// The newest class any of `annotations` marks as default (ties by name), if one is.
fn newest_default(store: &Store, classes: &GroupResource, annotations: &[&str]) -> Option<String> {
    let snapshot = store.snapshot();
    let mut defaults: Vec<(String, String)> = snapshot
        .list(classes, None)
        .filter(|(_, c)| {
            annotations
                .iter()
                .any(|a| annotation(&c.value(), a) == Some(&json!("true")))
        })
        .map(|(k, c)| {
            let config = c.value();
            let created = config["metadata"]["creationTimestamp"]
                .as_str()
                .unwrap_or("");
            (created.to_string(), k.name.clone())
        })
        .collect();
    defaults.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    defaults.into_iter().next().map(|(_, name)| name)
}

impl Mutating for DefaultStorageClass {
    /// Creates of PersistentVolumeClaims.
    fn handles(&self, attrs: &Attributes<'_>) -> bool {
        creates(attrs, "", "persistentvolumeclaims")
    }

    fn admit<'a>(
        &'a self,
        attrs: &'a Attributes<'a>,
        object: &'a mut Value,
    ) -> BoxFuture<'a, Result<(), ApiError>> {
        let has_class = object["spec"]
            .get("storageClassName")
            .is_some_and(|v| !v.is_null())
            || annotation(object, BETA_CLAIM_CLASS).is_some();
        if !has_class {
            let classes = GroupResource::new("storage.k8s.io", "storageclasses");
            let annotations = [DEFAULT_ANNOTATION, BETA_DEFAULT_ANNOTATION];
            if let Some(name) = newest_default(attrs.store, &classes, &annotations) {
                object["spec"]["storageClassName"] = json!(name);
            }
        }
        Box::pin(std::future::ready(Ok(())))
    }
}

impl Mutating for DefaultIngressClass {
    /// Creates of Ingresses.
    fn handles(&self, attrs: &Attributes<'_>) -> bool {
        creates(attrs, "networking.k8s.io", "ingresses")
    }

    fn admit<'a>(
        &'a self,
        attrs: &'a Attributes<'a>,
        object: &'a mut Value,
    ) -> BoxFuture<'a, Result<(), ApiError>> {
        let has_class = object["spec"]
            .get("ingressClassName")
            .is_some_and(|v| !v.is_null())
            || annotation(object, INGRESS_CLASS_ANNOTATION).is_some();
        if !has_class {
            let classes = GroupResource::new("networking.k8s.io", "ingressclasses");
            if let Some(name) = newest_default(attrs.store, &classes, &[INGRESS_DEFAULT]) {
                object["spec"]["ingressClassName"] = json!(name);
            }
        }
        Box::pin(std::future::ready(Ok(())))
    }
}
