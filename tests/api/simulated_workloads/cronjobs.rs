//! The simulated CronJob controller: a missed run started at once, and runs on the wall clock.

use std::time::Duration;

use k8s_openapi::api::batch::v1::{CronJob, Job};
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, PropagationPolicy};
use serde_json::{json, Value};

use super::{json_of, simulated, true_conditions, typed, wait_for};
use crate::harness::TestServer;

fn cronjobs(server: &TestServer) -> Api<CronJob> {
    Api::namespaced(server.client.clone(), "default")
}

fn jobs(server: &TestServer) -> Api<Job> {
    Api::namespaced(server.client.clone(), "default")
}

fn cronjob(name: &str, schedule: &str) -> CronJob {
    typed(
        json!({"metadata": {"name": name}, "spec": {"schedule": schedule,
        "jobTemplate": {"metadata": {"labels": {"team": "batch"}}, "spec": {"template": {"spec": {
            "restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}}}}}),
    )
}

async fn job_names(server: &TestServer) -> Vec<String> {
    let list = jobs(server)
        .list(&ListParams::default())
        .await
        .expect("list");
    list.items
        .iter()
        .filter_map(|j| j.metadata.name.clone())
        .collect()
}

/// A CronJob whose last run was minutes ago (as after a controller restart) starts the most
/// recent missed run at once: its Job, named after the minute it was due, runs to completion.
#[tokio::test]
async fn a_missed_run_starts_at_once_and_completes() {
    let server = simulated().await;
    let api = cronjobs(&server);
    api.create(&PostParams::default(), &cronjob("tick", "* * * * *"))
        .await
        .expect("create");
    // Not due before the next minute.
    assert!(job_names(&server).await.is_empty());
    let long_ago = (chrono::Utc::now() - chrono::Duration::minutes(5))
        .format("%Y-%m-%dT%H:%M:%SZ")
        .to_string();
    let missed = Patch::Merge(json!({"status": {"lastScheduleTime": long_ago}}));
    let before = chrono::Utc::now().timestamp() / 60;
    api.patch_status("tick", &PatchParams::default(), &missed)
        .await
        .expect("status");
    let after = chrono::Utc::now().timestamp() / 60;
    let names = job_names(&server).await;
    assert_eq!(names.len(), 1, "{names:?}");
    let minute: i64 = names[0]
        .strip_prefix("tick-")
        .and_then(|m| m.parse().ok())
        .expect("tick-<minutes>");
    assert!(
        (before..=after).contains(&minute),
        "{minute} not in {before}..={after}"
    );

    let job = json_of(&jobs(&server).get(&names[0]).await.expect("job"));
    assert_eq!(
        true_conditions(&job),
        ["SuccessCriteriaMet", "Complete"],
        "{job}"
    );
    assert_eq!(job["metadata"]["labels"]["team"], "batch");
    let scheduled = job["metadata"]["annotations"]
        ["batch.kubernetes.io/cronjob-scheduled-timestamp"]
        .as_str()
        .expect("scheduled timestamp");
    let scheduled = chrono::DateTime::parse_from_rfc3339(scheduled).expect("RFC 3339");
    assert_eq!(scheduled.timestamp(), minute * 60);
    let owner = &job["metadata"]["ownerReferences"][0];
    assert_eq!(
        (owner["kind"].clone(), owner["name"].clone()),
        (json!("CronJob"), json!("tick"))
    );

    let c = json_of(&api.get("tick").await.expect("get"));
    let status = &c["status"];
    assert!(status.get("active").is_none(), "{c}");
    assert_eq!(
        status["lastScheduleTime"],
        chrono::DateTime::from_timestamp(minute * 60, 0)
            .expect("time")
            .format("%Y-%m-%dT%H:%M:%SZ")
            .to_string()
    );
    assert_eq!(
        status["lastSuccessfulTime"],
        job["status"]["completionTime"]
    );
}

/// `@every 1s` runs on the wall clock: the first Job comes a second after the create, is
/// listed as active while it runs, and suspending the CronJob stops new runs.
#[tokio::test]
async fn runs_come_on_the_wall_clock_until_suspended() {
    let server = simulated().await;
    let api = cronjobs(&server);
    let mut c: Value = json_of(&cronjob("every", "@every 1s"));
    c["spec"]["concurrencyPolicy"] = json!("Forbid");
    c["spec"]["jobTemplate"]["metadata"]["annotations"] =
        json!({"simulation.kubefake.io/run": "hang"});
    api.create(&PostParams::default(), &typed(c))
        .await
        .expect("create");
    assert!(job_names(&server).await.is_empty());
    let running = wait_for(&api, "every", Duration::from_secs(5), |c| {
        c["status"]["active"]
            .as_array()
            .is_some_and(|a| a.len() == 1)
    })
    .await;
    let active = &running["status"]["active"][0];
    assert_eq!(
        (active["kind"].clone(), active["apiVersion"].clone()),
        (json!("Job"), json!("batch/v1"))
    );
    // Forbid: the running Job blocks the next runs.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert_eq!(job_names(&server).await.len(), 1);

    let suspend = Patch::Merge(json!({"spec": {"suspend": true}}));
    api.patch("every", &PatchParams::default(), &suspend)
        .await
        .expect("suspend");
    let name = active["name"].as_str().expect("name").to_string();
    let background = DeleteParams {
        propagation_policy: Some(PropagationPolicy::Background),
        ..DeleteParams::default()
    };
    jobs(&server)
        .delete(&name, &background)
        .await
        .expect("delete the job");
    // Without suspension a new Job would come within a second.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    assert!(job_names(&server).await.is_empty());
    let c = json_of(&api.get("every").await.expect("get"));
    assert!(c["status"].get("active").is_none(), "{c}");
}
