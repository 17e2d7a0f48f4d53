//! The same test against a real cluster: server A is "the cluster" (a kubefake reached only
//! through its kubeconfig, as a real one would be), B is a handle started in the
//! existing-cluster mode on A's kubeconfig.

use std::path::Path;

use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use k8s_openapi::api::rbac::v1::ClusterRole;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, PostParams};
use kubefake::{NotAvailable, ServerHandle, SnapshotError};

use crate::harness::{crontab_crd, CronTab};

const CRD: &str = "crontabs.stable.example.com";

const OBJECTS: &str = "\
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {mode: test}
---
apiVersion: stable.example.com/v1
kind: CronTab
metadata: {name: nightly, namespace: default}
spec: {cronSpec: '0 0 * * *', image: busybox}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: kubefake-test-reader}
rules: []
";

/// Writes the CRD and the objects B installs; answers the two paths.
fn manifests(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let crds = dir.join("crds.json");
    std::fs::write(&crds, crontab_crd().to_string()).expect("CRD written");
    let objects = dir.join("objects.yaml");
    std::fs::write(&objects, OBJECTS).expect("objects written");
    (crds, objects)
}

async fn cluster() -> ServerHandle {
    let builder = kubefake::Server::builder().https();
    builder.start().await.expect("cluster A started")
}

fn established(crd: &CustomResourceDefinition) -> bool {
    let conditions = crd.status.as_ref().and_then(|s| s.conditions.as_ref());
    conditions
        .into_iter()
        .flatten()
        .any(|c| c.type_ == "Established" && c.status == "True")
}

// Multi-threaded: dropping B blocks its thread while A, on this runtime, answers the cleanup.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_test_runs_in_a_fresh_namespace_of_the_kubeconfigs_cluster() {
    let a = cluster().await;
    let dir = tempfile::tempdir().expect("temporary directory");
    let (crds, objects) = manifests(dir.path());
    let b = kubefake::Server::builder()
        .existing_cluster_kubeconfig(a.kubeconfig_path())
        .crds(crds)
        .objects(objects)
        .start()
        .await
        .expect("B on A's cluster");
    assert!(b.is_existing_cluster());
    assert_eq!(b.url(), a.url());
    assert_eq!(b.ca_pem(), a.ca_pem());
    assert_eq!(b.admin_token(), a.admin_token());
    let namespace = b.namespace().to_string();
    let suffix = namespace
        .strip_prefix("kubefake-test-")
        .expect("generated name");
    assert!(!suffix.is_empty(), "{namespace}");

    let on_a = a.client().expect("client of A");
    Api::<Namespace>::all(on_a.clone())
        .get(&namespace)
        .await
        .expect("the namespace is on A");
    let crd = Api::<CustomResourceDefinition>::all(on_a.clone())
        .get(CRD)
        .await
        .expect("the CRD is on A");
    assert!(established(&crd), "{:?}", crd.status);
    let settings = Api::<ConfigMap>::namespaced(on_a.clone(), &namespace)
        .get("settings")
        .await
        .expect("the ConfigMap in the test's namespace");
    assert_eq!(settings.data.unwrap_or_default()["mode"], "test");
    // A namespace in a manifest is the test's namespace too: isolation.
    Api::<CronTab>::namespaced(on_a.clone(), &namespace)
        .get("nightly")
        .await
        .expect("the CronTab in the test's namespace");
    let in_default = Api::<CronTab>::namespaced(on_a.clone(), "default");
    assert!(in_default.get_opt("nightly").await.expect("read").is_none());
    let roles = Api::<ClusterRole>::all(on_a.clone());
    roles
        .get("kubefake-test-reader")
        .await
        .expect("cluster-scoped object");

    // B's client and kubeconfig default to the test's namespace.
    let mut from_b = ConfigMap::default();
    from_b.metadata.name = Some("from-b".into());
    Api::<ConfigMap>::default_namespaced(b.client().expect("client of B"))
        .create(&PostParams::default(), &from_b)
        .await
        .expect("created through B");
    Api::<ConfigMap>::namespaced(on_a.clone(), &namespace)
        .get("from-b")
        .await
        .expect("B's default namespace is the test's");
    let file = kube::config::Kubeconfig::read_from(b.kubeconfig_path()).expect("B's kubeconfig");
    let options = kube::config::KubeConfigOptions::default();
    let config = kube::Config::from_custom_kubeconfig(file, &options)
        .await
        .expect("B's kubeconfig is usable");
    assert_eq!(config.default_namespace, namespace);
    assert!(b.kubeconfig_yaml().contains(&namespace));

    kubefake_only_features_are_not_available(&b).await;

    drop(b);
    let gone = Api::<Namespace>::all(on_a.clone())
        .get_opt(&namespace)
        .await
        .expect("read");
    let terminating = gone.is_some_and(|ns| ns.metadata.deletion_timestamp.is_some());
    assert!(
        terminating || gone_now(&on_a, &namespace).await,
        "the namespace is deleted"
    );
    let crds = Api::<CustomResourceDefinition>::all(on_a.clone());
    assert!(
        crds.get_opt(CRD).await.expect("read").is_none(),
        "the CRD is removed"
    );
    let role = roles.get_opt("kubefake-test-reader").await.expect("read");
    assert!(role.is_none(), "the cluster-scoped object is removed");
}

async fn gone_now(client: &kube::Client, namespace: &str) -> bool {
    let api = Api::<Namespace>::all(client.clone());
    api.get_opt(namespace).await.expect("read").is_none()
}

async fn kubefake_only_features_are_not_available(b: &ServerHandle) {
    let not_available = "is not available on a real cluster";
    let faults = b.faults().err().expect("no faults on a real cluster");
    assert_eq!(faults, NotAvailable("fault injection"));
    assert!(faults.to_string().contains(not_available), "{faults}");
    let requests = b
        .requests()
        .err()
        .expect("no request log on a real cluster");
    assert!(requests.to_string().contains(not_available), "{requests}");
    assert!(b.state().is_err());
    for result in [b.snapshot().map(|_| ()), b.reset().await.map(|_| ())] {
        let error = result.expect_err("no snapshots on a real cluster");
        assert!(matches!(error, SnapshotError::NotAvailable(_)), "{error}");
        assert!(error.to_string().contains(not_available), "{error}");
    }
    assert!(b.dump().contains(not_available), "{}", b.dump());
    let _guard = b.dump_on_panic(); // prints nothing, panics not
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crd_that_was_there_is_used_and_left_in_place() {
    let a = cluster().await;
    let on_a = a.client().expect("client of A");
    let crds = Api::<CustomResourceDefinition>::all(on_a.clone());
    let crd = serde_json::from_value(crontab_crd()).expect("a CRD");
    crds.create(&PostParams::default(), &crd)
        .await
        .expect("CRD created on A");
    let dir = tempfile::tempdir().expect("temporary directory");
    let (crd_file, _) = manifests(dir.path());
    let b = kubefake::Server::builder()
        .existing_cluster_kubeconfig(a.kubeconfig_path())
        .crds(crd_file)
        .start()
        .await
        .expect("B on A's cluster");
    let namespace = b.namespace().to_string();
    b.shutdown().await;
    assert!(
        crds.get_opt(CRD).await.expect("read").is_some(),
        "not B's to remove"
    );
    let gone = Api::<Namespace>::all(on_a.clone())
        .get_opt(&namespace)
        .await
        .expect("read");
    assert!(gone.is_none_or(|ns| ns.metadata.deletion_timestamp.is_some()));
}

#[tokio::test]
async fn a_kubeconfig_without_a_cluster_is_a_clear_error() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let path = dir.path().join("missing.kubeconfig");
    let result = kubefake::Server::builder()
        .existing_cluster_kubeconfig(&path)
        .start()
        .await;
    let error = result.err().expect("no kubeconfig, no cluster").to_string();
    assert!(error.starts_with("existing cluster: kubeconfig"), "{error}");
}

#[tokio::test]
async fn existing_cluster_false_starts_a_fake_whatever_the_environment() {
    let server = kubefake::Server::builder()
        .existing_cluster(false)
        .start()
        .await
        .expect("a fake");
    assert!(!server.is_existing_cluster());
    assert_eq!(server.namespace(), "default");
    assert!(server.faults().is_ok());
}
