//! `GET` of one object and of a collection (list): the snapshot the options ask for, filtered,
//! one page of it, as JSON or as a Table.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use serde_json::{json, Value};
use warp::http::StatusCode;
use warp::reply::Response;

use super::accept::{Format, MetadataOnly};
use super::list_body::ListBody;
use super::negotiation::json_value;
use super::options::{self, ContinueToken, Filter, ListOptions, Match};
use super::resource::Endpoint;
use crate::discovery::ApiResource;
use crate::error::ApiError;
use crate::registry::resource::BodyCodec;
use crate::registry::store as rest;
use crate::state::State;
use crate::store::{Snapshot, StoredObject};

/// `GET` one object (or its `/status`, which shows the whole object).
pub async fn get(ep: &Endpoint<'_>) -> Result<Response, ApiError> {
    let obj = rest::get(ep.state, &ep.res, ep.namespace(), ep.name())?;
    ep.respond(StatusCode::OK, &obj).await
}

/// `metadata` of a list response.
#[derive(Default)]
pub struct ListMeta {
    /// The resourceVersion the list reflects.
    pub rv: u64,
    /// The token of the next page, if any.
    pub continue_token: Option<String>,
    /// How many items the following pages hold (known only without selectors).
    pub remaining_item_count: Option<usize>,
}

/// One page of a list.
struct Page {
    items: Vec<Arc<StoredObject>>,
    meta: ListMeta,
}

/// `LIST`: the snapshot the options ask for, filtered, one page of it.
pub async fn list(ep: &Endpoint<'_>) -> Result<Response, ApiError> {
    let opts = ListOptions::parse(&ep.req.query, false)?;
    let filter = Filter::from_query(&ep.res, ep.info, ep.req)?;
    if let Some(only) = ep.output.metadata.filter(|m| !m.list) {
        return Err(only.wrong_shape(&ep.res, true));
    }
    let page = read_page(ep.state, &ep.res, &opts, &filter).await?;
    if let Some(only) = ep.output.metadata {
        return ep.respond_json(StatusCode::OK, metadata_list(only, &page));
    }
    if let Some(include) = ep.output.table {
        let shown = ep.res.codec.from_storage(&page.items).await?;
        let refs: Vec<&Value> = shown.iter().collect();
        let meta = &page.meta;
        let mut table = ep
            .res
            .table
            .table(&refs, &meta.rv.to_string(), include, true);
        if let Some(c) = &meta.continue_token {
            table["metadata"]["continue"] = json!(c);
        }
        if let Some(n) = meta.remaining_item_count {
            table["metadata"]["remainingItemCount"] = json!(n);
        }
        return Ok(json_value(StatusCode::OK, &table));
    }
    let body = encode_list(&ep.res, &page.meta, &page.items).await?;
    if ep.output.format == Format::Json {
        return Ok(body.into_response(StatusCode::OK));
    }
    ep.respond_json(StatusCode::OK, body.concat())
}

/// A page as a `PartialObjectMetadataList` (typed: no `continue` when there is no next page).
fn metadata_list(only: MetadataOnly, page: &Page) -> Bytes {
    partial_list(only, &page.items, &page.meta)
}

/// A `PartialObjectMetadataList` of these objects.
pub fn partial_list(only: MetadataOnly, objects: &[Arc<StoredObject>], list: &ListMeta) -> Bytes {
    let items: Vec<Value> = objects.iter().map(|o| only.partial(&o.value())).collect();
    let mut meta = json!({"resourceVersion": list.rv.to_string()});
    if let Some(c) = &list.continue_token {
        meta["continue"] = json!(c);
    }
    if let Some(n) = list.remaining_item_count {
        meta["remainingItemCount"] = json!(n);
    }
    let list = json!({
        "apiVersion": only.api_version(),
        "kind": "PartialObjectMetadataList",
        "metadata": meta,
        "items": items,
    });
    Bytes::from(crate::typed::order::to_vec(&list))
}

async fn read_page(
    state: &State,
    res: &ApiResource,
    opts: &ListOptions,
    filter: &Filter,
) -> Result<Page, ApiError> {
    let (snap, after) = match &opts.continue_token {
        Some(token) => {
            let snap = match token.rv {
                Some(rv) => state
                    .store
                    .snapshot_at(rv)
                    .map_err(|_| options::continue_expired(token))?,
                None => state.store.snapshot(),
            };
            (snap, Some(token.after.clone()))
        }
        None => (list_snapshot(state, opts).await?, None),
    };
    // A list from "0" is served from the watch cache, which ignores limit.
    let limit = if opts.resource_version == "0" {
        0
    } else {
        opts.limit
    };
    let mut matching = snap
        .list_after(&res.gr, filter.namespace.as_deref(), after)
        .filter(|(k, o)| filter.matches(k, o));
    let mut items = Vec::new();
    let mut last = None;
    for (key, obj) in matching.by_ref() {
        items.push(obj.clone());
        last = Some(key);
        if limit > 0 && items.len() == limit {
            break;
        }
    }
    let mut meta = ListMeta {
        rv: snap.rv,
        ..Default::default()
    };
    if limit > 0 && items.len() == limit {
        let remaining = matching.count();
        if remaining > 0 {
            if let Some(key) = last {
                meta.continue_token = Some(
                    ContinueToken {
                        rv: Some(snap.rv),
                        after: key.clone(),
                    }
                    .encode(),
                );
            }
            // Like etcd, a count is only known without selectors.
            if filter.labels.is_empty() && filter.fields.is_empty() {
                meta.remaining_item_count = Some(remaining);
            }
        }
    }
    Ok(Page { items, meta })
}

/// A list body assembled from the items' serialisations in the resource's version (converted
/// in one batch where they are not cached).
pub async fn encode_list(
    res: &ApiResource,
    meta: &ListMeta,
    items: &[Arc<StoredObject>],
) -> Result<ListBody, ApiError> {
    let encoded = res.codec.encode_all(items).await?;
    let quoted = |s: &str| json!(s).to_string();
    let (head, tail) = if res.decoding == BodyCodec::Unstructured {
        // An UnstructuredList is a map: its keys sorted. It always carries `continue`, empty on
        // the last page.
        let mut list_meta = json!({"resourceVersion": meta.rv.to_string()});
        list_meta["continue"] = json!(meta.continue_token.as_deref().unwrap_or(""));
        if let Some(n) = meta.remaining_item_count {
            list_meta["remainingItemCount"] = json!(n);
        }
        let head = format!(
            "{{\"apiVersion\":{},\"items\":[",
            quoted(&res.api_version())
        );
        let tail = format!(
            "],\"kind\":{},\"metadata\":{list_meta}}}",
            quoted(&res.list_kind)
        );
        (head, tail)
    } else {
        // A typed list in Go's field order: kind, apiVersion, metadata (ListMeta's order), items.
        let mut list_meta = format!("{{\"resourceVersion\":{}", quoted(&meta.rv.to_string()));
        if let Some(c) = &meta.continue_token {
            list_meta.push_str(&format!(",\"continue\":{}", quoted(c)));
        }
        if let Some(n) = meta.remaining_item_count {
            list_meta.push_str(&format!(",\"remainingItemCount\":{n}"));
        }
        let head = format!(
            "{{\"kind\":{},\"apiVersion\":{},\"metadata\":{list_meta}}},\"items\":[",
            quoted(&res.list_kind),
            quoted(&res.api_version())
        );
        (head, "]}".to_string())
    };
    Ok(ListBody::new(Bytes::from(head), encoded, Bytes::from(tail)))
}

/// The snapshot a list without a continue token reads, by `resourceVersion` and
/// `resourceVersionMatch`.
async fn list_snapshot(state: &State, opts: &ListOptions) -> Result<Arc<Snapshot>, ApiError> {
    match (opts.resource_version()?, opts.resource_version_match) {
        (Some(rv), Some(Match::Exact)) => {
            wait_for_resource_version(state, rv).await?;
            state.store.snapshot_at(rv).map_err(|_| {
                ApiError::gone("The resourceVersion for the provided list is too old.")
            })
        }
        (Some(rv), _) => {
            wait_for_resource_version(state, rv).await?;
            Ok(state.store.snapshot())
        }
        (None, _) => Ok(state.store.snapshot()),
    }
}

/// Waits (up to 3 s, like the watch cache) until the store has reached `rv`; then a read "not
/// older than" it can be served. Past that, the apiserver's 504.
pub async fn wait_for_resource_version(state: &State, rv: u64) -> Result<(), ApiError> {
    if state.store.current_rv() >= rv {
        return Ok(());
    }
    let mut events = state.store.subscribe();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(3);
    while state.store.current_rv() < rv {
        match tokio::time::timeout_at(deadline, events.recv()).await {
            Ok(Ok(_)) | Ok(Err(tokio::sync::broadcast::error::RecvError::Lagged(_))) => {}
            Ok(Err(_)) | Err(_) => break,
        }
    }
    let current = state.store.current_rv();
    if current >= rv {
        return Ok(());
    }
    let mut err = ApiError::timeout(format!(
        "Too large resource version: {rv}, current: {current}"
    ));
    if let Some(d) = err.details.as_mut() {
        d.causes.push(crate::error::StatusCause {
            reason: "ResourceVersionTooLarge".into(),
            message: "Too large resource version".into(),
            field: String::new(),
        });
    }
    Err(err)
}
