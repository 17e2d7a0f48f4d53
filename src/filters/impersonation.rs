//! Impersonation: `Impersonate-User`, `Impersonate-Group`, `Impersonate-Uid` and
//! `Impersonate-Extra-<key>` headers (`kubectl --as`, `--as-group`) make a request run as
//! another user, once the authenticated user is authorized to `impersonate` each part, as the
//! apiserver's impersonation filter does it: between authentication and authorization.

use std::collections::BTreeMap;

use warp::http::HeaderMap;

use super::authorization::{self, Attributes, Decision};
use crate::context::{UserInfo, ANONYMOUS, AUTHENTICATED, UNAUTHENTICATED};
use crate::error::ApiError;

const USER: &str = "impersonate-user";
const GROUP: &str = "impersonate-group";
const UID: &str = "impersonate-uid";
const EXTRA_PREFIX: &str = "impersonate-extra-";
const AUTHENTICATION_V1: &str = "authentication.k8s.io/v1";

/// One thing a request asks to act as (the apiserver builds an `ObjectReference` for each).
#[derive(Debug, Clone, PartialEq, Eq)]
enum Request {
    User(String),
    ServiceAccount { namespace: String, name: String },
    Group(String),
    Extra { key: String, value: String },
    Uid(String),
}

impl Request {
    /// The `impersonate` check this part needs.
    fn attributes(&self) -> Attributes {
        let (group, resource, subresource, namespace, name) = match self {
            Request::User(n) => ("", "users", "", "", n.as_str()),
            Request::ServiceAccount { namespace, name } => {
                ("", "serviceaccounts", "", namespace.as_str(), name.as_str())
            }
            Request::Group(n) => ("", "groups", "", "", n.as_str()),
            Request::Extra { key, value } => (
                "authentication.k8s.io",
                "userextras",
                key.as_str(),
                "",
                value.as_str(),
            ),
            Request::Uid(n) => ("authentication.k8s.io", "uids", "", "", n.as_str()),
        };
        Attributes {
            verb: "impersonate".into(),
            resource_request: true,
            group: group.into(),
            version: "v1".into(),
            resource: resource.into(),
            subresource: subresource.into(),
            namespace: namespace.into(),
            name: name.into(),
            path: String::new(),
        }
    }

    /// The `ObjectReference` as Go's `%v` prints it (Kind Namespace Name UID APIVersion
    /// ResourceVersion FieldPath), for the 400's message.
    fn go_value(&self) -> String {
        let (kind, ns, name, api_version, field_path) = match self {
            Request::User(n) => ("User", "", n.as_str(), "", ""),
            Request::ServiceAccount { namespace, name } => {
                ("ServiceAccount", namespace.as_str(), name.as_str(), "", "")
            }
            Request::Group(n) => ("Group", "", n.as_str(), "", ""),
            Request::Extra { key, value } => (
                "UserExtra",
                "",
                value.as_str(),
                AUTHENTICATION_V1,
                key.as_str(),
            ),
            Request::Uid(n) => ("UID", "", n.as_str(), AUTHENTICATION_V1, ""),
        };
        format!("{{{kind} {ns} {name}  {api_version}  {field_path}}}")
    }
}

fn values<'a>(headers: &'a HeaderMap, name: &str) -> impl Iterator<Item = String> + 'a {
    headers
        .get_all(name)
        .into_iter()
        .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
}

/// `buildImpersonationRequests`: what the headers ask for, in the apiserver's order.
fn requests(headers: &HeaderMap) -> Result<Vec<Request>, ApiError> {
    let mut out = Vec::new();
    let user = values(headers, USER).next().unwrap_or_default();
    if !user.is_empty() {
        out.push(match split_service_account(&user) {
            Some((namespace, name)) => Request::ServiceAccount { namespace, name },
            None => Request::User(user.clone()),
        });
    }
    out.extend(values(headers, GROUP).map(Request::Group));
    let mut extras: Vec<(&str, Vec<String>)> = Vec::new();
    for name in headers.keys() {
        if let Some(key) = name.as_str().strip_prefix(EXTRA_PREFIX) {
            extras.push((key, values(headers, name.as_str()).collect()));
        }
    }
    for (key, vals) in extras {
        let key = percent_decode(key);
        out.extend(vals.into_iter().map(|value| Request::Extra {
            key: key.clone(),
            value,
        }));
    }
    let uid = values(headers, UID).next().unwrap_or_default();
    if !uid.is_empty() {
        out.push(Request::Uid(uid));
    }
    if user.is_empty() && !out.is_empty() {
        let listed: Vec<String> = out.iter().map(Request::go_value).collect();
        return Err(ApiError::bad_request(format!(
            "requested [{}] without impersonating a user",
            listed.join(" ")
        )));
    }
    Ok(out)
}

/// `system:serviceaccount:NS:NAME` -> (NS, NAME).
fn split_service_account(user: &str) -> Option<(String, String)> {
    let rest = user.strip_prefix("system:serviceaccount:")?;
    let (ns, name) = rest.split_once(':')?;
    let valid = |s: &str| !s.is_empty() && !s.contains(':');
    (valid(ns) && valid(name)).then(|| (ns.to_string(), name.to_string()))
}

/// `url.PathUnescape`, keeping the key as it is when it is not valid escaping.
fn percent_decode(key: &str) -> String {
    let bytes = key.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok());
            match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                Some(b) => {
                    out.push(b);
                    i += 3;
                    continue;
                }
                None => return key.to_string(),
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| key.to_string())
}

/// The user a request acts as: `requestor` itself without impersonation headers, else the
/// impersonated user once `authorize` allowed each part (403 on the first it refuses, 400 for
/// headers without `Impersonate-User`).
pub fn impersonate(
    headers: &HeaderMap,
    requestor: &UserInfo,
    authorize: impl Fn(&Attributes) -> Decision,
) -> Result<Option<UserInfo>, ApiError> {
    let requests = requests(headers)?;
    if requests.is_empty() {
        return Ok(None);
    }
    let groups_given = headers.contains_key(GROUP);
    let mut user = UserInfo::default();
    let mut extra: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for request in &requests {
        let attrs = request.attributes();
        if let Decision::Deny(reason) = authorize(&attrs) {
            return Err(authorization::forbidden(requestor, &attrs, &reason));
        }
        match request {
            Request::User(name) => user.name = name.clone(),
            Request::ServiceAccount { namespace, name } => {
                user.name = format!("system:serviceaccount:{namespace}:{name}");
                if !groups_given {
                    user.groups = vec![
                        "system:serviceaccounts".into(),
                        format!("system:serviceaccounts:{namespace}"),
                    ];
                }
            }
            Request::Group(g) => user.groups.push(g.clone()),
            Request::Extra { key, value } => {
                extra.entry(key.clone()).or_default().push(value.clone())
            }
            Request::Uid(uid) => user.uid = uid.clone(),
        }
    }
    user.extra = extra;
    add_implicit_group(&mut user);
    Ok(Some(user))
}

/// `system:authenticated` for an impersonated user (unless a group says otherwise),
/// `system:unauthenticated` for an impersonated anonymous user.
fn add_implicit_group(user: &mut UserInfo) {
    let has = |g: &str| user.groups.iter().any(|x| x == g);
    if user.name != ANONYMOUS {
        if !has(AUTHENTICATED) && !has(UNAUTHENTICATED) {
            user.groups.push(AUTHENTICATED.into());
        }
    } else if !has(UNAUTHENTICATED) {
        user.groups.push(UNAUTHENTICATED.into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(
                warp::http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        h
    }

    fn bob() -> UserInfo {
        UserInfo {
            name: "bob".into(),
            groups: vec!["system:authenticated".into()],
            ..UserInfo::default()
        }
    }

    fn allow_all(_: &Attributes) -> Decision {
        Decision::Allow(String::new())
    }

    #[rstest]
    #[case(&[("Impersonate-User", "jane")], "jane [\"system:authenticated\"]")]
    #[case(&[("Impersonate-User", "jane"), ("Impersonate-Group", "dev"), ("Impersonate-Group", "ops")], "jane [\"dev\", \"ops\", \"system:authenticated\"]")]
    #[case(&[("Impersonate-User", "system:serviceaccount:ns:sa")], "system:serviceaccount:ns:sa [\"system:serviceaccounts\", \"system:serviceaccounts:ns\", \"system:authenticated\"]")]
    #[case(&[("Impersonate-User", "system:anonymous")], "system:anonymous [\"system:unauthenticated\"]")]
    #[case(&[("Impersonate-User", "jane"), ("Impersonate-Group", "system:unauthenticated")], "jane [\"system:unauthenticated\"]")]
    fn impersonated_users(#[case] pairs: &[(&str, &str)], #[case] want: &str) {
        let user = impersonate(&headers(pairs), &bob(), allow_all)
            .unwrap()
            .unwrap();
        assert_eq!(format!("{} {:?}", user.name, user.groups), want);
    }

    #[test]
    fn extras_and_uid() {
        let h = headers(&[
            ("Impersonate-User", "jane"),
            ("Impersonate-Uid", "u-1"),
            ("Impersonate-Extra-Scopes%2Fx", "a"),
            ("Impersonate-Extra-Scopes%2Fx", "b"),
        ]);
        let user = impersonate(&h, &bob(), allow_all).unwrap().unwrap();
        assert_eq!(user.uid, "u-1");
        assert_eq!(user.extra["scopes/x"], ["a", "b"]);
    }

    #[test]
    fn no_headers_no_impersonation() {
        assert_eq!(
            impersonate(&HeaderMap::new(), &bob(), allow_all).unwrap(),
            None
        );
    }

    #[test]
    fn groups_without_a_user_are_a_bad_request() {
        let h = headers(&[("Impersonate-Group", "g"), ("Impersonate-Uid", "u")]);
        let err = impersonate(&h, &bob(), allow_all).unwrap_err();
        assert_eq!(err.code, 400);
        assert_eq!(
            err.message,
            "requested [{Group  g    } {UID  u  authentication.k8s.io/v1  }] without impersonating a user"
        );
    }

    #[test]
    fn each_part_is_authorized() {
        let h = headers(&[
            ("Impersonate-User", "jane"),
            ("Impersonate-Group", "admins"),
        ]);
        let only_users = |a: &Attributes| {
            if a.resource == "users" {
                Decision::Allow(String::new())
            } else {
                Decision::Deny(String::new())
            }
        };
        let err = impersonate(&h, &bob(), only_users).unwrap_err();
        assert_eq!(err.code, 403);
        assert_eq!(
            err.message,
            "groups \"admins\" is forbidden: User \"bob\" cannot impersonate resource \"groups\" in API group \"\" at the cluster scope"
        );
    }

    #[rstest]
    #[case("a%2Fb", "a/b")]
    #[case("plain", "plain")]
    #[case("bad%zz", "bad%zz")]
    fn extra_keys(#[case] key: &str, #[case] want: &str) {
        assert_eq!(percent_decode(key), want);
    }
}
