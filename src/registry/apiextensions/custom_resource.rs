//! Custom resources: the served resources an established CRD defines (one per served version),
//! and their strategy: the structural-schema pipeline (prune -> drop non-nullable nulls ->
//! default -> validate, in the apiserver's order), the status/spec split and generation rules
//! that depend on the `/status` subresource, and the `/scale` checks.

use std::sync::Arc;

use serde_json::{json, Value};

use super::types::{Crd, Version};
use crate::cel::Rules;
use crate::controllers::Work;
use crate::conversion::none::NoneConverter;
use crate::conversion::webhook::WebhookConverter;
use crate::conversion::{Codec, Converter};
use crate::discovery::openapi;
use crate::registry::catalog::{version_priority, Registry, Served};
use crate::registry::resource::{
    api_version, storage_version_hash, ApiResource, BodyCodec, OpenApiDefinition, ResourceBuilder,
    Subresource, UnservedVerb, PART_VERBS, UNSTRUCTURED_PATCH_TYPES,
};
use crate::registry::strategy::StatusStrategy;
use crate::registry::table::Columns;
use crate::store::{selector, StoredObject};
use crate::webhook::WebhookClient;

use crate::context::Context;
use crate::error::{field, ApiError, StatusCause};
use crate::machinery::gofmt::{go_type, go_v, GoNum};
use crate::registry::apiextensions::ScaleSubresource;
use crate::registry::strategy::{bump_generation, Strategy};
use crate::schema::Schema;

/// Strategy for one served version of a CRD.
pub struct CustomResourceStrategy {
    /// Kind (for decode errors).
    pub kind: String,
    /// Version served (for decode errors).
    pub version: String,
    /// Whether `/status` is enabled: main-resource writes then leave `.status` alone.
    pub status_enabled: bool,
    /// The `/scale` paths, when enabled.
    pub scale: Option<ScaleSubresource>,
    /// The version's compiled schema (none only for legacy `preserveUnknownFields: true`).
    pub schema: Option<Arc<Schema>>,
    /// The version's compiled CEL rules (`x-kubernetes-validations`), if any.
    pub rules: Option<Arc<Rules>>,
    /// Legacy `spec.preserveUnknownFields: true`: nothing is pruned.
    pub preserve_unknown_fields: bool,
    /// The CRD's name, and whether it is being deleted (its cleanup waits for the objects).
    pub crd: Option<(String, bool)>,
}

/// Verbs of a custom resource, in the order the custom resource handler lists them.
const VERBS: &[&str] = &[
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "create",
    "update",
    "watch",
];
/// Verbs of a custom resource whose CRD is being deleted.
const TERMINATING_VERBS: &[&str] = &["delete", "deletecollection", "get", "list", "watch"];

/// The served resources of the established CRDs: one per served version. Compiled schemas and
/// CEL rules are reused from `previous` when a CRD's spec did not change.
/// Conversions through a webhook use `webhooks`.
pub fn resources(
    crds: &[Arc<Crd>],
    previous: Option<&Registry>,
    webhooks: &Arc<WebhookClient>,
) -> Vec<Arc<ApiResource>> {
    let mut out = Vec::new();
    for crd in crds.iter().filter(|c| c.established) {
        let converter = converter(crd, webhooks);
        for v in crd.spec.versions.iter().filter(|v| v.served) {
            out.push(Arc::new(resource(crd, v, previous, &converter)));
        }
    }
    out
}

/// The CRD's conversion strategy: `None` (only apiVersion changes) or `Webhook`.
fn converter(crd: &Crd, webhooks: &Arc<WebhookClient>) -> Arc<dyn Converter> {
    match crd.spec.conversion["strategy"].as_str() {
        Some("Webhook") => Arc::new(WebhookConverter::new(
            webhooks.clone(),
            &crd.spec.conversion,
        )),
        _ => Arc::new(NoneConverter),
    }
}

/// The resource of one served version of a CRD.
fn resource(
    crd: &Arc<Crd>,
    v: &Version,
    previous: Option<&Registry>,
    converter: &Arc<dyn Converter>,
) -> ApiResource {
    let names = &crd.accepted_names;
    let group = &crd.spec.group;
    let storage_version = crd.storage_version().to_string();
    let subresources = v.subresources.clone().unwrap_or_default();
    let status = subresources.status.is_some();
    let unchanged = unchanged_version(previous, crd, v);
    let (schema, rules) = match unchanged {
        Some(r) => (r.schema.shared(), r.rules.clone()),
        None => compile_schema(v),
    };
    let strategy = Arc::new(CustomResourceStrategy::new(
        crd,
        v,
        schema.clone(),
        rules.clone(),
    ));
    let codec = match unchanged {
        Some(r) => r.codec.clone(),
        None => Arc::new(Codec::new(
            api_version(group, &v.name),
            api_version(group, &storage_version),
            converter.clone(),
            schema
                .as_ref()
                .filter(|s| s.root().sub_defaults)
                .map(|_| crd.resource_version),
            strategy.clone(),
            storage_strategy(crd, v, &strategy),
        )),
    };
    let mut builder =
        ResourceBuilder::new(group, &v.name, &names.plural, &names.kind, strategy.clone())
            .verbs(if crd.terminating {
                TERMINATING_VERBS
            } else {
                VERBS
            })
            .with(|r| r.field_selectors = selectable_fields(crd, v).into())
            .unsupported_field(selector::builtin_unsupported_field)
            .table(Columns::from_printer_columns(&v.additional_printer_columns))
            .openapi(openapi_definition(crd, v))
            .schema(schema);
    if status {
        let status_strategy = StatusStrategy::new(move |obj: &Value, old: &Value| {
            strategy.validate_status_update(obj, old)
        });
        builder = builder.subresource(Subresource::part(
            "status",
            PART_VERBS,
            Arc::new(status_strategy),
        ));
    }
    if let Some(scale) = subresources.scale.clone() {
        builder = builder.subresource(Subresource::scale(scale));
    }
    builder
        .with(|r| {
            r.singular = names.singular.clone();
            r.short_names = names.short_names.clone().into();
            r.categories = names.categories.clone().into();
            r.list_kind = names.list_kind.clone();
            r.namespaced = crd.namespaced();
            r.storage_version_hash = storage_version_hash(group, &storage_version, &names.kind);
            r.storage_version = storage_version;
            r.decoding = BodyCodec::Unstructured;
            r.codec = codec;
            r.patch_types = UNSTRUCTURED_PATCH_TYPES;
            r.unserved_verb = UnservedVerb::Described;
            r.response_kind_has_version = true;
            r.terminating = crd.terminating;
            r.warnings = deprecation_warning(crd, v).into_iter().collect();
            r.crd = Some(crd.clone());
            r.rules = rules;
        })
        .build()
}

/// The field selectors of a version (`crConverter.ConvertFieldLabel`): `metadata.name`,
/// `metadata.namespace` when namespaced, and the version's `selectableFields`.
fn selectable_fields(crd: &Crd, v: &Version) -> Vec<String> {
    let mut out = vec!["metadata.name".to_string()];
    if crd.namespaced() {
        out.push("metadata.namespace".to_string());
    }
    out.extend(
        v.selectable_fields
            .iter()
            .filter_map(|f| f["jsonPath"].as_str())
            .map(|p| p.strip_prefix('.').unwrap_or(p).to_string()),
    );
    out
}

/// The strategy of the CRD's storage version, which prunes what a conversion to it produced:
/// `this` when `v` is the storage version, else one compiled for the storage version.
fn storage_strategy(
    crd: &Crd,
    v: &Version,
    this: &Arc<CustomResourceStrategy>,
) -> Arc<dyn Strategy> {
    match crd.spec.versions.iter().find(|s| s.storage) {
        Some(storage) if storage.name != v.name => {
            let (schema, rules) = compile_schema(storage);
            Arc::new(CustomResourceStrategy::new(crd, storage, schema, rules))
        }
        _ => this.clone(),
    }
}

/// The `Warning` every request through a deprecated version gets: its `deprecationWarning`, or
/// the apiserver's default naming the most preferred served version that is newer and not
/// deprecated (`defaultDeprecationWarning`).
fn deprecation_warning(crd: &Crd, v: &Version) -> Option<String> {
    if !v.deprecated {
        return None;
    }
    if let Some(w) = &v.deprecation_warning {
        return Some(w.clone());
    }
    let (group, kind) = (&crd.spec.group, &crd.accepted_names.kind);
    let mut msg = format!("{group}/{} {kind} is deprecated", v.name);
    let newer = crd
        .spec
        .versions
        .iter()
        .filter(|o| o.served && !o.deprecated)
        .filter(|o| version_priority(&v.name, &o.name) == std::cmp::Ordering::Greater)
        .min_by(|a, b| version_priority(&a.name, &b.name));
    if let Some(o) = newer {
        msg.push_str(&format!("; use {group}/{} {kind}", o.name));
    }
    Some(msg)
}

/// The same version of the same CRD in the previous registry when the CRD's spec did not change
/// (same uid and generation): its compiled schema, CEL rules and codec (with its cached
/// encodings) are reused. Requests never compile schemas.
fn unchanged_version<'a>(
    previous: Option<&'a Registry>,
    crd: &Crd,
    v: &Version,
) -> Option<&'a Arc<ApiResource>> {
    previous?
        .served()
        .filter_map(Served::as_resource)
        .find(|r| {
            r.version == v.name
                && r.crd
                    .as_ref()
                    .is_some_and(|c| c.uid == crd.uid && c.generation == crd.generation)
        })
}

/// Compiles a version's schema and CEL rules.
fn compile_schema(v: &Version) -> (Option<Arc<Schema>>, Option<Arc<Rules>>) {
    let Some(raw) = v.schema.as_ref().and_then(|s| s.get("openAPIV3Schema")) else {
        return (None, None);
    };
    let schema = Schema::compile(raw);
    // A stored CRD passed validation, so its rules compile; a failure here only drops them.
    let rules = Rules::compile(schema.root(), "")
        .ok()
        .filter(|r| !r.is_empty())
        .map(Arc::new);
    (Some(Arc::new(schema)), rules)
}

/// The published schema of a custom resource version: the CRD's, with apiVersion/kind
/// described, metadata a reference to ObjectMeta, and the kind's GVK extension. The definition
/// names put the group in reverse (`com.example.stable.v1.CronTab`), as the apiserver does.
fn openapi_definition(crd: &Crd, v: &Version) -> OpenApiDefinition {
    let group = &crd.spec.group;
    let names = &crd.accepted_names;
    let raw = v
        .schema
        .as_ref()
        .and_then(|s| s.get("openAPIV3Schema"))
        .cloned()
        .unwrap_or_else(|| json!({"type": "object"}));
    let mut parts: Vec<&str> = group.split('.').collect();
    parts.reverse();
    let package = format!("{}.{}", parts.join("."), v.name);
    OpenApiDefinition {
        name: format!("{package}.{}", names.kind).into(),
        list_name: format!("{package}.{}", names.list_kind).into(),
        schema: openapi::with_type_meta(raw, group, &v.name, &names.kind),
    }
}

/// `unstructured.NestedFieldNoCopy` along a scale path (`.spec.replicas`): the value there, or
/// `None` when a field on the way is absent (or the value is null); a value on the way that is
/// not an object is the accessor's error.
fn nested<'a>(obj: &'a Value, path: &str) -> Result<Option<&'a Value>, String> {
    let fields: Vec<&str> = path.trim_start_matches('.').split('.').collect();
    let mut val = obj;
    for (i, f) in fields.iter().enumerate() {
        match val {
            Value::Null => return Ok(None),
            Value::Object(m) => match m.get(*f) {
                Some(v) => val = v,
                None => return Ok(None),
            },
            other => {
                return Err(format!(
                    ".{} accessor error: {} is of the type {}, expected map[string]interface{{}}",
                    fields[..=i].join("."),
                    go_v(other),
                    go_type(other)
                ))
            }
        }
    }
    Ok(Some(val).filter(|v| !v.is_null()))
}

/// The accessor's error for a value of the wrong type (`NestedInt64`, `NestedString`).
fn accessor_error(path: &str, v: &Value, expected: &str) -> String {
    format!(
        ".{} accessor error: {} is of the type {}, expected {expected}",
        path.trim_start_matches('.'),
        go_v(v),
        go_type(v)
    )
}

/// `unstructured.NestedInt64`.
fn nested_i64(obj: &Value, path: &str) -> Result<Option<i64>, String> {
    match nested(obj, path)? {
        None => Ok(None),
        Some(v) => match GoNum::of(v) {
            Some(GoNum::Int(i)) => Ok(Some(i)),
            _ => Err(accessor_error(path, v, "int64")),
        },
    }
}

impl CustomResourceStrategy {
    /// The `/scale` rules on the replicas paths: integers, not negative, within int32.
    fn validate_scale(&self, obj: &Value, status: bool) -> Vec<StatusCause> {
        let Some(scale) = &self.scale else {
            return Vec::new();
        };
        let path = if status {
            &scale.status_replicas_path
        } else {
            &scale.spec_replicas_path
        };
        let mut errs = Vec::new();
        match nested_i64(obj, path) {
            Err(e) => errs.push(field::invalid(path, &json!(0), &e)),
            Ok(Some(n)) if n < 0 => errs.push(field::invalid(
                path,
                &json!(n),
                "should be a non-negative integer",
            )),
            Ok(Some(n)) if n > i64::from(i32::MAX) => errs.push(field::invalid(
                path,
                &json!(n),
                &format!("should be less than or equal to {}", i32::MAX),
            )),
            _ => {}
        }
        if status {
            if let Some(sel) = &scale.label_selector_path {
                // `NestedString`; the error shows the string it did not get.
                let err = match nested(obj, sel) {
                    Ok(Some(v)) if !v.is_string() => Some(accessor_error(sel, v, "string")),
                    Ok(_) => None,
                    Err(e) => Some(e),
                };
                if let Some(e) = err {
                    errs.push(field::invalid(sel, &json!(""), &e));
                }
            }
        }
        errs
    }
}

impl CustomResourceStrategy {
    /// The strategy of version `v` of `crd`, with its compiled schema and rules.
    pub fn new(
        crd: &Crd,
        v: &Version,
        schema: Option<Arc<Schema>>,
        rules: Option<Arc<Rules>>,
    ) -> CustomResourceStrategy {
        let subresources = v.subresources.clone().unwrap_or_default();
        CustomResourceStrategy {
            kind: crd.accepted_names.kind.clone(),
            version: v.name.clone(),
            status_enabled: subresources.status.is_some(),
            scale: subresources.scale,
            schema,
            rules,
            preserve_unknown_fields: crd.spec.preserve_unknown_fields == Some(true),
            crd: Some((crd.name.clone(), crd.terminating)),
        }
    }
}

impl Strategy for CustomResourceStrategy {
    /// `schemaCoercingConverter`: what a conversion produced is pruned against this version's
    /// schema, and its non-nullable `null`s without defaults dropped.
    fn prune_converted(&self, obj: &mut Value) {
        if let Some(schema) = self
            .schema
            .as_ref()
            .filter(|_| !self.preserve_unknown_fields)
        {
            schema.prune_converted(obj);
        }
    }

    fn decode(&self, obj: &mut Value, ctx: &Context) -> Result<(), ApiError> {
        // The apiserver's decoder (`unstructuredSchemaCoercer`) reads `metadata` into ObjectMeta
        // first: a value of the wrong type there is a 400 decode error.
        if let Some(meta) = obj.get("metadata") {
            crate::schema::check_object_meta(meta).map_err(|e| {
                ApiError::bad_request(format!(
                    "{kind} in version {:?} cannot be handled as a {kind}: {e}",
                    self.version,
                    kind = self.kind
                ))
            })?;
        }
        let Some(schema) = &self.schema else {
            return Ok(());
        };
        if !self.preserve_unknown_fields {
            let unknown = schema.prune(obj);
            ctx.field_validation.report(
                ctx,
                "unknown field",
                &unknown,
                &self.kind,
                &self.version,
            )?;
        }
        schema.apply_defaults(obj);
        Ok(())
    }

    fn default_on_read(&self, obj: &mut Value) -> bool {
        match &self.schema {
            Some(schema) if schema.root().sub_defaults => {
                let before = obj.clone();
                schema.apply_defaults(obj);
                *obj != before
            }
            _ => false,
        }
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        if self.status_enabled {
            if let Some(o) = obj.as_object_mut() {
                o.remove("status");
            }
        }
    }

    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        if self.status_enabled {
            match old.get("status") {
                Some(s) => obj["status"] = s.clone(),
                None => {
                    if let Some(o) = obj.as_object_mut() {
                        o.remove("status");
                    }
                }
            }
        }
        bump_generation(obj, old, self.status_enabled);
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        let mut errs = match &self.schema {
            Some(schema) => schema.validate(obj, None),
            None => Vec::new(),
        };
        if let Some(rules) = &self.rules {
            let cel = rules.validate(obj, None, &errs);
            errs.extend(cel);
        }
        errs.extend(self.validate_scale(obj, false));
        errs
    }

    fn after_remove(&self, _obj: &StoredObject) -> Vec<Work> {
        match &self.crd {
            Some((name, true)) => vec![Work::Crd(name.clone())],
            _ => Vec::new(),
        }
    }

    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        let mut errs = match &self.schema {
            Some(schema) => schema.validate(obj, Some(old)),
            None => Vec::new(),
        };
        if let Some(rules) = &self.rules {
            let cel = rules.validate(obj, Some(old), &errs);
            errs.extend(cel);
        }
        errs.extend(self.validate_scale(obj, false));
        errs
    }
}

impl CustomResourceStrategy {
    /// Field errors of a write to `/status`: only what that write may change is validated.
    pub fn validate_status_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        let mut errs = Vec::new();
        if let (Some(schema), Some(status)) = (&self.schema, obj.get("status")) {
            if let Some(node) = schema.root().field("status") {
                errs.extend(Schema::validate_at(
                    node,
                    status,
                    old.get("status"),
                    "status",
                ));
            }
        }
        if let Some(rules) = &self.rules {
            let cel = rules.validate(obj, Some(old), &errs);
            errs.extend(cel);
        }
        errs.extend(self.validate_scale(obj, true));
        errs
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::strategy::FieldValidation;

    fn strategy(status: bool, schema: Option<Value>) -> CustomResourceStrategy {
        CustomResourceStrategy {
            kind: "CronTab".into(),
            version: "v1".into(),
            status_enabled: status,
            scale: None,
            schema: schema.map(|s| Arc::new(Schema::compile(&s))),
            rules: None,
            preserve_unknown_fields: false,
            crd: None,
        }
    }

    #[test]
    fn status_is_server_owned_only_with_the_subresource() {
        let with = strategy(true, None);
        let mut obj = json!({"metadata": {}, "status": {"x": 1}});
        with.prepare_for_create(&mut obj);
        assert!(obj.get("status").is_none());

        let without = strategy(false, None);
        let mut obj = json!({"metadata": {}, "status": {"x": 1}});
        without.prepare_for_create(&mut obj);
        assert_eq!(obj["status"]["x"], 1);
    }

    #[test]
    fn decode_prunes_and_defaults_and_strict_refuses() {
        let s = strategy(
            false,
            Some(
                json!({"type": "object", "properties": {"spec": {"type": "object",
                "properties": {"replicas": {"type": "integer", "default": 1}}}}}),
            ),
        );
        let mut obj = json!({"metadata": {"name": "a"}, "spec": {"someRandomField": 42}});
        let mut ctx = Context::internal();
        ctx.field_validation = FieldValidation::Ignore;
        s.decode(&mut obj, &ctx).expect("decodes");
        assert_eq!(obj["spec"], json!({"replicas": 1}));
        let mut obj = json!({"metadata": {"name": "a"}, "spec": {"someRandomField": 42}});
        ctx.field_validation = FieldValidation::Strict;
        let err = s.decode(&mut obj, &ctx).expect_err("strict");
        assert_eq!(
            err.message,
            "CronTab in version \"v1\" cannot be handled as a CronTab: strict decoding error: unknown field \"spec.someRandomField\""
        );
    }

    #[test]
    fn scale_paths_are_validated() {
        let mut s = strategy(false, None);
        s.scale = Some(ScaleSubresource {
            spec_replicas_path: ".spec.replicas".into(),
            status_replicas_path: ".status.replicas".into(),
            label_selector_path: None,
            ..Default::default()
        });
        let errs = s.validate(&json!({"spec": {"replicas": -1}}));
        assert_eq!(errs[0].field, ".spec.replicas");
        assert_eq!(
            errs[0].message,
            "Invalid value: -1: should be a non-negative integer"
        );
        assert!(s.validate(&json!({"spec": {"replicas": 3}})).is_empty());
    }
}
