//! The same test against a real cluster (envtest's `UseExistingCluster`): with the switch on
//! (`KUBEFAKE_EXISTING_CLUSTER=1`, or [`crate::ServerBuilder::existing_cluster`]),
//! [`crate::ServerBuilder::start`] starts no fake but hands back the cluster of a kubeconfig's
//! current context, behind the same [`crate::ServerHandle`]:
//! - a fresh namespace (`kubefake-test-xxxxx`, the server generates the suffix) isolates the
//!   test; the handle's kubeconfig and `kube::Config` default to it;
//! - the builder's CRDs are created and waited for until Established; its objects are created,
//!   namespaced ones in the test's namespace whatever their manifest says;
//! - cleanup (on [`crate::ServerHandle::shutdown`], or on drop) deletes the namespace and what
//!   kubefake created outside it (CRDs, cluster-scoped objects), newest first. A CRD that was
//!   already there is used as it is and left in place: it was not the test's to remove;
//! - kubefake-only features (faults, the request log, snapshots, reset, dumps) answer
//!   [`NotAvailable`].
//!
//! Talking to a real cluster takes kube-rs's client (every kubeconfig credential: tokens,
//! client certificates, exec plugins), so this mode needs the `kube` feature; without it,
//! `start()` answers [`ExistingClusterError::NeedsKubeFeature`].

use std::path::PathBuf;

/// The environment variable that turns the mode on for builders that do not say.
pub const SWITCH: &str = "KUBEFAKE_EXISTING_CLUSTER";

/// The name prefix of the test namespaces (`generateName`).
pub const NAMESPACE_PREFIX: &str = "kubefake-test-";

/// A kubefake-only feature asked of a handle on a real cluster, which has no such thing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("{0} is not available on a real cluster (KUBEFAKE_EXISTING_CLUSTER mode)")]
pub struct NotAvailable(pub &'static str);

/// Why the existing cluster could not be used.
#[derive(Debug, thiserror::Error)]
pub enum ExistingClusterError {
    /// The switch holds something other than a boolean.
    #[error("{SWITCH}={0:?}: expected 1, t, true, 0, f or false (any case)")]
    Switch(String),
    /// kubefake was built without its `kube` feature.
    #[error("the existing-cluster mode needs kubefake's `kube` feature")]
    NeedsKubeFeature,
    /// The kubeconfig could not be read or used.
    #[error("kubeconfig: {0}")]
    Kubeconfig(String),
    /// A manifest file could not be read.
    #[error("loading {0}: {1}")]
    Manifest(PathBuf, String),
    /// The cluster refused or failed a request.
    #[error("{0}: {1}")]
    Api(String, String),
    /// A CRD did not become Established in time.
    #[error("CustomResourceDefinition {0} is not Established after {1:?}")]
    NotEstablished(String, std::time::Duration),
}

/// Reads the switch's value (`None`: unset) as Go's `strconv.ParseBool` does, the way envtest
/// reads `USE_EXISTING_CLUSTER`; an empty value is off.
pub fn parse_switch(value: Option<&str>) -> Result<bool, ExistingClusterError> {
    let Some(value) = value else {
        return Ok(false);
    };
    match value.to_ascii_lowercase().as_str() {
        "1" | "t" | "true" => Ok(true),
        "" | "0" | "f" | "false" => Ok(false),
        _ => Err(ExistingClusterError::Switch(value.to_string())),
    }
}

#[cfg(feature = "kube")]
pub use cluster::{start, Cluster, Started};

#[cfg(feature = "kube")]
mod cluster {
    use std::path::{Path, PathBuf};
    use std::time::{Duration, Instant};

    use kube::api::{Api, DeleteParams, DynamicObject, PostParams};
    use kube::config::{KubeConfigOptions, Kubeconfig};
    use kube::core::{ApiResource, GroupVersionKind};
    use kube::discovery::Scope;
    use kube::{Client, Config};
    use serde_json::{json, Value};

    use super::{ExistingClusterError as E, NAMESPACE_PREFIX};
    use crate::{loader, remote};

    /// How long CRDs may take to become Established, and their kinds to be discovered.
    const ESTABLISH_TIMEOUT: Duration = Duration::from_secs(60);
    /// How often a CRD's status is polled meanwhile.
    const POLL: Duration = Duration::from_millis(50);
    /// How long cleanup on drop may take before it gives up (a cluster gone away).
    const CLEANUP_TIMEOUT: Duration = Duration::from_secs(30);
    /// The stack of the thread that cleans up on drop.
    const CLEANUP_STACK: usize = 8 << 20;

    /// A test's use of an existing cluster: what to clean up, and how to reach it.
    pub struct Cluster {
        config: Config,
        namespace: String,
        /// What kubefake created outside the namespace, oldest first.
        created: Vec<(ApiResource, String)>,
        cleaned: bool,
    }

    /// What [`start`] hands the handle.
    pub struct Started {
        /// The cluster, cleaned up when dropped.
        pub cluster: Cluster,
        /// The kubeconfig (JSON, which is YAML) whose current context is in the namespace.
        pub kubeconfig: String,
        /// The CA bundle (PEM) of the cluster, when the kubeconfig names one.
        pub ca_pem: Option<String>,
        /// The bearer token of the kubeconfig's user, when it has one.
        pub token: Option<String>,
    }

    /// Connects with `kubeconfig` (or `KUBECONFIG` / `~/.kube/config`), creates the test's
    /// namespace and installs the builder's CRDs and objects.
    pub async fn start(
        kubeconfig: Option<&Path>,
        crds: &[PathBuf],
        objects: &[PathBuf],
    ) -> Result<Started, E> {
        let bad = |e: kube::config::KubeconfigError| E::Kubeconfig(e.to_string());
        let file = match kubeconfig {
            Some(path) => Kubeconfig::read_from(path).map_err(bad)?,
            None => Kubeconfig::read().map_err(bad)?,
        };
        let options = KubeConfigOptions::default();
        let mut config = Config::from_custom_kubeconfig(file.clone(), &options)
            .await
            .map_err(bad)?;
        let client =
            Client::try_from(config.clone()).map_err(|e| E::Kubeconfig(format!("client: {e}")))?;
        let namespace = create_namespace(&client).await?;
        config.default_namespace = namespace.clone();
        let mut cluster = Cluster {
            config,
            namespace,
            created: Vec::new(),
            cleaned: false,
        };
        // On an error below, dropping `cluster` removes what was installed so far.
        cluster.install(&client, crds, objects).await?;
        let (kubeconfig, ca_pem, token) = rendered(&file, &cluster.namespace)?;
        let kubeconfig = format!("{kubeconfig:#}");
        Ok(Started {
            cluster,
            kubeconfig,
            ca_pem,
            token,
        })
    }

    impl Cluster {
        /// The test's namespace.
        pub fn namespace(&self) -> &str {
            &self.namespace
        }

        /// The client configuration, defaulting to the test's namespace.
        pub fn config(&self) -> &Config {
            &self.config
        }

        /// Deletes the namespace and what kubefake created outside it, newest first; goes on
        /// past failures and answers the first.
        pub async fn cleanup(&mut self) -> Result<(), E> {
            if std::mem::replace(&mut self.cleaned, true) {
                return Ok(());
            }
            remove(&self.config, &self.namespace, &self.created).await
        }

        /// Creates the CRDs (waiting for each to be Established), then the objects.
        async fn install(
            &mut self,
            client: &Client,
            crds: &[PathBuf],
            objects: &[PathBuf],
        ) -> Result<(), E> {
            for doc in manifests(crds)? {
                if doc["kind"] == "CustomResourceDefinition" {
                    self.install_crd(client, doc).await?;
                }
            }
            for doc in manifests(objects)? {
                if doc["kind"] == "CustomResourceDefinition" {
                    self.install_crd(client, doc).await?;
                } else {
                    self.install_object(client, doc).await?;
                }
            }
            Ok(())
        }

        async fn install_crd(&mut self, client: &Client, doc: Value) -> Result<(), E> {
            let resource = crd_resource();
            let name = doc["metadata"]["name"].as_str().unwrap_or("").to_string();
            let api: Api<DynamicObject> = Api::all_with(client.clone(), &resource);
            match api.create(&PostParams::default(), &dynamic(doc)?).await {
                Ok(_) => self.created.push((resource, name.clone())),
                Err(e) if is_code(&e, 409) => {} // there already: used as it is, left in place
                Err(e) => return Err(api_error(format!("creating CRD {name}"), e)),
            }
            wait_established(&api, &name).await
        }

        async fn install_object(&mut self, client: &Client, mut doc: Value) -> Result<(), E> {
            let (resource, namespaced) = resolve(client, &doc).await?;
            let name = doc["metadata"]["name"].as_str().unwrap_or("").to_string();
            let what = format!("creating {} {name}", resource.kind);
            let api: Api<DynamicObject> = if namespaced {
                doc["metadata"]["namespace"] = json!(self.namespace);
                Api::namespaced_with(client.clone(), &self.namespace, &resource)
            } else {
                Api::all_with(client.clone(), &resource)
            };
            let created = api
                .create(&PostParams::default(), &dynamic(doc)?)
                .await
                .map_err(|e| api_error(what, e))?;
            if !namespaced {
                self.created
                    .push((resource, created.metadata.name.unwrap_or(name)));
            }
            Ok(())
        }
    }

    impl Drop for Cluster {
        /// Cleans up on a thread of its own with its own runtime, so that dropping works
        /// inside or outside an async runtime; bounded by [`CLEANUP_TIMEOUT`].
        fn drop(&mut self) {
            if self.cleaned {
                return;
            }
            self.cleaned = true;
            let config = self.config.clone();
            let namespace = std::mem::take(&mut self.namespace);
            let created = std::mem::take(&mut self.created);
            // kube-rs's futures are large in debug builds: a main thread's stack, not 2 MiB.
            let spawned = std::thread::Builder::new()
                .name("kubefake-cleanup".into())
                .stack_size(CLEANUP_STACK)
                .spawn(move || remove_blocking(&config, &namespace, &created));
            let outcome = match spawned {
                Ok(worker) => worker
                    .join()
                    .unwrap_or_else(|_| Err("the cleanup panicked".into())),
                Err(e) => Err(e.to_string()),
            };
            if let Err(e) = outcome {
                eprintln!("kubefake: cleaning up the existing cluster: {e}");
            }
        }
    }

    /// Deletes the namespace and what kubefake created outside it, newest first; goes on past
    /// failures and answers the first.
    async fn remove(
        config: &Config,
        namespace: &str,
        created: &[(ApiResource, String)],
    ) -> Result<(), E> {
        let client =
            Client::try_from(config.clone()).map_err(|e| E::Kubeconfig(format!("client: {e}")))?;
        let mut first = delete(&client, &namespace_resource(), namespace).await;
        for (resource, name) in created.iter().rev() {
            first = first.and(delete(&client, resource, name).await);
        }
        first
    }

    /// [`remove`] on a runtime of its own, bounded by [`CLEANUP_TIMEOUT`].
    fn remove_blocking(
        config: &Config,
        namespace: &str,
        created: &[(ApiResource, String)],
    ) -> Result<(), String> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| e.to_string())?;
        let cleanup = async {
            tokio::time::timeout(CLEANUP_TIMEOUT, remove(config, namespace, created)).await
        };
        match runtime.block_on(cleanup) {
            Ok(result) => result.map_err(|e| e.to_string()),
            Err(_) => Err(format!("timed out after {CLEANUP_TIMEOUT:?}")),
        }
    }

    async fn create_namespace(client: &Client) -> Result<String, E> {
        let api: Api<DynamicObject> = Api::all_with(client.clone(), &namespace_resource());
        let doc = json!({"apiVersion": "v1", "kind": "Namespace",
                         "metadata": {"generateName": NAMESPACE_PREFIX}});
        let created = api
            .create(&PostParams::default(), &dynamic(doc)?)
            .await
            .map_err(|e| api_error("creating the test namespace".into(), e))?;
        created
            .metadata
            .name
            .ok_or_else(|| E::Api("creating the test namespace".into(), "no name".into()))
    }

    async fn wait_established(api: &Api<DynamicObject>, name: &str) -> Result<(), E> {
        let start = Instant::now();
        loop {
            let crd = api
                .get(name)
                .await
                .map_err(|e| api_error(format!("reading CRD {name}"), e))?;
            let conditions = crd.data["status"]["conditions"].as_array();
            let established = conditions
                .into_iter()
                .flatten()
                .any(|c| c["type"] == "Established" && c["status"] == "True");
            if established {
                return Ok(());
            }
            if start.elapsed() > ESTABLISH_TIMEOUT {
                return Err(E::NotEstablished(name.to_string(), ESTABLISH_TIMEOUT));
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// The resource serving a manifest's kind and whether it is namespaced, from discovery
    /// (retried while a CRD's kind is not discovered yet).
    async fn resolve(client: &Client, doc: &Value) -> Result<(ApiResource, bool), E> {
        let api_version = doc["apiVersion"].as_str().unwrap_or("");
        let kind = doc["kind"].as_str().unwrap_or("");
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        let gvk = GroupVersionKind::gvk(group, version, kind);
        let start = Instant::now();
        loop {
            match kube::discovery::pinned_kind(client, &gvk).await {
                Ok((resource, caps)) => return Ok((resource, caps.scope == Scope::Namespaced)),
                Err(e) if start.elapsed() > ESTABLISH_TIMEOUT => {
                    return Err(api_error(format!("discovering {api_version} {kind}"), e))
                }
                Err(_) => tokio::time::sleep(POLL).await,
            }
        }
    }

    async fn delete(client: &Client, resource: &ApiResource, name: &str) -> Result<(), E> {
        let api: Api<DynamicObject> = Api::all_with(client.clone(), resource);
        match api.delete(name, &DeleteParams::background()).await {
            Ok(_) => Ok(()),
            Err(e) if is_code(&e, 404) => Ok(()),
            Err(e) => Err(api_error(format!("deleting {} {name}", resource.kind), e)),
        }
    }

    /// The documents of the manifest files under `paths`.
    fn manifests(paths: &[PathBuf]) -> Result<Vec<Value>, E> {
        let mut docs = Vec::new();
        for path in paths {
            let bad = |e: crate::Error| E::Manifest(path.clone(), e.to_string());
            for file in loader::manifest_files(path).map_err(bad)? {
                docs.extend(loader::read_manifests(&file).map_err(bad)?);
            }
        }
        Ok(docs)
    }

    /// The kubeconfig as JSON with its current context in the test's namespace, the CA bundle
    /// and the bearer token of that context, for the handle's accessors.
    fn rendered(
        file: &Kubeconfig,
        namespace: &str,
    ) -> Result<(Value, Option<String>, Option<String>), E> {
        let mut config = serde_json::to_value(file).map_err(|e| E::Kubeconfig(e.to_string()))?;
        let current = config["current-context"].as_str().unwrap_or("").to_string();
        let mut contexts = config["contexts"].as_array_mut().into_iter().flatten();
        let context = contexts
            .find(|c| c["name"] == current.as_str())
            .ok_or_else(|| E::Kubeconfig(format!("no context {current:?}")))?;
        context["context"]["namespace"] = json!(namespace);
        let context = context["context"].clone();
        let cluster = named(&config["clusters"], &context["cluster"], "cluster");
        // Paths are absolute: kube-rs resolved them against the file that named them.
        let ca_pem = cluster.and_then(|c| remote::ca_pem(c, Path::new("/")).ok());
        let ca_pem = ca_pem.filter(|pem| !pem.is_empty());
        let user = named(&config["users"], &context["user"], "user");
        let token = user.and_then(|u| u["token"].as_str()).map(str::to_string);
        Ok((config, ca_pem, token))
    }

    fn named<'a>(list: &'a Value, name: &Value, field: &str) -> Option<&'a Value> {
        let entries = list.as_array()?;
        Some(&entries.iter().find(|e| &e["name"] == name)?[field])
    }

    fn dynamic(doc: Value) -> Result<DynamicObject, E> {
        serde_json::from_value(doc).map_err(|e| E::Manifest(PathBuf::new(), e.to_string()))
    }

    fn is_code(e: &kube::Error, code: u16) -> bool {
        matches!(e, kube::Error::Api(status) if status.code == code)
    }

    fn api_error(what: String, e: kube::Error) -> E {
        E::Api(what, e.to_string())
    }

    fn namespace_resource() -> ApiResource {
        ApiResource::from_gvk_with_plural(
            &GroupVersionKind::gvk("", "v1", "Namespace"),
            "namespaces",
        )
    }

    fn crd_resource() -> ApiResource {
        let gvk = GroupVersionKind::gvk("apiextensions.k8s.io", "v1", "CustomResourceDefinition");
        ApiResource::from_gvk_with_plural(&gvk, "customresourcedefinitions")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case(None, Some(false))]
    #[case(Some(""), Some(false))]
    #[case(Some("1"), Some(true))]
    #[case(Some("true"), Some(true))]
    #[case(Some("TRUE"), Some(true))]
    #[case(Some("True"), Some(true))]
    #[case(Some("t"), Some(true))]
    #[case(Some("0"), Some(false))]
    #[case(Some("false"), Some(false))]
    #[case(Some("F"), Some(false))]
    #[case(Some("yes"), None)]
    #[case(Some("2"), None)]
    fn the_switch_reads_as_go_parse_bool(#[case] value: Option<&str>, #[case] on: Option<bool>) {
        match (parse_switch(value), on) {
            (Ok(got), Some(want)) => assert_eq!(got, want, "{value:?}"),
            (Err(e), None) => assert!(e.to_string().contains(SWITCH), "{e}"),
            (got, want) => panic!("{value:?}: got {got:?}, want {want:?}"),
        }
    }

    #[test]
    fn not_available_names_the_feature_and_the_mode() {
        let text = NotAvailable("fault injection").to_string();
        assert!(
            text.starts_with("fault injection is not available on a real cluster"),
            "{text}"
        );
    }
}
