//! The Go types of the built-in kinds, as data: the model every typed transcoder walks.
//!
//! [`model`] is the table `scripts/gen-k8s-data` generates by reflection over client-go's
//! scheme (per struct field: JSON name, Go kind and type, pointer / omitempty / omitzero /
//! inline, protobuf number and wire type), embedded and parsed once per process. The protobuf
//! transcoder ([`crate::endpoints::protobuf`]) is built on it.
pub mod model;
