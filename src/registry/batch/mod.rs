//! Kinds of the `batch` group.

pub mod job;
