//! CEL benchmark: 10,000 creates of a custom resource whose CRD has 20 `x-kubernetes-validations`
//! rules, end to end over HTTP keep-alive (8 concurrent clients, in-process server).
//! Run with `cargo bench --bench cel`.

use std::time::Instant;

use serde_json::{json, Value};

const CREATES: usize = 10_000;
const CLIENTS: usize = 8;

fn crd() -> Value {
    let rules: Vec<Value> = (0..20)
        .map(|i| match i % 5 {
            0 => json!({"rule": "self.minReplicas <= self.replicas", "message": "replicas should be greater than or equal to minReplicas."}),
            1 => json!({"rule": "self.replicas <= self.maxReplicas", "message": "replicas should be smaller than or equal to maxReplicas."}),
            2 => json!({"rule": "self.image.startsWith('registry.example.com/') || self.image.size() > 0"}),
            3 => json!({"rule": "self.labels.all(k, k.size() < 64)"}),
            _ => json!({"rule": "!has(self.cronSpec) || self.cronSpec.matches('^[0-9*/ ,-]+$')", "messageExpression": "'bad cronSpec: ' + self.cronSpec"}),
        })
        .collect();
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "crontabs.stable.example.com"},
        "spec": {"group": "stable.example.com", "scope": "Namespaced",
            "names": {"plural": "crontabs", "kind": "CronTab"},
            "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {
                "type": "object", "properties": {"spec": {
                    "type": "object", "x-kubernetes-validations": rules,
                    "properties": {
                        "cronSpec": {"type": "string", "maxLength": 64},
                        "image": {"type": "string", "maxLength": 256},
                        "minReplicas": {"type": "integer"}, "replicas": {"type": "integer"}, "maxReplicas": {"type": "integer"},
                        "labels": {"type": "object", "maxProperties": 16, "additionalProperties": {"type": "string", "maxLength": 63}}
                    }}}}}}]}
    })
}

fn crontab(name: &str) -> Value {
    json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab", "metadata": {"name": name},
        "spec": {"cronSpec": "*/5 * * * *", "image": "registry.example.com/cron:1", "minReplicas": 1,
                 "replicas": 3, "maxReplicas": 5, "labels": {"team": "a", "tier": "web"}}})
}

#[tokio::main]
async fn main() {
    let server = kubefake::Server::start().await.expect("start");
    let http = reqwest::Client::new();
    let resp = http
        .post(format!(
            "{}/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            server.url()
        ))
        .json(&crd())
        .send()
        .await
        .expect("crd");
    assert_eq!(resp.status(), 201, "{:?}", resp.text().await);
    let url = format!(
        "{}/apis/stable.example.com/v1/namespaces/default/crontabs",
        server.url()
    );
    let start = Instant::now();
    let mut tasks = Vec::new();
    for c in 0..CLIENTS {
        let url = url.clone();
        tasks.push(tokio::spawn(async move {
            let http = reqwest::Client::new();
            for i in (c..CREATES).step_by(CLIENTS) {
                let resp = http
                    .post(&url)
                    .json(&crontab(&format!("ct-{i}")))
                    .send()
                    .await
                    .expect("create");
                assert_eq!(resp.status(), 201);
            }
        }));
    }
    for t in tasks {
        t.await.expect("client");
    }
    let rate = CREATES as f64 / start.elapsed().as_secs_f64();
    // And an invalid object is refused by the rules.
    let mut bad = crontab("bad");
    bad["spec"]["replicas"] = json!(20);
    let resp = http.post(&url).json(&bad).send().await.expect("create");
    assert_eq!(resp.status(), 422);
    let verdict = if rate > 5_000.0 { "PASS" } else { "FAIL" };
    println!("kubefake CEL benchmark (2 CPUs, in-process server, {CLIENTS} clients)");
    println!("{CREATES} creates with 20 CEL rules, end to end: {rate:>8.0} creates/s   target > 5000  {verdict}");
    server.shutdown().await;
}
