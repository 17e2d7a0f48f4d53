//! Kubeconfig files for a running server, so kubectl, client-go and the Python client connect
//! without flags: one cluster (with its CA when it serves HTTPS), one user (with the admin
//! token), one context in `default`.

use std::io::Write;

use base64::Engine as _;
use std::path::{Path, PathBuf};

/// What a kubeconfig says: where the server is, which CA to trust, which credential to send.
#[derive(Debug, Clone, Copy, Default)]
pub struct Kubeconfig<'a> {
    /// The server URL.
    pub server: &'a str,
    /// The CA bundle (PEM) that verifies an HTTPS server.
    pub ca_pem: Option<&'a str>,
    /// A bearer token.
    pub token: Option<&'a str>,
}

impl Kubeconfig<'_> {
    /// The kubeconfig YAML: one cluster, one user, one context in `default`.
    pub fn render(&self) -> String {
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
        let mut cluster = format!("    server: {}\n", self.server);
        if let Some(ca) = self.ca_pem {
            cluster.push_str(&format!("    certificate-authority-data: {}\n", b64(ca)));
        }
        let user = match self.token {
            Some(token) => format!("\n    token: {token}\n"),
            None => " {}\n".to_string(),
        };
        format!(
            "apiVersion: v1
kind: Config
clusters:
- name: kubefake
  cluster:
{cluster}contexts:
- name: kubefake
  context:
    cluster: kubefake
    namespace: default
    user: kubefake
current-context: kubefake
preferences: {{}}
users:
- name: kubefake
  user:{user}"
        )
    }
}

/// The kubeconfig YAML for a server URL, without CA or credentials.
pub fn render(server: &str) -> String {
    Kubeconfig {
        server,
        ..Kubeconfig::default()
    }
    .render()
}

/// Writes a file readable and writable by its owner only (mode 0600 on Unix), as kubeconfig
/// files are: they say where the cluster is and, once there are any, hold credentials.
pub fn write_private(path: &Path, contents: &str) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        options.mode(0o600);
        let mut file = options.open(path)?;
        // `mode` applies to a new file only: an existing one is narrowed too.
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
        file.write_all(contents.as_bytes())?;
        file.flush()
    }
    #[cfg(not(unix))]
    {
        let mut file = options.open(path)?;
        file.write_all(contents.as_bytes())?;
        file.flush()
    }
}

/// Where a kubeconfig lives: a file the caller chose, or a temporary one removed on drop.
#[derive(Debug)]
pub enum KubeconfigFile {
    /// A path the user asked for; left in place.
    Kept(PathBuf),
    /// A temporary file; deleted when dropped.
    Temp(tempfile::TempPath),
}

impl KubeconfigFile {
    /// Writes a kubeconfig to `path` or to a new temporary file.
    pub fn write(config: &Kubeconfig<'_>, path: Option<&Path>) -> std::io::Result<KubeconfigFile> {
        KubeconfigFile::write_text(&config.render(), path)
    }

    /// Writes a kubeconfig's text (one kubefake did not render: an existing cluster's) to
    /// `path` or to a new temporary file.
    pub fn write_text(contents: &str, path: Option<&Path>) -> std::io::Result<KubeconfigFile> {
        match path {
            Some(p) => {
                if let Some(dir) = p.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir)?;
                }
                write_private(p, contents)?;
                Ok(KubeconfigFile::Kept(p.to_path_buf()))
            }
            None => {
                // A temporary file is created readable by its owner only.
                let mut file = tempfile::Builder::new()
                    .prefix("kubefake-")
                    .suffix(".kubeconfig")
                    .tempfile()?;
                file.write_all(contents.as_bytes())?;
                file.flush()?;
                Ok(KubeconfigFile::Temp(file.into_temp_path()))
            }
        }
    }

    /// The file's path.
    pub fn path(&self) -> &Path {
        match self {
            KubeconfigFile::Kept(p) => p,
            KubeconfigFile::Temp(p) => p,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_and_ca_are_embedded() {
        let text = Kubeconfig {
            server: "https://127.0.0.1:1",
            ca_pem: Some("PEM"),
            token: Some("tok"),
        }
        .render();
        assert!(text
            .contains("    server: https://127.0.0.1:1\n    certificate-authority-data: UEVN\n"));
        assert!(text.ends_with("  user:\n    token: tok\n"));
        assert!(render("http://x").ends_with("  user: {}\n"));
    }
}
