//! Static types for expressions whose variables the server declares: what a
//! ValidatingAdmissionPolicy's `status.typeChecking` checks each expression against. `object`
//! and `oldObject` are typed by a kind's schema, `request` as the apiserver's
//! `kubernetes.AdmissionRequest`, `variables` by the policy's own variables' result types;
//! everything else stays `dyn`.
//!
//! Mirrors `buildRequestType` and the composited `kubernetes.variables` type of
//! `k8s.io/apiserver/pkg/admission/plugin/cel`.

use std::sync::Arc;

use super::check::Checker;
use super::compile::compile_with;
use super::decl::{decl_of, declared, Decl};
use super::error::CompileError;
use super::expression::Expression;
use super::types::Ty;

/// The result type of a checked expression, to declare as a variable's type.
#[derive(Debug, Clone)]
pub struct StaticType(Ty);

impl StaticType {
    /// `dyn`: what a variable whose expression does not check is declared as.
    pub fn dynamic() -> StaticType {
        StaticType(Ty::Dyn)
    }

    /// Whether the type is `bool`, or unknown until run time (`dyn`).
    pub fn is_bool_or_dyn(&self) -> bool {
        matches!(self.0.norm(), Ty::Bool) || self.0.is_dyn()
    }
}

/// The type's name as cel-go writes it (`string`, `list(int)`).
impl std::fmt::Display for StaticType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

/// Variables and their declared types.
#[derive(Debug, Clone)]
pub struct TypeEnv {
    dyn_vars: Vec<String>,
    typed: Vec<(String, Ty)>,
}

impl TypeEnv {
    /// An environment where every one of `vars` is `dyn`.
    pub fn new(vars: &[&str]) -> TypeEnv {
        TypeEnv {
            dyn_vars: vars.iter().map(|v| v.to_string()).collect(),
            typed: Vec::new(),
        }
    }

    /// Declares `name` as a value of the resource (root) `schema` describes.
    pub fn resource(&mut self, name: &str, schema: &crate::schema::Node) -> &mut Self {
        if let Some(decl) = decl_of(schema, true, name) {
            self.declare(name, Ty::Schema(decl));
        }
        self
    }

    /// Declares `name` as an admission request (`kubernetes.AdmissionRequest`).
    pub fn admission_request(&mut self, name: &str) -> &mut Self {
        self.declare(name, Ty::Schema(admission_request()));
        self
    }

    /// Declares `name` as an object with one field per variable, typed by its expression
    /// (`kubernetes.variables`).
    pub fn variables(&mut self, name: &str, vars: &[(String, StaticType)]) -> &mut Self {
        let fields = vars
            .iter()
            .map(|(n, t)| (n.as_str(), declared::of_ty(&t.0)))
            .collect();
        self.declare(
            name,
            Ty::Schema(declared::object("kubernetes.variables", fields)),
        );
        self
    }

    fn declare(&mut self, name: &str, ty: Ty) {
        self.typed.retain(|(n, _)| n != name);
        self.typed.push((name.to_string(), ty));
    }

    /// Declares `name` as the namespace admission expressions see (`kubernetes.Namespace`:
    /// the metadata, spec and status fields `BuildNamespaceType` declares).
    pub fn admission_namespace(&mut self, name: &str) -> &mut Self {
        self.declare(name, Ty::Schema(admission_namespace()));
        self
    }

    /// Declares `name` as the device a DRA selector sees (`kubernetes.DRADevice` with the
    /// consumable-capacity field): its driver, its attributes and capacities by domain and
    /// id, whether it allows multiple allocations. Attribute and capacity values are `dyn`
    /// (cel-go declares attributes `any` and capacities `kubernetes.Quantity`).
    pub fn dra_device(&mut self, name: &str) -> &mut Self {
        use declared::{boolean, dyn_type, map, object, string};
        let by_domain = || map(map(dyn_type()));
        let device = object(
            "kubernetes.DRADevice",
            vec![
                ("driver", string()),
                ("allowMultipleAllocations", boolean()),
                ("attributes", by_domain()),
                ("capacity", by_domain()),
            ],
        );
        self.declare(name, Ty::Schema(device));
        self
    }

    /// Declares `name` as the admission `authorizer` (and `name.requestResource`).
    pub fn authorizer(&mut self, name: &str) -> &mut Self {
        self.declare(name, Ty::Opaque("kubernetes.authorization.Authorizer"));
        self
    }

    fn checker(&self) -> Checker {
        let names: Vec<&str> = self.dyn_vars.iter().map(String::as_str).collect();
        let mut checker = Checker::with_dyn_vars(&names);
        for (name, ty) in &self.typed {
            checker.declare(name, ty.clone());
        }
        checker
    }

    /// Parses and type-checks `src`; its result type, or cel-go's rendering of the errors.
    pub fn check(&self, src: &str) -> Result<StaticType, CompileError> {
        compile_with(src, self.checker()).map(|c| StaticType(c.info.ty))
    }

    /// Parses and type-checks `src` into an expression to evaluate.
    pub fn compile(&self, src: &str) -> Result<Expression, CompileError> {
        let compiled = compile_with(src, self.checker())?;
        Ok(Expression {
            program: compiled.program,
        })
    }
}

/// `kubernetes.AdmissionRequest`, as `buildRequestType` declares it.
fn admission_request() -> Arc<Decl> {
    use declared::{boolean, dyn_type, list, map, object, string};
    let triple = |name: &str, last: &'static str| {
        let fields = vec![("group", string()), ("version", string()), (last, string())];
        object(name, fields)
    };
    let gvk = triple("kubernetes.GroupVersionKind", "kind");
    let gvr = triple("kubernetes.GroupVersionResource", "resource");
    let user = object(
        "kubernetes.UserInfo",
        vec![
            ("username", string()),
            ("uid", string()),
            ("groups", list(string())),
            ("extra", map(list(string()))),
        ],
    );
    object(
        "kubernetes.AdmissionRequest",
        vec![
            ("kind", gvk.clone()),
            ("resource", gvr.clone()),
            ("subResource", string()),
            ("requestKind", gvk),
            ("requestResource", gvr),
            ("requestSubResource", string()),
            ("name", string()),
            ("namespace", string()),
            ("operation", string()),
            ("userInfo", user),
            ("dryRun", boolean()),
            ("options", dyn_type()),
        ],
    )
}

/// `kubernetes.Namespace`, as `BuildNamespaceType` declares it.
fn admission_namespace() -> Arc<Decl> {
    use declared::{list, map, object, string};
    let timestamp = || declared::of_ty(&Ty::Timestamp);
    let int = || declared::of_ty(&Ty::Int);
    let strings = || list(string());
    let condition = object(
        "kubernetes.NamespaceCondition",
        vec![
            ("status", string()),
            ("type", string()),
            ("lastTransitionTime", timestamp()),
            ("message", string()),
            ("reason", string()),
        ],
    );
    let metadata = object(
        "kubernetes.NamespaceMetadata",
        vec![
            ("name", string()),
            ("generateName", string()),
            ("namespace", string()),
            ("labels", map(string())),
            ("annotations", map(string())),
            ("UID", string()),
            ("creationTimestamp", timestamp()),
            ("deletionGracePeriodSeconds", int()),
            ("deletionTimestamp", timestamp()),
            ("generation", int()),
            ("resourceVersion", string()),
            ("finalizers", strings()),
        ],
    );
    let spec = object("kubernetes.NamespaceSpec", vec![("finalizers", strings())]);
    let status = object(
        "kubernetes.NamespaceStatus",
        vec![("conditions", list(condition)), ("phase", string())],
    );
    object(
        "kubernetes.Namespace",
        vec![("metadata", metadata), ("spec", spec), ("status", status)],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> TypeEnv {
        let mut env = TypeEnv::new(&["request", "variables", "object"]);
        env.admission_request("request");
        env
    }

    #[test]
    fn request_fields_are_typed() {
        let env = env();
        for ok in [
            "request.operation == 'CREATE'",
            "request.userInfo.groups.exists(g, g == 'x')",
            "request.userInfo.extra['k'][0] == 'v'",
            "request.kind.group + request.resource.resource != ''",
            "request.options.anything == 1",
            "!request.dryRun",
        ] {
            assert!(env.check(ok).is_ok(), "{ok}: {:?}", env.check(ok).err());
        }
        let err = env.check("request.operations == 'CREATE'").unwrap_err();
        assert!(
            err.to_string().contains("undefined field 'operations'"),
            "{err}"
        );
        let err = env.check("request.dryRun == 'true'").unwrap_err();
        assert!(err.to_string().contains("no matching overload"), "{err}");
    }

    #[test]
    fn the_authorizer_is_typed() {
        let mut env = TypeEnv::new(&["authorizer"]);
        env.authorizer("authorizer");
        for ok in [
            "authorizer.group('apps').resource('deployments').namespace('ns').check('get').allowed()",
            "authorizer.requestResource.check('create').reason() != ''",
            "authorizer.path('/healthz').check('get').allowed()",
        ] {
            assert!(env.check(ok).is_ok(), "{ok}: {:?}", env.check(ok).err());
        }
        assert!(env.check("authorizer.requestResources").is_err());
        assert!(env.check("authorizer.group('x').allowed()").is_err());
    }

    #[test]
    fn the_dra_device_is_typed() {
        let mut env = TypeEnv::new(&[]);
        env.dra_device("device");
        let bool_or_dyn = |e: &str| env.check(e).map(|t| t.is_bool_or_dyn());
        assert!(bool_or_dyn("device.driver == 'a' && device.allowMultipleAllocations").unwrap());
        assert!(bool_or_dyn("device.attributes['a.io'].x").unwrap());
        let ty = env.check("device.driver").unwrap();
        assert!(!ty.is_bool_or_dyn());
        assert_eq!(ty.to_string(), "string");
        let err = env.check("device.name").unwrap_err();
        assert!(err.to_string().contains("undefined field 'name'"), "{err}");
    }

    #[test]
    fn the_namespace_has_the_declared_fields_only() {
        let mut env = TypeEnv::new(&["namespaceObject"]);
        env.admission_namespace("namespaceObject");
        let ok =
            "namespaceObject.metadata.labels['a'] == 'b' && namespaceObject.status.phase != ''";
        assert!(env.check(ok).is_ok(), "{:?}", env.check(ok).err());
        let err = env.check("namespaceObject.metadata.uid").unwrap_err();
        assert!(err.to_string().contains("undefined field 'uid'"), "{err}");
    }

    #[test]
    fn variables_take_their_expressions_types() {
        let mut env = env();
        let count = env.check("size(request.userInfo.groups)").unwrap();
        let names = env.check("request.userInfo.groups").unwrap();
        let any = env.check("object.spec").unwrap();
        env.variables(
            "variables",
            &[
                ("count".into(), count),
                ("names".into(), names),
                ("any".into(), any),
            ],
        );
        assert!(env
            .check("variables.count > 1 && variables.names[0] == 'a'")
            .is_ok());
        assert!(env.check("variables.any.whatever").is_ok());
        let err = env.check("variables.count == 'a'").unwrap_err();
        assert!(err.to_string().contains("no matching overload"), "{err}");
        let err = env.check("variables.missing").unwrap_err();
        assert!(
            err.to_string().contains("undefined field 'missing'"),
            "{err}"
        );
    }
}
