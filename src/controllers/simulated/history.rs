//! ControllerRevisions, the history StatefulSets and DaemonSets keep of their pod templates:
//! each revision records a template as the patch that restores it
//! (`{"spec":{"template":{...,"$patch":"replace"}}}`), is named `<owner>-<hash>` and numbered
//! in the order templates were first seen (an old template coming back takes the next number),
//! and is controlled by its owner. The hash is FNV-32a of the recorded data and the owner's
//! collision count, written as the controllers write theirs; its value differs from a real
//! controller's (which hashes Go's encoding), what matters is that one template always gets one
//! name.

use serde_json::{json, Value};

use super::deployment::pod_template_hash;
use super::{controlled_by, owner_reference, resource, write_object};
use crate::context::Context;
use crate::registry::object_meta::meta_str;
use crate::registry::store as rest;
use crate::state::State;
use crate::store::{GroupResource, ObjectKey, Snapshot};

/// The pod label naming the revision a pod was made from (its name for StatefulSets, its hash
/// for DaemonSets).
pub const POD_REVISION_LABEL: &str = "controller-revision-hash";
/// The label StatefulSets' revisions carry their hash in.
pub const HASH_LABEL: &str = "controller.kubernetes.io/hash";

/// ControllerRevisions.
pub fn revisions() -> GroupResource {
    GroupResource::new("apps", "controllerrevisions")
}

/// The revisions an owner controls, oldest number first (`SortControllerRevisions`).
pub fn owned(snapshot: &Snapshot, namespace: &str, uid: &str) -> Vec<Value> {
    let mut out: Vec<Value> = snapshot
        .list(&revisions(), Some(namespace))
        .filter(|(_, r)| controlled_by(&r.value(), uid) && !r.is_deleting())
        .map(|(_, r)| r.value().clone())
        .collect();
    out.sort_by_key(number);
    out
}

/// A revision's number.
pub fn number(revision: &Value) -> i64 {
    revision["revision"].as_i64().unwrap_or(0)
}

/// What a revision of `template` records (`getPatch`).
pub fn data_of(template: &Value) -> Value {
    let mut recorded = template.clone();
    if !recorded.is_object() {
        recorded = json!({});
    }
    recorded["$patch"] = json!("replace");
    json!({"spec": {"template": recorded}})
}

/// The template a revision records.
pub fn template_of(revision: &Value) -> Value {
    let mut template = revision["data"]["spec"]["template"].clone();
    if let Some(t) = template.as_object_mut() {
        t.remove("$patch");
    }
    template
}

/// The hash of recorded data under a collision count (`HashControllerRevision`).
pub fn hash(data: &Value, collision_count: i64) -> String {
    pod_template_hash(&json!([data, collision_count]))
}

/// A new revision of `owner`: the data, its number, the template's labels plus the hash under
/// `hash_label`, and the owner's annotations.
pub fn new_revision(
    owner: &Value,
    template: &Value,
    number: i64,
    collision_count: i64,
    hash_label: &str,
) -> Value {
    let data = data_of(template);
    let hash = hash(&data, collision_count);
    let mut labels = template["metadata"]["labels"].clone();
    if !labels.is_object() {
        labels = json!({});
    }
    labels[hash_label] = json!(hash);
    let mut metadata = json!({"name": format!("{}-{hash}", prefix(meta_str(owner, "name"))),
        "namespace": owner["metadata"]["namespace"], "labels": labels,
        "ownerReferences": [owner_reference(owner)]});
    if owner["metadata"]["annotations"].is_object() {
        metadata["annotations"] = owner["metadata"]["annotations"].clone();
    }
    json!({"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": metadata,
        "data": data, "revision": number})
}

/// `ControllerRevisionName`'s prefix: the owner's name, at most 223 characters.
fn prefix(name: &str) -> String {
    name.chars().take(223).collect()
}

/// Creates a revision; the stored one, or the one already there under its name (a hash
/// collision when its data differs, which the caller checks).
pub async fn create(state: &State, ctx: &Context, revision: Value) -> Option<Value> {
    let res = resource(state, &revisions())?;
    let ns = meta_str(&revision, "namespace").to_string();
    let name = meta_str(&revision, "name").to_string();
    match rest::create(state, ctx, &res, &ns, revision).await {
        Ok(created) => Some(created.value().clone()),
        Err(e) if e.code == 409 => {
            let snapshot = state.store.snapshot();
            let existing = snapshot.get(&revisions(), &ObjectKey::new(&ns, &name))?;
            Some(existing.value().clone())
        }
        Err(e) => {
            tracing::warn!(error = %e, revision = %name, "creating a controller revision");
            None
        }
    }
}

/// Gives an existing revision a new number (an old template became current again).
pub async fn renumber(state: &State, ctx: &Context, revision: &Value, number: i64) -> Value {
    let key = super::key_of(revision);
    write_object(state, ctx, &revisions(), &key, &|r: &mut Value| {
        let changed = r["revision"] != number;
        r["revision"] = json!(number);
        changed
    })
    .await;
    let mut renumbered = revision.clone();
    renumbered["revision"] = json!(number);
    renumbered
}

/// Deletes revisions.
pub async fn delete_all(state: &State, ctx: &Context, names: &[Value]) {
    for revision in names {
        super::delete(state, ctx, &revisions(), &super::key_of(revision)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revisions_record_templates() {
        let owner = json!({"apiVersion": "apps/v1", "kind": "StatefulSet",
            "metadata": {"name": "web", "namespace": "ns", "uid": "s",
                "annotations": {"a": "b"}}});
        let template = json!({"metadata": {"labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
        let r = new_revision(&owner, &template, 3, 0, HASH_LABEL);
        let hash = r["metadata"]["labels"][HASH_LABEL]
            .as_str()
            .unwrap()
            .to_string();
        assert_eq!(r["metadata"]["name"], format!("web-{hash}"));
        assert_eq!(r["metadata"]["labels"]["app"], "web");
        assert_eq!(r["metadata"]["annotations"], json!({"a": "b"}));
        assert_eq!(r["metadata"]["ownerReferences"][0]["kind"], "StatefulSet");
        assert_eq!(r["revision"], 3);
        assert_eq!(r["data"]["spec"]["template"]["$patch"], "replace");
        assert_eq!(template_of(&r), template);
        // Another collision count, another name.
        let other = new_revision(&owner, &template, 3, 1, HASH_LABEL);
        assert_ne!(other["metadata"]["name"], r["metadata"]["name"]);
    }
}
