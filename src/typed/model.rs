//! The Go type model of the built-in kinds (`src/data/k8s-1.36/protobuf.table`), embedded and
//! indexed once per process, each message parsed when first walked (a process that writes a
//! few kinds parses their types, not the 1,100 messages of all). The protobuf transcoder ([`crate::endpoints::protobuf`]) and the
//! JSON normalizer ([`super::normalize()`]) both walk it.
//!
//! # Format
//!
//! Plain text, one record per line, fields separated by one space; `#` lines are comments:
//!
//! ```text
//! M <index> <fully qualified message> [<special>]
//! K <Kind> <apiVersion>...                      the message is this kind in these versions
//! <number> <wire type> <Go kind> <JSON name> <mode> [<Go type> [<element Go type>]]
//! J <Go kind> <JSON name> <mode> [<Go type> [<element Go type>]]
//! ```
//!
//! Messages are sorted by name and numbered from 0; a field refers to a message as `@<index>`.
//! Field lines are in Go declaration order. A numbered line is a field protobuf carries; a `J`
//! line is one only JSON sees (the embedded `TypeMeta` of every kind, whose `apiVersion` and
//! `kind` protobuf keeps in its envelope). Go kinds: `int32 int64 uint32 uint64 bool string
//! bytes float64 float32 @N`, a slice `[]T` or a map `map[string]T`. Modes: `P` pointer
//! (emitted whenever present), `N` pointer without omitempty (`null` when absent), `O`
//! omitempty, `Z` omitzero, `V` value (always emitted), `I` an embedded `json:",inline"` struct
//! (JSON name `-`). Specials name the types whose JSON form is hand-written in Go: `time
//! microtime duration quantity intorstring rawextension fieldsv1` and `wrapper` (a named slice
//! such as `Verbs`: `message { repeated T items = 1 }` on the wire, a plain array in JSON).
//!
//! The Go types (pointers removed, spelled as Go's `reflect.Type.String()` spells them, which
//! is how encoding/json names them in its errors: `v1.Protocol`, `[]v1.Capability`,
//! `v1.ResourceList`) are written only where the kind does not imply them; `.` is the implied
//! type in front of an element type. The implied type is the Go kind (`[]uint8` for bytes), the
//! message's `<package>.<Name>` (the last two parts of its name), `[]T` or `map[string]T`; the
//! implied element type is the field's type without its `[]` or `map[K]`, or else the
//! element of the Go kind. The generator checks that every message's Go type is derivable.

use std::borrow::Cow;
use std::sync::{LazyLock, OnceLock};

/// How deeply messages (Go structs) may nest before an input is refused. Shared by the
/// protobuf transcoder and the normalizer so that a body either passes both or neither; no
/// built-in type nests nearly as deep.
pub const MAX_DEPTH: usize = 100;

/// Protobuf wire type numbers, which the table records per field.
pub const VARINT: u8 = 0;
/// Protobuf wire type 1 (8 bytes).
pub const FIXED64: u8 = 1;
/// Protobuf wire type 2 (length-delimited).
pub const LEN: u8 = 2;
/// Protobuf wire type 5 (4 bytes).
pub const FIXED32: u8 = 5;

/// The embedded table, for code that wants to parse it again (the benchmark).
pub const SOURCE: &str = include_str!("../data/k8s-1.36/protobuf.table");

/// Where `build.rs` found the embedded table's messages and kinds.
mod generated {
    include!(concat!(env!("OUT_DIR"), "/k8s_table_index.rs"));
}

/// The table, its messages parsed as they are first walked: the one every caller shares.
/// `build.rs` indexed it; the unit tests parse and check it whole (`Table::parse`).
pub static TABLE: LazyLock<Table> = LazyLock::new(|| Table::embedded(SOURCE));

/// Index of a message in [`Table::messages`]: fields refer to messages by it, so that the
/// table is a flat vector without pointers.
pub type MsgId = u32;

/// Every message (Go struct) the built-in kinds use, and the kinds: what a transcoder needs to
/// find a kind's type and walk it.
pub struct Table {
    /// All messages, indexed by [`MsgId`], each parsed on first use.
    messages: Vec<Entry>,
    /// (Kind, apiVersion, message), sorted by kind and apiVersion.
    kinds: Cow<'static, [(&'static str, &'static str, MsgId)]>,
}

/// A message of the table: its name and its field lines, parsed when first asked for.
struct Entry {
    /// Fully qualified protobuf name, for lookups by name before any parse.
    name: &'static str,
    /// The `M` line.
    header: &'static str,
    /// The lines after it, up to the next message.
    body: &'static str,
    /// The line number of the `M` line, for errors.
    line: usize,
    message: OnceLock<Message>,
}

/// One protobuf message, which is one Go struct (or a type with a hand-written JSON form).
pub struct Message {
    /// Fully qualified protobuf name (`k8s.io.api.apps.v1.Deployment`), which is also the Go
    /// package path and type name.
    pub name: &'static str,
    /// Whether Go writes its JSON by hand, and how.
    pub special: Special,
    /// The fields protobuf carries, in Go declaration order (the JSON order).
    pub fields: Vec<Field>,
    /// Fields only JSON sees (the embedded `TypeMeta`), which the protobuf transcoder must not
    /// meet; their `number` and `wire` are 0.
    pub json_only: Vec<Field>,
    /// Indexes into `fields`, sorted by field number: the wire order.
    pub by_number: Vec<u16>,
    /// Field number -> index into `fields` + 1 (0: no such field): the decode lookup.
    number_slots: Vec<u8>,
    /// (signature of the JSON name, index into `fields`) for every field but the inline ones,
    /// sorted: the lookup by JSON key, which compares integers and then one name.
    lookup: Vec<(u32, u16)>,
    /// The Go type's name (`Deployment`), cut from `name` once.
    short: &'static str,
    /// Its fields as JSON sees them, built on first use.
    json: OnceLock<JsonFields>,
}

/// A struct's fields as encoding/json sees them: its own, the JSON-only ones and those of its
/// inline structs, flattened; with a lookup by JSON key. What a JSON walker needs per object.
pub struct JsonFields {
    /// In declaration order, each inline struct's fields where the inline field is.
    pub fields: Vec<JsonField>,
    /// (signature of the JSON name, index into `fields`), sorted.
    lookup: Vec<(u32, u16)>,
}

/// One field of [`JsonFields`].
pub struct JsonField {
    /// The field, as its struct declares it.
    pub field: Field,
    /// The names of the inline structs it is reached through (`VolumeSource`), outermost
    /// first: encoding/json names them in its error context.
    pub via: Vec<&'static str>,
}

impl JsonFields {
    /// The index in `fields` of a JSON key (exact, as the apiserver's case-sensitive decoder
    /// matches).
    pub fn index(&self, json: &str) -> Option<usize> {
        let sig = signature(json);
        let from = self.lookup.partition_point(|&(s, _)| s < sig);
        self.lookup[from..]
            .iter()
            .take_while(|&&(s, _)| s == sig)
            .map(|&(_, i)| usize::from(i))
            .find(|&i| self.fields[i].field.json == json)
    }
}

/// The most fields a message may have (the encoder keeps one slot per field on the stack).
pub const MAX_FIELDS: usize = 64;

/// Types whose JSON form Go writes by hand (a `MarshalJSON`/`UnmarshalJSON` pair), each
/// implemented by name in the transcoders.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Special {
    /// A plain struct.
    None,
    /// `metav1.Time`: RFC 3339, whole seconds, the zero time is `null`.
    Time,
    /// `metav1.MicroTime`: RFC 3339 with 6 fractional digits.
    MicroTime,
    /// `metav1.Duration`: Go's duration syntax.
    Duration,
    /// `resource.Quantity`: a canonicalised string.
    Quantity,
    /// `intstr.IntOrString`: an int32 or a string.
    IntOrString,
    /// `runtime.RawExtension`: embedded JSON kept as it is.
    RawExtension,
    /// `metav1.FieldsV1`: embedded JSON kept as it is.
    FieldsV1,
    /// A named slice (`Verbs`, `ExtraValue`): a message on the wire, a plain array in JSON.
    Wrapper,
}

/// One field of a message.
#[derive(Clone, Copy, Debug)]
pub struct Field {
    /// The protobuf field number (0 for a JSON-only field).
    pub number: u32,
    /// The wire type gogo writes (2 for packed repeated scalars).
    pub wire: u8,
    /// What the field holds.
    pub ty: Ty,
    /// The JSON name, exactly as Go matches it (`-` for an inline struct).
    pub json: &'static str,
    /// How Go's encoding/json omits it.
    pub mode: Mode,
    /// The Go type when the Go kind does not imply it (see [`Table::go_type`]).
    pub go_type: Option<&'static str>,
    /// The element Go type when neither the Go type nor the kind implies it.
    pub elem_type: Option<&'static str>,
}

/// A single value's kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scalar {
    /// Go `int32`.
    Int32,
    /// Go `int64`.
    Int64,
    /// Go `uint32`.
    Uint32,
    /// Go `uint64`.
    Uint64,
    /// Go `bool`.
    Bool,
    /// Go `string`.
    String,
    /// Go `[]byte` (base64 in JSON).
    Bytes,
    /// Go `float64`.
    Double,
    /// Go `float32`.
    Float,
    /// A struct, or a type with a hand-written JSON form.
    Message(MsgId),
}

impl Scalar {
    /// The wire type of one value.
    pub fn wire(self) -> u8 {
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
pub enum Ty {
    /// One value.
    One(Scalar),
    /// A Go slice: a repeated field.
    List(Scalar),
    /// A Go map with string keys: repeated `{key = 1, value = 2}` entries.
    Map(Scalar),
}

/// How Go's encoding/json treats the field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
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
    /// The message of a kind (apiVersion, Kind), if it is a built-in kind.
    pub fn kind(&self, api_version: &str, kind: &str) -> Option<MsgId> {
        let i = self
            .kinds
            .partition_point(|&(k, v, _)| (k, v) < (kind, api_version));
        match self.kinds.get(i) {
            Some(&(k, v, id)) if (k, v) == (kind, api_version) => Some(id),
            _ => None,
        }
    }

    /// A message by index. Indexes come from the table itself, so they are always in range.
    pub fn message(&self, id: MsgId) -> &Message {
        let entry = &self.messages[id as usize];
        entry.message.get_or_init(|| match self.build(id) {
            Ok(m) => m,
            // Only the embedded table is indexed without a full parse (see `TABLE`).
            Err(e) => panic!("the embedded type table is invalid: {e}"),
        })
    }

    /// How many messages the table has.
    pub fn message_count(&self) -> usize {
        self.messages.len()
    }

    /// A message by its fully qualified name (`k8s.io.api.apps.v1.Deployment`), for callers
    /// that know a type rather than a kind (a nested type, a test).
    pub fn message_named(&self, name: &str) -> Option<MsgId> {
        self.messages
            .binary_search_by(|m| m.name.cmp(name))
            .ok()
            .map(|i| i as MsgId)
    }

    /// The Go type of a field, pointers removed, as encoding/json names it in errors
    /// (`int32`, `v1.Protocol`, `[]v1.Container`, `v1.ResourceList`).
    pub fn go_type(&self, f: &Field) -> Cow<'static, str> {
        match f.go_type {
            Some(t) => Cow::Borrowed(t),
            None => self.implied_type(f.ty),
        }
    }

    /// The Go type of a slice's or map's elements (`string` for `[]v1.Capability`'s elements is
    /// `v1.Capability`), or of a wrapper's items.
    pub fn elem_type(&self, f: &Field) -> Cow<'static, str> {
        if let Some(t) = f.elem_type {
            return Cow::Borrowed(t);
        }
        if let Some(t) = f.go_type {
            if let Some(e) = t.strip_prefix("[]") {
                return Cow::Borrowed(e);
            }
            if let Some((_, e)) = t.strip_prefix("map[").and_then(|r| r.split_once(']')) {
                return Cow::Borrowed(e);
            }
        }
        match f.ty {
            Ty::One(Scalar::Message(id)) if self.message(id).special == Special::Wrapper => {
                match self.message(id).fields.first() {
                    Some(items) => self.elem_type(items),
                    None => Cow::Borrowed("string"),
                }
            }
            Ty::One(s) | Ty::List(s) | Ty::Map(s) => self.scalar_type(s),
        }
    }

    /// The Go type a field's kind implies.
    fn implied_type(&self, ty: Ty) -> Cow<'static, str> {
        match ty {
            Ty::One(s) => self.scalar_type(s),
            Ty::List(s) => Cow::Owned(format!("[]{}", self.scalar_type(s))),
            Ty::Map(s) => Cow::Owned(format!("map[string]{}", self.scalar_type(s))),
        }
    }

    /// The Go type of one value of a kind.
    fn scalar_type(&self, s: Scalar) -> Cow<'static, str> {
        Cow::Borrowed(match s {
            Scalar::Int32 => "int32",
            Scalar::Int64 => "int64",
            Scalar::Uint32 => "uint32",
            Scalar::Uint64 => "uint64",
            Scalar::Bool => "bool",
            Scalar::String => "string",
            Scalar::Bytes => "[]uint8",
            Scalar::Double => "float64",
            Scalar::Float => "float32",
            Scalar::Message(id) => self.message(id).go_type(),
        })
    }

    /// A message's fields as JSON sees them (inline structs flattened), built on first use.
    pub fn json_fields(&self, id: MsgId) -> &JsonFields {
        self.message(id).json.get_or_init(|| {
            let m = self.message(id);
            let mut fields = Vec::new();
            // The embedded `TypeMeta` (JSON only) is every kind's first field.
            for f in m.json_only.iter().chain(&m.fields) {
                match (f.mode, f.ty) {
                    (Mode::Inline, Ty::One(Scalar::Message(inner))) => {
                        let name = self.message(inner).short_name();
                        for g in &self.json_fields(inner).fields {
                            let mut via = vec![name];
                            via.extend_from_slice(&g.via);
                            fields.push(JsonField {
                                field: g.field,
                                via,
                            });
                        }
                    }
                    _ => fields.push(JsonField {
                        field: *f,
                        via: Vec::new(),
                    }),
                }
            }
            let mut lookup: Vec<(u32, u16)> = fields
                .iter()
                .enumerate()
                .map(|(i, f)| (signature(f.field.json), i as u16))
                .collect();
            lookup.sort_unstable();
            JsonFields { fields, lookup }
        })
    }

    /// Parses the table text whole and checks it. Errors name the line.
    pub fn parse(text: &'static str) -> Result<Table, String> {
        let table = Table::index(text)?;
        for (id, entry) in table.messages.iter().enumerate() {
            let m = table.build(id as MsgId)?;
            // Freshly indexed: nothing has parsed this message yet.
            let _ = entry.message.set(m);
        }
        table.check_inline()?;
        Ok(table)
    }

    /// Finds the messages and kinds of the table text without parsing any field: each
    /// message is parsed by [`Table::message`] on first use.
    pub fn index(text: &'static str) -> Result<Table, String> {
        let mut messages: Vec<Entry> = Vec::with_capacity(1200);
        let mut kinds: Vec<(&'static str, &'static str, MsgId)> = Vec::new();
        // Where the last message's lines start, and where the current line starts and ends.
        let (mut body, mut offset) = (0, 0);
        for (n, raw) in text.split_inclusive('\n').enumerate() {
            let start = offset;
            offset += raw.len();
            let line = raw.strip_suffix('\n').unwrap_or(raw);
            let err = |e: &str| format!("line {}: {e}: {line}", n + 1);
            if let Some(rest) = line.strip_prefix("M ") {
                if let Some(last) = messages.last_mut() {
                    last.body = &text[body..start];
                }
                body = offset;
                let name = rest.split(' ').nth(1).ok_or_else(|| err("no name"))?;
                if messages.last().is_some_and(|m| m.name >= name) {
                    return Err(err("messages are not sorted by name"));
                }
                messages.push(Entry {
                    name,
                    header: line,
                    body: "",
                    line: n + 1,
                    message: OnceLock::new(),
                });
            } else if let Some(rest) = line.strip_prefix("K ") {
                let id = messages
                    .len()
                    .checked_sub(1)
                    .ok_or_else(|| err("K before M"))?;
                let mut parts = rest.split(' ');
                let kind = parts.next().ok_or_else(|| err("no kind"))?;
                kinds.extend(parts.map(|v| (kind, v, id as MsgId)));
            } else if !line.is_empty() && !line.starts_with('#') && messages.is_empty() {
                return Err(err("field before M"));
            }
        }
        if let Some(last) = messages.last_mut() {
            last.body = &text[body..];
        }
        kinds.sort_by(|a, b| (a.0, a.1).cmp(&(b.0, b.1)));
        Ok(Table {
            messages,
            kinds: Cow::Owned(kinds),
        })
    }

    /// The embedded table from the index `build.rs` made of it: no line is read until its
    /// message is first walked.
    fn embedded(text: &'static str) -> Table {
        let messages = generated::MESSAGES
            .iter()
            .map(|&(name, header, body, end, line)| Entry {
                name,
                // The `M` line without its newline.
                header: text.get(header..body.saturating_sub(1)).unwrap_or(""),
                body: text.get(body..end).unwrap_or(""),
                line,
                message: OnceLock::new(),
            })
            .collect();
        Table {
            messages,
            kinds: Cow::Borrowed(generated::KINDS),
        }
    }

    /// Parses and checks one message from its lines.
    fn build(&self, id: MsgId) -> Result<Message, String> {
        let entry = &self.messages[id as usize];
        let mut m = parse_message(entry.header.split(' ').skip(1), id as usize)
            .map_err(|e| format!("line {}: {e}: {}", entry.line, entry.header))?;
        for (n, line) in entry.body.lines().enumerate() {
            if line.is_empty() || line.starts_with('#') || line.starts_with("K ") {
                continue;
            }
            let f = parse_field(line)
                .map_err(|e| format!("line {}: {e}: {line}", entry.line + n + 1))?;
            if f.number == 0 {
                m.json_only.push(f);
            } else {
                m.fields.push(f);
            }
        }
        finish(&mut m, self.messages.len())?;
        Ok(m)
    }

    /// Inline fields embed plain structs, without cycles (an embedded struct cannot embed its
    /// embedder in Go), so that walking them terminates.
    fn check_inline(&self) -> Result<(), String> {
        for id in 0..self.messages.len() as MsgId {
            let m = self.message(id);
            let mut seen = vec![id];
            let mut todo: Vec<MsgId> = m.inline_ids().collect();
            while let Some(inner) = todo.pop() {
                if seen.contains(&inner) || seen.len() > 8 {
                    return Err(format!("{}: inline fields nest in a cycle", m.name));
                }
                if self.message(inner).special != Special::None {
                    return Err(format!("{}: an inline field of a special type", m.name));
                }
                seen.push(inner);
                todo.extend(self.message(inner).inline_ids());
            }
        }
        Ok(())
    }
}

impl Message {
    /// The message name without its package, which is the Go type's name (`Deployment`), for
    /// error texts.
    pub fn short_name(&self) -> &'static str {
        self.short
    }

    /// The Go type as `reflect.Type.String()` spells it (`v1.Deployment`,
    /// `resource.Quantity`): the last element of the package path, then the type's name.
    pub fn go_type(&self) -> &'static str {
        let name = self.name;
        let dots: Vec<usize> = name.rmatch_indices('.').map(|(i, _)| i).take(2).collect();
        match dots.get(1) {
            Some(&i) => &name[i + 1..],
            None => name,
        }
    }

    /// The index in `fields` of a (not inline) field's JSON name.
    pub fn json_index(&self, json: &str) -> Option<usize> {
        let sig = signature(json);
        let from = self.lookup.partition_point(|&(s, _)| s < sig);
        self.lookup[from..]
            .iter()
            .take_while(|&&(s, _)| s == sig)
            .map(|&(_, i)| usize::from(i))
            .find(|&i| self.fields[i].json == json)
    }

    /// The index in `fields` of a field number.
    pub fn field_index(&self, number: u32) -> Option<usize> {
        let slot = *self.number_slots.get(usize::try_from(number).ok()?)?;
        usize::from(slot).checked_sub(1)
    }

    /// The messages of its inline fields (protobuf and JSON-only ones).
    fn inline_ids(&self) -> impl Iterator<Item = MsgId> + '_ {
        self.fields
            .iter()
            .chain(&self.json_only)
            .filter(|f| f.mode == Mode::Inline)
            .filter_map(|f| match f.ty {
                Ty::One(Scalar::Message(id)) => Some(id),
                _ => None,
            })
    }
}

/// Validates a message's references and specials, and builds its indexes.
fn finish(m: &mut Message, count: usize) -> Result<(), String> {
    if m.fields.len() > MAX_FIELDS {
        return Err(format!("{}: more than {MAX_FIELDS} fields", m.name));
    }
    for f in m.fields.iter().chain(&m.json_only) {
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
    let mut lookup: Vec<(u32, u16)> = (0..m.fields.len() as u16)
        .filter(|&i| m.fields[i as usize].mode != Mode::Inline)
        .map(|i| (signature(m.fields[i as usize].json), i))
        .collect();
    lookup.sort_unstable();
    m.lookup = lookup;
    check_special(m)
}

/// A JSON name's signature for [`Message::json_index`]: its length, first and last bytes.
fn signature(s: &str) -> u32 {
    let b = s.as_bytes();
    let (first, last) = (b.first().copied(), b.last().copied());
    (b.len().min(0xffff) as u32) << 16
        | u32::from(first.unwrap_or(0)) << 8
        | u32::from(last.unwrap_or(0))
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
        json_only: Vec::new(),
        by_number: Vec::new(),
        number_slots: Vec::new(),
        lookup: Vec::new(),
        json: OnceLock::new(),
        short: name.rsplit('.').next().unwrap_or(name),
    })
}

/// `<number> <wire type> <Go kind> <JSON name> <mode> [<Go type> [<element Go type>]]`, or
/// `J <Go kind> <JSON name> <mode> [...]` (number and wire type 0).
fn parse_field(line: &'static str) -> Result<Field, String> {
    let mut parts = line.split(' ');
    let mut next = || parts.next().ok_or_else(|| "too few columns".to_string());
    let first = next()?;
    let json_only = first == "J";
    let (number, wire): (u32, u8) = if json_only {
        (0, 0)
    } else {
        let number = first.parse().map_err(|_| "bad number")?;
        (number, next()?.parse().map_err(|_| "bad wire type")?)
    };
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
    let named = |t: Option<&'static str>| t.filter(|t| *t != ".");
    let go_type = named(parts.next());
    let elem_type = named(parts.next());
    if parts.next().is_some() {
        return Err("too many columns".into());
    }
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
    if !json_only && (number == 0 || number > i32::MAX as u32 || !expected) {
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
        go_type,
        elem_type,
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
    if actual != expected || !m.json_only.is_empty() {
        return Err(format!(
            "{}: fields {actual:?}, expected {expected:?}",
            m.name
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(t: &Table, message: &str, json: &str) -> Field {
        let m = t.message(t.message_named(message).unwrap());
        let i = m.json_index(json).unwrap();
        m.fields[i]
    }

    #[test]
    fn go_types_are_spelled_as_reflect_spells_them() {
        let t = &*TABLE;
        let spec = "k8s.io.api.apps.v1.DeploymentSpec";
        assert_eq!(t.go_type(&field(t, spec, "replicas")), "int32");
        assert_eq!(t.go_type(&field(t, spec, "template")), "v1.PodTemplateSpec");
        let pod = "k8s.io.api.core.v1.PodSpec";
        assert_eq!(t.go_type(&field(t, pod, "containers")), "[]v1.Container");
        assert_eq!(t.elem_type(&field(t, pod, "containers")), "v1.Container");
        assert_eq!(
            t.go_type(&field(t, pod, "nodeSelector")),
            "map[string]string"
        );
        assert_eq!(t.go_type(&field(t, pod, "overhead")), "v1.ResourceList");
        assert_eq!(t.elem_type(&field(t, pod, "overhead")), "resource.Quantity");
        assert_eq!(
            t.go_type(&field(t, pod, "restartPolicy")),
            "v1.RestartPolicy"
        );
        let caps = "k8s.io.api.core.v1.Capabilities";
        assert_eq!(t.go_type(&field(t, caps, "add")), "[]v1.Capability");
        assert_eq!(t.elem_type(&field(t, caps, "add")), "v1.Capability");
        let secret = "k8s.io.api.core.v1.Secret";
        assert_eq!(t.go_type(&field(t, secret, "data")), "map[string][]uint8");
        let meta = "k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta";
        assert_eq!(t.go_type(&field(t, meta, "uid")), "types.UID");
        let rule = "k8s.io.api.rbac.v1.PolicyRule";
        assert_eq!(t.go_type(&field(t, rule, "verbs")), "[]string");
        let review = "k8s.io.api.authentication.v1.UserInfo";
        assert_eq!(t.elem_type(&field(t, review, "extra")), "v1.ExtraValue");
        let q = t.message(
            t.message_named("k8s.io.apimachinery.pkg.api.resource.Quantity")
                .unwrap(),
        );
        assert_eq!(q.go_type(), "resource.Quantity");
    }

    #[test]
    fn kinds_embed_type_meta_as_a_json_only_inline_field() {
        let t = &*TABLE;
        let id = t.kind("apps/v1", "Deployment").unwrap();
        let m = t.message(id);
        assert_eq!(m.json_only.len(), 1);
        let Ty::One(Scalar::Message(tm)) = m.json_only[0].ty else {
            panic!("{:?}", m.json_only[0]);
        };
        assert_eq!(m.json_only[0].mode, Mode::Inline);
        assert_eq!(t.message(tm).short_name(), "TypeMeta");
        assert!(t.message(tm).json_index("apiVersion").is_some());
        // Nested types have no TypeMeta.
        let spec = t
            .message_named("k8s.io.api.apps.v1.DeploymentSpec")
            .unwrap();
        assert!(t.message(spec).json_only.is_empty());
    }

    /// The shared table parses each message when first asked for: the embedded text must
    /// parse and check whole (which the lazy path relies on), to the same messages.
    #[test]
    fn the_embedded_table_parses_whole_and_lazily_alike() {
        let whole = Table::parse(SOURCE).expect("the embedded table is valid");
        let lazy = Table::embedded(SOURCE);
        assert_eq!(
            whole.kinds, lazy.kinds,
            "build.rs indexes kinds as Table::index does"
        );
        for (a, b) in whole.messages.iter().zip(&lazy.messages) {
            let parts = |e: &Entry| (e.name, e.header, e.body, e.line);
            assert_eq!(
                parts(a),
                parts(b),
                "build.rs indexes messages as Table::index does"
            );
        }
        assert_eq!(whole.message_count(), lazy.message_count());
        assert!(lazy.messages.iter().all(|e| e.message.get().is_none()));
        for id in (0..whole.message_count() as MsgId).rev() {
            let (a, b) = (whole.message(id), lazy.message(id));
            assert_eq!(a.name, b.name);
            assert_eq!(a.special, b.special);
            let fields = |m: &Message| format!("{:?} {:?}", m.fields, m.json_only);
            assert_eq!(fields(a), fields(b), "{}", a.name);
            assert_eq!(a.by_number, b.by_number);
        }
        assert_eq!(
            whole.kind("apps/v1", "Deployment"),
            lazy.kind("apps/v1", "Deployment")
        );
    }

    #[test]
    fn json_only_lines_and_go_type_columns_parse() {
        let t = Table::parse(
            "M 0 a.v1.Meta\n1 2 string kind O\nM 1 a.v1.X\nJ @0 - I\n1 2 []string ops O []v1.Op\n\
             2 2 map[string]string m O v1.M v1.Val\n3 2 string s V .\n",
        )
        .unwrap();
        let x = t.message(1);
        assert_eq!(x.fields.len(), 3);
        assert_eq!(x.json_only.len(), 1);
        assert_eq!(t.go_type(&x.fields[0]), "[]v1.Op");
        assert_eq!(t.elem_type(&x.fields[0]), "v1.Op");
        assert_eq!(t.go_type(&x.fields[1]), "v1.M");
        assert_eq!(t.elem_type(&x.fields[1]), "v1.Val");
        assert_eq!(t.go_type(&x.fields[2]), "string");
        for bad in [
            "M 0 a.v1.X\nJ string s V t u v\n",
            "M 0 a.v1.X\nJ @0 - I\n",
            "M 0 a.v1.B\nM 1 a.v1.A\n",
            "M 0 a.v1.X\nJ string - I\n",
            "1 2 string s V\nM 0 a.v1.X\n",
            "K X v1\nM 0 a.v1.X\n",
            "M 1 a.v1.X\n",
        ] {
            assert!(Table::parse(bad).is_err(), "{bad}");
        }
    }
}
