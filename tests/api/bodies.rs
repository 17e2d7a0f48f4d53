//! Pathological request bodies under the 3 MiB limit (issue 12): each is answered with the
//! apiserver's Status in time linear in its size, off the runtime's worker threads, and a
//! small request served meanwhile is not held up for the whole of it.

use std::future::Future;
use std::time::Duration;

use serde_json::Value;

use crate::harness::{server, TestServer};

const CONFIGMAPS: &str = "/api/v1/namespaces/default/configmaps";
const CRONTABS: &str = "/apis/stable.example.com/v1/namespaces/default/crontabs";

/// Generous: the decoders take well under a second on these bodies in a debug build; before
/// issue 12 they took tens of seconds in release.
const BOUND: Duration = Duration::from_secs(20);

async fn bounded<T>(what: &str, fut: impl Future<Output = T>) -> T {
    tokio::time::timeout(BOUND, fut)
        .await
        .unwrap_or_else(|_| panic!("{what}: no answer within {BOUND:?}"))
}

/// `{"apiVersion":"v1","kind":<kind>,"metadata":{"name":<name>},<field>:` + `inner` + `}`.
fn object(kind_and_version: (&str, &str), name: &str, field: &str, inner: &[u8]) -> Vec<u8> {
    let (api_version, kind) = kind_and_version;
    let mut out = format!(
        r#"{{"apiVersion":"{api_version}","kind":"{kind}","metadata":{{"name":"{name}"}},"{field}":"#
    )
    .into_bytes();
    out.extend_from_slice(inner);
    out.push(b'}');
    out
}

/// 60 objects nested under 24 KB keys, the innermost holding an array that fills the body up
/// to about 3 MB: the duplicate-aware parser used to copy the 1.4 MB key path per element.
fn deep_long_keys_then_array() -> Vec<u8> {
    let mut out = Vec::new();
    for d in 0..60u8 {
        out.extend_from_slice(b"{\"");
        out.extend(std::iter::repeat_n(b'a' + d % 26, 24 * 1024));
        out.extend_from_slice(b"\":");
    }
    out.extend_from_slice(b"{\"l\":[0");
    while out.len() < 3_000_000 {
        out.extend_from_slice(b",0");
    }
    out.extend_from_slice(b"]}");
    out.extend(std::iter::repeat_n(b'}', 60));
    out
}

/// An object of 180,000 keys, each written twice: duplicates used to be searched linearly.
fn duplicated_keys() -> Vec<u8> {
    let mut out = String::from("{");
    for i in 0..90_000 {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&format!(r#""k{i}":"v","k{i}":"v""#));
    }
    out.push('}');
    out.into_bytes()
}

async fn post_raw(server: &TestServer, path: &str, body: Vec<u8>) -> (u16, Value) {
    let rv = server.rv();
    let answer = server
        .send(
            server
                .http
                .post(server.url(path))
                .header("content-type", "application/json")
                .body(body),
        )
        .await;
    assert_eq!(server.rv(), rv, "a rejected request changes nothing");
    answer
}

fn assert_status(answer: &(u16, Value), code: u16, reason: &str) -> String {
    let (status, body) = answer;
    let shown = body.to_string();
    let shown = &shown[..shown.len().min(2000)];
    assert_eq!(*status, code, "{shown}");
    assert_eq!(body["kind"], "Status", "{shown}");
    assert_eq!(body["code"], code, "{shown}");
    assert_eq!(body["reason"], reason, "{shown}");
    body["message"].as_str().expect("message").to_string()
}

#[rstest::rstest]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deep_long_keys_above_a_huge_array(#[future(awt)] server: TestServer) {
    server.install_crontab_crd().await;
    let inner = deep_long_keys_then_array();
    assert!(inner.len() < 3 * 1024 * 1024 - 200);
    // A built-in kind: ConfigMap data is a map of strings.
    let body = object(("v1", "ConfigMap"), "deep", "data", &inner);
    let answer = bounded("configmap", post_raw(&server, CONFIGMAPS, body)).await;
    let msg = assert_status(&answer, 400, "BadRequest");
    assert!(
        msg.contains("cannot unmarshal object into Go struct field ConfigMap.data of type string"),
        "{}",
        &msg[..msg.len().min(500)]
    );
    // A custom resource: pruned, and reported by path under Strict.
    let body = object(("stable.example.com/v1", "CronTab"), "deep", "spec", &inner);
    let answer = bounded(
        "crontab",
        post_raw(&server, &format!("{CRONTABS}?fieldValidation=Strict"), body),
    )
    .await;
    let msg = assert_status(&answer, 400, "BadRequest");
    let key = "a".repeat(24 * 1024);
    assert_eq!(
        msg,
        format!(
            r#"CronTab in version "v1" cannot be handled as a CronTab: strict decoding error: unknown field "spec.{key}""#
        )
    );
}

#[rstest::rstest]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_duplicated_keys_under_strict(#[future(awt)] server: TestServer) {
    server.install_crontab_crd().await;
    let inner = duplicated_keys();
    assert!(inner.len() > 2_000_000 && inner.len() < 3 * 1024 * 1024 - 200);
    let expected = |kind: &str, field: &str| {
        let listed: Vec<String> = (0..100)
            .map(|i| format!(r#"duplicate field "{field}.k{i}""#))
            .collect();
        format!(
            r#"{kind} in version "v1" cannot be handled as a {kind}: strict decoding error: {}"#,
            listed.join(", ")
        )
    };
    let body = object(("v1", "ConfigMap"), "dups", "data", &inner);
    let strict = format!("{CONFIGMAPS}?fieldValidation=Strict");
    let answer = bounded("configmap", post_raw(&server, &strict, body)).await;
    let msg = assert_status(&answer, 400, "BadRequest");
    assert_eq!(msg, expected("ConfigMap", "data"));
    let body = object(("stable.example.com/v1", "CronTab"), "dups", "spec", &inner);
    let strict = format!("{CRONTABS}?fieldValidation=Strict");
    let answer = bounded("crontab", post_raw(&server, &strict, body)).await;
    let msg = assert_status(&answer, 400, "BadRequest");
    assert_eq!(msg, expected("CronTab", "spec"));
}

/// Both bodies at once, twice each, on a 2-worker runtime: a small GET is still answered (the
/// large bodies are handled off the workers), and every request ends in bounded time.
#[rstest::rstest]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_bodies_do_not_stall_the_server(#[future(awt)] server: TestServer) {
    let strict = format!("{CONFIGMAPS}?fieldValidation=Strict");
    let bodies = [
        object(
            ("v1", "ConfigMap"),
            "a",
            "data",
            &deep_long_keys_then_array(),
        ),
        object(("v1", "ConfigMap"), "b", "data", &duplicated_keys()),
    ];
    let mut sent = Vec::new();
    for body in bodies.iter().chain(bodies.iter()) {
        let req = server
            .http
            .post(server.url(&strict))
            .header("content-type", "application/json")
            .body(body.clone());
        sent.push(tokio::spawn(async move {
            let resp = req.send().await.expect("sent");
            resp.status().as_u16()
        }));
    }
    let (status, version) = bounded("GET /version", server.get("/version")).await;
    assert_eq!(status, 200, "{version}");
    for task in sent {
        let status = bounded("large body", task).await.expect("task");
        assert_eq!(status, 400);
    }
}

/// YAML: an alias bomb (billion laughs) and deep nesting are refused by the decoder's budget,
/// not expanded.
#[rstest::rstest]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn yaml_alias_bombs_are_refused(#[future(awt)] server: TestServer) {
    let mut bomb = String::from("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lol\n");
    bomb.push_str(
        "a0: &a0 [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n",
    );
    for i in 1..12 {
        let p = i - 1;
        bomb.push_str(&format!(
            "a{i}: &a{i} [*a{p},*a{p},*a{p},*a{p},*a{p},*a{p},*a{p},*a{p},*a{p}]\n"
        ));
    }
    let deep = format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\ndata: {}{}\n",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    for body in [bomb, deep] {
        let rv = server.rv();
        let answer = bounded(
            "yaml",
            server.send(
                server
                    .http
                    .post(server.url(CONFIGMAPS))
                    .header("content-type", "application/yaml")
                    .body(body),
            ),
        )
        .await;
        assert_status(&answer, 400, "BadRequest");
        assert_eq!(server.rv(), rv);
    }
    // Server-side apply decodes YAML too.
    let answer = bounded(
        "apply",
        server.send(
            server
                .http
                .patch(server.url(&format!("{CONFIGMAPS}/lol?fieldManager=t")))
                .header("content-type", "application/apply-patch+yaml")
                .body(format!(
                    "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: lol\ndata: {}{}\n",
                    "{a: ".repeat(50_000),
                    "}".repeat(50_000)
                )),
        ),
    )
    .await;
    assert_status(&answer, 400, "BadRequest");
}
