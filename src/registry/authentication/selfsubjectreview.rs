//! The authentication/v1 SelfSubjectReview kind: who the server thinks the requester is, after
//! authentication and impersonation (`kubectl auth whoami`).

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::{json, Value};

use super::{user_info, ReviewStrategy, GROUP};
use crate::error::ApiError;
use crate::registry::builtin;
use crate::registry::object_meta::now_rfc3339;
use crate::registry::resource::{Action, ActionCall, ApiResource};

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind(GROUP, "v1", "selfsubjectreviews", Arc::new(ReviewStrategy))
        .with(|r| r.served_by(Arc::new(SelfSubjectReview)))
        .build()
}

struct SelfSubjectReview;

impl Action for SelfSubjectReview {
    fn body_kind(&self) -> Option<&'static str> {
        Some("SelfSubjectReview")
    }

    fn serve<'a>(&'a self, call: ActionCall<'a>) -> BoxFuture<'a, Result<(u16, Value), ApiError>> {
        Box::pin(async move {
            let review = json!({"apiVersion": format!("{GROUP}/v1"), "kind": "SelfSubjectReview",
                "metadata": {"creationTimestamp": now_rfc3339()},
                "status": {"userInfo": user_info(&call.ctx.user)}});
            Ok((201, review))
        })
    }
}
