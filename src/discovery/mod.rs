//! What the server serves, and how it describes itself: the resource registry (one immutable
//! snapshot, swapped when a CRD changes) and the discovery documents rendered from it.

pub mod documents;
pub mod openapi;

pub use crate::registry::catalog::{ApiResource, Registry};
