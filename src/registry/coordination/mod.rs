//! Kinds of the `coordination.k8s.io` group.

pub mod lease;
