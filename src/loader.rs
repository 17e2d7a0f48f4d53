//! Preloading objects from YAML or JSON files and directories (`--crds`, `--objects`, and the
//! builder's `crds()`/`objects()`), through the same create path as any client.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::context::Context;
use crate::registry::store as rest;
use crate::state::State;
use crate::Error;

/// The manifest files under `path`: the file itself, or every `.yaml`, `.yml` and `.json` file of
/// a directory (recursively) in name order.
pub fn manifest_files(path: &Path) -> Result<Vec<PathBuf>, Error> {
    let meta =
        std::fs::metadata(path).map_err(|e| Error::Load(path.to_path_buf(), e.to_string()))?;
    if meta.is_file() {
        return Ok(vec![path.to_path_buf()]);
    }
    let mut files = Vec::new();
    let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
        .map_err(|e| Error::Load(path.to_path_buf(), e.to_string()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for entry in entries {
        if entry.is_dir() {
            files.extend(manifest_files(&entry)?);
        } else if matches!(
            entry.extension().and_then(|e| e.to_str()),
            Some("yaml" | "yml" | "json")
        ) {
            files.push(entry);
        }
    }
    Ok(files)
}

/// Every object in a manifest file: YAML documents (or one JSON document), with `kind: List`
/// flattened.
pub fn read_manifests(path: &Path) -> Result<Vec<Value>, Error> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| Error::Load(path.to_path_buf(), e.to_string()))?;
    let docs: Vec<Value> = serde_saphyr::from_multiple(&text)
        .map_err(|e| Error::Load(path.to_path_buf(), e.to_string()))?;
    let mut out = Vec::new();
    for doc in docs {
        match doc {
            Value::Null => {}
            Value::Object(ref o)
                if o.get("kind")
                    .and_then(Value::as_str)
                    .is_some_and(|k| k.ends_with("List"))
                    && o.get("items").is_some() =>
            {
                if let Some(items) = o.get("items").and_then(Value::as_array) {
                    out.extend(items.iter().cloned());
                }
            }
            Value::Object(_) => out.push(doc),
            _ => {
                return Err(Error::Load(
                    path.to_path_buf(),
                    "a document is not an object".into(),
                ))
            }
        }
    }
    Ok(out)
}

/// What a preload path contributes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Only {
    /// Only CustomResourceDefinitions (`--crds`, like envtest's CRD paths: other kinds in the
    /// same files are skipped).
    Crds,
    /// Every object.
    All,
}

/// Creates the objects in the files under `paths`.
pub async fn load(state: &State, paths: &[PathBuf], only: Only) -> Result<usize, Error> {
    let ctx = Context::internal();
    let mut count = 0;
    for path in paths {
        for file in manifest_files(path)? {
            for obj in read_manifests(&file)? {
                if only == Only::Crds && obj["kind"] != "CustomResourceDefinition" {
                    continue;
                }
                create(state, &ctx, &obj)
                    .await
                    .map_err(|e| Error::Load(file.clone(), e.to_string()))?;
                count += 1;
            }
        }
    }
    Ok(count)
}

async fn create(state: &State, ctx: &Context, obj: &Value) -> Result<(), crate::error::ApiError> {
    let api_version = obj["apiVersion"].as_str().unwrap_or("");
    let kind = obj["kind"].as_str().unwrap_or("");
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let registry = state.registry();
    let res = registry.by_kind(group, version, kind).ok_or_else(|| {
        crate::error::ApiError::bad_request(format!("no resource serves {api_version} {kind}"))
    })?;
    let namespace = if res.namespaced {
        match obj["metadata"]["namespace"].as_str() {
            Some(ns) if !ns.is_empty() => ns.to_string(),
            _ => "default".to_string(),
        }
    } else {
        String::new()
    };
    let mut stored = obj.clone();
    stored["apiVersion"] = serde_json::json!(format!(
        "{}{}",
        if res.group.is_empty() {
            String::new()
        } else {
            format!("{}/", res.group)
        },
        res.storage_version
    ));
    rest::create(state, ctx, &res, &namespace, stored)
        .await
        .map(|_| ())
}
