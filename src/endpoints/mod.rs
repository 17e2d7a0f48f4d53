//! The HTTP endpoints: routing, content negotiation, and one thin function per verb family that
//! connects a request to the generic registry store.

pub mod handlers;
pub mod json_dups;
pub mod negotiation;
pub mod options;
pub mod patch;
pub mod protobuf;
pub mod watch;
