//! Memory benchmark: what a `kubefake serve` process holds per stored byte. For each row a fresh
//! server (plain HTTP, AlwaysAllow, its own process so that its RSS is its own) is filled with
//! ConfigMaps of one size over 16 keep-alive connections; the row prints the stored JSON (the
//! sum of the objects' serialisations, as a list returns them), the RSS growth over the fresh
//! server's and their ratio; then the peak RSS growth while eight clients list the whole
//! collection at once (`/proc/PID/clear_refs` resets the peak first); then the RSS after
//! deleting every object (the watch history still holds the last `--history-size` events, the
//! deleted objects among them), and after `--history-size` merge patches of one small object
//! pushed those out, against the fresh server's RSS plus the JSON the history then holds.
//!
//! Run with `cargo bench --bench memory` (Linux: RSS is read from `/proc`).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

/// Parallel clients filling the store.
const WRITERS: usize = 16;
/// Concurrent full lists.
const LISTERS: usize = 8;
/// The server's `--history-size` (its default).
const HISTORY: usize = 10_000;

struct Server {
    child: Child,
    url: String,
}

impl Server {
    fn start() -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_kubefake"))
            .args(["serve", "--http", "--authorization-mode", "AlwaysAllow"])
            .args(["--history-size", &HISTORY.to_string()])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("kubefake serve starts");
        let stdout = child.stdout.take().expect("stdout");
        let url = BufReader::new(stdout)
            .lines()
            .map_while(Result::ok)
            .find_map(|l| l.strip_prefix("KUBEFAKE_URL=").map(str::to_string))
            .expect("a KUBEFAKE_URL line");
        Server { child, url }
    }

    /// `VmRSS` or `VmHWM` (peak), in bytes.
    fn status(&self, field: &str) -> u64 {
        let text = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
            .expect("/proc status");
        text.lines()
            .find_map(|l| l.strip_prefix(field))
            .and_then(|rest| {
                rest.trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse::<u64>()
                    .ok()
            })
            .map(|kb| kb * 1024)
            .expect("a kB figure")
    }

    fn rss(&self) -> u64 {
        self.status("VmRSS:")
    }

    fn reset_peak(&self) {
        let _ = std::fs::write(format!("/proc/{}/clear_refs", self.child.id()), "5");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";

/// A ConfigMap whose JSON is about `size` bytes: ten keys sharing the data.
fn configmap(name: &str, size: usize) -> Value {
    let per_key = size.saturating_sub(200) / 10;
    let data: serde_json::Map<String, Value> = (0..10)
        .map(|i| {
            (
                format!("key-{i}"),
                json!(format!("{name}-{i}-{}", "x".repeat(per_key))),
            )
        })
        .collect();
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "labels": {"app": "bench", "shard": name.len().to_string()}},
        "data": data})
}

async fn fill(url: &str, count: usize, size: usize, prefix: &str) {
    let client = reqwest::Client::new();
    let mut tasks = Vec::new();
    for w in 0..WRITERS {
        let client = client.clone();
        let url = format!("{url}{CONFIGMAPS}");
        let prefix = prefix.to_string();
        tasks.push(tokio::spawn(async move {
            for i in (w..count).step_by(WRITERS) {
                let body = configmap(&format!("{prefix}-{i}"), size);
                let resp = client.post(&url).json(&body).send().await.expect("create");
                assert_eq!(resp.status(), 201, "create");
            }
        }));
    }
    for t in tasks {
        t.await.expect("writer");
    }
}

/// The stored JSON: the list body less its envelope is the items' serialisations.
async fn stored_bytes(url: &str) -> u64 {
    let body = reqwest::get(format!("{url}{CONFIGMAPS}"))
        .await
        .expect("list")
        .bytes()
        .await
        .expect("body");
    body.len() as u64
}

async fn concurrent_lists(url: &str) {
    let mut tasks = Vec::new();
    for _ in 0..LISTERS {
        let url = format!("{url}{CONFIGMAPS}");
        tasks.push(tokio::spawn(async move {
            let resp = reqwest::get(&url).await.expect("list");
            assert_eq!(resp.status(), 200);
            resp.bytes().await.expect("body").len()
        }));
    }
    for t in tasks {
        t.await.expect("lister");
    }
}

fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

async fn row(count: usize, size: usize) {
    let server = Server::start();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let fresh = server.rss();
    fill(&server.url, count, size, "cm").await;
    let stored = stored_bytes(&server.url).await;
    let full = server.rss();
    let grown = full.saturating_sub(fresh);
    server.reset_peak();
    concurrent_lists(&server.url).await;
    let list_peak = server.status("VmHWM:").saturating_sub(full);
    let resp = reqwest::Client::new()
        .delete(format!("{}{CONFIGMAPS}", server.url))
        .send()
        .await
        .expect("deletecollection");
    assert_eq!(resp.status(), 200);
    let deleted = server.rss();
    // Push the deleted objects out of the watch history: small updates of one object.
    let history = churn(&server.url, HISTORY).await;
    // Freed memory goes back to the system after a short delay.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let cleared = server.rss();
    println!(
        "| {count} x {size} B | {} | {} | {} | {:.1}x | {} ({:.2}x stored) | {} | {} ({} of history) | {:.2}x |",
        mb(fresh),
        mb(stored),
        mb(grown),
        grown as f64 / stored as f64,
        mb(list_peak),
        list_peak as f64 / stored as f64,
        mb(deleted.saturating_sub(fresh)),
        mb(cleared),
        mb(history),
        cleared as f64 / (fresh + history) as f64,
    );
}

/// `writes` merge patches of one small ConfigMap; returns the JSON the history then keeps
/// (each event holds the new state and the one before).
async fn churn(url: &str, writes: usize) -> u64 {
    let client = reqwest::Client::new();
    let url = format!("{url}{CONFIGMAPS}");
    let resp = client
        .post(&url)
        .json(&configmap("churn", 300))
        .send()
        .await
        .expect("create");
    assert_eq!(resp.status(), 201, "create");
    let mut last = 0;
    for i in 0..writes {
        let resp = client
            .patch(format!("{url}/churn"))
            .header("Content-Type", "application/merge-patch+json")
            .body(json!({"data": {"n": i.to_string()}}).to_string())
            .send()
            .await
            .expect("patch");
        assert_eq!(resp.status(), 200, "patch");
        last = resp.bytes().await.expect("body").len() as u64;
    }
    2 * last * writes as u64
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    if !std::path::Path::new("/proc/self/status").exists() {
        println!("memory bench: needs Linux /proc; skipped");
        return;
    }
    println!(
        "| objects | fresh server's RSS | stored JSON | RSS growth | RSS / JSON | peak growth, {LISTERS} concurrent lists | growth after deleting all | RSS after {HISTORY} more writes of one object | that / (fresh + history) |"
    );
    println!("| --- | --- | --- | --- | --- | --- | --- | --- | --- |");
    row(20_000, 1_000).await;
    row(10_000, 10_000).await;
}
