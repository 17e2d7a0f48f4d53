//! Reset benchmark: one server per suite with a reset per test, against a new server per test.
//! Each "test" writes a few objects over HTTP (a namespace and ConfigMaps), as a small test
//! does; the per-test overhead is what is measured: `reset()` (Rust API and `POST
//! /kubefake/v1/reset`) against `Server::builder()...start()` and its shutdown. Both servers
//! preload the walkthrough's CRD and one object. Also: taking a snapshot, and restoring one
//! across a small change, with 10 and with 20 000 objects stored (both must not grow with the
//! store). Run with `cargo bench --bench reset`.

use std::time::{Duration, Instant};

use serde_json::json;

const TESTS: usize = 200;
const OBJECTS_PER_TEST: usize = 5;

fn builder() -> kubefake::ServerBuilder {
    let dir = env!("CARGO_MANIFEST_DIR");
    kubefake::Server::builder()
        .crds(format!("{dir}/fixtures/crds"))
        .objects(format!("{dir}/fixtures/objects/my-crontab.yaml"))
}

/// What one test does: a namespace and a few ConfigMaps in it.
async fn a_test(server: &kubefake::ServerHandle, http: &reqwest::Client) {
    let url = server.url();
    let ns = json!({"metadata": {"name": "test"}});
    let resp = http
        .post(format!("{url}/api/v1/namespaces"))
        .json(&ns)
        .send()
        .await;
    assert_eq!(resp.expect("ns").status(), 201);
    for i in 0..OBJECTS_PER_TEST {
        let cm = json!({"metadata": {"name": format!("cm-{i}")}, "data": {"k": "v"}});
        let path = format!("{url}/api/v1/namespaces/test/configmaps");
        let resp = http.post(path).json(&cm).send().await;
        assert_eq!(resp.expect("cm").status(), 201);
    }
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

async fn new_server_per_test() -> Duration {
    let http = reqwest::Client::new();
    let mut overhead = Vec::with_capacity(TESTS);
    for _ in 0..TESTS {
        let start = Instant::now();
        let server = builder().start().await.expect("start");
        let started = start.elapsed();
        a_test(&server, &http).await;
        let stop = Instant::now();
        drop(server);
        overhead.push(started + stop.elapsed());
    }
    median(overhead)
}

async fn reset_per_test(over_http: bool) -> Duration {
    let server = builder().start().await.expect("start");
    let http = reqwest::Client::new();
    let reset_url = format!("{}/kubefake/v1/reset", server.url());
    let mut overhead = Vec::with_capacity(TESTS);
    for _ in 0..TESTS {
        a_test(&server, &http).await;
        let start = Instant::now();
        if over_http {
            let resp = http.post(&reset_url).send().await.expect("reset");
            assert_eq!(resp.status(), 200);
        } else {
            server.reset().await.expect("reset");
        }
        overhead.push(start.elapsed());
    }
    median(overhead)
}

/// Snapshot and restore-after-one-change times with `objects` ConfigMaps stored.
async fn snapshot_and_restore(objects: usize) -> (Duration, Duration) {
    let server = kubefake::Server::start().await.expect("start");
    let state = server.state().expect("a kubefake server");
    let gr = kubefake::store::GroupResource::new("", "configmaps");
    state
        .store
        .write(|t| {
            for i in 0..objects {
                let name = format!("bulk-{i}");
                let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": name, "namespace": "default"}});
                t.put(&gr, kubefake::store::ObjectKey::new("default", &name), cm)?;
            }
            Ok(())
        })
        .expect("bulk write");
    let mut taken = Vec::new();
    let mut restored = Vec::new();
    for _ in 0..TESTS {
        let start = Instant::now();
        let id = server.snapshot().expect("snapshot");
        taken.push(start.elapsed());
        let key = kubefake::store::ObjectKey::new("default", "bulk-0");
        let changed = json!({"metadata": {"name": "bulk-0", "namespace": "default"},
            "data": {"changed": "yes"}});
        state
            .store
            .write(|t| t.put(&gr, key.clone(), changed.clone()))
            .expect("change");
        let start = Instant::now();
        let r = server.restore(&id).await.expect("restore");
        restored.push(start.elapsed());
        assert_eq!(r.changes, 1);
    }
    (median(taken), median(restored))
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    println!(
        "kubefake reset benchmark ({} CPUs, in-process server, {TESTS} tests of {} writes, medians)",
        std::thread::available_parallelism().map_or(1, |n| n.get()),
        OBJECTS_PER_TEST + 1
    );
    let new = new_server_per_test().await;
    let reset = reset_per_test(false).await;
    let reset_http = reset_per_test(true).await;
    println!(
        "new server per test (start + shutdown)        {:>8.3} ms",
        ms(new)
    );
    println!(
        "one server, reset() per test                  {:>8.3} ms   {:>5.1}x faster",
        ms(reset),
        new.as_secs_f64() / reset.as_secs_f64()
    );
    println!(
        "one server, POST /kubefake/v1/reset per test  {:>8.3} ms   {:>5.1}x faster",
        ms(reset_http),
        new.as_secs_f64() / reset_http.as_secs_f64()
    );
    let verdict = if reset < new { "PASS" } else { "FAIL" };
    println!("reset costs less than a new server: {verdict}");
    for objects in [10, 20_000] {
        let (taken, restored) = snapshot_and_restore(objects).await;
        println!(
            "{objects:>6} objects stored: snapshot() {:>8.4} ms, restore of one change {:>8.4} ms",
            ms(taken),
            ms(restored)
        );
    }
}
