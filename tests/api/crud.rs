//! Create, get, list, update, patch, delete and deletecollection through kube-rs.

use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::core::response::StatusSummary;
use rstest::rstest;
use serde_json::{json, Value};

use crate::harness::{api_error, server, CronTab, CronTabSpec, TestServer};

fn spec(image: &str) -> CronTabSpec {
    CronTabSpec {
        cron_spec: "* * * * */5".into(),
        image: image.into(),
        replicas: Some(1),
    }
}

#[rstest]
#[tokio::test]
async fn create_sets_server_fields(#[future(awt)] server: TestServer) {
    server.install_crontab_crd().await;
    let before = server.rv();
    let ct = server.create_crontab("default", "my-new-cron-object").await;
    let meta = &ct.metadata;
    assert_eq!(meta.namespace.as_deref(), Some("default"));
    assert_eq!(meta.generation, Some(1));
    assert!(meta.uid.as_deref().is_some_and(|u| u.len() == 36));
    assert!(meta.creation_timestamp.is_some());
    let rv: u64 = meta
        .resource_version
        .as_deref()
        .expect("rv")
        .parse()
        .expect("numeric rv");
    assert!(rv > before);

    let fetched = server
        .crontabs("default")
        .get("my-new-cron-object")
        .await
        .expect("get");
    assert_eq!(fetched.metadata.uid, ct.metadata.uid);
    assert_eq!(fetched.spec, ct.spec);
}

#[rstest]
#[tokio::test]
async fn generate_name_appends_five_characters(#[future(awt)] server: TestServer) {
    server.install_crontab_crd().await;
    let mut ct = CronTab::new("", spec("x"));
    ct.metadata.name = None;
    ct.metadata.generate_name = Some("cron-".into());
    let api = server.crontabs("default");
    let a = api
        .create(&PostParams::default(), &ct)
        .await
        .expect("create");
    let b = api
        .create(&PostParams::default(), &ct)
        .await
        .expect("create");
    let (a, b) = (
        a.metadata.name.expect("name"),
        b.metadata.name.expect("name"),
    );
    assert_ne!(a, b);
    for name in [&a, &b] {
        assert_eq!(name.len(), "cron-".len() + 5);
        assert!(name[5..]
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()));
    }
}

#[rstest]
#[tokio::test]
async fn lists_are_typed_ordered_and_versioned(#[future(awt)] server: TestServer) {
    server.install_crontab_crd().await;
    let (status, _) = server
        .post(
            "/api/v1/namespaces",
            &json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "alpha"}}),
        )
        .await;
    assert_eq!(status, 201);
    for (ns, name) in [("default", "b"), ("alpha", "z"), ("default", "a")] {
        server.create_crontab(ns, name).await;
    }
    let list = server
        .crontabs("default")
        .list(&ListParams::default())
        .await
        .expect("list");
    let names: Vec<_> = list
        .items
        .iter()
        .filter_map(|c| c.metadata.name.clone())
        .collect();
    assert_eq!(names, ["a", "b"]);
    let list_rv: u64 = list
        .metadata
        .resource_version
        .expect("rv")
        .parse()
        .expect("numeric");
    assert_eq!(list_rv, server.rv());

    let all: Api<CronTab> = Api::all(server.client.clone());
    let everywhere: Vec<_> = all
        .list(&ListParams::default())
        .await
        .expect("all namespaces")
        .items
        .into_iter()
        .map(|c| {
            (
                c.metadata.namespace.unwrap_or_default(),
                c.metadata.name.unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        everywhere,
        [
            ("alpha".into(), "z".into()),
            ("default".into(), "a".into()),
            ("default".into(), "b".into())
        ]
    );

    let (_, raw) = server
        .get("/apis/stable.example.com/v1/namespaces/default/crontabs")
        .await;
    assert_eq!(raw["kind"], "CronTabList");
    assert_eq!(raw["apiVersion"], "stable.example.com/v1");
    assert_eq!(raw["items"][0]["kind"], "CronTab");

    // Selectors on list.
    let labelled = server.crontabs("default");
    let mut ct = labelled.get("a").await.expect("get");
    ct.metadata.labels = Some([("tier".to_string(), "web".to_string())].into());
    labelled
        .replace("a", &PostParams::default(), &ct)
        .await
        .expect("label");
    let selected = labelled
        .list(&ListParams::default().labels("tier=web"))
        .await
        .expect("list");
    assert_eq!(selected.items.len(), 1);
    let by_name = labelled
        .list(&ListParams::default().fields("metadata.name=b"))
        .await
        .expect("list");
    assert_eq!(by_name.items[0].metadata.name.as_deref(), Some("b"));
}

#[rstest]
#[tokio::test]
async fn replace_uses_optimistic_concurrency_and_generation(#[future(awt)] server: TestServer) {
    server.install_crontab_crd().await;
    let api = server.crontabs("default");
    let original = server.create_crontab("default", "c").await;

    let mut labelled = original.clone();
    labelled.metadata.labels = Some([("a".to_string(), "b".to_string())].into());
    let labelled = api
        .replace("c", &PostParams::default(), &labelled)
        .await
        .expect("replace");
    assert_eq!(
        labelled.metadata.generation,
        Some(1),
        "metadata changes keep the generation"
    );

    let mut changed = labelled.clone();
    changed.spec.image = "new-image".into();
    let changed = api
        .replace("c", &PostParams::default(), &changed)
        .await
        .expect("replace");
    assert_eq!(changed.metadata.generation, Some(2));
    assert_eq!(
        changed.metadata.creation_timestamp,
        original.metadata.creation_timestamp
    );
    assert_eq!(changed.metadata.uid, original.metadata.uid);

    // The original's resourceVersion is stale now.
    let rv = server.rv();
    let err = api
        .replace("c", &PostParams::default(), &original)
        .await
        .expect_err("stale");
    let status = api_error(err);
    assert_eq!(status.code, 409);
    assert_eq!(status.reason, "Conflict");
    assert_eq!(
        status.message,
        "Operation cannot be fulfilled on crontabs.stable.example.com \"c\": the object has been modified; please apply your changes to the latest version and try again"
    );
    assert_eq!(server.rv(), rv);

    // A write that changes nothing is not a write.
    let same = api
        .replace("c", &PostParams::default(), &changed)
        .await
        .expect("no-op");
    assert_eq!(
        same.metadata.resource_version,
        changed.metadata.resource_version
    );
    assert_eq!(server.rv(), rv);

    // Custom resources refuse unconditional updates.
    let mut no_rv = changed.clone();
    no_rv.metadata.resource_version = None;
    let status = api_error(
        api.replace("c", &PostParams::default(), &no_rv)
            .await
            .expect_err("needs rv"),
    );
    assert_eq!(status.code, 422);
    assert_eq!(
        status.message,
        "crontabs.stable.example.com \"c\" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update"
    );

    let status = api_error(
        api.replace(
            "missing",
            &PostParams::default(),
            &CronTab::new("missing", spec("x")),
        )
        .await
        .expect_err("404"),
    );
    assert_eq!(status.code, 404);
}

#[rstest]
#[tokio::test]
async fn merge_and_json_patches(#[future(awt)] server: TestServer) {
    server.install_crontab_crd().await;
    let api = server.crontabs("default");
    server.create_crontab("default", "p").await;

    let merged = api
        .patch(
            "p",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"image": "merged"}, "metadata": {"labels": {"x": "y"}}})),
        )
        .await
        .expect("merge patch");
    assert_eq!(merged.spec.image, "merged");
    assert_eq!(merged.metadata.generation, Some(2));

    let ops: json_patch::Patch = serde_json::from_value(json!([
        {"op": "test", "path": "/spec/image", "value": "merged"},
        {"op": "replace", "path": "/spec/image", "value": "json-patched"}
    ]))
    .expect("ops");
    let patched = api
        .patch("p", &PatchParams::default(), &Patch::<()>::Json(ops))
        .await
        .expect("json patch");
    assert_eq!(patched.spec.image, "json-patched");

    // A failing test op is the apiserver's generic 422 and changes nothing.
    let rv = server.rv();
    let failing: json_patch::Patch =
        serde_json::from_value(json!([{"op": "test", "path": "/spec/image", "value": "nope"}]))
            .expect("ops");
    let status = api_error(
        api.patch("p", &PatchParams::default(), &Patch::<()>::Json(failing))
            .await
            .expect_err("fails"),
    );
    assert_eq!(status.code, 422);
    assert_eq!(
        status.message,
        "the server rejected our request due to an error in our request"
    );
    assert_eq!(server.rv(), rv);

    // A patch carrying a stale resourceVersion conflicts.
    let status = api_error(
        api.patch(
            "p",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"resourceVersion": "1"}, "spec": {"image": "z"}})),
        )
        .await
        .expect_err("stale"),
    );
    assert_eq!(status.code, 409);

    // Strategic merge patch is for built-in types only.
    let status = api_error(
        api.patch(
            "p",
            &PatchParams::default(),
            &Patch::Strategic(json!({"spec": {"image": "s"}})),
        )
        .await
        .expect_err("415"),
    );
    assert_eq!(status.code, 415);
    assert_eq!(
        status.message,
        "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
    );
}

#[rstest]
#[tokio::test]
async fn strategic_merge_patch_on_a_namespace(#[future(awt)] server: TestServer) {
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(server.client.clone());
    let ns = namespaces
        .patch(
            "default",
            &PatchParams::default(),
            &Patch::Strategic(json!({"metadata": {"labels": {"team": "a"}}})),
        )
        .await
        .expect("strategic merge patch");
    let labels = ns.metadata.labels.expect("labels");
    assert_eq!(labels["team"], "a");
    assert_eq!(labels["kubernetes.io/metadata.name"], "default");
}

#[rstest]
#[tokio::test]
async fn delete_and_deletecollection(#[future(awt)] server: TestServer) {
    server.install_crontab_crd().await;
    let api = server.crontabs("default");
    for name in ["d1", "d2", "d3"] {
        server.create_crontab("default", name).await;
    }
    let uid = api.get("d1").await.expect("get").metadata.uid;
    let outcome = api
        .delete("d1", &DeleteParams::default())
        .await
        .expect("delete");
    let status = outcome
        .right()
        .expect("a Status for an object deleted at once");
    assert_eq!(status.status, Some(StatusSummary::Success));
    let details = status.details.expect("details");
    assert_eq!(details.name, "d1");
    assert_eq!(details.kind, "crontabs");
    assert_eq!(details.group, "stable.example.com");
    assert_eq!(Some(details.uid), uid);
    assert_eq!(api_error(api.get("d1").await.expect_err("gone")).code, 404);
    let status = api_error(
        api.delete("d1", &DeleteParams::default())
            .await
            .expect_err("404"),
    );
    assert_eq!(
        status.message,
        "crontabs.stable.example.com \"d1\" not found"
    );

    // Preconditions.
    let pre = DeleteParams {
        preconditions: Some(kube::api::Preconditions {
            uid: Some("other".into()),
            resource_version: None,
        }),
        ..Default::default()
    };
    // The real apiserver's BeforeDelete: a Conflict naming the object by kind and group.
    let d2 = api.get("d2").await.expect("d2");
    let (uid, rv) = (
        d2.metadata.uid.expect("uid"),
        d2.metadata.resource_version.expect("rv"),
    );
    let status = api_error(api.delete("d2", &pre).await.expect_err("precondition"));
    assert_eq!(status.code, 409);
    assert_eq!(status.reason, "Conflict");
    assert_eq!(
        status.message,
        format!("Operation cannot be fulfilled on CronTab.stable.example.com \"d2\": the UID in the precondition (other) does not match the UID in record ({uid}). The object might have been deleted and then recreated")
    );
    let details = status.details.expect("details");
    assert_eq!(
        (
            details.kind.as_str(),
            details.group.as_str(),
            details.name.as_str()
        ),
        ("CronTab", "stable.example.com", "d2")
    );
    let pre_rv = DeleteParams {
        preconditions: Some(kube::api::Preconditions {
            uid: Some(uid),
            resource_version: Some("1".into()),
        }),
        ..Default::default()
    };
    let status = api_error(api.delete("d2", &pre_rv).await.expect_err("precondition"));
    assert_eq!(
        status.message,
        format!("Operation cannot be fulfilled on CronTab.stable.example.com \"d2\": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record ({rv}). The object might have been modified")
    );

    // Dry run deletes nothing.
    api.delete(
        "d2",
        &DeleteParams {
            dry_run: true,
            ..Default::default()
        },
    )
    .await
    .expect("dry run");
    assert!(api.get("d2").await.is_ok());

    let deleted = api
        .delete_collection(&DeleteParams::default(), &ListParams::default())
        .await
        .expect("deletecollection");
    let list = deleted.left().expect("the deleted objects");
    assert_eq!(list.items.len(), 2);
    assert!(api
        .list(&ListParams::default())
        .await
        .expect("list")
        .items
        .is_empty());
}

#[rstest]
#[tokio::test]
async fn finalizers_hold_objects_until_removed(#[future(awt)] server: TestServer) {
    server.install_crontab_crd().await;
    let api = server.crontabs("default");
    let mut ct = CronTab::new("held", spec("x"));
    ct.metadata.finalizers = Some(vec!["example.com/hold".into()]);
    api.create(&PostParams::default(), &ct)
        .await
        .expect("create");
    let pending = api
        .delete("held", &DeleteParams::default())
        .await
        .expect("delete")
        .left()
        .expect("the object");
    assert!(pending.metadata.deletion_timestamp.is_some());
    let still = api.get("held").await.expect("still there");
    assert!(still.metadata.deletion_timestamp.is_some());

    // No new finalizers once deleting.
    let err = api
        .patch(
            "held",
            &PatchParams::default(),
            &Patch::Merge(
                json!({"metadata": {"finalizers": ["example.com/hold", "example.com/more"]}}),
            ),
        )
        .await
        .expect_err("forbidden");
    let status = api_error(err);
    assert_eq!(status.code, 422);
    assert!(
        status
            .message
            .contains("no new finalizers can be added if the object is being deleted"),
        "{}",
        status.message
    );

    api.patch(
        "held",
        &PatchParams::default(),
        &Patch::Merge(json!({"metadata": {"finalizers": null}})),
    )
    .await
    .expect("remove finalizer");
    assert_eq!(
        api_error(api.get("held").await.expect_err("gone")).code,
        404
    );
}

#[rstest]
#[tokio::test]
async fn resource_versions_are_global_and_increasing(#[future(awt)] server: TestServer) {
    server.install_crontab_crd().await;
    let mut last = server.rv();
    for i in 0..5 {
        let ct = server.create_crontab("default", &format!("r{i}")).await;
        let rv: u64 = ct
            .metadata
            .resource_version
            .expect("rv")
            .parse()
            .expect("numeric");
        assert!(rv > last);
        last = rv;
        let (_, ns) = server
            .post(
                "/api/v1/namespaces",
                &json!({"metadata": {"name": format!("ns{i}")}}),
            )
            .await;
        let rv: u64 = ns["metadata"]["resourceVersion"]
            .as_str()
            .expect("rv")
            .parse()
            .expect("numeric");
        assert!(rv > last);
        last = rv;
    }
}

#[rstest]
#[tokio::test]
async fn status_without_the_subresource_is_a_plain_field(#[future(awt)] server: TestServer) {
    let mut crd = crate::harness::crontab_crd();
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["status"] =
        json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true});
    let (status, _) = server
        .post(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            &crd,
        )
        .await;
    assert_eq!(status, 201);
    let body = json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab", "metadata": {"name": "s"}, "status": {"ok": true}});
    let (status, created) = server
        .post(
            "/apis/stable.example.com/v1/namespaces/default/crontabs",
            &body,
        )
        .await;
    assert_eq!(status, 201);
    assert_eq!(created["status"], json!({"ok": true}));
    assert_eq!(
        server
            .get("/apis/stable.example.com/v1/namespaces/default/crontabs/s/status")
            .await
            .0,
        404
    );
    let _: Value = created;
}

#[rstest]
#[tokio::test]
async fn dry_run_validates_but_changes_nothing(#[future(awt)] server: TestServer) {
    use kube::api::PatchParams;
    server.install_crontab_crd().await;
    let api = server.crontabs("default");
    server.create_crontab("default", "real").await;
    let rv = server.rv();
    let dry = PostParams {
        dry_run: true,
        ..Default::default()
    };

    let created = api
        .create(&dry, &CronTab::new("ghost", spec("x")))
        .await
        .expect("dry create");
    assert!(created.metadata.uid.is_some());
    assert!(created.metadata.resource_version.is_none());
    assert_eq!(
        api_error(api.get("ghost").await.expect_err("not stored")).code,
        404
    );
    // Validation still runs.
    let invalid = api
        .create(&dry, &CronTab::new("Bad_Name", spec("x")))
        .await
        .expect_err("invalid");
    assert_eq!(api_error(invalid).code, 422);
    let exists = api
        .create(&dry, &CronTab::new("real", spec("x")))
        .await
        .expect_err("exists");
    assert_eq!(api_error(exists).code, 409);

    let mut changed = api.get("real").await.expect("get");
    changed.spec.image = "dry".into();
    let replaced = api
        .replace("real", &dry, &changed)
        .await
        .expect("dry replace");
    assert_eq!(replaced.spec.image, "dry");
    let patched = api
        .patch(
            "real",
            &PatchParams {
                dry_run: true,
                ..Default::default()
            },
            &Patch::Merge(json!({"spec": {"image": "p"}})),
        )
        .await
        .expect("dry patch");
    assert_eq!(patched.spec.image, "p");
    api.delete(
        "real",
        &DeleteParams {
            dry_run: true,
            ..Default::default()
        },
    )
    .await
    .expect("dry delete");

    assert_eq!(server.rv(), rv, "no write, no resourceVersion");
    assert_eq!(
        api.get("real").await.expect("get").spec.image,
        "my-awesome-cron-image"
    );
}
