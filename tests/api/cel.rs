//! CEL `x-kubernetes-validations` over HTTP.

use rstest::rstest;
use serde_json::{json, Value};

use crate::harness::{server, TestServer};

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
const CRONTABS: &str = "/apis/stable.example.com/v1/namespaces/default/crontabs";

fn crd_with_rules() -> Value {
    let mut crd = crate::harness::crontab_crd();
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"] = json!({
        "type": "object",
        "x-kubernetes-validations": [
            {"rule": "self.minReplicas <= self.replicas", "message": "replicas should be greater than or equal to minReplicas."},
            {"rule": "self.replicas <= self.maxReplicas", "message": "replicas should be smaller than or equal to maxReplicas."}
        ],
        "properties": {
            "cronSpec": {"type": "string"},
            "image": {"type": "string"},
            "minReplicas": {"type": "integer"},
            "replicas": {"type": "integer"},
            "maxReplicas": {"type": "integer"}
        },
        "required": ["minReplicas", "replicas", "maxReplicas"]
    });
    crd
}

fn crontab(name: &str, min: i64, replicas: i64, max: i64) -> Value {
    json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab", "metadata": {"name": name},
           "spec": {"cronSpec": "* * * * */5", "image": "my-awesome-cron-image",
                    "minReplicas": min, "replicas": replicas, "maxReplicas": max}})
}

#[rstest]
#[tokio::test]
async fn rules_reject_invalid_objects(#[future(awt)] server: TestServer) {
    let (status, body) = server.post(CRDS, &crd_with_rules()).await;
    assert_eq!(status, 201, "{body}");
    let rv = server.rv();
    let (status, body) = server
        .post(CRONTABS, &crontab("my-new-cron-object", 0, 20, 10))
        .await;
    assert_eq!(status, 422, "{body}");
    let message = body["message"].as_str().expect("message");
    assert!(
        message.starts_with(
            "CronTab.stable.example.com \"my-new-cron-object\" is invalid: spec: Invalid value:"
        ),
        "{message}"
    );
    assert!(
        message.ends_with("replicas should be smaller than or equal to maxReplicas."),
        "{message}"
    );
    assert_eq!(body["details"]["causes"][0]["field"], "spec");
    assert_eq!(server.rv(), rv, "nothing stored");
    assert_eq!(server.post(CRONTABS, &crontab("ok", 0, 5, 10)).await.0, 201);
}

#[rstest]
#[tokio::test]
async fn rules_that_do_not_compile_reject_the_crd(#[future(awt)] server: TestServer) {
    let mut crd = crd_with_rules();
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
        ["x-kubernetes-validations"] = json!([{"rule": "self.nonExistingField > 0"}]);
    let (status, body) = server.post(CRDS, &crd).await;
    assert_eq!(status, 422, "{body}");
    let message = body["message"].as_str().expect("message");
    assert!(
        message.contains(
            "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule"
        ),
        "{message}"
    );
    assert!(
        message.contains("undefined field 'nonExistingField'"),
        "{message}"
    );
}

#[rstest]
#[tokio::test]
async fn transition_rules_see_the_old_object(#[future(awt)] server: TestServer) {
    let mut crd = crd_with_rules();
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
        ["image"] = json!({
        "type": "string",
        "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "image is immutable"}]
    });
    assert_eq!(server.post(CRDS, &crd).await.0, 201);
    assert_eq!(server.post(CRONTABS, &crontab("t", 0, 1, 2)).await.0, 201);
    let patch = |image: &str| {
        server
            .http
            .patch(server.url(&format!("{CRONTABS}/t")))
            .header("content-type", "application/merge-patch+json")
            .body(json!({"spec": {"image": image}}).to_string())
    };
    let (status, body) = server.send(patch("changed")).await;
    assert_eq!(status, 422, "{body}");
    assert!(
        body["message"]
            .as_str()
            .expect("message")
            .contains("spec.image: Invalid value: \"changed\": image is immutable"),
        "{body}"
    );
    let (status, _) = server.send(patch("my-awesome-cron-image")).await;
    assert_eq!(status, 200);
}

/// `metadata` is ObjectMeta only at the root and in embedded resources: elsewhere it is an
/// ordinary property, its declared fields visible to CEL, pruned and defaulted as any other
/// (an operator's pod template whose `metadata` declares `namespace`, say). `namespace` is a CEL
/// keyword, escaped to `__namespace__`; the apiserver (compatibility version 1.31 and later)
/// recognises the keyword as that field's name.
#[rstest]
#[tokio::test]
async fn a_nested_metadata_property_is_an_ordinary_field(#[future(awt)] server: TestServer) {
    let mut crd = crate::harness::crontab_crd();
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"] = json!({
        "type": "object",
        "properties": {
            "tpl": {
                "type": "object",
                "x-kubernetes-validations": [
                    {"rule": "!has(self.metadata.namespace)", "message": "namespace is set by the operator"}
                ],
                "properties": {
                    "metadata": {"type": "object", "properties": {
                        "name": {"type": "string"},
                        "namespace": {"type": "string"},
                        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                        "tier": {"type": "string", "default": "web"}
                    }}
                }
            }
        }
    });
    let (status, body) = server.post(CRDS, &crd).await;
    assert_eq!(status, 201, "{body}");
    let object = |meta: Value| {
        json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab", "metadata": {"name": "t"},
            "spec": {"tpl": {"metadata": meta}}})
    };
    let (status, body) = server
        .post(CRONTABS, &object(json!({"namespace": "elsewhere"})))
        .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(
        body["message"],
        "CronTab.stable.example.com \"t\" is invalid: spec.tpl: Invalid value: namespace is set by the operator"
    );
    let (status, body) = server
        .post(CRONTABS, &object(json!({"name": "x", "unknown": 1})))
        .await;
    assert_eq!(status, 201, "{body}");
    // Pruned and defaulted as an ordinary object.
    assert_eq!(
        body["spec"]["tpl"]["metadata"],
        json!({"name": "x", "tier": "web"})
    );
}
