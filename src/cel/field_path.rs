//! A rule's `fieldPath` (`.spec.foo`, `.testMap['key.with.dots']`): checked against the schema
//! when the CRD is written and normalized to the path field errors report (`spec.foo`,
//! `testMap[key.with.dots]`), as the apiserver's `ValidFieldPath`.

use crate::schema::Node as SchemaNode;

/// Normalizes a `fieldPath` against the schema of the rule's node; `None` when it does not
/// parse or names a field the schema does not have.
pub fn valid_field_path(path: &str, schema: &SchemaNode) -> Option<String> {
    if path.is_empty() {
        return None;
    }
    let mut out = String::new();
    let mut node = schema;
    for name in segments(path)? {
        node = step(node, name, &mut out)?;
    }
    Some(out)
}

/// Descends into a named property (`.name`) or, for a schema without `properties`, into the
/// `additionalProperties` schema (`[key]`).
fn step<'s>(node: &'s SchemaNode, name: String, out: &mut String) -> Option<&'s SchemaNode> {
    if node.has_properties {
        let child = node.properties.get(&name)?;
        if !out.is_empty() {
            out.push('.');
        }
        out.push_str(&name);
        return Some(child);
    }
    let values = node.additional_schema()?;
    out.push('[');
    out.push_str(&name);
    out.push(']');
    Some(values)
}

/// The names of a path: `.name` and `['quoted name']` segments, with the quoted names'
/// escapes resolved.
fn segments(path: &str) -> Option<Vec<String>> {
    let b = path.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'.' => {
                let start = i + 1;
                i = start;
                while i < b.len() && !matches!(b[i], b'.' | b'[' | b']') {
                    i += 1;
                }
                if start == i {
                    return None;
                }
                out.push(path[start..i].to_string());
            }
            b'[' => {
                let (name, end) = quoted(path, i + 1)?;
                out.push(name);
                i = end;
            }
            _ => return None,
        }
    }
    Some(out)
}

/// A `'quoted name']` starting at `i`: the name and the index after the `]`.
fn quoted(path: &str, mut i: usize) -> Option<(String, usize)> {
    let b = path.as_bytes();
    if b.get(i) != Some(&b'\'') {
        return None;
    }
    i += 1;
    let mut s = String::new();
    loop {
        match *b.get(i)? {
            b'\\' if i + 1 < b.len() => {
                s.push(unescape(b[i + 1])?);
                i += 2;
            }
            b'\'' => {
                i += 1;
                break;
            }
            _ => {
                let ch = path.get(i..)?.chars().next()?;
                s.push(ch);
                i += ch.len_utf8();
            }
        }
    }
    if b.get(i) != Some(&b']') {
        return None;
    }
    Some((s, i + 1))
}

/// The character of a `\x` escape in a quoted name.
fn unescape(c: u8) -> Option<char> {
    Some(match c {
        b'n' => '\n',
        b't' => '\t',
        b'r' => '\r',
        b'\'' => '\'',
        b'\\' => '\\',
        b'a' => '\u{7}',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'v' => '\u{b}',
        _ => return None,
    })
}

/// `ValidFieldPath` without array notation, as a CRD version's `selectableFields` are checked:
/// the path as field errors print it (`spec.color`, `spec.labels[team]`), the schema it reaches
/// (`None` past `additionalProperties: true`) and its first field, or the apiserver's error text.
/// The path is cut into tokens as the apiserver's scanner cuts it: `.`, `[` and `]` alone, a
/// single-quoted run, or the text up to the next of those.
pub fn selectable_field_path<'s>(
    path: &str,
    schema: &'s SchemaNode,
) -> Result<(String, Option<&'s SchemaNode>, String), String> {
    let mut tokens = Tokens { path, at: 0 };
    let (mut out, mut root) = (String::new(), String::new());
    let mut node = Some(schema);
    while let Some(tok) = tokens.next() {
        match tok {
            "[" => return Err("array notation is not allowed".into()),
            "." => {
                let name = tokens.next().ok_or("unexpected end of JSON path")?;
                let current = node.ok_or("does not refer to a valid field")?;
                if root.is_empty() {
                    root = name.to_string();
                }
                if current.has_properties {
                    let child = current
                        .properties
                        .get(name)
                        .ok_or("does not refer to a valid field")?;
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(name);
                    node = Some(child);
                } else if current.additional.is_some() {
                    out.push('[');
                    out.push_str(name);
                    out.push(']');
                    node = current.additional_schema();
                } else {
                    return Err("does not refer to a valid field".into());
                }
            }
            other => return Err(format!("expected [ or . but got: {other}")),
        }
    }
    Ok((out, node, root))
}

/// The apiserver's tokens of a field path (see [`selectable_field_path`]).
struct Tokens<'p> {
    path: &'p str,
    at: usize,
}

impl<'p> Iterator for Tokens<'p> {
    type Item = &'p str;

    fn next(&mut self) -> Option<&'p str> {
        let rest = self.path.get(self.at..).filter(|r| !r.is_empty())?;
        let b = rest.as_bytes();
        let len = if b[0] == b'\'' {
            // Through the first quote not escaped, or to the end.
            (1..b.len())
                .find(|&i| b[i] == b'\'' && b[i - 1] != b'\\')
                .map_or(b.len(), |i| i + 1)
        } else {
            match b.iter().position(|c| matches!(c, b'.' | b'[' | b']')) {
                Some(0) => 1,
                Some(i) => i,
                None => b.len(),
            }
        };
        // Every cut is at an ASCII byte or the end: always a char boundary.
        let tok = rest.get(..len)?;
        self.at += len;
        Some(tok)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[rstest::rstest]
    #[case::field(".spec.color", Ok(("spec.color", "string", "spec")))]
    #[case::map_key(".spec.labels.team", Ok(("spec.labels[team]", "integer", "spec")))]
    #[case::metadata(".metadata.name", Ok(("metadata.name", "string", "metadata")))]
    #[case::array_notation(".spec['color']", Err("array notation is not allowed"))]
    #[case::no_leading_dot("spec.color", Err("expected [ or . but got: spec"))]
    #[case::trailing_dot(".spec.", Err("unexpected end of JSON path"))]
    #[case::unknown(".spec.nope", Err("does not refer to a valid field"))]
    #[case::under_a_scalar(".spec.color.x", Err("does not refer to a valid field"))]
    #[case::double_dot(".spec..color", Err("does not refer to a valid field"))]
    #[case::quoted_name(".spec.'a.b'", Err("does not refer to a valid field"))]
    #[case::closing_bracket(".spec]", Err("expected [ or . but got: ]"))]
    fn selectable_paths_as_the_apiserver_checks_them(
        #[case] path: &str,
        #[case] want: Result<(&str, &str, &str), &str>,
    ) {
        let s = SchemaNode::compile(&json!({"type": "object", "properties": {
            "metadata": {"type": "object", "properties": {"name": {"type": "string"}}},
            "spec": {"type": "object", "properties": {
                "color": {"type": "string"},
                "labels": {"type": "object", "additionalProperties": {"type": "integer"}}}}}}));
        let got = selectable_field_path(path, &s);
        let got = got
            .as_ref()
            .map(|(p, n, root)| (p.as_str(), n.map_or("", |n| n.ty.as_str()), root.as_str()))
            .map_err(String::as_str);
        assert_eq!(got, want, "{path}");
    }

    #[test]
    fn paths_normalize_against_the_schema() {
        let s = SchemaNode::compile(&json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {"a.b": {"type": "string"}}},
            "m": {"type": "object", "additionalProperties": {"type": "string"}},
            "e": {"type": "object", "properties": {},
                  "additionalProperties": {"type": "string"}}}}));
        let p = |path: &str| valid_field_path(path, &s);
        assert_eq!(p(".spec['a.b']").as_deref(), Some("spec.a.b"));
        assert_eq!(p(".m['x\\ty']").as_deref(), Some("m[x\ty]"));
        assert_eq!(p(".m.key").as_deref(), Some("m[key]"));
        // Declared (even empty) properties name fields, never additionalProperties keys.
        assert_eq!(p(".e.key"), None);
        for bad in [
            "",
            "spec",
            ".",
            ".spec.",
            ".nope",
            ".spec['a.b'",
            ".spec[a]",
            ".m['\\q']",
        ] {
            assert_eq!(p(bad), None, "{bad}");
        }
    }
}
