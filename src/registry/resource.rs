//! One served resource in one version: everything the generic store, the endpoints, discovery
//! and OpenAPI need to know about it, declared by its kind and never re-derived per request.
//!
//! A resource is built with [`ResourceBuilder`] from its group, version, plural and kind; the
//! builder fills what the apiserver derives (singular, list kind, storage version hash, the
//! verbs of a full REST storage) and the kind overrides what differs: scope, short names,
//! categories, subresources and their strategies, field selectors, the Table convertor, its
//! OpenAPI schema, how request bodies are decoded and which patch types are accepted, whether a
//! DELETE answers with the object, and the objects every cluster starts with.

use std::borrow::Cow;
use std::sync::Arc;

use base64::Engine;
use futures_util::future::BoxFuture;
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::apiextensions::{Crd, ScaleSubresource};
use super::builtin::schema::LazySchema;
use super::strategy::Strategy;
use super::table::Columns;
use crate::cel::Rules;
use crate::context::Context;
use crate::conversion::Codec;
use crate::error::ApiError;
use crate::schema::Schema;
use crate::state::State;
use crate::store::{selector, GroupResource};

/// The verbs of a complete REST storage, in the order the apiserver lists them in discovery.
pub const ALL_VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

/// The verbs of a subresource that shows and writes a part of its object (`status`).
pub const PART_VERBS: &[&str] = &["get", "patch", "update"];

/// Patch types accepted by resources with typed (built-in) schemas, as the 415 lists them.
pub const TYPED_PATCH_TYPES: &[&str] = &[
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/strategic-merge-patch+json",
    "application/apply-patch+yaml",
];

/// Patch types of custom resources: no strategic merge patch without Go struct tags.
pub const UNSTRUCTURED_PATCH_TYPES: &[&str] = &[
    "application/json-patch+json",
    "application/merge-patch+json",
    "application/apply-patch+yaml",
];

/// The host and port of the server's address (`host:port`, `[v6]:port`), as the objects that
/// name the server write them (and `state::bootstrap` fills them in): a wildcard host is
/// reached at loopback.
pub fn server_host_port(address: &str) -> (String, i64) {
    let (host, port) = address.rsplit_once(':').unwrap_or((address, "443"));
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let host = match host {
        "" | "0.0.0.0" => "127.0.0.1",
        "::" => "::1",
        h => h,
    };
    (host.to_string(), port.parse().unwrap_or(443))
}

/// What a cluster's start objects depend on.
#[derive(Debug, Clone, Copy)]
pub struct ClusterInfo<'a> {
    /// The server's address (`host:port`; the `kubernetes` Service points at it).
    pub address: &'a str,
    /// How requests are authorized: the bootstrap RBAC policy is only created when roles
    /// decide (creating its 133 objects would triple a server's start time).
    pub authorization: crate::filters::authorization::Mode,
    /// The service CIDR (`10.96.0.0/12`): the default ServiceCIDR's, and the `kubernetes`
    /// Service's IP is its first address.
    pub service_cidr: &'a str,
}

/// A request to an action subresource, with what the action needs to serve it.
pub struct ActionCall<'a> {
    /// The server (its store, for the objects the action reads and writes).
    pub state: &'a State,
    /// The request's context (dry run, field manager, warnings).
    pub ctx: &'a Context,
    /// The parent resource (`pods`), in the version the request names.
    pub res: &'a ApiResource,
    /// The object's namespace ("" for cluster-scoped objects).
    pub namespace: &'a str,
    /// The object's name.
    pub name: &'a str,
    /// The verb (`create`, `get`, ...).
    pub verb: &'a str,
    /// The decoded request body, when the action reads one ([`Action::body_kind`]).
    pub body: Option<Value>,
    /// The query parameters, in order.
    pub query: &'a [(String, String)],
}

/// A subresource served by its own code rather than as a view of its object: `pods/binding`
/// and `pods/eviction` act on the pod and answer with a `Status`; `pods/log` and `pods/exec`
/// would reach a container. The action answers with an HTTP status code and a JSON document.
pub trait Action: Send + Sync {
    /// The kind a create's body decodes as (`Binding`), named in decode errors; `None` when the
    /// action reads no body.
    fn body_kind(&self) -> Option<&'static str> {
        None
    }

    /// Whether the action is a connection (`pods/exec`, `attach`, `portforward`, `proxy`),
    /// which admission sees as a CONNECT of its options before it is served.
    fn connects(&self) -> bool {
        false
    }

    /// Serves one request.
    fn serve<'a>(&'a self, call: ActionCall<'a>) -> BoxFuture<'a, Result<(u16, Value), ApiError>>;

    /// For a connection a client asks to upgrade to a WebSocket: what it reaches once the
    /// apiserver's own checks pass (`Err`: the apiserver's refusal, answered as `serve` answers
    /// it). `None` when the action has no WebSocket stream, and `serve` answers.
    fn stream<'a>(
        &'a self,
        _call: ActionCall<'a>,
    ) -> BoxFuture<'a, Option<Result<Stream, ApiError>>> {
        Box::pin(async { None })
    }
}

/// A connection's stream behind the apiserver (a kubelet's exec, attach or port-forward), as
/// kubefake serves it: the channel subprotocols it accepts, and the error it ends with once
/// negotiated, since kubefake runs no containers.
#[derive(Debug)]
pub struct Stream {
    /// What the stream is, which decides its subprotocols and how it reports the error.
    pub kind: StreamKind,
    /// The error the stream ends with.
    pub error: ApiError,
}

/// The kubelet's streaming protocols.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamKind {
    /// `exec` and `attach` (remotecommand): stdin, stdout, stderr, the error channel (3) and
    /// the resize channel.
    RemoteCommand,
    /// `portforward`: a data and an error channel per port, each opened with the port number.
    PortForward {
        /// The ports asked for, in order.
        ports: Vec<u16>,
    },
}

/// What a subresource is.
pub enum SubresourceKind {
    /// A part of the object (`status`, `finalize`): reads show the whole object, writes go
    /// through the subresource's own strategy, which decides what the write may change.
    Part(Arc<dyn Strategy>),
    /// The `autoscaling/v1 Scale` view of the object's replicas.
    Scale(ScaleSubresource),
    /// A subresource served by its own code.
    Action(Arc<dyn Action>),
}

/// Names a resource lists (its verbs, short names, categories, selectable fields): a built-in kind's are
/// published or literal, borrowed rather than copied for every kind at start; a custom
/// resource's come from its CRD, owned.
#[derive(Debug, Clone)]
pub enum NameList {
    /// Published or literal names.
    Static(&'static [&'static str]),
    /// Names read from an object.
    Owned(Vec<String>),
}

impl NameList {
    /// How many names.
    pub fn len(&self) -> usize {
        match self {
            NameList::Static(names) => names.len(),
            NameList::Owned(names) => names.len(),
        }
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The names, in order.
    pub fn iter(&self) -> impl Iterator<Item = &str> + '_ {
        let (listed, owned): (&[&str], &[String]) = match self {
            NameList::Static(names) => (names, &[]),
            NameList::Owned(names) => (&[], names),
        };
        listed
            .iter()
            .copied()
            .chain(owned.iter().map(String::as_str))
    }

    /// Whether `name` is among them.
    pub fn contains(&self, name: &str) -> bool {
        self.iter().any(|n| n == name)
    }
}

impl Default for NameList {
    fn default() -> Self {
        NameList::Static(&[])
    }
}

impl From<&'static [&'static str]> for NameList {
    fn from(names: &'static [&'static str]) -> Self {
        NameList::Static(names)
    }
}

impl From<Vec<String>> for NameList {
    fn from(names: Vec<String>) -> Self {
        NameList::Owned(names)
    }
}

impl serde::Serialize for NameList {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.iter())
    }
}

/// A subresource of a resource (`pods/status`, `deployments/scale`, `namespaces/finalize`).
pub struct Subresource {
    /// The URL segment after the object's name.
    pub name: String,
    /// Verbs it serves.
    pub verbs: NameList,
    /// What it is.
    pub kind: SubresourceKind,
    /// The `(group, version, kind)` it serves when that is not the parent's kind (`Binding`,
    /// `policy/v1 Eviction`); group and version are empty when they are the parent's.
    pub response: Option<(String, String, String)>,
}

impl Subresource {
    /// A part of the object written with its own strategy.
    pub fn part(
        name: &str,
        verbs: &'static [&'static str],
        strategy: Arc<dyn Strategy>,
    ) -> Subresource {
        Subresource {
            name: name.to_string(),
            verbs: NameList::Static(verbs),
            kind: SubresourceKind::Part(strategy),
            response: None,
        }
    }

    /// A subresource served by its own code.
    pub fn action(
        name: &str,
        verbs: &'static [&'static str],
        action: Arc<dyn Action>,
    ) -> Subresource {
        Subresource {
            name: name.to_string(),
            verbs: NameList::Static(verbs),
            kind: SubresourceKind::Action(action),
            response: None,
        }
    }

    /// The `scale` subresource reading and writing replicas at the given paths.
    pub fn scale(config: ScaleSubresource) -> Subresource {
        Subresource {
            name: "scale".into(),
            verbs: NameList::Static(PART_VERBS),
            kind: SubresourceKind::Scale(config),
            response: Some(("autoscaling".into(), "v1".into(), "Scale".into())),
        }
    }

    /// Whether it serves `verb`.
    pub fn allows(&self, verb: &str) -> bool {
        self.verbs.contains(verb)
    }

    /// The `(group, version, kind)` of what the subresource serves, when it is not the parent
    /// object's kind (a Scale).
    pub fn response_kind(&self) -> Option<(&str, &str, &str)> {
        self.response
            .as_ref()
            .map(|(g, v, k)| (g.as_str(), v.as_str(), k.as_str()))
    }
}

/// How request bodies are decoded (the apiserver's typed codecs for built-in kinds, the
/// unstructured codec of the custom resource handler), which decides the formats accepted and
/// the wording of decode errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyCodec {
    /// Typed: JSON, YAML or protobuf; a missing `apiVersion`/`kind` is filled in; a wrong kind
    /// is a 400 from the scheme.
    Typed,
    /// Unstructured: JSON or YAML; `apiVersion` and `kind` are required; a wrong kind is a 422.
    Unstructured,
}

/// How a resource answers requests for verbs it does not serve.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnservedVerb {
    /// The router's plain 405 (built-in routes are simply not installed).
    MethodNotAllowed,
    /// The custom resource handler's 405 naming the verb and the resource.
    Described,
}

/// The OpenAPI definitions of a resource's kind.
pub struct OpenApiDefinition {
    /// Definition name of the kind (`io.k8s.api.core.v1.Namespace`): a built-in kind's is
    /// published, borrowed; a custom resource's is made from its CRD.
    pub name: Cow<'static, str>,
    /// Definition name of its list kind.
    pub list_name: Cow<'static, str>,
    /// The kind's schema in OpenAPI v3 form (`$ref`s to `#/components/schemas/...`).
    pub schema: Value,
}

/// One served resource in one version. See the module documentation.
pub struct ApiResource {
    /// API group (empty for core).
    pub group: String,
    /// API version.
    pub version: String,
    /// Plural, the URL segment.
    pub plural: String,
    /// Singular name.
    pub singular: String,
    /// Kind of objects.
    pub kind: String,
    /// Kind of lists.
    pub list_kind: String,
    /// Namespaced or cluster-scoped.
    pub namespaced: bool,
    /// Short names for kubectl.
    pub short_names: NameList,
    /// Categories (`all`, ...).
    pub categories: NameList,
    /// Verbs allowed on the main resource.
    pub verbs: NameList,
    /// Subresources, in discovery order.
    pub subresources: Vec<Arc<Subresource>>,
    /// The version objects are stored in.
    pub storage_version: String,
    /// Where objects live in the store (shared by every version).
    pub gr: GroupResource,
    /// Field names usable in `fieldSelector`.
    pub field_selectors: NameList,
    /// How an unsupported `fieldSelector` field is worded (core kinds differ from the rest).
    pub unsupported_field: fn(&str, &[&str]) -> String,
    /// Per-resource behaviour of the main resource.
    pub strategy: Arc<dyn Strategy>,
    /// Server-side printing.
    pub table: Arc<Columns>,
    /// `storageVersionHash` published in discovery.
    pub storage_version_hash: String,
    /// The structural schema of the kind in this version (typed merges of server-side apply),
    /// compiled on first use for built-in kinds.
    pub schema: Arc<LazySchema>,
    /// The kind's OpenAPI definitions.
    pub openapi: OpenApiDefinition,
    /// How request bodies are decoded.
    pub decoding: BodyCodec,
    /// The storage edge: conversion to and from the storage version, cached encodings.
    pub codec: Arc<Codec>,
    /// Accepted PATCH media types.
    pub patch_types: &'static [&'static str],
    /// Whether a DELETE that removes the object answers with it (else with a `Status`).
    pub delete_returns_object: bool,
    /// How unserved verbs are refused.
    pub unserved_verb: UnservedVerb,
    /// Whether discovery's `responseKind` names the group and version (custom resources) or
    /// only the kind (built-ins).
    pub response_kind_has_version: bool,
    /// Create is refused: the CRD behind the resource is being deleted.
    pub terminating: bool,
    /// `Warning` headers every request through this resource gets (a deprecated custom
    /// resource version's `deprecationWarning`).
    pub warnings: Vec<String>,
    /// Objects every cluster starts with (created once, through the store, at start), given
    /// what the cluster is.
    pub bootstrap: fn(&ClusterInfo) -> Vec<Value>,
    /// The CRD a custom resource comes from; read only by the apiextensions code.
    pub crd: Option<Arc<Crd>>,
    /// A custom resource version's compiled CEL rules (reused while its CRD is unchanged);
    /// read only by the apiextensions code.
    pub rules: Option<Arc<Rules>>,
    /// A resource served by its own code rather than stored: the access and token reviews
    /// answer a create with the review's outcome and keep nothing.
    pub action: Option<Arc<dyn Action>>,
}

impl ApiResource {
    /// `group/version`, or just `version` for core.
    pub fn api_version(&self) -> String {
        api_version(&self.group, &self.version)
    }

    /// `group/storage_version`: the apiVersion objects are stored in.
    pub fn storage_api_version(&self) -> String {
        api_version(&self.group, &self.storage_version)
    }

    /// Whether the resource allows `verb`.
    pub fn allows(&self, verb: &str) -> bool {
        self.verbs.contains(verb)
    }

    /// A subresource by name.
    pub fn subresource(&self, name: &str) -> Option<&Arc<Subresource>> {
        self.subresources.iter().find(|s| s.name == name)
    }

    /// The scale subresource's configuration, if served.
    pub fn scale(&self) -> Option<&ScaleSubresource> {
        self.subresources.iter().find_map(|s| match &s.kind {
            SubresourceKind::Scale(c) => Some(c),
            SubresourceKind::Part(_) | SubresourceKind::Action(_) => None,
        })
    }

    /// Whether a part subresource of this name (`status`) is served.
    pub fn has_part(&self, name: &str) -> bool {
        self.subresource(name)
            .is_some_and(|s| matches!(s.kind, SubresourceKind::Part(_)))
    }
}

/// `group/version`, or just `version` for the core group.
pub fn api_version(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    }
}

/// `base64(sha256("group/version/kind")[:8])`, as the apiserver computes storageVersionHash.
pub fn storage_version_hash(group: &str, version: &str, kind: &str) -> String {
    let digest = Sha256::digest(format!("{group}/{version}/{kind}").as_bytes());
    base64::engine::general_purpose::STANDARD.encode(&digest[..8])
}

/// What names a resource: its group, version, plural and kind.
#[derive(Debug, Clone, Copy)]
pub struct Names<'a> {
    /// API group (empty for core).
    pub group: &'a str,
    /// API version.
    pub version: &'a str,
    /// Plural, the URL segment.
    pub plural: &'a str,
    /// Kind of objects.
    pub kind: &'a str,
}

/// Builds an [`ApiResource`] with the apiserver's derivations as defaults.
pub struct ResourceBuilder {
    /// Boxed: each step of a builder chain moves the builder, and a debug build copies a
    /// resource's every byte on each move (every kind's resource is built at start).
    res: Box<ApiResource>,
}

impl ResourceBuilder {
    /// A namespaced built-in resource with every verb, the default strategy, the default Table
    /// columns and a typed codec.
    pub fn new(
        group: &str,
        version: &str,
        plural: &str,
        kind: &str,
        strategy: Arc<dyn Strategy>,
    ) -> ResourceBuilder {
        let singular = kind.to_ascii_lowercase();
        let names = Names {
            group,
            version,
            plural,
            kind,
        };
        ResourceBuilder::named(names, singular, NameList::Static(ALL_VERBS), strategy)
    }

    /// [`ResourceBuilder::new`] given the singular name and the verbs rather than deriving
    /// them: a built-in kind's are published, and deriving them first would be wasted work.
    pub fn named(
        names: Names<'_>,
        singular: String,
        verbs: NameList,
        strategy: Arc<dyn Strategy>,
    ) -> ResourceBuilder {
        let Names {
            group,
            version,
            plural,
            kind,
        } = names;
        /// The default Table columns, built once: most kinds replace them.
        fn default_columns() -> Arc<Columns> {
            static DEFAULT: std::sync::LazyLock<Arc<Columns>> =
                std::sync::LazyLock::new(|| Arc::new(Columns::default_columns()));
            DEFAULT.clone()
        }
        ResourceBuilder {
            res: Box::new(ApiResource {
                group: group.to_string(),
                version: version.to_string(),
                plural: plural.to_string(),
                singular,
                kind: kind.to_string(),
                list_kind: format!("{kind}List"),
                namespaced: true,
                short_names: NameList::default(),
                categories: NameList::default(),
                verbs,
                subresources: Vec::new(),
                storage_version: version.to_string(),
                gr: GroupResource::new(group, plural),
                field_selectors: NameList::Static(&["metadata.name", "metadata.namespace"]),
                unsupported_field: selector::builtin_unsupported_field,
                strategy: strategy.clone(),
                table: default_columns(),
                // Derived in `build` unless given (built-in kinds publish theirs).
                storage_version_hash: String::new(),
                schema: Arc::new(LazySchema::Ready(None)),
                openapi: OpenApiDefinition {
                    name: Cow::Borrowed(""),
                    list_name: Cow::Borrowed(""),
                    schema: Value::Null,
                },
                decoding: BodyCodec::Typed,
                codec: Arc::new(Codec::identity(
                    api_version(group, version),
                    strategy.clone(),
                )),
                patch_types: TYPED_PATCH_TYPES,
                delete_returns_object: false,
                unserved_verb: UnservedVerb::MethodNotAllowed,
                response_kind_has_version: false,
                terminating: false,
                warnings: Vec::new(),
                bootstrap: |_| Vec::new(),
                action: None,
                crd: None,
                rules: None,
            }),
        }
    }

    /// Cluster-scoped instead of namespaced.
    pub fn cluster_scoped(mut self) -> Self {
        self.res.namespaced = false;
        self
    }

    /// Short names (`ns`).
    pub fn short_names(mut self, names: &'static [&'static str]) -> Self {
        self.res.short_names = NameList::Static(names);
        self
    }

    /// Categories (`all`).
    pub fn categories(mut self, names: &'static [&'static str]) -> Self {
        self.res.categories = NameList::Static(names);
        self
    }

    /// The verbs of the main resource, when not every verb is served.
    pub fn verbs(mut self, verbs: &'static [&'static str]) -> Self {
        self.res.verbs = NameList::Static(verbs);
        self
    }

    /// Adds a subresource.
    pub fn subresource(mut self, sub: Subresource) -> Self {
        self.res.subresources.push(Arc::new(sub));
        self
    }

    /// Serves the resource itself with its own code (see [`ApiResource::action`]).
    pub fn served_by(mut self, action: Arc<dyn Action>) -> Self {
        self.res.action = Some(action);
        // Nothing is stored, so discovery names no storage version.
        self.res.storage_version_hash.clear();
        self
    }

    /// Field names usable in `fieldSelector`.
    pub fn field_selectors(mut self, fields: &'static [&'static str]) -> Self {
        self.res.field_selectors = NameList::Static(fields);
        self
    }

    /// How unsupported `fieldSelector` fields are worded.
    pub fn unsupported_field(mut self, wording: fn(&str, &[&str]) -> String) -> Self {
        self.res.unsupported_field = wording;
        self
    }

    /// The Table convertor.
    pub fn table(mut self, columns: Columns) -> Self {
        self.res.table = Arc::new(columns);
        self
    }

    /// The kind's OpenAPI definitions.
    pub fn openapi(mut self, definition: OpenApiDefinition) -> Self {
        self.res.openapi = definition;
        self
    }

    /// The structural schema.
    pub fn schema(mut self, schema: Option<Arc<Schema>>) -> Self {
        self.res.schema = Arc::new(LazySchema::Ready(schema));
        self
    }

    /// A DELETE that removes the object answers with the object, not a `Status`.
    pub fn delete_returns_object(mut self) -> Self {
        self.res.delete_returns_object = true;
        self
    }

    /// Objects every cluster starts with, given what the cluster is (its authorization mode,
    /// its address: a start is recorded once per configuration and replayed with each
    /// server's address, see `state::bootstrap`).
    pub fn bootstrap(mut self, objects: fn(&ClusterInfo) -> Vec<Value>) -> Self {
        self.res.bootstrap = objects;
        self
    }

    /// Direct access to the resource being built, for what no other step sets: a built-in
    /// kind's published facts (scope, short names, categories, storage version hash, schema),
    /// a custom resource's names, storage version, codec and field selectors.
    pub fn with(mut self, f: impl FnOnce(&mut ApiResource)) -> Self {
        f(&mut self.res);
        self
    }

    /// The resource; a stored resource given no `storageVersionHash` gets the apiserver's,
    /// derived here rather than in [`ResourceBuilder::new`], since most are given theirs.
    pub fn build(mut self) -> ApiResource {
        let res = &mut self.res;
        if res.storage_version_hash.is_empty() && res.action.is_none() {
            res.storage_version_hash = storage_version_hash(&res.group, &res.version, &res.kind);
        }
        *self.res
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[rstest::rstest]
    #[case::ipv4("127.0.0.1:6443", "127.0.0.1", 6443)]
    #[case::ipv6("[::1]:80", "::1", 80)]
    #[case::every_ipv4_address("0.0.0.0:8080", "127.0.0.1", 8080)]
    #[case::every_ipv6_address("[::]:8080", "::1", 8080)]
    #[case::no_port("example.test", "example.test", 443)]
    fn the_server_is_named_by_host_and_port(
        #[case] address: &str,
        #[case] host: &str,
        #[case] port: i64,
    ) {
        assert_eq!(server_host_port(address), (host.to_string(), port));
    }

    #[test]
    fn storage_version_hashes_match_the_apiserver() {
        assert_eq!(storage_version_hash("", "v1", "Namespace"), "Q3oi5N2YM8M=");
        assert_eq!(
            storage_version_hash("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
            "M5uH+AlWATY="
        );
        assert_eq!(
            storage_version_hash("stable.example.com", "v1", "CronTab"),
            "EdX2FP+L0js="
        );
    }
}
