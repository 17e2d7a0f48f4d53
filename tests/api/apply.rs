//! Server-side apply through kube-rs: create, merge, conflicts, force, /status, list-map
//! entries shared by two managers, managedFields.

use kube::api::{Patch, PatchParams};
use rstest::rstest;
use serde_json::{json, Value};

use crate::harness::{api_error, server, TestServer};

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

async fn install(server: &TestServer) {
    let mut crd = crate::harness::crontab_crd();
    let schema = &mut crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"];
    schema["spec"]["properties"]["ports"] = json!({"type": "array", "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": ["name"],
        "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}}});
    schema["status"] = json!({"type": "object", "properties": {"replicas": {"type": "integer"}}});
    crd["spec"]["versions"][0]["subresources"] = json!({"status": {}});
    assert_eq!(server.post(CRDS, &crd).await.0, 201);
}

fn config(spec: Value) -> Value {
    json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab", "metadata": {"name": "ssa"}, "spec": spec})
}

fn managers(obj: &Value) -> Vec<(String, String)> {
    obj["metadata"]["managedFields"]
        .as_array()
        .map(|m| {
            m.iter()
                .map(|e| {
                    (
                        e["manager"].as_str().unwrap_or("").to_string(),
                        e["operation"].as_str().unwrap_or("").to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[rstest]
#[tokio::test]
async fn apply_creates_merges_conflicts_and_forces(#[future(awt)] server: TestServer) {
    install(&server).await;
    let api = server.dynamic(
        ("stable.example.com", "v1", "CronTab"),
        "crontabs",
        Some("default"),
    );
    let alice = PatchParams::apply("alice");

    let created = api
        .patch(
            "ssa",
            &alice,
            &Patch::Apply(config(json!({"image": "a", "replicas": 1}))),
        )
        .await
        .expect("create by apply");
    let created = serde_json::to_value(&created).expect("json");
    assert_eq!(created["spec"], json!({"image": "a", "replicas": 1}));
    assert_eq!(
        managers(&created),
        [("alice".to_string(), "Apply".to_string())]
    );
    assert_eq!(
        created["metadata"]["managedFields"][0]["fieldsV1"],
        json!({"f:spec": {"f:image": {}, "f:replicas": {}}})
    );

    // Re-applying the same configuration is a no-op: no new resourceVersion.
    let rv = server.rv();
    api.patch(
        "ssa",
        &alice,
        &Patch::Apply(config(json!({"image": "a", "replicas": 1}))),
    )
    .await
    .expect("re-apply");
    assert_eq!(server.rv(), rv);

    // Another manager changing alice's field conflicts.
    let bob = PatchParams::apply("bob");
    let err = api
        .patch("ssa", &bob, &Patch::Apply(config(json!({"replicas": 5}))))
        .await
        .expect_err("conflict");
    let status = api_error(err);
    assert_eq!(status.code, 409);
    assert_eq!(status.reason, "Conflict");
    assert_eq!(
        status.message,
        "Apply failed with 1 conflict: conflict with \"alice\": .spec.replicas"
    );
    // The same value is shared ownership, not a conflict.
    api.patch(
        "ssa",
        &bob,
        &Patch::Apply(config(json!({"replicas": 1, "cronSpec": "* * * * *"}))),
    )
    .await
    .expect("co-own");
    // Force takes the field.
    let forced = api
        .patch(
            "ssa",
            &bob.clone().force(),
            &Patch::Apply(config(json!({"replicas": 5, "cronSpec": "* * * * *"}))),
        )
        .await
        .expect("force");
    assert_eq!(forced.data["spec"]["replicas"], 5);

    // Alice drops image from her configuration: nobody else owns it, so it goes.
    let dropped = api
        .patch("ssa", &alice, &Patch::Apply(config(json!({}))))
        .await
        .expect("apply less");
    assert!(dropped.data["spec"].get("image").is_none());
    assert_eq!(dropped.data["spec"]["replicas"], 5, "bob's field stays");

    // An update by another client records operation Update.
    let updated = api
        .patch(
            "ssa",
            &PatchParams {
                field_manager: Some("carol".into()),
                ..Default::default()
            },
            &Patch::Merge(json!({"spec": {"image": "c"}})),
        )
        .await
        .expect("merge patch");
    let updated = serde_json::to_value(&updated).expect("json");
    assert!(managers(&updated).contains(&("carol".to_string(), "Update".to_string())));

    // fieldManager is required for apply.
    let (status, body) = server
        .send(
            server
                .http
                .patch(server.url("/apis/stable.example.com/v1/namespaces/default/crontabs/ssa"))
                .header("content-type", "application/apply-patch+yaml")
                .body("apiVersion: stable.example.com/v1\nkind: CronTab\n"),
        )
        .await;
    assert_eq!(status, 422);
    assert_eq!(body["message"], "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch");
}

#[rstest]
#[tokio::test]
async fn two_managers_share_list_map_entries(#[future(awt)] server: TestServer) {
    install(&server).await;
    let api = server.dynamic(
        ("stable.example.com", "v1", "CronTab"),
        "crontabs",
        Some("default"),
    );
    api.patch(
        "ssa",
        &PatchParams::apply("a"),
        &Patch::Apply(config(json!({"ports": [{"name": "http", "port": 80}]}))),
    )
    .await
    .expect("a");
    api.patch(
        "ssa",
        &PatchParams::apply("b"),
        &Patch::Apply(config(json!({"ports": [{"name": "grpc", "port": 90}]}))),
    )
    .await
    .expect("b");
    let obj = api.get("ssa").await.expect("get");
    let names: Vec<&str> = obj.data["spec"]["ports"]
        .as_array()
        .expect("ports")
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert_eq!(names, ["http", "grpc"], "merged by key");
    let b_fields = obj
        .metadata
        .managed_fields
        .as_ref()
        .expect("managed")
        .iter()
        .find(|m| m.manager.as_deref() == Some("b"))
        .expect("b entry");
    let fields = serde_json::to_value(&b_fields.fields_v1).expect("json");
    assert!(
        fields.to_string().contains(r#"k:{\"name\":\"grpc\"}"#),
        "{fields}"
    );
    // b withdraws its entry; a's stays.
    let after = api
        .patch(
            "ssa",
            &PatchParams::apply("b"),
            &Patch::Apply(config(json!({}))),
        )
        .await
        .expect("b again");
    let names: Vec<&str> = after.data["spec"]["ports"]
        .as_array()
        .expect("ports")
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert_eq!(names, ["http"]);
}

#[rstest]
#[tokio::test]
async fn apply_on_status(#[future(awt)] server: TestServer) {
    install(&server).await;
    let api = server.dynamic(
        ("stable.example.com", "v1", "CronTab"),
        "crontabs",
        Some("default"),
    );
    api.patch(
        "ssa",
        &PatchParams::apply("spec-owner"),
        &Patch::Apply(config(json!({"image": "i"}))),
    )
    .await
    .expect("create");
    let status_cfg = json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab", "metadata": {"name": "ssa"}, "status": {"replicas": 2}});
    let obj = api
        .patch_status(
            "ssa",
            &PatchParams::apply("status-owner"),
            &Patch::Apply(status_cfg),
        )
        .await
        .expect("status apply");
    assert_eq!(obj.data["status"]["replicas"], 2);
    let entry = obj
        .metadata
        .managed_fields
        .unwrap_or_default()
        .into_iter()
        .find(|m| m.manager.as_deref() == Some("status-owner"))
        .expect("entry");
    assert_eq!(entry.subresource.as_deref(), Some("status"));
    assert_eq!(entry.operation.as_deref(), Some("Apply"));
}

/// An apply configuration of another type (no apiVersion, another kind) is refused by the field
/// manager's version check, before anything else, with its message (`versionCheckManager`).
#[rstest]
#[tokio::test]
async fn apply_configurations_of_another_type_are_invalid_object_types(
    #[future(awt)] server: TestServer,
) {
    let configmaps: kube::Api<k8s_openapi::api::core::v1::ConfigMap> =
        kube::Api::namespaced(server.client.clone(), "default");
    let pp = kube::api::PatchParams::apply("tester");
    for (config, message) in [
        (
            serde_json::json!({"kind": "ConfigMap", "metadata": {"name": "c",
                "managedFields": [{"manager": "x"}]}}),
            "invalid object type: /, Kind=ConfigMap",
        ),
        (
            serde_json::json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "c"}}),
            "invalid object type: /v1, Kind=Secret",
        ),
        (
            serde_json::json!({"apiVersion": "apps/v1", "kind": "ConfigMap", "metadata": {"name": "c"}}),
            "invalid object type: apps/v1, Kind=ConfigMap",
        ),
    ] {
        let err = configmaps
            .patch("c", &pp, &kube::api::Patch::Apply(&config))
            .await
            .expect_err("refused");
        let status = crate::harness::api_error(err);
        assert_eq!((status.code, status.reason.as_str()), (400, "BadRequest"));
        assert_eq!(status.message, message);
    }
}
