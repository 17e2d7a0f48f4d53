//! Kinds of the core group and their close relatives (secrets, service accounts, events,
//! leases, services and their endpoints, quotas and limits, volumes and claims, nodes), driven
//! through kube-rs's typed APIs, with raw HTTP where the wire form is the point (Tables,
//! protobuf).

mod events;
mod leases;
mod secrets;
mod serviceaccounts;
mod services;
mod storage_quota_nodes;

use serde_json::Value;

use crate::harness::TestServer;

/// The Accept header of `kubectl get`.
pub const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";
/// The protobuf media type.
pub const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

/// GETs a path as a Table.
pub async fn table(server: &TestServer, path: &str) -> Value {
    let (status, body) = server
        .send(server.http.get(server.url(path)).header("accept", TABLE))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["kind"], "Table");
    body
}

/// The column names of a Table.
pub fn columns(table: &Value) -> Vec<String> {
    table["columnDefinitions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["name"].as_str().map(str::to_string))
        .collect()
}

/// The columns shown without `-o wide` (priority 0).
pub fn narrow_columns(table: &Value) -> Vec<String> {
    table["columnDefinitions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["priority"] == 0)
        .filter_map(|c| c["name"].as_str().map(str::to_string))
        .collect()
}

/// The cells of the Table row of the object `name`.
pub fn row(table: &Value, name: &str) -> Vec<Value> {
    table["rows"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["object"]["metadata"]["name"] == name)
        .and_then(|r| r["cells"].as_array().cloned())
        .unwrap_or_else(|| panic!("no row for {name} in {table}"))
}

/// GETs a path in protobuf and decodes it.
pub async fn protobuf(server: &TestServer, path: &str) -> Value {
    let resp = server
        .http
        .get(server.url(path))
        .header("accept", PROTOBUF)
        .send()
        .await
        .expect("sent");
    assert_eq!(resp.status().as_u16(), 200);
    let body = resp.bytes().await.expect("body");
    assert_eq!(&body[..4], b"k8s\0");
    kubefake::endpoints::protobuf::decode(&body).expect("decodes")
}
