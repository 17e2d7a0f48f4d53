//! networking.k8s.io/v1 ServiceCIDRs and IPAddresses through kube-rs: the default ServiceCIDR
//! made of the service range (Ready, restored when deleted), an IPAddress per Service cluster IP
//! kept in step with the Service, IPs reserved by a client's IPAddress, ranges added by a
//! ServiceCIDR, the validation and the Tables; `--service-cluster-ip-range` honoured.

use k8s_openapi::api::core::v1::Service;
use k8s_openapi::api::networking::v1::{IPAddress, ServiceCIDR};
use kube::api::{Api, DeleteParams, PostParams};
use rstest::rstest;
use serde_json::json;

use crate::harness::{api_error, server, server_with, TestServer};
use crate::rbac::{table, typed};

fn service(name: &str, ip: Option<&str>) -> Service {
    let mut spec = json!({"ports": [{"port": 80}]});
    if let Some(ip) = ip {
        spec["clusterIP"] = json!(ip);
    }
    typed(json!({"metadata": {"name": name}, "spec": spec}))
}

#[rstest]
#[tokio::test]
async fn the_default_range_and_the_kubernetes_services_address(#[future(awt)] server: TestServer) {
    let cidrs: Api<ServiceCIDR> = Api::all(server.client.clone());
    let default = cidrs
        .get("kubernetes")
        .await
        .expect("the default ServiceCIDR");
    let spec = default.spec.expect("spec");
    assert_eq!(spec.cidrs, Some(vec!["10.96.0.0/12".to_string()]));
    let ready = &default
        .status
        .and_then(|s| s.conditions)
        .expect("conditions")[0];
    assert_eq!(
        (ready.type_.as_str(), ready.status.as_str()),
        ("Ready", "True")
    );
    assert_eq!(ready.message, "Kubernetes default Service CIDR is ready");

    let addresses: Api<IPAddress> = Api::all(server.client.clone());
    let kubernetes = addresses
        .get("10.96.0.1")
        .await
        .expect("the kubernetes Service's IP");
    let parent = kubernetes.spec.parent_ref;
    assert_eq!(
        (
            parent.resource.as_str(),
            parent.namespace.as_deref(),
            parent.name.as_str()
        ),
        ("services", Some("default"), "kubernetes")
    );
    let labels = kubernetes.metadata.labels.expect("labels");
    assert_eq!(
        labels["ipaddress.kubernetes.io/managed-by"],
        "ipallocator.k8s.io"
    );
    assert_eq!(labels["ipaddress.kubernetes.io/ip-family"], "IPv4");

    // Deleted, it comes back, Ready.
    cidrs
        .delete("kubernetes", &DeleteParams::default())
        .await
        .expect("deleted");
    let back = cidrs.get("kubernetes").await.expect("restored");
    assert!(back
        .status
        .and_then(|s| s.conditions)
        .is_some_and(|c| c[0].status == "True"));

    let (names, body) = table(&server, "/apis/networking.k8s.io/v1/servicecidrs").await;
    assert_eq!(names, ["Name", "CIDRs", "Age"]);
    assert_eq!(body["rows"][0]["cells"][1], "10.96.0.0/12");
    let (names, body) = table(&server, "/apis/networking.k8s.io/v1/ipaddresses").await;
    assert_eq!(names, ["Name", "ParentRef"]);
    assert_eq!(body["rows"][0]["cells"][1], "services/default/kubernetes");
}

#[rstest]
#[tokio::test]
async fn service_ips_are_ipaddresses(#[future(awt)] server: TestServer) {
    let services: Api<Service> = Api::namespaced(server.client.clone(), "default");
    let addresses: Api<IPAddress> = Api::all(server.client.clone());
    let created = services
        .create(&PostParams::default(), &service("web", None))
        .await
        .expect("created");
    let ip = created.spec.and_then(|s| s.cluster_ip).expect("an IP");
    let address = addresses.get(&ip).await.expect("its IPAddress");
    assert_eq!(address.spec.parent_ref.name, "web");
    services
        .delete("web", &DeleteParams::default())
        .await
        .expect("deleted");
    assert_eq!(
        api_error(addresses.get(&ip).await.expect_err("released")).code,
        404
    );

    // A Service that becomes an ExternalName lets its IP go.
    let created = services
        .create(&PostParams::default(), &service("ext", None))
        .await
        .expect("created");
    let ip = created.spec.and_then(|s| s.cluster_ip).expect("an IP");
    let to_external = json!({"spec": {"type": "ExternalName", "externalName": "x.example.com",
        "clusterIP": null, "clusterIPs": null, "ports": null}});
    services
        .patch(
            "ext",
            &kube::api::PatchParams::default(),
            &kube::api::Patch::Merge(to_external),
        )
        .await
        .expect("an ExternalName");
    assert_eq!(
        api_error(addresses.get(&ip).await.expect_err("released")).code,
        404
    );

    // An IP a client reserved is not given to a Service.
    let reserved: IPAddress = typed(json!({"metadata": {"name": "10.96.5.5"},
        "spec": {"parentRef": {"resource": "gateways", "name": "mine"}}}));
    addresses
        .create(&PostParams::default(), &reserved)
        .await
        .expect("reserved");
    let err = services
        .create(&PostParams::default(), &service("taken", Some("10.96.5.5")))
        .await
        .expect_err("allocated");
    assert_eq!(
        api_error(err).message,
        "Service \"taken\" is invalid: spec.clusterIPs: Invalid value: [\"10.96.5.5\"]: failed to allocate IP 10.96.5.5: provided IP is already allocated"
    );

    // A dry run asks the default range's allocator: a taken IP passes, one out of range is
    // worded by it.
    let path = "/api/v1/namespaces/default/services?dryRun=All";
    let body = |ip: &str| json!({"metadata": {"name": "dry"}, "spec": {"clusterIP": ip, "ports": [{"port": 80}]}});
    let (status, _) = server.post(path, &body("10.96.5.5")).await;
    assert_eq!(status, 201);
    let (status, err) = server.post(path, &body("10.120.0.1")).await;
    assert_eq!(status, 422);
    assert_eq!(
        err["message"],
        "Service \"dry\" is invalid: spec.clusterIPs: Invalid value: [\"10.120.0.1\"]: failed to allocate IP 10.120.0.1: the provided IP (10.120.0.1) is not in the valid range. The range of valid IPs is 10.96.0.0/12"
    );

    // A ServiceCIDR adds a range; an IP outside every range is refused.
    let cidrs: Api<ServiceCIDR> = Api::all(server.client.clone());
    let extra: ServiceCIDR =
        typed(json!({"metadata": {"name": "extra"}, "spec": {"cidrs": ["10.200.0.0/24"]}}));
    cidrs
        .create(&PostParams::default(), &extra)
        .await
        .expect("added");
    services
        .create(
            &PostParams::default(),
            &service("extra", Some("10.200.0.5")),
        )
        .await
        .expect("in the added range");
    let err = services
        .create(
            &PostParams::default(),
            &service("outside", Some("10.201.0.5")),
        )
        .await
        .expect_err("in no range");
    assert_eq!(
        api_error(err).message,
        "Service \"outside\" is invalid: spec.clusterIPs: Invalid value: [\"10.201.0.5\"]: failed to allocate IP 10.201.0.5: the provided network does not match the current range"
    );
}

#[rstest]
#[tokio::test]
async fn validation_as_the_apiserver_words_it(#[future(awt)] server: TestServer) {
    let cidrs: Api<ServiceCIDR> = Api::all(server.client.clone());
    let bad: ServiceCIDR = typed(json!({"metadata": {"name": "bad"},
        "spec": {"cidrs": ["10.0.0.0/24", "10.1.0.0/24"]}}));
    let err = cidrs
        .create(&PostParams::default(), &bad)
        .await
        .expect_err("two IPv4");
    assert_eq!(
        api_error(err).message,
        "ServiceCIDR.networking.k8s.io \"bad\" is invalid: spec.cidrs: Invalid value: [\"10.0.0.0/24\",\"10.1.0.0/24\"]: may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64"
    );
    let addresses: Api<IPAddress> = Api::all(server.client.clone());
    let bad: IPAddress = typed(json!({"metadata": {"name": "2001:db8::0001"},
        "spec": {"parentRef": {"resource": "services", "name": "x"}}}));
    let err = addresses
        .create(&PostParams::default(), &bad)
        .await
        .expect_err("not canonical");
    assert_eq!(
        api_error(err).message,
        "IPAddress.networking.k8s.io \"2001:db8::0001\" is invalid: metadata.name: Invalid value: \"2001:db8::0001\": must be in canonical form (\"2001:db8::1\")"
    );
}

/// envtest passes `--service-cluster-ip-range=10.0.0.0/24`: the `kubernetes` Service is
/// 10.0.0.1, as on envtest's real apiserver.
#[tokio::test]
async fn the_service_range_is_honoured() {
    let builder = kubefake::Server::builder()
        .service_cluster_ip_range("10.0.0.0/24")
        .expect("a range");
    let server = server_with(builder).await;
    let services: Api<Service> = Api::namespaced(server.client.clone(), "default");
    let kubernetes = services.get("kubernetes").await.expect("kubernetes");
    assert_eq!(
        kubernetes.spec.and_then(|s| s.cluster_ip).as_deref(),
        Some("10.0.0.1")
    );
    let created = services
        .create(&PostParams::default(), &service("web", None))
        .await
        .expect("created");
    let ip = created.spec.and_then(|s| s.cluster_ip).expect("an IP");
    assert!(ip.starts_with("10.0.0."), "{ip}");
    let err = kubefake::Server::builder()
        .service_cluster_ip_range("fd00::/64")
        .expect_err("IPv6 refused");
    assert!(err.to_string().contains("one IPv4 CIDR"), "{err}");
}
