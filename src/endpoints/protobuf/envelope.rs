//! The `k8s\0` + `runtime.Unknown` envelope and the watch frame around the objects.
//!
//! `runtime.Unknown { TypeMeta typeMeta = 1; bytes raw = 2; string contentEncoding = 3;
//! string contentType = 4 }` with `TypeMeta { string apiVersion = 1; string kind = 2 }`. A watch
//! stream carries `metav1.WatchEvent { string type = 1; RawExtension object = 2 }` *without*
//! envelope (client-go's stream serializer for protobuf is the raw serializer), each behind a
//! 4-byte big-endian length (the length-delimited framer); the event's object is an envelope.

use serde_json::{Map, Value};

use super::decode::Decoder;
use super::encode::Encoder;
use super::error::ProtobufError;
use super::wire::{go_string, put_bytes, put_nested, Reader, Wire};
use crate::typed::model::{MsgId, Table};

/// `k8s\0`: the protobuf serializer's prefix, whose last byte selects the `runtime.Unknown`
/// envelope.
pub(super) const MAGIC: [u8; 4] = *b"k8s\0";

/// Decodes an envelope (`depth` counts the messages it is nested in).
pub(super) fn decode(table: &Table, body: &[u8], depth: usize) -> Result<Value, ProtobufError> {
    if body.is_empty() {
        return Err(ProtobufError::EmptyData);
    }
    let Some(data) = body.strip_prefix(&MAGIC[..]) else {
        return Err(ProtobufError::NotProtobuf);
    };
    if data.is_empty() {
        return Err(ProtobufError::EmptyBody);
    }
    let unknown = Unknown::parse(data)?;
    let (api_version, kind) = (unknown.api_version, unknown.kind);
    let id = lookup(table, &api_version, &kind)?;
    let body = Decoder { table }.message(id, &[unknown.raw], depth + 1)?;
    let mut out = Map::new();
    out.insert("apiVersion".into(), Value::String(api_version));
    out.insert("kind".into(), Value::String(kind));
    if let Value::Object(fields) = body {
        out.extend(fields);
    }
    Ok(Value::Object(out))
}

/// The message of an envelope's kind, or the apiserver's error for its TypeMeta.
fn lookup(table: &Table, api_version: &str, kind: &str) -> Result<MsgId, ProtobufError> {
    let type_meta = || format!("runtime.TypeMeta{{APIVersion:{api_version:?}, Kind:{kind:?}}}");
    if kind.is_empty() {
        return Err(ProtobufError::MissingKind(type_meta()));
    }
    if !has_version(api_version) {
        return Err(ProtobufError::MissingVersion(type_meta()));
    }
    table
        .kind(api_version, kind)
        .ok_or_else(|| ProtobufError::NotRegistered {
            kind: kind.to_string(),
            version: api_version.to_string(),
        })
}

/// Whether an apiVersion (`v1`, `group/v1`) names a version; empty or malformed ones do not, as
/// `schema.ParseGroupVersion` sees them.
fn has_version(api_version: &str) -> bool {
    match api_version.split_once('/') {
        Some((_, v)) => !v.is_empty() && !v.contains('/'),
        None => !api_version.is_empty(),
    }
}

/// The envelope's fields.
struct Unknown<'a> {
    api_version: String,
    kind: String,
    raw: &'a [u8],
}

impl<'a> Unknown<'a> {
    /// Reads `runtime.Unknown` with gogo's rules: unknown fields skipped, wire types checked
    /// (contentEncoding and contentType too, though unused), occurrences of typeMeta merged,
    /// the last scalar kept.
    fn parse(data: &'a [u8]) -> Result<Self, ProtobufError> {
        let mut out = Unknown {
            api_version: String::new(),
            kind: String::new(),
            raw: &[],
        };
        for_each_field(data, "Unknown", |num, w| {
            match (num, w) {
                (1, Wire::Len(tm)) => for_each_field(tm, "TypeMeta", |num, w| {
                    match (num, w) {
                        (1, Wire::Len(b)) => out.api_version = go_string(b),
                        (2, Wire::Len(b)) => out.kind = go_string(b),
                        (1, w) => return wrong("TypeMeta", "APIVersion", &w),
                        (2, w) => return wrong("TypeMeta", "Kind", &w),
                        _ => {}
                    }
                    Ok(())
                })?,
                (2, Wire::Len(b)) => out.raw = b,
                (3 | 4, Wire::Len(_)) => {}
                (1, w) => return wrong("Unknown", "TypeMeta", &w),
                (2, w) => return wrong("Unknown", "Raw", &w),
                (3, w) => return wrong("Unknown", "ContentEncoding", &w),
                (4, w) => return wrong("Unknown", "ContentType", &w),
                _ => {}
            }
            Ok(())
        })?;
        Ok(out)
    }
}

fn for_each_field<'a>(
    data: &'a [u8],
    message: &'static str,
    mut f: impl FnMut(u32, Wire<'a>) -> Result<(), ProtobufError>,
) -> Result<(), ProtobufError> {
    let mut r = Reader::new(data);
    while !r.at_end() {
        let (num, w) = r
            .field()
            .map_err(|reason| ProtobufError::Malformed { message, reason })?;
        f(num, w)?;
    }
    Ok(())
}

fn wrong(message: &'static str, field: &'static str, w: &Wire<'_>) -> Result<(), ProtobufError> {
    Err(ProtobufError::WrongWireType {
        message,
        field,
        wire: w.wire_type(),
    })
}

/// The apiVersion and kind of a JSON object to encode.
fn type_meta(obj: &Value) -> Result<(&str, &str), ProtobufError> {
    let get = |key| obj.get(key).and_then(Value::as_str).unwrap_or_default();
    let (api_version, kind) = (get("apiVersion"), get("kind"));
    if !obj.is_object() {
        return Err(ProtobufError::encode("expected an object"));
    }
    Ok((api_version, kind))
}

/// Appends the envelope of `obj` to `buf`.
pub(super) fn encode_into(
    table: &Table,
    obj: &Value,
    buf: &mut Vec<u8>,
) -> Result<(), ProtobufError> {
    let (api_version, kind) = type_meta(obj)?;
    let id = lookup(table, api_version, kind)?;
    buf.extend_from_slice(&MAGIC);
    put_nested(buf, 1, |b| {
        put_bytes(b, 1, api_version.as_bytes());
        put_bytes(b, 2, kind.as_bytes());
        Ok::<(), ProtobufError>(())
    })?;
    put_nested(buf, 2, |b| Encoder { table }.message(id, Some(obj), b, 1))?;
    put_bytes(buf, 3, b"");
    put_bytes(buf, 4, b"");
    Ok(())
}

/// One watch frame: the length, then `WatchEvent{type, object: {raw: envelope}}`.
pub(super) fn encode_watch_event(
    table: &Table,
    event_type: &str,
    object: &Value,
) -> Result<Vec<u8>, ProtobufError> {
    let mut buf = Vec::with_capacity(512);
    buf.extend_from_slice(&[0; 4]);
    put_bytes(&mut buf, 1, event_type.as_bytes());
    put_nested(&mut buf, 2, |b| {
        put_nested(b, 1, |b| encode_into(table, object, b))
    })?;
    let len = u32::try_from(buf.len() - 4)
        .map_err(|_| ProtobufError::encode("the watch event is larger than 4 GiB"))?;
    buf[..4].copy_from_slice(&len.to_be_bytes());
    Ok(buf)
}

/// Reads one watch frame back: the event type and the object (for tests).
#[cfg(test)]
pub(super) fn decode_watch_frame(
    table: &Table,
    frame: &[u8],
) -> Result<(String, Value), ProtobufError> {
    let (len, rest) = frame.split_at_checked(4).ok_or(ProtobufError::EmptyData)?;
    let len = u32::from_be_bytes([len[0], len[1], len[2], len[3]]) as usize;
    let event = rest.get(..len).ok_or(ProtobufError::EmptyBody)?;
    let (mut typ, mut raw) = (String::new(), &[][..]);
    for_each_field(event, "WatchEvent", |num, w| {
        match (num, w) {
            (1, Wire::Len(b)) => typ = go_string(b),
            (2, Wire::Len(obj)) => for_each_field(obj, "RawExtension", |num, w| {
                if let (1, Wire::Len(b)) = (num, w) {
                    raw = b;
                }
                Ok(())
            })?,
            _ => {}
        }
        Ok(())
    })?;
    Ok((typ, decode(table, raw, 0)?))
}
