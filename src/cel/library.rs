//! The Kubernetes CEL library types and conversions the `cel` crate does not have: quantities,
//! URLs, named formats, Go durations, Go float formatting, timestamps.

use std::cmp::Ordering;

use chrono::{DateTime, NaiveDate, TimeDelta, Utc};

/// A `resource.Quantity`: `mantissa * 10^exp`, plus the text it was parsed from.
#[derive(Debug, Clone, PartialEq)]
pub struct Quantity {
    /// Value digits.
    pub mantissa: i128,
    /// Decimal exponent.
    pub exp: i32,
}

fn pow10(n: u32) -> Option<i128> {
    10i128.checked_pow(n)
}

impl Quantity {
    /// Parses a quantity (`100m`, `1.5Gi`, `2e3`), as `resource.ParseQuantity`.
    pub fn parse(s: &str) -> Option<Quantity> {
        let s = s.trim();
        if s.is_empty() {
            return None;
        }
        let end = s
            .char_indices()
            .find(|(i, c)| {
                !(c.is_ascii_digit() || *c == '.' || (*i == 0 && (*c == '+' || *c == '-')))
            })
            .map(|(i, _)| i)
            .unwrap_or(s.len());
        let (num, suffix) = s.split_at(end);
        let (neg, digits) = match num.strip_prefix('-') {
            Some(d) => (true, d),
            None => (false, num.strip_prefix('+').unwrap_or(num)),
        };
        if digits.is_empty() || digits == "." || digits.matches('.').count() > 1 {
            return None;
        }
        let (int_part, frac_part) = digits.split_once('.').unwrap_or((digits, ""));
        let mut mantissa: i128 = 0;
        for c in int_part.chars().chain(frac_part.chars()) {
            mantissa = mantissa
                .checked_mul(10)?
                .checked_add(c.to_digit(10)? as i128)?;
        }
        let mut exp = -(frac_part.len() as i32);
        let mut binary = 0u32;
        match suffix {
            "" => {}
            "Ki" => binary = 10,
            "Mi" => binary = 20,
            "Gi" => binary = 30,
            "Ti" => binary = 40,
            "Pi" => binary = 50,
            "Ei" => binary = 60,
            "n" => exp -= 9,
            "u" => exp -= 6,
            "m" => exp -= 3,
            "k" => exp += 3,
            "M" => exp += 6,
            "G" => exp += 9,
            "T" => exp += 12,
            "P" => exp += 15,
            "E" => exp += 18,
            other => {
                let e = other.strip_prefix(['e', 'E'])?;
                let n: i32 = e.parse().ok()?;
                if e.is_empty() {
                    return None;
                }
                exp = exp.checked_add(n)?;
            }
        }
        if binary > 0 {
            mantissa = mantissa.checked_mul(1i128 << binary)?;
        }
        if neg {
            mantissa = -mantissa;
        }
        Some(Quantity { mantissa, exp }.normalized())
    }

    fn normalized(mut self) -> Quantity {
        if self.mantissa == 0 {
            return Quantity {
                mantissa: 0,
                exp: 0,
            };
        }
        while self.mantissa % 10 == 0 {
            self.mantissa /= 10;
            self.exp += 1;
        }
        self
    }

    /// The value as a double.
    pub fn as_f64(&self) -> f64 {
        self.mantissa as f64 * 10f64.powi(self.exp)
    }

    /// The value as an integer, when it is one and fits in 64 bits.
    pub fn as_i64(&self) -> Option<i64> {
        if self.exp < 0 {
            return None;
        }
        let v = self.mantissa.checked_mul(pow10(self.exp as u32)?)?;
        i64::try_from(v).ok()
    }

    /// -1, 0 or 1.
    pub fn sign(&self) -> i64 {
        self.mantissa.signum() as i64
    }

    /// Compares two quantities exactly (falls back to doubles when the scales overflow).
    pub fn cmp_to(&self, o: &Quantity) -> Ordering {
        let (a, b) = (self.mantissa, o.mantissa);
        let d = self.exp - o.exp;
        let exact = if d >= 0 {
            pow10(d as u32)
                .and_then(|p| a.checked_mul(p))
                .map(|x| x.cmp(&b))
        } else {
            pow10((-d) as u32)
                .and_then(|p| b.checked_mul(p))
                .map(|y| a.cmp(&y))
        };
        exact.unwrap_or_else(|| {
            self.as_f64()
                .partial_cmp(&o.as_f64())
                .unwrap_or(Ordering::Equal)
        })
    }

    /// `self + sign * o`.
    pub fn add(&self, o: &Quantity, sign: i128) -> Option<Quantity> {
        let exp = self.exp.min(o.exp);
        let a = self.mantissa.checked_mul(pow10((self.exp - exp) as u32)?)?;
        let b = o.mantissa.checked_mul(pow10((o.exp - exp) as u32)?)?;
        Some(
            Quantity {
                mantissa: a.checked_add(b.checked_mul(sign)?)?,
                exp,
            }
            .normalized(),
        )
    }
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

/// Parses an RFC 3339 timestamp or a `date` (midnight UTC).
pub fn parse_timestamp(s: &str) -> Option<DateTime<Utc>> {
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Some(t.with_timezone(&Utc));
    }
    let d = NaiveDate::parse_from_str(s, "%Y-%m-%d").ok()?;
    Some(d.and_hms_opt(0, 0, 0)?.and_utc())
}

/// Parses a Go duration (`1h30m`, `-1.5s`, `300ms`), as `time.ParseDuration`.
pub fn parse_go_duration(s: &str) -> Option<TimeDelta> {
    let (neg, mut rest) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    if rest == "0" {
        return Some(TimeDelta::zero());
    }
    if rest.is_empty() {
        return None;
    }
    let mut total: f64 = 0.0;
    while !rest.is_empty() {
        let n = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if n == 0 {
            return None;
        }
        let num: f64 = rest[..n].parse().ok()?;
        rest = &rest[n..];
        let u = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit = match &rest[..u] {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            _ => return None,
        };
        rest = &rest[u..];
        total += num * unit;
    }
    if total > i64::MAX as f64 {
        return None;
    }
    let nanos = total.round() as i64;
    Some(TimeDelta::nanoseconds(if neg { -nanos } else { nanos }))
}

/// Go's `strconv.FormatFloat(f, 'g', -1, 64)`, which CEL's `string(double)` uses.
pub fn go_float(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        };
    }
    if f == 0.0 {
        return if f.is_sign_negative() {
            "-0".into()
        } else {
            "0".into()
        };
    }
    let e = format!("{f:e}");
    let (mant, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{mant}e{sign}{:02}", exp.abs());
    }
    format!("{f}")
}

/// CEL's `string(duration)`: seconds with the shortest fraction and an `s`.
pub fn duration_string(d: TimeDelta) -> String {
    let nanos = d.num_nanoseconds().unwrap_or(i64::MAX);
    let secs = nanos / 1_000_000_000;
    let frac = (nanos % 1_000_000_000).abs();
    if frac == 0 {
        return format!("{secs}s");
    }
    let sign = if nanos < 0 && secs == 0 { "-" } else { "" };
    let f = format!("{frac:09}");
    format!("{sign}{secs}.{}s", f.trim_end_matches('0'))
}

/// CEL's `string(timestamp)`: RFC 3339 with the shortest fraction, in UTC.
pub fn timestamp_string(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::AutoSi, true)
}

fn dns1123_label(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 63
        && s.bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !s.starts_with('-')
        && !s.ends_with('-')
}

fn dns1035_label(s: &str) -> bool {
    dns1123_label(s) && s.as_bytes()[0].is_ascii_lowercase()
}

fn dns1123_subdomain(s: &str) -> bool {
    !s.is_empty() && s.len() <= 253 && s.split('.').all(dns1123_label)
}

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

/// The named formats of `format.named()`.
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_compare_exactly() {
        let a = Quantity::parse("1Gi").unwrap();
        let b = Quantity::parse("1024Mi").unwrap();
        assert_eq!(a.cmp_to(&b), Ordering::Equal);
        let c = Quantity::parse("100m").unwrap();
        assert_eq!(c.as_f64(), 0.1);
        assert!(Quantity::parse("1.5.2").is_none());
        assert_eq!(Quantity::parse("2e3").unwrap().as_i64(), Some(2000));
    }

    #[test]
    fn go_formats() {
        assert_eq!(go_float(1.5), "1.5");
        assert_eq!(go_float(1e21), "1e+21");
        assert_eq!(go_float(1234567.0), "1.234567e+06");
        assert_eq!(go_float(123456.0), "123456");
        assert_eq!(go_float(100.0), "100");
        assert_eq!(duration_string(TimeDelta::seconds(3600)), "3600s");
        assert_eq!(parse_go_duration("1h30m"), Some(TimeDelta::minutes(90)));
    }
}
