//! node.k8s.io/v1 RuntimeClasses through kube-rs's typed API: the handler (a DNS label,
//! immutable), the overhead checked as container limits, duplicate tolerations, the
//! deprecated-label warning and the Table.

use k8s_openapi::api::node::v1::RuntimeClass;
use kube::api::{Api, Patch, PatchParams, PostParams};
use rstest::rstest;
use serde_json::json;

use crate::harness::{api_error, server, TestServer};
use crate::rbac::{table, typed};

const PATH: &str = "/apis/node.k8s.io/v1/runtimeclasses";

#[rstest]
#[tokio::test]
async fn runtime_classes(#[future(awt)] server: TestServer) {
    let api: Api<RuntimeClass> = Api::all(server.client.clone());
    let err = api
        .create(
            &PostParams::default(),
            &typed(json!({"metadata": {"name": "gvisor"}, "handler": "run.sc",
                "overhead": {"podFixed": {"memory": "-1Mi"}}})),
        )
        .await
        .expect_err("invalid");
    assert_eq!(
        api_error(err).message,
        "RuntimeClass.node.k8s.io \"gvisor\" is invalid: [handler: Invalid value: \"run.sc\": must not contain dots, overhead.limits[memory]: Invalid value: \"-1Mi\": must be greater than or equal to 0]"
    );

    let class = json!({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
        "metadata": {"name": "gvisor"}, "handler": "runsc",
        "overhead": {"podFixed": {"memory": "64Mi", "cpu": "250m"}},
        "scheduling": {"nodeSelector": {"beta.kubernetes.io/os": "linux"}}});
    let resp = server
        .http
        .post(server.url(PATH))
        .json(&class)
        .send()
        .await
        .expect("sent");
    assert_eq!(resp.status().as_u16(), 201);
    assert_eq!(
        resp.headers().get("warning").map(|w| w.to_str().unwrap_or("")),
        Some("299 - \"scheduling.nodeSelector: deprecated since v1.14; use \\\"kubernetes.io/os\\\" instead\"")
    );

    let err = api
        .patch(
            "gvisor",
            &PatchParams::default(),
            &Patch::Merge(json!({"handler": "kata"})),
        )
        .await
        .expect_err("immutable");
    assert_eq!(
        api_error(err).message,
        "RuntimeClass.node.k8s.io \"gvisor\" is invalid: handler: Invalid value: \"kata\": field is immutable"
    );

    let (names, body) = table(&server, PATH).await;
    assert_eq!(names, ["Name", "Handler", "Age"]);
    assert_eq!(body["rows"][0]["cells"][1], "runsc");
}
