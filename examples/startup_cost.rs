//! What a test pays for a kubefake server in the build it runs in: the median of 30
//! `Server::start()` (127.0.0.1, a random port, the built-in kinds served) and of 30
//! `server.client()` (a kube-rs `Client` with its HTTP stack), then the first request.
//!
//! `cargo run --example startup_cost --features kube` measures a debug build, as `cargo test`
//! builds; add `--release`, or `--config 'profile.dev.package.kubefake.opt-level=3'`, to see what
//! optimising kubefake buys (README, "Debug builds").

use std::time::{Duration, Instant};

use kube::api::{Api, DynamicObject, ListParams};
use kube::core::{ApiResource, GroupVersionKind};

const RUNS: usize = 30;

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let (mut starts, mut clients, mut firsts) = (Vec::new(), Vec::new(), Vec::new());
    let namespaces = ApiResource::from_gvk(&GroupVersionKind::gvk("", "v1", "Namespace"));
    for _ in 0..RUNS {
        let began = Instant::now();
        let server = kubefake::Server::start().await?;
        starts.push(began.elapsed());
        let began = Instant::now();
        let client = server.client()?;
        clients.push(began.elapsed());
        let began = Instant::now();
        let api: Api<DynamicObject> = Api::all_with(client, &namespaces);
        api.list(&ListParams::default()).await?;
        firsts.push(began.elapsed());
        server.shutdown().await;
    }
    let profile = if cfg!(debug_assertions) {
        "debug"
    } else {
        "release"
    };
    println!(
        "{profile} build, median of {RUNS}: Server::start() {:.2} ms, server.client() {:.2} ms, first list {:.2} ms",
        median(starts).as_secs_f64() * 1e3,
        median(clients).as_secs_f64() * 1e3,
        median(firsts).as_secs_f64() * 1e3,
    );
    Ok(())
}
