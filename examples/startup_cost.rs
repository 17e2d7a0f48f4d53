//! What a test pays for a kubefake server in the build it runs in: the first server of the
//! process (which builds the catalog's index and reads the compiled recording of the start,
//! both shared by every later server), then the median of 30 more
//! `Server::start()` (127.0.0.1, a random port, the built-in kinds served), of their
//! `server.client()` (a kube-rs `Client` with its HTTP stack) and of their first request.
//!
//! `cargo run --example startup_cost --features kube` measures a debug build, as `cargo test`
//! builds; add `--release`, or `--config 'profile.dev.package.kubefake.opt-level=3'`, to see what
//! optimising kubefake buys (README, "Debug builds"). An argument sets how many later servers
//! are started (`0`: the first alone), for `valgrind --tool=callgrind`, which counts the
//! instructions of each `Server::start()` whatever else the machine runs; a second argument
//! `rbac` starts every server with RBAC (its bootstrap policy's objects). The first server
//! also creates the process's first Deployment and applies its first strategic merge patch,
//! which decode the published schemas they reach (`kubefake::endpoints::write::create` and
//! `kubefake::endpoints::patch::strategic` in callgrind).

use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::Deployment;
use kube::api::{Api, DynamicObject, ListParams, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, GroupVersionKind};

/// Later servers measured unless the command line says otherwise.
const RUNS: usize = 30;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples.get(samples.len() / 2).copied().unwrap_or_default()
}

/// What one server cost: its start, its client, its first list of namespaces.
struct Costs {
    start: Duration,
    client: Duration,
    first_list: Duration,
    /// The first Deployment's create and strategic merge patch, when asked for.
    first_deployment: Option<(Duration, Duration)>,
}

async fn one_server(
    namespaces: &ApiResource,
    mode: kubefake::AuthorizationMode,
    patch: bool,
) -> Result<Costs, Box<dyn std::error::Error>> {
    let began = Instant::now();
    let server = match mode {
        kubefake::AuthorizationMode::AlwaysAllow => kubefake::Server::start().await?,
        _ => {
            let builder = kubefake::Server::builder().authorization_mode(mode);
            builder.start().await?
        }
    };
    let start = began.elapsed();
    let began = Instant::now();
    let client = server.client()?;
    let client_cost = began.elapsed();
    let began = Instant::now();
    let api: Api<DynamicObject> = Api::all_with(client, namespaces);
    api.list(&ListParams::default()).await?;
    let first_list = began.elapsed();
    let first_deployment = match patch {
        true => Some(first_deployment(server.client()?).await?),
        false => None,
    };
    server.shutdown().await;
    Ok(Costs {
        start,
        client: client_cost,
        first_list,
        first_deployment,
    })
}

/// The first Deployment create of the process, then its first strategic merge patch (the
/// container's image).
async fn first_deployment(
    client: kube::Client,
) -> Result<(Duration, Duration), Box<dyn std::error::Error>> {
    let deployments: Api<Deployment> = Api::default_namespaced(client);
    let deployment = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "web"},
        "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1"}]}
            }
        }
    }))?;
    let began = Instant::now();
    deployments
        .create(&PostParams::default(), &deployment)
        .await?;
    let create = began.elapsed();
    let patch = serde_json::json!({"spec": {"template": {"spec": {
        "containers": [{"name": "web", "image": "nginx:2"}]
    }}}});
    let began = Instant::now();
    deployments
        .patch("web", &PatchParams::default(), &Patch::Strategic(patch))
        .await?;
    Ok((create, began.elapsed()))
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let namespaces = ApiResource::from_gvk(&GroupVersionKind::gvk("", "v1", "Namespace"));
    let runs = match std::env::args().nth(1) {
        Some(n) => n.parse()?,
        None => RUNS,
    };
    let mode = match std::env::args().nth(2).as_deref() {
        Some("rbac") => kubefake::AuthorizationMode::Rbac,
        _ => kubefake::AuthorizationMode::AlwaysAllow,
    };
    let first = one_server(&namespaces, mode, true).await?;
    let (mut starts, mut clients, mut firsts) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..runs {
        let costs = one_server(&namespaces, mode, false).await?;
        starts.push(costs.start);
        clients.push(costs.client);
        firsts.push(costs.first_list);
    }
    let profile = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    println!(
        "{profile} build, first server of the process: Server::start() {:.2} ms, server.client() {:.2} ms, first list {:.2} ms",
        ms(first.start),
        ms(first.client),
        ms(first.first_list),
    );
    let (create, patch) = first.first_deployment.unwrap_or_default();
    println!(
        "{profile} build, first Deployment of the process: create {:.2} ms, strategic merge patch {:.2} ms",
        ms(create),
        ms(patch)
    );
    if runs == 0 {
        return Ok(());
    }
    println!(
        "{profile} build, each later server (median of {runs}): Server::start() {:.2} ms, server.client() {:.2} ms, first list {:.2} ms",
        ms(median(starts)),
        ms(median(clients)),
        ms(median(firsts)),
    );
    Ok(())
}
