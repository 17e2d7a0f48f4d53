//! Requests to action subresources (`pods/binding`, `pods/eviction`, `pods/log`): the body, when
//! the action reads one, is decoded as its kind; the action answers with a status code and a
//! JSON document, rendered in the negotiated format. Connections (`pods/exec`, ...) pass
//! CONNECT admission first.

use std::sync::Arc;

use bytes::Bytes;
use warp::http::StatusCode;
use warp::reply::Response;

use serde_json::{json, Map, Value};

use super::negotiation::decode_body;
use super::resource::Endpoint;
use super::websocket;
use crate::admission::{Attributes, Operation};
use crate::error::ApiError;
use crate::registry::resource::{Action, ActionCall};
use crate::registry::table::IncludeObject;

/// Serves a request to an action subresource.
pub async fn serve(ep: &Endpoint<'_>, action: &Arc<dyn Action>) -> Result<Response, ApiError> {
    if action.connects() {
        admit_connection(ep).await?;
    }
    let body = match action.body_kind() {
        Some(kind) if ep.info.verb.as_str() == "create" => Some(decode_body(ep.req, kind, true)?),
        _ => None,
    };
    let call = |body| ActionCall {
        state: ep.state,
        ctx: ep.ctx,
        res: &ep.res,
        namespace: ep.namespace(),
        name: ep.name(),
        verb: ep.info.verb.as_str(),
        body,
        query: &ep.req.query.0,
    };
    if let Some(upgrade) = ep.req.upgrade.clone() {
        if let Some(stream) = action.stream(call(None)).await {
            let (method, headers) = (&ep.req.method, &ep.req.headers);
            return Ok(websocket::serve_stream(method, headers, &stream?, upgrade));
        }
    }
    let (code, json) = action.serve(call(body)).await?;
    let status = StatusCode::from_u16(code).unwrap_or(StatusCode::OK);
    let json = match ep.output.table {
        // A resource served by its own code (componentstatuses) prints as its kind.
        Some(include)
            if ep.info.subresource.is_empty()
                && matches!(ep.info.verb.as_str(), "get" | "list") =>
        {
            as_table(ep, &json, include)
        }
        _ => json,
    };
    ep.respond_json(status, Bytes::from(json.to_string()))
}

/// What an action read (a list, or one object) as the Table of its resource's columns
/// (`componentstatuses` are computed, never stored, and printed as any other kind).
fn as_table(ep: &Endpoint<'_>, read: &Value, include: IncludeObject) -> Value {
    let rows: Vec<&Value> = match read["items"].as_array() {
        Some(items) => items.iter().collect(),
        None => vec![read],
    };
    let rv = read["metadata"]["resourceVersion"].as_str().unwrap_or("");
    ep.res.table.table(&rows, rv, include, true)
}

/// CONNECT admission: the mutating and validating plugins (webhooks and policies among them)
/// see the connection's options, built from the query (`PodExecOptions`, ...), before it is
/// served.
async fn admit_connection(ep: &Endpoint<'_>) -> Result<(), ApiError> {
    let sub = ep.info.subresource.as_str();
    let kind = ep
        .res
        .subresource(sub)
        .and_then(|s| s.response.clone())
        .map_or_else(String::new, |(_, _, kind)| kind);
    let mut options = connect_options(&kind, &ep.req.query.0);
    let attrs = Attributes {
        store: &ep.state.store,
        ctx: ep.ctx,
        resource: &ep.res,
        request_resource: &ep.res,
        subresource: sub,
        operation: Operation::Connect,
        namespace: ep.namespace(),
        name: ep.name(),
        old_object: None,
        registry: ep.state.registry(),
        authorization: ep.state.options.authorization,
    };
    ep.state.admission.admit(&attrs, &mut options).await?;
    ep.state.admission.validate(&attrs, Some(&options)).await
}

/// A connection's options object from its query parameters, as the apiserver decodes them.
fn connect_options(kind: &str, query: &[(String, String)]) -> Value {
    let mut out = Map::new();
    out.insert("kind".into(), json!(kind));
    out.insert("apiVersion".into(), json!("v1"));
    for (key, value) in query {
        match key.as_str() {
            "stdin" | "stdout" | "stderr" | "tty" => {
                out.insert(key.clone(), json!(value == "true" || value == "1"));
            }
            "command" | "ports" => {
                let item = match (key.as_str(), value.parse::<i64>()) {
                    ("ports", Ok(port)) => json!(port),
                    _ => json!(value),
                };
                let list = out.entry(key.clone()).or_insert_with(|| json!([]));
                if let Some(items) = list.as_array_mut() {
                    items.push(item);
                }
            }
            "container" | "path" => {
                out.insert(key.clone(), json!(value));
            }
            _ => {}
        }
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_from_queries() {
        let q = |pairs: &[(&str, &str)]| -> Vec<(String, String)> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let exec = connect_options(
            "PodExecOptions",
            &q(&[
                ("command", "ls"),
                ("command", "-l"),
                ("stdout", "true"),
                ("tty", "0"),
                ("container", "c"),
            ]),
        );
        assert_eq!(
            exec,
            json!({"kind": "PodExecOptions", "apiVersion": "v1", "command": ["ls", "-l"],
                "stdout": true, "tty": false, "container": "c"})
        );
        let forward = connect_options(
            "PodPortForwardOptions",
            &q(&[("ports", "8080"), ("ports", "x")]),
        );
        assert_eq!(forward["ports"], json!([8080, "x"]));
    }
}
