//! [`TypedError`].

use super::model::MAX_DEPTH;

/// Why a JSON object is not a valid value of its kind's Go type. The Display texts are the ones
/// the apiserver's JSON decoder (sigs.k8s.io/json over encoding/json, then the types' own
/// `UnmarshalJSON`) produces, so that they can go into its `<Kind> in version "<v>" cannot be
/// handled as a <Kind>: <error>` message unchanged.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TypedError {
    /// The kind is not a built-in kind of this apiVersion (a custom resource, a typo).
    #[error("no kind {kind:?} is registered for version {version:?}")]
    NotRegistered {
        /// The kind.
        kind: String,
        /// The apiVersion.
        version: String,
    },
    /// A JSON value of the wrong type, or a number that does not fit (Go's
    /// `*json.UnmarshalTypeError`): `json: cannot unmarshal string into Go struct field
    /// DeploymentSpec.spec.replicas of type int32`.
    #[error("{}", type_error_text(.value, .go_type, .field))]
    Type {
        /// What arrived: `string`, `number`, `number 3000000000`, `bool`, `array`, `object`.
        value: String,
        /// The Go type it should have fitted (`int32`, `[]v1.Container`, `v1.Protocol`).
        go_type: String,
        /// The innermost Go struct and the path of JSON names (and embedded struct names) from
        /// the root, without indexes or map keys (`DeploymentSpec`, `spec.replicas`), as Go
        /// names them; None at the root.
        field: Option<(String, String)>,
    },
    /// A value a type's own `UnmarshalJSON` refuses, or invalid base64 for a `[]byte`: Go's
    /// text (`parsing time "x" as "2006-01-02T15:04:05Z07:00": cannot parse "x" as "2006"`,
    /// `quantities must match the regular expression ...`, `illegal base64 data at input byte
    /// 4`).
    #[error("{0}")]
    Invalid(String),
    /// Objects nested deeper than [`MAX_DEPTH`] (no built-in type does).
    #[error("json: exceeded the maximum nesting depth of {MAX_DEPTH} objects")]
    TooDeep,
}

fn type_error_text(value: &str, go_type: &str, field: &Option<(String, String)>) -> String {
    match field {
        Some((strukt, path)) => format!(
            "json: cannot unmarshal {value} into Go struct field {strukt}.{path} of type {go_type}"
        ),
        None => format!("json: cannot unmarshal {value} into Go value of type {go_type}"),
    }
}
