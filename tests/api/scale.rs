//! `/scale` of the built-in kinds: who owns the replicas after writes through the Scale
//! (update, patch and server-side apply), the sequence the apiserver's own integration test
//! (`TestScaleAllResources`) walks, through kube-rs.

use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use rstest::rstest;
use serde_json::{json, Value};

use crate::harness::{api_error, server, TestServer};

fn workload(api_version: &str, kind: &str) -> Value {
    let labels = json!({"app": "nginx"});
    let selector = if kind == "ReplicationController" {
        labels.clone()
    } else {
        json!({"matchLabels": labels})
    };
    json!({"apiVersion": api_version, "kind": kind,
        "metadata": {"name": "test", "namespace": "default"},
        "spec": {"replicas": 1, "selector": selector,
            "template": {"metadata": {"labels": labels},
                "spec": {"containers": [{"name": "nginx", "image": "nginx:latest"}]}}}})
}

fn api(
    server: &TestServer,
    group: &str,
    version: &str,
    kind: &str,
    plural: &str,
) -> Api<DynamicObject> {
    let ar =
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural);
    Api::namespaced_with(server.client.clone(), "default", &ar)
}

/// The managers whose entries own `spec.replicas`, sorted.
async fn replicas_owners(api: &Api<DynamicObject>) -> Vec<String> {
    let obj = api.get("test").await.expect("get");
    let mut owners: Vec<String> = obj
        .metadata
        .managed_fields
        .unwrap_or_default()
        .into_iter()
        .filter(|e| {
            e.fields_v1
                .as_ref()
                .is_some_and(|f| f.0["f:spec"].get("f:replicas").is_some())
        })
        .filter_map(|e| e.manager)
        .collect();
    owners.sort();
    owners
}

async fn replicas(api: &Api<DynamicObject>) -> i64 {
    let obj = api.get("test").await.expect("get");
    obj.data["spec"]["replicas"].as_i64().expect("replicas")
}

fn scale(replicas: i64) -> Value {
    json!({"kind": "Scale", "apiVersion": "autoscaling/v1",
        "metadata": {"name": "test", "namespace": "default"}, "spec": {"replicas": replicas}})
}

#[rstest]
#[case::deployment("apps", "Deployment", "deployments")]
#[case::statefulset("apps", "StatefulSet", "statefulsets")]
#[case::replicaset("apps", "ReplicaSet", "replicasets")]
#[case::replicationcontroller("", "ReplicationController", "replicationcontrollers")]
#[tokio::test]
async fn writes_through_scale_own_the_replicas(
    #[future(awt)] server: TestServer,
    #[case] group: &str,
    #[case] kind: &str,
    #[case] plural: &str,
) {
    let api_version = if group.is_empty() {
        "v1".to_string()
    } else {
        format!("{group}/v1")
    };
    let api = api(&server, group, "v1", kind, plural);
    let object = workload(&api_version, kind);
    let apply = |manager: &str| PatchParams::apply(manager);
    api.patch("test", &apply("apply_test"), &Patch::Apply(&object))
        .await
        .expect("create by apply");
    assert_eq!(replicas_owners(&api).await, ["apply_test"]);

    let merge = |manager: &str| PatchParams {
        field_manager: Some(manager.into()),
        ..Default::default()
    };
    api.patch_scale(
        "test",
        &merge("scale_test"),
        &Patch::Merge(json!({"spec": {"replicas": 5}})),
    )
    .await
    .expect("scale by merge patch");
    assert_eq!(replicas(&api).await, 5);
    assert_eq!(replicas_owners(&api).await, ["scale_test"]);

    // The first applier no longer owns the replicas: applying them again conflicts.
    let err = api
        .patch("test", &apply("apply_test"), &Patch::Apply(&object))
        .await
        .expect_err("conflict");
    assert_eq!(api_error(err).code, 409);
    api.patch("test", &apply("apply_test").force(), &Patch::Apply(&object))
        .await
        .expect("forced apply");
    assert_eq!(replicas(&api).await, 1);
    assert_eq!(replicas_owners(&api).await, ["apply_test"]);

    // An apply through /scale conflicts with the parent's owner, and forced takes the field.
    let err = api
        .patch_scale("test", &apply("apply_scale"), &Patch::Apply(scale(17)))
        .await
        .expect_err("conflict through scale");
    let status = api_error(err);
    assert_eq!(status.code, 409);
    assert_eq!(
        status.message,
        "Apply failed with 1 conflict: conflict with \"apply_test\": .spec.replicas"
    );
    let applied = api
        .patch_scale(
            "test",
            &apply("apply_scale").force(),
            &Patch::Apply(scale(17)),
        )
        .await
        .expect("forced apply through scale");
    assert_eq!(applied.spec.and_then(|s| s.replicas), Some(17));
    assert_eq!(replicas(&api).await, 17);
    assert_eq!(replicas_owners(&api).await, ["apply_scale"]);
    let obj = api.get("test").await.expect("get");
    let entry = obj
        .metadata
        .managed_fields
        .unwrap_or_default()
        .into_iter()
        .find(|e| e.manager.as_deref() == Some("apply_scale"))
        .expect("the scale applier's entry");
    assert_eq!(entry.operation.as_deref(), Some("Apply"));
    assert_eq!(entry.subresource.as_deref(), Some("scale"));
    assert_eq!(entry.api_version.as_deref(), Some(api_version.as_str()));

    let put = PostParams {
        field_manager: Some("replace_test".into()),
        ..Default::default()
    };
    let body = serde_json::from_value(scale(7)).expect("a Scale");
    api.replace_scale("test", &put, &body)
        .await
        .expect("replace scale");
    assert_eq!(replicas(&api).await, 7);
    assert_eq!(replicas_owners(&api).await, ["replace_test"]);

    // Applying the value already there shares the field.
    api.patch_scale("test", &apply("co_owning_test"), &Patch::Apply(scale(7)))
        .await
        .expect("co-owning apply");
    assert_eq!(
        replicas_owners(&api).await,
        ["co_owning_test", "replace_test"]
    );

    api.patch_scale(
        "test",
        &merge("scale_test"),
        &Patch::Merge(json!({"spec": {"replicas": 5}})),
    )
    .await
    .expect("scale again");
    assert_eq!(replicas(&api).await, 5);
    assert_eq!(replicas_owners(&api).await, ["scale_test"]);
}

/// A write through /scale that leaves the replicas as they are changes no ownership
/// (`TestScaleUpdateOnlyStatus`); a Scale of the wrong kind is refused as the field
/// manager's version check refuses it.
#[rstest]
#[tokio::test]
async fn scale_writes_that_change_nothing(#[future(awt)] server: TestServer) {
    let api = api(&server, "apps", "v1", "Deployment", "deployments");
    api.patch(
        "test",
        &PatchParams::apply("apply_test"),
        &Patch::Apply(workload("apps/v1", "Deployment")),
    )
    .await
    .expect("create by apply");
    let merge = PatchParams {
        field_manager: Some("scale_test".into()),
        ..Default::default()
    };
    api.patch_scale(
        "test",
        &merge,
        &Patch::Merge(json!({"status": {"replicas": 42}})),
    )
    .await
    .expect("status-only scale patch");
    assert_eq!(replicas(&api).await, 1);
    assert_eq!(replicas_owners(&api).await, ["apply_test"]);

    let mut wrong = scale(3);
    wrong["apiVersion"] = json!("autoscaling/v2");
    let err = api
        .patch_scale("test", &PatchParams::apply("x"), &Patch::Apply(wrong))
        .await
        .expect_err("wrong version");
    let status = api_error(err);
    assert_eq!(status.code, 400);
    assert_eq!(
        status.message,
        "invalid object type: autoscaling/v2, Kind=Scale"
    );
    assert_eq!(replicas(&api).await, 1);
}

/// A deliberate difference: a write through `/scale` is admitted as an UPDATE of the object
/// itself (subresource ""), so a policy on `deployments` sees it; the apiserver admits it as
/// `deployments/scale` with an `autoscaling/v1 Scale`, which kubefake does not build.
#[rstest]
#[tokio::test]
async fn scale_writes_are_admitted_as_writes_of_the_object(#[future(awt)] server: TestServer) {
    let api = api(&server, "apps", "v1", "Deployment", "deployments");
    api.patch(
        "test",
        &PatchParams::apply("apply_test"),
        &Patch::Apply(workload("apps/v1", "Deployment")),
    )
    .await
    .expect("create by apply");
    let policy = json!({"metadata": {"name": "few-replicas"}, "spec": {
        "matchConstraints": {"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"],
            "operations": ["UPDATE"], "resources": ["deployments"]}]},
        "validations": [{"expression": "object.spec.replicas <= 10", "message": "too many"}]}});
    let (status, body) = server
        .post(
            "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies",
            &policy,
        )
        .await;
    assert_eq!(status, 201, "{body}");
    let binding = json!({"metadata": {"name": "few-replicas"},
        "spec": {"policyName": "few-replicas", "validationActions": ["Deny"]}});
    let (status, body) = server
        .post(
            "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings",
            &binding,
        )
        .await;
    assert_eq!(status, 201, "{body}");
    let err = api
        .patch_scale(
            "test",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 20}})),
        )
        .await
        .expect_err("denied");
    let status = api_error(err);
    assert_eq!(status.code, 422, "{}", status.message);
    assert!(status.message.contains("too many"), "{}", status.message);
    assert_eq!(replicas(&api).await, 1);
}
