//! The listener and the one warp filter that feeds every request to [`crate::endpoints::handle`],
//! plus graceful shutdown: the shutdown signal first ends every watch stream (which would
//! otherwise hold graceful shutdown open forever), then the server drains and stops.

use std::convert::Infallible;
use std::sync::Arc;

use bytes::{Buf, BytesMut};
use futures_util::StreamExt;
use tokio::net::TcpListener;
use tokio::sync::watch;
use warp::http::{HeaderMap, Method};
use warp::Filter;

use crate::endpoints::negotiation::{error_response, Query, Request, MAX_BODY_BYTES};
use crate::error::ApiError;
use crate::state::State;

/// Serves `state` on `listener` until `shutdown` turns `true`.
pub async fn run(listener: TcpListener, state: Arc<State>, mut shutdown: watch::Receiver<bool>) {
    let with_state = warp::any().map(move || state.clone());
    let raw_query = warp::query::raw().or(warp::any().map(String::new)).unify();
    let routes = warp::method()
        .and(warp::path::full())
        .and(raw_query)
        .and(warp::header::headers_cloned())
        .and(warp::body::stream())
        .and(with_state)
        .then(
            |method: Method,
             path: warp::path::FullPath,
             query: String,
             headers: HeaderMap,
             body,
             state: Arc<State>| async move {
                let body = match read_body(body).await {
                    Ok(b) => b,
                    Err(e) => return error_response(&e),
                };
                let req = Request {
                    method: method.as_str().to_string(),
                    path: path.as_str().to_string(),
                    query: Query::parse(&query),
                    headers,
                    body,
                };
                crate::endpoints::handle(state, req).await
            },
        )
        .recover(|_rejection| async {
            Ok::<_, Infallible>(error_response(&ApiError::path_not_found()))
        });
    // warp's own `serve` accepts connections without TCP_NODELAY, so a watch event (a small
    // write) can wait for Nagle's algorithm; kubefake accepts them itself.
    let service = warp::service(routes);
    let builder =
        hyper_util::server::conn::auto::Builder::new(hyper_util::rt::TokioExecutor::new());
    let graceful = hyper_util::server::graceful::GracefulShutdown::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let stream = match accepted {
                    Ok((stream, _)) => stream,
                    Err(e) => {
                        tracing::warn!(error = %e, "accepting a connection");
                        continue;
                    }
                };
                let _ = stream.set_nodelay(true);
                let svc = hyper_util::service::TowerToHyperService::new(service.clone());
                let conn = builder.serve_connection_with_upgrades(hyper_util::rt::TokioIo::new(stream), svc);
                let conn = graceful.watch(conn.into_owned());
                tokio::spawn(async move {
                    if let Err(e) = conn.await {
                        tracing::debug!(error = %e, "connection ended");
                    }
                });
            }
            changed = shutdown.changed() => {
                if changed.is_err() || *shutdown.borrow() {
                    break;
                }
            }
        }
    }
    drop(listener);
    graceful.shutdown().await;
}

/// Reads a request body, refusing more than the apiserver's 3 MiB limit.
async fn read_body<S, B>(mut body: S) -> Result<bytes::Bytes, ApiError>
where
    S: futures_util::Stream<Item = Result<B, warp::Error>> + Unpin,
    B: Buf,
{
    let mut out = BytesMut::new();
    while let Some(chunk) = body.next().await {
        let mut chunk =
            chunk.map_err(|e| ApiError::bad_request(format!("reading the request body: {e}")))?;
        if out.len() + chunk.remaining() > MAX_BODY_BYTES {
            return Err(ApiError::too_large(MAX_BODY_BYTES));
        }
        while chunk.has_remaining() {
            let part = chunk.chunk();
            out.extend_from_slice(part);
            let n = part.len();
            chunk.advance(n);
        }
    }
    Ok(out.freeze())
}
