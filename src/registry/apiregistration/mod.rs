//! Kinds of `apiregistration.k8s.io`, which the kube-apiserver's aggregator serves.

pub mod apiservice;
