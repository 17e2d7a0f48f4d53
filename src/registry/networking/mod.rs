//! Kinds of `networking.k8s.io`.

pub mod ingress;
pub mod ingressclass;
pub mod ipaddress;
pub mod networkpolicy;
pub mod servicecidr;
