//! The cap on update managers (`capManagersManager`): an object written by many controllers
//! keeps at most [`MAX_UPDATE_MANAGERS`] entries of non-apply writes. Past that, after each
//! update, the oldest updaters of an apiVersion are merged into one entry of the manager
//! [`ANCIENT_CHANGES`] for that apiVersion. Appliers are never merged nor counted.
//!
//! The walk is the apiserver's, quirks included: the oldest updater of each apiVersion is only
//! remembered; the next one of that version makes the bucket (the first's fields, renamed)
//! unless a bucket of that version exists already, and joins it, the bucket taking its time.
//! Updaters are ordered by their time in whole seconds, then by their identity as
//! `BuildManagerIdentifier` writes it (JSON of manager, operation, apiVersion, subresource).

use std::collections::HashMap;

use serde_json::Value;

use super::{unix_seconds, write_entries, Entry, Id, Managed};
use crate::machinery::gofmt::go_json_string;

/// `DefaultMaxUpdateManagers`.
pub(super) const MAX_UPDATE_MANAGERS: usize = 10;

/// The manager merged updaters become (`oldUpdatesManagerName`).
pub(super) const ANCIENT_CHANGES: &str = "ancient-changes";

/// Caps the update managers of `obj`'s `metadata.managedFields` after a non-apply write. An
/// object with at most [`MAX_UPDATE_MANAGERS`] of them (nearly every one) is only counted.
pub(super) fn cap_update_managers(obj: &mut Value) {
    let updaters = obj
        .get("metadata")
        .and_then(|m| m.get("managedFields"))
        .and_then(Value::as_array)
        .map_or(0, |entries| {
            let update = |e: &&Value| e.get("operation").and_then(Value::as_str) != Some("Apply");
            entries.iter().filter(update).count()
        });
    if updaters <= MAX_UPDATE_MANAGERS {
        return;
    }
    let Ok(mut managed) = Managed::decode_obj(obj) else {
        return;
    };
    if cap(&mut managed, MAX_UPDATE_MANAGERS) {
        write_entries(obj, managed.encode());
    }
}

/// Merges the oldest updaters of `managed` until at most `max` remain (see the module
/// documentation); returns whether it merged any.
fn cap(managed: &mut Managed, max: usize) -> bool {
    let seconds = |id: &Id| managed.times.get(id).map_or(0, |t| unix_seconds(t));
    // Oldest first: by whole seconds, then by identity.
    let mut keyed: Vec<(i64, String, Id)> = managed
        .fields
        .iter()
        .filter(|(_, e)| !e.applied)
        .map(|(id, _)| (seconds(id), identifier(id), id.clone()))
        .collect();
    if keyed.len() <= max {
        return false;
    }
    keyed.sort();
    let mut first_of_version: HashMap<String, Id> = HashMap::new();
    let mut length = keyed.len();
    for (_, _, manager) in keyed {
        if length <= max {
            break;
        }
        let Some(version) = managed.fields.get(&manager).map(|e| e.api_version.clone()) else {
            continue;
        };
        let Some(first) = first_of_version.get(&version) else {
            first_of_version.insert(version, manager);
            continue;
        };
        let bucket = Id::new(ANCIENT_CHANGES, "Update", &version, "");
        if !managed.fields.contains_key(&bucket) {
            if let Some(moved) = managed.fields.remove(first) {
                managed.fields.insert(bucket.clone(), moved);
            }
        }
        // The updater leaves; the bucket takes its fields (walking only those: the bucket
        // grows with every merge). As in the apiserver, an updater that is the bucket itself
        // just leaves.
        let mine = managed.fields.remove(&manager).map(|e| e.set);
        if manager != bucket {
            let mut set = managed
                .fields
                .remove(&bucket)
                .map(|e| e.set)
                .unwrap_or_default();
            set.union_with(mine.unwrap_or_default());
            let entry = Entry {
                set,
                api_version: version,
                applied: false,
            };
            managed.fields.insert(bucket.clone(), entry);
        }
        length -= 1;
        match managed.times.get(&manager).cloned() {
            Some(time) => managed.times.insert(bucket, time),
            None => managed.times.remove(&bucket),
        };
    }
    true
}

/// `BuildManagerIdentifier`'s text for an identity: what ties in time are ordered by.
fn identifier(id: &Id) -> String {
    let mut out = String::from("{");
    let fields = [
        ("manager", &id.manager),
        ("operation", &id.operation),
        ("apiVersion", &id.api_version),
        ("subresource", &id.subresource),
    ];
    for (name, value) in fields.into_iter().filter(|(_, v)| !v.is_empty()) {
        if out.len() > 1 {
            out.push(',');
        }
        go_json_string(&mut out, name);
        out.push(':');
        go_json_string(&mut out, value);
    }
    out.push('}');
    out
}

#[cfg(test)]
mod tests {
    use rstest::rstest;
    use serde_json::json;

    use super::*;
    use crate::apply::fieldpath::{path_string, FieldSet};

    /// An update entry owning `label`, written at second `at` of the day.
    fn update(manager: &str, version: &str, at: u32, label: &str) -> Value {
        json!({"manager": manager, "operation": "Update", "apiVersion": version,
               "time": format!("2026-01-01T00:00:{at:02}Z"), "fieldsType": "FieldsV1",
               "fieldsV1": {"f:metadata": {"f:labels": {format!("f:{label}"): {}}}}})
    }

    fn apply(manager: &str, at: u32) -> Value {
        json!({"manager": manager, "operation": "Apply", "apiVersion": "v1",
               "time": format!("2026-01-01T00:00:{at:02}Z"), "fieldsType": "FieldsV1",
               "fieldsV1": {"f:data": {"f:k": {}}}})
    }

    fn capped(entries: Vec<Value>, max: usize) -> Vec<Value> {
        let mut obj = json!({"metadata": {"managedFields": entries}});
        let mut managed = Managed::decode_obj(&obj).expect("entries decode");
        if cap(&mut managed, max) {
            write_entries(&mut obj, managed.encode());
        }
        obj["metadata"]["managedFields"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    }

    /// (manager, apiVersion, time second, labels owned) of each entry, in encoded order.
    fn summary(entries: &[Value]) -> Vec<(String, String, String, Vec<String>)> {
        entries
            .iter()
            .map(|e| {
                let set = FieldSet::from_fields_v1(&e["fieldsV1"]).expect("fieldsV1");
                let mut labels: Vec<String> = set.paths().iter().map(|p| path_string(p)).collect();
                labels.sort();
                let time = e["time"].as_str().unwrap_or("");
                (
                    e["manager"].as_str().unwrap_or("").to_string(),
                    e["apiVersion"].as_str().unwrap_or("").to_string(),
                    time.get(17..19).unwrap_or("").to_string(),
                    labels,
                )
            })
            .collect()
    }

    #[test]
    fn at_most_the_cap_nothing_merges() {
        let entries: Vec<Value> = (0..3)
            .map(|i| update(&format!("m{i}"), "v1", i, "a"))
            .collect();
        assert_eq!(capped(entries.clone(), 3), entries);
    }

    #[test]
    fn the_oldest_of_a_version_become_ancient_changes_with_the_last_merged_time() {
        let entries = vec![
            update("m0", "v1", 1, "a"),
            update("m1", "v1", 2, "b"),
            update("m2", "v1", 3, "c"),
            update("m3", "v1", 4, "d"),
            update("m4", "v1", 5, "e"),
            apply("applier", 0),
        ];
        let got = summary(&capped(entries, 3));
        let names: Vec<&str> = got.iter().map(|(m, ..)| m.as_str()).collect();
        assert_eq!(names, ["applier", "ancient-changes", "m3", "m4"]);
        let ancient = &got[1];
        assert_eq!(ancient.2, "03", "the time of the last updater merged");
        assert_eq!(
            ancient.3,
            [
                ".metadata.labels.a",
                ".metadata.labels.b",
                ".metadata.labels.c"
            ]
        );
    }

    #[test]
    fn each_version_has_its_own_bucket_and_a_lone_oldest_stays() {
        let entries = vec![
            update("a", "v1", 1, "a"),
            update("b", "v2", 2, "b"),
            update("c", "v2", 3, "c"),
            update("d", "v1", 4, "d"),
            update("e", "v1", 5, "e"),
        ];
        // a (v1) is remembered, b (v2) too, c joins b as v2's bucket: four left.
        let got = summary(&capped(entries, 4));
        let names: Vec<(&str, &str)> = got
            .iter()
            .map(|(m, v, ..)| (m.as_str(), v.as_str()))
            .collect();
        assert_eq!(
            names,
            [
                ("a", "v1"),
                ("ancient-changes", "v2"),
                ("d", "v1"),
                ("e", "v1")
            ]
        );
    }

    #[test]
    fn ties_in_time_are_ordered_by_identity() {
        // Same second: "x" sorts after "b" and "c", so b is first and c joins it.
        let entries = vec![
            update("x", "v1", 1, "x"),
            update("c", "v1", 1, "c"),
            update("b", "v1", 1, "b"),
        ];
        let got = summary(&capped(entries, 2));
        let names: Vec<&str> = got.iter().map(|(m, ..)| m.as_str()).collect();
        assert_eq!(names, ["ancient-changes", "x"]);
        assert_eq!(got[0].3, [".metadata.labels.b", ".metadata.labels.c"]);
    }

    #[test]
    fn an_existing_bucket_takes_the_next_updater_and_the_first_stays() {
        let entries = vec![
            update("first", "v1", 1, "f"),
            update("ancient-changes", "v1", 2, "old"),
            update("next", "v1", 3, "n"),
            update("last", "v1", 4, "l"),
        ];
        // first is remembered; the bucket itself comes next and, as in the apiserver, merging
        // it into itself removes it; then length is at the cap.
        let got = summary(&capped(entries, 3));
        let names: Vec<&str> = got.iter().map(|(m, ..)| m.as_str()).collect();
        assert_eq!(names, ["first", "next", "last"]);
    }

    #[rstest]
    #[case::plain("m", "", r#"{"manager":"m","operation":"Update","apiVersion":"v1"}"#)]
    #[case::status(
        "m",
        "status",
        r#"{"manager":"m","operation":"Update","apiVersion":"v1","subresource":"status"}"#
    )]
    #[case::html_escaped(
        "a<b",
        "",
        r#"{"manager":"a\u003cb","operation":"Update","apiVersion":"v1"}"#
    )]
    fn identifiers_are_go_json(#[case] manager: &str, #[case] sub: &str, #[case] want: &str) {
        assert_eq!(identifier(&Id::new(manager, "Update", "v1", sub)), want);
    }
}
