//! The Kubernetes lists library: `isSorted`, `sum`, `min`, `max`, `indexOf`, `lastIndexOf`.
//! Each visits every element (and every character of string elements, statically).

use std::cmp::Ordering;

use chrono::TimeDelta;

use super::math::add;
use super::{invalid, is_stringish, list_arg, no_overload, size_at, Ctx, Estimate, Function, R};
use crate::cel::cost::{Cost, Size, STRING_TRAVERSAL, UNKNOWN};
use crate::cel::error::EvalError;
use crate::cel::types::Ty;
use crate::cel::value::{compare, equals, Val};

/// The functions of this family, for the registry.
pub(super) const FUNCTIONS: &[Function] = &[
    Function::strict("isSorted", &["list<A>.isSorted() bool"], is_sorted)
        .estimate(estimate_elements)
        .cost(cost_elements),
    Function::strict("sum", &["list<A>.sum() A"], sum)
        .estimate(estimate_elements)
        .cost(cost_elements),
    Function::strict("min", &["list<A>.min() A"], extreme)
        .estimate(estimate_elements)
        .cost(cost_elements),
    Function::strict("max", &["list<A>.max() A"], extreme)
        .estimate(estimate_elements)
        .cost(cost_elements),
    Function::strict("indexOf", &["list<A>.indexOf(A) int"], index_of)
        .estimate(estimate_elements)
        .cost(cost_elements),
    Function::strict("lastIndexOf", &["list<A>.lastIndexOf(A) int"], index_of)
        .estimate(estimate_elements)
        .cost(cost_elements),
];

/// One step an element, plus the traversal of string elements.
fn estimate_elements(e: &Estimate<'_>) -> (Cost, Option<Size>) {
    let Some(Ty::List(elem)) = e.ty(0) else {
        return (Cost::one(), None);
    };
    let mut per_element = Cost::one();
    if is_stringish(&elem) {
        let elem_size = match &*elem {
            Ty::Schema(d) => Size {
                min: 0,
                max: d.max_elements,
            },
            _ => UNKNOWN,
        };
        per_element = per_element.add(elem_size.factor(STRING_TRAVERSAL));
    }
    (e.size(0).as_cost().mul(per_element), None)
}

fn cost_elements(args: &[Val<'_>]) -> u64 {
    if matches!(args.first(), Some(Val::List(_) | Val::JList(..))) {
        size_at(args, 0).max(1)
    } else {
        1
    }
}

/// The elements of the receiver of a call without arguments.
fn elements<'a>(args: &[Val<'a>]) -> Result<Vec<Val<'a>>, EvalError> {
    match args {
        [l] => list_arg(l),
        _ => no_overload(),
    }
}

fn is_sorted<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let items = elements(&args)?;
    for w in items.windows(2) {
        match compare(&w[0], &w[1]) {
            Some(Ordering::Greater) => return Ok(Val::Bool(false)),
            Some(_) => {}
            None => return no_overload(),
        }
    }
    Ok(Val::Bool(true))
}

/// The sum, of the type of the first element (`0` of an empty list).
fn sum<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let items = elements(&args)?;
    let mut acc = match items.first() {
        Some(Val::Double(_)) => Val::Double(0.0),
        Some(Val::Uint(_)) => Val::Uint(0),
        Some(Val::Dur(_)) => Val::Dur(TimeDelta::zero()),
        _ => Val::Int(0),
    };
    for i in items {
        acc = add(acc, i)?;
    }
    Ok(acc)
}

/// `min()` / `max()`: the first of the smallest / largest elements.
fn extreme<'a>(cx: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let want = if cx.name == "min" {
        Ordering::Less
    } else {
        Ordering::Greater
    };
    let mut best: Option<Val> = None;
    for i in elements(&args)? {
        best = Some(match best {
            None => i,
            Some(b) => {
                let o = compare(&i, &b).ok_or(EvalError::NoOverload)?;
                if o == want {
                    i
                } else {
                    b
                }
            }
        });
    }
    match best {
        Some(b) => Ok(b),
        None => invalid(format!("{} called on empty list", cx.name)),
    }
}

fn index_of<'a>(cx: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let [l, x] = args.as_slice() else {
        return no_overload();
    };
    let items = list_arg(l)?;
    let pos = if cx.name == "indexOf" {
        items.iter().position(|e| equals(e, x))
    } else {
        items.iter().rposition(|e| equals(e, x))
    };
    Ok(Val::Int(pos.map(|p| p as i64).unwrap_or(-1)))
}
