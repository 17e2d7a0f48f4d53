//! The stored bytes of a tree: serde_json's compact form, byte for byte, written faster.
//!
//! Every write serialises its object once, inside the write section, and most of an object's
//! bytes are string contents that need no escape (names, data values, managedFields keys).
//! `serde_json::to_writer` looks them up in its escape table one byte at a time, which was
//! three quarters of a ConfigMap's serialisation. [`write_value`] tests eight bytes at a time
//! for the only three things that need an escape (a control character, `"` and `\`) and copies
//! the runs between them whole. Numbers are written by serde_json itself. The output is the
//! same as serde_json's: the table and random tests below compare the two.

use serde_json::{Number, Value};

/// Appends `v` as compact JSON, exactly as `serde_json::to_writer` would write it.
pub(crate) fn write_value(out: &mut Vec<u8>, v: &Value) {
    match v {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(n) => write_number(out, n),
        Value::String(s) => write_str(out, s),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_value(out, item);
            }
            out.push(b']');
        }
        Value::Object(map) => {
            out.push(b'{');
            for (i, (key, value)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_str(out, key);
                out.push(b':');
                write_value(out, value);
            }
            out.push(b'}');
        }
    }
}

/// `v` as compact JSON bytes (see [`write_value`]), in a buffer of exactly that length.
pub(crate) fn to_vec(v: &Value) -> Vec<u8> {
    to_vec_with(v, write_value)
}

/// `v` as compact JSON bytes written by `write`, in a buffer of exactly that length.
pub(crate) fn to_vec_with(v: &Value, write: super::Encoder) -> Vec<u8> {
    // Most objects are a few KB: starting there saves the first doublings' copies.
    let mut out = Vec::with_capacity(2048);
    write(&mut out, v);
    // The buffer grew by doubling: up to half of it would be kept empty for the object's life.
    out.shrink_to_fit();
    out
}

fn write_number(out: &mut Vec<u8>, n: &Number) {
    // Writing a number into a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, n);
}

/// Eight bytes at once: whether any is below 0x20, `"` or `\` (bytes of 0x80 and above,
/// parts of UTF-8 sequences, never are). The answer is exact; which byte it was is not told.
fn needs_escape(word: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    let below = |x: u64, n: u64| x.wrapping_sub(ONES * n) & !x & HIGH;
    let control = below(word, 0x20);
    let quote = below(word ^ (ONES * u64::from(b'"')), 1);
    let backslash = below(word ^ (ONES * u64::from(b'\\')), 1);
    control | quote | backslash != 0
}

/// Appends `s` as a JSON string, exactly as serde_json writes it.
pub(crate) fn write_str(out: &mut Vec<u8>, s: &str) {
    let bytes = s.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    if clean(bytes) {
        out.extend_from_slice(bytes);
    } else {
        write_escaped(out, bytes);
    }
    out.push(b'"');
}

/// Whether no byte of `bytes` needs an escape, looked at eight at a time (the last word padded
/// with spaces).
fn clean(bytes: &[u8]) -> bool {
    let mut words = bytes.chunks_exact(8);
    for word in words.by_ref() {
        let mut w = [0u8; 8];
        w.copy_from_slice(word);
        if needs_escape(u64::from_le_bytes(w)) {
            return false;
        }
    }
    let rest = words.remainder();
    let mut w = [b' '; 8];
    w[..rest.len()].copy_from_slice(rest);
    !needs_escape(u64::from_le_bytes(w))
}

/// Appends `bytes` escaped, copying the runs between escapes whole.
#[cold]
fn write_escaped(out: &mut Vec<u8>, bytes: &[u8]) {
    let mut run = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escape: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0c => b"\\f",
            0..=0x1f => &[],
            _ => continue,
        };
        out.extend_from_slice(bytes.get(run..i).unwrap_or_default());
        if escape.is_empty() {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(b"\\u00");
            out.push(HEX[usize::from(b >> 4)]);
            out.push(HEX[usize::from(b & 0xf)]);
        } else {
            out.extend_from_slice(escape);
        }
        run = i + 1;
    }
    out.extend_from_slice(bytes.get(run..).unwrap_or_default());
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;
    use serde_json::json;

    fn same_as_serde_json(v: &Value) {
        let expected = serde_json::to_vec(v).expect("serde_json writes any tree");
        let ours = to_vec(v);
        assert_eq!(
            String::from_utf8_lossy(&ours),
            String::from_utf8_lossy(&expected),
            "{v:?}"
        );
    }

    #[rstest]
    #[case::null(json!(null))]
    #[case::bools(json!([true, false]))]
    #[case::integers(json!([0, -1, 42, i64::MIN, i64::MAX, u64::MAX]))]
    #[case::floats(json!([0.5, -0.0, 1.0, 1e300, 2.5e-308, 0.1, 123456789.125]))]
    #[case::empty(json!({"a": {}, "b": [], "c": ""}))]
    #[case::nested(json!({"metadata": {"name": "x", "labels": {"app": "web"}},
        "spec": {"list": [1, {"k": [null, "v"]}]}}))]
    #[case::escapes(json!("quote \" backslash \\ newline \n tab \t cr \r bs \u{8} ff \u{c}"))]
    #[case::controls(json!("\u{0}\u{1}\u{1f}\u{7f} end"))]
    #[case::unicode(json!({"ключ": "значение ✓ 😀", "\u{2028}": "<&>"}))]
    #[case::escape_in_key(json!({"a\"b": 1, "c\\d\n": 2}))]
    #[case::long_clean(json!("v".repeat(1000)))]
    fn writes_what_serde_json_writes(#[case] v: Value) {
        same_as_serde_json(&v);
    }

    /// Every character that needs an escape, at every offset within and across the eight-byte
    /// words, alone and in pairs.
    #[test]
    fn escapes_at_every_offset() {
        let specials: Vec<char> = (0u8..0x20)
            .map(char::from)
            .chain(['"', '\\', '\u{7f}', 'é', '😀'])
            .collect();
        for len in 0..20 {
            for at in 0..len {
                for &c in &specials {
                    let mut s: String = "abcdefghijklmnopqrstuvwxyz".chars().take(len).collect();
                    s.insert(at, c);
                    same_as_serde_json(&Value::String(s.clone()));
                    s.insert(0, c);
                    same_as_serde_json(&Value::String(s));
                }
            }
        }
    }

    /// Random trees of strings over a small alphabet rich in escapes.
    #[test]
    fn random_trees() {
        let alphabet = ['a', 'Z', '"', '\\', '\n', '\u{1}', 'ß', '✓', ' ', '/'];
        let mut rng = fastrand::Rng::with_seed(20);
        let text = |rng: &mut fastrand::Rng| -> String {
            let len = rng.usize(0..40);
            (0..len)
                .map(|_| alphabet[rng.usize(..alphabet.len())])
                .collect()
        };
        for _ in 0..300 {
            let mut map = serde_json::Map::new();
            for _ in 0..rng.usize(0..6) {
                let value = match rng.u8(0..4) {
                    0 => Value::String(text(&mut rng)),
                    1 => json!(rng.i64(..)),
                    2 => json!([text(&mut rng), rng.f64(), null]),
                    _ => json!({ text(&mut rng): text(&mut rng) }),
                };
                map.insert(text(&mut rng), value);
            }
            same_as_serde_json(&Value::Object(map));
        }
    }
}
