//! coordination.k8s.io/v1 Leases: validation, optimistic concurrency, the Holder column, and
//! kube-rs's typed API as leader election uses it.

use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::MicroTime;
use kube::api::{Api, Patch, PatchParams, PostParams};
use rstest::rstest;
use serde_json::json;

use super::{columns, row, table};
use crate::harness::{api_error, server, TestServer};

fn lease(name: &str, holder: &str, duration: i32) -> Lease {
    Lease {
        metadata: kube::api::ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        },
        spec: Some(LeaseSpec {
            holder_identity: Some(holder.into()),
            lease_duration_seconds: Some(duration),
            acquire_time: Some(MicroTime(
                "2024-05-01T10:00:00.123456Z".parse().expect("time"),
            )),
            strategy: Some("OldestEmulationVersion".into()),
            ..Default::default()
        }),
    }
}

#[rstest]
#[tokio::test]
async fn leader_election_lease(#[future(awt)] server: TestServer) {
    let api: Api<Lease> = Api::namespaced(server.client.clone(), "kube-system");
    let err = api_error(
        api.create(&PostParams::default(), &lease("bad", "a", 0))
            .await
            .expect_err("zero duration"),
    );
    assert_eq!(
        err.message,
        "Lease.coordination.k8s.io \"bad\" is invalid: spec.leaseDurationSeconds: Invalid value: 0: must be greater than 0"
    );

    let created = api
        .create(&PostParams::default(), &lease("controller", "pod-a", 15))
        .await
        .expect("create");
    let spec = created.spec.clone().unwrap_or_default();
    assert_eq!(spec.holder_identity.as_deref(), Some("pod-a"));
    assert!(
        spec.strategy.is_none(),
        "coordinated leader election is off"
    );
    assert!(created.metadata.generation.is_none());

    // A renewal with a stale resourceVersion loses.
    let mut renew = created.clone();
    if let Some(s) = renew.spec.as_mut() {
        s.holder_identity = Some("pod-b".into());
    }
    api.replace("controller", &PostParams::default(), &renew)
        .await
        .expect("renew");
    let err = api_error(
        api.replace("controller", &PostParams::default(), &renew)
            .await
            .expect_err("stale"),
    );
    assert_eq!(err.code, 409);

    let patched = api
        .patch(
            "controller",
            &PatchParams::apply("elector").force(),
            &Patch::Apply(
                json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                "metadata": {"name": "controller"}, "spec": {"leaseTransitions": 3}}),
            ),
        )
        .await
        .expect("apply");
    let spec = patched.spec.unwrap_or_default();
    assert_eq!(spec.lease_transitions, Some(3));
    assert_eq!(spec.holder_identity.as_deref(), Some("pod-b"), "kept");

    let t = table(
        &server,
        "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases",
    )
    .await;
    assert_eq!(columns(&t), ["Name", "Holder", "Age"]);
    assert_eq!(row(&t, "controller")[1], "pod-b");
}
