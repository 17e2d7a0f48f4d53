//! Turns the published schemas of the built-in kinds (`src/data/k8s-1.36/schemas.json`, see
//! `scripts/gen-k8s-data`) into Rust tables the server reads without decoding the whole file:
//! each definition's schema as its own JSON text, decoded only when a kind that uses it is
//! first written, and the definition name of every (group, version, kind). Decoding the whole
//! file was most of the first server's start in a debug build.
//!
//! Runs only when the file (or this script) changes.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde_json::value::RawValue;
use serde_json::Value;

const SCHEMAS: &str = "src/data/k8s-1.36/schemas.json";

fn main() -> Result<(), Box<dyn std::error::Error>> {
    println!("cargo:rerun-if-changed={SCHEMAS}");
    println!("cargo:rerun-if-changed=build.rs");
    let text = std::fs::read_to_string(SCHEMAS)?;
    let components: BTreeMap<String, Box<RawValue>> = serde_json::from_str(&text)?;
    let mut out = String::new();
    out.push_str("/// (definition name, its schema as JSON), sorted by name.\n");
    out.push_str("pub static COMPONENTS: &[(&str, &str)] = &[\n");
    let mut kinds: BTreeMap<(String, String, String), &str> = BTreeMap::new();
    for (name, schema) in &components {
        writeln!(out, "    ({name:?}, {:?}),", schema.get())?;
        let parsed: Value = serde_json::from_str(schema.get())?;
        let gvks = parsed["x-kubernetes-group-version-kind"].as_array();
        for gvk in gvks.into_iter().flatten() {
            let part = |k: &str| gvk[k].as_str().unwrap_or("").to_string();
            // The first definition (by name) of a kind is the one it is published as.
            kinds
                .entry((part("group"), part("version"), part("kind")))
                .or_insert(name);
        }
    }
    out.push_str("];\n\n");
    out.push_str(
        "/// (group, version, kind, definition name), sorted by group, version and kind.\n",
    );
    out.push_str("pub static KIND_DEFINITIONS: &[(&str, &str, &str, &str)] = &[\n");
    for ((group, version, kind), name) in &kinds {
        writeln!(out, "    ({group:?}, {version:?}, {kind:?}, {name:?}),")?;
    }
    out.push_str("];\n");
    let dir = std::env::var("OUT_DIR")?;
    std::fs::write(Path::new(&dir).join("k8s_schemas.rs"), out)?;
    Ok(())
}
