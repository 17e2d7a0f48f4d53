//! Installing CustomResourceDefinitions: validation, status, names, scope and versions.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, PostParams};
use rstest::rstest;
use serde_json::{json, Value};

use crate::harness::{api_error, crontab_crd, server, TestServer};

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

fn condition<'a>(crd: &'a Value, type_: &str) -> &'a Value {
    crd["status"]["conditions"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["type"] == type_))
        .unwrap_or(&Value::Null)
}

#[rstest]
#[tokio::test]
async fn create_reports_established_names_and_stored_versions(#[future(awt)] server: TestServer) {
    let crds: Api<CustomResourceDefinition> = Api::all(server.client.clone());
    let crd: CustomResourceDefinition = serde_json::from_value(crontab_crd()).expect("typed CRD");
    let created = crds
        .create(&PostParams::default(), &crd)
        .await
        .expect("create");
    let created = serde_json::to_value(&created).expect("json");
    assert_eq!(condition(&created, "NamesAccepted")["status"], "True");
    assert_eq!(
        condition(&created, "NamesAccepted")["reason"],
        "NoConflicts"
    );
    assert_eq!(condition(&created, "Established")["status"], "True");
    assert_eq!(
        condition(&created, "Established")["reason"],
        "InitialNamesAccepted"
    );
    assert_eq!(
        created["status"]["acceptedNames"],
        json!({"plural": "crontabs", "singular": "crontab", "kind": "CronTab", "listKind": "CronTabList", "shortNames": ["ct"]})
    );
    assert_eq!(created["status"]["storedVersions"], json!(["v1"]));
    assert_eq!(created["metadata"]["generation"], 1);
    assert_eq!(created["spec"]["conversion"]["strategy"], "None");

    // The endpoint answers as soon as the create has returned.
    let (status, list) = server
        .get("/apis/stable.example.com/v1/namespaces/default/crontabs")
        .await;
    assert_eq!(status, 200);
    assert_eq!(list["kind"], "CronTabList");

    // GET shows the same status.
    let fetched = crds.get("crontabs.stable.example.com").await.expect("get");
    let fetched = serde_json::to_value(&fetched).expect("json");
    assert_eq!(condition(&fetched, "Established")["status"], "True");
}

#[rstest]
#[case::name_mismatch(
    |c: &mut Value| c["metadata"]["name"] = json!("wrong.stable.example.com"),
    "metadata.name", r#"metadata.name: Invalid value: "wrong.stable.example.com": must be spec.names.plural+"."+spec.group"#)]
#[case::two_storage_versions(
    |c: &mut Value| { let mut v2 = c["spec"]["versions"][0].clone(); v2["name"] = json!("v2"); c["spec"]["versions"].as_array_mut().expect("list").push(v2); },
    "spec.versions", r#"spec.versions: Invalid value: [{"Name":"v1","Served":true,"Storage":true,"Deprecated":false,"DeprecationWarning":null,"Schema":null,"Subresources":null,"AdditionalPrinterColumns":null,"SelectableFields":null},{"Name":"v2","Served":true,"Storage":true,"Deprecated":false,"DeprecationWarning":null,"Schema":null,"Subresources":null,"AdditionalPrinterColumns":null,"SelectableFields":null}]: must have exactly one version marked as storage version"#)]
#[case::no_storage_version(
    |c: &mut Value| c["spec"]["versions"][0]["storage"] = json!(false),
    "status.storedVersions", "status.storedVersions: Invalid value: null: must have at least one stored version")]
#[case::bad_scope(
    |c: &mut Value| c["spec"]["scope"] = json!("Global"),
    "spec.scope", r#"spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced""#)]
#[case::group_without_dot(
    |c: &mut Value| { c["spec"]["group"] = json!("example"); c["metadata"]["name"] = json!("crontabs.example"); },
    "spec.group", r#"spec.group: Invalid value: "example": should be a domain with at least one dot"#)]
#[case::bad_plural(
    |c: &mut Value| { c["spec"]["names"]["plural"] = json!("Cron_Tabs"); c["metadata"]["name"] = json!("Cron_Tabs.stable.example.com"); },
    "spec.names.plural", "a DNS-1035 label must consist of lower case alphanumeric characters")]
#[case::missing_schema(
    |c: &mut Value| { c["spec"]["versions"][0].as_object_mut().expect("version").remove("schema"); },
    "spec.versions[0].schema.openAPIV3Schema", "spec.versions[0].schema.openAPIV3Schema: Required value")]
#[case::root_not_object(
    |c: &mut Value| c["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["type"] = json!("string"),
    "spec.validation.openAPIV3Schema.type", r#"spec.validation.openAPIV3Schema.type: Invalid value: "string": must be object at the root"#)]
#[case::selectable_unknown_field(
    |c: &mut Value| c["spec"]["versions"][0]["selectableFields"] = json!([{"jsonPath": ".spec.nope"}]),
    "spec.versions[0].selectableFields[0].jsonPath", r#"spec.versions[0].selectableFields[0].jsonPath: Invalid value: ".spec.nope": is an invalid path: does not refer to a valid field"#)]
#[case::selectable_array_notation(
    |c: &mut Value| c["spec"]["versions"][0]["selectableFields"] = json!([{"jsonPath": ".spec['image']"}]),
    "spec.versions[0].selectableFields[0].jsonPath", "is an invalid path: array notation is not allowed")]
#[case::selectable_object(
    |c: &mut Value| c["spec"]["versions"][0]["selectableFields"] = json!([{"jsonPath": ".spec"}]),
    "spec.versions[0].selectableFields[0].jsonPath", r#"spec.versions[0].selectableFields[0].jsonPath: Invalid value: ".spec": must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed."#)]
#[case::selectable_duplicate(
    |c: &mut Value| c["spec"]["versions"][0]["selectableFields"] = json!([{"jsonPath": ".spec.image"}, {"jsonPath": ".spec.image"}]),
    "spec.versions[0].selectableFields[1].jsonPath", r#"spec.versions[0].selectableFields[1].jsonPath: Duplicate value: ".spec.image""#)]
#[case::selectable_without_path(
    |c: &mut Value| c["spec"]["versions"][0]["selectableFields"] = json!([{}]),
    "spec.versions[0].selectableFields[0].jsonPath", "spec.versions[0].selectableFields[0].jsonPath: Required value")]
#[case::selectable_too_many(
    |c: &mut Value| {
        let spec = &mut c["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"];
        let mut paths = Vec::new();
        for i in 0..9 {
            spec[format!("f{i}")] = json!({"type": "string"});
            paths.push(json!({"jsonPath": format!(".spec.f{i}")}));
        }
        c["spec"]["versions"][0]["selectableFields"] = json!(paths);
    },
    "spec.versions[0].selectableFields", "spec.versions[0].selectableFields: Too many: 9: must have at most 8 items")]
#[tokio::test]
async fn invalid_crds_are_rejected(
    #[future(awt)] server: TestServer,
    #[case] mutate: fn(&mut Value),
    #[case] field: &str,
    #[case] message: &str,
) {
    let mut crd = crontab_crd();
    mutate(&mut crd);
    let rv = server.rv();
    let (status, body) = server.post(CRDS, &crd).await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["reason"], "Invalid");
    assert_eq!(body["details"]["kind"], "CustomResourceDefinition");
    assert_eq!(body["details"]["group"], "apiextensions.k8s.io");
    let msg = body["message"].as_str().expect("message");
    assert!(
        msg.starts_with("CustomResourceDefinition.apiextensions.k8s.io \""),
        "{msg}"
    );
    assert!(msg.contains(message), "{msg}\nshould contain\n{message}");
    let causes = body["details"]["causes"].as_array().expect("causes");
    assert!(causes.iter().any(|c| c["field"] == field), "{causes:?}");
    assert_eq!(server.rv(), rv, "a rejected CRD changes nothing");
}

#[rstest]
#[tokio::test]
async fn conflicting_names_are_not_accepted(#[future(awt)] server: TestServer) {
    server.install_crontab_crd().await;
    let mut other = crontab_crd();
    other["metadata"]["name"] = json!("cronjobs2.stable.example.com");
    other["spec"]["names"] =
        json!({"plural": "cronjobs2", "kind": "CronJob2", "shortNames": ["ct"]});
    let (status, created) = server.post(CRDS, &other).await;
    assert_eq!(status, 201);
    let accepted = condition(&created, "NamesAccepted");
    assert_eq!(accepted["status"], "False");
    assert_eq!(accepted["reason"], "ShortNamesConflict");
    assert_eq!(accepted["message"], "\"ct\" is already in use");
    assert_eq!(condition(&created, "Established")["status"], "False");
    assert_eq!(
        server.get("/apis/stable.example.com/v1/cronjobs2").await.0,
        404
    );
    // The first CRD is untouched and still served.
    assert_eq!(
        server.get("/apis/stable.example.com/v1/crontabs").await.0,
        200
    );
}

#[rstest]
#[tokio::test]
async fn cluster_scoped_custom_resources(#[future(awt)] server: TestServer) {
    let mut crd = crontab_crd();
    crd["metadata"]["name"] = json!("clustertabs.stable.example.com");
    crd["spec"]["scope"] = json!("Cluster");
    crd["spec"]["names"] = json!({"plural": "clustertabs", "kind": "ClusterTab"});
    assert_eq!(server.post(CRDS, &crd).await.0, 201);
    let api = server.dynamic(
        ("stable.example.com", "v1", "ClusterTab"),
        "clustertabs",
        None,
    );
    let obj: kube::api::DynamicObject = serde_json::from_value(json!({
        "apiVersion": "stable.example.com/v1", "kind": "ClusterTab",
        "metadata": {"name": "global", "namespace": "ignored"}, "spec": {"image": "x"}
    }))
    .expect("object");
    let created = api
        .create(&PostParams::default(), &obj)
        .await
        .expect("create");
    assert_eq!(
        created.metadata.namespace, None,
        "cluster-scoped objects have no namespace"
    );
    assert_eq!(
        server
            .get("/apis/stable.example.com/v1/clustertabs/global")
            .await
            .0,
        200
    );
    assert_eq!(
        server
            .get("/apis/stable.example.com/v1/namespaces/default/clustertabs/global")
            .await
            .0,
        404
    );
    assert_eq!(
        server
            .get("/apis/stable.example.com/v1/clustertabs")
            .await
            .1["items"][0]["metadata"]["name"],
        "global"
    );
}

#[rstest]
#[tokio::test]
async fn every_served_version_shows_the_same_objects(#[future(awt)] server: TestServer) {
    let mut crd = crontab_crd();
    let mut beta = crd["spec"]["versions"][0].clone();
    beta["name"] = json!("v1beta1");
    beta["storage"] = json!(false);
    let mut unserved = beta.clone();
    unserved["name"] = json!("v1alpha1");
    unserved["served"] = json!(false);
    crd["spec"]["versions"]
        .as_array_mut()
        .expect("versions")
        .extend([beta, unserved]);
    assert_eq!(server.post(CRDS, &crd).await.0, 201);

    // Created through v1beta1, stored in v1, visible in both.
    let body = json!({"apiVersion": "stable.example.com/v1beta1", "kind": "CronTab",
                      "metadata": {"name": "multi"}, "spec": {"image": "i"}});
    let (status, created) = server
        .post(
            "/apis/stable.example.com/v1beta1/namespaces/default/crontabs",
            &body,
        )
        .await;
    assert_eq!(status, 201, "{created}");
    assert_eq!(created["apiVersion"], "stable.example.com/v1beta1");
    let (_, v1) = server
        .get("/apis/stable.example.com/v1/namespaces/default/crontabs/multi")
        .await;
    assert_eq!(v1["apiVersion"], "stable.example.com/v1");
    let (_, list) = server
        .get("/apis/stable.example.com/v1beta1/crontabs")
        .await;
    assert_eq!(list["apiVersion"], "stable.example.com/v1beta1");
    assert_eq!(list["items"][0]["apiVersion"], "stable.example.com/v1beta1");
    assert_eq!(
        server
            .get("/apis/stable.example.com/v1alpha1/crontabs")
            .await
            .0,
        404
    );
}

#[rstest]
#[tokio::test]
async fn updating_a_crd_serves_new_versions_and_keeps_names(#[future(awt)] server: TestServer) {
    let created = server.install_crontab_crd().await;
    let mut updated = created.clone();
    let mut v2 = updated["spec"]["versions"][0].clone();
    v2["name"] = json!("v2");
    v2["storage"] = json!(false);
    updated["spec"]["versions"]
        .as_array_mut()
        .expect("versions")
        .push(v2);
    let resp = server
        .http
        .put(server.url(&format!("{CRDS}/crontabs.stable.example.com")))
        .json(&updated)
        .send()
        .await
        .expect("put");
    assert_eq!(resp.status(), 200);
    let body: Value = resp.json().await.expect("json");
    assert_eq!(body["metadata"]["generation"], 2);
    assert_eq!(
        server.get("/apis/stable.example.com/v2/crontabs").await.0,
        200
    );

    // Immutable fields stay immutable.
    let mut renamed = body.clone();
    renamed["spec"]["group"] = json!("other.example.com");
    let resp = server
        .http
        .put(server.url(&format!("{CRDS}/crontabs.stable.example.com")))
        .json(&renamed)
        .send()
        .await
        .expect("put");
    assert_eq!(resp.status(), 422);
    let status: Value = resp.json().await.expect("json");
    assert!(
        status["message"]
            .as_str()
            .expect("msg")
            .contains("spec.group: Invalid value: \"other.example.com\": field is immutable"),
        "{status}"
    );
}

#[rstest]
#[tokio::test]
async fn kube_rs_crd_from_the_derive(#[future(awt)] server: TestServer) {
    use kube::CustomResourceExt;
    let crds: Api<CustomResourceDefinition> = Api::all(server.client.clone());
    let crd = crate::harness::CronTab::crd();
    crds.create(&PostParams::default(), &crd)
        .await
        .expect("derived CRD installs");
    let ct = server.create_crontab("default", "derived").await;
    assert_eq!(ct.spec.cron_spec, "* * * * */5");
    let err = crds
        .create(&PostParams::default(), &crd)
        .await
        .expect_err("exists");
    let status = api_error(err);
    assert_eq!(status.code, 409);
    assert_eq!(status.reason, "AlreadyExists");
    assert_eq!(status.message, "customresourcedefinitions.apiextensions.k8s.io \"crontabs.stable.example.com\" already exists");
}
