//! Kubeconfig files for a running server, so kubectl, client-go and the Python client connect
//! without flags: one cluster, one user without credentials, one context in `default`.

use std::io::Write;
use std::path::{Path, PathBuf};

/// The kubeconfig YAML for a server URL.
pub fn render(server: &str) -> String {
    format!(
        "apiVersion: v1
kind: Config
clusters:
- name: kubefake
  cluster:
    server: {server}
contexts:
- name: kubefake
  context:
    cluster: kubefake
    namespace: default
    user: kubefake
current-context: kubefake
preferences: {{}}
users:
- name: kubefake
  user: {{}}
"
    )
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
    /// Writes the kubeconfig for `server`, to `path` or to a new temporary file.
    pub fn write(server: &str, path: Option<&Path>) -> std::io::Result<KubeconfigFile> {
        let contents = render(server);
        match path {
            Some(p) => {
                if let Some(dir) = p.parent().filter(|d| !d.as_os_str().is_empty()) {
                    std::fs::create_dir_all(dir)?;
                }
                write_private(p, &contents)?;
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
