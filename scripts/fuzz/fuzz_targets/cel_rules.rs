//! Arbitrary rule text and arbitrary objects: compiling and evaluating must never panic or hang.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{json, Value};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let (rule, object) = text.split_once('\n').unwrap_or((&text, "{}"));
    let schema = json!({"type": "object", "properties": {"spec": {
    "type": "object",
    "x-kubernetes-validations": [{"rule": rule}],
    "properties": {
        "a": {"type": "integer"}, "s": {"type": "string", "maxLength": 32},
        "l": {"type": "array", "maxItems": 8, "items": {"type": "string", "maxLength": 8}},
        "m": {"type": "object", "maxProperties": 8, "additionalProperties": {"type": "integer"}}
    }}}});
    let schema = kubefake::schema::Node::compile(&schema);
    if let Ok(rules) = kubefake::cel::Rules::compile(&schema, "spec.validation.openAPIV3Schema") {
        let spec: Value = serde_json::from_str(object).unwrap_or(Value::Null);
        let obj =
            json!({"apiVersion": "x/v1", "kind": "X", "metadata": {"name": "a"}, "spec": spec});
        let _ = rules.validate(&obj, Some(&obj), &[]);
    }
});
