//! The service account controller of kube-controller-manager (`serviceaccount-controller`):
//! every active namespace has the ServiceAccount `default`, which pods run as when they name
//! none (and which the ServiceAccount admission plugin requires to exist). It is created when
//! the namespace is created (or changes) and again when it is deleted while the namespace is
//! active; nothing is created in a terminating namespace.

use serde_json::{json, Value};

use super::create_logged;
use crate::context::Context;
use crate::registry::core::namespace::is_active;
use crate::state::State;
use crate::store::{GroupResource, ObjectKey};

/// The account every namespace gets.
pub const DEFAULT_SERVICE_ACCOUNT: &str = "default";
/// Who the controller writes as (`system:serviceaccount:kube-system:<name>`).
pub const CONTROLLER: &str = "service-account-controller";

/// The service accounts table.
pub fn service_accounts_gr() -> GroupResource {
    GroupResource::new("", "serviceaccounts")
}

/// The ServiceAccount the controller creates: a name and nothing else, as
/// `DefaultServiceAccountsControllerOptions` has it.
fn default_account(namespace: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ServiceAccount",
        "metadata": {"name": DEFAULT_SERVICE_ACCOUNT, "namespace": namespace}})
}

/// `syncNamespace`: creates `default` in an active namespace that lacks it.
pub async fn reconcile(state: &State, ctx: &Context, namespace: &str) {
    let snapshot = state.store.snapshot();
    if !is_active(&snapshot, namespace) {
        return;
    }
    let key = ObjectKey::new(namespace, DEFAULT_SERVICE_ACCOUNT);
    if snapshot.get(&service_accounts_gr(), &key).is_some() {
        return;
    }
    drop(snapshot);
    let Some(res) = state.registry().by_group_resource(&service_accounts_gr()) else {
        return;
    };
    create_logged(state, ctx, &res, namespace, default_account(namespace)).await;
}
