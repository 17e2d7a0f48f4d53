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

const NAME_PART_MSG: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

fn name_part_ok(v: &str) -> bool {
    let b = v.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

/// `IsQualifiedName`'s messages for a label key (empty when valid).
fn label_key_errors(key: &str) -> Vec<String> {
    let mut errs = Vec::new();
    let parts: Vec<&str> = key.split('/').collect();
    let name = match parts.as_slice() {
        [name] => *name,
        [prefix, name] => {
            if prefix.is_empty() {
                errs.push("prefix part must be non-empty".to_string());
            } else if !crate::registry::object_meta::is_dns1123_subdomain(prefix) {
                errs.push(format!("prefix part {}", "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"));
            } else if prefix.len() > 253 {
                errs.push("prefix part must be no more than 253 characters".to_string());
            }
            name
        }
        _ => {
            errs.push("a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')".to_string());
            return errs;
        }
    };
    if name.is_empty() {
        errs.push("name part must be non-empty".to_string());
    } else if name.len() > 63 {
        errs.push("name part must be no more than 63 characters".to_string());
    }
    if !name.is_empty() && !name_part_ok(name) {
        errs.push(NAME_PART_MSG.to_string());
    }
    errs
}

/// `IsValidLabelValue`'s messages (empty when valid).
fn label_value_errors(v: &str) -> Vec<String> {
    let mut errs = Vec::new();
    if v.len() > 63 {
        errs.push("must be no more than 63 characters".to_string());
    }
    if !v.is_empty() && !name_part_ok(v) {
        errs.push(LABEL_VALUE_MSG.to_string());
    }
    errs
}

/// Why a label or field selector was rejected: the message of the apiserver's 400, word for
/// word (kubectl and client libraries show it as is).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectorError {
    /// A requirement (`k in (a,b)`) does not parse; wraps why.
    #[error("unable to parse requirement: {0}")]
    Requirement(Box<SelectorError>),
    /// The lexer's token is not one the grammar allows here (`found 'b', expected: ',' or ')'`).
    #[error("found '{found}', expected: {expected}")]
    Unexpected {
        /// The literal text of the token ("" at the end of the string).
        found: String,
        /// What the grammar allows, in apimachinery's words.
        expected: &'static str,
    },
    /// A set operator without its `(` (apimachinery words this one without the comma).
    #[error("found '{found}' expected: '('")]
    MissingOpenParen {
        /// The literal text of the token.
        found: String,
    },
    /// `key: Invalid value`: the key is not a qualified name.
    #[error("key: Invalid value: {key:?}: {}", .reasons.join("; "))]
    InvalidKey {
        /// The key as written.
        key: String,
        /// Every way it is not a qualified name.
        reasons: Vec<String>,
    },
    /// `values[i]: Invalid value`: a value is not a label value.
    #[error("values[{index}]: Invalid value: {value:?}: {}", .reasons.join("; "))]
    InvalidValue {
        /// Its position in the requirement's values.
        index: usize,
        /// The value as written.
        value: String,
        /// Every way it is not a label value.
        reasons: Vec<String>,
    },
    /// `Gt` and `Lt` compare integers.
    #[error("values[0]: Invalid value: {value:?}: for 'Gt', 'Lt' operators, the value must be an integer")]
    NotAnInteger {
        /// The value as written.
        value: String,
    },
    /// A field selector requirement that is not `f=v`, `f==v` or `f!=v`.
    #[error("invalid selector: '{selector}'; can't understand '{requirement}'")]
    Unparsable {
        /// The whole selector.
        selector: String,
        /// The requirement that does not parse.
        requirement: String,
    },
    /// A field the resource does not index, worded by its registry (built-in kinds and custom
    /// resources say it differently).
    #[error("{0}")]
    UnsupportedField(String),
}

/// A token of the label selector lexer.
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    End,
    Ident(String),
    In,
    NotIn,
    Bang,
    NotEquals,
    Equals,
    DoubleEquals,
    Gt,
    Lt,
    Open,
    Close,
    Comma,
}

impl Tok {
    fn literal(&self) -> &str {
        match self {
            Tok::End => "",
            Tok::Ident(s) => s,
            Tok::In => "in",
            Tok::NotIn => "notin",
            Tok::Bang => "!",
            Tok::NotEquals => "!=",
            Tok::Equals => "=",
            Tok::DoubleEquals => "==",
            Tok::Gt => ">",
            Tok::Lt => "<",
            Tok::Open => "(",
            Tok::Close => ")",
            Tok::Comma => ",",
        }
    }

    /// The parser's error for this token where the grammar wants `expected`.
    fn unexpected(&self, expected: &'static str) -> SelectorError {
        SelectorError::Unexpected {
            found: self.literal().to_string(),
            expected,
        }
    }
}

fn is_special(c: char) -> bool {
    matches!(c, '=' | '!' | '(' | ')' | ',' | '>' | '<')
}

/// The operator token starting with `c` (and maybe `next`), and its length.
fn special_token(c: char, next: Option<char>) -> (Tok, usize) {
    match (c, next) {
        ('!', Some('=')) => (Tok::NotEquals, 2),
        ('=', Some('=')) => (Tok::DoubleEquals, 2),
        ('!', _) => (Tok::Bang, 1),
        ('=', _) => (Tok::Equals, 1),
        ('(', _) => (Tok::Open, 1),
        (')', _) => (Tok::Close, 1),
        (',', _) => (Tok::Comma, 1),
        ('>', _) => (Tok::Gt, 1),
        _ => (Tok::Lt, 1),
    }
}

fn lex(s: &str) -> Vec<Tok> {
    let chars: Vec<char> = s.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        if is_special(c) {
            let (tok, len) = special_token(c, chars.get(i + 1).copied());
            out.push(tok);
            i += len;
            continue;
        }
        let start = i;
        while i < chars.len() && !chars[i].is_whitespace() && !is_special(chars[i]) {
            i += 1;
        }
        let word: String = chars[start..i].iter().collect();
        out.push(match word.as_str() {
            "in" => Tok::In,
            "notin" => Tok::NotIn,
            _ => Tok::Ident(word),
        });
    }
    out
}

/// The apimachinery label selector parser: same grammar, same error messages.
struct Parser {
    toks: Vec<Tok>,
    pos: usize,
}

impl Parser {
    /// The next token; in the values context `in`/`notin` are plain identifiers.
    fn peek(&self, values: bool) -> Tok {
        let t = self.toks.get(self.pos).cloned().unwrap_or(Tok::End);
        match t {
            Tok::In if values => Tok::Ident("in".into()),
            Tok::NotIn if values => Tok::Ident("notin".into()),
            other => other,
        }
    }

    fn next(&mut self, values: bool) -> Tok {
        let t = self.peek(values);
        self.pos += 1;
        t
    }

    fn parse(&mut self) -> Result<Vec<(String, Op)>, SelectorError> {
        let mut reqs = Vec::new();
        loop {
            match self.peek(true) {
                Tok::Ident(_) | Tok::Bang => {
                    let r = self
                        .requirement()
                        .map_err(|e| SelectorError::Requirement(Box::new(e)))?;
                    reqs.push(r);
                    match self.next(true) {
                        Tok::End => return Ok(reqs),
                        Tok::Comma => match self.peek(true) {
                            Tok::Ident(_) | Tok::Bang => {}
                            t => return Err(t.unexpected("identifier after ','")),
                        },
                        t => return Err(t.unexpected("',' or 'end of string'")),
                    }
                }
                Tok::End => return Ok(reqs),
                t => return Err(t.unexpected("!, identifier, or 'end of string'")),
            }
        }
    }

    /// `[!]key [op values]`, with the key and values checked as label keys and values.
    fn requirement(&mut self) -> Result<(String, Op), SelectorError> {
        let mut t = self.next(true);
        let negated = t == Tok::Bang;
        if negated {
            t = self.next(true);
        }
        let Tok::Ident(key) = t else {
            return Err(t.unexpected("identifier"));
        };
        let reasons = label_key_errors(&key);
        if !reasons.is_empty() {
            return Err(SelectorError::InvalidKey { key, reasons });
        }
        if matches!(self.peek(true), Tok::End | Tok::Comma) || negated {
            let op = if negated {
                Op::DoesNotExist
            } else {
                Op::Exists
            };
            return Ok((key, op));
        }
        let op = self.next(false);
        let values = match op {
            Tok::In | Tok::NotIn => self.set_values()?,
            Tok::Equals | Tok::DoubleEquals | Tok::NotEquals | Tok::Gt | Tok::Lt => {
                self.exact_value()?
            }
            t => return Err(t.unexpected("in, notin, =, ==, !=, gt, lt")),
        };
        Ok((key, requirement_op(&op, values)?))
    }

    fn exact_value(&mut self) -> Result<Vec<String>, SelectorError> {
        match self.peek(true) {
            Tok::End | Tok::Comma => Ok(vec![String::new()]),
            _ => match self.next(true) {
                Tok::Ident(v) => Ok(vec![v]),
                t => Err(t.unexpected("identifier")),
            },
        }
    }

    /// `(a, b, ...)`: de-duplicated, with empty strings where commas leave a gap.
    fn set_values(&mut self) -> Result<Vec<String>, SelectorError> {
        let t = self.next(true);
        if t != Tok::Open {
            return Err(SelectorError::MissingOpenParen {
                found: t.literal().to_string(),
            });
        }
        match self.peek(true) {
            Tok::Close => {
                self.next(true);
                return Ok(vec![String::new()]);
            }
            Tok::Ident(_) | Tok::Comma => {}
            t => return Err(t.unexpected("',', ')' or identifier")),
        }
        let mut values: Vec<String> = Vec::new();
        while !self.set_value(&mut values)? {}
        match self.next(true) {
            Tok::Close => Ok(values),
            t => Err(t.unexpected("')'")),
        }
    }

    /// One value of a set, or a comma; true when the `)` is next.
    fn set_value(&mut self, values: &mut Vec<String>) -> Result<bool, SelectorError> {
        let insert = |values: &mut Vec<String>, v: String| {
            if !values.contains(&v) {
                values.push(v);
            }
        };
        match self.next(true) {
            Tok::Ident(v) => {
                insert(values, v);
                match self.peek(true) {
                    Tok::Comma => Ok(false),
                    Tok::Close => Ok(true),
                    t => Err(t.unexpected("',' or ')'")),
                }
            }
            Tok::Comma => {
                if values.is_empty() {
                    insert(values, String::new());
                }
                match self.peek(true) {
                    Tok::Close => {
                        insert(values, String::new());
                        Ok(true)
                    }
                    Tok::Comma => {
                        self.next(true);
                        insert(values, String::new());
                        Ok(false)
                    }
                    _ => Ok(false),
                }
            }
            t => Err(t.unexpected("',', or identifier")),
        }
    }
}

/// The requirement of operator `op` on `values`, which must be label values (integers for
/// `Gt`/`Lt`).
fn requirement_op(op: &Tok, values: Vec<String>) -> Result<Op, SelectorError> {
    if !matches!(op, Tok::Gt | Tok::Lt) {
        for (index, value) in values.iter().enumerate() {
            let reasons = label_value_errors(value);
            if !reasons.is_empty() {
                return Err(SelectorError::InvalidValue {
                    index,
                    value: value.clone(),
                    reasons,
                });
            }
        }
    }
    let int_value = || {
        let first = values.first().cloned().unwrap_or_default();
        first
            .parse()
            .map_err(|_| SelectorError::NotAnInteger { value: first })
    };
    Ok(match op {
        Tok::NotIn | Tok::NotEquals => Op::NotIn(values),
        Tok::Gt => Op::Gt(int_value()?),
        Tok::Lt => Op::Lt(int_value()?),
        _ => Op::In(values),
    })
}

impl LabelSelector {
    /// Parses a `labelSelector` query value. The error is the message of the 400 the apiserver
    /// returns.
    pub fn parse(s: &str) -> Result<Self, SelectorError> {
        let requirements = Parser {
            toks: lex(s),
            pos: 0,
        }
        .parse()?;
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

/// How core built-in kinds reject an unsupported field selector.
pub fn builtin_unsupported_field(field: &str, _supported: &[&str]) -> String {
    format!("field label not supported: {field}")
}

/// How custom resources (and other generic registries) reject one.
pub fn generic_unsupported_field(field: &str, supported: &[&str]) -> String {
    let quoted: Vec<String> = supported.iter().map(|s| format!("{s:?}")).collect();
    format!(
        "{field:?} is not a known field selector: only {}",
        quoted.join(", ")
    )
}

impl FieldSelector {
    /// Parses a `fieldSelector`, accepting only `supported` field names (the apiserver rejects the
    /// rest with 400, worded by `unsupported`). A supported entry is a dotted path into the
    /// object (`status.phase`), or `label=path` where the selector's name is not the object's
    /// path (events select `source` by `source.component`); either may end in `|default`, the
    /// value an absent field has (a pod's `spec.hostNetwork|false`, as Go prints its zero value).
    pub fn parse<S: AsRef<str>>(
        s: &str,
        supported: &[S],
        unsupported: fn(&str, &[&str]) -> String,
    ) -> Result<Self, SelectorError> {
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
                return Err(SelectorError::Unparsable {
                    selector: s.to_string(),
                    requirement: req.to_string(),
                });
            };
            let field = field.trim();
            let Some(path) = supported.iter().map(AsRef::as_ref).find_map(|entry| {
                let name = entry.split_once('|').map_or(entry, |(n, _)| n);
                match entry.split_once('=') {
                    Some((label, path)) => (label == field).then_some(path),
                    None => (name == field).then_some(entry),
                }
            }) else {
                let labels: Vec<&str> = supported
                    .iter()
                    .map(AsRef::as_ref)
                    .map(|e| e.split_once('=').map_or(e, |(l, _)| l))
                    .map(|e| e.split_once('|').map_or(e, |(l, _)| l))
                    .collect();
                return Err(SelectorError::UnsupportedField(unsupported(field, &labels)));
            };
            requirements.push((path.to_string(), eq, value.trim().to_string()));
        }
        Ok(FieldSelector { requirements })
    }

    /// Whether the selector selects nothing in particular.
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// Matches an object; fields are dotted paths into it (`metadata.name`, `status.phase`),
    /// whose value is compared as the apiserver's field sets print it (strings as they are,
    /// booleans and numbers in their decimal form, an absent field as "").
    pub fn matches(&self, obj: &Value) -> bool {
        self.requirements.iter().all(|(entry, eq, value)| {
            let (path, absent) = entry.split_once('|').unwrap_or((entry, ""));
            let actual = path.split('.').try_fold(obj, |v, part| v.get(part));
            let equal = match actual {
                Some(Value::String(s)) => s == value,
                Some(Value::Bool(b)) => b.to_string() == *value,
                Some(Value::Number(n)) => n.to_string() == *value,
                _ => absent == value,
            };
            equal == *eq
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
    fn bad_label_selectors_have_the_apiserver_messages() {
        let cases = [
            ("a b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"),
            ("type=app,versionv1.0.1)", "unable to parse requirement: found ')', expected: in, notin, =, ==, !=, gt, lt"),
            ("=x", "found '=', expected: !, identifier, or 'end of string'"),
            ("a,", "found '', expected: identifier after ','"),
            ("a=b c", "found 'c', expected: ',' or 'end of string'"),
            ("k in (a b)", "unable to parse requirement: found 'b', expected: ',' or ')'"),
            ("k in a", "unable to parse requirement: found 'a' expected: '('"),
            ("n>x", "unable to parse requirement: values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an integer"),
            ("k@=v", "unable to parse requirement: key: Invalid value: \"k@\": name part must consist of"),
            ("k=-v", "unable to parse requirement: values[0]: Invalid value: \"-v\": a valid label must be an empty string"),
        ];
        for (sel, want) in cases {
            let err = LabelSelector::parse(sel).expect_err(sel).to_string();
            assert!(err.starts_with(want), "{sel}: {err}");
        }
    }

    #[test]
    fn set_forms() {
        let l = labels(json!({"k": "in"}));
        assert!(LabelSelector::parse("k in (in, notin)")
            .expect("p")
            .matches(Some(&l)));
        assert!(LabelSelector::parse("k=")
            .expect("p")
            .matches(Some(&labels(json!({"k": ""})))));
        assert!(LabelSelector::parse("k notin ()")
            .expect("p")
            .matches(Some(&l)));
        assert!(LabelSelector::parse("  ").expect("p").is_empty());
    }

    #[test]
    fn field_selector() {
        let obj = json!({"metadata": {"name": "a", "namespace": "ns"}});
        let sup = ["metadata.name", "metadata.namespace"];
        let parse = |s| FieldSelector::parse(s, &sup, generic_unsupported_field);
        assert!(parse("metadata.name=a").expect("p").matches(&obj));
        assert!(!parse("metadata.name!=a").expect("p").matches(&obj));
        assert!(parse("metadata.namespace==ns,metadata.name=a")
            .expect("p")
            .matches(&obj));
        assert_eq!(
            parse("spec.x=1").expect_err("unsupported").to_string(),
            "\"spec.x\" is not a known field selector: only \"metadata.name\", \"metadata.namespace\""
        );
        assert_eq!(
            parse("nonsense").expect_err("bad").to_string(),
            "invalid selector: 'nonsense'; can't understand 'nonsense'"
        );
        assert_eq!(
            FieldSelector::parse("spec.x=1", &sup, builtin_unsupported_field)
                .expect_err("x")
                .to_string(),
            "field label not supported: spec.x"
        );
        let defaulted = ["spec.hostNetwork|false", "host=spec.hostNetwork|false"];
        let parse = |s| FieldSelector::parse(s, &defaulted, generic_unsupported_field);
        assert!(parse("spec.hostNetwork=false").expect("p").matches(&obj));
        assert!(parse("host=false").expect("p").matches(&obj));
        assert!(!parse("spec.hostNetwork=false")
            .expect("p")
            .matches(&json!({"spec": {"hostNetwork": true}})));
    }

    #[test]
    fn requirement_operators() {
        let v = |xs: &[&str]| xs.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let cases = [
            (Tok::Equals, v(&["a"]), Ok(Op::In(v(&["a"])))),
            (Tok::DoubleEquals, v(&["a"]), Ok(Op::In(v(&["a"])))),
            (Tok::NotEquals, v(&["a"]), Ok(Op::NotIn(v(&["a"])))),
            (Tok::NotIn, v(&["a", ""]), Ok(Op::NotIn(v(&["a", ""])))),
            (Tok::Gt, v(&["-3"]), Ok(Op::Gt(-3))),
            (Tok::Lt, v(&["x"]), Err("values[0]: Invalid value: \"x\": for 'Gt', 'Lt' operators, the value must be an integer")),
            (Tok::In, v(&["a", "-b"]), Err("values[1]: Invalid value: \"-b\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")),
        ];
        for (op, values, want) in cases {
            let got = requirement_op(&op, values).map_err(|e| e.to_string());
            assert_eq!(got, want.map_err(str::to_string), "{op:?}");
        }
    }
}
