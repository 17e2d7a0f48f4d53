//! The ValidatingAdmissionPolicy plugin: every stored ValidatingAdmissionPolicy whose
//! `matchConstraints` select a request is evaluated once per binding (and per parameter object)
//! whose `matchResources` select it too: `matchConditions`, then `variables`, then each of the
//! `validations` (CEL over `object`, `oldObject`, `request`, `params`, `namespaceObject`,
//! `variables` and `authorizer`, through [`crate::cel::Expression`]). A failed validation is
//! refused, warned or ignored as the binding's `validationActions` say, with the apiserver's
//! words; an expression that cannot be evaluated counts as a failure under `failurePolicy: Fail`
//! and passes under Ignore. Policies take effect on the first request after their create
//! returns. Under `matchPolicy: Equivalent` (the default) a policy whose rules name another
//! served version of the resource sees the objects converted to that version
//! ([`equivalent::Converted`]).
//!
//! Expressions are compiled once per source and checked as `dyn` here; the status controller
//! ([`crate::controllers::policy_status`]) type-checks them against the kinds a policy names
//! and reports warnings in `status.typeChecking`. `auditAnnotations` are computed but written
//! nowhere.

use futures_util::future::BoxFuture;
use serde_json::{Map, Value};

use super::equivalent::{self, Converted};
use super::webhook::{is_exempt, namespace_labels, rule_matches, selector_or_all, EXEMPT_GROUP};
use super::{Attributes, Validating};
use std::collections::HashSet;
use std::sync::{Arc, LazyLock};

use crate::cel::{Authz, Bindings, EvalError, ExpressionCache, RUNTIME_COST_BUDGET};
use crate::error::{ApiError, StatusCause, StatusDetails};
use crate::registry::resource::ApiResource;
use crate::store::{GroupResource, ObjectKey, Snapshot, StoredObject};

/// The variables every policy expression may use.
pub(crate) const VARS: [&str; 7] = [
    "object",
    "oldObject",
    "request",
    "params",
    "namespaceObject",
    "variables",
    "authorizer",
];
/// Policy expressions, compiled once per source for every server of the process.
static EXPRESSIONS: LazyLock<ExpressionCache> = LazyLock::new(|| ExpressionCache::new(&VARS));

/// Longer `messageExpression` results are dropped (`MaxEvaluatedMessageExpressionSizeBytes`).
const MAX_MESSAGE: usize = 5 * 1024;

/// Evaluates ValidatingAdmissionPolicies. See the module documentation.
pub struct ValidatingPolicies;

/// A failed validation of one policy and binding.
struct Denial {
    policy: String,
    binding: String,
    message: String,
    reason: String,
}

impl Validating for ValidatingPolicies {
    /// Any request, once a ValidatingAdmissionPolicy exists.
    fn handles(&self, attrs: &Attributes<'_>) -> bool {
        static POLICIES: LazyLock<GroupResource> =
            LazyLock::new(|| super::configs("validatingadmissionpolicies"));
        !super::none_configured(attrs, &POLICIES)
    }

    fn validate<'a>(
        &'a self,
        attrs: &'a Attributes<'a>,
        object: Option<&'a Value>,
    ) -> BoxFuture<'a, Result<(), ApiError>> {
        Box::pin(async move {
            let snap = attrs.store.snapshot();
            let kinds = (
                "validatingadmissionpolicies",
                "validatingadmissionpolicybindings",
            );
            let mut denials = Vec::new();
            for (policy, binding, target) in invocations(attrs, &snap, kinds, object) {
                let (p, b) = (&policy.value(), &binding.value());
                let Some(target) = target else {
                    apply_binding(p, b, attrs, &snap, object, &mut denials);
                    continue;
                };
                let converted = Converted::new(attrs, &target, object).await?;
                let as_target = converted.attributes(attrs, &target);
                apply_binding(
                    p,
                    b,
                    &as_target,
                    &snap,
                    converted.object.as_ref(),
                    &mut denials,
                );
            }
            match denials.into_iter().next() {
                Some(d) => Err(refusal(attrs, &d)),
                None => Ok(()),
            }
        })
    }
}

/// The (policy, binding) pairs of one policy kind (`kinds`: the policies' and the bindings'
/// resources) that select the request: policies by name whose `matchConstraints` select it,
/// each with its bindings by name whose `matchResources` (if any) select it too. Nothing is
/// copied: the stored objects are shared.
pub(super) fn invocations(
    attrs: &Attributes<'_>,
    snap: &Snapshot,
    kinds: (&str, &str),
    object: Option<&Value>,
) -> Vec<Invocation> {
    if is_exempt(attrs) {
        return Vec::new();
    }
    let policies = GroupResource::new(EXEMPT_GROUP, kinds.0);
    let bindings = GroupResource::new(EXEMPT_GROUP, kinds.1);
    let mut out = Vec::new();
    for (_, policy) in snap.list(&policies, None) {
        let constraints = &policy.value()["spec"]["matchConstraints"];
        let Some(target) = matched_version(constraints, attrs, snap, object) else {
            continue;
        };
        let name = &policy.value()["metadata"]["name"];
        for (_, binding) in snap.list(&bindings, None) {
            let spec = &binding.value()["spec"];
            if spec["policyName"] != *name {
                continue;
            }
            let resources = &spec["matchResources"];
            if resources.is_object() && matched_version(resources, attrs, snap, object).is_none() {
                continue;
            }
            out.push((policy.clone(), binding.clone(), target.clone()));
        }
    }
    out
}

/// A policy and binding that select a request, and the other version of the resource the
/// policy matched it in (`matchPolicy: Equivalent`), if not the request's.
pub(super) type Invocation = (
    Arc<StoredObject>,
    Arc<StoredObject>,
    Option<Arc<ApiResource>>,
);

/// Whether `matchConstraints` (or `matchResources`) select the request in its own version
/// (`Some(None)`), or, under `matchPolicy: Equivalent` (the default), in another served version
/// of its resource (`Some(Some(version))`).
fn matched_version(
    constraints: &Value,
    attrs: &Attributes<'_>,
    snap: &Snapshot,
    object: Option<&Value>,
) -> Option<Option<Arc<ApiResource>>> {
    if selects(constraints, attrs, snap, object) {
        return Some(None);
    }
    if constraints["matchPolicy"] == "Exact" {
        return None;
    }
    equivalent::first_match(attrs, |a| selects(constraints, a, snap, object)).map(Some)
}

/// Whether `matchConstraints` (or a binding's `matchResources`) select the request:
/// `resourceRules` (with `resourceNames`; none at all selects every resource), not
/// `excludeResourceRules`, and the selectors.
pub(super) fn selects(
    constraints: &Value,
    attrs: &Attributes<'_>,
    snap: &Snapshot,
    object: Option<&Value>,
) -> bool {
    let named = |rule: &Value| {
        let names = rule["resourceNames"].as_array();
        names.is_none_or(|n| n.is_empty() || n.iter().any(|x| x == attrs.name))
    };
    let matching = |key: &str| {
        constraints[key]
            .as_array()
            .into_iter()
            .flatten()
            .any(|r| rule_matches(r, attrs) && named(r))
    };
    let no_rules = constraints["resourceRules"]
        .as_array()
        .is_none_or(|r| r.is_empty());
    if !(no_rules || matching("resourceRules")) || matching("excludeResourceRules") {
        return false;
    }
    let selector = &constraints["objectSelector"];
    let object_selected = [object, attrs.old_object]
        .into_iter()
        .flatten()
        .any(|o| selector_or_all(selector, &o["metadata"]["labels"]))
        || selector.as_object().is_none_or(|s| s.is_empty());
    object_selected
        && selector_or_all(
            &constraints["namespaceSelector"],
            &namespace_labels(attrs, snap, object),
        )
}

/// Evaluates one policy through one binding, recording what it refuses and warning what it
/// warns about.
fn apply_binding(
    policy: &Value,
    binding: &Value,
    attrs: &Attributes<'_>,
    snap: &Snapshot,
    object: Option<&Value>,
    denials: &mut Vec<Denial>,
) {
    let policy_name = policy["metadata"]["name"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let binding_name = binding["metadata"]["name"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let fail = policy["spec"]["failurePolicy"] != "Ignore";
    let deny = |message: String, reason: &str| Denial {
        policy: policy_name.clone(),
        binding: binding_name.clone(),
        message,
        reason: reason.to_string(),
    };
    let params = match params(policy, binding, attrs, snap) {
        Ok(p) => p,
        Err(e) => {
            if fail {
                denials.push(deny(format!("failed to configure binding: {e}"), "Invalid"));
            }
            return;
        }
    };
    let actions: Vec<&str> = binding["spec"]["validationActions"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    for param in params {
        let outcome = evaluate(policy, attrs, snap, object, &param, fail);
        // An audit annotation that cannot be computed refuses the request whatever the actions.
        for message in outcome.audit_errors {
            denials.push(deny(message, "Invalid"));
        }
        for (message, reason) in outcome.failed {
            for action in &actions {
                match *action {
                    "Deny" => denials.push(deny(message.clone(), &reason)),
                    "Warn" => attrs.ctx.warn(format!(
                        "Validation failed for ValidatingAdmissionPolicy '{policy_name}' with binding '{binding_name}': {message}"
                    )),
                    _ => {}
                }
            }
        }
    }
}

/// `CollectParams`: the parameter objects a binding names (one `null` without `paramKind` or
/// `paramRef`).
pub(super) fn params(
    policy: &Value,
    binding: &Value,
    attrs: &Attributes<'_>,
    snap: &Snapshot,
) -> Result<Vec<Value>, String> {
    let kind = &policy["spec"]["paramKind"];
    let param_ref = &binding["spec"]["paramRef"];
    if !kind.is_object() || !param_ref.is_object() {
        return Ok(vec![Value::Null]);
    }
    let (api_version, kind_name) = (
        kind["apiVersion"].as_str().unwrap_or(""),
        kind["kind"].as_str().unwrap_or(""),
    );
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let Some(res) = attrs.registry.by_kind(group, version, kind_name) else {
        return Err(format!(
            "paramKind kind `{api_version}, Kind={kind_name}` not known"
        ));
    };
    let ref_namespace = param_ref["namespace"].as_str().unwrap_or("");
    let namespace = match (res.namespaced, ref_namespace.is_empty()) {
        (true, false) => ref_namespace,
        (true, true) if attrs.namespace.is_empty() => {
            return Err("cannot use namespaced paramRef in policy binding that matches cluster-scoped resources".into())
        }
        (true, true) => attrs.namespace,
        (false, false) => {
            return Err("paramRef.namespace must not be provided for a cluster-scoped `paramKind`".into())
        }
        (false, true) => "",
    };
    let found: Vec<Value> = match (
        param_ref["name"].as_str(),
        param_ref["selector"].is_object(),
    ) {
        (Some(_), true) => {
            return Err("paramRef.name and paramRef.selector are mutually exclusive".into())
        }
        (Some(name), false) => snap
            .get(&res.gr, &ObjectKey::new(namespace, name))
            .map(|o| o.value().clone())
            .into_iter()
            .collect(),
        (None, true) => snap
            .list(&res.gr, Some(namespace))
            .filter(|(_, o)| {
                selector_or_all(&param_ref["selector"], &o.value()["metadata"]["labels"])
            })
            .map(|(_, o)| o.value().clone())
            .collect(),
        (None, false) => return Err("one of name or selector must be provided".into()),
    };
    if found.is_empty() && param_ref["parameterNotFoundAction"] == "Deny" {
        return Err(
            "no params found for policy binding with `Deny` parameterNotFoundAction".into(),
        );
    }
    Ok(found)
}

/// What one evaluation of a policy found.
#[derive(Default)]
struct Outcome {
    /// The `(message, reason)` of each failed validation (subject to the binding's actions).
    failed: Vec<(String, String)>,
    /// Audit annotations that could not be computed (refusals).
    audit_errors: Vec<String>,
}

/// Runs a policy's match conditions, then its validations and audit annotations, for one
/// parameter object; its variables are evaluated when an expression first needs them.
/// (Audit annotations' values go nowhere: kubefake writes no audit log.)
fn evaluate(
    policy: &Value,
    attrs: &Attributes<'_>,
    snap: &Snapshot,
    object: Option<&Value>,
    param: &Value,
    fail: bool,
) -> Outcome {
    let spec = &policy["spec"];
    let object = object.cloned().unwrap_or(Value::Null);
    let old = attrs.old_object.cloned().unwrap_or(Value::Null);
    let request = super::webhook::request_fields(attrs, Some(&object));
    let namespace = namespace_object(attrs, snap);
    let error = |e: String| Outcome {
        failed: if fail {
            vec![(e, "Invalid".to_string())]
        } else {
            Vec::new()
        },
        ..Outcome::default()
    };
    let mut run = PolicyRun {
        spec,
        fixed: [&object, &old, &request, param, &namespace],
        authz: super::authorizer(attrs, snap),
        variables: Value::Object(Map::new()),
        failed_variables: Vec::new(),
        evaluated: HashSet::new(),
        budget: RUNTIME_COST_BUDGET.unsigned_abs(),
    };
    match run.conditions_hold() {
        Ok(true) => {}
        Ok(false) => return Outcome::default(),
        Err(e) => return error(e),
    }
    let mut failed = Vec::new();
    for validation in spec["validations"].as_array().into_iter().flatten() {
        let expression = validation["expression"].as_str().unwrap_or("");
        match run.expression(expression) {
            Ok(Value::Bool(true)) => {}
            Ok(Value::Bool(false)) => {
                let reason = validation["reason"].as_str().unwrap_or("Invalid");
                failed.push((run.message(validation), reason.to_string()));
            }
            Ok(_) => failed.extend(error("no such overload".into()).failed),
            Err(Failure::Error(e)) => failed.extend(error(e).failed),
            // Nothing runs after the budget is spent; the policy's only decision is that.
            Err(Failure::OutOfBudget) => return error(EvalError::OutOfBudget.to_string()),
        }
    }
    let audit_errors = audit_annotation_errors(
        spec,
        |src| {
            run.expression(src).map_err(|f| match f {
                Failure::Error(e) => e,
                Failure::OutOfBudget => EvalError::OutOfBudget.to_string(),
            })
        },
        fail,
    );
    Outcome {
        failed,
        audit_errors,
    }
}

/// The variables `names` use, themselves included, following variables that use others.
pub(super) fn needed_variables(spec: &Value, names: &[String]) -> HashSet<String> {
    let declared: Vec<&Value> = spec["variables"].as_array().into_iter().flatten().collect();
    let mut wanted: HashSet<String> = HashSet::new();
    let mut queue: Vec<String> = names.to_vec();
    while let Some(name) = queue.pop() {
        if !wanted.insert(name.clone()) {
            continue;
        }
        let Some(v) = declared.iter().find(|v| v["name"] == name.as_str()) else {
            continue;
        };
        if let Ok(e) = EXPRESSIONS.get(v["expression"].as_str().unwrap_or("")) {
            queue.extend(e.selected_fields("variables"));
        }
    }
    wanted
}

/// What an expression that reaches a failed variable fails with (`e` is the variable's
/// expression's error, as [`PolicyRun::expression`] words it).
pub(super) fn composited_error(name: &str, e: &str) -> String {
    let inner = e.split_once(" resulted in error: ").map_or(e, |x| x.1);
    format!("composited variable \"{name}\" fails to evaluate: {inner}")
}

/// Why an expression of a policy gave no value.
enum Failure {
    /// It failed, worded as the apiserver's decision message.
    Error(String),
    /// The policy's cost budget is spent.
    OutOfBudget,
}

/// One evaluation of a policy: its variables, evaluated once each when an expression first
/// needs them (the apiserver's composited variables are lazy: one that fails matters only to
/// the expressions that use it), and the cost budget its expressions share.
struct PolicyRun<'a> {
    spec: &'a Value,
    fixed: [&'a Value; 5],
    authz: Authz,
    variables: Value,
    failed_variables: Vec<(String, String)>,
    evaluated: HashSet<String>,
    budget: u64,
}

impl PolicyRun<'_> {
    /// The match conditions, over no variables, outside the budget (they have their own).
    fn conditions_hold(&self) -> Result<bool, String> {
        let bound = bind(self.fixed, &Value::Null, &self.authz);
        for condition in self.spec["matchConditions"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let src = condition["expression"].as_str().unwrap_or("");
            let value = EXPRESSIONS
                .get(src)
                .map_err(|e| e.to_string())?
                .eval_bound(&bound)
                .map_err(|e| format!("expression '{src}' resulted in error: {e}"))?;
            match value {
                Value::Bool(true) => {}
                Value::Bool(false) => return Ok(false),
                _ => return Err("no such overload".into()),
            }
        }
        Ok(true)
    }

    /// One expression's value, after the variables it uses.
    fn expression(&mut self, src: &str) -> Result<Value, Failure> {
        let compiled = EXPRESSIONS
            .get(src)
            .map_err(|e| Failure::Error(e.to_string()))?;
        let needed = compiled.selected_fields("variables");
        self.evaluate_variables(&needed)?;
        // A failed variable is absent: an expression that reaches it fails with its error; one
        // that does not (a short-circuit) has its value.
        let bound = bind(self.fixed, &self.variables, &self.authz);
        let failed = |e: &EvalError| match e {
            EvalError::NoSuchKey(k) => self.failed_variables.iter().find(|(n, _)| n == k),
            _ => None,
        };
        match compiled.eval_budgeted(&bound, &mut self.budget) {
            Ok(v) => Ok(v),
            Err(EvalError::OutOfBudget) => Err(Failure::OutOfBudget),
            Err(e) => {
                let why = failed(&e).map_or_else(|| e.to_string(), |(_, why)| why.clone());
                Err(Failure::Error(format!(
                    "expression '{src}' resulted in error: {why}"
                )))
            }
        }
    }

    /// Evaluates `names` and the variables they use, in declaration order (a variable sees
    /// only those before it), each once.
    fn evaluate_variables(&mut self, names: &[String]) -> Result<(), Failure> {
        let wanted = needed_variables(self.spec, names);
        let declared = self.spec["variables"].as_array().into_iter().flatten();
        for v in declared {
            let name = v["name"].as_str().unwrap_or("").to_string();
            if !wanted.contains(&name) || !self.evaluated.insert(name.clone()) {
                continue;
            }
            match self.expression(v["expression"].as_str().unwrap_or("")) {
                Ok(value) => self.variables[name] = value,
                Err(Failure::OutOfBudget) => return Err(Failure::OutOfBudget),
                Err(Failure::Error(e)) => {
                    let why = composited_error(&name, &e);
                    self.failed_variables.push((name, why));
                }
            }
        }
        Ok(())
    }

    /// A failed validation's message: its messageExpression's result when that is a usable
    /// one-line string, else its message, else `failed expression: ...`.
    fn message(&mut self, validation: &Value) -> String {
        let from_expression = validation["messageExpression"]
            .as_str()
            .and_then(|m| self.expression(m).ok())
            .and_then(|m| m.as_str().map(|s| s.trim().to_string()))
            .filter(|m| !m.is_empty() && m.len() <= MAX_MESSAGE && !m.contains('\n'));
        let expression = validation["expression"].as_str().unwrap_or("");
        from_expression
            .or_else(|| {
                validation["message"]
                    .as_str()
                    .map(|m| m.trim().to_string())
                    .filter(|m| !m.is_empty())
            })
            .unwrap_or_else(|| format!("failed expression: {}", expression.trim()))
    }
}

/// The audit annotations that cannot be computed: a value that is not a string or null
/// always, an evaluation error under `failurePolicy: Fail`. (Their values go nowhere.)
fn audit_annotation_errors(
    spec: &Value,
    mut run: impl FnMut(&str) -> Result<Value, String>,
    fail: bool,
) -> Vec<String> {
    let mut errors = Vec::new();
    for annotation in spec["auditAnnotations"].as_array().into_iter().flatten() {
        let src = annotation["valueExpression"].as_str().unwrap_or("");
        match run(src) {
            Ok(Value::String(_) | Value::Null) => {}
            Ok(other) => errors.push(format!(
                "valueExpression '{src}' resulted in unsupported return type: {}. Return type must be either string or null.",
                cel_type_name(&other)
            )),
            Err(e) if fail => errors.push(e),
            Err(_) => {}
        }
    }
    errors
}

/// The CEL type name of a JSON result, as messages name it.
fn cel_type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null_type",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "double",
        Value::Number(_) => "int",
        Value::String(_) => "string",
        Value::Array(_) => "list",
        Value::Object(_) => "map",
    }
}

/// The variables of a policy expression, converted once for the expressions that share them.
fn bind<'a>(fixed: [&'a Value; 5], variables: &'a Value, authz: &Authz) -> Bindings<'a> {
    let [object, old, request, params, namespace] = fixed;
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

/// `namespaceObject`: the request's namespace (null for cluster-scoped objects and namespaces).
pub(super) fn namespace_object(attrs: &Attributes<'_>, snap: &Snapshot) -> Value {
    let res = attrs.resource;
    if attrs.namespace.is_empty() || (res.group.is_empty() && res.plural == "namespaces") {
        return Value::Null;
    }
    snap.get(
        &GroupResource::new("", "namespaces"),
        &ObjectKey::new("", attrs.namespace),
    )
    .map_or(Value::Null, |ns| ns.value().clone())
}

/// The refusal of the first denial: `admission.NewForbidden` with the decision's reason and
/// the code it maps to, and the message as a cause.
fn refusal(attrs: &Attributes<'_>, d: &Denial) -> ApiError {
    let res = attrs.resource;
    let message = format!(
        "ValidatingAdmissionPolicy '{}' with binding '{}' denied request: {}",
        d.policy, d.binding, d.message
    );
    let code = match d.reason.as_str() {
        "Forbidden" => 403,
        "Unauthorized" => 401,
        "RequestEntityTooLarge" => 413,
        _ => 422,
    };
    let qualified = crate::error::qualified(&res.group, &res.plural);
    let status = format!("{qualified} \"{}\" is forbidden: {message}", attrs.name);
    object_refusal(attrs, code, d.reason.clone(), status, message)
}

/// A policy's refusal of the request's object (`PolicyError`): the Status names the object,
/// and `cause` is its one cause.
pub(super) fn object_refusal(
    attrs: &Attributes<'_>,
    code: u16,
    reason: String,
    message: String,
    cause: String,
) -> ApiError {
    let res = attrs.resource;
    let mut err = ApiError::rejection(code, reason, message);
    err.details = Some(Box::new(StatusDetails {
        name: Some(attrs.name.to_string()),
        group: Some(res.group.clone()),
        kind: Some(res.plural.clone()),
        causes: vec![StatusCause {
            reason: String::new(),
            message: cause,
            field: String::new(),
        }],
        ..Default::default()
    }));
    err
}
