//! Indexes kubefake's generated Kubernetes data (`src/data/k8s-1.36/`, see
//! `scripts/gen-k8s-data`) into Rust tables, so that the server reads only what it uses
//! without decoding whole files: decoding them was most of the first server's start in a
//! debug build.
//!
//! - `k8s_schemas.rs`, from the published schemas of the built-in kinds (`schemas.json`): each
//!   definition's schema as its own JSON text, decoded only when a kind that uses it is first
//!   written, and the definition name of every (group, version, kind).
//! - `k8s_table_index.rs`, from the Go type table (`protobuf.table`): where each message's
//!   lines are, and the message of every kind, so that a message is parsed when first walked.
//!
//! Runs only when those files (or this script) change.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde_json::value::RawValue;
use serde_json::Value;

const SCHEMAS: &str = "src/data/k8s-1.36/schemas.json";
const TABLE: &str = "src/data/k8s-1.36/protobuf.table";

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn main() -> Result<()> {
    println!("cargo:rerun-if-changed={SCHEMAS}");
    println!("cargo:rerun-if-changed={TABLE}");
    println!("cargo:rerun-if-changed=build.rs");
    let dir = std::env::var("OUT_DIR")?;
    let dir = Path::new(&dir);
    std::fs::write(dir.join("k8s_schemas.rs"), schemas()?)?;
    std::fs::write(dir.join("k8s_table_index.rs"), table_index()?)?;
    Ok(())
}

/// The schemas, one JSON text per definition, and the definition of each kind.
fn schemas() -> Result<String> {
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
    Ok(out)
}

/// Where each message of the type table is, and the message of each kind (the format is
/// described in `src/typed/model.rs`; `Table::index` reads it the same way at run time, and a
/// unit test checks that both agree).
fn table_index() -> Result<String> {
    let text = std::fs::read_to_string(TABLE)?;
    // (offset of the `M` line, of the line after it, of the message's end, line number)
    let mut messages: Vec<[usize; 4]> = Vec::new();
    let mut kinds: Vec<(&str, &str, usize)> = Vec::new();
    let mut offset = 0;
    for (n, raw) in text.split_inclusive('\n').enumerate() {
        let start = offset;
        offset += raw.len();
        let line = raw.strip_suffix('\n').unwrap_or(raw);
        if line.starts_with("M ") {
            if let Some(last) = messages.last_mut() {
                last[2] = start;
            }
            messages.push([start, offset, text.len(), n + 1]);
        } else if let Some(rest) = line.strip_prefix("K ") {
            let id = messages.len().checked_sub(1).ok_or("K before M")?;
            let mut parts = rest.split(' ');
            let kind = parts.next().ok_or("K without a kind")?;
            kinds.extend(parts.map(|version| (kind, version, id)));
        }
    }
    // Stable: a kind listed twice in one version keeps its first message first.
    kinds.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
    let mut out = String::new();
    out.push_str(
        "/// Per message: the offsets of its `M` line, of its first field line and of its end,\n",
    );
    out.push_str("/// and the line number of its `M` line.\n");
    out.push_str("pub static MESSAGES: &[(usize, usize, usize, usize)] = &[\n");
    for [header, body, end, line] in &messages {
        writeln!(out, "    ({header}, {body}, {end}, {line}),")?;
    }
    out.push_str("];\n\n");
    out.push_str("/// (Kind, apiVersion, message), sorted by kind and apiVersion.\n");
    out.push_str("pub static KINDS: &[(&str, &str, u32)] = &[\n");
    for (kind, version, id) in &kinds {
        writeln!(out, "    ({kind:?}, {version:?}, {id}),")?;
    }
    out.push_str("];\n");
    Ok(out)
}
