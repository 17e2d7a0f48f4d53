//! The NamespaceLifecycle admission plugin: nothing is created in a namespace that does not
//! exist or is being deleted, and the namespaces a cluster cannot live without are never
//! deleted.
//!
//! The apiserver checks namespaces against an informer cache, so a create can race the
//! namespace's deletion; kubefake checks inside the write, atomically.

use futures_util::future::BoxFuture;
use serde_json::Value;

use super::{Attributes, Operation, Validating};
use crate::error::{ApiError, StatusCause};
use crate::registry::core::namespace::namespaces_gr;
use crate::store::{ObjectKey, Snapshot};

/// Namespaces that may never be deleted.
const IMMORTAL_NAMESPACES: [&str; 3] = ["default", "kube-system", "kube-public"];

/// The plugin.
pub struct NamespaceLifecycle;

fn is_namespace(attrs: &Attributes<'_>) -> bool {
    attrs.is_for("", "namespaces")
}

impl Validating for NamespaceLifecycle {
    /// Deletes of namespaces (what it checks of creates, it checks at commit).
    fn handles(&self, attrs: &Attributes<'_>) -> bool {
        attrs.operation == Operation::Delete && is_namespace(attrs)
    }

    fn validate<'a>(
        &'a self,
        attrs: &'a Attributes<'a>,
        _object: Option<&'a Value>,
    ) -> BoxFuture<'a, Result<(), ApiError>> {
        let refused = IMMORTAL_NAMESPACES.contains(&attrs.name);
        let result = if refused {
            Err(ApiError::forbidden(
                &attrs.resource.group,
                &attrs.resource.plural,
                attrs.name,
                "this namespace may not be deleted",
            ))
        } else {
            Ok(())
        };
        Box::pin(std::future::ready(result))
    }

    fn check_at_commit(&self, attrs: &Attributes<'_>, state: &Snapshot) -> Result<(), ApiError> {
        if attrs.operation != Operation::Create || !attrs.resource.namespaced {
            return Ok(());
        }
        let namespace = attrs.namespace;
        let ns = state
            .get(&namespaces_gr(), &ObjectKey::new("", namespace))
            .ok_or_else(|| ApiError::not_found("", "namespaces", namespace))?;
        if ns.value()["status"]["phase"] != "Terminating" {
            return Ok(());
        }
        let res = attrs.resource;
        let mut err = ApiError::forbidden(
            &res.group,
            &res.plural,
            attrs.name,
            &format!(
                "unable to create new content in namespace {namespace} because it is being terminated"
            ),
        );
        if let Some(d) = err.details.as_mut() {
            d.causes.push(StatusCause {
                reason: "NamespaceTerminating".into(),
                message: format!("namespace {namespace} is being terminated"),
                field: "metadata.namespace".into(),
            });
        }
        Err(err)
    }
}
