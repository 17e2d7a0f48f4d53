//! The Kubernetes quantity library: `quantity()`, `isQuantity()`, `sign()`, `isInteger()`,
//! `asInteger()`, `asApproximateFloat()`, comparisons and `add()`/`sub()`. Quantities are exact
//! decimals (`mantissa * 10^exp`), so `quantity('1Gi') == quantity('1024Mi')`.

use std::rc::Rc;

use super::{
    comparison, cost_traversal, estimate_traversal, invalid, no_overload, str_arg, Ctx, Function, R,
};
use crate::cel::error::EvalError;
use crate::cel::value::{Ext, Val};
pub use crate::machinery::quantity::Quantity;

/// The functions of this family, for the registry.
pub(super) const FUNCTIONS: &[Function] = &[
    Function::strict("quantity", &["quantity(string) quantity"], quantity)
        .estimate(estimate_traversal)
        .cost(cost_traversal),
    Function::strict("isQuantity", &["isQuantity(string) bool"], is_quantity)
        .estimate(estimate_traversal)
        .cost(cost_traversal),
    Function::strict("sign", &["quantity.sign() int"], accessor),
    Function::strict("isInteger", &["quantity.isInteger() bool"], accessor),
    Function::strict("asInteger", &["quantity.asInteger() int"], accessor),
    Function::strict(
        "asApproximateFloat",
        &["quantity.asApproximateFloat() double"],
        accessor,
    ),
    Function::strict(
        "isGreaterThan",
        &["quantity.isGreaterThan(quantity) bool"],
        compare,
    ),
    Function::strict(
        "isLessThan",
        &["quantity.isLessThan(quantity) bool"],
        compare,
    ),
    Function::strict("compareTo", &["quantity.compareTo(quantity) int"], compare),
    Function::strict(
        "add",
        &[
            "quantity.add(quantity) quantity",
            "quantity.add(int) quantity",
        ],
        add_sub,
    ),
    Function::strict(
        "sub",
        &[
            "quantity.sub(quantity) quantity",
            "quantity.sub(int) quantity",
        ],
        add_sub,
    ),
];

fn quantity<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let [s] = args.as_slice() else {
        return no_overload();
    };
    match Quantity::parse(str_arg(s)?) {
        Some(q) => Ok(Val::Ext(Rc::new(Ext::Quantity(q)))),
        None => invalid("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
    }
}

fn is_quantity<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    match args.as_slice() {
        [s] => Ok(Val::Bool(s.as_str().and_then(Quantity::parse).is_some())),
        _ => no_overload(),
    }
}

/// The quantity of a value, else no overload.
fn quantity_of<'v>(v: &'v Val) -> Result<&'v Quantity, EvalError> {
    match v {
        Val::Ext(e) => match &**e {
            Ext::Quantity(q) => Ok(q),
            _ => no_overload(),
        },
        _ => no_overload(),
    }
}

/// `sign()`, `isInteger()`, `asInteger()`, `asApproximateFloat()`.
fn accessor<'a>(cx: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let [q] = args.as_slice() else {
        return no_overload();
    };
    let q = quantity_of(q)?;
    Ok(match cx.name {
        "sign" => Val::Int(q.sign()),
        "isInteger" => Val::Bool(q.as_i64().is_some()),
        "asInteger" => Val::Int(
            q.as_i64()
                .ok_or(EvalError::Invalid("cannot convert value to integer".into()))?,
        ),
        _ => Val::Double(q.as_f64()),
    })
}

fn compare<'a>(cx: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let [p, q] = args.as_slice() else {
        return no_overload();
    };
    Ok(comparison(cx.name, quantity_of(p)?.cmp_to(quantity_of(q)?)))
}

/// `q.add(x)` / `q.sub(x)` of a quantity or an integer.
fn add_sub<'a>(cx: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let [q, x] = args.as_slice() else {
        return no_overload();
    };
    let q = quantity_of(q)?;
    let other = match x {
        Val::Int(i) => Quantity {
            mantissa: *i as i128,
            exp: 0,
        },
        v => quantity_of(v)?.clone(),
    };
    let sign = if cx.name == "add" { 1 } else { -1 };
    let sum = q.add(&other, sign).ok_or(EvalError::Overflow("quantity"))?;
    Ok(Val::Ext(Rc::new(Ext::Quantity(sum))))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Ordering;

    #[test]
    fn quantities_compare_exactly() {
        let a = Quantity::parse("1Gi").unwrap();
        let b = Quantity::parse("1024Mi").unwrap();
        assert_eq!(a.cmp_to(&b), Ordering::Equal);
        let c = Quantity::parse("100m").unwrap();
        assert_eq!(c.as_f64(), 0.1);
        assert!(Quantity::parse("1.5.2").is_none());
        assert_eq!(Quantity::parse("2e3").unwrap().as_i64(), Some(2000));
    }
}
