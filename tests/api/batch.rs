//! batch/v1 Jobs and CronJobs through kube-rs's typed APIs: defaults (the generated selector
//! and labels), validation, generation, the status subresource, field selectors, Tables,
//! patches, and the Job DELETE's orphaning default and its `Warning`.

use futures_util::StreamExt;
use k8s_openapi::api::batch::v1::{CronJob, Job};
use kube::api::{
    Api, DeleteParams, ListParams, Patch, PatchParams, PostParams, PropagationPolicy, WatchEvent,
    WatchParams,
};
use rstest::rstest;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use crate::harness::{api_error, server, TestServer};
use crate::workloads::{column_names, table};

fn typed<T: DeserializeOwned>(v: Value) -> T {
    serde_json::from_value(v).expect("typed")
}

fn pod_template(restart: &str) -> Value {
    json!({"spec": {"restartPolicy": restart,
        "containers": [{"name": "pi", "image": "perl:5.34"}]}})
}

fn job(name: &str) -> Job {
    typed(json!({"metadata": {"name": name}, "spec": {"template": pod_template("Never")}}))
}

fn jobs(server: &TestServer) -> Api<Job> {
    Api::namespaced(server.client.clone(), "default")
}

#[rstest]
#[tokio::test]
async fn job_defaults_and_generated_selector(#[future(awt)] server: TestServer) {
    let api = jobs(&server);
    let created = api
        .create(&PostParams::default(), &job("pi"))
        .await
        .expect("create");
    let v = serde_json::to_value(&created).expect("json");
    let uid = v["metadata"]["uid"].as_str().expect("uid").to_string();
    let spec = &v["spec"];
    assert_eq!(spec["completions"], 1);
    assert_eq!(spec["parallelism"], 1);
    assert_eq!(spec["backoffLimit"], 6);
    assert_eq!(spec["completionMode"], "NonIndexed");
    assert_eq!(spec["suspend"], false);
    assert_eq!(spec["manualSelector"], false);
    assert_eq!(spec["podReplacementPolicy"], "TerminatingOrFailed");
    assert_eq!(
        spec["selector"],
        json!({"matchLabels": {"batch.kubernetes.io/controller-uid": uid}})
    );
    let labels = json!({"batch.kubernetes.io/controller-uid": uid,
        "batch.kubernetes.io/job-name": "pi", "controller-uid": uid, "job-name": "pi"});
    assert_eq!(spec["template"]["metadata"]["labels"], labels);
    assert_eq!(v["metadata"]["labels"], labels);
    assert_eq!(
        spec["template"]["spec"]["containers"][0]["terminationMessagePath"],
        "/dev/termination-log"
    );
    assert_eq!(v["status"], json!({}));
    assert_eq!(v["metadata"]["generation"], 1);

    // A manual selector is kept as sent, and no labels are generated.
    let manual: Job = typed(json!({"metadata": {"name": "manual"}, "spec": {
        "manualSelector": true, "selector": {"matchLabels": {"app": "m"}},
        "template": {"metadata": {"labels": {"app": "m"}}, "spec": pod_template("OnFailure")["spec"]}}}));
    let created = api
        .create(&PostParams::default(), &manual)
        .await
        .expect("manual");
    let v = serde_json::to_value(&created).expect("json");
    assert_eq!(v["spec"]["selector"], json!({"matchLabels": {"app": "m"}}));
    assert_eq!(
        v["spec"]["template"]["metadata"]["labels"],
        json!({"app": "m"})
    );
    assert_eq!(v["metadata"]["labels"], json!({"app": "m"}));
}

#[rstest]
#[tokio::test]
async fn job_validation_as_the_apiserver_words_it(#[future(awt)] server: TestServer) {
    let api = jobs(&server);
    let always: Job =
        typed(json!({"metadata": {"name": "a"}, "spec": {"template": pod_template("Always")}}));
    let err = api_error(
        api.create(&PostParams::default(), &always)
            .await
            .expect_err("restartPolicy"),
    );
    assert_eq!(err.code, 422);
    assert_eq!(
        err.message,
        "Job.batch \"a\" is invalid: spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\""
    );

    let negative: Job = typed(json!({"metadata": {"name": "n"}, "spec": {
        "parallelism": -1, "completions": -2, "template": pod_template("Never")}}));
    let err = api_error(
        api.create(&PostParams::default(), &negative)
            .await
            .expect_err("negative"),
    );
    assert_eq!(
        err.message,
        "Job.batch \"n\" is invalid: [spec.parallelism: Invalid value: -1: must be greater than or equal to 0, spec.completions: Invalid value: -2: must be greater than or equal to 0]"
    );

    let mismatch: Job = typed(json!({"metadata": {"name": "m"}, "spec": {
        "manualSelector": true, "selector": {"matchLabels": {"app": "x"}},
        "template": {"metadata": {"labels": {"app": "y"}}, "spec": pod_template("Never")["spec"]}}}));
    let err = api_error(
        api.create(&PostParams::default(), &mismatch)
            .await
            .expect_err("mismatch"),
    );
    assert_eq!(
        err.message,
        "Job.batch \"m\" is invalid: spec.template.metadata.labels: Invalid value: {\"app\":\"y\"}: `selector` does not match template `labels`"
    );

    let wrong_label: Job = typed(json!({"metadata": {"name": "w"}, "spec": {
        "template": {"metadata": {"labels": {"job-name": "other"}}, "spec": pod_template("Never")["spec"]}}}));
    let err = api_error(
        api.create(&PostParams::default(), &wrong_label)
            .await
            .expect_err("label"),
    );
    assert!(
        err.message
            .contains("spec.template.metadata.labels[job-name]: Invalid value: "),
        "{}",
        err.message
    );
    assert!(err.message.contains(": must be 'w'"), "{}", err.message);

    // The selector and a NonIndexed Job's completions never change; the template only while
    // suspended.
    let created = api
        .create(&PostParams::default(), &job("fixed"))
        .await
        .expect("create");
    let mut changed = serde_json::to_value(&created).expect("json");
    changed["spec"]["completions"] = json!(3);
    changed["spec"]["selector"]["matchLabels"]["extra"] = json!("x");
    changed["spec"]["template"]["metadata"]["labels"]["extra"] = json!("x");
    let err = api_error(
        api.replace("fixed", &PostParams::default(), &typed(changed))
            .await
            .expect_err("immutable"),
    );
    let causes: Vec<(String, String)> = err
        .details
        .map(|d| d.causes)
        .unwrap_or_default()
        .into_iter()
        .map(|c| (c.field, c.message))
        .collect();
    let fields: Vec<&str> = causes.iter().map(|(f, _)| f.as_str()).collect();
    assert_eq!(
        fields,
        [
            "spec.selector",
            "spec.completions",
            "spec.selector",
            "spec.template"
        ]
    );
    assert!(causes[0].1.ends_with(": `selector` not auto-generated"));
    assert_eq!(causes[1].1, "Invalid value: 3: field is immutable");
    assert!(causes[2]
        .1
        .ends_with("\"extra\":\"x\"}}: field is immutable"));
    assert!(causes[3].1.ends_with(": field is immutable"));

    // A name that is no DNS label is accepted with a warning.
    let resp = server
        .http
        .post(server.url("/apis/batch/v1/namespaces/default/jobs"))
        .json(&json!({"metadata": {"name": "a.b"}, "spec": {"template": pod_template("Never")}}))
        .send()
        .await
        .expect("sent");
    assert_eq!(resp.status().as_u16(), 201);
    assert_eq!(
        resp.headers()
            .get("warning")
            .and_then(|w| w.to_str().ok()),
        Some("299 - \"metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: [must not contain dots]\"")
    );
}

#[rstest]
#[tokio::test]
async fn job_status_generation_and_field_selector(#[future(awt)] server: TestServer) {
    let api = jobs(&server);
    let created = api
        .create(&PostParams::default(), &job("s"))
        .await
        .expect("create");
    api.create(&PostParams::default(), &job("other"))
        .await
        .expect("other");
    let mut watch = api
        .watch(
            &WatchParams::default().fields("metadata.name=s"),
            created.metadata.resource_version.as_deref().unwrap_or("0"),
        )
        .await
        .expect("watch")
        .boxed();

    let status = json!({"status": {"active": 1, "ready": 1, "startTime": "2025-01-01T00:00:00Z"}});
    let updated = api
        .patch_status("s", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .expect("status");
    let v = serde_json::to_value(&updated).expect("json");
    assert_eq!(v["status"]["active"], 1);
    assert_eq!(v["metadata"]["generation"], 1);
    match watch.next().await {
        Some(Ok(WatchEvent::Modified(j))) => assert_eq!(j.status.and_then(|s| s.active), Some(1)),
        other => panic!("expected MODIFIED, got {other:?}"),
    }

    // Complete needs SuccessCriteriaMet, a completion time and no active pods.
    let complete = json!({"status": {"active": 0, "ready": 0, "succeeded": 1,
        "conditions": [{"type": "Complete", "status": "True"}]}});
    let err = api_error(
        api.patch_status("s", &PatchParams::default(), &Patch::Merge(&complete))
            .await
            .expect_err("incomplete"),
    );
    assert_eq!(
        err.message,
        "Job.batch \"s\" is invalid: [status.completionTime: Required value: completionTime is required for Complete jobs, status.conditions: Invalid value: cannot set Complete=True condition without the SuccessCriteriaMet=true condition]"
    );
    let complete = json!({"status": {"active": 0, "ready": 0, "succeeded": 1,
        "completionTime": "2025-01-01T00:01:00Z",
        "conditions": [{"type": "SuccessCriteriaMet", "status": "True"},
                       {"type": "Complete", "status": "True"}]}});
    api.patch_status("s", &PatchParams::default(), &Patch::Merge(&complete))
        .await
        .expect("complete");

    let selected = api
        .list(&ListParams::default().fields("status.successful=1"))
        .await
        .expect("field selector");
    let names: Vec<String> = selected
        .items
        .iter()
        .filter_map(|j| j.metadata.name.clone())
        .collect();
    assert_eq!(names, ["s"]);

    let t = table(&server, "/apis/batch/v1/namespaces/default/jobs/s").await;
    assert_eq!(
        column_names(&t),
        [
            "Name",
            "Status",
            "Completions",
            "Duration",
            "Age",
            "Containers",
            "Images",
            "Selector"
        ]
    );
    let cells = &t["rows"][0]["cells"];
    assert_eq!(cells[1], "Complete");
    assert_eq!(cells[2], "1/1");
    assert_eq!(cells[3], "60s");
    assert_eq!(cells[5], "pi");
    assert!(cells[7]
        .as_str()
        .unwrap_or("")
        .starts_with("batch.kubernetes.io/controller-uid="));

    // A spec change bumps the generation (suspend is mutable).
    let patched = api
        .patch(
            "other",
            &PatchParams::default(),
            &Patch::Strategic(json!({"spec": {"suspend": true}})),
        )
        .await
        .expect("suspend");
    assert_eq!(patched.metadata.generation, Some(2));
}

#[rstest]
#[tokio::test]
async fn job_patches_and_apply(#[future(awt)] server: TestServer) {
    let api = jobs(&server);
    let mut j = job("p");
    if let Some(spec) = j.spec.as_mut() {
        spec.suspend = Some(true);
        if let Some(pod) = spec.template.spec.as_mut() {
            pod.containers
                .push(typed(json!({"name": "side", "image": "busybox"})));
        }
    }
    api.create(&PostParams::default(), &j)
        .await
        .expect("create");
    // Strategic merge by container name: the template may change only while suspended, and
    // only its resources and scheduling directives; a changed image is refused.
    let err = api_error(
        api.patch(
            "p",
            &PatchParams::default(),
            &Patch::Strategic(json!({"spec": {"template": {"spec": {"containers": [
                {"name": "side", "image": "busybox:2"}]}}}})),
        )
        .await
        .expect_err("template"),
    );
    assert!(err
        .message
        .starts_with("Job.batch \"p\" is invalid: spec.template: Invalid value: "));
    assert!(err.message.ends_with(": field is immutable"));

    // Server-side apply merges the containers by name.
    let applied = api
        .patch(
            "q",
            &PatchParams::apply("tester"),
            &Patch::Apply(json!({"apiVersion": "batch/v1", "kind": "Job",
                "metadata": {"name": "q", "labels": {"team": "a"}},
                "spec": {"template": pod_template("Never")}})),
        )
        .await
        .expect("apply");
    assert_eq!(
        applied
            .metadata
            .labels
            .as_ref()
            .and_then(|l| l.get("team"))
            .map(String::as_str),
        Some("a")
    );
    let applied = api
        .patch(
            "q",
            &PatchParams::apply("other"),
            &Patch::Apply(json!({"apiVersion": "batch/v1", "kind": "Job",
                "metadata": {"name": "q", "labels": {"owner": "b"}}})),
        )
        .await
        .expect("second apply");
    let labels = applied.metadata.labels.unwrap_or_default();
    assert_eq!(labels.get("team").map(String::as_str), Some("a"));
    assert_eq!(labels.get("owner").map(String::as_str), Some("b"));
}

#[rstest]
#[tokio::test]
async fn job_delete_orphans_by_default_with_a_warning(#[future(awt)] server: TestServer) {
    let api = jobs(&server);
    api.create(&PostParams::default(), &job("d"))
        .await
        .expect("create");
    let resp = server
        .http
        .delete(server.url("/apis/batch/v1/namespaces/default/jobs/d"))
        .send()
        .await
        .expect("sent");
    assert_eq!(resp.status().as_u16(), 200);
    assert_eq!(
        resp.headers().get("warning").and_then(|w| w.to_str().ok()),
        Some("299 - \"child pods are preserved by default when jobs are deleted; set propagationPolicy=Background to remove them or set propagationPolicy=Orphan to suppress this warning\"")
    );
    let body: Value = resp.json().await.expect("json");
    assert_eq!(body["kind"], "Job");
    assert_eq!(body["metadata"]["finalizers"], json!(["orphan"]));
    assert_eq!(api_error(api.get("d").await.expect_err("gone")).code, 404);

    // With a propagation policy: no warning, and the Status of a delete.
    api.create(&PostParams::default(), &job("e"))
        .await
        .expect("create");
    let resp = server
        .http
        .delete(server.url("/apis/batch/v1/namespaces/default/jobs/e?propagationPolicy=Background"))
        .send()
        .await
        .expect("sent");
    assert_eq!(resp.status().as_u16(), 200);
    assert!(resp.headers().get("warning").is_none());
    let body: Value = resp.json().await.expect("json");
    assert_eq!(body["kind"], "Status");
    let dp = DeleteParams {
        propagation_policy: Some(PropagationPolicy::Foreground),
        ..DeleteParams::default()
    };
    api.create(&PostParams::default(), &job("f"))
        .await
        .expect("create");
    api.delete("f", &dp).await.expect("foreground");
}

fn cron_job(name: &str, schedule: &str) -> CronJob {
    typed(
        json!({"metadata": {"name": name}, "spec": {"schedule": schedule,
        "jobTemplate": {"spec": {"template": pod_template("OnFailure")}}}}),
    )
}

fn cron_jobs(server: &TestServer) -> Api<CronJob> {
    Api::namespaced(server.client.clone(), "default")
}

#[rstest]
#[tokio::test]
async fn cron_job_defaults_status_table_and_patches(#[future(awt)] server: TestServer) {
    let api = cron_jobs(&server);
    let created = api
        .create(&PostParams::default(), &cron_job("hourly", "0 * * * *"))
        .await
        .expect("create");
    let v = serde_json::to_value(&created).expect("json");
    assert_eq!(v["spec"]["concurrencyPolicy"], "Allow");
    assert_eq!(v["spec"]["suspend"], false);
    assert_eq!(v["spec"]["successfulJobsHistoryLimit"], 3);
    assert_eq!(v["spec"]["failedJobsHistoryLimit"], 1);
    assert_eq!(
        v["spec"]["jobTemplate"]["spec"]["template"]["spec"]["dnsPolicy"],
        "ClusterFirst"
    );
    assert!(v["spec"]["jobTemplate"]["spec"]["selector"].is_null());
    assert_eq!(v["status"], json!({}));

    let status = json!({"status": {"lastScheduleTime": "2025-01-01T00:00:00Z",
        "active": [{"kind": "Job", "name": "hourly-1", "namespace": "default"}]}});
    let updated = api
        .patch_status("hourly", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .expect("status");
    assert_eq!(updated.metadata.generation, Some(1));
    assert_eq!(
        updated.status.and_then(|s| s.active).map(|a| a.len()),
        Some(1)
    );

    let patched = api
        .patch(
            "hourly",
            &PatchParams::default(),
            &Patch::Strategic(
                json!({"spec": {"suspend": true, "timeZone": "Europe/Berlin",
                "jobTemplate": {"spec": {"template": {"spec": {"containers": [
                    {"name": "pi", "image": "perl:5.40"}]}}}}}}),
            ),
        )
        .await
        .expect("strategic merge");
    assert_eq!(patched.metadata.generation, Some(2));
    let v = serde_json::to_value(&patched).expect("json");
    assert_eq!(
        v["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"],
        json!([{"name": "pi", "image": "perl:5.40", "imagePullPolicy": "IfNotPresent",
            "resources": {}, "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File"}])
    );

    let t = table(&server, "/apis/batch/v1/namespaces/default/cronjobs").await;
    assert_eq!(
        column_names(&t),
        [
            "Name",
            "Schedule",
            "Timezone",
            "Suspend",
            "Active",
            "Last Schedule",
            "Age",
            "Containers",
            "Images",
            "Selector"
        ]
    );
    let cells = &t["rows"][0]["cells"];
    assert_eq!(cells[1], "0 * * * *");
    assert_eq!(cells[2], "Europe/Berlin");
    assert_eq!(cells[3], "True");
    assert_eq!(cells[4], 1);
    assert_eq!(cells[9], "<none>");

    let applied = api
        .patch(
            "applied",
            &PatchParams::apply("tester"),
            &Patch::Apply(json!({"apiVersion": "batch/v1", "kind": "CronJob",
                "metadata": {"name": "applied"},
                "spec": {"schedule": "@daily", "jobTemplate": {"spec": {"template": pod_template("Never")}}}})),
        )
        .await
        .expect("apply");
    assert_eq!(applied.spec.schedule, "@daily");
    let names: Vec<String> = api
        .list(&ListParams::default().fields("metadata.name=applied"))
        .await
        .expect("list")
        .items
        .into_iter()
        .filter_map(|c| c.metadata.name)
        .collect();
    assert_eq!(names, ["applied"]);
}

#[rstest]
#[tokio::test]
async fn cron_job_validation_as_the_apiserver_words_it(#[future(awt)] server: TestServer) {
    let api = cron_jobs(&server);
    let message = |e: kube::Error| api_error(e).message;
    let err = message(
        api.create(&PostParams::default(), &cron_job("bad", "61 * * * *"))
            .await
            .expect_err("minute"),
    );
    assert_eq!(
        err,
        "CronJob.batch \"bad\" is invalid: spec.schedule: Invalid value: \"61 * * * *\": end of range (61) above maximum (59): 61"
    );
    let err = message(
        api.create(&PostParams::default(), &cron_job("bad", "* * *"))
            .await
            .expect_err("fields"),
    );
    assert_eq!(
        err,
        "CronJob.batch \"bad\" is invalid: spec.schedule: Invalid value: \"* * *\": expected exactly 5 fields, found 3: [* * *]"
    );
    let err = message(
        api.create(&PostParams::default(), &cron_job("bad", "TZ=UTC 0 * * * *"))
            .await
            .expect_err("TZ"),
    );
    assert_eq!(
        err,
        "CronJob.batch \"bad\" is invalid: spec.schedule: Invalid value: \"TZ=UTC 0 * * * *\": cannot use TZ or CRON_TZ in schedule, use timeZone field instead"
    );
    let mut zoned = cron_job("bad", "0 * * * *");
    zoned.spec.time_zone = Some("Mars/Olympus".into());
    let err = message(
        api.create(&PostParams::default(), &zoned)
            .await
            .expect_err("zone"),
    );
    assert_eq!(
        err,
        "CronJob.batch \"bad\" is invalid: spec.timeZone: Invalid value: \"Mars/Olympus\": unknown time zone Mars/Olympus"
    );
    let long = "c".repeat(53);
    let err = message(
        api.create(&PostParams::default(), &cron_job(&long, "@hourly"))
            .await
            .expect_err("name"),
    );
    assert_eq!(
        err,
        format!("CronJob.batch \"{long}\" is invalid: metadata.name: Invalid value: \"{long}\": must be no more than 52 characters")
    );
    let always: CronJob = typed(
        json!({"metadata": {"name": "bad"}, "spec": {"schedule": "@hourly",
        "concurrencyPolicy": "Sometimes",
        "jobTemplate": {"spec": {"selector": {"matchLabels": {"a": "b"}}, "template": pod_template("Always")}}}}),
    );
    let err = message(
        api.create(&PostParams::default(), &always)
            .await
            .expect_err("template"),
    );
    assert_eq!(
        err,
        "CronJob.batch \"bad\" is invalid: [spec.concurrencyPolicy: Unsupported value: \"Sometimes\": supported values: \"Allow\", \"Forbid\", \"Replace\", spec.jobTemplate.spec.template.spec.restartPolicy: Required value: valid values: \"OnFailure\", \"Never\", spec.jobTemplate.spec.selector: Invalid value: {\"matchLabels\":{\"a\":\"b\"}}: `selector` will be auto-generated]"
    );
}
