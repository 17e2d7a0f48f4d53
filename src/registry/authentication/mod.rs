//! Kinds of `authentication.k8s.io`: reviews that answer who someone is, without storing
//! anything. SelfSubjectReview (`kubectl auth whoami`) tells the requester who the server
//! thinks it is; TokenReview tells a caller whom a bearer token authenticates.

pub mod selfsubjectreview;
pub mod tokenreview;

use serde_json::{json, Map, Value};

use crate::context::UserInfo;
use crate::registry::strategy::Strategy;

/// The API group.
pub const GROUP: &str = "authentication.k8s.io";

/// The reviews' strategy: they are never stored.
pub struct ReviewStrategy;

impl Strategy for ReviewStrategy {}

/// `authentication/v1 UserInfo` as the reviews show it (`extra` always present, empty
/// fields left out).
pub fn user_info(user: &UserInfo) -> Value {
    let mut out = Map::new();
    out.insert("username".into(), json!(user.name));
    if !user.uid.is_empty() {
        out.insert("uid".into(), json!(user.uid));
    }
    if !user.groups.is_empty() {
        out.insert("groups".into(), json!(user.groups));
    }
    if !user.extra.is_empty() {
        out.insert("extra".into(), json!(user.extra));
    }
    Value::Object(out)
}
