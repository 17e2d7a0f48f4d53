//! The core/v1 ComponentStatus kind (deprecated since 1.19, still served): the health of the
//! control plane's parts, computed on every get and list, never stored. As in the apiserver,
//! `controller-manager` and `scheduler` are probed on their local secure ports and `etcd-0` is
//! the storage (kubefake's, always there). Under envtest nothing listens on those ports, so both
//! are `Unhealthy` with Go's connection-refused text, as on a bare apiserver.
//!
//! Deliberate difference: the apiserver GETs `https://127.0.0.1:{port}/healthz`; kubefake only
//! connects, and a component whose port accepts the connection is `Healthy` with `ok`.

use std::net::{Ipv4Addr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::{json, Value};

use crate::error::ApiError;
use crate::registry::builtin;
use crate::registry::resource::{Action, ActionCall, ApiResource};
use crate::registry::strategy::Strategy;
use crate::registry::table::{Column, Columns};
use crate::store::selector::{generic_unsupported_field, FieldSelector, LabelSelector};

/// The deprecation warning every request gets (the apiserver's per-route deprecation filter).
const DEPRECATED: &str = "v1 ComponentStatus is deprecated in v1.19+";

/// The parts probed over the network, with their secure ports.
const PROBED: [(&str, u16); 2] = [("controller-manager", 10257), ("scheduler", 10259)];

/// How long a probe's connection may take (the apiserver allows 20 s for the whole GET; a
/// local port answers or refuses at once).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);

/// The served resource.
pub fn resource() -> ApiResource {
    let mut res = builtin::kind("", "v1", "componentstatuses", Arc::new(NotStored))
        .with(|r| {
            r.served_by(Arc::new(ComponentStatuses))
                .unsupported_field(generic_unsupported_field)
                .table(Columns::new(vec![
                    Column::name(),
                    Column::computed(
                        "Status",
                        "string",
                        0,
                        "Status of the component conditions",
                        |o| json!(health(o).0),
                    ),
                    Column::computed(
                        "Message",
                        "string",
                        0,
                        "Message of the component conditions",
                        |o| json!(health(o).1),
                    ),
                    Column::computed(
                        "Error",
                        "string",
                        0,
                        "Error of the component conditions",
                        |o| json!(health(o).2),
                    ),
                ]))
        })
        .build();
    res.warnings = vec![DEPRECATED.to_string()];
    res
}

/// Nothing is ever stored.
struct NotStored;

impl Strategy for NotStored {}

/// The printer's summary of the `Healthy` condition: its status as a word, message, error.
fn health(obj: &Value) -> (&'static str, String, String) {
    let conditions = obj["conditions"].as_array().into_iter().flatten();
    let Some(healthy) = conditions.into_iter().find(|c| c["type"] == "Healthy") else {
        return ("Unknown", String::new(), String::new());
    };
    let text = |k: &str| healthy[k].as_str().unwrap_or_default().to_string();
    let word = match healthy["status"].as_str() {
        Some("True") => "Healthy",
        _ => "Unhealthy",
    };
    (word, text("message"), text("error"))
}

/// One component's object: its name and one `Healthy` condition.
fn component(name: &str, healthy: bool, message: &str) -> Value {
    json!({"metadata": {"name": name},
        "conditions": [{"type": "Healthy", "status": if healthy { "True" } else { "False" },
            "message": message}]})
}

/// Probes a component on its local port, as the apiserver's HTTP prober reports it.
async fn probe(name: &str, port: u16) -> Value {
    let addr = SocketAddr::from((Ipv4Addr::LOCALHOST, port));
    let url = format!("https://{addr}/healthz");
    let refusal =
        match tokio::time::timeout(CONNECT_TIMEOUT, tokio::net::TcpStream::connect(addr)).await {
            Ok(Ok(_)) => return component(name, true, "ok"),
            Ok(Err(e)) if e.kind() == std::io::ErrorKind::ConnectionRefused => {
                "connect: connection refused".to_string()
            }
            Ok(Err(e)) => e.to_string(),
            Err(_) => "i/o timeout".to_string(),
        };
    component(
        name,
        false,
        &format!("Get \"{url}\": dial tcp {addr}: {refusal}"),
    )
}

/// Every component, probed at once.
async fn all() -> Vec<Value> {
    let probes = PROBED.map(|(name, port)| probe(name, port));
    let mut items = futures_util::future::join_all(probes).await;
    items.push(component("etcd-0", true, "ok"));
    items
}

/// Serves get and list.
struct ComponentStatuses;

impl Action for ComponentStatuses {
    fn serve<'a>(&'a self, call: ActionCall<'a>) -> BoxFuture<'a, Result<(u16, Value), ApiError>> {
        Box::pin(async move {
            let query = |key: &str| {
                call.query
                    .iter()
                    .find(|(k, _)| k == key)
                    .map_or("", |(_, v)| v.as_str())
            };
            if call.verb == "get" {
                let items = all().await;
                let Some(mut found) = items
                    .into_iter()
                    .find(|c| c["metadata"]["name"] == call.name)
                else {
                    return Err(ApiError::not_found("", "componentstatus", call.name));
                };
                found["kind"] = json!("ComponentStatus");
                found["apiVersion"] = json!("v1");
                return Ok((200, found));
            }
            let labels = LabelSelector::parse(query("labelSelector"))
                .map_err(|e| ApiError::bad_request(e.to_string()))?;
            let fields = FieldSelector::parse(
                query("fieldSelector"),
                &["metadata.name", "metadata.namespace"],
                generic_unsupported_field,
            )
            .map_err(|e| ApiError::bad_request(e.to_string()))?;
            let items: Vec<Value> = all()
                .await
                .into_iter()
                .filter(|c| labels.matches(None) && fields.matches(c))
                .collect();
            Ok((
                200,
                json!({"kind": "ComponentStatusList", "apiVersion": "v1", "metadata": {},
                    "items": items}),
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_printers_summary() {
        let healthy = component("etcd-0", true, "ok");
        assert_eq!(health(&healthy), ("Healthy", "ok".into(), String::new()));
        let refused = component("scheduler", false, "refused");
        assert_eq!(health(&refused).0, "Unhealthy");
        assert_eq!(health(&json!({"metadata": {}})).0, "Unknown");
    }

    #[tokio::test]
    async fn a_closed_port_is_gos_connection_refused() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        drop(listener);
        let obj = probe("scheduler", port).await;
        assert_eq!(
            obj["conditions"][0]["message"],
            format!(
                "Get \"https://127.0.0.1:{port}/healthz\": dial tcp 127.0.0.1:{port}: connect: connection refused"
            )
        );
        assert_eq!(obj["conditions"][0]["status"], "False");
        let open = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let port = open.local_addr().expect("addr").port();
        assert_eq!(
            probe("scheduler", port).await["conditions"][0]["status"],
            "True"
        );
    }
}
