//! core/v1 ConfigMaps through kube-rs's typed API: CRUD, watch, the apiserver's validation,
//! strategic merge patch and server-side apply, and the typed decode (unknown fields).

use std::collections::BTreeMap;

use futures_util::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{
    Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use rstest::rstest;
use serde_json::json;

use crate::harness::{api_error, server, TestServer};

fn config_map(name: &str, data: &[(&str, &str)]) -> ConfigMap {
    ConfigMap {
        metadata: kube::api::ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        data: Some(
            data.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<BTreeMap<_, _>>(),
        ),
        ..Default::default()
    }
}

#[rstest]
#[tokio::test]
async fn crud_and_watch(#[future(awt)] server: TestServer) {
    let api: Api<ConfigMap> = Api::namespaced(server.client.clone(), "default");
    let created = api
        .create(
            &PostParams::default(),
            &config_map("settings", &[("a", "1")]),
        )
        .await
        .expect("create");
    assert_eq!(created.metadata.namespace.as_deref(), Some("default"));
    assert!(created.metadata.uid.is_some());
    let rv = created
        .metadata
        .resource_version
        .clone()
        .unwrap_or_default();

    let mut watch = api
        .watch(&WatchParams::default(), &rv)
        .await
        .expect("watch")
        .boxed();
    let mut changed = created.clone();
    changed.data = Some(BTreeMap::from([("a".into(), "2".into())]));
    let updated = api
        .replace("settings", &PostParams::default(), &changed)
        .await
        .expect("replace");
    assert_eq!(
        updated
            .data
            .as_ref()
            .and_then(|d| d.get("a"))
            .map(String::as_str),
        Some("2")
    );
    match watch.next().await {
        Some(Ok(WatchEvent::Modified(cm))) => {
            assert_eq!(cm.metadata.name.as_deref(), Some("settings"))
        }
        other => panic!("expected MODIFIED, got {other:?}"),
    }

    let listed = api.list(&ListParams::default()).await.expect("list");
    let names: Vec<_> = listed
        .items
        .iter()
        .filter_map(|cm| cm.metadata.name.as_deref())
        .collect();
    assert_eq!(
        names,
        ["kube-root-ca.crt", "settings"],
        "beside the root CA"
    );
    api.delete("settings", &DeleteParams::default())
        .await
        .expect("delete");
    assert_eq!(
        api_error(api.get("settings").await.expect_err("gone")).code,
        404
    );
}

#[rstest]
#[tokio::test]
async fn validation_as_the_apiserver_words_it(#[future(awt)] server: TestServer) {
    let api: Api<ConfigMap> = Api::namespaced(server.client.clone(), "default");
    let rv = server.rv();
    let err = api_error(
        api.create(&PostParams::default(), &config_map("bad", &[("a/b", "x")]))
            .await
            .expect_err("invalid key"),
    );
    assert_eq!(err.code, 422);
    assert_eq!(
        err.message,
        "ConfigMap \"bad\" is invalid: data[a/b]: Invalid value: \"a/b\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"
    );
    assert_eq!(server.rv(), rv, "a rejected create changes nothing");

    let mut twice = config_map("twice", &[("a", "1"), ("b", "2")]);
    twice.binary_data = Some(BTreeMap::from([(
        "a".into(),
        k8s_openapi::ByteString(b"1".to_vec()),
    )]));
    let err = api_error(
        api.create(&PostParams::default(), &twice)
            .await
            .expect_err("a key in both data and binaryData"),
    );
    assert_eq!(err.code, 422);
    assert_eq!(
        err.message,
        "ConfigMap \"twice\" is invalid: data[a]: Invalid value: \"a\": duplicate of key present in binaryData"
    );
    assert_eq!(server.rv(), rv, "a rejected create changes nothing");

    let mut frozen = config_map("frozen", &[("a", "1")]);
    frozen.immutable = Some(true);
    let mut stored = api
        .create(&PostParams::default(), &frozen)
        .await
        .expect("create");
    stored.data = Some(BTreeMap::from([("a".into(), "2".into())]));
    let err = api_error(
        api.replace("frozen", &PostParams::default(), &stored)
            .await
            .expect_err("immutable"),
    );
    assert_eq!(
        err.message,
        "ConfigMap \"frozen\" is invalid: data: Forbidden: field is immutable when `immutable` is set"
    );
}

#[rstest]
#[tokio::test]
async fn patches_apply_and_unknown_fields(#[future(awt)] server: TestServer) {
    let api: Api<ConfigMap> = Api::namespaced(server.client.clone(), "default");
    api.create(
        &PostParams::default(),
        &config_map("p", &[("a", "1"), ("b", "2")]),
    )
    .await
    .expect("create");
    let patched = api
        .patch(
            "p",
            &PatchParams::default(),
            &Patch::Strategic(json!({"data": {"a": null, "c": "3"}})),
        )
        .await
        .expect("strategic merge patch");
    let keys: Vec<&String> = patched
        .data
        .as_ref()
        .map(|d| d.keys().collect())
        .unwrap_or_default();
    assert_eq!(keys, ["b", "c"]);

    let applied = api
        .patch(
            "q",
            &PatchParams::apply("tester"),
            &Patch::Apply(json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "q"}, "data": {"x": "y"}})),
        )
        .await
        .expect("server-side apply creates");
    let managers: Vec<String> = applied
        .metadata
        .managed_fields
        .unwrap_or_default()
        .into_iter()
        .filter_map(|m| m.manager)
        .collect();
    assert_eq!(managers, ["tester"]);

    // An unknown field is dropped with a warning (fieldValidation=Warn), refused when Strict.
    let resp = server
        .http
        .post(server.url("/api/v1/namespaces/default/configmaps?fieldValidation=Strict"))
        .json(&json!({"metadata": {"name": "u"}, "bogus": 1}))
        .send()
        .await
        .expect("sent");
    assert_eq!(resp.status().as_u16(), 400);
    let body: serde_json::Value = resp.json().await.expect("json");
    assert_eq!(
        body["message"],
        "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: strict decoding error: unknown field \"bogus\""
    );
}

/// A store keeps the JSON trees of its most recent 4 MiB of writes only; an object older than
/// that is read from its bytes. Reads, selectors, patches, deletes and their watch events must
/// not tell the difference.
#[rstest]
#[tokio::test]
async fn objects_older_than_the_kept_trees_behave_the_same(#[future(awt)] server: TestServer) {
    let api: Api<ConfigMap> = Api::namespaced(server.client.clone(), "default");
    let mut first = config_map("first", &[("a", "1")]);
    first.metadata.labels = Some(BTreeMap::from([("age".into(), "old".into())]));
    let first = api
        .create(&PostParams::default(), &first)
        .await
        .expect("create");
    let big = "x".repeat(600 << 10);
    let push_out = |from: usize| {
        let (api, big) = (api.clone(), big.clone());
        async move {
            for i in from..from + 8 {
                api.create(
                    &PostParams::default(),
                    &config_map(&format!("big-{i}"), &[("blob", &big)]),
                )
                .await
                .expect("create a big one");
            }
        }
    };
    push_out(0).await;
    let read = api.get("first").await.expect("get");
    assert_eq!(
        read.metadata.resource_version,
        first.metadata.resource_version
    );
    let old = api
        .list(&ListParams::default().labels("age=old"))
        .await
        .expect("list by label");
    let names: Vec<_> = old
        .items
        .iter()
        .filter_map(|c| c.metadata.name.clone())
        .collect();
    assert_eq!(names, ["first"]);

    // The list read it back in; push it out again before the patch.
    push_out(8).await;
    let patched = api
        .patch(
            "first",
            &PatchParams::default(),
            &Patch::Strategic(json!({"data": {"b": "2"}})),
        )
        .await
        .expect("patch");
    let data = patched.data.clone().unwrap_or_default();
    assert_eq!(data.get("a").map(String::as_str), Some("1"));
    assert_eq!(data.get("b").map(String::as_str), Some("2"));
    assert_eq!(
        api.get("first")
            .await
            .expect("get")
            .metadata
            .resource_version,
        patched.metadata.resource_version
    );
    push_out(16).await;
    let before = api
        .list(&ListParams::default().limit(1))
        .await
        .expect("list")
        .metadata
        .resource_version
        .unwrap_or_default();
    let mut watch = api
        .watch(&WatchParams::default(), &before)
        .await
        .expect("watch")
        .boxed();
    api.delete("first", &DeleteParams::default())
        .await
        .expect("delete");
    let Some(Ok(WatchEvent::Deleted(last))) = watch.next().await else {
        panic!("a DELETED event");
    };
    assert_eq!(last.metadata.name.as_deref(), Some("first"));
    assert_eq!(last.data, patched.data, "the last state, as it was");
    let deleted_rv: u64 = last
        .metadata
        .resource_version
        .as_deref()
        .and_then(|v| v.parse().ok())
        .expect("a resourceVersion");
    let before: u64 = before.parse().expect("a resourceVersion");
    assert_eq!(deleted_rv, before + 1, "stamped with the deletion's own");
}

/// The cap on update managers: past ten entries of non-apply writes, the oldest are merged
/// into `ancient-changes` after each update, while appliers are neither merged nor counted.
#[rstest]
#[tokio::test]
async fn more_than_ten_updaters_merge_the_oldest_into_ancient_changes(
    #[future(awt)] server: TestServer,
) {
    let api: Api<ConfigMap> = Api::namespaced(server.client.clone(), "default");
    let created = api
        .create(
            &PostParams {
                field_manager: Some("creator".into()),
                ..Default::default()
            },
            &config_map("capped", &[("a", "1")]),
        )
        .await
        .expect("create");
    assert_eq!(managers(&created), ["creator"]);
    api.patch(
        "capped",
        &PatchParams::apply("applier"),
        &Patch::Apply(json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "capped"}, "data": {"applied": "yes"}})),
    )
    .await
    .expect("apply");
    let mut last = created;
    for i in 0..10 {
        let params = PatchParams {
            field_manager: Some(format!("m{i:02}")),
            ..Default::default()
        };
        let patch = json!({"metadata": {"labels": {format!("l{i:02}"): "x"}}});
        last = api
            .patch("capped", &params, &Patch::Merge(&patch))
            .await
            .expect("merge patch");
    }
    // creator and m00 (the oldest: creator by time, or both in one second, by name) merged.
    let mut names = managers(&last);
    names.sort();
    let mut want = vec!["ancient-changes".to_string(), "applier".to_string()];
    want.extend((1..10).map(|i| format!("m{i:02}")));
    assert_eq!(names, want);
    let entries = last.metadata.managed_fields.unwrap_or_default();
    let ancient = entries
        .iter()
        .find(|e| e.manager.as_deref() == Some("ancient-changes"))
        .expect("the bucket");
    assert_eq!(ancient.operation.as_deref(), Some("Update"));
    assert_eq!(ancient.api_version.as_deref(), Some("v1"));
    let owned = serde_json::to_value(&ancient.fields_v1).expect("fieldsV1");
    assert_eq!(
        owned,
        json!({"f:data": {".": {}, "f:a": {}}, "f:metadata": {"f:labels": {".": {}, "f:l00": {}}}}),
        "creator's fields and m00's"
    );
    let stored = api.get("capped").await.expect("get");
    assert_eq!(
        stored.metadata.managed_fields.map(|m| m.len()),
        Some(11),
        "ten updaters and the applier"
    );
}

fn managers(cm: &ConfigMap) -> Vec<String> {
    cm.metadata
        .managed_fields
        .iter()
        .flatten()
        .filter_map(|m| m.manager.clone())
        .collect()
}
