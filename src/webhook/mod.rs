//! Calling webhooks: the transport that CRD conversion webhooks (`spec.conversion.webhook`) and
//! admission webhooks (Validating/MutatingWebhookConfiguration) share.
//!
//! The apiserver calls a webhook the same way whoever asks: it reads a `WebhookClientConfig`
//! (`url`, or `service` plus `caBundle`), POSTs one JSON review with `?timeout=` appended, checks
//! the server certificate against the bundle, and turns every failure into a Go `url.Error`
//! whose text ends up in the `Status` a client sees. This module does exactly that and nothing
//! about reviews: [`ClientConfig`] parses the JSON of a `clientConfig`, [`ServiceResolver`]
//! says where a `service` reference is reachable (there is no cluster network to route
//! `name.namespace.svc`), and [`WebhookClient::post`] makes the call, bounded by the timeout
//! and by a response size limit. What goes into the body and what comes back is the callers'
//! business (the conversion and admission modules).
//!
//! TLS is rustls with the ring provider. A `service` config is dialled at the resolved address
//! while the certificate is verified against `{name}.{namespace}.svc`, as the apiserver
//! verifies it. An empty `caBundle` means the Mozilla roots of `webpki-roots` (the apiserver
//! uses the system roots; a fake server has no business trusting a machine's local CAs, and the
//! Mozilla set is what public webhooks chain to). Plain `http://` URLs are accepted: the
//! apiserver's validation refuses them, but the transport allows them for loopback tests.
//!
//! Errors ([`WebhookError`]) stay distinguishable (connect, TLS, timeout, status, decode) so that
//! callers choose their messages; their `Display` is close to what the apiserver would log.

pub mod client;

use std::fmt::Write as _;
use std::time::Duration;

use base64::Engine as _;
use rustls_pki_types::pem::PemObject as _;
use rustls_pki_types::CertificateDer;
use serde_json::Value;

pub use client::{ServiceResolver, WebhookClient};

/// The largest response body read from a webhook, as the apiserver bounds what it decodes.
pub const MAX_RESPONSE_BYTES: usize = 3 * 1024 * 1024;

/// Where a webhook is and which certificates its server may present: the parsed form of a
/// Kubernetes `WebhookClientConfig`, so that a malformed config is reported once, when it is
/// read, not on every call.
#[derive(Debug, Clone, PartialEq)]
pub struct ClientConfig {
    /// The URL or the in-cluster service to call.
    pub endpoint: Endpoint,
    /// The trusted CAs decoded from `caBundle`; empty means the public roots.
    pub ca_certificates: Vec<CertificateDer<'static>>,
}

/// The two ways a config names its webhook.
#[derive(Debug, Clone, PartialEq)]
pub enum Endpoint {
    /// `url`: called as given (plus the timeout query).
    Url(String),
    /// `service`: called at the address the [`ServiceResolver`] gives.
    Service(ServiceReference),
}

/// A `service` reference; the apiserver calls `https://{name}.{namespace}.svc:{port}{path}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceReference {
    /// The Service's namespace.
    pub namespace: String,
    /// The Service's name.
    pub name: String,
    /// The Service port (443 when the config leaves it out).
    pub port: u16,
    /// The URL path, if any (a leading `/` is added when missing, as Go's URL printing does).
    pub path: Option<String>,
}

impl ServiceReference {
    /// The name the server certificate must be valid for: `{name}.{namespace}.svc`.
    pub fn server_name(&self) -> String {
        format!("{}.{}.svc", self.name, self.namespace)
    }

    /// The URL the apiserver would call, without the timeout query.
    pub fn url(&self) -> String {
        let path = match self.path.as_deref() {
            None | Some("") => String::new(),
            Some(p) if p.starts_with('/') => p.to_string(),
            Some(p) => format!("/{p}"),
        };
        format!("https://{}:{}{}", self.server_name(), self.port, path)
    }
}

impl ClientConfig {
    /// Parses the JSON of a `clientConfig` (`url` or `service`, and the base64 `caBundle`).
    /// Errors are [`WebhookError::InvalidConfig`].
    pub fn from_value(value: &Value) -> Result<ClientConfig, WebhookError> {
        let invalid = |message: String| WebhookError::InvalidConfig(message);
        let object = value
            .as_object()
            .ok_or_else(|| invalid("clientConfig must be an object".into()))?;
        let url = object.get("url").filter(|v| !v.is_null());
        let service = object.get("service").filter(|v| !v.is_null());
        let endpoint = match (url, service) {
            (Some(url), None) => {
                let url = url
                    .as_str()
                    .ok_or_else(|| invalid("clientConfig.url must be a string".into()))?;
                client::parse_url(url)?;
                Endpoint::Url(url.to_string())
            }
            (None, Some(service)) => Endpoint::Service(parse_service(service)?),
            _ => return Err(invalid("exactly one of url or service is required".into())),
        };
        let ca_certificates = match object.get("caBundle") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::String(b64)) => parse_ca_bundle(b64)?,
            Some(_) => return Err(invalid("clientConfig.caBundle must be a string".into())),
        };
        Ok(ClientConfig {
            endpoint,
            ca_certificates,
        })
    }

    /// The URL the apiserver would call, without the timeout query.
    pub fn url(&self) -> String {
        match &self.endpoint {
            Endpoint::Url(url) => url.clone(),
            Endpoint::Service(service) => service.url(),
        }
    }
}

fn parse_service(value: &Value) -> Result<ServiceReference, WebhookError> {
    let invalid = |message: &str| WebhookError::InvalidConfig(message.to_string());
    let field = |name: &str| -> Result<Option<String>, WebhookError> {
        match value.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(WebhookError::InvalidConfig(format!(
                "clientConfig.service.{name} must be a string"
            ))),
        }
    };
    if !value.is_object() {
        return Err(invalid("clientConfig.service must be an object"));
    }
    let namespace = field("namespace")?
        .filter(|s| !s.is_empty())
        .ok_or_else(|| invalid("clientConfig.service.namespace is required"))?;
    let name = field("name")?
        .filter(|s| !s.is_empty())
        .ok_or_else(|| invalid("clientConfig.service.name is required"))?;
    let port = match value.get("port") {
        None | Some(Value::Null) => 443,
        Some(port) => port
            .as_u64()
            .and_then(|p| u16::try_from(p).ok())
            .filter(|p| *p != 0)
            .ok_or_else(|| invalid("clientConfig.service.port must be between 1 and 65535"))?,
    };
    Ok(ServiceReference {
        namespace,
        name,
        port,
        path: field("path")?,
    })
}

/// Decodes a `caBundle` (base64 of one or more PEM certificates), with the apiserver's message
/// when it holds none.
pub fn parse_ca_bundle(base64: &str) -> Result<Vec<CertificateDer<'static>>, WebhookError> {
    if base64.is_empty() {
        return Ok(Vec::new());
    }
    let invalid = |message: String| WebhookError::InvalidConfig(message);
    let pem = base64::engine::general_purpose::STANDARD
        .decode(base64.trim())
        .map_err(|e| invalid(format!("clientConfig.caBundle is not valid base64: {e}")))?;
    let certificates = CertificateDer::pem_slice_iter(&pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| invalid(format!("unable to load root certificates: {e}")))?;
    if certificates.is_empty() {
        return Err(invalid(
            "unable to load root certificates: unable to parse bytes as PEM block".into(),
        ));
    }
    let mut roots = rustls::RootCertStore::empty();
    for certificate in &certificates {
        roots
            .add(certificate.clone())
            .map_err(|e| invalid(format!("unable to load root certificates: {e}")))?;
    }
    Ok(certificates)
}

/// Why a webhook call failed. Every variant but [`WebhookError::InvalidConfig`] carries the URL
/// (with its timeout query) and prints like the Go `url.Error` the apiserver would report, so
/// callers can put `to_string()` in a `Status` message or match on the variant for their own.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WebhookError {
    /// The `clientConfig` itself is unusable (no url or service, bad URL, bad caBundle).
    #[error("{0}")]
    InvalidConfig(String),
    /// The host could not be resolved: a `service` the [`ServiceResolver`] does not know, or a
    /// URL host name that does not resolve.
    #[error("Post {url:?}: dial tcp: lookup {host}: no such host")]
    Lookup {
        /// The URL called.
        url: String,
        /// The host name that did not resolve.
        host: String,
    },
    /// The TCP connection failed (`reason` as Go prints it: `connect: connection refused`).
    #[error("Post {url:?}: dial tcp {addr}: {reason}")]
    Connect {
        /// The URL called.
        url: String,
        /// The address dialled.
        addr: String,
        /// Why it failed.
        reason: String,
    },
    /// The TLS handshake failed, usually the server certificate (`reason` as Go prints it:
    /// `tls: failed to verify certificate: x509: certificate signed by unknown authority`).
    #[error("Post {url:?}: {reason}")]
    Tls {
        /// The URL called.
        url: String,
        /// Why it failed.
        reason: String,
    },
    /// The call did not finish within its timeout.
    #[error("Post {url:?}: context deadline exceeded")]
    Timeout {
        /// The URL called.
        url: String,
    },
    /// The connection failed after it was established (`EOF` when the server closed it).
    #[error("Post {url:?}: {reason}")]
    Transport {
        /// The URL called.
        url: String,
        /// Why it failed.
        reason: String,
    },
    /// The webhook answered with a status outside 2xx.
    #[error("Post {url:?}: unexpected status code {status}: {}", truncated(body))]
    Status {
        /// The URL called.
        url: String,
        /// The HTTP status code.
        status: u16,
        /// The response body (lossily decoded as UTF-8).
        body: String,
    },
    /// The response body exceeded [`MAX_RESPONSE_BYTES`].
    #[error("Post {url:?}: response body larger than {limit} bytes")]
    TooLarge {
        /// The URL called.
        url: String,
        /// The limit that was exceeded.
        limit: usize,
    },
    /// The response body is not JSON.
    #[error("Post {url:?}: decoding the response body: {reason}")]
    Decode {
        /// The URL called.
        url: String,
        /// The JSON parser's message.
        reason: String,
    },
}

/// At most this much of a response body goes into a message.
const BODY_IN_MESSAGE: usize = 1024;

fn truncated(body: &str) -> String {
    if body.len() <= BODY_IN_MESSAGE {
        return body.to_string();
    }
    let mut end = BODY_IN_MESSAGE;
    while !body.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &body[..end])
}

/// A duration as Go's `time.Duration.String()` prints it (`30s`, `1m30s`, `1.5s`, `500ms`), as
/// client-go writes the `timeout` query parameter.
pub fn go_duration(duration: Duration) -> String {
    let nanos = duration.as_nanos();
    if nanos == 0 {
        return "0s".into();
    }
    if nanos < 1_000 {
        return format!("{nanos}ns");
    }
    if nanos < 1_000_000 {
        return format!("{}µs", fraction(nanos, 1_000));
    }
    if nanos < 1_000_000_000 {
        return format!("{}ms", fraction(nanos, 1_000_000));
    }
    let mut out = String::new();
    let hours = nanos / 3_600_000_000_000;
    let minutes = nanos / 60_000_000_000 % 60;
    let seconds = nanos % 60_000_000_000;
    if hours > 0 {
        let _ = write!(out, "{hours}h");
    }
    if hours > 0 || minutes > 0 {
        let _ = write!(out, "{minutes}m");
    }
    let _ = write!(out, "{}s", fraction(seconds, 1_000_000_000));
    out
}

/// `value / unit` with the remainder as decimals, trailing zeros dropped.
fn fraction(value: u128, unit: u128) -> String {
    let whole = value / unit;
    let rest = value % unit;
    if rest == 0 {
        return whole.to_string();
    }
    let width = unit.ilog10() as usize;
    let decimals = format!("{rest:0width$}");
    format!("{whole}.{}", decimals.trim_end_matches('0'))
}

#[cfg(test)]
mod tests;
