//! One connection's byte stream, as hyper sees it: the timeouts hyper has no setting for, and
//! a `Status` body for the answers hyper writes itself.
//!
//! - Until the first 24 bytes (the HTTP/2 preface the version detection waits for) have
//!   arrived and nothing has been written, a read that stays pending for the read timeout
//!   fails; after that hyper's own header read timeout applies.
//! - A write that makes no progress for the stall timeout fails: a client that stopped reading
//!   (a stalled watcher, a list it never reads) loses its connection instead of holding it.
//! - hyper answers a request it cannot parse (a URI over 64 KiB: 414, headers over its buffer:
//!   431, a malformed request: 400) with an empty body and closes. Those answers are replaced
//!   by the same status with an apiserver `Status` body, and the connection is closed gently
//!   (what the client still sends is read and dropped for a moment) so that the client reads
//!   the answer rather than a reset.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::{Arc, LazyLock};
use std::task::{ready, Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::{Instant, Sleep};

use super::activity::Activity;
use crate::error::ApiError;

/// Bytes read before reads are no longer timed here: hyper's version detection reads up to
/// the 24-byte HTTP/2 preface before HTTP/1's header read timeout can start.
const GREETING: usize = 24;
/// How long, and how much, a closing connection keeps reading after an automatic answer.
const LINGER: Duration = Duration::from_millis(500);
const LINGER_BYTES: usize = 4 << 20;
/// hyper's longest request URI.
pub const MAX_URI_BYTES: usize = u16::MAX as usize - 1;

/// A TCP connection with the timeouts and answers described in the module documentation.
pub struct Io {
    inner: TcpStream,
    read_timeout: Duration,
    stall_timeout: Duration,
    read_so_far: usize,
    wrote: bool,
    /// The connection's requests, and how many had ended when bytes were last read.
    activity: Option<Arc<Activity>>,
    ended_at_read: Option<u64>,
    read_timer: Timer,
    write_timer: Timer,
    /// An answer replacing hyper's, and how much of it is written.
    reply: Option<(&'static [u8], usize)>,
    replied: bool,
    linger: Linger,
}

#[derive(PartialEq, Eq)]
enum Linger {
    No,
    Reading(usize),
    Done,
}

/// A deadline allocated on first use, armed while an operation stays pending.
#[derive(Default)]
struct Timer {
    sleep: Option<Pin<Box<Sleep>>>,
    armed: bool,
}

impl Timer {
    /// Arms the timer (if not armed) and tells whether it has expired.
    fn expired(&mut self, after: Duration, cx: &mut Context<'_>) -> bool {
        if !self.armed {
            self.armed = true;
            let deadline = Instant::now() + after;
            match &mut self.sleep {
                Some(s) => s.as_mut().reset(deadline),
                None => self.sleep = Some(Box::pin(tokio::time::sleep_until(deadline))),
            }
        }
        self.sleep
            .as_mut()
            .is_some_and(|s| s.as_mut().poll(cx).is_ready())
    }

    fn disarm(&mut self) {
        self.armed = false;
    }
}

impl Io {
    /// Wraps an accepted connection.
    pub fn new(inner: TcpStream, read_timeout: Duration, stall_timeout: Duration) -> Io {
        Io {
            inner,
            read_timeout,
            stall_timeout,
            read_so_far: 0,
            wrote: false,
            activity: None,
            ended_at_read: None,
            read_timer: Timer::default(),
            write_timer: Timer::default(),
            reply: None,
            replied: false,
            linger: Linger::No,
        }
    }

    /// Times the heads of the connection's later requests too: their bytes must keep coming
    /// within the read timeout once the head has begun (hyper's own header timer would also
    /// close a keep-alive connection that is only idle).
    pub(crate) fn with_activity(mut self, activity: Arc<Activity>) -> Io {
        self.activity = Some(activity);
        self
    }

    /// A write's outcome, failing it when it has been pending for the stall timeout.
    fn stall<T>(&mut self, r: Poll<io::Result<T>>, cx: &mut Context<'_>) -> Poll<io::Result<T>> {
        match r {
            Poll::Pending => {
                if self.write_timer.expired(self.stall_timeout, cx) {
                    return Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "the client has not read the response for the stall timeout",
                    )));
                }
                Poll::Pending
            }
            ready => {
                self.write_timer.disarm();
                self.wrote = true;
                ready
            }
        }
    }

    /// Writes what is left of a replacing answer.
    fn poll_reply(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        while let Some((bytes, done)) = self.reply {
            let r = Pin::new(&mut self.inner).poll_write(cx, &bytes[done..]);
            let n = ready!(self.stall(r, cx))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.reply = (done + n < bytes.len()).then_some((bytes, done + n));
        }
        Poll::Ready(Ok(()))
    }

    /// Replaces hyper's automatic answer `head`, if it is one; the bytes count as written.
    fn replace(&mut self, head: &[u8], cx: &mut Context<'_>) -> Option<Poll<io::Result<usize>>> {
        let reply = automatic_reply(head)?;
        self.reply = Some((reply, 0));
        self.replied = true;
        Some(match self.poll_reply(cx) {
            Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
            _ => Poll::Ready(Ok(head.len())),
        })
    }

    /// After an automatic answer: ends the sending side, then reads and drops what the client
    /// still sends for a moment, so that closing does not reset the connection under it.
    fn poll_linger(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.linger == Linger::No {
            ready!(Pin::new(&mut self.inner).poll_shutdown(cx))?;
            self.linger = Linger::Reading(0);
            self.read_timer.disarm();
        }
        while let Linger::Reading(dropped) = self.linger {
            let mut scratch = [0u8; 8192];
            let mut buf = ReadBuf::new(&mut scratch);
            match Pin::new(&mut self.inner).poll_read(cx, &mut buf) {
                Poll::Ready(Ok(())) if !buf.filled().is_empty() && dropped < LINGER_BYTES => {
                    self.linger = Linger::Reading(dropped + buf.filled().len());
                }
                Poll::Ready(_) => self.linger = Linger::Done,
                Poll::Pending => {
                    if self.read_timer.expired(LINGER, cx) {
                        self.linger = Linger::Done;
                    } else {
                        return Poll::Pending;
                    }
                }
            }
        }
        Poll::Ready(Ok(()))
    }
}

impl AsyncRead for Io {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        match Pin::new(&mut this.inner).poll_read(cx, buf) {
            Poll::Ready(r) => {
                this.read_timer.disarm();
                let read = buf.filled().len() - before;
                if this.read_so_far == 0 && buf.filled()[before..].starts_with(b"PRI * HTTP/2") {
                    // HTTP/2 with prior knowledge: frames arrive between requests.
                    if let Some(a) = &this.activity {
                        a.no_more_heads();
                    }
                }
                this.read_so_far = this.read_so_far.saturating_add(read);
                if read > 0 {
                    this.ended_at_read = this.activity.as_ref().map(|a| a.ended());
                }
                Poll::Ready(r)
            }
            Poll::Pending => {
                let greeting = this.read_so_far < GREETING && !this.wrote;
                let head = this
                    .activity
                    .as_ref()
                    .is_some_and(|a| a.awaiting_head(this.ended_at_read));
                if (greeting || head) && this.read_timer.expired(this.read_timeout, cx) {
                    return Poll::Ready(Err(io::Error::new(
                        io::ErrorKind::TimedOut,
                        "the client did not send a request within the read timeout",
                    )));
                }
                Poll::Pending
            }
        }
    }
}

impl AsyncWrite for Io {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        ready!(this.poll_reply(cx))?;
        if let Some(done) = this.replace(buf, cx) {
            return done;
        }
        let r = Pin::new(&mut this.inner).poll_write(cx, buf);
        this.stall(r, cx)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        ready!(this.poll_reply(cx))?;
        if let Some(first) = bufs.iter().find(|b| !b.is_empty()) {
            if let Some(done) = this.replace(first, cx) {
                return done;
            }
        }
        let r = Pin::new(&mut this.inner).poll_write_vectored(cx, bufs);
        this.stall(r, cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_reply(cx))?;
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        ready!(this.poll_reply(cx))?;
        if this.replied {
            return this.poll_linger(cx);
        }
        Pin::new(&mut this.inner).poll_shutdown(cx)
    }
}

/// The answer replacing `head` when it is one hyper writes by itself for a request it could
/// not parse: a short head with no body and no `audit-id`. A response kubefake writes has a
/// body, or (a refused WebSocket handshake, empty as x/net/websocket's) an `audit-id`.
fn automatic_reply(head: &[u8]) -> Option<&'static [u8]> {
    let has = |needle: &[u8]| head.windows(needle.len()).any(|w| w == needle);
    if head.len() > 256
        || !head.starts_with(b"HTTP/1.1 4")
        || !head.ends_with(b"\r\n\r\n")
        || !has(b"\r\ncontent-length: 0\r\n")
        || has(b"\r\naudit-id: ")
    {
        return None;
    }
    match &head[9..13] {
        b"400 " => Some(&BAD_REQUEST),
        b"414 " => Some(&URI_TOO_LONG),
        b"431 " => Some(&HEADERS_TOO_LARGE),
        _ => None,
    }
}

static BAD_REQUEST: LazyLock<Vec<u8>> = LazyLock::new(|| {
    answer(
        "400 Bad Request",
        &ApiError::bad_request("the request could not be parsed as HTTP"),
    )
});

static URI_TOO_LONG: LazyLock<Vec<u8>> = LazyLock::new(|| {
    answer(
        "414 URI Too Long",
        &ApiError::status(
            414,
            "",
            format!("the request URI is longer than {MAX_URI_BYTES} bytes, the longest served"),
        ),
    )
});

static HEADERS_TOO_LARGE: LazyLock<Vec<u8>> = LazyLock::new(|| {
    answer(
        "431 Request Header Fields Too Large",
        &ApiError::status(
            431,
            "",
            "the request's line and headers are larger than 400 KiB, the largest served",
        ),
    )
});

/// A whole HTTP/1.1 response carrying `err`'s `Status`, after which the connection closes.
pub fn answer(status_line: &str, err: &ApiError) -> Vec<u8> {
    let body = serde_json::to_vec(&err.to_status()).unwrap_or_default();
    let mut out = format!(
        "HTTP/1.1 {status_line}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(&body);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case(
        b"HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n",
        true
    )]
    #[case(
        b"HTTP/1.1 431 Request Header Fields Too Large\r\ncontent-length: 0\r\n\r\n",
        true
    )]
    #[case(
        b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\naudit-id: 5e0c\r\n\r\n",
        false
    )]
    #[case(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 12\r\n\r\n", false)]
    #[case(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n", false)]
    #[case(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n", false)]
    fn hypers_own_answers_are_replaced(#[case] head: &[u8], #[case] replaced: bool) {
        assert_eq!(automatic_reply(head).is_some(), replaced);
    }
}
