//! Go's `encoding/json` syntax errors: the first error its scanner (`checkValid`, which
//! `json.Unmarshal` runs over the whole input before decoding) reports for malformed JSON,
//! worded as Go words it (`invalid character 'n' looking for beginning of object key string`,
//! `unexpected end of JSON input`). The apiserver puts these texts into its decode errors, so
//! kubefake computes them on the error path only, after its own parser has refused a body.

/// Go's `maxNestingDepth`: deeper input is a syntax error.
const MAX_NESTING_DEPTH: usize = 10_000;

/// What the scanner expects next.
#[derive(Clone, Copy, PartialEq, Eq)]
enum State {
    BeginValue,
    BeginValueOrEmpty,
    BeginStringOrEmpty,
    BeginString,
    EndValue,
    EndTop,
    InString,
    InStringEsc,
    InStringEscU(u8),
    Neg,
    One,
    Zero,
    Dot,
    Dot0,
    E,
    ESign,
    E0,
    /// Inside `true`, `false` or `null`: the rest of the literal to come, and the literal.
    Literal(&'static [u8], &'static str),
}

/// What an open container holds next.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Parse {
    ObjectKey,
    ObjectValue,
    ArrayValue,
}

/// The message of the error Go's `json.Unmarshal` reports for `input`, or None when Go's
/// scanner accepts it.
pub fn syntax_error(input: &[u8]) -> Option<String> {
    let mut scanner = Scanner {
        state: State::BeginValue,
        stack: Vec::new(),
    };
    for &c in input {
        if let Err(context) = scanner.step(c) {
            return Some(format!("invalid character {} {context}", quote_char(c)));
        }
    }
    if scanner.complete() {
        None
    } else {
        Some("unexpected end of JSON input".into())
    }
}

struct Scanner {
    state: State,
    stack: Vec<Parse>,
}

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n')
}

impl Scanner {
    /// Whether the input may end here.
    fn complete(&mut self) -> bool {
        if matches!(
            self.state,
            State::One | State::Zero | State::Dot0 | State::E0
        ) {
            self.state = State::EndValue;
        }
        match self.state {
            State::EndTop => true,
            State::EndValue => self.stack.is_empty(),
            _ => false,
        }
    }

    /// One byte; the error is Go's context text.
    fn step(&mut self, c: u8) -> Result<(), &'static str> {
        match self.state {
            State::BeginValueOrEmpty => {
                if is_space(c) {
                    return Ok(());
                }
                if c == b']' {
                    return self.end_value(c);
                }
                self.begin_value(c)
            }
            State::BeginValue => self.begin_value(c),
            State::BeginStringOrEmpty => {
                if is_space(c) {
                    return Ok(());
                }
                if c == b'}' {
                    if let Some(top) = self.stack.last_mut() {
                        *top = Parse::ObjectValue;
                    }
                    return self.end_value(c);
                }
                self.begin_string(c)
            }
            State::BeginString => self.begin_string(c),
            State::EndValue => self.end_value(c),
            State::EndTop => {
                if is_space(c) {
                    Ok(())
                } else {
                    Err("after top-level value")
                }
            }
            _ => self.in_token(c),
        }
    }

    /// Strings, numbers and literals.
    fn in_token(&mut self, c: u8) -> Result<(), &'static str> {
        let digit = c.is_ascii_digit();
        self.state = match self.state {
            State::InString => match c {
                b'"' => State::EndValue,
                b'\\' => State::InStringEsc,
                0..=0x1f => return Err("in string literal"),
                _ => State::InString,
            },
            State::InStringEsc => match c {
                b'b' | b'f' | b'n' | b'r' | b't' | b'\\' | b'/' | b'"' => State::InString,
                b'u' => State::InStringEscU(0),
                _ => return Err("in string escape code"),
            },
            State::InStringEscU(n) if c.is_ascii_hexdigit() => {
                if n == 3 {
                    State::InString
                } else {
                    State::InStringEscU(n + 1)
                }
            }
            State::InStringEscU(_) => return Err("in \\u hexadecimal character escape"),
            State::Neg => match c {
                b'0' => State::Zero,
                b'1'..=b'9' => State::One,
                _ => return Err("in numeric literal"),
            },
            State::One if digit => State::One,
            State::One | State::Zero => match c {
                b'.' => State::Dot,
                b'e' | b'E' => State::E,
                _ => return self.end_value(c),
            },
            State::Dot if digit => State::Dot0,
            State::Dot => return Err("after decimal point in numeric literal"),
            State::Dot0 if digit => State::Dot0,
            State::Dot0 if matches!(c, b'e' | b'E') => State::E,
            State::E if matches!(c, b'+' | b'-') => State::ESign,
            State::E | State::ESign if digit => State::E0,
            State::E | State::ESign => return Err("in exponent of numeric literal"),
            State::E0 if digit => State::E0,
            State::Dot0 | State::E0 => return self.end_value(c),
            State::Literal(rest, word) => match rest.split_first() {
                Some((&next, rest)) if next == c => literal(word, rest),
                Some((&next, _)) => return Err(literal_context(word, next)),
                None => State::EndValue,
            },
            other => other,
        };
        Ok(())
    }

    fn begin_value(&mut self, c: u8) -> Result<(), &'static str> {
        if is_space(c) {
            return Ok(());
        }
        self.state = match c {
            b'{' => {
                self.push(Parse::ObjectKey)?;
                State::BeginStringOrEmpty
            }
            b'[' => {
                self.push(Parse::ArrayValue)?;
                State::BeginValueOrEmpty
            }
            b'"' => State::InString,
            b'-' => State::Neg,
            b'0' => State::Zero,
            b'1'..=b'9' => State::One,
            b't' => literal("true", b"rue"),
            b'f' => literal("false", b"alse"),
            b'n' => literal("null", b"ull"),
            _ => return Err("looking for beginning of value"),
        };
        Ok(())
    }

    fn begin_string(&mut self, c: u8) -> Result<(), &'static str> {
        if is_space(c) {
            return Ok(());
        }
        if c == b'"' {
            self.state = State::InString;
            return Ok(());
        }
        Err("looking for beginning of object key string")
    }

    fn push(&mut self, p: Parse) -> Result<(), &'static str> {
        self.stack.push(p);
        if self.stack.len() > MAX_NESTING_DEPTH {
            return Err("exceeded max depth");
        }
        Ok(())
    }

    /// After a complete value (or at a byte that ends a number).
    fn end_value(&mut self, c: u8) -> Result<(), &'static str> {
        let Some(&top) = self.stack.last() else {
            self.state = State::EndTop;
            return self.step(c);
        };
        self.state = State::EndValue;
        if is_space(c) {
            return Ok(());
        }
        match (top, c) {
            (Parse::ObjectKey, b':') => {
                self.set_top(Parse::ObjectValue);
                self.state = State::BeginValue;
            }
            (Parse::ObjectKey, _) => return Err("after object key"),
            (Parse::ObjectValue, b',') => {
                self.set_top(Parse::ObjectKey);
                self.state = State::BeginString;
            }
            (Parse::ArrayValue, b',') => self.state = State::BeginValue,
            (Parse::ObjectValue, b'}') | (Parse::ArrayValue, b']') => {
                self.stack.pop();
                if self.stack.is_empty() {
                    self.state = State::EndTop;
                }
            }
            (Parse::ObjectValue, _) => return Err("after object key:value pair"),
            (Parse::ArrayValue, _) => return Err("after array element"),
        }
        Ok(())
    }

    fn set_top(&mut self, p: Parse) {
        if let Some(top) = self.stack.last_mut() {
            *top = p;
        }
    }
}

/// The state inside the literal `word` with `rest` still to come.
fn literal(word: &'static str, rest: &'static [u8]) -> State {
    if rest.is_empty() {
        return State::EndValue;
    }
    State::Literal(rest, word)
}

/// Go's context for a wrong byte inside a literal.
fn literal_context(word: &str, expected: u8) -> &'static str {
    match (word, expected) {
        ("true", b'r') => "in literal true (expecting 'r')",
        ("true", b'u') => "in literal true (expecting 'u')",
        ("true", _) => "in literal true (expecting 'e')",
        ("false", b'a') => "in literal false (expecting 'a')",
        ("false", b'l') => "in literal false (expecting 'l')",
        ("false", b's') => "in literal false (expecting 's')",
        ("false", _) => "in literal false (expecting 'e')",
        (_, b'u') => "in literal null (expecting 'u')",
        _ => "in literal null (expecting 'l')",
    }
}

/// encoding/json's name for the type of a JSON value in its `UnmarshalTypeError`s (`json:
/// cannot unmarshal <kind> into ...`).
pub fn go_json_kind(v: &serde_json::Value) -> &'static str {
    use serde_json::Value;
    match v {
        Value::Object(_) => "object",
        Value::Array(_) => "array",
        Value::String(_) => "string",
        Value::Number(_) => "number",
        Value::Bool(_) => "bool",
        Value::Null => "null",
    }
}

/// Go's `quoteChar`: a byte as a single-quoted Go character literal.
fn quote_char(c: u8) -> String {
    match c {
        b'\'' => "'\\''".into(),
        b'"' => "'\"'".into(),
        _ => format!("'{}'", go_quote_rune(char::from(c))),
    }
}

/// The inside of Go's `strconv.Quote` of a one-rune string, for runes up to U+00FF.
fn go_quote_rune(r: char) -> String {
    match r {
        '\u{7}' => "\\a".into(),
        '\u{8}' => "\\b".into(),
        '\u{c}' => "\\f".into(),
        '\n' => "\\n".into(),
        '\r' => "\\r".into(),
        '\t' => "\\t".into(),
        '\u{b}' => "\\v".into(),
        '\\' => "\\\\".into(),
        '\0'..='\u{1f}' | '\u{7f}' => format!("\\x{:02x}", r as u32),
        '\u{80}'..='\u{a0}' | '\u{ad}' => format!("\\u{:04x}", r as u32),
        _ => r.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    /// Each answer is what Go 1.26's `json.Unmarshal` returns for the input.
    #[rstest]
    #[case(r#"{"a":1}"#, None)]
    #[case(" [1, 2.5e+3, -0, true, false, null, \"\\u00e9\\n\"] ", None)]
    #[case(
        r#"{"apiVersion":"v1", nope}"#,
        Some("invalid character 'n' looking for beginning of object key string")
    )]
    #[case(r#"{"a" 1}"#, Some("invalid character '1' after object key"))]
    #[case(
        r#"{"a":1 "b":2}"#,
        Some("invalid character '\"' after object key:value pair")
    )]
    #[case("[1 2]", Some("invalid character '2' after array element"))]
    #[case("{} x", Some("invalid character 'x' after top-level value"))]
    #[case("{}}", Some("invalid character '}' after top-level value"))]
    #[case("", Some("unexpected end of JSON input"))]
    #[case(r#"{"a":"#, Some("unexpected end of JSON input"))]
    #[case("123", None)]
    #[case("tru", Some("unexpected end of JSON input"))]
    #[case("trux", Some("invalid character 'x' in literal true (expecting 'e')"))]
    #[case("nul", Some("unexpected end of JSON input"))]
    #[case(
        "fxlse",
        Some("invalid character 'x' in literal false (expecting 'a')")
    )]
    #[case("nil", Some("invalid character 'i' in literal null (expecting 'u')"))]
    #[case("01", Some("invalid character '1' after top-level value"))]
    #[case("-x", Some("invalid character 'x' in numeric literal"))]
    #[case(
        "1.x",
        Some("invalid character 'x' after decimal point in numeric literal")
    )]
    #[case("1ex", Some("invalid character 'x' in exponent of numeric literal"))]
    #[case("\"a\tb\"", Some("invalid character '\\t' in string literal"))]
    #[case(r#""\x""#, Some("invalid character 'x' in string escape code"))]
    #[case(
        r#""\u12g4""#,
        Some("invalid character 'g' in \\u hexadecimal character escape")
    )]
    #[case(
        "{'a':1}",
        Some("invalid character '\\'' looking for beginning of object key string")
    )]
    #[case(
        "garbage",
        Some("invalid character 'g' looking for beginning of value")
    )]
    #[case(
        "\u{0}",
        Some("invalid character '\\x00' looking for beginning of value")
    )]
    #[case("[,]", Some("invalid character ',' looking for beginning of value"))]
    #[case("[1,]", Some("invalid character ']' looking for beginning of value"))]
    #[case(
        r#"{"a":1,}"#,
        Some("invalid character '}' looking for beginning of object key string")
    )]
    fn go_texts(#[case] input: &str, #[case] want: Option<&str>) {
        assert_eq!(syntax_error(input.as_bytes()).as_deref(), want, "{input:?}");
    }

    #[test]
    fn bytes_above_ascii_and_depth() {
        assert_eq!(
            syntax_error(&[0xe9]).as_deref(),
            Some("invalid character 'é' looking for beginning of value")
        );
        assert_eq!(
            syntax_error(&[0x85]).as_deref(),
            Some("invalid character '\\u0085' looking for beginning of value")
        );
        let deep = "[".repeat(MAX_NESTING_DEPTH + 1);
        assert_eq!(
            syntax_error(deep.as_bytes()).as_deref(),
            Some("invalid character '[' exceeded max depth")
        );
    }
}
