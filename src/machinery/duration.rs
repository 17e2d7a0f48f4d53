//! Go's durations as Kubernetes writes and reads them: `time.Duration.String()` and
//! `time.ParseDuration`, with the time package's error texts (`metav1.Duration`, CEL's
//! `duration()`, CronJob `@every`, the simulated cluster's annotations).

/// The quoting of Go's time package in its error texts: `"` and `\` escaped, bytes of
/// non-ASCII and control characters as `\xNN`.
pub fn quote(s: &[u8]) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for &c in s {
        match c {
            b'"' | b'\\' => {
                out.push('\\');
                out.push(c as char);
            }
            0x20..0x80 => out.push(c as char),
            _ => out.push_str(&format!("\\x{c:02x}")),
        }
    }
    out.push('"');
    out
}

/// Go's `time.Duration.String()`: `1h2m3.5s`, `1.5µs`, `0s`.
pub fn format_duration(d: i64) -> String {
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

/// Go's `time.ParseDuration`, with its error texts: `[-+]?([0-9]*(\.[0-9]*)?[a-z]+)+`, or `0`.
pub fn parse_duration(orig: &str) -> Result<i64, String> {
    let invalid = || format!("time: invalid duration {}", quote(orig.as_bytes()));
    let mut s = orig.as_bytes();
    let mut neg = false;
    if let Some(&c @ (b'-' | b'+')) = s.first() {
        neg = c == b'-';
        s = &s[1..];
    }
    if s == b"0" {
        return Ok(0);
    }
    if s.is_empty() {
        return Err(invalid());
    }
    const LIMIT: u64 = 1 << 63;
    let mut total: u64 = 0;
    while !s.is_empty() {
        if !(s[0] == b'.' || s[0].is_ascii_digit()) {
            return Err(invalid());
        }
        // The integer part: an overflow is an error.
        let int_len = s.iter().take_while(|c| c.is_ascii_digit()).count();
        let mut v: u64 = 0;
        for &c in &s[..int_len] {
            if v > LIMIT / 10 {
                return Err(invalid());
            }
            v = v * 10 + u64::from(c - b'0');
            if v > LIMIT {
                return Err(invalid());
            }
        }
        s = &s[int_len..];
        // The fraction: digits beyond what fits are ignored.
        let (mut f, mut scale, mut post) = (0u64, 1f64, false);
        if s.first() == Some(&b'.') {
            s = &s[1..];
            let n = s.iter().take_while(|c| c.is_ascii_digit()).count();
            post = n > 0;
            let mut overflow = false;
            for &c in &s[..n] {
                if overflow || f > (LIMIT - 1) / 10 {
                    overflow = true;
                    continue;
                }
                let y = f * 10 + u64::from(c - b'0');
                if y > LIMIT {
                    overflow = true;
                    continue;
                }
                f = y;
                scale *= 10.0;
            }
            s = &s[n..];
        }
        if int_len == 0 && !post {
            return Err(invalid());
        }
        let unit_len = s
            .iter()
            .take_while(|&&c| c != b'.' && !c.is_ascii_digit())
            .count();
        if unit_len == 0 {
            return Err(format!(
                "time: missing unit in duration {}",
                quote(orig.as_bytes())
            ));
        }
        let unit_text = &s[..unit_len];
        s = &s[unit_len..];
        let unit: u64 = match unit_text {
            b"ns" => 1,
            // `µs` with U+00B5 (micro sign) or U+03BC (Greek mu).
            b"us" | [0xc2, 0xb5, b's'] | [0xce, 0xbc, b's'] => 1_000,
            b"ms" => 1_000_000,
            b"s" => 1_000_000_000,
            b"m" => 60_000_000_000,
            b"h" => 3_600_000_000_000,
            u => {
                return Err(format!(
                    "time: unknown unit {} in duration {}",
                    quote(u),
                    quote(orig.as_bytes())
                ))
            }
        };
        if v > LIMIT / unit {
            return Err(invalid());
        }
        v *= unit;
        if f > 0 {
            v += (f as f64 * (unit as f64 / scale)) as u64;
            if v > LIMIT {
                return Err(invalid());
            }
        }
        // Go's uint64 addition wraps (2^63 + 2^63 is 0, which it accepts).
        total = total.wrapping_add(v);
        if total > LIMIT {
            return Err(invalid());
        }
    }
    if neg {
        return Ok((total as i64).wrapping_neg());
    }
    i64::try_from(total).map_err(|_| invalid())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("0", 0)]
    #[case("1.5h", 5_400_000_000_000)]
    #[case("300ms2us", 300_002_000)]
    #[case("+.5s", 500_000_000)]
    #[case("1µs", 1_000)]
    #[case("-2562047h47m16.854775808s", i64::MIN)]
    fn parses(#[case] text: &str, #[case] nanos: i64) {
        assert_eq!(parse_duration(text), Ok(nanos));
    }

    #[rstest]
    #[case("", "time: invalid duration \"\"")]
    #[case("1", "time: missing unit in duration \"1\"")]
    #[case("1d", "time: unknown unit \"d\" in duration \"1d\"")]
    #[case(".s", "time: invalid duration \".s\"")]
    #[case("3000000h", "time: invalid duration \"3000000h\"")]
    #[case("1..5s", "time: missing unit in duration \"1..5s\"")]
    fn refuses(#[case] text: &str, #[case] why: &str) {
        assert_eq!(parse_duration(text), Err(why.to_string()));
    }

    #[rstest]
    #[case(0, "0s")]
    #[case(1_500, "1.5µs")]
    #[case(90_000_000_000, "1m30s")]
    #[case(-3_723_500_000_000, "-1h2m3.5s")]
    #[case(60_000_000_000, "1m0s")]
    #[case(i64::MIN, "-2562047h47m16.854775808s")]
    fn formats(#[case] nanos: i64, #[case] text: &str) {
        assert_eq!(format_duration(nanos), text);
        assert_eq!(parse_duration(text), Ok(nanos));
    }
}
