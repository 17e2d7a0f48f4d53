//! Structural schemas over HTTP: validation errors, pruning with fieldValidation, defaulting,
//! nullable, ratcheting, and schema checks at CRD create.

use kube::api::{Patch, PatchParams};
use rstest::rstest;
use serde_json::{json, Value};

use crate::harness::{api_error, fixture_yaml, server, TestServer};

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const CRONTABS: &str = "/apis/stable.example.com/v1/namespaces/default/crontabs";

fn crd_with_spec_schema(spec: Value) -> Value {
    let mut crd = crate::harness::crontab_crd();
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"] = spec;
    crd
}

#[rstest]
#[tokio::test]
async fn invalid_objects_get_every_error_at_once(#[future(awt)] server: TestServer) {
    assert_eq!(
        server
            .post(CRDS, &fixture_yaml("validation/resourcedefinition.yaml"))
            .await
            .0,
        201
    );
    let rv = server.rv();
    let (status, body) = server
        .post(CRONTABS, &fixture_yaml("validation/invalid-crontab.yaml"))
        .await;
    assert_eq!(status, 422);
    assert_eq!(body["reason"], "Invalid");
    assert_eq!(body["details"]["kind"], "CronTab");
    assert_eq!(body["details"]["group"], "stable.example.com");
    assert_eq!(
        body["message"],
        r#"CronTab.stable.example.com "my-new-cron-object" is invalid: [spec.cronSpec: Invalid value: "* * * *": spec.cronSpec in body should match '^(\d+|\*)(/\d+)?(\s+(\d+|\*)(/\d+)?){4}$', spec.replicas: Invalid value: 15: spec.replicas in body should be less than or equal to 10]"#
    );
    let causes = body["details"]["causes"].as_array().expect("causes");
    assert_eq!(causes.len(), 2);
    assert_eq!(
        causes[1],
        json!({"reason": "FieldValueInvalid", "message": "Invalid value: 15: spec.replicas in body should be less than or equal to 10", "field": "spec.replicas"})
    );
    assert_eq!(server.rv(), rv, "nothing stored");
    assert_eq!(
        server
            .post(CRONTABS, &fixture_yaml("validation/my-crontab.yaml"))
            .await
            .0,
        201
    );

    // Type errors.
    let mut wrong = fixture_yaml("validation/my-crontab.yaml");
    wrong["metadata"]["name"] = json!("wrong");
    wrong["spec"]["replicas"] = json!("five");
    let (status, body) = server.post(CRONTABS, &wrong).await;
    assert_eq!(status, 422);
    assert!(body["message"].as_str().expect("msg").contains(r#"spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string""#), "{body}");
}

#[rstest]
#[tokio::test]
async fn unknown_fields_follow_field_validation(#[future(awt)] server: TestServer) {
    assert_eq!(
        server
            .post(CRDS, &fixture_yaml("validation/resourcedefinition.yaml"))
            .await
            .0,
        201
    );
    let body = fixture_yaml("validation/unknown-field.yaml");
    // Default (Warn): pruned, with a Warning header.
    let resp = server
        .http
        .post(server.url(CRONTABS))
        .json(&body)
        .send()
        .await
        .expect("post");
    assert_eq!(resp.status(), 201);
    assert_eq!(
        resp.headers()["warning"],
        r#"299 - "unknown field \"spec.someRandomField\"""#
    );
    let created: Value = resp.json().await.expect("json");
    assert!(created["spec"].get("someRandomField").is_none());
    // Strict: refused.
    let mut other = body.clone();
    other["metadata"]["name"] = json!("strict");
    let (status, err) = server
        .send(
            server
                .http
                .post(server.url(&format!("{CRONTABS}?fieldValidation=Strict")))
                .json(&other),
        )
        .await;
    assert_eq!(status, 400);
    assert_eq!(
        err["message"],
        r#"CronTab in version "v1" cannot be handled as a CronTab: strict decoding error: unknown field "spec.someRandomField""#
    );
    // Ignore: pruned silently.
    other["metadata"]["name"] = json!("ignored");
    let resp = server
        .http
        .post(server.url(&format!("{CRONTABS}?fieldValidation=Ignore")))
        .json(&other)
        .send()
        .await
        .expect("post");
    assert_eq!(resp.status(), 201);
    assert!(resp.headers().get("warning").is_none());

    // kube-rs patches can ask for Strict too.
    let api = server.crontabs("default");
    let strict = PatchParams {
        field_validation: Some(kube::api::ValidationDirective::Strict),
        ..Default::default()
    };
    let err = api
        .patch(
            "ignored",
            &strict,
            &Patch::Merge(json!({"spec": {"unknownToo": 1}})),
        )
        .await
        .expect_err("strict");
    assert_eq!(api_error(err).code, 400);
}

#[rstest]
#[tokio::test]
async fn defaults_are_applied_on_write_and_on_read(#[future(awt)] server: TestServer) {
    let crd = crd_with_spec_schema(json!({"type": "object", "properties": {
        "cronSpec": {"type": "string", "pattern": "^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$", "default": "5 0 * * *"},
        "image": {"type": "string"},
        "replicas": {"type": "integer", "minimum": 1, "maximum": 10, "default": 1}}}));
    let (status, body) = server.post(CRDS, &crd).await;
    assert_eq!(status, 201, "{body}");
    let (_, created) = server
        .post(CRONTABS, &json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab", "metadata": {"name": "d"}, "spec": {"image": "my-awesome-cron-image"}}))
        .await;
    assert_eq!(
        created["spec"],
        json!({"cronSpec": "5 0 * * *", "image": "my-awesome-cron-image", "replicas": 1})
    );

    // An object stored before a default existed gets it when read, without a write.
    let mut plain = crate::harness::crontab_crd();
    plain["metadata"]["name"] = json!("tabs.stable.example.com");
    plain["spec"]["names"] = json!({"plural": "tabs", "kind": "Tab"});
    let (_, tab_crd) = server.post(CRDS, &plain).await;
    let (_, old) = server.post("/apis/stable.example.com/v1/namespaces/default/tabs", &json!({"apiVersion": "stable.example.com/v1", "kind": "Tab", "metadata": {"name": "old"}, "spec": {"image": "i"}})).await;
    let mut updated = tab_crd.clone();
    updated["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
        ["properties"]["replicas"]["default"] = json!(3);
    let resp = server
        .http
        .put(server.url(&format!("{CRDS}/tabs.stable.example.com")))
        .json(&updated)
        .send()
        .await
        .expect("put");
    assert_eq!(resp.status(), 200);
    let rv = server.rv();
    let (_, read) = server
        .get("/apis/stable.example.com/v1/namespaces/default/tabs/old")
        .await;
    assert_eq!(read["spec"]["replicas"], 3);
    assert_eq!(
        read["metadata"]["resourceVersion"], old["metadata"]["resourceVersion"],
        "not written back"
    );
    assert_eq!(server.rv(), rv);
}

#[rstest]
#[tokio::test]
async fn nullable_and_defaults(#[future(awt)] server: TestServer) {
    let crd = crd_with_spec_schema(json!({"type": "object", "properties": {
        "foo": {"type": "string", "default": "default"},
        "bar": {"type": "string", "nullable": true},
        "baz": {"type": "string"}}}));
    assert_eq!(server.post(CRDS, &crd).await.0, 201);
    let (status, created) = server
        .post(CRONTABS, &json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab", "metadata": {"name": "n"},
            "spec": {"foo": null, "bar": null, "baz": null}}))
        .await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["spec"], json!({"foo": "default", "bar": null}));
}

#[rstest]
#[tokio::test]
async fn ratcheting_keeps_unchanged_invalid_values(#[future(awt)] server: TestServer) {
    let created = server.install_crontab_crd().await;
    server
        .post(CRONTABS, &json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab", "metadata": {"name": "r"},
            "spec": {"replicas": 50, "image": "i", "cronSpec": "* * * * *"}}))
        .await;
    // Tighten the schema: 50 is now too many.
    let mut tightened = created.clone();
    tightened["metadata"]["resourceVersion"] = server
        .get(&format!("{CRDS}/crontabs.stable.example.com"))
        .await
        .1["metadata"]["resourceVersion"]
        .clone();
    tightened["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
        ["properties"]["replicas"]["maximum"] = json!(10);
    let resp = server
        .http
        .put(server.url(&format!("{CRDS}/crontabs.stable.example.com")))
        .json(&tightened)
        .send()
        .await
        .expect("put");
    assert_eq!(resp.status(), 200);
    let api = server.crontabs("default");
    // Changing another field is fine: the unchanged invalid value is not re-reported.
    api.patch(
        "r",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"image": "j"}})),
    )
    .await
    .expect("ratcheted");
    // Changing the invalid value to another invalid value is reported.
    let err = api
        .patch(
            "r",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 51}})),
        )
        .await
        .expect_err("invalid");
    let status = api_error(err);
    assert_eq!(status.code, 422);
    assert!(
        status
            .message
            .contains("spec.replicas in body should be less than or equal to 10"),
        "{}",
        status.message
    );
}

#[rstest]
#[tokio::test]
async fn non_structural_and_bad_default_schemas_are_rejected(#[future(awt)] server: TestServer) {
    let non_structural = crd_with_spec_schema(
        json!({"type": "object", "allOf": [{"properties": {"foo": {"type": "string"}}}]}),
    );
    let (status, body) = server.post(CRDS, &non_structural).await;
    assert_eq!(status, 422, "{body}");
    assert!(
        body["message"]
            .as_str()
            .expect("msg")
            .contains("spec.validation.openAPIV3Schema.properties[spec].allOf[0].properties[foo]"),
        "{body}"
    );

    let bad_default = crd_with_spec_schema(
        json!({"type": "object", "properties": {"replicas": {"type": "integer", "maximum": 5, "default": 9}}}),
    );
    let (status, body) = server.post(CRDS, &bad_default).await;
    assert_eq!(status, 422, "{body}");
    assert!(
        body["message"].as_str().expect("msg").contains(
            "spec.validation.openAPIV3Schema.properties[spec].properties[replicas].default"
        ),
        "{body}"
    );
}

#[rstest]
#[tokio::test]
async fn duplicate_fields_follow_field_validation(#[future(awt)] server: TestServer) {
    server.install_crontab_crd().await;
    let body = r#"{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":"dup"},"spec":{"image":"a","image":"b"}}"#;
    let post = |query: &str| {
        server
            .http
            .post(server.url(&format!("{CRONTABS}{query}")))
            .header("content-type", "application/json")
            .body(body)
    };
    let (status, err) = server.send(post("?fieldValidation=Strict")).await;
    assert_eq!(status, 400);
    assert_eq!(
        err["message"],
        r#"CronTab in version "v1" cannot be handled as a CronTab: strict decoding error: duplicate field "spec.image""#
    );
    let resp = post("").send().await.expect("post");
    assert_eq!(resp.status(), 201);
    assert_eq!(
        resp.headers()["warning"],
        r#"299 - "duplicate field \"spec.image\"""#
    );
    let created: Value = resp.json().await.expect("json");
    assert_eq!(created["spec"]["image"], "b", "the last value wins");
}

/// Legacy CRDs (converted from v1beta1) with `spec.preserveUnknownFields: true` are not pruned.
#[rstest]
#[tokio::test]
async fn legacy_preserve_unknown_fields_keeps_arbitrary_data(#[future(awt)] server: TestServer) {
    let mut crd = crate::harness::crontab_crd();
    crd["spec"]["preserveUnknownFields"] = json!(true);
    let (status, body) = server.post(CRDS, &crd).await;
    assert_eq!(status, 201, "{body}");
    let (status, created) = server
        .post(CRONTABS, &json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab", "metadata": {"name": "legacy"},
            "spec": {"image": "i", "anything": {"goes": [1, 2]}}, "extra": true}))
        .await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["spec"]["anything"], json!({"goes": [1, 2]}));
    assert_eq!(created["extra"], true);
}
