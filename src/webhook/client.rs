//! The HTTP(S) side of a webhook call: where to dial, the TLS handshake, one HTTP/1.1 POST, and
//! the mapping of each failure to a [`WebhookError`].
//!
//! Every call opens its own connection: webhooks in tests are called rarely enough that pooling
//! would buy nothing, and a fresh connection cannot leak state from one config to another.

use std::collections::HashMap;
use std::fmt;
use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt as _, Full, LengthLimitError, Limited};
use hyper::header::{ACCEPT, CONTENT_TYPE, HOST};
use hyper::{Method, Request, Uri};
use hyper_util::rt::TokioIo;
use rustls::{CertificateError, RootCertStore};
use rustls_pki_types::{CertificateDer, ServerName};
use serde_json::Value;
use tokio::net::TcpStream;
use tokio::task::JoinHandle;
use tokio_rustls::TlsConnector;

use super::{go_duration, ClientConfig, Endpoint, WebhookError, MAX_RESPONSE_BYTES};

/// Looks up a service the resolver's map does not hold: `(namespace, name, port)`.
pub type ResolveFn = dyn Fn(&str, &str, u16) -> Option<SocketAddr> + Send + Sync;

/// Maps `service` references to socket addresses. A fake server has no cluster network, so a
/// `{name}.{namespace}.svc` name means nothing to DNS: whoever runs the server says where each
/// service listens (a builder option, a command-line flag), and the fallback hook lets the
/// server answer from live objects (Endpoints) without this module knowing about them.
#[derive(Clone, Default)]
pub struct ServiceResolver {
    services: HashMap<(String, String, u16), SocketAddr>,
    fallback: Option<Arc<ResolveFn>>,
}

impl fmt::Debug for ServiceResolver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServiceResolver")
            .field("services", &self.services)
            .field("fallback", &self.fallback.is_some())
            .finish()
    }
}

impl ServiceResolver {
    /// A resolver that knows no service.
    pub fn new() -> Self {
        Self::default()
    }

    /// Routes the service port `namespace/name:port` to `addr`.
    pub fn insert(&mut self, namespace: &str, name: &str, port: u16, addr: SocketAddr) {
        self.services
            .insert((namespace.to_string(), name.to_string(), port), addr);
    }

    /// [`ServiceResolver::insert`], chained.
    pub fn with_service(
        mut self,
        namespace: &str,
        name: &str,
        port: u16,
        addr: SocketAddr,
    ) -> Self {
        self.insert(namespace, name, port, addr);
        self
    }

    /// Asked for every service the map does not hold.
    pub fn with_fallback(
        mut self,
        fallback: impl Fn(&str, &str, u16) -> Option<SocketAddr> + Send + Sync + 'static,
    ) -> Self {
        self.fallback = Some(Arc::new(fallback));
        self
    }

    /// Where `namespace/name:port` listens, if anyone said.
    pub fn resolve(&self, namespace: &str, name: &str, port: u16) -> Option<SocketAddr> {
        let key = (namespace.to_string(), name.to_string(), port);
        match self.services.get(&key) {
            Some(addr) => Some(*addr),
            None => self
                .fallback
                .as_ref()
                .and_then(|f| f(namespace, name, port)),
        }
    }
}

/// Calls webhooks. One per server, shared by conversion and admission, so that both dial
/// services the same way.
#[derive(Debug, Clone)]
pub struct WebhookClient {
    resolver: ServiceResolver,
    max_response_bytes: usize,
}

impl Default for WebhookClient {
    fn default() -> Self {
        WebhookClient::new(ServiceResolver::default())
    }
}

impl WebhookClient {
    /// A client that dials `service` configs through `resolver`.
    pub fn new(resolver: ServiceResolver) -> Self {
        WebhookClient {
            resolver,
            max_response_bytes: MAX_RESPONSE_BYTES,
        }
    }

    /// Replaces the response size limit ([`MAX_RESPONSE_BYTES`] by default).
    pub fn with_max_response_bytes(mut self, limit: usize) -> Self {
        self.max_response_bytes = limit;
        self
    }

    /// The resolver `service` configs go through.
    pub fn resolver(&self) -> &ServiceResolver {
        &self.resolver
    }

    /// POSTs `body` as JSON to the webhook of `config` and returns the JSON it answers. The
    /// URL gets `?timeout=` as client-go adds it, and the whole call (lookup, connect,
    /// handshake, request, response body) is bounded by `timeout`; a zero timeout adds no query
    /// and no bound, as in client-go.
    pub async fn post(
        &self,
        config: &ClientConfig,
        body: &Value,
        timeout: Duration,
    ) -> Result<Value, WebhookError> {
        let target = self.target(config, timeout)?;
        let body = Bytes::from(body.to_string());
        let call = self.call(&target, &config.ca_certificates, body);
        if timeout.is_zero() {
            return call.await;
        }
        match tokio::time::timeout(timeout, call).await {
            Ok(result) => result,
            Err(_) => Err(WebhookError::Timeout { url: target.url }),
        }
    }

    /// Where and how to send the request, before any I/O.
    fn target(&self, config: &ClientConfig, timeout: Duration) -> Result<Target, WebhookError> {
        match &config.endpoint {
            Endpoint::Url(url) => {
                let parsed = parse_url(url)?;
                let dial = match parsed.host.parse::<IpAddr>() {
                    Ok(ip) => Dial::Addr(SocketAddr::new(ip, parsed.port)),
                    Err(_) => Dial::Host(parsed.host.clone(), parsed.port),
                };
                let scheme = if parsed.https { "https" } else { "http" };
                let cleaned = format!("{scheme}://{}{}", parsed.authority, parsed.path_and_query);
                Ok(Target {
                    url: with_timeout_query(&cleaned, timeout),
                    tls: parsed.https,
                    server_name: parsed.host,
                    dial,
                    host_header: parsed.authority,
                    path_and_query: with_timeout_query(&parsed.path_and_query, timeout),
                })
            }
            Endpoint::Service(service) => {
                let parsed = parse_url(&service.url())?;
                let cleaned = format!("https://{}{}", parsed.authority, parsed.path_and_query);
                let url = with_timeout_query(&cleaned, timeout);
                let server_name = service.server_name();
                let addr = self
                    .resolver
                    .resolve(&service.namespace, &service.name, service.port)
                    .ok_or_else(|| WebhookError::Lookup {
                        url: url.clone(),
                        host: server_name.clone(),
                    })?;
                Ok(Target {
                    url,
                    tls: true,
                    host_header: parsed.authority,
                    path_and_query: with_timeout_query(&parsed.path_and_query, timeout),
                    server_name,
                    dial: Dial::Addr(addr),
                })
            }
        }
    }

    async fn call(
        &self,
        target: &Target,
        ca: &[CertificateDer<'static>],
        body: Bytes,
    ) -> Result<Value, WebhookError> {
        let tcp = dial(target).await?;
        if !target.tls {
            return self.exchange(TokioIo::new(tcp), target, body).await;
        }
        let config = tls_config(ca)?;
        let server_name = ServerName::try_from(target.server_name.clone()).map_err(|e| {
            WebhookError::InvalidConfig(format!(
                "invalid server name {:?}: {e}",
                target.server_name
            ))
        })?;
        let tls = TlsConnector::from(config)
            .connect(server_name, tcp)
            .await
            .map_err(|e| WebhookError::Tls {
                url: target.url.clone(),
                reason: tls_reason(&e),
            })?;
        self.exchange(TokioIo::new(tls), target, body).await
    }

    /// One HTTP/1.1 request on an established connection.
    async fn exchange<IO>(
        &self,
        io: IO,
        target: &Target,
        body: Bytes,
    ) -> Result<Value, WebhookError>
    where
        IO: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
    {
        let transport = |e: hyper::Error| WebhookError::Transport {
            url: target.url.clone(),
            reason: hyper_reason(&e),
        };
        let (mut sender, connection) = hyper::client::conn::http1::handshake(io)
            .await
            .map_err(transport)?;
        let _connection = AbortOnDrop(tokio::spawn(async move {
            let _ = connection.await;
        }));
        let request = Request::builder()
            .method(Method::POST)
            .uri(target.path_and_query.as_str())
            .header(HOST, target.host_header.as_str())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json")
            .body(Full::new(body))
            .map_err(|e| WebhookError::InvalidConfig(format!("invalid webhook request: {e}")))?;
        let response = sender.send_request(request).await.map_err(transport)?;
        let status = response.status();
        let bytes = Limited::new(response.into_body(), self.max_response_bytes)
            .collect()
            .await
            .map_err(|e| match e.downcast_ref::<LengthLimitError>() {
                Some(_) => WebhookError::TooLarge {
                    url: target.url.clone(),
                    limit: self.max_response_bytes,
                },
                None => WebhookError::Transport {
                    url: target.url.clone(),
                    reason: match e.downcast_ref::<hyper::Error>() {
                        Some(e) => hyper_reason(e),
                        None => e.to_string(),
                    },
                },
            })?
            .to_bytes();
        if !status.is_success() {
            return Err(WebhookError::Status {
                url: target.url.clone(),
                status: status.as_u16(),
                body: String::from_utf8_lossy(&bytes).into_owned(),
            });
        }
        serde_json::from_slice(&bytes).map_err(|e| WebhookError::Decode {
            url: target.url.clone(),
            reason: e.to_string(),
        })
    }
}

/// Aborts the connection task when the call ends, whether it finished, failed or timed out.
struct AbortOnDrop(JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// A request ready to send: `url` is what messages show, the rest what the wire needs.
#[derive(Debug, Clone, PartialEq)]
struct Target {
    url: String,
    tls: bool,
    /// The name the certificate must be valid for (a DNS name or an IP address).
    server_name: String,
    dial: Dial,
    host_header: String,
    path_and_query: String,
}

#[derive(Debug, Clone, PartialEq)]
enum Dial {
    Addr(SocketAddr),
    Host(String, u16),
}

/// The parts of a webhook URL the transport needs.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ParsedUrl {
    pub https: bool,
    /// The host without IPv6 brackets.
    pub host: String,
    pub port: u16,
    /// `host[:port]` as written, for the `Host` header.
    pub authority: String,
    /// At least `/`.
    pub path_and_query: String,
}

/// Checks a webhook URL: `http` or `https`, a host, no user info or fragment.
pub(crate) fn parse_url(url: &str) -> Result<ParsedUrl, WebhookError> {
    let invalid = |why: &str| WebhookError::InvalidConfig(format!("invalid url {url:?}: {why}"));
    if url.contains('#') {
        return Err(invalid("fragments are not allowed"));
    }
    let uri: Uri = url.parse().map_err(|e| invalid(&format!("{e}")))?;
    let https = match uri.scheme_str() {
        Some("https") => true,
        Some("http") => false,
        _ => return Err(invalid("the scheme must be https (or http)")),
    };
    let authority = uri
        .authority()
        .ok_or_else(|| invalid("a host is required"))?;
    if authority.as_str().contains('@') {
        return Err(invalid("user information is not allowed"));
    }
    let host = authority
        .host()
        .trim_start_matches('[')
        .trim_end_matches(']');
    if host.is_empty() {
        return Err(invalid("a host is required"));
    }
    // client-go joins the path onto "/" (`path.Join`), which cleans it: envtest's
    // `https://host:port/` + `/validate-...` is sent to `/validate-...`.
    let mut path_and_query = join_path(uri.path());
    if let Some(q) = uri.query() {
        path_and_query = format!("{path_and_query}?{q}");
    }
    Ok(ParsedUrl {
        https,
        host: host.to_string(),
        port: authority.port_u16().unwrap_or(if https { 443 } else { 80 }),
        authority: authority.as_str().to_string(),
        path_and_query,
    })
}

/// Go's `path.Join("/", p)`: one slash between elements, `.` and `..` resolved, no trailing
/// slash (except the root).
fn join_path(p: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in p.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            part => parts.push(part),
        }
    }
    format!("/{}", parts.join("/"))
}

/// Appends `timeout={go duration}` to a URL or a path, as client-go's `Request.Timeout` does.
pub(crate) fn with_timeout_query(url: &str, timeout: Duration) -> String {
    if timeout.is_zero() {
        return url.to_string();
    }
    let separator = if url.contains('?') { '&' } else { '?' };
    format!("{url}{separator}timeout={}", go_duration(timeout))
}

async fn dial(target: &Target) -> Result<TcpStream, WebhookError> {
    let addrs: Vec<SocketAddr> = match &target.dial {
        Dial::Addr(addr) => vec![*addr],
        Dial::Host(host, port) => tokio::net::lookup_host((host.as_str(), *port))
            .await
            .map(|addrs| addrs.collect())
            .unwrap_or_default(),
    };
    let lookup_failed = || WebhookError::Lookup {
        url: target.url.clone(),
        host: target.server_name.clone(),
    };
    let mut last = Err(lookup_failed());
    for addr in addrs {
        match TcpStream::connect(addr).await {
            Ok(stream) => {
                let _ = stream.set_nodelay(true);
                return Ok(stream);
            }
            Err(e) => {
                last = Err(WebhookError::Connect {
                    url: target.url.clone(),
                    addr: addr.to_string(),
                    reason: connect_reason(&e),
                })
            }
        }
    }
    last
}

/// The TLS client configuration that trusts `ca` (the system roots when it is empty); also
/// what `kubefake dump` connects with ([`crate::tooling::remote`]).
pub(crate) fn tls_config(
    ca: &[CertificateDer<'static>],
) -> Result<Arc<rustls::ClientConfig>, WebhookError> {
    let mut roots = RootCertStore::empty();
    if ca.is_empty() {
        roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    }
    for certificate in ca {
        roots.add(certificate.clone()).map_err(|e| {
            WebhookError::InvalidConfig(format!("unable to load root certificates: {e}"))
        })?;
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let webpki = rustls::client::WebPkiServerVerifier::builder_with_provider(
        Arc::new(roots),
        provider.clone(),
    )
    .build()
    .map_err(|e| WebhookError::InvalidConfig(format!("unable to load root certificates: {e}")))?;
    let verifier = BundleVerifier {
        webpki,
        bundle: ca.to_vec(),
    };
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| WebhookError::InvalidConfig(format!("TLS configuration: {e}")))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// Go's certificate verification, which the apiserver's webhook client uses: a chain to a CA of
/// the `caBundle`, or a server certificate that is itself in the bundle (Go trusts a
/// certificate found in its root pool; envtest puts the webhook's own certificate there). The
/// name is checked either way.
#[derive(Debug)]
struct BundleVerifier {
    webpki: Arc<rustls::client::WebPkiServerVerifier>,
    bundle: Vec<CertificateDer<'static>>,
}

impl rustls::client::danger::ServerCertVerifier for BundleVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: rustls_pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        let verdict =
            self.webpki
                .verify_server_cert(end_entity, intermediates, server_name, ocsp, now);
        match verdict {
            Err(_)
                if self
                    .bundle
                    .iter()
                    .any(|c| c.as_ref() == end_entity.as_ref()) =>
            {
                let parsed = rustls::server::ParsedCertificate::try_from(end_entity)?;
                rustls::client::verify_server_name(&parsed, server_name)?;
                Ok(rustls::client::danger::ServerCertVerified::assertion())
            }
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.webpki.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.webpki.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.webpki.supported_verify_schemes()
    }
}

/// A connect error as Go's `net.OpError` ends: `connect: connection refused`.
pub(crate) fn connect_reason(error: &io::Error) -> String {
    match error.kind() {
        io::ErrorKind::ConnectionRefused => "connect: connection refused".into(),
        io::ErrorKind::TimedOut => "i/o timeout".into(),
        io::ErrorKind::AddrNotAvailable => "connect: cannot assign requested address".into(),
        io::ErrorKind::HostUnreachable => "connect: no route to host".into(),
        io::ErrorKind::NetworkUnreachable => "connect: network is unreachable".into(),
        _ => format!("connect: {error}"),
    }
}

/// A handshake error as Go's crypto/tls prints it.
fn tls_reason(error: &io::Error) -> String {
    match error
        .get_ref()
        .and_then(|e| e.downcast_ref::<rustls::Error>())
    {
        Some(rustls::Error::InvalidCertificate(e)) => {
            format!("tls: failed to verify certificate: {}", x509_reason(e))
        }
        Some(rustls::Error::AlertReceived(alert)) => format!("remote error: tls: {alert:?}"),
        Some(e) => format!("tls: {e}"),
        None if error.kind() == io::ErrorKind::UnexpectedEof => "EOF".into(),
        None => error.to_string(),
    }
}

/// A certificate verification error as Go's crypto/x509 prints it.
pub(crate) fn x509_reason(error: &CertificateError) -> String {
    match error {
        CertificateError::UnknownIssuer => "x509: certificate signed by unknown authority".into(),
        // A CA with the right subject but another key: Go also says unknown authority.
        CertificateError::BadSignature => {
            "x509: certificate signed by unknown authority (possibly because of a signature \
             verification error while trying to verify candidate authority certificate)"
                .into()
        }
        CertificateError::NotValidForNameContext {
            expected,
            presented,
        } => {
            let names: Vec<&str> = presented.iter().map(|n| presented_name(n)).collect();
            format!(
                "x509: certificate is valid for {}, not {}",
                names.join(", "),
                expected.to_str()
            )
        }
        CertificateError::NotValidForName => "x509: certificate is not valid for this name".into(),
        CertificateError::Expired
        | CertificateError::ExpiredContext { .. }
        | CertificateError::NotValidYet
        | CertificateError::NotValidYetContext { .. } => {
            "x509: certificate has expired or is not yet valid".into()
        }
        other => format!("x509: {other}"),
    }
}

/// `DnsName("localhost")` / `IpAddress(127.0.0.1)`, as webpki reports presented names, to the
/// bare name Go prints.
fn presented_name(name: &str) -> &str {
    if let Some(dns) = name
        .strip_prefix("DnsName(\"")
        .and_then(|n| n.strip_suffix("\")"))
    {
        return dns;
    }
    if let Some(ip) = name
        .strip_prefix("IpAddress(")
        .and_then(|n| n.strip_suffix(')'))
    {
        return ip;
    }
    name
}

/// A hyper error as Go's net/http would word the same failure.
fn hyper_reason(error: &hyper::Error) -> String {
    if error.is_incomplete_message() {
        return "EOF".into();
    }
    error.to_string()
}
