//! WebSocket, as a client that sends `Upgrade: websocket` sees it (fabric8's default watch):
//! the apiserver's watch handshake (x/net/websocket: `Origin` required, one subprotocol at most),
//! one text message per JSON event (the event's line, newline included), one binary message per
//! protobuf event, a normal close when the watch ends, and the watcher gone when the client
//! closes. The streaming subresources negotiate their channel protocol and then end with the
//! error on the error channel.

use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use rstest::rstest;
use serde_json::{json, Value};
use tokio::net::TcpStream;
use tokio_tungstenite::tungstenite::client::IntoClientRequest;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{self, Message};
use tokio_tungstenite::WebSocketStream;

use crate::harness::{server, TestServer};

const SOON: Duration = Duration::from_secs(15);

type Ws = WebSocketStream<TcpStream>;

/// Opens a WebSocket to `path` with these extra headers; the handshake's error otherwise.
async fn open(
    server: &TestServer,
    path: &str,
    headers: &[(&str, &str)],
) -> Result<(Ws, tungstenite::handshake::client::Response), tungstenite::Error> {
    let url = server.handle.url().replacen("http://", "ws://", 1);
    let mut request = format!("{url}{path}")
        .into_client_request()
        .expect("a request");
    for (k, v) in headers {
        request.headers_mut().insert(
            tungstenite::http::HeaderName::from_bytes(k.as_bytes()).expect("name"),
            v.parse().expect("value"),
        );
    }
    let addr = server
        .handle
        .url()
        .trim_start_matches("http://")
        .to_string();
    let tcp = TcpStream::connect(addr).await.expect("connect");
    tokio_tungstenite::client_async(request, tcp).await
}

/// The status and body of a refused handshake.
fn refusal(
    result: Result<(Ws, tungstenite::handshake::client::Response), tungstenite::Error>,
) -> (u16, Vec<u8>) {
    match result {
        Err(tungstenite::Error::Http(resp)) => (
            resp.status().as_u16(),
            resp.body().clone().unwrap_or_default(),
        ),
        Err(other) => panic!("expected a refused handshake, got {other:?}"),
        Ok(_) => panic!("expected a refused handshake, got an upgrade"),
    }
}

fn origin(server: &TestServer) -> String {
    server.handle.url().to_string()
}

/// The next message, within a generous bound.
async fn next(ws: &mut Ws) -> Option<Message> {
    tokio::time::timeout(SOON, ws.next())
        .await
        .expect("a message in time")
        .map(|m| m.expect("a message"))
}

fn event(message: &Message) -> Value {
    match message {
        Message::Text(text) => {
            assert!(
                text.ends_with('\n'),
                "one event per message, as a line: {text:?}"
            );
            serde_json::from_str(text.as_str()).expect("a JSON event")
        }
        other => panic!("expected a text message, got {other:?}"),
    }
}

async fn create_configmap(server: &TestServer, name: &str) {
    let (status, body) = server
        .post(
            "/api/v1/namespaces/default/configmaps",
            &json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}),
        )
        .await;
    assert_eq!(status, 201, "{body}");
}

#[rstest]
#[tokio::test]
async fn a_websocket_watch_sends_one_text_message_per_event(#[future(awt)] server: TestServer) {
    create_configmap(&server, "before").await;
    let from = server.rv();
    let path = format!(
        "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion={from}&timeoutSeconds=2"
    );
    let (mut ws, resp) = open(&server, &path, &[("origin", &origin(&server))])
        .await
        .expect("the upgrade is accepted");
    assert_eq!(resp.status().as_u16(), 101);
    assert!(resp.headers().get("sec-websocket-protocol").is_none());
    create_configmap(&server, "one").await;
    create_configmap(&server, "two").await;
    for name in ["one", "two"] {
        let e = event(&next(&mut ws).await.expect("an event"));
        assert_eq!(e["type"], "ADDED");
        assert_eq!(e["object"]["metadata"]["name"], name);
        assert_eq!(e["object"]["kind"], "ConfigMap");
    }
    // The client's own messages are read and ignored.
    ws.send(Message::text("ignored")).await.expect("sent");
    // timeoutSeconds ends the watch: the server closes normally.
    match next(&mut ws).await {
        Some(Message::Close(Some(frame))) => assert_eq!(frame.code, CloseCode::Normal),
        other => panic!("expected a normal close, got {other:?}"),
    }
}

#[rstest]
#[tokio::test]
async fn a_websocket_watch_replays_and_serves_protobuf_as_binary(
    #[future(awt)] server: TestServer,
) {
    create_configmap(&server, "first").await;
    let (mut ws, _) = open(
        &server,
        "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=0",
        &[
            ("origin", &origin(&server)),
            ("accept", "application/vnd.kubernetes.protobuf"),
        ],
    )
    .await
    .expect("upgraded");
    match next(&mut ws).await {
        // The WatchEvent itself, without the stream's length prefix: field 1 (type).
        Some(Message::Binary(bytes)) => {
            assert_eq!(bytes[0], 0x0a, "{bytes:?}");
            assert_eq!(&bytes[2..7], b"ADDED");
            let object = String::from_utf8_lossy(&bytes);
            assert!(object.contains("first"), "{object}");
        }
        other => panic!("expected a binary message, got {other:?}"),
    }
}

#[rstest]
#[tokio::test]
async fn closing_a_websocket_watch_ends_the_watcher(#[future(awt)] server: TestServer) {
    let store = &server.handle.state().expect("a kubefake server").store;
    let base = store.watcher_count();
    let (mut ws, _) = open(
        &server,
        "/api/v1/namespaces/default/configmaps?watch=true",
        &[("origin", &origin(&server))],
    )
    .await
    .expect("upgraded");
    let deadline = tokio::time::Instant::now() + SOON;
    while store.watcher_count() == base && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    assert_eq!(store.watcher_count(), base + 1);
    ws.close(None).await.expect("closed");
    // The server answers the close (after any event already sent), as x/net's Close does.
    loop {
        match tokio::time::timeout(SOON, ws.next())
            .await
            .expect("an answer in time")
        {
            Some(Ok(Message::Text(_))) => continue,
            Some(Ok(Message::Close(_))) => break,
            other => panic!("expected the close reply, got {other:?}"),
        }
    }
    while store.watcher_count() > base && tokio::time::Instant::now() < deadline {
        // The watcher notices when it next sends: an event for every watcher.
        create_configmap(&server, &format!("tick-{}", server.rv())).await;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(store.watcher_count(), base);
}

/// The refusals of x/net/websocket's handshake, with its bodies, and nothing watched.
#[rstest]
#[case::no_origin(&[], 403, "")]
#[case::null_origin(&[("origin", "null")], 403, "")]
#[case::two_subprotocols(&[("origin", "http://localhost"), ("sec-websocket-protocol", "a, b")], 400, "")]
#[case::old_version(&[("origin", "http://localhost"), ("sec-websocket-version", "8")], 400, "missing or bad WebSocket Version")]
#[tokio::test]
async fn websocket_watch_handshakes_are_refused_as_the_apiserver_refuses_them(
    #[future(awt)] server: TestServer,
    #[case] headers: &[(&str, &str)],
    #[case] code: u16,
    #[case] body: &str,
) {
    let watchers = server
        .handle
        .state()
        .expect("a kubefake server")
        .store
        .watcher_count();
    let refused = open(
        &server,
        "/api/v1/namespaces/default/configmaps?watch=true",
        headers,
    )
    .await;
    let (status, text) = refusal(refused);
    assert_eq!(status, code);
    assert_eq!(String::from_utf8_lossy(&text), body);
    let now = server
        .handle
        .state()
        .expect("a kubefake server")
        .store
        .watcher_count();
    assert_eq!(now, watchers);
}

/// Option errors come before the handshake, as `Status` bodies.
#[rstest]
#[tokio::test]
async fn a_bad_websocket_watch_request_is_a_status(#[future(awt)] server: TestServer) {
    let refused = open(
        &server,
        "/api/v1/namespaces/default/configmaps?watch=true&fieldSelector=spec.x%3Dy",
        &[("origin", &origin(&server))],
    )
    .await;
    let (code, body) = refusal(refused);
    assert_eq!(code, 400);
    let status: Value = serde_json::from_slice(&body).expect("JSON");
    assert_eq!(status["kind"], "Status");
}

async fn create_pod(server: &TestServer, name: &str, node: Option<&str>) {
    let mut pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]}});
    if let Some(node) = node {
        pod["spec"]["nodeName"] = json!(node);
    }
    let (status, body) = server.post("/api/v1/namespaces/default/pods", &pod).await;
    assert_eq!(status, 201, "{body}");
}

/// exec over WebSocket: the kubelet's handshake (the client's first supported subprotocol),
/// then the error as a `Status` on the error channel (3), then a normal close.
#[rstest]
#[tokio::test]
async fn exec_over_websocket_ends_with_the_error_on_its_channel(#[future(awt)] server: TestServer) {
    create_pod(&server, "p", Some("node-1")).await;
    let (mut ws, resp) = open(
        &server,
        "/api/v1/namespaces/default/pods/p/exec?command=true&stdout=true",
        &[(
            "sec-websocket-protocol",
            "v5.channel.k8s.io, v4.channel.k8s.io",
        )],
    )
    .await
    .expect("upgraded");
    assert_eq!(
        resp.headers()["sec-websocket-protocol"],
        "v5.channel.k8s.io"
    );
    match next(&mut ws).await {
        Some(Message::Binary(frame)) => {
            assert_eq!(frame[0], 3, "the error channel");
            let status: Value = serde_json::from_slice(&frame[1..]).expect("a Status");
            assert_eq!(status["status"], "Failure");
            assert_eq!(status["reason"], "BadRequest");
            assert_eq!(
                status["message"],
                "kubefake runs no containers: container \"c\" of pod \"p\" cannot be reached"
            );
        }
        other => panic!("expected the error channel, got {other:?}"),
    }
    match next(&mut ws).await {
        Some(Message::Close(Some(frame))) => assert_eq!(frame.code, CloseCode::Normal),
        other => panic!("expected a normal close, got {other:?}"),
    }
}

/// The apiserver's own refusals come before any upgrade, as `Status` answers.
#[rstest]
#[tokio::test]
async fn exec_on_a_pod_without_a_node_is_refused_before_the_upgrade(
    #[future(awt)] server: TestServer,
) {
    create_pod(&server, "pending", None).await;
    let refused = open(
        &server,
        "/api/v1/namespaces/default/pods/pending/exec?command=true&stdout=true",
        &[("sec-websocket-protocol", "v4.channel.k8s.io")],
    )
    .await;
    let (code, body) = refusal(refused);
    assert_eq!(code, 400);
    let status: Value = serde_json::from_slice(&body).expect("JSON");
    assert_eq!(
        status["message"],
        "pod pending does not have a host assigned"
    );
}

/// Port-forward over WebSocket: each port's channels open with its number, then the error.
#[rstest]
#[tokio::test]
async fn port_forward_over_websocket_opens_its_channels_then_ends(
    #[future(awt)] server: TestServer,
) {
    create_pod(&server, "web", Some("node-1")).await;
    let (mut ws, resp) = open(
        &server,
        "/api/v1/namespaces/default/pods/web/portforward?ports=8080",
        &[("sec-websocket-protocol", "v4.base64.channel.k8s.io")],
    )
    .await
    .expect("upgraded");
    assert_eq!(
        resp.headers()["sec-websocket-protocol"],
        "v4.base64.channel.k8s.io"
    );
    // 8080 little-endian is [0x90, 0x1f]: "kB8=" in base64.
    assert_eq!(next(&mut ws).await, Some(Message::text("0kB8=")));
    assert_eq!(next(&mut ws).await, Some(Message::text("1kB8=")));
    match next(&mut ws).await {
        Some(Message::Text(text)) => assert!(text.starts_with('1'), "{text}"),
        other => panic!("expected the error channel, got {other:?}"),
    }
    assert!(matches!(next(&mut ws).await, Some(Message::Close(_))));
}

/// A WebSocket exec (a GET) needs `create` on `pods/exec` too, as a POST does
/// (`AuthorizePodWebsocketUpgradeCreatePermission`): `get` alone is a 403 before any upgrade.
#[tokio::test]
async fn websocket_exec_needs_create_permission() {
    let server = crate::harness::rbac_server_with_user("eve", &[], "eve-token").await;
    create_pod(&server, "p", Some("node-1")).await;
    let role = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
        "metadata": {"name": "exec-get"},
        "rules": [{"apiGroups": [""], "resources": ["pods", "pods/exec"], "verbs": ["get"]}]});
    let binding = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {"name": "eve"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "exec-get"},
        "subjects": [{"kind": "User", "name": "eve"}]});
    let rbac = "/apis/rbac.authorization.k8s.io/v1/namespaces/default";
    assert_eq!(server.post(&format!("{rbac}/roles"), &role).await.0, 201);
    assert_eq!(
        server
            .post(&format!("{rbac}/rolebindings"), &binding)
            .await
            .0,
        201
    );
    let refused = open(
        &server,
        "/api/v1/namespaces/default/pods/p/exec?command=true&stdout=true",
        &[
            ("sec-websocket-protocol", "v5.channel.k8s.io"),
            ("authorization", "Bearer eve-token"),
        ],
    )
    .await;
    let (code, body) = refusal(refused);
    assert_eq!(code, 403);
    let status: Value = serde_json::from_slice(&body).expect("JSON");
    let message = status["message"].as_str().unwrap_or_default();
    assert!(message.starts_with("pods \"p\" is forbidden"), "{status}");
}

/// A connection upgraded to a WebSocket still counts against the connection limit until its
/// session ends, as it holds a socket.
#[tokio::test]
async fn websocket_connections_count_against_the_limit() {
    let server = crate::harness::server_with(kubefake::Server::builder().max_connections(2)).await;
    let origin = origin(&server);
    let path = "/api/v1/namespaces/default/configmaps?watch=true";
    let first = open(&server, path, &[("origin", &origin)])
        .await
        .expect("upgraded");
    let second = open(&server, path, &[("origin", &origin)])
        .await
        .expect("upgraded");
    let third = open(&server, path, &[("origin", &origin)]).await;
    assert!(third.is_err(), "a third connection is refused");
    drop((first, second));
    // Once the sessions end, connections are served again.
    let deadline = tokio::time::Instant::now() + SOON;
    loop {
        if open(&server, path, &[("origin", &origin)]).await.is_ok() {
            break;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "served again in time"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
