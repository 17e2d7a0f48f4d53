//! Integration tests: one fresh kubefake server per test, driven over HTTP by kube-rs (and by a
//! raw HTTP client where the exact status code, headers or error body is the point).

mod admission_webhook;
mod admissionregistration;
mod apiregistration;
mod apply;
mod autoscaling;
mod batch;
mod bodies;
mod cel;
mod configmaps;
mod controller;
mod conversion;
mod conversion_webhook;
mod crd;
mod crud;
mod discovery;
mod errors;
mod gc;
mod harness;
mod kinds_core;
mod lifecycle;
mod list;
mod negotiation;
mod networking;
mod openapi;
mod policy;
mod printing;
mod rbac;
mod scheduling;
mod schema;
mod server;
mod storage;
mod subresources;
mod watch;
mod webhook;
mod workloads;
