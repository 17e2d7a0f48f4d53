//! The request log: every request a server answered (who, what, how it ended, how long it
//! took), newest last, in a ring buffer of bounded size, for tests to assert on what a
//! controller did ("how many status writes did `foo-controller` make?", "did anything write to
//! namespace `x`?"). Requests to `/kubefake/` itself are not recorded.
//!
//! Recording costs a few small copies and one uncontended lock per request; a size of 0 turns
//! it off.

use std::collections::VecDeque;
use std::time::Duration;

use bytes::Bytes;
use chrono::{DateTime, SecondsFormat, Utc};
use parking_lot::Mutex;
use serde::{Serialize, Serializer};

use super::faults::glob;

/// The default number of requests kept.
pub const DEFAULT_SIZE: usize = 10_000;

/// One answered request.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RequestRecord {
    /// When it arrived.
    #[serde(serialize_with = "micro_time")]
    pub time: DateTime<Utc>,
    /// Its `Audit-Id`.
    pub audit_id: String,
    /// The user it acted as ("" when authentication failed).
    pub user: String,
    /// The `User-Agent` header.
    pub user_agent: String,
    /// The HTTP method.
    pub method: String,
    /// The URL path.
    pub path: String,
    /// The Kubernetes verb; for requests that name no resource, the method in lower case.
    pub verb: &'static str,
    /// The API group ("" for the core group).
    pub group: String,
    /// The API version.
    pub version: String,
    /// The resource (plural).
    pub resource: String,
    /// The subresource.
    pub subresource: String,
    /// The namespace.
    pub namespace: String,
    /// The object's name.
    pub name: String,
    /// The `fieldManager` query parameter.
    pub field_manager: String,
    /// Whether it was a `dryRun=All` request.
    pub dry_run: bool,
    /// The response's status code.
    pub code: u16,
    /// From arrival to the response's head (for a watch: until its stream started).
    #[serde(rename = "latencySeconds", serialize_with = "seconds")]
    pub latency: Duration,
    /// The fault rule that fired on it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fault: Option<String>,
    /// The request body, when the server keeps bodies (shown as JSON when it is JSON).
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "body")]
    pub request_body: Option<Bytes>,
}

fn micro_time<S: Serializer>(t: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&t.to_rfc3339_opts(SecondsFormat::Micros, true))
}

fn seconds<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

fn body<S: Serializer>(b: &Option<Bytes>, s: S) -> Result<S::Ok, S::Error> {
    let bytes = b.as_deref().unwrap_or_default();
    match serde_json::from_slice::<serde_json::Value>(bytes) {
        Ok(v) => v.serialize(s),
        Err(_) => s.serialize_str(&String::from_utf8_lossy(bytes)),
    }
}

impl RequestRecord {
    /// Whether it was a write (create, update, patch, delete, deletecollection).
    pub fn is_write(&self) -> bool {
        WRITES.contains(&self.verb)
    }
}

const WRITES: [&str; 5] = ["create", "update", "patch", "delete", "deletecollection"];

/// A filter query parameter the log does not know.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RequestLogError {
    /// A parameter that is not a filter.
    #[error("unknown request log filter {0:?}; known: verb, group, version, resource, subresource, namespace, name, user, userAgent, fieldManager, code, dryRun, writes, fault")]
    Unknown(String),
    /// A value of the wrong type.
    #[error("request log filter {0}={1:?}: {2}")]
    Value(String, String, String),
}

/// Which records to select: every field given must hold (`user_agent` is a glob).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RequestFilter {
    verb: Option<String>,
    group: Option<String>,
    version: Option<String>,
    resource: Option<String>,
    subresource: Option<String>,
    namespace: Option<String>,
    name: Option<String>,
    user: Option<String>,
    user_agent: Option<String>,
    field_manager: Option<String>,
    fault: Option<String>,
    code: Option<u16>,
    dry_run: Option<bool>,
    writes: bool,
}

macro_rules! string_filters {
    ($($field:ident: $doc:literal),* $(,)?) => {
        impl RequestFilter {
            $(
                #[doc = $doc]
                pub fn $field(mut self, value: &str) -> Self {
                    self.$field = Some(value.into());
                    self
                }
            )*
        }
    };
}

string_filters! {
    verb: "Requests with this Kubernetes verb (`update`, `watch`...).",
    group: "Requests for this API group (\"\" for the core group).",
    version: "Requests for this API version.",
    resource: "Requests for this resource (plural).",
    subresource: "Requests for this subresource (\"\" for objects themselves).",
    namespace: "Requests in this namespace.",
    name: "Requests naming this object.",
    user: "Requests of this user.",
    user_agent: "Requests whose `User-Agent` this glob matches.",
    field_manager: "Requests with this `fieldManager`.",
    fault: "Requests this fault rule fired on.",
}

impl RequestFilter {
    /// Every request.
    pub fn new() -> Self {
        RequestFilter::default()
    }

    /// Writes only: create, update, patch, delete and deletecollection.
    pub fn writes() -> Self {
        RequestFilter {
            writes: true,
            ..RequestFilter::default()
        }
    }

    /// Requests answered with this status code.
    pub fn code(mut self, code: u16) -> Self {
        self.code = Some(code);
        self
    }

    /// Dry-run requests only (`true`) or real ones only (`false`).
    pub fn dry_run(mut self, dry_run: bool) -> Self {
        self.dry_run = Some(dry_run);
        self
    }

    /// The filter `GET /kubefake/v1/requests` takes as query parameters.
    pub fn from_query<'a>(
        params: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<Self, RequestLogError> {
        let mut f = RequestFilter::default();
        for (key, value) in params {
            let text = Some(value.to_string());
            let bad = |e: String| RequestLogError::Value(key.into(), value.into(), e);
            match key {
                "verb" => f.verb = text,
                "group" => f.group = text,
                "version" => f.version = text,
                "resource" => f.resource = text,
                "subresource" => f.subresource = text,
                "namespace" => f.namespace = text,
                "name" => f.name = text,
                "user" => f.user = text,
                "userAgent" => f.user_agent = text,
                "fieldManager" => f.field_manager = text,
                "fault" => f.fault = text,
                "code" => f.code = Some(value.parse().map_err(|e| bad(format!("{e}")))?),
                "dryRun" => f.dry_run = Some(value.parse().map_err(|e| bad(format!("{e}")))?),
                "writes" => f.writes = value.parse().map_err(|e| bad(format!("{e}")))?,
                _ => return Err(RequestLogError::Unknown(key.into())),
            }
        }
        Ok(f)
    }

    /// Whether a record passes.
    pub fn matches(&self, r: &RequestRecord) -> bool {
        let is = |want: &Option<String>, have: &str| want.as_deref().is_none_or(|w| w == have);
        is(&self.verb, r.verb)
            && is(&self.group, &r.group)
            && is(&self.version, &r.version)
            && is(&self.resource, &r.resource)
            && is(&self.subresource, &r.subresource)
            && is(&self.namespace, &r.namespace)
            && is(&self.name, &r.name)
            && is(&self.user, &r.user)
            && is(&self.field_manager, &r.field_manager)
            && is(&self.fault, r.fault.as_deref().unwrap_or(""))
            && self.code.is_none_or(|c| c == r.code)
            && self.dry_run.is_none_or(|d| d == r.dry_run)
            && (!self.writes || r.is_write())
            && self
                .user_agent
                .as_deref()
                .is_none_or(|g| glob::matches(g, &r.user_agent))
    }
}

/// The request log of one server. See the module documentation.
pub struct RequestLog {
    size: usize,
    bodies: bool,
    records: Mutex<VecDeque<RequestRecord>>,
}

impl RequestLog {
    /// A log keeping the last `size` requests (0: none), with their bodies or not.
    pub fn new(size: usize, bodies: bool) -> Self {
        RequestLog {
            size,
            bodies,
            // Grown as requests come: a thousand records up front were 400 KB, mapped and
            // unmapped by the allocator for every server, most of which answer a few requests.
            records: Mutex::new(VecDeque::with_capacity(size.min(16))),
        }
    }

    /// Whether request bodies are kept.
    pub fn keeps_bodies(&self) -> bool {
        self.bodies
    }

    /// Whether anything is recorded at all.
    pub fn is_on(&self) -> bool {
        self.size > 0
    }

    /// Appends a record, forgetting the oldest past the size.
    pub fn record(&self, record: RequestRecord) {
        if self.size == 0 {
            return;
        }
        let mut records = self.records.lock();
        if records.len() >= self.size {
            records.pop_front();
        }
        records.push_back(record);
    }

    /// Every record kept, oldest first.
    pub fn entries(&self) -> Vec<RequestRecord> {
        self.records.lock().iter().cloned().collect()
    }

    /// The records a filter selects, oldest first.
    pub fn find(&self, filter: &RequestFilter) -> Vec<RequestRecord> {
        let records = self.records.lock();
        records
            .iter()
            .filter(|r| filter.matches(r))
            .cloned()
            .collect()
    }

    /// How many records a filter selects.
    pub fn count(&self, filter: &RequestFilter) -> usize {
        self.records
            .lock()
            .iter()
            .filter(|r| filter.matches(r))
            .count()
    }

    /// Whether a filter selects any record.
    pub fn any(&self, filter: &RequestFilter) -> bool {
        self.records.lock().iter().any(|r| filter.matches(r))
    }

    /// Forgets every record; answers how many there were.
    pub fn clear(&self) -> usize {
        let mut records = self.records.lock();
        let n = records.len();
        records.clear();
        n
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn record(verb: &'static str, namespace: &str, sub: &str, manager: &str) -> RequestRecord {
        RequestRecord {
            time: Utc::now(),
            audit_id: String::new(),
            user: "system:admin".into(),
            user_agent: "foo-controller/v1".into(),
            method: String::new(),
            path: String::new(),
            verb,
            group: "stable.example.com".into(),
            version: "v1".into(),
            resource: "crontabs".into(),
            subresource: sub.into(),
            namespace: namespace.into(),
            name: "x".into(),
            field_manager: manager.into(),
            dry_run: false,
            code: 200,
            latency: Duration::from_micros(10),
            fault: None,
            request_body: None,
        }
    }

    fn log() -> RequestLog {
        let log = RequestLog::new(3, false);
        log.record(record("get", "a", "", ""));
        log.record(record("update", "a", "status", "foo"));
        log.record(record("update", "b", "status", "foo"));
        log.record(record("patch", "b", "", "bar"));
        log
    }

    #[rstest]
    #[case(RequestFilter::new(), 3)]
    #[case(RequestFilter::writes(), 3)]
    #[case(RequestFilter::new().verb("get"), 0)]
    #[case(RequestFilter::new().verb("update").subresource("status").field_manager("foo"), 2)]
    #[case(RequestFilter::writes().namespace("a"), 1)]
    #[case(RequestFilter::new().subresource(""), 1)]
    #[case(RequestFilter::new().user_agent("foo-*"), 3)]
    #[case(RequestFilter::new().user_agent("kubectl*"), 0)]
    #[case(RequestFilter::new().code(200).dry_run(false), 3)]
    #[case(RequestFilter::new().code(409), 0)]
    fn filters(#[case] filter: RequestFilter, #[case] expected: usize) {
        let log = log();
        assert_eq!(log.count(&filter), expected);
        assert_eq!(log.any(&filter), expected > 0);
        assert_eq!(log.find(&filter).len(), expected);
    }

    #[test]
    fn the_oldest_go_first_and_clear_empties() {
        let log = log();
        let verbs: Vec<&str> = log.entries().iter().map(|r| r.verb).collect();
        assert_eq!(verbs, ["update", "update", "patch"]);
        assert_eq!(log.clear(), 3);
        assert!(log.entries().is_empty());
        let off = RequestLog::new(0, false);
        off.record(record("get", "a", "", ""));
        assert!(off.entries().is_empty());
    }

    #[rstest]
    #[case("verb=update&namespace=a&writes=true&code=200", Ok(RequestFilter::writes().verb("update").namespace("a").code(200)))]
    #[case("userAgent=kubectl*&dryRun=true&fieldManager=m", Ok(RequestFilter::new().user_agent("kubectl*").dry_run(true).field_manager("m")))]
    #[case("verbs=get", Err("unknown request log filter \"verbs\""))]
    #[case("code=abc", Err("request log filter code=\"abc\""))]
    fn query_parameters(#[case] query: &str, #[case] expected: Result<RequestFilter, &str>) {
        let pairs: Vec<(String, String)> = form_urlencoded::parse(query.as_bytes())
            .into_owned()
            .collect();
        let parsed = RequestFilter::from_query(pairs.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        match (parsed, expected) {
            (Ok(f), Ok(e)) => assert_eq!(f, e),
            (Err(err), Err(e)) => assert!(err.to_string().starts_with(e), "{err}"),
            (got, want) => panic!("{got:?} != {want:?}"),
        }
    }
}
