//! The cron schedules CronJobs accept, checked as the apiserver checks them: five fields
//! (minute, hour, day of month, month, day of week) of numbers, names, `*`/`?`, ranges, steps
//! and lists, or a descriptor (`@daily`, `@every 1h`), optionally after `TZ=`/`CRON_TZ=`;
//! errors worded as the apiserver's cron parser words them. Only validity is decided: no
//! controller computes next run times.

use std::str::FromStr;

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

/// Whether Go's `time.LoadLocation` knows the zone (`""` and `UTC` are UTC, `Local` the
/// server's zone); its error otherwise.
pub fn load_location(name: &str) -> Result<(), String> {
    if name.is_empty() || name == "UTC" || name == "Local" {
        return Ok(());
    }
    chrono_tz::Tz::from_str(name)
        .map(|_| ())
        .map_err(|_| format!("unknown time zone {name}"))
}

/// Parses a standard cron schedule; the parser's error text when it is not one.
pub fn parse(spec: &str) -> Result<(), String> {
    if spec.is_empty() {
        return Err("empty spec string".into());
    }
    let mut spec = spec;
    if spec.starts_with("TZ=") || spec.starts_with("CRON_TZ=") {
        let Some(space) = spec.find(' ') else {
            // Go slices up to a missing space and panics; the apiserver reports the panic.
            return Err(
                "invalid schedule format: runtime error: slice bounds out of range [:-1]".into(),
            );
        };
        let eq = spec.find('=').unwrap_or(0);
        let zone = spec.get(eq + 1..space).unwrap_or("");
        if let Err(e) = load_location(zone) {
            return Err(format!("provided bad location {zone}: {e}"));
        }
        spec = spec[space..].trim();
    }
    if spec.starts_with('@') {
        return descriptor(spec);
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
    for (field, bounds) in fields.iter().zip(bounds) {
        for expr in field.split(',').filter(|e| !e.is_empty()) {
            range(expr, bounds)?;
        }
    }
    Ok(())
}

/// `@yearly` and friends, or `@every <duration>`.
fn descriptor(spec: &str) -> Result<(), String> {
    const NAMED: &[&str] = &[
        "@yearly",
        "@annually",
        "@monthly",
        "@weekly",
        "@daily",
        "@midnight",
        "@hourly",
    ];
    if NAMED.contains(&spec) {
        return Ok(());
    }
    if let Some(duration) = spec.strip_prefix("@every ") {
        return parse_duration(duration)
            .map_err(|e| format!("failed to parse duration {spec}: {e}"));
    }
    Err(format!("unrecognized descriptor: {spec}"))
}

/// One range of a field: `*`, `?`, `n`, `a-b`, each with an optional `/step`.
fn range(expr: &str, bounds: &Bounds) -> Result<(), String> {
    let range_and_step: Vec<&str> = expr.split('/').collect();
    let low_and_high: Vec<&str> = range_and_step[0].split('-').collect();
    let (start, mut end) = if low_and_high[0] == "*" || low_and_high[0] == "?" {
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
    Ok(())
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

/// Go's `time.ParseDuration`, for validity only.
fn parse_duration(text: &str) -> Result<(), String> {
    let invalid = || format!("time: invalid duration {text:?}");
    let mut s = text.strip_prefix(['+', '-']).unwrap_or(text);
    if s == "0" {
        return Ok(());
    }
    if s.is_empty() {
        return Err(invalid());
    }
    while !s.is_empty() {
        let number_end = s
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(s.len());
        let number = &s[..number_end];
        if number.is_empty() || number == "." || number.matches('.').count() > 1 {
            return Err(invalid());
        }
        s = &s[number_end..];
        let unit_end = s
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(s.len());
        let unit = &s[..unit_end];
        if unit.is_empty() {
            return Err(format!("time: missing unit in duration {text:?}"));
        }
        if !["ns", "us", "µs", "μs", "ms", "s", "m", "h"].contains(&unit) {
            return Err(format!("time: unknown unit {unit:?} in duration {text:?}"));
        }
        s = &s[unit_end..];
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

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
