//! Request bodies in the Kubernetes protobuf encoding (`application/vnd.kubernetes.protobuf`).
//!
//! kubectl and client-go typed clients send built-in kinds this way (`kubectl create namespace`
//! POSTs a protobuf `Namespace`; a DELETE may carry a protobuf `DeleteOptions`). Everything
//! behind the HTTP layer works on JSON trees, so [`decode`] turns such a body into the JSON form
//! the apiserver's Go types would produce for the same object, and the rest of the request path
//! never sees protobuf.
//!
//! The wire format, as `k8s.io/apimachinery/pkg/runtime/serializer/protobuf` writes it: the magic
//! `k8s\0`, then a proto2 `runtime.Unknown { TypeMeta typeMeta = 1; bytes raw = 2;
//! string contentEncoding = 3; string contentType = 4 }`, where `raw` is the protobuf of the
//! object itself. Field numbers follow `k8s.io/apimachinery/pkg/apis/meta/v1/generated.proto` and
//! `k8s.io/api/core/v1/generated.proto`.
//!
//! Decoding follows the gogo-protobuf code the apiserver runs: unknown fields (and groups) are
//! skipped, a known field with the wrong wire type is an error, a repeated occurrence of a message
//! field merges into the earlier one, a repeated scalar field keeps the last value, and
//! `metav1.Time` keeps whole seconds only. The JSON side follows Go's `encoding/json` with the
//! types' tags: `omitempty` values are left out, pointer fields (`*int64`, `*bool`, `*string`)
//! are written whenever they were on the wire, even with a zero value.

use serde_json::{Map, Value};

/// `k8s\0`: the protobuf serializer's prefix, whose last byte selects the `runtime.Unknown`
/// envelope.
const MAGIC: [u8; 4] = [0x6b, 0x38, 0x73, 0x00];

/// `metav1.Time` of Go's zero `time.Time` (0001-01-01T00:00:00Z), as Unix seconds; Go encodes that
/// value as `null`, so it is left out like an absent time.
const GO_ZERO_TIME_UNIX: i64 = -62_135_596_800;

/// Decodes a Kubernetes protobuf body (the `k8s\0` envelope around runtime.Unknown) into the
/// JSON form of the object. Err carries a human-readable reason.
///
/// It exists so that the handlers can accept `application/vnd.kubernetes.protobuf` bodies from
/// kubectl and client-go while the rest of the server keeps working on JSON. Supported kinds are
/// `v1` `Namespace` and `DeleteOptions` (under any group version, as the apiserver registers the
/// option types into every group version it serves); any other kind is an error, as it would be
/// for a kind the apiserver's scheme does not know.
pub fn decode(body: &[u8]) -> Result<Value, String> {
    if body.is_empty() {
        return Err("empty data".into());
    }
    let Some(data) = body.strip_prefix(&MAGIC[..]) else {
        return Err(
            "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]"
                .into(),
        );
    };
    if data.is_empty() {
        return Err("empty body".into());
    }

    let unknown = Msg::parse("Unknown", data, &[1, 2, 3, 4])?;
    let (api_version, kind) = match unknown.message(1, "TypeMeta", "TypeMeta", &[1, 2])? {
        Some(tm) => (
            tm.string(1, "APIVersion")?.unwrap_or_default(),
            tm.string(2, "Kind")?.unwrap_or_default(),
        ),
        None => (String::new(), String::new()),
    };
    let raw = unknown.bytes(2, "Raw")?.unwrap_or_default();
    // Neither is used by the apiserver's decoder, but their wire types are still checked.
    unknown.string(3, "ContentEncoding")?;
    unknown.string(4, "ContentType")?;

    let type_meta = || format!("runtime.TypeMeta{{APIVersion:{api_version:?}, Kind:{kind:?}}}");
    if kind.is_empty() {
        return Err(format!("Object 'Kind' is missing in '{}'", type_meta()));
    }
    if !has_version(&api_version) {
        return Err(format!(
            "Object 'apiVersion' is missing in '{}'",
            type_meta()
        ));
    }

    let mut out = Map::new();
    out.insert("apiVersion".into(), Value::String(api_version.clone()));
    out.insert("kind".into(), Value::String(kind.clone()));
    match kind.as_str() {
        "Namespace" if api_version == "v1" => namespace(raw, &mut out)?,
        "DeleteOptions" => delete_options(raw, &mut out)?,
        _ => {
            return Err(format!(
                "no kind {kind:?} is registered for version {api_version:?}"
            ))
        }
    }
    Ok(Value::Object(out))
}

/// Whether an apiVersion (`v1`, `group/v1`) names a version; empty or malformed ones do not, as
/// `schema.ParseGroupVersion` sees them.
fn has_version(api_version: &str) -> bool {
    match api_version.split_once('/') {
        Some((_, v)) => !v.is_empty() && !v.contains('/'),
        None => !api_version.is_empty(),
    }
}

// ---------------------------------------------------------------------------------------------
// Kinds
// ---------------------------------------------------------------------------------------------

const OBJECT_META_FIELDS: &[u32] = &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 17];

/// core/v1 Namespace: metadata = 1, spec = 2, status = 3.
fn namespace(raw: &[u8], out: &mut Map<String, Value>) -> Result<(), String> {
    let m = Msg::parse("Namespace", raw, &[1, 2, 3])?;
    let metadata = match m.message(1, "ObjectMeta", "ObjectMeta", OBJECT_META_FIELDS)? {
        Some(meta) => object_meta(&meta)?,
        None => Map::new(),
    };
    out.insert("metadata".into(), Value::Object(metadata));

    if let Some(spec) = m.message(2, "Spec", "NamespaceSpec", &[1])? {
        let mut s = Map::new();
        put_list(&mut s, "finalizers", spec.strings(1, "Finalizers")?);
        out.insert("spec".into(), Value::Object(s));
    }

    if let Some(status) = m.message(3, "Status", "NamespaceStatus", &[1, 2])? {
        let mut s = Map::new();
        put_str(&mut s, "phase", status.string(1, "Phase")?);
        let mut conditions = Vec::new();
        for c in status.messages(2, "Conditions", "NamespaceCondition", &[1, 2, 4, 5, 6])? {
            let mut o = Map::new();
            // `type` and `status` have no omitempty.
            let ty = c.string(1, "Type")?.unwrap_or_default();
            o.insert("type".into(), Value::String(ty));
            let st = c.string(2, "Status")?.unwrap_or_default();
            o.insert("status".into(), Value::String(st));
            put_opt(
                &mut o,
                "lastTransitionTime",
                c.time(4, "LastTransitionTime")?,
            );
            put_str(&mut o, "reason", c.string(5, "Reason")?);
            put_str(&mut o, "message", c.string(6, "Message")?);
            conditions.push(Value::Object(o));
        }
        if !conditions.is_empty() {
            s.insert("conditions".into(), Value::Array(conditions));
        }
        out.insert("status".into(), Value::Object(s));
    }
    Ok(())
}

/// meta/v1 DeleteOptions. Every field but `dryRun` is a pointer in Go, so presence is kept.
fn delete_options(raw: &[u8], out: &mut Map<String, Value>) -> Result<(), String> {
    let m = Msg::parse("DeleteOptions", raw, &[1, 2, 3, 4, 5, 6])?;
    put_opt(
        out,
        "gracePeriodSeconds",
        m.int64(1, "GracePeriodSeconds")?.map(Value::from),
    );
    if let Some(p) = m.message(2, "Preconditions", "Preconditions", &[1, 2])? {
        let mut o = Map::new();
        put_opt(&mut o, "uid", p.string(1, "UID")?.map(Value::String));
        put_opt(
            &mut o,
            "resourceVersion",
            p.string(2, "ResourceVersion")?.map(Value::String),
        );
        out.insert("preconditions".into(), Value::Object(o));
    }
    put_opt(
        out,
        "orphanDependents",
        m.bool(3, "OrphanDependents")?.map(Value::Bool),
    );
    put_opt(
        out,
        "propagationPolicy",
        m.string(4, "PropagationPolicy")?.map(Value::String),
    );
    put_list(out, "dryRun", m.strings(5, "DryRun")?);
    put_opt(
        out,
        "ignoreStoreReadErrorWithClusterBreakingPotential",
        m.bool(6, "IgnoreStoreReadErrorWithClusterBreakingPotential")?
            .map(Value::Bool),
    );
    Ok(())
}

/// meta/v1 ObjectMeta, every field of generated.proto.
fn object_meta(m: &Msg<'_>) -> Result<Map<String, Value>, String> {
    let mut o = Map::new();
    put_str(&mut o, "name", m.string(1, "Name")?);
    put_str(&mut o, "generateName", m.string(2, "GenerateName")?);
    put_str(&mut o, "namespace", m.string(3, "Namespace")?);
    put_str(&mut o, "selfLink", m.string(4, "SelfLink")?);
    put_str(&mut o, "uid", m.string(5, "UID")?);
    put_str(&mut o, "resourceVersion", m.string(6, "ResourceVersion")?);
    if let Some(g) = m.int64(7, "Generation")?.filter(|g| *g != 0) {
        o.insert("generation".into(), Value::from(g));
    }
    put_opt(&mut o, "creationTimestamp", m.time(8, "CreationTimestamp")?);
    put_opt(&mut o, "deletionTimestamp", m.time(9, "DeletionTimestamp")?);
    put_opt(
        &mut o,
        "deletionGracePeriodSeconds",
        m.int64(10, "DeletionGracePeriodSeconds")?.map(Value::from),
    );
    put_map(&mut o, "labels", m.string_map(11, "Labels")?);
    put_map(&mut o, "annotations", m.string_map(12, "Annotations")?);

    let mut owners = Vec::new();
    for r in m.messages(13, "OwnerReferences", "OwnerReference", &[1, 3, 4, 5, 6, 7])? {
        let mut or = Map::new();
        // apiVersion, kind, name and uid have no omitempty.
        for (key, num, field) in [
            ("apiVersion", 5, "APIVersion"),
            ("kind", 1, "Kind"),
            ("name", 3, "Name"),
            ("uid", 4, "UID"),
        ] {
            let v = r.string(num, field)?.unwrap_or_default();
            or.insert(key.into(), Value::String(v));
        }
        put_opt(
            &mut or,
            "controller",
            r.bool(6, "Controller")?.map(Value::Bool),
        );
        put_opt(
            &mut or,
            "blockOwnerDeletion",
            r.bool(7, "BlockOwnerDeletion")?.map(Value::Bool),
        );
        owners.push(Value::Object(or));
    }
    if !owners.is_empty() {
        o.insert("ownerReferences".into(), Value::Array(owners));
    }

    put_list(&mut o, "finalizers", m.strings(14, "Finalizers")?);

    let mut managed = Vec::new();
    for e in m.messages(
        17,
        "ManagedFields",
        "ManagedFieldsEntry",
        &[1, 2, 3, 4, 6, 7, 8],
    )? {
        let mut mo = Map::new();
        put_str(&mut mo, "manager", e.string(1, "Manager")?);
        put_str(&mut mo, "operation", e.string(2, "Operation")?);
        put_str(&mut mo, "apiVersion", e.string(3, "APIVersion")?);
        put_opt(&mut mo, "time", e.time(4, "Time")?);
        put_str(&mut mo, "fieldsType", e.string(6, "FieldsType")?);
        if let Some(f) = e.message(7, "FieldsV1", "FieldsV1", &[1])? {
            let raw = f.bytes(1, "Raw")?.unwrap_or_default();
            put_opt(&mut mo, "fieldsV1", fields_v1(raw)?);
        }
        put_str(&mut mo, "subresource", e.string(8, "Subresource")?);
        managed.push(Value::Object(mo));
    }
    if !managed.is_empty() {
        o.insert("managedFields".into(), Value::Array(managed));
    }
    Ok(o)
}

/// FieldsV1's raw bytes as JSON. Empty (and JSON `null`) encode as `null` in Go and are left out.
fn fields_v1(raw: &[u8]) -> Result<Option<Value>, String> {
    let Some(&first) = raw.first() else {
        return Ok(None);
    };
    if first == 0xf6 || (0xa0..=0xbf).contains(&first) || (0xc6..=0xdb).contains(&first) {
        return Err("metav1.FieldsV1 in CBOR form is not supported".into());
    }
    match serde_json::from_slice::<Value>(raw) {
        Ok(Value::Null) => Ok(None),
        Ok(v) => Ok(Some(v)),
        Err(e) => Err(format!("metav1.FieldsV1 json invalid: {e}")),
    }
}

// ---------------------------------------------------------------------------------------------
// JSON helpers
// ---------------------------------------------------------------------------------------------

/// An `omitempty` string.
fn put_str(o: &mut Map<String, Value>, key: &str, v: Option<String>) {
    if let Some(s) = v.filter(|s| !s.is_empty()) {
        o.insert(key.into(), Value::String(s));
    }
}

/// A pointer field: written whenever it was present.
fn put_opt(o: &mut Map<String, Value>, key: &str, v: Option<Value>) {
    if let Some(v) = v {
        o.insert(key.into(), v);
    }
}

/// An `omitempty` list of strings.
fn put_list(o: &mut Map<String, Value>, key: &str, v: Vec<String>) {
    if !v.is_empty() {
        o.insert(
            key.into(),
            Value::Array(v.into_iter().map(Value::String).collect()),
        );
    }
}

/// An `omitempty` map of strings.
fn put_map(o: &mut Map<String, Value>, key: &str, v: Map<String, Value>) {
    if !v.is_empty() {
        o.insert(key.into(), Value::Object(v));
    }
}

/// Bytes as Go's JSON encoder writes a string: each byte that does not start a valid UTF-8
/// sequence becomes one U+FFFD.
fn go_string(mut bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len());
    loop {
        match std::str::from_utf8(bytes) {
            Ok(s) => {
                out.push_str(s);
                return out;
            }
            Err(e) => {
                let (valid, rest) = bytes.split_at(e.valid_up_to());
                out.push_str(std::str::from_utf8(valid).unwrap_or_default());
                out.push(char::REPLACEMENT_CHARACTER);
                bytes = rest.get(1..).unwrap_or_default();
            }
        }
    }
}

/// Unix seconds as `metav1.Time` marshals them: RFC 3339 in UTC with whole seconds, the year
/// written as Go's time formatting writes it (at least four digits, `-` for negative years).
fn format_time(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let sod = secs.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    let year = if year < 0 {
        format!("-{:04}", year.unsigned_abs())
    } else {
        format!("{year:04}")
    };
    format!(
        "{year}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        sod / 3600,
        sod % 3600 / 60,
        sod % 60
    )
}

/// Days since 1970-01-01 to a proleptic Gregorian (year, month, day); Howard Hinnant's
/// `civil_from_days`. No overflow for any `i64 / 86400`.
fn civil_from_days(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

// ---------------------------------------------------------------------------------------------
// Wire format
// ---------------------------------------------------------------------------------------------

/// One field's value as it was on the wire.
#[derive(Clone, Copy)]
enum Wire<'a> {
    Varint(u64),
    Fixed64,
    Len(&'a [u8]),
    Group,
    Fixed32,
}

impl Wire<'_> {
    fn wire_type(&self) -> u8 {
        match self {
            Wire::Varint(_) => 0,
            Wire::Fixed64 => 1,
            Wire::Len(_) => 2,
            Wire::Group => 3,
            Wire::Fixed32 => 5,
        }
    }
}

/// A parsed message: its known fields in wire order (unknown ones are validated and dropped).
struct Msg<'a> {
    name: &'static str,
    fields: Vec<(u32, Wire<'a>)>,
}

impl<'a> Msg<'a> {
    /// Parses the fields of one message; `known` lists the field numbers worth keeping.
    fn parse(name: &'static str, buf: &'a [u8], known: &[u32]) -> Result<Self, String> {
        let err = |e: String| format!("proto: {name}: {e}");
        let mut r = Reader { buf, pos: 0 };
        let mut fields = Vec::new();
        while !r.at_end() {
            let key = r.varint().map_err(err)?;
            let wire_type = key & 7;
            let num = match u32::try_from(key >> 3) {
                Ok(n) if n > 0 => n,
                _ => {
                    return Err(err(format!(
                        "illegal tag {} (wire type {wire_type})",
                        key >> 3
                    )))
                }
            };
            let wire = match wire_type {
                0 => Wire::Varint(r.varint().map_err(err)?),
                1 => {
                    r.take(8).map_err(err)?;
                    Wire::Fixed64
                }
                2 => Wire::Len(r.len_delimited().map_err(err)?),
                3 => {
                    r.skip_group().map_err(err)?;
                    Wire::Group
                }
                4 => return Err(err("wiretype end group for non-group".into())),
                5 => {
                    r.take(4).map_err(err)?;
                    Wire::Fixed32
                }
                other => return Err(err(format!("illegal wireType {other}"))),
            };
            if known.contains(&num) {
                fields.push((num, wire));
            }
        }
        Ok(Msg { name, fields })
    }

    fn wrong_wire(&self, field: &str, w: &Wire<'_>) -> String {
        format!(
            "proto: {}: wrong wireType = {} for field {field}",
            self.name,
            w.wire_type()
        )
    }

    /// Every occurrence of a length-delimited field.
    fn all_len(&self, num: u32, field: &str) -> Result<Vec<&'a [u8]>, String> {
        let mut out = Vec::new();
        for (n, w) in &self.fields {
            if *n != num {
                continue;
            }
            match w {
                Wire::Len(b) => out.push(*b),
                other => return Err(self.wrong_wire(field, other)),
            }
        }
        Ok(out)
    }

    /// A singular `bytes` field: the last occurrence wins.
    fn bytes(&self, num: u32, field: &str) -> Result<Option<&'a [u8]>, String> {
        Ok(self.all_len(num, field)?.last().copied())
    }

    /// A singular `string` field: the last occurrence wins.
    fn string(&self, num: u32, field: &str) -> Result<Option<String>, String> {
        Ok(self.bytes(num, field)?.map(go_string))
    }

    /// A `repeated string` field.
    fn strings(&self, num: u32, field: &str) -> Result<Vec<String>, String> {
        Ok(self
            .all_len(num, field)?
            .into_iter()
            .map(go_string)
            .collect())
    }

    /// A singular varint field: the last occurrence wins.
    fn varint(&self, num: u32, field: &str) -> Result<Option<u64>, String> {
        let mut last = None;
        for (n, w) in &self.fields {
            if *n != num {
                continue;
            }
            match w {
                Wire::Varint(v) => last = Some(*v),
                other => return Err(self.wrong_wire(field, other)),
            }
        }
        Ok(last)
    }

    /// An `int64` field (two's complement of the varint, as Go converts it).
    fn int64(&self, num: u32, field: &str) -> Result<Option<i64>, String> {
        Ok(self.varint(num, field)?.map(|v| v as i64))
    }

    /// A `bool` field.
    fn bool(&self, num: u32, field: &str) -> Result<Option<bool>, String> {
        Ok(self.varint(num, field)?.map(|v| v != 0))
    }

    /// A singular message field. Several occurrences merge, as protobuf (and gogo's generated
    /// code) merge them: each is parsed on its own, then their fields are concatenated.
    fn message(
        &self,
        num: u32,
        field: &str,
        type_name: &'static str,
        known: &[u32],
    ) -> Result<Option<Msg<'a>>, String> {
        let mut merged: Option<Msg<'a>> = None;
        for payload in self.all_len(num, field)? {
            let m = Msg::parse(type_name, payload, known)?;
            match merged.as_mut() {
                Some(prev) => prev.fields.extend(m.fields),
                None => merged = Some(m),
            }
        }
        Ok(merged)
    }

    /// A repeated message field: one message per occurrence.
    fn messages(
        &self,
        num: u32,
        field: &str,
        type_name: &'static str,
        known: &[u32],
    ) -> Result<Vec<Msg<'a>>, String> {
        self.all_len(num, field)?
            .into_iter()
            .map(|payload| Msg::parse(type_name, payload, known))
            .collect()
    }

    /// A `map<string, string>` field: repeated entries `{key = 1, value = 2}`, the last duplicate
    /// key wins.
    fn string_map(&self, num: u32, field: &str) -> Result<Map<String, Value>, String> {
        let mut out = Map::new();
        for entry in self.messages(num, field, "MapEntry", &[1, 2])? {
            let key = entry.string(1, "key")?.unwrap_or_default();
            let value = entry.string(2, "value")?.unwrap_or_default();
            out.insert(key, Value::String(value));
        }
        Ok(out)
    }

    /// A `metav1.Time` field as its JSON string, or None for an absent or zero time. Its custom
    /// Unmarshal replaces the whole value (last occurrence wins), treats an empty message as the
    /// zero time and drops the nanoseconds.
    fn time(&self, num: u32, field: &str) -> Result<Option<Value>, String> {
        // Every occurrence is decoded (an invalid one is an error), the last one is kept.
        let mut last = None;
        for payload in self.all_len(num, field)? {
            last = if payload.is_empty() {
                None
            } else {
                let ts = Msg::parse("Timestamp", payload, &[1, 2])?;
                ts.varint(2, "Nanos")?;
                Some(ts.int64(1, "Seconds")?.unwrap_or(0))
            };
        }
        let Some(seconds) = last.filter(|s| *s != GO_ZERO_TIME_UNIX) else {
            return Ok(None);
        };
        Ok(Some(Value::String(format_time(seconds))))
    }
}

/// A cursor over protobuf bytes. Every read is bounds-checked and reports truncation as an error.
struct Reader<'a> {
    buf: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn at_end(&self) -> bool {
        self.pos >= self.buf.len()
    }

    fn varint(&mut self) -> Result<u64, String> {
        let mut value: u64 = 0;
        let mut shift = 0u32;
        loop {
            if shift >= 64 {
                return Err("integer overflow".into());
            }
            let Some(&b) = self.buf.get(self.pos) else {
                return Err("unexpected EOF".into());
            };
            self.pos += 1;
            value |= u64::from(b & 0x7f) << shift;
            if b < 0x80 {
                return Ok(value);
            }
            shift += 7;
        }
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self
            .pos
            .checked_add(n)
            .ok_or_else(|| "invalid length".to_string())?;
        let Some(bytes) = self.buf.get(self.pos..end) else {
            return Err("unexpected EOF".into());
        };
        self.pos = end;
        Ok(bytes)
    }

    fn len_delimited(&mut self) -> Result<&'a [u8], String> {
        let len = self.varint()?;
        // Go reads the length into an int and rejects negative values.
        if len > i64::MAX as u64 {
            return Err("negative length found during unmarshaling".into());
        }
        let len = usize::try_from(len).map_err(|_| "unexpected EOF".to_string())?;
        self.take(len)
    }

    /// Skips a group whose start tag was just read, nested groups included.
    fn skip_group(&mut self) -> Result<(), String> {
        let mut depth = 1usize;
        while depth > 0 {
            if self.at_end() {
                return Err("unexpected EOF".into());
            }
            let key = self.varint()?;
            match key & 7 {
                0 => {
                    self.varint()?;
                }
                1 => {
                    self.take(8)?;
                }
                2 => {
                    self.len_delimited()?;
                }
                3 => depth += 1,
                4 => depth -= 1,
                5 => {
                    self.take(4)?;
                }
                other => return Err(format!("illegal wireType {other}")),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A tiny protobuf encoder for building test bodies.
    #[derive(Default, Clone)]
    struct Enc(Vec<u8>);

    impl Enc {
        fn new() -> Self {
            Self::default()
        }

        fn raw_varint(mut self, mut v: u64) -> Self {
            loop {
                let b = (v & 0x7f) as u8;
                v >>= 7;
                if v == 0 {
                    self.0.push(b);
                    return self;
                }
                self.0.push(b | 0x80);
            }
        }

        fn raw(mut self, b: &[u8]) -> Self {
            self.0.extend_from_slice(b);
            self
        }

        fn key(self, num: u32, wire_type: u8) -> Self {
            self.raw_varint((u64::from(num) << 3) | u64::from(wire_type))
        }

        fn varint(self, num: u32, v: u64) -> Self {
            self.key(num, 0).raw_varint(v)
        }

        fn bytes(self, num: u32, b: &[u8]) -> Self {
            self.key(num, 2).raw_varint(b.len() as u64).raw(b)
        }

        fn string(self, num: u32, s: &str) -> Self {
            self.bytes(num, s.as_bytes())
        }

        fn msg(self, num: u32, m: Enc) -> Self {
            self.bytes(num, &m.0)
        }

        fn entry(self, num: u32, k: &str, v: &str) -> Self {
            self.msg(num, Enc::new().string(1, k).string(2, v))
        }
    }

    /// The `k8s\0` envelope around an object.
    fn envelope(api_version: &str, kind: &str, raw: Enc) -> Vec<u8> {
        let unknown = Enc::new()
            .msg(1, Enc::new().string(1, api_version).string(2, kind))
            .msg(2, raw)
            .string(3, "")
            .string(4, "");
        let mut out = MAGIC.to_vec();
        out.extend_from_slice(&unknown.0);
        out
    }

    fn namespace_body() -> Vec<u8> {
        // As gogo writes it: every non-pointer string, even empty, and spec/status always.
        let meta = Enc::new()
            .string(1, "foo")
            .string(2, "")
            .string(3, "")
            .varint(7, 0)
            .msg(8, Enc::new())
            .entry(11, "team", "a")
            .entry(11, "env", "dev")
            .string(14, "x/y");
        let ns = Enc::new()
            .msg(1, meta)
            .msg(2, Enc::new().string(1, "kubernetes"))
            .msg(3, Enc::new().string(1, ""));
        envelope("v1", "Namespace", ns)
    }

    #[test]
    fn namespace_with_labels_and_finalizers() {
        let got = decode(&namespace_body()).unwrap();
        assert_eq!(
            got,
            json!({
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {
                    "name": "foo",
                    "labels": {"team": "a", "env": "dev"},
                    "finalizers": ["x/y"],
                },
                "spec": {"finalizers": ["kubernetes"]},
                "status": {},
            })
        );
    }

    #[test]
    fn namespace_with_creation_timestamp_and_more_metadata() {
        let meta = Enc::new()
            .string(1, "ts")
            .msg(8, Enc::new().varint(1, 1_700_000_000).varint(2, 123))
            .msg(9, Enc::new().varint(1, 0))
            .varint(10, 30)
            .varint(7, 3)
            .entry(12, "a", "b")
            .msg(
                13,
                Enc::new()
                    .string(1, "Thing")
                    .string(3, "t")
                    .string(4, "u-1")
                    .string(5, "x/v1")
                    .varint(6, 1),
            )
            .msg(
                17,
                Enc::new()
                    .string(1, "kubectl")
                    .string(2, "Update")
                    .string(3, "v1")
                    .msg(4, Enc::new().varint(1, 86_400))
                    .string(6, "FieldsV1")
                    .msg(7, Enc::new().bytes(1, br#"{"f:metadata":{}}"#)),
            );
        let body = envelope("v1", "Namespace", Enc::new().msg(1, meta));
        assert_eq!(
            decode(&body).unwrap(),
            json!({
                "apiVersion": "v1",
                "kind": "Namespace",
                "metadata": {
                    "name": "ts",
                    "generation": 3,
                    "creationTimestamp": "2023-11-14T22:13:20Z",
                    "deletionTimestamp": "1970-01-01T00:00:00Z",
                    "deletionGracePeriodSeconds": 30,
                    "annotations": {"a": "b"},
                    "ownerReferences": [{
                        "apiVersion": "x/v1", "kind": "Thing", "name": "t", "uid": "u-1",
                        "controller": true,
                    }],
                    "managedFields": [{
                        "manager": "kubectl", "operation": "Update", "apiVersion": "v1",
                        "time": "1970-01-02T00:00:00Z", "fieldsType": "FieldsV1",
                        "fieldsV1": {"f:metadata": {}},
                    }],
                },
            })
        );
    }

    #[test]
    fn delete_options_keeps_present_zero_values() {
        let opts = Enc::new()
            .varint(1, 0)
            .msg(2, Enc::new().string(1, "abc"))
            .varint(3, 0)
            .string(4, "Foreground")
            .string(5, "All");
        for api_version in ["meta.k8s.io/v1", "v1", "apps/v1"] {
            let body = envelope(api_version, "DeleteOptions", opts.clone());
            assert_eq!(
                decode(&body).unwrap(),
                json!({
                    "apiVersion": api_version,
                    "kind": "DeleteOptions",
                    "gracePeriodSeconds": 0,
                    "preconditions": {"uid": "abc"},
                    "orphanDependents": false,
                    "propagationPolicy": "Foreground",
                    "dryRun": ["All"],
                })
            );
        }
        let negative = envelope("v1", "DeleteOptions", Enc::new().varint(1, u64::MAX));
        assert_eq!(decode(&negative).unwrap()["gracePeriodSeconds"], json!(-1));
    }

    #[test]
    fn unknown_fields_are_skipped_and_messages_merge() {
        let meta_a = Enc::new().string(1, "first").string(99, "ignored");
        // Unknown fixed64, fixed32 and nested groups in the second occurrence.
        let meta_b = Enc::new()
            .string(1, "second")
            .key(50, 1)
            .raw(&[0; 8])
            .key(51, 5)
            .raw(&[0; 4])
            .key(52, 3)
            .varint(1, 7)
            .key(53, 3)
            .key(53, 4)
            .key(52, 4)
            .string(14, "fin");
        let ns = Enc::new().msg(1, meta_a).msg(1, meta_b);
        let got = decode(&envelope("v1", "Namespace", ns)).unwrap();
        assert_eq!(
            got["metadata"],
            json!({"name": "second", "finalizers": ["fin"]})
        );
    }

    #[test]
    fn invalid_utf8_becomes_replacement_characters() {
        assert_eq!(go_string(b"a\xffb\xe2\x82"), "a\u{fffd}b\u{fffd}\u{fffd}");
        assert_eq!(go_string("héllo".as_bytes()), "héllo");
    }

    #[test]
    fn times_format_like_go() {
        assert_eq!(format_time(0), "1970-01-01T00:00:00Z");
        assert_eq!(format_time(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(format_time(-1), "1969-12-31T23:59:59Z");
        assert_eq!(format_time(GO_ZERO_TIME_UNIX), "0001-01-01T00:00:00Z");
        assert_eq!(format_time(253_402_300_800), "10000-01-01T00:00:00Z");
        // Must not panic at the extremes.
        format_time(i64::MAX);
        format_time(i64::MIN);
    }

    #[test]
    fn errors() {
        assert_eq!(decode(b"").unwrap_err(), "empty data");
        assert!(decode(b"{\"kind\":\"Namespace\"}")
            .unwrap_err()
            .contains("expected prefix"));
        assert!(decode(b"k8s").unwrap_err().contains("expected prefix"));
        assert_eq!(decode(&MAGIC).unwrap_err(), "empty body");

        let pod = envelope("v1", "Pod", Enc::new());
        assert_eq!(
            decode(&pod).unwrap_err(),
            r#"no kind "Pod" is registered for version "v1""#
        );
        let ns_apps = envelope("apps/v1", "Namespace", Enc::new());
        assert!(decode(&ns_apps).unwrap_err().starts_with("no kind"));
        let no_kind = envelope("v1", "", Enc::new());
        assert!(decode(&no_kind).unwrap_err().contains("'Kind' is missing"));
        let no_version = envelope("", "Namespace", Enc::new());
        assert!(decode(&no_version)
            .unwrap_err()
            .contains("'apiVersion' is missing"));
        let bad_version = envelope("a/b/c", "DeleteOptions", Enc::new());
        assert!(decode(&bad_version)
            .unwrap_err()
            .contains("'apiVersion' is missing"));

        // A known field with the wrong wire type.
        let bad = envelope("v1", "Namespace", Enc::new().varint(1, 5));
        assert!(decode(&bad).unwrap_err().contains("wrong wireType = 0"));
        // Field number 0, end group without a start, illegal wire types, varint overflow.
        for garbage in [
            &[0x00, 0x00][..],
            &[0x0c],
            &[0x0e],
            &[
                0x08, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
            ],
            &[
                0x12, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01,
            ],
        ] {
            let mut body = MAGIC.to_vec();
            body.extend_from_slice(garbage);
            assert!(decode(&body).is_err(), "{garbage:?}");
        }
        // Invalid fieldsV1.
        let meta = Enc::new().msg(17, Enc::new().msg(7, Enc::new().bytes(1, b"{nope")));
        let body = envelope("v1", "Namespace", Enc::new().msg(1, meta));
        assert!(decode(&body).unwrap_err().contains("FieldsV1"));
    }

    #[test]
    fn every_prefix_and_corruption_is_handled_without_panic() {
        let full = namespace_body();
        // A prefix is a valid message only where it ends on a field boundary of the envelope
        // (after typeMeta, after raw, after contentEncoding); everywhere else a length prefix
        // or varint no longer fits.
        let type_meta_end = MAGIC.len() + 2 + 2 + "v1".len() + 2 + "Namespace".len();
        let trailer = 4; // contentEncoding and contentType, both empty
        let raw_end = full.len() - trailer;
        let expected_ok = vec![type_meta_end, raw_end, raw_end + 2];
        let ok: Vec<usize> = (0..full.len())
            .filter(|len| decode(&full[..*len]).is_ok())
            .collect();
        assert_eq!(ok, expected_ok);
        // Single-byte corruptions may decode or fail, but must not panic.
        for i in 0..full.len() {
            for b in [0x00, 0x01, 0x07, 0x7f, 0x80, 0xff] {
                let mut body = full.clone();
                body[i] = b;
                let _ = decode(&body);
            }
        }
        // Pseudo-random garbage after the magic.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..2000 {
            let mut body = MAGIC.to_vec();
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            let len = (seed % 64) as usize;
            for _ in 0..len {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                body.push(seed as u8);
            }
            let _ = decode(&body);
        }
    }
}
