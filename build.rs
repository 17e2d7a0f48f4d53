//! Indexes kubefake's generated Kubernetes data (`src/data/k8s-1.36/`, see
//! `scripts/gen-k8s-data`) into Rust tables, so that the server reads only what it uses
//! without decoding whole files: decoding them was most of the first server's start in a
//! debug build.
//!
//! - `k8s_schemas.rs`, from the published schemas of the built-in kinds (`schemas.json`): each
//!   definition's schema as its own JSON text, decoded only when a kind that uses it is first
//!   written; each definition's defaults skeleton (what the search for declared defaults
//!   reads: 50 of the 512 definitions have one, 9 KB in all); and the definition name of
//!   every (group, version, kind).
//! - `k8s_discovery.rs`, from the discovery facts of the built-in resources (`discovery.json`):
//!   static tables of groups and resources.
//! - `k8s_table_index.rs`, from the Go type table (`protobuf.table`): where each message's
//!   lines are, and the message of every kind, so that a message is parsed when first walked.
//! - `recorded_starts.rs`, from the recorded starts compiled into the crate
//!   (`src/state/bootstrap/*.start`): each as a static table of its events, their states
//!   ranges of the text, so that no process reads the text.
//!
//! Runs only when those files (or this script) change.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use serde_json::value::RawValue;
use serde_json::Value;

#[path = "src/schema/zero.rs"]
mod zero;
use zero::is_zero;

#[path = "src/schema/reference.rs"]
#[allow(dead_code)]
mod reference;
use reference::reference;

#[path = "src/state/bootstrap/start_file.rs"]
#[allow(dead_code)]
mod start_file;

const SCHEMAS: &str = "src/data/k8s-1.36/schemas.json";
const TABLE: &str = "src/data/k8s-1.36/protobuf.table";
const DISCOVERY: &str = "src/data/k8s-1.36/discovery.json";
/// The recorded starts compiled in, by the name of the static each becomes.
const STARTS: [(&str, &str); 2] = [
    ("ALWAYS_ALLOW", "src/state/bootstrap/always-allow.start"),
    ("RBAC", "src/state/bootstrap/rbac.start"),
];

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

fn main() -> Result<()> {
    println!("cargo:rerun-if-changed={SCHEMAS}");
    println!("cargo:rerun-if-changed={TABLE}");
    println!("cargo:rerun-if-changed={DISCOVERY}");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/schema/zero.rs");
    println!("cargo:rerun-if-changed=src/state/bootstrap/start_file.rs");
    for (_, path) in STARTS {
        println!("cargo:rerun-if-changed={path}");
    }
    let dir = std::env::var("OUT_DIR")?;
    let dir = Path::new(&dir);
    let (schemas, kinds) = schemas()?;
    std::fs::write(dir.join("k8s_schemas.rs"), schemas)?;
    std::fs::write(dir.join("k8s_table_index.rs"), table_index()?)?;
    std::fs::write(dir.join("k8s_discovery.rs"), discovery(&kinds)?)?;
    std::fs::write(dir.join("recorded_starts.rs"), recorded_starts()?)?;
    Ok(())
}

/// The definition name of each (group, version, kind).
type KindDefinitions = BTreeMap<(String, String, String), String>;

/// The schemas, one JSON text per definition, and the definition of each kind (also returned,
/// for the discovery tables).
fn schemas() -> Result<(String, KindDefinitions)> {
    let text = std::fs::read_to_string(SCHEMAS)?;
    let components: BTreeMap<String, Box<RawValue>> = serde_json::from_str(&text)?;
    let mut out = String::new();
    out.push_str("/// (definition name, its schema as JSON), sorted by name.\n");
    out.push_str("pub static COMPONENTS: &[(&str, &str)] = &[\n");
    let mut kinds: BTreeMap<(String, String, String), &str> = BTreeMap::new();
    let mut parsed_all = BTreeMap::new();
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
        parsed_all.insert(name.as_str(), parsed);
    }
    out.push_str("];\n\n");
    let skeletons = defaults_skeletons(&parsed_all)?;
    out.push_str(
        "/// (definition name, its defaults skeleton as JSON), sorted by name; a definition\n",
    );
    out.push_str("/// without one has nothing the defaults search reads.\n");
    out.push_str("pub static DEFAULT_SKELETONS: &[(&str, &str)] = &[\n");
    out.push_str(&skeletons);
    out.push_str("];\n\n");
    out.push_str("/// The definitions whose schema, every `$ref` inlined, is small (at most\n");
    writeln!(
        out,
        "/// {SMALL_SCHEMA} nodes): compiled on first use rather than read in place, sorted."
    )?;
    out.push_str("pub static SMALL_SCHEMAS: &[&str] = &[\n");
    for name in parsed_all.keys() {
        let mut budget = SMALL_SCHEMA;
        if inlined_within(&parsed_all, name, &mut vec![name.to_string()], &mut budget) {
            writeln!(out, "    {name:?},")?;
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
    let kinds = kinds
        .into_iter()
        .map(|(gvk, name)| (gvk, name.to_string()))
        .collect();
    Ok((out, kinds))
}

/// The most nodes a schema, its `$ref`s inlined, has to be compiled whole when a walk by type
/// first reads it (a ConfigMap's, its ObjectMeta's included, has about 60; a kind with a
/// PodSpec, thousands, which a walk reads in place instead).
const SMALL_SCHEMA: usize = 400;

/// Whether definition `name`'s schema, every `$ref` inlined as the crate's compile does (a
/// definition already on `stack` cut where it recurs), has at most `budget` nodes.
fn inlined_within(
    definitions: &BTreeMap<&str, Value>,
    name: &str,
    stack: &mut Vec<String>,
    budget: &mut usize,
) -> bool {
    match definitions.get(name) {
        Some(schema) => nodes_within(definitions, schema, stack, budget),
        None => true,
    }
}

/// [`inlined_within`] for one node of a schema.
fn nodes_within(
    definitions: &BTreeMap<&str, Value>,
    schema: &Value,
    stack: &mut Vec<String>,
    budget: &mut usize,
) -> bool {
    let Some(obj) = schema.as_object() else {
        return true;
    };
    if *budget == 0 {
        return false;
    }
    *budget -= 1;
    if let Some(name) = reference(obj) {
        if stack.iter().any(|s| s == name) {
            return true;
        }
        stack.push(name.to_string());
        let within = inlined_within(definitions, name, stack, budget);
        stack.pop();
        return within;
    }
    let properties = obj.get("properties").and_then(Value::as_object);
    let children = properties
        .into_iter()
        .flat_map(|p| p.values())
        .chain(obj.get("items"))
        .chain(obj.get("additionalProperties"));
    for child in children {
        if !nodes_within(definitions, child, stack, budget) {
            return false;
        }
    }
    true
}

/// `(name, skeleton)` table lines of every definition with a defaults skeleton
/// ([`defaults_skeleton`]). A `$ref` is kept only to a definition with defaults at or below
/// it, found from those with a default of their own, then those referring to one, until
/// nothing changes.
fn defaults_skeletons(definitions: &BTreeMap<&str, Value>) -> Result<String> {
    let mut live = std::collections::BTreeSet::new();
    loop {
        let next: std::collections::BTreeSet<&str> = definitions
            .iter()
            .filter(|(_, schema)| defaults_skeleton(schema, &|r: &str| live.contains(r)).is_some())
            .map(|(name, _)| *name)
            .collect();
        if next == live {
            break;
        }
        live = next;
    }
    let mut out = String::new();
    for (name, schema) in definitions {
        if let Some(skeleton) = defaults_skeleton(schema, &|r: &str| live.contains(r)) {
            writeln!(out, "    ({name:?}, {:?}),", skeleton.to_string())?;
        }
    }
    Ok(out)
}

/// What the search for a definition's declared defaults (`Defaults::of` in
/// `src/registry/builtin/schema.rs`) reads of a schema, and nothing else: a `$ref` (or the
/// first `$ref` of `allOf`) to a `live` definition, a `default` other than a zero value, and
/// the `properties`, `items` and `additionalProperties` that lead to one of those. None when
/// nothing is left. The search gives the same result on the skeleton as on the schema (a unit
/// test there compares it with the compiled schemas for every kind).
fn defaults_skeleton(schema: &Value, live: &dyn Fn(&str) -> bool) -> Option<Value> {
    let obj = schema.as_object()?;
    let mut out = serde_json::Map::new();
    // The search follows a reference to `#/components/schemas/NAME` only.
    let followed = |r: &&Value| {
        r.as_str()
            .and_then(|r| r.strip_prefix(reference::PREFIX))
            .is_some_and(live)
    };
    if let Some(v) = obj.get("$ref").filter(followed) {
        out.insert("$ref".to_string(), v.clone());
    }
    // The search keeps no default that is its type's zero value (a Go field holds that
    // already): most published defaults are `""`, `0` or `false`.
    if let Some(v) = obj.get("default").filter(|v| !is_zero(v)) {
        out.insert("default".to_string(), v.clone());
    }
    if let Some(all) = obj.get("allOf").and_then(Value::as_array) {
        // The search takes `allOf`'s first element's `$ref` (and no other `$ref`) when
        // `allOf` is a list: an empty one still hides a `$ref` beside it.
        match all.first().and_then(|f| f.get("$ref")).filter(followed) {
            Some(r) => {
                out.insert("allOf".to_string(), serde_json::json!([{ "$ref": r }]));
            }
            None if out.contains_key("$ref") => {
                out.insert("allOf".to_string(), Value::Array(Vec::new()));
            }
            None => {}
        }
    }
    if let Some(properties) = obj.get("properties").and_then(Value::as_object) {
        let kept: serde_json::Map<String, Value> = properties
            .iter()
            .filter_map(|(name, s)| Some((name.clone(), defaults_skeleton(s, live)?)))
            .collect();
        if !kept.is_empty() {
            out.insert("properties".to_string(), Value::Object(kept));
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(kept) = obj.get(key).and_then(|s| defaults_skeleton(s, live)) {
            out.insert(key.to_string(), kept);
        }
    }
    (!out.is_empty()).then_some(Value::Object(out))
}

/// Where each message of the type table is, and the message of each kind (the format is
/// described in `src/typed/model.rs`; `Table::index` reads it the same way at run time, and a
/// unit test checks that both agree).
fn table_index() -> Result<String> {
    let text = std::fs::read_to_string(TABLE)?;
    // (offset of the `M` line, of the line after it, of the message's end, line number)
    let mut messages: Vec<([usize; 4], &str)> = Vec::new();
    let mut kinds: Vec<(&str, &str, usize)> = Vec::new();
    let mut offset = 0;
    for (n, raw) in text.split_inclusive('\n').enumerate() {
        let start = offset;
        offset += raw.len();
        let line = raw.strip_suffix('\n').unwrap_or(raw);
        if line.starts_with("M ") {
            if let Some((last, _)) = messages.last_mut() {
                last[2] = start;
            }
            let name = line.split(' ').nth(2).ok_or("M without a name")?;
            messages.push(([start, offset, text.len(), n + 1], name));
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
        "/// Per message: its name, the offsets of its `M` line, of its first field line\n",
    );
    out.push_str("/// and of its end, and the line number of its `M` line.\n");
    out.push_str("pub static MESSAGES: &[(&str, usize, usize, usize, usize)] = &[\n");
    for ([header, body, end, line], name) in &messages {
        writeln!(out, "    ({name:?}, {header}, {body}, {end}, {line}),")?;
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

/// The groups and the resources of each group-version, as `GroupInfo` and `ResourceInfo`
/// (declared in `src/registry/builtin/data.rs`) literals, each with its kind's definition
/// names from `kinds`.
fn discovery(kinds: &KindDefinitions) -> Result<String> {
    let text = std::fs::read_to_string(DISCOVERY)?;
    let file: Value = serde_json::from_str(&text)?;
    let mut out = String::new();
    out.push_str("/// Groups under `/apis`, in the apiserver's order.\n");
    out.push_str("pub static GROUPS: &[GroupInfo] = &[\n");
    for g in file["groups"].as_array().ok_or("no groups")? {
        let versions: Vec<&str> = g["versions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v["version"].as_str())
            .collect();
        let name = g["name"].as_str().ok_or("a group without a name")?;
        writeln!(
            out,
            "    GroupInfo {{ name: {name:?}, versions: &{versions:?} }},"
        )?;
    }
    out.push_str("];\n\n");
    out.push_str(
        "/// (group-version, its resources in the apiserver's order), sorted by group-version.\n",
    );
    out.push_str("pub static RESOURCES: &[(&str, &[ResourceInfo])] = &[\n");
    let resources = file["resources"].as_object().ok_or("no resources")?;
    // serde_json's map is sorted by key: the order the server's binary search needs.
    for (gv, list) in resources {
        writeln!(out, "    ({gv:?}, &[")?;
        let (group, version) = gv.split_once('/').unwrap_or(("", gv));
        let definition = |kind: String| {
            let key = (group.to_string(), version.to_string(), kind);
            kinds.get(&key).map_or("", String::as_str)
        };
        for r in list.as_array().ok_or("resources not a list")? {
            let kind = r["kind"].as_str().unwrap_or("");
            let names = (
                definition(kind.to_string()),
                definition(format!("{kind}List")),
            );
            resource_info(&mut out, r, names)?;
        }
        out.push_str("    ]),\n");
    }
    out.push_str("];\n");
    Ok(out)
}

/// One `ResourceInfo` literal; `definitions` are the definition names of its kind and of its
/// list kind in its group-version.
fn resource_info(out: &mut String, r: &Value, definitions: (&str, &str)) -> Result<()> {
    let text = |k: &str| r[k].as_str().unwrap_or("");
    let list = |k: &str| -> Vec<&str> {
        r[k].as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect()
    };
    let optional = |k: &str| r[k].as_str().map(str::to_string);
    writeln!(
        out,
        "        ResourceInfo {{ name: {:?}, singular_name: {:?}, namespaced: {}, kind: {:?}, \
         group: {:?}, version: {:?}, verbs: &{:?}, short_names: &{:?}, categories: &{:?}, \
         storage_version_hash: {:?}, definition: {:?}, list_definition: {:?} }},",
        text("name"),
        text("singularName"),
        r["namespaced"].as_bool().unwrap_or(false),
        text("kind"),
        optional("group"),
        optional("version"),
        list("verbs"),
        list("shortNames"),
        list("categories"),
        text("storageVersionHash"),
        definitions.0,
        definitions.1,
    )?;
    Ok(())
}

/// Each recorded start as a static `File` literal (declared in
/// `src/state/bootstrap/start_file.rs`), named as in [`STARTS`].
fn recorded_starts() -> Result<String> {
    let mut out = String::new();
    for (name, path) in STARTS {
        let text = std::fs::read_to_string(path)?;
        let file = start_file::parse(&text).map_err(|e| format!("{path}: {e}"))?;
        writeln!(out, "/// `{path}`, read by `build.rs`.")?;
        writeln!(out, "pub(super) static {name}: File<'static> = File {{")?;
        writeln!(
            out,
            "    uids: {},\n    events: Cow::Borrowed(&[",
            file.uids
        )?;
        for event in file.events.iter() {
            recorded_event(&mut out, event)?;
        }
        out.push_str("    ]),\n};\n\n");
    }
    Ok(out)
}

/// One recorded `Event` literal.
fn recorded_event(out: &mut String, e: &start_file::Event<'_>) -> Result<()> {
    let index = match &e.index {
        None => "None".to_string(),
        Some(i) => format!(
            "Some(Index {{ uid: {:?}, owners: Cow::Borrowed(&{:?}), api_version: {:?} }})",
            i.uid, i.owners, i.api_version
        ),
    };
    let holes: Vec<String> = e
        .holes
        .iter()
        .map(|(range, hole)| format!("({range:?}, Hole::{hole:?})"))
        .collect();
    writeln!(
        out,
        "        Event {{ kind: {:?}, group: {:?}, resource: {:?}, namespace: {:?}, name: {:?}, \
         state: {:?}, rv: {}, index: {index}, holes: Cow::Borrowed(&[{}]) }},",
        e.kind,
        e.group,
        e.resource,
        e.namespace,
        e.name,
        e.state,
        e.rv,
        holes.join(", "),
    )?;
    Ok(())
}
