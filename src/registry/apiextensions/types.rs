//! The `apiextensions.k8s.io/v1 CustomResourceDefinition` as kubefake reads it: a typed view of
//! the fields that drive serving (names, scope, versions, subresources), the defaults the
//! apiserver applies, its validation, and the naming rules behind `NamesAccepted`.
//!
//! CRDs are stored as JSON like every other object; this view is parsed once when the registry is
//! rebuilt, never per custom-resource request.

use serde::Deserialize;
use serde_json::{json, Value};

use crate::error::{field, StatusCause};
use crate::registry::object_meta::{is_dns1123_label, is_dns1123_subdomain, meta_str};
use crate::registry::pointer::Pointer;
use crate::registry::validation::{
    dns1035_label_errors, invalid_each, webhook_client_config_errors,
};

/// The API group of CRDs.
pub const GROUP: &str = "apiextensions.k8s.io";
/// The finalizer the apiserver puts on a CRD being deleted until its objects are gone.
pub const CLEANUP_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";

/// `spec.names` / `status.acceptedNames`.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", default)]
pub struct Names {
    /// URL path segment.
    pub plural: String,
    /// Singular alias, defaults to lower-case kind.
    pub singular: String,
    /// Short aliases for kubectl.
    pub short_names: Vec<String>,
    /// Kind of the objects.
    pub kind: String,
    /// Kind of lists, defaults to `<Kind>List`.
    pub list_kind: String,
    /// Groupings such as `all`.
    pub categories: Vec<String>,
}

impl Names {
    /// As JSON, with the apiserver's omitempty rules.
    pub fn to_json(&self) -> Value {
        let mut v = json!({"plural": self.plural, "kind": self.kind});
        if !self.singular.is_empty() {
            v["singular"] = json!(self.singular);
        }
        if !self.short_names.is_empty() {
            v["shortNames"] = json!(self.short_names);
        }
        if !self.list_kind.is_empty() {
            v["listKind"] = json!(self.list_kind);
        }
        if !self.categories.is_empty() {
            v["categories"] = json!(self.categories);
        }
        v
    }
}

/// `spec.versions[*].subresources.scale`.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", default)]
pub struct ScaleSubresource {
    /// JSON path of the desired replicas (`.spec.replicas`).
    pub spec_replicas_path: String,
    /// JSON path of the observed replicas.
    pub status_replicas_path: String,
    /// JSON path of the label selector string.
    pub label_selector_path: Option<String>,
    /// What the value at `label_selector_path` is: a selector string for custom resources;
    /// built-in kinds point at their `spec.selector` and have it formatted.
    #[serde(skip)]
    pub selector_format: SelectorFormat,
    /// Whether a written Scale is validated as a Scale (`ValidateScale`: built-in kinds'
    /// scale subresources). A custom resource's is not: the replicas are written into the
    /// object, whose validation reports them on its own kind (`.spec.replicas: Invalid value:
    /// -1: should be a non-negative integer`) beside its schema's errors.
    #[serde(skip)]
    pub validates_scale: bool,
}

impl ScaleSubresource {
    /// Whether a write through `/scale` is recorded in managedFields as the Scale's field
    /// manager sees it: for the built-in kinds (the ones whose Scale is validated). A custom
    /// resource's scale field manager has no type for `autoscaling/v1 Scale` on the apiserver
    /// (kubernetes#116311): its updates record no owner, its applies fail.
    pub fn tracks_managed_fields(&self) -> bool {
        self.validates_scale
    }
}

/// The form of the value a Scale's `status.selector` is read from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SelectorFormat {
    /// A selector string, used as it is (custom resources' `labelSelectorPath`).
    #[default]
    Text,
    /// A `metav1.LabelSelector` (`matchLabels`, `matchExpressions`), formatted as the
    /// apiserver's `LabelSelectorAsSelector(...).String()` (Deployments, ReplicaSets, ...).
    LabelSelector,
    /// A plain label map, formatted as `SelectorFromSet(...).String()` (ReplicationControllers).
    Map,
}

/// `spec.versions[*].subresources`.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct Subresources {
    /// Present when `/status` is enabled (its content is an empty object).
    pub status: Option<Value>,
    /// Present when `/scale` is enabled.
    pub scale: Option<ScaleSubresource>,
}

/// One entry of `spec.versions`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Version {
    /// `v1`, `v1beta1`, ...
    pub name: String,
    /// Whether the REST endpoints serve this version.
    pub served: bool,
    /// Whether objects are persisted in this version.
    pub storage: bool,
    /// Deprecated versions produce a warning header.
    pub deprecated: bool,
    /// Custom deprecation warning.
    pub deprecation_warning: Option<String>,
    /// `{openAPIV3Schema: ...}`.
    pub schema: Option<Value>,
    /// Enabled subresources.
    pub subresources: Option<Subresources>,
    /// Printer columns (Table output).
    pub additional_printer_columns: Vec<Value>,
    /// Fields usable in field selectors beyond `metadata.name` (and `metadata.namespace`):
    /// `[{jsonPath: .spec.color}]`.
    pub selectable_fields: Vec<Value>,
}

/// `spec`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct Spec {
    /// API group.
    pub group: String,
    /// Requested names.
    pub names: Names,
    /// `Namespaced` or `Cluster`.
    pub scope: String,
    /// Versions, in the order given.
    pub versions: Vec<Version>,
    /// Legacy (v1beta1) `preserveUnknownFields: true`: nothing is pruned.
    pub preserve_unknown_fields: Option<bool>,
    /// `{strategy, webhook: {clientConfig, conversionReviewVersions}}`.
    pub conversion: Value,
}

/// The typed view of a stored CRD.
#[derive(Debug, Clone)]
pub struct Crd {
    /// `metadata.name`.
    pub name: String,
    /// `metadata.uid`.
    pub uid: String,
    /// The spec.
    pub spec: Spec,
    /// `status.acceptedNames`: what the resource is actually served under.
    pub accepted_names: Names,
    /// Whether the Established condition is True.
    pub established: bool,
    /// Whether the CRD is being deleted.
    pub terminating: bool,
    /// `metadata.generation`: changes exactly when the spec (schemas included) changes.
    pub generation: i64,
    /// The resourceVersion of the CRD's last write. Objects written before it may predate its
    /// defaults, so reads default them.
    pub resource_version: u64,
}

impl Crd {
    /// Parses a stored CRD; `None` if it is not shaped like one (never stored by kubefake).
    pub fn from_value(v: &Value) -> Option<Crd> {
        let spec: Spec = serde_json::from_value(v.get("spec")?.clone()).ok()?;
        let status = v.get("status");
        let accepted_names = status
            .and_then(|s| s.get("acceptedNames"))
            .and_then(|n| serde_json::from_value(n.clone()).ok())
            .unwrap_or_default();
        Some(Crd {
            name: meta_str(v, "name").to_string(),
            uid: meta_str(v, "uid").to_string(),
            spec,
            accepted_names,
            established: condition_true(v, "Established"),
            terminating: v
                .get("metadata")
                .and_then(|m| m.get("deletionTimestamp"))
                .is_some(),
            generation: v["metadata"]["generation"].as_i64().unwrap_or(0),
            resource_version: meta_str(v, "resourceVersion").parse().unwrap_or(0),
        })
    }

    /// Whether objects are namespaced.
    pub fn namespaced(&self) -> bool {
        self.spec.scope == "Namespaced"
    }

    /// The storage version's name.
    pub fn storage_version(&self) -> &str {
        self.spec
            .versions
            .iter()
            .find(|v| v.storage)
            .map_or("", |v| v.name.as_str())
    }
}

/// Whether `status.conditions` has `type` with status "True".
pub fn condition_true(v: &Value, type_: &str) -> bool {
    v.get("status")
        .and_then(|s| s.get("conditions"))
        .and_then(Value::as_array)
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c["type"] == type_ && c["status"] == "True")
        })
}

/// `SetDefaults_CustomResourceDefinition`: singular, listKind, conversion strategy.
pub fn apply_defaults(crd: &mut Value) {
    let Some(spec) = crd.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    if let Some(names) = spec.get_mut("names").and_then(Value::as_object_mut) {
        let kind = names
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let singular_missing = names
            .get("singular")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty);
        if singular_missing && !kind.is_empty() {
            names.insert("singular".into(), json!(kind.to_lowercase()));
        }
        let list_missing = names
            .get("listKind")
            .and_then(Value::as_str)
            .is_none_or(str::is_empty);
        if list_missing && !kind.is_empty() {
            names.insert("listKind".into(), json!(format!("{kind}List")));
        }
    }
    if !spec.get("conversion").is_some_and(Value::is_object) {
        spec.insert("conversion".into(), json!({"strategy": "None"}));
    }
    // `SetDefaults_ServiceReference`: a conversion webhook's Service port is 443.
    if let Some(service) = spec
        .get_mut("conversion")
        .and_then(|c| c.at_mut("/webhook/clientConfig/service"))
        .and_then(Value::as_object_mut)
    {
        if service.get("port").is_none_or(Value::is_null) {
            service.insert("port".into(), json!(443));
        }
    }
}

/// The ConversionReview versions the apiserver speaks.
const ACCEPTED_CONVERSION_REVIEW_VERSIONS: [&str; 2] = ["v1", "v1beta1"];

/// `validateCustomResourceConversion`, with the paths of the internal type the apiserver
/// validates (`spec.conversion.webhookClientConfig` for v1's `webhook.clientConfig`).
fn conversion_errors(conversion: &Value) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let strategy = conversion["strategy"].as_str().unwrap_or("");
    match strategy {
        "None" | "Webhook" => {}
        "" => errs.push(field::required("spec.conversion.strategy", "")),
        other => errs.push(field::not_supported(
            "spec.conversion.strategy",
            &json!(other),
            &["None", "Webhook"],
        )),
    }
    let config = &conversion["webhook"]["clientConfig"];
    let versions = &conversion["webhook"]["conversionReviewVersions"];
    let config_path = "spec.conversion.webhookClientConfig";
    let versions_path = "spec.conversion.conversionReviewVersions";
    if strategy != "Webhook" {
        let forbidden = "should not be set when strategy is not set to Webhook";
        if config.is_object() {
            errs.push(field::forbidden(config_path, forbidden));
        }
        if versions.as_array().is_some_and(|v| !v.is_empty()) {
            errs.push(field::forbidden(versions_path, forbidden));
        }
        return errs;
    }
    if config.is_object() {
        errs.extend(webhook_client_config_errors(config, config_path));
    } else {
        errs.push(field::required(
            config_path,
            "required when strategy is set to Webhook",
        ));
    }
    errs.extend(conversion_review_versions_errors(versions, versions_path));
    errs
}

/// `validateConversionReviewVersions`: present, unique DNS-1035 labels, one the apiserver speaks.
fn conversion_review_versions_errors(versions: &Value, path: &str) -> Vec<StatusCause> {
    let list: Vec<&str> = versions
        .as_array()
        .into_iter()
        .flatten()
        .map(|v| v.as_str().unwrap_or(""))
        .collect();
    if list.is_empty() {
        return vec![field::required(path, "")];
    }
    let mut errs = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (i, v) in list.iter().enumerate() {
        let at = format!("{path}[{i}]");
        if !seen.insert(*v) {
            errs.push(field::invalid(&at, &json!(v), "duplicate version"));
            continue;
        }
        errs.extend(invalid_each(&at, &json!(v), dns1035_label_errors(v)));
    }
    if !list
        .iter()
        .any(|v| ACCEPTED_CONVERSION_REVIEW_VERSIONS.contains(v))
    {
        let rendered = format!(
            "[]string{{{}}}",
            list.iter()
                .map(|v| format!("{v:?}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        errs.push(raw_invalid(
            path,
            &Value::String(rendered),
            &format!(
                "must include at least one of {}",
                ACCEPTED_CONVERSION_REVIEW_VERSIONS.join(", ")
            ),
        ));
    }
    errs
}

/// DNS-1035 label: starts with a letter (version names).
fn is_dns1035_label(s: &str) -> bool {
    is_dns1123_label(s) && s.as_bytes()[0].is_ascii_lowercase()
}

const DNS1035_MSG: &str = "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')";

/// `ValidateCustomResourceDefinition` for the parts kubefake serves from: name, group, names,
/// scope, versions (exactly one storage, at least one served, unique DNS-1035 names), schemas
/// present. Runs after [`apply_defaults`].
pub fn validate(crd: &Value) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let spec_v = crd.get("spec").cloned().unwrap_or(Value::Null);
    let spec: Spec = match serde_json::from_value(spec_v.clone()) {
        Ok(s) => s,
        Err(e) => {
            errs.push(field::invalid("spec", &Value::Null, &e.to_string()));
            return errs;
        }
    };
    let name = meta_str(crd, "name");
    let expected = format!("{}.{}", spec.names.plural, spec.group);
    if name != expected {
        errs.push(field::invalid(
            "metadata.name",
            &json!(name),
            "must be spec.names.plural+\".\"+spec.group",
        ));
    }

    if spec.group.is_empty() {
        errs.push(field::required("spec.group", ""));
    } else {
        if !is_dns1123_subdomain(&spec.group) {
            errs.push(field::invalid(
                "spec.group",
                &json!(spec.group),
                "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
            ));
        }
        if spec.group.split('.').count() < 2 {
            errs.push(field::invalid(
                "spec.group",
                &json!(spec.group),
                "should be a domain with at least one dot",
            ));
        }
    }

    match spec.scope.as_str() {
        "Namespaced" | "Cluster" => {}
        "" => errs.push(field::required("spec.scope", "")),
        other => errs.push(field::not_supported(
            "spec.scope",
            &json!(other),
            &["Cluster", "Namespaced"],
        )),
    }

    errs.extend(validate_names(&spec.names, "spec.names"));
    errs.extend(validate_versions(&spec.versions));
    errs.extend(conversion_errors(&spec_v["conversion"]));
    errs
}

fn validate_names(n: &Names, path: &str) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let check_label = |errs: &mut Vec<StatusCause>, field_path: String, v: &str| {
        if !is_dns1035_label(v) {
            errs.push(field::invalid(&field_path, &json!(v), DNS1035_MSG));
        }
    };
    if n.plural.is_empty() {
        errs.push(field::required(&format!("{path}.plural"), ""));
    } else {
        check_label(&mut errs, format!("{path}.plural"), &n.plural);
    }
    if n.singular.is_empty() {
        errs.push(field::required(&format!("{path}.singular"), ""));
    } else {
        check_label(&mut errs, format!("{path}.singular"), &n.singular);
    }
    if n.kind.is_empty() {
        errs.push(field::required(&format!("{path}.kind"), ""));
    } else if !is_dns1035_label(&n.kind.to_lowercase()) {
        errs.push(field::invalid(
            &format!("{path}.kind"),
            &json!(n.kind),
            &format!("may have mixed case, but should otherwise match: {DNS1035_MSG}"),
        ));
    }
    if n.list_kind.is_empty() {
        errs.push(field::required(&format!("{path}.listKind"), ""));
    } else if !is_dns1035_label(&n.list_kind.to_lowercase()) {
        errs.push(field::invalid(
            &format!("{path}.listKind"),
            &json!(n.list_kind),
            &format!("may have mixed case, but should otherwise match: {DNS1035_MSG}"),
        ));
    } else if n.list_kind == n.kind {
        errs.push(field::invalid(
            &format!("{path}.listKind"),
            &json!(n.list_kind),
            "kind and listKind may not be the same",
        ));
    }
    for (i, s) in n.short_names.iter().enumerate() {
        check_label(&mut errs, format!("{path}.shortNames[{i}]"), s);
    }
    for (i, s) in n.categories.iter().enumerate() {
        check_label(&mut errs, format!("{path}.categories[{i}]"), s);
    }
    errs
}

fn validate_versions(versions: &[Version]) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    // Rendered only for an error that quotes it.
    let go_versions = || Value::String(super::internal_json::versions(versions));
    let mut seen = std::collections::HashSet::new();
    let mut duplicate = false;
    for (i, v) in versions.iter().enumerate() {
        let p = format!("spec.versions[{i}]");
        if v.name.is_empty() {
            errs.push(field::required(&format!("{p}.name"), ""));
        } else if !is_dns1035_label(&v.name) {
            errs.push(field::invalid(
                &format!("{p}.name"),
                &json!(v.name),
                DNS1035_MSG,
            ));
        }
        duplicate |= !seen.insert(v.name.as_str());
    }
    if duplicate {
        errs.push(raw_invalid(
            "spec.versions",
            &go_versions(),
            "must contain unique version names",
        ));
    }
    if versions.iter().filter(|v| v.storage).count() != 1 {
        errs.push(raw_invalid(
            "spec.versions",
            &go_versions(),
            "must have exactly one version marked as storage version",
        ));
    }
    let compiled = schema_errors(versions, &mut errs);
    for (i, v) in versions.iter().enumerate() {
        errs.extend(selectable_fields_errors(i, v, compiled.of(i)));
    }
    if !versions.iter().any(|v| v.storage) {
        // A nil slice, which 1.36 renders as its JSON.
        errs.push(field::invalid(
            "status.storedVersions",
            &Value::Null,
            "must have at least one stored version",
        ));
    }
    errs
}

/// The versions' compiled schemas: one for all when they share it, `None` where a schema is
/// missing or not structural.
struct Compiled {
    nodes: Vec<Option<crate::schema::Node>>,
    shared: bool,
}

impl Compiled {
    /// Version `i`'s compiled schema.
    fn of(&self, i: usize) -> Option<&crate::schema::Node> {
        let at = if self.shared { 0 } else { i };
        self.nodes.get(at)?.as_ref()
    }
}

/// Each version's schema checked and, when structural, compiled with its CEL rules. The
/// apiserver hoists a schema shared by every version to `spec.validation`, so errors in it are
/// reported there; distinct schemas are reported per version.
fn schema_errors(versions: &[Version], errs: &mut Vec<StatusCause>) -> Compiled {
    let schemas: Vec<Option<&Value>> = versions
        .iter()
        .map(|v| v.schema.as_ref().and_then(|s| s.get("openAPIV3Schema")))
        .collect();
    let shared = schemas.windows(2).all(|w| w[0] == w[1]);
    let mut nodes = Vec::new();
    for (i, schema) in schemas.iter().enumerate() {
        if shared && i > 0 {
            break;
        }
        let path = if shared {
            "spec.validation.openAPIV3Schema".to_string()
        } else {
            format!("spec.versions[{i}].schema.openAPIV3Schema")
        };
        let Some(schema) = schema else {
            // Every version lacks a shared schema: one error per version, as the apiserver
            // reports.
            let missing = if shared { 0..versions.len() } else { i..i + 1 };
            for j in missing {
                let at = format!("spec.versions[{j}].schema.openAPIV3Schema");
                errs.push(field::required(&at, ""));
            }
            nodes.push(None);
            continue;
        };
        let status = versions[i]
            .subresources
            .as_ref()
            .is_some_and(|s| s.status.is_some());
        let schema_errs = crate::schema::validate_crd_schema(schema, &path, status);
        let node = schema_errs.is_empty().then(|| {
            let node = crate::schema::Node::compile(schema);
            if let Err(cel_errs) = crate::cel::Rules::compile(&node, &path) {
                errs.extend(cel_errs);
            }
            node
        });
        errs.extend(schema_errs);
        nodes.push(node);
    }
    Compiled { nodes, shared }
}

/// The most fields a version may make selectable (`MaxSelectableFields`).
const MAX_SELECTABLE_FIELDS: usize = 8;

/// `ValidateCustomResourceSelectableFields` for version `i`: each `jsonPath` a path of
/// fields (no array notation) the version's schema has, outside `metadata`, to a string,
/// boolean or integer, each once, at most [`MAX_SELECTABLE_FIELDS`]. A version without a
/// schema may have none; one whose schema is not structural reports that schema's errors.
fn selectable_fields_errors(
    i: usize,
    v: &Version,
    node: Option<&crate::schema::Node>,
) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    if v.selectable_fields.is_empty() {
        return errs;
    }
    let at = format!("spec.versions[{i}].selectableFields");
    if v.schema
        .as_ref()
        .and_then(|s| s.get("openAPIV3Schema"))
        .is_none()
    {
        errs.push(field::invalid(
            &at,
            &json!(""),
            "selectableFields may only be set when version.schema.openAPIV3Schema is not included",
        ));
        return errs;
    }
    // A schema that is not structural has had its errors reported.
    let Some(node) = node else {
        return errs;
    };
    let mut unique = std::collections::HashSet::new();
    for (j, selectable) in v.selectable_fields.iter().enumerate() {
        let json_path = selectable["jsonPath"].as_str().unwrap_or("");
        let here = format!("{at}[{j}].jsonPath");
        if json_path.is_empty() {
            errs.push(field::required(&here, ""));
            continue;
        }
        let value = json!(json_path);
        let (path, found, root) = match crate::cel::selectable_field_path(json_path, node) {
            Ok(resolved) => resolved,
            Err(e) => {
                let detail = format!("is an invalid path: {e}");
                errs.push(field::invalid(&here, &value, &detail));
                continue;
            }
        };
        if root == "metadata" {
            let detail = "must not point to fields in metadata";
            errs.push(field::invalid(&here, &value, detail));
        }
        if !found.is_some_and(|n| matches!(n.ty.as_str(), "string" | "boolean" | "integer")) {
            let detail = "must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.";
            errs.push(field::invalid(&here, &value, detail));
        }
        if !unique.insert(path) {
            errs.push(field::duplicate(&here, &value));
        }
    }
    if unique.len() > MAX_SELECTABLE_FIELDS {
        errs.push(field::too_many(&at, unique.len(), MAX_SELECTABLE_FIELDS));
    }
    errs
}

/// `ValidateCustomResourceDefinitionStoredVersions`, on updates (the status then holds the old
/// stored versions plus the new storage version): the storage version must be recorded, and a
/// version objects may still be stored in must stay in `spec.versions` until a storage
/// migration removes it from `status.storedVersions`.
pub fn stored_versions_errors(crd: &Value) -> Vec<StatusCause> {
    let stored: Vec<&str> = crd["status"]["storedVersions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let path = "status.storedVersions";
    if stored.is_empty() {
        return vec![field::invalid(
            path,
            &Value::Null,
            "must have at least one stored version",
        )];
    }
    let versions = crd["spec"]["versions"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    let mut errs = Vec::new();
    let rendered = format!(
        "[]string{{{}}}",
        stored
            .iter()
            .map(|v| format!("{v:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for v in versions.iter().filter(|v| v["storage"] == true) {
        let name = v["name"].as_str().unwrap_or("");
        if !stored.contains(&name) {
            errs.push(raw_invalid(
                path,
                &Value::String(rendered.clone()),
                &format!("must have the storage version {name}"),
            ));
        }
    }
    for (i, v) in stored.iter().enumerate() {
        if !versions.iter().any(|s| s["name"] == *v) {
            errs.push(field::invalid(
                &format!("{path}[{i}]"),
                &json!(v),
                &format!("missing from spec.versions; {v} was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in {v} and removes {v} from status.storedVersions"),
            ));
        }
    }
    errs
}

/// An Invalid cause whose value is already rendered Go-style (printed without quotes).
fn raw_invalid(path: &str, rendered: &Value, detail: &str) -> StatusCause {
    let mut cause = field::invalid(path, &Value::Null, detail);
    cause.message = format!(
        "Invalid value: {}: {detail}",
        rendered.as_str().unwrap_or("")
    );
    cause
}

/// The naming controller's decision: the names to accept, or the condition reason and message
/// saying why not.
///
/// `others` are the other CRDs of the cluster. A name conflicts when another CRD of the same group
/// has already accepted it (plural, singular and short names share one space; kind and list kind
/// another). As in the apiserver, the last failing check decides the reason.
pub fn accept_names(
    requested: &Names,
    group: &str,
    self_name: &str,
    others: &[Crd],
) -> Result<Names, (&'static str, String)> {
    let peers: Vec<&Names> = others
        .iter()
        .filter(|o| o.spec.group == group && o.name != self_name)
        .map(|o| &o.accepted_names)
        .collect();
    let resource_used = |s: &str| {
        !s.is_empty()
            && peers
                .iter()
                .any(|a| s == a.plural || s == a.singular || a.short_names.iter().any(|x| x == s))
    };
    let kind_used =
        |s: &str| !s.is_empty() && peers.iter().any(|a| s == a.kind || s == a.list_kind);
    let in_use = |s: &str| format!("{s:?} is already in use");
    let mut failure = None;
    if resource_used(&requested.plural) {
        failure = Some(("PluralConflict", in_use(&requested.plural)));
    }
    if resource_used(&requested.singular) {
        failure = Some(("SingularConflict", in_use(&requested.singular)));
    }
    let short: Vec<String> = requested
        .short_names
        .iter()
        .filter(|s| resource_used(s))
        .map(|s| in_use(s))
        .collect();
    match short.len() {
        0 => {}
        1 => failure = Some(("ShortNamesConflict", short[0].clone())),
        _ => failure = Some(("ShortNamesConflict", format!("[{}]", short.join(", ")))),
    }
    if kind_used(&requested.kind) {
        failure = Some(("KindConflict", in_use(&requested.kind)));
    }
    if kind_used(&requested.list_kind) {
        failure = Some(("ListKindConflict", in_use(&requested.list_kind)));
    }
    match failure {
        Some(f) => Err(f),
        None => Ok(requested.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crontab() -> Value {
        let mut crd = json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": {"name": "crontabs.stable.example.com"},
            "spec": {
                "group": "stable.example.com",
                "scope": "Namespaced",
                "names": {"plural": "crontabs", "kind": "CronTab", "shortNames": ["ct"]},
                "versions": [{"name": "v1", "served": true, "storage": true,
                    "schema": {"openAPIV3Schema": {"type": "object"}}}]
            }
        });
        apply_defaults(&mut crd);
        crd
    }

    #[test]
    fn defaults() {
        let crd = crontab();
        assert_eq!(crd["spec"]["names"]["singular"], "crontab");
        assert_eq!(crd["spec"]["names"]["listKind"], "CronTabList");
        assert_eq!(crd["spec"]["conversion"]["strategy"], "None");
    }

    #[test]
    fn valid_crd_passes() {
        assert_eq!(validate(&crontab()), vec![]);
    }

    #[test]
    fn rejections() {
        type Case = (fn(&mut Value), &'static str);
        let cases: Vec<Case> = vec![
            (|c| c["metadata"]["name"] = json!("wrong"), "metadata.name"),
            (
                |c| c["spec"]["versions"][0]["storage"] = json!(false),
                "spec.versions",
            ),
            (|c| c["spec"]["scope"] = json!("Global"), "spec.scope"),
            (
                |c| c["spec"]["names"]["shortNames"] = json!(["C T"]),
                "spec.names.shortNames[0]",
            ),
            (
                |c| c["spec"]["versions"][0]["name"] = json!("1"),
                "spec.versions[0].name",
            ),
            (
                |c| {
                    c["spec"]["versions"][0]
                        .as_object_mut()
                        .map(|v| v.remove("schema"));
                },
                "spec.versions[0].schema.openAPIV3Schema",
            ),
            (
                |c| c["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["type"] = json!("string"),
                "spec.validation.openAPIV3Schema.type",
            ),
        ];
        for (mutate, field) in cases {
            let mut crd = crontab();
            mutate(&mut crd);
            let errs = validate(&crd);
            assert!(errs.iter().any(|e| e.field == field), "{field}: {errs:?}");
        }
    }

    #[test]
    fn names_conflict_within_a_group() {
        let first = Crd::from_value(&{
            let mut c = crontab();
            c["status"] = json!({"acceptedNames": c["spec"]["names"].clone()});
            c
        })
        .expect("crd");
        let mut wanted = first.spec.names.clone();
        assert!(accept_names(
            &wanted,
            "stable.example.com",
            "other.stable.example.com",
            std::slice::from_ref(&first)
        )
        .is_err());
        assert!(accept_names(
            &wanted,
            "other.example.com",
            "x",
            std::slice::from_ref(&first)
        )
        .is_ok());
        wanted = Names {
            plural: "b".into(),
            singular: "b".into(),
            kind: "B".into(),
            list_kind: "BList".into(),
            short_names: vec!["ct".into()],
            ..Default::default()
        };
        let err = accept_names(
            &wanted,
            "stable.example.com",
            "b.stable.example.com",
            &[first],
        )
        .expect_err("ct taken");
        assert_eq!(
            err,
            ("ShortNamesConflict", "\"ct\" is already in use".to_string())
        );
    }

    #[test]
    fn conversion_rules() {
        let errs = |conversion: Value| -> Vec<String> {
            conversion_errors(&conversion)
                .iter()
                .map(|e| format!("{}: {}", e.field, e.message))
                .collect()
        };
        assert!(errs(json!({"strategy": "None"})).is_empty());
        let ok = json!({"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v1"],
            "clientConfig": {"url": "https://127.0.0.1:8443/convert"}}});
        assert!(errs(ok).is_empty());
        assert_eq!(
            errs(json!({"strategy": "Webhook"})),
            [
                "spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook",
                "spec.conversion.conversionReviewVersions: Required value"
            ]
        );
        assert_eq!(
            errs(json!({"strategy": "Webhook", "webhook": {"conversionReviewVersions": ["v9", "v9"],
                "clientConfig": {"url": "http://x/convert"}}})),
            [
                "spec.conversion.webhookClientConfig.url: Invalid value: \"http\": 'https' is the only allowed URL scheme; desired format: https://host[/path]",
                "spec.conversion.conversionReviewVersions[1]: Invalid value: \"v9\": duplicate version",
                "spec.conversion.conversionReviewVersions: Invalid value: []string{\"v9\", \"v9\"}: must include at least one of v1, v1beta1"
            ]
        );
        assert_eq!(
            errs(json!({"strategy": "None", "webhook": {"conversionReviewVersions": ["v1"],
                "clientConfig": {"url": "https://x"}}})),
            [
                "spec.conversion.webhookClientConfig: Forbidden: should not be set when strategy is not set to Webhook",
                "spec.conversion.conversionReviewVersions: Forbidden: should not be set when strategy is not set to Webhook"
            ]
        );
    }
}
