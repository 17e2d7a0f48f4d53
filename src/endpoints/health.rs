//! `/healthz`, `/livez` and `/readyz`, answered as the apiserver's `healthz` handlers answer
//! them: `ok` by default; with `verbose`, one `[+]<check> ok` line per check of a default
//! kube-apiserver and `<endpoint> check passed`; `exclude=<check>` marks a check excluded (and
//! warns about names no check has); `/<endpoint>/<check>` answers one check. kubefake is
//! healthy as soon as it serves, so every check passes.

use bytes::Bytes;
use warp::http::{self, StatusCode};
use warp::reply::Response;

use super::negotiation::{plain_not_found, Query};

/// The checks every endpoint runs, in the apiserver's order.
const COMMON: &[&str] = &["ping", "log", "etcd"];

/// The post-start hooks of a default kube-apiserver (apiextensions and aggregator included),
/// each reported as a `poststarthook/<name>` check, in the order the servers register them.
const POST_START_HOOKS: &[&str] = &[
    "start-apiserver-admission-initializer",
    "generic-apiserver-start-informers",
    "priority-and-fairness-config-consumer",
    "priority-and-fairness-filter",
    "storage-object-count-tracker-hook",
    "start-apiextensions-informers",
    "start-apiextensions-controllers",
    "crd-informer-synced",
    "start-system-namespaces-controller",
    "start-cluster-authentication-info-controller",
    "start-kube-apiserver-identity-lease-controller",
    "start-kube-apiserver-identity-lease-garbage-collector",
    "start-legacy-token-tracking-controller",
    "start-service-ip-repair-controllers",
    "rbac/bootstrap-roles",
    "scheduling/bootstrap-system-priority-classes",
    "priority-and-fairness-config-producer",
    "bootstrap-controller",
    "start-kubernetes-service-cidr-controller",
    "aggregator-reload-proxy-client-cert",
    "start-kube-aggregator-informers",
    "apiservice-status-local-available-controller",
    "apiservice-status-remote-available-controller",
    "apiservice-registration-controller",
    "apiservice-discovery-controller",
    "kube-apiserver-autoregistration",
];

/// Checks after the post-start hooks, for each endpoint.
fn trailing(endpoint: &str) -> &'static [&'static str] {
    match endpoint {
        "readyz" => &[
            "autoregister-completion",
            "poststarthook/apiservice-openapi-controller",
            "poststarthook/apiservice-openapiv3-controller",
            "shutdown",
        ],
        _ => &[
            "autoregister-completion",
            "poststarthook/apiservice-openapi-controller",
            "poststarthook/apiservice-openapiv3-controller",
        ],
    }
}

/// Every check an endpoint runs, in order.
fn checks(endpoint: &str) -> Vec<String> {
    let mut out: Vec<String> = COMMON.iter().map(|c| c.to_string()).collect();
    if endpoint == "readyz" {
        out.push("etcd-readiness".into());
        out.push("informer-sync".into());
    }
    out.extend(
        POST_START_HOOKS
            .iter()
            .map(|h| format!("poststarthook/{h}")),
    );
    out.extend(trailing(endpoint).iter().map(|c| c.to_string()));
    out
}

/// Serves `endpoint` (`healthz`, `livez` or `readyz`), or one of its checks when `check` names
/// one.
pub fn serve(endpoint: &str, check: &[&str], query: &Query) -> Response {
    let all = checks(endpoint);
    if !check.is_empty() {
        let name = check.join("/");
        if all.contains(&name) {
            return text("ok".into());
        }
        return plain_not_found();
    }
    text(root(endpoint, &all, query))
}

/// The root endpoint's body.
fn root(endpoint: &str, all: &[String], query: &Query) -> String {
    if query.get("verbose").is_none() {
        return "ok".into();
    }
    let excluded: Vec<&str> = query.all("exclude").collect();
    let mut out = String::new();
    for check in all {
        if excluded.contains(&check.as_str()) {
            out.push_str(&format!("[+]{check} excluded: ok\n"));
        } else {
            out.push_str(&format!("[+]{check} ok\n"));
        }
    }
    let mut unknown: Vec<&str> = excluded
        .into_iter()
        .filter(|e| !all.iter().any(|c| c == e))
        .collect();
    unknown.sort_unstable();
    unknown.dedup();
    if !unknown.is_empty() {
        let quoted: Vec<String> = unknown.iter().map(|u| format!("{u:?}")).collect();
        out.push_str(&format!(
            "warn: some health checks cannot be excluded: no matches for {}\n",
            quoted.join(",")
        ));
    }
    out.push_str(&format!("{endpoint} check passed\n"));
    out
}

fn text(body: String) -> Response {
    let mut resp = Response::new(Bytes::from(body).into());
    *resp.status_mut() = StatusCode::OK;
    let headers = resp.headers_mut();
    headers.insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    headers.insert(
        "x-content-type-options",
        http::HeaderValue::from_static("nosniff"),
    );
    resp
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case::quiet("", "ok")]
    #[case::verbose_flag_without_value("verbose", "[+]ping ok\n")]
    #[case::verbose("verbose=1", "[+]etcd-readiness ok\n")]
    #[case::excluded("verbose&exclude=etcd", "[+]etcd excluded: ok\n")]
    #[case::unknown_exclude(
        "verbose&exclude=nope&exclude=also",
        "warn: some health checks cannot be excluded: no matches for \"also\",\"nope\"\nreadyz check passed\n"
    )]
    #[case::hook("verbose", "[+]poststarthook/rbac/bootstrap-roles ok\n")]
    #[case::last("verbose", "[+]shutdown ok\nreadyz check passed\n")]
    fn readyz_bodies(#[case] query: &str, #[case] contains: &str) {
        let body = root("readyz", &checks("readyz"), &Query::parse(query));
        assert!(body.contains(contains), "{body}");
    }

    #[test]
    fn livez_has_no_readiness_checks() {
        let all = checks("livez");
        assert_eq!(all[..3], ["ping", "log", "etcd"]);
        assert!(!all.iter().any(|c| c == "shutdown" || c == "etcd-readiness"));
        let body = root("livez", &all, &Query::parse("verbose"));
        assert!(
            body.ends_with(
                "[+]poststarthook/apiservice-openapiv3-controller ok\nlivez check passed\n"
            ),
            "{body}"
        );
    }
}
