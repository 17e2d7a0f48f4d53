//! README's Rust snippets, compiled and run as README shows them: the body of each module below
//! is a ```rust block of README.md, and `readme_shows_these_snippets` checks that it still is.

mod quickstart {
    use k8s_openapi::api::core::v1::Namespace;
    use kube::api::{Api, ListParams};

    #[tokio::test]
    async fn my_controller_works() {
        // 127.0.0.1, a random port; server.url(), server.kubeconfig_path() for other clients
        let server = kubefake::Server::start().await.unwrap();
        let client = server.client().unwrap(); // a kube::Client (feature "kube")
        let namespaces: Api<Namespace> = Api::all(client);
        let list = namespaces.list(&ListParams::default()).await.unwrap();
        assert_eq!(list.items.len(), 4); // default, kube-node-lease, kube-public, kube-system
    } // dropping the handle stops the server and ends its watch streams
}

mod rstest_fixture {
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::{Api, PostParams};
    use rstest::{fixture, rstest};

    #[fixture]
    async fn server() -> kubefake::ServerHandle {
        kubefake::Server::start().await.unwrap()
    }

    #[rstest]
    #[tokio::test]
    async fn stores_a_config_map(#[future] server: kubefake::ServerHandle) {
        let server = server.await;
        let config_maps: Api<ConfigMap> = Api::default_namespaced(server.client().unwrap());
        let mut settings = ConfigMap::default();
        settings.metadata.name = Some("settings".into());
        config_maps
            .create(&PostParams::default(), &settings)
            .await
            .unwrap();
        let stored = config_maps.get("settings").await.unwrap();
        assert!(stored.metadata.uid.is_some());
    }
}

mod snapshots_reset {
    use k8s_openapi::api::core::v1::ConfigMap;
    use kube::api::{Api, PostParams};
    use serde_json::json;

    #[tokio::test]
    async fn each_case_starts_from_the_same_state() -> Result<(), Box<dyn std::error::Error>> {
        let server = kubefake::Server::start().await?; // once per suite in real life
        let _dump = server.dump_on_panic(); // a failing test prints every object
        let configmaps: Api<ConfigMap> = Api::default_namespaced(server.client()?);
        let settings = |case: &str| -> ConfigMap {
            serde_json::from_value(
                json!({"metadata": {"name": "settings"}, "data": {"case": case}}),
            )
            .unwrap()
        };
        for case in ["first", "second"] {
            // The same name in every case: the reset removed the previous one.
            configmaps
                .create(&PostParams::default(), &settings(case))
                .await?;
            server.reset().await?;
        }
        let before = server.snapshot()?; // an id, e.g. "snapshot-1"
        configmaps
            .create(&PostParams::default(), &settings("third"))
            .await?;
        server.restore(&before).await?; // as it was
        assert!(configmaps.get_opt("settings").await?.is_none());
        Ok(())
    }
}

/// The bodies of this file's top-level `mod NAME { ... }` blocks, unindented.
fn snippets(source: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut current: Option<String> = None;
    for line in source.lines() {
        match current.as_mut() {
            None if line.starts_with("mod ") && line.ends_with('{') => {
                current = Some(String::new())
            }
            None => {}
            Some(body) if line == "}" => {
                found.push(std::mem::take(body));
                current = None;
            }
            Some(body) => {
                body.push_str(line.strip_prefix("    ").unwrap_or(line));
                body.push('\n');
            }
        }
    }
    found
}

#[test]
fn readme_shows_these_snippets() {
    let readme = include_str!("../../README.md");
    let blocks = snippets(include_str!("readme.rs"));
    assert_eq!(blocks.len(), 3);
    for block in blocks {
        assert!(
            readme.contains(&format!("```rust\n{block}```\n")),
            "README.md lacks this block, as tests/api/readme.rs has it:\n{block}"
        );
    }
}
