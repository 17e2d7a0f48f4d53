//! Deleting CRDs and namespaces: what goes with them, and what comes back empty.

use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use rstest::rstest;
use serde_json::{json, Value};

use crate::harness::{api_error, server, TestServer};

const CRD_PATH: &str =
    "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.stable.example.com";

#[rstest]
#[tokio::test]
async fn deleting_a_crd_removes_its_endpoint_and_objects(#[future(awt)] server: TestServer) {
    server.install_crontab_crd().await;
    server.create_crontab("default", "one").await;
    server.create_crontab("kube-system", "two").await;

    let resp = server
        .http
        .delete(server.url(CRD_PATH))
        .send()
        .await
        .expect("delete");
    assert_eq!(resp.status(), 200);
    let crd: Value = resp.json().await.expect("json");
    assert_eq!(crd["kind"], "CustomResourceDefinition");
    assert!(crd["metadata"]["deletionTimestamp"].is_string());

    assert_eq!(server.get(CRD_PATH).await.0, 404);
    let resp = server
        .http
        .get(server.url("/apis/stable.example.com/v1/crontabs"))
        .send()
        .await
        .expect("get");
    assert_eq!(resp.status(), 404);
    let err = server
        .crontabs("default")
        .list(&ListParams::default())
        .await
        .expect_err("endpoint gone");
    assert!(
        matches!(err, kube::Error::Api(ref s) if s.code == 404),
        "{err:?}"
    );

    // Recreated, it starts empty.
    server.install_crontab_crd().await;
    let list = server
        .crontabs("default")
        .list(&ListParams::default())
        .await
        .expect("list");
    assert!(list.items.is_empty());
    let all: Api<crate::harness::CronTab> = Api::all(server.client.clone());
    assert!(all
        .list(&ListParams::default())
        .await
        .expect("list")
        .items
        .is_empty());
}

#[rstest]
#[tokio::test]
async fn deleting_a_namespace_deletes_its_content(#[future(awt)] server: TestServer) {
    server.install_crontab_crd().await;
    let namespaces: Api<Namespace> = Api::all(server.client.clone());
    let ns: Namespace =
        serde_json::from_value(json!({"metadata": {"name": "doomed"}})).expect("ns");
    namespaces
        .create(&PostParams::default(), &ns)
        .await
        .expect("create ns");
    server.create_crontab("doomed", "inside").await;
    server.create_crontab("default", "outside").await;

    let deleted = namespaces
        .delete("doomed", &DeleteParams::default())
        .await
        .expect("delete ns");
    let ns = deleted.left().expect("the namespace object");
    assert_eq!(
        ns.status.and_then(|s| s.phase).as_deref(),
        Some("Terminating")
    );
    assert!(ns.metadata.deletion_timestamp.is_some());

    assert_eq!(
        api_error(namespaces.get("doomed").await.expect_err("gone")).code,
        404
    );
    assert_eq!(
        api_error(
            server
                .crontabs("doomed")
                .get("inside")
                .await
                .expect_err("gone")
        )
        .code,
        404
    );
    server
        .crontabs("default")
        .get("outside")
        .await
        .expect("other namespaces untouched");
}

#[rstest]
#[tokio::test]
async fn a_terminating_namespace_waits_for_finalizers(#[future(awt)] server: TestServer) {
    server.install_crontab_crd().await;
    let (status, _) = server
        .post("/api/v1/namespaces", &json!({"metadata": {"name": "slow"}}))
        .await;
    assert_eq!(status, 201);
    let held = json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
        "metadata": {"name": "held", "finalizers": ["example.com/hold"]}, "spec": {"image": "i"}});
    assert_eq!(
        server
            .post(
                "/apis/stable.example.com/v1/namespaces/slow/crontabs",
                &held
            )
            .await
            .0,
        201
    );

    let resp = server
        .http
        .delete(server.url("/api/v1/namespaces/slow"))
        .send()
        .await
        .expect("delete");
    assert_eq!(resp.status(), 200);
    let (_, ns) = server.get("/api/v1/namespaces/slow").await;
    assert_eq!(ns["status"]["phase"], "Terminating");
    let (_, obj) = server
        .get("/apis/stable.example.com/v1/namespaces/slow/crontabs/held")
        .await;
    assert!(obj["metadata"]["deletionTimestamp"].is_string());

    // Nothing new may be created in it.
    let fresh = json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab", "metadata": {"name": "late"}});
    let (status, body) = server
        .post(
            "/apis/stable.example.com/v1/namespaces/slow/crontabs",
            &fresh,
        )
        .await;
    assert_eq!(status, 403);
    assert_eq!(body["message"], "crontabs.stable.example.com \"late\" is forbidden: unable to create new content in namespace slow because it is being terminated");

    // Releasing the finalizer lets the object, then the namespace, go.
    let resp = server
        .http
        .patch(server.url("/apis/stable.example.com/v1/namespaces/slow/crontabs/held"))
        .header("content-type", "application/merge-patch+json")
        .body(r#"{"metadata":{"finalizers":null}}"#)
        .send()
        .await
        .expect("patch");
    assert_eq!(resp.status(), 200);
    assert_eq!(
        server
            .get("/apis/stable.example.com/v1/namespaces/slow/crontabs/held")
            .await
            .0,
        404
    );
    assert_eq!(server.get("/api/v1/namespaces/slow").await.0, 404);
}

#[rstest]
#[tokio::test]
async fn namespace_conditions_while_content_remains(#[future(awt)] server: TestServer) {
    server.install_crontab_crd().await;
    server
        .post("/api/v1/namespaces", &json!({"metadata": {"name": "held"}}))
        .await;
    let held = json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
        "metadata": {"name": "h", "finalizers": ["example.com/hold"]}});
    server
        .post(
            "/apis/stable.example.com/v1/namespaces/held/crontabs",
            &held,
        )
        .await;
    server
        .http
        .delete(server.url("/api/v1/namespaces/held"))
        .send()
        .await
        .expect("delete");
    let (_, ns) = server.get("/api/v1/namespaces/held").await;
    let condition = |t: &str| {
        ns["status"]["conditions"]
            .as_array()
            .and_then(|cs| cs.iter().find(|c| c["type"] == t))
            .cloned()
            .unwrap_or(Value::Null)
    };
    assert_eq!(ns["spec"]["finalizers"], json!(["kubernetes"]));
    assert_eq!(
        condition("NamespaceDeletionDiscoveryFailure")["reason"],
        "ResourcesDiscovered"
    );
    assert_eq!(
        condition("NamespaceDeletionContentFailure")["status"],
        "False"
    );
    let remaining = condition("NamespaceContentRemaining");
    assert_eq!(remaining["status"], "True");
    assert_eq!(remaining["reason"], "SomeResourcesRemain");
    assert_eq!(
        remaining["message"],
        "Some resources are remaining: crontabs.stable.example.com has 1 resource instances"
    );
    let finalizers = condition("NamespaceFinalizersRemaining");
    assert_eq!(finalizers["reason"], "SomeFinalizersRemain");
    assert_eq!(finalizers["message"], "Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances");
}

#[rstest]
#[tokio::test]
async fn a_terminating_crd_waits_for_its_objects(#[future(awt)] server: TestServer) {
    server.install_crontab_crd().await;
    let held = json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
        "metadata": {"name": "h", "finalizers": ["example.com/hold"]}});
    server
        .post(
            "/apis/stable.example.com/v1/namespaces/default/crontabs",
            &held,
        )
        .await;
    let resp = server
        .http
        .delete(server.url(CRD_PATH))
        .send()
        .await
        .expect("delete");
    assert_eq!(resp.status(), 200);
    let (status, crd) = server.get(CRD_PATH).await;
    assert_eq!(status, 200, "held by the object's finalizer");
    let terminating = crd["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == "Terminating"))
        .cloned()
        .unwrap_or(Value::Null);
    assert_eq!(terminating["status"], "True");
    assert_eq!(terminating["reason"], "InstanceDeletionInProgress");
    assert_eq!(
        crd["metadata"]["finalizers"],
        json!(["customresourcecleanup.apiextensions.k8s.io"])
    );

    // Discovery shrinks to the verbs of a terminating resource; creates are refused.
    let (_, list) = server.get("/apis/stable.example.com/v1").await;
    assert_eq!(
        list["resources"][0]["verbs"],
        json!(["delete", "deletecollection", "get", "list", "watch"])
    );
    let (status, body) = server
        .post("/apis/stable.example.com/v1/namespaces/default/crontabs", &json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab", "metadata": {"name": "new"}}))
        .await;
    // apiextensions' forbidCreateAdmission.
    assert_eq!(status, 403);
    assert_eq!(
        body["message"],
        "crontabs.stable.example.com \"new\" is forbidden: create not allowed while custom resource definition is terminating"
    );

    // Releasing the object finishes the CRD.
    server
        .http
        .patch(server.url("/apis/stable.example.com/v1/namespaces/default/crontabs/h"))
        .header("content-type", "application/merge-patch+json")
        .body(r#"{"metadata":{"finalizers":null}}"#)
        .send()
        .await
        .expect("patch");
    assert_eq!(server.get(CRD_PATH).await.0, 404);
    assert_eq!(server.get("/apis/stable.example.com/v1").await.0, 404);
}

/// A controller built on kube-rs's `finalizer` helper: its cleanup runs on delete, then the
/// object goes.
#[rstest]
#[tokio::test]
async fn kube_rs_finalizer_helper_runs_cleanup(#[future(awt)] server: TestServer) {
    use kube::runtime::finalizer::{finalizer, Event};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    server.install_crontab_crd().await;
    let api = server.crontabs("default");
    server.create_crontab("default", "managed").await;
    let cleanups = Arc::new(AtomicUsize::new(0));
    let reconcile = |api: Api<crate::harness::CronTab>, cleanups: Arc<AtomicUsize>| async move {
        let obj = Arc::new(api.get("managed").await.expect("get"));
        finalizer(&api, "example.com/cleanup", obj, |event| async move {
            match event {
                Event::Apply(_) => {
                    Ok::<_, kube::Error>(kube::runtime::controller::Action::await_change())
                }
                Event::Cleanup(_) => {
                    cleanups.fetch_add(1, Ordering::SeqCst);
                    Ok(kube::runtime::controller::Action::await_change())
                }
            }
        })
        .await
    };
    // First pass adds the finalizer, second applies.
    reconcile(api.clone(), cleanups.clone())
        .await
        .expect("add finalizer");
    reconcile(api.clone(), cleanups.clone())
        .await
        .expect("apply");
    let held = api.get("managed").await.expect("get");
    assert_eq!(
        held.metadata.finalizers,
        Some(vec!["example.com/cleanup".to_string()])
    );
    api.delete("managed", &DeleteParams::default())
        .await
        .expect("delete");
    reconcile(api.clone(), cleanups.clone())
        .await
        .expect("cleanup");
    assert_eq!(cleanups.load(Ordering::SeqCst), 1);
    assert!(
        api.get_opt("managed").await.expect("get").is_none(),
        "gone once the finalizer is removed"
    );
}
