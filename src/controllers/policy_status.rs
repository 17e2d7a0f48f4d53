//! The ValidatingAdmissionPolicy status controller (kube-controller-manager's
//! `validatingadmissionpolicy-status-controller`): once per generation, type-checks each
//! validation's `expression` and `messageExpression` against the kinds the policy's rules
//! name, and writes `status.observedGeneration` and `status.typeChecking.expressionWarnings`.
//!
//! Checked: `object` and `oldObject` typed by the kind's schema (a custom resource's with the
//! full ObjectMeta as its `metadata`, as the apiserver's schema resolver gives it), `params` by
//! a built-in `paramKind`'s, `namespaceObject` as a Namespace, `request` as an AdmissionRequest
//! `variables` by each variable's expression (checked in order, against the same kind) and
//! `authorizer` as the authorization library's type.

use std::sync::LazyLock;

use serde_json::{json, Value};

use crate::admission::policy::VARS;
use crate::cel::{StaticType, TypeEnv};
use crate::registry::catalog::Registry;
use crate::schema::Node;
use crate::state::State;
use crate::store::{GroupResource, ObjectKey};

/// The policies' resource.
fn policies() -> GroupResource {
    GroupResource::new(
        "admissionregistration.k8s.io",
        "validatingadmissionpolicies",
    )
}

/// At most this many kinds are checked per policy, as the apiserver's type checker limits.
const MAX_TYPES: usize = 10;

/// Writes a policy's status when its generation is not observed yet.
pub fn reconcile(state: &State, name: &str) {
    let registry = state.registry();
    let key = ObjectKey::new("", name);
    let written = state.store.write(|txn| {
        let Some(current) = txn.view().get(&policies(), &key) else {
            return Ok(());
        };
        let generation = current.value()["metadata"]["generation"]
            .as_i64()
            .unwrap_or(0);
        let observed = current.value()["status"]["observedGeneration"]
            .as_i64()
            .unwrap_or(0);
        if generation <= observed {
            return Ok(());
        }
        let warnings = type_check(&current.value(), &registry);
        let mut obj = current.value().clone();
        let mut checking = json!({});
        if !warnings.is_empty() {
            checking["expressionWarnings"] = json!(warnings);
        }
        obj["status"]["observedGeneration"] = json!(generation);
        obj["status"]["typeChecking"] = checking;
        txn.put(&policies(), key.clone(), obj)?;
        Ok(())
    });
    if let Err(e) = written {
        tracing::error!(error = %e, policy = name, "writing a policy's status");
    }
}

/// The kinds a policy's `matchConstraints.resourceRules` name exactly (no wildcards, no
/// subresources), as `group/version, Kind=kind` with their resources, sorted, at most
/// [`MAX_TYPES`].
fn types_to_check(
    policy: &Value,
    registry: &Registry,
) -> Vec<(
    String,
    std::sync::Arc<crate::registry::resource::ApiResource>,
)> {
    let mut out: Vec<(String, _)> = Vec::new();
    let rules = policy["spec"]["matchConstraints"]["resourceRules"].as_array();
    let strings = |v: &Value| -> Vec<String> {
        let mut s: Vec<String> = v
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .filter(|x| *x != "*" && !x.contains('/'))
            .map(String::from)
            .collect();
        s.sort();
        s
    };
    for rule in rules.into_iter().flatten() {
        for group in strings(&rule["apiGroups"]) {
            for version in strings(&rule["apiVersions"]) {
                for resource in strings(&rule["resources"]) {
                    let Some(res) = registry.resolve(&group, &version, &resource) else {
                        continue;
                    };
                    let gvk = format!("{group}/{version}, Kind={}", res.kind);
                    if out.len() < MAX_TYPES && !out.iter().any(|(g, _)| *g == gvk) {
                        out.push((gvk, res));
                    }
                }
            }
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// The full ObjectMeta schema, for custom resources' roots (their published schema declares
/// only `name` and `generateName`; the apiserver's type checker sees all of ObjectMeta).
static OBJECT_META: LazyLock<Option<Node>> = LazyLock::new(|| {
    crate::registry::builtin::schema::compile("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta")
        .map(|s| s.root().clone())
});

/// The schema `object` is checked with: a built-in kind's, or a custom resource's with the full
/// ObjectMeta as its `metadata`.
fn checked_schema(res: &crate::registry::resource::ApiResource) -> Option<Node> {
    let mut root = res.schema.get()?.root().clone();
    if res.crd.is_some() {
        let meta = OBJECT_META.as_ref()?;
        // `apiVersion` and `kind` are plain strings, as ObjectMeta's `name` is.
        let string = meta.properties.get("name")?;
        for field in ["apiVersion", "kind"] {
            root.properties
                .entry(field.into())
                .or_insert_with(|| string.clone());
        }
        root.properties.insert("metadata".into(), meta.clone());
    }
    Some(root)
}

/// The built-in kind of a policy's `paramKind` (custom resources' schemas lack the full
/// ObjectMeta, so their params stay `dyn`).
fn param_resource(
    policy: &Value,
    registry: &Registry,
) -> Option<std::sync::Arc<crate::registry::resource::ApiResource>> {
    let kind = &policy["spec"]["paramKind"];
    let api_version = kind["apiVersion"].as_str()?;
    let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
    let res = registry.by_kind(group, version, kind["kind"].as_str()?)?;
    res.crd.is_none().then_some(res)
}

/// The environment of one kind: `object` and `oldObject` typed by its schema, then `variables`
/// by each variable's expression checked in that environment (one that does not check is `dyn`,
/// as the apiserver declares it).
fn kind_env(base: &TypeEnv, schema: &Node, policy: &Value) -> TypeEnv {
    let mut env = base.clone();
    env.resource("object", schema).resource("oldObject", schema);
    let mut vars: Vec<(String, StaticType)> = Vec::new();
    for var in policy["spec"]["variables"].as_array().into_iter().flatten() {
        let (Some(name), Some(src)) = (var["name"].as_str(), var["expression"].as_str()) else {
            continue;
        };
        let ty = env.check(src).unwrap_or_else(|_| StaticType::dynamic());
        vars.push((name.to_string(), ty));
        env.variables("variables", &vars);
    }
    env
}

/// `TypeChecker.Check`: a warning per validation expression or message expression that does
/// not type-check against some kind, each kind's issues after its name.
pub fn type_check(policy: &Value, registry: &Registry) -> Vec<Value> {
    let types: Vec<(String, Node)> = types_to_check(policy, registry)
        .into_iter()
        .filter_map(|(gvk, res)| checked_schema(&res).map(|s| (gvk, s)))
        .collect();
    let params = param_resource(policy, registry);
    let namespace = registry.resolve("", "v1", "namespaces");
    let mut base = TypeEnv::new(&VARS);
    base.admission_request("request").authorizer("authorizer");
    if let Some(s) = params.as_ref().and_then(|r| r.schema.get()) {
        base.resource("params", s.root());
    }
    if let Some(s) = namespace.as_ref().and_then(|r| r.schema.get()) {
        base.resource("namespaceObject", s.root());
    }
    let envs: Vec<(&str, TypeEnv)> = types
        .iter()
        .map(|(gvk, schema)| (gvk.as_str(), kind_env(&base, schema, policy)))
        .collect();
    let mut warnings = Vec::new();
    let validations = policy["spec"]["validations"]
        .as_array()
        .into_iter()
        .flatten();
    for (i, validation) in validations.enumerate() {
        for field in ["expression", "messageExpression"] {
            let Some(src) = validation[field].as_str().filter(|s| !s.is_empty()) else {
                continue;
            };
            let issues: Vec<String> = envs
                .iter()
                .filter_map(|(gvk, env)| env.check(src).err().map(|e| format!("{gvk}: {e}\n")))
                .collect();
            if !issues.is_empty() {
                warnings.push(json!({"fieldRef": format!("spec.validations[{i}].{field}"),
                    "warning": issues.join("\n")}));
            }
        }
    }
    warnings
}
