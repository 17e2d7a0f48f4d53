//! The storage/v1 VolumeAttributesClass kind: a CSI driver's name and the parameters volumes
//! of the class are modified with, both immutable (the driver named as a StorageClass names its
//! provisioner; at least one parameter).

use std::sync::Arc;

use serde_json::{json, Value};

use super::storageclass::{driver_errors, storage_parameters_errors};
use crate::error::{field, StatusCause};
use crate::registry::builtin;
use crate::registry::resource::ApiResource;
use crate::registry::strategy::Strategy;
use crate::registry::table::{Column, Columns};
use crate::store::selector::generic_unsupported_field;

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind(
        "storage.k8s.io",
        "v1",
        "volumeattributesclasses",
        Arc::new(VolumeAttributesClassStrategy),
    )
    .with(|r| {
        r.unsupported_field(generic_unsupported_field)
            .table(Columns::new(vec![
                Column::name(),
                Column::computed(
                    "DriverName",
                    "string",
                    0,
                    "Name of the CSI driver This field is immutable.",
                    |o| json!(o["driverName"].as_str().unwrap_or("")),
                ),
                Column::age("string"),
            ]))
            .delete_returns_object()
    })
    .build()
}

/// storage/v1 VolumeAttributesClass.
pub struct VolumeAttributesClassStrategy;

fn class_errors(obj: &Value) -> Vec<StatusCause> {
    let mut errs = driver_errors(obj, "driverName");
    errs.extend(storage_parameters_errors(obj, false));
    errs
}

impl Strategy for VolumeAttributesClassStrategy {
    fn track_generation(&self) -> bool {
        false
    }

    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        class_errors(obj)
    }

    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        let mut errs = Vec::new();
        if obj["driverName"] != old["driverName"] {
            errs.push(field::forbidden(
                "driverName",
                "updates to driverName are forbidden.",
            ));
        }
        if obj["parameters"] != old["parameters"] {
            errs.push(field::forbidden(
                "parameters",
                "updates to parameters are forbidden.",
            ));
        }
        errs.extend(class_errors(obj));
        errs
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::rendered as messages;
    use rstest::rstest;

    #[rstest]
    #[case(json!({"driverName": "csi.example.com", "parameters": {"iops": "100"}}), vec![])]
    #[case(json!({"driverName": "", "parameters": {}}),
        vec!["driverName: Required value", "parameters: Required value: must contain at least one key/value pair"])]
    #[case(json!({"driverName": "A/B/C", "parameters": {"": "x"}}),
        vec!["driverName: Invalid value: \"a/b/c\": a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
             "parameters: Invalid value: \"\": field can not be empty."])]
    fn create(#[case] obj: Value, #[case] want: Vec<&str>) {
        assert_eq!(messages(class_errors(&obj)), want);
    }

    #[test]
    fn driver_and_parameters_are_immutable() {
        let old = json!({"driverName": "a.io", "parameters": {"k": "v"}});
        let new = json!({"driverName": "b.io", "parameters": {"k": "w"}});
        assert_eq!(
            messages(VolumeAttributesClassStrategy.validate_update(&new, &old)),
            vec![
                "driverName: Forbidden: updates to driverName are forbidden.",
                "parameters: Forbidden: updates to parameters are forbidden."
            ]
        );
    }
}
