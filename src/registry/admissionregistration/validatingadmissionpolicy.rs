//! The admissionregistration/v1 ValidatingAdmissionPolicy kind (+status): CEL validations and
//! audit annotations over the requests its match constraints select, with the failure policy
//! defaulted to `Fail` and the match constraints' defaults. Validated as the apiserver
//! validates it; expressions are compiled and checked as `dyn` when written, and type-checked
//! against the kinds the policy names by [`crate::controllers::policy_status`], which writes
//! `status.typeChecking`. Enforced by [`crate::admission::policy`].

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::{json, Value};

use super::{
    default_match_resources, failure_policy_errors, match_conditions_errors,
    match_constraints_errors, param_kind_cell, param_kind_errors, static_suffix_warnings,
    variables_errors, GROUP,
};
use crate::error::{field, StatusCause};
use crate::registry::builtin;
use crate::registry::resource::ApiResource;
use crate::registry::strategy::{bump_generation, keep_only_status, Strategy};
use crate::registry::table::{Column, Columns};
use crate::registry::validation::{conditions_errors, invalid_each, qualified_name_messages};
use crate::store::selector::generic_unsupported_field;

/// The most audit annotations a policy may have.
const MAX_AUDIT_ANNOTATIONS: usize = 20;
/// The longest audit annotation value expression.
const MAX_VALUE_EXPRESSION: usize = 5 * 1024;

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind(GROUP, "v1", "validatingadmissionpolicies", Arc::new(PolicyStrategy))
        .part("status", Arc::new(PolicyStatusStrategy))
        .with(|r| {
            r.unsupported_field(generic_unsupported_field)
                .table(Columns::new(vec![
                    Column::name(),
                    Column::computed(
                        "Validations",
                        "integer",
                        0,
                        "Validations indicates the number of validation rules defined in this configuration",
                        |o| json!(o["spec"]["validations"].as_array().map_or(0, Vec::len)),
                    ),
                    Column::computed(
                        "ParamKind",
                        "string",
                        0,
                        "ParamKind specifies the kind of resources used to parameterize this policy",
                        param_kind_cell,
                    ),
                    Column::age("string"),
                ]))
        })
        .build()
}

/// `validateValidation`: an expression that compiles, a one-line message, a known reason.
fn validation_errors(v: &Value, path: &str) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let expression = v["expression"].as_str().unwrap_or("");
    if expression.trim().is_empty() {
        let msg = "expression is not specified";
        errs.push(field::required(&format!("{path}.expression"), msg));
    }
    errs.extend(super::expression_errors(
        expression,
        &format!("{path}.expression"),
    ));
    let message_expression = v["messageExpression"].as_str().unwrap_or("");
    errs.extend(super::expression_errors(
        message_expression,
        &format!("{path}.messageExpression"),
    ));
    if !message_expression.is_empty() && message_expression.trim().is_empty() {
        let p = format!("{path}.messageExpression");
        let msg = "must be non-empty if specified";
        errs.push(field::invalid(&p, &json!(message_expression), msg));
    }
    let message = v["message"].as_str().unwrap_or("");
    let p = format!("{path}.message");
    if !message.is_empty() && message.trim().is_empty() {
        errs.push(field::invalid(
            &p,
            &json!(message),
            "must be non-empty if specified",
        ));
    } else if message.trim().contains(['\n', '\r']) {
        errs.push(field::invalid(
            &p,
            &json!(message),
            "must not contain line breaks",
        ));
    }
    if let Some(reason) = v["reason"].as_str() {
        let supported = ["Forbidden", "Invalid", "RequestEntityTooLarge"];
        if !supported.contains(&reason) {
            let p = format!("{path}.reason");
            errs.push(field::not_supported(&p, &json!(reason), &supported));
        }
    }
    errs
}

/// `validateAuditAnnotation` without compiling, and unique keys.
fn audit_annotations_errors(obj: &Value) -> Vec<StatusCause> {
    let spec = &obj["spec"];
    let list = spec["auditAnnotations"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    let mut errs = Vec::new();
    if list.len() > MAX_AUDIT_ANNOTATIONS {
        let msg = format!("must not have more than {MAX_AUDIT_ANNOTATIONS} auditAnnotations");
        errs.push(field::invalid(
            "spec.auditAnnotations",
            &spec["auditAnnotations"],
            &msg,
        ));
    }
    let name = obj["metadata"]["name"].as_str().unwrap_or("");
    let mut keys = HashSet::new();
    for (i, a) in list.iter().enumerate() {
        let path = format!("spec.auditAnnotations[{i}]");
        let key = a["key"].as_str().unwrap_or("");
        let key_path = format!("{path}.key");
        if name.is_empty() {
            let msg = "requires metadata.name be non-empty";
            errs.push(field::invalid(&key_path, &json!(key), msg));
        } else {
            let full = format!("{name}/{key}");
            errs.extend(invalid_each(
                &key_path,
                &json!(full),
                qualified_name_messages(&full),
            ));
        }
        let value = a["valueExpression"].as_str().unwrap_or("").trim();
        let value_path = format!("{path}.valueExpression");
        if value.is_empty() {
            errs.push(field::required(
                &value_path,
                "valueExpression is not specified",
            ));
        } else if value.len() > MAX_VALUE_EXPRESSION {
            let msg = format!("must not exceed {MAX_VALUE_EXPRESSION} bytes in length");
            errs.push(field::required(&value_path, &msg));
        } else {
            let raw = a["valueExpression"].as_str().unwrap_or("");
            errs.extend(super::expression_errors(raw, &value_path));
        }
        if !keys.insert(key) {
            errs.push(field::duplicate(&key_path, &json!(key)));
        }
    }
    errs
}

/// `validateValidatingAdmissionPolicySpec`; match conditions are skipped when an update
/// leaves them (and the parameter kind) as they were.
fn policy_errors(obj: &Value, ignore_match_conditions: bool) -> Vec<StatusCause> {
    let spec = &obj["spec"];
    let mut errs = failure_policy_errors(spec);
    if spec["paramKind"].is_object() {
        errs.extend(param_kind_errors(&spec["paramKind"], "spec.paramKind"));
    }
    errs.extend(match_constraints_errors(spec));
    if !ignore_match_conditions {
        errs.extend(match_conditions_errors(
            &spec["matchConditions"],
            "spec.matchConditions",
        ));
    }
    errs.extend(variables_errors(spec));
    let validations = spec["validations"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    let audits = spec["auditAnnotations"].as_array().map_or(0, Vec::len);
    if validations.is_empty() && audits == 0 {
        let msg = "validations or auditAnnotations must contain at least one item";
        errs.push(field::required("spec.validations", msg));
        errs.push(field::required("spec.auditAnnotations", msg));
        return errs;
    }
    for (i, v) in validations.iter().enumerate() {
        errs.extend(validation_errors(v, &format!("spec.validations[{i}]")));
    }
    errs.extend(audit_annotations_errors(obj));
    errs
}

/// admissionregistration/v1 ValidatingAdmissionPolicy.
pub struct PolicyStrategy;

impl Strategy for PolicyStrategy {
    fn after_commit(&self, obj: &crate::store::StoredObject) -> Vec<crate::controllers::Work> {
        let tree = obj.value();
        let name = crate::registry::object_meta::meta_str(&tree, "name");
        vec![crate::controllers::Work::PolicyStatus(name.to_string())]
    }

    fn defaults(&self, obj: &mut Value) {
        let Some(spec) = obj.get_mut("spec").filter(|s| s.is_object()) else {
            return;
        };
        if spec.get("failurePolicy").is_none_or(Value::is_null) {
            spec["failurePolicy"] = json!("Fail");
        }
        default_match_resources(spec.get_mut("matchConstraints"));
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        obj["status"] = json!({});
    }

    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        obj["status"] = old.get("status").cloned().unwrap_or_else(|| json!({}));
        bump_generation(obj, old, true);
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        policy_errors(obj, false)
    }

    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        let same = |k: &str| obj["spec"][k] == old["spec"][k];
        policy_errors(obj, same("paramKind") && same("matchConditions"))
    }

    fn warnings_on_create(&self, obj: &Value) -> Vec<String> {
        static_suffix_warnings(obj)
    }

    fn warnings_on_update(&self, obj: &Value, _old: &Value) -> Vec<String> {
        static_suffix_warnings(obj)
    }
}

/// `validatingadmissionpolicies/status`: only the status changes; its conditions and
/// type-checking warnings are checked.
pub struct PolicyStatusStrategy;

impl Strategy for PolicyStatusStrategy {
    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        keep_only_status(obj, old);
    }

    fn validate_update(&self, obj: &Value, _old: &Value) -> Vec<StatusCause> {
        let status = &obj["status"];
        let mut errs = Vec::new();
        let warnings = status["typeChecking"]["expressionWarnings"].as_array();
        for (i, w) in warnings.into_iter().flatten().enumerate() {
            let path = format!("status.typeChecking.expressionWarnings[{i}]");
            if w["warning"].as_str().unwrap_or("").is_empty() {
                errs.push(field::required(&format!("{path}.warning"), ""));
            }
            if w["fieldRef"].as_str().unwrap_or("").trim().is_empty() {
                errs.push(field::required(&format!("{path}.fieldRef"), ""));
            }
        }
        errs.extend(conditions_errors(
            &status["conditions"],
            "status.conditions",
        ));
        errs
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::rendered as messages;

    #[test]
    fn defaults_and_validation() {
        let mut p = json!({"metadata": {"name": "demo"}, "spec": {"matchConstraints": {
            "resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE"],
                "resources": ["deployments"]}]},
            "validations": [{"expression": "object.spec.replicas <= 5"}]}});
        PolicyStrategy.defaults(&mut p);
        assert_eq!(p["spec"]["failurePolicy"], "Fail");
        assert_eq!(p["spec"]["matchConstraints"]["matchPolicy"], "Equivalent");
        assert_eq!(p["spec"]["matchConstraints"]["objectSelector"], json!({}));
        assert_eq!(
            p["spec"]["matchConstraints"]["resourceRules"][0]["scope"],
            "*"
        );
        assert!(PolicyStrategy.validate(&p).is_empty());

        let bad = json!({"metadata": {"name": "demo"}, "spec": {"failurePolicy": "Fail",
            "validations": [{"expression": " ", "message": "a\nb", "reason": "Teapot"}],
            "variables": [{"name": "in", "expression": "1"}]}});
        assert_eq!(
            messages(PolicyStrategy.validate(&bad)),
            [
                "spec.matchConstraints: Required value",
                "spec.variables[0].name: Invalid value: \"in\": must be a valid CEL identifier",
                "spec.validations[0].expression: Required value: expression is not specified",
                "spec.validations[0].message: Invalid value: \"a\\nb\": must not contain line breaks",
                "spec.validations[0].reason: Unsupported value: \"Teapot\": supported values: \"Forbidden\", \"Invalid\", \"RequestEntityTooLarge\"",
            ]
        );
        let empty = json!({"spec": {"failurePolicy": "Ignore", "matchConstraints": {"matchPolicy": "Exact",
            "namespaceSelector": {}, "objectSelector": {}}}});
        assert_eq!(
            messages(PolicyStrategy.validate(&empty)),
            [
                "spec.matchConstraints.resourceRules: Required value",
                "spec.validations: Required value: validations or auditAnnotations must contain at least one item",
                "spec.auditAnnotations: Required value: validations or auditAnnotations must contain at least one item",
            ]
        );
    }
}
