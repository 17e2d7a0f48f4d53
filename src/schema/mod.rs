//! Structural schemas of custom resources: compiled once per CRD version, applied on every
//! write (prune -> drop non-nullable nulls -> default -> validate).
//!
//! The behaviour follows k8s.io/apiextensions-apiserver (`pkg/apiserver/schema`: pruning,
//! defaulting, objectmeta, listtype; `pkg/apiserver/validation` for ratcheting) and kube-openapi's
//! `pkg/validation/validate` for the per-keyword checks and messages. CRD-time checks of a schema
//! (`pkg/apis/apiextensions/validation`) are in [`validate_crd_schema`].
//!
//! ```
//! use kubefake::schema::Schema;
//! use serde_json::json;
//! let s = Schema::compile(&json!({"type": "object", "properties": {"spec": {"type": "object",
//!     "properties": {"replicas": {"type": "integer", "maximum": 10, "default": 1}}}}}));
//! let mut obj = json!({"apiVersion": "x/v1", "kind": "X", "metadata": {"name": "a"},
//!                      "spec": {"other": 1}});
//! assert_eq!(s.prune(&mut obj), vec!["spec.other"]);
//! s.apply_defaults(&mut obj);
//! assert_eq!(obj["spec"]["replicas"], 1);
//! assert!(s.validate(&obj, None).is_empty());
//! ```

mod crd_checks;
mod defaulting;
pub mod formats;
mod listtype;
mod objectmeta;
pub mod pattern;
mod pruning;
pub mod reference;
pub mod shape;
pub mod structural;
mod validation;
pub mod zero;

pub use crd_checks::{unknown_schema_fields, validate_crd_schema};
pub use objectmeta::{check_object_meta, object_meta_field, MetaFieldType, ObjectMetaError};
pub use shape::Shape;
pub use structural::Node;

use serde_json::Value;

use crate::error::StatusCause;
use validation::VPath;

/// A compiled structural schema: the `openAPIV3Schema` of one CRD version, decoded once (patterns
/// compiled, unsupported formats stripped) and shared read-only (`Send + Sync`, put it in an
/// `Arc`) by every request for that version.
#[derive(Debug, Clone)]
pub struct Schema {
    root: Node,
}

impl Schema {
    /// Compiles `openAPIV3Schema` (already accepted by [`validate_crd_schema`]). Never panics on
    /// any JSON: keywords of the wrong type are ignored.
    pub fn compile(openapi_v3_schema: &Value) -> Schema {
        Schema {
            root: Node::compile(openapi_v3_schema),
        }
    }

    /// The root node, for callers that need the schema tree (status/scale paths, columns).
    pub fn root(&self) -> &Node {
        &self.root
    }

    /// Removes fields not in the schema, as the apiserver does while decoding a custom resource:
    /// unknown root `metadata` fields, then structural pruning (honouring
    /// `x-kubernetes-preserve-unknown-fields` subtrees; `x-kubernetes-embedded-resource` objects
    /// keep apiVersion/kind/metadata), then embedded `metadata` pruned to ObjectMeta fields
    /// (`null`s of non-nullable fields are dropped by [`Schema::apply_defaults`]). The root's apiVersion/kind/metadata are
    /// always kept. Returns the paths of what was removed in the apiserver's wording
    /// (`spec.someRandomField`; the caller formats `unknown field "<path>"` for Strict/Warn).
    pub fn prune(&self, obj: &mut Value) -> Vec<String> {
        let mut unknown = Vec::new();
        if let Some(Value::Object(meta)) = obj.get_mut("metadata") {
            meta.retain(|k, _| {
                let known = objectmeta::object_meta_field(k).is_some();
                if !known {
                    unknown.push(format!("metadata.{k}"));
                }
                known
            });
        }
        let mut t = pruning::Tracker::default();
        pruning::prune(obj, &self.root, true, &mut t);
        t.unknown.sort();
        unknown.extend(t.unknown);
        let mut meta_unknown = Vec::new();
        objectmeta::coerce(obj, Some(&self.root), &VPath::root(), &mut meta_unknown);
        meta_unknown.sort();
        unknown.extend(meta_unknown);
        unknown
    }

    /// What the apiserver does to the output of a conversion into this schema's version: prune
    /// (as [`Schema::prune`], nothing reported) and drop the `null`s of non-nullable fields that
    /// have no default; defaults come later, when the object is decoded for a reader.
    pub fn prune_converted(&self, obj: &mut Value) {
        self.prune(obj);
        pruning::prune_nulls(obj, Some(&self.root));
    }

    /// Applies `default`s in the apiserver's order: `null`s of non-nullable fields without a
    /// default are dropped first (`PruneNonNullableNullsWithoutDefaults`), then every missing
    /// field (or non-nullable `null`) with a default gets a copy of it, depth first through
    /// defaulted values too (`defaulting.Default`).
    pub fn apply_defaults(&self, obj: &mut Value) {
        pruning::prune_nulls(obj, Some(&self.root));
        defaulting::default(obj, Some(&self.root));
    }

    /// Validates a whole custom resource. `old` is the previous object on updates: errors on
    /// values unchanged from `old` are dropped (CRD validation ratcheting), except where the
    /// apiserver does not ratchet (list-type invariants ratchet only as a whole, embedded
    /// metadata never). Returns every field error: schema errors with kube-openapi's messages
    /// (`spec.replicas: Invalid value: 15: spec.replicas in body should be less than or equal to
    /// 10`), then embedded-resource errors, then `x-kubernetes-list-type` duplicates. Root
    /// `metadata` is the caller's (ObjectMeta validation); `x-kubernetes-validations` (CEL) are
    /// not evaluated.
    pub fn validate(&self, obj: &Value, old: Option<&Value>) -> Vec<StatusCause> {
        let mut out = validation::validate_value(&self.root, obj, old, None);
        let root = VPath::root();
        objectmeta::validate(obj, Some(&self.root), &root, &mut out);
        if let Value::Object(m) = obj {
            let old_ok = match old {
                Some(Value::Object(om)) => {
                    let mut old_errs = Vec::new();
                    listtype::validate_object(om, &self.root, &root, &mut old_errs);
                    old_errs.is_empty()
                }
                _ => true,
            };
            if old_ok {
                listtype::validate_object(m, &self.root, &root, &mut out);
            }
        }
        out
    }

    /// Validates a value against a sub-schema (e.g. `status` for the status subresource), with
    /// errors reported under `base` as the apiserver does for `ValidateStatusUpdate`.
    pub fn validate_at(
        node: &Node,
        value: &Value,
        old: Option<&Value>,
        base: &str,
    ) -> Vec<StatusCause> {
        validation::validate_value(node, value, old, Some(base))
    }
}

#[cfg(test)]
mod tests;
