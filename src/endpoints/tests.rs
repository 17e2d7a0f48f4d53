//! The request path's seams, driven through [`super::handle`] with a kind of the test's own:
//! registering a kind is one line, and a panic anywhere below a request (in a strategy, in a
//! controller step) answers a 500 `Status`, changes nothing, and leaves the server serving.

use std::sync::Arc;

use bytes::Bytes;
use serde_json::{json, Value};
use tokio::sync::watch;
use warp::http::HeaderMap;

use super::handle;
use super::negotiation::{Query, Request};
use crate::error::StatusCause;
use crate::registry::resource::{ApiResource, ResourceBuilder};
use crate::registry::strategy::Strategy;
use crate::state::{Options, State};

/// A kind that misbehaves on demand.
struct WidgetStrategy;

impl Strategy for WidgetStrategy {
    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        if obj["metadata"]["name"] == "panic-in-validate" {
            panic!("a strategy bug");
        }
        Vec::new()
    }

    fn prepare_for_delete(&self, obj: &Value) -> Option<Value> {
        if obj["metadata"]["labels"]["panic"] == "on-delete" {
            panic!("a bug met by a controller");
        }
        None
    }
}

/// The whole registration of a kind.
fn widgets() -> ApiResource {
    ResourceBuilder::new(
        "test.kubefake.io",
        "v1",
        "widgets",
        "Widget",
        Arc::new(WidgetStrategy),
    )
    .build()
}

async fn server() -> Arc<State> {
    let (_tx, rx) = watch::channel(false);
    let state = State::with_kinds(
        "127.0.0.1:1".into(),
        Options::default(),
        rx,
        vec![widgets()],
    );
    state.bootstrap().await;
    state
}

async fn call(state: &Arc<State>, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let (path, query) = path.split_once('?').unwrap_or((path, ""));
    let mut headers = HeaderMap::new();
    headers.insert("content-type", "application/json".parse().expect("header"));
    let req = Request {
        method: method.into(),
        path: path.into(),
        query: Query::parse(query),
        headers,
        body: body.map_or_else(Bytes::new, |b| Bytes::from(b.to_string())),
        peer: None,
        remote: None,
        upgrade: None,
    };
    let resp = handle(state.clone(), req).await;
    let status = resp.status().as_u16();
    let body = http_body_util::BodyExt::collect(resp.into_body())
        .await
        .map(|c| c.to_bytes())
        .unwrap_or_default();
    (status, serde_json::from_slice(&body).unwrap_or(Value::Null))
}

fn widget(name: &str) -> Value {
    json!({"apiVersion": "test.kubefake.io/v1", "kind": "Widget", "metadata": {"name": name}})
}

const WIDGETS: &str = "/apis/test.kubefake.io/v1/namespaces/default/widgets";

#[tokio::test]
async fn a_kind_registered_in_one_line_is_served_like_any_other() {
    let state = server().await;
    let (status, group) = call(&state, "GET", "/apis/test.kubefake.io", None).await;
    assert_eq!(status, 200, "{group}");
    assert_eq!(group["preferredVersion"]["version"], "v1");
    let (status, created) = call(&state, "POST", WIDGETS, Some(widget("a"))).await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["metadata"]["generation"], 1);
    let (status, list) = call(&state, "GET", WIDGETS, None).await;
    assert_eq!(status, 200);
    assert_eq!(list["kind"], "WidgetList");
    assert_eq!(list["items"][0]["metadata"]["name"], "a");
    let (status, gone) = call(&state, "DELETE", &format!("{WIDGETS}/a"), None).await;
    assert_eq!((status, gone["kind"].as_str()), (200, Some("Status")));
}

#[tokio::test]
async fn a_panic_in_a_request_answers_500_and_changes_nothing() {
    let state = server().await;
    let before = state.store.current_rv();
    let (status, body) = call(&state, "POST", WIDGETS, Some(widget("panic-in-validate"))).await;
    assert_eq!(status, 500);
    assert_eq!(body["kind"], "Status");
    assert_eq!(body["reason"], "InternalError");
    assert_eq!(
        body["message"],
        "Internal error occurred: This request caused apiserver to panic. Look in the logs for details."
    );
    assert_eq!(state.store.current_rv(), before, "nothing was written");
    let (status, _) = call(&state, "POST", WIDGETS, Some(widget("fine"))).await;
    assert_eq!(status, 201, "the server keeps serving");
}

#[tokio::test]
async fn a_panic_in_a_controller_answers_500_and_the_server_keeps_serving() {
    let state = server().await;
    let (status, _) = call(
        &state,
        "POST",
        "/api/v1/namespaces",
        Some(json!({"metadata": {"name": "doomed"}})),
    )
    .await;
    assert_eq!(status, 201);
    let mut w = widget("trap");
    w["metadata"]["labels"] = json!({"panic": "on-delete"});
    let path = "/apis/test.kubefake.io/v1/namespaces/doomed/widgets";
    let (status, _) = call(&state, "POST", path, Some(w)).await;
    assert_eq!(status, 201);

    // The namespace controller deletes the namespace's content after the DELETE committed, and
    // panics on the widget.
    let (status, body) = call(&state, "DELETE", "/api/v1/namespaces/doomed", None).await;
    assert_eq!(
        (status, body["reason"].as_str()),
        (500, Some("InternalError"))
    );
    let (status, trap) = call(&state, "GET", &format!("{path}/trap"), None).await;
    assert_eq!(status, 200, "the panicking step changed nothing");
    assert!(trap["metadata"]["deletionTimestamp"].is_null());

    // Controllers still run for later requests (no queue is left stuck).
    let (status, _) = call(
        &state,
        "POST",
        "/api/v1/namespaces",
        Some(json!({"metadata": {"name": "other"}})),
    )
    .await;
    assert_eq!(status, 201);
    let (status, _) = call(&state, "DELETE", "/api/v1/namespaces/other", None).await;
    assert_eq!(status, 200);
    let (status, _) = call(&state, "GET", "/api/v1/namespaces/other", None).await;
    assert_eq!(
        status, 404,
        "the namespace controller finished the deletion"
    );
}
