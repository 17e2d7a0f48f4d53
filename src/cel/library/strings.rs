//! Strings: the standard `contains`/`startsWith`/`endsWith` and cel-go's strings extension
//! (version 2, as Kubernetes enables it): `charAt`, `indexOf`, `lastIndexOf`, `lowerAscii`,
//! `upperAscii`, `replace`, `split`, `substring`, `trim`, `join`, `strings.quote` and `format`.
//!
//! Indexes count code points. Costs grow with the string traversed (0.1 a character), and
//! `replace`/`split`/`join` twice that, as they also build a result.

use cel::common::ast::{Expr, LiteralValue};

use super::conversions::go_float;
use super::time::{duration_string, timestamp_string};
use super::{
    cost_one, cost_traversal, invalid, list, list_arg, no_overload, size_at, str_arg, Ctx,
    Estimate, Function, R,
};
use crate::cel::cost::{mul_f, Cost, Size, STRING_TRAVERSAL, UNKNOWN};
use crate::cel::error::EvalError;
use crate::cel::types::Ty;
use crate::cel::value::Val;

/// The functions of this family, for the registry.
pub(super) const FUNCTIONS: &[Function] = &[
    Function::strict("contains", &["string.contains(string) bool"], contains)
        .estimate(estimate_contains)
        .cost(cost_contains),
    Function::strict(
        "startsWith",
        &["string.startsWith(string) bool"],
        starts_with,
    )
    .estimate(estimate_affix)
    .cost(cost_affix),
    Function::strict("endsWith", &["string.endsWith(string) bool"], ends_with)
        .estimate(estimate_affix)
        .cost(cost_affix),
    Function::strict("charAt", &["string.charAt(int) string"], char_at).estimate(estimate_char),
    Function::strict(
        "indexOf",
        &[
            "string.indexOf(string) int",
            "string.indexOf(string,int) int",
        ],
        index_of,
    ),
    Function::strict(
        "lastIndexOf",
        &[
            "string.lastIndexOf(string) int",
            "string.lastIndexOf(string,int) int",
        ],
        index_of,
    ),
    Function::strict("lowerAscii", &["string.lowerAscii() string"], lower_ascii)
        .estimate(estimate_copy)
        .cost(cost_traversal),
    Function::strict("upperAscii", &["string.upperAscii() string"], upper_ascii)
        .estimate(estimate_copy)
        .cost(cost_traversal),
    Function::strict(
        "replace",
        &[
            "string.replace(string,string) string",
            "string.replace(string,string,int) string",
        ],
        replace,
    )
    .estimate(estimate_replace)
    .cost(cost_build),
    Function::strict(
        "split",
        &[
            "string.split(string) list<string>",
            "string.split(string,int) list<string>",
        ],
        split,
    )
    .estimate(estimate_split)
    .cost(cost_build),
    Function::strict(
        "substring",
        &[
            "string.substring(int) string",
            "string.substring(int,int) string",
        ],
        substring,
    )
    .estimate(estimate_copy)
    .cost(cost_traversal),
    Function::strict("trim", &["string.trim() string"], trim)
        .estimate(estimate_copy)
        .cost(cost_traversal),
    Function::strict(
        "join",
        &[
            "list<string>.join() string",
            "list<string>.join(string) string",
        ],
        join,
    )
    .estimate(estimate_join)
    .cost(cost_join),
    Function::strict("strings.quote", &["strings.quote(string) string"], quote_fn)
        .estimate(estimate_unknown_size)
        .cost(cost_join),
    Function::strict("format", &["string.format(list<dyn>) string"], format)
        .estimate(estimate_unknown_size)
        .cost(cost_join),
];

/// `contains` compares the substring at every position.
fn estimate_contains(e: &Estimate<'_>) -> (Cost, Option<Size>) {
    if e.args.len() != 2 {
        return (Cost::one(), None);
    }
    let s = e.size(0).factor(STRING_TRAVERSAL);
    let sub = e.size(1).factor(STRING_TRAVERSAL);
    (s.mul(sub), None)
}

fn cost_contains(args: &[Val<'_>]) -> u64 {
    if args.len() != 2 {
        return cost_one(args);
    }
    mul_f(size_at(args, 0), STRING_TRAVERSAL)
        .saturating_mul(mul_f(size_at(args, 1), STRING_TRAVERSAL))
}

/// `startsWith`/`endsWith` traverse the affix.
fn estimate_affix(e: &Estimate<'_>) -> (Cost, Option<Size>) {
    if e.args.len() != 2 {
        return (Cost::one(), None);
    }
    (e.size(1).factor(STRING_TRAVERSAL), None)
}

fn cost_affix(args: &[Val<'_>]) -> u64 {
    mul_f(size_at(args, 1), STRING_TRAVERSAL)
}

fn estimate_char(_: &Estimate<'_>) -> (Cost, Option<Size>) {
    (Cost::one(), Some(Size { min: 0, max: 1 }))
}

/// Functions that copy (part of) their receiver: a traversal, and a result no larger.
fn estimate_copy(e: &Estimate<'_>) -> (Cost, Option<Size>) {
    (e.size(0).factor(STRING_TRAVERSAL), Some(e.size(0)))
}

/// The result may grow by the replacement for every match.
fn estimate_replace(e: &Estimate<'_>) -> (Cost, Option<Size>) {
    if e.args.len() < 3 {
        return (Cost::one(), None);
    }
    let (s, from, with) = (e.size(0), e.size(1), e.size(2));
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

/// At most one element a character, or the literal limit.
fn estimate_split(e: &Estimate<'_>) -> (Cost, Option<Size>) {
    let s = e.size(0);
    let mut max = s.max;
    if let Some(Expr::Literal(LiteralValue::Int(i))) = e.exprs.get(2).map(|x| &x.expr) {
        max = (*i.inner()).max(0) as u64;
    }
    (s.factor(2.0 * STRING_TRAVERSAL), Some(Size { min: 0, max }))
}

/// The elements and the separators between them.
fn estimate_join(e: &Estimate<'_>) -> (Cost, Option<Size>) {
    let n = e.size(0);
    let el = match e.args.first().map(|a| (a.ty.norm(), a.elem_size)) {
        Some((_, Some(es))) => es,
        Some((Ty::List(elem), None)) => match &*elem {
            Ty::Schema(d) => Size {
                min: 0,
                max: d.max_elements,
            },
            _ => UNKNOWN,
        },
        _ => UNKNOWN,
    };
    let mut size = n.mul(el);
    if e.args.len() > 1 {
        let seps = Size {
            min: n.min.saturating_sub(1),
            max: n.max.saturating_sub(1),
        };
        size = size.add(e.size(1).mul(seps));
    }
    (size.factor(STRING_TRAVERSAL), Some(size))
}

fn estimate_unknown_size(_: &Estimate<'_>) -> (Cost, Option<Size>) {
    (Cost::one(), Some(UNKNOWN))
}

/// Functions that traverse their receiver and build a result of the same size.
fn cost_build(args: &[Val<'_>]) -> u64 {
    mul_f(size_at(args, 0), 2.0 * STRING_TRAVERSAL).max(1)
}

/// Functions that build a result from their receiver (or its elements when it is a list).
fn cost_join(args: &[Val<'_>]) -> u64 {
    let total = args
        .first()
        .and_then(Val::list_items)
        .map(|l| l.iter().fold(0u64, |t, x| t.saturating_add(x.cost_size())))
        .unwrap_or_else(|| size_at(args, 0));
    mul_f(total, 2.0 * STRING_TRAVERSAL).max(1)
}

/// The two strings of a call on a string with a string argument.
fn two_strs<'v>(args: &'v [Val<'_>]) -> Result<(&'v str, &'v str), EvalError> {
    match args {
        [a, b] => match (a.as_str(), b.as_str()) {
            (Some(x), Some(y)) => Ok((x, y)),
            _ => no_overload(),
        },
        _ => no_overload(),
    }
}

fn contains<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let (s, sub) = two_strs(&args)?;
    Ok(Val::Bool(s.contains(sub)))
}

fn starts_with<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let (s, prefix) = two_strs(&args)?;
    Ok(Val::Bool(s.starts_with(prefix)))
}

fn ends_with<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let (s, suffix) = two_strs(&args)?;
    Ok(Val::Bool(s.ends_with(suffix)))
}

fn char_at<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let [s, Val::Int(i)] = args.as_slice() else {
        return no_overload();
    };
    let s = str_arg(s)?;
    let len = s.chars().count() as i64;
    if *i < 0 || *i > len {
        return Err(EvalError::IndexOutOfRange(*i));
    }
    Ok(Val::str(
        s.chars()
            .nth(*i as usize)
            .map(String::from)
            .unwrap_or_default(),
    ))
}

/// `indexOf`/`lastIndexOf` of a substring, from an optional code point offset.
fn index_of<'a>(cx: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let (s, sub, offset) = match args.as_slice() {
        [s, sub] => (str_arg(s)?, sub, None),
        [s, sub, offset] => (str_arg(s)?, sub, Some(offset)),
        _ => return no_overload(),
    };
    let s: Vec<char> = s.chars().collect();
    let sub: Vec<char> = str_arg(sub)?.chars().collect();
    let start = match offset {
        Some(Val::Int(i)) => {
            if *i < 0 || *i as usize > s.len() {
                return Err(EvalError::IndexOutOfRange(*i));
            }
            Some(*i as usize)
        }
        None => None,
        Some(_) => return no_overload(),
    };
    let matches_at = |i: usize| i + sub.len() <= s.len() && s[i..i + sub.len()] == sub[..];
    let found = if cx.name == "lastIndexOf" {
        if sub.len() > s.len() {
            None
        } else {
            let hi = start
                .unwrap_or(s.len())
                .min(s.len().saturating_sub(sub.len()));
            (0..=hi).rev().find(|&i| matches_at(i))
        }
    } else {
        (start.unwrap_or(0)..=s.len()).find(|&i| matches_at(i))
    };
    Ok(Val::Int(found.map(|i| i as i64).unwrap_or(-1)))
}

fn lower_ascii<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    match args.as_slice() {
        [s] => Ok(Val::str(str_arg(s)?.to_ascii_lowercase())),
        _ => no_overload(),
    }
}

fn upper_ascii<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    match args.as_slice() {
        [s] => Ok(Val::str(str_arg(s)?.to_ascii_uppercase())),
        _ => no_overload(),
    }
}

fn trim<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    match args.as_slice() {
        [s] => Ok(Val::str(str_arg(s)?.trim())),
        _ => no_overload(),
    }
}

/// An optional trailing `int` argument (a limit or an end), `default` when absent.
fn int_at(args: &[Val<'_>], i: usize, default: i64) -> Result<i64, EvalError> {
    match args.get(i) {
        Some(Val::Int(n)) => Ok(*n),
        None => Ok(default),
        Some(_) => no_overload(),
    }
}

fn replace<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let [s, from, to, ..] = args.as_slice() else {
        return no_overload();
    };
    if args.len() > 4 {
        return no_overload();
    }
    let (Some(s), Some(from), Some(to)) = (s.as_str(), from.as_str(), to.as_str()) else {
        return no_overload();
    };
    let limit = int_at(&args, 3, -1)?;
    Ok(Val::str(if limit < 0 {
        s.replace(from, to)
    } else {
        s.replacen(from, to, limit as usize)
    }))
}

fn split<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let [s, sep, ..] = args.as_slice() else {
        return no_overload();
    };
    if args.len() > 3 {
        return no_overload();
    }
    let (Some(s), Some(sep)) = (s.as_str(), sep.as_str()) else {
        return no_overload();
    };
    let limit = int_at(&args, 2, -1)?;
    let parts: Vec<Val> = if limit == 0 {
        Vec::new()
    } else if sep.is_empty() {
        split_chars(s, limit)
    } else if limit < 0 {
        s.split(sep).map(Val::str).collect()
    } else {
        s.splitn(limit as usize, sep).map(Val::str).collect()
    };
    Ok(list(parts))
}

/// Splitting at the empty string: one element a character, the last one taking the rest.
fn split_chars<'a>(s: &str, limit: i64) -> Vec<Val<'a>> {
    let chars: Vec<String> = s.chars().map(String::from).collect();
    if limit > 0 && (limit as usize) < chars.len() {
        let mut v: Vec<Val> = chars[..limit as usize - 1]
            .iter()
            .map(|c| Val::str(c.as_str()))
            .collect();
        v.push(Val::str(chars[limit as usize - 1..].concat()));
        v
    } else {
        chars.iter().map(|c| Val::str(c.as_str())).collect()
    }
}

fn substring<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let [s, Val::Int(start), ..] = args.as_slice() else {
        return no_overload();
    };
    if args.len() > 3 {
        return no_overload();
    }
    let chars: Vec<char> = str_arg(s)?.chars().collect();
    let start = *start;
    let end = int_at(&args, 2, chars.len() as i64)?;
    if start < 0 || start as usize > chars.len() {
        return Err(EvalError::IndexOutOfRange(start));
    }
    if end < 0 || end as usize > chars.len() {
        return Err(EvalError::IndexOutOfRange(end));
    }
    if start > end {
        return invalid(format!(
            "invalid substring range. start: {start}, end: {end}"
        ));
    }
    Ok(Val::str(
        chars[start as usize..end as usize]
            .iter()
            .collect::<String>(),
    ))
}

fn join<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let (items, sep) = match args.as_slice() {
        [l] => (list_arg(l)?, ""),
        [l, sep] => (list_arg(l)?, sep.as_str().unwrap_or("")),
        _ => return no_overload(),
    };
    let mut parts = Vec::with_capacity(items.len());
    for i in &items {
        parts.push(str_arg(i)?.to_string());
    }
    Ok(Val::str(parts.join(sep)))
}

fn quote_fn<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    match args.as_slice() {
        [s] => Ok(Val::str(quote(str_arg(s)?))),
        _ => no_overload(),
    }
}

/// `strings.quote`: a double-quoted string with CEL's escapes.
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\u{b}' => out.push_str("\\v"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn format<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let [f, items] = args.as_slice() else {
        return no_overload();
    };
    let Some(f) = f.as_str() else {
        return no_overload();
    };
    Ok(Val::str(format_string(f, &list_arg(items)?)?))
}

/// `'%s is %d'.format([a, b])`: the clauses `%s %d %f %e %x %X %o %b` (with `.N` precision for
/// `%f`/`%e`) and `%%`.
fn format_string(f: &str, args: &[Val]) -> Result<String, EvalError> {
    let mut out = String::new();
    let mut chars = f.chars().peekable();
    let mut next = 0;
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        if chars.peek() == Some(&'%') {
            chars.next();
            out.push('%');
            continue;
        }
        let mut prec = None;
        if chars.peek() == Some(&'.') {
            chars.next();
            let mut digits = String::new();
            while let Some(d) = chars.peek().filter(|d| d.is_ascii_digit()) {
                digits.push(*d);
                chars.next();
            }
            prec = digits.parse().ok();
        }
        let Some(verb) = chars.next() else {
            return invalid("unexpected end of format string");
        };
        let Some(arg) = args.get(next) else {
            return invalid(format!("index {next} out of range"));
        };
        next += 1;
        out.push_str(&format_arg(arg, verb, prec)?);
    }
    Ok(out)
}

/// One formatting clause applied to one value.
fn format_arg(v: &Val, verb: char, prec: Option<usize>) -> Result<String, EvalError> {
    match verb {
        's' => format_string_clause(v),
        'd' => match v {
            Val::Int(i) => Ok(i.to_string()),
            Val::Uint(u) => Ok(u.to_string()),
            _ => invalid("decimal clause can only be used on integers"),
        },
        'f' | 'e' => format_fixed(v, verb, prec),
        'x' | 'X' | 'o' | 'b' => format_radix(v, verb),
        c => invalid(format!(
            "could not parse formatting clause: unrecognized formatting clause \"{c}\""
        )),
    }
}

fn format_string_clause(v: &Val) -> Result<String, EvalError> {
    Ok(match v {
        Val::List(_) | Val::JList(..) => {
            let items = v.list_items().unwrap_or_default();
            let parts: Result<Vec<String>, EvalError> =
                items.iter().map(format_string_clause).collect();
            format!("[{}]", parts?.join(", "))
        }
        Val::Double(d) => go_float(*d),
        Val::Ts(t) => timestamp_string(*t),
        Val::Dur(d) => duration_string(*d),
        Val::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        Val::Null => "null".into(),
        Val::Str(_) | Val::JStr(_) => v.as_str().unwrap_or("").to_string(),
        Val::Int(i) => i.to_string(),
        Val::Uint(u) => u.to_string(),
        Val::Bool(b) => b.to_string(),
        Val::Type(t) => t.to_string(),
        _ => return invalid("string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps"),
    })
}

fn format_fixed(v: &Val, verb: char, prec: Option<usize>) -> Result<String, EvalError> {
    let d = match v {
        Val::Double(d) => *d,
        Val::Int(i) => *i as f64,
        Val::Uint(u) => *u as f64,
        _ => return invalid("fixed-point clause can only be used on doubles"),
    };
    let p = prec.unwrap_or(6);
    if verb == 'f' {
        return Ok(format!("{d:.p$}"));
    }
    let s = format!("{d:.p$e}");
    let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
    let e: i32 = e.parse().unwrap_or(0);
    Ok(format!(
        "{m}e{}{:02}",
        if e < 0 { '-' } else { '+' },
        e.abs()
    ))
}

fn format_radix(v: &Val, verb: char) -> Result<String, EvalError> {
    Ok(match (v, verb) {
        (Val::Int(i), 'x') => format!("{i:x}"),
        (Val::Int(i), 'X') => format!("{i:X}"),
        (Val::Int(i), 'o') => format!("{i:o}"),
        (Val::Int(i), _) => format!("{i:b}"),
        (Val::Uint(i), 'x') => format!("{i:x}"),
        (Val::Uint(i), 'X') => format!("{i:X}"),
        (Val::Uint(i), 'o') => format!("{i:o}"),
        (Val::Uint(i), _) => format!("{i:b}"),
        (v, 'x' | 'X') if v.as_str().is_some() => {
            let h: String = v
                .as_str()
                .unwrap_or("")
                .bytes()
                .map(|b| format!("{b:02x}"))
                .collect();
            if verb == 'X' {
                h.to_uppercase()
            } else {
                h
            }
        }
        _ => return invalid("only integers, byte buffers, and strings can be formatted as hex"),
    })
}
