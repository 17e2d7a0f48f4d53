//! The authorization/v1 LocalSubjectAccessReview kind: a SubjectAccessReview confined to the
//! namespace it is created in, so that namespace admins may ask it.

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::{json, Value};

use super::{answer, invalid, metadata_errors, spec_errors, spec_user, ReviewStrategy, GROUP};
use crate::error::{field, ApiError};
use crate::registry::builtin;
use crate::registry::object_meta::meta_str;
use crate::registry::resource::{Action, ActionCall, ApiResource};

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind(
        GROUP,
        "v1",
        "localsubjectaccessreviews",
        Arc::new(ReviewStrategy),
    )
    .with(|r| r.served_by(Arc::new(LocalSubjectAccessReview)))
    .build()
}

struct LocalSubjectAccessReview;

impl Action for LocalSubjectAccessReview {
    fn body_kind(&self) -> Option<&'static str> {
        Some("LocalSubjectAccessReview")
    }

    fn serve<'a>(&'a self, call: ActionCall<'a>) -> BoxFuture<'a, Result<(u16, Value), ApiError>> {
        Box::pin(async move {
            let mut body = call.body.clone().unwrap_or(Value::Null);
            let ns = meta_str(&body, "namespace");
            if !ns.is_empty() && ns != call.namespace {
                return Err(ApiError::bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request",
                ));
            }
            body["metadata"]["namespace"] = json!(call.namespace);
            let spec = &body["spec"];
            let mut errs = spec_errors(spec, true);
            errs.extend(metadata_errors(&body, true));
            let res_ns = spec["resourceAttributes"]["namespace"]
                .as_str()
                .unwrap_or("");
            if spec["resourceAttributes"].is_object() && res_ns != call.namespace {
                errs.push(field::invalid(
                    "spec.resourceAttributes.namespace",
                    &json!(res_ns),
                    "must match metadata.namespace",
                ));
            }
            if spec["nonResourceAttributes"].is_object() {
                errs.push(field::invalid(
                    "spec.nonResourceAttributes",
                    &spec["nonResourceAttributes"],
                    "disallowed on this kind of request",
                ));
            }
            if !errs.is_empty() {
                return Err(invalid("LocalSubjectAccessReview", errs));
            }
            let user = spec_user(&body["spec"]);
            Ok(answer(&call, &user, body))
        })
    }
}
