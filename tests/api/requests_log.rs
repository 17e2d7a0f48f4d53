//! The request log through `/kubefake/v1/requests` (raw HTTP) and `ServerHandle::requests()`,
//! and a kube-rs controller that meets faults (409 on its status writes, a watch ended
//! mid-stream) and whose retries the log shows.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::watcher;
use kube::{Client, CustomResource, CustomResourceExt, ResourceExt};
use kubefake::{Fault, RequestFilter};
use rstest::rstest;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

use crate::harness::{server, server_with, TestServer};

async fn write_some(server: &TestServer) {
    let api: Api<ConfigMap> = Api::namespaced(server.client.clone(), "default");
    let cm = |name: &str| -> ConfigMap {
        serde_json::from_value(json!({"metadata": {"name": name}})).expect("a ConfigMap")
    };
    let pp = PostParams {
        field_manager: Some("writer".into()),
        ..PostParams::default()
    };
    api.create(&pp, &cm("a")).await.expect("created");
    let dry = PostParams {
        dry_run: true,
        ..PostParams::default()
    };
    api.create(&dry, &cm("b")).await.expect("dry run");
    api.get("a").await.expect("read");
    api.get("missing").await.expect_err("not found");
}

/// `GET /kubefake/v1/requests` lists every request newest last, with the fields,
/// filtered by query parameters; `DELETE` clears it.
#[rstest]
#[tokio::test]
async fn the_http_contract(#[future] server: TestServer) {
    let server = server.await;
    server
        .http
        .delete(server.url("/kubefake/v1/requests"))
        .send()
        .await
        .expect("cleared");
    write_some(&server).await;
    let (code, log) = server.get("/kubefake/v1/requests").await;
    assert_eq!(code, 200);
    let items = log["items"].as_array().expect("items");
    let summary: Vec<(&str, &str, i64, bool)> = items
        .iter()
        .map(|r| {
            let verb = r["verb"].as_str().unwrap_or("");
            let name = r["name"].as_str().unwrap_or("");
            (
                verb,
                name,
                r["code"].as_i64().unwrap_or(0),
                r["dryRun"] == true,
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            ("create", "", 201, false),
            ("create", "", 201, true),
            ("get", "a", 200, false),
            ("get", "missing", 404, false)
        ],
        "newest last, kubefake's own requests left out"
    );
    let first = &items[0];
    for (field, value) in [
        ("group", json!("")),
        ("version", json!("v1")),
        ("resource", json!("configmaps")),
        ("subresource", json!("")),
        ("namespace", json!("default")),
        ("fieldManager", json!("writer")),
        ("user", json!("system:admin")),
        ("method", json!("POST")),
        ("path", json!("/api/v1/namespaces/default/configmaps")),
    ] {
        assert_eq!(first[field], value, "{field}");
    }
    assert!(first["userAgent"].is_string());
    assert!(first["latencySeconds"].as_f64().is_some_and(|s| s > 0.0));
    assert!(first["time"].as_str().is_some_and(|t| t.ends_with('Z')));
    assert!(
        first.get("requestBody").is_none(),
        "bodies are off by default"
    );

    let (_, gets) = server.get("/kubefake/v1/requests?verb=get&code=404").await;
    assert_eq!(gets["items"].as_array().map(Vec::len), Some(1));
    let (_, writes) = server
        .get("/kubefake/v1/requests?writes=true&dryRun=false")
        .await;
    assert_eq!(writes["items"].as_array().map(Vec::len), Some(1));
    let probe = server
        .http
        .get(server.url("/version"))
        .header("user-agent", "probe/1.0");
    assert_eq!(server.send(probe).await.0, 200);
    let (_, probes) = server.get("/kubefake/v1/requests?userAgent=probe/*").await;
    let probes = probes["items"].as_array().cloned().unwrap_or_default();
    assert_eq!(probes.len(), 1);
    assert_eq!(
        (&probes[0]["verb"], &probes[0]["path"]),
        (&json!("get"), &json!("/version"))
    );
    let (code, status) = server.get("/kubefake/v1/requests?verbs=get").await;
    assert_eq!((code, &status["reason"]), (400, &json!("BadRequest")));

    let (code, cleared) = server
        .send(server.http.delete(server.url("/kubefake/v1/requests")))
        .await;
    assert_eq!((code, &cleared["cleared"]), (200, &json!(5)));
    assert_eq!(
        server.get("/kubefake/v1/requests").await.1["items"],
        json!([])
    );
}

/// The Rust API reads as an assertion; the log keeps its size and, when asked, bodies.
#[rstest]
#[tokio::test]
async fn rust_filters_bounds_and_bodies() {
    let builder = kubefake::Server::builder()
        .request_log_size(3)
        .request_log_bodies(true);
    let server = server_with(builder).await;
    write_some(&server).await;
    let log = server.handle.requests().expect("a kubefake server");
    let kept = log.entries();
    assert_eq!(kept.len(), 3, "the oldest went first");
    assert!(kept[0].dry_run);
    let body: Value = serde_json::from_slice(kept[0].request_body.as_deref().unwrap_or_default())
        .expect("the body kept");
    assert_eq!(body["metadata"]["name"], "b");
    assert_eq!(log.count(&RequestFilter::new().verb("get")), 2);
    assert!(log.any(&RequestFilter::writes().namespace("default")));
    assert!(!log.any(&RequestFilter::writes().namespace("kube-system")));
    assert_eq!(
        log.count(&RequestFilter::new().code(404).name("missing")),
        1
    );
    let (_, listed) = server.get("/kubefake/v1/requests?dryRun=true").await;
    assert_eq!(listed["items"][0]["requestBody"]["metadata"]["name"], "b");
}

/// Requests a fault answered carry the rule's id.
#[rstest]
#[tokio::test]
async fn faulted_requests_name_their_rule(#[future] server: TestServer) {
    let server = server.await;
    let id = server
        .handle
        .faults()
        .expect("a kubefake server")
        .add(Fault::new().resource("namespaces").status(503).times(1))
        .expect("added");
    assert_eq!(server.get("/api/v1/namespaces").await.0, 503);
    assert_eq!(server.get("/api/v1/namespaces").await.0, 200);
    let fired = server
        .handle
        .requests()
        .expect("a kubefake server")
        .find(&RequestFilter::new().fault(&id));
    assert_eq!(fired.len(), 1);
    assert_eq!((fired[0].code, fired[0].verb), (503, "list"));
    let (_, listed) = server
        .get(&format!("/kubefake/v1/requests?fault={id}"))
        .await;
    assert_eq!(listed["items"][0]["fault"], json!(id));
}

/// A custom resource with a status subresource, reconciled by [`run_controller`].
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]
#[kube(
    group = "faults.example.com",
    version = "v1",
    kind = "Widget",
    namespaced,
    status = "WidgetStatus"
)]
pub struct WidgetSpec {
    size: i64,
}

/// What the controller writes.
#[derive(Deserialize, Serialize, Clone, Debug, Default, JsonSchema)]
pub struct WidgetStatus {
    observed: i64,
}

const MANAGER: &str = "widget-controller";

#[derive(Debug, thiserror::Error)]
#[error("kube: {0}")]
struct ReconcileError(#[from] kube::Error);

/// Writes the spec's size into the status with server-side apply; a failure is retried soon.
async fn reconcile(w: Arc<Widget>, client: Arc<Client>) -> Result<Action, ReconcileError> {
    let api: Api<Widget> = Api::namespaced((*client).clone(), &w.namespace().unwrap_or_default());
    let status = json!({"apiVersion": "faults.example.com/v1", "kind": "Widget",
                        "status": {"observed": w.spec.size}});
    api.patch_status(
        &w.name_any(),
        &PatchParams::apply(MANAGER).force(),
        &Patch::Apply(status),
    )
    .await?;
    Ok(Action::await_change())
}

fn retry_soon(_: Arc<Widget>, _: &ReconcileError, _: Arc<Client>) -> Action {
    Action::requeue(Duration::from_millis(50))
}

async fn observed(api: &Api<Widget>, name: &str) -> Option<i64> {
    let w = api.get(name).await.ok()?;
    w.status.map(|s| s.observed)
}

async fn wait_observed(api: &Api<Widget>, name: &str, size: i64) {
    let waited = tokio::time::timeout(Duration::from_secs(10), async {
        while observed(api, name).await != Some(size) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(waited.is_ok(), "{name} never got status.observed = {size}");
}

/// A kube-rs controller whose first two status writes meet a 409 and whose watch is ended
/// after one event: it retries the writes, watches again, and the request log shows each
/// step.
#[rstest]
#[tokio::test]
async fn a_controller_retries_through_conflicts_and_a_cut_watch(#[future] server: TestServer) {
    let server = server.await;
    let crds: Api<CustomResourceDefinition> = Api::all(server.client.clone());
    crds.create(&PostParams::default(), &Widget::crd())
        .await
        .expect("CRD");
    let faults = server.handle.faults().expect("a kubefake server");
    let conflicts = faults
        .add(
            Fault::new()
                .verb("patch")
                .subresource("status")
                .field_manager(MANAGER)
                .conflict()
                .times(2),
        )
        .expect("added");
    let cut = faults
        .add(Fault::new().resource("widgets").end_watch_after(1).times(1))
        .expect("added");
    let api: Api<Widget> = Api::namespaced(server.client.clone(), "default");
    let widget = |name: &str, size| Widget::new(name, WidgetSpec { size });
    api.create(&PostParams::default(), &widget("w1", 1))
        .await
        .expect("w1");

    let client = Arc::new(server.client.clone());
    let controller = Controller::new(api.clone(), watcher::Config::default())
        .run(reconcile, retry_soon, client)
        .for_each(|_| async {});
    let running = tokio::spawn(controller);
    wait_observed(&api, "w1", 1).await;
    // The first live event ends the controller's watch; it watches again and sees w3.
    api.create(&PostParams::default(), &widget("w2", 2))
        .await
        .expect("w2");
    wait_observed(&api, "w2", 2).await;
    api.create(&PostParams::default(), &widget("w3", 3))
        .await
        .expect("w3");
    wait_observed(&api, "w3", 3).await;
    running.abort();

    assert_eq!((faults.fired(&conflicts), faults.fired(&cut)), (2, 1));
    let log = server.handle.requests().expect("a kubefake server");
    let status_writes = RequestFilter::new()
        .verb("patch")
        .resource("widgets")
        .subresource("status")
        .field_manager(MANAGER);
    let w1_writes: Vec<u16> = log
        .find(&status_writes.clone().name("w1"))
        .iter()
        .map(|r| r.code)
        .collect();
    assert_eq!(
        w1_writes[..3],
        [409, 409, 200],
        "two conflicts, then the retry went through"
    );
    assert_eq!(log.count(&status_writes.clone().code(409)), 2);
    let watches = RequestFilter::new().verb("watch").resource("widgets");
    let watch_faults: Vec<Option<String>> =
        log.find(&watches).into_iter().map(|r| r.fault).collect();
    assert!(
        watch_faults.len() >= 2,
        "the controller watched again: {watch_faults:?}"
    );
    assert_eq!(watch_faults[0].as_deref(), Some(cut.as_str()));
    assert!(
        !log.any(&RequestFilter::writes().namespace("kube-system")),
        "nothing else was written"
    );
}

/// The audit log's lines once it holds `count` of them (written by a thread of its own).
async fn audit_events(path: &std::path::Path, count: usize) -> Vec<Value> {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let events: Vec<Value> = text
            .lines()
            .map(|line| serde_json::from_str(line).expect("each line is JSON"))
            .collect();
        if events.len() >= count || std::time::Instant::now() > deadline {
            return events;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
async fn the_audit_log_holds_an_audit_event_per_request() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("audit.log");
    let server = server_with(kubefake::Server::builder().audit_log_path(&path)).await;
    let api: Api<ConfigMap> = Api::namespaced(server.client.clone(), "default");
    let cm: ConfigMap =
        serde_json::from_value(json!({"metadata": {"name": "audited"}})).expect("a ConfigMap");
    let pp = PostParams {
        field_manager: Some("auditor".into()),
        ..PostParams::default()
    };
    api.create(&pp, &cm).await.expect("created");
    api.get("audited").await.expect("read");
    api.delete("audited", &Default::default())
        .await
        .expect("deleted");

    let log = server
        .handle
        .requests()
        .expect("a kubefake server")
        .entries();
    let events = audit_events(&path, log.len()).await;
    assert_eq!(events.len(), log.len(), "one event per logged request");
    for (event, record) in events.iter().zip(&log) {
        assert_eq!(event["auditID"], record.audit_id.as_str());
        assert_eq!(event["kind"], "Event");
        assert_eq!(event["apiVersion"], "audit.k8s.io/v1");
        assert_eq!(event["level"], "Metadata");
        assert_eq!(event["stage"], "ResponseComplete");
        assert_eq!(event["sourceIPs"], json!(["127.0.0.1"]));
        assert_eq!(event["user"]["username"], "system:admin");
        let groups = event["user"]["groups"].as_array().expect("groups");
        assert!(groups.contains(&json!("system:masters")), "{event}");
        // Omitted when empty, as in the apiserver's events.
        let user_agent = event["userAgent"].as_str().unwrap_or_default();
        assert_eq!(user_agent, record.user_agent, "{event}");
        for stamp in ["requestReceivedTimestamp", "stageTimestamp"] {
            let text = event[stamp].as_str().expect("a timestamp");
            chrono::DateTime::parse_from_rfc3339(text).expect("RFC 3339");
        }
        assert!(event["requestReceivedTimestamp"].as_str() <= event["stageTimestamp"].as_str());
    }
    let of = |verb: &str| -> Vec<&Value> {
        let configmaps = |e: &&Value| e["objectRef"]["resource"] == "configmaps";
        events
            .iter()
            .filter(configmaps)
            .filter(|e| e["verb"] == verb)
            .collect()
    };
    let [create] = of("create")[..] else {
        panic!("one create: {events:?}")
    };
    assert_eq!(
        create["requestURI"],
        "/api/v1/namespaces/default/configmaps?fieldManager=auditor"
    );
    let object = json!({"resource": "configmaps", "namespace": "default", "apiVersion": "v1"});
    assert_eq!(create["objectRef"], object);
    assert_eq!(
        create["responseStatus"],
        json!({"metadata": {}, "code": 201})
    );
    let [get] = of("get")[..] else {
        panic!("one get: {events:?}")
    };
    let mut named = object.clone();
    named["name"] = json!("audited");
    assert_eq!(get["objectRef"], named);
    assert_eq!(
        get["requestURI"],
        "/api/v1/namespaces/default/configmaps/audited"
    );
    assert_eq!(get["responseStatus"]["code"], 200);
    let [delete] = of("delete")[..] else {
        panic!("one delete: {events:?}")
    };
    assert_eq!(delete["objectRef"], named);
    assert_eq!(delete["responseStatus"]["code"], 200);
}
