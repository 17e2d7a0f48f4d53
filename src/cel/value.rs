//! Run-time CEL values. Values of the custom resource are views over its JSON typed by the
//! schema declaration (no copy per evaluation); computed values are reference counted.

use std::net::IpAddr;
use std::rc::Rc;

use chrono::{DateTime, TimeDelta, Utc};
use serde_json::{Map, Value};

use super::decl::{Decl, Kind, ListKind};

/// A Kubernetes library value.
#[derive(Debug, Clone, PartialEq)]
pub enum Ext {
    /// `kubernetes.Quantity`, kept as a decimal `mantissa * 10^exp` plus its text.
    Quantity(super::library::Quantity),
    /// `net.IP`.
    Ip(IpAddr),
    /// `net.CIDR`: the address as written and the prefix length.
    Cidr(IpAddr, u8),
    /// `kubernetes.URL`.
    Url(super::library::Url),
    /// `kubernetes.NamedFormat`.
    Format(&'static str),
    /// `kubernetes.Semver`.
    Semver(u64, u64, u64, String),
    /// `kubernetes.authorization.*`: an admission expression's `authorizer` and the checks
    /// built from it.
    Authz(Box<super::library::Authz>),
}

/// An owned list, with the list semantics it came from (sets and map-lists compare unordered).
#[derive(Debug, Clone)]
pub struct ListV<'a> {
    /// Elements.
    pub items: Vec<Val<'a>>,
    /// `atomic`, `set` or `map`.
    pub kind: ListKind,
}

/// A run-time value.
#[derive(Debug, Clone)]
pub enum Val<'a> {
    /// `null`.
    Null,
    /// `bool`.
    Bool(bool),
    /// `int`.
    Int(i64),
    /// `uint`.
    Uint(u64),
    /// `double`.
    Double(f64),
    /// A computed `string`.
    Str(Rc<str>),
    /// A `string` of the object.
    JStr(&'a str),
    /// `bytes`.
    Bytes(Rc<[u8]>),
    /// `google.protobuf.Timestamp`.
    Ts(DateTime<Utc>),
    /// `google.protobuf.Duration`.
    Dur(TimeDelta),
    /// A computed list.
    List(Rc<ListV<'a>>),
    /// A list of the object.
    JList(&'a [Value], &'a Decl),
    /// A computed map.
    Map(Rc<Vec<(Val<'a>, Val<'a>)>>),
    /// A map or object of the object (`Kind::Map` or `Kind::Object`).
    JMap(&'a Map<String, Value>, &'a Decl),
    /// A type value (`int`, `string`...).
    Type(Rc<str>),
    /// `optional_type(T)`.
    Opt(Option<Rc<Val<'a>>>),
    /// A Kubernetes library value.
    Ext(Rc<Ext>),
}

impl<'a> Val<'a> {
    /// A computed string.
    pub fn str(s: impl Into<Rc<str>>) -> Val<'a> {
        Val::Str(s.into())
    }

    /// The string, for either string variant.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Val::Str(s) => Some(s),
            Val::JStr(s) => Some(s),
            _ => None,
        }
    }

    /// The CEL type name of the value (`int`, `list`, `map`...).
    pub fn type_name(&self) -> &'static str {
        match self {
            Val::Null => "null_type",
            Val::Bool(_) => "bool",
            Val::Int(_) => "int",
            Val::Uint(_) => "uint",
            Val::Double(_) => "double",
            Val::Str(_) | Val::JStr(_) => "string",
            Val::Bytes(_) => "bytes",
            Val::Ts(_) => "google.protobuf.Timestamp",
            Val::Dur(_) => "google.protobuf.Duration",
            Val::List(_) | Val::JList(..) => "list",
            Val::Map(_) => "map",
            Val::JMap(_, d) => match d.kind {
                Kind::Object(_) => "object",
                _ => "map",
            },
            Val::Type(_) => "type",
            Val::Opt(_) => "optional_type",
            Val::Ext(e) => match **e {
                Ext::Quantity(_) => "kubernetes.Quantity",
                Ext::Ip(_) => "net.IP",
                Ext::Cidr(..) => "net.CIDR",
                Ext::Url(_) => "kubernetes.URL",
                Ext::Format(_) => "kubernetes.NamedFormat",
                Ext::Semver(..) => "kubernetes.Semver",
                Ext::Authz(ref a) => a.type_name(),
            },
        }
    }

    /// The value as error messages show it (`"x"`, `1u`, `1.5`; the type name of aggregates).
    pub fn display(&self) -> String {
        match self {
            Val::Str(_) | Val::JStr(_) => format!("{:?}", self.as_str().unwrap_or("")),
            Val::Int(i) => i.to_string(),
            Val::Uint(u) => format!("{u}u"),
            Val::Double(d) => super::library::go_float(*d),
            Val::Bool(b) => b.to_string(),
            Val::Null => "null".into(),
            other => other.type_name().to_string(),
        }
    }

    /// The number of elements of a list or map, the length of a string (code points) or bytes.
    pub fn size(&self) -> Option<usize> {
        Some(match self {
            Val::Str(s) => s.chars().count(),
            Val::JStr(s) => s.chars().count(),
            Val::Bytes(b) => b.len(),
            Val::List(l) => l.items.len(),
            Val::JList(l, _) => l.len(),
            Val::Map(m) => m.len(),
            Val::JMap(m, d) => match &d.kind {
                Kind::Map(_) => m.values().filter(|v| !v.is_null()).count(),
                _ => return None,
            },
            _ => return None,
        })
    }

    /// A rough size for run-time cost: characters, bytes or elements.
    pub fn cost_size(&self) -> u64 {
        match self {
            Val::Str(s) => s.len() as u64,
            Val::JStr(s) => s.len() as u64,
            _ => self.size().unwrap_or(1) as u64,
        }
    }

    /// The list semantics of a list value.
    pub fn list_kind(&self) -> ListKind {
        match self {
            Val::List(l) => l.kind.clone(),
            Val::JList(_, d) => d.list.clone(),
            _ => ListKind::Atomic,
        }
    }

    /// The elements of a list (materialized for object lists).
    pub fn list_items(&self) -> Option<Vec<Val<'a>>> {
        match self {
            Val::List(l) => Some(l.items.clone()),
            Val::JList(items, d) => {
                let Kind::List(e) = &d.kind else {
                    return None;
                };
                let e: &'a Decl = e;
                Some(items.iter().map(|x| from_json(x, e)).collect())
            }
            _ => None,
        }
    }

    /// The `i`th element of a list.
    pub fn list_get(&self, i: usize) -> Option<Val<'a>> {
        match self {
            Val::List(l) => l.items.get(i).cloned(),
            Val::JList(items, d) => {
                let Kind::List(e) = &d.kind else {
                    return None;
                };
                let e: &'a Decl = e;
                items.get(i).map(|x| from_json(x, e))
            }
            _ => None,
        }
    }

    /// The entries of a map (for object maps: the non-null ones).
    pub fn map_entries(&self) -> Option<Vec<(Val<'a>, Val<'a>)>> {
        match self {
            Val::Map(m) => Some((**m).clone()),
            Val::JMap(m, d) => match &d.kind {
                Kind::Map(e) => {
                    let e: &'a Decl = e;
                    Some(
                        m.iter()
                            .filter(|(_, v)| !v.is_null())
                            .map(|(k, v)| (Val::JStr(k.as_str()), from_json(v, e)))
                            .collect(),
                    )
                }
                Kind::Object(fields) => Some(
                    fields
                        .iter()
                        .filter_map(|(name, f)| {
                            let v = m.get(&f.json).filter(|v| !v.is_null())?;
                            let fd: &'a Decl = &f.decl;
                            Some((Val::str(name.as_str()), from_json(v, fd)))
                        })
                        .collect(),
                ),
                _ => None,
            },
            _ => None,
        }
    }

    /// Looks up a key of a map, or a (CEL-named) field of an object; `None` when absent or null.
    pub fn map_get(&self, key: &Val<'a>) -> Option<Val<'a>> {
        match self {
            Val::Map(m) => m
                .iter()
                .find(|(k, _)| equals(k, key))
                .map(|(_, v)| v.clone()),
            Val::JMap(m, d) => {
                let k = key.as_str()?;
                match &d.kind {
                    Kind::Map(e) => {
                        let e: &'a Decl = e;
                        m.get(k).filter(|v| !v.is_null()).map(|v| from_json(v, e))
                    }
                    Kind::Object(fields) => {
                        let f = super::decl::object_field(fields, k)?;
                        let fd: &'a Decl = &f.decl;
                        m.get(&f.json)
                            .filter(|v| !v.is_null())
                            .map(|v| from_json(v, fd))
                    }
                    _ => None,
                }
            }
            _ => None,
        }
    }
}

/// The CEL value of a JSON value of the object at a schema node.
pub fn from_json<'a>(v: &'a Value, d: &'a Decl) -> Val<'a> {
    match (v, &d.kind) {
        (Value::Null, _) => Val::Null,
        (Value::Bool(b), _) => Val::Bool(*b),
        (Value::Number(n), Kind::Double) => Val::Double(n.as_f64().unwrap_or(0.0)),
        (Value::Number(n), _) => match n.as_i64() {
            Some(i) => Val::Int(i),
            None => match n.as_u64() {
                Some(u) => Val::Uint(u),
                None => {
                    let f = n.as_f64().unwrap_or(0.0);
                    if matches!(d.kind, Kind::Int | Kind::IntOrString) && f.fract() == 0.0 {
                        Val::Int(f as i64)
                    } else {
                        Val::Double(f)
                    }
                }
            },
        },
        (Value::String(s), Kind::Bytes) => {
            use base64::Engine;
            match base64::engine::general_purpose::STANDARD.decode(s) {
                Ok(b) => Val::Bytes(b.into()),
                Err(_) => Val::Bytes(s.as_bytes().into()),
            }
        }
        (Value::String(s), Kind::Timestamp) => match super::library::parse_timestamp(s) {
            Some(t) => Val::Ts(t),
            None => Val::JStr(s),
        },
        (Value::String(s), Kind::Duration) => match super::library::parse_go_duration(s) {
            Some(t) => Val::Dur(t),
            None => Val::JStr(s),
        },
        (Value::String(s), _) => Val::JStr(s),
        (Value::Array(a), Kind::List(_)) => Val::JList(a, d),
        (Value::Array(a), _) => Val::List(Rc::new(ListV {
            items: a.iter().map(|x| from_json(x, d)).collect(),
            kind: ListKind::Atomic,
        })),
        (Value::Object(m), Kind::Map(_) | Kind::Object(_)) => Val::JMap(m, d),
        (Value::Object(m), _) => Val::Map(Rc::new(
            m.iter()
                .map(|(k, x)| (Val::JStr(k.as_str()), from_json(x, d)))
                .collect(),
        )),
    }
}

fn num_eq(a: &Val, b: &Val) -> Option<bool> {
    Some(match (a, b) {
        (Val::Int(x), Val::Int(y)) => x == y,
        (Val::Uint(x), Val::Uint(y)) => x == y,
        (Val::Double(x), Val::Double(y)) => x == y,
        (Val::Int(x), Val::Uint(y)) | (Val::Uint(y), Val::Int(x)) => *x >= 0 && *x as u64 == *y,
        (Val::Int(x), Val::Double(y)) | (Val::Double(y), Val::Int(x)) => *x as f64 == *y,
        (Val::Uint(x), Val::Double(y)) | (Val::Double(y), Val::Uint(x)) => *x as f64 == *y,
        _ => return None,
    })
}

/// CEL equality: numbers across types, lists and maps element-wise, sets and map-lists
/// ignoring order; values of different types are unequal.
pub fn equals(a: &Val, b: &Val) -> bool {
    if let Some(r) = num_eq(a, b) {
        return r;
    }
    if let (Some(x), Some(y)) = (a.as_str(), b.as_str()) {
        return x == y;
    }
    match (a, b) {
        (Val::Null, Val::Null) => true,
        (Val::Bool(x), Val::Bool(y)) => x == y,
        (Val::Bytes(x), Val::Bytes(y)) => x == y,
        (Val::Ts(x), Val::Ts(y)) => x == y,
        (Val::Dur(x), Val::Dur(y)) => x == y,
        (Val::Type(x), Val::Type(y)) => x == y,
        (Val::Opt(x), Val::Opt(y)) => match (x, y) {
            (None, None) => true,
            (Some(x), Some(y)) => equals(x, y),
            _ => false,
        },
        (Val::Ext(x), Val::Ext(y)) => match (&**x, &**y) {
            (Ext::Quantity(p), Ext::Quantity(q)) => p.cmp_to(q) == std::cmp::Ordering::Equal,
            (p, q) => p == q,
        },
        (Val::List(_) | Val::JList(..), Val::List(_) | Val::JList(..)) => {
            let (Some(x), Some(y)) = (a.list_items(), b.list_items()) else {
                return false;
            };
            if x.len() != y.len() {
                return false;
            }
            let unordered = a.list_kind() != ListKind::Atomic || b.list_kind() != ListKind::Atomic;
            if unordered {
                x.iter().all(|e| y.iter().any(|f| equals(e, f)))
                    && y.iter().all(|f| x.iter().any(|e| equals(e, f)))
            } else {
                x.iter().zip(y.iter()).all(|(e, f)| equals(e, f))
            }
        }
        (Val::Map(_) | Val::JMap(..), Val::Map(_) | Val::JMap(..)) => {
            let (Some(x), Some(y)) = (a.map_entries(), b.map_entries()) else {
                return false;
            };
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| b.map_get(k).is_some_and(|w| equals(v, &w)))
        }
        _ => false,
    }
}

/// CEL ordering for `<`, `<=`, `>`, `>=` (numbers across types); `None` when not comparable.
pub fn compare(a: &Val, b: &Val) -> Option<std::cmp::Ordering> {
    use std::cmp::Ordering;
    let f = |x: f64, y: f64| x.partial_cmp(&y);
    match (a, b) {
        (Val::Int(x), Val::Int(y)) => Some(x.cmp(y)),
        (Val::Uint(x), Val::Uint(y)) => Some(x.cmp(y)),
        (Val::Double(x), Val::Double(y)) => f(*x, *y),
        (Val::Int(x), Val::Uint(y)) => Some(if *x < 0 {
            Ordering::Less
        } else {
            (*x as u64).cmp(y)
        }),
        (Val::Uint(x), Val::Int(y)) => Some(if *y < 0 {
            Ordering::Greater
        } else {
            x.cmp(&(*y as u64))
        }),
        (Val::Int(x), Val::Double(y)) => f(*x as f64, *y),
        (Val::Double(x), Val::Int(y)) => f(*x, *y as f64),
        (Val::Uint(x), Val::Double(y)) => f(*x as f64, *y),
        (Val::Double(x), Val::Uint(y)) => f(*x, *y as f64),
        (Val::Bool(x), Val::Bool(y)) => Some(x.cmp(y)),
        (Val::Bytes(x), Val::Bytes(y)) => Some(x.cmp(y)),
        (Val::Ts(x), Val::Ts(y)) => Some(x.cmp(y)),
        (Val::Dur(x), Val::Dur(y)) => Some(x.cmp(y)),
        _ => match (a.as_str(), b.as_str()) {
            (Some(x), Some(y)) => Some(x.cmp(y)),
            _ => None,
        },
    }
}
