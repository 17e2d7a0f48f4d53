//! What a fault rule says, in the shape `POST /kubefake/v1/faults` takes it (`match`, `action`,
//! limits), with builder methods for the Rust API, and its validation into a [`Compiled`] rule
//! the request path can test without parsing anything again.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::filters::request_info::Verb;

/// A fault rule: which requests it matches, what it does to them and how often.
///
/// ```
/// use kubefake::filters::faults::Fault;
/// // The first status write of `foo-controller` to any CronTab sees a conflict.
/// let fault = Fault::new()
///     .verb("update")
///     .resource("crontabs")
///     .subresource("status")
///     .field_manager("foo-controller")
///     .conflict()
///     .times(1);
/// # let _ = fault;
/// ```
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Fault {
    /// Which requests the rule applies to: every field given must equal the request's.
    #[serde(default, rename = "match")]
    pub matches: FaultMatch,
    /// What the rule does to a request it fires on.
    #[serde(default)]
    pub action: FaultAction,
    /// How many times the rule fires at most (absent: every time; `1` when `nth` is given).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub times: Option<u64>,
    /// The first matching request it fires on, counting from 1 (absent: the first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nth: Option<u64>,
    /// The chance (0 to 1) that it fires on a matching request.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probability: Option<f64>,
    /// The seed of the `probability` draws: the same seed fires on the same requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seed: Option<u64>,
}

/// The request fields a rule matches (each absent field matches anything). Only resource
/// requests (`/api/...`, `/apis/...` naming a resource) are ever matched.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FaultMatch {
    /// A Kubernetes verb: get, list, watch, create, update, patch, delete, deletecollection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verb: Option<String>,
    /// The API group ("" for the core group).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// The API version.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The resource, plural (`crontabs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// The subresource (`status`; "" for the object itself).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subresource: Option<String>,
    /// The namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// The object's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The `fieldManager` query parameter.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub field_manager: Option<String>,
    /// A glob (`*`, `?`) on the `User-Agent` header.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user_agent: Option<String>,
    /// The name of the user the request acts as.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub user: Option<String>,
}

/// What a rule does. `delay` may come with any other part; of the rest, at most one.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FaultAction {
    /// Answer with this status code and a `Status` body.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<u16>,
    /// The `Status` reason (default: the apiserver's for the code, as `Conflict` for 409).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The `Status` message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// A `Retry-After` header and `details.retryAfterSeconds` (as a 429 carries them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_after_seconds: Option<u64>,
    /// Wait this long (a Go duration: `250ms`, `2s`) before going on.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<String>,
    /// Answer the apiserver's 409 for a stale resourceVersion, as if another writer had won.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub conflict: bool,
    /// End a watch (`end`) or end it with a 410 Expired ERROR event (`expire`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub watch: Option<WatchEnd>,
    /// With `watch`: how many events the watch delivers first (default 0: at once).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub after_events: Option<u64>,
    /// Close the connection without an answer.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub drop: bool,
}

/// How a faulted watch ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum WatchEnd {
    /// The stream just ends, as when the apiserver closes a watch at its timeout.
    End,
    /// A 410 Expired ERROR event, then the end: the client must list again.
    Expire,
}

/// A rule the HTTP API or the Rust API refused.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum FaultError {
    /// The JSON is not a rule.
    #[error("invalid fault rule: {0}")]
    Decode(String),
    /// A verb that is not a Kubernetes verb.
    #[error("match.verb {0:?} is not one of get, list, watch, create, update, patch, delete, deletecollection")]
    Verb(String),
    /// A status code outside 100-599.
    #[error("action.code {0} is not an HTTP status code")]
    Code(u16),
    /// A delay Go cannot parse, or a negative one.
    #[error("action.delay {0:?}: {1}")]
    Delay(String, String),
    /// Two actions where one is allowed, or none at all.
    #[error("action must have exactly one of code, conflict, watch, drop (delay may come with any): {0}")]
    Actions(String),
    /// A watch action on a rule for another verb.
    #[error("action.watch applies to watch requests only, but match.verb is {0:?}")]
    WatchVerb(String),
    /// A probability outside [0, 1].
    #[error("probability {0} is not between 0 and 1")]
    Probability(f64),
    /// `nth: 0` or `times: 0`.
    #[error("{0} must be at least 1")]
    Zero(&'static str),
    /// No rule has this id.
    #[error("fault {0:?} not found")]
    NotFound(String),
}

/// What a fault does to a request it fires on, decided when the rule is added.
#[derive(Debug, Clone, PartialEq)]
pub enum Effect {
    /// Answer a `Status` (code, reason, message, retry after).
    Status(u16, String, String, Option<u64>),
    /// The apiserver's 409 for a stale resourceVersion.
    Conflict,
    /// End a watch after this many events.
    Watch(WatchFault),
    /// Close the connection unanswered.
    Drop,
    /// Nothing but the delay.
    Pass,
}

/// A fault on one watch: after how many events it ends, and how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WatchFault {
    /// Events delivered before the end.
    pub after_events: u64,
    /// How it ends.
    pub end: WatchEnd,
}

/// A validated rule: what matching and firing need, parsed once.
#[derive(Debug, Clone)]
pub struct Compiled {
    /// The rule as given.
    pub spec: Fault,
    /// Its verb, parsed.
    pub verb: Option<Verb>,
    /// The wait before the effect.
    pub delay: Option<Duration>,
    /// What it does.
    pub effect: Effect,
    /// Matching requests skipped before the first it fires on.
    pub skip: u64,
}

const VERBS: [Verb; 8] = [
    Verb::Get,
    Verb::List,
    Verb::Watch,
    Verb::Create,
    Verb::Update,
    Verb::Patch,
    Verb::Delete,
    Verb::DeleteCollection,
];

impl Fault {
    /// A rule that matches every resource request and does nothing yet: add match fields,
    /// an action and a limit with the builder methods.
    pub fn new() -> Fault {
        Fault::default()
    }

    /// Parses the JSON of `POST /kubefake/v1/faults`.
    pub fn from_json(body: &[u8]) -> Result<Fault, FaultError> {
        serde_json::from_slice(body).map_err(|e| FaultError::Decode(e.to_string()))
    }

    /// Matches this verb only (`update`, `watch`, ...).
    pub fn verb(mut self, verb: &str) -> Self {
        self.matches.verb = Some(verb.into());
        self
    }

    /// Matches this API group only ("" for the core group).
    pub fn group(mut self, group: &str) -> Self {
        self.matches.group = Some(group.into());
        self
    }

    /// Matches this resource (plural) only.
    pub fn resource(mut self, resource: &str) -> Self {
        self.matches.resource = Some(resource.into());
        self
    }

    /// Matches this subresource only ("" for the object itself).
    pub fn subresource(mut self, subresource: &str) -> Self {
        self.matches.subresource = Some(subresource.into());
        self
    }

    /// Matches this namespace only.
    pub fn namespace(mut self, namespace: &str) -> Self {
        self.matches.namespace = Some(namespace.into());
        self
    }

    /// Matches this object name only.
    pub fn name(mut self, name: &str) -> Self {
        self.matches.name = Some(name.into());
        self
    }

    /// Matches requests with this `fieldManager` only.
    pub fn field_manager(mut self, manager: &str) -> Self {
        self.matches.field_manager = Some(manager.into());
        self
    }

    /// Matches user agents this glob matches (`kubectl/*`).
    pub fn user_agent(mut self, glob: &str) -> Self {
        self.matches.user_agent = Some(glob.into());
        self
    }

    /// Matches requests of this user only.
    pub fn user(mut self, user: &str) -> Self {
        self.matches.user = Some(user.into());
        self
    }

    /// Answers this code, with the apiserver's reason for it and a message saying a fault did.
    pub fn status(mut self, code: u16) -> Self {
        self.action.code = Some(code);
        self
    }

    /// Answers this code, reason and message.
    pub fn status_with(mut self, code: u16, reason: &str, message: &str) -> Self {
        self.action.code = Some(code);
        self.action.reason = Some(reason.into());
        self.action.message = Some(message.into());
        self
    }

    /// Sends `Retry-After` (and `details.retryAfterSeconds`) with the status.
    pub fn retry_after(mut self, seconds: u64) -> Self {
        self.action.retry_after_seconds = Some(seconds);
        self
    }

    /// Waits this long before going on (alone: the request is then served as usual).
    pub fn delay(mut self, delay: Duration) -> Self {
        self.action.delay = Some(crate::webhook::go_duration(delay));
        self
    }

    /// Answers the 409 of a stale resourceVersion (the next update sees a conflict).
    pub fn conflict(mut self) -> Self {
        self.action.conflict = true;
        self
    }

    /// Ends matching watches after `events` events (0: at once).
    pub fn end_watch_after(self, events: u64) -> Self {
        self.watch(WatchEnd::End, events)
    }

    /// Ends matching watches with a 410 Expired ERROR event after `events` events.
    pub fn expire_watch_after(self, events: u64) -> Self {
        self.watch(WatchEnd::Expire, events)
    }

    fn watch(mut self, end: WatchEnd, events: u64) -> Self {
        self.action.watch = Some(end);
        self.action.after_events = Some(events);
        self
    }

    /// Closes the connection without answering.
    pub fn drop_connection(mut self) -> Self {
        self.action.drop = true;
        self
    }

    /// Fires at most `n` times.
    pub fn times(mut self, n: u64) -> Self {
        self.times = Some(n);
        self
    }

    /// Fires first on the `n`th matching request (once, unless `times` says more).
    pub fn nth(mut self, n: u64) -> Self {
        self.nth = Some(n);
        self
    }

    /// Fires on a matching request with this chance, drawn from a generator seeded with `seed`.
    pub fn probability(mut self, chance: f64, seed: u64) -> Self {
        self.probability = Some(chance);
        self.seed = Some(seed);
        self
    }

    /// Validates the rule.
    pub fn compile(self) -> Result<Compiled, FaultError> {
        let verb = match &self.matches.verb {
            None => None,
            Some(v) => Some(
                VERBS
                    .into_iter()
                    .find(|known| known.as_str() == v)
                    .ok_or_else(|| FaultError::Verb(v.clone()))?,
            ),
        };
        if let Some(p) = self.probability {
            if !(0.0..=1.0).contains(&p) {
                return Err(FaultError::Probability(p));
            }
        }
        if self.times == Some(0) {
            return Err(FaultError::Zero("times"));
        }
        if self.nth == Some(0) {
            return Err(FaultError::Zero("nth"));
        }
        let delay = self.action.delay.as_deref().map(parse_delay).transpose()?;
        let effect = effect(&self.action)?;
        if let (Effect::Watch(_), Some(v)) = (&effect, verb) {
            if v != Verb::Watch {
                return Err(FaultError::WatchVerb(v.as_str().into()));
            }
        }
        Ok(Compiled {
            skip: self.nth.map_or(0, |n| n - 1),
            verb,
            delay,
            effect,
            spec: self,
        })
    }
}

fn parse_delay(text: &str) -> Result<Duration, FaultError> {
    let nanos = crate::machinery::duration::parse_duration(text)
        .map_err(|e| FaultError::Delay(text.into(), e))?;
    u64::try_from(nanos)
        .map(Duration::from_nanos)
        .map_err(|_| FaultError::Delay(text.into(), "negative".into()))
}

/// The one effect an action names.
fn effect(action: &FaultAction) -> Result<Effect, FaultError> {
    let mut named = Vec::new();
    if action.code.is_some() {
        named.push("code");
    }
    if action.conflict {
        named.push("conflict");
    }
    if action.watch.is_some() {
        named.push("watch");
    }
    if action.drop {
        named.push("drop");
    }
    if named.len() > 1 || (named.is_empty() && action.delay.is_none()) {
        return Err(FaultError::Actions(format!("{named:?}")));
    }
    if let Some(code) = action.code {
        if !(100..600).contains(&code) {
            return Err(FaultError::Code(code));
        }
        let reason = action
            .reason
            .clone()
            .unwrap_or_else(|| reason_for(code).into());
        let message = action
            .message
            .clone()
            .unwrap_or_else(|| format!("kubefake: a fault rule answered this request with {code}"));
        return Ok(Effect::Status(
            code,
            reason,
            message,
            action.retry_after_seconds,
        ));
    }
    Ok(match (action.conflict, action.watch, action.drop) {
        (true, _, _) => Effect::Conflict,
        (_, Some(end), _) => Effect::Watch(WatchFault {
            after_events: action.after_events.unwrap_or(0),
            end,
        }),
        (_, _, true) => Effect::Drop,
        _ => Effect::Pass,
    })
}

/// The `StatusReason` the apiserver gives a code (`metav1.StatusReason*`).
fn reason_for(code: u16) -> &'static str {
    match code {
        400 => "BadRequest",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "NotFound",
        405 => "MethodNotAllowed",
        406 => "NotAcceptable",
        409 => "Conflict",
        410 => "Expired",
        413 => "RequestEntityTooLarge",
        415 => "UnsupportedMediaType",
        422 => "Invalid",
        429 => "TooManyRequests",
        503 => "ServiceUnavailable",
        504 => "Timeout",
        500..=599 => "InternalError",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    fn compile(v: serde_json::Value) -> Result<Compiled, FaultError> {
        Fault::from_json(v.to_string().as_bytes())?.compile()
    }

    #[rstest]
    #[case(json!({"action": {"code": 409}}), Effect::Status(409, "Conflict".into(), "kubefake: a fault rule answered this request with 409".into(), None))]
    #[case(json!({"action": {"code": 429, "retryAfterSeconds": 3, "message": "slow down"}}), Effect::Status(429, "TooManyRequests".into(), "slow down".into(), Some(3)))]
    #[case(json!({"action": {"code": 599, "reason": "Odd"}}), Effect::Status(599, "Odd".into(), "kubefake: a fault rule answered this request with 599".into(), None))]
    #[case(json!({"action": {"conflict": true}}), Effect::Conflict)]
    #[case(json!({"action": {"watch": "expire", "afterEvents": 2}}), Effect::Watch(WatchFault { after_events: 2, end: WatchEnd::Expire }))]
    #[case(json!({"match": {"verb": "watch"}, "action": {"watch": "end"}}), Effect::Watch(WatchFault { after_events: 0, end: WatchEnd::End }))]
    #[case(json!({"action": {"drop": true}}), Effect::Drop)]
    #[case(json!({"action": {"delay": "1.5s"}}), Effect::Pass)]
    fn effects(#[case] rule: serde_json::Value, #[case] expected: Effect) {
        assert_eq!(compile(rule).map(|c| c.effect), Ok(expected));
    }

    #[rstest]
    #[case(json!({"action": {}}), "exactly one")]
    #[case(json!({"action": {"code": 409, "drop": true}}), "exactly one")]
    #[case(json!({"action": {"code": 1000}}), "not an HTTP status code")]
    #[case(json!({"action": {"delay": "soon"}}), "invalid duration")]
    #[case(json!({"action": {"delay": "-1s"}}), "negative")]
    #[case(json!({"match": {"verb": "GET"}, "action": {"drop": true}}), "is not one of")]
    #[case(json!({"match": {"verb": "get"}, "action": {"watch": "end"}}), "watch requests only")]
    #[case(json!({"match": {"verbs": "get"}, "action": {"drop": true}}), "unknown field")]
    #[case(json!({"action": {"drop": true}, "probability": 1.5}), "between 0 and 1")]
    #[case(json!({"action": {"drop": true}, "times": 0}), "at least 1")]
    #[case(json!({"action": {"drop": true}, "nth": 0}), "at least 1")]
    #[case(json!("drop"), "invalid fault rule")]
    fn refusals(#[case] rule: serde_json::Value, #[case] expected: &str) {
        let err = compile(rule).map(|_| ()).unwrap_err().to_string();
        assert!(err.contains(expected), "{err}");
    }

    #[test]
    fn the_builder_writes_what_the_json_says() {
        let built = Fault::new()
            .verb("update")
            .resource("crontabs")
            .subresource("status")
            .conflict()
            .nth(2)
            .delay(Duration::from_millis(250));
        let parsed = Fault::from_json(
            json!({"match": {"verb": "update", "resource": "crontabs", "subresource": "status"},
                   "action": {"conflict": true, "delay": "250ms"}, "nth": 2})
            .to_string()
            .as_bytes(),
        );
        assert_eq!(parsed, Ok(built.clone()));
        let compiled = built.compile().map(|c| (c.skip, c.delay, c.verb));
        assert_eq!(
            compiled,
            Ok((1, Some(Duration::from_millis(250)), Some(Verb::Update)))
        );
    }
}
