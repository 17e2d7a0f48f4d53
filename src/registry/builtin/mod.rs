//! The built-in kinds kubefake serves: one line per kind, each kind declared in its own file
//! under its group's folder. The resources are built once per process and shared by every
//! server (they hold no per-server state).

pub mod data;

use std::sync::{Arc, LazyLock};

use super::resource::ApiResource;
use super::{apiextensions, core};

/// Every built-in kind, in discovery order within its group.
const KINDS: &[fn() -> ApiResource] = &[core::namespace::resource, apiextensions::crd::resource];

static RESOURCES: LazyLock<Vec<Arc<ApiResource>>> =
    LazyLock::new(|| KINDS.iter().map(|kind| Arc::new(kind())).collect());

/// The built-in resources.
pub fn resources() -> &'static [Arc<ApiResource>] {
    &RESOURCES
}
