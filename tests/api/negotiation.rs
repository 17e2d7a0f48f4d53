//! Response negotiation: YAML and protobuf bodies, protobuf watch streams, and the apiserver's
//! 406 when no acceptable format exists.

use rstest::rstest;
use serde_json::{json, Value};

use crate::harness::{server, TestServer};

const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

async fn get_as(server: &TestServer, path: &str, accept: &str) -> (u16, String, bytes::Bytes) {
    let resp = server
        .http
        .get(server.url(path))
        .header("accept", accept)
        .send()
        .await
        .expect("sent");
    let status = resp.status().as_u16();
    let content_type = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    (status, content_type, resp.bytes().await.expect("body"))
}

#[rstest]
#[tokio::test]
async fn objects_and_lists_in_yaml_and_protobuf(#[future(awt)] server: TestServer) {
    let (status, ct, body) =
        get_as(&server, "/api/v1/namespaces/default", "application/yaml").await;
    assert_eq!((status, ct.as_str()), (200, "application/yaml"));
    let yaml: Value =
        serde_saphyr::from_str(std::str::from_utf8(&body).expect("utf-8")).expect("yaml");
    assert_eq!(yaml["metadata"]["name"], "default");

    let accept = format!("{PROTOBUF}, application/json");
    let (status, ct, body) = get_as(&server, "/api/v1/namespaces/default", &accept).await;
    assert_eq!((status, ct.as_str()), (200, PROTOBUF));
    assert_eq!(&body[..4], b"k8s\0");
    let decoded = kubefake::endpoints::protobuf::decode(&body).expect("decodes");
    assert_eq!(decoded["kind"], "Namespace");
    assert_eq!(decoded["metadata"]["name"], "default");

    let (status, _, body) = get_as(&server, "/api/v1/namespaces", &accept).await;
    assert_eq!(status, 200);
    let list = kubefake::endpoints::protobuf::decode(&body).expect("decodes");
    assert_eq!(list["kind"], "NamespaceList");
    assert_eq!(list["items"].as_array().map(Vec::len), Some(4));
}

#[rstest]
#[tokio::test]
async fn unacceptable_formats_get_406(#[future(awt)] server: TestServer) {
    let (status, _, body) = get_as(&server, "/api/v1/namespaces/default", "text/html").await;
    assert_eq!(status, 406);
    let status_body: Value = serde_json::from_slice(&body).expect("json");
    assert_eq!(status_body["reason"], "NotAcceptable");
    assert_eq!(
        status_body["message"],
        "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
    );

    server.install_crontab_crd().await;
    let path = "/apis/stable.example.com/v1/namespaces/default/crontabs";
    let (status, _, body) = get_as(&server, path, PROTOBUF).await;
    assert_eq!(status, 406, "custom resources have no protobuf form");
    let status_body: Value = serde_json::from_slice(&body).expect("json");
    assert_eq!(
        status_body["message"],
        "only the following media types are accepted: application/json, application/yaml"
    );
}

#[rstest]
#[tokio::test]
async fn protobuf_watch_streams_are_length_prefixed_frames(#[future(awt)] server: TestServer) {
    let resp = server
        .http
        .get(server.url("/api/v1/namespaces?watch=true&fieldSelector=metadata.name%3Ddefault"))
        .header("accept", format!("{PROTOBUF};stream=watch"))
        .send()
        .await
        .expect("sent");
    assert_eq!(
        resp.headers()["content-type"],
        "application/vnd.kubernetes.protobuf;stream=watch"
    );
    let mut stream = resp.bytes_stream();
    let mut buf = Vec::new();
    while buf.len() < 4
        || buf.len() < 4 + u32::from_be_bytes([buf[0], buf[1], buf[2], buf[3]]) as usize
    {
        let chunk = futures_util::StreamExt::next(&mut stream)
            .await
            .expect("a frame")
            .expect("bytes");
        buf.extend_from_slice(&chunk);
    }
    let len = u32::from_be_bytes([buf[0], buf[1], buf[2], buf[3]]) as usize;
    // The frame is a bare WatchEvent{type = 1, object = 2 (RawExtension{raw = 1})}.
    let frame = &buf[4..4 + len];
    assert_eq!(frame[0], 0x0a, "field 1, length-delimited");
    let type_len = frame[1] as usize;
    assert_eq!(&frame[2..2 + type_len], b"ADDED");
    let body = json!(String::from_utf8_lossy(frame));
    assert!(body.as_str().unwrap_or("").contains("default"));
}
