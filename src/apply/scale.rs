//! The managedFields of the `/scale` subresource (the apiserver's `ScaleHandler`): a Scale has
//! no managedFields of its own, so a write through `/scale` sees the parent's entries that own
//! the replicas field, mapped onto the Scale's `spec.replicas` in `autoscaling/v1`
//! ([`to_subresource`]); the field manager then records the write on the Scale, and the result
//! is mapped back onto the parent's entries ([`to_parent`]).
//!
//! Mapping back keeps the apiserver's arithmetic exactly, quirks included: an `Update` entry's
//! identity includes its apiVersion, which is the Scale's on one side and the parent's on the
//! other, so an updater never matches itself across the two; its replicas are taken from its
//! parent entry and come back as an entry of their own, and entries new to the parent carry no
//! `time` (the apiserver looks their time up among the parent's entries).

use serde_json::Value;

use super::fieldpath::PathElement;
use super::{write_entries, Entry, FieldSet, Managed};

/// The Scale's version, which the mapped entries name.
const SCALE_VERSION: &str = "autoscaling/v1";

/// Where a kind keeps its replicas, by the version a manager wrote through.
#[derive(Debug, Clone, Copy)]
pub struct ReplicasPath<'a> {
    /// The request's version of the parent (`apps/v1`); new owners are recorded in it.
    pub version: &'a str,
    /// The replicas field in that version, as a CRD's `specReplicasPath` spells it
    /// (`.spec.replicas`).
    pub path: &'a str,
    /// Whether every version of the kind keeps the replicas at `path` (the built-in kinds).
    /// Otherwise only `version` is known to, and entries of other versions are left as they
    /// are (the apiserver maps a custom resource's other versions by their own paths).
    pub every_version: bool,
}

impl ReplicasPath<'_> {
    fn elements(&self) -> Vec<PathElement> {
        fields(self.path.split('.').filter(|s| !s.is_empty()))
    }

    /// The replicas path of an entry's version, if known.
    fn of(&self, version: &str) -> Option<Vec<PathElement>> {
        (self.every_version || version == self.version).then(|| self.elements())
    }
}

fn fields<'s>(names: impl Iterator<Item = &'s str>) -> Vec<PathElement> {
    names.map(|n| PathElement::Field(n.into())).collect()
}

fn single(path: &[PathElement]) -> FieldSet {
    let mut set = FieldSet::default();
    set.insert(path);
    set
}

fn replicas_in_scale() -> Vec<PathElement> {
    fields(["spec", "replicas"].into_iter())
}

/// Writes on `scale` the managedFields a write through `/scale` starts from: the parent's
/// entries owning the replicas, each owning the Scale's `spec.replicas` in `autoscaling/v1`.
/// Entries that do not decode are ignored, as everywhere in this module.
pub fn to_subresource(parent: &Value, replicas: &ReplicasPath<'_>, scale: &mut Value) {
    let managed = Managed::decode_obj(parent).unwrap_or_default();
    let mut out = Managed::default();
    for (id, entry) in managed.fields {
        let Some(path) = replicas.of(&entry.api_version) else {
            continue;
        };
        if !entry.set.has(&path) {
            continue;
        }
        if let Some(time) = managed.times.get(&id) {
            out.times.insert(id.clone(), time.clone());
        }
        let mapped = Entry {
            set: single(&replicas_in_scale()),
            api_version: SCALE_VERSION.into(),
            applied: entry.applied,
        };
        out.fields.insert(id, mapped);
    }
    write_entries(scale, out.encode());
}

/// The parent's managedFields after a write through `/scale` (written on `updated`, which
/// keeps its own when the parent's do not decode): `scale`'s
/// entries, as the field manager left them, merged into the entries of `parent` (the object
/// before the write). A parent entry owning the replicas loses them unless its identity is
/// among the Scale's; a Scale entry still owning `spec.replicas` that the parent lacks becomes
/// one owning the parent's replicas in the request's version.
pub fn to_parent(parent: &Value, scale: &Value, replicas: &ReplicasPath<'_>, updated: &mut Value) {
    // Entries that do not decode are left as they are (nothing maps them).
    let Ok(parent_managed) = Managed::decode_obj(parent) else {
        return;
    };
    let mut scale_fields = Managed::decode_obj(scale).unwrap_or_default().fields;
    let mut out = Managed::default();
    for (id, entry) in parent_managed.fields {
        let time = parent_managed.times.get(&id).cloned();
        let kept = match replicas.of(&entry.api_version) {
            Some(path) if entry.set.has(&path) && scale_fields.remove(&id).is_none() => {
                let set = entry.set.difference(&single(&path));
                (!set.is_empty()).then_some(Entry { set, ..entry })
            }
            _ => Some(entry),
        };
        if let Some(entry) = kept {
            if let Some(time) = time {
                out.times.insert(id.clone(), time);
            }
            out.fields.insert(id, entry);
        }
    }
    let path = replicas.elements();
    for (id, entry) in scale_fields {
        if !entry.set.has(&replicas_in_scale()) {
            continue;
        }
        if let Some(time) = parent_managed.times.get(&id) {
            out.times.insert(id.clone(), time.clone());
        }
        let mapped = Entry {
            set: single(&path),
            api_version: replicas.version.into(),
            applied: entry.applied,
        };
        out.fields.insert(id, mapped);
    }
    write_entries(updated, out.encode());
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    const DEPLOYMENT: ReplicasPath<'static> = ReplicasPath {
        version: "apps/v1",
        path: ".spec.replicas",
        every_version: true,
    };

    fn entry(manager: &str, op: &str, version: &str, sub: &str, fields: Value) -> Value {
        let mut e = json!({"manager": manager, "operation": op, "apiVersion": version,
            "fieldsType": "FieldsV1", "fieldsV1": fields});
        if !sub.is_empty() {
            e["subresource"] = json!(sub);
        }
        e
    }

    fn with_entries(entries: Vec<Value>) -> Value {
        json!({"metadata": {"managedFields": entries}})
    }

    fn entries_of(obj: &Value) -> Value {
        obj["metadata"]
            .get("managedFields")
            .cloned()
            .unwrap_or(json!([]))
    }

    fn replicas_and(other: &str) -> Value {
        json!({"f:spec": {"f:replicas": {}, other: {}}})
    }

    fn replicas() -> Value {
        json!({"f:spec": {"f:replicas": {}}})
    }

    #[test]
    fn owners_of_the_replicas_become_the_scales_owners() {
        let parent = with_entries(vec![
            entry("a", "Apply", "apps/v1", "", replicas_and("f:selector")),
            entry(
                "b",
                "Update",
                "apps/v1",
                "",
                json!({"f:spec": {"f:selector": {}}}),
            ),
            entry("c", "Update", "apps/v1", "", replicas()),
        ]);
        let mut scale = json!({"metadata": {}});
        to_subresource(&parent, &DEPLOYMENT, &mut scale);
        assert_eq!(
            entries_of(&scale),
            json!([
                entry("a", "Apply", "autoscaling/v1", "", replicas()),
                entry("c", "Update", "autoscaling/v1", "", replicas()),
            ])
        );
    }

    #[test]
    fn a_custom_resources_other_versions_are_not_mapped() {
        let cr = ReplicasPath {
            version: "x.io/v2",
            path: ".spec.size",
            every_version: false,
        };
        let size = json!({"f:spec": {"f:size": {}}});
        let parent = with_entries(vec![
            entry("a", "Update", "x.io/v1", "", size.clone()),
            entry("b", "Update", "x.io/v2", "", size),
        ]);
        let mut scale = json!({"metadata": {}});
        to_subresource(&parent, &cr, &mut scale);
        assert_eq!(
            entries_of(&scale),
            json!([entry("b", "Update", "autoscaling/v1", "", replicas())])
        );
    }

    /// The apiserver's own cases: the parent's entries, the Scale's after the write, and the
    /// parent's after mapping back.
    #[rstest]
    #[case::apply_then_update(
        vec![entry("test", "Apply", "apps/v1", "", replicas_and("f:selector"))],
        vec![entry("scale", "Update", "autoscaling/v1", "scale", replicas())],
        vec![entry("test", "Apply", "apps/v1", "", json!({"f:spec": {"f:selector": {}}})),
             entry("scale", "Update", "apps/v1", "scale", replicas())],
    )]
    #[case::apply_then_apply(
        vec![entry("test", "Apply", "apps/v1", "", replicas_and("f:selector"))],
        vec![entry("scale", "Apply", "autoscaling/v1", "scale", replicas())],
        vec![entry("scale", "Apply", "apps/v1", "scale", replicas()),
             entry("test", "Apply", "apps/v1", "", json!({"f:spec": {"f:selector": {}}}))],
    )]
    #[case::an_updater_never_matches_itself(
        vec![entry("test", "Update", "apps/v1", "", replicas_and("f:selector"))],
        vec![entry("test", "Update", "autoscaling/v1", "scale", replicas())],
        vec![entry("test", "Update", "apps/v1", "", json!({"f:spec": {"f:selector": {}}})),
             entry("test", "Update", "apps/v1", "scale", replicas())],
    )]
    #[case::an_applier_keeps_its_entry(
        vec![entry("test", "Apply", "apps/v1", "", replicas_and("f:selector"))],
        vec![entry("test", "Apply", "autoscaling/v1", "", replicas()),
             entry("test", "Apply", "autoscaling/v1", "scale", replicas())],
        vec![entry("test", "Apply", "apps/v1", "", replicas_and("f:selector")),
             entry("test", "Apply", "apps/v1", "scale", replicas())],
    )]
    #[case::nobody_owns_the_replicas_any_more(
        vec![entry("test", "Update", "apps/v1", "", replicas())],
        vec![],
        vec![],
    )]
    #[case::entries_without_the_replicas_stay(
        vec![entry("test", "Update", "apps/v1", "", json!({"f:metadata": {"f:labels": {}}}))],
        vec![],
        vec![entry("test", "Update", "apps/v1", "", json!({"f:metadata": {"f:labels": {}}}))],
    )]
    fn mapping_back(
        #[case] parent: Vec<Value>,
        #[case] scale: Vec<Value>,
        #[case] want: Vec<Value>,
    ) {
        let mut updated = json!({"metadata": {}});
        to_parent(
            &with_entries(parent),
            &with_entries(scale),
            &DEPLOYMENT,
            &mut updated,
        );
        assert_eq!(entries_of(&updated), json!(want));
    }

    #[test]
    fn times_come_from_the_parent() {
        let mut kept = entry("a", "Apply", "apps/v1", "", replicas_and("f:selector"));
        kept["time"] = json!("2026-01-01T00:00:00Z");
        let mut scaler = entry("s", "Update", "autoscaling/v1", "scale", replicas());
        scaler["time"] = json!("2026-01-02T00:00:00Z");
        let mut updated = json!({"metadata": {}});
        to_parent(
            &with_entries(vec![kept]),
            &with_entries(vec![scaler]),
            &DEPLOYMENT,
            &mut updated,
        );
        let entries = entries_of(&updated);
        assert_eq!(entries[0]["time"], "2026-01-01T00:00:00Z");
        assert_eq!(entries[1]["manager"], "s");
        assert!(entries[1].get("time").is_none(), "{entries}");
    }
}
