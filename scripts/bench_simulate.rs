//! Simulated-cluster benchmark: what it costs to have Deployments roll out and pods run in
//! process. Run with `cargo bench --bench simulate`. Every request goes over HTTP like a
//! client's; a Deployment's create returns once it is Available (the controllers run before
//! the response), so the time of the POST is the time to Available.

use std::time::{Duration, Instant};

use serde_json::{json, Value};

fn deployment(name: &str, replicas: usize, image: &str) -> Value {
    json!({"metadata": {"name": name}, "spec": {"replicas": replicas,
        "selector": {"matchLabels": {"app": name}},
        "template": {"metadata": {"labels": {"app": name}},
            "spec": {"containers": [{"name": "app", "image": image}]}}}})
}

async fn start(nodes: Option<usize>) -> kubefake::ServerHandle {
    let mut builder = kubefake::Server::builder();
    if let Some(n) = nodes {
        builder = builder.simulation(kubefake::Simulation::with_nodes(n));
    }
    builder.start().await.expect("start")
}

fn ms(d: Duration) -> String {
    format!("{:.2} ms", d.as_secs_f64() * 1e3)
}

async fn start_times() {
    for (label, nodes) in [("plain", None), ("simulated, 3 nodes", Some(3))] {
        let runs = 50;
        let began = Instant::now();
        for _ in 0..runs {
            drop(start(nodes).await);
        }
        println!("| server start, {label} | {} |", ms(began.elapsed() / runs));
    }
}

async fn deployment_to_available(replicas: usize, nodes: usize) {
    let server = start(Some(nodes)).await;
    let http = reqwest::Client::new();
    let url = format!(
        "{}/apis/apps/v1/namespaces/default/deployments",
        server.url()
    );
    let began = Instant::now();
    let resp = http
        .post(&url)
        .json(&deployment("web", replicas, "nginx:1.27"))
        .send()
        .await
        .expect("create");
    assert_eq!(resp.status(), 201);
    // Past a few hundred pods the rest goes on in the background: poll until Available.
    loop {
        let web: Value = http
            .get(format!("{url}/web"))
            .send()
            .await
            .expect("get")
            .json()
            .await
            .expect("json");
        if web["status"]["availableReplicas"] == replicas
            && web["status"]["updatedReplicas"] == replicas
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    let created = began.elapsed();
    println!(
        "| Deployment of {replicas} replicas, create -> Available ({nodes} nodes) | {} |",
        ms(created)
    );
    let began = Instant::now();
    let image = json!({"spec": {"template": {"spec": {"containers": [
        {"name": "app", "image": "nginx:1.28"}]}}}});
    let resp = http
        .patch(format!("{url}/web"))
        .header("content-type", "application/strategic-merge-patch+json")
        .body(image.to_string())
        .send()
        .await
        .expect("patch");
    assert_eq!(resp.status(), 200);
    loop {
        let web: Value = http
            .get(format!("{url}/web"))
            .send()
            .await
            .expect("get")
            .json()
            .await
            .expect("json");
        let done = web["status"]["updatedReplicas"] == replicas
            && web["status"]["replicas"] == replicas
            && web["status"]["availableReplicas"] == replicas;
        if done {
            break;
        }
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    println!(
        "| its rolling update (25% surge/unavailable) to a new image | {} |",
        ms(began.elapsed())
    );
}

async fn bare_pods(count: usize, nodes: Option<usize>) {
    let server = start(nodes).await;
    let http = reqwest::Client::new();
    let url = format!("{}/api/v1/namespaces/default/pods", server.url());
    let began = Instant::now();
    for i in 0..count {
        let pod = json!({"metadata": {"name": format!("p{i}")},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]}});
        let resp = http.post(&url).json(&pod).send().await.expect("create");
        assert_eq!(resp.status(), 201);
    }
    let elapsed = began.elapsed();
    let Some(nodes) = nodes else {
        println!(
            "| {count} pods created one by one, not simulated (they stay Pending) | {} ({:.0} pods/s) |",
            ms(elapsed),
            count as f64 / elapsed.as_secs_f64()
        );
        return;
    };
    let list: Value = http
        .get(format!("{url}?fieldSelector=status.phase=Running"))
        .send()
        .await
        .expect("list")
        .json()
        .await
        .expect("json");
    assert_eq!(list["items"].as_array().map(Vec::len), Some(count));
    println!(
        "| {count} pods created one by one, each scheduled and Running ({nodes} nodes) | {} ({:.0} pods/s) |",
        ms(elapsed),
        count as f64 / elapsed.as_secs_f64()
    );
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    println!("| simulated cluster | time |");
    println!("|---|---:|");
    start_times().await;
    deployment_to_available(3, 3).await;
    deployment_to_available(100, 3).await;
    deployment_to_available(1_000, 10).await;
    bare_pods(1_000, None).await;
    bare_pods(1_000, Some(10)).await;
}
