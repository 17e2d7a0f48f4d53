//! core/v1 ServiceAccounts: secret references reduced to names, the deprecated annotation's
//! warning, a DELETE answered with the object, kubectl's columns.

use k8s_openapi::api::core::v1::{ObjectReference, ServiceAccount};
use kube::api::{Api, DeleteParams, Patch, PatchParams, PostParams};
use rstest::rstest;
use serde_json::json;

use super::{columns, row, table};
use crate::harness::{server, TestServer};

#[rstest]
#[tokio::test]
async fn crud_and_printing(#[future(awt)] server: TestServer) {
    let api: Api<ServiceAccount> = Api::namespaced(server.client.clone(), "default");
    let sa = ServiceAccount {
        metadata: kube::api::ObjectMeta {
            name: Some("builder".into()),
            ..Default::default()
        },
        secrets: Some(vec![ObjectReference {
            name: Some("token".into()),
            namespace: Some("elsewhere".into()),
            uid: Some("u".into()),
            ..Default::default()
        }]),
        ..Default::default()
    };
    let created = api
        .create(&PostParams::default(), &sa)
        .await
        .expect("create");
    assert_eq!(
        created.secrets,
        Some(vec![ObjectReference {
            name: Some("token".into()),
            ..Default::default()
        }])
    );
    assert!(created.metadata.generation.is_none());

    let patched = api
        .patch(
            "builder",
            &PatchParams::default(),
            &Patch::Strategic(json!({"imagePullSecrets": [{"name": "registry"}]})),
        )
        .await
        .expect("patch");
    assert_eq!(patched.image_pull_secrets.map(|s| s.len()), Some(1));

    let resp = server
        .http
        .post(server.url("/api/v1/namespaces/default/serviceaccounts"))
        .json(&json!({"metadata": {"name": "old-style",
            "annotations": {"kubernetes.io/enforce-mountable-secrets": "true"}}}))
        .send()
        .await
        .expect("sent");
    assert_eq!(resp.status().as_u16(), 201);
    let warning = resp
        .headers()
        .get("warning")
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_string();
    assert!(
        warning.contains(
            "metadata.annotations[kubernetes.io/enforce-mountable-secrets]: deprecated in v1.32+"
        ),
        "{warning}"
    );

    let t = table(&server, "/api/v1/namespaces/default/serviceaccounts").await;
    assert_eq!(columns(&t), ["Name", "Age"]);
    assert_eq!(row(&t, "builder")[0], "builder");

    let deleted = api
        .delete("builder", &DeleteParams::default())
        .await
        .expect("delete");
    let obj = deleted.left().expect("the deleted object, not a Status");
    assert_eq!(obj.metadata.name.as_deref(), Some("builder"));
}
