//! The text of a recorded start (`*.start`), read by `build.rs`: it writes each compiled-in
//! recording as a static [`File`] whose states are ranges of the text, so that no process
//! reads the text itself (reading it was a fifth of the first start in the unoptimised
//! builds tests use). The crate's tests read texts with it too, and the same [`File`] turns
//! into the replayed template either way.
//!
//! A text is a header line per event (its type, table, key, the state's length, its
//! resourceVersion, what the store's indexes read of it, and its holes) and the state's
//! bytes on the next line, with placeholders where the holes are (`"$uid7"`, `"$now"`,
//! `"$root-ca"`, `"$host"`, and `0` for the port).
//!
//! Standalone (std only), as `build.rs` compiles it by path.

use std::borrow::Cow;
use std::ops::Range;

/// A per-server value in a recorded state: the JSON token at a place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hole {
    /// The uid of the recording's n-th object (wherever it is named: its own metadata, an
    /// owner reference).
    Uid(usize),
    /// The time of the write (creationTimestamp, managedFields, conditions).
    Now,
    /// The CA bundle of `kube-root-ca.crt`.
    RootCa,
    /// The server's host (a string token).
    Host,
    /// The server's port (a number token).
    Port,
}

/// A recorded start, borrowed from its text (or, compiled in, from static tables).
#[derive(Debug, Clone)]
pub struct File<'a> {
    /// How many distinct uids the recording made.
    pub uids: usize,
    /// Its events, in the order they were written.
    pub events: Cow<'a, [Event<'a>]>,
}

/// One recorded event.
#[derive(Debug, Clone)]
pub struct Event<'a> {
    /// `ADDED`, `MODIFIED` or `DELETED`.
    pub kind: &'a str,
    /// The store table's group (`""` for the core group).
    pub group: &'a str,
    /// The store table's resource.
    pub resource: &'a str,
    /// The object's namespace (`""` for a cluster-scoped object).
    pub namespace: &'a str,
    /// The object's name.
    pub name: &'a str,
    /// Where the state's bytes are in the text.
    pub state: Range<usize>,
    /// The resourceVersion the state was recorded with.
    pub rv: u64,
    /// What the store's indexes read of the state, when the recording kept it.
    pub index: Option<Index<'a>>,
    /// Where the per-server values are in the state, in order.
    pub holes: Cow<'a, [(Range<usize>, Hole)]>,
}

/// What the store's indexes read of a recorded state, its uids as hole numbers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Index<'a> {
    /// `metadata.uid`.
    pub uid: Option<usize>,
    /// The owners' uids.
    pub owners: Cow<'a, [usize]>,
    /// `apiVersion` (empty when the state has none).
    pub api_version: &'a str,
}

/// Why a recorded start's text cannot be read (a bug: the test that writes it reads it back).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// The line, from 1.
    pub line: usize,
    /// What is wrong with it.
    pub what: &'static str,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {} of a recorded start: {}", self.line, self.what)
    }
}

impl std::error::Error for ParseError {}

/// The name a hole has in a header (`uid7`, `now`, ...).
pub fn hole_name(hole: Hole) -> String {
    match hole {
        Hole::Uid(n) => format!("uid{n}"),
        Hole::Now => "now".to_string(),
        Hole::RootCa => "root-ca".to_string(),
        Hole::Host => "host".to_string(),
        Hole::Port => "port".to_string(),
    }
}

/// The placeholder a text holds in place of a hole: a token of the same JSON type as the
/// values it stands for.
pub fn placeholder(hole: Hole) -> String {
    match hole {
        Hole::Port => "0".to_string(),
        hole => format!("\"${}\"", hole_name(hole)),
    }
}

/// The header field of a string: `-` stands for the empty string.
pub fn field_of(s: &str) -> &str {
    if s.is_empty() {
        "-"
    } else {
        s
    }
}

/// A string from its header field.
fn field(s: &str) -> &str {
    if s == "-" {
        ""
    } else {
        s
    }
}

/// Reads a recorded start's text; each state is a range of `text`, and nothing but the
/// headers is scanned (each gives its state's length).
pub fn parse(text: &str) -> Result<File<'_>, ParseError> {
    let err = |line: usize, what| ParseError { line, what };
    let mut at = 0;
    let mut line = 1;
    let mut uids = None;
    while let Some((first, _)) = text[at..].split_once('\n') {
        at += first.len() + 1;
        if !first.starts_with('#') {
            uids = first.strip_prefix("uids ").and_then(number);
            break;
        }
        line += 1;
    }
    let uids = uids.ok_or_else(|| err(line, "no uid count"))?;
    let mut events = Vec::new();
    while at < text.len() {
        line += 1;
        let (header, _) = text[at..]
            .split_once('\n')
            .ok_or_else(|| err(line, "a header without a state"))?;
        at += header.len() + 1;
        let event = event(header, text, at).ok_or_else(|| err(line, "a malformed event"))?;
        at = event.state.end + 1;
        events.push(event);
        line += 1;
    }
    Ok(File {
        uids,
        events: Cow::Owned(events),
    })
}

/// One event from its header line, its state starting at `at` in `text` and followed by a
/// newline.
fn event<'a>(header: &'a str, text: &str, at: usize) -> Option<Event<'a>> {
    let mut fields = header.split(' ');
    let kind = fields.next()?;
    if !matches!(kind, "ADDED" | "MODIFIED" | "DELETED") {
        return None;
    }
    let (group, resource) = (field(fields.next()?), field(fields.next()?));
    let (namespace, name) = (field(fields.next()?), field(fields.next()?));
    let len = fields.next()?.strip_prefix("len=").and_then(number)?;
    let state = at..at.checked_add(len)?;
    if text.get(state.end..)?.as_bytes().first() != Some(&b'\n') {
        return None;
    }
    let mut event = Event {
        kind,
        group,
        resource,
        namespace,
        name,
        state,
        rv: 0,
        index: None,
        holes: Cow::Owned(Vec::new()),
    };
    for f in fields {
        attribute(&mut event, f, len)?;
    }
    (event.rv > 0).then_some(event)
}

/// A decimal number (std's parse).
fn number(s: &str) -> Option<usize> {
    s.parse().ok()
}

/// Reads one of a header's attributes into `event`, whose state is `len` bytes long: a hole
/// (`start..end=name`), the resourceVersion (`rv=`) or the index (`api=`, then `uid=`,
/// `owner=`).
fn attribute<'a>(event: &mut Event<'a>, field: &'a str, len: usize) -> Option<()> {
    if field.as_bytes().first().is_some_and(u8::is_ascii_digit) {
        let (range, hole) = hole(field).filter(|(range, _)| range.end <= len)?;
        event.holes.to_mut().push((range, hole));
        return Some(());
    }
    let (name, value) = field.split_once('=')?;
    match name {
        "rv" => event.rv = number(value)?.try_into().ok()?,
        "api" => {
            event.index = Some(Index {
                uid: None,
                owners: Cow::Owned(Vec::new()),
                api_version: self::field(value),
            });
        }
        "uid" => event.index.as_mut()?.uid = Some(number(value)?),
        "owner" => event.index.as_mut()?.owners.to_mut().push(number(value)?),
        _ => return None,
    }
    Some(())
}

/// A hole from its header field, `start..end=name`.
pub fn hole(field: &str) -> Option<(Range<usize>, Hole)> {
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

    /// A text reads into its events, each state the range of its line.
    #[test]
    fn a_text_reads_into_ranges() {
        let text = "# a comment\nuids 2\nADDED g r ns n len=2 rv=5 api=v1 uid=1 owner=0 0..2=uid1\n{}\nDELETED - r - m len=0 rv=6\n\n";
        let file = parse(text).expect("reads");
        assert_eq!(file.uids, 2);
        let [added, deleted] = &file.events[..] else {
            panic!("two events: {:?}", file.events);
        };
        assert_eq!(
            (added.kind, added.group, added.namespace, added.name),
            ("ADDED", "g", "ns", "n")
        );
        assert_eq!(&text[added.state.clone()], "{}");
        assert_eq!(added.rv, 5);
        assert_eq!(&added.holes[..], &[(0..2, Hole::Uid(1))]);
        let index = added.index.as_ref().expect("an index");
        assert_eq!(
            (index.uid, &index.owners[..], index.api_version),
            (Some(1), &[0][..], "v1")
        );
        assert_eq!(
            (deleted.kind, deleted.group, deleted.namespace),
            ("DELETED", "", "")
        );
        assert_eq!(&text[deleted.state.clone()], "");
        assert!(deleted.index.is_none());
    }
}
