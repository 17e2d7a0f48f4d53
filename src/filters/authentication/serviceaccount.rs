//! Service account tokens: the issuer that signs TokenRequest's tokens, and the authenticator
//! that accepts them while the service account (and the pod, secret or node a token is bound
//! to) still exists with the UID the token names, as the apiserver's service account token
//! authenticator does. The JWT work itself is [`super::jwt`]; this module reads the store.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};
use std::time::SystemTime;

use parking_lot::Mutex;

use super::jwt::{
    self, ExpirationPolicy, JwtError, LiveObject, ObjectKind, SigningKey, Verified, VerifyingKey,
};
use crate::context::UserInfo;
use crate::store::{GroupResource, ObjectKey, Snapshot};

/// The issuer kube-apiserver setups conventionally use (`--service-account-issuer`).
pub const DEFAULT_ISSUER: &str = "https://kubernetes.default.svc.cluster.local";

/// One key per process unless a server is given its own: generating an ECDSA key costs more
/// than starting a server, and tokens are bound to service account UIDs, which no two servers
/// share. It is made when a token is first signed (or the keys published), not at start nor
/// to verify a token: before it is made, no token can have been signed with it.
static PROCESS_KEY: OnceLock<Option<Arc<SigningKey>>> = OnceLock::new();

/// How a server issues and verifies service account tokens (`--service-account-issuer`,
/// `--service-account-signing-key-file`, `--service-account-key-file`, `--api-audiences`).
#[derive(Debug, Clone)]
pub struct ServiceAccountTokens {
    /// The key TokenRequest signs with, when the server was given one; `None`: the process's
    /// own ([`ServiceAccountTokens::signing_key`]).
    pub signing_key: Option<Arc<SigningKey>>,
    /// Further keys tokens may be signed with (`--service-account-key-file`).
    pub extra_keys: Vec<VerifyingKey>,
    /// The `iss` of issued tokens, and the issuers accepted.
    pub issuer: String,
    /// The audiences requests to this API must be for; default: the issuer.
    pub api_audiences: Vec<String>,
    /// How long issued tokens live.
    pub expiration: ExpirationPolicy,
    /// Tokens whose signature, issuer and audiences held for a request to this API, so that a
    /// client sending the same token again costs no signature check. Their times and objects
    /// are still checked on every request: a deleted pod's token stops at once (the apiserver's
    /// 10-second token cache would accept it a little longer).
    verified: Arc<Mutex<HashMap<String, Verified>>>,
}

/// How many verified tokens are remembered (all are forgotten when it is reached).
const VERIFIED_CACHE: usize = 1024;

impl Default for ServiceAccountTokens {
    fn default() -> Self {
        ServiceAccountTokens {
            signing_key: None,
            extra_keys: Vec::new(),
            issuer: DEFAULT_ISSUER.to_string(),
            api_audiences: vec![DEFAULT_ISSUER.to_string()],
            expiration: ExpirationPolicy::default(),
            verified: Arc::default(),
        }
    }
}

/// A token the service account authenticator accepted: who, for which audiences.
#[derive(Debug, Clone)]
pub struct Authenticated {
    /// The service account's user.
    pub user: UserInfo,
    /// The audiences the token is valid for here.
    pub audiences: Vec<String>,
}

impl ServiceAccountTokens {
    /// The key TokenRequest signs with: the one given, else the process's (made now if this
    /// is the process's first need of it); `None` only if that could not be made.
    pub fn signing_key(&self) -> Option<Arc<SigningKey>> {
        let process_key = || {
            PROCESS_KEY
                .get_or_init(|| SigningKey::generate().ok().map(Arc::new))
                .clone()
        };
        self.signing_key.clone().or_else(process_key)
    }

    /// The keys a token may be signed with: the process's only once it signed anything.
    fn keys(&self) -> Vec<VerifyingKey> {
        let process_key = || PROCESS_KEY.get().cloned().flatten();
        let mut keys: Vec<VerifyingKey> = self
            .signing_key
            .clone()
            .or_else(process_key)
            .iter()
            .map(|k| k.verifying_key().clone())
            .collect();
        keys.extend(self.extra_keys.iter().cloned());
        keys
    }

    /// Authenticates a bearer token for `audiences` (the API audiences for a request; a
    /// TokenReview's own). `Ok(None)` when the token is not a service account token of this
    /// server at all (another authenticator's, or garbage).
    pub fn authenticate(
        &self,
        snap: &Snapshot,
        token: &str,
        audiences: &[String],
    ) -> Result<Option<Authenticated>, JwtError> {
        let now = SystemTime::now();
        let verified = match self.cached(token, audiences, now) {
            Some(v) => v,
            None => match self.verify(token, audiences, now) {
                Ok(v) => v,
                Err(e) if e.unrecognized() => return Ok(None),
                Err(e) => return Err(e),
            },
        };
        verified.check_live_objects(now, |kind, ns, name| live_object(snap, kind, ns, name))?;
        let info = verified.service_account_info();
        let user = UserInfo {
            name: info.username(),
            uid: info.uid.clone(),
            groups: info.groups(),
            extra: info.extra(),
        };
        Ok(Some(Authenticated {
            user,
            audiences: verified.audiences,
        }))
    }
}

impl ServiceAccountTokens {
    fn verify(
        &self,
        token: &str,
        audiences: &[String],
        now: SystemTime,
    ) -> Result<Verified, JwtError> {
        let issuers = std::slice::from_ref(&self.issuer);
        let keys = self.keys();
        let v =
            jwt::verify_for_audiences(token, &keys, now, issuers, &self.api_audiences, audiences)?;
        if audiences == self.api_audiences.as_slice() {
            let mut cache = self.verified.lock();
            if cache.len() >= VERIFIED_CACHE {
                cache.clear();
            }
            cache.insert(token.to_string(), v.clone());
        }
        Ok(v)
    }

    /// A token verified before for the API audiences, still within its validity.
    fn cached(&self, token: &str, audiences: &[String], now: SystemTime) -> Option<Verified> {
        if audiences != self.api_audiences.as_slice() {
            return None;
        }
        let v = self.verified.lock().get(token).cloned()?;
        let secs = now.duration_since(SystemTime::UNIX_EPOCH).ok()?.as_secs();
        let secs = i64::try_from(secs).ok()?;
        let live =
            v.claims.exp.is_none_or(|exp| secs < exp) && v.claims.nbf.is_none_or(|nbf| nbf <= secs);
        live.then_some(v)
    }
}

/// What the store holds of an object a token names.
fn live_object(
    snap: &Snapshot,
    kind: ObjectKind,
    ns: &str,
    name: &str,
) -> Result<LiveObject, String> {
    let (resource, singular) = match kind {
        ObjectKind::ServiceAccount => ("serviceaccounts", "serviceaccount"),
        ObjectKind::Secret => ("secrets", "secret"),
        ObjectKind::Pod => ("pods", "pod"),
        ObjectKind::Node => ("nodes", "node"),
    };
    let obj = snap
        .get(&GroupResource::new("", resource), &ObjectKey::new(ns, name))
        .ok_or_else(|| format!("{singular} {name:?} not found"))?;
    let meta = &obj.value()["metadata"];
    let deletion_timestamp = meta["deletionTimestamp"]
        .as_str()
        .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
        .map(SystemTime::from);
    Ok(LiveObject {
        uid: meta["uid"].as_str().unwrap_or("").to_string(),
        deletion_timestamp,
    })
}
