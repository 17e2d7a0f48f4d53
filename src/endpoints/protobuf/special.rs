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
