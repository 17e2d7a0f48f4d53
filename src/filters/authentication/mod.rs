//! Who sends a request: the bearer tokens kube-apiserver accepts.

pub mod jwt;
