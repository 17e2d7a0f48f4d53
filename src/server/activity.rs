//! Whether a connection is idle. hyper times out an idle HTTP/1.1 keep-alive connection (its
//! header read timeout) but not an idle HTTP/2 one, which would then hold one of the
//! `max_connections` slots for ever; the apiserver (Go's `http.Server` `IdleTimeout`) closes
//! both. A connection is idle when none of its requests is open, a request staying open until
//! its response body has ended or been dropped (a watch stream keeps its connection busy).

use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use tokio::time::Instant;

/// One connection's open requests and when the last one ended.
#[derive(Debug)]
pub struct Activity {
    open: AtomicUsize,
    /// How many requests have ended.
    ended: AtomicU64,
    /// Whether the connection still speaks HTTP/1.1 request by request: bytes arriving
    /// between requests then begin a head. Not on HTTP/2 (pings and window updates arrive on
    /// an idle connection) nor once upgraded to a WebSocket.
    heads: AtomicBool,
    last_end: Mutex<Instant>,
}

impl Activity {
    /// A connection just accepted: idle since now.
    pub fn new() -> Arc<Activity> {
        Arc::new(Activity {
            open: AtomicUsize::new(0),
            ended: AtomicU64::new(0),
            heads: AtomicBool::new(true),
            last_end: Mutex::new(Instant::now()),
        })
    }

    /// Counts a request as open until the guard is dropped.
    pub fn open(self: &Arc<Self>) -> Open {
        self.open.fetch_add(1, Ordering::AcqRel);
        Open(self.clone())
    }

    /// How many requests have ended so far: a read remembers it, so that the connection can
    /// tell bytes of the next request's head from a keep-alive connection that is just idle.
    pub fn ended(&self) -> u64 {
        self.ended.load(Ordering::Acquire)
    }

    /// Whether the next request's head has begun (bytes were read after the last request
    /// ended, at `ended_at_read`) and no request is open: the connection waits for the rest
    /// of a head, which the read timeout bounds, not for a new request, which the idle
    /// timeout does.
    pub fn awaiting_head(&self, ended_at_read: Option<u64>) -> bool {
        self.heads.load(Ordering::Acquire)
            && self.open.load(Ordering::Acquire) == 0
            && ended_at_read == Some(self.ended())
    }

    /// The connection no longer reads HTTP/1.1 heads between requests (HTTP/2, an upgrade).
    pub fn no_more_heads(&self) {
        self.heads.store(false, Ordering::Release);
    }

    /// Since when the connection has had no open request (`None`: one is open).
    pub fn idle_since(&self) -> Option<Instant> {
        if self.open.load(Ordering::Acquire) > 0 {
            return None;
        }
        Some(*self.last_end.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

/// An open request; dropping it ends the request.
#[derive(Debug)]
pub struct Open(Arc<Activity>);

impl Drop for Open {
    fn drop(&mut self) {
        *self.0.last_end.lock().unwrap_or_else(|e| e.into_inner()) = Instant::now();
        self.0.ended.fetch_add(1, Ordering::AcqRel);
        self.0.open.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A response body that keeps its request open until the body ends or is dropped.
pub struct TrackedBody<B> {
    inner: B,
    open: Option<Open>,
}

impl<B> TrackedBody<B> {
    /// `inner`, ending `open` with it.
    pub fn new(inner: B, open: Open) -> TrackedBody<B> {
        TrackedBody {
            inner,
            open: Some(open),
        }
    }
}

impl<B> hyper::body::Body for TrackedBody<B>
where
    B: hyper::body::Body + Unpin,
{
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<hyper::body::Frame<Self::Data>, Self::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if matches!(polled, Poll::Ready(None) | Poll::Ready(Some(Err(_)))) {
            self.open = None;
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> hyper::body::SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    #[tokio::test]
    async fn a_request_is_open_until_its_body_ends() {
        let activity = Activity::new();
        assert!(activity.idle_since().is_some());
        let body = TrackedBody::new(
            http_body_util::Full::new(bytes::Bytes::from_static(b"x")),
            activity.open(),
        );
        assert_eq!(activity.idle_since(), None);
        let before = Instant::now();
        let collected = body.collect().await.map(|c| c.to_bytes());
        assert_eq!(collected.ok(), Some(bytes::Bytes::from_static(b"x")));
        assert!(activity.idle_since().is_some_and(|t| t >= before));
        let dropped = activity.open();
        assert_eq!(activity.idle_since(), None);
        drop(dropped);
        assert!(activity.idle_since().is_some());
    }
}
