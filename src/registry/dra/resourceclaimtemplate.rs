//! The resource.k8s.io/v1 ResourceClaimTemplate kind: the claim a pod's
//! `resourceClaimTemplateName` stands for (kube-controller-manager creates it; a bare
//! apiserver only stores templates). Its `spec.spec` is a claim spec, defaulted and validated
//! as a claim's; `spec.metadata` may hold labels and annotations only. The spec is immutable,
//! quoted as its internal type when it changes, after the new template's own errors (an
//! update validates the template in full again). The generation is the client's.

use std::sync::Arc;

use serde_json::Value;

use super::shared::{
    claim_spec_errors, default_claim_spec, go_struct, internal_claim_spec, invalid_rendered, GROUP,
};
use crate::error::{field, StatusCause};
use crate::machinery::gofmt::go_json;
use crate::registry::builtin;
use crate::registry::object_meta::validate_labels_and_annotations;
use crate::registry::resource::ApiResource;
use crate::registry::strategy::Strategy;
use crate::registry::table::{Column, Columns};
use crate::store::selector::generic_unsupported_field;

/// ObjectMeta's fields in its Go order, with the name `validateFieldAllowList` reports each
/// by (the Go field name with its first letter lowered: `uID`).
const META_FIELDS: [(&str, &str); 15] = [
    ("name", "name"),
    ("generateName", "generateName"),
    ("namespace", "namespace"),
    ("selfLink", "selfLink"),
    ("uid", "uID"),
    ("resourceVersion", "resourceVersion"),
    ("generation", "generation"),
    ("creationTimestamp", "creationTimestamp"),
    ("deletionTimestamp", "deletionTimestamp"),
    ("deletionGracePeriodSeconds", "deletionGracePeriodSeconds"),
    ("labels", "labels"),
    ("annotations", "annotations"),
    ("ownerReferences", "ownerReferences"),
    ("finalizers", "finalizers"),
    ("managedFields", "managedFields"),
];

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind(
        GROUP,
        "v1",
        "resourceclaimtemplates",
        Arc::new(ResourceClaimTemplateStrategy),
    )
    .with(|r| {
        r.unsupported_field(generic_unsupported_field)
            .table(Columns::new(vec![Column::name(), Column::age("string")]))
            .delete_returns_object()
    })
    .build()
}

/// `ValidateTemplateObjectMeta`: labels and annotations checked, every other field forbidden.
fn template_meta_errors(meta: &Value) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let Some(map) = meta.as_object() else {
        return errs;
    };
    validate_labels_and_annotations(map, "spec.metadata", &mut errs);
    for (json_name, go_name) in META_FIELDS {
        if matches!(json_name, "labels" | "annotations") {
            continue;
        }
        let set = map.get(json_name).is_some_and(|v| !is_zero(v));
        if set {
            errs.push(field::forbidden(
                &format!("spec.metadata.{go_name}"),
                "cannot be set",
            ));
        }
    }
    errs
}

/// Whether a field holds its Go zero value (absent fields are not in the map at all).
fn is_zero(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::Bool(b) => !b,
        _ => false,
    }
}

fn template_errors(obj: &Value) -> Vec<StatusCause> {
    let mut errs = template_meta_errors(&obj["spec"]["metadata"]);
    errs.extend(claim_spec_errors(&obj["spec"]["spec"], "spec.spec"));
    errs
}

/// The internal `ResourceClaimTemplateSpec` as encoding/json writes it: the embedded
/// ObjectMeta's set fields (by their json names) first, then `Spec`.
fn internal_template_spec(spec: &Value) -> String {
    let meta = &spec["metadata"];
    let mut fields: Vec<(&str, String)> = META_FIELDS
        .iter()
        .filter(|(name, _)| meta.get(*name).is_some_and(|v| !is_zero(v) && !is_empty(v)))
        .map(|(name, _)| (*name, go_json(&meta[*name])))
        .collect();
    fields.push(("Spec", internal_claim_spec(&spec["spec"])));
    go_struct(&fields)
}

fn is_empty(v: &Value) -> bool {
    v.as_object().is_some_and(|m| m.is_empty()) || v.as_array().is_some_and(|a| a.is_empty())
}

/// resource/v1 ResourceClaimTemplate.
pub struct ResourceClaimTemplateStrategy;

impl Strategy for ResourceClaimTemplateStrategy {
    fn track_generation(&self) -> bool {
        false
    }

    fn keeps_sent_generation(&self) -> bool {
        true
    }

    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn defaults(&self, obj: &mut Value) {
        if let Some(spec) = obj.get_mut("spec").and_then(|s| s.get_mut("spec")) {
            default_claim_spec(spec);
        }
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        template_errors(obj)
    }

    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        let mut errs = template_errors(obj);
        if obj["spec"] != old["spec"] {
            let rendered = internal_template_spec(&obj["spec"]);
            errs.push(invalid_rendered("spec", &rendered, "field is immutable"));
        }
        errs
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::rendered as messages;
    use rstest::rstest;
    use serde_json::json;

    fn template(metadata: Value, class: &str) -> Value {
        let mut obj = json!({"metadata": {"name": "t", "namespace": "ns"}, "spec": {"metadata": metadata,
            "spec": {"devices": {"requests": [{"name": "req-0", "exactly": {"deviceClassName": class}}]}}}});
        ResourceClaimTemplateStrategy.defaults(&mut obj);
        obj
    }

    #[rstest]
    #[case(json!({"labels": {"a": "b"}, "annotations": {"c": "d"}}), vec![])]
    #[case(json!({"name": "x", "uid": "u", "finalizers": ["f"], "labels": {"-a": "b"}}), vec![
        "spec.metadata.labels: Invalid value: \"-a\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        "spec.metadata.name: Forbidden: cannot be set",
        "spec.metadata.uID: Forbidden: cannot be set",
        "spec.metadata.finalizers: Forbidden: cannot be set"])]
    fn template_metadata(#[case] metadata: Value, #[case] want: Vec<&str>) {
        let obj = template(metadata, "gpu");
        assert_eq!(messages(ResourceClaimTemplateStrategy.validate(&obj)), want);
    }

    #[test]
    fn the_spec_is_immutable() {
        let old = template(json!({"labels": {"a": "b"}}), "gpu");
        let new = template(json!({"labels": {"a": "b"}}), "Gpu2");
        assert_eq!(
            messages(ResourceClaimTemplateStrategy.validate_update(&new, &old)),
            vec![
                "spec.spec.devices.requests[0].exactly.deviceClassName: Invalid value: \"Gpu2\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                "spec: Invalid value: {\"labels\":{\"a\":\"b\"},\"Spec\":{\"Devices\":{\"Requests\":[{\"Name\":\"req-0\",\"Exactly\":{\"DeviceClassName\":\"Gpu2\",\"Selectors\":null,\"AllocationMode\":\"ExactCount\",\"Count\":1,\"AdminAccess\":null,\"Tolerations\":null,\"Capacity\":null},\"FirstAvailable\":null}],\"Constraints\":null,\"Config\":null}}}: field is immutable"
            ]
        );
        let unlabelled = template(json!({}), "gpu");
        assert!(internal_template_spec(&unlabelled["spec"]).starts_with("{\"Spec\":{"));
        assert!(ResourceClaimTemplateStrategy
            .validate_update(&old, &old)
            .is_empty());
    }
}
