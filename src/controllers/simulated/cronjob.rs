//! The CronJob controller (batch/v1): a Job from the job template at each time the schedule
//! (in `timeZone`, or a legacy `TZ=` prefix) fires, named `<cronjob>-<scheduled time in minutes
//! since the epoch>`, owned by the CronJob and annotated with
//! `batch.kubernetes.io/cronjob-scheduled-timestamp`; the most recent missed run is started
//! late unless `startingDeadlineSeconds` has passed; `concurrencyPolicy` `Forbid` skips a run
//! while a Job is active and `Replace` deletes the active ones first; `suspend` stops it; the
//! finished Jobs beyond `successfulJobsHistoryLimit` and `failedJobsHistoryLimit` are deleted
//! (oldest start first). The status lists the `active` Jobs and keeps `lastScheduleTime` and
//! `lastSuccessfulTime`, as the controller writes them.
//!
//! Time is the wall clock: the controller looks again when the next run is due (with
//! [`crate::controllers::later_once`], one timer per CronJob), so a `* * * * *` CronJob's first
//! Job comes at the next minute. No controllable clock exists yet; a test that wants a run at
//! once can use `@every 1s`, or write a `status.lastScheduleTime` in the past (a missed run,
//! started at once as after a controller restart). Not simulated: events, and the warning
//! about too many missed runs.

use std::time::Duration;

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{json, Value};

use super::{controlled_by, owner_reference, resource, write_status_at, Sim, Workload};
use crate::context::Context;
use crate::controllers::{later_once, Work};
use crate::registry::batch::cron::{self, Schedule};
use crate::registry::object_meta::meta_str;
use crate::registry::store::{self as rest, DeleteOptions, Propagation};
use crate::state::State;
use crate::store::{GroupResource, ObjectKey};

/// The annotation of a CronJob's Job with the time it was scheduled for.
pub const SCHEDULED_TIMESTAMP: &str = "batch.kubernetes.io/cronjob-scheduled-timestamp";
const CONTROLLER: &str = "cronjob-controller";
/// How long after a run is due the controller looks (`nextScheduleDelta`).
const NEXT_DELTA: Duration = Duration::from_millis(100);

fn cronjobs() -> GroupResource {
    GroupResource::new("batch", "cronjobs")
}

fn jobs() -> GroupResource {
    GroupResource::new("batch", "jobs")
}

/// Reconciles one CronJob (`sync`).
pub async fn reconcile(state: &State, ctx: &Context, key: &ObjectKey) {
    let snapshot = state.store.snapshot();
    let Some(stored) = snapshot.get(&cronjobs(), key) else {
        return;
    };
    let cronjob = stored.value().clone();
    let ctx = crate::controllers::kcm(ctx, CONTROLLER);
    let uid = meta_str(&cronjob, "uid");
    let children: Vec<Value> = snapshot
        .list(&jobs(), Some(&key.namespace))
        .filter(|(_, j)| controlled_by(&j.value(), uid))
        .map(|(_, j)| j.value().clone())
        .collect();
    let plan = plan(&cronjob, &children, Utc::now());
    for name in &plan.delete {
        delete_job(state, &ctx, &key.namespace, name).await;
    }
    let mut status = plan.status.clone();
    if let Some((name, scheduled)) = &plan.create {
        if let Some(job) = create_job(state, &ctx, &cronjob, name, *scheduled).await {
            add_active(&mut status, &job, scheduled);
        }
    }
    if status != cronjob["status"] {
        let rv = meta_str(&cronjob, "resourceVersion");
        write_status_at(state, &ctx, &cronjobs(), key, rv, &status).await;
    }
    if let Some(delay) = plan.next {
        let work = Work::Simulated(Sim::Workload(Workload::CronJob, key.clone()));
        later_once(state, delay, work);
    }
}

/// Deletes a Job and, in the background, its pods (`DeleteJob`).
async fn delete_job(state: &State, ctx: &Context, namespace: &str, name: &str) {
    let Some(res) = resource(state, &jobs()) else {
        return;
    };
    let opts = DeleteOptions {
        propagation: Some(Propagation::Background),
        ..DeleteOptions::default()
    };
    if let Err(e) = rest::delete(state, ctx, &res, namespace, name, &opts).await {
        if e.code != 404 {
            tracing::warn!(error = %e, job = %name, "deleting a cronjob's job");
        }
    }
}

/// Creates the Job of a run; the Job to list as active: the created one, or one of that name
/// the CronJob already controls and does not list yet. `None` when there is nothing to add.
async fn create_job(
    state: &State,
    ctx: &Context,
    cronjob: &Value,
    name: &str,
    scheduled: DateTime<Utc>,
) -> Option<Value> {
    let res = resource(state, &jobs())?;
    let ns = meta_str(cronjob, "namespace");
    let job = job_from_template(cronjob, name, scheduled);
    match rest::create(state, ctx, &res, ns, job).await {
        Ok(created) => Some(created.value().clone()),
        Err(e) if e.code == 409 => {
            let existing = state
                .store
                .snapshot()
                .get(&jobs(), &ObjectKey::new(ns, name))?
                .value()
                .clone();
            let ours = controlled_by(&existing, meta_str(cronjob, "uid"));
            let listed = in_active(&cronjob["status"], meta_str(&existing, "uid"));
            (ours && !listed).then_some(existing)
        }
        Err(e) => {
            tracing::warn!(error = %e, job = %name, "creating a cronjob's job");
            None
        }
    }
}

/// Lists a started Job as active and its run as the last scheduled.
fn add_active(status: &mut Value, job: &Value, scheduled: &DateTime<Utc>) {
    let reference = json!({"kind": "Job", "namespace": job["metadata"]["namespace"],
        "name": job["metadata"]["name"], "uid": job["metadata"]["uid"],
        "apiVersion": "batch/v1", "resourceVersion": job["metadata"]["resourceVersion"]});
    if !status["active"].is_array() {
        status["active"] = json!([]);
    }
    if let Some(list) = status.get_mut("active").and_then(Value::as_array_mut) {
        list.push(reference);
    }
    status["lastScheduleTime"] = json!(rfc3339(scheduled));
}

/// The Job of the run scheduled at `scheduled` (`getJobFromTemplate2`).
pub fn job_from_template(cronjob: &Value, name: &str, scheduled: DateTime<Utc>) -> Value {
    let template = &cronjob["spec"]["jobTemplate"];
    let zone = cron::load_location(cronjob["spec"]["timeZone"].as_str().unwrap_or(""))
        .unwrap_or(chrono_tz::UTC);
    let mut annotations = template["metadata"]["annotations"].clone();
    if !annotations.is_object() {
        annotations = json!({});
    }
    annotations[SCHEDULED_TIMESTAMP] = json!(scheduled
        .with_timezone(&zone)
        .to_rfc3339_opts(SecondsFormat::Secs, true));
    let mut metadata = json!({"name": name, "namespace": cronjob["metadata"]["namespace"],
        "annotations": annotations, "ownerReferences": [owner_reference(cronjob)]});
    if template["metadata"]["labels"].is_object() {
        metadata["labels"] = template["metadata"]["labels"].clone();
    }
    json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": metadata,
        "spec": template["spec"]})
}

/// What one sync of a CronJob does.
#[derive(Debug, Default, PartialEq)]
pub struct Plan {
    /// Jobs to delete: finished ones past the history limits, active ones being replaced.
    pub delete: Vec<String>,
    /// The Job to create, and the time it was scheduled for.
    pub create: Option<(String, DateTime<Utc>)>,
    /// The status, before the created Job is listed in it.
    pub status: Value,
    /// When to look again.
    pub next: Option<Duration>,
}

/// One sync of a CronJob, from the Jobs it controls (`cleanupFinishedJobs`, `syncCronJob`).
pub fn plan(cronjob: &Value, children: &[Value], now: DateTime<Utc>) -> Plan {
    let mut out = Plan {
        status: cronjob["status"].clone(),
        ..Plan::default()
    };
    if !out.status.is_object() {
        out.status = json!({});
    }
    cleanup_history(cronjob, children, &mut out);
    follow_children(children, &mut out.status);
    let spec = &cronjob["spec"];
    let deleting = cronjob["metadata"].get("deletionTimestamp").is_some();
    if deleting || spec["suspend"] == true {
        return out;
    }
    let Ok(schedule) = cron::schedule(&schedule_text(cronjob)) else {
        return out;
    };
    let times = Times::of(cronjob, &out.status);
    let scheduled = match most_recent(&times, &schedule, now, true) {
        Ok(Missed {
            most_recent: Some(t),
            ..
        }) if t <= now => t,
        Ok(_) => {
            out.next = next_look(&times, &schedule, now);
            return out;
        }
        Err(_) => return out,
    };
    let too_late = spec["startingDeadlineSeconds"].as_i64().is_some_and(|s| {
        chrono::TimeDelta::try_seconds(s)
            .and_then(|d| scheduled.checked_add_signed(d))
            .is_some_and(|deadline| deadline < now)
    });
    let name = job_name(cronjob, scheduled);
    let listed = list(&out.status["active"]).any(|r| r["name"] == name.as_str());
    let done = times.last_schedule == Some(scheduled);
    let forbidden = spec["concurrencyPolicy"] == "Forbid" && !active_refs(&out.status).is_empty();
    if too_late || listed || done || forbidden {
        out.next = next_look(&times, &schedule, now);
        return out;
    }
    if spec["concurrencyPolicy"] == "Replace" {
        for reference in active_refs(&out.status) {
            out.delete
                .extend(reference["name"].as_str().map(String::from));
        }
        out.status["active"] = json!([]);
        drop_empty_active(&mut out.status);
    }
    out.create = Some((name, scheduled));
    let after = Times {
        last_schedule: Some(scheduled),
        ..times
    };
    out.next = next_look(&after, &schedule, now);
    out
}

/// `cleanupFinishedJobs`: the oldest finished Jobs past each history limit are deleted.
fn cleanup_history(cronjob: &Value, children: &[Value], out: &mut Plan) {
    for (kind, limit) in [
        ("Complete", "successfulJobsHistoryLimit"),
        ("Failed", "failedJobsHistoryLimit"),
    ] {
        let Some(limit) = cronjob["spec"][limit].as_i64() else {
            continue;
        };
        let mut finished: Vec<&Value> = children
            .iter()
            .filter(|j| finished_as(j) == Some(kind))
            .collect();
        let excess = finished
            .len()
            .saturating_sub(usize::try_from(limit).unwrap_or(0));
        if excess == 0 {
            continue;
        }
        // `byJobStartTime`: started first (unstarted last), then by name.
        finished.sort_by_key(|j| {
            let start = j["status"]["startTime"].as_str().map(time_of);
            (start.is_none(), start, meta_str(j, "name").to_string())
        });
        for job in finished.into_iter().take(excess) {
            out.delete.push(meta_str(job, "name").to_string());
            remove_active(&mut out.status, meta_str(job, "uid"));
        }
    }
}

/// The active list follows the Jobs: finished ones leave it (the succeeded ones moving
/// `lastSuccessfulTime`), and so do Jobs that are gone.
fn follow_children(children: &[Value], status: &mut Value) {
    for job in children {
        let Some(kind) = finished_as(job) else {
            continue;
        };
        remove_active(status, meta_str(job, "uid"));
        let completed = job["status"]["completionTime"].as_str();
        if let (Some("Complete"), Some(completed)) = (Some(kind), completed) {
            let newer = status["lastSuccessfulTime"]
                .as_str()
                .is_none_or(|last| time_of(completed) > time_of(last));
            if newer {
                status["lastSuccessfulTime"] = json!(completed);
            }
        }
    }
    let missing: Vec<String> = active_refs(status)
        .iter()
        .filter(|r| !children.iter().any(|j| j["metadata"]["uid"] == r["uid"]))
        .filter_map(|r| r["uid"].as_str().map(String::from))
        .collect();
    for uid in missing {
        remove_active(status, &uid);
    }
}

/// The schedule as the controller parses it (`formatSchedule`): `timeZone` as a `TZ=` prefix.
fn schedule_text(cronjob: &Value) -> String {
    let schedule = cronjob["spec"]["schedule"].as_str().unwrap_or("");
    match cronjob["spec"]["timeZone"].as_str() {
        Some(zone) if !schedule.contains("TZ") && cron::load_location(zone).is_ok() => {
            format!("TZ={zone} {schedule}")
        }
        _ => schedule.to_string(),
    }
}

/// The times a CronJob's schedule is counted from.
#[derive(Debug, Clone, Copy)]
struct Times {
    created: DateTime<Utc>,
    last_schedule: Option<DateTime<Utc>>,
    starting_deadline: Option<i64>,
}

impl Times {
    fn of(cronjob: &Value, status: &Value) -> Times {
        Times {
            created: time_of(meta_str(cronjob, "creationTimestamp")),
            last_schedule: status["lastScheduleTime"].as_str().map(time_of),
            starting_deadline: cronjob["spec"]["startingDeadlineSeconds"].as_i64(),
        }
    }
}

/// What `mostRecentScheduleTime` finds: where it counted from, the most recent run due by
/// now, and whether any were missed.
#[derive(Debug, PartialEq)]
struct Missed {
    earliest: DateTime<Utc>,
    most_recent: Option<DateTime<Utc>>,
    missed: bool,
}

/// `mostRecentScheduleTime`: the most recent run due since the last one (or the creation,
/// or the starting deadline when `with_deadline`).
fn most_recent(
    times: &Times,
    schedule: &Schedule,
    now: DateTime<Utc>,
    with_deadline: bool,
) -> Result<Missed, String> {
    let mut earliest = times.last_schedule.unwrap_or(times.created);
    if let (true, Some(seconds)) = (with_deadline, times.starting_deadline) {
        // A deadline longer than any representable time is no deadline.
        if let Some(start) =
            chrono::TimeDelta::try_seconds(seconds).and_then(|d| now.checked_sub_signed(d))
        {
            earliest = earliest.max(start);
        }
    }
    let none = |missed| Missed {
        earliest,
        most_recent: None,
        missed,
    };
    let Some(t1) = schedule.next_after(earliest) else {
        return Ok(none(false));
    };
    if now < t1 {
        return Ok(none(false));
    }
    if schedule.next_after(t1).is_some_and(|t2| now < t2) {
        return Ok(Missed {
            earliest,
            most_recent: Some(t1),
            missed: false,
        });
    }
    many_missed(schedule, earliest, t1, now)
}

/// The most recent of several missed runs, stepping from about the right place.
fn many_missed(
    schedule: &Schedule,
    earliest: DateTime<Utc>,
    t1: DateTime<Utc>,
    now: DateTime<Utc>,
) -> Result<Missed, String> {
    let t2 = schedule.next_after(t1).unwrap_or(t1);
    let between = (t2 - t1).num_milliseconds().saturating_add(500) / 1000;
    if between < 1 {
        return Err("time difference between two schedules is less than 1 second".into());
    }
    let elapsed = (now - t1).num_seconds();
    let count = elapsed / between + 1;
    let mut t = t1 + chrono::Duration::seconds((count - 2) * between);
    let mut most_recent = None;
    while let Some(next) = schedule.next_after(t).filter(|n| *n <= now) {
        most_recent = Some(next);
        t = next;
    }
    Ok(Missed {
        earliest,
        most_recent,
        missed: count > 0,
    })
}

/// `nextScheduleTimeDuration`: how long until the run after the most recent one (plus a
/// little), counted without the starting deadline.
fn next_look(times: &Times, schedule: &Schedule, now: DateTime<Utc>) -> Option<Duration> {
    let from = match most_recent(times, schedule, now, false) {
        Err(_) => now,
        Ok(Missed {
            most_recent: Some(t),
            ..
        }) => t,
        Ok(Missed {
            earliest, missed, ..
        }) => {
            if missed {
                now
            } else {
                earliest
            }
        }
    };
    let next = schedule.next_after(from)?;
    let wait = (next - now).to_std().unwrap_or(Duration::ZERO);
    Some(wait + NEXT_DELTA)
}

/// `<cronjob>-<scheduled time in minutes since the epoch>`.
pub fn job_name(cronjob: &Value, scheduled: DateTime<Utc>) -> String {
    format!(
        "{}-{}",
        meta_str(cronjob, "name"),
        scheduled.timestamp().div_euclid(60)
    )
}

/// `Complete` or `Failed` when a Job finished.
fn finished_as(job: &Value) -> Option<&'static str> {
    list(&job["status"]["conditions"])
        .filter(|c| c["status"] == "True")
        .find_map(|c| match c["type"].as_str() {
            Some("Complete") => Some("Complete"),
            Some("Failed") => Some("Failed"),
            _ => None,
        })
}

fn active_refs(status: &Value) -> Vec<Value> {
    list(&status["active"]).cloned().collect()
}

fn in_active(status: &Value, uid: &str) -> bool {
    list(&status["active"]).any(|r| r["uid"] == uid)
}

fn remove_active(status: &mut Value, uid: &str) {
    if let Some(list) = status.get_mut("active").and_then(Value::as_array_mut) {
        list.retain(|r| r["uid"] != uid);
    }
    drop_empty_active(status);
}

/// `active` is left out when empty (`omitempty`).
fn drop_empty_active(status: &mut Value) {
    if status["active"].as_array().is_some_and(Vec::is_empty) {
        if let Some(st) = status.as_object_mut() {
            st.remove("active");
        }
    }
}

/// A stored time (the epoch when it does not parse).
fn time_of(text: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(text)
        .map(|t| t.with_timezone(&Utc))
        .unwrap_or_default()
}

fn rfc3339(t: &DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

fn list(v: &Value) -> impl Iterator<Item = &Value> {
    v.as_array().into_iter().flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn at(text: &str) -> DateTime<Utc> {
        time_of(text)
    }

    fn cronjob(spec: Value, status: Value) -> Value {
        let mut c = json!({"apiVersion": "batch/v1", "kind": "CronJob",
            "metadata": {"name": "tick", "namespace": "ns", "uid": "c",
                "creationTimestamp": "2026-03-01T12:00:10Z"},
            "spec": {"schedule": "* * * * *", "concurrencyPolicy": "Allow", "suspend": false,
                "successfulJobsHistoryLimit": 3, "failedJobsHistoryLimit": 1,
                "jobTemplate": {"metadata": {"labels": {"team": "a"}},
                    "spec": {"template": {"spec": {"restartPolicy": "Never",
                        "containers": [{"name": "c", "image": "busybox"}]}}}}},
            "status": status});
        for (k, v) in spec.as_object().into_iter().flatten() {
            c["spec"][k] = v.clone();
        }
        c
    }

    fn job(name: &str, finished: Option<&str>, start: &str) -> Value {
        let mut j = json!({"metadata": {"name": name, "uid": format!("u-{name}")},
            "status": {"startTime": start}});
        if let Some(kind) = finished {
            j["status"]["conditions"] = json!([{"type": kind, "status": "True"}]);
            j["status"]["completionTime"] = json!(start);
        }
        j
    }

    fn reference(name: &str) -> Value {
        json!({"kind": "Job", "name": name, "uid": format!("u-{name}")})
    }

    #[test]
    fn nothing_is_due_before_the_first_minute() {
        let p = plan(
            &cronjob(json!({}), json!({})),
            &[],
            at("2026-03-01T12:00:30Z"),
        );
        assert_eq!(p.create, None);
        assert_eq!(p.next, Some(Duration::from_millis(30_100)));
        assert_eq!(p.status, json!({}));
    }

    #[test]
    fn a_due_run_creates_its_job() {
        let p = plan(
            &cronjob(json!({}), json!({})),
            &[],
            at("2026-03-01T12:01:00.2Z"),
        );
        let due = at("2026-03-01T12:01:00Z");
        assert_eq!(
            p.create,
            Some((format!("tick-{}", due.timestamp() / 60), due))
        );
        assert_eq!(p.next, Some(Duration::from_millis(59_900)));
    }

    #[rstest]
    // The most recent missed run starts late...
    #[case(json!({}), Some("2026-03-01T12:05:00Z"))]
    // ...unless the starting deadline passed.
    #[case(json!({"startingDeadlineSeconds": 10}), None)]
    #[case(json!({"startingDeadlineSeconds": 60}), Some("2026-03-01T12:05:00Z"))]
    #[case(json!({"suspend": true}), None)]
    fn missed_runs(#[case] spec: Value, #[case] due: Option<&str>) {
        let status = json!({"lastScheduleTime": "2026-03-01T12:00:00Z"});
        let p = plan(&cronjob(spec, status), &[], at("2026-03-01T12:05:30Z"));
        assert_eq!(p.create.map(|(_, t)| t), due.map(at));
    }

    #[rstest]
    #[case("Allow", true, &[])]
    #[case("Forbid", false, &[])]
    #[case("Replace", true, &["old"])]
    fn concurrency_policies(#[case] policy: &str, #[case] creates: bool, #[case] deleted: &[&str]) {
        let status = json!({"active": [reference("old")],
            "lastScheduleTime": "2026-03-01T12:00:00Z"});
        let c = cronjob(json!({"concurrencyPolicy": policy}), status);
        let running = [job("old", None, "2026-03-01T12:00:00Z")];
        let p = plan(&c, &running, at("2026-03-01T12:01:00.5Z"));
        assert_eq!(p.create.is_some(), creates);
        assert_eq!(p.delete, deleted);
        if policy == "Replace" {
            assert!(p.status.get("active").is_none());
        }
    }

    #[test]
    fn finished_jobs_leave_the_active_list_and_old_ones_go() {
        let status = json!({"active": [reference("b"), reference("gone")],
            "lastScheduleTime": "2026-03-01T12:03:00Z"});
        let c = cronjob(json!({"successfulJobsHistoryLimit": 1}), status);
        let children = [
            job("a", Some("Complete"), "2026-03-01T12:01:00Z"),
            job("b", Some("Complete"), "2026-03-01T12:02:00Z"),
            job("f1", Some("Failed"), "2026-03-01T11:00:00Z"),
            job("f2", Some("Failed"), "2026-03-01T11:01:00Z"),
        ];
        let p = plan(&c, &children, at("2026-03-01T12:03:30Z"));
        assert_eq!(p.delete, ["a", "f1"]);
        assert!(p.status.get("active").is_none(), "{}", p.status);
        assert_eq!(p.status["lastSuccessfulTime"], "2026-03-01T12:02:00Z");
    }

    #[test]
    fn jobs_from_the_template() {
        let c = cronjob(json!({"timeZone": "Europe/Berlin"}), json!({}));
        let j = job_from_template(&c, "tick-1", at("2026-03-01T12:01:00Z"));
        assert_eq!(
            j["metadata"]["annotations"][SCHEDULED_TIMESTAMP],
            "2026-03-01T13:01:00+01:00"
        );
        assert_eq!(j["metadata"]["labels"], json!({"team": "a"}));
        assert_eq!(j["metadata"]["ownerReferences"][0]["kind"], "CronJob");
        assert_eq!(j["spec"]["template"]["spec"]["restartPolicy"], "Never");
        assert_eq!(schedule_text(&c), "TZ=Europe/Berlin * * * * *");
    }
}
