//! The state as text: every object (or those a [`DumpFilter`] keeps) as multi-document YAML,
//! as `kubectl get -o yaml` shows objects (managed fields left out unless asked for), in a
//! stable order: by group, resource, namespace and name. Objects are shown in their storage
//! version. [`DumpOnPanic`] prints it to a test's output when the test fails.

use std::sync::Arc;

use serde_json::Value;

use crate::state::State;
use crate::store::{GroupResource, Snapshot};

/// Why the state could not be rendered.
#[derive(Debug, thiserror::Error)]
pub enum DumpError {
    /// An object could not be written as YAML (a bug: stored objects are JSON).
    #[error("rendering {0} as YAML: {1}")]
    Yaml(String, String),
}

/// Which objects a dump shows; the default shows them all.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DumpFilter {
    /// Only objects in this namespace (cluster-scoped objects are left out), as `kubectl get -n`.
    pub namespace: Option<String>,
    /// Only resources of this API group (`""` for core).
    pub group: Option<String>,
    /// Only this resource (plural), in any group unless `group` is given.
    pub resource: Option<String>,
    /// Keep `metadata.managedFields` (left out by default, as kubectl does).
    pub managed_fields: bool,
}

impl DumpFilter {
    /// The filter of query parameters `namespace`, `group` and `resource` (`resource` may be
    /// `plural.group`, as kubectl names resources; `group=core` or an empty `group` is the core
    /// group) and `managedFields=true`.
    pub fn from_query<'a>(get: impl Fn(&str) -> Option<&'a str>) -> DumpFilter {
        let mut filter = DumpFilter {
            namespace: get("namespace")
                .filter(|ns| !ns.is_empty())
                .map(String::from),
            group: get("group").map(|g| if g == "core" { "" } else { g }.to_string()),
            resource: None,
            managed_fields: get("managedFields") == Some("true"),
        };
        if let Some(resource) = get("resource").filter(|r| !r.is_empty()) {
            match resource.split_once('.') {
                Some((plural, group)) => {
                    filter.resource = Some(plural.to_string());
                    filter.group = Some(group.to_string());
                }
                None => filter.resource = Some(resource.to_string()),
            }
        }
        filter
    }

    fn keeps(&self, gr: &GroupResource) -> bool {
        self.group.as_ref().is_none_or(|g| *g == gr.group)
            && self.resource.as_ref().is_none_or(|r| *r == gr.resource)
    }
}

/// The objects of `snap` that `filter` keeps, as multi-document YAML (each document starts
/// with `---`); empty when none is kept.
pub fn render(snap: &Snapshot, filter: &DumpFilter) -> Result<String, DumpError> {
    let mut tables: Vec<&GroupResource> = snap.resources().filter(|gr| filter.keeps(gr)).collect();
    tables.sort();
    let mut out = String::new();
    for gr in tables {
        for (key, obj) in snap.list(gr, filter.namespace.as_deref()) {
            let shown = if filter.managed_fields {
                serde_saphyr::to_string(&obj.value())
            } else {
                serde_saphyr::to_string(&without_managed_fields(&obj.value()))
            };
            let yaml = shown.map_err(|e| {
                let name = format!("{}/{}/{}", gr.resource, key.namespace, key.name);
                DumpError::Yaml(name, e.to_string())
            })?;
            out.push_str("---\n");
            out.push_str(&yaml);
            if !yaml.ends_with('\n') {
                out.push('\n');
            }
        }
    }
    Ok(out)
}

fn without_managed_fields(obj: &Value) -> Value {
    let mut shown = obj.clone();
    if let Some(meta) = shown.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("managedFields");
    }
    shown
}

/// How many of the last requests a failing test's dump shows.
const RECENT_REQUESTS: usize = 20;

/// The last requests of the request log, one line each (`None` when the log is off or empty).
fn recent_requests(state: &State) -> Option<String> {
    let all = state
        .requests
        .find(&crate::filters::request_log::RequestFilter::default());
    let recent = &all[all.len().saturating_sub(RECENT_REQUESTS)..];
    if recent.is_empty() {
        return None;
    }
    let lines: Vec<String> = recent
        .iter()
        .map(|r| {
            format!(
                "{} {} {} -> {} ({}, {:?})",
                r.time.format("%H:%M:%S%.3f"),
                r.method,
                r.path,
                r.code,
                if r.user_agent.is_empty() {
                    "-"
                } else {
                    &r.user_agent
                },
                r.latency
            )
        })
        .collect();
    Some(lines.join("\n"))
}

/// Prints the server's state (and, once there is a request log, the last requests) to the
/// test's output when the test panics; does nothing otherwise. Hold it for the test's length:
/// `let _dump = server.dump_on_panic();`.
#[must_use = "the guard prints on a panic only while it is held"]
pub struct DumpOnPanic {
    /// `None`: a handle on an existing cluster, which has no state to print.
    state: Option<Arc<State>>,
    sink: Box<dyn Fn(&str) + Send + Sync>,
}

impl DumpOnPanic {
    /// A guard for this server's state that prints to the test's output (through `println!`,
    /// which the test harness captures and shows with a failing test).
    pub fn new(state: Arc<State>) -> DumpOnPanic {
        DumpOnPanic::of(Some(state))
    }

    /// A guard for this state, or one that prints nothing (an existing cluster's handle).
    pub(crate) fn of(state: Option<Arc<State>>) -> DumpOnPanic {
        DumpOnPanic {
            state,
            sink: Box::new(|text| println!("{text}")),
        }
    }

    /// A guard that hands the text to `sink` instead (a log, a file).
    pub fn with_sink(state: Arc<State>, sink: impl Fn(&str) + Send + Sync + 'static) -> Self {
        DumpOnPanic {
            state: Some(state),
            sink: Box::new(sink),
        }
    }
}

impl Drop for DumpOnPanic {
    fn drop(&mut self) {
        let Some(state) = self.state.as_ref().filter(|_| std::thread::panicking()) else {
            return;
        };
        let snap = state.store.snapshot();
        let dump = render(&snap, &DumpFilter::default()).unwrap_or_else(|e| e.to_string());
        let mut text = format!(
            "---- kubefake state at resourceVersion {} ----\n{dump}",
            snap.rv
        );
        if let Some(requests) = recent_requests(state) {
            text.push_str(&format!("---- kubefake requests ----\n{requests}"));
        }
        (self.sink)(&text);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{ObjectKey, Store};
    use rstest::rstest;
    use serde_json::json;

    fn store() -> Store {
        let store = Store::new(16, 16);
        let objects = [
            ("", "namespaces", "", "a"),
            ("", "configmaps", "a", "one"),
            ("", "configmaps", "b", "two"),
            ("apps", "deployments", "a", "web"),
        ];
        store
            .write(|t| {
                for (group, resource, ns, name) in objects {
                    let obj = json!({"metadata": {"name": name, "namespace": ns,
                        "managedFields": [{"manager": "m"}]}});
                    t.put(
                        &GroupResource::new(group, resource),
                        ObjectKey::new(ns, name),
                        obj,
                    )?;
                }
                Ok(())
            })
            .expect("write");
        store
    }

    #[rstest]
    #[case::everything(&[], &["one", "two", "a", "web"])]
    #[case::namespace(&[("namespace", "a")], &["one", "web"])]
    #[case::core_group(&[("group", "core")], &["one", "two", "a"])]
    #[case::empty_group(&[("group", "")], &["one", "two", "a"])]
    #[case::resource(&[("resource", "configmaps")], &["one", "two"])]
    #[case::resource_dot_group(&[("resource", "deployments.apps")], &["web"])]
    #[case::resource_other_group(&[("resource", "configmaps.apps")], &[])]
    fn filters(#[case] query: &[(&str, &str)], #[case] names: &[&str]) {
        let filter =
            DumpFilter::from_query(|k| query.iter().find(|(key, _)| *key == k).map(|(_, v)| *v));
        let yaml = render(&store().snapshot(), &filter).expect("render");
        let docs: Vec<Value> = serde_saphyr::from_multiple(&yaml).expect("yaml");
        let got: Vec<&str> = docs
            .iter()
            .filter_map(|d| d["metadata"]["name"].as_str())
            .collect();
        assert_eq!(got, names);
        assert!(!yaml.contains("managedFields"));
    }

    #[test]
    fn the_guard_dumps_only_when_the_thread_panics() {
        let (_tx, rx) = tokio::sync::watch::channel(false);
        let state = State::new("127.0.0.1:1".into(), crate::Options::default(), rx);
        let gr = GroupResource::new("", "configmaps");
        let cm = json!({"metadata": {"name": "evidence", "namespace": "default"}});
        state
            .store
            .write(|t| t.put(&gr, ObjectKey::new("default", "evidence"), cm))
            .expect("put");
        let printed = Arc::new(parking_lot::Mutex::new(Vec::<String>::new()));
        let guard = |printed: &Arc<parking_lot::Mutex<Vec<String>>>| {
            let printed = printed.clone();
            DumpOnPanic::with_sink(state.clone(), move |t| printed.lock().push(t.to_string()))
        };
        drop(guard(&printed));
        assert!(printed.lock().is_empty(), "no panic, no dump");
        let failing = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _dump = guard(&printed);
            panic!("the test failed");
        }));
        assert!(failing.is_err());
        let printed = printed.lock();
        assert_eq!(printed.len(), 1);
        assert!(printed[0].starts_with("---- kubefake state at resourceVersion 1 ----"));
        assert!(printed[0].contains("name: evidence"), "{}", printed[0]);
    }

    #[test]
    fn managed_fields_when_asked() {
        let filter = DumpFilter {
            managed_fields: true,
            ..DumpFilter::default()
        };
        let yaml = render(&store().snapshot(), &filter).expect("render");
        assert!(yaml.contains("managedFields"));
    }
}
