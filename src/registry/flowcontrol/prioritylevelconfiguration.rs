//! The flowcontrol.apiserver.k8s.io/v1 PriorityLevelConfiguration kind: a priority level's
//! share of the server's concurrency, and how requests beyond it wait (queues, shuffle-sharded
//! hands) or are rejected. `exempt` and `catch-all` are mandatory: their spec is fixed (but for
//! `exempt`'s own `spec.exempt`).

use std::sync::Arc;

use serde_json::{json, Value};

use super::{condition_type_errors, is_bootstrap, mandatory_spec, GROUP};
use crate::controllers::Work;
use crate::error::{field, StatusCause};
use crate::machinery::gofmt::{go_internal_json, GoShape};
use crate::registry::builtin;
use crate::registry::object_meta::meta_str;
use crate::registry::resource::{ApiResource, ClusterInfo};
use crate::registry::strategy::{keep_only_status, Strategy};
use crate::registry::table::{Column, Columns};
use crate::store::selector::generic_unsupported_field;
use crate::store::StoredObject;

/// An annotation of the beta API that v1 objects may not carry.
const PRESERVE_ZERO: &str = "flowcontrol.k8s.io/v1beta3-preserve-zero-concurrency-shares";
/// The most queues a level may have.
const MAX_QUEUES: i64 = 10_000_000;
/// The bits a shuffle-sharding hand may take (`shufflesharding.MaxHashBits`).
const MAX_HASH_BITS: f64 = 60.0;

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind(
        GROUP,
        "v1",
        "prioritylevelconfigurations",
        Arc::new(LevelStrategy),
    )
    .part("status", Arc::new(StatusStrategy))
    .with(|r| {
        r.unsupported_field(generic_unsupported_field)
            .table(columns())
            .bootstrap(bootstrap)
    })
    .build()
}

fn bootstrap(_cluster: &ClusterInfo) -> Vec<Value> {
    super::bootstrap_levels()
}

/// A number of the limited configuration (`path` below `spec.limited`), or `<none>`.
fn limited_cell(o: &Value, path: &[&str]) -> Value {
    let limited = &o["spec"]["limited"];
    if !limited.is_object() {
        return json!("<none>");
    }
    let v = path.iter().fold(limited, |v, k| &v[*k]);
    v.as_i64().map_or(json!("<none>"), |n| json!(n))
}

/// A number of the queuing configuration, or `<none>`.
fn queuing(o: &Value, key: &str) -> Value {
    limited_cell(o, &["limitResponse", "queuing", key])
}

fn columns() -> Columns {
    Columns::new(vec![
        Column::name(),
        Column::computed("Type", "string", 0, "`type` indicates whether this priority level is subject to limitation on request execution.  A value of `\"Exempt\"` means that requests of this priority level are not subject to a limit (and thus are never queued) and do not detract from the capacity made available to other priority levels.  A value of `\"Limited\"` means that (a) requests of this priority level _are_ subject to limits and (b) some of the server's limited capacity is made available exclusively to this priority level. Required.", |o| {
            json!(o["spec"]["type"].as_str().unwrap_or(""))
        }),
        Column::computed("NominalConcurrencyShares", "string", 0, "`nominalConcurrencyShares` (NCS) contributes to the computation of the NominalConcurrencyLimit (NominalCL) of this level. This is the number of execution seats available at this priority level. This is used both for requests dispatched from this priority level as well as requests dispatched from other priority levels borrowing seats from this level. The server's concurrency limit (ServerCL) is divided among the Limited priority levels in proportion to their NCS values:\n\nNominalCL(i)  = ceil( ServerCL * NCS(i) / sum_ncs ) sum_ncs = sum[priority level k] NCS(k)\n\nBigger numbers mean a larger nominal concurrency limit, at the expense of every other priority level.\n\nIf not specified, this field defaults to a value of 30.\n\nSetting this field to zero supports the construction of a \"jail\" for this priority level that is used to hold some request(s)", |o| {
            limited_cell(o, &["nominalConcurrencyShares"])
        }),
        Column::computed("Queues", "string", 0, "`queues` is the number of queues for this priority level. The queues exist independently at each apiserver. The value must be positive.  Setting it to 1 effectively precludes shufflesharding and thus makes the distinguisher method of associated flow schemas irrelevant.  This field has a default value of 64.", |o| queuing(o, "queues")),
        Column::computed("HandSize", "string", 0, "`handSize` is a small positive number that configures the shuffle sharding of requests into queues.  When enqueuing a request at this priority level the request's flow identifier (a string pair) is hashed and the hash value is used to shuffle the list of queues and deal a hand of the size specified here.  The request is put into one of the shortest queues in that hand. `handSize` must be no larger than `queues`, and should be significantly smaller (so that a few heavy flows do not saturate most of the queues).  See the user-facing documentation for more extensive guidance on setting this field.  This field has a default value of 8.", |o| queuing(o, "handSize")),
        Column::computed("QueueLengthLimit", "string", 0, "`queueLengthLimit` is the maximum number of requests allowed to be waiting in a given queue of this priority level at a time; excess requests are rejected.  This value must be positive.  If not specified, it will be defaulted to 50.", |o| queuing(o, "queueLengthLimit")),
        Column::age("string"),
    ])
}

/// The internal PriorityLevelConfigurationSpec, for the mandatory objects' messages.
const SPEC: GoShape = GoShape::Struct(
    &[
        ("type", "Type", GoShape::Text),
        (
            "limited",
            "Limited",
            GoShape::Struct(
                &[
                    (
                        "nominalConcurrencyShares",
                        "NominalConcurrencyShares",
                        GoShape::Number,
                    ),
                    (
                        "limitResponse",
                        "LimitResponse",
                        GoShape::Struct(
                            &[
                                ("type", "Type", GoShape::Text),
                                (
                                    "queuing",
                                    "Queuing",
                                    GoShape::Struct(
                                        &[
                                            ("queues", "Queues", GoShape::Number),
                                            ("handSize", "HandSize", GoShape::Number),
                                            (
                                                "queueLengthLimit",
                                                "QueueLengthLimit",
                                                GoShape::Number,
                                            ),
                                        ],
                                        true,
                                    ),
                                ),
                            ],
                            false,
                        ),
                    ),
                    (
                        "lendablePercent",
                        "LendablePercent",
                        GoShape::OptionalNumber,
                    ),
                    (
                        "borrowingLimitPercent",
                        "BorrowingLimitPercent",
                        GoShape::OptionalNumber,
                    ),
                ],
                true,
            ),
        ),
        (
            "exempt",
            "Exempt",
            GoShape::Struct(
                &[
                    (
                        "nominalConcurrencyShares",
                        "NominalConcurrencyShares",
                        GoShape::OptionalNumber,
                    ),
                    (
                        "lendablePercent",
                        "LendablePercent",
                        GoShape::OptionalNumber,
                    ),
                ],
                true,
            ),
        ),
    ],
    false,
);

/// A percentage: 0 to 100.
fn percent_errors(v: &Value, path: &str) -> Vec<StatusCause> {
    match v.as_i64() {
        Some(p) if !(0..=100).contains(&p) => {
            vec![field::invalid(
                path,
                &json!(p),
                "must be between 0 and 100, inclusive",
            )]
        }
        _ => Vec::new(),
    }
}

/// A count that may not be negative.
fn non_negative(v: &Value, path: &str, detail: &str) -> Vec<StatusCause> {
    match v.as_i64() {
        Some(n) if n < 0 => vec![field::invalid(path, &json!(n), detail)],
        _ => Vec::new(),
    }
}

/// `ValidateLimitResponse`.
fn limit_response_errors(response: &Value) -> Vec<StatusCause> {
    let path = "spec.limited.limitResponse";
    let queuing = &response["queuing"];
    match response["type"].as_str().unwrap_or("") {
        "Reject" if queuing.is_object() => vec![field::forbidden(
            &format!("{path}.queuing"),
            "must be nil if limited.limitResponse.type is not Limited",
        )],
        "Reject" => Vec::new(),
        "Queue" if !queuing.is_object() => vec![field::required(
            &format!("{path}.queuing"),
            "must not be empty if limited.limitResponse.type is Limited",
        )],
        "Queue" => queuing_errors(queuing, &format!("{path}.queuing")),
        other => vec![field::not_supported(
            &format!("{path}.type"),
            &json!(other),
            &["Queue", "Reject"],
        )],
    }
}

/// `ValidatePriorityLevelQueuingConfiguration`.
fn queuing_errors(q: &Value, path: &str) -> Vec<StatusCause> {
    let num = |k: &str| q[k].as_i64().unwrap_or(0);
    let (length, queues, hand) = (num("queueLengthLimit"), num("queues"), num("handSize"));
    let mut errs = Vec::new();
    if length <= 0 {
        errs.push(field::invalid(
            &format!("{path}.queueLengthLimit"),
            &json!(length),
            "must be positive",
        ));
    }
    if queues <= 0 {
        errs.push(field::invalid(
            &format!("{path}.queues"),
            &json!(queues),
            "must be positive",
        ));
    } else if queues > MAX_QUEUES {
        errs.push(field::invalid(
            &format!("{path}.queues"),
            &json!(queues),
            "must not be greater than 10000000",
        ));
    }
    let at = format!("{path}.handSize");
    if hand <= 0 {
        errs.push(field::invalid(&at, &json!(hand), "must be positive"));
    } else if hand > queues {
        errs.push(field::invalid(
            &at,
            &json!(hand),
            &format!("should not be greater than queues ({queues})"),
        ));
    } else if ((queues as f64).log2() * hand as f64).ceil() > MAX_HASH_BITS {
        let why = format!("required entropy bits of deckSize {queues} and handSize {hand} should not be greater than 60");
        errs.push(field::invalid(&at, &json!(hand), &why));
    }
    errs
}

/// `ValidatePriorityLevelConfigurationSpec`.
fn spec_errors(obj: &Value) -> Vec<StatusCause> {
    let spec = &obj["spec"];
    let kind = spec["type"].as_str().unwrap_or("");
    let mut errs = Vec::new();
    if (meta_str(obj, "name") == "exempt") != (kind == "Exempt") {
        let why = "must be 'Exempt' if and only if `name` is 'exempt'";
        errs.push(field::invalid("spec.type", &json!(kind), why));
    }
    let (limited, exempt) = (&spec["limited"], &spec["exempt"]);
    match kind {
        "Exempt" => {
            if limited.is_object() {
                errs.push(field::forbidden(
                    "spec.limited",
                    "must be nil if the type is not Limited",
                ));
            }
            let shares = &exempt["nominalConcurrencyShares"];
            errs.extend(non_negative(
                shares,
                "spec.exempt.nominalConcurrencyShares",
                "must be a non-negative integer",
            ));
            errs.extend(percent_errors(
                &exempt["lendablePercent"],
                "spec.exempt.lendablePercent",
            ));
        }
        "Limited" => {
            if exempt.is_object() {
                errs.push(field::forbidden(
                    "spec.exempt",
                    "must be nil if the type is Limited",
                ));
            }
            if !limited.is_object() {
                errs.push(field::required(
                    "spec.limited",
                    "must not be empty when type is Limited",
                ));
                return errs;
            }
            let shares = &limited["nominalConcurrencyShares"];
            errs.extend(non_negative(
                shares,
                "spec.limited.nominalConcurrencyShares",
                "must be a non-negative integer",
            ));
            errs.extend(limit_response_errors(&limited["limitResponse"]));
            errs.extend(percent_errors(
                &limited["lendablePercent"],
                "spec.limited.lendablePercent",
            ));
            let borrowing = &limited["borrowingLimitPercent"];
            errs.extend(non_negative(
                borrowing,
                "spec.limited.borrowingLimitPercent",
                "if specified, must be a non-negative integer",
            ));
        }
        other => errs.push(field::not_supported(
            "spec.type",
            &json!(other),
            &["Exempt", "Limited"],
        )),
    }
    errs
}

/// `ValidatePriorityLevelConfiguration`: the beta annotation, the spec, the mandatory levels.
fn level_errors(obj: &Value) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    if obj["metadata"]["annotations"].get(PRESERVE_ZERO).is_some() {
        let why = format!("annotation '{PRESERVE_ZERO}' is forbidden");
        errs.push(field::forbidden("metadata.annotations", &why));
    }
    errs.extend(spec_errors(obj));
    let name = meta_str(obj, "name");
    let Some(fixed) = mandatory_spec(false, name) else {
        return errs;
    };
    // `exempt` may set its own `spec.exempt`.
    let (mut mine, mut wanted) = (obj["spec"].clone(), fixed.clone());
    let suffix = if name == "exempt" {
        mine["exempt"] = Value::Null;
        wanted["exempt"] = Value::Null;
        "except the 'spec.exempt' field must equal the fixed value"
    } else {
        "must equal the fixed value"
    };
    if go_internal_json(&mine, SPEC) != go_internal_json(&wanted, SPEC) {
        let mut cause = field::invalid("spec", &Value::Null, "");
        cause.message = format!(
            "Invalid value: {}: spec of '{name}' {suffix}",
            go_internal_json(&obj["spec"], SPEC)
        );
        errs.push(cause);
    }
    errs
}

/// v1's defaults: a limited level's shares 30 and lendable 0, queuing 64 queues of 50 with
/// hands of 8; an exempt level's shares and lendable 0.
fn set_defaults(obj: &mut Value) {
    let spec = &mut obj["spec"];
    if spec["limited"].is_object() {
        let limited = &mut spec["limited"];
        for (key, default) in [("nominalConcurrencyShares", 30), ("lendablePercent", 0)] {
            if limited[key].is_null() {
                limited[key] = json!(default);
            }
        }
        let queuing = &mut limited["limitResponse"]["queuing"];
        if queuing.is_object() {
            for (key, default) in [("handSize", 8), ("queues", 64), ("queueLengthLimit", 50)] {
                if queuing[key].as_i64().unwrap_or(0) == 0 {
                    queuing[key] = json!(default);
                }
            }
        }
    }
    if spec["exempt"].is_object() {
        for key in ["nominalConcurrencyShares", "lendablePercent"] {
            if spec["exempt"][key].is_null() {
                spec["exempt"][key] = json!(0);
            }
        }
    }
}

/// flowcontrol/v1 PriorityLevelConfiguration.
pub struct LevelStrategy;

impl Strategy for LevelStrategy {
    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn defaults(&self, obj: &mut Value) {
        set_defaults(obj);
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        obj["status"] = json!({});
    }

    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        obj["status"] = old.get("status").cloned().unwrap_or(json!({}));
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        level_errors(obj)
    }

    /// FlowSchemas naming the level may stop (or start) dangling.
    fn after_commit(&self, _obj: &StoredObject) -> Vec<Work> {
        vec![Work::FlowSchemaStatus]
    }

    fn after_remove(&self, obj: &StoredObject) -> Vec<Work> {
        let mut work = vec![Work::FlowSchemaStatus];
        if is_bootstrap(false, meta_str(&obj.value(), "name")) {
            work.push(Work::FlowControlBootstrap);
        }
        work
    }
}

/// `prioritylevelconfigurations/status`: conditions unique by type, each with a type.
pub struct StatusStrategy;

impl Strategy for StatusStrategy {
    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        keep_only_status(obj, old);
    }

    fn validate_update(&self, obj: &Value, _old: &Value) -> Vec<StatusCause> {
        condition_type_errors(obj)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::rendered as messages;
    use rstest::rstest;

    fn level(name: &str, spec: Value) -> Value {
        let mut obj = json!({"metadata": {"name": name}, "spec": spec});
        set_defaults(&mut obj);
        obj
    }

    #[test]
    fn defaults_of_v1() {
        let obj = level(
            "l",
            json!({"type": "Limited", "limited": {"limitResponse": {"type": "Queue", "queuing": {}}}}),
        );
        assert_eq!(
            obj["spec"]["limited"],
            json!({"nominalConcurrencyShares": 30, "lendablePercent": 0,
                "limitResponse": {"type": "Queue", "queuing": {"handSize": 8, "queues": 64, "queueLengthLimit": 50}}})
        );
        let zero = level(
            "l",
            json!({"type": "Limited", "limited": {"nominalConcurrencyShares": 0}}),
        );
        assert_eq!(
            zero["spec"]["limited"]["nominalConcurrencyShares"], 0,
            "an explicit 0 is kept"
        );
        let exempt = level("exempt", json!({"type": "Exempt", "exempt": {}}));
        assert_eq!(
            exempt["spec"]["exempt"],
            json!({"nominalConcurrencyShares": 0, "lendablePercent": 0})
        );
    }

    #[rstest]
    #[case("l", json!({"type": "Limited", "limited": {"limitResponse": {"type": "Reject"}}}), vec![])]
    #[case("l", json!({"type": ""}), vec!["spec.type: Unsupported value: \"\": supported values: \"Exempt\", \"Limited\""])]
    #[case("l", json!({"type": "Exempt", "limited": {"limitResponse": {"type": "Reject"}}}), vec![
        "spec.type: Invalid value: \"Exempt\": must be 'Exempt' if and only if `name` is 'exempt'",
        "spec.limited: Forbidden: must be nil if the type is not Limited"])]
    #[case("l", json!({"type": "Limited"}), vec!["spec.limited: Required value: must not be empty when type is Limited"])]
    #[case("l", json!({"type": "Limited", "limited": {"nominalConcurrencyShares": -1, "lendablePercent": 101, "borrowingLimitPercent": -1,
            "limitResponse": {"type": "Queue", "queuing": {"queues": 4, "handSize": 5, "queueLengthLimit": -1}}}}), vec![
        "spec.limited.nominalConcurrencyShares: Invalid value: -1: must be a non-negative integer",
        "spec.limited.limitResponse.queuing.queueLengthLimit: Invalid value: -1: must be positive",
        "spec.limited.limitResponse.queuing.handSize: Invalid value: 5: should not be greater than queues (4)",
        "spec.limited.lendablePercent: Invalid value: 101: must be between 0 and 100, inclusive",
        "spec.limited.borrowingLimitPercent: Invalid value: -1: if specified, must be a non-negative integer"])]
    #[case("l", json!({"type": "Limited", "limited": {"limitResponse": {"type": "Queue", "queuing": {"queues": 10000000, "handSize": 8}}}}), vec![
        "spec.limited.limitResponse.queuing.handSize: Invalid value: 8: required entropy bits of deckSize 10000000 and handSize 8 should not be greater than 60"])]
    #[case("l", json!({"type": "Limited", "limited": {"limitResponse": {"type": "Bogus"}}}), vec![
        "spec.limited.limitResponse.type: Unsupported value: \"Bogus\": supported values: \"Queue\", \"Reject\""])]
    #[case("catch-all", json!({"type": "Limited", "limited": {"nominalConcurrencyShares": 6, "limitResponse": {"type": "Reject"}}}), vec![
        "spec: Invalid value: {\"Type\":\"Limited\",\"Limited\":{\"NominalConcurrencyShares\":6,\"LimitResponse\":{\"Type\":\"Reject\",\"Queuing\":null},\"LendablePercent\":0,\"BorrowingLimitPercent\":null},\"Exempt\":null}: spec of 'catch-all' must equal the fixed value"])]
    #[case("exempt", json!({"type": "Exempt", "exempt": {"nominalConcurrencyShares": 7}}), vec![])]
    fn specs_as_the_apiserver_checks_them(
        #[case] name: &str,
        #[case] spec: Value,
        #[case] want: Vec<&str>,
    ) {
        assert_eq!(messages(level_errors(&level(name, spec))), want);
    }

    #[test]
    fn the_bootstrap_levels_are_valid() {
        for mut obj in super::super::bootstrap_levels() {
            set_defaults(&mut obj);
            assert!(level_errors(&obj).is_empty(), "{obj}");
        }
    }
}
