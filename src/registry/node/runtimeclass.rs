//! The node.k8s.io/v1 RuntimeClass kind: a container runtime configuration pods may name, its
//! handler (a DNS label, immutable), the overhead its pods carry (checked as container limits
//! are) and the scheduling constraints its pods get (a node selector, tolerations).

use std::sync::Arc;

use serde_json::{json, Value};

use crate::error::{field, StatusCause};
use crate::machinery::gofmt::go_quote;
use crate::registry::builtin;
use crate::registry::core::podspec::{limits_errors, tolerations_errors};
use crate::registry::resource::ApiResource;
use crate::registry::strategy::Strategy;
use crate::registry::table::{Column, Columns};
use crate::registry::validation::{dns_label_errors, immutable, labels_errors};
use crate::store::selector::generic_unsupported_field;

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind(
        "node.k8s.io",
        "v1",
        "runtimeclasses",
        Arc::new(RuntimeClassStrategy),
    )
    .with(|r| {
        r.unsupported_field(generic_unsupported_field)
            .table(Columns::new(vec![
                Column::name(),
                Column::computed("Handler", "string", 0, "", |o| {
                    json!(o["handler"].as_str().unwrap_or(""))
                }),
                Column::age("string"),
            ]))
            .delete_returns_object()
    })
    .build()
}

/// node/v1 RuntimeClass.
pub struct RuntimeClassStrategy;

fn class_errors(obj: &Value) -> Vec<StatusCause> {
    let mut errs = match obj["handler"].as_str().unwrap_or("") {
        "" => vec![field::required("handler", "")],
        handler => dns_label_errors("handler", handler),
    };
    if let Some(fixed) = obj["overhead"].get("podFixed").filter(|f| !f.is_null()) {
        errs.extend(limits_errors(fixed, "overhead"));
    }
    let scheduling = &obj["scheduling"];
    if scheduling.is_object() {
        errs.extend(labels_errors(
            &scheduling["nodeSelector"],
            "scheduling.nodeSelector",
        ));
        errs.extend(tolerations_errors(scheduling, "scheduling.tolerations"));
        errs.extend(duplicate_tolerations(scheduling));
    }
    errs
}

/// Tolerations are unique by key, operator, value and effect; a repeat is quoted as its
/// internal type written by encoding/json.
fn duplicate_tolerations(scheduling: &Value) -> Vec<StatusCause> {
    let text = |t: &Value, k: &str| t[k].as_str().unwrap_or("").to_string();
    let mut seen = std::collections::HashSet::new();
    let mut errs = Vec::new();
    let tolerations = scheduling["tolerations"].as_array().into_iter().flatten();
    for (i, t) in tolerations.enumerate() {
        let identity = ["key", "operator", "value", "effect"].map(|k| text(t, k));
        if !seen.insert(identity.clone()) {
            let seconds = t["tolerationSeconds"]
                .as_i64()
                .map_or("null".into(), |s| s.to_string());
            let [key, op, value, effect] = identity.clone().map(|s| go_quote(&s));
            let mut cause = field::duplicate(&format!("scheduling.tolerations[{i}]"), &Value::Null);
            cause.message = format!(
                "Duplicate value: {{\"Key\":{key},\"Operator\":{op},\"Value\":{value},\"Effect\":{effect},\"TolerationSeconds\":{seconds}}}"
            );
            errs.push(cause);
        }
    }
    errs
}

/// Deprecated node labels in the node selector, one warning each.
fn warnings(obj: &Value) -> Vec<String> {
    let selector = obj["scheduling"]["nodeSelector"].as_object();
    selector
        .into_iter()
        .flatten()
        .filter_map(|(key, _)| crate::registry::core::node::deprecated_label(key))
        .map(|why| format!("scheduling.nodeSelector: {why}"))
        .collect()
}

impl Strategy for RuntimeClassStrategy {
    fn track_generation(&self) -> bool {
        false
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        class_errors(obj)
    }

    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        let mut errs = class_errors(obj);
        errs.extend(immutable(&obj["handler"], &old["handler"], "handler"));
        errs
    }

    fn warnings_on_create(&self, obj: &Value) -> Vec<String> {
        warnings(obj)
    }

    fn warnings_on_update(&self, obj: &Value, _old: &Value) -> Vec<String> {
        warnings(obj)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::rendered as messages;
    use rstest::rstest;

    #[rstest]
    #[case(json!({"handler": "runc"}), vec![])]
    #[case(json!({"handler": ""}), vec!["handler: Required value"])]
    #[case(json!({"handler": "a.b"}), vec!["handler: Invalid value: \"a.b\": must not contain dots"])]
    #[case(json!({"handler": "runc", "overhead": {"podFixed": {"cpu": "-1"}}}),
        vec!["overhead.limits[cpu]: Invalid value: \"-1\": must be greater than or equal to 0"])]
    #[case(json!({"handler": "runc", "scheduling": {"tolerations": [
            {"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"},
            {"key": "k", "operator": "Equal", "value": "v", "effect": "NoSchedule"}]}}),
        vec!["scheduling.tolerations[1]: Duplicate value: {\"Key\":\"k\",\"Operator\":\"Equal\",\"Value\":\"v\",\"Effect\":\"NoSchedule\",\"TolerationSeconds\":null}"])]
    fn validation(#[case] obj: Value, #[case] want: Vec<&str>) {
        assert_eq!(messages(class_errors(&obj)), want);
    }

    #[test]
    fn the_handler_is_immutable_and_old_labels_warn() {
        let old = json!({"handler": "runc"});
        let new = json!({"handler": "kata", "scheduling": {"nodeSelector": {"beta.kubernetes.io/os": "linux"}}});
        assert_eq!(
            messages(RuntimeClassStrategy.validate_update(&new, &old)),
            vec!["handler: Invalid value: \"kata\": field is immutable"]
        );
        assert_eq!(
            warnings(&new),
            vec![
                "scheduling.nodeSelector: deprecated since v1.14; use \"kubernetes.io/os\" instead"
            ]
        );
    }
}
