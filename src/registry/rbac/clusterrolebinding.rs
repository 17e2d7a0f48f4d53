//! The rbac/v1 ClusterRoleBinding kind: grants a ClusterRole cluster-wide. As a RoleBinding,
//! but only ClusterRoles may be referenced and ServiceAccount subjects name their namespace.
//! Whether the referenced role exists, and whether the writer may grant it, is not checked
//! (nothing authorizes yet).

use std::sync::Arc;

use super::{binding_resource, BindingStrategy};
use crate::registry::resource::ApiResource;

/// The role kinds a ClusterRoleBinding may reference.
const ROLE_KINDS: &[&str] = &["ClusterRole"];

/// `roleRef`'s description, as the apiserver's printer takes it from rbac/v1beta1.
const ROLE_DESCRIPTION: &str = "RoleRef can only reference a ClusterRole in the global namespace. If the RoleRef cannot be resolved, the Authorizer must return an error.";

/// The served resource.
pub fn resource() -> ApiResource {
    let strategy = BindingStrategy {
        role_kinds: ROLE_KINDS,
        namespaced: false,
    };
    binding_resource(
        "clusterrolebindings",
        Arc::new(strategy),
        ROLE_DESCRIPTION,
        "clusterRoleBinding",
        super::bootstrap::cluster_role_bindings,
    )
}
