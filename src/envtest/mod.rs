//! kubefake as controller-runtime's envtest control plane: `kubefake envtest-assets DIR` puts a
//! `kube-apiserver`, an `etcd` and a `kubectl` in DIR, so that `KUBEBUILDER_ASSETS=DIR` runs an
//! unchanged envtest suite on kubefake.
//!
//! `kube-apiserver` and `etcd` are links to the kubefake binary, which looks at the name it was
//! started under. As `kube-apiserver` it reads the flags envtest passes (`--secure-port`,
//! `--bind-address`, `--cert-dir` with the serving certificate envtest wrote there,
//! `--client-ca-file` through which envtest provisions its admin user, `--authorization-mode`,
//! the service account issuer and keys, `--disable-admission-plugins`, which envtest uses to turn
//! the ServiceAccount plugin off, the service IP range), checks `--feature-gates` and
//! `--runtime-config` as the apiserver does ([`apiserver_flags`]), ignores those that configure
//! what kubefake does not have (etcd, the list of plugins to enable), and refuses those it cannot
//! honour. As `etcd` it only answers envtest's health check until it is stopped: kubefake
//! keeps its data in memory and never talks to it. Both answer `--help` with the flags they
//! take, which is how envtest discovers what a binary supports.

pub mod apiserver_flags;

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};

use crate::{AuthorizationMode, ServerBuilder, ServingCertificate};

/// What a kube-apiserver command line asks of the server.
#[derive(Debug, Default)]
struct ApiserverFlags {
    secure_port: Option<u16>,
    bind_address: Option<IpAddr>,
    cert_dir: Option<PathBuf>,
    tls_cert_file: Option<PathBuf>,
    tls_private_key_file: Option<PathBuf>,
    client_ca_file: Option<PathBuf>,
    token_auth_file: Option<PathBuf>,
    authorization_mode: Option<AuthorizationMode>,
    anonymous_auth: Option<bool>,
    service_account_issuer: Option<String>,
    service_account_key_files: Vec<PathBuf>,
    service_account_signing_key_file: Option<PathBuf>,
    api_audiences: Vec<String>,
    disabled_admission_plugins: Vec<String>,
    enabled_admission_plugins: Vec<String>,
    kube_controllers: Option<String>,
    service_cluster_ip_range: Option<String>,
    feature_gates: Vec<String>,
    runtime_config: Vec<String>,
    min_request_timeout: Option<u64>,
    audit_log_path: Option<PathBuf>,
    ignored: Vec<String>,
}

/// Flags envtest (or a suite's `Configure()`) may pass that configure what kubefake does not
/// have; accepted and ignored.
const IGNORED: &[&str] = &[
    "etcd-servers",
    "etcd-prefix",
    "allow-privileged",
    "admission-control",
    "advertise-address",
    "v",
    "vmodule",
    "logtostderr",
    "alsologtostderr",
    "audit-policy-file",
    "audit-log-maxage",
    "audit-log-maxbackup",
    "audit-log-maxsize",
    "enable-priority-and-fairness",
    "event-ttl",
    "profiling",
    "storage-backend",
    "storage-media-type",
    "watch-cache",
    "requestheader-client-ca-file",
    "requestheader-allowed-names",
    "requestheader-extra-headers-prefix",
    "requestheader-group-headers",
    "requestheader-username-headers",
    "proxy-client-cert-file",
    "proxy-client-key-file",
    "kubelet-client-certificate",
    "kubelet-client-key",
    "enable-aggregator-routing",
    "endpoint-reconciler-type",
    "max-requests-inflight",
    "max-mutating-requests-inflight",
    "request-timeout",
    "delete-collection-workers",
];

/// A kube-apiserver's service range when `--service-cluster-ip-range` is not given.
const DEFAULT_SERVICE_RANGE: &str = "10.0.0.0/24";

/// The environment variable naming the kube-controller-manager controllers kubefake runs as
/// envtest's `kube-apiserver` (as `--kubefake-controllers` does), for suites that also run
/// against a real apiserver, which would refuse the flag.
pub const CONTROLLERS_ENV: &str = "KUBEFAKE_CONTROLLERS";

/// The kube-apiserver flags kubefake reads, for `--help` (envtest greps it).
pub const APISERVER_HELP: &str = "kubefake acting as kube-apiserver for envtest.

Flags:
      --secure-port int                          HTTPS port (default 6443; 0 picks a free one)
      --bind-address ip                          address to listen on (default 0.0.0.0)
      --cert-dir string                          directory with apiserver.crt and apiserver.key
      --tls-cert-file string                     serving certificate (PEM)
      --tls-private-key-file string              its key (PEM)
      --client-ca-file string                    CA verifying client certificates
      --token-auth-file string                   static bearer tokens (CSV)
      --authorization-mode strings               RBAC (default) or AlwaysAllow
      --anonymous-auth                           serve requests without credentials as system:anonymous (default true)
      --service-account-issuer strings           issuer of service account tokens
      --service-account-key-file stringArray     keys verifying service account tokens
      --service-account-signing-key-file string  key signing service account tokens
      --api-audiences strings                    audiences of API tokens
      --disable-admission-plugins strings        built-in admission plugins not run (ServiceAccount, ...)
      --service-cluster-ip-range string          IPv4 CIDR of Services' cluster IPs (default 10.0.0.0/24)
      --min-request-timeout int                  a watch without timeoutSeconds ends after 1-2x this (default 1800)
      --audit-log-path string                    where every request is written as an audit event
      --feature-gates mapStringBool              checked as kube-apiserver 1.36 checks them (unknown and
                                                 locked gates refused); kubefake keeps 1.36's defaults
      --runtime-config mapStringString           checked as kube-apiserver 1.36 checks it; what kubefake
                                                 serves may be enabled, nothing disabled
      --etcd-servers strings                     accepted and ignored: kubefake keeps its data in memory
      --kubefake-controllers strings             kube-controller-manager controllers to run beside the
                                                 apiserver (none by default, as under envtest; * for all):
                                                 garbage-collector, namespace, serviceaccount,
                                                 root-ca-certificate-publisher, endpoints, endpointslice,
                                                 persistentvolume-protection, persistentvolumeclaim-protection,
                                                 clusterrole-aggregation (also KUBEFAKE_CONTROLLERS)
";

/// The etcd flags kubefake reads, for `--help`.
pub const ETCD_HELP: &str =
    "kubefake acting as etcd for envtest: it answers GET /health until stopped.

Flags:
      --listen-client-urls string     where to answer (default http://localhost:2379)
      --advertise-client-urls string  accepted and ignored
      --listen-peer-urls string       accepted and ignored
      --data-dir string               accepted and ignored
";

/// Splits `--name=value` / `--name value` / `--flag` arguments.
fn pairs(args: &[String]) -> Result<Vec<(String, Option<String>)>, String> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < args.len() {
        let Some(flag) = args[i]
            .strip_prefix("--")
            .or_else(|| args[i].strip_prefix('-'))
        else {
            return Err(format!("unexpected argument {:?}", args[i]));
        };
        match flag.split_once('=') {
            Some((name, value)) => out.push((name.to_string(), Some(value.to_string()))),
            None => {
                let value = args.get(i + 1).filter(|v| !v.starts_with('-')).cloned();
                if value.is_some() {
                    i += 1;
                }
                out.push((flag.to_string(), value));
            }
        }
        i += 1;
    }
    Ok(out)
}

fn parse_bool(name: &str, value: Option<&str>) -> Result<bool, String> {
    let value = value.unwrap_or("true");
    crate::machinery::gofmt::parse_bool(value).ok_or_else(|| {
        format!("invalid argument {value:?} for \"--{name}\" flag: strconv.ParseBool: parsing {value:?}: invalid syntax")
    })
}

/// `--authorization-mode`: a list; RBAC when it names RBAC, AlwaysAllow when that alone.
fn parse_mode(value: &str) -> Result<AuthorizationMode, String> {
    let modes: Vec<&str> = value.split(',').map(str::trim).collect();
    if modes.contains(&"RBAC") {
        let others: Vec<&&str> = modes
            .iter()
            .filter(|m| !matches!(**m, "RBAC" | "Node"))
            .collect();
        if others.is_empty() {
            return Ok(AuthorizationMode::Rbac);
        }
    }
    if modes == ["AlwaysAllow"] {
        return Ok(AuthorizationMode::AlwaysAllow);
    }
    Err(format!(
        "--authorization-mode={value}: kubefake authorizes with RBAC (Node is accepted and ignored) or AlwaysAllow only"
    ))
}

fn parse(args: &[String]) -> Result<ApiserverFlags, String> {
    let mut f = ApiserverFlags::default();
    for (name, value) in pairs(args)? {
        let v = || {
            value
                .clone()
                .ok_or_else(|| format!("--{name} needs a value"))
        };
        match name.as_str() {
            "secure-port" => f.secure_port = Some(v()?.parse().map_err(|e| format!("--secure-port: {e}"))?),
            "bind-address" => f.bind_address = Some(v()?.parse().map_err(|e| format!("--bind-address: {e}"))?),
            "cert-dir" => f.cert_dir = Some(v()?.into()),
            "tls-cert-file" => f.tls_cert_file = Some(v()?.into()),
            "tls-private-key-file" => f.tls_private_key_file = Some(v()?.into()),
            "client-ca-file" => f.client_ca_file = Some(v()?.into()),
            "token-auth-file" => f.token_auth_file = Some(v()?.into()),
            "authorization-mode" => f.authorization_mode = Some(parse_mode(&v()?)?),
            "anonymous-auth" => f.anonymous_auth = Some(parse_bool(&name, value.as_deref())?),
            "service-account-issuer" => {
                // The first issuer signs; kubefake accepts only that one.
                f.service_account_issuer.get_or_insert(v()?);
            }
            "service-account-key-file" => f.service_account_key_files.push(v()?.into()),
            "service-account-signing-key-file" => f.service_account_signing_key_file = Some(v()?.into()),
            "api-audiences" => f.api_audiences.extend(v()?.split(',').map(String::from)),
            "disable-admission-plugins" => {
                let names = v()?;
                let names = names.split(',').map(|n| n.trim().to_string());
                f.disabled_admission_plugins.extend(names.filter(|n| !n.is_empty()));
            }
            "kubefake-controllers" => f.kube_controllers = Some(value.clone().unwrap_or_default()),
            "service-cluster-ip-range" => f.service_cluster_ip_range = Some(v()?),
            "feature-gates" => f.feature_gates.push(v()?),
            "enable-admission-plugins" => {
                let names = v()?;
                let names = names.split(',').map(|n| n.trim().to_string());
                f.enabled_admission_plugins.extend(names.filter(|n| !n.is_empty()));
            }
            "min-request-timeout" => {
                let value = v()?;
                let seconds = value.parse().map_err(|_| {
                    format!("invalid argument {value:?} for \"--min-request-timeout\" flag: strconv.ParseInt: parsing {value:?}: invalid syntax")
                })?;
                f.min_request_timeout = Some(seconds);
            }
            "audit-log-path" => f.audit_log_path = Some(v()?.into()),
            "runtime-config" => f.runtime_config.push(value.clone().unwrap_or_default()),
            "insecure-port" if value.as_deref().is_none_or(|p| p == "0") => f.ignored.push(name),
            "insecure-port" => return Err("--insecure-port: kubefake serves HTTPS only here (Kubernetes removed the insecure port in 1.24)".into()),
            n if IGNORED.contains(&n) => f.ignored.push(name),
            n => return Err(format!("--{n}: not supported by kubefake acting as kube-apiserver (see --help)")),
        }
    }
    Ok(f)
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()))
}

/// The server a kube-apiserver command line describes: HTTPS always, RBAC unless told
/// otherwise, the serving certificate from `--tls-*-file` or `--cert-dir`.
pub fn apiserver_builder(args: &[String]) -> Result<ServerBuilder, Refusal> {
    let f = parse(args).map_err(Refusal::Kubefake)?;
    let gates = apiserver_flags::feature_gates(&f.feature_gates).map_err(Refusal::Apiserver)?;
    for (name, on) in gates {
        if let Some(warning) = apiserver_flags::gate_warning(&name) {
            eprintln!("{warning} featureGate={name:?} value={on}");
        }
        eprintln!("kube-apiserver (kubefake): --feature-gates {name}={on} accepted; kubefake behaves as 1.36 does with its default");
    }
    let served = |group: &str, version: &str| {
        crate::registry::builtin::kinds()
            .iter()
            .any(|k| k.group() == group && k.version() == version)
    };
    apiserver_flags::runtime_config(&f.runtime_config, &served)?;
    apiserver_flags::admission_plugins(
        &f.enabled_admission_plugins,
        &f.disabled_admission_plugins,
    )?;
    builder(f).map_err(Refusal::Kubefake)
}

/// Why kubefake does not start as envtest's `kube-apiserver`.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    /// What the apiserver itself refuses at start, in its words.
    #[error("{0}")]
    Apiserver(String),
    /// What kubefake cannot honour.
    #[error("{0}")]
    Kubefake(String),
}

/// The server the flags describe.
fn builder(f: ApiserverFlags) -> Result<ServerBuilder, String> {
    let address = f.bind_address.unwrap_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED));
    let mut b = crate::Server::builder()
        .existing_cluster(false) // it stands in for kube-apiserver: it is the cluster
        .address(address)
        .port(f.secure_port.unwrap_or(6443))
        .authorization_mode(f.authorization_mode.unwrap_or(AuthorizationMode::Rbac))
        .anonymous_auth(f.anonymous_auth.unwrap_or(true))
        .allow_any_host(true)
        .https();
    b = match (&f.tls_cert_file, &f.tls_private_key_file, &f.cert_dir) {
        (Some(cert), Some(key), _) => b.serving_certificate(given(cert, key)?),
        (None, None, Some(dir)) if dir.join("apiserver.crt").exists() => b.serving_certificate(
            given(&dir.join("apiserver.crt"), &dir.join("apiserver.key"))?,
        ),
        (None, None, _) => b,
        _ => return Err("--tls-cert-file and --tls-private-key-file go together".into()),
    };
    if let Some(ca) = &f.client_ca_file {
        b = b.client_ca(read(ca)?);
    }
    if let Some(path) = &f.token_auth_file {
        let tokens = crate::filters::authentication::token_file::StaticTokens::parse(&read(path)?)
            .map_err(|e| format!("{}: {e}", path.display()))?;
        b = b.tokens(tokens);
    }
    if let Some(issuer) = &f.service_account_issuer {
        b = b.service_account_issuer(issuer);
    }
    if !f.api_audiences.is_empty() {
        b = b.api_audiences(f.api_audiences.clone());
    }
    b = b.disable_admission_plugins(f.disabled_admission_plugins.iter().cloned());
    if let Some(seconds) = f.min_request_timeout {
        b = b.min_request_timeout(std::time::Duration::from_secs(seconds));
    }
    if let Some(path) = &f.audit_log_path {
        b = b.audit_log_path(path);
    }
    // The apiserver's default range, where envtest passes its own (the same).
    let range = f
        .service_cluster_ip_range
        .as_deref()
        .unwrap_or(DEFAULT_SERVICE_RANGE);
    b = b
        .service_cluster_ip_range(range)
        .map_err(|e| e.to_string())?;
    // envtest's apiserver has no kube-controller-manager beside it: none of its controllers
    // run unless the suite asks for them.
    let controllers = f
        .kube_controllers
        .or_else(|| std::env::var(CONTROLLERS_ENV).ok())
        .unwrap_or_default();
    b = b.kube_controllers(
        crate::KubeControllers::parse(&controllers)
            .map_err(|e| format!("--kubefake-controllers / {CONTROLLERS_ENV}: {e}"))?,
    );
    if let Some(path) = &f.service_account_signing_key_file {
        b = b
            .service_account_signing_key(&read(path)?)
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    for path in &f.service_account_key_files {
        b = b
            .service_account_keys(&read(path)?)
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    if !f.ignored.is_empty() {
        tracing::info!(flags = ?f.ignored, "kube-apiserver flags accepted and ignored");
    }
    Ok(b)
}

fn given(cert: &Path, key: &Path) -> Result<ServingCertificate, String> {
    let cert_pem = read(cert)?;
    Ok(ServingCertificate {
        ca_pem: cert_pem.clone(),
        cert_pem,
        key_pem: read(key)?,
    })
}

/// Where the fake etcd answers: the first `--listen-client-urls` URL's host and port.
pub fn etcd_address(args: &[String]) -> Result<SocketAddr, String> {
    let mut url = "http://localhost:2379".to_string();
    for (name, value) in pairs(args)? {
        if name == "listen-client-urls" {
            url = value.ok_or("--listen-client-urls needs a value")?;
        }
    }
    let first = url.split(',').next().unwrap_or_default();
    let host_port = first.strip_prefix("http://").ok_or_else(|| {
        format!("--listen-client-urls={url}: kubefake's etcd answers http:// URLs only")
    })?;
    let host_port = host_port.trim_end_matches('/');
    let host_port = host_port.replace("localhost", "127.0.0.1");
    host_port
        .parse()
        .map_err(|e| format!("--listen-client-urls={url}: {e}"))
}

/// Writes the assets: `kube-apiserver` and `etcd` as links to `exe`, `kubectl` as a link to
/// the kubectl on PATH when there is one.
pub fn write_assets(dir: &Path, exe: &Path) -> std::io::Result<Vec<PathBuf>> {
    std::fs::create_dir_all(dir)?;
    let mut written = Vec::new();
    let mut targets = vec![
        ("kube-apiserver", exe.to_path_buf()),
        ("etcd", exe.to_path_buf()),
    ];
    if let Some(kubectl) = find_on_path("kubectl") {
        targets.push(("kubectl", kubectl));
    }
    for (name, target) in targets {
        let link = dir.join(name);
        if link.symlink_metadata().is_ok() {
            std::fs::remove_file(&link)?;
        }
        link_or_copy(&target, &link)?;
        written.push(link);
    }
    Ok(written)
}

#[cfg(unix)]
fn link_or_copy(target: &Path, link: &Path) -> std::io::Result<()> {
    std::os::unix::fs::symlink(target, link)
}

#[cfg(not(unix))]
fn link_or_copy(target: &Path, link: &Path) -> std::io::Result<()> {
    std::fs::copy(target, link).map(|_| ())
}

fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .and_then(|p| p.canonicalize().ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn args(s: &[&str]) -> Vec<String> {
        s.iter().map(|a| a.to_string()).collect()
    }

    #[test]
    fn envtest_defaults_are_understood() {
        let a = args(&[
            "--service-cluster-ip-range=10.0.0.0/24",
            "--allow-privileged=true",
            "--disable-admission-plugins=ServiceAccount",
            "--cert-dir=/tmp/x",
            "--authorization-mode=RBAC",
            "--secure-port=40123",
            "--bind-address=127.0.0.1",
            "--service-account-issuer=https://127.0.0.1:40123/",
            "--service-account-key-file=/tmp/x/sa-signer.crt",
            "--service-account-signing-key-file=/tmp/x/sa-signer.key",
            "--etcd-servers=http://127.0.0.1:40124",
            "--client-ca-file=/tmp/x/client-cert-auth-ca.crt",
        ]);
        let f = parse(&a).unwrap();
        assert_eq!(f.secure_port, Some(40123));
        assert_eq!(f.bind_address, Some("127.0.0.1".parse().unwrap()));
        assert_eq!(f.authorization_mode, Some(AuthorizationMode::Rbac));
        assert_eq!(f.service_account_key_files.len(), 1);
        assert_eq!(f.disabled_admission_plugins, ["ServiceAccount"]);
        assert_eq!(f.service_cluster_ip_range.as_deref(), Some("10.0.0.0/24"));
        assert_eq!(f.ignored, ["allow-privileged", "etcd-servers"]);
    }

    #[rstest]
    #[case(&["--authorization-mode=Webhook"], "--authorization-mode=Webhook: kubefake authorizes with RBAC (Node is accepted and ignored) or AlwaysAllow only")]
    #[case(&["--insecure-port=8080"], "--insecure-port: kubefake serves HTTPS only here (Kubernetes removed the insecure port in 1.24)")]
    #[case(&["--oidc-issuer-url=x"], "--oidc-issuer-url: not supported by kubefake acting as kube-apiserver (see --help)")]
    #[case(&["stray"], "unexpected argument \"stray\"")]
    fn what_cannot_be_honoured_is_refused(#[case] a: &[&str], #[case] want: &str) {
        assert_eq!(parse(&args(a)).unwrap_err(), want);
    }

    #[rstest]
    #[case("Node,RBAC", Some(AuthorizationMode::Rbac))]
    #[case("AlwaysAllow", Some(AuthorizationMode::AlwaysAllow))]
    #[case("RBAC,Webhook", None)]
    fn modes(#[case] v: &str, #[case] want: Option<AuthorizationMode>) {
        assert_eq!(parse_mode(v).ok(), want);
    }

    #[rstest]
    #[case(&["--listen-client-urls=http://127.0.0.1:2400", "--data-dir=/x"], Ok("127.0.0.1:2400"))]
    #[case(&["--listen-client-urls", "http://localhost:2401"], Ok("127.0.0.1:2401"))]
    #[case(&[], Ok("127.0.0.1:2379"))]
    #[case(&["--listen-client-urls=https://127.0.0.1:1"], Err(()))]
    fn etcd_addresses(#[case] a: &[&str], #[case] want: Result<&str, ()>) {
        let got = etcd_address(&args(a))
            .map(|a| a.to_string())
            .map_err(|_| ());
        assert_eq!(got, want.map(String::from));
    }

    #[test]
    fn help_does_not_offer_the_insecure_port() {
        let re = regex::Regex::new(r"(?m)^\s*--insecure-port\b").unwrap();
        assert!(!re.is_match(APISERVER_HELP));
        let fsync = regex::Regex::new(r"(?m)^\s*--unsafe-no-fsync\b").unwrap();
        assert!(!fsync.is_match(ETCD_HELP));
    }

    #[test]
    fn assets_link_to_the_binary() {
        let dir = tempfile::tempdir().unwrap();
        let exe = std::env::current_exe().unwrap();
        let written = write_assets(dir.path(), &exe).unwrap();
        assert!(written.iter().any(|p| p.ends_with("kube-apiserver")));
        assert!(dir.path().join("etcd").exists());
        // Writing again replaces the links.
        assert!(write_assets(dir.path(), &exe).is_ok());
    }
}
