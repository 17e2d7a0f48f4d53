//! Table tests: every example of the "Validation rules" documentation, compile errors with the
//! apiserver's messages, cost budgets, and a generated-input test that must never panic.

use serde_json::{json, Value};

use super::Rules;
use crate::error::StatusCause;
use crate::schema::Node;

const BASE: &str = "spec.validation.openAPIV3Schema";

/// A root schema with `spec` as given.
fn crd(spec: Value) -> Value {
    json!({"type": "object", "properties": {"spec": spec}})
}

fn obj(spec: Value) -> Value {
    json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
           "metadata": {"name": "my-new-cron-object", "namespace": "default"}, "spec": spec})
}

fn compile(schema: &Value) -> Rules {
    match Rules::compile(&Node::compile(schema), BASE) {
        Ok(r) => r,
        Err(e) => panic!("compile failed: {schema}: {e:#?}"),
    }
}

fn compile_err(schema: &Value) -> Vec<StatusCause> {
    match Rules::compile(&Node::compile(schema), BASE) {
        Ok(_) => panic!("expected compile errors"),
        Err(e) => e,
    }
}

/// Compiles `rule` on `spec` (with the given properties) and runs it on `value`.
fn run(rule: &str, spec_schema: Value, value: Value) -> Vec<StatusCause> {
    let mut s = spec_schema;
    s["x-kubernetes-validations"] = json!([{"rule": rule}]);
    let rules = compile(&crd(s));
    rules.validate(&obj(value), None, &[])
}

fn passes(rule: &str, spec_schema: Value, value: Value) {
    let errs = run(rule, spec_schema, value);
    assert!(errs.is_empty(), "{rule}: {errs:#?}");
}

fn fails(rule: &str, spec_schema: Value, value: Value) {
    let errs = run(rule, spec_schema, value);
    assert_eq!(errs.len(), 1, "{rule}: {errs:#?}");
    assert_eq!(
        errs[0].message,
        format!("Invalid value: failed rule: {rule}"),
        "{rule}"
    );
}

fn crontab_schema(rules: Value) -> Value {
    crd(json!({"type": "object", "x-kubernetes-validations": rules,
        "properties": {"minReplicas": {"type": "integer"}, "replicas": {"type": "integer"},
                       "maxReplicas": {"type": "integer"}},
        "required": ["minReplicas", "replicas", "maxReplicas"]}))
}

#[test]
fn crontab_replicas_rejected_with_message() {
    let rules = compile(&crontab_schema(json!([
        {"rule": "self.minReplicas <= self.replicas", "message": "replicas should be greater than or equal to minReplicas."},
        {"rule": "self.replicas <= self.maxReplicas", "message": "replicas should be smaller than or equal to maxReplicas."}
    ])));
    let errs = rules.validate(
        &obj(json!({"minReplicas": 0, "replicas": 20, "maxReplicas": 10})),
        None,
        &[],
    );
    assert_eq!(errs.len(), 1);
    assert_eq!(errs[0].field, "spec");
    assert_eq!(errs[0].reason, "FieldValueInvalid");
    // Current apiservers omit the value of objects and arrays (`field.OmitValueType`).
    assert_eq!(
        errs[0].message,
        "Invalid value: replicas should be smaller than or equal to maxReplicas."
    );
    let ok = rules.validate(
        &obj(json!({"minReplicas": 0, "replicas": 5, "maxReplicas": 10})),
        None,
        &[],
    );
    assert!(ok.is_empty());
}

#[test]
fn crontab_default_message() {
    let rules = compile(&crontab_schema(
        json!([{"rule": "self.replicas <= self.maxReplicas"}]),
    ));
    let errs = rules.validate(
        &obj(json!({"minReplicas": 0, "replicas": 20, "maxReplicas": 10})),
        None,
        &[],
    );
    assert_eq!(
        errs[0].message,
        "Invalid value: failed rule: self.replicas <= self.maxReplicas"
    );
}

fn rule_path(i: usize) -> String {
    format!("{BASE}.properties[spec].x-kubernetes-validations[{i}].rule")
}

#[test]
fn compile_failure_no_matching_overload() {
    let errs = compile_err(&crd(json!({"type": "integer",
        "x-kubernetes-validations": [{"rule": "self == true"}]})));
    assert_eq!(errs.len(), 1);
    assert_eq!(errs[0].field, rule_path(0));
    assert_eq!(
        errs[0].message,
        "Invalid value: {\"Rule\":\"self == true\",\"Message\":\"\",\"MessageExpression\":\"\",\"Reason\":null,\"FieldPath\":\"\",\"OptionalOldSelf\":null}: compilation failed: ERROR: <input>:1:6: found no matching overload for '_==_' applied to '(int, bool)'\n | self == true\n | .....^"
    );
}

#[test]
fn compile_failure_undefined_field() {
    let errs = compile_err(&crd(
        json!({"type": "object", "properties": {"a": {"type": "integer"}},
        "x-kubernetes-validations": [{"rule": "self.nonExistingField > 0"}]}),
    ));
    assert_eq!(errs.len(), 1);
    assert!(
        errs[0].message.ends_with("compilation failed: ERROR: <input>:1:5: undefined field 'nonExistingField'\n | self.nonExistingField > 0\n | ....^"),
        "{}",
        errs[0].message
    );
}

#[test]
fn compile_failure_has_macro() {
    let errs = compile_err(&crd(
        json!({"type": "object", "properties": {"a": {"type": "integer"}},
        "x-kubernetes-validations": [{"rule": "has(self)"}]}),
    ));
    assert_eq!(errs.len(), 1);
    assert!(
        errs[0]
            .message
            .contains("compilation failed: ERROR: <input>:1:")
            && errs[0].message.contains("invalid argument to has() macro"),
        "{}",
        errs[0].message
    );
}

#[test]
fn compile_failures_misc() {
    let cases = [
        ("self.a", "cel expression must evaluate to a bool"),
        ("self.a +", "Syntax error"),
        (
            "size(self.a) == 1",
            "found no matching overload for 'size' applied to '(int)'",
        ),
        ("unknownFn(self.a)", "undeclared reference to 'unknownFn'"),
        (
            "[1, 'a'].size() == 2",
            "expected type 'int' but found 'string'",
        ),
    ];
    for (rule, want) in cases {
        let errs = compile_err(&crd(
            json!({"type": "object", "properties": {"a": {"type": "integer"}},
            "x-kubernetes-validations": [{"rule": rule}]}),
        ));
        assert!(
            errs[0].message.contains(want),
            "{rule}: {}",
            errs[0].message
        );
    }
}

#[test]
fn documented_examples_table() {
    // The documentation's schemas are sketches: bounds are added where the real server's cost
    // estimate would otherwise reject a rule (unbounded lists of unbounded strings).
    let s = json!({"type": "object", "properties": {
        "minReplicas": {"type": "integer"}, "replicas": {"type": "integer"}, "maxReplicas": {"type": "integer"},
        "stateCounts": {"type": "object", "maxProperties": 10, "additionalProperties": {"type": "integer"}},
        "list1": {"type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": 64}},
        "list2": {"type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": 64}},
        "map1": {"type": "object", "maxProperties": 10, "additionalProperties": {"type": "string", "maxLength": 64}},
        "envars": {"type": "array", "maxItems": 10, "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                   "items": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 64}, "value": {"type": "string", "maxLength": 64}}, "required": ["name"]}},
        "created": {"type": "string", "format": "date-time"},
        "expired": {"type": "string", "format": "date-time"},
        "ttl": {"type": "string", "format": "duration"},
        "health": {"type": "string", "maxLength": 64},
        "widgets": {"type": "array", "maxItems": 10, "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["key"],
                    "items": {"type": "object", "properties": {"key": {"type": "string", "maxLength": 64}, "foo": {"type": "integer"}}, "required": ["key"]}},
        "intOrString": {"x-kubernetes-int-or-string": true},
        "prefix": {"type": "string", "maxLength": 64},
        "set1": {"type": "array", "maxItems": 10, "x-kubernetes-list-type": "set", "items": {"type": "string", "maxLength": 64}},
        "set2": {"type": "array", "maxItems": 10, "x-kubernetes-list-type": "set", "items": {"type": "string", "maxLength": 64}},
        "names": {"type": "array", "maxItems": 10, "x-kubernetes-list-type": "set", "items": {"type": "string", "maxLength": 64}},
        "details": {"type": "object", "maxProperties": 10, "additionalProperties": {"type": "string", "maxLength": 64}},
        "clusters": {"type": "array", "maxItems": 10, "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                     "items": {"type": "object", "properties": {"name": {"type": "string", "maxLength": 64}}, "required": ["name"]}},
        "primary": {"type": "string", "maxLength": 64}
    }});
    let good = json!({"minReplicas": 1, "replicas": 2, "maxReplicas": 3,
        "stateCounts": {"Available": 1}, "list1": ["a"], "list2": [],
        "map1": {"MY_KEY": "abc"},
        "envars": [{"name": "MY_ENV", "value": "abc"}, {"name": "OTHER", "value": "1-2"}],
        "created": "2023-01-01T00:00:00Z", "expired": "2023-01-02T00:00:00Z", "ttl": "1h",
        "health": "ok: fine", "widgets": [{"key": "x", "foo": 5}], "intOrString": "100%",
        "prefix": "my-", "set1": ["a", "b"], "set2": ["c"], "names": ["a"], "details": {"a": "x"},
        "clusters": [{"name": "p"}, {"name": "q"}], "primary": "p"});
    let bad = json!({"minReplicas": 3, "replicas": 2, "maxReplicas": 1,
        "stateCounts": {"Pending": 1}, "list1": ["a"], "list2": ["b"],
        "map1": {"MY_KEY": "a1"},
        "envars": [{"name": "MY_ENV", "value": "a-b"}],
        "created": "2023-01-01T00:00:00Z", "expired": "2023-01-01T00:30:00Z", "ttl": "1h",
        "health": "bad", "widgets": [{"key": "x", "foo": 50}], "intOrString": 999,
        "prefix": "other-", "set1": ["a", "b"], "set2": ["b"], "names": ["a", "z"], "details": {"a": "x"},
        "clusters": [{"name": "q"}], "primary": "p"});
    let rules = [
        "self.minReplicas <= self.replicas && self.replicas <= self.maxReplicas",
        "'Available' in self.stateCounts",
        "(size(self.list1) == 0) != (size(self.list2) == 0)",
        "!('MY_KEY' in self.map1) || self.map1['MY_KEY'].matches('^[a-zA-Z]*$')",
        "self.envars.filter(e, e.name == 'MY_ENV').all(e, e.value.matches('^[a-zA-Z]*$'))",
        "has(self.expired) && self.created + self.ttl < self.expired",
        "self.health.startsWith('ok')",
        "self.widgets.exists(w, w.key == 'x' && w.foo < 10)",
        "type(self.intOrString) == string ? self.intOrString == '100%' : self.intOrString == 1000",
        "self.set1.all(e, !(e in self.set2))",
        "size(self.names) == size(self.details) && self.names.all(n, n in self.details)",
        "size(self.clusters.filter(c, c.name == self.primary)) == 1",
    ];
    for rule in rules {
        passes(rule, s.clone(), good.clone());
        fails(rule, s.clone(), bad.clone());
    }
}

#[test]
fn metadata_name_prefix_at_root() {
    let schema = json!({"type": "object",
        "x-kubernetes-validations": [{"rule": "self.metadata.name.startsWith(self.spec.prefix)"}],
        "properties": {"spec": {"type": "object", "properties": {"prefix": {"type": "string"}}}}});
    let rules = compile(&schema);
    assert!(rules
        .validate(&obj(json!({"prefix": "my-"})), None, &[])
        .is_empty());
    let errs = rules.validate(&obj(json!({"prefix": "x"})), None, &[]);
    assert_eq!(errs[0].field, "<nil>");
    // Other metadata fields are invisible.
    let bad = json!({"type": "object",
        "x-kubernetes-validations": [{"rule": "self.metadata.namespace == 'x'"}],
        "properties": {"spec": {"type": "object"}}});
    let errs = compile_err(&bad);
    assert!(
        errs[0].message.contains("undefined field 'namespace'"),
        "{errs:?}"
    );
}

/// A CEL keyword names the field it escapes to (`recognizeKeywordAsFieldName`): a nested
/// `metadata` that declares `namespace` is read as `self.metadata.namespace` as well as
/// `self.metadata.__namespace__`.
#[test]
fn keywords_name_their_escaped_fields() {
    let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
        "properties": {"tpl": {"type": "object",
            "x-kubernetes-validations": [
                {"rule": "!has(self.metadata.namespace)", "message": "no namespace"},
                {"rule": "!has(self.metadata.__namespace__) || self.metadata.namespace != 'x'"}
            ],
            "properties": {"metadata": {"type": "object", "properties": {
                "namespace": {"type": "string"}, "name": {"type": "string"}}}}}}}}});
    let rules = compile(&schema);
    let tpl = |meta: Value| obj(json!({"tpl": {"metadata": meta}}));
    assert!(rules
        .validate(&tpl(json!({"name": "a"})), None, &[])
        .is_empty());
    let errs = rules.validate(&tpl(json!({"namespace": "x"})), None, &[]);
    assert_eq!(errs.len(), 2, "{errs:?}");
    assert!(errs[0].message.ends_with("no namespace"), "{errs:?}");
}

#[test]
fn scope_examples() {
    let root = json!({"type": "object",
        "x-kubernetes-validations": [{"rule": "self.status.availableReplicas >= self.spec.minReplicas"}],
        "properties": {"spec": {"type": "object", "properties": {"minReplicas": {"type": "integer"}}},
                       "status": {"type": "object", "properties": {"availableReplicas": {"type": "integer"}}}}});
    let r = compile(&root);
    let mut o = obj(json!({"minReplicas": 2}));
    o["status"] = json!({"availableReplicas": 1});
    assert_eq!(r.validate(&o, None, &[]).len(), 1);
    o["status"] = json!({"availableReplicas": 3});
    assert!(r.validate(&o, None, &[]).is_empty());

    // has() and null fields treated as absent.
    passes(
        "!has(self.foo)",
        json!({"type": "object", "properties": {"foo": {"type": "integer", "nullable": true}}}),
        json!({"foo": null}),
    );
    fails(
        "has(self.foo)",
        json!({"type": "object", "properties": {"foo": {"type": "integer"}}}),
        json!({}),
    );
    // Maps.
    passes(
        "self['xyz'].foo > 0",
        json!({"type": "object", "additionalProperties": {"type": "object", "properties": {"foo": {"type": "integer"}}}}),
        json!({"xyz": {"foo": 1}}),
    );
    // Scalars and arrays, rules inside lists and maps.
    let s = crd(json!({"type": "object", "properties": {
        "foo": {"type": "array", "x-kubernetes-validations": [{"rule": "size(self) == 1"}],
                "items": {"type": "string", "x-kubernetes-validations": [{"rule": "self.startsWith('kube')"}]}},
        "m": {"type": "object", "additionalProperties": {"type": "integer", "x-kubernetes-validations": [{"rule": "self > 0"}]}}}}));
    let r = compile(&s);
    let errs = r.validate(
        &obj(json!({"foo": ["kube", "x"], "m": {"a": 1, "b": 0}})),
        None,
        &[],
    );
    let fields: Vec<(&str, &str)> = errs
        .iter()
        .map(|e| (e.field.as_str(), e.message.as_str()))
        .collect();
    assert_eq!(
        fields,
        vec![
            ("spec.foo", "Invalid value: failed rule: size(self) == 1"),
            (
                "spec.foo[1]",
                "Invalid value: \"x\": failed rule: self.startsWith('kube')"
            ),
            ("spec.m[b]", "Invalid value: 0: failed rule: self > 0"),
        ]
    );
}

#[test]
fn second_example_table() {
    passes(
        "self.components['Widget'].priority < 10",
        json!({"type": "object", "properties": {"components": {"type": "object", "additionalProperties": {"type": "object", "properties": {"priority": {"type": "integer"}}}}}}),
        json!({"components": {"Widget": {"priority": 1}}}),
    );
    passes(
        "self.values.all(value, value >= 0 && value < 100)",
        json!({"type": "object", "properties": {"values": {"type": "array", "maxItems": 100, "items": {"type": "integer"}}}}),
        json!({"values": [0, 99]}),
    );
    fails(
        "self.values.all(value, value >= 0 && value < 100)",
        json!({"type": "object", "properties": {"values": {"type": "array", "maxItems": 100, "items": {"type": "integer"}}}}),
        json!({"values": [0, 100]}),
    );
    // Unbounded, the estimate (1,572,863 items x 7) is just over the per-rule budget, as on a real server.
    let errs = compile_err(&crd(
        json!({"type": "object", "properties": {"values": {"type": "array", "items": {"type": "integer"}}},
        "x-kubernetes-validations": [{"rule": "self.values.all(value, value >= 0 && value < 100)"}]}),
    ));
    assert!(
        errs[0].message.contains("exceeds budget by factor of 1.1"),
        "{errs:?}"
    );
    passes(
        "self.s.startsWith('kube')",
        json!({"type": "object", "properties": {"s": {"type": "string"}}}),
        json!({"s": "kubelet"}),
    );
}

#[test]
fn escaping_and_unknown_fields() {
    let s = json!({"type": "object", "properties": {
        "namespace": {"type": "integer"}, "x-prop": {"type": "integer"}, "redact__d": {"type": "integer"},
        "unknown": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
        "anything": {"x-kubernetes-preserve-unknown-fields": true}}});
    passes(
        "self.__namespace__ > 0 && self.x__dash__prop > 0 && self.redact__underscores__d > 0",
        s.clone(),
        json!({"namespace": 1, "x-prop": 1, "redact__d": 1}),
    );
    let mut bad = s.clone();
    bad["x-kubernetes-validations"] = json!([{"rule": "has(self.unknown.foo)"}]);
    assert!(compile_err(&crd(bad))[0]
        .message
        .contains("undefined field 'foo'"));
    let mut bad = s;
    bad["x-kubernetes-validations"] = json!([{"rule": "has(self.anything)"}]);
    assert!(compile_err(&crd(bad))[0]
        .message
        .contains("undefined field 'anything'"));
}

#[test]
fn list_set_and_map_semantics() {
    let s = json!({"type": "object", "properties": {
        "a": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "integer"}},
        "b": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "integer"}},
        "m1": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"],
               "items": {"type": "object", "properties": {"k": {"type": "string"}, "v": {"type": "integer"}}, "required": ["k"]}},
        "m2": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"],
               "items": {"type": "object", "properties": {"k": {"type": "string"}, "v": {"type": "integer"}}, "required": ["k"]}}}});
    let v = json!({"a": [1, 2], "b": [2, 1, 3], "m1": [{"k": "x", "v": 1}, {"k": "y", "v": 2}], "m2": [{"k": "y", "v": 3}, {"k": "z", "v": 4}]});
    passes("self.a == [2, 1]", s.clone(), v.clone());
    passes("self.a + self.b == [1, 2, 3]", s.clone(), v.clone());
    passes("(self.a + self.b)[2] == 3", s.clone(), v.clone());
    passes("size(self.m1 + self.m2) == 3 && (self.m1 + self.m2)[1].v == 3 && (self.m1 + self.m2)[2].k == 'z'", s.clone(), v.clone());
    passes("self.m1 == [self.m1[1], self.m1[0]]", s, v);
}

#[test]
fn transition_rules() {
    let cases: Vec<(&str, Value, Value, Value, bool)> = vec![
        (
            "self.foo == oldSelf.foo",
            json!({"type": "object", "properties": {"foo": {"type": "string"}}}),
            json!({"foo": "a"}),
            json!({"foo": "b"}),
            false,
        ),
        (
            "self.foo == oldSelf.foo",
            json!({"type": "object", "properties": {"foo": {"type": "string"}}}),
            json!({"foo": "a"}),
            json!({"foo": "a"}),
            true,
        ),
        (
            "oldSelf.v != 'bar' || self.v == 'bar'",
            json!({"type": "object", "properties": {"v": {"type": "string"}}}),
            json!({"v": "bar"}),
            json!({"v": "baz"}),
            false,
        ),
        (
            "!has(oldSelf.field) || has(self.field)",
            json!({"type": "object", "properties": {"field": {"type": "string"}}}),
            json!({"field": "x"}),
            json!({}),
            false,
        ),
        (
            "self.set.all(element, element in oldSelf.set)",
            json!({"type": "object", "properties": {"set": {"type": "array", "maxItems": 10, "x-kubernetes-list-type": "set", "items": {"type": "string", "maxLength": 10}}}}),
            json!({"set": ["a"]}),
            json!({"set": ["a", "b"]}),
            false,
        ),
        (
            "oldSelf.v != 'X' || self.v in ['A', 'B']",
            json!({"type": "object", "properties": {"v": {"type": "string"}}}),
            json!({"v": "X"}),
            json!({"v": "A"}),
            true,
        ),
        (
            "oldSelf.v != 'X' || self.v in ['A', 'B']",
            json!({"type": "object", "properties": {"v": {"type": "string"}}}),
            json!({"v": "X"}),
            json!({"v": "Y"}),
            false,
        ),
        (
            "self.c >= oldSelf.c",
            json!({"type": "object", "properties": {"c": {"type": "integer"}}}),
            json!({"c": 5}),
            json!({"c": 4}),
            false,
        ),
    ];
    for (rule, mut schema, old, new, ok) in cases {
        schema["x-kubernetes-validations"] = json!([{"rule": rule}]);
        let r = compile(&crd(schema));
        // Never on create.
        assert!(
            r.validate(&obj(new.clone()), None, &[]).is_empty(),
            "{rule}"
        );
        let errs = r.validate(&obj(new), Some(&obj(old)), &[]);
        assert_eq!(errs.is_empty(), ok, "{rule}: {errs:?}");
    }
}

#[test]
fn transition_rule_on_enum_scalar() {
    let s = crd(
        json!({"type": "object", "properties": {"level": {"type": "string", "enum": ["low", "medium", "high"],
        "x-kubernetes-validations": [{"rule": "!(self == 'high' && oldSelf == 'low') && !(self == 'low' && oldSelf == 'high')",
                                      "message": "cannot transition directly between 'low' and 'high'"}]}}}),
    );
    let r = compile(&s);
    let errs = r.validate(
        &obj(json!({"level": "high"})),
        Some(&obj(json!({"level": "low"}))),
        &[],
    );
    assert_eq!(errs[0].field, "spec.level");
    assert_eq!(
        errs[0].message,
        "Invalid value: \"high\": cannot transition directly between 'low' and 'high'"
    );
    // Setting the field is not a transition.
    assert!(r
        .validate(&obj(json!({"level": "high"})), Some(&obj(json!({}))), &[])
        .is_empty());
}

#[test]
fn transition_rule_on_uncorrelatable_node_is_rejected() {
    let s = crd(
        json!({"type": "object", "properties": {"list": {"type": "array", "maxItems": 10,
        "items": {"type": "string", "maxLength": 10, "x-kubernetes-validations": [{"rule": "self == oldSelf"}]}}}}),
    );
    let errs = compile_err(&s);
    assert_eq!(
        errs[0].field,
        format!("{BASE}.properties[spec].properties[list].items.x-kubernetes-validations[0].rule")
    );
    assert_eq!(errs[0].message, format!("Invalid value: \"self == oldSelf\": oldSelf cannot be used on the uncorrelatable portion of the schema within {BASE}.properties[spec].properties[list]"));
    // Map lists correlate by key.
    let ok = crd(
        json!({"type": "object", "properties": {"list": {"type": "array",
        "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"],
        "items": {"type": "object", "required": ["k"], "properties": {"k": {"type": "string"}, "v": {"type": "integer"}},
                  "x-kubernetes-validations": [{"rule": "self.v >= oldSelf.v"}]}}}}),
    );
    let r = compile(&ok);
    let errs = r.validate(
        &obj(json!({"list": [{"k": "b", "v": 1}, {"k": "a", "v": 1}]})),
        Some(&obj(json!({"list": [{"k": "a", "v": 2}]}))),
        &[],
    );
    assert_eq!(errs.len(), 1);
    assert_eq!(errs[0].field, "spec.list[1]");
}

#[test]
fn optional_old_self_table() {
    let s = |rule: &str| {
        crd(
            json!({"type": "object", "properties": {"v": {"type": "string",
            "x-kubernetes-validations": [{"rule": rule, "optionalOldSelf": true}]}}}),
        )
    };
    let r = compile(&s(
        "self == \"foo\" || (oldSelf.hasValue() && oldSelf.value() != \"foo\")",
    ));
    // Create: runs with oldSelf = none.
    assert_eq!(r.validate(&obj(json!({"v": "bar"})), None, &[]).len(), 1);
    assert!(r.validate(&obj(json!({"v": "foo"})), None, &[]).is_empty());
    assert!(r
        .validate(
            &obj(json!({"v": "bar"})),
            Some(&obj(json!({"v": "old"}))),
            &[]
        )
        .is_empty());
    assert_eq!(
        r.validate(
            &obj(json!({"v": "bar"})),
            Some(&obj(json!({"v": "foo"}))),
            &[]
        )
        .len(),
        1
    );

    let r = compile(&s("[oldSelf.orValue(\"\"), self].all(x, [\"OldCase1\", \"OldCase2\"].exists(case, x == case)) || [\"NewCase1\", \"NewCase2\"].exists(case, self == case) || [\"NewCase\"].exists(c, c == self)"));
    assert!(r
        .validate(&obj(json!({"v": "NewCase1"})), None, &[])
        .is_empty());
    assert!(r
        .validate(
            &obj(json!({"v": "OldCase2"})),
            Some(&obj(json!({"v": "OldCase1"}))),
            &[]
        )
        .is_empty());
    assert_eq!(
        r.validate(&obj(json!({"v": "OldCase2"})), None, &[]).len(),
        1
    );

    let r = compile(&s(
        "oldSelf.optMap(o, o.size()).orValue(0) < 4 || self.size() >= 4",
    ));
    assert!(r.validate(&obj(json!({"v": "ab"})), None, &[]).is_empty());
    assert!(r
        .validate(&obj(json!({"v": "ab"})), Some(&obj(json!({"v": "a"}))), &[])
        .is_empty());
    assert_eq!(
        r.validate(
            &obj(json!({"v": "ab"})),
            Some(&obj(json!({"v": "abcd"}))),
            &[]
        )
        .len(),
        1
    );

    // optionalOldSelf without oldSelf is rejected.
    let bad = crd(
        json!({"type": "object", "properties": {"v": {"type": "string",
        "x-kubernetes-validations": [{"rule": "self == 'a'", "optionalOldSelf": true}]}}}),
    );
    let errs = compile_err(&bad);
    assert_eq!(
        errs[0].field,
        format!(
            "{BASE}.properties[spec].properties[v].x-kubernetes-validations[0].optionalOldSelf"
        )
    );
    assert_eq!(
        errs[0].message,
        "Invalid value: true: may not be set if oldSelf is not used in rule"
    );
}

#[test]
fn ratcheting_unchanged_values() {
    let s = crd(json!({"type": "object", "properties": {
        "a": {"type": "integer", "x-kubernetes-validations": [{"rule": "self > 5"}]},
        "b": {"type": "integer", "x-kubernetes-validations": [{"rule": "self > 5"}]}}}));
    let r = compile(&s);
    let old = obj(json!({"a": 1, "b": 1}));
    let errs = r.validate(&obj(json!({"a": 1, "b": 2})), Some(&old), &[]);
    assert_eq!(errs.len(), 1);
    assert_eq!(errs[0].field, "spec.b");
}

#[test]
fn message_expression() {
    let schema = |me: &str, bounded: bool| {
        let x = if bounded {
            json!({"type": "integer", "maximum": 100})
        } else {
            json!({"type": "integer"})
        };
        crd(
            json!({"type": "object", "properties": {"x": x, "maxLimit": {"type": "integer"}},
            "x-kubernetes-validations": [{"rule": "self.x <= self.maxLimit", "messageExpression": me, "message": "static"}]}),
        )
    };
    // The documented example is over budget on current servers: string(int) has no size bound.
    let errs = compile_err(&schema(
        "\"x exceeded max limit of \" + string(self.maxLimit)",
        false,
    ));
    assert_eq!(
        errs[0].field,
        format!("{BASE}.properties[spec].x-kubernetes-validations[0].messageExpression")
    );
    assert_eq!(errs[0].reason, "FieldValueForbidden");
    assert_eq!(errs[0].message, "Forbidden: estimated messageExpression cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)");
    // A bounded message expression works, and falls back to `message` when it yields "".
    let r = compile(&schema("'x exceeded max limit'", false));
    let errs = r.validate(&obj(json!({"x": 5, "maxLimit": 1})), None, &[]);
    assert_eq!(errs[0].message, "Invalid value: x exceeded max limit");
    let r = compile(&schema("''", false));
    let errs = r.validate(&obj(json!({"x": 5, "maxLimit": 1})), None, &[]);
    assert_eq!(errs[0].message, "Invalid value: static");
    let r = compile(&schema("self.x > 100 ? 'big' : 'has\\nnewline'", false));
    let errs = r.validate(&obj(json!({"x": 5, "maxLimit": 1})), None, &[]);
    assert_eq!(errs[0].message, "Invalid value: static");
    // Must be a string.
    let errs = compile_err(&schema("self.x", false));
    assert!(errs[0]
        .message
        .ends_with("messageExpression must evaluate to a string"));
}

#[test]
fn reason_and_field_path() {
    let s = crd(json!({"type": "object", "properties": {
        "x": {"type": "integer"}, "maxLimit": {"type": "integer"},
        "foo": {"type": "object", "properties": {"test": {"type": "object", "properties": {"x": {"type": "integer"}}}}},
        "testMap": {"type": "object", "additionalProperties": {"type": "string"}}},
        "x-kubernetes-validations": [
            {"rule": "self.x <= self.maxLimit", "reason": "FieldValueForbidden"},
            {"rule": "self.foo.test.x <= self.maxLimit", "fieldPath": ".foo.test.x"},
            {"rule": "self.x <= self.maxLimit", "reason": "FieldValueRequired", "fieldPath": ".testMap['foo']"},
            {"rule": "self.x <= self.maxLimit", "reason": "FieldValueDuplicate", "fieldPath": ".testMap.foo"}]}));
    let r = compile(&s);
    let errs = r.validate(
        &obj(json!({"x": 5, "maxLimit": 1, "foo": {"test": {"x": 5}}, "testMap": {}})),
        None,
        &[],
    );
    let got: Vec<(&str, &str, &str)> = errs
        .iter()
        .map(|e| (e.reason.as_str(), e.field.as_str(), e.message.as_str()))
        .collect();
    assert_eq!(
        got,
        vec![
            (
                "FieldValueForbidden",
                "spec",
                "Forbidden: failed rule: self.x <= self.maxLimit"
            ),
            (
                "FieldValueInvalid",
                "spec.foo.test.x",
                "Invalid value: failed rule: self.foo.test.x <= self.maxLimit"
            ),
            (
                "FieldValueRequired",
                "spec.testMap[foo]",
                "Required value: failed rule: self.x <= self.maxLimit"
            ),
            (
                "FieldValueDuplicate",
                "spec.testMap[foo]",
                "Duplicate value"
            ),
        ]
    );
    // Bad reason and field path.
    let bad = crd(
        json!({"type": "object", "properties": {"x": {"type": "integer"}},
        "x-kubernetes-validations": [{"rule": "self.x > 0", "reason": "Other", "fieldPath": ".y"}]}),
    );
    let errs = compile_err(&bad);
    assert_eq!(errs[0].message, "Unsupported value: \"Other\": supported values: \"FieldValueDuplicate\", \"FieldValueForbidden\", \"FieldValueInvalid\", \"FieldValueRequired\"");
    assert_eq!(
        errs[1].message,
        "Invalid value: \".y\": must be a valid path"
    );
}

fn budget_schema(limits: bool, nested: bool) -> Value {
    let items = if limits {
        json!({"type": "string", "maxLength": 10})
    } else {
        json!({"type": "string"})
    };
    let mut foo = json!({"type": "array", "items": items, "x-kubernetes-validations": [{"rule": "self.all(x, x.contains('a string'))"}]});
    if limits {
        foo["maxItems"] = json!(25);
    }
    if nested {
        foo = json!({"type": "array", "items": {"type": "array", "items": {"type": "integer"},
            "x-kubernetes-validations": [{"rule": "self.all(x, x == 5)"}]}});
    }
    crd(json!({"type": "object", "properties": {"foo": foo}}))
}

#[test]
fn cost_budgets() {
    let errs = compile_err(&budget_schema(false, false));
    assert_eq!(
        errs[0].field,
        format!("{BASE}.properties[spec].properties[foo].x-kubernetes-validations[0].rule")
    );
    assert_eq!(errs[0].message, "Forbidden: estimated rule cost exceeds budget by factor of more than 100x (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)");
    compile(&budget_schema(true, false));
    // The rule on the items instead of the list costs the same.
    compile(&crd(
        json!({"type": "object", "properties": {"foo": {"type": "array", "maxItems": 25,
        "items": {"type": "string", "maxLength": 10, "x-kubernetes-validations": [{"rule": "self.contains('a string')"}]}}}}),
    ));
    // Unbounded list of ints: allowed; nested: rejected.
    compile(&crd(
        json!({"type": "object", "properties": {"foo": {"type": "array", "items": {"type": "integer"},
        "x-kubernetes-validations": [{"rule": "self.all(x, x == 5)"}]}}}),
    ));
    let errs = compile_err(&budget_schema(false, true));
    assert!(
        errs[0]
            .message
            .contains("estimated rule cost exceeds budget"),
        "{errs:?}"
    );
}

#[test]
fn runtime_cost_limit_stops_runaway_rules() {
    let s = crd(
        json!({"type": "object", "properties": {"l": {"type": "array", "maxItems": 2000, "items": {"type": "integer"},
        "x-kubernetes-validations": [{"rule": "self.all(a, self.all(b, a + b >= 0))"}]}}}),
    );
    // 2000 * 2000 iterations: over the per-call limit, under the static limit? No: rejected.
    assert!(Rules::compile(&Node::compile(&s), BASE).is_err());
    let l: Vec<i64> = (0..2000).collect();
    let s = crd(
        json!({"type": "object", "properties": {"l": {"type": "array", "maxItems": 10, "items": {"type": "integer"},
        "x-kubernetes-validations": [{"rule": "self.all(a, self.all(b, a + b >= 0))"}]}}}),
    );
    let r = compile(&s);
    // An object over maxItems (schema validation reports that separately) must still stop.
    let start = std::time::Instant::now();
    let errs = r.validate(&obj(json!({"l": l})), None, &[]);
    assert!(start.elapsed().as_secs() < 5);
    assert_eq!(errs[0].message, "Invalid value: \"array\": 'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: self.all(a, self.all(b, a + b >= 0))");
}

#[test]
fn blocking_schema_errors_skip_rules() {
    let r = compile(&crontab_schema(
        json!([{"rule": "self.replicas <= self.maxReplicas"}]),
    ));
    let existing = vec![crate::error::field::required("spec.replicas", "")];
    let errs = r.validate(
        &obj(json!({"minReplicas": 0, "maxReplicas": 10})),
        None,
        &existing,
    );
    assert_eq!(errs[0].field, "<nil>");
    assert_eq!(errs[0].message, "Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation");
}

#[test]
fn library_functions() {
    let s = json!({"type": "object", "properties": {
        "s": {"type": "string", "maxLength": 64}, "l": {"type": "array", "maxItems": 10, "items": {"type": "integer"}},
        "q": {"type": "string", "maxLength": 16}, "ip": {"type": "string", "maxLength": 64},
        "u": {"type": "string", "maxLength": 64}, "ts": {"type": "string", "format": "date-time"},
        "d": {"type": "string", "format": "duration"}, "b": {"type": "string", "format": "byte"},
        "n": {"type": "number"}, "m": {"type": "object", "maxProperties": 10, "additionalProperties": {"type": "integer"}}}});
    let v = json!({"s": "Hello, World", "l": [1, 2, 3], "q": "1.5Gi", "ip": "10.0.0.1", "u": "https://example.com:8080/path?x=1&x=2",
        "ts": "2023-05-06T07:08:09Z", "d": "1h30m", "b": "aGVsbG8=", "n": 1.5, "m": {"a": 1, "b": 2}});
    let rules = [
        "self.s.lowerAscii() == 'hello, world' && self.s.upperAscii() == 'HELLO, WORLD'",
        "self.s.indexOf('o') == 4 && self.s.lastIndexOf('o') == 8 && self.s.charAt(1) == 'e'",
        "self.s.split(', ') == ['Hello', 'World'] && ['a', 'b'].join('-') == 'a-b'",
        "self.s.replace('l', 'L') == 'HeLLo, WorLd' && self.s.substring(7) == 'World' && '  x '.trim() == 'x'",
        "self.s.find('[A-Z]') == 'H' && self.s.findAll('[A-Z]') == ['H', 'W']",
        "self.l.isSorted() && self.l.sum() == 6 && self.l.min() == 1 && self.l.max() == 3 && self.l.indexOf(2) == 1 && self.l.lastIndexOf(9) == -1",
        "quantity(self.q).isGreaterThan(quantity('1Gi')) && quantity('1Gi') == quantity('1024Mi') && isQuantity('1k') && !isQuantity('x')",
        "quantity(self.q).add(quantity('512Mi')).compareTo(quantity('2Gi')) == 0 && quantity('100m').asApproximateFloat() == 0.1",
        "ip(self.ip).family() == 4 && cidr('10.0.0.0/8').containsIP(self.ip) && !isIP('x') && cidr('10.0.0.0/8').prefixLength() == 8",
        "url(self.u).getHost() == 'example.com:8080' && url(self.u).getHostname() == 'example.com' && url(self.u).getPort() == '8080' && url(self.u).getEscapedPath() == '/path' && url(self.u).getQuery()['x'] == ['1', '2']",
        "self.ts.getFullYear() == 2023 && self.ts.getMonth() == 4 && self.ts + self.d > self.ts && self.d == duration('90m')",
        "string(self.d) == '5400s' && string(self.ts) == '2023-05-06T07:08:09Z' && timestamp('2023-05-06T07:08:09Z') == self.ts",
        "self.b == b'hello' && string(self.n) == '1.5' && int('42') == 42 && double(1) == 1.0",
        "sets.contains([1, 2, 3], [1, 2]) && sets.equivalent([1, 2], [2, 1]) && sets.intersects([1], [1, 5])",
        "'%s is %d'.format(['x']) == 'x is 3' || '%s is %d'.format([dyn('x'), dyn(3)]) == 'x is 3' && strings.quote('a\"b') == '\"a\\\\\"b\"'",
        "self.m.all(k, v, v > 0) && self.m.exists(k, v, k == 'a') && self.m.existsOne(k, v, v == 2)",
        "self.l.transformList(i, v, v * 2) == [2, 4, 6] && self.m.transformMap(k, v, v + 1)['a'] == 2",
        "cel.bind(x, self.l.size(), x == 3) && optional.of(1).value() == 1 && !optional.none().hasValue()",
        "self.?missing.orValue(0) == 0 && self.m[?'zz'].orValue(7) == 7 && self.m.?a.hasValue()",
        "format.dns1123Label().validate('Bad_Name').hasValue() && !format.named('dns1123Label').value().validate('good').hasValue()",
        "self.l.map(x, x * 2).filter(x, x > 2) == [4, 6] && self.l.exists_one(x, x == 2)",
        "1 < 1.5 && 2u > 1 && dyn(1) == 1.0 && [1, 2] + [3] == [1, 2, 3] && {'a': 1}.a == 1",
        "semver('1.2.3').isLessThan(semver('1.10.0')) && semver('1.2.3').major() == 1",
    ];
    for rule in rules {
        let mut schema = s.clone();
        schema["properties"]["missing"] = json!({"type": "integer"});
        passes(rule, schema, v.clone());
    }
}

#[test]
fn runtime_errors_are_reported() {
    let s = json!({"type": "object", "properties": {"m": {"type": "object", "maxProperties": 5, "additionalProperties": {"type": "integer"}},
        "i": {"x-kubernetes-int-or-string": true}}});
    let errs = run("self.m['nope'] == 1", s.clone(), json!({"m": {}}));
    assert_eq!(
        errs[0].message,
        "Invalid value: \"object\": no such key: nope evaluating rule: self.m['nope'] == 1"
    );
    let errs = run("self.i.startsWith('a')", s, json!({"i": 5}));
    assert!(errs[0].message.contains("'no such overload': call arguments did not match a supported operator, function or macro signature for rule"), "{errs:?}");
}

#[test]
fn embedded_resources_expose_type_and_name() {
    let s = crd(
        json!({"type": "object", "properties": {"tpl": {"type": "object", "x-kubernetes-embedded-resource": true,
        "x-kubernetes-preserve-unknown-fields": true,
        "x-kubernetes-validations": [{"rule": "self.kind == 'Pod' && self.metadata.name.startsWith('p')"}]}}}),
    );
    let r = compile(&s);
    assert!(r
        .validate(
            &obj(json!({"tpl": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p1"}}})),
            None,
            &[]
        )
        .is_empty());
    assert_eq!(
        r.validate(
            &obj(json!({"tpl": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "x"}}})),
            None,
            &[]
        )
        .len(),
        1
    );
}

/// A tiny deterministic generator (no extra dependency).
struct Gen(u64);

impl Gen {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[(self.next() % xs.len() as u64) as usize]
    }
}

#[test]
fn generated_rules_and_objects_never_panic() {
    let atoms = [
        "self",
        "self.a",
        "self.s",
        "self.l",
        "self.m",
        "oldSelf",
        "1",
        "2u",
        "1.5",
        "'x'",
        "b'y'",
        "true",
        "null",
        "[]",
        "{}",
        "[1, 'a']",
        "self.l[0]",
        "self.m['k']",
        "self.i",
        "dyn(self.s)",
        "has(self.a)",
        "size(self.l)",
        "self.l.all(x, x > 0)",
        "self.m.exists(k, v, v == 1)",
        "self.s.matches('[')",
        "self.s.matches('^a+$')",
        "int(self.s)",
        "quantity(self.s)",
        "ip(self.s)",
        "url(self.s)",
        "self.l.map(x, x / 0)",
        "9223372036854775807 + 1",
        "self.s.substring(5, 1)",
        "cel.bind(z, 1, z)",
        "self.?a",
        "optional.none()",
        "self.l.sum()",
        "self.l.min()",
        "timestamp(self.s)",
        "duration(self.s)",
        "'%d'.format([self.s])",
        "self.s.split('')",
        "type(self.i) == int",
        "[self.l, self.l]",
        "self.a / 0",
        "self.l == oldSelf.l",
        "self.m.transformMap(k, v, v)",
        "self.s.charAt(100)",
        "-9223372036854775808",
        "self.i.startsWith('a')",
        "self.l.isSorted()",
        "self.s.indexOf('', 99)",
        "self.s + self.s",
    ];
    let ops = [
        "==", "!=", "<", ">=", "&&", "||", "+", "-", "*", "/", "%", "in", "?", ":",
    ];
    let junk = [
        "(", ")", ".", ",", "[", "]", "{", "}", "!", "\\", "'", "\"", "\u{0}", "é",
    ];
    let values = [
        json!({}),
        json!({"a": 1, "s": "abc", "l": [1, 2], "m": {"k": 1}, "i": "x"}),
        json!({"a": -5, "s": "", "l": [], "m": {}, "i": 7}),
        json!({"a": null, "s": null, "l": null}),
        json!({"a": 1.5, "s": 3, "l": "x", "m": []}),
        json!({"s": "1h", "l": [9223372036854775807i64, 1], "m": {"a": null}}),
    ];
    let schema = crd(json!({"type": "object", "properties": {
        "a": {"type": "integer", "nullable": true}, "s": {"type": "string", "maxLength": 8, "nullable": true},
        "l": {"type": "array", "maxItems": 4, "items": {"type": "integer"}, "nullable": true},
        "m": {"type": "object", "maxProperties": 4, "additionalProperties": {"type": "integer", "nullable": true}},
        "i": {"x-kubernetes-int-or-string": true}}}));
    let mut g = Gen(0x9e3779b97f4a7c15);
    let start = std::time::Instant::now();
    let mut compiled = 0;
    for _ in 0..2000 {
        let n = g.next() % 4;
        let mut parts = vec![g.pick(&atoms)];
        for _ in 0..n {
            parts.push(g.pick(&ops));
            parts.push(g.pick(&atoms));
        }
        if g.next().is_multiple_of(8) {
            let at = (g.next() as usize) % (parts.len() + 1);
            parts.insert(at, g.pick(&junk));
        }
        let rule = parts.join(" ");
        let mut s = schema.clone();
        s["properties"]["spec"]["x-kubernetes-validations"] = json!([{"rule": rule}]);
        if let Ok(r) = Rules::compile(&Node::compile(&s), BASE) {
            compiled += 1;
            for (i, v) in values.iter().enumerate() {
                let old = &values[(i + 1) % values.len()];
                let _ = r.validate(&obj(v.clone()), Some(&obj(old.clone())), &[]);
            }
        }
    }
    assert!(compiled > 100, "only {compiled} rules compiled");
    assert!(start.elapsed().as_secs_f64() < 20.0);
}

#[test]
fn twenty_rules_evaluate_fast() {
    let rules: Vec<Value> = (0..20)
        .map(|i| json!({"rule": format!("self.replicas >= {i} - 100 && self.name.startsWith('n') && size(self.tags) < 10")}))
        .collect();
    let s = crd(
        json!({"type": "object", "x-kubernetes-validations": rules, "properties": {
        "replicas": {"type": "integer"}, "name": {"type": "string", "maxLength": 63},
        "tags": {"type": "array", "maxItems": 10, "items": {"type": "string", "maxLength": 10}}}}),
    );
    let r = compile(&s);
    let o = obj(json!({"replicas": 3, "name": "nginx", "tags": ["a", "b"]}));
    let start = std::time::Instant::now();
    for _ in 0..2000 {
        assert!(r.validate(&o, None, &[]).is_empty());
    }
    let per_object = start.elapsed() / 2000;
    // Debug builds are ~10x slower than release; keep a generous bound here.
    assert!(per_object.as_micros() < 2000, "{per_object:?} per object");
}
