//! Parsing with the Kubernetes macro set: the `cel` crate's standard macros plus the ones it
//! lacks (two-variable comprehensions `all(k, v, p)`, `exists(k, v, p)`, `existsOne(k, v, p)`,
//! `transformList`, `transformMap`; `cel.bind`; `optMap`/`optFlatMap`), expanded into the same
//! comprehension shapes cel-go builds.

use cel::common::ast::{
    CallExpr, ComprehensionExpr, Expr, IdedExpr, ListExpr, LiteralValue, MapExpr,
};
use cel::parser::{Macro, MacroExprHelper, ParseError};
use cel::Env;

const ACCU: &str = "@result";

type Expanded = Result<Option<IdedExpr>, ParseError>;

fn ident(h: &mut MacroExprHelper<'_>, n: &str) -> IdedExpr {
    h.next_expr(Expr::Ident(n.to_string()))
}

fn call(h: &mut MacroExprHelper<'_>, f: &str, args: Vec<IdedExpr>) -> IdedExpr {
    h.next_expr(Expr::Call(CallExpr {
        func_name: f.to_string(),
        target: None,
        args,
    }))
}

fn lit(h: &mut MacroExprHelper<'_>, l: LiteralValue) -> IdedExpr {
    h.next_expr(Expr::Literal(l))
}

fn var_name(h: &MacroExprHelper<'_>, e: &IdedExpr) -> Result<String, ParseError> {
    match &e.expr {
        Expr::Ident(n) => Ok(n.clone()),
        _ => Err(h.new_error(e.id, "argument must be a simple name")),
    }
}

#[allow(clippy::too_many_arguments)]
fn comprehension(
    h: &mut MacroExprHelper<'_>,
    range: IdedExpr,
    v1: String,
    v2: Option<String>,
    init: IdedExpr,
    cond: IdedExpr,
    step: IdedExpr,
    result: IdedExpr,
) -> IdedExpr {
    h.next_expr(Expr::Comprehension(Box::new(ComprehensionExpr {
        iter_range: range,
        iter_var: v1,
        iter_var2: v2,
        accu_var: ACCU.to_string(),
        accu_init: init,
        loop_cond: cond,
        loop_step: step,
        result,
    })))
}

/// `all`/`exists`/`existsOne` with two variables.
fn quantifier(kind: &'static str) -> Macro {
    Macro::receiver(kind, 3, move |h, target, args| -> Expanded {
        let pred = args.pop().expect("three arguments");
        let v2 = var_name(h, &args[1])?;
        let v1 = var_name(h, &args[0])?;
        if v1 == v2 {
            return Err(h.new_error(args[1].id, "duplicate variable name"));
        }
        let range = target.take().expect("a target");
        let accu = ident(h, ACCU);
        let e = match kind {
            "all" => {
                let init = lit(h, LiteralValue::Boolean(true.into()));
                let a2 = ident(h, ACCU);
                let cond = call(h, "@not_strictly_false", vec![a2]);
                let step = call(h, "_&&_", vec![accu, pred]);
                let result = ident(h, ACCU);
                comprehension(h, range, v1, Some(v2), init, cond, step, result)
            }
            "exists" => {
                let init = lit(h, LiteralValue::Boolean(false.into()));
                let a2 = ident(h, ACCU);
                let not = call(h, "!_", vec![a2]);
                let cond = call(h, "@not_strictly_false", vec![not]);
                let step = call(h, "_||_", vec![accu, pred]);
                let result = ident(h, ACCU);
                comprehension(h, range, v1, Some(v2), init, cond, step, result)
            }
            _ => {
                let init = lit(h, LiteralValue::Int(0.into()));
                let cond = lit(h, LiteralValue::Boolean(true.into()));
                let one = lit(h, LiteralValue::Int(1.into()));
                let inc = call(h, "_+_", vec![accu, one]);
                let same = ident(h, ACCU);
                let step = call(h, "_?_:_", vec![pred, inc, same]);
                let a3 = ident(h, ACCU);
                let one2 = lit(h, LiteralValue::Int(1.into()));
                let result = call(h, "_==_", vec![a3, one2]);
                comprehension(h, range, v1, Some(v2), init, cond, step, result)
            }
        };
        Ok(Some(e))
    })
}

/// `transformList(i, v, [filter,] f)` and `transformMap(k, v, [filter,] f)`.
fn transform(name: &'static str, argc: usize) -> Macro {
    Macro::receiver(name, argc, move |h, target, args| -> Expanded {
        let f = args.pop().expect("a transform");
        let filter = if argc == 4 { args.pop() } else { None };
        let v2 = var_name(h, &args[1])?;
        let v1 = var_name(h, &args[0])?;
        let range = target.take().expect("a target");
        let accu = ident(h, ACCU);
        let (init, step) = if name == "transformList" {
            let init = h.next_expr(Expr::List(ListExpr::new(Vec::new())));
            let single = h.next_expr(Expr::List(ListExpr::new(vec![f])));
            (init, call(h, "_+_", vec![accu, single]))
        } else {
            let init = h.next_expr(Expr::Map(MapExpr {
                entries: Vec::new(),
            }));
            let k = ident(h, &v1);
            (init, call(h, "@mapInsert", vec![accu, k, f]))
        };
        let step = match filter {
            Some(p) => {
                let same = ident(h, ACCU);
                call(h, "_?_:_", vec![p, step, same])
            }
            None => step,
        };
        let cond = lit(h, LiteralValue::Boolean(true.into()));
        let result = ident(h, ACCU);
        Ok(Some(comprehension(
            h,
            range,
            v1,
            Some(v2),
            init,
            cond,
            step,
            result,
        )))
    })
}

/// `cel.bind(v, init, expr)`: a comprehension over nothing whose accumulator is `v`.
fn bind_expr(h: &mut MacroExprHelper<'_>, v: String, init: IdedExpr, body: IdedExpr) -> IdedExpr {
    let range = h.next_expr(Expr::List(ListExpr::new(Vec::new())));
    let cond = lit(h, LiteralValue::Boolean(false.into()));
    let step = ident(h, &v);
    h.next_expr(Expr::Comprehension(Box::new(ComprehensionExpr {
        iter_range: range,
        iter_var: "#unused".to_string(),
        iter_var2: None,
        accu_var: v,
        accu_init: init,
        loop_cond: cond,
        loop_step: step,
        result: body,
    })))
}

fn member(h: &mut MacroExprHelper<'_>, target: IdedExpr, f: &str, args: Vec<IdedExpr>) -> IdedExpr {
    h.next_expr(Expr::Call(CallExpr {
        func_name: f.to_string(),
        target: Some(Box::new(target)),
        args,
    }))
}

/// `o.optMap(v, expr)` / `o.optFlatMap(v, expr)`.
fn opt_map(name: &'static str) -> Macro {
    Macro::receiver(name, 2, move |h, target, args| -> Expanded {
        let body = args.pop().expect("a body");
        let v = var_name(h, &args[0])?;
        let o = target.take().expect("a target");
        let has = member(h, o.clone(), "hasValue", Vec::new());
        let value = member(h, o, "value", Vec::new());
        let bound = bind_expr(h, v, value, body);
        let optional = ident(h, "optional");
        let some = if name == "optMap" {
            member(h, optional, "of", vec![bound])
        } else {
            bound
        };
        let optional2 = ident(h, "optional");
        let none = member(h, optional2, "none", Vec::new());
        Ok(Some(call(h, "_?_:_", vec![has, some, none])))
    })
}

/// The environment whose parser expands every Kubernetes macro and the optional syntax.
pub fn env() -> Env {
    let mut env = Env::stdlib().with_optional_support(true);
    let macros = [
        quantifier("all"),
        quantifier("exists"),
        quantifier("existsOne"),
        quantifier("exists_one"),
        transform("transformList", 3),
        transform("transformList", 4),
        transform("transformMap", 3),
        transform("transformMap", 4),
        opt_map("optMap"),
        opt_map("optFlatMap"),
        Macro::receiver("bind", 3, |h, target, args| -> Expanded {
            if !matches!(target.as_ref().map(|t| &t.expr), Some(Expr::Ident(n)) if n == "cel") {
                return Ok(None);
            }
            let body = args.pop().expect("a body");
            let init = args.pop().expect("an initializer");
            let v = var_name(h, &args[0])?;
            target.take();
            Ok(Some(bind_expr(h, v, init, body)))
        }),
    ];
    for m in macros {
        // The names are distinct from the standard macros' arities, so this cannot fail.
        let _ = env.add_macro(m);
    }
    env
}
