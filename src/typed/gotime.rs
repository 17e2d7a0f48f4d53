//! Go's text forms of times and durations, as `metav1.Time`, `metav1.MicroTime` and
//! `metav1.Duration` read and write them in JSON: `time.Parse` with the RFC 3339 layouts
//! (including the leniencies and the exact error texts of Go's general layout parser, which
//! the apiserver returns to clients), `Time.Format`, `time.ParseDuration` and
//! `Duration.String`.

use chrono::{Datelike, NaiveDate, Timelike};

use crate::machinery::duration::quote;

/// `metav1.Time` of Go's zero `time.Time` (0001-01-01T00:00:00Z), as Unix seconds. Go encodes
/// that value as `null`.
pub const GO_ZERO_TIME_UNIX: i64 = -62_135_596_800;

/// `time.RFC3339`, the layout `metav1.Time` parses with.
pub const RFC3339: &str = "2006-01-02T15:04:05Z07:00";

/// `metav1.RFC3339Micro`, the layout `metav1.MicroTime` parses with.
pub const RFC3339_MICRO: &str = "2006-01-02T15:04:05.000000Z07:00";

/// A time as Unix seconds and nanoseconds (`0..1e9`) as `metav1.Time` (`micros == false`, whole
/// seconds) or `metav1.MicroTime` (6 fractional digits) marshal it: RFC 3339 in UTC, the year
/// written as Go's time formatting writes it (at least four digits, `-` for negative years).
/// Times beyond chrono's range (some 262,000 years either way; only a hostile body carries
/// them) are clamped to it.
pub fn format_time(secs: i64, nanos: u32, micros: bool) -> String {
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

/// Go's `time.Parse(RFC3339, s)` (`micros == false`) or `time.Parse(RFC3339Micro, s)`: Unix
/// seconds and nanoseconds, or the `*time.ParseError` text. Go's general layout parser is more
/// lenient than RFC 3339: a one-digit hour, a fraction after the seconds (`.` or `,`, any
/// number of digits, truncated to nanoseconds) where the layout has none, zone offsets up to
/// `±24:60`. Years are four digits (0000-9999).
pub fn parse_time(s: &str, micros: bool) -> Result<(i64, u32), String> {
    let layout = if micros { RFC3339_MICRO } else { RFC3339 };
    let v = s.as_bytes();
    let err = |elem: &str, at: &[u8]| {
        format!(
            "parsing time {} as {}: cannot parse {} as {}",
            quote(v),
            quote(layout.as_bytes()),
            quote(at),
            quote(elem.as_bytes())
        )
    };
    let range = |what: &str| format!("parsing time {}: {what} out of range", quote(v));
    let mut rest = v;
    let skip = |rest: &mut &[u8], prefix: &str| -> Result<(), String> {
        match rest.split_first() {
            Some((&c, tail)) if prefix.as_bytes() == [c] => {
                *rest = tail;
                Ok(())
            }
            _ => Err(err(prefix, rest)),
        }
    };

    // 2006
    if rest.len() < 4 || !rest[0].is_ascii_digit() || !rest[..4].iter().all(u8::is_ascii_digit) {
        return Err(err("2006", rest));
    }
    let year = digits(&rest[..4]);
    rest = &rest[4..];
    // -01
    skip(&mut rest, "-")?;
    let hold = rest;
    let month = getnum(&mut rest, true).ok_or_else(|| err("01", hold))?;
    if !(1..=12).contains(&month) {
        return Err(range("month"));
    }
    // -02
    skip(&mut rest, "-")?;
    let hold = rest;
    let day = getnum(&mut rest, true).ok_or_else(|| err("02", hold))?;
    // T15
    skip(&mut rest, "T")?;
    let hold = rest;
    let hour = getnum(&mut rest, false);
    if hour.is_some_and(|h| h >= 24) {
        return Err(range("hour"));
    }
    let hour = hour.ok_or_else(|| err("15", hold))?;
    // :04
    skip(&mut rest, ":")?;
    let hold = rest;
    let minute = getnum(&mut rest, true);
    if minute.is_some_and(|m| m >= 60) {
        return Err(range("minute"));
    }
    let minute = minute.ok_or_else(|| err("04", hold))?;
    // :05, with a fraction Go accepts where the layout has none
    skip(&mut rest, ":")?;
    let hold = rest;
    let second = getnum(&mut rest, true).ok_or_else(|| err("05", hold))?;
    if second >= 60 {
        return Err(range("second"));
    }
    let mut nanos = 0;
    let fraction_follows =
        rest.len() >= 2 && matches!(rest[0], b'.' | b',') && rest[1].is_ascii_digit();
    if fraction_follows && !micros {
        let n = 1 + rest[1..].iter().take_while(|c| c.is_ascii_digit()).count();
        nanos = fraction(&rest[1..n.min(10)]);
        rest = &rest[n..];
    }
    // .000000
    if micros {
        let hold = rest;
        if rest.len() < 7 || !matches!(rest[0], b'.' | b',') {
            return Err(err(".000000", hold));
        }
        match atoi(&rest[1..7]) {
            Some(n) if n < 0 => return Err(range("fractional second")),
            Some(n) => nanos = n as u32 * 1000,
            None => return Err(err(".000000", hold)),
        }
        rest = &rest[7..];
    }
    // Z07:00
    let hold = rest;
    let mut offset = 0i64;
    if rest.first() == Some(&b'Z') {
        rest = &rest[1..];
    } else {
        if rest.len() < 6 || rest[3] != b':' {
            return Err(err("Z07:00", hold));
        }
        let (mut h, mut m) = (&rest[1..3], &rest[4..6]);
        let hr = getnum(&mut h, true);
        let mm = hr.and_then(|_| getnum(&mut m, true));
        let mut range_err = None;
        if hr.unwrap_or(0) > 24 {
            range_err = Some("time zone offset hour");
        }
        if mm.unwrap_or(0) > 60 {
            range_err = Some("time zone offset minute");
        }
        if let Some(what) = range_err {
            return Err(range(what));
        }
        let sign = match rest[0] {
            b'+' => 1,
            b'-' => -1,
            _ => 0,
        };
        match (hr, mm, sign) {
            (Some(h), Some(m), s) if s != 0 => offset = s * i64::from(h * 60 + m) * 60,
            _ => return Err(err("Z07:00", hold)),
        }
        rest = &rest[6..];
    }
    if !rest.is_empty() {
        return Err(format!(
            "parsing time {}: extra text: {}",
            quote(v),
            quote(rest)
        ));
    }
    let date = NaiveDate::from_ymd_opt(year as i32, month, day)
        .and_then(|d| d.and_hms_opt(hour, minute, second))
        .ok_or_else(|| format!("parsing time {}: day out of range", quote(v)))?;
    Ok((date.and_utc().timestamp() - offset, nanos))
}

/// Go's `getnum`: one or two digits (`fixed`: exactly two).
fn getnum(s: &mut &[u8], fixed: bool) -> Option<u32> {
    let d0 = s.first().filter(|c| c.is_ascii_digit())?;
    match s.get(1).filter(|c| c.is_ascii_digit()) {
        Some(d1) => {
            let n = u32::from(d0 - b'0') * 10 + u32::from(d1 - b'0');
            *s = &s[2..];
            Some(n)
        }
        None if fixed => None,
        None => {
            *s = &s[1..];
            Some(u32::from(d0 - b'0'))
        }
    }
}

/// The value of ASCII digits (at most 9 of them).
fn digits(s: &[u8]) -> u32 {
    s.iter().fold(0, |n, c| n * 10 + u32::from(c - b'0'))
}

/// Fraction digits (at most 9) as nanoseconds.
fn fraction(d: &[u8]) -> u32 {
    digits(d) * 10u32.pow(9 - d.len() as u32)
}

/// Go's `time.atoi` on six bytes: an optional sign, then digits only.
fn atoi(s: &[u8]) -> Option<i64> {
    let (neg, d) = match s.first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if !d.iter().all(u8::is_ascii_digit) {
        return None;
    }
    let n = i64::from(digits(d));
    Some(if neg { -n } else { n })
}
