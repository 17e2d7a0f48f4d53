//! networking.k8s.io/v1 through kube-rs's typed API: Ingresses (+status), IngressClasses and
//! NetworkPolicies, with their defaults, the validation controllers hit, generations, the
//! status subresource, Tables, field selectors, patches, apply and protobuf.

use futures_util::StreamExt;
use k8s_openapi::api::networking::v1::{Ingress, IngressClass, NetworkPolicy};
use kube::api::{
    Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use rstest::rstest;
use serde_json::json;

use crate::harness::{api_error, server, TestServer};
use crate::rbac::{protobuf, table, typed};

const GROUP_PATH: &str = "/apis/networking.k8s.io/v1";

fn ingress(name: &str, host: &str) -> Ingress {
    typed(
        json!({"metadata": {"name": name}, "spec": {"ingressClassName": "nginx", "rules": [
        {"host": host, "http": {"paths": [{"path": "/", "pathType": "Prefix",
            "backend": {"service": {"name": "web", "port": {"number": 80}}}}]}}]}}),
    )
}

#[rstest]
#[tokio::test]
async fn ingresses_crud_watch_generation_and_status(#[future(awt)] server: TestServer) {
    let api: Api<Ingress> = Api::namespaced(server.client.clone(), "default");
    let mut with_status = ingress("web", "example.com");
    with_status.status = typed(json!({"loadBalancer": {"ingress": [{"ip": "10.0.0.1"}]}}));
    let created = api
        .create(&PostParams::default(), &with_status)
        .await
        .expect("create");
    assert_eq!(created.metadata.generation, Some(1));
    let lb = created.status.and_then(|s| s.load_balancer);
    assert_eq!(
        lb.and_then(|l| l.ingress),
        None,
        "status is reset on create"
    );
    let rv = created
        .metadata
        .resource_version
        .clone()
        .unwrap_or_default();
    let mut watch = api
        .watch(&WatchParams::default(), &rv)
        .await
        .expect("watch")
        .boxed();

    let status = api
        .patch_status(
            "web",
            &PatchParams::default(),
            &Patch::Merge(
                json!({"status": {"loadBalancer": {"ingress": [{"ip": "10.0.0.1"}]}},
                "spec": {"ingressClassName": "ignored"}}),
            ),
        )
        .await
        .expect("status patch");
    assert_eq!(status.metadata.generation, Some(1));
    let class = status
        .spec
        .as_ref()
        .and_then(|s| s.ingress_class_name.clone());
    assert_eq!(
        class.as_deref(),
        Some("nginx"),
        "status writes keep the spec"
    );
    match watch.next().await {
        Some(Ok(WatchEvent::Modified(i))) => assert!(i.status.is_some()),
        other => panic!("expected MODIFIED, got {other:?}"),
    }
    let err = api_error(
        api.patch_status(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"loadBalancer": {"ingress": [{"ip": "010.0.0.1"}]}}})),
        )
        .await
        .expect_err("leading zeros"),
    );
    assert_eq!(
        err.message,
        "Ingress.networking.k8s.io \"web\" is invalid: status.loadBalancer.ingress[0].ip: Invalid value: \"010.0.0.1\": must not have leading 0s"
    );

    let moved = api
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"ingressClassName": "traefik"}})),
        )
        .await
        .expect("spec patch");
    assert_eq!(moved.metadata.generation, Some(2));
    let kept = moved
        .status
        .and_then(|s| s.load_balancer)
        .and_then(|l| l.ingress);
    assert_eq!(
        kept.map(|i| i.len()),
        Some(1),
        "spec writes keep the status"
    );
    api.delete("web", &DeleteParams::default())
        .await
        .expect("delete");
    assert_eq!(api_error(api.get("web").await.expect_err("gone")).code, 404);
}

#[rstest]
#[tokio::test]
async fn ingress_validation_as_the_apiserver_words_it(#[future(awt)] server: TestServer) {
    let api: Api<Ingress> = Api::namespaced(server.client.clone(), "default");
    let rv = server.rv();
    // Raw JSON: k8s-openapi always sends a pathType.
    let bad = json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
        "metadata": {"name": "bad"}, "spec": {"rules": [
        {"host": "10.1.2.3", "http": {"paths": [
            {"path": "/api", "backend": {"service": {"name": "api", "port": {"number": 8080}}}},
            {"path": "v2", "pathType": "Exact", "backend": {"service": {"name": "api", "port": {"name": "http", "number": 80}}}}]}}]}});
    let (status, err) = server
        .post(&format!("{GROUP_PATH}/namespaces/default/ingresses"), &bad)
        .await;
    assert_eq!(status, 422);
    assert_eq!(
        err["message"],
        "Ingress.networking.k8s.io \"bad\" is invalid: [spec.rules[0].host: Invalid value: \"10.1.2.3\": must be a DNS name, not an IP address, spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified, spec.rules[0].http.paths[1].path: Invalid value: \"v2\": must be an absolute path, spec.rules[0].http.paths[1].backend: Invalid value: \"\": cannot set both port name & port number]"
    );
    assert_eq!(server.rv(), rv, "a rejected create changes nothing");
    let empty: Ingress = typed(json!({"metadata": {"name": "empty"}, "spec": {}}));
    let err = api_error(
        api.create(&PostParams::default(), &empty)
            .await
            .expect_err("nothing to route"),
    );
    assert_eq!(
        err.message,
        "Ingress.networking.k8s.io \"empty\" is invalid: spec: Invalid value: null: either `defaultBackend` or `rules` must be specified"
    );

    // The deprecated class annotation is accepted with a warning.
    let annotated = json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
        "metadata": {"name": "old-style", "annotations": {"kubernetes.io/ingress.class": "nginx"}},
        "spec": {"defaultBackend": {"service": {"name": "web", "port": {"name": "http"}}}}});
    let resp = server
        .http
        .post(server.url(&format!("{GROUP_PATH}/namespaces/default/ingresses")))
        .json(&annotated)
        .send()
        .await
        .expect("sent");
    assert_eq!(resp.status().as_u16(), 201);
    let warning = resp
        .headers()
        .get("warning")
        .and_then(|w| w.to_str().ok())
        .unwrap_or_default()
        .to_string();
    assert!(
        warning.contains("annotation \\\"kubernetes.io/ingress.class\\\" is deprecated, please use 'spec.ingressClassName' instead"),
        "{warning}"
    );
}

#[rstest]
#[tokio::test]
async fn ingress_tables_selectors_apply_and_protobuf(#[future(awt)] server: TestServer) {
    let api: Api<Ingress> = Api::namespaced(server.client.clone(), "default");
    let mut tls = ingress("secure", "shop.example.com");
    if let Some(spec) = tls.spec.as_mut() {
        spec.tls = Some(vec![typed(
            json!({"hosts": ["shop.example.com"], "secretName": "shop-tls"}),
        )]);
    }
    api.create(&PostParams::default(), &tls)
        .await
        .expect("create");
    api.patch_status(
        "secure",
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"loadBalancer": {"ingress": [
            {"ip": "192.0.2.10"}, {"hostname": "lb.example.com"}]}}})),
    )
    .await
    .expect("status");
    let path = format!("{GROUP_PATH}/namespaces/default/ingresses");
    let (columns, t) = table(&server, &path).await;
    assert_eq!(
        columns,
        ["Name", "Class", "Hosts", "Address", "Ports", "Age"]
    );
    let cells = &t["rows"][0]["cells"];
    assert_eq!(cells[1], "nginx");
    assert_eq!(cells[2], "shop.example.com");
    assert_eq!(cells[3], "192.0.2.10,lb.example.com");
    assert_eq!(cells[4], "80, 443");

    let listed = api
        .list(&ListParams::default().fields("metadata.name=secure"))
        .await
        .expect("field selector");
    assert_eq!(listed.items.len(), 1);

    let applied = api
        .patch(
            "applied",
            &PatchParams::apply("tester"),
            &Patch::Apply(
                json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
                "metadata": {"name": "applied"},
                "spec": {"defaultBackend": {"service": {"name": "web", "port": {"number": 80}}}}}),
            ),
        )
        .await
        .expect("server-side apply creates");
    assert_eq!(applied.metadata.generation, Some(1));
    let decoded = protobuf(&server, &format!("{path}/secure")).await;
    assert_eq!(decoded["kind"], "Ingress");
    assert_eq!(decoded["spec"]["rules"][0]["host"], "shop.example.com");
}

#[rstest]
#[tokio::test]
async fn ingress_classes(#[future(awt)] server: TestServer) {
    let api: Api<IngressClass> = Api::all(server.client.clone());
    let class: IngressClass = typed(json!({"metadata": {"name": "nginx",
            "annotations": {"ingressclass.kubernetes.io/is-default-class": "true"}},
        "spec": {"controller": "k8s.io/ingress-nginx",
            "parameters": {"apiGroup": "k8s.example.com", "kind": "IngressParameters", "name": "external-lb"}}}));
    let created = api
        .create(&PostParams::default(), &class)
        .await
        .expect("create");
    let params = created.spec.as_ref().and_then(|s| s.parameters.clone());
    assert_eq!(params.and_then(|p| p.scope).as_deref(), Some("Cluster"));
    assert_eq!(created.metadata.generation, Some(1));

    let (columns, t) = table(&server, &format!("{GROUP_PATH}/ingressclasses")).await;
    assert_eq!(columns, ["Name", "Controller", "Parameters", "Age"]);
    let cells = &t["rows"][0]["cells"];
    assert_eq!(cells[0], "nginx (default)");
    assert_eq!(cells[1], "k8s.io/ingress-nginx");
    assert_eq!(cells[2], "IngressParameters.k8s.example.com/external-lb");

    let err = api_error(
        api.patch(
            "nginx",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"controller": "example.com/other"}})),
        )
        .await
        .expect_err("immutable"),
    );
    assert_eq!(
        err.message,
        "IngressClass.networking.k8s.io \"nginx\" is invalid: spec.controller: Invalid value: \"example.com/other\": field is immutable"
    );
    let bad: IngressClass = typed(
        json!({"metadata": {"name": "bad"}, "spec": {"controller": "nginx",
        "parameters": {"kind": "Params", "name": "p", "scope": "Namespace"}}}),
    );
    let err = api_error(
        api.create(&PostParams::default(), &bad)
            .await
            .expect_err("invalid"),
    );
    assert_eq!(
        err.message,
        "IngressClass.networking.k8s.io \"bad\" is invalid: [spec.controller: Invalid value: \"nginx\": must be a domain-prefixed path (such as \"acme.io/foo\"), spec.parameters.namespace: Required value: `parameters.scope` is set to 'Namespace']"
    );
}

#[rstest]
#[tokio::test]
async fn network_policies(#[future(awt)] server: TestServer) {
    let api: Api<NetworkPolicy> = Api::namespaced(server.client.clone(), "default");
    let policy: NetworkPolicy = typed(json!({"metadata": {"name": "db"}, "spec": {
        "podSelector": {"matchLabels": {"role": "db"},
            "matchExpressions": [{"key": "tier", "operator": "In", "values": ["gold", "backend"]}]},
        "ingress": [{"from": [{"ipBlock": {"cidr": "172.17.0.0/16", "except": ["172.17.1.0/24"]}},
            {"namespaceSelector": {"matchLabels": {"project": "myproject"}}}],
            "ports": [{"port": 6379}]}],
        "egress": [{"to": [{"ipBlock": {"cidr": "10.0.0.0/24"}}], "ports": [{"port": 5978, "protocol": "UDP"}]}]}}));
    let created = api
        .create(&PostParams::default(), &policy)
        .await
        .expect("create");
    let spec = created.spec.clone().unwrap_or_default();
    assert_eq!(
        spec.policy_types,
        Some(vec!["Ingress".to_string(), "Egress".to_string()])
    );
    let port = spec.ingress.unwrap_or_default()[0]
        .ports
        .clone()
        .unwrap_or_default();
    assert_eq!(port[0].protocol.as_deref(), Some("TCP"));
    assert_eq!(created.metadata.generation, Some(1));

    let (columns, t) = table(
        &server,
        &format!("{GROUP_PATH}/namespaces/default/networkpolicies"),
    )
    .await;
    assert_eq!(columns, ["Name", "Pod-Selector", "Age"]);
    assert_eq!(t["rows"][0]["cells"][1], "role=db,tier in (backend,gold)");

    let patched = api
        .patch(
            "db",
            &PatchParams::default(),
            &Patch::Strategic(
                json!({"spec": {"podSelector": {"matchLabels": {"role": null, "app": "redis"}}}}),
            ),
        )
        .await
        .expect("strategic merge patch");
    let labels = patched
        .spec
        .and_then(|s| s.pod_selector)
        .and_then(|p| p.match_labels);
    assert_eq!(
        labels.map(|l| l.into_keys().collect::<Vec<_>>()),
        Some(vec!["app".to_string()])
    );
    assert_eq!(patched.metadata.generation, Some(2));

    let bad: NetworkPolicy = typed(
        json!({"metadata": {"name": "bad"}, "spec": {"podSelector": {},
        "egress": [{"to": [{"ipBlock": {"cidr": "10.0.0.1/24"}}], "ports": [{"port": 70000}]}]}}),
    );
    let err = api_error(
        api.create(&PostParams::default(), &bad)
            .await
            .expect_err("invalid"),
    );
    assert_eq!(
        err.message,
        "NetworkPolicy.networking.k8s.io \"bad\" is invalid: [spec.egress[0].ports[0].port: Invalid value: 70000: must be between 1 and 65535, inclusive, spec.egress[0].to[0].ipBlock.cidr: Invalid value: \"10.0.0.1/24\": must not have bits set beyond the prefix length]"
    );
    let applied = api
        .patch(
            "deny-all",
            &PatchParams::apply("tester"),
            &Patch::Apply(
                json!({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                "metadata": {"name": "deny-all"}, "spec": {"podSelector": {}}}),
            ),
        )
        .await
        .expect("server-side apply creates");
    let types = applied.spec.and_then(|s| s.policy_types);
    assert_eq!(types, Some(vec!["Ingress".to_string()]));
}
