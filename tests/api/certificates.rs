//! certificates.k8s.io/v1 CertificateSigningRequests through kube-rs's typed API: the requester
//! taken from the creating user, the request's validation, approval through `/approval`,
//! issuance through `/status` and what each may not do, kubectl's columns and the field
//! selectors.

use k8s_openapi::api::certificates::v1::CertificateSigningRequest;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use rstest::rstest;
use serde_json::{json, Value};

use crate::harness::{api_error, rbac_server_with_user, server, token_http, TestServer};
use crate::rbac::{table, typed};

const PATH: &str = "/apis/certificates.k8s.io/v1/certificatesigningrequests";
const REQUEST: &str = include_str!("../../fixtures/certificates/request.pem");

fn csr(name: &str, signer: &str, usages: Value) -> Value {
    json!({"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
        "metadata": {"name": name},
        "spec": {"request": base64_of(REQUEST), "signerName": signer, "usages": usages,
            "username": "someone-else", "groups": ["forged"]},
        "status": {"conditions": [{"type": "Approved", "status": "True"}]}})
}

fn base64_of(text: &str) -> String {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.encode(text)
}

fn api(server: &TestServer) -> Api<CertificateSigningRequest> {
    Api::all(server.client.clone())
}

#[rstest]
#[tokio::test]
async fn approve_then_issue(#[future(awt)] server: TestServer) {
    let api = api(&server);
    let created = api
        .create(
            &PostParams::default(),
            &typed(csr("csr-1", "org.io/my-signer", json!(["client auth"]))),
        )
        .await
        .expect("create");
    let spec = &created.spec;
    assert_ne!(
        spec.username.as_deref(),
        Some("someone-else"),
        "the requester is the creator"
    );
    assert!(
        spec.username.as_deref().is_some_and(|u| !u.is_empty()),
        "{spec:?}"
    );
    assert_ne!(spec.groups, Some(vec!["forged".to_string()]));
    assert_eq!(
        created.status.as_ref().and_then(|s| s.conditions.clone()),
        None,
        "create drops status"
    );

    // The main resource changes only metadata.
    let patched = api
        .patch(
            "csr-1",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"labels": {"a": "b"}},
                "spec": {"signerName": "other.io/x"}, "status": {"certificate": "eA=="}})),
        )
        .await
        .expect("main patch");
    assert_eq!(patched.spec.signer_name, "org.io/my-signer");
    assert_eq!(
        patched.metadata.labels.map(|l| l["a"].clone()).as_deref(),
        Some("b")
    );

    // A signer may not approve through /status.
    let approved = json!({"status": {"conditions": [
        {"type": "Approved", "status": "True", "reason": "Test", "lastUpdateTime": null}]}});
    let err = api
        .patch_status(
            "csr-1",
            &PatchParams::default(),
            &Patch::Merge(approved.clone()),
        )
        .await
        .expect_err("status may not approve");
    let status = api_error(err);
    assert_eq!(status.code, 422);
    assert_eq!(
        status.message,
        "CertificateSigningRequest.certificates.k8s.io \"csr-1\" is invalid: status.conditions: Forbidden: updates may not add a condition of type \"Approved\""
    );

    // /approval takes the conditions, filling in their times.
    let (code, body) = server
        .send(
            server
                .http
                .patch(server.url(&format!("{PATH}/csr-1/approval")))
                .header("content-type", "application/merge-patch+json")
                .json(&approved),
        )
        .await;
    assert_eq!(code, 200, "{body}");
    let condition = &body["status"]["conditions"][0];
    assert_eq!(condition["type"], "Approved");
    assert!(condition["lastUpdateTime"].is_string(), "{condition}");
    assert!(condition["lastTransitionTime"].is_string(), "{condition}");
    let (_, row) = table(&server, &format!("{PATH}/csr-1")).await;
    assert_eq!(row["rows"][0]["cells"][5], "Approved");

    // An approval is never taken back.
    let (code, body) = server
        .send(
            server
                .http
                .patch(server.url(&format!("{PATH}/csr-1/approval")))
                .header("content-type", "application/merge-patch+json")
                .json(&json!({"status": {"conditions": []}})),
        )
        .await;
    assert_eq!(code, 422, "{body}");
    assert_eq!(
        body["message"],
        "CertificateSigningRequest.certificates.k8s.io \"csr-1\" is invalid: status.conditions: Forbidden: updates may not remove a condition of type \"Approved\""
    );

    // The signer issues through /status, once.
    let cert = base64_of(&issued_certificate());
    let issued = api
        .patch_status(
            "csr-1",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"certificate": cert}})),
        )
        .await
        .expect("issue");
    assert!(issued.status.and_then(|s| s.certificate).is_some());
    let err = api
        .patch_status(
            "csr-1",
            &PatchParams::default(),
            &Patch::Merge(json!({"status": {"certificate": null}})),
        )
        .await
        .expect_err("certificate is kept");
    assert_eq!(
        api_error(err).message,
        "CertificateSigningRequest.certificates.k8s.io \"csr-1\" is invalid: status.certificate: Forbidden: updates may not modify existing certificate content"
    );
    let (names, body) = table(&server, PATH).await;
    assert_eq!(
        names,
        [
            "Name",
            "Age",
            "SignerName",
            "Requestor",
            "RequestedDuration",
            "Condition"
        ]
    );
    let cells = &body["rows"][0]["cells"];
    assert_eq!(cells[2], "org.io/my-signer");
    assert_eq!(cells[4], "<none>");
    assert_eq!(cells[5], "Approved,Issued");
}

/// A self-signed certificate in PEM, as a signer would write it (made with rcgen).
fn issued_certificate() -> String {
    let key = rcgen::KeyPair::generate().expect("key");
    let params = rcgen::CertificateParams::new(vec!["csr-1".to_string()]).expect("params");
    params.self_signed(&key).expect("certificate").pem()
}

#[rstest]
#[case::legacy_signer("kubernetes.io/legacy-unknown", json!(["client auth"]),
    "spec.signerName: Invalid value: \"kubernetes.io/legacy-unknown\": the legacy signerName is not allowed via this API version")]
#[case::bad_signer("my-signer", json!(["client auth"]),
    "spec.signerName: Invalid value: \"my-signer\": must be a fully qualified domain and path of the form 'example.com/signer-name'")]
#[case::no_usages("org.io/s", json!([]), "spec.usages: Required value")]
#[case::duplicate_usage("org.io/s", json!(["server auth", "server auth"]),
    "spec.usages[1]: Duplicate value: \"server auth\"")]
#[tokio::test]
async fn invalid_requests_are_refused(
    #[future(awt)] server: TestServer,
    #[case] signer: &str,
    #[case] usages: Value,
    #[case] want: &str,
) {
    let rv = server.rv();
    let err = api(&server)
        .create(&PostParams::default(), &typed(csr("bad", signer, usages)))
        .await
        .expect_err("invalid");
    let status = api_error(err);
    assert_eq!(status.code, 422);
    assert_eq!(
        status.message,
        format!("CertificateSigningRequest.certificates.k8s.io \"bad\" is invalid: {want}")
    );
    assert_eq!(server.rv(), rv);

    let mut garbled = csr("garbled", "org.io/s", json!(["client auth"]));
    garbled["spec"]["request"] = json!(base64_of("not a request"));
    let (code, body) = server.post(PATH, &garbled).await;
    assert_eq!(code, 422, "{body}");
    assert_eq!(
        body["details"]["causes"][0],
        json!({"reason": "FieldValueInvalid", "field": "spec.request",
            "message": format!("Invalid value: \"{}\": PEM block type must be CERTIFICATE REQUEST", base64_of("not a request"))})
    );
}

#[rstest]
#[tokio::test]
async fn field_selectors(#[future(awt)] server: TestServer) {
    let api = api(&server);
    for (name, signer) in [("a", "one.io/s"), ("b", "two.io/s")] {
        api.create(
            &PostParams::default(),
            &typed(csr(name, signer, json!(["client auth"]))),
        )
        .await
        .expect("create");
    }
    let listed = api
        .list(&ListParams::default().fields("spec.signerName=two.io/s"))
        .await
        .expect("list");
    let names: Vec<_> = listed
        .items
        .iter()
        .filter_map(|c| c.metadata.name.clone())
        .collect();
    assert_eq!(names, ["b"]);
    let err = api
        .list(&ListParams::default().fields("spec.username=x"))
        .await
        .expect_err("unsupported");
    let status = api_error(err);
    assert_eq!(status.code, 400);
    assert_eq!(status.message, "field label not supported: spec.username");
}

/// The signer plugins under RBAC: approving needs `approve` on the signer (or its domain's
/// `/*`), and nobody may ask `kubernetes.io/kube-apiserver-client` for `system:masters`.
#[rstest]
#[tokio::test]
async fn signers_are_authorized() {
    let server = rbac_server_with_user("approver", &[], "approver-token").await;
    let api = api(&server);
    api.create(
        &PostParams::default(),
        &typed(csr("c", "org.io/my-signer", json!(["client auth"]))),
    )
    .await
    .expect("create");
    let approver = token_http(&server.handle, "Bearer approver-token");
    let approve = || {
        approver
            .patch(server.url(&format!("{PATH}/c/approval")))
            .header("content-type", "application/merge-patch+json")
            .json(&json!({"status": {"conditions": [{"type": "Approved", "status": "True"}]}}))
    };
    let grant = |verbs: &[&str], resources: &[&str], names: &[&str]| {
        json!({"apiGroups": ["certificates.k8s.io"], "resources": resources,
            "verbs": verbs, "resourceNames": names})
    };
    let role = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "approver"},
        "rules": [grant(&["update", "patch", "get"], &["certificatesigningrequests/approval"], &[])]});
    let (code, body) = server
        .post("/apis/rbac.authorization.k8s.io/v1/clusterroles", &role)
        .await;
    assert_eq!(code, 201, "{body}");
    let binding = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": "approver"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "approver"},
        "subjects": [{"kind": "User", "name": "approver", "apiGroup": "rbac.authorization.k8s.io"}]});
    let (code, body) = server
        .post(
            "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
            &binding,
        )
        .await;
    assert_eq!(code, 201, "{body}");

    let (code, body) = server.send(approve()).await;
    assert_eq!(code, 403, "{body}");
    assert_eq!(
        body["message"],
        "certificatesigningrequests.certificates.k8s.io \"c\" is forbidden: user not permitted to approve requests with signerName \"org.io/my-signer\""
    );

    // `approve` on the signer's domain is enough.
    let mut role = role;
    role["rules"].as_array_mut().expect("rules").push(grant(
        &["approve"],
        &["signers"],
        &["org.io/*"],
    ));
    let (code, body) = server
        .send(
            server
                .http
                .put(server.url("/apis/rbac.authorization.k8s.io/v1/clusterroles/approver"))
                .json(&role),
        )
        .await;
    assert_eq!(code, 200, "{body}");
    let (code, body) = server.send(approve()).await;
    assert_eq!(code, 200, "{body}");

    let mut masters = csr(
        "m",
        "kubernetes.io/kube-apiserver-client",
        json!(["client auth"]),
    );
    masters["spec"]["request"] = json!(base64_of(include_str!(
        "../../fixtures/certificates/masters-request.pem"
    )));
    let (code, body) = server.post(PATH, &masters).await;
    assert_eq!(code, 403, "{body}");
    assert_eq!(
        body["message"],
        "certificatesigningrequests.certificates.k8s.io \"m\" is forbidden: use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed"
    );
}
