//! Helpers for the tests of users who exercise webhooks against kubefake (feature `testing`).
//!
//! A conversion or admission webhook is an HTTPS server that the apiserver calls with a
//! certificate it verifies against the config's `caBundle`. Testing one against kubefake would
//! otherwise mean generating a CA and a serving certificate, writing them somewhere and running
//! a TLS server by hand; [`WebhookServer`] does all of that in memory: it generates a CA and a
//! leaf certificate for `localhost`, `127.0.0.1` and any extra DNS names (say
//! `hook.default.svc`, for `service` configs), serves HTTPS on a random loopback port, hands
//! each request's path and JSON body to an async handler, and gives back the `url` and
//! `caBundle` to put in a `clientConfig`.
//!
//! ```no_run
//! # async fn example() -> std::io::Result<()> {
//! use kubefake::testing::WebhookServer;
//! use serde_json::json;
//!
//! let server = WebhookServer::start(|_path, review| async move {
//!     json!({"apiVersion": review["apiVersion"], "kind": review["kind"]})
//! })
//! .await?;
//! let client_config = json!({"url": server.url("/convert"), "caBundle": server.ca_bundle()});
//! # let _ = client_config; Ok(()) }
//! ```
//!
//! Certificates come from [`crate::server::tls`], which the server's own HTTPS uses too. Enable
//! `testing` in your dev-dependencies.

use std::convert::Infallible;
use std::future::Future;
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use base64::Engine as _;
use bytes::Bytes;
use futures_util::future::BoxFuture;
use http_body_util::{BodyExt as _, Full, Limited};
use hyper::body::Incoming;
use hyper::header::CONTENT_TYPE;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use serde_json::{json, Value};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::{JoinHandle, JoinSet};
use tokio_rustls::TlsAcceptor;

use crate::server::tls::{self, CertificateAuthority};
use crate::webhook::MAX_RESPONSE_BYTES;

/// What a [`WebhookServer`] handler may answer: a JSON body, sent with 200, or a status code
/// and a JSON body, so that tests can make the webhook fail.
pub trait IntoWebhookResponse {
    /// The status code and the body to send.
    fn into_response(self) -> (u16, Value);
}

impl IntoWebhookResponse for Value {
    fn into_response(self) -> (u16, Value) {
        (200, self)
    }
}

impl IntoWebhookResponse for (u16, Value) {
    fn into_response(self) -> (u16, Value) {
        self
    }
}

type Handler = dyn Fn(String, Value) -> BoxFuture<'static, (u16, Value)> + Send + Sync;

/// An HTTPS webhook server on 127.0.0.1 with certificates generated at start; stopped when
/// dropped.
#[derive(Debug)]
pub struct WebhookServer {
    addr: SocketAddr,
    ca_pem: String,
    requests: Arc<AtomicUsize>,
    task: JoinHandle<()>,
}

/// Options of a [`WebhookServer`] before it starts: the extra names its certificate is valid
/// for.
#[derive(Debug, Clone, Default)]
pub struct WebhookServerBuilder {
    dns_names: Vec<String>,
}

impl WebhookServerBuilder {
    /// Adds a DNS name to the serving certificate, e.g. `hook.default.svc` so that a `service`
    /// config (verified against `{name}.{namespace}.svc`) accepts this server.
    pub fn dns_name(mut self, name: impl Into<String>) -> Self {
        self.dns_names.push(name.into());
        self
    }

    /// Generates the certificates and starts serving. `handler` gets each request's target
    /// (path and query, e.g. `/convert?timeout=30s`) and its JSON body; a body that is not
    /// JSON gets a 400 without calling it.
    pub async fn start<F, Fut, R>(self, handler: F) -> io::Result<WebhookServer>
    where
        F: Fn(String, Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoWebhookResponse + 'static,
    {
        let (ca_pem, acceptor) = generate(&self.dns_names)?;
        let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, 0)).await?;
        let addr = listener.local_addr()?;
        let handler: Arc<Handler> = Arc::new(move |target, body| {
            let response = handler(target, body);
            Box::pin(async move { response.await.into_response() })
        });
        let requests = Arc::new(AtomicUsize::new(0));
        let task = tokio::spawn(serve(listener, acceptor, handler, requests.clone()));
        Ok(WebhookServer {
            addr,
            ca_pem,
            requests,
            task,
        })
    }
}

impl WebhookServer {
    /// Options first (extra certificate names), then [`WebhookServerBuilder::start`].
    pub fn builder() -> WebhookServerBuilder {
        WebhookServerBuilder::default()
    }

    /// Starts a server whose certificate is valid for `localhost` and `127.0.0.1`; see
    /// [`WebhookServerBuilder::start`] for the handler.
    pub async fn start<F, Fut, R>(handler: F) -> io::Result<WebhookServer>
    where
        F: Fn(String, Value) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoWebhookResponse + 'static,
    {
        WebhookServerBuilder::default().start(handler).await
    }

    /// `https://127.0.0.1:PORT{path}`, for a `url` config (`path` should start with `/`).
    pub fn url(&self, path: &str) -> String {
        format!("https://{}{}", self.addr, path)
    }

    /// The listening address, for a [`crate::webhook::ServiceResolver`] entry.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The CA certificate as PEM.
    pub fn ca_pem(&self) -> &str {
        &self.ca_pem
    }

    /// The CA as a `caBundle` value: base64 of the PEM.
    pub fn ca_bundle(&self) -> String {
        base64::engine::general_purpose::STANDARD.encode(&self.ca_pem)
    }

    /// How many HTTP requests arrived so far, so that tests can assert batching (one call for a
    /// whole list) or that no call was made.
    pub fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }
}

impl Drop for WebhookServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Generates a CA and a serving certificate for `localhost`, `127.0.0.1` and `dns_names`;
/// returns the CA (PEM) and the TLS acceptor presenting the certificate (HTTP/1.1 only, as
/// the apiserver's webhook client speaks it).
fn generate(dns_names: &[String]) -> io::Result<(String, TlsAcceptor)> {
    let ca = CertificateAuthority::generate("kubefake webhook CA").map_err(io::Error::other)?;
    let mut names = vec!["localhost".to_string(), "127.0.0.1".to_string()];
    names.extend(dns_names.iter().cloned());
    let serving = ca.serving(&names).map_err(io::Error::other)?;
    let config = tls::server_config(&serving, None).map_err(io::Error::other)?;
    let mut config = Arc::unwrap_or_clone(config);
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok((serving.ca_pem, TlsAcceptor::from(Arc::new(config))))
}

/// Accepts connections until the server is dropped; the connections are aborted with it.
async fn serve(
    listener: TcpListener,
    acceptor: TlsAcceptor,
    handler: Arc<Handler>,
    requests: Arc<AtomicUsize>,
) {
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                if let Ok((tcp, _)) = accepted {
                    connections.spawn(connection(
                        tcp,
                        acceptor.clone(),
                        handler.clone(),
                        requests.clone(),
                    ));
                }
            }
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

async fn connection(
    tcp: TcpStream,
    acceptor: TlsAcceptor,
    handler: Arc<Handler>,
    requests: Arc<AtomicUsize>,
) {
    // Small TLS records must not wait for the client's delayed ACK (Nagle: ~40 ms a call).
    let _ = tcp.set_nodelay(true);
    let Ok(tls) = acceptor.accept(tcp).await else {
        return;
    };
    let service = hyper::service::service_fn(move |request| {
        requests.fetch_add(1, Ordering::SeqCst);
        respond(request, handler.clone())
    });
    let _ = hyper::server::conn::http1::Builder::new()
        .serve_connection(TokioIo::new(tls), service)
        .await;
}

async fn respond(
    request: Request<Incoming>,
    handler: Arc<Handler>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let target = request
        .uri()
        .path_and_query()
        .map(|p| p.as_str().to_string())
        .unwrap_or_else(|| "/".into());
    let body = Limited::new(request.into_body(), MAX_RESPONSE_BYTES)
        .collect()
        .await
        .map_err(|e| e.to_string())
        .and_then(|b| serde_json::from_slice::<Value>(&b.to_bytes()).map_err(|e| e.to_string()));
    let (status, body) = match body {
        Ok(body) => handler(target, body).await,
        Err(message) => (400, json!({ "error": message })),
    };
    let mut response = Response::new(Full::new(Bytes::from(body.to_string())));
    *response.status_mut() =
        StatusCode::from_u16(status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    response.headers_mut().insert(
        CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    Ok(response)
}
