//! Watch basics through kube-rs: initial state, live events in order, replay from a
//! resourceVersion, and 410 for one that is too old. (List/watch semantics in depth have their
//! own issue.)

use futures_util::{StreamExt, TryStreamExt};
use kube::api::{DeleteParams, Patch, PatchParams, WatchEvent, WatchParams};
use kube::runtime::{watcher, WatchStreamExt};
use rstest::rstest;
use serde_json::json;

use crate::harness::{server, CronTab, TestServer};

fn name(ct: &CronTab) -> String {
    ct.metadata.name.clone().unwrap_or_default()
}

#[rstest]
#[tokio::test]
async fn watch_sends_initial_state_then_live_events(#[future(awt)] server: TestServer) {
    server.install_crontab_crd().await;
    server.create_crontab("default", "before").await;
    let api = server.crontabs("default");
    let mut events = api
        .watch(&WatchParams::default(), "0")
        .await
        .expect("watch")
        .boxed();
    match events.next().await {
        Some(Ok(WatchEvent::Added(ct))) => assert_eq!(name(&ct), "before"),
        other => panic!("expected the initial ADDED, got {other:?}"),
    }
    server.create_crontab("default", "after").await;
    api.patch(
        "after",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"image": "v2"}})),
    )
    .await
    .expect("patch");
    api.delete("after", &DeleteParams::default())
        .await
        .expect("delete");
    let mut seen = Vec::new();
    while seen.len() < 3 {
        match events.next().await {
            // kube-rs asks for bookmarks: the end of the initial events is marked by one.
            Some(Ok(WatchEvent::Bookmark(b))) => {
                assert_eq!(
                    b.metadata
                        .annotations
                        .get("k8s.io/initial-events-end")
                        .map(String::as_str),
                    Some("true")
                );
            }
            Some(Ok(WatchEvent::Added(ct))) => seen.push(("ADDED", name(&ct))),
            Some(Ok(WatchEvent::Modified(ct))) => seen.push(("MODIFIED", name(&ct))),
            Some(Ok(WatchEvent::Deleted(ct))) => seen.push(("DELETED", name(&ct))),
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(
        seen,
        [
            ("ADDED", "after".into()),
            ("MODIFIED", "after".into()),
            ("DELETED", "after".into())
        ]
    );
}

#[rstest]
#[tokio::test]
async fn watch_replays_from_a_resource_version(#[future(awt)] server: TestServer) {
    server.install_crontab_crd().await;
    let first = server.create_crontab("default", "one").await;
    server.create_crontab("default", "two").await;
    server.create_crontab("default", "three").await;
    let rv = first.metadata.resource_version.expect("rv");
    let api = server.crontabs("default");
    let mut events = api
        .watch(&WatchParams::default(), &rv)
        .await
        .expect("watch")
        .boxed();
    let mut names = Vec::new();
    for _ in 0..2 {
        match events.next().await {
            Some(Ok(WatchEvent::Added(ct))) => names.push(name(&ct)),
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(
        names,
        ["two", "three"],
        "exactly the events after the resourceVersion"
    );
}

/// A watch that names no `timeoutSeconds` ends after a random time between the minimum
/// request timeout and twice it, as the apiserver ends it (30 to 60 minutes by default).
#[tokio::test]
async fn watches_without_a_timeout_end_after_the_minimum_request_timeout() {
    let handle = kubefake::Server::builder()
        .min_request_timeout(std::time::Duration::from_millis(300))
        .start()
        .await
        .expect("start");
    let client = handle.client().expect("client");
    let namespaces: kube::Api<k8s_openapi::api::core::v1::Namespace> = kube::Api::all(client);
    let began = std::time::Instant::now();
    let mut events = namespaces
        .watch(&WatchParams::default().timeout(0), "0")
        .await
        .expect("watch")
        .boxed();
    while let Some(event) = events.next().await {
        event.expect("an event");
    }
    let lasted = began.elapsed();
    assert!(
        lasted >= std::time::Duration::from_millis(300),
        "{lasted:?}"
    );
}

#[tokio::test]
async fn too_old_resource_version_is_410() {
    let handle = kubefake::Server::builder()
        .history_size(2)
        .start()
        .await
        .expect("start");
    let client = handle.client().expect("client");
    let namespaces: kube::Api<k8s_openapi::api::core::v1::Namespace> = kube::Api::all(client);
    let mut events = namespaces
        .watch(&WatchParams::default(), "1")
        .await
        .expect("watch")
        .boxed();
    match events.next().await {
        Some(Ok(WatchEvent::Error(status))) => {
            assert_eq!(status.code, 410);
            assert_eq!(status.reason, "Expired");
            assert!(
                status.message.starts_with("too old resource version: 1 ("),
                "{}",
                status.message
            );
        }
        other => panic!("expected a 410 ERROR event, got {other:?}"),
    }
}

#[rstest]
#[tokio::test]
async fn kube_runtime_watcher_converges(#[future(awt)] server: TestServer) {
    server.install_crontab_crd().await;
    server.create_crontab("default", "a").await;
    let api = server.crontabs("default");
    let stream = watcher(api.clone(), watcher::Config::default())
        .applied_objects()
        .boxed();
    let mut stream = stream;
    let first = stream
        .try_next()
        .await
        .expect("watch ok")
        .expect("an object");
    assert_eq!(name(&first), "a");
    server.create_crontab("default", "b").await;
    let second = stream
        .try_next()
        .await
        .expect("watch ok")
        .expect("an object");
    assert_eq!(name(&second), "b");
}

#[rstest]
#[tokio::test]
async fn streaming_list_initial_events_then_bookmark(#[future(awt)] server: TestServer) {
    server.install_crontab_crd().await;
    server.create_crontab("default", "a").await;
    server.create_crontab("default", "b").await;
    let resp = server
        .http
        .get(server.url(
            "/apis/stable.example.com/v1/namespaces/default/crontabs?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true",
        ))
        .send()
        .await
        .expect("watch");
    assert_eq!(resp.status(), 200);
    let mut body = resp.bytes_stream();
    let mut buf = Vec::new();
    let mut lines: Vec<serde_json::Value> = Vec::new();
    while lines.len() < 3 {
        let chunk = body.next().await.expect("more").expect("chunk");
        buf.extend_from_slice(&chunk);
        while let Some(pos) = buf.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = buf.drain(..=pos).collect();
            lines.push(serde_json::from_slice(&line).expect("json line"));
        }
    }
    assert_eq!(lines[0]["type"], "ADDED");
    assert_eq!(lines[1]["type"], "ADDED");
    assert_eq!(lines[2]["type"], "BOOKMARK");
    assert_eq!(lines[2]["object"]["kind"], "CronTab");
    assert_eq!(
        lines[2]["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"],
        "true"
    );
    assert_eq!(
        lines[2]["object"]["metadata"]["resourceVersion"],
        server.rv().to_string()
    );
}

#[rstest]
#[tokio::test]
async fn kube_runtime_streaming_list_strategy(#[future(awt)] server: TestServer) {
    server.install_crontab_crd().await;
    server.create_crontab("default", "a").await;
    let api = server.crontabs("default");
    let mut stream = watcher(api.clone(), watcher::Config::default().streaming_lists()).boxed();
    let mut initial = Vec::new();
    loop {
        match stream.try_next().await.expect("ok").expect("event") {
            watcher::Event::Init => {}
            watcher::Event::InitApply(ct) => initial.push(name(&ct)),
            watcher::Event::InitDone => break,
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(initial, ["a"]);
    server.create_crontab("default", "b").await;
    match stream.try_next().await.expect("ok").expect("event") {
        watcher::Event::Apply(ct) => assert_eq!(name(&ct), "b"),
        other => panic!("unexpected {other:?}"),
    }
}

#[rstest]
#[tokio::test]
async fn reflector_store_converges(#[future(awt)] server: TestServer) {
    use kube::runtime::reflector;
    server.install_crontab_crd().await;
    let api = server.crontabs("default");
    for n in ["a", "b", "c"] {
        server.create_crontab("default", n).await;
    }
    let (reader, writer) = reflector::store::<CronTab>();
    let stream = reflector(writer, watcher(api.clone(), watcher::Config::default()))
        .applied_objects()
        .boxed();
    let task = tokio::spawn(async move {
        let mut stream = stream;
        while stream.try_next().await.ok().flatten().is_some() {}
    });
    reader.wait_until_ready().await.expect("ready");
    api.delete("b", &DeleteParams::default())
        .await
        .expect("delete");
    server.create_crontab("default", "d").await;
    api.patch(
        "c",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"image": "changed"}})),
    )
    .await
    .expect("patch");
    let want = |names: &[&str], image_c: &str| {
        let mut state: Vec<String> = reader.state().iter().map(|c| name(c)).collect();
        state.sort();
        let c_image = reader
            .state()
            .iter()
            .find(|c| name(c) == "c")
            .map(|c| c.spec.image.clone());
        state == names && c_image.as_deref() == Some(image_c)
    };
    let mut converged = false;
    for _ in 0..500 {
        if want(&["a", "c", "d"], "changed") {
            converged = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    task.abort();
    assert!(converged, "reflector store converges to the server's state");
}

#[rstest]
#[tokio::test]
async fn a_controller_reconciles_creates_updates_and_deletes(#[future(awt)] server: TestServer) {
    use kube::runtime::controller::{Action, Controller};
    use std::sync::{Arc, Mutex};
    server.install_crontab_crd().await;
    let api = server.crontabs("default");
    type Seen = Arc<Mutex<Vec<(String, Option<String>)>>>;
    let seen: Seen = Arc::default();
    let ctx = seen.clone();
    let controller = Controller::new(api.clone(), watcher::Config::default())
        .run(
            |ct: Arc<CronTab>, seen: Arc<Seen>| async move {
                seen.lock()
                    .expect("lock")
                    .push((name(&ct), Some(ct.spec.image.clone())));
                Ok::<_, kube::Error>(Action::await_change())
            },
            |_, _, _| Action::await_change(),
            Arc::new(ctx),
        )
        .for_each(|_| async {});
    let task = tokio::spawn(controller);
    server.create_crontab("default", "watched").await;
    api.patch(
        "watched",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"image": "v2"}})),
    )
    .await
    .expect("patch");
    let mut reconciled_v2 = false;
    for _ in 0..500 {
        if seen
            .lock()
            .expect("lock")
            .iter()
            .any(|(n, img)| n == "watched" && img.as_deref() == Some("v2"))
        {
            reconciled_v2 = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    task.abort();
    assert!(reconciled_v2, "the reconcile loop saw the update");
    assert!(seen
        .lock()
        .expect("lock")
        .iter()
        .any(|(n, _)| n == "watched"));
}

#[rstest]
#[tokio::test]
async fn selectors_on_watch_turn_changes_into_added_and_deleted(#[future(awt)] server: TestServer) {
    server.install_crontab_crd().await;
    server.create_crontab("default", "x").await;
    let api = server.crontabs("default");
    let rv = server.rv().to_string();
    let mut events = api
        .watch(&WatchParams::default().labels("tier=web"), &rv)
        .await
        .expect("watch")
        .boxed();
    let label = |v: Option<&str>| Patch::Merge(json!({"metadata": {"labels": {"tier": v}}}));
    api.patch("x", &PatchParams::default(), &label(Some("web")))
        .await
        .expect("label");
    api.patch(
        "x",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"image": "i2"}})),
    )
    .await
    .expect("patch");
    api.patch("x", &PatchParams::default(), &label(Some("db")))
        .await
        .expect("relabel");
    api.patch(
        "x",
        &PatchParams::default(),
        &Patch::Merge(json!({"spec": {"image": "i3"}})),
    )
    .await
    .expect("patch");
    api.patch("x", &PatchParams::default(), &label(Some("web")))
        .await
        .expect("back");
    let mut kinds = Vec::new();
    while kinds.len() < 4 {
        match events.next().await.expect("event").expect("ok") {
            WatchEvent::Added(_) => kinds.push("ADDED"),
            WatchEvent::Modified(_) => kinds.push("MODIFIED"),
            WatchEvent::Deleted(_) => kinds.push("DELETED"),
            WatchEvent::Bookmark(_) => {}
            WatchEvent::Error(e) => panic!("{e:?}"),
        }
    }
    assert_eq!(kinds, ["ADDED", "MODIFIED", "DELETED", "ADDED"]);

    let (status, body) = server
        .get("/apis/stable.example.com/v1/namespaces/default/crontabs?watch=1&fieldSelector=spec.image%3Dx")
        .await;
    assert_eq!(status, 400);
    // The custom resource converter's wording (`crConverter.ConvertFieldLabel`).
    assert_eq!(body["message"], "field label not supported: spec.image");
}

#[tokio::test]
async fn bookmarks_arrive_periodically() {
    let handle = kubefake::Server::builder()
        .bookmark_interval(std::time::Duration::from_millis(20))
        .start()
        .await
        .expect("start");
    let client = handle.client().expect("client");
    let namespaces: kube::Api<k8s_openapi::api::core::v1::Namespace> = kube::Api::all(client);
    let rv = handle
        .state()
        .expect("a kubefake server")
        .store
        .current_rv()
        .to_string();
    let mut events = namespaces
        .watch(&WatchParams::default(), &rv)
        .await
        .expect("watch")
        .boxed();
    match events.next().await {
        Some(Ok(WatchEvent::Bookmark(b))) => assert_eq!(b.metadata.resource_version, rv),
        other => panic!("expected a bookmark, got {other:?}"),
    }
}

#[tokio::test]
async fn old_resource_version_then_relist_succeeds() {
    let handle = kubefake::Server::builder()
        .history_size(3)
        .start()
        .await
        .expect("start");
    let client = handle.client().expect("client");
    let namespaces: kube::Api<k8s_openapi::api::core::v1::Namespace> = kube::Api::all(client);
    for i in 0..5 {
        let ns: k8s_openapi::api::core::v1::Namespace =
            serde_json::from_value(json!({"metadata": {"name": format!("n{i}")}})).expect("ns");
        namespaces
            .create(&Default::default(), &ns)
            .await
            .expect("create");
    }
    let mut events = namespaces
        .watch(&WatchParams::default(), "2")
        .await
        .expect("watch")
        .boxed();
    assert!(matches!(events.next().await, Some(Ok(WatchEvent::Error(ref s))) if s.code == 410));
    // The client re-lists and watches from the list's resourceVersion.
    let list = namespaces.list(&Default::default()).await.expect("relist");
    assert_eq!(list.items.len(), 9);
    let rv = list.metadata.resource_version.expect("rv");
    let mut events = namespaces
        .watch(&WatchParams::default(), &rv)
        .await
        .expect("watch")
        .boxed();
    let ns: k8s_openapi::api::core::v1::Namespace =
        serde_json::from_value(json!({"metadata": {"name": "after"}})).expect("ns");
    namespaces
        .create(&Default::default(), &ns)
        .await
        .expect("create");
    match events.next().await {
        Some(Ok(WatchEvent::Added(ns))) => assert_eq!(ns.metadata.name.as_deref(), Some("after")),
        other => panic!("unexpected {other:?}"),
    }
}

#[tokio::test]
async fn a_watcher_that_falls_behind_gets_410_not_a_gap() {
    // The stall timeout is raised: on a loaded machine the writes below can take longer than
    // the default 10 s, and the stream would then be cut for not being read (another test's
    // subject) instead of ending with its 410.
    let handle = kubefake::Server::builder()
        .watch_buffer(4)
        .stall_timeout(std::time::Duration::from_secs(120))
        .start()
        .await
        .expect("start");
    let url = format!(
        "{}/api/v1/namespaces?watch=1&resourceVersion={}",
        handle.url(),
        handle
            .state()
            .expect("a kubefake server")
            .store
            .current_rv()
    );
    let resp = reqwest::get(&url).await.expect("watch");
    // Do not read while many large writes happen: once the socket buffers are full, the
    // watcher falls behind.
    let http = reqwest::Client::new();
    let big = "x".repeat(200 * 1024);
    for i in 0..150 {
        let r = http
            .post(format!("{}/api/v1/namespaces", handle.url()))
            .json(&json!({"metadata": {"name": format!("lag-{i}"), "annotations": {"big": big}}}))
            .send()
            .await
            .expect("create");
        assert_eq!(r.status(), 201);
    }
    let text = tokio::time::timeout(std::time::Duration::from_secs(60), resp.text())
        .await
        .expect("the stream ends")
        .expect("body");
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("json line"))
        .collect();
    let last = lines.last().expect("some events");
    assert_eq!(last["type"], "ERROR");
    assert_eq!(last["object"]["code"], 410);
    assert_eq!(last["object"]["reason"], "Expired");
    // Everything before the error is an unbroken prefix of the writes.
    let names: Vec<&str> = lines[..lines.len() - 1]
        .iter()
        .map(|l| l["object"]["metadata"]["name"].as_str().unwrap_or(""))
        .collect();
    for (i, n) in names.iter().enumerate() {
        assert_eq!(*n, format!("lag-{i}"));
    }
    assert!(names.len() < 150);
}

#[tokio::test]
async fn timeout_seconds_ends_the_stream() {
    let handle = kubefake::Server::start().await.expect("start");
    let url = format!(
        "{}/api/v1/namespaces?watch=1&timeoutSeconds=1",
        handle.url()
    );
    let text = tokio::time::timeout(std::time::Duration::from_secs(10), async {
        reqwest::get(&url)
            .await
            .expect("watch")
            .text()
            .await
            .expect("body")
    })
    .await
    .expect("the server ends the stream");
    assert_eq!(
        text.lines().count(),
        4,
        "the initial namespaces, then the end"
    );
}

#[rstest]
#[tokio::test]
async fn a_client_disconnect_frees_the_watch(#[future(awt)] server: TestServer) {
    let store = &server.handle.state().expect("a kubefake server").store;
    let before = store.watcher_count();
    let resp = server
        .http
        .get(server.url("/api/v1/namespaces?watch=1"))
        .send()
        .await
        .expect("watch");
    assert_eq!(resp.status(), 200);
    assert_eq!(store.watcher_count(), before + 1);
    drop(resp);
    let mut freed = false;
    for _ in 0..500 {
        // A write wakes the stream so it notices the closed connection.
        server
            .post(
                "/api/v1/namespaces",
                &json!({"metadata": {"generateName": "wake-"}}),
            )
            .await;
        if store.watcher_count() == before {
            freed = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    assert!(freed, "the stream's subscription is released");
}

/// N writers and M watchers: every watcher sees the same strictly increasing sequence of
/// resourceVersions, every write it could see, and the final state equals the store.
#[rstest]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_writers_and_watchers_agree(#[future(awt)] server: TestServer) {
    const WRITERS: usize = 4;
    const WRITES: usize = 50;
    const WATCHERS: usize = 5;
    server.install_crontab_crd().await;
    let api = server.crontabs("default");
    let start_rv = server.rv().to_string();
    let mut watchers = Vec::new();
    for _ in 0..WATCHERS {
        let stream = api
            .watch(&WatchParams::default(), &start_rv)
            .await
            .expect("watch")
            .boxed();
        watchers.push(tokio::spawn(async move {
            let mut stream = stream;
            let mut seen: Vec<(u64, String, String)> = Vec::new();
            let total = WRITERS * WRITES * 2; // a create and an update each
            while seen.len() < total {
                let (kind, ct) = match stream.next().await.expect("event").expect("ok") {
                    WatchEvent::Added(ct) => ("ADDED", ct),
                    WatchEvent::Modified(ct) => ("MODIFIED", ct),
                    WatchEvent::Bookmark(_) => continue,
                    other => panic!("unexpected {other:?}"),
                };
                let rv: u64 = ct
                    .metadata
                    .resource_version
                    .clone()
                    .unwrap_or_default()
                    .parse()
                    .expect("rv");
                seen.push((rv, kind.to_string(), name(&ct)));
            }
            seen
        }));
    }
    let mut writers = Vec::new();
    for w in 0..WRITERS {
        let api = api.clone();
        writers.push(tokio::spawn(async move {
            for i in 0..WRITES {
                let ct = CronTab::new(
                    &format!("w{w}-{i}"),
                    crate::harness::CronTabSpec {
                        cron_spec: "x".into(),
                        image: "v1".into(),
                        replicas: None,
                    },
                );
                api.create(&Default::default(), &ct).await.expect("create");
                api.patch(
                    &format!("w{w}-{i}"),
                    &PatchParams::default(),
                    &Patch::Merge(json!({"spec": {"image": "v2"}})),
                )
                .await
                .expect("update");
            }
        }));
    }
    for w in writers {
        w.await.expect("writer");
    }
    let mut sequences = Vec::new();
    for w in watchers {
        sequences.push(w.await.expect("watcher"));
    }
    let first = &sequences[0];
    for seq in &sequences {
        assert_eq!(seq, first, "every watcher sees the same sequence");
        assert!(
            seq.windows(2).all(|p| p[0].0 < p[1].0),
            "strictly increasing"
        );
    }
    // No gap: the resourceVersions are exactly the writes after the start.
    let start: u64 = start_rv.parse().expect("rv");
    let rvs: Vec<u64> = first.iter().map(|e| e.0).collect();
    let expected: Vec<u64> = (start + 1..=start + (WRITERS * WRITES * 2) as u64).collect();
    assert_eq!(rvs, expected);
    // Replaying the events gives the store's final state.
    let mut state = std::collections::BTreeMap::new();
    for (rv, _, name) in first {
        state.insert(name.clone(), *rv);
    }
    let list = api.list(&Default::default()).await.expect("list");
    let actual: std::collections::BTreeMap<String, u64> = list
        .items
        .iter()
        .map(|c| {
            (
                name(c),
                c.metadata
                    .resource_version
                    .clone()
                    .unwrap_or_default()
                    .parse()
                    .expect("rv"),
            )
        })
        .collect();
    assert_eq!(state, actual);
}
