//! The generated protobuf field table (`src/data/k8s-1.36/protobuf.table`), embedded and parsed
//! once per process.
//!
//! # Format
//!
//! Plain text, one record per line, fields separated by one space; `#` lines are comments:
//!
//! ```text
//! M <index> <fully qualified message> [<special>]
//! K <Kind> <apiVersion>...                      the message is this kind in these versions
//! <number> <wire type> <Go kind> <JSON name> <mode>   one field, in Go declaration order
//! ```
//!
//! Messages are sorted by name and numbered from 0; a field refers to a message as `@<index>`.
//! Go kinds: `int32 int64 uint32 uint64 bool string bytes float64 float32 @N`, a slice `[]T`
//! or a map `map[string]T`. Modes: `P` pointer (emitted whenever present), `N` pointer without
//! omitempty (`null` when absent), `O` omitempty, `Z` omitzero, `V` value (always emitted), `I`
//! an embedded `json:",inline"` struct (JSON name `-`). Specials name the types whose JSON form
//! is hand-written in Go: `time microtime duration quantity intorstring rawextension fieldsv1`
//! and `wrapper` (a named slice such as `Verbs`: `message { repeated T items = 1 }` on the wire,
//! a plain array in JSON).

use std::collections::HashMap;
use std::sync::LazyLock;

use super::wire::{FIXED32, FIXED64, LEN, VARINT};

/// The embedded table.
pub(super) const SOURCE: &str = include_str!("../../data/k8s-1.36/protobuf.table");

/// The table, parsed on first use.
pub(super) static TABLE: LazyLock<Table> = LazyLock::new(|| match Table::parse(SOURCE) {
    Ok(t) => t,
    // The embedded file is generated and checked by the unit tests; it cannot fail at run time.
    Err(e) => panic!("the embedded protobuf table is invalid: {e}"),
});

/// Index of a message in [`Table::messages`].
pub(super) type MsgId = u32;

/// Every message the built-in kinds use, and the kinds.
pub(super) struct Table {
    pub(super) messages: Vec<Message>,
    /// Kind -> (apiVersion, message).
    kinds: HashMap<&'static str, Vec<(&'static str, MsgId)>>,
}

/// One protobuf message (a Go struct).
pub(super) struct Message {
    /// Fully qualified protobuf name.
    pub(super) name: &'static str,
    pub(super) special: Special,
    /// In Go declaration order, which is the JSON order.
    pub(super) fields: Vec<Field>,
    /// Indexes into `fields`, sorted by field number: the wire order.
    pub(super) by_number: Vec<u16>,
    /// Field number -> index into `fields` + 1 (0: no such field): the decode lookup.
    number_slots: Vec<u8>,
    /// Indexes into `fields` but the inline ones, sorted by JSON name: the encode lookup.
    pub(super) by_json: Vec<u16>,
}

/// The most fields a message may have (the encoder keeps one slot per field on the stack).
pub(super) const MAX_FIELDS: usize = 64;

/// Types whose JSON form Go writes by hand.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Special {
    None,
    Time,
    MicroTime,
    Duration,
    Quantity,
    IntOrString,
    RawExtension,
    FieldsV1,
    Wrapper,
}

/// One field.
#[derive(Clone, Copy, Debug)]
pub(super) struct Field {
    pub(super) number: u32,
    /// The wire type gogo writes (2 for packed repeated scalars).
    pub(super) wire: u8,
    pub(super) ty: Ty,
    pub(super) json: &'static str,
    pub(super) mode: Mode,
}

/// A single value's kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Scalar {
    Int32,
    Int64,
    Uint32,
    Uint64,
    Bool,
    String,
    Bytes,
    Double,
    Float,
    Message(MsgId),
}

impl Scalar {
    /// The wire type of one value.
    pub(super) fn wire(self) -> u8 {
        match self {
            Scalar::Int32 | Scalar::Int64 | Scalar::Uint32 | Scalar::Uint64 | Scalar::Bool => {
                VARINT
            }
            Scalar::Double => FIXED64,
            Scalar::Float => FIXED32,
            Scalar::String | Scalar::Bytes | Scalar::Message(_) => LEN,
        }
    }
}

/// A field's shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Ty {
    One(Scalar),
    /// A Go slice: a repeated field.
    List(Scalar),
    /// A Go map with string keys: repeated `{key = 1, value = 2}` entries.
    Map(Scalar),
}

/// How Go's encoding/json treats the field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Mode {
    /// A pointer with omitempty: emitted whenever it was on the wire, zero values included.
    Pointer,
    /// A pointer without omitempty: `null` when absent.
    NullablePointer,
    /// omitempty: left out when zero (structs are never zero for omitempty).
    OmitEmpty,
    /// omitzero: left out when zero.
    OmitZero,
    /// No option: always emitted, the zero value when absent.
    Value,
    /// An embedded `json:",inline"` struct: its fields are the parent's.
    Inline,
}

impl Table {
    /// The message of a kind, if it has protobuf.
    pub(super) fn kind(&self, api_version: &str, kind: &str) -> Option<MsgId> {
        let versions = self.kinds.get(kind)?;
        versions
            .iter()
            .find(|(v, _)| *v == api_version)
            .map(|(_, id)| *id)
    }

    /// A message by index. Indexes come from the table itself, so they are always in range.
    pub(super) fn message(&self, id: MsgId) -> &Message {
        &self.messages[id as usize]
    }

    /// Parses the table text. Errors name the line.
    pub(super) fn parse(text: &'static str) -> Result<Table, String> {
        let mut messages: Vec<Message> = Vec::with_capacity(1200);
        let mut kinds: HashMap<&'static str, Vec<(&'static str, MsgId)>> = HashMap::new();
        for (n, line) in text.lines().enumerate() {
            let err = |e: String| format!("line {}: {e}: {line}", n + 1);
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut parts = line.split(' ');
            let head = parts.next().unwrap_or_default();
            match head {
                "M" => messages.push(parse_message(parts, messages.len()).map_err(err)?),
                "K" => {
                    let id = messages
                        .len()
                        .checked_sub(1)
                        .ok_or("K before M")
                        .map_err(|e| err(e.into()))?;
                    let kind = parts.next().ok_or("no kind").map_err(|e| err(e.into()))?;
                    let list = kinds.entry(kind).or_default();
                    list.extend(parts.map(|v| (v, id as MsgId)));
                }
                _ => {
                    let m = messages
                        .last_mut()
                        .ok_or("field before M")
                        .map_err(|e| err(e.into()))?;
                    m.fields.push(parse_field(line).map_err(err)?);
                }
            }
        }
        let mut table = Table { messages, kinds };
        table.finish()?;
        Ok(table)
    }

    /// Validates the references and the specials, and builds the number indexes.
    fn finish(&mut self) -> Result<(), String> {
        let count = self.messages.len();
        for m in &mut self.messages {
            if m.fields.len() > MAX_FIELDS {
                return Err(format!("{}: more than {MAX_FIELDS} fields", m.name));
            }
            for f in &m.fields {
                if let Ty::One(Scalar::Message(id))
                | Ty::List(Scalar::Message(id))
                | Ty::Map(Scalar::Message(id)) = f.ty
                {
                    if id as usize >= count {
                        return Err(format!("{}.{}: no message @{id}", m.name, f.json));
                    }
                }
            }
            let mut order: Vec<u16> = (0..m.fields.len() as u16).collect();
            order.sort_by_key(|&i| m.fields[i as usize].number);
            if order
                .windows(2)
                .any(|w| m.fields[w[0] as usize].number == m.fields[w[1] as usize].number)
            {
                return Err(format!("{}: duplicate field number", m.name));
            }
            let max = m.fields.iter().map(|f| f.number).max().unwrap_or(0);
            if max > 1024 {
                return Err(format!("{}: field number {max} is too large", m.name));
            }
            m.number_slots = vec![0; max as usize + 1];
            for (i, f) in m.fields.iter().enumerate() {
                m.number_slots[f.number as usize] = (i + 1) as u8;
            }
            m.by_number = order;
            let mut by_json: Vec<u16> = (0..m.fields.len() as u16)
                .filter(|&i| m.fields[i as usize].mode != Mode::Inline)
                .collect();
            by_json.sort_by_key(|&i| m.fields[i as usize].json);
            m.by_json = by_json;
            check_special(m)?;
        }
        Ok(())
    }
}

impl Message {
    /// The message name without its package, for error texts (`Deployment`).
    pub(super) fn short_name(&self) -> &'static str {
        self.name.rsplit('.').next().unwrap_or(self.name)
    }

    /// The index in `fields` of a (not inline) field's JSON name.
    pub(super) fn json_index(&self, json: &str) -> Option<usize> {
        self.by_json
            .binary_search_by_key(&json, |&i| self.fields[i as usize].json)
            .ok()
            .map(|at| self.by_json[at] as usize)
    }

    /// The index in `fields` of a field number.
    pub(super) fn field_index(&self, number: u32) -> Option<usize> {
        let slot = *self.number_slots.get(usize::try_from(number).ok()?)?;
        usize::from(slot).checked_sub(1)
    }
}

/// `M <index> <name> [<special>]`.
fn parse_message(
    mut parts: impl Iterator<Item = &'static str>,
    expected: usize,
) -> Result<Message, String> {
    let index: usize = parts
        .next()
        .and_then(|i| i.parse().ok())
        .ok_or("bad index")?;
    if index != expected {
        return Err(format!("index {index}, expected {expected}"));
    }
    let name = parts.next().ok_or("no name")?;
    let special = match parts.next() {
        None => Special::None,
        Some("time") => Special::Time,
        Some("microtime") => Special::MicroTime,
        Some("duration") => Special::Duration,
        Some("quantity") => Special::Quantity,
        Some("intorstring") => Special::IntOrString,
        Some("rawextension") => Special::RawExtension,
        Some("fieldsv1") => Special::FieldsV1,
        Some("wrapper") => Special::Wrapper,
        Some(other) => return Err(format!("unknown special {other}")),
    };
    Ok(Message {
        name,
        special,
        fields: Vec::new(),
        by_number: Vec::new(),
        number_slots: Vec::new(),
        by_json: Vec::new(),
    })
}

/// `<number> <wire type> <Go kind> <JSON name> <mode>`.
fn parse_field(line: &'static str) -> Result<Field, String> {
    let mut parts = line.split(' ');
    let mut next = || parts.next().ok_or_else(|| "too few columns".to_string());
    let number: u32 = next()?.parse().map_err(|_| "bad number")?;
    let wire: u8 = next()?.parse().map_err(|_| "bad wire type")?;
    let kind = next()?;
    let json = next()?;
    let mode = match next()? {
        "P" => Mode::Pointer,
        "N" => Mode::NullablePointer,
        "O" => Mode::OmitEmpty,
        "Z" => Mode::OmitZero,
        "V" => Mode::Value,
        "I" => Mode::Inline,
        other => return Err(format!("unknown mode {other}")),
    };
    let ty = if let Some(k) = kind.strip_prefix("[]") {
        Ty::List(parse_scalar(k)?)
    } else if let Some(k) = kind.strip_prefix("map[string]") {
        Ty::Map(parse_scalar(k)?)
    } else {
        Ty::One(parse_scalar(kind)?)
    };
    let expected = match ty {
        Ty::One(s) => s.wire() == wire,
        Ty::List(s) => s.wire() == wire || (wire == LEN && s.wire() != LEN),
        Ty::Map(_) => wire == LEN,
    };
    if number == 0 || number > i32::MAX as u32 || !expected {
        return Err("bad number or wire type".into());
    }
    if mode == Mode::Inline && !matches!(ty, Ty::One(Scalar::Message(_))) {
        return Err("inline field that is not a message".into());
    }
    Ok(Field {
        number,
        wire,
        ty,
        json,
        mode,
    })
}

fn parse_scalar(kind: &str) -> Result<Scalar, String> {
    Ok(match kind {
        "int32" => Scalar::Int32,
        "int64" => Scalar::Int64,
        "uint32" => Scalar::Uint32,
        "uint64" => Scalar::Uint64,
        "bool" => Scalar::Bool,
        "string" => Scalar::String,
        "bytes" => Scalar::Bytes,
        "float64" => Scalar::Double,
        "float32" => Scalar::Float,
        _ => Scalar::Message(
            kind.strip_prefix('@')
                .and_then(|i| i.parse().ok())
                .ok_or_else(|| format!("unknown Go kind {kind}"))?,
        ),
    })
}

/// The fields the hand-written transcoding of each special type relies on (they are fixed by
/// apimachinery; a table that disagrees is rejected).
fn check_special(m: &Message) -> Result<(), String> {
    use Scalar::*;
    let expected: &[(u32, Ty)] = match m.special {
        Special::None => return Ok(()),
        Special::Time | Special::MicroTime => &[(1, Ty::One(Int64)), (2, Ty::One(Int32))],
        Special::Duration => &[(1, Ty::One(Int64))],
        Special::Quantity => &[(1, Ty::One(String))],
        Special::IntOrString => &[
            (1, Ty::One(Int64)),
            (2, Ty::One(Int32)),
            (3, Ty::One(String)),
        ],
        Special::RawExtension | Special::FieldsV1 => &[(1, Ty::One(Bytes))],
        Special::Wrapper => match m.fields.first().map(|f| f.ty) {
            Some(Ty::List(String)) => &[(1, Ty::List(String))],
            _ => {
                return Err(format!(
                    "{}: a wrapper of something else than strings",
                    m.name
                ))
            }
        },
    };
    let actual: Vec<(u32, Ty)> = m.fields.iter().map(|f| (f.number, f.ty)).collect();
    if actual != expected {
        return Err(format!(
            "{}: fields {actual:?}, expected {expected:?}",
            m.name
        ));
    }
    Ok(())
}
