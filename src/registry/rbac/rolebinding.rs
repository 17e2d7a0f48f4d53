//! The rbac/v1 RoleBinding kind: grants a Role or ClusterRole to users, groups and service
//! accounts within a namespace. The role reference is required, defaulted to this group, and
//! may not change; subjects' kinds and groups are checked. Whether the referenced role exists,
//! and whether the writer may grant it, is not checked (nothing authorizes yet).

use std::sync::Arc;

use super::{binding_resource, BindingStrategy};
use crate::registry::resource::ApiResource;

/// The role kinds a RoleBinding may reference.
const ROLE_KINDS: &[&str] = &["Role", "ClusterRole"];

/// `roleRef`'s description, as the apiserver's printer takes it from rbac/v1beta1.
const ROLE_DESCRIPTION: &str = "RoleRef can reference a Role in the current namespace or a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error.";

/// The served resource.
pub fn resource() -> ApiResource {
    let strategy = BindingStrategy {
        role_kinds: ROLE_KINDS,
        namespaced: true,
    };
    binding_resource(
        "rolebindings",
        Arc::new(strategy),
        ROLE_DESCRIPTION,
        "roleBinding",
        super::bootstrap::role_bindings,
    )
}
