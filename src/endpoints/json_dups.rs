//! JSON decoding that notices duplicate keys. `serde_json` keeps the last value silently; the
//! apiserver reports duplicates like unknown fields (`fieldValidation`), by path.

use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// Parses JSON, returning the value (last duplicate wins, as in Go) and the paths of duplicated
/// keys (`spec.replicas`).
pub fn parse(bytes: &[u8]) -> Result<(Value, Vec<String>), serde_json::Error> {
    let mut dups = Vec::new();
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = Node {
        path: String::new(),
        dups: &mut dups,
    }
    .deserialize(&mut de)?;
    de.end()?;
    Ok((value, dups))
}

struct Node<'a> {
    path: String,
    dups: &'a mut Vec<String>,
}

impl<'de> DeserializeSeed<'de> for Node<'_> {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }
}

fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

impl<'de> Visitor<'de> for Node<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_string()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        let mut i = 0;
        loop {
            let seed = Node {
                path: format!("{}[{i}]", self.path),
                dups: &mut *self.dups,
            };
            match seq.next_element_seed(seed)? {
                Some(v) => out.push(v),
                None => break,
            }
            i += 1;
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key::<String>()? {
            let path = child(&self.path, &key);
            let seed = Node {
                path: path.clone(),
                dups: &mut *self.dups,
            };
            let value = map.next_value_seed(seed)?;
            if out.insert(key, value).is_some() && !self.dups.contains(&path) {
                self.dups.push(path);
            }
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn finds_duplicates_by_path() {
        let (v, dups) =
            parse(br#"{"spec":{"a":1,"a":2,"l":[{"x":1,"x":2}]},"spec2":3}"#).expect("parses");
        assert_eq!(v, json!({"spec": {"a": 2, "l": [{"x": 2}]}, "spec2": 3}));
        assert_eq!(dups, ["spec.a", "spec.l[0].x"]);
        assert!(parse(b"{").is_err());
        assert!(parse(b"{} x").is_err());
        assert_eq!(
            parse(b"[1, 2.5, null, true]").expect("ok").0,
            json!([1, 2.5, null, true])
        );
    }
}
