//! List semantics: resourceVersion and resourceVersionMatch, pages and continue tokens.

use std::collections::BTreeSet;

use kube::api::{ListParams, PostParams, VersionMatch};
use rstest::rstest;
use serde_json::{json, Value};

use crate::harness::{api_error, server, server_with, CronTab, CronTabSpec, TestServer};

const CRONTABS: &str = "/apis/stable.example.com/v1/namespaces/default/crontabs";

fn names(list: &Value) -> Vec<String> {
    list["items"]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|i| i["metadata"]["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

async fn seed(server: &TestServer, n: usize) {
    server.install_crontab_crd().await;
    for i in 0..n {
        server
            .create_crontab("default", &format!("ct-{i:04}"))
            .await;
    }
}

#[rstest]
#[tokio::test]
async fn pages_with_limit_and_continue(#[future(awt)] server: TestServer) {
    seed(&server, 5).await;
    let (status, page1) = server.get(&format!("{CRONTABS}?limit=2")).await;
    assert_eq!(status, 200);
    assert_eq!(names(&page1), ["ct-0000", "ct-0001"]);
    assert_eq!(page1["metadata"]["remainingItemCount"], 3);
    let token = page1["metadata"]["continue"]
        .as_str()
        .expect("continue")
        .to_string();
    let rv = page1["metadata"]["resourceVersion"].clone();

    // Writes between pages do not show: every page reads the first page's snapshot.
    server.create_crontab("default", "ct-0002a").await;
    let (_, page2) = server
        .get(&format!("{CRONTABS}?limit=2&continue={token}"))
        .await;
    assert_eq!(names(&page2), ["ct-0002", "ct-0003"]);
    assert_eq!(page2["metadata"]["resourceVersion"], rv);
    let token = page2["metadata"]["continue"]
        .as_str()
        .expect("continue")
        .to_string();
    let (_, page3) = server
        .get(&format!("{CRONTABS}?limit=2&continue={token}"))
        .await;
    assert_eq!(names(&page3), ["ct-0004"]);
    // The last page of an UnstructuredList carries an empty continue.
    assert_eq!(page3["metadata"]["continue"], "");
    assert!(page3["metadata"].get("remainingItemCount").is_none());

    // With a selector no count is known.
    let (_, selected) = server
        .get(&format!("{CRONTABS}?limit=1&labelSelector=!missing"))
        .await;
    assert!(selected["metadata"]["continue"].is_string());
    assert!(selected["metadata"].get("remainingItemCount").is_none());

    // resourceVersion=0 is served from the cache, which ignores limit.
    let (_, any) = server
        .get(&format!("{CRONTABS}?limit=2&resourceVersion=0"))
        .await;
    assert_eq!(names(&any).len(), 6);

    // Bad or mismatched tokens.
    let (status, body) = server.get(&format!("{CRONTABS}?continue=garbage")).await;
    assert_eq!(status, 400, "{body}");
    let (status, body) = server
        .get(&format!("{CRONTABS}?continue={token}&resourceVersion=3"))
        .await;
    assert_eq!(status, 400);
    assert_eq!(
        body["message"],
        "specifying resource version is not allowed when using continue"
    );
}

#[tokio::test]
async fn expired_continue_tokens_are_410() {
    let server = server_with(kubefake::Server::builder().history_size(3)).await;
    seed(&server, 3).await;
    let (_, page1) = server.get(&format!("{CRONTABS}?limit=1")).await;
    let token = page1["metadata"]["continue"]
        .as_str()
        .expect("continue")
        .to_string();
    for i in 0..5 {
        server
            .create_crontab("default", &format!("later-{i}"))
            .await;
    }
    let (status, body) = server
        .get(&format!("{CRONTABS}?limit=1&continue={token}"))
        .await;
    assert_eq!(status, 410);
    assert_eq!(body["reason"], "Expired");
    assert!(body["message"]
        .as_str()
        .expect("message")
        .starts_with("The provided continue parameter is too old"));

    // The 410 offers the same token with resourceVersion -1, as the apiserver's does: it
    // continues at the latest state, objects created since included; its next token pins that
    // state.
    use base64::Engine;
    let engine = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let offered = body["metadata"]["continue"]
        .as_str()
        .expect("a token offered");
    let wire = |t: &str| -> Value {
        serde_json::from_slice(&engine.decode(t).expect("base64")).expect("json")
    };
    let mut want = wire(&token);
    want["rv"] = json!(-1);
    assert_eq!(wire(offered), want);
    let latest = offered.to_string();
    let (status, page) = server
        .get(&format!("{CRONTABS}?limit=3&continue={latest}"))
        .await;
    assert_eq!(status, 200, "{page}");
    assert_eq!(names(&page), ["ct-0001", "ct-0002", "later-0"]);
    let next = page["metadata"]["continue"].as_str().expect("continue");
    let (_, rest) = server
        .get(&format!("{CRONTABS}?limit=10&continue={next}"))
        .await;
    assert_eq!(names(&rest), ["later-1", "later-2", "later-3", "later-4"]);
}

#[rstest]
#[tokio::test]
async fn resource_version_semantics(#[future(awt)] server: TestServer) {
    seed(&server, 2).await;
    let api = server.crontabs("default");
    let (_, at_two) = server.get(CRONTABS).await;
    let rv: u64 = at_two["metadata"]["resourceVersion"]
        .as_str()
        .expect("rv")
        .parse()
        .expect("num");
    server.create_crontab("default", "third").await;

    // Exact: the state at that resourceVersion, not now.
    let exact = api
        .list(
            &ListParams::default()
                .at(&rv.to_string())
                .matching(VersionMatch::Exact),
        )
        .await
        .expect("exact list");
    assert_eq!(exact.items.len(), 2);
    assert_eq!(exact.metadata.resource_version, Some(rv.to_string()));

    // NotOlderThan: at least as new, so now.
    let newer = api
        .list(
            &ListParams::default()
                .at(&rv.to_string())
                .matching(VersionMatch::NotOlderThan),
        )
        .await
        .expect("not older than");
    assert_eq!(newer.items.len(), 3);

    // Any (0) and most recent ("").
    assert_eq!(
        api.list(&ListParams::default().match_any())
            .await
            .expect("any")
            .items
            .len(),
        3
    );
    assert_eq!(
        api.list(&ListParams::default())
            .await
            .expect("recent")
            .items
            .len(),
        3
    );

    // Invalid combinations are the apiserver's 422.
    let (status, body) = server
        .get(&format!("{CRONTABS}?resourceVersionMatch=Exact"))
        .await;
    assert_eq!(status, 422);
    assert_eq!(
        body["message"],
        "ListOptions.meta.k8s.io \"\" is invalid: resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided"
    );
    let (status, _) = server
        .get(&format!(
            "{CRONTABS}?resourceVersion=0&resourceVersionMatch=Exact"
        ))
        .await;
    assert_eq!(status, 422);
}

#[tokio::test]
async fn exact_reads_older_than_the_history_are_410() {
    let server = server_with(kubefake::Server::builder().history_size(2)).await;
    seed(&server, 4).await;
    let err = server
        .crontabs("default")
        .list(&ListParams::default().at("1").matching(VersionMatch::Exact))
        .await
        .expect_err("too old");
    let status = api_error(err);
    assert_eq!(status.code, 410);
    assert_eq!(status.reason, "Expired");
    assert_eq!(
        status.message,
        "The resourceVersion for the provided list is too old."
    );
}

#[rstest]
#[tokio::test]
async fn a_future_resource_version_waits_then_times_out(#[future(awt)] server: TestServer) {
    seed(&server, 1).await;
    let future = server.rv() + 1;
    // A write that arrives while the list waits satisfies it.
    let path = format!("{CRONTABS}?resourceVersion={future}&resourceVersionMatch=NotOlderThan");
    let waiting = server.get(&path);
    let writer = async {
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        server.create_crontab("default", "arrives").await;
    };
    let ((status, list), ()) = tokio::join!(waiting, writer);
    assert_eq!(status, 200);
    assert!(names(&list).contains(&"arrives".to_string()));

    let far = server.rv() + 1000;
    let (status, body) = server
        .get(&format!("{CRONTABS}?resourceVersion={far}"))
        .await;
    assert_eq!(status, 504);
    assert_eq!(body["reason"], "Timeout");
    assert_eq!(
        body["details"]["causes"][0]["reason"],
        "ResourceVersionTooLarge"
    );
}

/// Paging through 1,000 objects while another task writes: every object that existed when the
/// list began is returned exactly once, and nothing written later shows up.
#[rstest]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn paging_is_consistent_under_concurrent_writes(#[future(awt)] server: TestServer) {
    server.install_crontab_crd().await;
    let api = server.crontabs("default");
    let batch: Vec<String> = (0..1000).map(|i| format!("obj-{i:04}")).collect();
    for chunk in batch.chunks(100) {
        let creates = chunk.iter().map(|name| {
            let api = api.clone();
            let ct = CronTab::new(
                name,
                CronTabSpec {
                    cron_spec: "* * * * *".into(),
                    image: "i".into(),
                    replicas: None,
                },
            );
            async move {
                api.create(&PostParams::default(), &ct)
                    .await
                    .expect("create")
            }
        });
        futures_util::future::join_all(creates).await;
    }
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let writer = {
        let api = api.clone();
        let stop = stop.clone();
        tokio::spawn(async move {
            let mut i = 0;
            // At least one write, however the tasks are scheduled.
            loop {
                let ct = CronTab::new(
                    &format!("new-{i:05}"),
                    CronTabSpec {
                        cron_spec: "x".into(),
                        image: "i".into(),
                        replicas: None,
                    },
                );
                api.create(&PostParams::default(), &ct)
                    .await
                    .expect("concurrent create");
                // Deleting seeded objects must not remove them from pages of the old snapshot.
                let _ = api
                    .delete(&format!("obj-{:04}", 999 - i), &Default::default())
                    .await;
                i += 1;
                if stop.load(std::sync::atomic::Ordering::Relaxed) {
                    break;
                }
                tokio::task::yield_now().await;
            }
        })
    };
    let mut seen = Vec::new();
    let mut params = ListParams::default().limit(37);
    let mut pages = 0;
    let mut first_rv = None;
    loop {
        let page = api.list(&params).await.expect("page");
        pages += 1;
        first_rv.get_or_insert(page.metadata.resource_version.clone().unwrap_or_default());
        seen.extend(page.items.into_iter().filter_map(|c| c.metadata.name));
        match page.metadata.continue_ {
            Some(token) if !token.is_empty() => params = params.continue_token(&token),
            _ => break,
        }
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    writer.await.expect("writer");
    assert!(pages >= 27);
    let unique: BTreeSet<_> = seen.iter().cloned().collect();
    assert_eq!(unique.len(), seen.len(), "no object twice");
    // Exactly the objects of the snapshot the first page was read at, in order.
    let rv = first_rv.unwrap_or_default();
    let snapshot: Vec<String> = api
        .list(&ListParams::default().at(&rv).matching(VersionMatch::Exact))
        .await
        .expect("the first page's snapshot")
        .items
        .into_iter()
        .filter_map(|c| c.metadata.name)
        .collect();
    assert!(
        snapshot.len() >= 990,
        "the snapshot holds the seeded objects"
    );
    assert!(
        seen == snapshot,
        "pages differ from the snapshot ({} vs {} items)",
        seen.len(),
        snapshot.len()
    );
    assert!(
        server
            .crontabs("default")
            .list(&ListParams::default())
            .await
            .expect("now")
            .items
            .iter()
            .any(|c| c.metadata.name.as_deref() == Some("new-00000")),
        "the writer really wrote meanwhile"
    );
}

#[rstest]
#[tokio::test]
async fn list_order_is_namespace_then_name(#[future(awt)] server: TestServer) {
    server.install_crontab_crd().await;
    for ns in ["zeta", "alpha"] {
        server
            .post("/api/v1/namespaces", &json!({"metadata": {"name": ns}}))
            .await;
    }
    for (ns, name) in [
        ("zeta", "a"),
        ("alpha", "b"),
        ("default", "c"),
        ("alpha", "a"),
    ] {
        server.create_crontab(ns, name).await;
    }
    let (_, all) = server.get("/apis/stable.example.com/v1/crontabs").await;
    let keys: Vec<(String, String)> = all["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| {
            (
                i["metadata"]["namespace"].as_str().unwrap_or("").into(),
                i["metadata"]["name"].as_str().unwrap_or("").into(),
            )
        })
        .collect();
    assert_eq!(
        keys,
        [
            ("alpha".into(), "a".into()),
            ("alpha".into(), "b".into()),
            ("default".into(), "c".into()),
            ("zeta".into(), "a".into())
        ]
    );
}

/// A list larger than 256 KiB is streamed (chunked, built as the client reads) instead of
/// assembled in one buffer per request; clients see the same document.
#[rstest]
#[tokio::test]
async fn large_lists_are_streamed(#[future(awt)] server: TestServer) {
    let (status, _) = server
        .post("/api/v1/namespaces", &json!({"metadata": {"name": "big"}}))
        .await;
    assert_eq!(status, 201);
    let filler = "x".repeat(2_000);
    for i in 0..200 {
        let cm = json!({"metadata": {"name": format!("cm-{i:03}")}, "data": {"v": filler}});
        let (status, body) = server.post("/api/v1/namespaces/big/configmaps", &cm).await;
        assert_eq!(status, 201, "{body}");
    }
    let resp = server
        .http
        .get(server.url("/api/v1/namespaces/big/configmaps"))
        .send()
        .await
        .expect("list");
    assert_eq!(resp.status(), 200);
    assert!(resp.headers().get("content-length").is_none(), "streamed");
    assert_eq!(resp.headers()["content-type"], "application/json");
    let list: Value = resp.json().await.expect("one JSON document");
    assert_eq!(list["kind"], "ConfigMapList");
    let items = list["items"].as_array().expect("items");
    // The namespace's kube-root-ca.crt and the 200.
    assert_eq!(items.len(), 201);
    assert!(items.iter().all(|i| i["kind"] == "ConfigMap"));
    // kube-rs reads it as any list.
    let api: kube::Api<k8s_openapi::api::core::v1::ConfigMap> =
        kube::Api::namespaced(server.client.clone(), "big");
    let typed = api
        .list(&ListParams::default())
        .await
        .expect("kube-rs list");
    assert_eq!(typed.items.len(), 201);
    // A small list is one buffer, with its length.
    let resp = server
        .http
        .get(server.url("/api/v1/namespaces/big/configmaps?limit=2"))
        .send()
        .await
        .expect("list");
    assert!(resp.headers().get("content-length").is_some());
}
