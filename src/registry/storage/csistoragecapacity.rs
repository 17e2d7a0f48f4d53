//! The storage/v1 CSIStorageCapacity kind: the capacity a CSI driver reports for a storage
//! class in a topology segment. Its segment and class are immutable, its capacity not negative
//! (the maximum volume size is not checked, as on the apiserver); its Table is the generic one.

use std::sync::Arc;

use serde_json::Value;

use crate::error::{field, StatusCause};
use crate::registry::builtin;
use crate::registry::core::node::deprecated_label;
use crate::registry::resource::ApiResource;
use crate::registry::strategy::Strategy;
use crate::registry::validation::{
    dns_subdomain_errors, immutable, label_selector_errors, nonnegative_quantity_errors,
    selector_has_invalid_values, selector_json,
};
use crate::store::selector::generic_unsupported_field;

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind(
        "storage.k8s.io",
        "v1",
        "csistoragecapacities",
        Arc::new(CsiStorageCapacityStrategy),
    )
    .with(|r| r.unsupported_field(generic_unsupported_field))
    .build()
}

/// storage/v1 CSIStorageCapacity.
pub struct CsiStorageCapacityStrategy;

fn capacity_errors(obj: &Value, allow_invalid_values: bool) -> Vec<StatusCause> {
    let mut errs =
        label_selector_errors(&obj["nodeTopology"], "nodeTopology", allow_invalid_values);
    let class = obj["storageClassName"].as_str().unwrap_or("");
    errs.extend(dns_subdomain_errors("storageClassName", class));
    if !obj["capacity"].is_null() {
        errs.extend(nonnegative_quantity_errors("capacity", &obj["capacity"]));
    }
    errs
}

/// Deprecated node labels in the topology: expressions first, then labels.
fn warnings(obj: &Value) -> Vec<String> {
    let why = deprecated_label;
    let topology = &obj["nodeTopology"];
    let mut out = Vec::new();
    let exprs = topology["matchExpressions"]
        .as_array()
        .into_iter()
        .flatten();
    for (i, expr) in exprs.enumerate() {
        let key = expr["key"].as_str().unwrap_or("");
        if let Some(why) = why(key) {
            out.push(format!(
                "nodeTopology.matchExpressions[{i}].key: {key} is {why}"
            ));
        }
    }
    for key in topology["matchLabels"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, _)| k)
    {
        if let Some(why) = why(key) {
            out.push(format!("nodeTopology.matchLabels.{key}: {why}"));
        }
    }
    out
}

impl Strategy for CsiStorageCapacityStrategy {
    fn track_generation(&self) -> bool {
        false
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        capacity_errors(obj, false)
    }

    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        let ratchet = selector_has_invalid_values(&old["nodeTopology"]);
        let mut errs = capacity_errors(obj, ratchet);
        if obj["nodeTopology"] != old["nodeTopology"] {
            let mut cause = field::invalid("nodeTopology", &Value::Null, "field is immutable");
            cause.message = format!(
                "Invalid value: {}: field is immutable",
                selector_json(&obj["nodeTopology"])
            );
            errs.push(cause);
        }
        errs.extend(immutable(
            &obj["storageClassName"],
            &old["storageClassName"],
            "storageClassName",
        ));
        errs
    }

    fn warnings_on_create(&self, obj: &Value) -> Vec<String> {
        warnings(obj)
    }

    fn warnings_on_update(&self, obj: &Value, _old: &Value) -> Vec<String> {
        warnings(obj)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::rendered as messages;
    use serde_json::json;

    #[test]
    fn capacity_rules() {
        let obj =
            json!({"storageClassName": "fast", "capacity": "-1Gi", "maximumVolumeSize": "-5"});
        assert_eq!(
            messages(capacity_errors(&obj, false)),
            vec!["capacity: Invalid value: \"-1Gi\": must be greater than or equal to 0"]
        );
        let old = json!({"storageClassName": "fast", "nodeTopology": {"matchLabels": {"a": "b"}}});
        let new = json!({"storageClassName": "slow", "nodeTopology": {}});
        assert_eq!(
            messages(CsiStorageCapacityStrategy.validate_update(&new, &old)),
            vec![
                "nodeTopology: Invalid value: {}: field is immutable",
                "storageClassName: Invalid value: \"slow\": field is immutable"
            ]
        );
    }

    #[test]
    fn deprecated_topology_labels_warn() {
        let obj = json!({"nodeTopology": {"matchLabels": {"beta.kubernetes.io/os": "linux"},
            "matchExpressions": [{"key": "failure-domain.beta.kubernetes.io/zone", "operator": "Exists"}]}});
        assert_eq!(
            warnings(&obj),
            vec![
                "nodeTopology.matchExpressions[0].key: failure-domain.beta.kubernetes.io/zone is deprecated since v1.17; use \"topology.kubernetes.io/zone\" instead",
                "nodeTopology.matchLabels.beta.kubernetes.io/os: deprecated since v1.14; use \"kubernetes.io/os\" instead"
            ]
        );
    }
}
