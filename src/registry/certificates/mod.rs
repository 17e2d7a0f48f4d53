//! Kinds of `certificates.k8s.io`.

pub mod certificatesigningrequest;
pub mod signer;
