//! The garbage collector: `ownerReferences` and the three propagation policies.
//!
//! - Background (the default): the owner goes at once; each dependent whose owners are all gone
//!   is deleted afterwards (and its own dependents after it).
//! - Foreground: the owner stays, with a deletionTimestamp and the `foregroundDeletion`
//!   finalizer, until every dependent with `blockOwnerDeletion: true` is gone.
//! - Orphan: the owner stays, with the `orphan` finalizer, until its dependents no longer
//!   reference it; then it goes and they remain.
//!
//! Owners are resolved as the real collector resolves them: by the reference's kind (through the
//! registry), name and the dependent's namespace, then compared by uid. References to kinds
//! kubefake does not serve are left alone (the real collector cannot resolve them either), and a
//! cluster-scoped dependent's reference to a namespaced owner is ignored.

use serde_json::Value;

use super::{edit, enqueue, release, Work};
use crate::context::Context;
use crate::registry::object_meta::{finalizers, meta_str};
use crate::registry::store::{self as rest, DeleteOptions, Propagation};
use crate::state::State;
use crate::store::{GroupResource, ObjectKey};

/// The finalizer of an owner deleted with `propagationPolicy: Foreground`.
pub const FOREGROUND_FINALIZER: &str = "foregroundDeletion";
/// The finalizer of an owner deleted with `propagationPolicy: Orphan`.
pub const ORPHAN_FINALIZER: &str = "orphan";

/// What a dependent's reference points at.
#[derive(Debug, PartialEq, Eq)]
enum OwnerState {
    /// The owner exists and is not waiting for its dependents.
    Solid,
    /// The owner exists, is being deleted in the foreground and waits for its dependents.
    WaitingForDependents,
    /// The owner does not exist (or another object now has its name).
    Dangling,
    /// Not resolvable (unserved kind, or a namespaced owner of a cluster-scoped dependent).
    Ignored,
}

fn owner_state(state: &State, dependent_ns: &str, reference: &Value) -> OwnerState {
    let api_version = reference["apiVersion"].as_str().unwrap_or("");
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let kind = reference["kind"].as_str().unwrap_or("");
    let name = reference["name"].as_str().unwrap_or("");
    let uid = reference["uid"].as_str().unwrap_or("");
    let Some(res) = state.registry().by_kind(group, version, kind) else {
        return OwnerState::Ignored;
    };
    if res.namespaced && dependent_ns.is_empty() {
        return OwnerState::Ignored;
    }
    let key = ObjectKey::new(if res.namespaced { dependent_ns } else { "" }, name);
    match state.store.snapshot().get(&res.gr, &key) {
        Some(owner) if meta_str(&owner.value(), "uid") == uid => {
            let deleting = owner.is_deleting();
            if deleting
                && finalizers(&owner.value())
                    .iter()
                    .any(|f| f == FOREGROUND_FINALIZER)
            {
                OwnerState::WaitingForDependents
            } else {
                OwnerState::Solid
            }
        }
        _ => OwnerState::Dangling,
    }
}

/// Looks at one object's owners: keeps it while any is solid (dropping references to the gone
/// ones), deletes it when they are all gone or waiting for it.
pub async fn process_dependent(state: &State, ctx: &Context, gr: &GroupResource, key: &ObjectKey) {
    let Some(obj) = state.store.snapshot().get(gr, key) else {
        return;
    };
    let Some(res) = state.registry().by_group_resource(gr) else {
        return;
    };
    let refs: Vec<Value> = obj.value()["metadata"]["ownerReferences"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let mut solid = 0;
    let mut waiting = 0;
    let mut stale_uids = Vec::new();
    for r in &refs {
        match owner_state(state, &key.namespace, r) {
            OwnerState::Solid => solid += 1,
            OwnerState::WaitingForDependents => {
                waiting += 1;
                stale_uids.push(r["uid"].as_str().unwrap_or("").to_string());
            }
            OwnerState::Dangling => stale_uids.push(r["uid"].as_str().unwrap_or("").to_string()),
            OwnerState::Ignored => {}
        }
    }
    if stale_uids.is_empty() {
        return;
    }
    if solid > 0 {
        // Another owner still holds it: only the references to gone owners go.
        let remove = |obj: &mut Value| {
            if let Some(list) = obj["metadata"]["ownerReferences"].as_array_mut() {
                list.retain(|r| !stale_uids.iter().any(|u| r["uid"] == u.as_str()));
            }
        };
        let why = "removing dangling owner references";
        edit(state, ctx, &res, key, why, &remove).await;
        return;
    }
    if obj.is_deleting() {
        return;
    }
    let tree = obj.value();
    let own_uid = meta_str(&tree, "uid");
    let has_dependents = !state.store.snapshot().dependents_of(own_uid).is_empty();
    let existing = finalizers(&obj.value());
    let propagation = if waiting > 0 && has_dependents {
        Propagation::Foreground
    } else if existing.iter().any(|f| f == ORPHAN_FINALIZER) {
        Propagation::Orphan
    } else if existing.iter().any(|f| f == FOREGROUND_FINALIZER) {
        Propagation::Foreground
    } else {
        Propagation::Background
    };
    let opts = DeleteOptions {
        propagation: Some(propagation),
        uid: Some(own_uid.to_string()),
        ..Default::default()
    };
    match rest::delete(state, ctx, &res, &key.namespace, &key.name, &opts).await {
        Ok(_) => {}
        Err(e) if e.code == 404 || e.code == 409 => {}
        Err(e) => {
            tracing::warn!(error = %e, object = %key.name, "garbage collector: deleting a dependent")
        }
    }
}

/// Looks at an owner after it changed or went: collects the dependents of a gone owner, orphans
/// or foreground-deletes the dependents of one being deleted, and releases the owner's finalizer
/// once nothing holds it any more.
pub async fn process_owner(state: &State, ctx: &Context, uid: &str) {
    let snap = state.store.snapshot();
    let dependents = snap.dependents_of(uid);
    let owner = snap
        .locate_uid(uid)
        .and_then(|(gr, key)| Some((gr.clone(), key.clone(), snap.get(&gr, &key)?)));
    drop(snap);
    let Some((gr, key, owner)) = owner else {
        // Gone: every dependent is checked (and collected when no other owner holds it).
        enqueue(
            state,
            ctx,
            dependents
                .into_iter()
                .map(|(gr, key)| Work::Dependent(gr, key))
                .collect(),
        )
        .await;
        return;
    };
    if !owner.is_deleting() {
        return;
    }
    let Some(res) = state.registry().by_group_resource(&gr) else {
        return;
    };
    let held_by = finalizers(&owner.value());
    if held_by.iter().any(|f| f == ORPHAN_FINALIZER) {
        for (dgr, dkey) in &dependents {
            let Some(dres) = state.registry().by_group_resource(dgr) else {
                continue;
            };
            let unlink = |obj: &mut Value| {
                if let Some(list) = obj["metadata"]["ownerReferences"].as_array_mut() {
                    list.retain(|r| r["uid"] != uid);
                }
            };
            edit(state, ctx, &dres, dkey, "orphaning a dependent", &unlink).await;
        }
        release(state, ctx, &res, &key, ORPHAN_FINALIZER).await;
        return;
    }
    if held_by.iter().any(|f| f == FOREGROUND_FINALIZER) {
        enqueue(
            state,
            ctx,
            dependents
                .iter()
                .cloned()
                .map(|(gr, key)| Work::Dependent(gr, key))
                .collect(),
        )
        .await;
        // Still blocked while a dependent that blocks owner deletion exists.
        let snap = state.store.snapshot();
        let blocked = dependents.iter().any(|(dgr, dkey)| {
            snap.get(dgr, dkey).is_some_and(|d| {
                d.value()["metadata"]["ownerReferences"]
                    .as_array()
                    .is_some_and(|refs| {
                        refs.iter()
                            .any(|r| r["uid"] == uid && r["blockOwnerDeletion"] == true)
                    })
            })
        });
        if !blocked {
            release(state, ctx, &res, &key, FOREGROUND_FINALIZER).await;
        }
    }
}
