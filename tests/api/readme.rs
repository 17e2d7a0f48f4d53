//! README's Rust snippets, compiled and run as the documentation shows them: the body of each
//! module below is a ```rust block of README.md or of a page of docs/, and
//! `readme_shows_these_snippets` checks that it still is; `markdown_links_resolve` checks every
//! relative link of README.md, CHANGELOG.md and docs/.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

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

/// README.md, CHANGELOG.md and the pages of docs/, by their paths from the repository's root,
/// read as they are now.
fn markdown_files() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut names = vec!["README.md".to_string(), "CHANGELOG.md".to_string()];
    let mut pages: Vec<String> = fs::read_dir(root.join("docs"))
        .expect("docs/")
        .map(|entry| {
            entry
                .expect("docs/ entry")
                .file_name()
                .to_string_lossy()
                .into_owned()
        })
        .filter(|name| name.ends_with(".md"))
        .map(|name| format!("docs/{name}"))
        .collect();
    pages.sort();
    names.extend(pages);
    names
        .into_iter()
        .map(|name| {
            let text =
                fs::read_to_string(root.join(&name)).unwrap_or_else(|e| panic!("{name}: {e}"));
            (name, text)
        })
        .collect()
}

#[test]
fn readme_shows_these_snippets() {
    let files = markdown_files();
    let blocks = snippets(include_str!("readme.rs"));
    assert_eq!(blocks.len(), 3);
    for block in blocks {
        let fenced = format!("```rust\n{block}```\n");
        assert!(
            files
                .iter()
                .any(|(name, text)| (name == "README.md" || name.starts_with("docs/"))
                    && text.contains(&fenced)),
            "neither README.md nor a page of docs/ holds this block, as tests/api/readme.rs has it:\n{block}"
        );
    }
}

/// The lines of a Markdown text outside its fenced code blocks, with their inline code spans
/// removed.
fn prose_lines(text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        // Every other piece between backticks is code.
        let prose: String = line
            .split('`')
            .enumerate()
            .filter(|(i, _)| i % 2 == 0)
            .map(|(_, piece)| piece)
            .collect::<Vec<_>>()
            .join(" ");
        lines.push(prose);
    }
    lines
}

/// The anchors GitHub gives the headings of a Markdown text: lower case, letters, digits, `-`
/// and `_` kept, spaces made `-`, everything else dropped; a repeated one numbered `-1`, `-2`...
fn anchors(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        let hashes = line.chars().take_while(|&c| c == '#').count();
        if fenced || !(1..=6).contains(&hashes) || !line[hashes..].starts_with(' ') {
            continue;
        }
        let slug: String = line[hashes..]
            .trim()
            .to_lowercase()
            .chars()
            .filter_map(|c| match c {
                ' ' => Some('-'),
                c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
                _ => None,
            })
            .collect();
        let mut anchor = slug.clone();
        let mut n = 0;
        while found.contains(&anchor) {
            n += 1;
            anchor = format!("{slug}-{n}");
        }
        found.insert(anchor);
    }
    found
}

/// The targets of the inline links (`[text](target)`, images too) of a Markdown text, outside
/// code.
fn link_targets(text: &str) -> Vec<String> {
    let mut targets = Vec::new();
    for line in prose_lines(text) {
        let mut rest = line.as_str();
        while let Some(at) = rest.find("](") {
            rest = &rest[at + 2..];
            let end = rest.find(')').unwrap_or(rest.len());
            targets.push(rest[..end].to_string());
            rest = &rest[end..];
        }
    }
    targets
}

#[test]
fn markdown_links_resolve() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let files = markdown_files();
    let mut broken = Vec::new();
    let mut linked_from_readme = BTreeSet::new();
    for (name, text) in &files {
        let dir = Path::new(name).parent().unwrap_or(Path::new(""));
        for target in link_targets(text) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            let (path, anchor) = match target.split_once('#') {
                Some((path, anchor)) => (path, Some(anchor)),
                None => (target.as_str(), None),
            };
            // The target's path from the repository's root, `..` resolved.
            let mut parts: Vec<&str> = dir.iter().map(|p| p.to_str().unwrap()).collect();
            if path.is_empty() {
                parts = Path::new(name)
                    .iter()
                    .map(|p| p.to_str().unwrap())
                    .collect();
            } else {
                for part in path.split('/') {
                    match part {
                        "" | "." => {}
                        ".." if parts.pop().is_some() => {}
                        ".." => broken.push(format!("{name}: {target} leaves the repository")),
                        part => parts.push(part),
                    }
                }
            }
            let resolved = parts.join("/");
            if name == "README.md" {
                linked_from_readme.insert(resolved.clone());
            }
            if !root.join(&resolved).exists() {
                broken.push(format!("{name}: {target} (no file {resolved})"));
                continue;
            }
            if let Some(anchor) = anchor {
                if !resolved.ends_with(".md") {
                    broken.push(format!(
                        "{name}: {target} (an anchor into a file that is not Markdown)"
                    ));
                    continue;
                }
                let heads = match files.iter().find(|(other, _)| *other == resolved) {
                    Some((_, other)) => anchors(other),
                    None => anchors(&fs::read_to_string(root.join(&resolved)).unwrap()),
                };
                if !heads.contains(anchor) {
                    broken.push(format!(
                        "{name}: {target} (no heading #{anchor} in {resolved})"
                    ));
                }
            }
        }
    }
    for (name, _) in &files {
        if name.starts_with("docs/") && !linked_from_readme.contains(name) {
            broken.push(format!("README.md: no link to {name}"));
        }
    }
    assert!(
        broken.is_empty(),
        "broken Markdown links:\n{}",
        broken.join("\n")
    );
}
