//! flowcontrol.apiserver.k8s.io/v1 FlowSchemas and PriorityLevelConfigurations through kube-rs:
//! the bootstrap configuration, the `Dangling` condition as the APF controller keeps it, the
//! v1 defaults, validation with the mandatory objects' fixed specs, and the Tables.

use k8s_openapi::api::flowcontrol::v1::{FlowSchema, PriorityLevelConfiguration};
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use rstest::rstest;
use serde_json::json;

use crate::harness::{api_error, server, TestServer};
use crate::rbac::{table, typed};

const SCHEMAS: &str = "/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas";
const LEVELS: &str = "/apis/flowcontrol.apiserver.k8s.io/v1/prioritylevelconfigurations";

/// The `Dangling` condition of a FlowSchema: status, reason, message.
fn dangling(fs: &FlowSchema) -> (String, String, String) {
    let conditions = fs
        .status
        .as_ref()
        .and_then(|s| s.conditions.clone())
        .unwrap_or_default();
    let c = conditions
        .iter()
        .find(|c| c.type_ == "Dangling")
        .cloned()
        .unwrap_or_default();
    (
        c.status.unwrap_or_default(),
        c.reason.unwrap_or_default(),
        c.message.unwrap_or_default(),
    )
}

#[rstest]
#[tokio::test]
async fn the_bootstrap_configuration(#[future(awt)] server: TestServer) {
    let schemas: Api<FlowSchema> = Api::all(server.client.clone());
    let levels: Api<PriorityLevelConfiguration> = Api::all(server.client.clone());
    assert_eq!(
        schemas
            .list(&ListParams::default())
            .await
            .expect("listed")
            .items
            .len(),
        11
    );
    assert_eq!(
        levels
            .list(&ListParams::default())
            .await
            .expect("listed")
            .items
            .len(),
        8
    );

    let exempt = schemas.get("exempt").await.expect("exempt");
    assert_eq!(
        exempt
            .metadata
            .annotations
            .as_ref()
            .map(|a| a["apf.kubernetes.io/autoupdate-spec"].clone()),
        Some("true".into())
    );
    assert_eq!(exempt.spec.matching_precedence, Some(1));
    assert_eq!(
        dangling(&exempt),
        ("False".into(), "Found".into(), "This FlowSchema references the PriorityLevelConfiguration object named \"exempt\" and it exists".into())
    );
    let catch_all = levels.get("catch-all").await.expect("catch-all");
    let limited = catch_all.spec.limited.expect("limited");
    assert_eq!(
        (limited.nominal_concurrency_shares, limited.lendable_percent),
        (Some(5), Some(0))
    );

    let (names, body) = table(&server, SCHEMAS).await;
    assert_eq!(
        names,
        [
            "Name",
            "PriorityLevel",
            "MatchingPrecedence",
            "DistinguisherMethod",
            "Age",
            "MissingPL"
        ]
    );
    let row = body["rows"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["cells"][0] == "exempt")
        .expect("exempt's row");
    assert_eq!(
        row["cells"]
            .as_array()
            .map(|c| c[1..4].to_vec())
            .unwrap_or_default(),
        json!(["exempt", 1, "<none>"])
            .as_array()
            .cloned()
            .unwrap_or_default()
    );
    assert_eq!(row["cells"][5], "False");
    let (names, body) = table(&server, LEVELS).await;
    assert_eq!(
        names,
        [
            "Name",
            "Type",
            "NominalConcurrencyShares",
            "Queues",
            "HandSize",
            "QueueLengthLimit",
            "Age"
        ]
    );
    let row = body["rows"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["cells"][0] == "exempt")
        .expect("exempt's row");
    assert_eq!(
        row["cells"]
            .as_array()
            .map(|c| c[1..6].to_vec())
            .unwrap_or_default(),
        json!(["Exempt", "<none>", "<none>", "<none>", "<none>"])
            .as_array()
            .cloned()
            .unwrap_or_default()
    );
}

#[rstest]
#[tokio::test]
async fn dangling_flow_schemas(#[future(awt)] server: TestServer) {
    let schemas: Api<FlowSchema> = Api::all(server.client.clone());
    let mine: FlowSchema = typed(json!({"metadata": {"name": "mine"},
        "spec": {"priorityLevelConfiguration": {"name": "nope"},
            "rules": [{"subjects": [{"kind": "Group", "group": {"name": "g"}}],
                "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/x"]}]}]}}));
    let created = schemas
        .create(&PostParams::default(), &mine)
        .await
        .expect("created");
    assert_eq!(created.spec.matching_precedence, Some(1000), "defaulted");
    assert_eq!(created.metadata.generation, Some(1));
    let read = schemas.get("mine").await.expect("read");
    assert_eq!(
        dangling(&read),
        ("True".into(), "NotFound".into(), "This FlowSchema references the PriorityLevelConfiguration object named \"nope\" but there is no such object".into())
    );
    let manager = read
        .metadata
        .managed_fields
        .unwrap_or_default()
        .into_iter()
        .find(|m| m.subresource.as_deref() == Some("status"));
    assert_eq!(
        manager.and_then(|m| m.manager).as_deref(),
        Some("api-priority-and-fairness-config-consumer-v1")
    );

    // The level appears: the schema stops dangling; v1's defaults fill the level in.
    let levels: Api<PriorityLevelConfiguration> = Api::all(server.client.clone());
    let nope: PriorityLevelConfiguration = typed(json!({"metadata": {"name": "nope"},
        "spec": {"type": "Limited", "limited": {"limitResponse": {"type": "Queue", "queuing": {}}}}}));
    let level = levels
        .create(&PostParams::default(), &nope)
        .await
        .expect("created");
    let limited = level.spec.limited.expect("limited");
    assert_eq!(limited.nominal_concurrency_shares, Some(30));
    let queuing = limited.limit_response.queuing.expect("queuing");
    assert_eq!(
        (
            queuing.queues,
            queuing.hand_size,
            queuing.queue_length_limit
        ),
        (Some(64), Some(8), Some(50))
    );
    assert_eq!(
        dangling(&schemas.get("mine").await.expect("read")).0,
        "False"
    );
    levels
        .delete("nope", &DeleteParams::default())
        .await
        .expect("deleted");
    assert_eq!(
        dangling(&schemas.get("mine").await.expect("read")).0,
        "True"
    );
}

#[rstest]
#[tokio::test]
async fn validation_and_the_mandatory_objects(#[future(awt)] server: TestServer) {
    let schemas: Api<FlowSchema> = Api::all(server.client.clone());
    let bad: FlowSchema = typed(json!({"metadata": {"name": "bad"},
        "spec": {"priorityLevelConfiguration": {"name": "global-default"}, "matchingPrecedence": 1}}));
    let err = schemas
        .create(&PostParams::default(), &bad)
        .await
        .expect_err("precedence 1");
    assert_eq!(
        api_error(err).message,
        "FlowSchema.flowcontrol.apiserver.k8s.io \"bad\" is invalid: spec.matchingPrecedence: Invalid value: 1: only the schema named 'exempt' may have matchingPrecedence 1"
    );
    let (status, body) = server
        .send(
            server
                .http
                .patch(server.url(&format!("{LEVELS}/catch-all")))
                .header("content-type", "application/merge-patch+json")
                .body(json!({"spec": {"limited": {"nominalConcurrencyShares": 6}}}).to_string()),
        )
        .await;
    assert_eq!(status, 422);
    assert_eq!(
        body["message"],
        "PriorityLevelConfiguration.flowcontrol.apiserver.k8s.io \"catch-all\" is invalid: spec: Invalid value: {\"Type\":\"Limited\",\"Limited\":{\"NominalConcurrencyShares\":6,\"LimitResponse\":{\"Type\":\"Reject\",\"Queuing\":null},\"LendablePercent\":0,\"BorrowingLimitPercent\":null},\"Exempt\":null}: spec of 'catch-all' must equal the fixed value"
    );
    // A deleted bootstrap object is gone until the ensurer restores it (in a while).
    schemas
        .delete("global-default", &DeleteParams::default())
        .await
        .expect("deleted");
    assert_eq!(
        api_error(schemas.get("global-default").await.expect_err("gone")).code,
        404
    );
}
