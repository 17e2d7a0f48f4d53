//! The `None` conversion strategy of CRDs: versions share one schema shape, so converting
//! changes only `apiVersion`.

use futures_util::future::BoxFuture;
use serde_json::Value;

use super::{set_api_version, Converter};
use crate::error::ApiError;

/// Converts by rewriting `apiVersion`.
pub struct NoneConverter;

impl Converter for NoneConverter {
    fn convert<'a>(
        &'a self,
        mut objects: Vec<Value>,
        to: &'a str,
    ) -> BoxFuture<'a, Result<Vec<Value>, ApiError>> {
        set_api_version(&mut objects, to);
        Box::pin(std::future::ready(Ok(objects)))
    }
}
