//! Which definition a published schema node's `$ref` names. Kept free of the crate (serde_json
//! only): `build.rs` includes this file too, so that its count of a schema's nodes follows
//! references exactly as the crate's compiling and reading of schemas do.

use serde_json::{Map, Value};

/// The prefix of a published `$ref`.
pub const PREFIX: &str = "#/components/schemas/";

/// The definition a published `$ref` (or `allOf: [{$ref}]`) names.
pub fn reference(schema: &Map<String, Value>) -> Option<&str> {
    named(
        schema.get("allOf").and_then(Value::as_array),
        schema.get("$ref"),
    )
}

/// [`reference`] from a node's `allOf` and `$ref`, already read: an `allOf` list names the
/// definition (its first element's `$ref`), if anything does.
pub fn named<'a>(all_of: Option<&'a Vec<Value>>, dollar_ref: Option<&'a Value>) -> Option<&'a str> {
    let target = match all_of {
        Some(all) => all.first()?.get("$ref")?,
        None => dollar_ref?,
    };
    target.as_str()?.strip_prefix(PREFIX)
}
