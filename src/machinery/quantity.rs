//! `resource.Quantity`: [`Quantity`] is its exact value (parsed as `ParseQuantity` reads it,
//! compared and added as CEL's quantity library does), and [`canonicalize`] is the text Go
//! writes for it in JSON: [`canonicalize`] is what
//! `UnmarshalJSON` (`ParseQuantity`) then `MarshalJSON` (`CanonicalizeBytes`) turn a string
//! into, `"1.5"` into `"1500m"` and `"0.5Gi"` into `"512Mi"`, quirks included: a string that
//! is already canonical for its parse (`"100m"`, `"1Ki"`, but also `"+1k"`, `"01k"` and `"1."`)
//! is written back verbatim; `"1000E"` becomes `"1"` (the decimal suffix for 10^21 does not
//! exist and Go writes none); binary values are capped at 2^63-1; values beyond nanosecond
//! precision round up, away from zero.
//!
//! Go keeps a parsed quantity either as an int64 with a decimal scale (the fast path) or as an
//! arbitrary-precision decimal (`inf.Dec`). Here the second is a decimal digit string with an
//! exponent: every operation the Go code performs on it (multiply by 2^k, round up to 10^-9,
//! compare, strip factors of ten or of 1024) is done on the digits, so the cost is linear in the
//! input and an exponent such as `1e999999999` stays symbolic. Go computes such a value in full
//! (10^exponent); for exponents beyond a few million digits it does not answer in useful time,
//! and the result here is the mathematically canonical one. Go's 32-bit exponent arithmetic
//! (wrapping) is reproduced where Go finishes: on the int64 path.

use std::cmp::Ordering;

/// `resource.ErrFormatWrong`'s text.
pub const ERR_FORMAT: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
/// `resource.ErrNumeric`'s text.
pub const ERR_NUMERIC: &str = "unable to parse numeric part of quantity";
/// `resource.ErrSuffix`'s text.
pub const ERR_SUFFIX: &str = "unable to parse quantity's suffix";

/// How a quantity is written (Go's `resource.Format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Format {
    DecimalExponent,
    BinarySI,
    DecimalSI,
}

/// The canonical text Go writes for a quantity it parses from `s` (the JSON string's contents,
/// or a JSON number's literal), or `ParseQuantity`'s error text. Leading and trailing white
/// space is ignored, as `UnmarshalJSON` trims it.
pub fn canonicalize(s: &str) -> Result<String, &'static str> {
    let s = s.trim_matches(char::is_whitespace);
    if s.is_empty() {
        return Err(ERR_FORMAT);
    }
    if s == "0" {
        return Ok("0".into());
    }
    let p = scan(s)?;
    let (base, exponent, mut format) = interpret(p.suffix).ok_or(ERR_SUFFIX)?;

    // The int64 fast path, as Go takes it.
    let (mut scale, precision, mantissa): (i32, i32, i64) = match format {
        Format::DecimalExponent | Format::DecimalSI => (
            exponent,
            18i32.wrapping_sub((p.num.len() + p.denom.len()) as i32),
            1,
        ),
        Format::BinarySI if exponent >= 0 && p.denom.is_empty() => (
            0,
            15 - p.num.len() as i32 - exponent * 3 / 10 - 1,
            1i64 << exponent,
        ),
        Format::BinarySI => (0, -1, 1),
    };
    if precision >= 0 {
        scale = scale.wrapping_sub(p.denom.len() as i32);
        if scale >= -9 {
            let shifted = format!("{}{}", p.num, p.denom);
            let value: i64 = shifted.parse().map_err(|_| ERR_NUMERIC)?;
            if let Some(result) = value.checked_mul(mantissa) {
                let result = if p.positive { result } else { -result };
                let canonical_already = match format {
                    Format::BinarySI => exponent % 10 == 0 && value & 7 != 0,
                    _ => scale % 3 == 0 && !shifted.ends_with("000") && !shifted.starts_with('0'),
                };
                if canonical_already {
                    return Ok(s.to_string());
                }
                return Ok(canonical_int(result, scale, format));
            }
        }
    }

    // The arbitrary-precision path.
    let mut amount = Decimal::parse(p.value).ok_or(ERR_NUMERIC)?;
    if base == 10 {
        // Go adds the exponent to the decimal's 32-bit scale.
        let scale = (amount.frac_digits as i32).wrapping_add(exponent.wrapping_neg());
        amount.exp = -i64::from(scale);
    } else {
        amount.mul_pow2(exponent as u32);
    }
    if !amount.is_zero() {
        amount.round_up_to_nanos();
    }
    if format == Format::BinarySI && amount.cmp_magnitude(i64::MAX as u128) == Greater {
        amount = Decimal::from_int(i128::from(i64::MAX), 0).with_sign(amount.neg);
    }
    if format == Format::BinarySI && !amount.is_zero() && amount.cmp_magnitude(1) == Less {
        format = Format::DecimalSI;
    }
    Ok(canonical_decimal(amount, format))
}

use std::cmp::Ordering::{Greater, Less};

/// The parts `parseQuantityString` finds.
struct Parts<'a> {
    positive: bool,
    /// The number as written (sign, digits, point): what the slow path parses.
    value: &'a str,
    /// Integer digits without leading zeros (`0` when none).
    num: &'a str,
    /// Fraction digits.
    denom: &'a str,
    suffix: &'a str,
}

/// Go's `parseQuantityString`: a sign, digits, a point, digits, then the suffix letters, a sign
/// and digits; anything else is `ErrFormatWrong`. Early ends leave the later parts empty.
fn scan(s: &str) -> Result<Parts<'_>, &'static str> {
    let b = s.as_bytes();
    let end = b.len();
    let mut p = Parts {
        positive: true,
        value: "",
        num: "",
        denom: "",
        suffix: "",
    };
    let mut pos = 0;
    match b.first() {
        Some(b'-') => {
            p.positive = false;
            pos += 1;
        }
        Some(b'+') => pos += 1,
        _ => {}
    }
    while pos < end && b[pos] == b'0' {
        pos += 1;
    }
    if pos >= end {
        p.num = "0";
        p.value = "0";
        return Ok(p);
    }
    let start = pos;
    while pos < end && b[pos].is_ascii_digit() {
        pos += 1;
    }
    if pos >= end {
        p.num = &s[start..];
        p.value = s;
        return Ok(p);
    }
    p.num = if pos == start { "0" } else { &s[start..pos] };
    if b[pos] == b'.' {
        pos += 1;
        let start = pos;
        while pos < end && b[pos].is_ascii_digit() {
            pos += 1;
        }
        if pos >= end {
            p.denom = &s[start..];
            p.value = s;
            return Ok(p);
        }
        p.denom = &s[start..pos];
    }
    p.value = &s[..pos];
    let suffix_start = pos;
    while pos < end && b"eEinumkKMGTP".contains(&b[pos]) {
        pos += 1;
    }
    if pos >= end {
        p.suffix = &s[suffix_start..];
        return Ok(p);
    }
    if matches!(b[pos], b'-' | b'+') {
        pos += 1;
    }
    while pos < end && b[pos].is_ascii_digit() {
        pos += 1;
    }
    if pos >= end {
        p.suffix = &s[suffix_start..];
        return Ok(p);
    }
    Err(ERR_FORMAT)
}

/// The suffixes Go knows: (base, exponent, format). An `e`/`E` exponent is parsed as an int64
/// and truncated to 32 bits, as Go does.
fn interpret(suffix: &str) -> Option<(u32, i32, Format)> {
    let decimal = |e| Some((10, e, Format::DecimalSI));
    let binary = |e| Some((2, e, Format::BinarySI));
    match suffix {
        "" => decimal(0),
        "n" => decimal(-9),
        "u" => decimal(-6),
        "m" => decimal(-3),
        "k" => decimal(3),
        "M" => decimal(6),
        "G" => decimal(9),
        "T" => decimal(12),
        "P" => decimal(15),
        "E" => decimal(18),
        "Ki" => binary(10),
        "Mi" => binary(20),
        "Gi" => binary(30),
        "Ti" => binary(40),
        "Pi" => binary(50),
        "Ei" => binary(60),
        _ if suffix.len() > 1 && suffix.starts_with(['e', 'E']) => {
            parse_go_int64(&suffix[1..]).map(|e| (10, e as i32, Format::DecimalExponent))
        }
        _ => None,
    }
}

/// `strconv.ParseInt(s, 10, 64)`: an optional sign and at least one digit, within int64.
fn parse_go_int64(s: &str) -> Option<i64> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    s.strip_prefix('+').unwrap_or(s).parse().ok()
}

/// The canonical form of the int64 path's `value * 10^scale` (`int64Amount`), with Go's 32-bit
/// exponent arithmetic; it falls back to the decimal form where Go does (an overflow).
fn canonical_int(value: i64, scale: i32, format: Format) -> String {
    if value == 0 {
        return "0".into();
    }
    let as_decimal = || Decimal::from_int(i128::from(value), i64::from(scale));
    let format = match format {
        // The binary fast path always has scale 0: an exact integer.
        Format::BinarySI if scale == 0 && value.unsigned_abs() >= 1024 => {
            return binary_text(value);
        }
        Format::BinarySI if scale == 0 => Format::DecimalSI,
        Format::BinarySI => return canonical_decimal(as_decimal(), format),
        f => f,
    };
    let (mut amount, times) = strip_int_factors(value, 10);
    let mut exponent = scale.wrapping_add(times);
    let step = match exponent % 3 {
        1 | -2 => Some((10, 1)),
        2 | -1 => Some((100, 2)),
        _ => None,
    };
    if let Some((factor, by)) = step {
        match amount.checked_mul(factor) {
            Some(a) => {
                amount = a;
                exponent = exponent.wrapping_sub(by);
            }
            None => return canonical_decimal(as_decimal(), format),
        }
    }
    format!("{amount}{}", decimal_suffix(exponent, format))
}

/// `removeInt64Factors`: divides out `base` while it divides, keeping the sign.
fn strip_int_factors(value: i64, base: i64) -> (i64, i32) {
    let (mut v, mut times) = (value.unsigned_abs(), 0);
    let b = base as u64;
    while v >= b && v % b == 0 {
        v /= b;
        times += 1;
    }
    let v = v as i64;
    (if value < 0 { v.wrapping_neg() } else { v }, times)
}

/// An integer in base-1024 form: `1536Mi`, `1025`, `-8Mi`.
fn binary_text(value: i64) -> String {
    let (n, times) = strip_int_factors(value, 1024);
    let suffix = match times {
        1 => "Ki",
        2 => "Mi",
        3 => "Gi",
        4 => "Ti",
        5 => "Pi",
        6 => "Ei",
        _ => "",
    };
    format!("{n}{suffix}")
}

/// The suffix `constructBytes` gives a decimal exponent (a multiple of 3): none where Go has
/// none (DecimalSI beyond `n`..`E`).
fn decimal_suffix(exponent: i32, format: Format) -> String {
    match format {
        Format::DecimalExponent if exponent == 0 => String::new(),
        Format::DecimalExponent => format!("e{exponent}"),
        _ => match exponent {
            -9 => "n",
            -6 => "u",
            -3 => "m",
            3 => "k",
            6 => "M",
            9 => "G",
            12 => "T",
            15 => "P",
            18 => "E",
            _ => "",
        }
        .into(),
    }
}

/// `CanonicalizeBytes` of an arbitrary-precision value.
fn canonical_decimal(amount: Decimal, format: Format) -> String {
    if amount.is_zero() {
        return "0".into();
    }
    let format = match format {
        Format::BinarySI if amount.cmp_magnitude(1024) == Less => Format::DecimalSI,
        Format::BinarySI => match amount.integer() {
            Some(v) => return binary_text(v),
            None => Format::DecimalSI,
        },
        f => f,
    };
    let mut digits = amount.digits;
    let trailing = digits.iter().rev().take_while(|&&d| d == 0).count();
    digits.truncate(digits.len() - trailing);
    let mut exponent = amount.exp + trailing as i64;
    while exponent.rem_euclid(3) != 0 {
        digits.push(0);
        exponent -= 1;
    }
    let sign = if amount.neg { "-" } else { "" };
    let text: String = digits.iter().map(|&d| char::from(b'0' + d)).collect();
    let exponent = exponent as i32;
    format!("{sign}{text}{}", decimal_suffix(exponent, format))
}

/// A decimal `(-1)^neg * digits * 10^exp`, digits most significant first (values 0-9), without
/// leading zeros (empty: zero).
#[derive(Clone, Debug)]
struct Decimal {
    neg: bool,
    digits: Vec<u8>,
    exp: i64,
    /// How many digits followed the point when parsed (inf.Dec's scale).
    frac_digits: usize,
}

impl Decimal {
    /// `inf.Dec.SetString`: an optional sign, digits with at most one point, at least one digit.
    fn parse(s: &str) -> Option<Decimal> {
        let (neg, body) = match s.as_bytes().first() {
            Some(b'-') => (true, &s[1..]),
            Some(b'+') => (false, &s[1..]),
            _ => (false, s),
        };
        let (int, frac) = body.split_once('.').unwrap_or((body, ""));
        let all = int.bytes().chain(frac.bytes());
        if int.len() + frac.len() == 0 || !all.clone().all(|c| c.is_ascii_digit()) {
            return None;
        }
        let digits: Vec<u8> = all.map(|c| c - b'0').skip_while(|&d| d == 0).collect();
        Some(Decimal {
            neg,
            digits,
            exp: -(frac.len() as i64),
            frac_digits: frac.len(),
        })
    }

    fn from_int(v: i128, exp: i64) -> Decimal {
        let digits: Vec<u8> = v
            .unsigned_abs()
            .to_string()
            .bytes()
            .map(|c| c - b'0')
            .skip_while(|&d| d == 0)
            .collect();
        Decimal {
            neg: v < 0,
            digits,
            exp,
            frac_digits: 0,
        }
    }

    fn with_sign(mut self, neg: bool) -> Decimal {
        self.neg = neg;
        self
    }

    fn is_zero(&self) -> bool {
        self.digits.is_empty()
    }

    /// Multiplies by 2^k (k <= 60).
    fn mul_pow2(&mut self, k: u32) {
        let factor = 1u128 << k;
        let mut carry = 0u128;
        for d in self.digits.iter_mut().rev() {
            let v = u128::from(*d) * factor + carry;
            *d = (v % 10) as u8;
            carry = v / 10;
        }
        let mut head = Vec::new();
        while carry > 0 {
            head.push((carry % 10) as u8);
            carry /= 10;
        }
        head.reverse();
        head.append(&mut self.digits);
        self.digits = head;
    }

    /// Rounds the magnitude up (away from zero) to a multiple of 10^-9, as `inf.Dec.Round` with
    /// `RoundUp` does.
    fn round_up_to_nanos(&mut self) {
        if self.exp >= -9 {
            return;
        }
        let drop = (-9 - self.exp).unsigned_abs();
        let keep = (self.digits.len() as u64).saturating_sub(drop) as usize;
        let inexact = self.digits[keep..].iter().any(|&d| d != 0);
        self.digits.truncate(keep);
        self.exp = -9;
        if inexact {
            self.add_one_ulp();
        }
        let zeros = self.digits.iter().take_while(|&&d| d == 0).count();
        self.digits.drain(..zeros);
    }

    /// Adds one unit in the last digit.
    fn add_one_ulp(&mut self) {
        for d in self.digits.iter_mut().rev() {
            if *d == 9 {
                *d = 0;
            } else {
                *d += 1;
                return;
            }
        }
        self.digits.insert(0, 1);
    }

    /// The integer part and whether a fraction remains, if the integer part fits in an i128.
    fn split(&self) -> Option<(u128, bool)> {
        let int_len = self.digits.len() as i64 + self.exp;
        if int_len > 38 {
            return None;
        }
        let mut int = 0u128;
        for i in 0..int_len.max(0) {
            let d = self.digits.get(i as usize).copied().unwrap_or(0);
            int = int * 10 + u128::from(d);
        }
        let frac = self
            .digits
            .iter()
            .skip(int_len.max(0) as usize)
            .any(|&d| d != 0);
        Some((int, frac))
    }

    /// Compares |self| with an integer.
    fn cmp_magnitude(&self, n: u128) -> std::cmp::Ordering {
        match self.split() {
            None => Greater,
            Some((int, frac)) => match int.cmp(&n) {
                std::cmp::Ordering::Equal if frac => Greater,
                o => o,
            },
        }
    }

    /// The value rounded up (away from zero) to an integer, if that is exact and fits an i64.
    fn integer(&self) -> Option<i64> {
        let (int, frac) = self.split()?;
        if frac {
            return None;
        }
        let v = i64::try_from(int).ok()?;
        Some(if self.neg { -v } else { v })
    }
}

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
        // Exponents span all of i32: their difference is taken in i64.
        let d = i64::from(self.exp) - i64::from(o.exp);
        let scale = |d: i64| u32::try_from(d).ok().and_then(pow10);
        let exact = if d >= 0 {
            scale(d).and_then(|p| a.checked_mul(p)).map(|x| x.cmp(&b))
        } else {
            scale(-d).and_then(|p| b.checked_mul(p)).map(|y| a.cmp(&y))
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
        let scale = |e: i32| {
            u32::try_from(i64::from(e) - i64::from(exp))
                .ok()
                .and_then(pow10)
        };
        let a = self.mantissa.checked_mul(scale(self.exp)?)?;
        let b = o.mantissa.checked_mul(scale(o.exp)?)?;
        Some(
            Quantity {
                mantissa: a.checked_add(b.checked_mul(sign)?)?,
                exp,
            }
            .normalized(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_values_compare_and_add_without_overflow() {
        use std::cmp::Ordering;
        let a = Quantity::parse("1Gi").expect("parses");
        let b = Quantity::parse("1024Mi").expect("parses");
        assert_eq!(a.cmp_to(&b), Ordering::Equal);
        let huge = Quantity::parse("1e2147483647").expect("parses");
        let tiny = Quantity::parse("1e-2147483647").expect("parses");
        assert_eq!(huge.cmp_to(&tiny), Ordering::Greater);
        assert_eq!(tiny.cmp_to(&huge), Ordering::Less);
        assert!(
            huge.add(&tiny, 1).is_none(),
            "overflows to nothing, not a panic"
        );
    }

    #[test]
    fn parse_then_marshal_gives_go_s_text() {
        for (input, want) in [
            ("1.5", "1500m"),
            ("1000Mi", "1000Mi"),
            ("0.5Gi", "512Mi"),
            ("1.5Gi", "1536Mi"),
            ("100m", "100m"),
            ("1000m", "1"),
            ("0.1", "100m"),
            ("1e3", "1e3"),
            ("1E3", "1E3"),
            ("1.5e3", "1500"),
            ("+1k", "+1k"),
            ("01k", "01k"),
            ("1.", "1."),
            (".5", "500m"),
            ("-1", "-1"),
            ("-0", "0"),
            ("+0", "0"),
            ("0.0", "0"),
            ("1Ki", "1Ki"),
            ("1024Ki", "1Mi"),
            ("8Ki", "8Ki"),
            ("1023Ki", "1023Ki"),
            ("1000E", "1"),
            ("8Ei", "9223372036854775807"),
            ("1Ei", "1Ei"),
            ("0.001Ki", "1024m"),
            ("0.0001Ki", "102400u"),
            ("Mi", "0"),
            ("0.1n", "1n"),
            ("1e-10", "1e-9"),
            ("1e100", "10e99"),
            ("1e-100", "1e-9"),
            ("10e2147483647", "10e2147483647"),
            ("1e2147483647", "10e2147483646"),
            (" 1 ", "1"),
            ("+", "0"),
            (".", "0"),
            ("1.5Ki", "1536"),
            ("0.5Ki", "512"),
            ("-1.5Gi", "-1536Mi"),
            ("-8Mi", "-8Mi"),
            ("1.0000000001", "1000000001n"),
            (
                "123456789012345678901234567890",
                "123456789012345678901234567890",
            ),
        ] {
            assert_eq!(canonicalize(input).as_deref(), Ok(want), "{input}");
        }
    }

    #[test]
    fn invalid_quantities_fail_with_go_s_errors() {
        for (input, want) in [
            ("", ERR_FORMAT),
            ("abc", ERR_FORMAT),
            ("1 k", ERR_FORMAT),
            ("1.2.3", ERR_FORMAT),
            ("1K", ERR_SUFFIX),
            ("1e", ERR_SUFFIX),
            ("1e+", ERR_SUFFIX),
            ("1+", ERR_SUFFIX),
            ("+.e-10", ERR_NUMERIC),
        ] {
            assert_eq!(canonicalize(input), Err(want), "{input}");
        }
    }
}
