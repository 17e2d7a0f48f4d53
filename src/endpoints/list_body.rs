//! A JSON list body as the pieces it is made of: the envelope's head and tail around the items'
//! own serialisations, which are the store's cached encodings (shared, not copied). A small
//! list is sent as one buffer; a large one is streamed in chunks of about [`CHUNK_BYTES`],
//! each built only when the client is ready for it, so that concurrent lists of a large
//! collection cost a chunk each rather than a copy of the collection each (the apiserver
//! streams large JSON lists too).

use std::convert::Infallible;

use bytes::{Bytes, BytesMut};
use warp::http::StatusCode;
use warp::reply::Response;

/// Lists above this size are streamed.
pub const STREAM_BYTES: usize = 256 * 1024;

/// About how much of a streamed list is built at a time.
pub const CHUNK_BYTES: usize = 64 * 1024;

/// See the module documentation.
pub struct ListBody {
    head: Bytes,
    items: Vec<Bytes>,
    tail: Bytes,
}

impl ListBody {
    /// `head`, the items separated by commas, then `tail`.
    pub fn new(head: Bytes, items: Vec<Bytes>, tail: Bytes) -> ListBody {
        ListBody { head, items, tail }
    }

    /// The body's length in bytes.
    pub fn len(&self) -> usize {
        let items: usize = self.items.iter().map(Bytes::len).sum();
        self.head.len() + items + self.items.len().saturating_sub(1) + self.tail.len()
    }

    /// Whether the body is empty (never: a list has its envelope).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The body in one buffer.
    pub fn concat(self) -> Bytes {
        let mut out = BytesMut::with_capacity(self.len());
        for chunk in self.chunks(usize::MAX) {
            out.extend_from_slice(&chunk);
        }
        out.freeze()
    }

    /// A JSON response: one buffer, or streamed when larger than [`STREAM_BYTES`].
    pub fn into_response(self, status: StatusCode) -> Response {
        let mut resp = if self.len() > STREAM_BYTES {
            let chunks = self.chunks(CHUNK_BYTES).map(Ok::<Bytes, Infallible>);
            warp::reply::Reply::into_response(warp::reply::stream(futures_util::stream::iter(
                chunks,
            )))
        } else {
            Response::new(self.concat().into())
        };
        *resp.status_mut() = status;
        resp.headers_mut().insert(
            warp::http::header::CONTENT_TYPE,
            warp::http::HeaderValue::from_static("application/json"),
        );
        resp
    }

    /// The body as chunks of about `size` bytes (an item larger than that is its own chunk).
    fn chunks(self, size: usize) -> Chunks {
        Chunks {
            size,
            head: Some(self.head),
            items: self.items.into_iter(),
            first: true,
            tail: Some(self.tail),
            pending: None,
        }
    }
}

/// The iterator behind [`ListBody::chunks`].
struct Chunks {
    size: usize,
    head: Option<Bytes>,
    items: std::vec::IntoIter<Bytes>,
    first: bool,
    tail: Option<Bytes>,
    /// An item too large to share a chunk, sent after the chunk before it.
    pending: Option<Bytes>,
}

impl Iterator for Chunks {
    type Item = Bytes;

    fn next(&mut self) -> Option<Bytes> {
        if let Some(item) = self.pending.take() {
            return Some(item);
        }
        let mut buf = BytesMut::new();
        if let Some(head) = self.head.take() {
            buf.extend_from_slice(&head);
        }
        while buf.len() < self.size {
            let Some(item) = self.items.next() else {
                match self.tail.take() {
                    Some(tail) => buf.extend_from_slice(&tail),
                    None if buf.is_empty() => return None,
                    None => {}
                }
                break;
            };
            if !std::mem::take(&mut self.first) {
                buf.extend_from_slice(b",");
            }
            if item.len() >= self.size {
                if buf.is_empty() {
                    return Some(item);
                }
                self.pending = Some(item);
                break;
            }
            buf.extend_from_slice(&item);
        }
        Some(buf.freeze())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(items: &[&'static str]) -> ListBody {
        ListBody::new(
            Bytes::from_static(b"{\"items\":["),
            items
                .iter()
                .map(|s| Bytes::from_static(s.as_bytes()))
                .collect(),
            Bytes::from_static(b"]}"),
        )
    }

    #[rstest::rstest]
    #[case(&[], "{\"items\":[]}")]
    #[case(&["1"], "{\"items\":[1]}")]
    #[case(&["1", "22", "333"], "{\"items\":[1,22,333]}")]
    fn every_chunking_makes_the_same_body(#[case] items: &[&'static str], #[case] want: &str) {
        assert_eq!(body(items).len(), want.len());
        assert_eq!(body(items).concat(), want.as_bytes());
        for size in [1, 2, 3, 5, 8, 100] {
            let chunks: Vec<Bytes> = body(items).chunks(size).collect();
            assert_eq!(chunks.concat(), want.as_bytes(), "size {size}");
            assert!(chunks.iter().all(|c| !c.is_empty()), "size {size}");
        }
    }

    #[test]
    fn large_items_are_their_own_chunks_and_small_ones_share() {
        let chunks: Vec<Bytes> = body(&["aaaaaaaa", "b", "c", "dddddddd"])
            .chunks(6)
            .collect();
        let text: Vec<&str> = chunks
            .iter()
            .map(|c| std::str::from_utf8(c).unwrap_or(""))
            .collect();
        assert_eq!(
            text,
            ["{\"items\":[", "aaaaaaaa", ",b,c,", "dddddddd", "]}"]
        );
    }
}
