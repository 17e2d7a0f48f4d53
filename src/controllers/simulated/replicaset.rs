//! The ReplicaSet and ReplicationController controllers: keep `spec.replicas` pods of the
//! template (named `<owner>-<5 random>`, controlled by the owner), deleting the least useful
//! first when there are too many (unscheduled, then pending, then not ready, then the newest),
//! and report `replicas`, `fullyLabeledReplicas`, `readyReplicas`, `availableReplicas` (ready
//! for `minReadySeconds`, checked again when that time has passed) and `observedGeneration`.
//! Orphans matching the selector are not adopted.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use super::{create_pod, delete, owned_pod_objects, pods, PodName, Sim, Workload};
use crate::context::Context;
use crate::controllers::{later, Work};
use crate::registry::object_meta::meta_str;
use crate::state::State;
use crate::store::{ObjectKey, StoredObject};

/// The pods one reconcile creates at most (the controller's `burstReplicas`).
pub const BURST_REPLICAS: usize = 500;

/// Reconciles one ReplicaSet or ReplicationController.
pub async fn reconcile(state: &State, ctx: &Context, workload: Workload, key: &ObjectKey) {
    let gr = workload.resource();
    let snapshot = state.store.snapshot();
    let Some(owner) = snapshot.get(&gr, key) else {
        return;
    };
    if owner.is_deleting() {
        return;
    }
    let owner = owner.value().clone();
    let name = if workload == Workload::ReplicaSet {
        "replicaset-controller"
    } else {
        "replication-controller"
    };
    let ctx = crate::controllers::kcm(ctx, name);
    let uid = meta_str(&owner, "uid");
    let mut active: Vec<_> = owned_pod_objects(&snapshot, &key.namespace, uid)
        .into_iter()
        .filter(|p| !super::kubelet::finished(&p.value()))
        .collect();
    let wanted = owner["spec"]["replicas"].as_i64().unwrap_or(1).max(0) as usize;
    if active.len() == wanted {
        // Nothing to create or delete: the status comes from the pods just read.
        update_status(state, &ctx, workload, key, Some(active)).await;
        return;
    }
    if active.len() < wanted {
        let prefix = format!("{}-", key.name);
        // At most a burst per reconcile; the new pods' commits bring the controller back for
        // the rest (so a huge `replicas` is paced by the request step budget, not one loop).
        for _ in active.len()..wanted.min(active.len() + BURST_REPLICAS) {
            let template = &owner["spec"]["template"];
            create_pod(
                state,
                &ctx,
                &owner,
                template,
                PodName::Generate(&prefix),
                &[],
            )
            .await;
        }
    } else if active.len() > wanted {
        active.sort_by_key(|p| deletion_rank(&p.value()));
        for pod in active.iter().take(active.len() - wanted) {
            delete(state, &ctx, &pods(), &super::key_of(&pod.value())).await;
        }
    }
    update_status(state, &ctx, workload, key, None).await;
}

/// The order pods are deleted in when scaling down (`ActivePodsWithRanks`, simplified): not
/// scheduled, pending, not ready, ready for less time, then the newest.
pub fn deletion_rank(pod: &Value) -> (bool, bool, bool, std::cmp::Reverse<String>) {
    let scheduled = !pod["spec"]["nodeName"].as_str().unwrap_or("").is_empty();
    let running = pod["status"]["phase"] == "Running";
    let created = meta_str(pod, "creationTimestamp").to_string();
    (
        scheduled,
        running,
        is_ready(pod),
        std::cmp::Reverse(created),
    )
}

/// Whether a pod's `Ready` condition is true.
pub fn is_ready(pod: &Value) -> bool {
    ready_since(pod).is_some()
}

/// When a pod became ready (its `Ready` condition's transition time), if it is.
fn ready_since(pod: &Value) -> Option<&str> {
    pod["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == "Ready" && c["status"] == "True")
        .map(|c| c["lastTransitionTime"].as_str().unwrap_or(""))
}

/// Whether a pod has been ready for `min_ready` seconds; if it is ready but not for long
/// enough yet, how long is left.
pub fn available(pod: &Value, min_ready: i64) -> (bool, Option<Duration>) {
    let Some(since) = ready_since(pod) else {
        return (false, None);
    };
    if min_ready <= 0 {
        return (true, None);
    }
    let Ok(since) = chrono::DateTime::parse_from_rfc3339(since) else {
        return (true, None);
    };
    let elapsed = chrono::Utc::now()
        .signed_duration_since(since)
        .num_milliseconds();
    let needed = min_ready.saturating_mul(1000);
    if elapsed >= needed {
        (true, None)
    } else {
        let left = u64::try_from(needed - elapsed).unwrap_or(0) + 1;
        (false, Some(Duration::from_millis(left)))
    }
}

/// Writes the status the owner's pods give it: `read` when the caller has just read them and
/// changed nothing since, else read again.
async fn update_status(
    state: &State,
    ctx: &Context,
    workload: Workload,
    key: &ObjectKey,
    read: Option<Vec<Arc<StoredObject>>>,
) {
    let gr = workload.resource();
    let snapshot = state.store.snapshot();
    let Some(owner) = snapshot.get(&gr, key) else {
        return;
    };
    let owner_tree = owner.value();
    let uid = meta_str(&owner_tree, "uid");
    let active: Vec<_> = read.unwrap_or_else(|| {
        owned_pod_objects(&snapshot, &key.namespace, uid)
            .into_iter()
            .filter(|p| !super::kubelet::finished(&p.value()))
            .collect()
    });
    let min_ready = owner.value()["spec"]["minReadySeconds"]
        .as_i64()
        .unwrap_or(0);
    let template_labels = &owner.value()["spec"]["template"]["metadata"]["labels"];
    let fully_labeled = active
        .iter()
        .filter(|p| {
            template_labels
                .as_object()
                .into_iter()
                .flatten()
                .all(|(k, v)| p.value()["metadata"]["labels"].get(k) == Some(v))
        })
        .count();
    let ready = active.iter().filter(|p| is_ready(&p.value())).count();
    let mut recheck: Option<Duration> = None;
    let mut available_count = 0;
    for p in &active {
        match available(&p.value(), min_ready) {
            (true, _) => available_count += 1,
            (false, Some(left)) => recheck = Some(recheck.map_or(left, |r| r.min(left))),
            (false, None) => {}
        }
    }
    let generation = owner.value()["metadata"]["generation"]
        .as_i64()
        .unwrap_or(1);
    let status = json!({
        "replicas": active.len(), "fullyLabeledReplicas": fully_labeled,
        "readyReplicas": ready, "availableReplicas": available_count,
        "observedGeneration": generation,
    });
    super::write_status(state, ctx, &gr, key, &|obj: &mut Value| {
        merge_counts(&mut obj["status"], &status)
    })
    .await;
    if let Some(left) = recheck {
        let work = Work::Simulated(Sim::Workload(workload, key.clone()));
        later(state, left, work);
    }
}

/// Sets the counts of `counts` in `status`, dropping zeros as the API's `omitempty` does;
/// whether anything changed.
pub fn merge_counts(status: &mut Value, counts: &Value) -> bool {
    if !status.is_object() {
        *status = json!({});
    }
    let mut changed = false;
    for (k, v) in counts.as_object().into_iter().flatten() {
        let zero = v.as_i64() == Some(0) && k != "replicas";
        let old = status.get(k).cloned();
        if zero {
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

#[cfg(test)]
mod tests {
    use super::super::now;
    use super::*;

    #[test]
    fn counts_merge_without_zeros() {
        let mut status = json!({"replicas": 2, "readyReplicas": 2, "conditions": []});
        let changed = merge_counts(
            &mut status,
            &json!({"replicas": 0, "readyReplicas": 0, "availableReplicas": 0}),
        );
        assert!(changed);
        assert_eq!(status, json!({"replicas": 0, "conditions": []}));
        assert!(!merge_counts(&mut status, &json!({"replicas": 0})));
    }

    #[test]
    fn scale_down_takes_the_least_useful_first() {
        let pod = |name: &str, node: &str, phase: &str, ready: bool, created: &str| {
            json!({"metadata": {"name": name, "creationTimestamp": created},
                "spec": {"nodeName": node}, "status": {"phase": phase,
                "conditions": [{"type": "Ready", "status": if ready {"True"} else {"False"}}]}})
        };
        let mut pods = [
            pod("ready-old", "n", "Running", true, "2026-01-01T00:00:00Z"),
            pod("ready-new", "n", "Running", true, "2026-01-02T00:00:00Z"),
            pod("unscheduled", "", "Pending", false, "2026-01-01T00:00:00Z"),
            pod("not-ready", "n", "Running", false, "2026-01-01T00:00:00Z"),
        ];
        pods.sort_by_key(deletion_rank);
        let order: Vec<&str> = pods.iter().map(|p| meta_str(p, "name")).collect();
        assert_eq!(
            order,
            ["unscheduled", "not-ready", "ready-new", "ready-old"]
        );
    }

    #[test]
    fn availability_waits_for_min_ready_seconds() {
        let pod = json!({"status": {"conditions": [{"type": "Ready", "status": "True",
            "lastTransitionTime": now()}]}});
        assert_eq!(available(&pod, 0), (true, None));
        let (ok, left) = available(&pod, 30);
        assert!(!ok && left.is_some_and(|l| l > Duration::from_secs(28)));
    }
}
