//! What runs before a request reaches its endpoint, in the apiserver's order: parsing the
//! request into its API coordinates ([`request_info`]), finding out who makes it
//! ([`authentication`]), and whether that user may ([`authorization`]).

pub mod authentication;
pub mod authorization;
pub mod request_info;
