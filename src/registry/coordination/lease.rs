//! The coordination.k8s.io/v1 Lease kind (leader election, node heartbeats): a positive
//! `leaseDurationSeconds`, non-negative `leaseTransitions`, and the fields of coordinated
//! leader election (`strategy`, `preferredHolder`) dropped as the apiserver drops them while
//! its `CoordinatedLeaderElection` feature is off (the 1.36 default); kubectl's columns.

use std::sync::Arc;

use serde_json::Value;

use crate::error::{field, StatusCause};
use crate::registry::builtin;
use crate::registry::resource::ApiResource;
use crate::registry::strategy::Strategy;
use crate::registry::table::{Column, Columns};

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind(
        "coordination.k8s.io",
        "v1",
        "leases",
        Arc::new(LeaseStrategy),
    )
    .with(|r| {
        r.table(Columns::new(vec![
            Column::name(),
            Column::computed("Holder", "string", 0, "", |o| {
                o["spec"]["holderIdentity"].as_str().unwrap_or("").into()
            }),
            Column::age("string"),
        ]))
    })
    .build()
}

/// coordination.k8s.io/v1 Lease.
pub struct LeaseStrategy;

fn drop_spec_field(obj: &mut Value, key: &str) {
    if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
        spec.remove(key);
    }
}

impl Strategy for LeaseStrategy {
    fn track_generation(&self) -> bool {
        false
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        drop_spec_field(obj, "strategy");
        drop_spec_field(obj, "preferredHolder");
    }

    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        for key in ["strategy", "preferredHolder"] {
            if old["spec"].get(key).is_none() {
                drop_spec_field(obj, key);
            }
        }
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        spec_errors(&obj["spec"])
    }
}

/// `ValidateLeaseSpec`.
fn spec_errors(spec: &Value) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let duration = &spec["leaseDurationSeconds"];
    if duration.as_i64().is_some_and(|d| d <= 0) {
        errs.push(field::invalid(
            "spec.leaseDurationSeconds",
            duration,
            "must be greater than 0",
        ));
    }
    let transitions = &spec["leaseTransitions"];
    if transitions.as_i64().is_some_and(|t| t < 0) {
        errs.push(field::invalid(
            "spec.leaseTransitions",
            transitions,
            "must be greater than or equal to 0",
        ));
    }
    let has_strategy = spec["strategy"].as_str().is_some_and(|s| !s.is_empty());
    if spec["preferredHolder"]
        .as_str()
        .is_some_and(|s| !s.is_empty())
        && !has_strategy
    {
        errs.push(field::forbidden(
            "spec.preferredHolder",
            "may only be specified if `strategy` is defined",
        ));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn spec_rules() {
        let errs = spec_errors(&json!({"leaseDurationSeconds": 0, "leaseTransitions": -1}));
        assert_eq!(errs[0].message, "Invalid value: 0: must be greater than 0");
        assert_eq!(errs[1].field, "spec.leaseTransitions");
        assert!(spec_errors(&json!({"leaseDurationSeconds": 15})).is_empty());
    }
}
