//! `/metrics`: the apiserver's request metrics in the Prometheus text format, for the requests
//! this server served: `apiserver_request_total` (a counter per verb, dry run, group, version,
//! resource, subresource, scope, component and code) and `apiserver_request_duration_seconds`
//! (a histogram per the same labels but the code, with the apiserver's buckets).
//!
//! Recording is on every request's path, so it costs a hash of borrowed label values, an
//! uncontended read lock and a few atomic additions: each label combination is interned once,
//! on its first request, and never allocated again.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::hash::{BuildHasher, RandomState};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};
use std::time::Duration;

/// The upper bounds of `apiserver_request_duration_seconds`' buckets, as the apiserver declares
/// them.
const BUCKETS: [f64; 23] = [
    0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0,
    10.0, 15.0, 20.0, 30.0, 45.0, 60.0,
];

/// HTTP codes counted one by one (every code a response can carry).
const CODES: std::ops::Range<u16> = 100..600;

/// The labels of one request, borrowed from the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RequestLabels<'a> {
    /// `GET`, `LIST`, `WATCH`, `POST`, `PUT`, `PATCH`, `APPLY`, `DELETE`,
    /// `DELETECOLLECTION`, `CONNECT`.
    pub verb: &'static str,
    /// `dryRun=All`.
    pub dry_run: bool,
    /// The API group ("" for core and non-resource requests).
    pub group: &'a str,
    /// The API version.
    pub version: &'a str,
    /// The resource (plural).
    pub resource: &'a str,
    /// The subresource; for the health endpoints, their path.
    pub subresource: &'a str,
    /// `resource`, `namespace`, `cluster`, or "" (the apiserver's `CleanScope`).
    pub scope: &'static str,
    /// `apiserver` for resource requests, "" for the health endpoints.
    pub component: &'static str,
}

/// One label combination's counters.
struct Series {
    verb: &'static str,
    dry_run: bool,
    group: Box<str>,
    version: Box<str>,
    resource: Box<str>,
    subresource: Box<str>,
    scope: &'static str,
    component: &'static str,
    /// Requests per code, indexed from the start of [`CODES`].
    codes: Box<[AtomicU64]>,
    /// Requests per bucket (not cumulative), plus the `+Inf` one.
    buckets: [AtomicU64; BUCKETS.len() + 1],
    count: AtomicU64,
    sum_nanos: AtomicU64,
}

impl Series {
    fn new(l: &RequestLabels<'_>) -> Series {
        Series {
            verb: l.verb,
            dry_run: l.dry_run,
            group: l.group.into(),
            version: l.version.into(),
            resource: l.resource.into(),
            subresource: l.subresource.into(),
            scope: l.scope,
            component: l.component,
            codes: CODES.map(|_| AtomicU64::new(0)).collect(),
            buckets: std::array::from_fn(|_| AtomicU64::new(0)),
            count: AtomicU64::new(0),
            sum_nanos: AtomicU64::new(0),
        }
    }

    fn is(&self, l: &RequestLabels<'_>) -> bool {
        self.verb == l.verb
            && self.dry_run == l.dry_run
            && *self.group == *l.group
            && *self.version == *l.version
            && *self.resource == *l.resource
            && *self.subresource == *l.subresource
            && self.scope == l.scope
            && self.component == l.component
    }

    fn observe(&self, code: u16, elapsed: Duration) {
        if let Some(slot) = code
            .checked_sub(CODES.start)
            .and_then(|i| self.codes.get(usize::from(i)))
        {
            slot.fetch_add(1, Ordering::Relaxed);
        }
        let seconds = elapsed.as_secs_f64();
        let bucket = BUCKETS
            .iter()
            .position(|b| seconds <= *b)
            .unwrap_or(BUCKETS.len());
        self.buckets[bucket].fetch_add(1, Ordering::Relaxed);
        self.count.fetch_add(1, Ordering::Relaxed);
        let nanos = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        self.sum_nanos.fetch_add(nanos, Ordering::Relaxed);
    }

    /// The labels in the exposition's order (sorted by name), `extra` first when given.
    fn labels(&self, code: Option<u16>) -> String {
        let mut out = String::with_capacity(160);
        if let Some(code) = code {
            let _ = write!(out, "code=\"{code}\",");
        }
        let _ = write!(
            out,
            "component=\"{}\",dry_run=\"{}\",group=\"{}\",resource=\"{}\",scope=\"{}\",subresource=\"{}\",verb=\"{}\",version=\"{}\"",
            self.component,
            if self.dry_run { "All" } else { "" },
            escape(&self.group),
            escape(&self.resource),
            self.scope,
            escape(&self.subresource),
            self.verb,
            escape(&self.version),
        );
        out
    }
}

/// A label value as the text format escapes it.
fn escape(v: &str) -> String {
    v.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

/// The request metrics of one server.
#[derive(Default)]
pub struct Metrics {
    series: RwLock<HashMap<u64, Vec<Arc<Series>>>>,
    hasher: RandomState,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Metrics {
    /// Counts one served request.
    pub fn observe(&self, labels: &RequestLabels<'_>, code: u16, elapsed: Duration) {
        let hash = self.hasher.hash_one(labels);
        let found = self.series.read().ok().and_then(|map| {
            map.get(&hash)
                .and_then(|v| v.iter().find(|s| s.is(labels)).cloned())
        });
        let series = match found {
            Some(s) => s,
            None => self.intern(hash, labels),
        };
        series.observe(code, elapsed);
    }

    /// The series of a label combination seen for the first time (or by two requests at once).
    fn intern(&self, hash: u64, labels: &RequestLabels<'_>) -> Arc<Series> {
        let mut map = match self.series.write() {
            Ok(m) => m,
            Err(poisoned) => poisoned.into_inner(),
        };
        let slot = map.entry(hash).or_default();
        if let Some(s) = slot.iter().find(|s| s.is(labels)) {
            return s.clone();
        }
        let s = Arc::new(Series::new(labels));
        slot.push(s.clone());
        s
    }

    /// The Prometheus text exposition of every series, sorted by labels.
    pub fn render(&self) -> String {
        let mut all: Vec<Arc<Series>> = match self.series.read() {
            Ok(m) => m.values().flatten().cloned().collect(),
            Err(poisoned) => poisoned.into_inner().values().flatten().cloned().collect(),
        };
        all.sort_by_cached_key(|s| s.labels(None));
        let mut out = String::new();
        out.push_str("# HELP apiserver_request_duration_seconds [STABLE] Response latency distribution in seconds for each verb, dry run value, group, version, resource, subresource, scope and component.\n");
        out.push_str("# TYPE apiserver_request_duration_seconds histogram\n");
        for s in &all {
            let labels = s.labels(None);
            let mut cumulative = 0;
            for (i, bound) in BUCKETS.iter().enumerate() {
                cumulative += s.buckets[i].load(Ordering::Relaxed);
                let _ = writeln!(
                    out,
                    "apiserver_request_duration_seconds_bucket{{{labels},le=\"{bound}\"}} {cumulative}"
                );
            }
            let count = s.count.load(Ordering::Relaxed);
            let sum = s.sum_nanos.load(Ordering::Relaxed) as f64 / 1e9;
            let _ = writeln!(
                out,
                "apiserver_request_duration_seconds_bucket{{{labels},le=\"+Inf\"}} {count}"
            );
            let _ = writeln!(
                out,
                "apiserver_request_duration_seconds_sum{{{labels}}} {sum}"
            );
            let _ = writeln!(
                out,
                "apiserver_request_duration_seconds_count{{{labels}}} {count}"
            );
        }
        out.push_str("# HELP apiserver_request_total [STABLE] Counter of apiserver requests broken out for each verb, dry run value, group, version, resource, scope, component, and HTTP response code.\n");
        out.push_str("# TYPE apiserver_request_total counter\n");
        let mut lines = Vec::new();
        for s in &all {
            for (i, n) in s.codes.iter().enumerate() {
                let n = n.load(Ordering::Relaxed);
                if n > 0 {
                    let code = CODES.start + i as u16;
                    lines.push(format!(
                        "apiserver_request_total{{{}}} {n}",
                        s.labels(Some(code))
                    ));
                }
            }
        }
        lines.sort();
        for line in lines {
            out.push_str(&line);
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(resource: &'static str) -> RequestLabels<'static> {
        RequestLabels {
            verb: "GET",
            dry_run: false,
            group: "",
            version: "v1",
            resource,
            subresource: "",
            scope: "resource",
            component: "apiserver",
        }
    }

    #[test]
    fn counts_codes_and_buckets_per_label_combination() {
        let m = Metrics::default();
        m.observe(&get("pods"), 200, Duration::from_millis(1));
        m.observe(&get("pods"), 200, Duration::from_millis(30));
        m.observe(&get("pods"), 404, Duration::from_secs(100));
        m.observe(&get("configmaps"), 200, Duration::from_millis(1));
        let text = m.render();
        let labels = "component=\"apiserver\",dry_run=\"\",group=\"\",resource=\"pods\",scope=\"resource\",subresource=\"\",verb=\"GET\",version=\"v1\"";
        for line in [
            format!("apiserver_request_total{{code=\"200\",{labels}}} 2"),
            format!("apiserver_request_total{{code=\"404\",{labels}}} 1"),
            format!("apiserver_request_duration_seconds_bucket{{{labels},le=\"0.005\"}} 1"),
            format!("apiserver_request_duration_seconds_bucket{{{labels},le=\"0.05\"}} 2"),
            format!("apiserver_request_duration_seconds_bucket{{{labels},le=\"60\"}} 2"),
            format!("apiserver_request_duration_seconds_bucket{{{labels},le=\"+Inf\"}} 3"),
            format!("apiserver_request_duration_seconds_count{{{labels}}} 3"),
        ] {
            assert!(text.lines().any(|l| l == line), "{line}\n{text}");
        }
        assert!(text.contains("resource=\"configmaps\""));
        assert_eq!(
            m.series.read().map(|s| s.values().flatten().count()).ok(),
            Some(2)
        );
    }
}
