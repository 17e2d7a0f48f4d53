//! The CSI kinds of storage.k8s.io/v1 through kube-rs's typed API: CSIDrivers (defaults,
//! generation, immutable fields, the token-secrets warning), CSINodes, CSIStorageCapacities,
//! VolumeAttachments (+status) and VolumeAttributesClasses, with their Tables and the field
//! selectors the apiserver refuses.

use k8s_openapi::api::storage::v1::{
    CSIDriver, CSINode, CSIStorageCapacity, VolumeAttachment, VolumeAttributesClass,
};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use rstest::rstest;
use serde_json::json;

use crate::harness::{api_error, server, TestServer};
use crate::rbac::{table, typed};

const GROUP: &str = "/apis/storage.k8s.io/v1";

#[rstest]
#[tokio::test]
async fn csi_drivers(#[future(awt)] server: TestServer) {
    let api: Api<CSIDriver> = Api::all(server.client.clone());
    let created = api
        .create(
            &PostParams::default(),
            &typed(json!({"metadata": {"name": "csi.example.com"}, "spec": {}})),
        )
        .await
        .expect("create");
    let spec = serde_json::to_value(&created.spec).expect("json");
    assert_eq!(
        spec,
        json!({"attachRequired": true, "podInfoOnMount": false, "storageCapacity": false,
            "fsGroupPolicy": "ReadWriteOnceWithFSType", "requiresRepublish": false,
            "seLinuxMount": false, "volumeLifecycleModes": ["Persistent"]})
    );
    assert_eq!(created.metadata.generation, None);

    let (code, body) = server
        .send(
            server
                .http
                .patch(server.url(&format!("{GROUP}/csidrivers/csi.example.com")))
                .header("content-type", "application/merge-patch+json")
                .json(&json!({"spec": {"podInfoOnMount": true, "tokenRequests": [{"audience": "vault"}]}})),
        )
        .await;
    assert_eq!(code, 200, "{body}");
    assert_eq!(body["metadata"]["generation"], 1);

    let err = api
        .patch(
            "csi.example.com",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"attachRequired": false}})),
        )
        .await
        .expect_err("immutable");
    assert_eq!(
        api_error(err).message,
        "CSIDriver.storage.k8s.io \"csi.example.com\" is invalid: spec.attachedRequired: Invalid value: false: field is immutable"
    );

    let (names, body) = table(&server, &format!("{GROUP}/csidrivers")).await;
    assert_eq!(
        names,
        [
            "Name",
            "AttachRequired",
            "PodInfoOnMount",
            "StorageCapacity",
            "TokenRequests",
            "RequiresRepublish",
            "Modes",
            "Age"
        ]
    );
    let cells = &body["rows"][0]["cells"];
    assert_eq!(cells[1], true);
    assert_eq!(cells[4], "vault");
    assert_eq!(cells[6], "Persistent");

    let deleted = api
        .delete("csi.example.com", &DeleteParams::default())
        .await
        .expect("delete");
    assert!(deleted.left().is_some(), "the deleted object comes back");
}

#[rstest]
#[tokio::test]
async fn a_token_request_without_secrets_warns(#[future(awt)] server: TestServer) {
    let driver = json!({"apiVersion": "storage.k8s.io/v1", "kind": "CSIDriver",
        "metadata": {"name": "tokens.example.com"},
        "spec": {"tokenRequests": [{"audience": "a", "expirationSeconds": 3600}]}});
    let resp = server
        .http
        .post(server.url(&format!("{GROUP}/csidrivers")))
        .json(&driver)
        .send()
        .await
        .expect("sent");
    assert_eq!(resp.status().as_u16(), 201);
    let warning = resp.headers().get("warning").expect("a warning");
    assert_eq!(
        warning.to_str().expect("text"),
        "299 - \"spec.serviceAccountTokenInSecrets is unset; if supported by this CSI driver, set to true to prevent possible logging of tokens in volume attributes\""
    );
}

#[rstest]
#[tokio::test]
async fn csi_nodes_and_capacities(#[future(awt)] server: TestServer) {
    let nodes: Api<CSINode> = Api::all(server.client.clone());
    nodes
        .create(
            &PostParams::default(),
            &typed(json!({"metadata": {"name": "node-1"}, "spec": {"drivers": [
                {"name": "csi.example.com", "nodeID": "n-1", "topologyKeys": ["topology.example.com/zone"]}]}})),
        )
        .await
        .expect("create");
    let err = nodes
        .patch(
            "node-1",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"drivers": [{"name": "csi.example.com", "nodeID": "n-2", "topologyKeys": ["topology.example.com/zone"]}]}})),
        )
        .await
        .expect_err("immutable");
    assert_eq!(
        api_error(err).message,
        "CSINode.storage.k8s.io \"node-1\" is invalid: spec.drivers: Invalid value: {\"Name\":\"csi.example.com\",\"NodeID\":\"n-2\",\"TopologyKeys\":[\"topology.example.com/zone\"],\"Allocatable\":null}: field is immutable"
    );
    let (_, body) = table(&server, &format!("{GROUP}/csinodes")).await;
    assert_eq!(body["rows"][0]["cells"][1], 1);

    let capacities: Api<CSIStorageCapacity> = Api::namespaced(server.client.clone(), "default");
    let err = capacities
        .create(
            &PostParams::default(),
            &typed(json!({"metadata": {"name": "c"}, "storageClassName": "", "capacity": "-1Gi"})),
        )
        .await
        .expect_err("invalid");
    let status = api_error(err);
    assert_eq!(status.code, 422);
    assert!(
        status
            .message
            .contains("capacity: Invalid value: \"-1Gi\": must be greater than or equal to 0"),
        "{}",
        status.message
    );
    capacities
        .create(
            &PostParams::default(),
            &typed(
                json!({"metadata": {"name": "c"}, "storageClassName": "fast", "capacity": "10Gi"}),
            ),
        )
        .await
        .expect("create");
    let (names, _) = table(
        &server,
        &format!("{GROUP}/namespaces/default/csistoragecapacities"),
    )
    .await;
    assert_eq!(names, ["Name", "Created At"]);
}

#[rstest]
#[tokio::test]
async fn volume_attachments(#[future(awt)] server: TestServer) {
    let api: Api<VolumeAttachment> = Api::all(server.client.clone());
    let created = api
        .create(
            &PostParams::default(),
            &typed(
                json!({"metadata": {"name": "va"}, "spec": {"attacher": "csi.example.com",
                "nodeName": "node-1", "source": {"persistentVolumeName": "pv-1"}},
                "status": {"attached": true}}),
            ),
        )
        .await
        .expect("create");
    assert_eq!(
        created.status.map(|s| s.attached),
        Some(false),
        "status starts empty"
    );
    let attached = api
        .patch_status(
            "va",
            &PatchParams::default(),
            &Patch::Merge(
                json!({"status": {"attached": true, "attachmentMetadata": {"dev": "/dev/x"}}}),
            ),
        )
        .await
        .expect("status");
    assert_eq!(attached.status.map(|s| s.attached), Some(true));
    let err = api
        .patch(
            "va",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"nodeName": "node-2"}})),
        )
        .await
        .expect_err("immutable");
    assert_eq!(
        api_error(err).message,
        "VolumeAttachment.storage.k8s.io \"va\" is invalid: spec: Invalid value: {\"Attacher\":\"csi.example.com\",\"Source\":{\"PersistentVolumeName\":\"pv-1\",\"InlineVolumeSpec\":null},\"NodeName\":\"node-2\"}: field is immutable"
    );
    let (_, body) = table(&server, &format!("{GROUP}/volumeattachments")).await;
    let cells = &body["rows"][0]["cells"];
    assert_eq!(cells[1], "csi.example.com");
    assert_eq!(cells[2], "pv-1");
    assert_eq!(cells[4], true);

    let err = api
        .list(&ListParams::default().fields("spec.nodeName=node-1"))
        .await
        .expect_err("not a field selector");
    assert_eq!(
        api_error(err).message,
        "\"spec.nodeName\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
    );
}

#[rstest]
#[tokio::test]
async fn volume_attributes_classes(#[future(awt)] server: TestServer) {
    let api: Api<VolumeAttributesClass> = Api::all(server.client.clone());
    let err = api
        .create(
            &PostParams::default(),
            &typed(json!({"metadata": {"name": "gold"}, "driverName": "csi.example.com"})),
        )
        .await
        .expect_err("no parameters");
    assert_eq!(
        api_error(err).message,
        "VolumeAttributesClass.storage.k8s.io \"gold\" is invalid: parameters: Required value: must contain at least one key/value pair"
    );
    api.create(
        &PostParams::default(),
        &typed(json!({"metadata": {"name": "gold"}, "driverName": "csi.example.com", "parameters": {"iops": "5000"}})),
    )
    .await
    .expect("create");
    let err = api
        .patch(
            "gold",
            &PatchParams::default(),
            &Patch::Merge(json!({"parameters": {"iops": "6000"}})),
        )
        .await
        .expect_err("immutable");
    assert_eq!(
        api_error(err).message,
        "VolumeAttributesClass.storage.k8s.io \"gold\" is invalid: parameters: Forbidden: updates to parameters are forbidden."
    );
    let (names, body) = table(&server, &format!("{GROUP}/volumeattributesclasses")).await;
    assert_eq!(names, ["Name", "DriverName", "Age"]);
    assert_eq!(body["rows"][0]["cells"][1], "csi.example.com");
}
