//! What runs before a request reaches its endpoint, in the apiserver's order: parsing the
//! request into its API coordinates ([`request_info`]), finding out who makes it
//! ([`authentication`]), whom it acts as ([`impersonation`]), and whether that user may
//! ([`authorization`]). Then the testing hooks: [`faults`] (rules that make matching requests
//! fail on purpose, before the handler) and [`request_log`] (every request, recorded after its
//! response), which [`audit`] also writes as `audit.k8s.io/v1` events when it is on.

pub mod audit;
pub mod authentication;
pub mod authorization;
pub mod faults;
pub mod impersonation;
pub mod request_info;
pub mod request_log;
