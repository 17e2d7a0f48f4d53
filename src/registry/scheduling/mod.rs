//! Kinds of `scheduling.k8s.io`.

pub mod priorityclass;
