//! The StatefulSet controller (apps/v1): pods `<set>-<ordinal>` for the ordinals
//! `spec.ordinals.start` onwards, each labelled `statefulset.kubernetes.io/pod-name`,
//! `apps.kubernetes.io/pod-index` and `controller-revision-hash` (its revision's name), with
//! `hostname` its name and `subdomain` the set's `serviceName`, and a claim
//! `<template>-<set>-<ordinal>` per `volumeClaimTemplates` entry, created before the pod and
//! kept when the pod or the set goes (owned by the set when `whenDeleted` is `Delete`). Under
//! `OrderedReady` the next pod is created once every one before it is Running, Ready and
//! available (`minReadySeconds`), and scaling down removes the highest ordinal first, one at a
//! time; under `Parallel` all are created or removed at once. Finished pods are replaced. Each
//! template is recorded in a ControllerRevision ([`super::history`]): `RollingUpdate` deletes
//! the highest-ordinal pod not at the update revision (down to `partition`) once the ones above
//! it are available again, and the replacement comes from the new template; `OnDelete` waits
//! for pods to be deleted. The status carries `replicas`, `readyReplicas`, `currentReplicas`,
//! `updatedReplicas`, `availableReplicas`, `currentRevision`, `updateRevision`,
//! `observedGeneration` and `collisionCount`, as `kubectl rollout status` reads them; old
//! revisions beyond `revisionHistoryLimit` are deleted.
//!
//! Not simulated: `maxUnavailable` (its feature is off in 1.36), `whenScaled: Delete`, claims
//! updated when the retention policy changes, adoption of orphan pods and revisions, pods whose
//! identity or storage drifted (they are not repaired), and events.

use std::collections::HashSet;
use std::time::Duration;

use serde_json::{json, Value};

use super::history::{self, POD_REVISION_LABEL};
use super::replicaset::{available, is_ready};
use super::{
    controlled_by, create_pod, delete, owner_reference, pods, resource, write_status, PodName, Sim,
    Workload,
};
use crate::context::Context;
use crate::controllers::{later_once, Work};
use crate::registry::object_meta::meta_str;
use crate::registry::store as rest;
use crate::state::State;
use crate::store::{GroupResource, ObjectKey};

/// The label with a pod's name.
pub const POD_NAME_LABEL: &str = "statefulset.kubernetes.io/pod-name";
/// The label with a pod's ordinal.
pub const POD_INDEX_LABEL: &str = "apps.kubernetes.io/pod-index";
const CONTROLLER: &str = "statefulset-controller";

fn statefulsets() -> GroupResource {
    GroupResource::new("apps", "statefulsets")
}

fn claims() -> GroupResource {
    GroupResource::new("", "persistentvolumeclaims")
}

/// Reconciles one StatefulSet (`syncStatefulSet`).
pub async fn reconcile(state: &State, ctx: &Context, key: &ObjectKey) {
    let snapshot = state.store.snapshot();
    let Some(stored) = snapshot.get(&statefulsets(), key) else {
        return;
    };
    let set = stored.value().clone();
    let ctx = crate::controllers::kcm(ctx, CONTROLLER);
    let uid = meta_str(&set, "uid");
    let owned: Vec<Value> = snapshot
        .list(&pods(), Some(&key.namespace))
        .filter(|(_, p)| controlled_by(&p.value(), uid) && ordinal(&set, &p.value()).is_some())
        .map(|(_, p)| p.value().clone())
        .collect();
    let revisions = history::owned(&snapshot, &key.namespace, uid);
    let Some((current, update, collisions)) = revisions_of(state, &ctx, &set, &revisions).await
    else {
        return;
    };
    let plan = plan(&set, &owned, &current, &update, collisions);
    for action in &plan.actions {
        match action {
            Action::Create { ordinal, revision } => {
                let template = if *revision == update.name {
                    &update.template
                } else {
                    &current.template
                };
                create_replica(state, &ctx, &set, template, *ordinal, revision).await;
            }
            Action::Delete(name) => {
                delete(state, &ctx, &pods(), &ObjectKey::new(&key.namespace, name)).await;
            }
        }
    }
    let status = plan.status.clone();
    write_status(state, &ctx, &statefulsets(), key, &|s: &mut Value| {
        apply_status(&mut s["status"], &status)
    })
    .await;
    truncate_history(state, &ctx, &set, &owned, &revisions, &[&current, &update]).await;
    if let Some(delay) = plan.recheck {
        let work = Work::Simulated(Sim::Workload(Workload::StatefulSet, key.clone()));
        later_once(state, delay, work);
    }
}

/// One revision of a set: its name and the template it records.
#[derive(Debug, Clone, PartialEq)]
pub struct Revision {
    /// The ControllerRevision's name.
    pub name: String,
    /// The pod template it records.
    pub template: Value,
}

impl Revision {
    fn of(revision: &Value) -> Revision {
        Revision {
            name: meta_str(revision, "name").to_string(),
            template: history::template_of(revision),
        }
    }
}

/// `getStatefulSetRevisions`: the current revision (named by `status.currentRevision`, else
/// the update one), the update revision (the set's template: the last revision when it records
/// it, an older one renumbered, or a new one), and the collision count.
async fn revisions_of(
    state: &State,
    ctx: &Context,
    set: &Value,
    revisions: &[Value],
) -> Option<(Revision, Revision, i64)> {
    let template = &set["spec"]["template"];
    let data = history::data_of(template);
    let next = revisions
        .last()
        .map_or(0, history::number)
        .saturating_add(1);
    let mut collisions = set["status"]["collisionCount"].as_i64().unwrap_or(0);
    let equal = revisions.iter().rev().find(|r| r["data"] == data);
    let update = match equal {
        Some(r) if revisions.last() == Some(r) => r.clone(),
        Some(r) => history::renumber(state, ctx, r, next).await,
        None => loop {
            let fresh = history::new_revision(set, template, next, collisions, history::HASH_LABEL);
            let stored = history::create(state, ctx, fresh).await?;
            if stored["data"] == data {
                break stored;
            }
            // Another template has this name: the next collision count gives another.
            collisions += 1;
            if collisions > 100 {
                return None;
            }
        },
    };
    let current_name = set["status"]["currentRevision"].as_str().unwrap_or("");
    let current = revisions
        .iter()
        .find(|r| meta_str(r, "name") == current_name)
        .unwrap_or(&update);
    Some((Revision::of(current), Revision::of(&update), collisions))
}

/// Creates a replica's claims (those missing), then the pod, unless a claim is being deleted.
async fn create_replica(
    state: &State,
    ctx: &Context,
    set: &Value,
    template: &Value,
    ordinal: i64,
    revision: &str,
) {
    let Some(claim_res) = resource(state, &claims()) else {
        return;
    };
    let ns = meta_str(set, "namespace");
    for claim in claims_of(set, ordinal) {
        let key = ObjectKey::new(ns, meta_str(&claim, "name"));
        match state.store.snapshot().get(&claims(), &key) {
            Some(existing) if existing.is_deleting() => return,
            Some(_) => continue,
            None => {}
        }
        if let Err(e) = rest::create(state, ctx, &claim_res, ns, claim).await {
            if e.code != 409 {
                tracing::warn!(error = %e, claim = %key.name, "creating a stateful claim");
                return;
            }
        }
    }
    let pod = replica_template(set, template, ordinal, revision);
    let name = pod_name(set, ordinal);
    create_pod(state, ctx, set, &pod, PodName::Exact(&name), &[]).await;
}

/// The claims of the pod at `ordinal` (`getPersistentVolumeClaims`): each template named
/// `<template>-<set>-<ordinal>`, labelled with the set's selector too.
pub fn claims_of(set: &Value, ordinal: i64) -> Vec<Value> {
    let selector = &set["spec"]["selector"]["matchLabels"];
    let delete_with_set =
        set["spec"]["persistentVolumeClaimRetentionPolicy"]["whenDeleted"] == "Delete";
    list(&set["spec"]["volumeClaimTemplates"])
        .map(|template| {
            let mut claim = template.clone();
            let name = claim_name(set, template, ordinal);
            claim["apiVersion"] = json!("v1");
            claim["kind"] = json!("PersistentVolumeClaim");
            if let Some(st) = claim.as_object_mut() {
                st.remove("status");
            }
            let meta = &mut claim["metadata"];
            meta["name"] = json!(name);
            meta["namespace"] = set["metadata"]["namespace"].clone();
            if !meta["labels"].is_object() {
                meta["labels"] = json!({});
            }
            for (k, v) in selector.as_object().into_iter().flatten() {
                meta["labels"][k] = v.clone();
            }
            if delete_with_set {
                meta["ownerReferences"] = json!([owner_reference(set)]);
            }
            claim
        })
        .collect()
}

fn claim_name(set: &Value, template: &Value, ordinal: i64) -> String {
    format!(
        "{}-{}-{ordinal}",
        meta_str(template, "name"),
        meta_str(set, "name")
    )
}

/// The template of the pod at `ordinal` (`newStatefulSetPod`): its identity labels and
/// revision, hostname and subdomain, and the claims as volumes ahead of the template's own.
pub fn replica_template(set: &Value, template: &Value, ordinal: i64, revision: &str) -> Value {
    let name = pod_name(set, ordinal);
    let mut pod = template.clone();
    if !pod["metadata"]["labels"].is_object() {
        pod["metadata"]["labels"] = json!({});
    }
    let labels = &mut pod["metadata"]["labels"];
    labels[POD_NAME_LABEL] = json!(name);
    labels[POD_INDEX_LABEL] = json!(ordinal.to_string());
    labels[POD_REVISION_LABEL] = json!(revision);
    pod["spec"]["hostname"] = json!(name);
    if let Some(service) = set["spec"]["serviceName"]
        .as_str()
        .filter(|s| !s.is_empty())
    {
        pod["spec"]["subdomain"] = json!(service);
    }
    let claim_templates: Vec<&Value> = list(&set["spec"]["volumeClaimTemplates"]).collect();
    if !claim_templates.is_empty() {
        let mut volumes: Vec<Value> = claim_templates
            .iter()
            .map(|t| {
                json!({"name": meta_str(t, "name"), "persistentVolumeClaim": {
                    "claimName": claim_name(set, t, ordinal)}})
            })
            .collect();
        let claimed: HashSet<&str> = claim_templates
            .iter()
            .map(|t| meta_str(t, "name"))
            .collect();
        volumes.extend(
            list(&pod["spec"]["volumes"])
                .filter(|v| !claimed.contains(v["name"].as_str().unwrap_or("")))
                .cloned(),
        );
        pod["spec"]["volumes"] = json!(volumes);
    }
    pod
}

/// `<set>-<ordinal>`.
fn pod_name(set: &Value, ordinal: i64) -> String {
    format!("{}-{ordinal}", meta_str(set, "name"))
}

/// A pod's ordinal when its name is `<set>-<ordinal>` (`getParentNameAndOrdinal`).
pub fn ordinal(set: &Value, pod: &Value) -> Option<i64> {
    let name = meta_str(pod, "name");
    let (parent, number) = name.rsplit_once('-')?;
    let digits = !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit());
    (digits && parent == meta_str(set, "name"))
        .then(|| number.parse().ok())
        .flatten()
}

/// What a sync does to the pods.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Create the pod at this ordinal from this revision.
    Create {
        /// The pod's ordinal.
        ordinal: i64,
        /// The revision's name.
        revision: String,
    },
    /// Delete the pod of this name.
    Delete(String),
}

/// One sync of a StatefulSet.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// The pods to create and delete, in order.
    pub actions: Vec<Action>,
    /// The status to write (`counts` as [`apply_status`] writes them).
    pub status: Value,
    /// When to look again (a pod becoming available after `minReadySeconds`).
    pub recheck: Option<Duration>,
}

/// A sync's view of a set's pods.
struct Replicas<'a> {
    set: &'a Value,
    /// The pods of the ordinals in range, by position (`None` for those to create).
    slots: Vec<Option<&'a Value>>,
    /// The pods of ordinals out of range, highest first.
    condemned: Vec<&'a Value>,
    first_unavailable: Option<&'a Value>,
    min_ready: i64,
    recheck: Option<Duration>,
}

impl<'a> Replicas<'a> {
    fn new(set: &'a Value, pods: &'a [Value]) -> Replicas<'a> {
        let start = start_ordinal(set);
        let count = usize::try_from(spec_replicas(set).min(super::MAX_REPLICAS)).unwrap_or(0);
        let mut slots: Vec<Option<&Value>> = vec![None; count];
        let mut condemned = Vec::new();
        for pod in pods {
            let Some(ord) = ordinal(set, pod) else {
                continue;
            };
            match usize::try_from(ord - start).ok().filter(|i| *i < count) {
                Some(i) => slots[i] = Some(pod),
                None => condemned.push(pod),
            }
        }
        condemned.sort_by_key(|p| std::cmp::Reverse(ordinal(set, p)));
        let mut r = Replicas {
            set,
            slots,
            condemned,
            first_unavailable: None,
            min_ready: set["spec"]["minReadySeconds"].as_i64().unwrap_or(0),
            recheck: None,
        };
        let in_range = r.slots.iter().flatten().copied();
        let out_of_range = r.condemned.iter().rev().copied();
        r.first_unavailable = in_range
            .chain(out_of_range)
            .find(|p| !r.is_available(p) || deleting(p));
        r
    }

    /// `isRunningAndAvailable`, noting when a pod ready for too short a time will be.
    fn is_available(&self, pod: &Value) -> bool {
        if !running_and_ready(pod) {
            return false;
        }
        available(pod, self.min_ready).0
    }

    fn note_recheck(&mut self, pod: &Value) {
        if let (false, Some(left)) = available(pod, self.min_ready) {
            self.recheck = Some(self.recheck.map_or(left, |r| r.min(left)));
        }
    }
}

/// One sync of a StatefulSet (`updateStatefulSet`), from its pods and revisions.
pub fn plan(
    set: &Value,
    pods: &[Value],
    current: &Revision,
    update: &Revision,
    collisions: i64,
) -> Plan {
    let mut r = Replicas::new(set, pods);
    let mut actions = Vec::new();
    let deleting_set = deleting(set);
    let monotonic = set["spec"]["podManagementPolicy"] != "Parallel";
    let blocked = deleting_set
        || process_replicas(&mut r, monotonic, current, update, &mut actions)
        || process_condemned(&r, monotonic, &mut actions);
    let mut status = counts(set, pods, current, update, collisions, r.min_ready);
    if !blocked && set["spec"]["updateStrategy"]["type"] != "OnDelete" {
        if let Some(name) = roll(&r, update) {
            actions.push(Action::Delete(name));
            status["currentReplicas"] = json!(status["currentReplicas"].as_i64().unwrap_or(0) - 1);
        }
    }
    complete_rolling_update(set, &mut status);
    Plan {
        actions,
        status,
        recheck: r.recheck,
    }
}

/// `processReplica` for each ordinal in range; whether progress stopped there.
fn process_replicas(
    r: &mut Replicas,
    monotonic: bool,
    current: &Revision,
    update: &Revision,
    actions: &mut Vec<Action>,
) -> bool {
    let start = start_ordinal(r.set);
    let partition = r.set["spec"]["updateStrategy"]["rollingUpdate"]["partition"].as_i64();
    let rolling = r.set["spec"]["updateStrategy"]["type"] != "OnDelete";
    for i in 0..r.slots.len() {
        let ord = start + i as i64;
        let Some(pod) = r.slots[i] else {
            let at_current = rolling && partition.is_some_and(|p| ord < start + p);
            let revision = if at_current { current } else { update };
            actions.push(Action::Create {
                ordinal: ord,
                revision: revision.name.clone(),
            });
            // At most a burst per sync; the new pods' commits bring the controller back.
            if monotonic || actions.len() >= super::replicaset::BURST_REPLICAS {
                return true;
            }
            continue;
        };
        if matches!(phase(pod), "Succeeded" | "Failed") {
            // A finished pod is replaced once it is gone.
            if !deleting(pod) {
                actions.push(Action::Delete(meta_str(pod, "name").to_string()));
            }
            if monotonic {
                return true;
            }
            continue;
        }
        if monotonic && (deleting(pod) || !r.is_available(pod)) {
            r.note_recheck(pod);
            return true;
        }
        r.note_recheck(pod);
    }
    false
}

/// `processCondemned`, highest ordinal first; whether progress stopped there.
fn process_condemned(r: &Replicas, monotonic: bool, actions: &mut Vec<Action>) -> bool {
    for pod in &r.condemned {
        if deleting(pod) {
            if monotonic {
                return true;
            }
            continue;
        }
        let first = r.first_unavailable.is_some_and(|f| std::ptr::eq(f, *pod));
        if monotonic && !r.is_available(pod) && !first {
            return true;
        }
        actions.push(Action::Delete(meta_str(pod, "name").to_string()));
        if monotonic {
            return true;
        }
    }
    false
}

/// `RollingUpdate`: the highest-ordinal pod (down to the partition) not at the update
/// revision goes, unless a pod above it is unavailable.
fn roll(r: &Replicas, update: &Revision) -> Option<String> {
    let partition = r.set["spec"]["updateStrategy"]["rollingUpdate"]["partition"]
        .as_i64()
        .unwrap_or(0);
    let lowest = usize::try_from(partition).unwrap_or(0);
    for i in (lowest..r.slots.len()).rev() {
        let pod = r.slots[i]?;
        if revision_of(pod) != update.name && !deleting(pod) {
            return Some(meta_str(pod, "name").to_string());
        }
        if !r.is_available(pod) || deleting(pod) {
            return None;
        }
    }
    None
}

/// `computeReplicaStatus` over the set's pods, with the revisions and generation.
fn counts(
    set: &Value,
    pods: &[Value],
    current: &Revision,
    update: &Revision,
    collisions: i64,
    min_ready: i64,
) -> Value {
    let created: Vec<&Value> = pods.iter().filter(|p| !phase(p).is_empty()).collect();
    let ready: Vec<&&Value> = created.iter().filter(|p| running_and_ready(p)).collect();
    let count_at = |name: &str| {
        created
            .iter()
            .filter(|p| !deleting(p) && revision_of(p) == name)
            .count()
    };
    json!({
        "observedGeneration": set["metadata"]["generation"].as_i64().unwrap_or(1),
        "replicas": created.len(),
        "readyReplicas": ready.len(),
        "availableReplicas": ready.iter().filter(|p| available(p, min_ready).0).count(),
        "currentReplicas": count_at(&current.name),
        "updatedReplicas": count_at(&update.name),
        "currentRevision": current.name,
        "updateRevision": update.name,
        "collisionCount": collisions,
    })
}

/// `completeRollingUpdate`: once every replica is updated and ready, the update revision is
/// the current one.
fn complete_rolling_update(set: &Value, status: &mut Value) {
    let replicas = spec_replicas(set);
    let all = |k: &str| status[k].as_i64() == Some(replicas);
    let rolling = set["spec"]["updateStrategy"]["type"] != "OnDelete";
    if rolling && all("updatedReplicas") && all("readyReplicas") && all("replicas") {
        status["currentReplicas"] = status["updatedReplicas"].clone();
        status["currentRevision"] = status["updateRevision"].clone();
    }
}

/// Writes computed counts into a stored status, leaving out the zeros the API omits;
/// whether anything changed.
pub fn apply_status(status: &mut Value, computed: &Value) -> bool {
    if !status.is_object() {
        *status = json!({});
    }
    const KEPT_AT_ZERO: [&str; 3] = ["replicas", "availableReplicas", "collisionCount"];
    let mut changed = false;
    for (k, v) in computed.as_object().into_iter().flatten() {
        let omitted = (v.as_i64() == Some(0) && !KEPT_AT_ZERO.contains(&k.as_str()))
            || v.as_str() == Some("");
        let old = status.get(k).cloned();
        if omitted {
            if old.is_some() {
                if let Some(o) = status.as_object_mut() {
                    o.remove(k);
                }
                changed = true;
            }
        } else if old.as_ref() != Some(v) {
            status[k] = v.clone();
            changed = true;
        }
    }
    changed
}

/// `truncateHistory`: revisions no pod uses, beyond `revisionHistoryLimit`, oldest first.
async fn truncate_history(
    state: &State,
    ctx: &Context,
    set: &Value,
    pods: &[Value],
    revisions: &[Value],
    live: &[&Revision],
) {
    let limit = set["spec"]["revisionHistoryLimit"].as_i64().unwrap_or(10);
    let mut used: HashSet<&str> = live.iter().map(|r| r.name.as_str()).collect();
    used.extend(pods.iter().map(revision_of));
    let idle: Vec<Value> = revisions
        .iter()
        .filter(|r| !used.contains(meta_str(r, "name")))
        .cloned()
        .collect();
    let excess = idle
        .len()
        .saturating_sub(usize::try_from(limit).unwrap_or(0));
    if limit >= 0 && excess > 0 {
        history::delete_all(state, ctx, &idle[..excess]).await;
    }
}

fn start_ordinal(set: &Value) -> i64 {
    set["spec"]["ordinals"]["start"].as_i64().unwrap_or(0)
}

fn spec_replicas(set: &Value) -> i64 {
    set["spec"]["replicas"].as_i64().unwrap_or(1).max(0)
}

fn revision_of(pod: &Value) -> &str {
    pod["metadata"]["labels"][POD_REVISION_LABEL]
        .as_str()
        .unwrap_or("")
}

fn running_and_ready(pod: &Value) -> bool {
    phase(pod) == "Running" && is_ready(pod)
}

fn phase(pod: &Value) -> &str {
    pod["status"]["phase"].as_str().unwrap_or("")
}

fn deleting(obj: &Value) -> bool {
    obj["metadata"].get("deletionTimestamp").is_some()
}

fn list(v: &Value) -> impl Iterator<Item = &Value> {
    v.as_array().into_iter().flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn set(replicas: i64, policy: &str, partition: i64) -> Value {
        json!({"metadata": {"name": "web", "namespace": "ns", "uid": "s", "generation": 2},
            "spec": {"replicas": replicas, "podManagementPolicy": policy, "serviceName": "nginx",
                "selector": {"matchLabels": {"app": "web"}},
                "updateStrategy": {"type": "RollingUpdate",
                    "rollingUpdate": {"partition": partition}},
                "template": {"metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "c", "image": "nginx:2"}]}},
                "volumeClaimTemplates": [{"metadata": {"name": "www", "labels": {"tier": "db"}},
                    "spec": {"accessModes": ["ReadWriteOnce"],
                        "resources": {"requests": {"storage": "1Gi"}}},
                    "status": {"phase": "Pending"}}]}})
    }

    fn revision(name: &str) -> Revision {
        Revision {
            name: name.into(),
            template: json!({}),
        }
    }

    /// A pod at an ordinal: `state` is `pending`, `ready` or `gone` (being deleted).
    fn pod(ordinal: i64, state: &str, revision: &str) -> Value {
        let mut p = json!({"metadata": {"name": format!("web-{ordinal}"),
            "labels": {POD_REVISION_LABEL: revision}},
            "status": {"phase": if state == "pending" {"Pending"} else {"Running"},
                "conditions": [{"type": "Ready", "status": if state == "ready" {"True"} else {"False"},
                    "lastTransitionTime": "2026-01-01T00:00:00Z"}]}});
        if state == "gone" {
            p["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
        }
        p
    }

    fn creates(ordinals: &[i64], rev: &str) -> Vec<Action> {
        ordinals
            .iter()
            .map(|o| Action::Create {
                ordinal: *o,
                revision: rev.into(),
            })
            .collect()
    }

    fn deletes(names: &[&str]) -> Vec<Action> {
        names
            .iter()
            .map(|n| Action::Delete(n.to_string()))
            .collect()
    }

    #[rstest]
    // OrderedReady: one at a time, each once the one before is ready.
    #[case(3, "OrderedReady", &[], creates(&[0], "r1"))]
    #[case(3, "OrderedReady", &[(0, "pending")], vec![])]
    #[case(3, "OrderedReady", &[(0, "ready")], creates(&[1], "r1"))]
    // Parallel: all at once.
    #[case(3, "Parallel", &[(0, "pending")], creates(&[1, 2], "r1"))]
    // Scaling down: the highest ordinal first, one at a time when ordered.
    #[case(1, "OrderedReady", &[(0, "ready"), (1, "ready"), (2, "ready")], deletes(&["web-2"]))]
    #[case(1, "OrderedReady", &[(0, "ready"), (1, "ready"), (2, "gone")], vec![])]
    #[case(1, "Parallel", &[(0, "ready"), (1, "ready"), (2, "ready")], deletes(&["web-2", "web-1"]))]
    fn ordering(
        #[case] replicas: i64,
        #[case] policy: &str,
        #[case] existing: &[(i64, &str)],
        #[case] expected: Vec<Action>,
    ) {
        let pods: Vec<Value> = existing.iter().map(|(o, s)| pod(*o, s, "r1")).collect();
        let r1 = revision("r1");
        let p = plan(&set(replicas, policy, 0), &pods, &r1, &r1, 0);
        assert_eq!(p.actions, expected);
    }

    #[test]
    fn rolling_updates_go_from_the_highest_ordinal_down_to_the_partition() {
        let (old, new) = (revision("r1"), revision("r2"));
        let all_old = [
            pod(0, "ready", "r1"),
            pod(1, "ready", "r1"),
            pod(2, "ready", "r1"),
        ];
        let p = plan(&set(3, "OrderedReady", 0), &all_old, &old, &new, 0);
        assert_eq!(p.actions, deletes(&["web-2"]));
        assert_eq!(p.status["currentReplicas"], 2);
        assert_eq!(p.status["updatedReplicas"], 0);
        // Its replacement is not ready yet: nothing else goes.
        let replacing = [
            pod(0, "ready", "r1"),
            pod(1, "ready", "r1"),
            pod(2, "pending", "r2"),
        ];
        assert!(plan(&set(3, "OrderedReady", 0), &replacing, &old, &new, 0)
            .actions
            .is_empty());
        let next = [
            pod(0, "ready", "r1"),
            pod(1, "ready", "r1"),
            pod(2, "ready", "r2"),
        ];
        let p = plan(&set(3, "OrderedReady", 0), &next, &old, &new, 0);
        assert_eq!(p.actions, deletes(&["web-1"]));
        // With a partition of 2 only ordinal 2 is updated.
        assert!(plan(&set(3, "OrderedReady", 2), &next, &old, &new, 0)
            .actions
            .is_empty());
        // A missing pod below the partition comes back at the current revision.
        let p = plan(&set(3, "OrderedReady", 2), &next[1..], &old, &new, 0);
        assert_eq!(p.actions, creates(&[0], "r1"));
    }

    #[test]
    fn a_finished_update_makes_the_update_revision_current() {
        let (old, new) = (revision("r1"), revision("r2"));
        let done = [pod(0, "ready", "r2"), pod(1, "ready", "r2")];
        let p = plan(&set(2, "OrderedReady", 0), &done, &old, &new, 0);
        assert!(p.actions.is_empty());
        assert_eq!(
            p.status,
            json!({"observedGeneration": 2, "replicas": 2, "readyReplicas": 2,
                "availableReplicas": 2, "currentReplicas": 2, "updatedReplicas": 2,
                "currentRevision": "r2", "updateRevision": "r2", "collisionCount": 0})
        );
        let mut stored = json!({"replicas": 0, "availableReplicas": 0});
        assert!(apply_status(&mut stored, &p.status));
        assert!(!apply_status(&mut stored, &p.status));
    }

    #[test]
    fn replicas_and_their_claims() {
        let s = set(3, "OrderedReady", 0);
        let t = replica_template(&s, &s["spec"]["template"], 1, "web-abc");
        let labels = &t["metadata"]["labels"];
        assert_eq!(labels[POD_NAME_LABEL], "web-1");
        assert_eq!(labels[POD_INDEX_LABEL], "1");
        assert_eq!(labels[POD_REVISION_LABEL], "web-abc");
        assert_eq!(
            (
                t["spec"]["hostname"].clone(),
                t["spec"]["subdomain"].clone()
            ),
            (json!("web-1"), json!("nginx"))
        );
        assert_eq!(
            t["spec"]["volumes"],
            json!([{"name": "www", "persistentVolumeClaim": {"claimName": "www-web-1"}}])
        );
        let claims = claims_of(&s, 1);
        assert_eq!(claims[0]["metadata"]["name"], "www-web-1");
        assert_eq!(
            claims[0]["metadata"]["labels"],
            json!({"tier": "db", "app": "web"})
        );
        assert!(claims[0].get("status").is_none());
        assert!(claims[0]["metadata"].get("ownerReferences").is_none());
        assert_eq!(
            ordinal(&s, &json!({"metadata": {"name": "web-12"}})),
            Some(12)
        );
        assert_eq!(ordinal(&s, &json!({"metadata": {"name": "webby-1"}})), None);
    }
}
