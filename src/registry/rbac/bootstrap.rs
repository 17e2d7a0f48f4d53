//! The roles and bindings every cluster starts with: what kube-apiserver's
//! `rbac/bootstrap-roles` post-start hook creates (cluster-admin, admin, edit, view,
//! system:discovery, system:basic-user, the controllers' roles, ...), as Kubernetes 1.36's
//! bootstrap policy defines them (generated into `rbac-bootstrap.json` by
//! `scripts/gen-k8s-data`). Parsed once per process; each server creates them through the
//! registry store like any other object, when it authorizes with RBAC (under AlwaysAllow they
//! would decide nothing, and would triple the time a server takes to start).

use std::sync::LazyLock;

use serde_json::Value;

use crate::filters::authorization::Mode;
use crate::registry::resource::ClusterInfo;

const POLICY: &str = include_str!("../../data/k8s-1.36/rbac-bootstrap.json");

static OBJECTS: LazyLock<Value> =
    LazyLock::new(|| serde_json::from_str(POLICY).unwrap_or(Value::Null));

fn list(cluster: &ClusterInfo, key: &str) -> Vec<Value> {
    if cluster.authorization != Mode::Rbac {
        return Vec::new();
    }
    OBJECTS[key].as_array().cloned().unwrap_or_default()
}

/// The bootstrap ClusterRoles (`admin`, `edit` and `view` are aggregated from others).
pub fn cluster_roles(cluster: &ClusterInfo) -> Vec<Value> {
    list(cluster, "clusterRoles")
}

/// The bootstrap ClusterRoleBindings.
pub fn cluster_role_bindings(cluster: &ClusterInfo) -> Vec<Value> {
    list(cluster, "clusterRoleBindings")
}

/// The bootstrap Roles (in kube-system and kube-public).
pub fn roles(cluster: &ClusterInfo) -> Vec<Value> {
    list(cluster, "roles")
}

/// The bootstrap RoleBindings (in kube-system and kube-public).
pub fn role_bindings(cluster: &ClusterInfo) -> Vec<Value> {
    list(cluster, "roleBindings")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_policy_parses() {
        let rbac = ClusterInfo {
            address: "",
            authorization: Mode::Rbac,
            service_cidr: "",
        };
        let names = |v: Vec<serde_json::Value>| -> Vec<String> {
            v.iter()
                .map(|o| o["metadata"]["name"].as_str().unwrap_or("").to_string())
                .collect()
        };
        let cluster_role_names = names(cluster_roles(&rbac));
        for want in ["cluster-admin", "admin", "edit", "view", "system:discovery"] {
            assert!(cluster_role_names.iter().any(|r| r == want), "{want}");
        }
        assert!(names(cluster_role_bindings(&rbac)).contains(&"cluster-admin".to_string()));
        assert!(!roles(&rbac).is_empty() && !role_bindings(&rbac).is_empty());
        let open = ClusterInfo {
            authorization: Mode::AlwaysAllow,
            ..rbac
        };
        assert!(cluster_roles(&open).is_empty());
    }
}
