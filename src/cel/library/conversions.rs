//! Type conversions: `int()`, `uint()`, `double()`, `string()`, `bytes()`, `bool()`,
//! `timestamp()`, `duration()`, `dyn()` and `type()`, with cel-go's range checks and wording.

use std::rc::Rc;

use chrono::{TimeZone, Utc};

use super::time::{duration_string, parse_go_duration, timestamp_string};
use super::{invalid, is_stringish, no_overload, Ctx, Estimate, Function, R};
use crate::cel::cost::{Cost, Size};
use crate::cel::error::EvalError;
use crate::cel::value::{Ext, Val};

/// The functions of this family, for the registry.
pub(super) const FUNCTIONS: &[Function] = &[
    Function::strict(
        "int",
        &[
            "int(int) int",
            "int(uint) int",
            "int(double) int",
            "int(string) int",
            "int(ts) int",
            "int(dur) int",
        ],
        to_int,
    ),
    Function::strict(
        "uint",
        &[
            "uint(uint) uint",
            "uint(int) uint",
            "uint(double) uint",
            "uint(string) uint",
        ],
        to_uint,
    ),
    Function::strict(
        "double",
        &[
            "double(double) double",
            "double(int) double",
            "double(uint) double",
            "double(string) double",
        ],
        to_double,
    ),
    Function::strict(
        "string",
        &[
            "string(string) string",
            "string(int) string",
            "string(uint) string",
            "string(double) string",
            "string(bool) string",
            "string(bytes) string",
            "string(ts) string",
            "string(dur) string",
            "string(ip) string",
            "string(cidr) string",
        ],
        to_string,
    )
    .estimate(estimate_same_size),
    Function::strict(
        "bytes",
        &["bytes(bytes) bytes", "bytes(string) bytes"],
        to_bytes,
    )
    .estimate(estimate_same_size),
    Function::strict("bool", &["bool(bool) bool", "bool(string) bool"], to_bool),
    Function::strict(
        "timestamp",
        &[
            "timestamp(ts) ts",
            "timestamp(string) ts",
            "timestamp(int) ts",
        ],
        to_timestamp,
    ),
    Function::strict(
        "duration",
        &["duration(dur) dur", "duration(string) dur"],
        to_duration,
    ),
    Function::strict("dyn", &["dyn(A) dyn"], identity),
    Function::strict("type", &["type(A) type<A>"], type_of),
];

/// Converting between strings and bytes keeps the size.
fn estimate_same_size(e: &Estimate<'_>) -> (Cost, Option<Size>) {
    match e.args {
        [a] if is_stringish(&a.ty) => (Cost::one(), Some(e.size(0))),
        _ => (Cost::one(), None),
    }
}

fn to_int<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let [v] = args.as_slice() else {
        return no_overload();
    };
    Ok(Val::Int(match v {
        Val::Int(i) => *i,
        Val::Uint(u) => i64::try_from(*u).map_err(|_| EvalError::Overflow("integer"))?,
        Val::Double(d) => {
            let d = *d;
            if !d.is_finite() || d <= -9.223372036854776e18 || d >= 9.223372036854776e18 {
                return Err(EvalError::Overflow("integer"));
            }
            d as i64
        }
        Val::Ts(t) => t.timestamp(),
        Val::Dur(d) => d.num_nanoseconds().unwrap_or(i64::MAX),
        v => match v.as_str() {
            Some(s) => match s.parse() {
                Ok(i) => i,
                Err(_) => return invalid(format!("cannot convert {} to int", v.display())),
            },
            None => return no_overload(),
        },
    }))
}

fn to_uint<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let [v] = args.as_slice() else {
        return no_overload();
    };
    let overflow = EvalError::Overflow("unsigned integer");
    Ok(Val::Uint(match v {
        Val::Uint(u) => *u,
        Val::Int(i) => u64::try_from(*i).map_err(|_| overflow)?,
        Val::Double(d) => {
            if !(0.0..1.8446744073709552e19).contains(d) {
                return Err(overflow);
            }
            *d as u64
        }
        v => match v.as_str() {
            Some(s) => match s.parse() {
                Ok(u) => u,
                Err(_) => return invalid(format!("cannot convert {} to uint", v.display())),
            },
            None => return no_overload(),
        },
    }))
}

fn to_double<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let [v] = args.as_slice() else {
        return no_overload();
    };
    Ok(Val::Double(match v {
        Val::Double(d) => *d,
        Val::Int(i) => *i as f64,
        Val::Uint(u) => *u as f64,
        v => match v.as_str() {
            Some(s) => match s.parse() {
                Ok(d) => d,
                Err(_) => return invalid(format!("cannot convert {} to double", v.display())),
            },
            None => return no_overload(),
        },
    }))
}

fn to_string<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let mut it = args.into_iter();
    let (Some(v), None) = (it.next(), it.next()) else {
        return no_overload();
    };
    Ok(Val::str(match &v {
        Val::Str(_) | Val::JStr(_) => return Ok(v),
        Val::Int(i) => i.to_string(),
        Val::Uint(u) => u.to_string(),
        Val::Double(d) => go_float(*d),
        Val::Bool(b) => b.to_string(),
        Val::Bytes(b) => match std::str::from_utf8(b) {
            Ok(s) => s.to_string(),
            Err(_) => return invalid("invalid UTF-8 in bytes, cannot convert to string"),
        },
        Val::Ts(t) => timestamp_string(*t),
        Val::Dur(d) => duration_string(*d),
        Val::Ext(e) => match &**e {
            Ext::Ip(ip) => ip.to_string(),
            Ext::Cidr(ip, p) => format!("{ip}/{p}"),
            _ => return no_overload(),
        },
        _ => return no_overload(),
    }))
}

fn to_bytes<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let mut it = args.into_iter();
    let (Some(v), None) = (it.next(), it.next()) else {
        return no_overload();
    };
    match &v {
        Val::Bytes(_) => Ok(v),
        v => match v.as_str() {
            Some(s) => Ok(Val::Bytes(s.as_bytes().into())),
            None => no_overload(),
        },
    }
}

fn to_bool<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let mut it = args.into_iter();
    let (Some(v), None) = (it.next(), it.next()) else {
        return no_overload();
    };
    match &v {
        Val::Bool(_) => Ok(v),
        v => match v.as_str() {
            Some("true" | "True" | "TRUE" | "t" | "1") => Ok(Val::Bool(true)),
            Some("false" | "False" | "FALSE" | "f" | "0") => Ok(Val::Bool(false)),
            Some(s) => invalid(format!(
                "type conversion error from 'string' to 'bool': {s}"
            )),
            None => no_overload(),
        },
    }
}

fn to_timestamp<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let mut it = args.into_iter();
    let (Some(v), None) = (it.next(), it.next()) else {
        return no_overload();
    };
    match &v {
        Val::Ts(_) => Ok(v),
        Val::Int(i) => Ok(Val::Ts(
            Utc.timestamp_opt(*i, 0)
                .single()
                .ok_or(EvalError::Overflow("timestamp"))?,
        )),
        v => match v.as_str() {
            Some(s) => match chrono::DateTime::parse_from_rfc3339(s) {
                Ok(t) => Ok(Val::Ts(t.with_timezone(&Utc))),
                Err(_) => {
                    invalid("type conversion error from 'string' to 'google.protobuf.Timestamp'")
                }
            },
            None => no_overload(),
        },
    }
}

fn to_duration<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let mut it = args.into_iter();
    let (Some(v), None) = (it.next(), it.next()) else {
        return no_overload();
    };
    match &v {
        Val::Dur(_) => Ok(v),
        v => match v.as_str() {
            Some(s) => match parse_go_duration(s) {
                Some(d) => Ok(Val::Dur(d)),
                None => {
                    invalid("type conversion error from 'string' to 'google.protobuf.Duration'")
                }
            },
            None => no_overload(),
        },
    }
}

fn identity<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let mut it = args.into_iter();
    match (it.next(), it.next()) {
        (Some(v), None) => Ok(v),
        _ => no_overload(),
    }
}

fn type_of<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    match args.as_slice() {
        [v] => Ok(Val::Type(Rc::from(v.type_name()))),
        _ => no_overload(),
    }
}

/// Go's `strconv.FormatFloat(f, 'g', -1, 64)`, which CEL's `string(double)` uses.
pub fn go_float(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        };
    }
    if f == 0.0 {
        return if f.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let e = format!("{f:e}");
    let (mant, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{mant}e{sign}{:02}", exp.abs());
    }
    format!("{f}")
}
