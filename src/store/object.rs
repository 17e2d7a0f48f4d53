//! One stored object state: its serialisation, which every read serves, and its JSON tree,
//! which only writes, selectors and controllers need.
//!
//! The tree costs several times the bytes (serde_json's maps are B-tree nodes of about 600
//! bytes however few keys they hold), so the trees a store keeps are bounded: its
//! [`TreeWindow`] lists the states whose trees were most recently made (by a write or by a
//! read) and takes the oldest ones' trees away past its bound; a deleted state's tree goes
//! at once. The next write of an object, a controller reacting to it, the authorizer reading
//! the same roles again all find the tree there; a state whose tree is gone parses its bytes
//! again (as the real apiserver decodes what it reads from etcd) and the window counts it
//! in. So the memory a store holds stays close to the bytes it serves, plus the window's
//! bound.

use std::collections::VecDeque;
use std::ops::Deref;
use std::sync::{Arc, Weak};

use bytes::Bytes;
use parking_lot::Mutex;
use serde_json::Value;

use super::ObjectKey;
use crate::error::ApiError;

/// One stored object: its serialisation, made once per write so that reads and watch fan-out
/// never serialise again, and while it is recent, its tree.
#[derive(Debug)]
pub struct StoredObject {
    /// The object as stored (storage version, `metadata.resourceVersion` set), serialised.
    pub json: Bytes,
    /// The parsed `json`, while it is kept (always for a state outside a store).
    tree: Arc<TreeCell>,
    /// Where this state's trees are kept (none for states outside a store).
    window: Option<Arc<TreeWindow>>,
    /// Where the state is stored (the table's own key; none outside a store).
    pub(super) key: Option<Arc<ObjectKey>>,
    /// The resourceVersion of the write that produced this state.
    pub rv: u64,
    /// The resourceVersion of the write that produced this content: `rv`, except for a state a
    /// [`super::Txn::restore`] brought back, which takes a new `rv` but keeps its origin, so that
    /// restoring the same snapshot again sees it unchanged and rewrites nothing.
    pub(super) origin: u64,
    /// `metadata.uid` and `metadata.ownerReferences[*].uid`: what the store's indexes need of
    /// a state they drop, without a parse.
    pub(super) uid: Option<Arc<str>>,
    pub(super) owners: Box<[Arc<str>]>,
    /// `apiVersion`, which every read asks (to know whether it converts).
    api_version: Option<Arc<str>>,
    /// Serialisations of this state in other versions, by codec (see
    /// [`crate::conversion::Codec`]): each version is converted and serialised once.
    encodings: Mutex<Vec<(u64, Bytes)>>,
}

/// How many versions of one object state are kept serialised (a CRD rarely serves more).
const MAX_ENCODINGS: usize = 4;

/// A state's tree while it is kept: the state owns it, the window may take it away.
type TreeCell = Mutex<Option<Arc<Value>>>;

/// Which trees a store keeps: those last made (by a write, or by a read that parsed), at most
/// [`TREE_WINDOW_TREES`] of them standing for at most [`TREE_WINDOW_BYTES`] of JSON; past
/// either bound the oldest are taken from their states.
#[derive(Debug, Default)]
pub struct TreeWindow {
    trees: Mutex<WindowTrees>,
}

#[derive(Debug, Default)]
struct WindowTrees {
    trees: VecDeque<(Weak<TreeCell>, usize)>,
    bytes: usize,
}

/// How much JSON the trees a store keeps stand for: 2 MiB, a test's whole store many times
/// over, a small part of a store of tens of thousands of objects.
pub const TREE_WINDOW_BYTES: usize = 2 << 20;

/// How many trees a store keeps: a tree costs about 600 bytes per JSON object in it whatever
/// its size, so small objects are bounded by number (a fresh server's bootstrap objects are
/// about 200).
pub const TREE_WINDOW_TREES: usize = 2048;

impl TreeWindow {
    /// Counts in the tree just put in `cell` (of a state `size` bytes long); the oldest go
    /// past the bound.
    fn admit(&self, cell: &Arc<TreeCell>, size: usize) {
        let mut w = self.trees.lock();
        w.trees.push_back((Arc::downgrade(cell), size));
        w.bytes += size;
        while (w.bytes > TREE_WINDOW_BYTES || w.trees.len() > TREE_WINDOW_TREES)
            && w.trees.len() > 1
        {
            if let Some((old, size)) = w.trees.pop_front() {
                w.bytes -= size;
                if let Some(cell) = old.upgrade() {
                    *cell.lock() = None;
                }
            }
        }
    }

    /// How many trees the window counts (some may be gone already, with their states).
    pub fn len(&self) -> usize {
        self.trees.lock().trees.len()
    }

    /// Whether the window holds no tree.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// Two states are the same when the same write produced their content (see `origin`): what
/// [`super::Txn::restore`] compares, without looking at the objects.
impl PartialEq for StoredObject {
    fn eq(&self, other: &Self) -> bool {
        self.origin == other.origin
    }
}

/// An object's JSON tree as one reader holds it: shared with the stored state while that is
/// recent, else parsed for this reader. It dereferences to the [`Value`]; `.clone()` clones
/// the `Value`, as cloning a stored tree always did.
#[derive(Debug)]
pub struct Tree(Arc<Value>);

impl Deref for Tree {
    type Target = Value;

    fn deref(&self) -> &Value {
        &self.0
    }
}

/// A tree no stored state holds (a converted view of one).
impl From<Value> for Tree {
    fn from(value: Value) -> Tree {
        Tree(Arc::new(value))
    }
}

impl PartialEq<Tree> for Value {
    fn eq(&self, other: &Tree) -> bool {
        *self == *other.0
    }
}

impl serde::Serialize for Tree {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl AsRef<Value> for Tree {
    fn as_ref(&self) -> &Value {
        &self.0
    }
}

impl StoredObject {
    /// The state a write stores: `value` with `metadata.resourceVersion` set to `rv`,
    /// serialised; `window` keeps its tree.
    pub(super) fn new(
        mut value: Value,
        rv: u64,
        key: Arc<ObjectKey>,
        window: &Arc<TreeWindow>,
        encode: super::Encoder,
    ) -> Result<Arc<Self>, ApiError> {
        match value.get_mut("metadata").and_then(Value::as_object_mut) {
            Some(meta) => {
                meta.insert("resourceVersion".into(), Value::String(rv.to_string()));
            }
            None => return Err(ApiError::internal("object without metadata")),
        }
        let json = Bytes::from(super::json::to_vec_with(&value, encode));
        let mut obj = StoredObject::from_parts(value, json, rv);
        window.admit(&obj.tree, obj.json.len());
        obj.window = Some(window.clone());
        obj.key = Some(key);
        Ok(Arc::new(obj))
    }

    /// A state from bytes serialised before (a recorded bootstrap's, replayed into a new
    /// server: see `state::bootstrap`), stamped with `rv` unless they carry it already. What
    /// the indexes need (uid, owners, apiVersion) is read from the bytes in one scan that
    /// ends with `metadata`; the tree is not built, the first reader parses it. The bytes
    /// must be an object as [`StoredObject::new`] writes one (this store's serialisation).
    pub(super) fn from_bytes(
        json: Bytes,
        rv: u64,
        key: Arc<ObjectKey>,
        window: &Arc<TreeWindow>,
    ) -> Result<Arc<Self>, ApiError> {
        let marks = Landmarks::of(&json);
        let rv_text = rv.to_string();
        let json = match marks.resource_version.and_then(|at| json_str(&json, at)) {
            Some(current) if current == rv_text => json,
            _ => stamp_resource_version(&json, rv)
                .ok_or_else(|| ApiError::internal("a serialised state without metadata"))?,
        };
        let owners = marks
            .owner_references
            .and_then(|at| json.get(at..skip_value(&json, at)?))
            .and_then(|refs| serde_json::from_slice::<Value>(refs).ok())
            .map(|refs| {
                let refs = refs.as_array().into_iter().flatten();
                refs.filter_map(|r| r["uid"].as_str())
                    .map(Arc::from)
                    .collect()
            })
            .unwrap_or_default();
        let index = Indexed {
            uid: marks.uid.and_then(|at| json_str(&json, at)).map(Arc::from),
            api_version: marks
                .api_version
                .and_then(|at| json_str(&json, at))
                .map(Arc::from),
            owners,
        };
        Ok(Self::indexed(json, rv, key, window, index))
    }

    /// A state from bytes that carry `rv` already, with `index` as what its indexes read
    /// (see [`super::Txn::put_indexed`]).
    pub(super) fn indexed(
        json: Bytes,
        rv: u64,
        key: Arc<ObjectKey>,
        window: &Arc<TreeWindow>,
        index: Indexed,
    ) -> Arc<Self> {
        Arc::new(StoredObject {
            uid: index.uid,
            api_version: index.api_version,
            owners: index.owners.into(),
            tree: Arc::default(),
            window: Some(window.clone()),
            key: Some(key),
            rv,
            origin: rv,
            encodings: Mutex::new(Vec::new()),
            json,
        })
    }

    /// This state's content under another resourceVersion (a deletion's last state, a
    /// restored state): the bytes with the new version written in, no tree, no re-serialising
    /// (what the deletion's response, watchers and controllers need of it is in the bytes,
    /// the key and the uid indexes); its serialisations in other versions, kept for watchers
    /// of those versions, are stamped the same way.
    pub(super) fn restamped(
        &self,
        rv: u64,
        origin: u64,
        encode: super::Encoder,
    ) -> Result<Arc<Self>, ApiError> {
        let json = match stamp_resource_version(&self.json, rv) {
            Some(json) => json,
            None => {
                let window = self.window.clone().unwrap_or_default();
                let key = self.key.clone().unwrap_or_default();
                return Self::new(self.value().clone(), rv, key, &window, encode);
            }
        };
        let encodings = self
            .encodings
            .lock()
            .iter()
            .filter_map(|(codec, bytes)| Some((*codec, stamp_resource_version(bytes, rv)?)))
            .collect();
        Ok(Arc::new(StoredObject {
            json,
            tree: Arc::default(),
            key: self.key.clone(),
            window: self.window.clone(),
            rv,
            origin,
            uid: self.uid.clone(),
            owners: self.owners.clone(),
            api_version: self.api_version.clone(),
            encodings: Mutex::new(encodings),
        }))
    }

    /// An object state from its tree and that tree serialised (dry runs build the state they
    /// would have stored).
    pub fn from_parts(value: Value, json: Bytes, rv: u64) -> StoredObject {
        let uid = value["metadata"]["uid"].as_str().map(Arc::from);
        let api_version = value["apiVersion"].as_str().map(Arc::from);
        let owners = super::owner_uids(&value).map(Arc::from).collect();
        StoredObject {
            json,
            tree: Arc::new(Mutex::new(Some(Arc::new(value)))),
            window: None,
            key: None,
            rv,
            origin: rv,
            uid,
            owners,
            api_version,
            encodings: Mutex::new(Vec::new()),
        }
    }

    /// The object's JSON tree: the one kept for it, else parsed from its bytes (which this
    /// store wrote, so the parse cannot fail but for a bug, reported as an empty object rather
    /// than a panic) and kept, counted in by the window.
    pub fn value(&self) -> Tree {
        if let Some(tree) = self.tree.lock().clone() {
            return Tree(tree);
        }
        let tree = Arc::new(serde_json::from_slice(&self.json).unwrap_or_else(|e| {
            tracing::error!("a stored object does not parse: {e}");
            Value::Object(Default::default())
        }));
        if let Some(window) = &self.window {
            *self.tree.lock() = Some(tree.clone());
            window.admit(&self.tree, self.json.len());
        }
        Tree(tree)
    }

    /// Whether this state's tree is at hand.
    pub fn has_tree(&self) -> bool {
        self.tree.lock().is_some()
    }

    /// Lets this state's tree go (a deleted object's: only watchers' selectors may still
    /// read it, and parse it then).
    pub(super) fn forget_tree(&self) {
        if self.window.is_some() {
            *self.tree.lock() = None;
        }
    }

    /// `metadata.uid`, without a parse.
    pub fn uid(&self) -> Option<&str> {
        self.uid.as_deref()
    }

    /// `apiVersion`, without a parse.
    pub fn api_version(&self) -> Option<&str> {
        self.api_version.as_deref()
    }

    /// The uids `metadata.ownerReferences` names, without a parse.
    pub fn owner_uids(&self) -> &[Arc<str>] {
        &self.owners
    }

    /// Where the state is stored (namespace and name), without a parse; none for a state
    /// outside a store (a dry run's).
    pub fn key(&self) -> Option<&ObjectKey> {
        self.key.as_deref()
    }

    /// The cached serialisation of this state for a codec.
    pub fn cached_encoding(&self, codec: u64) -> Option<Bytes> {
        self.encodings
            .lock()
            .iter()
            .find(|(k, _)| *k == codec)
            .map(|(_, b)| b.clone())
    }

    /// Caches the serialisation of this state for a codec (the oldest goes when full).
    pub fn cache_encoding(&self, codec: u64, bytes: Bytes) {
        let mut cache = self.encodings.lock();
        if cache.iter().any(|(k, _)| *k == codec) {
            return;
        }
        if cache.len() == MAX_ENCODINGS {
            cache.remove(0);
        }
        cache.push((codec, bytes));
    }

    /// Whether the object is being deleted (`metadata.deletionTimestamp` is set).
    pub fn is_deleting(&self) -> bool {
        self.value()["metadata"].get("deletionTimestamp").is_some()
    }
}

/// `json` (a serialised object) with its `metadata.resourceVersion` replaced by `rv`: one scan
/// that skips values without decoding them, one copy. `None` when the object has no such
/// string.
fn stamp_resource_version(json: &[u8], rv: u64) -> Option<Bytes> {
    let meta = member(json, 0, b"metadata")?;
    let start = member(json, meta, b"resourceVersion")?;
    if json.get(start) != Some(&b'"') {
        return None;
    }
    let end = skip_string(json, start)?;
    let rv = rv.to_string();
    let mut out = Vec::with_capacity(json.len() + rv.len());
    out.extend_from_slice(json.get(..start)?);
    out.push(b'"');
    out.extend_from_slice(rv.as_bytes());
    out.push(b'"');
    out.extend_from_slice(json.get(end..)?);
    Some(Bytes::from(out))
}

/// What the store's indexes read of a state (`metadata.uid`, the owners' uids,
/// `apiVersion`), when the writer knows them without reading the bytes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Indexed {
    /// `metadata.uid`.
    pub uid: Option<Arc<str>>,
    /// The uids `metadata.ownerReferences` names, in order.
    pub owners: Vec<Arc<str>>,
    /// `apiVersion`.
    pub api_version: Option<Arc<str>>,
}

/// Where the values a state's indexes need start in its bytes (the members are the same
/// wherever they come, since the stamp rewrites the resourceVersion before the indexes are read).
#[derive(Debug, Default)]
struct Landmarks {
    api_version: Option<usize>,
    resource_version: Option<usize>,
    uid: Option<usize>,
    owner_references: Option<usize>,
}

impl Landmarks {
    /// One scan of the top-level members up to `metadata`, and of its members.
    fn of(json: &[u8]) -> Landmarks {
        let mut marks = Landmarks::default();
        let mut metadata = None;
        members(json, 0, |name, at| {
            match name {
                b"apiVersion" => marks.api_version = Some(at),
                b"metadata" => metadata = Some(at),
                _ => {}
            }
            metadata.is_none()
        });
        if let Some(meta) = metadata {
            members(json, meta, |name, at| {
                match name {
                    b"resourceVersion" => marks.resource_version = Some(at),
                    b"uid" => marks.uid = Some(at),
                    b"ownerReferences" => marks.owner_references = Some(at),
                    _ => {}
                }
                true
            });
        }
        marks
    }
}

/// Calls `visit` with the name and value offset of each member of the JSON object at `at`,
/// until it answers `false` or the object ends.
fn members(json: &[u8], at: usize, mut visit: impl FnMut(&[u8], usize) -> bool) -> Option<()> {
    let mut i = skip_ws(json, at);
    if json.get(i) != Some(&b'{') {
        return None;
    }
    i += 1;
    loop {
        i = skip_ws(json, i);
        match json.get(i)? {
            b',' => {
                i += 1;
                continue;
            }
            b'"' => {}
            _ => return Some(()),
        }
        let key_end = skip_string(json, i)?;
        let key = json.get(i + 1..key_end - 1)?;
        i = skip_ws(json, key_end);
        if json.get(i) != Some(&b':') {
            return None;
        }
        i = skip_ws(json, i + 1);
        if !visit(key, i) {
            return Some(());
        }
        i = skip_value(json, i)?;
    }
}

/// The JSON string that starts at `at`, decoded.
fn json_str(json: &[u8], at: usize) -> Option<String> {
    if json.get(at) != Some(&b'"') {
        return None;
    }
    serde_json::from_slice(json.get(at..skip_string(json, at)?)?).ok()
}

/// Where the value of the member `name` of the JSON object at `at` starts.
fn member(json: &[u8], at: usize, name: &[u8]) -> Option<usize> {
    let mut found = None;
    members(json, at, |key, value| {
        if key == name {
            found = Some(value);
        }
        found.is_none()
    })?;
    found
}

fn skip_ws(json: &[u8], mut i: usize) -> usize {
    while json.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    i
}

/// Past the string that starts (with its quote) at `i`: `memchr` finds the next quote or
/// backslash, many bytes at a time (a ConfigMap's values are long runs of neither).
fn skip_string(json: &[u8], i: usize) -> Option<usize> {
    let mut j = i + 1;
    loop {
        j += memchr::memchr2(b'"', b'\\', json.get(j..)?)?;
        match json.get(j)? {
            b'"' => return Some(j + 1),
            _ => j += 2,
        }
    }
}

/// Past the value that starts at `i`. An object's end is found by counting its own kind of
/// bracket alone (outside strings, `{}` and `[]` are each balanced in valid JSON), so each
/// search is for three bytes, which `memchr` does many bytes at a time.
fn skip_value(json: &[u8], i: usize) -> Option<usize> {
    let (open, close) = match json.get(i)? {
        b'"' => return skip_string(json, i),
        b'{' => (b'{', b'}'),
        b'[' => (b'[', b']'),
        _ => {
            let mut j = i;
            while json
                .get(j)
                .is_some_and(|b| !matches!(b, b',' | b'}' | b']'))
            {
                j += 1;
            }
            return Some(j);
        }
    };
    let (mut depth, mut j) = (0usize, i);
    loop {
        j += memchr::memchr3(b'"', open, close, json.get(j..)?)?;
        match *json.get(j)? {
            b'"' => {
                j = skip_string(json, j)?;
                continue;
            }
            b if b == open => depth += 1,
            _ => {
                depth -= 1;
                if depth == 0 {
                    return Some(j + 1);
                }
            }
        }
        j += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case::plain(
        r#"{"metadata":{"name":"a","resourceVersion":"7"}}"#,
        Some(r#"{"metadata":{"name":"a","resourceVersion":"12"}}"#)
    )]
    #[case::nested_lookalike_first(
        r#"{"data":{"resourceVersion":"7"},"metadata":{"resourceVersion":"7","x":1}}"#,
        Some(r#"{"data":{"resourceVersion":"7"},"metadata":{"resourceVersion":"12","x":1}}"#)
    )]
    #[case::escapes_before(
        r#"{"a":"\"resourceVersion\":\"7\"","metadata":{"resourceVersion":"7"}}"#,
        Some(r#"{"a":"\"resourceVersion\":\"7\"","metadata":{"resourceVersion":"12"}}"#)
    )]
    #[case::no_rv(r#"{"metadata":{"name":"a"}}"#, None)]
    #[case::rv_not_a_string(r#"{"metadata":{"resourceVersion":7}}"#, None)]
    #[case::no_metadata(r#"{"kind":"X"}"#, None)]
    #[case::metadata_not_an_object(r#"{"metadata":"resourceVersion"}"#, None)]
    #[case::spaced(
        r#"{ "a" : [1, {"b": "]"}], "metadata" : { "resourceVersion" : "7" } }"#,
        Some(r#"{ "a" : [1, {"b": "]"}], "metadata" : { "resourceVersion" : "12" } }"#)
    )]
    #[case::truncated(r#"{"metadata":{"resourceVersion":"7"#, None)]
    #[case::escaped_quote_in_key(
        r#"{"x\"":1,"metadata":{"resourceVersion":"7"}}"#,
        Some(r#"{"x\"":1,"metadata":{"resourceVersion":"12"}}"#)
    )]
    fn stamps_only_metadata_resource_version(#[case] json: &str, #[case] want: Option<&str>) {
        let got = stamp_resource_version(json.as_bytes(), 12);
        assert_eq!(got.as_deref(), want.map(str::as_bytes));
    }

    #[rstest]
    #[case::string(r#""a\"b\\" ,"#, Some(8))]
    #[case::object(r#"{"a":{"b":[1,{"c":2}]}} ,"#, Some(23))]
    #[case::array(r#"[[1],{"a":[2]},"]"] ,"#, Some(19))]
    #[case::brackets_in_strings(r#"{"}":"{","x":"\"}"} ,"#, Some(19))]
    #[case::number(r#"12.5e3}"#, Some(6))]
    #[case::literal(r#"true"#, Some(4))]
    #[case::unterminated_string(r#""abc\""#, None)]
    #[case::unterminated_object(r#"{"a":{"b":1}"#, None)]
    #[case::escape_at_the_end(r#""\"#, None)]
    fn skips_one_value(#[case] json: &str, #[case] end: Option<usize>) {
        assert_eq!(skip_value(json.as_bytes(), 0), end);
    }

    #[test]
    fn a_state_without_its_tree_parses_its_bytes() {
        let window = Arc::new(TreeWindow::default());
        let obj = StoredObject::new(
            serde_json::json!({"metadata": {"name": "a", "uid": "u1"}}),
            3,
            Arc::new(ObjectKey::new("", "a")),
            &window,
            super::super::json::write_value,
        )
        .expect("stored");
        assert!(obj.has_tree());
        obj.forget_tree();
        assert!(!obj.has_tree());
        assert_eq!(obj.value()["metadata"]["resourceVersion"], "3");
        assert_eq!(obj.uid(), Some("u1"));
        assert!(obj.has_tree(), "the parse is kept in the window");
        let other_version = r#"{"apiVersion":"g/v2","metadata":{"resourceVersion":"3"}}"#;
        obj.cache_encoding(7, Bytes::from_static(other_version.as_bytes()));
        let later = obj
            .restamped(9, 3, super::super::json::write_value)
            .expect("restamped");
        assert_eq!(
            later.cached_encoding(7).as_deref(),
            Some(&br#"{"apiVersion":"g/v2","metadata":{"resourceVersion":"9"}}"#[..])
        );
        assert!(!later.has_tree());
        assert_eq!(later.key().map(|k| k.name.as_str()), Some("a"));
        assert_eq!(later.api_version(), None);
        let typed = StoredObject::new(
            serde_json::json!({"apiVersion": "g/v1", "metadata": {"name": "t"}}),
            4,
            Arc::default(),
            &window,
            super::super::json::write_value,
        )
        .expect("stored");
        assert_eq!(typed.api_version(), Some("g/v1"));
        assert_eq!(later.value()["metadata"]["resourceVersion"], "9");
        assert_eq!(later.value()["metadata"]["name"], "a");
        assert_eq!(later.uid(), Some("u1"));
    }
}

#[cfg(test)]
mod window_tests {
    use super::*;

    #[test]
    fn the_window_bounds_the_number_of_trees_too() {
        let window = Arc::new(TreeWindow::default());
        let objs: Vec<_> = (0..TREE_WINDOW_TREES as u64 + 2)
            .map(|i| {
                let v = serde_json::json!({"metadata": {"name": i.to_string()}});
                StoredObject::new(
                    v,
                    i + 1,
                    Arc::default(),
                    &window,
                    super::super::json::write_value,
                )
                .expect("stored")
            })
            .collect();
        assert_eq!(window.len(), TREE_WINDOW_TREES);
        assert!(!objs[1].has_tree());
        assert!(objs[2].has_tree());
    }

    #[test]
    fn the_window_lets_the_oldest_trees_go_past_its_bound() {
        let window = Arc::new(TreeWindow::default());
        let big = "x".repeat(TREE_WINDOW_BYTES / 4);
        let objs: Vec<_> = (0..6)
            .map(|i| {
                let v = serde_json::json!({"metadata": {"name": i.to_string()}, "data": big});
                StoredObject::new(
                    v,
                    i + 1,
                    Arc::default(),
                    &window,
                    super::super::json::write_value,
                )
                .expect("stored")
            })
            .collect();
        let kept: Vec<bool> = objs.iter().map(|o| o.has_tree()).collect();
        assert_eq!(kept, [false, false, false, true, true, true]);
        assert_eq!(objs[0].value()["metadata"]["name"], "0");
        assert!(objs[0].has_tree(), "read back in");
        assert!(!objs[3].has_tree(), "pushed out by the read");
    }
}
