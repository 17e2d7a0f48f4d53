//! Discovery: legacy documents, aggregated v2, and how they follow CRDs.

use kube::discovery::{Discovery, Scope};
use rstest::rstest;
use serde_json::{json, Value};

use crate::harness::{server, TestServer};

const AGGREGATED: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";

#[rstest]
#[tokio::test]
async fn legacy_documents(#[future(awt)] server: TestServer) {
    let (status, api) = server.get("/api").await;
    assert_eq!(status, 200);
    assert_eq!(api["kind"], "APIVersions");
    assert_eq!(api["versions"], json!(["v1"]));
    assert!(api.get("apiVersion").is_none());

    let (_, v1) = server.get("/api/v1").await;
    assert_eq!(v1["kind"], "APIResourceList");
    assert_eq!(v1["groupVersion"], "v1");
    let names: Vec<&str> = v1["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    // Built-in kinds are listed by name; the namespaces entries come in the apiserver's order.
    let ns: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| n.starts_with("namespaces"))
        .collect();
    assert_eq!(
        ns,
        ["namespaces", "namespaces/finalize", "namespaces/status"]
    );
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
    let namespaces = v1["resources"]
        .as_array()
        .and_then(|l| l.iter().find(|r| r["name"] == "namespaces"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        namespaces,
        json!({"name": "namespaces", "singularName": "namespace", "namespaced": false, "kind": "Namespace",
               "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"],
               "shortNames": ["ns"], "storageVersionHash": "Q3oi5N2YM8M="})
    );

    let (_, apis) = server.get("/apis").await;
    assert_eq!(apis["kind"], "APIGroupList");
    let apiextensions = apis["groups"]
        .as_array()
        .and_then(|g| g.iter().find(|g| g["name"] == "apiextensions.k8s.io"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(
        apiextensions["preferredVersion"]["groupVersion"],
        "apiextensions.k8s.io/v1"
    );

    let (_, group) = server.get("/apis/apiextensions.k8s.io").await;
    assert_eq!(group["kind"], "APIGroup");
    let (_, crds) = server.get("/apis/apiextensions.k8s.io/v1").await;
    assert_eq!(crds["resources"][0]["shortNames"], json!(["crd", "crds"]));
    assert_eq!(
        crds["resources"][0]["categories"],
        json!(["api-extensions"])
    );
    assert_eq!(
        crds["resources"][1]["name"],
        "customresourcedefinitions/status"
    );
}

#[rstest]
#[tokio::test]
async fn custom_resources_appear_and_disappear_with_their_crd(#[future(awt)] server: TestServer) {
    assert_eq!(server.get("/apis/stable.example.com/v1").await.0, 404);
    server.install_crontab_crd().await;

    let (status, group) = server.get("/apis/stable.example.com").await;
    assert_eq!(status, 200);
    assert_eq!(
        group["preferredVersion"],
        json!({"groupVersion": "stable.example.com/v1", "version": "v1"})
    );
    let (_, list) = server.get("/apis/stable.example.com/v1").await;
    assert_eq!(
        list["resources"],
        json!([{"name": "crontabs", "singularName": "crontab", "namespaced": true, "kind": "CronTab",
                "verbs": ["delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"],
                "shortNames": ["ct"], "storageVersionHash": "EdX2FP+L0js="}])
    );

    let discovery = Discovery::new(server.client.clone())
        .run()
        .await
        .expect("kube-rs discovery");
    let (resource, caps) = discovery
        .groups()
        .flat_map(|g| g.recommended_resources())
        .find(|(r, _)| r.plural == "crontabs")
        .expect("crontabs discovered");
    assert_eq!(resource.kind, "CronTab");
    assert_eq!(caps.scope, Scope::Namespaced);

    let resp = server
        .http
        .delete(server.url(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/crontabs.stable.example.com",
        ))
        .send()
        .await
        .expect("delete");
    assert_eq!(resp.status(), 200);
    assert_eq!(server.get("/apis/stable.example.com/v1").await.0, 404);
    assert_eq!(server.get("/apis/stable.example.com").await.0, 404);
    let (_, apis) = server.get("/apis").await;
    assert!(!apis.to_string().contains("stable.example.com"));
}

#[rstest]
#[tokio::test]
async fn aggregated_discovery_when_asked_for(#[future(awt)] server: TestServer) {
    let mut crd = crate::harness::crontab_crd();
    crd["spec"]["names"]["categories"] = json!(["all"]);
    crd["spec"]["versions"][0]["subresources"] = json!({"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}});
    assert_eq!(
        server
            .post(
                "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                &crd
            )
            .await
            .0,
        201
    );

    let resp = server
        .http
        .get(server.url("/apis"))
        .header("accept", AGGREGATED)
        .send()
        .await
        .expect("get");
    assert_eq!(
        resp.headers()["content-type"],
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    );
    let etag = resp.headers()["etag"].to_str().expect("etag").to_string();
    let doc: Value = resp.json().await.expect("json");
    assert_eq!(doc["kind"], "APIGroupDiscoveryList");
    assert_eq!(doc["apiVersion"], "apidiscovery.k8s.io/v2");
    let group = doc["items"]
        .as_array()
        .expect("items")
        .iter()
        .find(|g| g["metadata"]["name"] == "stable.example.com")
        .expect("group");
    let crontabs = &group["versions"][0]["resources"][0];
    assert_eq!(crontabs["resource"], "crontabs");
    assert_eq!(crontabs["scope"], "Namespaced");
    assert_eq!(crontabs["singularResource"], "crontab");
    assert_eq!(
        crontabs["responseKind"],
        json!({"group": "stable.example.com", "version": "v1", "kind": "CronTab"})
    );
    assert_eq!(crontabs["categories"], json!(["all"]));
    assert_eq!(crontabs["subresources"][0]["subresource"], "status");
    assert_eq!(crontabs["subresources"][1]["responseKind"]["kind"], "Scale");
    assert_eq!(group["versions"][0]["freshness"], "Current");

    // Unchanged documents answer 304 to If-None-Match.
    let again = server
        .http
        .get(server.url("/apis"))
        .header("accept", AGGREGATED)
        .header("if-none-match", &etag)
        .send()
        .await
        .expect("get");
    assert_eq!(again.status(), 304);

    // The legacy status/scale entries exist too.
    let (_, list) = server.get("/apis/stable.example.com/v1").await;
    let names: Vec<&str> = list["resources"]
        .as_array()
        .expect("list")
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert_eq!(names, ["crontabs", "crontabs/status", "crontabs/scale"]);
    assert_eq!(list["resources"][2]["group"], "autoscaling");

    // /api aggregated, and plain JSON when the client asks only for that.
    let resp = server
        .http
        .get(server.url("/api"))
        .header("accept", AGGREGATED)
        .send()
        .await
        .expect("get");
    let core: Value = resp.json().await.expect("json");
    let core_resources: Vec<&str> = core["items"][0]["versions"][0]["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .filter_map(|r| r["resource"].as_str())
        .collect();
    assert!(core_resources.contains(&"namespaces"), "{core_resources:?}");
    let resp = server
        .http
        .get(server.url("/apis"))
        .header("accept", "application/json")
        .send()
        .await
        .expect("get");
    assert_eq!(resp.headers()["content-type"], "application/json");
    let legacy: Value = resp.json().await.expect("json");
    assert_eq!(legacy["kind"], "APIGroupList");
}

#[rstest]
#[tokio::test]
async fn versions_are_ordered_by_kubernetes_priority(#[future(awt)] server: TestServer) {
    let mut crd = crate::harness::crontab_crd();
    let v1 = crd["spec"]["versions"][0].clone();
    let mut beta = v1.clone();
    beta["name"] = json!("v1beta1");
    beta["storage"] = json!(false);
    let mut v2 = v1.clone();
    v2["name"] = json!("v2");
    v2["storage"] = json!(false);
    crd["spec"]["versions"] = json!([beta, v1, v2]);
    assert_eq!(
        server
            .post(
                "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                &crd
            )
            .await
            .0,
        201
    );
    let (_, group) = server.get("/apis/stable.example.com").await;
    let versions: Vec<&str> = group["versions"]
        .as_array()
        .expect("versions")
        .iter()
        .filter_map(|v| v["version"].as_str())
        .collect();
    assert_eq!(versions, ["v2", "v1", "v1beta1"]);
    assert_eq!(group["preferredVersion"]["version"], "v2");
}

/// Legacy discovery documents are negotiated as the apiserver negotiates them: an `Accept` it
/// cannot serve is a 406 naming the types it accepts; the documents are in Go's field order.
#[rstest]
#[tokio::test]
async fn discovery_negotiates_its_media_types(#[future(awt)] server: TestServer) {
    for path in ["/api", "/apis", "/api/v1", "/apis/apps", "/apis/apps/v1"] {
        let req = server
            .http
            .get(server.url(path))
            .header("accept", "text/html");
        let (status, body) = server.send(req).await;
        assert_eq!(status, 406, "{path}: {body}");
        assert_eq!(body["reason"], "NotAcceptable");
        assert_eq!(
            body["message"],
            "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
        );
        let req = server
            .http
            .get(server.url(path))
            .header("accept", "text/html, */*");
        assert_eq!(server.send(req).await.0, 200, "{path}");
    }
    // An unknown path is a 404 whatever the Accept.
    let req = server
        .http
        .get(server.url("/apis/nothing.example.com"))
        .header("accept", "text/html");
    assert_eq!(server.send(req).await.0, 404);
    let text = server
        .http
        .get(server.url("/apis/apps/v1"))
        .send()
        .await
        .expect("sent")
        .text()
        .await
        .expect("a body");
    assert!(
        text.starts_with(r#"{"kind":"APIResourceList","apiVersion":"v1","groupVersion":"apps/v1","resources":[{"name":"controllerrevisions","singularName":"controllerrevision","namespaced":true,"kind":"ControllerRevision","verbs":["#),
        "{text}"
    );
}

/// Paths below a built-in group that name nothing (`/apis/apps/v7`, `/api/v2`) are go-restful's
/// 404 `Status`; below an unknown group or a CRD's group, the plain-text 404 of the apiserver's
/// not-found handler.
#[rstest]
#[tokio::test]
async fn unknown_versions_of_built_in_groups_are_a_status(#[future(awt)] server: TestServer) {
    server.install_crontab_crd().await;
    for path in [
        "/apis/apps/v7",
        "/api/v2",
        "/apis/apps/v7/deployments",
        "/apis/batch/v1/nothings",
    ] {
        let (status, body) = server.get(path).await;
        assert_eq!(status, 404, "{path}");
        assert_eq!(
            body,
            json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": "the server could not find the requested resource",
                "reason": "NotFound", "details": {}, "code": 404}),
            "{path}"
        );
    }
    for path in [
        "/apis/stable.example.com/v7",
        "/apis/nothing.example.com/v1",
    ] {
        let resp = server
            .http
            .get(server.url(path))
            .send()
            .await
            .expect("sent");
        assert_eq!(resp.status().as_u16(), 404, "{path}");
        assert_eq!(
            resp.text().await.expect("a body"),
            "404 page not found\n",
            "{path}"
        );
    }
}
