//! `(method, path, query)` -> [`RequestInfo`], the way `k8s.io/apiserver/pkg/endpoints/request`
//! resolves a request before anything else looks at it. Pure: no registry, no store.

/// What a request is about, as the apiserver's RequestInfoResolver sees it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RequestInfo {
    /// `false` for discovery, `/version`, health checks and anything else that is not a resource.
    pub is_resource_request: bool,
    /// `api` (core group) or `apis`.
    pub api_prefix: String,
    /// API group; empty for core.
    pub group: String,
    /// API version (`v1`).
    pub version: String,
    /// Namespace from the path; empty for cluster-scoped and all-namespaces requests.
    pub namespace: String,
    /// Resource (plural), e.g. `crontabs`.
    pub resource: String,
    /// Object name; empty for collection requests.
    pub name: String,
    /// `status`, `scale`, `finalize`, or empty.
    pub subresource: String,
    /// Whether the resource was reached through `/namespaces/{namespace}/` (a namespaced path;
    /// `/api/v1/namespaces/foo` names a namespace and is not one).
    pub namespaced_path: bool,
    /// get, list, watch, create, update, patch, delete, deletecollection.
    pub verb: Verb,
}

/// The Kubernetes API verb a resource request maps to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Verb {
    /// GET of one object.
    #[default]
    Get,
    /// GET of a collection.
    List,
    /// GET of a collection with `watch=true`, or the legacy `/watch/` prefix.
    Watch,
    /// POST to a collection.
    Create,
    /// PUT of one object.
    Update,
    /// PATCH of one object.
    Patch,
    /// DELETE of one object.
    Delete,
    /// DELETE of a collection.
    DeleteCollection,
    /// A method the API has no verb for (HEAD, OPTIONS, ...).
    Unsupported,
}

impl Verb {
    /// The lower-case name used in discovery and in messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Get => "get",
            Verb::List => "list",
            Verb::Watch => "watch",
            Verb::Create => "create",
            Verb::Update => "update",
            Verb::Patch => "patch",
            Verb::Delete => "delete",
            Verb::DeleteCollection => "deletecollection",
            Verb::Unsupported => "unsupported",
        }
    }
}

/// Subresources of `namespaces` that sit where a namespaced resource name would otherwise be.
const NAMESPACE_SUBRESOURCES: [&str; 2] = ["status", "finalize"];

/// Resolves a request. `watch_param` is whether the query asked for `watch=true|1`.
pub fn resolve(method: &str, path: &str, watch_param: bool) -> RequestInfo {
    let mut info = RequestInfo::default();
    let parts: Vec<&str> = path.trim_matches('/').split('/').collect();
    let mut rest: &[&str] = &parts;
    match rest.first() {
        Some(&"api") if rest.len() >= 3 => {
            info.api_prefix = "api".into();
            info.version = rest[1].to_string();
            rest = &rest[2..];
        }
        Some(&"apis") if rest.len() >= 4 => {
            info.api_prefix = "apis".into();
            info.group = rest[1].to_string();
            info.version = rest[2].to_string();
            rest = &rest[3..];
        }
        _ => return info,
    }
    if rest.iter().any(|p| p.is_empty()) {
        return info;
    }
    info.is_resource_request = true;

    let mut legacy_watch = false;
    if rest.first() == Some(&"watch") {
        legacy_watch = true;
        rest = &rest[1..];
    }
    if rest.first() == Some(&"namespaces") && rest.len() > 1 {
        info.namespace = rest[1].to_string();
        if rest.len() > 2 && !NAMESPACE_SUBRESOURCES.contains(&rest[2]) {
            rest = &rest[2..];
            info.namespaced_path = true;
        }
    }
    if rest.is_empty() {
        info.is_resource_request = false;
        return info;
    }
    info.resource = rest[0].to_string();
    if let Some(name) = rest.get(1) {
        info.name = name.to_string();
    }
    if let Some(sub) = rest.get(2) {
        info.subresource = sub.to_string();
    }
    if rest.len() > 3 && info.subresource != "proxy" {
        // Deeper paths are the proxy's path (`nodes/n/proxy/stats`), or no route: the
        // apiserver's router answers those with its plain-text 404.
        info.is_resource_request = false;
        return info;
    }
    // `/api/v1/namespaces/foo` names the namespace itself.
    if info.resource == "namespaces" && info.name.is_empty() {
        info.namespace.clear();
    }

    let has_name = !info.name.is_empty();
    info.verb = match method {
        "GET" if legacy_watch || (!has_name && watch_param) => Verb::Watch,
        "GET" if has_name => Verb::Get,
        "GET" => Verb::List,
        // A POST to an object's subresource (`pods/p/binding`) creates, as the apiserver maps it.
        "POST" if !has_name || !info.subresource.is_empty() => Verb::Create,
        "PUT" if has_name => Verb::Update,
        "PATCH" if has_name => Verb::Patch,
        "DELETE" if has_name => Verb::Delete,
        "DELETE" => Verb::DeleteCollection,
        _ => Verb::Unsupported,
    };
    // A watch on a single name (`/watch/.../name` or `?watch=1` on an item) watches that object.
    if info.verb == Verb::Get && watch_param {
        info.verb = Verb::Watch;
    }
    info
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(method: &str, path: &str) -> RequestInfo {
        resolve(method, path, false)
    }

    #[test]
    fn table() {
        // (method, path, verb, group, version, namespace, resource, name, subresource)
        // (method, path, verb, group, version, namespace, resource, name, subresource)
        type Case<'a> = (
            &'a str,
            &'a str,
            Verb,
            &'a str,
            &'a str,
            &'a str,
            &'a str,
            &'a str,
            &'a str,
        );
        let cases: &[Case] = &[
            (
                "GET",
                "/api/v1/namespaces",
                Verb::List,
                "",
                "v1",
                "",
                "namespaces",
                "",
                "",
            ),
            (
                "GET",
                "/api/v1/namespaces/default",
                Verb::Get,
                "",
                "v1",
                "default",
                "namespaces",
                "default",
                "",
            ),
            (
                "PUT",
                "/api/v1/namespaces/default/status",
                Verb::Update,
                "",
                "v1",
                "default",
                "namespaces",
                "default",
                "status",
            ),
            (
                "PUT",
                "/api/v1/namespaces/default/finalize",
                Verb::Update,
                "",
                "v1",
                "default",
                "namespaces",
                "default",
                "finalize",
            ),
            (
                "POST",
                "/api/v1/namespaces/default/pods/p/binding",
                Verb::Create,
                "",
                "v1",
                "default",
                "pods",
                "p",
                "binding",
            ),
            (
                "POST",
                "/apis/stable.example.com/v1/namespaces/default/crontabs",
                Verb::Create,
                "stable.example.com",
                "v1",
                "default",
                "crontabs",
                "",
                "",
            ),
            (
                "GET",
                "/apis/stable.example.com/v1/crontabs",
                Verb::List,
                "stable.example.com",
                "v1",
                "",
                "crontabs",
                "",
                "",
            ),
            (
                "GET",
                "/apis/stable.example.com/v1/namespaces/ns/crontabs/c",
                Verb::Get,
                "stable.example.com",
                "v1",
                "ns",
                "crontabs",
                "c",
                "",
            ),
            (
                "PATCH",
                "/apis/stable.example.com/v1/namespaces/ns/crontabs/c/scale",
                Verb::Patch,
                "stable.example.com",
                "v1",
                "ns",
                "crontabs",
                "c",
                "scale",
            ),
            (
                "DELETE",
                "/apis/stable.example.com/v1/namespaces/ns/crontabs",
                Verb::DeleteCollection,
                "stable.example.com",
                "v1",
                "ns",
                "crontabs",
                "",
                "",
            ),
            (
                "DELETE",
                "/apis/g.io/v1/things/t",
                Verb::Delete,
                "g.io",
                "v1",
                "",
                "things",
                "t",
                "",
            ),
            (
                "GET",
                "/apis/g.io/v1/watch/namespaces/ns/things",
                Verb::Watch,
                "g.io",
                "v1",
                "ns",
                "things",
                "",
                "",
            ),
            (
                "GET",
                "/apis/g.io/v1/watch/things/t",
                Verb::Watch,
                "g.io",
                "v1",
                "",
                "things",
                "t",
                "",
            ),
            (
                "POST",
                "/apis/g.io/v1/things/t",
                Verb::Unsupported,
                "g.io",
                "v1",
                "",
                "things",
                "t",
                "",
            ),
            (
                "PUT",
                "/apis/g.io/v1/things",
                Verb::Unsupported,
                "g.io",
                "v1",
                "",
                "things",
                "",
                "",
            ),
        ];
        for (method, path, verb, group, version, ns, resource, name, sub) in cases {
            let got = r(method, path);
            assert!(got.is_resource_request, "{method} {path}");
            assert_eq!(got.verb, *verb, "{method} {path}");
            assert_eq!(got.group, *group, "{method} {path}");
            assert_eq!(got.version, *version, "{method} {path}");
            assert_eq!(got.namespace, *ns, "{method} {path}");
            assert_eq!(got.resource, *resource, "{method} {path}");
            assert_eq!(got.name, *name, "{method} {path}");
            assert_eq!(got.subresource, *sub, "{method} {path}");
        }
    }

    #[test]
    fn watch_param_turns_list_into_watch() {
        assert_eq!(resolve("GET", "/api/v1/namespaces", true).verb, Verb::Watch);
    }

    #[test]
    fn non_resource_paths() {
        for p in [
            "/",
            "/api",
            "/api/v1",
            "/apis",
            "/apis/g.io",
            "/apis/g.io/v1",
            "/version",
            "/healthz",
            "/api/v1//x",
            "/apis/g/v1/a/b/c/d",
        ] {
            assert!(!r("GET", p).is_resource_request, "{p}");
        }
    }

    #[test]
    fn a_proxy_path_stays_with_its_subresource() {
        for (p, ns, resource, name) in [
            ("/api/v1/nodes/n/proxy/stats/summary", "", "nodes", "n"),
            (
                "/api/v1/namespaces/d/services/s/proxy/x",
                "d",
                "services",
                "s",
            ),
        ] {
            let got = r("GET", p);
            assert!(got.is_resource_request, "{p}");
            assert_eq!(
                (
                    got.namespace.as_str(),
                    got.resource.as_str(),
                    got.name.as_str()
                ),
                (ns, resource, name)
            );
            assert_eq!((got.subresource.as_str(), got.verb), ("proxy", Verb::Get));
        }
    }
}
