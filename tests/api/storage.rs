//! storage.k8s.io/v1 StorageClasses through kube-rs's typed API: defaults, the provisioner and
//! policies validated and immutable, the deleted object returned, the `(default)` marker in
//! Tables, warnings for deprecated topology labels, patches, apply, protobuf.

use futures_util::StreamExt;
use k8s_openapi::api::storage::v1::StorageClass;
use kube::api::{
    Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use rstest::rstest;
use serde_json::json;

use crate::harness::{api_error, server, TestServer};
use crate::rbac::{protobuf, table, typed};

const PATH: &str = "/apis/storage.k8s.io/v1/storageclasses";

fn class(name: &str) -> StorageClass {
    typed(
        json!({"metadata": {"name": name}, "provisioner": "ebs.csi.aws.com",
        "parameters": {"type": "gp3"}}),
    )
}

#[rstest]
#[tokio::test]
async fn crud_watch_defaults_and_deletion_returns_the_object(#[future(awt)] server: TestServer) {
    let api: Api<StorageClass> = Api::all(server.client.clone());
    let created = api
        .create(&PostParams::default(), &class("gp3"))
        .await
        .expect("create");
    assert_eq!(created.reclaim_policy.as_deref(), Some("Delete"));
    assert_eq!(created.volume_binding_mode.as_deref(), Some("Immediate"));
    assert_eq!(created.metadata.generation, None);
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
    let mut expandable = created.clone();
    expandable.allow_volume_expansion = Some(true);
    expandable.mount_options = Some(vec!["debug".into()]);
    let updated = api
        .replace("gp3", &PostParams::default(), &expandable)
        .await
        .expect("expansion and mount options may change");
    assert_eq!(updated.allow_volume_expansion, Some(true));
    match watch.next().await {
        Some(Ok(WatchEvent::Modified(sc))) => assert_eq!(sc.allow_volume_expansion, Some(true)),
        other => panic!("expected MODIFIED, got {other:?}"),
    }

    let mut changed = updated.clone();
    changed.provisioner = "other.example.com".into();
    changed.parameters = None;
    changed.reclaim_policy = Some("Retain".into());
    let err = api_error(
        api.replace("gp3", &PostParams::default(), &changed)
            .await
            .expect_err("immutable"),
    );
    assert_eq!(
        err.message,
        "StorageClass.storage.k8s.io \"gp3\" is invalid: [parameters: Invalid value: null: field is immutable, provisioner: Invalid value: \"other.example.com\": field is immutable, reclaimPolicy: Invalid value: \"Retain\": field is immutable]"
    );

    let deleted = api
        .delete("gp3", &DeleteParams::default())
        .await
        .expect("delete");
    let gone = deleted.left().expect("the deleted object, not a Status");
    assert_eq!(gone.provisioner, "ebs.csi.aws.com");
    assert_eq!(api_error(api.get("gp3").await.expect_err("gone")).code, 404);
}

#[rstest]
#[tokio::test]
async fn validation_and_warnings(#[future(awt)] server: TestServer) {
    let api: Api<StorageClass> = Api::all(server.client.clone());
    let rv = server.rv();
    let bad: StorageClass = typed(json!({"metadata": {"name": "bad"}, "provisioner": "",
        "reclaimPolicy": "Recycle", "volumeBindingMode": "Later"}));
    let err = api_error(
        api.create(&PostParams::default(), &bad)
            .await
            .expect_err("invalid"),
    );
    assert_eq!(err.code, 422);
    assert_eq!(
        err.message,
        "StorageClass.storage.k8s.io \"bad\" is invalid: [provisioner: Required value, reclaimPolicy: Unsupported value: \"Recycle\": supported values: \"Delete\", \"Retain\", volumeBindingMode: Unsupported value: \"Later\": supported values: \"Immediate\", \"WaitForFirstConsumer\"]"
    );
    assert_eq!(server.rv(), rv, "a rejected create changes nothing");

    let zonal = json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
        "metadata": {"name": "zonal"}, "provisioner": "p",
        "allowedTopologies": [{"matchLabelExpressions": [
            {"key": "failure-domain.beta.kubernetes.io/zone", "values": ["us-east-1a"]}]}]});
    let resp = server
        .http
        .post(server.url(PATH))
        .json(&zonal)
        .send()
        .await
        .expect("sent");
    assert_eq!(resp.status().as_u16(), 201);
    let warning = resp
        .headers()
        .get("warning")
        .and_then(|w| w.to_str().ok())
        .unwrap_or_default()
        .to_string();
    assert_eq!(
        warning,
        "299 - \"allowedTopologies[0].matchLabelExpressions[0].key: deprecated since v1.17; use \\\"topology.kubernetes.io/zone\\\" instead\""
    );
}

#[rstest]
#[tokio::test]
async fn tables_selectors_patches_apply_and_protobuf(#[future(awt)] server: TestServer) {
    let api: Api<StorageClass> = Api::all(server.client.clone());
    let mut standard = class("standard");
    standard.metadata.annotations = Some(
        [(
            "storageclass.kubernetes.io/is-default-class".to_string(),
            "true".to_string(),
        )]
        .into(),
    );
    standard.volume_binding_mode = Some("WaitForFirstConsumer".into());
    api.create(&PostParams::default(), &standard)
        .await
        .expect("create");
    api.create(&PostParams::default(), &class("slow"))
        .await
        .expect("create");

    let (columns, t) = table(&server, PATH).await;
    assert_eq!(
        columns,
        [
            "Name",
            "Provisioner",
            "ReclaimPolicy",
            "VolumeBindingMode",
            "AllowVolumeExpansion",
            "Age"
        ]
    );
    assert_eq!(t["columnDefinitions"][0]["format"], "name");
    let standard_row = &t["rows"][1]["cells"];
    assert_eq!(standard_row[0], "standard (default)");
    assert_eq!(standard_row[3], "WaitForFirstConsumer");
    assert_eq!(standard_row[4], false);
    assert_eq!(t["rows"][0]["cells"][0], "slow");

    let listed = api
        .list(&ListParams::default().fields("metadata.name!=slow"))
        .await
        .expect("field selector");
    assert_eq!(listed.items.len(), 1);

    let patched = api
        .patch(
            "slow",
            &PatchParams::default(),
            &Patch::Strategic(json!({"mountOptions": ["ro"], "allowVolumeExpansion": true})),
        )
        .await
        .expect("strategic merge patch");
    assert_eq!(patched.mount_options, Some(vec!["ro".to_string()]));
    let applied = api
        .patch(
            "applied",
            &PatchParams::apply("tester"),
            &Patch::Apply(
                json!({"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
                "metadata": {"name": "applied"}, "provisioner": "kubernetes.io/no-provisioner"}),
            ),
        )
        .await
        .expect("server-side apply creates");
    assert_eq!(applied.volume_binding_mode.as_deref(), Some("Immediate"));

    let decoded = protobuf(&server, &format!("{PATH}/standard")).await;
    assert_eq!(decoded["kind"], "StorageClass");
    assert_eq!(decoded["provisioner"], "ebs.csi.aws.com");
}

#[rstest]
#[tokio::test]
async fn default_classes_fill_claims_and_ingresses(#[future(awt)] server: TestServer) {
    use k8s_openapi::api::core::v1::PersistentVolumeClaim;
    use k8s_openapi::api::networking::v1::{Ingress, IngressClass};
    let claims: Api<PersistentVolumeClaim> = Api::namespaced(server.client.clone(), "default");
    let claim = |name: &str, class: Option<&str>| -> PersistentVolumeClaim {
        let mut spec = json!({"accessModes": ["ReadWriteOnce"],
            "resources": {"requests": {"storage": "1Gi"}}});
        if let Some(c) = class {
            spec["storageClassName"] = json!(c);
        }
        typed(json!({"metadata": {"name": name}, "spec": spec}))
    };
    let class_of = |c: &PersistentVolumeClaim| c.spec.clone().and_then(|s| s.storage_class_name);
    let pp = PostParams::default();
    // No default class: nothing is filled.
    let none = claims
        .create(&pp, &claim("none", None))
        .await
        .expect("create");
    assert_eq!(class_of(&none), None);

    let classes: Api<StorageClass> = Api::all(server.client.clone());
    for name in ["b-default", "a-default", "plain"] {
        let mut c = class(name);
        if name != "plain" {
            c.metadata.annotations = Some(
                [(
                    "storageclass.kubernetes.io/is-default-class".to_string(),
                    "true".to_string(),
                )]
                .into(),
            );
        }
        classes.create(&pp, &c).await.expect("class");
    }
    // Two defaults created in the same second: the first by name.
    let filled = claims
        .create(&pp, &claim("filled", None))
        .await
        .expect("create");
    assert_eq!(class_of(&filled).as_deref(), Some("a-default"));
    let chosen = claims
        .create(&pp, &claim("chosen", Some("plain")))
        .await
        .expect("create");
    assert_eq!(class_of(&chosen).as_deref(), Some("plain"));
    let empty = claims
        .create(&pp, &claim("empty", Some("")))
        .await
        .expect("create");
    assert_eq!(
        class_of(&empty).as_deref(),
        Some(""),
        "an explicit empty class stays"
    );

    let ingress_classes: Api<IngressClass> = Api::all(server.client.clone());
    ingress_classes
        .create(
            &pp,
            &typed(json!({"metadata": {"name": "nginx", "annotations":
                {"ingressclass.kubernetes.io/is-default-class": "true"}},
                "spec": {"controller": "k8s.io/ingress-nginx"}})),
        )
        .await
        .expect("ingress class");
    let ingresses: Api<Ingress> = Api::namespaced(server.client.clone(), "default");
    let backend = json!({"service": {"name": "web", "port": {"number": 80}}});
    let ing = ingresses
        .create(
            &pp,
            &typed(json!({"metadata": {"name": "web"}, "spec": {"defaultBackend": backend}})),
        )
        .await
        .expect("ingress");
    assert_eq!(
        ing.spec.and_then(|s| s.ingress_class_name).as_deref(),
        Some("nginx")
    );
    let legacy = ingresses
        .create(
            &pp,
            &typed(json!({"metadata": {"name": "legacy", "annotations":
                {"kubernetes.io/ingress.class": "other"}}, "spec": {"defaultBackend": backend}})),
        )
        .await
        .expect("ingress");
    assert_eq!(legacy.spec.and_then(|s| s.ingress_class_name), None);
}
