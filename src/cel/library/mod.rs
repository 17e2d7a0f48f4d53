//! Every function of the Kubernetes CEL environment, one file per family: cel-go's standard
//! library ([`operators`], [`math`], [`conversions`], [`time`], [`regex`]), its extensions
//! ([`strings`], [`sets`], [`optionals`]) and the Kubernetes libraries ([`lists`], [`urls`],
//! [`ip_cidr`], [`quantity`], [`semver`], [`mod@format`]).
//!
//! A [`Function`] keeps together what used to be spread over three places and had to agree: its
//! overloads (what the checker resolves), its cost (the static estimate the CRD is checked
//! against, and the run-time cost the evaluator charges) and its implementation. [`lookup`]
//! finds the functions of a name in a registry built once. Macros (`all`, `exists`, `map`,
//! `cel.bind`...) are not functions: they are expanded by the parser (`super::macros`).

mod authz;
mod conversions;
mod format;
mod ip_cidr;
mod lists;
mod math;
mod operators;
mod optionals;
mod quantity;
mod regex;
mod semver;
mod sets;
mod signature;
mod strings;
mod time;
mod urls;

#[cfg(test)]
mod tests;

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::rc::Rc;
use std::sync::LazyLock;

use cel::common::ast::IdedExpr;

use super::check::Info;
use super::cost::{mul_f, Cost, Size, STRING_TRAVERSAL, UNKNOWN};
use super::decl::ListKind;
use super::error::EvalError;
use super::types::Ty;
use super::value::{ListV, Val};

pub use self::regex::compile_regex;
pub use authz::{AuthorizeFn, Authz, AuthzDecision, AuthzQuestion};
pub use conversions::go_float;
pub use quantity::Quantity;
pub use signature::Overload;
pub use time::{parse_go_duration, parse_timestamp};
pub use urls::Url;

/// The result of a function.
pub type R<'a> = Result<Val<'a>, EvalError>;

/// A function's implementation: evaluated arguments (the receiver first) in, value out.
pub type Impl = for<'a> fn(&Ctx<'_>, Vec<Val<'a>>) -> R<'a>;

/// How a function is evaluated.
#[derive(Debug, Clone, Copy)]
pub enum Eval {
    /// Called with its evaluated arguments.
    Strict(Impl),
    /// Evaluated by the interpreter itself, because its arguments are evaluated lazily or their
    /// errors absorbed (`_&&_`, `_||_`, `_?_:_`, `@not_strictly_false`).
    Special,
}

/// One CEL function of one family: its overloads, its cost and its implementation.
#[derive(Debug, Clone, Copy)]
pub struct Function {
    /// The name calls use (`startsWith`, `_+_`, `sets.contains`, `format.dns1123Label`).
    pub name: &'static str,
    /// The overloads, one a line in the signature language of [`signature`]
    /// (`string.startsWith(string) bool`, `sets.contains(list<A>,list<A>) bool`).
    pub signatures: &'static [&'static str],
    /// The static cost of a call (its arguments excluded) and the size of its result.
    pub estimate: fn(&Estimate<'_>) -> (Cost, Option<Size>),
    /// The run-time cost of a call (its arguments excluded), charged before it runs.
    pub cost: fn(&[Val<'_>]) -> u64,
    /// What a call does.
    pub eval: Eval,
    /// The argument (the receiver first) that is a regular expression: a literal there is
    /// compiled when the rule is, and rejected then if invalid.
    pub regex_arg: Option<usize>,
}

impl Function {
    /// A function called with evaluated arguments, of cost 1.
    pub const fn strict(name: &'static str, signatures: &'static [&'static str], f: Impl) -> Self {
        Function {
            name,
            signatures,
            estimate: estimate_one,
            cost: cost_one,
            eval: Eval::Strict(f),
            regex_arg: None,
        }
    }

    /// A function the interpreter evaluates itself.
    pub const fn special(name: &'static str, signatures: &'static [&'static str]) -> Self {
        Function {
            name,
            signatures,
            estimate: estimate_one,
            cost: cost_one,
            eval: Eval::Special,
            regex_arg: None,
        }
    }

    /// With this static estimate.
    pub const fn estimate(mut self, f: fn(&Estimate<'_>) -> (Cost, Option<Size>)) -> Self {
        self.estimate = f;
        self
    }

    /// With this run-time cost.
    pub const fn cost(mut self, f: fn(&[Val<'_>]) -> u64) -> Self {
        self.cost = f;
        self
    }

    /// With a regular expression at argument `i`.
    pub const fn regex_arg(mut self, i: usize) -> Self {
        self.regex_arg = Some(i);
        self
    }
}

/// What a function's static estimate sees of a call.
pub struct Estimate<'e> {
    /// The checked arguments, the receiver first.
    pub args: &'e [Info],
    /// Their expressions (literal arguments bound some sizes).
    pub exprs: &'e [&'e IdedExpr],
    /// The overload the checker resolved (the last one matching, for `dyn` arguments).
    pub overload: &'e Overload,
}

impl Estimate<'_> {
    /// The size range of argument `i` (unknown when absent).
    pub fn size(&self, i: usize) -> Size {
        self.args.get(i).map(Info::size).unwrap_or(UNKNOWN)
    }

    /// The static type of argument `i`, one level down (see [`Ty::norm`]).
    pub fn ty(&self, i: usize) -> Option<Ty> {
        self.args.get(i).map(|a| a.ty.norm())
    }
}

/// What an implementation may use besides its arguments.
pub struct Ctx<'r> {
    /// The name the function was called by (families share implementations between names).
    pub name: &'static str,
    regexes: &'r HashMap<String, ::regex::Regex>,
}

impl<'r> Ctx<'r> {
    /// A context for calling `name` with the rule's precompiled regular expressions.
    pub fn new(name: &'static str, regexes: &'r HashMap<String, ::regex::Regex>) -> Ctx<'r> {
        Ctx { name, regexes }
    }

    /// A regular expression: precompiled when it was a literal of the rule, else compiled now.
    pub fn regex(&self, p: &str) -> Result<Cow<'r, ::regex::Regex>, EvalError> {
        match self.regexes.get(p) {
            Some(r) => Ok(Cow::Borrowed(r)),
            None => Ok(Cow::Owned(compile_regex(p)?)),
        }
    }
}

/// The default estimate: cost 1, size unknown.
pub fn estimate_one(_: &Estimate<'_>) -> (Cost, Option<Size>) {
    (Cost::one(), None)
}

/// The default run-time cost: 1.
pub fn cost_one(_: &[Val<'_>]) -> u64 {
    1
}

/// The estimate of a function that traverses its first (string) argument once.
pub fn estimate_traversal(e: &Estimate<'_>) -> (Cost, Option<Size>) {
    (e.size(0).factor(STRING_TRAVERSAL), None)
}

/// The run-time cost of a function that traverses its first (string) argument once.
pub fn cost_traversal(args: &[Val<'_>]) -> u64 {
    mul_f(size_at(args, 0), STRING_TRAVERSAL).max(1)
}

/// The size the run-time cost uses of argument `i` (0 when absent).
pub fn size_at(args: &[Val<'_>], i: usize) -> u64 {
    args.get(i).map(Val::cost_size).unwrap_or(0)
}

/// Whether a static type is a string or bytes (the cost of those grows with their size).
pub fn is_stringish(t: &Ty) -> bool {
    matches!(t.norm(), Ty::String | Ty::Bytes)
}

/// The error of an argument no overload accepts.
pub fn no_overload<T>() -> Result<T, EvalError> {
    Err(EvalError::NoOverload)
}

/// A library function's rejection of a value, with the library's wording.
pub fn invalid<T>(msg: impl Into<String>) -> Result<T, EvalError> {
    Err(EvalError::Invalid(msg.into()))
}

/// A computed list.
pub fn list<'a>(items: Vec<Val<'a>>) -> Val<'a> {
    Val::List(Rc::new(ListV {
        items,
        kind: ListKind::Atomic,
    }))
}

/// The string of a value, else no overload.
pub fn str_arg<'v>(v: &'v Val<'_>) -> Result<&'v str, EvalError> {
    v.as_str().ok_or(EvalError::NoOverload)
}

/// The elements of a list value, else no overload.
pub fn list_arg<'a>(v: &Val<'a>) -> Result<Vec<Val<'a>>, EvalError> {
    v.list_items().ok_or(EvalError::NoOverload)
}

/// The functions of one name (usually one; more when families share a name, such as
/// `indexOf` of strings and of lists) and all their overloads.
#[derive(Debug)]
pub struct Entry {
    /// Every overload of the name, in declaration order (the checker keeps the last match).
    pub overloads: Vec<Overload>,
    /// The functions with the receiver type that selects each at run time.
    functions: Vec<(&'static Function, Option<Ty>)>,
}

impl Entry {
    /// The function a call with these argument values runs: the one whose receiver type the
    /// first argument has, else the first (which reports no overload).
    pub fn dispatch(&self, args: &[Val<'_>]) -> Option<&'static Function> {
        let first = self.functions.first().map(|(f, _)| *f);
        if self.functions.len() == 1 {
            return first;
        }
        let receiver = args.first()?;
        self.functions
            .iter()
            .find(|(_, t)| t.as_ref().is_some_and(|t| has_type(receiver, t)))
            .map(|(f, _)| *f)
            .or(first)
    }

    /// The argument of the name that is a regular expression, if any.
    pub fn regex_arg(&self) -> Option<usize> {
        self.functions.first().and_then(|(f, _)| f.regex_arg)
    }
}

/// Whether a value has a (receiver) type, for choosing between families of one name.
fn has_type(v: &Val<'_>, t: &Ty) -> bool {
    match t {
        Ty::String => v.as_str().is_some(),
        Ty::List(_) => matches!(v, Val::List(_) | Val::JList(..)),
        Ty::Opaque(name) => v.type_name() == *name,
        _ => false,
    }
}

/// Every family, in declaration order (which orders the overloads of shared names).
const FAMILIES: &[&[Function]] = &[
    operators::FUNCTIONS,
    math::FUNCTIONS,
    conversions::FUNCTIONS,
    time::FUNCTIONS,
    strings::FUNCTIONS,
    lists::FUNCTIONS,
    regex::FUNCTIONS,
    urls::FUNCTIONS,
    ip_cidr::FUNCTIONS,
    quantity::FUNCTIONS,
    semver::FUNCTIONS,
    self::format::FUNCTIONS,
    sets::FUNCTIONS,
    optionals::FUNCTIONS,
    authz::FUNCTIONS,
];

/// FNV-1a: function names are short, and looked up on every call.
#[derive(Default)]
struct NameHasher(u64);

impl Hasher for NameHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for b in bytes {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

type Registry = HashMap<&'static str, Entry, BuildHasherDefault<NameHasher>>;

static REGISTRY: LazyLock<Registry> = LazyLock::new(|| {
    let mut m = Registry::default();
    for f in FAMILIES.iter().flat_map(|family| family.iter()) {
        let overloads: Vec<Overload> = f.signatures.iter().map(|s| Overload::parse(f, s)).collect();
        let receiver = overloads.first().and_then(|o| o.params.first().cloned());
        let entry = m.entry(f.name).or_insert_with(|| Entry {
            overloads: Vec::new(),
            functions: Vec::new(),
        });
        entry.overloads.extend(overloads);
        entry.functions.push((f, receiver));
    }
    m
});

/// The functions of a name (`size`, `_+_`, `sets.contains`), `None` when none is declared.
pub fn lookup(name: &str) -> Option<&'static Entry> {
    REGISTRY.get(name)
}

/// The result of `isGreaterThan`, `isLessThan` or `compareTo` for an ordering.
pub fn comparison<'a>(name: &str, o: std::cmp::Ordering) -> Val<'a> {
    use std::cmp::Ordering::*;
    match name {
        "isGreaterThan" => Val::Bool(o == Greater),
        "isLessThan" => Val::Bool(o == Less),
        _ => Val::Int(match o {
            Less => -1,
            Equal => 0,
            Greater => 1,
        }),
    }
}
