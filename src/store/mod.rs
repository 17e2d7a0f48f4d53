//! Objects, the one write path, and the global resourceVersion.
//!
//! The whole state is one immutable [`Snapshot`] (persistent `imbl` maps, so cloning is O(1) and a
//! write copies only the path it touches) behind an [`ArcSwap`]. This is why kubefake does not use a
//! `DashMap` here: a list must see every resource at one resourceVersion, exactly like an etcd
//! range read at a revision, and a snapshot gives that without any lock on the read path.
//!
//! Writers go through [`Store::write`]: under one mutex they see the latest snapshot, make their
//! changes (each change takes the next resourceVersion), and on success the new snapshot is
//! published, the events appended to the history ring and broadcast to watchers, in that order.
//! The closure runs no I/O and no `.await`; everything expensive (decoding, validation) happens
//! before it, with an optimistic-concurrency check inside it.

mod json;
mod object;
pub mod selector;

pub(crate) use json::to_vec as to_json;
pub(crate) use json::write_str as write_json_str;
pub(crate) use json::write_value as write_json;

pub use object::{Indexed, StoredObject, Tree, TreeWindow, TREE_WINDOW_BYTES, TREE_WINDOW_TREES};

use std::collections::VecDeque;
use std::sync::{Arc, OnceLock};

use arc_swap::ArcSwap;
use bytes::Bytes;
use parking_lot::Mutex;
use serde_json::Value;
use tokio::sync::broadcast;

use crate::error::ApiError;

/// Which table an object lives in: API group plus resource (plural). Versions share a table, as
/// they share etcd keys in a real cluster.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GroupResource {
    /// API group, empty for core.
    pub group: String,
    /// Resource plural.
    pub resource: String,
}

impl GroupResource {
    /// Builds a key from borrowed parts.
    pub fn new(group: &str, resource: &str) -> Self {
        GroupResource {
            group: group.to_string(),
            resource: resource.to_string(),
        }
    }
}

/// An object's identity within its table. Ordered by namespace, then name: the order lists use.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ObjectKey {
    /// Empty for cluster-scoped objects.
    pub namespace: String,
    /// `metadata.name`.
    pub name: String,
}

impl ObjectKey {
    /// Builds a key from borrowed parts.
    pub fn new(namespace: &str, name: &str) -> Self {
        ObjectKey {
            namespace: namespace.to_string(),
            name: name.to_string(),
        }
    }
}

/// The type of a watch event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    /// The object was created.
    Added,
    /// The object changed.
    Modified,
    /// The object was removed from the store.
    Deleted,
}

impl EventType {
    /// The wire name (`ADDED`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// One committed change. Watchers and the history ring share it.
#[derive(Debug)]
pub struct Event {
    /// The resourceVersion this change took.
    pub rv: u64,
    /// What happened.
    pub kind: EventType,
    /// Which table: the snapshot's own key, shared rather than copied for each event.
    pub resource: Arc<GroupResource>,
    /// Which object: the state's own key, shared the same way.
    pub key: Arc<ObjectKey>,
    /// The new state; for `Deleted`, the last state stamped with the deletion's resourceVersion.
    pub object: Arc<StoredObject>,
    /// The state before this change (none for `Added`); selectors need it to turn a change that
    /// stops matching into a DELETED for the watcher.
    pub prev: Option<Arc<StoredObject>>,
    /// Wire frames of this event in the storage version, one per watch event type (ADDED,
    /// MODIFIED, DELETED), built by the first watcher that needs one so that fan-out to many
    /// watchers serialises once.
    frames: [OnceLock<Bytes>; 3],
    /// The same in other versions, by codec cache key and event type.
    other_frames: Mutex<Vec<(u64, EventType, Bytes)>>,
}

/// The history's default bound in bytes of JSON: 64 MiB.
pub const DEFAULT_HISTORY_BYTES: usize = 64 << 20;

impl Event {
    /// What keeping this event costs the history: the serialised size of the states it holds.
    fn weight(&self) -> usize {
        self.object.json.len() + self.prev.as_ref().map_or(0, |p| p.json.len())
    }

    fn new(
        rv: u64,
        kind: EventType,
        resource: Arc<GroupResource>,
        key: Arc<ObjectKey>,
        object: Arc<StoredObject>,
        prev: Option<Arc<StoredObject>>,
    ) -> Arc<Event> {
        Arc::new(Event {
            rv,
            kind,
            resource,
            key,
            object,
            prev,
            frames: Default::default(),
            other_frames: Mutex::new(Vec::new()),
        })
    }

    /// The frame for a watch event type in the version a codec cache key stands for (0: the
    /// stored bytes), built once with `build`.
    pub fn frame(&self, codec: u64, kind: EventType, build: impl FnOnce() -> Bytes) -> Bytes {
        if codec == 0 {
            let slot = match kind {
                EventType::Added => &self.frames[0],
                EventType::Modified => &self.frames[1],
                EventType::Deleted => &self.frames[2],
            };
            return slot.get_or_init(build).clone();
        }
        if let Some((_, _, f)) = self
            .other_frames
            .lock()
            .iter()
            .find(|(c, k, _)| *c == codec && *k == kind)
        {
            return f.clone();
        }
        let frame = build();
        self.other_frames.lock().push((codec, kind, frame.clone()));
        frame
    }
}

/// Keys are behind `Arc`: a write copies the tree nodes on its path, and copying a node clones
/// every key in it, which must not allocate.
type Table = imbl::OrdMap<Arc<ObjectKey>, Arc<StoredObject>>;

/// Where an object lives, shared by the indexes: its table's key and its own (no copies).
type Location = (Arc<GroupResource>, Arc<ObjectKey>);

/// The snapshot's hash maps hash with foldhash, seeded per process: several times cheaper than
/// the standard SipHash on its short keys (group and resource names, uids), and every write and
/// read looks some up.
type HashMap<K, V> =
    imbl::GenericHashMap<K, V, foldhash::fast::RandomState, imbl::shared_ptr::DefaultSharedPtr>;

/// Every object at one resourceVersion. Cheap to clone and never changes once published.
#[derive(Clone, Default)]
pub struct Snapshot {
    /// The resourceVersion of the last write this snapshot includes.
    pub rv: u64,
    /// Keys are behind `Arc` for the reason [`Table`]'s are: a write copies the node of this
    /// map it changes, and with it every key there (one per resource that has objects).
    tables: HashMap<Arc<GroupResource>, Table>,
    /// uid -> where the object lives (the garbage collector finds owners by uid).
    by_uid: HashMap<Arc<str>, Location>,
    /// owner uid -> objects naming it in `ownerReferences`.
    dependents: HashMap<Arc<str>, imbl::OrdSet<Location>>,
}

/// The owner uids of a state, none for no state.
fn owners_of(state: Option<&StoredObject>) -> &[Arc<str>] {
    state.map_or(&[], |s| &s.owners)
}

/// `metadata.ownerReferences[*].uid` of an object.
pub fn owner_uids(obj: &Value) -> impl Iterator<Item = &str> {
    obj["metadata"]["ownerReferences"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["uid"].as_str())
}

impl Snapshot {
    /// Puts or removes one object in its table and keeps the indexes in step.
    fn apply(
        &mut self,
        gr: &GroupResource,
        key: &ObjectKey,
        new: Option<Arc<StoredObject>>,
    ) -> (Arc<GroupResource>, Option<Arc<StoredObject>>) {
        let stored_key =
            |obj: &StoredObject| obj.key.clone().unwrap_or_else(|| Arc::new(key.clone()));
        let (table_key, prev) = match (self.tables.get_key_value_mut(gr), &new) {
            (Some((table_key, table)), Some(obj)) => {
                let table_key = table_key.clone();
                (table_key, table.insert(stored_key(obj), obj.clone()))
            }
            (Some((table_key, table)), None) => {
                let table_key = table_key.clone();
                let prev = table.remove(key);
                if table.is_empty() {
                    self.tables.remove(gr);
                }
                (table_key, prev)
            }
            (None, Some(obj)) => {
                let table_key = Arc::new(gr.clone());
                let table = Table::unit(stored_key(obj), obj.clone());
                self.tables.insert(table_key.clone(), table);
                (table_key, None)
            }
            (None, None) => return (Arc::new(gr.clone()), None),
        };
        self.reindex(&table_key, key, prev.as_deref(), new.as_deref());
        (table_key, prev)
    }

    /// Moves the uid and owner indexes from `old` to `new` (states of the object at `gr`,
    /// `key`). An update keeps both uid and owners, and then has nothing to do.
    fn reindex(
        &mut self,
        gr: &Arc<GroupResource>,
        key: &ObjectKey,
        old: Option<&StoredObject>,
        new: Option<&StoredObject>,
    ) {
        let (old_uid, new_uid) = (
            old.and_then(|o| o.uid.as_ref()),
            new.and_then(|n| n.uid.as_ref()),
        );
        let (old_owners, new_owners) = (owners_of(old), owners_of(new));
        if old_uid == new_uid && old_owners == new_owners {
            return;
        }
        // The stored states' own key, else a copy.
        let shared_key = new.or(old).and_then(|s| s.key.clone());
        let entry: Location = (
            gr.clone(),
            shared_key.unwrap_or_else(|| Arc::new(key.clone())),
        );
        if let Some(uid) = old_uid {
            self.by_uid.remove(uid);
        }
        for owner in old_owners.iter() {
            if let Some(set) = self.dependents.get_mut(owner) {
                set.remove(&entry);
                if set.is_empty() {
                    self.dependents.remove(owner);
                }
            }
        }
        if let Some(uid) = new_uid {
            self.by_uid.insert(uid.clone(), entry.clone());
        }
        for owner in new_owners.iter() {
            self.dependents
                .entry(owner.clone())
                .or_default()
                .insert(entry.clone());
        }
    }

    /// Where the object with this uid lives.
    pub fn locate_uid(&self, uid: &str) -> Option<(GroupResource, ObjectKey)> {
        self.by_uid
            .get(uid)
            .map(|(gr, key)| ((**gr).clone(), (**key).clone()))
    }

    /// The objects whose `ownerReferences` name this uid.
    pub fn dependents_of(&self, uid: &str) -> Vec<(GroupResource, ObjectKey)> {
        self.dependents
            .get(uid)
            .map(|set| {
                set.iter()
                    .map(|(gr, key)| ((**gr).clone(), (**key).clone()))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// One object.
    pub fn get(&self, gr: &GroupResource, key: &ObjectKey) -> Option<Arc<StoredObject>> {
        self.tables.get(gr).and_then(|t| t.get(key)).cloned()
    }

    /// Objects of a resource in list order (namespace, then name); only those in `namespace` when
    /// it is given.
    pub fn list<'a>(
        &'a self,
        gr: &GroupResource,
        namespace: Option<&'a str>,
    ) -> impl Iterator<Item = (&'a ObjectKey, &'a Arc<StoredObject>)> + 'a {
        let table = self.tables.get(gr);
        let start = ObjectKey::new(namespace.unwrap_or(""), "");
        table
            .into_iter()
            .flat_map(move |t| t.range(start.clone()..))
            .map(|(k, v)| (&**k, v))
            .take_while(move |(k, _)| namespace.is_none_or(|ns| k.namespace == ns))
    }

    /// Like [`Snapshot::list`], starting after `after` (for continue tokens).
    pub fn list_after<'a>(
        &'a self,
        gr: &GroupResource,
        namespace: Option<&'a str>,
        after: Option<ObjectKey>,
    ) -> impl Iterator<Item = (&'a ObjectKey, &'a Arc<StoredObject>)> + 'a {
        use std::ops::Bound;
        let table = self.tables.get(gr);
        let start = match after {
            Some(k) => Bound::Excluded(k),
            None => Bound::Included(ObjectKey::new(namespace.unwrap_or(""), "")),
        };
        table
            .into_iter()
            .flat_map(move |t| t.range((start.clone(), Bound::Unbounded)))
            .map(|(k, v)| (&**k, v))
            .skip_while(move |(k, _)| namespace.is_some_and(|ns| k.namespace.as_str() < ns))
            .take_while(move |(k, _)| namespace.is_none_or(|ns| k.namespace == ns))
    }

    /// Number of objects of a resource.
    pub fn count(&self, gr: &GroupResource) -> usize {
        self.tables.get(gr).map_or(0, |t| t.len())
    }

    /// Whether `other` holds exactly this table's states (both share it untouched): a cheap
    /// test of whether anything in one resource changed between two snapshots.
    pub fn same_table(&self, other: &Snapshot, gr: &GroupResource) -> bool {
        match (self.tables.get(gr), other.tables.get(gr)) {
            (Some(a), Some(b)) => a.ptr_eq(b),
            (None, None) => true,
            _ => false,
        }
    }

    /// Every table that has objects (for cascades that look across all resources).
    pub fn resources(&self) -> impl Iterator<Item = &GroupResource> {
        self.tables.keys().map(|gr| &**gr)
    }
}

/// A write in progress: a private copy of the latest snapshot plus the events it will publish.
pub struct Txn {
    snap: Snapshot,
    events: Vec<Arc<Event>>,
    window: Arc<TreeWindow>,
    encoder: Encoder,
}

/// How a write serialises its object: compact JSON, with the keys in the order the server's
/// types give (the state sets [`crate::typed::order::write`], Go's field order for built-in
/// kinds); sorted, as serde_json writes them, unless set.
pub type Encoder = fn(&mut Vec<u8>, &Value);

impl Txn {
    /// The state as this transaction sees it (its own changes included).
    pub fn view(&self) -> &Snapshot {
        &self.snap
    }

    /// Creates or replaces an object; it takes the next resourceVersion.
    pub fn put(
        &mut self,
        gr: &GroupResource,
        key: ObjectKey,
        value: Value,
    ) -> Result<Arc<StoredObject>, ApiError> {
        let rv = self.snap.rv + 1;
        let key = Arc::new(key);
        let obj = StoredObject::new(value, rv, key.clone(), &self.window, self.encoder)?;
        Ok(self.put_state(gr, key, obj))
    }

    /// [`Txn::put`] of a state serialised before, as this store serialises (a recorded
    /// bootstrap replayed into a new server): the bytes are kept as they are but for the
    /// resourceVersion, and parsed only when first read.
    pub fn put_serialized(
        &mut self,
        gr: &GroupResource,
        key: ObjectKey,
        json: Bytes,
    ) -> Result<Arc<StoredObject>, ApiError> {
        let rv = self.snap.rv + 1;
        let key = Arc::new(key);
        let obj = StoredObject::from_bytes(json, rv, key.clone(), &self.window)?;
        Ok(self.put_state(gr, key, obj))
    }

    /// [`Txn::put_serialized`] for bytes that say their resourceVersion is `rv`, with what the
    /// indexes need of them given instead of read from them (a replayed recording knows both,
    /// `state::bootstrap`): when `rv` is the next one, nothing reads the bytes and the first
    /// reader parses them; otherwise, or without `index`, they are put as `put_serialized`
    /// puts them.
    pub fn put_indexed(
        &mut self,
        gr: &GroupResource,
        key: ObjectKey,
        json: Bytes,
        rv: u64,
        index: Option<Indexed>,
    ) -> Result<Arc<StoredObject>, ApiError> {
        let next = self.snap.rv + 1;
        match index {
            Some(index) if rv == next => {
                let key = Arc::new(key);
                let obj = StoredObject::indexed(json, next, key.clone(), &self.window, index);
                Ok(self.put_state(gr, key, obj))
            }
            _ => self.put_serialized(gr, key, json),
        }
    }

    /// Puts a state made for the next resourceVersion and records its event.
    fn put_state(
        &mut self,
        gr: &GroupResource,
        key: Arc<ObjectKey>,
        obj: Arc<StoredObject>,
    ) -> Arc<StoredObject> {
        let rv = obj.rv;
        let (table, prev) = self.snap.apply(gr, &key, Some(obj.clone()));
        self.snap.rv = rv;
        let kind = if prev.is_some() {
            EventType::Modified
        } else {
            EventType::Added
        };
        self.events
            .push(Event::new(rv, kind, table, key, obj.clone(), prev));
        obj
    }

    /// Removes an object; the deletion takes the next resourceVersion.
    pub fn remove(
        &mut self,
        gr: &GroupResource,
        key: &ObjectKey,
    ) -> Result<Option<Arc<StoredObject>>, ApiError> {
        if self.snap.get(gr, key).is_none() {
            return Ok(None);
        }
        let (table, Some(prev)) = self.snap.apply(gr, key, None) else {
            return Ok(None);
        };
        let rv = self.snap.rv + 1;
        self.snap.rv = rv;
        let last = prev.restamped(rv, rv, self.encoder)?;
        prev.forget_tree();
        let stored_key = prev.key.clone();
        self.events.push(Event::new(
            rv,
            EventType::Deleted,
            table,
            stored_key.unwrap_or_else(|| Arc::new(key.clone())),
            last.clone(),
            Some(prev),
        ));
        Ok(Some(last))
    }
}

impl Txn {
    /// Makes the state equal to `target` (an earlier snapshot) by writing the difference:
    /// objects created since are removed, objects changed or removed since are put back as
    /// they were. Each change takes the next resourceVersion, as any write does, so the
    /// sequence goes on forward and watchers get the DELETED, MODIFIED and ADDED events of the
    /// difference. Tables and tree nodes the two states share are skipped without a look, so
    /// the cost follows what changed since, not the size of the store. Returns the events.
    pub fn restore(&mut self, target: &Snapshot) -> Result<Vec<Arc<Event>>, ApiError> {
        let first = self.events.len();
        let mut tables: Vec<Arc<GroupResource>> = self.snap.tables.keys().cloned().collect();
        tables.extend(
            target
                .tables
                .keys()
                .filter(|gr| !self.snap.tables.contains_key(&***gr))
                .cloned(),
        );
        tables.sort();
        let empty = Table::new();
        let mut removed = Vec::new();
        let mut put = Vec::new();
        for gr in &tables {
            let now = self.snap.tables.get(gr).unwrap_or(&empty);
            let then = target.tables.get(gr).unwrap_or(&empty);
            for item in now.diff(then) {
                match item {
                    imbl::ordmap::DiffItem::Remove(key, _) => removed.push((gr, key.clone())),
                    imbl::ordmap::DiffItem::Add(key, obj)
                    | imbl::ordmap::DiffItem::Update {
                        new: (key, obj), ..
                    } => put.push((gr, key.clone(), obj.clone())),
                }
            }
        }
        for (gr, key) in removed {
            self.remove(gr, &key)?;
        }
        for (gr, key, obj) in put {
            self.put_restored(gr, &key, &obj)?;
        }
        Ok(self.events[first..].to_vec())
    }

    /// Puts back an earlier state of an object under the next resourceVersion.
    fn put_restored(
        &mut self,
        gr: &GroupResource,
        key: &Arc<ObjectKey>,
        then: &StoredObject,
    ) -> Result<(), ApiError> {
        let rv = self.snap.rv + 1;
        let obj = then.restamped(rv, then.origin, self.encoder)?;
        let (table, prev) = self.snap.apply(gr, key, Some(obj.clone()));
        self.snap.rv = rv;
        let kind = if prev.is_some() {
            EventType::Modified
        } else {
            EventType::Added
        };
        let event = Event::new(rv, kind, table, key.clone(), obj, prev);
        self.events.push(event);
        Ok(())
    }
}

/// Writer-side state: only touched under the write mutex.
struct WriterState {
    history: VecDeque<Arc<Event>>,
    history_limit: usize,
    /// The serialised size of what `history` holds ([`Event::weight`]) and its bound.
    history_bytes: usize,
    history_bytes_limit: usize,
    /// Checkpoints: a committed snapshot every [`CHECKPOINT_EVERY`] resourceVersions within
    /// the history. An earlier state is the next checkpoint (or the current state) with the
    /// events after it undone, so a rebuild undoes at most that many; keeping every write's
    /// snapshot instead would hold the tree nodes each write copied (kilobytes per write).
    checkpoints: VecDeque<Arc<Snapshot>>,
}

impl WriterState {
    /// Adds an event to the history, forgetting the oldest ones past either bound (the
    /// newest event is kept whatever its size).
    fn remember(&mut self, event: Arc<Event>) {
        self.history_bytes += event.weight();
        self.history.push_back(event);
        while self.history.len() > 1
            && (self.history.len() > self.history_limit
                || self.history_bytes > self.history_bytes_limit)
        {
            if let Some(old) = self.history.pop_front() {
                self.history_bytes = self.history_bytes.saturating_sub(old.weight());
            }
        }
    }

    /// The oldest resourceVersion whose state can still be rebuilt.
    fn oldest_rv(&self, current: u64) -> u64 {
        match self.history.front() {
            Some(e) => e.rv - 1,
            None => current,
        }
    }
}

/// How many resourceVersions apart the history's checkpoints are.
const CHECKPOINT_EVERY: u64 = 64;

/// Why the state at a resourceVersion cannot be read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AtError {
    /// Older than the kept history; the oldest readable resourceVersion is given.
    TooOld(u64),
    /// Newer than anything written; the current resourceVersion is given.
    TooLarge(u64),
}

/// The object store. See the module documentation for the write protocol.
pub struct Store {
    current: ArcSwap<Snapshot>,
    writer: Mutex<WriterState>,
    /// The watchers' channel, opened by the first subscription: its buffer costs a slot per
    /// event it may hold, and until someone subscribes every event would be dropped anyway.
    events: OnceLock<broadcast::Sender<Arc<Event>>>,
    /// The channel's capacity: how far a watcher may fall behind.
    channel_capacity: usize,
    /// The trees of the states most recently written or read (see [`StoredObject`]).
    window: Arc<TreeWindow>,
    /// How writes serialise their objects.
    encoder: Encoder,
}

impl Store {
    /// An empty store. `history_limit` bounds the ring of recent events kept for watch replay;
    /// `channel_capacity` bounds how far a watcher may fall behind before it is told to re-list.
    pub fn new(history_limit: usize, channel_capacity: usize) -> Self {
        let empty = Arc::new(Snapshot::default());
        Store {
            current: ArcSwap::new(empty.clone()),
            writer: Mutex::new(WriterState {
                history: VecDeque::with_capacity(history_limit.min(4096)),
                history_limit,
                history_bytes: 0,
                history_bytes_limit: DEFAULT_HISTORY_BYTES,
                checkpoints: VecDeque::new(),
            }),
            events: OnceLock::new(),
            channel_capacity: channel_capacity.max(1),
            window: Arc::default(),
            encoder: json::write_value,
        }
    }

    /// Serialises written objects with `encoder` (see [`Encoder`]).
    pub fn with_encoder(mut self, encoder: Encoder) -> Self {
        self.encoder = encoder;
        self
    }

    /// `v` serialised as a write would store it.
    pub fn encode(&self, v: &Value) -> Vec<u8> {
        json::to_vec_with(v, self.encoder)
    }

    /// Bounds the history by the serialised size of the objects its events hold (the new
    /// state and the one before), besides their number: large objects cannot make it hold
    /// more than about `bytes` of JSON ([`DEFAULT_HISTORY_BYTES`] unless set).
    pub fn with_history_bytes(self, bytes: usize) -> Self {
        self.writer.lock().history_bytes_limit = bytes;
        self
    }

    /// The latest committed state. Lock-free.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.current.load_full()
    }

    /// The latest committed resourceVersion.
    pub fn current_rv(&self) -> u64 {
        self.current.load().rv
    }

    /// Runs `f` as one atomic write. If `f` fails nothing is changed and no event is sent.
    pub fn write<T>(&self, f: impl FnOnce(&mut Txn) -> Result<T, ApiError>) -> Result<T, ApiError> {
        let mut writer = self.writer.lock();
        let mut txn = Txn {
            snap: Snapshot::clone(&self.current.load()),
            events: Vec::new(),
            window: self.window.clone(),
            encoder: self.encoder,
        };
        let out = f(&mut txn)?;
        if txn.events.is_empty() {
            return Ok(out);
        }
        let snap = Arc::new(txn.snap);
        self.current.store(snap.clone());
        let last = writer.checkpoints.back().map_or(0, |c| c.rv);
        if writer.history_limit > 0 && snap.rv >= last + CHECKPOINT_EVERY {
            // Past states serve lists only: the uid indexes (random keys, so each write
            // copies several of their nodes) are not kept with them.
            writer.checkpoints.push_back(Arc::new(Snapshot {
                rv: snap.rv,
                tables: snap.tables.clone(),
                ..Snapshot::default()
            }));
        }
        for event in txn.events {
            if writer.history_limit > 0 {
                writer.remember(event.clone());
            }
            // No channel or no receivers is fine: nobody is watching.
            if let Some(events) = self.events.get() {
                let _ = events.send(event);
            }
        }
        let oldest = writer.oldest_rv(snap.rv);
        while writer.checkpoints.front().is_some_and(|c| c.rv < oldest) {
            writer.checkpoints.pop_front();
        }
        Ok(out)
    }

    /// The state exactly at `rv` (for `resourceVersionMatch=Exact` and continue tokens): the
    /// first checkpoint at or after it (else the current state) with the history's events
    /// after `rv` undone, newest first, each putting back the state it replaced. A past
    /// state is for listing: its uid and owner indexes may be incomplete.
    pub fn snapshot_at(&self, rv: u64) -> Result<Arc<Snapshot>, AtError> {
        let writer = self.writer.lock();
        let current = self.current.load_full();
        if rv == current.rv {
            return Ok(current);
        }
        if rv > current.rv {
            return Err(AtError::TooLarge(current.rv));
        }
        let oldest = writer.oldest_rv(current.rv);
        if rv < oldest {
            return Err(AtError::TooOld(oldest));
        }
        let base = match writer.checkpoints.iter().find(|c| c.rv >= rv) {
            Some(c) => c.clone(),
            None => current,
        };
        if base.rv == rv {
            return Ok(base);
        }
        let mut snap = Snapshot::clone(&base);
        for event in writer
            .history
            .iter()
            .rev()
            .skip_while(|e| e.rv > base.rv)
            .take_while(|e| e.rv > rv)
        {
            snap.apply(&event.resource, &event.key, event.prev.clone());
        }
        snap.rv = rv;
        Ok(Arc::new(snap))
    }

    /// Subscribes to every future event. Pair it with [`Store::history_since`] (taken after
    /// subscribing) to replay from a resourceVersion without a gap.
    pub fn subscribe(&self) -> broadcast::Receiver<Arc<Event>> {
        if let Some(events) = self.events.get() {
            return events.subscribe();
        }
        // The channel is opened under the writer's lock, so that every write is either
        // before the opening (and in the history, or in the state read after it) or after it
        // (and sent): one that saw no channel cannot be published after this returns.
        let _writer = self.writer.lock();
        let open = || broadcast::channel(self.channel_capacity).0;
        self.events.get_or_init(open).subscribe()
    }

    /// How many subscriptions are open (watch streams and waiting reads): lets tests prove
    /// that a closed stream released its subscription.
    pub fn watcher_count(&self) -> usize {
        self.events
            .get()
            .map_or(0, broadcast::Sender::receiver_count)
    }

    /// The oldest resourceVersion a watch can still resume from.
    pub fn oldest_rv(&self) -> u64 {
        let writer = self.writer.lock();
        writer.oldest_rv(self.current.load().rv)
    }

    /// The recorded events after `rv`, or `None` when `rv` is older than the history reaches.
    pub fn history_since(&self, rv: u64) -> Option<Vec<Arc<Event>>> {
        let writer = self.writer.lock();
        let current = self.current.load().rv;
        if rv >= current {
            return Some(Vec::new());
        }
        let oldest = writer.history.front().map_or(current + 1, |e| e.rv);
        // Events rv+1..=current must all be in the ring.
        if rv + 1 < oldest {
            return None;
        }
        Some(
            writer
                .history
                .iter()
                .filter(|e| e.rv > rv)
                .cloned()
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(ns: &str, name: &str) -> Value {
        json!({"metadata": {"namespace": ns, "name": name}})
    }

    #[test]
    fn every_write_takes_the_next_rv_and_lists_are_ordered() {
        let store = Store::new(16, 16);
        let gr = GroupResource::new("g", "things");
        store
            .write(|t| {
                t.put(&gr, ObjectKey::new("b", "x"), obj("b", "x"))?;
                t.put(&gr, ObjectKey::new("a", "z"), obj("a", "z"))?;
                t.put(&gr, ObjectKey::new("a", "y"), obj("a", "y"))
            })
            .expect("write");
        let snap = store.snapshot();
        assert_eq!(snap.rv, 3);
        let names: Vec<_> = snap.list(&gr, None).map(|(k, _)| k.name.as_str()).collect();
        assert_eq!(names, ["y", "z", "x"]);
        let in_a: Vec<_> = snap
            .list(&gr, Some("a"))
            .map(|(k, _)| k.name.clone())
            .collect();
        assert_eq!(in_a, ["y", "z"]);
        let y = snap.get(&gr, &ObjectKey::new("a", "y")).expect("y");
        assert_eq!(y.value()["metadata"]["resourceVersion"], "3");
    }

    #[test]
    fn failed_write_changes_nothing() {
        let store = Store::new(16, 16);
        let gr = GroupResource::new("g", "things");
        let r: Result<(), _> = store.write(|t| {
            t.put(&gr, ObjectKey::new("", "a"), obj("", "a"))?;
            Err(ApiError::bad_request("no"))
        });
        assert!(r.is_err());
        assert_eq!(store.current_rv(), 0);
        assert_eq!(store.snapshot().count(&gr), 0);
    }

    #[test]
    fn history_replays_or_reports_too_old() {
        let store = Store::new(2, 16);
        let gr = GroupResource::new("g", "things");
        for name in ["a", "b", "c"] {
            store
                .write(|t| t.put(&gr, ObjectKey::new("", name), obj("", name)))
                .expect("write");
        }
        assert!(store.history_since(0).is_none());
        let since1: Vec<u64> = store
            .history_since(1)
            .expect("in range")
            .iter()
            .map(|e| e.rv)
            .collect();
        assert_eq!(since1, [2, 3]);
        assert!(store.history_since(3).expect("current").is_empty());
    }

    #[test]
    fn history_is_bounded_by_bytes_too() {
        let gr = GroupResource::new("g", "things");
        let one = |store: &Store, name: &str| {
            store
                .write(|t| t.put(&gr, ObjectKey::new("", name), obj("", name)))
                .expect("write");
        };
        let probe = Store::new(100, 16);
        one(&probe, "a");
        let size = probe
            .snapshot()
            .list(&gr, None)
            .map(|(_, o)| o.json.len())
            .sum::<usize>();
        let store = Store::new(100, 16).with_history_bytes(size * 2);
        for name in ["a", "b", "c", "d"] {
            one(&store, name);
        }
        let kept: Vec<u64> = store
            .history_since(2)
            .expect("kept")
            .iter()
            .map(|e| e.rv)
            .collect();
        assert_eq!(kept, [3, 4], "two objects' worth");
        assert!(store.history_since(1).is_none());
        let tiny = Store::new(100, 16).with_history_bytes(1);
        one(&tiny, "a");
        one(&tiny, "b");
        assert_eq!(
            tiny.history_since(1).map(|h| h.len()),
            Some(1),
            "the newest stays"
        );
    }

    #[test]
    fn state_at_any_kept_resource_version() {
        let store = Store::new(3, 16);
        let gr = GroupResource::new("g", "things");
        store
            .write(|t| {
                t.put(&gr, ObjectKey::new("", "a"), obj("", "a"))?;
                t.put(&gr, ObjectKey::new("", "b"), obj("", "b"))
            })
            .expect("write");
        store
            .write(|t| t.remove(&gr, &ObjectKey::new("", "a")))
            .expect("remove");
        let names = |rv| -> Vec<String> {
            let snap = store.snapshot_at(rv).expect("kept");
            snap.list(&gr, None).map(|(k, _)| k.name.clone()).collect()
        };
        assert_eq!(names(1), ["a"], "inside a transaction, rebuilt from events");
        assert_eq!(names(2), ["a", "b"]);
        assert_eq!(names(3), ["b"]);
        assert_eq!(store.snapshot_at(4).err(), Some(AtError::TooLarge(3)));
        store
            .write(|t| t.put(&gr, ObjectKey::new("", "c"), obj("", "c")))
            .expect("put");
        store
            .write(|t| t.put(&gr, ObjectKey::new("", "d"), obj("", "d")))
            .expect("put");
        // History now holds rv 3..=5, so rv 2 is the oldest readable state.
        assert_eq!(names(2), ["a", "b"]);
        assert_eq!(store.snapshot_at(1).err(), Some(AtError::TooOld(2)));
    }

    #[test]
    fn every_kept_state_rebuilds_across_checkpoints() {
        let store = Store::new(300, 16);
        let gr = GroupResource::new("g", "things");
        let mut states = vec![(0, Vec::new())];
        for i in 0..400u64 {
            let name = format!("o{}", i % 7);
            store
                .write(|t| match i % 3 {
                    2 => t.remove(&gr, &ObjectKey::new("", &name)).map(|_| ()),
                    _ => t
                        .put(&gr, ObjectKey::new("", &name), obj("", &name))
                        .map(|_| ()),
                })
                .expect("write");
            let snap = store.snapshot();
            let seen = snap
                .list(&gr, None)
                .map(|(k, o)| (k.name.clone(), o.rv))
                .collect::<Vec<_>>();
            states.push((snap.rv, seen));
        }
        let oldest = store.oldest_rv();
        assert!(oldest > 0, "the history was trimmed");
        for (rv, want) in states.iter().filter(|(rv, _)| *rv >= oldest) {
            let snap = store.snapshot_at(*rv).expect("kept");
            let got: Vec<_> = snap
                .list(&gr, None)
                .map(|(k, o)| (k.name.clone(), o.rv))
                .collect();
            assert_eq!(&got, want, "state at {rv}");
            assert_eq!(snap.rv, *rv);
        }
        assert!(store.writer.lock().checkpoints.len() <= 300 / CHECKPOINT_EVERY as usize + 1);
    }

    #[test]
    fn list_after_a_key_within_a_namespace() {
        let store = Store::new(16, 16);
        let gr = GroupResource::new("g", "things");
        store
            .write(|t| {
                for (ns, n) in [("a", "1"), ("b", "1"), ("b", "2"), ("b", "3"), ("c", "1")] {
                    t.put(&gr, ObjectKey::new(ns, n), obj(ns, n))?;
                }
                Ok(())
            })
            .expect("write");
        let snap = store.snapshot();
        let keys: Vec<_> = snap
            .list_after(&gr, Some("b"), Some(ObjectKey::new("b", "1")))
            .map(|(k, _)| k.name.clone())
            .collect();
        assert_eq!(keys, ["2", "3"]);
        let all: Vec<_> = snap
            .list_after(&gr, None, Some(ObjectKey::new("b", "3")))
            .map(|(k, _)| k.namespace.clone())
            .collect();
        assert_eq!(all, ["c"]);
        assert_eq!(snap.list_after(&gr, Some("b"), None).count(), 3);
    }

    /// A state put as bytes takes the next resourceVersion (stamped in when the bytes carry
    /// another), feeds the uid and owner indexes as a put does, and is parsed when read.
    #[rstest::rstest]
    #[case::carries_its_rv(r#"{"apiVersion":"g/v1","metadata":{"name":"c","ownerReferences":[{"uid":"u-owner"}],"resourceVersion":"2","uid":"u-child"}}"#)]
    #[case::carries_another(r#"{"apiVersion":"g/v1","metadata":{"name":"c","ownerReferences":[{"uid":"u-owner"}],"resourceVersion":"9","uid":"u-child"}}"#)]
    #[case::data_first(r#"{"apiVersion":"g/v1","data":{"uid":"x","metadata":{}},"metadata":{"name":"c","ownerReferences":[{"uid":"u-owner"}],"resourceVersion":"1","uid":"u-child"}}"#)]
    fn serialized_states_are_put_as_they_are(#[case] json: &str) {
        let store = Store::new(16, 16);
        let gr = GroupResource::new("g", "things");
        let key = ObjectKey::new("", "c");
        store
            .write(|t| t.put(&gr, ObjectKey::new("", "o"), obj("", "o")))
            .expect("write");
        let bytes = Bytes::copy_from_slice(json.as_bytes());
        let put = store
            .write(|t| t.put_serialized(&gr, key.clone(), bytes))
            .expect("put");
        assert_eq!(
            (put.rv, put.uid(), put.api_version()),
            (2, Some("u-child"), Some("g/v1"))
        );
        assert!(!put.has_tree());
        let snap = store.snapshot();
        assert_eq!(snap.locate_uid("u-child"), Some((gr.clone(), key.clone())));
        assert_eq!(snap.dependents_of("u-owner"), vec![(gr.clone(), key)]);
        let tree = put.value();
        assert_eq!(tree["metadata"]["resourceVersion"], "2");
        assert_eq!(tree["metadata"]["name"], "c");
        let events = store.history_since(1).expect("history");
        assert_eq!(events.len(), 1);
        assert_eq!(events[0].kind, EventType::Added);
    }

    #[test]
    fn uid_and_owner_indexes_follow_writes() {
        let store = Store::new(16, 16);
        let gr = GroupResource::new("g", "things");
        let owner = json!({"metadata": {"name": "o", "uid": "u-owner"}});
        let child = json!({"metadata": {"name": "c", "uid": "u-child",
            "ownerReferences": [{"uid": "u-owner", "name": "o", "kind": "T", "apiVersion": "g/v1"}]}});
        store
            .write(|t| {
                t.put(&gr, ObjectKey::new("", "o"), owner.clone())?;
                t.put(&gr, ObjectKey::new("", "c"), child.clone())
            })
            .expect("write");
        let snap = store.snapshot();
        assert_eq!(
            snap.locate_uid("u-owner"),
            Some((gr.clone(), ObjectKey::new("", "o")))
        );
        assert_eq!(
            snap.dependents_of("u-owner"),
            vec![(gr.clone(), ObjectKey::new("", "c"))]
        );
        let mut orphaned = child.clone();
        orphaned["metadata"]["ownerReferences"] = json!([]);
        store
            .write(|t| t.put(&gr, ObjectKey::new("", "c"), orphaned))
            .expect("put");
        assert!(store.snapshot().dependents_of("u-owner").is_empty());
        store
            .write(|t| t.remove(&gr, &ObjectKey::new("", "o")))
            .expect("rm");
        assert!(store.snapshot().locate_uid("u-owner").is_none());
    }

    /// Writes the cluster-scoped object `name` into `gr`.
    fn put_named(store: &Store, gr: &GroupResource, name: &str) {
        store
            .write(|t| t.put(gr, ObjectKey::new("", name), obj("", name)))
            .expect("put");
    }

    #[test]
    fn restore_writes_the_difference_forward_and_only_once() {
        let store = Store::new(64, 64);
        let gr = GroupResource::new("g", "things");
        let put = |name: &str| put_named(&store, &gr, name);
        put("kept");
        put("changed");
        put("removed");
        let then = store.snapshot();
        put("changed");
        put("added");
        store
            .write(|t| t.remove(&gr, &ObjectKey::new("", "removed")))
            .expect("remove");
        let rv = store.current_rv();
        let events = store.write(|t| t.restore(&then)).expect("restore");
        let seen: Vec<(EventType, &str, u64)> = events
            .iter()
            .map(|e| (e.kind, e.key.name.as_str(), e.rv))
            .collect();
        assert_eq!(
            seen,
            [
                (EventType::Deleted, "added", rv + 1),
                (EventType::Modified, "changed", rv + 2),
                (EventType::Added, "removed", rv + 3),
            ]
        );
        let now = store.snapshot();
        let names: Vec<_> = now.list(&gr, None).map(|(k, _)| k.name.clone()).collect();
        assert_eq!(names, ["changed", "kept", "removed"]);
        let kept = now.get(&gr, &ObjectKey::new("", "kept")).expect("kept");
        assert_eq!(kept.rv, 1, "unchanged objects keep their state");
        let back = now.get(&gr, &ObjectKey::new("", "removed")).expect("back");
        assert_eq!(
            back.value()["metadata"]["resourceVersion"],
            (rv + 3).to_string()
        );
        let again = store.write(|t| t.restore(&then)).expect("restore again");
        assert!(again.is_empty(), "restored states count as the snapshot's");
        assert_eq!(store.current_rv(), rv + 3);
    }

    /// The first subscription opens the channel: what was written before it is in the
    /// history taken after it, what is written after it is received, nothing in between.
    #[test]
    fn the_first_subscription_misses_nothing() {
        let store = Store::new(16, 16);
        let gr = GroupResource::new("g", "things");
        let put = |name: &str| put_named(&store, &gr, name);
        put("before");
        assert_eq!(store.watcher_count(), 0);
        let mut rx = store.subscribe();
        let history = store.history_since(0).expect("history");
        put("after");
        let seen: Vec<u64> = history.iter().map(|e| e.rv).collect();
        assert_eq!(seen, [1]);
        assert_eq!(rx.try_recv().expect("the later write").rv, 2);
        assert!(rx.try_recv().is_err());
        assert_eq!(store.watcher_count(), 1);
    }

    #[test]
    fn delete_event_carries_the_deletion_rv() {
        let store = Store::new(16, 16);
        let mut rx = store.subscribe();
        let gr = GroupResource::new("g", "things");
        let key = ObjectKey::new("", "a");
        store
            .write(|t| t.put(&gr, key.clone(), obj("", "a")))
            .expect("put");
        store.write(|t| t.remove(&gr, &key)).expect("remove");
        let added = rx.try_recv().expect("added");
        let deleted = rx.try_recv().expect("deleted");
        assert_eq!(added.kind, EventType::Added);
        assert_eq!(deleted.kind, EventType::Deleted);
        assert_eq!(deleted.object.value()["metadata"]["resourceVersion"], "2");
        assert_eq!(store.snapshot().count(&gr), 0);
    }
}
