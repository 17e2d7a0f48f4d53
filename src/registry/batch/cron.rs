//! The cron schedules CronJobs accept, checked as the apiserver checks them: five fields
//! (minute, hour, day of month, month, day of week) of numbers, names, `*`/`?`, ranges, steps
//! and lists, or a descriptor (`@daily`, `@every 1h`), optionally after `TZ=`/`CRON_TZ=`;
//! errors worded as the apiserver's cron parser words them; and, for the simulated CronJob
//! controller, the next time a schedule fires after a given one ([`Schedule::next_after`]), as
//! the cron library computes it (minutes on the minute, in the schedule's zone; day of month and
//! day of week either both matching when one is `*`, or either matching otherwise).

use std::str::FromStr;
use std::time::Duration;

use chrono::{DateTime, Datelike, NaiveDateTime, TimeZone, Timelike, Utc};
use chrono_tz::Tz;

/// The bit marking a field written `*` or `?` (without a step): how the cron library tells
/// "any day" from "every day" when it combines day of month and day of week.
const STAR: u64 = 1 << 63;

/// A parsed schedule.
#[derive(Debug, Clone, PartialEq)]
pub enum Schedule {
    /// Five fields, each the set of values it allows as bits (bit 63 marking a `*`), in a zone.
    Fields {
        /// Minutes 0-59.
        minute: u64,
        /// Hours 0-23.
        hour: u64,
        /// Days of the month 1-31.
        day_of_month: u64,
        /// Months 1-12.
        month: u64,
        /// Days of the week 0-6 (Sunday is 0).
        day_of_week: u64,
        /// The zone the fields are read in (UTC unless `TZ=` names one).
        zone: Tz,
    },
    /// `@every <duration>`: a fixed delay of whole seconds (at least one).
    Every(Duration),
}

/// One field's names and bounds.
struct Bounds {
    min: u64,
    max: u64,
    names: &'static [(&'static str, u64)],
}

const MINUTES: Bounds = Bounds {
    min: 0,
    max: 59,
    names: &[],
};
const HOURS: Bounds = Bounds {
    min: 0,
    max: 23,
    names: &[],
};
const DAYS_OF_MONTH: Bounds = Bounds {
    min: 1,
    max: 31,
    names: &[],
};
const MONTHS: Bounds = Bounds {
    min: 1,
    max: 12,
    names: &[
        ("jan", 1),
        ("feb", 2),
        ("mar", 3),
        ("apr", 4),
        ("may", 5),
        ("jun", 6),
        ("jul", 7),
        ("aug", 8),
        ("sep", 9),
        ("oct", 10),
        ("nov", 11),
        ("dec", 12),
    ],
};
const DAYS_OF_WEEK: Bounds = Bounds {
    min: 0,
    max: 6,
    names: &[
        ("sun", 0),
        ("mon", 1),
        ("tue", 2),
        ("wed", 3),
        ("thu", 4),
        ("fri", 5),
        ("sat", 6),
    ],
};

impl Schedule {
    /// The first time strictly after `after` that the schedule fires (`Schedule.Next`); `None`
    /// when it never does within five years (`0 0 30 2 *`).
    pub fn next_after(&self, after: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let (minute, hour, day_of_month, month, day_of_week, zone) = match self {
            Schedule::Every(delay) => {
                let whole = after - chrono::Duration::nanoseconds(i64::from(after.nanosecond()));
                return chrono::Duration::from_std(*delay).ok().map(|d| whole + d);
            }
            Schedule::Fields {
                minute,
                hour,
                day_of_month,
                month,
                day_of_week,
                zone,
            } => (*minute, *hour, *day_of_month, *month, *day_of_week, *zone),
        };
        let has = |bits: u64, v: u32| bits & (1u64 << v) != 0;
        let day_matches = |t: &NaiveDateTime| {
            let dom = has(day_of_month, t.day());
            let dow = has(day_of_week, t.weekday().num_days_from_sunday());
            if day_of_month & STAR != 0 || day_of_week & STAR != 0 {
                dom && dow
            } else {
                dom || dow
            }
        };
        let local = after.with_timezone(&zone).naive_local();
        let mut t = local.with_second(0)?.with_nanosecond(0)? + chrono::Duration::minutes(1);
        let last_year = t.year() + 5;
        while t.year() <= last_year {
            if !has(month, t.month()) {
                t = first_of_next_month(&t)?;
            } else if !day_matches(&t) {
                t = t.date().succ_opt()?.and_hms_opt(0, 0, 0)?;
            } else if !has(hour, t.hour()) {
                t = t.with_minute(0)? + chrono::Duration::hours(1);
            } else if !has(minute, t.minute()) {
                t += chrono::Duration::minutes(1);
            } else {
                // A local time a daylight saving change skips does not happen.
                match zone.from_local_datetime(&t).earliest() {
                    Some(at) if at.with_timezone(&Utc) > after => {
                        return Some(at.with_timezone(&Utc))
                    }
                    _ => t += chrono::Duration::minutes(1),
                }
            }
        }
        None
    }
}

/// Midnight of the first day of the month after `t`'s.
fn first_of_next_month(t: &NaiveDateTime) -> Option<NaiveDateTime> {
    let (year, month) = if t.month() == 12 {
        (t.year() + 1, 1)
    } else {
        (t.year(), t.month() + 1)
    };
    chrono::NaiveDate::from_ymd_opt(year, month, 1)?.and_hms_opt(0, 0, 0)
}

/// The zone Go's `time.LoadLocation` finds (`""` and `UTC` are UTC, and so is `Local`: the
/// controller's zone, UTC in a cluster's kube-controller-manager); its error otherwise.
pub fn load_location(name: &str) -> Result<Tz, String> {
    if name.is_empty() || name == "UTC" || name == "Local" {
        return Ok(chrono_tz::UTC);
    }
    Tz::from_str(name).map_err(|_| format!("unknown time zone {name}"))
}

/// Parses a standard cron schedule; the parser's error text when it is not one.
pub fn parse(spec: &str) -> Result<(), String> {
    schedule(spec).map(|_| ())
}

/// Parses a standard cron schedule (`ParseStandard`).
pub fn schedule(spec: &str) -> Result<Schedule, String> {
    if spec.is_empty() {
        return Err("empty spec string".into());
    }
    let mut spec = spec;
    let mut zone = chrono_tz::UTC;
    if spec.starts_with("TZ=") || spec.starts_with("CRON_TZ=") {
        let Some(space) = spec.find(' ') else {
            // Go slices up to a missing space and panics; the apiserver reports the panic.
            return Err(
                "invalid schedule format: runtime error: slice bounds out of range [:-1]".into(),
            );
        };
        let eq = spec.find('=').unwrap_or(0);
        let name = spec.get(eq + 1..space).unwrap_or("");
        zone = load_location(name).map_err(|e| format!("provided bad location {name}: {e}"))?;
        spec = spec[space..].trim();
    }
    if spec.starts_with('@') {
        return descriptor(spec, zone);
    }
    let fields: Vec<&str> = spec.split_whitespace().collect();
    if fields.len() != 5 {
        return Err(format!(
            "expected exactly 5 fields, found {}: [{}]",
            fields.len(),
            fields.join(" ")
        ));
    }
    let bounds = [&MINUTES, &HOURS, &DAYS_OF_MONTH, &MONTHS, &DAYS_OF_WEEK];
    let mut bits = [0u64; 5];
    for ((field, bounds), bits) in fields.iter().zip(bounds).zip(bits.iter_mut()) {
        for expr in field.split(',').filter(|e| !e.is_empty()) {
            *bits |= range(expr, bounds)?;
        }
    }
    let [minute, hour, day_of_month, month, day_of_week] = bits;
    Ok(Schedule::Fields {
        minute,
        hour,
        day_of_month,
        month,
        day_of_week,
        zone,
    })
}

/// `@yearly` and friends, or `@every <duration>`.
fn descriptor(spec: &str, zone: Tz) -> Result<Schedule, String> {
    let all = |b: &Bounds| span(b.min, b.max, 1) | STAR;
    let one = |v: u64| 1u64 << v;
    let fields = |minute, hour, day_of_month, month, day_of_week| Schedule::Fields {
        minute,
        hour,
        day_of_month,
        month,
        day_of_week,
        zone,
    };
    let (any_day, any_month, any_weekday) = (all(&DAYS_OF_MONTH), all(&MONTHS), all(&DAYS_OF_WEEK));
    match spec {
        "@yearly" | "@annually" => Ok(fields(one(0), one(0), one(1), one(1), any_weekday)),
        "@monthly" => Ok(fields(one(0), one(0), one(1), any_month, any_weekday)),
        "@weekly" => Ok(fields(one(0), one(0), any_day, any_month, one(0))),
        "@daily" | "@midnight" => Ok(fields(one(0), one(0), any_day, any_month, any_weekday)),
        "@hourly" => Ok(fields(one(0), all(&HOURS), any_day, any_month, any_weekday)),
        _ => match spec.strip_prefix("@every ") {
            Some(duration) => {
                let d = parse_duration(duration)
                    .map_err(|e| format!("failed to parse duration {spec}: {e}"))?;
                // The library keeps whole seconds, and at least one.
                Ok(Schedule::Every(Duration::from_secs(d.as_secs().max(1))))
            }
            None => Err(format!("unrecognized descriptor: {spec}")),
        },
    }
}

/// The bits of `min..=max` by `step`.
fn span(min: u64, max: u64, step: u64) -> u64 {
    (min..=max.min(62))
        .step_by(usize::try_from(step.max(1)).unwrap_or(1))
        .fold(0, |bits, v| bits | (1 << v))
}

/// One range of a field: `*`, `?`, `n`, `a-b`, each with an optional `/step`; its bits.
fn range(expr: &str, bounds: &Bounds) -> Result<u64, String> {
    let range_and_step: Vec<&str> = expr.split('/').collect();
    let low_and_high: Vec<&str> = range_and_step[0].split('-').collect();
    let star = low_and_high[0] == "*" || low_and_high[0] == "?";
    let (start, mut end) = if star {
        (bounds.min, bounds.max)
    } else {
        let start = int_or_name(low_and_high[0], bounds)?;
        match low_and_high.len() {
            1 => (start, start),
            2 => (start, int_or_name(low_and_high[1], bounds)?),
            _ => return Err(format!("too many hyphens: {expr}")),
        }
    };
    let step = match range_and_step.len() {
        1 => 1,
        2 => {
            let step = int(range_and_step[1])?;
            if low_and_high.len() == 1 {
                end = bounds.max;
            }
            step
        }
        _ => return Err(format!("too many slashes: {expr}")),
    };
    if start < bounds.min {
        return Err(format!(
            "beginning of range ({start}) below minimum ({}): {expr}",
            bounds.min
        ));
    }
    if end > bounds.max {
        return Err(format!(
            "end of range ({end}) above maximum ({}): {expr}",
            bounds.max
        ));
    }
    if start > end {
        return Err(format!(
            "beginning of range ({start}) beyond end of range ({end}): {expr}"
        ));
    }
    if step == 0 {
        return Err(format!("step of range should be a positive number: {expr}"));
    }
    let extra = if star && step == 1 { STAR } else { 0 };
    Ok(span(start, end, step) | extra)
}

fn int_or_name(expr: &str, bounds: &Bounds) -> Result<u64, String> {
    let lower = expr.to_ascii_lowercase();
    match bounds.names.iter().find(|(n, _)| *n == lower) {
        Some((_, v)) => Ok(*v),
        None => int(expr),
    }
}

/// `strconv.Atoi`, refusing negative numbers, with the parser's wording.
fn int(expr: &str) -> Result<u64, String> {
    let digits = expr.strip_prefix(['+', '-']).unwrap_or(expr);
    let syntax_ok = !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit());
    if !syntax_ok {
        return Err(format!(
            "failed to parse int from {expr}: strconv.Atoi: parsing {expr:?}: invalid syntax"
        ));
    }
    let num: i64 = expr.parse().map_err(|_| {
        format!(
            "failed to parse int from {expr}: strconv.Atoi: parsing {expr:?}: value out of range"
        )
    })?;
    u64::try_from(num).map_err(|_| format!("negative number ({num}) not allowed: {expr}"))
}

/// Go's `time.ParseDuration` (a negative duration is zero here).
fn parse_duration(text: &str) -> Result<Duration, String> {
    let nanos = crate::machinery::duration::parse_duration(text)?;
    Ok(Duration::from_nanos(u64::try_from(nanos).unwrap_or(0)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn at(text: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(text)
            .map(|t| t.with_timezone(&Utc))
            .unwrap()
    }

    #[rstest]
    #[case("* * * * *", "2026-03-01T12:00:30Z", Some("2026-03-01T12:01:00Z"))]
    #[case("* * * * *", "2026-03-01T12:00:00Z", Some("2026-03-01T12:01:00Z"))]
    #[case("*/15 * * * *", "2026-03-01T12:14:59Z", Some("2026-03-01T12:15:00Z"))]
    #[case("30 9 * * *", "2026-03-01T09:30:00Z", Some("2026-03-02T09:30:00Z"))]
    #[case("0 0 * * MON", "2026-03-01T12:00:00Z", Some("2026-03-02T00:00:00Z"))]
    // Day of month or day of week when neither is `*`: the 15th, or a Friday first.
    #[case("0 0 15 * 5", "2026-03-01T00:00:00Z", Some("2026-03-06T00:00:00Z"))]
    // Both when one is `*`.
    #[case("0 0 15 * *", "2026-03-01T00:00:00Z", Some("2026-03-15T00:00:00Z"))]
    #[case("0 0 1 1 *", "2026-03-01T00:00:00Z", Some("2027-01-01T00:00:00Z"))]
    #[case("@hourly", "2026-03-01T12:00:00Z", Some("2026-03-01T13:00:00Z"))]
    #[case("@weekly", "2026-03-01T12:00:00Z", Some("2026-03-08T00:00:00Z"))]
    #[case("@every 90s", "2026-03-01T12:00:00.5Z", Some("2026-03-01T12:01:30Z"))]
    #[case("@every 100ms", "2026-03-01T12:00:00Z", Some("2026-03-01T12:00:01Z"))]
    #[case(
        "TZ=Europe/Berlin 0 9 * * *",
        "2026-01-01T00:00:00Z",
        Some("2026-01-01T08:00:00Z")
    )]
    #[case("0 0 30 2 *", "2026-03-01T00:00:00Z", None)]
    fn next_times(#[case] spec: &str, #[case] after: &str, #[case] next: Option<&str>) {
        let schedule = schedule(spec).unwrap();
        assert_eq!(schedule.next_after(at(after)), next.map(at), "{spec}");
    }

    #[test]
    fn schedules_as_the_cron_parser_reads_them() {
        for ok in [
            "*/5 * * * *",
            "0 0 * * MON-FRI",
            "@hourly",
            "@every 1h30m",
            "TZ=UTC 0 * * * *",
            "CRON_TZ=Europe/Berlin 0 1 * * ?",
            "0-59/15 1,2,3 1-31 jan-dec sun",
        ] {
            assert_eq!(parse(ok), Ok(()), "{ok}");
        }
        let cases = [
            ("", "empty spec string"),
            ("* * * *", "expected exactly 5 fields, found 4: [* * * *]"),
            ("60 * * * *", "end of range (60) above maximum (59): 60"),
            ("* * 0 * *", "beginning of range (0) below minimum (1): 0"),
            (
                "5-1 * * * *",
                "beginning of range (5) beyond end of range (1): 5-1",
            ),
            (
                "*/0 * * * *",
                "step of range should be a positive number: */0",
            ),
            (
                "x * * * *",
                "failed to parse int from x: strconv.Atoi: parsing \"x\": invalid syntax",
            ),
            ("@weekday", "unrecognized descriptor: @weekday"),
            (
                "@every 1d",
                "failed to parse duration @every 1d: time: unknown unit \"d\" in duration \"1d\"",
            ),
            (
                "TZ=Nowhere/City * * * * *",
                "provided bad location Nowhere/City: unknown time zone Nowhere/City",
            ),
            ("1-2-3 * * * *", "too many hyphens: 1-2-3"),
        ];
        for (spec, err) in cases {
            assert_eq!(parse(spec), Err(err.to_string()), "{spec}");
        }
    }
}
