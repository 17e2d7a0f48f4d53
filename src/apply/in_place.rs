//! [`super::record_update`] on the managedFields entries as they are stored: JSON.
//!
//! A non-apply write changes a few fields, and the entries it starts from are most often the
//! ones this server wrote (a patch keeps them, a PUT sends back what it read). Decoding every
//! manager's `fieldsV1` into sets and encoding them again costs more than everything else in
//! such a write, while the change it makes is small: the fields the write changed or removed
//! leave every entry, and the changed ones join the writer's entry. Those edits are made here on
//! the JSON, where the set algebra's result lands anyway; entries the write does not touch are
//! kept as they are.
//!
//! The result equals the set algebra's only for entries in the exact form [`super::Managed`]
//! encodes (canonical keys, no `"."` on a leaf, known fields only) and in the request's version;
//! anything else is left to the general path (see [`record_update`]). The tests in
//! `super::tests` compare both paths on the same writes.

use std::cell::RefCell;
use std::cmp::Ordering;
use std::collections::HashSet;

use serde_json::{Map, Value};

use super::fieldpath::{FieldSet, PathElement};
use super::typed::added_fields_v1;
use super::{strip_set, unix_seconds, write_entries, Ctx, Id};
#[cfg(test)]
use crate::typed::gotime::{format_time, parse_time, GO_ZERO_TIME_UNIX};

/// The keys [`super::ManagedFields`] writes for an entry.
const ENTRY_KEYS: [&str; 7] = [
    "apiVersion",
    "fieldsType",
    "fieldsV1",
    "manager",
    "operation",
    "subresource",
    "time",
];

/// Records a non-apply write by `id` into `new`'s `metadata.managedFields`, as
/// [`super::record_update`] does. Returns false, having changed nothing, when the entries the
/// write starts from are not in the form this server writes or name another version.
pub(super) fn record_update(old: Option<&Value>, new: &mut Value, id: &Id, ctx: &Ctx) -> bool {
    let Some(from_new) = source(old, new, id, ctx.api_version) else {
        return false;
    };
    let taken = take_entries(new);
    let mut entries = match from_new {
        true => taken,
        false => old
            .and_then(|o| meta_field(o, "managedFields"))
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
    };
    let is_create = old
        .and_then(|o| meta_field(o, "uid"))
        .and_then(Value::as_str)
        .is_none_or(str::is_empty);
    if entries.is_empty() && !is_create {
        return true;
    }
    let live = old.filter(|o| o.is_object());
    if entries.is_empty() && live.is_none() && ctx.ignore.is_none() {
        let fields = added_fields_v1(new, ctx.root, strip_set());
        if !fields.is_empty() {
            let mut entry = new_entry(id);
            entry["fieldsV1"] = Value::Object(fields);
            entry["time"] = Value::String(ctx.now.to_string());
            entries.push(entry);
        }
        write_entries(new, entries);
        return true;
    }
    let empty = Value::Object(Map::new());
    let Some(cmp) = ctx.compare_in(live.unwrap_or(&empty), new, ctx.api_version) else {
        return false;
    };
    let mut changed = cmp.modified;
    changed.union_with(cmp.added);
    // What the writer comes to own: the changed fields but those nobody owns and the reset
    // ones; most often all of them, then not copied.
    let cut = changed.shares_member(strip_set())
        || ctx.ignore.as_ref().is_some_and(|ig| changed.touches(ig));
    let adjusted = cut.then(|| ctx.filter(changed.difference(strip_set())));
    let mine = adjusted.as_ref().unwrap_or(&changed);
    take_from_entries(&mut entries, id, &changed, adjusted.as_ref(), &cmp.removed);
    if !mine.is_empty() {
        give_to_writer(&mut entries, id, mine, ctx.now);
    }
    entries.sort_by(encoded_order);
    write_entries(new, entries);
    true
}

/// Takes what the write changed and removed from every entry, dropping those left empty. The
/// writer's entry ends as (its fields - changed) + what it comes to own (`adjusted`, or all
/// changed when `None`), which is (its fields - what changed outside that) + that: the fields
/// it keeps owning are not taken out to be put back.
fn take_from_entries(
    entries: &mut Vec<Value>,
    id: &Id,
    changed: &FieldSet,
    adjusted: Option<&FieldSet>,
    removed: &FieldSet,
) {
    let not_mine = match adjusted {
        Some(mine) if !mine.is_empty() => Some(changed.difference(mine)),
        Some(_) => None,
        None => Some(FieldSet::default()),
    };
    for entry in entries.iter_mut() {
        let taken = match &not_mine {
            Some(not_mine) if is_entry_of(entry, id) => not_mine,
            _ => changed,
        };
        if let Some(fields) = fields_v1(entry) {
            remove_set(fields, taken);
            remove_set(fields, removed);
        }
    }
    entries.retain_mut(|e| fields_v1(e).is_some_and(|f| !f.is_empty()));
}

/// The writer's entry (made if it has none) comes to own `mine`, and its time moves.
fn give_to_writer(entries: &mut Vec<Value>, id: &Id, mine: &FieldSet, now: &str) {
    let i = match entries.iter().position(|e| is_entry_of(e, id)) {
        Some(i) => i,
        None => {
            entries.push(new_entry(id));
            entries.len() - 1
        }
    };
    let entry = &mut entries[i];
    if let Some(fields) = fields_v1(entry) {
        insert_set(fields, mine);
    }
    if let Some(e) = entry.as_object_mut() {
        e.insert("time".into(), Value::String(now.to_string()));
    }
}

/// Where the entries come from, as [`super::record_update`] chooses (`true`: the new object's),
/// when they are in the form this server writes; `None` otherwise. A reset (`[]`, `[{}]`) and
/// undecodable entries are left to the general path.
fn source(old: Option<&Value>, new: &Value, id: &Id, api_version: &str) -> Option<bool> {
    if !new.get("metadata").is_some_and(Value::is_object) {
        return None;
    }
    let sent = meta_field(new, "managedFields").filter(|v| !v.is_null());
    let (from_new, entries) = match sent {
        Some(v) if id.subresource.is_empty() => (true, Some(v)),
        _ => (
            false,
            old.and_then(|o| meta_field(o, "managedFields"))
                .filter(|v| !v.is_null()),
        ),
    };
    match entries {
        None => Some(false),
        Some(Value::Array(a)) if !(from_new && a.is_empty()) => {
            canonical_entries(a, api_version).then_some(from_new)
        }
        Some(_) => None,
    }
}

/// `metadata.<key>` (`Value::pointer` would allocate for each step of its path).
fn meta_field<'v>(obj: &'v Value, key: &str) -> Option<&'v Value> {
    obj.get("metadata")?.get(key)
}

fn take_entries(new: &mut Value) -> Vec<Value> {
    let taken = new
        .get_mut("metadata")
        .and_then(Value::as_object_mut)
        .and_then(|m| m.remove("managedFields"));
    match taken {
        Some(Value::Array(a)) => a,
        _ => Vec::new(),
    }
}

fn fields_v1(entry: &mut Value) -> Option<&mut Map<String, Value>> {
    entry.get_mut("fieldsV1")?.as_object_mut()
}

fn text<'v>(entry: &'v Value, key: &str) -> &'v str {
    entry.get(key).and_then(Value::as_str).unwrap_or("")
}

/// The entry a write by `id` (operation Update) owns its fields through.
fn is_entry_of(entry: &Value, id: &Id) -> bool {
    text(entry, "operation") == "Update"
        && text(entry, "manager") == id.manager
        && text(entry, "apiVersion") == id.api_version
        && text(entry, "subresource") == id.subresource
}

fn new_entry(id: &Id) -> Value {
    let mut e = Map::new();
    e.insert("manager".into(), Value::String(id.manager.clone()));
    e.insert("operation".into(), Value::String("Update".into()));
    e.insert("apiVersion".into(), Value::String(id.api_version.clone()));
    e.insert("fieldsType".into(), Value::String("FieldsV1".into()));
    e.insert("fieldsV1".into(), Value::Object(Map::new()));
    if !id.subresource.is_empty() {
        e.insert("subresource".into(), Value::String(id.subresource.clone()));
    }
    Value::Object(e)
}

/// `sortEncodedManagedFields`, as [`super::Managed`] encodes.
fn encoded_order(p: &Value, q: &Value) -> Ordering {
    let t = |e: &Value| unix_seconds(text(e, "time"));
    text(p, "operation")
        .cmp(text(q, "operation"))
        .then_with(|| t(p).cmp(&t(q)))
        .then_with(|| text(p, "manager").cmp(text(q, "manager")))
        .then_with(|| text(p, "apiVersion").cmp(text(q, "apiVersion")))
        .then_with(|| text(p, "subresource").cmp(text(q, "subresource")))
}

/// Whether the entries are exactly what encoding their decoded form gives, all in
/// `api_version`, with distinct manager identities (the decode would merge those).
pub(super) fn canonical_entries(entries: &[Value], api_version: &str) -> bool {
    fn identity(e: &Value) -> (&str, &str, &str, &str) {
        let op = text(e, "operation");
        let version = if op == "Apply" {
            ""
        } else {
            text(e, "apiVersion")
        };
        (text(e, "manager"), op, version, text(e, "subresource"))
    }
    entries.iter().all(|e| canonical_entry(e, api_version))
        && entries.iter().enumerate().all(|(i, e)| {
            let me = identity(e);
            entries[..i].iter().all(|o| identity(o) != me)
        })
}

/// Whether `metadata.managedFields` are in the form this server writes them (as
/// [`canonical_entries`], in any apiVersion, each time as `metav1.Time` marshals): decoding them
/// through their Go types gives them back unchanged, so a typed decode may set them aside.
pub(crate) fn in_server_form(entries: &Value) -> bool {
    let Some(entries) = entries.as_array().filter(|a| !a.is_empty()) else {
        return false;
    };
    entries.iter().all(|e| {
        let version = text(e, "apiVersion");
        canonical_entry(e, version)
            && e.get("time")
                .and_then(Value::as_str)
                .is_none_or(time_as_marshalled)
    })
}

/// Whether a time reads back as itself through `metav1.Time`: `YYYY-MM-DDTHH:MM:SSZ`, a real
/// date and time of day, not Go's zero time (which marshals as null). Checked by hand: this
/// runs on every apply, and parsing then formatting cost more than the typing it saves.
pub(super) fn time_as_marshalled(t: &str) -> bool {
    let b = t.as_bytes();
    let digits = |r: std::ops::Range<usize>| {
        b.get(r)
            .filter(|d| d.iter().all(u8::is_ascii_digit))
            .map(|d| d.iter().fold(0u32, |n, c| n * 10 + u32::from(c - b'0')))
    };
    let shape = b.len() == 20
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[13] == b':'
        && b[16] == b':'
        && b[19] == b'Z';
    let (Some(year), Some(month), Some(day), Some(hour), Some(min), Some(sec)) = (
        digits(0..4),
        digits(5..7),
        digits(8..10),
        digits(11..13),
        digits(14..16),
        digits(17..19),
    ) else {
        return false;
    };
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let month_days = match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    shape
        && (1..=12).contains(&month)
        && (1..=month_days).contains(&day)
        && hour < 24
        && min < 60
        && sec < 60
        && t != "0001-01-01T00:00:00Z"
}

/// [`time_as_marshalled`] as typing decides it: parsed, then formatted back.
#[cfg(test)]
pub(super) fn time_round_trips(t: &str) -> bool {
    matches!(parse_time(t, false), Ok((secs, 0))
        if secs != GO_ZERO_TIME_UNIX && format_time(secs, 0, false) == t)
}

fn canonical_entry(entry: &Value, api_version: &str) -> bool {
    let Some(m) = entry.as_object() else {
        return false;
    };
    let strings = m.iter().all(|(k, v)| {
        ENTRY_KEYS.contains(&k.as_str())
            && (k == "fieldsV1" || v.as_str().is_some_and(|s| !s.is_empty()))
    });
    strings
        && matches!(text(entry, "operation"), "Apply" | "Update")
        && text(entry, "apiVersion") == api_version
        && text(entry, "fieldsType") == "FieldsV1"
        && m.get("fieldsV1")
            .and_then(Value::as_object)
            .is_some_and(|f| canonical_level(f, true))
}

/// Whether one level of `fieldsV1` is as [`FieldSet::to_fields_v1`] writes it: objects only,
/// path elements spelled as they serialise, `"."` only beside children and never at the top.
fn canonical_level(level: &Map<String, Value>, top: bool) -> bool {
    level.iter().all(|(k, v)| {
        let Value::Object(below) = v else {
            return false;
        };
        if k == "." {
            return !top && level.len() > 1 && below.is_empty();
        }
        let spelled = match k.as_bytes() {
            [b'f', b':', ..] => true,
            [b'k' | b'v' | b'i', b':', ..] => spelled_as_serialised(k),
            _ => false,
        };
        spelled && canonical_level(below, false)
    })
}

/// Whether a `k:`, `v:` or `i:` key is spelled as its path element serialises. Short keys
/// found so are remembered per thread (a pure function of the key; the same keys come back on
/// every write of an object), so a write parses only keys it has not seen.
fn spelled_as_serialised(key: &str) -> bool {
    const REMEMBERED_KEY_LEN: usize = 256;
    const REMEMBERED_KEYS: usize = 4096;
    thread_local! {
        static SEEN: RefCell<HashSet<String>> = RefCell::new(HashSet::new());
    }
    if SEEN.with_borrow(|seen| seen.contains(key)) {
        return true;
    }
    let spelled = matches!(PathElement::parse(key), Ok(Some(pe)) if pe.serialize() == key);
    if spelled && key.len() <= REMEMBERED_KEY_LEN {
        SEEN.with_borrow_mut(|seen| {
            if seen.len() >= REMEMBERED_KEYS {
                seen.clear();
            }
            seen.insert(key.to_string());
        });
    }
    spelled
}

/// Removes the members of `set` from a `fieldsV1` level, level by level as
/// [`FieldSet::difference`]: a removed member keeps what is below it.
pub(super) fn remove_set(level: &mut Map<String, Value>, set: &FieldSet) {
    let (members, children) = set.parts();
    let mut key = String::new();
    for (pe, below) in children {
        let Some(Value::Object(node)) = level.get_mut(key_of(pe, &mut key)) else {
            continue;
        };
        if node.is_empty() {
            continue;
        }
        remove_set(node, below);
        if node.is_empty() {
            level.remove(&key);
        } else if node.len() == 1 && node.contains_key(".") {
            node.clear();
        }
    }
    for pe in members {
        if let Some(Value::Object(node)) = level.get_mut(key_of(pe, &mut key)) {
            if node.is_empty() {
                level.remove(&key);
            } else {
                node.remove(".");
            }
        }
    }
}

/// Adds the members of `set` to a `fieldsV1` level, as [`FieldSet::union`].
pub(super) fn insert_set(level: &mut Map<String, Value>, set: &FieldSet) {
    let (members, children) = set.parts();
    let mut key = String::new();
    for pe in members {
        match level.get_mut(key_of(pe, &mut key)) {
            None => {
                level.insert(key.clone(), Value::Object(Map::new()));
            }
            Some(Value::Object(node)) => {
                if !node.is_empty() && !node.contains_key(".") {
                    node.insert(".".into(), Value::Object(Map::new()));
                }
            }
            Some(other) => *other = Value::Object(Map::new()),
        }
    }
    for (pe, below) in children {
        match level.get_mut(key_of(pe, &mut key)) {
            Some(Value::Object(node)) => {
                let member = node.is_empty() || node.contains_key(".");
                insert_set(node, below);
                if member && !node.is_empty() && !node.contains_key(".") {
                    node.insert(".".into(), Value::Object(Map::new()));
                }
            }
            _ => {
                let mut node = Map::new();
                insert_set(&mut node, below);
                if !node.is_empty() {
                    level.insert(key.clone(), Value::Object(node));
                }
            }
        }
    }
}

/// `pe`'s `fieldsV1` key, written into `buf` (a field's without allocating).
fn key_of<'b>(pe: &PathElement, buf: &'b mut String) -> &'b str {
    buf.clear();
    match pe {
        PathElement::Field(name) => {
            buf.push_str("f:");
            buf.push_str(name);
        }
        other => buf.push_str(&other.serialize()),
    }
    buf
}
