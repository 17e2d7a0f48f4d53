//! ValidatingAdmissionPolicies and their bindings, enforced: validations with message,
//! messageExpression and reason, variables, params (found, missing with Deny), match conditions,
//! failure policies, and the Deny/Warn/Audit actions, each refusal in the apiserver's words.

use serde_json::{json, Value};

use crate::harness::{server, TestServer};

const POLICIES: &str = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies";
const BINDINGS: &str = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings";
const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";

/// A policy on ConfigMap creates and updates with these spec fields added.
async fn policy(server: &TestServer, name: &str, spec: Value) {
    let mut body = json!({"metadata": {"name": name}, "spec": {
        "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
            "operations": ["CREATE", "UPDATE"], "resources": ["configmaps"]}]}}});
    for (k, v) in spec.as_object().into_iter().flatten() {
        body["spec"][k] = v.clone();
    }
    let (status, created) = server.post(POLICIES, &body).await;
    assert_eq!(status, 201, "{created}");
}

async fn bind(server: &TestServer, name: &str, policy: &str, actions: &[&str], extra: Value) {
    let mut body = json!({"metadata": {"name": name},
        "spec": {"policyName": policy, "validationActions": actions}});
    for (k, v) in extra.as_object().into_iter().flatten() {
        body["spec"][k] = v.clone();
    }
    let (status, created) = server.post(BINDINGS, &body).await;
    assert_eq!(status, 201, "{created}");
}

fn configmap(name: &str, keys: usize) -> Value {
    let data: serde_json::Map<String, Value> =
        (0..keys).map(|i| (format!("k{i}"), json!("v"))).collect();
    json!({"metadata": {"name": name}, "data": data})
}

#[tokio::test]
async fn validations_refuse_with_the_policys_message() {
    let server = server().await;
    policy(&server, "small", json!({"validations": [
        {"expression": "!has(object.data) || size(object.data) <= 1", "message": "too much data"},
        {"expression": "!object.metadata.name.startsWith('x-')",
         "messageExpression": "'name ' + object.metadata.name + ' is reserved'", "reason": "Forbidden"},
        {"expression": "object.metadata.name != 'plain'"}
    ]})).await;
    bind(&server, "small-binding", "small", &["Deny"], json!({})).await;

    assert_eq!(server.post(CONFIGMAPS, &configmap("ok", 1)).await.0, 201);
    let before = server.rv();
    let (status, err) = server.post(CONFIGMAPS, &configmap("big", 2)).await;
    assert_eq!((status, err["reason"].as_str()), (422, Some("Invalid")));
    assert_eq!(
        err["message"],
        "configmaps \"big\" is forbidden: ValidatingAdmissionPolicy 'small' with binding 'small-binding' denied request: too much data"
    );
    assert_eq!(err["details"]["causes"][0]["message"], "ValidatingAdmissionPolicy 'small' with binding 'small-binding' denied request: too much data");
    let (status, err) = server.post(CONFIGMAPS, &configmap("x-1", 0)).await;
    assert_eq!((status, err["reason"].as_str()), (403, Some("Forbidden")));
    assert_eq!(
        err["message"],
        "configmaps \"x-1\" is forbidden: ValidatingAdmissionPolicy 'small' with binding 'small-binding' denied request: name x-1 is reserved"
    );
    let (_, err) = server.post(CONFIGMAPS, &configmap("plain", 0)).await;
    assert_eq!(
        err["message"],
        "configmaps \"plain\" is forbidden: ValidatingAdmissionPolicy 'small' with binding 'small-binding' denied request: failed expression: object.metadata.name != 'plain'"
    );
    assert_eq!(server.rv(), before, "refusals change nothing");
}

#[tokio::test]
async fn warn_and_audit_actions_let_the_request_through() {
    let server = server().await;
    policy(
        &server,
        "small",
        json!({"validations": [
        {"expression": "size(object.data) <= 1", "message": "too much data"}]}),
    )
    .await;
    bind(&server, "warn", "small", &["Warn", "Audit"], json!({})).await;
    let resp = server
        .http
        .post(server.url(CONFIGMAPS))
        .json(&configmap("big", 2))
        .send()
        .await
        .expect("sent");
    assert_eq!(resp.status(), 201);
    assert_eq!(
        resp.headers()["warning"],
        "299 - \"Validation failed for ValidatingAdmissionPolicy 'small' with binding 'warn': too much data\""
    );
}

#[tokio::test]
async fn params_and_variables() {
    let server = server().await;
    policy(&server, "limited", json!({
        "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
        "variables": [{"name": "keys", "expression": "has(object.data) ? size(object.data) : 0"}],
        "matchConditions": [{"name": "not-the-params", "expression": "object.metadata.name != 'limits'"}],
        "validations": [{"expression": "variables.keys <= int(params.data.max)",
            "messageExpression": "'at most ' + params.data.max + ' keys'"}]})).await;
    // Params exist before the binding that needs them (the policy would refuse their create).
    let limits = json!({"metadata": {"name": "limits"}, "data": {"max": "2"}});
    assert_eq!(server.post(CONFIGMAPS, &limits).await.0, 201);
    bind(
        &server,
        "limited-binding",
        "limited",
        &["Deny"],
        json!({"paramRef": {"name": "limits", "namespace": "default",
            "parameterNotFoundAction": "Deny"}}),
    )
    .await;
    assert_eq!(server.post(CONFIGMAPS, &configmap("two", 2)).await.0, 201);
    let (status, err) = server.post(CONFIGMAPS, &configmap("three", 3)).await;
    assert_eq!(status, 422);
    assert_eq!(
        err["message"],
        "configmaps \"three\" is forbidden: ValidatingAdmissionPolicy 'limited' with binding 'limited-binding' denied request: at most 2 keys"
    );
    let limits_update = json!({"metadata": {"name": "limits"}, "data": {"max": "3"}});
    let put = server
        .http
        .put(server.url(&format!("{CONFIGMAPS}/limits")))
        .json(&limits_update);
    let (status, body) = server.send(put).await;
    assert_eq!(
        status, 200,
        "the match condition skips the params object: {body}"
    );
    assert_eq!(
        server.post(CONFIGMAPS, &configmap("three", 3)).await.0,
        201,
        "new params apply at once"
    );

    let delete = server
        .http
        .delete(server.url(&format!("{CONFIGMAPS}/limits")));
    assert_eq!(server.send(delete).await.0, 200);
    let (status, err) = server.post(CONFIGMAPS, &configmap("late", 1)).await;
    assert_eq!(status, 422);
    assert_eq!(
        err["message"],
        "configmaps \"late\" is forbidden: ValidatingAdmissionPolicy 'limited' with binding 'limited-binding' denied request: failed to configure binding: no params found for policy binding with `Deny` parameterNotFoundAction"
    );
}

#[tokio::test]
async fn failure_policies_and_binding_match_resources() {
    let server = server().await;
    policy(
        &server,
        "broken",
        json!({"failurePolicy": "Ignore",
        "validations": [{"expression": "object.data.missing == 'x'"}]}),
    )
    .await;
    bind(&server, "broken-binding", "broken", &["Deny"], json!({})).await;
    assert_eq!(server.post(CONFIGMAPS, &configmap("a", 1)).await.0, 201);

    policy(
        &server,
        "strict",
        json!({
        "validations": [{"expression": "object.data.missing == 'x'"}]}),
    )
    .await;
    // The binding narrows the policy to the `guarded` namespace.
    let ns = json!({"metadata": {"name": "guarded", "labels": {"guard": "on"}}});
    assert_eq!(server.post("/api/v1/namespaces", &ns).await.0, 201);
    bind(
        &server,
        "strict-binding",
        "strict",
        &["Deny"],
        json!({"matchResources": {
        "namespaceSelector": {"matchLabels": {"guard": "on"}},
        "resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["*"],
            "resources": ["configmaps"]}]}}),
    )
    .await;
    assert_eq!(server.post(CONFIGMAPS, &configmap("b", 1)).await.0, 201);
    let (status, err) = server
        .post("/api/v1/namespaces/guarded/configmaps", &configmap("c", 1))
        .await;
    assert_eq!(status, 422);
    let message = err["message"].as_str().unwrap_or("");
    assert!(
        message.starts_with("configmaps \"c\" is forbidden: ValidatingAdmissionPolicy 'strict' with binding 'strict-binding' denied request: expression 'object.data.missing == 'x'' resulted in error: "),
        "{message}"
    );
}

const MUTATING_POLICIES: &str = "/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicies";
const MUTATING_BINDINGS: &str =
    "/apis/admissionregistration.k8s.io/v1/mutatingadmissionpolicybindings";

/// A mutating policy on ConfigMap creates with these mutations, bound.
async fn mutating_policy(server: &TestServer, name: &str, spec: Value) {
    let mut body = json!({"metadata": {"name": name}, "spec": {
        "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
            "operations": ["CREATE"], "resources": ["configmaps"]}]},
        "reinvocationPolicy": "Never"}});
    for (k, v) in spec.as_object().into_iter().flatten() {
        body["spec"][k] = v.clone();
    }
    let (status, created) = server.post(MUTATING_POLICIES, &body).await;
    assert_eq!(status, 201, "{created}");
    let binding = json!({"metadata": {"name": format!("{name}-binding")},
        "spec": {"policyName": name}});
    let (status, created) = server.post(MUTATING_BINDINGS, &binding).await;
    assert_eq!(status, 201, "{created}");
}

#[tokio::test]
async fn mutating_policies_apply_configurations_and_json_patches() {
    let server = server().await;
    mutating_policy(
        &server,
        "a-labels",
        json!({"mutations": [{"patchType": "ApplyConfiguration",
        "applyConfiguration": {"expression":
            "Object{metadata: Object.metadata{labels: {'owner': 'policy'}}}"}}]}),
    )
    .await;
    mutating_policy(
        &server,
        "b-count",
        json!({
        "variables": [{"name": "keys", "expression": "string(size(object.data))"}],
        "mutations": [{"patchType": "JSONPatch", "jsonPatch": {"expression":
            "[JSONPatch{op: 'add', path: '/data/count', value: variables.keys}]"}}]}),
    )
    .await;
    let (status, created) = server.post(CONFIGMAPS, &configmap("m", 2)).await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["metadata"]["labels"], json!({"owner": "policy"}));
    assert_eq!(
        created["data"]["count"], "2",
        "the second policy saw two keys"
    );
    assert_eq!(
        created["data"]["k0"], "v",
        "the apply configuration merged, not replaced"
    );
}

#[tokio::test]
async fn mutating_policy_variables_are_evaluated_when_used() {
    let server = server().await;
    mutating_policy(
        &server,
        "lazy",
        json!({
        "variables": [
            {"name": "missing", "expression": "object.data.absent"},
            {"name": "keys", "expression": "string(size(object.data))"}],
        "mutations": [
            {"patchType": "JSONPatch", "jsonPatch": {"expression":
                "[JSONPatch{op: 'add', path: '/data/count', value: variables.keys}]"}},
            {"patchType": "JSONPatch", "jsonPatch": {"expression":
                "object.metadata.name == 'strict' ? [JSONPatch{op: 'add', path: '/data/x', value: variables.missing}] : []"}}]}),
    )
    .await;
    let (status, created) = server.post(CONFIGMAPS, &configmap("fine", 1)).await;
    assert_eq!(
        status, 201,
        "an unused failing variable is harmless: {created}"
    );
    assert_eq!(created["data"]["count"], "1");
    let (status, err) = server.post(CONFIGMAPS, &configmap("strict", 1)).await;
    assert_eq!(status, 403, "{err}");
    let message = err["message"].as_str().unwrap_or("");
    assert!(
        message.ends_with("resulted in error: composited variable \"missing\" fails to evaluate: no such key: absent"),
        "{message}"
    );
}

#[tokio::test]
async fn mutating_policy_failures() {
    let server = server().await;
    mutating_policy(
        &server,
        "broken",
        json!({"mutations": [{"patchType": "JSONPatch",
        "jsonPatch": {"expression": "[JSONPatch{op: 'remove', path: '/spec/missing'}]"}}]}),
    )
    .await;
    let before = server.rv();
    let (status, err) = server.post(CONFIGMAPS, &configmap("m", 1)).await;
    assert_eq!(status, 403);
    assert_eq!(err["reason"], "Invalid");
    // The JSON patch library's own words (gopkg.in/evanphx/json-patch.v4).
    assert_eq!(
        err["message"],
        "policy 'broken' with binding 'broken-binding' denied request: JSON Patch: remove operation does not apply: doc is missing path: \"/spec/missing\": missing value"
    );
    assert_eq!(server.rv(), before);
}

#[tokio::test]
async fn expressions_that_do_not_compile_are_refused_when_written() {
    let server = server().await;
    let body = json!({"metadata": {"name": "typo"}, "spec": {
        "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
            "operations": ["CREATE"], "resources": ["configmaps"]}]},
        "variables": [{"name": "n", "expression": "object.metadata.name"}],
        "validations": [{"expression": "object.metadata.name ==", "messageExpression": "nope("}]}});
    let (status, err) = server.post(POLICIES, &body).await;
    assert_eq!(status, 422);
    let causes: Vec<&str> = err["details"]["causes"]
        .as_array()
        .expect("causes")
        .iter()
        .map(|c| c["field"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        causes,
        [
            "spec.validations[0].expression",
            "spec.validations[0].messageExpression"
        ]
    );
    let first = err["details"]["causes"][0]["message"]
        .as_str()
        .unwrap_or("");
    assert!(
        first.starts_with(
            "Invalid value: \"object.metadata.name ==\": compilation failed: ERROR: <input>:1:"
        ),
        "{first}"
    );
}

#[tokio::test]
async fn request_and_namespace_are_typed_when_a_policy_is_written() {
    let server = server().await;
    let body = json!({"metadata": {"name": "typed-request"}, "spec": {
        "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
            "operations": ["CREATE"], "resources": ["configmaps"]}]},
        "validations": [
            {"expression": "request.userInfo.username != '' && namespaceObject.metadata.name != ''"},
            {"expression": "request.operations == 'CREATE'"},
            {"expression": "request.dryRun == 'yes'"}]}});
    let (status, err) = server.post(POLICIES, &body).await;
    assert_eq!(status, 422, "{err}");
    let causes = err["details"]["causes"].as_array().expect("causes");
    let fields: Vec<&str> = causes.iter().filter_map(|c| c["field"].as_str()).collect();
    assert_eq!(
        fields,
        [
            "spec.validations[1].expression",
            "spec.validations[2].expression"
        ]
    );
    assert_eq!(
        causes[0]["message"],
        "Invalid value: \"request.operations == 'CREATE'\": compilation failed: ERROR: <input>:1:8: undefined field 'operations'\n | request.operations == 'CREATE'\n | .......^"
    );
    assert!(
        causes[1]["message"]
            .as_str()
            .unwrap_or("")
            .contains("found no matching overload for '_==_' applied to '(bool, string)'"),
        "{}",
        causes[1]["message"]
    );
}

#[tokio::test]
async fn type_checking_types_variables_by_their_expressions() {
    let server = server().await;
    let body = json!({"metadata": {"name": "typed-variables"}, "spec": {
        "matchConstraints": {"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"],
            "operations": ["CREATE"], "resources": ["deployments"]}]},
        "variables": [
            {"name": "replicas", "expression": "object.spec.replicas"},
            {"name": "spec", "expression": "object.spec"}],
        "validations": [
            {"expression": "variables.replicas < 5 && variables.spec.paused != true"},
            {"expression": "variables.replicas == 'many'"},
            {"expression": "variables.spec.pausd"}]}});
    let (status, body) = server.post(POLICIES, &body).await;
    assert_eq!(status, 201, "{body}");
    let (_, policy) = server.get(&format!("{POLICIES}/typed-variables")).await;
    let warnings = policy["status"]["typeChecking"]["expressionWarnings"].clone();
    let refs: Vec<&str> = warnings
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|w| w["fieldRef"].as_str())
        .collect();
    assert_eq!(
        refs,
        [
            "spec.validations[1].expression",
            "spec.validations[2].expression"
        ],
        "{warnings}"
    );
    assert_eq!(
        warnings[1]["warning"],
        "apps/v1, Kind=Deployment: ERROR: <input>:1:15: undefined field 'pausd'\n | variables.spec.pausd\n | ..............^\n"
    );
}

#[tokio::test]
async fn variables_are_evaluated_when_used_and_cost_is_limited() {
    let server = server().await;
    policy(
        &server,
        "lazy",
        json!({
        "variables": [
            {"name": "missing", "expression": "object.data.absent"},
            {"name": "name", "expression": "object.metadata.name"}],
        "validations": [
            {"expression": "variables.name != 'bad'"},
            {"expression": "object.metadata.name != 'strict' || variables.missing == 'x'"}]}),
    )
    .await;
    bind(&server, "lazy-binding", "lazy", &["Deny"], json!({})).await;
    // The failing variable matters only to an expression that uses it.
    let (status, body) = server.post(CONFIGMAPS, &configmap("fine", 1)).await;
    assert_eq!(status, 201, "{body}");
    let (status, err) = server.post(CONFIGMAPS, &configmap("strict", 1)).await;
    assert_eq!(status, 422, "an error's reason is Invalid: {err}");
    assert_eq!(
        err["message"],
        "configmaps \"strict\" is forbidden: ValidatingAdmissionPolicy 'lazy' with binding 'lazy-binding' denied request: expression 'object.metadata.name != 'strict' || variables.missing == 'x'' resulted in error: composited variable \"missing\" fails to evaluate: no such key: absent"
    );

    // One expression may cost at most the per-call limit.
    let expensive = "object.data.k0.split(',').all(a, object.data.k0.split(',').all(b, a == b))";
    policy(
        &server,
        "costly",
        json!({"validations": [{"expression": expensive}]}),
    )
    .await;
    bind(&server, "costly-binding", "costly", &["Deny"], json!({})).await;
    let wide = json!({"metadata": {"name": "wide"}, "data": {"k0": ",".repeat(3000)}});
    let (status, err) = server.post(CONFIGMAPS, &wide).await;
    assert_eq!(status, 422, "{err}");
    assert_eq!(
        err["message"],
        format!("configmaps \"wide\" is forbidden: ValidatingAdmissionPolicy 'costly' with binding 'costly-binding' denied request: expression '{expensive}' resulted in error: operation cancelled: actual cost limit exceeded")
    );
}

#[tokio::test]
async fn audit_annotations_that_cannot_be_computed_refuse() {
    let server = server().await;
    policy(
        &server,
        "audited",
        json!({"auditAnnotations": [
        {"key": "name", "valueExpression": "object.metadata.name"},
        {"key": "size", "valueExpression": "size(object.metadata.name)"}]}),
    )
    .await;
    bind(&server, "audited-binding", "audited", &["Audit"], json!({})).await;
    let (status, err) = server.post(CONFIGMAPS, &configmap("one", 1)).await;
    assert_eq!(status, 422);
    assert_eq!(
        err["message"],
        "configmaps \"one\" is forbidden: ValidatingAdmissionPolicy 'audited' with binding 'audited-binding' denied request: valueExpression 'size(object.metadata.name)' resulted in unsupported return type: int. Return type must be either string or null."
    );
}

#[tokio::test]
async fn mutating_policies_reinvoke_if_needed() {
    let server = server().await;
    mutating_policy(&server, "a-first", json!({"reinvocationPolicy": "IfNeeded",
        "mutations": [{"patchType": "ApplyConfiguration", "applyConfiguration": {"expression":
            "Object{metadata: Object.metadata{labels: {'a': has(object.metadata.labels) && 'b' in object.metadata.labels ? 'second' : 'first'}}}"}}]})).await;
    mutating_policy(&server, "b-second", json!({"mutations": [{"patchType": "ApplyConfiguration",
        "applyConfiguration": {"expression": "Object{metadata: Object.metadata{labels: {'b': 'yes'}}}"}}]})).await;
    let (status, created) = server.post(CONFIGMAPS, &configmap("r", 1)).await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(
        created["metadata"]["labels"],
        json!({"a": "second", "b": "yes"})
    );
}

#[tokio::test]
async fn authorizer_asks_rbac_about_the_requests_user() {
    let server = crate::harness::rbac_server_with_user("bob", &[], "bob-token").await;
    // Only those who may delete secrets here may create ConfigMaps marked `sensitive`;
    // a ServiceAccount is asked about by name, and the request's own resource too.
    policy(&server, "guard", json!({"validations": [
        {"expression": "!has(object.metadata.labels) || !('sensitive' in object.metadata.labels) || authorizer.group('').resource('secrets').namespace(object.metadata.namespace).check('delete').allowed()",
         "message": "only secret admins may create sensitive ConfigMaps"},
        {"expression": "!authorizer.serviceAccount('default', 'nobody').path('/logs').check('get').allowed()"},
        {"expression": "authorizer.requestResource.check('create').allowed()"}
    ]})).await;
    bind(&server, "guard-binding", "guard", &["Deny"], json!({})).await;
    let role = json!({"metadata": {"name": "cm-writer"}, "rules": [
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create"]}]});
    let path = "/apis/rbac.authorization.k8s.io/v1/namespaces/default";
    assert_eq!(server.post(&format!("{path}/roles"), &role).await.0, 201);
    let binding = json!({"metadata": {"name": "bob-writes"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm-writer"},
        "subjects": [{"kind": "User", "name": "bob"}]});
    assert_eq!(
        server
            .post(&format!("{path}/rolebindings"), &binding)
            .await
            .0,
        201
    );

    let as_bob = crate::harness::token_http(&server.handle, "Bearer bob-token");
    let sensitive = json!({"metadata": {"name": "s", "labels": {"sensitive": "yes"}}});
    let (status, err) = server
        .send(as_bob.post(server.url(CONFIGMAPS)).json(&sensitive))
        .await;
    assert_eq!(status, 422, "{err}");
    assert_eq!(
        err["message"],
        "configmaps \"s\" is forbidden: ValidatingAdmissionPolicy 'guard' with binding 'guard-binding' denied request: only secret admins may create sensitive ConfigMaps"
    );
    let plain = json!({"metadata": {"name": "p"}});
    let (status, body) = server
        .send(as_bob.post(server.url(CONFIGMAPS)).json(&plain))
        .await;
    assert_eq!(status, 201, "{body}");
    // The admin holds everything, sensitive or not.
    assert_eq!(server.post(CONFIGMAPS, &sensitive).await.0, 201);
}

#[tokio::test]
async fn type_checking_warnings_are_written_to_the_status() {
    let server = server().await;
    let body = json!({"metadata": {"name": "typos"}, "spec": {
        "matchConstraints": {"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"],
            "operations": ["CREATE"], "resources": ["deployments"]}]},
        "validations": [
            {"expression": "object.spec.replicas > 1 && object.metadata.labels.size() >= 0"},
            {"expression": "object.spec.replicass > 1", "messageExpression": "'x' + object.metadata.nam"}]}});
    let (status, _) = server.post(POLICIES, &body).await;
    assert_eq!(status, 201);
    let (_, policy) = server.get(&format!("{POLICIES}/typos")).await;
    assert_eq!(policy["status"]["observedGeneration"], 1, "{policy}");
    let warnings = policy["status"]["typeChecking"]["expressionWarnings"].clone();
    assert_eq!(
        warnings,
        json!([
            {"fieldRef": "spec.validations[1].expression",
             "warning": "apps/v1, Kind=Deployment: ERROR: <input>:1:12: undefined field 'replicass'\n | object.spec.replicass > 1\n | ...........^\n"},
            {"fieldRef": "spec.validations[1].messageExpression",
             "warning": "apps/v1, Kind=Deployment: ERROR: <input>:1:22: undefined field 'nam'\n | 'x' + object.metadata.nam\n | .....................^\n"}
        ])
    );
    // Params of a built-in kind are typed too (the namespace is typed when written).
    let body = json!({"metadata": {"name": "typed-params"}, "spec": {
        "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
        "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
            "operations": ["CREATE"], "resources": ["pods"]}]},
        "validations": [
            {"expression": "params.data.size() > 0 && namespaceObject.metadata.name != ''"},
            {"expression": "has(params.datax)"},
            {"expression": "object.spec.containerz.size() == 0"}]}});
    assert_eq!(server.post(POLICIES, &body).await.0, 201);
    let (_, policy) = server.get(&format!("{POLICIES}/typed-params")).await;
    let warnings = policy["status"]["typeChecking"]["expressionWarnings"].clone();
    let refs: Vec<&str> = warnings
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|w| w["fieldRef"].as_str())
        .collect();
    assert_eq!(
        refs,
        [
            "spec.validations[1].expression",
            "spec.validations[2].expression"
        ],
        "{warnings}"
    );
    assert!(
        warnings[0]["warning"]
            .as_str()
            .unwrap_or("")
            .starts_with("/v1, Kind=Pod: ERROR: <input>:1:4: undefined field 'datax'"),
        "{warnings}"
    );
    // Custom resources are checked with their schema and the full ObjectMeta.
    server.install_crontab_crd().await;
    let body = json!({"metadata": {"name": "crontabs"}, "spec": {
        "matchConstraints": {"resourceRules": [{"apiGroups": ["stable.example.com"],
            "apiVersions": ["v1"], "operations": ["CREATE"], "resources": ["crontabs"]}]},
        "validations": [
            {"expression": "object.spec.cronSpec != '' && object.metadata.labels.size() >= 0"},
            {"expression": "object.spec.cronspec != ''"}]}});
    assert_eq!(server.post(POLICIES, &body).await.0, 201);
    let (_, policy) = server.get(&format!("{POLICIES}/crontabs")).await;
    let warnings = policy["status"]["typeChecking"]["expressionWarnings"].clone();
    assert_eq!(
        warnings,
        json!([{"fieldRef": "spec.validations[1].expression",
            "warning": "stable.example.com/v1, Kind=CronTab: ERROR: <input>:1:12: undefined field 'cronspec'\n | object.spec.cronspec != ''\n | ...........^\n"}])
    );
    // A policy on ConfigMaps without mistakes gets an empty report.
    policy_named(&server, "clean").await;
    let (_, clean) = server.get(&format!("{POLICIES}/clean")).await;
    assert_eq!(
        clean["status"],
        json!({"observedGeneration": 1, "typeChecking": {}})
    );
}

async fn policy_named(server: &TestServer, name: &str) {
    policy(
        server,
        name,
        json!({"validations": [{"expression": "size(object.data) < 3"}]}),
    )
    .await;
}
