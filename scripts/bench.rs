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
//!    `KUBEFAKE_URL=` line, and until a first `GET /readyz` succeeded. This is what envtest-style
//!    CI scripts pay.
//! 3. **CRD create-to-established**: POST the CronTab CRD of `fixtures/crds/` to a fresh server
//!    and measure until (a) the response carries `Established=True` (kubefake sets it
//!    synchronously) and (b) the new resource's collection answers 200.
//!    Target: established under 5 ms.
//! 4. **Throughput** of create, get and list (a collection of 100 objects) over HTTP/1.1
//!    keep-alive with 1 and 8 concurrent clients, each its own `reqwest::Client`. The server runs
//!    in this process on the same multi-threaded tokio runtime as the clients, so both share the
//!    machine's CPUs: the numbers are a lower bound of what the server alone could do.
//!    Target: get over 10,000 req/s with 8 clients.
//!
//! Every server is a fresh one (a fresh port and store) unless stated otherwise, so samples do
//! not influence each other. Latencies are wall-clock times measured with `Instant`.

use std::error::Error;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tokio::sync::Barrier;

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
    // cargo passes `--bench` (and any filter given on its command line); none of them changes
    // what is measured.
    for arg in std::env::args().skip(1) {
        if arg != "--bench" {
            eprintln!("bench: ignoring argument {arg:?}");
        }
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("building the tokio runtime");
    let threads = runtime.metrics().num_workers();
    if let Err(e) = runtime.block_on(run(threads)) {
        eprintln!("bench failed: {e}");
        std::process::exit(1);
    }
}

async fn run(threads: usize) -> Result<()> {
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let crd = read_crd(&manifest_dir.join("fixtures/crds/resourcedefinition.yaml"))?;
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());

    eprintln!("measuring in-process start ({START_RUNS} runs)...");
    let start = bench_in_process_start().await?;
    eprintln!("measuring binary start ({BINARY_RUNS} runs)...");
    let binary = bench_binary_start(manifest_dir).await?;
    eprintln!("measuring CRD create-to-established ({CRD_RUNS} runs)...");
    let crd_latency = bench_crd(&crd).await?;
    eprintln!("measuring throughput ({THROUGHPUT_DURATION:?} per row)...");
    let mut throughput = Vec::new();
    for op in [Op::Create, Op::Get, Op::List] {
        for clients in [1, 8] {
            let rate = bench_throughput(&crd, op, clients).await?;
            throughput.push((op, clients, rate));
        }
    }

    println!();
    println!("kubefake benchmark ({cpus} CPUs; in-process servers run on this binary's multi-threaded tokio runtime, {threads} workers, shared with the clients)");
    println!();
    let mut table = LatencyTable::new();
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
    table.print();
    println!(
        "  (CRD collection answered 200 on the first GET in {}/{} samples)",
        crd_latency.served_first_try,
        crd_latency.served.len()
    );
    println!();
    println!(
        "Throughput: HTTP/1.1 keep-alive, in-process server, {:?} per row, one reqwest::Client per client",
        THROUGHPUT_DURATION
    );
    println!(
        "{:<36} {:>8} {:>10} {:>12}  {:<18} result",
        "operation", "clients", "requests", "req/s", "target"
    );
    for (op, clients, rate) in &throughput {
        let (target, result) = if *op == Op::Get && *clients == 8 {
            (
                format!("> {TARGET_GET_RPS_8_CLIENTS:.0} req/s"),
                pass_fail(rate.per_second() > TARGET_GET_RPS_8_CLIENTS),
            )
        } else {
            (String::new(), "")
        };
        let row = format!(
            "{:<36} {:>8} {:>10} {:>12.0}  {:<18} {}",
            op.describe(),
            clients,
            rate.requests,
            rate.per_second(),
            target,
            result
        );
        println!("{}", row.trim_end());
    }
    if let Some((_, _, rate)) = throughput.first() {
        println!(
            "  (a list response of {LIST_SIZE} CronTabs is {} bytes of JSON)",
            rate.list_bytes
        );
    }
    Ok(())
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
    fn describe(self) -> String {
        match self {
            Op::Create => "create (POST crontab)".to_string(),
            Op::Get => "get (GET one crontab)".to_string(),
            Op::List => format!("list (GET {LIST_SIZE} crontabs)"),
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
/// holding the CronTab CRD and `LIST_SIZE` CronTabs.
async fn bench_throughput(crd: &Value, op: Op, clients: usize) -> Result<Rate> {
    let server = kubefake::Server::start()
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
    for i in 0..LIST_SIZE {
        expect_status(
            setup
                .post(format!("{base}{CRONTABS}"))
                .json(&crontab(&format!("seed-{i}")))
                .send()
                .await,
            201,
            "POST of a seed CronTab",
        )
        .await?;
    }

    // Guard the list numbers: the collection must hold exactly the seeded objects.
    let list_body = setup
        .get(format!("{base}{CRONTABS}"))
        .send()
        .await
        .map_err(|e| format!("GET of the seeded collection: {e}"))?
        .bytes()
        .await
        .map_err(|e| format!("reading the seeded collection: {e}"))?;
    let list: Value = serde_json::from_slice(&list_body)?;
    let items = list["items"].as_array().map_or(0, Vec::len);
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
            one_request(&client, &base, op, id, &mut seq).await?;
            barrier.wait().await;
            let t0 = Instant::now();
            let mut done = 0u64;
            while t0.elapsed() < THROUGHPUT_DURATION {
                one_request(&client, &base, op, id, &mut seq).await?;
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
    op: Op,
    client_id: usize,
    seq: &mut u64,
) -> Result<()> {
    match op {
        Op::Create => {
            *seq += 1;
            let name = format!("bench-{client_id}-{seq}");
            let response = client
                .post(format!("{base}{CRONTABS}"))
                .json(&crontab(&name))
                .send()
                .await;
            expect_status(response, 201, "create").await
        }
        Op::Get => {
            let response = client.get(format!("{base}{CRONTABS}/seed-0")).send().await;
            expect_status(response, 200, "get").await
        }
        Op::List => {
            let response = client.get(format!("{base}{CRONTABS}")).send().await;
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

/// A client that opens a new connection for every request.
fn fresh_connection_client() -> Result<reqwest::Client> {
    reqwest::Client::builder()
        .no_proxy()
        .pool_max_idle_per_host(0)
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
