//! What runs before a request reaches its endpoint, in the apiserver's order: parsing the
//! request into its API coordinates ([`request_info`]), finding out who makes it
//! ([`authentication`]), whom it acts as ([`impersonation`]), and whether that user may
//! ([`authorization`]).

pub mod authentication;
pub mod authorization;
pub mod impersonation;
pub mod request_info;
