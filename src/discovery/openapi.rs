//! Published OpenAPI: `/openapi/v3` (an index of group-version documents) and
//! `/openapi/v3/{api|apis/<group>}/<version>`, plus `/openapi/v2`, generated from the CRDs'
//! structural schemas once per registry snapshot.
//!
//! kubectl reads these to explain fields (`kubectl explain`) and to learn that the server
//! validates fields itself (the `fieldValidation` parameter of a kind's PATCH operation), in
//! which case it leaves validation to the server.

use std::collections::BTreeMap;
use std::sync::{Arc, LazyLock, OnceLock};

use bytes::Bytes;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha512};

use crate::registry::builtin::data;
use crate::registry::resource::ApiResource;

/// One published OpenAPI v3 document: a built-in group-version's, as Kubernetes publishes it
/// (embedded), or one rendered from the CRDs of a group-version.
#[derive(Clone)]
pub enum V3Document {
    /// A built-in group-version's document.
    Builtin(Arc<data::OpenApiDocument>),
    /// A document rendered from custom resources.
    Rendered {
        /// The document.
        body: Bytes,
        /// Upper-case hex SHA-512 of `body`.
        hash: String,
    },
}

impl V3Document {
    /// The content hash the index links the document by (clients cache by it).
    pub fn hash(&self) -> &str {
        match self {
            V3Document::Builtin(d) => &d.hash,
            V3Document::Rendered { hash, .. } => hash,
        }
    }

    /// The document as JSON.
    pub fn json(&self) -> Bytes {
        match self {
            V3Document::Builtin(d) => d.json(),
            V3Document::Rendered { body, .. } => body.clone(),
        }
    }

    /// The document gzip-compressed, when it is stored that way (served as is to clients that
    /// accept gzip).
    pub fn gzip(&self) -> Option<Bytes> {
        match self {
            V3Document::Builtin(d) => Some(d.gzip.clone()),
            V3Document::Rendered { .. } => None,
        }
    }
}

/// Every OpenAPI document of one registry snapshot.
pub struct OpenApi {
    /// `/openapi/v3`.
    pub v3_index: Bytes,
    /// `/openapi/v3/<path>` by path (`api/v1`, `apis/stable.example.com/v1`).
    pub v3: BTreeMap<String, V3Document>,
    /// What `/openapi/v2` is rendered from, on first request (few clients ask for it).
    resources: BTreeMap<(String, String), Vec<Arc<ApiResource>>>,
    v2: OnceLock<Bytes>,
    kubernetes_version: String,
}

const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
const LIST_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta";

fn hash(bytes: &[u8]) -> String {
    Sha512::digest(bytes)
        .iter()
        .map(|b| format!("{b:02X}"))
        .collect()
}

/// The `x-kubernetes-group-version-kind` extension of a kind's definition.
pub fn gvk(group: &str, version: &str, kind: &str) -> Value {
    json!([{"group": group, "kind": kind, "version": version}])
}

/// The description of `apiVersion` in every kind's schema.
pub const API_VERSION_DESCRIPTION: &str = "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources";
/// The description of `kind` in every kind's schema.
pub const KIND_DESCRIPTION: &str = "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";

/// `metadata` of a kind's schema: a reference to ObjectMeta (OpenAPI v3 forbids siblings next
/// to `$ref`, so the apiserver wraps it in `allOf`).
pub fn object_meta_reference() -> Value {
    json!({"allOf": [{"$ref": format!("#/components/schemas/{OBJECT_META}")}], "description": "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"})
}

/// Adds `apiVersion`, `kind` and `metadata` to a kind's schema, and its GVK extension.
pub fn with_type_meta(mut schema: Value, group: &str, version: &str, kind: &str) -> Value {
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
        props.insert("metadata".into(), object_meta_reference());
    }
    schema["x-kubernetes-group-version-kind"] = gvk(group, version, kind);
    schema
}

/// The documented OpenAPI v3 -> v2 conversion: v2 cannot express `nullable`, so a nullable
/// node loses type, items and properties; junctors (allOf/anyOf/oneOf/not) are dropped, except
/// the `allOf` that wraps a lone `$ref` (v3's way of giving a reference a description), which
/// becomes the v2 reference it stands for.
pub fn to_v2(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            if let Some(target) = wrapped_reference(m) {
                let mut out = Map::new();
                out.insert("$ref".into(), json!(target));
                if let Some(d) = m.get("description") {
                    out.insert("description".into(), d.clone());
                }
                return Value::Object(out);
            }
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

/// The v2 target of `{"allOf": [{"$ref": "#/components/schemas/X"}]}`.
fn wrapped_reference(m: &Map<String, Value>) -> Option<String> {
    let [only] = m.get("allOf")?.as_array()?.as_slice() else {
        return None;
    };
    let name = only
        .get("$ref")?
        .as_str()?
        .strip_prefix("#/components/schemas/")?;
    Some(format!("#/definitions/{name}"))
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
        "x-kubernetes-group-version-kind": gvk(&res.group, &res.version, &res.list_kind),
    })
}

fn group_version_path(res: &ApiResource) -> String {
    if res.group.is_empty() {
        format!("api/{}", res.version)
    } else {
        format!("apis/{}/{}", res.group, res.version)
    }
}

impl OpenApi {
    /// The documents for the resources of a registry snapshot: built-in group-versions serve
    /// Kubernetes' published documents, the others are rendered from their custom resources.
    pub fn render(
        resources: &BTreeMap<(String, String), Vec<Arc<ApiResource>>>,
        kubernetes_version: &str,
    ) -> OpenApi {
        let mut v3 = BTreeMap::new();
        for list in resources.values() {
            let Some(first) = list.first() else { continue };
            let path = group_version_path(first);
            let builtin = data::openapi_documents().iter().find(|d| d.path == path);
            let doc = match builtin {
                Some(d) => V3Document::Builtin(d.clone()),
                None => rendered_v3(list, kubernetes_version),
            };
            v3.insert(path, doc);
        }
        let index_paths: Map<String, Value> = v3
            .iter()
            .map(|(path, doc)| {
                (
                    path.clone(),
                    json!({"serverRelativeURL": format!("/openapi/v3/{path}?hash={}", doc.hash())}),
                )
            })
            .collect();
        let v3_index =
            Bytes::from(serde_json::to_vec(&json!({"paths": index_paths})).unwrap_or_default());
        OpenApi {
            v3_index,
            v3,
            resources: resources.clone(),
            v2: OnceLock::new(),
            kubernetes_version: kubernetes_version.to_string(),
        }
    }

    /// `/openapi/v2` (JSON), rendered on first request.
    pub fn v2(&self) -> Bytes {
        self.v2
            .get_or_init(|| render_v2(&self.resources, &self.kubernetes_version))
            .clone()
    }
}

/// The v3 document of a group-version of custom resources.
fn rendered_v3(list: &[Arc<ApiResource>], kubernetes_version: &str) -> V3Document {
    let mut schemas = Map::new();
    let mut paths_v3 = Map::new();
    for res in list {
        add_definitions(&mut schemas, res, true);
        paths(
            res,
            &res.openapi.name,
            &res.openapi.list_name,
            true,
            &mut paths_v3,
        );
    }
    let doc = json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": kubernetes_version},
        "paths": paths_v3,
        "components": {"schemas": schemas},
    });
    let body = Bytes::from(serde_json::to_vec(&doc).unwrap_or_default());
    let hash = hash(&body);
    V3Document::Rendered { body, hash }
}

/// A custom resource's definitions (its kind, its list kind, and ObjectMeta and ListMeta when
/// no published ones are there): built-in kinds' definitions are published already.
fn add_definitions(defs: &mut Map<String, Value>, res: &ApiResource, v3: bool) {
    if res.openapi.schema.is_null() {
        return;
    }
    let def = &res.openapi.name;
    let schema = if v3 {
        res.openapi.schema.clone()
    } else {
        to_v2(&res.openapi.schema)
    };
    defs.insert(def.to_string(), schema);
    defs.insert(res.openapi.list_name.to_string(), list_schema(res, def, v3));
    defs.entry(OBJECT_META).or_insert_with(object_meta_schema);
    defs.entry(LIST_META).or_insert_with(list_meta_schema);
}

/// The v2 definitions of every built-in type (their structural schemas), converted once per
/// process.
static BUILTIN_V2_DEFINITIONS: LazyLock<Map<String, Value>> = LazyLock::new(|| {
    data::schema_components()
        .map(|(name, schema)| (name.to_string(), to_v2(schema)))
        .collect()
});

/// The whole v2 document: every resource's operations; built-in types' definitions and the
/// custom resources' schemas.
fn render_v2(
    resources: &BTreeMap<(String, String), Vec<Arc<ApiResource>>>,
    kubernetes_version: &str,
) -> Bytes {
    let mut v2_paths = Map::new();
    let mut v2_defs = BUILTIN_V2_DEFINITIONS.clone();
    for res in resources.values().flatten() {
        add_definitions(&mut v2_defs, res, false);
        paths(
            res,
            &res.openapi.name,
            &res.openapi.list_name,
            false,
            &mut v2_paths,
        );
    }
    let v2 = V2Document {
        definitions: &v2_defs,
        info: json!({"title": "Kubernetes", "version": kubernetes_version}),
        paths: &v2_paths,
        swagger: "2.0",
    };
    Bytes::from(serde_json::to_vec(&v2).unwrap_or_default())
}

/// The v2 document as it is serialised: its parts by reference, not copied into one `Value`
/// first (the definitions alone are tens of millions of instructions to copy in a debug
/// build). Fields in the order a JSON object's keys are written (sorted).
#[derive(serde::Serialize)]
struct V2Document<'a> {
    definitions: &'a Map<String, Value>,
    info: Value,
    paths: &'a Map<String, Value>,
    swagger: &'static str,
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
    fn wrapped_references_become_v2_references() {
        let v3 = json!({"properties": {"metadata": object_meta_reference()}});
        let v2 = to_v2(&v3);
        assert_eq!(
            v2["properties"]["metadata"]["$ref"],
            format!("#/definitions/{OBJECT_META}")
        );
        assert!(v2["properties"]["metadata"]["description"].is_string());
    }
}
