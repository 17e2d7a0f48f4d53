//! The core/v1 PodTemplate kind: a named pod template with the pod spec's defaults and
//! validation, `metadata.generation` that follows the template, answers a DELETE with the
//! deleted object, and `kubectl get podtemplates`' columns.

use std::sync::Arc;

use serde_json::{json, Value};

use super::podspec::{default_pod_spec, validate_pod_template_spec};
use crate::error::StatusCause;
use crate::registry::apps::workload::{container_cells, format_labels};
use crate::registry::builtin;
use crate::registry::pointer::Pointer;
use crate::registry::resource::ApiResource;
use crate::registry::strategy::{bump_generation, Strategy};
use crate::registry::table::{Column, Columns};

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind("", "v1", "podtemplates", Arc::new(PodTemplateStrategy))
        .with(|r| {
            r.table(Columns::new(vec![
                Column::name(),
                Column::computed(
                    "Containers",
                    "string",
                    0,
                    "Names of each container in the template.",
                    |t| json!(container_cells(&t["template"]).0),
                ),
                Column::computed(
                    "Images",
                    "string",
                    0,
                    "Images referenced by each container in the template.",
                    |t| json!(container_cells(&t["template"]).1),
                ),
                Column::computed(
                    "Pod Labels",
                    "string",
                    0,
                    "The labels for the pod template.",
                    |t| json!(format_labels(&t["template"]["metadata"]["labels"])),
                ),
            ]))
            .delete_returns_object()
        })
        .build()
}

/// core/v1 PodTemplate.
pub struct PodTemplateStrategy;

impl Strategy for PodTemplateStrategy {
    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn defaults(&self, obj: &mut Value) {
        if let Some(spec) = obj.at_mut("/template/spec") {
            default_pod_spec(spec);
        }
    }

    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        bump_generation(obj, old, false);
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        validate_pod_template_spec(&obj["template"], "template")
    }
}
