//! Watch streams: the initial state or a replay from a resourceVersion, then live events, with
//! selectors applied the way the watch cache applies them (an object that stops matching is
//! DELETED for the watcher, one that starts matching is ADDED). A watcher that falls behind or
//! asks for a resourceVersion older than the history gets a 410 Expired ERROR event, never a gap.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use serde_json::json;
use tokio::sync::{broadcast, mpsc};
use tokio_stream::wrappers::ReceiverStream;
use warp::http::{self, StatusCode};
use warp::reply::Response;

use super::negotiation::table_request;
use super::options::{Filter, ListOptions};
use super::read::wait_for_resource_version;
use super::resource::Endpoint;
use crate::conversion::encode_object;
use crate::error::ApiError;
use crate::registry::catalog::ApiResource;
use crate::registry::table::{Columns, IncludeObject};
use crate::state::State;
use crate::store::{Event, EventType, StoredObject};

/// What a watch request asked for.
pub struct WatchRequest {
    /// The resource watched.
    pub resource: Arc<ApiResource>,
    /// Namespace / name / selector filter.
    pub filter: Filter,
    /// Where the stream starts.
    pub start: Start,
    /// Send each object as a one-row Table (`kubectl get -w`).
    pub table: Option<(Arc<Columns>, IncludeObject)>,
    /// `allowWatchBookmarks=true`.
    pub bookmarks: bool,
    /// `timeoutSeconds`.
    pub timeout: Option<Duration>,
}

/// Where a watch starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Start {
    /// Synthetic ADDED events for the current state first (a legacy watch from "" or "0", or
    /// `sendInitialEvents=true`); with `end_bookmark`, a BOOKMARK annotated
    /// `k8s.io/initial-events-end` follows them.
    Initial {
        /// Send the end-of-initial-events BOOKMARK.
        end_bookmark: bool,
    },
    /// Every event after this resourceVersion, replayed from the history.
    After(u64),
}

/// The most bytes of queued events sent as one chunk.
const MAX_CHUNK: usize = 256 * 1024;

/// One line of a watch stream.
fn frame(kind: &str, object: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(object.len() + 32);
    out.extend_from_slice(b"{\"type\":\"");
    out.extend_from_slice(kind.as_bytes());
    out.extend_from_slice(b"\",\"object\":");
    out.extend_from_slice(object);
    out.extend_from_slice(b"}\n");
    Bytes::from(out)
}

fn error_frame(err: &ApiError) -> Bytes {
    frame(
        "ERROR",
        &serde_json::to_vec(&err.to_status()).unwrap_or_default(),
    )
}

/// The 410 a watcher gets when the events it needs are no longer available.
pub fn too_old(requested: u64, oldest: u64) -> ApiError {
    ApiError::gone(format!("too old resource version: {requested} ({oldest})"))
}

/// `GET ...?watch=true`: parses the options, waits for a resourceVersion the store has not
/// reached yet (like the watch cache, rather than skip every event up to it), and starts the
/// stream.
pub async fn start(ep: &Endpoint<'_>) -> Result<Response, ApiError> {
    let opts = ListOptions::parse(&ep.req.query, true)?;
    let filter = Filter::from_query(&ep.res, ep.info, ep.req)?;
    let rv = opts.resource_version()?;
    let start = match (opts.send_initial_events, rv) {
        (Some(true), rv) => {
            wait_for_resource_version(ep.state, rv.unwrap_or(0)).await?;
            Start::Initial {
                end_bookmark: opts.allow_watch_bookmarks,
            }
        }
        (_, Some(rv)) if rv > 0 => {
            wait_for_resource_version(ep.state, rv).await?;
            Start::After(rv)
        }
        _ => Start::After(ep.state.store.current_rv()),
    };
    let watch_req = WatchRequest {
        table: table_request(ep.req).map(|i| (Arc::new(Columns::for_resource(&ep.res)), i)),
        resource: ep.res.clone(),
        filter,
        start,
        bookmarks: opts.allow_watch_bookmarks,
        timeout: opts.timeout_seconds.map(Duration::from_secs),
    };
    Ok(serve(ep.state.clone(), watch_req))
}

/// Starts a watch and returns the streaming response.
pub fn serve(state: Arc<State>, req: WatchRequest) -> Response {
    let (tx, rx) = mpsc::channel::<Result<Bytes, Infallible>>(64);
    // Subscribe before reading the snapshot or history so no event can fall in between.
    let events = state.store.subscribe();
    tokio::spawn(run(state, req, events, tx));
    let mut resp = warp::Reply::into_response(warp::reply::stream(ReceiverStream::new(rx)));
    *resp.status_mut() = StatusCode::OK;
    resp.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    resp
}

/// The frame a watcher sends for a store event, if any. In the storage version the frame is
/// built once per event and shared by every watcher.
fn event_frame(req: &WatchRequest, event: &Event) -> Option<Bytes> {
    let (kind, obj) = translate(req, event)?;
    if req.table.is_some() {
        return Some(object_frame(req, kind, &obj));
    }
    if req.resource.version == req.resource.storage_version {
        let kind_type = match kind {
            "ADDED" => EventType::Added,
            "MODIFIED" => EventType::Modified,
            _ => EventType::Deleted,
        };
        return Some(event.frame(kind_type, || frame(kind, &obj.json)));
    }
    Some(object_frame(req, kind, &obj))
}

/// A frame for one object, as a Table row when the watcher asked for tables.
fn object_frame(req: &WatchRequest, kind: &str, obj: &StoredObject) -> Bytes {
    match &req.table {
        Some((columns, include)) => {
            let mut shown = obj.value.clone();
            if req.resource.version != req.resource.storage_version {
                shown["apiVersion"] = json!(req.resource.api_version());
            }
            let rv = obj.rv.to_string();
            let table = columns.table(&[&shown], &rv, *include, true);
            frame(kind, &serde_json::to_vec(&table).unwrap_or_default())
        }
        None => frame(kind, &encode_object(&req.resource, obj)),
    }
}

/// Decides what a watcher sees of one store event.
fn translate(req: &WatchRequest, event: &Event) -> Option<(&'static str, Arc<StoredObject>)> {
    if event.resource != req.resource.gr {
        return None;
    }
    let matches = |o: &StoredObject| req.filter.matches(&event.key, &o.value);
    let now = matches(&event.object);
    let before = event.prev.as_deref().is_some_and(matches);
    let kind = match event.kind {
        EventType::Added if now => "ADDED",
        EventType::Modified if now && before => "MODIFIED",
        EventType::Modified if now => "ADDED",
        EventType::Modified if before => "DELETED",
        EventType::Deleted if before => "DELETED",
        _ => return None,
    };
    Some((kind, event.object.clone()))
}

fn bookmark(req: &WatchRequest, rv: u64, initial_events_end: bool) -> Bytes {
    let mut meta = json!({"resourceVersion": rv.to_string()});
    if initial_events_end {
        meta["annotations"] = json!({"k8s.io/initial-events-end": "true"});
    }
    let obj = json!({"kind": req.resource.kind, "apiVersion": req.resource.api_version(), "metadata": meta});
    frame("BOOKMARK", &serde_json::to_vec(&obj).unwrap_or_default())
}

async fn run(
    state: Arc<State>,
    req: WatchRequest,
    mut events: broadcast::Receiver<Arc<Event>>,
    tx: mpsc::Sender<Result<Bytes, Infallible>>,
) {
    let sender = &tx;
    let send = |b: Bytes| async move { sender.send(Ok(b)).await.is_ok() };
    let mut shutdown = state.shutdown.clone();
    if *shutdown.borrow() {
        return;
    }
    // Where live events take over: everything up to `last_rv` has been sent.
    let mut last_rv;
    match req.start {
        Start::Initial { end_bookmark } => {
            let snap = state.store.snapshot();
            last_rv = snap.rv;
            let ns = req.filter.namespace.as_deref();
            let initial: Vec<Bytes> = snap
                .list(&req.resource.gr, ns)
                .filter(|(k, o)| req.filter.matches(k, &o.value))
                .map(|(_, o)| object_frame(&req, "ADDED", o))
                .collect();
            drop(snap);
            for f in initial {
                if !send(f).await {
                    return;
                }
            }
            if end_bookmark && !send(bookmark(&req, last_rv, true)).await {
                return;
            }
        }
        Start::After(rv) => match state.store.history_since(rv) {
            None => {
                let oldest = state.store.oldest_rv();
                let _ = send(error_frame(&too_old(rv, oldest))).await;
                return;
            }
            Some(replay) => {
                last_rv = rv;
                for event in replay {
                    last_rv = last_rv.max(event.rv);
                    if let Some(f) = event_frame(&req, &event) {
                        if !send(f).await {
                            return;
                        }
                    }
                }
            }
        },
    }

    let timeout = tokio::time::sleep(req.timeout.unwrap_or(Duration::from_secs(u32::MAX as u64)));
    tokio::pin!(timeout);
    let mut ticker = tokio::time::interval(state.options.bookmark_interval);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticker.tick().await;
    loop {
        tokio::select! {
            received = events.recv() => match received {
                Ok(first) => {
                    // Events already queued go out in one chunk: one write to the socket for a
                    // burst instead of one per event.
                    let mut chunk = Vec::new();
                    let mut next = Some(first);
                    let mut lagged = false;
                    while let Some(event) = next.take() {
                        if event.rv > last_rv {
                            last_rv = event.rv;
                            if let Some(f) = event_frame(&req, &event) {
                                chunk.extend_from_slice(&f);
                            }
                        }
                        if chunk.len() < MAX_CHUNK {
                            match events.try_recv() {
                                Ok(e) => next = Some(e),
                                Err(broadcast::error::TryRecvError::Lagged(_)) => lagged = true,
                                Err(_) => {}
                            }
                        }
                    }
                    if !chunk.is_empty() && !send(Bytes::from(chunk)).await {
                        return;
                    }
                    if lagged {
                        let oldest = state.store.oldest_rv();
                        let _ = send(error_frame(&too_old(last_rv, oldest.max(last_rv + 1)))).await;
                        return;
                    }
                }
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    let oldest = state.store.oldest_rv();
                    let _ = send(error_frame(&too_old(last_rv, oldest.max(last_rv + 1)))).await;
                    return;
                }
                Err(broadcast::error::RecvError::Closed) => return,
            },
            _ = ticker.tick(), if req.bookmarks => {
                // Only what this watcher has processed: a client resuming from the bookmark
                // must not skip events still queued for it.
                if !send(bookmark(&req, last_rv, false)).await {
                    return;
                }
            }
            _ = shutdown.changed() => return,
            _ = &mut timeout => return,
            _ = tx.closed() => return,
        }
    }
}
