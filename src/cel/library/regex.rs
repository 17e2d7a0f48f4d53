//! Regular expressions: the standard `matches` and the Kubernetes regex library's `find` and
//! `findAll`. Patterns are RE2 (translated to the `regex` crate's syntax); a literal pattern is
//! compiled once with the rule, and rejected then if invalid.
//!
//! Cost: the string traversal times the pattern length (0.25 a character), as the apiserver's.

use regex::Regex;

use super::{list, no_overload, size_at, Ctx, Estimate, Function, R};
use crate::cel::cost::{mul_f, Cost, Size, REGEX_LENGTH, STRING_TRAVERSAL};
use crate::cel::error::{EvalError, InvalidRegex};
use crate::cel::value::Val;

/// The functions of this family, for the registry.
pub(super) const FUNCTIONS: &[Function] = &[
    Function::strict(
        "matches",
        &["string.matches(string) bool", "matches(string,string) bool"],
        matches,
    )
    .estimate(estimate_matches)
    .cost(cost_regex)
    .regex_arg(1),
    Function::strict("find", &["string.find(string) string"], find)
        .estimate(estimate_find)
        .cost(cost_regex)
        .regex_arg(1),
    Function::strict(
        "findAll",
        &[
            "string.findAll(string) list<string>",
            "string.findAll(string,int) list<string>",
        ],
        find_all,
    )
    .estimate(estimate_find)
    .cost(cost_regex)
    .regex_arg(1),
];

/// Compiles a CEL (RE2) regular expression.
pub fn compile_regex(p: &str) -> Result<Regex, InvalidRegex> {
    let translated =
        crate::schema::pattern::translate(p).map_err(|e| InvalidRegex(e.to_string()))?;
    regex::RegexBuilder::new(&translated)
        .size_limit(1 << 22)
        .build()
        .map_err(|e| InvalidRegex(format!("invalid regular expression: {e}")))
}

/// The traversal of the string (plus one) times the pattern's length.
fn search_cost(e: &Estimate<'_>) -> Cost {
    let s = e.size(0).add(Size::exact(1)).factor(STRING_TRAVERSAL);
    let r = e.size(1).factor(REGEX_LENGTH);
    s.mul(r)
}

fn estimate_matches(e: &Estimate<'_>) -> (Cost, Option<Size>) {
    if e.args.len() != 2 {
        return (Cost::one(), None);
    }
    (search_cost(e), None)
}

/// `find`/`findAll` results are no longer than the string searched.
fn estimate_find(e: &Estimate<'_>) -> (Cost, Option<Size>) {
    if e.args.len() < 2 {
        return (Cost::one(), None);
    }
    let size = Size {
        min: 0,
        max: e.size(0).max,
    };
    (search_cost(e), Some(size))
}

fn cost_regex(args: &[Val<'_>]) -> u64 {
    if args.len() < 2 {
        return 1;
    }
    mul_f(size_at(args, 0) + 1, STRING_TRAVERSAL)
        .saturating_mul(mul_f(size_at(args, 1), REGEX_LENGTH))
}

/// The string and the pattern of a call.
fn subject<'v>(args: &'v [Val<'_>]) -> Result<(&'v str, &'v str), EvalError> {
    match args {
        [s, p, ..] => match (s.as_str(), p.as_str()) {
            (Some(s), Some(p)) => Ok((s, p)),
            _ => no_overload(),
        },
        _ => no_overload(),
    }
}

fn matches<'a>(cx: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    if args.len() != 2 {
        return no_overload();
    }
    let (s, p) = subject(&args)?;
    Ok(Val::Bool(cx.regex(p)?.is_match(s)))
}

/// The first match, or `""`.
fn find<'a>(cx: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    if args.len() != 2 {
        return no_overload();
    }
    let (s, p) = subject(&args)?;
    Ok(Val::str(
        cx.regex(p)?.find(s).map(|m| m.as_str()).unwrap_or(""),
    ))
}

/// Every match, or the first `n` (all when `n` is negative).
fn find_all<'a>(cx: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let limit = match args.as_slice() {
        [_, _] => -1,
        [_, _, Val::Int(i)] => *i,
        _ => return no_overload(),
    };
    let (s, p) = subject(&args)?;
    let re = cx.regex(p)?;
    let it = re.find_iter(s).map(|m| Val::str(m.as_str()));
    let items: Vec<Val> = if limit < 0 {
        it.collect()
    } else {
        it.take(limit as usize).collect()
    };
    Ok(list(items))
}
