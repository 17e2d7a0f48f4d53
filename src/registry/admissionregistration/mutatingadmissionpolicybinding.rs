//! The admissionregistration/v1 MutatingAdmissionPolicyBinding kind: binds a
//! MutatingAdmissionPolicy to the resources it matches (create, update and connect requests
//! only) and to its parameters. The match resources are defaulted as the apiserver does.
//! Whether the policy exists is not checked (nor is the binder's right to read the
//! parameters); the binding is not applied yet.

use std::sync::Arc;

use serde_json::Value;

use super::validatingadmissionpolicybinding::{binding_columns, binding_defaults};
use super::{
    match_resources_errors, mutating_operations_errors, param_ref_errors, policy_name_errors,
    static_suffix_warnings, GROUP,
};
use crate::error::StatusCause;
use crate::registry::builtin;
use crate::registry::resource::ApiResource;
use crate::registry::strategy::{bump_generation, Strategy};
use crate::store::selector::generic_unsupported_field;

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind(
        GROUP,
        "v1",
        "mutatingadmissionpolicybindings",
        Arc::new(BindingStrategy),
    )
    .with(|r| {
        r.unsupported_field(generic_unsupported_field)
            .table(binding_columns())
    })
    .build()
}

/// admissionregistration/v1 MutatingAdmissionPolicyBinding.
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
        let mr = &spec["matchResources"];
        errs.extend(match_resources_errors(mr, "spec.matchResources"));
        if mr.is_object() {
            errs.extend(mutating_operations_errors(mr, "spec.matchResources"));
        }
        errs
    }

    fn warnings_on_create(&self, obj: &Value) -> Vec<String> {
        static_suffix_warnings(obj)
    }

    fn warnings_on_update(&self, obj: &Value, _old: &Value) -> Vec<String> {
        static_suffix_warnings(obj)
    }
}
