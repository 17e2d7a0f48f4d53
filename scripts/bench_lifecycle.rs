//! Lifecycle benchmark: how long the in-process controllers take to finish a large namespace
//! deletion and a large ownerReference cascade, measured over HTTP from the DELETE until the
//! last object is gone. Run with `cargo bench --bench lifecycle`.
//!
//! Objects are created through the store-facing REST layer (not HTTP) so that setup time does
//! not dominate; the deletions themselves go through HTTP like a client's.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

const OBJECTS: usize = 10_000;

fn crd() -> Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/crds/resourcedefinition.yaml"
    ))
    .expect("fixture");
    serde_saphyr::from_str(&text).expect("yaml")
}

fn crontab(name: &str, owner: Option<(&str, &str)>) -> Value {
    let mut obj = json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
                         "metadata": {"name": name}, "spec": {"image": "i"}});
    if let Some((owner_name, uid)) = owner {
        obj["metadata"]["ownerReferences"] = json!([{"apiVersion": "stable.example.com/v1",
            "kind": "CronTab", "name": owner_name, "uid": uid}]);
    }
    obj
}

async fn server_with_crd() -> (kubefake::ServerHandle, reqwest::Client) {
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
    assert_eq!(resp.status(), 201);
    (server, http)
}

async fn create(server: &kubefake::ServerHandle, ns: &str, obj: Value) -> String {
    let state = server.state().expect("a kubefake server");
    let res = state
        .resource("stable.example.com", "v1", "crontabs")
        .expect("served");
    let ctx = kubefake::context::Context::internal();
    let stored = kubefake::registry::store::create(state, &ctx, &res, ns, obj)
        .await
        .expect("create");
    stored.value()["metadata"]["uid"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

async fn namespace_deletion() -> Duration {
    let (server, http) = server_with_crd().await;
    let resp = http
        .post(format!("{}/api/v1/namespaces", server.url()))
        .json(&json!({"metadata": {"name": "big"}}))
        .send()
        .await
        .expect("ns");
    assert_eq!(resp.status(), 201);
    for i in 0..OBJECTS {
        create(&server, "big", crontab(&format!("o-{i}"), None)).await;
    }
    let start = Instant::now();
    let resp = http
        .delete(format!("{}/api/v1/namespaces/big", server.url()))
        .send()
        .await
        .expect("delete");
    assert_eq!(resp.status(), 200);
    loop {
        let status = http
            .get(format!("{}/api/v1/namespaces/big", server.url()))
            .send()
            .await
            .expect("get")
            .status();
        if status == 404 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let took = start.elapsed();
    let left = http
        .get(format!(
            "{}/apis/stable.example.com/v1/crontabs",
            server.url()
        ))
        .send()
        .await
        .expect("list")
        .json::<Value>()
        .await
        .expect("json");
    assert_eq!(left["items"].as_array().map(Vec::len), Some(0));
    server.shutdown().await;
    took
}

/// root -> 100 children -> 100 grandchildren each: 10,100 dependents over three levels.
async fn cascade() -> Duration {
    let (server, http) = server_with_crd().await;
    let root_uid = create(&server, "default", crontab("root", None)).await;
    for c in 0..100 {
        let child = format!("c-{c}");
        let child_uid = create(
            &server,
            "default",
            crontab(&child, Some(("root", &root_uid))),
        )
        .await;
        for g in 0..OBJECTS / 100 {
            create(
                &server,
                "default",
                crontab(&format!("g-{c}-{g}"), Some((&child, &child_uid))),
            )
            .await;
        }
    }
    let start = Instant::now();
    let resp = http
        .delete(format!(
            "{}/apis/stable.example.com/v1/namespaces/default/crontabs/root",
            server.url()
        ))
        .send()
        .await
        .expect("delete");
    assert_eq!(resp.status(), 200);
    loop {
        let list = http
            .get(format!(
                "{}/apis/stable.example.com/v1/namespaces/default/crontabs?limit=1",
                server.url()
            ))
            .send()
            .await
            .expect("list")
            .json::<Value>()
            .await
            .expect("json");
        if list["items"].as_array().is_some_and(Vec::is_empty) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let took = start.elapsed();
    server.shutdown().await;
    took
}

fn verdict(took: Duration) -> &'static str {
    if took < Duration::from_secs(1) {
        "PASS"
    } else {
        "FAIL"
    }
}

#[tokio::main]
async fn main() {
    println!(
        "kubefake lifecycle benchmark ({} CPUs, in-process server)",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );
    let ns = namespace_deletion().await;
    println!("namespace with {OBJECTS} objects: DELETE -> namespace gone   {:>8.1} ms   target < 1000 ms  {}", ns.as_secs_f64() * 1e3, verdict(ns));
    let cascade = cascade().await;
    println!("3-level cascade of {} dependents: DELETE -> all gone        {:>8.1} ms   target < 1000 ms  {}", OBJECTS + 100, cascade.as_secs_f64() * 1e3, verdict(cascade));
}
