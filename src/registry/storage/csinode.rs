//! The storage/v1 CSINode kind: the CSI drivers a node has registered, each with its node ID
//! and topology keys, which stay as registered (only the allocatable count may change).

use std::sync::Arc;

use serde_json::{json, Value};

use super::csidriver::csi_driver_name_errors;
use crate::error::{field, StatusCause};
use crate::machinery::gofmt::go_quote;
use crate::registry::builtin;
use crate::registry::resource::ApiResource;
use crate::registry::strategy::Strategy;
use crate::registry::table::{Column, Columns};
use crate::registry::validation::{invalid_each, qualified_name_messages};
use crate::store::selector::generic_unsupported_field;

/// The most bytes of a driver's node ID.
const MAX_NODE_ID: usize = 256;

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind(
        "storage.k8s.io",
        "v1",
        "csinodes",
        Arc::new(CsiNodeStrategy),
    )
    .with(|r| {
        r.unsupported_field(generic_unsupported_field)
            .table(Columns::new(vec![
                Column::name(),
                Column::computed(
                    "Drivers",
                    "integer",
                    0,
                    "Drivers indicates the number of CSI drivers registered on the node",
                    |o| json!(drivers(o).len()),
                ),
                Column::age("string"),
            ]))
            .delete_returns_object()
    })
    .build()
}

fn drivers(obj: &Value) -> &[Value] {
    obj["spec"]["drivers"].as_array().map_or(&[], Vec::as_slice)
}

/// storage/v1 CSINode.
pub struct CsiNodeStrategy;

fn driver_errors(obj: &Value) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let mut names = std::collections::HashSet::new();
    for (i, d) in drivers(obj).iter().enumerate() {
        let path = format!("spec.drivers[{i}]");
        let name = d["name"].as_str().unwrap_or("");
        errs.extend(csi_driver_name_errors(&format!("{path}.name"), name));
        let node_id = d["nodeID"].as_str().unwrap_or("");
        if node_id.is_empty() {
            errs.push(field::required(&format!("{path}.nodeID"), ""));
        } else if node_id.len() > MAX_NODE_ID {
            errs.push(field::invalid(
                &format!("{path}.nodeID"),
                &json!(node_id),
                "must be 256 characters or less",
            ));
        }
        if let Some(count) = d["allocatable"]["count"].as_i64().filter(|c| *c < 0) {
            errs.push(field::invalid(
                &format!("{path}.allocatable.count"),
                &json!(count),
                "must be greater than or equal to 0",
            ));
        }
        if !names.insert(name) {
            errs.push(field::duplicate(&format!("{path}.name"), &json!(name)));
        }
        errs.extend(topology_key_errors(&path, d));
    }
    errs
}

/// Topology keys: each given, once, a qualified name; reported at the driver's own path.
fn topology_key_errors(path: &str, driver: &Value) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for key in driver["topologyKeys"].as_array().into_iter().flatten() {
        let key = key.as_str().unwrap_or("");
        if key.is_empty() {
            errs.push(field::required(path, ""));
        }
        if !seen.insert(key) {
            errs.push(field::duplicate(path, &json!(key)));
        }
        errs.extend(invalid_each(
            path,
            &json!(key),
            qualified_name_messages(key),
        ));
    }
    errs
}

/// A driver as the apiserver quotes it when it changed: the internal type written by
/// encoding/json, the allocatable count left out of the comparison and the quote.
fn internal_driver(d: &Value) -> String {
    let keys = match d["topologyKeys"].as_array() {
        Some(keys) if !keys.is_empty() => {
            let quoted: Vec<String> = keys
                .iter()
                .map(|k| go_quote(k.as_str().unwrap_or("")))
                .collect();
            format!("[{}]", quoted.join(","))
        }
        _ => "null".into(),
    };
    format!(
        "{{\"Name\":{},\"NodeID\":{},\"TopologyKeys\":{keys},\"Allocatable\":null}}",
        go_quote(d["name"].as_str().unwrap_or("")),
        go_quote(d["nodeID"].as_str().unwrap_or("")),
    )
}

/// Whether a driver changed beyond its allocatable count.
fn registration_changed(new: &Value, old: &Value) -> bool {
    let keys = |d: &Value| d["topologyKeys"].as_array().cloned().unwrap_or_default();
    new["nodeID"] != old["nodeID"] || keys(new) != keys(old)
}

impl Strategy for CsiNodeStrategy {
    fn track_generation(&self) -> bool {
        false
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        driver_errors(obj)
    }

    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        let mut errs = driver_errors(obj);
        for was in drivers(old) {
            for now in drivers(obj).iter().filter(|d| d["name"] == was["name"]) {
                if registration_changed(now, was) {
                    let mut cause =
                        field::invalid("spec.drivers", &Value::Null, "field is immutable");
                    cause.message = format!(
                        "Invalid value: {}: field is immutable",
                        internal_driver(now)
                    );
                    errs.push(cause);
                }
            }
        }
        errs
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::rendered as messages;

    #[test]
    fn drivers_are_checked() {
        let obj = json!({"spec": {"drivers": [
            {"name": "a.io", "nodeID": "n", "topologyKeys": ["zone", "zone"]},
            {"name": "a.io", "nodeID": "", "allocatable": {"count": -1}}]}});
        assert_eq!(
            messages(driver_errors(&obj)),
            vec![
                "spec.drivers[0]: Duplicate value: \"zone\"",
                "spec.drivers[1].nodeID: Required value",
                "spec.drivers[1].allocatable.count: Invalid value: -1: must be greater than or equal to 0",
                "spec.drivers[1].name: Duplicate value: \"a.io\"",
            ]
        );
    }

    #[test]
    fn a_registration_is_immutable_but_its_count() {
        let old =
            json!({"spec": {"drivers": [{"name": "d", "nodeID": "n", "topologyKeys": ["k"]}]}});
        let counted = json!({"spec": {"drivers": [{"name": "d", "nodeID": "n", "topologyKeys": ["k"], "allocatable": {"count": 3}}]}});
        assert!(CsiNodeStrategy.validate_update(&counted, &old).is_empty());
        let moved =
            json!({"spec": {"drivers": [{"name": "d", "nodeID": "n2", "topologyKeys": ["k"]}]}});
        assert_eq!(
            messages(CsiNodeStrategy.validate_update(&moved, &old)),
            vec!["spec.drivers: Invalid value: {\"Name\":\"d\",\"NodeID\":\"n2\",\"TopologyKeys\":[\"k\"],\"Allocatable\":null}: field is immutable"]
        );
    }
}
