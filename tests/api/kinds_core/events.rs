//! core/v1 and events.k8s.io/v1 Events: one store behind both APIs, the legacy and strict
//! validation, field selectors in each API's names, kubectl's columns, and kube-rs's event
//! Recorder end to end.

use futures_util::StreamExt;
use k8s_openapi::api::core::v1::{Event as CoreEvent, ObjectReference};
use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, ListParams, PostParams, WatchEvent, WatchParams};
use kube::runtime::events::{Event as RecordedEvent, EventType, Recorder, Reporter};
use rstest::rstest;
use serde_json::json;

use super::{columns, narrow_columns, row, table};
use crate::harness::{api_error, server, TestServer};

fn pod_ref(name: &str) -> ObjectReference {
    ObjectReference {
        api_version: Some("v1".into()),
        kind: Some("Pod".into()),
        name: Some(name.into()),
        namespace: Some("default".into()),
        uid: Some("0a1b2c".into()),
        ..Default::default()
    }
}

fn core_event(name: &str, involved: ObjectReference, reason: &str) -> CoreEvent {
    CoreEvent {
        metadata: kube::api::ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        involved_object: involved,
        reason: Some(reason.into()),
        message: Some("  pulled the image  ".into()),
        type_: Some("Normal".into()),
        count: Some(3),
        source: Some(k8s_openapi::api::core::v1::EventSource {
            component: Some("kubelet".into()),
            host: Some("node-1".into()),
        }),
        ..Default::default()
    }
}

#[rstest]
#[tokio::test]
async fn recorder_publishes_through_events_v1(#[future(awt)] server: TestServer) {
    let recorder = Recorder::new(
        server.client.clone(),
        Reporter {
            controller: "my-controller".into(),
            instance: Some("my-controller-0".into()),
        },
    );
    let reference = pod_ref("web-0");
    let event = RecordedEvent {
        type_: EventType::Warning,
        reason: "BackOff".into(),
        note: Some("restarting failed container".into()),
        action: "Restarting".into(),
        secondary: None,
    };
    recorder
        .publish(&event, &reference)
        .await
        .expect("first publish creates");
    recorder
        .publish(&event, &reference)
        .await
        .expect("second publish patches the series");

    let events: Api<Event> = Api::namespaced(server.client.clone(), "default");
    let listed = events.list(&ListParams::default()).await.expect("list");
    assert_eq!(listed.items.len(), 1);
    let ev = &listed.items[0];
    assert_eq!(ev.reporting_controller.as_deref(), Some("my-controller"));
    assert_eq!(ev.series.as_ref().map(|s| s.count), Some(2));
    assert_eq!(
        ev.regarding.as_ref().and_then(|r| r.name.as_deref()),
        Some("web-0")
    );

    // The same object, read through core/v1.
    let core: Api<CoreEvent> = Api::namespaced(server.client.clone(), "default");
    let core_list = core.list(&ListParams::default()).await.expect("list");
    assert_eq!(core_list.items.len(), 1);
    let c = &core_list.items[0];
    assert_eq!(c.involved_object.name.as_deref(), Some("web-0"));
    assert_eq!(c.message.as_deref(), Some("restarting failed container"));
    assert_eq!(c.reporting_component.as_deref(), Some("my-controller"));
    assert_eq!(c.action.as_deref(), Some("Restarting"));
    assert_eq!(c.type_.as_deref(), Some("Warning"));

    let t = table(&server, "/api/v1/namespaces/default/events").await;
    assert_eq!(
        narrow_columns(&t),
        ["Last Seen", "Type", "Reason", "Object", "Message"]
    );
    let name = c.metadata.name.clone().unwrap_or_default();
    let cells = row(&t, &name);
    assert_eq!(cells[1], "Warning");
    assert_eq!(cells[3], "pod/web-0");
    assert_eq!(cells[5], "my-controller, my-controller-0");
    assert_eq!(cells[8], 2, "the series count");
    let t = table(&server, "/apis/events.k8s.io/v1/namespaces/default/events").await;
    assert_eq!(row(&t, &name)[3], "pod/web-0");
}

#[rstest]
#[tokio::test]
async fn one_store_two_apis(#[future(awt)] server: TestServer) {
    let core: Api<CoreEvent> = Api::namespaced(server.client.clone(), "default");
    let events: Api<Event> = Api::namespaced(server.client.clone(), "default");
    let rv = events
        .list(&ListParams::default())
        .await
        .expect("list")
        .metadata
        .resource_version
        .unwrap_or_default();
    let mut watch = events
        .watch(&WatchParams::default().disable_bookmarks(), &rv)
        .await
        .expect("watch")
        .boxed();
    core.create(
        &PostParams::default(),
        &core_event("pulled", pod_ref("web-0"), "Pulled"),
    )
    .await
    .expect("create");
    match watch.next().await {
        Some(Ok(WatchEvent::Added(ev))) => {
            assert_eq!(ev.note.as_deref(), Some("  pulled the image  "));
            assert_eq!(ev.deprecated_count, Some(3));
            assert_eq!(
                ev.deprecated_source.and_then(|s| s.component).as_deref(),
                Some("kubelet")
            );
        }
        other => panic!("expected ADDED, got {other:?}"),
    }
    let raw = server
        .get("/apis/events.k8s.io/v1/namespaces/default/events/pulled")
        .await
        .1;
    assert_eq!(raw["apiVersion"], "events.k8s.io/v1");
    assert_eq!(raw["regarding"]["name"], "web-0");
    assert!(raw.get("involvedObject").is_none());

    // Field selectors, each API in its own names.
    core.create(
        &PostParams::default(),
        &core_event("other", pod_ref("db-0"), "Killing"),
    )
    .await
    .expect("create");
    let by_name = core
        .list(&ListParams::default().fields("involvedObject.name=db-0,source=kubelet"))
        .await
        .expect("list");
    assert_eq!(by_name.items.len(), 1);
    assert_eq!(by_name.items[0].reason.as_deref(), Some("Killing"));
    let by_regarding = events
        .list(&ListParams::default().fields("regarding.name=web-0"))
        .await
        .expect("list");
    assert_eq!(by_regarding.items.len(), 1);
    assert_eq!(by_regarding.items[0].reason.as_deref(), Some("Pulled"));
    let (status, body) = server
        .get("/apis/events.k8s.io/v1/namespaces/default/events?fieldSelector=involvedObject.name%3Dx")
        .await;
    assert_eq!(
        (status, body["message"].clone()),
        (400, json!("field label not supported: involvedObject.name"))
    );

    let t = table(&server, "/api/v1/namespaces/default/events").await;
    assert_eq!(
        columns(&t),
        [
            "Last Seen",
            "Type",
            "Reason",
            "Object",
            "Subobject",
            "Source",
            "Message",
            "First Seen",
            "Count",
            "Name"
        ]
    );
    let cells = row(&t, "pulled");
    assert_eq!(cells[2], "Pulled");
    assert_eq!(cells[5], "kubelet, node-1");
    assert_eq!(cells[6], "pulled the image");
    assert_eq!(cells[0], "<unknown>", "no timestamps at all");
}

#[rstest]
#[tokio::test]
async fn validation_of_both_apis(#[future(awt)] server: TestServer) {
    let core: Api<CoreEvent> = Api::namespaced(server.client.clone(), "default");
    let mut elsewhere = pod_ref("web-0");
    elsewhere.namespace = Some("kube-system".into());
    let err = api_error(
        core.create(
            &PostParams::default(),
            &core_event("mismatch", elsewhere, "Pulled"),
        )
        .await
        .expect_err("namespaces differ"),
    );
    assert_eq!(err.code, 422);
    assert_eq!(
        err.message,
        "Event \"mismatch\" is invalid: involvedObject.namespace: Invalid value: \"kube-system\": does not match event.namespace"
    );

    // events.k8s.io/v1 wants an eventTime, reporting fields, a known type, and no legacy fields.
    let (status, body) = server
        .post(
            "/apis/events.k8s.io/v1/namespaces/default/events",
            &json!({"metadata": {"name": "strict"}, "regarding": {"kind": "Pod", "name": "p", "namespace": "default"},
                "reason": "R", "type": "Info", "deprecatedCount": 2,
                "eventTime": "2024-05-01T10:00:00.000000Z", "reportingController": "ctl",
                "reportingInstance": "ctl-1", "action": "Act"}),
        )
        .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(
        body["message"],
        "Event.events.k8s.io \"strict\" is invalid: [type: Invalid value: \"\": has invalid value: Info, count: Invalid value: \"\": needs to be unset]"
    );
    let (status, body) = server
        .post(
            "/apis/events.k8s.io/v1/namespaces/default/events",
            &json!({"metadata": {"name": "no-time"}, "regarding": {"kind": "Pod", "name": "p", "namespace": "default"},
                "reason": "R", "type": "Normal", "reportingController": "ctl", "action": "Act"}),
        )
        .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(
        body["message"],
        "Event.events.k8s.io \"no-time\" is invalid: eventTime: Required value"
    );

    // An events.k8s.io/v1 event's note may not change.
    let (status, created) = server
        .post(
            "/apis/events.k8s.io/v1/namespaces/default/events",
            &json!({"metadata": {"name": "ok"}, "regarding": {"kind": "Pod", "name": "p", "namespace": "default"},
                "reason": "R", "type": "Normal", "note": "first", "eventTime": "2024-05-01T10:00:00.000000Z",
                "reportingController": "example.com/ctl", "reportingInstance": "ctl-1", "action": "Act"}),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    let mut changed = created.clone();
    changed["note"] = json!("second");
    let (status, body) = server
        .send(
            server
                .http
                .put(server.url("/apis/events.k8s.io/v1/namespaces/default/events/ok"))
                .json(&changed),
        )
        .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(
        body["message"],
        "Event.events.k8s.io \"ok\" is invalid: message: Invalid value: \"second\": field is immutable"
    );
}
