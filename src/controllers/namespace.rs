//! Namespace lifecycle (kube-controller-manager's namespace controller): once a namespace is
//! being deleted, delete everything in it, report progress in its conditions, then remove the
//! `kubernetes` finalizer so the namespace itself goes.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use crate::context::Context;
use crate::error::ApiError;
use crate::registry::apiextensions::crd::set_condition;
use crate::registry::core::namespace::namespaces_gr;
use crate::registry::core::namespace::NAMESPACE_FINALIZER;
use crate::registry::object_meta::finalizers;
use crate::registry::resource::ApiResource;
use crate::registry::store::{self as rest, DeleteOptions, Propagation};
use crate::state::State;
use crate::store::{ObjectKey, Snapshot};

/// Whether a namespace exists and is being deleted.
pub fn is_terminating(state: &State, namespace: &str) -> bool {
    state
        .store
        .snapshot()
        .get(&namespaces_gr(), &ObjectKey::new("", namespace))
        .is_some_and(|ns| ns.is_deleting())
}

/// Deletes the content of a terminating namespace and finishes it when nothing is left.
pub async fn reconcile(state: &State, ctx: &Context, name: &str) {
    if !is_terminating(state, name) {
        return;
    }
    if let Err(e) = delete_content(state, ctx, name).await {
        tracing::error!(error = %e, namespace = name, "deleting namespace content");
    }
}

/// The served namespaced resources with objects in namespace `name`, one per store table (as
/// [`crate::registry::catalog::Registry::by_group_resource`] picks it), ordered by table: only
/// those kinds are built, not every built-in one.
fn resources_in(state: &State, snap: &Snapshot, name: &str) -> Vec<Arc<ApiResource>> {
    let registry = state.registry();
    let mut resources: Vec<_> = snap
        .resources()
        .filter(|gr| snap.list(gr, Some(name)).next().is_some())
        .filter_map(|gr| registry.by_group_resource(gr))
        .filter(|r| r.namespaced)
        .collect();
    resources.sort_by(|a, b| a.gr.cmp(&b.gr));
    resources
}

async fn delete_content(state: &State, ctx: &Context, name: &str) -> Result<(), ApiError> {
    let resources = resources_in(state, &state.store.snapshot(), name);
    for res in &resources {
        let pending: Vec<ObjectKey> = state
            .store
            .snapshot()
            .list(&res.gr, Some(name))
            .filter(|(_, o)| !o.is_deleting())
            .map(|(k, _)| k.clone())
            .collect();
        // The namespace deleter deletes in the background, whatever a kind's default.
        let opts = DeleteOptions {
            propagation: Some(Propagation::Background),
            ..DeleteOptions::default()
        };
        for key in pending {
            match rest::delete(state, ctx, res, name, &key.name, &opts).await {
                Ok(_) => {}
                Err(e) if e.code == 404 => {}
                Err(e) => return Err(e),
            }
        }
    }
    // What is left waits for finalizers; the conditions say what.
    let snap = state.store.snapshot();
    let mut remaining: BTreeMap<String, usize> = BTreeMap::new();
    let mut held: BTreeMap<String, usize> = BTreeMap::new();
    for res in &resources_in(state, &snap, name) {
        for (_, obj) in snap.list(&res.gr, Some(name)) {
            *remaining
                .entry(crate::error::qualified(&res.group, &res.plural))
                .or_default() += 1;
            for f in finalizers(&obj.value()) {
                *held.entry(f).or_default() += 1;
            }
        }
    }
    drop(snap);
    let done = remaining.is_empty();
    let namespaces = state.registry().by_group_resource(&namespaces_gr());
    state.store.write(|txn| {
        let key = ObjectKey::new("", name);
        let Some(ns) = txn.view().get(&namespaces_gr(), &key) else {
            return Ok(());
        };
        let mut obj = ns.value().clone();
        set_conditions(&mut obj, &remaining, &held);
        if done {
            let spec_finalizers: Vec<Value> = obj["spec"]["finalizers"]
                .as_array()
                .map(|f| {
                    f.iter()
                        .filter(|v| *v != NAMESPACE_FINALIZER)
                        .cloned()
                        .collect()
                })
                .unwrap_or_default();
            obj["spec"]["finalizers"] = Value::Array(spec_finalizers.clone());
            if spec_finalizers.is_empty() && finalizers(&obj).is_empty() {
                txn.remove(&namespaces_gr(), &key)?;
                return Ok(());
            }
        }
        if obj != ns.value() {
            // kube-controller-manager's UpdateStatus (the finalize step only removes the
            // `spec.finalizers` entry, which a status write never owns).
            super::record_status_update(
                namespaces.as_deref(),
                super::CONTROLLER_MANAGER,
                &ns.value(),
                &mut obj,
            );
            txn.put(&namespaces_gr(), key, obj)?;
        }
        Ok(())
    })
}

/// The conditions the namespace controller reports while it deletes content.
fn set_conditions(
    ns: &mut Value,
    remaining: &BTreeMap<String, usize>,
    held: &BTreeMap<String, usize>,
) {
    set_condition(
        ns,
        "NamespaceDeletionDiscoveryFailure",
        "False",
        "ResourcesDiscovered",
        "All resources successfully discovered",
    );
    set_condition(
        ns,
        "NamespaceDeletionGroupVersionParsingFailure",
        "False",
        "ParsedGroupVersions",
        "All legacy kube types successfully parsed",
    );
    set_condition(
        ns,
        "NamespaceDeletionContentFailure",
        "False",
        "ContentDeleted",
        "All content successfully deleted, may be waiting on finalization",
    );
    if remaining.is_empty() {
        set_condition(
            ns,
            "NamespaceContentRemaining",
            "False",
            "ContentRemoved",
            "All content successfully removed",
        );
    } else {
        let parts: Vec<String> = remaining
            .iter()
            .map(|(r, n)| format!("{r} has {n} resource instances"))
            .collect();
        set_condition(
            ns,
            "NamespaceContentRemaining",
            "True",
            "SomeResourcesRemain",
            &format!("Some resources are remaining: {}", parts.join(", ")),
        );
    }
    if held.is_empty() {
        set_condition(
            ns,
            "NamespaceFinalizersRemaining",
            "False",
            "ContentHasNoFinalizers",
            "All content-preserving finalizers finished",
        );
    } else {
        let parts: Vec<String> = held
            .iter()
            .map(|(f, n)| format!("{f} in {n} resource instances"))
            .collect();
        set_condition(
            ns,
            "NamespaceFinalizersRemaining",
            "True",
            "SomeFinalizersRemain",
            &format!(
                "Some content in the namespace has finalizers remaining: {}",
                parts.join(", ")
            ),
        );
    }
}
