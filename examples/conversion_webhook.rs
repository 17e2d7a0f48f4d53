//! A conversion webhook tested against kubefake, end to end, with no certificate files: the
//! webhook runs in-process over HTTPS (`kubefake::testing::WebhookServer`), the CRD names it
//! with the generated `caBundle`, and objects written through v1 read through v2 converted.
//!
//! `cargo run --example conversion_webhook --features testing`

use kubefake::testing::WebhookServer;
use serde_json::{json, Value};

/// The webhook: v1 `spec.cronSpec` <-> v2 `spec.schedule`.
async fn convert(_path: String, review: Value) -> Value {
    let request = &review["request"];
    let to = request["desiredAPIVersion"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let converted: Vec<Value> = request["objects"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .map(|mut obj| {
            let (from, into) = if to.ends_with("/v2") {
                ("cronSpec", "schedule")
            } else {
                ("schedule", "cronSpec")
            };
            if let Some(spec) = obj["spec"].as_object_mut() {
                if let Some(v) = spec.remove(from) {
                    spec.insert(into.into(), v);
                }
            }
            obj["apiVersion"] = json!(to);
            obj
        })
        .collect();
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
        "response": {"uid": request["uid"], "result": {"status": "Success"},
            "convertedObjects": converted}})
}

/// CronTab v1 (storage, `cronSpec`) and v2 (`schedule`), converted by the webhook at `url`.
fn crd(url: &str, ca_bundle: &str) -> Value {
    let version = |name: &str, storage: bool, field: &str| {
        json!({"name": name, "served": true, "storage": storage,
            "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                "spec": {"type": "object", "properties": {field: {"type": "string"}}}}}}})
    };
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "crontabs.stable.example.com"},
        "spec": {"group": "stable.example.com", "scope": "Namespaced",
            "names": {"plural": "crontabs", "singular": "crontab", "kind": "CronTab"},
            "versions": [version("v1", true, "cronSpec"), version("v2", false, "schedule")],
            "conversion": {"strategy": "Webhook", "webhook": {
                "conversionReviewVersions": ["v1"],
                "clientConfig": {"url": url, "caBundle": ca_bundle}}}}})
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let hook = WebhookServer::start(convert).await?;
    let server = kubefake::Server::start().await?;
    let http = reqwest::Client::new();
    let url = |path: &str| format!("{}{path}", server.url());

    let crd = crd(&hook.url("/convert"), &hook.ca_bundle());
    let resp = http
        .post(url(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
        ))
        .json(&crd)
        .send()
        .await?;
    assert_eq!(resp.status(), 201, "the CRD is established when created");

    let crontab = json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
        "metadata": {"name": "nightly"}, "spec": {"cronSpec": "0 3 * * *"}});
    http.post(url(
        "/apis/stable.example.com/v1/namespaces/default/crontabs",
    ))
    .json(&crontab)
    .send()
    .await?
    .error_for_status()?;

    let v2: Value = http
        .get(url(
            "/apis/stable.example.com/v2/namespaces/default/crontabs/nightly",
        ))
        .send()
        .await?
        .json()
        .await?;
    assert_eq!(v2["spec"], json!({"schedule": "0 3 * * *"}));
    println!("read through v2: {}", v2["spec"]);
    println!("webhook calls: {}", hook.requests());
    Ok(())
}
