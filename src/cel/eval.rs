//! The interpreter: walks the parsed (macro-expanded) AST over [`Val`]s, with cel-go's error
//! semantics (`&&`/`||` absorb errors, comprehension conditions ignore them) and its run-time cost
//! tracking, so a rule over the per-call limit stops with `operation cancelled: actual cost limit
//! exceeded` instead of running on. Calls are dispatched to the [`super::library`],
//! which also says what each costs.

use std::collections::HashMap;
use std::rc::Rc;

use cel::common::ast::{
    CallExpr, ComprehensionExpr, EntryExpr, Expr, IdedExpr, ListExpr, LiteralValue, MapExpr,
    SelectExpr,
};
use regex::Regex;

use super::check::{is_admission_struct, qualified_name};
use super::decl::ListKind;
use super::error::EvalError;
use super::library::{self, Ctx, Eval};
use super::types::type_ident;
use super::value::{equals, Ext, ListV, Val};

type R<'a> = Result<Val<'a>, EvalError>;

fn no_overload<T>() -> Result<T, EvalError> {
    Err(EvalError::NoOverload)
}

/// The interpreter state of one evaluation.
pub struct Evaluator<'a> {
    vars: Vec<(&'a str, Val<'a>)>,
    /// Cost spent so far.
    pub cost: u64,
    limit: u64,
    regexes: &'a HashMap<String, Regex>,
}

impl<'a> Evaluator<'a> {
    /// An evaluator with the given variables, per-call cost limit and precompiled regexes.
    pub fn new(
        vars: Vec<(&'a str, Val<'a>)>,
        limit: u64,
        regexes: &'a HashMap<String, Regex>,
    ) -> Evaluator<'a> {
        Evaluator {
            vars,
            cost: 0,
            limit,
            regexes,
        }
    }

    fn charge(&mut self, n: u64) -> Result<(), EvalError> {
        self.cost = self.cost.saturating_add(n);
        if self.cost > self.limit {
            return Err(EvalError::CostLimitExceeded);
        }
        Ok(())
    }

    fn lookup(&self, name: &str) -> Option<&Val<'a>> {
        self.vars
            .iter()
            .rev()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v)
    }

    /// Evaluates an expression.
    pub fn eval(&mut self, e: &'a IdedExpr) -> R<'a> {
        match &e.expr {
            Expr::Literal(l) => Ok(literal(l)),
            Expr::Ident(name) => self.ident(name),
            Expr::Select(sel) => self.select(e, sel),
            Expr::List(l) => self.list(l),
            Expr::Map(m) => self.map(m),
            Expr::Struct(s) if is_admission_struct(&s.type_name) => self.object_literal(s),
            Expr::Struct(s) => Err(EvalError::Unsupported(format!(
                "unknown type: {}",
                s.type_name
            ))),
            Expr::Unspecified => Err(EvalError::Unsupported("unspecified expression".into())),
            Expr::Comprehension(c) => self.comprehension(c),
            Expr::Call(call) => self.eval_call(call),
        }
    }

    /// A variable, or a type named by an identifier (`int`).
    fn ident(&mut self, name: &str) -> R<'a> {
        self.charge(1)?;
        if let Some(v) = self.lookup(name) {
            return Ok(v.clone());
        }
        if type_ident(name).is_some() {
            return Ok(Val::Type(Rc::from(name)));
        }
        Err(EvalError::NoSuchAttribute(name.to_string()))
    }

    /// `x.f`, `has(x.f)`, or a qualified type name (`google.protobuf.Timestamp`).
    fn select(&mut self, e: &'a IdedExpr, sel: &'a SelectExpr) -> R<'a> {
        if !sel.test {
            if let Some(q) = qualified_name(&e.expr) {
                let root = q.split('.').next().unwrap_or("");
                if self.lookup(root).is_none() && type_ident(&q).is_some() {
                    return Ok(Val::Type(Rc::from(q.as_str())));
                }
            }
        }
        let op = self.eval(&sel.operand)?;
        let key = Val::JStr(sel.field.as_str());
        if sel.test {
            return match &op {
                Val::Map(_) | Val::JMap(..) => Ok(Val::Bool(op.map_get(&key).is_some())),
                _ => no_overload(),
            };
        }
        self.charge(1)?;
        match &op {
            Val::Opt(None) => Ok(Val::Opt(None)),
            Val::Opt(Some(inner)) => Ok(Val::Opt(inner.map_get(&key).map(Rc::new))),
            Val::Map(_) | Val::JMap(..) => match op.map_get(&key) {
                Some(v) => Ok(v),
                None => Err(EvalError::NoSuchKey(sel.field.clone())),
            },
            Val::Ext(ext) => match (&**ext, sel.field.as_str()) {
                (Ext::Authz(a), "requestResource") => match a.request_resource() {
                    Some(r) => Ok(Val::Ext(Rc::new(Ext::Authz(Box::new(r))))),
                    None => no_overload(),
                },
                _ => no_overload(),
            },
            _ => no_overload(),
        }
    }

    /// `Object{f: v, ?g: opt}`: a map of the fields set (absent optionals left out).
    fn object_literal(&mut self, s: &'a cel::common::ast::StructExpr) -> R<'a> {
        self.charge(40)?;
        let mut fields = Vec::with_capacity(s.entries.len());
        for entry in &s.entries {
            let EntryExpr::StructField(f) = &entry.expr else {
                continue;
            };
            let v = self.eval(&f.value)?;
            let v = match (f.optional, v) {
                (true, Val::Opt(None)) => continue,
                (true, Val::Opt(Some(x))) => (*x).clone(),
                (_, v) => v,
            };
            fields.push((Val::JStr(f.field.as_str()), v));
        }
        Ok(Val::Map(Rc::new(fields)))
    }

    /// A list literal (optional elements `?x` only when present).
    fn list(&mut self, l: &'a ListExpr) -> R<'a> {
        self.charge(10)?;
        let mut items = Vec::with_capacity(l.elements.len());
        for (i, el) in l.elements.iter().enumerate() {
            let v = self.eval(el)?;
            if l.optional_indices.contains(&i) {
                match v {
                    Val::Opt(Some(x)) => items.push((*x).clone()),
                    Val::Opt(None) => {}
                    _ => return no_overload(),
                }
            } else {
                items.push(v);
            }
        }
        Ok(Val::List(Rc::new(ListV {
            items,
            kind: ListKind::Atomic,
        })))
    }

    /// A map literal (optional entries `?k: v` only when present; no repeated keys).
    fn map(&mut self, m: &'a MapExpr) -> R<'a> {
        self.charge(30)?;
        let mut entries: Vec<(Val<'a>, Val<'a>)> = Vec::with_capacity(m.entries.len());
        for entry in &m.entries {
            let EntryExpr::MapEntry(me) = &entry.expr else {
                return Err(EvalError::Unsupported("unsupported struct literal".into()));
            };
            let k = self.eval(&me.key)?;
            let mut v = self.eval(&me.value)?;
            if me.optional {
                match v {
                    Val::Opt(Some(x)) => v = (*x).clone(),
                    Val::Opt(None) => continue,
                    _ => return no_overload(),
                }
            }
            if entries.iter().any(|(x, _)| equals(x, &k)) {
                return Err(EvalError::RepeatedKey(k.display()));
            }
            entries.push((k, v));
        }
        Ok(Val::Map(Rc::new(entries)))
    }

    /// A comprehension: the loop macros expand to. Errors of the loop condition are ignored (as
    /// cel-go's), except the cost limit.
    fn comprehension(&mut self, c: &'a ComprehensionExpr) -> R<'a> {
        let range = self.eval(&c.iter_range)?;
        let is_list = matches!(range, Val::List(_) | Val::JList(..));
        let items: Vec<(Val<'a>, Val<'a>)> = match &range {
            Val::List(_) | Val::JList(..) => range
                .list_items()
                .unwrap_or_default()
                .into_iter()
                .enumerate()
                .map(|(i, v)| (Val::Int(i as i64), v))
                .collect(),
            Val::Map(_) | Val::JMap(..) => range.map_entries().unwrap_or_default(),
            _ => return no_overload(),
        };
        let init = self.eval(&c.accu_init)?;
        let depth = self.vars.len();
        self.vars.push((c.accu_var.as_str(), init));
        for (k, v) in items {
            self.vars.truncate(depth + 1);
            match (&c.iter_var2, is_list) {
                (Some(v2), _) => {
                    self.vars.push((c.iter_var.as_str(), k));
                    self.vars.push((v2.as_str(), v));
                }
                (None, true) => self.vars.push((c.iter_var.as_str(), v)),
                (None, false) => self.vars.push((c.iter_var.as_str(), k)),
            }
            match self.eval(&c.loop_cond) {
                Ok(Val::Bool(false)) => break,
                Err(e @ EvalError::CostLimitExceeded) => {
                    self.vars.truncate(depth);
                    return Err(e);
                }
                _ => {}
            }
            let step = match self.eval(&c.loop_step) {
                Ok(v) => v,
                Err(e) => {
                    self.vars.truncate(depth);
                    return Err(e);
                }
            };
            self.vars[depth].1 = step;
        }
        self.vars.truncate(depth + 1);
        let r = self.eval(&c.result);
        self.vars.truncate(depth);
        r
    }

    fn eval_call(&mut self, call: &'a CallExpr) -> R<'a> {
        let name = call.func_name.as_str();
        match (name, call.args.as_slice()) {
            ("_&&_", [l, r]) => return self.logic(l, r, false),
            ("_||_", [l, r]) => return self.logic(l, r, true),
            ("_?_:_", [c, t, f]) => {
                return match self.eval(c)? {
                    Val::Bool(true) => self.eval(t),
                    Val::Bool(false) => self.eval(f),
                    _ => no_overload(),
                };
            }
            ("@not_strictly_false", [x]) => {
                return match self.eval(x) {
                    Ok(Val::Bool(b)) => Ok(Val::Bool(b)),
                    Err(e @ EvalError::CostLimitExceeded) => Err(e),
                    _ => Ok(Val::Bool(true)),
                };
            }
            _ => {}
        }
        // Namespaced globals: `strings.quote(x)`, `sets.contains(a, b)`, `optional.of(x)`.
        if let Some(full) = self.namespaced(call) {
            let mut args = Vec::with_capacity(call.args.len());
            for a in &call.args {
                args.push(self.eval(a)?);
            }
            return self.call(&full, args);
        }
        let mut args = Vec::with_capacity(call.args.len() + 1);
        if let Some(t) = &call.target {
            args.push(self.eval(t)?);
        }
        // Comprehension accumulators are moved, not copied, into `+` and map inserts so that
        // building a list or map is linear.
        let accu_first = matches!(name, "_+_" | "@mapInsert")
            && call.target.is_none()
            && matches!(&call.args.first().map(|a| &a.expr), Some(Expr::Ident(n)) if n.starts_with('@'));
        for (i, a) in call.args.iter().enumerate() {
            if i == 0 && accu_first {
                if let Expr::Ident(n) = &a.expr {
                    self.charge(1)?;
                    if let Some(slot) = self.vars.iter_mut().rev().find(|(x, _)| x == n) {
                        args.push(std::mem::replace(&mut slot.1, Val::Null));
                        continue;
                    }
                }
            }
            args.push(self.eval(a)?);
        }
        self.call(name, args)
    }

    /// `l && r` (`stop` false) or `l || r` (`stop` true): the absorbing value wins over an
    /// error on either side, except the cost limit.
    fn logic(&mut self, l: &'a IdedExpr, r: &'a IdedExpr, stop: bool) -> R<'a> {
        let l = self.eval(l);
        match &l {
            Ok(Val::Bool(b)) if *b == stop => return Ok(Val::Bool(stop)),
            Err(EvalError::CostLimitExceeded) => return l,
            _ => {}
        }
        let r = self.eval(r);
        match (l, r) {
            (_, Ok(Val::Bool(b))) if b == stop => Ok(Val::Bool(stop)),
            (Ok(Val::Bool(_)), Ok(Val::Bool(_))) => Ok(Val::Bool(!stop)),
            (_, Err(e @ EvalError::CostLimitExceeded)) => Err(e),
            (Err(e), _) => Err(e),
            (_, Err(e)) => Err(e),
            _ => no_overload(),
        }
    }

    /// The full name of a call of a namespaced global (`sets.contains`): its target is a
    /// qualified name that is not a variable.
    fn namespaced(&self, call: &CallExpr) -> Option<String> {
        let q = qualified_name(&call.target.as_ref()?.expr)?;
        let root = q.split('.').next().unwrap_or("");
        if self.lookup(root).is_some() {
            return None;
        }
        let full = format!("{q}.{}", call.func_name);
        library::lookup(&full).is_some().then_some(full)
    }

    /// Calls a function on evaluated arguments (the receiver first for member calls), charging
    /// its cost first.
    fn call(&mut self, name: &str, args: Vec<Val<'a>>) -> R<'a> {
        let Some(f) = library::lookup(name).and_then(|e| e.dispatch(&args)) else {
            self.charge(1)?;
            return no_overload();
        };
        self.charge((f.cost)(&args))?;
        match f.eval {
            Eval::Strict(imp) => imp(&Ctx::new(f.name, self.regexes), args),
            Eval::Special => no_overload(),
        }
    }
}

/// The value of a literal (strings borrowed from the program).
fn literal(l: &LiteralValue) -> Val<'_> {
    match l {
        LiteralValue::Boolean(b) => Val::Bool(*b.inner()),
        LiteralValue::Bytes(b) => Val::Bytes(b.inner().into()),
        LiteralValue::Double(d) => Val::Double(*d.inner()),
        LiteralValue::Int(i) => Val::Int(*i.inner()),
        LiteralValue::Null => Val::Null,
        LiteralValue::String(s) => Val::JStr(s.inner()),
        LiteralValue::UInt(u) => Val::Uint(*u.inner()),
    }
}
