//! `nodes/{name}/proxy` and `services/{name}/proxy` (with or without a path after them): the
//! apiserver reads the object, then dials what serves it. kubefake runs no kubelets and no
//! containers, so once the object exists the answer is the apiserver's for a dial that fails:
//! 503 ServiceUnavailable, `error trying to reach service: ...`.

use futures_util::future::BoxFuture;
use serde_json::Value;

use crate::error::ApiError;
use crate::registry::resource::{Action, ActionCall};
use crate::registry::store as rest;

/// The proxy of an object nothing serves.
pub struct Unreachable {
    /// Why nothing is reached, after the object's name (`runs no kubelet for node`).
    pub why: &'static str,
}

impl Action for Unreachable {
    fn connects(&self) -> bool {
        true
    }

    fn serve<'a>(&'a self, call: ActionCall<'a>) -> BoxFuture<'a, Result<(u16, Value), ApiError>> {
        Box::pin(async move {
            rest::get(call.state, call.res, call.namespace, call.name)?;
            Err(ApiError::status(
                503,
                "ServiceUnavailable",
                format!(
                    "error trying to reach service: kubefake {} {:?}",
                    self.why, call.name
                ),
            ))
        })
    }
}
