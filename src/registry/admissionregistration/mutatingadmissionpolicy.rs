//! The admissionregistration/v1 MutatingAdmissionPolicy kind: CEL mutations (apply
//! configurations or JSON patches) of the create, update and connect requests its match
//! constraints select, with the failure policy defaulted to `Fail`, the match constraints'
//! defaults, and a required reinvocation policy. Validated as the apiserver validates it;
//! expressions are compiled but type-checked as `dyn` only. Applied by
//! [`crate::admission::mutating_policy`].

use std::sync::Arc;

use serde_json::{json, Value};

use super::{
    default_match_resources, failure_policy_errors, match_conditions_errors,
    match_constraints_errors, mutating_operations_errors, param_kind_cell, param_kind_errors,
    static_suffix_warnings, variables_errors, GROUP,
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
        "mutatingadmissionpolicies",
        Arc::new(PolicyStrategy),
    )
    .with(|r| {
        r.unsupported_field(generic_unsupported_field)
            .table(Columns::new(vec![
            Column::name(),
            Column::computed(
                "Mutations",
                "integer",
                0,
                "Mutation indicates the number of mutations rules defined in this configuration",
                |o| json!(o["spec"]["mutations"].as_array().map_or(0, Vec::len)),
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

/// One patch kind of a mutation: present when chosen, with an expression; absent otherwise.
fn patch_errors(m: &Value, path: &str, chosen: &str, other: &str, type_: &str) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let patch = &m[chosen];
    if !patch.is_object() {
        let msg = format!("must be specified when patchType is {type_}");
        errs.push(field::required(&format!("{path}.{chosen}"), &msg));
    } else if patch["expression"].as_str().unwrap_or("").trim().is_empty() {
        errs.push(field::required(&format!("{path}.{chosen}.expression"), ""));
    } else {
        let expression = patch["expression"].as_str().unwrap_or("");
        let at = format!("{path}.{chosen}.expression");
        errs.extend(super::expression_errors(expression, &at));
    }
    if m[other].is_object() {
        let msg = format!("must not be specified when patchType is {type_}");
        errs.push(field::invalid(
            &format!("{path}.{other}"),
            &json!(format!("{{{other}}}")),
            &msg,
        ));
    }
    errs
}

/// `validateMutation` without compiling.
fn mutation_errors(m: &Value, path: &str) -> Vec<StatusCause> {
    match m["patchType"].as_str().unwrap_or("") {
        "" => vec![field::required(&format!("{path}.patchType"), "")],
        "JSONPatch" => patch_errors(m, path, "jsonPatch", "applyConfiguration", "JSONPatch"),
        "ApplyConfiguration" => patch_errors(
            m,
            path,
            "applyConfiguration",
            "jsonPatch",
            "ApplyConfiguration",
        ),
        other => vec![field::not_supported(
            &format!("{path}.patchType"),
            &json!(other),
            &["ApplyConfiguration", "JSONPatch"],
        )],
    }
}

/// `validateMutatingAdmissionPolicySpec`.
fn policy_errors(spec: &Value, ignore_match_conditions: bool) -> Vec<StatusCause> {
    let mut errs = failure_policy_errors(spec);
    if spec["paramKind"].is_object() {
        errs.extend(param_kind_errors(&spec["paramKind"], "spec.paramKind"));
    }
    errs.extend(match_constraints_errors(spec));
    let mc = &spec["matchConstraints"];
    if mc.is_object() {
        errs.extend(mutating_operations_errors(mc, "spec.matchConstraints"));
    }
    if !ignore_match_conditions {
        errs.extend(match_conditions_errors(
            &spec["matchConditions"],
            "spec.matchConditions",
        ));
    }
    errs.extend(variables_errors(spec));
    let mutations = spec["mutations"].as_array().map_or(&[][..], Vec::as_slice);
    if mutations.is_empty() {
        let msg = "mutations must contain at least one item";
        errs.push(field::required("spec.mutations", msg));
    }
    for (i, m) in mutations.iter().enumerate() {
        errs.extend(mutation_errors(m, &format!("spec.mutations[{i}]")));
    }
    match spec["reinvocationPolicy"].as_str().unwrap_or("") {
        "" => errs.push(field::required("spec.reinvocationPolicy", "")),
        "Never" | "IfNeeded" => {}
        other => errs.push(field::not_supported(
            "spec.reinvocationPolicy",
            &json!(other),
            &["IfNeeded", "Never"],
        )),
    }
    errs
}

/// admissionregistration/v1 MutatingAdmissionPolicy.
pub struct PolicyStrategy;

impl Strategy for PolicyStrategy {
    fn defaults(&self, obj: &mut Value) {
        let Some(spec) = obj.get_mut("spec").filter(|s| s.is_object()) else {
            return;
        };
        if spec.get("failurePolicy").is_none_or(Value::is_null) {
            spec["failurePolicy"] = json!("Fail");
        }
        default_match_resources(spec.get_mut("matchConstraints"));
    }

    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        bump_generation(obj, old, true);
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        policy_errors(&obj["spec"], false)
    }

    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        let same = |k: &str| obj["spec"][k] == old["spec"][k];
        policy_errors(&obj["spec"], same("paramKind") && same("matchConditions"))
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
    fn mutations_and_operations() {
        let spec = json!({"failurePolicy": "Fail", "matchConstraints": {"matchPolicy": "Equivalent",
            "namespaceSelector": {}, "objectSelector": {}, "resourceRules": [{"apiGroups": [""],
            "apiVersions": ["v1"], "operations": ["CREATE", "DELETE"], "resources": ["pods"]}]},
            "mutations": [{"patchType": "JSONPatch", "applyConfiguration": {"expression": "x"}}]});
        let errs: Vec<String> = policy_errors(&spec, false)
            .iter()
            .map(|e| format!("{}: {}", e.field, e.message))
            .collect();
        assert_eq!(
            errs,
            [
                "spec.matchConstraints.resourceRules.operations: Unsupported value: \"DELETE\": supported values: \"*\", \"CONNECT\", \"CREATE\", \"UPDATE\"",
                "spec.mutations[0].jsonPatch: Required value: must be specified when patchType is JSONPatch",
                "spec.mutations[0].applyConfiguration: Invalid value: \"{applyConfiguration}\": must not be specified when patchType is JSONPatch",
                "spec.reinvocationPolicy: Required value",
            ]
        );
    }
}
