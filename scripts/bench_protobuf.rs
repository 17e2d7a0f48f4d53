//! Protobuf and typed-JSON benchmark: the one-time load of the generated type table, then
//! protobuf decode and encode of one Deployment (the client-go test vector, 1.2 KB of
//! protobuf) and its typed JSON normalization (`kubefake::typed::normalize`, the apiserver's
//! decode into the Go struct and encode again), on one core, with serde_json on the same
//! object for scale. Run with `cargo bench --bench protobuf`.

use std::hint::black_box;
use std::time::Instant;

// The allocator `kubefake serve` runs with.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use base64::Engine;
use kubefake::endpoints::protobuf;
use kubefake::typed;
use serde_json::Value;

const VECTORS: &str = include_str!("../src/data/k8s-1.36/testdata/protobuf-vectors.jsonl");

/// Microseconds per call of `f`: the best of 5 rounds after a warm-up (the minimum is the
/// least disturbed by other processes on a shared machine).
fn per_call(n: usize, mut f: impl FnMut()) -> f64 {
    for _ in 0..n / 10 {
        f();
    }
    (0..5)
        .map(|_| {
            let start = Instant::now();
            for _ in 0..n / 5 {
                f();
            }
            start.elapsed().as_secs_f64() * 1e6 / (n / 5) as f64
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    // The first use parses the embedded table; this process has not touched it yet.
    let start = Instant::now();
    assert!(protobuf::knows("apps/v1", "Deployment"));
    let first_use = start.elapsed().as_secs_f64() * 1e3;
    let parse = per_call(50, || {
        black_box(protobuf::parse_table_again());
    }) / 1e3;

    let vector: Value = VECTORS
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).expect("a vector"))
        .find(|v| v["name"] == "apps/v1 Deployment")
        .expect("the Deployment vector");
    let json = vector["json"].clone();
    let pb = base64::engine::general_purpose::STANDARD
        .decode(vector["pb"].as_str().unwrap_or_default())
        .expect("base64");
    let text = serde_json::to_vec(&json).expect("json");
    assert_eq!(protobuf::decode(&pb).expect("decode"), json);

    let n = 20_000;
    let decode = per_call(n, || {
        black_box(protobuf::decode(black_box(&pb)).ok());
    });
    let encode = per_call(n, || {
        black_box(protobuf::encode(black_box(&json)).ok());
    });
    let watch = per_call(n, || {
        black_box(protobuf::encode_watch_event("MODIFIED", black_box(&json)).ok());
    });
    let from_json = per_call(n, || {
        black_box(serde_json::from_slice::<Value>(black_box(&text)).ok());
    });
    let to_json = per_call(n, || {
        black_box(serde_json::to_vec(black_box(&json)).ok());
    });
    assert_eq!(
        typed::normalize("apps/v1", "Deployment", json.clone())
            .expect("normalize")
            .value,
        json
    );
    let normalize = per_call(n, || {
        black_box(typed::normalize("apps/v1", "Deployment", black_box(&json).clone()).ok());
    });
    let parse_and_normalize = per_call(n, || {
        let v: Value = serde_json::from_slice(black_box(&text)).expect("json");
        black_box(typed::normalize("apps/v1", "Deployment", v).ok());
    });
    // A sparse body, as a client sends it: Go's zero values fill in the rest.
    let sparse: Value = serde_json::from_str(
        r#"{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},
            "spec":{"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":
            {"app":"web"}},"spec":{"containers":[{"name":"web","image":"nginx"}]}}}}"#,
    )
    .expect("json");
    let normalize_sparse = per_call(n, || {
        black_box(typed::normalize("apps/v1", "Deployment", black_box(&sparse).clone()).ok());
    });
    let clone = per_call(n, || {
        black_box(black_box(&json).clone());
    });

    println!("kubefake protobuf benchmark (one core)");
    println!(
        "table load: first use (once per process) {first_use:.2} ms, parse alone {parse:.2} ms"
    );
    println!(
        "Deployment, {} bytes of protobuf, {} of JSON:",
        pb.len(),
        text.len()
    );
    println!("  protobuf decode (bytes -> Value):   {decode:>7.2} us");
    println!("  protobuf encode (Value -> bytes):   {encode:>7.2} us");
    println!("  protobuf watch frame:               {watch:>7.2} us");
    println!("  serde_json from_slice, for scale:   {from_json:>7.2} us");
    println!("  serde_json to_vec, for scale:       {to_json:>7.2} us");
    println!("  clone + typed normalize:            {normalize:>7.2} us");
    println!("  from_slice + normalize:             {parse_and_normalize:>7.2} us");
    println!("  clone + normalize, sparse:          {normalize_sparse:>7.2} us");
    println!("  Value clone, for scale:             {clone:>7.2} us");
}
