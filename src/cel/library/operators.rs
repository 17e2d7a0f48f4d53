//! The operators: logic, equality, ordering, indexing, membership and `size`, and the internal
//! functions macros expand to (`@in`, `@not_strictly_false`, `@mapInsert`, `_?._`).
//!
//! Equality and ordering of strings (and lists, statically) cost their traversal; everything
//! else here costs 1.

use std::cmp::Ordering;
use std::rc::Rc;

use super::{is_stringish, no_overload, size_at, Ctx, Estimate, Function, R};
use crate::cel::cost::{mul_f, Cost, Size, STRING_TRAVERSAL};
use crate::cel::error::EvalError;
use crate::cel::types::Ty;
use crate::cel::value::{compare, equals, Val};

/// The overloads of an ordering operator: numbers across types, and each ordered type.
macro_rules! ordering {
    ($op:literal) => {
        &[
            concat!($op, "(int,int) bool"),
            concat!($op, "(uint,uint) bool"),
            concat!($op, "(double,double) bool"),
            concat!($op, "(string,string) bool"),
            concat!($op, "(bytes,bytes) bool"),
            concat!($op, "(bool,bool) bool"),
            concat!($op, "(ts,ts) bool"),
            concat!($op, "(dur,dur) bool"),
            concat!($op, "(int,uint) bool"),
            concat!($op, "(int,double) bool"),
            concat!($op, "(uint,int) bool"),
            concat!($op, "(uint,double) bool"),
            concat!($op, "(double,int) bool"),
            concat!($op, "(double,uint) bool"),
        ]
    };
}

/// The functions of this family, for the registry.
pub(super) const FUNCTIONS: &[Function] = &[
    Function::strict("!_", &["!_(bool) bool"], not),
    Function::special("_&&_", &["_&&_(bool,bool) bool"]),
    Function::special("_||_", &["_||_(bool,bool) bool"]),
    Function::special("_?_:_", &["_?_:_(bool,A,A) A"]),
    Function::special("@not_strictly_false", &["@not_strictly_false(bool) bool"]),
    Function::strict("_==_", &["_==_(A,A) bool"], eq)
        .estimate(estimate_compare)
        .cost(cost_compare),
    Function::strict("_!=_", &["_!=_(A,A) bool"], ne)
        .estimate(estimate_compare)
        .cost(cost_compare),
    Function::strict("_<_", ordering!("_<_"), order)
        .estimate(estimate_compare)
        .cost(cost_compare),
    Function::strict("_<=_", ordering!("_<=_"), order)
        .estimate(estimate_compare)
        .cost(cost_compare),
    Function::strict("_>_", ordering!("_>_"), order)
        .estimate(estimate_compare)
        .cost(cost_compare),
    Function::strict("_>=_", ordering!("_>=_"), order)
        .estimate(estimate_compare)
        .cost(cost_compare),
    Function::strict(
        "_[_]",
        &[
            "_[_](list<A>,int) A",
            "_[_](map<A,B>,A) B",
            "_[_](opt<list<A>>,int) opt<A>",
            "_[_](opt<map<A,B>>,A) opt<B>",
        ],
        index_op,
    ),
    Function::strict(
        "_[?_]",
        &[
            "_[?_](list<A>,int) opt<A>",
            "_[?_](map<A,B>,A) opt<B>",
            "_[?_](opt<list<A>>,int) opt<A>",
            "_[?_](opt<map<A,B>>,A) opt<B>",
        ],
        optional_index,
    ),
    // `x.?f`: the checker types it itself (the field is a name, not a value).
    Function::strict("_?._", &[], optional_select),
    Function::strict(
        "@in",
        &["@in(A,list<A>) bool", "@in(A,map<A,B>) bool"],
        member_of,
    )
    .estimate(estimate_in)
    .cost(cost_in),
    Function::strict(
        "@mapInsert",
        &["@mapInsert(map<A,B>,A,B) map<A,B>"],
        map_insert,
    ),
    Function::strict(
        "size",
        &[
            "size(string) int",
            "size(bytes) int",
            "size(list<A>) int",
            "size(map<A,B>) int",
            "string.size() int",
            "bytes.size() int",
            "list<A>.size() int",
            "map<A,B>.size() int",
        ],
        size,
    ),
];

/// Comparing strings or lists traverses the shorter one.
fn estimate_compare(e: &Estimate<'_>) -> (Cost, Option<Size>) {
    let sized = e.args.len() == 2
        && e.args
            .first()
            .is_some_and(|a| is_stringish(&a.ty) || matches!(a.ty.norm(), Ty::List(_)));
    if !sized {
        return (Cost::one(), None);
    }
    let smallest = e.size(0).max.min(e.size(1).max);
    let min = if smallest > 0 { 1 } else { 0 };
    let size = Size { min, max: smallest };
    (size.factor(STRING_TRAVERSAL), None)
}

fn cost_compare(args: &[Val<'_>]) -> u64 {
    if args.first().and_then(Val::as_str).is_some() {
        mul_f(size_at(args, 0).min(size_at(args, 1)), STRING_TRAVERSAL).max(1)
    } else {
        1
    }
}

/// Membership in a list looks at every element.
fn estimate_in(e: &Estimate<'_>) -> (Cost, Option<Size>) {
    if e.args.len() == 2 && matches!(e.ty(1), Some(Ty::List(_))) {
        (e.size(1).factor(1.0), None)
    } else {
        (Cost::one(), None)
    }
}

fn cost_in(args: &[Val<'_>]) -> u64 {
    if args.len() == 2 {
        size_at(args, 1).max(1)
    } else {
        1
    }
}

fn not<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    match args.as_slice() {
        [Val::Bool(b)] => Ok(Val::Bool(!b)),
        _ => no_overload(),
    }
}

fn eq<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    match args.as_slice() {
        [a, b] => Ok(Val::Bool(equals(a, b))),
        _ => no_overload(),
    }
}

fn ne<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    match args.as_slice() {
        [a, b] => Ok(Val::Bool(!equals(a, b))),
        _ => no_overload(),
    }
}

/// `<`, `<=`, `>`, `>=`: comparisons with NaN are false.
fn order<'a>(cx: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let [a, b] = args.as_slice() else {
        return no_overload();
    };
    let Some(o) = compare(a, b) else {
        if matches!((a, b), (Val::Double(_), _) | (_, Val::Double(_))) {
            return Ok(Val::Bool(false));
        }
        return no_overload();
    };
    Ok(Val::Bool(match cx.name {
        "_<_" => o == Ordering::Less,
        "_<=_" => o != Ordering::Greater,
        "_>_" => o == Ordering::Greater,
        _ => o != Ordering::Less,
    }))
}

fn index_op<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    match args.as_slice() {
        [c, i] => index(c, i),
        _ => no_overload(),
    }
}

/// `c[i]` of a list, map or optional.
pub(super) fn index<'a>(c: &Val<'a>, i: &Val<'a>) -> R<'a> {
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
                i.as_str()
                    .map(str::to_string)
                    .unwrap_or_else(|| i.display()),
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

/// `c[?i]`: `optional.none()` instead of a missing key or index.
fn optional_index<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let [c, i] = args.as_slice() else {
        return no_overload();
    };
    match index(c, i) {
        Ok(Val::Opt(o)) => Ok(Val::Opt(o)),
        Ok(v) => Ok(Val::Opt(Some(Rc::new(v)))),
        Err(e) if e.is_missing() => Ok(Val::Opt(None)),
        Err(e) => Err(e),
    }
}

/// `x.?f`: the field as an optional.
fn optional_select<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let [x, f] = args.as_slice() else {
        return no_overload();
    };
    let Some(f) = f.as_str() else {
        return no_overload();
    };
    let key = Val::str(f);
    match x {
        Val::Opt(None) => Ok(Val::Opt(None)),
        Val::Opt(Some(inner)) => Ok(Val::Opt(inner.map_get(&key).map(Rc::new))),
        Val::Map(_) | Val::JMap(..) => Ok(Val::Opt(x.map_get(&key).map(Rc::new))),
        _ => no_overload(),
    }
}

/// `x in c`.
fn member_of<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let [x, c] = args.as_slice() else {
        return no_overload();
    };
    match c {
        Val::List(_) | Val::JList(..) => Ok(Val::Bool(
            c.list_items()
                .unwrap_or_default()
                .iter()
                .any(|e| equals(e, x)),
        )),
        Val::Map(_) | Val::JMap(..) => Ok(Val::Bool(c.map_get(x).is_some())),
        _ => no_overload(),
    }
}

/// The step of `transformMap`: adds an entry to the accumulator (moved in, not copied).
fn map_insert<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let mut it = args.into_iter();
    let (Some(m), Some(k), Some(v), None) = (it.next(), it.next(), it.next(), it.next()) else {
        return no_overload();
    };
    let Val::Map(mut m) = m else {
        return no_overload();
    };
    if m.iter().any(|(x, _)| equals(x, &k)) {
        return Err(EvalError::KeyExists(k.display()));
    }
    Rc::make_mut(&mut m).push((k, v));
    Ok(Val::Map(m))
}

fn size<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    match args.as_slice() {
        [x] => Ok(Val::Int(x.size().ok_or(EvalError::NoOverload)? as i64)),
        _ => no_overload(),
    }
}
