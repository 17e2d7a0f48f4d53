//! JSON patch (RFC 6902) as the apiserver applies it: `gopkg.in/evanphx/json-patch.v4`, which
//! `k8s.io/apiserver`'s PATCH handler and the mutating webhook dispatcher call. Clients send
//! patches written against that library, so its leniencies are part of the API:
//! - a path is split at `/` and its first segment is ignored (`a/b` means `/b`); the empty path
//!   only works for `replace` and `test` (the whole document);
//! - `add` and `replace` of a missing `value` write `null`; `replace` of a missing object key
//!   adds it (only array indexes must exist); `copy` from a missing object key copies `null`;
//! - `remove` (and `move`) of a missing object key fails, of a key holding `null` succeeds;
//! - array indexes are Go `strconv.Atoi` integers (`+1` and `01` work) and may be negative,
//!   counted from the end (`-1` is the last element, or for `add` the end of the array); `-`
//!   appends for `add` only;
//! - `test` passes when both the document's value and the operation's `value` are missing or
//!   `null`, and compares values structurally, scalars by their JSON text (Go compares bytes);
//! - an unknown or missing `op` is `Unexpected kind: <op>` (`unknown` when missing or not a
//!   string), and `copy` operations may not add more than [`MAX_COPY_BYTES`] in total.
//!
//! Errors render the library's texts ([`Error`]). Application is linear in the document and the
//! patch per operation, as in the library.
//!
//! Where this differs from the library: scalars in `test` are compared by the JSON text Go would
//! write for the patch's value, not the text the client sent (so `"a<b"` sent unescaped and
//! `1.50` compare as `"a\u003cb"` and `1.5` would), and the inputs on which the library
//! dereferences a nil pointer (a `replace` of the whole document or a `test` without `value`,
//! a `test` comparing arrays holding `null`) are ordinary failures (a Go panic: a 500).

use serde_json::{Map, Value};

use crate::machinery::gofmt::{go_json, go_quote, GoNum};

/// The apiserver's `--json-patch-max-copy-bytes` default (3 MiB): the most all `copy` operations
/// of one patch may add.
pub const MAX_COPY_BYTES: usize = 3 * 1024 * 1024;

/// Why a patch did not apply, worded as the library words it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// A path or value the operation needs is missing (wraps the library's `ErrMissing`).
    #[error("{0}: missing value")]
    Missing(String),
    /// An array index out of range (`ErrInvalidIndex`).
    #[error("{0}: invalid index referenced")]
    InvalidIndex(String),
    /// A `test` operation failed (`ErrTestFailed`).
    #[error("testing value {0} failed: test failed")]
    TestFailed(String),
    /// The `op` is not one of the six.
    #[error("Unexpected kind: {0}")]
    UnexpectedKind(String),
    /// The `copy` operations of the patch added more than [`MAX_COPY_BYTES`].
    #[error("Unable to complete the copy, the accumulated size increase of copy is {0}, exceeding the limit {MAX_COPY_BYTES}")]
    CopyTooLarge(usize),
    /// Any other failure (a field of the wrong JSON type, an index that is not a number).
    #[error("{0}")]
    Other(String),
}

/// A field of an operation as the library reads it (`Operation.Path`, `Operation.From`).
#[derive(Debug, Clone, PartialEq)]
enum Field {
    /// Absent or `null`.
    Missing,
    /// Not a string: Go's unmarshal error.
    Wrong(String),
    /// The string.
    Str(String),
}

impl Field {
    fn read(op: &Map<String, Value>, key: &str) -> Field {
        match op.get(key) {
            None | Some(Value::Null) => Field::Missing,
            Some(Value::String(s)) => Field::Str(s.clone()),
            Some(v) => Field::Wrong(format!(
                "json: cannot unmarshal {} into Go value of type string",
                crate::typed::syntax::go_json_kind(v)
            )),
        }
    }

    /// The field, or the library's error text (`operation missing path field: missing
    /// value`, the unmarshal error).
    fn get(&self, missing: &str) -> Result<&str, String> {
        match self {
            Field::Str(s) => Ok(s),
            Field::Missing => Err(format!("{missing}: missing value")),
            Field::Wrong(why) => Err(why.clone()),
        }
    }
}

/// The six operations, and what stands for anything else.
#[derive(Debug, Clone, PartialEq)]
enum Kind {
    Add,
    Remove,
    Replace,
    Move,
    Copy,
    Test,
    Unexpected(String),
}

/// One operation, its fields read once when the patch is decoded.
#[derive(Debug, Clone, PartialEq)]
struct Operation {
    kind: Kind,
    path: Field,
    from: Field,
    /// `None` when the operation has no `value` key; `Some(Null)` for `"value": null`.
    value: Option<Value>,
}

impl Operation {
    /// An element of the patch array: an object, or `null` (an operation without fields).
    fn read(op: &Map<String, Value>) -> Operation {
        let kind = match op.get("op") {
            Some(Value::String(s)) => match s.as_str() {
                "add" => Kind::Add,
                "remove" => Kind::Remove,
                "replace" => Kind::Replace,
                "move" => Kind::Move,
                "copy" => Kind::Copy,
                "test" => Kind::Test,
                other => Kind::Unexpected(other.to_string()),
            },
            _ => Kind::Unexpected("unknown".into()),
        };
        Operation {
            kind,
            path: Field::read(op, "path"),
            from: Field::read(op, "from"),
            value: op.get("value").cloned(),
        }
    }

    /// The value `add`, `replace` write: `null` when there is none.
    fn value(&self) -> Value {
        self.value.clone().unwrap_or(Value::Null)
    }
}

/// A decoded JSON patch, applicable to any number of documents.
#[derive(Debug, Clone, PartialEq)]
pub struct JsonPatch(Vec<Operation>);

/// The library's `DecodePatch` of a JSON value: an array whose elements are objects or `null`
/// (JSON `null` itself is the empty patch). The error is Go's unmarshal error.
pub fn decode(doc: &Value) -> Result<JsonPatch, String> {
    let items = match doc {
        Value::Null => return Ok(JsonPatch(Vec::new())),
        Value::Array(items) => items,
        other => return Err(type_error(other, "jsonpatch.Patch")),
    };
    let empty = Map::new();
    let mut ops = Vec::with_capacity(items.len());
    for item in items {
        match item {
            Value::Object(op) => ops.push(Operation::read(op)),
            Value::Null => ops.push(Operation::read(&empty)),
            other => return Err(type_error(other, "jsonpatch.Operation")),
        }
    }
    Ok(JsonPatch(ops))
}

fn type_error(v: &Value, go_type: &str) -> String {
    format!(
        "json: cannot unmarshal {} into Go value of type {go_type}",
        crate::typed::syntax::go_json_kind(v)
    )
}

impl JsonPatch {
    /// How many operations the patch has (the apiserver caps them).
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the patch has no operations.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Applies the operations in order; on an error `doc` is left partly patched (callers
    /// patch a copy).
    pub fn apply(&self, doc: &mut Value) -> Result<(), Error> {
        let mut copied = 0;
        for op in &self.0 {
            match &op.kind {
                Kind::Add => add(doc, op)?,
                Kind::Remove => remove(doc, op)?,
                Kind::Replace => replace(doc, op)?,
                Kind::Move => move_op(doc, op)?,
                Kind::Copy => copy(doc, op, &mut copied)?,
                Kind::Test => test(doc, op)?,
                Kind::Unexpected(kind) => return Err(Error::UnexpectedKind(kind.clone())),
            }
        }
        Ok(())
    }
}

/// RFC 6901 unescaping: `~1` is `/`, then `~0` is `~`, left to right.
fn decode_key(k: &str) -> String {
    if !k.contains('~') {
        return k.to_string();
    }
    let mut out = String::with_capacity(k.len());
    let mut chars = k.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, chars.peek()) {
            ('~', Some('1')) => {
                chars.next();
                out.push('/');
            }
            ('~', Some('0')) => {
                chars.next();
                out.push('~');
            }
            _ => out.push(c),
        }
    }
    out
}

/// Go's `strconv.Atoi`, worded as it fails.
fn atoi(key: &str) -> Result<i64, String> {
    key.parse::<i64>().map_err(|e| {
        let why = match e.kind() {
            std::num::IntErrorKind::PosOverflow | std::num::IntErrorKind::NegOverflow => {
                "value out of range"
            }
            _ => "invalid syntax",
        };
        format!("strconv.Atoi: parsing {}: {why}", go_quote(key))
    })
}

fn invalid_index(idx: i64) -> Error {
    Error::InvalidIndex(format!("Unable to access invalid index: {idx}"))
}

/// `partialArray.get`'s index: negative counts from the end; must be in range.
fn get_index(key: &str, len: usize) -> Result<usize, Error> {
    let idx = atoi(key).map_err(Error::Other)?;
    let len = len as i64;
    let at = if idx < 0 {
        if idx < -len {
            return Err(invalid_index(idx));
        }
        idx + len
    } else {
        idx
    };
    if at >= len {
        return Err(invalid_index(idx));
    }
    Ok(at as usize)
}

/// The library's `findObject`: the container the path's last segment is in, and that segment.
/// Every segment but the first and the last must name an object or array.
fn find<'a>(doc: &'a mut Value, path: &str) -> Option<(&'a mut Value, String)> {
    let mut split = path.split('/');
    split.next();
    let mut parts: Vec<&str> = split.collect();
    let key = decode_key(parts.pop()?);
    let mut cur = doc;
    for part in parts {
        let part = decode_key(part);
        cur = match cur {
            Value::Object(m) => m.get_mut(&part)?,
            Value::Array(a) => {
                let i = get_index(&part, a.len()).ok()?;
                &mut a[i]
            }
            _ => return None,
        };
        if !(cur.is_object() || cur.is_array()) {
            return None;
        }
    }
    Some((cur, key))
}

/// What the container holds at `key`: `Ok(None)` for a missing object key or `null`.
fn get<'a>(con: &'a Value, key: &str) -> Result<Option<&'a Value>, Error> {
    match con {
        Value::Object(m) => Ok(m.get(key).filter(|v| !v.is_null())),
        Value::Array(a) => {
            let v = &a[get_index(key, a.len())?];
            Ok(Some(v).filter(|v| !v.is_null()))
        }
        _ => Ok(None),
    }
}

/// `container.add`: an object key is set; an array gets a new element at an index in
/// `0..=len`, negative counting from the end, or at `-`, the end.
fn insert(con: &mut Value, key: &str, val: Value) -> Result<(), Error> {
    match con {
        Value::Object(m) => {
            m.insert(key.to_string(), val);
            Ok(())
        }
        Value::Array(a) => {
            if key == "-" {
                a.push(val);
                return Ok(());
            }
            let idx = atoi(key).map_err(|e| {
                Error::Other(format!("value was not a proper array index: '{key}': {e}"))
            })?;
            let size = a.len() as i64 + 1;
            if idx >= size || idx < -size {
                return Err(invalid_index(idx));
            }
            let at = if idx < 0 { idx + size } else { idx };
            a.insert(at as usize, val);
            Ok(())
        }
        _ => Err(Error::Other("unknown object type".into())),
    }
}

/// `container.remove`, returning what was there.
fn take(con: &mut Value, key: &str) -> Result<Value, Error> {
    match con {
        Value::Object(m) => m
            .remove(key)
            .ok_or_else(|| Error::Missing(format!("Unable to remove nonexistent key: {key}"))),
        Value::Array(a) => {
            let idx = atoi(key).map_err(Error::Other)?;
            let len = a.len() as i64;
            if idx >= len || idx < -len {
                return Err(invalid_index(idx));
            }
            let at = if idx < 0 { idx + len } else { idx };
            Ok(a.remove(at as usize))
        }
        _ => Err(Error::Other("unknown object type".into())),
    }
}

/// Wraps an error as the library's `fmt.Errorf("<context>: %w", err)` does.
fn wrap(context: String, e: Error) -> Error {
    match e {
        Error::Missing(m) => Error::Missing(format!("{context}: {m}")),
        Error::InvalidIndex(m) => Error::InvalidIndex(format!("{context}: {m}")),
        other => Error::Other(format!("{context}: {other}")),
    }
}

fn add(doc: &mut Value, op: &Operation) -> Result<(), Error> {
    let Field::Str(path) = &op.path else {
        return Err(Error::Missing("add operation failed to decode path".into()));
    };
    let Some((con, key)) = find(doc, path) else {
        return Err(Error::Missing(format!(
            "add operation does not apply: doc is missing path: \"{path}\""
        )));
    };
    insert(con, &key, op.value()).map_err(|e| wrap(format!("error in add for path: '{path}'"), e))
}

fn remove(doc: &mut Value, op: &Operation) -> Result<(), Error> {
    let Field::Str(path) = &op.path else {
        return Err(Error::Missing(
            "remove operation failed to decode path".into(),
        ));
    };
    let Some((con, key)) = find(doc, path) else {
        return Err(Error::Missing(format!(
            "remove operation does not apply: doc is missing path: \"{path}\""
        )));
    };
    take(con, &key)
        .map(drop)
        .map_err(|e| wrap(format!("error in remove for path: '{path}'"), e))
}

fn replace(doc: &mut Value, op: &Operation) -> Result<(), Error> {
    let path = op
        .path
        .get("operation missing path field")
        .map_err(|e| Error::Other(format!("replace operation failed to decode path: {e}")))?;
    if path.is_empty() {
        let val = op.value();
        if !(val.is_object() || val.is_array()) {
            return Err(Error::Other(
                "replace operation value must be object or array: %!w(<nil>)".into(),
            ));
        }
        *doc = val;
        return Ok(());
    }
    let Some((con, key)) = find(doc, path) else {
        return Err(Error::Missing(format!(
            "replace operation does not apply: doc is missing path: {path}"
        )));
    };
    match con {
        Value::Object(m) => {
            m.insert(key, op.value());
        }
        Value::Array(a) => {
            let at = get_index(&key, a.len()).map_err(|_| {
                Error::Missing(format!(
                    "replace operation does not apply: doc is missing key: {path}"
                ))
            })?;
            a[at] = op.value();
        }
        _ => {}
    }
    Ok(())
}

fn move_op(doc: &mut Value, op: &Operation) -> Result<(), Error> {
    let from = op
        .from
        .get("operation, missing from field")
        .map_err(|e| Error::Other(format!("move operation failed to decode from: {e}")))?;
    let Some((con, key)) = find(doc, from) else {
        return Err(Error::Missing(format!(
            "move operation does not apply: doc is missing from path: {from}"
        )));
    };
    let context = || format!("error in move for path: '{key}'");
    get(con, &key).map_err(|e| wrap(context(), e))?;
    let val = take(con, &key).map_err(|e| wrap(context(), e))?;
    let path = op
        .path
        .get("operation missing path field")
        .map_err(|e| Error::Other(format!("move operation failed to decode path: {e}")))?;
    let Some((con, key)) = find(doc, path) else {
        return Err(Error::Missing(format!(
            "move operation does not apply: doc is missing destination path: {path}"
        )));
    };
    insert(con, &key, val).map_err(|e| wrap(format!("error in move for path: '{path}'"), e))
}

fn copy(doc: &mut Value, op: &Operation, copied: &mut usize) -> Result<(), Error> {
    let from = op
        .from
        .get("operation, missing from field")
        .map_err(|e| Error::Other(format!("copy operation failed to decode from: {e}")))?;
    let Some((con, key)) = find(doc, from) else {
        return Err(Error::Missing(format!(
            "copy operation does not apply: doc is missing from path: {from}"
        )));
    };
    let val = get(con, &key)
        .map_err(|e| wrap(format!("error in copy for from: '{from}'"), e))?
        .cloned();
    let Field::Str(path) = &op.path else {
        return Err(Error::Missing(
            "copy operation failed to decode path".into(),
        ));
    };
    let Some((con, key)) = find(doc, path) else {
        return Err(Error::Missing(format!(
            "copy operation does not apply: doc is missing destination path: {path}"
        )));
    };
    // The library measures the copy as it marshals it; a missing value is no bytes.
    *copied += val.as_ref().map_or(0, |v| go_json(v).len());
    if *copied > MAX_COPY_BYTES {
        return Err(Error::CopyTooLarge(*copied));
    }
    insert(con, &key, val.unwrap_or(Value::Null))
        .map_err(|e| wrap("error while adding value during copy".into(), e))
}

fn test(doc: &mut Value, op: &Operation) -> Result<(), Error> {
    let path = op
        .path
        .get("operation missing path field")
        .map_err(|e| Error::Other(format!("test operation failed to decode path: {e}")))?;
    if path.is_empty() {
        return match &op.value {
            Some(v) if equal(doc, v) => Ok(()),
            _ => Err(Error::TestFailed(String::new())),
        };
    }
    let Some((con, key)) = find(doc, path) else {
        return Err(Error::Missing(format!(
            "test operation does not apply: is missing path: {path}"
        )));
    };
    let val = get(con, &key).map_err(|e| wrap(format!("error in test for path: '{path}'"), e))?;
    let passed = match (val, &op.value) {
        (None, None | Some(Value::Null)) => true,
        (None, Some(_)) | (Some(_), None) => false,
        (Some(val), Some(want)) => equal(val, want),
    };
    if passed {
        Ok(())
    } else {
        Err(Error::TestFailed(path.to_string()))
    }
}

/// The library's `lazyNode.equal`: objects and arrays structurally, `null` only to `null`,
/// scalars by their JSON text (see the module docs for what that approximates).
fn equal(doc: &Value, want: &Value) -> bool {
    match (doc, want) {
        (Value::Object(a), Value::Object(b)) => {
            a.len() == b.len()
                && a.iter().all(|(k, x)| {
                    b.get(k).is_some_and(|y| match (x, y) {
                        (Value::Null, Value::Null) => true,
                        (Value::Null, _) | (_, Value::Null) => false,
                        (x, y) => equal(x, y),
                    })
                })
        }
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len()
                && a.iter().zip(b).all(|(x, y)| match (x, y) {
                    (Value::Null, Value::Null) => true,
                    (Value::Null, _) | (_, Value::Null) => false,
                    (x, y) => equal(x, y),
                })
        }
        (Value::Object(_) | Value::Array(_) | Value::Null, _) => false,
        (_, Value::Object(_) | Value::Array(_) | Value::Null) => false,
        (Value::Number(_), Value::Number(n)) => {
            // A patch number written with a fraction or exponent (`1.0`) never has the text Go
            // gives an integral number.
            let written_integral = n.is_f64()
                && GoNum::of(want).is_some_and(|g| {
                    let f = g.as_f64();
                    f.fract() == 0.0 && f.abs() < 1e21
                });
            !written_integral && go_json(doc) == go_json(want)
        }
        (a, b) => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    fn run(doc: Value, patch: Value) -> Result<Value, String> {
        let patch = decode(&patch)?;
        let mut doc = doc;
        patch.apply(&mut doc).map_err(|e| e.to_string())?;
        Ok(doc)
    }

    #[rstest]
    // add
    #[case::add_key(json!({"a": 1}), json!([{"op": "add", "path": "/b", "value": 2}]), Ok(json!({"a": 1, "b": 2})))]
    #[case::add_replaces_a_key(json!({"a": 1}), json!([{"op": "add", "path": "/a", "value": 2}]), Ok(json!({"a": 2})))]
    #[case::add_without_value_adds_null(json!({}), json!([{"op": "add", "path": "/a"}]), Ok(json!({"a": null})))]
    #[case::add_first_segment_ignored(json!({"a": {}}), json!([{"op": "add", "path": "x/a/b", "value": 1}]), Ok(json!({"a": {"b": 1}})))]
    #[case::add_escaped_key(json!({}), json!([{"op": "add", "path": "/a~1b~0c~01", "value": 1}]), Ok(json!({"a/b~c~1": 1})))]
    #[case::add_missing_parent(json!({}), json!([{"op": "add", "path": "/a/b", "value": 1}]), Err("add operation does not apply: doc is missing path: \"/a/b\": missing value"))]
    #[case::add_under_null(json!({"a": null}), json!([{"op": "add", "path": "/a/b", "value": 1}]), Err("add operation does not apply: doc is missing path: \"/a/b\": missing value"))]
    #[case::add_under_scalar(json!({"a": "x"}), json!([{"op": "add", "path": "/a/b", "value": 1}]), Err("add operation does not apply: doc is missing path: \"/a/b\": missing value"))]
    #[case::add_root(json!({}), json!([{"op": "add", "path": "", "value": 1}]), Err("add operation does not apply: doc is missing path: \"\": missing value"))]
    #[case::add_no_path(json!({}), json!([{"op": "add", "value": 1}]), Err("add operation failed to decode path: missing value"))]
    #[case::add_path_number(json!({}), json!([{"op": "add", "path": 1, "value": 1}]), Err("add operation failed to decode path: missing value"))]
    #[case::add_append(json!({"l": [1]}), json!([{"op": "add", "path": "/l/-", "value": 2}]), Ok(json!({"l": [1, 2]})))]
    #[case::add_at_end(json!({"l": [1]}), json!([{"op": "add", "path": "/l/1", "value": 2}]), Ok(json!({"l": [1, 2]})))]
    #[case::add_insert(json!({"l": [1, 3]}), json!([{"op": "add", "path": "/l/+1", "value": 2}]), Ok(json!({"l": [1, 2, 3]})))]
    #[case::add_negative_is_end(json!({"l": [1]}), json!([{"op": "add", "path": "/l/-1", "value": 2}]), Ok(json!({"l": [1, 2]})))]
    #[case::add_negative_front(json!({"l": [1]}), json!([{"op": "add", "path": "/l/-2", "value": 0}]), Ok(json!({"l": [0, 1]})))]
    #[case::add_past_end(json!({"l": [1]}), json!([{"op": "add", "path": "/l/2", "value": 2}]), Err("error in add for path: '/l/2': Unable to access invalid index: 2: invalid index referenced"))]
    #[case::add_too_negative(json!({"l": [1]}), json!([{"op": "add", "path": "/l/-3", "value": 2}]), Err("error in add for path: '/l/-3': Unable to access invalid index: -3: invalid index referenced"))]
    #[case::add_bad_index(json!({"l": []}), json!([{"op": "add", "path": "/l/x", "value": 2}]), Err("error in add for path: '/l/x': value was not a proper array index: 'x': strconv.Atoi: parsing \"x\": invalid syntax"))]
    #[case::add_huge_index(json!({"l": []}), json!([{"op": "add", "path": "/l/99999999999999999999", "value": 2}]), Err("error in add for path: '/l/99999999999999999999': value was not a proper array index: '99999999999999999999': strconv.Atoi: parsing \"99999999999999999999\": value out of range"))]
    #[case::add_through_index(json!({"l": [{"a": 1}]}), json!([{"op": "add", "path": "/l/-1/b", "value": 2}]), Ok(json!({"l": [{"a": 1, "b": 2}]})))]
    #[case::add_through_dash(json!({"l": [{}]}), json!([{"op": "add", "path": "/l/-/b", "value": 2}]), Err("add operation does not apply: doc is missing path: \"/l/-/b\": missing value"))]
    // remove
    #[case::remove_key(json!({"a": 1, "b": 2}), json!([{"op": "remove", "path": "/a"}]), Ok(json!({"b": 2})))]
    #[case::remove_null_key(json!({"a": null}), json!([{"op": "remove", "path": "/a"}]), Ok(json!({})))]
    #[case::remove_missing_key(json!({}), json!([{"op": "remove", "path": "/a"}]), Err("error in remove for path: '/a': Unable to remove nonexistent key: a: missing value"))]
    #[case::remove_missing_parent(json!({}), json!([{"op": "remove", "path": "/a/b"}]), Err("remove operation does not apply: doc is missing path: \"/a/b\": missing value"))]
    #[case::remove_element(json!({"l": [1, 2, 3]}), json!([{"op": "remove", "path": "/l/-1"}]), Ok(json!({"l": [1, 2]})))]
    #[case::remove_past_end(json!({"l": [1]}), json!([{"op": "remove", "path": "/l/1"}]), Err("error in remove for path: '/l/1': Unable to access invalid index: 1: invalid index referenced"))]
    #[case::remove_dash(json!({"l": [1]}), json!([{"op": "remove", "path": "/l/-"}]), Err("error in remove for path: '/l/-': strconv.Atoi: parsing \"-\": invalid syntax"))]
    #[case::remove_no_path(json!({}), json!([{"op": "remove"}]), Err("remove operation failed to decode path: missing value"))]
    // replace
    #[case::replace_key(json!({"a": 1}), json!([{"op": "replace", "path": "/a", "value": 2}]), Ok(json!({"a": 2})))]
    #[case::replace_missing_key_adds(json!({}), json!([{"op": "replace", "path": "/a", "value": 2}]), Ok(json!({"a": 2})))]
    #[case::replace_without_value(json!({"a": 1}), json!([{"op": "replace", "path": "/a"}]), Ok(json!({"a": null})))]
    #[case::replace_missing_parent(json!({}), json!([{"op": "replace", "path": "/a/b", "value": 2}]), Err("replace operation does not apply: doc is missing path: /a/b: missing value"))]
    #[case::replace_past_end(json!({"l": [1]}), json!([{"op": "replace", "path": "/l/1", "value": 2}]), Err("replace operation does not apply: doc is missing key: /l/1: missing value"))]
    #[case::replace_dash(json!({"l": [1]}), json!([{"op": "replace", "path": "/l/-", "value": 2}]), Err("replace operation does not apply: doc is missing key: /l/-: missing value"))]
    #[case::replace_negative(json!({"l": [1, 2]}), json!([{"op": "replace", "path": "/l/-2", "value": 0}]), Ok(json!({"l": [0, 2]})))]
    #[case::replace_root(json!({"a": 1}), json!([{"op": "replace", "path": "", "value": {"b": 2}}]), Ok(json!({"b": 2})))]
    #[case::replace_root_scalar(json!({"a": 1}), json!([{"op": "replace", "path": "", "value": 1}]), Err("replace operation value must be object or array: %!w(<nil>)"))]
    #[case::replace_no_path(json!({}), json!([{"op": "replace", "value": 1}]), Err("replace operation failed to decode path: operation missing path field: missing value"))]
    #[case::replace_path_number(json!({}), json!([{"op": "replace", "path": 1}]), Err("replace operation failed to decode path: json: cannot unmarshal number into Go value of type string"))]
    // move
    #[case::move_key(json!({"a": 1}), json!([{"op": "move", "from": "/a", "path": "/b"}]), Ok(json!({"b": 1})))]
    #[case::move_null(json!({"a": null}), json!([{"op": "move", "from": "/a", "path": "/b"}]), Ok(json!({"b": null})))]
    #[case::move_missing(json!({}), json!([{"op": "move", "from": "/a", "path": "/b"}]), Err("error in move for path: 'a': Unable to remove nonexistent key: a: missing value"))]
    #[case::move_missing_parent(json!({}), json!([{"op": "move", "from": "/x/a", "path": "/b"}]), Err("move operation does not apply: doc is missing from path: /x/a: missing value"))]
    #[case::move_bad_index(json!({"l": [1]}), json!([{"op": "move", "from": "/l/3", "path": "/b"}]), Err("error in move for path: '3': Unable to access invalid index: 3: invalid index referenced"))]
    #[case::move_into_itself(json!({"a": {}}), json!([{"op": "move", "from": "/a", "path": "/a/b"}]), Err("move operation does not apply: doc is missing destination path: /a/b: missing value"))]
    #[case::move_in_array(json!({"l": [1, 2, 3]}), json!([{"op": "move", "from": "/l/0", "path": "/l/-"}]), Ok(json!({"l": [2, 3, 1]})))]
    #[case::move_no_from(json!({}), json!([{"op": "move", "path": "/b"}]), Err("move operation failed to decode from: operation, missing from field: missing value"))]
    #[case::move_no_path(json!({"a": 1}), json!([{"op": "move", "from": "/a"}]), Err("move operation failed to decode path: operation missing path field: missing value"))]
    // copy
    #[case::copy_key(json!({"a": {"x": 1}}), json!([{"op": "copy", "from": "/a", "path": "/b"}]), Ok(json!({"a": {"x": 1}, "b": {"x": 1}})))]
    #[case::copy_missing_copies_null(json!({}), json!([{"op": "copy", "from": "/a", "path": "/b"}]), Ok(json!({"b": null})))]
    #[case::copy_missing_parent(json!({}), json!([{"op": "copy", "from": "/x/a", "path": "/b"}]), Err("copy operation does not apply: doc is missing from path: /x/a: missing value"))]
    #[case::copy_bad_index(json!({"l": []}), json!([{"op": "copy", "from": "/l/0", "path": "/b"}]), Err("error in copy for from: '/l/0': Unable to access invalid index: 0: invalid index referenced"))]
    #[case::copy_bad_destination(json!({"a": 1}), json!([{"op": "copy", "from": "/a", "path": "/x/b"}]), Err("copy operation does not apply: doc is missing destination path: /x/b: missing value"))]
    #[case::copy_destination_index(json!({"a": 1, "l": []}), json!([{"op": "copy", "from": "/a", "path": "/l/1"}]), Err("error while adding value during copy: Unable to access invalid index: 1: invalid index referenced"))]
    #[case::copy_no_path(json!({"a": 1}), json!([{"op": "copy", "from": "/a"}]), Err("copy operation failed to decode path: missing value"))]
    // test
    #[case::test_equal(json!({"a": {"b": [1, "x", true]}}), json!([{"op": "test", "path": "/a", "value": {"b": [1, "x", true]}}]), Ok(json!({"a": {"b": [1, "x", true]}})))]
    #[case::test_differs(json!({"a": 1}), json!([{"op": "test", "path": "/a", "value": 2}]), Err("testing value /a failed: test failed"))]
    #[case::test_fraction_is_not_integer(json!({"a": 1}), json!([{"op": "test", "path": "/a", "value": 1.0}]), Err("testing value /a failed: test failed"))]
    #[case::test_float(json!({"a": 1.5}), json!([{"op": "test", "path": "/a", "value": 1.5}]), Ok(json!({"a": 1.5})))]
    #[case::test_missing_is_null(json!({}), json!([{"op": "test", "path": "/a", "value": null}]), Ok(json!({})))]
    #[case::test_missing_without_value(json!({}), json!([{"op": "test", "path": "/a"}]), Ok(json!({})))]
    #[case::test_missing_against_value(json!({}), json!([{"op": "test", "path": "/a", "value": 1}]), Err("testing value /a failed: test failed"))]
    #[case::test_present_without_value(json!({"a": 1}), json!([{"op": "test", "path": "/a"}]), Err("testing value /a failed: test failed"))]
    #[case::test_present_against_null(json!({"a": {}}), json!([{"op": "test", "path": "/a", "value": null}]), Err("testing value /a failed: test failed"))]
    #[case::test_nested_null(json!({"a": {"b": null}}), json!([{"op": "test", "path": "/a", "value": {"b": null}}]), Ok(json!({"a": {"b": null}})))]
    #[case::test_nested_null_differs(json!({"a": {"b": null}}), json!([{"op": "test", "path": "/a", "value": {"b": 1}}]), Err("testing value /a failed: test failed"))]
    #[case::test_root(json!({"a": 1}), json!([{"op": "test", "path": "", "value": {"a": 1}}]), Ok(json!({"a": 1})))]
    #[case::test_root_differs(json!({"a": 1}), json!([{"op": "test", "path": "", "value": {}}]), Err("testing value  failed: test failed"))]
    #[case::test_missing_parent(json!({}), json!([{"op": "test", "path": "/a/b", "value": 1}]), Err("test operation does not apply: is missing path: /a/b: missing value"))]
    #[case::test_bad_index(json!({"l": []}), json!([{"op": "test", "path": "/l/0", "value": 1}]), Err("error in test for path: '/l/0': Unable to access invalid index: 0: invalid index referenced"))]
    #[case::test_no_path(json!({}), json!([{"op": "test", "value": 1}]), Err("test operation failed to decode path: operation missing path field: missing value"))]
    // op
    #[case::unknown_op(json!({}), json!([{"op": "merge", "path": "/a"}]), Err("Unexpected kind: merge"))]
    #[case::missing_op(json!({}), json!([{"path": "/a"}]), Err("Unexpected kind: unknown"))]
    #[case::op_not_a_string(json!({}), json!([{"op": 1, "path": "/a"}]), Err("Unexpected kind: unknown"))]
    #[case::null_operation(json!({}), json!([null]), Err("Unexpected kind: unknown"))]
    #[case::failure_after_success(json!({}), json!([{"op": "add", "path": "/a", "value": 1}, {"op": "bogus"}]), Err("Unexpected kind: bogus"))]
    #[case::null_patch(json!({"a": 1}), json!(null), Ok(json!({"a": 1})))]
    #[case::not_an_array(json!({}), json!({"op": "add"}), Err("json: cannot unmarshal object into Go value of type jsonpatch.Patch"))]
    #[case::element_not_an_object(json!({}), json!(["add"]), Err("json: cannot unmarshal string into Go value of type jsonpatch.Operation"))]
    fn evanphx_v4(#[case] doc: Value, #[case] patch: Value, #[case] want: Result<Value, &str>) {
        assert_eq!(run(doc, patch), want.map_err(str::to_string));
    }

    #[test]
    fn copies_are_capped() {
        let big = "x".repeat(MAX_COPY_BYTES / 2);
        let doc = json!({"a": big});
        let patch = json!([
            {"op": "copy", "from": "/a", "path": "/b"},
            {"op": "copy", "from": "/a", "path": "/c"},
        ]);
        let want = MAX_COPY_BYTES + 4;
        assert_eq!(
            run(doc, patch),
            Err(format!("Unable to complete the copy, the accumulated size increase of copy is {want}, exceeding the limit {MAX_COPY_BYTES}"))
        );
    }
}
