//! The Deployment controller: one ReplicaSet per pod template (`<deployment>-<pod-template-hash>`,
//! its revision in `deployment.kubernetes.io/revision`), rolled out by `RollingUpdate` (within
//! `maxSurge` and `maxUnavailable`) or `Recreate` (old pods gone before new ones start), scaled,
//! held by `paused`, old ReplicaSets beyond `revisionHistoryLimit` deleted, and the status
//! `kubectl rollout status` waits for: the replica counts, `observedGeneration` and the
//! `Available` and `Progressing` conditions with the controller's reasons and messages.
//! `kubectl rollout undo` works as on a real cluster: it copies an old ReplicaSet's template
//! back, and that ReplicaSet becomes the new one with the next revision.
//!
//! Not simulated: `progressDeadlineSeconds` (a rollout never times out), proportional scaling
//! of several ReplicaSets mid-rollout, adoption of ReplicaSets without an owner reference, and
//! hash collisions (`collisionCount` stays unset).

use serde_json::{json, Value};

use super::replicaset::merge_counts;
use super::{controlled_by, now, owner_reference, resource, write_object, write_status};
use crate::context::Context;
use crate::registry::object_meta::meta_str;
use crate::registry::store as rest;
use crate::state::State;
use crate::store::{GroupResource, ObjectKey};

/// The label (and selector) telling a Deployment's ReplicaSets and pods apart.
pub const POD_TEMPLATE_HASH: &str = "pod-template-hash";
/// A ReplicaSet's (and its Deployment's) revision.
pub const REVISION: &str = "deployment.kubernetes.io/revision";
const DESIRED: &str = "deployment.kubernetes.io/desired-replicas";
const MAX_REPLICAS: &str = "deployment.kubernetes.io/max-replicas";

fn deployments() -> GroupResource {
    GroupResource::new("apps", "deployments")
}

fn replicasets() -> GroupResource {
    GroupResource::new("apps", "replicasets")
}

/// Reconciles one Deployment.
pub async fn reconcile(state: &State, ctx: &Context, key: &ObjectKey) {
    let snapshot = state.store.snapshot();
    let Some(deploy) = snapshot.get(&deployments(), key) else {
        return;
    };
    if deploy.is_deleting() {
        return;
    }
    let deploy = deploy.value().clone();
    let ctx = crate::controllers::kcm(ctx, "deployment-controller");
    let uid = meta_str(&deploy, "uid");
    let owned: Vec<Value> = snapshot
        .list(&replicasets(), Some(&key.namespace))
        .filter(|(_, rs)| controlled_by(&rs.value(), uid) && !rs.is_deleting())
        .map(|(_, rs)| rs.value().clone())
        .collect();
    let template = &deploy["spec"]["template"];
    let (mut new, old): (Vec<Value>, Vec<Value>) = owned
        .into_iter()
        .partition(|rs| same_template(&rs["spec"]["template"], template));
    let paused = deploy["spec"]["paused"] == true;
    let mut new = new.pop();
    let max_old = old.iter().map(revision).max().unwrap_or(0);
    if !paused {
        new = ensure_new(state, &ctx, &deploy, new, max_old).await;
        if let Some(new) = &new {
            roll(state, &ctx, &deploy, new, &old).await;
        }
        cleanup(state, &ctx, &deploy, &old).await;
    }
    write_deployment_status(state, &ctx, key, new.as_ref(), paused).await;
}

/// The ReplicaSet of the current template: created when there is none (with the next
/// revision), or given the next revision when an old one became current again (a rollback).
async fn ensure_new(
    state: &State,
    ctx: &Context,
    deploy: &Value,
    new: Option<Value>,
    max_old: u64,
) -> Option<Value> {
    let replicas = spec_replicas(deploy);
    let surge = max_surge(deploy);
    let annotations = |rev: u64| {
        json!({REVISION: rev.to_string(), DESIRED: replicas.to_string(),
            MAX_REPLICAS: (replicas + surge).to_string()})
    };
    match new {
        Some(rs) if revision(&rs) > max_old => Some(rs),
        Some(rs) => {
            let next = (max_old + 1).to_string();
            let key = super::key_of(&rs);
            write_object(state, ctx, &replicasets(), &key, &|rs: &mut Value| {
                rs["metadata"]["annotations"][REVISION] = json!(next);
                true
            })
            .await;
            current(state, &key)
        }
        None => {
            let rs = new_replica_set(deploy, annotations(max_old + 1));
            let res = resource(state, &replicasets())?;
            let ns = meta_str(deploy, "namespace");
            match rest::create(state, ctx, &res, ns, rs).await {
                Ok(created) => Some(created.value().clone()),
                Err(e) => {
                    tracing::warn!(error = %e, "creating a deployment's replica set");
                    None
                }
            }
        }
    }
}

fn current(state: &State, key: &ObjectKey) -> Option<Value> {
    let snapshot = state.store.snapshot();
    snapshot
        .get(&replicasets(), key)
        .map(|rs| rs.value().clone())
}

/// The ReplicaSet a Deployment's template makes, with no replicas yet (the rollout scales it).
pub fn new_replica_set(deploy: &Value, annotations: Value) -> Value {
    let hash = pod_template_hash(&deploy["spec"]["template"]);
    let name = format!("{}-{hash}", meta_str(deploy, "name"));
    let mut template = deploy["spec"]["template"].clone();
    template["metadata"]["labels"][POD_TEMPLATE_HASH] = json!(hash);
    let mut selector = deploy["spec"]["selector"].clone();
    selector["matchLabels"][POD_TEMPLATE_HASH] = json!(hash);
    json!({
        "apiVersion": "apps/v1", "kind": "ReplicaSet",
        "metadata": {"name": name, "namespace": deploy["metadata"]["namespace"],
            "labels": template["metadata"]["labels"], "annotations": annotations,
            "ownerReferences": [owner_reference(deploy)]},
        "spec": {"replicas": 0, "minReadySeconds": deploy["spec"]["minReadySeconds"]
            .as_i64().unwrap_or(0), "selector": selector, "template": template},
    })
}

/// Scales the new and old ReplicaSets one step of the strategy further.
async fn roll(state: &State, ctx: &Context, deploy: &Value, new: &Value, old: &[Value]) {
    let plan = if deploy["spec"]["strategy"]["type"] == "Recreate" {
        recreate(deploy, new, old)
    } else {
        rolling(deploy, new, old)
    };
    for (rs, replicas) in plan {
        scale(state, ctx, deploy, &rs, replicas).await;
    }
}

/// Sets a ReplicaSet's replicas (and the Deployment's desired and maximum counts on it).
async fn scale(state: &State, ctx: &Context, deploy: &Value, rs: &Value, replicas: i64) {
    let desired = spec_replicas(deploy).to_string();
    let max = (spec_replicas(deploy) + max_surge(deploy)).to_string();
    let key = super::key_of(rs);
    write_object(state, ctx, &replicasets(), &key, &|rs: &mut Value| {
        let changed = rs["spec"]["replicas"] != replicas
            || rs["metadata"]["annotations"][DESIRED] != desired.as_str();
        rs["spec"]["replicas"] = json!(replicas);
        rs["metadata"]["annotations"][DESIRED] = json!(desired);
        rs["metadata"]["annotations"][MAX_REPLICAS] = json!(max);
        changed
    })
    .await;
}

/// `Recreate`: old ReplicaSets to zero; the new one up once no old pod is left.
pub fn recreate(deploy: &Value, new: &Value, old: &[Value]) -> Vec<(Value, i64)> {
    let mut plan: Vec<(Value, i64)> = old
        .iter()
        .filter(|rs| spec_of(rs) > 0)
        .map(|rs| (rs.clone(), 0))
        .collect();
    let old_running: i64 = old.iter().map(status_replicas).sum();
    if plan.is_empty() && old_running == 0 && spec_of(new) != spec_replicas(deploy) {
        plan.push((new.clone(), spec_replicas(deploy)));
    }
    plan
}

/// `RollingUpdate`: the new ReplicaSet up within `maxSurge`, then the old ones down within
/// `maxUnavailable` (`reconcileNewReplicaSet`, `reconcileOldReplicaSets`).
pub fn rolling(deploy: &Value, new: &Value, old: &[Value]) -> Vec<(Value, i64)> {
    let replicas = spec_replicas(deploy);
    let (surge, unavailable) = (max_surge(deploy), max_unavailable(deploy));
    let new_spec = spec_of(new);
    let all: i64 = new_spec + old.iter().map(spec_of).sum::<i64>();
    if new_spec > replicas {
        return vec![(new.clone(), replicas)];
    }
    if new_spec < replicas {
        let room = (replicas + surge - all).max(0);
        let up = room.min(replicas - new_spec);
        if up > 0 {
            return vec![(new.clone(), new_spec + up)];
        }
    }
    // Scale old ones down as far as availability allows.
    let old_total: i64 = old.iter().map(spec_of).sum();
    if old_total == 0 {
        return Vec::new();
    }
    let min_available = replicas - unavailable;
    let new_unavailable = new_spec - available_of(new);
    let max_down = all - min_available - new_unavailable;
    if max_down <= 0 {
        return Vec::new();
    }
    let mut plan = Vec::new();
    let mut budget = max_down;
    // Unhealthy old pods go first: they count against nothing.
    let mut sorted: Vec<&Value> = old.iter().filter(|rs| spec_of(rs) > 0).collect();
    sorted.sort_by_key(|rs| (revision(rs), meta_str(rs, "creationTimestamp").to_string()));
    let mut after: Vec<(Value, i64)> = Vec::new();
    for rs in &sorted {
        let unhealthy = (spec_of(rs) - available_of(rs)).max(0).min(budget);
        budget -= unhealthy;
        after.push(((*rs).clone(), spec_of(rs) - unhealthy));
    }
    let total_available: i64 = available_of(new)
        + after
            .iter()
            .map(|(rs, n)| available_of(rs).min(*n))
            .sum::<i64>();
    let mut down = (total_available - min_available).max(0).min(budget);
    for (rs, n) in after {
        let step = n.min(down);
        down -= step;
        if n - step != spec_of(&rs) {
            plan.push((rs, n - step));
        }
    }
    plan
}

/// Deletes the oldest old ReplicaSets with no pods beyond `revisionHistoryLimit` (10).
async fn cleanup(state: &State, ctx: &Context, deploy: &Value, old: &[Value]) {
    let limit = deploy["spec"]["revisionHistoryLimit"]
        .as_i64()
        .unwrap_or(10)
        .max(0) as usize;
    let mut idle: Vec<&Value> = old
        .iter()
        .filter(|rs| spec_of(rs) == 0 && status_replicas(rs) == 0)
        .collect();
    if idle.len() <= limit {
        return;
    }
    idle.sort_by_key(|rs| revision(rs));
    let excess = idle.len() - limit;
    for rs in idle.into_iter().take(excess) {
        super::delete(state, ctx, &replicasets(), &super::key_of(rs)).await;
    }
}

/// Writes the Deployment's status and revision annotation from its ReplicaSets as they are now.
async fn write_deployment_status(
    state: &State,
    ctx: &Context,
    key: &ObjectKey,
    new: Option<&Value>,
    paused: bool,
) {
    let snapshot = state.store.snapshot();
    let Some(deploy) = snapshot.get(&deployments(), key) else {
        return;
    };
    let uid = meta_str(&deploy.value(), "uid").to_string();
    let all: Vec<Value> = snapshot
        .list(&replicasets(), Some(&key.namespace))
        .filter(|(_, rs)| controlled_by(&rs.value(), &uid))
        .map(|(_, rs)| rs.value().clone())
        .collect();
    let new = new.and_then(|n| {
        let name = meta_str(n, "name");
        all.iter().find(|rs| meta_str(rs, "name") == name).cloned()
    });
    let status = compute_status(&deploy.value(), &all, new.as_ref(), paused);
    let rev = new
        .as_ref()
        .map(revision)
        .filter(|r| *r > 0)
        .map(|r| r.to_string());
    // The revision annotation goes with the status, as the controller writes it (through
    // `UpdateStatus`, so that it does not bump the generation).
    write_status(state, ctx, &deployments(), key, &|d: &mut Value| {
        let mut changed = apply_status(&mut d["status"], &status);
        if let Some(rev) = &rev {
            if d["metadata"]["annotations"][REVISION] != rev.as_str() {
                d["metadata"]["annotations"][REVISION] = json!(rev);
                changed = true;
            }
        }
        changed
    })
    .await;
}

/// `calculateStatus` and `syncRolloutStatus`: counts, `observedGeneration`, and the conditions
/// to set (`[type, status, reason, message]`).
pub fn compute_status(deploy: &Value, all: &[Value], new: Option<&Value>, paused: bool) -> Value {
    let replicas = spec_replicas(deploy);
    let sum = |f: &dyn Fn(&Value) -> i64| all.iter().map(f).sum::<i64>();
    let available = sum(&available_of);
    let total_spec = sum(&spec_of);
    let counts = json!({
        "observedGeneration": deploy["metadata"]["generation"].as_i64().unwrap_or(1),
        "replicas": sum(&status_replicas),
        "updatedReplicas": new.map_or(0, status_replicas),
        "readyReplicas": sum(&|rs: &Value| rs["status"]["readyReplicas"].as_i64().unwrap_or(0)),
        "availableReplicas": available,
        "unavailableReplicas": (total_spec - available).max(0),
    });
    let min_available = replicas - max_unavailable(deploy);
    let mut conditions = vec![if available >= min_available {
        json!([
            "Available",
            "True",
            "MinimumReplicasAvailable",
            "Deployment has minimum availability."
        ])
    } else {
        json!([
            "Available",
            "False",
            "MinimumReplicasUnavailable",
            "Deployment does not have minimum availability."
        ])
    }];
    let new_name = new.map(|n| meta_str(n, "name")).unwrap_or("");
    let complete = counts["updatedReplicas"] == replicas
        && counts["replicas"] == replicas
        && available == replicas;
    conditions.push(if paused {
        json!([
            "Progressing",
            "Unknown",
            "DeploymentPaused",
            "Deployment is paused"
        ])
    } else if complete && new.is_some() {
        json!([
            "Progressing",
            "True",
            "NewReplicaSetAvailable",
            format!("ReplicaSet \"{new_name}\" has successfully progressed.")
        ])
    } else if new.is_some() {
        json!([
            "Progressing",
            "True",
            "ReplicaSetUpdated",
            format!("ReplicaSet \"{new_name}\" is progressing.")
        ])
    } else {
        json!([
            "Progressing",
            "True",
            "ReplicaSetUpdated",
            format!(
                "Deployment \"{}\" is progressing.",
                meta_str(deploy, "name")
            )
        ])
    });
    json!({"counts": counts, "conditions": conditions})
}

/// Applies [`compute_status`] to a stored status; whether anything changed. A condition keeps
/// its times while its status and reason stay (`SetDeploymentCondition`).
pub fn apply_status(status: &mut Value, computed: &Value) -> bool {
    let mut changed = merge_counts(status, &computed["counts"]);
    let time = now();
    for c in computed["conditions"].as_array().into_iter().flatten() {
        let (kind, st, reason, message) = (&c[0], &c[1], &c[2], &c[3]);
        if !status["conditions"].is_array() {
            status["conditions"] = json!([]);
        }
        let Some(list) = status["conditions"].as_array_mut() else {
            continue;
        };
        let existing = list.iter().position(|x| x["type"] == *kind);
        if let Some(i) = existing {
            let old = &list[i];
            if old["status"] == *st && old["reason"] == *reason {
                if old["message"] != *message {
                    list[i]["message"] = message.clone();
                    list[i]["lastUpdateTime"] = json!(time);
                    changed = true;
                }
                continue;
            }
            let transition = if old["status"] == *st {
                old["lastTransitionTime"].clone()
            } else {
                json!(time)
            };
            list[i] = json!({"type": kind, "status": st, "lastUpdateTime": time,
                "lastTransitionTime": transition, "reason": reason, "message": message});
        } else {
            list.push(json!({"type": kind, "status": st, "lastUpdateTime": time,
                "lastTransitionTime": time, "reason": reason, "message": message}));
        }
        changed = true;
    }
    changed
}

/// Whether a ReplicaSet's template is the Deployment's (`EqualIgnoreHash`).
fn same_template(rs_template: &Value, template: &Value) -> bool {
    without_hash(rs_template) == without_hash(template)
}

/// A template without its pod-template-hash label (and without `labels` left empty).
fn without_hash(template: &Value) -> Value {
    let mut t = template.clone();
    if let Some(meta) = t["metadata"].as_object_mut() {
        if let Some(labels) = meta.get_mut("labels").and_then(Value::as_object_mut) {
            labels.remove(POD_TEMPLATE_HASH);
            if labels.is_empty() {
                meta.remove("labels");
            }
        }
    }
    t
}

/// The pod-template-hash of a template: FNV-32a of its canonical form, written with
/// `rand.SafeEncodeString` as the controller writes its hash (`5d8f7c9b6b`-like). The value
/// differs from a real controller's (which hashes Go's printing of the struct); what matters
/// is that one template always gets one hash.
pub fn pod_template_hash(template: &Value) -> String {
    let mut hash: u32 = 0x811c_9dc5;
    feed(&mut hash, template);
    let alphabet = b"bcdfghjklmnpqrstvwxz2456789";
    hash.to_string()
        .bytes()
        .map(|b| alphabet[usize::from(b) % alphabet.len()] as char)
        .collect()
}

fn mix(hash: &mut u32, bytes: &[u8]) {
    for b in bytes {
        *hash = (*hash ^ u32::from(*b)).wrapping_mul(0x0100_0193);
    }
}

fn feed(hash: &mut u32, v: &Value) {
    match v {
        Value::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort();
            mix(hash, b"{");
            for k in keys {
                mix(hash, k.as_bytes());
                mix(hash, b":");
                feed(hash, &m[k]);
                mix(hash, b",");
            }
            mix(hash, b"}");
        }
        Value::Array(a) => {
            mix(hash, b"[");
            for x in a {
                feed(hash, x);
                mix(hash, b",");
            }
            mix(hash, b"]");
        }
        other => mix(hash, other.to_string().as_bytes()),
    }
}

/// A ReplicaSet's revision.
pub fn revision(rs: &Value) -> u64 {
    rs["metadata"]["annotations"][REVISION]
        .as_str()
        .and_then(|r| r.parse().ok())
        .unwrap_or(0)
}

fn spec_replicas(deploy: &Value) -> i64 {
    deploy["spec"]["replicas"].as_i64().unwrap_or(1).max(0)
}

fn spec_of(rs: &Value) -> i64 {
    rs["spec"]["replicas"].as_i64().unwrap_or(0)
}

fn status_replicas(rs: &Value) -> i64 {
    rs["status"]["replicas"].as_i64().unwrap_or(0)
}

fn available_of(rs: &Value) -> i64 {
    rs["status"]["availableReplicas"].as_i64().unwrap_or(0)
}

/// `maxSurge` resolved against the replicas (percentages round up); 0 for `Recreate`.
fn max_surge(deploy: &Value) -> i64 {
    if deploy["spec"]["strategy"]["type"] == "Recreate" {
        return 0;
    }
    fenceposts(deploy).0
}

/// `maxUnavailable` resolved (percentages round down; at least 1 when `maxSurge` is 0); 0 for
/// `Recreate` or no replicas.
fn max_unavailable(deploy: &Value) -> i64 {
    if deploy["spec"]["strategy"]["type"] == "Recreate" || spec_replicas(deploy) == 0 {
        return 0;
    }
    fenceposts(deploy).1.min(spec_replicas(deploy))
}

/// `ResolveFenceposts`.
fn fenceposts(deploy: &Value) -> (i64, i64) {
    let replicas = spec_replicas(deploy);
    let update = &deploy["spec"]["strategy"]["rollingUpdate"];
    let surge = int_or_percent(&update["maxSurge"], replicas, true).unwrap_or(0);
    let unavailable = int_or_percent(&update["maxUnavailable"], replicas, false).unwrap_or(0);
    if surge == 0 && unavailable == 0 {
        return (0, 1);
    }
    (surge, unavailable)
}

/// An int-or-string: a number, or a percentage of `total` (rounded up or down).
fn int_or_percent(v: &Value, total: i64, round_up: bool) -> Option<i64> {
    if let Some(n) = v.as_i64() {
        return Some(n);
    }
    let percent: i64 = v.as_str()?.strip_suffix('%')?.parse().ok()?;
    let scaled = percent.checked_mul(total)?;
    Some(if round_up {
        (scaled + 99) / 100
    } else {
        scaled / 100
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn deploy(replicas: i64, strategy: Value) -> Value {
        json!({"metadata": {"name": "web", "namespace": "ns", "uid": "d", "generation": 2},
            "spec": {"replicas": replicas, "strategy": strategy,
                "selector": {"matchLabels": {"app": "web"}},
                "template": {"metadata": {"labels": {"app": "web"}},
                    "spec": {"containers": [{"name": "c", "image": "nginx:1"}]}}}})
    }

    fn rs(name: &str, rev: u64, spec: i64, available: i64) -> Value {
        json!({"metadata": {"name": name, "annotations": {REVISION: rev.to_string()},
            "creationTimestamp": "2026-01-01T00:00:00Z"},
            "spec": {"replicas": spec},
            "status": {"replicas": spec, "availableReplicas": available, "readyReplicas": available}})
    }

    fn rolling_update(surge: Value, unavailable: Value) -> Value {
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": surge,
            "maxUnavailable": unavailable}})
    }

    #[rstest]
    #[case(json!("25%"), json!("25%"), 10, (3, 2))]
    #[case(json!(1), json!(0), 3, (1, 0))]
    #[case(json!(0), json!(0), 3, (0, 1))]
    #[case(json!("50%"), json!("50%"), 3, (2, 1))]
    fn fenceposts_resolve(
        #[case] surge: Value,
        #[case] unavailable: Value,
        #[case] replicas: i64,
        #[case] expected: (i64, i64),
    ) {
        let d = deploy(replicas, rolling_update(surge, unavailable));
        assert_eq!((max_surge(&d), max_unavailable(&d)), expected);
    }

    #[test]
    fn a_rolling_update_surges_then_scales_old_down() {
        let d = deploy(3, rolling_update(json!(1), json!(0)));
        let names = |plan: Vec<(Value, i64)>| -> Vec<(String, i64)> {
            plan.into_iter()
                .map(|(rs, n)| (meta_str(&rs, "name").to_string(), n))
                .collect()
        };
        // Start: new at 0, old at 3, all available: one surge pod.
        let old = [rs("old", 1, 3, 3)];
        assert_eq!(
            names(rolling(&d, &rs("new", 2, 0, 0), &old)),
            [("new".into(), 1)]
        );
        // The surge pod is not available yet: nothing else moves.
        assert!(rolling(&d, &rs("new", 2, 1, 0), &old).is_empty());
        // Once it is, one old pod goes.
        assert_eq!(
            names(rolling(&d, &rs("new", 2, 1, 1), &old)),
            [("old".into(), 2)]
        );
        // At the end the old one reaches 0.
        let old = [rs("old", 1, 1, 1)];
        assert_eq!(
            names(rolling(&d, &rs("new", 2, 3, 3), &old)),
            [("old".into(), 0)]
        );
        assert!(rolling(&d, &rs("new", 2, 3, 3), &[rs("old", 1, 0, 0)]).is_empty());
    }

    #[test]
    fn recreate_waits_for_old_pods_to_go() {
        let d = deploy(2, json!({"type": "Recreate"}));
        let plan = recreate(&d, &rs("new", 2, 0, 0), &[rs("old", 1, 2, 2)]);
        assert_eq!(plan.len(), 1);
        assert_eq!(plan[0].1, 0);
        let mut old = rs("old", 1, 0, 0);
        old["status"]["replicas"] = json!(1);
        assert!(recreate(&d, &rs("new", 2, 0, 0), &[old]).is_empty());
        let plan = recreate(&d, &rs("new", 2, 0, 0), &[rs("old", 1, 0, 0)]);
        assert_eq!(plan[0].1, 2);
    }

    #[test]
    fn status_and_conditions() {
        let d = deploy(3, rolling_update(json!("25%"), json!("25%")));
        let new = rs("web-abc", 2, 3, 3);
        let computed = compute_status(&d, std::slice::from_ref(&new), Some(&new), false);
        assert_eq!(
            computed["counts"],
            json!({"observedGeneration": 2, "replicas": 3, "updatedReplicas": 3,
                "readyReplicas": 3, "availableReplicas": 3, "unavailableReplicas": 0})
        );
        let mut status = json!({});
        assert!(apply_status(&mut status, &computed));
        assert_eq!(
            status["conditions"][0]["reason"],
            "MinimumReplicasAvailable"
        );
        assert_eq!(
            status["conditions"][1]["message"],
            "ReplicaSet \"web-abc\" has successfully progressed."
        );
        assert!(!status
            .as_object()
            .unwrap()
            .contains_key("unavailableReplicas"));
        assert!(
            !apply_status(&mut status, &computed),
            "nothing changes twice"
        );
    }

    #[test]
    fn template_hashes_are_stable_and_safe() {
        let t = json!({"metadata": {"labels": {"a": "b"}}, "spec": {"containers": []}});
        let h = pod_template_hash(&t);
        assert_eq!(h, pod_template_hash(&t.clone()));
        assert!(
            h.chars().all(|c| "bcdfghjklmnpqrstvwxz2456789".contains(c)),
            "{h}"
        );
        let other = json!({"metadata": {"labels": {"a": "c"}}, "spec": {"containers": []}});
        assert_ne!(h, pod_template_hash(&other));
        let mut labelled = t.clone();
        labelled["metadata"]["labels"][POD_TEMPLATE_HASH] = json!(h);
        assert!(same_template(&labelled, &t));
        assert!(!same_template(&labelled, &other));
    }
}
