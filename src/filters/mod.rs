//! What runs before a request reaches its endpoint: parsing the request into its API
//! coordinates (authentication and authorization will join here).

pub mod authentication;
pub mod request_info;
