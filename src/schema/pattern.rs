//! `pattern` with Go RE2 semantics on top of the Rust `regex` crate.
//!
//! Both engines share RE2 syntax, but Rust's `\d`, `\w`, `\s` and `\b` are Unicode-aware where
//! Go's are ASCII-only, Rust treats `[` inside a class as a nested class and `&&`/`~~`/`--` as set
//! operations where Go reads them literally, and Rust lacks `\Q...\E`. [`translate`] rewrites a
//! Go pattern into an equivalent Rust one; [`GoRegex`] compiles it once per schema.

use regex::Regex;

/// A compiled `pattern`: the Go source (for messages) and the regex, or why it does not compile.
#[derive(Debug, Clone)]
pub struct GoRegex {
    /// The pattern as written in the schema.
    pub source: String,
    /// The compiled regex, or a Go-style parse error (`error parsing regexp: ...`).
    pub compiled: Result<Regex, String>,
}

impl GoRegex {
    /// Compiles a Go pattern.
    pub fn new(source: &str) -> GoRegex {
        let compiled = match translate(source) {
            Ok(t) => regex::RegexBuilder::new(&t)
                .size_limit(64 << 20)
                .build()
                .map_err(|e| go_error(source, &e)),
            Err(e) => Err(e),
        };
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

/// An approximation of Go's `regexp/syntax` error text for a pattern Rust rejects.
fn go_error(source: &str, e: &regex::Error) -> String {
    let text = e.to_string();
    let detail = text
        .lines()
        .rev()
        .find(|l| l.starts_with("error:"))
        .map(|l| l.trim_start_matches("error:").trim().to_string())
        .unwrap_or_else(|| text.lines().last().unwrap_or("").trim().to_string());
    // Go's regexp/syntax error codes for the common cases.
    let code = match detail.as_str() {
        "unclosed group" => "missing closing )",
        "unopened group" => "unexpected )",
        "unclosed character class" => "missing closing ]",
        "repetition operator missing expression" => "missing argument to repetition operator",
        "invalid repetition count range, the start must be <= the end" => "invalid repeat count",
        d if d.contains("escape") => "invalid escape sequence",
        d => d,
    };
    format!("error parsing regexp: {code}: `{source}`")
}

const DIGIT: &str = "0-9";
const WORD: &str = "0-9A-Za-z_";
const SPACE: &str = "\\t\\n\\x0C\\r ";

/// Rewrites a Go RE2 pattern so that the Rust `regex` crate matches exactly the same strings.
pub fn translate(p: &str) -> Result<String, String> {
    let chars: Vec<char> = p.chars().collect();
    let mut out = String::with_capacity(p.len() + 8);
    let mut i = 0;
    let mut in_class = false;
    let mut class_start = 0usize;
    // Go rejects a repetition of a repetition (`a**`, `a+*`), except one lazy `?`.
    let mut after_rep = false;
    let mut lazy_taken = false;
    while i < chars.len() {
        let c = chars[i];
        if !in_class && c != '\\' {
            let rep_len = repetition_len(&chars[i..]);
            if rep_len > 0 {
                if after_rep {
                    if c == '?' && !lazy_taken {
                        lazy_taken = true;
                        out.push('?');
                        i += 1;
                        continue;
                    }
                    let op: String = chars[i - 1..i + rep_len].iter().collect();
                    return Err(format!(
                        "error parsing regexp: invalid nested repetition operator: `{op}`: `{p}`"
                    ));
                }
                after_rep = true;
                lazy_taken = false;
                for ch in &chars[i..i + rep_len] {
                    out.push(*ch);
                }
                i += rep_len;
                continue;
            }
            after_rep = false;
        } else {
            after_rep = false;
        }
        if c == '\\' {
            let Some(&n) = chars.get(i + 1) else {
                return Err(format!(
                    "error parsing regexp: trailing backslash at end of expression: ``: `{p}`"
                ));
            };
            i += 2;
            if n == 'Q' {
                // \Q...\E quotes literally.
                let mut lit = String::new();
                while i < chars.len() {
                    if chars[i] == '\\' && chars.get(i + 1) == Some(&'E') {
                        i += 2;
                        break;
                    }
                    lit.push(chars[i]);
                    i += 1;
                }
                for ch in lit.chars() {
                    if in_class {
                        out.push_str(&class_escape(ch));
                    } else {
                        out.push_str(&regex::escape(&ch.to_string()));
                    }
                }
                continue;
            }
            let (set, neg) = match n {
                'd' => (Some(DIGIT), false),
                'D' => (Some(DIGIT), true),
                'w' => (Some(WORD), false),
                'W' => (Some(WORD), true),
                's' => (Some(SPACE), false),
                'S' => (Some(SPACE), true),
                _ => (None, false),
            };
            if let Some(set) = set {
                match (in_class, neg) {
                    (true, false) => out.push_str(set),
                    (_, true) => {
                        out.push_str("[^");
                        out.push_str(set);
                        out.push(']');
                    }
                    (false, false) => {
                        out.push('[');
                        out.push_str(set);
                        out.push(']');
                    }
                }
                continue;
            }
            if !in_class && (n == 'b' || n == 'B') {
                out.push_str(if n == 'b' { "(?-u:\\b)" } else { "(?-u:\\B)" });
                continue;
            }
            out.push('\\');
            out.push(n);
            continue;
        }
        if in_class {
            match c {
                ']' if i > class_start => {
                    in_class = false;
                    out.push(']');
                }
                '[' => {
                    // POSIX class [:alpha:] is the only bracket Go allows inside a class.
                    if chars.get(i + 1) == Some(&':') {
                        if let Some(end) = find_posix_end(&chars, i + 2) {
                            for ch in &chars[i..=end] {
                                out.push(*ch);
                            }
                            i = end + 1;
                            continue;
                        }
                    }
                    out.push_str("\\[");
                }
                '&' | '~' => {
                    out.push('\\');
                    out.push(c);
                }
                '-' if chars.get(i + 1) == Some(&'-') => out.push_str("\\-"),
                _ => out.push(c),
            }
            i += 1;
            continue;
        }
        if c == '[' {
            in_class = true;
            out.push('[');
            i += 1;
            if chars.get(i) == Some(&'^') {
                out.push('^');
                i += 1;
            }
            // A ']' right after the opening bracket is a literal.
            class_start = i + 1;
            if chars.get(i) == Some(&']') {
                out.push_str("\\]");
                i += 1;
            }
            continue;
        }
        out.push(c);
        i += 1;
    }
    Ok(out)
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
}
