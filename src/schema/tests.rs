//! Table tests across the module: the seed documents' examples verbatim, CRD-time checks, and
//! robustness on odd input.

use super::*;
use serde_json::json;

const P: &str = "spec.versions[0].schema.openAPIV3Schema";

fn crd(schema: Value) -> Vec<String> {
    validate_crd_schema(&schema, P, false)
        .into_iter()
        .map(|c| format!("{}: {}", c.field, c.message))
        .collect()
}

fn causes(c: Vec<StatusCause>) -> Vec<String> {
    c.into_iter()
        .map(|c| format!("{}: {}", c.field, c.message))
        .collect()
}

fn crontab_schema() -> Value {
    json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
        "cronSpec": {"type": "string", "pattern": "^(\\d+|\\*)(/\\d+)?(\\s+(\\d+|\\*)(/\\d+)?){4}$", "default": "5 0 * * *"},
        "image": {"type": "string"},
        "replicas": {"type": "integer", "minimum": 1, "maximum": 10, "default": 1}}}}})
}

#[test]
fn seed_pruning_defaulting_validation_end_to_end() {
    let s = Schema::compile(&crontab_schema());
    assert!(crd(crontab_schema()).is_empty());
    // Field pruning: someRandomField.
    let mut obj = json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
        "metadata": {"name": "my-new-cron-object"},
        "spec": {"cronSpec": "* * * * */5", "image": "my-awesome-cron-image", "someRandomField": 42}});
    assert_eq!(s.prune(&mut obj), vec!["spec.someRandomField"]);
    assert_eq!(
        obj["spec"],
        json!({"cronSpec": "* * * * */5", "image": "my-awesome-cron-image"})
    );
    // Defaulting: cronSpec and replicas.
    let mut obj = json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
        "metadata": {"name": "my-new-cron-object"}, "spec": {"image": "my-awesome-cron-image"}});
    s.apply_defaults(&mut obj);
    assert_eq!(
        obj["spec"],
        json!({"cronSpec": "5 0 * * *", "image": "my-awesome-cron-image", "replicas": 1})
    );
    // Validation: the two failures of the seed, with the apiserver's field paths.
    let obj = json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
        "metadata": {"name": "my-new-cron-object"},
        "spec": {"cronSpec": "* * * *", "image": "my-awesome-cron-image", "replicas": 15}});
    assert_eq!(
        causes(s.validate(&obj, None)),
        vec![
            r#"spec.cronSpec: Invalid value: "* * * *": spec.cronSpec in body should match '^(\d+|\*)(/\d+)?(\s+(\d+|\*)(/\d+)?){4}$'"#,
            "spec.replicas: Invalid value: 15: spec.replicas in body should be less than or equal to 10",
        ]
    );
    let ok = json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
        "metadata": {"name": "my-new-cron-object"},
        "spec": {"cronSpec": "* * * * */5", "image": "my-awesome-cron-image", "replicas": 5}});
    assert!(s.validate(&ok, None).is_empty());
    // Ratcheting: an unchanged invalid value is accepted on update, a new one is not.
    let mut changed = obj.clone();
    changed["spec"]["image"] = json!("other");
    assert!(s.validate(&changed, Some(&obj)).is_empty());
    changed["spec"]["replicas"] = json!(16);
    assert_eq!(
        causes(s.validate(&changed, Some(&obj))),
        vec!["spec.replicas: Invalid value: 16: spec.replicas in body should be less than or equal to 10"]
    );
}

#[test]
fn seed_defaulting_and_nullable() {
    let s = Schema::compile(
        &json!({"type": "object", "properties": {"spec": {"type": "object",
        "properties": {
            "foo": {"type": "string", "nullable": false, "default": "default"},
            "bar": {"type": "string", "nullable": true},
            "baz": {"type": "string"}}}}}),
    );
    let mut obj = json!({"spec": {"foo": null, "bar": null, "baz": null}});
    assert!(s.prune(&mut obj).is_empty());
    s.apply_defaults(&mut obj);
    assert_eq!(obj, json!({"spec": {"foo": "default", "bar": null}}));
    assert!(s.validate(&obj, None).is_empty());
}

#[test]
fn seed_controlling_pruning() {
    let s = Schema::compile(&json!({"type": "object", "properties": {"json": {
        "x-kubernetes-preserve-unknown-fields": true, "type": "object",
        "properties": {"spec": {"type": "object", "properties": {
            "foo": {"type": "string"}, "bar": {"type": "string"}}}}}}}));
    let mut obj = json!({"json": {"spec": {"foo": "abc", "bar": "def", "something": "x"},
        "status": {"something": "x"}}});
    assert_eq!(s.prune(&mut obj), vec!["json.spec.something"]);
    assert_eq!(
        obj,
        json!({"json": {"spec": {"foo": "abc", "bar": "def"}, "status": {"something": "x"}}})
    );
    // "With this, only object type values are allowed."
    let s = Schema::compile(&json!({"type": "object", "properties": {"json": {
        "x-kubernetes-preserve-unknown-fields": true, "type": "object",
        "description": "this is arbitrary JSON"}}}));
    assert_eq!(
        causes(s.validate(&json!({"json": 5}), None)),
        vec![r#"json: Invalid value: "integer": json in body must be of type object: "integer""#]
    );
}

#[test]
fn seed_non_structural_examples() {
    // Example 1 and its correction.
    assert_eq!(
        crd(json!({"type": "object", "allOf": [{"properties": {"foo": {"type": "string"}}}]})),
        vec![
            format!("{P}.allOf[0].properties[foo].type: Forbidden: must be empty to be structural"),
            format!("{P}.properties[foo]: Required value: because it is defined in {P}.allOf[0].properties[foo]"),
        ]
    );
    assert!(crd(
        json!({"type": "object", "properties": {"foo": {"type": "string"}},
        "allOf": [{"properties": {"foo": {"pattern": "abc"}}}]})
    )
    .is_empty());
    // Example 2 and its correction.
    assert_eq!(
        crd(json!({"type": "array", "allOf": [{"items": {"properties": {"foo": {"type": "string"}}}}]})),
        vec![
            format!("{P}.allOf[0].items.properties[foo].type: Forbidden: must be empty to be structural"),
            format!("{P}.items: Required value: because it is defined in {P}.allOf[0].items"),
            format!("{P}.items: Required value: must be specified"),
            format!("{P}.type: Invalid value: \"array\": must be object at the root"),
        ]
    );
    assert_eq!(
        crd(
            json!({"type": "object", "properties": {"l": {"type": "array",
            "items": {"type": "object", "properties": {"foo": {"type": "string"}}},
            "allOf": [{"items": {"properties": {"foo": {"pattern": "x"}}}}]}}})
        ),
        Vec::<String>::new()
    );
    // Example 3: every violation the documentation lists.
    let got = crd(json!({
        "properties": {
            "foo": {"pattern": "abc"},
            "metadata": {"type": "object", "properties": {
                "name": {"type": "string", "pattern": "^a"},
                "finalizers": {"type": "array", "items": {"type": "string", "pattern": "my-finalizer"}}}}},
        "anyOf": [{"properties": {"bar": {"type": "integer", "minimum": 42}},
                   "required": ["bar"], "description": "foo bar object"}]}));
    assert_eq!(
        got,
        vec![
            format!("{P}.anyOf[0].description: Forbidden: must be empty to be structural"),
            format!("{P}.anyOf[0].properties[bar].type: Forbidden: must be empty to be structural"),
            format!("{P}.properties[bar]: Required value: because it is defined in {P}.anyOf[0].properties[bar]"),
            format!("{P}.properties[foo].type: Required value: must not be empty for specified object fields"),
            format!("{P}.properties[metadata]: Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified"),
            format!("{P}.type: Required value: must not be empty at the root"),
        ]
    );
    // ... and the corresponding structural schema.
    assert!(crd(json!({"type": "object", "description": "foo bar object",
        "properties": {"foo": {"type": "string", "pattern": "abc"}, "bar": {"type": "integer"},
            "metadata": {"type": "object", "properties": {"name": {"type": "string", "pattern": "^a"}}}},
        "anyOf": [{"properties": {"bar": {"minimum": 42}}, "required": ["bar"]}]}))
    .is_empty());
}

#[test]
fn seed_int_or_string() {
    assert!(crd(
        json!({"type": "object", "properties": {"foo": {"x-kubernetes-int-or-string": true}}})
    )
    .is_empty());
    assert!(crd(
        json!({"type": "object", "properties": {"foo": {"x-kubernetes-int-or-string": true,
        "anyOf": [{"type": "integer"}, {"type": "string"}]}}})
    )
    .is_empty());
    assert!(crd(json!({"type": "object", "properties": {"foo": {"x-kubernetes-int-or-string": true,
        "allOf": [{"anyOf": [{"type": "integer"}, {"type": "string"}]}, {"pattern": "^[0-9]+%?$"}]}}}))
    .is_empty());
    // Variations of the patterns are not allowed.
    assert_eq!(
        crd(
            json!({"type": "object", "properties": {"foo": {"x-kubernetes-int-or-string": true,
            "anyOf": [{"type": "string"}, {"type": "integer"}]}}})
        ),
        vec![
            format!("{P}.properties[foo].anyOf[0].type: Forbidden: must be empty to be structural"),
            format!("{P}.properties[foo].anyOf[1].type: Forbidden: must be empty to be structural"),
        ]
    );
    assert_eq!(
        crd(json!({"type": "object", "properties": {"foo": {"x-kubernetes-int-or-string": true,
            "x-kubernetes-preserve-unknown-fields": true}}})),
        vec![format!("{P}.properties[foo].x-kubernetes-preserve-unknown-fields: Invalid value: true: must be false if x-kubernetes-int-or-string is true")]
    );
    // Both an integer and a string validate; nothing else does.
    let s = Schema::compile(
        &json!({"type": "object", "properties": {"foo": {"x-kubernetes-int-or-string": true,
        "anyOf": [{"type": "integer"}, {"type": "string"}]}}}),
    );
    assert!(s.validate(&json!({"foo": 1}), None).is_empty());
    assert!(s.validate(&json!({"foo": "50%"}), None).is_empty());
    assert_eq!(
        causes(s.validate(&json!({"foo": 1.5}), None)),
        vec![
            r#"foo: Invalid value: "number": foo in body must be of type integer,string: "number""#,
            r#"<nil>: Invalid value: "": "foo" must validate at least one schema (anyOf)"#,
            r#"foo: Invalid value: "number": foo in body must be of type integer: "number""#,
            r#"<nil>: Invalid value: "": Checked value must be of type integer (default format) in foo"#
        ]
    );
}

#[test]
fn seed_embedded_resource() {
    // The documentation's snippet omits `type: object`, which the apiserver requires.
    assert_eq!(
        crd(json!({"type": "object", "properties": {"foo": {
            "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}}})),
        vec![format!("{P}.properties[foo].type: Required value: must be object if x-kubernetes-embedded-resource is true")]
    );
    let schema = json!({"type": "object", "properties": {"foo": {"type": "object",
        "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true}}});
    assert!(crd(schema.clone()).is_empty());
    let s = Schema::compile(&schema);
    let mut obj = json!({"foo": {"apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "x", "unknownMeta": 1}, "spec": {"containers": [{"name": "c"}]}}});
    assert_eq!(s.prune(&mut obj), vec!["foo.metadata.unknownMeta"]);
    assert_eq!(
        obj,
        json!({"foo": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"},
            "spec": {"containers": [{"name": "c"}]}}})
    );
    assert!(s.validate(&obj, None).is_empty());
    assert_eq!(
        causes(s.validate(&json!({"foo": {"spec": {}}}), None)),
        vec!["foo.apiVersion: Required value", "foo.kind: Required value"]
    );
    // Without preserve-unknown-fields, properties are required.
    assert_eq!(
        crd(json!({"type": "object", "properties": {"foo": {"type": "object",
            "x-kubernetes-embedded-resource": true}}})),
        vec![format!("{P}.properties[foo].properties: Required value: must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields")]
    );
}

#[test]
fn seed_validation_restrictions() {
    let cases: Vec<(Value, Vec<String>)> = vec![
        (json!({"type": "object", "properties": {"a": {"type": "string", "id": "x"}}}),
         vec![format!("{P}.properties[a].id: Forbidden: id is not supported")]),
        (json!({"type": "object", "properties": {"a": {"type": "object", "definitions": {"x": {"type": "string"}}}}}),
         vec![format!("{P}.properties[a].definitions: Forbidden: definitions is not supported")]),
        (json!({"type": "object", "properties": {"a": {"type": "object", "dependencies": {"x": ["y"]}}}}),
         vec![format!("{P}.properties[a].dependencies: Forbidden: dependencies is not supported")]),
        (json!({"type": "object", "properties": {"a": {"type": "object", "patternProperties": {"x": {"type": "string"}}}}}),
         vec![format!("{P}.properties[a].patternProperties: Forbidden: patternProperties is not supported")]),
        (json!({"type": "object", "properties": {"a": {"$ref": "#/x"}}}),
         vec![format!("{P}.properties[a].$ref: Forbidden: $ref is not supported")]),
        (json!({"type": "object", "properties": {"a": {"type": "array", "uniqueItems": true, "items": {"type": "string"}}}}),
         vec![format!("{P}.properties[a].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic")]),
        (json!({"type": "object", "properties": {"a": {"type": "object", "properties": {"b": {"type": "string"}}, "additionalProperties": {"type": "string"}}}}),
         vec![format!("{P}.properties[a].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive")]),
        (json!({"type": "object", "properties": {"a": {"type": "object", "properties": {"b": {"type": "string"}}, "additionalProperties": false}}}),
         vec![format!("{P}.properties[a].additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive")]),
        // A bare additionalProperties: false (and true next to properties) is accepted.
        (json!({"type": "object", "properties": {"a": {"type": "object", "additionalProperties": false}}}), vec![]),
        (json!({"type": "object", "properties": {"a": {"type": "object", "properties": {"b": {"type": "string"}}, "additionalProperties": true}}}), vec![]),
        (json!({"type": "object", "additionalProperties": {"type": "string"}}),
         vec![format!("{P}.additionalProperties: Forbidden: must not be used at the root")]),
        (json!({"type": "object", "properties": {"a": {"type": "null"}}}),
         vec![format!("{P}.properties[a].type: Unsupported value: \"null\": supported values: \"array\", \"boolean\", \"integer\", \"number\", \"object\", \"string\""),
              format!("{P}.properties[a].type: Forbidden: type cannot be set to null, use nullable as an alternative")]),
        (json!({"type": "object", "nullable": true}),
         vec![format!("{P}.nullable: Forbidden: nullable cannot be true at the root")]),
        (json!({"type": "object", "properties": {"a": {"type": "string", "pattern": "("}}}),
         vec![format!("{P}.properties[a].pattern: Invalid value: \"(\": must be a valid regular expression, but isn't: error parsing regexp: missing closing ): `(`")]),
        (json!({"type": "object", "properties": {"a": {"type": "string", "x-kubernetes-preserve-unknown-fields": false}}}),
         vec![format!("{P}.properties[a].x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true or undefined")]),
        (json!({"type": "object", "properties": {"metadata": {"type": "object", "properties": {"name": {"type": "string", "default": "x"}}}}}),
         vec![format!("{P}.properties[metadata].properties[name].default: Forbidden: must not be set in top-level metadata")]),
        (json!({"type": "object", "properties": {"kind": {"type": "integer"}}}),
         vec![format!("{P}.properties[kind].type: Invalid value: \"integer\": must be string")]),
    ];
    for (schema, want) in cases {
        assert_eq!(crd(schema.clone()), want, "{schema}");
    }
    let unknown = unknown_schema_fields(
        &json!({"type": "object", "properties": {"a": {"type": "string", "readOnly": true,
            "writeOnly": true, "xml": {}, "deprecated": true}}}),
        P,
    );
    assert_eq!(
        unknown,
        vec![
            format!("{P}.properties.a.deprecated"),
            format!("{P}.properties.a.readOnly"),
            format!("{P}.properties.a.writeOnly"),
            format!("{P}.properties.a.xml"),
        ]
    );
}

#[test]
fn defaults_must_be_pruned_and_valid() {
    assert_eq!(
        crd(json!({"type": "object", "properties": {"spec": {"type": "object",
            "properties": {"a": {"type": "string"}}, "default": {"a": "x", "b": 1}}}})),
        vec![format!("{P}.properties[spec].default: Invalid value: {{\"a\":\"x\",\"b\":1}}: must not have unknown fields")]
    );
    assert_eq!(
        crd(json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "replicas": {"type": "integer", "maximum": 10, "default": 15}}}}})),
        vec![format!("{P}.properties[spec].properties[replicas].default: Invalid value: 15:  in body should be less than or equal to 10")]
    );
    assert_eq!(
        crd(json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "a": {"type": "integer"}}, "default": {"a": "x"}}}})),
        vec![format!("{P}.properties[spec].default.a: Invalid value: \"string\": a in body must be of type integer: \"string\"")]
    );
}

#[test]
fn list_type_and_map_type_rules() {
    let cases: Vec<(Value, Vec<String>)> = vec![
        (json!({"type": "object", "properties": {"l": {"type": "array", "x-kubernetes-list-type": "map",
            "items": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}}}}),
         vec![format!("{P}.properties[l].x-kubernetes-list-map-keys: Required value: must not be empty if x-kubernetes-list-type is map")]),
        (json!({"type": "object", "properties": {"l": {"type": "array", "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"],
            "items": {"type": "object", "properties": {"name": {"type": "string"}}}}}}),
         vec![format!("{P}.properties[l].items.properties[name].default: Required value: this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property")]),
        (json!({"type": "object", "properties": {"l": {"type": "array", "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["nope"],
            "items": {"type": "object", "properties": {"name": {"type": "string"}}}}}}),
         vec![format!("{P}.properties[l].x-kubernetes-list-map-keys: Invalid value: [\"nope\"]: entries must all be names of item properties")]),
        (json!({"type": "object", "properties": {"l": {"type": "array", "x-kubernetes-list-type": "bag",
            "items": {"type": "string"}}}}),
         vec![format!("{P}.properties[l].x-kubernetes-list-type: Unsupported value: \"bag\": supported values: \"atomic\", \"set\", \"map\"")]),
        (json!({"type": "object", "properties": {"l": {"type": "string", "x-kubernetes-list-type": "set"}}}),
         vec![format!("{P}.properties[l].type: Invalid value: \"string\": must be array if x-kubernetes-list-type is specified")]),
        (json!({"type": "object", "properties": {"l": {"type": "array", "x-kubernetes-list-map-keys": ["a"],
            "items": {"type": "object", "properties": {"a": {"type": "string"}}}}}}),
         vec![format!("{P}.properties[l].x-kubernetes-list-type: Required value: must be map if x-kubernetes-list-map-keys is non-empty")]),
        (json!({"type": "object", "properties": {"m": {"type": "array", "x-kubernetes-map-type": "atomic", "items": {"type": "string"}}}}),
         vec![format!("{P}.properties[m].type: Invalid value: \"array\": must be object if x-kubernetes-map-type is specified")]),
        (json!({"type": "object", "properties": {"l": {"type": "array", "x-kubernetes-list-type": "set",
            "items": {"type": "object", "properties": {"a": {"type": "string"}}}}}}),
         vec![format!("{P}.properties[l].items.x-kubernetes-map-type: Invalid value: null: must be atomic as item of a list with x-kubernetes-list-type=set")]),
    ];
    for (schema, want) in cases {
        assert_eq!(crd(schema.clone()), want, "{schema}");
    }
    // Runtime: duplicates, ratcheted as a whole.
    let s = Schema::compile(
        &json!({"type": "object", "properties": {"s": {"type": "array",
        "x-kubernetes-list-type": "set", "items": {"type": "string"}}}}),
    );
    let bad = json!({"s": ["a", "a"]});
    assert_eq!(
        causes(s.validate(&bad, None)),
        vec![r#"s[1]: Duplicate value: "a""#]
    );
    assert!(s.validate(&bad, Some(&bad)).is_empty());
    assert_eq!(
        causes(s.validate(&bad, Some(&json!({"s": ["a"]})))),
        vec![r#"s[1]: Duplicate value: "a""#]
    );
}

#[test]
fn status_subresource_root_restrictions() {
    let got = validate_crd_schema(
        &json!({"type": "object", "minProperties": 1, "properties": {"status": {"type": "object"}}}),
        P,
        true,
    );
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].field, P);
    assert!(got[0].message.ends_with(
        "fields are allowed at the root of the schema if the status subresource is enabled"
    ));
    let got = validate_crd_schema(
        &json!({"type": "object", "required": ["spec"],
        "properties": {"spec": {"type": "object"}}}),
        P,
        true,
    );
    assert!(got.is_empty(), "{got:?}");
}

#[test]
fn nothing_panics_on_odd_input() {
    let mut deep = json!({"type": "object"});
    for _ in 0..60 {
        deep = json!({"type": "object", "properties": {"a": deep}, "default": {}});
    }
    let mut deep_obj = json!(1);
    for _ in 0..60 {
        deep_obj = json!({"a": [deep_obj]});
    }
    let schemas = vec![
        Value::Null,
        json!(5),
        json!("x"),
        json!([]),
        json!({}),
        json!({"type": 5, "properties": [], "items": "x", "required": "x", "enum": 3,
               "maximum": "x", "pattern": 5, "additionalProperties": "x",
               "x-kubernetes-list-map-keys": [1], "allOf": {}, "not": 1}),
        json!({"type": "object", "properties": {"a": {"type": "integer", "multipleOf": 0, "maximum": 1e308,
               "minimum": -1e308, "format": "int32"}, "b": {"type": "number", "multipleOf": 1e-300, "format": "float"},
               "c": {"type": "string", "pattern": "(", "maxLength": -1, "format": "date-time"},
               "d": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k", "k"],
                     "items": {"type": "object", "properties": {"k": {"type": "object"}}}},
               "e": {"x-kubernetes-embedded-resource": true, "x-kubernetes-int-or-string": true},
               "f": {"type": "object", "additionalProperties": true},
               "metadata": {"type": "object", "properties": {"labels": {"type": "object"}}}}}),
        json!({"type": "object", "anyOf": [{}, 1, {"anyOf": []}], "oneOf": [{"not": {}}], "items": [{}, {}]}),
        deep,
    ];
    let objects = vec![
        Value::Null,
        json!(0),
        json!(-9223372036854775808i64),
        json!(18446744073709551615u64),
        json!(1.5e300),
        json!("\u{0}\u{ffff}"),
        json!([null, [], {}]),
        json!({"a": null, "b": [1, "x", null], "c": "", "d": [{"k": {}}, {"k": {}}, 1], "e": {"metadata": 5, "kind": 3},
               "f": {"x": {"y": 1}}, "metadata": {"name": 5, "labels": {"a": 1}}, "kind": [], "apiVersion": {}}),
        deep_obj,
    ];
    for s in &schemas {
        let _ = validate_crd_schema(s, P, true);
        let _ = unknown_schema_fields(s, P);
        let compiled = Schema::compile(s);
        for o in &objects {
            let mut x = o.clone();
            let _ = compiled.prune(&mut x);
            compiled.apply_defaults(&mut x);
            let _ = compiled.validate(&x, None);
            let _ = compiled.validate(&x, Some(o));
            let _ = compiled.validate(o, Some(&x));
        }
    }
}

#[test]
fn schema_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Schema>();
}

/// Throughput check: `cargo test --release --lib schema::tests::throughput -- --ignored --nocapture`.
#[test]
#[ignore]
fn throughput() {
    let mut props = serde_json::Map::new();
    let mut spec = serde_json::Map::new();
    for i in 0..100 {
        let (schema, value) = match i % 5 {
            0 => (
                json!({"type": "string", "pattern": "^[a-z0-9-]+$", "maxLength": 100}),
                json!(format!(
                    "value-{i}-abcdefghijklmnopqrstuvwxyz-0123456789-abcdefghijklmnopqrstuvwxyz"
                )),
            ),
            1 => (
                json!({"type": "integer", "minimum": 0, "maximum": 100000, "default": 3}),
                json!(i * 7),
            ),
            2 => (
                json!({"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}}),
                json!([
                    "a", "b", "c", "a", "b", "c", "a", "b", "c", "a", "b", "c", "a", "b", "c", "a",
                    "b", "c", "a", "b"
                ]),
            ),
            3 => (
                json!({"type": "object", "properties": {"x": {"type": "string"}, "y": {"type": "boolean", "default": false}}}),
                json!({"x": "some text here, a little longer than before, to weigh about ten kilobytes in total", "y": true}),
            ),
            _ => (
                json!({"type": "number", "format": "double"}),
                json!(i as f64 + 0.25),
            ),
        };
        props.insert(format!("field{i}"), schema);
        spec.insert(format!("field{i}"), value);
    }
    let schema =
        json!({"type": "object", "properties": {"spec": {"type": "object", "properties": props}}});
    let obj = json!({"apiVersion": "x.example.com/v1", "kind": "X", "metadata": {"name": "n", "namespace": "d"}, "spec": spec});
    let size = serde_json::to_string(&obj).map(|s| s.len()).unwrap_or(0);
    let s = Schema::compile(&schema);
    let n = 20_000;
    let start = std::time::Instant::now();
    for _ in 0..n {
        let mut x = obj.clone();
        let _ = s.prune(&mut x);
        s.apply_defaults(&mut x);
        assert!(s.validate(&x, None).is_empty());
    }
    let per_sec = n as f64 / start.elapsed().as_secs_f64();
    println!(
        "{size} byte objects: {per_sec:.0} objects/s (prune+default+validate, clone included)"
    );
    let time = |name: &str, f: &dyn Fn()| {
        let t = std::time::Instant::now();
        for _ in 0..n {
            f();
        }
        let us = t.elapsed().as_secs_f64() * 1e6 / n as f64;
        println!("  {name}: {us:.1} us");
    };
    time("clone", &|| drop(obj.clone()));
    time("clone+prune", &|| {
        let mut x = obj.clone();
        let _ = s.prune(&mut x);
    });
    time("clone+defaults", &|| {
        let mut x = obj.clone();
        s.apply_defaults(&mut x);
    });
    time("validate", &|| assert!(s.validate(&obj, None).is_empty()));
}
