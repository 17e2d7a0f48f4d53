//! Expressions over unstructured values, as admission sees them: webhooks' `matchConditions`
//! and admission policies' expressions, whose variables are `dyn` or declared by a
//! [`TypeEnv`]. The
//! same parser, checker, library and interpreter as the CRD rules; the values are the request's
//! JSON, turned into CEL maps and lists at evaluation.

use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

use parking_lot::Mutex;

use serde_json::Value;

use super::compile::compile_with;
use super::decl::ListKind;
use super::error::{CompileError, EvalError};
use super::eval::Evaluator;
use cel::common::ast::{EntryExpr, Expr, IdedEntryExpr, IdedExpr, LiteralValue};

use super::type_env::TypeEnv;
use super::value::{ListV, Val};
use super::{check::Checker, Program, PER_CALL_LIMIT};

/// A compiled expression with `dyn` variables.
pub struct Expression {
    pub(super) program: Program,
}

impl Expression {
    /// Parses and type-checks `src` with the variables `vars` declared, each `dyn`. The error is
    /// cel-go's rendering (`ERROR: <input>:1:5: ...`).
    pub fn compile(src: &str, vars: &[&str]) -> Result<Expression, CompileError> {
        let compiled = compile_with(src, Checker::with_dyn_vars(vars))?;
        Ok(Expression {
            program: compiled.program,
        })
    }

    /// Evaluates to a boolean with `vars` bound (absent JSON is `null`).
    pub fn eval_bool(&self, vars: &[(&str, &Value)]) -> Result<bool, EvalError> {
        match self.eval(vars)? {
            Value::Bool(b) => Ok(b),
            _ => Err(EvalError::NoOverload),
        }
    }

    /// Evaluates with `vars` bound; the result as JSON (timestamps, durations and other
    /// library values as their string forms, bytes as base64).
    pub fn eval(&self, vars: &[(&str, &Value)]) -> Result<Value, EvalError> {
        self.eval_bound(&Bindings::new(vars))
    }

    /// Evaluates with variables bound once for several expressions.
    pub fn eval_bound(&self, bindings: &Bindings<'_>) -> Result<Value, EvalError> {
        let mut ev = Evaluator::new(bindings.vars.clone(), PER_CALL_LIMIT, &self.program.regexes);
        let result = ev.eval(&self.program.expr)?;
        Ok(to_json(&result))
    }

    /// Evaluates as [`Expression::eval_bound`], charging what it cost (even when it failed) to
    /// `budget`, the [`super::RUNTIME_COST_BUDGET`] several expressions share; more than what is left
    /// is [`EvalError::OutOfBudget`], whatever the result.
    pub fn eval_budgeted(
        &self,
        bindings: &Bindings<'_>,
        budget: &mut u64,
    ) -> Result<Value, EvalError> {
        let mut ev = Evaluator::new(bindings.vars.clone(), PER_CALL_LIMIT, &self.program.regexes);
        let result = ev.eval(&self.program.expr);
        if ev.cost > *budget {
            *budget = 0;
            return Err(EvalError::OutOfBudget);
        }
        *budget -= ev.cost;
        Ok(to_json(&result?))
    }

    /// The fields of the variable `root` the expression selects (`root.x`, `root['x']`), each
    /// once, in order of appearance: which of a policy's variables it needs.
    pub fn selected_fields(&self, root: &str) -> Vec<String> {
        let mut out = Vec::new();
        selected_fields(&self.program.expr, root, &mut out);
        out
    }
}

fn selected_fields(e: &IdedExpr, root: &str, out: &mut Vec<String>) {
    let is_root = |e: &IdedExpr| matches!(&e.expr, Expr::Ident(n) if n == root);
    let mut add = |name: &str| {
        if !out.iter().any(|o| o == name) {
            out.push(name.to_string());
        }
    };
    match &e.expr {
        Expr::Select(s) if is_root(&s.operand) => add(&s.field),
        Expr::Call(c) if c.func_name == "_[_]" && c.args.len() == 2 && is_root(&c.args[0]) => {
            if let Expr::Literal(LiteralValue::String(k)) = &c.args[1].expr {
                add(k);
            }
        }
        _ => {}
    }
    let children: Vec<&IdedExpr> = match &e.expr {
        Expr::Select(s) => vec![&s.operand],
        Expr::Call(c) => c.target.iter().map(|t| &**t).chain(&c.args).collect(),
        Expr::List(l) => l.elements.iter().collect(),
        Expr::Map(m) => entries(&m.entries),
        Expr::Struct(s) => entries(&s.entries),
        Expr::Comprehension(c) => vec![
            &c.iter_range,
            &c.accu_init,
            &c.loop_cond,
            &c.loop_step,
            &c.result,
        ],
        _ => Vec::new(),
    };
    for child in children {
        selected_fields(child, root, out);
    }
}

fn entries(entries: &[IdedEntryExpr]) -> Vec<&IdedExpr> {
    let mut out = Vec::new();
    for entry in entries {
        match &entry.expr {
            EntryExpr::StructField(f) => out.push(&f.value),
            EntryExpr::MapEntry(m) => {
                out.push(&m.key);
                out.push(&m.value);
            }
        }
    }
    out
}

/// Variables converted to CEL values once, for evaluating several expressions over them.
pub struct Bindings<'a> {
    vars: Vec<(&'a str, Val<'a>)>,
}

impl<'a> Bindings<'a> {
    /// `vars` as CEL's unstructured values.
    pub fn new(vars: &[(&'a str, &'a Value)]) -> Bindings<'a> {
        Bindings {
            vars: vars.iter().map(|(n, v)| (*n, unstructured(v))).collect(),
        }
    }

    /// Binds `name` to an authorizer (admission's `authorizer` variable).
    pub fn authorizer(mut self, name: &'a str, authz: super::Authz) -> Bindings<'a> {
        let v = Val::Ext(Rc::new(super::value::Ext::Authz(Box::new(authz))));
        self.vars.push((name, v));
        self
    }
}

/// A CEL value as JSON.
fn to_json(v: &Val<'_>) -> Value {
    use base64::Engine;
    match v {
        Val::Null | Val::Opt(None) => Value::Null,
        Val::Bool(b) => Value::Bool(*b),
        Val::Int(i) => Value::from(*i),
        Val::Uint(u) => Value::from(*u),
        Val::Double(d) => serde_json::Number::from_f64(*d).map_or(Value::Null, Value::Number),
        Val::Str(s) => Value::String(s.to_string()),
        Val::JStr(s) => Value::String((*s).to_string()),
        Val::Bytes(b) => Value::String(base64::engine::general_purpose::STANDARD.encode(b)),
        Val::List(l) => Value::Array(l.items.iter().map(to_json).collect()),
        Val::JList(items, _) => Value::Array(items.to_vec()),
        Val::Map(m) => Value::Object(m.iter().map(|(k, v)| (map_key(k), to_json(v))).collect()),
        Val::JMap(m, _) => Value::Object((*m).clone()),
        Val::Opt(Some(inner)) => to_json(inner),
        Val::Ts(t) => Value::String(t.to_rfc3339()),
        Val::Dur(d) => Value::String(format!("{}s", d.num_milliseconds() as f64 / 1000.0)),
        Val::Type(t) => Value::String(t.to_string()),
        Val::Ext(_) => Value::Null,
    }
}

/// A map key as a JSON object key.
fn map_key(k: &Val<'_>) -> String {
    match to_json(k) {
        Value::String(s) => s,
        other => other.to_string(),
    }
}

/// Compiled expressions by source, for one set of variables: admission evaluates the same
/// policies' expressions on every write, and compiles each once. Bounded: past
/// [`ExpressionCache::LIMIT`] entries it starts over.
pub struct ExpressionCache {
    env: TypeEnv,
    compiled: Mutex<HashMap<String, Result<Arc<Expression>, CompileError>>>,
}

impl ExpressionCache {
    /// Entries kept before the cache is emptied.
    pub const LIMIT: usize = 4096;

    /// A cache for expressions over `vars`, all `dyn`.
    pub fn new(vars: &[&str]) -> Self {
        Self::typed(TypeEnv::new(vars))
    }

    /// A cache for expressions checked against `env`.
    pub fn typed(env: TypeEnv) -> Self {
        ExpressionCache {
            env,
            compiled: Mutex::new(HashMap::new()),
        }
    }

    /// The compiled `src` (or its compile error), compiled on first use.
    pub fn get(&self, src: &str) -> Result<Arc<Expression>, CompileError> {
        if let Some(found) = self.compiled.lock().get(src) {
            return found.clone();
        }
        let result = self.env.compile(src).map(Arc::new);
        let mut compiled = self.compiled.lock();
        if compiled.len() >= Self::LIMIT {
            compiled.clear();
        }
        compiled.insert(src.to_string(), result.clone());
        result
    }
}

/// A JSON value as CEL's unstructured values: objects as maps, arrays as lists.
fn unstructured(v: &Value) -> Val<'_> {
    match v {
        Value::Null => Val::Null,
        Value::Bool(b) => Val::Bool(*b),
        Value::Number(n) => match (n.as_i64(), n.as_u64()) {
            (Some(i), _) => Val::Int(i),
            (None, Some(u)) => Val::Uint(u),
            _ => Val::Double(n.as_f64().unwrap_or(0.0)),
        },
        Value::String(s) => Val::JStr(s),
        Value::Array(a) => Val::List(Rc::new(ListV {
            items: a.iter().map(unstructured).collect(),
            kind: ListKind::Atomic,
        })),
        Value::Object(m) => Val::Map(Rc::new(
            m.iter()
                .map(|(k, v)| (Val::JStr(k), unstructured(v)))
                .collect(),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn admission_style_expressions() {
        let object = json!({"metadata": {"name": "a", "labels": {"tier": "web"}},
            "spec": {"replicas": 3, "containers": [{"name": "c"}]}});
        let request = json!({"operation": "CREATE", "userInfo": {"username": "alice"}});
        let vars = ["object", "oldObject", "request"];
        let eval = |src: &str| {
            Expression::compile(src, &vars)
                .expect("compiles")
                .eval_bool(&[
                    ("object", &object),
                    ("oldObject", &Value::Null),
                    ("request", &request),
                ])
        };
        assert_eq!(eval("object.metadata.labels.tier == 'web'"), Ok(true));
        assert_eq!(
            eval("has(object.metadata.labels.tier) && !has(object.metadata.annotations)"),
            Ok(true)
        );
        assert_eq!(
            eval("object.spec.replicas > 2 && size(object.spec.containers) == 1"),
            Ok(true)
        );
        assert_eq!(
            eval("oldObject == null && request.operation == 'CREATE'"),
            Ok(true)
        );
        assert_eq!(
            eval("request.userInfo.username.startsWith('bob')"),
            Ok(false)
        );
        assert!(eval("object.spec.missing == 1").is_err());
        let err = Expression::compile("object.", &vars)
            .err()
            .expect("a syntax error");
        assert!(err.to_string().starts_with("ERROR: <input>:1:"), "{err}");
        assert!(Expression::compile("authorizer.path('x')", &vars).is_err());
    }

    #[test]
    fn authorizer_checks_ask_the_bound_function() {
        use super::super::{Authz, AuthzDecision, AuthzQuestion};
        // Allows `get` of anything in namespace "team", and `/healthz`; records every question.
        let asked = Rc::new(std::cell::RefCell::new(Vec::new()));
        let log = asked.clone();
        let check = move |q: &AuthzQuestion| {
            log.borrow_mut().push(q.clone());
            let allowed = (q.resource_request && q.namespace == "team" && q.verb == "get")
                || (!q.resource_request && q.path == "/healthz");
            AuthzDecision {
                allowed,
                reason: if allowed { "ok".into() } else { String::new() },
                error: String::new(),
            }
        };
        let request = AuthzQuestion {
            group: "apps".into(),
            resource: "deployments".into(),
            namespace: "team".into(),
            name: "web".into(),
            ..AuthzQuestion::default()
        };
        let authz = Authz::new(Rc::new(check), request);
        let vars = ["authorizer"];
        let eval = |src: &str| {
            let bindings = Bindings::new(&[]).authorizer("authorizer", authz.clone());
            Expression::compile(src, &vars)
                .expect("compiles")
                .eval_bound(&bindings)
        };
        let yes = "authorizer.group('').resource('pods').namespace('team').name('p').check('get')";
        assert_eq!(eval(&format!("{yes}.allowed()")), Ok(json!(true)));
        assert_eq!(eval(&format!("{yes}.reason()")), Ok(json!("ok")));
        assert_eq!(eval(&format!("{yes}.errored()")), Ok(json!(false)));
        assert_eq!(eval(&format!("{yes}.error()")), Ok(json!("")));
        let sub = "authorizer.group('apps').resource('deployments').subresource('scale')";
        assert_eq!(
            eval(&format!(
                "{sub}.namespace('other').check('update').allowed()"
            )),
            Ok(json!(false))
        );
        assert_eq!(
            eval("authorizer.path('/healthz').check('get').allowed()"),
            Ok(json!(true))
        );
        assert_eq!(
            eval("authorizer.requestResource.check('get').allowed()"),
            Ok(json!(true))
        );
        assert_eq!(
            eval("authorizer.serviceAccount('ns', 'bot').path('/logs').check('get').allowed()"),
            Ok(json!(false))
        );
        let last = asked.borrow().last().cloned().unwrap();
        assert_eq!(last.service_account, Some(("ns".into(), "bot".into())));
        let req = asked.borrow()[asked.borrow().len() - 2].clone();
        assert_eq!(
            (req.resource.as_str(), req.name.as_str()),
            ("deployments", "web")
        );
        // Steps out of order have no overload: at run time on the `dyn` variable, when the
        // expression is compiled once the type is known.
        assert!(eval("authorizer.check('get')").is_err());
        let err = Expression::compile("authorizer.group('a').check('get')", &vars).err();
        assert_eq!(
            err.map(|e| e.to_string()).unwrap_or_default(),
            "ERROR: <input>:1:28: found no matching overload for 'check' applied to 'kubernetes.authorization.GroupCheck.(string)'\n | authorizer.group('a').check('get')\n | ...........................^"
        );
    }

    #[test]
    fn mutating_policy_literals() {
        let object = json!({"spec": {"replicas": 1}});
        let eval = |src: &str| {
            Expression::compile(src, &["object"])
                .expect("compiles")
                .eval(&[("object", &object)])
        };
        assert_eq!(
            eval("Object{spec: Object.spec{replicas: object.spec.replicas + 1}}"),
            Ok(json!({"spec": {"replicas": 2}}))
        );
        assert_eq!(
            eval("[JSONPatch{op: 'add', path: '/metadata/labels', value: {'a': 'b'}}]"),
            Ok(json!([{"op": "add", "path": "/metadata/labels", "value": {"a": "b"}}]))
        );
        assert!(Expression::compile("Unknown{a: 1}", &["object"]).is_err());
    }
}
