//! API-machinery primitives, each written once: what Kubernetes' own libraries define and every
//! layer uses. A leaf: nothing here reaches another module of the crate.

pub mod duration;
pub mod gofmt;
pub mod names;
pub mod quantity;
pub mod selector;
