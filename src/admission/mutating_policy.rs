//! The MutatingAdmissionPolicy plugin: every stored MutatingAdmissionPolicy whose
//! `matchConstraints` select a create or update runs, once per binding (and parameter object)
//! whose `matchResources` select it too, in policy name order: `matchConditions`, then each of
//! its `mutations` in turn on the object the previous ones produced (with the `variables` it
//! uses, evaluated then): an
//! `ApplyConfiguration` (`Object{...}`, merged as server-side apply merges, typed by the kind's
//! schema) or a `JSONPatch` (a list of `JSONPatch{op, path, value}`). The mutated object is
//! decoded and defaulted again. An expression that cannot be evaluated or applied refuses the
//! request under `failurePolicy: Fail` (`policy 'p' with binding 'b' denied request: ...`) and is
//! skipped under Ignore. A policy with `reinvocationPolicy: IfNeeded` that ran (its match
//! conditions held) runs once more when a policy after it changed the object, and in the
//! admission chain's second run when a later plugin (a webhook) changed it.

use std::sync::LazyLock;

use futures_util::future::BoxFuture;
use serde_json::{Map, Value};

use super::equivalent::Converted;
use super::policy::{invocations, namespace_object, object_refusal, params, Invocation};
use super::webhook::request_fields;
use super::{Attributes, Mutating};
use crate::cel::{Authz, Bindings, EvalError, ExpressionCache};
use crate::context::ReinvocationMemo;
use crate::error::ApiError;
use crate::store::{GroupResource, Snapshot, StoredObject};

/// The variables every mutating policy expression may use.
const VARS: [&str; 7] = [
    "object",
    "oldObject",
    "request",
    "params",
    "namespaceObject",
    "variables",
    "authorizer",
];
/// Mutating policy expressions, compiled once per source for every server of the process.
static EXPRESSIONS: LazyLock<ExpressionCache> = LazyLock::new(|| ExpressionCache::new(&VARS));

/// Applies MutatingAdmissionPolicies. See the module documentation.
pub struct MutatingPolicies;

impl Mutating for MutatingPolicies {
    /// Any request, once a MutatingAdmissionPolicy exists.
    fn handles(&self, attrs: &Attributes<'_>) -> bool {
        static POLICIES: LazyLock<GroupResource> =
            LazyLock::new(|| super::configs("mutatingadmissionpolicies"));
        !super::none_configured(attrs, &POLICIES)
    }

    fn admit<'a>(
        &'a self,
        attrs: &'a Attributes<'a>,
        object: &'a mut Value,
    ) -> BoxFuture<'a, Result<(), ApiError>> {
        Box::pin(async move {
            let snap = attrs.store.snapshot();
            let kinds = (
                "mutatingadmissionpolicies",
                "mutatingadmissionpolicybindings",
            );
            let if_needed =
                |inv: &Invocation| inv.0.value()["spec"]["reinvocationPolicy"] == "IfNeeded";
            let mut invocations = invocations(attrs, &snap, kinds, Some(object));
            if attrs.ctx.reinvocation().reinvoking {
                // The chain's second run: the IfNeeded policies the first invoked, once each,
                // when a later plugin changed the object since.
                let Some(memo) = attrs.ctx.memo(PLUGIN).filter(|m| m.output != *object) else {
                    return Ok(());
                };
                invocations.retain(|inv| memo.invoked.contains(&id(inv)));
                for inv in &invocations {
                    run_invocation(inv, attrs, &snap, object).await?;
                }
                return Ok(());
            }
            if invocations.is_empty() {
                return Ok(());
            }
            if invocations.iter().any(if_needed) {
                attrs.ctx.invoked_if_needed();
            }
            let before = object.clone();
            // Round one: every invocation; a change makes the IfNeeded policies that ran before
            // it due for a second round, as the apiserver's reinvocation does.
            let mut invoked = Vec::new();
            let mut again = Vec::new();
            for (i, inv) in invocations.iter().enumerate() {
                let previous = object.clone();
                let ran = run_invocation(inv, attrs, &snap, object).await?;
                if *object != previous {
                    again.extend(invoked.iter().copied());
                }
                if ran && if_needed(inv) {
                    invoked.push(i);
                }
            }
            again.sort_unstable();
            again.dedup();
            for i in again {
                run_invocation(&invocations[i], attrs, &snap, object).await?;
            }
            if *object != before {
                let quiet = attrs.ctx.for_controller("admission");
                attrs.resource.strategy.decode(object, &quiet)?;
            }
            if !invoked.is_empty() {
                let invoked = invoked.iter().map(|&i| id(&invocations[i])).collect();
                let output = object.clone();
                attrs
                    .ctx
                    .remember(PLUGIN, ReinvocationMemo { output, invoked });
            }
            Ok(())
        })
    }
}

/// The mutating policies' plugin name, under which their reinvocation memo is kept.
const PLUGIN: &str = "MutatingAdmissionPolicy";

/// A policy invocation's identity across the chain's two runs: policy and binding.
fn id(inv: &Invocation) -> String {
    let name = |o: &StoredObject| {
        o.value()["metadata"]["name"]
            .as_str()
            .unwrap_or("")
            .to_string()
    };
    format!("{}/{}", name(&inv.0), name(&inv.1))
}

/// Runs one invocation on `object`: in the request's version, or in the version the policy
/// matched it in (converted there, mutated, converted back).
async fn run_invocation(
    inv: &Invocation,
    attrs: &Attributes<'_>,
    snap: &Snapshot,
    object: &mut Value,
) -> Result<bool, ApiError> {
    let (policy, binding, target) = inv;
    let Some(target) = target else {
        return run_binding(&policy.value(), &binding.value(), attrs, snap, object);
    };
    let converted = Converted::new(attrs, target, Some(object)).await?;
    let as_target = converted.attributes(attrs, target);
    let mut seen = converted.object.clone().unwrap_or(Value::Null);
    let ran = run_binding(
        &policy.value(),
        &binding.value(),
        &as_target,
        snap,
        &mut seen,
    )?;
    if Some(&seen) != converted.object.as_ref() {
        *object = target.codec.convert_to(seen, &attrs.resource.codec).await?;
    }
    Ok(ran)
}

/// Runs one policy through one binding on `object`; a failure refuses the request under
/// `failurePolicy: Fail`. Whether the policy was invoked (its match conditions held for some
/// param).
fn run_binding(
    policy: &Value,
    binding: &Value,
    attrs: &Attributes<'_>,
    snap: &Snapshot,
    object: &mut Value,
) -> Result<bool, ApiError> {
    let fail = policy["spec"]["failurePolicy"] != "Ignore";
    let refuse = |why: String, reason: &'static str| {
        if fail {
            Err(refusal(attrs, policy, binding, &why, reason))
        } else {
            Ok(false)
        }
    };
    let params = match params(policy, binding, attrs, snap) {
        Ok(p) => p,
        Err(e) => return refuse(format!("failed to configure binding: {e}"), "Forbidden"),
    };
    let mut invoked = false;
    for param in params {
        match mutate(policy, attrs, snap, object, &param) {
            Ok(ran) => invoked |= ran,
            Err(e) => return refuse(e, "Invalid"),
        }
    }
    Ok(invoked)
}

/// One evaluation of a policy's mutations, each on the object the previous one produced;
/// whether its match conditions held (it ran).
fn mutate(
    policy: &Value,
    attrs: &Attributes<'_>,
    snap: &Snapshot,
    object: &mut Value,
    param: &Value,
) -> Result<bool, String> {
    let spec = &policy["spec"];
    let old = attrs.old_object.cloned().unwrap_or(Value::Null);
    let namespace = namespace_object(attrs, snap);
    let run = |src: &str, b: &Bindings<'_>| {
        EXPRESSIONS
            .get(src)
            .map_err(|e| e.to_string())
            .and_then(|e| {
                e.eval_bound(b)
                    .map_err(|e| format!("expression '{src}' resulted in error: {e}"))
            })
    };
    let authz = super::authorizer(attrs, snap);
    {
        let current = object.clone();
        let request = request_fields(attrs, Some(&current));
        let none = Value::Null;
        for condition in spec["matchConditions"].as_array().into_iter().flatten() {
            let b = bind(&current, &old, &request, param, &namespace, &none, &authz);
            match run(condition["expression"].as_str().unwrap_or(""), &b)? {
                Value::Bool(true) => {}
                Value::Bool(false) => return Ok(false),
                _ => return Err("no such overload".into()),
            }
        }
    }
    for mutation in spec["mutations"].as_array().into_iter().flatten() {
        let current = object.clone();
        let request = request_fields(attrs, Some(&current));
        let src = match mutation["patchType"].as_str().unwrap_or("") {
            "ApplyConfiguration" => &mutation["applyConfiguration"]["expression"],
            _ => &mutation["jsonPatch"]["expression"],
        };
        let src = src.as_str().unwrap_or("");
        let eval_with = |src: &str, variables: &Value| {
            let b = bind(
                &current, &old, &request, param, &namespace, variables, &authz,
            );
            run(src, &b)
        };
        let (variables, failed) = mutation_variables(spec, src, &eval_with);
        let b = bind(
            &current, &old, &request, param, &namespace, &variables, &authz,
        );
        // A failed variable is absent: reaching it fails with its own error.
        let run = |src: &str, b: &Bindings<'_>| {
            let expression = EXPRESSIONS.get(src).map_err(|e| e.to_string())?;
            expression.eval_bound(b).map_err(|e| {
                let reached = match &e {
                    EvalError::NoSuchKey(k) => failed.iter().find(|(n, _)| n == k),
                    _ => None,
                };
                let why = reached.map_or_else(|| e.to_string(), |(_, why)| why.clone());
                format!("expression '{src}' resulted in error: {why}")
            })
        };
        match mutation["patchType"].as_str().unwrap_or("") {
            "ApplyConfiguration" => {
                let config = run(src, &b)?;
                let schema = attrs.resource.schema.shape();
                *object = crate::apply::merge_configuration(&current, &config, schema);
            }
            "JSONPatch" => {
                use crate::apply::json_patch;
                let mut ops = run(src, &b)?;
                // The apiserver leaves an empty `from` out of the operation it builds.
                for op in ops.as_array_mut().into_iter().flatten() {
                    if op.get("from").is_some_and(|f| f == "") {
                        op.as_object_mut().map(|o| o.remove("from"));
                    }
                }
                let patch = json_patch::decode(&ops).map_err(|e| format!("JSON Patch: {e}"))?;
                let mut patched = object.clone();
                match patch.apply(&mut patched) {
                    Ok(()) => *object = patched,
                    // A failed `test` leaves the object as it was, without an error.
                    Err(json_patch::Error::TestFailed(_)) => {}
                    Err(e) => return Err(format!("JSON Patch: {e}")),
                }
            }
            other => return Err(format!("unsupported patch type {other:?}")),
        }
    }
    Ok(true)
}

/// The variables a mutation's expression `src` uses, evaluated now, on the object as it is now
/// (the apiserver's composited variables are lazy: one that fails matters only where used):
/// their values, and the failed ones with what reaching them fails with.
fn mutation_variables(
    spec: &Value,
    src: &str,
    eval_with: &dyn Fn(&str, &Value) -> Result<Value, String>,
) -> (Value, Vec<(String, String)>) {
    let mut variables = Value::Object(Map::new());
    let mut failed: Vec<(String, String)> = Vec::new();
    let needed = EXPRESSIONS
        .get(src)
        .map(|e| e.selected_fields("variables"))
        .unwrap_or_default();
    let wanted = super::policy::needed_variables(spec, &needed);
    for variable in spec["variables"].as_array().into_iter().flatten() {
        let name = variable["name"].as_str().unwrap_or("").to_string();
        if !wanted.contains(&name) {
            continue;
        }
        match eval_with(variable["expression"].as_str().unwrap_or(""), &variables) {
            Ok(value) => variables[name] = value,
            Err(e) => {
                let why = super::policy::composited_error(&name, &e);
                failed.push((name, why));
            }
        }
    }
    (variables, failed)
}

/// The variables of a mutating policy expression.
fn bind<'a>(
    object: &'a Value,
    old: &'a Value,
    request: &'a Value,
    params: &'a Value,
    namespace: &'a Value,
    variables: &'a Value,
    authz: &Authz,
) -> Bindings<'a> {
    Bindings::new(&[
        ("object", object),
        ("oldObject", old),
        ("request", request),
        ("params", params),
        ("namespaceObject", namespace),
        ("variables", variables),
    ])
    .authorizer("authorizer", authz.clone())
}

/// `PolicyError` as the policy dispatcher returns it: a 403 for the object whose message names
/// the policy and binding, with the message as a cause, and `Invalid` as the reason of a
/// mutation that failed.
fn refusal(
    attrs: &Attributes<'_>,
    policy: &Value,
    binding: &Value,
    why: &str,
    reason: &'static str,
) -> ApiError {
    let message = format!(
        "policy '{}' with binding '{}' denied request: {why}",
        policy["metadata"]["name"].as_str().unwrap_or(""),
        binding["metadata"]["name"].as_str().unwrap_or("")
    );
    object_refusal(attrs, 403, reason.into(), message.clone(), message)
}
