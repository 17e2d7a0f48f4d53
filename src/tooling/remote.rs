//! A client of a running server's `/kubefake/v1/` API, for the CLI (`kubefake dump`): the
//! kubeconfig's current cluster (its CA) and user (a bearer token), one HTTP/1.1 GET.

use std::path::Path;
use std::sync::Arc;

use base64::Engine as _;
use bytes::Bytes;
use http_body_util::{BodyExt as _, Empty};
use hyper::header::{AUTHORIZATION, HOST};
use hyper::{Request, Uri};
use hyper_util::rt::TokioIo;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, ServerName};
use serde_json::Value;
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;

/// How long a request may take, connection included.
pub const TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

/// Why a running server could not be asked.
#[derive(Debug, thiserror::Error)]
pub enum RemoteError {
    /// The kubeconfig does not say where the server is or how to trust it.
    #[error("kubeconfig: {0}")]
    Kubeconfig(String),
    /// The server could not be reached or did not speak HTTP.
    #[error("{0}: {1}")]
    Transport(String, String),
    /// The server answered with an error (its `Status` message).
    #[error("{0} answered {1}: {2}")]
    Refused(String, u16, String),
}

/// Where a server is and how to talk to it, as the kubeconfig's current context says.
#[derive(Debug, Clone)]
pub struct Remote {
    server: Uri,
    ca: Vec<CertificateDer<'static>>,
    token: Option<String>,
}

fn named<'a>(doc: &'a Value, list: &str, name: &str, field: &str) -> Option<&'a Value> {
    let items = doc[list].as_array()?;
    let found = items.iter().find(|i| i["name"] == name);
    found.map(|i| &i[field])
}

impl Remote {
    /// The current context of a kubeconfig (the first one when none is current). Relative
    /// file names (`certificate-authority`, `tokenFile`) are read from `dir`.
    pub fn from_kubeconfig(text: &str, dir: &Path) -> Result<Remote, RemoteError> {
        let bad = |m: &str| RemoteError::Kubeconfig(m.to_string());
        let doc: Value = serde_saphyr::from_str(text).map_err(|e| bad(&e.to_string()))?;
        let current = match doc["current-context"].as_str() {
            Some(c) if !c.is_empty() => c.to_string(),
            _ => doc["contexts"][0]["name"]
                .as_str()
                .unwrap_or("")
                .to_string(),
        };
        let context =
            named(&doc, "contexts", &current, "context").ok_or_else(|| bad("no context"))?;
        let cluster_name = context["cluster"].as_str().unwrap_or("");
        let cluster =
            named(&doc, "clusters", cluster_name, "cluster").ok_or_else(|| bad("no cluster"))?;
        let server = cluster["server"].as_str().ok_or_else(|| bad("no server"))?;
        let server: Uri = server.parse().map_err(|_| bad("the server is not a URL"))?;
        let read =
            |file: &str| std::fs::read(dir.join(file)).map_err(|e| bad(&format!("{file}: {e}")));
        let ca_pem = match (
            cluster["certificate-authority-data"].as_str(),
            cluster["certificate-authority"].as_str(),
        ) {
            (Some(data), _) => base64::engine::general_purpose::STANDARD
                .decode(data.trim())
                .map_err(|_| bad("certificate-authority-data is not base64"))?,
            (None, Some(file)) => read(file)?,
            (None, None) => Vec::new(),
        };
        let ca = CertificateDer::pem_slice_iter(&ca_pem).flatten().collect();
        let user = named(
            &doc,
            "users",
            context["user"].as_str().unwrap_or(""),
            "user",
        );
        let token = match user.map(|u| (u["token"].as_str(), u["tokenFile"].as_str())) {
            Some((Some(token), _)) => Some(token.to_string()),
            Some((None, Some(file))) => {
                Some(String::from_utf8_lossy(&read(file)?).trim().to_string())
            }
            _ => None,
        };
        Ok(Remote { server, ca, token })
    }

    /// GETs `path_and_query` and returns the body of a 2xx answer, within [`TIMEOUT`].
    pub async fn get(&self, path_and_query: &str) -> Result<Bytes, RemoteError> {
        match tokio::time::timeout(TIMEOUT, self.get_unbounded(path_and_query)).await {
            Ok(result) => result,
            Err(_) => Err(RemoteError::Transport(
                format!("{}{path_and_query}", self.server),
                format!("no answer within {} s", TIMEOUT.as_secs()),
            )),
        }
    }

    async fn get_unbounded(&self, path_and_query: &str) -> Result<Bytes, RemoteError> {
        let url = format!(
            "{}{}",
            self.server.to_string().trim_end_matches('/'),
            path_and_query
        );
        let transport =
            |e: &dyn std::fmt::Display| RemoteError::Transport(url.clone(), e.to_string());
        let host = self
            .server
            .host()
            .unwrap_or("localhost")
            .trim_matches(['[', ']']);
        let https = self.server.scheme_str() == Some("https");
        let port = self
            .server
            .port_u16()
            .unwrap_or(if https { 443 } else { 80 });
        let tcp = TcpStream::connect((host, port))
            .await
            .map_err(|e| transport(&e))?;
        let request = Request::get(path_and_query).header(HOST, format!("{host}:{port}"));
        let request = match &self.token {
            Some(token) => request.header(AUTHORIZATION, format!("Bearer {token}")),
            None => request,
        };
        let request = request
            .body(Empty::<Bytes>::new())
            .map_err(|e| transport(&e))?;
        let (status, body) = if https {
            let config = crate::webhook::client::tls_config(&self.ca).map_err(|e| transport(&e))?;
            let name = ServerName::try_from(host.to_string()).map_err(|e| transport(&e))?;
            let tls = TlsConnector::from(Arc::clone(&config))
                .connect(name, tcp)
                .await
                .map_err(|e| transport(&e))?;
            exchange(TokioIo::new(tls), request)
                .await
                .map_err(|e| transport(&e))?
        } else {
            exchange(TokioIo::new(tcp), request)
                .await
                .map_err(|e| transport(&e))?
        };
        if !(200..300).contains(&status) {
            let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let message = message["message"].as_str().map(String::from);
            let message = message.unwrap_or_else(|| String::from_utf8_lossy(&body).into_owned());
            return Err(RemoteError::Refused(url, status, message));
        }
        Ok(body)
    }
}

async fn exchange<IO>(io: IO, request: Request<Empty<Bytes>>) -> Result<(u16, Bytes), hyper::Error>
where
    IO: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let (mut sender, connection) = hyper::client::conn::http1::handshake(io).await?;
    let driver = tokio::spawn(connection);
    let response = sender.send_request(request).await?;
    let status = response.status().as_u16();
    let body = response.into_body().collect().await?.to_bytes();
    driver.abort();
    Ok((status, body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_current_context_names_server_ca_and_token() {
        let text = crate::Kubeconfig {
            server: "https://127.0.0.1:6443",
            ca_pem: None,
            token: Some("secret"),
        }
        .render();
        let remote = Remote::from_kubeconfig(&text, Path::new(".")).expect("kubeconfig");
        assert_eq!(remote.server.port_u16(), Some(6443));
        assert_eq!(remote.token.as_deref(), Some("secret"));
        assert!(remote.ca.is_empty());
    }

    #[test]
    fn a_kubeconfig_without_a_cluster_is_refused() {
        let err = Remote::from_kubeconfig("kind: Config\n", Path::new(".")).expect_err("refused");
        assert!(matches!(err, RemoteError::Kubeconfig(_)), "{err}");
    }
}
