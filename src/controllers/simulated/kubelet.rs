//! The simulated kubelets: a pod bound to a simulated node starts at once (init containers
//! completed, containers running and ready, an IP from the node's pod CIDR, the conditions a
//! kubelet writes), then does what its [`super::RUN`] annotation says once its
//! [`super::DURATION`] has passed: finishes (`Succeeded` or `Failed`, as a Job's pods do by
//! default), keeps running, crash-loops (restart count and `CrashLoopBackOff` with the
//! kubelet's doubling back-off, from the duration or 10 s), never becomes ready, or is evicted.
//! A pod being deleted gracefully (its DELETE marked it terminating) is stopped at once, without
//! waiting for its grace period: its containers terminate, then its kubelet deletes it with no
//! grace period left, as a real kubelet does once they have exited.

use std::time::Duration;

use serde_json::{json, Value};

use super::nodes::{internal_ip, is_simulated, nodes};
use super::{now, parse_duration, pods, resource, Sim, DURATION, RUN};
use crate::context::Context;
use crate::controllers::{later, Work};
use crate::registry::store::{self as rest, DeleteOptions};
use crate::state::State;
use crate::store::{ObjectKey, Snapshot};

/// How a pod's containers behave (see [`super::RUN`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Behaviour {
    /// Run until deleted; ready unless `ready` is false.
    Run {
        /// Whether readiness passes.
        ready: bool,
    },
    /// Exit with this code after the duration (the pod does not restart them).
    Exit(i32),
    /// Exit and be restarted, again and again.
    CrashLoop,
    /// Be evicted by the node after the duration.
    Evict,
}

/// What a pod's annotations and restart policy make it do, and after how long.
pub fn behaviour(pod: &Value) -> (Behaviour, Duration) {
    let annotations = &pod["metadata"]["annotations"];
    let duration = annotations[DURATION]
        .as_str()
        .and_then(parse_duration)
        .unwrap_or(Duration::ZERO);
    let restart = pod["spec"]["restartPolicy"].as_str().unwrap_or("Always");
    let exit = |code: i32| match (restart, code) {
        ("Always", _) | ("OnFailure", 1) => Behaviour::CrashLoop,
        _ => Behaviour::Exit(code),
    };
    let b = match annotations[RUN].as_str().unwrap_or("") {
        "succeed" => exit(0),
        "fail" => exit(1),
        "hang" => Behaviour::Run { ready: true },
        "not-ready" => Behaviour::Run { ready: false },
        "crash-loop" => Behaviour::CrashLoop,
        "evict" => Behaviour::Evict,
        _ if restart == "Always" => Behaviour::Run { ready: true },
        _ => Behaviour::Exit(0),
    };
    (b, duration)
}

/// Whether a pod ran to its end.
pub fn finished(pod: &Value) -> bool {
    matches!(
        pod["status"]["phase"].as_str(),
        Some("Succeeded" | "Failed")
    )
}

/// Starts a pod bound to a simulated node, or finishes off one being deleted.
pub async fn sync(state: &State, ctx: &Context, key: &ObjectKey) {
    let snapshot = state.store.snapshot();
    let Some(pod) = snapshot.get(&pods(), key) else {
        return;
    };
    let pod_tree = pod.value();
    let node_name = pod_tree["spec"]["nodeName"].as_str().unwrap_or("");
    let node = snapshot.get(&nodes(), &ObjectKey::new("", node_name));
    let Some(node) = node.filter(|n| !node_name.is_empty() && is_simulated(&n.value())) else {
        return;
    };
    let ctx = ctx
        .for_controller(&format!("system:node:{node_name}"))
        .managed_by("kubelet");
    if pod.is_deleting() {
        terminate(state, &ctx, key, &pod.value()).await;
        return;
    }
    if pod.value()["status"]["phase"] != "Pending" && !pod.value()["status"]["phase"].is_null() {
        return;
    }
    let ip = if pod.value()["spec"]["hostNetwork"] == true {
        internal_ip(&node.value()).unwrap_or("").to_string()
    } else {
        free_ip(&snapshot, &node.value())
    };
    let host = internal_ip(&node.value()).unwrap_or("").to_string();
    let (behaviour, duration) = behaviour(&pod.value());
    let time = now();
    super::write_status(state, &ctx, &pods(), key, &|p: &mut Value| {
        if p["status"]["phase"] != "Pending" && !p["status"]["phase"].is_null() {
            return false;
        }
        start(p, &host, &ip, &time, behaviour);
        true
    })
    .await;
    match behaviour {
        Behaviour::Run { .. } => {}
        Behaviour::CrashLoop => later(state, back_off(duration, 0), due(key)),
        _ if duration.is_zero() => finish_due(state, &ctx, key).await,
        _ => later(state, duration, due(key)),
    }
}

fn due(key: &ObjectKey) -> Work {
    Work::Simulated(Sim::PodDue(key.clone()))
}

/// The kubelet's restart back-off after `restarts` restarts: the base (10 s unless the pod's
/// duration says) doubled each time, at most 5 minutes.
fn back_off(duration: Duration, restarts: u32) -> Duration {
    let base = if duration.is_zero() {
        Duration::from_secs(10)
    } else {
        duration
    };
    base.saturating_mul(1u32 << restarts.min(16))
        .min(Duration::from_secs(300))
}

/// The timed step of a running pod: it finishes, is evicted, or crashes once more.
pub async fn finish_due(state: &State, ctx: &Context, key: &ObjectKey) {
    let snapshot = state.store.snapshot();
    let Some(pod) = snapshot.get(&pods(), key) else {
        return;
    };
    if pod.value()["status"]["phase"] != "Running" || pod.is_deleting() {
        return;
    }
    let pod_tree = pod.value();
    let node = pod_tree["spec"]["nodeName"].as_str().unwrap_or("");
    let ctx = ctx
        .for_controller(&format!("system:node:{node}"))
        .managed_by("kubelet");
    let (behaviour, duration) = behaviour(&pod.value());
    let time = now();
    super::write_status(state, &ctx, &pods(), key, &|p: &mut Value| {
        if p["status"]["phase"] != "Running" {
            return false;
        }
        match behaviour {
            Behaviour::Exit(code) => stop(p, code, &time),
            Behaviour::Evict => evict(p, &time),
            Behaviour::CrashLoop => crash(p, &time),
            Behaviour::Run { .. } => return false,
        }
        true
    })
    .await;
    if behaviour == Behaviour::CrashLoop {
        let restarts = pod.value()["status"]["containerStatuses"][0]["restartCount"]
            .as_u64()
            .unwrap_or(0);
        let next = back_off(duration, u32::try_from(restarts + 1).unwrap_or(16));
        later(state, next, due(key));
    }
}

/// Stops a pod being deleted and removes it (its grace period is not waited for).
async fn terminate(state: &State, ctx: &Context, key: &ObjectKey, pod: &Value) {
    let Some(res) = resource(state, &pods()) else {
        return;
    };
    if !finished(pod) && pod["status"]["phase"] == "Running" {
        let time = now();
        super::write_status(state, ctx, &pods(), key, &|p: &mut Value| {
            if finished(p) {
                return false;
            }
            stop(p, 0, &time);
            true
        })
        .await;
    }
    let opts = DeleteOptions {
        grace_period_seconds: Some(0),
        ..DeleteOptions::default()
    };
    if let Err(e) = rest::delete(state, ctx, &res, &key.namespace, &key.name, &opts).await {
        if e.code != 404 {
            tracing::warn!(error = %e, pod = %key.name, "removing a terminated pod");
        }
    }
}

/// The lowest free address of the node's pod CIDR (`10.244.N.0/24`).
fn free_ip(snapshot: &Snapshot, node: &Value) -> String {
    let cidr = node["spec"]["podCIDR"].as_str().unwrap_or("10.244.0.0/24");
    let prefix = cidr
        .rsplit_once('.')
        .map_or("10.244.0", |(p, _)| p)
        .to_string();
    let name = node["metadata"]["name"].as_str().unwrap_or("");
    let used: std::collections::HashSet<String> = snapshot
        .list(&pods(), None)
        .filter(|(_, p)| p.value()["spec"]["nodeName"] == name)
        .filter_map(|(_, p)| p.value()["status"]["podIP"].as_str().map(String::from))
        .collect();
    (2..255)
        .map(|i| format!("{prefix}.{i}"))
        .find(|ip| !used.contains(ip))
        .unwrap_or_else(|| format!("{prefix}.254"))
}

/// `UpdatePodCondition`: sets a condition (a new transition time when its status changes);
/// whether anything changed.
pub fn set_condition(pod: &mut Value, mut condition: Value) -> bool {
    if !pod["status"].is_object() {
        pod["status"] = json!({});
    }
    if !pod["status"]["conditions"].is_array() {
        pod["status"]["conditions"] = json!([]);
    }
    let Some(conditions) = pod["status"]["conditions"].as_array_mut() else {
        return false;
    };
    let existing = conditions
        .iter_mut()
        .find(|c| c["type"] == condition["type"]);
    match existing {
        Some(old) => {
            let same = ["status", "reason", "message"]
                .iter()
                .all(|k| old.get(*k) == condition.get(*k));
            if same {
                return false;
            }
            let time = if old["status"] == condition["status"] {
                old["lastTransitionTime"].clone()
            } else {
                json!(now())
            };
            condition["lastProbeTime"] = Value::Null;
            condition["lastTransitionTime"] = time;
            *old = condition;
        }
        None => {
            condition["lastProbeTime"] = Value::Null;
            condition["lastTransitionTime"] = json!(now());
            conditions.push(condition);
        }
    }
    true
}

/// A container's runtime identity, stable for a pod's container and restart.
fn container_id(pod: &Value, name: &str, restarts: u64) -> String {
    let uid = pod["metadata"]["uid"].as_str().unwrap_or("");
    let digest = fnv(&format!("{uid}/{name}/{restarts}"));
    format!("kubefake://{digest:016x}{:016x}", fnv(&digest.to_string()))
}

fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// The status of a pod whose containers just started.
pub fn start(pod: &mut Value, host: &str, ip: &str, time: &str, behaviour: Behaviour) {
    let ready = behaviour == Behaviour::Run { ready: true }
        || matches!(behaviour, Behaviour::Exit(_) | Behaviour::Evict);
    let status = &mut pod["status"];
    status["phase"] = json!("Running");
    status["hostIP"] = json!(host);
    status["hostIPs"] = json!([{"ip": host}]);
    status["podIP"] = json!(ip);
    status["podIPs"] = json!([{"ip": ip}]);
    status["startTime"] = json!(time);
    let spec = pod["spec"].clone();
    let inits: Vec<Value> = list(&spec["initContainers"])
        .map(|c| {
            json!({"name": c["name"], "image": c["image"], "imageID": image_id(c),
                "containerID": container_id(pod, c["name"].as_str().unwrap_or(""), 0),
                "ready": true, "restartCount": 0, "started": false,
                "state": {"terminated": {"exitCode": 0, "reason": "Completed",
                    "startedAt": time, "finishedAt": time}}})
        })
        .collect();
    let containers: Vec<Value> = list(&spec["containers"])
        .map(|c| {
            json!({"name": c["name"], "image": c["image"], "imageID": image_id(c),
                "containerID": container_id(pod, c["name"].as_str().unwrap_or(""), 0),
                "ready": ready, "restartCount": 0, "started": true,
                "state": {"running": {"startedAt": time}}})
        })
        .collect();
    let status = &mut pod["status"];
    if !inits.is_empty() {
        status["initContainerStatuses"] = json!(inits);
    }
    status["containerStatuses"] = json!(containers);
    for kind in ["PodReadyToStartContainers", "Initialized"] {
        set_condition(pod, json!({"type": kind, "status": "True"}));
    }
    set_readiness(pod, ready, None);
    if behaviour == Behaviour::CrashLoop {
        crash(pod, time);
    }
}

/// `Ready` and `ContainersReady`: true, or false with the kubelet's reason.
fn set_readiness(pod: &mut Value, ready: bool, reason: Option<&str>) {
    let unready: Vec<String> = list(&pod["spec"]["containers"])
        .filter_map(|c| c["name"].as_str().map(String::from))
        .collect();
    for kind in ["Ready", "ContainersReady"] {
        let condition = if ready {
            json!({"type": kind, "status": "True"})
        } else {
            match reason {
                Some(r) => json!({"type": kind, "status": "False", "reason": r}),
                None => json!({"type": kind, "status": "False", "reason": "ContainersNotReady",
                    "message": format!("containers with unready status: [{}]", unready.join(" "))}),
            }
        };
        set_condition(pod, condition);
    }
}

/// The containers exited with `code`: `Succeeded` for 0, else `Failed`.
pub fn stop(pod: &mut Value, code: i32, time: &str) {
    let reason = if code == 0 { "Completed" } else { "Error" };
    terminate_containers(pod, code, reason, time);
    pod["status"]["phase"] = json!(if code == 0 { "Succeeded" } else { "Failed" });
    set_readiness(pod, false, Some("PodCompleted"));
}

fn terminate_containers(pod: &mut Value, code: i32, reason: &str, time: &str) {
    let Some(statuses) = pod["status"]["containerStatuses"].as_array_mut() else {
        return;
    };
    for c in statuses {
        let started = c["state"]["running"]["startedAt"].clone();
        c["state"] = json!({"terminated": {"exitCode": code, "reason": reason,
            "startedAt": started, "finishedAt": time, "containerID": c["containerID"]}});
        c["ready"] = json!(false);
        c["started"] = json!(false);
    }
}

/// The node evicted the pod (memory pressure).
fn evict(pod: &mut Value, time: &str) {
    terminate_containers(pod, 137, "Error", time);
    let status = &mut pod["status"];
    status["phase"] = json!("Failed");
    status["reason"] = json!("Evicted");
    status["message"] = json!("The node was low on resource: memory. ");
    set_condition(
        pod,
        json!({"type": "DisruptionTarget", "status": "True", "reason": "TerminationByKubelet",
            "message": "The node was low on resource: memory. "}),
    );
    set_readiness(pod, false, Some("PodFailed"));
}

/// The containers crashed once more: restarted, waiting in `CrashLoopBackOff`, not ready.
fn crash(pod: &mut Value, time: &str) {
    let name = pod["metadata"]["name"].as_str().unwrap_or("").to_string();
    let ns = pod["metadata"]["namespace"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let uid = pod["metadata"]["uid"].as_str().unwrap_or("").to_string();
    let pod_copy = pod.clone();
    let Some(statuses) = pod["status"]["containerStatuses"].as_array_mut() else {
        return;
    };
    for c in statuses.iter_mut() {
        let restarts = c["restartCount"].as_u64().unwrap_or(0) + 1;
        let container = c["name"].as_str().unwrap_or("").to_string();
        let started = c["state"]["running"]["startedAt"]
            .as_str()
            .or(c["lastState"]["terminated"]["finishedAt"].as_str())
            .unwrap_or(time)
            .to_string();
        c["lastState"] = json!({"terminated": {"exitCode": 1, "reason": "Error",
            "startedAt": started, "finishedAt": time, "containerID": c["containerID"]}});
        let wait = back_off(Duration::from_secs(10), restarts.min(16) as u32 - 1).as_secs();
        c["state"] = json!({"waiting": {"reason": "CrashLoopBackOff", "message": format!(
            "back-off {wait}s restarting failed container={container} pod={name}_{ns}({uid})")}});
        c["restartCount"] = json!(restarts);
        c["containerID"] = json!(container_id(&pod_copy, &container, restarts));
        c["ready"] = json!(false);
        c["started"] = json!(false);
    }
    set_readiness(pod, false, None);
}

/// The image's digest reference, as a runtime reports it.
fn image_id(container: &Value) -> String {
    let image = container["image"].as_str().unwrap_or("");
    let repo = image.split('@').next().unwrap_or(image);
    let repo = repo
        .rsplit_once(':')
        .map_or(repo, |(r, tag)| if tag.contains('/') { repo } else { r });
    format!(
        "{repo}@sha256:{:016x}{:016x}{:016x}{:016x}",
        fnv(image),
        fnv(repo),
        fnv(&format!("{image}1")),
        fnv(&format!("{image}2"))
    )
}

fn list(v: &Value) -> impl Iterator<Item = &Value> {
    v.as_array().into_iter().flatten()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn pod(restart: &str, run: Option<&str>) -> Value {
        let mut p = json!({"metadata": {"name": "p", "namespace": "ns", "uid": "u",
            "annotations": {}},
            "spec": {"restartPolicy": restart, "containers": [{"name": "app", "image": "nginx:1.27"}],
                "initContainers": [{"name": "init", "image": "busybox"}]},
            "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "True"}]}});
        if let Some(r) = run {
            p["metadata"]["annotations"][RUN] = json!(r);
        }
        p
    }

    #[rstest]
    #[case("Always", None, Behaviour::Run { ready: true })]
    #[case("Never", None, Behaviour::Exit(0))]
    #[case("OnFailure", None, Behaviour::Exit(0))]
    #[case("Never", Some("fail"), Behaviour::Exit(1))]
    #[case("OnFailure", Some("fail"), Behaviour::CrashLoop)]
    #[case("Always", Some("succeed"), Behaviour::CrashLoop)]
    #[case("Never", Some("hang"), Behaviour::Run { ready: true })]
    #[case("Always", Some("not-ready"), Behaviour::Run { ready: false })]
    #[case("Always", Some("evict"), Behaviour::Evict)]
    fn behaviours(#[case] restart: &str, #[case] run: Option<&str>, #[case] expected: Behaviour) {
        assert_eq!(behaviour(&pod(restart, run)).0, expected);
    }

    #[test]
    fn a_started_pod_is_running_and_ready() {
        let mut p = pod("Always", None);
        start(
            &mut p,
            "172.18.0.2",
            "10.244.0.2",
            "T",
            Behaviour::Run { ready: true },
        );
        let s = &p["status"];
        assert_eq!(s["phase"], "Running");
        assert_eq!(s["podIP"], "10.244.0.2");
        assert_eq!(s["hostIPs"], json!([{"ip": "172.18.0.2"}]));
        assert_eq!(
            s["containerStatuses"][0]["state"]["running"]["startedAt"],
            "T"
        );
        assert_eq!(s["containerStatuses"][0]["ready"], true);
        assert_eq!(
            s["initContainerStatuses"][0]["state"]["terminated"]["reason"],
            "Completed"
        );
        let types: Vec<(&str, &str)> = s["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| (c["type"].as_str().unwrap(), c["status"].as_str().unwrap()))
            .collect();
        assert_eq!(
            types,
            [
                ("PodScheduled", "True"),
                ("PodReadyToStartContainers", "True"),
                ("Initialized", "True"),
                ("Ready", "True"),
                ("ContainersReady", "True")
            ]
        );
    }

    #[test]
    fn finishing_and_crashing() {
        let mut p = pod("Never", None);
        start(&mut p, "h", "i", "T1", Behaviour::Exit(1));
        stop(&mut p, 1, "T2");
        assert_eq!(p["status"]["phase"], "Failed");
        let c = &p["status"]["containerStatuses"][0];
        assert_eq!(c["state"]["terminated"]["exitCode"], 1);
        assert_eq!(c["state"]["terminated"]["startedAt"], "T1");

        let mut p = pod("Always", Some("crash-loop"));
        start(&mut p, "h", "i", "T1", Behaviour::CrashLoop);
        crash(&mut p, "T2");
        let c = &p["status"]["containerStatuses"][0];
        assert_eq!(c["restartCount"], 2);
        assert_eq!(c["state"]["waiting"]["reason"], "CrashLoopBackOff");
        assert_eq!(
            c["state"]["waiting"]["message"],
            "back-off 20s restarting failed container=app pod=p_ns(u)"
        );
        assert_eq!(p["status"]["phase"], "Running");
        assert_eq!(p["status"]["conditions"][3]["status"], "False");
    }

    #[test]
    fn back_off_doubles_to_five_minutes() {
        let secs = |d: Duration, n| back_off(d, n).as_secs();
        assert_eq!(secs(Duration::ZERO, 0), 10);
        assert_eq!(secs(Duration::ZERO, 3), 80);
        assert_eq!(secs(Duration::ZERO, 9), 300);
        assert_eq!(back_off(Duration::from_millis(100), 1).as_millis(), 200);
    }
}
