//! Workload kinds through kube-rs's typed APIs: pods and their subresources and admission,
//! pod templates and replication controllers, apps/v1, batch/v1, autoscaling and policy.

mod apps;
mod pods;

use serde_json::Value;

use crate::harness::TestServer;

/// The Accept header of `kubectl get`.
pub const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";

/// A Table of `path`, as `kubectl get` asks for it.
pub async fn table(server: &TestServer, path: &str) -> Value {
    let (status, body) = server
        .send(server.http.get(server.url(path)).header("accept", TABLE))
        .await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["kind"], "Table", "{body}");
    body
}

/// The names of a Table's columns.
pub fn column_names(t: &Value) -> Vec<String> {
    t["columnDefinitions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c["name"].as_str().map(str::to_string))
        .collect()
}
