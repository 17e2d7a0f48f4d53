//! Arithmetic: `+ - * / %` and negation over numbers, time, strings, bytes and lists, with
//! cel-go's overflow errors. `+` of lists honours the list type of its left side: sets stay
//! sets, map-lists merge by key.

use std::rc::Rc;

use super::{is_stringish, no_overload, size_at, Ctx, Estimate, Function, R};
use crate::cel::cost::{mul_f, Cost, Size, STRING_TRAVERSAL};
use crate::cel::decl::{escape, ListKind};
use crate::cel::error::EvalError;
use crate::cel::types::Ty;
use crate::cel::value::{equals, ListV, Val};

/// The functions of this family, for the registry.
pub(super) const FUNCTIONS: &[Function] = &[
    Function::strict("-_", &["-_(int) int", "-_(double) double"], negate),
    Function::strict(
        "_+_",
        &[
            "_+_(int,int) int",
            "_+_(uint,uint) uint",
            "_+_(double,double) double",
            "_+_(string,string) string",
            "_+_(bytes,bytes) bytes",
            "_+_(list<A>,list<A>) list<A>",
            "_+_(ts,dur) ts",
            "_+_(dur,ts) ts",
            "_+_(dur,dur) dur",
        ],
        plus,
    )
    .estimate(estimate_plus)
    .cost(cost_plus),
    Function::strict(
        "_-_",
        &[
            "_-_(int,int) int",
            "_-_(uint,uint) uint",
            "_-_(double,double) double",
            "_-_(ts,ts) dur",
            "_-_(ts,dur) ts",
            "_-_(dur,dur) dur",
        ],
        arithmetic,
    ),
    Function::strict(
        "_*_",
        &[
            "_*_(int,int) int",
            "_*_(uint,uint) uint",
            "_*_(double,double) double",
        ],
        arithmetic,
    ),
    Function::strict(
        "_/_",
        &[
            "_/_(int,int) int",
            "_/_(uint,uint) uint",
            "_/_(double,double) double",
        ],
        arithmetic,
    ),
    Function::strict(
        "_%_",
        &["_%_(int,int) int", "_%_(uint,uint) uint"],
        arithmetic,
    ),
];

/// Concatenating strings copies both; lists are appended to in place (cost 1); the result's
/// size is the sum of both.
fn estimate_plus(e: &Estimate<'_>) -> (Cost, Option<Size>) {
    let Some(first) = e.args.first().filter(|_| e.args.len() == 2) else {
        return (Cost::one(), None);
    };
    let is_list = matches!(first.ty.norm(), Ty::List(_));
    if !is_list && !is_stringish(&first.ty) {
        return (Cost::one(), None);
    }
    let size = e.size(0).add(e.size(1));
    if is_list {
        return (Cost::one(), Some(size));
    }
    (size.factor(STRING_TRAVERSAL), Some(size))
}

fn cost_plus(args: &[Val<'_>]) -> u64 {
    if args.first().and_then(Val::as_str).is_some() {
        mul_f(size_at(args, 0) + size_at(args, 1), STRING_TRAVERSAL)
    } else {
        1
    }
}

fn negate<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    match args.as_slice() {
        [Val::Int(i)] => Ok(Val::Int(
            i.checked_neg().ok_or(EvalError::Overflow("integer"))?,
        )),
        [Val::Double(d)] => Ok(Val::Double(-d)),
        [Val::Dur(d)] => Ok(Val::Dur(-*d)),
        _ => no_overload(),
    }
}

fn plus<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let mut it = args.into_iter();
    match (it.next(), it.next(), it.next()) {
        (Some(a), Some(b), None) => add(a, b),
        _ => no_overload(),
    }
}

fn arithmetic<'a>(cx: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let mut it = args.into_iter();
    match (it.next(), it.next(), it.next()) {
        (Some(a), Some(b), None) => arith(cx.name, a, b),
        _ => no_overload(),
    }
}

/// `+`: numbers, strings, bytes, lists (with set/map-list semantics), time arithmetic.
pub(super) fn add<'a>(a: Val<'a>, b: Val<'a>) -> R<'a> {
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
            Ok(concat(a, b))
        }
        _ => no_overload(),
    }
}

/// Appends `b` to `a` (moved in, so that a comprehension building a list stays linear).
fn concat<'a>(a: Val<'a>, b: Val<'a>) -> Val<'a> {
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
    Val::List(l)
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

/// `- * / %` of two values.
fn arith<'a>(op: &str, a: Val<'a>, b: Val<'a>) -> R<'a> {
    match (a, b) {
        (Val::Int(x), Val::Int(y)) => int_arith(op, x, y).map(Val::Int),
        (Val::Uint(x), Val::Uint(y)) => uint_arith(op, x, y).map(Val::Uint),
        (Val::Double(x), Val::Double(y)) => Ok(Val::Double(match op {
            "_-_" => x - y,
            "_*_" => x * y,
            "_/_" => x / y,
            _ => return no_overload(),
        })),
        (Val::Ts(x), Val::Ts(y)) if op == "_-_" => Ok(Val::Dur(x.signed_duration_since(y))),
        (Val::Ts(x), Val::Dur(y)) if op == "_-_" => Ok(Val::Ts(
            x.checked_sub_signed(y)
                .ok_or(EvalError::Overflow("timestamp"))?,
        )),
        (Val::Dur(x), Val::Dur(y)) if op == "_-_" => Ok(Val::Dur(
            x.checked_sub(&y).ok_or(EvalError::Overflow("duration"))?,
        )),
        _ => no_overload(),
    }
}

fn int_arith(op: &str, x: i64, y: i64) -> Result<i64, EvalError> {
    let r = match op {
        "_/_" if y == 0 => return Err(EvalError::DivisionByZero),
        "_%_" if y == 0 => return Err(EvalError::ModulusByZero),
        "_-_" => x.checked_sub(y),
        "_*_" => x.checked_mul(y),
        "_/_" => x.checked_div(y),
        "_%_" => x.checked_rem(y),
        _ => return no_overload(),
    };
    r.ok_or(EvalError::Overflow("integer"))
}

fn uint_arith(op: &str, x: u64, y: u64) -> Result<u64, EvalError> {
    match op {
        "_/_" if y == 0 => Err(EvalError::DivisionByZero),
        "_%_" if y == 0 => Err(EvalError::ModulusByZero),
        "_-_" => x
            .checked_sub(y)
            .ok_or(EvalError::Overflow("unsigned integer")),
        "_*_" => x
            .checked_mul(y)
            .ok_or(EvalError::Overflow("unsigned integer")),
        "_/_" => Ok(x / y),
        "_%_" => Ok(x % y),
        _ => no_overload(),
    }
}
