//! How Go prints the values that end up in apiserver messages.
//!
//! The apiserver builds messages with `fmt` and `encoding/json`, and clients (and tests) compare
//! them as strings, so the exact rendering of numbers and strings matters: `%v` of a float64 is
//! `1e+06` where serde_json writes `1000000.0`, `%q` escapes differently from Rust's `{:?}`, and
//! `json.Marshal` escapes `<`, `>` and `&`.

use serde_json::Value;
use std::fmt::Write;

/// A JSON number as Go's `k8s.io/apimachinery/pkg/util/json` decodes it: `int64` when the literal
/// is an integer that fits, `float64` otherwise.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum GoNum {
    /// An `int64`.
    Int(i64),
    /// A `float64`.
    Float(f64),
}

impl GoNum {
    /// The Go number a serde_json number decodes to (`None` when `v` is not a number).
    pub fn of(v: &Value) -> Option<GoNum> {
        let n = match v {
            Value::Number(n) => n,
            _ => return None,
        };
        if let Some(i) = n.as_i64() {
            Some(GoNum::Int(i))
        } else {
            n.as_f64().map(GoNum::Float)
        }
    }

    /// The value as float64 (Go's `valueHelp.asFloat64`).
    pub fn as_f64(self) -> f64 {
        match self {
            GoNum::Int(i) => i as f64,
            GoNum::Float(f) => f,
        }
    }
}

/// Splits a finite float into its shortest round-trip decimal digits and decimal exponent:
/// `1234.5` gives `("12345", 3)` (the value is `0.12345 * 10^(3+1)` in Go's `decimal.dp` sense
/// minus one, i.e. `exp` is the exponent of the first digit).
fn shortest_digits(f: f64) -> (String, i32) {
    let s = format!("{:e}", f.abs());
    let (mant, exp) = s.split_once('e').unwrap_or((s.as_str(), "0"));
    let digits: String = mant.chars().filter(|c| c.is_ascii_digit()).collect();
    let digits = digits.trim_end_matches('0');
    let digits = if digits.is_empty() { "0" } else { digits };
    (digits.to_string(), exp.parse().unwrap_or(0))
}

/// Go's `%e` with the shortest precision: `1.234567e+06`, `1e-07`.
fn go_exp(f: f64) -> String {
    let (digits, exp) = shortest_digits(f);
    let mut out = String::new();
    if f.is_sign_negative() {
        out.push('-');
    }
    out.push_str(&digits[..1]);
    if digits.len() > 1 {
        out.push('.');
        out.push_str(&digits[1..]);
    }
    out.push('e');
    out.push(if exp < 0 { '-' } else { '+' });
    let _ = write!(out, "{:02}", exp.abs());
    out
}

/// Go's `strconv.FormatFloat(f, 'f', -1, 64)` (also `swag.FormatFloat64`): shortest digits, no
/// exponent.
pub fn format_float_f(f: f64) -> String {
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    format!("{f}")
}

/// Go's `%v` (`%g` with shortest precision) of a float64: exponent form when the decimal
/// exponent is below -4 or at least 6 (`strconv`'s "shortest uses precision 6" rule), so
/// `1e6` prints as `1e+06` and `123456` as `123456`.
pub fn go_float_v(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf" } else { "-Inf" }.into();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.to_string();
    }
    let (_, exp) = shortest_digits(f);
    if !(-4..6).contains(&exp) {
        go_exp(f)
    } else {
        format_float_f(f)
    }
}

/// Go's `%v` of a JSON number as the apiserver holds it (int64 or float64).
pub fn go_num_v(n: GoNum) -> String {
    match n {
        GoNum::Int(i) => i.to_string(),
        GoNum::Float(f) => go_float_v(f),
    }
}

/// Go's `%v` of a value of an unstructured object (`map[a:1 b:[x y]]`, `<nil>`, strings bare).
pub fn go_v(v: &Value) -> String {
    match v {
        Value::Null => "<nil>".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(_) => GoNum::of(v).map_or_else(|| "0".into(), go_num_v),
        Value::String(s) => s.clone(),
        Value::Array(a) => format!("[{}]", a.iter().map(go_v).collect::<Vec<_>>().join(" ")),
        Value::Object(m) => {
            // fmt prints a map's entries sorted by key, as serde_json's map holds them.
            let items: Vec<String> = m.iter().map(|(k, x)| format!("{k}:{}", go_v(x))).collect();
            format!("map[{}]", items.join(" "))
        }
    }
}

/// Go's `%T` of a value of an unstructured object.
pub fn go_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(_) => match GoNum::of(v) {
            Some(GoNum::Int(_)) => "int64",
            _ => "float64",
        },
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

fn is_go_print(c: char) -> bool {
    if c == ' ' {
        return true;
    }
    if c.is_control() || c.is_whitespace() {
        return false;
    }
    !matches!(c, '\u{ad}' | '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}' | '\u{2060}'..='\u{206f}' | '\u{feff}' | '\u{fff9}'..='\u{fffb}' | '\u{e000}'..='\u{f8ff}')
}

/// Go's `%q` (`strconv.Quote`).
pub fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if is_go_print(c) => out.push(c),
            c if (c as u32) < 0x80 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c if (c as u32) < 0x10000 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => {
                let _ = write!(out, "\\U{:08x}", c as u32);
            }
        }
    }
    out.push('"');
    out
}

/// Go's `%q` of a `[]string`: `["a" "b"]`.
pub fn go_quote_list(list: &[String]) -> String {
    let quoted: Vec<String> = list.iter().map(|s| go_quote(s)).collect();
    format!("[{}]", quoted.join(" "))
}

fn go_json_float(f: f64) -> String {
    let abs = f.abs();
    if abs != 0.0 && !(1e-6..1e21).contains(&abs) {
        let mut s = go_exp(f);
        // encoding/json turns e-07 into e-7.
        let b = s.as_bytes();
        let n = b.len();
        if n >= 4 && b[n - 4] == b'e' && b[n - 3] == b'-' && b[n - 2] == b'0' {
            s.remove(n - 2);
        }
        s
    } else {
        format_float_f(f)
    }
}

/// Appends `s` as Go's `json.Marshal` writes a string (HTML-safe escapes).
pub(crate) fn go_json_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Appends [`go_json`] of `v`, for callers building a larger text.
pub(crate) fn go_json_into(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(_) => match GoNum::of(v) {
            Some(GoNum::Int(i)) => {
                let _ = write!(out, "{i}");
            }
            Some(GoNum::Float(f)) => out.push_str(&go_json_float(f)),
            None => out.push('0'),
        },
        Value::String(s) => go_json_string(out, s),
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                go_json_into(out, x);
            }
            out.push(']');
        }
        Value::Object(m) => {
            out.push('{');
            // serde_json's map is ordered by key, as Go sorts map keys when marshalling.
            for (i, (k, x)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                go_json_string(out, k);
                out.push(':');
                go_json_into(out, x);
            }
            out.push('}');
        }
    }
}

/// Go's `json.Marshal` of a decoded JSON value (sorted keys, HTML-safe escapes, Go float format).
pub fn go_json(v: &Value) -> String {
    let mut out = String::new();
    go_json_into(&mut out, v);
    out
}

/// How `field.Error.ErrorBody` prints a bad value: `%v` for numbers and booleans, `%q` for
/// strings, JSON for everything else (`null` for nil).
pub fn error_value(v: &Value) -> String {
    match v {
        Value::Bool(b) => b.to_string(),
        Value::Number(_) => GoNum::of(v).map(go_num_v).unwrap_or_default(),
        Value::String(s) => go_quote(s),
        other => go_json(other),
    }
}

/// `utilerrors.NewAggregate(...).Error()`: one error as itself, several in brackets (each
/// distinct message once, unless there is only one error).
pub fn aggregate(errors: &[String]) -> String {
    if let [one] = errors {
        return one.clone();
    }
    let mut distinct = std::collections::HashSet::new();
    let seen: Vec<&str> = errors
        .iter()
        .map(String::as_str)
        .filter(|e| distinct.insert(*e))
        .collect();
    match seen.as_slice() {
        [one] => one.to_string(),
        many => format!("[{}]", many.join(", ")),
    }
}

/// Go's `strconv.ParseBool`.
pub fn parse_bool(v: &str) -> Option<bool> {
    match v {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => Some(true),
        "0" | "f" | "F" | "FALSE" | "false" | "False" => Some(false),
        _ => None,
    }
}

/// The shape of an internal Go type, for writing a value of the versioned API as encoding/json
/// writes the internal value it converts to (the bad value of a `field.Invalid` on a struct):
/// the fields (JSON name, Go name, the field's shape) in order, absent ones `null` (or
/// `0`/`false`/`""` for the scalars Go does not point to).
#[derive(Clone, Copy)]
pub enum GoShape {
    /// A struct with these fields; `pointer`: written `null` when absent.
    Struct(&'static [(&'static str, &'static str, GoShape)], bool),
    /// A list of values of a shape (`null` when absent).
    List(&'static GoShape),
    /// A string (`""` when absent).
    Text,
    /// A number (`0` when absent).
    Number,
    /// A number Go points to (`null` when absent).
    OptionalNumber,
    /// A boolean (`false` when absent).
    Flag,
}

/// Writes `v` as encoding/json writes the internal value of `shape`.
pub fn go_internal_json(v: &Value, shape: GoShape) -> String {
    match shape {
        GoShape::Struct(_, true) | GoShape::List(_) | GoShape::OptionalNumber if v.is_null() => {
            "null".into()
        }
        GoShape::Struct(fields, _) => {
            let parts: Vec<String> = fields
                .iter()
                .map(|(json, go, shape)| {
                    format!("\"{go}\":{}", go_internal_json(&v[*json], *shape))
                })
                .collect();
            format!("{{{}}}", parts.join(","))
        }
        GoShape::List(item) => {
            let items = v.as_array().into_iter().flatten();
            let parts: Vec<String> = items.map(|i| go_internal_json(i, *item)).collect();
            format!("[{}]", parts.join(","))
        }
        GoShape::Text => go_json(&Value::String(v.as_str().unwrap_or("").into())),
        GoShape::Number | GoShape::OptionalNumber => v.as_i64().unwrap_or(0).to_string(),
        GoShape::Flag => v.as_bool().unwrap_or(false).to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[rstest::rstest]
    #[case(json!(null), "<nil>", "<nil>")]
    #[case(json!("x y"), "x y", "string")]
    #[case(json!(3), "3", "int64")]
    #[case(json!(1e21), "1e+21", "float64")]
    #[case(json!(true), "true", "bool")]
    #[case(json!([1, "a", [2]]), "[1 a [2]]", "[]interface {}")]
    #[case(json!({"b": {"c": null}, "a": 1.5}), "map[a:1.5 b:map[c:<nil>]]", "map[string]interface {}")]
    fn unstructured_values_print_like_go(
        #[case] v: Value,
        #[case] printed: &str,
        #[case] type_name: &str,
    ) {
        assert_eq!((go_v(&v).as_str(), go_type(&v)), (printed, type_name));
    }

    #[test]
    fn floats_print_like_go() {
        for (f, want) in [
            (10.0, "10"),
            (1.5, "1.5"),
            (1e6, "1e+06"),
            (123456.0, "123456"),
            (1234567.0, "1.234567e+06"),
            (1e21, "1e+21"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (-2.5, "-2.5"),
        ] {
            assert_eq!(go_float_v(f), want, "{f}");
        }
    }

    #[test]
    fn json_and_quote_like_go() {
        assert_eq!(
            go_json(&json!({"b": 1, "a": "<x>"})),
            r#"{"a":"\u003cx\u003e","b":1}"#
        );
        assert_eq!(go_json(&json!(1.0)), "1");
        assert_eq!(go_json(&json!(1e-7)), "1e-7");
        assert_eq!(go_json(&json!(1e21)), "1e+21");
        assert_eq!(go_quote("a\"b\u{1b}\u{e9}"), "\"a\\\"b\\x1b\u{e9}\"");
        assert_eq!(error_value(&json!(15)), "15");
        assert_eq!(error_value(&json!("x")), "\"x\"");
        assert_eq!(error_value(&Value::Null), "null");
    }
}
