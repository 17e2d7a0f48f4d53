//! The core/v1 Event kind, and the validation and printing it shares with events.k8s.io/v1
//! Events (the same objects, stored once in this kind's table; see
//! [`crate::registry::events::event`]).
//!
//! Validation is the apiserver's `ValidateEventCreate`/`ValidateEventUpdate`, run on the
//! core shape of the object whichever API it came through: the legacy rules always (an event's
//! namespace must match its `involvedObject`'s, the reporting fields of events that carry an
//! `eventTime`), the strict rules of events.k8s.io/v1 only there. Field selectors are those of
//! `ToSelectableFields`; the Table is kubectl's (LAST SEEN, TYPE, REASON, OBJECT, MESSAGE, and
//! the wide columns).
//!
//! Not yet: the events' one-hour TTL; names are checked as DNS subdomains (the apiserver checks
//! core/v1 event names only as path segments); the `source` field selector compares
//! `source.component` only (the apiserver falls back to `reportingComponent` when it is empty).

use std::borrow::Cow;
use std::sync::Arc;

use serde_json::{json, Value};

use crate::error::{field, StatusCause};
use crate::registry::builtin;
use crate::registry::resource::ApiResource;
use crate::registry::strategy::Strategy;
use crate::registry::table::{age, Column, Columns};
use crate::registry::validation::qualified_name_errors;

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind("", "v1", "events", Arc::new(EventStrategy))
        .with(|r| {
            r.field_selectors(&[
                "metadata.name",
                "metadata.namespace",
                "involvedObject.kind",
                "involvedObject.namespace",
                "involvedObject.name",
                "involvedObject.uid",
                "involvedObject.apiVersion",
                "involvedObject.resourceVersion",
                "involvedObject.fieldPath",
                "reason",
                "reportingComponent",
                "source=source.component",
                "type",
            ])
            .table(columns())
        })
        .build()
}

/// Which API an event is written through: the rules differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventApi {
    /// core/v1: the legacy rules only, `reportingComponent` named as such.
    Core,
    /// events.k8s.io/v1: the legacy rules and the strict ones.
    EventsV1,
}

/// core/v1 Event.
pub struct EventStrategy;

impl Strategy for EventStrategy {
    fn track_generation(&self) -> bool {
        false
    }

    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        validate_create(obj, EventApi::Core)
    }

    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        validate_update(obj, old, EventApi::Core)
    }
}

/// The core/v1 field names of events.k8s.io/v1 fields that are named differently: the whole
/// of the field mapping between the two versions (`pkg/apis/events/v1/conversion.go`).
pub const RENAMED: [(&str, &str); 7] = [
    ("involvedObject", "regarding"),
    ("message", "note"),
    ("source", "deprecatedSource"),
    ("firstTimestamp", "deprecatedFirstTimestamp"),
    ("lastTimestamp", "deprecatedLastTimestamp"),
    ("count", "deprecatedCount"),
    ("reportingComponent", "reportingController"),
];

/// An events.k8s.io/v1 Event in its core/v1 shape (fields renamed, apiVersion `v1`), without
/// Go's omission rules applied.
pub fn to_core_shape(obj: &Value) -> Value {
    let mut out = obj.clone();
    if let Some(o) = out.as_object_mut() {
        for (core, events) in RENAMED {
            o.remove(core);
            if let Some(v) = o.remove(events) {
                o.insert(core.to_string(), v);
            }
        }
        o.insert("apiVersion".into(), json!("v1"));
    }
    out
}

/// A core/v1 Event in its events.k8s.io/v1 shape, without Go's omission rules applied.
pub fn to_events_shape(obj: &Value) -> Value {
    let mut out = obj.clone();
    if let Some(o) = out.as_object_mut() {
        for (core, events) in RENAMED {
            o.remove(events);
            if let Some(v) = o.remove(core) {
                o.insert(events.to_string(), v);
            }
        }
        o.insert("apiVersion".into(), json!("events.k8s.io/v1"));
    }
    out
}

/// The object in its core shape, borrowed when it is one already.
fn core_view(obj: &Value) -> Cow<'_, Value> {
    let events = obj["apiVersion"]
        .as_str()
        .is_some_and(|v| v.starts_with("events.k8s.io/"));
    if events {
        Cow::Owned(to_core_shape(obj))
    } else {
        Cow::Borrowed(obj)
    }
}

fn text<'a>(obj: &'a Value, key: &str) -> &'a str {
    obj[key].as_str().unwrap_or("")
}

/// A time field holds no time (absent, null, or empty).
fn is_zero_time(v: &Value) -> bool {
    v.as_str().is_none_or(str::is_empty)
}

const NAMESPACE_MISMATCH: &str = "does not match event.namespace";

/// `legacyValidateEvent`, on the core shape.
fn legacy_errors(ev: &Value, api: EventApi) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let namespace = ev["metadata"]["namespace"].as_str().unwrap_or("");
    let involved_ns = &ev["involvedObject"]["namespace"];
    let involved = involved_ns.as_str().unwrap_or("");
    let ns_err = || {
        field::invalid(
            "involvedObject.namespace",
            &json!(involved),
            NAMESPACE_MISMATCH,
        )
    };
    if is_zero_time(&ev["eventTime"]) {
        let mismatch = if involved.is_empty() {
            !namespace.is_empty() && namespace != "default"
        } else {
            namespace != involved
        };
        if mismatch {
            errs.push(ns_err());
        }
    } else {
        if involved.is_empty() && namespace != "default" && namespace != "kube-system" {
            errs.push(ns_err());
        }
        errs.extend(reporting_errors(ev, api));
    }
    for msg in crate::registry::object_meta::name_errors(
        namespace,
        crate::registry::object_meta::NameRule::Subdomain,
    ) {
        errs.push(field::invalid("namespace", &json!(namespace), &msg));
    }
    errs
}

/// The rules for events that carry an `eventTime`: who reported them, what happened.
fn reporting_errors(ev: &Value, api: EventApi) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let controller_field = match api {
        EventApi::Core => "reportingComponent",
        EventApi::EventsV1 => "reportingController",
    };
    let controller = text(ev, "reportingComponent");
    if controller.is_empty() {
        errs.push(field::required(controller_field, ""));
    }
    errs.extend(qualified_name_errors(controller_field, controller));
    let limited = [
        ("reportingInstance", "reportingInstance", 128, true),
        ("action", "action", 128, true),
        ("reason", "reason", 128, true),
        ("message", "message", 1024, false),
    ];
    for (key, path, limit, required) in limited {
        let value = text(ev, key);
        if required && value.is_empty() {
            errs.push(field::required(path, ""));
        }
        if value.len() > limit {
            errs.push(field::invalid(
                path,
                &json!(""),
                &format!("can have at most {limit} characters"),
            ));
        }
    }
    errs
}

/// `validateV1EventSeries`.
fn series_errors(ev: &Value) -> Vec<StatusCause> {
    let series = &ev["series"];
    if !series.is_object() {
        return Vec::new();
    }
    let mut errs = Vec::new();
    if series["count"].as_i64().unwrap_or(0) < 2 {
        errs.push(field::invalid(
            "series.count",
            &json!(""),
            "should be at least 2",
        ));
    }
    if is_zero_time(&series["lastObservedTime"]) {
        errs.push(field::required("series.lastObservedTime", ""));
    }
    errs
}

/// The strict rules of a create through events.k8s.io/v1.
fn strict_create_errors(ev: &Value) -> Vec<StatusCause> {
    let mut errs = series_errors(ev);
    if is_zero_time(&ev["eventTime"]) {
        errs.push(field::required("eventTime", ""));
    }
    let type_ = text(ev, "type");
    if type_ != "Normal" && type_ != "Warning" {
        errs.push(field::invalid(
            "type",
            &json!(""),
            &format!("has invalid value: {type_}"),
        ));
    }
    let unset = |path: &str| field::invalid(path, &json!(""), "needs to be unset");
    if !is_zero_time(&ev["firstTimestamp"]) {
        errs.push(unset("firstTimestamp"));
    }
    if !is_zero_time(&ev["lastTimestamp"]) {
        errs.push(unset("lastTimestamp"));
    }
    if ev["count"].as_i64().unwrap_or(0) != 0 {
        errs.push(unset("count"));
    }
    if !text(&ev["source"], "component").is_empty() || !text(&ev["source"], "host").is_empty() {
        errs.push(unset("source"));
    }
    errs
}

/// `ValidateEventCreate` of an event in either shape.
pub fn validate_create(obj: &Value, api: EventApi) -> Vec<StatusCause> {
    let ev = core_view(obj);
    let mut errs = legacy_errors(&ev, api);
    if api == EventApi::EventsV1 {
        errs.extend(strict_create_errors(&ev));
    }
    errs
}

/// A field's value for the immutability checks: absent and null are the same zero value.
fn field_value<'a>(ev: &'a Value, key: &str) -> &'a Value {
    match ev.get(key) {
        Some(v) => v,
        None => &Value::Null,
    }
}

/// `ValidateEventUpdate` of an event in either shape.
pub fn validate_update(obj: &Value, old: &Value, api: EventApi) -> Vec<StatusCause> {
    let ev = core_view(obj);
    let old = core_view(old);
    let mut errs = legacy_errors(&ev, api);
    if api == EventApi::Core {
        return errs;
    }
    if field_value(&ev, "series") != field_value(&old, "series") {
        errs.extend(series_errors(&ev));
    }
    // The apiserver checks `reason` twice, and reports it twice.
    let immutable = [
        ("involvedObject", "involvedObject"),
        ("reason", "reason"),
        ("message", "message"),
        ("source", "source"),
        ("firstTimestamp", "firstTimestamp"),
        ("lastTimestamp", "lastTimestamp"),
        ("count", "count"),
        ("reason", "reason"),
        ("type", "type"),
        ("eventTime", "eventTime"),
        ("action", "action"),
        ("related", "related"),
        ("reportingComponent", "reportingController"),
        ("reportingInstance", "reportingInstance"),
    ];
    for (key, path) in immutable {
        let new_value = field_value(&ev, key);
        if new_value != field_value(&old, key) {
            errs.push(field::invalid(path, new_value, "field is immutable"));
        }
    }
    errs
}

/// kubectl's event columns (the apiserver always prints the wide ones too).
pub fn columns() -> Columns {
    Columns::new(vec![
        Column::computed("Last Seen", "string", 0, "", |o| {
            json!(times(&core_view(o)).1)
        }),
        Column::computed("Type", "string", 0, "", |o| {
            json!(text(&core_view(o), "type"))
        }),
        Column::computed("Reason", "string", 0, "", |o| {
            json!(text(&core_view(o), "reason"))
        }),
        Column::computed("Object", "string", 0, "", |o| json!(target(&core_view(o)))),
        Column::computed("Subobject", "string", 1, "", |o| {
            json!(text(&core_view(o)["involvedObject"], "fieldPath"))
        }),
        Column::computed("Source", "string", 1, "", |o| json!(source(&core_view(o)))),
        Column::computed("Message", "string", 0, "", |o| {
            json!(text(&core_view(o), "message").trim())
        }),
        Column::computed("First Seen", "string", 1, "", |o| {
            json!(times(&core_view(o)).0)
        }),
        Column::computed("Count", "string", 1, "", |o| json!(count(&core_view(o)))),
        Column::computed("Name", "string", 1, "", |o| o["metadata"]["name"].clone()),
    ])
}

/// `translateTimestampSince` of a time field (`<unknown>` when zero).
fn since(v: &Value) -> String {
    if is_zero_time(v) {
        "<unknown>".into()
    } else {
        age(v.as_str())
    }
}

/// (first seen, last seen) as `printEvent` computes them.
fn times(ev: &Value) -> (String, String) {
    let first = if is_zero_time(&ev["firstTimestamp"]) {
        since(&ev["eventTime"])
    } else {
        since(&ev["firstTimestamp"])
    };
    let last = if ev["series"].is_object() {
        since(&ev["series"]["lastObservedTime"])
    } else if is_zero_time(&ev["lastTimestamp"]) {
        first.clone()
    } else {
        since(&ev["lastTimestamp"])
    };
    (first, last)
}

fn count(ev: &Value) -> i64 {
    if ev["series"].is_object() {
        return ev["series"]["count"].as_i64().unwrap_or(0);
    }
    match ev["count"].as_i64().unwrap_or(0) {
        0 => 1,
        n => n,
    }
}

/// `kind/name` of the involved object, the kind lower-cased.
fn target(ev: &Value) -> String {
    let involved = &ev["involvedObject"];
    let kind = text(involved, "kind").to_lowercase();
    match text(involved, "name") {
        "" => kind,
        name => format!("{kind}/{name}"),
    }
}

/// `formatEventSource`: the component (or reporting controller), then the host (or reporting
/// instance).
fn source(ev: &Value) -> String {
    let first = |a: &'_ str, b: &'_ str| {
        if a.is_empty() {
            b.to_string()
        } else {
            a.to_string()
        }
    };
    let component = first(
        text(&ev["source"], "component"),
        text(ev, "reportingComponent"),
    );
    let instance = first(text(&ev["source"], "host"), text(ev, "reportingInstance"));
    if instance.is_empty() {
        component
    } else {
        format!("{component}, {instance}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::rendered as messages;

    #[test]
    fn legacy_namespace_rules() {
        let ev = json!({"metadata": {"namespace": "a"}, "involvedObject": {"namespace": "b"}});
        assert_eq!(
            messages(validate_create(&ev, EventApi::Core)),
            ["involvedObject.namespace: Invalid value: \"b\": does not match event.namespace"]
        );
        let cluster =
            json!({"metadata": {"namespace": "default"}, "involvedObject": {"kind": "Node"}});
        assert!(validate_create(&cluster, EventApi::Core).is_empty());
    }

    #[test]
    fn strict_rules_of_events_v1() {
        let ev = json!({"apiVersion": "events.k8s.io/v1", "metadata": {"namespace": "default"},
            "regarding": {"namespace": "default"}, "eventTime": "2024-01-01T00:00:00.000000Z",
            "reportingController": "ctl", "reportingInstance": "i", "action": "A", "reason": "R",
            "type": "Bogus", "deprecatedCount": 3});
        assert_eq!(
            messages(validate_create(&ev, EventApi::EventsV1)),
            [
                "type: Invalid value: \"\": has invalid value: Bogus",
                "count: Invalid value: \"\": needs to be unset"
            ]
        );
    }

    #[test]
    fn shapes_round_trip() {
        let core = json!({"apiVersion": "v1", "kind": "Event", "involvedObject": {"kind": "Pod"},
            "message": "m", "reportingComponent": "c", "count": 2, "reason": "R"});
        let events = to_events_shape(&core);
        assert_eq!(events["regarding"]["kind"], "Pod");
        assert_eq!(events["note"], "m");
        assert_eq!(events["reportingController"], "c");
        assert_eq!(events["deprecatedCount"], 2);
        assert_eq!(to_core_shape(&events), core);
        assert_eq!(target(&core), "pod");
        assert_eq!(source(&core), "c");
        assert_eq!(count(&core), 2);
    }
}
