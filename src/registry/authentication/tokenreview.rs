//! The authentication/v1 TokenReview kind: whom a bearer token authenticates, for which
//! audiences (what webhook token authenticators and aggregated servers ask).

use std::sync::Arc;

use futures_util::future::BoxFuture;
use serde_json::{json, Map, Value};

use super::{user_info, ReviewStrategy, GROUP};
use crate::error::ApiError;
use crate::registry::builtin;
use crate::registry::resource::{Action, ActionCall, ApiResource};

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind(GROUP, "v1", "tokenreviews", Arc::new(ReviewStrategy))
        .with(|r| r.served_by(Arc::new(TokenReview)))
        .build()
}

struct TokenReview;

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}

impl Action for TokenReview {
    fn body_kind(&self) -> Option<&'static str> {
        Some("TokenReview")
    }

    fn serve<'a>(&'a self, call: ActionCall<'a>) -> BoxFuture<'a, Result<(u16, Value), ApiError>> {
        Box::pin(async move {
            let mut review = call.body.clone().unwrap_or(Value::Null);
            let token = review["spec"]["token"].as_str().unwrap_or("").to_string();
            if token.is_empty() {
                return Err(ApiError::bad_request(
                    "token is required for TokenReview in authentication",
                ));
            }
            let authn = &call.state.options.authentication;
            let mut audiences = strings(&review["spec"]["audiences"]);
            if audiences.is_empty() {
                audiences = authn.service_accounts.api_audiences.clone();
            }
            let mut status = Map::new();
            match authn.token_user(&call.state.store, &token, Some(&audiences)) {
                Ok(Some((user, matched))) => {
                    status.insert("authenticated".into(), json!(true));
                    status.insert("user".into(), user_info(&user));
                    status.insert("audiences".into(), json!(matched));
                }
                Ok(None) => {
                    status.insert("user".into(), json!({}));
                    status.insert("error".into(), json!("invalid bearer token"));
                }
                Err(e) => {
                    status.insert("user".into(), json!({}));
                    status.insert("error".into(), json!(e));
                }
            }
            review["status"] = Value::Object(status);
            Ok((201, review))
        })
    }
}
