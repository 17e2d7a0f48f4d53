//! core/v1 Services with their Endpoints and EndpointSlices: defaults, cluster IP and node port
//! allocation unique in the server, validation, updates that keep what was allocated, the
//! status subresource, kubectl's columns, and the `kubernetes` Service every cluster has.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{Endpoints, Service, ServicePort, ServiceSpec};
use k8s_openapi::api::discovery::v1::EndpointSlice;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use rstest::rstest;
use serde_json::json;

use super::{columns, narrow_columns, row, table};
use crate::harness::{api_error, server, TestServer};

fn service(name: &str, type_: Option<&str>, ports: &[(Option<&str>, i32)]) -> Service {
    Service {
        metadata: kube::api::ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        spec: Some(ServiceSpec {
            type_: type_.map(str::to_string),
            selector: Some(BTreeMap::from([("app".into(), name.into())])),
            ports: Some(
                ports
                    .iter()
                    .map(|(n, p)| ServicePort {
                        name: n.map(str::to_string),
                        port: *p,
                        ..Default::default()
                    })
                    .collect(),
            ),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn spec(s: &Service) -> ServiceSpec {
    s.spec.clone().unwrap_or_default()
}

fn in_service_cidr(ip: &str) -> bool {
    let octets: Vec<u8> = ip.split('.').filter_map(|o| o.parse().ok()).collect();
    octets.len() == 4 && octets[0] == 10 && (96..112).contains(&octets[1])
}

#[rstest]
#[tokio::test]
async fn the_kubernetes_service(#[future(awt)] server: TestServer) {
    let port: i32 = server
        .handle
        .url()
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .expect("server port");
    let services: Api<Service> = Api::namespaced(server.client.clone(), "default");
    let svc = services
        .get("kubernetes")
        .await
        .expect("the kubernetes service");
    let s = spec(&svc);
    assert_eq!(s.cluster_ip.as_deref(), Some("10.96.0.1"));
    assert_eq!(s.type_.as_deref(), Some("ClusterIP"));
    let ports = s.ports.unwrap_or_default();
    assert_eq!(ports[0].name.as_deref(), Some("https"));
    assert_eq!(ports[0].port, 443);
    assert_eq!(ports[0].target_port, Some(IntOrString::Int(port)));
    let labels = svc.metadata.labels.unwrap_or_default();
    assert_eq!(
        labels.get("component").map(String::as_str),
        Some("apiserver")
    );
    assert_eq!(
        labels.get("provider").map(String::as_str),
        Some("kubernetes")
    );

    let endpoints: Api<Endpoints> = Api::namespaced(server.client.clone(), "default");
    let ep = endpoints.get("kubernetes").await.expect("endpoints");
    let subset = ep.subsets.unwrap_or_default().remove(0);
    assert_eq!(subset.addresses.unwrap_or_default()[0].ip, "127.0.0.1");
    assert_eq!(subset.ports.unwrap_or_default()[0].port, port);

    let slices: Api<EndpointSlice> = Api::namespaced(server.client.clone(), "default");
    let by_service = slices
        .list(&ListParams::default().labels("kubernetes.io/service-name=kubernetes"))
        .await
        .expect("list");
    assert_eq!(by_service.items.len(), 1);
    let slice = &by_service.items[0];
    assert_eq!(slice.address_type, "IPv4");
    assert_eq!(
        slice.endpoints.clone().unwrap_or_default()[0].addresses,
        ["127.0.0.1"]
    );
    assert_eq!(slice.metadata.generation, Some(1));

    let t = table(&server, "/api/v1/namespaces/default/services").await;
    assert_eq!(
        narrow_columns(&t),
        [
            "Name",
            "Type",
            "Cluster-IP",
            "External-IP",
            "Port(s)",
            "Age"
        ]
    );
    assert_eq!(columns(&t).last().map(String::as_str), Some("Selector"));
    let cells = row(&t, "kubernetes");
    assert_eq!(
        cells[1..5],
        [
            json!("ClusterIP"),
            json!("10.96.0.1"),
            json!("<none>"),
            json!("443/TCP")
        ]
    );
    assert_eq!(cells[6], "<none>");
    let t = table(&server, "/api/v1/namespaces/default/endpoints").await;
    assert_eq!(columns(&t), ["Name", "Endpoints", "Age"]);
    assert_eq!(row(&t, "kubernetes")[1], format!("127.0.0.1:{port}"));
    let t = table(
        &server,
        "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices",
    )
    .await;
    assert_eq!(
        columns(&t),
        ["Name", "AddressType", "Ports", "Endpoints", "Age"]
    );
    assert_eq!(row(&t, "kubernetes")[2], port.to_string());
}

#[rstest]
#[tokio::test]
async fn defaults_and_unique_cluster_ips(#[future(awt)] server: TestServer) {
    let api: Api<Service> = Api::namespaced(server.client.clone(), "default");
    let web = api
        .create(&PostParams::default(), &service("web", None, &[(None, 80)]))
        .await
        .expect("create");
    let s = spec(&web);
    let ip = s.cluster_ip.clone().unwrap_or_default();
    assert!(in_service_cidr(&ip) && ip != "10.96.0.1", "{ip}");
    assert_eq!(s.cluster_ips, Some(vec![ip.clone()]));
    assert_eq!(s.type_.as_deref(), Some("ClusterIP"));
    assert_eq!(s.session_affinity.as_deref(), Some("None"));
    assert_eq!(s.ip_families, Some(vec!["IPv4".into()]));
    assert_eq!(s.ip_family_policy.as_deref(), Some("SingleStack"));
    assert_eq!(s.internal_traffic_policy.as_deref(), Some("Cluster"));
    assert!(s.external_traffic_policy.is_none());
    let port = &s.ports.unwrap_or_default()[0];
    assert_eq!(port.protocol.as_deref(), Some("TCP"));
    assert_eq!(port.target_port, Some(IntOrString::Int(80)));
    assert!(web.metadata.generation.is_none());

    // A requested IP that is taken, out of range, or a network address.
    let mut taken = service("taken", None, &[(None, 80)]);
    if let Some(s) = taken.spec.as_mut() {
        s.cluster_ip = Some(ip.clone());
    }
    let err = api_error(
        api.create(&PostParams::default(), &taken)
            .await
            .expect_err("taken"),
    );
    assert_eq!(
        err.message,
        format!("Service \"taken\" is invalid: spec.clusterIPs: Invalid value: [\"{ip}\"]: failed to allocate IP {ip}: provided IP is already allocated")
    );
    if let Some(s) = taken.spec.as_mut() {
        s.cluster_ip = Some("192.168.0.10".into());
    }
    let err = api_error(
        api.create(&PostParams::default(), &taken)
            .await
            .expect_err("outside"),
    );
    assert_eq!(
        err.message,
        "Service \"taken\" is invalid: spec.clusterIPs: Invalid value: [\"192.168.0.10\"]: failed to allocate IP 192.168.0.10: the provided network does not match the current range"
    );
    if let Some(s) = taken.spec.as_mut() {
        s.cluster_ip = Some("10.96.0.50".into());
    }
    let ok = api
        .create(&PostParams::default(), &taken)
        .await
        .expect("a free static IP");
    assert_eq!(spec(&ok).cluster_ip.as_deref(), Some("10.96.0.50"));

    // Many services, all different.
    let mut seen = std::collections::HashSet::from([
        ip.clone(),
        "10.96.0.50".to_string(),
        "10.96.0.1".to_string(),
    ]);
    for i in 0..20 {
        let s = api
            .create(
                &PostParams::default(),
                &service(&format!("s{i}"), None, &[(None, 80)]),
            )
            .await
            .expect("create");
        assert!(seen.insert(spec(&s).cluster_ip.unwrap_or_default()));
    }

    // The IP is free again once its Service is gone; a dry run allocates nothing.
    let deleted = api
        .delete("web", &DeleteParams::default())
        .await
        .expect("delete");
    assert!(deleted.left().is_some(), "DELETE answers with the Service");
    let mut again = service("again", None, &[(None, 80)]);
    if let Some(s) = again.spec.as_mut() {
        s.cluster_ip = Some(ip.clone());
    }
    let dry = api
        .create(
            &PostParams {
                dry_run: true,
                ..Default::default()
            },
            &service("dry", None, &[(None, 80)]),
        )
        .await
        .expect("dry run");
    assert_eq!(spec(&dry).cluster_ip.as_deref(), Some("10.96.0.0"));
    api.create(&PostParams::default(), &again)
        .await
        .expect("reused");

    // Headless and ExternalName services get no IP.
    let mut headless = service("db", None, &[(None, 5432)]);
    if let Some(s) = headless.spec.as_mut() {
        s.cluster_ip = Some("None".into());
    }
    let h = api
        .create(&PostParams::default(), &headless)
        .await
        .expect("headless");
    assert_eq!(spec(&h).cluster_ips, Some(vec!["None".into()]));
    assert_eq!(spec(&h).ip_families, Some(vec!["IPv4".into()]));
    let mut external = service("ext", Some("ExternalName"), &[]);
    if let Some(s) = external.spec.as_mut() {
        s.external_name = Some("example.com".into());
    }
    let e = api
        .create(&PostParams::default(), &external)
        .await
        .expect("external name");
    assert!(spec(&e).cluster_ip.is_none());
    assert!(spec(&e).ip_families.is_none());
    assert!(spec(&e).internal_traffic_policy.is_none());

    let by_type = api
        .list(&ListParams::default().fields("spec.type=ExternalName"))
        .await
        .expect("list");
    assert_eq!(by_type.items.len(), 1);
    let by_ip = api
        .list(&ListParams::default().fields("spec.clusterIP=10.96.0.1"))
        .await
        .expect("list");
    assert_eq!(by_ip.items[0].metadata.name.as_deref(), Some("kubernetes"));
}

#[rstest]
#[tokio::test]
async fn node_ports_and_load_balancers(#[future(awt)] server: TestServer) {
    let api: Api<Service> = Api::namespaced(server.client.clone(), "default");
    let np = api
        .create(
            &PostParams::default(),
            &service(
                "np",
                Some("NodePort"),
                &[(Some("http"), 80), (Some("https"), 443)],
            ),
        )
        .await
        .expect("create");
    let s = spec(&np);
    assert_eq!(s.external_traffic_policy.as_deref(), Some("Cluster"));
    let node_ports: Vec<i32> = s
        .ports
        .iter()
        .flatten()
        .filter_map(|p| p.node_port)
        .collect();
    assert_eq!(node_ports.len(), 2);
    assert!(
        node_ports.iter().all(|p| (30000..=32767).contains(p)),
        "{node_ports:?}"
    );
    assert_ne!(node_ports[0], node_ports[1]);

    let mut clash = service("clash", Some("NodePort"), &[(None, 80)]);
    if let Some(p) = clash.spec.as_mut().and_then(|s| s.ports.as_mut()) {
        p[0].node_port = Some(node_ports[0]);
    }
    let err = api_error(
        api.create(&PostParams::default(), &clash)
            .await
            .expect_err("taken"),
    );
    assert_eq!(
        err.message,
        format!("Service \"clash\" is invalid: spec.ports[0].nodePort: Invalid value: {}: provided port is already allocated", node_ports[0])
    );
    if let Some(p) = clash.spec.as_mut().and_then(|s| s.ports.as_mut()) {
        p[0].node_port = Some(80);
    }
    let err = api_error(
        api.create(&PostParams::default(), &clash)
            .await
            .expect_err("range"),
    );
    assert_eq!(
        err.message,
        "Service \"clash\" is invalid: spec.ports[0].nodePort: Invalid value: 80: provided port is not in the valid range. The range of valid ports is 30000-32767"
    );

    // A PUT that leaves out what was allocated keeps it; a strategic merge patch merges ports
    // by port number.
    let mut resubmit = service(
        "np",
        Some("NodePort"),
        &[(Some("http"), 80), (Some("https"), 443)],
    );
    resubmit.metadata.resource_version = np.metadata.resource_version.clone();
    let kept = api
        .replace("np", &PostParams::default(), &resubmit)
        .await
        .expect("replace");
    assert_eq!(spec(&kept).cluster_ip, s.cluster_ip);
    let kept_ports: Vec<i32> = spec(&kept)
        .ports
        .iter()
        .flatten()
        .filter_map(|p| p.node_port)
        .collect();
    assert_eq!(kept_ports, node_ports);
    let patched = api
        .patch(
            "np",
            &PatchParams::default(),
            &Patch::Strategic(json!({"spec": {"ports": [{"port": 443, "targetPort": 8443}]}})),
        )
        .await
        .expect("patch");
    let ports = spec(&patched).ports.unwrap_or_default();
    assert_eq!(ports.len(), 2);
    assert_eq!(ports[1].target_port, Some(IntOrString::Int(8443)));
    assert_eq!(ports[1].node_port, Some(node_ports[1]));

    // Changing the cluster IP is refused; going back to ClusterIP drops the node ports.
    let err = api_error(
        api.patch(
            "np",
            &PatchParams::default(),
            &Patch::Merge(
                json!({"spec": {"clusterIP": "10.96.100.100", "clusterIPs": ["10.96.100.100"]}}),
            ),
        )
        .await
        .expect_err("immutable"),
    );
    assert_eq!(
        err.message,
        "Service \"np\" is invalid: spec.clusterIPs[0]: Invalid value: [\"10.96.100.100\"]: may not change once set"
    );
    let back = api
        .patch(
            "np",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"type": "ClusterIP"}})),
        )
        .await
        .expect("to ClusterIP");
    assert!(spec(&back)
        .ports
        .iter()
        .flatten()
        .all(|p| p.node_port.is_none()));
    assert!(spec(&back).external_traffic_policy.is_none());

    // A load balancer gets node ports and shows its ingress once its status says so.
    let lb = api
        .create(
            &PostParams::default(),
            &service("lb", Some("LoadBalancer"), &[(None, 80)]),
        )
        .await
        .expect("create");
    assert_eq!(spec(&lb).allocate_load_balancer_node_ports, Some(true));
    let t = table(&server, "/api/v1/namespaces/default/services").await;
    assert_eq!(row(&t, "lb")[3], "<pending>");
    let status = api
        .patch_status(
            "lb",
            &PatchParams::default(),
            &Patch::Merge(
                json!({"status": {"loadBalancer": {"ingress": [{"ip": "203.0.113.7"}]}}}),
            ),
        )
        .await
        .expect("status");
    let ingress = status
        .status
        .and_then(|s| s.load_balancer)
        .and_then(|l| l.ingress)
        .unwrap_or_default();
    assert_eq!(ingress[0].ip_mode.as_deref(), Some("VIP"));
    let t = table(&server, "/api/v1/namespaces/default/services").await;
    let cells = row(&t, "lb");
    assert_eq!(cells[3], "203.0.113.7");
    let lb_port = spec(&lb).ports.unwrap_or_default()[0]
        .node_port
        .unwrap_or_default();
    assert_eq!(cells[4], format!("80:{lb_port}/TCP"));
    assert_eq!(cells[6], "app=lb");

    // Server-side apply merges ports by (port, protocol).
    let applied = api
        .patch(
            "lb",
            &PatchParams::apply("tester").force(),
            &Patch::Apply(json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "lb"},
                "spec": {"ports": [{"port": 80, "protocol": "TCP", "name": "web"}, {"port": 81, "protocol": "TCP", "name": "alt"}]}})),
        )
        .await
        .expect("apply");
    let ports = spec(&applied).ports.unwrap_or_default();
    assert_eq!(ports.len(), 2);
    assert_eq!(ports[0].node_port, Some(lb_port), "kept");
    assert!(ports[1].node_port.is_some(), "allocated");
}

#[rstest]
#[tokio::test]
async fn validation_as_the_apiserver_words_it(#[future(awt)] server: TestServer) {
    let api: Api<Service> = Api::namespaced(server.client.clone(), "default");
    let rv = server.rv();
    let err = api_error(
        api.create(
            &PostParams::default(),
            &service("two", None, &[(None, 80), (None, 81)]),
        )
        .await
        .expect_err("names required"),
    );
    assert_eq!(
        err.message,
        "Service \"two\" is invalid: [spec.ports[0].name: Required value, spec.ports[1].name: Required value]"
    );
    let err = api_error(
        api.create(&PostParams::default(), &service("none", None, &[]))
            .await
            .expect_err("ports required"),
    );
    assert_eq!(
        err.message,
        "Service \"none\" is invalid: spec.ports: Required value"
    );
    let mut dual = service("dual", None, &[(None, 80)]);
    if let Some(s) = dual.spec.as_mut() {
        s.ip_family_policy = Some("RequireDualStack".into());
    }
    let err = api_error(
        api.create(&PostParams::default(), &dual)
            .await
            .expect_err("single stack"),
    );
    assert_eq!(
        err.message,
        "Service \"dual\" is invalid: spec.ipFamilyPolicy: Invalid value: \"RequireDualStack\": this cluster is not configured for dual-stack services"
    );
    let err = api_error(
        api.create(
            &PostParams::default(),
            &service("Bad_Name", None, &[(None, 80)]),
        )
        .await
        .expect_err("name"),
    );
    assert!(err.message.starts_with("Service \"Bad_Name\" is invalid: metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 label"), "{}", err.message);
    assert_eq!(server.rv(), rv, "rejected creates change nothing");
}

#[rstest]
#[tokio::test]
async fn endpoint_slices(#[future(awt)] server: TestServer) {
    let api: Api<EndpointSlice> = Api::namespaced(server.client.clone(), "default");
    let slice: EndpointSlice = serde_json::from_value(json!({
        "metadata": {"name": "web-abc", "labels": {"kubernetes.io/service-name": "web"}},
        "addressType": "IPv4",
        "endpoints": [{"addresses": ["10.244.0.5"], "conditions": {"ready": true}}],
        "ports": [{"port": 8080}]
    }))
    .expect("slice");
    let created = api
        .create(&PostParams::default(), &slice)
        .await
        .expect("create");
    assert_eq!(created.metadata.generation, Some(1));
    let port = &created.ports.clone().unwrap_or_default()[0];
    assert_eq!(
        (port.name.as_deref(), port.protocol.as_deref()),
        (Some(""), Some("TCP"))
    );

    let relabelled = api
        .patch(
            "web-abc",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"x": "y"}}})),
        )
        .await
        .expect("patch");
    assert_eq!(
        relabelled.metadata.generation,
        Some(2),
        "labels count as a change"
    );
    let err = api_error(
        api.patch(
            "web-abc",
            &PatchParams::default(),
            &Patch::Merge(
                json!({"addressType": "IPv6", "endpoints": [{"addresses": ["fd00::5"]}]}),
            ),
        )
        .await
        .expect_err("immutable"),
    );
    assert_eq!(
        err.message,
        "EndpointSlice.discovery.k8s.io \"web-abc\" is invalid: addressType: Invalid value: \"IPv6\": field is immutable"
    );
    let err = api_error(
        api.patch(
            "web-abc",
            &PatchParams::default(),
            &Patch::Merge(json!({"endpoints": [{"addresses": ["fd00::5"]}]})),
        )
        .await
        .expect_err("family"),
    );
    assert_eq!(
        err.message,
        "EndpointSlice.discovery.k8s.io \"web-abc\" is invalid: endpoints[0].addresses: Invalid value: \"fd00::5\": must be an IPv4 address"
    );
    let t = table(
        &server,
        "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices",
    )
    .await;
    let cells = row(&t, "web-abc");
    assert_eq!(
        cells[1..4],
        [json!("IPv4"), json!("8080"), json!("10.244.0.5")]
    );

    let endpoints: Api<Endpoints> = Api::namespaced(server.client.clone(), "default");
    let ep: Endpoints = serde_json::from_value(json!({"metadata": {"name": "web"},
        "subsets": [{"addresses": [{"ip": "10.244.0.5"}], "ports": [{"port": 8080}]}]}))
    .expect("endpoints");
    let created = endpoints
        .create(&PostParams::default(), &ep)
        .await
        .expect("create");
    let ports = created.subsets.unwrap_or_default()[0]
        .ports
        .clone()
        .unwrap_or_default();
    assert_eq!(ports[0].protocol.as_deref(), Some("TCP"));
    let mut loopback = ep.clone();
    loopback.metadata.name = Some("lo".into());
    if let Some(s) = loopback.subsets.as_mut() {
        s[0].addresses = Some(vec![
            serde_json::from_value(json!({"ip": "127.0.0.1"})).expect("addr")
        ]);
    }
    let err = api_error(
        endpoints
            .create(&PostParams::default(), &loopback)
            .await
            .expect_err("loopback"),
    );
    assert_eq!(
        err.message,
        "Endpoints \"lo\" is invalid: subsets[0].addresses[0].ip: Invalid value: \"127.0.0.1\": may not be in the loopback range (127.0.0.0/8, ::1/128)"
    );
}
