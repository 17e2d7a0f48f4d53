//! The events.k8s.io/v1 Event kind: the same objects as core/v1 Events, stored once, in the
//! core Event table and in its version (core/v1), as the apiserver serves both resources from
//! one storage. Reads convert the stored core Event to events.k8s.io/v1, writes convert back
//! ([`EventConverter`], the field mapping of `pkg/apis/events/v1/conversion.go`: `regarding` is
//! `involvedObject`, `note` is `message`, `reportingController` is `reportingComponent`, the
//! `deprecated*` fields are the core ones), so a watch on either resource sees the writes made
//! through the other. Validation is the core kind's with the strict events.k8s.io rules
//! ([`crate::registry::core::event`]); field selectors take this version's names
//! (`regarding.kind`, `reportingController`) and compare the stored core fields.
//!
//! Not yet: errors name the resource as `events.events.k8s.io` and the kind as
//! `Event.events.k8s.io`, where the apiserver, serving this resource from the core storage,
//! says `events` and `Event`.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::Value;

use crate::conversion::{Codec, Converter};
use crate::error::{ApiError, StatusCause};
use crate::registry::builtin;
use crate::registry::core::event::{
    columns, to_core_shape, to_events_shape, validate_create, validate_update, EventApi,
};
use crate::registry::resource::ApiResource;
use crate::registry::strategy::Strategy;
use crate::store::GroupResource;

/// The apiVersion of this kind.
pub const API_VERSION: &str = "events.k8s.io/v1";

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind("events.k8s.io", "v1", "events", Arc::new(EventStrategy))
        .with(|b| {
            b.field_selectors(&[
                "metadata.name",
                "metadata.namespace",
                "reason",
                "regarding.kind=involvedObject.kind",
                "regarding.namespace=involvedObject.namespace",
                "regarding.name=involvedObject.name",
                "regarding.uid=involvedObject.uid",
                "regarding.apiVersion=involvedObject.apiVersion",
                "regarding.resourceVersion=involvedObject.resourceVersion",
                "regarding.fieldPath=involvedObject.fieldPath",
                "reportingController=reportingComponent",
                "type",
            ])
            .table(columns())
            .with(|r| {
                r.gr = GroupResource::new("", "events");
                r.codec = Arc::new(Codec::new(
                    API_VERSION.into(),
                    "v1".into(),
                    Arc::new(EventConverter),
                    None,
                    r.strategy.clone(),
                    r.strategy.clone(),
                ));
            })
        })
        .build()
}

/// events.k8s.io/v1 Event.
pub struct EventStrategy;

impl Strategy for EventStrategy {
    fn track_generation(&self) -> bool {
        false
    }

    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        validate_create(obj, EventApi::EventsV1)
    }

    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        validate_update(obj, old, EventApi::EventsV1)
    }
}

/// Converts Events between core/v1 (`v1`, the storage version) and events.k8s.io/v1, then
/// writes them as the target version's Go type does (its omission rules).
pub struct EventConverter;

/// One object to `to`.
pub fn convert(obj: &Value, to: &str) -> Result<Value, ApiError> {
    let shaped = if to == API_VERSION {
        to_events_shape(obj)
    } else {
        to_core_shape(obj)
    };
    crate::typed::normalize(to, "Event", shaped)
        .map(|n| n.value)
        .map_err(|e| ApiError::internal(format!("converting an Event to {to}: {e}")))
}

impl Converter for EventConverter {
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
    use serde_json::json;

    #[test]
    fn conversion_follows_go_shapes() {
        let core = json!({"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": "e", "namespace": "default"},
            "involvedObject": {"kind": "Pod", "name": "p"}, "message": "hello",
            "reason": "Started", "source": {"component": "kubelet"}, "count": 3,
            "firstTimestamp": "2024-01-01T00:00:00Z", "type": "Normal",
            "reportingComponent": "", "reportingInstance": ""});
        let events = convert(&core, API_VERSION).expect("converts");
        assert_eq!(events["apiVersion"], API_VERSION);
        assert_eq!(events["regarding"], json!({"kind": "Pod", "name": "p"}));
        assert_eq!(events["note"], "hello");
        assert_eq!(events["deprecatedSource"], json!({"component": "kubelet"}));
        assert_eq!(events["deprecatedCount"], 3);
        assert_eq!(events["deprecatedFirstTimestamp"], "2024-01-01T00:00:00Z");
        assert!(events.get("involvedObject").is_none());
        let back = convert(&events, "v1").expect("converts back");
        assert_eq!(back["involvedObject"], core["involvedObject"]);
        assert_eq!(back["message"], "hello");
        assert_eq!(back["count"], 3);
        assert_eq!(back["reportingComponent"], "");
    }
}
