//! CRD conversion through a real HTTPS webhook (`kubefake::testing::WebhookServer`): CronTab v1
//! (storage, `spec.cronSpec`) and v2 (`spec.schedule`), converted by a Rust handler. Reads,
//! lists (one call per list), watches and writes in the non-storage version; webhooks named by
//! URL, by a Service mapped on the builder and by a Service's `*.localhost` EndpointSlice;
//! v1beta1 reviews; and every way a conversion fails, with the apiserver's messages.

use std::time::Duration;

use futures_util::StreamExt;
use kubefake::testing::WebhookServer;
use serde_json::{json, Value};

use crate::harness::{crontab_crd, server, server_with, TestServer};

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const V1: &str = "/apis/stable.example.com/v1/namespaces/default/crontabs";
const V2: &str = "/apis/stable.example.com/v2/namespaces/default/crontabs";

/// v1 `cronSpec` <-> v2 `schedule`; everything else is kept.
fn convert_object(mut obj: Value, to: &str) -> Value {
    let (from_key, to_key) = if to.ends_with("/v2") {
        ("cronSpec", "schedule")
    } else {
        ("schedule", "cronSpec")
    };
    if let Some(spec) = obj["spec"].as_object_mut() {
        if let Some(v) = spec.remove(from_key) {
            spec.insert(to_key.into(), v);
        }
    }
    obj["apiVersion"] = json!(to);
    obj
}

/// A conversion webhook answering in the review version it was asked in.
async fn converter(review: Value) -> Value {
    let request = &review["request"];
    let to = request["desiredAPIVersion"].as_str().unwrap_or("");
    let objects: Vec<Value> = request["objects"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .map(|o| convert_object(o, to))
        .collect();
    json!({"apiVersion": review["apiVersion"], "kind": "ConversionReview",
        "response": {"uid": request["uid"], "result": {"status": "Success"},
            "convertedObjects": objects}})
}

async fn start_converter(builder: kubefake::testing::WebhookServerBuilder) -> WebhookServer {
    builder
        .start(|_path, review| converter(review))
        .await
        .expect("webhook starts")
}

/// The CronTab CRD with v2 (`schedule`), converted by the webhook at `client_config`.
fn crd(client_config: Value, review_versions: &[&str]) -> Value {
    let mut crd = crontab_crd();
    let mut v2 = crd["spec"]["versions"][0].clone();
    v2["name"] = json!("v2");
    v2["storage"] = json!(false);
    let props = &mut v2["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"];
    props["schedule"] = props["cronSpec"].take();
    if let Some(p) = props.as_object_mut() {
        p.remove("cronSpec");
    }
    crd["spec"]["versions"]
        .as_array_mut()
        .expect("versions")
        .push(v2);
    crd["spec"]["conversion"] = json!({"strategy": "Webhook", "webhook": {
        "clientConfig": client_config, "conversionReviewVersions": review_versions}});
    crd
}

async fn install(server: &TestServer, crd: &Value) {
    let (status, body) = server.post(CRDS, crd).await;
    assert_eq!(status, 201, "{body}");
}

fn crontab(name: &str) -> Value {
    json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
        "metadata": {"name": name, "labels": {"app": "x"}},
        "spec": {"cronSpec": "* * * * */5", "image": "img"}})
}

async fn create_v1(server: &TestServer, name: &str) {
    let (status, body) = server.post(V1, &crontab(name)).await;
    assert_eq!(status, 201, "{body}");
}

#[tokio::test]
async fn reads_lists_watches_and_writes_through_the_webhook() {
    let server = server().await;
    let hook = start_converter(WebhookServer::builder()).await;
    let config = json!({"url": hook.url("/convert"), "caBundle": hook.ca_bundle()});
    install(&server, &crd(config, &["v1"])).await;

    create_v1(&server, "a").await;
    assert_eq!(
        hook.requests(),
        0,
        "v1 is the storage version: nothing to convert"
    );
    let (status, a) = server.get(&format!("{V2}/a")).await;
    assert_eq!(status, 200, "{a}");
    assert_eq!(a["apiVersion"], "stable.example.com/v2");
    assert_eq!(
        a["spec"],
        json!({"schedule": "* * * * */5", "image": "img"})
    );
    assert_eq!(hook.requests(), 1);

    for name in ["b", "c", "d"] {
        create_v1(&server, name).await;
    }
    let before = hook.requests();
    let (status, list) = server.get(V2).await;
    assert_eq!(status, 200);
    let items = list["items"].as_array().expect("items");
    assert_eq!(items.len(), 4);
    assert!(items.iter().all(|i| i["spec"]["schedule"] == "* * * * */5"));
    assert!(
        hook.requests() - before <= 1,
        "one review for the whole list (a was converted already)"
    );

    // A write through v2 is converted to v1 for storage.
    let patch = server
        .http
        .patch(server.url(&format!("{V2}/a")))
        .header("content-type", "application/merge-patch+json")
        .body(json!({"spec": {"schedule": "0 * * * *"}}).to_string());
    let (status, patched) = server.send(patch).await;
    assert_eq!(status, 200, "{patched}");
    assert_eq!(patched["spec"]["schedule"], "0 * * * *");
    let (_, stored) = server.get(&format!("{V1}/a")).await;
    assert_eq!(stored["spec"]["cronSpec"], "0 * * * *");
    assert!(stored["spec"].get("schedule").is_none());
}

#[tokio::test]
async fn watches_in_the_other_version_are_converted() {
    let server = server().await;
    let hook = start_converter(WebhookServer::builder()).await;
    let config = json!({"url": hook.url("/convert"), "caBundle": hook.ca_bundle()});
    install(&server, &crd(config, &["v1"])).await;
    let resp = server
        .http
        .get(server.url(&format!("{V2}?watch=1")))
        .send()
        .await
        .expect("watch");
    assert_eq!(resp.status(), 200);
    let mut body = resp.bytes_stream();
    create_v1(&server, "w").await;
    let mut buf = Vec::new();
    while !buf.contains(&b'\n') {
        buf.extend_from_slice(&body.next().await.expect("an event").expect("bytes"));
    }
    let line = buf.split(|b| *b == b'\n').next().expect("a line");
    let event: Value = serde_json::from_slice(line).expect("json");
    assert_eq!(event["type"], "ADDED");
    assert_eq!(event["object"]["apiVersion"], "stable.example.com/v2");
    assert_eq!(event["object"]["spec"]["schedule"], "* * * * */5");
}

#[tokio::test]
async fn services_resolve_through_the_builder_and_through_endpoints() {
    let hook = start_converter(WebhookServer::builder().dns_name("conv.webhooks.svc")).await;
    let config = json!({"service": {"namespace": "webhooks", "name": "conv", "path": "/convert"},
        "caBundle": hook.ca_bundle()});

    // Mapped on the builder (or `kubefake serve --webhook-service webhooks/conv:443=...`).
    let mapped = server_with(kubefake::Server::builder().webhook_service(
        "webhooks",
        "conv",
        443,
        hook.addr(),
    ))
    .await;
    install(&mapped, &crd(config.clone(), &["v1"])).await;
    create_v1(&mapped, "s").await;
    let (status, obj) = mapped.get(&format!("{V2}/s")).await;
    assert_eq!(status, 200, "{obj}");
    assert_eq!(obj["spec"]["schedule"], "* * * * */5");

    // Unmapped, and no Endpoints: the lookup fails as cluster DNS would.
    let server = server().await;
    install(&server, &crd(config, &["v1"])).await;
    create_v1(&server, "s").await;
    let (status, err) = server.get(&format!("{V2}/s")).await;
    assert_eq!(status, 500);
    // A plain error in Go: ErrorToAPIStatus gives it no reason and no prefix.
    assert_eq!(err.get("reason"), None, "{err}");
    assert_eq!(
        err["message"],
        "conversion webhook for stable.example.com/v1, Kind=CronTab failed: Post \"https://conv.webhooks.svc:443/convert?timeout=30s\": dial tcp: lookup conv.webhooks.svc: no such host"
    );

    // An EndpointSlice may not hold a loopback IP (the apiserver's validation, kept), but an
    // FQDN slice naming `*.localhost` is valid and, as RFC 6761 has it, is loopback.
    let (status, _) = server
        .post(
            "/api/v1/namespaces",
            &json!({"metadata": {"name": "webhooks"}}),
        )
        .await;
    assert_eq!(status, 201);
    let slices = "/apis/discovery.k8s.io/v1/namespaces/webhooks/endpointslices";
    let slice = |name: &str, address_type: &str, address: &str| {
        json!({"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
            "metadata": {"name": name, "labels": {"kubernetes.io/service-name": "conv"}},
            "addressType": address_type, "ports": [{"port": hook.addr().port()}],
            "endpoints": [{"addresses": [address]}]})
    };
    let (status, err) = server
        .post(slices, &slice("conv-ip", "IPv4", "127.0.0.1"))
        .await;
    assert_eq!(status, 422);
    assert_eq!(
        err["message"],
        "EndpointSlice.discovery.k8s.io \"conv-ip\" is invalid: endpoints[0].addresses[0]: Invalid value: \"127.0.0.1\": may not be in the loopback range (127.0.0.0/8, ::1/128)"
    );
    let (status, err) = server
        .post(slices, &slice("conv-local", "FQDN", "conv.localhost"))
        .await;
    assert_eq!(status, 201, "{err}");
    let (status, obj) = server.get(&format!("{V2}/s")).await;
    assert_eq!(status, 200, "{obj}");
    assert_eq!(obj["spec"]["schedule"], "* * * * */5");
}

#[tokio::test]
async fn v1beta1_reviews() {
    let server = server().await;
    let hook = WebhookServer::builder()
        .start(|_path, review: Value| async move {
            assert_eq!(review["apiVersion"], "apiextensions.k8s.io/v1beta1");
            // v1beta1 answers are not checked for their uid.
            let mut answer = converter(review).await;
            answer["response"]["uid"] = json!("whatever");
            answer
        })
        .await
        .expect("webhook starts");
    let config = json!({"url": hook.url("/convert"), "caBundle": hook.ca_bundle()});
    install(&server, &crd(config, &["v1beta1", "v1"])).await;
    create_v1(&server, "b").await;
    let (status, obj) = server.get(&format!("{V2}/b")).await;
    assert_eq!(status, 200, "{obj}");
    assert_eq!(obj["spec"]["schedule"], "* * * * */5");
}

/// How a misbehaving webhook changes a correct answer.
type Answer = fn(Value) -> Value;

/// A webhook answering `answer(review)`.
async fn misbehaving(answer: Answer) -> WebhookServer {
    WebhookServer::builder()
        .start(move |_path, review| async move { answer(converter(review).await) })
        .await
        .expect("webhook starts")
}

/// GET through v2 of an object stored in v1, with the CRD's webhook at `config`: the `Status`.
async fn failed_read(config: Value) -> (u16, String) {
    let server = server().await;
    install(&server, &crd(config, &["v1"])).await;
    create_v1(&server, "a").await;
    let before = server.rv();
    let (status, body) = server.get(&format!("{V2}/a")).await;
    assert_eq!(server.rv(), before, "a failed read changes nothing");
    (status, body["message"].as_str().unwrap_or("").to_string())
}

const PREFIX: &str = "conversion webhook for stable.example.com/v1, Kind=CronTab";

#[tokio::test]
async fn failures_are_the_apiservers_errors() {
    let cases: [(Answer, &str); 5] = [
        (
            |mut a| {
                a["response"]["result"] = json!({"status": "Failure", "message": "cannot convert"});
                a
            },
            " failed: cannot convert",
        ),
        (
            |mut a| {
                a["response"]["result"] = json!({"status": "Failure"});
                a
            },
            " failed: response.result.status was 'Failure', not 'Success'",
        ),
        (
            |mut a| {
                a["response"]["convertedObjects"] = json!([]);
                a
            },
            " returned 0 objects, expected 1",
        ),
        (
            |mut a| {
                a["response"]["convertedObjects"][0]["metadata"]["name"] = json!("b");
                a
            },
            " returned invalid object: must have the same name: a != b",
        ),
        (
            |mut a| {
                a["response"]["convertedObjects"][0]["apiVersion"] = json!("stable.example.com/v1");
                a
            },
            " returned invalid object at index 0: invalid groupVersion (expected stable.example.com/v2, received stable.example.com/v1)",
        ),
    ];
    for (answer, message) in cases {
        let hook = misbehaving(answer).await;
        let config = json!({"url": hook.url("/convert"), "caBundle": hook.ca_bundle()});
        assert_eq!(
            failed_read(config).await,
            (500, format!("{PREFIX}{message}"))
        );
    }

    let hook = misbehaving(|mut a| {
        a["response"]["uid"] = json!("wrong");
        a
    })
    .await;
    let config = json!({"url": hook.url("/convert"), "caBundle": hook.ca_bundle()});
    let (status, message) = failed_read(config).await;
    assert_eq!(status, 500);
    assert!(
        message.starts_with(&format!("{PREFIX} failed: expected response.uid=")),
        "{message}"
    );
    assert!(message.ends_with(", got \"wrong\""), "{message}");
}

#[tokio::test]
async fn unreachable_and_untrusted_webhooks() {
    let hook = start_converter(WebhookServer::builder()).await;
    let other = start_converter(WebhookServer::builder()).await;
    let url = hook.url("/convert");
    let untrusted = json!({"url": url, "caBundle": other.ca_bundle()});
    assert_eq!(
        failed_read(untrusted).await,
        (
            500,
            format!("{PREFIX} failed: Post \"{url}?timeout=30s\": tls: failed to verify certificate: x509: certificate signed by unknown authority")
        )
    );
    let addr = hook.addr();
    drop(hook);
    let closed = json!({"url": url, "caBundle": other.ca_bundle()});
    assert_eq!(
        failed_read(closed).await,
        (
            500,
            format!("{PREFIX} failed: Post \"{url}?timeout=30s\": dial tcp {addr}: connect: connection refused")
        )
    );
}

#[tokio::test]
async fn labels_and_annotations_may_change_nothing_else() {
    let hook = misbehaving(|mut a| {
        let meta = &mut a["response"]["convertedObjects"][0]["metadata"];
        meta["labels"] = json!({"converted": "yes"});
        meta["resourceVersion"] = json!("1");
        meta["finalizers"] = json!(["webhook/added"]);
        a
    })
    .await;
    let server = server().await;
    let config = json!({"url": hook.url("/convert"), "caBundle": hook.ca_bundle()});
    install(&server, &crd(config, &["v1"])).await;
    create_v1(&server, "a").await;
    let (_, stored) = server.get(&format!("{V1}/a")).await;
    let (status, obj) = server.get(&format!("{V2}/a")).await;
    assert_eq!(status, 200, "{obj}");
    assert_eq!(obj["metadata"]["labels"], json!({"converted": "yes"}));
    assert_eq!(
        obj["metadata"]["resourceVersion"],
        stored["metadata"]["resourceVersion"]
    );
    assert!(obj["metadata"].get("finalizers").is_none());

    let hook = misbehaving(|mut a| {
        a["response"]["convertedObjects"][0]["metadata"]["labels"] = json!({"bad key!": "x"});
        a
    })
    .await;
    let config = json!({"url": hook.url("/convert"), "caBundle": hook.ca_bundle()});
    let (status, message) = failed_read(config).await;
    assert_eq!(status, 500);
    assert!(
        message.starts_with(&format!(
            "{PREFIX} returned invalid metadata: metadata.labels: Invalid value: \"bad key!\""
        )),
        "{message}"
    );
}

/// The first `n` events of a watch at `path`.
async fn watch_events(server: &TestServer, path: &str, n: usize) -> Vec<Value> {
    let resp = server
        .http
        .get(server.url(path))
        .send()
        .await
        .expect("watch");
    assert_eq!(resp.status(), 200);
    let mut body = resp.bytes_stream();
    let mut buf = Vec::new();
    let mut events = Vec::new();
    while events.len() < n {
        let next = tokio::time::timeout(Duration::from_secs(10), body.next()).await;
        let bytes = next
            .expect("events in time")
            .expect("an event")
            .expect("bytes");
        buf.extend_from_slice(&bytes);
        while let Some(end) = buf.iter().position(|b| *b == b'\n') {
            let line: Vec<u8> = buf.drain(..=end).collect();
            events.push(serde_json::from_slice(&line).expect("json"));
        }
    }
    events
}

#[tokio::test]
async fn watch_bursts_are_one_review() {
    let server = server().await;
    let hook = start_converter(WebhookServer::builder()).await;
    let config = json!({"url": hook.url("/convert"), "caBundle": hook.ca_bundle()});
    install(&server, &crd(config, &["v1"])).await;
    let from = server.rv();
    for name in ["a", "b", "c", "d", "e"] {
        create_v1(&server, name).await;
    }
    let before = hook.requests();
    let replayed = watch_events(&server, &format!("{V2}?watch=1&resourceVersion={from}"), 5).await;
    assert!(replayed
        .iter()
        .all(|e| e["object"]["spec"]["schedule"] == "* * * * */5"));
    assert_eq!(hook.requests() - before, 1, "a replay is one review");

    for name in ["a", "b", "c", "d", "e"] {
        let patch = server
            .http
            .patch(server.url(&format!("{V1}/{name}")))
            .header("content-type", "application/merge-patch+json")
            .body(json!({"metadata": {"labels": {"round": "2"}}}).to_string());
        assert_eq!(server.send(patch).await.0, 200);
    }
    let before = hook.requests();
    let initial = watch_events(&server, &format!("{V2}?watch=1"), 5).await;
    assert!(initial.iter().all(|e| e["type"] == "ADDED"));
    assert_eq!(
        hook.requests() - before,
        1,
        "the initial state is one review"
    );
}

/// Admission webhooks registered for v2 only see a write through v1 in v2 under
/// `matchPolicy: Equivalent` (the default), and not at all under `Exact`.
#[tokio::test]
async fn admission_webhooks_of_another_version_see_it_converted() {
    use parking_lot::Mutex;
    use std::sync::Arc;
    let server = server().await;
    let converter = start_converter(WebhookServer::builder()).await;
    install(
        &server,
        &crd(
            json!({"url": converter.url("/convert"), "caBundle": converter.ca_bundle()}),
            &["v1"],
        ),
    )
    .await;
    let seen: Arc<Mutex<Vec<Value>>> = Arc::default();
    let record = seen.clone();
    // A mutating webhook for v2 that sets `spec.schedule` (a v2 field) and records the review.
    let hook = WebhookServer::start(move |_path, review: Value| {
        record.lock().push(review.clone());
        async move {
            use base64::Engine as _;
            let ops = json!([{"op": "replace", "path": "/spec/schedule", "value": "0 0 * * *"}]);
            let patch = base64::engine::general_purpose::STANDARD.encode(ops.to_string());
            json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                "response": {"uid": review["request"]["uid"], "allowed": true,
                    "patchType": "JSONPatch", "patch": patch}})
        }
    })
    .await
    .expect("webhook starts");
    let webhook = |name: &str, policy: &str| {
        json!({"name": name, "sideEffects": "None",
        "admissionReviewVersions": ["v1"], "matchPolicy": policy,
        "clientConfig": {"url": hook.url("/mutate"), "caBundle": hook.ca_bundle()},
        "rules": [{"apiGroups": ["stable.example.com"], "apiVersions": ["v2"],
            "operations": ["CREATE"], "resources": ["crontabs"]}]})
    };
    // Its match conditions see the object in v2 too.
    let mut conditional = webhook("conditional.example.com", "Equivalent");
    conditional["matchConditions"] = json!([{"name": "v2-shape", "expression":
        "has(object.spec.schedule) && object.apiVersion == 'stable.example.com/v2' && request.kind.version == 'v2'"}]);
    let config = json!({"metadata": {"name": "v2-only"}, "webhooks": [
        webhook("equivalent.example.com", "Equivalent"), webhook("exact.example.com", "Exact"),
        conditional]});
    let path = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations";
    assert_eq!(server.post(path, &config).await.0, 201);

    let (status, created) = server.post(V1, &crontab("through-v1")).await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["apiVersion"], "stable.example.com/v1");
    assert_eq!(
        created["spec"]["cronSpec"], "0 0 * * *",
        "patched in v2, converted back"
    );
    let reviews = seen.lock().clone();
    assert_eq!(reviews.len(), 2, "only the Equivalent webhooks are called");
    let request = &reviews[0]["request"];
    assert_eq!(
        request["kind"],
        json!({"group": "stable.example.com", "version": "v2", "kind": "CronTab"})
    );
    assert_eq!(
        request["requestKind"],
        json!({"group": "stable.example.com", "version": "v1", "kind": "CronTab"})
    );
    assert_eq!(request["resource"]["version"], "v2");
    assert_eq!(request["requestResource"]["version"], "v1");
    assert_eq!(request["object"]["apiVersion"], "stable.example.com/v2");
    assert_eq!(request["object"]["spec"]["schedule"], "* * * * */5");
    assert_eq!(request["object"]["spec"].get("cronSpec"), None);
    // Through v2 itself both are called.
    let mut v2 = crontab("through-v2");
    v2["apiVersion"] = json!("stable.example.com/v2");
    v2["spec"] = json!({"schedule": "1 1 * * *", "image": "img"});
    assert_eq!(server.post(V2, &v2).await.0, 201);
    assert_eq!(seen.lock().len(), 5);
}

/// Admission policies matching v2 only see a write through v1 in v2 under `matchPolicy:
/// Equivalent` (the default), and not under `Exact`; a mutating policy's change made in v2
/// comes back converted.
#[tokio::test]
async fn admission_policies_of_another_version_see_it_converted() {
    let server = server().await;
    let converter = start_converter(WebhookServer::builder()).await;
    install(
        &server,
        &crd(
            json!({"url": converter.url("/convert"), "caBundle": converter.ca_bundle()}),
            &["v1"],
        ),
    )
    .await;
    let api = "/apis/admissionregistration.k8s.io/v1";
    let constraints = |policy: &str| {
        json!({"matchPolicy": policy, "resourceRules": [{
        "apiGroups": ["stable.example.com"], "apiVersions": ["v2"],
        "operations": ["CREATE"], "resources": ["crontabs"]}]})
    };
    for (name, policy, expression) in [
        (
            "equivalent",
            "Equivalent",
            "object.spec.schedule != 'never' && request.kind.version == 'v2' && request.requestKind.version == 'v1' && request.requestResource.version == 'v1'",
        ),
        ("exact", "Exact", "false"),
    ] {
        let vap = json!({"metadata": {"name": name}, "spec": {
            "matchConstraints": constraints(policy),
            "validations": [{"expression": expression, "message": format!("{name} refused")}]}});
        assert_eq!(
            server
                .post(&format!("{api}/validatingadmissionpolicies"), &vap)
                .await
                .0,
            201
        );
        let binding = json!({"metadata": {"name": name},
            "spec": {"policyName": name, "validationActions": ["Deny"]}});
        assert_eq!(
            server
                .post(
                    &format!("{api}/validatingadmissionpolicybindings"),
                    &binding
                )
                .await
                .0,
            201
        );
    }
    let map = json!({"metadata": {"name": "image"}, "spec": {
        "matchConstraints": constraints("Equivalent"), "reinvocationPolicy": "Never",
        "mutations": [{"patchType": "JSONPatch", "jsonPatch": {"expression":
            "[JSONPatch{op: 'replace', path: '/spec/image', value: object.spec.schedule}]"}}]}});
    assert_eq!(
        server
            .post(&format!("{api}/mutatingadmissionpolicies"), &map)
            .await
            .0,
        201
    );
    let binding = json!({"metadata": {"name": "image"}, "spec": {"policyName": "image"}});
    assert_eq!(
        server
            .post(&format!("{api}/mutatingadmissionpolicybindings"), &binding)
            .await
            .0,
        201
    );

    let mut never = crontab("never");
    never["spec"]["cronSpec"] = json!("never");
    let (status, err) = server.post(V1, &never).await;
    assert_eq!(status, 422, "{err}");
    assert_eq!(
        err["message"],
        "crontabs.stable.example.com \"never\" is forbidden: ValidatingAdmissionPolicy 'equivalent' with binding 'equivalent' denied request: equivalent refused"
    );
    let (status, created) = server.post(V1, &crontab("fine")).await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(
        created["spec"]["image"], "* * * * */5",
        "mutated in v2 from v2's schedule"
    );
}

/// Server-side apply through both versions of a webhook-converted CRD: each manager's fields
/// are in the version it applied through (v1 `spec.cronSpec`, v2 `spec.schedule`), and a
/// conflict is found by converting to the owner's version, as structured-merge-diff does.
#[tokio::test]
async fn server_side_apply_across_renamed_fields() {
    let server = server().await;
    let hook = start_converter(WebhookServer::builder()).await;
    let config = json!({"url": hook.url("/convert"), "caBundle": hook.ca_bundle()});
    install(&server, &crd(config, &["v1"])).await;
    let apply = |version: &str, manager: &str, spec: Value, force: bool| {
        let base = if version == "v1" { V1 } else { V2 };
        let url = server.url(&format!("{base}/ssa?fieldManager={manager}&force={force}"));
        let body = json!({"apiVersion": format!("stable.example.com/{version}"),
            "kind": "CronTab", "metadata": {"name": "ssa"}, "spec": spec});
        server.send(
            server
                .http
                .patch(url)
                .header("content-type", "application/apply-patch+yaml")
                .body(body.to_string()),
        )
    };
    let (status, body) = apply("v1", "one", json!({"cronSpec": "1 * * * *"}), false).await;
    assert_eq!(status, 201, "{body}");
    let (status, err) = apply("v2", "two", json!({"schedule": "2 * * * *"}), false).await;
    assert_eq!(status, 409, "{err}");
    assert_eq!(
        err["message"],
        "Apply failed with 1 conflict: conflict with \"one\": .spec.cronSpec"
    );
    // The same value is shared; dropping it later leaves it to `one`.
    let (status, body) = apply(
        "v2",
        "two",
        json!({"schedule": "1 * * * *", "image": "x"}),
        false,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let (status, body) = apply("v2", "two", json!({"image": "x"}), false).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["spec"]["schedule"], "1 * * * *", "`one` still owns it");
    // Forced: the field moves to `two`, and `one` owns nothing any more.
    let (status, body) = apply(
        "v2",
        "two",
        json!({"schedule": "2 * * * *", "image": "x"}),
        true,
    )
    .await;
    assert_eq!(status, 200, "{body}");
    let entries = body["metadata"]["managedFields"]
        .as_array()
        .expect("managedFields");
    let owners: Vec<(&str, &Value)> = entries
        .iter()
        .map(|e| {
            (
                e["manager"].as_str().unwrap_or(""),
                &e["fieldsV1"]["f:spec"],
            )
        })
        .collect();
    assert_eq!(
        owners,
        [("two", &json!({"f:image": {}, "f:schedule": {}}))],
        "{entries:?}"
    );
    // A merge patch through v1 by another manager takes the field back, in v2's path.
    let patch = server
        .http
        .patch(server.url(&format!("{V1}/ssa?fieldManager=three")))
        .header("content-type", "application/merge-patch+json")
        .body(json!({"spec": {"cronSpec": "3 * * * *"}}).to_string());
    let (status, body) = server.send(patch).await;
    assert_eq!(status, 200, "{body}");
    let (_, obj) = server.get(&format!("{V2}/ssa")).await;
    let two = obj["metadata"]["managedFields"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|e| e["manager"] == "two")
        .cloned()
        .unwrap_or_default();
    assert_eq!(two["fieldsV1"]["f:spec"], json!({"f:image": {}}));
}
