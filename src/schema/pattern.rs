//! `pattern` with Go RE2 semantics on top of the Rust `regex` crate.
//!
//! Both engines share RE2 syntax, but Rust's `\d`, `\w`, `\s` and `\b` are Unicode-aware where
//! Go's are ASCII-only, Rust treats `[` inside a class as a nested class and `&&`/`~~`/`--` as set
//! operations where Go reads them literally, and Rust lacks `\Q...\E`. [`translate`] rewrites a
//! Go pattern into an equivalent Rust one; [`GoRegex`] compiles it once per schema.

use regex::Regex;

/// Why a `pattern` does not compile, worded as Go's `regexp/syntax.Error` ("error parsing
/// regexp: ", the error code, then the offending expression in backquotes), because the apiserver puts that text in the CRD's `Invalid value` and in
/// the validation message of every object the pattern then fails to check.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatternError {
    /// `ErrInvalidRepeatOp`: a repetition of a repetition (`a**`, `a+*`), which RE2 rejects and
    /// Rust would accept.
    #[error("error parsing regexp: invalid nested repetition operator: `{op}`: `{pattern}`")]
    NestedRepetition {
        /// The two operators (`**`).
        op: String,
        /// The pattern as written.
        pattern: String,
    },
    /// `ErrTrailingBackslash`: the pattern ends inside an escape.
    #[error("error parsing regexp: trailing backslash at end of expression: ``: `{pattern}`")]
    TrailingBackslash {
        /// The pattern as written.
        pattern: String,
    },
    /// Any other syntax error, found by the `regex` crate and given Go's error code where the two
    /// agree on one (`missing closing )`).
    #[error("error parsing regexp: {code}: `{pattern}`")]
    Syntax {
        /// Go's `ErrorCode` text, or the `regex` crate's own description.
        code: String,
        /// The pattern as written.
        pattern: String,
    },
}

/// CEL's regex functions report their errors as text; this keeps `?` working there.
impl From<PatternError> for String {
    fn from(e: PatternError) -> String {
        e.to_string()
    }
}

/// A compiled `pattern`: the Go source (for messages) and the regex, or why it does not compile.
#[derive(Debug, Clone)]
pub struct GoRegex {
    /// The pattern as written in the schema.
    pub source: String,
    /// The compiled regex, or Go's parse error (kept: objects are checked against an invalid
    /// pattern with a message that quotes it).
    pub compiled: Result<Regex, PatternError>,
}

impl GoRegex {
    /// Compiles a Go pattern.
    pub fn new(source: &str) -> GoRegex {
        let compiled = translate(source).and_then(|t| {
            regex::RegexBuilder::new(&t)
                .size_limit(64 << 20)
                .build()
                .map_err(|e| go_error(source, &e))
        });
        GoRegex {
            source: source.to_string(),
            compiled,
        }
    }

    /// Unanchored search, like Go's `MatchString`. An invalid pattern matches nothing.
    pub fn is_match(&self, s: &str) -> bool {
        match &self.compiled {
            Ok(r) => r.is_match(s),
            Err(_) => false,
        }
    }
}

/// An approximation of Go's `regexp/syntax` error for a pattern Rust rejects.
fn go_error(source: &str, e: &regex::Error) -> PatternError {
    let text = e.to_string();
    let detail = text
        .lines()
        .rev()
        .find(|l| l.starts_with("error:"))
        .map(|l| l.trim_start_matches("error:").trim().to_string())
        .unwrap_or_else(|| text.lines().last().unwrap_or("").trim().to_string());
    PatternError::Syntax {
        code: go_error_code(&detail).to_string(),
        pattern: source.to_string(),
    }
}

/// Go's `regexp/syntax` error code for the `regex` crate's description of the common cases.
fn go_error_code(detail: &str) -> &str {
    match detail {
        "unclosed group" => "missing closing )",
        "unopened group" => "unexpected )",
        "unclosed character class" => "missing closing ]",
        "repetition operator missing expression" => "missing argument to repetition operator",
        "invalid repetition count range, the start must be <= the end" => "invalid repeat count",
        d if d.contains("escape") => "invalid escape sequence",
        d => d,
    }
}

const DIGIT: &str = "0-9";
const WORD: &str = "0-9A-Za-z_";
const SPACE: &str = "\\t\\n\\x0C\\r ";

/// Rewrites a Go RE2 pattern so that the Rust `regex` crate matches exactly the same strings.
pub fn translate(p: &str) -> Result<String, PatternError> {
    let mut t = Translator {
        source: p,
        chars: p.chars().collect(),
        out: String::with_capacity(p.len() + 8),
        i: 0,
        in_class: false,
        class_start: 0,
        after_rep: false,
        lazy_taken: false,
    };
    while t.i < t.chars.len() {
        t.step()?;
    }
    Ok(t.out)
}

/// The state of [`translate`]: a cursor over the Go pattern and the Rust pattern written so far.
struct Translator<'p> {
    source: &'p str,
    chars: Vec<char>,
    out: String,
    i: usize,
    /// Inside `[...]`.
    in_class: bool,
    /// Where a `]` would close the class (one right after `[` or `[^` is a literal).
    class_start: usize,
    /// The last token was a repetition operator...
    after_rep: bool,
    /// ...already followed by its one lazy `?`.
    lazy_taken: bool,
}

impl Translator<'_> {
    /// Translates the token at the cursor.
    fn step(&mut self) -> Result<(), PatternError> {
        let c = self.chars[self.i];
        if !self.in_class && c != '\\' && self.repetition(c)? {
            return Ok(());
        }
        self.after_rep = false;
        if c == '\\' {
            return self.escape();
        }
        if self.in_class {
            self.class_char(c);
        } else if c == '[' {
            self.open_class();
        } else {
            self.out.push(c);
            self.i += 1;
        }
        Ok(())
    }

    /// Copies a repetition operator at the cursor (false if there is none). Go rejects a
    /// repetition of a repetition (`a**`, `a+*`), except one lazy `?`.
    fn repetition(&mut self, c: char) -> Result<bool, PatternError> {
        let rep_len = repetition_len(&self.chars[self.i..]);
        if rep_len == 0 {
            return Ok(false);
        }
        if self.after_rep {
            if c == '?' && !self.lazy_taken {
                self.lazy_taken = true;
                self.out.push('?');
                self.i += 1;
                return Ok(true);
            }
            return Err(PatternError::NestedRepetition {
                op: self.chars[self.i - 1..self.i + rep_len].iter().collect(),
                pattern: self.source.to_string(),
            });
        }
        self.after_rep = true;
        self.lazy_taken = false;
        self.out.extend(&self.chars[self.i..self.i + rep_len]);
        self.i += rep_len;
        Ok(true)
    }

    /// An escape: `\Q...\E`, the ASCII-only Perl classes and word boundaries, or itself.
    fn escape(&mut self) -> Result<(), PatternError> {
        let Some(&n) = self.chars.get(self.i + 1) else {
            return Err(PatternError::TrailingBackslash {
                pattern: self.source.to_string(),
            });
        };
        self.i += 2;
        match n {
            'Q' => self.quoted(),
            'b' if !self.in_class => self.out.push_str("(?-u:\\b)"),
            'B' if !self.in_class => self.out.push_str("(?-u:\\B)"),
            _ => match perl_class(n) {
                Some((set, negated)) => self.push_class(set, negated),
                None => {
                    self.out.push('\\');
                    self.out.push(n);
                }
            },
        }
        Ok(())
    }

    /// `\Q...\E` quotes literally (to the end of the pattern without `\E`).
    fn quoted(&mut self) {
        while self.i < self.chars.len() {
            let ch = self.chars[self.i];
            if ch == '\\' && self.chars.get(self.i + 1) == Some(&'E') {
                self.i += 2;
                return;
            }
            if self.in_class {
                self.out.push_str(&class_escape(ch));
            } else {
                self.out.push_str(&regex::escape(&ch.to_string()));
            }
            self.i += 1;
        }
    }

    /// A Perl class spelled out as ASCII ranges: bare inside a class, bracketed outside.
    fn push_class(&mut self, set: &str, negated: bool) {
        if self.in_class && !negated {
            self.out.push_str(set);
            return;
        }
        self.out.push_str(if negated { "[^" } else { "[" });
        self.out.push_str(set);
        self.out.push(']');
    }

    /// A character inside `[...]`, where Go reads `[`, `&&`, `~~` and `--` literally.
    fn class_char(&mut self, c: char) {
        match c {
            ']' if self.i > self.class_start => {
                self.in_class = false;
                self.out.push(']');
            }
            '[' => {
                // POSIX class [:alpha:] is the only bracket Go allows inside a class.
                if self.chars.get(self.i + 1) == Some(&':') {
                    if let Some(end) = find_posix_end(&self.chars, self.i + 2) {
                        self.out.extend(&self.chars[self.i..=end]);
                        self.i = end + 1;
                        return;
                    }
                }
                self.out.push_str("\\[");
            }
            '&' | '~' => {
                self.out.push('\\');
                self.out.push(c);
            }
            '-' if self.chars.get(self.i + 1) == Some(&'-') => self.out.push_str("\\-"),
            _ => self.out.push(c),
        }
        self.i += 1;
    }

    /// `[` or `[^`; a `]` right after it is a literal.
    fn open_class(&mut self) {
        self.in_class = true;
        self.out.push('[');
        self.i += 1;
        if self.chars.get(self.i) == Some(&'^') {
            self.out.push('^');
            self.i += 1;
        }
        self.class_start = self.i + 1;
        if self.chars.get(self.i) == Some(&']') {
            self.out.push_str("\\]");
            self.i += 1;
        }
    }
}

/// The ASCII set of a Perl class escape (`\d`, `\W`, ...) and whether it is negated.
fn perl_class(n: char) -> Option<(&'static str, bool)> {
    Some(match n {
        'd' => (DIGIT, false),
        'D' => (DIGIT, true),
        'w' => (WORD, false),
        'W' => (WORD, true),
        's' => (SPACE, false),
        'S' => (SPACE, true),
        _ => return None,
    })
}

/// Length of a repetition operator at the start of `c` (`*`, `+`, `?`, `{n}`, `{n,}`, `{n,m}`),
/// 0 if there is none (Go reads a `{` that does not start a valid repetition literally).
fn repetition_len(c: &[char]) -> usize {
    match c.first() {
        Some('*' | '+' | '?') => 1,
        Some('{') => {
            let mut j = 1;
            let digits = |j: &mut usize| {
                let start = *j;
                while c.get(*j).is_some_and(char::is_ascii_digit) {
                    *j += 1;
                }
                *j > start
            };
            if !digits(&mut j) {
                return 0;
            }
            if c.get(j) == Some(&',') {
                j += 1;
                digits(&mut j);
            }
            if c.get(j) == Some(&'}') {
                j + 1
            } else {
                0
            }
        }
        _ => 0,
    }
}

fn find_posix_end(chars: &[char], from: usize) -> Option<usize> {
    let mut j = from;
    while j + 1 < chars.len() {
        if chars[j] == ':' && chars[j + 1] == ']' {
            return Some(j + 1);
        }
        if !chars[j].is_ascii_alphabetic() && chars[j] != '^' {
            return None;
        }
        j += 1;
    }
    None
}

fn class_escape(c: char) -> String {
    if c.is_ascii_punctuation() {
        format!("\\{c}")
    } else {
        c.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ascii_classes_like_go() {
        let r = GoRegex::new(r"^\d+$");
        assert!(r.is_match("123"));
        assert!(!r.is_match("١٢٣"), "Arabic-Indic digits are not \\d in Go");
        let w = GoRegex::new(r"^\w+$");
        assert!(!w.is_match("é"));
        let s = GoRegex::new(r"^a\sb$");
        assert!(!s.is_match("a\u{a0}b"));
        assert!(GoRegex::new(r"^[\d-]+$").is_match("1-2"));
        assert!(GoRegex::new(r"^[\D]+$").is_match("ab"));
        assert!(GoRegex::new(r"\bfoo\b").is_match("a foo b"));
        // Go's \b is ASCII: 'é' is not a word character, so there is a boundary before 'f'.
        assert!(GoRegex::new(r"\bfoo\b").is_match("éfoo"));
        assert!(!GoRegex::new(r"\bfoo\b").is_match("xfoo"));
    }

    #[test]
    fn go_literal_class_syntax() {
        assert!(GoRegex::new(r"^[a&&b]+$").is_match("&"));
        assert!(GoRegex::new(r"^[[]+$").is_match("[["));
        assert!(GoRegex::new(r"^[]a]+$").is_match("]a"));
        assert!(GoRegex::new(r"^[[:alpha:]]+$").is_match("abc"));
        assert!(GoRegex::new(r"^\Q.*\E$").is_match(".*"));
        assert!(GoRegex::new(r"^(\d+|\*)(/\d+)?(\s+(\d+|\*)(/\d+)?){4}$").is_match("* * * * */5"));
    }

    #[test]
    fn invalid_patterns_do_not_panic() {
        for p in ["(", "[", "\\", "a{2,1}", "(?<name", "x**"] {
            let r = GoRegex::new(p);
            assert!(!r.is_match("x"));
        }
        assert!(GoRegex::new("(").compiled.is_err());
    }

    #[test]
    fn translations() {
        let cases = [
            (r"^\d+$", "^[0-9]+$"),
            (r"[\d-]", "[0-9-]"),
            (r"\D", "[^0-9]"),
            (r"[\S]", "[[^\\t\\n\\x0C\\r ]]"),
            (r"\bx\B", "(?-u:\\b)x(?-u:\\B)"),
            (r"[\b]", "[\\b]"),
            (r"a*?", "a*?"),
            (r"a{2,3}", "a{2,3}"),
            (r"a{x}", "a{x}"),
            (r"[]a]", "[\\]a]"),
            (r"[^]a]", "[^\\]a]"),
            (r"[a&&b~~c--d]", "[a\\&\\&b\\~\\~c\\--d]"),
            (r"[[:alpha:][]", "[[:alpha:]\\[]"),
            (r"\Q.*\E+", "\\.\\*+"),
            (r"[\Q]\E]", "[\\]]"),
            (r"\Qa.", "a\\."),
        ];
        for (go, rust) in cases {
            assert_eq!(translate(go).as_deref(), Ok(rust), "{go}");
        }
    }

    #[test]
    fn errors_are_worded_as_go() {
        let cases = [
            (
                "a**",
                "error parsing regexp: invalid nested repetition operator: `**`: `a**`",
            ),
            (
                "a+?*",
                "error parsing regexp: invalid nested repetition operator: `?*`: `a+?*`",
            ),
            (
                "a\\",
                "error parsing regexp: trailing backslash at end of expression: ``: `a\\`",
            ),
            ("(", "error parsing regexp: missing closing ): `(`"),
            (")", "error parsing regexp: unexpected ): `)`"),
            ("[a", "error parsing regexp: missing closing ]: `[a`"),
            (
                "a{2,1}",
                "error parsing regexp: invalid repeat count: `a{2,1}`",
            ),
        ];
        for (p, want) in cases {
            let got = GoRegex::new(p)
                .compiled
                .map(|_| ())
                .map_err(|e| e.to_string());
            assert_eq!(got, Err(want.to_string()), "{p}");
        }
        assert_eq!(
            String::from(PatternError::TrailingBackslash {
                pattern: "\\".into()
            }),
            "error parsing regexp: trailing backslash at end of expression: ``: `\\`"
        );
    }
}
