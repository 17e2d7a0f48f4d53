//! [`ProtobufError`].

use super::MAX_DEPTH;

/// Why a body could not be decoded, or an object not encoded. The Display texts are the
/// apiserver's (gogo's and the protobuf serializer's) where it has one, so that they can go into
/// its `the object provided is unrecognized (must be of type X): <error>` message unchanged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProtobufError {
    /// The body is empty.
    #[error("empty data")]
    EmptyData,
    /// The body does not start with `k8s\0`.
    #[error(
        "provided data does not appear to be a protobuf message, expected prefix [107 56 115 0]"
    )]
    NotProtobuf,
    /// Nothing follows `k8s\0`.
    #[error("empty body")]
    EmptyBody,
    /// The envelope has no kind; the field is Go's `%#v` of the envelope's TypeMeta.
    #[error("Object 'Kind' is missing in '{0}'")]
    MissingKind(String),
    /// The envelope has no (or a malformed) apiVersion.
    #[error("Object 'apiVersion' is missing in '{0}'")]
    MissingVersion(String),
    /// The kind has no protobuf form in this version (unknown, or not a built-in kind).
    #[error("no kind {kind:?} is registered for version {version:?}")]
    NotRegistered {
        /// The kind.
        kind: String,
        /// The apiVersion.
        version: String,
    },
    /// Bytes that are not valid protobuf (truncated, an illegal tag or wire type, an overflow).
    #[error("proto: {message}: {reason}")]
    Malformed {
        /// The message being read (`Deployment`).
        message: &'static str,
        /// gogo's reason (`unexpected EOF`).
        reason: String,
    },
    /// A known field arrived with another wire type than its own.
    #[error("proto: {message}: wrong wireType = {wire} for field {field}")]
    WrongWireType {
        /// The message being read.
        message: &'static str,
        /// The field's JSON name.
        field: &'static str,
        /// The wire type that arrived.
        wire: u8,
    },
    /// Well-formed protobuf holding a value Go rejects (an invalid quantity, FieldsV1 that is
    /// not JSON, an IntOrString of a third type).
    #[error("{0}")]
    Invalid(String),
    /// Messages nested deeper than [`MAX_DEPTH`].
    #[error("proto: exceeded the maximum nesting depth of {MAX_DEPTH} messages")]
    TooDeep,
    /// A JSON value that does not fit its field (encode only).
    #[error("cannot encode {path} as protobuf: {reason}")]
    Encode {
        /// Where, as a JSON path (`spec.template.spec.containers[0].ports[1].containerPort`).
        path: String,
        /// What is wrong.
        reason: String,
    },
}

impl ProtobufError {
    /// An encode error at a JSON value.
    pub(super) fn encode(reason: impl Into<String>) -> Self {
        ProtobufError::Encode {
            path: String::new(),
            reason: reason.into(),
        }
    }

    /// Prefixes an encode error's path with the field (or `[index]`) it occurred in.
    pub(super) fn within(self, segment: &str) -> Self {
        match self {
            ProtobufError::Encode { path, reason } => {
                let path = match (path.is_empty(), path.starts_with('[')) {
                    (true, _) => segment.to_string(),
                    (false, true) => format!("{segment}{path}"),
                    (false, false) => format!("{segment}.{path}"),
                };
                ProtobufError::Encode { path, reason }
            }
            other => other,
        }
    }
}
