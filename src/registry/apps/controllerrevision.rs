//! The apps/v1 ControllerRevision kind: the immutable snapshots StatefulSets and DaemonSets
//! record of their templates. `data` (any JSON object) is required and may never change, the
//! revision is not negative, and `kubectl get controllerrevisions` shows the owning controller.
//! Revisions keep no `metadata.generation`, as the apiserver's strategy sets none.

use std::sync::Arc;

use serde_json::{json, Value};

use crate::error::{field, StatusCause};
use crate::registry::builtin;
use crate::registry::resource::ApiResource;
use crate::registry::strategy::Strategy;
use crate::registry::table::{Column, Columns};
use crate::registry::validation::{immutable, nonnegative};

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind(
        "apps",
        "v1",
        "controllerrevisions",
        Arc::new(ControllerRevisionStrategy),
    )
    .with(|r| {
        r.table(Columns::new(vec![
            Column::name(),
            Column::computed(
                "Controller",
                "string",
                0,
                "Controller of the object",
                controller,
            ),
            Column::computed("Revision", "string", 0, "", |r| r["revision"].clone()),
            Column::age("string"),
        ]))
    })
    .build()
}

/// The Controller cell: `<kind>.<group>/<name>` of the controlling owner, or `<none>`.
fn controller(obj: &Value) -> Value {
    let owner = obj["metadata"]["ownerReferences"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|o| o["controller"] == true);
    let Some(owner) = owner else {
        return json!("<none>");
    };
    let api_version = owner["apiVersion"].as_str().unwrap_or("");
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    let kind = owner["kind"].as_str().unwrap_or("").to_lowercase();
    let name = owner["name"].as_str().unwrap_or("");
    if group.is_empty() {
        json!(format!("{kind}/{name}"))
    } else {
        json!(format!("{kind}.{group}/{name}"))
    }
}

/// apps/v1 ControllerRevision.
pub struct ControllerRevisionStrategy;

impl Strategy for ControllerRevisionStrategy {
    /// A PUT without a resourceVersion is accepted (last write wins), as the apiserver's
    /// strategy allows.
    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn track_generation(&self) -> bool {
        false
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        let mut errs = nonnegative(obj, "/revision", "revision");
        match obj.get("data") {
            None | Some(Value::Null) => {
                errs.push(field::required("data", "data is mandatory"));
            }
            Some(Value::Object(_)) => {}
            Some(_) => errs.push(field::required("data", "data must be a valid JSON object")),
        }
        errs
    }

    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        let mut errs = nonnegative(obj, "/revision", "revision");
        errs.extend(immutable(&obj["data"], &old["data"], "data"));
        errs
    }
}
