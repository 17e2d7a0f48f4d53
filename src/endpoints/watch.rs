//! Watch streams: the initial state or a replay from a resourceVersion, then live events, with
//! selectors applied the way the watch cache applies them (an object that stops matching is
//! DELETED for the watcher, one that starts matching is ADDED). A watcher that falls behind or
//! asks for a resourceVersion older than the history gets a 410 Expired ERROR event, never a gap.
//! A watcher whose client does not read is ended once its stream has not drained for the stall
//! timeout (with the 410 if there is room for it, else by closing), as the apiserver ends
//! watchers that do not keep up; other watchers are not slowed by it.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use serde_json::json;
use tokio::sync::{broadcast, mpsc};
use tokio_stream::wrappers::ReceiverStream;
use warp::http::{self, StatusCode};
use warp::reply::Response;

use super::accept::{Format, MetadataOnly};
use super::options::{Filter, ListOptions};
use super::protobuf;
use super::read::wait_for_resource_version;
use super::resource::Endpoint;
use super::websocket;
use crate::error::ApiError;
use crate::filters::faults::{WatchEnd, WatchFault};
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
    /// Send only each object's metadata, as a `PartialObjectMetadata`.
    pub metadata: Option<MetadataOnly>,
    /// `allowWatchBookmarks=true`.
    pub bookmarks: bool,
    /// The stream's format (JSON lines, or length-prefixed protobuf frames).
    pub format: Format,
    /// `timeoutSeconds`.
    pub timeout: Option<Duration>,
    /// A fault rule's end of the stream after so many events.
    pub fault: Option<WatchFault>,
}

impl WatchRequest {
    /// Whether each event's object is transformed per watcher (Table rows, metadata only)
    /// rather than shared as its version's encoding.
    fn transforms(&self) -> bool {
        self.table.is_some() || self.metadata.is_some()
    }
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
/// Events taken from the queue at once: converted together, framed, sent in chunks.
const MAX_BURST: usize = 512;

/// One line of a JSON watch stream, around an object's JSON.
fn json_frame(kind: &str, object: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(object.len() + 32);
    out.extend_from_slice(b"{\"type\":\"");
    out.extend_from_slice(kind.as_bytes());
    out.extend_from_slice(b"\",\"object\":");
    out.extend_from_slice(object);
    out.extend_from_slice(b"}\n");
    Bytes::from(out)
}

/// One event of the stream in its format, around an object's JSON.
fn frame(format: Format, kind: &str, object: &[u8]) -> Bytes {
    if format != Format::Protobuf {
        return json_frame(kind, object);
    }
    let encoded = serde_json::from_slice(object)
        .map_err(|e| e.to_string())
        .and_then(|v| protobuf::encode_watch_event(kind, &v).map_err(|e| e.to_string()));
    match encoded {
        Ok(f) => f,
        Err(e) => {
            tracing::error!(error = %e, "encoding a protobuf watch event");
            Bytes::new()
        }
    }
}

fn error_frame(format: Format, err: &ApiError) -> Bytes {
    frame(format, "ERROR", err.to_status_json().trim_ascii_end())
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
    if let Some(only) = ep.output.metadata.filter(|m| m.list) {
        return Err(only.wrong_shape(&ep.res, false));
    }
    let watch_req = WatchRequest {
        table: ep.output.table.map(|i| (ep.res.table.clone(), i)),
        metadata: ep.output.metadata,
        format: ep.output.format,
        resource: ep.res.clone(),
        filter,
        start,
        bookmarks: opts.allow_watch_bookmarks,
        timeout: watch_timeout(opts.timeout_seconds, ep.state.options.min_request_timeout),
        fault: ep.ctx.fault.as_ref().and_then(|f| f.watch()),
    };
    // A WebSocket watch needs the connection's upgrade; without one (HTTP/2, in-process
    // calls) the watch is served as a plain stream.
    if let Some(upgrade) = ep.req.upgrade.clone() {
        return Ok(
            match websocket::watch_handshake(&ep.req.method, &ep.req.headers) {
                Ok(handshake) => serve_websocket(ep.state.clone(), watch_req, &handshake, upgrade),
                Err(refused) => refused.response(),
            },
        );
    }
    Ok(serve(ep.state.clone(), watch_req))
}

/// How long a watch lasts: `timeoutSeconds`, else (or when 0) a random time between the
/// minimum request timeout and twice it (30 to 60 minutes by default), as the apiserver spreads
/// its watches' ends; none when the minimum is zero.
fn watch_timeout(requested: Option<u64>, min: Duration) -> Option<Duration> {
    match requested {
        Some(seconds) if seconds > 0 => Some(Duration::from_secs(seconds)),
        _ if min.is_zero() => None,
        _ => Duration::try_from_secs_f64(min.as_secs_f64() * (1.0 + fastrand::f64())).ok(),
    }
}

/// Starts a watcher; its stream's chunks (whole frames) arrive on the receiver.
fn spawn_watcher(
    state: Arc<State>,
    req: WatchRequest,
) -> mpsc::Receiver<Result<Bytes, Infallible>> {
    let (tx, rx) = mpsc::channel::<Result<Bytes, Infallible>>(64);
    // Subscribe before reading the snapshot or history so no event can fall in between.
    let events = state.store.subscribe();
    tokio::spawn(run(state, req, events, tx));
    rx
}

/// Starts a watch over WebSocket: the `101`, then one message per event on the upgraded
/// connection (text for JSON, binary for protobuf, as the apiserver's `HandleWS` frames them).
fn serve_websocket(
    state: Arc<State>,
    req: WatchRequest,
    handshake: &websocket::Handshake,
    upgrade: websocket::Upgrade,
) -> Response {
    let framing = match req.format {
        Format::Protobuf if req.table.is_none() => websocket::Framing::Binary,
        _ => websocket::Framing::Text,
    };
    let chunks = spawn_watcher(state, req);
    tokio::spawn(websocket::serve_watch(upgrade, framing, chunks));
    handshake.response()
}

/// Starts a watch and returns the streaming response.
pub fn serve(state: Arc<State>, req: WatchRequest) -> Response {
    let content_type = match req.format {
        Format::Protobuf => "application/vnd.kubernetes.protobuf;stream=watch",
        _ => "application/json",
    };
    let rx = spawn_watcher(state, req);
    let mut resp = warp::Reply::into_response(warp::reply::stream(ReceiverStream::new(rx)));
    *resp.status_mut() = StatusCode::OK;
    resp.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static(content_type),
    );
    resp
}

/// The frame a watcher sends for a store event, if any. It is built once per event and version
/// and shared by every watcher of that version.
async fn event_frame(req: &WatchRequest, event: &Event) -> Result<Option<Bytes>, ApiError> {
    let Some((kind, obj)) = translate(req, event) else {
        return Ok(None);
    };
    if req.transforms() {
        return object_frame(req, kind, &obj).await.map(Some);
    }
    let codec = &req.resource.codec;
    // Shared by every watcher of this version and format.
    let key = codec.cache_key(&obj) * 4 + req.format.tag();
    let bytes = codec.encode(&obj).await?;
    Ok(Some(event.frame(key, kind, || {
        frame(req.format, kind.as_str(), &bytes)
    })))
}

/// A frame for one object, as a Table row when the watcher asked for tables.
async fn object_frame(
    req: &WatchRequest,
    kind: EventType,
    obj: &Arc<StoredObject>,
) -> Result<Bytes, ApiError> {
    let codec = &req.resource.codec;
    if let Some(only) = req.metadata {
        let partial = only.encode(&obj.value());
        return Ok(frame(req.format, kind.as_str(), &partial));
    }
    match &req.table {
        Some((columns, include)) => {
            let shown = codec.from_storage_one(obj).await?;
            let rv = obj.rv.to_string();
            let table = columns.table(&[&shown], &rv, *include, true);
            Ok(json_frame(
                kind.as_str(),
                &serde_json::to_vec(&table).unwrap_or_default(),
            ))
        }
        None => Ok(frame(req.format, kind.as_str(), &codec.encode(obj).await?)),
    }
}

/// Decides what a watcher sees of one store event.
fn translate(req: &WatchRequest, event: &Event) -> Option<(EventType, Arc<StoredObject>)> {
    if *event.resource != req.resource.gr {
        return None;
    }
    let matches = |o: &StoredObject| req.filter.matches(&event.key, o);
    let now = matches(&event.object);
    let before = event.prev.as_deref().is_some_and(matches);
    let kind = match event.kind {
        EventType::Added if now => EventType::Added,
        EventType::Modified if now && before => EventType::Modified,
        EventType::Modified if now => EventType::Added,
        EventType::Modified if before => EventType::Deleted,
        EventType::Deleted if before => EventType::Deleted,
        _ => return None,
    };
    Some((kind, event.object.clone()))
}

fn bookmark(req: &WatchRequest, rv: u64, initial_events_end: bool) -> Bytes {
    let mut meta = json!({"resourceVersion": rv.to_string()});
    if initial_events_end {
        meta["annotations"] = json!({"k8s.io/initial-events-end": "true"});
    }
    let mut obj = json!({"kind": req.resource.kind, "apiVersion": req.resource.api_version(), "metadata": meta});
    if let Some(only) = req.metadata {
        obj = only.partial(&obj);
    }
    frame(
        req.format,
        "BOOKMARK",
        &serde_json::to_vec(&obj).unwrap_or_default(),
    )
}

/// Why a stream ends early.
enum Stop {
    /// The client went away, or stopped reading for the stall timeout.
    Closed,
    /// The stream ended with an ERROR event (already sent, or unsendable).
    Failed,
}

/// One running watch: the request, where the client's stream goes, and how far it got.
struct Watcher {
    req: WatchRequest,
    tx: mpsc::Sender<Result<Bytes, Infallible>>,
    /// Everything up to here has been sent; live events take over after it.
    last_rv: u64,
    /// How long a send may wait for the client to drain the stream.
    stall: Duration,
    /// Events still to send before a fault ends the stream.
    events_left: Option<u64>,
}

impl Watcher {
    async fn send(&self, frame: Bytes) -> Result<(), Stop> {
        // The common case, room in the stream, needs no timer.
        let frame = match self.tx.try_send(Ok(frame)) {
            Ok(()) => return Ok(()),
            Err(mpsc::error::TrySendError::Closed(_)) => return Err(Stop::Closed),
            Err(mpsc::error::TrySendError::Full(frame)) => frame,
        };
        match tokio::time::timeout(self.stall, self.tx.send(frame)).await {
            Ok(sent) => sent.map_err(|_| Stop::Closed),
            Err(_) => {
                // The client has not read for the stall timeout: the 410 if there is room
                // (there rarely is), and the stream ends; the connection's own stall timeout
                // closes it if the client still does not read.
                tracing::info!(
                    resource = ?self.req.resource.gr,
                    "ending a watch whose client has stopped reading"
                );
                let gone = ApiError::gone(format!(
                    "the watcher did not read its events for {}s",
                    self.stall.as_secs_f64()
                ));
                let _ = self.tx.try_send(Ok(error_frame(self.req.format, &gone)));
                Err(Stop::Closed)
            }
        }
    }

    /// Counts one event sent; once a fault's budget is spent, ends the stream as it says.
    async fn sent_event(&mut self, state: &State) -> Result<(), Stop> {
        if let Some(left) = &mut self.events_left {
            *left = left.saturating_sub(1);
        }
        self.fault_end(state).await
    }

    /// Ends the stream if a fault's budget is spent: just the end, or a 410 first.
    async fn fault_end(&self, state: &State) -> Result<(), Stop> {
        if self.events_left != Some(0) {
            return Ok(());
        }
        match self.req.fault.map(|f| f.end) {
            Some(WatchEnd::Expire) => {
                let current = state.store.current_rv();
                Err(self.fail(&too_old(self.last_rv, current)).await)
            }
            _ => Err(Stop::Closed),
        }
    }

    /// Sends an ERROR event; the stream ends after it.
    async fn fail(&self, err: &ApiError) -> Stop {
        let _ = self.send(error_frame(self.req.format, err)).await;
        Stop::Failed
    }

    /// The 410 of a watcher that can no longer be given every event.
    async fn fell_behind(&self, state: &State) -> Stop {
        let oldest = state.store.oldest_rv();
        self.fail(&too_old(self.last_rv, oldest.max(self.last_rv + 1)))
            .await
    }

    /// Synthetic ADDED events for the current state, then the end-of-initial-events bookmark.
    async fn send_initial(&mut self, state: &State, end_bookmark: bool) -> Result<(), Stop> {
        let snap = state.store.snapshot();
        self.last_rv = snap.rv;
        let ns = self.req.filter.namespace.as_deref();
        let objects: Vec<Arc<StoredObject>> = snap
            .list(&self.req.resource.gr, ns)
            .filter(|(k, o)| self.req.filter.matches(k, o))
            .map(|(_, o)| o.clone())
            .collect();
        drop(snap);
        let codec = &self.req.resource.codec;
        if !self.req.transforms() && objects.len() > 1 && codec.serves_another_version() {
            // One conversion for the whole initial state.
            if let Err(e) = codec.encode_all(&objects).await {
                return Err(self.fail(&e).await);
            }
        }
        for o in &objects {
            match object_frame(&self.req, EventType::Added, o).await {
                Ok(f) => self.send(f).await?,
                Err(e) => return Err(self.fail(&e).await),
            }
            self.sent_event(state).await?;
        }
        if end_bookmark {
            self.send(bookmark(&self.req, self.last_rv, true)).await?;
        }
        Ok(())
    }

    /// Every recorded event after `rv`, or the 410 when the history no longer reaches back.
    async fn replay(&mut self, state: &State, rv: u64) -> Result<(), Stop> {
        let Some(replay) = state.store.history_since(rv) else {
            let oldest = state.store.oldest_rv();
            return Err(self.fail(&too_old(rv, oldest)).await);
        };
        self.last_rv = rv;
        let replay: Vec<Arc<Event>> = replay.into_iter().collect();
        for burst in replay.chunks(MAX_BURST) {
            if let Err(e) = self.convert_burst(burst).await {
                return Err(self.fail(&e).await);
            }
        }
        for event in replay {
            self.last_rv = self.last_rv.max(event.rv);
            match event_frame(&self.req, &event).await {
                Ok(Some(f)) => self.send(f).await?,
                Ok(None) => continue,
                Err(e) => return Err(self.fail(&e).await),
            }
            self.sent_event(state).await?;
        }
        Ok(())
    }

    /// One live event and those already queued behind it, sent as one chunk: one write to the
    /// socket for a burst instead of one per event.
    async fn forward(
        &mut self,
        state: &State,
        first: Arc<Event>,
        events: &mut broadcast::Receiver<Arc<Event>>,
    ) -> Result<(), Stop> {
        // The burst already queued is converted in one batch (one webhook call), then framed.
        let mut burst = vec![first];
        let mut lagged = false;
        while burst.len() < MAX_BURST {
            match events.try_recv() {
                Ok(e) => burst.push(e),
                Err(broadcast::error::TryRecvError::Lagged(_)) => {
                    lagged = true;
                    break;
                }
                Err(_) => break,
            }
        }
        if let Err(e) = self.convert_burst(&burst).await {
            return Err(self.fail(&e).await);
        }
        let mut chunk = Vec::new();
        for event in burst {
            if event.rv <= self.last_rv {
                continue;
            }
            self.last_rv = event.rv;
            match event_frame(&self.req, &event).await {
                Ok(Some(f)) => chunk.extend_from_slice(&f),
                Ok(None) => continue,
                Err(e) => return Err(self.fail(&e).await),
            }
            if let Some(left) = &mut self.events_left {
                *left = left.saturating_sub(1);
                if *left == 0 {
                    self.send(Bytes::from(std::mem::take(&mut chunk))).await?;
                    return self.fault_end(state).await;
                }
            }
            if chunk.len() >= MAX_CHUNK {
                self.send(Bytes::from(std::mem::take(&mut chunk))).await?;
            }
        }
        if !chunk.is_empty() {
            self.send(Bytes::from(chunk)).await?;
        }
        if lagged {
            return Err(self.fell_behind(state).await);
        }
        Ok(())
    }

    /// Encodes, in one conversion, the objects of a burst this watcher will be sent and no
    /// other watcher of its version has encoded yet (the codec caches them on the objects).
    async fn convert_burst(&self, burst: &[Arc<Event>]) -> Result<(), ApiError> {
        let codec = &self.req.resource.codec;
        if self.req.transforms() || burst.len() < 2 || !codec.serves_another_version() {
            return Ok(());
        }
        let objects: Vec<Arc<StoredObject>> = burst
            .iter()
            .filter(|e| e.rv > self.last_rv)
            .filter_map(|e| translate(&self.req, e).map(|(_, o)| o))
            .collect();
        if objects.len() > 1 {
            codec.encode_all(&objects).await?;
        }
        Ok(())
    }
}

async fn run(
    state: Arc<State>,
    req: WatchRequest,
    events: broadcast::Receiver<Arc<Event>>,
    tx: mpsc::Sender<Result<Bytes, Infallible>>,
) {
    if *state.shutdown.borrow() {
        return;
    }
    let start = req.start;
    let req_fault = req.fault.map(|f| f.after_events);
    let mut w = Watcher {
        req,
        tx,
        last_rv: match start {
            Start::After(rv) => rv,
            Start::Initial { .. } => state.store.current_rv(),
        },
        stall: state.options.stall_timeout,
        events_left: req_fault,
    };
    if w.fault_end(&state).await.is_err() {
        return;
    }
    let started = match start {
        Start::Initial { end_bookmark } => w.send_initial(&state, end_bookmark).await,
        Start::After(rv) => w.replay(&state, rv).await,
    };
    if started.is_ok() {
        let _ = live(&state, &mut w, events).await;
    }
}

/// Live events until the client goes, the timeout passes, the server stops or the watcher
/// falls behind; bookmarks in between when asked for.
async fn live(
    state: &State,
    w: &mut Watcher,
    mut events: broadcast::Receiver<Arc<Event>>,
) -> Result<(), Stop> {
    let mut shutdown = state.shutdown.clone();
    let forever = Duration::from_secs(u32::MAX as u64);
    let timeout = tokio::time::sleep(w.req.timeout.unwrap_or(forever));
    tokio::pin!(timeout);
    let mut ticker = tokio::time::interval(state.options.bookmark_interval);
    ticker.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    ticker.tick().await;
    loop {
        tokio::select! {
            received = events.recv() => match received {
                Ok(first) => w.forward(state, first, &mut events).await?,
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    return Err(w.fell_behind(state).await);
                }
                Err(broadcast::error::RecvError::Closed) => return Ok(()),
            },
            _ = ticker.tick(), if w.req.bookmarks => {
                // Only what this watcher has processed: a client resuming from the bookmark
                // must not skip events still queued for it.
                w.send(bookmark(&w.req, w.last_rv, false)).await?;
            }
            _ = shutdown.changed() => return Ok(()),
            _ = &mut timeout => return Ok(()),
            _ = w.tx.closed() => return Err(Stop::Closed),
        }
    }
}

#[cfg(test)]
mod timeout_tests {
    use super::*;

    #[test]
    fn watches_end_between_one_and_two_minimum_timeouts() {
        let min = Duration::from_secs(1800);
        assert_eq!(watch_timeout(Some(5), min), Some(Duration::from_secs(5)));
        let random = watch_timeout(Some(0), min).expect("a timeout");
        assert!(random >= min && random <= min * 2, "{random:?}");
        assert_eq!(watch_timeout(None, Duration::ZERO), None);
        assert_eq!(
            watch_timeout(None, Duration::MAX),
            None,
            "too long to keep: none"
        );
    }
}
