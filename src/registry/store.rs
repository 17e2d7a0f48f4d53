//! The generic REST storage: one implementation of every verb for every resource, as
//! `genericregistry.Store` is in the apiserver. Resources differ only by their
//! [`Strategy`](crate::registry::strategy::Strategy) and [`ApiResource`] description.
//!
//! Every mutation follows the same shape: read the current object from a lock-free snapshot,
//! prepare and validate the new one outside any lock, then commit in [`Store::write`] with an
//! optimistic-concurrency check, retrying when the client did not pin a resourceVersion (as
//! `GuaranteedUpdate` does). After a commit, [`crate::controllers::after_commit`] lets the
//! in-process controllers react.

use std::sync::Arc;

use serde_json::{json, Value};

use crate::context::Context;
use crate::controllers;
use crate::error::{field, ApiError, StatusCause};
use crate::registry::catalog::ApiResource;
use crate::registry::object_meta::{self, finalizers, meta_mut, meta_str};
use crate::state::State;
use crate::store::{GroupResource, ObjectKey, StoredObject, Txn};

/// Which part of an object a write targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The main resource.
    Main,
    /// The `/status` subresource.
    Status,
    /// The `/finalize` subresource of namespaces (only `spec.finalizers` changes).
    Finalize,
}

/// The core `namespaces` table.
pub fn namespaces_gr() -> GroupResource {
    GroupResource::new("", "namespaces")
}

/// `DeleteOptions` that change what a delete does.
#[derive(Debug, Clone, Default)]
pub struct DeleteOptions {
    /// `preconditions.uid`.
    pub uid: Option<String>,
    /// `preconditions.resourceVersion`.
    pub resource_version: Option<String>,
    /// `gracePeriodSeconds`.
    pub grace_period_seconds: Option<i64>,
    /// `propagationPolicy` (or the legacy `orphanDependents`).
    pub propagation: Option<Propagation>,
}

/// How a delete treats the objects that name the deleted one as owner.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Propagation {
    /// Delete the owner now, its dependents afterwards.
    Background,
    /// Delete the dependents first; the owner waits with the `foregroundDeletion` finalizer.
    Foreground,
    /// Keep the dependents, without the reference; the owner waits with the `orphan` finalizer.
    Orphan,
}

impl Propagation {
    /// Parses `propagationPolicy`.
    pub fn parse(s: &str) -> Option<Propagation> {
        match s {
            "Background" => Some(Propagation::Background),
            "Foreground" => Some(Propagation::Foreground),
            "Orphan" => Some(Propagation::Orphan),
            _ => None,
        }
    }

    /// The finalizer that holds the owner, if any.
    fn finalizer(self) -> Option<&'static str> {
        match self {
            Propagation::Background => None,
            Propagation::Foreground => {
                Some(crate::controllers::garbage_collector::FOREGROUND_FINALIZER)
            }
            Propagation::Orphan => Some(crate::controllers::garbage_collector::ORPHAN_FINALIZER),
        }
    }
}

/// What a DELETE produced.
pub enum Deleted {
    /// The object is gone; this was its last state.
    Gone(Arc<StoredObject>),
    /// The object is waiting for finalizers; this is its state now.
    Pending(Arc<StoredObject>),
}

fn key_for(res: &ApiResource, namespace: &str, name: &str) -> ObjectKey {
    ObjectKey::new(if res.namespaced { namespace } else { "" }, name)
}

/// `GET` one object.
pub fn get(
    state: &State,
    res: &ApiResource,
    namespace: &str,
    name: &str,
) -> Result<Arc<StoredObject>, ApiError> {
    state
        .store
        .snapshot()
        .get(&res.gr, &key_for(res, namespace, name))
        .ok_or_else(|| ApiError::not_found(&res.group, &res.plural, name))
}

/// Rejects mutations of namespaced objects in a namespace that is missing or terminating (the
/// NamespaceLifecycle admission plugin). Runs inside the write so it cannot race a delete.
fn check_namespace(
    txn: &Txn,
    res: &ApiResource,
    namespace: &str,
    name: &str,
) -> Result<(), ApiError> {
    if !res.namespaced {
        return Ok(());
    }
    let ns = txn
        .view()
        .get(&namespaces_gr(), &ObjectKey::new("", namespace))
        .ok_or_else(|| ApiError::not_found("", "namespaces", namespace))?;
    if ns.value["status"]["phase"] == "Terminating" {
        let mut err = ApiError::forbidden(
            &res.group,
            &res.plural,
            name,
            &format!("unable to create new content in namespace {namespace} because it is being terminated"),
        );
        if let Some(d) = err.details.as_mut() {
            d.causes.push(StatusCause {
                reason: "NamespaceTerminating".into(),
                message: format!("namespace {namespace} is being terminated"),
                field: "metadata.namespace".into(),
            });
        }
        return Err(err);
    }
    Ok(())
}

fn invalid(res: &ApiResource, name: &str, errs: Vec<StatusCause>) -> ApiError {
    ApiError::invalid(&res.group, &res.kind, name, errs)
}

/// The 405 for a create while the CRD is being deleted.
pub fn terminating_create_error(res: &ApiResource) -> ApiError {
    let mut err = ApiError::method_not_allowed();
    err.message = "create not allowed while custom resource definition is terminating".into();
    err.details = Some(Box::new(crate::error::StatusDetails {
        group: Some(res.group.clone()),
        kind: Some(res.plural.clone()),
        ..Default::default()
    }));
    err
}

/// `POST` a new object. `obj` has been decoded and its apiVersion/kind checked.
pub async fn create(
    state: &State,
    ctx: &Context,
    res: &ApiResource,
    namespace: &str,
    mut obj: Value,
) -> Result<Arc<StoredObject>, ApiError> {
    let dry_run = ctx.dry_run;
    if res.terminating() {
        return Err(terminating_create_error(res));
    }
    if res.namespaced {
        let body_ns = meta_str(&obj, "namespace");
        if !body_ns.is_empty() && body_ns != namespace {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
    }
    if !meta_str(&obj, "resourceVersion").is_empty() {
        let mut err = ApiError::internal("");
        err.reason = "";
        err.message = "resourceVersion should not be set on objects to be created".into();
        return Err(err);
    }
    let strategy = &res.strategy;
    strategy.decode(&mut obj, ctx)?;
    let ns = if res.namespaced { namespace } else { "" };
    object_meta::prepare_for_create(&mut obj, ns, strategy.track_generation());
    strategy.prepare_for_create(&mut obj);
    if let Some(manager) = &ctx.field_manager {
        crate::apply::record_update(
            None,
            &mut obj,
            manager,
            "",
            &res.api_version(),
            res.schema.as_ref().map(|s| s.root()),
            &object_meta::now_rfc3339(),
        );
    }
    let mut errs = object_meta::validate_create(&obj, strategy.name_rule());
    errs.extend(strategy.validate(&obj));
    let name = meta_str(&obj, "name").to_string();
    if !errs.is_empty() {
        return Err(invalid(res, &name, errs));
    }
    let generated =
        !meta_str(&obj, "generateName").is_empty() && obj["metadata"].get("name").is_some();
    // A generated name that collides is generated again, as the apiserver retries.
    let mut attempts = 0;
    loop {
        let name = meta_str(&obj, "name").to_string();
        let key = key_for(res, namespace, &name);
        let result = state.store.write(|txn| {
            check_namespace(txn, res, namespace, &name)?;
            if let Some(existing) = txn.view().get(&res.gr, &key) {
                let mut err = ApiError::already_exists(&res.group, &res.plural, &name);
                if existing.metadata().get("deletionTimestamp").is_some() {
                    err.message = format!("object is being deleted: {}", err.message);
                }
                return Err(err);
            }
            if dry_run {
                return Err(DRY_RUN_SENTINEL.clone());
            }
            txn.put(&res.gr, key.clone(), obj.clone())
        });
        match result {
            Ok(stored) => {
                controllers::after_commit(state, ctx, res, &stored).await;
                return Ok(latest(state, res, stored));
            }
            Err(e) if e.reason == DRY_RUN_SENTINEL.reason => {
                return Ok(Arc::new(dry_run_object(obj, 0)));
            }
            Err(e) if e.reason == "AlreadyExists" && generated && attempts < 7 => {
                attempts += 1;
                let prefix = meta_str(&obj, "generateName").to_string();
                meta_mut(&mut obj)
                    .insert("name".into(), json!(object_meta::generate_name(&prefix)));
            }
            Err(e) => return Err(e),
        }
    }
}

/// A marker error used to abandon a transaction after its checks passed (dry run).
static DRY_RUN_SENTINEL: std::sync::LazyLock<ApiError> = std::sync::LazyLock::new(|| {
    let mut e = ApiError::internal("dry run");
    e.reason = "kubefake.DryRun";
    e
});

/// The response of a dry run: what would have been stored, at `rv` (none for a create, which
/// would only get one from storage).
fn dry_run_object(mut obj: Value, rv: u64) -> StoredObject {
    if rv == 0 {
        meta_mut(&mut obj).remove("resourceVersion");
    } else {
        meta_mut(&mut obj).insert("resourceVersion".into(), json!(rv.to_string()));
    }
    let json = bytes::Bytes::from(serde_json::to_vec(&obj).unwrap_or_default());
    StoredObject {
        value: obj,
        json,
        rv,
    }
}

/// How an update's new object is produced from the current one.
pub enum UpdateSource<'a> {
    /// A full object from PUT.
    Replace(Value),
    /// A patch function applied to the current object (PATCH); retried on conflicts.
    Patch(&'a (dyn Fn(&Value) -> Result<Value, ApiError> + Sync)),
}

/// `PUT` or `PATCH` an object (main resource or a subresource).
pub async fn update(
    state: &State,
    ctx: &Context,
    res: &ApiResource,
    namespace: &str,
    name: &str,
    target: Target,
    source: UpdateSource<'_>,
) -> Result<Arc<StoredObject>, ApiError> {
    let dry_run = ctx.dry_run;
    let key = key_for(res, namespace, name);
    // The handler checks a PUT body against the URL before it looks for the object.
    if let UpdateSource::Replace(body) = &source {
        place_in_request(res, namespace, name, &mut body.clone())?;
    }
    loop {
        let old = state
            .store
            .snapshot()
            .get(&res.gr, &key)
            .ok_or_else(|| ApiError::not_found(&res.group, &res.plural, name))?;
        let (mut obj, retry_on_conflict) = match &source {
            UpdateSource::Replace(body) => (body.clone(), false),
            UpdateSource::Patch(f) => (f(&old.value)?, true),
        };
        let body_rv = meta_str(&obj, "resourceVersion").to_string();
        let expected_rv = if body_rv.is_empty() {
            if !retry_on_conflict && !res.strategy.allow_unconditional_update() {
                return Err(ApiError::invalid(
                    &res.group,
                    &res.plural,
                    name,
                    vec![field::invalid(
                        "metadata.resourceVersion",
                        &Value::String("0x0".into()),
                        "must be specified for an update",
                    )
                    .with_raw_value("0x0")],
                ));
            }
            old.rv
        } else {
            match body_rv.parse::<u64>() {
                Ok(rv) => rv,
                Err(_) => {
                    return Err(ApiError::conflict(
                        &res.group,
                        &res.plural,
                        name,
                        ApiError::OBJECT_MODIFIED,
                    ))
                }
            }
        };
        if expected_rv != old.rv {
            return Err(ApiError::conflict(
                &res.group,
                &res.plural,
                name,
                ApiError::OBJECT_MODIFIED,
            ));
        }
        place_in_request(res, namespace, name, &mut obj)?;
        let strategy = &res.strategy;
        strategy.decode(&mut obj, ctx)?;
        object_meta::prepare_for_update(&mut obj, &old.value);
        match target {
            Target::Main => strategy.prepare_for_update(&mut obj, &old.value),
            Target::Status => strategy.prepare_for_status_update(&mut obj, &old.value),
            Target::Finalize => {
                let finalizers = obj["spec"]["finalizers"].clone();
                let meta = obj["metadata"].clone();
                obj = old.value.clone();
                obj["spec"]["finalizers"] = finalizers;
                obj["metadata"] = meta;
            }
        }
        if let Some(manager) = &ctx.field_manager {
            let subresource = match target {
                Target::Main => "",
                Target::Status => "status",
                Target::Finalize => "finalize",
            };
            crate::apply::record_update(
                Some(&old.value),
                &mut obj,
                manager,
                subresource,
                &res.api_version(),
                res.schema.as_ref().map(|s| s.root()),
                &object_meta::now_rfc3339(),
            );
        }
        let mut errs = object_meta::validate_update(&obj, &old.value);
        errs.extend(validate_finalizer_update(&obj, &old.value));
        errs.extend(match target {
            Target::Status => strategy.validate_status_update(&obj, &old.value),
            _ => strategy.validate_update(&obj, &old.value),
        });
        if !errs.is_empty() {
            return Err(invalid(res, name, errs));
        }
        // A write that changes nothing is not a write: no new resourceVersion, no event.
        meta_mut(&mut obj).insert("resourceVersion".into(), json!(old.rv.to_string()));
        if obj == old.value {
            return Ok(old);
        }
        if dry_run {
            return Ok(Arc::new(dry_run_object(obj, old.rv)));
        }
        let finished = is_deleting(&obj) && !has_finalizers(res, &obj);
        let committed = state.store.write(|txn| {
            match txn.view().get(&res.gr, &key) {
                Some(cur) if cur.rv == old.rv => {}
                Some(_) => return Ok(None),
                None => return Err(ApiError::not_found(&res.group, &res.plural, name)),
            }
            if finished {
                txn.remove(&res.gr, &key).map(|o| o.map(|o| (o, true)))
            } else {
                txn.put(&res.gr, key.clone(), obj.clone())
                    .map(|o| Some((o, false)))
            }
        })?;
        match committed {
            Some((stored, removed)) => {
                if removed {
                    controllers::after_remove(state, ctx, res, &stored).await;
                    return Ok(stored);
                }
                controllers::after_commit(state, ctx, res, &stored).await;
                return Ok(latest(state, res, stored));
            }
            None if retry_on_conflict => continue,
            None => {
                return Err(ApiError::conflict(
                    &res.group,
                    &res.plural,
                    name,
                    ApiError::OBJECT_MODIFIED,
                ))
            }
        }
    }
}

/// Checks an update body's name and namespace against the URL (`checkName` in the apiserver's
/// handlers) and fills them in when the body leaves them empty.
fn place_in_request(
    res: &ApiResource,
    namespace: &str,
    name: &str,
    obj: &mut Value,
) -> Result<(), ApiError> {
    let obj_name = meta_str(obj, "name");
    if obj_name.is_empty() {
        meta_mut(obj).insert("name".into(), json!(name));
    } else if obj_name != name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({obj_name}) does not match the name on the URL ({name})"
        )));
    }
    if res.namespaced {
        let obj_ns = meta_str(obj, "namespace");
        if !obj_ns.is_empty() && obj_ns != namespace {
            return Err(ApiError::bad_request(format!(
            "the namespace of the object ({obj_ns}) does not match the namespace on the request ({namespace})"
        )));
        }
        meta_mut(obj).insert("namespace".into(), json!(namespace));
    } else {
        meta_mut(obj).remove("namespace");
    }

    Ok(())
}

fn is_deleting(obj: &Value) -> bool {
    obj["metadata"].get("deletionTimestamp").is_some()
}

fn has_finalizers(res: &ApiResource, obj: &Value) -> bool {
    !finalizers(obj).is_empty() || res.strategy.pending_finalizers(obj)
}

/// Once an object is being deleted, finalizers may only be removed.
fn validate_finalizer_update(obj: &Value, old: &Value) -> Vec<StatusCause> {
    if !is_deleting(old) {
        return Vec::new();
    }
    let before = finalizers(old);
    let added: Vec<String> = finalizers(obj)
        .into_iter()
        .filter(|f| !before.contains(f))
        .collect();
    if added.is_empty() {
        return Vec::new();
    }
    let quoted: Vec<String> = added.iter().map(|f| format!("{f:?}")).collect();
    vec![field::forbidden(
        "metadata.finalizers",
        &format!(
            "no new finalizers can be added if the object is being deleted, found new finalizers []string{{{}}}",
            quoted.join(", ")
        ),
    )]
}

/// `DELETE` one object.
pub async fn delete(
    state: &State,
    ctx: &Context,
    res: &ApiResource,
    namespace: &str,
    name: &str,
    opts: &DeleteOptions,
) -> Result<Deleted, ApiError> {
    let key = key_for(res, namespace, name);
    loop {
        let old = state
            .store
            .snapshot()
            .get(&res.gr, &key)
            .ok_or_else(|| ApiError::not_found(&res.group, &res.plural, name))?;
        if let Some(uid) = &opts.uid {
            let actual = meta_str(&old.value, "uid");
            if uid != actual {
                return Err(ApiError::conflict(
                    &res.group,
                    &res.plural,
                    name,
                    &format!("Precondition failed: UID in precondition: {uid}, UID in object meta: {actual}"),
                ));
            }
        }
        if let Some(rv) = &opts.resource_version {
            let actual = meta_str(&old.value, "resourceVersion");
            if rv != actual {
                return Err(ApiError::conflict(
                    &res.group,
                    &res.plural,
                    name,
                    &format!("Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {actual}"),
                ));
            }
        }
        if let Some(why) = res.strategy.forbid_delete(&old.value) {
            return Err(ApiError::forbidden(&res.group, &res.plural, name, why));
        }
        if is_deleting(&old.value) {
            return Ok(Deleted::Pending(old));
        }
        let mut obj = old.value.clone();
        res.strategy.prepare_for_delete(&mut obj);
        if let Some(finalizer) = opts.propagation.and_then(Propagation::finalizer) {
            let mut list = finalizers(&obj);
            if !list.iter().any(|f| f == finalizer) {
                list.push(finalizer.to_string());
                meta_mut(&mut obj).insert("finalizers".into(), json!(list));
            }
        }
        let graceful = has_finalizers(res, &obj);
        if graceful {
            let meta = meta_mut(&mut obj);
            meta.insert(
                "deletionTimestamp".into(),
                json!(object_meta::now_rfc3339()),
            );
            meta.insert(
                "deletionGracePeriodSeconds".into(),
                json!(opts.grace_period_seconds.unwrap_or(0).max(0)),
            );
        }
        if ctx.dry_run {
            let out = Arc::new(dry_run_object(obj, old.rv));
            return Ok(if graceful {
                Deleted::Pending(out)
            } else {
                Deleted::Gone(out)
            });
        }
        let committed = state.store.write(|txn| {
            match txn.view().get(&res.gr, &key) {
                Some(cur) if cur.rv == old.rv => {}
                Some(_) => return Ok(None),
                None => return Err(ApiError::not_found(&res.group, &res.plural, name)),
            }
            if graceful {
                txn.put(&res.gr, key.clone(), obj.clone()).map(Some)
            } else {
                txn.remove(&res.gr, &key)
            }
        })?;
        let Some(stored) = committed else {
            continue;
        };
        if graceful {
            controllers::after_commit(state, ctx, res, &stored).await;
            return Ok(Deleted::Pending(stored));
        }
        controllers::after_remove(state, ctx, res, &stored).await;
        return Ok(Deleted::Gone(stored));
    }
}

/// The object's state after the controllers reacted to a write (a CRD they established, say), or
/// the written state when they removed it.
fn latest(state: &State, res: &ApiResource, written: Arc<StoredObject>) -> Arc<StoredObject> {
    let ns = meta_str(&written.value, "namespace");
    let key = ObjectKey::new(
        if res.namespaced { ns } else { "" },
        meta_str(&written.value, "name"),
    );
    match state.store.snapshot().get(&res.gr, &key) {
        Some(now) if meta_str(&now.value, "uid") == meta_str(&written.value, "uid") => now,
        _ => written,
    }
}

/// The `Status` a DELETE returns when the object is gone at once.
pub fn deleted_status(res: &ApiResource, obj: &StoredObject) -> Value {
    let mut details = json!({"name": meta_str(&obj.value, "name")});
    if !res.group.is_empty() {
        details["group"] = json!(res.group);
    }
    details["kind"] = json!(res.plural);
    details["uid"] = json!(meta_str(&obj.value, "uid"));
    json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details})
}

impl StatusCause {
    /// Replaces the rendered value (for Go values such as `0x0` that JSON cannot express).
    pub fn with_raw_value(mut self, raw: &str) -> Self {
        if let Some(rest) = self.message.strip_prefix("Invalid value: ") {
            if let Some((_, detail)) = rest.split_once(": ") {
                self.message = format!("Invalid value: {raw}: {detail}");
            }
        }
        self
    }
}
