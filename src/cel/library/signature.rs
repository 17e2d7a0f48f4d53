//! The signature language functions declare their overloads in, one a line:
//! `name(params) result` for global functions (`sets.contains(list<A>,list<A>) bool`: a
//! namespace is part of the name), `receiver.name(params) result` for member functions
//! (`string.startsWith(string) bool`). Types: `int uint double bool string bytes ts dur dyn null`,
//! `list<T>`, `map<K,V>`, `opt<T>`, `type<T>`, the library types `ip cidr url quantity format
//! semver`, and the type parameters `A` and `B`.

use super::Function;
use crate::cel::types::Ty;

/// One overload of a function, as the checker resolves it.
#[derive(Debug, Clone)]
pub struct Overload {
    /// Called as `target.name(args)`.
    pub receiver: bool,
    /// Parameter types (the receiver first for member overloads).
    pub params: Vec<Ty>,
    /// Result type.
    pub result: Ty,
    /// cel-go's kind of overload id (`m_containsIP_net.CIDR_string`), which some cost estimates
    /// distinguish overloads by.
    pub id: String,
    /// The function this overload belongs to.
    pub function: &'static Function,
}

impl Overload {
    /// Parses one signature of `function`. The signatures are ours and fixed, so nothing here
    /// fails at run time; the tests check that each parses to its function's name and types.
    pub fn parse(function: &'static Function, line: &str) -> Overload {
        let line = line.trim();
        let open = line.find('(').unwrap_or(line.len());
        let close = line.rfind(')').unwrap_or(line.len());
        let head = &line[..open];
        let args = line.get(open + 1..close).unwrap_or("");
        let result = parse_ty(line.get(close + 1..).unwrap_or(""));
        // `T.name` is a member of T unless the whole head is the (namespaced) name.
        let (receiver, mut params) = match head.strip_suffix(function.name) {
            Some(prefix) if head != function.name => {
                let ty = prefix.strip_suffix('.').unwrap_or(prefix);
                (true, vec![parse_ty(ty)])
            }
            _ => (false, vec![]),
        };
        params.extend(split_args(args).into_iter().map(parse_ty));
        let id = format!(
            "{}{}_{}",
            if receiver { "m_" } else { "" },
            function.name,
            params
                .iter()
                .map(|p| p.to_string())
                .collect::<Vec<_>>()
                .join("_")
        );
        Overload {
            receiver,
            params,
            result,
            id,
            function,
        }
    }
}

/// Parses one type of the signature language (unknown names are `dyn`; the tests reject them).
pub fn parse_ty(s: &str) -> Ty {
    let s = s.trim();
    let inner = |prefix: &str| s.strip_prefix(prefix).and_then(|x| x.strip_suffix('>'));
    if let Some(e) = inner("list<") {
        return Ty::List(Box::new(parse_ty(e)));
    }
    if let Some(e) = inner("opt<") {
        return Ty::Opt(Box::new(parse_ty(e)));
    }
    if let Some(e) = inner("type<") {
        return Ty::Type(Box::new(parse_ty(e)));
    }
    if let Some(kv) = inner("map<") {
        let (k, v) = split_top(kv);
        return Ty::Map(Box::new(parse_ty(k)), Box::new(parse_ty(v)));
    }
    named_ty(s).unwrap_or(Ty::Dyn)
}

/// A type without parameters of the signature language.
pub fn named_ty(s: &str) -> Option<Ty> {
    Some(match s {
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
        "authorizer" => Ty::Opaque("kubernetes.authorization.Authorizer"),
        "pathcheck" => Ty::Opaque("kubernetes.authorization.PathCheck"),
        "groupcheck" => Ty::Opaque("kubernetes.authorization.GroupCheck"),
        "resourcecheck" => Ty::Opaque("kubernetes.authorization.ResourceCheck"),
        "decision" => Ty::Opaque("kubernetes.authorization.Decision"),
        _ => return None,
    })
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

/// The parameter types of a parameter list.
pub fn split_args(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut rest = s.trim();
    while !rest.is_empty() {
        let (a, b) = split_top(rest);
        out.push(a.trim());
        rest = b.trim();
    }
    out
}
