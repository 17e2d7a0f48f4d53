//! The authorization/v1 SubjectAccessReview kind: "may this user?", asked of the server's
//! authorizer for the user, groups and extra the spec names (what webhook authorizers and
//! aggregated servers ask).

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::Value;

use super::{answer, invalid, metadata_errors, spec_errors, spec_user, ReviewStrategy, GROUP};
use crate::error::ApiError;
use crate::registry::builtin;
use crate::registry::resource::{Action, ActionCall, ApiResource};

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind(
        GROUP,
        "v1",
        "subjectaccessreviews",
        Arc::new(ReviewStrategy),
    )
    .with(|r| r.served_by(Arc::new(SubjectAccessReview)))
    .build()
}

struct SubjectAccessReview;

impl Action for SubjectAccessReview {
    fn body_kind(&self) -> Option<&'static str> {
        Some("SubjectAccessReview")
    }

    fn serve<'a>(&'a self, call: ActionCall<'a>) -> BoxFuture<'a, Result<(u16, Value), ApiError>> {
        Box::pin(async move {
            let body = call.body.clone().unwrap_or(Value::Null);
            let mut errs = spec_errors(&body["spec"], true);
            errs.extend(metadata_errors(&body, false));
            if !errs.is_empty() {
                return Err(invalid("SubjectAccessReview", errs));
            }
            let user = spec_user(&body["spec"]);
            Ok(answer(&call, &user, body))
        })
    }
}
