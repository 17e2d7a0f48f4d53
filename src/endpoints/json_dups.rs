//! JSON decoding that notices duplicate keys. `serde_json` keeps the last value silently; the
//! apiserver reports duplicates like unknown fields (`fieldValidation`), by path.
//!
//! The cost is linear in the body. A first parse only notices whether any object has a key
//! twice (its own map says so on insert); only a body that has one is parsed again, keeping
//! the paths: the path to the current value is a stack of segments (the keys themselves, moved
//! in and out, and array indexes), written out as a string only for a duplicate that is
//! reported. As sigs.k8s.io/json caps its strict errors, at most [`MAX_DUPLICATES`] distinct
//! paths are reported, and path rendering stops once [`MAX_RENDERED_BYTES`] have been written
//! (the first duplicate is always reported), so that a duplicate repeated under a very long
//! path cannot cost more than that.

use std::collections::HashSet;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// The most duplicate paths reported, as sigs.k8s.io/json caps its saved strict errors.
pub const MAX_DUPLICATES: usize = 100;

/// Path bytes rendered (for reporting or deduplicating) after which no further duplicate is
/// looked at.
pub const MAX_RENDERED_BYTES: usize = 64 * 1024;

/// Parses JSON, returning the value (last duplicate wins, as in Go) and the paths of duplicated
/// keys (`spec.replicas`, `spec.list[0].name`), each once, in document order, at most
/// [`MAX_DUPLICATES`].
pub fn parse(bytes: &[u8]) -> Result<(Value, Vec<String>), serde_json::Error> {
    // Bodies with a duplicate are rare: the first parse only notices whether there is one,
    // without keeping a path; a body that has one is parsed again, with the paths.
    let (value, dups) = parse_with(bytes, Dups::default())?;
    if !dups.any {
        return Ok((value, Vec::new()));
    }
    let with_paths = Dups {
        paths: true,
        ..Dups::default()
    };
    let (value, dups) = parse_with(bytes, with_paths)?;
    Ok((value, dups.found))
}

fn parse_with(bytes: &[u8], mut dups: Dups) -> Result<(Value, Dups), serde_json::Error> {
    let mut de = serde_json::Deserializer::from_slice(bytes);
    let value = Node { dups: &mut dups }.deserialize(&mut de)?;
    de.end()?;
    Ok((value, dups))
}

/// One step of the path to the current value.
enum Seg {
    /// An object key: `.key` (`key` at the root).
    Key(String),
    /// An array element: `[i]`.
    Index(usize),
}

/// The walk's state: whether a duplicate was seen, and when the paths are wanted, the path
/// stack and what was reported.
#[derive(Default)]
struct Dups {
    /// Keep the path to the current value and report duplicates by it.
    paths: bool,
    any: bool,
    path: Vec<Seg>,
    found: Vec<String>,
    seen: HashSet<String>,
    rendered: usize,
}

impl Dups {
    /// Whether duplicates are still looked at.
    fn open(&self) -> bool {
        self.found.len() < MAX_DUPLICATES
            && (self.found.is_empty() || self.rendered < MAX_RENDERED_BYTES)
    }

    /// Records the duplicate `key` of the object at the current path.
    fn report(&mut self, key: &str) {
        if !self.open() {
            return;
        }
        let mut p = String::new();
        for seg in &self.path {
            match seg {
                Seg::Key(k) => {
                    if !p.is_empty() {
                        p.push('.');
                    }
                    p.push_str(k);
                }
                Seg::Index(i) => {
                    p.push('[');
                    p.push_str(&i.to_string());
                    p.push(']');
                }
            }
        }
        if !p.is_empty() {
            p.push('.');
        }
        p.push_str(key);
        self.rendered += p.len();
        if self.seen.insert(p.clone()) {
            self.found.push(p);
        }
    }
}

struct Node<'a> {
    dups: &'a mut Dups,
}

impl<'de> DeserializeSeed<'de> for Node<'_> {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
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
        if !self.dups.paths {
            while let Some(v) = seq.next_element_seed(Node {
                dups: &mut *self.dups,
            })? {
                out.push(v);
            }
            return Ok(Value::Array(out));
        }
        loop {
            self.dups.path.push(Seg::Index(out.len()));
            let next = seq.next_element_seed(Node {
                dups: &mut *self.dups,
            });
            self.dups.path.pop();
            match next? {
                Some(v) => out.push(v),
                None => break,
            }
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        if !self.dups.paths {
            while let Some(key) = map.next_key::<String>()? {
                let value = map.next_value_seed(Node {
                    dups: &mut *self.dups,
                })?;
                self.dups.any |= out.insert(key, value).is_some();
            }
            return Ok(Value::Object(out));
        }
        while let Some(key) = map.next_key::<String>()? {
            // Go checks a key before decoding its value.
            if out.contains_key(&key) {
                self.dups.report(&key);
            }
            self.dups.path.push(Seg::Key(key));
            let value = map.next_value_seed(Node {
                dups: &mut *self.dups,
            });
            let Some(Seg::Key(key)) = self.dups.path.pop() else {
                unreachable!("the key pushed above")
            };
            out.insert(key, value?);
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

    /// (body, the value, the duplicate paths reported).
    #[test]
    fn duplicate_table() {
        let cases: &[(&str, Value, &[&str])] = &[
            (r#"{}"#, json!({}), &[]),
            (r#"{"a":1,"b":2}"#, json!({"a": 1, "b": 2}), &[]),
            (r#"{"a":1,"a":2}"#, json!({"a": 2}), &["a"]),
            // Reported once however often repeated; the last value wins.
            (r#"{"a":1,"a":2,"a":3}"#, json!({"a": 3}), &["a"]),
            (
                r#"{"b":1,"a":1,"b":2,"a":2}"#,
                json!({"a": 2, "b": 2}),
                &["b", "a"],
            ),
            (r#"{"a":{"b":1,"b":2}}"#, json!({"a": {"b": 2}}), &["a.b"]),
            (
                r#"[{"a":1,"a":1},{"a":1}]"#,
                json!([{"a": 1}, {"a": 1}]),
                &["[0].a"],
            ),
            (
                r#"{"l":[[{"x":1}],[{"x":1,"x":2}]]}"#,
                json!({"l": [[{"x": 1}], [{"x": 2}]]}),
                &["l[1][0].x"],
            ),
            // The same path from two copies of a duplicated parent is reported once, as Go
            // dedupes its strict errors.
            (
                r#"{"a":{"x":1,"x":2},"a":{"x":3,"x":4}}"#,
                json!({"a": {"x": 4}}),
                &["a.x", "a"],
            ),
            // A duplicate is reported before what its value holds, as Go checks keys first.
            (
                r#"{"a":1,"a":{"x":1,"x":2}}"#,
                json!({"a": {"x": 2}}),
                &["a", "a.x"],
            ),
            // Keys are compared after unescaping.
            (r#"{"a":1,"\u0061":2}"#, json!({"a": 2}), &["a"]),
            (r#"{"":1,"":2}"#, json!({"": 2}), &[""]),
            (r#"{"a.b":1,"a.b":2}"#, json!({"a.b": 2}), &["a.b"]),
        ];
        for (body, value, want) in cases {
            let (v, dups) = parse(body.as_bytes()).expect(body);
            assert_eq!(&v, value, "{body}");
            assert_eq!(dups, *want, "{body}");
        }
    }

    #[test]
    fn reports_at_most_a_hundred() {
        let mut body = String::from("{");
        for i in 0..150 {
            body.push_str(&format!(r#""k{i}":1,"k{i}":2,"#));
        }
        body.push_str(r#""z":0}"#);
        let (v, dups) = parse(body.as_bytes()).expect("parses");
        assert_eq!(v.as_object().map(Map::len), Some(151));
        assert_eq!(dups.len(), MAX_DUPLICATES);
        assert_eq!(dups[0], "k0");
        assert_eq!(dups[99], "k99");
    }

    /// A path longer than the rendering budget is still reported (once); later duplicates
    /// under it are no longer rendered.
    #[test]
    fn long_paths_are_rendered_within_a_budget() {
        let long = "k".repeat(MAX_RENDERED_BYTES);
        let body = format!(r#"{{"{long}":{{"a":1,"a":2,"b":1,"b":2}}}}"#);
        let (_, dups) = parse(body.as_bytes()).expect("parses");
        assert_eq!(dups, [format!("{long}.a")]);
    }

    /// The two shapes of issue 12, scaled down: a deep path of long keys above a large array,
    /// and many duplicated keys. Linear: both finish in well under a second even in debug.
    #[test]
    fn pathological_shapes_are_linear() {
        let body = deep_long_keys_then_array(60, 24 * 1024, 200_000);
        let (_, dups) = parse(&body).expect("parses");
        assert!(dups.is_empty());
        let body = many_duplicates(180_000);
        let (v, dups) = parse(&body).expect("parses");
        assert_eq!(v["spec"].as_object().map(Map::len), Some(90_000));
        assert_eq!(dups.len(), MAX_DUPLICATES);
        assert_eq!(dups[0], "spec.k0");
    }

    /// `depth` objects nested under keys of `key_len` bytes, the innermost holding an array of
    /// `elements` zeros.
    fn deep_long_keys_then_array(depth: usize, key_len: usize, elements: usize) -> Vec<u8> {
        let mut out = Vec::new();
        out.push(b'{');
        for d in 0..depth {
            out.push(b'"');
            out.extend(std::iter::repeat_n(b'a' + (d % 26) as u8, key_len));
            out.extend_from_slice(b"\":{");
        }
        out.extend_from_slice(b"\"l\":[");
        for i in 0..elements {
            if i > 0 {
                out.push(b',');
            }
            out.push(b'0');
        }
        out.push(b']');
        out.extend(std::iter::repeat_n(b'}', depth + 1));
        out
    }

    /// An object whose `spec` holds `keys` keys, each written twice.
    fn many_duplicates(keys: usize) -> Vec<u8> {
        let mut out = String::from(r#"{"spec":{"#);
        for i in 0..keys / 2 {
            if i > 0 {
                out.push(',');
            }
            out.push_str(&format!(r#""k{i}":0,"k{i}":1"#));
        }
        out.push_str("}}");
        out.into_bytes()
    }
}
