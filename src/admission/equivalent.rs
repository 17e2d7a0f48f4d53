//! `matchPolicy: Equivalent`, which webhooks and policies share: a request also matches a
//! webhook or policy whose rules name another served version of its resource, which then sees
//! the request as if made through that version, its objects converted there.

use std::sync::Arc;

use serde_json::Value;

use super::Attributes;
use crate::error::ApiError;
use crate::registry::resource::ApiResource;

/// The first other served version of the request's resource through which `matches` selects
/// the request.
pub fn first_match(
    attrs: &Attributes<'_>,
    matches: impl Fn(&Attributes<'_>) -> bool,
) -> Option<Arc<ApiResource>> {
    let res = attrs.resource;
    attrs
        .registry
        .served()
        .filter(|r| {
            r.group() == res.group && r.plural() == res.plural && r.version() != res.version
        })
        .map(|r| r.resource())
        .find(|r| matches(&as_version(attrs, r, attrs.old_object)))
        .cloned()
}

/// The request as if made through `target`, with `old` as its old object.
fn as_version<'a>(
    attrs: &Attributes<'a>,
    target: &'a ApiResource,
    old: Option<&'a Value>,
) -> Attributes<'a> {
    Attributes {
        store: attrs.store,
        ctx: attrs.ctx,
        resource: target,
        request_resource: attrs.request_resource,
        subresource: attrs.subresource,
        operation: attrs.operation,
        namespace: attrs.namespace,
        name: attrs.name,
        old_object: old,
        registry: attrs.registry.clone(),
        authorization: attrs.authorization,
    }
}

/// A request's objects converted to another version of its resource.
pub struct Converted {
    /// The object, in the target version.
    pub object: Option<Value>,
    /// The old object, in the target version.
    pub old: Option<Value>,
}

impl Converted {
    /// Converts the object and the old object of a request to `target`.
    pub async fn new(
        attrs: &Attributes<'_>,
        target: &ApiResource,
        object: Option<&Value>,
    ) -> Result<Converted, ApiError> {
        let codec = &attrs.resource.codec;
        let mut out = Converted {
            object: None,
            old: None,
        };
        if let Some(o) = object {
            out.object = Some(codec.convert_to(o.clone(), &target.codec).await?);
        }
        if let Some(o) = attrs.old_object {
            out.old = Some(codec.convert_to(o.clone(), &target.codec).await?);
        }
        Ok(out)
    }

    /// The request as if made through `target`, with these converted objects.
    pub fn attributes<'a>(
        &'a self,
        attrs: &Attributes<'a>,
        target: &'a ApiResource,
    ) -> Attributes<'a> {
        as_version(attrs, target, self.old.as_ref())
    }
}
