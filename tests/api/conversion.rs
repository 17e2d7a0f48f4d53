//! Multi-version custom resources: each version decodes, prunes and defaults with its own
//! schema; objects are stored in the storage version and converted (strategy `None`) for every
//! reader, each conversion pruned against the target version's schema; `storedVersions` across a
//! storage version switch; deprecated versions' Warning headers. The kube-rs flow is the one of
//! its `crd_derive_multi` example (two derived versions merged into one CRD).

use futures_util::StreamExt;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use kube::core::crd::merge_crds;
use kube::CustomResourceExt;
use rstest::rstest;
use serde_json::{json, Value};

use crate::harness::{api_error, server, TestServer};

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

mod v1 {
    use kube::CustomResource;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    /// Version 1: `oldprop`, gone in v2.
    #[derive(CustomResource, Serialize, Deserialize, Default, Debug, Clone, JsonSchema)]
    #[kube(group = "kube.rs", version = "v1", kind = "ManyDerive", namespaced)]
    pub struct ManyDeriveSpec {
        pub name: String,
        pub oldprop: u32,
    }
}

mod v2 {
    use kube::CustomResource;
    use schemars::JsonSchema;
    use serde::{Deserialize, Serialize};

    /// Version 2, the storage version: `extra` instead of `oldprop`.
    #[derive(CustomResource, Serialize, Deserialize, Default, Debug, Clone, JsonSchema)]
    #[kube(group = "kube.rs", version = "v2", kind = "ManyDerive", namespaced)]
    pub struct ManyDeriveSpec {
        pub name: String,
        pub extra: Option<String>,
    }
}

async fn install_many_derive(server: &TestServer) {
    let crd = merge_crds(vec![v1::ManyDerive::crd(), v2::ManyDerive::crd()], "v2").expect("merged");
    let crds: Api<CustomResourceDefinition> = Api::all(server.client.clone());
    crds.create(&PostParams::default(), &crd)
        .await
        .expect("installed");
}

#[rstest]
#[tokio::test]
async fn each_version_prunes_with_its_own_schema(#[future(awt)] server: TestServer) {
    install_many_derive(&server).await;
    // Dynamic for v1: what comes back has no `oldprop`, so it does not decode into the v1 struct.
    let old = server.dynamic(
        ("kube.rs", "v1", "ManyDerive"),
        "manyderives",
        Some("default"),
    );
    let new: Api<v2::ManyDerive> = Api::namespaced(server.client.clone(), "default");
    let obj = v1::ManyDerive::new(
        "a",
        v1::ManyDeriveSpec {
            name: "a".into(),
            oldprop: 5,
        },
    );
    let created = old
        .create(
            &PostParams::default(),
            &serde_json::from_value(serde_json::to_value(&obj).expect("json")).expect("dynamic"),
        )
        .await
        .expect("created through v1");
    assert_eq!(
        created.data["spec"],
        json!({"name": "a"}),
        "the response is the stored object, converted back: `oldprop` is gone"
    );

    // Stored in v2: `oldprop` is not in v2's schema, so storing prunes it.
    let raw = server
        .get("/apis/kube.rs/v2/namespaces/default/manyderives/a")
        .await
        .1;
    assert_eq!(raw["apiVersion"], "kube.rs/v2");
    assert_eq!(raw["spec"], json!({"name": "a"}));
    let through_v2 = new.get("a").await.expect("read through v2");
    assert_eq!(through_v2.spec.extra, None);

    // Written through v2 with `extra`, read through v1: pruned against v1's schema.
    new.patch(
        "a",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"extra": "x"}})),
    )
    .await
    .expect("patched through v2");
    let raw_v1 = server
        .get("/apis/kube.rs/v1/namespaces/default/manyderives/a")
        .await
        .1;
    assert_eq!(raw_v1["apiVersion"], "kube.rs/v1");
    assert_eq!(raw_v1["spec"], json!({"name": "a"}), "no `extra` in v1");
    let list = server
        .get("/apis/kube.rs/v1/namespaces/default/manyderives")
        .await
        .1;
    assert_eq!(list["items"][0]["spec"], json!({"name": "a"}));
    let raw_v2 = server
        .get("/apis/kube.rs/v2/namespaces/default/manyderives/a")
        .await
        .1;
    assert_eq!(raw_v2["spec"], json!({"name": "a", "extra": "x"}));
}

#[rstest]
#[tokio::test]
async fn watches_in_another_version_see_converted_objects(#[future(awt)] server: TestServer) {
    install_many_derive(&server).await;
    // Dynamic: a v1 ManyDerive without `oldprop` does not decode into the v1 struct.
    let old = server.dynamic(
        ("kube.rs", "v1", "ManyDerive"),
        "manyderives",
        Some("default"),
    );
    let new: Api<v2::ManyDerive> = Api::namespaced(server.client.clone(), "default");
    let mut events = old
        .watch(&WatchParams::default(), "0")
        .await
        .expect("watch through v1")
        .boxed();
    let obj = v2::ManyDerive::new(
        "w",
        v2::ManyDeriveSpec {
            name: "w".into(),
            extra: Some("e".into()),
        },
    );
    new.create(&PostParams::default(), &obj)
        .await
        .expect("created through v2");
    let first = loop {
        match events.next().await {
            Some(Ok(WatchEvent::Bookmark(_))) => continue,
            other => break other,
        }
    };
    match first {
        Some(Ok(WatchEvent::Added(o))) => {
            assert_eq!(o.types.as_ref().expect("types").api_version, "kube.rs/v1");
            assert_eq!(o.data["spec"], json!({"name": "w"}), "pruned against v1");
        }
        other => panic!("expected ADDED, got {other:?}"),
    }
}

/// A CRD with `v1` (storage) and `v2`, both with the CronTab schema.
fn two_version_crd() -> Value {
    let mut crd = crate::harness::crontab_crd();
    let mut v2 = crd["spec"]["versions"][0].clone();
    v2["name"] = json!("v2");
    v2["storage"] = json!(false);
    crd["spec"]["versions"]
        .as_array_mut()
        .expect("versions")
        .push(v2);
    crd
}

async fn put_crd(server: &TestServer, crd: &Value) -> (u16, Value) {
    let name = crd["metadata"]["name"].as_str().expect("name");
    server
        .send(
            server
                .http
                .put(server.url(&format!("{CRDS}/{name}")))
                .json(crd),
        )
        .await
}

#[rstest]
#[tokio::test]
async fn storage_version_switch_keeps_old_objects_readable(#[future(awt)] server: TestServer) {
    let (status, crd) = server.post(CRDS, &two_version_crd()).await;
    assert_eq!(status, 201, "{crd}");
    assert_eq!(crd["status"]["storedVersions"], json!(["v1"]));
    server.create_crontab("default", "old").await;

    let mut switched = crd.clone();
    switched["spec"]["versions"][0]["storage"] = json!(false);
    switched["spec"]["versions"][1]["storage"] = json!(true);
    let (status, switched) = put_crd(&server, &switched).await;
    assert_eq!(status, 200, "{switched}");
    assert_eq!(switched["status"]["storedVersions"], json!(["v1", "v2"]));

    // The object stored under v1 reads in each version as that version.
    for version in ["v1", "v2"] {
        let (status, obj) = server
            .get(&format!(
                "/apis/stable.example.com/{version}/namespaces/default/crontabs/old"
            ))
            .await;
        assert_eq!(status, 200);
        assert_eq!(obj["apiVersion"], format!("stable.example.com/{version}"));
        assert_eq!(obj["spec"]["image"], "my-awesome-cron-image");
    }

    // v1 may still hold objects: removing it is refused until storedVersions drops it.
    let mut removed = switched.clone();
    removed["spec"]["versions"]
        .as_array_mut()
        .expect("versions")
        .remove(0);
    let (status, err) = put_crd(&server, &removed).await;
    assert_eq!(status, 422);
    assert_eq!(
        err["message"],
        "CustomResourceDefinition.apiextensions.k8s.io \"crontabs.stable.example.com\" is invalid: status.storedVersions[0]: Invalid value: \"v1\": missing from spec.versions; v1 was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in v1 and removes v1 from status.storedVersions"
    );

    // After a storage migration, the status drops v1; then v1 may go.
    let crds: Api<CustomResourceDefinition> = Api::all(server.client.clone());
    let err = api_error(
        crds.patch_status(
            "crontabs.stable.example.com",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"storedVersions": ["v1"]}})),
        )
        .await
        .expect_err("the storage version must stay"),
    );
    assert_eq!(
        err.message,
        "CustomResourceDefinition.apiextensions.k8s.io \"crontabs.stable.example.com\" is invalid: status.storedVersions: Invalid value: []string{\"v1\"}: must have the storage version v2"
    );
    crds.patch_status(
        "crontabs.stable.example.com",
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"storedVersions": ["v2"]}})),
    )
    .await
    .expect("storedVersions migrated");
    let (_, current) = server
        .get(&format!("{CRDS}/crontabs.stable.example.com"))
        .await;
    let mut removed = current.clone();
    removed["spec"]["versions"]
        .as_array_mut()
        .expect("versions")
        .remove(0);
    let (status, body) = put_crd(&server, &removed).await;
    assert_eq!(status, 200, "{body}");
    let (status, obj) = server
        .get("/apis/stable.example.com/v2/namespaces/default/crontabs/old")
        .await;
    assert_eq!(
        (status, &obj["apiVersion"]),
        (200, &json!("stable.example.com/v2"))
    );
}

#[rstest]
#[tokio::test]
async fn deprecated_versions_warn_on_every_request(#[future(awt)] server: TestServer) {
    let mut crd = two_version_crd();
    crd["spec"]["versions"][0]["deprecated"] = json!(true);
    crd["spec"]["versions"][1]["deprecated"] = json!(true);
    crd["spec"]["versions"][1]["deprecationWarning"] = json!("v2 is going away too");
    let mut v3 = crd["spec"]["versions"][1].clone();
    v3["name"] = json!("v3");
    v3["deprecated"] = json!(false);
    v3.as_object_mut()
        .expect("version")
        .remove("deprecationWarning");
    crd["spec"]["versions"]
        .as_array_mut()
        .expect("versions")
        .push(v3);
    let (status, body) = server.post(CRDS, &crd).await;
    assert_eq!(status, 201, "{body}");
    let warning = |version: &'static str| {
        let url = server.url(&format!("/apis/stable.example.com/{version}/crontabs"));
        let http = server.http.clone();
        async move {
            let resp = http.get(url).send().await.expect("sent");
            assert_eq!(resp.status(), 200);
            resp.headers()
                .get_all("warning")
                .iter()
                .map(|v| v.to_str().expect("ascii").to_string())
                .collect::<Vec<_>>()
        }
    };
    assert_eq!(
        warning("v1").await,
        ["299 - \"stable.example.com/v1 CronTab is deprecated; use stable.example.com/v3 CronTab\""]
    );
    assert_eq!(warning("v2").await, ["299 - \"v2 is going away too\""]);
    assert!(warning("v3").await.is_empty());
}

#[rstest]
#[tokio::test]
async fn selectable_fields_are_per_version(#[future(awt)] server: TestServer) {
    let mut crd = two_version_crd();
    crd["spec"]["versions"][0]["selectableFields"] = json!([{"jsonPath": ".spec.image"}]);
    let (status, body) = server.post(CRDS, &crd).await;
    assert_eq!(status, 201, "{body}");
    server.create_crontab("default", "a").await;
    let (status, list) = server
        .get("/apis/stable.example.com/v1/namespaces/default/crontabs?fieldSelector=spec.image%3Dmy-awesome-cron-image")
        .await;
    assert_eq!(status, 200, "{list}");
    assert_eq!(list["items"].as_array().map(Vec::len), Some(1));
    let (_, none) = server
        .get("/apis/stable.example.com/v1/crontabs?fieldSelector=spec.image!%3Dmy-awesome-cron-image")
        .await;
    assert_eq!(none["items"], json!([]));
    let (status, err) = server
        .get("/apis/stable.example.com/v2/crontabs?fieldSelector=spec.image%3Dx")
        .await;
    assert_eq!(status, 400);
    assert_eq!(err["message"], "field label not supported: spec.image");
}

#[rstest]
#[tokio::test]
async fn server_side_apply_owns_fields_across_versions(#[future(awt)] server: TestServer) {
    let (status, body) = server.post(CRDS, &two_version_crd()).await;
    assert_eq!(status, 201, "{body}");
    let apply = |version: &str, manager: &str, image: &str, force: bool| {
        let url = server.url(&format!(
            "/apis/stable.example.com/{version}/namespaces/default/crontabs/ssa?fieldManager={manager}&force={force}"
        ));
        let mut body = json!({"apiVersion": format!("stable.example.com/{version}"), "kind": "CronTab",
            "metadata": {"name": "ssa"}, "spec": {"image": image}});
        if manager == "one" {
            body["spec"]["cronSpec"] = json!("* * * * */5");
        }
        server.send(
            server
                .http
                .patch(url)
                .header("content-type", "application/apply-patch+yaml")
                .body(body.to_string()),
        )
    };
    let (status, body) = apply("v1", "one", "a", false).await;
    assert_eq!(status, 201, "{body}");
    let (status, err) = apply("v2", "two", "b", false).await;
    assert_eq!(status, 409, "a conflict across versions: {err}");
    assert_eq!(
        err["message"],
        "Apply failed with 1 conflict: conflict with \"one\": .spec.image"
    );
    let (status, body) = apply("v2", "two", "b", true).await;
    assert_eq!(status, 200, "{body}");
    let managers: Vec<(String, String)> = body["metadata"]["managedFields"]
        .as_array()
        .expect("managedFields")
        .iter()
        .map(|m| {
            (
                m["manager"].as_str().unwrap_or("").to_string(),
                m["apiVersion"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    assert_eq!(
        managers,
        [
            ("one".to_string(), "stable.example.com/v1".to_string()),
            ("two".to_string(), "stable.example.com/v2".to_string())
        ]
    );
    // The forced field moved to `two`: applying it again through v1 conflicts with `two`.
    let (status, err) = apply("v1", "one", "a", false).await;
    assert_eq!(status, 409);
    assert_eq!(
        err["message"],
        "Apply failed with 1 conflict: conflict with \"two\": .spec.image"
    );
}
