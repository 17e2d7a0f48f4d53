//! The request context: everything one request (or one controller step) carries down the write
//! path, passed explicitly as `&Context`.
//!
//! A write may await (an admission webhook, a conversion) and resume on another runtime thread,
//! so nothing about a request may live in thread-locals: who is asking, whether it is a dry run,
//! which field manager it records, the `Warning` headers it raised, and the controller work its
//! commits caused all travel here. The context is shared by reference between the handler and
//! the code it calls; its few mutable parts sit behind uncontended mutexes.

use std::sync::Arc;

use parking_lot::Mutex;

use crate::controllers::WorkQueue;
use crate::registry::strategy::FieldValidation;

/// Who makes a request, as authentication would report it (`user.Info` in the apiserver).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UserInfo {
    /// The user name (`system:admin`, `system:serviceaccount:ns:name`, ...).
    pub name: String,
    /// The user's uid, when the authenticator knows one.
    pub uid: String,
    /// Groups the user belongs to.
    pub groups: Vec<String>,
}

impl UserInfo {
    /// The cluster administrator every request is made as until authentication exists.
    pub fn admin() -> UserInfo {
        UserInfo {
            name: "system:admin".into(),
            uid: String::new(),
            groups: vec!["system:masters".into(), "system:authenticated".into()],
        }
    }

    /// The identity of an in-process controller (as kube-controller-manager's service accounts).
    pub fn controller(name: &str) -> UserInfo {
        UserInfo {
            name: format!("system:serviceaccount:kube-system:{name}"),
            uid: String::new(),
            groups: vec![
                "system:serviceaccounts".into(),
                "system:serviceaccounts:kube-system".into(),
                "system:authenticated".into(),
            ],
        }
    }
}

/// The per-request state of the write path. See the module documentation.
pub struct Context {
    /// The request's id in logs and in the `Audit-Id` response header.
    pub audit_id: String,
    /// Who makes the request.
    pub user: UserInfo,
    /// `dryRun=All`: everything runs, nothing is stored.
    pub dry_run: bool,
    /// What unknown and duplicate fields in the body do.
    pub field_validation: FieldValidation,
    /// The field manager recorded in `managedFields` (operation Update); `None` for writes that
    /// are not tracked (server-side apply records its own entry).
    pub field_manager: Option<String>,
    warnings: Mutex<Vec<String>>,
    work: Arc<WorkQueue>,
}

impl Context {
    /// The context of a client request, with its own controller work queue.
    pub fn request(audit_id: String, user: UserInfo) -> Context {
        Context {
            audit_id,
            user,
            dry_run: false,
            field_validation: FieldValidation::default(),
            field_manager: None,
            warnings: Mutex::new(Vec::new()),
            work: Arc::new(WorkQueue::default()),
        }
    }

    /// A context for the server's own writes (bootstrap objects, preloaded files).
    pub fn internal() -> Context {
        Context::request(String::new(), UserInfo::admin())
    }

    /// The context a controller step runs in: the controller's identity, and the same work
    /// queue as the request that caused the step, so that work it causes joins that queue.
    pub fn for_controller(&self, name: &str) -> Context {
        Context {
            audit_id: self.audit_id.clone(),
            user: UserInfo::controller(name),
            dry_run: false,
            field_validation: FieldValidation::Ignore,
            field_manager: None,
            warnings: Mutex::new(Vec::new()),
            work: self.work.clone(),
        }
    }

    /// Raises a `Warning` header for this request (each distinct text once).
    pub fn warn(&self, message: impl Into<String>) {
        let message = message.into();
        let mut list = self.warnings.lock();
        if !list.contains(&message) {
            list.push(message);
        }
    }

    /// The warnings raised so far, in order.
    pub fn warnings(&self) -> Vec<String> {
        self.warnings.lock().clone()
    }

    /// The controller work queue this request's commits feed.
    pub fn work(&self) -> &WorkQueue {
        &self.work
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
