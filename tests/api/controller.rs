//! A controller as users write them with kube-rs, against built-in kinds: a `Controller` for
//! CronTabs that owns a ConfigMap and a Deployment (server-side apply, controller
//! ownerReferences), publishes Events with `Recorder`, takes a Lease, and cleans up in a
//! finalizer; deleting the CronTab runs the finalizer and garbage-collects what it owned.

use std::sync::Arc;
use std::time::Duration;

use futures_util::StreamExt;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::api::events::v1::Event as EventV1;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams};
use kube::runtime::controller::{Action, Controller};
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::runtime::finalizer::{finalizer, Event as Finalizer};
use kube::runtime::watcher;
use kube::{Client, Resource, ResourceExt};
use rstest::rstest;
use serde_json::json;

use crate::harness::{server, CronTab, TestServer};

const FINALIZER: &str = "crontabs.stable.example.com/cleanup";
const MANAGER: &str = "crontab-controller";

#[derive(Debug, thiserror::Error)]
enum ReconcileError {
    #[error("kube: {0}")]
    Kube(#[from] kube::Error),
}

struct Ctx {
    client: Client,
    recorder: Recorder,
}

/// The objects a CronTab owns: a ConfigMap with its schedule and a Deployment running its
/// image, both applied server-side with the CronTab as controller owner.
async fn apply_owned(ct: &CronTab, ctx: &Ctx) -> Result<(), kube::Error> {
    let ns = ct.namespace().unwrap_or_default();
    let name = ct.name_any();
    let owner = ct
        .controller_owner_ref(&())
        .map(|o| vec![o])
        .unwrap_or_default();
    let params = PatchParams::apply(MANAGER).force();
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "ownerReferences": owner},
        "data": {"schedule": ct.spec.cron_spec}});
    Api::<ConfigMap>::namespaced(ctx.client.clone(), &ns)
        .patch(&name, &params, &Patch::Apply(cm))
        .await?;
    let deploy = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "ownerReferences": owner},
        "spec": {"selector": {"matchLabels": {"crontab": name}},
            "template": {"metadata": {"labels": {"crontab": name}},
                "spec": {"containers": [{"name": "cron", "image": ct.spec.image}]}}}});
    Api::<Deployment>::namespaced(ctx.client.clone(), &ns)
        .patch(&name, &params, &Patch::Apply(deploy))
        .await?;
    let lease = json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"name": MANAGER},
        "spec": {"holderIdentity": "test-instance", "leaseDurationSeconds": 15}});
    Api::<Lease>::namespaced(ctx.client.clone(), &ns)
        .patch(MANAGER, &params, &Patch::Apply(lease))
        .await?;
    Ok(())
}

async fn reconcile(ct: Arc<CronTab>, ctx: Arc<Ctx>) -> Result<Action, ReconcileError> {
    let api: Api<CronTab> =
        Api::namespaced(ctx.client.clone(), &ct.namespace().unwrap_or_default());
    let reference = ct.object_ref(&());
    finalizer(&api, FINALIZER, ct, |event| async {
        match event {
            Finalizer::Apply(ct) => {
                apply_owned(&ct, &ctx).await?;
                let ev = Event {
                    type_: EventType::Normal,
                    reason: "Reconciled".into(),
                    note: Some("owned objects applied".into()),
                    action: "Apply".into(),
                    secondary: None,
                };
                ctx.recorder.publish(&ev, &reference).await?;
                Ok(Action::await_change())
            }
            Finalizer::Cleanup(_) => {
                let ev = Event {
                    type_: EventType::Normal,
                    reason: "Deleting".into(),
                    note: Some("cleaning up".into()),
                    action: "Cleanup".into(),
                    secondary: None,
                };
                ctx.recorder.publish(&ev, &reference).await?;
                Ok(Action::await_change())
            }
        }
    })
    .await
    .map_err(|e| match e {
        kube::runtime::finalizer::Error::ApplyFailed(e)
        | kube::runtime::finalizer::Error::CleanupFailed(e) => e,
        other => ReconcileError::Kube(kube::Error::Service(other.to_string().into())),
    })
}

/// Polls until `check` holds (the controller runs concurrently), for at most 10 seconds.
async fn eventually<F, Fut>(what: &str, mut check: F)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = bool>,
{
    for _ in 0..200 {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("timed out waiting for {what}");
}

#[rstest]
#[tokio::test]
async fn a_controller_owns_built_in_objects_and_cleans_up(#[future(awt)] server: TestServer) {
    server.install_crontab_crd().await;
    let client = server.client.clone();
    let crontabs: Api<CronTab> = Api::namespaced(client.clone(), "default");
    let reporter = Reporter {
        controller: MANAGER.into(),
        instance: Some("test-instance".into()),
    };
    let ctx = Arc::new(Ctx {
        client: client.clone(),
        recorder: Recorder::new(client.clone(), reporter),
    });
    let controller = Controller::new(crontabs.clone(), watcher::Config::default())
        .owns(
            Api::<ConfigMap>::namespaced(client.clone(), "default"),
            watcher::Config::default(),
        )
        .owns(
            Api::<Deployment>::namespaced(client.clone(), "default"),
            watcher::Config::default(),
        )
        .run(
            reconcile,
            |_, _, _| Action::requeue(Duration::from_millis(200)),
            ctx,
        )
        .for_each(|_| async {});
    let running = tokio::spawn(controller);

    server.create_crontab("default", "nightly").await;
    let configmaps: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), "default");
    let events: Api<EventV1> = Api::namespaced(client.clone(), "default");
    eventually("the owned ConfigMap and Deployment", || async {
        configmaps.get_opt("nightly").await.ok().flatten().is_some()
            && deployments
                .get_opt("nightly")
                .await
                .ok()
                .flatten()
                .is_some()
    })
    .await;
    let deploy = deployments.get("nightly").await.expect("deployment");
    let owner = &deploy.metadata.owner_references.unwrap_or_default()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.controller),
        ("CronTab", Some(true))
    );
    let spec = deploy.spec;
    assert_eq!(spec.replicas, Some(1), "defaulted as the apiserver does");
    let lease = Api::<Lease>::namespaced(client.clone(), "default")
        .get(MANAGER)
        .await
        .expect("lease");
    assert_eq!(
        lease.spec.and_then(|s| s.holder_identity).as_deref(),
        Some("test-instance")
    );
    eventually("the Reconciled event", || async {
        events.list(&ListParams::default()).await.is_ok_and(|l| {
            l.items
                .iter()
                .any(|e| e.reason.as_deref() == Some("Reconciled"))
        })
    })
    .await;

    crontabs
        .delete("nightly", &DeleteParams::default())
        .await
        .expect("delete");
    eventually(
        "the CronTab, its ConfigMap and its Deployment gone",
        || async {
            crontabs.get_opt("nightly").await.ok().flatten().is_none()
                && configmaps.get_opt("nightly").await.ok().flatten().is_none()
                && deployments
                    .get_opt("nightly")
                    .await
                    .ok()
                    .flatten()
                    .is_none()
        },
    )
    .await;
    let reasons: Vec<String> = events
        .list(&ListParams::default())
        .await
        .expect("events")
        .items
        .into_iter()
        .filter_map(|e| e.reason)
        .collect();
    assert!(reasons.iter().any(|r| r == "Deleting"), "{reasons:?}");
    running.abort();
}
