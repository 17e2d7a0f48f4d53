//! cel-go's sets extension: `sets.contains(a, b)` (every element of `b` is in `a`),
//! `sets.equivalent(a, b)` and `sets.intersects(a, b)`, with CEL equality.

use super::{list_arg, no_overload, Ctx, Function, R};
use crate::cel::value::{equals, Val};

/// The functions of this family, for the registry.
pub(super) const FUNCTIONS: &[Function] = &[
    Function::strict(
        "sets.contains",
        &["sets.contains(list<A>,list<A>) bool"],
        set_op,
    ),
    Function::strict(
        "sets.equivalent",
        &["sets.equivalent(list<A>,list<A>) bool"],
        set_op,
    ),
    Function::strict(
        "sets.intersects",
        &["sets.intersects(list<A>,list<A>) bool"],
        set_op,
    ),
];

fn set_op<'a>(cx: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let [a, b] = args.as_slice() else {
        return no_overload();
    };
    let (x, y) = (list_arg(a)?, list_arg(b)?);
    let has = |l: &[Val], v: &Val| l.iter().any(|e| equals(e, v));
    Ok(Val::Bool(match cx.name {
        "sets.contains" => y.iter().all(|v| has(&x, v)),
        "sets.equivalent" => y.iter().all(|v| has(&x, v)) && x.iter().all(|v| has(&y, v)),
        _ => y.iter().any(|v| has(&x, v)),
    }))
}
