//! The Kubernetes semver library: `semver()`, `isSemver()` (optionally normalizing `v1.2` to
//! `1.2.0`), `major()`, `minor()`, `patch()` and comparisons, which (as the apiserver's) compare
//! the version core only.

use std::rc::Rc;

use super::{
    comparison, cost_traversal, estimate_traversal, invalid, no_overload, str_arg, Ctx, Function, R,
};
use crate::cel::error::EvalError;
use crate::cel::value::{Ext, Val};

/// The functions of this family, for the registry.
pub(super) const FUNCTIONS: &[Function] = &[
    Function::strict(
        "semver",
        &["semver(string) semver", "semver(string,bool) semver"],
        semver,
    )
    .estimate(estimate_traversal)
    .cost(cost_traversal),
    Function::strict(
        "isSemver",
        &["isSemver(string) bool", "isSemver(string,bool) bool"],
        semver,
    )
    .estimate(estimate_traversal)
    .cost(cost_traversal),
    Function::strict("major", &["semver.major() int"], part),
    Function::strict("minor", &["semver.minor() int"], part),
    Function::strict("patch", &["semver.patch() int"], part),
    Function::strict(
        "isGreaterThan",
        &["semver.isGreaterThan(semver) bool"],
        compare,
    ),
    Function::strict("isLessThan", &["semver.isLessThan(semver) bool"], compare),
    Function::strict("compareTo", &["semver.compareTo(semver) int"], compare),
];

/// `semver(s[, normalize])` and `isSemver(s[, normalize])`.
fn semver<'a>(cx: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let (s, normalize) = match args.as_slice() {
        [s] => (str_arg(s)?, false),
        [s, n] => (str_arg(s)?, matches!(n, Val::Bool(true))),
        _ => return no_overload(),
    };
    let parsed = parse_semver(s, normalize);
    if cx.name == "isSemver" {
        return Ok(Val::Bool(parsed.is_some()));
    }
    match parsed {
        Some((a, b, c, pre)) => Ok(Val::Ext(Rc::new(Ext::Semver(a, b, c, pre)))),
        None => invalid(format!("could not parse semver: {s}")),
    }
}

/// The version core of a value, else no overload.
fn core(v: &Val<'_>) -> Result<(u64, u64, u64), EvalError> {
    match v {
        Val::Ext(e) => match &**e {
            Ext::Semver(a, b, c, _) => Ok((*a, *b, *c)),
            _ => no_overload(),
        },
        _ => no_overload(),
    }
}

fn part<'a>(cx: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let [v] = args.as_slice() else {
        return no_overload();
    };
    let (major, minor, patch) = core(v)?;
    Ok(Val::Int(match cx.name {
        "major" => major,
        "minor" => minor,
        _ => patch,
    } as i64))
}

fn compare<'a>(cx: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let [a, b] = args.as_slice() else {
        return no_overload();
    };
    Ok(comparison(cx.name, core(a)?.cmp(&core(b)?)))
}

/// Parses `major.minor.patch[-pre][+build]`; with `normalize`, a leading `v`, missing minor
/// and patch, and leading zeros are accepted.
fn parse_semver(s: &str, normalize: bool) -> Option<(u64, u64, u64, String)> {
    let mut s = s;
    if normalize {
        s = s.strip_prefix('v').unwrap_or(s);
    }
    let (core, pre) = match s.split_once(['-', '+']) {
        Some((c, p)) => (c, p.to_string()),
        None => (s, String::new()),
    };
    let parts: Vec<&str> = core.split('.').collect();
    let num = |p: &str| -> Option<u64> {
        if p.is_empty() || (!normalize && p.len() > 1 && p.starts_with('0')) {
            return None;
        }
        p.parse().ok()
    };
    match (parts.len(), normalize) {
        (3, _) => Some((num(parts[0])?, num(parts[1])?, num(parts[2])?, pre)),
        (2, true) => Some((num(parts[0])?, num(parts[1])?, 0, pre)),
        (1, true) => Some((num(parts[0])?, 0, 0, pre)),
        _ => None,
    }
}
