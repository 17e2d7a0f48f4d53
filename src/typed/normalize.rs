//! JSON -> JSON through a built-in kind's Go type: what the apiserver's decoder
//! (sigs.k8s.io/json `UnmarshalStrict`, case-sensitive) followed by encoding/json's `Marshal`
//! makes of a body, in one walk over the object driven by the type model.
//!
//! Decoding and encoding are fused: each JSON key is matched to its Go field (exactly, as the
//! apiserver's case-sensitive decoder does; inline structs flattened) and its value checked and
//! converted as Go would store it; then every field of the struct that did not arrive is
//! written as Go writes its zero value. The omission rules per field mode are encoding/json's:
//! a pointer is written whenever it was set (zero included) and never when absent; an
//! omitempty scalar, slice or map is left out when zero or empty; a value struct is always
//! written (omitempty never omits a struct); a nil slice, map or `[]byte` without omitempty
//! is `null`, an empty one `[]` / `{}` / `""`; omitzero leaves out the zero value. JSON
//! `null` sets a pointer, slice or map to nil and leaves any other value at its zero value;
//! inside a slice or map it is the element type's zero value.
//!
//! Errors follow Go's order of precedence: a type mismatch is remembered (the first one wins)
//! and the walk goes on, since Go's decoder continues after one; an error from a type's own
//! `UnmarshalJSON` (a bad time, quantity or duration; a number that does not fit an
//! IntOrString) ends the walk at once and wins over a remembered mismatch. Go visits keys in
//! document order and serde_json's maps are sorted by key, so when an object has several
//! errors the one reported can differ from Go's (the same holds for the order of the unknown
//! field paths).
//!
//! The cost is one pass over the input and one over the fields of each struct that arrived,
//! plus the zero values of absent value structs (bounded by the type); nesting is capped at
//! [`MAX_DEPTH`].

use std::borrow::Cow;

use base64::Engine;
use serde_json::{Map, Number, Value};

use super::error::TypedError;
use super::gotime::{format_time, parse_time, GO_ZERO_TIME_UNIX};
use super::model::{Field, Mode, MsgId, Scalar, Special, Table, Ty, MAX_DEPTH, TABLE};
use crate::machinery::duration::{format_duration, parse_duration};
use crate::machinery::quantity;

/// The walk's result: errors boxed, so that the values passed up stay small.
type Walked<T> = Result<T, Box<TypedError>>;

/// The most unknown-field paths reported, as the apiserver's decoder caps its strict errors.
pub const MAX_UNKNOWN: usize = 100;

/// An object as the apiserver's Go types make it.
#[derive(Debug, Clone, PartialEq)]
pub struct Normalized {
    /// The object as encoding/json writes the Go value decoded from the input.
    pub value: Value,
    /// The keys the Go type does not have, dropped, as the apiserver's strict decoder names them
    /// (`spec.foo`, `spec.template.spec.containers[0].bar`, `metadata.labels` keys as
    /// `.key`): the `unknown field "<path>"` warnings of `fieldValidation=Warn` and errors of
    /// `Strict`. At most [`MAX_UNKNOWN`]; in key order.
    pub unknown: Vec<String>,
}

/// Normalizes a built-in kind's object: the JSON the apiserver's Go type would give for it, or
/// the error Go's decoder reports (its Display is Go's text). `obj` should be an object; its
/// `apiVersion` and `kind` keys are kept as Go keeps them (omitted when empty) and are not
/// checked against the arguments, which choose the type.
pub fn normalize(api_version: &str, kind: &str, obj: Value) -> Result<Normalized, TypedError> {
    let table = &*TABLE;
    let id = table
        .kind(api_version, kind)
        .ok_or_else(|| TypedError::NotRegistered {
            kind: kind.to_string(),
            version: api_version.to_string(),
        })?;
    normalize_as(table, id, obj)
}

/// [`normalize`] with the type given as a message of a table, for callers that hold a nested
/// type rather than a kind.
pub fn normalize_as(table: &Table, id: MsgId, obj: Value) -> Result<Normalized, TypedError> {
    let mut w = Walker {
        table,
        saved: None,
        unknown: Vec::new(),
        path: Vec::new(),
        strukt: "",
        stack: Vec::new(),
    };
    let value = match obj {
        Value::Object(o) => Value::Object(w.object(id, o, 0).map_err(|e| *e)?),
        // Go leaves the zero value for a JSON null.
        Value::Null => Value::Object(w.object(id, Map::new(), 0).map_err(|e| *e)?),
        other => {
            return Err(TypedError::Type {
                value: json_kind(&other).into(),
                go_type: table.message(id).go_type().into(),
                field: None,
            })
        }
    };
    match w.saved {
        Some(e) => Err(e),
        None => Ok(Normalized {
            value,
            unknown: w.unknown,
        }),
    }
}

/// How a type error names the Go type it expected: a field's type, or its elements'.
#[derive(Clone, Copy)]
enum TypeName<'a> {
    Field(&'a Field),
    Elem(&'a Field),
    Named(&'static str),
}

/// The state of one walk, which takes the input apart as it goes: keys and strings move to the
/// output rather than being copied.
struct Walker<'t> {
    table: &'t Table,
    /// The first type mismatch, which Go reports once it has read everything.
    saved: Option<TypedError>,
    unknown: Vec<String>,
    /// The strict decoder's path to the current value: keys and indexes, written out
    /// (`spec.containers[0].name`) only for an unknown field.
    path: Vec<Seg>,
    /// encoding/json's error context: the innermost struct whose field is being read...
    strukt: &'static str,
    /// ...and the JSON names (and embedded struct names) from the root, without indexes.
    stack: Vec<&'static str>,
}

impl<'t> Walker<'t> {
    /// A struct that arrived as an object: its known keys converted, unknown ones reported,
    /// absent fields as Go writes their zero values.
    fn object(
        &mut self,
        id: MsgId,
        obj: Map<String, Value>,
        depth: usize,
    ) -> Walked<Map<String, Value>> {
        if depth > MAX_DEPTH {
            return Err(Box::new(TypedError::TooDeep));
        }
        let table = self.table;
        let strukt = table.message(id).short_name();
        let fields = table.json_fields(id);
        let mut out = Map::new();
        // Which fields arrived, one bit each (the largest struct has far fewer than 128).
        let mut arrived = 0u128;
        for (key, val) in obj {
            let Some(i) = fields.index(&key) else {
                self.unknown_field(&key);
                continue;
            };
            arrived |= 1u128.checked_shl(i as u32).unwrap_or(0);
            let jf = &fields.fields[i];
            let (outer, stack) = (self.strukt, self.stack.len());
            self.strukt = strukt;
            self.stack.extend_from_slice(&jf.via);
            self.stack.push(jf.field.json);
            self.path.push(Seg::Key(key));
            let v = self.field(&jf.field, val, depth)?;
            self.strukt = outer;
            self.stack.truncate(stack);
            let key = self.pop_key();
            if let Some(v) = v {
                out.insert(key, v);
            }
        }
        // The zero values Go writes for the fields that did not arrive.
        for (i, jf) in fields.fields.iter().enumerate() {
            let came = match 1u128.checked_shl(i as u32) {
                Some(bit) => arrived & bit != 0,
                None => out.contains_key(jf.field.json),
            };
            if !came {
                if let Some(v) = self.absent(&jf.field, depth)? {
                    out.insert(jf.field.json.to_string(), v);
                }
            }
        }
        Ok(out)
    }

    fn unknown_field(&mut self, key: &str) {
        if self.unknown.len() < MAX_UNKNOWN {
            let mut p = String::new();
            for seg in &self.path {
                match seg {
                    Seg::Key(k) => {
                        if !p.is_empty() {
                            p.push('.');
                        }
                        p.push_str(k);
                    }
                    Seg::Index(i) => {
                        p.push('[');
                        p.push_str(&i.to_string());
                        p.push(']');
                    }
                }
            }
            if !p.is_empty() {
                p.push('.');
            }
            p.push_str(key);
            self.unknown.push(p);
        }
    }

    /// Takes back the key [`Seg::Key`] lent to the path for the walk below it.
    fn pop_key(&mut self) -> String {
        match self.path.pop() {
            Some(Seg::Key(key)) => key,
            _ => String::new(),
        }
    }

    /// What Go writes for a field left at its zero value.
    fn absent(&mut self, f: &Field, depth: usize) -> Walked<Option<Value>> {
        Ok(match (f.ty, f.mode) {
            (_, Mode::Pointer | Mode::OmitZero | Mode::Inline) => None,
            (_, Mode::NullablePointer) => Some(Value::Null),
            (Ty::One(Scalar::Message(id)), mode) => {
                match self.table.message(id).special {
                    // A nil named slice.
                    Special::Wrapper if mode == Mode::Value => Some(Value::Null),
                    Special::Wrapper => None,
                    _ => Some(self.zero(id, depth)?),
                }
            }
            (Ty::One(s), Mode::Value) => Some(zero_scalar(s)),
            (Ty::List(_) | Ty::Map(_), Mode::Value) => Some(Value::Null),
            _ => None,
        })
    }

    /// The JSON of a message's zero value.
    fn zero(&mut self, id: MsgId, depth: usize) -> Walked<Value> {
        Ok(match self.table.message(id).special {
            Special::None => Value::Object(self.object(id, Map::new(), depth + 1)?),
            Special::Duration => Value::String("0s".into()),
            Special::Quantity => Value::String("0".into()),
            Special::IntOrString => Value::from(0),
            Special::Time
            | Special::MicroTime
            | Special::RawExtension
            | Special::FieldsV1
            | Special::Wrapper => Value::Null,
        })
    }

    /// A field that arrived; None when Go leaves it out.
    fn field(&mut self, f: &'t Field, val: Value, depth: usize) -> Walked<Option<Value>> {
        match f.ty {
            Ty::One(s) => self.one(s, f.mode, val, TypeName::Field(f), depth),
            Ty::List(s) => self.list(s, f.mode, val, TypeName::Field(f), TypeName::Elem(f), depth),
            Ty::Map(s) => self.map(s, f.mode, val, TypeName::Field(f), TypeName::Elem(f), depth),
        }
    }

    /// One value (a field's, or an element's with mode Value).
    fn one(
        &mut self,
        s: Scalar,
        mode: Mode,
        val: Value,
        ty: TypeName<'t>,
        depth: usize,
    ) -> Walked<Option<Value>> {
        if let Scalar::Message(id) = s {
            return self.message(id, mode, val, depth);
        }
        if val.is_null() {
            return Ok(match mode {
                Mode::NullablePointer => Some(Value::Null),
                Mode::Value => Some(zero_scalar(s)),
                _ => None,
            });
        }
        let Some(v) = self.scalar(s, val, ty) else {
            return Ok(None);
        };
        Ok(match mode {
            Mode::OmitEmpty | Mode::OmitZero if is_zero_scalar(&v) => None,
            _ => Some(v),
        })
    }

    /// A value of a message type: a struct, or a type with a hand-written JSON form.
    fn message(
        &mut self,
        id: MsgId,
        mode: Mode,
        val: Value,
        depth: usize,
    ) -> Walked<Option<Value>> {
        let table = self.table;
        let m = table.message(id);
        if val.is_null() {
            // A pointer becomes nil; a value keeps its zero value, which the hand-written
            // UnmarshalJSON methods give for null (but Duration's, which refuses it).
            return Ok(match (mode, m.special) {
                (Mode::Pointer, _) => None,
                (Mode::NullablePointer, _) => Some(Value::Null),
                (_, Special::Duration) => {
                    return Err(Box::new(TypedError::Invalid(duration_error(""))));
                }
                (Mode::Value, Special::Wrapper) => Some(Value::Null),
                (Mode::OmitZero, _) | (_, Special::Wrapper) => None,
                _ => Some(self.zero(id, depth)?),
            });
        }
        let omit_zero = mode == Mode::OmitZero;
        let v = match (m.special, val) {
            (Special::None, Value::Object(o)) => {
                let v = Value::Object(self.object(id, o, depth + 1)?);
                if omit_zero && v == self.zero(id, depth)? {
                    return Ok(None);
                }
                v
            }
            (Special::None, other) => {
                self.type_error(json_kind(&other).into(), TypeName::Named(m.go_type()));
                return Ok(None);
            }
            (Special::Wrapper, val) => {
                // The table checks that a wrapper has its `items` field.
                let Some(items) = m.fields.first() else {
                    return Ok(None);
                };
                return self.list(
                    Scalar::String,
                    mode,
                    val,
                    TypeName::Named(m.go_type()),
                    TypeName::Elem(items),
                    depth,
                );
            }
            (Special::Time | Special::MicroTime, Value::String(s)) => {
                let micros = m.special == Special::MicroTime;
                let (secs, nanos) = parse_time(&s, micros).map_err(invalid)?;
                if secs == GO_ZERO_TIME_UNIX && nanos == 0 {
                    return Ok((!omit_zero).then_some(Value::Null));
                }
                Value::String(format_time(secs, nanos, micros))
            }
            (Special::Duration, Value::String(s)) => {
                let d = parse_duration(&s).map_err(invalid)?;
                if omit_zero && d == 0 {
                    return Ok(None);
                }
                Value::String(format_duration(d))
            }
            (Special::Time | Special::MicroTime | Special::Duration, other) => {
                // Their UnmarshalJSON reads a Go string first.
                return Err(Box::new(
                    self.type_err(json_kind(&other).into(), "string".into()),
                ));
            }
            (Special::Quantity, val) => {
                let text = match &val {
                    Value::String(s) if !escaped_in_json(s) => quantity::canonicalize(s),
                    Value::Number(n) => quantity::canonicalize(&number_text(n)),
                    // Go parses the raw JSON: quotes, an escape, `true`, `{`, `[`.
                    _ => Err(quantity::ERR_FORMAT),
                };
                let text = text.map_err(|e| invalid(e.into()))?;
                if omit_zero && text == "0" {
                    return Ok(None);
                }
                Value::String(text)
            }
            (Special::IntOrString, val @ Value::String(_)) => val,
            (Special::IntOrString, Value::Number(n)) => match go_integer(Scalar::Int32, &n) {
                Ok(v) => v,
                Err(literal) => {
                    return Err(Box::new(
                        self.type_err(format!("number {literal}"), "int32".into()),
                    ))
                }
            },
            (Special::IntOrString, other) => {
                return Err(Box::new(
                    self.type_err(json_kind(&other).into(), "int32".into()),
                ));
            }
            (Special::RawExtension | Special::FieldsV1, val) => val,
        };
        Ok(Some(v))
    }

    /// A slice (or a named slice): `null`, an array, or a type error.
    fn list(
        &mut self,
        s: Scalar,
        mode: Mode,
        val: Value,
        ty: TypeName<'t>,
        elem: TypeName<'t>,
        depth: usize,
    ) -> Walked<Option<Value>> {
        match val {
            Value::Null => Ok(nil_collection(mode)),
            Value::Array(items) => {
                let mut out = Vec::with_capacity(items.len());
                for (i, item) in items.into_iter().enumerate() {
                    self.path.push(Seg::Index(i));
                    let v = self.one(s, Mode::Value, item, elem, depth)?;
                    self.path.pop();
                    out.push(v.unwrap_or(Value::Null));
                }
                if out.is_empty() && !matches!(mode, Mode::Value | Mode::NullablePointer) {
                    return Ok(None);
                }
                Ok(Some(Value::Array(out)))
            }
            other => {
                self.type_error(json_kind(&other).into(), ty);
                Ok(None)
            }
        }
    }

    /// A map with string keys: `null`, an object, or a type error.
    fn map(
        &mut self,
        s: Scalar,
        mode: Mode,
        val: Value,
        ty: TypeName<'t>,
        elem: TypeName<'t>,
        depth: usize,
    ) -> Walked<Option<Value>> {
        match val {
            Value::Null => Ok(nil_collection(mode)),
            Value::Object(entries) => {
                let mut out = Map::new();
                for (k, item) in entries {
                    self.path.push(Seg::Key(k));
                    let v = self.one(s, Mode::Value, item, elem, depth)?;
                    let k = self.pop_key();
                    out.insert(k, v.unwrap_or(Value::Null));
                }
                if out.is_empty() && !matches!(mode, Mode::Value | Mode::NullablePointer) {
                    return Ok(None);
                }
                Ok(Some(Value::Object(out)))
            }
            other => {
                self.type_error(json_kind(&other).into(), ty);
                Ok(None)
            }
        }
    }

    /// A scalar that is not null; None after a type error (remembered).
    fn scalar(&mut self, s: Scalar, val: Value, ty: TypeName<'t>) -> Option<Value> {
        match (s, val) {
            (Scalar::String, val @ Value::String(_)) | (Scalar::Bool, val @ Value::Bool(_)) => {
                Some(val)
            }
            (Scalar::Int32 | Scalar::Int64 | Scalar::Uint32 | Scalar::Uint64, Value::Number(n)) => {
                match go_integer(s, &n) {
                    Ok(v) => Some(v),
                    Err(literal) => {
                        self.type_error(format!("number {literal}"), ty);
                        None
                    }
                }
            }
            (Scalar::Double | Scalar::Float, Value::Number(n)) => match go_float(s, &n) {
                Some(v) => Some(v),
                None => {
                    self.type_error(format!("number {}", number_text(&n)), ty);
                    None
                }
            },
            (Scalar::Bytes, Value::String(text)) => match go_base64(&text) {
                Ok(bytes) => Some(Value::String(
                    base64::engine::general_purpose::STANDARD.encode(bytes),
                )),
                Err(at) => {
                    self.save(TypedError::Invalid(format!(
                        "illegal base64 data at input byte {at}"
                    )));
                    None
                }
            },
            // encoding/json fills a []byte from an array of numbers too.
            (Scalar::Bytes, Value::Array(items)) => {
                let mut bytes = Vec::with_capacity(items.len());
                for item in &items {
                    let b = match item {
                        Value::Null => Some(0),
                        Value::Number(n) => match n.as_u64().and_then(|u| u8::try_from(u).ok()) {
                            Some(b) => Some(b),
                            None => {
                                let literal = go_literal(n);
                                self.type_error(
                                    format!("number {literal}"),
                                    TypeName::Named("uint8"),
                                );
                                None
                            }
                        },
                        other => {
                            self.type_error(json_kind(other).into(), TypeName::Named("uint8"));
                            None
                        }
                    };
                    bytes.push(b.unwrap_or(0));
                }
                Some(Value::String(
                    base64::engine::general_purpose::STANDARD.encode(bytes),
                ))
            }
            (_, other) => {
                self.type_error(json_kind(&other).into(), ty);
                None
            }
        }
    }

    /// Remembers a type mismatch, with Go's context, unless one is remembered already.
    fn type_error(&mut self, value: String, ty: TypeName<'t>) {
        if self.saved.is_none() {
            let go_type = self.type_name(ty);
            self.saved = Some(self.type_err(value, go_type));
        }
    }

    fn save(&mut self, e: TypedError) {
        if self.saved.is_none() {
            self.saved = Some(e);
        }
    }

    /// A type error at the current field.
    fn type_err(&self, value: String, go_type: Cow<'static, str>) -> TypedError {
        let field = (!self.strukt.is_empty() || !self.stack.is_empty())
            .then(|| (self.strukt.to_string(), self.stack.join(".")));
        TypedError::Type {
            value,
            go_type: go_type.into_owned(),
            field,
        }
    }

    fn type_name(&self, ty: TypeName<'t>) -> Cow<'static, str> {
        match ty {
            TypeName::Field(f) => self.table.go_type(f),
            TypeName::Elem(f) => self.table.elem_type(f),
            TypeName::Named(n) => Cow::Borrowed(n),
        }
    }
}

/// One step of the strict decoder's path.
enum Seg {
    /// A struct field or map key: `.key` (`key` at the root), lent by the input while the walk
    /// is below it.
    Key(String),
    /// A slice element: `[i]`.
    Index(usize),
}

/// A nil slice or map: `null` unless omitted.
fn nil_collection(mode: Mode) -> Option<Value> {
    matches!(mode, Mode::Value | Mode::NullablePointer).then_some(Value::Null)
}

/// The zero value of a scalar Go type as encoding/json writes it (a nil `[]byte` is `null`).
fn zero_scalar(s: Scalar) -> Value {
    match s {
        Scalar::String => Value::String(String::new()),
        Scalar::Bool => Value::Bool(false),
        Scalar::Bytes | Scalar::Message(_) => Value::Null,
        _ => Value::from(0),
    }
}

/// Go's "empty value" of a converted scalar, for omitempty.
fn is_zero_scalar(v: &Value) -> bool {
    match v {
        Value::String(s) => s.is_empty(),
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::Null => true,
        _ => false,
    }
}

/// How encoding/json names a JSON value's type in its errors.
fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// The JSON literal Go would quote for a number. serde_json keeps integers exactly; a number
/// with a fraction or an exponent, or beyond 64 bits, is an f64 whose literal is lost: it is
/// written as serde_json writes it (`1.5`, `1.0`, `1e-7`), or as digits for integers beyond
/// 64 bits, and `-0` for negative zero.
fn go_literal(n: &Number) -> String {
    match n.as_f64() {
        Some(f) if n.is_f64() && f == 0.0 && f.is_sign_negative() => "-0".into(),
        Some(f) if n.is_f64() && f.fract() == 0.0 && f.abs() >= 1.8e19 => format!("{f:.0}"),
        _ => n.to_string(),
    }
}

/// A number's literal as plain decimal digits, for `ParseQuantity`.
fn number_text(n: &Number) -> String {
    match n.as_f64() {
        Some(f) if n.is_f64() && f == 0.0 && f.is_sign_negative() => "-0".into(),
        Some(f) if n.is_f64() => format!("{f}"),
        _ => n.to_string(),
    }
}

/// A JSON number as a Go integer field stores it (`strconv.ParseInt`/`ParseUint` of the
/// literal, within the type's range), or the literal for the error.
fn go_integer(s: Scalar, n: &Number) -> Result<Value, String> {
    if n.is_f64() {
        // Only `-0` parses as an integer among the literals serde_json keeps as floats.
        let negative_zero = n.as_f64().is_some_and(|f| f == 0.0 && f.is_sign_negative());
        return match s {
            Scalar::Int32 | Scalar::Int64 if negative_zero => Ok(Value::from(0)),
            _ => Err(go_literal(n)),
        };
    }
    let fits = match s {
        Scalar::Int32 => n.as_i64().is_some_and(|i| i32::try_from(i).is_ok()),
        Scalar::Int64 => n.as_i64().is_some(),
        Scalar::Uint32 => n.as_u64().is_some_and(|u| u32::try_from(u).is_ok()),
        _ => n.as_u64().is_some(),
    };
    if fits {
        Ok(Value::Number(n.clone()))
    } else {
        Err(go_literal(n))
    }
}

/// A JSON number as a Go float field stores and writes it; None when it overflows the type.
fn go_float(s: Scalar, n: &Number) -> Option<Value> {
    let f = n.as_f64()?;
    let f = match s {
        Scalar::Float => {
            let g = f as f32;
            if g.is_infinite() {
                return None;
            }
            // Go writes a float32 with the shortest digits that identify it.
            format!("{g}").parse::<f64>().ok()?
        }
        _ => f,
    };
    // Go writes integral values without a fraction; serde_json keeps those as integers.
    if f.fract() == 0.0 && f.abs() < 1e15 && !(f == 0.0 && f.is_sign_negative()) {
        return Some(Value::from(f as i64));
    }
    Number::from_f64(f).map(Value::Number)
}

/// Whether a JSON encoder must have escaped a character of this string (so that Go, which
/// parses a quantity from the raw JSON bytes, saw a backslash).
fn escaped_in_json(s: &str) -> bool {
    s.bytes().any(|c| c == b'"' || c == b'\\' || c < 0x20)
}

fn invalid(text: String) -> Box<TypedError> {
    Box::new(TypedError::Invalid(text))
}

/// `time.ParseDuration`'s error for an empty string, which `metav1.Duration` gets for `null`.
fn duration_error(s: &str) -> String {
    parse_duration(s).err().unwrap_or_default()
}

/// `base64.StdEncoding.Decode` as encoding/json calls it for a `[]byte`: padding required,
/// `\r` and `\n` ignored, unused trailing bits ignored; an error is the offset Go reports.
fn go_base64(s: &str) -> Result<Vec<u8>, usize> {
    let src = s.as_bytes();
    let mut out = Vec::with_capacity(src.len() / 4 * 3);
    let mut si = 0;
    let skip_newlines = |mut si: usize| {
        while si < src.len() && matches!(src[si], b'\n' | b'\r') {
            si += 1;
        }
        si
    };
    while si < src.len() {
        let mut quantum = [0u8; 4];
        let mut len = 4;
        let mut trailing = None;
        let mut j = 0;
        while j < 4 {
            if si == src.len() {
                if j == 0 {
                    return Ok(out);
                }
                return Err(si - j);
            }
            let c = src[si];
            si += 1;
            if let Some(d) = base64_digit(c) {
                quantum[j] = d;
                j += 1;
                continue;
            }
            if matches!(c, b'\n' | b'\r') {
                continue;
            }
            if c != b'=' || j < 2 {
                return Err(si - 1);
            }
            if j == 2 {
                si = skip_newlines(si);
                if si == src.len() {
                    return Err(src.len());
                }
                if src[si] != b'=' {
                    return Err(si - 1);
                }
                si += 1;
            }
            si = skip_newlines(si);
            if si < src.len() {
                trailing = Some(si);
            }
            len = j;
            break;
        }
        let v = quantum
            .iter()
            .fold(0u32, |acc, &d| (acc << 6) | u32::from(d));
        let bytes = v.to_be_bytes();
        out.extend_from_slice(&bytes[1..len]);
        if let Some(at) = trailing {
            return Err(at);
        }
    }
    Ok(out)
}

fn base64_digit(c: u8) -> Option<u8> {
    match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    }
}
