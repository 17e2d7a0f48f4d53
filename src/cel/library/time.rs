//! Timestamps and durations: the accessors (`getFullYear()`, `getHours()`... with an optional
//! time zone for timestamps), and the parsing and printing of the schema's `date`, `date-time`
//! and `duration` strings and of CEL's `string(timestamp)`/`string(duration)`.

use chrono::{DateTime, Datelike, FixedOffset, NaiveDate, TimeDelta, Timelike, Utc};

use super::{invalid, no_overload, Ctx, Function, R};
use crate::cel::value::Val;

/// The functions of this family, for the registry.
pub(super) const FUNCTIONS: &[Function] = &[
    Function::strict(
        "getFullYear",
        &["ts.getFullYear() int", "ts.getFullYear(string) int"],
        part,
    ),
    Function::strict(
        "getMonth",
        &["ts.getMonth() int", "ts.getMonth(string) int"],
        part,
    ),
    Function::strict(
        "getDayOfYear",
        &["ts.getDayOfYear() int", "ts.getDayOfYear(string) int"],
        part,
    ),
    Function::strict(
        "getDate",
        &["ts.getDate() int", "ts.getDate(string) int"],
        part,
    ),
    Function::strict(
        "getDayOfMonth",
        &["ts.getDayOfMonth() int", "ts.getDayOfMonth(string) int"],
        part,
    ),
    Function::strict(
        "getDayOfWeek",
        &["ts.getDayOfWeek() int", "ts.getDayOfWeek(string) int"],
        part,
    ),
    Function::strict(
        "getHours",
        &[
            "ts.getHours() int",
            "ts.getHours(string) int",
            "dur.getHours() int",
        ],
        part,
    ),
    Function::strict(
        "getMinutes",
        &[
            "ts.getMinutes() int",
            "ts.getMinutes(string) int",
            "dur.getMinutes() int",
        ],
        part,
    ),
    Function::strict(
        "getSeconds",
        &[
            "ts.getSeconds() int",
            "ts.getSeconds(string) int",
            "dur.getSeconds() int",
        ],
        part,
    ),
    Function::strict(
        "getMilliseconds",
        &[
            "ts.getMilliseconds() int",
            "ts.getMilliseconds(string) int",
            "dur.getMilliseconds() int",
        ],
        part,
    ),
];

fn part<'a>(cx: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    match args.as_slice() {
        [v] => time_part(cx.name, v, None),
        [v, tz] => time_part(cx.name, v, Some(tz)),
        _ => no_overload(),
    }
}

/// One accessor of a duration, or of a timestamp in UTC or the given zone.
fn time_part<'a>(name: &str, v: &Val<'a>, tz: Option<&Val<'a>>) -> R<'a> {
    match v {
        Val::Dur(d) => Ok(Val::Int(match name {
            "getHours" => d.num_hours(),
            "getMinutes" => d.num_minutes(),
            "getSeconds" => d.num_seconds(),
            "getMilliseconds" => d.num_milliseconds(),
            _ => return no_overload(),
        })),
        Val::Ts(t) => {
            let offset = match tz.map(|z| z.as_str()) {
                None => FixedOffset::east_opt(0),
                Some(Some("UTC" | "Z" | "")) => FixedOffset::east_opt(0),
                Some(Some(z)) => parse_offset(z),
                Some(None) => return no_overload(),
            };
            let Some(offset) = offset else {
                return invalid("unknown time zone");
            };
            let t = t.with_timezone(&offset);
            Ok(Val::Int(match name {
                "getFullYear" => t.year() as i64,
                "getMonth" => t.month0() as i64,
                "getDayOfYear" => t.ordinal0() as i64,
                "getDate" => t.day() as i64,
                "getDayOfMonth" => t.day0() as i64,
                "getDayOfWeek" => t.weekday().num_days_from_sunday() as i64,
                "getHours" => t.hour() as i64,
                "getMinutes" => t.minute() as i64,
                "getSeconds" => t.second() as i64,
                _ => (t.nanosecond() / 1_000_000) as i64,
            }))
        }
        _ => no_overload(),
    }
}

/// A fixed `+hh:mm` / `-hh` offset (named zones other than UTC are not supported).
fn parse_offset(z: &str) -> Option<FixedOffset> {
    let (sign, rest) = match z.as_bytes().first()? {
        b'+' => (1, &z[1..]),
        b'-' => (-1, &z[1..]),
        _ => return None,
    };
    let (h, m) = rest.split_once(':').unwrap_or((rest, "0"));
    let secs = h.parse::<i32>().ok()? * 3600 + m.parse::<i32>().ok()? * 60;
    FixedOffset::east_opt(sign * secs)
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
    crate::machinery::duration::parse_duration(s)
        .ok()
        .map(TimeDelta::nanoseconds)
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
