//! The type checker and static cost estimator: one walk over the parsed AST that gives every
//! expression its type (against the schema's declared types), its worst-case size and its
//! cost range, and reports cel-go's compile errors (`undefined field 'x'`, `found no matching
//! overload for '_==_' applied to '(int, bool)'`, `undeclared reference to 'x'`...).
//!
//! The cost model follows cel-go's `checker/cost.go` and the Kubernetes `library.CostEstimator`:
//! identifiers and field selections cost 1, literals 0, list/map literals 10/30, calls 1 plus
//! the traversal cost of string/list operations (0.1 a character, regex 0.25 a pattern
//! character), comprehensions their range size times the loop body.

use cel::common::ast::{EntryExpr, Expr, IdedExpr, LiteralValue};

use super::decl::Kind;
use super::error::CheckError;
use super::types::{assignable, substitute, type_ident, Ty, OVERLOADS};

/// A range of sizes (string length, list/map elements).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Size {
    /// Smallest.
    pub min: u64,
    /// Largest.
    pub max: u64,
}

/// An unknown size: anything up to `u64::MAX`.
pub const UNKNOWN: Size = Size {
    min: 0,
    max: u64::MAX,
};

impl Size {
    fn exact(n: u64) -> Size {
        Size { min: n, max: n }
    }
    fn add(self, o: Size) -> Size {
        Size {
            min: self.min.saturating_add(o.min),
            max: self.max.saturating_add(o.max),
        }
    }
    fn mul(self, o: Size) -> Size {
        Size {
            min: self.min.saturating_mul(o.min),
            max: self.max.saturating_mul(o.max),
        }
    }
    fn factor(self, f: f64) -> Cost {
        Cost {
            min: mul_f(self.min, f),
            max: mul_f(self.max, f),
        }
    }
}

/// `ceil(n * f)` saturating at `u64::MAX`, as cel-go's `MultiplyByCostFactor`.
pub fn mul_f(n: u64, f: f64) -> u64 {
    let r = (n as f64 * f).ceil();
    if r >= u64::MAX as f64 {
        u64::MAX
    } else {
        r as u64
    }
}

/// A range of costs.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Cost {
    /// Cheapest.
    pub min: u64,
    /// Most expensive.
    pub max: u64,
}

impl Cost {
    fn one() -> Cost {
        Cost { min: 1, max: 1 }
    }
    fn add(self, o: Cost) -> Cost {
        Cost {
            min: self.min.saturating_add(o.min),
            max: self.max.saturating_add(o.max),
        }
    }
    fn mul(self, o: Cost) -> Cost {
        Cost {
            min: self.min.saturating_mul(o.min),
            max: self.max.saturating_mul(o.max),
        }
    }
}

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

const STRING_TRAVERSAL: f64 = 0.1;
const REGEX_LENGTH: f64 = 0.25;

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
            Expr::Ident(name) => {
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
                self.err(e.id, CheckError::UndeclaredReference(name.clone()))
            }
            Expr::Select(sel) => {
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
            Expr::List(l) => {
                let mut cost = Cost { min: 10, max: 10 };
                let mut elem: Option<Ty> = None;
                let mut esize: Option<Size> = None;
                for (i, el) in l.elements.iter().enumerate() {
                    let info = self.check(el);
                    cost = cost.add(info.cost);
                    let mut t = info.ty.clone();
                    if l.optional_indices.contains(&i) {
                        t = match t.norm() {
                            Ty::Opt(x) => *x,
                            _ => Ty::Dyn,
                        };
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
            Expr::Map(m) => {
                let mut cost = Cost { min: 30, max: 30 };
                let (mut kt, mut vt) = (None, None);
                for entry in &m.entries {
                    match &entry.expr {
                        EntryExpr::MapEntry(me) => {
                            let k = self.check(&me.key);
                            let v = self.check(&me.value);
                            cost = cost.add(k.cost).add(v.cost);
                            match k.ty.norm() {
                                Ty::Int
                                | Ty::Uint
                                | Ty::Bool
                                | Ty::String
                                | Ty::Dyn
                                | Ty::Error => {}
                                other => {
                                    self.err(me.key.id, CheckError::UnsupportedMapKey(other));
                                }
                            }
                            let mut v_ty = v.ty;
                            if me.optional {
                                v_ty = match v_ty.norm() {
                                    Ty::Opt(x) => *x,
                                    _ => Ty::Dyn,
                                };
                            }
                            kt = Some(self.join(me.key.id, kt, k.ty));
                            vt = Some(self.join(me.value.id, vt, v_ty));
                        }
                        EntryExpr::StructField(_) => {}
                    }
                }
                let mut info = Info::new(
                    Ty::Map(
                        Box::new(kt.unwrap_or(Ty::Dyn)),
                        Box::new(vt.unwrap_or(Ty::Dyn)),
                    ),
                    cost,
                );
                info.size = Some(Size::exact(m.entries.len() as u64));
                info
            }
            Expr::Struct(s) => self.err(e.id, CheckError::UndeclaredReference(s.type_name.clone())),
            Expr::Comprehension(c) => {
                let range = self.check(&c.iter_range);
                let (v1, v2) = match range.ty.norm() {
                    Ty::List(el) => {
                        if c.iter_var2.is_some() {
                            (Ty::Int, *el)
                        } else {
                            (*el, Ty::Dyn)
                        }
                    }
                    Ty::Map(k, v) => (*k, *v),
                    Ty::Dyn | Ty::Error => (Ty::Dyn, Ty::Dyn),
                    other => {
                        self.err(c.iter_range.id, CheckError::NotARange(other));
                        (Ty::Error, Ty::Error)
                    }
                };
                let init = self.check(&c.accu_init);
                let depth = self.vars.len();
                self.vars.push(Var {
                    name: c.accu_var.clone(),
                    ty: init.ty.clone(),
                    size: init.size,
                });
                let elem_size = if matches!(range.ty.norm(), Ty::List(_)) && c.iter_var2.is_none() {
                    range.elem_size
                } else {
                    None
                };
                self.vars.push(Var {
                    name: c.iter_var.clone(),
                    ty: v1,
                    size: elem_size,
                });
                if let Some(v2n) = &c.iter_var2 {
                    self.vars.push(Var {
                        name: v2n.clone(),
                        ty: v2,
                        size: None,
                    });
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
                self.vars.push(Var {
                    name: c.accu_var.clone(),
                    ty: accu_ty,
                    size: Some(range.size()),
                });
                let result = self.check(&c.result);
                self.vars.truncate(depth);
                let n = range.size();
                let loop_cost = Cost {
                    min: n.min,
                    max: n.max,
                }
                .mul(cond.cost.add(step.cost));
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
            Expr::Call(call) => self.check_call(e, call),
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
        match t.norm() {
            Ty::Schema(d) => match &d.kind {
                Kind::Object(fields) => match fields.get(field) {
                    Some(f) => Ty::Schema(f.decl.clone()),
                    None => self.err(id, CheckError::UndefinedField(field.into())).ty,
                },
                _ => Ty::Dyn,
            },
            Ty::Map(_, v) => *v,
            Ty::Dyn | Ty::Error => Ty::Dyn,
            Ty::Opt(inner) => Ty::Opt(Box::new(self.field_type(id, &inner, field))),
            other => {
                self.err(id, CheckError::NoFieldSelection(other));
                Ty::Error
            }
        }
    }

    fn check_call(&mut self, e: &IdedExpr, call: &cel::common::ast::CallExpr) -> Info {
        let name = call.func_name.as_str();
        // `strings.quote(x)`, `sets.contains(a, b)`, `optional.of(x)`: a namespaced global.
        if let Some(t) = &call.target {
            if let Some(q) = qualified_name(&t.expr) {
                let full = format!("{q}.{name}");
                let root = q.split('.').next().unwrap_or("");
                if self.lookup(root).is_none() && OVERLOADS.contains_key(&full) {
                    let args: Vec<Info> = call.args.iter().map(|a| self.check(a)).collect();
                    return self.resolve(e, &full, None, args, &call.args);
                }
            }
        }
        match name {
            "_&&_" | "_||_" => {
                let l = self.check(&call.args[0]);
                let r = self.check(&call.args[1]);
                for (i, a) in [&l, &r].iter().enumerate() {
                    if !assignable(&Ty::Bool, &a.ty, &mut [None, None]) {
                        return self.err(
                            e.id,
                            CheckError::NoMatchingOverload {
                                name: name.into(),
                                args: format!("({}, {})", l.ty, r.ty),
                            },
                        );
                    }
                    let _ = i;
                }
                return Info::new(
                    Ty::Bool,
                    Cost {
                        min: l.cost.min,
                        max: l.cost.add(r.cost).max,
                    },
                );
            }
            "_?._" if call.args.len() == 2 => {
                let op = self.check(&call.args[0]);
                let Expr::Literal(LiteralValue::String(f)) = &call.args[1].expr else {
                    return self.err(e.id, CheckError::UnsupportedOptionalSelection);
                };
                let inner = match op.ty.norm() {
                    Ty::Opt(t) => *t,
                    t => t,
                };
                let fty = self.field_type(e.id, &inner, f.inner());
                let fty = match fty {
                    Ty::Opt(t) => *t,
                    t => t,
                };
                return Info::new(Ty::Opt(Box::new(fty)), op.cost.add(Cost::one()));
            }
            "_?_:_" if call.args.len() == 3 => {
                let c = self.check(&call.args[0]);
                let t = self.check(&call.args[1]);
                let f = self.check(&call.args[2]);
                if !assignable(&Ty::Bool, &c.ty, &mut [None, None]) {
                    return self.err(
                        e.id,
                        CheckError::NoMatchingOverload {
                            name: "_?_:_".into(),
                            args: format!("({}, {}, {})", c.ty, t.ty, f.ty),
                        },
                    );
                }
                let ty = if t.ty.is_dyn() {
                    f.ty.clone()
                } else if f.ty.is_dyn() || assignable(&t.ty, &f.ty, &mut [None, None]) {
                    t.ty.clone()
                } else {
                    return self.err(
                        e.id,
                        CheckError::NoMatchingOverload {
                            name: "_?_:_".into(),
                            args: format!("({}, {}, {})", c.ty, t.ty, f.ty),
                        },
                    );
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
                return info;
            }
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
        if matches!(name, "matches" | "find" | "findAll") {
            if let Some(Expr::Literal(LiteralValue::String(s))) = arg_exprs.get(1).map(|x| &x.expr)
            {
                let p = s.inner().to_string();
                if let Err(msg) = super::eval::compile_regex(&p) {
                    return self.err(arg_exprs[1].id, msg.into());
                }
                self.regexes.push(p);
            }
        }
        let recv = call.target.is_some();
        self.resolve_exprs(e, name, recv, args, &arg_exprs)
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
        let Some(overloads) = OVERLOADS.get(name) else {
            return self.err(e.id, CheckError::UndeclaredReference(name.into()));
        };
        let mut result: Option<Ty> = None;
        let mut matched_id = String::new();
        let any_error = args.iter().any(|a| matches!(a.ty, Ty::Error));
        for o in overloads.iter().filter(|o| o.receiver == recv) {
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
                matched_id = o.id.clone();
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
        let Some(mut ty) = result else {
            if any_error {
                return Info::new(Ty::Error, Cost::default());
            }
            let sig = if recv {
                format!(
                    "{}.({})",
                    args[0].ty,
                    args[1..]
                        .iter()
                        .map(|a| a.ty.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            } else {
                format!(
                    "({})",
                    args.iter()
                        .map(|a| a.ty.to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                )
            };
            return self.err(
                e.id,
                CheckError::NoMatchingOverload {
                    name: name.into(),
                    args: sig,
                },
            );
        };
        match name {
            "type" => ty = Ty::Type(Box::new(args[0].ty.clone())),
            "dyn" => ty = Ty::Dyn,
            _ => {}
        }
        let sum = args.iter().fold(Cost::default(), |c, a| c.add(a.cost));
        let (cost, size) = call_cost(name, &matched_id, &args, arg_exprs);
        let mut info = Info::new(ty, sum.add(cost));
        info.size = size;
        info
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

fn is_stringish(t: &Ty) -> bool {
    matches!(t.norm(), Ty::String | Ty::Bytes)
}

/// The cost of a call itself (its arguments excluded) and the size of its result.
fn call_cost(name: &str, id: &str, args: &[Info], exprs: &[&IdedExpr]) -> (Cost, Option<Size>) {
    let one = (Cost::one(), None);
    let sz = |i: usize| args.get(i).map(Info::size).unwrap_or(UNKNOWN);
    match name {
        "startsWith" | "endsWith" if args.len() == 2 => (sz(1).factor(STRING_TRAVERSAL), None),
        "@in" if args.len() == 2 && matches!(args[1].ty.norm(), Ty::List(_)) => {
            (sz(1).factor(1.0), None)
        }
        "matches" if args.len() == 2 => {
            let s = sz(0).add(Size::exact(1)).factor(STRING_TRAVERSAL);
            let r = sz(1).factor(REGEX_LENGTH);
            (s.mul(r), None)
        }
        "contains" if args.len() == 2 => {
            let s = sz(0).factor(STRING_TRAVERSAL);
            let sub = sz(1).factor(STRING_TRAVERSAL);
            (s.mul(sub), None)
        }
        "_+_"
            if args.len() == 2
                && (is_stringish(&args[0].ty) || matches!(args[0].ty.norm(), Ty::List(_))) =>
        {
            let size = sz(0).add(sz(1));
            if matches!(args[0].ty.norm(), Ty::List(_)) {
                return (Cost::one(), Some(size));
            }
            (size.factor(STRING_TRAVERSAL), Some(size))
        }
        "_==_" | "_!=_" | "_<_" | "_<=_" | "_>_" | "_>=_"
            if args.len() == 2
                && (is_stringish(&args[0].ty) || matches!(args[0].ty.norm(), Ty::List(_))) =>
        {
            let (l, r) = (sz(0), sz(1));
            let smallest = l.max.min(r.max);
            let min = if smallest > 0 { 1 } else { 0 };
            (Size { min, max: smallest }.factor(STRING_TRAVERSAL), None)
        }
        "isSorted" | "sum" | "max" | "min" | "indexOf" | "lastIndexOf"
            if matches!(args.first().map(|a| a.ty.norm()), Some(Ty::List(_))) =>
        {
            let mut el = Cost::one();
            if let Some(Ty::List(e)) = args.first().map(|a| a.ty.norm()) {
                if is_stringish(&e) {
                    let es = match &*e {
                        Ty::Schema(d) => Size {
                            min: 0,
                            max: d.max_elements,
                        },
                        _ => UNKNOWN,
                    };
                    el = el.add(es.factor(STRING_TRAVERSAL));
                }
            }
            let n = sz(0);
            (
                Cost {
                    min: n.min,
                    max: n.max,
                }
                .mul(el),
                None,
            )
        }
        "url" => (sz(0).factor(STRING_TRAVERSAL), Some(sz(0))),
        "lowerAscii" | "upperAscii" | "substring" | "trim" => {
            (sz(0).factor(STRING_TRAVERSAL), Some(sz(0)))
        }
        "replace" if args.len() >= 3 => {
            // The result may grow by the replacement for every match.
            let s = sz(0);
            let from = sz(1);
            let with = sz(2);
            let count = if from.min == 0 {
                s.max.saturating_add(1)
            } else if with.max <= from.min {
                0
            } else {
                mul_f(s.max, 1.0 / from.min as f64)
            };
            let size = Size {
                min: 0,
                max: count.saturating_mul(with.max).saturating_add(s.max),
            };
            (s.factor(2.0 * STRING_TRAVERSAL), Some(size))
        }
        "split" => {
            let s = sz(0);
            let mut max = s.max;
            if let Some(Expr::Literal(LiteralValue::Int(i))) = exprs.get(2).map(|x| &x.expr) {
                max = (*i.inner()).max(0) as u64;
            }
            (s.factor(2.0 * STRING_TRAVERSAL), Some(Size { min: 0, max }))
        }
        "join" => {
            let n = sz(0);
            let el = match args.first().map(|a| (a.ty.norm(), a.elem_size)) {
                Some((_, Some(es))) => es,
                Some((Ty::List(e), None)) => match &*e {
                    Ty::Schema(d) => Size {
                        min: 0,
                        max: d.max_elements,
                    },
                    _ => UNKNOWN,
                },
                _ => UNKNOWN,
            };
            let mut size = n.mul(el);
            if args.len() > 1 {
                let seps = Size {
                    min: n.min.saturating_sub(1),
                    max: n.max.saturating_sub(1),
                };
                size = size.add(sz(1).mul(seps));
            }
            (size.factor(STRING_TRAVERSAL), Some(size))
        }
        "find" | "findAll" if args.len() >= 2 => {
            let s = sz(0).add(Size::exact(1)).factor(STRING_TRAVERSAL);
            let r = sz(1).factor(REGEX_LENGTH);
            (
                s.mul(r),
                Some(Size {
                    min: 0,
                    max: sz(0).max,
                }),
            )
        }
        "cidr" | "isIP" | "isCIDR" | "quantity" | "isQuantity" | "semver" | "isSemver" => {
            (sz(0).factor(STRING_TRAVERSAL), None)
        }
        "ip" if args.len() == 1 && matches!(args[0].ty.norm(), Ty::String) => {
            (sz(0).factor(STRING_TRAVERSAL), None)
        }
        "ip.isCanonical" => (sz(0).factor(2.0 * STRING_TRAVERSAL), None),
        "containsIP" | "containsCIDR" => {
            let ip = Size { min: 4, max: 16 };
            let mut c = ip.add(ip).factor(STRING_TRAVERSAL);
            if name == "containsCIDR" {
                c = c.add(ip.factor(STRING_TRAVERSAL)).add(Cost::one());
            }
            if id.ends_with("_string") {
                c = c.add(sz(1).factor(STRING_TRAVERSAL));
            }
            (c, None)
        }
        "validate" => (
            sz(1).factor(STRING_TRAVERSAL).mul(Cost {
                min: mul_f(1, 128.0 * REGEX_LENGTH),
                max: mul_f(1, 128.0 * REGEX_LENGTH),
            }),
            None,
        ),
        "string" | "bytes" if args.len() == 1 && is_stringish(&args[0].ty) => {
            (Cost::one(), Some(sz(0)))
        }
        "format" => (Cost::one(), Some(UNKNOWN)),
        "strings.quote" => (Cost::one(), Some(UNKNOWN)),
        "charAt" => (Cost::one(), Some(Size { min: 0, max: 1 })),
        _ => one,
    }
}
