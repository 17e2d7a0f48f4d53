//! The autoscaling/v1 HorizontalPodAutoscaler kind: the same objects as autoscaling/v2, stored
//! once, in v2 (the storage version), as the apiserver serves both versions from one storage.
//! Reads convert the stored v2 object to v1 and writes convert back ([`HpaConverter`], the
//! mapping of `pkg/apis/autoscaling/v1/conversion.go`, see [`super::hpa_conversion`]), so a
//! watch in either version sees the writes made through the other.
//!
//! Writes are defaulted by v1's `SetDefaults_HorizontalPodAutoscaler` (one replica at least;
//! no CPU target: the conversion adds the 80% CPU metric when the object names no metric),
//! validated as the apiserver validates them, on the converted (v2) object with v2's field
//! paths, and stored with v2's defaults applied (the apiserver applies them to every read from
//! storage). A main-resource update keeps the status, a status update keeps the spec and takes
//! the current metrics and conditions from the body's annotations. kubectl's columns are
//! v2's, computed on the converted object.
//!
//! Not yet: a stored part that reads through v1 as the write leaves it is kept exactly as
//! stored (so an update through v1 that leaves the metrics alone keeps their v2 order, where
//! the apiserver stores the v1 order, CPU last).

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::{json, Value};

use super::horizontalpodautoscaler::{
    columns, defaults, format_metrics, spec_errors, validate_status,
};
use super::hpa_conversion::{to_v1, to_v2, CONDITIONS, CURRENT_METRICS};
use crate::conversion::{Codec, Converter};
use crate::error::{ApiError, StatusCause};
use crate::registry::builtin;
use crate::registry::object_meta::NameRule;
use crate::registry::resource::ApiResource;
use crate::registry::strategy::{keep_only_status, Strategy};
use crate::store::Snapshot;

/// The apiVersion of this kind.
pub const API_VERSION: &str = "autoscaling/v1";
/// The storage version's apiVersion.
pub const STORAGE_API_VERSION: &str = "autoscaling/v2";
const KIND: &str = "HorizontalPodAutoscaler";

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind(
        "autoscaling",
        "v1",
        "horizontalpodautoscalers",
        Arc::new(HpaV1Strategy),
    )
    .part("status", Arc::new(HpaV1StatusStrategy))
    .with(|b| {
        b.table(columns(targets)).with(|r| {
            r.storage_version = "v2".into();
            r.codec = Arc::new(Codec::new(
                API_VERSION.into(),
                STORAGE_API_VERSION.into(),
                Arc::new(HpaConverter),
                None,
                r.strategy.clone(),
                r.strategy.clone(),
            ));
        })
    })
    .build()
}

/// The Targets cell of a v1 object: v2's, on the converted object.
fn targets(h: &Value) -> Value {
    let v2 = to_v2(h);
    json!(format_metrics(
        &v2["spec"]["metrics"],
        &v2["status"]["currentMetrics"]
    ))
}

/// Sets or removes one annotation of `obj` to what `from` has.
fn copy_annotation(obj: &mut Value, from: &Value, key: &str) {
    match from["metadata"]["annotations"].get(key) {
        Some(v) => {
            let meta = crate::registry::object_meta::meta_mut(obj);
            let ann = meta.entry("annotations").or_insert_with(|| json!({}));
            ann[key] = v.clone();
        }
        None => {
            if let Some(ann) = obj["metadata"]["annotations"].as_object_mut() {
                ann.remove(key);
            }
        }
    }
}

/// The status a v1 object carries: its status and the annotations holding the rest of it.
fn copy_status(obj: &mut Value, from: &Value) {
    obj["status"] = from["status"].clone();
    for key in [CURRENT_METRICS, CONDITIONS] {
        copy_annotation(obj, from, key);
    }
}

/// autoscaling/v1 HorizontalPodAutoscaler.
struct HpaV1Strategy;

impl Strategy for HpaV1Strategy {
    fn name_rule(&self) -> NameRule {
        NameRule::Subdomain
    }

    fn track_generation(&self) -> bool {
        false
    }

    fn allow_unconditional_update(&self) -> bool {
        true
    }

    /// v1's `SetDefaults_HorizontalPodAutoscaler`: only the replica floor.
    fn defaults(&self, obj: &mut Value) {
        if obj["spec"].is_object() && obj["spec"]["minReplicas"].is_null() {
            obj["spec"]["minReplicas"] = json!(1);
        }
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        let empty = json!({"status": {"currentReplicas": 0, "desiredReplicas": 0}});
        copy_status(obj, &empty);
    }

    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        copy_status(obj, old);
    }

    /// Keeps what the write leaves as v1 shows it exactly as stored: the parts the v1 round
    /// trip cannot carry exactly (a status's unset values, the order of the metrics) survive
    /// writes through v1 that do not change them.
    fn allocate(
        &self,
        _view: &Snapshot,
        obj: &mut Value,
        old: Option<&Value>,
        _dry_run: bool,
    ) -> Result<(), ApiError> {
        let Some(old) = old else {
            return Ok(());
        };
        let seen = convert(&convert(old, API_VERSION)?, STORAGE_API_VERSION)?;
        for part in ["spec", "status"] {
            if obj[part] == seen[part] {
                obj[part] = old[part].clone();
            }
        }
        Ok(())
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        spec_errors(&to_v2(obj)["spec"], None)
    }

    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        spec_errors(&to_v2(obj)["spec"], Some(&to_v2(old)["spec"]))
    }
}

/// The `status` subresource in v1: the stored object with the body's status, current
/// metrics and conditions (the last two in annotations).
struct HpaV1StatusStrategy;

impl Strategy for HpaV1StatusStrategy {
    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        let new = obj.clone();
        keep_only_status(obj, old);
        copy_status(obj, &new);
    }

    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        validate_status(obj, old)
    }
}

/// Converts HorizontalPodAutoscalers between autoscaling/v2 (the storage version) and
/// autoscaling/v1, then writes them as the target version's Go type does.
pub struct HpaConverter;

/// One object to `to`; objects converted to v2 get v2's defaults, as the apiserver defaults
/// what it reads from storage.
pub fn convert(obj: &Value, to: &str) -> Result<Value, ApiError> {
    let shaped = if to == API_VERSION {
        to_v1(obj)
    } else {
        let mut v2 = to_v2(obj);
        defaults(&mut v2);
        v2
    };
    crate::typed::normalize(to, KIND, shaped)
        .map(|n| n.value)
        .map_err(|e| ApiError::internal(format!("converting a {KIND} to {to}: {e}")))
}

impl Converter for HpaConverter {
    fn convert<'a>(
        &'a self,
        objects: Vec<Value>,
        to: &'a str,
    ) -> BoxFuture<'a, Result<Vec<Value>, ApiError>> {
        let out = objects.iter().map(|o| convert(o, to)).collect();
        Box::pin(std::future::ready(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn storage_round_trip_applies_v2_defaults() {
        let v1 = json!({"apiVersion": API_VERSION, "kind": KIND,
            "metadata": {"name": "h", "namespace": "default"},
            "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"},
                "minReplicas": 1, "maxReplicas": 3,
                "targetCPUUtilizationPercentage": 60},
            "status": {"currentReplicas": 0, "desiredReplicas": 0}});
        let v2 = convert(&v1, STORAGE_API_VERSION).expect("to v2");
        assert_eq!(v2["apiVersion"], STORAGE_API_VERSION);
        assert_eq!(
            v2["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"],
            60
        );
        assert_eq!(
            v2["status"],
            json!({"currentMetrics": null, "desiredReplicas": 0})
        );
        let back = convert(&v2, API_VERSION).expect("to v1");
        assert_eq!(back, v1);
    }
}
