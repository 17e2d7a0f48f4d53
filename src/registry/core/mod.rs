//! Kinds of the core (legacy, `/api/v1`) group.

pub mod configmap;
pub mod namespace;
pub mod pod;
pub mod podspec;
pub mod podtemplate;
pub mod replicationcontroller;
