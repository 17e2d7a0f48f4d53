//! apiregistration.k8s.io/v1 APIServices through kube-rs's dynamic API and plain HTTP (k8s-openapi
//! has no aggregator types): the local APIServices every cluster starts with, Available on
//! create; Service-backed registrations validated, stored and conflicting like the real ones;
//! status written only through `/status`; Tables; protobuf.

use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::core::DynamicObject;
use rstest::rstest;
use serde_json::{json, Value};

use crate::harness::{api_error, server, TestServer};
use crate::rbac::{protobuf, table};

const PATH: &str = "/apis/apiregistration.k8s.io/v1/apiservices";

fn api(server: &TestServer) -> kube::Api<DynamicObject> {
    server.dynamic(
        ("apiregistration.k8s.io", "v1", "APIService"),
        "apiservices",
        None,
    )
}

fn wardle() -> DynamicObject {
    serde_json::from_value(json!({
        "apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
        "metadata": {"name": "v1alpha1.wardle.k8s.io"},
        "spec": {"group": "wardle.k8s.io", "version": "v1alpha1", "insecureSkipTLSVerify": true,
            "groupPriorityMinimum": 1000, "versionPriority": 15,
            "service": {"namespace": "wardle", "name": "api"}}
    }))
    .expect("an object")
}

#[rstest]
#[tokio::test]
async fn built_in_group_versions_are_registered_locally(#[future(awt)] server: TestServer) {
    let core = api(&server).get("v1.").await.expect("bootstrapped");
    assert_eq!(core.data["spec"]["groupPriorityMinimum"], 18000);
    assert_eq!(core.data["spec"]["versionPriority"], 1);
    assert_eq!(
        core.metadata.labels.as_ref().expect("labels")["kube-aggregator.kubernetes.io/automanaged"],
        "onstart"
    );
    let apps = api(&server).get("v1.apps").await.expect("bootstrapped");
    let available = &apps.data["status"]["conditions"][0];
    assert_eq!(available["type"], "Available");
    assert_eq!(available["status"], "True");
    assert_eq!(available["reason"], "Local");
    assert_eq!(
        available["message"],
        "Local APIServices are always available"
    );
    assert!(api(&server).get("v2.autoscaling").await.is_ok());
    // Group-versions kubefake does not serve are not registered.
    assert!(api(&server)
        .get("v1beta1.storagemigration.k8s.io")
        .await
        .is_err());
    assert!(api(&server)
        .get("v1.flowcontrol.apiserver.k8s.io")
        .await
        .is_ok());
    assert!(api(&server).get("v1.node.k8s.io").await.is_ok());
    assert!(api(&server).get("v1.certificates.k8s.io").await.is_ok());

    let (columns, body) = table(&server, &format!("{PATH}/v1.apps")).await;
    assert_eq!(columns, ["Name", "Service", "Available", "Age"]);
    assert_eq!(body["rows"][0]["cells"][1], "Local");
    assert_eq!(body["rows"][0]["cells"][2], "True");
    let proto = protobuf(&server, &format!("{PATH}/v1.apps")).await;
    assert_eq!(proto["spec"]["groupPriorityMinimum"], 17800);
}

#[rstest]
#[tokio::test]
async fn service_registrations_conflict_and_validate(#[future(awt)] server: TestServer) {
    let api = api(&server);
    let created = api
        .create(&PostParams::default(), &wardle())
        .await
        .expect("created");
    assert_eq!(created.data["spec"]["service"]["port"], 443, "defaulted");
    assert_eq!(
        created.data["status"],
        json!({}),
        "no condition until checked"
    );
    let err = api_error(
        api.create(&PostParams::default(), &wardle())
            .await
            .expect_err("exists"),
    );
    assert_eq!((err.code, err.reason.as_str()), (409, "AlreadyExists"));
    assert_eq!(
        err.message,
        "apiservices.apiregistration.k8s.io \"v1alpha1.wardle.k8s.io\" already exists"
    );
    let (_, body) = table(&server, &format!("{PATH}/v1alpha1.wardle.k8s.io")).await;
    assert_eq!(body["rows"][0]["cells"][1], "wardle/api");
    assert_eq!(body["rows"][0]["cells"][2], "Unknown");

    let mut bad = wardle();
    bad.metadata.name = Some("wardle".into());
    bad.data["spec"]["caBundle"] = json!("AAAA");
    let before = server.rv();
    let err = api_error(
        api.create(&PostParams::default(), &bad)
            .await
            .expect_err("invalid"),
    );
    assert_eq!(err.code, 422);
    assert_eq!(
        err.message,
        "APIService.apiregistration.k8s.io \"wardle\" is invalid: [metadata.name: Invalid value: \"wardle\": must be `spec.version+\".\"+spec.group`: \"v1alpha1.wardle.k8s.io\", spec.insecureSkipTLSVerify: Invalid value: true: may not be true if caBundle is present]"
    );
    assert_eq!(server.rv(), before);
    api.delete("v1alpha1.wardle.k8s.io", &DeleteParams::default())
        .await
        .expect("deleted");
}

#[rstest]
#[tokio::test]
async fn status_is_written_through_its_subresource(#[future(awt)] server: TestServer) {
    let api = api(&server);
    api.create(&PostParams::default(), &wardle())
        .await
        .expect("created");
    let condition = |status: &str| {
        json!({"status": {"conditions": [{"type": "Available", "status": status,
            "reason": "MissingEndpoints", "message": "endpoints for service/api in \"wardle\" have no addresses",
            "lastTransitionTime": "2026-01-01T00:00:00Z"}]}})
    };
    let merge = PatchParams::default();
    let main = api
        .patch(
            "v1alpha1.wardle.k8s.io",
            &merge,
            &Patch::Merge(condition("False")),
        )
        .await
        .expect("patched");
    assert_eq!(
        main.data["status"],
        json!({}),
        "the main resource keeps status"
    );
    let patched = api
        .patch_status(
            "v1alpha1.wardle.k8s.io",
            &merge,
            &Patch::Merge(condition("False")),
        )
        .await
        .expect("status patched");
    assert_eq!(patched.data["status"]["conditions"][0]["status"], "False");
    let (_, body) = table(&server, &format!("{PATH}/v1alpha1.wardle.k8s.io")).await;
    assert_eq!(body["rows"][0]["cells"][2], "False (MissingEndpoints)");
    let err = api_error(
        api.patch_status(
            "v1alpha1.wardle.k8s.io",
            &merge,
            &Patch::Merge(condition("Maybe")),
        )
        .await
        .expect_err("bad status"),
    );
    assert_eq!(
        err.message,
        "APIService.apiregistration.k8s.io \"v1alpha1.wardle.k8s.io\" is invalid: status.conditions[0].status: Unsupported value: \"Maybe\": supported values: \"True\", \"False\", \"Unknown\""
    );
    let (code, list): (u16, Value) = server.get(PATH).await;
    assert_eq!(code, 200);
    assert!(list["items"]
        .as_array()
        .expect("items")
        .iter()
        .any(|i| i["metadata"]["name"] == "v1alpha1.wardle.k8s.io"));
}

/// Every group-version a CRD serves gets its local APIService (`crdregistration`), Available,
/// labelled automanaged "true"; it goes once no CRD serves the version.
#[rstest]
#[tokio::test]
async fn crd_group_versions_get_their_api_services(#[future(awt)] server: TestServer) {
    let crd = server.install_crontab_crd().await;
    let registered = api(&server)
        .get("v1.stable.example.com")
        .await
        .expect("registered with the CRD");
    assert_eq!(
        registered.metadata.labels.as_ref().expect("labels")
            ["kube-aggregator.kubernetes.io/automanaged"],
        "true"
    );
    assert_eq!(
        registered.data["spec"],
        json!({"group": "stable.example.com", "version": "v1",
            "groupPriorityMinimum": 1000, "versionPriority": 100})
    );
    let available = &registered.data["status"]["conditions"][0];
    assert_eq!(
        (
            &available["type"],
            &available["status"],
            &available["reason"]
        ),
        (&json!("Available"), &json!("True"), &json!("Local"))
    );
    let served: Vec<&str> = crd["spec"]["versions"]
        .as_array()
        .expect("versions")
        .iter()
        .filter(|v| v["served"] == true)
        .filter_map(|v| v["name"].as_str())
        .collect();
    for version in &served {
        let name = format!("{version}.stable.example.com");
        assert!(api(&server).get(&name).await.is_ok(), "{name}");
    }

    // The CRD goes: so do its APIServices.
    let crds = server.dynamic(
        ("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
        "customresourcedefinitions",
        None,
    );
    crds.delete("crontabs.stable.example.com", &DeleteParams::default())
        .await
        .expect("deleted");
    for version in &served {
        let name = format!("{version}.stable.example.com");
        let gone = api(&server).get(&name).await.expect_err("removed");
        assert_eq!(api_error(gone).code, 404, "{name}");
    }
}
