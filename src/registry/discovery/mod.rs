//! Kinds of the `discovery.k8s.io` group.

pub mod endpointslice;
