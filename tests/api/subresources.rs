//! `/status` and `/scale` of custom resources.

use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use rstest::rstest;
use serde_json::{json, Value};

use crate::harness::{api_error, fixture_yaml, server, TestServer};

const CT: &str = "/apis/stable.example.com/v1/namespaces/default/crontabs/my-new-cron-object";

async fn with_subresources(server: &TestServer) -> Api<DynamicObject> {
    let (status, body) = server
        .post(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            &fixture_yaml("subresources/resourcedefinition.yaml"),
        )
        .await;
    assert_eq!(status, 201, "{body}");
    let mut ct = fixture_yaml("subresources/my-crontab.yaml");
    ct["status"] = json!({"replicas": 99});
    let (status, created) = server
        .post(
            "/apis/stable.example.com/v1/namespaces/default/crontabs",
            &ct,
        )
        .await;
    assert_eq!(status, 201, "{created}");
    assert!(
        created.get("status").is_none(),
        "create drops .status when /status exists"
    );
    let ar = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("stable.example.com", "v1", "CronTab"),
        "crontabs",
    );
    Api::namespaced_with(server.client.clone(), "default", &ar)
}

#[rstest]
#[tokio::test]
async fn status_writes_change_only_status(#[future(awt)] server: TestServer) {
    let api = with_subresources(&server).await;
    let before = api.get("my-new-cron-object").await.expect("get");

    // Through /status: spec and metadata changes are ignored, status is written, generation stays.
    let mut body = serde_json::to_value(&before).expect("json");
    body["spec"]["image"] = json!("ignored");
    body["metadata"]["labels"] = json!({"ignored": "yes"});
    body["status"] = json!({"replicas": 2, "labelSelector": "app=cron"});
    let updated = api
        .replace_status(
            "my-new-cron-object",
            &PostParams::default(),
            &serde_json::from_value::<DynamicObject>(body.clone()).expect("object"),
        )
        .await
        .expect("status update");
    assert_eq!(updated.data["status"]["replicas"], 2);
    assert_eq!(updated.data["spec"]["image"], "my-awesome-cron-image");
    assert!(updated.metadata.labels.is_none());
    assert_eq!(updated.metadata.generation, Some(1));

    // The main resource ignores .status and bumps generation on spec changes.
    let patched = api
        .patch(
            "my-new-cron-object",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"image": "v2"}, "status": {"replicas": 50}})),
        )
        .await
        .expect("main patch");
    assert_eq!(patched.data["status"]["replicas"], 2);
    assert_eq!(patched.metadata.generation, Some(2));

    // Patch on /status, and GET of /status.
    api.patch_status(
        "my-new-cron-object",
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"replicas": 3}})),
    )
    .await
    .expect("status patch");
    let status = api
        .get_status("my-new-cron-object")
        .await
        .expect("get status");
    assert_eq!(status.data["status"]["replicas"], 3);
    assert_eq!(status.metadata.generation, Some(2));

    // One resourceVersion: a stale status write conflicts.
    let err = api
        .replace_status(
            "my-new-cron-object",
            &PostParams::default(),
            &serde_json::from_value::<DynamicObject>(body.clone()).expect("object"),
        )
        .await
        .expect_err("stale");
    assert_eq!(api_error(err).code, 409);

    // Dry run changes nothing.
    let rv = server.rv();
    let dry = api
        .patch_status(
            "my-new-cron-object",
            &PatchParams {
                dry_run: true,
                ..Default::default()
            },
            &Patch::Merge(json!({"status": {"replicas": 7}})),
        )
        .await
        .expect("dry run");
    assert_eq!(dry.data["status"]["replicas"], 7);
    assert_eq!(server.rv(), rv);
    assert_eq!(
        api.get_status("my-new-cron-object")
            .await
            .expect("get")
            .data["status"]["replicas"],
        3
    );
}

#[rstest]
#[tokio::test]
async fn scale_reads_and_writes_replicas(#[future(awt)] server: TestServer) {
    let api = with_subresources(&server).await;
    api.patch_status(
        "my-new-cron-object",
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"replicas": 1, "labelSelector": "app=cron"}})),
    )
    .await
    .expect("status");
    let (status, scale) = server.get(&format!("{CT}/scale")).await;
    assert_eq!(status, 200);
    assert_eq!(scale["kind"], "Scale");
    assert_eq!(scale["apiVersion"], "autoscaling/v1");
    assert_eq!(scale["spec"], json!({"replicas": 3}));
    assert_eq!(
        scale["status"],
        json!({"replicas": 1, "selector": "app=cron"})
    );
    let rv = scale["metadata"]["resourceVersion"].clone();

    // kube-rs replace_scale (PUT) and patch_scale (PATCH).
    let put = json!({"apiVersion": "autoscaling/v1", "kind": "Scale",
                     "metadata": {"name": "my-new-cron-object", "namespace": "default", "resourceVersion": rv},
                     "spec": {"replicas": 5}});
    let scaled = api
        .replace_scale(
            "my-new-cron-object",
            &PostParams::default(),
            &serde_json::from_value::<k8s_openapi::api::autoscaling::v1::Scale>(put.clone())
                .expect("scale"),
        )
        .await
        .expect("put scale");
    assert_eq!(scaled.spec.and_then(|s| s.replicas), Some(5));
    let obj = api.get("my-new-cron-object").await.expect("get");
    assert_eq!(obj.data["spec"]["replicas"], 5);
    assert_eq!(obj.metadata.generation, Some(2));

    // The old resourceVersion is stale now.
    let (status, body) = server
        .send(
            server
                .http
                .put(server.url(&format!("{CT}/scale")))
                .json(&put),
        )
        .await;
    assert_eq!(status, 409, "{body}");
    assert_eq!(body["reason"], "Conflict");

    let patched = api
        .patch_scale(
            "my-new-cron-object",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 7}})),
        )
        .await
        .expect("patch scale");
    assert_eq!(patched.spec.and_then(|s| s.replicas), Some(7));

    // Negative replicas are invalid: the custom resource scale subresource does not validate
    // the Scale (no ValidateScale in apiextensions' ScaleREST); the replicas go into the
    // object, whose validation reports them on its kind at the raw specReplicasPath.
    let (status, body) = server
        .send(
            server
                .http
                .patch(server.url(&format!("{CT}/scale")))
                .header("content-type", "application/merge-patch+json")
                .body(r#"{"spec":{"replicas":-1}}"#),
        )
        .await;
    assert_eq!(status, 422);
    assert_eq!(body["message"], "CronTab.stable.example.com \"my-new-cron-object\" is invalid: .spec.replicas: Invalid value: -1: should be a non-negative integer");
    assert_eq!(body["details"]["kind"], "CronTab");

    // Missing spec.replicas is the apiserver's internal error on GET.
    api.patch(
        "my-new-cron-object",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"replicas": null}})),
    )
    .await
    .expect("drop replicas");
    let (status, body) = server.get(&format!("{CT}/scale")).await;
    assert_eq!(status, 500);
    assert_eq!(
        body["message"],
        "Internal error occurred: the spec replicas field \".spec.replicas\" does not exist"
    );
}

/// The apiserver's field manager of a custom resource's `/scale` has no type for the Scale
/// (kubernetes#116311): an apply through it is a 500 naming the configuration, and an update
/// through it clears the Scale's managedFields, so nobody owns the replicas afterwards.
#[rstest]
#[tokio::test]
async fn custom_resource_scale_and_field_ownership(#[future(awt)] server: TestServer) {
    let api = with_subresources(&server).await;
    let owners = |obj: &DynamicObject| -> Vec<String> {
        let entries = obj.metadata.managed_fields.clone().unwrap_or_default();
        let owning = entries.into_iter().filter(|e| {
            e.fields_v1
                .as_ref()
                .is_some_and(|f| f.0["f:spec"].get("f:replicas").is_some())
        });
        owning.filter_map(|e| e.manager).collect()
    };
    let before = api.get("my-new-cron-object").await.expect("get");
    assert_eq!(owners(&before), ["unknown"], "{:?}", before.metadata);
    let rv = server.rv();
    let scale = json!({"apiVersion": "autoscaling/v1", "kind": "Scale",
        "metadata": {"name": "my-new-cron-object", "namespace": "default"}, "spec": {"replicas": 4}});
    let (status, body) = server
        .send(
            server
                .http
                .patch(server.url(&format!("{CT}/scale?fieldManager=scaler")))
                .header("content-type", "application/apply-patch+yaml")
                .json(&scale),
        )
        .await;
    assert_eq!(status, 500, "{body}");
    assert_eq!(
        body,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "failed to create typed patch object (default/my-new-cron-object; autoscaling/v1, Kind=Scale): no corresponding type for autoscaling/v1, Kind=Scale",
            "code": 500})
    );
    assert_eq!(server.rv(), rv, "a refused apply writes nothing");

    let scaled = api
        .patch_scale(
            "my-new-cron-object",
            &PatchParams {
                field_manager: Some("scaler".into()),
                ..Default::default()
            },
            &Patch::Merge(json!({"spec": {"replicas": 4}})),
        )
        .await
        .expect("patch scale");
    assert_eq!(scaled.spec.and_then(|s| s.replicas), Some(4));
    let after = api.get("my-new-cron-object").await.expect("get");
    assert_eq!(after.data["spec"]["replicas"], 4);
    assert!(
        owners(&after).is_empty(),
        "{:?}",
        after.metadata.managed_fields
    );
}

#[rstest]
#[tokio::test]
async fn no_subresources_without_the_crd_asking(#[future(awt)] server: TestServer) {
    server.install_crontab_crd().await;
    server.create_crontab("default", "plain").await;
    for sub in ["status", "scale"] {
        let (status, body): (u16, Value) = server
            .get(&format!(
                "/apis/stable.example.com/v1/namespaces/default/crontabs/plain/{sub}"
            ))
            .await;
        assert_eq!(status, 404, "{sub}: {body}");
    }
}

/// `/status` writes with values of the wrong type: reported on the custom resource's kind,
/// the status schema's errors (go-openapi names relative to `status`, under the field
/// `status`) and then `ValidateScaleStatus`'s accessor errors (`NestedInt64`, `NestedString`:
/// the path with its leading dot, Go's `%v` and `%T` of the value).
#[rstest]
#[tokio::test]
async fn status_type_errors_on_the_custom_resources_kind(#[future(awt)] server: TestServer) {
    with_subresources(&server).await;
    let prefix = "CronTab.stable.example.com \"my-new-cron-object\" is invalid: ";
    let cases = [
        (
            r#"{"status":{"replicas":"x"}}"#,
            r#"[status.replicas: Invalid value: "string": replicas in body must be of type integer: "string", .status.replicas: Invalid value: 0: .status.replicas accessor error: x is of the type string, expected int64]"#,
        ),
        (
            r#"{"status":{"labelSelector":3}}"#,
            r#"[status.labelSelector: Invalid value: "integer": labelSelector in body must be of type string: "integer", .status.labelSelector: Invalid value: "": .status.labelSelector accessor error: 3 is of the type int64, expected string]"#,
        ),
        (
            // Pruned first: a string's schema has no properties to keep.
            r#"{"status":{"labelSelector":{"a":[1,true]}}}"#,
            r#"[status.labelSelector: Invalid value: "object": labelSelector in body must be of type string: "object", .status.labelSelector: Invalid value: "": .status.labelSelector accessor error: map[] is of the type map[string]interface {}, expected string]"#,
        ),
        (
            r#"{"status":"x"}"#,
            r#"[status: Invalid value: "string":  in body must be of type object: "string", .status.replicas: Invalid value: 0: .status.replicas accessor error: x is of the type string, expected map[string]interface{}, .status.labelSelector: Invalid value: "": .status.labelSelector accessor error: x is of the type string, expected map[string]interface{}]"#,
        ),
    ];
    for (body, want) in cases {
        let (status, got) = server
            .send(
                server
                    .http
                    .patch(server.url(&format!("{CT}/status")))
                    .header("content-type", "application/merge-patch+json")
                    .body(body),
            )
            .await;
        assert_eq!(status, 422, "{got}");
        assert_eq!(got["message"], format!("{prefix}{want}"), "{body}");
        assert_eq!(got["details"]["kind"], "CronTab");
    }
}

/// `nodes/{n}/proxy` and `services/{s}/proxy`, with or without a path after them: the object is
/// looked up (a missing one is a 404 `Status`), then the answer is the apiserver's for a backend
/// it cannot reach, a 503 `Status`; never a plain-text 404.
#[rstest]
#[tokio::test]
async fn proxies_answer_with_a_status(#[future(awt)] server: TestServer) {
    let (status, body) = server.get("/api/v1/nodes/ghost/proxy/stats/summary").await;
    assert_eq!(status, 404, "{body}");
    assert_eq!(body["message"], "nodes \"ghost\" not found");
    let node = serde_json::json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}});
    assert_eq!(server.post("/api/v1/nodes", &node).await.0, 201);
    for path in [
        "/api/v1/nodes/n1/proxy",
        "/api/v1/nodes/n1/proxy/stats/summary",
    ] {
        let (status, body) = server.get(path).await;
        assert_eq!(status, 503, "{path}: {body}");
        assert_eq!(body["kind"], "Status");
        assert_eq!(body["reason"], "ServiceUnavailable");
        assert_eq!(
            body["message"],
            "error trying to reach service: kubefake runs no kubelet for node \"n1\""
        );
    }
    let service = serde_json::json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "web"}, "spec": {"ports": [{"port": 80}]}});
    let services = "/api/v1/namespaces/default/services";
    assert_eq!(server.post(services, &service).await.0, 201);
    let (status, body) = server
        .get(&format!("{services}/web/proxy/index.html"))
        .await;
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["reason"], "ServiceUnavailable");
    let (status, body) = server.get(&format!("{services}/nothing/proxy/")).await;
    assert_eq!(status, 404, "{body}");
    assert_eq!(body["kind"], "Status");
}
