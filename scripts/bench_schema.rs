//! Schema benchmark: prune + default + validate of a ~10 KB custom resource against a
//! 100-property structural schema, on one core (the per-write cost of the schema pipeline).
//! Run with `cargo bench --bench schema`.

use std::time::Instant;

// The allocator `kubefake serve` runs with.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use kubefake::schema::Schema;
use serde_json::{json, Map, Value};

/// 100 properties of mixed kinds: patterned and bounded strings, bounded integers, enums,
/// nested objects with defaults, lists of objects with map semantics.
fn schema() -> Value {
    let mut props = Map::new();
    for i in 0..100 {
        let p = match i % 5 {
            0 => json!({"type": "string", "maxLength": 200, "pattern": "^[a-z0-9-]+$"}),
            1 => json!({"type": "integer", "minimum": 0, "maximum": 1_000_000}),
            2 => json!({"type": "string", "enum": ["a", "b", "c", "value-with-some-length"]}),
            3 => json!({"type": "object", "properties": {
                "x": {"type": "string", "default": "dx"},
                "y": {"type": "integer", "default": 7},
                "z": {"type": "boolean"}}}),
            _ => json!({"type": "array", "maxItems": 20, "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["name"],
                "items": {"type": "object", "required": ["name"], "properties": {
                    "name": {"type": "string"}, "value": {"type": "string", "maxLength": 64}}}}),
        };
        props.insert(format!("field{i:03}"), p);
    }
    json!({"type": "object", "properties": {
        "apiVersion": {"type": "string"}, "kind": {"type": "string"}, "metadata": {"type": "object"},
        "spec": {"type": "object", "properties": props}}})
}

fn object() -> Value {
    let mut spec = Map::new();
    for i in 0..100 {
        let v = match i % 5 {
            0 => json!(format!("value-number-{i}-with-a-reasonably-long-suffix")),
            1 => json!(i * 1000),
            2 => json!("value-with-some-length"),
            3 => json!({"z": true}),
            _ => Value::Array(
                (0..6)
                    .map(|k| json!({"name": format!("entry-{k}"), "value": format!("a-value-of-moderate-length-{k}")}))
                    .collect(),
            ),
        };
        spec.insert(format!("field{i:03}"), v);
    }
    spec.insert("unknownField".into(), json!("pruned"));
    json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
           "metadata": {"name": "bench", "namespace": "default", "labels": {"app": "bench"}},
           "spec": spec})
}

fn main() {
    let schema = Schema::compile(&schema());
    let template = object();
    let size = serde_json::to_vec(&template).map(|b| b.len()).unwrap_or(0);
    // The copy stands for decoding the request body, which the pipeline needs anyway.
    let run = |n: usize| {
        let start = Instant::now();
        let mut errors = 0;
        for _ in 0..n {
            let mut obj = template.clone();
            schema.prune(&mut obj);
            schema.apply_defaults(&mut obj);
            errors += schema.validate(&obj, None).len();
        }
        assert_eq!(errors, 0, "the benchmark object is valid");
        n as f64 / start.elapsed().as_secs_f64()
    };
    // The pipeline works on a freshly decoded object; a clone of the template stands for the
    // decode and is timed separately so that it can be taken out.
    let clone_rate = {
        let n = 20_000;
        let start = Instant::now();
        for _ in 0..n {
            std::hint::black_box(template.clone());
        }
        n as f64 / start.elapsed().as_secs_f64()
    };
    run(2_000);
    let with_clone = run(20_000);
    let per_second = 1.0 / (1.0 / with_clone - 1.0 / clone_rate);
    println!(
        "  (the loop, copy included: {with_clone:.0} objects/s; the copy alone: {:.1} us)",
        1e6 / clone_rate
    );
    let verdict = if per_second > 20_000.0 {
        "PASS"
    } else {
        "FAIL"
    };
    println!("kubefake schema benchmark (one core)");
    println!(
        "prune + default + validate, {size}-byte object, 100-property schema: {per_second:>9.0} objects/s   target > 20000  {verdict}"
    );
}
