//! Authentication, impersonation and authorization through HTTPS and HTTP: who a request is
//! (tokens, client certificates, service account tokens, anonymous), the 401 and 403 bodies,
//! and the reviews kubectl's `auth` commands send.

use serde_json::{json, Value};

use crate::harness::{server_with, token_http, TestServer};
use kubefake::{AuthorizationMode, UserInfo};

fn user(name: &str, groups: &[&str]) -> UserInfo {
    UserInfo {
        name: name.into(),
        groups: groups.iter().map(|g| g.to_string()).collect(),
        ..UserInfo::default()
    }
}

/// An HTTPS server authorizing with RBAC, where token `alice-token` is `alice` (group `dev`).
async fn rbac_server() -> TestServer {
    let builder = kubefake::Server::builder()
        .https()
        .authorization_mode(AuthorizationMode::Rbac)
        .token("alice-token", user("alice", &["dev"]));
    server_with(builder).await
}

/// Sends with a client authenticating as `authorization` ("" for none).
async fn send_as(
    s: &TestServer,
    authorization: &str,
    req: impl Fn(&reqwest::Client) -> reqwest::RequestBuilder,
) -> (u16, Value) {
    let client = token_http(&s.handle, authorization);
    s.send(req(&client)).await
}

async fn whoami(s: &TestServer, authorization: &str, headers: &[(&str, &str)]) -> (u16, Value) {
    let url = s.url("/apis/authentication.k8s.io/v1/selfsubjectreviews");
    let body = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"});
    send_as(s, authorization, |c| {
        let mut r = c.post(&url).json(&body);
        for (k, v) in headers {
            r = r.header(*k, *v);
        }
        r
    })
    .await
}

#[tokio::test]
async fn https_with_the_kubeconfig_credentials() {
    let s = rbac_server().await;
    assert!(s.handle.url().starts_with("https://"));
    let yaml = s.handle.kubeconfig_yaml();
    assert!(yaml.contains("certificate-authority-data: "), "{yaml}");
    assert!(yaml.contains(&format!("token: {}", s.handle.admin_token())));
    // kube-rs through the CA and token of the handle.
    let api: kube::Api<k8s_openapi::api::core::v1::Namespace> = kube::Api::all(s.client.clone());
    let names: Vec<String> = api
        .list(&Default::default())
        .await
        .expect("list namespaces over HTTPS")
        .items
        .into_iter()
        .filter_map(|n| n.metadata.name)
        .collect();
    assert!(names.contains(&"kube-system".to_string()));
    let (code, review) = whoami(&s, &format!("Bearer {}", s.handle.admin_token()), &[]).await;
    assert_eq!(code, 201);
    assert_eq!(
        review["status"]["userInfo"],
        json!({"username": "system:admin", "groups": ["system:masters", "system:authenticated"]})
    );
}

#[tokio::test]
async fn unauthorized_and_anonymous() {
    let s = rbac_server().await;
    let (code, body) = send_as(&s, "Bearer wrong", |c| c.get(s.url("/api/v1/namespaces"))).await;
    assert_eq!(code, 401);
    assert_eq!(
        body,
        json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "Unauthorized", "reason": "Unauthorized", "code": 401})
    );
    // Anonymous: public info only (system:public-info-viewer), nothing else.
    let (code, _) = send_as(&s, "", |c| c.get(s.url("/healthz"))).await;
    assert_eq!(code, 200);
    let (code, body) = send_as(&s, "", |c| c.get(s.url("/api/v1/namespaces/default/pods"))).await;
    assert_eq!(code, 403);
    assert_eq!(
        body["message"],
        "pods is forbidden: User \"system:anonymous\" cannot list resource \"pods\" in API group \"\" in the namespace \"default\""
    );
    assert_eq!(body["details"], json!({"kind": "pods"}));
    let (code, body) = send_as(&s, "", |c| c.get(s.url("/apis"))).await;
    assert_eq!(code, 403);
    assert_eq!(
        body["message"],
        "forbidden: User \"system:anonymous\" cannot get path \"/apis\""
    );
    // Without anonymous requests, no credentials is a 401.
    let closed = server_with(kubefake::Server::builder().anonymous_auth(false)).await;
    let (code, _) = send_as(&closed, "", |c| c.get(closed.url("/version"))).await;
    assert_eq!(code, 401);
}

#[tokio::test]
async fn rbac_roles_and_bindings_decide() {
    let s = rbac_server().await;
    let alice = "Bearer alice-token";
    let pods = s.url("/api/v1/namespaces/default/pods");
    let (code, body) = send_as(&s, alice, |c| c.get(&pods)).await;
    assert_eq!(code, 403, "{body}");
    let role = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
        "metadata": {"name": "pod-reader"},
        "rules": [{"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list"]}]});
    assert_eq!(
        s.post(
            "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles",
            &role
        )
        .await
        .0,
        201
    );
    let binding = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {"name": "devs-read-pods"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pod-reader"},
        "subjects": [{"kind": "Group", "name": "dev"}]});
    let path = "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings";
    assert_eq!(s.post(path, &binding).await.0, 201);
    assert_eq!(send_as(&s, alice, |c| c.get(&pods)).await.0, 200);
    let (code, body) = send_as(&s, alice, |c| {
        c.get(s.url("/api/v1/namespaces/kube-system/pods"))
    })
    .await;
    assert_eq!(code, 403, "{body}");
    let (code, body) = send_as(&s, alice, |c| c.delete(format!("{pods}/p"))).await;
    assert_eq!(code, 403);
    assert_eq!(
        body["message"],
        "pods \"p\" is forbidden: User \"alice\" cannot delete resource \"pods\" in API group \"\" in the namespace \"default\""
    );
    // A binding to a role that does not exist is the reason of the 403.
    let dangling = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {"name": "dangling", "namespace": "kube-system"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "nope"},
        "subjects": [{"kind": "User", "name": "alice"}]});
    let path = "/apis/rbac.authorization.k8s.io/v1/namespaces/kube-system/rolebindings";
    assert_eq!(s.post(path, &dangling).await.0, 201);
    let (_, body) = send_as(&s, alice, |c| {
        c.get(s.url("/api/v1/namespaces/kube-system/pods"))
    })
    .await;
    assert!(
        body["message"]
            .as_str()
            .unwrap_or("")
            .ends_with(": RBAC: role.rbac.authorization.k8s.io \"nope\" not found"),
        "{body}"
    );
}

#[tokio::test]
async fn client_certificates_name_the_user() {
    let ca = kubefake::server::tls::CertificateAuthority::generate("test client CA").expect("CA");
    let builder = kubefake::Server::builder()
        .client_ca(ca.cert_pem.clone())
        .authorization_mode(AuthorizationMode::Rbac);
    let s = server_with(builder).await;
    let (cert, key) = ca
        .client("carol", Some("system:masters"))
        .expect("client cert");
    let identity =
        reqwest::Identity::from_pem(format!("{cert}{key}").as_bytes()).expect("identity");
    let pem = s.handle.ca_pem().expect("CA").to_string();
    let client = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(pem.as_bytes()).expect("CA"))
        .tls_built_in_root_certs(false)
        .identity(identity)
        .build()
        .expect("client");
    let body = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"});
    let url = s.url("/apis/authentication.k8s.io/v1/selfsubjectreviews");
    let (code, review) = s.send(client.post(&url).json(&body)).await;
    assert_eq!(code, 201);
    assert_eq!(
        review["status"]["userInfo"],
        json!({"username": "carol", "groups": ["system:masters", "system:authenticated"]})
    );
    // A certificate from another CA is refused in the handshake.
    let other = kubefake::server::tls::CertificateAuthority::generate("other CA").expect("CA");
    let (cert, key) = other
        .client("mallory", Some("system:masters"))
        .expect("cert");
    let stranger = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(pem.as_bytes()).expect("CA"))
        .tls_built_in_root_certs(false)
        .identity(reqwest::Identity::from_pem(format!("{cert}{key}").as_bytes()).expect("identity"))
        .build()
        .expect("client");
    assert!(stranger.post(&url).json(&body).send().await.is_err());
}

#[tokio::test]
async fn impersonation_is_authorized() {
    let s = rbac_server().await;
    let admin = format!("Bearer {}", s.handle.admin_token());
    let as_jane = [
        ("Impersonate-User", "jane"),
        ("Impersonate-Group", "ops"),
        ("Impersonate-Extra-Team", "blue"),
    ];
    let (code, review) = whoami(&s, &admin, &as_jane).await;
    assert_eq!(code, 201);
    assert_eq!(
        review["status"]["userInfo"],
        json!({"username": "jane", "groups": ["ops", "system:authenticated"], "extra": {"team": ["blue"]}})
    );
    let (code, review) = whoami(
        &s,
        &admin,
        &[("Impersonate-User", "system:serviceaccount:ns:robot")],
    )
    .await;
    assert_eq!(code, 201);
    assert_eq!(
        review["status"]["userInfo"]["groups"],
        json!([
            "system:serviceaccounts",
            "system:serviceaccounts:ns",
            "system:authenticated"
        ])
    );
    let (code, body) = whoami(
        &s,
        "Bearer alice-token",
        &[("Impersonate-User", "system:admin")],
    )
    .await;
    assert_eq!(code, 403);
    assert_eq!(
        body["message"],
        "users \"system:admin\" is forbidden: User \"alice\" cannot impersonate resource \"users\" in API group \"\" at the cluster scope"
    );
    let (code, body) = whoami(&s, &admin, &[("Impersonate-Group", "g")]).await;
    assert_eq!(code, 400);
    assert_eq!(
        body["message"],
        "requested [{Group  g    }] without impersonating a user"
    );
}

async fn review(s: &TestServer, authorization: &str, path: &str, body: Value) -> Value {
    let (code, out) = send_as(s, authorization, |c| c.post(s.url(path)).json(&body)).await;
    assert_eq!(code, 201, "{out}");
    out
}

#[tokio::test]
async fn access_reviews_answer_as_the_authorizer() {
    let s = rbac_server().await;
    let alice = "Bearer alice-token";
    let ssar = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";
    let can = |verb: &str, resource: &str| {
        json!({"apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": {"verb": verb, "resource": resource, "namespace": "default"}}})
    };
    let out = review(&s, alice, ssar, can("create", "selfsubjectaccessreviews")).await;
    assert_eq!(out["status"]["allowed"], false);
    let out = review(&s, alice, ssar, json!({"apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": {"verb": "create", "group": "authorization.k8s.io", "resource": "selfsubjectaccessreviews"}}})).await;
    assert_eq!(out["status"]["allowed"], true);
    assert_eq!(
        out["status"]["reason"],
        "RBAC: allowed by ClusterRoleBinding \"system:basic-user\" of ClusterRole \"system:basic-user\" to Group \"system:authenticated\""
    );
    let admin = format!("Bearer {}", s.handle.admin_token());
    let out = review(&s, &admin, ssar, can("delete", "nodes")).await;
    assert_eq!(out["status"], json!({"allowed": true}));
    // SubjectAccessReview: about someone else.
    let sar = json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
        "spec": {"user": "alice", "groups": ["dev", "system:authenticated"],
            "nonResourceAttributes": {"verb": "get", "path": "/version"}}});
    let out = review(
        &s,
        &admin,
        "/apis/authorization.k8s.io/v1/subjectaccessreviews",
        sar,
    )
    .await;
    assert_eq!(out["status"]["allowed"], true);
    // Validation: neither attributes, and a local review's namespace.
    let (code, body) = s
        .post(
            ssar,
            &json!({"apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectAccessReview", "spec": {}}),
        )
        .await;
    assert_eq!(code, 422);
    assert_eq!(
        body["message"],
        "SelfSubjectAccessReview.authorization.k8s.io \"\" is invalid: spec.resourceAttributes: Invalid value: null: exactly one of nonResourceAttributes or resourceAttributes must be specified"
    );
    let lsar = json!({"apiVersion": "authorization.k8s.io/v1", "kind": "LocalSubjectAccessReview",
        "spec": {"user": "alice", "resourceAttributes": {"verb": "get", "resource": "pods", "namespace": "other"}}});
    let (code, body) = s
        .post(
            "/apis/authorization.k8s.io/v1/namespaces/default/localsubjectaccessreviews",
            &lsar,
        )
        .await;
    assert_eq!(code, 422, "{body}");
    assert!(body["message"].as_str().unwrap_or("").contains("spec.resourceAttributes.namespace: Invalid value: \"other\": must match metadata.namespace"));
}

#[tokio::test]
async fn rules_reviews_list_what_a_user_may_do() {
    let s = rbac_server().await;
    let ssrr = "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews";
    let body = json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview",
        "spec": {"namespace": "default"}});
    let out = review(&s, "Bearer alice-token", ssrr, body.clone()).await;
    let rules = out["status"]["resourceRules"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert!(
        rules
            .iter()
            .any(|r| r["resources"]
                == json!(["selfsubjectaccessreviews", "selfsubjectrulesreviews"])),
        "{out}"
    );
    assert_eq!(out["status"]["incomplete"], false);
    let (code, err) = s
        .post(
            ssrr,
            &json!({"apiVersion": "authorization.k8s.io/v1",
        "kind": "SelfSubjectRulesReview", "spec": {}}),
        )
        .await;
    assert_eq!(
        (code, err["message"].as_str()),
        (400, Some("no namespace on request"))
    );
    // AlwaysAllow answers "everything".
    let open = server_with(kubefake::Server::builder()).await;
    let out = review(&open, "", ssrr, body).await;
    assert_eq!(
        out["status"]["resourceRules"],
        json!([{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}])
    );
}

async fn create(s: &TestServer, path: &str, body: Value) -> Value {
    let (code, out) = s.post(path, &body).await;
    assert_eq!(code, 201, "{out}");
    out
}

#[tokio::test]
async fn service_account_tokens_authenticate_while_their_objects_live() {
    let s = rbac_server().await;
    create(
        &s,
        "/api/v1/namespaces/default/serviceaccounts",
        json!({"metadata": {"name": "bot"}}),
    )
    .await;
    create(
        &s,
        "/api/v1/namespaces/default/pods",
        json!({"metadata": {"name": "runner"},
        "spec": {"serviceAccountName": "bot", "containers": [{"name": "c", "image": "busybox"}]}}),
    )
    .await;
    let request = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
        "spec": {"boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "runner"}}});
    let out = create(
        &s,
        "/api/v1/namespaces/default/serviceaccounts/bot/token",
        request,
    )
    .await;
    assert_eq!(out["kind"], "TokenRequest");
    assert_eq!(out["spec"]["expirationSeconds"], 3600);
    assert_eq!(
        out["spec"]["audiences"],
        json!(["https://kubernetes.default.svc.cluster.local"])
    );
    let token = out["status"]["token"].as_str().expect("token").to_string();
    let bearer = format!("Bearer {token}");
    let (code, me) = whoami(&s, &bearer, &[]).await;
    assert_eq!(code, 201);
    let info = &me["status"]["userInfo"];
    assert_eq!(info["username"], "system:serviceaccount:default:bot");
    assert_eq!(
        info["extra"]["authentication.kubernetes.io/pod-name"],
        json!(["runner"])
    );
    // TokenReview says the same, and refuses other audiences.
    let tr = |aud: Value| {
        json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
        "spec": {"token": token, "audiences": aud}})
    };
    let out = create(
        &s,
        "/apis/authentication.k8s.io/v1/tokenreviews",
        tr(json!([])),
    )
    .await;
    assert_eq!(out["status"]["authenticated"], true);
    assert_eq!(
        out["status"]["user"]["username"],
        "system:serviceaccount:default:bot"
    );
    let out = create(
        &s,
        "/apis/authentication.k8s.io/v1/tokenreviews",
        tr(json!(["vault"])),
    )
    .await;
    assert_eq!(out["status"].get("authenticated"), None);
    assert!(
        out["status"]["error"]
            .as_str()
            .unwrap_or("")
            .contains("is invalid for the target audiences [\"vault\"]"),
        "{out}"
    );
    let out = create(
        &s,
        "/apis/authentication.k8s.io/v1/tokenreviews",
        json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
            "spec": {"token": "not-a-token"}}),
    )
    .await;
    assert_eq!(
        out["status"],
        json!({"user": {}, "error": "invalid bearer token"})
    );
    // The pod goes, the token stops working.
    let (code, _) = s
        .send(
            s.http
                .delete(s.url("/api/v1/namespaces/default/pods/runner?gracePeriodSeconds=0")),
        )
        .await;
    assert_eq!(code, 200);
    assert_eq!(whoami(&s, &bearer, &[]).await.0, 401);
    // Validation of the request.
    let short = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
        "spec": {"expirationSeconds": 60}});
    let (code, body) = s
        .post(
            "/api/v1/namespaces/default/serviceaccounts/bot/token",
            &short,
        )
        .await;
    assert_eq!(code, 422);
    assert_eq!(
        body["message"],
        "TokenRequest.authentication.k8s.io \"\" is invalid: spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes"
    );
    let (code, _) = s
        .post(
            "/api/v1/namespaces/default/serviceaccounts/nobody/token",
            &json!({}),
        )
        .await;
    assert_eq!(code, 404);
}

/// Runs openssl with these arguments in `dir`.
fn openssl(dir: &std::path::Path, args: &[&str]) {
    let out = std::process::Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("openssl runs (.ci/run installs it)");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A CA (v3) and a client certificate it signs with `openssl x509 -req` and no extensions: an
/// X.509 v1 certificate. Returns (CA PEM, client certificate PEM, client key PEM).
fn v1_client_certificate(
    dir: &std::path::Path,
    ca: &str,
    digest: &str,
) -> (String, String, String) {
    let ec = [
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
    ];
    let subject = format!("/CN={ca}");
    let mut args = vec!["req", "-x509", "-keyout", "ca.key", "-out", "ca.crt"];
    args.extend(ec);
    args.extend(["-subj", &subject, "-days", "1"]);
    openssl(dir, &args);
    let mut args = vec!["req", "-new", "-keyout", "c.key", "-out", "c.csr"];
    args.extend(ec);
    args.extend(["-subj", "/O=system:masters/CN=victor"]);
    openssl(dir, &args);
    openssl(
        dir,
        &[
            "x509", "-req", "-in", "c.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-out", "c.crt",
            "-days", "1", digest,
        ],
    );
    let read = |f: &str| std::fs::read_to_string(dir.join(f)).expect("written");
    let cert = read("c.crt");
    let (_, parsed) = x509_parser::pem::parse_x509_pem(cert.as_bytes()).expect("PEM");
    let parsed = parsed.parse_x509().expect("a certificate");
    assert_eq!(parsed.version(), x509_parser::x509::X509Version::V1);
    (read("ca.crt"), cert, read("c.key"))
}

/// X.509 v1 client certificates are accepted as Go's TLS stack accepts them (webpki alone
/// refuses v1): kubectl (Go) authenticates with one signed by the client CA; one signed by
/// another CA is still refused. (kube-rs cannot be the client here: rustls refuses to present a
/// v1 certificate.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn x509_v1_client_certificates_are_accepted() {
    use base64::Engine;
    let dir = tempfile::tempdir().expect("a directory");
    let (ca, cert, key) = v1_client_certificate(dir.path(), "v1 CA", "-sha256");
    let builder = kubefake::Server::builder()
        .client_ca(ca)
        .authorization_mode(AuthorizationMode::Rbac);
    let s = server_with(builder).await;
    let b64 = |t: &str| base64::engine::general_purpose::STANDARD.encode(t);
    let server_ca = s.handle.ca_pem().expect("HTTPS").to_string();
    let whoami = |cert: &str, key: &str| {
        let kubeconfig = json!({"apiVersion": "v1", "kind": "Config",
            "clusters": [{"name": "k", "cluster": {"server": s.handle.url(),
                "certificate-authority-data": b64(&server_ca)}}],
            "users": [{"name": "u", "user": {"client-certificate-data": b64(cert),
                "client-key-data": b64(key)}}],
            "contexts": [{"name": "c", "context": {"cluster": "k", "user": "u"}}],
            "current-context": "c"});
        let path = dir.path().join("kubeconfig");
        std::fs::write(&path, kubeconfig.to_string()).expect("written");
        let path = path.display().to_string();
        let args = ["--kubeconfig", &path, "auth", "whoami", "-o", "json"];
        let out = std::process::Command::new("kubectl")
            .args(args)
            .output()
            .expect("kubectl runs");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (ok, out) = tokio::task::block_in_place(|| whoami(&cert, &key));
    assert!(ok, "{out}");
    let review: Value = serde_json::from_str(&out).expect("a SelfSubjectReview");
    assert_eq!(
        review["status"]["userInfo"],
        json!({"username": "victor", "groups": ["system:masters", "system:authenticated"]})
    );

    let other = tempfile::tempdir().expect("a directory");
    let (_, cert, key) = v1_client_certificate(other.path(), "another CA", "-sha256");
    let (ok, out) = tokio::task::block_in_place(|| whoami(&cert, &key));
    assert!(!ok, "a certificate of another CA is refused: {out}");

    // Signed by the client CA, but with SHA-1, which Go refuses on certificates.
    let again = tempfile::tempdir().expect("a directory");
    std::fs::copy(dir.path().join("ca.crt"), again.path().join("ca.crt")).expect("copied");
    std::fs::copy(dir.path().join("ca.key"), again.path().join("ca.key")).expect("copied");
    let mut args = vec!["req", "-new", "-keyout", "c.key", "-out", "c.csr"];
    args.extend([
        "-newkey",
        "ec",
        "-pkeyopt",
        "ec_paramgen_curve:P-256",
        "-nodes",
    ]);
    args.extend(["-subj", "/O=system:masters/CN=sha1"]);
    openssl(again.path(), &args);
    openssl(
        again.path(),
        &[
            "x509", "-req", "-in", "c.csr", "-CA", "ca.crt", "-CAkey", "ca.key", "-out", "c.crt",
            "-days", "1", "-sha1",
        ],
    );
    let read = |f: &str| std::fs::read_to_string(again.path().join(f)).expect("written");
    let (ok, out) = tokio::task::block_in_place(|| whoami(&read("c.crt"), &read("c.key")));
    assert!(!ok, "a SHA-1 signature is refused: {out}");
}
