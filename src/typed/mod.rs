//! The Go types of the built-in kinds, as data, and what they make of JSON.
//!
//! [`model`] is the table `scripts/gen-k8s-data` generates by reflection over client-go's
//! scheme (per struct field: JSON name, Go kind and type, pointer / omitempty / omitzero /
//! inline, protobuf number and wire type), embedded and parsed once per process. The protobuf
//! transcoder ([`crate::endpoints::protobuf`]) and [`normalize`] are built on it.
//!
//! [`normalize()`] is the apiserver's JSON round trip for a built-in kind: it decodes a body
//! into the kind's Go struct and encodes it again, and kubefake, which keeps objects as JSON
//! trees, needs the same result without the structs: unknown fields dropped (and reported as
//! the strict decoder reports them), Go's omission rules per field, canonical quantities and
//! times, and Go's error texts for values of the wrong type. [`quantity`] and [`gotime`] are
//! the hand-written JSON forms of `resource.Quantity` and the `metav1` time types.

pub mod error;
pub mod gotime;
pub mod model;
pub mod normalize;
pub mod quantity;

pub use error::TypedError;
pub use normalize::{normalize, Normalized};
#[cfg(test)]
mod tests;
