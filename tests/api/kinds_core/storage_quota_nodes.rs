//! core/v1 LimitRanges, ResourceQuotas, PersistentVolumes, PersistentVolumeClaims and Nodes:
//! defaults, validation, status subresources, the storage protection finalizers, field
//! selectors and kubectl's columns.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    LimitRange, Node, PersistentVolume, PersistentVolumeClaim, Pod, ResourceQuota,
};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use rstest::rstest;
use serde_json::json;

use super::{columns, narrow_columns, row, table};
use crate::harness::{api_error, server, TestServer};

fn from<T: serde::de::DeserializeOwned>(v: serde_json::Value) -> T {
    serde_json::from_value(v).expect("valid object")
}

#[rstest]
#[tokio::test]
async fn limit_ranges_and_quotas(#[future(awt)] server: TestServer) {
    let limits: Api<LimitRange> = Api::namespaced(server.client.clone(), "default");
    let created = limits
        .create(
            &PostParams::default(),
            &from(
                json!({"metadata": {"name": "defaults"}, "spec": {"limits": [
                {"type": "Container", "max": {"cpu": "2"}, "min": {"memory": "64Mi"}}]}}),
            ),
        )
        .await
        .expect("create");
    let item = &created.spec.unwrap_or_default().limits[0];
    let q =
        |m: &Option<BTreeMap<String, k8s_openapi::apimachinery::pkg::api::resource::Quantity>>,
         k: &str| { m.as_ref().and_then(|m| m.get(k)).map(|q| q.0.clone()) };
    assert_eq!(q(&item.default, "cpu").as_deref(), Some("2"));
    assert_eq!(q(&item.default_request, "memory").as_deref(), Some("64Mi"));
    let err = api_error(
        limits
            .create(
                &PostParams::default(),
                &from(json!({"metadata": {"name": "bad"}, "spec": {"limits": [
                    {"type": "Container", "min": {"cpu": "2"}, "max": {"cpu": "1"}}]}})),
            )
            .await
            .expect_err("min > max"),
    );
    assert_eq!(
        err.message,
        "LimitRange \"bad\" is invalid: [spec.limits[0].min[cpu]: Invalid value: \"2\": min value 2 is greater than max value 1, spec.limits[0].defaultRequest[cpu]: Invalid value: \"1\": min value 2 is greater than default request value 1, spec.limits[0].default[cpu]: Invalid value: \"2\": min value 2 is greater than default value 1]",
        "the defaults (from max) are checked too"
    );
    let t = table(&server, "/api/v1/namespaces/default/limitranges").await;
    assert_eq!(columns(&t), ["Name", "Created At"]);

    let quotas: Api<ResourceQuota> = Api::namespaced(server.client.clone(), "default");
    let err = api_error(
        quotas
            .create(
                &PostParams::default(),
                &from(json!({"metadata": {"name": "bad"}, "spec": {"hard": {"pods": "1500m"}}})),
            )
            .await
            .expect_err("not whole"),
    );
    assert_eq!(
        err.message,
        "ResourceQuota \"bad\" is invalid: spec.hard[pods]: Invalid value: \"1500m\": must be an integer"
    );
    let quota = quotas
        .create(
            &PostParams::default(),
            &from(json!({"metadata": {"name": "team"}, "spec": {"hard": {"pods": "10", "limits.cpu": "4"}},
                "status": {"used": {"pods": "99"}}})),
        )
        .await
        .expect("create");
    assert!(
        quota.status.unwrap_or_default().used.is_none(),
        "status is the server's"
    );
    quotas
        .patch_status(
            "team",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"hard": {"pods": "10", "limits.cpu": "4"}, "used": {"pods": "3", "limits.cpu": "500m"}}})),
        )
        .await
        .expect("status");
    let t = table(&server, "/api/v1/namespaces/default/resourcequotas").await;
    assert_eq!(columns(&t), ["Name", "Request", "Limit", "Age"]);
    let cells = row(&t, "team");
    assert_eq!(cells[1], "pods: 3/10");
    assert_eq!(cells[2], "limits.cpu: 500m/4");
    let deleted = quotas
        .delete("team", &DeleteParams::default())
        .await
        .expect("delete");
    assert!(deleted.left().is_some());
}

#[rstest]
#[tokio::test]
async fn volumes_and_claims(#[future(awt)] server: TestServer) {
    let pvs: Api<PersistentVolume> = Api::all(server.client.clone());
    let pv = pvs
        .create(
            &PostParams::default(),
            &from(json!({"metadata": {"name": "pv-1"}, "spec": {"capacity": {"storage": "5Gi"},
                "accessModes": ["ReadWriteOnce", "ReadOnlyMany"], "nfs": {"server": "nfs.local", "path": "/export"},
                "storageClassName": "slow"}})),
        )
        .await
        .expect("create");
    let spec = pv.spec.clone().unwrap_or_default();
    assert_eq!(
        spec.persistent_volume_reclaim_policy.as_deref(),
        Some("Retain")
    );
    assert_eq!(spec.volume_mode.as_deref(), Some("Filesystem"));
    let status = pv.status.clone().unwrap_or_default();
    assert_eq!(status.phase.as_deref(), Some("Pending"));
    assert!(status.last_phase_transition_time.is_some());
    assert_eq!(
        pv.metadata.finalizers,
        Some(vec!["kubernetes.io/pv-protection".into()])
    );
    assert!(pv.metadata.namespace.is_none());

    let err = api_error(
        pvs.create(
            &PostParams::default(),
            &from(json!({"metadata": {"name": "pv-bad"}, "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"]}})),
        )
        .await
        .expect_err("no source"),
    );
    assert_eq!(
        err.message,
        "PersistentVolume \"pv-bad\" is invalid: spec: Required value: must specify a volume type"
    );
    let available = pvs
        .patch_status(
            "pv-1",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"phase": "Available"}})),
        )
        .await
        .expect("status");
    assert_eq!(
        available.status.and_then(|s| s.phase).as_deref(),
        Some("Available")
    );
    let by_name = pvs
        .list(&ListParams::default().fields("name=pv-1"))
        .await
        .expect("list");
    assert_eq!(by_name.items.len(), 1);
    let t = table(&server, "/api/v1/persistentvolumes").await;
    assert_eq!(
        narrow_columns(&t),
        [
            "Name",
            "Capacity",
            "Access Modes",
            "Reclaim Policy",
            "Status",
            "Claim",
            "StorageClass",
            "VolumeAttributesClass",
            "Reason",
            "Age"
        ]
    );
    let cells = row(&t, "pv-1");
    assert_eq!(
        cells[1..8],
        [
            json!("5Gi"),
            json!("RWO,ROX"),
            json!("Retain"),
            json!("Available"),
            json!(""),
            json!("slow"),
            json!("<unset>")
        ]
    );

    let claims: Api<PersistentVolumeClaim> = Api::namespaced(server.client.clone(), "default");
    let err = api_error(
        claims
            .create(&PostParams::default(), &from(json!({"metadata": {"name": "bad"}, "spec": {"accessModes": ["ReadWriteOnce"]}})))
            .await
            .expect_err("no storage"),
    );
    assert_eq!(
        err.message,
        "PersistentVolumeClaim \"bad\" is invalid: spec.resources[storage]: Required value"
    );
    let claim = claims
        .create(
            &PostParams::default(),
            &from(
                json!({"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}}}}),
            ),
        )
        .await
        .expect("create");
    assert_eq!(
        claim.metadata.finalizers,
        Some(vec!["kubernetes.io/pvc-protection".into()])
    );
    assert_eq!(
        claim.status.clone().and_then(|s| s.phase).as_deref(),
        Some("Pending")
    );
    assert_eq!(
        claim.spec.clone().and_then(|s| s.volume_mode).as_deref(),
        Some("Filesystem")
    );
    let err = api_error(
        claims
            .patch(
                "data",
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"accessModes": ["ReadWriteMany"]}})),
            )
            .await
            .expect_err("immutable"),
    );
    assert!(err.message.starts_with("PersistentVolumeClaim \"data\" is invalid: spec: Forbidden: spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims"), "{}", err.message);
    // The volume name may be set once.
    claims
        .patch(
            "data",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"volumeName": "pv-1"}})),
        )
        .await
        .expect("bind");
    let t = table(&server, "/api/v1/namespaces/default/persistentvolumeclaims").await;
    assert_eq!(row(&t, "data")[1..3], [json!("Pending"), json!("pv-1")]);

    // The protection controller keeps a deleted claim while a scheduled pod names it, and
    // releases it when the pod goes (an unscheduled pod would not hold it).
    let pods: Api<Pod> = Api::namespaced(server.client.clone(), "default");
    pods.create(
        &PostParams::default(),
        &from(
            json!({"metadata": {"name": "user"}, "spec": {"nodeName": "node-1",
            "containers": [{"name": "c", "image": "busybox"}],
            "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]}}),
        ),
    )
    .await
    .expect("pod");
    claims
        .delete("data", &DeleteParams::default())
        .await
        .expect("delete");
    let waiting = claims.get("data").await.expect("still there");
    assert!(waiting.metadata.deletion_timestamp.is_some());
    let t = table(&server, "/api/v1/namespaces/default/persistentvolumeclaims").await;
    assert_eq!(row(&t, "data")[1], "Terminating");
    pods.delete("user", &DeleteParams::default())
        .await
        .expect("delete pod");
    assert_eq!(
        api_error(claims.get("data").await.expect_err("released")).code,
        404
    );
    // A volume nothing binds goes at once.
    pvs.delete("pv-1", &DeleteParams::default())
        .await
        .expect("delete volume");
    assert_eq!(
        api_error(pvs.get("pv-1").await.expect_err("gone")).code,
        404
    );
}

#[rstest]
#[tokio::test]
async fn nodes(#[future(awt)] server: TestServer) {
    let nodes: Api<Node> = Api::all(server.client.clone());
    let node = nodes
        .create(
            &PostParams::default(),
            &from(json!({"metadata": {"name": "worker-1", "labels": {"node-role.kubernetes.io/worker": ""}},
                "spec": {"podCIDR": "10.244.1.0/24", "podCIDRs": ["10.244.1.0/24"]},
                "status": {"capacity": {"cpu": "4", "memory": "8Gi", "pods": "110"},
                    "conditions": [{"type": "Ready", "status": "True"}],
                    "addresses": [{"type": "InternalIP", "address": "172.18.0.3"}],
                    "nodeInfo": {"kubeletVersion": "v1.36.0", "osImage": "Debian", "kernelVersion": "6.1",
                        "containerRuntimeVersion": "containerd://2.0", "architecture": "amd64",
                        "machineID": "", "systemUUID": "", "bootID": "", "kubeProxyVersion": "", "operatingSystem": "linux"}}})),
        )
        .await
        .expect("create");
    let status = node.status.clone().unwrap_or_default();
    assert_eq!(
        status.allocatable, status.capacity,
        "allocatable defaults to capacity"
    );
    let err = api_error(
        nodes
            .create(
                &PostParams::default(),
                &from(json!({"metadata": {"name": "bad"}, "spec": {"taints": [{"key": "a", "effect": "Sometimes"}]}})),
            )
            .await
            .expect_err("effect"),
    );
    assert_eq!(
        err.message,
        "Node \"bad\" is invalid: metadata.taints[0].effect: Unsupported value: \"Sometimes\": supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\""
    );

    // An absent `spec.unschedulable` selects as Go prints its zero value.
    let schedulable = nodes
        .list(&ListParams::default().fields("spec.unschedulable=false"))
        .await
        .expect("list");
    assert_eq!(schedulable.items.len(), 1);
    nodes
        .patch(
            "worker-1",
            &PatchParams::default(),
            &Patch::Strategic(json!({"spec": {"unschedulable": true}})),
        )
        .await
        .expect("cordon");
    let cordoned = nodes
        .list(&ListParams::default().fields("spec.unschedulable=true"))
        .await
        .expect("list");
    assert_eq!(cordoned.items.len(), 1);
    let schedulable = nodes
        .list(&ListParams::default().fields("spec.unschedulable=false"))
        .await
        .expect("list");
    assert!(schedulable.items.is_empty());
    let t = table(&server, "/api/v1/nodes").await;
    assert_eq!(
        narrow_columns(&t),
        ["Name", "Status", "Roles", "Age", "Version"]
    );
    assert_eq!(
        columns(&t)[5..],
        [
            "Internal-IP",
            "External-IP",
            "OS-Image",
            "Kernel-Version",
            "Container-Runtime"
        ]
    );
    let cells = row(&t, "worker-1");
    assert_eq!(
        cells[1..3],
        [json!("Ready,SchedulingDisabled"), json!("worker")]
    );
    assert_eq!(cells[4], "v1.36.0");
    assert_eq!(
        cells[5..],
        [
            json!("172.18.0.3"),
            json!("<none>"),
            json!("Debian"),
            json!("6.1 (amd64)"),
            json!("containerd://2.0")
        ]
    );

    // The kubelet's heartbeat goes through status; a spec write keeps the status.
    nodes
        .patch_status(
            "worker-1",
            &PatchParams::default(),
            &Patch::Strategic(
                json!({"status": {"conditions": [{"type": "Ready", "status": "False"}]}}),
            ),
        )
        .await
        .expect("status");
    let relabelled = nodes
        .patch(
            "worker-1",
            &PatchParams::apply("labeller"),
            &Patch::Apply(json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "worker-1", "labels": {"zone": "a"}},
                "status": {"conditions": [{"type": "Ready", "status": "True"}]}})),
        )
        .await
        .expect("apply");
    let ready = relabelled
        .status
        .and_then(|s| s.conditions)
        .unwrap_or_default();
    assert_eq!(
        ready[0].status, "False",
        "status is not written through the main resource"
    );
    let t = table(&server, "/api/v1/nodes").await;
    assert_eq!(row(&t, "worker-1")[1], "NotReady,SchedulingDisabled");
    let deleted = nodes
        .delete("worker-1", &DeleteParams::default())
        .await
        .expect("delete");
    assert!(deleted.left().is_some());
}
