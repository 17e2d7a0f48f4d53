//! `DELETE` of one object and of a collection (deletecollection).

use warp::http::StatusCode;
use warp::reply::Response;

use bytes::Bytes;

use super::options::Filter;
use super::read::{encode_list, partial_list, ListMeta};
use super::resource::Endpoint;
use crate::error::ApiError;
use crate::registry::store::{self as rest, DeleteOptions, Deleted};
use crate::store::ObjectKey;

/// `DELETE` one object: the object in its last (or pending) state, or a `Status` where the
/// resource answers deletes that way.
pub async fn delete(ep: &Endpoint<'_>, opts: &DeleteOptions) -> Result<Response, ApiError> {
    let res = &ep.res;
    match rest::delete(ep.state, ep.ctx, res, ep.namespace(), ep.name(), opts).await? {
        Deleted::Gone(obj) if !res.delete_returns_object => {
            let status = rest::deleted_status(res, &obj);
            ep.respond_json(StatusCode::OK, Bytes::from(status.to_string()))
        }
        Deleted::Gone(obj) | Deleted::Pending(obj) => ep.respond(StatusCode::OK, &obj).await,
    }
}

/// `DELETE` a collection: every object the filter selects, one by one; the list of what was
/// deleted (or is now pending).
pub async fn delete_collection(
    ep: &Endpoint<'_>,
    opts: &DeleteOptions,
) -> Result<Response, ApiError> {
    let res = &ep.res;
    let filter = Filter::from_query(res, ep.info, ep.req)?;
    let keys: Vec<ObjectKey> = ep
        .state
        .store
        .snapshot()
        .list(&res.gr, filter.namespace.as_deref())
        .filter(|(k, o)| filter.matches(k, o))
        .map(|(k, _)| k.clone())
        .collect();
    let mut deleted = Vec::new();
    for key in keys {
        match rest::delete(ep.state, ep.ctx, res, &key.namespace, &key.name, opts).await {
            Ok(Deleted::Gone(o) | Deleted::Pending(o)) => deleted.push(o),
            Err(e) if e.code == 404 => {}
            Err(e) => return Err(e),
        }
    }
    let meta = ListMeta {
        rv: ep.state.store.current_rv(),
        ..Default::default()
    };
    // After the deletes, as the apiserver transforms the list it deleted.
    if let Some(only) = ep.output.metadata {
        if !only.list {
            return Err(only.wrong_shape(res, true));
        }
        return ep.respond_json(StatusCode::OK, partial_list(only, &deleted, &meta));
    }
    let body = encode_list(res, &meta, &deleted).await?.concat();
    ep.respond_json(StatusCode::OK, body)
}
