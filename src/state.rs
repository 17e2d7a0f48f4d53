//! The state one running server shares across requests and controllers: the store, the current
//! registry snapshot, and the shutdown signal every long-running response listens to.

use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;
use parking_lot::Mutex;
use serde_json::json;
use tokio::sync::watch;

use crate::context::Context;
use crate::error::ApiError;
use crate::registry::apiextensions::{self, Crd};
use crate::registry::catalog::Registry;
use crate::registry::store as rest;
use crate::store::{GroupResource, Store};

/// Tunables of one server, set through [`crate::ServerBuilder`] or the CLI.
#[derive(Debug, Clone)]
pub struct Options {
    /// How many recent events are kept for watches that resume from a resourceVersion.
    pub history_size: usize,
    /// How many events a watcher may fall behind before it is told to re-list (410).
    pub watch_buffer: usize,
    /// How often watches with `allowWatchBookmarks=true` get a BOOKMARK.
    pub bookmark_interval: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            history_size: 10_000,
            watch_buffer: 1_024,
            bookmark_interval: Duration::from_secs(60),
        }
    }
}

/// Shared server state. See the module documentation.
pub struct State {
    /// Every object.
    pub store: Store,
    registry: ArcSwap<Registry>,
    rebuild: Mutex<()>,
    server_address: String,
    /// Flips to `true` when the server shuts down; watch streams end on it.
    pub shutdown: watch::Receiver<bool>,
    /// Tunables.
    pub options: Options,
}

/// The namespaces every cluster starts with.
pub const INITIAL_NAMESPACES: [&str; 4] =
    ["default", "kube-system", "kube-public", "kube-node-lease"];

impl State {
    /// A fresh cluster serving the built-in resources, with no objects yet: see
    /// [`State::bootstrap`].
    pub fn new(
        server_address: String,
        options: Options,
        shutdown: watch::Receiver<bool>,
    ) -> Arc<State> {
        Arc::new(State {
            store: Store::new(options.history_size, options.watch_buffer),
            registry: ArcSwap::from_pointee(Registry::build(&[], &server_address, None)),
            rebuild: Mutex::new(()),
            server_address,
            shutdown,
            options,
        })
    }

    /// Creates the objects every cluster starts with (the initial namespaces), through the
    /// registry store like any other write.
    pub async fn bootstrap(&self) {
        let ctx = Context::internal();
        let registry = self.registry();
        if let Some(ns) = registry.resolve("", "v1", "namespaces") {
            for name in INITIAL_NAMESPACES {
                let obj =
                    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}});
                if let Err(e) = rest::create(self, &ctx, &ns, "", obj).await {
                    tracing::error!(error = %e, "creating initial namespace {name}");
                }
            }
        }
    }

    /// The current registry snapshot.
    pub fn registry(&self) -> Arc<Registry> {
        self.registry.load_full()
    }

    /// Rebuilds the registry from the stored CRDs. Serialised, and it always reads the latest
    /// store snapshot, so the last rebuild to finish reflects every CRD change before it.
    pub fn refresh_registry(&self) {
        let _guard = self.rebuild.lock();
        let snap = self.store.snapshot();
        let gr = GroupResource::new(apiextensions::GROUP, "customresourcedefinitions");
        let crds: Vec<Arc<Crd>> = snap
            .list(&gr, None)
            .filter_map(|(_, o)| Crd::from_value(&o.value))
            .map(Arc::new)
            .collect();
        let previous = self.registry.load_full();
        self.registry.store(Arc::new(Registry::build(
            &crds,
            &self.server_address,
            Some(&previous),
        )));
    }

    /// Looks up a served resource or fails with the apiserver's 404.
    pub fn resource(
        &self,
        group: &str,
        version: &str,
        plural: &str,
    ) -> Result<Arc<crate::registry::catalog::ApiResource>, ApiError> {
        self.registry()
            .resolve(group, version, plural)
            .ok_or_else(ApiError::path_not_found)
    }
}
