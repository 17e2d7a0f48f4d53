//! `format`: which formats the apiserver keeps (`StripUnsupportedFormatsPostProcessor`) and how
//! kube-openapi's `strfmt.Default` registry checks the string ones.
//!
//! Formats the apiserver does not support for a node's type are dropped at compile time, so they
//! never validate anything (`format: foo` is accepted and ignored, as on a real server).

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::OnceLock;

use regex::Regex;

/// String formats the apiserver supports, with dashes removed (go-openapi's name normalisation).
const STRING_FORMATS: &[&str] = &[
    "bsonobjectid",
    "uri",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "cidr",
    "mac",
    "uuid",
    "uuid3",
    "uuid4",
    "uuid5",
    "isbn",
    "isbn10",
    "isbn13",
    "creditcard",
    "ssn",
    "hexcolor",
    "rgbcolor",
    "byte",
    "password",
    "date",
    "duration",
    "datetime",
    "k8sshortname",
    "k8slongname",
];

fn normalized(format: &str) -> String {
    format.replace('-', "")
}

/// The `format` the validator sees for a node of `types`: the apiserver blanks formats it does not
/// support (`int32`/`int64` for integers, `float`/`double` for numbers, the string list otherwise).
pub fn supported_format(types: &[&str], format: &str) -> String {
    if format.is_empty() {
        return String::new();
    }
    let schema_type = if types.len() == 1 { types[0] } else { "" };
    let keep = match schema_type {
        "" | "string" => is_known(format),
        "integer" => format == "int32" || format == "int64",
        "number" => format == "float" || format == "double",
        _ => false,
    };
    if keep {
        format.to_string()
    } else {
        String::new()
    }
}

/// Whether the strfmt registry knows `format` (so that the format validator applies).
pub fn is_known(format: &str) -> bool {
    let n = normalized(format);
    !n.is_empty() && STRING_FORMATS.contains(&n.as_str())
}

fn re(cell: &'static OnceLock<Regex>, pattern: &str) -> &'static Regex {
    cell.get_or_init(|| Regex::new(pattern).unwrap_or_else(|_| Regex::new("$^").expect("empty")))
}

/// Declares lazily compiled regexes: `name => pattern` becomes `fn name() -> &'static Regex`.
macro_rules! rx {
    ($($name:ident => $pat:expr),+ $(,)?) => {
        $(
            fn $name() -> &'static Regex {
                static CELL: OnceLock<Regex> = OnceLock::new();
                re(&CELL, $pat)
            }
        )+
    };
}

/// strfmt's UUID pattern of a version (first digit of the third group) and variant (first
/// digit of the fourth).
macro_rules! uuid {
    ($version:literal, $variant:literal) => {
        concat!(
            r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?",
            $version,
            r"[0-9a-f]{3}-?",
            $variant,
            r"[0-9a-f]{3}-?[0-9a-f]{12}$"
        )
    };
}

rx! {
    rx_uuid => uuid!("[0-9a-f]", "[0-9a-f]"),
    rx_uuid3 => uuid!("3", "[0-9a-f]"),
    rx_uuid4 => uuid!("4", "[89ab]"),
    rx_uuid5 => uuid!("5", "[89ab]"),
    rx_hostname => r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9\-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$",
    rx_ssn => r"^[0-9]{3}[- ]?[0-9]{2}[- ]?[0-9]{4}$",
    rx_hexcolor => r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$",
    rx_rgbcolor => r"^rgb\(\s*(0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])\s*,\s*(0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])\s*,\s*(0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])\s*\)$",
    rx_base64 => r"^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$",
    rx_time => r"^([0-9]{2}):([0-9]{2}):([0-9]{2})(.[0-9]+)?(z|([+-][0-9]{2}:[0-9]{2}))$",
    rx_duration_part => r"(([0-9]+)\s*([A-Za-zµ]+))",
    rx_short_name => r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
    rx_long_name => r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$",
}

/// Whether `s` is valid for the (known) `format`.
pub fn validates(format: &str, s: &str) -> bool {
    match normalized(format).as_str() {
        "bsonobjectid" => s.len() == 24 && s.bytes().all(|b| b.is_ascii_hexdigit()),
        "uri" => is_request_uri(s),
        "email" => is_email(s),
        "hostname" => is_hostname(s),
        "ipv4" => parse_ip_sloppy(s).is_some() && s.contains('.'),
        "ipv6" => s.parse::<Ipv6Addr>().is_ok() && s.contains(':'),
        "cidr" => is_cidr(s),
        "mac" => is_mac(s),
        "uuid" => rx_uuid().is_match(s),
        "uuid3" => rx_uuid3().is_match(s),
        "uuid4" => rx_uuid4().is_match(s),
        "uuid5" => rx_uuid5().is_match(s),
        "isbn" => is_isbn10(s) || is_isbn13(s),
        "isbn10" => is_isbn10(s),
        "isbn13" => is_isbn13(s),
        "creditcard" => is_credit_card(s),
        "ssn" => s.len() == 11 && rx_ssn().is_match(s),
        "hexcolor" => rx_hexcolor().is_match(s),
        "rgbcolor" => rx_rgbcolor().is_match(s),
        "byte" => rx_base64().is_match(s),
        "password" => true,
        "date" => is_date(s),
        "datetime" => is_date_time(s),
        "duration" => is_duration(s),
        "k8sshortname" => s.len() <= 63 && rx_short_name().is_match(s),
        "k8slongname" => s.len() <= 253 && rx_long_name().is_match(s),
        _ => true,
    }
}

/// Go's `time.Parse("2006-01-02", s)`.
pub fn is_date(s: &str) -> bool {
    let b = s.as_bytes();
    if b.len() != 10 || b[4] != b'-' || b[7] != b'-' {
        return false;
    }
    if !b
        .iter()
        .enumerate()
        .all(|(i, c)| i == 4 || i == 7 || c.is_ascii_digit())
    {
        return false;
    }
    chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").is_ok()
}

/// strfmt's `IsDateTime`: a date, a `t`, and `hh:mm:ss[.frac](z|±hh:mm)` (case-insensitive).
pub fn is_date_time(s: &str) -> bool {
    if s.len() < 4 {
        return false;
    }
    let lower = s.to_lowercase();
    let parts: Vec<&str> = lower.split('t').collect();
    if parts.len() < 2 || !is_date(parts[0]) {
        return false;
    }
    match rx_time().captures(parts[1]) {
        Some(c) => {
            let g = |i: usize| c.get(i).map(|m| m.as_str()).unwrap_or("");
            g(1) <= "23" && g(2) <= "59" && g(3) <= "59"
        }
        None => false,
    }
}

/// Go's `time.ParseDuration` syntax: `[-+]?([0-9]*(\.[0-9]*)?[a-z]+)+`, or `0`.
fn is_go_duration(s: &str) -> bool {
    let mut rest = s;
    if let Some(r) = rest.strip_prefix(['-', '+']) {
        rest = r;
    }
    if rest == "0" {
        return true;
    }
    if rest.is_empty() {
        return false;
    }
    while !rest.is_empty() {
        let int_len = rest.bytes().take_while(u8::is_ascii_digit).count();
        let mut r = &rest[int_len..];
        let mut frac_len = 0;
        if let Some(f) = r.strip_prefix('.') {
            frac_len = f.bytes().take_while(u8::is_ascii_digit).count();
            r = &f[frac_len..];
        }
        if int_len == 0 && frac_len == 0 {
            return false;
        }
        let unit_len = r
            .char_indices()
            .find(|(_, c)| *c == '.' || c.is_ascii_digit())
            .map(|(i, _)| i)
            .unwrap_or(r.len());
        let unit = &r[..unit_len];
        if !matches!(unit, "ns" | "us" | "µs" | "μs" | "ms" | "s" | "m" | "h") {
            return false;
        }
        rest = &r[unit_len..];
    }
    true
}

/// strfmt's `ParseDuration`: Go durations, or `<n> <unit>` groups with long unit names.
pub fn is_duration(s: &str) -> bool {
    if is_go_duration(s) {
        return true;
    }
    const UNITS: &[&[&str]] = &[
        &["ns", "nano"],
        &["us", "µs", "micro"],
        &["ms", "milli"],
        &["s", "sec"],
        &["m", "min"],
        &["h", "hr", "hour"],
        &["d", "day"],
        &["w", "wk", "week"],
    ];
    let mut ok = false;
    for c in rx_duration_part().captures_iter(s) {
        let Some(n) = c.get(2) else { continue };
        if n.as_str().parse::<i64>().is_err() {
            return false;
        }
        let unit = c
            .get(3)
            .map(|m| m.as_str().trim().to_lowercase())
            .unwrap_or_default();
        for variants in UNITS {
            let last = variants.len() - 1;
            for (i, v) in variants.iter().enumerate() {
                if (i == last && unit.starts_with(v)) || v.eq_ignore_ascii_case(&unit) {
                    ok = true;
                }
            }
        }
    }
    ok
}

/// `netutils.ParseIPSloppy`: IPv4 with leading zeros (read as decimal), or IPv6.
fn parse_ip_sloppy(s: &str) -> Option<IpAddr> {
    if s.contains(':') {
        return s.parse::<Ipv6Addr>().ok().map(IpAddr::V6);
    }
    let parts: Vec<&str> = s.split('.').collect();
    if parts.len() != 4 {
        return None;
    }
    let mut octets = [0u8; 4];
    for (i, p) in parts.iter().enumerate() {
        if p.is_empty() || p.len() > 3 || !p.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        octets[i] = p.parse().ok()?;
    }
    Some(IpAddr::V4(Ipv4Addr::from(octets)))
}

fn is_cidr(s: &str) -> bool {
    let Some((ip, bits)) = s.split_once('/') else {
        return false;
    };
    let Some(addr) = parse_ip_sloppy(ip) else {
        return false;
    };
    if bits.is_empty() || bits.len() > 3 || !bits.bytes().all(|b| b.is_ascii_digit()) {
        return false;
    }
    let n: u32 = bits.parse().unwrap_or(999);
    match addr {
        IpAddr::V4(_) => n <= 32,
        IpAddr::V6(_) => n <= 128,
    }
}

/// Go's `net.ParseMAC`: 6, 8 or 20 octets as `xx:xx..`, `xx-xx..` or `xxxx.xxxx..`.
fn is_mac(s: &str) -> bool {
    let hex = |p: &str, n: usize| p.len() == n && p.bytes().all(|b| b.is_ascii_hexdigit());
    let ok_len = |octets: usize| octets == 6 || octets == 8 || octets == 20;
    if s.contains(':') || s.contains('-') {
        let sep = if s.contains(':') { ':' } else { '-' };
        let parts: Vec<&str> = s.split(sep).collect();
        ok_len(parts.len()) && parts.iter().all(|p| hex(p, 2))
    } else if s.contains('.') {
        let parts: Vec<&str> = s.split('.').collect();
        ok_len(parts.len() * 2) && parts.iter().all(|p| hex(p, 4))
    } else {
        false
    }
}

fn is_hostname(s: &str) -> bool {
    rx_hostname().is_match(s) && s.len() <= 255 && s.split('.').all(|p| p.len() <= 63)
}

/// An approximation of `net/url.ParseRequestURI`: an absolute URI or an absolute path, without
/// control characters.
fn is_request_uri(s: &str) -> bool {
    if s.is_empty() || s.chars().any(|c| c.is_ascii_control()) {
        return false;
    }
    if s.starts_with('/') {
        return true;
    }
    let Some((scheme, rest)) = s.split_once(':') else {
        return false;
    };
    let mut sc = scheme.chars();
    let first_ok = sc.next().is_some_and(|c| c.is_ascii_alphabetic());
    first_ok
        && sc.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        && !(rest.starts_with("//") && rest[2..].split('/').next().unwrap_or("").contains(' '))
}

/// An approximation of `net/mail.ParseAddress`: `local@domain`, optionally as `Name <addr>`.
fn is_email(s: &str) -> bool {
    let addr = match (s.rfind('<'), s.ends_with('>')) {
        (Some(i), true) => &s[i + 1..s.len() - 1],
        _ => s.trim(),
    };
    let Some((local, domain)) = addr.rsplit_once('@') else {
        return false;
    };
    !local.is_empty()
        && !domain.is_empty()
        && !addr.chars().any(|c| c.is_whitespace() || c.is_control())
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && !domain.contains("..")
}

fn isbn_digits(s: &str) -> String {
    s.chars().filter(|c| *c != ' ' && *c != '-').collect()
}

fn is_isbn10(s: &str) -> bool {
    let d = isbn_digits(s);
    let b = d.as_bytes();
    if b.len() != 10
        || !b[..9].iter().all(u8::is_ascii_digit)
        || !(b[9].is_ascii_digit() || b[9] == b'X')
    {
        return false;
    }
    let mut sum = 0u32;
    for (i, c) in b[..9].iter().enumerate() {
        sum += (i as u32 + 1) * u32::from(c - b'0');
    }
    let last = if b[9] == b'X' {
        10
    } else {
        u32::from(b[9] - b'0')
    };
    sum += 10 * last;
    sum.is_multiple_of(11)
}

fn is_isbn13(s: &str) -> bool {
    let d = isbn_digits(s);
    let b = d.as_bytes();
    if b.len() != 13 || !b.iter().all(u8::is_ascii_digit) {
        return false;
    }
    let mut sum = 0u32;
    for (i, c) in b[..12].iter().enumerate() {
        let f = if i % 2 == 0 { 1 } else { 3 };
        sum += f * u32::from(c - b'0');
    }
    (10 - sum % 10) % 10 == u32::from(b[12] - b'0')
}

/// govalidator's `IsCreditCard`: digits (separators removed) of a known issuer passing Luhn.
fn is_credit_card(s: &str) -> bool {
    static CELL: OnceLock<Regex> = OnceLock::new();
    let issuers = re(
        &CELL,
        r"^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|(222[1-9]|22[3-9][0-9]|2[3-6][0-9]{2}|27[01][0-9]|2720)[0-9]{12}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35[0-9]{3})[0-9]{11}|6[27][0-9]{14})$",
    );
    let digits: String = s.chars().filter(|c| c.is_ascii_digit()).collect();
    if !issuers.is_match(&digits) {
        return false;
    }
    let mut sum = 0u32;
    let mut double = false;
    for c in digits.bytes().rev() {
        let mut d = u32::from(c - b'0');
        if double {
            d *= 2;
            if d > 9 {
                d -= 9;
            }
        }
        sum += d;
        double = !double;
    }
    sum.is_multiple_of(10)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stripping_follows_the_apiserver() {
        assert_eq!(supported_format(&["string"], "date-time"), "date-time");
        assert_eq!(supported_format(&["string"], "int32"), "");
        assert_eq!(supported_format(&["integer"], "int32"), "int32");
        assert_eq!(supported_format(&["integer"], "uuid"), "");
        assert_eq!(supported_format(&["number"], "double"), "double");
        assert_eq!(supported_format(&["boolean"], "byte"), "");
        assert_eq!(supported_format(&[], "uuid"), "uuid");
        assert_eq!(supported_format(&["string"], "foo"), "");
    }

    #[test]
    fn table() {
        let cases: &[(&str, &str, bool)] = &[
            ("uuid", "123e4567-e89b-12d3-a456-426614174000", true),
            ("uuid", "not-a-uuid", false),
            ("uuid4", "123e4567-e89b-42d3-a456-426614174000", true),
            ("date", "2024-02-29", true),
            ("date", "2023-02-29", false),
            ("date", "2024-2-01", false),
            ("date-time", "2017-05-31T12:56:35Z", true),
            ("date-time", "2017-05-31T12:56:35.123+02:00", true),
            ("date-time", "2017-05-31 12:56:35Z", false),
            ("date-time", "2017-05-31T25:56:35Z", false),
            ("duration", "1h30m", true),
            ("duration", "3 days", true),
            ("duration", "abc", false),
            ("ipv4", "10.0.0.1", true),
            ("ipv4", "010.000.000.001", true),
            ("ipv4", "::1", false),
            ("ipv6", "::1", true),
            ("ipv6", "10.0.0.1", false),
            ("cidr", "10.0.0.0/8", true),
            ("cidr", "10.0.0.0/33", false),
            ("mac", "00:1a:2b:3c:4d:5e", true),
            ("mac", "001a.2b3c.4d5e", true),
            ("mac", "00:1a", false),
            ("hostname", "example.com", true),
            ("hostname", "-bad", false),
            ("byte", "aGVsbG8=", true),
            ("byte", "not base64!", false),
            ("hexcolor", "#fff", true),
            ("rgbcolor", "rgb(255, 0, 1)", true),
            ("ssn", "123-45-6789", true),
            ("isbn10", "0321751043", true),
            ("isbn13", "978-0321751041", true),
            ("creditcard", "4111 1111 1111 1111", true),
            ("creditcard", "4111 1111 1111 1112", false),
            ("bsonobjectid", "507f1f77bcf86cd799439011", true),
            ("k8s-short-name", "my-name", true),
            ("k8s-short-name", "My-name", false),
            ("k8s-long-name", "a.b-c.d", true),
            ("email", "a@example.com", true),
            ("email", "nope", false),
            ("uri", "https://example.com/x", true),
            ("uri", "relative/path", false),
        ];
        for (f, s, want) in cases {
            assert!(is_known(f), "{f}");
            assert_eq!(validates(f, s), *want, "{f} {s}");
        }
    }

    #[test]
    fn uuid_versions_and_variants() {
        let v3 = "123e4567-e89b-32d3-0456-426614174000";
        let v4 = "123e4567-e89b-42d3-a456-426614174000";
        let v5 = "123e4567e89b52d3b456426614174000";
        let cases: &[(&str, &str, bool)] = &[
            ("uuid", v3, true),
            ("uuid", "123e4567-e89b-12d3-a456-42661417400", false),
            ("uuid3", v3, true),
            ("uuid3", v4, false),
            ("uuid4", v4, true),
            ("uuid4", "123e4567-e89b-42d3-0456-426614174000", false),
            ("uuid5", v5, true),
            ("uuid5", "123E4567-E89B-52D3-B456-426614174000", true),
            ("uuid5", v4, false),
        ];
        for (f, s, want) in cases {
            assert_eq!(validates(f, s), *want, "{f} {s}");
        }
    }
}
