//! core/v1 ComponentStatuses as a bare apiserver (envtest's) answers them: get and list only,
//! the deprecation warning, controller-manager and scheduler probed on their local ports (refused
//! where nothing listens), etcd-0 healthy, the Table, the singular 404.

use k8s_openapi::api::core::v1::ComponentStatus;
use kube::api::{Api, ListParams};
use rstest::rstest;

use crate::harness::{api_error, server, TestServer};
use crate::rbac::table;

const PATH: &str = "/api/v1/componentstatuses";

/// Whether something listens on a local port (a developer's own controller-manager).
fn listening(port: u16) -> bool {
    std::net::TcpStream::connect(("127.0.0.1", port)).is_ok()
}

#[rstest]
#[tokio::test]
async fn component_statuses(#[future(awt)] server: TestServer) {
    let api: Api<ComponentStatus> = Api::all(server.client.clone());
    let list = api.list(&ListParams::default()).await.expect("listed");
    let mut names: Vec<String> = list
        .items
        .iter()
        .filter_map(|c| c.metadata.name.clone())
        .collect();
    names.sort();
    assert_eq!(names, ["controller-manager", "etcd-0", "scheduler"]);
    assert_eq!(list.metadata.resource_version, None);

    let etcd = api.get("etcd-0").await.expect("etcd-0");
    let condition = &etcd.conditions.expect("conditions")[0];
    assert_eq!(
        (condition.type_.as_str(), condition.status.as_str()),
        ("Healthy", "True")
    );
    assert_eq!(condition.message.as_deref(), Some("ok"));
    assert_eq!(etcd.metadata.creation_timestamp, None);

    if !listening(10259) {
        let scheduler = api.get("scheduler").await.expect("scheduler");
        let condition = &scheduler.conditions.expect("conditions")[0];
        assert_eq!(condition.status, "False");
        assert_eq!(
            condition.message.as_deref(),
            Some("Get \"https://127.0.0.1:10259/healthz\": dial tcp 127.0.0.1:10259: connect: connection refused")
        );
        assert_eq!(condition.error, None);
    }

    let err = api.get("kube-proxy").await.expect_err("no such component");
    let status = api_error(err);
    assert_eq!(
        (status.code, status.message.as_str()),
        (404, "componentstatus \"kube-proxy\" not found")
    );

    // Every answer carries the deprecation warning.
    let resp = server
        .http
        .get(server.url(PATH))
        .send()
        .await
        .expect("sent");
    assert_eq!(
        resp.headers().get("warning").and_then(|w| w.to_str().ok()),
        Some("299 - \"v1 ComponentStatus is deprecated in v1.19+\"")
    );

    // Selectors: names and namespaces only; labels select nothing (there are none).
    let (status, body) = server
        .get(&format!("{PATH}?fieldSelector=metadata.name%3Detcd-0"))
        .await;
    assert_eq!(status, 200);
    assert_eq!(body["items"].as_array().map(Vec::len), Some(1));
    let (status, body) = server.get(&format!("{PATH}?labelSelector=a%3Db")).await;
    assert_eq!(
        (status, body["items"].as_array().map(Vec::len)),
        (200, Some(0))
    );
    let (status, body) = server
        .get(&format!("{PATH}?fieldSelector=status%3Dx"))
        .await;
    assert_eq!(status, 400);
    assert_eq!(
        body["message"],
        "\"status\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
    );

    // No watch, no writes.
    let (status, body) = server.get(&format!("{PATH}?watch=true")).await;
    assert_eq!(status, 405);
    assert_eq!(
        body["message"],
        "watch is not supported on resources of kind \"componentstatuses\""
    );
    let (status, _) = server
        .post(PATH, &serde_json::json!({"metadata": {"name": "x"}}))
        .await;
    assert_eq!(status, 405);

    let (names, body) = table(&server, PATH).await;
    assert_eq!(names, ["Name", "Status", "Message", "Error"]);
    let etcd = body["rows"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["cells"][0] == "etcd-0")
        .expect("etcd's row");
    assert_eq!(
        etcd["cells"],
        serde_json::json!(["etcd-0", "Healthy", "ok", ""])
    );
}
