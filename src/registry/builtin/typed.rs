//! The decode step every built-in kind shares: what the apiserver's typed codec does to a body
//! before the kind's strategy sees it. The body is decoded into the kind's Go type and encoded
//! again ([`crate::typed::normalize()`]: unknown fields dropped and reported per
//! `fieldValidation`, Go's omission rules, canonical quantities and times, Go's error texts for
//! values of the wrong type), then defaulted: first the declarative defaults Kubernetes
//! publishes in its schemas (`+default` markers: a container port's `protocol: TCP`), then the
//! kind's own defaulting code ([`Strategy::defaults`]).

use std::sync::{Arc, OnceLock};

use serde_json::Value;

use super::schema::Defaults;
use crate::context::Context;
use crate::controllers::Work;
use crate::error::{ApiError, StatusCause};
use crate::registry::object_meta::NameRule;
use crate::registry::store::Propagation;
use crate::registry::strategy::Strategy;
use crate::store::{Snapshot, StoredObject};
use crate::typed::{self, error::TypedError};

/// A built-in kind's strategy behind its typed decode. Every other step is the kind's own.
pub struct Typed {
    inner: Arc<dyn Strategy>,
    /// `group/version` (`version` for core): the version is its last part.
    api_version: String,
    kind: &'static str,
    /// The OpenAPI definition of the kind, whose declared defaults every decode applies.
    definition: &'static str,
    /// Those defaults, found on the kind's first write.
    defaults: OnceLock<Defaults>,
}

impl Typed {
    /// Wraps a kind's strategy; the kind and its definition are the published names, borrowed.
    pub fn new(
        inner: Arc<dyn Strategy>,
        api_version: String,
        kind: &'static str,
        definition: &'static str,
    ) -> Typed {
        Typed {
            inner,
            api_version,
            kind,
            definition,
            defaults: OnceLock::new(),
        }
    }

    /// The kind's version, read from its apiVersion rather than kept beside it.
    fn version(&self) -> &str {
        self.api_version
            .rsplit_once('/')
            .map_or(&self.api_version, |(_, version)| version)
    }

    fn decode_error(&self, e: &TypedError) -> ApiError {
        ApiError::bad_request(format!(
            "{} in version {:?} cannot be handled as a {}: {e}",
            self.kind,
            self.version(),
            self.kind
        ))
    }
}

impl Strategy for Typed {
    /// Typing takes the object apart (its strings move to the typed tree rather than being
    /// copied): after an error, `obj` is left null, and the request that fails drops it.
    fn decode(&self, obj: &mut Value, ctx: &Context) -> Result<(), ApiError> {
        let table = &*typed::model::TABLE;
        // A kind the Go model does not describe keeps its JSON as sent.
        if let Some(id) = table.kind(&self.api_version, self.kind) {
            let n = typed::normalize::normalize_as(table, id, std::mem::take(obj))
                .map_err(|e| self.decode_error(&e))?;
            ctx.field_validation.report(
                ctx,
                "unknown field",
                &n.unknown,
                self.kind,
                self.version(),
            )?;
            *obj = n.value;
        }
        self.defaults
            .get_or_init(|| Defaults::of(self.definition))
            .apply(obj);
        self.inner.defaults(obj);
        self.inner.decode(obj, ctx)
    }

    /// managedFields equal to the stored object's (a patch or an apply that kept them, a PUT
    /// that sends back what it read) were typed when they were stored, and typing is
    /// idempotent; entries in the form the server writes them (an apply's) type to themselves:
    /// either way they are set aside while the rest is decoded instead of being walked and
    /// copied again on every write.
    fn decode_update(&self, obj: &mut Value, old: &Value, ctx: &Context) -> Result<(), ApiError> {
        let kept = take_stored_managed_fields(obj, old);
        self.decode(obj, ctx)?;
        if let Some(managed) = kept {
            if let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
                meta.insert("managedFields".into(), managed);
            }
        }
        Ok(())
    }

    fn name_rule(&self) -> NameRule {
        self.inner.name_rule()
    }

    fn track_generation(&self) -> bool {
        self.inner.track_generation()
    }

    fn keeps_sent_generation(&self) -> bool {
        self.inner.keeps_sent_generation()
    }

    fn allow_unconditional_update(&self) -> bool {
        self.inner.allow_unconditional_update()
    }

    fn defaults(&self, obj: &mut Value) {
        self.inner.defaults(obj);
    }

    fn default_on_read(&self, obj: &mut Value) -> bool {
        self.inner.default_on_read(obj)
    }

    fn prune_converted(&self, obj: &mut Value) {
        self.inner.prune_converted(obj);
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        self.inner.prepare_for_create(obj);
    }

    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        self.inner.prepare_for_update(obj, old);
    }

    fn allocate(
        &self,
        view: &Snapshot,
        obj: &mut Value,
        old: Option<&Value>,
        dry_run: bool,
    ) -> Result<(), ApiError> {
        self.inner.allocate(view, obj, old, dry_run)
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        self.inner.validate(obj)
    }

    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        self.inner.validate_update(obj, old)
    }

    fn warnings_on_create(&self, obj: &Value) -> Vec<String> {
        self.inner.warnings_on_create(obj)
    }

    fn warnings_on_update(&self, obj: &Value, old: &Value) -> Vec<String> {
        self.inner.warnings_on_update(obj, old)
    }

    fn prepare_for_delete(&self, obj: &Value) -> Option<Value> {
        self.inner.prepare_for_delete(obj)
    }

    fn default_propagation(&self) -> Option<(Propagation, &'static str)> {
        self.inner.default_propagation()
    }

    fn graceful_delete(&self, obj: &Value, requested: Option<i64>) -> Option<i64> {
        self.inner.graceful_delete(obj, requested)
    }

    fn pending_finalizers(&self, obj: &Value) -> bool {
        self.inner.pending_finalizers(obj)
    }

    fn after_commit(&self, obj: &StoredObject) -> Vec<Work> {
        self.inner.after_commit(obj)
    }

    fn after_remove(&self, obj: &StoredObject) -> Vec<Work> {
        self.inner.after_remove(obj)
    }
}

/// Takes `metadata.managedFields` out of an update's new object when they are the stored
/// object's, non-empty (an empty list is dropped by the decode, so it is never set aside), or
/// in the form the server writes them (what a server-side apply leaves there).
fn take_stored_managed_fields(obj: &mut Value, old: &Value) -> Option<Value> {
    let stored = old
        .get("metadata")
        .and_then(|m| m.get("managedFields"))
        .filter(|m| m.as_array().is_some_and(|a| !a.is_empty()));
    let meta = obj.get_mut("metadata")?.as_object_mut()?;
    let sent = meta.get("managedFields")?;
    if stored != Some(sent) && !crate::apply::in_server_form(sent) {
        return None;
    }
    meta.remove("managedFields")
}

#[cfg(test)]
mod tests {
    use rstest::rstest;
    use serde_json::{json, Value};

    use super::take_stored_managed_fields;

    fn entry(manager: &str) -> Value {
        json!({"manager": manager, "operation": "Update", "apiVersion": "v1",
               "time": "2026-01-01T00:00:00Z", "fieldsType": "FieldsV1",
               "fieldsV1": {"f:data": {"f:a": {}}}})
    }

    fn with_managed(managed: Option<Value>) -> Value {
        let mut meta = json!({"name": "a"});
        if let Some(m) = managed {
            meta["managedFields"] = m;
        }
        json!({"metadata": meta, "data": {"a": "1"}})
    }

    fn odd(key: &str, value: Value) -> Value {
        let mut e = entry("a");
        e[key] = value;
        e
    }

    #[rstest]
    #[case::unchanged(Some(json!([entry("a")])), Some(json!([entry("a")])), true)]
    #[case::changed(Some(json!([entry("a")])), Some(json!([entry("b")])), true)]
    #[case::added(Some(json!([entry("a")])), Some(json!([entry("a"), entry("b")])), true)]
    #[case::cleared(Some(json!([entry("a")])), Some(json!([])), false)]
    #[case::left_out(Some(json!([entry("a")])), None, false)]
    #[case::none_stored(None, Some(json!([entry("a")])), true)]
    #[case::both_empty(Some(json!([])), Some(json!([])), false)]
    #[case::both_null(Some(Value::Null), Some(Value::Null), false)]
    #[case::fraction(None, Some(json!([odd("time", json!("2026-01-01T00:00:00.5Z"))])), false)]
    #[case::offset(None, Some(json!([odd("time", json!("2026-01-01T01:00:00+01:00"))])), false)]
    #[case::zero_time(None, Some(json!([odd("time", json!("0001-01-01T00:00:00Z"))])), false)]
    #[case::unknown_key(None, Some(json!([odd("extra", json!("x"))])), false)]
    #[case::empty_manager(None, Some(json!([odd("manager", json!(""))])), false)]
    #[case::number(None, Some(json!([odd("subresource", json!(1))])), false)]
    #[case::leaf_dot(None, Some(json!([odd("fieldsV1", json!({"f:a": {".": {}}}))])), false)]
    #[case::bad_key(None, Some(json!([odd("fieldsV1", json!({"x": {}}))])), false)]
    fn managed_fields_are_set_aside_when_stored_or_in_server_form(
        #[case] stored: Option<Value>,
        #[case] sent: Option<Value>,
        #[case] set_aside: bool,
    ) {
        let old = with_managed(stored);
        let mut obj = with_managed(sent.clone());
        let taken = take_stored_managed_fields(&mut obj, &old);
        assert_eq!(taken.is_some(), set_aside);
        if set_aside {
            assert_eq!(taken, sent);
            assert!(obj["metadata"].get("managedFields").is_none());
            assert_eq!(obj["metadata"]["name"], "a");
        } else {
            assert_eq!(obj, with_managed(sent));
        }
    }

    /// What setting aside relies on: typing gives entries in the server's form back unchanged.
    #[test]
    fn typing_leaves_entries_in_server_form_unchanged() {
        let entries = json!([
            entry("a"),
            odd("subresource", json!("status")),
            odd(
                "fieldsV1",
                json!({"f:data": {".": {}, "f:a": {}}, "f:metadata": {
                "f:ownerReferences": {"k:{\"uid\":\"u\"}": {}}}})
            )
        ]);
        assert!(crate::apply::in_server_form(&entries));
        let mut obj = json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "1"},
            "metadata": {"name": "a", "namespace": "n"}});
        obj["metadata"]["managedFields"] = entries.clone();
        let typed = crate::typed::normalize::normalize("v1", "ConfigMap", obj.clone())
            .expect("a ConfigMap types");
        assert_eq!(typed.value["metadata"]["managedFields"], entries);
    }

    #[test]
    fn a_body_without_metadata_is_left_alone() {
        let old = with_managed(Some(json!([entry("a")])));
        let mut obj = json!("not an object");
        assert!(take_stored_managed_fields(&mut obj, &old).is_none());
        assert_eq!(obj, json!("not an object"));
    }
}
