//! Authentication: who makes a request, decided from what it carries, as kube-apiserver's
//! authenticator union decides it.
//!
//! In order: a client certificate the connection verified against the client CA (see
//! [`crate::server::tls`]; the connection hands its user in), then a bearer token (a static
//! token, [`token_file`]). The first that succeeds names the user, and every authenticated user
//! is in `system:authenticated`. A bearer token that nothing accepts is a 401 even when anonymous
//! requests are allowed (the apiserver fails on an authenticator's error before it tries the
//! anonymous one); a request without credentials is `system:anonymous` when they are allowed and
//! a 401 otherwise. Whether the user may do what it asks is [`super::authorization`]'s question.

pub mod jwt;
pub mod serviceaccount;
pub mod token_file;

use std::sync::{Arc, OnceLock};

use warp::http::HeaderMap;

use crate::context::{UserInfo, AUTHENTICATED, UNAUTHENTICATED};
use crate::error::ApiError;
use crate::store::Store;
use serviceaccount::ServiceAccountTokens;
use token_file::StaticTokens;

/// The authenticators of one server. See the module documentation.
#[derive(Debug, Clone)]
pub struct Authenticator {
    /// Static bearer tokens (`--token-auth-file`, [`crate::ServerBuilder::token`]), the admin
    /// token of the kubeconfig kubefake writes among them.
    pub tokens: StaticTokens,
    /// Whether a request without credentials is served as `system:anonymous`
    /// (`--anonymous-auth`, on by default as in the apiserver).
    pub anonymous: bool,
    /// Service account tokens (TokenRequest's).
    pub service_accounts: ServiceAccountTokens,
}

impl Default for Authenticator {
    fn default() -> Self {
        Authenticator {
            tokens: StaticTokens::default(),
            anonymous: true,
            service_accounts: ServiceAccountTokens::default(),
        }
    }
}

/// A request's credentials: its headers and what its connection proved.
pub struct Credentials<'a> {
    /// The request headers (`Authorization`).
    pub headers: &'a HeaderMap,
    /// The user of the client certificate the connection verified, if any.
    pub peer: Option<&'a UserInfo>,
    /// The store, where service account tokens' objects are looked up.
    pub store: &'a Store,
}

impl Authenticator {
    /// Who makes a request; the apiserver's 401 when its credentials prove nobody.
    pub fn authenticate(&self, creds: &Credentials<'_>) -> Result<Arc<UserInfo>, ApiError> {
        if let Some(user) = creds.peer {
            return Ok(Arc::new(authenticated(user.clone())));
        }
        match bearer_token(creds.headers) {
            Bearer::Token(token) => self
                .token_user(creds.store, token, None)
                .map_err(|_| unauthorized())?
                .map(|(user, _)| user)
                .ok_or_else(unauthorized),
            Bearer::None | Bearer::Empty if self.anonymous => Ok(anonymous()),
            Bearer::None | Bearer::Empty => Err(unauthorized()),
        }
    }
}

/// A user a token authenticates, and the audiences it was accepted for.
pub type TokenUser = (Arc<UserInfo>, Vec<String>);

impl Authenticator {
    /// Whom a bearer token authenticates, and for which audiences (`audiences`: a
    /// TokenReview's; `None` for the API audiences): a static token, else a service account
    /// token. `Ok(None)` when no authenticator knows the token; `Err` with the reason a
    /// service account token was refused (a TokenReview's `status.error`).
    pub fn token_user(
        &self,
        store: &Store,
        token: &str,
        audiences: Option<&[String]>,
    ) -> Result<Option<TokenUser>, String> {
        let api = &self.service_accounts.api_audiences;
        if let Some(user) = self.tokens.get(token) {
            return Ok(Some((user.clone(), audiences.unwrap_or(api).to_vec())));
        }
        let snap = store.snapshot();
        let audiences = audiences.unwrap_or(api);
        match self.service_accounts.authenticate(&snap, token, audiences) {
            Ok(found) => Ok(found.map(|a| (Arc::new(authenticated(a.user)), a.audiences))),
            Err(e) => Err(e.to_string()),
        }
    }
}

/// What an `Authorization` header holds.
#[derive(Debug, PartialEq, Eq)]
enum Bearer<'a> {
    /// No header, or another scheme (`Basic`): no bearer credential at all.
    None,
    /// `Bearer` without a token: no credential (the apiserver ignores it).
    Empty,
    /// A token to check.
    Token(&'a str),
}

/// The bearer token of a request, read as the apiserver's bearertoken authenticator reads it.
fn bearer_token(headers: &HeaderMap) -> Bearer<'_> {
    let Some(value) = headers.get("authorization").and_then(|v| v.to_str().ok()) else {
        return Bearer::None;
    };
    let mut parts = value.trim().splitn(3, ' ');
    let scheme = parts.next().unwrap_or("");
    match parts.next() {
        Some(token) if scheme.eq_ignore_ascii_case("bearer") => {
            if token.is_empty() {
                Bearer::Empty
            } else {
                Bearer::Token(token)
            }
        }
        _ => Bearer::None,
    }
}

/// `system:anonymous`, one for the process: requests without credentials share it.
fn anonymous() -> Arc<UserInfo> {
    static ANONYMOUS: OnceLock<Arc<UserInfo>> = OnceLock::new();
    ANONYMOUS
        .get_or_init(|| Arc::new(UserInfo::anonymous()))
        .clone()
}

/// Adds `system:authenticated`, as the apiserver does for every authenticated user.
fn authenticated(mut user: UserInfo) -> UserInfo {
    if !user
        .groups
        .iter()
        .any(|g| g == AUTHENTICATED || g == UNAUTHENTICATED)
    {
        user.groups.push(AUTHENTICATED.into());
    }
    user
}

/// The apiserver's 401.
pub fn unauthorized() -> ApiError {
    ApiError::status(401, "Unauthorized", "Unauthorized")
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn headers(auth: Option<&str>) -> HeaderMap {
        let mut h = HeaderMap::new();
        if let Some(a) = auth {
            h.insert("authorization", a.parse().unwrap());
        }
        h
    }

    #[rstest]
    #[case(None, Bearer::None)]
    #[case(Some("Basic abc"), Bearer::None)]
    #[case(Some("Bearer"), Bearer::None)]
    #[case(Some("Bearer  x"), Bearer::Empty)]
    #[case(Some("bearer tok"), Bearer::Token("tok"))]
    #[case(Some("  Bearer tok extra"), Bearer::Token("tok"))]
    fn bearer_tokens(#[case] auth: Option<&str>, #[case] want: Bearer<'static>) {
        assert_eq!(bearer_token(&headers(auth)), want);
    }

    fn authn(anonymous: bool) -> Authenticator {
        let mut tokens = StaticTokens::default();
        let alice = UserInfo {
            name: "alice".into(),
            groups: vec!["dev".into()],
            ..UserInfo::default()
        };
        tokens.insert("good", alice);
        Authenticator {
            tokens,
            anonymous,
            ..Authenticator::default()
        }
    }

    fn user(a: &Authenticator, auth: Option<&str>, peer: Option<&UserInfo>) -> Result<String, u16> {
        let h = headers(auth);
        let store = Store::new(1, 1);
        a.authenticate(&Credentials {
            headers: &h,
            peer,
            store: &store,
        })
        .map(|u| format!("{} {:?}", u.name, u.groups))
        .map_err(|e| e.code)
    }

    #[rstest]
    #[case(
        true,
        Some("Bearer good"),
        Ok("alice [\"dev\", \"system:authenticated\"]")
    )]
    #[case(true, Some("Bearer bad"), Err(401))]
    #[case(true, None, Ok("system:anonymous [\"system:unauthenticated\"]"))]
    #[case(
        true,
        Some("Basic YTpi"),
        Ok("system:anonymous [\"system:unauthenticated\"]")
    )]
    // An empty bearer token is no credential at all (the apiserver ignores it).
    #[case(
        true,
        Some("Bearer  x"),
        Ok("system:anonymous [\"system:unauthenticated\"]")
    )]
    #[case(false, None, Err(401))]
    #[case(
        false,
        Some("Bearer good"),
        Ok("alice [\"dev\", \"system:authenticated\"]")
    )]
    fn outcomes(
        #[case] anonymous: bool,
        #[case] auth: Option<&str>,
        #[case] want: Result<&str, u16>,
    ) {
        assert_eq!(user(&authn(anonymous), auth, None), want.map(String::from));
    }

    #[test]
    fn a_verified_certificate_comes_first() {
        let peer = UserInfo {
            name: "cert-user".into(),
            ..UserInfo::default()
        };
        let got = user(&authn(false), Some("Bearer bad"), Some(&peer));
        assert_eq!(got, Ok("cert-user [\"system:authenticated\"]".into()));
    }
}
