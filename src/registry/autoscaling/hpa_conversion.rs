//! The conversion between autoscaling/v2 HorizontalPodAutoscalers (the storage version) and
//! autoscaling/v1 ones, as `pkg/apis/autoscaling/v1/conversion.go` does it through the
//! internal type:
//!
//! - a Resource `cpu` metric with an `averageUtilization` target is v1's
//!   `targetCPUUtilizationPercentage` (the first one), and the last `cpu` current metric with
//!   an `averageUtilization` is `currentCPUUtilizationPercentage`;
//! - the other metrics, every current metric, the conditions and the behavior ride in
//!   annotations ([`METRICS`], [`CURRENT_METRICS`], [`CONDITIONS`], [`BEHAVIOR`]) as
//!   `encoding/json` writes them: the metrics and conditions as autoscaling/v1's own (unserved)
//!   `MetricSpec`, `MetricStatus` and `HorizontalPodAutoscalerCondition` types (the v2beta1
//!   shape: `targetAverageUtilization`, `metricName`...), the behavior as the *internal* Go
//!   type, which has no JSON tags (`{"ScaleUp":{"StabilizationWindowSeconds":0,...}}`);
//! - back in v2, the annotations' metrics come first and the v1 CPU target last; an object
//!   with no metric at all gets the 80% CPU target (v1's implicit default, applied by the
//!   conversion, not by defaulting); the round-trip annotations never reach storage.
//!
//! Annotations are read as Go's `json.Unmarshal` reads them: keys matched without regard to
//! case, a malformed annotation (not JSON, a value of the wrong type, a bad quantity) ignored
//! as a whole.

use serde_json::{json, Map, Value};

use crate::machinery::gofmt::go_json;
use crate::machinery::quantity;

/// Metrics other than the CPU utilization target, as v1 `MetricSpec`s.
pub const METRICS: &str = "autoscaling.alpha.kubernetes.io/metrics";
/// Every current metric, as v1 `MetricStatus`es.
pub const CURRENT_METRICS: &str = "autoscaling.alpha.kubernetes.io/current-metrics";
/// The status conditions, as v1 `HorizontalPodAutoscalerCondition`s.
pub const CONDITIONS: &str = "autoscaling.alpha.kubernetes.io/conditions";
/// The behavior, as the internal type.
pub const BEHAVIOR: &str = "autoscaling.alpha.kubernetes.io/behavior";
/// Annotations of the tolerance fields in older conversions; dropped like the others.
const TOLERANCE_DOWN: &str = "autoscaling.alpha.kubernetes.io/scale-down-tolerance";
const TOLERANCE_UP: &str = "autoscaling.alpha.kubernetes.io/scale-up-tolerance";

/// Every annotation `DropRoundTripHorizontalPodAutoscalerAnnotations` removes.
const ROUND_TRIP: [&str; 6] = [
    METRICS,
    BEHAVIOR,
    TOLERANCE_DOWN,
    TOLERANCE_UP,
    CURRENT_METRICS,
    CONDITIONS,
];

/// `DropRoundTripHorizontalPodAutoscalerAnnotations`: an annotation map left empty goes.
pub fn drop_round_trip_annotations(obj: &mut Value) {
    let Some(meta) = obj.get_mut("metadata").and_then(Value::as_object_mut) else {
        return;
    };
    let Some(ann) = meta.get_mut("annotations").and_then(Value::as_object_mut) else {
        return;
    };
    if !ROUND_TRIP.iter().any(|k| ann.contains_key(*k)) {
        return;
    }
    for k in ROUND_TRIP {
        ann.remove(k);
    }
    if ann.is_empty() {
        meta.remove("annotations");
    }
}

// ---- v2 -> v1 -------------------------------------------------------------------------------

/// A Go struct as `encoding/json` writes it: fields in declaration order, `None` omitted.
fn go_struct(fields: &[(&str, Option<String>)]) -> String {
    let body: Vec<String> = fields
        .iter()
        .filter_map(|(k, v)| v.as_ref().map(|v| format!("{}:{v}", go_json(&json!(k)))))
        .collect();
    format!("{{{}}}", body.join(","))
}

/// A field that is always written (`""`, `0` or `null` when absent, per `zero`).
fn always(v: &Value, zero: &str) -> Option<String> {
    Some(if v.is_null() { zero.into() } else { go_json(v) })
}

/// A pointer or `omitempty` field.
fn omitted(v: &Value) -> Option<String> {
    let empty = match v {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        _ => false,
    };
    (!empty).then(|| go_json(v))
}

/// A pointer field (written even when empty).
fn pointer(v: &Value) -> Option<String> {
    (!v.is_null()).then(|| go_json(v))
}

/// A `*metav1.LabelSelector`.
fn selector(v: &Value) -> Option<String> {
    if !v.is_object() {
        return None;
    }
    let exprs = v["matchExpressions"].as_array().filter(|e| !e.is_empty());
    let exprs = exprs.map(|e| {
        let items: Vec<String> = e
            .iter()
            .map(|x| {
                go_struct(&[
                    ("key", always(&x["key"], "\"\"")),
                    ("operator", always(&x["operator"], "\"\"")),
                    ("values", omitted(&x["values"])),
                ])
            })
            .collect();
        format!("[{}]", items.join(","))
    });
    Some(go_struct(&[
        ("matchLabels", omitted(&v["matchLabels"])),
        ("matchExpressions", exprs),
    ]))
}

/// A `CrossVersionObjectReference`.
fn reference(r: &Value) -> Option<String> {
    Some(go_struct(&[
        ("kind", always(&r["kind"], "\"\"")),
        ("name", always(&r["name"], "\"\"")),
        ("apiVersion", omitted(&r["apiVersion"])),
    ]))
}

/// A v2 `MetricSpec` as a v1 one.
fn metric_spec_v1(m: &Value) -> String {
    let source = |key: &str, f: fn(&Value, &Value, &Value) -> String| {
        let s = &m[key];
        s.is_object().then(|| f(s, &s["target"], &s["metric"]))
    };
    go_struct(&[
        ("type", always(&m["type"], "\"\"")),
        (
            "object",
            source("object", |s, t, metric| {
                go_struct(&[
                    ("target", reference(&s["describedObject"])),
                    ("metricName", always(&metric["name"], "\"\"")),
                    ("targetValue", always(&t["value"], "\"0\"")),
                    ("selector", selector(&metric["selector"])),
                    ("averageValue", pointer(&t["averageValue"])),
                ])
            }),
        ),
        (
            "pods",
            source("pods", |_, t, metric| {
                go_struct(&[
                    ("metricName", always(&metric["name"], "\"\"")),
                    ("targetAverageValue", always(&t["averageValue"], "\"0\"")),
                    ("selector", selector(&metric["selector"])),
                ])
            }),
        ),
        (
            "resource",
            source("resource", |s, t, _| resource_target_v1(s, t, false)),
        ),
        (
            "containerResource",
            source("containerResource", |s, t, _| {
                resource_target_v1(s, t, true)
            }),
        ),
        (
            "external",
            source("external", |_, t, metric| {
                go_struct(&[
                    ("metricName", always(&metric["name"], "\"\"")),
                    ("metricSelector", selector(&metric["selector"])),
                    ("targetValue", pointer(&t["value"])),
                    ("targetAverageValue", pointer(&t["averageValue"])),
                ])
            }),
        ),
    ])
}

/// A v1 `ResourceMetricSource` (or `ContainerResourceMetricSource`).
fn resource_target_v1(s: &Value, t: &Value, container: bool) -> String {
    let mut fields = vec![
        ("name", always(&s["name"], "\"\"")),
        (
            "targetAverageUtilization",
            pointer(&t["averageUtilization"]),
        ),
        ("targetAverageValue", pointer(&t["averageValue"])),
    ];
    if container {
        fields.push(("container", always(&s["container"], "\"\"")));
    }
    go_struct(&fields)
}

/// A v2 `MetricStatus` as a v1 one.
fn metric_status_v1(m: &Value) -> String {
    let source = |key: &str, f: fn(&Value, &Value, &Value) -> String| {
        let s = &m[key];
        s.is_object().then(|| f(s, &s["current"], &s["metric"]))
    };
    go_struct(&[
        ("type", always(&m["type"], "\"\"")),
        (
            "object",
            source("object", |s, c, metric| {
                go_struct(&[
                    ("target", reference(&s["describedObject"])),
                    ("metricName", always(&metric["name"], "\"\"")),
                    ("currentValue", always(&c["value"], "\"0\"")),
                    ("selector", selector(&metric["selector"])),
                    ("averageValue", pointer(&c["averageValue"])),
                ])
            }),
        ),
        (
            "pods",
            source("pods", |_, c, metric| {
                go_struct(&[
                    ("metricName", always(&metric["name"], "\"\"")),
                    ("currentAverageValue", always(&c["averageValue"], "\"0\"")),
                    ("selector", selector(&metric["selector"])),
                ])
            }),
        ),
        (
            "resource",
            source("resource", |s, c, _| resource_current_v1(s, c, false)),
        ),
        (
            "containerResource",
            source("containerResource", |s, c, _| {
                resource_current_v1(s, c, true)
            }),
        ),
        (
            "external",
            source("external", |_, c, metric| {
                go_struct(&[
                    ("metricName", always(&metric["name"], "\"\"")),
                    ("metricSelector", selector(&metric["selector"])),
                    ("currentValue", always(&c["value"], "\"0\"")),
                    ("currentAverageValue", pointer(&c["averageValue"])),
                ])
            }),
        ),
    ])
}

/// A v1 `ResourceMetricStatus` (or `ContainerResourceMetricStatus`).
fn resource_current_v1(s: &Value, c: &Value, container: bool) -> String {
    let mut fields = vec![
        ("name", always(&s["name"], "\"\"")),
        (
            "currentAverageUtilization",
            pointer(&c["averageUtilization"]),
        ),
        ("currentAverageValue", always(&c["averageValue"], "\"0\"")),
    ];
    if container {
        fields.push(("container", always(&s["container"], "\"\"")));
    }
    go_struct(&fields)
}

/// A condition as v1's `HorizontalPodAutoscalerCondition` (a zero `metav1.Time` is `null`).
fn condition_v1(c: &Value) -> String {
    go_struct(&[
        ("type", always(&c["type"], "\"\"")),
        ("status", always(&c["status"], "\"\"")),
        (
            "lastTransitionTime",
            always(&c["lastTransitionTime"], "null"),
        ),
        ("reason", omitted(&c["reason"])),
        ("message", omitted(&c["message"])),
    ])
}

/// The behavior as the internal Go type (no JSON tags: Go's field names, `null` for nil).
fn behavior_internal(b: &Value) -> String {
    let rules = |r: &Value| {
        if !r.is_object() {
            return Some("null".to_string());
        }
        let policies = r["policies"].as_array().map(|ps| {
            let items: Vec<String> = ps
                .iter()
                .map(|p| {
                    go_struct(&[
                        ("Type", always(&p["type"], "\"\"")),
                        ("Value", always(&p["value"], "0")),
                        ("PeriodSeconds", always(&p["periodSeconds"], "0")),
                    ])
                })
                .collect();
            format!("[{}]", items.join(","))
        });
        Some(go_struct(&[
            (
                "StabilizationWindowSeconds",
                always(&r["stabilizationWindowSeconds"], "null"),
            ),
            ("SelectPolicy", always(&r["selectPolicy"], "null")),
            ("Policies", policies.or(Some("null".into()))),
            ("Tolerance", always(&r["tolerance"], "null")),
        ]))
    };
    go_struct(&[
        ("ScaleUp", rules(&b["scaleUp"])),
        ("ScaleDown", rules(&b["scaleDown"])),
    ])
}

/// Whether a v2 metric is the one v1 shows as `targetCPUUtilizationPercentage`.
fn is_cpu_utilization(m: &Value) -> bool {
    m["type"] == "Resource"
        && m["resource"]["name"] == "cpu"
        && !m["resource"]["target"]["averageUtilization"].is_null()
}

/// A list written as a JSON array of Go structs.
fn go_list<'a>(items: impl Iterator<Item = &'a Value>, f: fn(&Value) -> String) -> String {
    let items: Vec<String> = items.map(f).collect();
    format!("[{}]", items.join(","))
}

/// A v2 object as autoscaling/v1 shows it (before the v1 type's omission rules).
pub fn to_v1(v2: &Value) -> Value {
    let spec = &v2["spec"];
    let status = &v2["status"];
    let mut obj = v2.clone();
    drop_round_trip_annotations(&mut obj);
    let metrics = spec["metrics"].as_array().map_or(&[][..], Vec::as_slice);
    let current = status["currentMetrics"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    let conditions = status["conditions"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    let mut added = Map::new();
    let others: Vec<&Value> = metrics.iter().filter(|m| !is_cpu_utilization(m)).collect();
    if !others.is_empty() {
        added.insert(
            METRICS.into(),
            json!(go_list(others.into_iter(), metric_spec_v1)),
        );
    }
    if !current.is_empty() {
        added.insert(
            CURRENT_METRICS.into(),
            json!(go_list(current.iter(), metric_status_v1)),
        );
    }
    if spec["behavior"].is_object() {
        added.insert(BEHAVIOR.into(), json!(behavior_internal(&spec["behavior"])));
    }
    if !conditions.is_empty() {
        added.insert(
            CONDITIONS.into(),
            json!(go_list(conditions.iter(), condition_v1)),
        );
    }
    if !added.is_empty() {
        let meta = &mut obj["metadata"];
        if !meta["annotations"].is_object() {
            meta["annotations"] = json!({});
        }
        if let Some(ann) = meta["annotations"].as_object_mut() {
            ann.extend(added);
        }
    }
    let mut v1_spec = json!({"scaleTargetRef": spec["scaleTargetRef"],
        "minReplicas": spec["minReplicas"], "maxReplicas": spec["maxReplicas"]});
    if let Some(cpu) = metrics.iter().find(|m| is_cpu_utilization(m)) {
        v1_spec["targetCPUUtilizationPercentage"] =
            cpu["resource"]["target"]["averageUtilization"].clone();
    }
    let mut v1_status = json!({});
    for key in [
        "observedGeneration",
        "lastScaleTime",
        "currentReplicas",
        "desiredReplicas",
    ] {
        v1_status[key] = status[key].clone();
    }
    let cpu_now = current
        .iter()
        .filter(|m| m["type"] == "Resource" && m["resource"]["name"] == "cpu")
        .rev()
        .find_map(|m| m["resource"]["current"]["averageUtilization"].as_i64());
    if let Some(u) = cpu_now {
        v1_status["currentCPUUtilizationPercentage"] = json!(u);
    }
    obj["apiVersion"] = json!("autoscaling/v1");
    obj["spec"] = strip_nulls(v1_spec);
    obj["status"] = strip_nulls(v1_status);
    obj
}

/// Drops the object's null members (fields the source did not have).
fn strip_nulls(mut v: Value) -> Value {
    if let Some(o) = v.as_object_mut() {
        o.retain(|_, x| !x.is_null());
    }
    v
}

// ---- v1 -> v2 -------------------------------------------------------------------------------

/// A member as `encoding/json` finds it: the exact key, else one equal without regard to case.
fn get<'a>(o: &'a Value, name: &str) -> &'a Value {
    let Some(m) = o.as_object() else {
        return &Value::Null;
    };
    m.get(name)
        .or_else(|| {
            m.iter()
                .find(|(k, _)| k.eq_ignore_ascii_case(name))
                .map(|(_, v)| v)
        })
        .unwrap_or(&Value::Null)
}

/// Why an annotation cannot be decoded: Go's decoder would fail, and the annotation is ignored.
struct Malformed;

type Decoded<T> = Result<T, Malformed>;

/// A string field (`""` when absent).
fn string(v: &Value) -> Decoded<Value> {
    match v {
        Value::Null => Ok(json!("")),
        Value::String(_) => Ok(v.clone()),
        _ => Err(Malformed),
    }
}

/// An optional integer field.
fn int(v: &Value) -> Decoded<Option<Value>> {
    match v {
        Value::Null => Ok(None),
        Value::Number(n) if n.is_i64() => Ok(Some(v.clone())),
        _ => Err(Malformed),
    }
}

/// An optional quantity, canonical.
fn qty(v: &Value) -> Decoded<Option<Value>> {
    let text = match v {
        Value::Null => return Ok(None),
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        _ => return Err(Malformed),
    };
    quantity::canonicalize(&text)
        .map(|q| Some(json!(q)))
        .map_err(|_| Malformed)
}

/// A quantity that is a value (not a pointer) in Go: zero when absent.
fn qty_value(v: &Value) -> Decoded<Value> {
    Ok(qty(v)?.unwrap_or_else(|| json!("0")))
}

/// An optional label selector, kept as given (the v2 type checks its shape).
fn label_selector(v: &Value) -> Decoded<Option<Value>> {
    match v {
        Value::Null => Ok(None),
        Value::Object(_) => Ok(Some(v.clone())),
        _ => Err(Malformed),
    }
}

/// Builds an object of the present members.
fn members(fields: Vec<(&str, Option<Value>)>) -> Value {
    Value::Object(
        fields
            .into_iter()
            .filter_map(|(k, v)| v.map(|v| (k.to_string(), v)))
            .collect(),
    )
}

/// A v2 `MetricIdentifier`.
fn identifier(name: &Value, sel: &Value) -> Decoded<Value> {
    Ok(members(vec![
        ("name", Some(string(name)?)),
        ("selector", label_selector(sel)?),
    ]))
}

/// A v1 `CrossVersionObjectReference`, as v2's.
fn reference_v2(r: &Value) -> Decoded<Value> {
    let api_version = string(get(r, "apiVersion"))?;
    Ok(members(vec![
        ("kind", Some(string(get(r, "kind"))?)),
        ("name", Some(string(get(r, "name"))?)),
        ("apiVersion", Some(api_version).filter(|v| v != "")),
    ]))
}

/// A v1 `MetricSpec` (from the annotation) as a v2 one.
fn metric_spec_v2(m: &Value) -> Decoded<Value> {
    let mut out = json!({"type": string(get(m, "type"))?});
    let object = get(m, "object");
    if object.is_object() {
        let average = qty(get(object, "averageValue"))?;
        let value = qty_value(get(object, "targetValue"))?;
        let (kind, value) = match &average {
            None => ("Value", Some(value)),
            Some(_) => ("AverageValue", Some(value).filter(|v| v != "0")),
        };
        out["object"] = json!({
            "describedObject": reference_v2(get(object, "target"))?,
            "metric": identifier(get(object, "metricName"), get(object, "selector"))?,
            "target": members(vec![("type", Some(json!(kind))), ("value", value),
                ("averageValue", average)]),
        });
    }
    let pods = get(m, "pods");
    if pods.is_object() {
        out["pods"] = json!({
            "metric": identifier(get(pods, "metricName"), get(pods, "selector"))?,
            "target": {"type": "AverageValue",
                "averageValue": qty_value(get(pods, "targetAverageValue"))?},
        });
    }
    for key in ["resource", "containerResource"] {
        let r = get(m, key);
        if r.is_object() {
            out[key] = resource_target_v2(r, key == "containerResource")?;
        }
    }
    let external = get(m, "external");
    if external.is_object() {
        let value = qty(get(external, "targetValue"))?;
        let kind = if value.is_none() {
            "AverageValue"
        } else {
            "Value"
        };
        out["external"] = json!({
            "metric": identifier(get(external, "metricName"), get(external, "metricSelector"))?,
            "target": members(vec![("type", Some(json!(kind))), ("value", value),
                ("averageValue", qty(get(external, "targetAverageValue"))?)]),
        });
    }
    Ok(out)
}

/// A v1 resource (or container resource) metric source as v2's.
fn resource_target_v2(r: &Value, container: bool) -> Decoded<Value> {
    let utilization = int(get(r, "targetAverageUtilization"))?;
    let kind = if utilization.is_none() {
        "AverageValue"
    } else {
        "Utilization"
    };
    let mut out = json!({
        "name": string(get(r, "name"))?,
        "target": members(vec![("type", Some(json!(kind))),
            ("averageValue", qty(get(r, "targetAverageValue"))?),
            ("averageUtilization", utilization)]),
    });
    if container {
        out["container"] = string(get(r, "container"))?;
    }
    Ok(out)
}

/// A v1 `MetricStatus` (from the annotation) as a v2 one.
fn metric_status_v2(m: &Value) -> Decoded<Value> {
    let mut out = json!({"type": string(get(m, "type"))?});
    let object = get(m, "object");
    if object.is_object() {
        out["object"] = json!({
            "describedObject": reference_v2(get(object, "target"))?,
            "metric": identifier(get(object, "metricName"), get(object, "selector"))?,
            "current": members(vec![("value", Some(qty_value(get(object, "currentValue"))?)),
                ("averageValue", qty(get(object, "averageValue"))?)]),
        });
    }
    let pods = get(m, "pods");
    if pods.is_object() {
        out["pods"] = json!({
            "metric": identifier(get(pods, "metricName"), get(pods, "selector"))?,
            "current": {"averageValue": qty_value(get(pods, "currentAverageValue"))?},
        });
    }
    for key in ["resource", "containerResource"] {
        let r = get(m, key);
        if r.is_object() {
            let mut status = json!({
                "name": string(get(r, "name"))?,
                "current": members(vec![
                    ("averageValue", Some(qty_value(get(r, "currentAverageValue"))?)),
                    ("averageUtilization", int(get(r, "currentAverageUtilization"))?)]),
            });
            if key == "containerResource" {
                status["container"] = string(get(r, "container"))?;
            }
            out[key] = status;
        }
    }
    let external = get(m, "external");
    if external.is_object() {
        out["external"] = json!({
            "metric": identifier(get(external, "metricName"), get(external, "metricSelector"))?,
            "current": members(vec![("value", Some(qty_value(get(external, "currentValue"))?)),
                ("averageValue", qty(get(external, "currentAverageValue"))?)]),
        });
    }
    Ok(out)
}

/// A v1 condition (from the annotation) as a v2 one.
fn condition_v2(c: &Value) -> Decoded<Value> {
    let time = match get(c, "lastTransitionTime") {
        Value::Null => None,
        t @ Value::String(_) => Some(t.clone()),
        _ => return Err(Malformed),
    };
    Ok(members(vec![
        ("type", Some(string(get(c, "type"))?)),
        ("status", Some(string(get(c, "status"))?)),
        ("lastTransitionTime", time),
        ("reason", Some(string(get(c, "reason"))?)),
        ("message", Some(string(get(c, "message"))?)),
    ]))
}

/// The internal behavior (from the annotation) as v2's; `None` when both directions are nil.
fn behavior_v2(b: &Value) -> Decoded<Option<Value>> {
    let rules = |r: &Value| -> Decoded<Option<Value>> {
        if r.is_null() {
            return Ok(None);
        }
        if !r.is_object() {
            return Err(Malformed);
        }
        let policies = match get(r, "Policies") {
            Value::Null => None,
            Value::Array(ps) => Some(Value::Array(
                ps.iter()
                    .map(|p| {
                        Ok(members(vec![
                            ("type", Some(string(get(p, "Type"))?)),
                            ("value", int(get(p, "Value"))?),
                            ("periodSeconds", int(get(p, "PeriodSeconds"))?),
                        ]))
                    })
                    .collect::<Decoded<Vec<Value>>>()?,
            )),
            _ => return Err(Malformed),
        };
        let select = match get(r, "SelectPolicy") {
            Value::Null => None,
            v => Some(string(v)?),
        };
        Ok(Some(members(vec![
            (
                "stabilizationWindowSeconds",
                int(get(r, "StabilizationWindowSeconds"))?,
            ),
            ("selectPolicy", select),
            ("policies", policies),
            ("tolerance", qty(get(r, "Tolerance"))?),
        ])))
    };
    if !b.is_object() {
        return if b.is_null() {
            Ok(None)
        } else {
            Err(Malformed)
        };
    }
    let up = rules(get(b, "ScaleUp"))?;
    let down = rules(get(b, "ScaleDown"))?;
    if up.is_none() && down.is_none() {
        return Ok(None);
    }
    Ok(Some(members(vec![("scaleUp", up), ("scaleDown", down)])))
}

/// An annotation holding a JSON list, each item decoded by `f`; `None` when absent or
/// malformed.
fn annotated_list(ann: &Value, key: &str, f: fn(&Value) -> Decoded<Value>) -> Option<Vec<Value>> {
    let parsed: Value = serde_json::from_str(ann[key].as_str()?).ok()?;
    match parsed {
        Value::Null => Some(Vec::new()),
        Value::Array(items) => items.iter().map(f).collect::<Decoded<Vec<_>>>().ok(),
        _ => None,
    }
}

/// A v1 object as autoscaling/v2 holds it (before the v2 type's omission rules). No v2
/// defaults: the apiserver validates what the conversion gives.
pub fn to_v2(v1: &Value) -> Value {
    let spec = &v1["spec"];
    let status = &v1["status"];
    let ann = v1["metadata"]["annotations"].clone();
    let mut obj = v1.clone();
    drop_round_trip_annotations(&mut obj);
    let cpu_target = |u: &Value| {
        json!({"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": u}}})
    };
    let mut metrics: Vec<Value> = Vec::new();
    if !spec["targetCPUUtilizationPercentage"].is_null() {
        metrics.push(cpu_target(&spec["targetCPUUtilizationPercentage"]));
    }
    if let Some(mut others) = annotated_list(&ann, METRICS, metric_spec_v2) {
        others.extend(metrics.into_iter().take(1));
        metrics = others;
    }
    if metrics.is_empty() {
        metrics.push(cpu_target(&json!(80)));
    }
    let behavior = ann[BEHAVIOR]
        .as_str()
        .and_then(|s| serde_json::from_str::<Value>(s).ok())
        .and_then(|b| behavior_v2(&b).ok().flatten());
    let v2_spec = json!({"scaleTargetRef": spec["scaleTargetRef"],
        "minReplicas": spec["minReplicas"], "maxReplicas": spec["maxReplicas"],
        "metrics": metrics, "behavior": behavior});
    let mut v2_status = json!({});
    for key in [
        "observedGeneration",
        "lastScaleTime",
        "currentReplicas",
        "desiredReplicas",
    ] {
        v2_status[key] = status[key].clone();
    }
    let cpu_now = &status["currentCPUUtilizationPercentage"];
    if !cpu_now.is_null() {
        v2_status["currentMetrics"] = json!([{"type": "Resource", "resource": {"name": "cpu",
            "current": {"averageUtilization": cpu_now}}}]);
    }
    if let Some(current) = annotated_list(&ann, CURRENT_METRICS, metric_status_v2) {
        v2_status["currentMetrics"] = json!(current);
    }
    if let Some(conditions) = annotated_list(&ann, CONDITIONS, condition_v2) {
        v2_status["conditions"] = json!(conditions);
    }
    obj["apiVersion"] = json!("autoscaling/v2");
    obj["spec"] = strip_nulls(v2_spec);
    obj["status"] = strip_nulls(v2_status);
    obj
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v2(spec: Value, status: Value) -> Value {
        json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "h", "namespace": "default"},
            "spec": spec, "status": status})
    }

    fn reference() -> Value {
        json!({"kind": "Deployment", "name": "web", "apiVersion": "apps/v1"})
    }

    /// (v2 spec, v2 status) -> (v1 spec, v1 status, annotations), and back to the same v2.
    #[test]
    fn v2_to_v1_and_back() {
        let cases = [
            (
                json!({"scaleTargetRef": reference(), "minReplicas": 1, "maxReplicas": 3,
                    "metrics": [{"type": "Resource", "resource": {"name": "cpu",
                        "target": {"type": "Utilization", "averageUtilization": 50}}}]}),
                json!({"desiredReplicas": 0}),
                json!({"scaleTargetRef": reference(), "minReplicas": 1, "maxReplicas": 3,
                    "targetCPUUtilizationPercentage": 50}),
                json!({"desiredReplicas": 0}),
                json!(null),
            ),
            (
                json!({"scaleTargetRef": reference(), "maxReplicas": 3,
                    "metrics": [{"type": "Resource", "resource": {"name": "memory",
                        "target": {"type": "AverageValue", "averageValue": "512Mi"}}},
                        {"type": "Pods", "pods": {"metric": {"name": "qps"},
                        "target": {"type": "AverageValue", "averageValue": "10"}}}],
                    "behavior": {"scaleDown": {"stabilizationWindowSeconds": 60,
                        "policies": [{"type": "Pods", "value": 1, "periodSeconds": 30}]}}}),
                json!({"currentReplicas": 2, "desiredReplicas": 2,
                    "currentMetrics": [{"type": "Resource", "resource": {"name": "cpu",
                        "current": {"averageUtilization": 42, "averageValue": "100m"}}}],
                    "conditions": [{"type": "AbleToScale", "status": "True",
                        "lastTransitionTime": "2024-01-01T00:00:00Z", "reason": "Ready",
                        "message": "a <b> & c"}]}),
                json!({"scaleTargetRef": reference(), "maxReplicas": 3}),
                json!({"currentReplicas": 2, "desiredReplicas": 2,
                    "currentCPUUtilizationPercentage": 42}),
                json!({
                    METRICS: r#"[{"type":"Resource","resource":{"name":"memory","targetAverageValue":"512Mi"}},{"type":"Pods","pods":{"metricName":"qps","targetAverageValue":"10"}}]"#,
                    BEHAVIOR: r#"{"ScaleUp":null,"ScaleDown":{"StabilizationWindowSeconds":60,"SelectPolicy":null,"Policies":[{"Type":"Pods","Value":1,"PeriodSeconds":30}],"Tolerance":null}}"#,
                    CURRENT_METRICS: r#"[{"type":"Resource","resource":{"name":"cpu","currentAverageUtilization":42,"currentAverageValue":"100m"}}]"#,
                    CONDITIONS: r#"[{"type":"AbleToScale","status":"True","lastTransitionTime":"2024-01-01T00:00:00Z","reason":"Ready","message":"a \u003cb\u003e \u0026 c"}]"#,
                }),
            ),
            (
                json!({"scaleTargetRef": reference(), "maxReplicas": 3,
                    "metrics": [{"type": "External", "external": {"metric": {"name": "q",
                        "selector": {"matchLabels": {"a": "b"},
                        "matchExpressions": [{"key": "k", "operator": "Exists"}]}},
                        "target": {"type": "Value", "value": "5"}}},
                        {"type": "Object", "object": {"describedObject": {"kind": "Service",
                        "name": "s"}, "metric": {"name": "rps"},
                        "target": {"type": "AverageValue", "averageValue": "3"}}}]}),
                json!({"desiredReplicas": 1}),
                json!({"scaleTargetRef": reference(), "maxReplicas": 3}),
                json!({"desiredReplicas": 1}),
                json!({METRICS: r#"[{"type":"External","external":{"metricName":"q","metricSelector":{"matchLabels":{"a":"b"},"matchExpressions":[{"key":"k","operator":"Exists"}]},"targetValue":"5"}},{"type":"Object","object":{"target":{"kind":"Service","name":"s"},"metricName":"rps","targetValue":"0","averageValue":"3"}}]"#}),
            ),
        ];
        for (spec, status, v1_spec, v1_status, annotations) in cases {
            let original = v2(spec, status);
            let v1 = to_v1(&original);
            assert_eq!(v1["apiVersion"], "autoscaling/v1");
            assert_eq!(v1["spec"], v1_spec);
            assert_eq!(v1["status"], v1_status);
            assert_eq!(v1["metadata"]["annotations"], annotations);
            let back = to_v2(&v1);
            assert_eq!(back, original, "round trip of {v1}");
        }
    }

    #[test]
    fn v1_without_metrics_gets_the_cpu_default_and_cpu_goes_last() {
        let v1 = json!({"apiVersion": "autoscaling/v1", "metadata": {"name": "h",
            "annotations": {"keep": "me"}},
            "spec": {"scaleTargetRef": reference(), "minReplicas": 1, "maxReplicas": 2},
            "status": {"currentReplicas": 0, "desiredReplicas": 0}});
        let out = to_v2(&v1);
        assert_eq!(
            out["spec"]["metrics"],
            json!([{"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 80}}}])
        );
        assert_eq!(out["metadata"]["annotations"], json!({"keep": "me"}));
        let mut v1 = v1;
        v1["spec"]["targetCPUUtilizationPercentage"] = json!(70);
        v1["metadata"]["annotations"][METRICS] =
            json!(r#"[{"TYPE":"Pods","pods":{"METRICNAME":"x","targetAverageValue":"1k"}}]"#);
        v1["metadata"]["annotations"][BEHAVIOR] = json!(r#"{"scaleUp":{"Policies":null}}"#);
        let out = to_v2(&v1);
        assert_eq!(out["spec"]["metrics"][0]["pods"]["metric"]["name"], "x");
        assert_eq!(
            out["spec"]["metrics"][1]["resource"]["target"]["averageUtilization"],
            70
        );
        assert_eq!(out["spec"]["behavior"], json!({"scaleUp": {}}));
        v1["metadata"]["annotations"][METRICS] =
            json!(r#"[{"type":"Pods","pods":{"targetAverageValue":"x"}}]"#);
        let out = to_v2(&v1);
        assert_eq!(
            out["spec"]["metrics"].as_array().map(Vec::len),
            Some(1),
            "malformed annotation ignored"
        );
        assert_eq!(out["metadata"]["annotations"], json!({"keep": "me"}));
    }
}
