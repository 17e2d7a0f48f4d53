//! The type checker and static cost estimator: one walk over the parsed AST that gives every
//! expression its type (against the schema's declared types), its worst-case size and its
//! cost range, and reports cel-go's compile errors (`undefined field 'x'`, `found no matching
//! overload for '_==_' applied to '(int, bool)'`, `undeclared reference to 'x'`...).
//!
//! The cost model follows cel-go's `checker/cost.go` and the Kubernetes `library.CostEstimator`:
//! identifiers and field selections cost 1, literals 0, list/map literals 10/30, calls their
//! arguments plus what the function's own estimate says (in [`super::library`]: 1, or the
//! traversal of strings and lists, 0.1 a character, regex 0.25 a pattern character),
//! comprehensions their range size times the loop body.

use cel::common::ast::{
    CallExpr, ComprehensionExpr, EntryExpr, Expr, IdedExpr, ListExpr, LiteralValue, MapExpr,
    SelectExpr,
};

use super::cost::{Cost, Size, UNKNOWN};
use super::decl::Kind;
use super::error::CheckError;
use super::library::{self, Estimate, Overload};
use super::types::{assignable, substitute, type_ident, Ty};

/// What the checker knows about one expression.
#[derive(Debug, Clone)]
pub struct Info {
    /// Static type.
    pub ty: Ty,
    /// Cost range of evaluating it.
    pub cost: Cost,
    /// Size range of its value, when known.
    pub size: Option<Size>,
    /// Size range of its elements (list literals), when known.
    pub elem_size: Option<Size>,
}

impl Info {
    fn new(ty: Ty, cost: Cost) -> Info {
        Info {
            ty,
            cost,
            size: None,
            elem_size: None,
        }
    }

    /// The size range of the value: computed, else the schema's bound, else unknown.
    pub fn size(&self) -> Size {
        if let Some(s) = self.size {
            return s;
        }
        match &self.ty {
            Ty::Schema(d) => Size {
                min: 0,
                max: d.max_elements,
            },
            _ => UNKNOWN,
        }
    }
}

/// A variable in scope.
#[derive(Debug, Clone)]
struct Var {
    name: String,
    ty: Ty,
    size: Option<Size>,
}

/// The checker's state for one expression.
pub struct Checker {
    vars: Vec<Var>,
    /// `(expression id, error)` of every error, in the order found.
    pub errors: Vec<(u64, CheckError)>,
    /// Whether the expression references `oldSelf`.
    pub uses_old_self: bool,
    /// String literals used as regular expressions (compiled once with the rule).
    pub regexes: Vec<String>,
}

/// A qualified name spelled by identifiers and selections (`google.protobuf.Timestamp`).
pub fn qualified_name(e: &Expr) -> Option<String> {
    match e {
        Expr::Ident(n) => Some(n.clone()),
        Expr::Select(s) if !s.test => {
            qualified_name(&s.operand.expr).map(|q| format!("{q}.{}", s.field))
        }
        _ => None,
    }
}

impl Checker {
    /// A checker with `self` (and `oldSelf`, optional when `optional_old_self`) declared.
    pub fn new(self_ty: Ty, optional_old_self: bool) -> Checker {
        let old = if optional_old_self {
            Ty::Opt(Box::new(self_ty.clone()))
        } else {
            self_ty.clone()
        };
        Checker {
            vars: vec![
                Var {
                    name: "self".into(),
                    ty: self_ty,
                    size: None,
                },
                Var {
                    name: "oldSelf".into(),
                    ty: old,
                    size: None,
                },
            ],
            errors: Vec::new(),
            uses_old_self: false,
            regexes: Vec::new(),
        }
    }

    /// A checker with these variables declared, each of type `dyn` (unstructured values, as
    /// admission expressions see `object`, `oldObject` and `request`).
    pub fn with_dyn_vars(names: &[&str]) -> Checker {
        Checker {
            vars: names
                .iter()
                .map(|n| Var {
                    name: (*n).to_string(),
                    ty: Ty::Dyn,
                    size: None,
                })
                .collect(),
            errors: Vec::new(),
            uses_old_self: false,
            regexes: Vec::new(),
        }
    }

    /// Declares (or redeclares) a variable of a known type.
    pub fn declare(&mut self, name: &str, ty: Ty) {
        self.vars.retain(|v| v.name != name);
        self.vars.push(Var {
            name: name.to_string(),
            ty,
            size: None,
        });
    }

    fn err(&mut self, id: u64, e: CheckError) -> Info {
        self.errors.push((id, e));
        Info::new(Ty::Error, Cost::default())
    }

    fn lookup(&self, name: &str) -> Option<&Var> {
        self.vars.iter().rev().find(|v| v.name == name)
    }

    /// Checks one expression.
    pub fn check(&mut self, e: &IdedExpr) -> Info {
        match &e.expr {
            Expr::Unspecified => Info::new(Ty::Error, Cost::default()),
            Expr::Literal(l) => literal(l),
            Expr::Ident(name) => self.check_ident(e.id, name),
            Expr::Select(sel) => self.check_select(e, sel),
            Expr::List(l) => self.check_list(l),
            Expr::Map(m) => self.check_map(m),
            Expr::Struct(s) if is_admission_struct(&s.type_name) => self.check_struct(s),
            Expr::Struct(s) => self.err(e.id, CheckError::UndeclaredReference(s.type_name.clone())),
            Expr::Comprehension(c) => self.check_comprehension(c),
            Expr::Call(call) => self.check_call(e, call),
        }
    }

    /// `Object{...}` / `JSONPatch{...}`: an object literal of mutating admission policies,
    /// `dyn` (its fields are not checked against a schema).
    fn check_struct(&mut self, s: &cel::common::ast::StructExpr) -> Info {
        let mut cost = Cost::exact(40);
        for entry in &s.entries {
            if let EntryExpr::StructField(f) = &entry.expr {
                cost = cost.add(self.check(&f.value).cost);
            }
        }
        Info::new(Ty::Dyn, cost)
    }

    /// A variable, or a type named by an identifier (`int`).
    fn check_ident(&mut self, id: u64, name: &str) -> Info {
        if let Some(v) = self.lookup(name) {
            let (ty, size) = (v.ty.clone(), v.size);
            if name == "oldSelf" {
                self.uses_old_self = true;
            }
            let mut i = Info::new(ty, Cost::one());
            i.size = size;
            return i;
        }
        if let Some(t) = type_ident(name) {
            return Info::new(Ty::Type(Box::new(t)), Cost::one());
        }
        self.err(id, CheckError::UndeclaredReference(name.to_string()))
    }

    /// `x.f`, `has(x.f)`, or a qualified type name (`google.protobuf.Timestamp`).
    fn check_select(&mut self, e: &IdedExpr, sel: &SelectExpr) -> Info {
        if !sel.test {
            if let Some(q) = qualified_name(&e.expr) {
                let root = q.split('.').next().unwrap_or("");
                if self.lookup(root).is_none() {
                    if let Some(t) = type_ident(&q) {
                        return Info::new(Ty::Type(Box::new(t)), Cost::one());
                    }
                }
            }
        }
        let op = self.check(&sel.operand);
        let cost = op.cost.add(if sel.test {
            Cost::default()
        } else {
            Cost::one()
        });
        let fty = self.field_type(e.id, &op.ty, &sel.field);
        let ty = if sel.test { Ty::Bool } else { fty };
        Info::new(ty, cost)
    }

    /// A list literal: its elements must have one type; its size is known.
    fn check_list(&mut self, l: &ListExpr) -> Info {
        let mut cost = Cost::exact(10);
        let mut elem: Option<Ty> = None;
        let mut esize: Option<Size> = None;
        for (i, el) in l.elements.iter().enumerate() {
            let info = self.check(el);
            cost = cost.add(info.cost);
            let mut t = info.ty.clone();
            if l.optional_indices.contains(&i) {
                t = unwrap_optional(t);
            }
            let s = info.size();
            esize = Some(match esize {
                None => s,
                Some(p) => Size {
                    min: p.min.min(s.min),
                    max: p.max.max(s.max),
                },
            });
            elem = Some(self.join(el.id, elem, t));
        }
        let mut info = Info::new(Ty::List(Box::new(elem.unwrap_or(Ty::Dyn))), cost);
        info.size = Some(Size::exact(l.elements.len() as u64));
        info.elem_size = esize;
        info
    }

    /// A map literal: its keys (of a key type) and values must each have one type.
    fn check_map(&mut self, m: &MapExpr) -> Info {
        let mut cost = Cost::exact(30);
        let (mut kt, mut vt) = (None, None);
        for entry in &m.entries {
            let EntryExpr::MapEntry(me) = &entry.expr else {
                continue;
            };
            let k = self.check(&me.key);
            let v = self.check(&me.value);
            cost = cost.add(k.cost).add(v.cost);
            match k.ty.norm() {
                Ty::Int | Ty::Uint | Ty::Bool | Ty::String | Ty::Dyn | Ty::Error => {}
                other => {
                    self.err(me.key.id, CheckError::UnsupportedMapKey(other));
                }
            }
            let v_ty = if me.optional {
                unwrap_optional(v.ty)
            } else {
                v.ty
            };
            kt = Some(self.join(me.key.id, kt, k.ty));
            vt = Some(self.join(me.value.id, vt, v_ty));
        }
        let key = Box::new(kt.unwrap_or(Ty::Dyn));
        let value = Box::new(vt.unwrap_or(Ty::Dyn));
        let mut info = Info::new(Ty::Map(key, value), cost);
        info.size = Some(Size::exact(m.entries.len() as u64));
        info
    }

    /// A comprehension: the loop body costs its range's size times; the result of a loop
    /// building a list or map is as large as the range.
    fn check_comprehension(&mut self, c: &ComprehensionExpr) -> Info {
        let range = self.check(&c.iter_range);
        let (v1, v2) = self.iteration_types(c, &range);
        let init = self.check(&c.accu_init);
        let depth = self.vars.len();
        self.push_var(&c.accu_var, init.ty.clone(), init.size);
        let elem_size = if matches!(range.ty.norm(), Ty::List(_)) && c.iter_var2.is_none() {
            range.elem_size
        } else {
            None
        };
        self.push_var(&c.iter_var, v1, elem_size);
        if let Some(v2n) = &c.iter_var2 {
            self.push_var(v2n, v2, None);
        }
        let cond = self.check(&c.loop_cond);
        let step = self.check(&c.loop_step);
        self.vars.truncate(depth);
        // An empty-list accumulator takes the type the loop step builds.
        let accu_ty = match (&init.ty, step.ty.norm()) {
            (Ty::List(e), Ty::List(s)) if e.is_dyn() && !s.is_dyn() => Ty::List(s),
            (Ty::Map(k, v), Ty::Map(k2, v2)) if k.is_dyn() && v.is_dyn() => Ty::Map(k2, v2),
            _ => init.ty.clone(),
        };
        self.push_var(&c.accu_var, accu_ty, Some(range.size()));
        let result = self.check(&c.result);
        self.vars.truncate(depth);
        let n = range.size();
        let loop_cost = n.as_cost().mul(cond.cost.add(step.cost));
        let mut info = Info::new(
            result.ty.clone(),
            range.cost.add(init.cost).add(result.cost).add(loop_cost),
        );
        if matches!(result.ty.norm(), Ty::List(_) | Ty::Map(_, _)) {
            info.size = Some(n);
        } else {
            info.size = result.size;
        }
        info
    }

    fn push_var(&mut self, name: &str, ty: Ty, size: Option<Size>) {
        self.vars.push(Var {
            name: name.to_string(),
            ty,
            size,
        });
    }

    /// The types of the iteration variables of a comprehension over `range`: the element (or
    /// index and element) of a list, the key (or key and value) of a map.
    fn iteration_types(&mut self, c: &ComprehensionExpr, range: &Info) -> (Ty, Ty) {
        match range.ty.norm() {
            Ty::List(el) if c.iter_var2.is_some() => (Ty::Int, *el),
            Ty::List(el) => (*el, Ty::Dyn),
            Ty::Map(k, v) => (*k, *v),
            Ty::Dyn | Ty::Error => (Ty::Dyn, Ty::Dyn),
            other => {
                self.err(c.iter_range.id, CheckError::NotARange(other));
                (Ty::Error, Ty::Error)
            }
        }
    }

    /// Joins the element types of an aggregate literal (homogeneous literals are required).
    fn join(&mut self, id: u64, prev: Option<Ty>, t: Ty) -> Ty {
        match prev {
            None => t,
            Some(p) => {
                if p.is_dyn() {
                    return t;
                }
                if t.is_dyn() || assignable(&p, &t, &mut [None, None]) {
                    return p;
                }
                self.err(
                    id,
                    CheckError::TypeMismatch {
                        expected: p.clone(),
                        found: t,
                    },
                );
                p
            }
        }
    }

    fn field_type(&mut self, id: u64, t: &Ty, field: &str) -> Ty {
        const AUTHORIZER: &str = "kubernetes.authorization.Authorizer";
        const RESOURCE_CHECK: &str = "kubernetes.authorization.ResourceCheck";
        match t.norm() {
            Ty::Schema(d) => match &d.kind {
                Kind::Object(fields) => match super::decl::object_field(fields, field) {
                    Some(f) => Ty::Schema(f.decl.clone()),
                    None => self.err(id, CheckError::UndefinedField(field.into())).ty,
                },
                _ => Ty::Dyn,
            },
            Ty::Map(_, v) => *v,
            Ty::Dyn | Ty::Error => Ty::Dyn,
            Ty::Opt(inner) => Ty::Opt(Box::new(self.field_type(id, &inner, field))),
            // `authorizer.requestResource`: declared by the apiserver as a variable of its own.
            Ty::Opaque(AUTHORIZER) if field == "requestResource" => Ty::Opaque(RESOURCE_CHECK),
            other => {
                self.err(id, CheckError::NoFieldSelection(other));
                Ty::Error
            }
        }
    }

    fn check_call(&mut self, e: &IdedExpr, call: &CallExpr) -> Info {
        let name = call.func_name.as_str();
        // `strings.quote(x)`, `sets.contains(a, b)`, `optional.of(x)`: a namespaced global.
        if let Some(t) = &call.target {
            if let Some(q) = qualified_name(&t.expr) {
                let full = format!("{q}.{name}");
                let root = q.split('.').next().unwrap_or("");
                if self.lookup(root).is_none() && library::lookup(&full).is_some() {
                    let args: Vec<Info> = call.args.iter().map(|a| self.check(a)).collect();
                    return self.resolve(e, &full, None, args, &call.args);
                }
            }
        }
        match (name, call.args.as_slice()) {
            ("_&&_" | "_||_", [l, r]) => return self.check_logic(e.id, name, l, r),
            ("_?._", [x, f]) => return self.check_optional_select(e.id, x, f),
            ("_?_:_", [c, t, f]) => return self.check_conditional(e.id, c, t, f),
            _ => {}
        }
        let mut args: Vec<Info> = Vec::with_capacity(call.args.len() + 1);
        if let Some(t) = &call.target {
            args.push(self.check(t));
        }
        for a in &call.args {
            args.push(self.check(a));
        }
        let arg_exprs: Vec<&IdedExpr> = call
            .target
            .iter()
            .map(|b| &**b)
            .chain(call.args.iter())
            .collect();
        if let Some(error) = self.check_regex_literal(name, &arg_exprs) {
            return error;
        }
        let recv = call.target.is_some();
        self.resolve_exprs(e, name, recv, args, &arg_exprs)
    }

    /// `&&` and `||`: boolean operands; the right one may not run.
    fn check_logic(&mut self, id: u64, name: &str, l: &IdedExpr, r: &IdedExpr) -> Info {
        let l = self.check(l);
        let r = self.check(r);
        let boolean = |a: &Info| assignable(&Ty::Bool, &a.ty, &mut [None, None]);
        if !boolean(&l) || !boolean(&r) {
            let args = format!("({}, {})", l.ty, r.ty);
            let name = name.into();
            return self.err(id, CheckError::NoMatchingOverload { name, args });
        }
        let cost = Cost {
            min: l.cost.min,
            max: l.cost.add(r.cost).max,
        };
        Info::new(Ty::Bool, cost)
    }

    /// `x.?f`: an optional of the field's type.
    fn check_optional_select(&mut self, id: u64, x: &IdedExpr, f: &IdedExpr) -> Info {
        let op = self.check(x);
        let Expr::Literal(LiteralValue::String(f)) = &f.expr else {
            return self.err(id, CheckError::UnsupportedOptionalSelection);
        };
        let inner = unwrap_optional_or_self(op.ty.norm());
        let fty = unwrap_optional_or_self(self.field_type(id, &inner, f.inner()));
        Info::new(Ty::Opt(Box::new(fty)), op.cost.add(Cost::one()))
    }

    /// `c ? t : f`: one of the branches runs; they must have one type.
    fn check_conditional(&mut self, id: u64, c: &IdedExpr, t: &IdedExpr, f: &IdedExpr) -> Info {
        let c = self.check(c);
        let t = self.check(t);
        let f = self.check(f);
        let ty = if !assignable(&Ty::Bool, &c.ty, &mut [None, None]) {
            None
        } else if t.ty.is_dyn() {
            Some(f.ty.clone())
        } else if f.ty.is_dyn() || assignable(&t.ty, &f.ty, &mut [None, None]) {
            Some(t.ty.clone())
        } else {
            None
        };
        let Some(ty) = ty else {
            let args = format!("({}, {}, {})", c.ty, t.ty, f.ty);
            let name = "_?_:_".into();
            return self.err(id, CheckError::NoMatchingOverload { name, args });
        };
        let cost = Cost {
            min: c.cost.min.saturating_add(t.cost.min.min(f.cost.min)),
            max: c.cost.max.saturating_add(t.cost.max.max(f.cost.max)),
        };
        let mut info = Info::new(ty, cost);
        let (ts, fs) = (t.size(), f.size());
        info.size = Some(Size {
            min: ts.min.min(fs.min),
            max: ts.max.max(fs.max),
        });
        info
    }

    /// A literal regular expression of a regex function: compiled now (an error if invalid),
    /// and kept to be compiled once with the rule.
    fn check_regex_literal(&mut self, name: &str, arg_exprs: &[&IdedExpr]) -> Option<Info> {
        let i = library::lookup(name).and_then(library::Entry::regex_arg)?;
        let arg = arg_exprs.get(i)?;
        let Expr::Literal(LiteralValue::String(s)) = &arg.expr else {
            return None;
        };
        let p = s.inner().to_string();
        if let Err(e) = library::compile_regex(&p) {
            return Some(self.err(arg.id, e.into()));
        }
        self.regexes.push(p);
        None
    }

    fn resolve(
        &mut self,
        e: &IdedExpr,
        name: &str,
        _recv: Option<()>,
        args: Vec<Info>,
        arg_exprs: &[IdedExpr],
    ) -> Info {
        let refs: Vec<&IdedExpr> = arg_exprs.iter().collect();
        self.resolve_exprs(e, name, false, args, &refs)
    }

    fn resolve_exprs(
        &mut self,
        e: &IdedExpr,
        name: &str,
        recv: bool,
        args: Vec<Info>,
        arg_exprs: &[&IdedExpr],
    ) -> Info {
        let Some(entry) = library::lookup(name) else {
            return self.err(e.id, CheckError::UndeclaredReference(name.into()));
        };
        let mut result: Option<Ty> = None;
        let mut matched: Option<&Overload> = None;
        let any_error = args.iter().any(|a| matches!(a.ty, Ty::Error));
        for o in entry.overloads.iter().filter(|o| o.receiver == recv) {
            if o.params.len() != args.len() {
                continue;
            }
            let mut b = [None, None];
            if o.params
                .iter()
                .zip(args.iter())
                .all(|(p, a)| assignable(p, &a.ty, &mut b))
            {
                let r = substitute(&o.result, &b);
                matched = Some(o);
                result = Some(match result {
                    None => r,
                    Some(prev) => {
                        if format!("{prev}") == format!("{r}") {
                            prev
                        } else {
                            Ty::Dyn
                        }
                    }
                });
            }
        }
        let (Some(ty), Some(overload)) = (result, matched) else {
            if any_error {
                return Info::new(Ty::Error, Cost::default());
            }
            return self.err(e.id, no_matching_overload(name, recv, &args));
        };
        let sum = args.iter().fold(Cost::default(), |c, a| c.add(a.cost));
        let estimate = Estimate {
            args: &args,
            exprs: arg_exprs,
            overload,
        };
        let (cost, size) = (overload.function.estimate)(&estimate);
        let mut info = Info::new(ty, sum.add(cost));
        info.size = size;
        info
    }
}

/// The error of a call no overload accepts, with the argument types as cel-go lists them.
fn no_matching_overload(name: &str, recv: bool, args: &[Info]) -> CheckError {
    let types = |args: &[Info]| {
        args.iter()
            .map(|a| a.ty.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    };
    let args = match args.split_first() {
        Some((target, rest)) if recv => format!("{}.({})", target.ty, types(rest)),
        _ => format!("({})", types(args)),
    };
    CheckError::NoMatchingOverload {
        name: name.into(),
        args,
    }
}

/// The type inside an optional (`dyn` for anything else), as `?x` elements unwrap.
fn unwrap_optional(t: Ty) -> Ty {
    match t.norm() {
        Ty::Opt(x) => *x,
        _ => Ty::Dyn,
    }
}

/// The type inside an optional, or the type itself.
fn unwrap_optional_or_self(t: Ty) -> Ty {
    match t {
        Ty::Opt(x) => *x,
        t => t,
    }
}

fn literal(l: &LiteralValue) -> Info {
    let (ty, size) = match l {
        LiteralValue::Boolean(_) => (Ty::Bool, None),
        LiteralValue::Bytes(b) => (Ty::Bytes, Some(Size::exact(b.inner().len() as u64))),
        LiteralValue::Double(_) => (Ty::Double, None),
        LiteralValue::Int(_) => (Ty::Int, None),
        LiteralValue::Null => (Ty::Null, None),
        LiteralValue::String(s) => (
            Ty::String,
            Some(Size::exact(s.inner().chars().count() as u64)),
        ),
        LiteralValue::UInt(_) => (Ty::Uint, None),
    };
    let mut i = Info::new(ty, Cost::default());
    i.size = size;
    i
}

/// The object types mutating admission policies construct: `Object` (and its nested
/// `Object.spec...` types) for apply configurations, `JSONPatch` for patch operations.
pub fn is_admission_struct(type_name: &str) -> bool {
    type_name == "Object" || type_name.starts_with("Object.") || type_name == "JSONPatch"
}
