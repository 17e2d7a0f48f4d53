//! The texts of sigs.k8s.io/yaml's `YAMLToJSON` errors (go.yaml.in/yaml/v2, a port of libyaml),
//! which the apiserver puts into its answer to a malformed YAML body, computed from the error
//! serde-saphyr (another libyaml descendant) reports for the same body. Only on the error path.
//!
//! go-yaml words an error `yaml: line N: <problem>`, without the libyaml context (`while
//! parsing a block mapping`) serde-saphyr prefixes, and numbers lines in its own way: a scanner
//! error names the 1-based line of the problem, a parser error the 0-based line of the token it
//! did not expect, and either omits `line N: ` when that number is 0. The common problems are
//! mapped to go-yaml's words and line (bad indentation, tabs, unclosed quotes and brackets,
//! unknown escapes and anchors, tagged scalars, merge keys); anything else keeps serde-saphyr's
//! problem text, numbered as a scanner error. What go-yaml refuses before parsing (control
//! characters, a YAML version other than 1.1, an unknown directive) is refused here first, for
//! serde-saphyr accepts some of it. The corpus of `scripts/yaml-corpus` (198 malformed bodies
//! and go-yaml's words for each) pins it; the 29 cases where the texts still differ are listed
//! with their reasons in the test.

/// How go-yaml numbers the line of an error.
#[derive(Clone, Copy)]
enum Numbering {
    /// The 1-based line of the problem; none on the first line.
    Scanner,
    /// The 0-based line of the unexpected token; none when 0.
    Parser,
}

/// go-yaml's text for a body serde-saphyr refused with `err`: `yaml: line 2: mapping values
/// are not allowed in this context`.
pub fn go_yaml_error(text: &str, err: &serde_saphyr::Error) -> String {
    if let Some(refused) = refusal(text) {
        return refused;
    }
    let mut inner = err;
    while let serde_saphyr::Error::WithSnippet { error, .. } = inner {
        inner = error;
    }
    let (line, column) = err
        .location()
        .map_or((0, 0), |l| (l.line() as usize, l.column() as usize));
    let msg = match inner {
        serde_saphyr::Error::ExternalMessage { msg, .. } => msg.clone(),
        serde_saphyr::Error::UnknownAnchor { .. } => {
            let name = anchor_at(text, line, column);
            // go-yaml's scanner wants an alias name of letters, digits, `-` and `_`: `*/5`
            // (an unquoted cron schedule) or `*.example.com` never reach the alias lookup.
            let alias_char = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
            if !name.starts_with(alias_char) {
                return numbered(
                    "did not find expected alphabetic or numeric character",
                    Numbering::Scanner,
                    line,
                );
            }
            return format!("yaml: unknown anchor '{name}' referenced");
        }
        other => other
            .to_string()
            .lines()
            .next()
            .unwrap_or_default()
            .to_string(),
    };
    // libyaml's context ("while parsing a block mapping, ") is not part of go-yaml's text,
    // nor serde-saphyr's position suffix.
    let problem = match msg.split_once(", ") {
        Some((context, problem)) if context.starts_with("while ") => problem,
        _ => msg.as_str(),
    };
    let problem = problem.split(" at line ").next().unwrap_or(problem);
    if let Some(decoded) = tagged_scalar(text, problem, line, column) {
        return decoded;
    }
    if let Some(literal) = problem.strip_prefix("non-finite float `") {
        // YAMLToJSON decodes it, then encoding/json refuses to write it.
        let value = match literal.trim_end_matches("` rejected by the configured policy") {
            l if l.starts_with('-') => "-Inf",
            l if l.to_ascii_lowercase().contains("nan") => "NaN",
            _ => "+Inf",
        };
        return format!("json: unsupported value: {value}");
    }
    if problem.starts_with("recursive references require") {
        let name = anchor_at(text, line, column);
        return format!("yaml: anchor '{name}' value contains itself");
    }
    let (problem, numbering, line) = go_problem(text, problem, line, column);
    numbered(problem, numbering, line)
}

/// go-yaml's words, numbering and line for serde-saphyr's `problem` at `line` (1-based).
fn go_problem<'a>(
    text: &str,
    problem: &'a str,
    line: usize,
    column: usize,
) -> (&'a str, Numbering, usize) {
    let eof = text.matches('\n').count() + 1;
    // An unclosed flow collection whose last token is its opening or a comma: go-yaml's
    // parser wants a node there.
    let wants_node = text.trim_end().ends_with(['[', '{', ',']);
    match problem {
        "tabs disallowed within this context (block indentation)" => (
            "found character that cannot start any token",
            Numbering::Scanner,
            line,
        ),
        p if p.starts_with("unexpected character: ") => (
            "found character that cannot start any token",
            Numbering::Scanner,
            line,
        ),
        "found a tab" => (
            "found a tab character that violates indentation",
            Numbering::Scanner,
            line_of_tab_after(text, line),
        ),
        "a block scalar content cannot start with a tab" => (
            "found a tab character where an indentation space is expected",
            Numbering::Scanner,
            line + 1,
        ),
        "unclosed quote" => ("found unexpected end of stream", Numbering::Scanner, eof),
        "unclosed bracket '['" | "unclosed bracket '{'" if wants_node => {
            ("did not find expected node content", Numbering::Parser, eof)
        }
        "unclosed bracket '['" => ("did not find expected ',' or ']'", Numbering::Parser, eof),
        "unclosed bracket '{'" => ("did not find expected ',' or '}'", Numbering::Parser, eof),
        p if p.starts_with("mismatched bracket '['") => {
            ("did not find expected ',' or ']'", Numbering::Parser, line)
        }
        p if p.starts_with("mismatched bracket '{'") => {
            ("did not find expected ',' or '}'", Numbering::Parser, line)
        }
        "misplaced bracket" => {
            let before = text
                .lines()
                .take(line.saturating_sub(1))
                .collect::<String>();
            let first_token = before.trim().is_empty() && column <= 1;
            match first_token {
                true => (
                    "did not find expected node content",
                    Numbering::Parser,
                    line,
                ),
                false => ("did not find expected key", Numbering::Parser, line),
            }
        }
        p if p.starts_with("invalid trailing content after") => {
            ("did not find expected key", Numbering::Parser, line)
        }
        "wrongly indented line in block scalar" => {
            ("did not find expected key", Numbering::Parser, line)
        }
        p if p.starts_with("cannot deserialize null into string")
            && starts_value(text, line, column) =>
        {
            ("did not find expected key", Numbering::Parser, line)
        }
        "simple key expected ':'" => ("could not find expected ':'", Numbering::Scanner, line + 1),
        "did not find expected hexadecimal number" => (
            "did not find expected hexdecimal number",
            Numbering::Scanner,
            line,
        ),
        "did not find expected comment or line break" => (problem, Numbering::Scanner, line),
        "found unexpected document indicator" => (problem, Numbering::Scanner, line + 1),
        p if p.starts_with("found unpaired") => (
            "found invalid Unicode character escape code",
            Numbering::Scanner,
            line,
        ),
        "the handle wasn't declared" => ("found undefined tag handle", Numbering::Parser, line),
        p if p.starts_with("YAML merge value must be") => (
            "map merge requires map or sequence of maps as the value",
            Numbering::Parser,
            0,
        ),
        p if p.starts_with("budget breached: Nodes") || p.starts_with("budget breached: Alias") => {
            ("document contains excessive aliasing", Numbering::Parser, 0)
        }
        p if p.starts_with("did not find expected") => (p, Numbering::Parser, line),
        p => (p, Numbering::Scanner, line),
    }
}

/// go-yaml's resolver's text for a scalar its explicit tag does not fit (`!!int three`): it
/// names the tag and the scalar, and no line.
fn tagged_scalar(text: &str, problem: &str, line: usize, column: usize) -> Option<String> {
    let tag = match problem {
        "invalid !!binary base64" => {
            return Some("yaml: !!binary value contains invalid base64 data".into())
        }
        "invalid u64" | "invalid i64" | "invalid integer" => "int",
        "invalid floating point" => "float",
        "invalid boolean" => "bool",
        "cannot deserialize tagged scalar into string" => "timestamp",
        _ => return None,
    };
    let at = text.lines().nth(line.saturating_sub(1)).unwrap_or_default();
    let scalar: String = at
        .chars()
        .skip(column.saturating_sub(1))
        .take_while(|c| !c.is_whitespace() && !matches!(c, ',' | ']' | '}'))
        .collect();
    Some(format!("yaml: cannot decode !!str `{scalar}` as a !!{tag}"))
}

/// go-yaml's reader supports YAML 1.1 only and the two directives it defines: a document
/// naming another version, or another directive, is refused before its content.
fn refused_directive(text: &str) -> Option<String> {
    // The prologue: blank lines, comments and directives before the document.
    let directives = text
        .lines()
        .take_while(|l| l.trim().is_empty() || l.starts_with('#') || l.starts_with('%'))
        .filter(|l| l.starts_with('%'));
    for directive in directives {
        let mut words = directive[1..].split_whitespace();
        let refusal = match (words.next(), words.next()) {
            (Some("YAML"), Some(v)) if v != "1.1" => "found incompatible YAML document",
            (Some("YAML" | "TAG"), _) => continue,
            _ => "found unknown directive name",
        };
        return Some(format!("yaml: {refusal}"));
    }
    None
}

/// `yaml: line N: problem`, or `yaml: problem` where go-yaml numbers none.
fn numbered(problem: &str, numbering: Numbering, line: usize) -> String {
    let shown = match numbering {
        Numbering::Scanner if line > 1 => Some(line),
        Numbering::Parser if line > 1 => Some(line - 1),
        _ => None,
    };
    match shown {
        Some(n) => format!("yaml: line {n}: {problem}"),
        None => format!("yaml: {problem}"),
    }
}

/// Whether the 1-based `line` has a `:` at the 1-based `column`: a mapping value with no key
/// before it.
fn starts_value(text: &str, line: usize, column: usize) -> bool {
    let at = text.lines().nth(line.saturating_sub(1)).unwrap_or_default();
    at.chars().nth(column.saturating_sub(1)) == Some(':')
}

/// What go-yaml refuses in a body before parsing it, serde-saphyr accepting some of it: a
/// character YAML does not allow, a directive other than YAML 1.1's.
pub fn refusal(text: &str) -> Option<String> {
    refused_characters(text).or_else(|| refused_directive(text))
}

/// go-yaml's reader refuses, before any parsing, a body with a character YAML does not allow
/// (C0 and C1 controls but tab, line breaks and NEL; DEL; U+FFFE and U+FFFF).
fn refused_characters(text: &str) -> Option<String> {
    let allowed = |c: char| {
        matches!(c, '\t' | '\n' | '\r' | '\u{85}')
            || (' '..='~').contains(&c)
            || ('\u{a0}'..='\u{fffd}').contains(&c)
            || c >= '\u{10000}'
    };
    text.chars()
        .any(|c| !allowed(c))
        .then(|| "yaml: control characters are not allowed".to_string())
}

/// go-yaml's reader's text for a body that is not UTF-8.
pub fn utf8_error(body: &[u8], err: std::str::Utf8Error) -> String {
    let at = &body[err.valid_up_to()..];
    let problem = match (at.first(), err.error_len()) {
        (_, None) => "incomplete UTF-8 octet sequence",
        (Some(0x80..=0xBF | 0xF8..=0xFF), _) => "invalid leading UTF-8 octet",
        (Some(0xC0 | 0xC1), _) => "invalid length of a UTF-8 sequence",
        (Some(0xE0), _) if at.get(1).is_some_and(|b| *b < 0xA0 && *b >= 0x80) => {
            "invalid length of a UTF-8 sequence"
        }
        (Some(0xED), _) if at.get(1).is_some_and(|b| *b >= 0xA0 && *b <= 0xBF) => {
            "invalid Unicode character"
        }
        _ => "invalid trailing UTF-8 octet",
    };
    format!("yaml: {problem}")
}

/// The name of the alias at a 1-based line and column (`*name`).
fn anchor_at(text: &str, line: usize, column: usize) -> String {
    let at = text.lines().nth(line.saturating_sub(1)).unwrap_or_default();
    at.chars()
        .skip(column.saturating_sub(1))
        .skip_while(|c| *c == '*')
        .take_while(|c| !c.is_whitespace() && !matches!(c, ',' | '[' | ']' | '{' | '}'))
        .collect()
}

/// The 1-based line of the first tab on or after `line` (serde-saphyr points at the scalar the
/// tab interrupts, go-yaml at the tab).
fn line_of_tab_after(text: &str, line: usize) -> usize {
    text.lines()
        .enumerate()
        .skip(line.saturating_sub(1))
        .find(|(_, l)| l.contains('\t'))
        .map_or(line, |(i, _)| i + 1)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    /// Each expected text is what sigs.k8s.io/yaml v1.6.0's `YAMLToJSON` returns for the body.
    #[rstest]
    #[case::indented_key(
        "a: 1\n b: 2\n",
        "yaml: line 2: mapping values are not allowed in this context"
    )]
    #[case::indented_key_crlf(
        "a: 1\r\n b: 2\r\n",
        "yaml: line 2: mapping values are not allowed in this context"
    )]
    #[case::value_on_the_first_line(
        "a: b: c\n",
        "yaml: mapping values are not allowed in this context"
    )]
    #[case::deeper_key(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n   labels: x\n",
        "yaml: line 5: mapping values are not allowed in this context"
    )]
    #[case::scalar_then_key(
        "a: b\n  c: d\n",
        "yaml: line 2: mapping values are not allowed in this context"
    )]
    #[case::dedented_key("a:\n  b: 1\n c: 2\n", "yaml: line 2: did not find expected key")]
    #[case::dedented_metadata(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n labels: x\n",
        "yaml: line 4: did not find expected key"
    )]
    #[case::key_after_sequence("- a\nb: 1\n", "yaml: line 1: did not find expected '-' indicator")]
    #[case::key_in_sequence(
        "a:\n  - b\n  c: 1\n",
        "yaml: line 2: did not find expected '-' indicator"
    )]
    #[case::tab_indentation(
        "a:\n\tb: 1\n",
        "yaml: line 2: found character that cannot start any token"
    )]
    #[case::tab_after_scalar(
        "a: 1\n\tb: 2\n",
        "yaml: line 2: found a tab character that violates indentation"
    )]
    #[case::unclosed_double_quote("a: \"abc\n", "yaml: line 2: found unexpected end of stream")]
    #[case::unclosed_quote_at_the_end("a: \"abc", "yaml: found unexpected end of stream")]
    #[case::unclosed_single_quote("a: 'abc\n", "yaml: line 2: found unexpected end of stream")]
    #[case::unclosed_quote_before_more(
        "a: \"abc\nb: 1\n",
        "yaml: line 3: found unexpected end of stream"
    )]
    #[case::unclosed_sequence("a: [1, 2\n", "yaml: line 1: did not find expected ',' or ']'")]
    #[case::unclosed_mapping("a: {b: 1\n", "yaml: line 1: did not find expected ',' or '}'")]
    #[case::reserved_character("a: @x\n", "yaml: found character that cannot start any token")]
    #[case::unknown_escape("key: \"x\\q\"\n", "yaml: found unknown escape character")]
    #[case::unknown_anchor("a: *x\n", "yaml: unknown anchor 'x' referenced")]
    fn go_yaml_words(#[case] body: &str, #[case] want: &str) {
        let err = serde_saphyr::from_str::<serde_json::Value>(body).expect_err("refused");
        assert_eq!(go_yaml_error(body, &err), want);
    }
}

/// The whole corpus of `scripts/yaml-corpus` (malformed manifests and what sigs.k8s.io/yaml
/// says of each), through the YAML body decoder.
#[cfg(test)]
mod corpus {
    use base64::Engine;

    /// The corpus lines (0-based) whose text differs from go-yaml's, and why. Anything else
    /// must match, and each of these must still differ (a fix moves it out of this list).
    const DIFFERENT: &[(usize, &str)] = &[
        (
            12,
            "serde-saphyr accepts a tab after the indentation's spaces",
        ),
        (
            13,
            "a tab before the first key: serde-saphyr's parser refuses it, not its scanner",
        ),
        (14, "serde-saphyr accepts a tab after a sequence's dash"),
        (17, "serde-saphyr accepts a line holding only a tab"),
        (103, "a sequence as a key: go-yaml quotes it as a Go value"),
        (104, "a mapping as a key: go-yaml quotes it as a Go value"),
        (105, "a sequence as a key: go-yaml quotes it as a Go value"),
        (110, "go-yaml counts U+2028 and U+2029 as line breaks"),
        (124, "two %YAML directives: other words"),
        (125, "two %TAG directives: other words"),
        (128, "a %TAG directive without its prefix: other words"),
        (135, "serde-saphyr accepts !!null on any scalar"),
        (
            152,
            "nesting: serde-saphyr stops at 64 levels, go-yaml at 10000",
        ),
        (
            153,
            "nesting: serde-saphyr stops at 64 levels, go-yaml at 10000",
        ),
        (
            154,
            "nesting: serde-saphyr stops at 64 levels, go-yaml at 10000",
        ),
        (155, "a %YAML version without its minor number: other words"),
        (156, "a %YAML version too long: other words"),
        (160, "a bad escape in a verbatim tag: other words"),
        (172, "serde-saphyr accepts '!' in an anchor's name"),
        (185, "a sequence as a key: go-yaml quotes it as a Go value"),
        (186, "a mapping as a key: go-yaml quotes it as a Go value"),
        (187, "a null key: sigs.k8s.io/yaml's own formatting"),
        (188, "a null key: sigs.k8s.io/yaml's own formatting"),
        (190, "a sequence as a key: go-yaml quotes it as a Go value"),
        (193, "a null key: sigs.k8s.io/yaml's own formatting"),
        (194, "a sequence as a key: go-yaml quotes it as a Go value"),
        (195, "a mapping as a key: go-yaml quotes it as a Go value"),
        (196, "a sequence as a key: go-yaml quotes it as a Go value"),
        (197, "a sequence as a key: go-yaml quotes it as a Go value"),
    ];

    #[test]
    fn every_refused_body_has_go_yamls_text() {
        let corpus = include_str!("testdata/go-yaml-errors.jsonl");
        let mut differing = Vec::new();
        for (i, line) in corpus.lines().enumerate() {
            let case: serde_json::Value = serde_json::from_str(line).expect("a corpus line");
            let body = match case["body_base64"].as_str() {
                Some(b64) => base64::engine::general_purpose::STANDARD
                    .decode(b64)
                    .expect("base64"),
                None => case["body"].as_str().expect("body").as_bytes().to_vec(),
            };
            let got = super::super::negotiation::decode_yaml(&body)
                .err()
                .unwrap_or_else(|| "<accepted>".into());
            if got != case["error"] {
                println!(
                    "{i}: {:?}\n  go:       {}\n  kubefake: {got}",
                    case["body"], case["error"]
                );
                differing.push(i);
            }
        }
        let known: Vec<usize> = DIFFERENT.iter().map(|(i, _)| *i).collect();
        assert_eq!(differing, known);
    }
}
