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
//! # Layout
//! - The rules come from the compiled structural schema ([`crate::schema::Node`], the one
//!   pruning, defaulting and validation use): `decl` derives the CEL type of each node (escaped
//!   field names, size bounds for the cost estimate), `compile` walks the schema when the CRD is
//!   written (field checks of each rule, `field_path`, compilation, cost limits) into a tree of
//!   compiled rules, and `validate` walks an object along that tree on every write (`oldSelf`
//!   correlation, ratcheting, the runtime budget).
//! - One expression: `macros` (the parser's Kubernetes macros), `check` (types and the static
//!   cost estimate, with `cost`'s arithmetic), `eval` (the interpreter, over `value`s that view
//!   the object's JSON in place).
//! - `library`: every function, one file per family (operators, math, conversions, time,
//!   strings, lists, regex, urls, ip_cidr, quantity, semver, format, sets, optionals), each
//!   function with its overloads (which the checker resolves, in the signature language of
//!   `types`' static types), its static estimate, its run-time cost and its implementation;
//!   a registry built once maps names to them.
//! - `error`: typed errors (compile, check, evaluation, cost) whose `Display` is the
//!   apiserver's or cel-go's exact wording, as the field errors clients see carry them.
//!
//! ```
//! use kubefake::cel::Rules;
//! use kubefake::schema::Schema;
//! use serde_json::json;
//! let schema = json!({"type": "object", "properties": {"spec": {"type": "object",
//!     "x-kubernetes-validations": [{"rule": "self.replicas <= self.maxReplicas",
//!                                   "message": "replicas should be smaller than or equal to maxReplicas."}],
//!     "properties": {"replicas": {"type": "integer"}, "maxReplicas": {"type": "integer"}}}}});
//! let schema = Schema::compile(&schema);
//! let rules = Rules::compile(schema.root(), "spec.validation.openAPIV3Schema").unwrap();
//! let obj = json!({"apiVersion": "stable.example.com/v1", "kind": "CronTab",
//!                  "metadata": {"name": "c"}, "spec": {"replicas": 20, "maxReplicas": 10}});
//! let errs = rules.validate(&obj, None, &[]);
//! assert_eq!(errs[0].field, "spec");
//! assert_eq!(errs[0].message, "Invalid value: replicas should be smaller than or equal to maxReplicas.");
//! ```

mod check;
mod compile;
mod cost;
mod decl;
mod error;
mod eval;
mod expression;
mod field_path;
mod library;
mod macros;
mod type_env;
mod types;
mod validate;
mod value;

#[cfg(test)]
mod tests;

/// Exact `resource.Quantity` arithmetic, shared with the built-in kinds' validation.
pub use decl::is_reserved;
pub use error::{CompileError, EvalError};
pub use expression::{Bindings, Expression, ExpressionCache};
pub use field_path::selectable_field_path;
pub use library::{AuthorizeFn, Authz, AuthzDecision, AuthzQuestion, Quantity};
pub use type_env::{StaticType, TypeEnv};

use std::collections::HashMap;
use std::sync::Arc;

use cel::common::ast::IdedExpr;
use regex::Regex;
use serde_json::Value;

use crate::error::StatusCause;
use crate::schema::Node as SchemaNode;
use decl::{Decl, ListKind};
use error::{RuleError, RuleFailure};
use validate::{Visit, Walk};

#[cfg(test)]
use compile::compile_expr;

/// Largest estimated cost of one expression (`StaticEstimatedCostLimit`).
pub const STATIC_ESTIMATED_COST_LIMIT: u64 = 10_000_000;
/// Largest estimated cost of all the rules of a schema (`StaticEstimatedCRDCostLimit`).
pub const STATIC_ESTIMATED_CRD_COST_LIMIT: u64 = 100_000_000;
/// Run-time cost limit of one evaluation (`PerCallLimit`).
pub const PER_CALL_LIMIT: u64 = 1_000_000;
/// Run-time cost budget of all the rules for one object (`RuntimeCELCostBudget`).
pub const RUNTIME_COST_BUDGET: i64 = 10_000_000;
/// Longer messageExpression results are ignored (the rule's message is used instead).
const MAX_MESSAGE_EXPRESSION_SIZE: usize = 5 * 1024;

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
struct RuleNode {
    rules: Vec<Rule>,
    /// The CEL type of `self` (set when the node has rules).
    decl: Option<Arc<Decl>>,
    /// The schema's `type`, which errors about the rules (rather than the value) show.
    schema_type: String,
    properties: Vec<(String, RuleNode)>,
    additional: Option<Box<RuleNode>>,
    items: Option<Box<RuleNode>>,
    /// The rules of `allOf` branches, with the node's type.
    all_of: Vec<RuleNode>,
    list: ListKind,
    map_type: Option<String>,
}

impl RuleNode {
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
    root: Option<RuleNode>,
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

/// A `FieldValueInvalid` cause whose value is already rendered.
fn invalid_raw(field: &str, rendered_value: &str, detail: &str) -> StatusCause {
    StatusCause {
        reason: "FieldValueInvalid".into(),
        message: format!("Invalid value: {rendered_value}: {detail}"),
        field: field.into(),
    }
}

impl Rules {
    /// Compiles and type-checks every rule and messageExpression of a compiled structural
    /// schema (the one pruning, defaulting and validation use); errors are the apiserver's 422
    /// causes reported under `path` (e.g. `spec.validation.openAPIV3Schema` ->
    /// `spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].rule`).
    /// Includes: syntax errors, undefined fields ("undefined field 'nonExistingField'"), has()
    /// misuse, type errors ("no matching overload for '_==_' applied to '(int, bool)'"),
    /// transition rules on non-correlatable nodes, fieldPath validity, reason values, and the
    /// per-rule and per-CRD cost budgets with the real messages.
    pub fn compile(schema: &SchemaNode, path: &str) -> Result<Rules, Vec<StatusCause>> {
        let root = compile::compile_schema(schema, path)?;
        Ok(Rules { root })
    }

    /// Whether there is any rule (callers skip evaluation otherwise).
    pub fn is_empty(&self) -> bool {
        self.root.is_none()
    }

    /// Evaluates every rule against a custom resource (`old` on updates) and returns the field
    /// errors (message / messageExpression / reason / fieldPath applied, default message
    /// `failed rule: <rule>`). `existing` are the errors schema validation already found: when
    /// one of them is of a kind the apiserver treats as blocking (required, not supported, too
    /// long, too many, type invalid), no rule runs and one error says so, as the apiserver does.
    /// Transition rules, optionalOldSelf and ratcheting as documented. A runaway rule is stopped
    /// by the runtime cost budget with the real error; never hangs.
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
            let detail = RuleFailure::Blocked.to_string();
            return vec![invalid_raw("<nil>", "null", &detail)];
        }
        let mut walk = Walk {
            budget: RUNTIME_COST_BUDGET,
            out: Vec::new(),
        };
        let visit = Visit {
            path: None,
            obj,
            old,
            ratchet: old.is_some_and(|o| o == obj),
            is_root: true,
        };
        walk.node(root, visit);
        walk.out
    }
}
