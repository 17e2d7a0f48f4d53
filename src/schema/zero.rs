//! Whether a JSON value is its Go type's zero value. Kept free of the crate (serde_json only):
//! `build.rs` includes this file too, to leave zero defaults out of the defaults skeletons.

use serde_json::Value;

/// Whether `v` is the zero value of its Go type as encoding/json writes it (`null`, `false`,
/// `0`, `""`, `[]`, `{}`): a default that is one changes nothing a decode did not already
/// give, and Go's semantic equality takes two of them as equal.
pub fn is_zero(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Number(n) => n.as_f64() == Some(0.0),
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn zero_values_of_each_json_type() {
        for zero in [
            json!(null),
            json!(false),
            json!(0),
            json!(0.0),
            json!(""),
            json!([]),
            json!({}),
        ] {
            assert!(is_zero(&zero), "{zero}");
        }
        for value in [
            json!(true),
            json!(1),
            json!(-0.5),
            json!("x"),
            json!([0]),
            json!({"a": 0}),
        ] {
            assert!(!is_zero(&value), "{value}");
        }
    }
}
