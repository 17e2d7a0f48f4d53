//! Published OpenAPI: `/openapi/v3` (an index of group-version documents) and
//! `/openapi/v3/{api|apis/<group>}/<version>`, plus `/openapi/v2`, generated from the CRDs'
//! structural schemas once per registry snapshot.
//!
//! kubectl reads these to explain fields (`kubectl explain`) and to learn that the server
//! validates fields itself (the `fieldValidation` parameter of a kind's PATCH operation), in
//! which case it leaves validation to the server.

use std::collections::BTreeMap;
use std::sync::Arc;

use bytes::Bytes;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha512};

use crate::registry::catalog::ApiResource;

/// One published OpenAPI v3 document and its content hash (the index links it with
/// `?hash=`; clients cache by it).
#[derive(Clone)]
pub struct V3Document {
    /// The document.
    pub body: Bytes,
    /// Upper-case hex SHA-512 of `body`.
    pub hash: String,
}

/// Every OpenAPI document of one registry snapshot.
#[derive(Clone)]
pub struct OpenApi {
    /// `/openapi/v3`.
    pub v3_index: Bytes,
    /// `/openapi/v3/<path>` by path (`api/v1`, `apis/stable.example.com/v1`).
    pub v3: BTreeMap<String, V3Document>,
    /// `/openapi/v2` (JSON).
    pub v2: Bytes,
}

const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
const LIST_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta";

fn hash(bytes: &[u8]) -> String {
    Sha512::digest(bytes)
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect()
}

/// `stable.example.com` -> `com.example.stable`, the apiserver's definition-name prefix.
fn reversed_group(group: &str) -> String {
    let mut parts: Vec<&str> = group.split('.').collect();
    parts.reverse();
    parts.join(".")
}

fn definition_name(res: &ApiResource, kind: &str) -> String {
    if res.group.is_empty() {
        return format!("io.k8s.api.core.{}.{kind}", res.version);
    }
    if res.crd.is_none() {
        return format!(
            "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.{}.{kind}",
            res.version
        );
    }
    format!("{}.{}.{kind}", reversed_group(&res.group), res.version)
}

fn gvk(res: &ApiResource, kind: &str) -> Value {
    json!([{"group": res.group, "kind": kind, "version": res.version}])
}

const API_VERSION_DESCRIPTION: &str = "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources";
const KIND_DESCRIPTION: &str = "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";

/// The schema published for a custom resource: the CRD's, with apiVersion/kind described,
/// metadata a reference to ObjectMeta, and the kind's GVK extension.
fn crd_schema(res: &ApiResource, v3: bool) -> Value {
    let raw = res
        .crd
        .as_ref()
        .and_then(|c| c.spec.versions.iter().find(|v| v.name == res.version))
        .and_then(|v| v.schema.as_ref())
        .and_then(|s| s.get("openAPIV3Schema"))
        .cloned()
        .unwrap_or_else(|| json!({"type": "object"}));
    let mut schema = if v3 { raw } else { to_v2(&raw) };
    if !schema.is_object() {
        schema = json!({});
    }
    let props = schema
        .as_object_mut()
        .map(|o| o.entry("properties").or_insert_with(|| json!({})));
    if let Some(Value::Object(props)) = props {
        props.insert(
            "apiVersion".into(),
            json!({"type": "string", "description": API_VERSION_DESCRIPTION}),
        );
        props.insert(
            "kind".into(),
            json!({"type": "string", "description": KIND_DESCRIPTION}),
        );
        props.insert("metadata".into(), reference(OBJECT_META, v3));
    }
    schema["x-kubernetes-group-version-kind"] = gvk(res, &res.kind);
    schema
}

fn reference(name: &str, v3: bool) -> Value {
    if v3 {
        // OpenAPI v3 forbids siblings next to $ref; the apiserver wraps it in allOf.
        json!({"allOf": [{"$ref": format!("#/components/schemas/{name}")}], "description": "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"})
    } else {
        json!({"$ref": format!("#/definitions/{name}"), "description": "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"})
    }
}

/// The documented OpenAPI v3 -> v2 conversion: v2 cannot express `nullable`, so a nullable
/// node loses type, items and properties; junctors (allOf/anyOf/oneOf/not) are dropped.
pub fn to_v2(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let nullable = m.get("nullable") == Some(&Value::Bool(true));
            let mut out = Map::new();
            for (k, val) in m {
                match k.as_str() {
                    "allOf" | "anyOf" | "oneOf" | "not" | "nullable" => {}
                    "type" | "items" | "properties" if nullable => {}
                    "properties" | "patternProperties" | "definitions" => {
                        let converted = val
                            .as_object()
                            .map(|p| {
                                p.iter()
                                    .map(|(n, s)| (n.clone(), to_v2(s)))
                                    .collect::<Map<_, _>>()
                            })
                            .map(Value::Object)
                            .unwrap_or_else(|| val.clone());
                        out.insert(k.clone(), converted);
                    }
                    "items" | "additionalProperties" => {
                        out.insert(k.clone(), to_v2(val));
                    }
                    _ => {
                        out.insert(k.clone(), val.clone());
                    }
                }
            }
            Value::Object(out)
        }
        other => other.clone(),
    }
}

fn object_meta_schema() -> Value {
    let s = |d: &str| json!({"type": "string", "description": d});
    json!({
        "description": "ObjectMeta is metadata that all persisted resources must have, which includes all objects users must create.",
        "type": "object",
        "properties": {
            "name": s("Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"),
            "generateName": s("GenerateName is an optional prefix, used by the server, to generate a unique name ONLY IF the Name field has not been provided."),
            "namespace": s("Namespace defines the space within which each name must be unique. An empty namespace is equivalent to the \"default\" namespace, but \"default\" is the canonical representation. Not all objects are required to be scoped to a namespace - the value of this field for those objects will be empty."),
            "uid": s("UID is the unique in time and space value for this object. It is typically generated by the server on successful creation of a resource and is not allowed to change on PUT operations."),
            "resourceVersion": s("An opaque value that represents the internal version of this object that can be used by clients to determine when objects have changed."),
            "generation": {"type": "integer", "format": "int64", "description": "A sequence number representing a specific generation of the desired state. Populated by the system. Read-only."},
            "creationTimestamp": {"type": "string", "format": "date-time", "description": "CreationTimestamp is a timestamp representing the server time when this object was created."},
            "deletionTimestamp": {"type": "string", "format": "date-time", "description": "DeletionTimestamp is RFC 3339 date and time at which this resource will be deleted."},
            "deletionGracePeriodSeconds": {"type": "integer", "format": "int64", "description": "Number of seconds allowed for this object to gracefully terminate before it will be removed from the system."},
            "labels": {"type": "object", "additionalProperties": {"type": "string", "default": ""}, "description": "Map of string keys and values that can be used to organize and categorize (scope and select) objects."},
            "annotations": {"type": "object", "additionalProperties": {"type": "string", "default": ""}, "description": "Annotations is an unstructured key value map stored with a resource that may be set by external tools to store and retrieve arbitrary metadata."},
            "finalizers": {"type": "array", "items": {"type": "string", "default": ""}, "x-kubernetes-list-type": "set", "description": "Must be empty before the object is deleted from the registry."},
            "ownerReferences": {"type": "array", "items": {"type": "object", "required": ["apiVersion", "kind", "name", "uid"], "properties": {
                "apiVersion": s("API version of the referent."), "kind": s("Kind of the referent."), "name": s("Name of the referent."), "uid": s("UID of the referent."),
                "controller": {"type": "boolean", "description": "If true, this reference points to the managing controller."},
                "blockOwnerDeletion": {"type": "boolean", "description": "If true, AND if the owner has the \"foregroundDeletion\" finalizer, then the owner cannot be deleted from the key-value store until this reference is removed."}}},
                "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["uid"], "description": "List of objects depended by this object."},
            "managedFields": {"type": "array", "items": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}, "description": "ManagedFields maps workflow-id and version to the set of fields that are managed by that workflow."}
        }
    })
}

fn list_meta_schema() -> Value {
    json!({"description": "ListMeta describes metadata that synthetic resources must have, including lists and various status objects.",
           "type": "object", "properties": {
               "resourceVersion": {"type": "string"}, "continue": {"type": "string"},
               "remainingItemCount": {"type": "integer", "format": "int64"}}})
}

fn query(name: &str, description: &str) -> Value {
    json!({"name": name, "in": "query", "description": description, "schema": {"type": "string", "uniqueItems": true}, "uniqueItems": true})
}

/// The operations of one resource: kubectl looks for the `fieldValidation` parameter of the
/// kind's PATCH operation.
fn paths(res: &ApiResource, def: &str, list_def: &str, v3: bool, out: &mut Map<String, Value>) {
    let prefix = if res.group.is_empty() {
        format!("/api/{}", res.version)
    } else {
        format!("/apis/{}/{}", res.group, res.version)
    };
    let collection = if res.namespaced {
        format!("{prefix}/namespaces/{{namespace}}/{}", res.plural)
    } else {
        format!("{prefix}/{}", res.plural)
    };
    let item = format!("{collection}/{{name}}");
    let r = |name: &str| {
        if v3 {
            json!({"content": {"application/json": {"schema": {"$ref": format!("#/components/schemas/{name}")}}}})
        } else {
            json!({"schema": {"$ref": format!("#/definitions/{name}")}})
        }
    };
    let op = |verb: &str, action: &str, response: &str, writes: bool| {
        let mut params = vec![query(
            "dryRun",
            "When present, indicates that modifications should not be persisted.",
        )];
        if writes {
            params.push(query("fieldManager", "fieldManager is a name associated with the actor or entity that is making these changes."));
            params.push(query("fieldValidation", "fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: - Ignore - Warn - Strict"));
        }
        let mut ok = r(response);
        ok["description"] = json!("OK");
        json!({
            "operationId": format!("{verb}{}", res.kind),
            "parameters": params,
            "responses": {"200": ok},
            "x-kubernetes-action": action,
            "x-kubernetes-group-version-kind": {"group": res.group, "version": res.version, "kind": res.kind},
        })
    };
    out.insert(
        collection,
        json!({
            "get": op("list", "list", list_def, false),
            "post": op("create", "post", def, true),
            "delete": op("deletecollection", "deletecollection", def, false),
        }),
    );
    out.insert(
        item,
        json!({
            "get": op("read", "get", def, false),
            "put": op("replace", "put", def, true),
            "patch": op("patch", "patch", def, true),
            "delete": op("delete", "delete", def, false),
        }),
    );
}

fn list_schema(res: &ApiResource, def: &str, v3: bool) -> Value {
    let item_ref = if v3 {
        format!("#/components/schemas/{def}")
    } else {
        format!("#/definitions/{def}")
    };
    json!({
        "description": format!("{} is a list of {}", res.list_kind, res.kind),
        "type": "object",
        "required": ["items"],
        "properties": {
            "apiVersion": {"type": "string", "description": API_VERSION_DESCRIPTION},
            "kind": {"type": "string", "description": KIND_DESCRIPTION},
            "items": {"type": "array", "items": {"$ref": item_ref}},
            "metadata": if v3 { json!({"allOf": [{"$ref": format!("#/components/schemas/{LIST_META}")}]}) } else { json!({"$ref": format!("#/definitions/{LIST_META}")}) },
        },
        "x-kubernetes-group-version-kind": gvk(res, &res.list_kind),
    })
}

/// The schema of a built-in kind: enough structure for explain and validation.
fn builtin_schema(res: &ApiResource, v3: bool) -> Value {
    let mut s = json!({"type": "object", "properties": {
        "apiVersion": {"type": "string", "description": API_VERSION_DESCRIPTION},
        "kind": {"type": "string", "description": KIND_DESCRIPTION},
        "metadata": reference(OBJECT_META, v3),
        "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
    }});
    if res.plural == "namespaces" {
        s["description"] =
            json!("Namespace provides a scope for Names. Use of multiple namespaces is optional.");
        s["properties"]["spec"] = json!({"type": "object", "description": "NamespaceSpec describes the attributes on a Namespace.",
            "properties": {"finalizers": {"type": "array", "items": {"type": "string", "default": ""}, "x-kubernetes-list-type": "atomic",
                "description": "Finalizers is an opaque list of values that must be empty to permanently remove object from storage."}}});
        s["properties"]["status"] = json!({"type": "object", "description": "NamespaceStatus is information about the current status of a Namespace.",
            "properties": {"phase": {"type": "string", "description": "Phase is the current lifecycle phase of the namespace."},
                           "conditions": {"type": "array", "items": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}});
    }
    s["x-kubernetes-group-version-kind"] = gvk(res, &res.kind);
    s
}

fn group_version_path(res: &ApiResource) -> String {
    if res.group.is_empty() {
        format!("api/{}", res.version)
    } else {
        format!("apis/{}/{}", res.group, res.version)
    }
}

impl OpenApi {
    /// Renders every document for the resources of a registry snapshot.
    pub fn render(
        resources: &BTreeMap<(String, String), Vec<Arc<ApiResource>>>,
        kubernetes_version: &str,
    ) -> OpenApi {
        let mut v3 = BTreeMap::new();
        let mut v2_paths = Map::new();
        let mut v2_defs = Map::new();
        v2_defs.insert(OBJECT_META.into(), object_meta_schema());
        v2_defs.insert(LIST_META.into(), list_meta_schema());
        for list in resources.values() {
            let Some(first) = list.first() else { continue };
            let mut schemas = Map::new();
            schemas.insert(OBJECT_META.into(), object_meta_schema());
            schemas.insert(LIST_META.into(), list_meta_schema());
            let mut paths_v3 = Map::new();
            for res in list {
                let def = definition_name(res, &res.kind);
                let list_def = definition_name(res, &res.list_kind);
                let (s3, s2) = if res.crd.is_some() {
                    (crd_schema(res, true), crd_schema(res, false))
                } else {
                    (builtin_schema(res, true), builtin_schema(res, false))
                };
                schemas.insert(def.clone(), s3);
                schemas.insert(list_def.clone(), list_schema(res, &def, true));
                v2_defs.insert(def.clone(), s2);
                v2_defs.insert(list_def.clone(), list_schema(res, &def, false));
                paths(res, &def, &list_def, true, &mut paths_v3);
                paths(res, &def, &list_def, false, &mut v2_paths);
            }
            let doc = json!({
                "openapi": "3.0.0",
                "info": {"title": "Kubernetes", "version": kubernetes_version},
                "paths": paths_v3,
                "components": {"schemas": schemas},
            });
            let body = Bytes::from(serde_json::to_vec(&doc).unwrap_or_default());
            let h = hash(&body);
            v3.insert(group_version_path(first), V3Document { body, hash: h });
        }
        let index_paths: Map<String, Value> = v3
            .iter()
            .map(|(path, doc)| {
                (
                    path.clone(),
                    json!({"serverRelativeURL": format!("/openapi/v3/{path}?hash={}", doc.hash)}),
                )
            })
            .collect();
        let v3_index =
            Bytes::from(serde_json::to_vec(&json!({"paths": index_paths})).unwrap_or_default());
        let v2 = json!({
            "swagger": "2.0",
            "info": {"title": "Kubernetes", "version": kubernetes_version},
            "paths": v2_paths,
            "definitions": v2_defs,
        });
        OpenApi {
            v3_index,
            v3,
            v2: Bytes::from(serde_json::to_vec(&v2).unwrap_or_default()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn v2_conversion_drops_what_v2_cannot_express() {
        let v3 = json!({"type": "object", "properties": {
            "a": {"type": "string", "nullable": true},
            "b": {"type": "object", "properties": {"c": {"type": "integer"}}, "anyOf": [{"required": ["c"]}]},
            "d": {"type": "array", "items": {"type": "string", "nullable": true}}}});
        let v2 = to_v2(&v3);
        assert_eq!(v2["properties"]["a"], json!({}));
        assert!(v2["properties"]["b"].get("anyOf").is_none());
        assert_eq!(v2["properties"]["b"]["properties"]["c"]["type"], "integer");
        assert_eq!(v2["properties"]["d"]["items"], json!({}));
    }

    #[test]
    fn definition_names() {
        assert_eq!(reversed_group("stable.example.com"), "com.example.stable");
    }
}
