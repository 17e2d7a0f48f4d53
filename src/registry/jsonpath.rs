//! The part of Kubernetes JSONPath that printer columns use: `.a.b`, `.a[0]`, `.a[*].b`,
//! `['dotted.key']`, and filters `[?(@.type=="Ready")]`. Parsed once, evaluated per object.

use serde_json::Value;

#[derive(Debug, Clone, PartialEq)]
enum Step {
    Field(String),
    Index(i64),
    All,
    /// `[?(@.path == "literal")]` (or `!=`).
    Filter(Vec<String>, bool, Value),
}

/// A parsed path. An unparseable path matches nothing (the column stays empty).
#[derive(Debug, Clone, PartialEq)]
pub struct JsonPath {
    steps: Option<Vec<Step>>,
}

fn parse_filter(inner: &str) -> Option<Step> {
    let body = inner.strip_prefix("?(")?.strip_suffix(')')?.trim();
    let (lhs, eq, rhs) = if let Some((l, r)) = body.split_once("==") {
        (l, true, r)
    } else if let Some((l, r)) = body.split_once("!=") {
        (l, false, r)
    } else {
        return None;
    };
    let path = lhs.trim().strip_prefix('@')?;
    let fields: Vec<String> = path
        .split('.')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    let rhs = rhs.trim();
    let literal = if (rhs.starts_with('"') && rhs.ends_with('"') && rhs.len() >= 2)
        || (rhs.starts_with('\'') && rhs.ends_with('\'') && rhs.len() >= 2)
    {
        Value::String(rhs[1..rhs.len() - 1].to_string())
    } else {
        serde_json::from_str(rhs).ok()?
    };
    Some(Step::Filter(fields, eq, literal))
}

fn parse_steps(path: &str) -> Option<Vec<Step>> {
    let path = path.trim();
    let path = path
        .strip_prefix('{')
        .and_then(|p| p.strip_suffix('}'))
        .unwrap_or(path);
    let path = path.strip_prefix('$').unwrap_or(path);
    let mut steps = Vec::new();
    let chars: Vec<char> = path.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '.' => {
                let start = i + 1;
                let mut end = start;
                while end < chars.len() && chars[end] != '.' && chars[end] != '[' {
                    end += 1;
                }
                let field: String = chars[start..end].iter().collect();
                if !field.is_empty() {
                    steps.push(Step::Field(field));
                }
                i = end;
            }
            '[' => {
                // Find the matching ']' outside quotes.
                let mut end = i + 1;
                let mut quote: Option<char> = None;
                while end < chars.len() {
                    let c = chars[end];
                    match quote {
                        Some(q) if c == q => quote = None,
                        Some(_) => {}
                        None if c == '"' || c == '\'' => quote = Some(c),
                        None if c == ']' => break,
                        None => {}
                    }
                    end += 1;
                }
                if end >= chars.len() {
                    return None;
                }
                let inner: String = chars[i + 1..end].iter().collect();
                let inner = inner.trim();
                let step = if inner == "*" {
                    Step::All
                } else if inner.starts_with('?') {
                    parse_filter(inner)?
                } else if (inner.starts_with('\'') || inner.starts_with('"')) && inner.len() >= 2 {
                    Step::Field(inner[1..inner.len() - 1].to_string())
                } else {
                    Step::Index(inner.parse().ok()?)
                };
                steps.push(step);
                i = end + 1;
            }
            _ => {
                // A leading bare field (`spec.x`).
                let start = i;
                let mut end = start;
                while end < chars.len() && chars[end] != '.' && chars[end] != '[' {
                    end += 1;
                }
                steps.push(Step::Field(chars[start..end].iter().collect()));
                i = end;
            }
        }
    }
    Some(steps)
}

impl JsonPath {
    /// Parses a printer column's `jsonPath`.
    pub fn parse(path: &str) -> JsonPath {
        JsonPath {
            steps: parse_steps(path),
        }
    }

    /// Every value the path selects.
    pub fn find<'a>(&self, root: &'a Value) -> Vec<&'a Value> {
        let Some(steps) = &self.steps else {
            return Vec::new();
        };
        let mut current = vec![root];
        for step in steps {
            let mut next = Vec::new();
            for v in current {
                match step {
                    Step::Field(f) => next.extend(v.get(f.as_str())),
                    Step::Index(i) => {
                        if let Some(a) = v.as_array() {
                            let idx = if *i < 0 { a.len() as i64 + i } else { *i };
                            if idx >= 0 {
                                next.extend(a.get(idx as usize));
                            }
                        }
                    }
                    Step::All => match v {
                        Value::Array(a) => next.extend(a.iter()),
                        Value::Object(o) => next.extend(o.values()),
                        _ => {}
                    },
                    Step::Filter(fields, eq, literal) => {
                        if let Some(a) = v.as_array() {
                            next.extend(a.iter().filter(|item| {
                                let got = fields.iter().try_fold(*item, |x, f| x.get(f.as_str()));
                                (got == Some(literal)) == *eq
                            }));
                        }
                    }
                }
            }
            current = next;
        }
        current
    }

    /// The first value the path selects.
    pub fn first<'a>(&self, root: &'a Value) -> Option<&'a Value> {
        self.find(root).into_iter().next()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths() {
        let obj = json!({
            "spec": {"replicas": 3, "list": [{"name": "a"}, {"name": "b"}]},
            "metadata": {"labels": {"app.kubernetes.io/name": "web"}},
            "status": {"conditions": [{"type": "Ready", "status": "True"}, {"type": "Synced", "status": "False"}]}
        });
        let first = |p: &str| JsonPath::parse(p).first(&obj).cloned();
        assert_eq!(first(".spec.replicas"), Some(json!(3)));
        assert_eq!(first("{.spec.replicas}"), Some(json!(3)));
        assert_eq!(first(".spec.list[1].name"), Some(json!("b")));
        assert_eq!(first(".spec.list[-1].name"), Some(json!("b")));
        assert_eq!(first(".spec.list[*].name"), Some(json!("a")));
        assert_eq!(
            first(".metadata.labels['app.kubernetes.io/name']"),
            Some(json!("web"))
        );
        assert_eq!(
            first(".status.conditions[?(@.type==\"Synced\")].status"),
            Some(json!("False"))
        );
        assert_eq!(
            first(".status.conditions[?(@.type!=\"Synced\")].type"),
            Some(json!("Ready"))
        );
        assert_eq!(first(".spec.missing"), None);
        assert_eq!(first(".spec.list[9]"), None);
        assert_eq!(first(".spec[unclosed"), None);
    }
}
