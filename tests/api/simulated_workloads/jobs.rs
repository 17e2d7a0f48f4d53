//! The simulated Job controller: pods run to completion, failures up to the backoff limit,
//! pods that take a while, Indexed Jobs, suspension, and a deleted Job's pods released.

use std::time::{Duration, Instant};

use k8s_openapi::api::batch::v1::Job;
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams, PropagationPolicy};
use rstest::rstest;
use serde_json::{json, Value};

use super::{json_of, pods, simulated, true_conditions, typed, wait_for};
use crate::harness::TestServer;

fn jobs(server: &TestServer) -> Api<Job> {
    Api::namespaced(server.client.clone(), "default")
}

fn job(name: &str, spec: Value, annotations: Value) -> Job {
    let mut j = json!({"metadata": {"name": name, "annotations": annotations},
        "spec": {"template": {"spec": {"restartPolicy": "Never",
            "containers": [{"name": "pi", "image": "perl:5.34"}]}}}});
    for (k, v) in spec.as_object().into_iter().flatten() {
        j["spec"][k] = v.clone();
    }
    typed(j)
}

async fn create(server: &TestServer, j: Job) -> Value {
    json_of(
        &jobs(server)
            .create(&PostParams::default(), &j)
            .await
            .expect("create job"),
    )
}

fn selector(name: &str) -> String {
    format!("batch.kubernetes.io/job-name={name}")
}

#[tokio::test]
async fn a_job_runs_its_pods_to_completion() {
    let server = simulated().await;
    let spec = json!({"completions": 3, "parallelism": 2});
    create(&server, job("pi", spec, json!({}))).await;
    // Every pod ran before the create returned.
    let j = json_of(&jobs(&server).get("pi").await.expect("get"));
    let status = &j["status"];
    assert_eq!(status["succeeded"], 3, "{j}");
    assert_eq!(true_conditions(&j), ["SuccessCriteriaMet", "Complete"]);
    let complete = &status["conditions"][1];
    assert_eq!(complete["reason"], "CompletionsReached");
    assert_eq!(
        complete["message"],
        "Reached expected number of succeeded pods"
    );
    assert!(status["completionTime"].is_string() && status["startTime"].is_string());
    assert_eq!(status["uncountedTerminatedPods"], json!({}));
    assert_eq!(
        (status["ready"].clone(), status["terminating"].clone()),
        (json!(0), json!(0))
    );
    assert!(status.get("active").is_none());

    let uid = j["metadata"]["uid"].as_str().expect("uid");
    let pods = pods(&server, &selector("pi")).await;
    assert_eq!(pods.len(), 3);
    for p in &pods {
        let name = p["metadata"]["name"].as_str().expect("name");
        assert!(name.starts_with("pi-") && name.len() == 8, "{name}");
        assert_eq!(p["status"]["phase"], "Succeeded");
        assert!(p["metadata"].get("finalizers").is_none(), "{p}");
        let labels = &p["metadata"]["labels"];
        assert_eq!(labels["batch.kubernetes.io/controller-uid"], uid);
        assert_eq!(labels["controller-uid"], uid);
        assert_eq!(labels["job-name"], "pi");
        let owner = &p["metadata"]["ownerReferences"][0];
        assert_eq!(
            (owner["kind"].clone(), owner["controller"].clone()),
            (json!("Job"), json!(true))
        );
        assert!(p["spec"]["nodeName"].is_string());
    }
}

#[tokio::test]
async fn a_job_fails_past_its_backoff_limit() {
    let server = simulated().await;
    let steering = json!({"simulation.kubefake.io/run": "fail"});
    create(&server, job("doomed", json!({"backoffLimit": 2}), steering)).await;
    let j = json_of(&jobs(&server).get("doomed").await.expect("get"));
    assert_eq!(true_conditions(&j), ["FailureTarget", "Failed"], "{j}");
    let failed = &j["status"]["conditions"][1];
    assert_eq!(failed["reason"], "BackoffLimitExceeded");
    assert_eq!(
        failed["message"],
        "Job has reached the specified backoff limit"
    );
    assert_eq!(j["status"]["failed"], 3);
    assert!(j["status"].get("completionTime").is_none());
    let pods = pods(&server, &selector("doomed")).await;
    assert_eq!(pods.len(), 3);
    assert!(pods.iter().all(|p| p["status"]["phase"] == "Failed"));
    assert!(pods
        .iter()
        .all(|p| p["metadata"].get("finalizers").is_none()));
}

#[tokio::test]
async fn a_job_whose_pods_take_a_while() {
    let server = simulated().await;
    let steering = json!({"simulation.kubefake.io/duration": "300ms"});
    let start = Instant::now();
    let created = create(&server, job("slow", json!({"completions": 2}), steering)).await;
    assert!(true_conditions(&created).is_empty());
    let j = json_of(&jobs(&server).get("slow").await.expect("get"));
    assert_eq!(j["status"]["active"], 1, "{j}");
    assert_eq!(j["status"]["ready"], 1, "{j}");
    let running = pods(&server, &selector("slow")).await;
    assert_eq!(running.len(), 1);
    assert_eq!(
        running[0]["metadata"]["finalizers"],
        json!(["batch.kubernetes.io/job-tracking"])
    );
    assert_eq!(
        running[0]["metadata"]["annotations"]["simulation.kubefake.io/duration"],
        "300ms"
    );
    let limit = Duration::from_secs(10);
    let done = wait_for(&jobs(&server), "slow", limit, |j| {
        true_conditions(j).contains(&"Complete".to_string())
    })
    .await;
    assert!(
        start.elapsed() >= Duration::from_millis(600),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(done["status"]["succeeded"], 2);
}

#[tokio::test]
async fn an_indexed_job_gives_each_pod_its_index() {
    let server = simulated().await;
    let spec = json!({"completions": 3, "parallelism": 3, "completionMode": "Indexed"});
    create(&server, job("idx", spec, json!({}))).await;
    let j = json_of(&jobs(&server).get("idx").await.expect("get"));
    assert_eq!(j["status"]["completedIndexes"], "0-2", "{j}");
    assert_eq!(j["status"]["succeeded"], 3);
    let pods = pods(&server, &selector("idx")).await;
    let mut seen: Vec<(String, String)> = pods
        .iter()
        .map(|p| {
            let index = p["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"]
                .as_str()
                .expect("index label")
                .to_string();
            assert_eq!(
                p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"],
                index
            );
            let name = p["metadata"]["name"].as_str().expect("name");
            assert!(name.starts_with(&format!("idx-{index}-")), "{name}");
            (
                index,
                p["spec"]["hostname"]
                    .as_str()
                    .expect("hostname")
                    .to_string(),
            )
        })
        .collect();
    seen.sort();
    assert_eq!(
        seen,
        [("0", "idx-0"), ("1", "idx-1"), ("2", "idx-2")]
            .map(|(a, b)| (a.to_string(), b.to_string()))
    );
}

#[tokio::test]
async fn a_suspended_job_waits_until_resumed() {
    let server = simulated().await;
    create(&server, job("later", json!({"suspend": true}), json!({}))).await;
    let j = json_of(&jobs(&server).get("later").await.expect("get"));
    assert_eq!(true_conditions(&j), ["Suspended"], "{j}");
    assert_eq!(j["status"]["conditions"][0]["reason"], "JobSuspended");
    assert!(j["status"].get("startTime").is_none());
    assert!(pods(&server, &selector("later")).await.is_empty());

    let resume = Patch::Merge(json!({"spec": {"suspend": false}}));
    jobs(&server)
        .patch("later", &PatchParams::default(), &resume)
        .await
        .expect("resume");
    let j = json_of(&jobs(&server).get("later").await.expect("get"));
    assert_eq!(
        true_conditions(&j),
        ["SuccessCriteriaMet", "Complete"],
        "{j}"
    );
    let suspended = &j["status"]["conditions"][0];
    assert_eq!(
        (suspended["status"].clone(), suspended["reason"].clone()),
        (json!("False"), json!("JobResumed"))
    );
}

#[rstest]
#[case::background(PropagationPolicy::Background)]
#[case::foreground(PropagationPolicy::Foreground)]
#[tokio::test]
async fn deleting_a_running_job_releases_and_removes_its_pods(#[case] policy: PropagationPolicy) {
    let server = simulated().await;
    let steering = json!({"simulation.kubefake.io/run": "hang"});
    create(
        &server,
        job(
            "forever",
            json!({"parallelism": 2, "completions": 4}),
            steering,
        ),
    )
    .await;
    assert_eq!(pods(&server, &selector("forever")).await.len(), 2);
    let params = DeleteParams {
        propagation_policy: Some(policy),
        ..DeleteParams::default()
    };
    jobs(&server)
        .delete("forever", &params)
        .await
        .expect("delete");
    assert!(pods(&server, &selector("forever")).await.is_empty());
    assert!(jobs(&server)
        .get_opt("forever")
        .await
        .expect("get")
        .is_none());
}
