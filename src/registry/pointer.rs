//! JSON pointers into objects, for the strategies' literal paths (`/spec/template/spec`).
//! `serde_json::Value::pointer` allocates two strings for every step of its path (to undo `~0`
//! and `~1` escapes); these walk the path in place and take that way only for a path with `~`.

use serde_json::Value;

/// [`Value::pointer`] and [`Value::pointer_mut`] without an allocation per step.
pub trait Pointer {
    /// The value at `path`, as [`Value::pointer`] finds it.
    fn at(&self, path: &str) -> Option<&Value>;
    /// The value at `path`, as [`Value::pointer_mut`] finds it.
    fn at_mut(&mut self, path: &str) -> Option<&mut Value>;
}

impl Pointer for Value {
    fn at(&self, path: &str) -> Option<&Value> {
        if path.contains('~') || !(path.is_empty() || path.starts_with('/')) {
            return self.pointer(path);
        }
        path.split('/').skip(1).try_fold(self, |v, token| match v {
            Value::Object(m) => m.get(token),
            Value::Array(a) => index(token).and_then(|i| a.get(i)),
            _ => None,
        })
    }

    fn at_mut(&mut self, path: &str) -> Option<&mut Value> {
        if path.contains('~') || !(path.is_empty() || path.starts_with('/')) {
            return self.pointer_mut(path);
        }
        path.split('/').skip(1).try_fold(self, |v, token| match v {
            Value::Object(m) => m.get_mut(token),
            Value::Array(a) => index(token).and_then(|i| a.get_mut(i)),
            _ => None,
        })
    }
}

/// An array index as a JSON pointer spells it: digits, no sign, no leading zero.
fn index(token: &str) -> Option<usize> {
    let digits = !token.is_empty() && token.bytes().all(|b| b.is_ascii_digit());
    if !digits || (token.len() > 1 && token.starts_with('0')) {
        return None;
    }
    token.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn finds_what_value_pointer_finds() {
        let mut v = json!({"a": {"b": [10, {"c": 1}], "": 2, "x/y": 3, "m~n": 4}, "z": null});
        let paths = [
            "",
            "/",
            "/a",
            "/a/b",
            "/a/b/0",
            "/a/b/1/c",
            "/a/b/01",
            "/a/b/+1",
            "/a/b/2",
            "/a/b/-",
            "/a/",
            "/a/x~1y",
            "/a/m~0n",
            "/z",
            "/z/q",
            "a",
            "/a/b/1/c/d",
        ];
        for p in paths {
            assert_eq!(v.at(p), v.pointer(p), "{p}");
            let expected = v.pointer(p).cloned();
            assert_eq!(v.at_mut(p).map(|x| x.clone()), expected, "{p}");
        }
    }
}
