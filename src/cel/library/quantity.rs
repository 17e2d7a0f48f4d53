//! The Kubernetes quantity library: `quantity()`, `isQuantity()`, `sign()`, `isInteger()`,
//! `asInteger()`, `asApproximateFloat()`, comparisons and `add()`/`sub()`. Quantities are exact
//! decimals (`mantissa * 10^exp`), so `quantity('1Gi') == quantity('1024Mi')`.

use std::cmp::Ordering;
use std::rc::Rc;

use super::{
    comparison, cost_traversal, estimate_traversal, invalid, no_overload, str_arg, Ctx, Function, R,
};
use crate::cel::error::EvalError;
use crate::cel::value::{Ext, Val};

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

/// A `resource.Quantity`: `mantissa * 10^exp`, plus the text it was parsed from.
#[derive(Debug, Clone, PartialEq)]
pub struct Quantity {
    /// Value digits.
    pub mantissa: i128,
    /// Decimal exponent.
    pub exp: i32,
}

fn pow10(n: u32) -> Option<i128> {
    10i128.checked_pow(n)
}

impl Quantity {
    /// Parses a quantity (`100m`, `1.5Gi`, `2e3`), as `resource.ParseQuantity`.
    pub fn parse(s: &str) -> Option<Quantity> {
        let s = s.trim();
        if s.is_empty() {
            return None;
        }
        let end = s
            .char_indices()
            .find(|(i, c)| {
                !(c.is_ascii_digit() || *c == '.' || (*i == 0 && (*c == '+' || *c == '-')))
            })
            .map(|(i, _)| i)
            .unwrap_or(s.len());
        let (num, suffix) = s.split_at(end);
        let (neg, digits) = match num.strip_prefix('-') {
            Some(d) => (true, d),
            None => (false, num.strip_prefix('+').unwrap_or(num)),
        };
        if digits.is_empty() || digits == "." || digits.matches('.').count() > 1 {
            return None;
        }
        let (int_part, frac_part) = digits.split_once('.').unwrap_or((digits, ""));
        let mut mantissa: i128 = 0;
        for c in int_part.chars().chain(frac_part.chars()) {
            mantissa = mantissa
                .checked_mul(10)?
                .checked_add(c.to_digit(10)? as i128)?;
        }
        let mut exp = -(frac_part.len() as i32);
        let mut binary = 0u32;
        match suffix {
            "" => {}
            "Ki" => binary = 10,
            "Mi" => binary = 20,
            "Gi" => binary = 30,
            "Ti" => binary = 40,
            "Pi" => binary = 50,
            "Ei" => binary = 60,
            "n" => exp -= 9,
            "u" => exp -= 6,
            "m" => exp -= 3,
            "k" => exp += 3,
            "M" => exp += 6,
            "G" => exp += 9,
            "T" => exp += 12,
            "P" => exp += 15,
            "E" => exp += 18,
            other => {
                let e = other.strip_prefix(['e', 'E'])?;
                let n: i32 = e.parse().ok()?;
                if e.is_empty() {
                    return None;
                }
                exp = exp.checked_add(n)?;
            }
        }
        if binary > 0 {
            mantissa = mantissa.checked_mul(1i128 << binary)?;
        }
        if neg {
            mantissa = -mantissa;
        }
        Some(Quantity { mantissa, exp }.normalized())
    }

    fn normalized(mut self) -> Quantity {
        if self.mantissa == 0 {
            return Quantity {
                mantissa: 0,
                exp: 0,
            };
        }
        while self.mantissa % 10 == 0 {
            self.mantissa /= 10;
            self.exp += 1;
        }
        self
    }

    /// The value as a double.
    pub fn as_f64(&self) -> f64 {
        self.mantissa as f64 * 10f64.powi(self.exp)
    }

    /// The value as an integer, when it is one and fits in 64 bits.
    pub fn as_i64(&self) -> Option<i64> {
        if self.exp < 0 {
            return None;
        }
        let v = self.mantissa.checked_mul(pow10(self.exp as u32)?)?;
        i64::try_from(v).ok()
    }

    /// -1, 0 or 1.
    pub fn sign(&self) -> i64 {
        self.mantissa.signum() as i64
    }

    /// Compares two quantities exactly (falls back to doubles when the scales overflow).
    pub fn cmp_to(&self, o: &Quantity) -> Ordering {
        let (a, b) = (self.mantissa, o.mantissa);
        let d = self.exp - o.exp;
        let exact = if d >= 0 {
            pow10(d as u32)
                .and_then(|p| a.checked_mul(p))
                .map(|x| x.cmp(&b))
        } else {
            pow10((-d) as u32)
                .and_then(|p| b.checked_mul(p))
                .map(|y| a.cmp(&y))
        };
        exact.unwrap_or_else(|| {
            self.as_f64()
                .partial_cmp(&o.as_f64())
                .unwrap_or(Ordering::Equal)
        })
    }

    /// `self + sign * o`.
    pub fn add(&self, o: &Quantity, sign: i128) -> Option<Quantity> {
        let exp = self.exp.min(o.exp);
        let a = self.mantissa.checked_mul(pow10((self.exp - exp) as u32)?)?;
        let b = o.mantissa.checked_mul(pow10((o.exp - exp) as u32)?)?;
        Some(
            Quantity {
                mantissa: a.checked_add(b.checked_mul(sign)?)?,
                exp,
            }
            .normalized(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
