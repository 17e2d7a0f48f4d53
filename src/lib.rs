//! kubefake: a single-process, in-memory Kubernetes API server for tests.
//!
//! It serves the real Kubernetes REST API over HTTP or HTTPS (discovery, CRDs, CRUD with
//! optimistic concurrency, list/watch, authentication and RBAC), so kubectl, kube-rs, client-go
//! and the Python client work against it unchanged, and it starts in about a millisecond.
//!
//! ```no_run
//! # async fn example() -> Result<(), kubefake::Error> {
//! let server = kubefake::Server::start().await?;
//! println!("{} {}", server.url(), server.kubeconfig_path().display());
//! # Ok(()) }
//! ```
//!
//! # Layout: the request path, as modules
//! A request flows top to bottom; each module calls only modules below it.
//! - [`server`]: the listener (connections accepted with TCP_NODELAY, at most
//!   `max_connections`), the `Host` check, the warp filter that hands every request to the
//!   endpoints, shutdown that ends watch streams first and drops what is left after a second;
//!   [`server::io`], each connection's read and stall timeouts and the `Status` bodies of the
//!   requests hyper refuses itself (414, 431); [`server::tls`], the serving certificate, the
//!   client CA and the user a verified client certificate names (once per connection); a
//!   connection that wakes itself while polled is polled again in place (`server::rewake`).
//! - [`filters`], in the apiserver's order: [`filters::request_info`] (`(method, path)` ->
//!   verb, group, version, namespace, resource, name, subresource; pure);
//!   [`filters::authentication`] (client certificate, static and service account tokens,
//!   anonymous; 401); [`filters::impersonation`]; [`filters::authorization`] (the privileged
//!   group, AlwaysAllow or [`filters::authorization::rbac`] over the request's snapshot; 403);
//!   then the testing hooks: [`filters::faults`] (rules that answer, delay, cut or drop
//!   matching resource requests before their handler, so a faulted request changes nothing)
//!   and [`filters::request_log`] (every answered request, recorded after its response in a
//!   bounded ring buffer), which [`filters::audit`] also writes as `audit.k8s.io/v1` events
//!   (`--audit-log-path`) through a writer thread of its own.
//! - [`endpoints`]: [`endpoints::handle`] builds the request's [`context::Context`] and turns
//!   every error, and every panic, into a `Status`; [`endpoints::kubefake`] serves kubefake's
//!   own API under the reserved prefix `/kubefake/v1/` (one dispatch table, one file per
//!   feature; `system:masters` only under RBAC), before any Kubernetes path parsing;
//!   [`endpoints::resource`] resolves the
//!   resource and dispatches to one file per verb family ([`endpoints::read`],
//!   [`endpoints::write`], [`endpoints::apply`], [`endpoints::delete`], [`endpoints::watch`],
//!   [`endpoints::scale`]); [`endpoints::websocket`] speaks WebSocket on an upgraded
//!   connection (watches, and the streaming subresources' channel protocols), holding the
//!   connection's place until its session ends; [`endpoints::discovery`] serves discovery and
//!   OpenAPI documents;
//!   [`endpoints::negotiation`], [`endpoints::options`], [`endpoints::patch`] and the body
//!   decoders do what the verbs share.
//! - [`admission`]: the chain every create, update and delete passes (mutating plugins, then
//!   validating plugins, plus checks that must hold atomically with the write); one file per
//!   plugin (webhooks, policies, RBAC's escalation checks among them).
//! - [`registry`]: [`registry::store`], the generic store (every verb for every resource, the
//!   optimistic retry loop); [`registry::strategy`], what a kind plugs into it;
//!   [`registry::resource`], what a served resource declares (names, scope, verbs,
//!   subresources and their strategies, Table convertor, OpenAPI definition, codec);
//!   [`registry::catalog`], the immutable snapshot of everything served, rebuilt when CRDs
//!   change, made of the built-in kinds' names (each kind's resource built when first needed);
//!   one file per kind under its group folder ([`registry::core`], [`registry::apps`],
//!   [`registry::batch`], ..., [`registry::apiextensions`]), each registered in one line in
//!   [`registry::builtin`], which starts a built-in kind from Kubernetes' published API data
//!   ([`registry::builtin::data`]) and decodes it through its Go type ([`registry::builtin::typed`],
//!   [`typed`]; [`typed::order`] writes a built-in object's keys in Go's field order, the
//!   store's encoder).
//! - [`conversion`]: the storage edge: request version <-> storage version (the CRD strategies
//!   `None` and `Webhook`, [`conversion::webhook`]; built-in kinds' own converters), each
//!   conversion pruned against the target version's schema, with encodings cached per version
//!   so that reads and watch fan-out serialise once per version.
//! - [`webhook`]: the transport that admission and conversion webhooks share: a
//!   `clientConfig` parsed, `service` references resolved to addresses, one HTTPS POST of JSON
//!   verified against the `caBundle` and bounded by the timeout, failures worded as the
//!   apiserver reports them.
//! - [`schema`] (the structural-schema pipeline: prune, default, validate; [`schema::shape`],
//!   what a walk by type reads of a compiled or a published schema; [`schema::reference`],
//!   the definition a `$ref` names, shared with `build.rs`), [`cel`]
//!   (`x-kubernetes-validations`), [`apply`] (server-side apply and managedFields, pure; the
//!   other versions a manager wrote through are answered by [`registry::field_managers`]).
//! - [`store`]: objects, the one write path, the global resourceVersion, watch fan-out, the
//!   event history and snapshots for consistent lists; [`store::StoredObject`] (in
//!   `store/object.rs`) is one object state, its bytes always and its JSON tree only while a
//!   bounded window of recent trees holds it; `store/json.rs` writes a tree as those bytes
//!   (serde_json's form, faster); [`store::selector`] label and field selectors.
//! - [`controllers`]: what kube-controller-manager and apiextensions-apiserver would run: CRD
//!   establishing and cleanup, namespace lifecycle, the garbage collector, the storage
//!   protection finalizers, ClusterRole aggregation, ValidatingAdmissionPolicy status, each
//!   namespace's `default` ServiceAccount and `kube-root-ca.crt` ConfigMap, the Endpoints and
//!   EndpointSlices of Services with a selector, the APIServices of CRD group-versions
//!   ([`controllers::crd_registration`]); which of kube-controller-manager's run is
//!   [`controllers::kube_controllers`] (all, or none under envtest); an explicit work queue on
//!   the request's
//!   context, drained before the response. [`controllers::simulated`] (opt-in) is the rest of
//!   a small cluster: nodes, scheduler, kubelets and the workload controllers (Deployments,
//!   ReplicaSets, Jobs, CronJobs, StatefulSets, DaemonSets), one file each.
//! - [`discovery`]: the discovery and OpenAPI documents, rendered once per catalog when first
//!   asked for (the built-in kinds' catalog once per process, its servers sharing it but for
//!   `/api`).
//! - `machinery`: API-machinery primitives, each written once and used by every layer: Go's
//!   durations, names (DNS labels and subdomains, qualified names, label values), label
//!   selectors and sets as the apiserver prints them, quantities (exact values, canonical
//!   text), Go's formatting of values in messages (`%q`, `%v`, encoding/json); a leaf that
//!   reaches no other module.
//! - [`metrics`]: the request counters and latency histograms `/metrics` serves, recorded by
//!   [`endpoints::handle`] with atomics on label combinations interned once.
//! - [`endpoints::kubefake`]: kubefake's own HTTP API under `/kubefake/v1/` (a dispatch
//!   table, one file per feature), over [`tooling`]: [`tooling::snapshots`] (O(1) snapshots,
//!   restore and reset that write the difference, the resourceVersion going on forward, and
//!   bring the served CRDs and the controllers along) and [`tooling::dump`] (the state as
//!   YAML; a guard that prints it when a test panics); [`tooling::remote`] is the client of
//!   that API the CLI uses (`kubefake dump`); [`endpoints::kubefake::ui`] is the live view, one
//!   page, script and stylesheet compiled in (`include_str!`) that read the API from the
//!   browser like any client. [`tooling::existing_cluster`] is the other way round:
//!   `KUBEFAKE_EXISTING_CLUSTER=1` makes [`ServerBuilder::start`] hand back a real cluster (a
//!   fresh namespace, the builder's CRDs and objects, cleanup on drop) behind the same
//!   [`ServerHandle`], whose kubefake-only features then answer [`NotAvailable`].
//!
//! Outside the request path, `testing` (feature `testing`) helps users' tests: an HTTPS
//! webhook server with generated certificates, to call through [`webhook`]; [`envtest`] makes
//! the binary stand in for controller-runtime envtest's `kube-apiserver` and `etcd`;
//! [`remote`] is the CLI's client for `/kubefake/v1/` on a running server.
//!
//! # Invariants
//! - One write path, totally ordered: every change takes the next global resourceVersion inside
//!   [`store::Store::write`], which publishes the snapshot, records the events and broadcasts them
//!   in that order. Reads take no lock; no lock is held across an `.await`.
//! - A watcher sees every event after its starting resourceVersion, in order, or a 410 ERROR.
//! - Schemas, discovery and OpenAPI documents are built once per catalog (a built-in kind's
//!   resource and schema once per process), when first used, never per request; a walk by
//!   type reads a built-in kind's published schema in place rather than compiling it whole.
//! - What every server starts with is recorded once per configuration (the common ones at
//!   development time, compiled in and checked by a test; others once per process), then
//!   replayed into each server with its own uids, times and CA bundle (`state::bootstrap`);
//!   only the objects that name the server are made per server.
//! - Every rejection is a `Status` with the apiserver's reason, code and message, and changes
//!   nothing; a panic is a 500 `Status` and changes nothing either.
//! - Per-request state travels in an explicit [`context::Context`], never in thread-locals: a
//!   write may await (admission, conversion) and resume on another thread.
//! - Nothing in the generic store or the endpoints asks which kind it holds: what differs
//!   lives with the kind.
//! - No client can hold the server: shutdown takes about a second whatever clients do, and a
//!   client that does not send or does not read is dropped after a bounded time.
//! - Memory follows the data: a stored state is its bytes plus small indexes; parsed trees,
//!   the watch history and its checkpoints are each bounded.

pub mod admission;
pub mod apply;
pub mod cel;
pub mod context;
pub mod controllers;
pub mod conversion;
pub mod discovery;
pub mod endpoints;
pub mod envtest;
pub mod error;
pub mod filters;
pub mod kubeconfig;
pub mod loader;
pub(crate) mod machinery;
pub mod metrics;
pub mod registry;
pub mod remote;
pub mod schema;
pub mod server;
pub mod state;
pub mod store;
#[cfg(feature = "testing")]
pub mod testing;
pub mod tooling;
pub mod typed;
pub mod webhook;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use filters::authentication::jwt;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinHandle;

pub use context::UserInfo;
pub use controllers::kube_controllers::KubeControllers;
pub use controllers::simulated::{SimulatedNode, Simulation};
pub use error::ApiError;
pub use filters::authorization::Mode as AuthorizationMode;
pub use filters::faults::{Fault, FaultError};
pub use filters::request_log::{RequestFilter, RequestRecord};
pub use kubeconfig::Kubeconfig;
pub use kubeconfig::KubeconfigFile;
pub use server::tls::ServingCertificate;
pub use state::{Options, State};
pub use store::DEFAULT_HISTORY_BYTES;
pub use tooling::dump::{DumpFilter, DumpOnPanic};
pub use tooling::existing_cluster::{ExistingClusterError, NotAvailable};
pub use tooling::snapshots::{Restored, SnapshotError};

/// Why a server could not start.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Binding the listener or writing the kubeconfig failed.
    #[error("I/O error: {0}")]
    Io(#[from] std::io::Error),
    /// A file given to preload could not be read or one of its objects was rejected.
    #[error("loading {0}: {1}")]
    Load(PathBuf, String),
    /// A service account key could not be read.
    #[error("service account key: {0}")]
    Key(String),
    /// The serving certificate or the client CA could not be used.
    #[error("TLS: {0}")]
    Tls(#[from] server::tls::TlsError),
    /// The audit log could not be opened.
    #[error(transparent)]
    Audit(#[from] filters::audit::AuditError),
    /// The service range is not one IPv4 CIDR in canonical form with room for a Service.
    #[error("--service-cluster-ip-range {0:?}: kubefake allocates from one IPv4 CIDR in canonical form, of at most /30 (10.96.0.0/12)")]
    ServiceRange(String),
    /// The existing cluster (see [`ServerBuilder::existing_cluster`]) could not be used.
    #[error("existing cluster: {0}")]
    ExistingCluster(#[from] ExistingClusterError),
}

/// Entry point: `Server::start()` for the defaults, `Server::builder()` for options.
pub struct Server;

impl Server {
    /// Starts a server on 127.0.0.1 with a random port.
    pub async fn start() -> Result<ServerHandle, Error> {
        ServerBuilder::default().start().await
    }

    /// A builder for address, port, preloaded files and tunables.
    pub fn builder() -> ServerBuilder {
        ServerBuilder::default()
    }
}

/// Options of a server before it starts.
#[derive(Debug, Clone)]
pub struct ServerBuilder {
    address: IpAddr,
    port: u16,
    kubeconfig: Option<PathBuf>,
    crds: Vec<PathBuf>,
    objects: Vec<PathBuf>,
    options: Options,
    https: bool,
    serving: Option<ServingCertificate>,
    client_ca: Option<String>,
    /// `None`: as `KUBEFAKE_EXISTING_CLUSTER` says.
    existing_cluster: Option<bool>,
    existing_kubeconfig: Option<PathBuf>,
    audit_log_path: Option<PathBuf>,
}

impl Default for ServerBuilder {
    fn default() -> Self {
        ServerBuilder {
            address: IpAddr::V4(Ipv4Addr::LOCALHOST),
            port: 0,
            kubeconfig: None,
            crds: Vec::new(),
            objects: Vec::new(),
            options: Options::default(),
            https: false,
            serving: None,
            client_ca: None,
            existing_cluster: None,
            existing_kubeconfig: None,
            audit_log_path: None,
        }
    }
}

impl ServerBuilder {
    /// The address to listen on (default 127.0.0.1).
    pub fn address(mut self, address: IpAddr) -> Self {
        self.address = address;
        self
    }

    /// The port to listen on (default 0: any free port).
    pub fn port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// Writes the kubeconfig to this path (kept after shutdown) instead of a temporary file.
    pub fn kubeconfig_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.kubeconfig = Some(path.into());
        self
    }

    /// Preloads the CRDs in a YAML/JSON file or a directory of them (established before start
    /// returns; other kinds in those files are skipped). May be called more than once.
    pub fn crds(mut self, path: impl Into<PathBuf>) -> Self {
        self.crds.push(path.into());
        self
    }

    /// Preloads objects from a YAML/JSON file or directory, after the CRDs.
    pub fn objects(mut self, path: impl Into<PathBuf>) -> Self {
        self.objects.push(path.into());
        self
    }

    /// How many recent events are kept for watches resuming from a resourceVersion.
    pub fn history_size(mut self, events: usize) -> Self {
        self.options.history_size = events;
        self
    }

    /// How many bytes of JSON the kept events may hold (64 MiB by default): with large objects
    /// the history keeps fewer than `history_size` events.
    pub fn history_bytes(mut self, bytes: usize) -> Self {
        self.options.history_bytes = bytes;
        self
    }

    /// How many events a watcher may fall behind before it gets 410 Expired.
    pub fn watch_buffer(mut self, events: usize) -> Self {
        self.options.watch_buffer = events;
        self
    }

    /// How often watches that allow bookmarks receive one.
    pub fn bookmark_interval(mut self, interval: Duration) -> Self {
        self.options.bookmark_interval = interval;
        self
    }

    /// How many connections are served at once (default 4096); one more is answered with a
    /// 503 `Status` and closed.
    pub fn max_connections(mut self, connections: usize) -> Self {
        self.options.max_connections = connections.max(1);
        self
    }

    /// Serves requests whatever host their `Host` header names. By default only `localhost`,
    /// a loopback address or the listening address are served, others get a 403 `Status`:
    /// protection against DNS rebinding (a web page driving the unauthenticated API through
    /// the browser).
    pub fn allow_any_host(mut self, allow: bool) -> Self {
        self.options.allow_any_host = allow;
        self
    }

    /// How long a client may take to send a request's headers, and then its body (default
    /// 30 s).
    pub fn read_timeout(mut self, timeout: Duration) -> Self {
        self.options.read_timeout = timeout;
        self
    }

    /// How long a connection with no open request stays open, HTTP/1.1 keep-alive and HTTP/2
    /// alike (default 90 s, the apiserver's: clients pool idle connections that long).
    pub fn idle_timeout(mut self, timeout: Duration) -> Self {
        self.options.idle_timeout = timeout;
        self
    }

    /// How long a response, a watch stream included, may wait on a client that does not read
    /// it before the server ends it (default 10 s).
    pub fn stall_timeout(mut self, timeout: Duration) -> Self {
        self.options.stall_timeout = timeout;
        self
    }

    /// Where the webhook Service `namespace/name` on `port` (a CRD's conversion webhook
    /// `service`, say) really listens: a local address, typically a
    /// [`testing::WebhookServer`]'s (whose certificate then needs `{name}.{namespace}.svc`).
    /// Services not mapped here are looked up in their Endpoints or EndpointSlices (which, as
    /// in a real cluster, may not hold loopback IPs; an `FQDN` slice address `*.localhost` is
    /// loopback, RFC 6761).
    pub fn webhook_service(
        mut self,
        namespace: &str,
        name: &str,
        port: u16,
        addr: SocketAddr,
    ) -> Self {
        self.options
            .webhook_services
            .insert(namespace, name, port, addr);
        self
    }

    /// Serves HTTPS with a CA and serving certificate generated at start (valid for
    /// localhost, the loopback addresses, the listening address and the `kubernetes` Service
    /// names); [`ServerHandle::ca_pem`], the kubeconfig and every namespace's
    /// `kube-root-ca.crt` carry the CA. Off by default: a test fixture on loopback gains
    /// nothing from TLS but a handshake per connection.
    pub fn https(mut self) -> Self {
        self.https = true;
        self
    }

    /// Serves HTTPS with this certificate instead of a generated one.
    pub fn serving_certificate(mut self, certificate: ServingCertificate) -> Self {
        self.https = true;
        self.serving = Some(certificate);
        self
    }

    /// Verifies client certificates against this CA bundle (PEM), as `--client-ca-file`: a
    /// verified certificate's common name is the user, its organizations the groups. Implies
    /// HTTPS.
    pub fn client_ca(mut self, pem: impl Into<String>) -> Self {
        self.https = true;
        self.client_ca = Some(pem.into());
        self
    }

    /// Does not run these built-in admission plugins (`--disable-admission-plugins`, by the
    /// apiserver's names: `ServiceAccount`, `Priority`, `DefaultTolerationSeconds`,
    /// `StorageObjectInUseProtection`, `DefaultStorageClass`, `DefaultIngressClass`,
    /// `NamespaceLifecycle`); other names are ignored. For envtest's command line, which
    /// disables `ServiceAccount`.
    pub fn disable_admission_plugins<S: Into<String>>(
        mut self,
        names: impl IntoIterator<Item = S>,
    ) -> Self {
        let names = names.into_iter().map(Into::into);
        self.options.disabled_admission_plugins.extend(names);
        self
    }

    /// Runs only these of kube-controller-manager's controllers (the garbage collector, the
    /// namespace, service account and root CA publisher controllers, ...; all by default). envtest's
    /// `kube-apiserver` runs none unless told (`--kubefake-controllers`, `KUBEFAKE_CONTROLLERS`).
    pub fn kube_controllers(mut self, controllers: KubeControllers) -> Self {
        self.options.kube_controllers = controllers;
        self
    }

    /// Accepts `token` as a bearer token for `user` (as a line of `--token-auth-file`).
    pub fn token(mut self, token: impl Into<String>, user: UserInfo) -> Self {
        self.options.authentication.tokens.insert(token, user);
        self
    }

    /// The `iss` of service account tokens (`--service-account-issuer`; default
    /// `https://kubernetes.default.svc.cluster.local`). The API audiences follow it unless
    /// [`ServerBuilder::api_audiences`] says otherwise.
    pub fn service_account_issuer(mut self, issuer: impl Into<String>) -> Self {
        let tokens = &mut self.options.authentication.service_accounts;
        let issuer = issuer.into();
        if tokens.api_audiences == [tokens.issuer.clone()] {
            tokens.api_audiences = vec![issuer.clone()];
        }
        tokens.issuer = issuer;
        self
    }

    /// The audiences requests' service account tokens must be for (`--api-audiences`).
    pub fn api_audiences(mut self, audiences: Vec<String>) -> Self {
        self.options.authentication.service_accounts.api_audiences = audiences;
        self
    }

    /// A watch without `timeoutSeconds` ends after a random time between this and twice it, as
    /// the apiserver ends it (`--min-request-timeout`; default 30 minutes; zero: never).
    pub fn min_request_timeout(mut self, timeout: Duration) -> Self {
        self.options.min_request_timeout = timeout;
        self
    }

    /// The IPv4 range Services get their cluster IPs from (`--service-cluster-ip-range`;
    /// default `10.96.0.0/12`, where a default apiserver's, and envtest's, is `10.0.0.0/24`):
    /// the default ServiceCIDR's, the `kubernetes` Service at its first address.
    pub fn service_cluster_ip_range(mut self, cidr: &str) -> Result<Self, Error> {
        if registry::core::service_alloc::Range::parse(cidr).is_none() {
            return Err(Error::ServiceRange(cidr.to_string()));
        }
        self.options.service_cidr = cidr.to_string();
        Ok(self)
    }

    /// Signs service account tokens with this ECDSA P-256 key (PEM, PKCS#8 or SEC1;
    /// `--service-account-signing-key-file`) instead of a key generated for the process.
    pub fn service_account_signing_key(mut self, pem: &str) -> Result<Self, Error> {
        let key = jwt::SigningKey::from_pkcs8_pem(pem).map_err(|e| Error::Key(e.to_string()))?;
        self.options.authentication.service_accounts.signing_key = Some(Arc::new(key));
        Ok(self)
    }

    /// Also accepts service account tokens signed by these public keys (PEM;
    /// `--service-account-key-file`).
    pub fn service_account_keys(mut self, pem: &str) -> Result<Self, Error> {
        let keys = jwt::VerifyingKey::from_pem(pem).map_err(|e| Error::Key(e.to_string()))?;
        self.options
            .authentication
            .service_accounts
            .extra_keys
            .extend(keys);
        Ok(self)
    }

    /// Accepts every token of a parsed `--token-auth-file`.
    pub fn tokens(mut self, tokens: filters::authentication::token_file::StaticTokens) -> Self {
        self.options.authentication.tokens.extend(tokens);
        self
    }

    /// Whether requests without credentials are served as `system:anonymous` (default true,
    /// as `--anonymous-auth`); when false they get 401.
    pub fn anonymous_auth(mut self, allow: bool) -> Self {
        self.options.authentication.anonymous = allow;
        self
    }

    /// Simulates a cluster (three nodes) or not (the default): see [`ServerBuilder::simulation`].
    pub fn simulate(self, on: bool) -> Self {
        self.simulation_option(on.then(Simulation::default))
    }

    /// Simulates this cluster: its nodes are created Ready at start, pending pods are scheduled
    /// and run (no containers: their statuses say so), and Deployments and ReplicaSets are
    /// reconciled as kube-controller-manager does. See [`controllers::simulated`].
    pub fn simulation(self, simulation: Simulation) -> Self {
        self.simulation_option(Some(simulation))
    }

    fn simulation_option(mut self, simulation: Option<Simulation>) -> Self {
        self.options.simulation = simulation;
        self
    }

    /// How many requests the request log keeps, newest last (default 10,000; 0 records
    /// none). See [`ServerHandle::requests`].
    pub fn request_log_size(mut self, requests: usize) -> Self {
        self.options.request_log_size = requests;
        self
    }

    /// Whether the request log keeps each request's body (default false).
    pub fn request_log_bodies(mut self, keep: bool) -> Self {
        self.options.request_log_bodies = keep;
        self
    }

    /// Also writes every request the request log sees to this file (appended; `-`: standard
    /// output) as an `audit.k8s.io/v1` `Event` JSON line, level `Metadata`, as the apiserver's
    /// `--audit-log-path` does; written by a thread of its own, never on the request path. See
    /// [`filters::audit`].
    pub fn audit_log_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.audit_log_path = Some(path.into());
        self
    }

    /// How requests are authorized: [`AuthorizationMode::AlwaysAllow`] (the default) or
    /// [`AuthorizationMode::Rbac`], where the cluster's roles and bindings decide (the
    /// kubeconfig's admin user is in `system:masters` and may do anything).
    pub fn authorization_mode(mut self, mode: AuthorizationMode) -> Self {
        self.options.authorization = mode;
        self
    }

    /// Hands back the cluster of the current kubeconfig instead of a fake (`true`), or a fake
    /// whatever the environment says (`false`). Unset, the environment variable
    /// `KUBEFAKE_EXISTING_CLUSTER` decides (`1` or `true`: on), so that one suite runs against
    /// kubefake and, unchanged, against a real cluster. On a real cluster the test gets a fresh
    /// namespace (see [`ServerHandle::namespace`]), the CRDs and objects of
    /// [`ServerBuilder::crds`] and [`ServerBuilder::objects`], cleanup on drop, and
    /// [`NotAvailable`] from the kubefake-only features; the other options are not used. Needs
    /// the `kube` feature. See [`tooling::existing_cluster`].
    pub fn existing_cluster(mut self, on: bool) -> Self {
        self.existing_cluster = Some(on);
        self
    }

    /// Uses the existing cluster of this kubeconfig's current context, rather than
    /// `KUBECONFIG`'s or `~/.kube/config`'s; implies `existing_cluster(true)`.
    pub fn existing_cluster_kubeconfig(mut self, path: impl Into<PathBuf>) -> Self {
        self.existing_kubeconfig = Some(path.into());
        self.existing_cluster(true)
    }

    /// Binds, preloads, writes the kubeconfig when the builder named its path (otherwise
    /// [`ServerHandle::kubeconfig_path`] writes a temporary one when first called) and starts
    /// serving (or, in the existing-cluster mode, connects and installs: see
    /// [`ServerBuilder::existing_cluster`]). Binding an
    /// address other than a loopback one without RBAC prints a warning on stderr: anyone who
    /// reaches it may do anything.
    pub async fn start(self) -> Result<ServerHandle, Error> {
        let existing = match self.existing_cluster {
            Some(on) => on,
            None => {
                let switch = std::env::var(tooling::existing_cluster::SWITCH).ok();
                tooling::existing_cluster::parse_switch(switch.as_deref())?
            }
        };
        if existing {
            return self.start_existing().await;
        }
        self.start_fake().await
    }

    /// Connects to the existing cluster and installs the CRDs and objects.
    #[cfg(feature = "kube")]
    async fn start_existing(self) -> Result<ServerHandle, Error> {
        let kubeconfig = self.existing_kubeconfig.as_deref();
        let started =
            tooling::existing_cluster::start(kubeconfig, &self.crds, &self.objects).await?;
        let config = started.cluster.config();
        let url = config
            .cluster_url
            .to_string()
            .trim_end_matches('/')
            .to_string();
        let host = config
            .cluster_url
            .host()
            .unwrap_or("")
            .trim_matches(['[', ']']);
        let https = config.cluster_url.scheme_str() != Some("http");
        let port = config
            .cluster_url
            .port_u16()
            .unwrap_or(if https { 443 } else { 80 });
        let addr = tokio::net::lookup_host((host, port))
            .await?
            .next()
            .ok_or_else(|| {
                std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    format!("{host} has no address"),
                )
            })?;
        let kubeconfig =
            KubeconfigFile::write_text(&started.kubeconfig, self.kubeconfig.as_deref())?;
        Ok(ServerHandle {
            url,
            addr,
            kubeconfig: OnceLock::from(kubeconfig),
            ca_pem: started.ca_pem,
            admin_token: started.token.unwrap_or_default(),
            backend: Backend::Existing(Box::new(started.cluster)),
        })
    }

    #[cfg(not(feature = "kube"))]
    async fn start_existing(self) -> Result<ServerHandle, Error> {
        Err(ExistingClusterError::NeedsKubeFeature.into())
    }

    /// Binds, preloads, writes a kubeconfig whose path the builder named, and starts serving a
    /// fake.
    async fn start_fake(mut self) -> Result<ServerHandle, Error> {
        let listener = TcpListener::bind(SocketAddr::new(self.address, self.port)).await?;
        let addr = listener.local_addr()?;
        if !addr.ip().is_loopback() && self.options.authorization == AuthorizationMode::AlwaysAllow
        {
            eprintln!(
                "warning: kubefake listens on {addr}, not a loopback address, and authorizes \
                 every request: anyone who can reach this address controls it"
            );
        }
        let admin_token = new_token();
        let admin = UserInfo::admin();
        self.options
            .authentication
            .tokens
            .insert(admin_token.clone(), admin);
        let serving = self.serving_certificate_for(addr.ip())?;
        if let Some(serving) = &serving {
            let config = server::tls::server_config(serving, self.client_ca.as_deref())?;
            self.options.tls = Some(config);
        }
        let scheme = if serving.is_some() { "https" } else { "http" };
        let url = format!("{scheme}://{addr}");
        let ca_pem = serving.map(|s| s.ca_pem);
        self.options.root_ca = Some(root_ca(ca_pem.as_deref()));
        if let Some(path) = &self.audit_log_path {
            let audit = filters::audit::AuditLog::open(path)?;
            self.options.audit_log = Some(Arc::new(audit));
        }
        let (shutdown_tx, shutdown_rx) = watch::channel(false);
        let state = State::new(addr.to_string(), self.options, shutdown_rx.clone());
        state.bootstrap().await;
        loader::load(&state, &self.crds, loader::Only::Crds).await?;
        loader::load(&state, &self.objects, loader::Only::All).await?;
        state.mark_start_state();
        // A path the builder names is written now; a temporary file when first asked for.
        let kubeconfig = match self.kubeconfig.as_deref() {
            Some(path) => {
                let config = Kubeconfig {
                    server: &url,
                    ca_pem: ca_pem.as_deref(),
                    token: Some(&admin_token),
                };
                OnceLock::from(KubeconfigFile::write(&config, Some(path))?)
            }
            None => OnceLock::new(),
        };
        let task = tokio::spawn(server::run(listener, state.clone(), shutdown_rx));
        Ok(ServerHandle {
            url,
            addr,
            kubeconfig,
            ca_pem,
            admin_token,
            backend: Backend::Fake(Fake {
                state,
                shutdown: shutdown_tx,
                task: Some(task),
            }),
        })
    }

    /// The certificate to serve, when serving HTTPS: the given one or a generated one.
    fn serving_certificate_for(&mut self, ip: IpAddr) -> Result<Option<ServingCertificate>, Error> {
        if !self.https {
            return Ok(None);
        }
        if let Some(given) = self.serving.take() {
            return Ok(Some(given));
        }
        Ok(Some(ServingCertificate::generate(ip)?))
    }
}

/// The bundle every namespace's `kube-root-ca.crt` publishes: the serving certificate's CA, or
/// on plain HTTP, where no CA verifies anything, [`server::tls::PLAIN_HTTP_ROOT_CA`], so that
/// what reads the ConfigMap finds a well-formed bundle, as in any real cluster.
fn root_ca(serving_ca: Option<&str>) -> String {
    serving_ca
        .unwrap_or(server::tls::PLAIN_HTTP_ROOT_CA)
        .to_string()
}

/// A random bearer token (128 bits, hex).
fn new_token() -> String {
    format!("{:032x}", fastrand::u128(..))
}

/// A running server. Dropping it stops the server (and ends its watch streams); call
/// [`ServerHandle::shutdown`] to also wait until it has stopped.
///
/// In the existing-cluster mode ([`ServerBuilder::existing_cluster`]) the same handle stands
/// for a real cluster: dropping it (or `shutdown`) deletes the test's namespace and what the
/// builder installed, and the kubefake-only features answer [`NotAvailable`].
pub struct ServerHandle {
    url: String,
    addr: SocketAddr,
    /// Written at start to a path the builder named (or for an existing cluster); otherwise
    /// to a temporary file by the first [`ServerHandle::kubeconfig_path`]: most tests only use
    /// `client()`, and creating, writing and removing a file was a tenth of each server's
    /// start (a third of a debug test binary's first, the file code's first run).
    kubeconfig: OnceLock<KubeconfigFile>,
    ca_pem: Option<String>,
    admin_token: String,
    backend: Backend,
}

/// What a handle stands for.
enum Backend {
    /// A kubefake server of this process.
    Fake(Fake),
    /// A real cluster, borrowed for the test.
    #[cfg(feature = "kube")]
    Existing(Box<tooling::existing_cluster::Cluster>),
}

impl Backend {
    fn fake(&self) -> Option<&Fake> {
        match self {
            Backend::Fake(fake) => Some(fake),
            #[cfg(feature = "kube")]
            Backend::Existing(_) => None,
        }
    }
}

/// A kubefake server of this process.
struct Fake {
    state: Arc<State>,
    shutdown: watch::Sender<bool>,
    task: Option<JoinHandle<()>>,
}

impl ServerHandle {
    /// `http://127.0.0.1:<port>` (`https://` when serving HTTPS).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The bound address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The namespace the kubeconfig and the client default to: `default` on kubefake, the
    /// test's fresh namespace (`kubefake-test-xxxxx`) on an existing cluster.
    pub fn namespace(&self) -> &str {
        match &self.backend {
            Backend::Fake(_) => "default",
            #[cfg(feature = "kube")]
            Backend::Existing(cluster) => cluster.namespace(),
        }
    }

    /// Whether this handle stands for an existing cluster rather than a kubefake server.
    pub fn is_existing_cluster(&self) -> bool {
        self.backend.fake().is_none()
    }

    /// The server's state, or which feature needs it on an existing cluster.
    fn fake(&self, feature: &'static str) -> Result<&Arc<State>, NotAvailable> {
        match self.backend.fake() {
            Some(fake) => Ok(&fake.state),
            None => Err(NotAvailable(feature)),
        }
    }

    /// The kubeconfig file pointing at this server: a temporary file, removed with the
    /// handle, unless the builder named a path. It is written by the first call (see
    /// [`ServerHandle::write_kubeconfig`]); should that fail (an unwritable temporary
    /// directory), the error is printed and the path returned, on this call and every later
    /// one, is inside a directory that does not exist, so that a client given it fails rather
    /// than fall back to another cluster's kubeconfig.
    pub fn kubeconfig_path(&self) -> &Path {
        match self.write_kubeconfig() {
            Ok(path) => path,
            Err(e) => {
                eprintln!("kubefake: writing the kubeconfig to a temporary file: {e}");
                tracing::error!("writing the kubeconfig to a temporary file: {e}");
                let nowhere = std::env::temp_dir()
                    .join(format!("kubefake-{:032x}-not-written", fastrand::u128(..)))
                    .join("kubeconfig");
                self.kubeconfig
                    .get_or_init(|| KubeconfigFile::Kept(nowhere))
                    .path()
            }
        }
    }

    /// Writes the kubeconfig file if it is not written yet, and says where it is: what a
    /// caller that must fail when it cannot be written calls (`kubefake serve`, before it
    /// prints the path).
    pub fn write_kubeconfig(&self) -> std::io::Result<&Path> {
        if let Some(file) = self.kubeconfig.get() {
            return Ok(file.path());
        }
        let file = KubeconfigFile::write(&self.kubeconfig_spec(), None)?;
        // Should another thread have written one meanwhile, it stays and this one, unused, is
        // removed as it drops.
        Ok(self.kubeconfig.get_or_init(|| file).path())
    }

    /// The kubeconfig's contents.
    pub fn kubeconfig_yaml(&self) -> String {
        match &self.backend {
            Backend::Fake(_) => self.kubeconfig_spec().render(),
            #[cfg(feature = "kube")]
            Backend::Existing(_) => std::fs::read_to_string(self.kubeconfig_path())
                .unwrap_or_else(|e| format!("# {}: {e}\n", self.kubeconfig_path().display())),
        }
    }

    fn kubeconfig_spec(&self) -> Kubeconfig<'_> {
        Kubeconfig {
            server: &self.url,
            ca_pem: self.ca_pem.as_deref(),
            token: Some(&self.admin_token),
        }
    }

    /// The CA bundle (PEM) that verifies the server's certificate, when it serves HTTPS.
    pub fn ca_pem(&self) -> Option<&str> {
        self.ca_pem.as_deref()
    }

    /// The bearer token of the cluster administrator (`system:admin` in `system:masters`),
    /// which the kubeconfig carries; on an existing cluster, the kubeconfig user's token, empty
    /// when it authenticates otherwise.
    pub fn admin_token(&self) -> &str {
        &self.admin_token
    }

    /// The server's state, for tests that look behind the API (resourceVersion, store).
    pub fn state(&self) -> Result<&Arc<State>, NotAvailable> {
        self.fake("the server's state")
    }

    /// Takes a snapshot of every object, in O(1) whatever the store holds, and returns its id
    /// for [`ServerHandle::restore`] (the same ids as `POST /kubefake/v1/snapshots`).
    pub fn snapshot(&self) -> Result<String, SnapshotError> {
        tooling::snapshots::take(self.fake("snapshots")?)
    }

    /// Brings back every object of a snapshot. The resourceVersion goes on forward: watchers
    /// see the DELETED, MODIFIED and ADDED events of the difference, served resources follow
    /// the restored CRDs. See [`tooling::snapshots`].
    pub async fn restore(&self, id: &str) -> Result<Restored, SnapshotError> {
        tooling::snapshots::restore(self.fake("snapshots")?, id).await
    }

    /// Returns to the state [`ServerBuilder::start`] left: the bootstrap objects, the preloaded
    /// CRDs and objects, no fault rule, an empty request log. Costs what changed since, far
    /// less than starting a new server: one server per suite, a reset per test.
    pub async fn reset(&self) -> Result<Restored, SnapshotError> {
        tooling::snapshots::reset(self.fake("reset")?).await
    }

    /// Every object as multi-document YAML (see [`tooling::dump`]).
    pub fn dump(&self) -> String {
        self.dump_filtered(&DumpFilter::default())
    }

    /// The objects `filter` keeps as multi-document YAML; a rendering failure (a bug), or an
    /// existing cluster, is reported in the text, as this is for people reading a test's output.
    pub fn dump_filtered(&self, filter: &DumpFilter) -> String {
        match self.fake("the state dump") {
            Ok(state) => tooling::dump::render(&state.store.snapshot(), filter)
                .unwrap_or_else(|e| e.to_string()),
            Err(e) => format!("# {e}\n"),
        }
    }

    /// A guard that prints every object to the test's output if the test panics while it is
    /// held: `let _dump = server.dump_on_panic();`. On an existing cluster it prints nothing,
    /// so that the same test runs on both.
    pub fn dump_on_panic(&self) -> DumpOnPanic {
        DumpOnPanic::of(self.fake("the state dump").ok().cloned())
    }

    /// The fault rules: add one to make matching requests fail on purpose.
    ///
    /// ```no_run
    /// # async fn example(server: kubefake::ServerHandle) -> Result<(), Box<dyn std::error::Error>> {
    /// use kubefake::Fault;
    /// let id = server.faults()?.add(
    ///     Fault::new().verb("update").subresource("status").conflict().times(1),
    /// )?;
    /// // ... run the controller ...
    /// assert_eq!(server.faults()?.fired(&id), 1);
    /// # Ok(()) }
    /// ```
    pub fn faults(&self) -> Result<&filters::faults::Faults, NotAvailable> {
        Ok(&self.fake("fault injection")?.faults)
    }

    /// The request log: every request answered, newest last, to assert on.
    ///
    /// ```no_run
    /// # fn example(server: kubefake::ServerHandle) -> Result<(), kubefake::NotAvailable> {
    /// use kubefake::RequestFilter;
    /// let log = server.requests()?;
    /// let status_writes = RequestFilter::writes().subresource("status").field_manager("foo");
    /// assert_eq!(log.count(&status_writes), 2);
    /// assert!(!log.any(&RequestFilter::writes().namespace("kube-system")));
    /// # Ok(()) }
    /// ```
    pub fn requests(&self) -> Result<&filters::request_log::RequestLog, NotAvailable> {
        Ok(&self.fake("the request log")?.requests)
    }

    /// A kube-rs `Config` for this server (default namespace `default`; on an existing
    /// cluster, the kubeconfig's with the test's namespace). On kubefake its trusted roots
    /// are the server's CA only, or none on plain HTTP: kube-rs builds a TLS configuration for
    /// every client, even one that never does TLS, and without roots it loads the operating
    /// system's trust store, some 150 certificates parsed per client (26 ms in a debug build).
    #[cfg(feature = "kube")]
    pub fn kube_config(&self) -> kube::Config {
        if let Backend::Existing(cluster) = &self.backend {
            return cluster.config().clone();
        }
        let mut config = match self.url.parse() {
            Ok(uri) => kube::Config::new(uri),
            Err(_) => unreachable!("the server URL is always a valid URI"),
        };
        config.auth_info.token = Some(self.admin_token.clone().into());
        let roots = self.ca_pem.as_deref().map_or_else(Vec::new, |pem| {
            use rustls_pki_types::pem::PemObject;
            let ders = rustls_pki_types::CertificateDer::pem_slice_iter(pem.as_bytes());
            ders.flatten().map(|d| d.to_vec()).collect()
        });
        config.root_cert = Some(roots);
        config
    }

    /// A kube-rs `Client` for this server.
    #[cfg(feature = "kube")]
    pub fn client(&self) -> Result<kube::Client, kube::Error> {
        kube::Client::try_from(self.kube_config())
    }

    /// Stops the server: ends every watch stream, lets in-flight requests finish for up to
    /// [`server::SHUTDOWN_GRACE`] (1 s), drops the connections still open after it, and
    /// waits. It takes little more than that second whatever clients do. On an existing
    /// cluster: deletes the test's namespace and what the builder installed (a failure is
    /// printed on stderr, as on drop).
    pub async fn shutdown(mut self) {
        match &mut self.backend {
            Backend::Fake(fake) => {
                let _ = fake.shutdown.send(true);
                if let Some(task) = fake.task.take() {
                    let _ = task.await;
                }
            }
            #[cfg(feature = "kube")]
            Backend::Existing(cluster) => {
                if let Err(e) = cluster.cleanup().await {
                    eprintln!("kubefake: cleaning up the existing cluster: {e}");
                }
            }
        }
    }
}

impl Drop for ServerHandle {
    /// Stops a kubefake server; an existing cluster's cleanup is its own drop's.
    fn drop(&mut self) {
        if let Some(fake) = self.backend.fake() {
            let _ = fake.shutdown.send(true);
        }
    }
}
