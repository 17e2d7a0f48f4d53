//! Published OpenAPI v2 and v3, generated from the CRDs.

use rstest::rstest;
use serde_json::{json, Value};

use crate::harness::{server, TestServer};

#[rstest]
#[tokio::test]
async fn v3_index_and_group_version_documents(#[future(awt)] server: TestServer) {
    let mut crd = crate::harness::crontab_crd();
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["description"] =
        json!("The desired schedule.");
    assert_eq!(
        server
            .post(
                "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                &crd
            )
            .await
            .0,
        201
    );
    let (status, index) = server.get("/openapi/v3").await;
    assert_eq!(status, 200);
    let url = index["paths"]["apis/stable.example.com/v1"]["serverRelativeURL"]
        .as_str()
        .expect("listed")
        .to_string();
    assert!(url.starts_with("/openapi/v3/apis/stable.example.com/v1?hash="));
    assert!(index["paths"]["api/v1"].is_object());

    let resp = server.http.get(server.url(&url)).send().await.expect("get");
    assert_eq!(resp.headers()["cache-control"], "public, immutable");
    let doc: Value = resp.json().await.expect("json");
    assert_eq!(doc["openapi"], "3.0.0");
    let schema = &doc["components"]["schemas"]["com.example.stable.v1.CronTab"];
    assert_eq!(
        schema["x-kubernetes-group-version-kind"],
        json!([{"group": "stable.example.com", "kind": "CronTab", "version": "v1"}])
    );
    assert_eq!(
        schema["properties"]["spec"]["description"],
        "The desired schedule."
    );
    assert_eq!(
        schema["properties"]["spec"]["properties"]["replicas"]["type"],
        "integer"
    );
    // kubectl learns from the PATCH operation that the server validates fields itself.
    let patch = &doc["paths"]["/apis/stable.example.com/v1/namespaces/{namespace}/crontabs/{name}"]
        ["patch"];
    assert_eq!(patch["x-kubernetes-group-version-kind"]["kind"], "CronTab");
    assert!(patch["parameters"]
        .as_array()
        .expect("params")
        .iter()
        .any(|p| p["name"] == "fieldValidation" && p["in"] == "query"));

    // The document changes (and its hash) when the CRD changes.
    let (_, current) = server
        .get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.stable.example.com")
        .await;
    let mut changed = current.clone();
    changed["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
        ["description"] = json!("Changed.");
    let resp = server
        .http
        .put(server.url(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.stable.example.com",
        ))
        .json(&changed)
        .send()
        .await
        .expect("put");
    assert_eq!(resp.status(), 200);
    let (_, index2) = server.get("/openapi/v3").await;
    assert_ne!(
        index2["paths"]["apis/stable.example.com/v1"]["serverRelativeURL"].as_str(),
        Some(url.as_str())
    );
}

#[rstest]
#[tokio::test]
async fn v2_is_converted_from_v3(#[future(awt)] server: TestServer) {
    let mut crd = crate::harness::crontab_crd();
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
        ["image"] = json!({"type": "string", "nullable": true});
    assert_eq!(
        server
            .post(
                "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                &crd
            )
            .await
            .0,
        201
    );
    let (status, doc) = server.get("/openapi/v2").await;
    assert_eq!(status, 200);
    assert_eq!(doc["swagger"], "2.0");
    let def = &doc["definitions"]["com.example.stable.v1.CronTab"];
    assert_eq!(
        def["properties"]["spec"]["properties"]["image"],
        json!({}),
        "nullable drops the type in v2"
    );
    assert_eq!(
        def["properties"]["metadata"]["$ref"],
        "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    );
    // Protobuf requests (kubectl's) get a valid protobuf document.
    let resp = server
        .http
        .get(server.url("/openapi/v2"))
        .header(
            "accept",
            "application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
        )
        .send()
        .await
        .expect("get");
    assert_eq!(resp.status(), 200);
    assert!(resp.headers()["content-type"]
        .to_str()
        .expect("ct")
        .contains("protobuf"));
}
