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
