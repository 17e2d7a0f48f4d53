use serde_json::{json, Value};

use super::*;
use crate::schema::Schema;

const V: &str = "example.com/v1";
const T1: &str = "2024-01-01T00:00:01Z";
const T2: &str = "2024-01-01T00:00:02Z";
const T3: &str = "2024-01-01T00:00:03Z";

fn schema() -> Schema {
    Schema::compile(&json!({
        "type": "object",
        "properties": {
            "spec": {"type": "object", "properties": {
                "replicas": {"type": "integer"},
                "image": {"type": "string"},
                "ports": {
                    "type": "array",
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["name"],
                    "items": {"type": "object", "properties": {
                        "name": {"type": "string"},
                        "port": {"type": "integer"},
                        "protocol": {"type": "string"}
                    }}
                },
                "tags": {"type": "array", "x-kubernetes-list-type": "set",
                         "items": {"type": "string"}},
                "args": {"type": "array", "items": {"type": "string"}},
                "selector": {"type": "object", "x-kubernetes-map-type": "atomic",
                             "additionalProperties": {"type": "string"}},
                "env": {"type": "object", "additionalProperties": {"type": "string"}},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
            }},
            "status": {"type": "object", "properties": {"phase": {"type": "string"}}}
        }
    }))
}

/// [`super::apply`] for a resource with one version.
#[allow(clippy::too_many_arguments)]
fn apply(
    live: Option<&Value>,
    config: &Value,
    manager: &str,
    subresource: &str,
    api_version: &str,
    force: bool,
    schema: Option<Shape<'_>>,
    now: &str,
) -> Result<Value, Conflicts> {
    versions::single_version(api_version, |v| {
        super::apply(live, config, manager, subresource, v, force, schema, now)
    })
}

/// [`super::record_update`] for a resource with one version.
fn record_update(
    old: Option<&Value>,
    new: &mut Value,
    manager: &str,
    subresource: &str,
    api_version: &str,
    schema: Option<Shape<'_>>,
    now: &str,
) {
    versions::single_version(api_version, |v| {
        super::record_update(old, new, manager, subresource, v, schema, now)
    })
}

fn obj(spec: Value) -> Value {
    json!({"apiVersion": V, "kind": "Widget", "metadata": {"name": "w"}, "spec": spec})
}

fn do_apply(
    s: &Schema,
    live: Option<&Value>,
    config: &Value,
    manager: &str,
    force: bool,
    now: &str,
) -> Result<Value, Conflicts> {
    apply(
        live,
        config,
        manager,
        "",
        V,
        force,
        Some(Shape::Compiled(s.root())),
        now,
    )
}

fn entries(o: &Value) -> Vec<ManagedFields> {
    read_managed_fields(o).expect("managedFields decode")
}

fn entry<'a>(o: &'a [ManagedFields], manager: &str) -> &'a ManagedFields {
    o.iter()
        .find(|e| e.manager == manager)
        .unwrap_or_else(|| panic!("no entry for {manager}"))
}

fn fields(o: &Value, manager: &str) -> Value {
    entry(&entries(o), manager).fields.to_fields_v1()
}

fn without_mf(o: &Value) -> Value {
    let mut o = o.clone();
    strip_managed_fields(&mut o);
    o
}

#[test]
fn create_by_apply() {
    let s = schema();
    let mut config = obj(json!({"replicas": 1, "ports": [{"name": "http", "port": 80}]}));
    config["metadata"]["labels"] = json!({"app": "w"});
    let out = do_apply(&s, None, &config, "mgr", false, T1).unwrap();
    assert_eq!(without_mf(&out), config);
    assert_eq!(
        out["metadata"]["managedFields"],
        json!([{
            "manager": "mgr",
            "operation": "Apply",
            "apiVersion": V,
            "time": T1,
            "fieldsType": "FieldsV1",
            "fieldsV1": {
                "f:metadata": {"f:labels": {"f:app": {}}},
                "f:spec": {
                    "f:replicas": {},
                    "f:ports": {"k:{\"name\":\"http\"}": {".": {}, "f:name": {}, "f:port": {}}}
                }
            }
        }])
    );
}

#[test]
fn merge_two_appliers() {
    let s = schema();
    let a = do_apply(&s, None, &obj(json!({"replicas": 1})), "a", false, T1).unwrap();
    let b = do_apply(
        &s,
        Some(&a),
        &obj(json!({"image": "nginx"})),
        "b",
        false,
        T2,
    )
    .unwrap();
    assert_eq!(b["spec"], json!({"replicas": 1, "image": "nginx"}));
    assert_eq!(fields(&b, "a"), json!({"f:spec": {"f:replicas": {}}}));
    assert_eq!(fields(&b, "b"), json!({"f:spec": {"f:image": {}}}));
    let e = entries(&b);
    assert_eq!(entry(&e, "a").time, T1);
    assert_eq!(entry(&e, "b").time, T2);
}

#[test]
fn conflict_message_and_status() {
    let s = schema();
    let a = do_apply(&s, None, &obj(json!({"replicas": 1})), "a", false, T1).unwrap();
    let err = do_apply(&s, Some(&a), &obj(json!({"replicas": 2})), "b", false, T2).unwrap_err();
    assert_eq!(
        err.message(),
        "Apply failed with 1 conflict: conflict with \"a\": .spec.replicas"
    );
    let api = err.to_api_error("example.com", "widgets", "w");
    assert_eq!(api.code, 409);
    assert_eq!(api.reason, "Conflict");
    assert_eq!(
        api.to_status(),
        json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "Apply failed with 1 conflict: conflict with \"a\": .spec.replicas",
            "reason": "Conflict",
            "details": {"causes": [{
                "reason": "FieldManagerConflict",
                "message": "conflict with \"a\"",
                "field": ".spec.replicas"
            }]},
            "code": 409
        })
    );
    // The same value is no conflict: both own it.
    let b = do_apply(&s, Some(&a), &obj(json!({"replicas": 1})), "b", false, T2).unwrap();
    assert_eq!(without_mf(&b), without_mf(&a));
    assert_eq!(fields(&b, "a"), fields(&b, "b"));
    // A co-owner that changed nothing gets no time, as in the apiserver.
    assert_eq!(entry(&entries(&b), "b").time, "");
}

#[test]
fn conflicts_with_update_managers_and_several_fields() {
    let s = schema();
    let mut created =
        obj(json!({"replicas": 1, "image": "a", "ports": [{"name": "p", "port": 1}]}));
    created["metadata"]["uid"] = json!("u1");
    record_update(
        None,
        &mut created,
        "kubectl-create",
        "",
        V,
        Some(Shape::Compiled(s.root())),
        T1,
    );
    let err = do_apply(
        &s,
        Some(&created),
        &obj(json!({"replicas": 2, "image": "b", "ports": [{"name": "p", "port": 2}]})),
        "ssa",
        false,
        T2,
    )
    .unwrap_err();
    assert_eq!(
        err.message(),
        "Apply failed with 3 conflicts: conflicts with \"kubectl-create\" using example.com/v1:\n\
         - .spec.image\n- .spec.replicas\n- .spec.ports[name=\"p\"].port"
    );
    let api = err.to_api_error("example.com", "widgets", "w");
    let causes = &api.details.as_ref().unwrap().causes;
    assert_eq!(causes.len(), 3);
    assert_eq!(
        causes[0].message,
        "conflict with \"kubectl-create\" using example.com/v1"
    );
    // Two managers, sorted by identity; a status-subresource manager is named so.
    let mut st = created.clone();
    st["status"] = json!({"phase": "Ready"});
    let st_new = apply(
        Some(&created),
        &json!({"apiVersion": V, "kind": "Widget", "metadata": {"name": "w"},
                "status": {"phase": "Ready"}}),
        "ctrl",
        "status",
        V,
        false,
        Some(Shape::Compiled(s.root())),
        T2,
    )
    .unwrap();
    let mut cfg = obj(json!({"image": "b"}));
    cfg["status"] = json!({"phase": "Done"});
    let err = do_apply(&s, Some(&st_new), &cfg, "ssa", false, T3).unwrap_err();
    assert_eq!(
        err.message(),
        "Apply failed with 2 conflicts: conflicts with \"ctrl\" with subresource \"status\":\n\
         - .status.phase\n\
         conflicts with \"kubectl-create\" using example.com/v1:\n- .spec.image"
    );
}

#[test]
fn force_takes_ownership() {
    let s = schema();
    let a = do_apply(
        &s,
        None,
        &obj(json!({"replicas": 1, "image": "x"})),
        "a",
        false,
        T1,
    )
    .unwrap();
    let b = do_apply(&s, Some(&a), &obj(json!({"replicas": 2})), "b", true, T2).unwrap();
    assert_eq!(b["spec"], json!({"replicas": 2, "image": "x"}));
    assert_eq!(fields(&b, "a"), json!({"f:spec": {"f:image": {}}}));
    assert_eq!(fields(&b, "b"), json!({"f:spec": {"f:replicas": {}}}));
    // a re-applying its old config now conflicts with b.
    let err = do_apply(
        &s,
        Some(&b),
        &obj(json!({"replicas": 1, "image": "x"})),
        "a",
        false,
        T3,
    )
    .unwrap_err();
    assert_eq!(
        err.message(),
        "Apply failed with 1 conflict: conflict with \"b\": .spec.replicas"
    );
}

#[test]
fn list_map_entries_shared_by_two_managers() {
    let s = schema();
    let a = do_apply(
        &s,
        None,
        &obj(json!({"ports": [{"name": "a", "port": 1}]})),
        "a",
        false,
        T1,
    )
    .unwrap();
    let b = do_apply(
        &s,
        Some(&a),
        &obj(json!({"ports": [{"name": "b", "port": 2}]})),
        "b",
        false,
        T2,
    )
    .unwrap();
    assert_eq!(
        b["spec"]["ports"],
        json!([{"name": "a", "port": 1}, {"name": "b", "port": 2}])
    );
    assert_eq!(
        fields(&b, "a"),
        json!({"f:spec": {"f:ports": {"k:{\"name\":\"a\"}": {".": {}, "f:name": {}, "f:port": {}}}}})
    );
    assert_eq!(
        fields(&b, "b"),
        json!({"f:spec": {"f:ports": {"k:{\"name\":\"b\"}": {".": {}, "f:name": {}, "f:port": {}}}}})
    );
    // b drops its entry: a's stays.
    let b2 = do_apply(&s, Some(&b), &obj(json!({"replicas": 3})), "b", false, T3).unwrap();
    assert_eq!(b2["spec"]["ports"], json!([{"name": "a", "port": 1}]));
    assert_eq!(fields(&b2, "b"), json!({"f:spec": {"f:replicas": {}}}));
    // a drops its only field: the list item goes, and so does its now-empty entry.
    let bare = json!({"apiVersion": V, "kind": "Widget", "metadata": {"name": "w"}});
    let a2 = do_apply(&s, Some(&b2), &bare, "a", false, T3).unwrap();
    assert_eq!(a2["spec"], json!({"replicas": 3}));
    assert!(entries(&a2).iter().all(|e| e.manager != "a"));
    // (`spec: {}` instead would make a the owner of spec itself.)
    let a3 = do_apply(&s, Some(&b2), &obj(json!({})), "a", false, T3).unwrap();
    assert_eq!(fields(&a3, "a"), json!({"f:spec": {}}));
    // b can change a field of a's item only by force.
    let err = do_apply(
        &s,
        Some(&b),
        &obj(json!({"ports": [{"name": "a", "port": 9}, {"name": "b", "port": 2}]})),
        "b",
        false,
        T3,
    )
    .unwrap_err();
    assert_eq!(
        err.message(),
        "Apply failed with 1 conflict: conflict with \"a\": .spec.ports[name=\"a\"].port"
    );
}

#[test]
fn removal_on_reapply() {
    let s = schema();
    let a = do_apply(
        &s,
        None,
        &obj(json!({"replicas": 1, "image": "x", "env": {"A": "1", "B": "2"}})),
        "a",
        false,
        T1,
    )
    .unwrap();
    let a2 = do_apply(
        &s,
        Some(&a),
        &obj(json!({"replicas": 1, "env": {"A": "1"}})),
        "a",
        false,
        T2,
    )
    .unwrap();
    assert_eq!(a2["spec"], json!({"replicas": 1, "env": {"A": "1"}}));
    assert_eq!(entry(&entries(&a2), "a").time, T2);
    // A field another manager also owns survives.
    let b = do_apply(&s, Some(&a), &obj(json!({"image": "x"})), "b", false, T2).unwrap();
    let a3 = do_apply(&s, Some(&b), &obj(json!({"replicas": 1})), "a", false, T3).unwrap();
    assert_eq!(a3["spec"], json!({"replicas": 1, "image": "x"}));
    assert_eq!(fields(&a3, "a"), json!({"f:spec": {"f:replicas": {}}}));
    assert_eq!(fields(&a3, "b"), json!({"f:spec": {"f:image": {}}}));
    // Removing the whole spec from the config removes it all.
    let a4 = do_apply(
        &s,
        Some(&a),
        &json!({"apiVersion": V, "kind": "Widget",
        "metadata": {"name": "w"}}),
        "a",
        false,
        T3,
    )
    .unwrap();
    assert!(a4.get("spec").is_none(), "{a4}");
}

#[test]
fn set_lists_union() {
    let s = schema();
    let a = do_apply(&s, None, &obj(json!({"tags": ["x", "y"]})), "a", false, T1).unwrap();
    let b = do_apply(
        &s,
        Some(&a),
        &obj(json!({"tags": ["z", "x"]})),
        "b",
        false,
        T2,
    )
    .unwrap();
    // smd's merge order: applied items new to the list go before the shared item that follows.
    assert_eq!(b["spec"]["tags"], json!(["z", "x", "y"]));
    assert_eq!(
        fields(&b, "b"),
        json!({"f:spec": {"f:tags": {"v:\"x\"": {}, "v:\"z\"": {}}}})
    );
    let a2 = do_apply(&s, Some(&b), &obj(json!({"tags": ["x"]})), "a", false, T3).unwrap();
    assert_eq!(a2["spec"]["tags"], json!(["z", "x"]));
}

#[test]
fn atomic_lists_and_maps_replace() {
    let s = schema();
    let a = do_apply(
        &s,
        None,
        &obj(json!({"args": ["1", "2"], "selector": {"a": "1", "b": "2"}})),
        "a",
        false,
        T1,
    )
    .unwrap();
    assert_eq!(
        fields(&a, "a"),
        json!({"f:spec": {"f:args": {}, "f:selector": {}}})
    );
    let err = do_apply(&s, Some(&a), &obj(json!({"args": ["3"]})), "b", false, T2).unwrap_err();
    assert_eq!(
        err.message(),
        "Apply failed with 1 conflict: conflict with \"a\": .spec.args"
    );
    let b = do_apply(
        &s,
        Some(&a),
        &obj(json!({"args": ["3"], "selector": {"c": "3"}})),
        "b",
        true,
        T2,
    )
    .unwrap();
    assert_eq!(b["spec"], json!({"args": ["3"], "selector": {"c": "3"}}));
    assert!(entries(&b).iter().all(|e| e.manager != "a"));
}

#[test]
fn reapply_is_a_noop() {
    let s = schema();
    let config = obj(
        json!({"replicas": 1, "ports": [{"name": "a", "port": 1}], "tags": ["t"],
        "free": {"x": {"y": 1}}}),
    );
    let a = do_apply(&s, None, &config, "a", false, T1).unwrap();
    let again = do_apply(&s, Some(&a), &config, "a", false, T2).unwrap();
    assert_eq!(again, a);
    // Integers written as floats are the same value.
    let again = do_apply(
        &s,
        Some(&a),
        &obj(json!({"replicas": 1.0, "ports": [{"name": "a",
        "port": 1}], "tags": ["t"], "free": {"x": {"y": 1}}})),
        "a",
        false,
        T2,
    )
    .unwrap();
    assert_eq!(again, a);
}

#[test]
fn preserve_unknown_fields_are_granular_maps() {
    let s = schema();
    let a = do_apply(
        &s,
        None,
        &obj(json!({"free": {"x": {"y": 1}, "l": [1]}})),
        "a",
        false,
        T1,
    )
    .unwrap();
    assert_eq!(
        fields(&a, "a"),
        json!({"f:spec": {"f:free": {"f:x": {".": {}, "f:y": {}}, "f:l": {}}}})
    );
}

#[test]
fn schemaless_objects() {
    let config = json!({"apiVersion": "v1", "kind": "Thing", "metadata": {"name": "t",
        "labels": {"a": "b"}, "finalizers": ["f"]}, "data": {"k": "v"}, "list": [1, 2]});
    let a = apply(None, &config, "a", "", "v1", false, None, T1).unwrap();
    assert_eq!(
        fields(&a, "a"),
        json!({"f:metadata": {"f:labels": {"f:a": {}}, "f:finalizers": {"v:\"f\"": {}}},
               "f:data": {".": {}, "f:k": {}}, "f:list": {}})
    );
    let b = apply(
        Some(&a),
        &json!({"apiVersion": "v1", "kind": "Thing", "metadata": {"name": "t",
            "finalizers": ["g"]}, "data": {"j": "w"}}),
        "b",
        "",
        "v1",
        false,
        None,
        T2,
    )
    .unwrap();
    assert_eq!(b["metadata"]["finalizers"], json!(["f", "g"]));
    assert_eq!(b["data"], json!({"j": "w", "k": "v"}));
}

#[test]
fn record_update_takes_ownership() {
    let s = schema();
    let mut created = obj(json!({"replicas": 1, "image": "x"}));
    created["metadata"]["uid"] = json!("u1");
    created["metadata"]["labels"] = json!({"app": "w"});
    record_update(
        None,
        &mut created,
        "kubectl-create",
        "",
        V,
        Some(Shape::Compiled(s.root())),
        T1,
    );
    assert_eq!(
        created["metadata"]["managedFields"],
        json!([{
            "manager": "kubectl-create", "operation": "Update", "apiVersion": V, "time": T1,
            "fieldsType": "FieldsV1",
            "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}},
                         "f:spec": {".": {}, "f:image": {}, "f:replicas": {}}}
        }])
    );
    let mut edited = created.clone();
    edited["spec"]["replicas"] = json!(5);
    record_update(
        Some(&created),
        &mut edited,
        "kubectl-edit",
        "",
        V,
        Some(Shape::Compiled(s.root())),
        T2,
    );
    let e = entries(&edited);
    assert_eq!(
        entry(&e, "kubectl-create").fields.to_fields_v1(),
        json!({"f:metadata": {"f:labels": {".": {}, "f:app": {}}},
               "f:spec": {".": {}, "f:image": {}}})
    );
    assert_eq!(entry(&e, "kubectl-create").time, T1);
    assert_eq!(
        entry(&e, "kubectl-edit").fields.to_fields_v1(),
        json!({"f:spec": {"f:replicas": {}}})
    );
    // An update that changes nothing leaves managedFields alone.
    let mut same = edited.clone();
    record_update(
        Some(&edited),
        &mut same,
        "other",
        "",
        V,
        Some(Shape::Compiled(s.root())),
        T3,
    );
    assert_eq!(same, edited);
    // The same manager through another apiVersion gets another entry; removal drops ownership.
    let mut removed = edited.clone();
    removed["spec"].as_object_mut().unwrap().remove("replicas");
    record_update(
        Some(&edited),
        &mut removed,
        "kubectl-edit",
        "",
        "example.com/v2",
        Some(Shape::Compiled(s.root())),
        T3,
    );
    assert!(entries(&removed)
        .iter()
        .all(|e| e.manager != "kubectl-edit"));
    // An applier loses a field an updater changes, without conflict.
    let a = do_apply(
        &s,
        Some(&edited),
        &obj(json!({"image": "x"})),
        "ssa",
        false,
        T2,
    )
    .unwrap();
    let mut upd = a.clone();
    upd["spec"]["image"] = json!("y");
    record_update(
        Some(&a),
        &mut upd,
        "ctl",
        "",
        V,
        Some(Shape::Compiled(s.root())),
        T3,
    );
    assert!(entries(&upd).iter().all(|e| e.manager != "ssa"));
}

#[test]
fn untracked_objects_start_at_first_apply() {
    let s = schema();
    let mut live = obj(json!({"replicas": 1}));
    live["metadata"]["uid"] = json!("u1");
    // Updates of an untracked existing object stay untracked.
    let mut upd = live.clone();
    upd["spec"]["replicas"] = json!(2);
    record_update(
        Some(&live),
        &mut upd,
        "ctl",
        "",
        V,
        Some(Shape::Compiled(s.root())),
        T1,
    );
    assert!(upd["metadata"].get("managedFields").is_none());
    // The first apply records what was there as before-first-apply.
    let a = do_apply(&s, Some(&upd), &obj(json!({"image": "x"})), "a", false, T2).unwrap();
    let e = entries(&a);
    assert_eq!(entry(&e, "before-first-apply").operation, "Update");
    assert_eq!(
        entry(&e, "before-first-apply").fields.to_fields_v1(),
        json!({"f:spec": {".": {}, "f:replicas": {}}})
    );
    let err = do_apply(&s, Some(&a), &obj(json!({"replicas": 3})), "a", false, T3).unwrap_err();
    assert_eq!(
        err.message(),
        "Apply failed with 1 conflict: conflict with \"before-first-apply\" using example.com/v1: .spec.replicas"
    );
    // managedFields: [] in an update resets them.
    let mut reset = a.clone();
    reset["metadata"]["managedFields"] = json!([]);
    record_update(
        Some(&a),
        &mut reset,
        "ctl",
        "",
        V,
        Some(Shape::Compiled(s.root())),
        T3,
    );
    assert!(reset["metadata"].get("managedFields").is_none());
}

#[test]
fn status_subresource_apply() {
    let s = schema();
    let a = do_apply(&s, None, &obj(json!({"replicas": 1})), "a", false, T1).unwrap();
    let mut cfg = obj(json!({"replicas": 7}));
    cfg["status"] = json!({"phase": "Ready"});
    let st = apply(
        Some(&a),
        &cfg,
        "ctrl",
        "status",
        V,
        false,
        Some(Shape::Compiled(s.root())),
        T2,
    );
    // spec is a reset field of status writes: neither owned nor in conflict.
    let st = st.unwrap();
    let e = entries(&st);
    assert_eq!(entry(&e, "ctrl").subresource, "status");
    assert_eq!(
        entry(&e, "ctrl").fields.to_fields_v1(),
        json!({"f:status": {"f:phase": {}}})
    );
}

#[test]
fn kubectl_upgrade_from_client_side_apply() {
    let s = schema();
    let mut created = obj(json!({"replicas": 1}));
    created["metadata"]["uid"] = json!("u1");
    let last = obj(json!({"replicas": 1}));
    created["metadata"]["annotations"] = json!({LAST_APPLIED: go_json(&last) + "\n"});
    record_update(
        None,
        &mut created,
        "kubectl-client-side-apply",
        "",
        V,
        Some(Shape::Compiled(s.root())),
        T1,
    );
    // Only kubectl may take over the fields last applied client-side.
    let cfg = obj(json!({"replicas": 2}));
    assert!(do_apply(&s, Some(&created), &cfg, "other", false, T2).is_err());
    let out = do_apply(&s, Some(&created), &cfg, "kubectl", false, T2).unwrap();
    assert_eq!(out["spec"]["replicas"], 2);
    assert_eq!(
        out["metadata"]["annotations"][LAST_APPLIED],
        json!(go_json(&cfg) + "\n")
    );
}

#[test]
fn fields_v1_round_trip() {
    let v = json!({
        "f:metadata": {"f:labels": {".": {}, "f:a": {}}},
        "f:spec": {"f:ports": {"k:{\"name\":\"a\",\"port\":80}": {".": {}, "f:name": {}}},
                   "f:tags": {"v:\"x<y\"": {}, "v:3": {}}, "f:idx": {"i:0": {}}},
        "x:unknown": {}
    });
    let set = FieldSet::from_fields_v1(&v).unwrap();
    let mut want = v.clone();
    want.as_object_mut().unwrap().remove("x:unknown");
    want["f:spec"]["f:tags"] = json!({"v:\"x\\u003cy\"": {}, "v:3": {}});
    assert_eq!(set.to_fields_v1(), want);
    assert!(!set.is_empty());
    assert!(FieldSet::from_fields_v1(&json!({})).unwrap().is_empty());
    assert!(FieldSet::from_fields_v1(&json!({"f": {}})).is_err());
    assert!(FieldSet::from_fields_v1(&json!({"fx": {}})).is_err());
    assert!(FieldSet::from_fields_v1(&json!({"k:[1]": {}})).is_err());
    assert!(FieldSet::from_fields_v1(&json!([])).is_err());
    // Key order inside k: is by name whatever the input order.
    let set = FieldSet::from_fields_v1(&json!({"k:{\"b\":1,\"a\":2}": {}})).unwrap();
    assert_eq!(set.to_fields_v1(), json!({"k:{\"a\":2,\"b\":1}": {}}));
}

#[test]
fn managed_fields_decoding_errors() {
    let bad = |e: Value| read_managed_fields(&json!({"metadata": {"managedFields": [e]}}));
    assert_eq!(
        bad(
            json!({"manager": "m", "operation": "Patch", "apiVersion": "v1",
                   "fieldsType": "FieldsV1"})
        )
        .unwrap_err()
        .to_string(),
        "operation must be `Apply` or `Update`"
    );
    assert_eq!(
        bad(json!({"manager": "m", "operation": "Apply", "fieldsType": "FieldsV1"}))
            .unwrap_err()
            .to_string(),
        "apiVersion must not be empty"
    );
    assert_eq!(
        bad(
            json!({"manager": "m", "operation": "Apply", "apiVersion": "v1",
                   "fieldsType": "FieldsV2"})
        )
        .unwrap_err()
        .to_string(),
        "invalid fieldsType \"FieldsV2\" in managed fields entry 0"
    );
    // Undecodable managedFields on the live object do not break an update: it starts afresh.
    let s = schema();
    let mut live = obj(json!({"replicas": 1}));
    live["metadata"]["managedFields"] = json!([{"operation": "Bad"}]);
    let mut new = live.clone();
    new["spec"]["replicas"] = json!(2);
    record_update(
        None,
        &mut new,
        "m",
        "",
        V,
        Some(Shape::Compiled(s.root())),
        T1,
    );
    assert_eq!(entries(&new).len(), 1);
}

#[test]
fn default_manager_from_user_agent() {
    for (ua, want) in [
        ("kubectl/v1.30.0 (linux/amd64) kubernetes/abcdef", "kubectl"),
        ("my-controller", "my-controller"),
        ("", ""),
        ("a\u{1}b\tc/x", "abc"),
        ("kube-rs/0.90", "kube-rs"),
    ] {
        assert_eq!(default_manager(ua), want, "{ua:?}");
    }
    assert_eq!(default_manager(&"x".repeat(300)).len(), 128);
    assert_eq!(default_manager(&"é".repeat(100)).len(), 128);
}

#[test]
fn validate_config_errors() {
    let s = schema();
    let ok = obj(json!({"ports": [{"name": "a"}], "free": {"anything": 1}}));
    let validate_config = |c: &Value, s| validate_config(c, s).map_err(|e| e.to_string());
    assert_eq!(
        validate_config(&ok, Some(Shape::Compiled(s.root()))),
        Ok(())
    );
    assert_eq!(
        validate_config(
            &obj(json!({"ports": [{"name": "a"}, {"name": "a"}]})),
            Some(Shape::Compiled(s.root()))
        ),
        Err(".spec.ports: duplicate entries for key [name=\"a\"]".into())
    );
    assert_eq!(
        validate_config(
            &obj(json!({"ports": [{"port": 1}]})),
            Some(Shape::Compiled(s.root()))
        ),
        Err(
            ".spec.ports: element 0: associative list with keys has an element that omits all \
             key fields [\"name\"] (and doesn't have default values for any key fields)"
                .into()
        )
    );
    assert_eq!(
        validate_config(&obj(json!({"bogus": 1})), Some(Shape::Compiled(s.root()))),
        Err(".spec.bogus: field not declared in schema".into())
    );
    assert!(validate_config(&obj(json!({"bogus": 1})), None).is_ok());
}

fn random_value(rng: &mut fastrand::Rng, depth: u32) -> Value {
    let keys = [
        "spec",
        "ports",
        "name",
        "tags",
        "args",
        "replicas",
        "free",
        "metadata",
        "labels",
        "selector",
        "status",
        "x",
        "finalizers",
        "ownerReferences",
        "uid",
        "managedFields",
    ];
    match rng.u32(0..if depth > 4 { 5 } else { 8 }) {
        0 => Value::Null,
        1 => json!(rng.bool()),
        2 => json!(rng.i64(-3..3)),
        3 => json!(rng.f64()),
        4 => json!(keys[rng.usize(0..keys.len())]),
        5 | 6 => {
            let mut m = Map::new();
            for _ in 0..rng.usize(0..4) {
                m.insert(
                    keys[rng.usize(0..keys.len())].into(),
                    random_value(rng, depth + 1),
                );
            }
            Value::Object(m)
        }
        _ => Value::Array(
            (0..rng.usize(0..4))
                .map(|_| random_value(rng, depth + 1))
                .collect(),
        ),
    }
}

#[test]
fn arbitrary_json_never_panics() {
    let s = schema();
    let mut rng = fastrand::Rng::with_seed(7);
    for i in 0..3000 {
        let live = random_value(&mut rng, 0);
        let config = random_value(&mut rng, 0);
        let schema = if i % 2 == 0 {
            Some(Shape::Compiled(s.root()))
        } else {
            None
        };
        let force = rng.bool();
        let _ = FieldSet::from_fields_v1(&live);
        let _ = read_managed_fields(&live);
        let _ = validate_config(&config, schema);
        let _ = default_manager(&config.to_string());
        let first = apply(Some(&live), &config, "a", "", V, force, schema, T1);
        if let Ok(first) = &first {
            let other = random_value(&mut rng, 0);
            if let Err(c) = apply(Some(first), &other, "b", "status", V, false, schema, T2) {
                let _ = c.to_api_error("g", "r", "n");
            }
            let again = apply(Some(first), &config, "a", "", V, force, schema, T2);
            if force {
                assert!(again.is_ok());
            }
        }
        let mut new = config.clone();
        record_update(Some(&live), &mut new, "u", "", V, schema, T1);
        let mut new2 = live.clone();
        record_update(None, &mut new2, "u", "", V, schema, T1);
        let _ = apply(Some(&new2), &config, "kubectl", "", V, false, schema, T2);
    }
}

/// structured-merge-diff's merge vectors (typed/merge_test.go, "struct grab bag" and
/// "associative list"): live, applied, merged.
const SMD_MERGE_VECTORS: &[(&str, &str, &str)] = &[
    (
        r#"{"numeric":1}"#,
        r#"{"numeric":3.14159}"#,
        r#"{"numeric":3.14159}"#,
    ),
    (
        r#"{"numeric":3.14159}"#,
        r#"{"numeric":1}"#,
        r#"{"numeric":1}"#,
    ),
    (
        r#"{"string":"aoeu"}"#,
        r#"{"bool":true}"#,
        r#"{"string":"aoeu","bool":true}"#,
    ),
    (
        r#"{"setStr":["a","b","c"]}"#,
        r#"{"setStr":["a","b"]}"#,
        r#"{"setStr":["a","b","c"]}"#,
    ),
    (
        r#"{"setStr":["a","b"]}"#,
        r#"{"setStr":["a","b","c"]}"#,
        r#"{"setStr":["a","b","c"]}"#,
    ),
    (
        r#"{"setStr":["a","b","c"]}"#,
        r#"{"setStr":[]}"#,
        r#"{"setStr":["a","b","c"]}"#,
    ),
    (
        r#"{"setStr":[]}"#,
        r#"{"setStr":["a","b","c"]}"#,
        r#"{"setStr":["a","b","c"]}"#,
    ),
    (
        r#"{"setStr":["a","b"]}"#,
        r#"{"setStr":["b","a"]}"#,
        r#"{"setStr":["b","a"]}"#,
    ),
    (
        r#"{"setStr":["a","b","c"]}"#,
        r#"{"setStr":["d","e","f"]}"#,
        r#"{"setStr":["a","b","c","d","e","f"]}"#,
    ),
    (
        r#"{"setStr":["a","b","c"]}"#,
        r#"{"setStr":["c","d","e","f"]}"#,
        r#"{"setStr":["a","b","c","d","e","f"]}"#,
    ),
    (
        r#"{"setStr":["a","b","c","g","f"]}"#,
        r#"{"setStr":["c","d","e","f"]}"#,
        r#"{"setStr":["a","b","c","g","d","e","f"]}"#,
    ),
    (
        r#"{"setStr":["a","b","c"]}"#,
        r#"{"setStr":["d","e","f","x","y","z"]}"#,
        r#"{"setStr":["a","b","c","d","e","f","x","y","z"]}"#,
    ),
    (
        r#"{"setStr":["c","d","e","f"]}"#,
        r#"{"setStr":["a","c","e"]}"#,
        r#"{"setStr":["a","c","d","e","f"]}"#,
    ),
    (
        r#"{"setStr":["a","b","c","x","y","z"]}"#,
        r#"{"setStr":["d","e","f"]}"#,
        r#"{"setStr":["a","b","c","x","y","z","d","e","f"]}"#,
    ),
    (
        r#"{"setStr":["a","b","c","x","y","z"]}"#,
        r#"{"setStr":["d","e","f","x","y","z"]}"#,
        r#"{"setStr":["a","b","c","d","e","f","x","y","z"]}"#,
    ),
    (
        r#"{"setStr":["c","a","g","f"]}"#,
        r#"{"setStr":["c","f","a","g"]}"#,
        r#"{"setStr":["c","f","a","g"]}"#,
    ),
    (
        r#"{"setStr":["a","b","c","d"]}"#,
        r#"{"setStr":["d","e","f","a"]}"#,
        r#"{"setStr":["b","c","d","e","f","a"]}"#,
    ),
    (
        r#"{"setStr":["c","d","e","f","g","h","i","j"]}"#,
        r#"{"setStr":["2","h","3","e","4","k","l"]}"#,
        r#"{"setStr":["c","d","f","g","2","h","i","j","3","e","4","k","l"]}"#,
    ),
    (
        r#"{"setStr":["a","b","c","d","e","f","g","h","i","j"]}"#,
        r#"{"setStr":["1","b","2","h","3","e","4","k","l"]}"#,
        r#"{"setStr":["a","1","b","c","d","f","g","2","h","i","j","3","e","4","k","l"]}"#,
    ),
    (
        r#"{"setStr":["a","b","b"]}"#,
        r#"{"setStr":["c"]}"#,
        r#"{"setStr":["a","b","b","c"]}"#,
    ),
    (
        r#"{"setStr":["a","b","b"]}"#,
        r#"{"setStr":["b"]}"#,
        r#"{"setStr":["a","b"]}"#,
    ),
    (
        r#"{"setStr":["a","b","b"]}"#,
        r#"{"setStr":["a"]}"#,
        r#"{"setStr":["a","b","b"]}"#,
    ),
    (
        r#"{"setStr":["a","b","c","d","e","c"]}"#,
        r#"{"setStr":["1","b","2","e","d"]}"#,
        r#"{"setStr":["a","1","b","c","2","e","c","d"]}"#,
    ),
    (
        r#"{"setStr":["a","b","c","d","e","c"]}"#,
        r#"{"setStr":["1","b","2","c","e","d"]}"#,
        r#"{"setStr":["a","1","b","2","c","e","d"]}"#,
    ),
    (
        r#"{"setStr":["a","a","b","b"]}"#,
        r#"{"setStr":["b","c","d"]}"#,
        r#"{"setStr":["a","a","b","c","d"]}"#,
    ),
    (
        r#"{"setStr":["a","a","b","b"]}"#,
        r#"{"setStr":[]}"#,
        r#"{"setStr":["a","a","b","b"]}"#,
    ),
    (
        r#"{"setBool":[true]}"#,
        r#"{"setBool":[false]}"#,
        r#"{"setBool":[true, false]}"#,
    ),
    (
        r#"{"setNumeric":[1,2,3.14159]}"#,
        r#"{"setNumeric":[1,2,3]}"#,
        r#"{"setNumeric":[1,2,3.14159,3]}"#,
    ),
    (
        r#"{"setStr":["c","a","g","f","c","a"]}"#,
        r#"{"setStr":["c","f","a","g"]}"#,
        r#"{"setStr":["c","f","a","g"]}"#,
    ),
    (
        r#"{"setNumeric":[1,2,3.14159,1,2]}"#,
        r#"{"setNumeric":[1,2,3]}"#,
        r#"{"setNumeric":[1,2,3.14159,3]}"#,
    ),
    (
        r#"{"setBool":[true,false,true]}"#,
        r#"{"setBool":[false]}"#,
        r#"{"setBool":[true,false,true]}"#,
    ),
    (
        r#"{"setBool":[true,false,true]}"#,
        r#"{"setBool":[true]}"#,
        r#"{"setBool":[true, false]}"#,
    ),
    (
        r#"{"list":[{"key":"a","id":1,"value":{"a":"a"}}]}"#,
        r#"{"list":[{"key":"a","id":1,"value":{"a":"a"}}]}"#,
        r#"{"list":[{"key":"a","id":1,"value":{"a":"a"}}]}"#,
    ),
    (
        r#"{"list":[{"key":"a","id":1,"value":{"a":"a"}}]}"#,
        r#"{"list":[{"key":"a","id":2,"value":{"a":"a"}}]}"#,
        r#"{"list":[{"key":"a","id":1,"value":{"a":"a"}},{"key":"a","id":2,"value":{"a":"a"}}]}"#,
    ),
    (
        r#"{"list":[{"key":"a","id":1},{"key":"b","id":1}]}"#,
        r#"{"list":[{"key":"a","id":1},{"key":"a","id":2}]}"#,
        r#"{"list":[{"key":"a","id":1},{"key":"b","id":1},{"key":"a","id":2}]}"#,
    ),
    (
        r#"{"list":[{"key":"b","id":2}]}"#,
        r#"{"list":[{"key":"a","id":1},{"key":"b","id":2},{"key":"c","id":3}]}"#,
        r#"{"list":[{"key":"a","id":1},{"key":"b","id":2},{"key":"c","id":3}]}"#,
    ),
    (
        r#"{"list":[{"key":"a","id":1},{"key":"b","id":2},{"key":"c","id":3}]}"#,
        r#"{"list":[{"key":"c","id":3},{"key":"b","id":2}]}"#,
        r#"{"list":[{"key":"a","id":1},{"key":"c","id":3},{"key":"b","id":2}]}"#,
    ),
    (
        r#"{"list":[{"key":"a","id":1},{"key":"b","id":2},{"key":"c","id":3}]}"#,
        r#"{"list":[{"key":"c","id":3},{"key":"a","id":1}]}"#,
        r#"{"list":[{"key":"b","id":2},{"key":"c","id":3},{"key":"a","id":1}]}"#,
    ),
    (
        r#"{"atomicList":["a","a","a"]}"#,
        r#"{"atomicList":null}"#,
        r#"{"atomicList":null}"#,
    ),
    (
        r#"{"atomicList":["a","b","c"]}"#,
        r#"{"atomicList":[]}"#,
        r#"{"atomicList":[]}"#,
    ),
    (
        r#"{"atomicList":["a","a","a"]}"#,
        r#"{"atomicList":["a","a"]}"#,
        r#"{"atomicList":["a","a"]}"#,
    ),
    (
        r#"{"list":[{"key":"a","id":1,"bv":true},{"key":"b","id":2},{"key":"a","id":1,"bv":false,"nv":2}]}"#,
        r#"{"list":[{"key":"a","id":1,"nv":3},{"key":"c","id":3},{"key":"b","id":2}]}"#,
        r#"{"list":[{"key":"a","id":1,"nv":3},{"key":"c","id":3},{"key":"b","id":2}]}"#,
    ),
    (
        r#"{"list":[{"key":"a","id":1,"nv":1},{"key":"a","id":1,"nv":2}]}"#,
        r#"{"list":[]}"#,
        r#"{"list":[{"key":"a","id":1,"nv":1},{"key":"a","id":1,"nv":2}]}"#,
    ),
    (
        r#"{"list":[{"key":"a","id":1,"nv":1},{"key":"a","id":1,"nv":2}]}"#,
        r#"{}"#,
        r#"{"list":[{"key":"a","id":1,"nv":1},{"key":"a","id":1,"nv":2}]}"#,
    ),
];

#[test]
fn smd_merge_vectors() {
    let s = Schema::compile(&json!({"type": "object", "properties": {
        "numeric": {"type": "number"},
        "string": {"type": "string"},
        "bool": {"type": "boolean"},
        "setStr": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
        "setBool": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "boolean"}},
        "setNumeric": {"type": "array", "x-kubernetes-list-type": "set",
                       "items": {"type": "number"}},
        "atomicList": {"type": "array", "items": {"type": "string"}},
        "list": {"type": "array", "x-kubernetes-list-type": "map",
                 "x-kubernetes-list-map-keys": ["key", "id"],
                 "items": {"type": "object", "properties": {
                     "key": {"type": "string"}, "id": {"type": "number"},
                     "value": {"type": "object", "additionalProperties": {"type": "string"}},
                     "bv": {"type": "boolean"}, "nv": {"type": "number"}}}}
    }}));
    let parse = |t: &str| serde_json::from_str::<Value>(t).unwrap();
    for (live, applied, want) in SMD_MERGE_VECTORS {
        let got = typed::merge(
            Some(&parse(live)),
            Some(&parse(applied)),
            typed::Ty::Node(Shape::Compiled(s.root()), false),
        );
        assert_eq!(got, Some(parse(want)), "{live} + {applied}");
    }
    // Null and empty containers (the "null/empty" vectors): the applied one wins.
    for (live, applied) in [
        ("{}", r#"{"inner":{}}"#),
        ("{}", r#"{"inner":null}"#),
        (r#"{"inner":null}"#, r#"{"inner":{}}"#),
        (r#"{"inner":{}}"#, r#"{"inner":null}"#),
        (r#"{"inner":[]}"#, r#"{"inner":null}"#),
        (r#"{"inner":null}"#, r#"{"inner":[]}"#),
    ] {
        let got = typed::merge(
            Some(&parse(live)),
            Some(&parse(applied)),
            typed::Ty::Deduced,
        );
        assert_eq!(got, Some(parse(applied)), "{live} + {applied}");
    }
}

#[test]
fn config_errors_are_worded_as_smd() {
    let s = Schema::compile(
        &json!({"type": "object", "properties": {"spec": {"type": "object",
        "properties": {
            "set": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "object"}},
            "map": {"type": "array", "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["k"], "items": {"type": "object",
                    "properties": {"k": {"type": "string"}}}},
            "lists": {"type": "array", "x-kubernetes-list-type": "set",
                      "items": {"type": "array", "items": {"type": "string"}}}}}}}),
    );
    let cases = [
        (json!({"set": [{}]}), ".spec.set: element 0: associative list without keys has an element that's a map type"),
        (json!({"set": [null]}), ".spec.set: element 0: associative list without keys has an element that's an explicit null"),
        (json!({"lists": [["a"]]}), ".spec.lists: element 0: not supported: associative list with lists as elements"),
        (json!({"map": [1]}), ".spec.map: element 0: associative list with keys may not have non-map elements"),
        (json!({"map": [null]}), ".spec.map: element 0: associative list with keys may not have a null element"),
        (json!({"map": [{"k": "a"}, {"k": "a"}], "x": 1}),
         "errors:\n  .spec.map: duplicate entries for key [k=\"a\"]\n  .spec.x: field not declared in schema"),
    ];
    for (spec, want) in cases {
        let got = validate_config(&obj(spec.clone()), Some(Shape::Compiled(s.root())))
            .map_err(|e| e.to_string());
        assert_eq!(got, Err(want.to_string()), "{spec}");
    }
}

/// Two versions of a widget: v1 `spec.cronSpec` is v2 `spec.schedule`.
mod across_versions {
    use super::*;
    use crate::apply::versions::{Known, Need, Versions};

    const V1: &str = "example.com/v1";
    const V2: &str = "example.com/v2";

    fn convert(mut o: Value, to: &str) -> Value {
        let (from_key, to_key) = if to == V2 {
            ("cronSpec", "schedule")
        } else {
            ("schedule", "cronSpec")
        };
        if let Some(spec) = o.get_mut("spec").and_then(Value::as_object_mut) {
            if let Some(v) = spec.remove(from_key) {
                spec.insert(to_key.into(), v);
            }
        }
        o["apiVersion"] = json!(to);
        o
    }

    /// Both versions' schema (each has the other's field too: enough for these tests).
    fn widget_schema() -> std::sync::Arc<Schema> {
        std::sync::Arc::new(Schema::compile(&json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {
                "cronSpec": {"type": "string"}, "schedule": {"type": "string"},
                "image": {"type": "string"}}}}})))
    }

    /// Runs `run` as the registry's driver does: answering what it needs until it needs nothing.
    fn driven<T>(own: &str, run: impl Fn(&Versions<'_>) -> T) -> T {
        let mut known = Known::default();
        for _ in 0..8 {
            let versions = Versions::new(own, &known);
            let out = run(&versions);
            let needs = versions.into_needs();
            if needs.is_empty() {
                return out;
            }
            for need in needs {
                match need {
                    Need::Version(v) => {
                        known.learn_version(&v, v != "example.com/v0", Some(widget_schema()))
                    }
                    Need::Conversion { from, to, object } => {
                        let converted = convert(object.clone(), &to);
                        known.learn_conversion(&from, &to, object, converted);
                    }
                }
            }
        }
        panic!("never settled")
    }

    fn widget(api_version: &str, spec: Value) -> Value {
        json!({"apiVersion": api_version, "kind": "Widget", "metadata": {"name": "w"}, "spec": spec})
    }

    fn apply_as(
        live: Option<&Value>,
        version: &str,
        spec: Value,
        manager: &str,
        force: bool,
    ) -> Result<Value, Conflicts> {
        let config = widget(version, spec);
        let schema = widget_schema();
        driven(version, |v| {
            super::super::apply(
                live,
                &config,
                manager,
                "",
                v,
                force,
                Some(Shape::Compiled(schema.root())),
                T1,
            )
        })
    }

    #[test]
    fn conflicts_are_found_in_the_owners_version() {
        let a = apply_as(None, V1, json!({"cronSpec": "1"}), "a", false).unwrap();
        let live_v2 = convert(a.clone(), V2);
        let err = apply_as(Some(&live_v2), V2, json!({"schedule": "2"}), "b", false).unwrap_err();
        assert_eq!(err.0.len(), 1, "{err:?}");
        assert_eq!(err.0[0].manager, "a");
        assert_eq!(err.0[0].field, ".spec.cronSpec", "printed in a's version");
        // Applying the same value shares the field.
        let b = apply_as(Some(&live_v2), V2, json!({"schedule": "1"}), "b", false).unwrap();
        let mut managers: Vec<&str> = b["metadata"]["managedFields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["manager"].as_str().unwrap())
            .collect();
        managers.sort_unstable();
        assert_eq!(managers, ["a", "b"]);
        // Forced: a loses the field, in its own version's path.
        let b = apply_as(Some(&live_v2), V2, json!({"schedule": "2"}), "b", true).unwrap();
        let entries = b["metadata"]["managedFields"].as_array().unwrap();
        assert_eq!(entries.len(), 1, "a owned nothing else: {entries:?}");
        assert_eq!(entries[0]["manager"], "b");
        assert_eq!(
            entries[0]["fieldsV1"],
            json!({"f:spec": {"f:schedule": {}}})
        );
    }

    #[test]
    fn an_applier_switching_versions_prunes_in_the_version_it_last_applied() {
        let a = apply_as(None, V1, json!({"cronSpec": "1", "image": "x"}), "a", false).unwrap();
        // a now applies through v2 and stops applying image: image goes, schedule stays.
        let live_v2 = convert(a, V2);
        let a2 = apply_as(Some(&live_v2), V2, json!({"schedule": "1"}), "a", false).unwrap();
        assert_eq!(a2["spec"], json!({"schedule": "1"}));
        let entries = a2["metadata"]["managedFields"].as_array().unwrap();
        assert_eq!(entries.len(), 1);
        assert_eq!(entries[0]["apiVersion"], V2);
    }

    #[test]
    fn fields_another_version_owns_are_kept_when_an_applier_drops_them() {
        let a = apply_as(None, V1, json!({"cronSpec": "1"}), "a", false).unwrap();
        let live_v2 = convert(a, V2);
        let b = apply_as(
            Some(&live_v2),
            V2,
            json!({"schedule": "1", "image": "x"}),
            "b",
            false,
        )
        .unwrap();
        let b2 = apply_as(Some(&b), V2, json!({"image": "x"}), "b", false).unwrap();
        assert_eq!(b2["spec"]["schedule"], "1", "a (through v1) still owns it");
    }

    #[test]
    fn updates_take_fields_from_managers_of_other_versions() {
        let a = apply_as(None, V1, json!({"cronSpec": "1"}), "a", false).unwrap();
        let live_v2 = convert(a, V2);
        let mut new = live_v2.clone();
        new["spec"]["schedule"] = json!("2");
        let schema = widget_schema();
        let out = driven(V2, |v| {
            let mut out = new.clone();
            let root = Some(schema.root());
            super::super::record_update(
                Some(&live_v2),
                &mut out,
                "c",
                "",
                v,
                root.map(Shape::Compiled),
                T2,
            );
            out
        });
        let entries = out["metadata"]["managedFields"].as_array().unwrap();
        let managers: Vec<&str> = entries
            .iter()
            .map(|e| e["manager"].as_str().unwrap())
            .collect();
        assert_eq!(
            managers,
            ["c"],
            "a's only field, in v1's path, was taken: {entries:?}"
        );
    }

    #[test]
    fn managers_of_versions_no_longer_served_are_dropped() {
        let a = apply_as(None, "example.com/v0", json!({"cronSpec": "1"}), "a", false).unwrap();
        let mut live = a.clone();
        live["apiVersion"] = json!(V1);
        let b = apply_as(Some(&live), V1, json!({"image": "x"}), "b", false).unwrap();
        let managers: Vec<&str> = b["metadata"]["managedFields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["manager"].as_str().unwrap())
            .collect();
        assert_eq!(managers, ["b"]);
    }
}

/// Runs both paths of [`super::record_update`] on one write: the in-place edit of the stored
/// entries and the set algebra. Returns the set algebra's result, and whether the in-place path
/// took the write (its result then equals the other's).
fn record_both(
    old: Option<&Value>,
    new: &Value,
    manager: &str,
    subresource: &str,
    schema: Option<Shape<'_>>,
    now: &str,
) -> (Value, bool) {
    versions::single_version(V, |v| {
        let ctx = Ctx::new(schema, v, subresource, now);
        let id = Id::new(manager, "Update", V, subresource);
        let mut by_sets = new.clone();
        record_update_by_sets(old, &mut by_sets, &id, &ctx);
        let mut edited = new.clone();
        let took = in_place::record_update(old, &mut edited, &id, &ctx);
        if took {
            assert_eq!(edited, by_sets, "old {old:?}\nnew {new}");
        } else {
            assert_eq!(&edited, new, "a refused write is left as it was");
        }
        (by_sets, took)
    })
}

/// A write's next object: some fields changed, added or removed, the managedFields kept, dropped,
/// reset or made non-canonical.
fn next_object(rng: &mut fastrand::Rng, prev: &Value) -> Value {
    let mut next = prev.clone();
    for _ in 0..rng.usize(1..3) {
        if !next["spec"].is_object() {
            next["spec"] = json!({});
        }
        match rng.u32(0..7) {
            0 => next["spec"] = random_value(rng, 1),
            1 => next["spec"]["replicas"] = json!(rng.i64(0..3)),
            2 => next["metadata"]["labels"][["a", "b"][rng.usize(0..2)]] = json!(rng.u8(0..3)),
            3 => next["status"] = json!({"phase": (["x", "y"][rng.usize(0..2)])}),
            4 => next["spec"]["ports"] = json!([{"name": "p", "port": rng.u8(0..3)}]),
            5 => {
                if let Some(spec) = next.get_mut("spec").and_then(Value::as_object_mut) {
                    spec.remove(["replicas", "ports", "tags"][rng.usize(0..3)]);
                }
            }
            _ => next["spec"]["tags"] = json!(["t", (["u", "v"][rng.usize(0..2)])]),
        }
    }
    let meta = &mut next["metadata"];
    match rng.u32(0..12) {
        0 => meta["managedFields"] = json!([]),
        1 => {
            if let Some(m) = meta.as_object_mut() {
                m.remove("managedFields");
            }
        }
        2 => {
            meta["managedFields"] = json!([{"manager": "x", "operation": "Update",
            "apiVersion": V, "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {".": {}}}}])
        }
        3 => {
            meta["managedFields"] = json!([{"manager": "x", "operation": "Update",
            "apiVersion": V, "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": {".": {}, "f:replicas": {}}}}])
        }
        _ => {}
    }
    next
}

#[test]
fn in_place_updates_equal_the_set_algebra() {
    let s = schema();
    let mut rng = fastrand::Rng::with_seed(11);
    let (mut took, mut writes) = (0, 0);
    for round in 0..300 {
        let schema = if round % 3 == 2 {
            None
        } else {
            Some(Shape::Compiled(s.root()))
        };
        let first = json!({"apiVersion": V, "kind": "Widget",
            "metadata": {"name": "w", "labels": {"a": "1"}},
            "spec": random_value(&mut rng, 1)});
        let (mut live, _) = record_both(None, &first, "a", "", schema, T1);
        live["metadata"]["uid"] = json!("u1");
        for step in 0..8 {
            writes += 1;
            let manager = ["a", "b", "c"][rng.usize(0..3)];
            let now = [T1, T2, T3][step % 3];
            if rng.u32(0..4) == 0 {
                let config = json!({"apiVersion": V, "kind": "Widget",
                    "metadata": {"name": "w"}, "spec": {"ports": [{"name": "p", "port": 1}],
                    "tags": ["t"], "replicas": rng.i64(0..2)}});
                if let Ok(applied) = apply(Some(&live), &config, manager, "", V, true, schema, now)
                {
                    live = applied;
                }
                continue;
            }
            let subresource = if rng.u32(0..4) == 0 { "status" } else { "" };
            let next = next_object(&mut rng, &live);
            let (out, in_place) =
                record_both(Some(&live), &next, manager, subresource, schema, now);
            took += usize::from(in_place);
            live = out;
        }
    }
    assert!(
        took * 2 > writes,
        "the in-place path took {took} of {writes} writes"
    );
}

#[test]
fn in_place_edits_keep_fields_v1_canonical() {
    use super::fieldpath::FieldSet;
    let set = |v: Value| FieldSet::from_fields_v1(&v).expect("fieldsV1");
    // (stored fieldsV1, removed, inserted, expected)
    let cases = [
        (json!({"f:a": {}}), json!({"f:a": {}}), json!({}), json!({})),
        (
            json!({"f:a": {".": {}, "f:b": {}}}),
            json!({"f:a": {"f:b": {}}}),
            json!({}),
            json!({"f:a": {}}),
        ),
        (
            json!({"f:a": {".": {}, "f:b": {}}}),
            json!({"f:a": {}}),
            json!({}),
            json!({"f:a": {"f:b": {}}}),
        ),
        (
            json!({"f:a": {"f:b": {}}}),
            json!({"f:a": {"f:b": {}}}),
            json!({}),
            json!({}),
        ),
        (
            json!({"f:a": {}}),
            json!({}),
            json!({"f:a": {"f:b": {}}}),
            json!({"f:a": {".": {}, "f:b": {}}}),
        ),
        (
            json!({"f:x": {}}),
            json!({}),
            json!({"f:a": {".": {}, "f:b": {}}}),
            json!({"f:a": {".": {}, "f:b": {}}, "f:x": {}}),
        ),
        (
            json!({"f:a": {"f:b": {}}}),
            json!({}),
            json!({"f:a": {}}),
            json!({"f:a": {".": {}, "f:b": {}}}),
        ),
    ];
    for (stored, removed, inserted, expected) in cases {
        let mut level = stored.as_object().cloned().expect("object");
        in_place::remove_set(&mut level, &set(removed.clone()));
        in_place::insert_set(&mut level, &set(inserted.clone()));
        assert_eq!(
            Value::Object(level),
            expected,
            "{stored} - {removed} + {inserted}"
        );
        let by_sets = set(stored).difference(&set(removed)).union(&set(inserted));
        assert_eq!(by_sets.to_fields_v1(), expected);
    }
}

#[test]
fn created_fields_are_the_comparison_with_an_empty_object() {
    let s = schema();
    let mut rng = fastrand::Rng::with_seed(5);
    for i in 0..2000 {
        let v = json!({"metadata": random_value(&mut rng, 1), "spec": random_value(&mut rng, 1),
            "x": random_value(&mut rng, 2)});
        let root = Ty::Root((i % 2 == 0).then(|| Shape::Compiled(s.root())));
        let added = typed::compare_without_managed_fields(&json!({}), &v, root).added;
        let listed = FieldSet::from_fields_v1(&json!({"f:spec": {"f:ports": {
            "k:{\"name\":\"x\"}": {}, "k:{\"name\":\"tags\"}": {"f:port": {}}}}}))
        .expect("fieldsV1");
        for not_owned in [&FieldSet::default(), strip_set(), &listed] {
            let written = typed::added_fields_v1(&v, root, not_owned);
            let by_sets = added.difference(not_owned).to_fields_v1();
            assert_eq!(Value::Object(written), by_sets, "{v} - {not_owned:?}");
        }
    }
}

#[test]
fn times_in_server_form_are_those_typing_gives_back() {
    let cases = [
        "2024-01-01T00:00:01Z",
        "2024-02-29T23:59:59Z",
        "2023-02-29T00:00:00Z",
        "2100-02-29T00:00:00Z",
        "2000-02-29T00:00:00Z",
        "2024-04-31T00:00:00Z",
        "2024-13-01T00:00:00Z",
        "2024-00-10T00:00:00Z",
        "2024-01-00T00:00:00Z",
        "2024-01-01T24:00:00Z",
        "2024-01-01T00:60:00Z",
        "2024-01-01T00:00:60Z",
        "0001-01-01T00:00:00Z",
        "0000-01-01T00:00:00Z",
        "9999-12-31T23:59:59Z",
        "2024-01-01T00:00:01.5Z",
        "2024-01-01T00:00:01+00:00",
        "2024-01-01 00:00:01Z",
        "2024-1-01T00:00:01Z",
        "+024-01-01T00:00:01Z",
        "",
    ];
    for t in cases {
        assert_eq!(
            in_place::time_as_marshalled(t),
            in_place::time_round_trips(t),
            "{t}"
        );
    }
}

/// [`typed::to_set`] as it was written first, path by path: the reference the level-by-level
/// build is checked against.
fn walk_set_by_paths(v: &Value, ty: Ty, path: &mut Vec<PathElement>, out: &mut FieldSet) {
    match typed::kind(v, ty) {
        typed::K::Leaf => out.insert(path),
        typed::K::Map => {
            if ty.map_atomic() {
                out.insert(path);
                return;
            }
            let Some(m) = v.as_object() else { return };
            for (k, cv) in m {
                let (cty, named) = ty.field(k);
                path.push(PathElement::Field(k.clone()));
                walk_set_by_paths(cv, cty, path, out);
                if cv.is_null() || cv.as_object().is_some_and(Map::is_empty) || !named {
                    out.insert(path);
                }
                path.pop();
            }
        }
        typed::K::List => {
            let lt = ty.list();
            if matches!(lt.kind, typed::ListKind::Atomic) {
                out.insert(path);
                return;
            }
            let Some(items) = v.as_array() else { return };
            let Some(pes) = typed::list_pes(items, &lt) else {
                out.insert(path);
                return;
            };
            let mut counts: BTreeMap<&PathElement, usize> = BTreeMap::new();
            for pe in &pes {
                *counts.entry(pe).or_default() += 1;
            }
            for (pe, n) in &counts {
                if *n > 1 {
                    path.push((*pe).clone());
                    out.insert(path);
                    path.pop();
                }
            }
            for (item, pe) in items.iter().zip(&pes) {
                if counts.get(pe).copied().unwrap_or(0) > 1 {
                    continue;
                }
                path.push(pe.clone());
                walk_set_by_paths(item, lt.elem, path, out);
                out.insert(path);
                path.pop();
            }
        }
    }
}

#[test]
fn sets_built_level_by_level_equal_those_built_path_by_path() {
    let s = schema();
    let mut rng = fastrand::Rng::with_seed(9);
    for i in 0..3000 {
        let v = json!({"metadata": random_value(&mut rng, 1), "spec": random_value(&mut rng, 1),
            "x": random_value(&mut rng, 2)});
        let root = Ty::Root((i % 2 == 0).then(|| Shape::Compiled(s.root())));
        let mut by_paths = FieldSet::default();
        walk_set_by_paths(&v, root, &mut Vec::new(), &mut by_paths);
        assert_eq!(typed::to_set(&v, root), by_paths, "{v}");
    }
}

/// [`typed::compare`] as it was written first, path by path: the reference the level-by-level
/// comparison is checked against.
fn compare_at_by_paths(
    l: Option<&Value>,
    r: Option<&Value>,
    ty: Ty,
    path: &mut Vec<PathElement>,
    c: &mut typed::Comparison,
) {
    let leafed = match (l, r) {
        (None, None) => return,
        (Some(lv), None) => compare_handle_by_paths(typed::kind(lv, ty), l, r, ty, path, c),
        (None, Some(rv)) => compare_handle_by_paths(typed::kind(rv, ty), l, r, ty, path, c),
        (Some(lv), Some(rv)) => {
            let (kl, kr) = (typed::kind(lv, ty), typed::kind(rv, ty));
            if kl != kr {
                compare_handle_by_paths(kl, l, r, ty, path, c);
            }
            compare_handle_by_paths(kr, l, r, ty, path, c)
        }
    };
    if !leafed {
        if l.is_none() {
            c.added.insert(path);
        } else if r.is_none() {
            c.removed.insert(path);
        }
    }
}

fn compare_leaf_by_paths(
    l: Option<&Value>,
    r: Option<&Value>,
    path: &[PathElement],
    c: &mut typed::Comparison,
) -> bool {
    match (l, r) {
        (None, _) => c.added.insert(path),
        (_, None) => c.removed.insert(path),
        (Some(a), Some(b)) => {
            if !fieldpath::values_equal(a, b) {
                c.modified.insert(path)
            }
        }
    }
    true
}

/// Returns whether the position was handled as a leaf.
fn compare_handle_by_paths(
    k: typed::K,
    l: Option<&Value>,
    r: Option<&Value>,
    ty: Ty,
    path: &mut Vec<PathElement>,
    c: &mut typed::Comparison,
) -> bool {
    match k {
        typed::K::Leaf => compare_leaf_by_paths(l, r, path, c),
        typed::K::Map => {
            let lm = l.and_then(Value::as_object);
            let rm = r.and_then(Value::as_object);
            let empty = |m: Option<&Map<String, Value>>| m.is_none_or(Map::is_empty);
            if ty.map_atomic() || (empty(lm) && empty(rm)) {
                return compare_leaf_by_paths(l, r, path, c);
            }
            let skip = false;
            let keys: std::collections::BTreeSet<&String> = lm
                .into_iter()
                .flat_map(Map::keys)
                .chain(rm.into_iter().flat_map(Map::keys))
                .collect();
            for key in keys {
                let (lv, rv) = (lm.and_then(|m| m.get(key)), rm.and_then(|m| m.get(key)));
                // Equal values differ nowhere below: no need to walk them.
                if lv.is_some() && lv == rv || skip && key == "managedFields" {
                    continue;
                }
                let cty = ty.field(key).0;
                path.push(PathElement::Field(key.clone()));
                compare_at_by_paths(lv, rv, cty, path, c);
                path.pop();
            }
            false
        }
        typed::K::List => {
            let la = l.and_then(Value::as_array);
            let ra = r.and_then(Value::as_array);
            let lt = ty.list();
            let empty = |a: Option<&Vec<Value>>| a.is_none_or(Vec::is_empty);
            if matches!(lt.kind, typed::ListKind::Atomic) || (empty(la) && empty(ra)) {
                return compare_leaf_by_paths(l, r, path, c);
            }
            let la = la.map(Vec::as_slice).unwrap_or(&[]);
            let ra = ra.map(Vec::as_slice).unwrap_or(&[]);
            let (Some(lpes), Some(rpes)) = (typed::list_pes(la, &lt), typed::list_pes(ra, &lt))
            else {
                return compare_leaf_by_paths(l, r, path, c);
            };
            compare_list_items_by_paths(la, &lpes, ra, &rpes, &lt, path, c);
            false
        }
    }
}

fn compare_list_items_by_paths(
    la: &[Value],
    lpes: &[PathElement],
    ra: &[Value],
    rpes: &[PathElement],
    lt: &typed::ListTy,
    path: &mut Vec<PathElement>,
    c: &mut typed::Comparison,
) {
    for (pe, ll, rl) in typed::items_by_key(la, lpes, ra, rpes) {
        let (ll, rl) = (ll.as_slice(), rl.as_slice());
        if let ([a], [b]) = (ll, rl) {
            if a == b {
                continue;
            }
        }
        path.push(pe.clone());
        if ll.len() <= 1 && rl.len() <= 1 {
            compare_at_by_paths(ll.first().copied(), rl.first().copied(), lt.elem, path, c);
        } else if ll.len() >= 2 && rl.len() >= 2 {
            let same = ll.len() == rl.len()
                && ll
                    .iter()
                    .zip(rl)
                    .all(|(a, b)| fieldpath::values_equal(a, b));
            if !same {
                c.modified.insert(path);
            }
        } else if ll.len() >= 2 {
            if let Some(first) = rl.first() {
                compare_at_by_paths(None, Some(first), lt.elem, path, c);
            }
            c.removed.insert(path);
        } else {
            if let Some(first) = ll.first() {
                compare_at_by_paths(Some(first), None, lt.elem, path, c);
            }
            c.added.insert(path);
        }
        path.pop();
    }
}

//

#[test]
fn comparisons_built_level_by_level_equal_those_built_path_by_path() {
    let s = schema();
    let mut rng = fastrand::Rng::with_seed(13);
    for i in 0..3000 {
        let root = Ty::Root((i % 2 == 0).then(|| Shape::Compiled(s.root())));
        let l = json!({"metadata": random_value(&mut rng, 1), "spec": random_value(&mut rng, 1)});
        let mut r = if i % 3 == 0 { l.clone() } else { json!({}) };
        r["spec"] = random_value(&mut rng, 1);
        if i % 5 == 0 {
            r["metadata"] = random_value(&mut rng, 1);
        }
        let mut by_paths = typed::Comparison::default();
        compare_at_by_paths(Some(&l), Some(&r), root, &mut Vec::new(), &mut by_paths);
        let c = typed::compare(&l, &r, root);
        assert_eq!(c.added, by_paths.added, "{l} -> {r}");
        assert_eq!(c.modified, by_paths.modified, "{l} -> {r}");
        assert_eq!(c.removed, by_paths.removed, "{l} -> {r}");
    }
}
