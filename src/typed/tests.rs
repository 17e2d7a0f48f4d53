//! Unit tests of the normalizer: the committed cases (Go's output for inputs chosen by hand,
//! src/data/k8s-1.36/testdata/typed-cases.jsonl) and a check against a file of cases with Go's
//! answers (`TYPED_CASES=/path cargo test --lib typed::tests::cases_from_env -- --ignored`).

use serde_json::{json, Value};

use super::*;

const CASES: &str = include_str!("../data/k8s-1.36/testdata/typed-cases.jsonl");

/// One case: an input and what Go made of it.
#[derive(serde::Deserialize)]
struct Case {
    name: String,
    #[serde(rename = "apiVersion")]
    api_version: String,
    kind: String,
    input: String,
    #[serde(default)]
    json: Option<Value>,
    #[serde(default)]
    error: Option<String>,
    #[serde(default)]
    unknown: Vec<String>,
}

/// Runs the cases; returns the mismatches, described.
fn check(cases: &str) -> (usize, Vec<String>) {
    let mut bad = Vec::new();
    let mut n = 0;
    for line in cases.lines().filter(|l| !l.trim().is_empty()) {
        let c: Case = serde_json::from_str(line).unwrap();
        n += 1;
        let input: Value = match serde_json::from_str(&c.input) {
            Ok(v) => v,
            Err(e) => {
                bad.push(format!("{}: input does not parse: {e}", c.name));
                continue;
            }
        };
        let got = normalize(&c.api_version, &c.kind, input);
        match (&c.error, got) {
            (Some(want), Err(e)) if e.to_string() == *want => {}
            (Some(want), Err(e)) => bad.push(format!(
                "{}: ERROR\n  go:   {want}\n  ours: {e}\n  input: {}",
                c.name, c.input
            )),
            (Some(want), Ok(_)) => bad.push(format!(
                "{}: ERROR\n  go:   {want}\n  ours: ok\n  input: {}",
                c.name, c.input
            )),
            (None, Err(e)) => bad.push(format!(
                "{}: OK expected\n  ours: {e}\n  input: {}",
                c.name, c.input
            )),
            (None, Ok(got)) => {
                let want = c.json.clone().unwrap_or(Value::Null);
                if got.value != want {
                    let mut diffs = Vec::new();
                    diff("", &want, &got.value, &mut diffs);
                    bad.push(format!(
                        "{}: VALUE\n  {}\n  input: {}",
                        c.name,
                        diffs.join("\n  "),
                        c.input
                    ));
                }
                let mut a = got.unknown.clone();
                let mut b = c.unknown.clone();
                a.sort();
                b.sort();
                if a != b {
                    bad.push(format!(
                        "{}: UNKNOWN\n  go:   {:?}\n  ours: {:?}",
                        c.name, c.unknown, got.unknown
                    ));
                }
            }
        }
    }
    (n, bad)
}

/// The paths where two values differ, with both sides.
fn diff(path: &str, want: &Value, got: &Value, out: &mut Vec<String>) {
    match (want, got) {
        (Value::Object(a), Value::Object(b)) => {
            for k in a.keys().chain(b.keys().filter(|k| !a.contains_key(*k))) {
                let p = format!("{path}.{k}");
                match (a.get(k), b.get(k)) {
                    (Some(x), Some(y)) => diff(&p, x, y, out),
                    (x, y) => out.push(format!("{p}: go {x:?}, ours {y:?}")),
                }
            }
        }
        (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
            for (i, (x, y)) in a.iter().zip(b).enumerate() {
                diff(&format!("{path}[{i}]"), x, y, out);
            }
        }
        (a, b) if a != b => out.push(format!("{path}: go {a}, ours {b}")),
        _ => {}
    }
}

#[test]
fn committed_cases_match_go() {
    let (n, bad) = check(CASES);
    assert!(n >= 300, "{n}");
    assert!(
        bad.is_empty(),
        "{} of {n} cases differ:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
fn committed_cases_cover_many_kinds_and_every_outcome() {
    let cases: Vec<Case> = CASES
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let kinds: std::collections::BTreeSet<_> =
        cases.iter().map(|c| (&c.api_version, &c.kind)).collect();
    assert!(kinds.len() >= 40, "{}", kinds.len());
    let groups: std::collections::BTreeSet<_> =
        kinds.iter().map(|(v, _)| v.split('/').next()).collect();
    assert!(groups.len() >= 15, "{groups:?}");
    assert!(cases.iter().filter(|c| c.error.is_some()).count() >= 60);
    assert!(cases.iter().filter(|c| !c.unknown.is_empty()).count() >= 5);
}

fn norm(v: Value) -> Normalized {
    let (api_version, kind) = (
        v["apiVersion"].as_str().unwrap(),
        v["kind"].as_str().unwrap(),
    );
    normalize(api_version, kind, v.clone()).unwrap()
}

fn error(api_version: &str, kind: &str, v: Value) -> String {
    normalize(api_version, kind, v).unwrap_err().to_string()
}

#[test]
fn go_s_message_names_the_innermost_struct_and_the_path_of_json_names() {
    let d = |spec: Value| error("apps/v1", "Deployment", json!({"spec": spec}));
    assert_eq!(
        d(json!({"replicas": "3"})),
        "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32"
    );
    assert_eq!(
        d(json!({"replicas": 3000000000u64})),
        "json: cannot unmarshal number 3000000000 into Go struct field DeploymentSpec.spec.replicas of type int32"
    );
    assert_eq!(
        d(json!({"template": {"spec": {"containers": [{"name": "c", "ports": [{"containerPort": "80"}]}]}}})),
        "json: cannot unmarshal string into Go struct field ContainerPort.spec.template.spec.containers.ports.containerPort of type int32"
    );
    assert_eq!(
        d(json!({"template": {"spec": {"volumes": [{"hostPath": {"path": 5}}]}}})),
        "json: cannot unmarshal number into Go struct field HostPathVolumeSource.spec.template.spec.volumes.VolumeSource.hostPath.path of type string"
    );
    assert_eq!(
        error("apps/v1", "Deployment", json!({"kind": 5})),
        "json: cannot unmarshal number into Go struct field Deployment.TypeMeta.kind of type string"
    );
    assert_eq!(
        error("apps/v1", "Deployment", json!([])),
        "json: cannot unmarshal array into Go value of type v1.Deployment"
    );
}

#[test]
fn unknown_fields_are_dropped_and_reported_with_indexes() {
    let out = norm(json!({
        "apiVersion": "v1", "kind": "Pod", "bogus": 1,
        "spec": {"containers": [{"name": "a"}, {"name": "b", "extra": {"x": 1}}]},
    }));
    assert_eq!(out.unknown, ["bogus", "spec.containers[1].extra"]);
    assert!(out.value.get("bogus").is_none());
    assert!(out.value["spec"]["containers"][1].get("extra").is_none());
    let many: serde_json::Map<String, Value> =
        (0..150).map(|i| (format!("k{i:03}"), json!(i))).collect();
    let out = normalize("v1", "ConfigMap", Value::Object(many)).unwrap();
    assert_eq!(out.unknown.len(), normalize::MAX_UNKNOWN);
}

#[test]
fn go_s_omission_rules_apply_per_field() {
    let out = norm(json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "spec": {"replicas": 0, "paused": false, "template": {"spec": {"containers": []}}},
    }));
    let spec = &out.value["spec"];
    assert_eq!(spec["replicas"], 0, "a pointer keeps its zero value");
    assert!(spec.get("paused").is_none(), "omitempty drops false");
    assert_eq!(
        spec["selector"],
        Value::Null,
        "a nil pointer without omitempty is null"
    );
    assert_eq!(
        spec["strategy"],
        json!({}),
        "a value struct is always written"
    );
    assert_eq!(spec["template"]["spec"]["containers"], json!([]));
    assert_eq!(out.value["status"], json!({}));
    assert_eq!(
        out.value["metadata"],
        json!({}),
        "creationTimestamp is omitzero"
    );
    let role = norm(json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole"}));
    assert_eq!(
        role.value["rules"],
        Value::Null,
        "a nil slice without omitempty"
    );
}

#[test]
fn quantities_times_and_int_or_strings_take_go_s_canonical_form() {
    let out = norm(json!({
        "apiVersion": "v1", "kind": "ResourceQuota",
        "spec": {"hard": {"cpu": "1.5", "memory": "0.5Gi", "pods": 10, "x": null}},
    }));
    assert_eq!(
        out.value["spec"]["hard"],
        json!({"cpu": "1500m", "memory": "512Mi", "pods": "10", "x": "0"})
    );
    let out = norm(json!({
        "apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
        "metadata": {"creationTimestamp": "2025-01-01T01:02:03.9+02:00"},
        "spec": {"renewTime": "2025-01-01T00:00:00.123456+01:00"},
    }));
    assert_eq!(
        out.value["metadata"]["creationTimestamp"],
        "2024-12-31T23:02:03Z"
    );
    assert_eq!(
        out.value["spec"]["renewTime"],
        "2024-12-31T23:00:00.123456Z"
    );
    assert_eq!(
        error("v1", "Service", json!({"spec": {"ports": [{"targetPort": 1.5}]}})),
        "json: cannot unmarshal number 1.5 into Go struct field ServicePort.spec.ports.targetPort of type int32"
    );
    assert_eq!(
        error(
            "v1",
            "Namespace",
            json!({"metadata": {"creationTimestamp": "2025-13-01T00:00:00Z"}})
        ),
        "parsing time \"2025-13-01T00:00:00Z\": month out of range"
    );
    assert_eq!(
        error("v1", "Secret", json!({"data": {"a": "aGVsbG8"}})),
        "illegal base64 data at input byte 4"
    );
}

/// Where the result differs from Go's, knowingly: serde_json keeps no number literals, so a
/// number with an exponent, or beyond 64 bits, is quoted as serde_json writes it, and a
/// quantity given as such a number is read from its plain decimal digits.
#[test]
fn documented_divergences_from_number_literals() {
    // Go: `number 1e3`.
    assert_eq!(
        error("v1", "Service", serde_json::from_str(r#"{"spec":{"ports":[{"targetPort":1e3}]}}"#).unwrap()),
        "json: cannot unmarshal number 1000.0 into Go struct field ServicePort.spec.ports.targetPort of type int32"
    );
    // Go accepts `-0` but refuses `-0.0`; both are -0.0 here, taken as `-0`.
    let v = serde_json::from_str(r#"{"spec":{"replicas":-0.0}}"#).unwrap();
    assert_eq!(
        normalize("apps/v1", "Deployment", v).unwrap().value["spec"]["replicas"],
        0
    );
    // Go keeps `1e3` in its DecimalExponent form; here it is 1000.
    let v = serde_json::from_str(r#"{"spec":{"hard":{"cpu":1e3}}}"#).unwrap();
    assert_eq!(
        normalize("v1", "ResourceQuota", v).unwrap().value["spec"]["hard"]["cpu"],
        "1k"
    );
}

#[test]
fn durations_parse_and_format_like_go_including_its_overflow_quirks() {
    use crate::machinery::duration::{format_duration, parse_duration};
    for (input, want) in [
        ("1h2m3.5s", Ok("1h2m3.5s")),
        ("1.5µs", Ok("1.5µs")),
        ("1.5μs", Ok("1.5µs")),
        ("-0", Ok("0s")),
        ("-9223372036854775808ns", Ok("-2562047h47m16.854775808s")),
        // Go's uint64 sum wraps to 0 here, and it accepts the result.
        ("9223372036854775808ns9223372036854775808ns", Ok("0s")),
        (
            "9223372036854775808ns1ns",
            Err("time: invalid duration \"9223372036854775808ns1ns\""),
        ),
        ("1", Err("time: missing unit in duration \"1\"")),
        ("1x", Err("time: unknown unit \"x\" in duration \"1x\"")),
        ("", Err("time: invalid duration \"\"")),
    ] {
        let got = parse_duration(input).map(format_duration);
        assert_eq!(
            got.as_deref(),
            want.map_err(String::from).as_deref(),
            "{input}"
        );
    }
}

#[test]
fn kinds_without_a_go_type_here_are_refused_and_depth_is_capped() {
    assert_eq!(
        error("example.com/v1", "CronTab", json!({})),
        "no kind \"CronTab\" is registered for version \"example.com/v1\""
    );
    assert!(normalize(
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition",
        json!({})
    )
    .is_err());
    // RawExtension content is kept whatever its depth; the type itself nests far less.
    let mut deep = json!(1);
    for _ in 0..120 {
        deep = json!([deep]);
    }
    let out =
        norm(json!({"apiVersion": "apps/v1", "kind": "ControllerRevision", "data": deep.clone()}));
    assert_eq!(out.value["data"], deep);
}

#[test]
#[ignore]
fn cases_from_env() {
    let path = std::env::var("TYPED_CASES").expect("TYPED_CASES");
    let text = std::fs::read_to_string(&path).unwrap();
    let (n, bad) = check(&text);
    let report = std::env::var("TYPED_REPORT").unwrap_or("/tmp/typed-report.txt".into());
    std::fs::write(&report, bad.join("\n")).unwrap();
    println!("{} cases, {} mismatches (see {report})", n, bad.len());
}

/// Quantities against Go's answers: lines `{"in": <JSON string or number>, "out": <string>}` or
/// `{"in": ..., "err": <text>}` (`TYPED_QUANTITIES=/path cargo test --lib
/// typed::tests::quantities_from_env -- --ignored`).
#[test]
#[ignore]
fn quantities_from_env() {
    let path = std::env::var("TYPED_QUANTITIES").expect("TYPED_QUANTITIES");
    let text = std::fs::read_to_string(&path).unwrap();
    let (mut n, mut bad) = (0, Vec::new());
    let table = &*model::TABLE;
    let holder = table
        .message_named("k8s.io.api.core.v1.ResourceRequirements")
        .unwrap();
    for line in text.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        n += 1;
        let input = serde_json::json!({"limits": {"q": v["in"]}});
        let got = normalize::normalize_as(table, holder, input);
        let got = match got {
            Ok(o) => Ok(o.value["limits"]["q"].clone()),
            Err(e) => Err(e.to_string()),
        };
        let want = match v.get("err") {
            Some(e) => Err(e.as_str().unwrap().to_string()),
            None => Ok(v["out"].clone()),
        };
        if got != want {
            bad.push(format!("{}: go {want:?}, ours {got:?}", v["in"]));
        }
    }
    std::fs::write("/tmp/typed-quantities.txt", bad.join("\n")).unwrap();
    println!("{n} quantities, {} mismatches", bad.len());
}

/// Times and durations against Go's answers: lines `{"in": <JSON string>, "time": {"out" |
/// "err"}, "micro": ..., "duration": ...}` (`TYPED_TIMES=/path cargo test --lib
/// typed::tests::times_from_env -- --ignored`).
#[test]
#[ignore]
fn times_from_env() {
    use crate::machinery::duration::{format_duration, parse_duration};
    use gotime::*;
    let path = std::env::var("TYPED_TIMES").expect("TYPED_TIMES");
    let text = std::fs::read_to_string(&path).unwrap();
    let (mut n, mut bad) = (0, Vec::new());
    let expect = |r: &Value| match r.get("err") {
        Some(e) => Err(e.as_str().unwrap().to_string()),
        None => Ok(r["out"].clone()),
    };
    for line in text.lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        let Some(s) = v["in"].as_str() else { continue };
        n += 1;
        for (key, micros) in [("time", false), ("micro", true)] {
            let got = parse_time(s, micros).map(|(secs, nanos)| {
                if secs == GO_ZERO_TIME_UNIX && nanos == 0 {
                    Value::Null
                } else {
                    Value::String(format_time(secs, nanos, micros))
                }
            });
            let want = expect(&v[key]);
            if got != want {
                bad.push(format!("{key} {s:?}: go {want:?}, ours {got:?}"));
            }
        }
        let got = parse_duration(s).map(|d| Value::String(format_duration(d)));
        let want = expect(&v["duration"]);
        if got != want {
            bad.push(format!("duration {s:?}: go {want:?}, ours {got:?}"));
        }
    }
    std::fs::write("/tmp/typed-times.txt", bad.join("\n")).unwrap();
    println!("{n} strings, {} mismatches", bad.len());
}
