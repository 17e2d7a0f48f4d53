//! Admission webhooks through real HTTPS webhooks (`kubefake::testing::WebhookServer`): denials
//! with and without a message, JSONPatch mutations and reinvocation, custom resources pruned
//! after mutation, failurePolicy Fail and Ignore, timeouts, object and namespace selectors,
//! warnings, dry runs, deletes, the AdmissionReview's fields, and the admission
//! kinds never intercepted.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine;
use kubefake::testing::WebhookServer;
use parking_lot::Mutex;
use serde_json::{json, Value};

use crate::harness::{server, TestServer};

const VALIDATING: &str = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations";
const MUTATING: &str = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations";
const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";

/// An AdmissionReview answer to `review`.
fn answer(review: &Value, response: Value) -> Value {
    let mut response = response;
    response["uid"] = review["request"]["uid"].clone();
    json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response})
}

/// A JSONPatch response.
fn patch(review: &Value, ops: Value) -> Value {
    let encoded = base64::engine::general_purpose::STANDARD.encode(ops.to_string());
    answer(
        review,
        json!({"allowed": true, "patchType": "JSONPatch", "patch": encoded}),
    )
}

/// A JSONPatch adding label `key=value` (and the labels map when the object has none).
fn add_label(review: &Value, key: &str, value: &str) -> Value {
    let labels = &review["request"]["object"]["metadata"]["labels"];
    let op = if labels.is_object() {
        json!({"op": "add", "path": format!("/metadata/labels/{key}"), "value": value})
    } else {
        json!({"op": "add", "path": "/metadata/labels", "value": {key: value}})
    };
    patch(review, json!([op]))
}

/// A webhook server answering with `respond`, recording every review it gets.
async fn start(respond: fn(&Value) -> Value) -> (WebhookServer, Arc<Mutex<Vec<Value>>>) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = seen.clone();
    let hook = WebhookServer::start(move |_path, review: Value| {
        record.lock().push(review.clone());
        async move { respond(&review) }
    })
    .await
    .expect("webhook starts");
    (hook, seen)
}

/// A webhook entry for `hook`, on ConfigMaps by default.
fn webhook(name: &str, hook: &WebhookServer, extra: Value) -> Value {
    let mut w = json!({"name": name, "sideEffects": "None", "admissionReviewVersions": ["v1"],
        "clientConfig": {"url": hook.url("/admit"), "caBundle": hook.ca_bundle()},
        "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"],
            "resources": ["configmaps"]}]});
    for (k, v) in extra.as_object().into_iter().flatten() {
        w[k] = v.clone();
    }
    w
}

async fn configure(server: &TestServer, path: &str, name: &str, webhooks: Vec<Value>) {
    let body = json!({"metadata": {"name": name}, "webhooks": webhooks});
    let (status, created) = server.post(path, &body).await;
    assert_eq!(status, 201, "{created}");
}

fn configmap(name: &str, labels: Value) -> Value {
    json!({"metadata": {"name": name, "labels": labels}, "data": {"k": "v"}})
}

#[tokio::test]
async fn validating_webhooks_deny_with_and_without_a_message() {
    let server = server().await;
    let (hook, seen) = start(|review| {
        let name = review["request"]["name"].as_str().unwrap_or("");
        match name {
            "forbidden" => answer(
                review,
                json!({"allowed": false,
                "status": {"code": 403, "reason": "Forbidden", "message": "no forbidden maps"}}),
            ),
            "bare" => answer(review, json!({"allowed": false})),
            _ => answer(
                review,
                json!({"allowed": true, "warnings": ["looked at it"]}),
            ),
        }
    })
    .await;
    configure(
        &server,
        VALIDATING,
        "policy",
        vec![webhook("deny.example.com", &hook, json!({}))],
    )
    .await;

    let before = server.rv();
    let (status, err) = server
        .post(CONFIGMAPS, &configmap("forbidden", json!({})))
        .await;
    assert_eq!((status, err["reason"].as_str()), (403, Some("Forbidden")));
    assert_eq!(
        err["message"],
        "admission webhook \"deny.example.com\" denied the request: no forbidden maps"
    );
    let (status, err) = server.post(CONFIGMAPS, &configmap("bare", json!({}))).await;
    assert_eq!(status, 400);
    assert_eq!(
        err["message"],
        "admission webhook \"deny.example.com\" denied the request without explanation"
    );
    assert_eq!(server.rv(), before, "refused requests change nothing");

    let resp = server
        .http
        .post(server.url(CONFIGMAPS))
        .json(&configmap("fine", json!({})))
        .send()
        .await
        .expect("sent");
    assert_eq!(resp.status(), 201);
    assert_eq!(resp.headers()["warning"], "299 - \"looked at it\"");

    // The review carries what the apiserver fills.
    let reviews = seen.lock().clone();
    let request = &reviews.last().expect("a review")["request"];
    assert_eq!(
        reviews.last().expect("a review")["apiVersion"],
        "admission.k8s.io/v1"
    );
    assert_eq!(
        request["kind"],
        json!({"group": "", "version": "v1", "kind": "ConfigMap"})
    );
    assert_eq!(
        request["resource"],
        json!({"group": "", "version": "v1", "resource": "configmaps"})
    );
    assert_eq!(request["requestKind"], request["kind"]);
    assert_eq!(request["operation"], "CREATE");
    assert_eq!(request["name"], "fine");
    assert_eq!(request["namespace"], "default");
    assert_eq!(request["userInfo"]["username"], "system:admin");
    assert_eq!(request["object"]["data"], json!({"k": "v"}));
    assert_eq!(request["oldObject"], Value::Null);
    assert_eq!(request["dryRun"], false);
    assert_eq!(request["options"]["kind"], "CreateOptions");
}

#[tokio::test]
async fn mutating_webhooks_patch_in_order_and_reinvoke() {
    let server = server().await;
    // `first` (IfNeeded) stamps how many times it ran; `second` adds a label after it.
    let (first, first_seen) = start(|review| {
        let labels = &review["request"]["object"]["metadata"]["labels"];
        let runs = if labels.get("first").is_some() {
            "2"
        } else {
            "1"
        };
        add_label(review, "first", runs)
    })
    .await;
    let (second, _) = start(|review| add_label(review, "second", "yes")).await;
    configure(
        &server,
        MUTATING,
        "a-first",
        vec![webhook(
            "first.example.com",
            &first,
            json!({"reinvocationPolicy": "IfNeeded"}),
        )],
    )
    .await;
    configure(
        &server,
        MUTATING,
        "b-second",
        vec![webhook("second.example.com", &second, json!({}))],
    )
    .await;

    let (status, created) = server.post(CONFIGMAPS, &configmap("m", json!({}))).await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(
        created["metadata"]["labels"],
        json!({"first": "2", "second": "yes"})
    );
    let reviews = first_seen.lock().clone();
    assert_eq!(
        reviews.len(),
        2,
        "reinvoked once after `second` changed the object"
    );
    assert_eq!(
        reviews[1]["request"]["object"]["metadata"]["labels"]["second"],
        "yes"
    );
}

#[tokio::test]
async fn custom_resources_are_pruned_and_defaulted_after_mutation() {
    let server = server().await;
    server.install_crontab_crd().await;
    let (hook, _) = start(|review| {
        patch(
            review,
            json!([
                {"op": "add", "path": "/spec/replicas", "value": 3},
                {"op": "add", "path": "/spec/unknownField", "value": "pruned"}
            ]),
        )
    })
    .await;
    let rules = json!({"rules": [{"apiGroups": ["stable.example.com"], "apiVersions": ["*"],
        "operations": ["*"], "resources": ["crontabs"], "scope": "Namespaced"}]});
    configure(
        &server,
        MUTATING,
        "crontabs",
        vec![webhook("replicas.example.com", &hook, rules)],
    )
    .await;
    let ct = server.create_crontab("default", "c").await;
    assert_eq!(ct.spec.replicas, Some(3));
    let (_, raw) = server
        .get("/apis/stable.example.com/v1/namespaces/default/crontabs/c")
        .await;
    assert!(raw["spec"].get("unknownField").is_none(), "{raw}");
}

#[tokio::test]
async fn failure_policies_and_timeouts() {
    let server = server().await;
    let (gone, _) = start(|review| answer(review, json!({"allowed": true}))).await;
    let url = gone.url("/admit");
    let addr = gone.addr();
    let mut unreachable = webhook("unreachable.example.com", &gone, json!({}));
    drop(gone);
    configure(&server, VALIDATING, "fail", vec![unreachable.clone()]).await;
    let (status, err) = server.post(CONFIGMAPS, &configmap("a", json!({}))).await;
    assert_eq!(status, 500);
    assert_eq!(
        err["message"],
        format!("Internal error occurred: failed calling webhook \"unreachable.example.com\": failed to call webhook: Post \"{url}?timeout=10s\": dial tcp {addr}: connect: connection refused")
    );
    let (status, _) = server
        .send(
            server
                .http
                .delete(server.url(&format!("{VALIDATING}/fail"))),
        )
        .await;
    assert_eq!(status, 200);

    unreachable["failurePolicy"] = json!("Ignore");
    configure(&server, VALIDATING, "ignore", vec![unreachable]).await;
    assert_eq!(
        server.post(CONFIGMAPS, &configmap("b", json!({}))).await.0,
        201
    );

    let slow = WebhookServer::start(|_path, review: Value| async move {
        tokio::time::sleep(Duration::from_secs(5)).await;
        answer(&review, json!({"allowed": true}))
    })
    .await
    .expect("webhook starts");
    let timed = webhook("slow.example.com", &slow, json!({"timeoutSeconds": 1}));
    configure(&server, VALIDATING, "slow", vec![timed]).await;
    let (status, err) = server.post(CONFIGMAPS, &configmap("c", json!({}))).await;
    assert_eq!(status, 500);
    assert_eq!(
        err["message"],
        format!("Internal error occurred: failed calling webhook \"slow.example.com\": failed to call webhook: Post \"{}?timeout=1s\": context deadline exceeded", slow.url("/admit"))
    );
}

#[tokio::test]
async fn object_and_namespace_selectors() {
    let server = server().await;
    let (hook, seen) = start(|review| {
        answer(
            review,
            json!({"allowed": false, "status": {"message": "selected"}}),
        )
    })
    .await;
    let selectors = json!({"objectSelector": {"matchLabels": {"guarded": "yes"}},
        "namespaceSelector": {"matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["dev"]}]}});
    configure(
        &server,
        VALIDATING,
        "selective",
        vec![webhook("select.example.com", &hook, selectors)],
    )
    .await;

    assert_eq!(
        server
            .post(CONFIGMAPS, &configmap("free", json!({})))
            .await
            .0,
        201
    );
    let (status, _) = server
        .post(CONFIGMAPS, &configmap("guarded", json!({"guarded": "yes"})))
        .await;
    assert_eq!(status, 400);
    let ns = json!({"metadata": {"name": "dev", "labels": {"env": "dev"}}});
    assert_eq!(server.post("/api/v1/namespaces", &ns).await.0, 201);
    let (status, body) = server
        .post(
            "/api/v1/namespaces/dev/configmaps",
            &configmap("guarded", json!({"guarded": "yes"})),
        )
        .await;
    assert_eq!(status, 201, "the dev namespace is not selected: {body}");
    assert_eq!(
        seen.lock().len(),
        1,
        "only the selected request reached the webhook"
    );
}

#[tokio::test]
async fn dry_runs_reach_only_webhooks_without_side_effects() {
    let server = server().await;
    let (hook, seen) = start(|review| answer(review, json!({"allowed": true}))).await;
    configure(
        &server,
        VALIDATING,
        "effects",
        vec![webhook(
            "effects.example.com",
            &hook,
            json!({"sideEffects": "NoneOnDryRun"}),
        )],
    )
    .await;
    let dry = format!("{CONFIGMAPS}?dryRun=All");
    assert_eq!(server.post(&dry, &configmap("d", json!({}))).await.0, 201);
    assert_eq!(seen.lock()[0]["request"]["dryRun"], true);
    assert_eq!(
        seen.lock()[0]["request"]["options"]["dryRun"],
        json!(["All"])
    );

    // v1 allows only `None` and `NoneOnDryRun`: a webhook with side effects cannot be configured,
    // so the apiserver's "does not support dry run" refusal has nothing to refuse here.
    let (other, _) = start(|review| answer(review, json!({"allowed": true}))).await;
    let body = json!({"metadata": {"name": "some"},
        "webhooks": [webhook("some.example.com", &other, json!({"sideEffects": "Some"}))]});
    assert_eq!(server.post(VALIDATING, &body).await.0, 422);
}

#[tokio::test]
async fn deletes_and_updates_carry_the_old_object() {
    let server = server().await;
    let (hook, seen) = start(|review| {
        let allowed = review["request"]["operation"] != "DELETE";
        answer(
            review,
            json!({"allowed": allowed, "status": {"message": "keep it"}}),
        )
    })
    .await;
    let rules = json!({"rules": [{"apiGroups": [""], "apiVersions": ["v1"],
        "operations": ["UPDATE", "DELETE"], "resources": ["configmaps"]}]});
    configure(
        &server,
        VALIDATING,
        "keep",
        vec![webhook("keep.example.com", &hook, rules)],
    )
    .await;
    assert_eq!(
        server.post(CONFIGMAPS, &configmap("k", json!({}))).await.0,
        201
    );
    let update = server
        .http
        .patch(server.url(&format!("{CONFIGMAPS}/k")))
        .header("content-type", "application/merge-patch+json")
        .body(json!({"data": {"k": "w"}}).to_string());
    assert_eq!(server.send(update).await.0, 200);
    let (status, err) = server
        .send(server.http.delete(server.url(&format!("{CONFIGMAPS}/k"))))
        .await;
    assert_eq!(status, 400);
    assert_eq!(
        err["message"],
        "admission webhook \"keep.example.com\" denied the request: keep it"
    );
    assert_eq!(server.get(&format!("{CONFIGMAPS}/k")).await.0, 200);
    let reviews = seen.lock().clone();
    assert_eq!(reviews[0]["request"]["operation"], "UPDATE");
    assert_eq!(
        reviews[0]["request"]["oldObject"]["data"],
        json!({"k": "v"})
    );
    assert_eq!(reviews[0]["request"]["object"]["data"], json!({"k": "w"}));
    assert_eq!(reviews[1]["request"]["operation"], "DELETE");
    assert_eq!(reviews[1]["request"]["object"], Value::Null);
    assert_eq!(reviews[1]["request"]["options"]["kind"], "DeleteOptions");
}

#[tokio::test]
async fn admission_configurations_are_never_intercepted() {
    let server = server().await;
    let (hook, seen) = start(|review| answer(review, json!({"allowed": false}))).await;
    let everything = json!({"rules": [{"apiGroups": ["*"], "apiVersions": ["*"],
        "operations": ["*"], "resources": ["*/*"]}]});
    configure(
        &server,
        VALIDATING,
        "deny-all",
        vec![webhook("all.example.com", &hook, everything)],
    )
    .await;
    assert_eq!(
        server.post(CONFIGMAPS, &configmap("x", json!({}))).await.0,
        400
    );
    let (status, _) = server
        .send(
            server
                .http
                .delete(server.url(&format!("{VALIDATING}/deny-all"))),
        )
        .await;
    assert_eq!(
        status, 200,
        "the configuration itself can always be removed"
    );
    assert_eq!(
        server.post(CONFIGMAPS, &configmap("x", json!({}))).await.0,
        201
    );
    assert_eq!(seen.lock().len(), 1);
}

#[tokio::test]
async fn match_conditions_select_in_cel() {
    let server = server().await;
    let (hook, seen) = start(|review| answer(review, json!({"allowed": false}))).await;
    let conditions = json!({"matchConditions": [
        {"name": "not-skipped", "expression": "object.metadata.name != 'skip-me'"},
        {"name": "creates", "expression": "request.operation == 'CREATE' && oldObject == null"}
    ]});
    configure(
        &server,
        VALIDATING,
        "conditional",
        vec![webhook("cond.example.com", &hook, conditions)],
    )
    .await;
    assert_eq!(
        server
            .post(CONFIGMAPS, &configmap("skip-me", json!({})))
            .await
            .0,
        201
    );
    assert_eq!(
        server
            .post(CONFIGMAPS, &configmap("checked", json!({})))
            .await
            .0,
        400
    );
    assert_eq!(seen.lock().len(), 1, "the false condition skipped the call");

    // A condition that cannot be evaluated fails the request under failurePolicy Fail.
    let broken = json!({"matchConditions": [{"name": "broken", "expression": "object.data.missing == 'x'"}]});
    configure(
        &server,
        VALIDATING,
        "broken",
        vec![webhook("broken.example.com", &hook, broken)],
    )
    .await;
    let (status, err) = server
        .post(CONFIGMAPS, &configmap("skip-me-too", json!({})))
        .await;
    assert_eq!((status, err["reason"].as_str()), (403, Some("Forbidden")));
    assert!(
        err["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("configmaps \"skip-me-too\" is forbidden: expression 'object.data.missing == 'x'' resulted in error: ")),
        "{err}"
    );
}

#[tokio::test]
async fn match_conditions_ask_the_authorizer() {
    let server = crate::harness::rbac_server_with_user("bob", &["writers"], "bob-token").await;
    let (hook, seen) = start(|review| answer(review, json!({"allowed": true}))).await;
    // Only writes by those who may not read secrets are sent to the webhook.
    let condition = json!({"matchConditions": [{"name": "not-secret-readers",
        "expression": "!authorizer.group('').resource('secrets').namespace('default').check('get').allowed()"}]});
    configure(
        &server,
        VALIDATING,
        "audit",
        vec![webhook("audit.example.com", &hook, condition)],
    )
    .await;
    let role = json!({"metadata": {"name": "cm"}, "rules": [
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create"]}]});
    let rbac = "/apis/rbac.authorization.k8s.io/v1/namespaces/default";
    assert_eq!(server.post(&format!("{rbac}/roles"), &role).await.0, 201);
    let binding = json!({"metadata": {"name": "writers"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm"},
        "subjects": [{"kind": "Group", "name": "writers"}]});
    assert_eq!(
        server
            .post(&format!("{rbac}/rolebindings"), &binding)
            .await
            .0,
        201
    );

    assert_eq!(
        server
            .post(CONFIGMAPS, &configmap("by-admin", json!({})))
            .await
            .0,
        201
    );
    assert_eq!(seen.lock().len(), 0, "the admin may read secrets: not sent");
    let as_bob = crate::harness::token_http(&server.handle, "Bearer bob-token");
    let body = configmap("by-bob", json!({}));
    let (status, out) = server
        .send(as_bob.post(server.url(CONFIGMAPS)).json(&body))
        .await;
    assert_eq!(status, 201, "{out}");
    let reviews = seen.lock();
    assert_eq!(reviews.len(), 1);
    assert_eq!(reviews[0]["request"]["userInfo"]["username"], "bob");
}

#[tokio::test]
async fn mutating_webhooks_see_deletes_but_cannot_patch_them() {
    let server = server().await;
    let (hook, seen) = start(|review| {
        let name = review["request"]["oldObject"]["metadata"]["name"]
            .as_str()
            .unwrap_or("");
        match name {
            "keep" => answer(
                review,
                json!({"allowed": false, "status": {"message": "kept"}}),
            ),
            "patch" => add_label(review, "deleted", "yes"),
            _ => answer(review, json!({"allowed": true})),
        }
    })
    .await;
    let rules = json!({"rules": [{"apiGroups": [""], "apiVersions": ["v1"],
        "operations": ["DELETE"], "resources": ["configmaps"]}]});
    configure(
        &server,
        MUTATING,
        "on-delete",
        vec![webhook("on-delete.example.com", &hook, rules)],
    )
    .await;
    for name in ["keep", "patch", "go"] {
        assert_eq!(
            server.post(CONFIGMAPS, &configmap(name, json!({}))).await.0,
            201
        );
    }
    let delete = |name: &str| {
        server
            .http
            .delete(server.url(&format!("{CONFIGMAPS}/{name}")))
    };
    let (status, err) = server.send(delete("keep")).await;
    assert_eq!(status, 400);
    assert_eq!(
        err["message"],
        "admission webhook \"on-delete.example.com\" denied the request: kept"
    );
    let (status, err) = server.send(delete("patch")).await;
    assert_eq!(status, 500);
    assert_eq!(
        err["message"],
        "Internal error occurred: admission webhook \"on-delete.example.com\" attempted to modify the object, which is not supported for this operation"
    );
    assert_eq!(server.send(delete("go")).await.0, 200);
    assert_eq!(server.get(&format!("{CONFIGMAPS}/keep")).await.0, 200);
    assert_eq!(server.get(&format!("{CONFIGMAPS}/patch")).await.0, 200);
    assert_eq!(server.get(&format!("{CONFIGMAPS}/go")).await.0, 404);
    let reviews = seen.lock().clone();
    assert_eq!(reviews.len(), 3);
    assert_eq!(reviews[0]["request"]["operation"], "DELETE");
    assert_eq!(reviews[0]["request"]["object"], Value::Null);
    assert_eq!(reviews[0]["request"]["options"]["kind"], "DeleteOptions");
}

#[tokio::test]
async fn connections_are_admitted_as_connect() {
    let server = server().await;
    let (hook, seen) = start(|review| {
        let command = &review["request"]["object"]["command"];
        let allowed = command != &json!(["rm", "-rf", "/"]);
        answer(
            review,
            json!({"allowed": allowed, "status": {"message": "not that"}}),
        )
    })
    .await;
    let rules = json!({"rules": [{"apiGroups": [""], "apiVersions": ["v1"],
        "operations": ["CONNECT"], "resources": ["pods/exec"]}]});
    configure(
        &server,
        VALIDATING,
        "exec",
        vec![webhook("exec.example.com", &hook, rules)],
    )
    .await;
    let pod = json!({"metadata": {"name": "p"}, "spec": {"nodeName": "n1",
        "containers": [{"name": "c", "image": "busybox"}]}});
    assert_eq!(
        server.post("/api/v1/namespaces/default/pods", &pod).await.0,
        201
    );
    let exec = |query: &str| {
        server
            .http
            .post(server.url(&format!("/api/v1/namespaces/default/pods/p/exec?{query}")))
    };
    let (status, err) = server
        .send(exec("command=rm&command=-rf&command=/&stdout=true"))
        .await;
    assert_eq!(status, 400);
    assert_eq!(
        err["message"],
        "admission webhook \"exec.example.com\" denied the request: not that"
    );
    // Allowed through admission, the connection then finds no container to reach.
    let (status, err) = server.send(exec("command=ls&stdout=true")).await;
    assert_eq!(status, 400);
    assert_eq!(
        err["message"],
        "kubefake runs no containers: container \"c\" of pod \"p\" cannot be reached"
    );
    let reviews = seen.lock().clone();
    assert_eq!(reviews.len(), 2);
    let request = &reviews[1]["request"];
    assert_eq!(request["operation"], "CONNECT");
    assert_eq!(
        request["kind"],
        json!({"group": "", "version": "v1", "kind": "PodExecOptions"})
    );
    assert_eq!(request["subResource"], "exec");
    assert_eq!(request["options"], Value::Null);
    assert_eq!(
        request["object"],
        json!({"kind": "PodExecOptions", "apiVersion": "v1", "command": ["ls"], "stdout": true})
    );
    // Logs are not connections.
    assert_eq!(
        server.get("/api/v1/namespaces/default/pods/p/log").await.0,
        400
    );
    assert_eq!(seen.lock().len(), 2);
}

/// A MutatingAdmissionPolicy on ConfigMap creates, bound, with one ApplyConfiguration.
async fn create_mutating_policy(server: &TestServer, name: &str, reinvocation: &str, apply: &str) {
    let api = "/apis/admissionregistration.k8s.io/v1";
    let policy = json!({"metadata": {"name": name}, "spec": {
        "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
            "operations": ["CREATE"], "resources": ["configmaps"]}]},
        "reinvocationPolicy": reinvocation,
        "mutations": [{"patchType": "ApplyConfiguration",
            "applyConfiguration": {"expression": apply}}]}});
    let (status, body) = server
        .post(&format!("{api}/mutatingadmissionpolicies"), &policy)
        .await;
    assert_eq!(status, 201, "{body}");
    let binding = json!({"metadata": {"name": name}, "spec": {"policyName": name}});
    let (status, body) = server
        .post(&format!("{api}/mutatingadmissionpolicybindings"), &binding)
        .await;
    assert_eq!(status, 201, "{body}");
}

#[tokio::test]
async fn a_second_run_invokes_only_what_ran_and_only_after_a_change() {
    let server = server().await;
    // Never matched in the first run (its condition needs the later webhook's label): the
    // second run does not invoke it for the first time.
    let api = "/apis/admissionregistration.k8s.io/v1";
    let late = json!({"metadata": {"name": "late"}, "spec": {
        "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
            "operations": ["CREATE"], "resources": ["configmaps"]}]},
        "matchConditions": [{"name": "labelled",
            "expression": "has(object.metadata.labels) && 'changed' in object.metadata.labels"}],
        "reinvocationPolicy": "IfNeeded",
        "mutations": [{"patchType": "ApplyConfiguration", "applyConfiguration": {"expression":
            "Object{metadata: Object.metadata{labels: {'late': 'yes'}}}"}}]}});
    assert_eq!(
        server
            .post(&format!("{api}/mutatingadmissionpolicies"), &late)
            .await
            .0,
        201
    );
    let binding = json!({"metadata": {"name": "late"}, "spec": {"policyName": "late"}});
    let bindings = format!("{api}/mutatingadmissionpolicybindings");
    assert_eq!(server.post(&bindings, &binding).await.0, 201);
    create_mutating_policy(
        &server,
        "steady",
        "IfNeeded",
        "Object{metadata: Object.metadata{labels: {'steady': 'yes'}}}",
    )
    .await;
    let (watcher, watched) = start(|review| add_label(review, "watched", "yes")).await;
    let (changer, _) = start(|review| add_label(review, "changed", "yes")).await;
    configure(
        &server,
        MUTATING,
        "a-watcher",
        vec![webhook(
            "watcher.example.com",
            &watcher,
            json!({"reinvocationPolicy": "IfNeeded"}),
        )],
    )
    .await;
    configure(
        &server,
        MUTATING,
        "b-changer",
        vec![webhook("changer.example.com", &changer, json!({}))],
    )
    .await;
    let (status, created) = server.post(CONFIGMAPS, &configmap("r", json!({}))).await;
    assert_eq!(status, 201, "{created}");
    let labels = &created["metadata"]["labels"];
    assert_eq!(labels["changed"], "yes");
    assert_eq!(labels["steady"], "yes");
    assert_eq!(labels.get("late"), None, "not invoked for the first time");
    // Once, then once more after the later webhook's change; not a third time in the chain's
    // second run, where nothing changed the object after the webhooks.
    assert_eq!(watched.lock().len(), 2);
}

#[tokio::test]
async fn policies_are_reinvoked_after_a_webhooks_change() {
    let server = server().await;
    let (hook, seen) = start(|review| add_label(review, "from-webhook", "yes")).await;
    configure(
        &server,
        MUTATING,
        "labeller",
        vec![webhook("labeller.example.com", &hook, json!({}))],
    )
    .await;
    for (name, reinvocation) in [("copy", "IfNeeded"), ("copy-once", "Never")] {
        let target = if name == "copy" {
            "copied"
        } else {
            "copied-once"
        };
        let expression = format!(
            "Object{{metadata: Object.metadata{{labels: {{'{target}': \
            object.metadata.?labels['from-webhook'].orValue('no')}}}}}}"
        );
        create_mutating_policy(&server, name, reinvocation, &expression).await;
    }
    let (status, created) = server.post(CONFIGMAPS, &configmap("c", json!({}))).await;
    assert_eq!(status, 201, "{created}");
    let labels = &created["metadata"]["labels"];
    assert_eq!(labels["from-webhook"], "yes");
    assert_eq!(
        labels["copied"], "yes",
        "the IfNeeded policy ran again after the webhook"
    );
    assert_eq!(labels["copied-once"], "no", "a Never policy did not");
    assert_eq!(
        seen.lock().len(),
        1,
        "a webhook without IfNeeded is not reinvoked"
    );
}
