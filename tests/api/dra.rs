//! resource.k8s.io/v1 through kube-rs's typed API: DeviceClasses (selectors, generation),
//! ResourceClaims (defaults, the immutable spec, /status allocation and reservation, the
//! State column), ResourceClaimTemplates (template metadata, the immutable spec),
//! ResourceSlices (required shape, immutable fields, the driver warning, field selectors),
//! their Tables, deletes answered with the object, and the group's discovery.

use k8s_openapi::api::resource::v1::{
    DeviceClass, ResourceClaim, ResourceClaimTemplate, ResourceSlice,
};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use rstest::rstest;
use serde_json::{json, Value};

use crate::harness::{api_error, server, TestServer};
use crate::rbac::{protobuf, table, typed};

const GROUP: &str = "/apis/resource.k8s.io/v1";

#[rstest]
#[tokio::test]
async fn device_classes(#[future(awt)] server: TestServer) {
    let api: Api<DeviceClass> = Api::all(server.client.clone());
    let err = api
        .create(
            &PostParams::default(),
            &typed(json!({"metadata": {"name": "gpu"}, "spec": {
                "selectors": [{"cel": {"expression": "device.driver"}}],
                "extendedResourceName": "gpu"}})),
        )
        .await
        .expect_err("invalid");
    assert_eq!(
        api_error(err).message,
        "DeviceClass.resource.k8s.io \"gpu\" is invalid: [spec.selectors[0].cel.expression: Invalid value: \"device.driver\": must evaluate to bool or the unknown type, not string, spec.extendedResourceName: Invalid value: \"gpu\": must be a valid extended resource name]"
    );

    let created = api
        .create(
            &PostParams::default(),
            &typed(json!({"metadata": {"name": "gpu"}, "spec": {
                "selectors": [{"cel": {"expression": "device.driver == \"gpu.example.com\""}}]}})),
        )
        .await
        .expect("create");
    assert_eq!(created.metadata.generation, Some(1));
    let labelled = api
        .patch(
            "gpu",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"a": "b"}}})),
        )
        .await
        .expect("labels");
    assert_eq!(labelled.metadata.generation, Some(1));
    let changed = api
        .patch(
            "gpu",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"extendedResourceName": "example.com/gpu"}})),
        )
        .await
        .expect("spec");
    assert_eq!(changed.metadata.generation, Some(2));

    let (names, body) = table(&server, &format!("{GROUP}/deviceclasses")).await;
    assert_eq!(names, ["Name", "Age"]);
    assert_eq!(body["rows"][0]["cells"][0], "gpu");

    let deleted = api
        .delete("gpu", &DeleteParams::default())
        .await
        .expect("delete");
    assert!(deleted.left().is_some(), "the deleted object comes back");
}

fn claim(name: &str, requests: Value) -> ResourceClaim {
    typed(json!({"metadata": {"name": name}, "spec": {"devices": {"requests": requests}}}))
}

#[rstest]
#[tokio::test]
async fn resource_claims(#[future(awt)] server: TestServer) {
    let api: Api<ResourceClaim> = Api::namespaced(server.client.clone(), "default");
    let err = api
        .create(
            &PostParams::default(),
            &claim(
                "bad",
                json!([{"name": "a.b", "exactly": {"deviceClassName": "gpu", "allocationMode": "All", "count": 2}},
                    {"name": "b"}]),
            ),
        )
        .await
        .expect_err("invalid");
    assert_eq!(
        api_error(err).message,
        "ResourceClaim.resource.k8s.io \"bad\" is invalid: [spec.devices.requests[0].name: Invalid value: \"a.b\": must not contain dots, spec.devices.requests[0].exactly.count: Invalid value: 2: must not be specified when allocationMode is 'All', spec.devices.requests[1]: Required value: exactly one of `exactly` or `firstAvailable` is required]"
    );

    let mut sent = claim(
        "c",
        json!([{"name": "req-0", "exactly": {"deviceClassName": "gpu"}}]),
    );
    sent.metadata.generation = Some(5);
    sent.status = Some(typed(
        json!({"reservedFor": [{"resource": "pods", "name": "p", "uid": "u"}]}),
    ));
    let created = api
        .create(&PostParams::default(), &sent)
        .await
        .expect("create");
    let json = serde_json::to_value(&created).expect("json");
    let exactly = &json["spec"]["devices"]["requests"][0]["exactly"];
    assert_eq!(
        *exactly,
        json!({"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1})
    );
    assert_eq!(
        created.metadata.generation,
        Some(5),
        "the client's generation"
    );
    assert!(
        created.status.is_some_and(|s| s.reserved_for.is_none()),
        "status reset"
    );

    let err = api
        .patch(
            "c",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"devices": {"requests": [{"name": "req-0",
                "exactly": {"deviceClassName": "gpu", "count": 2}}]}}})),
        )
        .await
        .expect_err("immutable");
    let status = api_error(err);
    assert_eq!(
        status.message,
        "ResourceClaim.resource.k8s.io \"c\" is invalid: spec: Invalid value: {\"Devices\":{\"Requests\":[{\"Name\":\"req-0\",\"Exactly\":{\"DeviceClassName\":\"gpu\",\"Selectors\":null,\"AllocationMode\":\"ExactCount\",\"Count\":2,\"AdminAccess\":null,\"Tolerations\":null,\"Capacity\":null},\"FirstAvailable\":null}],\"Constraints\":null,\"Config\":null}}: field is immutable"
    );

    let consumer = json!({"resource": "pods", "name": "p", "uid": "u1"});
    let err = api
        .patch_status(
            "c",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"reservedFor": [consumer]}})),
        )
        .await
        .expect_err("no allocation");
    assert_eq!(
        api_error(err).message,
        "ResourceClaim.resource.k8s.io \"c\" is invalid: status.reservedFor: Forbidden: may not be specified when `allocated` is not set"
    );
    let result = |device: &str| json!({"request": "req-0", "driver": "gpu.example.com", "pool": "pool", "device": device});
    let allocated = api
        .patch_status(
            "c",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"ignored": "x"}}, "status": {
                "allocation": {"devices": {"results": [result("dev-1")]}},
                "reservedFor": [consumer]}})),
        )
        .await
        .expect("allocate");
    assert!(
        allocated.metadata.labels.is_none(),
        "status writes keep metadata"
    );
    let err = api
        .patch_status(
            "c",
            &PatchParams::default(),
            &Patch::Merge(
                json!({"status": {"allocation": {"devices": {"results": [result("dev-2")]}}}}),
            ),
        )
        .await
        .expect_err("immutable allocation");
    assert!(
        api_error(err)
            .message
            .ends_with("\"ShareID\":null,\"ConsumedCapacity\":null}],\"Config\":null},\"NodeSelector\":null,\"AllocationTimestamp\":null}: field is immutable"),
    );

    let (names, body) = table(
        &server,
        &format!("{GROUP}/namespaces/default/resourceclaims"),
    )
    .await;
    assert_eq!(names, ["Name", "State", "Age"]);
    assert_eq!(body["rows"][0]["cells"][1], "allocated,reserved");

    let (code, body) = server
        .get(&format!(
            "{GROUP}/namespaces/default/resourceclaims?fieldSelector=spec.x%3Dy"
        ))
        .await;
    assert_eq!(code, 400);
    assert_eq!(
        body["message"],
        "\"spec.x\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
    );

    let deleted = api
        .delete("c", &DeleteParams::default())
        .await
        .expect("delete");
    assert!(deleted.left().is_some(), "the deleted object comes back");
}

#[rstest]
#[tokio::test]
async fn resource_claim_templates(#[future(awt)] server: TestServer) {
    let api: Api<ResourceClaimTemplate> = Api::namespaced(server.client.clone(), "default");
    let template = |metadata: Value, class: &str| -> ResourceClaimTemplate {
        typed(
            json!({"metadata": {"name": "t"}, "spec": {"metadata": metadata,
            "spec": {"devices": {"requests": [{"name": "req-0", "exactly": {"deviceClassName": class}}]}}}}),
        )
    };
    let err = api
        .create(&PostParams::default(), &template(json!({"name": "x"}), ""))
        .await
        .expect_err("invalid");
    assert_eq!(
        api_error(err).message,
        "ResourceClaimTemplate.resource.k8s.io \"t\" is invalid: [spec.metadata.name: Forbidden: cannot be set, spec.spec.devices.requests[0].exactly.deviceClassName: Required value]"
    );
    api.create(
        &PostParams::default(),
        &template(json!({"labels": {"a": "b"}}), "gpu"),
    )
    .await
    .expect("create");
    let mut changed = template(json!({"labels": {"a": "b"}}), "gpu2");
    changed.metadata.resource_version = None;
    let err = api
        .replace("t", &PostParams::default(), &changed)
        .await
        .expect_err("immutable");
    assert_eq!(
        api_error(err).message,
        "ResourceClaimTemplate.resource.k8s.io \"t\" is invalid: spec: Invalid value: {\"labels\":{\"a\":\"b\"},\"Spec\":{\"Devices\":{\"Requests\":[{\"Name\":\"req-0\",\"Exactly\":{\"DeviceClassName\":\"gpu2\",\"Selectors\":null,\"AllocationMode\":\"ExactCount\",\"Count\":1,\"AdminAccess\":null,\"Tolerations\":null,\"Capacity\":null},\"FirstAvailable\":null}],\"Constraints\":null,\"Config\":null}}}: field is immutable"
    );

    let (names, _) = table(
        &server,
        &format!("{GROUP}/namespaces/default/resourceclaimtemplates"),
    )
    .await;
    assert_eq!(names, ["Name", "Age"]);
    let deleted = api
        .delete("t", &DeleteParams::default())
        .await
        .expect("delete");
    assert!(deleted.left().is_some(), "the deleted object comes back");
}

fn slice(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
        "metadata": {"name": name}, "spec": spec})
}

#[rstest]
#[tokio::test]
async fn resource_slices(#[future(awt)] server: TestServer) {
    let api: Api<ResourceSlice> = Api::all(server.client.clone());
    let err = api
        .create(&PostParams::default(), &typed(slice("empty", json!({}))))
        .await
        .expect_err("invalid");
    assert_eq!(
        api_error(err).message,
        "ResourceSlice.resource.k8s.io \"empty\" is invalid: [spec.driver: Required value, spec.pool.name: Required value, spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero, spec: Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required]"
    );

    let node_slice = slice(
        "node-1-gpu",
        json!({"driver": "Gpu.example.com", "nodeName": "node-1",
        "pool": {"name": "node-1", "resourceSliceCount": 1},
        "devices": [{"name": "gpu-0", "attributes": {"model": {"string": "a100"}},
            "taints": [{"key": "k", "effect": "NoSchedule"}]}]}),
    );
    let resp = server
        .http
        .post(server.url(&format!("{GROUP}/resourceslices")))
        .json(&node_slice)
        .send()
        .await
        .expect("sent");
    assert_eq!(resp.status().as_u16(), 201);
    assert_eq!(
        resp.headers().get("warning").map(|w| w.to_str().unwrap_or("")),
        Some("299 - \"spec.driver: driver names should be lowercase; \\\"Gpu.example.com\\\" contains uppercase characters\"")
    );
    let created: Value = resp.json().await.expect("json");
    assert_eq!(created["metadata"]["generation"], 1);
    assert!(created["spec"]["devices"][0]["taints"][0]["timeAdded"].is_string());
    api.create(
        &PostParams::default(),
        &typed(slice(
            "shared",
            json!({"driver": "net.example.com", "allNodes": true,
            "pool": {"name": "shared", "resourceSliceCount": 1}}),
        )),
    )
    .await
    .expect("create");

    let bumped = api
        .patch(
            "node-1-gpu",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"pool": {"generation": 2}}})),
        )
        .await
        .expect("patch");
    assert_eq!(bumped.metadata.generation, Some(2));
    let err = api
        .patch(
            "node-1-gpu",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"driver": "b.example.com"}})),
        )
        .await
        .expect_err("immutable");
    assert_eq!(
        api_error(err).message,
        "ResourceSlice.resource.k8s.io \"node-1-gpu\" is invalid: spec.driver: Invalid value: \"b.example.com\": field is immutable"
    );

    let names = |list: Vec<ResourceSlice>| -> Vec<String> {
        list.into_iter().filter_map(|s| s.metadata.name).collect()
    };
    for (selector, want) in [
        ("spec.nodeName=node-1", vec!["node-1-gpu"]),
        ("spec.driver=net.example.com", vec!["shared"]),
        ("spec.nodeName=", vec!["shared"]),
    ] {
        let listed = api
            .list(&ListParams::default().fields(selector))
            .await
            .expect("list");
        assert_eq!(names(listed.items), want, "{selector}");
    }
    let (code, body) = server
        .get(&format!(
            "{GROUP}/resourceslices?fieldSelector=metadata.namespace%3Dx"
        ))
        .await;
    assert_eq!(code, 400);
    assert_eq!(
        body["message"],
        "field label not supported for resource.k8s.io/v1, Kind=ResourceSlice: metadata.namespace"
    );

    let (columns, body) = table(&server, &format!("{GROUP}/resourceslices")).await;
    assert_eq!(columns, ["Name", "Node", "Driver", "Pool", "Age"]);
    let cells = &body["rows"][0]["cells"];
    assert_eq!(
        (&cells[1], &cells[2], &cells[3]),
        (
            &json!("node-1"),
            &json!("Gpu.example.com"),
            &json!("node-1")
        )
    );

    let decoded = protobuf(&server, &format!("{GROUP}/resourceslices/node-1-gpu")).await;
    assert_eq!(
        decoded["spec"]["devices"][0]["attributes"]["model"]["string"],
        "a100"
    );

    let deleted = api
        .delete("shared", &DeleteParams::default())
        .await
        .expect("delete");
    assert!(deleted.left().is_some(), "the deleted object comes back");
}

#[rstest]
#[tokio::test]
async fn only_v1_is_served(#[future(awt)] server: TestServer) {
    let (code, group) = server.get("/apis/resource.k8s.io").await;
    assert_eq!(code, 200);
    assert_eq!(
        group["versions"],
        json!([{"groupVersion": "resource.k8s.io/v1", "version": "v1"}])
    );
    let (_, list) = server.get(GROUP).await;
    let names: Vec<&str> = list["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert_eq!(
        names,
        [
            "deviceclasses",
            "resourceclaims",
            "resourceclaims/status",
            "resourceclaimtemplates",
            "resourceslices"
        ]
    );
}
