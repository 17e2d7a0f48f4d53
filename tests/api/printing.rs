//! Server-side printing: Table responses for get, list and watch.

use rstest::rstest;
use serde_json::{json, Value};

use crate::harness::{fixture_yaml, server, TestServer};

const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";

async fn table(server: &TestServer, path: &str) -> Value {
    let (status, body) = server
        .send(server.http.get(server.url(path)).header("accept", TABLE))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["kind"], "Table");
    assert_eq!(body["apiVersion"], "meta.k8s.io/v1");
    body
}

fn column_names(t: &Value) -> Vec<String> {
    t["columnDefinitions"]
        .as_array()
        .map(|c| {
            c.iter()
                .filter_map(|d| d["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

#[rstest]
#[tokio::test]
async fn printer_columns_and_rows(#[future(awt)] server: TestServer) {
    let (status, _) = server
        .post(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            &fixture_yaml("printer-columns/resourcedefinition.yaml"),
        )
        .await;
    assert_eq!(status, 201);
    let mut ct = fixture_yaml("printer-columns/my-crontab.yaml");
    assert_eq!(
        server
            .post(
                "/apis/stable.example.com/v1/namespaces/default/crontabs",
                &ct
            )
            .await
            .0,
        201
    );
    ct["metadata"]["name"] = json!("without-replicas");
    ct["spec"].as_object_mut().expect("spec").remove("replicas");
    assert_eq!(
        server
            .post(
                "/apis/stable.example.com/v1/namespaces/default/crontabs",
                &ct
            )
            .await
            .0,
        201
    );

    let t = table(
        &server,
        "/apis/stable.example.com/v1/namespaces/default/crontabs",
    )
    .await;
    assert_eq!(
        column_names(&t),
        ["Name", "Spec", "Replicas", "Age", "Image"]
    );
    assert_eq!(t["columnDefinitions"][0]["format"], "name");
    assert_eq!(t["columnDefinitions"][2]["type"], "integer");
    assert_eq!(
        t["columnDefinitions"][2]["description"],
        "The number of jobs launched by the CronJob"
    );
    assert_eq!(t["columnDefinitions"][4]["priority"], 1);
    let row = &t["rows"][0];
    assert_eq!(row["cells"][0], "my-new-cron-object");
    assert_eq!(row["cells"][1], "* * * * *");
    assert_eq!(row["cells"][2], 1);
    assert!(
        row["cells"][3]
            .as_str()
            .is_some_and(|age| age.ends_with('s')),
        "{row}"
    );
    assert_eq!(row["object"]["kind"], "PartialObjectMetadata");
    assert_eq!(row["object"]["metadata"]["name"], "my-new-cron-object");
    // A missing value leaves the cell empty.
    assert_eq!(t["rows"][1]["cells"][2], Value::Null);
    assert!(t["metadata"]["resourceVersion"].is_string());

    let full = table(&server, "/apis/stable.example.com/v1/namespaces/default/crontabs/my-new-cron-object?includeObject=Object").await;
    assert_eq!(full["rows"][0]["object"]["kind"], "CronTab");
    let none = table(&server, "/apis/stable.example.com/v1/namespaces/default/crontabs/my-new-cron-object?includeObject=None").await;
    assert!(none["rows"][0].get("object").is_none());
}

#[rstest]
#[tokio::test]
async fn default_columns(#[future(awt)] server: TestServer) {
    server.install_crontab_crd().await;
    server.create_crontab("default", "plain").await;
    let t = table(
        &server,
        "/apis/stable.example.com/v1/namespaces/default/crontabs",
    )
    .await;
    assert_eq!(column_names(&t), ["Name", "Age"]);
    let ns = table(&server, "/api/v1/namespaces").await;
    assert_eq!(column_names(&ns), ["Name", "Status", "Age"]);
    assert_eq!(ns["rows"][0]["cells"][1], "Active");
    let crds = table(
        &server,
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
    )
    .await;
    assert_eq!(column_names(&crds), ["Name", "Created At"]);
}

#[rstest]
#[tokio::test]
async fn watch_as_table(#[future(awt)] server: TestServer) {
    server.install_crontab_crd().await;
    server.create_crontab("default", "w").await;
    let resp = server
        .http
        .get(server.url(
            "/apis/stable.example.com/v1/namespaces/default/crontabs?watch=1&timeoutSeconds=1",
        ))
        .header("accept", TABLE)
        .send()
        .await
        .expect("watch");
    let text = resp.text().await.expect("body");
    let first: Value = serde_json::from_str(text.lines().next().expect("an event")).expect("json");
    assert_eq!(first["type"], "ADDED");
    assert_eq!(first["object"]["kind"], "Table");
    assert_eq!(first["object"]["rows"][0]["cells"][0], "w");
}
