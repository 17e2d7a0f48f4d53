//! The Kubernetes IP and CIDR libraries: `ip()`, `isIP()`, `ip.isCanonical()`, the address
//! predicates, `cidr()`, `isCIDR()`, `containsIP()`, `containsCIDR()`, `masked()`,
//! `prefixLength()` (and `string()` of both, in the conversions). Parsing is as strict as Go's
//! `netip`: no zones, no IPv4-mapped IPv6 addresses, no leading zeros in prefix lengths.

use std::rc::Rc;

use super::{
    cost_traversal, estimate_traversal, invalid, no_overload, str_arg, Ctx, Estimate, Function, R,
};
use crate::cel::cost::{Cost, Size, STRING_TRAVERSAL};
use crate::cel::error::EvalError;
use crate::cel::types::Ty;
use crate::cel::value::{Ext, Val};

/// The functions of this family, for the registry.
pub(super) const FUNCTIONS: &[Function] = &[
    Function::strict("ip", &["ip(string) ip", "cidr.ip() ip"], ip)
        .estimate(estimate_ip)
        .cost(cost_traversal),
    Function::strict("isIP", &["isIP(string) bool"], is_ip)
        .estimate(estimate_traversal)
        .cost(cost_traversal),
    Function::strict(
        "ip.isCanonical",
        &["ip.isCanonical(string) bool"],
        is_canonical,
    )
    .estimate(estimate_canonical),
    Function::strict("family", &["ip.family() int"], predicate),
    Function::strict("isUnspecified", &["ip.isUnspecified() bool"], predicate),
    Function::strict("isLoopback", &["ip.isLoopback() bool"], predicate),
    Function::strict(
        "isLinkLocalMulticast",
        &["ip.isLinkLocalMulticast() bool"],
        predicate,
    ),
    Function::strict(
        "isLinkLocalUnicast",
        &["ip.isLinkLocalUnicast() bool"],
        predicate,
    ),
    Function::strict("isGlobalUnicast", &["ip.isGlobalUnicast() bool"], predicate),
    Function::strict("cidr", &["cidr(string) cidr"], cidr)
        .estimate(estimate_traversal)
        .cost(cost_traversal),
    Function::strict("isCIDR", &["isCIDR(string) bool"], is_cidr)
        .estimate(estimate_traversal)
        .cost(cost_traversal),
    Function::strict(
        "containsIP",
        &["cidr.containsIP(ip) bool", "cidr.containsIP(string) bool"],
        contains_ip,
    )
    .estimate(estimate_contains_ip),
    Function::strict(
        "containsCIDR",
        &[
            "cidr.containsCIDR(cidr) bool",
            "cidr.containsCIDR(string) bool",
        ],
        contains_cidr,
    )
    .estimate(estimate_contains_cidr),
    Function::strict("masked", &["cidr.masked() cidr"], masked),
    Function::strict("prefixLength", &["cidr.prefixLength() int"], prefix_length),
];

/// The size of an address in bytes.
const IP_SIZE: Size = Size { min: 4, max: 16 };

/// Parsing a string traverses it; `cidr.ip()` is a step.
fn estimate_ip(e: &Estimate<'_>) -> (Cost, Option<Size>) {
    if e.args.len() == 1 && matches!(e.ty(0), Some(Ty::String)) {
        estimate_traversal(e)
    } else {
        (Cost::one(), None)
    }
}

/// Parsing, then printing to compare.
fn estimate_canonical(e: &Estimate<'_>) -> (Cost, Option<Size>) {
    (e.size(0).factor(2.0 * STRING_TRAVERSAL), None)
}

/// Comparing two addresses, after parsing the argument when it is a string.
fn estimate_contains_ip(e: &Estimate<'_>) -> (Cost, Option<Size>) {
    let mut c = IP_SIZE.add(IP_SIZE).factor(STRING_TRAVERSAL);
    if e.overload.id.ends_with("_string") {
        c = c.add(e.size(1).factor(STRING_TRAVERSAL));
    }
    (c, None)
}

/// As [`estimate_contains_ip`], plus masking the other prefix.
fn estimate_contains_cidr(e: &Estimate<'_>) -> (Cost, Option<Size>) {
    let mut c = IP_SIZE.add(IP_SIZE).factor(STRING_TRAVERSAL);
    c = c.add(IP_SIZE.factor(STRING_TRAVERSAL)).add(Cost::one());
    if e.overload.id.ends_with("_string") {
        c = c.add(e.size(1).factor(STRING_TRAVERSAL));
    }
    (c, None)
}

/// `ip(string)`, or the address of a prefix (`cidr.ip()`).
fn ip<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let [v] = args.as_slice() else {
        return no_overload();
    };
    if let Val::Ext(e) = v {
        return match &**e {
            Ext::Cidr(ip, _) => Ok(Val::Ext(Rc::new(Ext::Ip(*ip)))),
            _ => no_overload(),
        };
    }
    let s = str_arg(v)?;
    match parse_ip(s) {
        Some(ip) => Ok(Val::Ext(Rc::new(Ext::Ip(ip)))),
        None => invalid(format!("IP Address \"{s}\" parse error during conversion from string: ParseAddr(\"{s}\"): unable to parse IP")),
    }
}

fn is_ip<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    match args.as_slice() {
        [s] => Ok(Val::Bool(s.as_str().and_then(parse_ip).is_some())),
        _ => no_overload(),
    }
}

/// Whether a string is an address as Go prints it.
fn is_canonical<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let [s] = args.as_slice() else {
        return no_overload();
    };
    let s = str_arg(s)?;
    match parse_ip(s) {
        Some(ip) => Ok(Val::Bool(ip.to_string() == s)),
        None => invalid(format!(
            "IP Address \"{s}\" parse error during conversion from string"
        )),
    }
}

fn predicate<'a>(cx: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let [Val::Ext(e)] = args.as_slice() else {
        return no_overload();
    };
    let Ext::Ip(ip) = &**e else {
        return no_overload();
    };
    Ok(ip_pred(cx.name, ip))
}

fn cidr<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let [s] = args.as_slice() else {
        return no_overload();
    };
    let s = str_arg(s)?;
    match parse_cidr(s) {
        Some((ip, p)) => Ok(Val::Ext(Rc::new(Ext::Cidr(ip, p)))),
        None => invalid(format!("network address parse error during conversion from string: network address parse error during conversion from string: netip.ParsePrefix(\"{s}\"): bad prefix")),
    }
}

fn is_cidr<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    match args.as_slice() {
        [s] => Ok(Val::Bool(s.as_str().and_then(parse_cidr).is_some())),
        _ => no_overload(),
    }
}

/// The prefix a call is on.
fn receiver(args: &[Val<'_>]) -> Result<(std::net::IpAddr, u8), EvalError> {
    let Some(Val::Ext(e)) = args.first() else {
        return no_overload();
    };
    match &**e {
        Ext::Cidr(net, plen) => Ok((*net, *plen)),
        _ => no_overload(),
    }
}

fn contains_ip<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let (net, plen) = receiver(&args)?;
    let ip = match args.get(1) {
        Some(Val::Ext(e)) => match &**e {
            Ext::Ip(ip) => *ip,
            _ => return no_overload(),
        },
        Some(v) => parse_ip(str_arg(v)?).ok_or(EvalError::Invalid(
            "IP Address parse error during conversion from string".into(),
        ))?,
        None => return no_overload(),
    };
    Ok(Val::Bool(
        same_family(&net, &ip) && mask(&net, plen) == mask(&ip, plen),
    ))
}

fn contains_cidr<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let (net, plen) = receiver(&args)?;
    let (ip, p) = match args.get(1) {
        Some(Val::Ext(e)) => match &**e {
            Ext::Cidr(ip, p) => (*ip, *p),
            _ => return no_overload(),
        },
        Some(v) => parse_cidr(str_arg(v)?).ok_or(EvalError::Invalid(
            "network address parse error during conversion from string".into(),
        ))?,
        None => return no_overload(),
    };
    Ok(Val::Bool(
        same_family(&net, &ip) && p >= plen && mask(&net, plen) == mask(&ip, plen),
    ))
}

fn masked<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let (net, plen) = receiver(&args)?;
    Ok(Val::Ext(Rc::new(Ext::Cidr(mask(&net, plen), plen))))
}

fn prefix_length<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let (_, plen) = receiver(&args)?;
    Ok(Val::Int(plen as i64))
}

/// An IP address as the Kubernetes library accepts it: no zone, no IPv4-mapped IPv6.
fn parse_ip(s: &str) -> Option<std::net::IpAddr> {
    // The Kubernetes library rejects zones and IPv4-mapped IPv6 addresses.
    if s.contains('%') {
        return None;
    }
    let ip: std::net::IpAddr = s.parse().ok()?;
    if let std::net::IpAddr::V6(v6) = ip {
        if v6.to_ipv4_mapped().is_some() {
            return None;
        }
    }
    Some(ip)
}

/// A prefix: an address as [`parse_ip`] accepts and a length without leading zeros.
fn parse_cidr(s: &str) -> Option<(std::net::IpAddr, u8)> {
    let (ip, p) = s.split_once('/')?;
    let ip = parse_ip(ip)?;
    if p.is_empty() || (p.len() > 1 && p.starts_with('0')) {
        return None;
    }
    let p: u8 = p.parse().ok()?;
    let max = if ip.is_ipv4() { 32 } else { 128 };
    (p <= max).then_some((ip, p))
}

fn same_family(a: &std::net::IpAddr, b: &std::net::IpAddr) -> bool {
    a.is_ipv4() == b.is_ipv4()
}

/// The address with the bits after the prefix cleared.
fn mask(ip: &std::net::IpAddr, p: u8) -> std::net::IpAddr {
    match ip {
        std::net::IpAddr::V4(v4) => {
            let bits = u32::from(*v4);
            let m = if p == 0 {
                0
            } else {
                u32::MAX << (32 - p as u32)
            };
            std::net::IpAddr::V4((bits & m).into())
        }
        std::net::IpAddr::V6(v6) => {
            let bits = u128::from(*v6);
            let m = if p == 0 {
                0
            } else {
                u128::MAX << (128 - p as u32)
            };
            std::net::IpAddr::V6((bits & m).into())
        }
    }
}

/// The predicates and family of an address, as Go's `netip.Addr` methods.
fn ip_pred<'a>(name: &str, ip: &std::net::IpAddr) -> Val<'a> {
    use std::net::IpAddr;
    match name {
        "family" => Val::Int(if ip.is_ipv4() { 4 } else { 6 }),
        "isUnspecified" => Val::Bool(ip.is_unspecified()),
        "isLoopback" => Val::Bool(ip.is_loopback()),
        "isLinkLocalMulticast" => Val::Bool(match ip {
            IpAddr::V4(v) => v.octets()[0] == 224 && v.octets()[1] == 0 && v.octets()[2] == 0,
            IpAddr::V6(v) => v.segments()[0] & 0xff0f == 0xff02,
        }),
        "isLinkLocalUnicast" => Val::Bool(match ip {
            IpAddr::V4(v) => v.is_link_local(),
            IpAddr::V6(v) => v.segments()[0] & 0xffc0 == 0xfe80,
        }),
        _ => Val::Bool(match ip {
            IpAddr::V4(v) => {
                !(v.is_unspecified()
                    || v.is_loopback()
                    || v.is_link_local()
                    || v.is_multicast()
                    || v.is_broadcast())
            }
            IpAddr::V6(v) => {
                !(v.is_unspecified()
                    || v.is_loopback()
                    || v.segments()[0] & 0xffc0 == 0xfe80
                    || v.is_multicast())
            }
        }),
    }
}
