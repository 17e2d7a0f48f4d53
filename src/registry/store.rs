//! The generic registry store: one implementation of every verb for every resource, as
//! `genericregistry.Store` is in the apiserver. Resources differ only by their
//! [`Strategy`], their subresources' strategies and their
//! [`ApiResource`] description; this module never asks which kind it holds.
//!
//! Every mutation has the same shape. Outside any lock, and free to await (admission webhooks,
//! conversion): read the current object from a lock-free snapshot and convert it to the
//! request's version; build the new object; run mutating admission, the strategy's preparation
//! and validation, validating admission; convert the result to the storage version. Then commit
//! in [`crate::store::Store::write`] with a compare-and-swap on the resourceVersion the object
//! was read at, retrying from the top when the client did not pin a resourceVersion (the
//! optimistic loop of the apiserver's `GuaranteedUpdate`). After a commit, the kind's hooks and
//! the garbage collector queue controller work on the request's context, which runs before the
//! response ([`crate::controllers`]).

use std::borrow::Cow;
use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::{json, Value};

use crate::admission::{Attributes, Operation};
use crate::apply::versions::{single_version, Versions};
use crate::context::Context;
use crate::controllers;
use crate::error::{field, ApiError, StatusCause};
use crate::registry::field_managers;
use crate::registry::object_meta::{self, finalizers, meta_mut, meta_str};
use crate::registry::resource::{ApiResource, Subresource, SubresourceKind};
use crate::registry::strategy::Strategy;
use crate::state::State;
use crate::store::{ObjectKey, StoredObject, Txn};

/// Which part of an object a write targets.
#[derive(Clone)]
pub enum Target {
    /// The main resource.
    Main,
    /// A part subresource (`status`, `finalize`), written with its own strategy.
    Part(Arc<Subresource>),
}

impl Target {
    /// The subresource's name ("" for the main resource), as `managedFields` records it.
    pub fn name(&self) -> &str {
        match self {
            Target::Main => "",
            Target::Part(sub) => &sub.name,
        }
    }

    /// Whether the write targets the main resource.
    pub fn is_main(&self) -> bool {
        matches!(self, Target::Main)
    }

    /// Whether the write's endpoint records its managedFields itself: `/scale` maps the
    /// Scale's entries onto the parent's ([`crate::apply::scale`]).
    fn records_own_managed_fields(&self) -> bool {
        matches!(self, Target::Part(sub) if matches!(sub.kind, SubresourceKind::Scale(_)))
    }

    /// The subresource admission is told of. A `/scale` write is admitted as a write of the
    /// object itself, as before `/scale` recorded its own managedFields: admission would
    /// otherwise see subresource `scale` with the parent object, where the apiserver shows
    /// plugins and webhooks an `autoscaling/v1 Scale`.
    fn admission_name(&self) -> &str {
        if self.records_own_managed_fields() {
            ""
        } else {
            self.name()
        }
    }

    /// The strategy that decides what the write may change and validates it.
    fn strategy<'a>(&'a self, res: &'a ApiResource) -> &'a dyn Strategy {
        match self {
            Target::Part(sub) => match &sub.kind {
                SubresourceKind::Part(strategy) => strategy.as_ref(),
                SubresourceKind::Scale(_) | SubresourceKind::Action(_) => res.strategy.as_ref(),
            },
            Target::Main => res.strategy.as_ref(),
        }
    }
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

/// How an update's new object is produced from the current one (in the request's version).
pub enum UpdateSource<'a> {
    /// A full object from PUT.
    Replace(Value),
    /// A patch function applied to the current object (PATCH); retried on conflicts.
    Patch(&'a (dyn Fn(&Value) -> Result<Value, ApiError> + Sync)),
    /// [`UpdateSource::Patch`] that may await (server-side apply converting to the versions of
    /// other managers); the future owns what it needs of the current object.
    PatchAsync(&'a (dyn Fn(&Value) -> BoxFuture<'a, Result<Value, ApiError>> + Sync)),
}

fn key_for(res: &ApiResource, namespace: &str, name: &str) -> ObjectKey {
    ObjectKey::new(if res.namespaced { namespace } else { "" }, name)
}

#[allow(clippy::too_many_arguments)]
fn attributes<'a>(
    state: &'a State,
    ctx: &'a Context,
    res: &'a ApiResource,
    target: &'a Target,
    operation: Operation,
    namespace: &'a str,
    name: &'a str,
    old_object: Option<&'a Value>,
) -> Attributes<'a> {
    Attributes {
        store: &state.store,
        ctx,
        resource: res,
        request_resource: res,
        subresource: target.admission_name(),
        operation,
        namespace: if res.namespaced { namespace } else { "" },
        name,
        old_object,
        registry: state.registry(),
        authorization: state.options.authorization,
    }
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

fn invalid(res: &ApiResource, name: &str, errs: Vec<StatusCause>) -> ApiError {
    ApiError::invalid(&res.group, &res.kind, name, errs)
}

/// The 403 for a create while the CRD is being deleted (apiextensions' `forbidCreateAdmission`,
/// which runs as the first admission step).
pub fn terminating_create_error(res: &ApiResource, name: &str) -> ApiError {
    ApiError::forbidden(
        &res.group,
        &res.plural,
        name,
        "create not allowed while custom resource definition is terminating",
    )
}

/// `POST` a new object. `obj` has been decoded and its apiVersion/kind checked; it is in the
/// version the request names.
pub async fn create(
    state: &State,
    ctx: &Context,
    res: &ApiResource,
    namespace: &str,
    obj: Value,
) -> Result<Arc<StoredObject>, ApiError> {
    // Storage refuses it, after admission and validation (the strategies clear it before).
    let versioned = !meta_str(&obj, "resourceVersion").is_empty();
    let obj = prepare_create(state, ctx, res, namespace, obj).await?;
    let mut obj = res.codec.to_storage(obj).await?;
    let generated =
        !meta_str(&obj, "generateName").is_empty() && obj["metadata"].get("name").is_some();
    // A generated name that collides is generated again, as the apiserver retries.
    let mut attempts = 0;
    loop {
        match commit_create(state, ctx, res, namespace, &mut obj, versioned) {
            Ok(Some(stored)) => {
                controllers::after_commit(state, ctx, res, &stored).await;
                return Ok(latest(state, res, stored));
            }
            Ok(None) => return Ok(Arc::new(dry_run_object(state, obj, 0))),
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

/// Everything a create does before its commit: the body checked against the request, decoded
/// (pruned and defaulted), admitted, prepared and validated.
async fn prepare_create(
    state: &State,
    ctx: &Context,
    res: &ApiResource,
    namespace: &str,
    mut obj: Value,
) -> Result<Value, ApiError> {
    if res.terminating {
        return Err(terminating_create_error(res, meta_str(&obj, "name")));
    }
    if res.namespaced {
        let body_ns = meta_str(&obj, "namespace");
        if !body_ns.is_empty() && body_ns != namespace {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
    }
    let strategy = &res.strategy;
    strategy.decode(&mut obj, ctx)?;
    let name = meta_str(&obj, "name").to_string();
    let target = Target::Main;
    let attrs = attributes(
        state,
        ctx,
        res,
        &target,
        Operation::Create,
        namespace,
        &name,
        None,
    );
    state.admission.admit(&attrs, &mut obj).await?;
    let ns = if res.namespaced { namespace } else { "" };
    object_meta::prepare_for_create(&mut obj, ns, strategy.as_ref());
    strategy.prepare_for_create(&mut obj);
    if let Some(manager) = &ctx.field_manager {
        crate::apply::versions::single_version(&res.api_version(), |versions| {
            crate::apply::record_update(
                None,
                &mut obj,
                manager,
                "",
                versions,
                res.schema.shape(),
                &object_meta::now_rfc3339(),
            )
        });
        if res.subresource("status").is_some() {
            crate::apply::disown(&mut obj, "status");
        }
    }
    let mut errs = object_meta::validate_create(&obj, strategy.name_rule());
    errs.extend(strategy.validate(&obj));
    let name = meta_str(&obj, "name").to_string();
    if !errs.is_empty() {
        return Err(invalid(res, &name, errs));
    }
    for w in strategy.warnings_on_create(&obj) {
        ctx.warn(w);
    }
    let attrs = attributes(
        state,
        ctx,
        res,
        &target,
        Operation::Create,
        namespace,
        &name,
        None,
    );
    state.admission.validate(&attrs, Some(&obj)).await?;
    Ok(obj)
}

/// Commits a create: `None` for a dry run that would have succeeded. The kind's allocations
/// are made on `obj` inside the write.
fn commit_create(
    state: &State,
    ctx: &Context,
    res: &ApiResource,
    namespace: &str,
    obj: &mut Value,
    versioned: bool,
) -> Result<Option<Arc<StoredObject>>, ApiError> {
    let name = meta_str(obj, "name").to_string();
    let key = key_for(res, namespace, &name);
    let target = Target::Main;
    let attrs = attributes(
        state,
        ctx,
        res,
        &target,
        Operation::Create,
        namespace,
        &name,
        None,
    );
    state.store.write(|txn| {
        state.admission.check_at_commit(&attrs, txn.view())?;
        // Storage's own check, before its existence check; a dry run never reaches storage.
        if versioned && !ctx.dry_run {
            let mut err = ApiError::internal("");
            err.reason = "".into();
            err.message = "resourceVersion should not be set on objects to be created".into();
            return Err(err);
        }
        if let Some(existing) = txn.view().get(&res.gr, &key) {
            let mut err = ApiError::already_exists(&res.group, &res.plural, &name);
            if existing.is_deleting() {
                err.message = format!("object is being deleted: {}", err.message);
            }
            return Err(err);
        }
        res.strategy.allocate(txn.view(), obj, None, ctx.dry_run)?;
        if ctx.dry_run {
            return Ok(None);
        }
        // The object moves into the store: nothing is copied inside the write section. (The
        // retried generated-name collision returns above, with `obj` still whole.)
        txn.put(&res.gr, key.clone(), std::mem::take(obj)).map(Some)
    })
}

/// The response of a dry run: what would have been stored, at `rv` (none for a create, which
/// would only get one from storage).
fn dry_run_object(state: &State, mut obj: Value, rv: u64) -> StoredObject {
    if rv == 0 {
        meta_mut(&mut obj).remove("resourceVersion");
    } else {
        meta_mut(&mut obj).insert("resourceVersion".into(), json!(rv.to_string()));
    }
    let json = bytes::Bytes::from(state.store.encode(&obj));
    StoredObject::from_parts(obj, json, rv)
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
    let key = key_for(res, namespace, name);
    // The handler checks a PUT body against the URL before it looks for the object.
    if let UpdateSource::Replace(body) = &source {
        check_in_request(res, namespace, name, body)?;
    }
    let retry_on_conflict = !matches!(source, UpdateSource::Replace(_));
    let mut source = source;
    loop {
        let old = get(state, res, namespace, name)?;
        let old_view = res.codec.view(&old).await?;
        let obj = match &mut source {
            // Taken, not copied: a PUT is never retried.
            UpdateSource::Replace(body) => std::mem::take(body),
            UpdateSource::Patch(f) => f(&old_view)?,
            UpdateSource::PatchAsync(f) => f(&old_view).await?,
        };
        check_resource_version(res, name, &obj, old.rv, retry_on_conflict)?;
        let obj = prepare_update(state, ctx, res, namespace, name, &target, obj, &old_view).await?;
        let mut obj = res.codec.to_storage(obj).await?;
        // A write that changes nothing is not a write: no new resourceVersion, no event.
        meta_mut(&mut obj).insert("resourceVersion".into(), json!(old.rv.to_string()));
        if obj == old.value() {
            return Ok(old);
        }
        if ctx.dry_run {
            let mut obj = obj;
            let view = state.store.snapshot();
            res.strategy
                .allocate(&view, &mut obj, Some(&old.value()), true)?;
            return Ok(Arc::new(dry_run_object(state, obj, old.rv)));
        }
        // `ShouldDeleteDuringUpdate`: no finalizers left and no grace period running.
        let grace_left = obj["metadata"]["deletionGracePeriodSeconds"]
            .as_i64()
            .unwrap_or(0)
            > 0;
        let finished = is_deleting(&obj) && !has_finalizers(res, &obj) && !grace_left;
        let committed = state.store.write(|txn| {
            if !unchanged_since(txn, res, &key, old.rv)? {
                return Ok(None);
            }
            if finished {
                txn.remove(&res.gr, &key).map(|o| o.map(|o| (o, true)))
            } else {
                let mut obj = obj;
                res.strategy
                    .allocate(txn.view(), &mut obj, Some(&old.value()), false)?;
                txn.put(&res.gr, key.clone(), obj).map(|o| Some((o, false)))
            }
        })?;
        match committed {
            Some((stored, true)) => {
                controllers::after_remove(state, ctx, res, &stored).await;
                return Ok(stored);
            }
            Some((stored, false)) => {
                controllers::after_commit(state, ctx, res, &stored).await;
                return Ok(latest(state, res, stored));
            }
            None if retry_on_conflict => continue,
            None => return Err(conflict(res, name)),
        }
    }
}

/// [`crate::apply::record_update`] of a non-apply write by `manager`: in place when every
/// manager is in the request's version, else with the other versions answered.
async fn record_update(
    state: &State,
    res: &ApiResource,
    target: &Target,
    manager: &str,
    old: &Value,
    mut obj: Value,
) -> Result<Value, ApiError> {
    let api_version = res.api_version();
    let schema = res.schema.shape();
    let now = object_meta::now_rfc3339();
    let record = |versions: &Versions<'_>, obj: &mut Value| {
        crate::apply::record_update(
            Some(old),
            obj,
            manager,
            target.name(),
            versions,
            schema,
            &now,
        )
    };
    if !field_managers::names_other_versions(&[Some(old), Some(&obj)], &api_version) {
        single_version(&api_version, |versions| record(versions, &mut obj));
        return Ok(obj);
    }
    field_managers::with_versions(state, res, |versions| {
        let mut out = obj.clone();
        record(versions, &mut out);
        out
    })
    .await
}

/// The compare of the compare-and-swap: whether the object is still at `rv` (404 when it went).
fn unchanged_since(
    txn: &Txn,
    res: &ApiResource,
    key: &ObjectKey,
    rv: u64,
) -> Result<bool, ApiError> {
    match txn.view().get(&res.gr, key) {
        Some(cur) => Ok(cur.rv == rv),
        None => Err(ApiError::not_found(&res.group, &res.plural, &key.name)),
    }
}

fn conflict(res: &ApiResource, name: &str) -> ApiError {
    ApiError::conflict(&res.group, &res.plural, name, ApiError::OBJECT_MODIFIED)
}

/// The optimistic-concurrency precondition of an update: the body's resourceVersion, when
/// given, must be the stored one; a PUT without one is refused unless the kind allows
/// unconditional updates.
fn check_resource_version(
    res: &ApiResource,
    name: &str,
    obj: &Value,
    current: u64,
    is_patch: bool,
) -> Result<(), ApiError> {
    let body_rv = meta_str(obj, "resourceVersion");
    if body_rv.is_empty() {
        if is_patch || res.strategy.allow_unconditional_update() {
            return Ok(());
        }
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
    match body_rv.parse::<u64>() {
        Ok(rv) if rv == current => Ok(()),
        _ => Err(conflict(res, name)),
    }
}

/// Everything an update does to the new object before its commit: placed in the request,
/// decoded, admitted, prepared and validated against the stored object (`old`, in the
/// request's version).
#[allow(clippy::too_many_arguments)]
async fn prepare_update(
    state: &State,
    ctx: &Context,
    res: &ApiResource,
    namespace: &str,
    name: &str,
    target: &Target,
    mut obj: Value,
    old: &Value,
) -> Result<Value, ApiError> {
    place_in_request(res, namespace, name, &mut obj)?;
    res.strategy.decode_update(&mut obj, old, ctx)?;
    let attrs = attributes(
        state,
        ctx,
        res,
        target,
        Operation::Update,
        namespace,
        name,
        Some(old),
    );
    state.admission.admit(&attrs, &mut obj).await?;
    object_meta::prepare_for_update(&mut obj, old);
    let strategy = target.strategy(res);
    strategy.prepare_for_update(&mut obj, old);
    match &ctx.field_manager {
        Some(manager) if !target.records_own_managed_fields() => {
            obj = record_update(state, res, target, manager, old, obj).await?;
        }
        _ => {}
    }
    let mut errs = object_meta::validate_update(&obj, old);
    errs.extend(validate_finalizer_update(&obj, old));
    errs.extend(strategy.validate_update(&obj, old));
    if !errs.is_empty() {
        return Err(invalid(res, name, errs));
    }
    for w in strategy.warnings_on_update(&obj, old) {
        ctx.warn(w);
    }
    state.admission.validate(&attrs, Some(&obj)).await?;
    Ok(obj)
}

/// Checks an update body's name and namespace against the URL (`checkName` in the apiserver's
/// handlers) and fills them in when the body leaves them empty.
fn place_in_request(
    res: &ApiResource,
    namespace: &str,
    name: &str,
    obj: &mut Value,
) -> Result<(), ApiError> {
    check_in_request(res, namespace, name, obj)?;
    if meta_str(obj, "name").is_empty() {
        meta_mut(obj).insert("name".into(), json!(name));
    }
    if res.namespaced {
        meta_mut(obj).insert("namespace".into(), json!(namespace));
    } else {
        meta_mut(obj).remove("namespace");
    }
    Ok(())
}

/// The checks of [`place_in_request`], without changing the object.
fn check_in_request(
    res: &ApiResource,
    namespace: &str,
    name: &str,
    obj: &Value,
) -> Result<(), ApiError> {
    let obj_name = meta_str(obj, "name");
    if !obj_name.is_empty() && obj_name != name {
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
    let target = Target::Main;
    let defaulted;
    let opts = match res.strategy.default_propagation() {
        Some((propagation, warning)) if opts.propagation.is_none() => {
            ctx.warn(warning);
            defaulted = DeleteOptions {
                propagation: Some(propagation),
                ..opts.clone()
            };
            &defaulted
        }
        _ => opts,
    };
    loop {
        let old = get(state, res, namespace, name)?;
        let (uid, rv) = (opts.uid.as_deref(), opts.resource_version.as_deref());
        check_preconditions(&res.group, &res.kind, name, &old.value(), uid, rv)?;
        let old_view = res.codec.view(&old).await?;
        let attrs = attributes(
            state,
            ctx,
            res,
            &target,
            Operation::Delete,
            namespace,
            name,
            Some(&old_view),
        );
        state.admission.admit_delete(&attrs).await?;
        state.admission.validate(&attrs, None).await?;
        // A terminating object stays until its finalizers and its grace period are done; a
        // DELETE with no grace period left (a kubelet's) ends the latter.
        let ends_grace = opts.grace_period_seconds == Some(0) && !has_finalizers(res, &old.value());
        if is_deleting(&old.value()) && !ends_grace {
            return Ok(Deleted::Pending(old));
        }
        let grace = match state.options.simulation {
            Some(_) if !is_deleting(&old.value()) => res
                .strategy
                .graceful_delete(&old.value(), opts.grace_period_seconds),
            _ => None,
        };
        let old_value = old.value();
        let (obj, graceful) = prepare_delete(res, &old_value, opts, grace);
        if ctx.dry_run {
            let out = Arc::new(dry_run_object(state, obj.into_owned(), old.rv));
            return Ok(if graceful {
                Deleted::Pending(out)
            } else {
                Deleted::Gone(out)
            });
        }
        let committed = state.store.write(|txn| {
            if !unchanged_since(txn, res, &key, old.rv)? {
                return Ok(None);
            }
            if graceful {
                txn.put(&res.gr, key.clone(), obj.as_ref().clone())
                    .map(Some)
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

/// `DeleteOptions.preconditions` (`uid`, `resourceVersion`) against the stored object, as the
/// apiserver's `BeforeDelete` checks them: a 409 naming the object by kind
/// (`Widget.example.com "a"`). Evictions check theirs the same way.
pub(crate) fn check_preconditions(
    group: &str,
    kind: &str,
    name: &str,
    old: &Value,
    uid: Option<&str>,
    resource_version: Option<&str>,
) -> Result<(), ApiError> {
    let checks = [
        (
            "UID",
            "uid",
            uid,
            "The object might have been deleted and then recreated",
        ),
        (
            "ResourceVersion",
            "resourceVersion",
            resource_version,
            "The object might have been modified",
        ),
    ];
    for (label, field, wanted, why) in checks {
        let actual = meta_str(old, field);
        if let Some(wanted) = wanted.filter(|w| *w != actual) {
            return Err(ApiError::conflict(
                group,
                kind,
                name,
                &format!(
                    "the {label} in the precondition ({wanted}) does not match the {label} in record ({actual}). {why}"
                ),
            ));
        }
    }
    Ok(())
}

/// The object a delete stores, and whether it stays (waiting for finalizers) rather than going
/// at once. An object that goes unchanged, the usual delete, is borrowed, not copied.
fn prepare_delete<'a>(
    res: &ApiResource,
    old: &'a Value,
    opts: &DeleteOptions,
    grace: Option<i64>,
) -> (Cow<'a, Value>, bool) {
    let mut obj = match res.strategy.prepare_for_delete(old) {
        Some(prepared) => Cow::Owned(prepared),
        None => Cow::Borrowed(old),
    };
    if let Some(finalizer) = opts.propagation.and_then(Propagation::finalizer) {
        let mut list = finalizers(&obj);
        if !list.iter().any(|f| f == finalizer) {
            list.push(finalizer.to_string());
            meta_mut(obj.to_mut()).insert("finalizers".into(), json!(list));
        }
    }
    let grace = grace.filter(|g| *g > 0);
    let graceful = has_finalizers(res, &obj) || grace.is_some();
    if graceful {
        // A grace period puts the deletion that far ahead; finalizers alone do not.
        let seconds = grace.unwrap_or(0);
        let now = chrono::Utc::now();
        let at = chrono::TimeDelta::try_seconds(grace.unwrap_or(0))
            .and_then(|d| now.checked_add_signed(d))
            .unwrap_or(now);
        let meta = meta_mut(obj.to_mut());
        // Setting deletionTimestamp bumps a tracked generation (`BeforeDelete`,
        // `markAsDeleting`), so controllers comparing it with observedGeneration notice.
        if !meta.contains_key("deletionTimestamp") {
            if let Some(g) = meta
                .get("generation")
                .and_then(Value::as_i64)
                .filter(|g| *g > 0)
            {
                meta.insert("generation".into(), json!(g.saturating_add(1)));
            }
        }
        meta.insert(
            "deletionTimestamp".into(),
            json!(at.format("%Y-%m-%dT%H:%M:%SZ").to_string()),
        );
        meta.insert("deletionGracePeriodSeconds".into(), json!(seconds));
    }
    (obj, graceful)
}

/// The object's state after the controllers reacted to a write (a CRD they established, say), or
/// the written state when they removed it.
fn latest(state: &State, res: &ApiResource, written: Arc<StoredObject>) -> Arc<StoredObject> {
    // A stored state knows its key and uid: no need to look into it.
    let now = match written.key() {
        Some(key) => state.store.snapshot().get(&res.gr, key),
        None => {
            let tree = written.value();
            let ns = if res.namespaced {
                meta_str(&tree, "namespace")
            } else {
                ""
            };
            let key = ObjectKey::new(ns, meta_str(&tree, "name"));
            state.store.snapshot().get(&res.gr, &key)
        }
    };
    match now {
        Some(now) if now.uid() == written.uid() => now,
        _ => written,
    }
}

/// The `Status` a DELETE returns when the object is gone at once.
pub fn deleted_status(res: &ApiResource, obj: &StoredObject) -> Value {
    let name = match obj.key() {
        Some(key) => key.name.clone(),
        None => meta_str(&obj.value(), "name").to_string(),
    };
    let mut details = json!({"name": name});
    if !res.group.is_empty() {
        details["group"] = json!(res.group);
    }
    details["kind"] = json!(res.plural);
    details["uid"] = json!(obj.uid().unwrap_or(""));
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
