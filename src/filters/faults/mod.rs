//! Fault injection: rules a test adds at run time (Rust API, `POST /kubefake/v1/faults`, the
//! CLI) that make matching resource requests fail on purpose: a chosen `Status` (409, 429 with
//! `Retry-After`, 500, 503, 504...), a delay, a conflict, a watch that ends or expires after N
//! events, a dropped connection. They run after authorization and before the handler, so a
//! request a fault answers changes nothing in the store.
//!
//! The rules are an immutable list behind an [`ArcSwap`], swapped whole when one is added or
//! removed; with no rule the request path pays one relaxed atomic load.

pub mod glob;
pub mod rule;

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use arc_swap::ArcSwap;
use parking_lot::Mutex;
use serde::Serialize;

use crate::error::{ApiError, StatusDetails};
use crate::filters::request_info::RequestInfo;
use rule::{Compiled, Effect};
pub use rule::{Fault, FaultAction, FaultError, FaultMatch, WatchEnd, WatchFault};

/// The fault rules of one server. See the module documentation.
#[derive(Default)]
pub struct Faults {
    rules: ArcSwap<Vec<Arc<Rule>>>,
    armed: AtomicBool,
    next_id: AtomicU64,
    edit: Mutex<()>,
}

/// One rule and its counters.
struct Rule {
    id: String,
    compiled: Compiled,
    counters: Mutex<Counters>,
}

struct Counters {
    matched: u64,
    fired: u64,
    rng: fastrand::Rng,
}

/// A rule as it is listed: its id, the rule, and how often it matched and fired.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FaultStatus {
    /// The id `add` answered.
    pub id: String,
    /// The rule.
    #[serde(flatten)]
    pub fault: Fault,
    /// Requests it matched.
    pub matched: u64,
    /// Requests it fired on.
    pub fired: u64,
}

/// A request as fault rules see it.
pub struct Probe<'a> {
    /// Its API coordinates.
    pub info: &'a RequestInfo,
    /// The `fieldManager` query parameter ("" when absent).
    pub field_manager: &'a str,
    /// The `User-Agent` header.
    pub user_agent: &'a str,
    /// The user it acts as.
    pub user: &'a str,
}

/// A rule that fired on a request: what the request path does about it.
#[derive(Debug, Clone)]
pub struct Fired {
    /// The rule's id (recorded in the request log).
    pub id: String,
    /// Wait this long first.
    pub delay: Option<Duration>,
    effect: Effect,
}

impl Fired {
    /// The watch fault, if the rule ends watches.
    pub fn watch(&self) -> Option<WatchFault> {
        match self.effect {
            Effect::Watch(w) => Some(w),
            _ => None,
        }
    }
}

/// What becomes of a request once the faults had their say.
pub enum Verdict {
    /// Served as usual (perhaps after a delay, perhaps with a watch fault on its context).
    Serve,
    /// Answered with this `Status`; the handler never runs.
    Answer(ApiError),
    /// The connection is closed unanswered.
    Drop,
}

impl Faults {
    /// Adds a rule; answers its id.
    pub fn add(&self, fault: Fault) -> Result<String, FaultError> {
        let compiled = fault.compile()?;
        let _edit = self.edit.lock();
        let id = format!("fault-{}", self.next_id.fetch_add(1, Ordering::Relaxed) + 1);
        let seed = compiled.spec.seed.unwrap_or_else(|| fastrand::u64(..));
        let rule = Arc::new(Rule {
            id: id.clone(),
            compiled,
            counters: Mutex::new(Counters {
                matched: 0,
                fired: 0,
                rng: fastrand::Rng::with_seed(seed),
            }),
        });
        let mut rules = self.rules.load().as_ref().clone();
        rules.push(rule);
        self.publish(rules);
        Ok(id)
    }

    /// Removes a rule; answers it as it was last, or `NotFound`.
    pub fn remove(&self, id: &str) -> Result<FaultStatus, FaultError> {
        let _edit = self.edit.lock();
        let mut rules = self.rules.load().as_ref().clone();
        let at = rules
            .iter()
            .position(|r| r.id == id)
            .ok_or_else(|| FaultError::NotFound(id.into()))?;
        let removed = rules.remove(at);
        self.publish(rules);
        Ok(removed.status())
    }

    /// Removes every rule.
    pub fn clear(&self) {
        let _edit = self.edit.lock();
        self.publish(Vec::new());
    }

    fn publish(&self, rules: Vec<Arc<Rule>>) {
        self.armed.store(!rules.is_empty(), Ordering::Release);
        self.rules.store(Arc::new(rules));
    }

    /// Every rule, in the order they were added (and are tried).
    pub fn list(&self) -> Vec<FaultStatus> {
        self.rules.load().iter().map(|r| r.status()).collect()
    }

    /// One rule, by id.
    pub fn get(&self, id: &str) -> Option<FaultStatus> {
        self.rules
            .load()
            .iter()
            .find(|r| r.id == id)
            .map(|r| r.status())
    }

    /// How often the rule fired (0 for an unknown id).
    pub fn fired(&self, id: &str) -> u64 {
        self.get(id).map_or(0, |s| s.fired)
    }

    /// The first rule that matches the request and fires on it, counting the match and the
    /// firing. Costs one atomic load when there is no rule.
    pub fn check(&self, probe: &Probe<'_>) -> Option<Fired> {
        if !self.armed.load(Ordering::Acquire) || !probe.info.is_resource_request {
            return None;
        }
        self.rules.load().iter().find_map(|r| r.fire(probe))
    }

    /// Checks the request against the rules and carries out what fired: waits the delay,
    /// answers a `Status` or drops the connection, or leaves a watch fault for the watch.
    pub async fn filter(&self, probe: &Probe<'_>) -> (Verdict, Option<Fired>) {
        let Some(fired) = self.check(probe) else {
            return (Verdict::Serve, None);
        };
        if let Some(delay) = fired.delay {
            tokio::time::sleep(delay).await;
        }
        let info = probe.info;
        let verdict = match &fired.effect {
            Effect::Status(code, reason, message, retry) => {
                let mut err = ApiError::rejection(*code, reason.clone(), message.clone());
                err.details = retry.map(|seconds| {
                    Box::new(StatusDetails {
                        retry_after_seconds: Some(seconds),
                        ..Default::default()
                    })
                });
                Verdict::Answer(err)
            }
            Effect::Conflict => Verdict::Answer(ApiError::conflict(
                &info.group,
                &info.resource,
                &info.name,
                ApiError::OBJECT_MODIFIED,
            )),
            Effect::Drop => Verdict::Drop,
            Effect::Watch(_) | Effect::Pass => Verdict::Serve,
        };
        (verdict, Some(fired))
    }
}

impl Rule {
    fn status(&self) -> FaultStatus {
        let c = self.counters.lock();
        FaultStatus {
            id: self.id.clone(),
            fault: self.compiled.spec.clone(),
            matched: c.matched,
            fired: c.fired,
        }
    }

    fn matches(&self, probe: &Probe<'_>) -> bool {
        let m = &self.compiled.spec.matches;
        let info = probe.info;
        let is = |want: &Option<String>, have: &str| want.as_deref().is_none_or(|w| w == have);
        self.compiled.verb.is_none_or(|v| v == info.verb)
            && (!matches!(self.compiled.effect, Effect::Watch(_))
                || info.verb == crate::filters::request_info::Verb::Watch)
            && is(&m.group, &info.group)
            && is(&m.version, &info.version)
            && is(&m.resource, &info.resource)
            && is(&m.subresource, &info.subresource)
            && is(&m.namespace, &info.namespace)
            && is(&m.name, &info.name)
            && is(&m.field_manager, probe.field_manager)
            && is(&m.user, probe.user)
            && m.user_agent
                .as_deref()
                .is_none_or(|g| glob::matches(g, probe.user_agent))
    }

    fn fire(&self, probe: &Probe<'_>) -> Option<Fired> {
        if !self.matches(probe) {
            return None;
        }
        let spec = &self.compiled.spec;
        let mut c = self.counters.lock();
        c.matched += 1;
        if c.matched <= self.compiled.skip {
            return None;
        }
        let times = spec.times.or(spec.nth.map(|_| 1));
        if times.is_some_and(|t| c.fired >= t) {
            return None;
        }
        if let Some(p) = spec.probability {
            if c.rng.f64() >= p {
                return None;
            }
        }
        c.fired += 1;
        Some(Fired {
            id: self.id.clone(),
            delay: self.compiled.delay,
            effect: self.compiled.effect.clone(),
        })
    }
}

#[cfg(test)]
mod tests;
