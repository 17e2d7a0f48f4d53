//! Per-resource behaviour plugged into the one generic store, as the apiserver's
//! `RESTCreateStrategy`/`RESTUpdateStrategy` plug into `genericregistry.Store`: what the server
//! owns on create, what an update may change, how objects are validated, how deletion starts.
//!
//! Strategies are pure functions of the request body and the stored object; they never touch the
//! store, so handlers can run them before taking the write lock.

use serde_json::{Map, Value};

use super::object_meta::{self, NameRule};
use super::store::Propagation;
use crate::context::Context;
use crate::controllers::Work;
use crate::error::{ApiError, StatusCause};
use crate::store::{Snapshot, StoredObject};

/// What unknown fields in a request body do (`fieldValidation`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FieldValidation {
    /// Dropped silently.
    Ignore,
    /// Dropped, with a `Warning` header each (the default).
    #[default]
    Warn,
    /// The request fails with 400.
    Strict,
}

impl FieldValidation {
    /// Reports fields the decoder dropped (`what` is "unknown field" or "duplicate field"):
    /// nothing for Ignore, a `Warning` each for Warn, the apiserver's 400 for Strict.
    pub fn report(
        self,
        ctx: &Context,
        what: &str,
        paths: &[String],
        kind: &str,
        version: &str,
    ) -> Result<(), ApiError> {
        match self {
            FieldValidation::Ignore => Ok(()),
            _ if paths.is_empty() => Ok(()),
            FieldValidation::Warn => {
                for p in paths {
                    ctx.warn(format!("{what} {p:?}"));
                }
                Ok(())
            }
            FieldValidation::Strict => {
                let listed: Vec<String> = paths.iter().map(|p| format!("{what} {p:?}")).collect();
                Err(ApiError::bad_request(format!(
                    "{kind} in version {version:?} cannot be handled as a {kind}: strict decoding error: {}",
                    listed.join(", ")
                )))
            }
        }
    }

    /// Parses the `fieldValidation` query parameter.
    pub fn parse(v: Option<&str>) -> Result<FieldValidation, ApiError> {
        match v {
            None | Some("") | Some("Warn") => Ok(FieldValidation::Warn),
            Some("Ignore") => Ok(FieldValidation::Ignore),
            Some("Strict") => Ok(FieldValidation::Strict),
            Some(other) => Err(ApiError::bad_request(format!(
                "invalid fieldValidation directive: {other}"
            ))),
        }
    }
}

/// How one resource treats its objects. Every method has the generic registry's default.
pub trait Strategy: Send + Sync {
    /// How `metadata.name` is validated.
    fn name_rule(&self) -> NameRule {
        NameRule::Subdomain
    }

    /// Whether `metadata.generation` is maintained (1 on create, +1 on a spec change).
    fn track_generation(&self) -> bool {
        true
    }

    /// Whether a create keeps the `metadata.generation` the client sent when the kind does not
    /// track generations, as the apiserver keeps a ResourceClaim's (its `BeforeCreate` leaves
    /// the field alone); otherwise it is cleared.
    fn keeps_sent_generation(&self) -> bool {
        false
    }

    /// Whether a PUT without `metadata.resourceVersion` is accepted (last write wins).
    fn allow_unconditional_update(&self) -> bool {
        false
    }

    /// The codec step every written body goes through first, as the apiserver's decoder does
    /// for custom resources: unknown fields pruned (reported per the request's
    /// `fieldValidation`), defaults applied.
    fn decode(&self, _obj: &mut Value, _ctx: &Context) -> Result<(), ApiError> {
        Ok(())
    }

    /// [`Strategy::decode`] of an update's new object, with the stored object (`old`, in the
    /// request's version) beside it, for a kind whose decode can skip what the update left
    /// as it was stored.
    fn decode_update(&self, obj: &mut Value, _old: &Value, ctx: &Context) -> Result<(), ApiError> {
        self.decode(obj, ctx)
    }

    /// The kind's defaulting code (the apiserver's `SetDefaults_*` functions), run on every
    /// decoded body of a built-in kind after its declarative defaults.
    fn defaults(&self, _obj: &mut Value) {}

    /// Defaults for an object read from storage that was written before a default existed.
    /// Returns whether anything changed (reads then serialise the defaulted copy).
    fn default_on_read(&self, _obj: &mut Value) -> bool {
        false
    }

    /// Coerces what a conversion into this version produced (custom resources prune it against
    /// the version's schema); built-in kinds convert through typed models and need nothing.
    fn prune_converted(&self, _obj: &mut Value) {}

    /// Server-owned fields and defaults on create (e.g. status dropped when `/status` exists).
    fn prepare_for_create(&self, _obj: &mut Value) {}

    /// What a write to the main resource may not change (e.g. status), and generation bumps.
    fn prepare_for_update(&self, _obj: &mut Value, _old: &Value) {}

    /// Takes what the object needs from state every object of the kind shares (a Service's
    /// cluster IP and node ports), inside the store's write, so that no two objects ever get
    /// the same: the apiserver's `BeginCreate`/`BeginUpdate` allocators, with the store itself
    /// as the allocator's state. `view` is the state the write commits on, `obj` the object
    /// about to be stored and `old` the stored one of an update (both in the storage version).
    /// On a dry run the object shows what it would get and nothing is kept.
    fn allocate(
        &self,
        _view: &Snapshot,
        _obj: &mut Value,
        _old: Option<&Value>,
        _dry_run: bool,
    ) -> Result<(), ApiError> {
        Ok(())
    }

    /// Field errors on create, beyond the shared ObjectMeta rules.
    fn validate(&self, _obj: &Value) -> Vec<StatusCause> {
        Vec::new()
    }

    /// Field errors on update, beyond the shared ObjectMeta rules.
    fn validate_update(&self, obj: &Value, _old: &Value) -> Vec<StatusCause> {
        self.validate(obj)
    }

    /// `Warning` headers a create raises (deprecated fields, say); the object is valid.
    fn warnings_on_create(&self, _obj: &Value) -> Vec<String> {
        Vec::new()
    }

    /// `Warning` headers an update raises.
    fn warnings_on_update(&self, _obj: &Value, _old: &Value) -> Vec<String> {
        Vec::new()
    }

    /// Called on the first DELETE of an object: a strategy that needs cleanup before the object
    /// goes (namespaces, CRDs) returns it with its finalizer and conditions added; `None` (the
    /// default) leaves it as it is, and lets a delete that keeps nothing skip copying it.
    fn prepare_for_delete(&self, _obj: &Value) -> Option<Value> {
        None
    }

    /// The grace period a DELETE gives the object when something finishes graceful deletions
    /// (`CheckGracefulDelete`): `Some(seconds > 0)` keeps it, marked, until then; `None` (the
    /// default, and every kind but pods) deletes at once.
    fn graceful_delete(&self, _obj: &Value, _requested: Option<i64>) -> Option<i64> {
        None
    }

    /// The propagation a DELETE that names none gets (the strategy's
    /// `DefaultGarbageCollectionPolicy`), and the `Warning` such a delete raises; `None` for the
    /// store's default (dependents deleted in the background, no warning).
    fn default_propagation(&self) -> Option<(Propagation, &'static str)> {
        None
    }

    /// Whether the object still waits for something before it may leave the store (beyond
    /// `metadata.finalizers`, which the generic store checks itself).
    fn pending_finalizers(&self, _obj: &Value) -> bool {
        false
    }

    /// Controller work a committed create or update of this kind causes (beyond the garbage
    /// collector's, which the generic store queues itself): the kind's after-commit hook.
    fn after_commit(&self, _obj: &StoredObject) -> Vec<Work> {
        Vec::new()
    }

    /// Controller work the removal of an object of this kind causes.
    fn after_remove(&self, _obj: &StoredObject) -> Vec<Work> {
        Vec::new()
    }
}

/// The strategy of a `status` subresource: a write changes only `.status` (and the
/// managedFields that track it); everything else, metadata included, stays as stored. Field
/// errors come from `validate`, given the new object and the stored one.
pub struct StatusStrategy<F> {
    validate: F,
}

impl<F> StatusStrategy<F>
where
    F: Fn(&Value, &Value) -> Vec<StatusCause> + Send + Sync,
{
    /// A status strategy validating with `validate(new, old)`.
    pub fn new(validate: F) -> Self {
        StatusStrategy { validate }
    }
}

/// A status strategy without extra validation.
pub fn plain_status() -> StatusStrategy<fn(&Value, &Value) -> Vec<StatusCause>> {
    StatusStrategy::new(|_, _| Vec::new())
}

impl<F> Strategy for StatusStrategy<F>
where
    F: Fn(&Value, &Value) -> Vec<StatusCause> + Send + Sync,
{
    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        keep_only_status(obj, old);
    }

    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        (self.validate)(obj, old)
    }
}

/// Makes `obj` the stored object with only the new `.status` and managedFields. What differs
/// from `old` elsewhere is put back; a status write that kept the rest copies nothing.
pub fn keep_only_status(obj: &mut Value, old: &Value) {
    let metas = (obj.get("metadata"), old.get("metadata"));
    let (Some(Value::Object(_)), Some(Value::Object(old_meta))) = metas else {
        return keep_only_status_by_copy(obj, old);
    };
    let (Some(o), Some(old_map)) = (obj.as_object_mut(), old.as_object()) else {
        return keep_only_status_by_copy(obj, old);
    };
    let mut meta = o.remove("metadata");
    restore_except(o, old_map, &["status", "metadata"]);
    if let Some(Value::Object(m)) = &mut meta {
        restore_except(m, old_meta, &["managedFields"]);
    }
    if let Some(m) = meta {
        o.insert("metadata".into(), m);
    }
}

/// [`keep_only_status`] for objects without an object `metadata`.
fn keep_only_status_by_copy(obj: &mut Value, old: &Value) {
    let status = obj.get("status").cloned();
    let managed = obj["metadata"].get("managedFields").cloned();
    *obj = old.clone();
    match status {
        Some(s) => obj["status"] = s,
        None => {
            if let Some(o) = obj.as_object_mut() {
                o.remove("status");
            }
        }
    }
    let meta = object_meta::meta_mut(obj);
    match managed {
        Some(m) => meta.insert("managedFields".into(), m),
        None => meta.remove("managedFields"),
    };
}

/// Makes `target` equal to `source` except for the members named in `keep`, which it leaves
/// as they are (neither removed nor copied), copying only what differs.
fn restore_except(target: &mut Map<String, Value>, source: &Map<String, Value>, keep: &[&str]) {
    target.retain(|k, _| keep.contains(&k.as_str()) || source.contains_key(k));
    for (k, v) in source.iter().filter(|(k, _)| !keep.contains(&k.as_str())) {
        match target.get_mut(k) {
            Some(t) if t == v => {}
            Some(t) => *t = v.clone(),
            None => {
                target.insert(k.clone(), v.clone());
            }
        }
    }
}

/// Whether anything outside `metadata` (and outside `status`, when `ignore_status`) differs:
/// the rule for bumping `metadata.generation`.
pub fn spec_changed(new: &Value, old: &Value, ignore_status: bool) -> bool {
    let (Some(n), Some(o)) = (new.as_object(), old.as_object()) else {
        return new != old;
    };
    let relevant = |k: &String| k != "metadata" && !(ignore_status && k == "status");
    let n_keys = n.keys().filter(|k| relevant(k));
    let o_keys = o.keys().filter(|k| relevant(k));
    n_keys.clone().count() != o_keys.count() || n_keys.into_iter().any(|k| n.get(k) != o.get(k))
}

/// Bumps `metadata.generation` when [`spec_changed`].
pub fn bump_generation(obj: &mut Value, old: &Value, ignore_status: bool) {
    if spec_changed(obj, old, ignore_status) {
        let next = old["metadata"]["generation"].as_i64().unwrap_or(0) + 1;
        object_meta::meta_mut(obj).insert("generation".into(), next.into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn keeping_only_status_in_place_equals_the_copy() {
        let old = json!({"apiVersion": "v1", "kind": "K", "spec": {"a": 1}, "status": {"s": 1},
            "metadata": {"name": "a", "labels": {"x": "1"}, "managedFields": [{"m": 1}]}});
        let cases = [
            json!({"apiVersion": "v1", "kind": "K", "spec": {"a": 2}, "status": {"s": 2},
                "metadata": {"name": "a", "labels": {"x": "2"}, "managedFields": [{"m": 2}]},
                "extra": 1}),
            json!({"metadata": {"name": "b", "uid": "u"}}),
            json!({"metadata": {"name": "a"}, "status": null, "spec": {"a": 1}}),
            json!({"metadata": "x", "status": {"s": 3}}),
            json!([1]),
        ];
        for new in cases {
            let (mut in_place, mut copied) = (new.clone(), new.clone());
            keep_only_status(&mut in_place, &old);
            keep_only_status_by_copy(&mut copied, &old);
            assert_eq!(in_place, copied, "{new}");
        }
    }

    #[test]
    fn generation_rules() {
        let old = json!({"metadata": {"generation": 3}, "spec": {"a": 1}, "status": {"s": 1}});
        let mut labels_only = old.clone();
        labels_only["metadata"]["labels"] = json!({"x": "y"});
        bump_generation(&mut labels_only, &old, true);
        assert_eq!(labels_only["metadata"]["generation"], 3);

        let mut status_only = old.clone();
        status_only["status"] = json!({"s": 2});
        bump_generation(&mut status_only, &old, true);
        assert_eq!(status_only["metadata"]["generation"], 3);
        let mut status_only = old.clone();
        status_only["status"] = json!({"s": 2});
        bump_generation(&mut status_only, &old, false);
        assert_eq!(status_only["metadata"]["generation"], 4);

        let mut spec = old.clone();
        spec["spec"] = json!({"a": 2});
        bump_generation(&mut spec, &old, true);
        assert_eq!(spec["metadata"]["generation"], 4);

        let mut removed = old.clone();
        removed.as_object_mut().map(|o| o.remove("spec"));
        assert!(spec_changed(&removed, &old, true));
    }
}
