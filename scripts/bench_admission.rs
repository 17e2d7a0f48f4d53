//! Admission benchmark: what admission webhooks cost a write. ConfigMap creates through one
//! HTTP/1.1 keep-alive client, for `CREATES` creates each, with no webhook configured, with one
//! validating webhook that allows everything, and with one mutating webhook that adds a label by
//! JSONPatch. The webhooks are [`kubefake::testing::WebhookServer`]s (HTTPS, in this process);
//! server, webhooks and client share one tokio runtime with 2 workers, so the figures are lower
//! bounds of what the server alone could do. Each row gets a fresh server.
//!
//! Run with `cargo bench --bench admission --features testing`. (Admission policies are not
//! evaluated yet, so there is no policy row.)

use std::time::{Duration, Instant};

use base64::Engine;
use kubefake::testing::WebhookServer;
use serde_json::{json, Value};

/// Creates per row.
const CREATES: usize = 2_000;

/// What the row configures.
#[derive(Clone, Copy)]
enum Setup {
    None,
    Validating,
    Mutating,
}

impl Setup {
    fn label(self) -> &'static str {
        match self {
            Setup::None => "no webhook",
            Setup::Validating => "1 validating webhook (allows)",
            Setup::Mutating => "1 mutating webhook (JSONPatch adds a label)",
        }
    }
}

/// The webhook: allow, with a patch when mutating.
async fn admit(review: Value, mutating: bool) -> Value {
    let mut response = json!({"uid": review["request"]["uid"], "allowed": true});
    if mutating {
        let patch =
            json!([{"op": "add", "path": "/metadata/labels", "value": {"admitted": "yes"}}]);
        response["patchType"] = json!("JSONPatch");
        response["patch"] =
            json!(base64::engine::general_purpose::STANDARD.encode(patch.to_string()));
    }
    json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response})
}

/// Configures the webhook of `setup` on ConfigMap creates.
async fn configure(http: &reqwest::Client, base: &str, setup: Setup) -> Option<WebhookServer> {
    let (mutating, path) = match setup {
        Setup::None => return None,
        Setup::Validating => (false, "validatingwebhookconfigurations"),
        Setup::Mutating => (true, "mutatingwebhookconfigurations"),
    };
    let hook = WebhookServer::start(move |_path, review| admit(review, mutating))
        .await
        .expect("webhook starts");
    let config = json!({"metadata": {"name": "bench"}, "webhooks": [{
        "name": "bench.example.com", "sideEffects": "None", "admissionReviewVersions": ["v1"],
        "clientConfig": {"url": hook.url("/admit"), "caBundle": hook.ca_bundle()},
        "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"],
            "resources": ["configmaps"]}]}]});
    let url = format!("{base}/apis/admissionregistration.k8s.io/v1/{path}");
    let resp = http.post(url).json(&config).send().await.expect("sent");
    assert_eq!(resp.status(), 201, "webhook configured");
    Some(hook)
}

/// One row: creates per second and latency percentiles.
async fn row(setup: Setup) -> (f64, Duration, Duration, usize) {
    let server = kubefake::Server::start().await.expect("server starts");
    let http = reqwest::Client::new();
    let base = server.url().to_string();
    let hook = configure(&http, &base, setup).await;
    let url = format!("{base}/api/v1/namespaces/default/configmaps");
    let mut latencies = Vec::with_capacity(CREATES);
    let start = Instant::now();
    for i in 0..CREATES {
        let body = json!({"metadata": {"name": format!("cm-{i}")}, "data": {"k": "v"}});
        let t = Instant::now();
        let resp = http.post(&url).json(&body).send().await.expect("sent");
        assert_eq!(resp.status(), 201);
        let created: Value = resp.json().await.expect("json");
        latencies.push(t.elapsed());
        if matches!(setup, Setup::Mutating) {
            assert_eq!(created["metadata"]["labels"]["admitted"], "yes");
        }
    }
    let rate = CREATES as f64 / start.elapsed().as_secs_f64();
    latencies.sort();
    let pct = |p: f64| latencies[((latencies.len() as f64 * p) as usize).min(latencies.len() - 1)];
    let calls = hook.as_ref().map_or(0, WebhookServer::requests);
    (rate, pct(0.50), pct(0.99), calls)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    println!("## ConfigMap creates, 1 client, {CREATES} per row\n");
    println!("| admission | creates/s | p50 | p99 | webhook calls |");
    println!("|---|---:|---:|---:|---:|");
    for setup in [Setup::None, Setup::Validating, Setup::Mutating] {
        let (rate, p50, p99, calls) = row(setup).await;
        println!(
            "| {} | {rate:.0} | {:.3} ms | {:.3} ms | {calls} |",
            setup.label(),
            p50.as_secs_f64() * 1e3,
            p99.as_secs_f64() * 1e3
        );
    }
}
