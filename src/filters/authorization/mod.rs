//! Authorization: whether the authenticated user may do what a request asks, decided as
//! kube-apiserver's authorizer chain decides it, and the 403 `Status` worded as its
//! `responsewriters.Forbidden` words it.
//!
//! Members of `system:masters` may do anything (the apiserver's privileged-group authorizer
//! comes before every mode). Then the mode: `AlwaysAllow` (the library default: a test fixture
//! that only asks whether its controller works), or `RBAC` ([`rbac`]: roles and bindings read
//! from the request's store snapshot, without locks).

pub mod rbac;

use crate::context::{UserInfo, MASTERS};
use crate::error::{ApiError, StatusDetails};
use crate::filters::request_info::RequestInfo;
use crate::store::{Snapshot, Store};

/// How requests are authorized (`--authorization-mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// Every authenticated (or anonymous) request is allowed.
    #[default]
    AlwaysAllow,
    /// Roles, ClusterRoles and their bindings decide.
    Rbac,
}

/// What is being asked, as `authorizer.Attributes` holds it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Attributes {
    /// The API verb (`get`, `list`, `create`, ...) or, for other paths, the lower-case HTTP
    /// method (`get`, `post`, ...); also `impersonate`, `escalate`, `bind`, ...
    pub verb: String,
    /// Whether this is about a resource, or about a path (`/healthz`, `/apis`).
    pub resource_request: bool,
    /// API group of the resource ("" for core).
    pub group: String,
    /// API version.
    pub version: String,
    /// Resource (plural).
    pub resource: String,
    /// Subresource, or "".
    pub subresource: String,
    /// Namespace, or "" for cluster-scoped requests and requests across namespaces.
    pub namespace: String,
    /// Object name, or "".
    pub name: String,
    /// The URL path (non-resource requests).
    pub path: String,
}

impl Attributes {
    /// The attributes of a request. A list or watch narrowed to one object with
    /// `fieldSelector=metadata.name=X` names that object, as the apiserver's request info does.
    pub fn of_request(info: &RequestInfo, method: &str, path: &str, field_selector: &str) -> Self {
        if !info.is_resource_request {
            let verb = match method {
                "HEAD" => "get".to_string(),
                m => m.to_ascii_lowercase(),
            };
            return Attributes {
                verb,
                path: path.to_string(),
                ..Attributes::default()
            };
        }
        let mut name = info.name.clone();
        if name.is_empty() && matches!(info.verb.as_str(), "list" | "watch") {
            if let Some(n) = single_name(field_selector) {
                name = n.to_string();
            }
        }
        Attributes {
            verb: info.verb.as_str().to_string(),
            resource_request: true,
            group: info.group.clone(),
            version: info.version.clone(),
            resource: info.resource.clone(),
            subresource: info.subresource.clone(),
            namespace: info.namespace.clone(),
            name,
            path: path.to_string(),
        }
    }
}

/// The name a field selector `metadata.name=X` (or `==`) pins, when it is the only requirement.
fn single_name(selector: &str) -> Option<&str> {
    let value = selector
        .strip_prefix("metadata.name==")
        .or_else(|| selector.strip_prefix("metadata.name="))?;
    (!value.is_empty() && !value.contains(',')).then_some(value)
}

/// An authorizer's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Allowed, and why (`RBAC: allowed by ClusterRoleBinding ...`).
    Allow(String),
    /// Not allowed; the reason is appended to the 403's message when it is not empty.
    Deny(String),
}

impl Decision {
    /// Whether the request may go on.
    pub fn allowed(&self) -> bool {
        matches!(self, Decision::Allow(_))
    }
}

/// What [`check`] needs of an HTTP request.
pub struct Request<'a> {
    /// Its API coordinates.
    pub info: &'a RequestInfo,
    /// The HTTP method.
    pub method: &'a str,
    /// The URL path.
    pub path: &'a str,
    /// The `fieldSelector` query parameter ("" when absent).
    pub field_selector: &'a str,
}

/// Authorizes an HTTP request: the 403 when it is denied. Under AlwaysAllow nothing is built
/// or read (this runs on every request).
pub fn check(
    mode: Mode,
    store: &Store,
    user: &UserInfo,
    req: &Request<'_>,
) -> Result<(), ApiError> {
    if mode == Mode::AlwaysAllow {
        return Ok(());
    }
    let attrs = Attributes::of_request(req.info, req.method, req.path, req.field_selector);
    match authorize(mode, &store.snapshot(), user, &attrs) {
        Decision::Allow(_) => Ok(()),
        Decision::Deny(reason) => Err(forbidden(user, &attrs, &reason)),
    }
}

/// Decides a request, reading roles and bindings from `snap`.
pub fn authorize(mode: Mode, snap: &Snapshot, user: &UserInfo, attrs: &Attributes) -> Decision {
    if user.groups.iter().any(|g| g == MASTERS) {
        return Decision::Allow(String::new());
    }
    match mode {
        Mode::AlwaysAllow => Decision::Allow(String::new()),
        Mode::Rbac => rbac::authorize(snap, user, attrs),
    }
}

/// The apiserver's 403 for a denied request.
pub fn forbidden(user: &UserInfo, attrs: &Attributes, reason: &str) -> ApiError {
    let mut msg = forbidden_message(user, attrs).replace('&', "&amp;");
    msg = msg.replace('<', "&lt;").replace('>', "&gt;");
    if !reason.is_empty() {
        msg = format!("{msg}: {reason}");
    }
    let resource = if attrs.resource_request {
        attrs.resource.as_str()
    } else {
        ""
    };
    let group = if attrs.resource_request {
        attrs.group.as_str()
    } else {
        ""
    };
    let message = if group.is_empty() && resource.is_empty() {
        format!("forbidden: {msg}")
    } else {
        let qualified = crate::error::qualified(group, resource);
        if attrs.name.is_empty() {
            format!("{qualified} is forbidden: {msg}")
        } else {
            format!("{qualified} {:?} is forbidden: {msg}", attrs.name)
        }
    };
    let mut err = ApiError::status(403, "Forbidden", message);
    err.details = Some(Box::new(StatusDetails {
        name: (!attrs.name.is_empty()).then(|| attrs.name.clone()),
        group: (!group.is_empty()).then(|| group.to_string()),
        kind: (!resource.is_empty()).then(|| resource.to_string()),
        ..Default::default()
    }));
    err
}

/// `forbiddenMessage`: who cannot do what, where.
fn forbidden_message(user: &UserInfo, attrs: &Attributes) -> String {
    let who = &user.name;
    let verb = &attrs.verb;
    if !attrs.resource_request {
        return format!("User {who:?} cannot {verb} path {:?}", attrs.path);
    }
    let mut resource = attrs.resource.clone();
    if !attrs.subresource.is_empty() {
        resource = format!("{resource}/{}", attrs.subresource);
    }
    let group = &attrs.group;
    if attrs.namespace.is_empty() {
        format!("User {who:?} cannot {verb} resource {resource:?} in API group {group:?} at the cluster scope")
    } else {
        let ns = &attrs.namespace;
        format!("User {who:?} cannot {verb} resource {resource:?} in API group {group:?} in the namespace {ns:?}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::filters::request_info;
    use rstest::rstest;

    fn bob() -> UserInfo {
        UserInfo {
            name: "bob".into(),
            ..UserInfo::default()
        }
    }

    fn attrs(method: &str, path: &str, selector: &str) -> Attributes {
        let info = request_info::resolve(method, path, false);
        Attributes::of_request(&info, method, path, selector)
    }

    #[rstest]
    #[case("GET", "/api/v1/namespaces/default/pods", "", "pods is forbidden: User \"bob\" cannot list resource \"pods\" in API group \"\" in the namespace \"default\"")]
    #[case("GET", "/apis/apps/v1/deployments", "", "deployments.apps is forbidden: User \"bob\" cannot list resource \"deployments\" in API group \"apps\" at the cluster scope")]
    #[case("PUT", "/api/v1/namespaces/ns/pods/p/status", "", "pods \"p\" is forbidden: User \"bob\" cannot update resource \"pods/status\" in API group \"\" in the namespace \"ns\"")]
    #[case("GET", "/api/v1/namespaces/ns/configmaps", "metadata.name=cm", "configmaps \"cm\" is forbidden: User \"bob\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"ns\"")]
    #[case(
        "GET",
        "/healthz",
        "",
        "forbidden: User \"bob\" cannot get path \"/healthz\""
    )]
    #[case(
        "POST",
        "/logs",
        "",
        "forbidden: User \"bob\" cannot post path \"/logs\""
    )]
    fn forbidden_messages(
        #[case] method: &str,
        #[case] path: &str,
        #[case] selector: &str,
        #[case] want: &str,
    ) {
        let err = forbidden(&bob(), &attrs(method, path, selector), "");
        assert_eq!((err.code, err.message.as_str()), (403, want));
    }

    #[test]
    fn a_reason_is_appended() {
        let a = attrs("GET", "/api/v1/namespaces/ns/pods", "");
        let err = forbidden(
            &bob(),
            &a,
            "RBAC: role.rbac.authorization.k8s.io \"r\" not found",
        );
        assert!(err.message.ends_with(
            "in the namespace \"ns\": RBAC: role.rbac.authorization.k8s.io \"r\" not found"
        ));
    }

    #[rstest]
    #[case("metadata.name=x", Some("x"))]
    #[case("metadata.name==x", Some("x"))]
    #[case("metadata.name=x,status.phase=Running", None)]
    #[case("metadata.namespace=x", None)]
    #[case("", None)]
    fn field_selector_names(#[case] selector: &str, #[case] want: Option<&str>) {
        assert_eq!(single_name(selector), want);
    }

    #[test]
    fn masters_and_always_allow_allow() {
        let snap = crate::store::Store::new(10, 10).snapshot();
        let a = attrs("DELETE", "/api/v1/namespaces/ns/pods/p", "");
        assert!(!authorize(Mode::Rbac, &snap, &bob(), &a).allowed());
        assert!(authorize(Mode::AlwaysAllow, &snap, &bob(), &a).allowed());
        assert!(authorize(Mode::Rbac, &snap, &UserInfo::admin(), &a).allowed());
    }
}
