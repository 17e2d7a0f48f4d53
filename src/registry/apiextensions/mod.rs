//! `apiextensions.k8s.io`: the CustomResourceDefinition kind, and the strategy of the custom
//! resources it defines.

pub mod crd;
pub mod custom_resource;
mod internal_json;
pub mod types;

pub use types::*;
