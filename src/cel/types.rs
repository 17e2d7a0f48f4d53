//! Static CEL types for the checker: the types of schema values, of library values and of
//! type parameters, and the assignability rules overload resolution uses. The functions'
//! signatures are declared with the functions, in [`super::library`].

use std::fmt;
use std::sync::Arc;

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
                Kind::IntOrString | Kind::Dyn => Ty::Dyn,
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
        "kubernetes.authorization.Authorizer" => Ty::Opaque("kubernetes.authorization.Authorizer"),
        "kubernetes.authorization.PathCheck" => Ty::Opaque("kubernetes.authorization.PathCheck"),
        "kubernetes.authorization.GroupCheck" => Ty::Opaque("kubernetes.authorization.GroupCheck"),
        "kubernetes.authorization.ResourceCheck" => {
            Ty::Opaque("kubernetes.authorization.ResourceCheck")
        }
        "kubernetes.authorization.Decision" => Ty::Opaque("kubernetes.authorization.Decision"),
        _ => return None,
    })
}
