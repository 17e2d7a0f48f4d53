//! Watch fan-out benchmark: W watchers on one resource while writers create E objects over
//! HTTP; every watcher must receive every event, in resourceVersion order, with no ERROR
//! (zero loss), and the latency from a write's response to each watcher's receipt is measured.
//! The server runs in this process (2 tokio workers shared with the clients); its watch buffer
//! is raised so that a burst does not expire slow watchers. Run with `cargo bench --bench watch`.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use parking_lot::Mutex;
use serde_json::{json, Value};

fn crd() -> Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/fixtures/crds/resourcedefinition.yaml"
    ))
    .expect("fixture");
    serde_saphyr::from_str(&text).expect("yaml")
}

/// The parts of a watch line the benchmark reads (the rest is skipped, not built).
#[derive(serde::Deserialize, Default)]
struct WatchLine {
    #[serde(rename = "type")]
    kind: String,
    object: WatchObject,
}

#[derive(serde::Deserialize, Default)]
struct WatchObject {
    metadata: WatchMeta,
}

#[derive(serde::Deserialize, Default)]
#[serde(rename_all = "camelCase")]
struct WatchMeta {
    name: String,
    resource_version: String,
}

struct Row {
    watchers: usize,
    events: usize,
    seconds: f64,
    lossless: bool,
    p50: Duration,
    p99: Duration,
}

/// One run: `watchers` watch while 4 writers create `events` objects, as fast as they can or
/// paced to `rate` creates per second in total (latency is only meaningful when the machine is
/// not saturated by the benchmark's own clients).
async fn run(watchers: usize, events: usize, rate: Option<f64>) -> Row {
    let server = kubefake::Server::builder()
        .watch_buffer(1 << 20)
        .start()
        .await
        .expect("start");
    let http = reqwest::Client::new();
    let base = server.url().to_string();
    let resp = http
        .post(format!(
            "{base}/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
        ))
        .json(&crd())
        .send()
        .await
        .expect("crd");
    assert_eq!(resp.status(), 201);
    let rv = server
        .state()
        .expect("a kubefake server")
        .store
        .current_rv();
    let sent: Arc<Mutex<HashMap<String, Instant>>> = Arc::default();
    let url = format!("{base}/apis/stable.example.com/v1/namespaces/default/crontabs?watch=1&resourceVersion={rv}");
    // Open every watch before writing.
    let mut streams = Vec::new();
    for _ in 0..watchers {
        let resp = reqwest::Client::new()
            .get(&url)
            .send()
            .await
            .expect("watch");
        assert_eq!(resp.status(), 200);
        streams.push(resp.bytes_stream());
    }
    let mut tasks = Vec::new();
    for stream in streams {
        let sent = sent.clone();
        tasks.push(tokio::spawn(async move {
            let mut stream = stream;
            let mut buf: Vec<u8> = Vec::new();
            let mut last_rv = 0u64;
            let mut ok = true;
            let mut received = Vec::with_capacity(events);
            while received.len() < events {
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
                    if event.kind != "ADDED" || rv <= last_rv {
                        ok = false;
                    }
                    last_rv = rv;
                    received.push((event.object.metadata.name, at));
                }
            }
            let sent = sent.lock();
            let latencies: Vec<Duration> = received
                .iter()
                .filter_map(|(name, at)| sent.get(name).map(|s| at.saturating_duration_since(*s)))
                .collect();
            (ok && received.len() == events, latencies)
        }));
    }
    let start = Instant::now();
    let writers = 4;
    let mut writes = Vec::new();
    for w in 0..writers {
        let sent = sent.clone();
        let base = base.clone();
        writes.push(tokio::spawn(async move {
            let http = reqwest::Client::new();
            let begin = Instant::now();
            for (n, i) in (w..events).step_by(writers).enumerate() {
                if let Some(rate) = rate {
                    let due = begin + Duration::from_secs_f64(n as f64 * writers as f64 / rate);
                    tokio::time::sleep_until(due.into()).await;
                }
                let name = format!("ct-{i}");
                let body = json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab", "metadata": {"name": name}, "spec": {"image": "i"}});
                let resp = http.post(format!("{base}/apis/stable.example.com/v1/namespaces/default/crontabs")).json(&body).send().await.expect("create");
                assert_eq!(resp.status(), 201);
                sent.lock().insert(name, Instant::now());
            }
        }));
    }
    for w in writes {
        w.await.expect("writer");
    }
    let mut lossless = true;
    let mut all = Vec::new();
    for t in tasks {
        let (ok, lat) = t.await.expect("watcher");
        lossless &= ok;
        all.extend(lat);
    }
    let seconds = start.elapsed().as_secs_f64();
    all.sort();
    let pct = |p: f64| {
        all.get(((all.len() as f64 * p) as usize).min(all.len().saturating_sub(1)))
            .copied()
            .unwrap_or_default()
    };
    server.shutdown().await;
    Row {
        watchers,
        events,
        seconds,
        lossless,
        p50: pct(0.50),
        p99: pct(0.99),
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    println!("kubefake watch benchmark (2 CPUs; server, 4 writers and every watcher in one process; watch buffer 1M events)");
    println!(
        "{:>9} {:>8} {:>14} {:>16} {:>10} {:>10} {:>10}",
        "watchers", "events", "delivered/s", "per watcher/s", "zero loss", "p50", "p99"
    );
    for (watchers, events, rate) in [
        (1, 10_000, None),
        (100, 10_000, None),
        (1_000, 1_000, None),
        (100, 10_000, Some(1_000.0)),
    ] {
        let r = run(watchers, events, rate).await;
        let delivered = (r.watchers * r.events) as f64 / r.seconds;
        let label = match rate {
            None => format!("{watchers}"),
            Some(rate) => format!("{watchers} @{rate:.0}/s"),
        };
        println!(
            "{:>13} {:>8} {:>14.0} {:>16.0} {:>10} {:>8.2}ms {:>8.2}ms",
            label,
            r.events,
            delivered,
            r.events as f64 / r.seconds,
            if r.lossless { "yes" } else { "NO" },
            r.p50.as_secs_f64() * 1e3,
            r.p99.as_secs_f64() * 1e3
        );
        if watchers == 100 && rate.is_some() {
            let pass = r.lossless && r.p99 < Duration::from_millis(5);
            println!(
                "target: 100 watchers x 10,000 events, zero loss, p99 < 5 ms (writes paced at 1,000/s): {}",
                if pass { "PASS" } else { "FAIL" }
            );
        }
    }
}
