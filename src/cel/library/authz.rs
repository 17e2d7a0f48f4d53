//! The Kubernetes authorizer library of admission expressions: `authorizer` (bound by the
//! caller), `authorizer.path(p)`, `authorizer.group(g).resource(r).subresource(s)
//! .namespace(n).name(x)`, `.check(verb)`, `authorizer.serviceAccount(ns, name)`,
//! `authorizer.requestResource`, and a decision's `allowed()`, `reason()`, `errored()` and
//! `error()`. The CEL side only builds the question; [`Authz::check`] hands it to the function
//! the caller bound, which asks the server's authorizer.

use std::rc::Rc;

use super::{no_overload, str_arg, Ctx, Function, R};
use crate::cel::value::{Ext, Val};

/// What a check asks (`authorizer.Attributes` without the user, which the caller knows).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuthzQuestion {
    /// `authorizer.serviceAccount(ns, name)`: ask about this service account instead of the
    /// request's user.
    pub service_account: Option<(String, String)>,
    /// A resource check, or a path check.
    pub resource_request: bool,
    /// The verb given to `check`.
    pub verb: String,
    /// The path of a path check.
    pub path: String,
    /// API group.
    pub group: String,
    /// Resource.
    pub resource: String,
    /// Subresource.
    pub subresource: String,
    /// Namespace.
    pub namespace: String,
    /// Object name.
    pub name: String,
}

/// An authorizer's answer, as `Decision` shows it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuthzDecision {
    /// `allowed()`.
    pub allowed: bool,
    /// `reason()`.
    pub reason: String,
    /// `error()` ("" when `errored()` is false).
    pub error: String,
}

/// Asks the server's authorizer.
pub type AuthorizeFn = dyn Fn(&AuthzQuestion) -> AuthzDecision;

/// What an `authorizer` value is at some step of building a check.
#[derive(Debug, Clone, PartialEq)]
pub enum AuthzStep {
    /// `authorizer` (or `authorizer.serviceAccount(...)`).
    Authorizer,
    /// `authorizer.path(p)`.
    Path,
    /// `authorizer.group(g)`.
    Group,
    /// `....resource(r)` and what follows.
    Resource,
    /// `....check(verb)`.
    Decision(AuthzDecision),
}

/// A value of the library: the question so far, and the function that answers it.
#[derive(Clone)]
pub struct Authz {
    authorize: Rc<AuthorizeFn>,
    /// The request's own resource, for `authorizer.requestResource`.
    request: Rc<AuthzQuestion>,
    /// The question built so far.
    pub question: AuthzQuestion,
    /// Which step it is.
    pub step: AuthzStep,
}

impl std::fmt::Debug for Authz {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Authz({:?}, {:?})", self.step, self.question)
    }
}

/// Compared by what they ask, never by the function.
impl PartialEq for Authz {
    fn eq(&self, other: &Self) -> bool {
        self.step == other.step && self.question == other.question
    }
}

impl Authz {
    /// The `authorizer` variable: `authorize` answers checks; `request` is the request's
    /// resource (`authorizer.requestResource`).
    pub fn new(authorize: Rc<AuthorizeFn>, request: AuthzQuestion) -> Authz {
        Authz {
            authorize,
            request: Rc::new(request),
            question: AuthzQuestion::default(),
            step: AuthzStep::Authorizer,
        }
    }

    /// The CEL type name of this step's values.
    pub fn type_name(&self) -> &'static str {
        match self.step {
            AuthzStep::Authorizer => "kubernetes.authorization.Authorizer",
            AuthzStep::Path => "kubernetes.authorization.PathCheck",
            AuthzStep::Group => "kubernetes.authorization.GroupCheck",
            AuthzStep::Resource => "kubernetes.authorization.ResourceCheck",
            AuthzStep::Decision(_) => "kubernetes.authorization.Decision",
        }
    }

    /// `authorizer.requestResource`: a resource check of the request's own resource.
    pub fn request_resource(&self) -> Option<Authz> {
        (self.step == AuthzStep::Authorizer).then(|| Authz {
            question: AuthzQuestion {
                service_account: self.question.service_account.clone(),
                ..(*self.request).clone()
            },
            step: AuthzStep::Resource,
            ..self.clone()
        })
    }

    fn next(&self, step: AuthzStep, change: impl FnOnce(&mut AuthzQuestion)) -> Val<'static> {
        let mut v = self.clone();
        change(&mut v.question);
        v.step = step;
        Val::Ext(Rc::new(Ext::Authz(Box::new(v))))
    }

    /// Asks the authorizer.
    fn check(&self, verb: &str) -> Val<'static> {
        let mut q = self.question.clone();
        q.verb = verb.to_string();
        q.resource_request = self.step == AuthzStep::Resource;
        let decision = (self.authorize)(&q);
        self.next(AuthzStep::Decision(decision), |_| {})
    }
}

/// The functions of this family, for the registry.
pub(super) const FUNCTIONS: &[Function] = &[
    Function::strict("path", &["authorizer.path(string) pathcheck"], build),
    Function::strict("group", &["authorizer.group(string) groupcheck"], build),
    Function::strict(
        "serviceAccount",
        &["authorizer.serviceAccount(string,string) authorizer"],
        build,
    ),
    Function::strict(
        "resource",
        &["groupcheck.resource(string) resourcecheck"],
        build,
    ),
    Function::strict(
        "subresource",
        &["resourcecheck.subresource(string) resourcecheck"],
        build,
    ),
    Function::strict(
        "namespace",
        &["resourcecheck.namespace(string) resourcecheck"],
        build,
    ),
    Function::strict("name", &["resourcecheck.name(string) resourcecheck"], build),
    Function::strict(
        "fieldSelector",
        &["resourcecheck.fieldSelector(string) resourcecheck"],
        build,
    ),
    Function::strict(
        "labelSelector",
        &["resourcecheck.labelSelector(string) resourcecheck"],
        build,
    ),
    Function::strict(
        "check",
        &[
            "pathcheck.check(string) decision",
            "resourcecheck.check(string) decision",
        ],
        build,
    ),
    Function::strict("allowed", &["decision.allowed() bool"], answer),
    Function::strict("reason", &["decision.reason() string"], answer),
    Function::strict("errored", &["decision.errored() bool"], answer),
    Function::strict("error", &["decision.error() string"], answer),
];

fn receiver<'v>(args: &'v [Val<'_>]) -> Result<&'v Authz, crate::cel::error::EvalError> {
    match args.first() {
        Some(Val::Ext(e)) => match &**e {
            Ext::Authz(a) => Ok(a),
            _ => no_overload(),
        },
        _ => no_overload(),
    }
}

/// The builder steps, `serviceAccount` and `check`.
fn build<'a>(cx: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let a = receiver(&args)?;
    let s = |i: usize| -> Result<String, crate::cel::error::EvalError> {
        args.get(i)
            .map_or_else(no_overload, |v| str_arg(v).map(String::from))
    };
    Ok(match (cx.name, &a.step) {
        ("path", AuthzStep::Authorizer) => {
            let p = s(1)?;
            a.next(AuthzStep::Path, |q| q.path = p)
        }
        ("group", AuthzStep::Authorizer) => {
            let g = s(1)?;
            a.next(AuthzStep::Group, |q| q.group = g)
        }
        ("serviceAccount", AuthzStep::Authorizer) => {
            let (ns, name) = (s(1)?, s(2)?);
            a.next(AuthzStep::Authorizer, |q| {
                q.service_account = Some((ns, name))
            })
        }
        ("resource", AuthzStep::Group) => {
            let r = s(1)?;
            a.next(AuthzStep::Resource, |q| q.resource = r)
        }
        ("subresource", AuthzStep::Resource) => {
            let r = s(1)?;
            a.next(AuthzStep::Resource, |q| q.subresource = r)
        }
        ("namespace", AuthzStep::Resource) => {
            let r = s(1)?;
            a.next(AuthzStep::Resource, |q| q.namespace = r)
        }
        ("name", AuthzStep::Resource) => {
            let r = s(1)?;
            a.next(AuthzStep::Resource, |q| q.name = r)
        }
        // RBAC ignores selectors; the check stands as it is.
        ("fieldSelector" | "labelSelector", AuthzStep::Resource) => {
            s(1)?;
            a.next(AuthzStep::Resource, |_| {})
        }
        ("check", AuthzStep::Path | AuthzStep::Resource) => a.check(&s(1)?),
        _ => return no_overload(),
    })
}

/// A decision's accessors.
fn answer<'a>(cx: &Ctx<'_>, args: Vec<Val<'a>>) -> R<'a> {
    let AuthzStep::Decision(d) = &receiver(&args)?.step else {
        return no_overload();
    };
    Ok(match cx.name {
        "allowed" => Val::Bool(d.allowed),
        "reason" => Val::str(d.reason.as_str()),
        "errored" => Val::Bool(!d.error.is_empty()),
        _ => Val::str(d.error.as_str()),
    })
}
