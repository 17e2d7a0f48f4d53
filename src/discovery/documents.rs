//! Discovery documents, rendered once per registry, when first asked for: legacy (`/api`,
//! `/api/v1`, `/apis`, `/apis/{g}`, `/apis/{g}/{v}`) and aggregated (`apidiscovery.k8s.io/v2`
//! `APIGroupDiscoveryList` for `/api` and `/apis`).

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use bytes::Bytes;
use serde_json::{json, Value};
use sha2::{Digest, Sha512};

use crate::registry::catalog::{ApiGroup, ApiResource};

/// The Content-Type of an aggregated discovery response; clients decide how to parse by it.
pub const AGGREGATED_V2: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
/// The v2beta1 variant, still asked for by clients before 1.35.
pub const AGGREGATED_V2BETA1: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList";

/// An aggregated document in both served versions plus its ETag.
#[derive(Clone)]
pub struct Aggregated {
    /// apidiscovery.k8s.io/v2 body.
    pub v2: Bytes,
    /// apidiscovery.k8s.io/v2beta1 body (same shape, other apiVersion).
    pub v2beta1: Bytes,
    /// Quoted ETag (hex SHA-512 of the v2 body), as the apiserver computes it.
    pub etag: String,
}

/// Every discovery document of one registry snapshot. Cheap to clone (the documents are shared
/// bytes and maps behind `Arc`s): the servers of a process that serve only the built-in kinds
/// share one rendering, each with its own `/api` (which names its address).
#[derive(Clone)]
pub struct Documents {
    /// `GET /api`.
    pub api: Bytes,
    /// `GET /apis`.
    pub apis: Bytes,
    /// `GET /api/v1` and `GET /apis/{g}/{v}`, keyed by (group, version).
    pub resource_lists: Arc<HashMap<(String, String), Bytes>>,
    /// `GET /apis/{g}`.
    pub groups: Arc<HashMap<String, Bytes>>,
    /// Aggregated `/api`.
    pub aggregated_api: Aggregated,
    /// Aggregated `/apis`.
    pub aggregated_apis: Aggregated,
}

/// A document's bytes, in Go's field order where its kind is a typed one (`APIGroupList`,
/// `APIResourceList`...).
fn bytes(v: &Value) -> Bytes {
    Bytes::from(crate::typed::order::to_vec(v))
}

fn gv(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    }
}

fn group_doc(g: &ApiGroup) -> Value {
    let versions: Vec<Value> = g
        .versions
        .iter()
        .map(|v| json!({"groupVersion": gv(&g.name, v), "version": v}))
        .collect();
    json!({
        "name": g.name,
        "versions": versions,
        "preferredVersion": versions.first().cloned().unwrap_or(Value::Null),
    })
}

fn legacy_resource(r: &ApiResource) -> Vec<Value> {
    let mut main = json!({
        "name": r.plural,
        "singularName": r.singular,
        "namespaced": r.namespaced,
        "kind": r.kind,
        "verbs": r.verbs,
    });
    if !r.short_names.is_empty() {
        main["shortNames"] = json!(r.short_names);
    }
    if !r.categories.is_empty() {
        main["categories"] = json!(r.categories);
    }
    if !r.storage_version_hash.is_empty() {
        main["storageVersionHash"] = json!(r.storage_version_hash);
    }
    let mut out = vec![main];
    for sub in &r.subresources {
        let mut v = json!({"name": format!("{}/{}", r.plural, sub.name), "singularName": "",
               "namespaced": r.namespaced});
        match sub.response_kind() {
            Some((group, version, kind)) => {
                if !version.is_empty() {
                    v["group"] = json!(group);
                    v["version"] = json!(version);
                }
                v["kind"] = json!(kind);
            }
            None => v["kind"] = json!(r.kind),
        }
        v["verbs"] = json!(sub.verbs);
        out.push(v);
    }
    out
}

fn aggregated_resource(r: &ApiResource) -> Value {
    // Built-ins carry only the kind in responseKind, custom resources the full GVK.
    let response_kind = if r.response_kind_has_version {
        json!({"group": r.group, "version": r.version, "kind": r.kind})
    } else {
        json!({"group": "", "version": "", "kind": r.kind})
    };
    let mut v = json!({
        "resource": r.plural,
        "responseKind": response_kind,
        "scope": if r.namespaced { "Namespaced" } else { "Cluster" },
        "singularResource": r.singular,
        "verbs": r.verbs,
    });
    if !r.short_names.is_empty() {
        v["shortNames"] = json!(r.short_names);
    }
    if !r.categories.is_empty() {
        v["categories"] = json!(r.categories);
    }
    let subs: Vec<Value> = r
        .subresources
        .iter()
        .map(|sub| {
            let kind = match sub.response_kind() {
                Some((group, version, kind)) => {
                    json!({"group": group, "version": version, "kind": kind})
                }
                None => response_kind.clone(),
            };
            json!({"subresource": sub.name, "responseKind": kind, "verbs": sub.verbs})
        })
        .collect();
    if !subs.is_empty() {
        v["subresources"] = Value::Array(subs);
    }
    v
}

fn aggregated(items: Vec<Value>) -> Aggregated {
    let doc = |api_version: &str| {
        json!({"kind": "APIGroupDiscoveryList", "apiVersion": api_version,
               "metadata": {}, "items": items})
    };
    let v2 = bytes(&doc("apidiscovery.k8s.io/v2"));
    let v2beta1 = bytes(&doc("apidiscovery.k8s.io/v2beta1"));
    let digest = Sha512::digest(&v2);
    let hex: String = digest.iter().map(|b| format!("{b:02X}")).collect();
    Aggregated {
        v2,
        v2beta1,
        etag: format!("\"{hex}\""),
    }
}

impl Documents {
    /// Renders every document for a registry snapshot; `/api` is left empty, for
    /// [`Documents::for_server`] to fill.
    pub fn render(
        groups: &[ApiGroup],
        resources: &BTreeMap<(String, String), Vec<Arc<ApiResource>>>,
    ) -> Documents {
        let empty = Vec::new();
        let list_of = |g: &str, v: &str| {
            resources
                .get(&(g.to_string(), v.to_string()))
                .unwrap_or(&empty)
        };

        let mut resource_lists = HashMap::new();
        for ((g, v), list) in resources {
            let items: Vec<Value> = list.iter().flat_map(|r| legacy_resource(r)).collect();
            let mut doc =
                json!({"kind": "APIResourceList", "groupVersion": gv(g, v), "resources": items});
            if !g.is_empty() {
                doc["apiVersion"] = json!("v1");
            }
            resource_lists.insert((g.clone(), v.clone()), bytes(&doc));
        }

        let group_docs: Vec<Value> = groups.iter().map(group_doc).collect();
        let apis =
            bytes(&json!({"kind": "APIGroupList", "apiVersion": "v1", "groups": group_docs}));
        let groups_map = groups
            .iter()
            .map(|g| {
                let mut doc = group_doc(g);
                doc["kind"] = json!("APIGroup");
                doc["apiVersion"] = json!("v1");
                (g.name.clone(), bytes(&doc))
            })
            .collect();

        let version_item = |g: &str, v: &str| {
            json!({"version": v,
                   "resources": list_of(g, v).iter().map(|r| aggregated_resource(r)).collect::<Vec<_>>(),
                   "freshness": "Current"})
        };
        let aggregated_api = aggregated(vec![json!({
            "metadata": {"creationTimestamp": null},
            "versions": [version_item("", "v1")],
        })]);
        let aggregated_apis = aggregated(
            groups
                .iter()
                .map(|g| {
                    json!({
                        "metadata": {"name": g.name, "creationTimestamp": null},
                        "versions": g.versions.iter().map(|v| version_item(&g.name, v)).collect::<Vec<_>>(),
                    })
                })
                .collect(),
        );
        Documents {
            api: Bytes::new(),
            apis,
            resource_lists: Arc::new(resource_lists),
            groups: Arc::new(groups_map),
            aggregated_api,
            aggregated_apis,
        }
    }

    /// These documents as a server listening on `server_address` serves them: only `/api`
    /// names the address, so this costs one small document, not a rendering.
    pub fn for_server(&self, server_address: &str) -> Documents {
        Documents {
            api: api_versions(server_address),
            ..self.clone()
        }
    }
}

/// `GET /api`: the legacy group's versions and the address clients reach the server at.
fn api_versions(server_address: &str) -> Bytes {
    bytes(&json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": server_address}],
    }))
}
