//! The PriorityClass half of the apiserver's Priority admission plugin, and the PriorityClass
//! storage's refusal to delete the system classes (kubefake has no per-kind delete hook, and
//! a refusal that changes nothing is what admission is for).
//!
//! Not yet: a second `globalDefault` class is not refused (the plugin compares the written
//! object with the stored classes; admission's commit-time checks do not see the written
//! object), and pods' priorities are not resolved from their class.

use futures_util::future::BoxFuture;
use serde_json::Value;

use super::{Attributes, Operation, Validating};
use crate::error::ApiError;
use crate::registry::scheduling::priorityclass::{is_system_class, GROUP};

/// The plugin.
pub struct Priority;

impl Validating for Priority {
    fn validate<'a>(
        &'a self,
        attrs: &'a Attributes<'a>,
        _object: Option<&'a Value>,
    ) -> BoxFuture<'a, Result<(), ApiError>> {
        let res = attrs.resource;
        let refused = attrs.operation == Operation::Delete
            && attrs.subresource.is_empty()
            && res.group == GROUP
            && res.plural == "priorityclasses"
            && is_system_class(attrs.name);
        let result = if refused {
            Err(ApiError::forbidden(
                &res.group,
                &res.plural,
                attrs.name,
                "this is a system priority class and cannot be deleted",
            ))
        } else {
            Ok(())
        };
        Box::pin(std::future::ready(result))
    }
}
