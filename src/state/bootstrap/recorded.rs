//! The recorded starts compiled into the crate, so that no process records them.
//!
//! Recording a start runs every bootstrap object and the controllers' writes through the write
//! path: 19 million instructions in the unoptimised builds `cargo test` makes, where the rest
//! of a process's first start is about 3 million. Its outcome is the same in every process of
//! a build, so the configurations of `Server::start()` and `kubefake serve` (a published root
//! CA, no admission plugin disabled, an IPv4 address, either authorization mode) are kept as
//! text, one file each ([`start_file`](super::start_file) says how it reads), which `build.rs`
//! turns into static tables of their events: a process reads neither the text's headers nor
//! its states, which are slices of the compiled-in text, until a server replays them.
//!
//! The files are written by the test that checks them, `recorded_starts_are_current`, which
//! records each configuration through the write path and compares: any change to what a start
//! writes fails it, and `KUBEFAKE_RECORD_START=1` rewrites the files instead.

use std::borrow::Cow;
#[cfg(test)]
use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;

#[cfg(test)]
use super::start_file::{field_of, hole_name, placeholder};
use super::start_file::{Event, File, Hole, Index};
use super::{Key, Recorded, RecordedIndex, Template};
use crate::filters::authorization::Mode;
use crate::store::{EventType, GroupResource, ObjectKey};

include!(concat!(env!("OUT_DIR"), "/recorded_starts.rs"));

/// The files, by the configuration they record: their names, texts and tables.
static FILES: [(Mode, &str, &str, &File<'static>); 2] = [
    (
        Mode::AlwaysAllow,
        "always-allow.start",
        include_str!("always-allow.start"),
        &ALWAYS_ALLOW,
    ),
    (Mode::Rbac, "rbac.start", include_str!("rbac.start"), &RBAC),
];

/// The compiled recording of `key`'s configuration: its file name, its text and its table.
fn file(key: &Key) -> Option<&'static (Mode, &'static str, &'static str, &'static File<'static>)> {
    if !key.root_ca
        || !key.disabled_admission_plugins.is_empty()
        || key.ipv6
        || key.kube_controllers != crate::KubeControllers::all()
        || key.service_cidr != crate::registry::core::service_alloc::SERVICE_CIDR
    {
        return None;
    }
    FILES.iter().find(|(mode, ..)| *mode == key.authorization)
}

/// The compiled recording of `key`'s configuration, if there is one; `None` too if its
/// table does not fit its text (which `build.rs` read both from: a bug).
pub(super) fn compiled(key: &Key) -> Option<Template> {
    let (_, name, text, table) = file(key)?;
    let template = from_file(table, text);
    if template.is_none() {
        tracing::error!(
            file = name,
            "a compiled recording does not fit its text; recording"
        );
    }
    template
}

/// The template of a recorded start read from `text` (its states are ranges of it).
fn from_file(file: &File<'static>, text: &'static str) -> Option<Template> {
    let events = file
        .events
        .iter()
        .map(|e| recorded(e, text))
        .collect::<Option<_>>()?;
    Some(Template {
        events,
        uids: file.uids,
    })
}

/// One recorded event of a start read from `text`.
fn recorded(e: &Event<'static>, text: &'static str) -> Option<Recorded> {
    let kinds = [EventType::Added, EventType::Modified, EventType::Deleted];
    let kind = kinds.into_iter().find(|k| k.as_str() == e.kind)?;
    let state = text.as_bytes().get(e.state.clone())?;
    let index = e.index.as_ref().map(|i: &Index<'static>| RecordedIndex {
        uid: i.uid,
        owners: i.owners.clone(),
        api_version: Some(i.api_version).filter(|v| !v.is_empty()).map(Arc::from),
    });
    Some(Recorded {
        kind,
        resource: GroupResource::new(e.group, e.resource),
        key: ObjectKey::new(e.namespace, e.name),
        text: Bytes::from_static(state),
        holes: e.holes.clone(),
        rv: e.rv,
        index,
    })
}

/// The text of `template`, its holes holding placeholders: what
/// [`start_file::parse`](super::start_file::parse) reads.
#[cfg(test)]
fn to_text(template: &Template, comment: &str) -> String {
    let mut out = format!("# {comment}\nuids {}\n", template.uids);
    for event in &template.events {
        let (text, holes) = with_placeholders(event);
        out.push_str(event.kind.as_str());
        for f in [
            &event.resource.group,
            &event.resource.resource,
            &event.key.namespace,
            &event.key.name,
        ] {
            out.push(' ');
            out.push_str(field_of(f));
        }
        out.push_str(&format!(" len={} rv={}", text.len(), event.rv));
        if let Some(index) = &event.index {
            let api = index.api_version.as_deref().unwrap_or("");
            out.push_str(&format!(" api={}", field_of(api)));
            if let Some(uid) = index.uid {
                out.push_str(&format!(" uid={uid}"));
            }
            for owner in index.owners.iter() {
                out.push_str(&format!(" owner={owner}"));
            }
        }
        for (range, hole) in holes {
            let name = hole_name(hole);
            out.push_str(&format!(" {}..{}={name}", range.start, range.end));
        }
        out.push('\n');
        out.push_str(&String::from_utf8_lossy(&text));
        out.push('\n');
    }
    out
}

/// A recorded event's bytes with placeholders in its holes, and where they now are.
#[cfg(test)]
fn with_placeholders(event: &Recorded) -> (Vec<u8>, Vec<(Range<usize>, Hole)>) {
    let mut holes = Vec::with_capacity(event.holes.len());
    let text = event.splice(|hole, out| {
        let start = out.len();
        out.extend_from_slice(placeholder(hole).as_bytes());
        holes.push((start..out.len(), hole));
        Some(())
    });
    (text.unwrap_or_default(), holes)
}

#[cfg(test)]
mod tests {
    use rstest::rstest;

    use super::*;
    use crate::state::bootstrap::{Address, Values};

    /// What the test that checks the files compares: each recording rendered with the same
    /// values.
    fn rendered(template: &Template) -> Vec<String> {
        let values = Values {
            uids: (0..template.uids)
                .map(|n| Arc::from(format!("uid {n}")))
                .collect(),
            now: "a time".to_string(),
            root_ca: Some(b"\"a bundle\"".to_vec()),
            address: Address {
                host: "a host".to_string(),
                port: "1".to_string(),
            },
        };
        template
            .events
            .iter()
            .map(|e| {
                let text = e.render(&values).map(|b| b.to_vec()).unwrap_or_default();
                let (kind, rv, index) = (e.kind.as_str(), e.rv, &e.index);
                let header = format!("{kind} {:?} {:?} {rv} {index:?}", e.resource, e.key);
                format!("{header} {}", String::from_utf8_lossy(&text))
            })
            .collect()
    }

    /// The placeholders' places are where the header says, and the text reads back as written.
    #[test]
    fn a_template_reads_back_as_written() {
        let text: &[u8] = br#"{"uid":"u-1","t":"12:00","ca":"pem","owner":"u-1"}"#;
        let at = |token: &str, from: usize| {
            let start = from
                + text[from..]
                    .windows(token.len())
                    .position(|w| w == token.as_bytes())
                    .unwrap_or(0);
            start..start + token.len()
        };
        let template = Template {
            uids: 1,
            events: vec![Recorded {
                kind: EventType::Added,
                resource: GroupResource::new("", "configmaps"),
                key: ObjectKey::new("default", "x"),
                holes: Cow::Owned(vec![
                    (at("\"u-1\"", 0), Hole::Uid(0)),
                    (at("\"12:00\"", 0), Hole::Now),
                    (at("\"pem\"", 0), Hole::RootCa),
                    (at("\"u-1\"", 10), Hole::Uid(0)),
                ]),
                text: Bytes::from_static(text),
                rv: 7,
                index: Some(RecordedIndex {
                    uid: Some(0),
                    owners: Cow::Owned(vec![0]),
                    api_version: Some(Arc::from("v1")),
                }),
            }],
        };
        let written: &'static str = Box::leak(to_text(&template, "a test").into_boxed_str());
        assert!(written.contains(r#"{"uid":"$uid0","t":"$now","ca":"$root-ca","owner":"$uid0"}"#));
        let file = super::super::start_file::parse(written).expect("reads back");
        let read = from_file(&file, written).expect("fits its text");
        assert_eq!(rendered(&read), rendered(&template));
        assert_eq!(read.uids, 1);
        assert_eq!(read.events[0].rv, 7);
        assert_eq!(read.events[0].index, template.events[0].index);
    }

    /// Every compiled recording is what recording its configuration through the write path
    /// gives today (`KUBEFAKE_RECORD_START=1` rewrites the files instead of comparing).
    #[rstest]
    #[case::always_allow(Mode::AlwaysAllow)]
    #[case::rbac(Mode::Rbac)]
    #[tokio::test]
    async fn recorded_starts_are_current(#[case] mode: Mode) {
        let key = Key {
            authorization: mode,
            root_ca: true,
            disabled_admission_plugins: Vec::new(),
            kube_controllers: crate::KubeControllers::all(),
            ipv6: false,
            service_cidr: crate::registry::core::service_alloc::SERVICE_CIDR.to_string(),
        };
        let Some((_, name, _, _)) = file(&key) else {
            panic!("{mode:?} has no compiled recording");
        };
        let recorded = super::super::record(&key).await.expect("records");
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("src/state/bootstrap")
            .join(name);
        if std::env::var_os("KUBEFAKE_RECORD_START").is_some() {
            let comment = format!(
                "kubefake's start with {mode:?} authorization, a root CA, no admission plugin disabled. \
                 Written by KUBEFAKE_RECORD_START=1 cargo test --lib recorded_starts_are_current; do not edit."
            );
            std::fs::write(&path, to_text(&recorded, &comment)).expect("writes the recording");
            return;
        }
        let compiled = compiled(&key).expect("the compiled table fits its text");
        let (want, got) = (rendered(&recorded), rendered(&compiled));
        let first_difference = want.iter().zip(&got).position(|(w, g)| w != g);
        assert!(
            want.len() == got.len() && first_difference.is_none() && recorded.uids == compiled.uids,
            "{} is not what a start records now (first difference at event {first_difference:?}: \
             recorded {:?}, compiled {:?}); rewrite it with KUBEFAKE_RECORD_START=1 cargo test --lib \
             recorded_starts_are_current",
            path.display(),
            first_difference.and_then(|i| want.get(i)),
            first_difference.and_then(|i| got.get(i)),
        );
    }
}
