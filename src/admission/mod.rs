//! Admission: what runs after a request is decoded and before its object is stored, as the
//! apiserver's admission chain does. Mutating plugins may change the object; validating plugins
//! may only refuse it. Both may await (a webhook call), so they run outside the store's lock; a
//! plugin whose rule must hold atomically with the write (a namespace must exist and not be
//! terminating) adds a check the store runs inside its write.
//!
//! The chain runs for creates, updates, deletes and connections of every resource, in the
//! apiserver's order:
//! mutating plugins in turn, then the strategy's own defaulting and validation, then validating
//! plugins. Today's plugins: [`namespace_lifecycle`], [`priority`], [`storage_protection`],
//! [`default_class`] (storage and ingress classes),
//! and for pods [`service_account`] and [`default_toleration_seconds`]; then the admission
//! webhooks ([`webhook`]), after ValidatingAdmissionPolicies ([`policy`]) in the validating
//! phase, and after MutatingAdmissionPolicies ([`mutating_policy`]) in the mutating phase, as
//! the apiserver orders them. Last of the mutating phase comes [`rbac_escalation`], which the
//! apiserver checks in the RBAC kinds' storage, after mutating admission and before the
//! strategy.

pub mod certificates;
pub mod default_class;
pub mod default_toleration_seconds;
pub mod equivalent;
pub mod mutating_policy;
pub mod namespace_lifecycle;
pub mod policy;
pub mod priority;
pub mod rbac_escalation;
pub mod service_account;
pub mod storage_protection;
pub mod webhook;

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::Value;

use crate::context::Context;
use crate::error::ApiError;
use crate::filters::authorization::Mode;
use crate::registry::catalog::Registry;
use crate::registry::resource::ApiResource;
use crate::store::{GroupResource, Snapshot, Store};
use crate::webhook::WebhookClient;

/// What a request does to an object (`admission.Operation`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// A create (POST, or an apply that creates).
    Create,
    /// An update (PUT, PATCH, apply).
    Update,
    /// A delete.
    Delete,
    /// A connection to a pod or node (`pods/exec`, `attach`, `portforward`, `proxy`); the
    /// object is the connection's options (`PodExecOptions`, ...).
    Connect,
}

impl Operation {
    /// The wire name (`CREATE`, ...), as admission reviews carry it.
    pub fn as_str(self) -> &'static str {
        match self {
            Operation::Create => "CREATE",
            Operation::Update => "UPDATE",
            Operation::Delete => "DELETE",
            Operation::Connect => "CONNECT",
        }
    }
}

/// What admission knows about a request (`admission.Attributes`).
pub struct Attributes<'a> {
    /// The store, for plugins that read other objects (the pod's ServiceAccount, a
    /// PriorityClass) as the apiserver's plugins read their informers' caches.
    pub store: &'a Store,
    /// The request's context (user, dry run).
    pub ctx: &'a Context,
    /// The resource, in the version the request names (or, for a policy or webhook matched in
    /// another version under `matchPolicy: Equivalent`, in that version).
    pub resource: &'a ApiResource,
    /// The resource as the request names it (`requestKind`, `requestResource`): the same as
    /// `resource` but under `matchPolicy: Equivalent`.
    pub request_resource: &'a ApiResource,
    /// The subresource written ("" for the main resource).
    pub subresource: &'a str,
    /// What the request does.
    pub operation: Operation,
    /// The object's namespace ("" for cluster-scoped objects).
    pub namespace: &'a str,
    /// The object's name (may be empty on a create with `generateName`).
    pub name: &'a str,
    /// The stored object an update or delete starts from, in the request's version.
    pub old_object: Option<&'a Value>,
    /// What is served, for plugins that find a kind's resource (a policy's `paramKind`).
    pub registry: Arc<Registry>,
    /// How the server authorizes requests, for checks that ask the authorizer about the
    /// writer (RBAC's `escalate` and `bind`).
    pub authorization: Mode,
}

impl Attributes<'_> {
    /// Whether the request is for this resource (or one of its subresources), in any version:
    /// how a plugin tells the requests it handles, without building a `GroupResource`.
    pub fn is_for(&self, group: &str, plural: &str) -> bool {
        self.resource.plural == plural && self.resource.group == group
    }
}

/// A plugin that may change the object of a create or update.
pub trait Mutating: Send + Sync {
    /// Whether the plugin has anything to do for this request (the apiserver's `Handles`,
    /// asked of the request's resource as well as its operation). Every write asks every
    /// plugin, so the answer must come from the request's attributes alone, cheaply; the chain
    /// calls neither [`Mutating::admit`] nor [`Mutating::admit_delete`] when it is `false`.
    fn handles(&self, _attrs: &Attributes<'_>) -> bool {
        true
    }

    /// Changes `object` or refuses the request; asked only of a request the plugin
    /// [handles](Mutating::handles), which it need not check again.
    fn admit<'a>(
        &'a self,
        attrs: &'a Attributes<'a>,
        object: &'a mut Value,
    ) -> BoxFuture<'a, Result<(), ApiError>>;

    /// A delete, which has no new object to change: the plugin may refuse it. Most plugins
    /// have nothing to say about deletes; mutating webhooks are called for them.
    fn admit_delete<'a>(
        &'a self,
        _attrs: &'a Attributes<'a>,
    ) -> BoxFuture<'a, Result<(), ApiError>> {
        Box::pin(async { Ok(()) })
    }
}

/// A plugin that may refuse a request but not change it.
pub trait Validating: Send + Sync {
    /// Whether the plugin has anything to validate for this request, as
    /// [`Mutating::handles`]: the chain skips [`Validating::validate`] when it is `false`
    /// (not [`Validating::check_at_commit`], which answers for itself).
    fn handles(&self, _attrs: &Attributes<'_>) -> bool {
        true
    }

    /// Refuses the request, or lets it pass. `object` is the new object (none for a delete).
    /// Asked only of a request the plugin [handles](Validating::handles).
    fn validate<'a>(
        &'a self,
        attrs: &'a Attributes<'a>,
        object: Option<&'a Value>,
    ) -> BoxFuture<'a, Result<(), ApiError>>;

    /// A rule that must hold atomically with the write, checked by the store inside its write
    /// against the state it is about to change.
    fn check_at_commit(&self, _attrs: &Attributes<'_>, _state: &Snapshot) -> Result<(), ApiError> {
        Ok(())
    }
}

/// Whether no object of a configuration resource (`admissionregistration.k8s.io` policies or
/// webhook configurations) exists: their plugins then handle no request. Asked of the current
/// state each time, so that a configuration written by one request applies to the next.
pub(crate) fn none_configured(attrs: &Attributes<'_>, configs: &GroupResource) -> bool {
    attrs.store.snapshot().count(configs) == 0
}

/// A resource of `admissionregistration.k8s.io`, named once per process.
pub(crate) fn configs(resource: &'static str) -> GroupResource {
    GroupResource::new("admissionregistration.k8s.io", resource)
}

/// The admission chain of a server.
#[derive(Clone)]
pub struct Chain {
    mutating: Vec<Arc<dyn Mutating>>,
    validating: Vec<Arc<dyn Validating>>,
}

/// The built-in mutating plugins a real apiserver enables by default that kubefake implements,
/// by name, but those `disabled` names (`--disable-admission-plugins`).
fn builtin_mutating(disabled: &[String]) -> Vec<Arc<dyn Mutating>> {
    enabled(all_builtin_mutating(), disabled)
}

/// Every built-in mutating plugin of [`builtin_mutating`], by name, in the chain's order.
fn all_builtin_mutating() -> [(&'static str, Arc<dyn Mutating>); 6] {
    [
        ("ServiceAccount", Arc::new(service_account::ServiceAccount)),
        ("Priority", Arc::new(priority::Priority)),
        (
            "DefaultTolerationSeconds",
            Arc::new(default_toleration_seconds::DefaultTolerationSeconds),
        ),
        (
            "StorageObjectInUseProtection",
            Arc::new(storage_protection::StorageObjectInUseProtection),
        ),
        (
            "DefaultStorageClass",
            Arc::new(default_class::DefaultStorageClass),
        ),
        (
            "DefaultIngressClass",
            Arc::new(default_class::DefaultIngressClass),
        ),
    ]
}

/// The built-in validating plugins, but those `disabled`.
fn builtin_validating(disabled: &[String]) -> Vec<Arc<dyn Validating>> {
    enabled(all_builtin_validating(), disabled)
}

/// Every built-in validating plugin of [`builtin_validating`], by name, in the chain's order.
fn all_builtin_validating() -> [(&'static str, Arc<dyn Validating>); 6] {
    [
        (
            "NamespaceLifecycle",
            Arc::new(namespace_lifecycle::NamespaceLifecycle),
        ),
        ("ServiceAccount", Arc::new(service_account::ServiceAccount)),
        ("Priority", Arc::new(priority::Priority)),
        (
            "CertificateApproval",
            Arc::new(certificates::CertificateApproval),
        ),
        (
            "CertificateSigning",
            Arc::new(certificates::CertificateSigning),
        ),
        (
            "CertificateSubjectRestriction",
            Arc::new(certificates::CertificateSubjectRestriction),
        ),
    ]
}

fn enabled<T: ?Sized, const N: usize>(
    all: [(&str, Arc<T>); N],
    disabled: &[String],
) -> Vec<Arc<T>> {
    all.into_iter()
        .filter(|(name, _)| !disabled.iter().any(|d| d == name))
        .map(|(_, plugin)| plugin)
        .collect()
}

impl Default for Chain {
    /// The plugins a real apiserver enables by default that kubefake implements, and the
    /// checks its storages make once mutating admission is done.
    fn default() -> Chain {
        let mut mutating = builtin_mutating(&[]);
        mutating.push(Arc::new(rbac_escalation::RbacEscalation));
        Chain {
            mutating,
            validating: builtin_validating(&[]),
        }
    }
}

impl Chain {
    /// The default plugins (but the built-in ones named in `disabled`, as
    /// `--disable-admission-plugins` names them), then the admission webhooks (called through
    /// `client`), where the apiserver's default order puts them: after the built-in plugins of
    /// each phase (and before the storages' own checks).
    pub fn with_webhooks(client: Arc<WebhookClient>, disabled: &[String]) -> Chain {
        let mut mutating = builtin_mutating(disabled);
        mutating.push(Arc::new(mutating_policy::MutatingPolicies));
        mutating.push(Arc::new(webhook::MutatingWebhooks::new(client.clone())));
        mutating.push(Arc::new(rbac_escalation::RbacEscalation));
        let mut validating = builtin_validating(disabled);
        validating.push(Arc::new(policy::ValidatingPolicies));
        validating.push(Arc::new(webhook::ValidatingWebhooks::new(client)));
        Chain {
            mutating,
            validating,
        }
    }

    /// A chain of these plugins, in order.
    pub fn new(mutating: Vec<Arc<dyn Mutating>>, validating: Vec<Arc<dyn Validating>>) -> Chain {
        Chain {
            mutating,
            validating,
        }
    }

    /// Runs the mutating plugins in turn; then, when a plugin changed the object after an
    /// earlier plugin invoked a policy or webhook with `reinvocationPolicy: IfNeeded`, once
    /// more: every built-in plugin, and the IfNeeded policies and webhooks (the apiserver's
    /// reinvocation; changes among one plugin's own policies or webhooks it handles itself).
    pub async fn admit(&self, attrs: &Attributes<'_>, object: &mut Value) -> Result<(), ApiError> {
        let ctx = attrs.ctx;
        let mut after_if_needed: Option<Value> = None;
        for plugin in self.mutating.iter().filter(|p| p.handles(attrs)) {
            let before = ctx.reinvocation().if_needed_invoked;
            plugin.admit(attrs, object).await?;
            if !before && ctx.reinvocation().if_needed_invoked {
                after_if_needed = Some(object.clone());
            }
        }
        if after_if_needed.is_none_or(|seen| seen == *object) {
            return Ok(());
        }
        ctx.set_reinvoking(true);
        let mut again = Ok(());
        for plugin in self.mutating.iter().filter(|p| p.handles(attrs)) {
            again = plugin.admit(attrs, object).await;
            if again.is_err() {
                break;
            }
        }
        ctx.set_reinvoking(false);
        again
    }

    /// Runs the mutating plugins for a delete.
    pub async fn admit_delete(&self, attrs: &Attributes<'_>) -> Result<(), ApiError> {
        for plugin in self.mutating.iter().filter(|p| p.handles(attrs)) {
            plugin.admit_delete(attrs).await?;
        }
        Ok(())
    }

    /// Runs the validating plugins; the first refusal wins.
    pub async fn validate(
        &self,
        attrs: &Attributes<'_>,
        object: Option<&Value>,
    ) -> Result<(), ApiError> {
        for plugin in self.validating.iter().filter(|p| p.handles(attrs)) {
            plugin.validate(attrs, object).await?;
        }
        Ok(())
    }

    /// The commit-time checks of every validating plugin.
    pub fn check_at_commit(
        &self,
        attrs: &Attributes<'_>,
        state: &Snapshot,
    ) -> Result<(), ApiError> {
        for plugin in &self.validating {
            plugin.check_at_commit(attrs, state)?;
        }
        Ok(())
    }
}

/// The `authorizer` variable of admission expressions: checks asked of the server's authorizer
/// as the request's user (or, after `serviceAccount(ns, name)`, as that service account), and
/// `authorizer.requestResource` for the request's own resource.
pub fn authorizer(attrs: &Attributes<'_>, snap: &Snapshot) -> crate::cel::Authz {
    use crate::cel::{AuthzDecision, AuthzQuestion};
    use crate::filters::authorization::{self, Attributes as Asked, Decision};
    let mode = attrs.authorization;
    let snap = snap.clone();
    let user = attrs.ctx.user.clone();
    let check = move |q: &AuthzQuestion| {
        let who = match &q.service_account {
            Some((ns, name)) => crate::context::UserInfo {
                name: format!("system:serviceaccount:{ns}:{name}"),
                groups: vec![
                    "system:serviceaccounts".into(),
                    format!("system:serviceaccounts:{ns}"),
                ],
                ..Default::default()
            },
            None => (*user).clone(),
        };
        let asked = Asked {
            verb: q.verb.clone(),
            resource_request: q.resource_request,
            group: q.group.clone(),
            version: "*".into(),
            resource: q.resource.clone(),
            subresource: q.subresource.clone(),
            namespace: q.namespace.clone(),
            name: q.name.clone(),
            path: q.path.clone(),
        };
        let (allowed, reason) = match authorization::authorize(mode, &snap, &who, &asked) {
            Decision::Allow(r) => (true, r),
            Decision::Deny(r) => (false, r),
        };
        AuthzDecision {
            allowed,
            reason,
            error: String::new(),
        }
    };
    let request = AuthzQuestion {
        group: attrs.resource.group.clone(),
        resource: attrs.resource.plural.clone(),
        subresource: attrs.subresource.to_string(),
        namespace: attrs.namespace.to_string(),
        name: attrs.name.to_string(),
        ..AuthzQuestion::default()
    };
    crate::cel::Authz::new(std::rc::Rc::new(check), request)
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::*;

    /// The built-in plugins by name, RBAC's escalation checks (which the chain runs last)
    /// among them.
    fn mutating() -> Vec<(&'static str, Arc<dyn Mutating>)> {
        let mut all = Vec::from(all_builtin_mutating());
        all.push(("RbacEscalation", Arc::new(rbac_escalation::RbacEscalation)));
        all
    }

    fn validating() -> Vec<(&'static str, Arc<dyn Validating>)> {
        Vec::from(all_builtin_validating())
    }

    /// The served resource, and the registry that serves it.
    fn served(api_version: &str, plural: &str) -> (Arc<Registry>, Arc<ApiResource>) {
        let registry = Arc::new(Registry::build(&[], Vec::new(), "x"));
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        let Some(resource) = registry.resolve(group, version, plural) else {
            panic!("{api_version} {plural} is not served");
        };
        (registry, resource)
    }

    /// A create of `resource` by the server itself, in namespace `ns`.
    fn attributes<'a>(
        store: &'a Store,
        ctx: &'a Context,
        registry: &Arc<Registry>,
        resource: &'a ApiResource,
    ) -> Attributes<'a> {
        Attributes {
            store,
            ctx,
            resource,
            request_resource: resource,
            subresource: "",
            operation: Operation::Create,
            namespace: "ns",
            name: "n",
            old_object: None,
            registry: registry.clone(),
            authorization: Mode::AlwaysAllow,
        }
    }

    /// The names of the plugins that handle the request, mutating and validating.
    fn handling(
        attrs: &Attributes<'_>,
        mutating: &[(&'static str, Arc<dyn Mutating>)],
        validating: &[(&'static str, Arc<dyn Validating>)],
    ) -> (Vec<&'static str>, Vec<&'static str>) {
        let m = mutating.iter().filter(|(_, p)| p.handles(attrs));
        let v = validating.iter().filter(|(_, p)| p.handles(attrs));
        (m.map(|(n, _)| *n).collect(), v.map(|(n, _)| *n).collect())
    }

    /// The policy and webhook plugins handle every request once an object of their
    /// configuration resource exists, from the write that follows it on: no request pays for
    /// them before.
    #[rstest]
    #[case("mutatingadmissionpolicies", &["MutatingPolicies"], &[])]
    #[case("mutatingwebhookconfigurations", &["MutatingWebhooks"], &[])]
    #[case("validatingadmissionpolicies", &[], &["ValidatingPolicies"])]
    #[case("validatingwebhookconfigurations", &[], &["ValidatingWebhooks"])]
    fn configured_plugins_handle_once_configured(
        #[case] configs: &str,
        #[case] want_mutating: &[&str],
        #[case] want_validating: &[&str],
    ) -> Result<(), ApiError> {
        let client = Arc::new(WebhookClient::default());
        let mutating: Vec<(&str, Arc<dyn Mutating>)> = vec![
            (
                "MutatingPolicies",
                Arc::new(mutating_policy::MutatingPolicies),
            ),
            (
                "MutatingWebhooks",
                Arc::new(webhook::MutatingWebhooks::new(client.clone())),
            ),
        ];
        let validating: Vec<(&str, Arc<dyn Validating>)> = vec![
            ("ValidatingPolicies", Arc::new(policy::ValidatingPolicies)),
            (
                "ValidatingWebhooks",
                Arc::new(webhook::ValidatingWebhooks::new(client)),
            ),
        ];
        let (store, ctx) = (Store::new(16, 16), Context::internal());
        let (registry, resource) = served("v1", "configmaps");
        let attrs = attributes(&store, &ctx, &registry, &resource);
        let (m, v) = handling(&attrs, &mutating, &validating);
        assert!(m.is_empty() && v.is_empty(), "{m:?} {v:?}");
        let gr = GroupResource::new("admissionregistration.k8s.io", configs);
        let config = serde_json::json!({"metadata": {"name": "c"}});
        store.write(|txn| txn.put(&gr, crate::store::ObjectKey::new("", "c"), config))?;
        let (m, v) = handling(&attrs, &mutating, &validating);
        assert_eq!(
            (m.as_slice(), v.as_slice()),
            (want_mutating, want_validating)
        );
        Ok(())
    }

    /// Which built-in plugins handle a request: a request none of them acts on costs the
    /// chain no future, and one they act on still reaches them.
    #[rstest]
    #[case("v1", "configmaps", "", Operation::Create, Mode::Rbac, &[], &[])]
    #[case("v1", "configmaps", "", Operation::Delete, Mode::Rbac, &[], &[])]
    #[case(
        "v1",
        "pods",
        "",
        Operation::Create,
        Mode::AlwaysAllow,
        &["ServiceAccount", "Priority", "DefaultTolerationSeconds"],
        &["ServiceAccount"]
    )]
    #[case(
        "v1",
        "pods",
        "",
        Operation::Update,
        Mode::AlwaysAllow,
        &["Priority", "DefaultTolerationSeconds"],
        &[]
    )]
    #[case("v1", "pods", "status", Operation::Update, Mode::AlwaysAllow, &[], &[])]
    #[case(
        "v1",
        "pods",
        "ephemeralcontainers",
        Operation::Update,
        Mode::AlwaysAllow,
        &[],
        &["ServiceAccount"]
    )]
    #[case("v1", "pods", "exec", Operation::Connect, Mode::AlwaysAllow, &[], &[])]
    #[case(
        "v1",
        "persistentvolumeclaims",
        "",
        Operation::Create,
        Mode::AlwaysAllow,
        &["StorageObjectInUseProtection", "DefaultStorageClass"],
        &[]
    )]
    #[case(
        "v1",
        "persistentvolumes",
        "",
        Operation::Create,
        Mode::AlwaysAllow,
        &["StorageObjectInUseProtection"],
        &[]
    )]
    #[case(
        "networking.k8s.io/v1",
        "ingresses",
        "",
        Operation::Create,
        Mode::AlwaysAllow,
        &["DefaultIngressClass"],
        &[]
    )]
    #[case("networking.k8s.io/v1", "ingresses", "", Operation::Update, Mode::AlwaysAllow, &[], &[])]
    #[case("v1", "namespaces", "", Operation::Delete, Mode::AlwaysAllow, &[], &["NamespaceLifecycle"])]
    #[case("v1", "namespaces", "", Operation::Create, Mode::AlwaysAllow, &[], &[])]
    #[case(
        "scheduling.k8s.io/v1",
        "priorityclasses",
        "",
        Operation::Delete,
        Mode::AlwaysAllow,
        &[],
        &["Priority"]
    )]
    #[case(
        "rbac.authorization.k8s.io/v1",
        "clusterroles",
        "",
        Operation::Create,
        Mode::Rbac,
        &["RbacEscalation"],
        &[]
    )]
    #[case(
        "rbac.authorization.k8s.io/v1",
        "clusterroles",
        "",
        Operation::Create,
        Mode::AlwaysAllow,
        &[],
        &[]
    )]
    #[case(
        "rbac.authorization.k8s.io/v1",
        "rolebindings",
        "",
        Operation::Delete,
        Mode::Rbac,
        &[],
        &[]
    )]
    fn builtin_plugins_handle(
        #[case] api_version: &str,
        #[case] plural: &str,
        #[case] subresource: &str,
        #[case] operation: Operation,
        #[case] authorization: Mode,
        #[case] want_mutating: &[&str],
        #[case] want_validating: &[&str],
    ) {
        let (store, ctx) = (Store::new(16, 16), Context::internal());
        let (registry, resource) = served(api_version, plural);
        let attrs = Attributes {
            subresource,
            operation,
            authorization,
            ..attributes(&store, &ctx, &registry, &resource)
        };
        let (got_mutating, got_validating) = handling(&attrs, &mutating(), &validating());
        assert_eq!(got_mutating, want_mutating);
        assert_eq!(got_validating, want_validating);
    }
}
