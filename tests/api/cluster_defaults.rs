//! What kube-controller-manager does within a second of every change, done before the
//! response: each active namespace's `default` ServiceAccount and `kube-root-ca.crt`
//! ConfigMap (recreated, restored, never in a terminating namespace), the ServiceAccount
//! admission plugin refusing pods whose account does not exist, and the Endpoints and
//! EndpointSlices of Services with a selector following their pods.

use rstest::rstest;
use serde_json::{json, Value};

use crate::harness::{server, server_with, TestServer};

const DESCRIPTION: &str = "Contains a CA bundle that can be used to verify the kube-apiserver \
    when using internal endpoints such as the internal service IP or kubernetes.default.svc. \
    No other usage is guaranteed across distributions of Kubernetes clusters.";

fn sa_path(ns: &str, name: &str) -> String {
    format!("/api/v1/namespaces/{ns}/serviceaccounts/{name}")
}

fn root_ca_path(ns: &str) -> String {
    format!("/api/v1/namespaces/{ns}/configmaps/kube-root-ca.crt")
}

async fn create_namespace(s: &TestServer, name: &str) {
    let (code, body) = s
        .post("/api/v1/namespaces", &json!({"metadata": {"name": name}}))
        .await;
    assert_eq!(code, 201, "{body}");
}

async fn delete(s: &TestServer, path: &str) -> (u16, Value) {
    s.send(s.http.delete(s.url(path))).await
}

async fn merge_patch(s: &TestServer, path: &str, patch: Value) -> (u16, Value) {
    let req = s
        .http
        .patch(s.url(path))
        .header("Content-Type", "application/merge-patch+json")
        .body(patch.to_string());
    s.send(req).await
}

/// The namespace's `default` account and `kube-root-ca.crt`, which must both exist.
async fn bootstrapped(s: &TestServer, ns: &str) -> (Value, Value) {
    let (code, sa) = s.get(&sa_path(ns, "default")).await;
    assert_eq!(code, 200, "{ns}: {sa}");
    let (code, cm) = s.get(&root_ca_path(ns)).await;
    assert_eq!(code, 200, "{ns}: {cm}");
    (sa, cm)
}

#[rstest]
#[tokio::test]
async fn every_namespace_gets_the_default_account_and_the_root_ca(
    #[future(awt)] server: TestServer,
) {
    create_namespace(&server, "team-a").await;
    let mut bundles = Vec::new();
    for ns in [
        "default",
        "kube-system",
        "kube-public",
        "kube-node-lease",
        "team-a",
    ] {
        let (sa, cm) = bootstrapped(&server, ns).await;
        assert_eq!(sa["metadata"]["namespace"], ns);
        assert!(sa.get("secrets").is_none(), "{sa}");
        assert_eq!(
            cm["metadata"]["annotations"]["kubernetes.io/description"],
            DESCRIPTION
        );
        let data = cm["data"].as_object().cloned().unwrap_or_default();
        assert_eq!(data.len(), 1, "{cm}");
        bundles.push(cm["data"]["ca.crt"].as_str().unwrap_or("").to_string());
    }
    // Plain HTTP: the fixed CA made for the purpose, the same everywhere.
    assert!(
        bundles[0].starts_with("-----BEGIN CERTIFICATE-----"),
        "{}",
        bundles[0]
    );
    assert!(bundles.iter().all(|b| *b == bundles[0]));
    assert_eq!(server.handle.ca_pem(), None);
}

#[tokio::test]
async fn the_root_ca_is_the_serving_ca_over_https() {
    let s = server_with(kubefake::Server::builder().https()).await;
    let ca = s.handle.ca_pem().expect("a CA").to_string();
    create_namespace(&s, "team-b").await;
    for ns in ["default", "team-b"] {
        let (_, cm) = bootstrapped(&s, ns).await;
        assert_eq!(cm["data"]["ca.crt"], ca.as_str(), "{ns}");
    }
}

#[rstest]
#[tokio::test]
async fn deleted_or_changed_bootstrap_objects_come_back(#[future(awt)] server: TestServer) {
    let s = &server;
    let (sa, cm) = bootstrapped(s, "default").await;
    let (code, _) = delete(s, &sa_path("default", "default")).await;
    assert_eq!(code, 200);
    let (code, _) = delete(s, &root_ca_path("default")).await;
    assert_eq!(code, 200);
    let (again, cm_again) = bootstrapped(s, "default").await;
    assert_ne!(
        again["metadata"]["uid"], sa["metadata"]["uid"],
        "a new account"
    );
    assert_ne!(cm_again["metadata"]["uid"], cm["metadata"]["uid"]);
    assert_eq!(cm_again["data"], cm["data"]);

    // Changed data and description are restored; other keys of metadata are kept.
    let patch = json!({"data": {"ca.crt": "forged", "extra": "x"},
        "metadata": {"labels": {"mine": "kept"},
            "annotations": {"kubernetes.io/description": null, "note": "kept"}}});
    let (code, body) = merge_patch(s, &root_ca_path("default"), patch).await;
    assert_eq!(code, 200, "{body}");
    let (_, restored) = bootstrapped(s, "default").await;
    assert_eq!(restored["data"], cm["data"]);
    let annotations = &restored["metadata"]["annotations"];
    assert_eq!(annotations["kubernetes.io/description"], DESCRIPTION);
    assert_eq!(annotations["note"], "kept");
    assert_eq!(restored["metadata"]["labels"]["mine"], "kept");

    // An account of another name is not the controller's business.
    let (code, _) = s
        .post(
            "/api/v1/namespaces/default/serviceaccounts",
            &json!({"metadata": {"name": "bot"}}),
        )
        .await;
    assert_eq!(code, 201);
    let (code, _) = delete(s, &sa_path("default", "bot")).await;
    assert_eq!(code, 200);
    let (code, _) = s.get(&sa_path("default", "bot")).await;
    assert_eq!(code, 404);
}

#[rstest]
#[tokio::test]
async fn nothing_is_created_in_a_terminating_namespace(#[future(awt)] server: TestServer) {
    let s = &server;
    create_namespace(s, "doomed").await;
    // A finalizer keeps the namespace terminating after its content went.
    let (code, body) = s
        .post(
            "/api/v1/namespaces/doomed/configmaps",
            &json!({"metadata": {"name": "held", "finalizers": ["example.com/hold"]}}),
        )
        .await;
    assert_eq!(code, 201, "{body}");
    let (code, _) = delete(s, "/api/v1/namespaces/doomed").await;
    assert_eq!(code, 200);
    let (_, ns) = s.get("/api/v1/namespaces/doomed").await;
    assert_eq!(ns["status"]["phase"], "Terminating");
    let (code, _) = s.get(&sa_path("doomed", "default")).await;
    assert_eq!(code, 404, "not recreated while terminating");
    let (code, _) = s.get(&root_ca_path("doomed")).await;
    assert_eq!(code, 404);
    let patch = json!({"metadata": {"finalizers": null}});
    let (code, _) = merge_patch(s, "/api/v1/namespaces/doomed/configmaps/held", patch).await;
    assert_eq!(code, 200);
    let (code, _) = s.get("/api/v1/namespaces/doomed").await;
    assert_eq!(code, 404, "the namespace went");
}

fn pod_body(name: &str, service_account: Option<&str>) -> Value {
    let mut pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
    if let Some(sa) = service_account {
        pod["spec"]["serviceAccountName"] = json!(sa);
    }
    pod
}

#[rstest]
#[tokio::test]
async fn pods_need_an_existing_service_account(#[future(awt)] server: TestServer) {
    let s = &server;
    let rv = s.rv();
    let (code, status) = s
        .post(
            "/api/v1/namespaces/default/pods",
            &pod_body("x", Some("missing")),
        )
        .await;
    assert_eq!(code, 403, "{status}");
    assert_eq!(
        status,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "pods \"x\" is forbidden: error looking up service account default/missing: serviceaccount \"missing\" not found",
            "reason": "Forbidden", "details": {"name": "x", "kind": "pods"}, "code": 403})
    );
    assert_eq!(s.rv(), rv, "nothing written");

    let mut generated = pod_body("", Some("missing"));
    generated["metadata"] = json!({"generateName": "web-"});
    let (code, status) = s.post("/api/v1/namespaces/default/pods", &generated).await;
    assert_eq!(code, 403);
    assert_eq!(
        status["message"],
        "pods \"web-\" is forbidden: error looking up service account default/missing: serviceaccount \"missing\" not found"
    );

    // `default` exists in every namespace, a new one included.
    let (code, body) = s
        .post("/api/v1/namespaces/default/pods", &pod_body("a", None))
        .await;
    assert_eq!(code, 201, "{body}");
    create_namespace(s, "fresh").await;
    let (code, body) = s
        .post("/api/v1/namespaces/fresh/pods", &pod_body("b", None))
        .await;
    assert_eq!(code, 201, "{body}");

    // Without its `default` account, a namespace refuses pods that name none.
    let (code, _) = delete(s, &sa_path("fresh", "default")).await;
    assert_eq!(code, 200);
    let (code, _) = s.get(&sa_path("fresh", "default")).await;
    assert_eq!(code, 200, "recreated at once");

    // A missing namespace is NamespaceLifecycle's refusal, as in a cluster.
    let (code, status) = s
        .post(
            "/api/v1/namespaces/nope/pods",
            &pod_body("c", Some("missing")),
        )
        .await;
    assert_eq!(code, 404, "{status}");
    assert_eq!(status["message"], "namespaces \"nope\" not found");

    // Mirror pods are left alone.
    let mut mirror = pod_body("static", Some("missing"));
    mirror["metadata"]["annotations"] = json!({"kubernetes.io/config.mirror": "x"});
    let (code, body) = s.post("/api/v1/namespaces/default/pods", &mirror).await;
    assert_eq!(code, 201, "{body}");
}

// ---------------------------------------------------------------------------------------------
// Endpoints and EndpointSlices
// ---------------------------------------------------------------------------------------------

const NS: &str = "shop";

fn web_service(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": name, "labels": {"team": "shop"}},
        "spec": {"selector": {"app": "web"}, "ports": [
            {"name": "http", "port": 80, "targetPort": "http"},
            {"name": "metrics", "port": 9090, "targetPort": 9100}]}})
}

fn web_pod(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "labels": {"app": "web"}},
        "spec": {"nodeName": "node-1", "containers": [{"name": "c", "image": "nginx",
            "ports": [{"name": "http", "containerPort": 8080}]}]}})
}

async fn create_in(s: &TestServer, resource: &str, body: Value) -> Value {
    let path = format!("/api/v1/namespaces/{NS}/{resource}");
    let (code, out) = s.post(&path, &body).await;
    assert_eq!(code, 201, "{out}");
    out
}

/// When test pods became ready: after the Services were created, whenever the test runs.
const READY_SINCE: &str = "2099-01-01T00:00:00Z";

/// Writes a pod's IP and readiness through `pods/status`, as a kubelet would.
async fn set_status(s: &TestServer, pod: &str, ip: &str, ready: bool) {
    let (ready, since) = if ready {
        ("True", READY_SINCE)
    } else {
        ("False", "2025-01-01T00:00:00Z")
    };
    let patch = json!({"status": {"phase": "Running", "podIP": ip, "podIPs": [{"ip": ip}],
        "conditions": [{"type": "Ready", "status": ready, "lastTransitionTime": since}]}});
    let path = format!("/api/v1/namespaces/{NS}/pods/{pod}/status");
    let (code, body) = merge_patch(s, &path, patch).await;
    assert_eq!(code, 200, "{body}");
}

async fn endpoints(s: &TestServer, name: &str) -> Value {
    let (code, ep) = s
        .get(&format!("/api/v1/namespaces/{NS}/endpoints/{name}"))
        .await;
    assert_eq!(code, 200, "{ep}");
    ep
}

/// The Service's slices.
async fn slices(s: &TestServer, service: &str) -> Vec<Value> {
    let path = format!(
        "/apis/discovery.k8s.io/v1/namespaces/{NS}/endpointslices?labelSelector=kubernetes.io/service-name={service}"
    );
    let (code, list) = s.get(&path).await;
    assert_eq!(code, 200, "{list}");
    list["items"].as_array().cloned().unwrap_or_default()
}

/// The only slice of the Service.
async fn slice(s: &TestServer, service: &str) -> Value {
    let mut all = slices(s, service).await;
    assert_eq!(all.len(), 1, "{all:?}");
    all.remove(0)
}

fn ips(subset_list: &Value, key: &str) -> Vec<String> {
    subset_list["subsets"]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|ss| ss[key].as_array().into_iter().flatten())
        .filter_map(|a| a["ip"].as_str().map(str::to_string))
        .collect()
}

#[rstest]
#[tokio::test]
async fn a_service_without_pods_has_empty_endpoints_and_a_placeholder_slice(
    #[future(awt)] server: TestServer,
) {
    let s = &server;
    create_namespace(s, NS).await;
    let svc = create_in(s, "services", web_service("web")).await;
    let ep = endpoints(s, "web").await;
    assert!(ep.get("subsets").is_none(), "{ep}");
    assert_eq!(
        ep["metadata"]["labels"],
        json!({"team": "shop", "endpoints.kubernetes.io/managed-by": "endpoint-controller"})
    );
    let created = svc["metadata"]["creationTimestamp"].clone();
    assert_eq!(
        ep["metadata"]["annotations"]["endpoints.kubernetes.io/last-change-trigger-time"],
        created
    );
    let sl = slice(s, "web").await;
    let name = sl["metadata"]["name"].as_str().unwrap_or("");
    assert!(name.starts_with("web-") && name.len() == 9, "{name}");
    assert_eq!(sl["addressType"], "IPv4");
    assert_eq!(
        sl["metadata"]["labels"],
        json!({"team": "shop", "kubernetes.io/service-name": "web",
            "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io"})
    );
    assert_eq!(
        sl["metadata"]["ownerReferences"],
        json!([{"apiVersion": "v1", "kind": "Service", "name": "web",
            "uid": svc["metadata"]["uid"], "controller": true, "blockOwnerDeletion": true}])
    );
    // What the controller writes (a real apiserver's protobuf storage returns both as null).
    assert_eq!(sl["endpoints"], json!([]), "{sl}");
    assert_eq!(sl["ports"], json!([]), "{sl}");

    // A pod without an IP is no endpoint, and a write that changes nothing is not made.
    let ep_rv = ep["metadata"]["resourceVersion"].clone();
    create_in(s, "pods", web_pod("web-1")).await;
    let ep = endpoints(s, "web").await;
    assert_eq!(ep["metadata"]["resourceVersion"], ep_rv);
    assert_eq!(
        slice(s, "web").await["metadata"]["resourceVersion"],
        sl["metadata"]["resourceVersion"]
    );

    // The Service's removal takes both.
    let (code, _) = delete(s, &format!("/api/v1/namespaces/{NS}/services/web")).await;
    assert_eq!(code, 200);
    let (code, _) = s
        .get(&format!("/api/v1/namespaces/{NS}/endpoints/web"))
        .await;
    assert_eq!(code, 404);
    assert!(slices(s, "web").await.is_empty());
}

#[rstest]
#[tokio::test]
async fn endpoints_follow_pod_readiness_ips_and_labels(#[future(awt)] server: TestServer) {
    let s = &server;
    create_namespace(s, NS).await;
    create_in(s, "services", web_service("web")).await;
    let pod = create_in(s, "pods", web_pod("web-1")).await;
    let uid = pod["metadata"]["uid"].clone();

    set_status(s, "web-1", "10.0.0.5", false).await;
    let ep = endpoints(s, "web").await;
    assert_eq!(ips(&ep, "notReadyAddresses"), ["10.0.0.5"]);
    assert!(ips(&ep, "addresses").is_empty());
    let subset = &ep["subsets"][0];
    assert_eq!(
        subset["notReadyAddresses"][0],
        json!({"ip": "10.0.0.5", "nodeName": "node-1",
            "targetRef": {"kind": "Pod", "namespace": NS, "name": "web-1", "uid": uid}})
    );
    assert_eq!(
        subset["ports"],
        json!([{"name": "http", "port": 8080, "protocol": "TCP"},
               {"name": "metrics", "port": 9100, "protocol": "TCP"}])
    );
    let sl = slice(s, "web").await;
    assert_eq!(
        sl["ports"],
        json!([{"name": "http", "port": 8080, "protocol": "TCP"},
               {"name": "metrics", "port": 9100, "protocol": "TCP"}])
    );
    assert_eq!(
        sl["endpoints"],
        json!([{"addresses": ["10.0.0.5"],
            "conditions": {"ready": false, "serving": false, "terminating": false},
            "nodeName": "node-1",
            "targetRef": {"kind": "Pod", "namespace": NS, "name": "web-1", "uid": uid}}])
    );

    set_status(s, "web-1", "10.0.0.5", true).await;
    let ep = endpoints(s, "web").await;
    assert_eq!(ips(&ep, "addresses"), ["10.0.0.5"]);
    assert!(ips(&ep, "notReadyAddresses").is_empty());
    assert_eq!(
        ep["metadata"]["annotations"]["endpoints.kubernetes.io/last-change-trigger-time"],
        READY_SINCE,
        "the latest change: {ep}"
    );
    let sl = slice(s, "web").await;
    assert_eq!(
        sl["endpoints"][0]["conditions"],
        json!({"ready": true, "serving": true, "terminating": false})
    );

    set_status(s, "web-1", "10.0.0.6", true).await;
    let ep = endpoints(s, "web").await;
    assert_eq!(ips(&ep, "addresses"), ["10.0.0.6"]);
    let sl = slice(s, "web").await;
    assert_eq!(sl["endpoints"][0]["addresses"], json!(["10.0.0.6"]));

    // A change that does not concern them writes neither.
    let path = format!("/api/v1/namespaces/{NS}/pods/web-1");
    let patch = json!({"metadata": {"annotations": {"note": "x"}}});
    let (code, _) = merge_patch(s, &path, patch).await;
    assert_eq!(code, 200);
    let rv = |o: &Value| o["metadata"]["resourceVersion"].clone();
    assert_eq!(rv(&endpoints(s, "web").await), rv(&ep));
    assert_eq!(rv(&slice(s, "web").await), rv(&sl));

    // A second pod, then the first leaves the selector.
    create_in(s, "pods", web_pod("web-2")).await;
    set_status(s, "web-2", "10.0.0.2", true).await;
    assert_eq!(
        ips(&endpoints(s, "web").await, "addresses"),
        ["10.0.0.2", "10.0.0.6"]
    );
    let path = format!("/api/v1/namespaces/{NS}/pods/web-1");
    let (code, _) = merge_patch(s, &path, json!({"metadata": {"labels": {"app": "other"}}})).await;
    assert_eq!(code, 200);
    assert_eq!(ips(&endpoints(s, "web").await, "addresses"), ["10.0.0.2"]);
    let sl = slice(s, "web").await;
    assert_eq!(sl["endpoints"].as_array().map(Vec::len), Some(1), "{sl}");

    // Its removal empties them.
    let (code, _) = delete(s, &format!("/api/v1/namespaces/{NS}/pods/web-2")).await;
    assert_eq!(code, 200);
    assert!(endpoints(s, "web").await.get("subsets").is_none());
    assert!(slice(s, "web").await["endpoints"]
        .as_array()
        .is_none_or(Vec::is_empty));
}

#[rstest]
#[tokio::test]
async fn terminating_pods_and_not_ready_addresses(#[future(awt)] server: TestServer) {
    let s = &server;
    create_namespace(s, NS).await;
    let mut publish = web_service("all");
    publish["spec"]["publishNotReadyAddresses"] = json!(true);
    create_in(s, "services", publish).await;
    create_in(s, "services", web_service("web")).await;
    let mut held = web_pod("web-1");
    held["metadata"]["finalizers"] = json!(["example.com/hold"]);
    create_in(s, "pods", held).await;
    set_status(s, "web-1", "10.0.0.7", false).await;
    assert_eq!(ips(&endpoints(s, "all").await, "addresses"), ["10.0.0.7"]);
    assert_eq!(
        slice(s, "all").await["endpoints"][0]["conditions"],
        json!({"ready": true, "serving": false, "terminating": false})
    );

    set_status(s, "web-1", "10.0.0.7", true).await;
    let (code, _) = delete(s, &format!("/api/v1/namespaces/{NS}/pods/web-1")).await;
    assert_eq!(code, 200);
    // Being deleted: out of the Endpoints unless not-ready addresses are published; in the
    // slices, terminating.
    assert!(endpoints(s, "web").await.get("subsets").is_none());
    assert_eq!(ips(&endpoints(s, "all").await, "addresses"), ["10.0.0.7"]);
    assert_eq!(
        slice(s, "web").await["endpoints"][0]["conditions"],
        json!({"ready": false, "serving": true, "terminating": true})
    );
    let patch = json!({"metadata": {"finalizers": null}});
    let (code, _) = merge_patch(s, &format!("/api/v1/namespaces/{NS}/pods/web-1"), patch).await;
    assert_eq!(code, 200);
    assert!(slice(s, "web").await["endpoints"]
        .as_array()
        .is_none_or(Vec::is_empty));
    assert!(endpoints(s, "all").await.get("subsets").is_none());
}

#[rstest]
#[tokio::test]
async fn services_without_a_selector_are_left_alone(#[future(awt)] server: TestServer) {
    let s = &server;
    create_namespace(s, NS).await;
    create_in(
        s,
        "services",
        json!({"metadata": {"name": "manual"}, "spec": {"ports": [{"port": 443}]}}),
    )
    .await;
    let (code, _) = s
        .get(&format!("/api/v1/namespaces/{NS}/endpoints/manual"))
        .await;
    assert_eq!(code, 404, "no Endpoints for a Service without selector");
    let manual = create_in(
        s,
        "endpoints",
        json!({"metadata": {"name": "manual"},
            "subsets": [{"addresses": [{"ip": "10.1.2.3"}], "ports": [{"port": 8443}]}]}),
    )
    .await;
    create_in(s, "pods", web_pod("web-1")).await;
    set_status(s, "web-1", "10.0.0.5", true).await;
    let path = format!("/api/v1/namespaces/{NS}/services/manual");
    let (code, _) = merge_patch(s, &path, json!({"metadata": {"labels": {"a": "b"}}})).await;
    assert_eq!(code, 200);
    let ep = endpoints(s, "manual").await;
    assert_eq!(ep, manual, "untouched");
    assert!(slices(s, "manual").await.is_empty());
    // The `kubernetes` Service's are the server's own.
    let (_, own) = s
        .get("/api/v1/namespaces/default/endpoints/kubernetes")
        .await;
    assert!(own["metadata"]["labels"]
        .get("endpoints.kubernetes.io/managed-by")
        .is_none());
    // Its removal takes its Endpoints too, as the endpoints controller does.
    let (code, _) = delete(s, &path).await;
    assert_eq!(code, 200);
    let (code, _) = s
        .get(&format!("/api/v1/namespaces/{NS}/endpoints/manual"))
        .await;
    assert_eq!(code, 404);
}

#[rstest]
#[tokio::test]
async fn named_ports_selector_changes_and_deleted_objects(#[future(awt)] server: TestServer) {
    let s = &server;
    create_namespace(s, NS).await;
    create_in(s, "services", web_service("web")).await;
    // A pod without the named port still serves the numbered one.
    let mut plain = web_pod("plain");
    plain["spec"]["containers"][0]["ports"] = json!([]);
    create_in(s, "pods", plain).await;
    set_status(s, "plain", "10.0.0.9", true).await;
    create_in(s, "pods", web_pod("named")).await;
    set_status(s, "named", "10.0.0.8", true).await;
    let ep = endpoints(s, "web").await;
    let subsets = ep["subsets"].as_array().cloned().unwrap_or_default();
    assert_eq!(subsets.len(), 2, "{ep}");
    let by_port = |name: &str| -> Vec<String> {
        let ss = subsets
            .iter()
            .find(|ss| {
                ss["ports"]
                    .as_array()
                    .is_some_and(|p| p.iter().any(|p| p["name"] == name))
            })
            .cloned()
            .unwrap_or_default();
        ips(&json!({"subsets": [ss]}), "addresses")
    };
    assert_eq!(by_port("http"), ["10.0.0.8"]);
    assert_eq!(by_port("metrics"), ["10.0.0.8", "10.0.0.9"]);
    let all = slices(s, "web").await;
    assert_eq!(all.len(), 2, "one slice per port mapping: {all:?}");

    // Deleted managed objects come back.
    let name = all[0]["metadata"]["name"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let path = format!("/apis/discovery.k8s.io/v1/namespaces/{NS}/endpointslices/{name}");
    let (code, _) = delete(s, &path).await;
    assert_eq!(code, 200);
    assert_eq!(slices(s, "web").await.len(), 2);
    let (code, _) = delete(s, &format!("/api/v1/namespaces/{NS}/endpoints/web")).await;
    assert_eq!(code, 200);
    assert_eq!(endpoints(s, "web").await["subsets"], ep["subsets"]);

    // A selector that no longer matches empties them.
    let path = format!("/api/v1/namespaces/{NS}/services/web");
    let patch = json!({"spec": {"selector": {"app": "api"}}});
    let (code, _) = merge_patch(s, &path, patch).await;
    assert_eq!(code, 200);
    assert!(endpoints(s, "web").await.get("subsets").is_none());
    let all = slices(s, "web").await;
    assert_eq!(all.len(), 1, "back to the placeholder: {all:?}");
}

#[tokio::test]
async fn envtest_disables_the_service_account_plugin() {
    let builder = kubefake::Server::builder().disable_admission_plugins(["ServiceAccount"]);
    let s = server_with(builder).await;
    let (code, pod) = s
        .post(
            "/api/v1/namespaces/default/pods",
            &pod_body("x", Some("missing")),
        )
        .await;
    assert_eq!(code, 201, "{pod}");
    let (code, pod) = s
        .post("/api/v1/namespaces/default/pods", &pod_body("y", None))
        .await;
    assert_eq!(code, 201);
    assert!(pod["spec"].get("serviceAccountName").is_none(), "{pod}");
    assert!(pod["spec"].get("volumes").is_none(), "no token volume");
}
