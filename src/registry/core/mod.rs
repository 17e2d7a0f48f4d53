//! Kinds of the core (legacy, `/api/v1`) group.

pub mod configmap;
pub mod event;
pub mod namespace;
pub mod secret;
pub mod serviceaccount;
