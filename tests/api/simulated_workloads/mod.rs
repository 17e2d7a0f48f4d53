//! The simulated cluster's workload controllers through HTTP (`Server::builder().simulate(true)`):
//! Jobs, CronJobs, StatefulSets and DaemonSets, as kube-controller-manager runs them. Each step
//! a controller takes is done before the request that caused it returns, so most tests read
//! the outcome right after their write; pods that run for a while are waited for.

mod cronjobs;
mod daemonsets;
mod jobs;
mod statefulsets;

use std::time::{Duration, Instant};

use kube::api::{Api, ListParams};
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::harness::{server_with, TestServer};

/// A server simulating the default three-node cluster.
pub async fn simulated() -> TestServer {
    server_with(kubefake::Server::builder().simulate(true)).await
}

/// An object as JSON.
pub fn json_of<T: serde::Serialize>(obj: &T) -> Value {
    serde_json::to_value(obj).expect("json")
}

/// A typed object from JSON.
pub fn typed<T: DeserializeOwned>(v: Value) -> T {
    serde_json::from_value(v).expect("typed")
}

/// Polls `name` until `done` holds for it (as JSON), for at most `limit`; the object then.
pub async fn wait_for<K>(
    api: &Api<K>,
    name: &str,
    limit: Duration,
    done: impl Fn(&Value) -> bool,
) -> Value
where
    K: kube::Resource + Clone + DeserializeOwned + std::fmt::Debug + serde::Serialize,
{
    let start = Instant::now();
    loop {
        let obj = json_of(&api.get(name).await.expect("get"));
        if done(&obj) {
            return obj;
        }
        assert!(start.elapsed() < limit, "{name} never got there: {obj}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The pods of a namespace with a label selector, as JSON, by name.
pub async fn pods(server: &TestServer, selector: &str) -> Vec<Value> {
    let api: Api<k8s_openapi::api::core::v1::Pod> =
        Api::namespaced(server.client.clone(), "default");
    let list = api
        .list(&ListParams::default().labels(selector))
        .await
        .expect("list pods");
    let mut out: Vec<Value> = list.items.iter().map(json_of).collect();
    out.sort_by_key(|p| p["metadata"]["name"].as_str().unwrap_or("").to_string());
    out
}

/// The types of an object's true conditions, in order.
pub fn true_conditions(obj: &Value) -> Vec<String> {
    obj["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["status"] == "True")
        .filter_map(|c| c["type"].as_str().map(String::from))
        .collect()
}
