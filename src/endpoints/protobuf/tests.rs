//! Unit tests: the client-go test vectors (src/data/k8s-1.36/testdata), hand-built bodies for
//! the wire rules, and the special types.

use base64::Engine;
use serde_json::{json, Value};

use super::special::{check_quantity, format_time, GO_ZERO_TIME_UNIX};
use super::wire::go_string;
use super::*;
use crate::typed::model::{Table, TABLE};

fn err(body: &[u8]) -> String {
    decode(body).unwrap_err().to_string()
}

// ---------------------------------------------------------------------------------------------
// client-go test vectors
// ---------------------------------------------------------------------------------------------

const VECTORS: &str = include_str!("../../data/k8s-1.36/testdata/protobuf-vectors.jsonl");

/// One line of the vectors file (written by scripts/gen-k8s-data).
#[derive(serde::Deserialize, serde::Serialize)]
struct Vector {
    name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    watch: Option<String>,
    json: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pb: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    frame: Option<String>,
}

fn vectors() -> Vec<Vector> {
    VECTORS
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn b64(s: &str) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD.decode(s).unwrap()
}

#[test]
fn vectors_cover_the_report_objects_and_more() {
    let v = vectors();
    assert!(v.iter().filter(|v| v.pb.is_some()).count() >= 30);
    assert_eq!(v.iter().filter(|v| v.watch.is_some()).count(), 3);
}

#[test]
fn client_go_bytes_decode_to_client_go_json() {
    for v in vectors() {
        let Some(pb) = &v.pb else { continue };
        assert_eq!(decode(&b64(pb)).unwrap(), v.json, "{}", v.name);
    }
}

/// Byte for byte, but for embedded JSON (`RawExtension`), which client-go keeps in its input's
/// key order and serde_json writes sorted.
#[test]
fn encode_writes_the_bytes_client_go_writes() {
    let mut differ = Vec::new();
    for v in vectors() {
        let Some(pb) = &v.pb else { continue };
        let ours = encode(&v.json).unwrap();
        if ours.as_ref() != b64(pb).as_slice() {
            assert_eq!(decode(&ours).unwrap(), v.json, "{}", v.name);
            differ.push(v.name);
        }
    }
    assert_eq!(differ, ["v1 List"]);
}

#[test]
fn encode_then_decode_gives_the_json_back() {
    for v in vectors() {
        let back = decode(&encode(&v.json).unwrap()).unwrap();
        assert_eq!(back, v.json, "{}", v.name);
    }
}

#[test]
fn watch_frames_are_the_ones_the_apiserver_writes() {
    for v in vectors() {
        let (Some(event), Some(frame)) = (&v.watch, &v.frame) else {
            continue;
        };
        let ours = encode_watch_event(event, &v.json).unwrap();
        assert_eq!(ours.as_ref(), b64(frame).as_slice(), "{}", v.name);
        let (typ, obj) = envelope::decode_watch_frame(&TABLE, &ours).unwrap();
        assert_eq!((typ.as_str(), obj), (event.as_str(), v.json.clone()));
    }
}

#[test]
fn corrupted_client_go_bytes_never_panic() {
    for v in vectors() {
        let Some(pb) = &v.pb else { continue };
        if !["apps/v1 Deployment", "v1 Pod", "v1 List"].contains(&v.name.as_str()) {
            continue;
        }
        let full = b64(pb);
        for len in 0..full.len() {
            let _ = decode(&full[..len]);
        }
        for i in 4..full.len() {
            for b in [0x00, 0x7f, 0xff] {
                let mut body = full.clone();
                body[i] = b;
                if let Ok(obj) = decode(&body) {
                    let _ = encode(&obj);
                }
            }
        }
    }
}

/// The JSON kubefake stores is not canonical: zero values and empty structs are often absent.
/// Such JSON encodes to bytes whose decoding is stable.
fn sparse(v: &Value) -> Option<Value> {
    match v {
        Value::Null => None,
        Value::Bool(false) => None,
        Value::String(s) if s.is_empty() => None,
        Value::Number(n) if n.as_f64() == Some(0.0) => None,
        Value::Object(o) => {
            let o: serde_json::Map<String, Value> = o
                .iter()
                .filter_map(|(k, v)| Some((k.clone(), sparse(v)?)))
                .collect();
            (!o.is_empty()).then_some(Value::Object(o))
        }
        Value::Array(a) => {
            let a: Vec<Value> = a.iter().map(|v| sparse(v).unwrap_or(Value::Null)).collect();
            (!a.is_empty()).then_some(Value::Array(a))
        }
        other => Some(other.clone()),
    }
}

fn sparse_object(v: &Value) -> Value {
    let mut s = sparse(v).unwrap_or(json!({}));
    s["apiVersion"] = v["apiVersion"].clone();
    s["kind"] = v["kind"].clone();
    s
}

#[test]
fn sparse_json_round_trips_to_a_fixed_point() {
    for v in vectors() {
        if v.pb.is_none() {
            continue;
        }
        let input = sparse_object(&v.json);
        let once = decode(&encode(&input).unwrap()).unwrap();
        let twice = decode(&encode(&once).unwrap()).unwrap();
        assert_eq!(once, twice, "{}", v.name);
    }
}

/// Checks the vectors of KUBEFAKE_PB_VECTORS (the committed ones when unset; `go run . fuzz`
/// writes random ones of every kind) and writes, for client-go to check, our encoding of each
/// (canonical and sparse) and our watch frames, with the JSON our decoder reads back from them:
///
/// ```text
/// cd scripts/gen-k8s-data && go run . fuzz /tmp/fuzz.jsonl
/// KUBEFAKE_PB_VECTORS=/tmp/fuzz.jsonl KUBEFAKE_PB_EXPORT=/tmp/pb.jsonl \
///     cargo test --lib export_for_go_check -- --ignored --nocapture
/// go run . check /tmp/pb.jsonl
/// ```
#[test]
#[ignore = "reads and writes files for the Go check"]
fn export_for_go_check() {
    let input = std::env::var("KUBEFAKE_PB_VECTORS").map(|p| std::fs::read_to_string(p).unwrap());
    let vectors: Vec<Vector> = match &input {
        Ok(text) => text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect(),
        Err(_) => vectors(),
    };
    let mut differ = 0;
    for v in &vectors {
        let Some(pb) = &v.pb else { continue };
        let pb = b64(pb);
        assert_eq!(decode(&pb).unwrap(), v.json, "{}", v.name);
        let ours = encode(&v.json).unwrap();
        if ours.as_ref() != pb.as_slice() {
            assert_eq!(decode(&ours).unwrap(), v.json, "{}", v.name);
            differ += 1;
            eprintln!("encodes differently: {}", v.name);
        }
    }
    eprintln!(
        "{} vectors decode to client-go's JSON; {differ} encode to other bytes",
        vectors.len()
    );
    let Ok(path) = std::env::var("KUBEFAKE_PB_EXPORT") else {
        return;
    };
    let mut out = String::new();
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    for v in vectors {
        let exported = if let Some(event) = &v.watch {
            let frame = encode_watch_event(event, &v.json).unwrap();
            let (_, json) = envelope::decode_watch_frame(&TABLE, &frame).unwrap();
            vec![Vector {
                frame: Some(b64(&frame)),
                json,
                pb: None,
                ..v
            }]
        } else {
            [v.json.clone(), sparse_object(&v.json)]
                .iter()
                .enumerate()
                .map(|(n, input)| {
                    let pb = encode(input).unwrap();
                    Vector {
                        name: format!("{}{}", v.name, if n == 1 { " (sparse)" } else { "" }),
                        watch: None,
                        json: decode(&pb).unwrap(),
                        pb: Some(b64(&pb)),
                        frame: None,
                    }
                })
                .collect()
        };
        for e in exported {
            out.push_str(&serde_json::to_string(&e).unwrap());
            out.push('\n');
        }
    }
    std::fs::write(path, out).unwrap();
}

// ---------------------------------------------------------------------------------------------
// The table
// ---------------------------------------------------------------------------------------------

#[test]
fn the_table_parses_and_knows_every_group() {
    let t = Table::parse(include_str!("../../data/k8s-1.36/protobuf.table")).unwrap();
    assert!(t.message_count() > 1000);
    for (api_version, kind) in [
        ("v1", "Pod"),
        ("v1", "PodList"),
        ("v1", "Status"),
        ("v1", "List"),
        ("apps/v1", "Deployment"),
        ("apps/v1", "DeleteOptions"),
        ("meta.k8s.io/v1", "DeleteOptions"),
        ("meta.k8s.io/v1", "PartialObjectMetadataList"),
        ("batch/v1", "CronJob"),
        ("resource.k8s.io/v1", "ResourceClaim"),
        ("storage.k8s.io/v1", "CSIDriver"),
        (
            "admissionregistration.k8s.io/v1",
            "ValidatingAdmissionPolicy",
        ),
    ] {
        assert!(knows(api_version, kind), "{api_version} {kind}");
    }
    assert!(!knows("v1", "Deployment"));
    assert!(!knows("example.com/v1", "CronTab"));
    assert!(!knows(
        "apiextensions.k8s.io/v1",
        "CustomResourceDefinition"
    ));
    assert!(!knows("meta.k8s.io/v1", "Table"));
}

#[test]
fn malformed_tables_are_rejected() {
    for bad in [
        "1 2 string name V\n",
        "M 1 x\n",
        "M 0 x\n1 0 string name V\n",
        "M 0 x\n1 2 @5 name V\n",
        "M 0 x\n1 2 string name Q\n",
        "M 0 x\n1 2 string a V\n1 2 string b V\n",
        "M 0 x time\n1 2 string a V\n",
        "M 0 x odd\n",
    ] {
        assert!(Table::parse(bad).is_err(), "{bad}");
    }
}

// ---------------------------------------------------------------------------------------------
// Special types and encode errors
// ---------------------------------------------------------------------------------------------

#[test]
fn quantities_are_checked_like_parse_quantity() {
    for ok in [
        "0", "1", "100m", "1.5Gi", "-2", "+3k", "1e3", "1E-3", ".5", "5.",
    ] {
        assert_eq!(check_quantity(ok), Ok(()), "{ok}");
    }
    for bad in ["", "abc", "1Zi", "1 Gi", "1e", "1ee3", "1i"] {
        assert!(check_quantity(bad).is_err(), "{bad}");
    }
}

#[test]
fn micro_times_keep_microseconds() {
    assert_eq!(
        format_time(0, 1_234_567, true),
        "1970-01-01T00:00:00.001234Z"
    );
    assert_eq!(format_time(-1, 0, true), "1969-12-31T23:59:59.000000Z");
}

#[test]
fn encode_errors_name_the_field() {
    let mut pod = json!({"apiVersion": "v1", "kind": "Pod", "spec": {"containers": [
        {"name": "a"}, {"name": "b", "ports": [{"containerPort": "80"}]}]}});
    assert_eq!(
        encode(&pod).unwrap_err().to_string(),
        "cannot encode spec.containers[1].ports[0].containerPort as protobuf: expected an integer, got a string"
    );
    pod["spec"]["containers"][1]["ports"][0]["containerPort"] = json!(1u64 << 40);
    assert!(encode(&pod)
        .unwrap_err()
        .to_string()
        .contains("does not fit"));
    let secret = json!({"apiVersion": "v1", "kind": "Secret", "data": {"k": "not base64!"}});
    assert!(encode(&secret).unwrap_err().to_string().contains("data.k"));
    let missing = json!({"kind": "Pod"});
    assert!(encode(&missing)
        .unwrap_err()
        .to_string()
        .contains("'apiVersion' is missing"));
    let crd = json!({"apiVersion": "example.com/v1", "kind": "CronTab"});
    assert_eq!(
        encode(&crd).unwrap_err(),
        ProtobufError::NotRegistered {
            kind: "CronTab".into(),
            version: "example.com/v1".into()
        }
    );
}

#[test]
fn pointers_keep_zero_values_and_unknown_keys_are_ignored() {
    let d = json!({"apiVersion": "apps/v1", "kind": "Deployment", "extra": 1,
        "spec": {"replicas": 0, "paused": false, "template": {"spec": {"containers": []}}}});
    let back = decode(&encode(&d).unwrap()).unwrap();
    assert_eq!(back["spec"]["replicas"], 0);
    assert!(back["spec"].get("paused").is_none());
    assert!(back.get("extra").is_none());
    assert_eq!(back["spec"]["template"]["spec"]["containers"], Value::Null);
    assert_eq!(back["status"], json!({}));
}

#[test]
fn hostile_nesting_is_an_error_not_a_stack_overflow() {
    // v1 List { items: [RawExtension{raw: <envelope of a List ...>}] }, 1000 deep.
    let mut body = encode(&json!({"apiVersion": "v1", "kind": "List"}))
        .unwrap()
        .to_vec();
    for _ in 0..1000 {
        let raw = Enc::new().bytes(1, &body);
        let list = Enc::new().msg(2, raw);
        body = envelope("v1", "List", list);
    }
    assert_eq!(decode(&body).unwrap_err(), ProtobufError::TooDeep);
    // A shallow one decodes.
    let inner =
        encode(&json!({"apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "b"}})).unwrap();
    let list = envelope("v1", "List", Enc::new().msg(2, Enc::new().bytes(1, &inner)));
    assert_eq!(
        decode(&list).unwrap()["items"][0]["data"],
        json!({"a": "b"})
    );
}

#[test]
fn table_load_is_fast_enough() {
    let start = std::time::Instant::now();
    let t = Table::parse(include_str!("../../data/k8s-1.36/protobuf.table")).unwrap();
    // Generous, for a debug build on a loaded machine; the release cost is about 1.3 ms.
    assert!(
        start.elapsed() < std::time::Duration::from_millis(500),
        "{:?}",
        start.elapsed()
    );
    drop(t);
}

// ---------------------------------------------------------------------------------------------
// Hand-built bodies (wire rules, envelope errors)
// ---------------------------------------------------------------------------------------------

/// A tiny protobuf encoder for building test bodies.
#[derive(Default, Clone)]
struct Enc(Vec<u8>);

impl Enc {
    fn new() -> Self {
        Self::default()
    }

    fn raw_varint(mut self, mut v: u64) -> Self {
        loop {
            let b = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                self.0.push(b);
                return self;
            }
            self.0.push(b | 0x80);
        }
    }

    fn raw(mut self, b: &[u8]) -> Self {
        self.0.extend_from_slice(b);
        self
    }

    fn key(self, num: u32, wire_type: u8) -> Self {
        self.raw_varint((u64::from(num) << 3) | u64::from(wire_type))
    }

    fn varint(self, num: u32, v: u64) -> Self {
        self.key(num, 0).raw_varint(v)
    }

    fn bytes(self, num: u32, b: &[u8]) -> Self {
        self.key(num, 2).raw_varint(b.len() as u64).raw(b)
    }

    fn string(self, num: u32, s: &str) -> Self {
        self.bytes(num, s.as_bytes())
    }

    fn msg(self, num: u32, m: Enc) -> Self {
        self.bytes(num, &m.0)
    }

    fn entry(self, num: u32, k: &str, v: &str) -> Self {
        self.msg(num, Enc::new().string(1, k).string(2, v))
    }
}

/// The `k8s\0` envelope around an object.
fn envelope(api_version: &str, kind: &str, raw: Enc) -> Vec<u8> {
    let unknown = Enc::new()
        .msg(1, Enc::new().string(1, api_version).string(2, kind))
        .msg(2, raw)
        .string(3, "")
        .string(4, "");
    let mut out = envelope::MAGIC.to_vec();
    out.extend_from_slice(&unknown.0);
    out
}

fn namespace_body() -> Vec<u8> {
    // As gogo writes it: every non-pointer string, even empty, and spec/status always.
    let meta = Enc::new()
        .string(1, "foo")
        .string(2, "")
        .string(3, "")
        .varint(7, 0)
        .msg(8, Enc::new())
        .entry(11, "team", "a")
        .entry(11, "env", "dev")
        .string(14, "x/y");
    let ns = Enc::new()
        .msg(1, meta)
        .msg(2, Enc::new().string(1, "kubernetes"))
        .msg(3, Enc::new().string(1, ""));
    envelope("v1", "Namespace", ns)
}

#[test]
fn namespace_with_labels_and_finalizers() {
    let got = decode(&namespace_body()).unwrap();
    assert_eq!(
        got,
        json!({
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {
                "name": "foo",
                "labels": {"team": "a", "env": "dev"},
                "finalizers": ["x/y"],
            },
            "spec": {"finalizers": ["kubernetes"]},
            "status": {},
        })
    );
}

#[test]
fn namespace_with_creation_timestamp_and_more_metadata() {
    let meta = Enc::new()
        .string(1, "ts")
        .msg(8, Enc::new().varint(1, 1_700_000_000).varint(2, 123))
        .msg(9, Enc::new().varint(1, 0))
        .varint(10, 30)
        .varint(7, 3)
        .entry(12, "a", "b")
        .msg(
            13,
            Enc::new()
                .string(1, "Thing")
                .string(3, "t")
                .string(4, "u-1")
                .string(5, "x/v1")
                .varint(6, 1),
        )
        .msg(
            17,
            Enc::new()
                .string(1, "kubectl")
                .string(2, "Update")
                .string(3, "v1")
                .msg(4, Enc::new().varint(1, 86_400))
                .string(6, "FieldsV1")
                .msg(7, Enc::new().bytes(1, br#"{"f:metadata":{}}"#)),
        );
    let body = envelope("v1", "Namespace", Enc::new().msg(1, meta));
    assert_eq!(
        decode(&body).unwrap(),
        json!({
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {
                "name": "ts",
                "generation": 3,
                "creationTimestamp": "2023-11-14T22:13:20Z",
                "deletionTimestamp": "1970-01-01T00:00:00Z",
                "deletionGracePeriodSeconds": 30,
                "annotations": {"a": "b"},
                "ownerReferences": [{
                    "apiVersion": "x/v1", "kind": "Thing", "name": "t", "uid": "u-1",
                    "controller": true,
                }],
                "managedFields": [{
                    "manager": "kubectl", "operation": "Update", "apiVersion": "v1",
                    "time": "1970-01-02T00:00:00Z", "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:metadata": {}},
                }],
            },
            // Value structs absent from the wire are Go's zero values, which encoding/json
            // writes.
            "spec": {},
            "status": {},
        })
    );
}

#[test]
fn delete_options_keeps_present_zero_values() {
    let opts = Enc::new()
        .varint(1, 0)
        .msg(2, Enc::new().string(1, "abc"))
        .varint(3, 0)
        .string(4, "Foreground")
        .string(5, "All");
    for api_version in ["meta.k8s.io/v1", "v1", "apps/v1"] {
        let body = envelope(api_version, "DeleteOptions", opts.clone());
        assert_eq!(
            decode(&body).unwrap(),
            json!({
                "apiVersion": api_version,
                "kind": "DeleteOptions",
                "gracePeriodSeconds": 0,
                "preconditions": {"uid": "abc"},
                "orphanDependents": false,
                "propagationPolicy": "Foreground",
                "dryRun": ["All"],
            })
        );
    }
    let negative = envelope("v1", "DeleteOptions", Enc::new().varint(1, u64::MAX));
    assert_eq!(decode(&negative).unwrap()["gracePeriodSeconds"], json!(-1));
}

#[test]
fn unknown_fields_are_skipped_and_messages_merge() {
    let meta_a = Enc::new().string(1, "first").string(99, "ignored");
    // Unknown fixed64, fixed32 and nested groups in the second occurrence.
    let meta_b = Enc::new()
        .string(1, "second")
        .key(50, 1)
        .raw(&[0; 8])
        .key(51, 5)
        .raw(&[0; 4])
        .key(52, 3)
        .varint(1, 7)
        .key(53, 3)
        .key(53, 4)
        .key(52, 4)
        .string(14, "fin");
    let ns = Enc::new().msg(1, meta_a).msg(1, meta_b);
    let got = decode(&envelope("v1", "Namespace", ns)).unwrap();
    assert_eq!(
        got["metadata"],
        json!({"name": "second", "finalizers": ["fin"]})
    );
}

#[test]
fn invalid_utf8_becomes_replacement_characters() {
    assert_eq!(go_string(b"a\xffb\xe2\x82"), "a\u{fffd}b\u{fffd}\u{fffd}");
    assert_eq!(go_string("héllo".as_bytes()), "héllo");
}

#[test]
fn times_format_like_go() {
    assert_eq!(format_time(0, 0, false), "1970-01-01T00:00:00Z");
    assert_eq!(format_time(951_782_400, 0, false), "2000-02-29T00:00:00Z");
    assert_eq!(format_time(-1, 0, false), "1969-12-31T23:59:59Z");
    assert_eq!(
        format_time(GO_ZERO_TIME_UNIX, 0, false),
        "0001-01-01T00:00:00Z"
    );
    assert_eq!(
        format_time(253_402_300_800, 0, false),
        "10000-01-01T00:00:00Z"
    );
    // Must not panic at the extremes.
    format_time(i64::MAX, 999_999_999, true);
    format_time(i64::MIN, 0, true);
}

#[test]
fn errors() {
    assert_eq!(err(b""), "empty data");
    assert!(err(b"{\"kind\":\"Namespace\"}").contains("expected prefix"));
    assert!(err(b"k8s").contains("expected prefix"));
    assert_eq!(err(&envelope::MAGIC), "empty body");

    let crd = envelope("v1", "CronTab", Enc::new());
    assert_eq!(
        err(&crd),
        r#"no kind "CronTab" is registered for version "v1""#
    );
    let ns_apps = envelope("apps/v1", "Namespace", Enc::new());
    assert!(err(&ns_apps).starts_with("no kind"));
    let no_kind = envelope("v1", "", Enc::new());
    assert!(err(&no_kind).contains("'Kind' is missing"));
    let no_version = envelope("", "Namespace", Enc::new());
    assert!(err(&no_version).contains("'apiVersion' is missing"));
    let bad_version = envelope("a/b/c", "DeleteOptions", Enc::new());
    assert!(err(&bad_version).contains("'apiVersion' is missing"));

    // A known field with the wrong wire type.
    let bad = envelope("v1", "Namespace", Enc::new().varint(1, 5));
    assert!(err(&bad).contains("wrong wireType = 0"));
    // Field number 0, end group without a start, illegal wire types, varint overflow.
    for garbage in [
        &[0x00, 0x00][..],
        &[0x0c],
        &[0x0e],
        &[
            0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
        ],
        &[
            0x12, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
        ],
    ] {
        let mut body = envelope::MAGIC.to_vec();
        body.extend_from_slice(garbage);
        assert!(decode(&body).is_err(), "{garbage:?}");
    }
    // Invalid fieldsV1.
    let meta = Enc::new().msg(17, Enc::new().msg(7, Enc::new().bytes(1, b"{nope")));
    let body = envelope("v1", "Namespace", Enc::new().msg(1, meta));
    assert!(err(&body).contains("FieldsV1"));
}

#[test]
fn every_prefix_and_corruption_is_handled_without_panic() {
    let full = namespace_body();
    // A prefix is a valid message only where it ends on a field boundary of the envelope
    // (after typeMeta, after raw, after contentEncoding); everywhere else a length prefix
    // or varint no longer fits.
    let type_meta_end = envelope::MAGIC.len() + 2 + 2 + "v1".len() + 2 + "Namespace".len();
    let trailer = 4; // contentEncoding and contentType, both empty
    let raw_end = full.len() - trailer;
    let expected_ok = vec![type_meta_end, raw_end, raw_end + 2];
    let ok: Vec<usize> = (0..full.len())
        .filter(|len| decode(&full[..*len]).is_ok())
        .collect();
    assert_eq!(ok, expected_ok);
    // Single-byte corruptions may decode or fail, but must not panic.
    for i in 0..full.len() {
        for b in [0x00, 0x01, 0x07, 0x7f, 0x80, 0xff] {
            let mut body = full.clone();
            body[i] = b;
            let _ = decode(&body);
        }
    }
    // Pseudo-random garbage after the magic.
    let mut seed = 0x2545_f491_4f6c_dd1du64;
    for _ in 0..2000 {
        let mut body = envelope::MAGIC.to_vec();
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let len = (seed % 64) as usize;
        for _ in 0..len {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            body.push(seed as u8);
        }
        let _ = decode(&body);
    }
}
