//! Compiling the rules of a schema, when the CRD is written: a walk over the compiled
//! structural schema that checks every `x-kubernetes-validations` entry's fields, parses and
//! type-checks its rule and messageExpression against the node's CEL type, and estimates their
//! cost times the number of times the node may occur; the errors are the apiserver's 422 causes.

use std::collections::HashMap;

use cel::common::ast::SourceInfo;
use serde_json::Value;

use super::check::{Checker, Info};
use super::decl::{decl_of, list_kind, ListKind, MAX_REQUEST_SIZE};
use super::error::{CompileError, CostError, Issue, RuleError};
use super::field_path::valid_field_path;
use super::types::Ty;
use super::{
    go_json_string, invalid_raw, library, macros, Program, Rule, RuleNode,
    STATIC_ESTIMATED_COST_LIMIT, STATIC_ESTIMATED_CRD_COST_LIMIT,
};
use crate::error::{field, StatusCause};
use crate::schema::structural::ValidationRule;
use crate::schema::Node as SchemaNode;

/// The `reason`s a rule may have.
const REASONS: [&str; 4] = [
    "FieldValueDuplicate",
    "FieldValueForbidden",
    "FieldValueInvalid",
    "FieldValueRequired",
];

/// Schemas nested deeper than this have no rules compiled.
const MAX_DEPTH: usize = 100;

/// Compiles every rule under `root`; the errors are reported under `path`.
pub(super) fn compile_schema(
    root: &SchemaNode,
    path: &str,
) -> Result<Option<RuleNode>, Vec<StatusCause>> {
    let mut errs = Errors::default();
    let scope = Scope {
        path: path.to_string(),
        cardinality: Some(1),
        uncorrelatable: None,
        resource_root: true,
    };
    let root = compile_node(root, &scope, &mut errs, 0);
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
    Ok(root)
}

/// What the walk carries down the schema.
#[derive(Clone)]
struct Scope {
    path: String,
    /// Worst-case number of times this node occurs in an object (`None`: unbounded).
    cardinality: Option<u64>,
    /// The highest ancestor under which `oldSelf` cannot be correlated.
    uncorrelatable: Option<String>,
    resource_root: bool,
}

impl Scope {
    /// The scope of a child of `parent` (at `suffix`, below this scope).
    fn child(
        &self,
        parent: &SchemaNode,
        suffix: &str,
        uncorrelatable: Option<String>,
        child: &SchemaNode,
    ) -> Scope {
        let cardinality = match (self.cardinality, max_elements(parent)) {
            (Some(c), Some(n)) => Some(c.saturating_mul(n)),
            _ => None,
        };
        Scope {
            path: format!("{}{suffix}", self.path),
            cardinality,
            uncorrelatable: self.uncorrelatable.clone().or(uncorrelatable),
            resource_root: child.embedded_resource,
        }
    }
}

/// The errors found, in the order the apiserver reports them (field errors of the rules first,
/// then compilation and cost errors), and the cost total of the schema.
#[derive(Default)]
struct Errors {
    schema: Vec<StatusCause>,
    cel: Vec<StatusCause>,
    total_cost: u64,
    most_expensive: Vec<(String, u64)>,
}

impl Errors {
    /// Adds an expression's cost to the total (the most expensive are named if it is too high).
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

/// How many elements a node's children may have: its `maxProperties` (maps) or `maxItems`
/// (lists); `None` when unbounded.
fn max_elements(s: &SchemaNode) -> Option<u64> {
    let n = |v: Option<i64>| v.map(|v| v.max(0) as u64);
    match s.ty.as_str() {
        "object" if s.additional.is_some() => n(s.max_properties),
        "array" => n(s.max_items),
        _ => Some(1),
    }
}

/// The node of the rule tree for a schema node, without rules or children yet.
fn skeleton(s: &SchemaNode) -> RuleNode {
    RuleNode {
        rules: Vec::new(),
        decl: None,
        schema_type: s.ty.clone(),
        properties: Vec::new(),
        additional: None,
        items: None,
        all_of: Vec::new(),
        list: list_kind(s),
        map_type: s.map_type.clone(),
    }
}

fn compile_node(
    s: &SchemaNode,
    scope: &Scope,
    errs: &mut Errors,
    depth: usize,
) -> Option<RuleNode> {
    if depth > MAX_DEPTH {
        return None;
    }
    let schema_errors_before = errs.schema.len();
    let mut node = skeleton(s);
    compile_children(s, scope, errs, depth, &mut node);
    compile_all_of(s, scope, depth, &mut node);
    if let Some(rules) = &s.validations {
        compile_rules(s, rules, scope, errs, schema_errors_before, &mut node);
    }
    (!node.is_empty()).then_some(node)
}

/// The rules below a node: `additionalProperties`, `properties`, `items`. `oldSelf` cannot be
/// correlated below a `map` that is not `granular`/`atomic` or a list that is not a `map`.
fn compile_children(
    s: &SchemaNode,
    scope: &Scope,
    errs: &mut Errors,
    depth: usize,
    node: &mut RuleNode,
) {
    if let Some(values) = s.additional_schema() {
        let sc = scope.child(s, ".additionalProperties", None, values);
        node.additional = compile_node(values, &sc, errs, depth + 1).map(Box::new);
    }
    let map_correlatable = matches!(node.map_type.as_deref(), None | Some("granular" | "atomic"));
    for (k, p) in &s.properties {
        let unc = (!map_correlatable).then(|| scope.path.clone());
        let sc = scope.child(s, &format!(".properties[{k}]"), unc, p);
        if let Some(n) = compile_node(p, &sc, errs, depth + 1) {
            node.properties.push((k.clone(), n));
        }
    }
    if let Some(items) = s.items.as_deref() {
        let unc = (!matches!(node.list, ListKind::Map(_))).then(|| scope.path.clone());
        let sc = scope.child(s, ".items", unc, items);
        node.items = compile_node(items, &sc, errs, depth + 1).map(Box::new);
    }
}

/// The rules of `allOf` branches, against the node's own type. The apiserver does not compile
/// them when the CRD is written (it has no type information there), so their errors are not
/// reported then, only when an object is validated.
fn compile_all_of(s: &SchemaNode, scope: &Scope, depth: usize, node: &mut RuleNode) {
    if depth + 1 > MAX_DEPTH {
        return;
    }
    for branch in &s.all_of {
        let Some(rules) = &branch.validations else {
            continue;
        };
        let mut ignored = Errors::default();
        let mut rules_only = skeleton(s);
        compile_rules(s, rules, scope, &mut ignored, 0, &mut rules_only);
        if !rules_only.rules.is_empty() {
            node.all_of.push(rules_only);
        }
    }
}

/// What compiling the rules of one node needs.
struct RulesScope<'a> {
    scope: &'a Scope,
    self_ty: Ty,
    /// How many times the node may occur: what each rule's cost is multiplied by.
    cardinality: u64,
    /// Whether compilation errors are reported: not when the rules' own fields are invalid.
    report: bool,
}

/// Checks and compiles the rules of one node into `node.rules`.
fn compile_rules(
    s: &SchemaNode,
    rules: &[ValidationRule],
    scope: &Scope,
    errs: &mut Errors,
    schema_errors_before: usize,
    node: &mut RuleNode,
) {
    let decl = decl_of(s, scope.resource_root, "selfType0");
    node.decl = decl.clone();
    let base = format!("{}.x-kubernetes-validations", scope.path);
    for (i, r) in rules.iter().enumerate() {
        check_rule_fields(s, r, &format!("{base}[{i}]"), errs);
    }
    let report = errs.schema.len() == schema_errors_before;
    let Some(decl) = decl else {
        if report {
            errs.cel.push(StatusCause {
                reason: "InternalError".into(),
                message: "Internal error: internal error: failed to construct type information for x-kubernetes-validations rules: unable to convert structural schema to CEL declarations".into(),
                field: base,
            });
        }
        return;
    };
    let cx = RulesScope {
        scope,
        cardinality: scope
            .cardinality
            .unwrap_or_else(|| (MAX_REQUEST_SIZE / (decl.min_size + 1)) as u64),
        self_ty: Ty::Schema(decl),
        report,
    };
    for (i, r) in rules.iter().enumerate() {
        if let Some(rule) = compile_rule(s, r, &format!("{base}[{i}]"), &cx, errs) {
            node.rules.push(rule);
        }
    }
}

fn has_newlines(s: &str) -> bool {
    s.contains('\n') || s.contains('\r')
}

/// The checks of a rule's fields (`ValidateCustomResourceDefinitionOpenAPISchema`), reported
/// under `at` (`...x-kubernetes-validations[0]`).
fn check_rule_fields(s: &SchemaNode, r: &ValidationRule, at: &str, errs: &mut Errors) {
    let p = |f: &str| format!("{at}.{f}");
    let (rule, message) = (r.rule.as_str(), r.message.as_str());
    let schema = &mut errs.schema;
    if rule.trim().is_empty() {
        schema.push(field::required(&p("rule"), "rule is not specified"));
    } else if !message.is_empty() && message.trim().is_empty() {
        schema.push(field::invalid(
            &p("message"),
            &Value::from(message),
            "must be non-empty if specified",
        ));
    } else if has_newlines(message.trim()) {
        schema.push(field::invalid(
            &p("message"),
            &Value::from(message),
            "must not contain line breaks",
        ));
    } else if has_newlines(rule.trim()) && message.trim().is_empty() {
        schema.push(field::required(
            &p("message"),
            "message must be specified if rule contains line breaks",
        ));
    }
    let msg_expr = &r.message_expression;
    if !msg_expr.is_empty() && msg_expr.trim().is_empty() {
        schema.push(field::required(
            &p("messageExpression"),
            "messageExpression must be non-empty if specified",
        ));
    }
    if let Some(reason) = r.reason.as_deref().filter(|x| !REASONS.contains(x)) {
        schema.push(field::not_supported(
            &p("reason"),
            &Value::from(reason),
            &REASONS,
        ));
    }
    check_field_path(s, &r.field_path, &p("fieldPath"), schema);
}

fn check_field_path(s: &SchemaNode, fp: &str, at: &str, schema: &mut Vec<StatusCause>) {
    let invalid = |detail: &str| field::invalid(at, &Value::from(fp), detail);
    if !fp.is_empty() && fp.trim().is_empty() {
        schema.push(invalid("must be non-empty if specified"));
    }
    if has_newlines(fp) {
        schema.push(invalid("must not contain line breaks"));
    }
    if !fp.is_empty() && valid_field_path(fp, s).is_none() {
        schema.push(invalid("must be a valid path"));
    }
}

/// Compiles one rule (`None` when it has no rule text); its errors go to `errs` when reported,
/// and into the rule itself, for rules under `allOf`.
fn compile_rule(
    s: &SchemaNode,
    r: &ValidationRule,
    at: &str,
    cx: &RulesScope<'_>,
    errs: &mut Errors,
) -> Option<Rule> {
    if r.rule.trim().is_empty() {
        return None;
    }
    let p = |f: &str| format!("{at}.{f}");
    let optional_old_self = r.optional_old_self == Some(true);
    let compiled = match compile_expr(&r.rule, &cx.self_ty, optional_old_self) {
        Ok(c) if !output_is(&c.info.ty, &Ty::Bool) => Err(RuleError::NotBool),
        Ok(c) => Ok(c),
        Err(e) => Err(RuleError::Compile(e)),
    };
    let max_cost = compiled.as_ref().map_or(0, |c| c.info.cost.max);
    let cost = if max_cost == 0 {
        0
    } else {
        max_cost.saturating_mul(cx.cardinality)
    };
    if cx.report {
        if cost > STATIC_ESTIMATED_COST_LIMIT {
            let limit = STATIC_ESTIMATED_COST_LIMIT;
            errs.cel
                .push(cost_error(&p("rule"), "estimated rule cost", cost, limit));
        }
        errs.observe(p("rule"), cost);
        if let Err(e) = &compiled {
            errs.cel
                .push(invalid_raw(&p("rule"), &rule_json(r), &e.to_string()));
        }
    }
    let (program, uses_old_self, message_expression) = match compiled {
        Err(e) => (Err(e), false, None),
        Ok(c) => {
            let message_expression = compile_message_expression(r, at, cx, errs);
            if cx.report {
                check_old_self(r, c.uses_old_self, at, cx.scope, errs);
            }
            (Ok(c.program), c.uses_old_self, message_expression)
        }
    };
    Some(Rule {
        rule: r.rule.clone(),
        message: r.message.clone(),
        reason: r.reason.clone(),
        field_path: valid_field_path(&r.field_path, s).unwrap_or_default(),
        optional_old_self,
        uses_old_self,
        program,
        message_expression,
    })
}

/// Compiles a rule's messageExpression; `None` when unset or invalid (the rule's message is
/// used instead).
fn compile_message_expression(
    r: &ValidationRule,
    at: &str,
    cx: &RulesScope<'_>,
    errs: &mut Errors,
) -> Option<(String, Program)> {
    let src = &r.message_expression;
    if src.is_empty() {
        return None;
    }
    let p = format!("{at}.messageExpression");
    let error = match compile_expr(src, &cx.self_ty, r.optional_old_self == Some(true)) {
        Err(e) => RuleError::MessageCompile(e),
        Ok(mc) if !output_is(&mc.info.ty, &Ty::String) => RuleError::NotString,
        Ok(mc) => {
            let cost = mc.info.cost.max;
            if cx.report {
                if cost > STATIC_ESTIMATED_COST_LIMIT {
                    let (what, limit) = (
                        "estimated messageExpression cost",
                        STATIC_ESTIMATED_COST_LIMIT,
                    );
                    errs.cel.push(cost_error(&p, what, cost, limit));
                }
                errs.observe(p, cost);
            }
            return Some((src.clone(), mc.program));
        }
    };
    if cx.report {
        errs.cel
            .push(invalid_raw(&p, &rule_json(r), &error.to_string()));
    }
    None
}

/// Transition rules need a correlatable node; `optionalOldSelf` needs a transition rule.
fn check_old_self(
    r: &ValidationRule,
    uses_old_self: bool,
    at: &str,
    scope: &Scope,
    errs: &mut Errors,
) {
    if uses_old_self {
        if let Some(unc) = &scope.uncorrelatable {
            errs.cel.push(field::invalid(
                &format!("{at}.rule"),
                &Value::from(r.rule.as_str()),
                &format!("oldSelf cannot be used on the uncorrelatable portion of the schema within {unc}"),
            ));
        }
    } else if let Some(b) = r.optional_old_self {
        errs.cel.push(field::invalid(
            &format!("{at}.optionalOldSelf"),
            &Value::Bool(b),
            "may not be set if oldSelf is not used in rule",
        ));
    }
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

/// A rule as `json.Marshal` renders the internal `apiextensions.ValidationRule` (the value of
/// its compile errors).
fn rule_json(r: &ValidationRule) -> String {
    let null_or = |v: Option<String>| v.unwrap_or_else(|| "null".into());
    format!(
        "{{\"Rule\":{},\"Message\":{},\"MessageExpression\":{},\"Reason\":{},\"FieldPath\":{},\"OptionalOldSelf\":{}}}",
        go_json_string(&r.rule),
        go_json_string(&r.message),
        go_json_string(&r.message_expression),
        null_or(r.reason.as_deref().map(go_json_string)),
        go_json_string(&r.field_path),
        null_or(r.optional_old_self.map(|b| b.to_string())),
    )
}

/// The outcome of compiling one expression.
pub(super) struct Compiled {
    /// What runs.
    pub program: Program,
    /// Its type, cost and size.
    pub info: Info,
    /// Whether it references `oldSelf` (a transition rule).
    pub uses_old_self: bool,
}

/// Parses and type-checks one expression with `self` (and `oldSelf`) of type `self_ty`.
pub(super) fn compile_expr(
    src: &str,
    self_ty: &Ty,
    optional_old_self: bool,
) -> Result<Compiled, CompileError> {
    compile_with(src, Checker::new(self_ty.clone(), optional_old_self))
}

/// Parses one expression and type-checks it with `checker`'s variables.
pub(super) fn compile_with(src: &str, mut checker: Checker) -> Result<Compiled, CompileError> {
    let env = macros::env();
    // The parser is not ours: a panic in it is a syntax error, not a crash of the server.
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
