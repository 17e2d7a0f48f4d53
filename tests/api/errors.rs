//! Bad input: every rejection is the apiserver's Status, and nothing changes in the store.

use rstest::rstest;
use serde_json::{json, Value};

use crate::harness::{server, TestServer};

const CRONTABS: &str = "/apis/stable.example.com/v1/namespaces/default/crontabs";

async fn ready(server: &TestServer) {
    server.install_crontab_crd().await;
    server.create_crontab("default", "existing").await;
}

/// Sends a request and checks the status code, the Status reason and (a part of) its message,
/// and that the store did not change.
async fn rejected(
    server: &TestServer,
    req: reqwest::RequestBuilder,
    code: u16,
    reason: &str,
    message: &str,
) -> Value {
    let rv = server.rv();
    let (status, body) = server.send(req).await;
    assert_eq!(status, code, "{body}");
    assert_eq!(body["kind"], "Status", "{body}");
    assert_eq!(body["apiVersion"], "v1");
    assert_eq!(body["status"], "Failure");
    assert_eq!(body["code"], code);
    assert_eq!(body["reason"], reason, "{body}");
    let msg = body["message"].as_str().expect("message");
    assert!(msg.contains(message), "{msg}\nshould contain\n{message}");
    assert_eq!(server.rv(), rv, "a rejected request changes nothing");
    body
}

fn crontab(name: &str) -> Value {
    json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab", "metadata": {"name": name}, "spec": {"image": "i"}})
}

#[rstest]
#[tokio::test]
async fn conflicts_and_missing_objects(#[future(awt)] server: TestServer) {
    ready(&server).await;
    let body = rejected(
        &server,
        server
            .http
            .post(server.url(CRONTABS))
            .json(&crontab("existing")),
        409,
        "AlreadyExists",
        "crontabs.stable.example.com \"existing\" already exists",
    )
    .await;
    assert_eq!(
        body["details"],
        json!({"name": "existing", "group": "stable.example.com", "kind": "crontabs"})
    );
    // Byte for byte as the apiserver's JSON encoder writes it (Go's field order, a newline).
    let raw = server
        .http
        .post(server.url("/api/v1/namespaces/default/services"))
        .json(&json!({"metadata": {"name": "kubernetes"}, "spec": {"ports": [{"port": 443}]}}))
        .send()
        .await
        .expect("sent")
        .text()
        .await
        .expect("body");
    assert_eq!(
        raw,
        "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"metadata\":{},\"status\":\"Failure\",\"message\":\"services \\\"kubernetes\\\" already exists\",\"reason\":\"AlreadyExists\",\"details\":{\"name\":\"kubernetes\",\"kind\":\"services\"},\"code\":409}\n"
    );
    rejected(
        &server,
        server.http.get(server.url(&format!("{CRONTABS}/nope"))),
        404,
        "NotFound",
        "crontabs.stable.example.com \"nope\" not found",
    )
    .await;
    let body = rejected(
        &server,
        server
            .http
            .post(server.url("/apis/stable.example.com/v1/namespaces/missing/crontabs"))
            .json(&crontab("x")),
        404,
        "NotFound",
        "namespaces \"missing\" not found",
    )
    .await;
    assert_eq!(
        body["details"],
        json!({"name": "missing", "kind": "namespaces"})
    );
    // Listing in a namespace that does not exist is just empty.
    let (status, list) = server
        .get("/apis/stable.example.com/v1/namespaces/missing/crontabs")
        .await;
    assert_eq!(status, 200);
    assert_eq!(list["items"], json!([]));
}

#[rstest]
#[tokio::test]
async fn body_that_disagrees_with_the_url(#[future(awt)] server: TestServer) {
    ready(&server).await;
    let mut other_ns = crontab("x");
    other_ns["metadata"]["namespace"] = json!("kube-system");
    rejected(
        &server,
        server.http.post(server.url(CRONTABS)).json(&other_ns),
        400,
        "BadRequest",
        "the namespace of the provided object does not match the namespace sent on the request",
    )
    .await;
    let mut v2 = crontab("x");
    v2["apiVersion"] = json!("stable.example.com/v2");
    rejected(&server, server.http.post(server.url(CRONTABS)).json(&v2), 400, "BadRequest",
        "the API version in the data (stable.example.com/v2) does not match the expected API version (stable.example.com/v1)").await;
    let mut kind = crontab("x");
    kind["kind"] = json!("Other");
    rejected(&server, server.http.post(server.url(CRONTABS)).json(&kind), 422, "Invalid",
        "Other.stable.example.com \"x\" is invalid: kind: Invalid value: \"Other\": must be CronTab").await;
    let (_, existing) = server.get(&format!("{CRONTABS}/existing")).await;
    rejected(
        &server,
        server
            .http
            .put(server.url(&format!("{CRONTABS}/renamed")))
            .json(&existing),
        400,
        "BadRequest",
        "the name of the object (existing) does not match the name on the URL (renamed)",
    )
    .await;
    let mut no_kind = crontab("x");
    no_kind.as_object_mut().expect("object").remove("kind");
    rejected(
        &server,
        server.http.post(server.url(CRONTABS)).json(&no_kind),
        400,
        "BadRequest",
        "CronTab in version \"v1\" cannot be handled as a CronTab: Object 'Kind' is missing in",
    )
    .await;
    let mut with_rv = crontab("x");
    with_rv["metadata"]["resourceVersion"] = json!("5");
    let (status, body) = server
        .send(server.http.post(server.url(CRONTABS)).json(&with_rv))
        .await;
    assert_eq!(status, 500);
    assert_eq!(
        body["message"],
        "resourceVersion should not be set on objects to be created"
    );
}

#[rstest]
#[tokio::test]
async fn malformed_bodies_and_content_types(#[future(awt)] server: TestServer) {
    ready(&server).await;
    let json_body = |body: &'static str| {
        server
            .http
            .post(server.url(CRONTABS))
            .header("content-type", "application/json")
            .body(body)
    };
    rejected(&server, json_body("{\"apiVersion\": "), 400, "BadRequest",
        "the object provided is unrecognized (must be of type CronTab): couldn't get version/kind; json parse error:").await;
    rejected(
        &server,
        json_body("[1,2]"),
        400,
        "BadRequest",
        "the object provided is unrecognized (must be of type CronTab)",
    )
    .await;
    rejected(&server, json_body(""), 400, "BadRequest", "(<empty>)").await;
    rejected(&server, server.http.post(server.url(CRONTABS)).header("content-type", "text/plain").body("hi"), 415,
        "UnsupportedMediaType", "the body of the request was in an unknown format - accepted media types include: application/json, application/yaml").await;
    rejected(
        &server,
        server
            .http
            .post(server.url(CRONTABS))
            .header("content-type", "application/yaml")
            .body("a: [unclosed"),
        400,
        "BadRequest",
        "the object provided is unrecognized",
    )
    .await;
    rejected(
        &server,
        server
            .http
            .patch(server.url(&format!("{CRONTABS}/existing")))
            .header("content-type", "application/merge-patch+json")
            .body("{nope"),
        400,
        "BadRequest",
        "error decoding patch",
    )
    .await;

    // YAML bodies are accepted, as by the real server.
    let yaml = "apiVersion: stable.example.com/v1\nkind: CronTab\nmetadata:\n  name: from-yaml\nspec:\n  image: img\n";
    let (status, created) = server
        .send(
            server
                .http
                .post(server.url(CRONTABS))
                .header("content-type", "application/yaml")
                .body(yaml),
        )
        .await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["spec"]["image"], "img");
}

#[rstest]
#[tokio::test]
async fn invalid_names(#[future(awt)] server: TestServer) {
    ready(&server).await;
    let body = rejected(&server, server.http.post(server.url(CRONTABS)).json(&crontab("Bad_Name")), 422, "Invalid",
        "CronTab.stable.example.com \"Bad_Name\" is invalid: metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 subdomain must consist of").await;
    assert_eq!(body["details"]["causes"][0]["field"], "metadata.name");
    assert_eq!(body["details"]["causes"][0]["reason"], "FieldValueInvalid");
    let mut nameless = crontab("");
    nameless["metadata"] = json!({});
    rejected(
        &server,
        server.http.post(server.url(CRONTABS)).json(&nameless),
        422,
        "Invalid",
        "metadata.name: Required value: name or generateName is required",
    )
    .await;
    rejected(&server, server.http.post(server.url("/api/v1/namespaces")).json(&json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "a.b"}})),
        422, "Invalid", "Namespace \"a.b\" is invalid: metadata.name: Invalid value: \"a.b\": must not contain dots").await;
    rejected(&server, server.http.post(server.url("/api/v1/namespaces")).json(&json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "A"}})),
        422, "Invalid", "Namespace \"A\" is invalid: metadata.name: Invalid value: \"A\": a lowercase RFC 1123 label must consist of").await;
    let mut bad_label = crontab("labelled");
    bad_label["metadata"]["labels"] = json!({"bad key!": "v"});
    rejected(
        &server,
        server.http.post(server.url(CRONTABS)).json(&bad_label),
        422,
        "Invalid",
        "metadata.labels: Invalid value: \"bad key!\"",
    )
    .await;
}

#[rstest]
#[tokio::test]
async fn unknown_paths_and_methods(#[future(awt)] server: TestServer) {
    ready(&server).await;
    for path in [
        "/nope",
        "/apis/nope.example.com/v1/things",
        "/apis/stable.example.com/v1/namespaces/default/nothings",
        "/apis/stable.example.com/v9/crontabs",
    ] {
        let resp = server.http.get(server.url(path)).send().await.expect("get");
        assert_eq!(resp.status(), 404, "{path}");
        assert_eq!(
            resp.text().await.expect("body"),
            "404 page not found\n",
            "{path}"
        );
    }
    rejected(
        &server,
        server.http.get(server.url("/api/v1/notaresource")),
        404,
        "NotFound",
        "the server could not find the requested resource",
    )
    .await;
    rejected(
        &server,
        server
            .http
            .get(server.url(&format!("{CRONTABS}/existing/bogus"))),
        404,
        "NotFound",
        "crontabs.stable.example.com \"existing\" not found",
    )
    .await;
    rejected(
        &server,
        server
            .http
            .post(server.url(&format!("{CRONTABS}/existing")))
            .json(&crontab("existing")),
        405,
        "MethodNotAllowed",
        "",
    )
    .await;
    rejected(
        &server,
        server.http.delete(server.url("/api/v1/namespaces")),
        405,
        "MethodNotAllowed",
        "the server does not allow this method on the requested resource",
    )
    .await;
    rejected(
        &server,
        server.http.delete(server.url("/api/v1/namespaces/default")),
        403,
        "Forbidden",
        "namespaces \"default\" is forbidden: this namespace may not be deleted",
    )
    .await;
}

#[rstest]
#[tokio::test]
async fn huge_bodies_are_refused(#[future(awt)] server: TestServer) {
    ready(&server).await;
    let mut big = crontab("big");
    big["spec"]["blob"] = json!("x".repeat(4 * 1024 * 1024));
    rejected(
        &server,
        server.http.post(server.url(CRONTABS)).json(&big),
        413,
        "RequestEntityTooLarge",
        "Request entity too large: limit is 3145728",
    )
    .await;
    // The server is still fine.
    assert_eq!(server.get(&format!("{CRONTABS}/existing")).await.0, 200);
}

#[rstest]
#[tokio::test]
async fn bad_selectors(#[future(awt)] server: TestServer) {
    ready(&server).await;
    rejected(
        &server,
        server
            .http
            .get(server.url(&format!("{CRONTABS}?labelSelector=a%20b"))),
        400,
        "BadRequest",
        "unable to parse requirement",
    )
    .await;
    rejected(
        &server,
        server
            .http
            .get(server.url(&format!("{CRONTABS}?fieldSelector=spec.image%3Dx"))),
        400,
        "BadRequest",
        "spec.image",
    )
    .await;
}

#[rstest]
#[tokio::test]
async fn metadata_maps_hold_strings(#[future(awt)] server: TestServer) {
    ready(&server).await;
    let mut bad = crontab("typed-labels");
    bad["metadata"]["labels"] = json!({"a": 5});
    rejected(
        &server,
        server.http.post(server.url(CRONTABS)).json(&bad),
        400,
        "BadRequest",
        "CronTab in version \"v1\" cannot be handled as a CronTab: json: cannot unmarshal",
    )
    .await;
    rejected(
        &server,
        server
            .http
            .post(server.url("/api/v1/namespaces"))
            .json(&json!({"metadata": {"name": "n", "annotations": {"a": true}}})),
        400,
        "BadRequest",
        "Namespace in version \"v1\" cannot be handled as a Namespace",
    )
    .await;
}

#[rstest]
#[tokio::test]
async fn a_watch_from_a_future_resource_version_times_out(#[future(awt)] server: TestServer) {
    ready(&server).await;
    let far = server.rv() + 1000;
    let (status, body) = server
        .get(&format!("{CRONTABS}?watch=1&resourceVersion={far}"))
        .await;
    assert_eq!(status, 504, "{body}");
    assert_eq!(body["reason"], "Timeout");
}

/// Dry runs answer as the apiserver does: a create naming a resourceVersion is a 201 in a dry
/// run (only storage refuses it, with a 500, and a dry run never reaches storage), and a
/// validation error is a 422, dry run or not.
#[rstest]
#[tokio::test]
async fn dry_runs_answer_as_the_apiserver(#[future(awt)] server: TestServer) {
    let configmaps = "/api/v1/namespaces/default/configmaps";
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "versioned", "resourceVersion": "5"}});
    let rv = server.rv();
    let (status, body) = server.post(&format!("{configmaps}?dryRun=All"), &cm).await;
    assert_eq!(status, 201, "{body}");
    assert_eq!(body["metadata"]["name"], "versioned");
    assert_eq!(server.rv(), rv, "a dry run stores nothing");
    let (status, body) = server.post(configmaps, &cm).await;
    assert_eq!(status, 500, "{body}");
    assert_eq!(
        body["message"],
        "resourceVersion should not be set on objects to be created"
    );

    let deployments = "/apis/apps/v1/namespaces/default/deployments";
    let deployment = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {"selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": null}}}});
    let strict =
        format!("{deployments}?dryRun=All&fieldManager=kubectl-create&fieldValidation=Strict");
    for path in [
        format!("{deployments}?dryRun=All"),
        strict,
        deployments.to_string(),
    ] {
        let (status, body) = server.post(&path, &deployment).await;
        assert_eq!(status, 422, "{path}: {body}");
        assert_eq!(body["reason"], "Invalid");
        assert!(
            body["message"]
                .as_str()
                .unwrap_or_default()
                .contains("spec.template.spec.containers: Required value"),
            "{body}"
        );
    }
    // The same as a server-side apply in a dry run (`kubectl apply --server-side --dry-run=server`).
    let apply = server
        .http
        .patch(server.url(&format!(
            "{deployments}/web?dryRun=All&fieldManager=kubectl&fieldValidation=Strict&force=true"
        )))
        .header("content-type", "application/apply-patch+yaml")
        .body(deployment.to_string());
    let (status, body) = server.send(apply).await;
    assert_eq!(status, 422, "{body}");
    // And as an update of a valid Deployment.
    let mut valid = deployment.clone();
    valid["spec"]["template"]["spec"]["containers"] = json!([{"name": "c", "image": "nginx"}]);
    assert_eq!(server.post(deployments, &valid).await.0, 201);
    let rv = server.rv();
    let put = server
        .http
        .put(server.url(&format!("{deployments}/web?dryRun=All")))
        .json(&deployment);
    let (status, body) = server.send(put).await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(server.rv(), rv, "nothing stored");
}
