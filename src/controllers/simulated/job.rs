//! The Job controller (batch/v1): pods from the template (`<job>-` generated names, or
//! `<job>-<index>-` with the completion index in their annotations, labels, hostname and
//! `JOB_COMPLETION_INDEX` for `Indexed` Jobs) up to `parallelism` and no more than the
//! completions left, each holding the `batch.kubernetes.io/job-tracking` finalizer until the
//! controller has counted it; the Job's own [`super::RUN`] and [`super::DURATION`] annotations
//! copied onto the pods it creates (the template's win) so that a test steers a Job's pods
//! from the Job. A Job fails once more pods failed than `backoffLimit` allows (or its
//! `OnFailure` pods restarted that often), or once it ran longer than `activeDeadlineSeconds`;
//! it succeeds once `completions` pods succeeded (any one, without `completions`). Its status
//! is written as 1.36's controller writes it: `active`, `ready`, `terminating`, `succeeded`,
//! `failed`, `completedIndexes`, `startTime`, `uncountedTerminatedPods` (the pods counted
//! before their finalizer goes), then the interim `SuccessCriteriaMet` or `FailureTarget`
//! condition, the pods' finalizers released, and `Complete` (with `completionTime`) or
//! `Failed` once no pod is left running. `suspend` deletes the active pods and sets
//! `Suspended` (clearing `startTime`); resuming sets `Suspended=False` and a new `startTime`.
//! The template's labels (`batch.kubernetes.io/job-name`, `controller-uid`...) are the ones the
//! apiserver's Job defaulting put there, as on a real cluster.
//!
//! Not simulated: the pod failure back-off (replacements are created at once, not after 10 s
//! doubling), `podFailurePolicy` (every failure counts), `successPolicy`,
//! `backoffLimitPerIndex`/`maxFailedIndexes`, `ttlSecondsAfterFinished` (no TTL controller),
//! adoption of orphan pods, events, and Jobs whose `managedBy` names another controller are
//! left alone, as the real one leaves them.

use std::collections::BTreeSet;
use std::time::Duration;

use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{json, Value};

use super::replicaset::{deletion_rank, is_ready};
use super::{
    controlled_by, controller_ref, create_pod, delete, pods, write_status_at, PodName, Sim,
    Workload, DURATION, RUN,
};
use crate::context::Context;
use crate::controllers::{later_once, release, Work};
use crate::registry::object_meta::meta_str;
use crate::state::State;
use crate::store::{GroupResource, ObjectKey, Snapshot};

/// The pods one sync creates at most (`MaxPodCreateDeletePerSync`).
const MAX_CREATES_PER_SYNC: i64 = 500;

/// The finalizer a Job's pods hold until the controller has counted them.
pub const TRACKING_FINALIZER: &str = "batch.kubernetes.io/job-tracking";
/// The annotation (and label) with an Indexed Job's pod's completion index.
pub const COMPLETION_INDEX: &str = "batch.kubernetes.io/job-completion-index";
/// The value of `spec.managedBy` naming this controller (also what an unset one means).
const MANAGED_BY: &str = "kubernetes.io/job-controller";
const CONTROLLER: &str = "job-controller";

fn jobs() -> GroupResource {
    GroupResource::new("batch", "jobs")
}

/// Reconciles one Job (`syncJob`).
pub async fn reconcile(state: &State, ctx: &Context, key: &ObjectKey) {
    let snapshot = state.store.snapshot();
    let ctx = crate::controllers::kcm(ctx, CONTROLLER);
    let Some(stored) = snapshot.get(&jobs(), key) else {
        release_orphans(state, &ctx, &snapshot, key).await;
        return;
    };
    let job = stored.value().clone();
    if job["spec"]["managedBy"].as_str().unwrap_or(MANAGED_BY) != MANAGED_BY {
        return;
    }
    let uid = meta_str(&job, "uid");
    let owned: Vec<Value> = snapshot
        .list(&pods(), Some(&key.namespace))
        .filter(|(_, p)| controlled_by(&p.value(), uid))
        .map(|(_, p)| p.value().clone())
        .collect();
    if is_finished(&job) {
        // A finished Job's pods keep no finalizer (those deleted with it among them).
        for pod in owned.iter().filter(|p| tracked(p)) {
            release_pod(state, &ctx, pod).await;
        }
        return;
    }
    let plan = plan(&job, &owned, Utc::now());
    execute(state, &ctx, key, &job, &owned, plan).await;
}

/// The tracking finalizers of the pods a Job that went left behind (`syncOrphanPod`).
async fn release_orphans(state: &State, ctx: &Context, snapshot: &Snapshot, key: &ObjectKey) {
    let orphans: Vec<Value> = snapshot
        .list(&pods(), Some(&key.namespace))
        .map(|(_, p)| p.value().clone())
        .filter(|p| {
            tracked(p)
                && controller_ref(p).is_some_and(|r| {
                    r["apiVersion"] == "batch/v1" && r["kind"] == "Job" && r["name"] == key.name
                })
        })
        .collect();
    for pod in &orphans {
        release_pod(state, ctx, pod).await;
    }
}

async fn release_pod(state: &State, ctx: &Context, pod: &Value) {
    let Some(res) = super::resource(state, &pods()) else {
        return;
    };
    release(state, ctx, &res, &super::key_of(pod), TRACKING_FINALIZER).await;
}

/// Carries a plan out in the controller's order: pods deleted and created, the interim status,
/// the finalizers released, the final status.
async fn execute(
    state: &State,
    ctx: &Context,
    key: &ObjectKey,
    job: &Value,
    owned: &[Value],
    plan: Plan,
) {
    let named = |name: &String| owned.iter().find(|p| meta_str(p, "name") == name);
    for pod in plan.remove.iter().filter_map(named) {
        release_pod(state, ctx, pod).await;
        delete(state, ctx, &pods(), &super::key_of(pod)).await;
    }
    for pod in plan.terminate.iter().filter_map(named) {
        delete(state, ctx, &pods(), &super::key_of(pod)).await;
    }
    let steering = steering_annotations(job);
    let extra: Vec<(&str, &str)> = steering.iter().map(|(k, v)| (*k, v.as_str())).collect();
    for index in &plan.create {
        let (template, prefix) = pod_template(job, *index);
        let name = PodName::Generate(&prefix);
        create_pod(state, ctx, job, &template, name, &extra).await;
    }
    let mut rv = meta_str(job, "resourceVersion").to_string();
    if plan.interim != job["status"] {
        match write_status_at(state, ctx, &jobs(), key, &rv, &plan.interim).await {
            Some(written) => rv = meta_str(&written, "resourceVersion").to_string(),
            None => return,
        }
    }
    for pod in plan.release.iter().filter_map(named) {
        release_pod(state, ctx, pod).await;
    }
    if plan.after != plan.interim {
        write_status_at(state, ctx, &jobs(), key, &rv, &plan.after).await;
    }
    if let Some(delay) = plan.recheck {
        let work = Work::Simulated(Sim::Workload(Workload::Job, key.clone()));
        later_once(state, delay, work);
    }
}

/// The Job's [`RUN`] and [`DURATION`] annotations, for its pods.
fn steering_annotations(job: &Value) -> Vec<(&'static str, String)> {
    [RUN, DURATION]
        .into_iter()
        .filter_map(|k| {
            let v = job["metadata"]["annotations"][k].as_str()?;
            Some((k, v.to_string()))
        })
        .collect()
}

/// The template a pod of the Job is created from, and its `generateName`: the tracking
/// finalizer added, and for an index its annotation, label, hostname and environment variable.
pub fn pod_template(job: &Value, index: Option<i64>) -> (Value, String) {
    let name = meta_str(job, "name");
    let mut template = job["spec"]["template"].clone();
    if !template["metadata"].is_object() {
        template["metadata"] = json!({});
    }
    let finalizers = &mut template["metadata"]["finalizers"];
    if !finalizers.is_array() {
        *finalizers = json!([]);
    }
    if let Some(list) = finalizers.as_array_mut() {
        if !list.iter().any(|f| f == TRACKING_FINALIZER) {
            list.push(json!(TRACKING_FINALIZER));
        }
    }
    let Some(index) = index else {
        return (template, format!("{name}-"));
    };
    for part in ["annotations", "labels"] {
        if !template["metadata"][part].is_object() {
            template["metadata"][part] = json!({});
        }
        template["metadata"][part][COMPLETION_INDEX] = json!(index.to_string());
    }
    template["spec"]["hostname"] = json!(format!("{name}-{index}"));
    let env = json!({"name": "JOB_COMPLETION_INDEX", "valueFrom": {"fieldRef": {
        "fieldPath": format!("metadata.labels['{COMPLETION_INDEX}']")}}});
    for kind in ["initContainers", "containers"] {
        let containers = template["spec"].get_mut(kind).and_then(Value::as_array_mut);
        for c in containers.into_iter().flatten() {
            let has = c["env"]
                .as_array()
                .is_some_and(|e| e.iter().any(|v| v["name"] == "JOB_COMPLETION_INDEX"));
            if !has {
                if !c["env"].is_array() {
                    c["env"] = json!([]);
                }
                if let Some(list) = c["env"].as_array_mut() {
                    list.push(env.clone());
                }
            }
        }
    }
    (template, generate_name_with_index(name, index))
}

/// `podGenerateNameWithIndex`: `<job>-<index>-`, the Job's name cut to fit 58 characters.
fn generate_name_with_index(job: &str, index: i64) -> String {
    let suffix = format!("-{index}-");
    let room = 58usize.saturating_sub(suffix.len());
    let cut: String = job.chars().take(room).collect();
    format!("{cut}{suffix}")
}

/// What one sync of a Job does, in order.
#[derive(Debug, Default, PartialEq)]
pub struct Plan {
    /// Active pods stopped without being counted (the Job is suspended, or has too many): their
    /// finalizer goes first, then they are deleted.
    pub remove: Vec<String>,
    /// Active pods stopped because the Job finished: deleted, their finalizer kept until they
    /// are counted.
    pub terminate: Vec<String>,
    /// The pods to create: each one's completion index (Indexed Jobs) or `None`.
    pub create: Vec<Option<i64>>,
    /// The status written before finalizers are released, listing the pods about to be
    /// released in `uncountedTerminatedPods` (written only when it differs from the stored one).
    pub interim: Value,
    /// The pods whose tracking finalizer goes.
    pub release: Vec<String>,
    /// The status once they are counted (written only when it differs from `interim`).
    pub after: Value,
    /// When to look again (the active deadline).
    pub recheck: Option<Duration>,
}

/// Why a Job is finishing: its terminal condition's type (`Complete` or `Failed`), reason and
/// message, and whether its interim condition (`SuccessCriteriaMet`, `FailureTarget`) is
/// already there.
#[derive(Debug, Clone, PartialEq)]
struct Finish {
    success: bool,
    reason: String,
    message: String,
    interim_written: bool,
}

impl Finish {
    fn new(success: bool, reason: &str, message: &str) -> Finish {
        Finish {
            success,
            reason: reason.into(),
            message: message.into(),
            interim_written: false,
        }
    }
}

/// The Job's state as one sync sees it.
struct Sync<'a> {
    job: &'a Value,
    pods: &'a [Value],
    indexed: bool,
    completions: Option<i64>,
    suspended: bool,
    only_replace_failed: bool,
    uncounted_succeeded: Vec<String>,
    uncounted_failed: Vec<String>,
    succeeded: i64,
    failed: i64,
    /// The indexes `status.completedIndexes` lists.
    counted_indexes: BTreeSet<i64>,
    /// Those and the indexes of succeeded pods not counted yet.
    succeeded_indexes: BTreeSet<i64>,
    active: Vec<&'a Value>,
    ready: i64,
    terminating: i64,
}

impl<'a> Sync<'a> {
    fn new(job: &'a Value, pods: &'a [Value]) -> Sync<'a> {
        let spec = &job["spec"];
        let status = &job["status"];
        let uncounted = &status["uncountedTerminatedPods"];
        let mut s = Sync {
            job,
            pods,
            indexed: spec["completionMode"] == "Indexed",
            completions: spec["completions"].as_i64(),
            suspended: spec["suspend"] == true,
            only_replace_failed: spec["podReplacementPolicy"] == "Failed"
                || !spec["podFailurePolicy"].is_null(),
            uncounted_succeeded: strings(&uncounted["succeeded"]),
            uncounted_failed: strings(&uncounted["failed"]),
            succeeded: 0,
            failed: 0,
            counted_indexes: BTreeSet::new(),
            succeeded_indexes: BTreeSet::new(),
            active: pods
                .iter()
                .filter(|p| !finished(p) && !deleting(p))
                .collect(),
            ready: 0,
            terminating: pods.iter().filter(|p| deleting(p) && !finished(p)).count() as i64,
        };
        s.ready = s.active.iter().filter(|p| is_ready(p)).count() as i64;
        let uid = |p: &Value| meta_str(p, "uid").to_string();
        let new_succeeded = pods
            .iter()
            .filter(|p| tracked(p) && s.valid(p) && phase(p) == "Succeeded")
            .filter(|p| !s.uncounted_succeeded.contains(&uid(p)))
            .count() as i64;
        let new_failed = pods
            .iter()
            .filter(|p| tracked(p) && s.valid(p) && s.pod_failed(p))
            .filter(|p| !s.uncounted_failed.contains(&uid(p)))
            .count() as i64;
        let count = |k: &str| status[k].as_i64().unwrap_or(0);
        s.succeeded = count("succeeded")
            .saturating_add(new_succeeded)
            .saturating_add(s.uncounted_succeeded.len() as i64);
        s.failed = count("failed")
            .saturating_add(new_failed)
            .saturating_add(s.uncounted_failed.len() as i64);
        if s.indexed {
            let limit = s.completions.unwrap_or(0);
            s.counted_indexes = parse_indexes(status["completedIndexes"].as_str().unwrap_or(""))
                .into_iter()
                .filter(|i| *i < limit)
                .collect();
            s.succeeded_indexes = s.counted_indexes.clone();
            let done = pods
                .iter()
                .filter(|p| tracked(p) && phase(p) == "Succeeded")
                .filter_map(|p| index_of(p).filter(|i| *i < limit));
            s.succeeded_indexes.extend(done);
            s.succeeded = s.succeeded_indexes.len() as i64;
        }
        s
    }

    /// Whether a pod counts for the Job: any pod, or one with a valid index for Indexed Jobs.
    fn valid(&self, pod: &Value) -> bool {
        !self.indexed || index_of(pod).is_some_and(|i| i < self.completions.unwrap_or(0))
    }

    /// `isPodFailed`: failed, or (unless only failed pods are replaced) deleted before it
    /// succeeded.
    fn pod_failed(&self, pod: &Value) -> bool {
        phase(pod) == "Failed"
            || (!self.only_replace_failed && deleting(pod) && phase(pod) != "Succeeded")
    }
}

/// One sync of a Job, from the Job and every pod it controls (`syncJob`).
pub fn plan(job: &Value, pods: &[Value], now: DateTime<Utc>) -> Plan {
    let time = now.to_rfc3339_opts(SecondsFormat::Secs, true);
    let mut s = Sync::new(job, pods);
    let mut out = Plan::default();
    let mut status = job["status"].clone();
    if !status.is_object() {
        status = json!({});
    }
    if status["startTime"].is_null() && !s.suspended {
        status["startTime"] = json!(time);
    }
    let mut finish = finish_of(&s, &status, now, &mut out);
    let mut active = s.active.len() as i64;
    if finish.is_some() {
        out.terminate = s.active.iter().map(|p| name_of(p)).collect();
        s.terminating += active;
        s.ready = 0;
        active = 0;
    } else {
        let managed = !deleting(job);
        if managed {
            active = manage(&mut s, &mut out);
        }
        let complete = match s.completions {
            None => s.succeeded > 0 && active == 0,
            Some(c) => s.succeeded >= c && active == 0,
        };
        if complete {
            finish = Some(Finish::new(
                true,
                "CompletionsReached",
                "Reached expected number of succeeded pods",
            ));
        } else if managed {
            suspension(&s, &mut status, &time);
        }
    }
    set_count(&mut status, "active", active);
    status["ready"] = json!(s.ready);
    status["terminating"] = json!(s.terminating);
    track(&s, finish.as_ref(), &mut status, &mut out, &time);
    out.interim = status.clone();
    count_released(&s, &mut status, &out);
    let uncounted_left = status["uncountedTerminatedPods"]
        .as_object()
        .is_some_and(|u| !u.is_empty());
    if let Some(f) = finish.filter(|_| s.terminating == 0 && !uncounted_left) {
        let kind = if f.success { "Complete" } else { "Failed" };
        ensure_condition(&mut status, kind, "True", &f.reason, &f.message, &time);
        if f.success {
            status["completionTime"] = json!(time);
        }
    }
    out.after = status;
    out
}

/// Whether the Job is finishing, and why (pre-existing interim conditions, the backoff limit,
/// the active deadline); schedules a look at the deadline when it is still to come.
fn finish_of(s: &Sync, status: &Value, now: DateTime<Utc>, out: &mut Plan) -> Option<Finish> {
    let spec = &s.job["spec"];
    for (kind, success) in [("SuccessCriteriaMet", true), ("FailureTarget", false)] {
        if let Some(c) = condition(status, kind).filter(|c| c["status"] == "True") {
            let mut f = Finish::new(
                success,
                c["reason"].as_str().unwrap_or(""),
                c["message"].as_str().unwrap_or(""),
            );
            f.interim_written = true;
            return Some(f);
        }
    }
    let limit = spec["backoffLimit"].as_i64().unwrap_or(6);
    if s.failed > limit || past_backoff_on_failure(s, limit) {
        return Some(Finish::new(
            false,
            "BackoffLimitExceeded",
            "Job has reached the specified backoff limit",
        ));
    }
    let deadline = spec["activeDeadlineSeconds"].as_i64();
    let started = status["startTime"]
        .as_str()
        .and_then(|t| DateTime::parse_from_rfc3339(t).ok());
    if let (Some(seconds), Some(started), false) = (deadline, started, s.suspended) {
        let ran = now.signed_duration_since(started).num_milliseconds();
        let allowed = seconds.saturating_mul(1000);
        if ran >= allowed {
            return Some(Finish::new(
                false,
                "DeadlineExceeded",
                "Job was active longer than specified deadline",
            ));
        }
        let left = u64::try_from(allowed.saturating_sub(ran)).unwrap_or(0);
        out.recheck = Some(Duration::from_millis(left + 1));
    }
    None
}

/// `pastBackoffLimitOnFailure`: the restarts of an `OnFailure` Job's running pods.
fn past_backoff_on_failure(s: &Sync, limit: i64) -> bool {
    if s.job["spec"]["template"]["spec"]["restartPolicy"] != "OnFailure" {
        return false;
    }
    let restarts: i64 = s
        .pods
        .iter()
        .filter(|p| matches!(phase(p), "Running" | "Pending"))
        .flat_map(|p| {
            let status = &p["status"];
            list(&status["initContainerStatuses"]).chain(list(&status["containerStatuses"]))
        })
        .map(|c| c["restartCount"].as_i64().unwrap_or(0))
        .sum();
    if limit == 0 {
        restarts > 0
    } else {
        restarts >= limit
    }
}

/// `manageJob`: deletes what is too many (everything when suspended) or creates what is
/// missing; the number of active pods after.
fn manage(s: &mut Sync, out: &mut Plan) -> i64 {
    let active = s.active.len() as i64;
    let wanted = if s.suspended {
        0
    } else {
        match s.completions {
            None if s.succeeded > 0 => active,
            None => s.job["spec"]["parallelism"].as_i64().unwrap_or(1),
            Some(c) => (c - s.succeeded)
                .min(s.job["spec"]["parallelism"].as_i64().unwrap_or(1))
                .max(0),
        }
    };
    let removed = for_removal(s, (active - wanted).max(0));
    if !removed.is_empty() {
        let n = removed.len() as i64;
        s.ready -= removed.iter().filter(|p| is_ready(p)).count() as i64;
        s.terminating += n;
        out.remove = removed.iter().map(|p| name_of(p)).collect();
        return active - n;
    }
    let blocked = if s.only_replace_failed {
        s.terminating
    } else {
        0
    };
    // At most a burst of creates per sync (`MaxPodCreateDeletePerSync`); the new pods'
    // commits bring the controller back for the rest.
    let missing = wanted
        .saturating_sub(blocked)
        .saturating_sub(active)
        .min(MAX_CREATES_PER_SYNC);
    if missing <= 0 {
        return active;
    }
    out.create = if s.indexed {
        first_pending_indexes(s, missing)
            .into_iter()
            .map(Some)
            .collect()
    } else {
        (0..missing).map(|_| None).collect()
    };
    active + out.create.len() as i64
}

/// `activePodsForRemoval`: for Indexed Jobs the pods with an index out of range, without one
/// or repeating one first; then the least useful.
fn for_removal<'a>(s: &Sync<'a>, at_least: i64) -> Vec<&'a Value> {
    let at_least = usize::try_from(at_least).unwrap_or(0);
    let mut removed: Vec<&Value> = Vec::new();
    let mut left: Vec<&Value> = Vec::new();
    if s.indexed {
        let mut seen = BTreeSet::new();
        let mut by_use = s.active.clone();
        by_use.sort_by_key(|p| std::cmp::Reverse(deletion_rank(p)));
        for p in by_use {
            match index_of(p).filter(|i| *i < s.completions.unwrap_or(0)) {
                Some(i) if seen.insert(i) => left.push(p),
                _ => removed.push(p),
            }
        }
    } else {
        left = s.active.clone();
    }
    if removed.len() < at_least {
        left.sort_by_key(|p| deletion_rank(p));
        let more = at_least - removed.len();
        removed.extend(left.into_iter().take(more));
    }
    removed
}

/// `firstPendingIndexes`: the lowest indexes neither succeeded nor running.
fn first_pending_indexes(s: &Sync, count: i64) -> Vec<i64> {
    let mut busy = s.succeeded_indexes.clone();
    busy.extend(s.active.iter().filter_map(|p| index_of(p)));
    if s.only_replace_failed {
        let terminating = s.pods.iter().filter(|p| deleting(p) && !finished(p));
        busy.extend(terminating.filter_map(index_of));
    }
    (0..s.completions.unwrap_or(0))
        .filter(|i| !busy.contains(i))
        .take(usize::try_from(count).unwrap_or(0))
        .collect()
}

/// The `Suspended` condition and the start time that go with suspending and resuming.
fn suspension(s: &Sync, status: &mut Value, time: &str) {
    if s.suspended {
        if ensure_condition(
            status,
            "Suspended",
            "True",
            "JobSuspended",
            "Job suspended",
            time,
        ) {
            if let Some(st) = status.as_object_mut() {
                st.remove("startTime");
            }
        }
    } else if ensure_condition(
        status,
        "Suspended",
        "False",
        "JobResumed",
        "Job resumed",
        time,
    ) {
        status["startTime"] = json!(time);
    }
}

/// `trackJobStatusAndRemoveFinalizers`, up to the interim status: the finished pods (and, when
/// the Job failed, all of them) to release and count, and the interim condition.
fn track(s: &Sync, finish: Option<&Finish>, status: &mut Value, out: &mut Plan, time: &str) {
    let mut uncounted_succeeded = s.uncounted_succeeded.clone();
    let mut uncounted_failed = s.uncounted_failed.clone();
    let mut new_indexes = BTreeSet::new();
    let job_deleting = deleting(s.job);
    for pod in s.pods.iter().filter(|p| tracked(p)) {
        let name = name_of(pod);
        if out.remove.contains(&name) {
            continue;
        }
        let failed = s.pod_failed(pod);
        let succeeded = phase(pod) == "Succeeded";
        if !(job_deleting || finish.is_some() || succeeded || failed) {
            continue;
        }
        out.release.push(name);
        let uid = meta_str(pod, "uid").to_string();
        if succeeded && !uncounted_failed.contains(&uid) {
            if s.indexed {
                let index =
                    index_of(pod).filter(|i| s.valid(pod) && !s.counted_indexes.contains(i));
                new_indexes.extend(index);
            } else if !uncounted_succeeded.contains(&uid) {
                uncounted_succeeded.push(uid);
            }
        } else if (failed || finish.is_some_and(|f| !f.success))
            && !uncounted_failed.contains(&uid)
            && s.valid(pod)
        {
            uncounted_failed.push(uid);
        }
    }
    if s.indexed {
        let mut all = s.counted_indexes.clone();
        all.extend(new_indexes);
        set_count(status, "succeeded", all.len() as i64);
        let text = format_indexes(&all);
        match status.as_object_mut() {
            Some(st) if text.is_empty() => {
                st.remove("completedIndexes");
            }
            _ => status["completedIndexes"] = json!(text),
        }
    }
    let mut uncounted = json!({});
    if !uncounted_succeeded.is_empty() {
        uncounted["succeeded"] = json!(uncounted_succeeded);
    }
    if !uncounted_failed.is_empty() {
        uncounted["failed"] = json!(uncounted_failed);
    }
    status["uncountedTerminatedPods"] = uncounted;
    if let Some(f) = finish.filter(|f| !f.interim_written) {
        let kind = if f.success {
            "SuccessCriteriaMet"
        } else {
            "FailureTarget"
        };
        push_condition(status, kind, &f.reason, &f.message, time);
    }
}

/// `cleanUncountedPodsWithoutFinalizers`: the uncounted pods whose finalizer is gone (all of
/// them once the plan's releases are done) move to the counters.
fn count_released(s: &Sync, status: &mut Value, out: &Plan) {
    let holding: Vec<String> = s
        .pods
        .iter()
        .filter(|p| tracked(p) && !out.release.contains(&name_of(p)))
        .map(|p| meta_str(p, "uid").to_string())
        .collect();
    for (key, counter) in [("succeeded", "succeeded"), ("failed", "failed")] {
        let uids = strings(&status["uncountedTerminatedPods"][key]);
        let (kept, counted): (Vec<String>, Vec<String>) =
            uids.into_iter().partition(|u| holding.contains(u));
        if counted.is_empty() {
            continue;
        }
        let total = status[counter]
            .as_i64()
            .unwrap_or(0)
            .saturating_add(counted.len() as i64);
        set_count(status, counter, total);
        let uncounted = &mut status["uncountedTerminatedPods"];
        if kept.is_empty() {
            if let Some(u) = uncounted.as_object_mut() {
                u.remove(key);
            }
        } else {
            uncounted[key] = json!(kept);
        }
    }
}

/// A Job condition as the controller writes it (`newCondition`).
fn new_condition(kind: &str, status: &str, reason: &str, message: &str, time: &str) -> Value {
    let mut c = json!({"type": kind, "status": status, "lastProbeTime": time,
        "lastTransitionTime": time});
    if !reason.is_empty() {
        c["reason"] = json!(reason);
    }
    if !message.is_empty() {
        c["message"] = json!(message);
    }
    c
}

fn push_condition(status: &mut Value, kind: &str, reason: &str, message: &str, time: &str) {
    if !status["conditions"].is_array() {
        status["conditions"] = json!([]);
    }
    if let Some(list) = status["conditions"].as_array_mut() {
        list.push(new_condition(kind, "True", reason, message, time));
    }
}

/// `ensureJobConditionStatus`: replaces a condition of the type whose status, reason or message
/// differ, or adds it unless it would be `False`; whether anything changed.
fn ensure_condition(
    status: &mut Value,
    kind: &str,
    value: &str,
    reason: &str,
    message: &str,
    time: &str,
) -> bool {
    let fresh = new_condition(kind, value, reason, message, time);
    if let Some(list) = status.get_mut("conditions").and_then(Value::as_array_mut) {
        if let Some(existing) = list.iter_mut().find(|c| c["type"] == kind) {
            let same = existing["status"] == value
                && existing["reason"].as_str().unwrap_or("") == reason
                && existing["message"].as_str().unwrap_or("") == message;
            if !same {
                *existing = fresh;
            }
            return !same;
        }
    }
    if value == "False" {
        return false;
    }
    if !status["conditions"].is_array() {
        status["conditions"] = json!([]);
    }
    if let Some(list) = status["conditions"].as_array_mut() {
        list.push(fresh);
    }
    true
}

fn condition<'a>(status: &'a Value, kind: &str) -> Option<&'a Value> {
    list(&status["conditions"]).find(|c| c["type"] == kind)
}

/// Whether a Job has finished (`Complete` or `Failed` true).
pub fn is_finished(job: &Value) -> bool {
    ["Complete", "Failed"]
        .iter()
        .any(|k| condition(&job["status"], k).is_some_and(|c| c["status"] == "True"))
}

/// Sets a counter, or drops it when zero (`omitempty`).
fn set_count(status: &mut Value, key: &str, n: i64) {
    if n == 0 {
        if let Some(st) = status.as_object_mut() {
            st.remove(key);
        }
    } else {
        status[key] = json!(n);
    }
}

/// The indexes of a `completedIndexes` text (`1,3-5`); what does not parse is skipped, and
/// past the most completions an Indexed Job may have (100,000) the rest is ignored (a client
/// writes this status: its size must not decide the memory spent).
pub fn parse_indexes(text: &str) -> BTreeSet<i64> {
    const MAX_INDEXES: usize = 100_000;
    let mut out = BTreeSet::new();
    for part in text.split(',').filter(|p| !p.is_empty()) {
        let (first, last) = part.split_once('-').unwrap_or((part, part));
        if let (Ok(a), Ok(b)) = (first.parse::<i64>(), last.parse::<i64>()) {
            let room = MAX_INDEXES.saturating_sub(out.len()) as i64;
            out.extend(a..=b.min(a.saturating_add(room)));
        }
        if out.len() >= MAX_INDEXES {
            break;
        }
    }
    out
}

/// Indexes as `completedIndexes` lists them: ascending, runs as `first-last`.
pub fn format_indexes(indexes: &BTreeSet<i64>) -> String {
    let mut runs: Vec<(i64, i64)> = Vec::new();
    for &i in indexes {
        match runs.last_mut() {
            Some((_, last)) if *last + 1 == i => *last = i,
            _ => runs.push((i, i)),
        }
    }
    runs.iter()
        .map(|(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

fn tracked(pod: &Value) -> bool {
    list(&pod["metadata"]["finalizers"]).any(|f| f == TRACKING_FINALIZER)
}

fn deleting(obj: &Value) -> bool {
    obj["metadata"].get("deletionTimestamp").is_some()
}

fn finished(pod: &Value) -> bool {
    matches!(phase(pod), "Succeeded" | "Failed")
}

fn phase(pod: &Value) -> &str {
    pod["status"]["phase"].as_str().unwrap_or("")
}

fn index_of(pod: &Value) -> Option<i64> {
    pod["metadata"]["annotations"][COMPLETION_INDEX]
        .as_str()?
        .parse()
        .ok()
        .filter(|i| *i >= 0)
}

fn name_of(pod: &Value) -> String {
    meta_str(pod, "name").to_string()
}

fn strings(v: &Value) -> Vec<String> {
    list(v)
        .filter_map(|s| s.as_str().map(String::from))
        .collect()
}

fn list(v: &Value) -> impl Iterator<Item = &Value> {
    v.as_array().into_iter().flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    const NOW: &str = "2026-03-01T12:00:00Z";

    fn now() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(NOW)
            .map(|t| t.with_timezone(&Utc))
            .unwrap()
    }

    fn job(spec: Value, status: Value) -> Value {
        let mut j = json!({"metadata": {"name": "pi", "namespace": "ns", "uid": "j"},
            "spec": {"parallelism": 1, "completions": 1, "backoffLimit": 6,
                "completionMode": "NonIndexed", "suspend": false,
                "podReplacementPolicy": "TerminatingOrFailed",
                "template": {"spec": {"restartPolicy": "Never",
                    "containers": [{"name": "c", "image": "perl"}]}}},
            "status": status});
        for (k, v) in spec.as_object().into_iter().flatten() {
            j["spec"][k] = v.clone();
        }
        j
    }

    /// A pod of the Job: `phase`, ready, tracked, and its completion index.
    fn pod(name: &str, phase: &str, index: Option<i64>) -> Value {
        let ready = phase == "Running";
        let mut p = json!({"metadata": {"name": name, "uid": format!("u-{name}"),
            "finalizers": [TRACKING_FINALIZER], "creationTimestamp": NOW},
            "spec": {"nodeName": "n"},
            "status": {"phase": phase, "conditions": [{"type": "Ready",
                "status": if ready {"True"} else {"False"}, "lastTransitionTime": NOW}]}});
        if let Some(i) = index {
            p["metadata"]["annotations"] = json!({COMPLETION_INDEX: i.to_string()});
        }
        p
    }

    fn types(status: &Value) -> Vec<String> {
        list(&status["conditions"])
            .map(|c| {
                format!(
                    "{}={}",
                    c["type"].as_str().unwrap(),
                    c["status"].as_str().unwrap()
                )
            })
            .collect()
    }

    #[test]
    fn a_new_job_creates_its_first_pods() {
        let p = plan(
            &job(json!({"parallelism": 2, "completions": 3}), json!({})),
            &[],
            now(),
        );
        assert_eq!(p.create, [None, None]);
        assert_eq!(
            p.interim,
            json!({"active": 2, "ready": 0, "terminating": 0, "startTime": NOW,
                "uncountedTerminatedPods": {}})
        );
        assert_eq!(p.after, p.interim);
        assert!(p.release.is_empty() && p.remove.is_empty());
    }

    #[test]
    fn a_succeeded_pod_is_counted_then_the_job_completes() {
        let status = json!({"active": 1, "ready": 1, "terminating": 0, "startTime": NOW,
            "uncountedTerminatedPods": {}});
        let p = plan(
            &job(json!({}), status),
            &[pod("a", "Succeeded", None)],
            now(),
        );
        assert!(p.create.is_empty());
        assert_eq!(p.release, ["a"]);
        assert_eq!(
            p.interim["uncountedTerminatedPods"],
            json!({"succeeded": ["u-a"]})
        );
        assert_eq!(types(&p.interim), ["SuccessCriteriaMet=True"]);
        assert_eq!(p.interim["conditions"][0]["reason"], "CompletionsReached");
        assert!(p.interim.get("active").is_none());
        assert_eq!(p.after["succeeded"], 1);
        assert_eq!(p.after["uncountedTerminatedPods"], json!({}));
        assert_eq!(
            types(&p.after),
            ["SuccessCriteriaMet=True", "Complete=True"]
        );
        assert_eq!(
            p.after["conditions"][1]["message"],
            "Reached expected number of succeeded pods"
        );
        assert_eq!(p.after["completionTime"], NOW);
    }

    #[test]
    fn too_many_failures_fail_the_job_once_its_pods_are_gone() {
        let status = json!({"failed": 2, "active": 1, "startTime": NOW,
            "uncountedTerminatedPods": {}});
        let pods = [pod("f", "Failed", None), pod("r", "Running", None)];
        let p = plan(
            &job(json!({"backoffLimit": 2, "parallelism": 2}), status),
            &pods,
            now(),
        );
        assert_eq!(p.terminate, ["r"]);
        assert!(p.create.is_empty());
        assert_eq!(p.release, ["f", "r"]);
        assert_eq!(types(&p.interim), ["FailureTarget=True"]);
        assert_eq!(p.interim["conditions"][0]["reason"], "BackoffLimitExceeded");
        assert_eq!(
            p.interim["uncountedTerminatedPods"],
            json!({"failed": ["u-f", "u-r"]})
        );
        assert_eq!(p.interim["terminating"], 1);
        // Counted, but a pod is still terminating: no Failed yet.
        assert_eq!(p.after["failed"], 4);
        assert_eq!(types(&p.after), ["FailureTarget=True"]);

        let status = p.after.clone();
        let p = plan(&job(json!({"backoffLimit": 2}), status), &[], now());
        assert_eq!(types(&p.after), ["FailureTarget=True", "Failed=True"]);
        assert_eq!(
            p.after["conditions"][1]["message"],
            "Job has reached the specified backoff limit"
        );
        assert!(p.after.get("completionTime").is_none());
    }

    #[test]
    fn a_failed_pod_below_the_limit_is_replaced() {
        let status = json!({"active": 1, "startTime": NOW, "uncountedTerminatedPods": {}});
        let p = plan(&job(json!({}), status), &[pod("f", "Failed", None)], now());
        assert_eq!(p.create, [None]);
        assert_eq!(p.release, ["f"]);
        assert_eq!(
            p.interim["uncountedTerminatedPods"],
            json!({"failed": ["u-f"]})
        );
        assert_eq!(p.after["failed"], 1);
        assert_eq!(p.after["active"], 1);
        assert!(types(&p.after).is_empty());
    }

    #[test]
    fn suspending_removes_the_pods_and_clears_the_start_time() {
        let status = json!({"active": 1, "ready": 1, "startTime": NOW,
            "uncountedTerminatedPods": {}});
        let pods = [pod("r", "Running", None)];
        let p = plan(&job(json!({"suspend": true}), status), &pods, now());
        assert_eq!(p.remove, ["r"]);
        assert!(p.release.is_empty());
        assert_eq!(types(&p.after), ["Suspended=True"]);
        assert_eq!(p.after["conditions"][0]["reason"], "JobSuspended");
        assert!(p.after.get("startTime").is_none());
        assert_eq!(
            (p.after["ready"].clone(), p.after["terminating"].clone()),
            (json!(0), json!(1))
        );

        let p = plan(&job(json!({}), p.after.clone()), &[], now());
        assert_eq!(types(&p.after), ["Suspended=False"]);
        assert_eq!(p.after["conditions"][0]["reason"], "JobResumed");
        assert_eq!(p.after["startTime"], NOW);
        assert_eq!(p.create, [None]);
    }

    #[test]
    fn indexed_jobs_fill_the_lowest_pending_indexes() {
        let spec = json!({"completionMode": "Indexed", "completions": 4, "parallelism": 2});
        let status = json!({"completedIndexes": "0", "succeeded": 1, "startTime": NOW,
            "uncountedTerminatedPods": {}});
        let pods = [pod("b", "Succeeded", Some(1)), pod("c", "Running", Some(2))];
        let p = plan(&job(spec, status), &pods, now());
        assert_eq!(p.create, [Some(3)]);
        assert_eq!(p.release, ["b"]);
        assert_eq!(p.interim["completedIndexes"], "0-1");
        assert_eq!(p.interim["succeeded"], 2);
        assert_eq!(p.interim["active"], 2);
    }

    #[test]
    fn the_active_deadline_fails_the_job_or_is_awaited() {
        let status = json!({"active": 1, "startTime": "2026-03-01T11:59:00Z",
            "uncountedTerminatedPods": {}});
        let pods = [pod("r", "Running", None)];
        let p = plan(
            &job(json!({"activeDeadlineSeconds": 30}), status.clone()),
            &pods,
            now(),
        );
        assert_eq!(p.terminate, ["r"]);
        assert_eq!(p.interim["conditions"][0]["reason"], "DeadlineExceeded");
        let p = plan(
            &job(json!({"activeDeadlineSeconds": 90}), status),
            &pods,
            now(),
        );
        assert!(p.terminate.is_empty());
        assert_eq!(p.recheck, Some(Duration::from_millis(30_001)));
    }

    #[rstest]
    #[case("", &[])]
    #[case("0-2,4,6-7", &[0, 1, 2, 4, 6, 7])]
    #[case("3", &[3])]
    fn index_lists(#[case] text: &str, #[case] indexes: &[i64]) {
        let set: BTreeSet<i64> = indexes.iter().copied().collect();
        assert_eq!(parse_indexes(text), set);
        assert_eq!(format_indexes(&set), text);
    }

    #[test]
    fn indexed_pod_templates() {
        let j = job(
            json!({"completionMode": "Indexed", "completions": 2}),
            json!({}),
        );
        let (t, prefix) = pod_template(&j, Some(1));
        assert_eq!(prefix, "pi-1-");
        assert_eq!(t["metadata"]["finalizers"], json!([TRACKING_FINALIZER]));
        assert_eq!(t["metadata"]["labels"][COMPLETION_INDEX], "1");
        assert_eq!(t["metadata"]["annotations"][COMPLETION_INDEX], "1");
        assert_eq!(t["spec"]["hostname"], "pi-1");
        assert_eq!(
            t["spec"]["containers"][0]["env"][0]["name"],
            "JOB_COMPLETION_INDEX"
        );
        let (_, prefix) = pod_template(&j, None);
        assert_eq!(prefix, "pi-");
        assert_eq!(generate_name_with_index(&"x".repeat(60), 12).len(), 58);
    }
}
