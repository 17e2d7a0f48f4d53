//! Kinds of `node.k8s.io`.

pub mod runtimeclass;
