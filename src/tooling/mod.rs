//! kubefake's own test tooling, what no real apiserver offers: [`snapshots`] (take the whole
//! state in O(1), restore it with the resourceVersion going on forward, reset to the start
//! state) and [`dump`] (every object as multi-document YAML, and a guard that prints it when a
//! test panics). Reached through [`crate::ServerHandle`] and the HTTP API under `/kubefake/v1/`
//! ([`crate::endpoints::kubefake`]), and from the CLI through [`remote`].

pub mod dump;
pub mod remote;
pub mod snapshots;
