//! Conversion between the version a request names and the version objects are stored in.
//!
//! Custom resources are stored in their CRD's storage version; with the `None` conversion
//! strategy only `apiVersion` differs between versions. Objects written before their CRD last
//! changed are defaulted as they are read (and not written back), as the apiserver defaults
//! what it decodes from storage.

use bytes::Bytes;
use serde_json::{json, Value};

use crate::discovery::ApiResource;
use crate::store::StoredObject;

/// An object as the requested version shows it. Custom resources are stored in their storage
/// version; with the `None` conversion strategy only `apiVersion` differs between versions.
/// Objects written before their CRD last changed are defaulted as they are read (and not
/// written back), as the apiserver defaults what it decodes from storage.
pub fn encode_object(res: &ApiResource, obj: &StoredObject) -> Bytes {
    if res.version == res.storage_version && !stale(res, obj) {
        return obj.json.clone();
    }
    Bytes::from(serde_json::to_vec(&versioned(res, obj)).unwrap_or_default())
}

/// Whether an object predates its CRD's last change (and so maybe a default).
/// Only schemas with defaults can make an older object read differently, so reads of every
/// other resource keep serving the stored bytes.
fn stale(res: &ApiResource, obj: &StoredObject) -> bool {
    res.schema.as_ref().is_some_and(|s| s.root().sub_defaults)
        && res
            .crd
            .as_ref()
            .is_some_and(|c| obj.rv < c.resource_version)
}

/// [`encode_object`]'s view as a tree.
pub fn versioned(res: &ApiResource, obj: &StoredObject) -> Value {
    let mut v = obj.value.clone();
    if stale(res, obj) {
        res.strategy.default_on_read(&mut v);
    }
    if res.version != res.storage_version {
        v["apiVersion"] = json!(res.api_version());
    }
    v
}

/// The `apiVersion` objects of a resource are stored in.
pub fn storage_api_version(res: &ApiResource) -> String {
    if res.group.is_empty() {
        res.storage_version.clone()
    } else {
        format!("{}/{}", res.group, res.storage_version)
    }
}
