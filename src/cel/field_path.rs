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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
