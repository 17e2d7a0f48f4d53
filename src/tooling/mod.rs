//! kubefake's own test tooling, what no real apiserver offers: [`snapshots`] (take the whole
//! state in O(1), restore it with the resourceVersion going on forward, reset to the start
//! state) and [`dump`] (every object as multi-document YAML, and a guard that prints it when a
//! test panics). Reached through [`crate::ServerHandle`] and the HTTP API under `/kubefake/v1/`
//! ([`crate::endpoints::kubefake`]), and from the CLI through [`remote`].
//! [`existing_cluster`] is the other way round: the same test against a real cluster, where
//! none of this exists.

pub mod dump;
pub mod existing_cluster;
pub mod remote;
pub mod snapshots;
