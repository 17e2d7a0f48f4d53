//! The admissionregistration/v1 ValidatingAdmissionPolicyBinding kind: binds a
//! ValidatingAdmissionPolicy to the resources it matches and to its parameters, with the
//! validation actions (Deny, Warn, Audit) to take. The match resources are defaulted as the
//! apiserver does. Whether the policy exists is not checked (nor is the binder's right to read
//! the parameters); the binding is not enforced yet.

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::{json, Value};

use super::{
    default_match_resources, match_resources_errors, param_ref_cell, param_ref_errors,
    policy_name_errors, static_suffix_warnings, GROUP,
};
use crate::error::{field, StatusCause};
use crate::registry::builtin;
use crate::registry::resource::ApiResource;
use crate::registry::strategy::{bump_generation, Strategy};
use crate::registry::table::{Column, Columns};
use crate::store::selector::generic_unsupported_field;

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind(
        GROUP,
        "v1",
        "validatingadmissionpolicybindings",
        Arc::new(BindingStrategy),
    )
    .with(|r| {
        r.unsupported_field(generic_unsupported_field)
            .table(binding_columns())
    })
    .build()
}

/// The Table of both binding kinds: Name, PolicyName, ParamRef, Age.
pub fn binding_columns() -> Columns {
    Columns::new(vec![
        Column::name(),
        Column::computed(
            "PolicyName",
            "string",
            0,
            "PolicyName indicates the policy definition which the policy binding binded to",
            |o| json!(o["spec"]["policyName"].as_str().unwrap_or("")),
        ),
        Column::computed(
            "ParamRef",
            "string",
            0,
            "ParamRef indicates the param resource which sets the configuration param",
            param_ref_cell,
        ),
        Column::age("string"),
    ])
}

/// `validateValidationActions`: known, unique, not both Deny and Warn, at least one.
fn actions_errors(actions: &Value) -> Vec<StatusCause> {
    let path = "spec.validationActions";
    let mut errs = Vec::new();
    let mut seen = HashSet::new();
    for (i, a) in actions.as_array().into_iter().flatten().enumerate() {
        let a = a.as_str().unwrap_or("");
        let p = format!("{path}[{i}]");
        if !matches!(a, "Deny" | "Warn" | "Audit") {
            errs.push(field::not_supported(
                &p,
                &json!(a),
                &["Audit", "Deny", "Warn"],
            ));
        }
        if !seen.insert(a) {
            errs.push(field::duplicate(&p, &json!(a)));
        }
    }
    if seen.contains("Deny") && seen.contains("Warn") {
        errs.push(field::invalid(
            path,
            actions,
            "must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)",
        ));
    }
    if seen.is_empty() {
        errs.push(field::required(
            path,
            "at least one validation action is required",
        ));
    }
    errs
}

/// The binding's defaults: those of its match resources.
pub fn binding_defaults(obj: &mut Value) {
    if let Some(spec) = obj.get_mut("spec") {
        default_match_resources(spec.get_mut("matchResources"));
    }
}

/// admissionregistration/v1 ValidatingAdmissionPolicyBinding.
pub struct BindingStrategy;

impl Strategy for BindingStrategy {
    fn defaults(&self, obj: &mut Value) {
        binding_defaults(obj);
    }

    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        bump_generation(obj, old, true);
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        let spec = &obj["spec"];
        let mut errs = policy_name_errors(spec);
        errs.extend(param_ref_errors(&spec["paramRef"], "spec.paramRef"));
        errs.extend(match_resources_errors(
            &spec["matchResources"],
            "spec.matchResources",
        ));
        errs.extend(actions_errors(&spec["validationActions"]));
        errs
    }

    fn warnings_on_create(&self, obj: &Value) -> Vec<String> {
        static_suffix_warnings(obj)
    }

    fn warnings_on_update(&self, obj: &Value, _old: &Value) -> Vec<String> {
        static_suffix_warnings(obj)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actions() {
        let errs: Vec<String> = actions_errors(&json!(["Deny", "Warn", "Deny", "Shout"]))
            .iter()
            .map(|e| format!("{}: {}", e.field, e.message))
            .collect();
        assert_eq!(
            errs,
            [
                "spec.validationActions[2]: Duplicate value: \"Deny\"",
                "spec.validationActions[3]: Unsupported value: \"Shout\": supported values: \"Audit\", \"Deny\", \"Warn\"",
                "spec.validationActions: Invalid value: [\"Deny\",\"Warn\",\"Deny\",\"Shout\"]: must not contain both Deny and Warn (repeating the same validation failure information in the API response and headers serves no purpose)",
            ]
        );
        let mut b = json!({"spec": {"policyName": "p", "validationActions": ["Deny"],
            "matchResources": {"resourceRules": [{"operations": ["*"], "apiGroups": ["*"],
                "apiVersions": ["*"], "resources": ["*"]}]}}});
        BindingStrategy.defaults(&mut b);
        assert_eq!(b["spec"]["matchResources"]["matchPolicy"], "Equivalent");
        assert!(BindingStrategy.validate(&b).is_empty());
        assert_eq!(
            BindingStrategy.validate(&json!({"spec": {"validationActions": ["Audit"]}}))[0].message,
            "Required value"
        );
    }
}
