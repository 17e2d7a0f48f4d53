//! Admission benchmark: what admission policies and webhooks cost a write. ConfigMap creates
//! through one HTTP/1.1 keep-alive client, `CREATES` creates each, with nothing configured, with
//! 1 and 5 ValidatingAdmissionPolicies that match every create (each bound with Deny, each with
//! a variable and two validations that pass), with one validating webhook that allows
//! everything, and with one mutating webhook that adds a label by JSONPatch. The webhooks are [`kubefake::testing::WebhookServer`]s (HTTPS, in this process);
//! server, webhooks and client share one tokio runtime with 2 workers, so the figures are lower
//! bounds of what the server alone could do. Each row gets a fresh server.
//!
//! Run with `cargo bench --bench admission --features testing`.

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
    Policies(usize),
    Validating,
    Mutating,
}

impl Setup {
    fn label(self) -> &'static str {
        match self {
            Setup::None => "nothing",
            Setup::Policies(1) => "1 ValidatingAdmissionPolicy",
            Setup::Policies(_) => "5 ValidatingAdmissionPolicies",
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
        Setup::Policies(n) => {
            policies(http, base, n).await;
            return None;
        }
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

/// `n` policies on ConfigMap creates, each bound with Deny; every validation passes.
async fn policies(http: &reqwest::Client, base: &str, n: usize) {
    let api = format!("{base}/apis/admissionregistration.k8s.io/v1");
    for i in 0..n {
        let policy = json!({"metadata": {"name": format!("p{i}")}, "spec": {
            "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                "operations": ["CREATE"], "resources": ["configmaps"]}]},
            "variables": [{"name": "keys", "expression": "has(object.data) ? size(object.data) : 0"}],
            "validations": [
                {"expression": "variables.keys <= 10", "message": "too many keys"},
                {"expression": "!object.metadata.name.startsWith('forbidden-')"}]}});
        let binding = json!({"metadata": {"name": format!("p{i}-binding")},
            "spec": {"policyName": format!("p{i}"), "validationActions": ["Deny"]}});
        for (path, body) in [
            ("validatingadmissionpolicies", policy),
            ("validatingadmissionpolicybindings", binding),
        ] {
            let resp = http
                .post(format!("{api}/{path}"))
                .json(&body)
                .send()
                .await
                .expect("sent");
            assert_eq!(resp.status(), 201, "policy configured");
        }
    }
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
    let setups = [
        Setup::None,
        Setup::Policies(1),
        Setup::Policies(5),
        Setup::Validating,
        Setup::Mutating,
    ];
    for setup in setups {
        let (rate, p50, p99, calls) = row(setup).await;
        println!(
            "| {} | {rate:.0} | {:.3} ms | {:.3} ms | {calls} |",
            setup.label(),
            p50.as_secs_f64() * 1e3,
            p99.as_secs_f64() * 1e3
        );
    }
}
