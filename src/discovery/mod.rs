//! What the server serves, and how it describes itself: the resource registry (one immutable
//! snapshot, swapped when a CRD changes) and the discovery documents rendered from it.

pub mod documents;
pub mod openapi;

/// The Kubernetes version kubefake reports and whose API it serves.
pub const KUBERNETES_VERSION: (&str, &str) = ("1", "36");

/// [`KUBERNETES_VERSION`] as a release, as `/version` and the OpenAPI documents name it.
pub const GIT_VERSION: &str = "v1.36.0";

pub use crate::registry::catalog::{ApiResource, Registry};
