//! The rbac/v1 RoleBinding kind: grants a Role or ClusterRole to users, groups and service
//! accounts within a namespace. The role reference is required, defaulted to this group, and
//! may not change; subjects' kinds and groups are checked. Whether the referenced role exists,
//! and whether the writer may grant it, is not checked (nothing authorizes yet).

use std::sync::Arc;

use serde_json::Value;

use super::{binding_columns, binding_defaults, binding_errors, binding_update_errors};
use crate::error::StatusCause;
use crate::registry::builtin;
use crate::registry::object_meta::NameRule;
use crate::registry::resource::ApiResource;
use crate::registry::strategy::Strategy;
use crate::registry::table::Columns;
use crate::store::selector::generic_unsupported_field;

/// The role kinds a RoleBinding may reference.
const ROLE_KINDS: &[&str] = &["Role", "ClusterRole"];

/// `roleRef`'s description, as the apiserver's printer takes it from rbac/v1beta1.
const ROLE_DESCRIPTION: &str = "RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error.";

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind(
        super::GROUP,
        "v1",
        "rolebindings",
        Arc::new(RoleBindingStrategy),
    )
    .with(|r| {
        r.unsupported_field(generic_unsupported_field)
            .table(Columns::new(binding_columns(
                ROLE_DESCRIPTION,
                "roleBinding",
            )))
    })
    .build()
}

/// rbac/v1 RoleBinding.
pub struct RoleBindingStrategy;

impl Strategy for RoleBindingStrategy {
    fn name_rule(&self) -> NameRule {
        NameRule::PathSegment
    }

    fn track_generation(&self) -> bool {
        false
    }

    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn defaults(&self, obj: &mut Value) {
        binding_defaults(obj);
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        binding_errors(obj, ROLE_KINDS, true)
    }

    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        binding_update_errors(obj, old, ROLE_KINDS, true)
    }
}
