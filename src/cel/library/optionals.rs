//! cel-go's optional types: `optional.of()`, `optional.ofNonZeroValue()`, `optional.none()`,
//! `hasValue()`, `value()`, `orValue()` and `or()` (`x.?f` and `m[?k]` are operators; `optMap`
//! and `optFlatMap` are macros).

use std::rc::Rc;

use super::{invalid, no_overload, Ctx, Function, R};
use crate::cel::value::Val;

/// The functions of this family, for the registry.
pub(super) const FUNCTIONS: &[Function] = &[
    Function::strict("optional.of", &["optional.of(A) opt<A>"], of),
    Function::strict(
        "optional.ofNonZeroValue",
        &["optional.ofNonZeroValue(A) opt<A>"],
        of_non_zero_value,
    ),
    Function::strict("optional.none", &["optional.none() opt<dyn>"], none),
    Function::strict("hasValue", &["opt<A>.hasValue() bool"], has_value),
    Function::strict("value", &["opt<A>.value() A"], value),
    Function::strict("orValue", &["opt<A>.orValue(A) A"], or_value),
    Function::strict("or", &["opt<A>.or(opt<A>) opt<A>"], or),
];

/// The one argument of a call, moved out.
fn only<'a>(args: Vec<Val<'a>>) -> Option<Val<'a>> {
    let mut it = args.into_iter();
    match (it.next(), it.next()) {
        (Some(v), None) => Some(v),
        _ => None,
    }
}

/// The two arguments of a call, moved out.
fn pair<'a>(args: Vec<Val<'a>>) -> Option<(Val<'a>, Val<'a>)> {
    let mut it = args.into_iter();
    match (it.next(), it.next(), it.next()) {
        (Some(a), Some(b), None) => Some((a, b)),
        _ => None,
    }
}

fn of<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    match only(args) {
        Some(v) => Ok(Val::Opt(Some(Rc::new(v)))),
        None => no_overload(),
    }
}

/// `optional.none()` for zero values (null, false, 0, empty strings and collections).
fn of_non_zero_value<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let Some(v) = only(args) else {
        return no_overload();
    };
    let zero = match &v {
        Val::Null => true,
        Val::Bool(b) => !b,
        Val::Int(i) => *i == 0,
        Val::Uint(u) => *u == 0,
        Val::Double(d) => *d == 0.0,
        Val::Dur(d) => d.is_zero(),
        v => v.size() == Some(0),
    };
    Ok(Val::Opt(if zero { None } else { Some(Rc::new(v)) }))
}

fn none<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    if args.is_empty() {
        Ok(Val::Opt(None))
    } else {
        no_overload()
    }
}

fn has_value<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    match args.as_slice() {
        [Val::Opt(o)] => Ok(Val::Bool(o.is_some())),
        _ => no_overload(),
    }
}

fn value<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    match args.as_slice() {
        [Val::Opt(Some(v))] => Ok((**v).clone()),
        [Val::Opt(None)] => invalid("optional.none() dereference"),
        _ => no_overload(),
    }
}

fn or_value<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    match pair(args) {
        Some((Val::Opt(Some(v)), _)) => Ok((*v).clone()),
        Some((Val::Opt(None), other)) => Ok(other),
        _ => no_overload(),
    }
}

fn or<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    match pair(args) {
        Some((o @ Val::Opt(Some(_)), _)) => Ok(o),
        Some((Val::Opt(None), other)) => Ok(other),
        _ => no_overload(),
    }
}
