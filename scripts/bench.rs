//! Benchmarks for kubefake, run with `cargo bench --bench bench`.
//!
//! kubefake's selling point is that a test can have a real Kubernetes API server for the cost of
//! a function call, so this measures the numbers a test suite pays for, and checks them against
//! the targets of the issue:
//!
//! 1. **In-process start**: `kubefake::Server::start().await` alone, and until a first
//!    `GET /readyz` over HTTP has succeeded (a fresh connection, as a test's first request has).
//!    Median and p99 over many runs, each followed by `handle.shutdown().await`.
//!    Target: start under 5 ms.
//! 2. **Binary start**: `kubefake serve --port 0` as a child process, until it prints its
//!    `KUBEFAKE_URL=` line, and until a first `GET /readyz` over HTTPS (its default, with RBAC
//!    and the bootstrap policy) succeeded. This is what envtest-style
//!    CI scripts pay.
//! 3. **CRD create-to-established**: POST the CronTab CRD of `fixtures/crds/` to a fresh server
//!    and measure until (a) the response carries `Established=True` (kubefake sets it
//!    synchronously) and (b) the new resource's collection answers 200.
//!    Target: established under 5 ms.
//! 4. **Throughput** of create, get and list (a collection of 100 objects) of CronTabs,
//!    ConfigMaps and Deployments over HTTP/1.1
//!    keep-alive with 1, 8 and 16 concurrent clients, each its own `reqwest::Client`. The server runs
//!    in this process on the same multi-threaded tokio runtime as the clients, so both share the
//!    machine's CPUs: the numbers are a lower bound of what the server alone could do.
//!    Target: get over 10,000 req/s with 8 clients.
//! 5. **Watch fan-out**: 1, 100 and 1,000 concurrent watchers (each its own connection) of the
//!    CronTab collection from the resourceVersion after the CRD install, while 8 writer clients
//!    create E CronTabs as fast as they can, on a server built with a large `watch_buffer`.
//!    Events delivered per second, zero loss (every watcher gets exactly E ADDED events with
//!    strictly increasing resourceVersions and no ERROR), and the latency from each create's
//!    response to each watcher parsing its event (p50/p99 over all pairs). Then diagnosis rows
//!    for the 100-watcher case: the default buffer, the server on threads of its own with CPU
//!    accounting per side, watchers without JSON parsing, TCP_NODELAY on the server's sockets,
//!    one writer, and paced create rates; and single-threaded per-event costs.
//!    Target: 100 watchers receive 10,000 events each with zero loss and p99 under 5 ms.
//!
//! `cargo bench --bench bench -- watch` runs only the watch section; the other sections are
//! `start`, `binary`, `crd` and `throughput` (several may be given; none runs them all).
//!
//! Every server is a fresh one (a fresh port and store) unless stated otherwise, so samples do
//! not influence each other. Latencies are wall-clock times measured with `Instant`.

use std::collections::HashMap;
use std::error::Error;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use serde_json::{json, Value};
use tokio::sync::{mpsc, Barrier, Semaphore};

/// Errors abort the benchmark with a message; a benchmark has nothing to recover.
type Result<T> = std::result::Result<T, Box<dyn Error + Send + Sync>>;

/// Runs of the in-process start measurement (after `START_WARMUP` discarded ones).
const START_RUNS: usize = 200;
const START_WARMUP: usize = 5;
/// Runs of the binary start measurement (after one discarded run that warms the page cache).
const BINARY_RUNS: usize = 20;
/// Samples of the CRD measurement (after `CRD_WARMUP` discarded ones).
const CRD_RUNS: usize = 50;
const CRD_WARMUP: usize = 3;
/// How long each (operation, concurrency) throughput row runs.
const THROUGHPUT_DURATION: Duration = Duration::from_secs(2);
/// Objects in the collection that `get` and `list` read.
const LIST_SIZE: usize = 100;

/// The targets.
const TARGET_START: Duration = Duration::from_millis(5);
const TARGET_CRD_ESTABLISHED: Duration = Duration::from_millis(5);
const TARGET_GET_RPS_8_CLIENTS: f64 = 10_000.0;

const CRD_COLLECTION: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const CRONTABS: &str = "/apis/stable.example.com/v1/namespaces/default/crontabs";

fn main() {
    // cargo passes `--bench` (and any filter given on its command line). A section name
    // (`start`, `binary`, `crd`, `throughput`, `watch`) runs only the sections named; anything
    // else is ignored.
    let mut sections = Vec::new();
    for arg in std::env::args().skip(1) {
        if arg == "--bench" {
            continue;
        }
        match Section::ALL.iter().find(|s| s.name() == arg) {
            Some(section) => sections.push(*section),
            None => eprintln!("bench: ignoring argument {arg:?}"),
        }
    }
    if sections.is_empty() {
        sections = Section::ALL.to_vec();
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("building the tokio runtime");
    let threads = runtime.metrics().num_workers();
    if let Err(e) = runtime.block_on(run(threads, &sections)) {
        eprintln!("bench failed: {e}");
        std::process::exit(1);
    }
}

/// The parts of the benchmark, selectable by name on the command line.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Section {
    Start,
    Binary,
    Crd,
    Throughput,
    Watch,
    RequestLog,
}

impl Section {
    const ALL: [Section; 6] = [
        Section::Start,
        Section::Binary,
        Section::Crd,
        Section::Throughput,
        Section::Watch,
        Section::RequestLog,
    ];

    fn name(self) -> &'static str {
        match self {
            Section::Start => "start",
            Section::Binary => "binary",
            Section::Crd => "crd",
            Section::Throughput => "throughput",
            Section::Watch => "watch",
            Section::RequestLog => "requestlog",
        }
    }
}

async fn run(threads: usize, sections: &[Section]) -> Result<()> {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let crd = read_crd(&manifest_dir.join("fixtures/crds/resourcedefinition.yaml"))?;
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let selected = |s: Section| sections.contains(&s);

    let mut start = None;
    if selected(Section::Start) {
        eprintln!("measuring in-process start ({START_RUNS} runs)...");
        start = Some(bench_in_process_start().await?);
    }
    let mut binary = None;
    if selected(Section::Binary) {
        eprintln!("measuring binary start ({BINARY_RUNS} runs)...");
        binary = Some(bench_binary_start(manifest_dir).await?);
    }
    let mut crd_latency = None;
    if selected(Section::Crd) {
        eprintln!("measuring CRD create-to-established ({CRD_RUNS} runs)...");
        crd_latency = Some(bench_crd(&crd).await?);
    }
    let mut throughput = Vec::new();
    if selected(Section::Throughput) {
        eprintln!("measuring throughput ({THROUGHPUT_DURATION:?} per row)...");
        for subject in [Subject::CronTab, Subject::ConfigMap, Subject::Deployment] {
            for op in [Op::Create, Op::Get, Op::List] {
                for clients in [1, 8, 16] {
                    let server = kubefake::Server::builder();
                    let rate = bench_throughput(server, &crd, subject, op, clients).await?;
                    throughput.push((subject, op, clients, rate));
                }
            }
        }
    }
    let mut watch = None;
    if selected(Section::Watch) {
        watch = Some(bench_watch(&crd).await?);
    }
    let mut request_log = Vec::new();
    if selected(Section::RequestLog) {
        eprintln!("measuring the request log's cost ({REQUEST_LOG_ROUNDS} rounds, log on and off alternating)...");
        request_log = bench_request_log(&crd).await?;
    }

    println!();
    println!("kubefake benchmark ({cpus} CPUs; in-process servers run on this binary's multi-threaded tokio runtime, {threads} workers, shared with the clients)");
    if start.is_some() || binary.is_some() || crd_latency.is_some() {
        println!();
        let mut table = LatencyTable::new();
        if let Some(start) = &start {
            table.row(
                "in-process Server::start(), first (cold) run",
                &start.cold,
                None,
            );
            table.row(
                "in-process Server::start()",
                &start.start,
                Some(TARGET_START),
            );
            table.row("in-process start + first GET /readyz", &start.ready, None);
        }
        if let Some(binary) = &binary {
            table.row(
                &format!("binary ({}): spawn -> KUBEFAKE_URL line", binary.profile),
                &binary.url_line,
                None,
            );
            table.row(
                &format!("binary ({}): spawn -> first GET /readyz", binary.profile),
                &binary.ready,
                None,
            );
        }
        if let Some(crd_latency) = &crd_latency {
            table.row(
                "CRD POST -> response with Established=True",
                &crd_latency.established,
                Some(TARGET_CRD_ESTABLISHED),
            );
            table.row(
                "CRD POST -> GET crontabs returns 200",
                &crd_latency.served,
                None,
            );
        }
        table.print();
        if let Some(crd_latency) = &crd_latency {
            println!(
                "  (CRD collection answered 200 on the first GET in {}/{} samples)",
                crd_latency.served_first_try,
                crd_latency.served.len()
            );
        }
    }
    if !throughput.is_empty() {
        println!();
        println!(
            "Throughput: HTTP/1.1 keep-alive, in-process server, {:?} per row, one reqwest::Client per client",
            THROUGHPUT_DURATION
        );
        println!(
            "{:<36} {:>8} {:>10} {:>12}  {:<18} result",
            "operation", "clients", "requests", "req/s", "target"
        );
        for (subject, op, clients, rate) in &throughput {
            let (target, result) =
                if *op == Op::Get && *clients == 8 && *subject == Subject::CronTab {
                    (
                        format!("> {TARGET_GET_RPS_8_CLIENTS:.0} req/s"),
                        pass_fail(rate.per_second() > TARGET_GET_RPS_8_CLIENTS),
                    )
                } else {
                    (String::new(), "")
                };
            let row = format!(
                "{:<36} {:>8} {:>10} {:>12.0}  {:<18} {}",
                op.describe(*subject),
                clients,
                rate.requests,
                rate.per_second(),
                target,
                result
            );
            println!("{}", row.trim_end());
        }
        for (subject, _, _, rate) in throughput.iter().filter(|t| t.1 == Op::List && t.2 == 1) {
            println!(
                "  (a list response of {LIST_SIZE} {}s is {} bytes of JSON)",
                subject.kind(),
                rate.list_bytes
            );
        }
    }
    if let Some(watch) = &watch {
        println!();
        print_watch(watch);
    }
    if !request_log.is_empty() {
        println!();
        print_request_log(&request_log);
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// The request log's cost
// ---------------------------------------------------------------------------------------------

/// Rounds of the request-log comparison; each runs every row with the log on, then off.
const REQUEST_LOG_ROUNDS: usize = 3;

/// One row of the comparison: an operation and client count, req/s with the log on and off
/// in each round.
struct RequestLogRow {
    op: Op,
    clients: usize,
    on: Vec<f64>,
    off: Vec<f64>,
    /// The log on and the audit log written to a file.
    audit: Vec<f64>,
}

/// CronTab create and get with the request log on (the default size), off (size 0), and on
/// with the audit log written to a file, alternating so that the machine's drift hits all
/// alike.
async fn bench_request_log(crd: &Value) -> Result<Vec<RequestLogRow>> {
    let dir = tempfile::tempdir()?;
    let mut rows = Vec::new();
    for op in [Op::Create, Op::Get] {
        for clients in [1, 8] {
            let mut row = RequestLogRow {
                op,
                clients,
                on: Vec::new(),
                off: Vec::new(),
                audit: Vec::new(),
            };
            for round in 0..REQUEST_LOG_ROUNDS {
                let on = kubefake::Server::builder();
                let off = kubefake::Server::builder().request_log_size(0);
                let file = dir.path().join(format!("audit-{round}.log"));
                let audit = kubefake::Server::builder().audit_log_path(file);
                let sides = [
                    (on, &mut row.on),
                    (off, &mut row.off),
                    (audit, &mut row.audit),
                ];
                for (server, side) in sides {
                    let rate = bench_throughput(server, crd, Subject::CronTab, op, clients).await?;
                    side.push(rate.per_second());
                }
            }
            rows.push(row);
        }
    }
    Ok(rows)
}

fn print_request_log(rows: &[RequestLogRow]) {
    let median = |v: &[f64]| {
        let mut v = v.to_vec();
        v.sort_by(f64::total_cmp);
        v.get(v.len() / 2).copied().unwrap_or(0.0)
    };
    println!("Request log cost: CronTab req/s, medians of {REQUEST_LOG_ROUNDS} alternating rounds of {THROUGHPUT_DURATION:?}");
    println!(
        "{:<36} {:>8} {:>12} {:>12} {:>8} {:>12} {:>8}",
        "operation", "clients", "log on", "log off", "cost", "+audit", "cost"
    );
    let cost = |with: f64, without: f64| {
        if without > 0.0 {
            (without - with) / without * 100.0
        } else {
            0.0
        }
    };
    for row in rows {
        let (on, off, audit) = (median(&row.on), median(&row.off), median(&row.audit));
        println!(
            "{:<36} {:>8} {:>12.0} {:>12.0} {:>7.1}% {:>12.0} {:>7.1}%",
            row.op.describe(Subject::CronTab),
            row.clients,
            on,
            off,
            cost(on, off),
            audit,
            cost(audit, on)
        );
    }
}

// ---------------------------------------------------------------------------------------------
// 1. In-process start
// ---------------------------------------------------------------------------------------------

struct StartTimes {
    /// The very first start of the process (lazy initialisation, cold caches).
    cold: Vec<Duration>,
    /// `Server::start().await` alone.
    start: Vec<Duration>,
    /// `Server::start().await` plus a first successful `GET /readyz`.
    ready: Vec<Duration>,
}

async fn bench_in_process_start() -> Result<StartTimes> {
    // No connection pooling: every server is new, so its first request opens a connection, as a
    // test's first request does. It also avoids reusing a pooled connection to a port the OS
    // handed out again.
    let client = fresh_connection_client()?;
    let mut times = StartTimes {
        cold: Vec::new(),
        start: Vec::new(),
        ready: Vec::new(),
    };
    for run in 0..START_WARMUP + START_RUNS {
        let t0 = Instant::now();
        let server = kubefake::Server::start()
            .await
            .map_err(|e| format!("starting the server: {e}"))?;
        let started = t0.elapsed();
        get_ok(&client, &format!("{}/readyz", server.url())).await?;
        let ready = t0.elapsed();
        server.shutdown().await;
        if run == 0 {
            times.cold.push(started);
        }
        if run >= START_WARMUP {
            times.start.push(started);
            times.ready.push(ready);
        }
    }
    Ok(times)
}

// ---------------------------------------------------------------------------------------------
// 2. Binary start
// ---------------------------------------------------------------------------------------------

struct BinaryTimes {
    /// "release" or "debug": a debug binary is much slower, so the table says which one ran.
    profile: &'static str,
    /// Spawn until the `KUBEFAKE_URL=` line was read.
    url_line: Vec<Duration>,
    /// Spawn until a first `GET /readyz` succeeded.
    ready: Vec<Duration>,
}

async fn bench_binary_start(manifest_dir: &Path) -> Result<BinaryTimes> {
    let (binary, profile) = locate_binary(manifest_dir)?;
    let client = fresh_connection_client()?;
    let mut times = BinaryTimes {
        profile,
        url_line: Vec::new(),
        ready: Vec::new(),
    };
    for run in 0..=BINARY_RUNS {
        let t0 = Instant::now();
        // Spawning and reading the pipe block, so they run off the async workers.
        let binary_path = binary.clone();
        let (child, url) = tokio::task::spawn_blocking(move || spawn_and_read_url(&binary_path))
            .await
            .map_err(|e| format!("joining the spawn task: {e}"))??;
        let url_line = t0.elapsed();
        let readyz = get_ok(&client, &format!("{url}/readyz")).await;
        let ready = t0.elapsed();
        stop_child(child).await;
        readyz?;
        // The first run only warms the page cache and the dynamic loader.
        if run > 0 {
            times.url_line.push(url_line);
            times.ready.push(ready);
        }
    }
    Ok(times)
}

/// `target/release/kubefake`, else `target/debug/kubefake`, else builds the release binary.
/// (`cargo bench` itself builds the binary into `target/release`, so the first normally wins.)
fn locate_binary(manifest_dir: &Path) -> Result<(PathBuf, &'static str)> {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| manifest_dir.join("target"));
    let exe = format!("kubefake{}", std::env::consts::EXE_SUFFIX);
    let release = target.join("release").join(&exe);
    let debug = target.join("debug").join(&exe);
    if release.is_file() {
        return Ok((release, "release"));
    }
    if debug.is_file() {
        return Ok((debug, "debug"));
    }
    eprintln!("no kubefake binary found; running cargo build --release --bin kubefake");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .args(["build", "--release", "--bin", "kubefake"])
        .current_dir(manifest_dir)
        .status()
        .map_err(|e| format!("running cargo build: {e}"))?;
    if !status.success() || !release.is_file() {
        return Err(format!(
            "cargo build --release --bin kubefake failed ({status}); {} is missing",
            release.display()
        )
        .into());
    }
    Ok((release, "release"))
}

/// Starts `kubefake serve --port 0` and reads its stdout until `KUBEFAKE_URL=<url>`.
fn spawn_and_read_url(binary: &Path) -> Result<(Child, String)> {
    let mut child = Command::new(binary)
        .args(["serve", "--port", "0"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        // Its log goes to stderr; keep the table readable.
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("spawning {}: {e}", binary.display()))?;
    let stdout = child
        .stdout
        .take()
        .ok_or("the child's stdout was not captured")?;
    let mut lines = BufReader::new(stdout).lines();
    let url = loop {
        match lines.next() {
            Some(Ok(line)) => {
                if let Some(url) = line.strip_prefix("KUBEFAKE_URL=") {
                    break url.trim().to_string();
                }
            }
            Some(Err(e)) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("reading the child's stdout: {e}").into());
            }
            None => {
                let status = child.wait();
                return Err(format!(
                    "kubefake serve exited before printing KUBEFAKE_URL ({status:?})"
                )
                .into());
            }
        }
    };
    // The rest of stdout (the KUBECONFIG= line) is left unread: the pipe buffer holds it, and
    // the child never writes more than that.
    Ok((child, url))
}

/// Stops a `kubefake serve` child: SIGTERM first, so it removes its temporary kubeconfig, then
/// SIGKILL if it has not exited within a few seconds.
async fn stop_child(mut child: Child) {
    #[cfg(unix)]
    {
        let terminated = Command::new("kill")
            .args(["-TERM", &child.id().to_string()])
            .status()
            .is_ok_and(|s| s.success());
        if terminated {
            let deadline = Instant::now() + Duration::from_secs(5);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = child.try_wait() {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(2)).await;
            }
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}

// ---------------------------------------------------------------------------------------------
// 3. CRD create-to-established
// ---------------------------------------------------------------------------------------------

struct CrdTimes {
    /// POST sent until its response (carrying `Established=True`) was read.
    established: Vec<Duration>,
    /// POST sent until `GET .../crontabs` returned 200.
    served: Vec<Duration>,
    /// Samples whose first GET of the collection already returned 200.
    served_first_try: usize,
}

async fn bench_crd(crd: &Value) -> Result<CrdTimes> {
    let body = serde_json::to_vec(crd)?;
    let mut times = CrdTimes {
        established: Vec::new(),
        served: Vec::new(),
        served_first_try: 0,
    };
    for run in 0..CRD_WARMUP + CRD_RUNS {
        let server = kubefake::Server::start()
            .await
            .map_err(|e| format!("starting the server: {e}"))?;
        // A fresh client per server, its connection opened before the clock starts, so the
        // sample is the API's latency rather than a TCP handshake.
        let client = keep_alive_client()?;
        let base = server.url().to_string();
        get_ok(&client, &format!("{base}/readyz")).await?;

        let t0 = Instant::now();
        let response = client
            .post(format!("{base}{CRD_COLLECTION}"))
            .header("content-type", "application/json")
            .body(body.clone())
            .send()
            .await
            .map_err(|e| format!("POST of the CRD: {e}"))?;
        let status = response.status();
        let created: Value = response
            .json()
            .await
            .map_err(|e| format!("reading the CRD POST response: {e}"))?;
        if status.as_u16() != 201 {
            return Err(format!("POST of the CRD returned {status}: {created}").into());
        }
        if !condition_true(&created, "Established") {
            return Err(format!(
                "the CRD POST response is not Established=True: {}",
                created["status"]
            )
            .into());
        }
        let established = t0.elapsed();

        // Poll until the new resource is served, in case it ever becomes asynchronous.
        let collection = format!("{base}{CRONTABS}");
        let deadline = t0 + Duration::from_secs(5);
        let mut attempts = 0;
        let served = loop {
            attempts += 1;
            let response = client
                .get(&collection)
                .send()
                .await
                .map_err(|e| format!("GET {collection}: {e}"))?;
            let status = response.status();
            // Read the body so the connection can be reused.
            let _ = response.bytes().await;
            if status.is_success() {
                break t0.elapsed();
            }
            if Instant::now() > deadline {
                return Err(format!("{collection} still returns {status} after 5 s").into());
            }
            tokio::task::yield_now().await;
        };
        server.shutdown().await;
        if run >= CRD_WARMUP {
            times.established.push(established);
            times.served.push(served);
            if attempts == 1 {
                times.served_first_try += 1;
            }
        }
    }
    Ok(times)
}

/// Whether `status.conditions` of an object holds `type` with status `"True"`.
fn condition_true(object: &Value, kind: &str) -> bool {
    object["status"]["conditions"]
        .as_array()
        .is_some_and(|conditions| {
            conditions
                .iter()
                .any(|c| c["type"] == kind && c["status"] == "True")
        })
}

// ---------------------------------------------------------------------------------------------
// 4. Throughput
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Op {
    /// POST a CronTab with a unique name.
    Create,
    /// GET one existing CronTab.
    Get,
    /// GET the collection of `LIST_SIZE` CronTabs.
    List,
}

impl Op {
    fn describe(self, subject: Subject) -> String {
        let kind = subject.kind().to_ascii_lowercase();
        match self {
            Op::Create => format!("create (POST {kind})"),
            Op::Get => format!("get (GET one {kind})"),
            Op::List => format!("list (GET {LIST_SIZE} {kind}s)"),
        }
    }
}

/// What the throughput rows create, get and list: a custom resource and two built-in kinds.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Subject {
    /// The CronTab of the CRD walkthrough (schema pipeline).
    CronTab,
    /// A core/v1 ConfigMap with two keys.
    ConfigMap,
    /// An apps/v1 Deployment with one container (typed decode and defaulting).
    Deployment,
}

impl Subject {
    fn kind(self) -> &'static str {
        match self {
            Subject::CronTab => "CronTab",
            Subject::ConfigMap => "ConfigMap",
            Subject::Deployment => "Deployment",
        }
    }

    fn collection(self) -> &'static str {
        match self {
            Subject::CronTab => CRONTABS,
            Subject::ConfigMap => "/api/v1/namespaces/default/configmaps",
            Subject::Deployment => "/apis/apps/v1/namespaces/default/deployments",
        }
    }

    fn object(self, name: &str) -> Value {
        match self {
            Subject::CronTab => crontab(name),
            Subject::ConfigMap => json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": name}, "data": {"mode": "fast", "level": "3"}}),
            Subject::Deployment => json!({"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": name, "labels": {"app": "web"}},
                "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                    "template": {"metadata": {"labels": {"app": "web"}},
                        "spec": {"containers": [{"name": "web", "image": "nginx:1.27",
                            "ports": [{"containerPort": 80}]}]}}}}),
        }
    }
}

struct Rate {
    requests: u64,
    /// Size of the list response body (the same for every row), for context.
    list_bytes: usize,
    /// Sum over the clients of each one's requests per second of its own run time.
    per_second: f64,
}

impl Rate {
    fn per_second(&self) -> f64 {
        self.per_second
    }
}

/// Runs `op` with `clients` concurrent clients for `THROUGHPUT_DURATION` against a fresh server
/// holding the CronTab CRD and `LIST_SIZE` objects of the subject.
async fn bench_throughput(
    server: kubefake::ServerBuilder,
    crd: &Value,
    subject: Subject,
    op: Op,
    clients: usize,
) -> Result<Rate> {
    let server = server
        .start()
        .await
        .map_err(|e| format!("starting the server: {e}"))?;
    let base = server.url().to_string();
    let setup = keep_alive_client()?;
    expect_status(
        setup
            .post(format!("{base}{CRD_COLLECTION}"))
            .json(crd)
            .send()
            .await,
        201,
        "POST of the CRD",
    )
    .await?;
    let collection = subject.collection();
    for i in 0..LIST_SIZE {
        expect_status(
            setup
                .post(format!("{base}{collection}"))
                .json(&subject.object(&format!("seed-{i}")))
                .send()
                .await,
            201,
            "POST of a seed object",
        )
        .await?;
    }

    // Guard the list numbers: the collection must hold the seeded objects (and, for
    // ConfigMaps, only the namespace's own kube-root-ca.crt besides).
    let list_body = setup
        .get(format!("{base}{collection}"))
        .send()
        .await
        .map_err(|e| format!("GET of the seeded collection: {e}"))?
        .bytes()
        .await
        .map_err(|e| format!("reading the seeded collection: {e}"))?;
    let list: Value = serde_json::from_slice(&list_body)?;
    let items = list["items"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|i| i["metadata"]["name"] != "kube-root-ca.crt")
        .count();
    if items != LIST_SIZE {
        return Err(format!("the seeded collection holds {items} items, not {LIST_SIZE}").into());
    }

    // Every client opens its connection and does one request before the barrier, so the timed
    // window holds only keep-alive requests.
    let barrier = Arc::new(Barrier::new(clients));
    let mut tasks = Vec::new();
    for id in 0..clients {
        let barrier = barrier.clone();
        let base = base.clone();
        tasks.push(tokio::spawn(async move {
            let client = keep_alive_client()?;
            let mut seq = 0u64;
            one_request(&client, &base, subject, op, id, &mut seq).await?;
            barrier.wait().await;
            let t0 = Instant::now();
            let mut done = 0u64;
            while t0.elapsed() < THROUGHPUT_DURATION {
                one_request(&client, &base, subject, op, id, &mut seq).await?;
                done += 1;
            }
            Ok::<_, Box<dyn Error + Send + Sync>>((done, t0.elapsed()))
        }));
    }
    let mut rate = Rate {
        requests: 0,
        list_bytes: list_body.len(),
        per_second: 0.0,
    };
    for task in tasks {
        let (done, elapsed) = task
            .await
            .map_err(|e| format!("joining a client task: {e}"))??;
        rate.requests += done;
        rate.per_second += done as f64 / elapsed.as_secs_f64();
    }
    server.shutdown().await;
    Ok(rate)
}

/// One request of `op`, failing on anything but its success status.
async fn one_request(
    client: &reqwest::Client,
    base: &str,
    subject: Subject,
    op: Op,
    client_id: usize,
    seq: &mut u64,
) -> Result<()> {
    let collection = subject.collection();
    match op {
        Op::Create => {
            *seq += 1;
            let name = format!("bench-{client_id}-{seq}");
            let response = client
                .post(format!("{base}{collection}"))
                .json(&subject.object(&name))
                .send()
                .await;
            expect_status(response, 201, "create").await
        }
        Op::Get => {
            let response = client
                .get(format!("{base}{collection}/seed-0"))
                .send()
                .await;
            expect_status(response, 200, "get").await
        }
        Op::List => {
            let response = client.get(format!("{base}{collection}")).send().await;
            expect_status(response, 200, "list").await
        }
    }
}

/// A CronTab like `fixtures/objects/my-crontab.yaml`.
fn crontab(name: &str) -> Value {
    json!({
        "apiVersion": "stable.example.com/v1",
        "kind": "CronTab",
        "metadata": {"name": name},
        "spec": {"cronSpec": "* * * * */5", "image": "my-awesome-cron-image", "replicas": 1},
    })
}

// ---------------------------------------------------------------------------------------------
// 5. Watch fan-out
// ---------------------------------------------------------------------------------------------

/// Rows of the watch measurement: (concurrent watchers, CronTabs created while they watch).
const WATCH_ROWS: [(usize, usize); 3] = [(1, 10_000), (100, 10_000), (1_000, 2_000)];
/// `watch_buffer` of the watch servers: how many events a watcher may fall behind before it is
/// sent 410 Expired. The default (1024) is far below a burst of 10,000 creates.
const WATCH_BUFFER: usize = 200_000;
/// Concurrent writer clients creating the CronTabs, so the writer is not one request at a time.
const WATCH_WRITERS: usize = 8;
/// Watch connections being opened at once (the listener's accept backlog is finite).
const WATCH_CONNECT_CONCURRENCY: usize = 64;
/// A watcher that receives nothing for this long gives up (which shows up as loss).
const WATCH_IDLE_TIMEOUT: Duration = Duration::from_secs(30);
/// CronTabs created in the paced diagnosis rows.
const WATCH_DIAGNOSIS_EVENTS: usize = 2_000;
/// Create rates of the paced diagnosis rows (100 watchers).
const WATCH_PACES: [f64; 4] = [250.0, 500.0, 1_000.0, 1_500.0];
/// Problems listed per row (the rest are counted).
const WATCH_PROBLEMS_SHOWN: usize = 5;

/// The target: 100 watchers receive 10,000 events each with zero loss and p99 < 5 ms.
const TARGET_WATCHERS: usize = 100;
const TARGET_WATCH_EVENTS: usize = 10_000;
const TARGET_WATCH_P99: Duration = Duration::from_millis(5);

/// One row of the watch measurement.
struct WatchRow {
    config: WatchConfig,
    /// CPU time of this process (split into server and clients in `split` rows) and of the
    /// rest of the machine, from the first create until the last watcher finished.
    cpu: CpuSplit,
    /// Whether the server's accepted sockets had TCP_NODELAY on (`None`: not inspected).
    server_nodelay: Option<bool>,
    /// Peak bytes queued in the kernel between the server and the watchers.
    sockets: SocketBacklog,
    watchers: usize,
    /// CronTabs created (E): every watcher must receive exactly this many ADDED events.
    events: usize,
    /// First create sent until the last create's response arrived.
    write_time: Duration,
    /// First create sent until the last watcher parsed its last event.
    deliver_time: Duration,
    /// Last create's response until the last watcher parsed its last event.
    drain: Duration,
    /// ADDED events of this row's CronTabs received, over all watchers.
    delivered: u64,
    /// Watchers that received exactly `events` ADDED events, strictly increasing
    /// resourceVersions, and nothing else (no ERROR, no duplicate, no unknown object).
    lossless_watchers: usize,
    /// The first few problems seen (which watcher, what).
    problems: Vec<String>,
    problem_count: usize,
    /// Write response -> event receipt over every (watcher, event) pair.
    latency: LatencySummary,
}

impl WatchRow {
    fn zero_loss(&self) -> bool {
        self.lossless_watchers == self.watchers && self.problem_count == 0
    }

    fn delivered_per_second(&self) -> f64 {
        self.delivered as f64 / self.deliver_time.as_secs_f64()
    }

    fn creates_per_second(&self) -> f64 {
        self.events as f64 / self.write_time.as_secs_f64()
    }
}

/// Percentiles of the write-response-to-receipt latency.
#[derive(Default)]
struct LatencySummary {
    /// (watcher, event) pairs measured.
    pairs: usize,
    /// Pairs whose event was parsed before the writer had read the create's response; they
    /// count as 0.
    clamped: usize,
    p50: Duration,
    p90: Duration,
    p99: Duration,
    max: Duration,
}

impl LatencySummary {
    fn of(mut samples: Vec<Duration>, clamped: usize) -> Self {
        samples.sort_unstable();
        LatencySummary {
            pairs: samples.len(),
            clamped,
            p50: percentile(&samples, 50.0),
            p90: percentile(&samples, 90.0),
            p99: percentile(&samples, 99.0),
            max: samples.last().copied().unwrap_or_default(),
        }
    }
}

/// How watchers read their streams.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Parse {
    /// serde_json into a small struct: type, metadata.name, metadata.resourceVersion.
    Json,
    /// A byte search for `"name":"w-<n>` per line, no JSON parsing (so no type or
    /// resourceVersion checks): what is left when the client's JSON cost is taken out.
    Scan,
}

/// One configuration of the watch measurement.
#[derive(Clone, Copy)]
struct WatchConfig {
    watchers: usize,
    /// CronTabs created (E).
    events: usize,
    writers: usize,
    /// Creates per second, spread evenly (open loop); `None`: as fast as the writers can.
    pace: Option<f64>,
    /// The server's `watch_buffer`.
    buffer: usize,
    parse: Parse,
    /// Run the server on its own runtime (`SERVER_THREADS` threads named `kf-server`) and
    /// account the CPU time of its threads and the client threads separately.
    split: bool,
    /// Turn on TCP_NODELAY on the server's accepted sockets (from this process, see
    /// `server_sockets`) once watchers and writers are connected, for a server that leaves
    /// Nagle's algorithm on.
    nodelay: bool,
}

impl WatchConfig {
    fn main_row(watchers: usize, events: usize) -> Self {
        WatchConfig {
            watchers,
            events,
            writers: WATCH_WRITERS,
            pace: None,
            buffer: WATCH_BUFFER,
            parse: Parse::Json,
            split: false,
            nodelay: false,
        }
    }

    fn describe(&self) -> String {
        let mut parts = vec![match self.pace {
            Some(rate) => format!("paced {rate:.0} creates/s"),
            None if self.writers == 1 => "1 writer, one create at a time".to_string(),
            None => format!("{} writers, flat out", self.writers),
        }];
        if self.buffer != WATCH_BUFFER {
            parts.push(format!("watch_buffer {}", self.buffer));
        }
        if self.parse == Parse::Scan {
            parts.push("no JSON parse".to_string());
        }
        if self.split {
            parts.push("server own runtime".to_string());
        }
        if self.nodelay {
            parts.push("TCP_NODELAY".to_string());
        }
        parts.join(", ")
    }
}

/// The watch section: the main rows, then the rows that explain them.
struct WatchReport {
    /// The server set TCP_NODELAY on every accepted socket of the main rows.
    server_nodelay: bool,
    /// /proc/loadavg when the section started.
    load_average: String,
    rows: Vec<WatchRow>,
    diagnosis: Vec<WatchRow>,
    micro: MicroCosts,
}

/// Threads of the server's own runtime in the `split` rows; the clients keep the bench's
/// runtime (also one worker per CPU), so those rows oversubscribe the CPUs two to one.
const SERVER_THREADS: usize = 2;
const SERVER_THREAD_NAME: &str = "kf-server";

async fn bench_watch(crd: &Value) -> Result<WatchReport> {
    let load_average = std::fs::read_to_string("/proc/loadavg")
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|_| "unknown".to_string());
    let mut rows = Vec::new();
    for (watchers, events) in WATCH_ROWS {
        let config = WatchConfig::main_row(watchers, events);
        eprintln!(
            "measuring watch fan-out: {watchers} watcher(s), {events} creates by {WATCH_WRITERS} writers..."
        );
        rows.push(bench_watch_row(crd, config, None).await?);
    }

    let server_runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(SERVER_THREADS)
        .thread_name(SERVER_THREAD_NAME)
        .enable_all()
        .build()
        .map_err(|e| format!("building the server runtime: {e}"))?;
    let base = WatchConfig::main_row(TARGET_WATCHERS, TARGET_WATCH_EVENTS);
    let few = WATCH_DIAGNOSIS_EVENTS;
    // The TCP_NODELAY rows only say something about a server that leaves Nagle's algorithm on.
    let server_nodelay = rows.iter().all(|r| r.server_nodelay == Some(true));
    let mut configs = vec![
        // Where the backlog of the flat-out row sits: with the default buffer, a watch task more
        // than 1024 events behind the store would get a 410 ERROR.
        WatchConfig {
            buffer: kubefake::Options::default().watch_buffer,
            ..base
        },
        // Who spends the CPU: the server on threads of its own ...
        WatchConfig {
            split: true,
            ..base
        },
        // ... and what the watchers' JSON parsing costs.
        WatchConfig {
            split: true,
            parse: Parse::Scan,
            ..base
        },
        // Nagle's algorithm on the server's sockets, if the server does not set TCP_NODELAY.
        WatchConfig {
            split: true,
            nodelay: true,
            ..base
        },
        WatchConfig {
            nodelay: true,
            ..base
        },
        // One writer, one create at a time: a controller's pace rather than a flood, with the
        // target's 100 watchers and 10,000 events.
        WatchConfig { writers: 1, ..base },
        WatchConfig {
            writers: 1,
            nodelay: true,
            ..base
        },
    ];
    // Latency against load.
    for rate in WATCH_PACES {
        for nodelay in [false, true] {
            configs.push(WatchConfig {
                pace: Some(rate),
                events: few,
                nodelay,
                ..base
            });
        }
    }
    if server_nodelay {
        configs.retain(|c| !c.nodelay);
    }
    let mut diagnosis = Vec::new();
    for config in configs {
        eprintln!(
            "watch diagnosis: {} watchers, {} creates, {}...",
            config.watchers,
            config.events,
            config.describe()
        );
        let runtime = config.split.then(|| server_runtime.handle().clone());
        diagnosis.push(bench_watch_row(crd, config, runtime).await?);
    }
    // Dropping a runtime blocks, which an async context must not do.
    server_runtime.shutdown_background();
    let micro = micro_costs(crd).await?;
    Ok(WatchReport {
        server_nodelay,
        load_average,
        rows,
        diagnosis,
        micro,
    })
}

/// A server with the CronTab CRD and a large watch buffer; returns it, its URL and the
/// resourceVersion right after the CRD was installed.
async fn watch_server(
    crd: &Value,
    buffer: usize,
    runtime: Option<tokio::runtime::Handle>,
) -> Result<(kubefake::ServerHandle, String, String)> {
    let builder = kubefake::Server::builder().watch_buffer(buffer);
    // The server spawns its tasks (listener, connections, watch streams) on the runtime it is
    // started on.
    let server = match runtime {
        Some(runtime) => runtime
            .spawn(builder.start())
            .await
            .map_err(|e| format!("joining the server start: {e}"))?,
        None => builder.start().await,
    }
    .map_err(|e| format!("starting the server: {e}"))?;
    let base = server.url().to_string();
    let setup = keep_alive_client()?;
    expect_status(
        setup
            .post(format!("{base}{CRD_COLLECTION}"))
            .json(crd)
            .send()
            .await,
        201,
        "POST of the CRD",
    )
    .await?;
    let list: Value = setup
        .get(format!("{base}{CRONTABS}"))
        .send()
        .await
        .map_err(|e| format!("GET of the empty collection: {e}"))?
        .json()
        .await
        .map_err(|e| format!("reading the empty collection: {e}"))?;
    let rv = list["metadata"]["resourceVersion"]
        .as_str()
        .ok_or_else(|| format!("the collection has no metadata.resourceVersion: {list}"))?
        .to_string();
    Ok((server, base, rv))
}

async fn bench_watch_row(
    crd: &Value,
    config: WatchConfig,
    runtime: Option<tokio::runtime::Handle>,
) -> Result<WatchRow> {
    let WatchConfig {
        watchers, events, ..
    } = config;
    let (server, base, rv) = watch_server(crd, config.buffer, runtime).await?;
    let watch_url = format!("{base}{CRONTABS}?watch=1&resourceVersion={rv}");

    // Every watcher has its response headers (so the server has subscribed it) before the first
    // create; the resourceVersion would replay anything missed anyway.
    let connect = Arc::new(Semaphore::new(WATCH_CONNECT_CONCURRENCY));
    let (ready_tx, mut ready_rx) = mpsc::unbounded_channel();
    let mut watcher_tasks = Vec::with_capacity(watchers);
    for _ in 0..watchers {
        watcher_tasks.push(tokio::spawn(run_watcher(
            watch_url.clone(),
            events,
            config.parse,
            connect.clone(),
            ready_tx.clone(),
        )));
    }
    drop(ready_tx);
    for _ in 0..watchers {
        match tokio::time::timeout(WATCH_IDLE_TIMEOUT, ready_rx.recv()).await {
            Ok(Some(Ok(()))) => {}
            Ok(Some(Err(e))) => return Err(format!("opening a watch: {e}").into()),
            Ok(None) => return Err("a watcher ended before its watch was open".into()),
            Err(_) => {
                return Err(format!(
                    "watch responses not received within {WATCH_IDLE_TIMEOUT:?} of the request"
                )
                .into())
            }
        }
    }

    // Writers open their connections before the clock starts.
    let create_url = format!("{base}{CRONTABS}");
    let mut clients = Vec::with_capacity(config.writers);
    for _ in 0..config.writers {
        let client = keep_alive_client()?;
        get_ok(&client, &format!("{base}/readyz")).await?;
        clients.push(client);
    }
    let sockets_seen = server_sockets(server.addr().port(), config.nodelay);
    // Every watcher and writer connection, at least.
    if config.nodelay && sockets_seen.accepted < watchers + config.writers {
        return Err(format!(
            "found {} server sockets to set TCP_NODELAY on, expected {}",
            sockets_seen.accepted,
            watchers + config.writers
        )
        .into());
    }
    let next = Arc::new(AtomicUsize::new(0));
    let sampler = SocketSampler::start(server.addr().port());
    let cpu_before = thread_cpu();
    let t0 = Instant::now();
    let pace = config.pace.map(|rate| (t0, rate));
    let writer_tasks: Vec<_> = clients
        .into_iter()
        .map(|client| {
            let writer = run_writer(client, create_url.clone(), next.clone(), events, pace);
            tokio::spawn(writer)
        })
        .collect();
    let mut responses: Vec<Option<Instant>> = vec![None; events];
    let mut write_end = t0;
    for task in writer_tasks {
        let created = task
            .await
            .map_err(|e| format!("joining a writer task: {e}"))??;
        for (index, at) in created {
            responses[index] = Some(at);
            write_end = write_end.max(at);
        }
    }
    let mut outcomes = Vec::with_capacity(watchers);
    for task in watcher_tasks {
        outcomes.push(
            task.await
                .map_err(|e| format!("joining a watcher task: {e}"))?,
        );
    }
    let cpu = CpuSplit::since(&cpu_before);
    let sockets = sampler.finish();
    server.shutdown().await;

    let mut row = WatchRow {
        config,
        server_nodelay: sockets_seen.server_sets_nodelay(),
        cpu,
        sockets,
        watchers,
        events,
        write_time: write_end - t0,
        deliver_time: Duration::ZERO,
        drain: Duration::ZERO,
        delivered: 0,
        lossless_watchers: 0,
        problems: Vec::new(),
        problem_count: 0,
        latency: LatencySummary::default(),
    };
    let mut last_receipt = write_end;
    let mut samples = Vec::with_capacity(watchers * events);
    let mut clamped = 0;
    for (watcher, outcome) in outcomes.iter().enumerate() {
        row.delivered += outcome.added as u64;
        if outcome.added == events && outcome.problems.is_empty() {
            row.lossless_watchers += 1;
        }
        if outcome.added != events {
            row.problem_count += 1;
            if row.problems.len() < WATCH_PROBLEMS_SHOWN {
                row.problems.push(format!(
                    "watcher {watcher}: {} of {events} ADDED events",
                    outcome.added
                ));
            }
        }
        for problem in &outcome.problems {
            row.problem_count += 1;
            if row.problems.len() < WATCH_PROBLEMS_SHOWN {
                row.problems.push(format!("watcher {watcher}: {problem}"));
            }
        }
        if let Some(last) = outcome.last_receipt {
            last_receipt = last_receipt.max(last);
        }
        for (received, written) in outcome.receipts.iter().zip(&responses) {
            if let (Some(received), Some(written)) = (received, written) {
                if received < written {
                    clamped += 1;
                }
                samples.push(received.saturating_duration_since(*written));
            }
        }
    }
    row.deliver_time = last_receipt - t0;
    row.drain = last_receipt - write_end;
    row.latency = LatencySummary::of(samples, clamped);
    Ok(row)
}

/// Creates CronTabs `w-<index>` for the indexes it takes from `next` until `events` are taken
/// (with `pace`, create `index` is not sent before `t0 + index / rate`); returns when each
/// create's response arrived, by index.
async fn run_writer(
    client: reqwest::Client,
    url: String,
    next: Arc<AtomicUsize>,
    events: usize,
    pace: Option<(Instant, f64)>,
) -> Result<Vec<(usize, Instant)>> {
    let mut created = Vec::new();
    loop {
        let index = next.fetch_add(1, Ordering::Relaxed);
        if index >= events {
            return Ok(created);
        }
        if let Some((t0, rate)) = pace {
            let due = t0 + Duration::from_secs_f64(index as f64 / rate);
            tokio::time::sleep_until(due.into()).await;
        }
        let body = serde_json::to_vec(&crontab(&format!("w-{index}")))?;
        let response = client
            .post(&url)
            .header("content-type", "application/json")
            .body(body)
            .send()
            .await
            .map_err(|e| format!("create w-{index}: {e}"))?;
        // The response head has been read: the object is committed and its event published.
        let at = Instant::now();
        let status = response.status();
        let body = response
            .bytes()
            .await
            .map_err(|e| format!("create w-{index}: reading the body: {e}"))?;
        if status.as_u16() != 201 {
            return Err(format!(
                "create w-{index}: expected 201, got {status}: {}",
                String::from_utf8_lossy(&body)
            )
            .into());
        }
        created.push((index, at));
    }
}

/// Just enough of a watch event line: its type, and the object's name and resourceVersion (or
/// an ERROR Status's message).
#[derive(serde::Deserialize)]
struct WatchLine {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    object: WatchObject,
}

#[derive(serde::Deserialize, Default)]
#[serde(default)]
struct WatchObject {
    metadata: WatchMeta,
    message: String,
}

#[derive(serde::Deserialize, Default)]
#[serde(default, rename_all = "camelCase")]
struct WatchMeta {
    name: String,
    resource_version: String,
}

/// What one watcher saw.
struct WatcherOutcome {
    parse: Parse,
    /// ADDED events of this row's CronTabs (each counted once).
    added: usize,
    /// When the ADDED event of CronTab `w-<index>` was parsed.
    receipts: Vec<Option<Instant>>,
    last_receipt: Option<Instant>,
    last_rv: u64,
    /// Everything that is not an in-order ADDED of a new CronTab of this row.
    problems: Vec<String>,
}

impl WatcherOutcome {
    fn new(events: usize, parse: Parse) -> Self {
        WatcherOutcome {
            parse,
            added: 0,
            receipts: vec![None; events],
            last_receipt: None,
            last_rv: 0,
            problems: Vec::new(),
        }
    }

    /// Handles one line of the stream.
    fn line(&mut self, line: &[u8]) {
        if line.iter().all(u8::is_ascii_whitespace) {
            return;
        }
        if self.parse == Parse::Scan {
            self.scan(line);
            return;
        }
        let event: WatchLine = match serde_json::from_slice(line) {
            Ok(event) => event,
            Err(e) => {
                self.problems.push(format!(
                    "unparsable event ({e}): {}",
                    String::from_utf8_lossy(&line[..line.len().min(200)])
                ));
                return;
            }
        };
        let at = Instant::now();
        match event.kind.as_str() {
            "ADDED" => {
                let meta = &event.object.metadata;
                match meta.resource_version.parse::<u64>() {
                    Ok(rv) if rv > self.last_rv => self.last_rv = rv,
                    Ok(rv) => self.problems.push(format!(
                        "resourceVersion {rv} of {} after {}",
                        meta.name, self.last_rv
                    )),
                    Err(_) => self.problems.push(format!(
                        "{} has resourceVersion {:?}",
                        meta.name, meta.resource_version
                    )),
                }
                let index = meta
                    .name
                    .strip_prefix("w-")
                    .and_then(|i| i.parse::<usize>().ok())
                    .filter(|i| *i < self.receipts.len());
                match index {
                    Some(i) if self.receipts[i].is_none() => {
                        self.receipts[i] = Some(at);
                        self.last_receipt = Some(at);
                        self.added += 1;
                    }
                    Some(_) => self.problems.push(format!("{} ADDED twice", meta.name)),
                    None => self
                        .problems
                        .push(format!("ADDED of an unknown object {:?}", meta.name)),
                }
            }
            "ERROR" => self
                .problems
                .push(format!("ERROR event: {}", event.object.message)),
            other => self.problems.push(format!(
                "unexpected {other} event for {:?}",
                event.object.metadata.name
            )),
        }
    }

    /// `Parse::Scan`: only the `w-<index>` of `"name":"w-<index>"`, found by a byte search.
    fn scan(&mut self, line: &[u8]) {
        const NEEDLE: &[u8] = b"\"name\":\"w-";
        let at = Instant::now();
        let index = line
            .windows(NEEDLE.len())
            .position(|w| w == NEEDLE)
            .map(|start| &line[start + NEEDLE.len()..])
            .and_then(|rest| {
                let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
                std::str::from_utf8(&rest[..digits])
                    .ok()?
                    .parse::<usize>()
                    .ok()
            })
            .filter(|i| *i < self.receipts.len());
        match index {
            Some(i) if self.receipts[i].is_none() => {
                self.receipts[i] = Some(at);
                self.last_receipt = Some(at);
                self.added += 1;
            }
            Some(i) => self.problems.push(format!("w-{i} received twice")),
            None => self.problems.push(format!(
                "a line without a CronTab of this row: {}",
                String::from_utf8_lossy(&line[..line.len().min(200)])
            )),
        }
    }
}

/// Opens a watch on its own connection, tells `ready` once the response head arrived, then
/// reads events until it has `events` ADDED ones, an ERROR, the end of the stream or
/// `WATCH_IDLE_TIMEOUT` without data.
async fn run_watcher(
    url: String,
    events: usize,
    parse: Parse,
    connect: Arc<Semaphore>,
    ready: mpsc::UnboundedSender<Result<()>>,
) -> WatcherOutcome {
    let mut outcome = WatcherOutcome::new(events, parse);
    let opened = async {
        let _permit = connect
            .acquire()
            .await
            .map_err(|e| format!("connection limiter: {e}"))?;
        let client = keep_alive_client()?;
        let response = client
            .get(&url)
            .send()
            .await
            .map_err(|e| format!("GET {url}: {e}"))?;
        if response.status().as_u16() != 200 {
            let status = response.status();
            let body = response.text().await.unwrap_or_default();
            return Err(format!("GET {url}: {status}: {body}").into());
        }
        Ok::<_, Box<dyn Error + Send + Sync>>((client, response))
    }
    .await;
    let (_client, response) = match opened {
        Ok(opened) => {
            let _ = ready.send(Ok(()));
            opened
        }
        Err(e) => {
            outcome.problems.push(e.to_string());
            let _ = ready.send(Err(e));
            return outcome;
        }
    };
    drop(ready);

    let mut stream = response.bytes_stream();
    // The start of an incomplete line carried over from the previous chunk.
    let mut partial: Vec<u8> = Vec::new();
    while outcome.added < events {
        let chunk = match tokio::time::timeout(WATCH_IDLE_TIMEOUT, stream.next()).await {
            Ok(Some(Ok(chunk))) => chunk,
            Ok(Some(Err(e))) => {
                outcome.problems.push(format!("reading the stream: {e}"));
                break;
            }
            Ok(None) => {
                outcome.problems.push("the stream ended".to_string());
                break;
            }
            Err(_) => {
                outcome
                    .problems
                    .push(format!("no data for {WATCH_IDLE_TIMEOUT:?}"));
                break;
            }
        };
        let mut rest: &[u8] = &chunk;
        if !partial.is_empty() {
            match rest.iter().position(|b| *b == b'\n') {
                Some(end) => {
                    partial.extend_from_slice(&rest[..end]);
                    let line = std::mem::take(&mut partial);
                    outcome.line(&line);
                    rest = &rest[end + 1..];
                }
                None => {
                    partial.extend_from_slice(rest);
                    continue;
                }
            }
        }
        while let Some(end) = rest.iter().position(|b| *b == b'\n') {
            outcome.line(&rest[..end]);
            rest = &rest[end + 1..];
        }
        partial.extend_from_slice(rest);
        if outcome.problems.iter().any(|p| p.starts_with("ERROR")) {
            break;
        }
    }
    outcome
}

/// What `server_sockets` found on the in-process server's accepted connections.
#[derive(Default, Clone, Copy)]
struct ServerSockets {
    accepted: usize,
    /// Those that had TCP_NODELAY on before this process looked (set by the server).
    nodelay_before: usize,
}

impl ServerSockets {
    /// Whether the server sets TCP_NODELAY itself (`None`: no socket could be inspected).
    fn server_sets_nodelay(&self) -> Option<bool> {
        (self.accepted > 0).then_some(self.nodelay_before == self.accepted)
    }
}

/// Looks at every connected TCP socket of this process whose local port is `port` (the
/// in-process server's accepted connections): whether it has TCP_NODELAY, and with
/// `set_nodelay`, turns it on. Setting it is a diagnosis only: it shows what a server that
/// leaves Nagle's algorithm on would gain from `set_nodelay(true)` on accept.
#[cfg(target_os = "linux")]
fn server_sockets(port: u16, set_nodelay: bool) -> ServerSockets {
    use std::os::fd::{FromRawFd, IntoRawFd, RawFd};
    let mut found = ServerSockets::default();
    let Ok(fds) = std::fs::read_dir("/proc/self/fd") else {
        return found;
    };
    for entry in fds.flatten() {
        let Ok(fd) = entry.file_name().to_string_lossy().parse::<RawFd>() else {
            continue;
        };
        let is_socket = std::fs::read_link(entry.path())
            .is_ok_and(|target| target.to_string_lossy().starts_with("socket:"));
        if !is_socket {
            continue;
        }
        // SAFETY: `fd` is an open socket of this process (no connection opens or closes while
        // the row is between connecting and writing), and `into_raw_fd` gives it back without
        // closing it; on a socket that is not TCP the calls below just fail.
        let stream = unsafe { std::net::TcpStream::from_raw_fd(fd) };
        let accepted =
            stream.local_addr().is_ok_and(|a| a.port() == port) && stream.peer_addr().is_ok();
        if accepted {
            found.accepted += 1;
            if stream.nodelay().unwrap_or(false) {
                found.nodelay_before += 1;
            }
            if set_nodelay {
                let _ = stream.set_nodelay(true);
            }
        }
        let _ = stream.into_raw_fd();
    }
    found
}

#[cfg(not(target_os = "linux"))]
fn server_sockets(_port: u16, _set_nodelay: bool) -> ServerSockets {
    ServerSockets::default()
}

/// How often `SocketSampler` reads the socket queues.
const SOCKET_SAMPLE_INTERVAL: Duration = Duration::from_millis(50);

/// Peak bytes the kernel held in a row's established TCP connections: written by the server
/// but not yet taken by the client (the server sockets' send queues), and received but not yet
/// read by the client application (the client sockets' receive queues).
#[derive(Default, Clone, Copy)]
struct SocketBacklog {
    server_send: u64,
    client_recv: u64,
}

/// A thread that samples `/proc/net/tcp{,6}` (Linux) every `SOCKET_SAMPLE_INTERVAL` for the
/// connections of the server on `port`, until stopped.
struct SocketSampler {
    stop: Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<SocketBacklog>,
}

impl SocketSampler {
    fn start(port: u16) -> Self {
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut peak = SocketBacklog::default();
            while !flag.load(Ordering::Relaxed) {
                let now = socket_queues(port);
                peak.server_send = peak.server_send.max(now.server_send);
                peak.client_recv = peak.client_recv.max(now.client_recv);
                std::thread::sleep(SOCKET_SAMPLE_INTERVAL);
            }
            peak
        });
        SocketSampler { stop, thread }
    }

    fn finish(self) -> SocketBacklog {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.join().unwrap_or_default()
    }
}

/// The queues of the established connections to and from `port` right now.
fn socket_queues(port: u16) -> SocketBacklog {
    let mut now = SocketBacklog::default();
    for table in ["/proc/net/tcp", "/proc/net/tcp6"] {
        let Ok(text) = std::fs::read_to_string(table) else {
            continue;
        };
        // "sl local_address rem_address st tx_queue:rx_queue ...", addresses as HEXIP:HEXPORT.
        for line in text.lines().skip(1) {
            let fields: Vec<&str> = line.split_whitespace().take(5).collect();
            let [_, local, remote, state, queues] = fields[..] else {
                continue;
            };
            if state != "01" {
                continue; // not ESTABLISHED
            }
            let port_of = |address: &str| {
                address
                    .rsplit(':')
                    .next()
                    .and_then(|p| u16::from_str_radix(p, 16).ok())
            };
            let Some((tx, rx)) = queues.split_once(':') else {
                continue;
            };
            let (tx, rx) = (
                u64::from_str_radix(tx, 16).unwrap_or(0),
                u64::from_str_radix(rx, 16).unwrap_or(0),
            );
            if port_of(local) == Some(port) {
                now.server_send += tx;
            } else if port_of(remote) == Some(port) {
                now.client_recv += rx;
            }
        }
    }
    now
}

fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

/// On-CPU time of this process's threads, and the machine's busy time, at one instant.
struct ThreadCpu {
    at: Instant,
    /// tid -> (thread name, time on CPU).
    threads: HashMap<String, (String, Duration)>,
    /// Busy time of all CPUs (everything but idle and iowait in /proc/stat).
    machine: Duration,
}

/// Reads `/proc/self/task/*/{comm,schedstat}` and `/proc/stat` (Linux; empty elsewhere).
fn thread_cpu() -> ThreadCpu {
    let mut threads = HashMap::new();
    if let Ok(tasks) = std::fs::read_dir("/proc/self/task") {
        for task in tasks.flatten() {
            let dir = task.path();
            let name = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
            let on_cpu = std::fs::read_to_string(dir.join("schedstat"))
                .ok()
                .and_then(|s| s.split_whitespace().next()?.parse::<u64>().ok());
            if let Some(ns) = on_cpu {
                threads.insert(
                    task.file_name().to_string_lossy().into_owned(),
                    (name.trim().to_string(), Duration::from_nanos(ns)),
                );
            }
        }
    }
    // The first line: "cpu user nice system idle iowait irq softirq steal ...", in USER_HZ
    // (1/100 s on Linux).
    let machine = std::fs::read_to_string("/proc/stat")
        .ok()
        .and_then(|stat| {
            let ticks: Vec<u64> = stat
                .lines()
                .next()?
                .split_whitespace()
                .skip(1)
                .take(8)
                .filter_map(|t| t.parse().ok())
                .collect();
            let busy = ticks.iter().sum::<u64>() - ticks.get(3)? - ticks.get(4)?;
            Some(Duration::from_millis(busy * 10))
        })
        .unwrap_or_default();
    ThreadCpu {
        at: Instant::now(),
        threads,
        machine,
    }
}

/// CPU time over a window: this process's server threads (`split` rows; otherwise the server
/// shares the clients' threads and counts as clients), its other threads, and other processes.
#[derive(Default)]
struct CpuSplit {
    server: Duration,
    clients: Duration,
    /// Machine busy time not spent by this process (other processes, interrupts).
    others: Duration,
    wall: Duration,
}

impl CpuSplit {
    fn since(before: &ThreadCpu) -> Self {
        let after = thread_cpu();
        let mut split = CpuSplit {
            wall: after.at - before.at,
            ..CpuSplit::default()
        };
        for (tid, (name, cpu)) in &after.threads {
            let start = before.threads.get(tid).map_or(Duration::ZERO, |t| t.1);
            let used = cpu.saturating_sub(start);
            if name.starts_with(SERVER_THREAD_NAME) {
                split.server += used;
            } else {
                split.clients += used;
            }
        }
        split.others = after
            .machine
            .saturating_sub(before.machine)
            .saturating_sub(split.process());
        split
    }

    fn process(&self) -> Duration {
        self.server + self.clients
    }

    /// `d` as a share of all CPUs over the window.
    fn share(&self, d: Duration) -> String {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
        format!(
            "{:.0}%",
            100.0 * d.as_secs_f64() / (self.wall.as_secs_f64() * cpus as f64).max(1e-9)
        )
    }
}

/// Single-threaded costs of the per-event work, on a real event line.
struct MicroCosts {
    line_bytes: usize,
    /// Building a frame (allocation and copy), what the server did per watcher before frames
    /// were cached per event.
    frame: Duration,
    /// serde_json of the line into `WatchLine` (the watchers' `Parse::Json`).
    parse_json: Duration,
    /// The byte search of `Parse::Scan`.
    scan: Duration,
}

/// A copy of `frame()` in src/http/watch.rs (private there).
fn watch_frame(kind: &str, object: &[u8]) -> bytes::Bytes {
    let mut out = Vec::with_capacity(object.len() + 32);
    out.extend_from_slice(b"{\"type\":\"");
    out.extend_from_slice(kind.as_bytes());
    out.extend_from_slice(b"\",\"object\":");
    out.extend_from_slice(object);
    out.extend_from_slice(b"}\n");
    bytes::Bytes::from(out)
}

const MICRO_ITERATIONS: u32 = 200_000;

/// Times `f` over `MICRO_ITERATIONS` calls (after a warm-up), per call.
fn time_per_call(mut f: impl FnMut()) -> Duration {
    for _ in 0..MICRO_ITERATIONS / 10 {
        f();
    }
    let t0 = Instant::now();
    for _ in 0..MICRO_ITERATIONS {
        f();
    }
    t0.elapsed() / MICRO_ITERATIONS
}

async fn micro_costs(crd: &Value) -> Result<MicroCosts> {
    // The stored serialisation of a CronTab is what a create returns.
    let (server, base, _) = watch_server(crd, WATCH_BUFFER, None).await?;
    let client = keep_alive_client()?;
    let object = client
        .post(format!("{base}{CRONTABS}"))
        .json(&crontab("w-1234"))
        .send()
        .await
        .map_err(|e| format!("create: {e}"))?
        .bytes()
        .await
        .map_err(|e| format!("create: reading the body: {e}"))?;
    server.shutdown().await;
    let line = watch_frame("ADDED", &object);
    let line = &line[..line.len() - 1];
    let mut probe = WatcherOutcome::new(2_000, Parse::Json);
    probe.line(line);
    if probe.added != 1 || !probe.problems.is_empty() {
        return Err(format!("the sample event line does not parse: {:?}", probe.problems).into());
    }
    let frame = time_per_call(|| {
        std::hint::black_box(watch_frame("ADDED", std::hint::black_box(&object)));
    });
    let parse_json = time_per_call(|| {
        let event: WatchLine =
            serde_json::from_slice(std::hint::black_box(line)).expect("parsed above");
        std::hint::black_box(event);
    });
    const NEEDLE: &[u8] = b"\"name\":\"w-";
    let scan = time_per_call(|| {
        std::hint::black_box(
            std::hint::black_box(line)
                .windows(NEEDLE.len())
                .position(|w| w == NEEDLE),
        );
    });
    Ok(MicroCosts {
        line_bytes: line.len() + 1,
        frame,
        parse_json,
        scan,
    })
}

fn us(d: Duration) -> String {
    format!("{:.2} us", d.as_secs_f64() * 1e6)
}

fn ns(d: Duration) -> String {
    format!("{} ns", d.as_nanos())
}

fn print_watch_diagnosis(report: &WatchReport) {
    println!();
    println!(
        "Watch diagnosis: {TARGET_WATCHERS} watchers, as the target row unless the configuration says otherwise: \
         'watch_buffer 1024' is the server's default; 'server own runtime' runs the server on {SERVER_THREADS} threads of its \
         own (named {SERVER_THREAD_NAME}) next to the clients' runtime, all on the same {} CPUs; 'no JSON parse' watchers \
         only search each line for the name; 'TCP_NODELAY' turns Nagle's algorithm off on the server's accepted sockets \
         from this process{}; 'paced' spreads the creates evenly over time.",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        if report.server_nodelay {
            " (rows left out: the server already sets TCP_NODELAY on every connection)"
        } else {
            " (the server leaves it on)"
        }
    );
    println!(
        "{:<52} {:>6} {:>9} {:>9} {:>9} {:>10} {:>10} {:>9} {:>9} {:>9} {:>6} {:>6} {:>9} {:>9}",
        "configuration",
        "E",
        "creates/s",
        "events/s",
        "zero loss",
        "p50",
        "p99",
        "CPU/event",
        "server",
        "clients",
        "busy",
        "others",
        "srv send",
        "cli recv"
    );
    for row in &report.diagnosis {
        let cpu = &row.cpu;
        let per_event = |d: Duration| us(d / row.delivered.max(1) as u32);
        let (server, clients) = if row.config.split {
            (per_event(cpu.server), per_event(cpu.clients))
        } else {
            (String::new(), String::new())
        };
        println!(
            "{:<52} {:>6} {:>9.0} {:>9.0} {:>9} {:>10} {:>10} {:>9} {:>9} {:>9} {:>6} {:>6} {:>9} {:>9}",
            row.config.describe(),
            row.events,
            row.creates_per_second(),
            row.delivered_per_second(),
            pass_fail(row.zero_loss()),
            ms(row.latency.p50),
            ms(row.latency.p99),
            per_event(cpu.process()),
            server,
            clients,
            cpu.share(cpu.process()),
            cpu.share(cpu.others),
            mb(row.sockets.server_send),
            mb(row.sockets.client_recv)
        );
    }
    println!(
        "  (CPU/event: this process's CPU time per delivered event (server + writers + watchers), split into server and clients \
         when the server has its own threads; busy: this process's share of all CPUs over the row; others: other processes' share; srv send / cli recv as above)"
    );
    for row in &report.diagnosis {
        for problem in row.problems.iter().take(2) {
            println!("  {}: {problem}", row.config.describe());
        }
        if row.problem_count > 2 {
            println!(
                "  {}: ... and {} more problems",
                row.config.describe(),
                row.problem_count - 2
            );
        }
    }
    let m = &report.micro;
    println!(
        "  Per-event costs, one thread, on a {}-byte ADDED line: building its frame (alloc + copy, as frame() does) {}; \
         serde_json of the line into the watchers' small struct {}; byte search for the name {}",
        m.line_bytes,
        ns(m.frame),
        ns(m.parse_json),
        ns(m.scan)
    );
}

fn print_watch(report: &WatchReport) {
    let rows = &report.rows;
    println!(
        "Watch fan-out: in-process server built with watch_buffer({WATCH_BUFFER}) (the default is 1024); \
         each watcher its own reqwest::Client and connection, GET {CRONTABS}?watch=1&resourceVersion=<rv after the CRD install>, \
         while {WATCH_WRITERS} concurrent writer clients POST E CronTabs as fast as they can"
    );
    println!(
        "  The writers and watchers (including the JSON parsing of every event) run in this process, on the same \
         tokio runtime and CPUs as the server, so all numbers are lower bounds of the server alone. Load average \
         when the section started: {} (other processes compete for the CPUs; see the 'others' column). \
         TCP_NODELAY on the server's accepted sockets: {}.",
        report.load_average,
        if report.server_nodelay {
            "on (set by the server)"
        } else {
            "off on some or all (Nagle's algorithm on), or not inspectable"
        }
    );
    println!(
        "{:>8} {:>7} {:>9} {:>9} {:>9} {:>10} {:>11} {:>11} {:>9} {:>6} {:>6} {:>9} {:>9}  {:<14}",
        "watchers",
        "E",
        "creates/s",
        "delivered",
        "events/s",
        "/s/watcher",
        "drain",
        "deliver",
        "CPU/event",
        "busy",
        "others",
        "srv send",
        "cli recv",
        "zero loss"
    );
    for row in rows {
        println!(
            "{:>8} {:>7} {:>9.0} {:>9} {:>9.0} {:>10.0} {:>11} {:>11} {:>9} {:>6} {:>6} {:>9} {:>9}  {} ({}/{} watchers)",
            row.watchers,
            row.events,
            row.creates_per_second(),
            row.delivered,
            row.delivered_per_second(),
            row.delivered_per_second() / row.watchers as f64,
            ms(row.drain),
            ms(row.deliver_time),
            us(row.cpu.process() / row.delivered.max(1) as u32),
            row.cpu.share(row.cpu.process()),
            row.cpu.share(row.cpu.others),
            mb(row.sockets.server_send),
            mb(row.sockets.client_recv),
            pass_fail(row.zero_loss()),
            row.lossless_watchers,
            row.watchers
        );
    }
    println!(
        "  (delivered = ADDED events received over all watchers; events/s = delivered / (first create sent -> last event parsed); \
         drain = last create response -> last event parsed; CPU/event = this process's CPU time (server, writers and \
         watchers) per delivered event; busy = this process's share of all CPUs during the row, others = other processes' \
         share; srv send / cli recv = peak bytes the kernel held in the server sockets' send queues (written by the server, \
         not yet taken by the client) and in the client sockets' receive queues (not yet read by the watchers), sampled \
         every {SOCKET_SAMPLE_INTERVAL:?} from /proc/net/tcp; zero loss = every watcher got exactly E ADDED events with \
         strictly increasing resourceVersions, no ERROR, no duplicate)"
    );
    for row in rows {
        for problem in &row.problems {
            println!("  {} watchers: {problem}", row.watchers);
        }
        if row.problem_count > row.problems.len() {
            println!(
                "  {} watchers: ... and {} more problems",
                row.watchers,
                row.problem_count - row.problems.len()
            );
        }
    }
    println!();
    println!("Watch latency: create response read by the writer -> event parsed by a watcher, over every (watcher, event) pair");
    println!(
        "{:>8} {:>7} {:>10} {:>11} {:>11} {:>11} {:>11} {:>9}",
        "watchers", "E", "pairs", "p50", "p90", "p99", "max", "clamped"
    );
    for row in rows {
        let l = &row.latency;
        println!(
            "{:>8} {:>7} {:>10} {:>11} {:>11} {:>11} {:>11} {:>8.1}%",
            row.watchers,
            row.events,
            l.pairs,
            ms(l.p50),
            ms(l.p90),
            ms(l.p99),
            ms(l.max),
            100.0 * l.clamped as f64 / l.pairs.max(1) as f64
        );
    }
    println!(
        "  (clamped: the event was parsed before the writer had read the create's response; such a pair counts as 0)"
    );
    println!();
    match rows
        .iter()
        .find(|r| r.watchers == TARGET_WATCHERS && r.events == TARGET_WATCH_EVENTS)
    {
        Some(row) => {
            let lossless = row.zero_loss();
            let fast = row.latency.p99 < TARGET_WATCH_P99;
            println!(
                "Target: {TARGET_WATCHERS} watchers receive {TARGET_WATCH_EVENTS} events each with zero loss and p99 < {}: {} \
                 (zero loss {}, p99 {} {})",
                ms(TARGET_WATCH_P99),
                pass_fail(lossless && fast),
                pass_fail(lossless),
                ms(row.latency.p99),
                pass_fail(fast)
            );
        }
        None => println!("Target: no row with {TARGET_WATCHERS} watchers and {TARGET_WATCH_EVENTS} events was measured"),
    }
    print_watch_diagnosis(report);
}

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

/// Reads a CRD manifest (YAML) as JSON.
fn read_crd(path: &Path) -> Result<Value> {
    let text =
        std::fs::read_to_string(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    serde_saphyr::from_str::<Value>(&text)
        .map_err(|e| format!("parsing {}: {e}", path.display()).into())
}

/// A client that keeps connections alive (reqwest's default), ignoring proxy settings.
fn keep_alive_client() -> Result<reqwest::Client> {
    reqwest::Client::builder()
        .no_proxy()
        .build()
        .map_err(|e| format!("building an HTTP client: {e}").into())
}

/// A client that opens a new connection for every request. `kubefake serve` generates its
/// certificate at start; the probe trusts it without verifying (the time to ready includes the
/// TLS handshake either way).
fn fresh_connection_client() -> Result<reqwest::Client> {
    reqwest::Client::builder()
        .no_proxy()
        .pool_max_idle_per_host(0)
        .danger_accept_invalid_certs(true)
        .build()
        .map_err(|e| format!("building an HTTP client: {e}").into())
}

/// GETs `url`, failing unless it returns 200.
async fn get_ok(client: &reqwest::Client, url: &str) -> Result<()> {
    expect_status(client.get(url).send().await, 200, url).await
}

/// Checks a response's status and reads its body (so the connection can be reused).
async fn expect_status(
    response: reqwest::Result<reqwest::Response>,
    expected: u16,
    what: &str,
) -> Result<()> {
    let response = response.map_err(|e| format!("{what}: {e}"))?;
    let status = response.status();
    let body = response
        .bytes()
        .await
        .map_err(|e| format!("{what}: reading the body: {e}"))?;
    if status.as_u16() != expected {
        return Err(format!(
            "{what}: expected {expected}, got {status}: {}",
            String::from_utf8_lossy(&body)
        )
        .into());
    }
    Ok(())
}

fn pass_fail(ok: bool) -> &'static str {
    if ok {
        "PASS"
    } else {
        "FAIL"
    }
}

/// The nearest-rank percentile `p` (0..=100) of sorted samples.
fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

/// The latency part of the report: one row per measurement, with its target if it has one
/// (a target is met when the median is under it).
struct LatencyTable {
    rows: Vec<String>,
}

impl LatencyTable {
    fn new() -> Self {
        LatencyTable { rows: Vec::new() }
    }

    fn row(&mut self, name: &str, samples: &[Duration], target: Option<Duration>) {
        let mut sorted = samples.to_vec();
        sorted.sort();
        let median = percentile(&sorted, 50.0);
        let (target, result) = match target {
            Some(t) => (format!("median < {}", ms(t)), pass_fail(median < t)),
            None => (String::new(), ""),
        };
        self.rows.push(
            format!(
                "{:<48} {:>5} {:>11} {:>11} {:>11}  {:<18} {}",
                name,
                sorted.len(),
                ms(median),
                ms(percentile(&sorted, 99.0)),
                ms(sorted.last().copied().unwrap_or_default()),
                target,
                result
            )
            .trim_end()
            .to_string(),
        );
    }

    fn print(&self) {
        println!("Latency");
        println!(
            "{:<48} {:>5} {:>11} {:>11} {:>11}  {:<18} result",
            "measurement", "runs", "median", "p99", "max", "target"
        );
        for row in &self.rows {
            println!("{row}");
        }
    }
}
