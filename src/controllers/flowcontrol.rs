//! What the apiserver's API Priority and Fairness machinery writes into the objects: the
//! `Dangling` condition of every FlowSchema (does its priority level exist?), as the APF
//! controller keeps it, and the bootstrap configuration, restored when a piece of it is deleted,
//! as the configuration ensurer restores it. The apiserver's own work, under envtest too.
//!
//! Deliberate differences: the condition is recorded as an Update of the controller's field
//! manager (the apiserver applies it, server-side); a deleted bootstrap object is restored ten
//! seconds later (the apiserver's ensurer runs once a minute); specs of bootstrap objects a
//! client changed are not reverted.

use std::time::Duration;

use serde_json::{json, Value};

use crate::context::Context;
use crate::registry::flowcontrol::{bootstrap_levels, bootstrap_schemas, GROUP};
use crate::registry::object_meta::{meta_str, now_rfc3339};
use crate::registry::store::{self as rest, Target, UpdateSource};
use crate::state::State;
use crate::store::{GroupResource, ObjectKey};

/// The APF controller's field manager.
const CONSUMER: &str = "api-priority-and-fairness-config-consumer-v1";
/// The ensurer's field manager.
const PRODUCER: &str = "api-priority-and-fairness-config-producer-v1";
/// How long after a deletion the bootstrap configuration is restored.
pub const RESTORE_AFTER: Duration = Duration::from_secs(10);

fn schemas_gr() -> GroupResource {
    GroupResource::new(GROUP, "flowschemas")
}

fn levels_gr() -> GroupResource {
    GroupResource::new(GROUP, "prioritylevelconfigurations")
}

/// The `Dangling` condition a FlowSchema should have, given whether its level exists.
fn dangling(level: &str, found: bool) -> (&'static str, &'static str, String) {
    match found {
        true => ("False", "Found", format!("This FlowSchema references the PriorityLevelConfiguration object named {level:?} and it exists")),
        false => ("True", "NotFound", format!("This FlowSchema references the PriorityLevelConfiguration object named {level:?} but there is no such object")),
    }
}

/// Whether the stored condition already says so.
fn says(schema: &Value, want: &(&str, &str, String)) -> bool {
    let conditions = schema["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten();
    conditions.into_iter().any(|c| {
        c["type"] == "Dangling"
            && c["status"] == want.0
            && c["reason"] == want.1
            && c["message"] == want.2.as_str()
    })
}

/// Sets the `Dangling` condition of every FlowSchema that does not say what it should.
pub async fn reconcile_status(state: &State, ctx: &Context) {
    let Some(res) = state.registry().by_group_resource(&schemas_gr()) else {
        return;
    };
    let Some(status) = res.subresource("status").cloned() else {
        return;
    };
    let ctx = ctx.for_controller("apf-controller").managed_by(CONSUMER);
    let snapshot = state.store.snapshot();
    let mut due = Vec::new();
    for (key, schema) in snapshot.list(&schemas_gr(), None) {
        let schema = schema.value();
        let level = schema["spec"]["priorityLevelConfiguration"]["name"]
            .as_str()
            .unwrap_or("");
        let found = snapshot
            .get(&levels_gr(), &ObjectKey::new("", level))
            .is_some();
        let want = dangling(level, found);
        if !says(&schema, &want) {
            due.push((key.name.to_string(), want));
        }
    }
    drop(snapshot);
    for (name, (status_word, reason, message)) in due {
        let condition = json!({"type": "Dangling", "status": status_word,
            "lastTransitionTime": now_rfc3339(), "reason": reason, "message": message});
        let set = |current: &Value| {
            let mut out = current.clone();
            let mut conditions: Vec<Value> = out["status"]["conditions"]
                .as_array()
                .into_iter()
                .flatten()
                .filter(|c| c["type"] != "Dangling")
                .cloned()
                .collect();
            conditions.push(condition.clone());
            out["status"]["conditions"] = Value::Array(conditions);
            Ok(out)
        };
        let target = Target::Part(status.clone());
        let written = rest::update(
            state,
            &ctx,
            &res,
            "",
            &name,
            target,
            UpdateSource::Patch(&set),
        )
        .await;
        if let Err(e) = written
            .map(|_| ())
            .or_else(|e| if e.code == 404 { Ok(()) } else { Err(e) })
        {
            tracing::warn!(error = %e, flowschema = name, "writing a FlowSchema's Dangling condition");
        }
    }
}

/// Creates the bootstrap objects that are missing, priority levels first.
pub async fn restore_bootstrap(state: &State, ctx: &Context) {
    let ctx = ctx
        .for_controller("apf-configuration-ensurer")
        .managed_by(PRODUCER);
    for (gr, objects) in [
        (levels_gr(), bootstrap_levels()),
        (schemas_gr(), bootstrap_schemas()),
    ] {
        let Some(res) = state.registry().by_group_resource(&gr) else {
            continue;
        };
        for obj in objects {
            let key = ObjectKey::new("", meta_str(&obj, "name"));
            if state.store.snapshot().get(&gr, &key).is_none() {
                super::create_logged(state, &ctx, &res, "", obj).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::store::DeleteOptions;

    /// A deleted bootstrap object, mandatory or suggested, is created again.
    #[tokio::test]
    async fn deleted_bootstrap_objects_are_restored() {
        let (_tx, rx) = tokio::sync::watch::channel(false);
        let state = crate::State::new("127.0.0.1:1".into(), crate::Options::default(), rx);
        state.bootstrap().await;
        let ctx = Context::internal();
        let key = |name: &str| ObjectKey::new("", name);
        for (gr, name) in [(schemas_gr(), "global-default"), (levels_gr(), "catch-all")] {
            let res = state.registry().by_group_resource(&gr).expect("served");
            let opts = DeleteOptions::default();
            rest::delete(&state, &ctx, &res, "", name, &opts)
                .await
                .expect("deleted");
            assert!(state.store.snapshot().get(&gr, &key(name)).is_none());
        }
        restore_bootstrap(&state, &ctx).await;
        let snapshot = state.store.snapshot();
        assert!(snapshot
            .get(&schemas_gr(), &key("global-default"))
            .is_some());
        assert!(snapshot.get(&levels_gr(), &key("catch-all")).is_some());
        assert_eq!(snapshot.list(&schemas_gr(), None).count(), 11);
    }

    #[test]
    fn the_condition_says_whether_the_level_exists() {
        let (status, reason, message) = dangling("nope", false);
        assert_eq!((status, reason), ("True", "NotFound"));
        assert_eq!(message, "This FlowSchema references the PriorityLevelConfiguration object named \"nope\" but there is no such object");
        let schema = json!({"status": {"conditions": [{"type": "Dangling", "status": "False", "reason": "Found",
            "message": "This FlowSchema references the PriorityLevelConfiguration object named \"exempt\" and it exists"}]}});
        assert!(says(&schema, &dangling("exempt", true)));
        assert!(!says(&schema, &dangling("exempt", false)));
    }
}
