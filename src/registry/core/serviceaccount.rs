//! The core/v1 ServiceAccount kind: secret references reduced to their names, the deprecation
//! warning of the `kubernetes.io/enforce-mountable-secrets` annotation, kubectl's columns (NAME
//! and AGE since Kubernetes 1.29 dropped SECRETS), and a DELETE that answers with the object.
//!
//! Its `token` subresource (TokenRequest) is [`super::serviceaccount_token`]. Every active
//! namespace has the ServiceAccount `default`
//! ([`crate::controllers::serviceaccounts`]); removing it reports work to that controller,
//! which creates it again.

use std::sync::Arc;

use serde_json::{json, Value};

use crate::controllers::serviceaccounts::DEFAULT_SERVICE_ACCOUNT;
use crate::controllers::Work;
use crate::registry::builtin;
use crate::registry::object_meta::meta_str;
use crate::registry::resource::ApiResource;
use crate::registry::strategy::Strategy;
use crate::registry::table::{Column, Columns};
use crate::store::StoredObject;

/// The annotation whose use is deprecated since 1.32.
const ENFORCE_MOUNTABLE_SECRETS: &str = "kubernetes.io/enforce-mountable-secrets";

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind(
        "",
        "v1",
        "serviceaccounts",
        Arc::new(ServiceAccountStrategy),
    )
    .action("token", Arc::new(super::serviceaccount_token::TokenRequest))
    .with(|r| {
        r.table(Columns::new(vec![Column::name(), Column::age("string")]))
            .delete_returns_object()
    })
    .build()
}

/// core/v1 ServiceAccount.
pub struct ServiceAccountStrategy;

/// Keeps only the name of each `secrets` reference, as the registry does.
fn clean_secret_references(obj: &mut Value) {
    if let Some(secrets) = obj.get_mut("secrets").and_then(Value::as_array_mut) {
        for s in secrets.iter_mut() {
            *s = match s.get("name") {
                Some(name) => json!({"name": name}),
                None => json!({}),
            };
        }
    }
}

fn has_enforce_annotation(obj: &Value) -> bool {
    obj["metadata"]["annotations"]
        .get(ENFORCE_MOUNTABLE_SECRETS)
        .is_some()
}

fn enforce_warning() -> String {
    format!("metadata.annotations[{ENFORCE_MOUNTABLE_SECRETS}]: deprecated in v1.32+; prefer separate namespaces to isolate access to mounted secrets")
}

impl Strategy for ServiceAccountStrategy {
    fn track_generation(&self) -> bool {
        false
    }

    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        clean_secret_references(obj);
    }

    fn prepare_for_update(&self, obj: &mut Value, _old: &Value) {
        clean_secret_references(obj);
    }

    fn warnings_on_create(&self, obj: &Value) -> Vec<String> {
        if has_enforce_annotation(obj) {
            vec![enforce_warning()]
        } else {
            Vec::new()
        }
    }

    fn warnings_on_update(&self, obj: &Value, old: &Value) -> Vec<String> {
        if has_enforce_annotation(old) {
            return Vec::new();
        }
        self.warnings_on_create(obj)
    }

    /// The `default` account went: the service account controller creates it again (unless
    /// its namespace is going too).
    fn after_remove(&self, obj: &StoredObject) -> Vec<Work> {
        if meta_str(&obj.value(), "name") != DEFAULT_SERVICE_ACCOUNT {
            return Vec::new();
        }
        vec![Work::ServiceAccounts(
            meta_str(&obj.value(), "namespace").to_string(),
        )]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_references_keep_their_names() {
        let mut sa =
            json!({"secrets": [{"name": "a", "namespace": "x", "uid": "u"}, {"kind": "Secret"}]});
        clean_secret_references(&mut sa);
        assert_eq!(sa["secrets"], json!([{"name": "a"}, {}]));
    }
}
