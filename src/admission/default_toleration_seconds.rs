//! The DefaultTolerationSeconds admission plugin: a pod that does not tolerate the
//! `node.kubernetes.io/not-ready` and `node.kubernetes.io/unreachable` NoExecute taints gets
//! tolerations for them of 300 seconds, so that it is evicted five minutes after its node
//! fails.

use futures_util::future::BoxFuture;
use serde_json::{json, Value};

use super::{Attributes, Mutating, Operation};
use crate::error::ApiError;

/// The taints, and the seconds they are tolerated.
const TAINTS: [&str; 2] = [
    "node.kubernetes.io/not-ready",
    "node.kubernetes.io/unreachable",
];
const SECONDS: i64 = 300;

/// The plugin.
pub struct DefaultTolerationSeconds;

impl Mutating for DefaultTolerationSeconds {
    /// Creates and updates of pods.
    fn handles(&self, attrs: &Attributes<'_>) -> bool {
        attrs.is_for("", "pods")
            && attrs.subresource.is_empty()
            && matches!(attrs.operation, Operation::Create | Operation::Update)
    }

    fn admit<'a>(
        &'a self,
        _attrs: &'a Attributes<'a>,
        object: &'a mut Value,
    ) -> BoxFuture<'a, Result<(), ApiError>> {
        if object["spec"].is_object() {
            add_tolerations(&mut object["spec"]);
        }
        Box::pin(std::future::ready(Ok(())))
    }
}

fn add_tolerations(spec: &mut Value) {
    let tolerations: Vec<Value> = spec["tolerations"].as_array().cloned().unwrap_or_default();
    let tolerates = |taint: &str| {
        tolerations.iter().any(|t| {
            let key = t["key"].as_str().unwrap_or("");
            let effect = t["effect"].as_str().unwrap_or("");
            (key == taint || key.is_empty()) && (effect == "NoExecute" || effect.is_empty())
        })
    };
    let missing: Vec<Value> = TAINTS
        .iter()
        .filter(|taint| !tolerates(taint))
        .map(|taint| {
            json!({"key": taint, "operator": "Exists", "effect": "NoExecute",
                   "tolerationSeconds": SECONDS})
        })
        .collect();
    if missing.is_empty() {
        return;
    }
    let mut all = tolerations;
    all.extend(missing);
    spec["tolerations"] = Value::Array(all);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds_what_is_not_tolerated() {
        let mut spec = json!({"tolerations": [{"key": "node.kubernetes.io/unreachable",
            "operator": "Exists", "effect": "NoExecute"}]});
        add_tolerations(&mut spec);
        assert_eq!(spec["tolerations"].as_array().map(Vec::len), Some(2));
        assert_eq!(
            spec["tolerations"][1]["key"],
            "node.kubernetes.io/not-ready"
        );
        let mut all = json!({"tolerations": [{"operator": "Exists"}]});
        add_tolerations(&mut all);
        assert_eq!(all["tolerations"].as_array().map(Vec::len), Some(1));
    }
}
