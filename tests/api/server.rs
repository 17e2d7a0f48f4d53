//! Starting, configuring and stopping servers.

use std::time::Duration;

use futures_util::StreamExt;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, ListParams, WatchParams};
use rstest::rstest;

use crate::harness::{server, server_with, TestServer};

#[rstest]
#[tokio::test]
async fn starts_with_the_initial_namespaces(#[future(awt)] server: TestServer) {
    let namespaces: Api<Namespace> = Api::all(server.client.clone());
    let names: Vec<String> = namespaces
        .list(&ListParams::default())
        .await
        .expect("list namespaces")
        .items
        .into_iter()
        .map(|n| n.metadata.name.unwrap_or_default())
        .collect();
    assert_eq!(
        names,
        ["default", "kube-node-lease", "kube-public", "kube-system"]
    );
    let default = namespaces.get("default").await.expect("default");
    assert_eq!(
        default.status.and_then(|s| s.phase).as_deref(),
        Some("Active")
    );
    assert_eq!(
        default.spec.and_then(|s| s.finalizers),
        Some(vec!["kubernetes".to_string()])
    );
    assert_eq!(
        default
            .metadata
            .labels
            .unwrap_or_default()
            .get("kubernetes.io/metadata.name")
            .map(String::as_str),
        Some("default")
    );
}

#[rstest]
#[tokio::test]
async fn version_and_health(#[future(awt)] server: TestServer) {
    let info = server.client.apiserver_version().await.expect("version");
    assert_eq!(info.major, "1");
    assert!(info.git_version.starts_with("v1."));
    for path in ["/healthz", "/livez", "/readyz", "/readyz/etcd"] {
        let resp = server
            .http
            .get(server.url(path))
            .send()
            .await
            .expect("health");
        assert_eq!(resp.status(), 200, "{path}");
        assert_eq!(resp.text().await.expect("body"), "ok");
    }
}

#[rstest]
#[tokio::test]
async fn kubeconfig_points_at_the_server(#[future(awt)] server: TestServer) {
    let text = std::fs::read_to_string(server.handle.kubeconfig_path()).expect("kubeconfig file");
    assert_eq!(text, server.handle.kubeconfig_yaml());
    let kubeconfig = kube::config::Kubeconfig::from_yaml(&text).expect("parses as a kubeconfig");
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .expect("usable kubeconfig");
    assert_eq!(
        config.cluster_url.to_string().trim_end_matches('/'),
        server.handle.url()
    );
    assert_eq!(config.default_namespace, "default");
    let client = kube::Client::try_from(config).expect("client");
    let namespaces: Api<Namespace> = Api::all(client);
    namespaces
        .get("kube-system")
        .await
        .expect("reachable through the kubeconfig");
}

#[tokio::test]
async fn builder_preloads_crds_and_objects() {
    let dir = env!("CARGO_MANIFEST_DIR");
    let handle = kubefake::Server::builder()
        .crds(format!("{dir}/fixtures/crds"))
        .objects(format!("{dir}/fixtures/objects/my-crontab.yaml"))
        .start()
        .await
        .expect("starts with fixtures");
    let client = handle.client().expect("client");
    let crontabs: Api<crate::harness::CronTab> = Api::namespaced(client, "default");
    let ct = crontabs
        .get("my-new-cron-object")
        .await
        .expect("preloaded object");
    assert_eq!(ct.spec.image, "my-awesome-cron-image");
    handle.shutdown().await;
}

/// The servers of a process share the built-in kinds' discovery and OpenAPI documents (the
/// first one renders them): each still names its own address, and a CRD served by one shows
/// in its documents only.
#[tokio::test]
async fn servers_share_built_in_documents_but_not_their_address_or_crds() {
    let dir = env!("CARGO_MANIFEST_DIR");
    let first = server_with(kubefake::Server::builder()).await;
    let second = server_with(kubefake::Server::builder()).await;
    let with_crd =
        server_with(kubefake::Server::builder().crds(format!("{dir}/fixtures/crds"))).await;
    for s in [&first, &second, &with_crd] {
        let (status, api) = s.get("/api").await;
        assert_eq!(status, 200);
        assert_eq!(
            api["serverAddressByClientCIDRs"][0]["serverAddress"],
            s.handle.addr().to_string()
        );
    }
    let groups = |apis: &Value| -> Vec<String> {
        let groups = apis["groups"].as_array().cloned().unwrap_or_default();
        groups
            .iter()
            .filter_map(|g| g["name"].as_str().map(str::to_string))
            .collect()
    };
    let (_, first_apis) = first.get("/apis").await;
    let (_, second_apis) = second.get("/apis").await;
    let (_, crd_apis) = with_crd.get("/apis").await;
    assert_eq!(first_apis, second_apis);
    assert!(!groups(&first_apis).contains(&"stable.example.com".to_string()));
    assert!(groups(&crd_apis).contains(&"stable.example.com".to_string()));
    let (status, _) = with_crd.get("/apis/stable.example.com/v1").await;
    assert_eq!(status, 200);
    let (status, _) = second.get("/apis/stable.example.com/v1").await;
    assert_eq!(status, 404);
    let (_, index) = second.get("/openapi/v3").await;
    assert!(index["paths"].get("apis/stable.example.com/v1").is_none());
    let (_, index) = with_crd.get("/openapi/v3").await;
    assert!(index["paths"].get("apis/stable.example.com/v1").is_some());
}

/// `kube_config()` trusts the server's CA alone, or nothing over plain HTTP (so that kube-rs
/// does not load the system's trust store for every client), and its clients work both ways.
#[tokio::test]
async fn kube_config_trusts_only_the_server_ca() {
    for builder in [
        kubefake::Server::builder(),
        kubefake::Server::builder().https(),
    ] {
        let handle = builder.start().await.expect("server starts");
        let config = handle.kube_config();
        let roots = config.root_cert.clone().expect("roots are set");
        let expected = if handle.ca_pem().is_some() { 1 } else { 0 };
        assert_eq!(roots.len(), expected, "{}", handle.url());
        let client = handle.client().expect("client");
        let namespaces: Api<Namespace> = Api::all(client);
        namespaces
            .get("kube-system")
            .await
            .expect("reachable through client()");
        let namespaces: Api<Namespace> =
            Api::all(kube::Client::try_from(config).expect("client from the config"));
        namespaces
            .get("default")
            .await
            .expect("reachable through kube_config()");
        handle.shutdown().await;
    }
}

#[tokio::test]
async fn builder_rejects_a_bad_manifest() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("bad.yaml");
    std::fs::write(
        &file,
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: Not_Valid\n",
    )
    .expect("write");
    let err = kubefake::Server::builder()
        .objects(&file)
        .start()
        .await
        .err()
        .expect("refused");
    assert!(err.to_string().contains("Not_Valid"), "{err}");
}

#[tokio::test]
async fn explicit_port_and_kubeconfig_path() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("nested/kubeconfig");
    let probe = std::net::TcpListener::bind("127.0.0.1:0").expect("probe");
    let port = probe.local_addr().expect("addr").port();
    drop(probe);
    let handle = kubefake::Server::builder()
        .port(port)
        .kubeconfig_path(&path)
        .start()
        .await
        .expect("starts");
    assert_eq!(handle.addr().port(), port);
    assert!(std::fs::read_to_string(&path)
        .expect("written")
        .contains(&format!(":{port}")));
    handle.shutdown().await;
    assert!(path.exists(), "a kubeconfig path the user chose is kept");
}

/// Graceful shutdown must not wait for open watches: it ends them.
#[rstest]
#[tokio::test]
async fn shutdown_ends_open_watches(#[future(awt)] server: TestServer) {
    let namespaces: Api<Namespace> = Api::all(server.client.clone());
    let mut stream = namespaces
        .watch(&WatchParams::default(), "0")
        .await
        .expect("watch")
        .boxed();
    // The initial state arrives first.
    let first = stream.next().await.expect("an event").expect("ok event");
    assert!(matches!(first, kube::api::WatchEvent::Added(_)));
    let TestServer { handle, .. } = server;
    tokio::time::timeout(Duration::from_secs(10), handle.shutdown())
        .await
        .expect("shutdown does not hang on the open watch");
    // The rest of the stream ends rather than hanging.
    let rest = tokio::time::timeout(Duration::from_secs(10), async {
        while let Some(_event) = stream.next().await {}
    })
    .await;
    assert!(rest.is_ok(), "watch stream ended");
}

#[tokio::test]
async fn dropping_the_handle_stops_the_server() {
    let handle = kubefake::Server::start().await.expect("starts");
    let url = format!("{}/readyz", handle.url());
    let http = reqwest::Client::new();
    assert_eq!(http.get(&url).send().await.expect("up").status(), 200);
    drop(handle);
    let mut stopped = false;
    for _ in 0..200 {
        if reqwest::Client::new().get(&url).send().await.is_err() {
            stopped = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(stopped, "the listener closes after drop");
}

// --- Limits: no client can hold the server (issue 12). Every wait is bounded by a timeout;
// no assertion is on how long something took.

use std::net::SocketAddr;

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Generous bound on anything that should happen "soon".
const SOON: Duration = Duration::from_secs(15);

/// Sends raw bytes and reads until the server closes (or resets after answering).
async fn exchange(addr: SocketAddr, request: &[u8]) -> String {
    let mut s = TcpStream::connect(addr).await.expect("connect");
    s.write_all(request).await.expect("send");
    read_until_closed(&mut s).await
}

async fn read_until_closed(s: &mut TcpStream) -> String {
    let mut out = Vec::new();
    let read = tokio::time::timeout(SOON, s.read_to_end(&mut out)).await;
    assert!(read.is_ok(), "the server closed the connection in time");
    String::from_utf8_lossy(&out).into_owned()
}

/// The status code and JSON body of a raw HTTP/1.1 answer.
fn parse_answer(answer: &str) -> (u16, Value) {
    let code = answer
        .split(' ')
        .nth(1)
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("an HTTP answer: {answer:?}"));
    let body = answer.split_once("\r\n\r\n").map_or("", |(_, b)| b);
    (code, serde_json::from_str(body).unwrap_or(Value::Null))
}

fn get_with_host(host: &str) -> Vec<u8> {
    format!("GET /version HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n").into_bytes()
}

#[tokio::test]
async fn shutdown_is_bounded_whatever_clients_do() {
    let handle = kubefake::Server::start().await.expect("starts");
    let addr = handle.addr();
    // Half-sent request headers.
    let mut half = TcpStream::connect(addr).await.expect("connect");
    half.write_all(b"GET /api/v1/namespaces HTTP/1.1\r\nHo")
        .await
        .expect("send");
    // A watcher that never reads, behind a pile of big events.
    let mut stalled = TcpStream::connect(addr).await.expect("connect");
    stalled
        .write_all(b"GET /api/v1/configmaps?watch=true HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .await
        .expect("send");
    // An idle connection, and a body that never finishes.
    let _idle = TcpStream::connect(addr).await.expect("connect");
    let mut slow = TcpStream::connect(addr).await.expect("connect");
    slow.write_all(
        b"POST /api/v1/namespaces HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"a\"",
    )
    .await
    .expect("send");
    let http = reqwest::Client::new();
    for i in 0..8 {
        let cm = serde_json::json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": format!("big-{i}")},
            "data": {"x": "y".repeat(500_000)},
        });
        let resp = http
            .post(format!(
                "{}/api/v1/namespaces/default/configmaps",
                handle.url()
            ))
            .json(&cm)
            .send()
            .await
            .expect("create");
        assert_eq!(resp.status(), 201);
    }
    tokio::time::timeout(SOON, handle.shutdown())
        .await
        .expect("shutdown finishes although clients hold connections");
    // The half-sent request's connection was dropped, not left open.
    read_until_closed(&mut half).await;
}

#[tokio::test]
async fn a_stalled_watcher_is_ended_while_another_keeps_receiving() {
    let handle = kubefake::Server::builder()
        .stall_timeout(Duration::from_millis(300))
        .start()
        .await
        .expect("starts");
    let store = &handle.state().expect("a kubefake server").store;
    let path = "/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=1";
    // The healthy watcher reads everything, as fast as it comes.
    let healthy = reqwest::Client::new()
        .get(format!("{}{path}", handle.url()))
        .send()
        .await
        .expect("watch");
    let base = store.watcher_count();
    let (seen_tx, mut seen_rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        let mut body = healthy.bytes_stream();
        let mut pending = Vec::new();
        while let Some(Ok(chunk)) = body.next().await {
            pending.extend_from_slice(&chunk);
            while let Some(end) = pending.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = pending.drain(..=end).collect();
                let event: Value = serde_json::from_slice(&line).unwrap_or(Value::Null);
                let name = event["object"]["metadata"]["name"].as_str().unwrap_or("");
                // The namespace's `kube-root-ca.crt` comes first.
                if name.starts_with("big-") {
                    let _ = seen_tx.send(name.to_string());
                }
            }
        }
    });
    // The stalled one sends its request, with a small receive buffer, and never reads.
    let socket = tokio::net::TcpSocket::new_v4().expect("socket");
    socket.set_recv_buffer_size(4096).expect("buffer size");
    let mut stalled = socket.connect(handle.addr()).await.expect("connect");
    stalled
        .write_all(format!("GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n").as_bytes())
        .await
        .expect("send");
    tokio::time::timeout(SOON, async {
        while store.watcher_count() <= base {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await
    .expect("the stalled watch started");
    let http = reqwest::Client::new();
    let count = 30;
    for i in 0..count {
        let cm = serde_json::json!({
            "apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": format!("big-{i}")},
            "data": {"x": "y".repeat(300_000)},
        });
        let resp = http
            .post(format!(
                "{}/api/v1/namespaces/default/configmaps",
                handle.url()
            ))
            .json(&cm)
            .send()
            .await
            .expect("create");
        assert_eq!(resp.status(), 201);
    }
    // The healthy watcher got every event, in order, although the other one stalled.
    tokio::time::timeout(SOON, async {
        for i in 0..count {
            let name = seen_rx.recv().await.expect("the healthy watch goes on");
            assert_eq!(name, format!("big-{i}"));
        }
    })
    .await
    .expect("the healthy watcher was not slowed");
    // The stalled watcher was ended: its subscription is gone.
    tokio::time::timeout(SOON, async {
        while store.watcher_count() > base {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the stalled watcher was ended");
    drop(stalled);
    handle.shutdown().await;
}

#[tokio::test]
async fn hosts_other_than_local_ones_are_refused() {
    let handle = kubefake::Server::start().await.expect("starts");
    let addr = handle.addr();
    let port = addr.port();
    for host in [
        format!("evil.example:{port}"),
        "evil.example".to_string(),
        format!("192.0.2.1:{port}"),
        format!("localhost.evil.example:{port}"),
    ] {
        let (code, status) = parse_answer(&exchange(addr, &get_with_host(&host)).await);
        assert_eq!(code, 403, "{host}");
        assert_eq!(status["kind"], "Status", "{host}");
        assert_eq!(status["reason"], "Forbidden");
        assert_eq!(status["code"], 403);
        let message = status["message"].as_str().unwrap_or("");
        assert!(message.contains("DNS rebinding"), "{message}");
        assert!(message.contains("--allow-any-host"), "{message}");
    }
    for host in [
        format!("localhost:{port}"),
        "LOCALHOST".to_string(),
        format!("127.0.0.1:{port}"),
        format!("127.1.2.3:{port}"),
        format!("[::1]:{port}"),
        format!("kubefake.localhost:{port}"),
    ] {
        let (code, _) = parse_answer(&exchange(addr, &get_with_host(&host)).await);
        assert_eq!(code, 200, "{host}");
    }
    handle.shutdown().await;

    let open = kubefake::Server::builder()
        .allow_any_host(true)
        .start()
        .await
        .expect("starts");
    let (code, _) = parse_answer(&exchange(open.addr(), &get_with_host("evil.example")).await);
    assert_eq!(code, 200, "allow_any_host serves any Host");
    open.shutdown().await;
}

#[cfg(unix)]
#[tokio::test]
async fn kubeconfig_files_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("kubeconfig");
    std::fs::write(&path, "old").expect("an existing, readable file");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).expect("chmod");
    let kept = kubefake::Server::builder()
        .kubeconfig_path(&path)
        .start()
        .await
        .expect("starts");
    let temp = kubefake::Server::start().await.expect("starts");
    for file in [kept.kubeconfig_path(), temp.kubeconfig_path()] {
        let mode = std::fs::metadata(file)
            .expect("written")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600, "{}", file.display());
    }
    kept.shutdown().await;
    temp.shutdown().await;
}

/// A temporary kubeconfig is written by the first `kubeconfig_path()` (most tests never ask for
/// it), keeps its path, and goes with the handle.
#[tokio::test]
async fn a_temporary_kubeconfig_is_written_when_asked_for_and_removed_with_the_server() {
    let server = kubefake::Server::start().await.expect("starts");
    let path = server.kubeconfig_path().to_path_buf();
    let text = std::fs::read_to_string(&path).expect("written by the first call");
    assert_eq!(text, server.kubeconfig_yaml());
    assert_eq!(
        server.kubeconfig_path(),
        path,
        "the same file on every call"
    );
    server.shutdown().await;
    assert!(!path.exists(), "{} removed at shutdown", path.display());

    let dropped = kubefake::Server::start().await.expect("starts");
    let path = dropped.kubeconfig_path().to_path_buf();
    assert!(path.exists());
    drop(dropped);
    assert!(!path.exists(), "{} removed with the handle", path.display());
}

/// `kubefake serve` exits with an error, rather than print a path that names no file, when it
/// cannot write its kubeconfig (here: a temporary directory that does not exist).
#[tokio::test]
async fn serve_fails_when_it_cannot_write_its_kubeconfig() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_kubefake"))
        .args(["serve", "--port", "0"])
        .env("TMPDIR", dir.path().join("missing"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("runs kubefake serve");
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    let status = loop {
        if let Some(status) = child.try_wait().expect("waits") {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("kubefake serve still runs without a kubeconfig");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(!status.success(), "{status}");
    let mut out = String::new();
    if let Some(mut stdout) = child.stdout.take() {
        std::io::Read::read_to_string(&mut stdout, &mut out).expect("stdout");
    }
    assert!(!out.contains("KUBECONFIG="), "{out}");
}

#[rstest]
#[tokio::test]
async fn over_long_urls_and_headers_get_a_status(#[future(awt)] server: TestServer) {
    // Raw: HTTP client libraries refuse to send such a URI at all.
    let long = format!(
        "GET /api/v1/namespaces/{} HTTP/1.1\r\nHost: localhost\r\n\r\n",
        "a".repeat(70_000)
    );
    let (code, status) = parse_answer(&exchange(server.handle.addr(), long.as_bytes()).await);
    assert_eq!(code, 414);
    assert_eq!(status["kind"], "Status", "{status}");
    assert_eq!(status["code"], 414);
    assert!(status["message"].as_str().unwrap_or("").contains("URI"));

    let huge = format!(
        "GET /version HTTP/1.1\r\nHost: localhost\r\nX-Big: {}\r\n\r\n",
        "b".repeat(600_000)
    );
    let (code, status) = parse_answer(&exchange(server.handle.addr(), huge.as_bytes()).await);
    assert_eq!(code, 431);
    assert_eq!(status["kind"], "Status", "{status}");
    assert_eq!(status["code"], 431);

    // The server goes on serving.
    let (code, _) = server.get("/version").await;
    assert_eq!(code, 200);
}

#[tokio::test]
async fn slow_headers_and_bodies_time_out() {
    let handle = kubefake::Server::builder()
        .read_timeout(Duration::from_millis(300))
        .start()
        .await
        .expect("starts");
    let addr = handle.addr();
    // Headers that never finish: the connection is closed.
    let mut half = TcpStream::connect(addr).await.expect("connect");
    half.write_all(b"GET /version HTTP/1.1\r\nHo")
        .await
        .expect("send");
    read_until_closed(&mut half).await;
    // Nothing at all: closed too.
    let mut silent = TcpStream::connect(addr).await.expect("connect");
    read_until_closed(&mut silent).await;
    // A body that never finishes: a Status.
    let answer = exchange(
        addr,
        b"POST /api/v1/namespaces HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"a\"",
    )
    .await;
    let (code, status) = parse_answer(&answer);
    assert_eq!(code, 408, "{answer}");
    assert_eq!(status["kind"], "Status");
    handle.shutdown().await;
}

#[tokio::test]
async fn connections_past_the_limit_are_refused_with_a_status() {
    let handle = kubefake::Server::builder()
        .max_connections(2)
        .start()
        .await
        .expect("starts");
    let addr = handle.addr();
    // Two kept-alive connections, each known to be accepted: they answered a request.
    let mut held = Vec::new();
    for _ in 0..2 {
        let mut s = TcpStream::connect(addr).await.expect("connect");
        s.write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
            .await
            .expect("send");
        let mut buf = [0u8; 1024];
        let n = tokio::time::timeout(SOON, s.read(&mut buf))
            .await
            .expect("answered")
            .expect("read");
        assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"));
        held.push(s);
    }
    let mut third = TcpStream::connect(addr).await.expect("connect");
    let answer = read_until_closed(&mut third).await;
    let (code, status) = parse_answer(&answer);
    assert_eq!(code, 503, "{answer}");
    assert_eq!(status["reason"], "ServiceUnavailable");
    assert!(status["message"]
        .as_str()
        .unwrap_or("")
        .contains("--max-connections"));
    // Once one closes, new connections are served again.
    drop(held.pop());
    tokio::time::timeout(SOON, async {
        loop {
            let answer = exchange(addr, &get_with_host("localhost")).await;
            if answer.starts_with("HTTP/1.1 200") {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("served again below the limit");
    handle.shutdown().await;
}

/// An HTTP/2 (h2c) connection to `addr`, its driver spawned; the handle ends when the
/// connection does.
async fn h2_connection(
    addr: std::net::SocketAddr,
) -> (
    hyper::client::conn::http2::SendRequest<http_body_util::Empty<bytes::Bytes>>,
    tokio::task::JoinHandle<()>,
) {
    let tcp = TcpStream::connect(addr).await.expect("connect");
    let (sender, conn) =
        hyper::client::conn::http2::Builder::new(hyper_util::rt::TokioExecutor::new())
            .timer(hyper_util::rt::TokioTimer::new())
            .handshake(hyper_util::rt::TokioIo::new(tcp))
            .await
            .expect("h2 handshake");
    (
        sender,
        tokio::spawn(async move { conn.await.unwrap_or(()) }),
    )
}

fn h2_get(path: &str) -> hyper::Request<http_body_util::Empty<bytes::Bytes>> {
    hyper::Request::get(format!("http://localhost{path}"))
        .body(http_body_util::Empty::new())
        .expect("request")
}

/// The apiserver closes idle HTTP/2 connections (Go's `IdleTimeout`) as it closes idle
/// HTTP/1.1 keep-alives; kubefake uses its idle timeout for both. A connection whose watch is
/// open is not idle.
#[tokio::test]
async fn idle_http2_connections_are_closed_but_not_while_watching() {
    let handle = kubefake::Server::builder()
        .idle_timeout(Duration::from_millis(300))
        .start()
        .await
        .expect("starts");
    let (mut idle, idle_done) = h2_connection(handle.addr()).await;
    let resp = idle
        .send_request(h2_get("/version"))
        .await
        .expect("answered");
    assert_eq!(resp.status(), 200);
    drop(idle);
    tokio::time::timeout(SOON, idle_done)
        .await
        .expect("the idle connection is closed")
        .expect("driver");

    let (mut watching, watch_done) = h2_connection(handle.addr()).await;
    let resp = watching
        .send_request(h2_get("/api/v1/namespaces?watch=1&resourceVersion=0"))
        .await
        .expect("answered");
    assert_eq!(resp.status(), 200);
    let mut body = resp.into_body();
    tokio::time::sleep(Duration::from_millis(900)).await;
    assert!(!watch_done.is_finished(), "a watching connection is busy");
    // The watch still delivers (the initial ADDED events at least).
    use http_body_util::BodyExt;
    let frame = tokio::time::timeout(SOON, body.frame())
        .await
        .expect("an event");
    assert!(frame.is_some_and(|f| f.is_ok()));
    handle.shutdown().await;
}

/// One GET on a kept-alive connection, answered.
async fn keep_alive_get(s: &mut TcpStream) {
    s.write_all(b"GET /version HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .await
        .expect("send");
    let mut buf = [0u8; 4096];
    let n = tokio::time::timeout(SOON, s.read(&mut buf))
        .await
        .expect("answered")
        .expect("read");
    let answer = String::from_utf8_lossy(&buf[..n]);
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
}

/// An idle keep-alive connection outlives the read timeout (clients pool them for 90 s, as
/// long as the apiserver keeps them) and is closed at the idle timeout; a request's head that
/// has begun on it must still come within the read timeout.
#[tokio::test]
async fn keep_alives_last_the_idle_timeout_and_heads_the_read_timeout() {
    let handle = kubefake::Server::builder()
        .read_timeout(Duration::from_millis(200))
        .idle_timeout(Duration::from_millis(1500))
        .start()
        .await
        .expect("starts");
    let mut conn = TcpStream::connect(handle.addr()).await.expect("connect");
    keep_alive_get(&mut conn).await;
    tokio::time::sleep(Duration::from_millis(600)).await;
    keep_alive_get(&mut conn).await;
    let idle_from = std::time::Instant::now();
    read_until_closed(&mut conn).await;
    assert!(
        idle_from.elapsed() >= Duration::from_millis(1200),
        "closed after {:?}, before the idle timeout",
        idle_from.elapsed()
    );

    let mut slow = TcpStream::connect(handle.addr()).await.expect("connect");
    keep_alive_get(&mut slow).await;
    slow.write_all(b"GET /version HTTP/1.1\r\nHo")
        .await
        .expect("send");
    let begun = std::time::Instant::now();
    read_until_closed(&mut slow).await;
    assert!(
        begun.elapsed() < Duration::from_millis(1200),
        "a stalled head is closed at the read timeout, not the idle one ({:?})",
        begun.elapsed()
    );
    handle.shutdown().await;
}

/// Two `Host` headers: Go's request reader refuses them with a plain-text 400 and closes the
/// connection, before any handler.
#[tokio::test]
async fn two_host_headers_are_a_bad_request() {
    let handle = kubefake::Server::builder().start().await.expect("starts");
    let answer = exchange(
        handle.addr(),
        b"POST /api/v1/namespaces HTTP/1.1\r\nHost: localhost\r\nHost: evil.example\r\nContent-Type: application/json\r\nContent-Length: 47\r\n\r\n{\"metadata\":{\"name\":\"never-created-here-xx\"}}",
    )
    .await;
    assert!(
        answer.starts_with("HTTP/1.1 400 Bad Request\r\n"),
        "{answer}"
    );
    assert!(
        answer
            .to_ascii_lowercase()
            .contains("content-type: text/plain; charset=utf-8"),
        "{answer}"
    );
    assert!(answer.ends_with("\r\n\r\n400 Bad Request"), "{answer}");
    let client = kube::Client::try_from(handle.kube_config()).expect("client");
    let namespaces: kube::Api<k8s_openapi::api::core::v1::Namespace> = kube::Api::all(client);
    assert!(namespaces
        .get_opt("never-created-here-xx")
        .await
        .expect("get")
        .is_none());
    handle.shutdown().await;
}

/// An idle HTTP/2 connection still receives frames (a client's pings): they begin no request
/// head, so it lasts the idle timeout, not the read timeout.
#[tokio::test]
async fn pinged_http2_connections_last_the_idle_timeout() {
    let handle = kubefake::Server::builder()
        .read_timeout(Duration::from_millis(200))
        .idle_timeout(Duration::from_millis(1500))
        .start()
        .await
        .expect("starts");
    let tcp = TcpStream::connect(handle.addr()).await.expect("connect");
    let (mut sender, conn) =
        hyper::client::conn::http2::Builder::new(hyper_util::rt::TokioExecutor::new())
            .timer(hyper_util::rt::TokioTimer::new())
            .keep_alive_interval(Duration::from_millis(400))
            .keep_alive_while_idle(true)
            .handshake(hyper_util::rt::TokioIo::new(tcp))
            .await
            .expect("h2 handshake");
    let done = tokio::spawn(async move { conn.await.unwrap_or(()) });
    let resp = sender
        .send_request(h2_get("/version"))
        .await
        .expect("answered");
    assert_eq!(resp.status(), 200);
    let idle_from = std::time::Instant::now();
    tokio::time::timeout(SOON, done)
        .await
        .expect("closed at the idle timeout")
        .expect("driver");
    assert!(
        idle_from.elapsed() >= Duration::from_millis(1200),
        "closed after {:?}",
        idle_from.elapsed()
    );
    handle.shutdown().await;
}
