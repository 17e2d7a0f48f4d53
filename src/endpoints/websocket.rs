//! WebSocket, as the apiserver speaks it: watches over WebSocket (fabric8's default, and any
//! client that sends `Upgrade: websocket` on a watch), served as the apiserver's watch handler
//! serves them through `golang.org/x/net/websocket`, and the streaming subresources' channel
//! protocols (`pods/exec`, `attach`, `portforward`), which kubefake negotiates and then ends
//! with its error, since it runs no containers.
//!
//! The server hands a request that asks for an upgrade its [`Upgrade`]; an endpoint that
//! accepts it answers `101 Switching Protocols` ([`Handshake::response`]) and spawns the task
//! that speaks WebSocket on the upgraded connection once hyper hands it over.
//!
//! The watch handshake is x/net/websocket's, with its answers (raw texts, not `Status`
//! bodies): an `Origin` header is required (403 without one), `Sec-WebSocket-Version` must be
//! 13, at most one subprotocol is echoed. Each watch event is one message (a text message for
//! JSON, the event's line with its newline; a binary message for protobuf, the event without
//! its length prefix); the client's messages are read and ignored; the server closes with
//! 1000 when the watch ends.

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use hyper::upgrade::OnUpgrade;
use tokio::sync::{mpsc, oneshot};
use tokio_tungstenite::tungstenite::handshake::derive_accept_key;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::protocol::{CloseFrame, Role, WebSocketConfig};
use tokio_tungstenite::tungstenite::{Message, Utf8Bytes};
use tokio_tungstenite::WebSocketStream;
use warp::http::{self, HeaderMap, StatusCode};
use warp::reply::Response;

use crate::error::ApiError;
use crate::registry::resource::{Stream, StreamKind};

/// The upgrade of one request's connection, which hyper completes after the `101` is sent.
/// Cloneable so that it can travel as a request extension; the first `take` gets it,
/// with the guard whose drop ends the connection's [`Session`].
#[derive(Clone)]
pub struct Upgrade(Arc<parking_lot::Mutex<Option<(OnUpgrade, SessionGuard)>>>);

/// Held by whatever serves an upgraded connection; dropped when it ends.
struct SessionGuard(#[allow(dead_code)] oneshot::Sender<()>);

/// The end of a connection's life after an upgrade: what serves it has finished (or the
/// request was never upgraded).
pub struct Session(oneshot::Receiver<()>);

impl Session {
    /// Waits until the upgraded connection is served no more.
    pub async fn ended(self) {
        let _ = self.0.await;
    }
}

impl Upgrade {
    /// Wraps hyper's pending upgrade; the session ends when what takes it is done with it (at
    /// once if nothing does).
    pub fn new(on: OnUpgrade) -> (Self, Session) {
        let (tx, rx) = oneshot::channel();
        let upgrade = Upgrade(Arc::new(parking_lot::Mutex::new(Some((
            on,
            SessionGuard(tx),
        )))));
        (upgrade, Session(rx))
    }

    fn take(&self) -> Option<(OnUpgrade, SessionGuard)> {
        self.0.lock().take()
    }
}

impl std::fmt::Debug for Upgrade {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Upgrade")
    }
}

/// Whether a request asks for a WebSocket (`wsstream.IsWebSocketRequest`): `Upgrade:
/// websocket` and a `Connection` header naming `upgrade`.
pub fn requested(headers: &HeaderMap) -> bool {
    let header = |name| {
        headers
            .get_all(name)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .collect::<Vec<_>>()
            .join(",")
    };
    header(http::header::UPGRADE).eq_ignore_ascii_case("websocket")
        && header(http::header::CONNECTION)
            .split(',')
            .any(|t| t.trim().eq_ignore_ascii_case("upgrade"))
}

/// The subprotocols a client offers, in its order, as x/net/websocket reads them: the first
/// `Sec-WebSocket-Protocol` header split at commas, each item trimmed (empty items kept).
fn offered_protocols(headers: &HeaderMap) -> Vec<String> {
    let offered = headers
        .get(http::header::SEC_WEBSOCKET_PROTOCOL)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .trim();
    if offered.is_empty() {
        return Vec::new();
    }
    offered.split(',').map(|p| p.trim().to_string()).collect()
}

/// An accepted WebSocket handshake: what the `101` says.
#[derive(Debug)]
pub struct Handshake {
    accept: String,
    protocol: Option<String>,
}

impl Handshake {
    /// The `101 Switching Protocols` that completes the handshake.
    pub fn response(&self) -> Response {
        let mut resp = Response::new(Bytes::new().into());
        *resp.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
        let headers = resp.headers_mut();
        headers.insert(
            http::header::UPGRADE,
            http::HeaderValue::from_static("websocket"),
        );
        headers.insert(
            http::header::CONNECTION,
            http::HeaderValue::from_static("Upgrade"),
        );
        if let Ok(v) = http::HeaderValue::from_str(&self.accept) {
            headers.insert(http::header::SEC_WEBSOCKET_ACCEPT, v);
        }
        if let Some(v) = self
            .protocol
            .as_deref()
            .and_then(|p| http::HeaderValue::from_str(p).ok())
        {
            headers.insert(http::header::SEC_WEBSOCKET_PROTOCOL, v);
        }
        resp
    }

    /// The subprotocol agreed on, if any.
    pub fn protocol(&self) -> Option<&str> {
        self.protocol.as_deref()
    }
}

/// A refused handshake, answered as x/net/websocket answers it: the status line, an optional
/// header, and a plain-text body (often empty); the connection closes after it.
#[derive(Debug)]
pub struct Refusal {
    code: StatusCode,
    text: String,
    version_header: bool,
}

impl Refusal {
    /// The answer.
    pub fn response(&self) -> Response {
        let mut resp = Response::new(Bytes::from(self.text.clone()).into());
        *resp.status_mut() = self.code;
        let headers = resp.headers_mut();
        if self.version_header {
            headers.insert(
                http::header::SEC_WEBSOCKET_VERSION,
                http::HeaderValue::from_static("13"),
            );
        }
        headers.insert(
            http::header::CONNECTION,
            http::HeaderValue::from_static("close"),
        );
        resp
    }
}

fn refusal(code: StatusCode, text: &str, version_header: bool) -> Refusal {
    Refusal {
        code,
        text: text.to_string(),
        version_header,
    }
}

/// The hybi-13 checks every handshake makes (`hybiServerHandshaker.ReadHandshake`): a GET,
/// a key, version 13.
fn read_handshake(method: &str, headers: &HeaderMap) -> Result<String, Refusal> {
    if method != "GET" {
        return Err(refusal(StatusCode::METHOD_NOT_ALLOWED, "bad method", false));
    }
    let key = headers
        .get(http::header::SEC_WEBSOCKET_KEY)
        .map(|k| k.as_bytes())
        .unwrap_or_default();
    if key.is_empty() {
        return Err(refusal(
            StatusCode::BAD_REQUEST,
            "mismatch challenge/response",
            false,
        ));
    }
    let version = headers
        .get(http::header::SEC_WEBSOCKET_VERSION)
        .map(|v| v.as_bytes())
        .unwrap_or_default();
    if version != b"13" {
        return Err(refusal(
            StatusCode::BAD_REQUEST,
            "missing or bad WebSocket Version",
            true,
        ));
    }
    Ok(derive_accept_key(key))
}

/// The handshake of a watch over WebSocket (`websocket.Handler`): the hybi-13 checks, then
/// `checkOrigin` (a request without an `Origin`, or with one that is not an absolute URI, is a
/// 403 with no body), then at most one subprotocol, echoed (several: a 400).
pub fn watch_handshake(method: &str, headers: &HeaderMap) -> Result<Handshake, Refusal> {
    let accept = read_handshake(method, headers)?;
    let origin = headers
        .get(http::header::ORIGIN)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if !is_request_uri(origin) {
        return Err(refusal(StatusCode::FORBIDDEN, "", false));
    }
    let mut protocols = offered_protocols(headers);
    if protocols.len() > 1 {
        return Err(refusal(StatusCode::BAD_REQUEST, "", false));
    }
    Ok(Handshake {
        accept,
        protocol: protocols.pop(),
    })
}

/// The handshake of a channel protocol (`wsstream.handshake`): the hybi-13 checks, then the
/// first subprotocol the client offers that the server supports (no subprotocol offered
/// counts as `""`), else x/net's 403 for a failed handshake, with no body.
pub fn channel_handshake(
    method: &str,
    headers: &HeaderMap,
    supported: &[&str],
) -> Result<Handshake, Refusal> {
    let accept = read_handshake(method, headers)?;
    let offered = offered_protocols(headers);
    let wanted: Vec<&str> = if offered.is_empty() {
        vec![""]
    } else {
        offered.iter().map(String::as_str).collect()
    };
    match wanted.iter().find(|p| supported.contains(p)) {
        Some(p) => Ok(Handshake {
            accept,
            protocol: (!p.is_empty()).then(|| p.to_string()),
        }),
        None => Err(refusal(StatusCode::FORBIDDEN, "", false)),
    }
}

/// Go's `url.ParseRequestURI` in the cases that matter for an `Origin`: an absolute URI
/// (`scheme:...`) or an absolute path; `null` and the empty string are not.
fn is_request_uri(s: &str) -> bool {
    if s.starts_with('/') {
        return true;
    }
    let Some((scheme, _)) = s.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
}

/// How a stream of watch chunks becomes messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Framing {
    /// JSON lines: one text message per line, newline included.
    Text,
    /// Length-prefixed protobuf frames: one binary message per frame, prefix removed.
    Binary,
}

impl Framing {
    /// Cuts a chunk of whole frames into one message per frame.
    fn messages(self, chunk: &Bytes) -> Vec<Message> {
        let mut out = Vec::new();
        let mut rest = chunk.clone();
        while !rest.is_empty() {
            match self {
                Framing::Text => {
                    let end = memchr::memchr(b'\n', &rest).map_or(rest.len(), |i| i + 1);
                    let line = rest.split_to(end);
                    // The frame's bytes are shared, not copied, once checked as UTF-8.
                    match Utf8Bytes::try_from(line.clone()) {
                        Ok(text) => out.push(Message::Text(text)),
                        Err(_) => out.push(Message::binary(line)),
                    }
                }
                Framing::Binary => {
                    if rest.len() < 4 {
                        break;
                    }
                    let len = u32::from_be_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize;
                    let mut frame = rest.split_to((4 + len).min(rest.len()));
                    let _ = frame.split_to(4);
                    out.push(Message::binary(frame));
                }
            }
        }
        out
    }
}

/// Takes over the connection once hyper hands it over (after the `101`), for a server-side
/// WebSocket; `None` when the connection went away first.
async fn upgraded(upgrade: &Upgrade) -> Option<(WebSocketStream<impl WebSocketIo>, SessionGuard)> {
    let (on, guard) = upgrade.take()?;
    let io = on.await.ok()?;
    // The client's messages are read and dropped: no need to buffer large ones.
    let config = WebSocketConfig::default()
        .max_message_size(Some(MAX_CLIENT_MESSAGE))
        .max_frame_size(Some(MAX_CLIENT_MESSAGE));
    let ws = WebSocketStream::from_raw_socket(
        hyper_util::rt::TokioIo::new(io),
        Role::Server,
        Some(config),
    )
    .await;
    Some((ws, guard))
}

/// The largest message a client may send on a server's WebSocket (its messages are ignored).
const MAX_CLIENT_MESSAGE: usize = 64 * 1024;

/// What an upgraded connection is: bytes both ways.
trait WebSocketIo: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send {}
impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send> WebSocketIo for T {}

/// Sends a watch's chunks as messages until the watch ends (then a normal close) or the client
/// goes (its close, or an error, drops the receiver and so ends the watch). The client's own
/// messages are read and dropped, as `wsstream.IgnoreReceives` does.
pub async fn serve_watch(
    upgrade: Upgrade,
    framing: Framing,
    mut chunks: mpsc::Receiver<Result<Bytes, Infallible>>,
) {
    let Some((mut ws, _session)) = upgraded(&upgrade).await else {
        return;
    };
    loop {
        tokio::select! {
            chunk = chunks.recv() => {
                let Some(Ok(chunk)) = chunk else { break };
                for message in framing.messages(&chunk) {
                    if ws.feed(message).await.is_err() {
                        return;
                    }
                }
                if ws.flush().await.is_err() {
                    return;
                }
            }
            incoming = ws.next() => match incoming {
                Some(Ok(Message::Close(_))) => {
                    // The close reply tungstenite queued goes out, as x/net's Close sends one.
                    let _ = ws.flush().await;
                    return;
                }
                Some(Err(_)) | None => return,
                Some(Ok(_)) => {}
            },
        }
    }
    close_normally(&mut ws).await;
}

async fn close_normally<S: WebSocketIo>(ws: &mut WebSocketStream<S>) {
    let frame = CloseFrame {
        code: CloseCode::Normal,
        reason: "".into(),
    };
    let _ = ws.close(Some(frame)).await;
}

/// Sends `messages` on a channel protocol's connection, then closes it normally.
pub async fn serve_messages(upgrade: Upgrade, messages: Vec<Message>) {
    let Some((mut ws, _session)) = upgraded(&upgrade).await else {
        return;
    };
    for message in messages {
        if ws.feed(message).await.is_err() {
            return;
        }
    }
    if ws.flush().await.is_err() {
        return;
    }
    close_normally(&mut ws).await;
}

/// The kubelet's subprotocols for `exec` and `attach` (remotecommand's `createWebSocketStreams`).
const REMOTE_COMMAND: &[&str] = &[
    "",
    "channel.k8s.io",
    "base64.channel.k8s.io",
    "v4.channel.k8s.io",
    "v4.base64.channel.k8s.io",
    "v5.channel.k8s.io",
];
/// The kubelet's subprotocols for `portforward` over WebSocket.
const PORT_FORWARD: &[&str] = &["", "v4.channel.k8s.io", "v4.base64.channel.k8s.io"];
/// The remotecommand error channel.
const ERROR_CHANNEL: u8 = 3;

/// Answers a connection's WebSocket request: the kubelet's handshake, then the stream's error on
/// its error channel, then a normal close.
pub fn serve_stream(
    method: &str,
    headers: &HeaderMap,
    stream: &Stream,
    upgrade: Upgrade,
) -> Response {
    let supported = match stream.kind {
        StreamKind::RemoteCommand => REMOTE_COMMAND,
        StreamKind::PortForward { .. } => PORT_FORWARD,
    };
    let handshake = match channel_handshake(method, headers, supported) {
        Ok(h) => h,
        Err(refused) => return refused.response(),
    };
    let messages = stream_messages(stream, handshake.protocol().unwrap_or(""));
    tokio::spawn(serve_messages(upgrade, messages));
    handshake.response()
}

/// What a stream sends in `protocol` before it closes.
fn stream_messages(stream: &Stream, protocol: &str) -> Vec<Message> {
    let base64 = protocol.contains("base64");
    let on = |channel: u8, payload: &[u8]| -> Message {
        if base64 {
            let encoded =
                base64::Engine::encode(&base64::engine::general_purpose::STANDARD, payload);
            // Go's `string('0'+num)` on a byte: wraps past 255.
            Message::text(format!(
                "{}{encoded}",
                char::from(b'0'.wrapping_add(channel))
            ))
        } else {
            let mut frame = Vec::with_capacity(payload.len() + 1);
            frame.push(channel);
            frame.extend_from_slice(payload);
            Message::binary(frame)
        }
    };
    match &stream.kind {
        StreamKind::RemoteCommand => {
            // v4 and later carry a structured Status on the error channel, older versions the text.
            let payload = if protocol.starts_with("v4.") || protocol.starts_with("v5.") {
                kubelet_status(&stream.error)
            } else {
                stream.error.message.clone().into_bytes()
            };
            vec![on(ERROR_CHANNEL, &payload)]
        }
        StreamKind::PortForward { ports } => {
            // Each port's data and error channels open with its number (little-endian), then the
            // error channel says why nothing is forwarded.
            let mut out = Vec::new();
            for (i, port) in ports.iter().enumerate() {
                let Ok(data) = u8::try_from(2 * i) else { break };
                out.push(on(data, &port.to_le_bytes()));
                out.push(on(data + 1, &port.to_le_bytes()));
                out.push(on(data + 1, stream.error.message.as_bytes()));
            }
            out
        }
    }
}

/// A `Status` as the kubelet writes one on the error channel: `json.Marshal` of the status
/// without its type.
fn kubelet_status(error: &ApiError) -> Vec<u8> {
    let mut status: serde_json::Value =
        serde_json::from_slice(&error.to_status_json()).unwrap_or_default();
    if let Some(fields) = status.as_object_mut() {
        fields.remove("kind");
        fields.remove("apiVersion");
    }
    serde_json::to_vec(&status).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(
                http::HeaderName::from_bytes(k.as_bytes()).expect("name"),
                http::HeaderValue::from_str(v).expect("value"),
            );
        }
        h
    }

    const KEY: (&str, &str) = ("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ==");
    const V13: (&str, &str) = ("sec-websocket-version", "13");
    const ORIGIN: (&str, &str) = ("origin", "https://127.0.0.1:6443");

    #[rstest]
    #[case(&[("upgrade", "websocket"), ("connection", "Upgrade")], true)]
    #[case(&[("upgrade", "WebSocket"), ("connection", "keep-alive, upgrade")], true)]
    #[case(&[("upgrade", "websocket")], false)]
    #[case(&[("upgrade", "h2c"), ("connection", "Upgrade")], false)]
    #[case(&[("upgrade", "SPDY/3.1"), ("connection", "Upgrade")], false)]
    fn websocket_requests(#[case] pairs: &[(&str, &str)], #[case] expected: bool) {
        assert_eq!(requested(&headers(pairs)), expected);
    }

    #[rstest]
    #[case("GET", &[KEY, V13, ORIGIN], 101, "")]
    #[case("POST", &[KEY, V13, ORIGIN], 405, "bad method")]
    #[case("GET", &[V13, ORIGIN], 400, "mismatch challenge/response")]
    #[case("GET", &[KEY, ORIGIN], 400, "missing or bad WebSocket Version")]
    #[case("GET", &[KEY, ("sec-websocket-version", "8"), ORIGIN], 400, "missing or bad WebSocket Version")]
    #[case("GET", &[KEY, V13], 403, "")]
    #[case("GET", &[KEY, V13, ("origin", "null")], 403, "")]
    #[case("GET", &[KEY, V13, ORIGIN, ("sec-websocket-protocol", "a, b")], 400, "")]
    #[case("GET", &[KEY, V13, ORIGIN, ("sec-websocket-protocol", "a,")], 400, "")]
    fn watch_handshakes(
        #[case] method: &str,
        #[case] pairs: &[(&str, &str)],
        #[case] code: u16,
        #[case] body: &str,
    ) {
        let resp = match watch_handshake(method, &headers(pairs)) {
            Ok(hs) => hs.response(),
            Err(refused) => refused.response(),
        };
        assert_eq!(resp.status().as_u16(), code);
        if code == 101 {
            // RFC 6455's example key and answer.
            assert_eq!(
                resp.headers()["sec-websocket-accept"],
                "s3pPLMBiTxaQ9kYGzzhZRbK+xOo="
            );
            return;
        }
        let bytes = futures_util::FutureExt::now_or_never(http_body_util::BodyExt::collect(
            resp.into_body(),
        ))
        .and_then(Result::ok)
        .map(|c| c.to_bytes())
        .unwrap_or_default();
        assert_eq!(bytes, body.as_bytes());
    }

    #[test]
    fn one_watch_subprotocol_is_echoed() {
        let hs = watch_handshake(
            "GET",
            &headers(&[KEY, V13, ORIGIN, ("sec-websocket-protocol", "x")]),
        )
        .expect("accepted");
        assert_eq!(hs.response().headers()["sec-websocket-protocol"], "x");
    }

    #[rstest]
    #[case("v5.channel.k8s.io, v4.channel.k8s.io", Some("v5.channel.k8s.io"))]
    #[case("v4.channel.k8s.io, v5.channel.k8s.io", Some("v4.channel.k8s.io"))]
    #[case("", None)]
    #[case("x,", None)]
    fn channel_subprotocols(#[case] offered: &str, #[case] chosen: Option<&str>) {
        let mut pairs = vec![KEY, V13];
        if !offered.is_empty() {
            pairs.push(("sec-websocket-protocol", offered));
        }
        let supported = ["", "v4.channel.k8s.io", "v5.channel.k8s.io"];
        let hs = channel_handshake("GET", &headers(&pairs), &supported).expect("accepted");
        assert_eq!(hs.protocol(), chosen);
    }

    #[test]
    fn an_unsupported_channel_subprotocol_is_refused() {
        let pairs = [KEY, V13, ("sec-websocket-protocol", "x, y")];
        let refused = channel_handshake("GET", &headers(&pairs), &["a"]).expect_err("refused");
        assert_eq!(refused.response().status().as_u16(), 403);
        assert_eq!(refused.text, "", "x/net writes no body");
    }

    #[rstest]
    #[case("https://localhost:6443", true)]
    #[case("http://x", true)]
    #[case("/relative", true)]
    #[case("null", false)]
    #[case("", false)]
    #[case("1http://x", false)]
    fn origins(#[case] origin: &str, #[case] ok: bool) {
        assert_eq!(is_request_uri(origin), ok);
    }

    fn stream(kind: StreamKind) -> Stream {
        Stream {
            kind,
            error: ApiError::bad_request("no containers"),
        }
    }

    #[test]
    fn remote_command_errors_by_protocol_version() {
        let exec = stream(StreamKind::RemoteCommand);
        let v5 = stream_messages(&exec, "v5.channel.k8s.io");
        let Message::Binary(frame) = &v5[0] else {
            panic!("binary: {v5:?}")
        };
        assert_eq!(frame[0], 3);
        let status: serde_json::Value = serde_json::from_slice(&frame[1..]).expect("a Status");
        assert_eq!(
            status,
            serde_json::json!({"metadata": {}, "status": "Failure", "message": "no containers",
                "reason": "BadRequest", "code": 400})
        );
        assert_eq!(
            stream_messages(&exec, "channel.k8s.io"),
            vec![Message::binary(b"\x03no containers".to_vec())]
        );
        assert_eq!(
            stream_messages(&exec, "base64.channel.k8s.io"),
            vec![Message::text("3bm8gY29udGFpbmVycw==")]
        );
    }

    #[test]
    fn port_forward_opens_each_port_then_errors() {
        let forward = stream(StreamKind::PortForward {
            ports: vec![8080, 9090],
        });
        let messages = stream_messages(&forward, "v4.channel.k8s.io");
        let port = |channel: u8, p: u16| {
            let [lo, hi] = p.to_le_bytes();
            Message::binary(vec![channel, lo, hi])
        };
        let error = |channel: u8| {
            let mut frame = vec![channel];
            frame.extend_from_slice(b"no containers");
            Message::binary(frame)
        };
        assert_eq!(
            messages,
            vec![
                port(0, 8080),
                port(1, 8080),
                error(1),
                port(2, 9090),
                port(3, 9090),
                error(3)
            ]
        );
    }

    #[test]
    fn json_chunks_become_one_text_message_per_event() {
        let chunk = Bytes::from_static(b"{\"type\":\"ADDED\"}\n{\"type\":\"DELETED\"}\n");
        let messages = Framing::Text.messages(&chunk);
        assert_eq!(
            messages,
            vec![
                Message::text("{\"type\":\"ADDED\"}\n"),
                Message::text("{\"type\":\"DELETED\"}\n")
            ]
        );
    }

    #[test]
    fn protobuf_chunks_become_one_binary_message_per_frame() {
        let chunk = Bytes::from_static(&[0, 0, 0, 2, 1, 2, 0, 0, 0, 1, 9]);
        let messages = Framing::Binary.messages(&chunk);
        assert_eq!(
            messages,
            vec![
                Message::binary(Bytes::from_static(&[1, 2])),
                Message::binary(Bytes::from_static(&[9]))
            ]
        );
    }
}
