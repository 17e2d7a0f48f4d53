//! Server instructions per request, by verb and by stage, counted by callgrind: run with
//! `scripts/callgrind.sh [N] [--functions] [--server PATH]` (which runs
//! `cargo bench --bench callgrind -- ...`).
//!
//! Wall-clock benchmarks on a shared machine move by tens of percent from one run to the next;
//! instruction counts do not: the same binary, the same input and the same count give the same
//! figures. So this driver starts a copy of itself (`serve` mode: an in-process
//! `kubefake::Server` on a one-worker runtime, nothing else) under
//! `valgrind --tool=callgrind`, and drives it from outside valgrind through one keep-alive
//! connection, so only the server's instructions are counted:
//!
//! 1. setup (not measured): a CRD with a schema, a status subresource and a CEL rule, one
//!    watcher of each collection (so every write pays its watch fan-out), and one of every
//!    request below on warm-up objects, so lazily built state is not charged to a phase;
//! 2. for ConfigMaps and for custom resources, N of each: create, update (PUT), merge patch,
//!    status merge patch (custom resources only), server-side apply, GET, then one list of
//!    the collection ten times, then N deletes.
//!
//! Between phases the driver sends `GET /version`: callgrind dumps its counters when the
//! server enters the function that answers it (`--dump-before`), so each dump holds one
//! phase. `callgrind_annotate --inclusive=yes` on each dump gives every function's inclusive
//! count; a stage is the sum of the entry points listed in [`STAGES`] (none of which calls
//! another of its stage). The tables print instructions per request.

use std::collections::{BTreeMap, HashMap};
use std::error::Error;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use futures_util::StreamExt;
use serde_json::{json, Value};

/// Errors abort the benchmark with a message; a benchmark has nothing to recover.
type Result<T> = std::result::Result<T, Box<dyn Error + Send + Sync>>;

/// Requests per verb and kind unless the command line gives another count.
const DEFAULT_COUNT: usize = 200;
/// Lists per kind (each of the whole collection of N objects).
const LISTS: usize = 10;
/// The function that answers `GET /version`: entering it ends a phase.
const MARKER: &str = "kubefake::endpoints::discovery::version_info";
/// The line `serve` mode prints its URL on.
const URL_LINE: &str = "KUBEFAKE_CALLGRIND_URL=";

const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";
const WIDGETS: &str = "/apis/bench.kubefake.io/v1/namespaces/default/widgets";

/// Each stage's entry points: functions by exact name (an async function's body is its
/// `::{{closure}}`). A stage counts the largest inclusive count of each entry in a phase, so an
/// entry that several generic instances share is counted once. The stages are disjoint.
const STAGES: &[(&str, &[&str])] = &[
    (
        "decode",
        &[
            "kubefake::endpoints::write::decode_object",
            "kubefake::endpoints::patch::Patch::parse",
            "kubefake::endpoints::patch::Patch::apply",
            "kubefake::endpoints::apply::decode_config",
        ],
    ),
    (
        "admission",
        &[
            "kubefake::admission::Chain::admit::{{closure}}",
            "kubefake::admission::Chain::validate::{{closure}}",
            "kubefake::admission::Chain::admit_delete::{{closure}}",
        ],
    ),
    (
        "schema",
        &[
            "<kubefake::registry::apiextensions::custom_resource::CustomResourceStrategy as kubefake::registry::strategy::Strategy>::decode",
            "<kubefake::registry::apiextensions::custom_resource::CustomResourceStrategy as kubefake::registry::strategy::Strategy>::validate",
            "<kubefake::registry::apiextensions::custom_resource::CustomResourceStrategy as kubefake::registry::strategy::Strategy>::validate_update",
            "<kubefake::registry::builtin::typed::Typed as kubefake::registry::strategy::Strategy>::decode",
            "<kubefake::registry::builtin::typed::Typed as kubefake::registry::strategy::Strategy>::validate",
            "<kubefake::registry::builtin::typed::Typed as kubefake::registry::strategy::Strategy>::validate_update",
        ],
    ),
    (
        "managedFields",
        &["kubefake::apply::record_update", "kubefake::apply::apply"],
    ),
    ("store write", &["kubefake::store::Store::write"]),
    (
        "encode",
        &[
            "kubefake::endpoints::resource::Endpoint::respond::{{closure}}",
            "kubefake::endpoints::read::encode_list::{{closure}}",
        ],
    ),
    ("fan-out", &["kubefake::endpoints::watch::run::{{closure}}"]),
];

/// One measured phase: its name and how many requests it made.
struct Phase {
    name: String,
    requests: usize,
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    let outcome = match args.first().map(String::as_str) {
        Some("serve") => serve(),
        first => {
            let count = first.and_then(|a| a.parse().ok()).unwrap_or(DEFAULT_COUNT);
            let functions = args.iter().any(|a| a == "--functions");
            // `--server PATH`: another build of this driver serves (to compare two commits
            // with the same workload and the same tables).
            let server = args
                .iter()
                .position(|a| a == "--server")
                .and_then(|i| args.get(i + 1))
                .map(PathBuf::from);
            drive(count, functions, server)
        }
    };
    if let Err(e) = outcome {
        eprintln!("callgrind bench failed: {e}");
        std::process::exit(1);
    }
}

/// `serve` mode (under valgrind): a default server until stdin closes; then the process exits
/// without tearing the server down, so teardown is not counted.
fn serve() -> Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let server = kubefake::Server::start().await?;
        println!("{URL_LINE}{}", server.url());
        std::io::stdout().flush()?;
        tokio::task::spawn_blocking(|| {
            let mut rest = Vec::new();
            let _ = std::io::stdin().read_to_end(&mut rest);
        })
        .await?;
        std::process::exit(0)
    })
}

/// Driver mode: the server under callgrind, the workload, the tables.
fn drive(count: usize, functions: bool, server: Option<PathBuf>) -> Result<()> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/callgrind");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    let out = dir.join("callgrind.out");
    let exe = match server {
        Some(path) => path,
        None => std::env::current_exe()?,
    };
    let (mut child, url) = start_under_callgrind(&exe, &out)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    let phases = runtime.block_on(workload(&url, count));
    drop(child.stdin.take());
    let status = child.wait()?;
    let phases = phases?;
    if !status.success() {
        return Err(format!("the server under callgrind exited with {status}").into());
    }
    report(&dir, &out, &phases, count, functions)
}

fn start_under_callgrind(exe: &Path, out: &Path) -> Result<(Child, String)> {
    let mut child = Command::new("valgrind")
        .arg("--tool=callgrind")
        .arg(format!("--callgrind-out-file={}", out.display()))
        .arg(format!("--dump-before={MARKER}*"))
        .arg("--dump-instr=no")
        .arg(exe)
        .arg("serve")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("starting valgrind (is it installed?): {e}"))?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    for line in BufReader::new(stdout).lines() {
        if let Some(url) = line?.strip_prefix(URL_LINE) {
            return Ok((child, url.to_string()));
        }
    }
    Err("the server under callgrind did not print its URL".into())
}

/// A client of the server under measurement: one keep-alive connection, and only one. (A
/// pooled client opens another connection when the last response's connection is not back in
/// its pool yet, and each new connection charged some 20k instructions to a random phase.)
struct Client {
    sender: tokio::sync::Mutex<
        hyper::client::conn::http1::SendRequest<http_body_util::Full<bytes::Bytes>>,
    >,
    host: String,
}

impl Client {
    async fn connect(url: &str) -> Result<Client> {
        let host = url
            .strip_prefix("http://")
            .ok_or("the server's URL is not http://")?
            .trim_end_matches('/')
            .to_string();
        let stream = tokio::net::TcpStream::connect(&host).await?;
        stream.set_nodelay(true)?;
        let (sender, connection) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream)).await?;
        tokio::spawn(connection);
        Ok(Client {
            sender: tokio::sync::Mutex::new(sender),
            host,
        })
    }

    async fn send(&self, method: &str, path: &str, body: Option<(&str, String)>) -> Result<Value> {
        use http_body_util::BodyExt;
        let mut req = hyper::Request::builder()
            .method(method)
            .uri(path)
            .header("host", &self.host);
        let mut content = String::new();
        if let Some((content_type, body)) = body {
            req = req.header("content-type", content_type);
            content = body;
        }
        let req = req.body(http_body_util::Full::new(bytes::Bytes::from(content)))?;
        let mut sender = self.sender.lock().await;
        sender.ready().await?;
        let resp = sender.send_request(req).await?;
        let status = resp.status();
        let bytes = resp.into_body().collect().await?.to_bytes();
        drop(sender);
        let value: Value = serde_json::from_slice(&bytes)?;
        if !status.is_success() {
            return Err(format!("{path}: {status}: {value}").into());
        }
        Ok(value)
    }

    /// Ends a phase (see [`MARKER`]).
    async fn mark(&self) -> Result<()> {
        self.send("GET", "/version", None).await.map(drop)
    }
}

fn crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.bench.kubefake.io"},
        "spec": {
            "group": "bench.kubefake.io",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "properties": {
                        "spec": {
                            "type": "object",
                            "x-kubernetes-validations": [{"rule": "self.replicas <= 1000", "message": "too many"}],
                            "properties": {
                                "image": {"type": "string", "maxLength": 200},
                                "replicas": {"type": "integer", "minimum": 0, "default": 1},
                                "tier": {"type": "string", "enum": ["web", "db", "cache"]},
                                "ports": {"type": "array", "x-kubernetes-list-type": "map",
                                    "x-kubernetes-list-map-keys": ["name"],
                                    "items": {"type": "object", "required": ["name"], "properties": {
                                        "name": {"type": "string"}, "port": {"type": "integer"}}}},
                                "labels": {"type": "object", "additionalProperties": {"type": "string"}}
                            }
                        },
                        "status": {"type": "object", "properties": {
                            "ready": {"type": "integer"}, "phase": {"type": "string"}}}
                    }
                }}
            }]
        }
    })
}

/// A ConfigMap of about 1 KB.
fn configmap(name: &str, round: usize) -> Value {
    let mut data = serde_json::Map::new();
    for i in 0..8 {
        data.insert(
            format!("key-{i}"),
            json!(format!("{round}-{}", "v".repeat(100))),
        );
    }
    json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "labels": {"app": "bench", "round": round.to_string()}},
        "data": data})
}

fn widget(name: &str, round: usize) -> Value {
    json!({"apiVersion": "bench.kubefake.io/v1", "kind": "Widget",
        "metadata": {"name": name, "labels": {"app": "bench", "round": round.to_string()}},
        "spec": {"image": format!("registry.example.com/widget:{round}"), "replicas": 3, "tier": "web",
            "ports": [{"name": "http", "port": 80}, {"name": "https", "port": 443}],
            "labels": {"team": "a", "zone": "b"}}})
}

/// The kinds measured: name, collection path, object builder, status subresource.
type Kind = (&'static str, &'static str, fn(&str, usize) -> Value, bool);
const KINDS: [Kind; 2] = [
    ("configmap", CONFIGMAPS, configmap, false),
    ("widget", WIDGETS, widget, true),
];

async fn workload(url: &str, count: usize) -> Result<Vec<Phase>> {
    let client = Client::connect(url).await?;
    let crd_path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
    client
        .send(
            "POST",
            crd_path,
            Some(("application/json", crd().to_string())),
        )
        .await?;
    for (_, path, _, _) in KINDS {
        watch(url, path).await?;
    }
    for kind in KINDS {
        run_phases(&client, kind, &["warm".to_string()], false, &mut Vec::new()).await?;
    }
    client.mark().await?;
    let mut phases = Vec::new();
    for kind in KINDS {
        let names: Vec<String> = (0..count).map(|i| format!("obj-{i}")).collect();
        run_phases(&client, kind, &names, true, &mut phases).await?;
    }
    Ok(phases)
}

/// A watcher of a collection that reads (and drops) every event in the background.
async fn watch(url: &str, path: &str) -> Result<()> {
    let resp = reqwest::Client::builder()
        .no_proxy()
        .build()?
        .get(format!("{url}{path}?watch=1"))
        .send()
        .await?;
    tokio::spawn(async move {
        let mut body = resp.bytes_stream();
        while let Some(Ok(_)) = body.next().await {}
    });
    Ok(())
}

/// The verbs measured, in order, and whether they need a status subresource.
const VERBS: [(&str, bool); 8] = [
    ("create", false),
    ("update", false),
    ("merge patch", false),
    ("status patch", true),
    ("apply", false),
    ("get", false),
    ("list", false),
    ("delete", false),
];

/// Every phase of one kind over `names`, each closed by a mark when `measured`.
async fn run_phases(
    client: &Client,
    kind: Kind,
    names: &[String],
    measured: bool,
    phases: &mut Vec<Phase>,
) -> Result<()> {
    let (kind_name, path, _, status) = kind;
    let mut versions = HashMap::new();
    for (verb, needs_status) in VERBS {
        if needs_status && !status {
            continue;
        }
        let requests = if verb == "list" { LISTS } else { names.len() };
        for i in 0..requests {
            let name = names.get(i).map_or("", String::as_str);
            let rv = versions.get(name).cloned().unwrap_or_default();
            let written = request(client, kind, verb, name, rv)
                .await
                .map_err(|e| format!("{verb} {kind_name} {path}: {e}"))?;
            if let Some(rv) = written["metadata"]["resourceVersion"].as_str() {
                versions.insert(name.to_string(), rv.to_string());
            }
        }
        if measured {
            client.mark().await?;
            phases.push(Phase {
                name: format!("{verb} {kind_name}"),
                requests,
            });
        }
    }
    Ok(())
}

/// One request of a phase. Updates send the resourceVersion the last write returned, so that
/// no read is charged to them.
async fn request(
    client: &Client,
    (_, path, object, _): Kind,
    verb: &str,
    name: &str,
    rv: String,
) -> Result<Value> {
    let json = "application/json";
    let merge = "application/merge-patch+json";
    let item = format!("{path}/{name}");
    match verb {
        "create" => {
            client
                .send("POST", path, Some((json, object(name, 0).to_string())))
                .await
        }
        "update" => {
            let mut next = object(name, 1);
            next["metadata"]["resourceVersion"] = json!(rv);
            client
                .send("PUT", &item, Some((json, next.to_string())))
                .await
        }
        "merge patch" => {
            let patch = json!({"metadata": {"labels": {"patched": "yes"}}});
            client
                .send("PATCH", &item, Some((merge, patch.to_string())))
                .await
        }
        "status patch" => {
            let patch = json!({"status": {"ready": 2, "phase": "Running"}});
            let status = format!("{item}/status");
            client
                .send("PATCH", &status, Some((merge, patch.to_string())))
                .await
        }
        "apply" => {
            let mut config = object(name, 2);
            config["metadata"]["labels"]["patched"] = json!("yes");
            let apply = format!("{item}?fieldManager=bench&force=true");
            let body = Some(("application/apply-patch+yaml", config.to_string()));
            client.send("PATCH", &apply, body).await
        }
        "get" => client.send("GET", &item, None).await,
        "list" => client.send("GET", path, None).await,
        _ => client.send("DELETE", &item, None).await,
    }
}

/// The dumps in the order callgrind wrote them: `callgrind.out.1`, `.2`, ..., then the one
/// written at exit.
fn dumps(dir: &Path, out: &Path) -> Result<Vec<PathBuf>> {
    let mut numbered: Vec<(usize, PathBuf)> = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        if let Some(n) = name
            .strip_prefix("callgrind.out.")
            .and_then(|n| n.parse().ok())
        {
            numbered.push((n, path));
        }
    }
    numbered.sort();
    let mut all: Vec<PathBuf> = numbered.into_iter().map(|(_, p)| p).collect();
    if out.exists() {
        all.push(out.to_path_buf());
    }
    Ok(all)
}

/// A dump's total instructions and every function's inclusive count.
struct Counts {
    total: u64,
    inclusive: BTreeMap<String, u64>,
}

fn counts(dump: &Path) -> Result<Counts> {
    let output = Command::new("callgrind_annotate")
        .args(["--inclusive=yes", "--threshold=100"])
        .arg(dump)
        .output()?;
    if !output.status.success() {
        return Err(format!("callgrind_annotate {}: {}", dump.display(), output.status).into());
    }
    let text = String::from_utf8_lossy(&output.stdout);
    let mut total = 0;
    let mut inclusive = BTreeMap::new();
    for line in text.lines() {
        let line = line.trim();
        let Some((count, rest)) = line.split_once(' ') else {
            continue;
        };
        let Ok(count) = count.replace(',', "").parse::<u64>() else {
            continue;
        };
        let rest = rest.trim_start();
        let rest = match rest.strip_prefix('(') {
            Some(r) => r.split_once(')').map_or("", |(_, r)| r.trim_start()),
            None => rest,
        };
        if rest.starts_with("PROGRAM TOTALS") {
            total = count;
            continue;
        }
        let Some((_, function)) = rest.split_once(':') else {
            continue;
        };
        let function = function.rsplit_once(" [").map_or(function, |(f, _)| f);
        *inclusive.entry(function.to_string()).or_insert(0) += count;
    }
    Ok(Counts { total, inclusive })
}

impl Counts {
    /// A stage's count: for each entry, the largest inclusive count of a function of that name.
    fn stage(&self, entries: &[&str]) -> u64 {
        entries
            .iter()
            .map(|e| {
                self.inclusive
                    .iter()
                    .filter(|(f, _)| f.as_str() == *e)
                    .map(|(_, c)| *c)
                    .max()
                    .unwrap_or(0)
            })
            .sum()
    }
}

fn report(dir: &Path, out: &Path, phases: &[Phase], count: usize, functions: bool) -> Result<()> {
    let dumps = dumps(dir, out)?;
    // The first dump is the setup; then one per phase; then the rest until exit.
    if dumps.len() < phases.len() + 1 {
        return Err(format!(
            "{} dumps for {} phases: is {MARKER} still a function of its own?",
            dumps.len(),
            phases.len()
        )
        .into());
    }
    println!("Server instructions per request, callgrind, N = {count} (per kind and verb), one keep-alive connection, one watcher per collection");
    print!("{:<24} {:>12}", "phase", "total/req");
    for (stage, _) in STAGES {
        print!(" {stage:>13}");
    }
    println!(" {:>13}", "rest");
    for (phase, dump) in phases.iter().zip(&dumps[1..]) {
        let counts = counts(dump)?;
        let per = |n: u64| n / phase.requests as u64;
        print!("{:<24} {:>12}", phase.name, per(counts.total));
        let mut staged = 0;
        for (_, entries) in STAGES {
            let n = counts.stage(entries);
            staged += n;
            print!(" {:>13}", per(n));
        }
        println!(" {:>13}", per(counts.total.saturating_sub(staged)));
        if functions {
            print_functions(&counts, phase.requests);
        }
    }
    Ok(())
}

/// The costliest kubefake functions of a phase, inclusive, per request (`--functions`).
fn print_functions(counts: &Counts, requests: usize) {
    let mut top: Vec<(&String, &u64)> = counts
        .inclusive
        .iter()
        .filter(|(f, _)| f.contains("kubefake::"))
        .collect();
    top.sort_by(|a, b| b.1.cmp(a.1));
    for (f, c) in top.into_iter().take(60) {
        println!("      {:>12}  {f}", c / requests as u64);
    }
}
