//! core/v1 Secrets: `stringData`, the required keys of each type, immutability, the `type`
//! field selector and kubectl's columns.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Secret;
use k8s_openapi::ByteString;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use rstest::rstest;
use serde_json::json;

use super::{columns, narrow_columns, protobuf, row, table};
use crate::harness::{api_error, server, TestServer};

fn secret(name: &str, type_: Option<&str>, string_data: &[(&str, &str)]) -> Secret {
    Secret {
        metadata: kube::api::ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        type_: type_.map(str::to_string),
        string_data: Some(
            string_data
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        ),
        ..Default::default()
    }
}

fn value<'a>(s: &'a Secret, key: &str) -> Option<&'a [u8]> {
    s.data.as_ref()?.get(key).map(|b| b.0.as_slice())
}

#[rstest]
#[tokio::test]
async fn string_data_defaults_and_crud(#[future(awt)] server: TestServer) {
    let api: Api<Secret> = Api::namespaced(server.client.clone(), "default");
    let mut s = secret("creds", None, &[("user", "admin")]);
    s.data = Some(BTreeMap::from([
        ("user".into(), ByteString(b"old".to_vec())),
        ("keep".into(), ByteString(b"k".to_vec())),
    ]));
    let created = api
        .create(&PostParams::default(), &s)
        .await
        .expect("create");
    assert_eq!(created.type_.as_deref(), Some("Opaque"));
    assert_eq!(
        value(&created, "user"),
        Some(&b"admin"[..]),
        "stringData wins"
    );
    assert_eq!(value(&created, "keep"), Some(&b"k"[..]));
    assert!(created.string_data.is_none(), "stringData is never stored");
    assert!(created.metadata.generation.is_none());

    let raw = server
        .get("/api/v1/namespaces/default/secrets/creds")
        .await
        .1;
    assert_eq!(raw["data"]["user"], "YWRtaW4=");
    assert!(raw.get("stringData").is_none());

    // An update's stringData is merged the same way.
    let mut update = created.clone();
    update.string_data = Some(BTreeMap::from([("extra".into(), "x".into())]));
    let updated = api
        .replace("creds", &PostParams::default(), &update)
        .await
        .expect("replace");
    assert_eq!(value(&updated, "extra"), Some(&b"x"[..]));
    assert_eq!(updated.data.as_ref().map(BTreeMap::len), Some(3));

    let decoded = protobuf(&server, "/api/v1/namespaces/default/secrets/creds").await;
    assert_eq!(decoded["kind"], "Secret");
    assert_eq!(decoded["data"]["extra"], "eA==");

    api.delete("creds", &DeleteParams::default())
        .await
        .expect("delete");
    assert_eq!(
        api_error(api.get("creds").await.expect_err("gone")).code,
        404
    );
}

#[rstest]
#[tokio::test]
async fn types_require_their_keys(#[future(awt)] server: TestServer) {
    let api: Api<Secret> = Api::namespaced(server.client.clone(), "default");
    let rv = server.rv();
    let err = api_error(
        api.create(
            &PostParams::default(),
            &secret("cert", Some("kubernetes.io/tls"), &[("tls.crt", "c")]),
        )
        .await
        .expect_err("tls.key missing"),
    );
    assert_eq!(err.code, 422);
    assert_eq!(
        err.message,
        "Secret \"cert\" is invalid: data[tls.key]: Required value"
    );
    let err = api_error(
        api.create(
            &PostParams::default(),
            &secret(
                "pull",
                Some("kubernetes.io/dockerconfigjson"),
                &[(".dockerconfigjson", "{\"auths\":")],
            ),
        )
        .await
        .expect_err("bad json"),
    );
    assert_eq!(
        err.message,
        "Secret \"pull\" is invalid: data[.dockerconfigjson]: Invalid value: \"<secret contents redacted>\": unexpected end of JSON input"
    );
    let err = api_error(
        api.create(
            &PostParams::default(),
            &secret("token", Some("kubernetes.io/service-account-token"), &[]),
        )
        .await
        .expect_err("annotation missing"),
    );
    assert_eq!(
        err.message,
        "Secret \"token\" is invalid: metadata.annotations[kubernetes.io/service-account.name]: Required value"
    );
    let big = "x".repeat(1024 * 1024 + 1);
    let err = api_error(
        api.create(&PostParams::default(), &secret("big", None, &[("a", &big)]))
            .await
            .expect_err("too big"),
    );
    assert_eq!(
        err.message,
        "Secret \"big\" is invalid: data: Too long: may not be more than 1048576 bytes"
    );
    assert_eq!(server.rv(), rv, "rejected creates change nothing");

    let ok = api
        .create(
            &PostParams::default(),
            &secret(
                "basic",
                Some("kubernetes.io/basic-auth"),
                &[("password", "")],
            ),
        )
        .await
        .expect("basic-auth needs only one of its keys");
    // The type may not change, and an immutable Secret keeps its data.
    let mut retyped = ok.clone();
    retyped.type_ = Some("Opaque".into());
    let err = api_error(
        api.replace("basic", &PostParams::default(), &retyped)
            .await
            .expect_err("type is immutable"),
    );
    assert_eq!(
        err.message,
        "Secret \"basic\" is invalid: type: Invalid value: \"Opaque\": field is immutable"
    );
    let mut frozen = secret("frozen", None, &[("a", "1")]);
    frozen.immutable = Some(true);
    api.create(&PostParams::default(), &frozen)
        .await
        .expect("create");
    let err = api_error(
        api.patch(
            "frozen",
            &PatchParams::default(),
            &Patch::Merge(json!({"stringData": {"a": "2"}})),
        )
        .await
        .expect_err("immutable"),
    );
    assert_eq!(
        err.message,
        "Secret \"frozen\" is invalid: data: Forbidden: field is immutable when `immutable` is set"
    );
}

#[rstest]
#[tokio::test]
async fn field_selector_table_and_merges(#[future(awt)] server: TestServer) {
    let api: Api<Secret> = Api::namespaced(server.client.clone(), "default");
    api.create(
        &PostParams::default(),
        &secret("plain", None, &[("a", "1")]),
    )
    .await
    .expect("create");
    api.create(
        &PostParams::default(),
        &secret(
            "web-tls",
            Some("kubernetes.io/tls"),
            &[("tls.crt", "c"), ("tls.key", "k")],
        ),
    )
    .await
    .expect("create");
    let tls = api
        .list(&ListParams::default().fields("type=kubernetes.io/tls"))
        .await
        .expect("list");
    let names: Vec<_> = tls
        .items
        .iter()
        .filter_map(|s| s.metadata.name.clone())
        .collect();
    assert_eq!(names, ["web-tls"]);
    let (status, body) = server
        .get("/api/v1/namespaces/default/secrets?fieldSelector=spec.x%3D1")
        .await;
    assert_eq!(status, 400);
    assert_eq!(body["message"], "field label not supported: spec.x");

    let t = table(&server, "/api/v1/namespaces/default/secrets").await;
    assert_eq!(columns(&t), ["Name", "Type", "Data", "Age"]);
    assert_eq!(narrow_columns(&t), columns(&t));
    let cells = row(&t, "web-tls");
    assert_eq!(cells[1], "kubernetes.io/tls");
    assert_eq!(cells[2], 2);

    // Strategic merge patch merges data maps; apply owns what it sets.
    let patched = api
        .patch(
            "plain",
            &PatchParams::default(),
            &Patch::Strategic(json!({"data": {"b": "Mg=="}})),
        )
        .await
        .expect("patch");
    assert_eq!(patched.data.as_ref().map(BTreeMap::len), Some(2));
    let applied = api
        .patch(
            "applied",
            &PatchParams::apply("tester"),
            &Patch::Apply(json!({"apiVersion": "v1", "kind": "Secret",
                "metadata": {"name": "applied"}, "stringData": {"k": "v"}})),
        )
        .await
        .expect("apply");
    assert_eq!(value(&applied, "k"), Some(&b"v"[..]));
    assert_eq!(applied.type_.as_deref(), Some("Opaque"));
}
