//! The live view's assets under `/kubefake/v1/ui/` (raw HTTP: the headers are the point):
//! content types, the Content-Security-Policy, caching, the redirect of `.../ui`, the `Host`
//! names a browser on the same machine sends, and RBAC's refusal for anyone outside
//! `system:masters`. The page itself runs in headless Chromium in scripts/browser-tests.sh.

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, PostParams};
use rstest::rstest;
use serde_json::{json, Value};

use crate::harness::{server, token_http, TestServer};

/// A client that shows redirects instead of following them.
fn no_redirects() -> reqwest::Client {
    reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client")
}

async fn fetch(server: &TestServer, path: &str) -> reqwest::Response {
    no_redirects()
        .get(server.url(path))
        .send()
        .await
        .expect("answered")
}

fn header<'a>(resp: &'a reqwest::Response, name: &str) -> &'a str {
    resp.headers()
        .get(name)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
}

#[rstest]
#[case::page(
    "/kubefake/v1/ui/",
    "text/html; charset=utf-8",
    "<script src=\"app.js\""
)]
#[case::page_by_name("/kubefake/v1/ui/index.html", "text/html; charset=utf-8", "app.css")]
#[case::script("/kubefake/v1/ui/app.js", "text/javascript; charset=utf-8", "?watch=1")]
#[case::stylesheet(
    "/kubefake/v1/ui/app.css",
    "text/css; charset=utf-8",
    "grid-template-areas"
)]
#[tokio::test]
async fn assets_are_served_with_their_type_and_a_strict_policy(
    #[future] server: TestServer,
    #[case] path: &str,
    #[case] content_type: &str,
    #[case] contains: &str,
) {
    let server = server.await;
    let resp = fetch(&server, path).await;
    assert_eq!(resp.status().as_u16(), 200);
    assert_eq!(header(&resp, "content-type"), content_type);
    assert_eq!(header(&resp, "cache-control"), "no-cache");
    assert_eq!(header(&resp, "x-content-type-options"), "nosniff");
    let csp = header(&resp, "content-security-policy").to_string();
    for directive in [
        "default-src 'self'",
        "script-src 'self'",
        "style-src 'self'",
        "connect-src 'self'",
        "frame-ancestors 'none'",
    ] {
        assert!(csp.contains(directive), "{directive} missing from {csp}");
    }
    assert!(!csp.contains("unsafe"), "{csp}");
    let body = resp.text().await.expect("body");
    assert!(body.contains(contains), "{path} lacks {contains:?}");
    // No external assets: nothing is loaded from another origin.
    assert!(
        !body.contains("http://") && !body.contains("https://"),
        "{path}"
    );
}

/// The HTML has no inline script or style, which the policy would refuse anyway.
#[rstest]
#[tokio::test]
async fn the_page_has_no_inline_script_or_style(#[future] server: TestServer) {
    let server = server.await;
    let html = fetch(&server, "/kubefake/v1/ui/")
        .await
        .text()
        .await
        .expect("body");
    assert_eq!(html.matches("<script").count(), 1, "{html}");
    assert!(html.contains("<script src=\"app.js\" defer></script>"));
    assert!(!html.contains("<style") && !html.contains("style="));
    let handler = |w: &str| w.starts_with("on") && w.contains('=');
    assert!(
        !html.split_whitespace().any(handler),
        "an inline event handler"
    );
}

#[rstest]
#[tokio::test]
async fn without_the_slash_it_redirects_to_the_page(#[future] server: TestServer) {
    let server = server.await;
    let resp = fetch(&server, "/kubefake/v1/ui").await;
    assert_eq!(resp.status().as_u16(), 301);
    // Relative, so that the page's own relative links hold behind a proxy's prefix.
    assert_eq!(header(&resp, "location"), "ui/");
}

#[rstest]
#[tokio::test]
async fn an_unknown_file_is_a_not_found_status(#[future] server: TestServer) {
    let server = server.await;
    for path in ["/kubefake/v1/ui/missing.js", "/kubefake/v1/ui/a/app.js"] {
        let resp = fetch(&server, path).await;
        assert_eq!(resp.status().as_u16(), 404, "{path}");
        let status: Value = resp.json().await.expect("a Status");
        assert_eq!(status["kind"], "Status");
        assert_eq!(status["reason"], "NotFound");
    }
}

/// A browser on the same machine names the server `localhost` or `127.0.0.1`: both are
/// served; another name is refused (DNS rebinding).
#[rstest]
#[case::loopback("127.0.0.1", 200)]
#[case::localhost("localhost", 200)]
#[case::rebinding("attacker.example", 403)]
#[tokio::test]
async fn browsers_host_names(#[future] server: TestServer, #[case] host: &str, #[case] code: u16) {
    let server = server.await;
    let port = server.handle.addr().port();
    let resp = no_redirects()
        .get(server.url("/kubefake/v1/ui/"))
        .header("host", format!("{host}:{port}"))
        .send()
        .await
        .expect("answered");
    assert_eq!(resp.status().as_u16(), code, "Host {host}");
}

/// Under RBAC the page is `system:masters` only, as the rest of `/kubefake/v1/`: a user bound
/// to `cluster-admin` (every resource and every non-resource URL), and an anonymous browser,
/// are refused; the kubeconfig's admin is not.
#[rstest]
#[tokio::test]
async fn under_rbac_only_masters_may_open_it() {
    let server =
        crate::harness::rbac_server_with_user("jane", &["system:authenticated"], "jane-token")
            .await;
    let binding = json!({"apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "ClusterRoleBinding", "metadata": {"name": "jane-cluster-admin"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                    "name": "cluster-admin"},
        "subjects": [{"kind": "User", "name": "jane", "apiGroup": "rbac.authorization.k8s.io"}]});
    let bindings = "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings";
    assert_eq!(server.post(bindings, &binding).await.0, 201);
    let jane = token_http(&server.handle, "Bearer jane-token");
    let anonymous = token_http(&server.handle, "");
    for path in [
        "/kubefake/v1/ui/",
        "/kubefake/v1/ui/app.js",
        "/kubefake/v1/ui",
    ] {
        for (who, client) in [("jane", &jane), ("system:anonymous", &anonymous)] {
            let resp = client.get(server.url(path)).send().await.expect("answered");
            assert_eq!(resp.status().as_u16(), 403, "{who} {path}");
            let status: Value = resp.json().await.expect("a Status");
            assert_eq!(status["reason"], "Forbidden");
            let message = status["message"].as_str().unwrap_or("");
            assert!(
                message.contains(&format!("User \"{who}\" cannot get path")),
                "{message}"
            );
        }
        let admin = server.http.get(server.url(path)).send().await;
        assert_eq!(admin.expect("answered").status().as_u16(), 200, "{path}");
    }
    // The binding holds: jane may read what the page would show.
    let config_maps: Api<ConfigMap> = Api::default_namespaced(server.client.clone());
    let mut settings = ConfigMap::default();
    settings.metadata.name = Some("settings".into());
    config_maps
        .create(&PostParams::default(), &settings)
        .await
        .expect("created");
    let (status, _) = server
        .send(jane.get(server.url("/api/v1/namespaces/default/configmaps/settings")))
        .await;
    assert_eq!(status, 200);
}

/// The page polls the request log with `limit`: the newest N of what the filters keep.
#[rstest]
#[tokio::test]
async fn the_request_log_keeps_the_newest_with_limit(#[future] server: TestServer) {
    let server = server.await;
    let config_maps: Api<ConfigMap> = Api::default_namespaced(server.client.clone());
    for name in ["a", "b", "c"] {
        config_maps.get_opt(name).await.expect("answered");
    }
    let (status, body) = server
        .get("/kubefake/v1/requests?verb=get&resource=configmaps&limit=2")
        .await;
    assert_eq!(status, 200, "{body}");
    let names: Vec<&str> = body["items"]
        .as_array()
        .expect("items")
        .iter()
        .filter_map(|r| r["name"].as_str())
        .collect();
    assert_eq!(names, ["b", "c"]);
    let (status, body) = server.get("/kubefake/v1/requests?limit=0").await;
    assert_eq!(
        (status, body["items"].as_array().map(Vec::len)),
        (200, Some(0))
    );
    let (status, body) = server.get("/kubefake/v1/requests?limit=-1").await;
    assert_eq!(
        (status, &body["reason"]),
        (400, &json!("BadRequest")),
        "{body}"
    );
}
