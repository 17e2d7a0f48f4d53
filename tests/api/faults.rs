//! Fault injection through `/kubefake/v1/faults` (raw HTTP) and `ServerHandle::faults()`
//! (kube-rs): every action, the limits, the `fired` counts, and that a faulted request changes
//! nothing in the store.

use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, PostParams};
use kubefake::Fault;
use rstest::rstest;
use serde_json::{json, Value};

use crate::harness::{api_error, server, token_http, TestServer};

fn configmap(name: &str) -> ConfigMap {
    serde_json::from_value(json!({"metadata": {"name": name}, "data": {"k": "v"}}))
        .expect("a ConfigMap")
}

async fn create_configmaps(server: &TestServer, names: &[&str]) {
    let api: Api<ConfigMap> = Api::namespaced(server.client.clone(), "default");
    for name in names {
        api.create(&PostParams::default(), &configmap(name))
            .await
            .expect("created");
    }
}

/// The HTTP contract: add (201 with an id), the update it matches gets the 409 and
/// changes nothing, the next one goes through, the list shows `fired`, delete removes it.
#[rstest]
#[tokio::test]
async fn the_http_contract(#[future] server: TestServer) {
    let server = server.await;
    server.install_crontab_crd().await;
    let ct = server.create_crontab("default", "x").await;
    let rule = json!({"match": {"verb": "update", "resource": "crontabs", "namespace": "default",
                                "name": "x"},
                      "action": {"code": 409, "reason": "Conflict", "message": "try again"},
                      "times": 1});
    let (code, added) = server.post("/kubefake/v1/faults", &rule).await;
    assert_eq!(code, 201, "{added}");
    let id = added["id"].as_str().expect("an id").to_string();

    let rv = server.rv();
    let err = server
        .crontabs("default")
        .replace("x", &PostParams::default(), &ct)
        .await
        .map(|_| ())
        .map_err(api_error)
        .expect_err("the fault answers");
    assert_eq!(
        (err.code, err.reason.as_str(), err.message.as_str()),
        (409, "Conflict", "try again")
    );
    assert_eq!(server.rv(), rv, "a faulted request changes nothing");
    server
        .crontabs("default")
        .replace("x", &PostParams::default(), &ct)
        .await
        .expect("the rule fired its one time");

    let (code, list) = server.get("/kubefake/v1/faults").await;
    assert_eq!(code, 200);
    let items = list["items"].as_array().expect("items");
    assert_eq!(items.len(), 1);
    assert_eq!(
        (&items[0]["id"], &items[0]["fired"], &items[0]["matched"]),
        (&json!(id), &json!(1), &json!(2))
    );
    assert_eq!(items[0]["match"], rule["match"]);
    let (code, one) = server.get(&format!("/kubefake/v1/faults/{id}")).await;
    assert_eq!((code, &one["fired"]), (200, &json!(1)));

    let delete = server
        .http
        .delete(server.url(&format!("/kubefake/v1/faults/{id}")));
    let (code, removed) = server.send(delete).await;
    assert_eq!((code, &removed["id"]), (200, &json!(id)));
    let delete = server
        .http
        .delete(server.url(&format!("/kubefake/v1/faults/{id}")));
    let (code, status) = server.send(delete).await;
    assert_eq!(
        (code, &status["kind"], &status["reason"]),
        (404, &json!("Status"), &json!("NotFound"))
    );
    assert_eq!(
        server.get("/kubefake/v1/faults").await.1["items"],
        json!([])
    );
}

#[rstest]
#[case(json!({"action": {"code": 1000}}), "action.code 1000 is not an HTTP status code")]
#[case(json!({"match": {"verb": "GET"}, "action": {"code": 500}}), "match.verb \"GET\" is not one of")]
#[case(json!({"match": {"resources": "pods"}, "action": {"code": 500}}), "unknown field `resources`")]
#[case(json!({"action": {"code": 500, "drop": true}}), "exactly one of")]
#[tokio::test]
async fn bad_rules_are_400_statuses(
    #[future] server: TestServer,
    #[case] rule: Value,
    #[case] message: &str,
) {
    let server = server.await;
    let (code, status) = server.post("/kubefake/v1/faults", &rule).await;
    assert_eq!(
        (code, &status["kind"], &status["reason"]),
        (400, &json!("Status"), &json!("BadRequest"))
    );
    let text = status["message"].as_str().unwrap_or("");
    assert!(text.contains(message), "{text}");
    assert_eq!(
        server.handle.faults().expect("a kubefake server").list(),
        vec![]
    );
    let (code, status) = server.get("/kubefake/v1/nothing").await;
    assert_eq!((code, &status["reason"]), (404, &json!("NotFound")));
}

/// A 429 carries `Retry-After` as the apiserver's does, and a faulted create stores nothing.
#[rstest]
#[tokio::test]
async fn too_many_requests_with_retry_after(#[future] server: TestServer) {
    let server = server.await;
    let id = server
        .handle
        .faults()
        .expect("a kubefake server")
        .add(
            Fault::new()
                .verb("create")
                .resource("configmaps")
                .status(429)
                .retry_after(2),
        )
        .expect("added");
    let rv = server.rv();
    let resp = server
        .http
        .post(server.url("/api/v1/namespaces/default/configmaps"))
        .json(&configmap("a"))
        .send()
        .await
        .expect("answered");
    assert_eq!(resp.status().as_u16(), 429);
    assert_eq!(
        resp.headers().get("retry-after").map(|v| v.as_bytes()),
        Some(&b"2"[..])
    );
    let status: Value = resp.json().await.expect("a Status");
    assert_eq!(
        (&status["reason"], &status["details"]["retryAfterSeconds"]),
        (&json!("TooManyRequests"), &json!(2))
    );
    assert_eq!(server.rv(), rv);
    let (code, _) = server.get("/api/v1/namespaces/default/configmaps/a").await;
    assert_eq!(code, 404, "nothing was created");
    assert_eq!(
        server
            .handle
            .faults()
            .expect("a kubefake server")
            .fired(&id),
        1
    );
}

/// `conflict` answers the apiserver's own 409 for a stale resourceVersion.
#[rstest]
#[tokio::test]
async fn the_next_update_sees_a_conflict(#[future] server: TestServer) {
    let server = server.await;
    create_configmaps(&server, &["a"]).await;
    let api: Api<ConfigMap> = Api::namespaced(server.client.clone(), "default");
    let current = api.get("a").await.expect("read");
    server
        .handle
        .faults()
        .expect("a kubefake server")
        .add(Fault::new().verb("update").name("a").conflict().times(1))
        .expect("added");
    let err = api
        .replace("a", &PostParams::default(), &current)
        .await
        .map(|_| ())
        .map_err(api_error)
        .expect_err("a conflict");
    assert_eq!(err.code, 409);
    assert_eq!(
        err.message,
        "Operation cannot be fulfilled on configmaps \"a\": the object has been modified; \
         please apply your changes to the latest version and try again"
    );
    api.replace("a", &PostParams::default(), &current)
        .await
        .expect("the retry goes through: nothing changed");
}

/// A delay holds the request, then serves it; `nth` picks one request of many.
#[rstest]
#[tokio::test]
async fn a_delay_on_the_nth_request(#[future] server: TestServer) {
    let server = server.await;
    let id = server
        .handle
        .faults()
        .expect("a kubefake server")
        .add(
            Fault::new()
                .verb("get")
                .resource("namespaces")
                .delay(Duration::from_millis(300))
                .nth(2),
        )
        .expect("added");
    let mut slow = Vec::new();
    for _ in 0..3 {
        let started = Instant::now();
        let (code, _) = server.get("/api/v1/namespaces/default").await;
        assert_eq!(code, 200);
        slow.push(started.elapsed() >= Duration::from_millis(300));
    }
    assert_eq!(slow, [false, true, false]);
    assert_eq!(
        server
            .handle
            .faults()
            .expect("a kubefake server")
            .fired(&id),
        1
    );
}

async fn watch_lines(server: &TestServer) -> Vec<Value> {
    let text = server
        .http
        .get(server.url("/api/v1/namespaces/default/configmaps?watch=1&resourceVersion=0"))
        .send()
        .await
        .expect("a watch")
        .text()
        .await
        .expect("the stream ends");
    text.lines()
        .map(|l| serde_json::from_str(l).expect("an event"))
        .collect()
}

/// A watch ends after N events, or expires with a 410 ERROR event.
#[rstest]
#[case(Fault::new().end_watch_after(2), vec!["ADDED", "ADDED"])]
#[case(Fault::new().end_watch_after(0), vec![])]
#[case(Fault::new().expire_watch_after(1), vec!["ADDED", "ERROR"])]
#[case(Fault::new().expire_watch_after(0), vec!["ERROR"])]
#[tokio::test]
async fn watches_end_early(
    #[future] server: TestServer,
    #[case] fault: Fault,
    #[case] events: Vec<&str>,
) {
    let server = server.await;
    create_configmaps(&server, &["a", "b", "c"]).await;
    server
        .handle
        .faults()
        .expect("a kubefake server")
        .add(fault.times(1))
        .expect("added");
    let lines = watch_lines(&server).await;
    let types: Vec<&str> = lines.iter().filter_map(|e| e["type"].as_str()).collect();
    assert_eq!(types, events);
    if let Some(error) = lines.iter().find(|e| e["type"] == "ERROR") {
        assert_eq!(
            (&error["object"]["code"], &error["object"]["reason"]),
            (&json!(410), &json!("Expired"))
        );
    }
    // A list is no watch: the rule leaves it alone.
    let (code, _) = server.get("/api/v1/namespaces/default/configmaps").await;
    assert_eq!(code, 200);
}

/// A watch ended mid-stream by live events, through kube-rs.
#[rstest]
#[tokio::test]
async fn a_live_watch_ends_after_its_events(#[future] server: TestServer) {
    use futures_util::StreamExt;
    use kube::api::WatchParams;
    let server = server.await;
    server
        .handle
        .faults()
        .expect("a kubefake server")
        .add(Fault::new().resource("configmaps").end_watch_after(2))
        .expect("added");
    let api: Api<ConfigMap> = Api::namespaced(server.client.clone(), "default");
    let rv = api
        .list(&ListParams::default())
        .await
        .expect("listed")
        .metadata
        .resource_version;
    let stream = api
        .watch(&WatchParams::default(), &rv.unwrap_or_default())
        .await
        .expect("watching");
    create_configmaps(&server, &["a", "b", "c"]).await;
    let events: Vec<_> = tokio::time::timeout(Duration::from_secs(10), stream.collect::<Vec<_>>())
        .await
        .expect("the watch ends by itself");
    assert_eq!(events.len(), 2, "{events:?}");
}

/// `drop` closes the connection unanswered.
#[rstest]
#[tokio::test]
async fn a_dropped_connection(#[future] server: TestServer) {
    let server = server.await;
    server
        .handle
        .faults()
        .expect("a kubefake server")
        .add(
            Fault::new()
                .resource("configmaps")
                .drop_connection()
                .times(1),
        )
        .expect("added");
    let sent = server
        .http
        .get(server.url("/api/v1/namespaces/default/configmaps"))
        .send()
        .await;
    let err = sent.map(|r| r.status()).expect_err("no answer");
    assert!(!err.is_status(), "{err}");
    let api: Api<ConfigMap> = Api::namespaced(server.client.clone(), "default");
    api.list(&ListParams::default())
        .await
        .expect("the next request is served");
}

/// User agents match by glob; field managers and users exactly.
#[rstest]
#[tokio::test]
async fn user_agent_globs_and_field_managers(#[future] server: TestServer) {
    let server = server.await;
    let faults = server.handle.faults().expect("a kubefake server");
    faults
        .add(Fault::new().user_agent("kubectl/*").status(503))
        .expect("added");
    faults
        .add(Fault::new().field_manager("bad-manager").status(500))
        .expect("added");
    let get = |agent: &'static str| {
        server
            .http
            .get(server.url("/api/v1/namespaces/default"))
            .header("user-agent", agent)
    };
    assert_eq!(
        server.send(get("kubectl/v1.36.0 (linux/amd64)")).await.0,
        503
    );
    assert_eq!(server.send(get("kube-rs/1")).await.0, 200);
    let create = |manager: &str| {
        server
            .http
            .post(server.url(&format!(
                "/api/v1/namespaces/default/configmaps?fieldManager={manager}"
            )))
            .json(&configmap(manager))
    };
    assert_eq!(server.send(create("bad-manager")).await.0, 500);
    assert_eq!(server.send(create("good-manager")).await.0, 201);
}

/// Under RBAC only `system:masters` may use kubefake's API; discovery and resources are
/// authorized as usual.
#[rstest]
#[tokio::test]
async fn under_rbac_only_masters_may() {
    let server =
        crate::harness::rbac_server_with_user("jane", &["system:authenticated"], "jane-token")
            .await;
    let jane = token_http(&server.handle, "Bearer jane-token");
    for path in ["/kubefake/v1/faults", "/kubefake/v1/requests"] {
        let resp = jane.get(server.url(path)).send().await.expect("answered");
        assert_eq!(resp.status().as_u16(), 403);
        let status: Value = resp.json().await.expect("a Status");
        assert_eq!(status["reason"], "Forbidden");
        let message = status["message"].as_str().unwrap_or("");
        assert!(
            message.contains("User \"jane\" cannot get path"),
            "{message}"
        );
        assert_eq!(server.get(path).await.0, 200, "the admin may");
    }
}
