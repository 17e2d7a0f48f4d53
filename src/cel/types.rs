//! Static CEL types for the checker, and the overload table of every function the Kubernetes CEL
//! environment declares (standard library, strings v2, sets, optional types, two-variable
//! comprehensions, and the Kubernetes lists/regex/url/ip/cidr/quantity/format/semver libraries).
//!
//! The table is written as one signature a line (`receiver.name(args) result`) and parsed once.

use std::collections::HashMap;
use std::fmt;
use std::sync::{Arc, LazyLock};

use super::decl::{Decl, Kind};

/// A static CEL type.
#[derive(Debug, Clone)]
pub enum Ty {
    /// `dyn`: anything, checked at run time.
    Dyn,
    /// `null_type`.
    Null,
    /// `bool`.
    Bool,
    /// `int`.
    Int,
    /// `uint`.
    Uint,
    /// `double`.
    Double,
    /// `string`.
    String,
    /// `bytes`.
    Bytes,
    /// `google.protobuf.Timestamp`.
    Timestamp,
    /// `google.protobuf.Duration`.
    Duration,
    /// `list(T)`.
    List(Box<Ty>),
    /// `map(K, V)`.
    Map(Box<Ty>, Box<Ty>),
    /// A value of the custom resource, typed by its schema node.
    Schema(Arc<Decl>),
    /// `type(T)`: a type value.
    Type(Box<Ty>),
    /// `optional_type(T)`.
    Opt(Box<Ty>),
    /// An opaque library type (`kubernetes.Quantity`, `net.IP`...).
    Opaque(&'static str),
    /// A type parameter of a signature (`A`, `B`).
    Param(u8),
    /// The type of an expression that already has an error (matches anything, reports nothing).
    Error,
}

impl Ty {
    /// The type one level down: a schema node as the plain CEL type it maps to (its children
    /// stay schema-typed so their size bounds are kept).
    pub fn norm(&self) -> Ty {
        match self {
            Ty::Schema(d) => match &d.kind {
                Kind::Bool => Ty::Bool,
                Kind::Int => Ty::Int,
                Kind::Double => Ty::Double,
                Kind::String => Ty::String,
                Kind::Bytes => Ty::Bytes,
                Kind::Timestamp => Ty::Timestamp,
                Kind::Duration => Ty::Duration,
                Kind::IntOrString => Ty::Dyn,
                Kind::List(e) => Ty::List(Box::new(Ty::Schema(e.clone()))),
                Kind::Map(e) => Ty::Map(Box::new(Ty::String), Box::new(Ty::Schema(e.clone()))),
                Kind::Object(_) => self.clone(),
            },
            t => t.clone(),
        }
    }

    /// Whether this is `dyn` (or an error, which behaves the same).
    pub fn is_dyn(&self) -> bool {
        matches!(self.norm(), Ty::Dyn | Ty::Error)
    }
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ty::Dyn | Ty::Error | Ty::Param(_) => write!(f, "dyn"),
            Ty::Null => write!(f, "null_type"),
            Ty::Bool => write!(f, "bool"),
            Ty::Int => write!(f, "int"),
            Ty::Uint => write!(f, "uint"),
            Ty::Double => write!(f, "double"),
            Ty::String => write!(f, "string"),
            Ty::Bytes => write!(f, "bytes"),
            Ty::Timestamp => write!(f, "google.protobuf.Timestamp"),
            Ty::Duration => write!(f, "google.protobuf.Duration"),
            Ty::List(e) => write!(f, "list({e})"),
            Ty::Map(k, v) => write!(f, "map({k}, {v})"),
            Ty::Schema(d) => match &d.kind {
                Kind::Object(_) => write!(f, "{}", d.name),
                _ => write!(f, "{}", self.norm()),
            },
            Ty::Type(t) => write!(f, "type({t})"),
            Ty::Opt(t) => write!(f, "optional_type({t})"),
            Ty::Opaque(n) => write!(f, "{n}"),
        }
    }
}

/// Type parameter bindings while matching one signature.
pub type Bindings = [Option<Ty>; 2];

/// Whether a value of type `arg` may be passed where `param` is declared, binding parameters.
pub fn assignable(param: &Ty, arg: &Ty, b: &mut Bindings) -> bool {
    if let Ty::Param(i) = param {
        let i = *i as usize;
        return match b[i].clone() {
            None => {
                b[i] = Some(arg.clone());
                true
            }
            Some(bound) => {
                if bound.is_dyn() && !arg.is_dyn() {
                    b[i] = Some(arg.clone());
                    true
                } else {
                    assignable(&bound, arg, &mut [None, None])
                }
            }
        };
    }
    let (p, a) = (param.norm(), arg.norm());
    match (&p, &a) {
        (Ty::Dyn | Ty::Error, _) | (_, Ty::Dyn | Ty::Error) => true,
        (Ty::Null, Ty::Null) => true,
        (Ty::Bool, Ty::Bool)
        | (Ty::Int, Ty::Int)
        | (Ty::Uint, Ty::Uint)
        | (Ty::Double, Ty::Double)
        | (Ty::String, Ty::String)
        | (Ty::Bytes, Ty::Bytes)
        | (Ty::Timestamp, Ty::Timestamp)
        | (Ty::Duration, Ty::Duration) => true,
        (Ty::List(x), Ty::List(y)) => assignable(x, y, b),
        (Ty::Map(k1, v1), Ty::Map(k2, v2)) => assignable(k1, k2, b) && assignable(v1, v2, b),
        (Ty::Opt(x), Ty::Opt(y)) => assignable(x, y, b),
        (Ty::Type(_), Ty::Type(_)) => true,
        (Ty::Opaque(x), Ty::Opaque(y)) => x == y,
        (Ty::Schema(x), Ty::Schema(y)) => Arc::ptr_eq(x, y) || same_shape(x, y),
        (Ty::Schema(_), Ty::Null) => true,
        _ => false,
    }
}

fn same_shape(x: &Decl, y: &Decl) -> bool {
    match (&x.kind, &y.kind) {
        (Kind::Object(a), Kind::Object(b)) => {
            a.len() == b.len()
                && a.iter()
                    .zip(b.iter())
                    .all(|((ka, fa), (kb, fb))| ka == kb && same_shape(&fa.decl, &fb.decl))
        }
        (Kind::List(a), Kind::List(b)) | (Kind::Map(a), Kind::Map(b)) => same_shape(a, b),
        (a, b) => std::mem::discriminant(a) == std::mem::discriminant(b),
    }
}

/// Substitutes bound parameters in a result type (unbound ones become `dyn`).
pub fn substitute(t: &Ty, b: &Bindings) -> Ty {
    match t {
        Ty::Param(i) => b[*i as usize].clone().unwrap_or(Ty::Dyn),
        Ty::List(e) => Ty::List(Box::new(substitute(e, b))),
        Ty::Map(k, v) => Ty::Map(Box::new(substitute(k, b)), Box::new(substitute(v, b))),
        Ty::Opt(e) => Ty::Opt(Box::new(substitute(e, b))),
        Ty::Type(e) => Ty::Type(Box::new(substitute(e, b))),
        t => t.clone(),
    }
}

/// One overload of a function.
#[derive(Debug, Clone)]
pub struct Overload {
    /// Called as `target.name(args)`.
    pub receiver: bool,
    /// Parameter types (the receiver first for member overloads).
    pub params: Vec<Ty>,
    /// Result type.
    pub result: Ty,
    /// A short id used by the cost model (`cidr_contains_ip_string`...).
    pub id: String,
}

const SIGNATURES: &str = "
!_(bool) bool
-_(int) int
-_(double) double
_&&_(bool,bool) bool
_||_(bool,bool) bool
_?_:_(bool,A,A) A
_==_(A,A) bool
_!=_(A,A) bool
_+_(int,int) int
_+_(uint,uint) uint
_+_(double,double) double
_+_(string,string) string
_+_(bytes,bytes) bytes
_+_(list<A>,list<A>) list<A>
_+_(ts,dur) ts
_+_(dur,ts) ts
_+_(dur,dur) dur
_-_(int,int) int
_-_(uint,uint) uint
_-_(double,double) double
_-_(ts,ts) dur
_-_(ts,dur) ts
_-_(dur,dur) dur
_*_(int,int) int
_*_(uint,uint) uint
_*_(double,double) double
_/_(int,int) int
_/_(uint,uint) uint
_/_(double,double) double
_%_(int,int) int
_%_(uint,uint) uint
_[_](list<A>,int) A
_[_](map<A,B>,A) B
_[?_](list<A>,int) opt<A>
_[?_](map<A,B>,A) opt<B>
_[_](opt<list<A>>,int) opt<A>
_[_](opt<map<A,B>>,A) opt<B>
_[?_](opt<list<A>>,int) opt<A>
_[?_](opt<map<A,B>>,A) opt<B>
@in(A,list<A>) bool
@in(A,map<A,B>) bool
@not_strictly_false(bool) bool
size(string) int
size(bytes) int
size(list<A>) int
size(map<A,B>) int
string.size() int
bytes.size() int
list<A>.size() int
map<A,B>.size() int
string.contains(string) bool
string.startsWith(string) bool
string.endsWith(string) bool
string.matches(string) bool
matches(string,string) bool
int(int) int
int(uint) int
int(double) int
int(string) int
int(ts) int
int(dur) int
uint(uint) uint
uint(int) uint
uint(double) uint
uint(string) uint
double(double) double
double(int) double
double(uint) double
double(string) double
string(string) string
string(int) string
string(uint) string
string(double) string
string(bool) string
string(bytes) string
string(ts) string
string(dur) string
string(ip) string
string(cidr) string
bytes(bytes) bytes
bytes(string) bytes
bool(bool) bool
bool(string) bool
timestamp(ts) ts
timestamp(string) ts
timestamp(int) ts
duration(dur) dur
duration(string) dur
dyn(A) dyn
type(A) type
ts.getFullYear() int
ts.getFullYear(string) int
ts.getMonth() int
ts.getMonth(string) int
ts.getDayOfYear() int
ts.getDayOfYear(string) int
ts.getDate() int
ts.getDate(string) int
ts.getDayOfMonth() int
ts.getDayOfMonth(string) int
ts.getDayOfWeek() int
ts.getDayOfWeek(string) int
ts.getHours() int
ts.getHours(string) int
ts.getMinutes() int
ts.getMinutes(string) int
ts.getSeconds() int
ts.getSeconds(string) int
ts.getMilliseconds() int
ts.getMilliseconds(string) int
dur.getHours() int
dur.getMinutes() int
dur.getSeconds() int
dur.getMilliseconds() int
string.charAt(int) string
string.indexOf(string) int
string.indexOf(string,int) int
string.lastIndexOf(string) int
string.lastIndexOf(string,int) int
string.lowerAscii() string
string.upperAscii() string
string.replace(string,string) string
string.replace(string,string,int) string
string.split(string) list<string>
string.split(string,int) list<string>
string.substring(int) string
string.substring(int,int) string
string.trim() string
list<string>.join() string
list<string>.join(string) string
strings.quote(string) string
string.format(list<dyn>) string
list<A>.isSorted() bool
list<A>.sum() A
list<A>.min() A
list<A>.max() A
list<A>.indexOf(A) int
list<A>.lastIndexOf(A) int
string.find(string) string
string.findAll(string) list<string>
string.findAll(string,int) list<string>
url(string) url
isURL(string) bool
url.getScheme() string
url.getHost() string
url.getHostname() string
url.getPort() string
url.getEscapedPath() string
url.getQuery() map<string,list<string>>
ip(string) ip
isIP(string) bool
ip.isCanonical(string) bool
ip.family() int
ip.isUnspecified() bool
ip.isLoopback() bool
ip.isLinkLocalMulticast() bool
ip.isLinkLocalUnicast() bool
ip.isGlobalUnicast() bool
cidr(string) cidr
isCIDR(string) bool
cidr.containsIP(ip) bool
cidr.containsIP(string) bool
cidr.containsCIDR(cidr) bool
cidr.containsCIDR(string) bool
cidr.ip() ip
cidr.masked() cidr
cidr.prefixLength() int
quantity(string) quantity
isQuantity(string) bool
quantity.sign() int
quantity.isInteger() bool
quantity.asInteger() int
quantity.asApproximateFloat() double
quantity.isGreaterThan(quantity) bool
quantity.isLessThan(quantity) bool
quantity.compareTo(quantity) int
quantity.add(quantity) quantity
quantity.add(int) quantity
quantity.sub(quantity) quantity
quantity.sub(int) quantity
semver(string) semver
semver(string,bool) semver
isSemver(string) bool
isSemver(string,bool) bool
semver.major() int
semver.minor() int
semver.patch() int
semver.isGreaterThan(semver) bool
semver.isLessThan(semver) bool
semver.compareTo(semver) int
format.named(string) opt<format>
format.dns1123Label() format
format.dns1123Subdomain() format
format.dns1035Label() format
format.qualifiedName() format
format.dns1123LabelPrefix() format
format.dns1123SubdomainPrefix() format
format.dns1035LabelPrefix() format
format.labelValue() format
format.uri() format
format.uuid() format
format.byte() format
format.date() format
format.datetime() format
format.validate(string) opt<list<string>>
sets.contains(list<A>,list<A>) bool
sets.equivalent(list<A>,list<A>) bool
sets.intersects(list<A>,list<A>) bool
optional.of(A) opt<A>
optional.ofNonZeroValue(A) opt<A>
optional.none() opt<dyn>
opt<A>.hasValue() bool
opt<A>.value() A
opt<A>.orValue(A) A
opt<A>.or(opt<A>) opt<A>
@mapInsert(map<A,B>,A,B) map<A,B>
";

/// Parses one type of the signature language.
fn parse_ty(s: &str) -> Ty {
    let s = s.trim();
    if let Some(inner) = s.strip_prefix("list<").and_then(|x| x.strip_suffix('>')) {
        return Ty::List(Box::new(parse_ty(inner)));
    }
    if let Some(inner) = s.strip_prefix("opt<").and_then(|x| x.strip_suffix('>')) {
        return Ty::Opt(Box::new(parse_ty(inner)));
    }
    if let Some(inner) = s.strip_prefix("map<").and_then(|x| x.strip_suffix('>')) {
        let (k, v) = split_top(inner);
        return Ty::Map(Box::new(parse_ty(k)), Box::new(parse_ty(v)));
    }
    match s {
        "A" => Ty::Param(0),
        "B" => Ty::Param(1),
        "int" => Ty::Int,
        "uint" => Ty::Uint,
        "double" => Ty::Double,
        "bool" => Ty::Bool,
        "string" => Ty::String,
        "bytes" => Ty::Bytes,
        "ts" => Ty::Timestamp,
        "dur" => Ty::Duration,
        "dyn" => Ty::Dyn,
        "type" => Ty::Type(Box::new(Ty::Dyn)),
        "null" => Ty::Null,
        "ip" => Ty::Opaque("net.IP"),
        "cidr" => Ty::Opaque("net.CIDR"),
        "url" => Ty::Opaque("kubernetes.URL"),
        "quantity" => Ty::Opaque("kubernetes.Quantity"),
        "format" => Ty::Opaque("kubernetes.NamedFormat"),
        "semver" => Ty::Opaque("kubernetes.Semver"),
        _ => Ty::Dyn,
    }
}

/// Splits `a,b` at the top-level comma.
fn split_top(s: &str) -> (&str, &str) {
    let mut depth = 0;
    for (i, c) in s.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            ',' if depth == 0 => return (&s[..i], &s[i + 1..]),
            _ => {}
        }
    }
    (s, "")
}

fn split_args(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = s.trim();
    while !rest.is_empty() {
        let (a, b) = split_top(rest);
        out.push(a.trim());
        rest = b.trim();
    }
    out
}

/// Every overload by function name.
pub static OVERLOADS: LazyLock<HashMap<String, Vec<Overload>>> = LazyLock::new(|| {
    let mut m: HashMap<String, Vec<Overload>> = HashMap::new();
    let mut comparisons = String::new();
    for op in ["_<_", "_<=_", "_>_", "_>=_"] {
        for (a, b) in [
            ("int", "int"),
            ("uint", "uint"),
            ("double", "double"),
            ("string", "string"),
            ("bytes", "bytes"),
            ("bool", "bool"),
            ("ts", "ts"),
            ("dur", "dur"),
            ("int", "uint"),
            ("int", "double"),
            ("uint", "int"),
            ("uint", "double"),
            ("double", "int"),
            ("double", "uint"),
        ] {
            comparisons.push_str(&format!("{op}({a},{b}) bool\n"));
        }
    }
    for line in SIGNATURES
        .lines()
        .chain(comparisons.lines())
        .map(str::trim)
        .filter(|l| !l.is_empty())
    {
        let open = line.rfind('(').unwrap_or(0);
        let close = line.rfind(')').unwrap_or(line.len());
        let head = &line[..open];
        let args = &line[open + 1..close];
        let result = parse_ty(&line[close + 1..]);
        // A receiver is `T.name` where T is a type, not a namespace such as `strings.`.
        let (receiver, name, mut params) = match head.rfind('.') {
            Some(dot) => {
                let (prefix, suffix) = (&head[..dot], &head[dot + 1..]);
                let global = matches!(prefix, "strings" | "sets" | "optional")
                    || head == "format.named"
                    || head == "ip.isCanonical"
                    || (prefix == "format" && suffix != "validate");
                if global {
                    (false, head.to_string(), vec![])
                } else {
                    (true, suffix.to_string(), vec![parse_ty(prefix)])
                }
            }
            None => (false, head.to_string(), vec![]),
        };
        params.extend(split_args(args).into_iter().map(parse_ty));
        let id = format!(
            "{}{}_{}",
            if receiver { "m_" } else { "" },
            name,
            params
                .iter()
                .map(|p| p.to_string())
                .collect::<Vec<_>>()
                .join("_")
        );
        m.entry(name).or_default().push(Overload {
            receiver,
            params,
            result,
            id,
        });
    }
    m
});

/// Whether `name` is a declared function (global or member).
pub fn is_function(name: &str) -> bool {
    OVERLOADS.contains_key(name)
}

/// The type named by an identifier used as a value (`int`, `string`, `list`...).
pub fn type_ident(name: &str) -> Option<Ty> {
    Some(match name {
        "int" => Ty::Int,
        "uint" => Ty::Uint,
        "double" => Ty::Double,
        "bool" => Ty::Bool,
        "string" => Ty::String,
        "bytes" => Ty::Bytes,
        "list" => Ty::List(Box::new(Ty::Dyn)),
        "map" => Ty::Map(Box::new(Ty::Dyn), Box::new(Ty::Dyn)),
        "null_type" => Ty::Null,
        "type" => Ty::Type(Box::new(Ty::Dyn)),
        "google.protobuf.Timestamp" => Ty::Timestamp,
        "google.protobuf.Duration" => Ty::Duration,
        "optional_type" => Ty::Opt(Box::new(Ty::Dyn)),
        "net.IP" => Ty::Opaque("net.IP"),
        "net.CIDR" => Ty::Opaque("net.CIDR"),
        "kubernetes.URL" => Ty::Opaque("kubernetes.URL"),
        "kubernetes.Quantity" => Ty::Opaque("kubernetes.Quantity"),
        "kubernetes.Semver" => Ty::Opaque("kubernetes.Semver"),
        "kubernetes.NamedFormat" => Ty::Opaque("kubernetes.NamedFormat"),
        _ => return None,
    })
}
