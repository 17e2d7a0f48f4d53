//! The texts of sigs.k8s.io/yaml's `YAMLToJSON` errors (go.yaml.in/yaml/v2, a port of libyaml),
//! which the apiserver puts into its answer to a malformed YAML body, computed from the error
//! serde-saphyr (another libyaml descendant) reports for the same body. Only on the error path.
//!
//! go-yaml words an error `yaml: line N: <problem>`, without the libyaml context (`while
//! parsing a block mapping`) serde-saphyr prefixes, and numbers lines in its own way: a scanner
//! error names the 1-based line of the problem, a parser error the 0-based line of the token it
//! did not expect, and either omits `line N: ` when that number is 0. The common problems are
//! mapped to go-yaml's words and line (bad indentation, tabs, unclosed quotes and brackets,
//! unknown escapes and anchors); anything else keeps serde-saphyr's problem text, numbered as a
//! scanner error.

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
            return format!(
                "yaml: unknown anchor '{}' referenced",
                anchor_at(text, line, column)
            );
        }
        other => other
            .to_string()
            .lines()
            .next()
            .unwrap_or_default()
            .to_string(),
    };
    // libyaml's context ("while parsing a block mapping, ") is not part of go-yaml's text.
    let problem = match msg.split_once(", ") {
        Some((context, problem)) if context.starts_with("while ") => problem,
        _ => msg.as_str(),
    };
    let eof = text.matches('\n').count() + 1;
    let (problem, numbering, line) = match problem {
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
        "unclosed quote" => ("found unexpected end of stream", Numbering::Scanner, eof),
        "unclosed bracket '['" => ("did not find expected ',' or ']'", Numbering::Parser, eof),
        "unclosed bracket '{'" => ("did not find expected ',' or '}'", Numbering::Parser, eof),
        p if p.starts_with("did not find expected") => (p, Numbering::Parser, line),
        p => (p, Numbering::Scanner, line),
    };
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
