//! JSON -> protobuf, driven by the table, writing what gogo writes for the same Go value: fields
//! in number order, every non-pointer scalar and struct even when zero (absent JSON is the Go
//! zero value), pointers and slices only when set, map entries sorted by key.

use base64::Engine;
use serde_json::Value;

use super::error::ProtobufError;
use super::special::{check_quantity, parse_time, GO_ZERO_TIME_UNIX};
use super::wire::{put_bytes, put_key, put_nested, put_varint, FIXED32, FIXED64, LEN, VARINT};
use super::MAX_DEPTH;
use crate::machinery::duration::parse_duration;
use crate::typed::model::{Field, Mode, MsgId, Scalar, Special, Table, Ty, MAX_FIELDS};

/// Encodes messages of one table.
pub(super) struct Encoder<'t> {
    pub(super) table: &'t Table,
}

impl Encoder<'_> {
    /// Appends the message `id` for the JSON value `v` (None: Go's zero value) to `buf`.
    pub(super) fn message(
        &self,
        id: MsgId,
        v: Option<&Value>,
        buf: &mut Vec<u8>,
        depth: usize,
    ) -> Result<(), ProtobufError> {
        if depth > MAX_DEPTH {
            return Err(ProtobufError::TooDeep);
        }
        let m = self.table.message(id);
        if m.special != Special::None {
            return special(m.special, v, buf);
        }
        let obj = match v {
            None => None,
            Some(Value::Object(o)) => Some(o),
            Some(other) => return Err(mismatch("an object", other)),
        };
        // The object's values by field index: one lookup per JSON key rather than per field.
        let mut slots: [Option<&Value>; MAX_FIELDS] = [None; MAX_FIELDS];
        for (k, fv) in obj.into_iter().flatten() {
            if let Some(i) = m.json_index(k).filter(|_| !fv.is_null()) {
                slots[i] = Some(fv);
            }
        }
        for &i in &m.by_number {
            let f = &m.fields[usize::from(i)];
            let fv = match f.mode {
                Mode::Inline => v,
                _ => slots[usize::from(i)],
            };
            self.field(f, fv, buf, depth).map_err(|e| match f.mode {
                Mode::Inline => e,
                _ => e.within(f.json),
            })?;
        }
        Ok(())
    }

    fn field(
        &self,
        f: &Field,
        v: Option<&Value>,
        buf: &mut Vec<u8>,
        depth: usize,
    ) -> Result<(), ProtobufError> {
        let pointer = matches!(f.mode, Mode::Pointer | Mode::NullablePointer);
        match f.ty {
            Ty::One(Scalar::Message(id)) => {
                // gogo writes a value struct even when zero; a nil pointer or wrapper not at all.
                if v.is_none() && (pointer || self.table.message(id).special == Special::Wrapper) {
                    return Ok(());
                }
                put_nested(buf, f.number, |b| self.message(id, v, b, depth + 1))
            }
            Ty::One(s) => match v {
                Some(v) => scalar(buf, f.number, s, v),
                None if pointer || s == Scalar::Bytes => Ok(()),
                None => scalar(buf, f.number, s, &zero(s)),
            },
            Ty::List(s) => match v {
                None => Ok(()),
                Some(Value::Array(items)) if f.wire == LEN && s.wire() != LEN => {
                    put_nested(buf, f.number, |b| packed(b, s, items))
                }
                Some(Value::Array(items)) => {
                    for (n, item) in items.iter().enumerate() {
                        self.element(buf, f.number, s, item, depth)
                            .map_err(|e| e.within(&format!("[{n}]")))?;
                    }
                    Ok(())
                }
                Some(other) => Err(mismatch("an array", other)),
            },
            Ty::Map(s) => match v {
                None => Ok(()),
                // gogo sorts the keys; serde_json's map is sorted unless a crate in the build
                // turns on its preserve_order feature.
                Some(Value::Object(entries)) => sorted(entries).try_for_each(|(k, val)| {
                    put_nested(buf, f.number, |b| {
                        put_bytes(b, 1, k.as_bytes());
                        self.map_value(b, s, val, depth)
                    })
                    .map_err(|e| e.within(k))
                }),
                Some(other) => Err(mismatch("an object", other)),
            },
        }
    }

    /// One element of a repeated field; `null` is the zero value.
    fn element(
        &self,
        buf: &mut Vec<u8>,
        number: u32,
        s: Scalar,
        item: &Value,
        depth: usize,
    ) -> Result<(), ProtobufError> {
        let item = Some(item).filter(|v| !v.is_null());
        match (s, item) {
            (Scalar::Message(id), _) => {
                put_nested(buf, number, |b| self.message(id, item, b, depth + 1))
            }
            (s, Some(v)) => scalar(buf, number, s, v),
            (s, None) => scalar(buf, number, s, &zero(s)),
        }
    }

    /// A map entry's value (field 2): always written, but for a nil `[]byte`.
    fn map_value(
        &self,
        buf: &mut Vec<u8>,
        s: Scalar,
        v: &Value,
        depth: usize,
    ) -> Result<(), ProtobufError> {
        match (s, v) {
            (Scalar::Bytes, Value::Null) => Ok(()),
            (Scalar::Message(id), v) => {
                let v = Some(v).filter(|v| !v.is_null());
                put_nested(buf, 2, |b| self.message(id, v, b, depth + 1))
            }
            (s, Value::Null) => scalar(buf, 2, s, &zero(s)),
            (s, v) => scalar(buf, 2, s, v),
        }
    }
}

/// A JSON object's entries in key order.
fn sorted(o: &serde_json::Map<String, Value>) -> impl Iterator<Item = (&String, &Value)> {
    let mut entries: Vec<(&String, &Value)> = o.iter().collect();
    if !entries.is_sorted_by_key(|(k, _)| *k) {
        entries.sort_by_key(|(k, _)| *k);
    }
    entries.into_iter()
}

fn mismatch(expected: &str, got: &Value) -> ProtobufError {
    let got = match got {
        Value::Null => "null",
        Value::Bool(_) => "a bool",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
    ProtobufError::encode(format!("expected {expected}, got {got}"))
}

fn zero(s: Scalar) -> Value {
    match s {
        Scalar::String | Scalar::Bytes => Value::String(String::new()),
        Scalar::Bool => Value::Bool(false),
        _ => Value::from(0),
    }
}

/// An integer that fits the Go type, as Go's encoding/json requires.
fn integer(s: Scalar, v: &Value) -> Result<u64, ProtobufError> {
    let out_of_range = || ProtobufError::encode(format!("{v} does not fit in {s:?}"));
    let Value::Number(n) = v else {
        return Err(mismatch("an integer", v));
    };
    match s {
        Scalar::Int32 => n
            .as_i64()
            .and_then(|i| i32::try_from(i).ok())
            // gogo writes a negative int32 sign-extended to 64 bits.
            .map(|i| i64::from(i) as u64)
            .ok_or_else(out_of_range),
        Scalar::Int64 => n.as_i64().map(|i| i as u64).ok_or_else(out_of_range),
        Scalar::Uint32 => n
            .as_u64()
            .filter(|u| u32::try_from(*u).is_ok())
            .ok_or_else(out_of_range),
        _ => n.as_u64().ok_or_else(out_of_range),
    }
}

/// A scalar field (not a message).
fn scalar(buf: &mut Vec<u8>, number: u32, s: Scalar, v: &Value) -> Result<(), ProtobufError> {
    match (s, v) {
        (Scalar::String, Value::String(text)) => put_bytes(buf, number, text.as_bytes()),
        (Scalar::Bytes, Value::String(text)) => {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(text)
                .map_err(|e| ProtobufError::encode(format!("invalid base64: {e}")))?;
            put_bytes(buf, number, &bytes);
        }
        (Scalar::Bool, Value::Bool(b)) => {
            put_key(buf, number, VARINT);
            put_varint(buf, u64::from(*b));
        }
        (Scalar::Double, Value::Number(n)) => {
            put_key(buf, number, FIXED64);
            buf.extend_from_slice(&n.as_f64().unwrap_or_default().to_le_bytes());
        }
        (Scalar::Float, Value::Number(n)) => {
            put_key(buf, number, FIXED32);
            buf.extend_from_slice(&(n.as_f64().unwrap_or_default() as f32).to_le_bytes());
        }
        (Scalar::Int32 | Scalar::Int64 | Scalar::Uint32 | Scalar::Uint64, v) => {
            let u = integer(s, v)?;
            put_key(buf, number, VARINT);
            put_varint(buf, u);
        }
        (Scalar::String | Scalar::Bytes, v) => return Err(mismatch("a string", v)),
        (Scalar::Bool, v) => return Err(mismatch("a bool", v)),
        (_, v) => return Err(mismatch("a number", v)),
    }
    Ok(())
}

/// The contents of a packed repeated varint field.
fn packed(buf: &mut Vec<u8>, s: Scalar, items: &[Value]) -> Result<(), ProtobufError> {
    for (n, item) in items.iter().enumerate() {
        let u = match item {
            Value::Bool(b) if s == Scalar::Bool => u64::from(*b),
            Value::Null => 0,
            v => integer(s, v).map_err(|e| e.within(&format!("[{n}]")))?,
        };
        put_varint(buf, u);
    }
    Ok(())
}

/// The types whose JSON Go writes by hand. `v` None is the zero value.
fn special(special: Special, v: Option<&Value>, buf: &mut Vec<u8>) -> Result<(), ProtobufError> {
    match (special, v) {
        // The zero time is an empty message; so are a nil RawExtension, FieldsV1 and wrapper.
        (
            Special::Time
            | Special::MicroTime
            | Special::RawExtension
            | Special::FieldsV1
            | Special::Wrapper,
            None,
        ) => {}
        (Special::Time | Special::MicroTime, Some(Value::String(s))) => {
            let (secs, nanos) = parse_time(s).map_err(ProtobufError::encode)?;
            let nanos = if special == Special::MicroTime {
                nanos / 1000 * 1000
            } else {
                0
            };
            if secs != GO_ZERO_TIME_UNIX || nanos != 0 {
                put_key(buf, 1, VARINT);
                put_varint(buf, secs as u64);
                put_key(buf, 2, VARINT);
                put_varint(buf, u64::from(nanos));
            }
        }
        (Special::Duration, v) => {
            let d = match v {
                None => 0,
                Some(Value::String(s)) => parse_duration(s).map_err(ProtobufError::encode)?,
                Some(other) => return Err(mismatch("a duration string", other)),
            };
            put_key(buf, 1, VARINT);
            put_varint(buf, d as u64);
        }
        (Special::Quantity, v) => {
            let text = match v {
                None => "0".to_string(),
                Some(Value::String(s)) => s.trim().to_string(),
                Some(Value::Number(n)) => n.to_string(),
                Some(other) => return Err(mismatch("a quantity", other)),
            };
            check_quantity(&text).map_err(ProtobufError::encode)?;
            put_bytes(buf, 1, text.as_bytes());
        }
        (Special::IntOrString, v) => {
            let (ty, int, text) = match v {
                None => (0, 0, ""),
                Some(Value::String(s)) => (1, 0, s.as_str()),
                Some(n @ Value::Number(_)) => (0, integer(Scalar::Int32, n)?, ""),
                Some(other) => return Err(mismatch("an integer or a string", other)),
            };
            put_key(buf, 1, VARINT);
            put_varint(buf, ty);
            put_key(buf, 2, VARINT);
            put_varint(buf, int);
            put_bytes(buf, 3, text.as_bytes());
        }
        (Special::RawExtension | Special::FieldsV1, Some(v)) => {
            let json = serde_json::to_vec(v).map_err(|e| ProtobufError::encode(e.to_string()))?;
            put_bytes(buf, 1, &json);
        }
        (Special::Wrapper, Some(Value::Array(items))) => {
            for (n, item) in items.iter().enumerate() {
                match item {
                    Value::String(s) => put_bytes(buf, 1, s.as_bytes()),
                    Value::Null => put_bytes(buf, 1, b""),
                    other => return Err(mismatch("a string", other).within(&format!("[{n}]"))),
                }
            }
        }
        (Special::Wrapper, Some(other)) => return Err(mismatch("an array", other)),
        (Special::Time | Special::MicroTime, Some(other)) => {
            return Err(mismatch("a time string", other))
        }
        (Special::None, _) => {}
    }
    Ok(())
}
