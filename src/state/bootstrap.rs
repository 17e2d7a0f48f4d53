//! A server's start, recorded once per configuration and replayed into every server.
//!
//! What a cluster starts with is, but for a few fields, the same in every server of a
//! configuration: the bootstrap objects (namespaces, priority classes, the local
//! APIServices, the RBAC policy, the `kubernetes` Service, Endpoints and EndpointSlice), and
//! what the controllers then write (each initial namespace's `default` ServiceAccount and
//! `kube-root-ca.crt` ConfigMap, the aggregated ClusterRoles' rules). A start of each
//! configuration ([`Key`]) runs through the write path in a private state, and its events are
//! recorded, each state's bytes with the places of its per-server values marked ([`Hole`]);
//! every server then writes those events into its own store in one write, the holes filled
//! with its own values: a fresh uid per object (two servers never share one), the current
//! time, its CA bundle, its address and port. Nothing is decoded, defaulted, admitted or
//! serialised again, and the trees are parsed only when first read.
//!
//! The recordings of the configurations every `Server::start()` and `kubefake serve` use are
//! compiled into the crate ([`recorded`]): only another configuration is recorded in-process.
//!
//! The replay is the recording byte for byte but for the holes: the same events in the same
//! order, the same resourceVersions, the same managedFields (manager names, fields), so
//! watches from an early resourceVersion see what a start through the controllers shows.

use std::borrow::Cow;
use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use parking_lot::Mutex;
use tokio::sync::watch;

use super::{Options, State};
use crate::error::ApiError;
use crate::filters::authorization;
use crate::registry::object_meta::{new_uid, now_rfc3339};
use crate::store::{Event, EventType, GroupResource, Indexed, ObjectKey, Store, StoredObject};

mod recorded;
// Read by `build.rs` too; the crate reads texts only in tests.
#[cfg_attr(not(test), allow(dead_code))]
mod start_file;

use start_file::Hole;

/// What the recorded start depends on besides what is stamped per server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Key {
    /// The RBAC policy is created only when roles decide.
    authorization: authorization::Mode,
    /// Whether the namespaces' `kube-root-ca.crt` is published (its bundle is a hole).
    root_ca: bool,
    /// The admission plugins the controllers' writes skip.
    disabled_admission_plugins: Vec<String>,
    /// The kube-controller-manager controllers that run (service accounts, aggregation...).
    kube_controllers: crate::controllers::kube_controllers::KubeControllers,
    /// Whether the server's address is IPv6 (the `kubernetes` EndpointSlice's `addressType`).
    ipv6: bool,
    /// The service CIDR (the default ServiceCIDR, the `kubernetes` Service's IP).
    service_cidr: String,
}

impl Key {
    /// The key of a server whose address is `address`.
    fn of(state: &State, address: &Address) -> Key {
        let options = &state.options;
        Key {
            authorization: options.authorization,
            root_ca: options.root_ca.is_some(),
            disabled_admission_plugins: options.disabled_admission_plugins.clone(),
            kube_controllers: options.kube_controllers.clone(),
            ipv6: address.is_ipv6(),
            service_cidr: options.service_cidr.clone(),
        }
    }
}

/// The address the `kubernetes` Service, Endpoints and EndpointSlice name: the server's, as
/// they write it.
struct Address {
    /// The host (an IP address: its JSON string needs no escape).
    host: String,
    /// The port, as its JSON number.
    port: String,
}

impl Address {
    fn of(server_address: &str) -> Address {
        let (host, port) = crate::registry::resource::server_host_port(server_address);
        Address {
            host,
            port: port.to_string(),
        }
    }

    fn is_ipv6(&self) -> bool {
        self.host.contains(':')
    }
}

/// The address a recording's server has, in place of a real server's: unique, so that its
/// places in the recorded bytes are found (documentation addresses, RFC 5737 and RFC 3849).
fn address_mark(ipv6: bool) -> &'static str {
    match ipv6 {
        false => "192.0.2.1:65501",
        true => "[2001:db8::1]:65501",
    }
}

/// The bundle the recording publishes in place of a server's: unique, so that its places in
/// the recorded bytes are found, and needing no escape in JSON.
const ROOT_CA_MARK: &str = "kubefake-recorded-start-root-ca-bundle";

/// One recorded event.
#[derive(Debug)]
struct Recorded {
    kind: EventType,
    resource: GroupResource,
    key: ObjectKey,
    /// The state's bytes as recorded (for a deletion, unused).
    text: Bytes,
    /// Where the per-server values are, in order.
    holes: Cow<'static, [(Range<usize>, Hole)]>,
    /// The resourceVersion the state was recorded with (its bytes carry it).
    rv: u64,
    /// What the store's indexes read of the state, when every uid it names is a recorded
    /// object's: the replay then hands them to the store instead of having it scan the bytes.
    index: Option<RecordedIndex>,
}

/// What the store's indexes read of a recorded state, its uids as holes.
#[derive(Debug, Clone, PartialEq, Eq)]
struct RecordedIndex {
    /// `metadata.uid`: the n-th recorded uid.
    uid: Option<usize>,
    /// The owners' uids.
    owners: Cow<'static, [usize]>,
    /// `apiVersion`.
    api_version: Option<Arc<str>>,
}

impl RecordedIndex {
    /// The index of a recorded state whose uids are all `uids` (by the text of each).
    fn of(object: &StoredObject, uids: &HashMap<String, Hole>) -> Option<RecordedIndex> {
        let hole = |uid: &str| match uids.get(uid) {
            Some(Hole::Uid(n)) => Some(*n),
            _ => None,
        };
        let uid = match object.uid() {
            Some(uid) => Some(hole(uid)?),
            None => None,
        };
        let owners = object
            .owner_uids()
            .iter()
            .map(|o| hole(o))
            .collect::<Option<_>>()?;
        Some(RecordedIndex {
            uid,
            owners: Cow::Owned(owners),
            api_version: object.api_version().map(Arc::from),
        })
    }

    /// The store's index of the state in a server with these values.
    fn with(&self, values: &Values) -> Option<Indexed> {
        let uid = |n: &usize| values.uids.get(*n).cloned();
        Some(Indexed {
            uid: match &self.uid {
                Some(n) => Some(uid(n)?),
                None => None,
            },
            owners: self.owners.iter().map(uid).collect::<Option<_>>()?,
            api_version: self.api_version.clone(),
        })
    }
}

/// A recorded start. See the module documentation.
#[derive(Debug)]
pub(super) struct Template {
    events: Vec<Recorded>,
    /// How many distinct uids the recording made.
    uids: usize,
}

/// The values of one server's holes.
struct Values {
    uids: Vec<Arc<str>>,
    now: String,
    /// The bundle as its JSON string (a PEM has newlines to escape).
    root_ca: Option<Vec<u8>>,
    address: Address,
}

impl Values {
    /// Writes the JSON token of `hole`; `None` when this server has no value for it.
    fn write(&self, hole: Hole, out: &mut Vec<u8>) -> Option<()> {
        let quoted = |out: &mut Vec<u8>, s: &str| {
            out.push(b'"');
            out.extend_from_slice(s.as_bytes());
            out.push(b'"');
        };
        match hole {
            Hole::Uid(n) => quoted(out, self.uids.get(n)?),
            Hole::Now => quoted(out, &self.now),
            Hole::RootCa => out.extend_from_slice(self.root_ca.as_ref()?),
            Hole::Host => quoted(out, &self.address.host),
            Hole::Port => out.extend_from_slice(self.address.port.as_bytes()),
        }
        Some(())
    }
}

/// The templates of this process, one per [`Key`] seen.
static TEMPLATES: Mutex<Vec<(Key, Arc<Template>)>> = Mutex::new(Vec::new());

/// Writes the recorded start of `state`'s configuration into its store (recording it first
/// when this process has not yet); an error leaves the store as it was.
pub(super) async fn replay(state: &State) -> Result<(), ApiError> {
    let address = Address::of(&state.server_address);
    let key = Key::of(state, &address);
    let cached = TEMPLATES
        .lock()
        .iter()
        .find(|(k, _)| *k == key)
        .map(|(_, t)| t.clone());
    let template = match cached {
        Some(template) => template,
        None => {
            let template = match recorded::compiled(&key) {
                Some(compiled) => compiled,
                None => record(&key).await?,
            };
            let template = Arc::new(template);
            let mut templates = TEMPLATES.lock();
            match templates.iter().find(|(k, _)| *k == key) {
                Some((_, first)) => first.clone(),
                None => {
                    templates.push((key, template.clone()));
                    template
                }
            }
        }
    };
    template.replay(&state.store, state.options.root_ca.as_deref(), address)
}

/// Runs the start of a server of this configuration through the write path, in a private
/// state, and records what it wrote.
async fn record(key: &Key) -> Result<Template, ApiError> {
    let options = Options {
        authorization: key.authorization,
        root_ca: key.root_ca.then(|| ROOT_CA_MARK.to_string()),
        disabled_admission_plugins: key.disabled_admission_plugins.clone(),
        service_cidr: key.service_cidr.clone(),
        ..Options::default()
    };
    let (_shutdown, stopped) = watch::channel(false);
    let began = chrono::Utc::now().timestamp();
    let address = address_mark(key.ipv6);
    let state = State::new(address.to_string(), options, stopped);
    state.bootstrap_through_write_path().await;
    let ended = chrono::Utc::now().timestamp();
    let events = state
        .store
        .history_since(0)
        .ok_or_else(|| ApiError::internal("the recorded start outgrew the history"))?;
    let times = (began..=ended).filter_map(|s| {
        let t = chrono::DateTime::from_timestamp(s, 0)?;
        Some(t.format("%Y-%m-%dT%H:%M:%SZ").to_string())
    });
    Ok(Template::from_events(&events, times, &Address::of(address)))
}

impl Template {
    /// The template of a recording's events; `times` are the renderings of every second
    /// the recording ran in.
    fn from_events(
        events: &[Arc<Event>],
        times: impl Iterator<Item = String>,
        address: &Address,
    ) -> Template {
        let mut marks: HashMap<String, Hole> = times.map(|t| (t, Hole::Now)).collect();
        marks.insert(ROOT_CA_MARK.to_string(), Hole::RootCa);
        marks.insert(address.host.clone(), Hole::Host);
        let mut uids = 0;
        for uid in events.iter().filter_map(|e| e.object.uid()) {
            if !marks.contains_key(uid) {
                marks.insert(uid.to_string(), Hole::Uid(uids));
                uids += 1;
            }
        }
        let events = events
            .iter()
            .map(|e| Recorded {
                kind: e.kind,
                resource: (*e.resource).clone(),
                key: (*e.key).clone(),
                holes: Cow::Owned(holes(&e.object.json, &marks, address.port.as_bytes())),
                text: e.object.json.clone(),
                rv: e.rv,
                index: RecordedIndex::of(&e.object, &marks),
            })
            .collect();
        Template { events, uids }
    }

    /// Writes the recorded events into `store`, in one write, with this server's values.
    fn replay(
        &self,
        store: &Store,
        root_ca: Option<&str>,
        address: Address,
    ) -> Result<(), ApiError> {
        let uids = (0..self.uids).map(|_| Arc::from(new_uid())).collect();
        let values = Values {
            uids,
            now: now_rfc3339(),
            root_ca: root_ca.map(|ca| crate::store::to_json(&serde_json::Value::from(ca))),
            address,
        };
        store.write(|txn| {
            for event in &self.events {
                match event.kind {
                    EventType::Deleted => {
                        txn.remove(&event.resource, &event.key)?;
                    }
                    EventType::Added | EventType::Modified => {
                        let json = event.render(&values)?;
                        let index = event.index.as_ref().and_then(|i| i.with(&values));
                        let (gr, key) = (&event.resource, event.key.clone());
                        txn.put_indexed(gr, key, json, event.rv, index)?;
                    }
                }
            }
            Ok(())
        })
    }
}

impl Recorded {
    /// The recorded state with a server's values in its holes.
    fn render(&self, values: &Values) -> Result<Bytes, ApiError> {
        self.splice(|hole, out| values.write(hole, out))
            .map(Bytes::from)
            .ok_or_else(|| ApiError::internal("a recorded start's hole has no value"))
    }

    /// The recorded bytes with `fill` writing a token in each hole's place.
    fn splice(&self, mut fill: impl FnMut(Hole, &mut Vec<u8>) -> Option<()>) -> Option<Vec<u8>> {
        let mut out = Vec::with_capacity(self.text.len() + 64);
        let mut at = 0;
        for (range, hole) in self.holes.iter() {
            out.extend_from_slice(self.text.get(at..range.start)?);
            fill(*hole, &mut out)?;
            at = range.end;
        }
        out.extend_from_slice(self.text.get(at..)?);
        Some(out)
    }
}

/// The string tokens of `json` (quotes included) whose text is one of `marks` (a token with
/// an escape is never a mark, but its escapes are skipped), and the number tokens that are
/// `port`. It runs over every recorded byte in the builds tests use, unoptimised: a plain
/// indexed loop (a few instructions a byte there, where a search per token costs hundreds),
/// and a token is looked up only when its length is within the marks'.
fn holes(json: &[u8], marks: &HashMap<String, Hole>, port: &[u8]) -> Vec<(Range<usize>, Hole)> {
    let shortest = marks.keys().map(String::len).min().unwrap_or(0);
    let longest = marks.keys().map(String::len).max().unwrap_or(0);
    let mut found = Vec::new();
    let n = json.len();
    let mut i = 0;
    while i < n {
        if json[i] != b'"' {
            let starts_value = i > 0 && matches!(json[i - 1], b':' | b',' | b'[');
            if starts_value && json[i].is_ascii_digit() {
                let from = i;
                while i < n && matches!(json[i], b'0'..=b'9' | b'.' | b'e' | b'E' | b'+' | b'-') {
                    i += 1;
                }
                if json.get(from..i) == Some(port) {
                    found.push((from..i, Hole::Port));
                }
                continue;
            }
            i += 1;
            continue;
        }
        let from = i;
        i += 1;
        while i < n && json[i] != b'"' {
            i += if json[i] == b'\\' { 2 } else { 1 };
        }
        if i >= n {
            break;
        }
        let length = i - from - 1;
        if length >= shortest && length <= longest {
            let text = json
                .get(from + 1..i)
                .and_then(|t| std::str::from_utf8(t).ok());
            if let Some(hole) = text.and_then(|t| marks.get(t)) {
                found.push((from..i + 1, *hole));
            }
        }
        i += 1;
    }
    found
}

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, HashSet};

    use rstest::rstest;
    use serde_json::Value;

    use super::*;
    use crate::filters::authorization::Mode;

    const MARK: &str = "0b1e4e2c-mark";

    #[rstest]
    #[case::value(r#"{"a":"0b1e4e2c-mark","b":1}"#, &[5])]
    #[case::twice(r#"["0b1e4e2c-mark","0b1e4e2c-mark"]"#, &[1, 17])]
    #[case::inside_a_longer_string(r#"{"a":"x0b1e4e2c-mark"}"#, &[])]
    #[case::inside_escaped_quotes(r#"{"k":"{\"0b1e4e2c-mark\"}"}"#, &[])]
    #[case::after_an_escaped_backslash(r#"{"a":"\\","b":"0b1e4e2c-mark"}"#, &[14])]
    #[case::truncated(r#"{"a":"0b1e4e2c-mark"#, &[])]
    fn holes_are_whole_string_tokens(#[case] json: &str, #[case] starts: &[usize]) {
        let marks = HashMap::from([(MARK.to_string(), Hole::Now)]);
        let got = holes(json.as_bytes(), &marks, b"65501");
        let got_starts: Vec<usize> = got.iter().map(|(range, _)| range.start).collect();
        assert_eq!(got_starts, starts);
        for (range, _) in got {
            assert_eq!(&json[range], format!("\"{MARK}\""));
        }
    }

    #[rstest]
    #[case::member(r#"{"port":65501}"#, &[8])]
    #[case::in_a_list(r#"[1,65501,65501]"#, &[3, 9])]
    #[case::a_longer_number(r#"{"a":655012,"b":165501}"#, &[])]
    #[case::a_fraction(r#"{"a":65501.5,"b":6.5501e4}"#, &[])]
    #[case::in_a_string(r#"{"a":"65501","b":"x:65501"}"#, &[])]
    fn port_holes_are_whole_number_tokens(#[case] json: &str, #[case] starts: &[usize]) {
        let got = holes(json.as_bytes(), &HashMap::new(), b"65501");
        let got_starts: Vec<usize> = got.iter().map(|(range, _)| range.start).collect();
        assert_eq!(got_starts, starts);
        for (range, hole) in got {
            assert_eq!((&json[range], hole), ("65501", Hole::Port));
        }
    }

    /// A server's start through the write path, or replayed.
    async fn started(address: &str, authorization: Mode, replayed: bool) -> Arc<State> {
        let options = Options {
            authorization,
            root_ca: Some("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n".into()),
            ..Options::default()
        };
        let (_shutdown, stopped) = watch::channel(false);
        let state = State::new(address.to_string(), options, stopped);
        if replayed {
            state.bootstrap().await;
        } else {
            state.bootstrap_through_write_path().await;
        }
        state
    }

    /// Every object of a state by table and key, with uids named by the object they belong
    /// to, times and resourceVersions (whose order differs) left out; and its uids.
    fn objects(state: &State) -> (BTreeMap<String, Value>, Vec<String>) {
        let snap = state.store.snapshot();
        let mut names = HashMap::new();
        let mut all = Vec::new();
        for gr in snap.resources() {
            for (key, obj) in snap.list(gr, None) {
                let name = format!(
                    "{}/{}/{}/{}",
                    gr.group, gr.resource, key.namespace, key.name
                );
                let uid = obj.uid().unwrap_or_default().to_string();
                let tree: Value = serde_json::from_slice(&obj.json).expect("stored JSON");
                assert_eq!(
                    tree["metadata"]["uid"],
                    uid.as_str(),
                    "the indexed uid, {name}"
                );
                assert_eq!(obj.api_version(), tree["apiVersion"].as_str(), "{name}");
                let owners: Vec<&str> = obj.owner_uids().iter().map(|o| &**o).collect();
                assert_eq!(
                    owners,
                    crate::store::owner_uids(&tree).collect::<Vec<_>>(),
                    "{name}"
                );
                names.insert(format!("\"{uid}\""), format!("\"uid of {name}\""));
                all.push((name, String::from_utf8_lossy(&obj.json).into_owned()));
            }
        }
        let times = regex::Regex::new(r#""\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ""#).expect("regex");
        let uids = names.keys().cloned().collect();
        let objects = all
            .into_iter()
            .map(|(name, mut text)| {
                for (uid, named) in &names {
                    text = text.replace(uid, named);
                }
                let text = times.replace_all(&text, "\"a time\"");
                let mut value: Value = serde_json::from_str(&text).expect("stored JSON");
                value["metadata"]["resourceVersion"].take();
                (name, value)
            })
            .collect();
        (objects, uids)
    }

    /// The replay writes what a start through the write path writes (the same objects, the
    /// same managedFields), but for uids, fresh in every server, and times.
    #[rstest]
    #[case::always_allow(Mode::AlwaysAllow, "127.0.0.1")]
    #[case::rbac(Mode::Rbac, "127.0.0.1")]
    #[case::ipv6(Mode::AlwaysAllow, "[::1]")]
    #[case::every_address(Mode::AlwaysAllow, "0.0.0.0")]
    #[tokio::test]
    async fn a_replayed_start_is_a_start_through_the_write_path(
        #[case] mode: Mode,
        #[case] host: &str,
    ) {
        let through = started(&format!("{host}:6443"), mode, false).await;
        let replayed = started(&format!("{host}:6443"), mode, true).await;
        let again = started(&format!("{host}:8443"), mode, true).await;
        let (want, through_uids) = objects(&through);
        let (got, uids) = objects(&replayed);
        assert_eq!(
            got.keys().collect::<Vec<_>>(),
            want.keys().collect::<Vec<_>>()
        );
        for (name, obj) in &got {
            assert_eq!(Some(obj), want.get(name), "{name}");
        }
        assert!(got.contains_key("/configmaps/kube-public/kube-root-ca.crt"));
        assert!(got.contains_key("/serviceaccounts/kube-node-lease/default"));

        let (other, other_uids) = objects(&again);
        let service = &other["/services/default/kubernetes"];
        assert_eq!(
            service["spec"]["ports"][0]["targetPort"], 8443,
            "its own address"
        );
        let endpoints = &other["/endpoints/default/kubernetes"];
        assert_eq!(endpoints["subsets"][0]["ports"][0]["port"], 8443);
        let slice = &other["discovery.k8s.io/endpointslices/default/kubernetes"];
        assert_eq!(slice["ports"][0]["port"], 8443);
        let (ip, family) = match host {
            "[::1]" => ("::1", "IPv6"),
            _ => ("127.0.0.1", "IPv4"),
        };
        assert_eq!(endpoints["subsets"][0]["addresses"][0]["ip"], ip);
        assert_eq!(slice["endpoints"][0]["addresses"][0], ip);
        assert_eq!(slice["addressType"], family);
        let distinct: HashSet<&String> = uids
            .iter()
            .chain(&other_uids)
            .chain(&through_uids)
            .collect();
        assert_eq!(distinct.len(), uids.len() * 3, "fresh uids in every server");
        let events = |s: &State| s.store.history_since(0).map(|e| e.len());
        assert_eq!(events(&replayed), events(&through));
    }
}
