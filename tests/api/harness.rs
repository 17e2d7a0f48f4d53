//! The per-test server fixture and small helpers shared by the test modules.

use kube::api::{Api, DynamicObject, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use kube::{Client, CustomResource};
use rstest::fixture;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The CronTab of the CRD walkthrough, as a typed kube-rs resource.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema, PartialEq)]
#[kube(
    group = "stable.example.com",
    version = "v1",
    kind = "CronTab",
    namespaced,
    shortname = "ct"
)]
#[serde(rename_all = "camelCase")]
pub struct CronTabSpec {
    pub cron_spec: String,
    pub image: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i64>,
}

/// A running server plus clients for it.
pub struct TestServer {
    pub handle: kubefake::ServerHandle,
    pub client: Client,
    pub http: reqwest::Client,
}

impl TestServer {
    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.handle.url(), path)
    }

    /// GET a path, returning status and parsed JSON body (Null when not JSON).
    pub async fn get(&self, path: &str) -> (u16, Value) {
        self.send(self.http.get(self.url(path))).await
    }

    /// Sends a request, returning status and parsed JSON body (Null when not JSON).
    pub async fn send(&self, req: reqwest::RequestBuilder) -> (u16, Value) {
        let resp = req.send().await.expect("request sent");
        let status = resp.status().as_u16();
        let body = resp.bytes().await.expect("body read");
        (status, serde_json::from_slice(&body).unwrap_or(Value::Null))
    }

    /// POSTs JSON to a path.
    pub async fn post(&self, path: &str, body: &Value) -> (u16, Value) {
        self.send(self.http.post(self.url(path)).json(body)).await
    }

    /// The current global resourceVersion (to prove that a rejected request changed nothing).
    pub fn rv(&self) -> u64 {
        self.handle
            .state()
            .expect("a kubefake server")
            .store
            .current_rv()
    }

    /// Installs the walkthrough's CronTab CRD and waits for nothing: it is established on return.
    pub async fn install_crontab_crd(&self) -> Value {
        let (status, body) = self
            .post(
                "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
                &crontab_crd(),
            )
            .await;
        assert_eq!(status, 201, "{body}");
        body
    }

    pub fn crontabs(&self, namespace: &str) -> Api<CronTab> {
        Api::namespaced(self.client.clone(), namespace)
    }

    /// A dynamic API for any group/version/kind/plural.
    pub fn dynamic(
        &self,
        gvk: (&str, &str, &str),
        plural: &str,
        namespace: Option<&str>,
    ) -> Api<DynamicObject> {
        let ar =
            ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(gvk.0, gvk.1, gvk.2), plural);
        match namespace {
            Some(ns) => Api::namespaced_with(self.client.clone(), ns, &ar),
            None => Api::all_with(self.client.clone(), &ar),
        }
    }

    /// Creates a CronTab through kube-rs.
    pub async fn create_crontab(&self, namespace: &str, name: &str) -> CronTab {
        let ct = CronTab::new(
            name,
            CronTabSpec {
                cron_spec: "* * * * */5".into(),
                image: "my-awesome-cron-image".into(),
                replicas: None,
            },
        );
        self.crontabs(namespace)
            .create(&PostParams::default(), &ct)
            .await
            .expect("create crontab")
    }
}

/// Reads a YAML fixture as JSON.
pub fn fixture_yaml(path: &str) -> Value {
    let full = format!("{}/fixtures/{path}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&full).expect("fixture readable");
    serde_saphyr::from_str(&text).expect("fixture is YAML")
}

pub fn crontab_crd() -> Value {
    fixture_yaml("crds/resourcedefinition.yaml")
}

/// The `Status` of a kube-rs API error.
pub fn api_error(err: kube::Error) -> kube::core::Status {
    match err {
        kube::Error::Api(status) => *status,
        other => panic!("expected an API error, got {other:?}"),
    }
}

/// One fresh server per test.
#[fixture]
pub async fn server() -> TestServer {
    server_with(kubefake::Server::builder()).await
}

/// A fresh server with options (history size, buffers...).
pub async fn server_with(builder: kubefake::ServerBuilder) -> TestServer {
    let handle = builder.start().await.expect("server starts");
    let mut config = handle.kube_config();
    // A hung request fails the test in seconds instead of minutes.
    config.read_timeout = Some(std::time::Duration::from_secs(20));
    let client = Client::try_from(config).expect("kube client");
    let http = admin_http(&handle);
    TestServer {
        handle,
        client,
        http,
    }
}

/// A fresh server under RBAC that also knows `token` as the user `name` in `groups`, a user
/// bound to nothing until the test binds it (the kubeconfig's admin stays privileged).
pub async fn rbac_server_with_user(name: &str, groups: &[&str], token: &str) -> TestServer {
    let user = kubefake::UserInfo {
        name: name.into(),
        groups: groups.iter().map(|g| g.to_string()).collect(),
        ..kubefake::UserInfo::default()
    };
    let builder = kubefake::Server::builder()
        .authorization_mode(kubefake::AuthorizationMode::Rbac)
        .token(token, user);
    server_with(builder).await
}

/// A reqwest client that authenticates as the kubeconfig's admin, as every kubeconfig user
/// does (and trusts the server's CA when it serves HTTPS).
pub fn admin_http(handle: &kubefake::ServerHandle) -> reqwest::Client {
    let bearer = format!("Bearer {}", handle.admin_token());
    token_http(handle, &bearer)
}

/// A reqwest client sending this `Authorization` header ("" for none).
pub fn token_http(handle: &kubefake::ServerHandle, authorization: &str) -> reqwest::Client {
    let mut headers = reqwest::header::HeaderMap::new();
    if !authorization.is_empty() {
        let value = authorization.parse().expect("header value");
        headers.insert(reqwest::header::AUTHORIZATION, value);
    }
    let mut builder = reqwest::Client::builder().default_headers(headers);
    if let Some(pem) = handle.ca_pem() {
        let cert = reqwest::Certificate::from_pem(pem.as_bytes()).expect("CA");
        builder = builder
            .add_root_certificate(cert)
            .tls_built_in_root_certs(false);
    }
    builder.build().expect("client")
}
