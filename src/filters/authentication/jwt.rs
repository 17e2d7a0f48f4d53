//! Service account tokens: the JWTs kube-apiserver 1.36 issues for a TokenRequest
//! (`pkg/serviceaccount/claims.go`, `jwt.go`, `pkg/registry/core/serviceaccount/storage/token.go`)
//! and accepts as bearer tokens (`jwtTokenAuthenticator.AuthenticateToken`, then
//! `validator.Validate`).
//!
//! Pure: no store, no clock, no I/O. The caller passes `now`, the keys and the configuration
//! (`--service-account-issuer`, `--api-audiences`, ...), and does what needs the store through
//! [`Verified::check_live_objects`], which takes the lookup as a closure.
//!
//! Signing is ES256 only (ECDSA P-256, SHA-256), the algorithm the apiserver picks for a P-256
//! `--service-account-signing-key-file`; RSA keys (RS256) are refused when loaded.
//!
//! [`verify_for_audiences`] runs the apiserver's checks in the apiserver's order, so that the
//! first failure is the one the apiserver reports: size, three parts, the payload's `iss`
//! (before the signature, as `hasCorrectIssuer` does), the header, the keys named by `kid`,
//! the signature, the claims, the audiences, then `nbf`/`exp`/`iat` with one minute of leeway.
//! Whether the service account and the bound object still exist is the caller's step after.
//!
//! Bounded work: a token over [`MAX_TOKEN_BYTES`] is refused before anything is decoded, every
//! later step is linear in the token's length (base64, serde_json with its recursion limit,
//! one hash per candidate key, audiences matched through a hash set), and nothing panics on
//! token input.

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine as _;
use ring::rand::SystemRandom;
use ring::signature::{
    EcdsaKeyPair, KeyPair as _, UnparsedPublicKey, ECDSA_P256_SHA256_FIXED,
    ECDSA_P256_SHA256_FIXED_SIGNING,
};
use rustls_pki_types::pem::{PemObject as _, SectionKind};
use serde::{Deserialize, Deserializer, Serialize};
use sha2::{Digest as _, Sha256};

use crate::machinery::gofmt::go_quote_list;

/// Longest token [`verify`] decodes, and longest [`SigningKey::sign`] issues, so that every
/// issued token verifies. The apiserver has no limit of its own (only its 1 MiB request header
/// limit); a token it issues is about 1 KiB, and more only with hundreds of audiences. 64 KiB
/// keeps a forged token's decoding cheap and leaves room for any real one.
pub const MAX_TOKEN_BYTES: usize = 64 * 1024;

/// Clock skew tolerated on `nbf`, `exp` and `iat` (go-jose's `jwt.DefaultLeeway`), and how long
/// a deleted service account or bound object still authenticates its tokens.
pub const LEEWAY_SECONDS: i64 = 60;

/// `spec.expirationSeconds` of a TokenRequest that sets none (`SetDefaults_TokenRequestSpec`).
pub const DEFAULT_EXPIRATION_SECONDS: i64 = 60 * 60;

/// Shortest `spec.expirationSeconds` a TokenRequest may ask for (`MinTokenAgeSec`); validation
/// says "may not specify a duration less than 10 minutes".
pub const MIN_EXPIRATION_SECONDS: i64 = 10 * 60;

/// Longest `spec.expirationSeconds` a TokenRequest may ask for; validation says "may not
/// specify a duration larger than 2^32 seconds".
pub const MAX_EXPIRATION_SECONDS: i64 = 1 << 32;

/// The lifetime kubelet asks for its projected volume tokens; asked for a pod with the API
/// audiences, it is the signal to extend the token (`WarnOnlyBoundTokenExpirationSeconds`).
pub const WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS: i64 = 60 * 60 + 7;

/// The lifetime an extended token really gets (`ExpirationExtensionSeconds`, one year), the
/// default of the apiserver's `MaxExtendedExpiration`.
pub const EXPIRATION_EXTENSION_SECONDS: i64 = 24 * 365 * 60 * 60;

/// Prefix of a service account's user name, `system:serviceaccount:NAMESPACE:NAME`.
pub const SERVICE_ACCOUNT_USERNAME_PREFIX: &str = "system:serviceaccount:";

/// The group every service account belongs to.
pub const ALL_SERVICE_ACCOUNTS_GROUP: &str = "system:serviceaccounts";

/// User extra key carrying the bound pod's name.
pub const POD_NAME_KEY: &str = "authentication.kubernetes.io/pod-name";

/// User extra key carrying the bound pod's UID.
pub const POD_UID_KEY: &str = "authentication.kubernetes.io/pod-uid";

/// User extra key carrying the node name (of the bound node, or of the bound pod's node).
pub const NODE_NAME_KEY: &str = "authentication.kubernetes.io/node-name";

/// User extra key carrying the node UID, when the token has one.
pub const NODE_UID_KEY: &str = "authentication.kubernetes.io/node-uid";

/// User extra key carrying `JTI=<jti>`, what audit logs use to trace a token to its issuance.
pub const CREDENTIAL_ID_KEY: &str = "authentication.kubernetes.io/credential-id";

/// The only JWS algorithm issued or accepted.
const ALG: &str = "ES256";

/// DER of a P-256 SubjectPublicKeyInfo up to the uncompressed point: SEQUENCE { SEQUENCE {
/// id-ecPublicKey, prime256v1 }, BIT STRING (no unused bits) }, as Go's
/// `x509.MarshalPKIXPublicKey` writes it.
const SPKI_P256_PREFIX: [u8; 26] = [
    0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06, 0x08, 0x2a,
    0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
];

/// Length of an uncompressed P-256 point: 0x04, x, y.
const P256_POINT_LEN: usize = 65;

/// Why a key could not be loaded or generated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KeyError {
    /// No private key block in the PEM data (client-go `keyutil`'s wording).
    #[error("data does not contain a valid RSA or ECDSA private key")]
    NoPrivateKey,
    /// No usable public key in the PEM data (client-go `keyutil`'s wording).
    #[error("data does not contain any valid RSA or ECDSA public keys")]
    NoPublicKey,
    /// An RSA key: the apiserver would sign RS256 with it, kubefake signs ES256 only.
    #[error("RSA keys are not supported: service account tokens are signed with ES256, which needs an ECDSA P-256 key")]
    Rsa,
    /// A private key ring refused: another curve or algorithm, a SEC1 key without its public
    /// key, or bad DER.
    #[error(
        "not a usable ECDSA P-256 private key ({0}): service account tokens are signed with ES256"
    )]
    Rejected(String),
    /// The PEM framing itself is broken.
    #[error("reading PEM: {0}")]
    Pem(String),
    /// The system random number generator failed.
    #[error("error generating key")]
    Generate,
}

/// Why a token was refused, or could not be issued. Display texts are the apiserver's where it
/// has one; [`JwtError::unrecognized`] tells which errors the apiserver does not report at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JwtError {
    /// Over [`MAX_TOKEN_BYTES`] (kubefake's own limit).
    #[error("token is {len} bytes, over the {max} bytes accepted", max = MAX_TOKEN_BYTES)]
    TooLarge {
        /// The token's length in bytes.
        len: usize,
    },
    /// Not a JWS compact serialization with a JSON payload and header; the reason is kubefake's.
    #[error("token is not a JWT: {0}")]
    Malformed(&'static str),
    /// The unverified payload names an issuer that is not accepted (or none).
    #[error("token issuer {0:?} is invalid")]
    IssuerNotAccepted(String),
    /// No key has the header's `kid` (or there are no keys at all).
    #[error("invalid signature, no keys found")]
    NoKeys,
    /// The signature does not verify with any candidate key, or `alg` is not ES256, or the
    /// header has `crit`: go-jose reports all of them as this one error.
    #[error("go-jose/go-jose: error in cryptographic primitive")]
    InvalidSignature,
    /// The signed payload's claims do not have the types of the JWT claims (e.g. a string
    /// `exp`); the text is serde's, not Go's.
    #[error("{0}")]
    InvalidClaims(String),
    /// No audience of the token is one of the target audiences.
    #[error("token audiences {} is invalid for the target audiences {}", go_quote_list(.token), go_quote_list(.target))]
    AudienceMismatch {
        /// The token's `aud`, or the API audiences for a token without one.
        token: Vec<String>,
        /// The audiences the request is for.
        target: Vec<String>,
    },
    /// `exp` is more than [`LEEWAY_SECONDS`] in the past.
    #[error("service account token has expired")]
    Expired,
    /// `nbf` is more than [`LEEWAY_SECONDS`] in the future.
    #[error("service account token is not valid yet")]
    NotValidYet,
    /// `iat` is more than [`LEEWAY_SECONDS`] in the future.
    #[error("service account token is issued in the future")]
    IssuedInTheFuture,
    /// Looking the service account up failed; the lookup's own error text, shown as is.
    #[error("{0}")]
    ServiceAccountLookup(String),
    /// The service account was deleted and recreated since the token was issued.
    #[error("service account UID ({actual}) does not match claim ({claim})")]
    ServiceAccountUidMismatch {
        /// The UID of the service account that exists now.
        actual: String,
        /// The UID in the token.
        claim: String,
    },
    /// The service account has been deleting for longer than [`LEEWAY_SECONDS`].
    #[error("service account {namespace}/{name} has been deleted")]
    ServiceAccountDeleted {
        /// The service account's namespace.
        namespace: String,
        /// The service account's name.
        name: String,
    },
    /// The bound secret, pod or node is gone, or has been deleting for longer than
    /// [`LEEWAY_SECONDS`].
    #[error("service account token has been invalidated")]
    Invalidated,
    /// The bound secret, pod or node was deleted and recreated since the token was issued.
    #[error("{kind} UID ({actual}) does not match service account {kind} ref claim ({claim})")]
    BoundObjectUidMismatch {
        /// Secret, Pod or Node.
        kind: ObjectKind,
        /// The UID of the object that exists now.
        actual: String,
        /// The UID in the token.
        claim: String,
    },
    /// Signing failed (the apiserver answers 500 with this text).
    #[error("failed to generate token: {0}")]
    Sign(String),
}

impl JwtError {
    /// Whether the apiserver would answer "not a service account token" rather than an error:
    /// its authenticator returns no error then, so the next token authenticator is tried and a
    /// TokenReview reports no `status.error`.
    pub fn unrecognized(&self) -> bool {
        matches!(
            self,
            JwtError::TooLarge { .. } | JwtError::Malformed(_) | JwtError::IssuerNotAccepted(_)
        )
    }
}

/// The objects a token's validity depends on, as [`Verified::check_live_objects`] asks for them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ObjectKind {
    /// The token's service account.
    ServiceAccount,
    /// A bound secret (`boundObjectRef.kind: Secret`).
    Secret,
    /// A bound pod (`boundObjectRef.kind: Pod`).
    Pod,
    /// A bound node (`boundObjectRef.kind: Node`); cluster-scoped.
    Node,
}

impl fmt::Display for ObjectKind {
    /// The lower-case word the apiserver's messages use.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ObjectKind::ServiceAccount => "service account",
            ObjectKind::Secret => "secret",
            ObjectKind::Pod => "pod",
            ObjectKind::Node => "node",
        })
    }
}

/// An ES256 signing key, the `--service-account-signing-key-file` of a kubefake server.
pub struct SigningKey {
    pair: EcdsaKeyPair,
    pkcs8: Vec<u8>,
    public: VerifyingKey,
}

impl fmt::Debug for SigningKey {
    /// Shows the key ID only, never the private key.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SigningKey")
            .field("key_id", &self.public.key_id)
            .finish_non_exhaustive()
    }
}

impl SigningKey {
    /// A fresh P-256 key, for a server started without a key file.
    pub fn generate() -> Result<Self, KeyError> {
        let rng = SystemRandom::new();
        let doc = EcdsaKeyPair::generate_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .map_err(|_| KeyError::Generate)?;
        Self::from_pkcs8_der(doc.as_ref())
    }

    /// Loads the first private key of a PEM file: `PRIVATE KEY` (PKCS#8) or `EC PRIVATE KEY`
    /// (SEC1, what `openssl ecparam -genkey` writes; it must hold its public key, as OpenSSL's
    /// and Go's do). Other blocks are skipped, as client-go's `keyutil` skips them.
    pub fn from_pkcs8_pem(pem: &str) -> Result<Self, KeyError> {
        for item in <(SectionKind, Vec<u8>)>::pem_slice_iter(pem.as_bytes()) {
            let (kind, der) = item.map_err(|e| KeyError::Pem(e.to_string()))?;
            match kind {
                SectionKind::PrivateKey => return Self::from_pkcs8_der(&der),
                SectionKind::EcPrivateKey => return Self::from_pkcs8_der(&pkcs8_from_sec1(&der)?),
                SectionKind::RsaPrivateKey => return Err(KeyError::Rsa),
                _ => {}
            }
        }
        Err(KeyError::NoPrivateKey)
    }

    fn from_pkcs8_der(der: &[u8]) -> Result<Self, KeyError> {
        let pair =
            EcdsaKeyPair::from_pkcs8(&ECDSA_P256_SHA256_FIXED_SIGNING, der, &SystemRandom::new())
                .map_err(|e| KeyError::Rejected(e.to_string()))?;
        let public = VerifyingKey::from_point(pair.public_key().as_ref())?;
        Ok(SigningKey {
            pair,
            pkcs8: der.to_vec(),
            public,
        })
    }

    /// The key as a PKCS#8 `PRIVATE KEY` PEM, to write a generated key where a user (or a
    /// second server) can load it again.
    pub fn to_pkcs8_pem(&self) -> String {
        pem_encode("PRIVATE KEY", &self.pkcs8)
    }

    /// The public half, to verify what this key signs.
    pub fn verifying_key(&self) -> &VerifyingKey {
        &self.public
    }

    /// The public key as a `PUBLIC KEY` PEM, what `--service-account-key-file` takes.
    pub fn public_key_pem(&self) -> String {
        self.public.public_key_pem()
    }

    /// The `kid` this key's tokens carry (see [`VerifyingKey::key_id`]).
    pub fn key_id(&self) -> &str {
        &self.public.key_id
    }

    /// Signs claims into a token, as `jwtTokenGenerator.GenerateToken` does: header
    /// `{"alg":"ES256","kid":KEY_ID}`, payload the claims with keys in go-jose's (sorted) order.
    pub fn sign(&self, claims: &Claims) -> Result<String, JwtError> {
        let header = format!(r#"{{"alg":"{ALG}","kid":"{}"}}"#, self.public.key_id);
        let payload = serde_json::to_vec(claims).map_err(|e| JwtError::Sign(e.to_string()))?;
        let mut token = String::with_capacity(128 + payload.len() * 4 / 3);
        URL_SAFE_NO_PAD.encode_string(header, &mut token);
        token.push('.');
        URL_SAFE_NO_PAD.encode_string(&payload, &mut token);
        let signature = self
            .pair
            .sign(&SystemRandom::new(), token.as_bytes())
            .map_err(|_| JwtError::Sign("ECDSA signing failed".to_owned()))?;
        token.push('.');
        URL_SAFE_NO_PAD.encode_string(signature.as_ref(), &mut token);
        if token.len() > MAX_TOKEN_BYTES {
            return Err(JwtError::TooLarge { len: token.len() });
        }
        Ok(token)
    }
}

/// A P-256 public key that tokens are verified with, and its key ID.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyingKey {
    /// DER SubjectPublicKeyInfo: [`SPKI_P256_PREFIX`] then the uncompressed point.
    spki: Vec<u8>,
    key_id: String,
}

impl VerifyingKey {
    fn from_point(point: &[u8]) -> Result<Self, KeyError> {
        if point.len() != P256_POINT_LEN || point.first() != Some(&0x04) {
            return Err(KeyError::Rejected(
                "not an uncompressed P-256 point".to_owned(),
            ));
        }
        let mut spki = SPKI_P256_PREFIX.to_vec();
        spki.extend_from_slice(point);
        Ok(Self::from_spki(spki))
    }

    fn from_spki(spki: Vec<u8>) -> Self {
        let key_id = URL_SAFE_NO_PAD.encode(Sha256::digest(&spki));
        VerifyingKey { spki, key_id }
    }

    /// A P-256 key from its DER SubjectPublicKeyInfo; `None` for any other key.
    fn from_p256_spki(der: Vec<u8>) -> Option<Self> {
        let p256 = der.len() == SPKI_P256_PREFIX.len() + P256_POINT_LEN
            && der.starts_with(&SPKI_P256_PREFIX)
            && der.get(SPKI_P256_PREFIX.len()) == Some(&0x04);
        p256.then(|| Self::from_spki(der))
    }

    /// Every P-256 key of a `--service-account-key-file`: `PUBLIC KEY` blocks, certificates and
    /// private key blocks (whose public half is taken), in order. As client-go's `keyutil` does,
    /// blocks that are not such keys are skipped, and a file without any is an error; RSA keys
    /// are skipped too, since kubefake verifies ES256 only.
    pub fn from_pem(pem: &str) -> Result<Vec<Self>, KeyError> {
        let mut keys = Vec::new();
        for item in <(SectionKind, Vec<u8>)>::pem_slice_iter(pem.as_bytes()) {
            let (kind, der) = item.map_err(|e| KeyError::Pem(e.to_string()))?;
            let key = match kind {
                SectionKind::PublicKey => Self::from_p256_spki(der),
                // keyutil reads the public key of a certificate too (envtest's
                // `--service-account-key-file` is one).
                SectionKind::Certificate => x509_parser::parse_x509_certificate(&der)
                    .ok()
                    .and_then(|(_, cert)| Self::from_p256_spki(cert.public_key().raw.to_vec())),
                SectionKind::PrivateKey => SigningKey::from_pkcs8_der(&der).ok().map(|k| k.public),
                SectionKind::EcPrivateKey => pkcs8_from_sec1(&der)
                    .and_then(|d| SigningKey::from_pkcs8_der(&d))
                    .ok()
                    .map(|k| k.public),
                _ => None,
            };
            keys.extend(key);
        }
        if keys.is_empty() {
            return Err(KeyError::NoPublicKey);
        }
        Ok(keys)
    }

    /// The `kid` of tokens signed with this key, computed as the apiserver's
    /// `keyIDFromPublicKey` does (base64url of the SHA-256 of the DER SubjectPublicKeyInfo), so
    /// that a kubefake token and an apiserver token from the same key name the same key.
    pub fn key_id(&self) -> &str {
        &self.key_id
    }

    /// The key as a `PUBLIC KEY` PEM, what `--service-account-key-file` takes.
    pub fn public_key_pem(&self) -> String {
        pem_encode("PUBLIC KEY", &self.spki)
    }

    /// The key as the apiserver lists it in `/openid/v1/jwks` (go-jose's JSONWebKey).
    pub fn jwk(&self) -> serde_json::Value {
        let point = &self.spki[SPKI_P256_PREFIX.len() + 1..];
        let (x, y) = point.split_at(point.len() / 2);
        serde_json::json!({
            "use": "sig",
            "kty": "EC",
            "kid": self.key_id,
            "crv": "P-256",
            "alg": ALG,
            "x": URL_SAFE_NO_PAD.encode(x),
            "y": URL_SAFE_NO_PAD.encode(y),
        })
    }

    fn point(&self) -> &[u8] {
        &self.spki[SPKI_P256_PREFIX.len()..]
    }
}

/// Wraps a SEC1 `ECPrivateKey` into the PKCS#8 `PrivateKeyInfo` ring reads (version 0,
/// id-ecPublicKey with prime256v1). ring then checks the inner structure and that the public key
/// matches the private one.
fn pkcs8_from_sec1(sec1: &[u8]) -> Result<Vec<u8>, KeyError> {
    const VERSION_AND_ALGORITHM: [u8; 24] = [
        0x02, 0x01, 0x00, 0x30, 0x13, 0x06, 0x07, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01, 0x06,
        0x08, 0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07,
    ];
    // A P-256 ECPrivateKey is 121 bytes; anything near 64 KiB is not one.
    if sec1.len() > 0xfff0 {
        return Err(KeyError::Rejected("EC PRIVATE KEY too large".to_owned()));
    }
    let mut body = VERSION_AND_ALGORITHM.to_vec();
    body.push(0x04);
    push_der_len(&mut body, sec1.len());
    body.extend_from_slice(sec1);
    let mut der = vec![0x30];
    push_der_len(&mut der, body.len());
    der.extend_from_slice(&body);
    Ok(der)
}

/// DER definite length, up to 0xffff.
fn push_der_len(out: &mut Vec<u8>, len: usize) {
    let [_, _, _, _, _, _, hi, lo] = (len as u64).to_be_bytes();
    match len {
        0..0x80 => out.push(lo),
        0x80..0x100 => out.extend_from_slice(&[0x81, lo]),
        _ => out.extend_from_slice(&[0x82, hi, lo]),
    }
}

fn pem_encode(label: &str, der: &[u8]) -> String {
    let b64 = STANDARD.encode(der);
    let mut out = format!("-----BEGIN {label}-----\n");
    for line in b64.as_bytes().chunks(64) {
        // base64 output is ASCII, so every chunk is valid UTF-8.
        out.push_str(std::str::from_utf8(line).unwrap_or_default());
        out.push('\n');
    }
    out.push_str(&format!("-----END {label}-----\n"));
    out
}

/// A reference to an object by name and UID, the `ref` of claims.go (empty fields omitted).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ref {
    /// The object's name.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    /// The object's `metadata.uid`, checked at each use so that a recreated object does not
    /// inherit tokens.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub uid: String,
}

/// The private claim `kubernetes.io` (claims.go's `kubernetes`); fields in go-jose's order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Kubernetes {
    /// The service account's namespace, also the bound pod's or secret's.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub namespace: String,
    /// The bound node, or the node the bound pod was scheduled to (its UID is empty when that
    /// node did not exist at issuance).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node: Option<Ref>,
    /// The bound pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod: Option<Ref>,
    /// The bound secret.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub secret: Option<Ref>,
    /// The service account the token authenticates as.
    #[serde(default)]
    pub serviceaccount: Ref,
    /// For an extended token, when it would have expired had it not been extended: after it,
    /// the apiserver still accepts the token but records it as stale.
    #[serde(
        default,
        deserialize_with = "numeric_date",
        skip_serializing_if = "Option::is_none"
    )]
    pub warnafter: Option<i64>,
}

/// A service account token's payload. Fields are in go-jose's order (it sorts them), so the
/// payload reads as the apiserver's does. Times are seconds since the epoch (JWT NumericDate);
/// absent times are not checked, as go-jose does not check them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Claims {
    /// Who the token is for. Always a JSON array when issued; a single string is accepted.
    #[serde(
        default,
        deserialize_with = "audience",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub aud: Vec<String>,
    /// Expiry.
    #[serde(
        default,
        deserialize_with = "numeric_date",
        skip_serializing_if = "Option::is_none"
    )]
    pub exp: Option<i64>,
    /// Issuance.
    #[serde(
        default,
        deserialize_with = "numeric_date",
        skip_serializing_if = "Option::is_none"
    )]
    pub iat: Option<i64>,
    /// The issuer, `--service-account-issuer`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub iss: String,
    /// A random UUID naming this token, reported as the credential ID.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub jti: String,
    /// The Kubernetes-specific claims.
    #[serde(rename = "kubernetes.io", default)]
    pub kubernetes: Kubernetes,
    /// Not before.
    #[serde(
        default,
        deserialize_with = "numeric_date",
        skip_serializing_if = "Option::is_none"
    )]
    pub nbf: Option<i64>,
    /// `system:serviceaccount:NAMESPACE:NAME`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub sub: String,
}

/// go-jose's NumericDate: any JSON number, truncated to whole seconds; `null` is absent.
fn numeric_date<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    // `as` saturates, where Go's float-to-int conversion is undefined: both only for dates
    // past the year 292 billion.
    Ok(Option::<f64>::deserialize(d)?.map(|secs| secs as i64))
}

/// go-jose's Audience: a string or an array of strings.
fn audience<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    Ok(match Option::<OneOrMany>::deserialize(d)? {
        None => Vec::new(),
        Some(OneOrMany::One(one)) => vec![one],
        Some(OneOrMany::Many(many)) => many,
    })
}

/// The service account a token is issued for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServiceAccountRef {
    /// The service account's namespace.
    pub namespace: String,
    /// The service account's name.
    pub name: String,
    /// The service account's `metadata.uid`.
    pub uid: String,
}

/// The object a TokenRequest's `spec.boundObjectRef` names, resolved by the caller: the token
/// stops authenticating once that object is gone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BoundObject {
    /// A pod, and the node it is scheduled to, if any: `spec.nodeName`, with the Node's UID, or
    /// an empty UID when that Node does not exist (the apiserver embeds the name anyway).
    Pod {
        /// The pod.
        pod: Ref,
        /// The pod's node.
        node: Option<Ref>,
    },
    /// A secret.
    Secret(Ref),
    /// A node.
    Node(Ref),
}

/// How long a TokenRequest's token lives, decided by [`ExpirationPolicy::lifetime`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lifetime {
    /// The response's `spec.expirationSeconds`, and what `status.expirationTimestamp` adds to
    /// the request's time: the requested lifetime, shortened to the maximum.
    pub expiration_seconds: i64,
    /// What `exp` adds to `iat`: [`Self::expiration_seconds`], or the extended lifetime.
    pub token_expiration_seconds: i64,
    /// What `warnafter` adds to `iat`; 0 for no `warnafter` (a token that is not extended).
    pub warn_after_seconds: i64,
    /// The response warning when the lifetime was shortened.
    pub warning: Option<String>,
}

impl Lifetime {
    /// A plain lifetime: not shortened, not extended.
    pub fn seconds(seconds: i64) -> Self {
        Lifetime {
            expiration_seconds: seconds,
            token_expiration_seconds: seconds,
            warn_after_seconds: 0,
            warning: None,
        }
    }
}

/// The kube-apiserver flags that decide a TokenRequest's lifetime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExpirationPolicy {
    /// `--service-account-max-token-expiration` in seconds; 0 (the default) for no maximum.
    /// The apiserver refuses to start unless it is 0 or between 3600 and 2^32.
    pub max_expiration_seconds: i64,
    /// `--service-account-extend-token-expiration` (default true): kubelet's pod-bound tokens
    /// asking for [`WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS`] get a year, with a `warnafter`.
    pub extend_expiration: bool,
    /// What an extended token gets ([`EXPIRATION_EXTENSION_SECONDS`]; only an external signer
    /// shortens it). It ignores `max_expiration_seconds`.
    pub max_extended_expiration_seconds: i64,
}

impl Default for ExpirationPolicy {
    /// kube-apiserver's defaults.
    fn default() -> Self {
        ExpirationPolicy {
            max_expiration_seconds: 0,
            extend_expiration: true,
            max_extended_expiration_seconds: EXPIRATION_EXTENSION_SECONDS,
        }
    }
}

impl ExpirationPolicy {
    /// `TokenREST.Create`'s lifetime: shorten to the maximum (with a warning), then extend a
    /// pod-bound token whose lifetime is exactly [`WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS`] and
    /// whose audiences are all API audiences. `requested_seconds` is `spec.expirationSeconds`
    /// after defaulting ([`DEFAULT_EXPIRATION_SECONDS`]) and validation; `audiences` is
    /// `spec.audiences` after defaulting (the API audiences when empty).
    pub fn lifetime(
        &self,
        requested_seconds: i64,
        pod_bound: bool,
        audiences: &[String],
        api_audiences: &[String],
    ) -> Lifetime {
        let mut lifetime = Lifetime::seconds(requested_seconds);
        if self.max_expiration_seconds > 0 && requested_seconds > self.max_expiration_seconds {
            lifetime = Lifetime::seconds(self.max_expiration_seconds);
            lifetime.warning = Some(format!(
                "requested expiration of {requested_seconds} seconds shortened to {} seconds",
                self.max_expiration_seconds
            ));
        }
        let kube_audiences = audiences.iter().all(|a| api_audiences.contains(a));
        if self.extend_expiration
            && pod_bound
            && lifetime.expiration_seconds == WARN_ONLY_BOUND_TOKEN_EXPIRATION_SECONDS
            && kube_audiences
        {
            lifetime.warn_after_seconds = lifetime.expiration_seconds;
            lifetime.token_expiration_seconds = self.max_extended_expiration_seconds;
        }
        lifetime
    }
}

impl Claims {
    /// A TokenRequest's claims, as claims.go's `Claims` builds them: `iat` and `nbf` are `now`
    /// (whole seconds), `exp` and `warnafter` count from it, `jti` is a fresh UUID.
    /// `audiences` is `spec.audiences` after defaulting.
    pub fn new(
        issuer: &str,
        service_account: &ServiceAccountRef,
        bound: Option<&BoundObject>,
        audiences: Vec<String>,
        lifetime: &Lifetime,
        now: SystemTime,
    ) -> Claims {
        let now = unix_seconds(now);
        let mut kubernetes = Kubernetes {
            namespace: service_account.namespace.clone(),
            serviceaccount: Ref {
                name: service_account.name.clone(),
                uid: service_account.uid.clone(),
            },
            ..Kubernetes::default()
        };
        match bound {
            Some(BoundObject::Pod { pod, node }) => {
                kubernetes.pod = Some(pod.clone());
                kubernetes.node = node.clone();
            }
            Some(BoundObject::Secret(secret)) => kubernetes.secret = Some(secret.clone()),
            Some(BoundObject::Node(node)) => kubernetes.node = Some(node.clone()),
            None => {}
        }
        if lifetime.warn_after_seconds != 0 {
            kubernetes.warnafter = Some(now.saturating_add(lifetime.warn_after_seconds));
        }
        Claims {
            aud: audiences,
            exp: Some(now.saturating_add(lifetime.token_expiration_seconds)),
            iat: Some(now),
            iss: issuer.to_owned(),
            jti: uuid::Uuid::new_v4().to_string(),
            kubernetes,
            nbf: Some(now),
            sub: username(&service_account.namespace, &service_account.name),
        }
    }
}

/// A service account's user name, `system:serviceaccount:NAMESPACE:NAME` (`MakeUsername`).
pub fn username(namespace: &str, name: &str) -> String {
    format!("{SERVICE_ACCOUNT_USERNAME_PREFIX}{namespace}:{name}")
}

/// A token whose signature, issuer, audiences and times hold. It authenticates only once
/// [`Verified::check_live_objects`] also holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    /// The token's claims.
    pub claims: Claims,
    /// The audiences the token is valid for here (the authenticator response's audiences,
    /// TokenReview's `status.audiences`): the target audiences the token has, in target order.
    pub audiences: Vec<String>,
    /// The key ID of the key whose signature verified.
    pub key_id: String,
}

/// What the store holds of the service account or a bound object, as much as
/// [`Verified::check_live_objects`] needs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LiveObject {
    /// The object's `metadata.uid`.
    pub uid: String,
    /// The object's `metadata.deletionTimestamp`.
    pub deletion_timestamp: Option<SystemTime>,
}

/// Who a verified token authenticates as (`ServiceAccountInfo`), for the request's user.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServiceAccountInfo {
    /// The service account's namespace.
    pub namespace: String,
    /// The service account's name.
    pub name: String,
    /// The service account's UID, the user's UID.
    pub uid: String,
    /// The bound pod's name, or empty.
    pub pod_name: String,
    /// The bound pod's UID, or empty.
    pub pod_uid: String,
    /// The bound node's name, or the bound pod's node's, or empty.
    pub node_name: String,
    /// That node's UID, or empty.
    pub node_uid: String,
    /// `JTI=<jti>`, or empty for a token without `jti`.
    pub credential_id: String,
}

impl ServiceAccountInfo {
    /// The user name, `system:serviceaccount:NAMESPACE:NAME`.
    pub fn username(&self) -> String {
        username(&self.namespace, &self.name)
    }

    /// The user's groups: `system:serviceaccounts` and `system:serviceaccounts:NAMESPACE`.
    pub fn groups(&self) -> Vec<String> {
        vec![
            ALL_SERVICE_ACCOUNTS_GROUP.to_owned(),
            format!("{ALL_SERVICE_ACCOUNTS_GROUP}:{}", self.namespace),
        ]
    }

    /// The user's extra (`UserInfo`): pod name and UID when both are known, the credential ID,
    /// node name when known and node UID when known too.
    pub fn extra(&self) -> BTreeMap<String, Vec<String>> {
        let mut extra = BTreeMap::new();
        let mut put = |key: &str, value: &str| {
            extra.insert(key.to_owned(), vec![value.to_owned()]);
        };
        if !self.pod_name.is_empty() && !self.pod_uid.is_empty() {
            put(POD_NAME_KEY, &self.pod_name);
            put(POD_UID_KEY, &self.pod_uid);
        }
        if !self.credential_id.is_empty() {
            put(CREDENTIAL_ID_KEY, &self.credential_id);
        }
        if !self.node_name.is_empty() {
            put(NODE_NAME_KEY, &self.node_name);
            if !self.node_uid.is_empty() {
                put(NODE_UID_KEY, &self.node_uid);
            }
        }
        extra
    }
}

impl Verified {
    /// Who the token authenticates as, once [`Self::check_live_objects`] holds.
    pub fn service_account_info(&self) -> ServiceAccountInfo {
        let k = &self.claims.kubernetes;
        let pod = k.pod.clone().unwrap_or_default();
        let node = k.node.clone().unwrap_or_default();
        ServiceAccountInfo {
            namespace: k.namespace.clone(),
            name: k.serviceaccount.name.clone(),
            uid: k.serviceaccount.uid.clone(),
            pod_name: pod.name,
            pod_uid: pod.uid,
            node_name: node.name,
            node_uid: node.uid,
            credential_id: if self.claims.jti.is_empty() {
                String::new()
            } else {
                format!("JTI={}", self.claims.jti)
            },
        }
    }

    /// The store half of `validator.Validate`: the service account, then the bound secret, pod
    /// or node (a pod-bound token's node is not looked up) must exist with the token's UID and
    /// not have been deleting for longer than [`LEEWAY_SECONDS`]. `get(kind, namespace, name)`
    /// reads one object (namespace empty for a node); its error text is reported for the
    /// service account, and any error means "invalidated" for a bound object.
    pub fn check_live_objects<F>(&self, now: SystemTime, mut get: F) -> Result<(), JwtError>
    where
        F: FnMut(ObjectKind, &str, &str) -> Result<LiveObject, String>,
    {
        let k = &self.claims.kubernetes;
        let deleted_before = unix_nanos(now) - i128::from(LEEWAY_SECONDS) * NANOS;
        let deleted = |o: &LiveObject| {
            o.deletion_timestamp
                .is_some_and(|t| unix_nanos(t) < deleted_before)
        };
        let sa = get(
            ObjectKind::ServiceAccount,
            &k.namespace,
            &k.serviceaccount.name,
        )
        .map_err(JwtError::ServiceAccountLookup)?;
        if sa.uid != k.serviceaccount.uid {
            return Err(JwtError::ServiceAccountUidMismatch {
                actual: sa.uid,
                claim: k.serviceaccount.uid.clone(),
            });
        }
        if deleted(&sa) {
            return Err(JwtError::ServiceAccountDeleted {
                namespace: k.namespace.clone(),
                name: k.serviceaccount.name.clone(),
            });
        }
        let bound = [
            (ObjectKind::Secret, k.namespace.as_str(), k.secret.as_ref()),
            (ObjectKind::Pod, k.namespace.as_str(), k.pod.as_ref()),
            (
                ObjectKind::Node,
                "",
                k.node.as_ref().filter(|_| k.pod.is_none()),
            ),
        ];
        for (kind, namespace, claim) in bound {
            let Some(claim) = claim else { continue };
            let live = get(kind, namespace, &claim.name).map_err(|_| JwtError::Invalidated)?;
            if live.uid != claim.uid {
                return Err(JwtError::BoundObjectUidMismatch {
                    kind,
                    actual: live.uid,
                    claim: claim.uid.clone(),
                });
            }
            if deleted(&live) {
                return Err(JwtError::Invalidated);
            }
        }
        Ok(())
    }

    /// For an extended token past its `warnafter`, the seconds since: the apiserver accepts the
    /// token and adds the audit annotation `authentication.k8s.io/stale-token` with
    /// `subject: SUB, seconds after warning threshold: N`.
    pub fn seconds_after_warn(&self, now: SystemTime) -> Option<i64> {
        let warn_after = self.claims.kubernetes.warnafter.filter(|w| *w != 0)?;
        (unix_nanos(now) > i128::from(warn_after) * NANOS)
            .then(|| unix_seconds(now).saturating_sub(warn_after))
    }
}

/// [`verify_for_audiences`] for a request to this API: the target audiences are the API
/// audiences (`--api-audiences`, which default to the issuers).
pub fn verify(
    token: &str,
    keys: &[VerifyingKey],
    now: SystemTime,
    issuers: &[String],
    api_audiences: &[String],
) -> Result<Verified, JwtError> {
    verify_for_audiences(token, keys, now, issuers, api_audiences, api_audiences)
}

/// Verifies a token as `jwtTokenAuthenticator.AuthenticateToken` and the time checks of
/// `validator.Validate` do. `keys` are tried in order among those whose key ID is the header's
/// `kid` (all of them without a `kid`); `issuers` are the accepted `--service-account-issuer`
/// values; `target_audiences` are what the token must be for: a TokenReview's `spec.audiences`,
/// or the API audiences. A token without `aud` counts as having the API audiences, and with no
/// API audiences at all any token's audiences are accepted.
pub fn verify_for_audiences(
    token: &str,
    keys: &[VerifyingKey],
    now: SystemTime,
    issuers: &[String],
    api_audiences: &[String],
    target_audiences: &[String],
) -> Result<Verified, JwtError> {
    if token.len() > MAX_TOKEN_BYTES {
        return Err(JwtError::TooLarge { len: token.len() });
    }
    let mut parts = token.split('.');
    let (Some(header), Some(payload), Some(signature), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(JwtError::Malformed("not three dot-separated parts"));
    };
    let payload = base64url(payload, "the payload is not base64url")?;
    let issuer = unverified_issuer(&payload)?;
    if !issuers.contains(&issuer) {
        return Err(JwtError::IssuerNotAccepted(issuer));
    }
    let header = Header::parse(header)?;
    let signature = base64url(signature, "the signature is not base64url")?;
    let signing_input = token
        .rsplit_once('.')
        .map_or(token, |(input, _)| input)
        .as_bytes();
    let key_id = check_signature(&header, keys, signing_input, &signature)?;
    let claims: Claims = serde_json::from_slice(&payload).map_err(|e| {
        // serde_json ends its messages with " at line L column C", which says nothing here.
        let text = e.to_string();
        JwtError::InvalidClaims(
            text.rsplit_once(" at line ")
                .map_or(text.as_str(), |(t, _)| t)
                .to_owned(),
        )
    })?;
    let audiences = match_audiences(&claims.aud, api_audiences, target_audiences)?;
    check_times(&claims, now)?;
    Ok(Verified {
        claims,
        audiences,
        key_id,
    })
}

fn base64url(part: &str, malformed: &'static str) -> Result<Vec<u8>, JwtError> {
    URL_SAFE_NO_PAD
        .decode(part)
        .map_err(|_| JwtError::Malformed(malformed))
}

/// The payload's `iss` before the signature is checked, as `hasCorrectIssuer` reads it: only to
/// tell whether the token is a service account token at all.
fn unverified_issuer(payload: &[u8]) -> Result<String, JwtError> {
    #[derive(Deserialize)]
    struct Unverified {
        #[serde(default)]
        iss: Option<String>,
    }
    let malformed = JwtError::Malformed("the payload is not a JSON object with a string iss");
    // serde would also read a struct from a JSON array, which Go refuses.
    if payload.trim_ascii_start().first() != Some(&b'{') {
        return Err(malformed);
    }
    serde_json::from_slice::<Unverified>(payload)
        .map(|u| u.iss.unwrap_or_default())
        .map_err(|_| malformed)
}

/// The JOSE header fields verification looks at.
struct Header {
    alg: String,
    kid: String,
    crit: bool,
}

impl Header {
    /// go-jose's parsing: a JSON object whose `kid`, if any, is a string; a missing or
    /// non-string `alg` only fails the signature.
    fn parse(part: &str) -> Result<Header, JwtError> {
        let bytes = base64url(part, "the header is not base64url")?;
        let map: serde_json::Map<String, serde_json::Value> = serde_json::from_slice(&bytes)
            .map_err(|_| JwtError::Malformed("the header is not a JSON object"))?;
        let kid = match map.get("kid") {
            None | Some(serde_json::Value::Null) => String::new(),
            Some(serde_json::Value::String(kid)) => kid.clone(),
            Some(_) => return Err(JwtError::Malformed("the header's kid is not a string")),
        };
        let alg = map.get("alg").and_then(|a| a.as_str()).unwrap_or_default();
        Ok(Header {
            alg: alg.to_owned(),
            kid,
            crit: map.contains_key("crit"),
        })
    }
}

/// The key lookup of `StaticPublicKeysGetter` then go-jose's verification: no candidate key is
/// [`JwtError::NoKeys`], before `alg` is looked at.
fn check_signature(
    header: &Header,
    keys: &[VerifyingKey],
    signing_input: &[u8],
    signature: &[u8],
) -> Result<String, JwtError> {
    let mut candidates = keys
        .iter()
        .filter(|k| header.kid.is_empty() || k.key_id == header.kid)
        .peekable();
    if candidates.peek().is_none() {
        return Err(JwtError::NoKeys);
    }
    if header.alg != ALG || header.crit {
        return Err(JwtError::InvalidSignature);
    }
    candidates
        .find(|key| {
            UnparsedPublicKey::new(&ECDSA_P256_SHA256_FIXED, key.point())
                .verify(signing_input, signature)
                .is_ok()
        })
        .map(|key| key.key_id.clone())
        .ok_or(JwtError::InvalidSignature)
}

/// `Audiences.Intersect`: the target audiences the token has, in target order; a token without
/// audiences (a legacy token) has the API audiences.
fn match_audiences(
    token: &[String],
    api: &[String],
    target: &[String],
) -> Result<Vec<String>, JwtError> {
    let token = if token.is_empty() { api } else { token };
    let has: HashSet<&str> = token.iter().map(String::as_str).collect();
    let matched: Vec<String> = target
        .iter()
        .filter(|a| has.contains(a.as_str()))
        .cloned()
        .collect();
    if matched.is_empty() && !api.is_empty() {
        return Err(JwtError::AudienceMismatch {
            token: token.to_vec(),
            target: target.to_vec(),
        });
    }
    Ok(matched)
}

/// go-jose's `ValidateWithLeeway` time checks, in its order, at nanosecond precision as Go
/// compares `time.Time`.
fn check_times(claims: &Claims, now: SystemTime) -> Result<(), JwtError> {
    let now = unix_nanos(now);
    let at = |secs: i64, offset: i64| (i128::from(secs) + i128::from(offset)) * NANOS;
    if claims.nbf.is_some_and(|nbf| now < at(nbf, -LEEWAY_SECONDS)) {
        return Err(JwtError::NotValidYet);
    }
    if claims.exp.is_some_and(|exp| now > at(exp, LEEWAY_SECONDS)) {
        return Err(JwtError::Expired);
    }
    if claims.iat.is_some_and(|iat| now < at(iat, -LEEWAY_SECONDS)) {
        return Err(JwtError::IssuedInTheFuture);
    }
    Ok(())
}

const NANOS: i128 = 1_000_000_000;

fn unix_nanos(t: SystemTime) -> i128 {
    match t.duration_since(UNIX_EPOCH) {
        Ok(after) => after.as_nanos() as i128,
        Err(before) => -(before.duration().as_nanos() as i128),
    }
}

/// Go's `Time.Unix`: whole seconds, rounded down.
fn unix_seconds(t: SystemTime) -> i64 {
    let secs = unix_nanos(t).div_euclid(NANOS);
    i64::try_from(secs).unwrap_or(if secs < 0 { i64::MIN } else { i64::MAX })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use std::time::Duration;

    const ISSUER: &str = "https://kubernetes.default.svc.cluster.local";
    const NOW: u64 = 1_700_000_000;

    /// The EC key of kubernetes' `pkg/serviceaccount/jwt_test.go`, with the key ID the apiserver
    /// derives for it (`ecdsaKeyID`).
    const K8S_EC_PRIVATE_KEY: &str = "-----BEGIN EC PRIVATE KEY-----
MHcCAQEEIEZmTmUhuanLjPA2CLquXivuwBDHTt5XYwgIr/kA1LtRoAoGCCqGSM49
AwEHoUQDQgAEH6cuzP8XuD5wal6wf9M6xDljTOPLX2i8uIp/C/ASqiIGUeeKQtX0
/IR3qCXyThP/dbCiHrF3v1cuhBOHY8CLVg==
-----END EC PRIVATE KEY-----";
    const K8S_EC_PUBLIC_KEY: &str = "-----BEGIN PUBLIC KEY-----
MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEH6cuzP8XuD5wal6wf9M6xDljTOPL
X2i8uIp/C/ASqiIGUeeKQtX0/IR3qCXyThP/dbCiHrF3v1cuhBOHY8CLVg==
-----END PUBLIC KEY-----";
    const K8S_EC_KEY_ID: &str = "SoABiieYuNx4UdqYvZRVeuC6SihxgLrhLy9peHMHpTc";

    fn at(secs: u64) -> SystemTime {
        UNIX_EPOCH + Duration::from_secs(secs)
    }

    fn strings(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    fn sa() -> ServiceAccountRef {
        ServiceAccountRef {
            namespace: "default".to_owned(),
            name: "builder".to_owned(),
            uid: "sa-uid".to_owned(),
        }
    }

    fn claims() -> Claims {
        Claims::new(
            ISSUER,
            &sa(),
            None,
            strings(&[ISSUER]),
            &Lifetime::seconds(DEFAULT_EXPIRATION_SECONDS),
            at(NOW),
        )
    }

    fn key() -> SigningKey {
        SigningKey::from_pkcs8_pem(K8S_EC_PRIVATE_KEY).expect("test key")
    }

    fn check(token: &str, keys: &[VerifyingKey], now: u64) -> Result<Verified, JwtError> {
        verify(
            token,
            keys,
            at(now),
            &strings(&[ISSUER]),
            &strings(&[ISSUER]),
        )
    }

    /// A token with the given header and payload JSON and signature bytes.
    fn raw(header: &str, payload: &str, signature: &[u8]) -> String {
        format!(
            "{}.{}.{}",
            URL_SAFE_NO_PAD.encode(header),
            URL_SAFE_NO_PAD.encode(payload),
            URL_SAFE_NO_PAD.encode(signature)
        )
    }

    /// A token with the given header and payload JSON, signed by `key`.
    fn signed(key: &SigningKey, header: &str, payload: &str) -> String {
        let input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header),
            URL_SAFE_NO_PAD.encode(payload)
        );
        let sig = key
            .pair
            .sign(&SystemRandom::new(), input.as_bytes())
            .expect("sign");
        format!("{input}.{}", URL_SAFE_NO_PAD.encode(sig.as_ref()))
    }

    fn header_of(key: &SigningKey) -> String {
        format!(r#"{{"alg":"ES256","kid":"{}"}}"#, key.key_id())
    }

    fn payload_with(edit: impl FnOnce(&mut serde_json::Value)) -> String {
        let mut value = serde_json::to_value(claims()).expect("claims");
        edit(&mut value);
        value.to_string()
    }

    #[test]
    fn key_id_is_the_apiservers() {
        assert_eq!(key().key_id(), K8S_EC_KEY_ID);
        let public = VerifyingKey::from_pem(K8S_EC_PUBLIC_KEY).expect("public key");
        assert_eq!(public.len(), 1);
        assert_eq!(public[0].key_id(), K8S_EC_KEY_ID);
        assert_eq!(key().public_key_pem().trim(), K8S_EC_PUBLIC_KEY);
        // A private key in a key file stands for its public half.
        assert_eq!(VerifyingKey::from_pem(K8S_EC_PRIVATE_KEY), Ok(public));
    }

    #[test]
    fn pem_round_trip() {
        let generated = SigningKey::generate().expect("generate");
        let reloaded = SigningKey::from_pkcs8_pem(&generated.to_pkcs8_pem()).expect("reload");
        assert_eq!(reloaded.key_id(), generated.key_id());
        let public = VerifyingKey::from_pem(&generated.public_key_pem()).expect("public");
        assert_eq!(public, vec![generated.verifying_key().clone()]);
        let token = generated.sign(&claims()).expect("sign");
        assert!(check(&token, &public, NOW).is_ok());
    }

    #[rstest]
    #[case::rsa(
        "-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----\n",
        KeyError::Rsa
    )]
    #[case::none(
        "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
        KeyError::NoPrivateKey
    )]
    #[case::garbage_pkcs8(
        "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
        KeyError::Rejected("InvalidEncoding".to_owned())
    )]
    fn private_key_refused(#[case] pem: &str, #[case] expected: KeyError) {
        assert_eq!(SigningKey::from_pkcs8_pem(pem).map(|_| ()), Err(expected));
    }

    #[test]
    fn public_keys_refused() {
        let rsa_spki = "-----BEGIN PUBLIC KEY-----\nMAAA\n-----END PUBLIC KEY-----\n";
        assert_eq!(VerifyingKey::from_pem(rsa_spki), Err(KeyError::NoPublicKey));
        assert_eq!(VerifyingKey::from_pem(""), Err(KeyError::NoPublicKey));
    }

    #[test]
    fn round_trip() {
        let key = key();
        let pod = Ref {
            name: "web-0".to_owned(),
            uid: "pod-uid".to_owned(),
        };
        let node = Ref {
            name: "node-1".to_owned(),
            uid: String::new(),
        };
        let bound = BoundObject::Pod {
            pod,
            node: Some(node),
        };
        let claims = Claims::new(
            ISSUER,
            &sa(),
            Some(&bound),
            strings(&["api", ISSUER]),
            &Lifetime::seconds(600),
            at(NOW) + Duration::from_millis(999),
        );
        let token = key.sign(&claims).expect("sign");
        let header = token.split('.').next().expect("header");
        assert_eq!(
            URL_SAFE_NO_PAD.decode(header).expect("b64"),
            format!(r#"{{"alg":"ES256","kid":"{K8S_EC_KEY_ID}"}}"#).as_bytes()
        );
        let payload: serde_json::Value = serde_json::from_slice(
            &URL_SAFE_NO_PAD
                .decode(token.split('.').nth(1).expect("payload"))
                .expect("b64"),
        )
        .expect("json");
        let expected = serde_json::json!({
            "aud": ["api", ISSUER], "exp": NOW + 600, "iat": NOW, "iss": ISSUER,
            "jti": claims.jti, "nbf": NOW, "sub": "system:serviceaccount:default:builder",
            "kubernetes.io": {
                "namespace": "default",
                "node": {"name": "node-1"},
                "pod": {"name": "web-0", "uid": "pod-uid"},
                "serviceaccount": {"name": "builder", "uid": "sa-uid"},
            },
        });
        assert_eq!(payload, expected);

        let verified = check(&token, &[key.verifying_key().clone()], NOW + 10).expect("verify");
        assert_eq!(verified.claims, claims);
        assert_eq!(verified.audiences, strings(&[ISSUER]));
        assert_eq!(verified.key_id, K8S_EC_KEY_ID);
        let info = verified.service_account_info();
        assert_eq!(info.username(), "system:serviceaccount:default:builder");
        assert_eq!(
            info.groups(),
            strings(&["system:serviceaccounts", "system:serviceaccounts:default"])
        );
        let extra: Vec<(String, Vec<String>)> = info.extra().into_iter().collect();
        let jti = format!("JTI={}", claims.jti);
        assert_eq!(
            extra,
            vec![
                (CREDENTIAL_ID_KEY.to_owned(), vec![jti]),
                (NODE_NAME_KEY.to_owned(), strings(&["node-1"])),
                (POD_NAME_KEY.to_owned(), strings(&["web-0"])),
                (POD_UID_KEY.to_owned(), strings(&["pod-uid"])),
            ]
        );
    }

    /// How each case builds its token from the test key and a second key.
    type Make = fn(&SigningKey, &SigningKey) -> String;

    #[rstest]
    #[case::tampered_payload(
        (|k, _| {
            let token = k.sign(&claims()).expect("sign");
            let parts: Vec<&str> = token.split('.').collect();
            let forged = payload_with(|c| c["sub"] = "system:serviceaccount:kube-system:admin".into());
            format!("{}.{}.{}", parts[0], URL_SAFE_NO_PAD.encode(forged), parts[2])
        }) as Make,
        NOW,
        JwtError::InvalidSignature
    )]
    #[case::other_key((|_, other| other.sign(&claims()).expect("sign")) as Make, NOW, JwtError::NoKeys)]
    #[case::other_key_claiming_our_kid(
        (|k, other| signed(other, &header_of(k), &payload_with(|_| {}))) as Make,
        NOW,
        JwtError::InvalidSignature
    )]
    #[case::wrong_issuer(
        (|k, _| signed(k, &header_of(k), &payload_with(|c| c["iss"] = "https://evil".into()))) as Make,
        NOW,
        JwtError::IssuerNotAccepted("https://evil".to_owned())
    )]
    #[case::no_issuer(
        (|k, _| signed(k, &header_of(k), &payload_with(|c| c["iss"] = serde_json::Value::Null))) as Make,
        NOW,
        JwtError::IssuerNotAccepted(String::new())
    )]
    #[case::audience_mismatch(
        (|k, _| signed(k, &header_of(k), &payload_with(|c| c["aud"] = serde_json::json!(["vault", "s3"])))) as Make,
        NOW,
        JwtError::AudienceMismatch { token: strings(&["vault", "s3"]), target: strings(&[ISSUER]) }
    )]
    #[case::expired((|k, _| k.sign(&claims()).expect("sign")) as Make, NOW + 3600 + 61, JwtError::Expired)]
    #[case::not_yet_valid((|k, _| k.sign(&claims()).expect("sign")) as Make, NOW - 61, JwtError::NotValidYet)]
    #[case::issued_in_the_future(
        (|k, _| signed(k, &header_of(k), &payload_with(|c| { c.as_object_mut().expect("object").remove("nbf"); }))) as Make,
        NOW - 61,
        JwtError::IssuedInTheFuture
    )]
    #[case::string_exp(
        (|k, _| signed(k, &header_of(k), &payload_with(|c| c["exp"] = "tomorrow".into()))) as Make,
        NOW,
        JwtError::InvalidClaims("invalid type: string \"tomorrow\", expected f64".to_owned())
    )]
    #[case::two_parts((|_, _| "e30.e30".to_owned()) as Make, NOW, JwtError::Malformed("not three dot-separated parts"))]
    #[case::four_parts((|k, _| format!("{}.e30", k.sign(&claims()).expect("sign"))) as Make, NOW, JwtError::Malformed("not three dot-separated parts"))]
    #[case::empty((|_, _| String::new()) as Make, NOW, JwtError::Malformed("not three dot-separated parts"))]
    #[case::json_serialization((|_, _| r#"{"payload":"e30","signatures":[]}"#.to_owned()) as Make, NOW, JwtError::Malformed("not three dot-separated parts"))]
    #[case::bad_base64_payload((|_, _| "e30.e30=.AAAA".to_owned()) as Make, NOW, JwtError::Malformed("the payload is not base64url"))]
    #[case::standard_base64_payload((|_, _| "e30.+/8.AAAA".to_owned()) as Make, NOW, JwtError::Malformed("the payload is not base64url"))]
    #[case::non_json_payload(
        (|_, _| raw(r#"{"alg":"ES256"}"#, "not json", b"sig")) as Make,
        NOW,
        JwtError::Malformed("the payload is not a JSON object with a string iss")
    )]
    #[case::array_payload(
        (|_, _| raw(r#"{"alg":"ES256"}"#, &format!("[{ISSUER:?}]"), b"sig")) as Make,
        NOW,
        JwtError::Malformed("the payload is not a JSON object with a string iss")
    )]
    #[case::numeric_issuer(
        (|_, _| raw(r#"{"alg":"ES256"}"#, r#"{"iss":1}"#, b"sig")) as Make,
        NOW,
        JwtError::Malformed("the payload is not a JSON object with a string iss")
    )]
    #[case::bad_base64_header(
        (|k, _| format!("!{}", k.sign(&claims()).expect("sign"))) as Make,
        NOW,
        JwtError::Malformed("the header is not base64url")
    )]
    #[case::non_json_header(
        (|_, _| raw("alg: ES256", &payload_with(|_| {}), b"sig")) as Make,
        NOW,
        JwtError::Malformed("the header is not a JSON object")
    )]
    #[case::numeric_kid(
        (|_, _| raw(r#"{"alg":"ES256","kid":7}"#, &payload_with(|_| {}), b"sig")) as Make,
        NOW,
        JwtError::Malformed("the header's kid is not a string")
    )]
    #[case::bad_base64_signature(
        (|k, _| format!("{}!", k.sign(&claims()).expect("sign"))) as Make,
        NOW,
        JwtError::Malformed("the signature is not base64url")
    )]
    #[case::unknown_kid(
        (|k, _| signed(k, r#"{"alg":"ES256","kid":"other"}"#, &payload_with(|_| {}))) as Make,
        NOW,
        JwtError::NoKeys
    )]
    #[case::alg_none(
        (|k, _| raw(&format!(r#"{{"alg":"none","kid":"{}"}}"#, k.key_id()), &payload_with(|_| {}), b"")) as Make,
        NOW,
        JwtError::InvalidSignature
    )]
    #[case::alg_none_without_kid(
        (|_, _| raw(r#"{"alg":"none"}"#, &payload_with(|_| {}), b"")) as Make,
        NOW,
        JwtError::InvalidSignature
    )]
    #[case::hs256_keyed_with_the_public_key((|k, _| hs256(k)) as Make, NOW, JwtError::InvalidSignature)]
    #[case::es384_label(
        (|k, _| signed(k, &format!(r#"{{"alg":"ES384","kid":"{}"}}"#, k.key_id()), &payload_with(|_| {}))) as Make,
        NOW,
        JwtError::InvalidSignature
    )]
    #[case::crit(
        (|k, _| signed(k, &format!(r#"{{"alg":"ES256","crit":["exp"],"exp":1,"kid":"{}"}}"#, k.key_id()), &payload_with(|_| {}))) as Make,
        NOW,
        JwtError::InvalidSignature
    )]
    #[case::short_signature(
        (|k, _| {
            let token = k.sign(&claims()).expect("sign");
            let (input, sig) = token.rsplit_once('.').expect("three parts");
            let sig = URL_SAFE_NO_PAD.decode(sig).expect("b64");
            format!("{input}.{}", URL_SAFE_NO_PAD.encode(&sig[..63]))
        }) as Make,
        NOW,
        JwtError::InvalidSignature
    )]
    #[case::too_large(
        (|_, _| format!("e30.{}.e30", "A".repeat(MAX_TOKEN_BYTES))) as Make,
        NOW,
        JwtError::TooLarge { len: MAX_TOKEN_BYTES + 8 }
    )]
    fn refused(#[case] make: Make, #[case] now: u64, #[case] expected: JwtError) {
        let key = key();
        let other = SigningKey::generate().expect("generate");
        let token = make(&key, &other);
        let unrecognized = expected.unrecognized();
        let got = check(&token, &[key.verifying_key().clone()], now);
        assert_eq!(got.as_ref().err(), Some(&expected), "{token}");
        assert_eq!(got.err().map(|e| e.unrecognized()), Some(unrecognized));
    }

    /// The classic algorithm confusion: HMAC-SHA256 keyed with the public key's PEM.
    fn hs256(k: &SigningKey) -> String {
        let input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(format!(r#"{{"alg":"HS256","kid":"{}"}}"#, k.key_id())),
            URL_SAFE_NO_PAD.encode(payload_with(|_| {}))
        );
        let mac_key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, k.public_key_pem().as_bytes());
        let tag = ring::hmac::sign(&mac_key, input.as_bytes());
        format!("{input}.{}", URL_SAFE_NO_PAD.encode(tag.as_ref()))
    }

    #[rstest]
    #[case::nbf_leeway(NOW - 60)]
    #[case::exp_leeway(NOW + 3600 + 60)]
    #[case::just_issued(NOW)]
    fn accepted_within_leeway(#[case] now: u64) {
        let key = key();
        let token = key.sign(&claims()).expect("sign");
        assert!(check(&token, &[key.verifying_key().clone()], now).is_ok());
    }

    #[test]
    fn exp_leeway_is_to_the_nanosecond() {
        let key = key();
        let token = key.sign(&claims()).expect("sign");
        let keys = [key.verifying_key().clone()];
        let late = at(NOW + 3600 + 60) + Duration::from_nanos(1);
        let got = verify(
            &token,
            &keys,
            late,
            &strings(&[ISSUER]),
            &strings(&[ISSUER]),
        );
        assert_eq!(got.err(), Some(JwtError::Expired));
    }

    #[test]
    fn keys_without_kid_are_all_tried() {
        let key = key();
        let other = SigningKey::generate().expect("generate");
        let token = signed(&key, r#"{"alg":"ES256"}"#, &payload_with(|_| {}));
        let keys = [other.verifying_key().clone(), key.verifying_key().clone()];
        let verified = check(&token, &keys, NOW).expect("verify");
        assert_eq!(verified.key_id, K8S_EC_KEY_ID);
        assert_eq!(check(&token, &[], NOW).err(), Some(JwtError::NoKeys));
    }

    #[rstest]
    // (token aud, api audiences, target audiences, matched audiences or the error's token list)
    #[case::single_string_aud(serde_json::json!(ISSUER), &[ISSUER], &[ISSUER], Ok(vec![ISSUER]))]
    #[case::legacy_no_aud(serde_json::Value::Null, &["api"], &["api"], Ok(vec!["api"]))]
    #[case::legacy_no_aud_review(serde_json::Value::Null, &["api"], &["vault"], Err(vec!["api"]))]
    #[case::target_order(serde_json::json!(["a", "b", "c"]), &["x"], &["c", "z", "a"], Ok(vec!["c", "a"]))]
    #[case::no_api_audiences(serde_json::json!(["a"]), &[], &[], Ok(vec![]))]
    fn audiences(
        #[case] aud: serde_json::Value,
        #[case] api: &[&str],
        #[case] target: &[&str],
        #[case] expected: Result<Vec<&str>, Vec<&str>>,
    ) {
        let key = key();
        let token = signed(&key, &header_of(&key), &payload_with(|c| c["aud"] = aud));
        let got = verify_for_audiences(
            &token,
            &[key.verifying_key().clone()],
            at(NOW),
            &strings(&[ISSUER]),
            &strings(api),
            &strings(target),
        );
        let expected = expected
            .map(|m| strings(&m))
            .map_err(|t| JwtError::AudienceMismatch {
                token: strings(&t),
                target: strings(target),
            });
        assert_eq!(got.map(|v| v.audiences), expected);
    }

    #[test]
    fn error_texts() {
        let mismatch = JwtError::AudienceMismatch {
            token: strings(&["a", "b"]),
            target: strings(&["c"]),
        };
        assert_eq!(
            mismatch.to_string(),
            r#"token audiences ["a" "b"] is invalid for the target audiences ["c"]"#
        );
        let pod = JwtError::BoundObjectUidMismatch {
            kind: ObjectKind::Pod,
            actual: "new".to_owned(),
            claim: "old".to_owned(),
        };
        assert_eq!(
            pod.to_string(),
            "pod UID (new) does not match service account pod ref claim (old)"
        );
        assert_eq!(
            JwtError::IssuerNotAccepted("x".to_owned()).to_string(),
            r#"token issuer "x" is invalid"#
        );
    }

    /// A live store for [`Verified::check_live_objects`]: kind, name, UID, deleted seconds ago.
    type Store<'a> = &'a [(ObjectKind, &'a str, &'a str, Option<u64>)];

    fn live(
        store: Store<'_>,
    ) -> impl FnMut(ObjectKind, &str, &str) -> Result<LiveObject, String> + '_ {
        move |kind, _namespace, name| {
            store
                .iter()
                .find(|(k, n, _, _)| *k == kind && *n == name)
                .map(|(_, _, uid, deleted)| LiveObject {
                    uid: (*uid).to_owned(),
                    deletion_timestamp: deleted.map(|ago| at(NOW - ago)),
                })
                .ok_or_else(|| format!("{kind} {name:?} not found"))
        }
    }

    const SA: (ObjectKind, &str, &str, Option<u64>) =
        (ObjectKind::ServiceAccount, "builder", "sa-uid", None);

    fn pod_ref() -> Ref {
        Ref {
            name: "web-0".to_owned(),
            uid: "pod-uid".to_owned(),
        }
    }

    #[rstest]
    #[case::ok(None, &[SA], Ok(()))]
    #[case::sa_missing(None, &[], Err(JwtError::ServiceAccountLookup("service account \"builder\" not found".to_owned())))]
    #[case::sa_recreated(
        None,
        &[(ObjectKind::ServiceAccount, "builder", "new-uid", None)],
        Err(JwtError::ServiceAccountUidMismatch { actual: "new-uid".to_owned(), claim: "sa-uid".to_owned() })
    )]
    #[case::sa_deleting_recently(None, &[(ObjectKind::ServiceAccount, "builder", "sa-uid", Some(60))], Ok(()))]
    #[case::sa_deleted(
        None,
        &[(ObjectKind::ServiceAccount, "builder", "sa-uid", Some(61))],
        Err(JwtError::ServiceAccountDeleted { namespace: "default".to_owned(), name: "builder".to_owned() })
    )]
    #[case::pod_ok(Some(BoundObject::Pod { pod: pod_ref(), node: Some(Ref { name: "gone".to_owned(), uid: "x".to_owned() }) }), &[SA, (ObjectKind::Pod, "web-0", "pod-uid", None)], Ok(()))]
    #[case::pod_missing(Some(BoundObject::Pod { pod: pod_ref(), node: None }), &[SA], Err(JwtError::Invalidated))]
    #[case::pod_recreated(
        Some(BoundObject::Pod { pod: pod_ref(), node: None }),
        &[SA, (ObjectKind::Pod, "web-0", "other", None)],
        Err(JwtError::BoundObjectUidMismatch { kind: ObjectKind::Pod, actual: "other".to_owned(), claim: "pod-uid".to_owned() })
    )]
    #[case::pod_deleted(Some(BoundObject::Pod { pod: pod_ref(), node: None }), &[SA, (ObjectKind::Pod, "web-0", "pod-uid", Some(120))], Err(JwtError::Invalidated))]
    #[case::secret_recreated(
        Some(BoundObject::Secret(Ref { name: "s".to_owned(), uid: "s-uid".to_owned() })),
        &[SA, (ObjectKind::Secret, "s", "other", None)],
        Err(JwtError::BoundObjectUidMismatch { kind: ObjectKind::Secret, actual: "other".to_owned(), claim: "s-uid".to_owned() })
    )]
    #[case::node_missing(Some(BoundObject::Node(Ref { name: "n".to_owned(), uid: "n-uid".to_owned() })), &[SA], Err(JwtError::Invalidated))]
    #[case::node_ok(Some(BoundObject::Node(Ref { name: "n".to_owned(), uid: "n-uid".to_owned() })), &[SA, (ObjectKind::Node, "n", "n-uid", None)], Ok(()))]
    fn live_objects(
        #[case] bound: Option<BoundObject>,
        #[case] store: Store<'_>,
        #[case] expected: Result<(), JwtError>,
    ) {
        let key = key();
        let claims = Claims::new(
            ISSUER,
            &sa(),
            bound.as_ref(),
            Vec::new(),
            &Lifetime::seconds(3600),
            at(NOW),
        );
        let token = key.sign(&claims).expect("sign");
        let verified = check(&token, &[key.verifying_key().clone()], NOW).expect("verify");
        assert_eq!(verified.check_live_objects(at(NOW), live(store)), expected);
    }

    #[rstest]
    // (max, extend, requested, pod-bound, audiences) -> (spec, exp, warnafter, warning)
    #[case::default(0, true, 3600, true, &[ISSUER], (3600, 3600, 0, false))]
    #[case::shortened(7200, true, 10_000, false, &[ISSUER], (7200, 7200, 0, true))]
    #[case::extended(0, true, 3607, true, &[ISSUER], (3607, EXPIRATION_EXTENSION_SECONDS, 3607, false))]
    #[case::extended_beyond_max(86_400, true, 3607, true, &[ISSUER], (3607, EXPIRATION_EXTENSION_SECONDS, 3607, false))]
    #[case::not_pod_bound(0, true, 3607, false, &[ISSUER], (3607, 3607, 0, false))]
    #[case::foreign_audience(0, true, 3607, true, &[ISSUER, "vault"], (3607, 3607, 0, false))]
    #[case::extension_off(0, false, 3607, true, &[ISSUER], (3607, 3607, 0, false))]
    #[case::shortened_below_3607(3600, true, 3607, true, &[ISSUER], (3600, 3600, 0, true))]
    fn lifetime(
        #[case] max: i64,
        #[case] extend: bool,
        #[case] requested: i64,
        #[case] pod_bound: bool,
        #[case] audiences: &[&str],
        #[case] expected: (i64, i64, i64, bool),
    ) {
        let policy = ExpirationPolicy {
            max_expiration_seconds: max,
            extend_expiration: extend,
            ..ExpirationPolicy::default()
        };
        let got = policy.lifetime(
            requested,
            pod_bound,
            &strings(audiences),
            &strings(&[ISSUER]),
        );
        let (spec, exp, warn_after, warned) = expected;
        assert_eq!(
            (
                got.expiration_seconds,
                got.token_expiration_seconds,
                got.warn_after_seconds
            ),
            (spec, exp, warn_after)
        );
        let warning =
            format!("requested expiration of {requested} seconds shortened to {max} seconds");
        assert_eq!(got.warning, warned.then_some(warning));
    }

    #[test]
    fn extended_token_warns_after() {
        let key = key();
        let lifetime = ExpirationPolicy::default().lifetime(
            3607,
            true,
            &strings(&[ISSUER]),
            &strings(&[ISSUER]),
        );
        let claims = Claims::new(ISSUER, &sa(), None, strings(&[ISSUER]), &lifetime, at(NOW));
        assert_eq!(claims.kubernetes.warnafter, Some(NOW as i64 + 3607));
        assert_eq!(claims.exp, Some(NOW as i64 + EXPIRATION_EXTENSION_SECONDS));
        let token = key.sign(&claims).expect("sign");
        let keys = [key.verifying_key().clone()];
        let verified = check(&token, &keys, NOW + 3607).expect("verify");
        assert_eq!(verified.seconds_after_warn(at(NOW + 3607)), None);
        assert_eq!(verified.seconds_after_warn(at(NOW + 4000)), Some(393));
        assert!(check(&token, &keys, NOW + 100 * 86_400).is_ok());
    }

    #[test]
    fn oversized_claims_are_not_issued() {
        let many = vec!["audience".repeat(100); 100];
        let claims = Claims::new(ISSUER, &sa(), None, many, &Lifetime::seconds(3600), at(NOW));
        assert!(matches!(
            key().sign(&claims),
            Err(JwtError::TooLarge { .. })
        ));
    }

    #[test]
    fn jwk() {
        let jwk = key().verifying_key().jwk();
        assert_eq!(jwk["kid"], K8S_EC_KEY_ID);
        assert_eq!(jwk["alg"], "ES256");
        assert_eq!(jwk["x"].as_str().map(str::len), Some(43));
    }

    /// Written by go-jose v2.6.3 as kube-apiserver 1.36 writes them (`x509.MarshalPKCS8PrivateKey`,
    /// `x509.MarshalECPrivateKey`, `signerFromECDSAPrivateKey`, `GenerateToken` with claims.go's
    /// claims for a pod-bound, extended token issued at [`NOW`]).
    const GO_PKCS8: &str = "-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgPGWn0+II3rMkSWsn
P7r/l8+4hk4Pg78K+cnUbPVTvSKhRANCAARpW20n984NgbMaif8Zq9avfZXq4UYj
E4yMj8VYUyVtoWJZoyz4p5AUeUKA36OMdPHeQX3h0LfJQfGnYJ8Ni4VZ
-----END PRIVATE KEY-----
";
    const GO_SEC1: &str = "-----BEGIN EC PRIVATE KEY-----
MHcCAQEEIDxlp9PiCN6zJElrJz+6/5fPuIZOD4O/CvnJ1Gz1U70ioAoGCCqGSM49
AwEHoUQDQgAEaVttJ/fODYGzGon/GavWr32V6uFGIxOMjI/FWFMlbaFiWaMs+KeQ
FHlCgN+jjHTx3kF94dC3yUHxp2CfDYuFWQ==
-----END EC PRIVATE KEY-----
";
    const GO_KEY_ID: &str = "ZbnbtQK9AbID31DD4hH0Bw2ea7q_2dQod4SSNWfER4A";
    const GO_TOKEN: &str = "eyJhbGciOiJFUzI1NiIsImtpZCI6IlpibmJ0UUs5QWJJRDMxREQ0aEgwQncyZWE3cV8yZFFvZDRTU05XZkVSNEEifQ.eyJhdWQiOlsiaHR0cHM6Ly9rdWJlcm5ldGVzLmRlZmF1bHQuc3ZjLmNsdXN0ZXIubG9jYWwiXSwiZXhwIjoxNzMxNTM2MDAwLCJpYXQiOjE3MDAwMDAwMDAsImlzcyI6Imh0dHBzOi8va3ViZXJuZXRlcy5kZWZhdWx0LnN2Yy5jbHVzdGVyLmxvY2FsIiwianRpIjoiMGI2YjVhZDItM2E4Ni00YzRlLTlkMmEtNmIwYjlmN2U4ZjExIiwia3ViZXJuZXRlcy5pbyI6eyJuYW1lc3BhY2UiOiJkZWZhdWx0Iiwibm9kZSI6eyJuYW1lIjoibm9kZS0xIiwidWlkIjoibm9kZS11aWQifSwicG9kIjp7Im5hbWUiOiJ3ZWItMCIsInVpZCI6InBvZC11aWQifSwic2VydmljZWFjY291bnQiOnsibmFtZSI6ImJ1aWxkZXIiLCJ1aWQiOiJzYS11aWQifSwid2FybmFmdGVyIjoxNzAwMDAzNjA3fSwibmJmIjoxNzAwMDAwMDAwLCJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQ6ZGVmYXVsdDpidWlsZGVyIn0.f2XXNU2CC5sPYMOFqJaFgLvJCYmKQ_82wPg-BLxru_3ZBXd7oNnUGy_z4-rnM8liH7TQL482azGTFcdtl0o2KA";

    #[test]
    fn verifies_a_go_jose_token() {
        let pkcs8 = SigningKey::from_pkcs8_pem(GO_PKCS8).expect("PKCS#8 from Go");
        let sec1 = SigningKey::from_pkcs8_pem(GO_SEC1).expect("SEC1 from Go");
        assert_eq!((pkcs8.key_id(), sec1.key_id()), (GO_KEY_ID, GO_KEY_ID));
        let keys = [pkcs8.verifying_key().clone()];
        let verified = check(GO_TOKEN, &keys, NOW).expect("verify");
        let pod = BoundObject::Pod {
            pod: pod_ref(),
            node: Some(Ref {
                name: "node-1".to_owned(),
                uid: "node-uid".to_owned(),
            }),
        };
        let lifetime = ExpirationPolicy::default().lifetime(3607, true, &[], &[]);
        let mut expected = Claims::new(
            ISSUER,
            &sa(),
            Some(&pod),
            strings(&[ISSUER]),
            &lifetime,
            at(NOW),
        );
        expected.jti = "0b6b5ad2-3a86-4c4e-9d2a-6b0b9f7e8f11".to_owned();
        assert_eq!(verified.claims, expected);
        // Byte for byte the payload kubefake writes for the same claims.
        let payload = GO_TOKEN.split('.').nth(1).expect("payload");
        assert_eq!(
            payload,
            URL_SAFE_NO_PAD.encode(serde_json::to_vec(&expected).expect("json"))
        );
        let header = GO_TOKEN.split('.').next().expect("header");
        let ours = sec1.sign(&expected).expect("sign");
        assert_eq!(ours.split('.').next(), Some(header));
    }

    /// Prints a token and its key for a check against go-jose (run with `--ignored --nocapture`).
    #[test]
    #[ignore]
    fn print_token_for_interop() {
        let key = SigningKey::generate().expect("generate");
        let bound = BoundObject::Pod {
            pod: pod_ref(),
            node: Some(Ref {
                name: "node-1".to_owned(),
                uid: "node-uid".to_owned(),
            }),
        };
        let lifetime = Lifetime::seconds(3600);
        let claims = Claims::new(
            ISSUER,
            &sa(),
            Some(&bound),
            strings(&[ISSUER]),
            &lifetime,
            SystemTime::now(),
        );
        println!("{}", key.public_key_pem());
        println!("KID {}", key.key_id());
        println!("JWK {}", key.verifying_key().jwk());
        println!("TOKEN {}", key.sign(&claims).expect("sign"));
    }
}
