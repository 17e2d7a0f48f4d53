//! HTTPS: the serving certificate (generated at start, with its own CA, or given as PEM files),
//! the client CA that client certificates are verified against, and the user a verified client
//! certificate names (common name as the user, organizations as groups, as the apiserver's x509
//! authenticator reads them).
//!
//! A connection's certificate is checked once, in the handshake; the user it names travels with
//! every request of that connection ([`crate::endpoints::negotiation::Request::peer`]), so a
//! request costs no certificate work.

use std::net::IpAddr;
use std::sync::Arc;

use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use rustls::server::WebPkiClientVerifier;
use rustls::RootCertStore;
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

use crate::context::UserInfo;

/// Why TLS could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// Generating a key or a certificate failed.
    #[error("generating certificates: {0}")]
    Generate(#[from] rcgen::Error),
    /// A PEM file holds no certificate or key, or one rustls refuses.
    #[error("{0}")]
    Pem(String),
    /// rustls refused the configuration.
    #[error("TLS configuration: {0}")]
    Config(#[from] rustls::Error),
}

/// The serving certificate, its key and the CA that clients verify it with (PEM).
#[derive(Clone)]
pub struct ServingCertificate {
    /// The CA bundle clients trust (`certificate-authority-data` in the kubeconfig).
    pub ca_pem: String,
    /// The certificate chain the server presents.
    pub cert_pem: String,
    /// Its private key.
    pub key_pem: String,
}

/// Never prints the key.
impl std::fmt::Debug for ServingCertificate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServingCertificate").finish_non_exhaustive()
    }
}

impl ServingCertificate {
    /// A serving certificate for [`default_names`] of `listen`, signed by a CA generated for
    /// it alone.
    pub fn generate(listen: IpAddr) -> Result<ServingCertificate, TlsError> {
        CertificateAuthority::generate("kubefake CA")?.serving(&default_names(listen))
    }
}

/// A certificate authority that can sign certificates: generated serving CAs, and tests' client
/// certificates.
pub struct CertificateAuthority {
    issuer: Issuer<'static, KeyPair>,
    /// The CA certificate (PEM).
    pub cert_pem: String,
}

impl CertificateAuthority {
    /// A new self-signed CA named `name` plus a random suffix, so that two servers' CAs never
    /// verify each other's certificates by accident.
    pub fn generate(name: &str) -> Result<CertificateAuthority, TlsError> {
        let key = KeyPair::generate()?;
        let mut params = CertificateParams::new(Vec::<String>::new())?;
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        let cn = format!("{name} {:016x}", fastrand::u64(..));
        params.distinguished_name.push(DnType::CommonName, cn);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let cert_pem = params.self_signed(&key)?.pem();
        Ok(CertificateAuthority {
            issuer: Issuer::new(params, key),
            cert_pem,
        })
    }

    /// A serving certificate for these DNS names and IP addresses, signed by this CA.
    pub fn serving(&self, names: &[String]) -> Result<ServingCertificate, TlsError> {
        let key = KeyPair::generate()?;
        let mut params = CertificateParams::new(names.to_vec())?;
        let cn = names.first().map_or("localhost", String::as_str);
        params.distinguished_name.push(DnType::CommonName, cn);
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        params.use_authority_key_identifier_extension = true;
        let cert = params.signed_by(&key, &self.issuer)?;
        Ok(ServingCertificate {
            ca_pem: self.cert_pem.clone(),
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        })
    }

    /// A client certificate for `user`, in `group` (the organization) when given, signed by
    /// this CA: what a `--client-ca-file` holder hands out. Returns (certificate, key) as PEM.
    /// (The certificate generator keeps one value per subject attribute, so one group.)
    pub fn client(&self, user: &str, group: Option<&str>) -> Result<(String, String), TlsError> {
        let key = KeyPair::generate()?;
        let mut params = CertificateParams::new(Vec::<String>::new())?;
        params.distinguished_name.push(DnType::CommonName, user);
        if let Some(g) = group {
            params.distinguished_name.push(DnType::OrganizationName, g);
        }
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
        params.use_authority_key_identifier_extension = true;
        let cert = params.signed_by(&key, &self.issuer)?;
        Ok((cert.pem(), key.serialize_pem()))
    }
}

/// The names a generated serving certificate covers: localhost, the loopback addresses, the
/// listening address, and the in-cluster names of the `kubernetes` Service.
pub fn default_names(listen: IpAddr) -> Vec<String> {
    let mut names: Vec<String> = [
        "localhost",
        "127.0.0.1",
        "::1",
        "kubernetes",
        "kubernetes.default",
        "kubernetes.default.svc",
        "kubernetes.default.svc.cluster.local",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if !listen.is_loopback() && !listen.is_unspecified() {
        names.push(listen.to_string());
    }
    names
}

fn certificates(pem: &str, what: &str) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    let certs: Vec<_> = CertificateDer::pem_slice_iter(pem.as_bytes())
        .collect::<Result<_, _>>()
        .map_err(|e| TlsError::Pem(format!("{what}: {e}")))?;
    if certs.is_empty() {
        return Err(TlsError::Pem(format!("{what}: no certificate found")));
    }
    Ok(certs)
}

/// The rustls server configuration: the serving certificate, HTTP/2 and HTTP/1.1 by ALPN, and
/// client certificates verified against `client_ca` (PEM) when one is given. Clients without a
/// certificate are still served (they authenticate otherwise, or are anonymous).
pub fn server_config(
    serving: &ServingCertificate,
    client_ca: Option<&str>,
) -> Result<Arc<rustls::ServerConfig>, TlsError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ServerConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()?;
    let builder = match client_ca {
        Some(pem) => {
            let mut roots = RootCertStore::empty();
            for cert in certificates(pem, "client CA")? {
                roots.add(cert)?;
            }
            let inner =
                WebPkiClientVerifier::builder_with_provider(Arc::new(roots), provider.clone())
                    .allow_unauthenticated()
                    .build()
                    .map_err(|e| TlsError::Pem(format!("client CA: {e}")))?;
            let verifier = V1ClientVerifier {
                inner,
                roots: certificates(pem, "client CA")?,
                algorithms: provider.signature_verification_algorithms,
            };
            builder.with_client_cert_verifier(Arc::new(verifier))
        }
        None => builder.with_no_client_auth(),
    };
    let chain = certificates(&serving.cert_pem, "serving certificate")?;
    let key = PrivateKeyDer::from_pem_slice(serving.key_pem.as_bytes())
        .map_err(|e| TlsError::Pem(format!("serving key: {e}")))?;
    let mut config = builder.with_single_cert(chain, key)?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// The CA bundle a plain-HTTP server publishes in `kube-root-ca.crt`: a self-signed CA
/// certificate (`CN=kubefake CA`, valid until 2126) whose key was thrown away when it was made
/// with `openssl req -x509`, so it signs nothing and verifies nothing, as nothing needs
/// verifying over plain HTTP. It is fixed rather than generated per process because generating
/// a key pair cost a million instructions of the first start in a debug build.
pub const PLAIN_HTTP_ROOT_CA: &str = include_str!("plain-http-ca.pem");

/// The user a verified client certificate names: its subject's common name, its organizations
/// as groups. `None` for a certificate without a common name (the apiserver refuses those).
pub fn certificate_user(cert: &CertificateDer<'_>) -> Option<UserInfo> {
    let (_, parsed) = x509_parser::parse_x509_certificate(cert.as_ref()).ok()?;
    let subject = parsed.subject();
    let name = subject.iter_common_name().next()?.as_str().ok()?;
    if name.is_empty() {
        return None;
    }
    let groups = subject
        .iter_organization()
        .filter_map(|o| o.as_str().ok())
        .map(String::from)
        .collect();
    Some(UserInfo {
        name: name.to_string(),
        groups,
        ..UserInfo::default()
    })
}

/// Client certificates as Go's TLS stack verifies them: webpki's verification, and besides it
/// X.509 v1 certificates (what `openssl x509 -req` makes without extensions), which webpki
/// refuses and Go accepts: one signed directly by a client CA, within both certificates'
/// validity, and the handshake signed with its key.
#[derive(Debug)]
struct V1ClientVerifier {
    inner: Arc<dyn rustls::server::danger::ClientCertVerifier>,
    roots: Vec<CertificateDer<'static>>,
    algorithms: rustls::crypto::WebPkiSupportedAlgorithms,
}

/// A certificate in X.509 version 1 (no extensions).
fn is_v1(cert: &CertificateDer<'_>) -> bool {
    x509_parser::parse_x509_certificate(cert.as_ref())
        .is_ok_and(|(_, c)| c.version() == x509_parser::x509::X509Version::V1)
}

impl V1ClientVerifier {
    /// A v1 leaf signed by one of the roots, both valid at `now`.
    fn verify_v1(&self, leaf: &CertificateDer<'_>, now: rustls_pki_types::UnixTime) -> bool {
        let Ok((_, leaf)) = x509_parser::parse_x509_certificate(leaf.as_ref()) else {
            return false;
        };
        let Ok(at) = x509_parser::time::ASN1Time::from_timestamp(
            i64::try_from(now.as_secs()).unwrap_or(i64::MAX),
        ) else {
            return false;
        };
        // Go refuses SHA-1 signatures on certificates (as webpki does on v3 ones).
        let sha1 = [
            "1.2.840.113549.1.1.5",
            "1.2.840.10045.4.1",
            "1.2.840.10040.4.3",
        ];
        let algorithm = leaf.signature_algorithm.algorithm.to_id_string();
        !sha1.contains(&algorithm.as_str())
            && leaf.validity().is_valid_at(at)
            && self.roots.iter().any(|root| {
                x509_parser::parse_x509_certificate(root.as_ref()).is_ok_and(|(_, root)| {
                    root.subject().as_raw() == leaf.issuer().as_raw()
                        && root.validity().is_valid_at(at)
                        && leaf.verify_signature(Some(root.public_key())).is_ok()
                })
            })
    }

    /// The handshake's signature, checked with a v1 certificate's key: in TLS 1.2 by the
    /// algorithms the scheme allows, in TLS 1.3 as rustls checks a raw key (a scheme TLS 1.3
    /// allows, its first algorithm).
    fn verify_signed_with_v1(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
        tls13: bool,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        let bad = || rustls::Error::InvalidCertificate(rustls::CertificateError::BadSignature);
        let (_, parsed) = x509_parser::parse_x509_certificate(cert.as_ref()).map_err(|_| bad())?;
        if tls13 {
            let spki = rustls_pki_types::SubjectPublicKeyInfoDer::from(parsed.public_key().raw);
            return rustls::crypto::verify_tls13_signature_with_raw_key(
                message,
                &spki,
                dss,
                &self.algorithms,
            );
        }
        let key = &parsed.public_key().subject_public_key.data;
        let candidates = self
            .algorithms
            .mapping
            .iter()
            .find(|(scheme, _)| *scheme == dss.scheme)
            .map(|(_, algs)| *algs)
            .unwrap_or_default();
        candidates
            .iter()
            .any(|alg| alg.verify_signature(key, message, dss.signature()).is_ok())
            .then(rustls::client::danger::HandshakeSignatureValid::assertion)
            .ok_or_else(bad)
    }
}

impl rustls::server::danger::ClientCertVerifier for V1ClientVerifier {
    fn offer_client_auth(&self) -> bool {
        self.inner.offer_client_auth()
    }

    fn client_auth_mandatory(&self) -> bool {
        self.inner.client_auth_mandatory()
    }

    fn root_hint_subjects(&self) -> &[rustls::DistinguishedName] {
        self.inner.root_hint_subjects()
    }

    fn verify_client_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        now: rustls_pki_types::UnixTime,
    ) -> Result<rustls::server::danger::ClientCertVerified, rustls::Error> {
        match self
            .inner
            .verify_client_cert(end_entity, intermediates, now)
        {
            Err(_) if is_v1(end_entity) && self.verify_v1(end_entity, now) => {
                Ok(rustls::server::danger::ClientCertVerified::assertion())
            }
            verified => verified,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        match self.inner.verify_tls12_signature(message, cert, dss) {
            Err(_) if is_v1(cert) => self.verify_signed_with_v1(message, cert, dss, false),
            verified => verified,
        }
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        match self.inner.verify_tls13_signature(message, cert, dss) {
            Err(_) if is_v1(cert) => self.verify_signed_with_v1(message, cert, dss, true),
            verified => verified,
        }
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fixed plain-HTTP bundle is one well-formed CA certificate, valid for a long time.
    #[test]
    fn the_plain_http_root_ca_is_a_long_lived_ca_certificate() {
        let der = certificates(PLAIN_HTTP_ROOT_CA, "plain-HTTP CA").unwrap();
        assert_eq!(der.len(), 1);
        let (_, parsed) = x509_parser::parse_x509_certificate(der[0].as_ref()).unwrap();
        assert!(parsed.is_ca());
        let name = parsed.subject().iter_common_name().next().unwrap();
        assert_eq!(name.as_str().unwrap(), "kubefake CA");
        let year = 365 * 24 * 3600;
        let until = parsed.validity().not_after.timestamp();
        assert!(
            until > chrono::Utc::now().timestamp() + 50 * year,
            "{until}"
        );
    }

    #[test]
    fn client_certificates_name_user_and_groups() {
        let ca = CertificateAuthority::generate("test CA").unwrap();
        let (cert, _key) = ca.client("jane", Some("system:masters")).unwrap();
        let der = certificates(&cert, "client").unwrap().remove(0);
        let user = certificate_user(&der).unwrap();
        assert_eq!(user.name, "jane");
        assert_eq!(user.groups, ["system:masters"]);
    }

    #[test]
    fn server_config_takes_generated_certificates() {
        let ca = CertificateAuthority::generate("test CA").unwrap();
        let serving = ca
            .serving(&default_names("10.1.2.3".parse().unwrap()))
            .unwrap();
        assert!(server_config(&serving, None).is_ok());
        assert!(server_config(&serving, Some(&ca.cert_pem)).is_ok());
        let err = server_config(&serving, Some("not a pem")).unwrap_err();
        assert_eq!(err.to_string(), "client CA: no certificate found");
    }
}
