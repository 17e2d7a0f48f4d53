//! Kinds of the `apps` group, and what its workload kinds share ([`workload`]).

pub mod controllerrevision;
pub mod daemonset;
pub mod deployment;
pub mod replicaset;
pub mod statefulset;
pub mod workload;
