//! The request context: everything one request (or one controller step) carries down the write
//! path, passed explicitly as `&Context`.
//!
//! A write may await (an admission webhook, a conversion) and resume on another runtime thread,
//! so nothing about a request may live in thread-locals: who is asking, whether it is a dry run,
//! which field manager it records, the `Warning` headers it raised, and the controller work its
//! commits caused all travel here. The context is shared by reference between the handler and
//! the code it calls; its few mutable parts sit behind uncontended mutexes.

use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use parking_lot::Mutex;

use crate::controllers::WorkQueue;
use crate::filters::faults::Fired;
use crate::registry::strategy::FieldValidation;

/// The user name of requests without credentials.
pub const ANONYMOUS: &str = "system:anonymous";
/// The group of every authenticated user.
pub const AUTHENTICATED: &str = "system:authenticated";
/// The group of anonymous requests.
pub const UNAUTHENTICATED: &str = "system:unauthenticated";
/// The group whose members every request is allowed to (the apiserver's privileged group).
pub const MASTERS: &str = "system:masters";

/// Who makes a request, as authentication would report it (`user.Info` in the apiserver).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct UserInfo {
    /// The user name (`system:admin`, `system:serviceaccount:ns:name`, ...).
    pub name: String,
    /// The user's uid, when the authenticator knows one.
    pub uid: String,
    /// Groups the user belongs to.
    pub groups: Vec<String>,
    /// What else the authenticator knows (a service account token's pod, an impersonated
    /// user's `Impersonate-Extra-*`): RBAC ignores it, webhooks and reviews see it.
    pub extra: BTreeMap<String, Vec<String>>,
}

impl UserInfo {
    /// The cluster administrator: the server's own writes, and the user of the credential
    /// in the kubeconfig kubefake writes.
    pub fn admin() -> UserInfo {
        UserInfo {
            name: "system:admin".into(),
            groups: vec!["system:masters".into(), "system:authenticated".into()],
            ..UserInfo::default()
        }
    }

    /// Who a request without credentials is, when anonymous requests are allowed.
    pub fn anonymous() -> UserInfo {
        UserInfo {
            name: ANONYMOUS.into(),
            groups: vec![UNAUTHENTICATED.into()],
            ..UserInfo::default()
        }
    }

    /// The identity of an in-process controller (as kube-controller-manager's service accounts).
    pub fn controller(name: &str) -> UserInfo {
        UserInfo {
            name: format!("system:serviceaccount:kube-system:{name}"),
            groups: vec![
                "system:serviceaccounts".into(),
                "system:serviceaccounts:kube-system".into(),
                AUTHENTICATED.into(),
            ],
            ..UserInfo::default()
        }
    }
}

/// The per-request state of the write path. See the module documentation.
pub struct Context {
    /// The request's id in logs and in the `Audit-Id` response header.
    pub audit_id: String,
    /// Who makes the request (shared: a token's user is one for all its requests).
    pub user: Arc<UserInfo>,
    /// `dryRun=All`: everything runs, nothing is stored.
    pub dry_run: bool,
    /// What unknown and duplicate fields in the body do.
    pub field_validation: FieldValidation,
    /// The field manager recorded in `managedFields` (operation Update); `None` for writes that
    /// are not tracked (server-side apply records its own entry).
    pub field_manager: Option<String>,
    /// The object name the request's URL gives (`requestInfo.Name`: empty for a POST), which
    /// authorization checks made during the write name, as the apiserver's do (RBAC's
    /// `escalate`); `None` for the server's own writes and controllers', whose checks name
    /// the object written (as their own requests would).
    pub request_name: Option<String>,
    /// The fault rule that fired on the request and lets it through (a delay, or a watch
    /// that is to end early), for the watch and the request log.
    pub fault: Option<Fired>,
    warnings: Mutex<Warnings>,
    work: Arc<WorkQueue>,
    reinvocation: Mutex<Reinvocation>,
    memos: Mutex<Vec<(&'static str, ReinvocationMemo)>>,
}

/// What one mutating plugin remembers of its first run for the second (the apiserver's
/// per-plugin reinvocation context): the object as it left the plugin, and the IfNeeded
/// policies or webhooks it invoked. The second run invokes those again only when a later
/// plugin changed the object since, and never one the first run did not invoke.
#[derive(Debug, Clone, Default)]
pub struct ReinvocationMemo {
    /// The object the plugin's first run returned.
    pub output: serde_json::Value,
    /// The IfNeeded policies or webhooks it invoked, by identity.
    pub invoked: HashSet<String>,
}

/// Where mutating admission stands with `reinvocationPolicy: IfNeeded` for this request.
#[derive(Debug, Clone, Copy, Default)]
pub struct Reinvocation {
    /// A policy or webhook with `reinvocationPolicy: IfNeeded` was invoked.
    pub if_needed_invoked: bool,
    /// The mutating plugins run a second time: policies and webhooks run only their IfNeeded
    /// ones.
    pub reinvoking: bool,
}

impl Context {
    /// The context of a client request, with its own controller work queue.
    pub fn request(audit_id: String, user: Arc<UserInfo>) -> Context {
        Context {
            audit_id,
            user,
            dry_run: false,
            field_validation: FieldValidation::default(),
            field_manager: None,
            request_name: None,
            fault: None,
            warnings: Mutex::default(),
            reinvocation: Mutex::default(),
            memos: Mutex::default(),
            work: Arc::new(WorkQueue::default()),
        }
    }

    /// A context for the server's own writes (bootstrap objects, preloaded files).
    pub fn internal() -> Context {
        Context::request(String::new(), Arc::new(UserInfo::admin()))
    }

    /// The context a controller step runs in: the controller's identity, and the same work
    /// queue as the request that caused the step, so that work it causes joins that queue.
    pub fn for_controller(&self, name: &str) -> Context {
        Context {
            audit_id: self.audit_id.clone(),
            user: Arc::new(UserInfo::controller(name)),
            dry_run: false,
            field_validation: FieldValidation::Ignore,
            field_manager: None,
            request_name: None,
            fault: None,
            warnings: Mutex::default(),
            reinvocation: Mutex::default(),
            memos: Mutex::default(),
            work: self.work.clone(),
        }
    }

    /// The same context, its writes recorded in managedFields under `manager`: the name the
    /// real component's requests carry (the first segment of its user agent, as
    /// `kube-controller-manager`), so objects written by kubefake's controllers show the
    /// entries a real cluster shows.
    pub fn managed_by(mut self, manager: &str) -> Context {
        self.field_manager = Some(manager.to_string());
        self
    }

    /// Raises a `Warning` header for this request (each distinct text once; truncated as the
    /// apiserver's warning recorder truncates, see [`Warnings`]).
    pub fn warn(&self, message: impl Into<String>) {
        self.warnings.lock().add(message.into());
    }

    /// The warnings raised so far, in order.
    pub fn warnings(&self) -> Vec<String> {
        self.warnings.lock().list.clone()
    }

    /// Mutating admission's reinvocation state.
    pub fn reinvocation(&self) -> Reinvocation {
        *self.reinvocation.lock()
    }

    /// Records that an IfNeeded policy or webhook was invoked.
    pub fn invoked_if_needed(&self) {
        self.reinvocation.lock().if_needed_invoked = true;
    }

    /// Starts (or ends) the second run of the mutating plugins, and forgets the invocations of
    /// the first.
    pub fn set_reinvoking(&self, reinvoking: bool) {
        *self.reinvocation.lock() = Reinvocation {
            if_needed_invoked: false,
            reinvoking,
        };
    }

    /// Keeps what a mutating plugin's first run invoked, for the second run.
    pub fn remember(&self, plugin: &'static str, memo: ReinvocationMemo) {
        let mut memos = self.memos.lock();
        memos.retain(|(p, _)| *p != plugin);
        memos.push((plugin, memo));
    }

    /// What a mutating plugin's first run kept (see [`Context::remember`]).
    pub fn memo(&self, plugin: &str) -> Option<ReinvocationMemo> {
        let memos = self.memos.lock();
        memos
            .iter()
            .find(|(p, _)| *p == plugin)
            .map(|(_, m)| m.clone())
    }

    /// The controller work queue this request's commits feed.
    pub fn work(&self) -> &WorkQueue {
        &self.work
    }
}

/// The warnings of one request, kept as the apiserver's warning recorder keeps them
/// (k8s.io/apiserver `filters/warning.go`): each distinct text once, in order, in time linear in
/// their number; once their total passes [`WARNINGS_TOTAL_RUNES`] characters every warning,
/// those already kept included, is cut to [`WARNING_ITEM_RUNES`], and warnings stop being added
/// when the total passes the limit again.
#[derive(Default)]
pub struct Warnings {
    list: Vec<String>,
    seen: HashSet<String>,
    written: usize,
    truncating: bool,
}

/// The total characters of warnings before they are truncated (the apiserver's 4 Ki).
pub const WARNINGS_TOTAL_RUNES: usize = 4 * 1024;
/// The characters a warning is cut to once truncating.
pub const WARNING_ITEM_RUNES: usize = 256;

impl Warnings {
    fn add(&mut self, text: String) {
        if text.is_empty() || (self.truncating && self.written >= WARNINGS_TOTAL_RUNES) {
            return;
        }
        if !self.seen.insert(text.clone()) {
            return;
        }
        let runes = text.chars().count();
        if self.truncating {
            self.written += runes.min(WARNING_ITEM_RUNES);
            self.list.push(cut(text));
        } else if self.written + runes <= WARNINGS_TOTAL_RUNES {
            self.written += runes;
            self.list.push(text);
        } else {
            self.truncating = true;
            self.list.push(text);
            self.list = std::mem::take(&mut self.list)
                .into_iter()
                .map(cut)
                .collect();
            self.written = self.list.iter().map(|w| w.chars().count()).sum();
        }
    }
}

fn cut(text: String) -> String {
    match text.char_indices().nth(WARNING_ITEM_RUNES) {
        Some((at, _)) => text[..at].to_string(),
        None => text,
    }
}

/// The `Warning` header value for a message: code 299, agent "-", the text quoted.
pub fn warning_header_value(message: &str) -> String {
    let escaped = message.replace('\\', "\\\\").replace('"', "\\\"");
    format!("299 - \"{escaped}\"")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warnings_are_kept_once_in_order() {
        let ctx = Context::internal();
        ctx.warn("a");
        ctx.warn("b");
        ctx.warn("a");
        assert_eq!(ctx.warnings(), ["a", "b"]);
        assert_eq!(
            warning_header_value("unknown field \"spec.x\""),
            "299 - \"unknown field \\\"spec.x\\\"\""
        );
    }

    #[test]
    fn many_warnings_are_truncated_as_the_apiserver_does() {
        let ctx = Context::internal();
        ctx.warn("");
        assert!(ctx.warnings().is_empty());
        // Short ones fit within the total.
        for i in 0..100 {
            ctx.warn(format!("w{i:02}"));
        }
        assert_eq!(ctx.warnings().len(), 100);
        // A long one passes the total: every warning is cut to 256 characters, and warnings
        // are added until the total passes 4 Ki again.
        ctx.warn("x".repeat(5000));
        let w = ctx.warnings();
        assert_eq!(w[0], "w00");
        assert_eq!(w[100], "x".repeat(WARNING_ITEM_RUNES));
        for i in 0..200_000 {
            ctx.warn(format!("{i:0>300}"));
        }
        let w = ctx.warnings();
        let total: usize = w.iter().map(|t| t.chars().count()).sum();
        assert!((WARNINGS_TOTAL_RUNES..WARNINGS_TOTAL_RUNES + WARNING_ITEM_RUNES).contains(&total));
        assert_eq!(w[101], format!("{:0>256}", ""));
        assert!(w.iter().all(|t| t.chars().count() <= WARNING_ITEM_RUNES));
    }

    #[test]
    fn controllers_share_the_request_queue() {
        let ctx = Context::internal();
        let step = ctx.for_controller("namespace-controller");
        assert!(std::ptr::eq(ctx.work(), step.work()));
        assert_eq!(
            step.user.name,
            "system:serviceaccount:kube-system:namespace-controller"
        );
    }
}
