//! Kinds of `flowcontrol.apiserver.k8s.io` (API Priority and Fairness): FlowSchemas and
//! PriorityLevelConfigurations, with the configuration every 1.36 apiserver keeps (the mandatory
//! and suggested objects of k8s.io/apiserver's bootstrap package, generated into
//! `data/k8s-1.36/flowcontrol-bootstrap.json` by `scripts/gen-flowcontrol`).
//!
//! kubefake keeps no request queues: the objects are stored, validated and printed as the
//! apiserver does, FlowSchemas get the `Dangling` condition the APF controller writes
//! ([`crate::controllers::flowcontrol`]), and deleted bootstrap objects come back as the
//! apiserver's ensurer brings them back, within a minute.

pub mod flowschema;
pub mod prioritylevelconfiguration;

use std::sync::LazyLock;

use serde_json::Value;

/// The API group.
pub const GROUP: &str = "flowcontrol.apiserver.k8s.io";

/// The annotation saying whether the apiserver keeps a bootstrap object's spec up to date.
pub const AUTO_UPDATE: &str = "apf.kubernetes.io/autoupdate-spec";

/// The bootstrap objects, by kind, in the order the ensurer creates them (suggested first).
struct Bootstrap {
    levels: Vec<Value>,
    schemas: Vec<Value>,
}

static BOOTSTRAP: LazyLock<Bootstrap> = LazyLock::new(|| {
    let data: Value = serde_json::from_str(include_str!(
        "../../data/k8s-1.36/flowcontrol-bootstrap.json"
    ))
    .unwrap_or_default();
    let list = |key: &str| data[key].as_array().cloned().unwrap_or_default();
    Bootstrap {
        levels: list("priorityLevelConfigurations"),
        schemas: list("flowSchemas"),
    }
});

/// A bootstrap object as a client would create it (its `mandatory` flag removed).
fn creatable(obj: &Value) -> Value {
    let mut obj = obj.clone();
    if let Some(map) = obj.as_object_mut() {
        map.remove("mandatory");
    }
    obj
}

/// The bootstrap PriorityLevelConfigurations.
pub fn bootstrap_levels() -> Vec<Value> {
    BOOTSTRAP.levels.iter().map(creatable).collect()
}

/// The bootstrap FlowSchemas.
pub fn bootstrap_schemas() -> Vec<Value> {
    BOOTSTRAP.schemas.iter().map(creatable).collect()
}

/// The fixed spec of a mandatory object of the kind (`schemas`: FlowSchemas), by name.
fn mandatory_spec(schemas: bool, name: &str) -> Option<&'static Value> {
    let list = if schemas {
        &BOOTSTRAP.schemas
    } else {
        &BOOTSTRAP.levels
    };
    list.iter()
        .find(|o| o["mandatory"] == true && o["metadata"]["name"] == name)
        .map(|o| &o["spec"])
}

/// Whether `name` is a bootstrap object of the kind.
pub fn is_bootstrap(schemas: bool, name: &str) -> bool {
    let list = if schemas {
        &BOOTSTRAP.schemas
    } else {
        &BOOTSTRAP.levels
    };
    list.iter().any(|o| o["metadata"]["name"] == name)
}

/// The status rules of both kinds: each condition has a type, no type twice.
fn condition_type_errors(obj: &Value) -> Vec<crate::error::StatusCause> {
    use crate::error::field;
    let mut seen = std::collections::HashSet::new();
    let mut errs = Vec::new();
    let conditions = obj["status"]["conditions"].as_array().into_iter().flatten();
    for (i, c) in conditions.enumerate() {
        let path = format!("status.conditions[{i}].type");
        match c["type"].as_str().unwrap_or("") {
            "" => errs.push(field::required(&path, "")),
            t if !seen.insert(t.to_string()) => errs.push(field::duplicate(&path, &c["type"])),
            _ => {}
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bootstrap_configuration() {
        let names = |list: Vec<Value>| -> Vec<String> {
            list.iter()
                .map(|o| o["metadata"]["name"].as_str().unwrap_or("").to_string())
                .collect()
        };
        assert_eq!(names(bootstrap_levels()).len(), 8);
        assert_eq!(names(bootstrap_schemas()).len(), 11);
        assert!(mandatory_spec(true, "exempt").is_some());
        assert!(mandatory_spec(false, "catch-all").is_some());
        assert!(
            mandatory_spec(true, "global-default").is_none(),
            "suggested"
        );
        assert!(bootstrap_levels()
            .iter()
            .all(|o| o.get("mandatory").is_none()));
    }
}
