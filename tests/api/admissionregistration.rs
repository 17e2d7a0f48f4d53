//! admissionregistration.k8s.io/v1 through kube-rs's typed API: webhook configurations and
//! admission policies with their bindings, stored with the apiserver's defaults and
//! validation, generations, the policies' status subresource, Tables, patches, apply and
//! protobuf. Nothing is called or enforced yet, so these tests only store objects.

use futures_util::StreamExt;
use k8s_openapi::api::admissionregistration::v1::{
    MutatingAdmissionPolicy, MutatingAdmissionPolicyBinding, MutatingWebhookConfiguration,
    ValidatingAdmissionPolicy, ValidatingAdmissionPolicyBinding, ValidatingWebhookConfiguration,
};
use kube::api::{
    Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchEvent, WatchParams,
};
use rstest::rstest;
use serde_json::{json, Value};

use crate::harness::{api_error, server, TestServer};
use crate::rbac::{protobuf, table, typed};

const GROUP_PATH: &str = "/apis/admissionregistration.k8s.io/v1";

fn webhook(name: &str) -> Value {
    json!({"name": name, "sideEffects": "None", "admissionReviewVersions": ["v1"],
        "clientConfig": {"service": {"name": "webhook", "namespace": "system", "path": "/validate"}},
        "rules": [{"operations": ["CREATE", "UPDATE"], "apiGroups": ["apps"], "apiVersions": ["v1"],
            "resources": ["deployments"]}]})
}

#[rstest]
#[tokio::test]
async fn validating_webhooks_default_and_validate(#[future(awt)] server: TestServer) {
    let api: Api<ValidatingWebhookConfiguration> = Api::all(server.client.clone());
    let config: ValidatingWebhookConfiguration = typed(json!({"metadata": {"name": "policy"},
        "webhooks": [webhook("deployments.policy.example.com")]}));
    let created = api
        .create(&PostParams::default(), &config)
        .await
        .expect("create");
    assert_eq!(created.metadata.generation, Some(1));
    let hook = created.webhooks.clone().unwrap_or_default()[0].clone();
    assert_eq!(hook.failure_policy.as_deref(), Some("Fail"));
    assert_eq!(hook.match_policy.as_deref(), Some("Equivalent"));
    assert_eq!(hook.timeout_seconds, Some(10));
    assert!(hook.namespace_selector.is_some() && hook.object_selector.is_some());
    let service = hook.client_config.service.expect("service");
    assert_eq!(service.port, Some(443));
    let rules = hook.rules.unwrap_or_default();
    assert_eq!(rules[0].scope.as_deref(), Some("*"));

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
    let patched = api
        .patch(
            "policy",
            &PatchParams::default(),
            &Patch::Strategic(
                json!({"webhooks": [{"name": "deployments.policy.example.com",
                "timeoutSeconds": 5}]}),
            ),
        )
        .await
        .expect("strategic merge patch merges webhooks by name");
    let hooks = patched.webhooks.unwrap_or_default();
    assert_eq!(hooks.len(), 1);
    assert_eq!(hooks[0].timeout_seconds, Some(5));
    assert_eq!(
        hooks[0].side_effects, "None",
        "the rest of the webhook is kept"
    );
    assert_eq!(patched.metadata.generation, Some(2));
    match watch.next().await {
        Some(Ok(WatchEvent::Modified(c))) => assert_eq!(c.metadata.generation, Some(2)),
        other => panic!("expected MODIFIED, got {other:?}"),
    }

    let rv = server.rv();
    let mut bad_hook = webhook("hook");
    bad_hook["clientConfig"] = json!({"url": "http://example.com/validate?x=1"});
    bad_hook["timeoutSeconds"] = json!(31);
    let bad: ValidatingWebhookConfiguration = typed(json!({"metadata": {"name": "bad"},
        "webhooks": [bad_hook.clone(), bad_hook]}));
    let err = api_error(
        api.create(&PostParams::default(), &bad)
            .await
            .expect_err("invalid"),
    );
    assert_eq!(err.code, 422);
    assert_eq!(
        err.message,
        "ValidatingWebhookConfiguration.admissionregistration.k8s.io \"bad\" is invalid: [webhooks[0].name: Invalid value: \"hook\": should be a domain with at least three segments separated by dots, webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds, webhooks[0].clientConfig.url: Invalid value: \"http\": 'https' is the only allowed URL scheme; desired format: https://host[/path], webhooks[0].clientConfig.url: Invalid value: \"x=1\": query parameters are not permitted in the URL, webhooks[1].name: Invalid value: \"hook\": should be a domain with at least three segments separated by dots, webhooks[1].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds, webhooks[1].clientConfig.url: Invalid value: \"http\": 'https' is the only allowed URL scheme; desired format: https://host[/path], webhooks[1].clientConfig.url: Invalid value: \"x=1\": query parameters are not permitted in the URL, webhooks[1].name: Duplicate value: \"hook\"]"
    );
    assert_eq!(server.rv(), rv, "a rejected create changes nothing");

    api.delete("policy", &DeleteParams::default())
        .await
        .expect("delete");
    assert_eq!(
        api_error(api.get("policy").await.expect_err("gone")).code,
        404
    );
}

#[rstest]
#[tokio::test]
async fn mutating_webhooks_tables_and_protobuf(#[future(awt)] server: TestServer) {
    let api: Api<MutatingWebhookConfiguration> = Api::all(server.client.clone());
    let config: MutatingWebhookConfiguration = typed(json!({"metadata": {"name": "injector"},
        "webhooks": [webhook("a.injector.example.com"), webhook("b.injector.example.com")]}));
    let created = api
        .create(&PostParams::default(), &config)
        .await
        .expect("create");
    let hooks = created.webhooks.unwrap_or_default();
    assert_eq!(hooks[1].reinvocation_policy.as_deref(), Some("Never"));

    let mut no_side_effects = webhook("c.injector.example.com");
    if let Some(h) = no_side_effects.as_object_mut() {
        h.remove("sideEffects");
    }
    let (status, body) = server
        .post(
            &format!("{GROUP_PATH}/mutatingwebhookconfigurations"),
            &json!({"apiVersion": "admissionregistration.k8s.io/v1",
                "kind": "MutatingWebhookConfiguration", "metadata": {"name": "bad"},
                "webhooks": [no_side_effects]}),
        )
        .await;
    assert_eq!(status, 422);
    assert_eq!(
        body["message"],
        "MutatingWebhookConfiguration.admissionregistration.k8s.io \"bad\" is invalid: webhooks[0].sideEffects: Required value: must specify one of None, NoneOnDryRun"
    );

    let path = format!("{GROUP_PATH}/mutatingwebhookconfigurations");
    let (columns, t) = table(&server, &path).await;
    assert_eq!(columns, ["Name", "Webhooks", "Age"]);
    assert_eq!(t["rows"][0]["cells"][1], 2);
    let listed = api
        .list(&ListParams::default().fields("metadata.name=injector"))
        .await
        .expect("field selector");
    assert_eq!(listed.items.len(), 1);
    let decoded = protobuf(&server, &format!("{path}/injector")).await;
    assert_eq!(decoded["kind"], "MutatingWebhookConfiguration");
    assert_eq!(decoded["webhooks"][0]["reinvocationPolicy"], "Never");
}

fn policy(name: &str) -> ValidatingAdmissionPolicy {
    typed(json!({"metadata": {"name": name}, "spec": {
        "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
        "matchConstraints": {"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"],
            "operations": ["CREATE", "UPDATE"], "resources": ["deployments"]}]},
        "validations": [{"expression": "object.spec.replicas <= params.data.maxReplicas",
            "reason": "Invalid"}]}}))
}

#[rstest]
#[tokio::test]
async fn validating_policies_status_and_bindings(#[future(awt)] server: TestServer) {
    let api: Api<ValidatingAdmissionPolicy> = Api::all(server.client.clone());
    let created = api
        .create(&PostParams::default(), &policy("replica-limit"))
        .await
        .expect("create");
    let spec = created.spec.clone().unwrap_or_default();
    assert_eq!(spec.failure_policy.as_deref(), Some("Fail"));
    let mc = spec.match_constraints.unwrap_or_default();
    assert_eq!(mc.match_policy.as_deref(), Some("Equivalent"));
    assert_eq!(
        mc.resource_rules.unwrap_or_default()[0].scope.as_deref(),
        Some("*")
    );
    assert_eq!(created.metadata.generation, Some(1));

    let status = api
        .patch_status(
            "replica-limit",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"observedGeneration": 1, "conditions": [
                {"type": "Ready", "status": "True", "reason": "Checked", "message": "",
                    "lastTransitionTime": "2024-01-01T00:00:00Z"}]},
                "spec": {"failurePolicy": "Ignore"}})),
        )
        .await
        .expect("status");
    assert_eq!(status.status.and_then(|s| s.observed_generation), Some(1));
    let kept = status.spec.and_then(|s| s.failure_policy);
    assert_eq!(kept.as_deref(), Some("Fail"), "status writes keep the spec");
    let err = api_error(
        api.patch_status(
            "replica-limit",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"conditions": [{"type": "Ready", "status": "Maybe",
                "reason": "Checked", "message": "", "lastTransitionTime": "2024-01-01T00:00:00Z"}]}})),
        )
        .await
        .expect_err("bad condition"),
    );
    assert_eq!(
        err.message,
        "ValidatingAdmissionPolicy.admissionregistration.k8s.io \"replica-limit\" is invalid: status.conditions[0].status: Unsupported value: \"Maybe\": supported values: \"False\", \"True\", \"Unknown\""
    );

    let (columns, t) = table(
        &server,
        &format!("{GROUP_PATH}/validatingadmissionpolicies"),
    )
    .await;
    assert_eq!(columns, ["Name", "Validations", "ParamKind", "Age"]);
    assert_eq!(t["rows"][0]["cells"][1], 1);
    assert_eq!(t["rows"][0]["cells"][2], "v1/ConfigMap");

    let bindings: Api<ValidatingAdmissionPolicyBinding> = Api::all(server.client.clone());
    let binding: ValidatingAdmissionPolicyBinding = typed(
        json!({"metadata": {"name": "limit-test"},
        "spec": {"policyName": "replica-limit", "validationActions": ["Deny"],
            "paramRef": {"name": "limits", "namespace": "default", "parameterNotFoundAction": "Deny"},
            "matchResources": {"namespaceSelector": {"matchLabels": {"env": "test"}}}}}),
    );
    let stored = bindings
        .create(&PostParams::default(), &binding)
        .await
        .expect("binding");
    let mr = stored.spec.match_resources.unwrap_or_default();
    assert_eq!(mr.match_policy.as_deref(), Some("Equivalent"));
    assert!(mr.object_selector.is_some());
    let (columns, t) = table(
        &server,
        &format!("{GROUP_PATH}/validatingadmissionpolicybindings"),
    )
    .await;
    assert_eq!(columns, ["Name", "PolicyName", "ParamRef", "Age"]);
    assert_eq!(t["rows"][0]["cells"][2], "default/limits");

    let bad: ValidatingAdmissionPolicyBinding = typed(json!({"metadata": {"name": "bad"},
        "spec": {"policyName": "replica-limit", "validationActions": ["Deny", "Warn"],
            "paramRef": {"name": "limits"}}}));
    let err = api_error(
        bindings
            .create(&PostParams::default(), &bad)
            .await
            .expect_err("invalid"),
    );
    assert_eq!(
        err.message,
        "ValidatingAdmissionPolicyBinding.admissionregistration.k8s.io \"bad\" is invalid: [spec.paramRef.parameterNotFoundAction: Required value, spec.validationActions: Invalid value: [\"Deny\",\"Warn\"]: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)]"
    );
}

#[rstest]
#[tokio::test]
async fn mutating_policies_apply_and_bindings(#[future(awt)] server: TestServer) {
    let api: Api<MutatingAdmissionPolicy> = Api::all(server.client.clone());
    let applied = api
        .patch(
            "sidecar",
            &PatchParams::apply("tester"),
            &Patch::Apply(json!({"apiVersion": "admissionregistration.k8s.io/v1",
                "kind": "MutatingAdmissionPolicy", "metadata": {"name": "sidecar"},
                "spec": {"reinvocationPolicy": "IfNeeded",
                    "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                        "operations": ["CREATE"], "resources": ["pods"]}]},
                    "mutations": [{"patchType": "ApplyConfiguration",
                        "applyConfiguration": {"expression": "Object{metadata: Object.metadata{labels: {\"injected\": \"true\"}}}"}}]}})),
        )
        .await
        .expect("server-side apply creates");
    let spec = applied.spec.clone().unwrap_or_default();
    assert_eq!(spec.failure_policy.as_deref(), Some("Fail"));
    assert_eq!(applied.metadata.generation, Some(1));

    let bad: MutatingAdmissionPolicy = typed(json!({"metadata": {"name": "bad"}, "spec": {
        "reinvocationPolicy": "Never",
        "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
            "operations": ["DELETE"], "resources": ["pods"]}]},
        "mutations": [{"patchType": "JSONPatch"}]}}));
    let err = api_error(
        api.create(&PostParams::default(), &bad)
            .await
            .expect_err("invalid"),
    );
    assert_eq!(
        err.message,
        "MutatingAdmissionPolicy.admissionregistration.k8s.io \"bad\" is invalid: [spec.matchConstraints.resourceRules.operations: Unsupported value: \"DELETE\": supported values: \"*\", \"CONNECT\", \"CREATE\", \"UPDATE\", spec.mutations[0].jsonPatch: Required value: must be specified when patchType is JSONPatch]"
    );
    let (columns, t) = table(&server, &format!("{GROUP_PATH}/mutatingadmissionpolicies")).await;
    assert_eq!(columns, ["Name", "Mutations", "ParamKind", "Age"]);
    assert_eq!(t["rows"][0]["cells"][1], 1);
    assert_eq!(t["rows"][0]["cells"][2], "<unset>");

    let bindings: Api<MutatingAdmissionPolicyBinding> = Api::all(server.client.clone());
    let binding: MutatingAdmissionPolicyBinding = typed(json!({"metadata": {"name": "sidecar"},
        "spec": {"policyName": "sidecar", "paramRef": {"selector": {"matchLabels": {"team": "a"}},
            "parameterNotFoundAction": "Allow"}}}));
    bindings
        .create(&PostParams::default(), &binding)
        .await
        .expect("binding");
    let (_, t) = table(
        &server,
        &format!("{GROUP_PATH}/mutatingadmissionpolicybindings"),
    )
    .await;
    assert_eq!(
        t["rows"][0]["cells"][2],
        "&LabelSelector{MatchLabels:map[string]string{team: a,},MatchExpressions:[]LabelSelectorRequirement{},}"
    );
    let decoded = protobuf(
        &server,
        &format!("{GROUP_PATH}/mutatingadmissionpolicies/sidecar"),
    )
    .await;
    assert_eq!(decoded["kind"], "MutatingAdmissionPolicy");
    assert_eq!(decoded["spec"]["reinvocationPolicy"], "IfNeeded");
}
