use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use rustls::CertificateError;
use rustls_pki_types::ServerName;
use serde_json::json;

use super::client::{connect_reason, parse_url, with_timeout_query, x509_reason};
use super::*;

fn b64(text: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(text)
}

#[test]
fn go_durations() {
    for (duration, want) in [
        (Duration::ZERO, "0s"),
        (Duration::from_nanos(12), "12ns"),
        (Duration::from_micros(3), "3µs"),
        (Duration::from_millis(500), "500ms"),
        (Duration::from_micros(1500), "1.5ms"),
        (Duration::from_secs(1), "1s"),
        (Duration::from_secs(30), "30s"),
        (Duration::from_millis(1500), "1.5s"),
        (Duration::from_secs(90), "1m30s"),
        (Duration::from_secs(3600), "1h0m0s"),
        (Duration::from_secs(3725), "1h2m5s"),
    ] {
        assert_eq!(go_duration(duration), want, "{duration:?}");
    }
}

#[test]
fn timeout_query() {
    for (url, timeout, want) in [
        ("https://h/convert", 30, "https://h/convert?timeout=30s"),
        ("https://h:8443", 10, "https://h:8443?timeout=10s"),
        ("https://h/p?a=b", 5, "https://h/p?a=b&timeout=5s"),
        ("https://h/p", 0, "https://h/p"),
    ] {
        assert_eq!(
            with_timeout_query(url, Duration::from_secs(timeout)),
            want,
            "{url}"
        );
    }
}

#[test]
fn url_parsing() {
    for (url, https, host, port, authority, path) in [
        (
            "https://127.0.0.1:4443/convert",
            true,
            "127.0.0.1",
            4443,
            "127.0.0.1:4443",
            "/convert",
        ),
        (
            "https://example.com",
            true,
            "example.com",
            443,
            "example.com",
            "/",
        ),
        (
            "http://localhost/a?b=c",
            false,
            "localhost",
            80,
            "localhost",
            "/a?b=c",
        ),
        (
            "https://[::1]:9443/x",
            true,
            "::1",
            9443,
            "[::1]:9443",
            "/x",
        ),
        // Cleaned as client-go's path.Join cleans it (envtest writes `host:port/` + `/path`).
        (
            "https://127.0.0.1:1//validate-x/./y/../z/",
            true,
            "127.0.0.1",
            1,
            "127.0.0.1:1",
            "/validate-x/z",
        ),
    ] {
        let parsed = parse_url(url).expect(url);
        assert_eq!(
            (
                parsed.https,
                parsed.host.as_str(),
                parsed.port,
                parsed.authority.as_str(),
                parsed.path_and_query.as_str()
            ),
            (https, host, port, authority, path),
            "{url}"
        );
    }
}

#[test]
fn invalid_urls() {
    for (url, why) in [
        ("ftp://h/x", "the scheme must be https (or http)"),
        ("/relative", "the scheme must be https (or http)"),
        ("https://user@h/x", "user information is not allowed"),
        ("https://h/x#frag", "fragments are not allowed"),
    ] {
        let err = parse_url(url).expect_err(url);
        assert_eq!(
            err,
            WebhookError::InvalidConfig(format!("invalid url {url:?}: {why}"))
        );
    }
}

#[test]
fn service_urls_and_server_names() {
    for (service, url, server_name) in [
        (
            json!({"namespace": "default", "name": "hook"}),
            "https://hook.default.svc:443",
            "hook.default.svc",
        ),
        (
            json!({"namespace": "ns", "name": "conv", "port": 8443, "path": "/convert"}),
            "https://conv.ns.svc:8443/convert",
            "conv.ns.svc",
        ),
        (
            json!({"namespace": "ns", "name": "conv", "path": "convert"}),
            "https://conv.ns.svc:443/convert",
            "conv.ns.svc",
        ),
    ] {
        let config = ClientConfig::from_value(&json!({ "service": service })).expect("valid");
        assert_eq!(config.url(), url);
        let Endpoint::Service(reference) = &config.endpoint else {
            panic!("not a service: {config:?}");
        };
        assert_eq!(reference.server_name(), server_name);
        assert!(config.ca_certificates.is_empty());
    }
}

#[test]
fn invalid_client_configs() {
    for (config, message) in [
        (json!("x"), "clientConfig must be an object"),
        (json!({}), "exactly one of url or service is required"),
        (
            json!({"url": "https://h", "service": {"namespace": "a", "name": "b"}}),
            "exactly one of url or service is required",
        ),
        (json!({"url": 3}), "clientConfig.url must be a string"),
        (
            json!({"service": {"name": "b"}}),
            "clientConfig.service.namespace is required",
        ),
        (
            json!({"service": {"namespace": "a"}}),
            "clientConfig.service.name is required",
        ),
        (
            json!({"service": {"namespace": "a", "name": "b", "port": 70000}}),
            "clientConfig.service.port must be between 1 and 65535",
        ),
        (
            json!({"url": "https://h", "caBundle": 1}),
            "clientConfig.caBundle must be a string",
        ),
        (
            json!({"url": "https://h", "caBundle": b64("not a pem")}),
            "unable to load root certificates: unable to parse bytes as PEM block",
        ),
    ] {
        assert_eq!(
            ClientConfig::from_value(&config),
            Err(WebhookError::InvalidConfig(message.into())),
            "{config}"
        );
    }
}

#[test]
fn ca_bundle_errors() {
    let not_base64 = parse_ca_bundle("%%%").expect_err("not base64");
    assert!(
        not_base64
            .to_string()
            .starts_with("clientConfig.caBundle is not valid base64: "),
        "{not_base64}"
    );
    let garbage = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n";
    let bad_der = parse_ca_bundle(&b64(garbage)).expect_err("not a certificate");
    assert!(
        bad_der
            .to_string()
            .starts_with("unable to load root certificates: "),
        "{bad_der}"
    );
    assert_eq!(parse_ca_bundle(""), Ok(Vec::new()));
}

#[cfg(feature = "testing")]
#[test]
fn ca_bundle_of_generated_certificates() {
    let key = rcgen::KeyPair::generate().expect("key");
    let params = rcgen::CertificateParams::new(vec!["ca".to_string()]).expect("params");
    let pem = params.self_signed(&key).expect("certificate").pem();
    let bundle = parse_ca_bundle(&b64(&format!("{pem}{pem}"))).expect("valid bundle");
    assert_eq!(bundle.len(), 2);
}

#[test]
fn error_display() {
    let url = "https://127.0.0.1:4443/convert?timeout=30s".to_string();
    let refused = io::Error::from(io::ErrorKind::ConnectionRefused);
    for (error, want) in [
        (
            WebhookError::Connect {
                url: url.clone(),
                addr: "127.0.0.1:4443".into(),
                reason: connect_reason(&refused),
            },
            r#"Post "https://127.0.0.1:4443/convert?timeout=30s": dial tcp 127.0.0.1:4443: connect: connection refused"#,
        ),
        (
            WebhookError::Tls {
                url: url.clone(),
                reason: format!(
                    "tls: failed to verify certificate: {}",
                    x509_reason(&CertificateError::UnknownIssuer)
                ),
            },
            r#"Post "https://127.0.0.1:4443/convert?timeout=30s": tls: failed to verify certificate: x509: certificate signed by unknown authority"#,
        ),
        (
            WebhookError::Timeout { url: url.clone() },
            r#"Post "https://127.0.0.1:4443/convert?timeout=30s": context deadline exceeded"#,
        ),
        (
            WebhookError::Lookup {
                url: "https://hook.ns.svc:443?timeout=30s".into(),
                host: "hook.ns.svc".into(),
            },
            r#"Post "https://hook.ns.svc:443?timeout=30s": dial tcp: lookup hook.ns.svc: no such host"#,
        ),
        (
            WebhookError::Status {
                url: url.clone(),
                status: 500,
                body: "boom".into(),
            },
            r#"Post "https://127.0.0.1:4443/convert?timeout=30s": unexpected status code 500: boom"#,
        ),
        (
            WebhookError::Decode {
                url: url.clone(),
                reason: "expected value at line 1 column 1".into(),
            },
            r#"Post "https://127.0.0.1:4443/convert?timeout=30s": decoding the response body: expected value at line 1 column 1"#,
        ),
        (
            WebhookError::TooLarge { url, limit: 10 },
            r#"Post "https://127.0.0.1:4443/convert?timeout=30s": response body larger than 10 bytes"#,
        ),
    ] {
        assert_eq!(error.to_string(), want);
    }
}

#[test]
fn long_status_bodies_are_truncated_in_messages() {
    let error = WebhookError::Status {
        url: "http://h/".into(),
        status: 502,
        body: "é".repeat(1000),
    };
    let message = error.to_string();
    assert!(message.ends_with("..."), "{message}");
    assert!(message.len() < 1200, "{}", message.len());
}

#[test]
fn x509_reasons() {
    let mismatch = CertificateError::NotValidForNameContext {
        expected: ServerName::try_from("hook.ns.svc").expect("name"),
        presented: vec![
            "DnsName(\"localhost\")".into(),
            "IpAddress(127.0.0.1)".into(),
        ],
    };
    for (error, want) in [
        (
            mismatch,
            "x509: certificate is valid for localhost, 127.0.0.1, not hook.ns.svc",
        ),
        (
            CertificateError::Expired,
            "x509: certificate has expired or is not yet valid",
        ),
        (
            CertificateError::UnknownIssuer,
            "x509: certificate signed by unknown authority",
        ),
        (
            CertificateError::BadSignature,
            "x509: certificate signed by unknown authority (possibly because of a signature \
             verification error while trying to verify candidate authority certificate)",
        ),
    ] {
        assert_eq!(x509_reason(&error), want);
    }
}

#[test]
fn resolver_map_then_fallback() {
    let mapped: SocketAddr = "127.0.0.1:1".parse().expect("addr");
    let fallback: SocketAddr = "127.0.0.1:2".parse().expect("addr");
    let resolver = ServiceResolver::new()
        .with_service("ns", "hook", 443, mapped)
        .with_fallback(move |ns, name, _| (ns == "ns" && name == "other").then_some(fallback));
    assert_eq!(resolver.resolve("ns", "hook", 443), Some(mapped));
    assert_eq!(resolver.resolve("ns", "hook", 8443), None);
    assert_eq!(resolver.resolve("ns", "other", 443), Some(fallback));
    assert_eq!(resolver.resolve("x", "hook", 443), None);
}

#[tokio::test]
async fn unknown_services_are_lookup_errors() {
    let config = ClientConfig::from_value(&json!({
        "service": {"namespace": "ns", "name": "hook", "path": "/convert"}
    }))
    .expect("valid");
    let error = WebhookClient::default()
        .post(&config, &json!({}), Duration::from_secs(30))
        .await
        .expect_err("not resolvable");
    assert_eq!(
        error.to_string(),
        r#"Post "https://hook.ns.svc:443/convert?timeout=30s": dial tcp: lookup hook.ns.svc: no such host"#
    );
}

/// A plain-HTTP server on loopback that answers one request with `response` (raw HTTP).
async fn answer_once(response: &'static str) -> SocketAddr {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        let Ok((mut stream, _)) = listener.accept().await else {
            return;
        };
        let mut request = Vec::new();
        let mut buffer = [0u8; 4096];
        while !request.ends_with(b"{}") {
            match stream.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(n) => request.extend_from_slice(&buffer[..n]),
            }
        }
        let _ = stream.write_all(response.as_bytes()).await;
    });
    addr
}

#[tokio::test]
async fn plain_http_urls_and_bodies_that_are_not_json() {
    let ok = answer_once(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 11\r\n\r\n{\"ok\":true}",
    )
    .await;
    let config =
        ClientConfig::from_value(&json!({"url": format!("http://{ok}/hook")})).expect("valid");
    let client = WebhookClient::default();
    let answer = client
        .post(&config, &json!({}), Duration::from_secs(30))
        .await
        .expect("plain http");
    assert_eq!(answer, json!({"ok": true}));

    let text = answer_once("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello").await;
    let config =
        ClientConfig::from_value(&json!({"url": format!("http://{text}/hook")})).expect("valid");
    let error = client
        .post(&config, &json!({}), Duration::from_secs(30))
        .await
        .expect_err("not JSON");
    let WebhookError::Decode { url, .. } = &error else {
        panic!("not a decode error: {error:?}");
    };
    assert_eq!(url, &format!("http://{text}/hook?timeout=30s"));
}

/// An HTTPS server on loopback with a certificate for 127.0.0.1 signed by a CA; answers every
/// request with `{}`. Returns its address, the CA and the leaf certificate (PEM).
async fn tls_server() -> (SocketAddr, String, String) {
    use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
    let ca = crate::server::tls::CertificateAuthority::generate("test CA").expect("CA");
    let serving = ca.serving(&["127.0.0.1".to_string()]).expect("cert");
    let config = crate::server::tls::server_config(&serving, None).expect("config");
    let mut config = Arc::unwrap_or_clone(config);
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let Ok(mut tls) = acceptor.accept(stream).await else {
                continue;
            };
            let mut buffer = [0u8; 4096];
            let mut request = Vec::new();
            while !request.ends_with(b"{}") {
                match tls.read(&mut buffer).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => request.extend_from_slice(&buffer[..n]),
                }
            }
            let response =
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";
            let _ = tls.write_all(response.as_bytes()).await;
        }
    });
    (addr, serving.ca_pem, serving.cert_pem)
}

#[tokio::test]
async fn a_bundle_holding_the_server_certificate_itself_is_trusted() {
    let (addr, ca, leaf) = tls_server().await;
    let client = WebhookClient::default();
    for bundle in [&ca, &leaf] {
        let config = ClientConfig::from_value(&json!({"url": format!("https://{addr}/hook"),
            "caBundle": b64(bundle)}))
        .expect("valid");
        let answer = client
            .post(&config, &json!({}), Duration::from_secs(30))
            .await;
        assert_eq!(answer.expect("trusted"), json!({}));
    }
    let (_, other_ca, _) = tls_server().await;
    let config = ClientConfig::from_value(&json!({"url": format!("https://{addr}/hook"),
        "caBundle": b64(&other_ca)}))
    .expect("valid");
    let error = client
        .post(&config, &json!({}), Duration::from_secs(30))
        .await;
    assert!(matches!(error, Err(WebhookError::Tls { .. })), "{error:?}");
}
