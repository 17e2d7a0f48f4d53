//! The resource.k8s.io/v1 DeviceClass kind: what claims' requests name as their device class,
//! its CEL selectors and opaque configurations validated as a claim's are (a configuration
//! left as stored is not held to the parameters' size limit), an optional extended resource
//! name, its generation 1 on create and bumped by each spec change. Its spec is mutable.

use std::sync::Arc;

use serde_json::{json, Value};

use super::shared::{
    device_configuration_errors, selectors_errors, slice_errors, GROUP, MAX_CONFIGS,
};
use crate::error::{field, StatusCause};
use crate::registry::builtin;
use crate::registry::resource::ApiResource;
use crate::registry::strategy::{bump_generation, Strategy};
use crate::registry::table::{Column, Columns};
use crate::registry::validation::is_extended_resource;
use crate::store::selector::generic_unsupported_field;

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind(GROUP, "v1", "deviceclasses", Arc::new(DeviceClassStrategy))
        .with(|r| {
            r.unsupported_field(generic_unsupported_field)
                .table(Columns::new(vec![Column::name(), Column::age("string")]))
                .delete_returns_object()
        })
        .build()
}

/// `validateDeviceClassSpec`: selectors, configurations (`stored` when the old spec had the
/// same ones), the extended resource name.
fn spec_errors(obj: &Value, old: Option<&Value>) -> Vec<StatusCause> {
    let spec = &obj["spec"];
    let mut errs = selectors_errors(&spec["selectors"], "spec.selectors");
    let stored = old.is_some_and(|o| o["spec"]["config"] == spec["config"]);
    errs.extend(slice_errors(
        &spec["config"],
        Some(MAX_CONFIGS),
        "spec.config",
        |c, p| device_configuration_errors(c, p, stored),
    ));
    if let Some(name) = spec["extendedResourceName"].as_str() {
        if !is_extended_resource(name) {
            errs.push(field::invalid(
                "spec.extendedResourceName",
                &json!(name),
                "must be a valid extended resource name",
            ));
        }
    }
    errs
}

/// resource/v1 DeviceClass.
pub struct DeviceClassStrategy;

impl Strategy for DeviceClassStrategy {
    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        if obj["spec"] != old["spec"] {
            bump_generation(obj, old, true);
        }
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        spec_errors(obj, None)
    }

    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        spec_errors(obj, Some(old))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::rendered as messages;
    use rstest::rstest;

    #[rstest]
    #[case(json!({}), vec![])]
    #[case(json!({"extendedResourceName": "example.com/gpu",
        "selectors": [{"cel": {"expression": "device.driver == \"gpu.example.com\""}}],
        "config": [{"opaque": {"driver": "gpu.example.com", "parameters": {}}}]}), vec![])]
    #[case(json!({"extendedResourceName": "gpu"}),
        vec!["spec.extendedResourceName: Invalid value: \"gpu\": must be a valid extended resource name"])]
    #[case(json!({"extendedResourceName": "kubernetes.io/gpu"}),
        vec!["spec.extendedResourceName: Invalid value: \"kubernetes.io/gpu\": must be a valid extended resource name"])]
    #[case(json!({"selectors": [{"cel": {"expression": "1"}}], "config": [{}]}),
        vec!["spec.selectors[0].cel.expression: Invalid value: \"1\": must evaluate to bool or the unknown type, not int",
             "spec.config[0].opaque: Required value"])]
    fn create(#[case] spec: Value, #[case] want: Vec<&str>) {
        let obj = json!({"metadata": {"name": "gpu"}, "spec": spec});
        assert_eq!(messages(DeviceClassStrategy.validate(&obj)), want);
    }

    #[test]
    fn stored_parameters_may_be_large() {
        let big = json!([{"opaque": {"driver": "d.io", "parameters": {"a": "x".repeat(10240)}}}]);
        let old = json!({"spec": {"config": big}});
        let new = json!({"spec": {"config": big, "selectors": []}});
        assert!(DeviceClassStrategy.validate_update(&new, &old).is_empty());
        assert_eq!(
            messages(DeviceClassStrategy.validate(&new)),
            vec!["spec.config[0].opaque.parameters: Too long: may not be more than 10240 bytes"]
        );
    }

    #[test]
    fn spec_changes_bump_the_generation() {
        let old = json!({"metadata": {"generation": 1}, "spec": {}});
        let mut labelled = old.clone();
        labelled["metadata"]["labels"] = json!({"a": "b"});
        DeviceClassStrategy.prepare_for_update(&mut labelled, &old);
        assert_eq!(labelled["metadata"]["generation"], 1);
        let mut changed = old.clone();
        changed["spec"]["extendedResourceName"] = json!("example.com/gpu");
        DeviceClassStrategy.prepare_for_update(&mut changed, &old);
        assert_eq!(changed["metadata"]["generation"], 2);
    }
}
