//! The webhook transport against `kubefake::testing::WebhookServer`: what conversion and
//! admission webhooks will be called through, success and each way a call fails.

use std::time::Duration;

use kubefake::testing::WebhookServer;
use kubefake::webhook::{ClientConfig, ServiceResolver, WebhookClient, WebhookError};
use serde_json::{json, Value};

const TIMEOUT: Duration = Duration::from_secs(30);

/// A server answering every request with its target and body.
async fn echo(builder: kubefake::testing::WebhookServerBuilder) -> WebhookServer {
    builder
        .start(|target, body| async move { json!({"target": target, "body": body}) })
        .await
        .expect("webhook server starts")
}

fn config(value: Value) -> ClientConfig {
    ClientConfig::from_value(&value).expect("valid clientConfig")
}

#[tokio::test]
async fn posts_json_verified_against_the_ca_bundle() {
    let server = echo(WebhookServer::builder()).await;
    let client = WebhookClient::default();
    let review = json!({"kind": "ConversionReview", "request": {"uid": "1"}});
    for url in [
        server.url("/convert"),
        format!("https://localhost:{}/convert", server.addr().port()),
    ] {
        let config = config(json!({"url": url, "caBundle": server.ca_bundle()}));
        let answer = client.post(&config, &review, TIMEOUT).await.expect(&url);
        assert_eq!(
            answer,
            json!({"target": "/convert?timeout=30s", "body": review})
        );
    }
    assert_eq!(server.requests(), 2);
    assert!(server.ca_pem().starts_with("-----BEGIN CERTIFICATE-----"));
}

#[tokio::test]
async fn another_ca_is_a_tls_error() {
    let server = echo(WebhookServer::builder()).await;
    let other = echo(WebhookServer::builder()).await;
    let config = config(json!({"url": server.url("/convert"), "caBundle": other.ca_bundle()}));
    let error = WebhookClient::default()
        .post(&config, &json!({}), TIMEOUT)
        .await
        .expect_err("unknown authority");
    assert!(matches!(error, WebhookError::Tls { .. }), "{error:?}");
    assert_eq!(
        error.to_string(),
        format!(
            "Post \"{}?timeout=30s\": tls: failed to verify certificate: x509: certificate \
             signed by unknown authority",
            server.url("/convert")
        )
    );
    assert_eq!(server.requests(), 0);
}

#[tokio::test]
async fn a_closed_port_is_connection_refused() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    drop(listener);
    let config = config(json!({"url": format!("https://{addr}/convert")}));
    let error = WebhookClient::default()
        .post(&config, &json!({}), TIMEOUT)
        .await
        .expect_err("nothing listens");
    assert!(matches!(error, WebhookError::Connect { .. }), "{error:?}");
    assert_eq!(
        error.to_string(),
        format!(
            "Post \"https://{addr}/convert?timeout=30s\": dial tcp {addr}: connect: connection \
             refused"
        )
    );
}

#[tokio::test]
async fn a_slow_webhook_is_a_timeout() {
    let server = WebhookServer::start(|_, _| async {
        tokio::time::sleep(Duration::from_secs(5)).await;
        json!({})
    })
    .await
    .expect("webhook server starts");
    let config = config(json!({"url": server.url("/slow"), "caBundle": server.ca_bundle()}));
    let error = WebhookClient::default()
        .post(&config, &json!({}), Duration::from_secs(1))
        .await
        .expect_err("too slow");
    assert_eq!(
        error,
        WebhookError::Timeout {
            url: format!("{}?timeout=1s", server.url("/slow"))
        }
    );
    assert_eq!(
        error.to_string(),
        format!(
            "Post \"{}?timeout=1s\": context deadline exceeded",
            server.url("/slow")
        )
    );
}

#[tokio::test]
async fn a_non_2xx_status_keeps_code_and_body() {
    let server =
        WebhookServer::start(|_, _| async { (500, json!({"message": "conversion exploded"})) })
            .await
            .expect("webhook server starts");
    let config = config(json!({"url": server.url("/convert"), "caBundle": server.ca_bundle()}));
    let error = WebhookClient::default()
        .post(&config, &json!({}), TIMEOUT)
        .await
        .expect_err("500");
    let WebhookError::Status { status, body, .. } = &error else {
        panic!("not a status error: {error:?}");
    };
    assert_eq!(*status, 500);
    assert_eq!(
        serde_json::from_str::<Value>(body).expect("JSON body"),
        json!({"message": "conversion exploded"})
    );
}

#[tokio::test]
async fn responses_over_the_limit_are_refused() {
    let server = WebhookServer::start(|_, _| async { json!({"padding": "x".repeat(100)}) })
        .await
        .expect("webhook server starts");
    let config = config(json!({"url": server.url("/convert"), "caBundle": server.ca_bundle()}));
    let error = WebhookClient::default()
        .with_max_response_bytes(64)
        .post(&config, &json!({}), TIMEOUT)
        .await
        .expect_err("too large");
    assert!(
        matches!(error, WebhookError::TooLarge { limit: 64, .. }),
        "{error:?}"
    );
}

#[tokio::test]
async fn services_are_dialled_where_resolved_and_verified_by_service_name() {
    let server = echo(WebhookServer::builder().dns_name("hook.webhooks.svc")).await;
    let client = WebhookClient::new(
        ServiceResolver::new()
            .with_service("webhooks", "hook", 443, server.addr())
            .with_fallback({
                let addr = server.addr();
                move |namespace, name, _| {
                    (namespace == "webhooks" && name == "other").then_some(addr)
                }
            }),
    );
    let service = |name: &str| {
        config(json!({
            "service": {"namespace": "webhooks", "name": name, "path": "/convert"},
            "caBundle": server.ca_bundle(),
        }))
    };
    let answer = client
        .post(&service("hook"), &json!({"n": 1}), Duration::from_secs(10))
        .await
        .expect("service call");
    assert_eq!(
        answer,
        json!({"target": "/convert?timeout=10s", "body": {"n": 1}})
    );

    let error = client
        .post(&service("other"), &json!({}), TIMEOUT)
        .await
        .expect_err("the certificate is not for other.webhooks.svc");
    assert_eq!(
        error.to_string(),
        "Post \"https://other.webhooks.svc:443/convert?timeout=30s\": tls: failed to verify \
         certificate: x509: certificate is valid for localhost, 127.0.0.1, hook.webhooks.svc, \
         not other.webhooks.svc"
    );
    assert_eq!(server.requests(), 1);
}
