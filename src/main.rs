//! The `kubefake` command: `serve` runs a server (envtest-style, for CI and scripts),
//! `kubeconfig` writes a kubeconfig for one that is already running; `dump`, `faults` and
//! `requests` print the objects, drive the fault rules and read the request log of one that is
//! running.

use std::io::Write;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{Parser, Subcommand};
use kubefake::tooling::remote::Remote;
use warp::Filter;

/// With feature `jemalloc`: an allocator that gives freed memory back (see Cargo.toml).
#[cfg(feature = "jemalloc")]
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

#[derive(Parser)]
#[command(
    name = "kubefake",
    version,
    about = "An in-memory Kubernetes API server for tests"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run a server until SIGINT/SIGTERM. Prints KUBEFAKE_URL=... and KUBECONFIG=... when ready.
    Serve(Box<ServeArgs>),
    /// Write into DIR what controller-runtime's envtest looks for in KUBEBUILDER_ASSETS
    /// (kube-apiserver and etcd as links to this binary, kubectl as a link to the one on PATH):
    /// `KUBEBUILDER_ASSETS=DIR` then runs envtest suites on kubefake.
    EnvtestAssets {
        /// The directory (created if missing).
        dir: PathBuf,
    },
    /// Print every object of a running kubefake server as multi-document YAML (its
    /// `/kubefake/v1/dump`), like `kubectl get -o yaml` of everything.
    Dump(DumpArgs),
    /// Write a kubeconfig for a running server.
    Kubeconfig {
        /// The server URL, e.g. https://127.0.0.1:8443.
        #[arg(long)]
        server: String,
        /// A bearer token to authenticate with (one of the server's --token-auth-file).
        #[arg(long)]
        token: Option<String>,
        /// The CA bundle (PEM file) that verifies an HTTPS server (embedded in the kubeconfig).
        #[arg(long)]
        certificate_authority: Option<PathBuf>,
        /// Output file (default: stdout).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// The fault rules of a running server (`/kubefake/v1/faults`).
    Faults {
        #[command(subcommand)]
        command: FaultsCommand,
    },
    /// The request log of a running server (`/kubefake/v1/requests`), one JSON record a line,
    /// oldest first.
    Requests(RequestsArgs),
}

/// Which running server: the current context of a kubeconfig.
#[derive(clap::Args)]
struct Target {
    /// The kubeconfig of the server (kubefake serve prints its path).
    #[arg(long, env = "KUBECONFIG")]
    kubeconfig: PathBuf,
}

/// `kubefake faults ...`.
#[derive(Subcommand)]
enum FaultsCommand {
    /// Add a rule (its JSON, as POST /kubefake/v1/faults takes it; `-` reads it from stdin)
    /// and print its id.
    Add {
        #[command(flatten)]
        target: Target,
        /// The rule, e.g. '{"match": {"verb": "update"}, "action": {"code": 409}, "times": 1}'.
        rule: String,
    },
    /// Print the rules with their `matched` and `fired` counts, as JSON.
    List {
        #[command(flatten)]
        target: Target,
    },
    /// Remove one rule by id, or every rule with --all.
    Delete {
        #[command(flatten)]
        target: Target,
        /// The id `add` printed.
        #[arg(required_unless_present = "all")]
        id: Option<String>,
        /// Remove every rule.
        #[arg(long, conflicts_with = "id")]
        all: bool,
    },
}

/// `kubefake requests ...`.
#[derive(clap::Args)]
struct RequestsArgs {
    #[command(flatten)]
    target: Target,
    /// Filters, as the HTTP API's query parameters: verb=update, namespace=x,
    /// userAgent='kubectl/*', fieldManager=m, code=409, writes=true...
    #[arg(value_name = "KEY=VALUE")]
    filters: Vec<String>,
    /// Clear the log instead of printing it.
    #[arg(long, conflicts_with = "filters")]
    clear: bool,
}

/// The options of `kubefake dump`.
#[derive(clap::Args)]
struct DumpArgs {
    /// The kubeconfig of the server (its current context).
    #[arg(long, env = "KUBECONFIG")]
    kubeconfig: PathBuf,
    /// Only objects in this namespace.
    #[arg(long, short = 'n')]
    namespace: Option<String>,
    /// Only this resource: a plural, or `plural.group`.
    #[arg(long)]
    resource: Option<String>,
    /// Only resources of this API group (`core` for the core group).
    #[arg(long)]
    group: Option<String>,
    /// Keep `metadata.managedFields`.
    #[arg(long)]
    show_managed_fields: bool,
}

impl DumpArgs {
    /// The dump's path and query.
    fn path(&self) -> String {
        let mut query = form_urlencoded::Serializer::new(String::new());
        for (key, value) in [
            ("namespace", &self.namespace),
            ("resource", &self.resource),
            ("group", &self.group),
        ] {
            if let Some(value) = value {
                query.append_pair(key, value);
            }
        }
        if self.show_managed_fields {
            query.append_pair("managedFields", "true");
        }
        format!("/kubefake/v1/dump?{}", query.finish())
    }
}

/// `kubefake dump`: prints the dump of the server the kubeconfig names.
async fn dump(args: DumpArgs) -> ExitCode {
    let text = match std::fs::read_to_string(&args.kubeconfig) {
        Ok(text) => text,
        Err(e) => {
            tracing::error!("reading {}: {e}", args.kubeconfig.display());
            return ExitCode::FAILURE;
        }
    };
    let dir = args.kubeconfig.parent().unwrap_or(Path::new("."));
    let dumped = match Remote::from_kubeconfig(&text, dir) {
        Ok(remote) => remote.get(&args.path()).await,
        Err(e) => Err(e),
    };
    match dumped {
        Ok(yaml) => {
            print!("{}", String::from_utf8_lossy(&yaml));
            ExitCode::SUCCESS
        }
        Err(e) => {
            tracing::error!("{e}");
            ExitCode::FAILURE
        }
    }
}

/// The options of `kubefake serve`.
#[derive(clap::Args)]
struct ServeArgs {
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    address: IpAddr,
    /// Port to listen on (0 picks a free one).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Where to write the kubeconfig (default: a temporary file removed on exit).
    #[arg(long)]
    kubeconfig: Option<PathBuf>,
    /// CRD manifests to install before serving (file or directory; repeatable).
    #[arg(long)]
    crds: Vec<PathBuf>,
    /// Objects to create before serving, after the CRDs (file or directory; repeatable).
    #[arg(long)]
    objects: Vec<PathBuf>,
    /// Recent events kept for watches that resume from a resourceVersion.
    #[arg(long, default_value_t = 10_000)]
    history_size: usize,
    /// Bytes of JSON the kept events may hold (fewer events are kept when objects are large).
    #[arg(long, default_value_t = kubefake::DEFAULT_HISTORY_BYTES)]
    history_bytes: usize,
    /// Events a watcher may fall behind before it is told to re-list (410).
    #[arg(long, default_value_t = 1_024)]
    watch_buffer: usize,
    /// Seconds between BOOKMARK events on watches that allow them.
    #[arg(long, default_value_t = 60.0)]
    bookmark_interval: f64,
    /// Connections served at once; one more is answered 503 and closed.
    #[arg(long, default_value_t = 4_096)]
    max_connections: usize,
    /// Serve requests whatever their Host header (off: only localhost, loopback addresses
    /// and the listening address, as protection against DNS rebinding).
    #[arg(long)]
    allow_any_host: bool,
    /// Seconds a client may take to send a request's headers, then its body.
    #[arg(long, default_value_t = 30.0)]
    read_timeout: f64,
    /// Seconds a connection with no open request stays open (HTTP/1.1 keep-alive and HTTP/2).
    #[arg(long, default_value_t = 90.0)]
    idle_timeout: f64,
    /// The IPv4 CIDR Services get their cluster IPs from (the default ServiceCIDR's).
    #[arg(long, default_value = kubefake::registry::core::service_alloc::SERVICE_CIDR)]
    service_cluster_ip_range: String,
    /// Seconds a response or watch stream may wait on a client that does not read it
    /// before it is ended.
    #[arg(long, default_value_t = 10.0)]
    stall_timeout: f64,
    /// Where a webhook Service really listens, for conversion webhooks named by Service:
    /// `NAMESPACE/NAME:PORT=HOST:PORT` (repeatable). Services not given here are looked up
    /// in their Endpoints or EndpointSlices (loopback IPs are refused there, as by the
    /// apiserver; an FQDN slice address `*.localhost` is loopback).
    #[arg(long, value_parser = parse_webhook_service)]
    webhook_service: Vec<WebhookService>,
    /// Serve plain HTTP instead of HTTPS (the kubeconfig then holds no CA).
    #[arg(long)]
    http: bool,
    /// Where the serving certificate is, as `apiserver.crt` and `apiserver.key` (with its CA
    /// after it in the .crt); when they are missing, the generated ones are written there.
    /// Ignored with --tls-cert-file.
    #[arg(long)]
    cert_dir: Option<PathBuf>,
    /// The serving certificate (PEM) instead of a generated one; needs --tls-private-key-file.
    #[arg(long, requires = "tls_private_key_file")]
    tls_cert_file: Option<PathBuf>,
    /// The serving certificate's private key (PEM).
    #[arg(long, requires = "tls_cert_file")]
    tls_private_key_file: Option<PathBuf>,
    /// Verify client certificates against this CA bundle: the common name is the user, the
    /// organizations its groups.
    #[arg(long)]
    client_ca_file: Option<PathBuf>,
    /// Static bearer tokens: a CSV file of `token,user,uid,"group1,group2"` lines.
    #[arg(long)]
    token_auth_file: Option<PathBuf>,
    /// The `iss` of service account tokens (TokenRequest).
    #[arg(long)]
    service_account_issuer: Option<String>,
    /// The ECDSA P-256 private key (PEM) service account tokens are signed with.
    #[arg(long)]
    service_account_signing_key_file: Option<PathBuf>,
    /// Public keys (PEM) service account tokens may also be signed with.
    #[arg(long)]
    service_account_key_file: Vec<PathBuf>,
    /// The audiences service account tokens must be for (comma-separated; default: the issuer).
    #[arg(long, value_delimiter = ',')]
    api_audiences: Vec<String>,
    /// Serve requests without credentials as system:anonymous (false: 401).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set)]
    anonymous_auth: bool,
    /// RBAC (roles and bindings decide; the kubeconfig's admin is in system:masters) or
    /// AlwaysAllow.
    #[arg(long, default_value = "RBAC", value_parser = parse_authorization_mode)]
    authorization_mode: kubefake::AuthorizationMode,
    /// Simulate a cluster: Ready nodes, a scheduler, kubelets that run pods (no containers),
    /// and the Deployment and ReplicaSet controllers.
    #[arg(long)]
    simulate: bool,
    /// How many nodes the simulated cluster has (implies --simulate).
    #[arg(long)]
    nodes: Option<usize>,
    /// How many requests the request log keeps (0: none are recorded).
    #[arg(long, default_value_t = kubefake::filters::request_log::DEFAULT_SIZE)]
    request_log_size: usize,
    /// Keep each request's body in the request log.
    #[arg(long)]
    request_log_bodies: bool,
    /// Also write every request to this file as an audit.k8s.io/v1 Event JSON line (level
    /// Metadata; `-` for standard output), as kube-apiserver's --audit-log-path.
    #[arg(long, value_name = "FILE")]
    audit_log_path: Option<std::path::PathBuf>,
}

fn parse_authorization_mode(s: &str) -> Result<kubefake::AuthorizationMode, String> {
    match s {
        "RBAC" => Ok(kubefake::AuthorizationMode::Rbac),
        "AlwaysAllow" => Ok(kubefake::AuthorizationMode::AlwaysAllow),
        other => Err(format!(
            "authorization mode {other:?} is not supported: use RBAC or AlwaysAllow"
        )),
    }
}

/// A certificate and key given as files; the certificate file's chain is also the CA bundle
/// the kubeconfig carries.
fn given_certificate(cert: &Path, key: &Path) -> Result<kubefake::ServingCertificate, String> {
    let cert_pem = read(cert)?;
    Ok(kubefake::ServingCertificate {
        ca_pem: cert_pem.clone(),
        cert_pem,
        key_pem: read(key)?,
    })
}

/// `--cert-dir`: `apiserver.crt` and `apiserver.key` there, or generated and written there.
fn cert_dir_certificate(
    dir: &Path,
    address: IpAddr,
) -> Result<kubefake::ServingCertificate, String> {
    let (cert, key) = (dir.join("apiserver.crt"), dir.join("apiserver.key"));
    if cert.exists() && key.exists() {
        return given_certificate(&cert, &key);
    }
    let generated = kubefake::ServingCertificate::generate(address).map_err(|e| e.to_string())?;
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let bundle = format!("{}{}", generated.cert_pem, generated.ca_pem);
    std::fs::write(&cert, bundle).map_err(|e| format!("writing {}: {e}", cert.display()))?;
    kubefake::kubeconfig::write_private(&key, &generated.key_pem)
        .map_err(|e| format!("writing {}: {e}", key.display()))?;
    Ok(generated)
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()))
}

impl ServeArgs {
    /// The server these options describe.
    fn builder(self) -> Result<kubefake::ServerBuilder, String> {
        // `kubefake serve` is a server: KUBEFAKE_EXISTING_CLUSTER is for test fixtures.
        let mut builder = kubefake::Server::builder()
            .existing_cluster(false)
            .address(self.address)
            .port(self.port)
            .history_size(self.history_size)
            .history_bytes(self.history_bytes)
            .watch_buffer(self.watch_buffer)
            .bookmark_interval(Duration::from_secs_f64(self.bookmark_interval.max(0.001)))
            .max_connections(self.max_connections)
            .allow_any_host(self.allow_any_host)
            .read_timeout(Duration::from_secs_f64(self.read_timeout.max(0.001)))
            .idle_timeout(Duration::from_secs_f64(self.idle_timeout.max(0.001)))
            .stall_timeout(Duration::from_secs_f64(self.stall_timeout.max(0.001)))
            .anonymous_auth(self.anonymous_auth)
            .authorization_mode(self.authorization_mode)
            .request_log_size(self.request_log_size)
            .request_log_bodies(self.request_log_bodies);
        if self.simulate || self.nodes.is_some() {
            builder = builder.simulation(kubefake::Simulation::with_nodes(self.nodes.unwrap_or(3)));
        }
        builder = self.tls(builder)?;
        builder = self.service_accounts(builder)?;
        builder = builder
            .service_cluster_ip_range(&self.service_cluster_ip_range)
            .map_err(|e| e.to_string())?;
        if let Some(path) = self.kubeconfig {
            builder = builder.kubeconfig_path(path);
        }
        if let Some(path) = self.audit_log_path {
            builder = builder.audit_log_path(path);
        }
        for s in self.webhook_service {
            builder = builder.webhook_service(&s.namespace, &s.name, s.port, s.addr);
        }
        for p in self.crds {
            builder = builder.crds(p);
        }
        for p in self.objects {
            builder = builder.objects(p);
        }
        if let Some(path) = &self.token_auth_file {
            let tokens =
                kubefake::filters::authentication::token_file::StaticTokens::parse(&read(path)?)
                    .map_err(|e| format!("{}: {e}", path.display()))?;
            builder = builder.tokens(tokens);
        }
        Ok(builder)
    }

    fn service_accounts(
        &self,
        mut builder: kubefake::ServerBuilder,
    ) -> Result<kubefake::ServerBuilder, String> {
        if let Some(issuer) = &self.service_account_issuer {
            builder = builder.service_account_issuer(issuer);
        }
        if !self.api_audiences.is_empty() {
            builder = builder.api_audiences(self.api_audiences.clone());
        }
        if let Some(path) = &self.service_account_signing_key_file {
            builder = builder
                .service_account_signing_key(&read(path)?)
                .map_err(|e| format!("{}: {e}", path.display()))?;
        }
        for path in &self.service_account_key_file {
            builder = builder
                .service_account_keys(&read(path)?)
                .map_err(|e| format!("{}: {e}", path.display()))?;
        }
        Ok(builder)
    }

    fn tls(&self, mut builder: kubefake::ServerBuilder) -> Result<kubefake::ServerBuilder, String> {
        if self.http {
            if self.tls_cert_file.is_some() || self.client_ca_file.is_some() {
                return Err(
                    "--http serves no TLS: drop --tls-cert-file and --client-ca-file".into(),
                );
            }
            return Ok(builder);
        }
        builder = builder.https();
        if let (Some(cert), Some(key)) = (&self.tls_cert_file, &self.tls_private_key_file) {
            builder = builder.serving_certificate(given_certificate(cert, key)?);
        } else if let Some(dir) = &self.cert_dir {
            builder = builder.serving_certificate(cert_dir_certificate(dir, self.address)?);
        }
        if let Some(ca) = &self.client_ca_file {
            builder = builder.client_ca(read(ca)?);
        }
        Ok(builder)
    }
}

/// `kubefake faults add|list|delete`.
async fn faults(command: FaultsCommand) -> Result<(), String> {
    let (target, method, path, body) = match command {
        FaultsCommand::Add { target, rule } => {
            let rule = match rule.as_str() {
                "-" => std::io::read_to_string(std::io::stdin()).map_err(|e| e.to_string())?,
                _ => rule,
            };
            (
                target,
                "POST",
                "/kubefake/v1/faults".to_string(),
                Some(rule.into_bytes()),
            )
        }
        FaultsCommand::List { target } => (target, "GET", "/kubefake/v1/faults".into(), None),
        FaultsCommand::Delete { target, id, .. } => {
            let path = match id {
                Some(id) => format!("/kubefake/v1/faults/{id}"),
                None => "/kubefake/v1/faults".into(),
            };
            (target, "DELETE", path, None)
        }
    };
    let answer = call(&target, method, &path, body).await?;
    match answer["id"].as_str() {
        Some(id) if method == "POST" => println!("{id}"),
        _ => println!(
            "{}",
            serde_json::to_string_pretty(&answer).unwrap_or_default()
        ),
    }
    Ok(())
}

/// `kubefake requests [KEY=VALUE]... [--clear]`.
async fn requests(args: RequestsArgs) -> Result<(), String> {
    if args.clear {
        let answer = call(&args.target, "DELETE", "/kubefake/v1/requests", None).await?;
        println!("cleared {}", answer["cleared"]);
        return Ok(());
    }
    let mut query = form_urlencoded::Serializer::new(String::new());
    for filter in &args.filters {
        let (key, value) = filter
            .split_once('=')
            .ok_or_else(|| format!("filter {filter:?} is not KEY=VALUE"))?;
        query.append_pair(key, value);
    }
    let path = format!("/kubefake/v1/requests?{}", query.finish());
    let answer = call(&args.target, "GET", &path, None).await?;
    for item in answer["items"].as_array().into_iter().flatten() {
        println!("{item}");
    }
    Ok(())
}

/// One call to a running server's kubefake API: its JSON answer, or the `Status` message.
async fn call(
    target: &Target,
    method: &str,
    path: &str,
    body: Option<Vec<u8>>,
) -> Result<serde_json::Value, String> {
    let remote =
        kubefake::remote::Remote::from_kubeconfig(&target.kubeconfig).map_err(|e| e.to_string())?;
    let (code, bytes) = remote
        .call(method, path, body)
        .await
        .map_err(|e| e.to_string())?;
    let answer: serde_json::Value = serde_json::from_slice(&bytes).unwrap_or_default();
    if code >= 300 {
        let message = answer["message"].as_str().map_or_else(
            || String::from_utf8_lossy(&bytes).into_owned(),
            str::to_string,
        );
        return Err(format!("{code}: {message}"));
    }
    Ok(answer)
}

fn report(result: Result<(), String>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    // Started as envtest's kube-apiserver or etcd (links `kubefake envtest-assets` wrote).
    let mut argv = std::env::args();
    let name = argv.next().unwrap_or_default();
    let rest: Vec<String> = argv.collect();
    match Path::new(&name).file_name().and_then(|n| n.to_str()) {
        Some("kube-apiserver") => return as_apiserver(&rest).await,
        Some("etcd") => return as_etcd(&rest).await,
        _ => {}
    }
    match Cli::parse().command {
        Command::Faults { command } => report(faults(command).await),
        Command::Requests(args) => report(requests(args).await),
        Command::Serve(args) => match args.builder() {
            Ok(builder) => serve(builder).await,
            Err(e) => {
                tracing::error!("{e}");
                ExitCode::FAILURE
            }
        },
        Command::Dump(args) => dump(args).await,
        Command::EnvtestAssets { dir } => {
            let written =
                std::env::current_exe().and_then(|exe| kubefake::envtest::write_assets(&dir, &exe));
            match written {
                Ok(paths) => {
                    for p in paths {
                        println!("{}", p.display());
                    }
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    tracing::error!("writing envtest assets to {}: {e}", dir.display());
                    ExitCode::FAILURE
                }
            }
        }
        Command::Kubeconfig {
            server,
            token,
            certificate_authority,
            out,
        } => {
            let ca_pem = match certificate_authority.as_deref().map(read).transpose() {
                Ok(ca) => ca,
                Err(e) => {
                    tracing::error!("{e}");
                    return ExitCode::FAILURE;
                }
            };
            let text = kubefake::Kubeconfig {
                server: &server,
                ca_pem: ca_pem.as_deref(),
                token: token.as_deref(),
            }
            .render();
            match out {
                Some(path) => match kubefake::kubeconfig::write_private(&path, &text) {
                    Ok(()) => ExitCode::SUCCESS,
                    Err(e) => {
                        tracing::error!("writing {}: {e}", path.display());
                        ExitCode::FAILURE
                    }
                },
                None => {
                    print!("{text}");
                    ExitCode::SUCCESS
                }
            }
        }
    }
}

/// Runs a server until SIGINT/SIGTERM, after printing where it is.
async fn serve(builder: kubefake::ServerBuilder) -> ExitCode {
    let server = match builder.start().await {
        Ok(s) => s,
        Err(e) => {
            tracing::error!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let kubeconfig = match server.write_kubeconfig() {
        Ok(path) => path.to_path_buf(),
        Err(e) => {
            tracing::error!("writing the kubeconfig: {e}");
            server.shutdown().await;
            return ExitCode::FAILURE;
        }
    };
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "KUBEFAKE_URL={}", server.url());
    let _ = writeln!(out, "KUBECONFIG={}", kubeconfig.display());
    let _ = out.flush();
    drop(out);
    tracing::info!(url = server.url(), "kubefake is serving");
    wait_for_signal().await;
    tracing::info!("shutting down");
    server.shutdown().await;
    tracing::info!("stopped");
    // Everything that must outlive the server is done (the temporary kubeconfig is removed,
    // stdout flushed); tearing down the runtime and the cluster's memory object by object
    // would only delay the exit a CI job waits for.
    std::process::exit(0)
}

/// Runs as envtest's `kube-apiserver`.
async fn as_apiserver(args: &[String]) -> ExitCode {
    if args.iter().any(|a| a == "--help" || a == "-h") {
        print!("{}", kubefake::envtest::APISERVER_HELP);
        return ExitCode::SUCCESS;
    }
    match kubefake::envtest::apiserver_builder(args) {
        Ok(builder) => serve(builder).await,
        Err(kubefake::envtest::Refusal::Apiserver(e)) => {
            // cli.Run's klog line: `E<MMDD> <time> <pid> run.go:72] "command failed" err="..."`.
            let now = chrono::Local::now().format("%m%d %H:%M:%S%.6f");
            let pid = std::process::id();
            eprintln!("E{now} {pid:>7} run.go:72] \"command failed\" err={e:?}");
            ExitCode::FAILURE
        }
        Err(kubefake::envtest::Refusal::Kubefake(e)) => {
            eprintln!("kube-apiserver (kubefake): {e}");
            ExitCode::FAILURE
        }
    }
}

/// Runs as envtest's `etcd`: answers `GET /health` until SIGINT/SIGTERM.
async fn as_etcd(args: &[String]) -> ExitCode {
    if args.iter().any(|a| a == "--help" || a == "-h") {
        print!("{}", kubefake::envtest::ETCD_HELP);
        return ExitCode::SUCCESS;
    }
    let addr = match kubefake::envtest::etcd_address(args) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("etcd (kubefake): {e}");
            return ExitCode::FAILURE;
        }
    };
    let health = warp::path("health")
        .map(|| warp::reply::json(&serde_json::json!({"health": "true", "reason": ""})));
    let listener = match tokio::net::TcpListener::bind(addr).await {
        Ok(l) => l,
        Err(e) => {
            eprintln!("etcd (kubefake): listening on {addr}: {e}");
            return ExitCode::FAILURE;
        }
    };
    // Not a graceful shutdown: a client that keeps a connection open must not hold the exit.
    tokio::select! {
        _ = warp::serve(health).incoming(listener).run() => {}
        _ = wait_for_signal() => {}
    }
    ExitCode::SUCCESS
}

async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let (Ok(mut term), Ok(mut int)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) else {
            let _ = tokio::signal::ctrl_c().await;
            return;
        };
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}

/// A `--webhook-service` mapping.
#[derive(Debug, Clone)]
struct WebhookService {
    namespace: String,
    name: String,
    port: u16,
    addr: std::net::SocketAddr,
}

/// Parses `NAMESPACE/NAME:PORT=HOST:PORT`.
fn parse_webhook_service(s: &str) -> Result<WebhookService, String> {
    let usage = || format!("{s:?}: expected NAMESPACE/NAME:PORT=HOST:PORT");
    let (service, addr) = s.split_once('=').ok_or_else(usage)?;
    let (namespace, rest) = service.split_once('/').ok_or_else(usage)?;
    let (name, port) = rest.rsplit_once(':').ok_or_else(usage)?;
    let port = port.parse().map_err(|_| usage())?;
    let addr = std::net::ToSocketAddrs::to_socket_addrs(addr)
        .ok()
        .and_then(|mut a| a.next())
        .ok_or_else(usage)?;
    if namespace.is_empty() || name.is_empty() {
        return Err(usage());
    }
    Ok(WebhookService {
        namespace: namespace.into(),
        name: name.into(),
        port,
        addr,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn webhook_service_flags() {
        let s = parse_webhook_service("my-system/my-webhook:443=127.0.0.1:9443").expect("valid");
        assert_eq!(
            (s.namespace.as_str(), s.name.as_str(), s.port),
            ("my-system", "my-webhook", 443)
        );
        assert_eq!(s.addr, "127.0.0.1:9443".parse().expect("addr"));
        for bad in [
            "my-webhook:443=127.0.0.1:9443",
            "ns/name=127.0.0.1:1",
            "ns/name:x=127.0.0.1:1",
            "/n:1=127.0.0.1:1",
            "ns/n:1=nowhere",
        ] {
            assert!(parse_webhook_service(bad).is_err(), "{bad}");
        }
    }
}
