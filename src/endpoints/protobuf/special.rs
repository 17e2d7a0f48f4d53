//! The text forms of the types whose JSON Go writes by hand: `metav1.Time` and `MicroTime`
//! (RFC 3339), `metav1.Duration` (Go's `time.Duration` syntax) and `resource.Quantity` (its
//! syntax check). Their wire handling is in `decode.rs` and `encode.rs`.

use chrono::{Datelike, Timelike};

/// `metav1.Time` of Go's zero `time.Time` (0001-01-01T00:00:00Z), as Unix seconds. Go encodes
/// that value as `null`.
pub(super) const GO_ZERO_TIME_UNIX: i64 = -62_135_596_800;

/// A time as Unix seconds and nanoseconds (`0..1e9`) as `metav1.Time` (`micros == false`, whole
/// seconds) or `metav1.MicroTime` (6 fractional digits) marshal it: RFC 3339 in UTC, the year
/// written as Go's time formatting writes it (at least four digits, `-` for negative years).
/// Times beyond chrono's range (some 262,000 years either way; only a hostile body carries
/// them) are clamped to it.
pub(super) fn format_time(secs: i64, nanos: u32, micros: bool) -> String {
    let t = chrono::DateTime::from_timestamp(secs, nanos).unwrap_or(if secs < 0 {
        chrono::DateTime::<chrono::Utc>::MIN_UTC
    } else {
        chrono::DateTime::<chrono::Utc>::MAX_UTC
    });
    let year = t.year();
    let year = if year < 0 {
        format!("-{:04}", year.unsigned_abs())
    } else {
        format!("{year:04}")
    };
    let frac = if micros {
        format!(".{:06}", t.nanosecond() / 1000)
    } else {
        String::new()
    };
    format!(
        "{year}-{:02}-{:02}T{:02}:{:02}:{:02}{frac}Z",
        t.month(),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    )
}

/// An RFC 3339 time as Unix seconds and nanoseconds.
pub(super) fn parse_time(s: &str) -> Result<(i64, u32), String> {
    let t =
        chrono::DateTime::parse_from_rfc3339(s).map_err(|e| format!("parsing time {s:?}: {e}"))?;
    Ok((t.timestamp(), t.timestamp_subsec_nanos()))
}

/// Go's `time.Duration.String()`: `1h2m3.5s`, `1.5µs`, `0s`.
pub(super) fn format_duration(d: i64) -> String {
    if d == 0 {
        return "0s".into();
    }
    let sign = if d < 0 { "-" } else { "" };
    let u = d.unsigned_abs();
    const S: u64 = 1_000_000_000;
    let body = if u < S {
        let (div, unit) = match u {
            0..1_000 => (1, "ns"),
            1_000..1_000_000 => (1_000, "µs"),
            _ => (1_000_000, "ms"),
        };
        format!("{}{unit}", decimal(u, div))
    } else {
        let (h, m) = (u / (3600 * S), u / (60 * S) % 60);
        let secs = decimal(u % (60 * S), S);
        match (h, m) {
            (0, 0) => format!("{secs}s"),
            (0, m) => format!("{m}m{secs}s"),
            (h, m) => format!("{h}h{m}m{secs}s"),
        }
    };
    format!("{sign}{body}")
}

/// `v / div` with the fraction's trailing zeros removed (`div` a power of ten).
fn decimal(v: u64, div: u64) -> String {
    let (whole, frac) = (v / div, v % div);
    if frac == 0 {
        return whole.to_string();
    }
    let width = div.ilog10() as usize;
    let frac = format!("{frac:0width$}");
    format!("{whole}.{}", frac.trim_end_matches('0'))
}

/// Go's `time.ParseDuration`: `[-+]?([0-9]*(\.[0-9]*)?[a-z]+)+`, or `0`.
pub(super) fn parse_duration(orig: &str) -> Result<i64, String> {
    let bad = || format!("time: invalid duration {orig:?}");
    let (neg, mut s) = match orig.as_bytes().first() {
        Some(b'-') => (true, &orig[1..]),
        Some(b'+') => (false, &orig[1..]),
        _ => (false, orig),
    };
    if s == "0" {
        return Ok(0);
    }
    if s.is_empty() {
        return Err(bad());
    }
    let mut total: u64 = 0;
    while !s.is_empty() {
        let int_end = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
        let whole: u64 = if int_end == 0 {
            0
        } else {
            s[..int_end].parse().map_err(|_| bad())?
        };
        s = &s[int_end..];
        let mut frac = "";
        if let Some(rest) = s.strip_prefix('.') {
            let end = rest
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(rest.len());
            frac = &rest[..end];
            s = &rest[end..];
            if int_end == 0 && frac.is_empty() {
                return Err(bad());
            }
        } else if int_end == 0 {
            return Err(bad());
        }
        let unit_end = s
            .find(|c: char| c == '.' || c.is_ascii_digit())
            .unwrap_or(s.len());
        let unit: u64 = match &s[..unit_end] {
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            "" => return Err(format!("time: missing unit in duration {orig:?}")),
            u => return Err(format!("time: unknown unit {u:?} in duration {orig:?}")),
        };
        s = &s[unit_end..];
        let mut v = whole.checked_mul(unit).ok_or_else(bad)?;
        if !frac.is_empty() {
            let digits = &frac[..frac.len().min(18)];
            let f: u64 = digits.parse().map_err(|_| bad())?;
            let scale = 10f64.powi(digits.len() as i32);
            v = v
                .checked_add((f as f64 * (unit as f64 / scale)) as u64)
                .ok_or_else(bad)?;
        }
        total = total.checked_add(v).ok_or_else(bad)?;
    }
    match (neg, i64::try_from(total)) {
        (false, Ok(d)) => Ok(d),
        (true, Ok(d)) => Ok(-d),
        (true, Err(_)) if total == 1 << 63 => Ok(i64::MIN),
        _ => Err(bad()),
    }
}

/// `resource.ParseQuantity`'s syntax check (the value itself is kept as written).
pub(super) fn check_quantity(s: &str) -> Result<(), String> {
    const FORMAT: &str =
        "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
    if s.is_empty() {
        return Err(FORMAT.into());
    }
    let b = s.as_bytes();
    let mut pos = usize::from(matches!(b[0], b'+' | b'-'));
    let digits = |mut p: usize| {
        while p < b.len() && b[p].is_ascii_digit() {
            p += 1;
        }
        p
    };
    pos = digits(pos);
    if pos < b.len() && b[pos] == b'.' {
        pos = digits(pos + 1);
    }
    let suffix_start = pos;
    while pos < b.len() && b"eEinumkKMGTP".contains(&b[pos]) {
        pos += 1;
    }
    if pos < b.len() && matches!(b[pos], b'+' | b'-') {
        pos += 1;
    }
    if digits(pos) != b.len() {
        return Err(FORMAT.into());
    }
    match &s[suffix_start..] {
        "" | "n" | "u" | "m" | "k" | "M" | "G" | "T" | "P" | "E" => Ok(()),
        "Ki" | "Mi" | "Gi" | "Ti" | "Pi" | "Ei" => Ok(()),
        e if e.len() > 1 && e.starts_with(['e', 'E']) && e[1..].parse::<i64>().is_ok() => Ok(()),
        _ => Err("unable to parse quantity's suffix".into()),
    }
}
