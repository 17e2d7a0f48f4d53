//! Protobuf -> JSON, driven by the table: each message is read once into its field occurrences,
//! which are then written as JSON in Go declaration order with Go's omission rules.

use base64::Engine;
use serde_json::{Map, Value};

use super::error::ProtobufError;
use super::special::{check_quantity, format_time, GO_ZERO_TIME_UNIX};
use super::wire::{go_string, packed_varints, Reader, Wire, LEN};
use super::{envelope, MAX_DEPTH};
use crate::machinery::duration::format_duration;
use crate::typed::model::{Field, Message, Mode, MsgId, Scalar, Special, Table, Ty};

/// Field occurrences of one message: (index into `fields`, value), sorted by index.
type Occurrences<'a> = Vec<(u16, Wire<'a>)>;

/// Decodes messages of one table.
pub(super) struct Decoder<'t> {
    pub(super) table: &'t Table,
}

impl Decoder<'_> {
    /// The JSON of a message that was on the wire as `chunks` (several occurrences of a singular
    /// message field merge, as if concatenated). `depth` counts the enclosing messages.
    pub(super) fn message(
        &self,
        id: MsgId,
        chunks: &[&[u8]],
        depth: usize,
    ) -> Result<Value, ProtobufError> {
        if depth > MAX_DEPTH {
            return Err(ProtobufError::TooDeep);
        }
        let m = self.table.message(id);
        let occ = collect(m, chunks)?;
        match m.special {
            Special::None => self.object(m, &occ, depth),
            Special::Time | Special::MicroTime => time(m, chunks),
            Special::Duration => Ok(Value::String(format_duration(
                last_varint(m, &occ, 1).unwrap_or(0) as i64,
            ))),
            Special::Quantity => quantity(&occ),
            Special::IntOrString => int_or_string(m, &occ),
            Special::RawExtension => raw_extension(self.table, last_bytes(m, &occ, 1), depth),
            Special::FieldsV1 => fields_v1(last_bytes(m, &occ, 1)),
            Special::Wrapper => Ok(Value::Array(
                occ.iter()
                    .filter_map(|(_, w)| match w {
                        Wire::Len(b) => Some(Value::String(go_string(b))),
                        _ => None,
                    })
                    .collect(),
            )),
        }
    }

    /// The JSON of a message absent from the wire: Go's zero value (a nil wrapper is `null`).
    fn absent(&self, id: MsgId, depth: usize) -> Result<Value, ProtobufError> {
        match self.table.message(id).special {
            Special::Wrapper => Ok(Value::Null),
            _ => self.message(id, &[], depth + 1),
        }
    }

    /// A plain message: its fields in declaration order.
    fn object(
        &self,
        m: &Message,
        occ: &[(u16, Wire<'_>)],
        depth: usize,
    ) -> Result<Value, ProtobufError> {
        let mut out = Map::new();
        let mut rest = occ;
        for (i, f) in m.fields.iter().enumerate() {
            let n = rest
                .iter()
                .take_while(|(j, _)| usize::from(*j) == i)
                .count();
            let (mine, tail) = rest.split_at(n);
            rest = tail;
            let value = match f.ty {
                Ty::One(Scalar::Message(id)) => self.message_field(f, id, mine, depth)?,
                Ty::One(s) => scalar_field(f, s, mine)?,
                Ty::List(s) => self.list_field(f, s, mine, depth)?,
                Ty::Map(s) => self.map_field(f, s, mine, depth)?,
            };
            match value {
                Some(Value::Object(inner)) if f.mode == Mode::Inline => out.extend(inner),
                Some(v) => {
                    out.insert(f.json.to_string(), v);
                }
                None => {}
            }
        }
        Ok(Value::Object(out))
    }

    /// A singular message field; None when Go leaves it out.
    fn message_field(
        &self,
        f: &Field,
        id: MsgId,
        occ: &[(u16, Wire<'_>)],
        depth: usize,
    ) -> Result<Option<Value>, ProtobufError> {
        // One occurrence is the common case: no allocation for it.
        let single;
        let several: Vec<&[u8]>;
        let chunks: &[&[u8]] = match occ {
            [(_, Wire::Len(b))] => {
                single = [*b];
                &single
            }
            _ => {
                several = occ.iter().filter_map(|(_, w)| len_payload(w)).collect();
                &several
            }
        };
        if chunks.is_empty() {
            return Ok(match f.mode {
                Mode::Pointer | Mode::OmitZero => None,
                Mode::NullablePointer => Some(Value::Null),
                // Go's omitempty never omits a struct.
                Mode::Value | Mode::OmitEmpty | Mode::Inline => Some(self.absent(id, depth)?),
            });
        }
        let v = self.message(id, chunks, depth + 1)?;
        if f.mode == Mode::OmitZero && (v.is_null() || v == self.absent(id, depth)?) {
            return Ok(None);
        }
        Ok(Some(v))
    }

    /// A repeated field: a JSON array, or (empty) `null` / left out by the mode.
    fn list_field(
        &self,
        f: &Field,
        s: Scalar,
        occ: &[(u16, Wire<'_>)],
        depth: usize,
    ) -> Result<Option<Value>, ProtobufError> {
        let mut items = Vec::with_capacity(occ.len());
        for (_, w) in occ {
            match (s, w) {
                (Scalar::Message(id), Wire::Len(b)) => {
                    items.push(self.message(id, &[b], depth + 1)?)
                }
                (s, Wire::Len(b)) if s.wire() != LEN => {
                    let values = packed_varints(b).map_err(|reason| ProtobufError::Malformed {
                        message: "packed",
                        reason,
                    })?;
                    items.extend(values.into_iter().map(|v| varint_value(s, v)));
                }
                (s, w) => items.push(scalar_value(s, w)),
            }
        }
        if items.is_empty() {
            return Ok(empty_collection(f.mode));
        }
        Ok(Some(Value::Array(items)))
    }

    /// A map field: entries `{key = 1, value = 2}`; a later duplicate key wins.
    fn map_field(
        &self,
        f: &Field,
        s: Scalar,
        occ: &[(u16, Wire<'_>)],
        depth: usize,
    ) -> Result<Option<Value>, ProtobufError> {
        let mut out = Map::new();
        for (_, w) in occ {
            if let Wire::Len(entry) = w {
                let (k, v) = self.map_entry(s, entry, depth)?;
                out.insert(k, v);
            }
        }
        if out.is_empty() {
            return Ok(empty_collection(f.mode));
        }
        Ok(Some(Value::Object(out)))
    }

    fn map_entry(
        &self,
        s: Scalar,
        entry: &[u8],
        depth: usize,
    ) -> Result<(String, Value), ProtobufError> {
        let malformed = |reason| ProtobufError::Malformed {
            message: "MapEntry",
            reason,
        };
        let wrong = |field, w: &Wire<'_>| ProtobufError::WrongWireType {
            message: "MapEntry",
            field,
            wire: w.wire_type(),
        };
        let mut key: &[u8] = &[];
        let mut values = Vec::new();
        let mut r = Reader::new(entry);
        while !r.at_end() {
            match r.field().map_err(malformed)? {
                (1, Wire::Len(b)) => key = b,
                (1, w) => return Err(wrong("key", &w)),
                (2, w) if w.wire_type() == s.wire() => values.push(w),
                (2, w) => return Err(wrong("value", &w)),
                _ => {}
            }
        }
        let value = match (s, values.last()) {
            (Scalar::Message(id), _) => {
                let chunks: Vec<&[u8]> = values.iter().filter_map(len_payload).collect();
                match self.table.message(id).special {
                    // gogo starts from an empty (non-nil) value: `[]`.
                    Special::Wrapper if chunks.is_empty() => Value::Array(Vec::new()),
                    _ => self.message(id, &chunks, depth + 1)?,
                }
            }
            (s, Some(w)) => scalar_value(s, w),
            // gogo starts from an empty value, `[]byte{}` for bytes.
            (Scalar::Bytes, None) => Value::String(String::new()),
            (s, None) => zero_scalar(s),
        };
        Ok((go_string(key), value))
    }
}

/// Reads every chunk of a message into its known fields' occurrences, sorted by field index
/// (stably, so the wire order is kept within a field). Unknown fields are skipped; a known
/// field with another wire type is an error.
fn collect<'a>(m: &Message, chunks: &[&'a [u8]]) -> Result<Occurrences<'a>, ProtobufError> {
    let mut occ = Vec::new();
    for chunk in chunks {
        let mut r = Reader::new(chunk);
        while !r.at_end() {
            let (num, w) = r.field().map_err(|reason| ProtobufError::Malformed {
                message: m.short_name(),
                reason,
            })?;
            let Some(i) = m.field_index(num) else {
                continue;
            };
            let f = &m.fields[i];
            let packed =
                matches!(f.ty, Ty::List(s) if s.wire() != LEN) && matches!(w, Wire::Len(_));
            let plain = matches!(f.ty, Ty::List(s) | Ty::One(s) if s.wire() == w.wire_type());
            if !(w.wire_type() == f.wire || packed || plain) {
                return Err(ProtobufError::WrongWireType {
                    message: m.short_name(),
                    field: f.json,
                    wire: w.wire_type(),
                });
            }
            occ.push((i as u16, w));
        }
    }
    // Fields usually arrive in number order, which is mostly the declaration order.
    if !occ.is_sorted_by_key(|(i, _)| *i) {
        occ.sort_by_key(|(i, _)| *i);
    }
    Ok(occ)
}

fn len_payload<'a>(w: &Wire<'a>) -> Option<&'a [u8]> {
    match w {
        Wire::Len(b) => Some(b),
        _ => None,
    }
}

/// An empty repeated or map field: Go's nil slice or map is `null` unless omitted.
fn empty_collection(mode: Mode) -> Option<Value> {
    match mode {
        Mode::Value | Mode::NullablePointer => Some(Value::Null),
        _ => None,
    }
}

/// A singular scalar field; the last occurrence wins.
fn scalar_field(
    f: &Field,
    s: Scalar,
    occ: &[(u16, Wire<'_>)],
) -> Result<Option<Value>, ProtobufError> {
    let Some((_, last)) = occ.last() else {
        return Ok(match f.mode {
            // A nil []byte is null.
            Mode::Value if s == Scalar::Bytes => Some(Value::Null),
            Mode::Value => Some(zero_scalar(s)),
            Mode::NullablePointer => Some(Value::Null),
            _ => None,
        });
    };
    let v = scalar_value(s, last);
    if matches!(f.mode, Mode::OmitEmpty | Mode::OmitZero) && is_zero(&v) {
        return Ok(None);
    }
    Ok(Some(v))
}

/// One scalar value whose wire type was checked by `collect`.
fn scalar_value(s: Scalar, w: &Wire<'_>) -> Value {
    match (s, w) {
        (Scalar::String, Wire::Len(b)) => Value::String(go_string(b)),
        (Scalar::Bytes, Wire::Len(b)) => {
            Value::String(base64::engine::general_purpose::STANDARD.encode(b))
        }
        (_, Wire::Varint(v)) => varint_value(s, *v),
        (_, Wire::Fixed64(v)) => Value::from(f64::from_bits(*v)),
        (_, Wire::Fixed32(v)) => Value::from(f64::from(f32::from_bits(*v))),
        _ => zero_scalar(s),
    }
}

/// A varint as gogo converts it for the field's Go type (int32 keeps the low 32 bits).
fn varint_value(s: Scalar, v: u64) -> Value {
    match s {
        Scalar::Int32 => Value::from(v as i32),
        Scalar::Int64 => Value::from(v as i64),
        Scalar::Uint32 => Value::from(v as u32),
        Scalar::Bool => Value::Bool(v != 0),
        _ => Value::from(v),
    }
}

fn zero_scalar(s: Scalar) -> Value {
    match s {
        Scalar::String | Scalar::Bytes => Value::String(String::new()),
        Scalar::Bool => Value::Bool(false),
        Scalar::Message(_) => Value::Null,
        _ => Value::from(0),
    }
}

/// Go's "empty value" for omitempty scalars.
fn is_zero(v: &Value) -> bool {
    match v {
        Value::String(s) => s.is_empty(),
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::Null => true,
        _ => false,
    }
}

fn last<'a>(m: &Message, occ: &[(u16, Wire<'a>)], number: u32) -> Option<Wire<'a>> {
    let i = m.field_index(number)?;
    occ.iter()
        .rev()
        .find(|(j, _)| usize::from(*j) == i)
        .map(|(_, w)| *w)
}

fn last_varint(m: &Message, occ: &[(u16, Wire<'_>)], number: u32) -> Option<u64> {
    match last(m, occ, number)? {
        Wire::Varint(v) => Some(v),
        _ => None,
    }
}

fn last_bytes<'a>(m: &Message, occ: &[(u16, Wire<'a>)], number: u32) -> Option<&'a [u8]> {
    last(m, occ, number).as_ref().and_then(len_payload)
}

/// `metav1.Time` and `MicroTime`: their Unmarshal replaces the whole value, so only the last
/// occurrence counts; an empty one is the zero time (`null`). Time drops the nanoseconds,
/// MicroTime truncates them to microseconds.
fn time(m: &Message, chunks: &[&[u8]]) -> Result<Value, ProtobufError> {
    let Some(last_chunk) = chunks.last().filter(|c| !c.is_empty()) else {
        return Ok(Value::Null);
    };
    let occ = collect(m, &[last_chunk])?;
    let seconds = last_varint(m, &occ, 1).unwrap_or(0) as i64;
    let micro = m.special == Special::MicroTime;
    let nanos = if micro {
        // time.Duration(nanos).Truncate(time.Microsecond), then time.Unix normalises.
        let n = i64::from(last_varint(m, &occ, 2).unwrap_or(0) as i32);
        n - n % 1000
    } else {
        0
    };
    let secs = seconds.saturating_add(nanos.div_euclid(1_000_000_000));
    let nanos = nanos.rem_euclid(1_000_000_000) as u32;
    if secs == GO_ZERO_TIME_UNIX && nanos == 0 {
        return Ok(Value::Null);
    }
    Ok(Value::String(format_time(secs, nanos, micro)))
}

/// `resource.Quantity`: its string, checked as ParseQuantity checks it; absent is `"0"`. Go
/// would also canonicalise it (`1.5` -> `1500m`); the string is kept as written.
fn quantity(occ: &[(u16, Wire<'_>)]) -> Result<Value, ProtobufError> {
    let mut out = Value::String("0".into());
    for (_, w) in occ {
        if let Wire::Len(b) = w {
            let s = go_string(b);
            check_quantity(&s).map_err(ProtobufError::Invalid)?;
            out = Value::String(s);
        }
    }
    Ok(out)
}

/// `intstr.IntOrString`: the int or the string, by its type.
fn int_or_string(m: &Message, occ: &[(u16, Wire<'_>)]) -> Result<Value, ProtobufError> {
    match last_varint(m, occ, 1).unwrap_or(0) as i64 {
        0 => Ok(Value::from(last_varint(m, occ, 2).unwrap_or(0) as i32)),
        1 => Ok(Value::String(go_string(
            last_bytes(m, occ, 3).unwrap_or_default(),
        ))),
        _ => Err(ProtobufError::Invalid("impossible IntOrString.Type".into())),
    }
}

/// `runtime.RawExtension`: the embedded JSON, or a nested protobuf envelope (a watch event's
/// object, a List's items) decoded in turn; empty is `null`.
fn raw_extension(table: &Table, raw: Option<&[u8]>, depth: usize) -> Result<Value, ProtobufError> {
    match raw {
        None | Some([]) => Ok(Value::Null),
        Some(b) if b.starts_with(&envelope::MAGIC) => envelope::decode(table, b, depth + 1),
        Some(b) => serde_json::from_slice(b)
            .map_err(|e| ProtobufError::Invalid(format!("runtime.RawExtension json invalid: {e}"))),
    }
}

/// `metav1.FieldsV1`: its raw bytes as JSON; empty is `null`.
fn fields_v1(raw: Option<&[u8]>) -> Result<Value, ProtobufError> {
    let Some(&first) = raw.and_then(|r| r.first()) else {
        return Ok(Value::Null);
    };
    if first == 0xf6 || (0xa0..=0xbf).contains(&first) || (0xc6..=0xdb).contains(&first) {
        return Err(ProtobufError::Invalid(
            "metav1.FieldsV1 in CBOR form is not supported".into(),
        ));
    }
    serde_json::from_slice(raw.unwrap_or_default())
        .map_err(|e| ProtobufError::Invalid(format!("metav1.FieldsV1 json invalid: {e}")))
}
