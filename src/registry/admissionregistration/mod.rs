//! Kinds of `admissionregistration.k8s.io`: webhook configurations and admission policies
//! with their bindings, stored, defaulted and validated as the apiserver does it, CEL
//! expressions compiled when written ([`expression_errors`]). They are enforced by
//! [`crate::admission`]; `status.typeChecking` is written by
//! [`crate::controllers::policy_status`].
//!
//! What the kinds share lives here: rules with operations, match resources, match conditions,
//! parameter kinds and references, their defaults and Table cells.

pub mod mutatingadmissionpolicy;
pub mod mutatingadmissionpolicybinding;
pub mod mutatingwebhookconfiguration;
pub mod validatingadmissionpolicy;
pub mod validatingadmissionpolicybinding;
pub mod validatingwebhookconfiguration;
pub mod webhook;

use std::collections::HashSet;

use serde_json::{json, Value};

use crate::error::{field, StatusCause};
use crate::registry::object_meta::path_segment_errors;
use crate::registry::validation::{
    dns1035_label_errors, dns1123_subdomain_errors, invalid_each, label_selector_errors,
    qualified_name_messages,
};

/// The group.
pub const GROUP: &str = "admissionregistration.k8s.io";

/// The name suffix reserved for manifest-based configurations.
const STATIC_SUFFIX: &str = ".static.k8s.io";

/// `WarningsForStaticSuffix`: names with the reserved suffix are accepted with a warning (the
/// ManifestBasedAdmissionControlConfig gate, off in 1.36, would refuse them).
pub fn static_suffix_warnings(obj: &Value) -> Vec<String> {
    let name = obj["metadata"]["name"].as_str().unwrap_or("");
    if name.ends_with(STATIC_SUFFIX) {
        vec![format!("metadata.name: names ending with {STATIC_SUFFIX:?} are reserved for static manifest-based configurations and cannot be managed via the API")]
    } else {
        Vec::new()
    }
}

fn strings(v: &Value) -> Vec<&str> {
    v.as_array()
        .into_iter()
        .flatten()
        .map(|s| s.as_str().unwrap_or(""))
        .collect()
}

/// `validateResources`: resources and `resource/subresource` pairs, with wildcards that do
/// not overlap.
fn resources_errors(list: &Value, path: &str) -> Vec<StatusCause> {
    let resources = strings(list);
    let mut errs = Vec::new();
    if resources.is_empty() {
        errs.push(field::required(path, ""));
    }
    let (mut wild_sub, mut wild_res) = (HashSet::new(), HashSet::new());
    let (mut double, mut single, mut plain) = (false, false, false);
    for (i, r) in resources.iter().enumerate() {
        let p = format!("{path}[{i}]");
        if r.is_empty() {
            errs.push(field::required(&p, ""));
            continue;
        }
        double |= *r == "*/*";
        single |= *r == "*";
        let Some((res, sub)) = r.split_once('/') else {
            plain = *r != "*";
            continue;
        };
        if wild_sub.contains(res) {
            let msg = format!("if '{res}/*' is present, must not specify {r}");
            errs.push(field::invalid(&p, &json!(r), &msg));
        }
        if wild_res.contains(sub) {
            let msg = format!("if '*/{sub}' is present, must not specify {r}");
            errs.push(field::invalid(&p, &json!(r), &msg));
        }
        if sub == "*" {
            wild_sub.insert(res);
        }
        if res == "*" {
            wild_res.insert(sub);
        }
    }
    if resources.len() > 1 && double {
        let msg = "if '*/*' is present, must not specify other resources";
        errs.push(field::invalid(path, list, msg));
    }
    if single && plain {
        let msg = "if '*' is present, must not specify other resources without subresources";
        errs.push(field::invalid(path, list, msg));
    }
    errs
}

/// A list that must not be empty, and may hold `*` only alone (`what`: "API groups").
fn wildcard_list_errors(list: &Value, path: &str, what: &str) -> Vec<StatusCause> {
    let items = strings(list);
    let mut errs = Vec::new();
    if items.is_empty() {
        errs.push(field::required(path, ""));
    }
    if items.len() > 1 && items.contains(&"*") {
        let msg = format!("if '*' is present, must not specify other {what}");
        errs.push(field::invalid(path, list, &msg));
    }
    errs
}

/// `validateRuleWithOperations` (subresources allowed).
pub fn rule_errors(rule: &Value, path: &str) -> Vec<StatusCause> {
    let mut errs = wildcard_list_errors(
        &rule["operations"],
        &format!("{path}.operations"),
        "operations",
    );
    for (i, op) in strings(&rule["operations"]).iter().enumerate() {
        if !matches!(*op, "*" | "CREATE" | "UPDATE" | "DELETE" | "CONNECT") {
            errs.push(field::not_supported(
                &format!("{path}.operations[{i}]"),
                &json!(op),
                &["*", "CONNECT", "CREATE", "DELETE", "UPDATE"],
            ));
        }
    }
    errs.extend(wildcard_list_errors(
        &rule["apiGroups"],
        &format!("{path}.apiGroups"),
        "API groups",
    ));
    let versions_path = format!("{path}.apiVersions");
    errs.extend(wildcard_list_errors(
        &rule["apiVersions"],
        &versions_path,
        "API versions",
    ));
    for (i, v) in strings(&rule["apiVersions"]).iter().enumerate() {
        if v.is_empty() {
            errs.push(field::required(&format!("{versions_path}[{i}]"), ""));
        }
    }
    errs.extend(resources_errors(
        &rule["resources"],
        &format!("{path}.resources"),
    ));
    if let Some(scope) = rule["scope"].as_str() {
        if !matches!(scope, "*" | "Cluster" | "Namespaced") {
            let supported = ["*", "Cluster", "Namespaced"];
            errs.push(field::not_supported(
                &format!("{path}.scope"),
                &json!(scope),
                &supported,
            ));
        }
    }
    errs
}

/// `validateNamedRuleWithOperations`: unique path-segment resource names, then the rule.
fn named_rule_errors(rule: &Value, path: &str) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let mut seen = HashSet::new();
    for (i, name) in strings(&rule["resourceNames"]).iter().enumerate() {
        let p = format!("{path}.resourceNames[{i}]");
        errs.extend(invalid_each(&p, &json!(name), path_segment_errors(name)));
        if !seen.insert(*name) {
            errs.push(field::duplicate(&p, &json!(name)));
        }
    }
    errs.extend(rule_errors(rule, path));
    errs
}

/// `validateMatchResources` (selectors strict, as for every policy type).
pub fn match_resources_errors(mr: &Value, path: &str) -> Vec<StatusCause> {
    if !mr.is_object() {
        return Vec::new();
    }
    let mut errs = Vec::new();
    match mr["matchPolicy"].as_str() {
        None => errs.push(field::required(&format!("{path}.matchPolicy"), "")),
        Some("Exact") | Some("Equivalent") => {}
        Some(other) => errs.push(field::not_supported(
            &format!("{path}.matchPolicy"),
            &json!(other),
            &["Equivalent", "Exact"],
        )),
    }
    for key in ["namespaceSelector", "objectSelector"] {
        let p = format!("{path}.{key}");
        if mr[key].is_object() {
            errs.extend(label_selector_errors(&mr[key], &p, false));
        } else {
            errs.push(field::required(&p, ""));
        }
    }
    for key in ["resourceRules", "excludeResourceRules"] {
        let rules = mr[key].as_array().into_iter().flatten();
        for (i, rule) in rules.enumerate() {
            errs.extend(named_rule_errors(rule, &format!("{path}.{key}[{i}]")));
        }
    }
    errs
}

/// `validateMatchConditions` without compiling the expressions: at most 64, unique qualified
/// names, expressions present.
pub fn match_conditions_errors(conditions: &Value, path: &str) -> Vec<StatusCause> {
    let list = conditions.as_array().map_or(&[][..], Vec::as_slice);
    let mut errs = Vec::new();
    if list.len() > 64 {
        errs.push(StatusCause {
            reason: "FieldValueTooMany".into(),
            message: format!("Too many: {}: must have at most 64 items", list.len()),
            field: path.to_string(),
        });
    }
    let mut names = HashSet::new();
    for (i, c) in list.iter().enumerate() {
        let p = format!("{path}[{i}]");
        let expression = c["expression"].as_str().unwrap_or("");
        if expression.trim().is_empty() {
            errs.push(field::required(&format!("{p}.expression"), ""));
        }
        errs.extend(expression_errors(expression, &format!("{p}.expression")));
        let name = c["name"].as_str().unwrap_or("");
        if name.is_empty() {
            errs.push(field::required(&format!("{p}.name"), ""));
        } else {
            let msgs = qualified_name_messages(name);
            errs.extend(invalid_each(&format!("{p}.name"), &json!(name), msgs));
            if !names.insert(name) {
                errs.push(field::duplicate(&format!("{p}.name"), &json!(name)));
            }
        }
    }
    errs
}

/// `validateParamKind`: a group-version and a kind.
pub fn param_kind_errors(pk: &Value, path: &str) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let av_path = format!("{path}.apiVersion");
    let api_version = pk["apiVersion"].as_str().unwrap_or("");
    if api_version.is_empty() {
        errs.push(field::required(&av_path, ""));
    } else if api_version.matches('/').count() > 1 {
        let msg = format!("unexpected GroupVersion string: {api_version}");
        errs.push(field::invalid(&av_path, &json!(api_version), &msg));
    } else {
        let (group, version) = match api_version.split_once('/') {
            _ if api_version == "/" => ("", ""),
            Some((g, v)) => (g, v),
            None => ("", api_version),
        };
        let group_errs = if group.is_empty() {
            Vec::new()
        } else {
            dns1123_subdomain_errors(group)
        };
        if !group_errs.is_empty() {
            errs.push(field::invalid(
                &av_path,
                &json!(group),
                &group_errs.join(","),
            ));
        }
        if version.is_empty() {
            let msg = "version must be specified";
            errs.push(field::invalid(&av_path, &json!(api_version), msg));
        } else {
            let version_errs = dns1035_label_errors(version);
            if !version_errs.is_empty() {
                errs.push(field::invalid(
                    &av_path,
                    &json!(version),
                    &version_errs.join(","),
                ));
            }
        }
    }
    let kind = pk["kind"].as_str().unwrap_or("");
    if kind.is_empty() {
        errs.push(field::required(&format!("{path}.kind"), ""));
    } else {
        let kind_errs = dns1035_label_errors(&kind.to_lowercase());
        if !kind_errs.is_empty() {
            let msg = format!(
                "may have mixed case, but should otherwise match: {}",
                kind_errs.join(",")
            );
            errs.push(field::invalid(&format!("{path}.kind"), &json!(kind), &msg));
        }
    }
    errs
}

/// `validateParamRef`: a name or a selector, and what to do when no parameter is found.
pub fn param_ref_errors(pr: &Value, path: &str) -> Vec<StatusCause> {
    if !pr.is_object() {
        return Vec::new();
    }
    let mut errs = Vec::new();
    let name = pr["name"].as_str().unwrap_or("");
    let selector = &pr["selector"];
    let exclusive = "name and selector are mutually exclusive";
    if !name.is_empty() {
        let p = format!("{path}.name");
        errs.extend(invalid_each(&p, &json!(name), path_segment_errors(name)));
        if selector.is_object() {
            errs.push(field::forbidden(&p, exclusive));
        }
    }
    if selector.is_object() {
        let p = format!("{path}.selector");
        errs.extend(label_selector_errors(selector, &p, false));
        if !name.is_empty() {
            errs.push(field::forbidden(&p, exclusive));
        }
    }
    if name.is_empty() && !selector.is_object() {
        errs.push(field::required(
            path,
            "one of name or selector must be specified",
        ));
    }
    let action_path = format!("{path}.parameterNotFoundAction");
    match pr["parameterNotFoundAction"].as_str().unwrap_or("") {
        "" => errs.push(field::required(&action_path, "")),
        "Deny" | "Allow" => {}
        other => errs.push(field::not_supported(
            &action_path,
            &json!(other),
            &["Deny", "Allow"],
        )),
    }
    errs
}

/// `SetDefaults_Rule` for every rule of a list.
pub fn default_rule_scopes(rules: Option<&mut Value>) {
    let rules = rules.and_then(Value::as_array_mut).into_iter().flatten();
    for rule in rules.filter_map(Value::as_object_mut) {
        if rule.get("scope").is_none_or(Value::is_null) {
            rule.insert("scope".into(), json!("*"));
        }
    }
}

/// `SetDefaults_MatchResources` and the scopes of its rules.
pub fn default_match_resources(mr: Option<&mut Value>) {
    let Some(mr) = mr.filter(|m| m.is_object()) else {
        return;
    };
    if mr.get("matchPolicy").is_none_or(Value::is_null) {
        mr["matchPolicy"] = json!("Equivalent");
    }
    for key in ["namespaceSelector", "objectSelector"] {
        if mr.get(key).is_none_or(Value::is_null) {
            mr[key] = json!({});
        }
    }
    default_rule_scopes(mr.get_mut("resourceRules"));
    default_rule_scopes(mr.get_mut("excludeResourceRules"));
}

/// `LabelSelector.String()` (Go's generated form), for the bindings' ParamRef column.
fn go_selector_string(s: &Value) -> String {
    let labels: Vec<String> = s["matchLabels"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| format!("{k}: {},", v.as_str().unwrap_or("")))
        .collect();
    let exprs: Vec<String> = s["matchExpressions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|e| {
            format!(
                "LabelSelectorRequirement{{Key:{},Operator:{},Values:[{}],}},",
                e["key"].as_str().unwrap_or(""),
                e["operator"].as_str().unwrap_or(""),
                strings(&e["values"]).join(" ")
            )
        })
        .collect();
    format!(
        "&LabelSelector{{MatchLabels:map[string]string{{{}}},MatchExpressions:[]LabelSelectorRequirement{{{}}},}}",
        labels.concat(),
        exprs.concat()
    )
}

/// A binding's ParamRef cell: `namespace/name`, `*/name`, the selector, or `<unset>`.
pub fn param_ref_cell(obj: &Value) -> Value {
    let pr = &obj["spec"]["paramRef"];
    let name = pr["name"].as_str().unwrap_or("");
    let text = if !pr.is_object() {
        "<unset>".to_string()
    } else if !name.is_empty() {
        match pr["namespace"].as_str().unwrap_or("") {
            "" => format!("*/{name}"),
            ns => format!("{ns}/{name}"),
        }
    } else if pr["selector"].is_object() {
        go_selector_string(&pr["selector"])
    } else {
        "<unset>".to_string()
    };
    json!(text)
}

/// A policy's ParamKind cell: `apiVersion/kind`, or `<unset>`.
pub fn param_kind_cell(obj: &Value) -> Value {
    let pk = &obj["spec"]["paramKind"];
    if !pk.is_object() {
        return json!("<unset>");
    }
    json!(format!(
        "{}/{}",
        pk["apiVersion"].as_str().unwrap_or(""),
        pk["kind"].as_str().unwrap_or("")
    ))
}

/// `policyName`: required, a DNS subdomain.
pub fn policy_name_errors(spec: &Value) -> Vec<StatusCause> {
    match spec["policyName"].as_str().unwrap_or("") {
        "" => vec![field::required("spec.policyName", "")],
        name => invalid_each(
            "spec.policyName",
            &json!(name),
            dns1123_subdomain_errors(name),
        ),
    }
}

/// A mutating policy's or binding's rules name only operations that can mutate.
pub fn mutating_operations_errors(mr: &Value, path: &str) -> Vec<StatusCause> {
    let rules = mr["resourceRules"].as_array().into_iter().flatten();
    let ops = rules.flat_map(|r| {
        strings(&r["operations"])
            .into_iter()
            .map(str::to_string)
            .collect::<Vec<_>>()
    });
    ops.filter(|op| !matches!(op.as_str(), "*" | "CREATE" | "UPDATE" | "CONNECT"))
        .map(|op| {
            field::not_supported(
                &format!("{path}.resourceRules.operations"),
                &json!(op),
                &["*", "CONNECT", "CREATE", "UPDATE"],
            )
        })
        .collect()
}

/// Whether a CEL variable name is an identifier and not a reserved word.
pub fn is_cel_identifier(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
        && !crate::cel::is_reserved(name)
}

/// Every variable an admission expression may name when it is written (`authorizer` is
/// declared so that expressions using it are accepted, as the apiserver accepts them).
const EXPRESSION_VARS: [&str; 7] = [
    "object",
    "oldObject",
    "request",
    "params",
    "namespaceObject",
    "variables",
    "authorizer",
];

/// Admission expressions checked when written, compiled once per source.
static WRITTEN: std::sync::LazyLock<crate::cel::ExpressionCache> = std::sync::LazyLock::new(|| {
    let mut env = crate::cel::TypeEnv::new(&EXPRESSION_VARS);
    env.admission_request("request")
        .admission_namespace("namespaceObject");
    crate::cel::ExpressionCache::typed(env)
});

/// `validateCELCondition`: an expression that does not compile is invalid, with cel-go's
/// message (`compilation failed: ERROR: <input>:1:9: ...`). `request`, `namespaceObject` and
/// `authorizer` are typed as the apiserver declares them; `object`, `oldObject`, `params` and `variables` are
/// `dyn` (the status controller checks them against the matched kinds).
pub fn expression_errors(expression: &str, path: &str) -> Vec<StatusCause> {
    if expression.trim().is_empty() {
        return Vec::new();
    }
    match WRITTEN.get(expression) {
        Ok(_) => Vec::new(),
        Err(e) => vec![field::invalid(
            path,
            &json!(expression),
            &format!("compilation failed: {e}"),
        )],
    }
}

/// `validateVariable`: a CEL identifier and an expression that compiles.
pub fn variables_errors(spec: &Value) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let vars = spec["variables"].as_array().into_iter().flatten();
    for (i, v) in vars.enumerate() {
        let p = format!("spec.variables[{i}]");
        let name = v["name"].as_str().unwrap_or("");
        if name.trim().is_empty() {
            errs.push(field::required(
                &format!("{p}.name"),
                "name is not specified",
            ));
        } else if !is_cel_identifier(name) {
            let msg = "must be a valid CEL identifier";
            errs.push(field::invalid(&format!("{p}.name"), &json!(name), msg));
        }
        let expression = v["expression"].as_str().unwrap_or("");
        if expression.trim().is_empty() {
            let msg = "expression is not specified";
            errs.push(field::required(&format!("{p}.expression"), msg));
        }
        errs.extend(expression_errors(expression, &format!("{p}.expression")));
    }
    errs
}

/// A policy's `failurePolicy` (defaulted to `Fail`).
pub fn failure_policy_errors(spec: &Value) -> Vec<StatusCause> {
    match spec["failurePolicy"].as_str() {
        None => vec![field::required("spec.failurePolicy", "")],
        Some("Fail") | Some("Ignore") => Vec::new(),
        Some(other) => vec![field::not_supported(
            "spec.failurePolicy",
            &json!(other),
            &["Fail", "Ignore"],
        )],
    }
}

/// A policy's `matchConstraints`: required, with at least one resource rule.
pub fn match_constraints_errors(spec: &Value) -> Vec<StatusCause> {
    let mc = &spec["matchConstraints"];
    if !mc.is_object() {
        return vec![field::required("spec.matchConstraints", "")];
    }
    let mut errs = match_resources_errors(mc, "spec.matchConstraints");
    if mc["resourceRules"].as_array().is_none_or(Vec::is_empty) {
        errs.push(field::required("spec.matchConstraints.resourceRules", ""));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::rendered as messages;

    #[test]
    fn rules_with_operations() {
        let rule = json!({"operations": ["*", "PATCH"], "apiGroups": [], "apiVersions": ["v1", ""],
            "resources": ["pods/*", "pods/status", "*"], "scope": "Everywhere"});
        assert_eq!(
            messages(rule_errors(&rule, "r")),
            [
                "r.operations: Invalid value: [\"*\",\"PATCH\"]: if '*' is present, must not specify other operations",
                "r.operations[1]: Unsupported value: \"PATCH\": supported values: \"*\", \"CONNECT\", \"CREATE\", \"DELETE\", \"UPDATE\"",
                "r.apiGroups: Required value",
                "r.apiVersions[1]: Required value",
                "r.resources[1]: Invalid value: \"pods/status\": if 'pods/*' is present, must not specify pods/status",
                "r.scope: Unsupported value: \"Everywhere\": supported values: \"*\", \"Cluster\", \"Namespaced\"",
            ]
        );
    }

    #[test]
    fn param_kinds_and_refs() {
        let pk = json!({"apiVersion": "a/b/c", "kind": "Config_Map"});
        assert_eq!(
            messages(param_kind_errors(&pk, "spec.paramKind")),
            [
                "spec.paramKind.apiVersion: Invalid value: \"a/b/c\": unexpected GroupVersion string: a/b/c",
                "spec.paramKind.kind: Invalid value: \"Config_Map\": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
            ]
        );
        let pr = json!({"name": "n", "selector": {}, "parameterNotFoundAction": "Maybe"});
        assert_eq!(
            messages(param_ref_errors(&pr, "spec.paramRef")),
            [
                "spec.paramRef.name: Forbidden: name and selector are mutually exclusive",
                "spec.paramRef.selector: Forbidden: name and selector are mutually exclusive",
                "spec.paramRef.parameterNotFoundAction: Unsupported value: \"Maybe\": supported values: \"Deny\", \"Allow\"",
            ]
        );
        let binding = json!({"spec": {"paramRef": {"selector": {"matchLabels": {"env": "test"}}}}});
        assert_eq!(
            param_ref_cell(&binding),
            "&LabelSelector{MatchLabels:map[string]string{env: test,},MatchExpressions:[]LabelSelectorRequirement{},}"
        );
        assert_eq!(
            param_ref_cell(&json!({"spec": {"paramRef": {"name": "p"}}})),
            "*/p"
        );
        assert!(is_cel_identifier("_x1") && !is_cel_identifier("in") && !is_cel_identifier("1x"));
    }
}
