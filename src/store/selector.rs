//! Label and field selectors: parse once per request, match per object. Pure.
//!
//! The grammar is the apimachinery one: comma-joined requirements, `k`, `!k`, `k=v`, `k==v`,
//! `k!=v`, `k in (a,b)`, `k notin (a,b)`, `k>n`, `k<n`. Absent keys match `!=` and `notin`.

use serde_json::Value;

/// One label requirement.
#[derive(Debug, Clone, PartialEq)]
enum Op {
    Exists,
    DoesNotExist,
    In(Vec<String>),
    NotIn(Vec<String>),
    Gt(i64),
    Lt(i64),
}

/// A parsed label selector. The empty selector matches everything.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LabelSelector {
    requirements: Vec<(String, Op)>,
}

/// A parsed field selector (`metadata.name=x,metadata.namespace!=y`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct FieldSelector {
    requirements: Vec<(String, bool, String)>,
}

fn valid_label_key(key: &str) -> bool {
    let (prefix, name) = match key.split_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, key),
    };
    if let Some(p) = prefix {
        if p.is_empty() || p.len() > 253 || !crate::strategy::object_meta::is_dns1123_subdomain(p) {
            return false;
        }
    }
    valid_label_name(name) && !name.is_empty()
}

fn valid_label_name(v: &str) -> bool {
    if v.is_empty() {
        return true;
    }
    let b = v.as_bytes();
    v.len() <= 63
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

/// Splits at top-level commas (commas inside `( )` belong to a value set).
fn split_requirements(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

impl LabelSelector {
    /// Parses a `labelSelector` query value. The error is the message of the 400 the apiserver
    /// returns.
    pub fn parse(s: &str) -> Result<Self, String> {
        let mut requirements = Vec::new();
        if s.trim().is_empty() {
            return Ok(LabelSelector { requirements });
        }
        for raw in split_requirements(s) {
            let req = raw.trim();
            let bad =
                || format!("unable to parse requirement: found '{req}', expected: identifier");
            if req.is_empty() {
                return Err(bad());
            }
            let (key, op) = if let Some(k) = req.strip_prefix('!') {
                (k.trim().to_string(), Op::DoesNotExist)
            } else if let Some((k, v)) = req.split_once("!=") {
                (k.trim().to_string(), Op::NotIn(vec![v.trim().to_string()]))
            } else if let Some((k, v)) = req.split_once("==").or_else(|| req.split_once('=')) {
                (k.trim().to_string(), Op::In(vec![v.trim().to_string()]))
            } else if let Some((k, v)) = req.split_once('>') {
                let n = v.trim().parse().map_err(|_| {
                    "unable to parse requirement: for 'Gt', 'Lt' operators, the value must be an integer".to_string()
                })?;
                (k.trim().to_string(), Op::Gt(n))
            } else if let Some((k, v)) = req.split_once('<') {
                let n = v.trim().parse().map_err(|_| {
                    "unable to parse requirement: for 'Gt', 'Lt' operators, the value must be an integer".to_string()
                })?;
                (k.trim().to_string(), Op::Lt(n))
            } else if let Some((k, rest)) = split_set_op(req) {
                let (negate, set) = rest;
                let values: Vec<String> = set
                    .split(',')
                    .map(|v| v.trim().to_string())
                    .filter(|v| !v.is_empty())
                    .collect();
                for v in &values {
                    if !valid_label_name(v) {
                        return Err(invalid_value(v));
                    }
                }
                let op = if negate {
                    Op::NotIn(values)
                } else {
                    Op::In(values)
                };
                (k.to_string(), op)
            } else if req.contains(char::is_whitespace) {
                return Err(bad());
            } else {
                (req.to_string(), Op::Exists)
            };
            if !valid_label_key(&key) {
                return Err(format!(
                    "unable to parse requirement: <nil>: Invalid value: {key:?}: name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
                ));
            }
            if let Op::In(vs) | Op::NotIn(vs) = &op {
                for v in vs {
                    if !valid_label_name(v) {
                        return Err(invalid_value(v));
                    }
                }
            }
            requirements.push((key, op));
        }
        Ok(LabelSelector { requirements })
    }

    /// Whether the selector selects nothing in particular (matches everything).
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// Matches an object's `metadata.labels`.
    pub fn matches(&self, labels: Option<&serde_json::Map<String, Value>>) -> bool {
        self.requirements.iter().all(|(key, op)| {
            let v = labels.and_then(|l| l.get(key)).and_then(Value::as_str);
            match op {
                Op::Exists => v.is_some(),
                Op::DoesNotExist => v.is_none(),
                Op::In(set) => v.is_some_and(|v| set.iter().any(|s| s == v)),
                Op::NotIn(set) => v.is_none_or(|v| !set.iter().any(|s| s == v)),
                Op::Gt(n) => v
                    .and_then(|v| v.parse::<i64>().ok())
                    .is_some_and(|x| x > *n),
                Op::Lt(n) => v
                    .and_then(|v| v.parse::<i64>().ok())
                    .is_some_and(|x| x < *n),
            }
        })
    }
}

fn invalid_value(v: &str) -> String {
    format!(
        "unable to parse requirement: <nil>: Invalid value: {v:?}: a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
    )
}

/// `key in (a,b)` / `key notin (a,b)` -> (key, (negated, "a,b")).
fn split_set_op(req: &str) -> Option<(&str, (bool, &str))> {
    let open = req.find('(')?;
    let close = req.rfind(')')?;
    if close != req.len() - 1 || close < open {
        return None;
    }
    let head = req[..open].trim_end();
    let set = &req[open + 1..close];
    if let Some(k) = head.strip_suffix("notin") {
        Some((k.trim(), (true, set)))
    } else {
        head.strip_suffix("in").map(|k| (k.trim(), (false, set)))
    }
}

impl FieldSelector {
    /// Parses a `fieldSelector`, accepting only `supported` field names (the apiserver rejects the
    /// rest with 400).
    pub fn parse(s: &str, supported: &[&str]) -> Result<Self, String> {
        let mut requirements = Vec::new();
        if s.trim().is_empty() {
            return Ok(FieldSelector { requirements });
        }
        for raw in s.split(',') {
            let req = raw.trim();
            let (field, eq, value) = if let Some((f, v)) = req.split_once("!=") {
                (f, false, v)
            } else if let Some((f, v)) = req.split_once("==").or_else(|| req.split_once('=')) {
                (f, true, v)
            } else {
                return Err(format!("invalid selector: '{s}'; can't understand '{req}'"));
            };
            let field = field.trim();
            if !supported.contains(&field) {
                return Err(format!("field label not supported: {field}"));
            }
            requirements.push((field.to_string(), eq, value.trim().to_string()));
        }
        Ok(FieldSelector { requirements })
    }

    /// Whether the selector selects nothing in particular.
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// Matches an object; fields are dotted paths into it (`metadata.name`, `status.phase`).
    pub fn matches(&self, obj: &Value) -> bool {
        self.requirements.iter().all(|(field, eq, value)| {
            let actual = field
                .split('.')
                .try_fold(obj, |v, part| v.get(part))
                .and_then(Value::as_str)
                .unwrap_or("");
            (actual == value) == *eq
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn labels(v: Value) -> serde_json::Map<String, Value> {
        v.as_object().cloned().unwrap_or_default()
    }

    #[test]
    fn label_selector_table() {
        let l = labels(json!({"app": "web", "tier": "front", "n": "5"}));
        let cases = [
            ("", true),
            ("app", true),
            ("!app", false),
            ("!missing", true),
            ("app=web", true),
            ("app==web", true),
            ("app!=web", false),
            ("missing!=x", true),
            ("app in (web, api)", true),
            ("app notin (web,api)", false),
            ("missing notin (a)", true),
            ("app=web,tier=front", true),
            ("app=web,tier=back", false),
            ("app in (a,web),tier", true),
            ("n>4", true),
            ("n<4", false),
        ];
        for (sel, want) in cases {
            let s = LabelSelector::parse(sel).expect(sel);
            assert_eq!(s.matches(Some(&l)), want, "{sel}");
        }
        assert!(LabelSelector::parse("!missing").expect("p").matches(None));
    }

    #[test]
    fn bad_label_selectors_are_errors() {
        for sel in ["a b", "=x", "app=in valid", "k in (a b)", ",", "n>x"] {
            assert!(LabelSelector::parse(sel).is_err(), "{sel}");
        }
    }

    #[test]
    fn field_selector() {
        let obj = json!({"metadata": {"name": "a", "namespace": "ns"}});
        let sup = ["metadata.name", "metadata.namespace"];
        assert!(FieldSelector::parse("metadata.name=a", &sup)
            .expect("p")
            .matches(&obj));
        assert!(!FieldSelector::parse("metadata.name!=a", &sup)
            .expect("p")
            .matches(&obj));
        assert!(
            FieldSelector::parse("metadata.namespace==ns,metadata.name=a", &sup)
                .expect("p")
                .matches(&obj)
        );
        assert!(FieldSelector::parse("spec.x=1", &sup).is_err());
        assert!(FieldSelector::parse("nonsense", &sup).is_err());
    }
}
