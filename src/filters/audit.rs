//! The audit log (`--audit-log-path`): every request the request log sees, also written as a
//! Kubernetes `audit.k8s.io/v1` `Event` at level `Metadata`, stage `ResponseComplete`, one
//! JSON line each, as a real apiserver's log backend writes them; tools that read audit logs
//! read kubefake's.
//!
//! The request path only renders the line (when the log is on) and hands it to a bounded
//! channel; a thread of its own wakes every [`FLUSH_INTERVAL`], writes what waits through a
//! buffer and flushes, so disk I/O never runs on the runtime's threads and a request wakes no
//! thread (a wake-up per request, on a busy 2-CPU machine, cost a GET a third of its rate).
//! When the channel is full (a disk slower than the requests), lines are dropped and counted,
//! as the apiserver's buffered backend drops events, rather than slowing the server. Off, it
//! costs one `Option` check.
//!
//! Differences from a real apiserver: `objectRef` is the request path's (a create's has no
//! `name`: the apiserver takes it from the decoded body); `responseStatus` carries the code
//! only; `requestURI` is the path with the query re-encoded.

use std::io::Write;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender, TrySendError};

use chrono::{DateTime, SecondsFormat, Utc};
use serde::Serialize;

use super::request_log::RequestRecord;
use crate::context::UserInfo;

/// How many lines may wait for the writer before new ones are dropped.
pub const BUFFER_LINES: usize = 10_000;

/// How often the writer writes what waits: how far behind the requests the file may be.
pub const FLUSH_INTERVAL: std::time::Duration = std::time::Duration::from_millis(20);

/// Why the audit log could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum AuditError {
    /// The file could not be created or the writer thread not started.
    #[error("audit log {0}: {1}")]
    Open(PathBuf, std::io::Error),
}

/// An open audit log. See the module documentation.
pub struct AuditLog {
    lines: SyncSender<Vec<u8>>,
    dropped: AtomicU64,
}

impl std::fmt::Debug for AuditLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuditLog")
            .field("dropped", &self.dropped())
            .finish()
    }
}

/// What an event needs beyond the request log's record.
pub struct Extra<'a> {
    /// The authenticated user (its groups, uid and extra; the record holds the name).
    pub user: &'a UserInfo,
    /// The client's address, when the connection knows it.
    pub source_ip: Option<IpAddr>,
    /// The query string's parameters, for `requestURI`.
    pub query: &'a [(String, String)],
}

impl AuditLog {
    /// Appends to `path` (created if need be; `-` is standard output), through a writer
    /// thread that ends when the log is dropped.
    pub fn open(path: &Path) -> Result<AuditLog, AuditError> {
        let fail = |e| AuditError::Open(path.to_path_buf(), e);
        let sink: Box<dyn Write + Send> = if path == Path::new("-") {
            Box::new(std::io::stdout())
        } else {
            let file = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(path)
                .map_err(fail)?;
            Box::new(file)
        };
        let (lines, receiver) = mpsc::sync_channel(BUFFER_LINES);
        std::thread::Builder::new()
            .name("kubefake-audit".into())
            .spawn(move || write_lines(receiver, std::io::BufWriter::new(sink)))
            .map_err(fail)?;
        Ok(AuditLog {
            lines,
            dropped: AtomicU64::new(0),
        })
    }

    /// Writes one request's event (never blocks: see the module documentation).
    pub fn write(&self, record: &RequestRecord, extra: &Extra<'_>) {
        let mut line = match serde_json::to_vec(&Event::of(record, extra)) {
            Ok(line) => line,
            Err(_) => return, // strings and numbers only: cannot fail
        };
        line.push(b'\n');
        match self.lines.try_send(line) {
            Ok(()) | Err(TrySendError::Disconnected(_)) => {}
            Err(TrySendError::Full(_)) => {
                if self.dropped.fetch_add(1, Ordering::Relaxed) == 0 {
                    eprintln!("kubefake: the audit log falls behind; dropping events");
                }
            }
        }
    }

    /// How many events were dropped because the writer fell behind.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

/// The writer thread: every [`FLUSH_INTERVAL`], writes the lines waiting and flushes; ends,
/// having written the last ones, when the log is dropped.
fn write_lines(lines: Receiver<Vec<u8>>, mut out: impl Write) {
    loop {
        let mut ok = true;
        let ended = loop {
            match lines.try_recv() {
                Ok(line) => ok &= out.write_all(&line).is_ok(),
                Err(mpsc::TryRecvError::Empty) => break false,
                Err(mpsc::TryRecvError::Disconnected) => break true,
            }
        };
        if !(ok && out.flush().is_ok()) {
            eprintln!("kubefake: writing the audit log failed");
        }
        if ended {
            return;
        }
        std::thread::sleep(FLUSH_INTERVAL);
    }
}

/// `audit.k8s.io/v1` `Event`, the fields level `Metadata` fills.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Event<'a> {
    kind: &'static str,
    api_version: &'static str,
    level: &'static str,
    #[serde(rename = "auditID")]
    audit_id: &'a str,
    stage: &'static str,
    #[serde(rename = "requestURI")]
    request_uri: String,
    verb: &'a str,
    user: User<'a>,
    #[serde(rename = "sourceIPs", skip_serializing_if = "Vec::is_empty")]
    source_ips: Vec<String>,
    #[serde(skip_serializing_if = "str::is_empty")]
    user_agent: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    object_ref: Option<ObjectRef<'a>>,
    response_status: ResponseStatus,
    request_received_timestamp: String,
    stage_timestamp: String,
}

/// `authentication.k8s.io/v1` `UserInfo`.
#[derive(Serialize)]
struct User<'a> {
    username: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    uid: &'a str,
    #[serde(skip_serializing_if = "<[String]>::is_empty")]
    groups: &'a [String],
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    extra: &'a std::collections::BTreeMap<String, Vec<String>>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct ObjectRef<'a> {
    resource: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    namespace: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    name: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    api_group: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    api_version: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    subresource: &'a str,
}

/// A `Status` with its code only (its empty `metadata` as the apiserver writes it).
#[derive(Serialize)]
struct ResponseStatus {
    metadata: serde_json::Map<String, serde_json::Value>,
    code: u16,
}

impl<'a> Event<'a> {
    fn of(record: &'a RequestRecord, extra: &Extra<'a>) -> Event<'a> {
        let object_ref = (!record.resource.is_empty()).then(|| ObjectRef {
            resource: &record.resource,
            namespace: &record.namespace,
            name: &record.name,
            api_group: &record.group,
            api_version: &record.version,
            subresource: &record.subresource,
        });
        Event {
            kind: "Event",
            api_version: "audit.k8s.io/v1",
            level: "Metadata",
            audit_id: &record.audit_id,
            stage: "ResponseComplete",
            request_uri: request_uri(&record.path, extra.query),
            verb: record.verb,
            user: User {
                username: &record.user,
                uid: &extra.user.uid,
                groups: &extra.user.groups,
                extra: &extra.user.extra,
            },
            source_ips: extra.source_ip.iter().map(IpAddr::to_string).collect(),
            user_agent: &record.user_agent,
            object_ref,
            response_status: ResponseStatus {
                metadata: serde_json::Map::new(),
                code: record.code,
            },
            request_received_timestamp: micro_time(record.time),
            stage_timestamp: micro_time(record.time + record.latency),
        }
    }
}

fn request_uri(path: &str, query: &[(String, String)]) -> String {
    if query.is_empty() {
        return path.to_string();
    }
    let start = path.len() + 1;
    let mut encoded = form_urlencoded::Serializer::for_suffix(format!("{path}?"), start);
    encoded.extend_pairs(query);
    encoded.finish()
}

fn micro_time(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Micros, true)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use std::time::Duration;

    fn record(resource: &str, name: &str) -> RequestRecord {
        RequestRecord {
            time: DateTime::from_timestamp(1_800_000_000, 0).unwrap_or_default(),
            audit_id: "a1".into(),
            user: "system:admin".into(),
            user_agent: "kubectl/v1.36".into(),
            method: "GET".into(),
            path: "/apis/apps/v1/namespaces/ns/deployments/web".into(),
            verb: "get",
            group: "apps".into(),
            version: "v1".into(),
            resource: resource.into(),
            subresource: String::new(),
            namespace: "ns".into(),
            name: name.into(),
            field_manager: String::new(),
            dry_run: false,
            code: 200,
            latency: Duration::from_micros(1500),
            fault: None,
            request_body: None,
        }
    }

    #[rstest]
    #[case("/api", &[], "/api")]
    #[case("/api/v1/pods", &[("watch", "1")], "/api/v1/pods?watch=1")]
    #[case("/api/v1/pods", &[("labelSelector", "a in (b,c)"), ("limit", "5")],
           "/api/v1/pods?labelSelector=a+in+%28b%2Cc%29&limit=5")]
    fn request_uris(#[case] path: &str, #[case] query: &[(&str, &str)], #[case] want: &str) {
        let query: Vec<(String, String)> = query
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        assert_eq!(request_uri(path, &query), want);
    }

    #[test]
    fn an_event_has_the_fields_of_level_metadata() {
        let user = UserInfo {
            name: "system:admin".into(),
            groups: vec!["system:masters".into()],
            ..UserInfo::default()
        };
        let extra = Extra {
            user: &user,
            source_ip: Some(IpAddr::from([127, 0, 0, 1])),
            query: &[],
        };
        let record = record("deployments", "web");
        let event = serde_json::to_value(Event::of(&record, &extra)).unwrap_or_default();
        assert_eq!(
            event,
            serde_json::json!({
                "kind": "Event", "apiVersion": "audit.k8s.io/v1", "level": "Metadata",
                "auditID": "a1", "stage": "ResponseComplete",
                "requestURI": "/apis/apps/v1/namespaces/ns/deployments/web", "verb": "get",
                "user": {"username": "system:admin", "groups": ["system:masters"]},
                "sourceIPs": ["127.0.0.1"], "userAgent": "kubectl/v1.36",
                "objectRef": {"resource": "deployments", "namespace": "ns", "name": "web",
                              "apiGroup": "apps", "apiVersion": "v1"},
                "responseStatus": {"metadata": {}, "code": 200},
                "requestReceivedTimestamp": "2027-01-15T08:00:00.000000Z",
                "stageTimestamp": "2027-01-15T08:00:00.001500Z",
            })
        );
    }

    #[test]
    fn a_request_without_a_resource_has_no_object_ref() {
        let user = UserInfo::default();
        let extra = Extra {
            user: &user,
            source_ip: None,
            query: &[],
        };
        let record = record("", "");
        let event = serde_json::to_value(Event::of(&record, &extra)).unwrap_or_default();
        assert!(event.get("objectRef").is_none(), "{event}");
        assert!(event.get("sourceIPs").is_none(), "{event}");
    }

    #[test]
    fn the_writer_flushes_what_it_was_given() {
        let (lines, receiver) = mpsc::sync_channel(4);
        for line in ["a\n", "b\n"] {
            lines.try_send(line.as_bytes().to_vec()).unwrap_or_default();
        }
        drop(lines);
        let mut out = Vec::new();
        write_lines(receiver, &mut out);
        assert_eq!(out, b"a\nb\n");
    }
}
