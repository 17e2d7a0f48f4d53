//! Conversion at the storage edge: objects flow through the request path in the version the
//! request names, and are stored in the resource's storage version.
//!
//! Each served resource version has one [`Codec`]: [`Codec::to_storage`] converts what a write
//! is about to commit, [`Codec::from_storage`] what an update starts from, and
//! [`Codec::encode`] turns a stored object into the bytes a reader in this version gets. The
//! bytes are cached on the stored object per codec, so an object (or a watch event) is
//! serialised once per version it is read in, never once per reader or per watcher; in the
//! storage version the stored bytes themselves are served.
//!
//! A [`Converter`] does the version change itself: [`none::NoneConverter`] (the CRD `None`
//! strategy: only `apiVersion` changes) today. Conversions are batched (a list is one call) and
//! may await, so a webhook converter fits the same seam. After a conversion the codec applies the
//! target version's read-time defaulting, as the apiserver defaults what it decodes from
//! storage: objects written before a CRD schema gained a default are defaulted as they are read
//! (and not written back).

pub mod none;
pub mod webhook;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use serde_json::{json, Value};

use crate::error::ApiError;
use crate::registry::strategy::Strategy;
use crate::store::{StoredObject, Tree};

/// Converts objects of one resource between its versions.
pub trait Converter: Send + Sync {
    /// Converts every object to the apiVersion `to` (`group/version`), in order. A list, or a
    /// burst of watch events, is one call.
    fn convert<'a>(
        &'a self,
        objects: Vec<Value>,
        to: &'a str,
    ) -> BoxFuture<'a, Result<Vec<Value>, ApiError>>;
}

/// The storage edge of one served resource version. See the module documentation.
pub struct Codec {
    /// Keys this codec's encodings in the per-object cache.
    id: u64,
    /// The apiVersion requests through this resource version use.
    api_version: String,
    /// The apiVersion objects are stored in.
    storage_api_version: String,
    converter: Arc<dyn Converter>,
    /// Objects stored before this resourceVersion may predate a default of the schema (the
    /// resourceVersion of the CRD change that compiled it); reads default them.
    defaults_since: Option<u64>,
    /// This version's strategy: prunes what a conversion to this version produced, applies
    /// read-time defaults.
    strategy: Arc<dyn Strategy>,
    /// The storage version's strategy: prunes what a conversion to storage produced.
    storage_strategy: Arc<dyn Strategy>,
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

impl Codec {
    /// A codec between `api_version` (whose strategy is `strategy`) and `storage_api_version`
    /// (whose strategy is `storage_strategy`).
    pub fn new(
        api_version: String,
        storage_api_version: String,
        converter: Arc<dyn Converter>,
        defaults_since: Option<u64>,
        strategy: Arc<dyn Strategy>,
        storage_strategy: Arc<dyn Strategy>,
    ) -> Codec {
        Codec {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            api_version,
            storage_api_version,
            converter,
            defaults_since,
            strategy,
            storage_strategy,
        }
    }

    /// A codec for a resource served only in its storage version, with no read-time defaults
    /// (built-in kinds): every read serves the stored bytes.
    pub fn identity(api_version: String, strategy: Arc<dyn Strategy>) -> Codec {
        Codec::new(
            api_version.clone(),
            api_version,
            Arc::new(none::NoneConverter),
            None,
            strategy.clone(),
            strategy,
        )
    }

    /// The apiVersion of this resource version.
    pub fn api_version(&self) -> &str {
        &self.api_version
    }

    /// Whether this version is not the storage version, so that reads convert (objects left
    /// in an earlier storage version aside): batching conversions is worth it only then.
    pub fn serves_another_version(&self) -> bool {
        self.api_version != self.storage_api_version
    }

    /// Whether a stored object reads exactly as stored in this version.
    fn is_identity_for(&self, obj: &StoredObject) -> bool {
        !self.converts(obj) && !self.needs_defaults(obj)
    }

    /// Whether a stored object is in another version than this one: the storage version, or
    /// the one it was stored in before the storage version changed.
    fn converts(&self, obj: &StoredObject) -> bool {
        obj.api_version() != Some(self.api_version.as_str())
    }

    fn needs_defaults(&self, obj: &StoredObject) -> bool {
        self.defaults_since.is_some_and(|since| obj.rv < since)
    }

    /// Converts an object about to be stored from this version to the storage version, pruned
    /// against the storage version's schema.
    pub async fn to_storage(&self, obj: Value) -> Result<Value, ApiError> {
        if self.api_version == self.storage_api_version {
            return Ok(obj);
        }
        let mut out = self
            .converter
            .convert(vec![obj], &self.storage_api_version)
            .await?;
        let mut obj = out
            .pop()
            .ok_or_else(|| ApiError::internal("conversion returned no object"))?;
        self.storage_strategy.prune_converted(&mut obj);
        Ok(obj)
    }

    /// An object of this version as another version of the same resource shows it
    /// (admission webhooks registered for that version, `matchPolicy: Equivalent`): converted,
    /// pruned against the target's schema and defaulted.
    pub async fn convert_to(&self, obj: Value, target: &Codec) -> Result<Value, ApiError> {
        if self.api_version == target.api_version {
            return Ok(obj);
        }
        let mut out = self
            .converter
            .convert(vec![obj], &target.api_version)
            .await?;
        let mut obj = out
            .pop()
            .ok_or_else(|| ApiError::internal("conversion returned no object"))?;
        target.strategy.prune_converted(&mut obj);
        target.strategy.default_on_read(&mut obj);
        Ok(obj)
    }

    /// Stored objects as this version shows them (for updates, Tables, selectors on
    /// converted fields): converted, pruned against this version's schema, then defaulted.
    /// Only the objects in another version go to the converter, in one batch.
    pub async fn from_storage(&self, objs: &[Arc<StoredObject>]) -> Result<Vec<Value>, ApiError> {
        let mut out: Vec<Value> = objs.iter().map(|o| o.value().clone()).collect();
        let to_convert: Vec<Value> = objs
            .iter()
            .filter(|o| self.converts(o))
            .map(|o| o.value().clone())
            .collect();
        if !to_convert.is_empty() {
            let count = to_convert.len();
            let converted = self
                .converter
                .convert(to_convert, &self.api_version)
                .await?;
            if converted.len() != count {
                return Err(ApiError::internal(
                    "conversion returned a different number of objects",
                ));
            }
            let slots = out.iter_mut().zip(objs).filter(|(_, o)| self.converts(o));
            for ((slot, _), mut v) in slots.zip(converted) {
                self.strategy.prune_converted(&mut v);
                self.strategy.default_on_read(&mut v);
                *slot = v;
            }
        }
        for (v, o) in out.iter_mut().zip(objs) {
            if !self.converts(o) && self.needs_defaults(o) {
                self.strategy.default_on_read(v);
            }
        }
        Ok(out)
    }

    /// One stored object as this version shows it, the stored tree itself when it reads as
    /// stored (the common case: updates and deletes then copy nothing).
    pub async fn view(&self, obj: &Arc<StoredObject>) -> Result<Tree, ApiError> {
        if self.is_identity_for(obj) {
            return Ok(obj.value());
        }
        self.from_storage_one(obj).await.map(Tree::from)
    }

    /// One stored object as this version shows it.
    pub async fn from_storage_one(&self, obj: &Arc<StoredObject>) -> Result<Value, ApiError> {
        let mut out = self.from_storage(std::slice::from_ref(obj)).await?;
        out.pop()
            .ok_or_else(|| ApiError::internal("conversion returned no object"))
    }

    /// The bytes a reader in this version gets for a stored object.
    pub async fn encode(&self, obj: &Arc<StoredObject>) -> Result<Bytes, ApiError> {
        if let Some(bytes) = self.cached(obj) {
            return Ok(bytes);
        }
        let mut out = self.encode_all(std::slice::from_ref(obj)).await?;
        out.pop()
            .ok_or_else(|| ApiError::internal("conversion returned no object"))
    }

    /// [`Codec::encode`] for many objects, converting those not cached yet in one batch.
    pub async fn encode_all(&self, objs: &[Arc<StoredObject>]) -> Result<Vec<Bytes>, ApiError> {
        let mut out: Vec<Option<Bytes>> = objs.iter().map(|o| self.cached(o)).collect();
        let missing: Vec<Arc<StoredObject>> = objs
            .iter()
            .zip(&out)
            .filter(|(_, b)| b.is_none())
            .map(|(o, _)| o.clone())
            .collect();
        if !missing.is_empty() {
            let converted = self.from_storage(&missing).await?;
            let mut fresh = missing.iter().zip(converted).map(|(o, v)| {
                let bytes = Bytes::from(crate::typed::order::to_vec(&v));
                o.cache_encoding(self.id, bytes.clone());
                bytes
            });
            for slot in out.iter_mut().filter(|b| b.is_none()) {
                *slot = fresh.next();
            }
        }
        Ok(out.into_iter().map(Option::unwrap_or_default).collect())
    }

    /// The bytes without converting: the stored ones, or a cached encoding.
    fn cached(&self, obj: &StoredObject) -> Option<Bytes> {
        if self.is_identity_for(obj) {
            return Some(obj.json.clone());
        }
        obj.cached_encoding(self.id)
    }

    /// The key of this codec's entries in per-object and per-event caches; 0 when it serves
    /// stored bytes unchanged for this object.
    pub fn cache_key(&self, obj: &StoredObject) -> u64 {
        if self.is_identity_for(obj) {
            0
        } else {
            self.id
        }
    }
}

/// Sets `apiVersion` on every object: the whole of the `None` conversion strategy.
pub fn set_api_version(objects: &mut [Value], api_version: &str) {
    for o in objects {
        o["apiVersion"] = json!(api_version);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{GroupResource, ObjectKey, Store};

    struct Defaults;

    impl Strategy for Defaults {
        fn default_on_read(&self, obj: &mut Value) -> bool {
            obj["spec"]["defaulted"] = json!(true);
            true
        }
    }

    fn stored(value: Value) -> Arc<StoredObject> {
        let store = Store::new(4, 4);
        let gr = GroupResource::new("g", "things");
        store
            .write(|t| t.put(&gr, ObjectKey::new("", "a"), value))
            .expect("stored")
    }

    #[tokio::test]
    async fn storage_version_reads_serve_the_stored_bytes() {
        let obj = stored(json!({"apiVersion": "g/v1", "metadata": {"name": "a"}}));
        let codec = Codec::identity("g/v1".into(), Arc::new(Defaults));
        let bytes = codec.encode(&obj).await.expect("encodes");
        assert_eq!(
            bytes.as_ptr(),
            obj.json.as_ptr(),
            "no copy, no serialisation"
        );
        assert_eq!(codec.cache_key(&obj), 0);
    }

    #[tokio::test]
    async fn other_versions_convert_once_and_cache() {
        let obj = stored(json!({"apiVersion": "g/v1", "metadata": {"name": "a"}}));
        let codec = Codec::new(
            "g/v2".into(),
            "g/v1".into(),
            Arc::new(none::NoneConverter),
            None,
            Arc::new(Defaults),
            Arc::new(Defaults),
        );
        let first = codec.encode(&obj).await.expect("encodes");
        let v: Value = serde_json::from_slice(&first).expect("json");
        assert_eq!(v["apiVersion"], "g/v2");
        let second = codec.encode(&obj).await.expect("encodes");
        assert_eq!(first.as_ptr(), second.as_ptr(), "served from the cache");
        let back = codec
            .to_storage(json!({"apiVersion": "g/v2"}))
            .await
            .expect("converts");
        assert_eq!(back["apiVersion"], "g/v1");
    }

    struct Prunes;

    impl Strategy for Prunes {
        fn prune_converted(&self, obj: &mut Value) {
            if let Some(spec) = obj["spec"].as_object_mut() {
                spec.remove("unknown");
            }
        }
    }

    #[tokio::test]
    async fn conversions_are_pruned_by_the_target_version() {
        let codec = Codec::new(
            "g/v2".into(),
            "g/v1".into(),
            Arc::new(none::NoneConverter),
            None,
            Arc::new(Prunes),
            Arc::new(Prunes),
        );
        let stored_v1 = codec
            .to_storage(json!({"apiVersion": "g/v2", "spec": {"unknown": 1, "kept": 2}}))
            .await
            .expect("converts");
        assert_eq!(
            stored_v1,
            json!({"apiVersion": "g/v1", "spec": {"kept": 2}})
        );
        // An object stored under an earlier storage version converts even where the codec's
        // own version is the storage version.
        let old = stored(json!({"apiVersion": "g/v0", "metadata": {"name": "a"},
            "spec": {"unknown": 1}}));
        let identity = Codec::identity("g/v1".into(), Arc::new(Prunes));
        let v = identity.from_storage_one(&old).await.expect("reads");
        assert_eq!(v["apiVersion"], "g/v1");
        assert_eq!(v["spec"], json!({}));
        assert_ne!(identity.cache_key(&old), 0);
    }

    #[tokio::test]
    async fn objects_older_than_a_default_are_defaulted_on_read() {
        let obj = stored(json!({"apiVersion": "g/v1", "metadata": {"name": "a"}}));
        let codec = Codec::new(
            "g/v1".into(),
            "g/v1".into(),
            Arc::new(none::NoneConverter),
            Some(obj.rv + 1),
            Arc::new(Defaults),
            Arc::new(Defaults),
        );
        let v = codec.from_storage_one(&obj).await.expect("reads");
        assert_eq!(v["spec"]["defaulted"], true);
        assert!(
            obj.value()["spec"].is_null(),
            "the stored object is unchanged"
        );
    }
}
