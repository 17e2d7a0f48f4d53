//! The Kubernetes URL library: `url()`, `isURL()` and the accessors of a URL. Parsing follows
//! Go's `url.ParseRequestURI` (an absolute URI or an absolute path), as the apiserver's.

use std::rc::Rc;

use super::{cost_traversal, invalid, list, no_overload, str_arg, Ctx, Estimate, Function, R};
use crate::cel::cost::{Cost, Size, STRING_TRAVERSAL};
use crate::cel::value::{equals, Ext, Val};

/// The functions of this family, for the registry.
pub(super) const FUNCTIONS: &[Function] = &[
    Function::strict("url", &["url(string) url"], url)
        .estimate(estimate_url)
        .cost(cost_traversal),
    Function::strict("isURL", &["isURL(string) bool"], is_url).cost(cost_traversal),
    Function::strict("getScheme", &["url.getScheme() string"], part),
    Function::strict("getHost", &["url.getHost() string"], part),
    Function::strict("getHostname", &["url.getHostname() string"], part),
    Function::strict("getPort", &["url.getPort() string"], part),
    Function::strict("getEscapedPath", &["url.getEscapedPath() string"], part),
    Function::strict(
        "getQuery",
        &["url.getQuery() map<string,list<string>>"],
        part,
    ),
];

/// Parsing traverses the string; the URL is no larger.
fn estimate_url(e: &Estimate<'_>) -> (Cost, Option<Size>) {
    (e.size(0).factor(STRING_TRAVERSAL), Some(e.size(0)))
}

fn url<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let [s] = args.as_slice() else {
        return no_overload();
    };
    let s = str_arg(s)?;
    match Url::parse(s) {
        Some(u) => Ok(Val::Ext(Rc::new(Ext::Url(u)))),
        None => invalid(format!(
            "URL parse error during conversion from string: parse \"{s}\": invalid URI for request"
        )),
    }
}

fn is_url<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    match args.as_slice() {
        [s] => Ok(Val::Bool(s.as_str().and_then(Url::parse).is_some())),
        _ => no_overload(),
    }
}

/// `getScheme()`, `getHost()`... of a URL.
fn part<'a>(cx: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let [Val::Ext(e)] = args.as_slice() else {
        return no_overload();
    };
    let Ext::Url(u) = &**e else {
        return no_overload();
    };
    Ok(match cx.name {
        "getScheme" => Val::str(u.scheme.as_str()),
        "getHost" => Val::str(u.host.as_str()),
        "getHostname" => Val::str(u.hostname()),
        "getPort" => Val::str(u.port()),
        "getEscapedPath" => Val::str(u.path.as_str()),
        _ => query(u),
    })
}

/// The query as a map of every key to its values, in order.
fn query<'a>(u: &Url) -> Val<'a> {
    let mut entries: Vec<(Val, Vec<Val>)> = Vec::new();
    for pair in u.query.split('&').filter(|p| !p.is_empty()) {
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let k = Val::str(k);
        match entries.iter_mut().find(|(x, _)| equals(x, &k)) {
            Some((_, vs)) => vs.push(Val::str(v)),
            None => entries.push((k, vec![Val::str(v)])),
        }
    }
    Val::Map(Rc::new(
        entries.into_iter().map(|(k, v)| (k, list(v))).collect(),
    ))
}

/// A parsed `url()` value.
#[derive(Debug, Clone, PartialEq)]
pub struct Url {
    /// `https`.
    pub scheme: String,
    /// `example.com:80` / `[::1]:80`.
    pub host: String,
    /// The escaped path.
    pub path: String,
    /// The raw query, without `?`.
    pub query: String,
}

impl Url {
    /// Parses an absolute URI or absolute path, as `url.ParseRequestURI`.
    pub fn parse(s: &str) -> Option<Url> {
        if s.is_empty() || s.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return None;
        }
        let s = s.split('#').next().unwrap_or(s);
        let (rest, query) = match s.split_once('?') {
            Some((r, q)) => (r, q.to_string()),
            None => (s, String::new()),
        };
        if rest.starts_with('/') {
            return Some(Url {
                scheme: String::new(),
                host: String::new(),
                path: rest.to_string(),
                query,
            });
        }
        let (scheme, after) = rest.split_once(':')?;
        let mut sc = scheme.chars();
        if !sc.next()?.is_ascii_alphabetic()
            || !sc.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        {
            return None;
        }
        let (host, path) = match after.strip_prefix("//") {
            Some(hp) => match hp.find('/') {
                Some(i) => (hp[..i].to_string(), hp[i..].to_string()),
                None => (hp.to_string(), String::new()),
            },
            None => (String::new(), after.to_string()),
        };
        let host = host.rsplit('@').next().unwrap_or("").to_string();
        Some(Url {
            scheme: scheme.to_string(),
            host,
            path,
            query,
        })
    }

    /// The host without port and brackets.
    pub fn hostname(&self) -> String {
        let h = &self.host;
        if let Some(rest) = h.strip_prefix('[') {
            return rest.split(']').next().unwrap_or("").to_string();
        }
        match h.rsplit_once(':') {
            Some((a, _)) => a.to_string(),
            None => h.clone(),
        }
    }

    /// The port, or "".
    pub fn port(&self) -> String {
        let h = &self.host;
        let after = match h.strip_prefix('[') {
            Some(rest) => rest.split_once(']').map(|(_, p)| p).unwrap_or(""),
            None => h.as_str(),
        };
        match after.rsplit_once(':') {
            Some((_, p)) => p.to_string(),
            None => String::new(),
        }
    }
}
