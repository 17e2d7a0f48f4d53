//! The state one running server shares across requests and controllers: the store, the current
//! registry snapshot, and the shutdown signal every long-running response listens to.

mod bootstrap;

use std::sync::{Arc, Weak};
use std::time::Duration;

use arc_swap::ArcSwap;
use parking_lot::Mutex;
use serde_json::Value;
use tokio::sync::watch;

use crate::admission::Chain;
use crate::context::Context;
use crate::controllers;
use crate::error::ApiError;
use crate::filters::authentication::Authenticator;
use crate::filters::authorization;
use crate::filters::faults::Faults;
use crate::filters::request_log::RequestLog;
use crate::registry::apiextensions::custom_resource;
use crate::registry::apiextensions::{self, Crd};
use crate::registry::builtin;
use crate::registry::catalog::Registry;
use crate::registry::core::endpoints;
use crate::registry::object_meta;
use crate::registry::resource::{ApiResource, ClusterInfo};
use crate::store::{GroupResource, ObjectKey, Store};
use crate::webhook::{ServiceResolver, WebhookClient};

/// Tunables of one server, set through [`crate::ServerBuilder`] or the CLI.
#[derive(Debug, Clone)]
pub struct Options {
    /// How many recent events are kept for watches that resume from a resourceVersion.
    pub history_size: usize,
    /// How many bytes of JSON the kept events may hold (the objects they carry).
    pub history_bytes: usize,
    /// How many events a watcher may fall behind before it is told to re-list (410).
    pub watch_buffer: usize,
    /// How often watches with `allowWatchBookmarks=true` get a BOOKMARK.
    pub bookmark_interval: Duration,
    /// How many connections are served at once; past it a new connection gets a 503 `Status`
    /// and is closed.
    pub max_connections: usize,
    /// Serve requests whatever their `Host` header names. Off by default: only `localhost`, a
    /// loopback address or the listening address are accepted (DNS-rebinding protection).
    pub allow_any_host: bool,
    /// How long a client may take to send a request's headers, and then its body.
    pub read_timeout: Duration,
    /// How long a connection with no open request is kept (HTTP/1.1 keep-alive and HTTP/2):
    /// 90 s, as the apiserver's `http.Server` and Go's client transport keep them.
    pub idle_timeout: Duration,
    /// How long a response (a watch stream included) may wait on a client that does not read
    /// before the server ends it.
    pub stall_timeout: Duration,
    /// Where webhooks named by Service run (`namespace/name:port` to an address); a Service
    /// not listed here is looked up in its Endpoints and EndpointSlices.
    pub webhook_services: ServiceResolver,
    /// Who requests come from: static tokens (the kubeconfig's admin token among them),
    /// whether anonymous requests are allowed.
    pub authentication: Authenticator,
    /// How requests are authorized.
    pub authorization: authorization::Mode,
    /// HTTPS: the serving certificate and the client CA; `None` serves plain HTTP.
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// The simulated cluster (nodes, scheduler, kubelets, workload controllers); `None` (the
    /// default) simulates nothing: pods stay Pending, Deployments get no ReplicaSets.
    pub simulation: Option<crate::controllers::simulated::Simulation>,
    /// The CA bundle (PEM) published in every namespace's `kube-root-ca.crt` ConfigMap, as
    /// kube-controller-manager's `--root-ca-file`: [`crate::ServerBuilder::start`] sets the
    /// serving certificate's CA, or on plain HTTP a CA generated for the purpose. `None`
    /// publishes no ConfigMap.
    pub root_ca: Option<String>,
    /// Which of kube-controller-manager's controllers run (all unless set; none under
    /// envtest).
    pub kube_controllers: crate::controllers::kube_controllers::KubeControllers,
    /// Built-in admission plugins not run (`--disable-admission-plugins`): envtest disables
    /// `ServiceAccount`, as no controller creates service accounts beside its apiserver.
    pub disabled_admission_plugins: Vec<String>,
    /// How many requests the request log keeps (0: none are recorded).
    pub request_log_size: usize,
    /// Whether the request log keeps request bodies.
    pub request_log_bodies: bool,
    /// Where every request is also written as an audit event (`--audit-log-path`).
    pub audit_log: Option<Arc<crate::filters::audit::AuditLog>>,
    /// The IPv4 range Services get their cluster IPs from (`--service-cluster-ip-range`): the
    /// default ServiceCIDR's, whose first address is the `kubernetes` Service's.
    pub service_cidr: String,
    /// A watch without `timeoutSeconds` ends after a random time between this and twice it
    /// (`--min-request-timeout`, 1800 s); zero: never.
    pub min_request_timeout: Duration,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            history_size: 10_000,
            history_bytes: crate::store::DEFAULT_HISTORY_BYTES,
            watch_buffer: 1_024,
            bookmark_interval: Duration::from_secs(60),
            max_connections: 4_096,
            allow_any_host: false,
            read_timeout: Duration::from_secs(30),
            idle_timeout: Duration::from_secs(90),
            stall_timeout: Duration::from_secs(10),
            webhook_services: ServiceResolver::new(),
            authentication: Authenticator::default(),
            authorization: authorization::Mode::default(),
            tls: None,
            simulation: None,
            root_ca: None,
            kube_controllers: Default::default(),
            disabled_admission_plugins: Vec::new(),
            request_log_size: crate::filters::request_log::DEFAULT_SIZE,
            request_log_bodies: false,
            service_cidr: crate::registry::core::service_alloc::SERVICE_CIDR.to_string(),
            min_request_timeout: Duration::from_secs(1800),
            audit_log: None,
        }
    }
}

/// Shared server state. See the module documentation.
pub struct State {
    /// Every object.
    pub store: Store,
    registry: ArcSwap<Registry>,
    /// The kinds a test registered beside the built-in ones, kept for every rebuild.
    kinds: Vec<Arc<ApiResource>>,
    rebuild: Mutex<()>,
    server_address: String,
    /// Flips to `true` when the server shuts down; watch streams end on it.
    pub shutdown: watch::Receiver<bool>,
    /// Tunables.
    pub options: Options,
    /// The admission chain every write goes through.
    pub admission: Chain,
    /// Calls conversion (and admission) webhooks.
    pub webhooks: Arc<WebhookClient>,
    /// The fault rules requests are checked against.
    pub faults: Faults,
    /// Every request answered, newest last.
    pub requests: RequestLog,
    /// This state, for work it schedules for later ([`crate::controllers::later`]).
    this: Weak<State>,
    /// When the work scheduled by [`crate::controllers::later_once`] is due.
    pub(crate) timers: Mutex<std::collections::HashMap<controllers::Work, std::time::Instant>>,
    /// The request metrics `/metrics` serves.
    pub metrics: crate::metrics::Metrics,
    /// Snapshots a test took, and the start state reset returns to.
    pub snapshots: crate::tooling::snapshots::Snapshots,
}

impl State {
    /// A fresh cluster serving the built-in resources, with no objects yet: see
    /// [`State::bootstrap`].
    pub fn new(
        server_address: String,
        options: Options,
        shutdown: watch::Receiver<bool>,
    ) -> Arc<State> {
        State::with_kinds(server_address, options, shutdown, Vec::new())
    }

    /// [`State::new`] serving more kinds beside the built-in ones: what registering a kind in
    /// `registry::builtin` does, for tests of the request path with kinds of their own.
    pub fn with_kinds(
        server_address: String,
        options: Options,
        shutdown: watch::Receiver<bool>,
        extra: Vec<ApiResource>,
    ) -> Arc<State> {
        let kinds: Vec<Arc<ApiResource>> = extra.into_iter().map(Arc::new).collect();
        Arc::new_cyclic(|state: &Weak<State>| {
            let this = state.clone();
            let state = state.clone();
            let resolver = options
                .webhook_services
                .clone()
                .with_fallback(move |ns, name, port| {
                    let snap = state.upgrade()?.store.snapshot();
                    endpoints::service_endpoint(&snap, ns, name, port)
                });
            let webhooks = Arc::new(WebhookClient::new(resolver));
            let admission =
                Chain::with_webhooks(webhooks.clone(), &options.disabled_admission_plugins);
            let requests = RequestLog::new(options.request_log_size, options.request_log_bodies);
            State {
                store: Store::new(options.history_size, options.watch_buffer)
                    .with_encoder(crate::typed::order::write)
                    .with_history_bytes(options.history_bytes),
                registry: ArcSwap::from_pointee(Registry::build(
                    &kinds,
                    Vec::new(),
                    &server_address,
                )),
                kinds,
                rebuild: Mutex::new(()),
                server_address,
                shutdown,
                options,
                admission,
                webhooks,
                faults: Faults::default(),
                requests,
                this,
                timers: Mutex::default(),
                metrics: crate::metrics::Metrics::default(),
                snapshots: Default::default(),
            }
        })
    }

    /// Creates the objects every cluster starts with (each built-in kind declares its own), in
    /// one write: decoded, defaulted and prepared as any create is, without the admission and
    /// validation a client's create passes (they are known valid, which a unit test checks,
    /// and nothing is configured to admit them yet). Each still takes its own
    /// resourceVersion, uid and creationTimestamp and its ADDED event, and the controllers
    /// then look at them all at once (the aggregated ClusterRoles get their rules once, with
    /// every role and binding there). A server of the built-in kinds alone replays what a
    /// recorded start wrote instead (`state::bootstrap`), its own values in place.
    pub async fn bootstrap(&self) {
        let ctx = Context::internal();
        let writes = async {
            if self.options.simulation.is_some() {
                let nodes = controllers::Work::Simulated(controllers::simulated::Sim::Nodes);
                ctx.work().push([nodes]);
            }
            if !self.replay_recorded_bootstrap().await {
                self.create_bootstrap_objects(&ctx).await;
            }
        };
        controllers::after_all(self, &ctx, writes).await;
        self.mark_start_state();
    }

    /// Replays the recorded start of this server's configuration, when this server serves the
    /// built-in kinds alone (other kinds may bring bootstrap objects of their own). Whether
    /// it did.
    async fn replay_recorded_bootstrap(&self) -> bool {
        if !self.kinds.is_empty() {
            return false;
        }
        match bootstrap::replay(self).await {
            Ok(()) => true,
            Err(e) => {
                tracing::error!(error = %e, "replaying the recorded start");
                false
            }
        }
    }

    /// What `state::bootstrap` records: the start through the write path, and what the
    /// controllers do about it.
    async fn bootstrap_through_write_path(&self) {
        let ctx = Context::internal();
        let writes = self.create_bootstrap_objects(&ctx);
        controllers::after_all(self, &ctx, writes).await;
    }

    /// Records the current state as the one a reset returns to ([`crate::ServerBuilder::start`]
    /// does once the preloaded files are in).
    pub fn mark_start_state(&self) {
        self.snapshots.mark_start(self.store.snapshot());
    }

    async fn create_bootstrap_objects(&self, ctx: &Context) {
        let cluster = ClusterInfo {
            address: &self.server_address,
            authorization: self.options.authorization,
            service_cidr: &self.options.service_cidr,
        };
        let mut prepared = Vec::new();
        for res in builtin::resources().iter().chain(&self.kinds) {
            for obj in (res.bootstrap)(&cluster) {
                match prepare_bootstrap_object(ctx, res, obj).await {
                    Ok(obj) => prepared.push((res, obj)),
                    Err(e) => {
                        tracing::error!(error = %e, kind = %res.kind, "preparing a bootstrap object")
                    }
                }
            }
        }
        let written = self.store.write(|txn| {
            let mut written = Vec::with_capacity(prepared.len());
            for (res, mut obj) in prepared {
                let key = ObjectKey::new(
                    object_meta::meta_str(&obj, "namespace"),
                    object_meta::meta_str(&obj, "name"),
                );
                let stored = res
                    .strategy
                    .allocate(txn.view(), &mut obj, None, false)
                    .and_then(|()| txn.put(&res.gr, key, obj));
                match stored {
                    Ok(stored) => written.push((res, stored)),
                    Err(e) => {
                        tracing::error!(error = %e, kind = %res.kind, "storing a bootstrap object")
                    }
                }
            }
            Ok(written)
        });
        for (res, stored) in written.unwrap_or_default() {
            controllers::after_commit(self, ctx, res, &stored).await;
        }
    }

    /// This state, if the server still runs (for work scheduled for later).
    pub fn this(&self) -> Option<Arc<State>> {
        self.this.upgrade()
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
            .filter_map(|(_, o)| Crd::from_value(&o.value()))
            .map(Arc::new)
            .collect();
        let previous = self.registry.load_full();
        let custom = custom_resource::resources(&crds, Some(&previous), &self.webhooks);
        self.registry.store(Arc::new(Registry::build(
            &self.kinds,
            custom,
            &self.server_address,
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

/// A bootstrap object as a create would store it: decoded (pruned and defaulted) by its kind,
/// its metadata prepared (uid, creationTimestamp, generation), in its storage version.
async fn prepare_bootstrap_object(
    ctx: &Context,
    res: &ApiResource,
    mut obj: Value,
) -> Result<Value, ApiError> {
    let strategy = &res.strategy;
    strategy.decode(&mut obj, ctx)?;
    let namespace = if res.namespaced {
        object_meta::meta_str(&obj, "namespace").to_string()
    } else {
        String::new()
    };
    object_meta::prepare_for_create(&mut obj, &namespace, strategy.as_ref());
    strategy.prepare_for_create(&mut obj);
    res.codec.to_storage(obj).await
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::*;
    use crate::filters::authorization::Mode;

    /// The bootstrap objects skip the validation a client's create passes: every one of them,
    /// in either authorization mode, must pass it, as prepared for the store.
    #[rstest]
    #[case::always_allow(Mode::AlwaysAllow)]
    #[case::rbac(Mode::Rbac)]
    #[tokio::test]
    async fn bootstrap_objects_are_valid(#[case] authorization: Mode) {
        let cluster = ClusterInfo {
            address: "127.0.0.1:6443",
            authorization,
            service_cidr: crate::registry::core::service_alloc::SERVICE_CIDR,
        };
        let ctx = Context::internal();
        let mut count = 0;
        for res in builtin::resources() {
            for obj in (res.bootstrap)(&cluster) {
                let obj = prepare_bootstrap_object(&ctx, res, obj)
                    .await
                    .expect("decodes");
                let mut errs = object_meta::validate_create(&obj, res.strategy.name_rule());
                errs.extend(res.strategy.validate(&obj));
                assert!(errs.is_empty(), "{} {obj}: {errs:?}", res.kind);
                count += 1;
            }
        }
        assert!(count > 20, "{count}");
    }
}
