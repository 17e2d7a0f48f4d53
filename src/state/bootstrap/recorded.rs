//! The recorded starts compiled into the crate, so that no process records them.
//!
//! Recording a start runs every bootstrap object and the controllers' writes through the write
//! path: 19 million instructions in the unoptimised builds `cargo test` makes, where the rest
//! of a process's first start is about 4 million. Its outcome is the same in every process of
//! a build, so the configurations of `Server::start()` and `kubefake serve` (a published root
//! CA, no admission plugin disabled, an IPv4 address, either authorization mode) are kept here
//! as text, one file each, read in place: a header line per event (its type, table, key,
//! resourceVersion, what the store's indexes read of it, and its holes) and the state's bytes
//! on the next line, with placeholders where the holes are (`"$uid7"`, `"$now"`,
//! `"$root-ca"`, `"$host"`, and `0` for the port).
//!
//! The files are written by the test that checks them, `recorded_starts_are_current`, which
//! records each configuration through the write path and compares: any change to what a start
//! writes fails it, and `KUBEFAKE_RECORD_START=1` rewrites the files instead.

use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;

use super::{Hole, Key, Recorded, RecordedIndex, Template};
use crate::filters::authorization::Mode;
use crate::store::{EventType, GroupResource, ObjectKey};

/// The files, by the configuration they record.
const FILES: [(Mode, &str, &str); 2] = [
    (
        Mode::AlwaysAllow,
        "always-allow.start",
        include_str!("always-allow.start"),
    ),
    (Mode::Rbac, "rbac.start", include_str!("rbac.start")),
];

/// Why a recorded start's text cannot be read (a bug: the test that writes it reads it back).
#[derive(Debug, thiserror::Error)]
#[error("line {line} of a recorded start: {what}")]
pub(super) struct ParseError {
    line: usize,
    what: &'static str,
}

/// The file name and text of the compiled recording of `key`, if one is compiled in.
fn file(key: &Key) -> Option<(&'static str, &'static str)> {
    if !key.root_ca || !key.disabled_admission_plugins.is_empty() || key.ipv6 {
        return None;
    }
    FILES
        .iter()
        .find(|(mode, _, _)| *mode == key.authorization)
        .map(|(_, name, text)| (*name, *text))
}

/// The compiled recording of `key`'s configuration, if there is one.
pub(super) fn compiled(key: &Key) -> Option<Result<Template, ParseError>> {
    file(key).map(|(_, text)| parse(text))
}

/// The placeholder written in place of a hole.
#[cfg(test)]
fn placeholder(hole: Hole) -> Vec<u8> {
    match hole {
        Hole::Uid(n) => format!("\"$uid{n}\"").into_bytes(),
        Hole::Now => b"\"$now\"".to_vec(),
        Hole::RootCa => b"\"$root-ca\"".to_vec(),
        Hole::Host => b"\"$host\"".to_vec(),
        Hole::Port => b"0".to_vec(),
    }
}

/// A field of a header line: `-` stands for the empty string.
fn field(s: &str) -> &str {
    if s == "-" {
        ""
    } else {
        s
    }
}

/// The field written for `s`.
#[cfg(test)]
fn unfield(s: &str) -> &str {
    if s.is_empty() {
        "-"
    } else {
        s
    }
}

/// The text of `template`, its holes holding placeholders: what [`parse`] reads.
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
            out.push_str(unfield(f));
        }
        out.push_str(&format!(" len={} rv={}", text.len(), event.rv));
        if let Some(index) = &event.index {
            let api = index.api_version.as_deref().unwrap_or("");
            out.push_str(&format!(" api={}", unfield(api)));
            if let Some(uid) = index.uid {
                out.push_str(&format!(" uid={uid}"));
            }
            for owner in &index.owners {
                out.push_str(&format!(" owner={owner}"));
            }
        }
        for (range, hole) in holes {
            let name = match hole {
                Hole::Uid(n) => format!("uid{n}"),
                Hole::Now => "now".to_string(),
                Hole::RootCa => "root-ca".to_string(),
                Hole::Host => "host".to_string(),
                Hole::Port => "port".to_string(),
            };
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
        out.extend_from_slice(&placeholder(hole));
        holes.push((start..out.len(), hole));
        Some(())
    });
    (text.unwrap_or_default(), holes)
}

/// Reads a recorded start's text: the states are slices of `text`, nothing is copied, and
/// nothing but the headers is scanned (each gives its state's length), as this runs once per
/// process in the builds tests use, unoptimised.
pub(super) fn parse(text: &'static str) -> Result<Template, ParseError> {
    let err = |line: usize, what| ParseError { line, what };
    let mut rest = text;
    let mut line = 1;
    let mut uids = None;
    while let Some((first, after)) = rest.split_once('\n') {
        rest = after;
        if !first.starts_with('#') {
            uids = first.strip_prefix("uids ").and_then(number);
            break;
        }
        line += 1;
    }
    let uids = uids.ok_or_else(|| err(line, "no uid count"))?;
    let mut events = Vec::new();
    while !rest.is_empty() {
        line += 1;
        let (header, after) = rest
            .split_once('\n')
            .ok_or_else(|| err(line, "a header without a state"))?;
        let (event, after) = event(header, after).ok_or_else(|| err(line, "a malformed event"))?;
        events.push(event);
        rest = after;
        line += 1;
    }
    Ok(Template { events, uids })
}

/// One event from its header line and the text after it, which starts with its state; and
/// the text after the state's line.
fn event(header: &str, text: &'static str) -> Option<(Recorded, &'static str)> {
    let mut fields = header.split(' ');
    let kind = match fields.next()? {
        "ADDED" => EventType::Added,
        "MODIFIED" => EventType::Modified,
        "DELETED" => EventType::Deleted,
        _ => return None,
    };
    let resource = GroupResource::new(field(fields.next()?), field(fields.next()?));
    let key = ObjectKey::new(field(fields.next()?), field(fields.next()?));
    let len = fields.next()?.strip_prefix("len=").and_then(number)?;
    let state = text.get(..len)?;
    let after = text.get(len..)?.strip_prefix('\n')?;
    let mut event = Recorded {
        kind,
        resource,
        key,
        text: Bytes::from_static(state.as_bytes()),
        holes: Vec::new(),
        rv: 0,
        index: None,
    };
    for f in fields {
        attribute(&mut event, f)?;
    }
    (event.rv > 0).then_some((event, after))
}

/// A decimal number (std's parse, which is optimised even in a debug build).
fn number(s: &str) -> Option<usize> {
    s.parse().ok()
}

/// Reads one of a header's attributes into `event`: a hole (`start..end=name`), the
/// resourceVersion (`rv=`) or the index (`api=`, then `uid=`, `owner=`).
fn attribute(event: &mut Recorded, field: &str) -> Option<()> {
    if field.as_bytes().first().is_some_and(u8::is_ascii_digit) {
        let (range, hole) = hole(field).filter(|(range, _)| range.end <= event.text.len())?;
        event.holes.push((range, hole));
        return Some(());
    }
    let (name, value) = field.split_once('=')?;
    match name {
        "rv" => event.rv = number(value)?.try_into().ok()?,
        "api" => {
            let api_version = Some(self::field(value)).filter(|v| !v.is_empty());
            event.index = Some(RecordedIndex {
                uid: None,
                owners: Vec::new(),
                api_version: api_version.map(Arc::from),
            });
        }
        "uid" => event.index.as_mut()?.uid = Some(number(value)?),
        "owner" => event.index.as_mut()?.owners.push(number(value)?),
        _ => return None,
    }
    Some(())
}

/// A hole from its header field, `start..end=name`.
fn hole(field: &str) -> Option<(Range<usize>, Hole)> {
    let (start, rest) = field.split_once('.')?;
    let (end, name) = rest.strip_prefix('.')?.split_once('=')?;
    let (start, end) = (number(start)?, number(end)?);
    let hole = match name {
        "now" => Hole::Now,
        "root-ca" => Hole::RootCa,
        "host" => Hole::Host,
        "port" => Hole::Port,
        uid => Hole::Uid(number(uid.strip_prefix("uid")?)?),
    };
    (start <= end).then_some((start..end, hole))
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

    #[rstest]
    #[case::uid("3..9=uid12", Some((3..9, Hole::Uid(12))))]
    #[case::now("0..6=now", Some((0..6, Hole::Now)))]
    #[case::root_ca("10..20=root-ca", Some((10..20, Hole::RootCa)))]
    #[case::reversed("9..3=now", None)]
    #[case::unknown("0..6=later", None)]
    #[case::no_range("now", None)]
    #[case::not_a_number("a..6=now", None)]
    #[case::host("1..2=host", Some((1..2, Hole::Host)))]
    #[case::port("1..2=port", Some((1..2, Hole::Port)))]
    #[case::one_dot("1.2=port", None)]
    fn holes_read_from_a_header(
        #[case] text: &str,
        #[case] expected: Option<(Range<usize>, Hole)>,
    ) {
        assert_eq!(hole(text), expected);
    }

    #[rstest]
    #[case::zero("0", Some(0))]
    #[case::some("4096", Some(4096))]
    #[case::empty("", None)]
    #[case::not_a_digit("4a", None)]
    #[case::negative("-1", None)]
    #[case::too_large("99999999999999999999999", None)]
    fn numbers_are_decimal_digits(#[case] text: &str, #[case] expected: Option<usize>) {
        assert_eq!(number(text), expected);
    }

    #[rstest]
    #[case::empty("")]
    #[case::no_uid_count("ADDED - namespaces - default len=2 rv=1\n{}\n")]
    #[case::header_without_state("uids 0\nADDED - namespaces - default len=2 rv=1")]
    #[case::unknown_type("uids 0\nBOOKMARK - namespaces - default len=2 rv=1\n{}\n")]
    #[case::short_header("uids 0\nADDED - namespaces\n{}\n")]
    #[case::no_length("uids 0\nADDED - namespaces - default rv=1\n{}\n")]
    #[case::state_shorter_than_its_length("uids 0\nADDED - namespaces - default len=9 rv=1\n{}\n")]
    #[case::state_longer_than_its_length("uids 0\nADDED - namespaces - default len=1 rv=1\n{}\n")]
    #[case::no_resource_version("uids 0\nADDED - namespaces - default len=2\n{}\n")]
    #[case::hole_past_the_state("uids 1\nADDED - namespaces - default len=2 rv=1 0..9=uid0\n{}\n")]
    #[case::owner_without_index("uids 1\nADDED - namespaces - default len=2 rv=1 owner=0\n{}\n")]
    #[case::unknown_attribute("uids 0\nADDED - namespaces - default len=2 rv=1 color=red\n{}\n")]
    fn malformed_texts_are_refused(#[case] text: &'static str) {
        assert!(parse(text).is_err());
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
                holes: vec![
                    (at("\"u-1\"", 0), Hole::Uid(0)),
                    (at("\"12:00\"", 0), Hole::Now),
                    (at("\"pem\"", 0), Hole::RootCa),
                    (at("\"u-1\"", 10), Hole::Uid(0)),
                ],
                text: Bytes::from_static(text),
                rv: 7,
                index: Some(RecordedIndex {
                    uid: Some(0),
                    owners: vec![0],
                    api_version: Some(Arc::from("v1")),
                }),
            }],
        };
        let written: &'static str = Box::leak(to_text(&template, "a test").into_boxed_str());
        assert!(written.contains(r#"{"uid":"$uid0","t":"$now","ca":"$root-ca","owner":"$uid0"}"#));
        let read = parse(written).expect("reads back");
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
            ipv6: false,
        };
        let Some((name, compiled_text)) = file(&key) else {
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
        let compiled = parse(compiled_text).expect("the compiled recording reads");
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
