//! Response negotiation: which format a resource response takes, from the Accept header, the
//! way the apiserver's `NegotiateOutputMediaType` picks a serializer. Clauses are tried by
//! quality, then specificity, in the client's order; the first the resource can produce wins:
//! JSON, YAML, or (built-in kinds only) protobuf; get, list and watch may also be transformed
//! into a `meta.k8s.io` Table. A request whose every clause is unproducible gets 406.

use bytes::Bytes;
use serde_json::Value;
use warp::http::{self, StatusCode};
use warp::reply::Response;

use super::protobuf;
use crate::error::ApiError;
use crate::registry::resource::{ApiResource, BodyCodec};
use crate::registry::table::IncludeObject;

/// The JSON media type.
pub const JSON: &str = "application/json";
/// The YAML media type.
pub const YAML: &str = "application/yaml";
/// The Kubernetes protobuf media type.
pub const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

/// A response body format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `application/json`.
    Json,
    /// `application/yaml`.
    Yaml,
    /// `application/vnd.kubernetes.protobuf`.
    Protobuf,
}

impl Format {
    fn media(self) -> &'static str {
        match self {
            Format::Json => JSON,
            Format::Yaml => YAML,
            Format::Protobuf => PROTOBUF,
        }
    }

    /// A small number distinguishing formats in caches keyed by version and format.
    pub fn tag(self) -> u64 {
        match self {
            Format::Json => 0,
            Format::Yaml => 1,
            Format::Protobuf => 2,
        }
    }
}

/// What a response should be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Output {
    /// The body format.
    pub format: Format,
    /// A Table of the objects instead of the objects (`as=Table`), and what its rows carry.
    pub table: Option<IncludeObject>,
    /// Only the objects' metadata (`as=PartialObjectMetadata[List]`).
    pub metadata: Option<MetadataOnly>,
}

/// A metadata-only response: `PartialObjectMetadata` or `PartialObjectMetadataList` of
/// `meta.k8s.io`, as controller-runtime's metadata informers and client-go's metadata client
/// ask for them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MetadataOnly {
    /// `as=PartialObjectMetadataList` (for lists) rather than `as=PartialObjectMetadata`.
    pub list: bool,
    /// The `meta.k8s.io` version asked for: `v1` or `v1beta1`.
    pub version: &'static str,
}

impl MetadataOnly {
    /// The apiVersion of the response's objects.
    pub fn api_version(self) -> &'static str {
        if self.version == "v1" {
            "meta.k8s.io/v1"
        } else {
            "meta.k8s.io/v1beta1"
        }
    }

    /// One object's metadata as a `PartialObjectMetadata` (`meta.AsPartialObjectMetadata`).
    pub fn partial(self, obj: &Value) -> Value {
        serde_json::json!({
            "apiVersion": self.api_version(),
            "kind": "PartialObjectMetadata",
            "metadata": obj.get("metadata").cloned().unwrap_or_else(|| serde_json::json!({})),
        })
    }

    /// One object's `PartialObjectMetadata`, serialised in Go's field order.
    pub fn encode(self, obj: &Value) -> Vec<u8> {
        crate::typed::order::to_vec(&self.partial(obj))
    }

    /// The 406 for a request whose kind does not fit the response (a list asked for as
    /// `PartialObjectMetadata`, an object as `PartialObjectMetadataList`), with the Go type the
    /// apiserver names (`*unstructured.UnstructuredList`, `*core.ConfigMap`).
    pub fn wrong_shape(self, res: &ApiResource, is_list: bool) -> ApiError {
        let go_type = match (res.decoding, is_list) {
            (BodyCodec::Unstructured, false) => "*unstructured.Unstructured".to_string(),
            (BodyCodec::Unstructured, true) => "*unstructured.UnstructuredList".to_string(),
            (BodyCodec::Typed, _) => {
                let package = res.group.split('.').next().filter(|g| !g.is_empty());
                let kind = if is_list { &res.list_kind } else { &res.kind };
                format!("*{}.{kind}", package.unwrap_or("core"))
            }
        };
        let message = if is_list {
            format!("you requested PartialObjectMetadata, but the requested object is a list ({go_type})")
        } else {
            format!("you requested PartialObjectMetadataList, but the requested object is not a list ({go_type})")
        };
        let mut err = ApiError::not_acceptable(&[]);
        err.message = message;
        err
    }
}

/// One clause of an Accept header.
struct Clause<'a> {
    media: String,
    params: Vec<(&'a str, &'a str)>,
    quality: f32,
}

impl<'a> Clause<'a> {
    fn param(&self, key: &str) -> Option<&'a str> {
        self.params.iter().find(|(k, _)| *k == key).map(|(_, v)| *v)
    }

    /// 2 for `type/subtype`, 1 for `type/*`, 0 for `*/*`.
    fn specificity(&self) -> u8 {
        match self.media.split_once('/') {
            Some(("*", _)) => 0,
            Some((_, "*")) => 1,
            _ => 2,
        }
    }
}

fn clauses(accept: &str) -> Vec<Clause<'_>> {
    let mut out: Vec<Clause<'_>> = accept
        .split(',')
        .filter(|c| !c.trim().is_empty())
        .map(|c| {
            let mut parts = c.split(';');
            let media = parts.next().unwrap_or("").trim().to_ascii_lowercase();
            let mut params = Vec::new();
            let mut quality = 1.0;
            for p in parts {
                let Some((k, v)) = p.trim().split_once('=') else {
                    continue;
                };
                if k == "q" {
                    quality = v.trim().parse().unwrap_or(0.0);
                } else {
                    params.push((k.trim(), v.trim()));
                }
            }
            Clause {
                media,
                params,
                quality,
            }
        })
        .filter(|c| c.quality > 0.0)
        .collect();
    out.sort_by(|a, b| {
        b.quality
            .total_cmp(&a.quality)
            .then(b.specificity().cmp(&a.specificity()))
    });
    out
}

/// The formats a resource's responses can take, in the apiserver's order.
fn formats(res: &ApiResource, stream: bool) -> &'static [Format] {
    match (res.decoding, stream) {
        (BodyCodec::Typed, false) => &[Format::Json, Format::Yaml, Format::Protobuf],
        (BodyCodec::Typed, true) => &[Format::Json, Format::Protobuf],
        (BodyCodec::Unstructured, false) => &[Format::Json, Format::Yaml],
        (BodyCodec::Unstructured, true) => &[Format::Json],
    }
}

/// Negotiates a response. `transform` allows `as=Table` (reads); `stream` is a watch.
pub fn negotiate(
    accept: &str,
    res: &ApiResource,
    transform: bool,
    stream: bool,
    include_object: Option<&str>,
) -> Result<Output, ApiError> {
    let supported = formats(res, stream);
    // What most clients send: no header, or plain JSON.
    if matches!(accept.trim(), "" | JSON | "*/*" | "application/json, */*") {
        return Ok(Output {
            format: supported[0],
            table: None,
            metadata: None,
        });
    }
    for clause in clauses(accept) {
        // Metadata-only responses are `meta.k8s.io` objects: every format of the meta codecs
        // serves them, whatever the resource's own codec (protobuf for custom resources too).
        let formats = if metadata_clause(&clause) && transform {
            if stream {
                &[Format::Json, Format::Protobuf][..]
            } else {
                &[Format::Json, Format::Yaml, Format::Protobuf][..]
            }
        } else {
            supported
        };
        for &format in formats {
            let (kind, sub) = format.media().split_once('/').unwrap_or(("", ""));
            let matches = match clause.media.split_once('/') {
                Some((t, s)) => (t == kind && (s == sub || s == "*")) || (t == "*" && s == "*"),
                None => false,
            };
            if !matches {
                continue;
            }
            if let Some(output) = accept_clause(&clause, format, transform, stream, include_object)
            {
                return Ok(output);
            }
        }
    }
    Err(not_acceptable(supported, stream))
}

/// Whether a clause's parameters can be honoured for a format.
fn accept_clause(
    clause: &Clause<'_>,
    format: Format,
    transform: bool,
    stream: bool,
    include_object: Option<&str>,
) -> Option<Output> {
    if clause
        .param("stream")
        .is_some_and(|s| !(stream && s == "watch"))
    {
        return None;
    }
    let (kind, group, version) = (clause.param("as"), clause.param("g"), clause.param("v"));
    if kind.is_none() && group.is_none() && version.is_none() {
        return Some(Output {
            format,
            table: None,
            metadata: None,
        });
    }
    // `RequestScope.AllowsMediaTypeTransform`: meta.k8s.io v1 or v1beta1 only; Tables in JSON
    // (the apiserver also writes them in YAML), metadata in any format.
    let version = match (group, version) {
        (Some("meta.k8s.io"), Some("v1")) => "v1",
        (Some("meta.k8s.io"), Some("v1beta1")) => "v1beta1",
        _ => return None,
    };
    if !transform {
        return None;
    }
    match kind {
        Some("Table") if format == Format::Json => Some(Output {
            format,
            table: Some(IncludeObject::parse(include_object)),
            metadata: None,
        }),
        Some(k @ ("PartialObjectMetadata" | "PartialObjectMetadataList")) => Some(Output {
            format,
            table: None,
            metadata: Some(MetadataOnly {
                list: k == "PartialObjectMetadataList",
                version,
            }),
        }),
        _ => None,
    }
}

/// Whether a clause asks for a metadata-only response.
fn metadata_clause(clause: &Clause<'_>) -> bool {
    matches!(
        clause.param("as"),
        Some("PartialObjectMetadata" | "PartialObjectMetadataList")
    )
}

pub(crate) fn not_acceptable(supported: &[Format], stream: bool) -> ApiError {
    let media: Vec<String> = supported
        .iter()
        .map(|f| {
            if stream {
                format!("{};stream=watch", f.media())
            } else {
                f.media().to_string()
            }
        })
        .collect();
    let refs: Vec<&str> = media.iter().map(String::as_str).collect();
    ApiError::not_acceptable(&refs)
}

/// A response carrying a JSON document in the negotiated format.
pub fn render(status: StatusCode, format: Format, json: Bytes) -> Result<Response, ApiError> {
    let body = match format {
        Format::Json => json,
        Format::Yaml => {
            let value: Value = serde_json::from_slice(&json).map_err(ApiError::internal)?;
            Bytes::from(serde_saphyr::to_string(&value).map_err(ApiError::internal)?)
        }
        Format::Protobuf => {
            let value: Value = serde_json::from_slice(&json).map_err(ApiError::internal)?;
            protobuf::encode(&value).map_err(ApiError::internal)?
        }
    };
    let mut resp = Response::new(body.into());
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static(format.media()),
    );
    Ok(resp)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::builtin;

    fn namespaces() -> std::sync::Arc<ApiResource> {
        builtin::resources()
            .iter()
            .find(|r| r.plural == "namespaces")
            .cloned()
            .expect("namespaces")
    }

    #[test]
    fn clauses_by_quality_then_specificity() {
        let res = namespaces();
        let pick = |accept: &str| {
            negotiate(accept, &res, true, false, None)
                .map(|o| o.format)
                .ok()
        };
        assert_eq!(pick(""), Some(Format::Json));
        assert_eq!(pick("application/yaml"), Some(Format::Yaml));
        assert_eq!(
            pick("application/vnd.kubernetes.protobuf, application/json"),
            Some(Format::Protobuf)
        );
        assert_eq!(
            pick("application/json;q=0.5, application/yaml"),
            Some(Format::Yaml)
        );
        assert_eq!(pick("*/*"), Some(Format::Json));
        assert_eq!(pick("text/html, */*;q=0.1"), Some(Format::Json));
        assert_eq!(pick("text/html"), None);
        let err = negotiate("text/html", &res, true, false, None).expect_err("406");
        assert_eq!(err.code, 406);
        assert_eq!(
            err.message,
            "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
        );
    }

    #[test]
    fn tables_only_where_the_endpoint_transforms() {
        let res = namespaces();
        let kubectl = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
        let read = negotiate(kubectl, &res, true, false, Some("None")).expect("read");
        assert_eq!(read.table, Some(IncludeObject::None));
        let write = negotiate(kubectl, &res, false, false, None).expect("write");
        assert_eq!(write.table, None);
        assert!(negotiate(
            "application/json;as=Table;v=v9;g=meta.k8s.io",
            &res,
            true,
            false,
            None
        )
        .is_err());
        let watch = negotiate(
            "application/vnd.kubernetes.protobuf;stream=watch",
            &res,
            false,
            true,
            None,
        )
        .expect("watch");
        assert_eq!(watch.format, Format::Protobuf);
        let err = negotiate("application/yaml", &res, false, true, None).expect_err("406");
        assert_eq!(
            err.message,
            "only the following media types are accepted: application/json;stream=watch, application/vnd.kubernetes.protobuf;stream=watch"
        );
    }
}
