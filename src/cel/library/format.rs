//! The Kubernetes named-format library: `format.named(name)`, one constructor a format
//! (`format.dns1123Label()`...), and `validate()`, which returns the format's error messages
//! (as the apiserver's validators word them) or `optional.none()`.

use std::rc::Rc;

use super::urls::Url;
use super::{list, no_overload, Ctx, Estimate, Function, R};
use crate::cel::cost::{mul_f, Cost, Size, REGEX_LENGTH, STRING_TRAVERSAL};
use crate::cel::value::{Ext, Val};

/// A format constructor: `format.<name>() format`.
macro_rules! constructor {
    ($name:literal) => {
        Function::strict(
            concat!("format.", $name),
            &[concat!("format.", $name, "() format")],
            constructor,
        )
    };
}

/// The functions of this family, for the registry.
pub(super) const FUNCTIONS: &[Function] = &[
    Function::strict("format.named", &["format.named(string) opt<format>"], named),
    constructor!("dns1123Label"),
    constructor!("dns1123Subdomain"),
    constructor!("dns1035Label"),
    constructor!("qualifiedName"),
    constructor!("dns1123LabelPrefix"),
    constructor!("dns1123SubdomainPrefix"),
    constructor!("dns1035LabelPrefix"),
    constructor!("labelValue"),
    constructor!("uri"),
    constructor!("uuid"),
    constructor!("byte"),
    constructor!("date"),
    constructor!("datetime"),
    Function::strict(
        "validate",
        &["format.validate(string) opt<list<string>>"],
        validate,
    )
    .estimate(estimate_validate),
];

/// The named formats, in the order the library declares them.
pub const FORMATS: &[&str] = &[
    "dns1123Label",
    "dns1123Subdomain",
    "dns1035Label",
    "qualifiedName",
    "dns1123LabelPrefix",
    "dns1123SubdomainPrefix",
    "dns1035LabelPrefix",
    "labelValue",
    "uri",
    "uuid",
    "byte",
    "date",
    "datetime",
];

/// Validation is costed as a regular expression of 128 characters over the string.
fn estimate_validate(e: &Estimate<'_>) -> (Cost, Option<Size>) {
    let regex = Cost::exact(mul_f(1, 128.0 * REGEX_LENGTH));
    (e.size(1).factor(STRING_TRAVERSAL).mul(regex), None)
}

/// `format.named(name)`: the format, or `optional.none()` for an unknown name.
fn named<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let [name] = args.as_slice() else {
        return no_overload();
    };
    let name = name.as_str().unwrap_or("");
    Ok(Val::Opt(
        FORMATS
            .iter()
            .find(|f| **f == name)
            .map(|f| Rc::new(Val::Ext(Rc::new(Ext::Format(f))))),
    ))
}

/// `format.dns1123Label()`...: the format the function is named after.
fn constructor<'a>(cx: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let short = cx.name.strip_prefix("format.").unwrap_or(cx.name);
    match FORMATS.iter().find(|x| **x == short) {
        Some(x) if args.is_empty() => Ok(Val::Ext(Rc::new(Ext::Format(x)))),
        _ => no_overload(),
    }
}

/// `f.validate(s)`: the error messages, or `optional.none()` when `s` is valid.
fn validate<'a>(_: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let [Val::Ext(e), s] = args.as_slice() else {
        return no_overload();
    };
    let (Ext::Format(f), Some(s)) = (&**e, s.as_str()) else {
        return no_overload();
    };
    let errs = validate_format(f, s);
    if errs.is_empty() {
        return Ok(Val::Opt(None));
    }
    let errs = list(errs.into_iter().map(Val::str).collect());
    Ok(Val::Opt(Some(Rc::new(errs))))
}

/// RFC 1123 label: lower-case alphanumerics and `-`, at most 63.
fn dns1123_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

/// RFC 1035 label: an RFC 1123 label starting with a letter.
fn dns1035_label(s: &str) -> bool {
    dns1123_label(s) && s.as_bytes()[0].is_ascii_lowercase()
}

/// RFC 1123 subdomain: dot-separated labels, at most 253.
fn dns1123_subdomain(s: &str) -> bool {
    !s.is_empty() && s.len() <= 253 && s.split('.').all(dns1123_label)
}

/// A qualified name: an optional subdomain prefix and `/`, then a name of at most 63.
fn qualified_name(s: &str) -> bool {
    let (prefix, name) = match s.rsplit_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, s),
    };
    let name_ok = !name.is_empty()
        && name.len() <= 63
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        && name.as_bytes()[0].is_ascii_alphanumeric()
        && name.as_bytes()[name.len() - 1].is_ascii_alphanumeric();
    name_ok && prefix.is_none_or(dns1123_subdomain)
}

/// Validates `s` against a named format: the error messages, empty when valid.
pub fn validate_format(format: &str, s: &str) -> Vec<String> {
    let strip = |s: &str| s.trim_end_matches('-').to_string();
    let ok = match format {
        "dns1123Label" => dns1123_label(s),
        "dns1123Subdomain" => dns1123_subdomain(s),
        "dns1035Label" => dns1035_label(s),
        "qualifiedName" => qualified_name(s),
        "dns1123LabelPrefix" => dns1123_label(&strip(s)),
        "dns1123SubdomainPrefix" => dns1123_subdomain(&strip(s)),
        "dns1035LabelPrefix" => dns1035_label(&strip(s)),
        "labelValue" => s.is_empty() || qualified_name(s) && !s.contains('/'),
        "uri" => Url::parse(s).is_some(),
        "uuid" => crate::schema::formats::validates("uuid", s),
        "byte" => crate::schema::formats::validates("byte", s),
        "date" => crate::schema::formats::is_date(s),
        "datetime" => crate::schema::formats::is_date_time(s),
        _ => true,
    };
    if ok {
        Vec::new()
    } else {
        vec![match format {
            "dns1123Label" | "dns1123LabelPrefix" => "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')".to_string(),
            "dns1123Subdomain" | "dns1123SubdomainPrefix" => "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')".to_string(),
            "dns1035Label" | "dns1035LabelPrefix" => "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')".to_string(),
            other => format!("does not match the {other} format"),
        }]
    }
}
