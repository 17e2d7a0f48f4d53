//! Evaluating the rules on a custom resource: a walk over the object and the rule tree
//! together, with `oldSelf` correlated (map keys, map-list keys) where the apiserver correlates
//! it, ratcheting of unchanged values, and the runtime cost budget shared by all the rules.

use std::ops::ControlFlow;

use serde_json::{Map, Value};

use super::decl::ListKind;
use super::error::{EvalError, RuleFailure};
use super::eval::Evaluator;
use super::value::{from_json, Val};
use super::{
    go_json_string, invalid_raw, Program, Rule, RuleNode, MAX_MESSAGE_EXPRESSION_SIZE,
    PER_CALL_LIMIT,
};
use crate::error::{field, StatusCause};
use crate::machinery::gofmt::go_quote;

/// The state of validating one object: the cost budget left (negative once exhausted, when no
/// further rule runs) and the errors found.
pub(super) struct Walk {
    /// The runtime cost budget left.
    pub budget: i64,
    /// The field errors, in the order found.
    pub out: Vec<StatusCause>,
}

/// One value of the object, where the walk is.
pub(super) struct Visit<'v> {
    /// Its path in errors (`None` at the root, reported as `<nil>`).
    pub path: Option<String>,
    /// The value.
    pub obj: &'v Value,
    /// The correlated value of the old object, if any.
    pub old: Option<&'v Value>,
    /// Whether the value is unchanged from the old object (errors of non-transition rules on it
    /// are dropped).
    pub ratchet: bool,
    /// Whether this is the object itself (whose `apiVersion` and `kind` never ratchet).
    pub is_root: bool,
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

impl Walk {
    /// Runs the rules of `node` and of the nodes below it on the value.
    pub fn node(&mut self, node: &RuleNode, v: Visit<'_>) {
        if v.obj.is_null() {
            return;
        }
        let old = v.old.filter(|o| !o.is_null());
        if !node.rules.is_empty() && !self.rules(node, &v.path, v.obj, old, v.ratchet) {
            return;
        }
        for a in &node.all_of {
            if !self.rules(a, &v.path, v.obj, old, false) {
                return;
            }
        }
        match v.obj {
            Value::Object(m) => self.fields(node, &v, m, old),
            Value::Array(items) => self.items(node, &v, items, old),
            _ => {}
        }
    }

    /// The properties (or map entries) of an object; the old value of each is the old object's
    /// (when the map correlates), and unchanged values ratchet.
    fn fields(
        &mut self,
        node: &RuleNode,
        v: &Visit<'_>,
        m: &Map<String, Value>,
        old: Option<&Value>,
    ) {
        let correlatable = matches!(node.map_type.as_deref(), None | Some("granular" | "atomic"));
        let old_m = old.and_then(Value::as_object).filter(|_| correlatable);
        for (k, value) in m {
            let child = node
                .properties
                .iter()
                .find(|(n, _)| n == k)
                .map(|(_, n)| (n, child_path(&v.path, k)))
                .or_else(|| {
                    node.additional
                        .as_deref()
                        .map(|n| (n, key_path(&v.path, k)))
                });
            let Some((child, path)) = child else {
                continue;
            };
            let ov = old_m.and_then(|o| o.get(k));
            // The root's apiVersion and kind never ratchet.
            let type_meta = v.is_root && (k == "apiVersion" || k == "kind");
            let ratchet = !type_meta && ov.is_some_and(|o| o == value);
            let visit = Visit {
                path,
                obj: value,
                old: ov,
                ratchet,
                is_root: false,
            };
            self.node(child, visit);
            if self.budget < 0 {
                return;
            }
        }
    }

    /// The items of a list; items of map-lists correlate by key, the others ratchet with the
    /// list.
    fn items(&mut self, node: &RuleNode, v: &Visit<'_>, items: &[Value], old: Option<&Value>) {
        let Some(item_node) = node.items.as_deref() else {
            return;
        };
        let old_items = old.and_then(Value::as_array);
        for (i, value) in items.iter().enumerate() {
            let (ov, ratchet) = match (&node.list, old_items) {
                (ListKind::Map(keys), Some(olds)) => {
                    let key = |x: &Value| -> Vec<Value> {
                        keys.iter()
                            .map(|k| x.get(k).cloned().unwrap_or(Value::Null))
                            .collect()
                    };
                    let kv = key(value);
                    let ov = olds.iter().find(|o| key(o) == kv);
                    (ov, ov.is_some_and(|o| o == value))
                }
                _ => (None, v.ratchet),
            };
            let visit = Visit {
                path: Some(format!("{}[{i}]", path_str(&v.path))),
                obj: value,
                old: ov,
                ratchet,
                is_root: false,
            };
            self.node(item_node, visit);
            if self.budget < 0 {
                return;
            }
        }
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
    node: &'a RuleNode,
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

impl Walk {
    /// Runs the rules of one node; `false` when the budget is exhausted (no further rules run).
    fn rules(
        &mut self,
        node: &RuleNode,
        path: &Option<String>,
        obj: &Value,
        old: Option<&Value>,
        ratchet: bool,
    ) -> bool {
        let (budget, out) = (&mut self.budget, &mut self.out);
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
