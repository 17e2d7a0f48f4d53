//! The simulated cluster (`Server::builder().simulate(true)`): nodes, scheduling, kubelets and
//! the Deployment, ReplicaSet and ReplicationController controllers, observed as a client
//! observes a real cluster.

use std::time::Duration;

use serde_json::{json, Value};

use crate::harness::{server, server_with, TestServer};

const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";
const REPLICASETS: &str = "/apis/apps/v1/namespaces/default/replicasets";
const PODS: &str = "/api/v1/namespaces/default/pods";

async fn simulated() -> TestServer {
    server_with(kubefake::Server::builder().simulate(true)).await
}

fn deployment(name: &str, replicas: i64, image: &str, strategy: Value) -> Value {
    json!({"metadata": {"name": name}, "spec": {"replicas": replicas, "strategy": strategy,
        "selector": {"matchLabels": {"app": name}},
        "template": {"metadata": {"labels": {"app": name}},
            "spec": {"containers": [{"name": "app", "image": image}]}}}})
}

fn pod(name: &str, annotations: Value, spec: Value) -> Value {
    let mut spec = spec;
    spec["containers"] = json!([{"name": "app", "image": "busybox:1.36"}]);
    json!({"metadata": {"name": name, "annotations": annotations}, "spec": spec})
}

async fn patch(server: &TestServer, path: &str, body: Value) -> (u16, Value) {
    let req = server
        .http
        .patch(server.url(path))
        .header("content-type", "application/merge-patch+json")
        .body(body.to_string());
    server.send(req).await
}

async fn items(server: &TestServer, path: &str) -> Vec<Value> {
    let (status, list) = server.get(path).await;
    assert_eq!(status, 200, "{list}");
    list["items"].as_array().cloned().unwrap_or_default()
}

/// Polls `path` until `done` holds (the timed and background steps of the simulation), at
/// most 30 s.
async fn eventually(server: &TestServer, path: &str, done: impl Fn(&Value) -> bool) -> Value {
    for _ in 0..600 {
        let (_, obj) = server.get(path).await;
        if done(&obj) {
            return obj;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{path} never reached the expected state");
}

fn condition<'a>(obj: &'a Value, kind: &str) -> &'a Value {
    obj["status"]["conditions"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["type"] == kind))
        .unwrap_or(&Value::Null)
}

fn names(list: &[Value]) -> Vec<String> {
    list.iter()
        .filter_map(|o| o["metadata"]["name"].as_str().map(String::from))
        .collect()
}

#[tokio::test]
async fn nodes_are_ready_and_renew_their_leases() {
    let server = simulated().await;
    let nodes = items(&server, "/api/v1/nodes").await;
    assert_eq!(
        names(&nodes),
        ["kubefake-node-1", "kubefake-node-2", "kubefake-node-3"]
    );
    for node in &nodes {
        assert_eq!(condition(node, "Ready")["status"], "True", "{node}");
        assert_eq!(node["status"]["allocatable"]["pods"], "110");
    }
    let leases = items(
        &server,
        "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases",
    )
    .await;
    assert_eq!(leases.len(), 3);
    assert_eq!(leases[0]["spec"]["holderIdentity"], "kubefake-node-1");
    assert_eq!(leases[0]["metadata"]["ownerReferences"][0]["kind"], "Node");
}

#[tokio::test]
async fn without_simulation_nothing_moves() {
    let server = server().await;
    assert!(items(&server, "/api/v1/nodes").await.is_empty());
    let (status, _) = server
        .post(DEPLOYMENTS, &deployment("web", 2, "nginx:1.27", json!({})))
        .await;
    assert_eq!(status, 201);
    assert!(items(&server, REPLICASETS).await.is_empty());
}

#[tokio::test]
async fn a_deployment_is_available_when_its_create_returns() {
    let server = simulated().await;
    let (status, created) = server
        .post(DEPLOYMENTS, &deployment("web", 3, "nginx:1.27", json!({})))
        .await;
    assert_eq!(status, 201, "{created}");
    let (_, web) = server.get(&format!("{DEPLOYMENTS}/web")).await;
    assert_eq!(
        web["metadata"]["generation"], 1,
        "the controller does not bump it"
    );
    assert_eq!(
        web["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
        "1"
    );
    let status = &web["status"];
    assert_eq!(
        (
            &status["observedGeneration"],
            &status["replicas"],
            &status["updatedReplicas"],
            &status["readyReplicas"],
            &status["availableReplicas"]
        ),
        (&json!(1), &json!(3), &json!(3), &json!(3), &json!(3))
    );
    assert_eq!(
        condition(&web, "Available")["reason"],
        "MinimumReplicasAvailable"
    );
    let progressing = condition(&web, "Progressing");
    assert_eq!(progressing["reason"], "NewReplicaSetAvailable");

    let sets = items(&server, REPLICASETS).await;
    assert_eq!(sets.len(), 1);
    let rs = &sets[0];
    let hash = rs["metadata"]["labels"]["pod-template-hash"]
        .as_str()
        .expect("hash label");
    assert_eq!(rs["metadata"]["name"], format!("web-{hash}"));
    assert_eq!(
        rs["spec"]["selector"]["matchLabels"]["pod-template-hash"],
        hash
    );
    assert_eq!(rs["metadata"]["ownerReferences"][0]["name"], "web");
    assert_eq!(rs["status"]["readyReplicas"], 3);
    assert_eq!(
        progressing["message"],
        format!("ReplicaSet \"web-{hash}\" has successfully progressed.")
    );

    let pods = items(&server, PODS).await;
    assert_eq!(pods.len(), 3);
    let mut nodes: Vec<&str> = pods
        .iter()
        .map(|p| p["spec"]["nodeName"].as_str().unwrap_or(""))
        .collect();
    nodes.sort();
    assert_eq!(
        nodes,
        ["kubefake-node-1", "kubefake-node-2", "kubefake-node-3"],
        "spread over the nodes"
    );
    for p in &pods {
        assert!(p["metadata"]["name"]
            .as_str()
            .unwrap_or("")
            .starts_with(&format!("web-{hash}-")));
        assert_eq!(p["status"]["phase"], "Running");
        assert!(p["status"]["podIP"]
            .as_str()
            .unwrap_or("")
            .starts_with("10.244."));
        assert_eq!(condition(p, "Ready")["status"], "True");
        assert_eq!(condition(p, "PodScheduled")["status"], "True");
        let container = &p["status"]["containerStatuses"][0];
        assert_eq!(container["ready"], true);
        assert_eq!(container["image"], "nginx:1.27");
        assert!(container["state"]["running"]["startedAt"].is_string());
    }
}

#[tokio::test]
async fn an_image_change_rolls_out_and_an_undo_rolls_back() {
    let server = simulated().await;
    let strategy = json!({"type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}});
    server
        .post(DEPLOYMENTS, &deployment("web", 3, "nginx:1.27", strategy))
        .await;
    let (_, before) = server.get(&format!("{DEPLOYMENTS}/web")).await;
    let template = before["spec"]["template"].clone();
    let mut changed = template.clone();
    changed["spec"]["containers"][0]["image"] = json!("nginx:1.28");
    let (status, _) = patch(
        &server,
        &format!("{DEPLOYMENTS}/web"),
        json!({"spec": {"template": changed}}),
    )
    .await;
    assert_eq!(status, 200);
    let (_, web) = server.get(&format!("{DEPLOYMENTS}/web")).await;
    assert_eq!(web["status"]["observedGeneration"], 2);
    assert_eq!(web["status"]["updatedReplicas"], 3);
    assert_eq!(web["status"]["replicas"], 3, "old pods are gone");
    assert_eq!(
        web["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
        "2"
    );
    let sets = items(&server, REPLICASETS).await;
    let replicas = |image: &str| {
        sets.iter()
            .find(|rs| rs["spec"]["template"]["spec"]["containers"][0]["image"] == image)
            .map(|rs| {
                (
                    rs["spec"]["replicas"].clone(),
                    rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"].clone(),
                )
            })
    };
    assert_eq!(replicas("nginx:1.27"), Some((json!(0), json!("1"))));
    assert_eq!(replicas("nginx:1.28"), Some((json!(3), json!("2"))));
    let pods = items(&server, PODS).await;
    assert_eq!(pods.len(), 3);
    assert!(pods
        .iter()
        .all(|p| p["spec"]["containers"][0]["image"] == "nginx:1.28"));

    // What `kubectl rollout undo` does: the old template back; its ReplicaSet is the new one.
    patch(
        &server,
        &format!("{DEPLOYMENTS}/web"),
        json!({"spec": {"template": template}}),
    )
    .await;
    let sets = items(&server, REPLICASETS).await;
    assert_eq!(sets.len(), 2, "no third ReplicaSet");
    let replicas = |image: &str| {
        sets.iter()
            .find(|rs| rs["spec"]["template"]["spec"]["containers"][0]["image"] == image)
            .map(|rs| {
                (
                    rs["spec"]["replicas"].clone(),
                    rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"].clone(),
                )
            })
    };
    assert_eq!(replicas("nginx:1.27"), Some((json!(3), json!("3"))));
    assert_eq!(replicas("nginx:1.28"), Some((json!(0), json!("2"))));
}

#[tokio::test]
async fn recreate_removes_every_old_pod_before_the_first_new_one() {
    let server = simulated().await;
    server
        .post(
            DEPLOYMENTS,
            &deployment("db", 2, "postgres:16", json!({"type": "Recreate"})),
        )
        .await;
    let rv = server.rv();
    let (_, db) = server.get(&format!("{DEPLOYMENTS}/db")).await;
    let mut changed = db["spec"]["template"].clone();
    changed["spec"]["containers"][0]["image"] = json!("postgres:17");
    patch(
        &server,
        &format!("{DEPLOYMENTS}/db"),
        json!({"spec": {"template": changed}}),
    )
    .await;
    // The pod events since, in order, from a watch that resumes at the resourceVersion.
    let url = server.url(&format!(
        "{PODS}?watch=1&resourceVersion={rv}&timeoutSeconds=1"
    ));
    let body = server
        .http
        .get(url)
        .send()
        .await
        .expect("watch")
        .text()
        .await
        .expect("events");
    let events: Vec<(String, String)> = body
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|e| {
            let image = e["object"]["spec"]["containers"][0]["image"]
                .as_str()
                .unwrap_or("")
                .to_string();
            (e["type"].as_str().unwrap_or("").to_string(), image)
        })
        .collect();
    let last_old_delete = events
        .iter()
        .rposition(|(t, image)| t == "DELETED" && image == "postgres:16")
        .expect("old pods deleted");
    let first_new_add = events
        .iter()
        .position(|(t, image)| t == "ADDED" && image == "postgres:17")
        .expect("new pods added");
    assert!(last_old_delete < first_new_add, "{events:?}");
    let (_, db) = server.get(&format!("{DEPLOYMENTS}/db")).await;
    assert_eq!(db["status"]["availableReplicas"], 2);
}

#[tokio::test]
async fn scaling_pausing_and_history() {
    let server = simulated().await;
    let mut web = deployment("web", 2, "nginx:1", json!({}));
    web["spec"]["revisionHistoryLimit"] = json!(1);
    server.post(DEPLOYMENTS, &web).await;
    let (status, _) = patch(
        &server,
        &format!("{DEPLOYMENTS}/web/scale"),
        json!({"spec": {"replicas": 4}}),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(items(&server, PODS).await.len(), 4);
    for image in ["nginx:2", "nginx:3"] {
        let (_, current) = server.get(&format!("{DEPLOYMENTS}/web")).await;
        let mut t = current["spec"]["template"].clone();
        t["spec"]["containers"][0]["image"] = json!(image);
        patch(
            &server,
            &format!("{DEPLOYMENTS}/web"),
            json!({"spec": {"template": t}}),
        )
        .await;
    }
    let sets = items(&server, REPLICASETS).await;
    assert_eq!(sets.len(), 2, "one old ReplicaSet kept: {:?}", names(&sets));

    patch(
        &server,
        &format!("{DEPLOYMENTS}/web"),
        json!({"spec": {"paused": true}}),
    )
    .await;
    let (_, current) = server.get(&format!("{DEPLOYMENTS}/web")).await;
    let mut t = current["spec"]["template"].clone();
    t["spec"]["containers"][0]["image"] = json!("nginx:4");
    patch(
        &server,
        &format!("{DEPLOYMENTS}/web"),
        json!({"spec": {"template": t}}),
    )
    .await;
    let (_, paused) = server.get(&format!("{DEPLOYMENTS}/web")).await;
    assert_eq!(
        condition(&paused, "Progressing")["reason"],
        "DeploymentPaused"
    );
    assert_eq!(
        items(&server, REPLICASETS).await.len(),
        2,
        "no rollout while paused"
    );
    patch(
        &server,
        &format!("{DEPLOYMENTS}/web"),
        json!({"spec": {"paused": false}}),
    )
    .await;
    let (_, resumed) = server.get(&format!("{DEPLOYMENTS}/web")).await;
    assert_eq!(resumed["status"]["updatedReplicas"], 4);
    assert_eq!(
        condition(&resumed, "Progressing")["reason"],
        "NewReplicaSetAvailable"
    );
}

#[tokio::test]
async fn replication_controllers_and_replica_sets_keep_their_pods() {
    let server = simulated().await;
    let rc = json!({"metadata": {"name": "legacy"}, "spec": {"replicas": 2,
        "selector": {"app": "legacy"}, "template": {"metadata": {"labels": {"app": "legacy"}},
        "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}});
    let rcs = "/api/v1/namespaces/default/replicationcontrollers";
    assert_eq!(server.post(rcs, &rc).await.0, 201);
    let pods = items(&server, PODS).await;
    assert_eq!(pods.len(), 2);
    // A pod deleted by hand is replaced.
    let victim = pods[0]["metadata"]["name"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let (status, _) = server
        .send(server.http.delete(server.url(&format!("{PODS}/{victim}"))))
        .await;
    assert_eq!(status, 200);
    let pods = items(&server, PODS).await;
    assert_eq!(pods.len(), 2);
    assert!(!names(&pods).contains(&victim));
    let (_, legacy) = server.get(&format!("{rcs}/legacy")).await;
    assert_eq!(legacy["status"]["readyReplicas"], 2);
    assert_eq!(legacy["status"]["availableReplicas"], 2);
}

#[tokio::test]
async fn a_pod_no_node_fits_stays_pending_with_the_schedulers_reason() {
    let server = simulated().await;
    let p = pod("picky", json!({}), json!({"nodeSelector": {"disk": "ssd"}}));
    assert_eq!(server.post(PODS, &p).await.0, 201);
    let (_, picky) = server.get(&format!("{PODS}/picky")).await;
    assert_eq!(picky["status"]["phase"], "Pending");
    let scheduled = condition(&picky, "PodScheduled");
    assert_eq!(scheduled["status"], "False");
    assert_eq!(scheduled["reason"], "Unschedulable");
    assert_eq!(
        scheduled["message"],
        "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling."
    );
}

#[tokio::test]
async fn annotations_steer_what_pods_do() {
    let server = simulated().await;
    let run = |how: &str| json!({"simulation.kubefake.io/run": how});
    let never = json!({"restartPolicy": "Never"});
    server
        .post(PODS, &pod("crashy", run("crash-loop"), json!({})))
        .await;
    server
        .post(PODS, &pod("shy", run("not-ready"), json!({})))
        .await;
    server
        .post(PODS, &pod("failing", run("fail"), never.clone()))
        .await;
    server
        .post(PODS, &pod("done", json!({}), never.clone()))
        .await;
    let slow = json!({"simulation.kubefake.io/run": "succeed",
        "simulation.kubefake.io/duration": "300ms"});
    server.post(PODS, &pod("slow", slow, never)).await;

    let (_, crashy) = server.get(&format!("{PODS}/crashy")).await;
    let c = &crashy["status"]["containerStatuses"][0];
    assert_eq!(c["restartCount"], 1);
    assert_eq!(c["state"]["waiting"]["reason"], "CrashLoopBackOff");
    assert_eq!(c["lastState"]["terminated"]["exitCode"], 1);
    assert_eq!(condition(&crashy, "Ready")["status"], "False");

    let (_, shy) = server.get(&format!("{PODS}/shy")).await;
    assert_eq!(shy["status"]["phase"], "Running");
    assert_eq!(condition(&shy, "Ready")["reason"], "ContainersNotReady");

    let (_, failing) = server.get(&format!("{PODS}/failing")).await;
    assert_eq!(failing["status"]["phase"], "Failed");
    let terminated = &failing["status"]["containerStatuses"][0]["state"]["terminated"];
    assert_eq!(
        (&terminated["exitCode"], &terminated["reason"]),
        (&json!(1), &json!("Error"))
    );
    let (_, done) = server.get(&format!("{PODS}/done")).await;
    assert_eq!(done["status"]["phase"], "Succeeded");
    assert_eq!(condition(&done, "Ready")["reason"], "PodCompleted");

    let (_, slow) = server.get(&format!("{PODS}/slow")).await;
    assert_eq!(
        slow["status"]["phase"], "Running",
        "still running for 300 ms"
    );
    eventually(&server, &format!("{PODS}/slow"), |p| {
        p["status"]["phase"] == "Succeeded"
    })
    .await;
}

#[tokio::test]
async fn configured_nodes_and_taints() {
    let nodes = kubefake::Simulation {
        nodes: vec![
            kubefake::SimulatedNode::new("small").capacity("pods", "1"),
            kubefake::SimulatedNode::new("gpu").taint("gpu", "true", "NoSchedule"),
        ],
    };
    let server = server_with(kubefake::Server::builder().simulation(nodes)).await;
    for name in ["a", "b"] {
        server.post(PODS, &pod(name, json!({}), json!({}))).await;
    }
    let (_, a) = server.get(&format!("{PODS}/a")).await;
    assert_eq!(a["spec"]["nodeName"], "small");
    let (_, b) = server.get(&format!("{PODS}/b")).await;
    assert_eq!(
        condition(&b, "PodScheduled")["message"],
        "0/2 nodes are available: 1 Too many pods, 1 node(s) had untolerated taint {gpu: true}. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."
    );
    // Room made: the waiting pod is tried again and runs.
    let (status, _) = server
        .send(server.http.delete(server.url(&format!("{PODS}/a"))))
        .await;
    assert_eq!(status, 200);
    let (_, b) = server.get(&format!("{PODS}/b")).await;
    assert_eq!(b["spec"]["nodeName"], "small", "{b}");
    assert_eq!(b["status"]["phase"], "Running");
}

#[tokio::test]
async fn deleting_a_deployment_collects_its_replica_sets_and_pods() {
    let server = simulated().await;
    server
        .post(DEPLOYMENTS, &deployment("web", 2, "nginx:1", json!({})))
        .await;
    assert_eq!(items(&server, PODS).await.len(), 2);
    let (status, _) = server
        .send(
            server
                .http
                .delete(server.url(&format!("{DEPLOYMENTS}/web"))),
        )
        .await;
    assert_eq!(status, 200);
    assert!(items(&server, REPLICASETS).await.is_empty());
    assert!(items(&server, PODS).await.is_empty());
}

#[tokio::test]
async fn a_deleted_pod_terminates_then_goes() {
    let server = simulated().await;
    server.post(PODS, &pod("web", json!({}), json!({}))).await;
    let rv = server.rv();
    let (status, deleted) = server
        .send(server.http.delete(server.url(&format!("{PODS}/web"))))
        .await;
    assert_eq!(status, 200, "{deleted}");
    assert_eq!(
        deleted["metadata"]["deletionGracePeriodSeconds"], 30,
        "{deleted}"
    );
    assert!(deleted["metadata"]["deletionTimestamp"].is_string());
    assert_eq!(
        server.get(&format!("{PODS}/web")).await.0,
        404,
        "gone once stopped"
    );
    let url = server.url(&format!(
        "{PODS}?watch=1&resourceVersion={rv}&timeoutSeconds=1"
    ));
    let body = server
        .http
        .get(url)
        .send()
        .await
        .expect("watch")
        .text()
        .await
        .expect("events");
    let events: Vec<(String, Value, Value)> = body
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|e| {
            (
                e["type"].as_str().unwrap_or("").to_string(),
                e["object"]["metadata"]["deletionTimestamp"].clone(),
                e["object"]["status"]["phase"].clone(),
            )
        })
        .collect();
    let kinds: Vec<&str> = events.iter().map(|(t, _, _)| t.as_str()).collect();
    assert_eq!(kinds, ["MODIFIED", "MODIFIED", "DELETED"], "{events:?}");
    assert!(events[0].1.is_string(), "marked terminating first");
    assert_eq!(events[1].2, "Succeeded", "then its containers stop");

    // Without a simulation nothing would ever stop it, so a DELETE removes a pod at once.
    let plain = server_with(kubefake::Server::builder()).await;
    plain
        .post(PODS, &pod("web", json!({}), json!({"nodeName": "n1"})))
        .await;
    let (_, deleted) = plain
        .send(plain.http.delete(plain.url(&format!("{PODS}/web"))))
        .await;
    assert!(
        deleted["metadata"].get("deletionTimestamp").is_none(),
        "{deleted}"
    );
}

#[tokio::test]
async fn services_get_the_endpoints_of_running_pods() {
    let server = simulated().await;
    let service = json!({"metadata": {"name": "web"}, "spec": {"selector": {"app": "web"},
        "ports": [{"port": 80, "targetPort": 8080}]}});
    assert_eq!(
        server
            .post("/api/v1/namespaces/default/services", &service)
            .await
            .0,
        201
    );
    server
        .post(DEPLOYMENTS, &deployment("web", 2, "nginx:1", json!({})))
        .await;
    let mut shy = pod(
        "shy",
        json!({"simulation.kubefake.io/run": "not-ready"}),
        json!({}),
    );
    shy["metadata"]["labels"] = json!({"app": "web"});
    server.post(PODS, &shy).await;
    let (_, endpoints) = server.get("/api/v1/namespaces/default/endpoints/web").await;
    let subset = &endpoints["subsets"][0];
    assert_eq!(
        subset["addresses"].as_array().map(Vec::len),
        Some(2),
        "{endpoints}"
    );
    assert_eq!(subset["notReadyAddresses"][0]["targetRef"]["name"], "shy");
    assert_eq!(subset["ports"][0]["port"], 8080);
    assert!(subset["addresses"][0]["ip"]
        .as_str()
        .unwrap_or("")
        .starts_with("10.244."));
    let slices = items(
        &server,
        "/apis/discovery.k8s.io/v1/namespaces/default/endpointslices?labelSelector=kubernetes.io/service-name=web",
    )
    .await;
    let ready: Vec<bool> = slices[0]["endpoints"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| e["conditions"]["ready"] == true)
        .collect();
    assert_eq!(ready.iter().filter(|r| **r).count(), 2, "{ready:?}");
    assert_eq!(ready.len(), 3);
}

#[tokio::test]
async fn a_large_deployment_goes_on_in_the_background() {
    let nodes = kubefake::Simulation::with_nodes(6);
    let server = server_with(kubefake::Server::builder().simulation(nodes)).await;
    let (status, _) = server
        .post(DEPLOYMENTS, &deployment("big", 600, "nginx:1", json!({})))
        .await;
    assert_eq!(status, 201, "the create returns after its first steps");
    let big = eventually(&server, &format!("{DEPLOYMENTS}/big"), |d| {
        d["status"]["availableReplicas"] == 600
    })
    .await;
    assert_eq!(condition(&big, "Available")["status"], "True");
}

#[tokio::test]
async fn huge_numbers_from_clients_do_not_hurt_the_server() {
    let server = simulated().await;
    server.post(PODS, &pod("web", json!({}), json!({}))).await;
    // A grace period no clock can add is still a graceful delete, not a crash.
    let url = server.url(&format!(
        "{PODS}/web?gracePeriodSeconds=9223372036854775807"
    ));
    let (status, body) = server.send(server.http.delete(url)).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(server.get(&format!("{PODS}/web")).await.0, 404);
    assert_eq!(server.get("/readyz").await.0, 200);
}
