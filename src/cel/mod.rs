//! CEL validation rules (`x-kubernetes-validations`) of custom resources.
//!
//! The apiserver compiles every rule of a CRD version once, when the CRD is written, and
//! rejects the CRD with 422 when a rule does not compile, type-check, or fit the cost budget;
//! on every write of a custom resource it evaluates the rules at every schema node, `self` bound
//! to the value there (and `oldSelf` to the previous one for transition rules).
//!
//! Parsing (and macro expansion) is the `cel` crate's; type checking against the schema, cost
//! estimation and evaluation are ours, because the crate has no type checker, no cost tracking
//! and none of the Kubernetes library, and because evaluating over the stored JSON (instead of
//! converting the object per rule) keeps a rule at a few hundred nanoseconds. Behaviour and
//! messages follow `k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel` (compilation,
//! validation, ratcheting), `pkg/apis/apiextensions/validation` (the CRD-time checks) and cel-go.
//!
//! ```
//! use kubefake::cel::Rules;
//! use serde_json::json;
//! let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
//!     "x-kubernetes-validations": [{"rule": "self.replicas <= self.maxReplicas",
//!                                   "message": "replicas should be smaller than or equal to maxReplicas."}],
//!     "properties": {"replicas": {"type": "integer"}, "maxReplicas": {"type": "integer"}}}}});
//! let rules = Rules::compile(&schema, "spec.validation.openAPIV3Schema").unwrap();
//! let obj = json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
//!                  "metadata": {"name": "c"}, "spec": {"replicas": 20, "maxReplicas": 10}});
//! let errs = rules.validate(&obj, None, &[]);
//! assert_eq!(errs[0].field, "spec");
//! assert_eq!(errs[0].message, "Invalid value: replicas should be smaller than or equal to maxReplicas.");
//! ```

mod check;
mod cost;
mod decl;
mod error;
mod eval;
mod library;
mod macros;
mod types;
mod value;

#[cfg(test)]
mod tests;

use crate::schema::gofmt::go_quote;
use std::collections::HashMap;
use std::ops::ControlFlow;
use std::sync::Arc;

use cel::common::ast::{IdedExpr, SourceInfo};
use regex::Regex;
use serde_json::{Map, Value};

use crate::error::{field, StatusCause};
use check::{Checker, Info};
use decl::{decl_of, Decl, ListKind};
use error::{CompileError, CostError, EvalError, Issue, RuleError, RuleFailure};
use eval::Evaluator;
use types::Ty;
use value::{from_json, Val};

/// Largest estimated cost of one expression (`StaticEstimatedCostLimit`).
pub const STATIC_ESTIMATED_COST_LIMIT: u64 = 10_000_000;
/// Largest estimated cost of all the rules of a schema (`StaticEstimatedCRDCostLimit`).
pub const STATIC_ESTIMATED_CRD_COST_LIMIT: u64 = 100_000_000;
/// Run-time cost limit of one evaluation (`PerCallLimit`).
pub const PER_CALL_LIMIT: u64 = 1_000_000;
/// Run-time cost budget of all the rules for one object (`RuntimeCELCostBudget`).
pub const RUNTIME_COST_BUDGET: i64 = 10_000_000;
const MAX_MESSAGE_EXPRESSION_SIZE: usize = 5 * 1024;
const REASONS: [&str; 4] = [
    "FieldValueDuplicate",
    "FieldValueForbidden",
    "FieldValueInvalid",
    "FieldValueRequired",
];

/// One compiled expression: the AST, and the regexes its literals use, compiled once.
struct Program {
    expr: IdedExpr,
    regexes: HashMap<String, Regex>,
}

/// One compiled rule.
struct Rule {
    rule: String,
    message: String,
    reason: Option<String>,
    /// The normalized `fieldPath` (`foo.test.x`, `testMap[foo]`), empty when unset.
    field_path: String,
    optional_old_self: bool,
    uses_old_self: bool,
    /// The program, or the compile error to report at run time (rules under `allOf`).
    program: Result<Program, RuleError>,
    message_expression: Option<(String, Program)>,
}

/// The rules of one schema node and the nodes below it that have rules.
struct Node {
    rules: Vec<Rule>,
    decl: Option<Arc<Decl>>,
    schema_type: String,
    properties: Vec<(String, Node)>,
    additional: Option<Box<Node>>,
    items: Option<Box<Node>>,
    all_of: Vec<Node>,
    list: ListKind,
    map_type: Option<String>,
}

impl Node {
    fn is_empty(&self) -> bool {
        self.rules.is_empty()
            && self.properties.is_empty()
            && self.additional.is_none()
            && self.items.is_none()
            && self.all_of.is_empty()
    }
}

/// Every x-kubernetes-validations rule of one CRD version's schema, compiled once.
///
/// Built when the CRD is written (where the errors become the CRD's 422), shared read-only by
/// every request for that version (`Send + Sync`).
pub struct Rules {
    root: Option<Node>,
}

/// Renders `s` the way Go's `encoding/json` does (HTML characters escaped).
fn go_json_string(s: &str) -> String {
    serde_json::to_string(s)
        .unwrap_or_default()
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

/// A rule as `json.Marshal` renders the internal `apiextensions.ValidationRule`.
fn rule_json(r: &Map<String, Value>) -> String {
    let s = |k: &str| go_json_string(r.get(k).and_then(Value::as_str).unwrap_or(""));
    let reason = match r.get("reason").and_then(Value::as_str) {
        Some(x) => go_json_string(x),
        None => "null".into(),
    };
    let oos = match r.get("optionalOldSelf").and_then(Value::as_bool) {
        Some(b) => b.to_string(),
        None => "null".into(),
    };
    format!(
        "{{\"Rule\":{},\"Message\":{},\"MessageExpression\":{},\"Reason\":{},\"FieldPath\":{},\"OptionalOldSelf\":{}}}",
        s("rule"),
        s("message"),
        s("messageExpression"),
        reason,
        s("fieldPath"),
        oos
    )
}

fn invalid_raw(field: &str, rendered_value: &str, detail: &str) -> StatusCause {
    StatusCause {
        reason: "FieldValueInvalid".into(),
        message: format!("Invalid value: {rendered_value}: {detail}"),
        field: field.into(),
    }
}

/// (line, 0-based column) of an expression id.
fn position(info: &SourceInfo, src: &str, id: u64) -> (usize, usize) {
    let Some((start, _)) = info.offset_for(id) else {
        return (1, 0);
    };
    let start = start as usize;
    let mut line = 1;
    let mut line_start = 0;
    for (i, c) in src.chars().enumerate() {
        if i >= start {
            break;
        }
        if c == '\n' {
            line += 1;
            line_start = i + 1;
        }
    }
    (line, start.saturating_sub(line_start))
}

/// The outcome of compiling one expression.
struct Compiled {
    program: Program,
    info: Info,
    uses_old_self: bool,
}

/// Parses and type-checks one expression.
fn compile_expr(
    src: &str,
    self_ty: &Ty,
    optional_old_self: bool,
) -> Result<Compiled, CompileError> {
    let env = macros::env();
    let parsed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        env.parser().parse_with_source_info(src)
    }));
    let (expr, info) = match parsed {
        Ok(Ok(x)) => x,
        Ok(Err(errs)) => {
            let issues = errs
                .errors
                .iter()
                .map(|e| Issue {
                    line: e.pos.0.max(1) as usize,
                    column: (e.pos.1.max(1) - 1) as usize,
                    message: e.msg.clone(),
                })
                .collect();
            return Err(CompileError::new(src, issues));
        }
        Err(_) => {
            let issue = Issue {
                line: 1,
                column: 0,
                message: "Syntax error".into(),
            };
            return Err(CompileError::new(src, vec![issue]));
        }
    };
    let mut checker = Checker::new(self_ty.clone(), optional_old_self);
    let result = checker.check(&expr);
    if !checker.errors.is_empty() {
        let issues = checker
            .errors
            .iter()
            .map(|(id, e)| {
                let (line, column) = position(&info, src, *id);
                Issue {
                    line,
                    column,
                    message: e.to_string(),
                }
            })
            .collect();
        return Err(CompileError::new(src, issues));
    }
    let mut regexes = HashMap::new();
    for p in &checker.regexes {
        if let Ok(r) = library::compile_regex(p) {
            regexes.insert(p.clone(), r);
        }
    }
    Ok(Compiled {
        program: Program { expr, regexes },
        info: result,
        uses_old_self: checker.uses_old_self,
    })
}

/// cel-go's output-type check: `bool` for rules, `string` for message expressions (`dyn`
/// accepted, as our inference is weaker than cel-go's in places).
fn output_is(t: &Ty, want: &Ty) -> bool {
    t.is_dyn() || std::mem::discriminant(&t.norm()) == std::mem::discriminant(want)
}

/// A forbidden cause for an estimate over `limit`.
fn cost_error(field: &str, what: &'static str, cost: u64, limit: u64) -> StatusCause {
    field::forbidden(field, &CostError { what, cost, limit }.to_string())
}

/// What the CRD-time walk carries down the schema.
#[derive(Clone)]
struct Scope {
    path: String,
    /// Worst-case number of times this node occurs in an object (`None`: unbounded).
    cardinality: Option<u64>,
    /// The highest ancestor under which `oldSelf` cannot be correlated.
    uncorrelatable: Option<String>,
    resource_root: bool,
}

#[derive(Default)]
struct Errors {
    schema: Vec<StatusCause>,
    cel: Vec<StatusCause>,
    total_cost: u64,
    most_expensive: Vec<(String, u64)>,
}

impl Errors {
    fn observe(&mut self, path: String, cost: u64) {
        self.total_cost = self.total_cost.saturating_add(cost);
        if cost < STATIC_ESTIMATED_CRD_COST_LIMIT / 100 {
            return;
        }
        self.most_expensive.push((path, cost));
        self.most_expensive.sort_by_key(|e| std::cmp::Reverse(e.1));
        self.most_expensive.truncate(4);
    }
}

fn max_elements(m: &Map<String, Value>) -> Option<u64> {
    let n = |k: &str| m.get(k).and_then(Value::as_i64).map(|v| v.max(0) as u64);
    match m.get("type").and_then(Value::as_str) {
        Some("object") if m.contains_key("additionalProperties") => n("maxProperties"),
        Some("array") => n("maxItems"),
        _ => Some(1),
    }
}

fn has_newlines(s: &str) -> bool {
    s.contains('\n') || s.contains('\r')
}

/// Normalizes a rule's `fieldPath` against the schema (`ValidFieldPath`); `None` if invalid.
fn valid_field_path(path: &str, schema: &Value) -> Option<String> {
    let mut out = String::new();
    let mut node = schema;
    let b = path.as_bytes();
    let mut i = 0;
    let step = |name: String, out: &mut String, node: &mut &Value| -> Option<()> {
        let props = node.get("properties").and_then(Value::as_object);
        if let Some(p) = props {
            let child = p.get(&name)?;
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&name);
            *node = child;
            return Some(());
        }
        let ap = node.get("additionalProperties").filter(|a| a.is_object());
        match ap {
            Some(a) => {
                out.push('[');
                out.push_str(&name);
                out.push(']');
                *node = a;
                Some(())
            }
            _ => None,
        }
    };
    if path.is_empty() {
        return None;
    }
    while i < b.len() {
        match b[i] {
            b'.' => {
                i += 1;
                let start = i;
                while i < b.len() && !matches!(b[i], b'.' | b'[' | b']') {
                    i += 1;
                }
                if start == i {
                    return None;
                }
                step(path[start..i].to_string(), &mut out, &mut node)?;
            }
            b'[' => {
                i += 1;
                if i >= b.len() || b[i] != b'\'' {
                    return None;
                }
                i += 1;
                let mut s = String::new();
                loop {
                    if i >= b.len() {
                        return None;
                    }
                    match b[i] {
                        b'\\' if i + 1 < b.len() => {
                            s.push(match b[i + 1] {
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
                            });
                            i += 2;
                        }
                        b'\'' => {
                            i += 1;
                            break;
                        }
                        _ => {
                            let ch = path[i..].chars().next()?;
                            s.push(ch);
                            i += ch.len_utf8();
                        }
                    }
                }
                if i >= b.len() || b[i] != b']' {
                    return None;
                }
                i += 1;
                step(s, &mut out, &mut node)?;
            }
            _ => return None,
        }
    }
    Some(out)
}

fn compile_node(schema: &Value, scope: &Scope, errs: &mut Errors, depth: usize) -> Option<Node> {
    let m = schema.as_object()?;
    if depth > 100 {
        return None;
    }
    let schema_errors_before = errs.schema.len();
    let child_scope =
        |suffix: String, child: &Value, uncorrelatable: Option<String>, root: bool| {
            let cardinality = match (scope.cardinality, max_elements(m)) {
                (Some(c), Some(n)) => Some(c.saturating_mul(n)),
                _ => None,
            };
            let _ = child;
            Scope {
                path: format!("{}{suffix}", scope.path),
                cardinality,
                uncorrelatable: scope.uncorrelatable.clone().or(uncorrelatable),
                resource_root: root,
            }
        };
    let embedded = |v: &Value| {
        v.get("x-kubernetes-embedded-resource")
            .and_then(Value::as_bool)
            == Some(true)
    };
    let mut node = Node {
        rules: Vec::new(),
        decl: None,
        schema_type: m
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
        properties: Vec::new(),
        additional: None,
        items: None,
        all_of: Vec::new(),
        list: match m.get("x-kubernetes-list-type").and_then(Value::as_str) {
            Some("set") => ListKind::Set,
            Some("map") => ListKind::Map(
                m.get("x-kubernetes-list-map-keys")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(|k| k.as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default(),
            ),
            _ => ListKind::Atomic,
        },
        map_type: m
            .get("x-kubernetes-map-type")
            .and_then(Value::as_str)
            .map(str::to_string),
    };
    if let Some(ap @ Value::Object(_)) = m.get("additionalProperties") {
        let s = child_scope(".additionalProperties".into(), ap, None, embedded(ap));
        node.additional = compile_node(ap, &s, errs, depth + 1).map(Box::new);
    }
    if let Some(props) = m.get("properties").and_then(Value::as_object) {
        let map_correlatable =
            matches!(node.map_type.as_deref(), None | Some("granular" | "atomic"));
        for (k, p) in props {
            let unc = (!map_correlatable).then(|| scope.path.clone());
            let s = child_scope(format!(".properties[{k}]"), p, unc, embedded(p));
            if let Some(n) = compile_node(p, &s, errs, depth + 1) {
                node.properties.push((k.clone(), n));
            }
        }
    }
    if let Some(items @ Value::Object(_)) = m.get("items") {
        let unc = (!matches!(node.list, ListKind::Map(_))).then(|| scope.path.clone());
        let s = child_scope(".items".into(), items, unc, embedded(items));
        node.items = compile_node(items, &s, errs, depth + 1).map(Box::new);
    }
    if let Some(all_of) = m.get("allOf").and_then(Value::as_array) {
        for a in all_of {
            // Rules under allOf are not compiled when the CRD is written (the apiserver has no
            // type information there), only for validation.
            let mut ignored = Errors::default();
            let merged = merge_for_all_of(schema, a);
            if let Some(n) = compile_node(&merged, scope, &mut ignored, depth + 1) {
                let rules_only = Node {
                    properties: Vec::new(),
                    additional: None,
                    items: None,
                    all_of: Vec::new(),
                    ..n
                };
                if !rules_only.rules.is_empty() {
                    node.all_of.push(rules_only);
                }
            }
        }
    }
    let Some(raw_rules) = m.get("x-kubernetes-validations").and_then(Value::as_array) else {
        return (!node.is_empty()).then_some(node);
    };
    let decl = decl_of(schema, scope.resource_root, "selfType0");
    node.decl = decl.clone();
    let base = format!("{}.x-kubernetes-validations", scope.path);
    // Field-level checks of each rule.
    for (i, r) in raw_rules.iter().enumerate() {
        let empty = Map::new();
        let r = r.as_object().unwrap_or(&empty);
        let gs = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or("");
        let (rule, message, msg_expr) = (gs("rule"), gs("message"), gs("messageExpression"));
        let p = |f: &str| format!("{base}[{i}].{f}");
        if rule.trim().is_empty() {
            errs.schema
                .push(field::required(&p("rule"), "rule is not specified"));
        } else if !message.is_empty() && message.trim().is_empty() {
            errs.schema.push(field::invalid(
                &p("message"),
                &Value::from(message),
                "must be non-empty if specified",
            ));
        } else if has_newlines(message.trim()) {
            errs.schema.push(field::invalid(
                &p("message"),
                &Value::from(message),
                "must not contain line breaks",
            ));
        } else if has_newlines(rule.trim()) && message.trim().is_empty() {
            errs.schema.push(field::required(
                &p("message"),
                "message must be specified if rule contains line breaks",
            ));
        }
        if !msg_expr.is_empty() && msg_expr.trim().is_empty() {
            errs.schema.push(field::required(
                &p("messageExpression"),
                "messageExpression must be non-empty if specified",
            ));
        }
        if let Some(reason) = r.get("reason").and_then(Value::as_str) {
            if !REASONS.contains(&reason) {
                errs.schema.push(field::not_supported(
                    &p("reason"),
                    &Value::from(reason),
                    &REASONS,
                ));
            }
        }
        let fp = gs("fieldPath");
        if !fp.is_empty() && fp.trim().is_empty() {
            errs.schema.push(field::invalid(
                &p("fieldPath"),
                &Value::from(fp),
                "must be non-empty if specified",
            ));
        }
        if has_newlines(fp) {
            errs.schema.push(field::invalid(
                &p("fieldPath"),
                &Value::from(fp),
                "must not contain line breaks",
            ));
        }
        if !fp.is_empty() && valid_field_path(fp, schema).is_none() {
            errs.schema.push(field::invalid(
                &p("fieldPath"),
                &Value::from(fp),
                "must be a valid path",
            ));
        }
    }
    let compile_errors_allowed = errs.schema.len() == schema_errors_before;
    let Some(decl) = decl else {
        if compile_errors_allowed {
            errs.cel.push(StatusCause {
                reason: "InternalError".into(),
                message: "Internal error: internal error: failed to construct type information for x-kubernetes-validations rules: unable to convert structural schema to CEL declarations".into(),
                field: base,
            });
        }
        return (!node.is_empty()).then_some(node);
    };
    let self_ty = Ty::Schema(decl.clone());
    let cardinality = scope
        .cardinality
        .unwrap_or_else(|| (decl::MAX_REQUEST_SIZE / (decl.min_size + 1)) as u64);
    for (i, r) in raw_rules.iter().enumerate() {
        let empty = Map::new();
        let r = r.as_object().unwrap_or(&empty);
        let gs = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        let p = |f: &str| format!("{base}[{i}].{f}");
        let rule_src = gs("rule");
        let optional_old_self = r.get("optionalOldSelf").and_then(Value::as_bool) == Some(true);
        let mut compiled_rule = Rule {
            rule: rule_src.clone(),
            message: gs("message"),
            reason: r.get("reason").and_then(Value::as_str).map(str::to_string),
            field_path: valid_field_path(&gs("fieldPath"), schema).unwrap_or_default(),
            optional_old_self,
            uses_old_self: false,
            program: Err(RuleError::NotBool),
            message_expression: None,
        };
        if rule_src.trim().is_empty() {
            continue;
        }
        let compiled = compile_expr(&rule_src, &self_ty, optional_old_self);
        let (max_cost, rule_error) = match &compiled {
            Ok(c) if !output_is(&c.info.ty, &Ty::Bool) => (0, Some(RuleError::NotBool)),
            Ok(c) => (c.info.cost.max, None),
            Err(e) => (0, Some(RuleError::Compile(e.clone()))),
        };
        let cost = if max_cost == 0 {
            0
        } else {
            max_cost.saturating_mul(cardinality)
        };
        if compile_errors_allowed {
            if cost > STATIC_ESTIMATED_COST_LIMIT {
                errs.cel.push(cost_error(
                    &p("rule"),
                    "estimated rule cost",
                    cost,
                    STATIC_ESTIMATED_COST_LIMIT,
                ));
            }
            errs.observe(p("rule"), cost);
            if let Some(e) = &rule_error {
                errs.cel
                    .push(invalid_raw(&p("rule"), &rule_json(r), &e.to_string()));
            }
        }
        let compiled = match (compiled, rule_error) {
            (Ok(c), None) => c,
            (_, e) => {
                compiled_rule.program = Err(e.unwrap_or(RuleError::NotBool));
                node.rules.push(compiled_rule);
                continue;
            }
        };
        compiled_rule.uses_old_self = compiled.uses_old_self;
        let msg_expr = gs("messageExpression");
        if !msg_expr.is_empty() {
            match compile_expr(&msg_expr, &self_ty, optional_old_self) {
                Err(e) => {
                    if compile_errors_allowed {
                        errs.cel.push(invalid_raw(
                            &p("messageExpression"),
                            &rule_json(r),
                            &RuleError::MessageCompile(e).to_string(),
                        ));
                    }
                }
                Ok(mc) if !output_is(&mc.info.ty, &Ty::String) => {
                    if compile_errors_allowed {
                        errs.cel.push(invalid_raw(
                            &p("messageExpression"),
                            &rule_json(r),
                            &RuleError::NotString.to_string(),
                        ));
                    }
                }
                Ok(mc) => {
                    let mcost = mc.info.cost.max;
                    if compile_errors_allowed {
                        if mcost > STATIC_ESTIMATED_COST_LIMIT {
                            errs.cel.push(cost_error(
                                &p("messageExpression"),
                                "estimated messageExpression cost",
                                mcost,
                                STATIC_ESTIMATED_COST_LIMIT,
                            ));
                        }
                        errs.observe(p("messageExpression"), mcost);
                    }
                    compiled_rule.message_expression = Some((msg_expr.clone(), mc.program));
                }
            }
        }
        if compile_errors_allowed {
            if compiled.uses_old_self {
                if let Some(unc) = &scope.uncorrelatable {
                    errs.cel.push(field::invalid(
                        &p("rule"),
                        &Value::from(rule_src.as_str()),
                        &format!("oldSelf cannot be used on the uncorrelatable portion of the schema within {unc}"),
                    ));
                }
            } else if let Some(b) = r.get("optionalOldSelf").and_then(Value::as_bool) {
                errs.cel.push(field::invalid(
                    &p("optionalOldSelf"),
                    &Value::Bool(b),
                    "may not be set if oldSelf is not used in rule",
                ));
            }
        }
        compiled_rule.program = Ok(compiled.program);
        node.rules.push(compiled_rule);
    }
    (!node.is_empty()).then_some(node)
}

/// The schema an `allOf` branch's rules see: the node's own type with the branch's rules.
fn merge_for_all_of(node: &Value, branch: &Value) -> Value {
    let mut merged = node.clone();
    if let Value::Object(m) = &mut merged {
        m.remove("allOf");
        match branch.get("x-kubernetes-validations") {
            Some(v) => {
                m.insert("x-kubernetes-validations".into(), v.clone());
            }
            None => {
                m.remove("x-kubernetes-validations");
            }
        }
    }
    merged
}

impl Rules {
    /// Compiles and type-checks every rule and messageExpression in `openapi_v3_schema`; errors are the
    /// apiserver's 422 causes reported under `path` (e.g. "spec.validation.openAPIV3Schema" ->
    /// "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule").
    /// Includes: syntax errors, undefined fields ("undefined field 'nonExistingField'"), has() misuse,
    /// type errors ("no matching overload for '_==_' applied to '(int, bool)'"), transition rules on
    /// non-correlatable nodes, fieldPath validity, reason values, and the per-rule and per-CRD cost budgets
    /// with the real messages.
    pub fn compile(openapi_v3_schema: &Value, path: &str) -> Result<Rules, Vec<StatusCause>> {
        let mut errs = Errors::default();
        let scope = Scope {
            path: path.to_string(),
            cardinality: Some(1),
            uncorrelatable: None,
            resource_root: true,
        };
        let root = compile_node(openapi_v3_schema, &scope, &mut errs, 0);
        let mut all = errs.schema;
        all.extend(errs.cel);
        if errs.total_cost > STATIC_ESTIMATED_CRD_COST_LIMIT {
            for (p, _) in &errs.most_expensive {
                all.push(field::forbidden(
                    p,
                    "contributed to estimated rule cost total exceeding cost limit for entire OpenAPIv3 schema",
                ));
            }
            all.push(cost_error(
                path,
                "x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema",
                errs.total_cost,
                STATIC_ESTIMATED_CRD_COST_LIMIT,
            ));
        }
        if !all.is_empty() {
            return Err(all);
        }
        Ok(Rules { root })
    }

    /// Whether there is any rule (callers skip evaluation otherwise).
    pub fn is_empty(&self) -> bool {
        self.root.is_none()
    }

    /// Evaluates every rule against a custom resource (`old` on updates) and returns the field errors
    /// (message / messageExpression / reason / fieldPath applied, default message `failed rule: <rule>`).
    /// `existing` are the errors schema validation already found: when one of them is of a kind the
    /// apiserver treats as blocking (required, not supported, too long, too many, type invalid), no
    /// rule runs and one error says so, as the apiserver does. Transition rules, optionalOldSelf and
    /// ratcheting as documented. A runaway rule is stopped by the runtime cost budget with the real
    /// error; never hangs.
    pub fn validate(
        &self,
        obj: &Value,
        old: Option<&Value>,
        existing: &[StatusCause],
    ) -> Vec<StatusCause> {
        let Some(root) = &self.root else {
            return Vec::new();
        };
        let blocking = existing.iter().any(|c| {
            matches!(
                c.reason.as_str(),
                "FieldValueNotSupported"
                    | "FieldValueRequired"
                    | "FieldValueTooLong"
                    | "FieldValueTooMany"
                    | "FieldValueTypeInvalid"
            )
        });
        if blocking {
            return vec![invalid_raw(
                "<nil>",
                "null",
                &RuleFailure::Blocked.to_string(),
            )];
        }
        let mut out = Vec::new();
        let ratchet = old.is_some_and(|o| o == obj);
        let mut budget = RUNTIME_COST_BUDGET;
        validate_node(root, None, obj, old, ratchet, true, &mut budget, &mut out);
        out
    }
}

fn child_path(p: &Option<String>, name: &str) -> Option<String> {
    Some(match p {
        None => name.to_string(),
        Some(p) => format!("{p}.{name}"),
    })
}

fn key_path(p: &Option<String>, key: &str) -> Option<String> {
    Some(format!("{}[{key}]", p.as_deref().unwrap_or("<nil>")))
}

fn path_str(p: &Option<String>) -> String {
    p.clone().unwrap_or_else(|| "<nil>".into())
}

#[allow(clippy::too_many_arguments)]
fn validate_node(
    node: &Node,
    path: Option<String>,
    obj: &Value,
    old: Option<&Value>,
    ratchet: bool,
    is_root: bool,
    budget: &mut i64,
    out: &mut Vec<StatusCause>,
) {
    if obj.is_null() {
        return;
    }
    let old = old.filter(|o| !o.is_null());
    if !node.rules.is_empty() && !validate_rules(node, &path, obj, old, ratchet, budget, out) {
        return;
    }
    for a in &node.all_of {
        if !validate_rules(a, &path, obj, old, false, budget, out) {
            return;
        }
    }
    match obj {
        Value::Object(m) => {
            let correlatable =
                matches!(node.map_type.as_deref(), None | Some("granular" | "atomic"));
            let old_m = old.and_then(Value::as_object).filter(|_| correlatable);
            for (k, v) in m {
                let child = node
                    .properties
                    .iter()
                    .find(|(n, _)| n == k)
                    .map(|(_, n)| (n, child_path(&path, k)))
                    .or_else(|| node.additional.as_deref().map(|n| (n, key_path(&path, k))));
                let Some((child, cpath)) = child else {
                    continue;
                };
                let ov = old_m.and_then(|o| o.get(k));
                let r = if is_root && (k == "apiVersion" || k == "kind") {
                    false
                } else {
                    match ov {
                        Some(o) => o == v,
                        None => false,
                    }
                };
                validate_node(child, cpath, v, ov, r, false, budget, out);
                if *budget < 0 {
                    return;
                }
            }
        }
        Value::Array(items) => {
            let Some(item_node) = node.items.as_deref() else {
                return;
            };
            let old_items = old.and_then(Value::as_array);
            for (i, v) in items.iter().enumerate() {
                let (ov, r) = match (&node.list, old_items) {
                    (ListKind::Map(keys), Some(olds)) => {
                        let key = |x: &Value| -> Vec<Value> {
                            keys.iter()
                                .map(|k| x.get(k).cloned().unwrap_or(Value::Null))
                                .collect()
                        };
                        let kv = key(v);
                        let ov = olds.iter().find(|o| key(o) == kv);
                        (ov, ov.is_some_and(|o| o == v))
                    }
                    // Items of sets and atomic lists do not correlate: they ratchet with the list.
                    _ => (None, ratchet),
                };
                let ipath = Some(format!("{}[{i}]", path_str(&path)));
                validate_node(item_node, ipath, v, ov, r, false, budget, out);
                if *budget < 0 {
                    return;
                }
            }
        }
        _ => {}
    }
}

fn rule_error_string(r: &Rule) -> String {
    if !r.message.is_empty() {
        r.message.trim().to_string()
    } else {
        r.rule.trim().to_string()
    }
}

/// The value one node's rules validate, with what their errors report.
struct Subject<'a> {
    node: &'a Node,
    path: &'a Option<String>,
    /// The node's path as errors report it (`<nil>` at the root).
    field: String,
    /// The node's schema type, JSON-quoted, as errors about the rules (not the value) show it.
    type_value: String,
    obj: &'a Value,
    self_val: Val<'a>,
    old_val: Option<Val<'a>>,
    ratchet: bool,
}

impl Subject<'_> {
    /// A failure of the rules of this node, reported at `field`.
    fn failure(&self, field: &str, f: RuleFailure) -> StatusCause {
        invalid_raw(field, &self.type_value, &f.to_string())
    }

    /// `oldSelf` for a rule: an optional when the rule asks for one, else the old value or null.
    fn old_binding(&self, r: &Rule) -> Val<'_> {
        if r.optional_old_self {
            Val::Opt(self.old_val.clone().map(std::rc::Rc::new))
        } else {
            self.old_val.clone().unwrap_or(Val::Null)
        }
    }

    /// Runs one program with `self` and `oldSelf` bound: its result and the cost it spent.
    fn run<'p>(&'p self, r: &Rule, program: &'p Program) -> (Result<Val<'p>, EvalError>, u64) {
        let vars = vec![
            ("self", self.self_val.clone()),
            ("oldSelf", self.old_binding(r)),
        ];
        let mut ev = Evaluator::new(vars, PER_CALL_LIMIT, &program.regexes);
        let result = ev.eval(&program.expr);
        (result, ev.cost)
    }
}

/// Runs the rules of one node; `false` when the budget is exhausted (no further rules run).
fn validate_rules(
    node: &Node,
    path: &Option<String>,
    obj: &Value,
    old: Option<&Value>,
    ratchet: bool,
    budget: &mut i64,
    out: &mut Vec<StatusCause>,
) -> bool {
    let field = path_str(path);
    let type_value = go_json_string(&node.schema_type);
    if *budget <= 0 {
        out.push(invalid_raw(
            &field,
            &type_value,
            &RuleFailure::BudgetExhausted.to_string(),
        ));
        *budget = -1;
        return false;
    }
    let Some(decl) = node.decl.as_deref() else {
        return true;
    };
    let subject = Subject {
        node,
        path,
        field,
        type_value,
        obj,
        self_val: from_json(obj, decl),
        old_val: old.map(|o| from_json(o, decl)),
        ratchet,
    };
    node.rules
        .iter()
        .all(|r| validate_rule(&subject, r, budget, out).is_continue())
}

/// Runs one rule (and its messageExpression when it fails); `Break` when no further rule may run.
fn validate_rule(
    s: &Subject<'_>,
    r: &Rule,
    budget: &mut i64,
    out: &mut Vec<StatusCause>,
) -> ControlFlow<()> {
    let program = match &r.program {
        Ok(p) => p,
        Err(e) => {
            out.push(s.failure(&s.field, RuleFailure::Compile(e.clone())));
            return ControlFlow::Continue(());
        }
    };
    if r.uses_old_self && s.old_val.is_none() && !r.optional_old_self {
        return ControlFlow::Continue(());
    }
    let (result, cost) = s.run(r, program);
    if cost as i64 > *budget {
        out.push(s.failure(&s.field, RuleFailure::BudgetExhausted));
        *budget = -1;
        return ControlFlow::Break(());
    }
    *budget -= cost as i64;
    match result {
        Ok(Val::Bool(true)) => ControlFlow::Continue(()),
        Ok(_) => report_violation(s, r, budget, out),
        Err(error) => {
            let failure = RuleFailure::Eval {
                error,
                rule: rule_error_string(r),
            };
            let stop = failure.stops_validation();
            out.push(s.failure(&s.field, failure));
            if stop {
                *budget = -1;
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(())
        }
    }
}

/// Reports a rule that evaluated to false, with its message, reason and fieldPath.
fn report_violation(
    s: &Subject<'_>,
    r: &Rule,
    budget: &mut i64,
    out: &mut Vec<StatusCause>,
) -> ControlFlow<()> {
    let cur = if r.field_path.is_empty() {
        s.field.clone()
    } else if s.path.is_none() {
        r.field_path.clone()
    } else {
        format!("{}.{}", s.field, r.field_path)
    };
    // Transition rules always report; others not on values unchanged from the old object.
    let report = r.uses_old_self || !s.ratchet;
    let mut detail = None;
    if let Some((src, mp)) = &r.message_expression {
        let (res, cost) = s.run(r, mp);
        let stop = if cost as i64 > *budget {
            Some(RuleFailure::MessageBudgetExhausted)
        } else if let Err(EvalError::CostLimitExceeded) = res {
            Some(RuleFailure::MessageCallLimit {
                quoted: go_quote(src),
            })
        } else {
            None
        };
        if let Some(f) = stop {
            if report {
                out.push(s.failure(&cur, f));
            }
            *budget = -1;
            return ControlFlow::Break(());
        }
        *budget -= cost as i64;
        detail = res.ok().and_then(|v| message_of(&v));
    }
    if report {
        let detail = detail.unwrap_or_else(|| {
            if r.message.is_empty() {
                format!("failed rule: {}", rule_error_string(r))
            } else {
                r.message.trim().to_string()
            }
        });
        out.push(violation_cause(s, r, cur, &detail));
    }
    ControlFlow::Continue(())
}

/// The message a messageExpression result gives: a non-empty single line, not too long.
fn message_of(v: &Val<'_>) -> Option<String> {
    let t = v.as_str()?.trim();
    let ok = !t.is_empty() && t.len() <= MAX_MESSAGE_EXPRESSION_SIZE && !t.contains('\n');
    ok.then(|| t.to_string())
}

/// The field error of a violated rule, of the rule's `reason`.
fn violation_cause(s: &Subject<'_>, r: &Rule, cur: String, detail: &str) -> StatusCause {
    // Current apiservers omit the value of objects and arrays (`field.OmitValueType`).
    let omit = matches!(s.node.schema_type.as_str(), "object" | "array");
    let rendered = (!omit).then(|| field::go_value(s.obj));
    match r.reason.as_deref() {
        Some("FieldValueForbidden") => field::forbidden(&cur, detail),
        Some("FieldValueRequired") => field::required(&cur, detail),
        Some("FieldValueDuplicate") => StatusCause {
            reason: "FieldValueDuplicate".into(),
            message: match &rendered {
                Some(v) => format!("Duplicate value: {v}"),
                None => "Duplicate value".into(),
            },
            field: cur,
        },
        _ => StatusCause {
            reason: "FieldValueInvalid".into(),
            message: match &rendered {
                Some(v) => format!("Invalid value: {v}: {detail}"),
                None => format!("Invalid value: {detail}"),
            },
            field: cur,
        },
    }
}
