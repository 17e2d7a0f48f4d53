//! The flowcontrol.apiserver.k8s.io/v1 FlowSchema kind: which requests (subjects, resource and
//! non-resource rules) go to which priority level, at which precedence. `exempt` and
//! `catch-all` are mandatory: their spec is fixed.

use std::sync::Arc;

use serde_json::{json, Value};

use super::{condition_type_errors, is_bootstrap, mandatory_spec, GROUP};
use crate::controllers::Work;
use crate::error::{field, StatusCause};
use crate::machinery::gofmt::{go_internal_json, GoShape};
use crate::registry::builtin;
use crate::registry::object_meta::{meta_str, name_errors, NameRule};
use crate::registry::resource::{ApiResource, ClusterInfo};
use crate::registry::strategy::{keep_only_status, Strategy};
use crate::registry::table::{Column, Columns};
use crate::registry::validation::{dns_label_errors, dns_subdomain_errors};
use crate::store::selector::generic_unsupported_field;
use crate::store::StoredObject;

/// The highest precedence a FlowSchema may have.
const MAX_PRECEDENCE: i64 = 10_000;

/// The verbs a resource or non-resource rule may name.
const VERBS: [&str; 9] = [
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "proxy",
    "update",
    "watch",
];

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind(GROUP, "v1", "flowschemas", Arc::new(FlowSchemaStrategy))
        .part("status", Arc::new(StatusStrategy))
        .with(|r| {
            r.unsupported_field(generic_unsupported_field)
                .table(columns())
                .bootstrap(bootstrap)
        })
        .build()
}

fn bootstrap(_cluster: &ClusterInfo) -> Vec<Value> {
    super::bootstrap_schemas()
}

/// A text cell at `path`, or `<none>`.
fn text(o: &Value, path: &[&str]) -> Value {
    let v = path.iter().fold(o, |v, k| &v[*k]);
    json!(v.as_str().unwrap_or("<none>"))
}

fn columns() -> Columns {
    Columns::new(vec![
        Column::name(),
        Column::computed("PriorityLevel", "string", 0, "`priorityLevelConfiguration` should reference a PriorityLevelConfiguration in the cluster. If the reference cannot be resolved, the FlowSchema will be ignored and marked as invalid in its status. Required.", |o| {
            text(o, &["spec", "priorityLevelConfiguration", "name"])
        }),
        Column::computed("MatchingPrecedence", "string", 0, "`matchingPrecedence` is used to choose among the FlowSchemas that match a given request. The chosen FlowSchema is among those with the numerically lowest (which we take to be logically highest) MatchingPrecedence.  Each MatchingPrecedence value must be ranged in [1,10000]. Note that if the precedence is not specified, it will be set to 1000 as default.", |o| {
            json!(o["spec"]["matchingPrecedence"].as_i64().unwrap_or(0))
        }),
        Column::computed("DistinguisherMethod", "string", 0, "`distinguisherMethod` defines how to compute the flow distinguisher for requests that match this schema. `nil` specifies that the distinguisher is disabled and thus will always be the empty string.", |o| {
            text(o, &["spec", "distinguisherMethod", "type"])
        }),
        Column::age("string"),
        Column::computed("MissingPL", "string", 0, "references a broken or non-existent PriorityLevelConfiguration", |o| {
            let conditions = o["status"]["conditions"].as_array().into_iter().flatten();
            let dangling = conditions.into_iter().find(|c| c["type"] == "Dangling");
            json!(dangling.and_then(|c| c["status"].as_str()).unwrap_or("?"))
        }),
    ])
}

/// The internal FlowSchemaSpec, for the mandatory objects' message.
const SPEC: GoShape = GoShape::Struct(
    &[
        (
            "priorityLevelConfiguration",
            "PriorityLevelConfiguration",
            GoShape::Struct(&[("name", "Name", GoShape::Text)], false),
        ),
        ("matchingPrecedence", "MatchingPrecedence", GoShape::Number),
        (
            "distinguisherMethod",
            "DistinguisherMethod",
            GoShape::Struct(&[("type", "Type", GoShape::Text)], true),
        ),
        ("rules", "Rules", GoShape::List(&RULES)),
    ],
    false,
);

const NAME: GoShape = GoShape::Struct(&[("name", "Name", GoShape::Text)], true);
const TEXTS: GoShape = GoShape::List(&GoShape::Text);
const RULES: GoShape = GoShape::Struct(
    &[
        (
            "subjects",
            "Subjects",
            GoShape::List(&GoShape::Struct(
                &[
                    ("kind", "Kind", GoShape::Text),
                    ("user", "User", NAME),
                    ("group", "Group", NAME),
                    (
                        "serviceAccount",
                        "ServiceAccount",
                        GoShape::Struct(
                            &[
                                ("namespace", "Namespace", GoShape::Text),
                                ("name", "Name", GoShape::Text),
                            ],
                            true,
                        ),
                    ),
                ],
                false,
            )),
        ),
        (
            "resourceRules",
            "ResourceRules",
            GoShape::List(&GoShape::Struct(
                &[
                    ("verbs", "Verbs", TEXTS),
                    ("apiGroups", "APIGroups", TEXTS),
                    ("resources", "Resources", TEXTS),
                    ("clusterScope", "ClusterScope", GoShape::Flag),
                    ("namespaces", "Namespaces", TEXTS),
                ],
                false,
            )),
        ),
        (
            "nonResourceRules",
            "NonResourceRules",
            GoShape::List(&GoShape::Struct(
                &[
                    ("verbs", "Verbs", TEXTS),
                    ("nonResourceURLs", "NonResourceURLs", TEXTS),
                ],
                false,
            )),
        ),
    ],
    false,
);

fn strings(v: &Value) -> Vec<&str> {
    v.as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect()
}

/// `ValidateFlowSchemaSpec`.
fn spec_errors(obj: &Value) -> Vec<StatusCause> {
    let spec = &obj["spec"];
    let mut errs = Vec::new();
    let precedence = spec["matchingPrecedence"].as_i64().unwrap_or(0);
    let at = "spec.matchingPrecedence";
    if precedence <= 0 {
        errs.push(field::invalid(
            at,
            &json!(precedence),
            "must be a positive value",
        ));
    } else if precedence > MAX_PRECEDENCE {
        errs.push(field::invalid(
            at,
            &json!(precedence),
            "must not be greater than 10000",
        ));
    } else if precedence == 1 && meta_str(obj, "name") != "exempt" {
        let why = "only the schema named 'exempt' may have matchingPrecedence 1";
        errs.push(field::invalid(at, &json!(precedence), why));
    }
    let method = &spec["distinguisherMethod"];
    if method.is_object() && !matches!(method["type"].as_str(), Some("ByNamespace" | "ByUser")) {
        let mut cause = field::not_supported(
            "spec.distinguisherMethod.type",
            &Value::Null,
            &["ByNamespace", "ByUser"],
        );
        let shape = GoShape::Struct(&[("type", "Type", GoShape::Text)], true);
        cause.message = cause
            .message
            .replacen("null", &go_internal_json(method, shape), 1);
        errs.push(cause);
    }
    let level = spec["priorityLevelConfiguration"]["name"]
        .as_str()
        .unwrap_or("");
    match level {
        "" => errs.push(field::required(
            "spec.priorityLevelConfiguration.name",
            "must reference a priority level",
        )),
        name => errs.extend(dns_subdomain_errors(
            "spec.priorityLevelConfiguration.name",
            name,
        )),
    }
    let rules = spec["rules"].as_array().into_iter().flatten();
    for (i, rule) in rules.enumerate() {
        errs.extend(rule_errors(rule, &format!("spec.rules[{i}]")));
    }
    errs
}

/// `ValidateFlowSchemaPolicyRulesWithSubjects`.
fn rule_errors(rule: &Value, path: &str) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let subjects = rule["subjects"].as_array().map_or(&[][..], Vec::as_slice);
    if subjects.is_empty() {
        errs.push(field::required(
            &format!("{path}.subjects"),
            "subjects must contain at least one value",
        ));
    }
    for (i, subject) in subjects.iter().enumerate() {
        errs.extend(subject_errors(subject, &format!("{path}.subjects[{i}]")));
    }
    let resource = rule["resourceRules"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    let non_resource = rule["nonResourceRules"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    if resource.is_empty() && non_resource.is_empty() {
        errs.push(field::required(
            path,
            "at least one of resourceRules and nonResourceRules has to be non-empty",
        ));
    }
    for (i, r) in resource.iter().enumerate() {
        errs.extend(resource_rule_errors(
            r,
            &format!("{path}.resourceRules[{i}]"),
        ));
    }
    for (i, r) in non_resource.iter().enumerate() {
        errs.extend(non_resource_rule_errors(
            r,
            &format!("{path}.nonResourceRules[{i}]"),
        ));
    }
    errs
}

/// `ValidateServiceAccountSubject` and the like: each kind names its own member and no other.
fn subject_errors(s: &Value, path: &str) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let kind = s["kind"].as_str().unwrap_or("");
    let forbid = |member: &str, of: &str| {
        let detail = format!("{member} is forbidden when subject kind is not '{of}'");
        field::forbidden(&format!("{path}.{member}"), &detail)
    };
    match kind {
        "ServiceAccount" => match &s["serviceAccount"] {
            sa if sa.is_object() => {
                match sa["name"].as_str().unwrap_or("") {
                    "" => errs.push(field::required(&format!("{path}.serviceAccount.name"), "")),
                    "*" => {}
                    name => errs.extend(dns_subdomain_errors(
                        &format!("{path}.serviceAccount.name"),
                        name,
                    )),
                }
                match sa["namespace"].as_str().unwrap_or("") {
                    "" => errs.push(field::required(
                        &format!("{path}.serviceAccount.namespace"),
                        "must specify namespace for service account",
                    )),
                    ns => errs.extend(dns_label_errors(
                        &format!("{path}.serviceAccount.namespace"),
                        ns,
                    )),
                }
            }
            _ => errs.push(field::required(
                &format!("{path}.serviceAccount"),
                "serviceAccount is required when subject kind is 'ServiceAccount'",
            )),
        },
        "User" | "Group" => {
            let member = if kind == "User" { "user" } else { "group" };
            match s[member]["name"].as_str() {
                _ if !s[member].is_object() => errs.push(field::required(
                    &format!("{path}.{member}"),
                    &format!("{member} is required when subject kind is '{kind}'"),
                )),
                None | Some("") => errs.push(field::required(&format!("{path}.{member}.name"), "")),
                Some(_) => {}
            }
        }
        other => {
            let supported = ["Group", "ServiceAccount", "User"];
            return vec![field::not_supported(
                &format!("{path}.kind"),
                &json!(other),
                &supported,
            )];
        }
    }
    for (member, of) in [
        ("serviceAccount", "ServiceAccount"),
        ("user", "User"),
        ("group", "Group"),
    ] {
        if kind != of && s[member].is_object() {
            errs.push(forbid(member, of));
        }
    }
    errs
}

/// The verbs of a rule: at least one, `*` alone, each supported.
fn verbs_errors(rule: &Value, path: &str) -> Vec<StatusCause> {
    let verbs = strings(&rule["verbs"]);
    let at = format!("{path}.verbs");
    if verbs.is_empty() {
        return vec![field::required(
            &at,
            "verbs must contain at least one value",
        )];
    }
    if verbs.contains(&"*") && verbs.len() > 1 {
        return vec![field::invalid(
            &at,
            &json!(verbs),
            "if '*' is present, must not specify other verbs",
        )];
    }
    if verbs.iter().any(|v| *v != "*" && !VERBS.contains(v)) {
        return vec![field::not_supported(&at, &json!(verbs), &VERBS)];
    }
    Vec::new()
}

/// A list that must not be empty, and holds `*` only alone.
fn wildcard_list_errors(
    list: &[&str],
    path: &str,
    required: &str,
    others: &str,
) -> Vec<StatusCause> {
    if list.is_empty() {
        return vec![field::required(path, required)];
    }
    if list.len() > 1 && list.contains(&"*") {
        let detail = format!("if '*' is present, must not specify other {others}");
        return vec![field::invalid(path, &json!(list), &detail)];
    }
    Vec::new()
}

/// `ValidateFlowSchemaResourcePolicyRule`.
fn resource_rule_errors(rule: &Value, path: &str) -> Vec<StatusCause> {
    let mut errs = verbs_errors(rule, path);
    let groups = strings(&rule["apiGroups"]);
    errs.extend(wildcard_list_errors(
        &groups,
        &format!("{path}.apiGroups"),
        "resource rules must supply at least one api group",
        "api groups",
    ));
    let resources = strings(&rule["resources"]);
    errs.extend(wildcard_list_errors(
        &resources,
        &format!("{path}.resources"),
        "resource rules must supply at least one resource",
        "resources",
    ));
    let namespaces = strings(&rule["namespaces"]);
    let at = format!("{path}.namespaces");
    if namespaces.is_empty() && rule["clusterScope"] != true {
        errs.push(field::required(
            &at,
            "resource rules that are not cluster scoped must supply at least one namespace",
        ));
    } else if namespaces.contains(&"*") {
        if namespaces.len() > 1 {
            errs.push(field::invalid(
                &at,
                &json!(namespaces),
                "if '*' is present, must not specify other namespaces",
            ));
        }
    } else {
        for (i, ns) in namespaces.iter().enumerate() {
            for why in name_errors(ns, NameRule::Label) {
                let detail =
                    format!("each member of this list must be '*' or a DNS-1123 label; {why}");
                errs.push(field::invalid(&format!("{at}[{i}]"), &json!(ns), &detail));
            }
        }
    }
    errs
}

/// `ValidateFlowSchemaNonResourcePolicyRule`.
fn non_resource_rule_errors(rule: &Value, path: &str) -> Vec<StatusCause> {
    let mut errs = verbs_errors(rule, path);
    let urls = strings(&rule["nonResourceURLs"]);
    let at = format!("{path}.nonResourceURLs");
    let list = wildcard_list_errors(
        &urls,
        &at,
        "nonResourceURLs must contain at least one value",
        "non-resource URLs",
    );
    if !list.is_empty() {
        errs.extend(list);
        return errs;
    }
    if urls != ["*"] {
        for (i, url) in urls.iter().enumerate() {
            if let Some(why) = url_problem(url) {
                errs.push(field::invalid(&format!("{at}[{i}]"), &json!(url), why));
            }
        }
    }
    errs
}

/// `ValidateNonResourceURLPath`.
fn url_problem(url: &str) -> Option<&'static str> {
    if url.is_empty() {
        return Some("must not be empty");
    }
    if url == "/" {
        return None;
    }
    if !url.starts_with('/') {
        return Some("must start with slash");
    }
    if url.contains(' ') {
        return Some("must not contain white-space");
    }
    if url.contains("//") {
        return Some("must not contain double slash");
    }
    let stars = url.matches('*').count();
    if stars > 1 || (stars == 1 && !url.ends_with("/*")) {
        return Some("wildcard can only do suffix matching");
    }
    None
}

/// `ValidateFlowSchema`: the spec, and the mandatory objects' fixed spec.
fn flow_schema_errors(obj: &Value) -> Vec<StatusCause> {
    let mut errs = spec_errors(obj);
    let name = meta_str(obj, "name");
    if let Some(fixed) = mandatory_spec(true, name) {
        if go_internal_json(&obj["spec"], SPEC) != go_internal_json(fixed, SPEC) {
            let mut cause = field::invalid("spec", &Value::Null, "");
            cause.message = format!(
                "Invalid value: {}: spec of '{name}' must equal the fixed value",
                go_internal_json(&obj["spec"], SPEC)
            );
            errs.push(cause);
        }
    }
    errs
}

/// flowcontrol/v1 FlowSchema.
pub struct FlowSchemaStrategy;

impl Strategy for FlowSchemaStrategy {
    fn allow_unconditional_update(&self) -> bool {
        true
    }

    /// `matchingPrecedence` 0 is 1000.
    fn defaults(&self, obj: &mut Value) {
        if obj["spec"].is_object() && obj["spec"]["matchingPrecedence"].as_i64().unwrap_or(0) == 0 {
            obj["spec"]["matchingPrecedence"] = json!(1000);
        }
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        obj["status"] = json!({});
    }

    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        obj["status"] = old.get("status").cloned().unwrap_or(json!({}));
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        flow_schema_errors(obj)
    }

    fn after_commit(&self, _obj: &StoredObject) -> Vec<Work> {
        vec![Work::FlowSchemaStatus]
    }

    fn after_remove(&self, obj: &StoredObject) -> Vec<Work> {
        match is_bootstrap(true, meta_str(&obj.value(), "name")) {
            true => vec![Work::FlowControlBootstrap],
            false => Vec::new(),
        }
    }
}

/// `flowschemas/status`: conditions unique by type, each with a type.
pub struct StatusStrategy;

impl Strategy for StatusStrategy {
    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        keep_only_status(obj, old);
    }

    fn validate_update(&self, obj: &Value, _old: &Value) -> Vec<StatusCause> {
        condition_type_errors(obj)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::rendered as messages;
    use rstest::rstest;

    fn schema(spec: Value) -> Value {
        json!({"metadata": {"name": "mine"}, "spec": spec})
    }

    fn rule(extra: Value) -> Value {
        let mut rule = json!({"subjects": [{"kind": "Group", "group": {"name": "g"}}],
            "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/x"]}]});
        if let (Some(rule), Some(extra)) = (rule.as_object_mut(), extra.as_object()) {
            rule.extend(extra.clone());
        }
        rule
    }

    fn spec(rules: Value) -> Value {
        json!({"priorityLevelConfiguration": {"name": "global-default"}, "matchingPrecedence": 500, "rules": rules})
    }

    #[rstest]
    #[case(spec(json!([rule(json!({}))])), vec![])]
    #[case(json!({"priorityLevelConfiguration": {"name": ""}, "matchingPrecedence": 1}), vec![
        "spec.matchingPrecedence: Invalid value: 1: only the schema named 'exempt' may have matchingPrecedence 1",
        "spec.priorityLevelConfiguration.name: Required value: must reference a priority level"])]
    #[case(json!({"priorityLevelConfiguration": {"name": "p"}, "matchingPrecedence": 10001, "distinguisherMethod": {"type": "Foo"}}), vec![
        "spec.matchingPrecedence: Invalid value: 10001: must not be greater than 10000",
        "spec.distinguisherMethod.type: Unsupported value: {\"Type\":\"Foo\"}: supported values: \"ByNamespace\", \"ByUser\""])]
    #[case(spec(json!([{"subjects": [], "resourceRules": []}])), vec![
        "spec.rules[0].subjects: Required value: subjects must contain at least one value",
        "spec.rules[0]: Required value: at least one of resourceRules and nonResourceRules has to be non-empty"])]
    #[case(spec(json!([rule(json!({"subjects": [{"kind": "ServiceAccount", "user": {"name": "u"}}]}))])), vec![
        "spec.rules[0].subjects[0].serviceAccount: Required value: serviceAccount is required when subject kind is 'ServiceAccount'",
        "spec.rules[0].subjects[0].user: Forbidden: user is forbidden when subject kind is not 'User'"])]
    #[case(spec(json!([rule(json!({"subjects": [{"kind": "Bogus"}]}))])), vec![
        "spec.rules[0].subjects[0].kind: Unsupported value: \"Bogus\": supported values: \"Group\", \"ServiceAccount\", \"User\""])]
    #[case(spec(json!([rule(json!({"nonResourceRules": [{"verbs": ["fly", "get"], "nonResourceURLs": ["x", "/a/*/b"]}]}))])), vec![
        "spec.rules[0].nonResourceRules[0].verbs: Unsupported value: [\"fly\",\"get\"]: supported values: \"create\", \"delete\", \"deletecollection\", \"get\", \"list\", \"patch\", \"proxy\", \"update\", \"watch\"",
        "spec.rules[0].nonResourceRules[0].nonResourceURLs[0]: Invalid value: \"x\": must start with slash",
        "spec.rules[0].nonResourceRules[0].nonResourceURLs[1]: Invalid value: \"/a/*/b\": wildcard can only do suffix matching"])]
    #[case(spec(json!([rule(json!({"resourceRules": [{"verbs": ["*", "get"], "apiGroups": [], "resources": ["*", "pods"], "namespaces": ["Bad_NS"]}]}))])), vec![
        "spec.rules[0].resourceRules[0].verbs: Invalid value: [\"*\",\"get\"]: if '*' is present, must not specify other verbs",
        "spec.rules[0].resourceRules[0].apiGroups: Required value: resource rules must supply at least one api group",
        "spec.rules[0].resourceRules[0].resources: Invalid value: [\"*\",\"pods\"]: if '*' is present, must not specify other resources",
        "spec.rules[0].resourceRules[0].namespaces[0]: Invalid value: \"Bad_NS\": each member of this list must be '*' or a DNS-1123 label; a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"])]
    fn specs_as_the_apiserver_checks_them(#[case] spec: Value, #[case] want: Vec<&str>) {
        assert_eq!(messages(flow_schema_errors(&schema(spec))), want);
    }

    #[test]
    fn the_mandatory_specs_are_fixed() {
        let mut exempt = json!({"metadata": {"name": "exempt"},
            "spec": {"priorityLevelConfiguration": {"name": "exempt"}, "matchingPrecedence": 1}});
        assert_eq!(
            messages(flow_schema_errors(&exempt)),
            vec!["spec: Invalid value: {\"PriorityLevelConfiguration\":{\"Name\":\"exempt\"},\"MatchingPrecedence\":1,\"DistinguisherMethod\":null,\"Rules\":null}: spec of 'exempt' must equal the fixed value"]
        );
        exempt["spec"] = mandatory_spec(true, "exempt").cloned().unwrap_or_default();
        assert!(flow_schema_errors(&exempt).is_empty());
        for obj in super::super::bootstrap_schemas() {
            assert!(flow_schema_errors(&obj).is_empty(), "{obj}");
        }
    }
}
