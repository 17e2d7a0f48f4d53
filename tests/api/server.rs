//! Starting, configuring and stopping servers.

use std::time::Duration;

use futures_util::StreamExt;
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, ListParams, WatchParams};
use rstest::rstest;

use crate::harness::{server, TestServer};

#[rstest]
#[tokio::test]
async fn starts_with_the_initial_namespaces(#[future(awt)] server: TestServer) {
    let namespaces: Api<Namespace> = Api::all(server.client.clone());
    let names: Vec<String> = namespaces
        .list(&ListParams::default())
        .await
        .expect("list namespaces")
        .items
        .into_iter()
        .map(|n| n.metadata.name.unwrap_or_default())
        .collect();
    assert_eq!(
        names,
        ["default", "kube-node-lease", "kube-public", "kube-system"]
    );
    let default = namespaces.get("default").await.expect("default");
    assert_eq!(
        default.status.and_then(|s| s.phase).as_deref(),
        Some("Active")
    );
    assert_eq!(
        default.spec.and_then(|s| s.finalizers),
        Some(vec!["kubernetes".to_string()])
    );
    assert_eq!(
        default
            .metadata
            .labels
            .unwrap_or_default()
            .get("kubernetes.io/metadata.name")
            .map(String::as_str),
        Some("default")
    );
}

#[rstest]
#[tokio::test]
async fn version_and_health(#[future(awt)] server: TestServer) {
    let info = server.client.apiserver_version().await.expect("version");
    assert_eq!(info.major, "1");
    assert!(info.git_version.starts_with("v1."));
    for path in ["/healthz", "/livez", "/readyz", "/readyz?verbose=1"] {
        let resp = server
            .http
            .get(server.url(path))
            .send()
            .await
            .expect("health");
        assert_eq!(resp.status(), 200, "{path}");
        assert_eq!(resp.text().await.expect("body"), "ok");
    }
}

#[rstest]
#[tokio::test]
async fn kubeconfig_points_at_the_server(#[future(awt)] server: TestServer) {
    let text = std::fs::read_to_string(server.handle.kubeconfig_path()).expect("kubeconfig file");
    assert_eq!(text, server.handle.kubeconfig_yaml());
    let kubeconfig = kube::config::Kubeconfig::from_yaml(&text).expect("parses as a kubeconfig");
    let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
        .await
        .expect("usable kubeconfig");
    assert_eq!(
        config.cluster_url.to_string().trim_end_matches('/'),
        server.handle.url()
    );
    assert_eq!(config.default_namespace, "default");
    let client = kube::Client::try_from(config).expect("client");
    let namespaces: Api<Namespace> = Api::all(client);
    namespaces
        .get("kube-system")
        .await
        .expect("reachable through the kubeconfig");
}

#[tokio::test]
async fn builder_preloads_crds_and_objects() {
    let dir = env!("CARGO_MANIFEST_DIR");
    let handle = kubefake::Server::builder()
        .crds(format!("{dir}/fixtures/crds"))
        .objects(format!("{dir}/fixtures/objects/my-crontab.yaml"))
        .start()
        .await
        .expect("starts with fixtures");
    let client = handle.client().expect("client");
    let crontabs: Api<crate::harness::CronTab> = Api::namespaced(client, "default");
    let ct = crontabs
        .get("my-new-cron-object")
        .await
        .expect("preloaded object");
    assert_eq!(ct.spec.image, "my-awesome-cron-image");
    handle.shutdown().await;
}

#[tokio::test]
async fn builder_rejects_a_bad_manifest() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("bad.yaml");
    std::fs::write(
        &file,
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: Not_Valid\n",
    )
    .expect("write");
    let err = kubefake::Server::builder()
        .objects(&file)
        .start()
        .await
        .err()
        .expect("refused");
    assert!(err.to_string().contains("Not_Valid"), "{err}");
}

#[tokio::test]
async fn explicit_port_and_kubeconfig_path() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("nested/kubeconfig");
    let probe = std::net::TcpListener::bind("127.0.0.1:0").expect("probe");
    let port = probe.local_addr().expect("addr").port();
    drop(probe);
    let handle = kubefake::Server::builder()
        .port(port)
        .kubeconfig_path(&path)
        .start()
        .await
        .expect("starts");
    assert_eq!(handle.addr().port(), port);
    assert!(std::fs::read_to_string(&path)
        .expect("written")
        .contains(&format!(":{port}")));
    handle.shutdown().await;
    assert!(path.exists(), "a kubeconfig path the user chose is kept");
}

/// Graceful shutdown must not wait for open watches: it ends them.
#[rstest]
#[tokio::test]
async fn shutdown_ends_open_watches(#[future(awt)] server: TestServer) {
    let namespaces: Api<Namespace> = Api::all(server.client.clone());
    let mut stream = namespaces
        .watch(&WatchParams::default(), "0")
        .await
        .expect("watch")
        .boxed();
    // The initial state arrives first.
    let first = stream.next().await.expect("an event").expect("ok event");
    assert!(matches!(first, kube::api::WatchEvent::Added(_)));
    let TestServer { handle, .. } = server;
    tokio::time::timeout(Duration::from_secs(10), handle.shutdown())
        .await
        .expect("shutdown does not hang on the open watch");
    // The rest of the stream ends rather than hanging.
    let rest = tokio::time::timeout(Duration::from_secs(10), async {
        while let Some(_event) = stream.next().await {}
    })
    .await;
    assert!(rest.is_ok(), "watch stream ended");
}

#[tokio::test]
async fn dropping_the_handle_stops_the_server() {
    let handle = kubefake::Server::start().await.expect("starts");
    let url = format!("{}/readyz", handle.url());
    let http = reqwest::Client::new();
    assert_eq!(http.get(&url).send().await.expect("up").status(), 200);
    drop(handle);
    let mut stopped = false;
    for _ in 0..200 {
        if reqwest::Client::new().get(&url).send().await.is_err() {
            stopped = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(stopped, "the listener closes after drop");
}
