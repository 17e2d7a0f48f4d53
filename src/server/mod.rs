//! The listener and the one warp filter that feeds every request to [`crate::endpoints::handle`],
//! plus the limits that keep any client from holding the server:
//!
//! - at most `max_connections` connections; one more is answered 503 and closed;
//! - [`io`]: read and stall timeouts on each connection (a request's head, once begun, must
//!   keep coming within the read timeout), and `Status` bodies for the requests hyper refuses
//!   itself (URI over 64 KiB: 414; headers over ~400 KiB: 431);
//! - a read timeout on request bodies;
//! - [`activity`]: a connection with no open request for the idle timeout (90 s, the
//!   apiserver's) is closed, HTTP/1.1 keep-alive and HTTP/2 alike, at most 100 HTTP/2 streams
//!   per connection;
//! - Go's 400 for a request with two `Host` headers, and a `Host` check against DNS rebinding
//!   ([`HostCheck`]);
//! - shutdown: the signal first ends every watch stream, then connections get
//!   [`SHUTDOWN_GRACE`] to finish what they are doing, then the rest are dropped.
//!
//! A connection that wakes itself while it is polled (hyper's body channel does, for every
//! request with a body) is polled again at once instead of yielding (`rewake`): yielding
//! woke another worker thread for every write.

mod activity;
pub mod io;
mod rewake;
pub mod tls;

use std::convert::Infallible;
use std::net::IpAddr;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Buf, BytesMut};
use futures_util::StreamExt;
use tokio::net::TcpListener;
use tokio::sync::watch;
use tokio::task::JoinSet;
use warp::http::{HeaderMap, Method};
use warp::Filter;

use crate::context::UserInfo;
use crate::endpoints::negotiation::{error_response, Query, Request, MAX_BODY_BYTES};
use crate::endpoints::websocket::Upgrade;
use crate::endpoints::DropConnection;
use crate::error::ApiError;
use crate::state::State;
use activity::{Activity, TrackedBody};
use tokio_rustls::TlsAcceptor;

/// How long shutdown lets connections finish before it drops them: shutdown never takes much
/// longer than this, whatever clients do.
pub const SHUTDOWN_GRACE: Duration = Duration::from_secs(1);

/// HTTP/2 streams a connection may have open at once (the apiserver's default).
const MAX_CONCURRENT_STREAMS: u32 = 100;

/// How often a busy connection looks again whether it has become idle.
const IDLE_CHECK: Duration = Duration::from_secs(1);

/// Which `Host` headers are served: DNS-rebinding protection. A web page can make a browser
/// send requests to a local server under a name the page controls; a `Host` naming
/// `localhost`, a loopback address or the listening address cannot be such a name.
#[derive(Debug, Clone, Copy)]
pub struct HostCheck {
    /// Serve any `Host`.
    pub any: bool,
    /// The address the server listens on.
    pub address: IpAddr,
}

impl HostCheck {
    /// Whether a request with these headers is served. No `Host` at all (HTTP/2, HTTP/1.0) is
    /// not a browser's request and is served.
    pub fn allows(&self, headers: &HeaderMap) -> bool {
        if self.any {
            return true;
        }
        let Some(value) = headers.get(warp::http::header::HOST) else {
            return true;
        };
        let Ok(host) = value.to_str() else {
            return false;
        };
        self.allows_host(host)
    }

    fn allows_host(&self, host: &str) -> bool {
        // `[::1]:8080`, `[::1]`, `127.0.0.1:8080`, `localhost:8080`, `localhost`.
        let name = match host.strip_prefix('[') {
            Some(rest) => rest.split(']').next().unwrap_or(""),
            None => host.rsplit_once(':').map_or(host, |(name, _port)| name),
        };
        let name = name.strip_suffix('.').unwrap_or(name);
        if name.eq_ignore_ascii_case("localhost")
            || name.len() > 10 && name[name.len() - 10..].eq_ignore_ascii_case(".localhost")
        {
            return true;
        }
        match name.parse::<IpAddr>() {
            Ok(ip) => ip.is_loopback() || ip == self.address || self.address.is_unspecified(),
            Err(_) => false,
        }
    }

    /// The 403 for a `Host` that is not served.
    pub fn refusal(headers: &HeaderMap) -> ApiError {
        let host = headers
            .get(warp::http::header::HOST)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .unwrap_or_default();
        ApiError::status(
            403,
            "Forbidden",
            format!(
                "the Host header {host:?} names neither localhost, a loopback address nor the \
                 address kubefake listens on; such requests are refused as protection against \
                 DNS rebinding (a web page reaching this unauthenticated API through the \
                 browser); start kubefake with --allow-any-host (ServerBuilder::allow_any_host) \
                 to serve them"
            ),
        )
    }
}

/// Serves `state` on `listener` until `shutdown` turns `true`.
pub async fn run(listener: TcpListener, state: Arc<State>, mut shutdown: watch::Receiver<bool>) {
    let options = state.options.clone();
    let hosts = HostCheck {
        any: options.allow_any_host,
        address: listener
            .local_addr()
            .map(|a| a.ip())
            .unwrap_or(IpAddr::V4(std::net::Ipv4Addr::LOCALHOST)),
    };
    let read_timeout = options.read_timeout;
    // warp's own `serve` accepts connections without TCP_NODELAY, so a watch event (a small
    // write) can wait for Nagle's algorithm; kubefake accepts them itself.
    let tls = state.options.tls.clone().map(TlsAcceptor::from);
    // Only the audit log reads clients' addresses: without it, requests carry none.
    let audited = state.options.audit_log.is_some();
    let service = warp::service(routes(state, hosts));
    let mut builder =
        hyper_util::server::conn::auto::Builder::new(hyper_util::rt::TokioExecutor::new());
    // Heads are timed by `io::Io` once they have begun: hyper's header timer starts as soon as
    // a keep-alive connection waits for its next request, so it would close idle connections
    // at the read timeout instead of the idle timeout.
    builder
        .http1()
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(None);
    // The apiserver's HTTP/2 limit on concurrent streams per connection.
    builder
        .http2()
        .timer(hyper_util::rt::TokioTimer::new())
        .max_concurrent_streams(MAX_CONCURRENT_STREAMS);
    let (stop, stopping) = watch::channel(false);
    let busy = io::answer(
        "503 Service Unavailable",
        &ApiError::status(
            503,
            "ServiceUnavailable",
            format!(
                "kubefake already serves {} connections, its limit (--max-connections, \
                 ServerBuilder::max_connections); close some or raise it",
                options.max_connections
            ),
        ),
    );
    let mut conns = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, remote) = match accepted {
                    Ok((stream, remote)) => (stream, remote),
                    Err(e) => {
                        tracing::warn!(error = %e, "accepting a connection");
                        continue;
                    }
                };
                if conns.len() >= options.max_connections {
                    // Refused without waiting on the client: the answer goes out if the socket
                    // takes it at once, and the connection closes either way.
                    let _ = stream.try_write(&busy);
                    tracing::warn!(limit = options.max_connections, "refused a connection over the limit");
                    continue;
                }
                let _ = stream.set_nodelay(true);
                let activity = Activity::new();
                let io = io::Io::new(stream, read_timeout, options.stall_timeout)
                    .with_activity(activity.clone());
                let conn = Connection {
                    builder: builder.clone(),
                    service: service.clone(),
                    stopping: stopping.clone(),
                    tls: tls.clone(),
                    handshake_timeout: read_timeout,
                    idle_timeout: options.idle_timeout,
                    activity,
                    remote: audited.then_some(Remote(remote.ip())),
                };
                conns.spawn(conn.serve(io));
            }
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
            changed = shutdown.changed() => {
                if changed.is_err() || *shutdown.borrow() {
                    break;
                }
            }
        }
    }
    drop(listener);
    let _ = stop.send(true);
    let finished = async { while conns.join_next().await.is_some() {} };
    if tokio::time::timeout(SHUTDOWN_GRACE, finished)
        .await
        .is_err()
    {
        tracing::info!(
            connections = conns.len(),
            "dropping the connections still open after the shutdown grace period"
        );
    }
    conns.shutdown().await;
}

/// The user of the client certificate a connection verified, handed to each of its requests
/// as a request extension.
#[derive(Clone)]
struct Peer(Arc<UserInfo>);

/// The address of a request's client (an extension, as [`Peer`]).
#[derive(Clone, Copy)]
struct Remote(IpAddr);

/// Why a connection was closed unanswered: a fault rule said so.
#[derive(Debug, thiserror::Error)]
#[error("the connection was dropped by a fault rule")]
struct DroppedByFault;

/// One accepted connection, before it is served: the TLS handshake (when the server serves
/// HTTPS) and then HTTP/1.1 or HTTP/2, shut down gracefully when the server stops or when it
/// has been idle for the idle timeout.
struct Connection<S> {
    builder: hyper_util::server::conn::auto::Builder<hyper_util::rt::TokioExecutor>,
    service: S,
    stopping: watch::Receiver<bool>,
    tls: Option<TlsAcceptor>,
    handshake_timeout: Duration,
    idle_timeout: Duration,
    /// Its open requests, which its reads see too.
    activity: Arc<Activity>,
    /// The client's address, handed to requests when the audit log wants it.
    remote: Option<Remote>,
}

impl<S> Connection<S>
where
    S: tower_service::Service<
            warp::http::Request<hyper::body::Incoming>,
            Response = warp::reply::Response,
            Error = Infallible,
        > + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
{
    async fn serve(self, io: io::Io) {
        let Some(acceptor) = self.tls.clone() else {
            return self.http(io, None).await;
        };
        match tokio::time::timeout(self.handshake_timeout, acceptor.accept(io)).await {
            Ok(Ok(stream)) => {
                if stream.get_ref().1.alpn_protocol() == Some(b"h2") {
                    self.activity.no_more_heads();
                }
                let peer = stream
                    .get_ref()
                    .1
                    .peer_certificates()
                    .and_then(|certs| certs.first())
                    .and_then(tls::certificate_user)
                    .map(Arc::new);
                self.http(stream, peer).await
            }
            Ok(Err(e)) => tracing::debug!(error = %e, "TLS handshake failed"),
            Err(_) => tracing::debug!("TLS handshake timed out"),
        }
    }

    async fn http<T>(mut self, io: T, peer: Option<Arc<UserInfo>>)
    where
        T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
    {
        let service = self.service;
        let activity = self.activity.clone();
        let tracker = activity.clone();
        let remote = self.remote;
        // The WebSocket sessions this connection was upgraded to: the connection keeps its
        // place (in the connection limit, in shutdown) until they end.
        let (sessions_tx, mut sessions) = tokio::sync::mpsc::unbounded_channel();
        let svc = hyper::service::service_fn(move |mut req| {
            if let Some(p) = &peer {
                req.extensions_mut().insert(Peer(p.clone()));
            }
            if let Some(remote) = remote {
                req.extensions_mut().insert(remote);
            }
            if crate::endpoints::websocket::requested(req.headers()) {
                tracker.no_more_heads();
                let on = hyper::upgrade::on(&mut req);
                let (upgrade, session) = Upgrade::new(on);
                let _ = sessions_tx.send(session);
                req.extensions_mut().insert(upgrade);
            }
            let open = tracker.open();
            let mut service = service.clone();
            async move {
                let resp = match tower_service::Service::call(&mut service, req).await {
                    Ok(resp) => resp,
                    Err(never) => match never {},
                };
                // A service error makes hyper close the connection without answering.
                if resp.extensions().get::<DropConnection>().is_some() {
                    return Err(DroppedByFault);
                }
                Ok(resp.map(|body| TrackedBody::new(body, open)))
            }
        });
        let conn = self
            .builder
            .serve_connection_with_upgrades(hyper_util::rt::TokioIo::new(io), svc);
        let mut conn = std::pin::pin!(conn);
        let rewake = rewake::Rewake::new();
        let mut closing = false;
        loop {
            let idle_deadline = activity.idle_since().map(|since| since + self.idle_timeout);
            tokio::select! {
                ended = std::future::poll_fn(|cx| rewake.poll(conn.as_mut(), cx)) => {
                    if let Err(e) = ended {
                        tracing::debug!(error = %e, "connection ended");
                    }
                    break;
                }
                _ = self.stopping.wait_for(|stop| *stop), if !closing => {
                    conn.as_mut().graceful_shutdown();
                    closing = true;
                }
                _ = sleep_until_some(idle_deadline), if !closing => {
                    if activity.idle_since().is_some_and(|t| t.elapsed() >= self.idle_timeout) {
                        conn.as_mut().graceful_shutdown();
                        closing = true;
                    }
                }
            }
        }
        // An upgraded connection lives on in its session; its end is this one's.
        sessions.close();
        while let Some(session) = sessions.recv().await {
            session.ended().await;
        }
    }
}

/// Sleeps until `deadline`, or (re-checked on the next loop) a second when there is none.
async fn sleep_until_some(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => tokio::time::sleep(IDLE_CHECK).await,
    }
}

/// The one filter: the `Host` check, the body (bounded in size and time), then the endpoints.
fn routes(
    state: Arc<State>,
    hosts: HostCheck,
) -> impl Filter<Extract = (impl warp::Reply,), Error = Infallible> + Clone {
    let read_timeout = state.options.read_timeout;
    let with_state = warp::any().map(move || state.clone());
    let raw_query = warp::query::raw().or(warp::any().map(String::new)).unify();
    warp::method()
        .and(warp::path::full())
        .and(raw_query)
        .and(warp::header::headers_cloned())
        .and(warp::body::stream())
        .and(warp::ext::optional::<Peer>())
        .and(warp::ext::optional::<Remote>())
        .and(warp::ext::optional::<Upgrade>())
        .and(with_state)
        .then(
            move |method: Method,
                  path: warp::path::FullPath,
                  query: String,
                  headers: HeaderMap,
                  body,
                  peer: Option<Peer>,
                  remote: Option<Remote>,
                  upgrade: Option<Upgrade>,
                  state: Arc<State>| async move {
                if headers
                    .get_all(warp::http::header::HOST)
                    .iter()
                    .nth(1)
                    .is_some()
                {
                    return too_many_hosts();
                }
                if !hosts.allows(&headers) {
                    return error_response(&HostCheck::refusal(&headers));
                }
                let body = match read_body(body, read_timeout).await {
                    Ok(b) => b,
                    Err(e) => return error_response(&e),
                };
                let req = Request {
                    method: method.as_str().to_string(),
                    path: path.as_str().to_string(),
                    query: Query::parse(&query),
                    headers,
                    body,
                    peer: peer.map(|p| p.0),
                    remote: remote.map(|r| r.0),
                    upgrade,
                };
                crate::endpoints::handle(state, req).await
            },
        )
        .recover(|_rejection| async {
            Ok::<_, Infallible>(error_response(&ApiError::path_not_found()))
        })
}

/// Go's answer to a request with two `Host` headers (which its request reader refuses before
/// any handler): a plain-text 400, and the connection closed.
fn too_many_hosts() -> warp::reply::Response {
    let mut resp = warp::reply::Response::new("400 Bad Request".into());
    *resp.status_mut() = warp::http::StatusCode::BAD_REQUEST;
    let headers = resp.headers_mut();
    headers.insert(
        warp::http::header::CONTENT_TYPE,
        warp::http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    headers.insert(
        warp::http::header::CONNECTION,
        warp::http::HeaderValue::from_static("close"),
    );
    resp
}

/// Reads a request body, refusing more than the apiserver's 3 MiB limit.
/// The body must arrive within `timeout` (408 otherwise).
async fn read_body<S, B>(body: S, timeout: Duration) -> Result<bytes::Bytes, ApiError>
where
    S: futures_util::Stream<Item = Result<B, warp::Error>> + Unpin,
    B: Buf,
{
    match tokio::time::timeout(timeout, collect_body(body)).await {
        Ok(read) => read,
        Err(_) => Err(ApiError::status(
            408,
            "Timeout",
            format!(
                "the request body was not received within {}s (--read-timeout)",
                timeout.as_secs_f64()
            ),
        )),
    }
}

async fn collect_body<S, B>(mut body: S) -> Result<bytes::Bytes, ApiError>
where
    S: futures_util::Stream<Item = Result<B, warp::Error>> + Unpin,
    B: Buf,
{
    let mut out = BytesMut::new();
    while let Some(chunk) = body.next().await {
        let mut chunk =
            chunk.map_err(|e| ApiError::bad_request(format!("reading the request body: {e}")))?;
        if out.len() + chunk.remaining() > MAX_BODY_BYTES {
            return Err(ApiError::too_large(MAX_BODY_BYTES));
        }
        while chunk.has_remaining() {
            let part = chunk.chunk();
            out.extend_from_slice(part);
            let n = part.len();
            chunk.advance(n);
        }
    }
    Ok(out.freeze())
}
