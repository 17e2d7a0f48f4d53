//! The interpreter: walks the parsed (macro-expanded) AST over [`Val`]s, with cel-go's error
//! semantics (`&&`/`||` absorb errors, comprehension conditions ignore them) and its run-time cost
//! tracking, so a rule over the per-call limit stops with `operation cancelled: actual cost limit
//! exceeded` instead of running on.

use std::collections::HashMap;
use std::rc::Rc;

use cel::common::ast::{EntryExpr, Expr, IdedExpr, LiteralValue};
use chrono::{Datelike, FixedOffset, TimeDelta, TimeZone, Timelike, Utc};
use regex::Regex;

use super::check::{mul_f, qualified_name};
use super::decl::{escape, ListKind};
use super::library::{self, Quantity, Url};
use super::types::{is_function, type_ident};
use super::value::{compare, equals, Ext, ListV, Val};

pub use super::error::EvalError;
use super::error::InvalidRegex;

type R<'a> = Result<Val<'a>, EvalError>;

/// A library function's rejection of a value, with the library's wording.
fn err<T>(msg: impl Into<String>) -> Result<T, EvalError> {
    Err(EvalError::Invalid(msg.into()))
}

fn no_overload<T>() -> Result<T, EvalError> {
    Err(EvalError::NoOverload)
}

/// Compiles a CEL (RE2) regular expression.
pub fn compile_regex(p: &str) -> Result<Regex, InvalidRegex> {
    let translated = crate::schema::pattern::translate(p).map_err(InvalidRegex)?;
    regex::RegexBuilder::new(&translated)
        .size_limit(1 << 22)
        .build()
        .map_err(|e| InvalidRegex(format!("invalid regular expression: {e}")))
}

/// The interpreter state of one evaluation.
pub struct Evaluator<'a> {
    vars: Vec<(&'a str, Val<'a>)>,
    /// Cost spent so far.
    pub cost: u64,
    limit: u64,
    regexes: &'a HashMap<String, Regex>,
}

const STRING_TRAVERSAL: f64 = 0.1;

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
            Expr::Literal(l) => Ok(match l {
                LiteralValue::Boolean(b) => Val::Bool(*b.inner()),
                LiteralValue::Bytes(b) => Val::Bytes(b.inner().into()),
                LiteralValue::Double(d) => Val::Double(*d.inner()),
                LiteralValue::Int(i) => Val::Int(*i.inner()),
                LiteralValue::Null => Val::Null,
                LiteralValue::String(s) => Val::JStr(s.inner()),
                LiteralValue::UInt(u) => Val::Uint(*u.inner()),
            }),
            Expr::Ident(name) => {
                self.charge(1)?;
                if let Some(v) = self.lookup(name) {
                    return Ok(v.clone());
                }
                if type_ident(name).is_some() {
                    return Ok(Val::Type(Rc::from(name.as_str())));
                }
                Err(EvalError::NoSuchAttribute(name.clone()))
            }
            Expr::Select(sel) => {
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
                    _ => no_overload(),
                }
            }
            Expr::List(l) => {
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
            Expr::Map(m) => {
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
                        return Err(EvalError::RepeatedKey(display(&k)));
                    }
                    entries.push((k, v));
                }
                Ok(Val::Map(Rc::new(entries)))
            }
            Expr::Struct(s) => Err(EvalError::Unsupported(format!(
                "unknown type: {}",
                s.type_name
            ))),
            Expr::Unspecified => Err(EvalError::Unsupported("unspecified expression".into())),
            Expr::Comprehension(c) => {
                let range = self.eval(&c.iter_range)?;
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
                let two = c.iter_var2.is_some();
                let is_list = matches!(range, Val::List(_) | Val::JList(..));
                for (k, v) in items {
                    self.vars.truncate(depth + 1);
                    match (&c.iter_var2, two, is_list) {
                        (Some(v2), _, _) => {
                            self.vars.push((c.iter_var.as_str(), k));
                            self.vars.push((v2.as_str(), v));
                        }
                        (None, _, true) => self.vars.push((c.iter_var.as_str(), v)),
                        (None, _, false) => self.vars.push((c.iter_var.as_str(), k)),
                    }
                    let cond = self.eval(&c.loop_cond);
                    match cond {
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
            Expr::Call(call) => self.eval_call(call),
        }
    }

    fn eval_call(&mut self, call: &'a cel::common::ast::CallExpr) -> R<'a> {
        let name = call.func_name.as_str();
        match name {
            "_&&_" | "_||_" => {
                let stop = name == "_||_";
                let l = self.eval(&call.args[0]);
                if let Ok(Val::Bool(b)) = l {
                    if b == stop {
                        return Ok(Val::Bool(stop));
                    }
                }
                if let Err(EvalError::CostLimitExceeded) = &l {
                    return l;
                }
                let r = self.eval(&call.args[1]);
                return match (l, r) {
                    (_, Ok(Val::Bool(b))) if b == stop => Ok(Val::Bool(stop)),
                    (Ok(Val::Bool(_)), Ok(Val::Bool(_))) => Ok(Val::Bool(!stop)),
                    (_, Err(e @ EvalError::CostLimitExceeded)) => Err(e),
                    (Err(e), _) => Err(e),
                    (_, Err(e)) => Err(e),
                    _ => no_overload(),
                };
            }
            "_?_:_" => {
                return match self.eval(&call.args[0])? {
                    Val::Bool(true) => self.eval(&call.args[1]),
                    Val::Bool(false) => self.eval(&call.args[2]),
                    _ => no_overload(),
                };
            }
            "@not_strictly_false" => {
                return match self.eval(&call.args[0]) {
                    Ok(Val::Bool(b)) => Ok(Val::Bool(b)),
                    Err(e @ EvalError::CostLimitExceeded) => Err(e),
                    _ => Ok(Val::Bool(true)),
                };
            }
            _ => {}
        }
        // Namespaced globals: `strings.quote(x)`, `sets.contains(a, b)`, `optional.of(x)`.
        if let Some(t) = &call.target {
            if let Some(q) = qualified_name(&t.expr) {
                let root = q.split('.').next().unwrap_or("");
                if self.lookup(root).is_none() {
                    let full = format!("{q}.{name}");
                    if is_function(&full) {
                        let mut args = Vec::with_capacity(call.args.len());
                        for a in &call.args {
                            args.push(self.eval(a)?);
                        }
                        return self.call(&full, false, args);
                    }
                }
            }
        }
        let mut args = Vec::with_capacity(call.args.len() + 1);
        // Comprehension accumulators are moved, not copied, into `+` and map inserts so that
        // building a list or map is linear.
        let accu_first = matches!(name, "_+_" | "@mapInsert")
            && call.target.is_none()
            && matches!(&call.args.first().map(|a| &a.expr), Some(Expr::Ident(n)) if n.starts_with('@'));
        if let Some(t) = &call.target {
            args.push(self.eval(t)?);
        }
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
        self.call(name, call.target.is_some(), args)
    }

    fn regex(&mut self, p: &str) -> Result<Regex, EvalError> {
        if let Some(r) = self.regexes.get(p) {
            return Ok(r.clone());
        }
        Ok(compile_regex(p)?)
    }

    /// Calls a function on evaluated arguments (the receiver first for member calls).
    fn call(&mut self, name: &str, recv: bool, mut args: Vec<Val<'a>>) -> R<'a> {
        let n = args.len();
        let s = |i: usize, args: &[Val<'a>]| args.get(i).map(Val::cost_size).unwrap_or(0);
        // Cost of the call itself.
        let cost = match name {
            "contains" if n == 2 => mul_f(s(0, &args), STRING_TRAVERSAL)
                .saturating_mul(mul_f(s(1, &args), STRING_TRAVERSAL)),
            "startsWith" | "endsWith" => mul_f(s(1, &args), STRING_TRAVERSAL),
            "matches" | "find" | "findAll" if n >= 2 => {
                mul_f(s(0, &args) + 1, STRING_TRAVERSAL).saturating_mul(mul_f(s(1, &args), 0.25))
            }
            "_+_" if args.first().and_then(Val::as_str).is_some() => {
                mul_f(s(0, &args) + s(1, &args), STRING_TRAVERSAL)
            }
            "_==_" | "_!=_" | "_<_" | "_<=_" | "_>_" | "_>=_"
                if args.first().and_then(Val::as_str).is_some() =>
            {
                mul_f(s(0, &args).min(s(1, &args)), STRING_TRAVERSAL).max(1)
            }
            "@in" if n == 2 => s(1, &args).max(1),
            "isSorted" | "sum" | "max" | "min" | "indexOf" | "lastIndexOf"
                if matches!(args.first(), Some(Val::List(_) | Val::JList(..))) =>
            {
                s(0, &args).max(1)
            }
            "lowerAscii" | "upperAscii" | "substring" | "trim" | "url" | "cidr" | "isIP"
            | "isCIDR" | "ip" | "quantity" | "isQuantity" | "semver" | "isSemver" | "isURL" => {
                mul_f(s(0, &args), STRING_TRAVERSAL).max(1)
            }
            "replace" | "split" => mul_f(s(0, &args), 2.0 * STRING_TRAVERSAL).max(1),
            "join" | "format" | "strings.quote" => {
                let total: u64 = args
                    .first()
                    .and_then(Val::list_items)
                    .map(|l| l.iter().map(Val::cost_size).sum())
                    .unwrap_or(s(0, &args));
                mul_f(total, 2.0 * STRING_TRAVERSAL).max(1)
            }
            _ => 1,
        };
        self.charge(cost)?;
        let a0 = args.first().cloned().unwrap_or(Val::Null);
        let a1 = args.get(1).cloned().unwrap_or(Val::Null);
        let st = |v: &Val<'a>| v.as_str().map(str::to_string);
        Ok(match (name, n) {
            ("!_", 1) => match a0 {
                Val::Bool(b) => Val::Bool(!b),
                _ => return no_overload(),
            },
            ("-_", 1) => match a0 {
                Val::Int(i) => Val::Int(i.checked_neg().ok_or(EvalError::Overflow("integer"))?),
                Val::Double(d) => Val::Double(-d),
                Val::Dur(d) => Val::Dur(-d),
                _ => return no_overload(),
            },
            ("_==_", 2) => Val::Bool(equals(&a0, &a1)),
            ("_!=_", 2) => Val::Bool(!equals(&a0, &a1)),
            ("_<_" | "_<=_" | "_>_" | "_>=_", 2) => {
                let Some(o) = compare(&a0, &a1) else {
                    if matches!((&a0, &a1), (Val::Double(_), _) | (_, Val::Double(_))) {
                        return Ok(Val::Bool(false));
                    }
                    return no_overload();
                };
                use std::cmp::Ordering::*;
                Val::Bool(match name {
                    "_<_" => o == Less,
                    "_<=_" => o != Greater,
                    "_>_" => o == Greater,
                    _ => o != Less,
                })
            }
            ("_+_", 2) => add(args.swap_remove(0), a1)?,
            ("_-_", 2) => arith(name, a0, a1)?,
            ("_*_" | "_/_" | "_%_", 2) => arith(name, a0, a1)?,
            ("_[_]", 2) => index(&a0, &a1)?,
            ("_[?_]", 2) => match index(&a0, &a1) {
                Ok(Val::Opt(o)) => Val::Opt(o),
                Ok(v) => Val::Opt(Some(Rc::new(v))),
                Err(e) if e.is_missing() => Val::Opt(None),
                Err(e) => return Err(e),
            },
            ("_?._", 2) => {
                let Some(f) = a1.as_str() else {
                    return no_overload();
                };
                let key = Val::str(f);
                match &a0 {
                    Val::Opt(None) => Val::Opt(None),
                    Val::Opt(Some(inner)) => Val::Opt(inner.map_get(&key).map(Rc::new)),
                    Val::Map(_) | Val::JMap(..) => Val::Opt(a0.map_get(&key).map(Rc::new)),
                    _ => return no_overload(),
                }
            }
            ("@in", 2) => match &a1 {
                Val::List(_) | Val::JList(..) => Val::Bool(
                    a1.list_items()
                        .unwrap_or_default()
                        .iter()
                        .any(|x| equals(x, &a0)),
                ),
                Val::Map(_) | Val::JMap(..) => Val::Bool(a1.map_get(&a0).is_some()),
                _ => return no_overload(),
            },
            ("@mapInsert", 3) => {
                let mut m = match args.remove(0) {
                    Val::Map(m) => m,
                    _ => return no_overload(),
                };
                let (k, v) = (args[0].clone(), args[1].clone());
                if m.iter().any(|(x, _)| equals(x, &k)) {
                    return Err(EvalError::KeyExists(display(&k)));
                }
                Rc::make_mut(&mut m).push((k, v));
                Val::Map(m)
            }
            ("size", 1) => Val::Int(a0.size().ok_or(EvalError::NoOverload)? as i64),
            ("contains", 2) => match (a0.as_str(), a1.as_str()) {
                (Some(x), Some(y)) => Val::Bool(x.contains(y)),
                _ => return no_overload(),
            },
            ("startsWith", 2) => match (a0.as_str(), a1.as_str()) {
                (Some(x), Some(y)) => Val::Bool(x.starts_with(y)),
                _ => return no_overload(),
            },
            ("endsWith", 2) => match (a0.as_str(), a1.as_str()) {
                (Some(x), Some(y)) => Val::Bool(x.ends_with(y)),
                _ => return no_overload(),
            },
            ("matches", 2) => match (a0.as_str(), a1.as_str()) {
                (Some(x), Some(p)) => Val::Bool(self.regex(p)?.is_match(x)),
                _ => return no_overload(),
            },
            ("find", 2) => match (a0.as_str(), a1.as_str()) {
                (Some(x), Some(p)) => {
                    Val::str(self.regex(p)?.find(x).map(|m| m.as_str()).unwrap_or(""))
                }
                _ => return no_overload(),
            },
            ("findAll", 2 | 3) => {
                let limit = match args.get(2) {
                    Some(Val::Int(i)) => *i,
                    None => -1,
                    _ => return no_overload(),
                };
                match (a0.as_str(), a1.as_str()) {
                    (Some(x), Some(p)) => {
                        let re = self.regex(p)?;
                        let it = re.find_iter(x).map(|m| Val::str(m.as_str()));
                        let items: Vec<Val> = if limit < 0 {
                            it.collect()
                        } else {
                            it.take(limit as usize).collect()
                        };
                        list(items)
                    }
                    _ => return no_overload(),
                }
            }
            ("int", 1) => match a0 {
                Val::Int(i) => Val::Int(i),
                Val::Uint(u) => {
                    Val::Int(i64::try_from(u).map_err(|_| EvalError::Overflow("integer"))?)
                }
                Val::Double(d) => {
                    if !d.is_finite() || d <= -9.223372036854776e18 || d >= 9.223372036854776e18 {
                        return Err(EvalError::Overflow("integer"));
                    }
                    Val::Int(d as i64)
                }
                Val::Ts(t) => Val::Int(t.timestamp()),
                Val::Dur(d) => Val::Int(d.num_nanoseconds().unwrap_or(i64::MAX)),
                ref v if v.as_str().is_some() => match v.as_str().and_then(|s| s.parse().ok()) {
                    Some(i) => Val::Int(i),
                    None => return err(format!("cannot convert {} to int", display(v))),
                },
                _ => return no_overload(),
            },
            ("uint", 1) => match a0 {
                Val::Uint(u) => Val::Uint(u),
                Val::Int(i) => Val::Uint(
                    u64::try_from(i).map_err(|_| EvalError::Overflow("unsigned integer"))?,
                ),
                Val::Double(d) => {
                    if !(0.0..1.8446744073709552e19).contains(&d) {
                        return Err(EvalError::Overflow("unsigned integer"));
                    }
                    Val::Uint(d as u64)
                }
                ref v if v.as_str().is_some() => match v.as_str().and_then(|s| s.parse().ok()) {
                    Some(i) => Val::Uint(i),
                    None => return err(format!("cannot convert {} to uint", display(v))),
                },
                _ => return no_overload(),
            },
            ("double", 1) => match a0 {
                Val::Double(d) => Val::Double(d),
                Val::Int(i) => Val::Double(i as f64),
                Val::Uint(u) => Val::Double(u as f64),
                ref v if v.as_str().is_some() => match v.as_str().and_then(|s| s.parse().ok()) {
                    Some(d) => Val::Double(d),
                    None => return err(format!("cannot convert {} to double", display(v))),
                },
                _ => return no_overload(),
            },
            ("string", 1) => Val::str(match &a0 {
                Val::Str(_) | Val::JStr(_) => return Ok(a0),
                Val::Int(i) => i.to_string(),
                Val::Uint(u) => u.to_string(),
                Val::Double(d) => library::go_float(*d),
                Val::Bool(b) => b.to_string(),
                Val::Bytes(b) => match std::str::from_utf8(b) {
                    Ok(s) => s.to_string(),
                    Err(_) => return err("invalid UTF-8 in bytes, cannot convert to string"),
                },
                Val::Ts(t) => library::timestamp_string(*t),
                Val::Dur(d) => library::duration_string(*d),
                Val::Ext(e) => match &**e {
                    Ext::Ip(ip) => ip.to_string(),
                    Ext::Cidr(ip, p) => format!("{ip}/{p}"),
                    _ => return no_overload(),
                },
                _ => return no_overload(),
            }),
            ("bytes", 1) => match &a0 {
                Val::Bytes(_) => a0,
                v => match v.as_str() {
                    Some(s) => Val::Bytes(s.as_bytes().into()),
                    None => return no_overload(),
                },
            },
            ("bool", 1) => match &a0 {
                Val::Bool(_) => a0,
                v => match v.as_str() {
                    Some("true" | "True" | "TRUE" | "t" | "1") => Val::Bool(true),
                    Some("false" | "False" | "FALSE" | "f" | "0") => Val::Bool(false),
                    Some(s) => {
                        return err(format!(
                            "type conversion error from 'string' to 'bool': {s}"
                        ))
                    }
                    None => return no_overload(),
                },
            },
            ("timestamp", 1) => match &a0 {
                Val::Ts(_) => a0,
                Val::Int(i) => Val::Ts(
                    Utc.timestamp_opt(*i, 0)
                        .single()
                        .ok_or(EvalError::Overflow("timestamp"))?,
                ),
                v => match v.as_str() {
                    Some(s) => match chrono::DateTime::parse_from_rfc3339(s) {
                        Ok(t) => Val::Ts(t.with_timezone(&Utc)),
                        Err(_) => return err(
                            "type conversion error from 'string' to 'google.protobuf.Timestamp'",
                        ),
                    },
                    None => return no_overload(),
                },
            },
            ("duration", 1) => {
                match &a0 {
                    Val::Dur(_) => a0,
                    v => match v.as_str() {
                        Some(s) => match library::parse_go_duration(s) {
                            Some(d) => Val::Dur(d),
                            None => return err(
                                "type conversion error from 'string' to 'google.protobuf.Duration'",
                            ),
                        },
                        None => return no_overload(),
                    },
                }
            }
            ("dyn", 1) => a0,
            ("type", 1) => Val::Type(Rc::from(a0.type_name())),
            (
                "getFullYear" | "getMonth" | "getDayOfYear" | "getDate" | "getDayOfMonth"
                | "getDayOfWeek" | "getHours" | "getMinutes" | "getSeconds" | "getMilliseconds",
                1 | 2,
            ) => time_part(name, &a0, args.get(1))?,
            ("charAt", 2) => match (a0.as_str(), &a1) {
                (Some(s), Val::Int(i)) => {
                    let len = s.chars().count() as i64;
                    if *i < 0 || *i > len {
                        return Err(EvalError::IndexOutOfRange(*i));
                    }
                    Val::str(
                        s.chars()
                            .nth(*i as usize)
                            .map(String::from)
                            .unwrap_or_default(),
                    )
                }
                _ => return no_overload(),
            },
            ("indexOf" | "lastIndexOf", 2 | 3) if a0.as_str().is_some() => {
                let s: Vec<char> = a0.as_str().unwrap_or("").chars().collect();
                let Some(sub) = a1.as_str() else {
                    return no_overload();
                };
                let sub: Vec<char> = sub.chars().collect();
                let last = name == "lastIndexOf";
                let start = match args.get(2) {
                    Some(Val::Int(i)) => {
                        if *i < 0 || *i as usize > s.len() {
                            return Err(EvalError::IndexOutOfRange(*i));
                        }
                        Some(*i as usize)
                    }
                    None => None,
                    _ => return no_overload(),
                };
                let matches_at =
                    |i: usize| i + sub.len() <= s.len() && s[i..i + sub.len()] == sub[..];
                let r = if last {
                    let hi = start
                        .unwrap_or(s.len())
                        .min(s.len().saturating_sub(sub.len()));
                    if sub.len() > s.len() {
                        -1
                    } else {
                        (0..=hi)
                            .rev()
                            .find(|&i| matches_at(i))
                            .map(|i| i as i64)
                            .unwrap_or(-1)
                    }
                } else {
                    (start.unwrap_or(0)..=s.len())
                        .find(|&i| matches_at(i))
                        .map(|i| i as i64)
                        .unwrap_or(-1)
                };
                Val::Int(r)
            }
            ("indexOf" | "lastIndexOf", 2) => {
                let items = a0.list_items().ok_or(EvalError::NoOverload)?;
                let pos = if name == "indexOf" {
                    items.iter().position(|x| equals(x, &a1))
                } else {
                    items.iter().rposition(|x| equals(x, &a1))
                };
                Val::Int(pos.map(|p| p as i64).unwrap_or(-1))
            }
            ("lowerAscii", 1) => {
                Val::str(st(&a0).ok_or(EvalError::NoOverload)?.to_ascii_lowercase())
            }
            ("upperAscii", 1) => {
                Val::str(st(&a0).ok_or(EvalError::NoOverload)?.to_ascii_uppercase())
            }
            ("trim", 1) => Val::str(a0.as_str().ok_or(EvalError::NoOverload)?.trim()),
            ("replace", 3 | 4) => {
                let (Some(s), Some(from), Some(to)) = (a0.as_str(), a1.as_str(), args[2].as_str())
                else {
                    return no_overload();
                };
                let limit = match args.get(3) {
                    Some(Val::Int(i)) => *i,
                    None => -1,
                    _ => return no_overload(),
                };
                Val::str(if limit < 0 {
                    s.replace(from, to)
                } else {
                    s.replacen(from, to, limit as usize)
                })
            }
            ("split", 2 | 3) => {
                let (Some(s), Some(sep)) = (a0.as_str(), a1.as_str()) else {
                    return no_overload();
                };
                let limit = match args.get(2) {
                    Some(Val::Int(i)) => *i,
                    None => -1,
                    _ => return no_overload(),
                };
                let parts: Vec<Val> = if limit == 0 {
                    Vec::new()
                } else if sep.is_empty() {
                    let chars: Vec<String> = s.chars().map(String::from).collect();
                    if limit > 0 && (limit as usize) < chars.len() {
                        let mut v: Vec<Val> = chars[..limit as usize - 1]
                            .iter()
                            .map(|c| Val::str(c.as_str()))
                            .collect();
                        v.push(Val::str(chars[limit as usize - 1..].concat()));
                        v
                    } else {
                        chars.iter().map(|c| Val::str(c.as_str())).collect()
                    }
                } else if limit < 0 {
                    s.split(sep).map(Val::str).collect()
                } else {
                    s.splitn(limit as usize, sep).map(Val::str).collect()
                };
                list(parts)
            }
            ("substring", 2 | 3) => {
                let Some(s) = a0.as_str() else {
                    return no_overload();
                };
                let chars: Vec<char> = s.chars().collect();
                let start = match a1 {
                    Val::Int(i) => i,
                    _ => return no_overload(),
                };
                let end = match args.get(2) {
                    Some(Val::Int(i)) => *i,
                    None => chars.len() as i64,
                    _ => return no_overload(),
                };
                if start < 0 || start as usize > chars.len() {
                    return Err(EvalError::IndexOutOfRange(start));
                }
                if end < 0 || end as usize > chars.len() {
                    return Err(EvalError::IndexOutOfRange(end));
                }
                if start > end {
                    return err(format!(
                        "invalid substring range. start: {start}, end: {end}"
                    ));
                }
                Val::str(
                    chars[start as usize..end as usize]
                        .iter()
                        .collect::<String>(),
                )
            }
            ("join", 1 | 2) => {
                let items = a0.list_items().ok_or(EvalError::NoOverload)?;
                let sep = if n == 2 {
                    a1.as_str().unwrap_or("")
                } else {
                    ""
                };
                let mut parts = Vec::with_capacity(items.len());
                for i in &items {
                    parts.push(i.as_str().ok_or(EvalError::NoOverload)?.to_string());
                }
                Val::str(parts.join(sep))
            }
            ("strings.quote", 1) => Val::str(quote(a0.as_str().ok_or(EvalError::NoOverload)?)),
            ("format", 2) => {
                let Some(f) = a0.as_str() else {
                    return no_overload();
                };
                let items = a1.list_items().ok_or(EvalError::NoOverload)?;
                Val::str(format_string(f, &items)?)
            }
            ("isSorted", 1) => {
                let items = a0.list_items().ok_or(EvalError::NoOverload)?;
                let mut ok = true;
                for w in items.windows(2) {
                    match compare(&w[0], &w[1]) {
                        Some(std::cmp::Ordering::Greater) => {
                            ok = false;
                            break;
                        }
                        Some(_) => {}
                        None => return no_overload(),
                    }
                }
                Val::Bool(ok)
            }
            ("sum", 1) => {
                let items = a0.list_items().ok_or(EvalError::NoOverload)?;
                let mut acc = match items.first() {
                    Some(Val::Double(_)) => Val::Double(0.0),
                    Some(Val::Uint(_)) => Val::Uint(0),
                    Some(Val::Dur(_)) => Val::Dur(TimeDelta::zero()),
                    _ => Val::Int(0),
                };
                for i in items {
                    acc = add(acc, i)?;
                }
                acc
            }
            ("min" | "max", 1) => {
                let items = a0.list_items().ok_or(EvalError::NoOverload)?;
                let mut best: Option<Val> = None;
                for i in items {
                    best = Some(match best {
                        None => i,
                        Some(b) => {
                            let o = compare(&i, &b).ok_or(EvalError::NoOverload)?;
                            let better = if name == "min" {
                                o == std::cmp::Ordering::Less
                            } else {
                                o == std::cmp::Ordering::Greater
                            };
                            if better {
                                i
                            } else {
                                b
                            }
                        }
                    });
                }
                match best {
                    Some(b) => b,
                    None => return err(format!("{name} called on empty list")),
                }
            }
            ("url", 1) => {
                let s = a0.as_str().ok_or(EvalError::NoOverload)?;
                match Url::parse(s) {
                    Some(u) => Val::Ext(Rc::new(Ext::Url(u))),
                    None => return err(format!("URL parse error during conversion from string: parse \"{s}\": invalid URI for request")),
                }
            }
            ("isURL", 1) => Val::Bool(a0.as_str().and_then(Url::parse).is_some()),
            (
                "getScheme" | "getHost" | "getHostname" | "getPort" | "getEscapedPath" | "getQuery",
                1,
            ) => {
                let Val::Ext(e) = &a0 else {
                    return no_overload();
                };
                let Ext::Url(u) = &**e else {
                    return no_overload();
                };
                match name {
                    "getScheme" => Val::str(u.scheme.as_str()),
                    "getHost" => Val::str(u.host.as_str()),
                    "getHostname" => Val::str(u.hostname()),
                    "getPort" => Val::str(u.port()),
                    "getEscapedPath" => Val::str(u.path.as_str()),
                    _ => {
                        let mut entries: Vec<(Val, Vec<Val>)> = Vec::new();
                        for pair in u.query.split('&').filter(|p| !p.is_empty()) {
                            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
                            let k = Val::str(k);
                            match entries.iter_mut().find(|(x, _)| equals(x, &k)) {
                                Some((_, vs)) => vs.push(Val::str(v)),
                                None => entries.push((k, vec![Val::str(v)])),
                            }
                        }
                        Val::Map(Rc::new(
                            entries.into_iter().map(|(k, v)| (k, list(v))).collect(),
                        ))
                    }
                }
            }
            ("ip", 1) => match &a0 {
                Val::Ext(e) => match &**e {
                    Ext::Cidr(ip, _) => Val::Ext(Rc::new(Ext::Ip(*ip))),
                    _ => return no_overload(),
                },
                v => {
                    let s = v.as_str().ok_or(EvalError::NoOverload)?;
                    match parse_ip(s) {
                        Some(ip) => Val::Ext(Rc::new(Ext::Ip(ip))),
                        None => return err(format!("IP Address \"{s}\" parse error during conversion from string: ParseAddr(\"{s}\"): unable to parse IP")),
                    }
                }
            },
            ("isIP", 1) => Val::Bool(a0.as_str().and_then(parse_ip).is_some()),
            ("ip.isCanonical", 1) => {
                let s = a0.as_str().ok_or(EvalError::NoOverload)?;
                match parse_ip(s) {
                    Some(ip) => Val::Bool(ip.to_string() == s),
                    None => {
                        return err(format!(
                            "IP Address \"{s}\" parse error during conversion from string"
                        ))
                    }
                }
            }
            (
                "family"
                | "isUnspecified"
                | "isLoopback"
                | "isLinkLocalMulticast"
                | "isLinkLocalUnicast"
                | "isGlobalUnicast",
                1,
            ) => {
                let Val::Ext(e) = &a0 else {
                    return no_overload();
                };
                let Ext::Ip(ip) = &**e else {
                    return no_overload();
                };
                ip_pred(name, ip)
            }
            ("cidr", 1) => {
                let s = a0.as_str().ok_or(EvalError::NoOverload)?;
                match parse_cidr(s) {
                    Some((ip, p)) => Val::Ext(Rc::new(Ext::Cidr(ip, p))),
                    None => return err(format!("network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix(\"{s}\"): bad prefix")),
                }
            }
            ("isCIDR", 1) => Val::Bool(a0.as_str().and_then(parse_cidr).is_some()),
            ("containsIP" | "containsCIDR" | "masked" | "prefixLength", _) => {
                let Val::Ext(e) = &a0 else {
                    return no_overload();
                };
                let Ext::Cidr(net, plen) = &**e else {
                    return no_overload();
                };
                match name {
                    "prefixLength" => Val::Int(*plen as i64),
                    "masked" => Val::Ext(Rc::new(Ext::Cidr(mask(net, *plen), *plen))),
                    "containsIP" => {
                        let ip = match &a1 {
                            Val::Ext(e) => match &**e {
                                Ext::Ip(ip) => *ip,
                                _ => return no_overload(),
                            },
                            v => parse_ip(v.as_str().ok_or(EvalError::NoOverload)?).ok_or(
                                EvalError::Invalid(
                                    "IP Address parse error during conversion from string".into(),
                                ),
                            )?,
                        };
                        Val::Bool(same_family(net, &ip) && mask(net, *plen) == mask(&ip, *plen))
                    }
                    _ => {
                        let (ip, p) = match &a1 {
                            Val::Ext(e) => match &**e {
                                Ext::Cidr(ip, p) => (*ip, *p),
                                _ => return no_overload(),
                            },
                            v => parse_cidr(v.as_str().ok_or(EvalError::NoOverload)?).ok_or(
                                EvalError::Invalid(
                                    "network address parse error during conversion from string"
                                        .into(),
                                ),
                            )?,
                        };
                        Val::Bool(
                            same_family(net, &ip)
                                && p >= *plen
                                && mask(net, *plen) == mask(&ip, *plen),
                        )
                    }
                }
            }
            ("quantity", 1) => {
                let s = a0.as_str().ok_or(EvalError::NoOverload)?;
                match Quantity::parse(s) {
                    Some(q) => Val::Ext(Rc::new(Ext::Quantity(q))),
                    None => return err("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
                }
            }
            ("isQuantity", 1) => Val::Bool(a0.as_str().and_then(Quantity::parse).is_some()),
            ("sign" | "isInteger" | "asInteger" | "asApproximateFloat", 1) => {
                let q = quantity_of(&a0)?;
                match name {
                    "sign" => Val::Int(q.sign()),
                    "isInteger" => Val::Bool(q.as_i64().is_some()),
                    "asInteger" => Val::Int(
                        q.as_i64()
                            .ok_or(EvalError::Invalid("cannot convert value to integer".into()))?,
                    ),
                    _ => Val::Double(q.as_f64()),
                }
            }
            ("isGreaterThan" | "isLessThan" | "compareTo", 2) => {
                let o = match (&a0, &a1) {
                    (Val::Ext(x), Val::Ext(y)) => match (&**x, &**y) {
                        (Ext::Quantity(p), Ext::Quantity(q)) => p.cmp_to(q),
                        (Ext::Semver(a, b, c, _), Ext::Semver(d, e, f, _)) => {
                            (a, b, c).cmp(&(d, e, f))
                        }
                        _ => return no_overload(),
                    },
                    _ => return no_overload(),
                };
                use std::cmp::Ordering::*;
                match name {
                    "isGreaterThan" => Val::Bool(o == Greater),
                    "isLessThan" => Val::Bool(o == Less),
                    _ => Val::Int(match o {
                        Less => -1,
                        Equal => 0,
                        Greater => 1,
                    }),
                }
            }
            ("add" | "sub", 2) => {
                let q = quantity_of(&a0)?;
                let other = match &a1 {
                    Val::Int(i) => Quantity {
                        mantissa: *i as i128,
                        exp: 0,
                    },
                    v => quantity_of(v)?.clone(),
                };
                let sign = if name == "add" { 1 } else { -1 };
                Val::Ext(Rc::new(Ext::Quantity(
                    q.add(&other, sign).ok_or(EvalError::Overflow("quantity"))?,
                )))
            }
            ("semver", 1 | 2) | ("isSemver", 1 | 2) => {
                let s = a0.as_str().ok_or(EvalError::NoOverload)?;
                let normalize = matches!(args.get(1), Some(Val::Bool(true)));
                let parsed = parse_semver(s, normalize);
                if name == "isSemver" {
                    Val::Bool(parsed.is_some())
                } else {
                    match parsed {
                        Some((a, b, c, pre)) => Val::Ext(Rc::new(Ext::Semver(a, b, c, pre))),
                        None => return err(format!("could not parse semver: {s}")),
                    }
                }
            }
            ("major" | "minor" | "patch", 1) => match &a0 {
                Val::Ext(e) => match &**e {
                    Ext::Semver(a, b, c, _) => Val::Int(*match name {
                        "major" => a,
                        "minor" => b,
                        _ => c,
                    } as i64),
                    _ => return no_overload(),
                },
                _ => return no_overload(),
            },
            ("format.named", 1) => {
                let s = a0.as_str().unwrap_or("");
                Val::Opt(
                    library::FORMATS
                        .iter()
                        .find(|f| **f == s)
                        .map(|f| Rc::new(Val::Ext(Rc::new(Ext::Format(f))))),
                )
            }
            (f, 0) if f.starts_with("format.") => {
                let short = &f["format.".len()..];
                match library::FORMATS.iter().find(|x| **x == short) {
                    Some(x) => Val::Ext(Rc::new(Ext::Format(x))),
                    None => return no_overload(),
                }
            }
            ("validate", 2) => {
                let (Val::Ext(e), Some(s)) = (&a0, a1.as_str()) else {
                    return no_overload();
                };
                let Ext::Format(f) = &**e else {
                    return no_overload();
                };
                let errs = library::validate_format(f, s);
                if errs.is_empty() {
                    Val::Opt(None)
                } else {
                    Val::Opt(Some(Rc::new(list(
                        errs.into_iter().map(Val::str).collect(),
                    ))))
                }
            }
            ("sets.contains" | "sets.equivalent" | "sets.intersects", 2) => {
                let x = a0.list_items().ok_or(EvalError::NoOverload)?;
                let y = a1.list_items().ok_or(EvalError::NoOverload)?;
                let has = |l: &[Val], v: &Val| l.iter().any(|e| equals(e, v));
                Val::Bool(match name {
                    "sets.contains" => y.iter().all(|v| has(&x, v)),
                    "sets.equivalent" => {
                        y.iter().all(|v| has(&x, v)) && x.iter().all(|v| has(&y, v))
                    }
                    _ => y.iter().any(|v| has(&x, v)),
                })
            }
            ("optional.of", 1) => Val::Opt(Some(Rc::new(a0))),
            ("optional.none", 0) => Val::Opt(None),
            ("optional.ofNonZeroValue", 1) => {
                let zero = match &a0 {
                    Val::Null => true,
                    Val::Bool(b) => !b,
                    Val::Int(i) => *i == 0,
                    Val::Uint(u) => *u == 0,
                    Val::Double(d) => *d == 0.0,
                    Val::Dur(d) => d.is_zero(),
                    v => v.size() == Some(0),
                };
                Val::Opt(if zero { None } else { Some(Rc::new(a0)) })
            }
            ("hasValue", 1) => match &a0 {
                Val::Opt(o) => Val::Bool(o.is_some()),
                _ => return no_overload(),
            },
            ("value", 1) => match &a0 {
                Val::Opt(Some(v)) => (**v).clone(),
                Val::Opt(None) => return err("optional.none() dereference"),
                _ => return no_overload(),
            },
            ("orValue", 2) => match &a0 {
                Val::Opt(Some(v)) => (**v).clone(),
                Val::Opt(None) => a1,
                _ => return no_overload(),
            },
            ("or", 2) => match &a0 {
                Val::Opt(Some(_)) => a0,
                Val::Opt(None) => a1,
                _ => return no_overload(),
            },
            _ => {
                let _ = recv;
                return no_overload();
            }
        })
    }
}

fn list<'a>(items: Vec<Val<'a>>) -> Val<'a> {
    Val::List(Rc::new(ListV {
        items,
        kind: ListKind::Atomic,
    }))
}

fn quantity_of<'b>(v: &'b Val) -> Result<&'b Quantity, EvalError> {
    match v {
        Val::Ext(e) => match &**e {
            Ext::Quantity(q) => Ok(q),
            _ => no_overload(),
        },
        _ => no_overload(),
    }
}

/// Renders a value for error messages.
pub fn display(v: &Val) -> String {
    match v {
        Val::Str(_) | Val::JStr(_) => format!("{:?}", v.as_str().unwrap_or("")),
        Val::Int(i) => i.to_string(),
        Val::Uint(u) => format!("{u}u"),
        Val::Double(d) => library::go_float(*d),
        Val::Bool(b) => b.to_string(),
        Val::Null => "null".into(),
        other => other.type_name().to_string(),
    }
}

/// The key of a map-list element: its key fields' values.
fn map_key<'a>(v: &Val<'a>, keys: &[String]) -> Vec<Option<Val<'a>>> {
    keys.iter()
        .map(|k| escape(k).and_then(|e| v.map_get(&Val::str(e))))
        .collect()
}

fn keys_equal(a: &[Option<Val>], b: &[Option<Val>]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| match (x, y) {
            (None, None) => true,
            (Some(x), Some(y)) => equals(x, y),
            _ => false,
        })
}

/// `+`: numbers, strings, bytes, lists (with set/map-list semantics), time arithmetic.
fn add<'a>(a: Val<'a>, b: Val<'a>) -> Result<Val<'a>, EvalError> {
    if let (Some(x), Some(y)) = (a.as_str(), b.as_str()) {
        let mut s = String::with_capacity(x.len() + y.len());
        s.push_str(x);
        s.push_str(y);
        return Ok(Val::str(s));
    }
    match (a, b) {
        (Val::Int(x), Val::Int(y)) => Ok(Val::Int(
            x.checked_add(y).ok_or(EvalError::Overflow("integer"))?,
        )),
        (Val::Uint(x), Val::Uint(y)) => Ok(Val::Uint(
            x.checked_add(y)
                .ok_or(EvalError::Overflow("unsigned integer"))?,
        )),
        (Val::Double(x), Val::Double(y)) => Ok(Val::Double(x + y)),
        (Val::Bytes(x), Val::Bytes(y)) => Ok(Val::Bytes([&x[..], &y[..]].concat().into())),
        (Val::Ts(t), Val::Dur(d)) | (Val::Dur(d), Val::Ts(t)) => Ok(Val::Ts(
            t.checked_add_signed(d)
                .ok_or(EvalError::Overflow("timestamp"))?,
        )),
        (Val::Dur(x), Val::Dur(y)) => Ok(Val::Dur(
            x.checked_add(&y).ok_or(EvalError::Overflow("duration"))?,
        )),
        (a @ (Val::List(_) | Val::JList(..)), b @ (Val::List(_) | Val::JList(..))) => {
            let kind = a.list_kind();
            let rhs = b.list_items().unwrap_or_default();
            let mut l = match a {
                Val::List(l) => l,
                other => Rc::new(ListV {
                    items: other.list_items().unwrap_or_default(),
                    kind: kind.clone(),
                }),
            };
            let items = &mut Rc::make_mut(&mut l).items;
            match &kind {
                ListKind::Atomic => items.extend(rhs),
                ListKind::Set => {
                    for v in rhs {
                        if !items.iter().any(|x| equals(x, &v)) {
                            items.push(v);
                        }
                    }
                }
                ListKind::Map(keys) => {
                    for v in rhs {
                        let k = map_key(&v, keys);
                        match items.iter().position(|x| keys_equal(&map_key(x, keys), &k)) {
                            Some(i) => items[i] = v,
                            None => items.push(v),
                        }
                    }
                }
            }
            Ok(Val::List(l))
        }
        _ => no_overload(),
    }
}

fn arith<'a>(op: &str, a: Val<'a>, b: Val<'a>) -> Result<Val<'a>, EvalError> {
    let overflow = || EvalError::Overflow("integer");
    Ok(match (op, a, b) {
        ("_-_", Val::Int(x), Val::Int(y)) => Val::Int(x.checked_sub(y).ok_or_else(overflow)?),
        ("_*_", Val::Int(x), Val::Int(y)) => Val::Int(x.checked_mul(y).ok_or_else(overflow)?),
        ("_/_", Val::Int(_), Val::Int(0)) => return Err(EvalError::DivisionByZero),
        ("_%_", Val::Int(_), Val::Int(0)) => return Err(EvalError::ModulusByZero),
        ("_/_", Val::Int(x), Val::Int(y)) => Val::Int(x.checked_div(y).ok_or_else(overflow)?),
        ("_%_", Val::Int(x), Val::Int(y)) => Val::Int(x.checked_rem(y).ok_or_else(overflow)?),
        ("_-_", Val::Uint(x), Val::Uint(y)) => Val::Uint(
            x.checked_sub(y)
                .ok_or(EvalError::Overflow("unsigned integer"))?,
        ),
        ("_*_", Val::Uint(x), Val::Uint(y)) => Val::Uint(
            x.checked_mul(y)
                .ok_or(EvalError::Overflow("unsigned integer"))?,
        ),
        ("_/_", Val::Uint(_), Val::Uint(0)) => return Err(EvalError::DivisionByZero),
        ("_%_", Val::Uint(_), Val::Uint(0)) => return Err(EvalError::ModulusByZero),
        ("_/_", Val::Uint(x), Val::Uint(y)) => Val::Uint(x / y),
        ("_%_", Val::Uint(x), Val::Uint(y)) => Val::Uint(x % y),
        ("_-_", Val::Double(x), Val::Double(y)) => Val::Double(x - y),
        ("_*_", Val::Double(x), Val::Double(y)) => Val::Double(x * y),
        ("_/_", Val::Double(x), Val::Double(y)) => Val::Double(x / y),
        ("_-_", Val::Ts(x), Val::Ts(y)) => Val::Dur(x.signed_duration_since(y)),
        ("_-_", Val::Ts(x), Val::Dur(y)) => Val::Ts(
            x.checked_sub_signed(y)
                .ok_or(EvalError::Overflow("timestamp"))?,
        ),
        ("_-_", Val::Dur(x), Val::Dur(y)) => {
            Val::Dur(x.checked_sub(&y).ok_or(EvalError::Overflow("duration"))?)
        }
        _ => return no_overload(),
    })
}

fn index<'a>(c: &Val<'a>, i: &Val<'a>) -> Result<Val<'a>, EvalError> {
    match c {
        Val::List(_) | Val::JList(..) => {
            let idx = match i {
                Val::Int(x) => *x,
                Val::Uint(x) => *x as i64,
                Val::Double(d) if d.fract() == 0.0 => *d as i64,
                _ => return no_overload(),
            };
            let len = c.size().unwrap_or(0) as i64;
            if idx < 0 || idx >= len {
                return Err(EvalError::IndexOutOfBounds(idx));
            }
            c.list_get(idx as usize)
                .ok_or(EvalError::IndexOutOfBounds(idx))
        }
        Val::Map(_) | Val::JMap(..) => match c.map_get(i) {
            Some(v) => Ok(v),
            None => Err(EvalError::NoSuchKey(
                i.as_str().map(str::to_string).unwrap_or_else(|| display(i)),
            )),
        },
        Val::Opt(None) => Ok(Val::Opt(None)),
        Val::Opt(Some(inner)) => match index(inner, i) {
            Ok(v) => Ok(Val::Opt(Some(Rc::new(v)))),
            Err(_) => Ok(Val::Opt(None)),
        },
        _ => no_overload(),
    }
}

fn time_part<'a>(name: &str, v: &Val<'a>, tz: Option<&Val<'a>>) -> Result<Val<'a>, EvalError> {
    match v {
        Val::Dur(d) => Ok(Val::Int(match name {
            "getHours" => d.num_hours(),
            "getMinutes" => d.num_minutes(),
            "getSeconds" => d.num_seconds(),
            "getMilliseconds" => d.num_milliseconds(),
            _ => return no_overload(),
        })),
        Val::Ts(t) => {
            let offset = match tz.map(|z| z.as_str()) {
                None => FixedOffset::east_opt(0),
                Some(Some("UTC" | "Z" | "")) => FixedOffset::east_opt(0),
                Some(Some(z)) => parse_offset(z),
                Some(None) => return no_overload(),
            }
            .ok_or(EvalError::Invalid("unknown time zone".into()))?;
            let t = t.with_timezone(&offset);
            Ok(Val::Int(match name {
                "getFullYear" => t.year() as i64,
                "getMonth" => t.month0() as i64,
                "getDayOfYear" => t.ordinal0() as i64,
                "getDate" => t.day() as i64,
                "getDayOfMonth" => t.day0() as i64,
                "getDayOfWeek" => t.weekday().num_days_from_sunday() as i64,
                "getHours" => t.hour() as i64,
                "getMinutes" => t.minute() as i64,
                "getSeconds" => t.second() as i64,
                _ => (t.nanosecond() / 1_000_000) as i64,
            }))
        }
        _ => no_overload(),
    }
}

fn parse_offset(z: &str) -> Option<FixedOffset> {
    let (sign, rest) = match z.as_bytes().first()? {
        b'+' => (1, &z[1..]),
        b'-' => (-1, &z[1..]),
        _ => return None,
    };
    let (h, m) = rest.split_once(':').unwrap_or((rest, "0"));
    let secs = h.parse::<i32>().ok()? * 3600 + m.parse::<i32>().ok()? * 60;
    FixedOffset::east_opt(sign * secs)
}

fn parse_ip(s: &str) -> Option<std::net::IpAddr> {
    // The Kubernetes library rejects zones and IPv4-mapped IPv6 addresses.
    if s.contains('%') {
        return None;
    }
    let ip: std::net::IpAddr = s.parse().ok()?;
    if let std::net::IpAddr::V6(v6) = ip {
        if v6.to_ipv4_mapped().is_some() {
            return None;
        }
    }
    Some(ip)
}

fn parse_cidr(s: &str) -> Option<(std::net::IpAddr, u8)> {
    let (ip, p) = s.split_once('/')?;
    let ip = parse_ip(ip)?;
    if p.is_empty() || (p.len() > 1 && p.starts_with('0')) {
        return None;
    }
    let p: u8 = p.parse().ok()?;
    let max = if ip.is_ipv4() { 32 } else { 128 };
    (p <= max).then_some((ip, p))
}

fn same_family(a: &std::net::IpAddr, b: &std::net::IpAddr) -> bool {
    a.is_ipv4() == b.is_ipv4()
}

fn mask(ip: &std::net::IpAddr, p: u8) -> std::net::IpAddr {
    match ip {
        std::net::IpAddr::V4(v4) => {
            let bits = u32::from(*v4);
            let m = if p == 0 {
                0
            } else {
                u32::MAX << (32 - p as u32)
            };
            std::net::IpAddr::V4((bits & m).into())
        }
        std::net::IpAddr::V6(v6) => {
            let bits = u128::from(*v6);
            let m = if p == 0 {
                0
            } else {
                u128::MAX << (128 - p as u32)
            };
            std::net::IpAddr::V6((bits & m).into())
        }
    }
}

fn ip_pred<'a>(name: &str, ip: &std::net::IpAddr) -> Val<'a> {
    use std::net::IpAddr;
    match name {
        "family" => Val::Int(if ip.is_ipv4() { 4 } else { 6 }),
        "isUnspecified" => Val::Bool(ip.is_unspecified()),
        "isLoopback" => Val::Bool(ip.is_loopback()),
        "isLinkLocalMulticast" => Val::Bool(match ip {
            IpAddr::V4(v) => v.octets()[0] == 224 && v.octets()[1] == 0 && v.octets()[2] == 0,
            IpAddr::V6(v) => v.segments()[0] & 0xff0f == 0xff02,
        }),
        "isLinkLocalUnicast" => Val::Bool(match ip {
            IpAddr::V4(v) => v.is_link_local(),
            IpAddr::V6(v) => v.segments()[0] & 0xffc0 == 0xfe80,
        }),
        _ => Val::Bool(match ip {
            IpAddr::V4(v) => {
                !(v.is_unspecified()
                    || v.is_loopback()
                    || v.is_link_local()
                    || v.is_multicast()
                    || v.is_broadcast())
            }
            IpAddr::V6(v) => {
                !(v.is_unspecified()
                    || v.is_loopback()
                    || v.segments()[0] & 0xffc0 == 0xfe80
                    || v.is_multicast())
            }
        }),
    }
}

fn parse_semver(s: &str, normalize: bool) -> Option<(u64, u64, u64, String)> {
    let mut s = s;
    if normalize {
        s = s.strip_prefix('v').unwrap_or(s);
    }
    let (core, pre) = match s.split_once(['-', '+']) {
        Some((c, p)) => (c, p.to_string()),
        None => (s, String::new()),
    };
    let parts: Vec<&str> = core.split('.').collect();
    let num = |p: &str| -> Option<u64> {
        if p.is_empty() || (!normalize && p.len() > 1 && p.starts_with('0')) {
            return None;
        }
        p.parse().ok()
    };
    match (parts.len(), normalize) {
        (3, _) => Some((num(parts[0])?, num(parts[1])?, num(parts[2])?, pre)),
        (2, true) => Some((num(parts[0])?, num(parts[1])?, 0, pre)),
        (1, true) => Some((num(parts[0])?, 0, 0, pre)),
        _ => None,
    }
}

fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\u{b}' => out.push_str("\\v"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn format_arg(v: &Val, verb: char, prec: Option<usize>) -> Result<String, EvalError> {
    Ok(match verb {
        's' => match v {
            Val::List(_) | Val::JList(..) => {
                let items = v.list_items().unwrap_or_default();
                let parts: Result<Vec<String>, EvalError> =
                    items.iter().map(|x| format_arg(x, 's', None)).collect();
                format!("[{}]", parts?.join(", "))
            }
            Val::Double(d) => library::go_float(*d),
            Val::Ts(t) => library::timestamp_string(*t),
            Val::Dur(d) => library::duration_string(*d),
            Val::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
            Val::Null => "null".into(),
            Val::Str(_) | Val::JStr(_) => v.as_str().unwrap_or("").to_string(),
            Val::Int(i) => i.to_string(),
            Val::Uint(u) => u.to_string(),
            Val::Bool(b) => b.to_string(),
            Val::Type(t) => t.to_string(),
            _ => return err("string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps"),
        },
        'd' => match v {
            Val::Int(i) => i.to_string(),
            Val::Uint(u) => u.to_string(),
            _ => return err("decimal clause can only be used on integers"),
        },
        'f' | 'e' => {
            let d = match v {
                Val::Double(d) => *d,
                Val::Int(i) => *i as f64,
                Val::Uint(u) => *u as f64,
                _ => return err("fixed-point clause can only be used on doubles"),
            };
            let p = prec.unwrap_or(6);
            if verb == 'f' {
                format!("{d:.p$}")
            } else {
                let s = format!("{d:.p$e}");
                let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
                let e: i32 = e.parse().unwrap_or(0);
                format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
            }
        }
        'x' | 'X' | 'o' | 'b' => {
            let s = match (v, verb) {
                (Val::Int(i), 'x') => format!("{i:x}"),
                (Val::Int(i), 'X') => format!("{i:X}"),
                (Val::Int(i), 'o') => format!("{i:o}"),
                (Val::Int(i), _) => format!("{i:b}"),
                (Val::Uint(i), 'x') => format!("{i:x}"),
                (Val::Uint(i), 'X') => format!("{i:X}"),
                (Val::Uint(i), 'o') => format!("{i:o}"),
                (Val::Uint(i), _) => format!("{i:b}"),
                (v, 'x' | 'X') if v.as_str().is_some() => {
                    let h: String = v.as_str().unwrap_or("").bytes().map(|b| format!("{b:02x}")).collect();
                    if verb == 'X' {
                        h.to_uppercase()
                    } else {
                        h
                    }
                }
                _ => return err("only integers, byte buffers, and strings can be formatted as hex"),
            };
            s
        }
        c => return err(format!("could not parse formatting clause: unrecognized formatting clause \"{c}\"")),
    })
}

fn format_string(f: &str, args: &[Val]) -> Result<String, EvalError> {
    let mut out = String::new();
    let mut chars = f.chars().peekable();
    let mut next = 0;
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        if chars.peek() == Some(&'%') {
            chars.next();
            out.push('%');
            continue;
        }
        let mut prec = None;
        if chars.peek() == Some(&'.') {
            chars.next();
            let mut digits = String::new();
            while let Some(d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                digits.push(*d);
                chars.next();
            }
            prec = digits.parse().ok();
        }
        let Some(verb) = chars.next() else {
            return err("unexpected end of format string");
        };
        let Some(arg) = args.get(next) else {
            return err(format!("index {next} out of range"));
        };
        next += 1;
        out.push_str(&format_arg(arg, verb, prec)?);
    }
    Ok(out)
}
