//! The errors of compiling and running rules, typed so that callers branch on what happened
//! (a cost limit, a missing overload) instead of on message text. Every `Display` is the exact
//! wording of cel-go or the apiserver, because these strings end up in the `StatusCause`s
//! clients see and compare.

use std::fmt;

use super::types::Ty;

/// A run-time error of an expression, worded as cel-go's.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EvalError {
    /// No overload of the function accepts the argument values (possible with `dyn` values, as
    /// the checker could not rule it out).
    #[error("no such overload")]
    NoOverload,
    /// The per-call cost limit was exceeded: the evaluation was stopped.
    #[error("operation cancelled: actual cost limit exceeded")]
    CostLimitExceeded,
    /// The budget several expressions share (one admission policy evaluation) is spent: the
    /// apiserver's wording, and nothing after it runs.
    #[error("validation failed due to running out of cost budget, no further validation rules will be run")]
    OutOfBudget,
    /// An identifier that is neither a variable nor a type.
    #[error("no such attribute: {0}")]
    NoSuchAttribute(String),
    /// A map key or object field that is absent.
    #[error("no such key: {0}")]
    NoSuchKey(String),
    /// A list index outside the list.
    #[error("index out of bounds: {0}")]
    IndexOutOfBounds(i64),
    /// A string index outside the string (`charAt`, `indexOf`, `substring`).
    #[error("index out of range: {0}")]
    IndexOutOfRange(i64),
    /// Arithmetic outside the range of the type (`integer`, `unsigned integer`, `timestamp`,
    /// `duration`, `quantity`).
    #[error("{0} overflow")]
    Overflow(&'static str),
    /// `x / 0`.
    #[error("division by zero")]
    DivisionByZero,
    /// `x % 0`.
    #[error("modulus by zero")]
    ModulusByZero,
    /// A map literal with the same key twice.
    #[error("Failed with repeated key: {0}")]
    RepeatedKey(String),
    /// A comprehension building a map inserted a key twice (`transformMap`).
    #[error("insert failed: key {0} already exists")]
    KeyExists(String),
    /// An expression the interpreter does not support (message literals, unspecified nodes).
    #[error("{0}")]
    Unsupported(String),
    /// A value a conversion or a library function rejects, with the library's wording
    /// (`cannot convert "x" to int`, `could not parse semver: x`...).
    #[error("{0}")]
    Invalid(String),
    /// A regular expression that does not compile (only when not a literal, which the checker
    /// compiles).
    #[error(transparent)]
    Regex(#[from] InvalidRegex),
}

impl EvalError {
    /// Whether `_[?_]` turns this error of an index into `optional.none()`.
    pub fn is_missing(&self) -> bool {
        matches!(
            self,
            EvalError::NoSuchKey(_)
                | EvalError::IndexOutOfBounds(_)
                | EvalError::IndexOutOfRange(_)
        )
    }
}

/// A regular expression RE2 (and so CEL) rejects, or one too large to compile.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0}")]
pub struct InvalidRegex(pub String);

/// A type-check error of one expression, worded as cel-go's checker.
#[derive(Debug, Clone, thiserror::Error)]
pub enum CheckError {
    /// An identifier or function that is not declared.
    #[error("undeclared reference to '{0}' (in container '')")]
    UndeclaredReference(String),
    /// A field the schema does not declare.
    #[error("undefined field '{0}'")]
    UndefinedField(String),
    /// A field selection on a value without fields.
    #[error("type '{0}' does not support field selection")]
    NoFieldSelection(Ty),
    /// No overload accepts the argument types (`args` rendered as cel-go does).
    #[error("found no matching overload for '{name}' applied to '{args}'")]
    NoMatchingOverload {
        /// The function.
        name: String,
        /// `(int, bool)` or `string.(int)`.
        args: String,
    },
    /// A map literal key of a type maps cannot be keyed by.
    #[error("unsupported map key type: {0}")]
    UnsupportedMapKey(Ty),
    /// Elements of a list or map literal of different types.
    #[error("expected type '{expected}' but found '{found}'")]
    TypeMismatch {
        /// The type of the first element.
        expected: Ty,
        /// The type of this one.
        found: Ty,
    },
    /// A comprehension over something that is not a list or a map.
    #[error(
        "expression of type '{0}' cannot be range of a comprehension (must be list, map, or dynamic)"
    )]
    NotARange(Ty),
    /// `x.?y` where `y` is not a field name.
    #[error("unsupported optional field selection")]
    UnsupportedOptionalSelection,
    /// A literal regular expression that does not compile.
    #[error(transparent)]
    Regex(#[from] InvalidRegex),
}

/// One issue of an expression at its source position (1-based line, 0-based column).
#[derive(Debug, Clone, PartialEq)]
pub struct Issue {
    /// 1-based line.
    pub line: usize,
    /// 0-based column, in characters.
    pub column: usize,
    /// The parser's or checker's message.
    pub message: String,
}

/// Why an expression does not compile: its syntax or type errors, displayed as cel-go's
/// `Errors.ToDisplayString` (each issue with its location and a caret under the source).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}", render(.source_text, .issues))]
pub struct CompileError {
    /// The expression.
    pub source_text: String,
    /// Its issues, in source order.
    pub issues: Vec<Issue>,
}

impl CompileError {
    /// The error of `src` with these issues (sorted by position, as cel-go reports them).
    pub fn new(src: &str, mut issues: Vec<Issue>) -> CompileError {
        issues.sort_by_key(|i| (i.line, i.column));
        CompileError {
            source_text: src.to_string(),
            issues,
        }
    }
}

fn render(src: &str, issues: &[Issue]) -> String {
    let lines: Vec<&str> = src.split('\n').collect();
    issues
        .iter()
        .map(|issue| {
            // cel-go places the end of an empty source before its first column, and shows no
            // snippet of it.
            let column = if src.is_empty() { 0 } else { issue.column + 1 };
            let mut out = format!("ERROR: <input>:{}:{column}: {}", issue.line, issue.message);
            match lines.get(issue.line.saturating_sub(1)) {
                Some(snippet) if !src.is_empty() => caret(&mut out, snippet, issue.column),
                _ => {}
            }
            out
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Appends the source line and a caret under `column` (wide characters as full-width dots).
fn caret(out: &mut String, snippet: &str, column: usize) {
    let snippet = snippet.replace('\t', " ");
    out.push_str("\n | ");
    out.push_str(&snippet);
    out.push_str("\n | ");
    let mut chars = snippet.chars();
    for _ in 0..column {
        match chars.next() {
            Some(c) if c.len_utf8() > 1 => out.push('\u{ff0e}'),
            Some(_) => out.push('.'),
            None => break,
        }
    }
    match chars.next() {
        Some(c) if c.len_utf8() > 1 => out.push('\u{ff3e}'),
        _ => out.push('^'),
    }
}

/// Why a rule (or its messageExpression) has no program, in the apiserver's wording: reported
/// when the CRD is written, and again at run time for rules under `allOf`, which the apiserver
/// does not compile with the CRD.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RuleError {
    /// The rule does not parse or type-check.
    #[error("compilation failed: {0}")]
    Compile(CompileError),
    /// The rule is not boolean.
    #[error("cel expression must evaluate to a bool")]
    NotBool,
    /// The messageExpression does not parse or type-check.
    #[error("messageExpression compilation failed: {0}")]
    MessageCompile(CompileError),
    /// The messageExpression is not a string.
    #[error("messageExpression must evaluate to a string")]
    NotString,
}

/// An estimated cost over its static limit, when the CRD is written.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{what} exceeds budget by factor of {} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)", factor(*.cost, *.limit))]
pub struct CostError {
    /// What exceeds it (`estimated rule cost`...).
    pub what: &'static str,
    /// The estimate.
    pub cost: u64,
    /// The limit.
    pub limit: u64,
}

/// The factor as the apiserver prints it: `more than 100x`, `1.234567x`, `12.3x`.
fn factor(cost: u64, limit: u64) -> String {
    let factor = cost as f64 / limit as f64;
    if factor > 100.0 {
        "more than 100x".to_string()
    } else if factor < 1.5 {
        format!("{factor:.6}x")
    } else {
        format!("{factor:.1}x")
    }
}

/// Why a rule gave no verdict on an object; the detail of the field error reported instead.
#[derive(Debug, Clone, PartialEq)]
pub enum RuleFailure {
    /// The rule has no program (see [`RuleError`]).
    Compile(RuleError),
    /// The rule stopped with an error.
    Eval {
        /// The error.
        error: EvalError,
        /// The rule's message, else its text (trimmed).
        rule: String,
    },
    /// The rule was not run because the validation's cost budget is spent.
    BudgetExhausted,
    /// The messageExpression was not run because the validation's cost budget is spent.
    MessageBudgetExhausted,
    /// The messageExpression exceeded the per-call cost limit.
    MessageCallLimit {
        /// The messageExpression, Go-quoted.
        quoted: String,
    },
    /// Schema errors of kinds that make rules meaningless were found: no rule ran.
    Blocked,
}

impl RuleFailure {
    /// Whether no further rule runs after this failure.
    pub fn stops_validation(&self) -> bool {
        match self {
            RuleFailure::Eval { error, .. } => *error == EvalError::CostLimitExceeded,
            RuleFailure::Compile(_) => false,
            _ => true,
        }
    }
}

impl fmt::Display for RuleFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const NO_FURTHER: &str = "no further validation rules will be run";
        match self {
            RuleFailure::Compile(e) => write!(f, "rule compile error: {e}"),
            RuleFailure::Eval { error: e @ EvalError::NoOverload, rule } => write!(
                f,
                "'{e}': call arguments did not match a supported operator, function or macro signature for rule: {rule}"
            ),
            RuleFailure::Eval { error: e @ EvalError::CostLimitExceeded, rule } => write!(
                f,
                "'{e}': {NO_FURTHER} due to call cost exceeds limit for rule: {rule}"
            ),
            RuleFailure::Eval { error, rule } => write!(f, "{error} evaluating rule: {rule}"),
            RuleFailure::BudgetExhausted => write!(
                f,
                "validation failed due to running out of cost budget, {NO_FURTHER}"
            ),
            RuleFailure::MessageBudgetExhausted => write!(
                f,
                "messageExpression evaluation failed due to running out of cost budget, {NO_FURTHER}"
            ),
            RuleFailure::MessageCallLimit { quoted } => write!(
                f,
                "{NO_FURTHER} due to call cost exceeds limit for messageExpression: {quoted}"
            ),
            RuleFailure::Blocked => write!(
                f,
                "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation"
            ),
        }
    }
}

impl std::error::Error for RuleFailure {}
