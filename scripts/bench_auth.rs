//! Authentication and authorization benchmark: what HTTPS and RBAC cost a request. One
//! HTTP/1.1 keep-alive client sends `REQUESTS` GETs of one ConfigMap, then `REQUESTS` ConfigMap
//! creates, per row: plain HTTP with AlwaysAllow (the library default), HTTPS with AlwaysAllow,
//! HTTPS with RBAC as the admin (system:masters: decided before any role is read), as a user
//! whose RoleBinding allows it (RBAC reads the bootstrap policy's ~60 ClusterRoleBindings and the
//! namespace's RoleBindings on every request), and as a service account token (an ES256
//! signature checked on every request). Then connection setup: a new connection per request,
//! plain and TLS. Server and client share one tokio runtime with 2 workers, so the figures are
//! lower bounds of what the server alone could do. Each row gets a fresh server.
//!
//! Run with `cargo bench --bench auth`.

use std::time::{Duration, Instant};

use kubefake::{AuthorizationMode, UserInfo};
use serde_json::{json, Value};

/// Requests per measurement.
const REQUESTS: usize = 2_000;

/// Connections per connection-setup measurement.
const CONNECTIONS: usize = 300;

#[derive(Clone, Copy, PartialEq)]
enum Who {
    Admin,
    RoleBound,
    ServiceAccount,
}

struct Row {
    label: &'static str,
    https: bool,
    mode: AuthorizationMode,
    who: Who,
}

fn client(server: &kubefake::ServerHandle, bearer: &str, keep_alive: bool) -> reqwest::Client {
    let mut headers = reqwest::header::HeaderMap::new();
    let value = format!("Bearer {bearer}").parse().expect("header");
    headers.insert(reqwest::header::AUTHORIZATION, value);
    let mut b = reqwest::Client::builder()
        .default_headers(headers)
        .no_proxy();
    if !keep_alive {
        b = b.pool_max_idle_per_host(0);
    }
    if let Some(pem) = server.ca_pem() {
        let cert = reqwest::Certificate::from_pem(pem.as_bytes()).expect("CA");
        b = b.add_root_certificate(cert).tls_built_in_root_certs(false);
    }
    b.build().expect("client")
}

async fn post(http: &reqwest::Client, url: &str, body: Value) -> Value {
    let resp = http.post(url).json(&body).send().await.expect("sent");
    assert_eq!(resp.status(), 201, "{url}");
    resp.json().await.expect("json")
}

/// The bearer token the row's requests carry, after granting what it needs.
async fn credential(server: &kubefake::ServerHandle, admin: &reqwest::Client, who: Who) -> String {
    let base = server.url();
    let ns = format!("{base}/api/v1/namespaces/default");
    let rbac = format!("{base}/apis/rbac.authorization.k8s.io/v1/namespaces/default");
    let role = json!({"metadata": {"name": "cm"}, "rules": [{"apiGroups": [""],
        "resources": ["configmaps"], "verbs": ["get", "create"]}]});
    post(admin, &format!("{rbac}/roles"), role).await;
    let subject = match who {
        Who::ServiceAccount => {
            json!({"kind": "ServiceAccount", "name": "bench", "namespace": "default"})
        }
        _ => json!({"kind": "User", "name": "bench"}),
    };
    let binding = json!({"metadata": {"name": "cm"}, "subjects": [subject],
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm"}});
    post(admin, &format!("{rbac}/rolebindings"), binding).await;
    match who {
        Who::Admin => server.admin_token().to_string(),
        Who::RoleBound => "bench-token".to_string(),
        Who::ServiceAccount => {
            post(
                admin,
                &format!("{ns}/serviceaccounts"),
                json!({"metadata": {"name": "bench"}}),
            )
            .await;
            let req = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}});
            let out = post(admin, &format!("{ns}/serviceaccounts/bench/token"), req).await;
            out["status"]["token"].as_str().expect("token").to_string()
        }
    }
}

async fn start(row: &Row) -> kubefake::ServerHandle {
    let bench_user = UserInfo {
        name: "bench".into(),
        ..UserInfo::default()
    };
    let mut builder = kubefake::Server::builder()
        .authorization_mode(row.mode)
        .token("bench-token", bench_user);
    if row.https {
        builder = builder.https();
    }
    builder.start().await.expect("server starts")
}

/// GETs/s and creates/s of one row.
async fn measure(row: &Row) -> (f64, f64) {
    let server = start(row).await;
    let admin = client(&server, server.admin_token(), true);
    let token = credential(&server, &admin, row.who).await;
    let http = client(&server, &token, true);
    let url = format!("{}/api/v1/namespaces/default/configmaps", server.url());
    post(&http, &url, json!({"metadata": {"name": "target"}})).await;
    let target = format!("{url}/target");
    let start = Instant::now();
    for _ in 0..REQUESTS {
        let resp = http.get(&target).send().await.expect("sent");
        assert_eq!(resp.status(), 200);
        let _ = resp.bytes().await;
    }
    let gets = REQUESTS as f64 / start.elapsed().as_secs_f64();
    let start = Instant::now();
    for i in 0..REQUESTS {
        post(
            &http,
            &url,
            json!({"metadata": {"name": format!("cm-{i}")}, "data": {"k": "v"}}),
        )
        .await;
    }
    let creates = REQUESTS as f64 / start.elapsed().as_secs_f64();
    (gets, creates)
}

/// Mean time of a GET /readyz on a new connection.
async fn connection_setup(https: bool) -> Duration {
    let row = Row {
        label: "",
        https,
        mode: AuthorizationMode::AlwaysAllow,
        who: Who::Admin,
    };
    let server = start(&row).await;
    let http = client(&server, server.admin_token(), false);
    let url = format!("{}/readyz", server.url());
    let start = Instant::now();
    for _ in 0..CONNECTIONS {
        let resp = http.get(&url).send().await.expect("sent");
        assert_eq!(resp.status(), 200);
        let _ = resp.bytes().await;
    }
    start.elapsed() / CONNECTIONS as u32
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let rows = [
        Row {
            label: "HTTP, AlwaysAllow (library default)",
            https: false,
            mode: AuthorizationMode::AlwaysAllow,
            who: Who::Admin,
        },
        Row {
            label: "HTTPS, AlwaysAllow",
            https: true,
            mode: AuthorizationMode::AlwaysAllow,
            who: Who::Admin,
        },
        Row {
            label: "HTTPS, RBAC, admin (system:masters)",
            https: true,
            mode: AuthorizationMode::Rbac,
            who: Who::Admin,
        },
        Row {
            label: "HTTPS, RBAC, user allowed by a RoleBinding",
            https: true,
            mode: AuthorizationMode::Rbac,
            who: Who::RoleBound,
        },
        Row {
            label: "HTTPS, RBAC, service account token",
            https: true,
            mode: AuthorizationMode::Rbac,
            who: Who::ServiceAccount,
        },
    ];
    println!("## ConfigMap GET and create, 1 keep-alive client, {REQUESTS} each per row\n");
    println!("| transport, authorization, credential | GET/s | creates/s |");
    println!("|---|---:|---:|");
    for row in &rows {
        let (gets, creates) = measure(row).await;
        println!("| {} | {gets:.0} | {creates:.0} |", row.label);
    }
    println!("\n## Connection setup: GET /readyz on a new connection each, {CONNECTIONS} times\n");
    println!("| transport | per request |");
    println!("|---|---:|");
    for (label, https) in [("HTTP", false), ("HTTPS (TLS 1.3 handshake)", true)] {
        let t = connection_setup(https).await;
        println!("| {label} | {:.3} ms |", t.as_secs_f64() * 1e3);
    }
}
