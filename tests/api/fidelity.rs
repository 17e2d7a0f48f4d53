//! Answers a client sees byte for byte as a real kube-apiserver 1.36 gives them: each test
//! names the apiserver code whose answer it reproduces.

use kube::api::{DeleteParams, ListParams, Patch, PatchParams};
use rstest::rstest;
use serde_json::json;

use crate::harness::{api_error, server, TestServer};

const CRONTABS: &str = "/apis/stable.example.com/v1/namespaces/default/crontabs";
const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";
const CRD: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

/// Sends a raw request and returns (code, reason, message) of the Status it gets.
async fn status_of(server: &TestServer, req: reqwest::RequestBuilder) -> (u16, String, String) {
    let (code, body) = server.send(req).await;
    assert_eq!(body["kind"], "Status", "{body}");
    let text = |k: &str| body[k].as_str().unwrap_or_default().to_string();
    (code, text("reason"), text("message"))
}

/// `/version` is `version.Info` of a default 1.36 server, written by `WriteRawJSON` (struct
/// order, two-space indent); `/readyz?verbose` and `/livez?verbose` list each check as the
/// `healthz` handlers do.
#[rstest]
#[tokio::test]
async fn version_and_verbose_health_checks(#[future(awt)] server: TestServer) {
    let text = |path: &'static str| {
        let req = server.http.get(server.url(path));
        async move { req.send().await.expect("sent").text().await.expect("text") }
    };
    let version = text("/version").await;
    assert!(
        version.starts_with("{\n  \"major\": \"1\",\n  \"minor\": \"36\",\n  \"emulationMajor\": \"1\",\n  \"emulationMinor\": \"36\",\n  \"minCompatibilityMajor\": \"1\",\n  \"minCompatibilityMinor\": \"35\",\n  \"gitVersion\": \"v1.36.0\","),
        "{version}"
    );
    let info = server.client.apiserver_version().await.expect("version");
    assert_eq!((info.major.as_str(), info.minor.as_str()), ("1", "36"));

    assert_eq!(text("/readyz").await, "ok");
    let readyz = text("/readyz?verbose").await;
    assert!(readyz.starts_with("[+]ping ok\n[+]log ok\n[+]etcd ok\n[+]etcd-readiness ok\n[+]informer-sync ok\n[+]poststarthook/start-apiserver-admission-initializer ok\n"), "{readyz}");
    assert!(
        readyz.ends_with("[+]shutdown ok\nreadyz check passed\n"),
        "{readyz}"
    );
    let livez = text("/livez?verbose&exclude=etcd&exclude=nope").await;
    assert!(
        livez.starts_with("[+]ping ok\n[+]log ok\n[+]etcd excluded: ok\n[+]poststarthook/"),
        "{livez}"
    );
    assert!(!livez.contains("shutdown"), "{livez}");
    assert!(livez.ends_with("warn: some health checks cannot be excluded: no matches for \"nope\"\nlivez check passed\n"), "{livez}");
    assert_eq!(text("/readyz/ping").await, "ok");
    assert_eq!(
        text("/livez/poststarthook/rbac/bootstrap-roles").await,
        "ok"
    );
    let missing = server
        .http
        .get(server.url("/readyz/nope"))
        .send()
        .await
        .expect("sent");
    assert_eq!(missing.status(), 404);
}

/// An UnstructuredList always carries `metadata.continue` (empty on the last page); typed
/// lists omit it (`omitempty`).
#[rstest]
#[tokio::test]
async fn custom_resource_lists_carry_an_empty_continue(#[future(awt)] server: TestServer) {
    server.install_crontab_crd().await;
    server.create_crontab("default", "a").await;
    server.create_crontab("default", "b").await;
    let (_, list) = server.get(CRONTABS).await;
    assert_eq!(list["metadata"]["continue"], "", "{list}");
    let (_, page) = server.get(&format!("{CRONTABS}?limit=1")).await;
    let token = page["metadata"]["continue"].as_str().expect("token");
    assert!(!token.is_empty());
    let (_, last) = server
        .get(&format!("{CRONTABS}?limit=1&continue={token}"))
        .await;
    assert_eq!(last["metadata"]["continue"], "", "{last}");
    let (_, typed) = server.get(CONFIGMAPS).await;
    assert!(typed["metadata"].get("continue").is_none(), "{typed}");
}

/// `ValidateListOptions`/`DecodeContinue`: `invalid continue token: continue key is not
/// valid: <Go's base64 or JSON error>`, before the resourceVersion check.
#[rstest]
#[tokio::test]
async fn garbage_continue_tokens(#[future(awt)] server: TestServer) {
    server.install_crontab_crd().await;
    for (token, why) in [
        (
            "garbage",
            "invalid character '\\u0081' looking for beginning of value",
        ),
        ("ab!c", "illegal base64 data at input byte 2"),
    ] {
        let req = server
            .http
            .get(server.url(&format!("{CRONTABS}?continue={token}&resourceVersion=5")));
        let (code, reason, message) = status_of(&server, req).await;
        assert_eq!((code, reason.as_str()), (400, "BadRequest"));
        assert_eq!(
            message,
            format!("invalid continue token: continue key is not valid: {why}")
        );
    }
}

/// Field selectors on a CRD without selectableFields: the apiserver's
/// `field label not supported: <label>`.
#[rstest]
#[tokio::test]
async fn unsupported_field_selectors_on_custom_resources(#[future(awt)] server: TestServer) {
    server.install_crontab_crd().await;
    let req = server
        .http
        .get(server.url(&format!("{CRONTABS}?fieldSelector=spec.image%3Dx")));
    let (code, reason, message) = status_of(&server, req).await;
    assert_eq!((code, reason.as_str()), (400, "BadRequest"));
    assert_eq!(message, "field label not supported: spec.image");
}

/// Malformed bodies: the serializer's `couldn't get version/kind; json parse error:` with Go's
/// encoding/json text; a wrong type in a custom resource's metadata is the decoder's 400
/// (`unstructuredSchemaCoercer` reading ObjectMeta), not a validation error.
#[rstest]
#[tokio::test]
async fn malformed_bodies_in_go_words(#[future(awt)] server: TestServer) {
    server.install_crontab_crd().await;
    let raw = |path: &str, body: &'static str| {
        server
            .http
            .post(server.url(path))
            .header("content-type", "application/json")
            .body(body)
    };
    let (code, _, message) = status_of(
        &server,
        raw(
            CONFIGMAPS,
            r#"{"apiVersion":"v1","kind":"ConfigMap", nope}"#,
        ),
    )
    .await;
    assert_eq!(code, 400);
    assert_eq!(message, "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: invalid character 'n' looking for beginning of object key string ({\"apiVersion\":\"v1\",\"kind\":\"Con ...)");
    let (_, _, message) = status_of(&server, raw(CONFIGMAPS, r#"{"a":1"#)).await;
    assert_eq!(message, "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error: unexpected end of JSON input ({\"a\":1)");
    let (code, reason, message) = status_of(
        &server,
        raw(
            CRONTABS,
            r#"{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"name":true}}"#,
        ),
    )
    .await;
    assert_eq!((code, reason.as_str()), (400, "BadRequest"));
    assert_eq!(message, "CronTab in version \"v1\" cannot be handled as a CronTab: json: cannot unmarshal bool into Go struct field ObjectMeta.name of type string");
}

/// Patch bodies: sigs.k8s.io/json's strict decode first (`error decoding patch: <Go text>`),
/// evanphx/json-patch's MergePatch refusing a null patch.
#[rstest]
#[tokio::test]
async fn malformed_patches_in_go_words(#[future(awt)] server: TestServer) {
    server.install_crontab_crd().await;
    server.create_crontab("default", "a").await;
    let patch = |media: &'static str, body: &'static str| {
        server
            .http
            .patch(server.url(&format!("{CRONTABS}/a")))
            .header("content-type", media)
            .body(body)
    };
    let cases = [
        ("application/merge-patch+json", r#"{"spec":"#, "error decoding patch: unexpected end of JSON input"),
        ("application/merge-patch+json", "[1]", "error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}"),
        ("application/merge-patch+json", "null", "Invalid JSON Patch"),
        ("application/json-patch+json", r#"[{"op":"add","#, "error decoding patch: unexpected end of JSON input"),
        ("application/json-patch+json", r#"[{"op" "add"}]"#, "error decoding patch: invalid character '\"' after object key"),
    ];
    for (media, body, want) in cases {
        let (code, reason, message) = status_of(&server, patch(media, body)).await;
        assert_eq!(
            (code, reason.as_str(), message.as_str()),
            (400, "BadRequest", want),
            "{body}"
        );
    }
}

/// Malformed YAML bodies: the YAML serializer's `YAMLToJSON` error (sigs.k8s.io/yaml, go-yaml's
/// `yaml: line N: ...`) in `transformDecodeError`'s unrecognized-object message, with the body
/// summarised in hex; server-side apply's `error decoding YAML: error converting YAML to JSON:`.
#[rstest]
#[tokio::test]
async fn malformed_yaml_in_go_words(#[future(awt)] server: TestServer) {
    let cases = [
        (
            "kind: ConfigMap\nmetadata:\n  name: a\n   labels: x\n",
            "yaml: line 4: mapping values are not allowed in this context (6b696e643a20436f6e6669674d61700a6d657461646174613a0a20206e61 ...)",
        ),
        (
            "kind: ConfigMap\nmetadata:\n\tname: a\n",
            "yaml: line 3: found character that cannot start any token (6b696e643a20436f6e6669674d61700a6d657461646174613a0a096e616d ...)",
        ),
        (
            "kind: \"ConfigMap\n",
            "yaml: line 2: found unexpected end of stream (6b696e643a2022436f6e6669674d61700a)",
        ),
        (
            "metadata:\n  name: a\n kind: x\n",
            "yaml: line 2: did not find expected key (6d657461646174613a0a20206e616d653a20610a206b696e643a20780a)",
        ),
        (
            // An unquoted cron schedule: `*` begins an alias, whose name go-yaml's scanner
            // wants alphanumeric.
            "kind: ConfigMap\ndata:\n  cron: */5 * * * *\n",
            "yaml: line 3: did not find expected alphabetic or numeric character (6b696e643a20436f6e6669674d61700a646174613a0a202063726f6e3a20 ...)",
        ),
        (
            "kind: ConfigMap\ndata:\n  a: \"x\u{7}\"\n",
            "yaml: control characters are not allowed (6b696e643a20436f6e6669674d61700a646174613a0a2020613a20227807 ...)",
        ),
    ];
    for (body, why) in cases {
        let req = server
            .http
            .post(server.url(CONFIGMAPS))
            .header("content-type", "application/yaml")
            .body(body);
        let want =
            format!("the object provided is unrecognized (must be of type ConfigMap): {why}");
        assert_eq!(
            status_of(&server, req).await,
            (400, "BadRequest".into(), want)
        );
    }
    let apply = server
        .http
        .patch(server.url(&format!("{CONFIGMAPS}/a?fieldManager=m")))
        .header("content-type", "application/apply-patch+yaml")
        .body("a: 1\n b: 2\n");
    assert_eq!(
        status_of(&server, apply).await.2,
        "error decoding YAML: error converting YAML to JSON: yaml: line 2: mapping values are not allowed in this context"
    );
}

/// JSON patches are applied as gopkg.in/evanphx/json-patch.v4 (the apiserver's `jsonPatcher`)
/// applies them: `replace` of a missing key adds it, a negative index counts from the end, a
/// `test` for null passes on a missing key. A failed operation is `NewGenericServerResponse(422)`,
/// whose generic message hides the library's; an unknown `op` likewise.
#[rstest]
#[tokio::test]
async fn json_patches_as_the_apiservers_library_applies_them(#[future(awt)] server: TestServer) {
    use k8s_openapi::api::core::v1::ConfigMap;
    let api: kube::Api<ConfigMap> = kube::Api::namespaced(server.client.clone(), "default");
    let cm = json!({"metadata": {"name": "a", "finalizers": ["a/x"]}, "data": {"x": "1"}});
    let cm: ConfigMap = serde_json::from_value(cm).expect("configmap");
    api.create(&Default::default(), &cm).await.expect("created");
    let ops = |v: serde_json::Value| -> Patch<()> {
        Patch::Json(serde_json::from_value(v).expect("json patch"))
    };
    let lenient = ops(json!([
        {"op": "replace", "path": "/data/y", "value": "2"},
        {"op": "add", "path": "/metadata/finalizers/-1", "value": "b/y"},
        {"op": "test", "path": "/data/absent", "value": null},
        {"op": "move", "from": "/metadata/finalizers/0", "path": "/metadata/finalizers/-"},
    ]));
    let patched = api
        .patch("a", &PatchParams::default(), &lenient)
        .await
        .expect("patched");
    let data = patched.data.unwrap_or_default();
    assert_eq!((data["x"].as_str(), data["y"].as_str()), ("1", "2"));
    assert_eq!(
        patched.metadata.finalizers,
        Some(vec!["b/y".to_string(), "a/x".to_string()])
    );
    let missing = ops(json!([{"op": "remove", "path": "/data/absent"}]));
    let err = api_error(
        api.patch("a", &PatchParams::default(), &missing)
            .await
            .expect_err("422"),
    );
    assert_eq!(
        (err.code, err.reason.as_str(), err.message.as_str()),
        (
            422,
            "Invalid",
            "the server rejected our request due to an error in our request"
        )
    );
    let raw = |query: &str, body: String| {
        server
            .http
            .patch(server.url(&format!("{CONFIGMAPS}/a{query}")))
            .header("content-type", "application/json-patch+json")
            .body(body)
    };
    let unknown_op = r#"[{"op":"merge","path":"/data/x","value":"2"}]"#.to_string();
    assert_eq!(
        status_of(&server, raw("", unknown_op)).await,
        (
            422,
            "Invalid".into(),
            "the server rejected our request due to an error in our request".into()
        )
    );
    let not_a_list = "{}".to_string();
    assert_eq!(
        status_of(&server, raw("", not_a_list.clone())).await.2,
        "error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp"
    );
    assert_eq!(
        status_of(&server, raw("?fieldValidation=Ignore", not_a_list))
            .await
            .2,
        "json: cannot unmarshal object into Go value of type jsonpatch.Patch"
    );
    let too_many = format!(
        "[{}]",
        vec![r#"{"op":"test","path":"/a"}"#; 10_001].join(",")
    );
    assert_eq!(
        status_of(&server, raw("", too_many)).await,
        (413, "RequestEntityTooLarge".into(), "Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001".into())
    );
    let extra = r#"[{"op":"add","path":"/data/z","value":"3","extra":true}]"#.to_string();
    let resp = raw("", extra).send().await.expect("sent");
    assert_eq!(resp.status(), 200);
    assert_eq!(
        resp.headers()["warning"],
        r#"299 - "json patch unknown field \"[0].extra\"""#
    );
}

/// `ValidateDeleteOptions`: both `orphanDependents` and `propagationPolicy` is an error on
/// `propagationPolicy`, showing its value.
#[rstest]
#[tokio::test]
async fn delete_options_naming_both_policies(#[future(awt)] server: TestServer) {
    server.install_crontab_crd().await;
    server.create_crontab("default", "a").await;
    let req = server
        .http
        .delete(server.url(&format!("{CRONTABS}/a")))
        .json(&json!({"orphanDependents": true, "propagationPolicy": "Background"}));
    let (code, body) = server.send(req).await;
    assert_eq!(code, 422, "{body}");
    assert_eq!(body["message"], "DeleteOptions.meta.k8s.io \"\" is invalid: propagationPolicy: Invalid value: \"Background\": orphanDependents and deletionPropagation cannot be both set");
    assert_eq!(body["details"]["causes"][0]["field"], "propagationPolicy");
}

/// `ValidateOwnerReferences`: a second controller reference is refused, the whole list shown
/// as Go marshals it.
#[rstest]
#[tokio::test]
async fn at_most_one_controller_reference(#[future(awt)] server: TestServer) {
    let cm = json!({"metadata": {"name": "o", "ownerReferences": [
        {"apiVersion": "v1", "kind": "A", "name": "a", "uid": "1", "controller": true},
        {"apiVersion": "v1", "kind": "B", "name": "b", "uid": "2", "controller": true},
    ]}});
    let (code, body) = server.post(CONFIGMAPS, &cm).await;
    assert_eq!(code, 422, "{body}");
    assert_eq!(body["message"], "ConfigMap \"o\" is invalid: metadata.ownerReferences: Invalid value: [{\"apiVersion\":\"v1\",\"kind\":\"A\",\"name\":\"a\",\"uid\":\"1\",\"controller\":true},{\"apiVersion\":\"v1\",\"kind\":\"B\",\"name\":\"b\",\"uid\":\"2\",\"controller\":true}]: Only one reference can have Controller set to true. Found \"true\" in references for A/a and B/b");
}

/// `BeforeDelete` bumps `metadata.generation` when it sets `deletionTimestamp`, once.
#[rstest]
#[tokio::test]
async fn setting_deletion_timestamp_bumps_generation(#[future(awt)] server: TestServer) {
    server.install_crontab_crd().await;
    let api = server.crontabs("default");
    server.create_crontab("default", "held").await;
    let add = json!({"metadata": {"finalizers": ["example.com/hold"]}});
    let held = api
        .patch("held", &PatchParams::default(), &Patch::Merge(&add))
        .await
        .expect("finalizer");
    assert_eq!(held.metadata.generation, Some(1));
    api.delete("held", &DeleteParams::default())
        .await
        .expect("delete");
    let deleting = api.get("held").await.expect("still there");
    assert!(deleting.metadata.deletion_timestamp.is_some());
    assert_eq!(deleting.metadata.generation, Some(2));
    api.delete("held", &DeleteParams::default())
        .await
        .expect("again");
    assert_eq!(
        api.get("held").await.expect("held").metadata.generation,
        Some(2)
    );
    let release = json!({"metadata": {"finalizers": null}});
    api.patch("held", &PatchParams::default(), &Patch::Merge(&release))
        .await
        .expect("released");
    assert!(api
        .list(&ListParams::default())
        .await
        .expect("list")
        .items
        .is_empty());
}

/// `forbidCreateAdmission`: creating in a terminating CRD's resource is 403 Forbidden.
#[rstest]
#[tokio::test]
async fn no_creates_while_the_crd_terminates(#[future(awt)] server: TestServer) {
    server.install_crontab_crd().await;
    server.create_crontab("default", "keep").await;
    let api = server.crontabs("default");
    let hold = json!({"metadata": {"finalizers": ["example.com/hold"]}});
    api.patch("keep", &PatchParams::default(), &Patch::Merge(&hold))
        .await
        .expect("finalizer");
    let (code, _) = server
        .send(
            server
                .http
                .delete(server.url(&format!("{CRD}/crontabs.stable.example.com"))),
        )
        .await;
    assert_eq!(code, 200);
    let ct = json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
                    "metadata": {"name": "late"}, "spec": {"image": "i"}});
    let (code, body) = server.post(CRONTABS, &ct).await;
    assert_eq!(code, 403, "{body}");
    assert_eq!(body["reason"], "Forbidden");
    assert_eq!(body["message"], "crontabs.stable.example.com \"late\" is forbidden: create not allowed while custom resource definition is terminating");
    assert_eq!(
        body["details"],
        json!({"name": "late", "group": "stable.example.com", "kind": "crontabs"})
    );
    let status = api_error(
        server
            .crontabs("default")
            .create(&Default::default(), &serde_json::from_value(json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab", "metadata": {"name": "late2"}, "spec": {"cronSpec": "", "image": "i"}})).expect("crontab"))
            .await
            .expect_err("forbidden"),
    );
    assert_eq!(status.code, 403);
}

/// `transformResponseObject` with `as=PartialObjectMetadata[List]`: kube-rs's metadata calls
/// (as controller-runtime's metadata informers) get `meta.k8s.io` objects holding only
/// metadata, for built-in kinds and custom resources, in get, list and watch.
#[rstest]
#[tokio::test]
async fn metadata_only_get_list_and_watch(#[future(awt)] server: TestServer) {
    use futures_util::{StreamExt, TryStreamExt};
    use kube::api::WatchEvent;
    use kube::api::WatchParams;
    server.install_crontab_crd().await;
    server.create_crontab("default", "a").await;
    let api = server.crontabs("default");
    let one = api.get_metadata("a").await.expect("metadata");
    assert_eq!(
        one.types.as_ref().map(|t| t.kind.as_str()),
        Some("PartialObjectMetadata")
    );
    assert_eq!(
        one.types.as_ref().map(|t| t.api_version.as_str()),
        Some("meta.k8s.io/v1")
    );
    assert_eq!(one.metadata.name.as_deref(), Some("a"));
    let list = api
        .list_metadata(&ListParams::default())
        .await
        .expect("list");
    assert_eq!(list.items.len(), 1);
    assert_eq!(list.items[0].metadata.name.as_deref(), Some("a"));
    let configmaps: kube::Api<k8s_openapi::api::core::v1::ConfigMap> =
        kube::Api::namespaced(server.client.clone(), "default");
    let cms = configmaps
        .list_metadata(&ListParams::default())
        .await
        .expect("cms");
    assert!(cms
        .items
        .iter()
        .any(|c| c.metadata.name.as_deref() == Some("kube-root-ca.crt")));

    let rv = list.metadata.resource_version.clone().expect("rv");
    let stream = api
        .watch_metadata(&WatchParams::default(), &rv)
        .await
        .expect("watch");
    let mut stream = stream.boxed();
    server.create_crontab("default", "b").await;
    match stream.try_next().await.expect("event") {
        Some(WatchEvent::Added(o)) => {
            assert_eq!(o.metadata.name.as_deref(), Some("b"));
            assert_eq!(
                o.types.map(|t| t.kind),
                Some("PartialObjectMetadata".into())
            );
        }
        other => panic!("{other:?}"),
    }

    // The raw bodies: a v1beta1 list, and the 406s for the wrong shape.
    let get = |path: String, accept: &'static str| {
        server.http.get(server.url(&path)).header("accept", accept)
    };
    let (code, body) = server
        .send(get(
            CRONTABS.to_string(),
            "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1beta1",
        ))
        .await;
    assert_eq!(code, 200);
    assert_eq!(body["kind"], "PartialObjectMetadataList");
    assert_eq!(body["apiVersion"], "meta.k8s.io/v1beta1");
    assert_eq!(body["items"][0]["apiVersion"], "meta.k8s.io/v1beta1");
    assert!(body["items"][0].get("spec").is_none(), "{body}");
    let (code, reason, message) = status_of(
        &server,
        get(
            CRONTABS.to_string(),
            "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1",
        ),
    )
    .await;
    assert_eq!((code, reason.as_str()), (406, "NotAcceptable"));
    assert_eq!(message, "you requested PartialObjectMetadata, but the requested object is a list (*unstructured.UnstructuredList)");
    let (_, _, message) = status_of(
        &server,
        get(
            format!("{CONFIGMAPS}/kube-root-ca.crt"),
            "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1",
        ),
    )
    .await;
    assert_eq!(message, "you requested PartialObjectMetadataList, but the requested object is not a list (*core.ConfigMap)");
    // client-go's metadata client asks for protobuf first, also for custom resources.
    let resp = get(CRONTABS.to_string(), "application/vnd.kubernetes.protobuf;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json")
        .send()
        .await
        .expect("sent");
    assert_eq!(
        resp.headers()["content-type"],
        "application/vnd.kubernetes.protobuf"
    );
    let bytes = resp.bytes().await.expect("body");
    assert!(bytes.starts_with(b"k8s\0"));
    assert!(bytes.windows(25).any(|w| w == b"PartialObjectMetadataList"));
}

/// `/metrics`: `apiserver_request_total` and `apiserver_request_duration_seconds` with the
/// labels `MonitorRequest` gives (`cleanVerb`, `CleanScope`, `dry_run`), in the Prometheus text
/// format.
#[rstest]
#[tokio::test]
async fn request_metrics(#[future(awt)] server: TestServer) {
    server.install_crontab_crd().await;
    server.create_crontab("default", "a").await;
    server.get(CRONTABS).await;
    server.get(&format!("{CRONTABS}/nope")).await;
    let apply = server
        .http
        .patch(server.url(&format!("{CRONTABS}/b?fieldManager=m&dryRun=All")))
        .header("content-type", "application/apply-patch+yaml")
        .body("apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: b\n");
    server.send(apply).await;
    server.get("/readyz").await;
    let resp = server
        .http
        .get(server.url("/metrics"))
        .send()
        .await
        .expect("metrics");
    assert_eq!(
        resp.headers()["content-type"],
        "text/plain; version=0.0.4; charset=utf-8"
    );
    let text = resp.text().await.expect("text");
    let crontabs = |verb: &str, scope: &str, dry_run: &str| {
        format!("component=\"apiserver\",dry_run=\"{dry_run}\",group=\"stable.example.com\",resource=\"crontabs\",scope=\"{scope}\",subresource=\"\",verb=\"{verb}\",version=\"v1\"")
    };
    for line in [
        format!("apiserver_request_total{{code=\"201\",{}}} 1", crontabs("POST", "resource", "")),
        format!("apiserver_request_total{{code=\"200\",{}}} 1", crontabs("LIST", "namespace", "")),
        format!("apiserver_request_total{{code=\"404\",{}}} 1", crontabs("GET", "resource", "")),
        format!("apiserver_request_total{{code=\"201\",{}}} 1", crontabs("APPLY", "resource", "All")),
        "apiserver_request_total{code=\"200\",component=\"\",dry_run=\"\",group=\"\",resource=\"\",scope=\"\",subresource=\"/readyz\",verb=\"GET\",version=\"\"} 1".to_string(),
        format!("apiserver_request_duration_seconds_count{{{}}} 1", crontabs("LIST", "namespace", "")),
        format!("apiserver_request_duration_seconds_bucket{{{},le=\"60\"}} 1", crontabs("LIST", "namespace", "")),
    ] {
        assert!(text.lines().any(|l| l == line), "{line}\nnot in\n{text}");
    }
    assert!(text.contains("# TYPE apiserver_request_total counter\n"));
    assert!(text.contains("# TYPE apiserver_request_duration_seconds histogram\n"));
}

/// The managedFields entries of an object: (manager, operation, subresource, top-level fields).
fn managers(obj: &serde_json::Value) -> Vec<(String, String, String, Vec<String>)> {
    let entries = obj["metadata"]["managedFields"].as_array().cloned();
    entries
        .unwrap_or_default()
        .iter()
        .map(|e| {
            let text = |k: &str| e[k].as_str().unwrap_or_default().to_string();
            let fields = e["fieldsV1"]
                .as_object()
                .map(|f| f.keys().cloned().collect());
            (
                text("manager"),
                text("operation"),
                text("subresource"),
                fields.unwrap_or_default(),
            )
        })
        .collect()
}

/// Writes of the apiserver's own controllers carry its managers: apiextensions-apiserver's
/// naming and establishing controllers `UpdateStatus` through their loopback client
/// (`kube-apiserver`), kube-controller-manager's namespace controller through its own
/// (`kube-controller-manager`). The client's entry owns only what it wrote: `status` is a
/// reset field of the main resource (`GetResetFields`), never owned through it. (kubefake
/// establishes a CRD before answering its create, so the create response already shows both.)
#[rstest]
#[tokio::test]
async fn controllers_writes_carry_the_real_managers(#[future(awt)] server: TestServer) {
    use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
    use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
    let crds: kube::Api<CustomResourceDefinition> = kube::Api::all(server.client.clone());
    let crd: CustomResourceDefinition =
        serde_json::from_value(crate::harness::crontab_crd()).expect("crd");
    let params = kube::api::PostParams {
        field_manager: Some("crd-installer".into()),
        ..Default::default()
    };
    let created = crds.create(&params, &crd).await.expect("created");
    let got = crds.get("crontabs.stable.example.com").await.expect("got");
    // Sorted as the apiserver sorts entries: by operation, time, then manager.
    let want = vec![
        (
            "crd-installer".into(),
            "Update".into(),
            String::new(),
            vec!["f:spec".into()],
        ),
        (
            "kube-apiserver".into(),
            "Update".into(),
            "status".into(),
            vec!["f:status".into()],
        ),
    ];
    for obj in [&created, &got] {
        assert_eq!(managers(&serde_json::to_value(obj).expect("json")), want);
    }
    let status = &serde_json::to_value(&got).expect("json")["metadata"]["managedFields"][1]
        ["fieldsV1"]["f:status"];
    assert_eq!(
        status["f:conditions"]
            .as_object()
            .map(|c| c.keys().cloned().collect::<Vec<_>>()),
        Some(vec![
            r#"k:{"type":"Established"}"#.to_string(),
            r#"k:{"type":"NamesAccepted"}"#.to_string()
        ])
    );
    assert!(
        status["f:acceptedNames"]["f:plural"].is_object(),
        "{status}"
    );

    let namespaces: kube::Api<Namespace> = kube::Api::all(server.client.clone());
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": "going"}})).expect("ns");
    namespaces.create(&params, &ns).await.expect("namespace");
    let held: ConfigMap = serde_json::from_value(
        json!({"metadata": {"name": "held", "finalizers": ["example.com/hold"]}}),
    )
    .expect("configmap");
    let cms: kube::Api<ConfigMap> = kube::Api::namespaced(server.client.clone(), "going");
    cms.create(&params, &held).await.expect("configmap");
    namespaces
        .delete("going", &DeleteParams::default())
        .await
        .expect("deleting");
    let going = serde_json::to_value(namespaces.get("going").await.expect("got")).expect("json");
    let controller = managers(&going)
        .into_iter()
        .find(|m| m.0 == "kube-controller-manager");
    assert_eq!(
        controller,
        Some((
            "kube-controller-manager".into(),
            "Update".into(),
            "status".into(),
            vec!["f:status".into()]
        ))
    );
    assert!(
        !managers(&going)
            .iter()
            .any(|m| m.0 == "crd-installer" && m.3.contains(&"f:status".to_string())),
        "{going}"
    );
}

/// kube-controller-manager's other controllers write as `kube-controller-manager` too: the
/// root CA publisher's `kube-root-ca.crt` owns its `data` and its description annotation, the Endpoints controller its
/// subsets; the default ServiceAccount, created with nothing but its name, has no entry (an
/// Update that owns no field records none).
#[rstest]
#[tokio::test]
async fn controller_manager_writes_carry_its_manager(#[future(awt)] server: TestServer) {
    use k8s_openapi::api::core::v1::{ConfigMap, Endpoints, Namespace, Service, ServiceAccount};
    let namespaces: kube::Api<Namespace> = kube::Api::all(server.client.clone());
    let ns: Namespace = serde_json::from_value(json!({"metadata": {"name": "owned"}})).expect("ns");
    namespaces
        .create(&Default::default(), &ns)
        .await
        .expect("namespace");
    let cms: kube::Api<ConfigMap> = kube::Api::namespaced(server.client.clone(), "owned");
    let ca = serde_json::to_value(cms.get("kube-root-ca.crt").await.expect("ca")).expect("json");
    assert_eq!(
        managers(&ca),
        vec![(
            "kube-controller-manager".into(),
            "Update".into(),
            String::new(),
            vec!["f:data".into(), "f:metadata".into()]
        )],
        "{ca}"
    );
    let sas: kube::Api<ServiceAccount> = kube::Api::namespaced(server.client.clone(), "owned");
    let sa = serde_json::to_value(sas.get("default").await.expect("sa")).expect("json");
    assert_eq!(managers(&sa), vec![], "{sa}");

    let services: kube::Api<Service> = kube::Api::namespaced(server.client.clone(), "owned");
    let svc: Service = serde_json::from_value(json!({
        "metadata": {"name": "web"},
        "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}
    }))
    .expect("service");
    services
        .create(&Default::default(), &svc)
        .await
        .expect("service");
    let endpoints: kube::Api<Endpoints> = kube::Api::namespaced(server.client.clone(), "owned");
    let ep = serde_json::to_value(endpoints.get("web").await.expect("endpoints")).expect("json");
    let controller: Vec<_> = managers(&ep)
        .into_iter()
        .filter(|m| m.0 == "kube-controller-manager")
        .collect();
    assert_eq!(controller.len(), 1, "{ep}");
    assert_eq!(controller[0].1, "Update", "{ep}");
}

const AS_METADATA: &str = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";

/// Writes with `as=PartialObjectMetadata` are applied and answered with the object's metadata
/// (`transformResponseObject` runs after the write): kube-rs's `patch_metadata`, and create,
/// update and delete as a metadata client sends them.
#[rstest]
#[tokio::test]
async fn metadata_only_writes_apply_and_answer_metadata(#[future(awt)] server: TestServer) {
    let configmaps: kube::Api<k8s_openapi::api::core::v1::ConfigMap> =
        kube::Api::namespaced(server.client.clone(), "default");
    let path = "/api/v1/namespaces/default/configmaps";
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "meta"}, "data": {"k": "v"}});
    let post = server
        .http
        .post(server.url(path))
        .header("accept", AS_METADATA);
    let (status, created) = server.send(post.json(&cm)).await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["kind"], "PartialObjectMetadata");
    assert_eq!(created["apiVersion"], "meta.k8s.io/v1");
    assert_eq!(created["metadata"]["name"], "meta");
    assert!(created.get("data").is_none(), "{created}");
    let stored = configmaps.get("meta").await.expect("created");
    assert_eq!(stored.data.unwrap_or_default()["k"], "v");

    // kube-rs's metadata patch.
    let patched = configmaps
        .patch_metadata(
            "meta",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"tier": "db"}}})),
        )
        .await
        .expect("patched");
    assert_eq!(
        patched.types.as_ref().map(|t| t.kind.as_str()),
        Some("PartialObjectMetadata")
    );
    assert_eq!(patched.metadata.labels.unwrap_or_default()["tier"], "db");

    let mut update = cm.clone();
    update["data"]["k"] = json!("w");
    let put = server
        .http
        .put(server.url(&format!("{path}/meta")))
        .header("accept", AS_METADATA);
    let (status, updated) = server.send(put.json(&update)).await;
    assert_eq!(status, 200, "{updated}");
    assert_eq!(updated["kind"], "PartialObjectMetadata");
    let stored = configmaps.get("meta").await.expect("updated");
    assert_eq!(stored.data.unwrap_or_default()["k"], "w");

    // A ConfigMap's delete answers a Status, which passes through untransformed.
    let delete = server
        .http
        .delete(server.url(&format!("{path}/meta")))
        .header("accept", AS_METADATA);
    let (status, deleted) = server.send(delete).await;
    assert_eq!(status, 200);
    assert_eq!(deleted["kind"], "Status");
    assert_eq!(deleted["status"], "Success");
    assert!(configmaps.get_opt("meta").await.expect("get").is_none());

    // A pod's delete answers the object: as metadata.
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]}});
    let pods = "/api/v1/namespaces/default/pods";
    assert_eq!(server.post(pods, &pod).await.0, 201);
    let delete = server
        .http
        .delete(server.url(&format!("{pods}/p")))
        .header("accept", AS_METADATA);
    let (status, deleted) = server.send(delete).await;
    assert_eq!(status, 200, "{deleted}");
    assert_eq!(deleted["kind"], "PartialObjectMetadata");
    assert_eq!(deleted["metadata"]["name"], "p");
    assert!(deleted.get("spec").is_none());
}

/// The wrong shape is a 406 after the write, as the apiserver checks it when it transforms the
/// answer; a deletecollection answers a `PartialObjectMetadataList`.
#[rstest]
#[tokio::test]
async fn metadata_shapes_of_writes(#[future(awt)] server: TestServer) {
    let path = "/api/v1/namespaces/default/configmaps";
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a",
        "labels": {"batch": "x"}}});
    let as_list = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
    let post = server.http.post(server.url(path)).header("accept", as_list);
    let (status, refused) = server.send(post.json(&cm)).await;
    assert_eq!(status, 406, "{refused}");
    assert_eq!(
        refused["message"],
        "you requested PartialObjectMetadataList, but the requested object is not a list (*core.ConfigMap)"
    );
    let (status, _) = server.get(&format!("{path}/a")).await;
    assert_eq!(
        status, 200,
        "the create was made before the answer was refused"
    );

    let collection = server
        .http
        .delete(server.url(&format!("{path}?labelSelector=batch%3Dx")))
        .header("accept", as_list);
    let (status, deleted) = server.send(collection).await;
    assert_eq!(status, 200, "{deleted}");
    assert_eq!(deleted["kind"], "PartialObjectMetadataList");
    assert_eq!(deleted["items"][0]["kind"], "PartialObjectMetadata");
    assert_eq!(deleted["items"][0]["metadata"]["name"], "a");
}

/// The bytes a client reads: a built-in kind in Go's field order (`kind`, `apiVersion`,
/// `metadata` in ObjectMeta's order, `spec`, `status`), a typed list's envelope likewise; a
/// custom resource and its list with sorted keys, as encoding/json writes unstructured maps.
#[rstest]
#[tokio::test]
async fn objects_are_serialised_in_the_apiservers_key_order(#[future(awt)] server: TestServer) {
    let text = |path: String| {
        let client = server.client.clone();
        async move {
            let req = hyper::Request::get(path)
                .body(Vec::new())
                .expect("a request");
            client.request_text(req).await.expect("a response")
        }
    };
    let deployments: kube::Api<k8s_openapi::api::apps::v1::Deployment> =
        kube::Api::namespaced(server.client.clone(), "default");
    let deployment = serde_json::from_value(json!({"metadata": {"name": "web"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}))
    .expect("a Deployment");
    deployments
        .create(&kube::api::PostParams::default(), &deployment)
        .await
        .expect("created");
    let got = text("/apis/apps/v1/namespaces/default/deployments/web".into()).await;
    assert!(
        got.starts_with(
            r#"{"kind":"Deployment","apiVersion":"apps/v1","metadata":{"name":"web","namespace":"default","uid":""#
        ),
        "{got}"
    );
    let spec = got
        .find(r#""spec":{"replicas":1,"selector":{"#)
        .expect("spec in order");
    let status = got.find(r#""status":{"#).expect("status");
    assert!(spec < status, "{got}");
    assert!(
        got.contains(r#""containers":[{"name":"c","image":"nginx","resources":{}"#),
        "{got}"
    );

    let list = text("/api/v1/namespaces/default/configmaps".into()).await;
    assert!(
        list.starts_with(
            r#"{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":""#
        ),
        "{list}"
    );

    server.install_crontab_crd().await;
    server.create_crontab("default", "ct").await;
    let cr = text("/apis/stable.example.com/v1/namespaces/default/crontabs/ct".into()).await;
    assert!(
        cr.starts_with(
            r#"{"apiVersion":"stable.example.com/v1","kind":"CronTab","metadata":{"creationTimestamp":"#
        ),
        "{cr}"
    );
    let crs = text("/apis/stable.example.com/v1/namespaces/default/crontabs".into()).await;
    assert!(
        crs.starts_with(r#"{"apiVersion":"stable.example.com/v1","items":[{"apiVersion""#),
        "{crs}"
    );
}
