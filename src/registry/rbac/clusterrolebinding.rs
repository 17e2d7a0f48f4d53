//! The rbac/v1 ClusterRoleBinding kind: grants a ClusterRole cluster-wide. As a RoleBinding,
//! but only ClusterRoles may be referenced and ServiceAccount subjects name their namespace.
//! Whether the referenced role exists, and whether the writer may grant it, is not checked
//! (nothing authorizes yet).

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

/// The role kinds a ClusterRoleBinding may reference.
const ROLE_KINDS: &[&str] = &["ClusterRole"];

/// `roleRef`'s description, as the apiserver's printer takes it from rbac/v1beta1.
const ROLE_DESCRIPTION: &str = "RoleRef can only reference a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error.";

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind(
        super::GROUP,
        "v1",
        "clusterrolebindings",
        Arc::new(ClusterRoleBindingStrategy),
    )
    .with(|r| {
        r.unsupported_field(generic_unsupported_field)
            .table(Columns::new(binding_columns(
                ROLE_DESCRIPTION,
                "clusterRoleBinding",
            )))
    })
    .build()
}

/// rbac/v1 ClusterRoleBinding.
pub struct ClusterRoleBindingStrategy;

impl Strategy for ClusterRoleBindingStrategy {
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
        binding_errors(obj, ROLE_KINDS, false)
    }

    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        binding_update_errors(obj, old, ROLE_KINDS, false)
    }
}
