//! Conversion benchmark for multi-version custom resources: what reading a CRD through a version
//! other than its storage version costs, with the `None` strategy and with a `Webhook`
//! conversion. Run with `cargo bench --bench conversion --features testing`.
//!
//! The CronTab CRD of `fixtures/crds/` gets a second served version `v2` (the same schema,
//! `storage: false`); 100 CronTabs are created through `v1`, the storage version. Every server,
//! the HTTPS conversion webhook ([`kubefake::testing::WebhookServer`], whose handler sets each
//! object's `apiVersion` to `desiredAPIVersion` and answers a v1 `ConversionReview`) and the
//! clients run in this process on one tokio runtime with 2 workers, so the figures are lower
//! bounds of what the server alone could do. Each configuration gets a fresh server.
//!
//! 1. **GET** of one object and **LIST** of the 100, with one client (its own
//!    `reqwest::Client`, HTTP/1.1 keep-alive), each (a) through `v1` (no conversion: the stored
//!    bytes are served), (b) through `v2` with `strategy: None`, (c) through `v2` with the
//!    webhook. kubefake caches each object's encoding per version, so two kinds of row:
//!    - **cached**: the steady state, the same unchanged objects read again and again for
//!      `ROW_DURATION` after one warm-up read; a `v2` read then converts nothing and calls no
//!      webhook (the webhook column shows the calls made during the row).
//!    - **uncached**: every timed read follows a write that invalidates the cache: for GET a
//!      merge PATCH of a label on the object through `v1`, for LIST a merge PATCH of each of the
//!      100 objects through `v1`; only the read is timed (req/s is reads per second of read
//!      time, not counting the writes). A `v2` read then converts every object it returns.
//!
//!    Latencies are from sending the request to having read the whole body; p50/p99 are over
//!    every timed request of the row.
//! 2. **Webhook calls per list**: an uncached LIST of the 100 objects through `v2` must cost
//!    exactly one webhook call (`WebhookServer::requests()` before and after); asserted.
//! 3. **Watch through v2**: one watcher on `?watch=1` through `v2` (from the resourceVersion
//!    after the CRD install) while one writer creates 1,000 CronTabs through `v1`, for `None` and
//!    for the webhook: events received per second (from the first create to the last event),
//!    whether every event arrived (ADDED, `v2`, increasing resourceVersions), the latency from
//!    sending each create to the watcher's receipt of its event (the write included), and the
//!    webhook calls the watch made.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use kubefake::testing::WebhookServer;
use serde_json::{json, Value};

/// How long each cached throughput row runs.
const ROW_DURATION: Duration = Duration::from_secs(2);
/// Timed reads of an uncached GET row (each after a PATCH).
const UNCACHED_GETS: usize = 500;
/// Rounds of an uncached LIST row (each after 100 PATCHes).
const UNCACHED_LISTS: usize = 50;
/// Objects in the collection.
const OBJECTS: usize = 100;
/// Objects the watch benchmark creates.
const WATCH_EVENTS: usize = 1_000;

const GROUP: &str = "/apis/stable.example.com";

/// How `v2` is converted from storage.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Strategy {
    None,
    Webhook,
}

/// A server with the two-version CronTab CRD installed, and its webhook if any.
struct Setup {
    server: kubefake::ServerHandle,
    hook: Option<WebhookServer>,
    base: String,
}

impl Setup {
    fn webhook_calls(&self) -> usize {
        self.hook.as_ref().map_or(0, WebhookServer::requests)
    }

    fn collection(&self, version: &str) -> String {
        format!("{}{GROUP}/{version}/namespaces/default/crontabs", self.base)
    }
}

/// The CronTab CRD of the fixtures with a second served version `v2` (same schema, not stored).
fn crd(conversion: Value) -> Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/crds/resourcedefinition.yaml"
    ))
    .expect("fixture");
    let mut crd: Value = serde_saphyr::from_str(&text).expect("yaml");
    let mut v2 = crd["spec"]["versions"][0].clone();
    v2["name"] = json!("v2");
    v2["storage"] = json!(false);
    crd["spec"]["versions"]
        .as_array_mut()
        .expect("versions is a list")
        .push(v2);
    crd["spec"]["conversion"] = conversion;
    crd
}

/// The conversion webhook: sets each object's apiVersion to the desired one.
async fn convert(_path: String, review: Value) -> Value {
    let request = &review["request"];
    let desired = request["desiredAPIVersion"].clone();
    let objects: Vec<Value> = request["objects"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .map(|mut object| {
            object["apiVersion"] = desired.clone();
            object
        })
        .collect();
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "ConversionReview",
        "response": {
            "uid": request["uid"],
            "result": {"status": "Success"},
            "convertedObjects": objects,
        }
    })
}

async fn setup(strategy: Strategy) -> Setup {
    let server = kubefake::Server::builder()
        .watch_buffer(1 << 16)
        .start()
        .await
        .expect("start");
    let base = server.url().trim_end_matches('/').to_string();
    let (conversion, hook) = match strategy {
        Strategy::None => (json!({"strategy": "None"}), None),
        Strategy::Webhook => {
            let hook = WebhookServer::start(convert).await.expect("webhook server");
            let conversion = json!({
                "strategy": "Webhook",
                "webhook": {
                    "conversionReviewVersions": ["v1"],
                    "clientConfig": {"url": hook.url("/convert"), "caBundle": hook.ca_bundle()},
                }
            });
            (conversion, Some(hook))
        }
    };
    let http = reqwest::Client::new();
    let resp = http
        .post(format!(
            "{base}/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
        ))
        .json(&crd(conversion))
        .send()
        .await
        .expect("create crd");
    assert_eq!(resp.status(), 201, "create crd: {:?}", resp.text().await);
    let setup = Setup { server, hook, base };
    let served = Instant::now();
    loop {
        let resp = http
            .get(format!("{}{GROUP}/v2/crontabs", setup.base))
            .send()
            .await
            .expect("poll v2");
        if resp.status() == 200 {
            break;
        }
        assert!(
            served.elapsed() < Duration::from_secs(10),
            "v2 not served after 10 s"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    setup
}

fn crontab(name: &str) -> Value {
    json!({
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": name},
        "spec": {"cronSpec": "* * * * */5", "image": "my-awesome-cron-image", "replicas": 1},
    })
}

async fn create_objects(setup: &Setup, http: &reqwest::Client) {
    for i in 0..OBJECTS {
        let resp = http
            .post(setup.collection("v1"))
            .json(&crontab(&format!("ct-{i}")))
            .send()
            .await
            .expect("create");
        assert_eq!(resp.status(), 201);
    }
}

/// A merge PATCH of a label through v1: a new resourceVersion, so no cached encoding.
async fn touch(setup: &Setup, http: &reqwest::Client, name: &str, round: usize) {
    let resp = http
        .patch(format!("{}/{name}", setup.collection("v1")))
        .header("content-type", "application/merge-patch+json")
        .body(json!({"metadata": {"labels": {"round": round.to_string()}}}).to_string())
        .send()
        .await
        .expect("patch");
    assert_eq!(resp.status(), 200);
}

/// One timed read; checks the status and, once per row, the apiVersion served.
async fn read(http: &reqwest::Client, url: &str) -> (Duration, bytes::Bytes) {
    let start = Instant::now();
    let resp = http.get(url).send().await.expect("get");
    assert_eq!(resp.status(), 200);
    let body = resp.bytes().await.expect("body");
    (start.elapsed(), body)
}

fn check_version(body: &[u8], version: &str, list: bool) {
    let value: Value = serde_json::from_slice(body).expect("json");
    let want = format!("stable.example.com/{version}");
    if list {
        let items = value["items"].as_array().expect("items");
        assert_eq!(items.len(), OBJECTS);
        assert!(items.iter().all(|i| i["apiVersion"] == want.as_str()));
    } else {
        assert_eq!(value["apiVersion"], want.as_str());
    }
}

struct Row {
    label: String,
    requests: usize,
    seconds: f64,
    p50: Duration,
    p99: Duration,
    webhook_calls: usize,
}

fn row(label: String, mut latencies: Vec<Duration>, webhook_calls: usize) -> Row {
    latencies.sort();
    let pct = |p: f64| {
        latencies
            .get(((latencies.len() as f64 * p) as usize).min(latencies.len().saturating_sub(1)))
            .copied()
            .unwrap_or_default()
    };
    Row {
        label,
        requests: latencies.len(),
        seconds: latencies.iter().sum::<Duration>().as_secs_f64(),
        p50: pct(0.50),
        p99: pct(0.99),
        webhook_calls,
    }
}

/// Cached: the same URL read for `ROW_DURATION` after a warm-up read.
async fn cached(setup: &Setup, label: String, url: &str, version: &str, list: bool) -> Row {
    let http = reqwest::Client::new();
    let (_, body) = read(&http, url).await;
    check_version(&body, version, list);
    let calls = setup.webhook_calls();
    let mut latencies = Vec::new();
    let start = Instant::now();
    while start.elapsed() < ROW_DURATION {
        latencies.push(read(&http, url).await.0);
    }
    row(label, latencies, setup.webhook_calls() - calls)
}

/// Uncached GET: PATCH the object through v1, then time one GET.
async fn uncached_get(setup: &Setup, label: String, version: &str) -> Row {
    let http = reqwest::Client::new();
    let url = format!("{}/ct-0", setup.collection(version));
    let calls = setup.webhook_calls();
    let mut latencies = Vec::with_capacity(UNCACHED_GETS);
    for round in 0..UNCACHED_GETS {
        touch(setup, &http, "ct-0", round).await;
        let (elapsed, body) = read(&http, &url).await;
        if round == 0 {
            check_version(&body, version, false);
        }
        latencies.push(elapsed);
    }
    row(label, latencies, setup.webhook_calls() - calls)
}

/// Uncached LIST: PATCH all 100 objects through v1, then time one LIST.
async fn uncached_list(setup: &Setup, label: String, version: &str) -> Row {
    let http = reqwest::Client::new();
    let url = setup.collection(version);
    let calls = setup.webhook_calls();
    let mut latencies = Vec::with_capacity(UNCACHED_LISTS);
    for round in 0..UNCACHED_LISTS {
        for i in 0..OBJECTS {
            touch(setup, &http, &format!("ct-{i}"), round).await;
        }
        let (elapsed, body) = read(&http, &url).await;
        if round == 0 {
            check_version(&body, version, true);
        }
        latencies.push(elapsed);
    }
    row(label, latencies, setup.webhook_calls() - calls)
}

/// Section 2: an uncached LIST of the 100 objects through v2 is one webhook call.
async fn webhook_calls_per_list(setup: &Setup) -> usize {
    let http = reqwest::Client::new();
    for i in 0..OBJECTS {
        touch(setup, &http, &format!("ct-{i}"), usize::MAX).await;
    }
    let before = setup.webhook_calls();
    let (_, body) = read(&http, &setup.collection("v2")).await;
    check_version(&body, "v2", true);
    setup.webhook_calls() - before
}

fn print_rows(rows: &[Row]) {
    println!("| read | requests | req/s | p50 | p99 | webhook calls |");
    println!("|---|---:|---:|---:|---:|---:|");
    for r in rows {
        println!(
            "| {} | {} | {:.0} | {:.3} ms | {:.3} ms | {} |",
            r.label,
            r.requests,
            r.requests as f64 / r.seconds,
            r.p50.as_secs_f64() * 1e3,
            r.p99.as_secs_f64() * 1e3,
            r.webhook_calls
        );
    }
}

/// The parts of a watch line the benchmark reads.
#[derive(serde::Deserialize, Default)]
struct WatchLine {
    #[serde(rename = "type")]
    kind: String,
    object: WatchObject,
}

#[derive(serde::Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct WatchObject {
    api_version: String,
    metadata: WatchMeta,
}

#[derive(serde::Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct WatchMeta {
    name: String,
    resource_version: String,
}

struct WatchRow {
    received: usize,
    complete: bool,
    seconds: f64,
    p50: Duration,
    p99: Duration,
    webhook_calls: usize,
}

/// Section 3: one watcher through v2, one writer creating `WATCH_EVENTS` objects through v1.
async fn watch(strategy: Strategy) -> WatchRow {
    let setup = setup(strategy).await;
    let rv = setup
        .server
        .state()
        .expect("a kubefake server")
        .store
        .current_rv();
    let resp = reqwest::Client::new()
        .get(format!(
            "{}?watch=1&resourceVersion={rv}",
            setup.collection("v2")
        ))
        .send()
        .await
        .expect("watch");
    assert_eq!(resp.status(), 200);
    let mut sent: HashMap<String, Instant> = HashMap::with_capacity(WATCH_EVENTS);
    let calls = setup.webhook_calls();
    let watcher = tokio::spawn(async move {
        let mut stream = resp.bytes_stream();
        let mut buf: Vec<u8> = Vec::new();
        let mut last_rv = 0u64;
        let mut ok = true;
        let mut received = Vec::with_capacity(WATCH_EVENTS);
        while received.len() < WATCH_EVENTS {
            let Some(Ok(chunk)) = stream.next().await else {
                ok = false;
                break;
            };
            let at = Instant::now();
            buf.extend_from_slice(&chunk);
            while let Some(pos) = buf.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = buf.drain(..=pos).collect();
                let event: WatchLine = serde_json::from_slice(&line).unwrap_or_default();
                let rv: u64 = event.object.metadata.resource_version.parse().unwrap_or(0);
                if event.kind != "ADDED"
                    || rv <= last_rv
                    || event.object.api_version != "stable.example.com/v2"
                {
                    ok = false;
                }
                last_rv = rv;
                received.push((event.object.metadata.name, at));
            }
        }
        (ok, received)
    });
    let http = reqwest::Client::new();
    let start = Instant::now();
    for i in 0..WATCH_EVENTS {
        let name = format!("w-{i}");
        let sent_at = Instant::now();
        let resp = http
            .post(setup.collection("v1"))
            .json(&crontab(&name))
            .send()
            .await
            .expect("create");
        assert_eq!(resp.status(), 201);
        sent.insert(name, sent_at);
    }
    let (ok, received) = tokio::time::timeout(Duration::from_secs(300), watcher)
        .await
        .expect("watcher finished within 300 s")
        .expect("watcher task");
    let seconds = received.last().map_or(0.0, |(_, at)| {
        at.saturating_duration_since(start).as_secs_f64()
    });
    let mut latencies: Vec<Duration> = received
        .iter()
        .filter_map(|(name, at)| sent.get(name).map(|s| at.saturating_duration_since(*s)))
        .collect();
    latencies.sort();
    let pct = |p: f64| {
        latencies
            .get(((latencies.len() as f64 * p) as usize).min(latencies.len().saturating_sub(1)))
            .copied()
            .unwrap_or_default()
    };
    let webhook_calls = setup.webhook_calls() - calls;
    let row = WatchRow {
        received: received.len(),
        complete: ok && received.len() == WATCH_EVENTS,
        seconds,
        p50: pct(0.50),
        p99: pct(0.99),
        webhook_calls,
    };
    setup.server.shutdown().await;
    row
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    println!(
        "kubefake conversion benchmark (2 tokio workers; server, HTTPS webhook and client in one process)"
    );
    println!(
        "CronTab CRD, v1 = storage version, v2 = served (same schema); {OBJECTS} objects created through v1; one client, keep-alive"
    );
    println!();

    let none = setup(Strategy::None).await;
    let hook = setup(Strategy::Webhook).await;
    for s in [&none, &hook] {
        create_objects(s, &reqwest::Client::new()).await;
    }
    // Creating through the storage version converts nothing.
    assert_eq!(
        hook.webhook_calls(),
        0,
        "creates through v1 called the webhook"
    );

    let configs: [(&Setup, &str, &str); 3] = [
        (&none, "v1", "v1 (storage, stored bytes)"),
        (&none, "v2", "v2, strategy None"),
        (&hook, "v2", "v2, strategy Webhook"),
    ];
    let mut rows = Vec::new();
    for (setup, version, name) in configs {
        let url = format!("{}/ct-0", setup.collection(version));
        rows.push(
            cached(
                setup,
                format!("GET, {name}, cached (steady state)"),
                &url,
                version,
                false,
            )
            .await,
        );
    }
    for (setup, version, name) in configs {
        rows.push(
            uncached_get(
                setup,
                format!("GET, {name}, uncached (after a PATCH of it)"),
                version,
            )
            .await,
        );
    }
    for (setup, version, name) in configs {
        let url = setup.collection(version);
        rows.push(
            cached(
                setup,
                format!("LIST {OBJECTS}, {name}, cached (steady state)"),
                &url,
                version,
                true,
            )
            .await,
        );
    }
    for (setup, version, name) in configs {
        rows.push(
            uncached_list(
                setup,
                format!("LIST {OBJECTS}, {name}, uncached (after a PATCH of all {OBJECTS})"),
                version,
            )
            .await,
        );
    }
    println!(
        "## GET and LIST ({}s per cached row; {UNCACHED_GETS} GETs / {UNCACHED_LISTS} LISTs per uncached row, only the reads timed)",
        ROW_DURATION.as_secs()
    );
    println!();
    print_rows(&rows);
    println!();

    let calls = webhook_calls_per_list(&hook).await;
    println!("## Webhook calls per list");
    println!();
    println!("uncached LIST of {OBJECTS} objects through v2 (Webhook): {calls} webhook call(s)");
    assert_eq!(
        calls, 1,
        "an uncached list of {OBJECTS} should be one webhook call"
    );
    println!();

    none.server.shutdown().await;
    hook.server.shutdown().await;
    drop(hook.hook);

    println!(
        "## Watch through v2 (1 watcher, 1 writer creating {WATCH_EVENTS} CronTabs through v1)"
    );
    println!();
    println!("| conversion | events | all arrived | events/s | p50 create sent → received | p99 | webhook calls |");
    println!("|---|---:|---|---:|---:|---:|---:|");
    for (strategy, name) in [(Strategy::None, "None"), (Strategy::Webhook, "Webhook")] {
        let r = watch(strategy).await;
        println!(
            "| {name} | {} | {} | {:.0} | {:.3} ms | {:.3} ms | {} |",
            r.received,
            if r.complete { "yes" } else { "NO" },
            r.received as f64 / r.seconds,
            r.p50.as_secs_f64() * 1e3,
            r.p99.as_secs_f64() * 1e3,
            r.webhook_calls
        );
    }
}
