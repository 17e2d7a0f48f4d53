//! A small client for kubefake's own API (`/kubefake/v1/...`) on a running server, for the
//! CLI's `faults` and `requests` subcommands: the server, its CA and the bearer token come
//! from a kubeconfig's current context, as kubefake writes them (`certificate-authority-data`
//! or `certificate-authority`, `token`; client certificates are not supported).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use base64::Engine as _;
use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use hyper::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE, HOST};
use hyper::{Request, Uri};
use hyper_util::rt::TokioIo;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, ServerName};
use serde_json::Value;
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

/// Why a call to a running server failed before it answered.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    /// The kubeconfig cannot be read or lacks what is needed.
    #[error("kubeconfig {0}: {1}")]
    Kubeconfig(PathBuf, String),
    /// Connecting, TLS or HTTP failed.
    #[error("{0}: {1}")]
    Transport(String, String),
}

/// A running server, as a kubeconfig describes it.
#[derive(Debug, Clone)]
pub struct Remote {
    server: String,
    host: String,
    port: u16,
    https: bool,
    ca: Vec<CertificateDer<'static>>,
    token: Option<String>,
}

impl Remote {
    /// The server of the kubeconfig's current context.
    pub fn from_kubeconfig(path: &Path) -> Result<Remote, RemoteError> {
        let bad = |why: String| RemoteError::Kubeconfig(path.to_path_buf(), why);
        let text = std::fs::read_to_string(path).map_err(|e| bad(e.to_string()))?;
        let config: Value = serde_saphyr::from_str(&text).map_err(|e| bad(e.to_string()))?;
        let current = config["current-context"].as_str().unwrap_or("");
        let context = named(&config["contexts"], current, "context")
            .ok_or_else(|| bad(format!("no context {current:?}")))?;
        let cluster_name = context["cluster"].as_str().unwrap_or("");
        let cluster = named(&config["clusters"], cluster_name, "cluster")
            .ok_or_else(|| bad(format!("no cluster {cluster_name:?}")))?;
        let user = named(
            &config["users"],
            context["user"].as_str().unwrap_or(""),
            "user",
        );
        let server = cluster["server"].as_str().unwrap_or("").to_string();
        let uri: Uri = server
            .parse()
            .map_err(|e| bad(format!("server {server:?}: {e}")))?;
        let https = uri.scheme_str() != Some("http");
        let host = uri
            .host()
            .unwrap_or("")
            .trim_matches(['[', ']'])
            .to_string();
        let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
        let ca = ca_pem(cluster, path).map_err(bad)?;
        let ca = CertificateDer::pem_slice_iter(ca.as_bytes())
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| bad(format!("certificate authority: {e}")))?;
        let token = user.and_then(|u| u["token"].as_str()).map(str::to_string);
        Ok(Remote {
            server: server.trim_end_matches('/').to_string(),
            host,
            port,
            https,
            ca,
            token,
        })
    }

    /// Sends one request; answers the status code and the body.
    pub async fn call(
        &self,
        method: &str,
        path_and_query: &str,
        body: Option<Vec<u8>>,
    ) -> Result<(u16, Bytes), RemoteError> {
        let url = format!("{}{path_and_query}", self.server);
        let fail = |e: String| RemoteError::Transport(url.clone(), e);
        let tcp = TcpStream::connect((self.host.as_str(), self.port))
            .await
            .map_err(|e| fail(e.to_string()))?;
        let mut request = Request::builder()
            .method(method)
            .uri(path_and_query)
            .header(HOST, format!("{}:{}", self.host, self.port))
            .header(ACCEPT, "application/json")
            .header(CONTENT_TYPE, "application/json");
        if let Some(token) = &self.token {
            request = request.header(AUTHORIZATION, format!("Bearer {token}"));
        }
        let request = request
            .body(Full::new(Bytes::from(body.unwrap_or_default())))
            .map_err(|e| fail(e.to_string()))?;
        if !self.https {
            return exchange(TokioIo::new(tcp), request).await.map_err(fail);
        }
        let tls = self.tls().map_err(&fail)?;
        let name = ServerName::try_from(self.host.clone()).map_err(|e| fail(e.to_string()))?;
        let stream = tls
            .connect(name, tcp)
            .await
            .map_err(|e| fail(e.to_string()))?;
        exchange(TokioIo::new(stream), request).await.map_err(fail)
    }

    fn tls(&self) -> Result<TlsConnector, String> {
        let mut roots = rustls::RootCertStore::empty();
        if self.ca.is_empty() {
            roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
        }
        for cert in &self.ca {
            roots.add(cert.clone()).map_err(|e| e.to_string())?;
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(TlsConnector::from(Arc::new(config)))
    }
}

/// The entry of a kubeconfig list (`clusters`, `contexts`, `users`) with this name.
fn named<'a>(list: &'a Value, name: &str, field: &str) -> Option<&'a Value> {
    let entries = list.as_array()?;
    let entry = entries.iter().find(|e| e["name"].as_str() == Some(name))?;
    Some(&entry[field])
}

/// The cluster's CA bundle: inline, or a file relative to the kubeconfig.
pub(crate) fn ca_pem(cluster: &Value, kubeconfig: &Path) -> Result<String, String> {
    if let Some(data) = cluster["certificate-authority-data"].as_str() {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(data.trim())
            .map_err(|e| format!("certificate-authority-data: {e}"))?;
        return String::from_utf8(bytes).map_err(|e| format!("certificate-authority-data: {e}"));
    }
    match cluster["certificate-authority"].as_str() {
        Some(file) => {
            let dir = kubeconfig.parent().unwrap_or(Path::new("."));
            std::fs::read_to_string(dir.join(file)).map_err(|e| format!("{file}: {e}"))
        }
        None => Ok(String::new()),
    }
}

async fn exchange<IO>(io: IO, request: Request<Full<Bytes>>) -> Result<(u16, Bytes), String>
where
    IO: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let (mut sender, connection) = hyper::client::conn::http1::handshake(io)
        .await
        .map_err(|e| e.to_string())?;
    let driver = tokio::spawn(connection);
    let response = sender
        .send_request(request)
        .await
        .map_err(|e| e.to_string())?;
    let status = response.status().as_u16();
    let body = response
        .into_body()
        .collect()
        .await
        .map_err(|e| e.to_string())?;
    driver.abort();
    Ok((status, body.to_bytes()))
}
