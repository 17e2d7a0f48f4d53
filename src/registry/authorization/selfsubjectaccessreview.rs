//! The authorization/v1 SelfSubjectAccessReview kind: "may I?" (`kubectl auth can-i`), asked
//! of the server's authorizer as the requesting user.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::Value;

use super::{answer, invalid, metadata_errors, spec_errors, ReviewStrategy, GROUP};
use crate::error::ApiError;
use crate::registry::builtin;
use crate::registry::resource::{Action, ActionCall, ApiResource};

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind(
        GROUP,
        "v1",
        "selfsubjectaccessreviews",
        Arc::new(ReviewStrategy),
    )
    .with(|r| r.served_by(Arc::new(SelfSubjectAccessReview)))
    .build()
}

struct SelfSubjectAccessReview;

impl Action for SelfSubjectAccessReview {
    fn body_kind(&self) -> Option<&'static str> {
        Some("SelfSubjectAccessReview")
    }

    fn serve<'a>(&'a self, call: ActionCall<'a>) -> BoxFuture<'a, Result<(u16, Value), ApiError>> {
        Box::pin(async move {
            let body = call.body.clone().unwrap_or(Value::Null);
            let mut errs = spec_errors(&body["spec"], false);
            errs.extend(metadata_errors(&body, false));
            if !errs.is_empty() {
                return Err(invalid("SelfSubjectAccessReview", errs));
            }
            Ok(answer(&call, &call.ctx.user, body))
        })
    }
}
