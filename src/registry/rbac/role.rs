//! The rbac/v1 Role kind: a namespaced set of policy rules, validated as the apiserver
//! validates them (verbs required; resource rules name API groups and resources; no
//! non-resource URLs in a namespace). Names are path segments (`system:leader-locking`).
//! The RBAC authorizer enforces the rules.

use std::sync::Arc;

use serde_json::Value;

use super::rules_errors;
use crate::error::StatusCause;
use crate::registry::builtin;
use crate::registry::object_meta::NameRule;
use crate::registry::resource::ApiResource;
use crate::registry::strategy::Strategy;
use crate::store::selector::generic_unsupported_field;

/// The served resource: the default Table (Name, Created At).
pub fn resource() -> ApiResource {
    builtin::kind(super::GROUP, "v1", "roles", Arc::new(RoleStrategy))
        .with(|r| {
            r.unsupported_field(generic_unsupported_field)
                .bootstrap(super::bootstrap::roles)
        })
        .build()
}

/// rbac/v1 Role.
pub struct RoleStrategy;

impl Strategy for RoleStrategy {
    fn name_rule(&self) -> NameRule {
        NameRule::PathSegment
    }

    fn track_generation(&self) -> bool {
        false
    }

    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        rules_errors(obj, true)
    }
}
