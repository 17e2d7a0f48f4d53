//! Field paths and sets of them, as sigs.k8s.io/structured-merge-diff's `fieldpath` package:
//! the ordering of path elements, set algebra (whose `Difference` and `Intersection` work level
//! by level, not on subtrees), the `fieldsV1` wire encoding and the `.spec.list[name="a"]`
//! rendering used in conflict messages.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use crate::machinery::gofmt::{go_float_v, go_json, go_json_into, go_json_string, go_quote, GoNum};

/// Why a `fieldsV1` value (`metadata.managedFields[*].fieldsV1`) does not decode, in
/// structured-merge-diff's words: the apiserver wraps them into its managedFields decoding error.
#[derive(Debug, thiserror::Error)]
pub enum FieldsV1Error {
    /// A level of the tree is not a JSON object (the value, as JSON).
    #[error("expected a JSON object in fieldsV1, got {0}")]
    NotAnObject(String),
    /// A key shorter than its `f:` prefix.
    #[error("parsing key as path element: key must be 2 characters long:")]
    KeyTooShort,
    /// A key whose type letter is not followed by `:`.
    #[error("parsing key as path element: missing colon: {0}")]
    MissingColon(String),
    /// The JSON of a `k:` or `v:` key does not parse.
    #[error("parsing key as path element: {key}: {error}")]
    Json {
        /// The key.
        key: String,
        /// The JSON error.
        #[source]
        error: serde_json::Error,
    },
    /// A `k:` key whose JSON is not an object of key fields.
    #[error("parsing key as path element: {0}: expected a JSON object")]
    KeyNotAnObject(String),
    /// An `i:` key that is not an integer.
    #[error("parsing key as path element: {key}: {error}")]
    Index {
        /// The key.
        key: String,
        /// The integer error.
        #[source]
        error: std::num::ParseIntError,
    },
}

/// One step of a field path.
#[derive(Debug, Clone)]
pub(crate) enum PathElement {
    /// A field of a map or struct (`f:name`).
    Field(String),
    /// An item of a `list-type: map` list, by its key fields sorted by name (`k:{...}`).
    Key(Vec<(String, Value)>),
    /// An item of a `list-type: set` list, by value (`v:...`).
    Value(Value),
    /// An item of a list by index (`i:3`); never produced by kubefake, only parsed.
    Index(i64),
}

impl PathElement {
    fn rank(&self) -> u8 {
        match self {
            PathElement::Field(_) => 0,
            PathElement::Key(_) => 1,
            PathElement::Value(_) => 2,
            PathElement::Index(_) => 3,
        }
    }

    /// The `fieldsV1` key of this element (`f:`, `k:`, `v:`, `i:`), JSON as Go's encoder writes it.
    pub(crate) fn serialize(&self) -> String {
        match self {
            PathElement::Field(name) => {
                let mut s = String::with_capacity(name.len() + 2);
                s.push_str("f:");
                s.push_str(name);
                s
            }
            PathElement::Key(fields) => {
                let mut s = String::from("k:{");
                for (i, (k, v)) in fields.iter().enumerate() {
                    if i > 0 {
                        s.push(',');
                    }
                    go_json_string(&mut s, k);
                    s.push(':');
                    go_json_into(&mut s, v);
                }
                s.push('}');
                s
            }
            PathElement::Value(v) => {
                let mut s = String::from("v:");
                go_json_into(&mut s, v);
                s
            }
            PathElement::Index(i) => format!("i:{i}"),
        }
    }

    /// Parses a `fieldsV1` key; `Ok(None)` for an unknown element type (skipped, as a newer
    /// apiserver's elements are).
    pub(crate) fn parse(s: &str) -> Result<Option<PathElement>, FieldsV1Error> {
        let b = s.as_bytes();
        if b.len() < 2 {
            return Err(FieldsV1Error::KeyTooShort);
        }
        if b[1] != b':' {
            return Err(FieldsV1Error::MissingColon(s.to_string()));
        }
        let rest = &s[2..];
        let json = || {
            serde_json::from_str::<Value>(rest).map_err(|error| FieldsV1Error::Json {
                key: s.to_string(),
                error,
            })
        };
        Ok(Some(match b[0] {
            b'f' => PathElement::Field(rest.to_string()),
            b'v' => PathElement::Value(json()?),
            b'k' => match json()? {
                // serde_json's map is sorted by key, which is the order keys are kept in.
                Value::Object(m) => PathElement::Key(m.into_iter().collect()),
                _ => return Err(FieldsV1Error::KeyNotAnObject(s.to_string())),
            },
            b'i' => {
                PathElement::Index(rest.parse::<i64>().map_err(|error| FieldsV1Error::Index {
                    key: s.to_string(),
                    error,
                })?)
            }
            _ => return Ok(None),
        }))
    }
}

/// How smd's `PathElement.String` prints: `.name`, `[k=v,k2=v2]`, `[=v]`, `[3]`.
impl std::fmt::Display for PathElement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PathElement::Field(name) => write!(f, ".{name}"),
            PathElement::Key(fields) => {
                let parts: Vec<String> = fields
                    .iter()
                    .map(|(k, v)| format!("{k}={}", value_to_string(v)))
                    .collect();
                write!(f, "[{}]", parts.join(","))
            }
            PathElement::Value(v) => write!(f, "[={}]", value_to_string(v)),
            PathElement::Index(i) => write!(f, "[{i}]"),
        }
    }
}

impl PartialEq for PathElement {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for PathElement {}

impl PartialOrd for PathElement {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// smd's order: fields, then keys, then values, then indices.
impl Ord for PathElement {
    fn cmp(&self, other: &Self) -> Ordering {
        match (self, other) {
            (PathElement::Field(a), PathElement::Field(b)) => a.cmp(b),
            (PathElement::Key(a), PathElement::Key(b)) => {
                for (x, y) in a.iter().zip(b.iter()) {
                    let c = x.0.cmp(&y.0).then_with(|| cmp_values(&x.1, &y.1));
                    if c != Ordering::Equal {
                        return c;
                    }
                }
                a.len().cmp(&b.len())
            }
            (PathElement::Value(a), PathElement::Value(b)) => cmp_values(a, b),
            (PathElement::Index(a), PathElement::Index(b)) => a.cmp(b),
            _ => self.rank().cmp(&other.rank()),
        }
    }
}

/// smd's `value.ToString`: `%q` strings, `%v` numbers, lists in brackets, maps as `k=v` runs.
pub(crate) fn value_to_string(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(_) => match GoNum::of(v) {
            Some(GoNum::Int(i)) => i.to_string(),
            Some(GoNum::Float(f)) => go_float_v(f),
            None => "0".into(),
        },
        Value::String(s) => go_quote(s),
        Value::Array(a) => {
            let parts: Vec<String> = a.iter().map(value_to_string).collect();
            format!("[{}]", parts.join(","))
        }
        Value::Object(m) => m
            .iter()
            .map(|(k, x)| format!("{k}={}", value_to_string(x)))
            .collect(),
    }
}

fn value_rank(v: &Value) -> u8 {
    match v {
        Value::Number(_) => 0,
        Value::String(_) => 1,
        Value::Bool(_) => 2,
        Value::Array(_) => 3,
        Value::Object(_) => 4,
        Value::Null => 5,
    }
}

/// smd's `value.Compare`: a total order in which ints and floats compare numerically.
pub(crate) fn cmp_values(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Number(_), Value::Number(_)) => match (GoNum::of(a), GoNum::of(b)) {
            (Some(GoNum::Int(x)), Some(GoNum::Int(y))) => x.cmp(&y),
            (Some(x), Some(y)) => x
                .as_f64()
                .partial_cmp(&y.as_f64())
                .unwrap_or(Ordering::Equal),
            _ => Ordering::Equal,
        },
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Array(x), Value::Array(y)) => {
            for (p, q) in x.iter().zip(y.iter()) {
                let c = cmp_values(p, q);
                if c != Ordering::Equal {
                    return c;
                }
            }
            x.len().cmp(&y.len())
        }
        (Value::Object(x), Value::Object(y)) => cmp_maps(x, y),
        (Value::Null, Value::Null) => Ordering::Equal,
        _ => value_rank(a).cmp(&value_rank(b)),
    }
}

fn cmp_maps(x: &Map<String, Value>, y: &Map<String, Value>) -> Ordering {
    let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
    for (i, k) in keys.into_iter().enumerate() {
        let c = if i == x.len() {
            Ordering::Less
        } else if i == y.len() {
            Ordering::Greater
        } else {
            match (x.get(k), y.get(k)) {
                (None, _) => Ordering::Greater,
                (_, None) => Ordering::Less,
                (Some(p), Some(q)) => cmp_values(p, q),
            }
        };
        if c != Ordering::Equal {
            return c;
        }
    }
    Ordering::Equal
}

/// smd's `value.Equals`: deep equality where `1` equals `1.0`.
pub(crate) fn values_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, p)| y.get(k).is_some_and(|q| values_equal(p, q)))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| values_equal(p, q))
        }
        _ => cmp_values(a, b) == Ordering::Equal,
    }
}

/// smd's `Path.String`: `.spec.containers[name="a"].image`.
pub(crate) fn path_string(path: &[PathElement]) -> String {
    path.iter().map(|pe| pe.to_string()).collect()
}

/// A set of field paths, as in `metadata.managedFields[*].fieldsV1` (`f:spec`,
/// `k:{"name":"a"}`, `v:"x"`, `.`): what one manager owns, and what an operation added, changed
/// or removed. Ownership, conflicts and pruning are all set algebra on these.
///
/// Internally smd's tree: the paths ending at this level (`members`) and the subsets below each
/// child (never empty).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSet {
    members: BTreeSet<PathElement>,
    children: BTreeMap<PathElement, FieldSet>,
}

impl FieldSet {
    /// Parses a `fieldsV1` object (as in `metadata.managedFields[*].fieldsV1`).
    pub fn from_fields_v1(v: &Value) -> Result<FieldSet, FieldsV1Error> {
        Ok(parse_level(v)?.0.unwrap_or_default())
    }

    /// The `fieldsV1` object of this set: `{"f:spec": {"f:replicas": {}}}`, with `"."` marking a
    /// path that is both a member and has members below it. (Keys come out in serde_json's
    /// order, which is alphabetical rather than smd's field/key/value order; JSON objects are
    /// unordered, so only a byte-for-byte comparison can tell.)
    pub fn to_fields_v1(&self) -> Value {
        Value::Object(self.emit(false))
    }

    /// Whether the set holds no path at all.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty() && self.children.is_empty()
    }

    fn emit(&self, include_self: bool) -> Map<String, Value> {
        let mut m = Map::new();
        if include_self && !self.is_empty() {
            m.insert(".".into(), Value::Object(Map::new()));
        }
        for pe in &self.members {
            if !self.children.contains_key(pe) {
                m.insert(pe.serialize(), Value::Object(Map::new()));
            }
        }
        for (pe, child) in &self.children {
            m.insert(
                pe.serialize(),
                Value::Object(child.emit(self.members.contains(pe))),
            );
        }
        m
    }

    /// Adds one path (its parents are not added). The empty path (the whole object) is never
    /// owned, as in smd.
    pub(crate) fn insert(&mut self, path: &[PathElement]) {
        match path {
            [] => {}
            [pe] => {
                if !self.members.contains(pe) {
                    self.members.insert(pe.clone());
                }
            }
            [pe, rest @ ..] => match self.children.get_mut(pe) {
                Some(child) => child.insert(rest),
                None => {
                    let mut child = FieldSet::default();
                    child.insert(rest);
                    self.children.insert(pe.clone(), child);
                }
            },
        }
    }

    /// Adds a member at this level.
    pub(crate) fn add_member(&mut self, pe: PathElement) {
        self.members.insert(pe);
    }

    /// Adds the paths below `pe` (nothing for an empty set).
    pub(crate) fn add_child(&mut self, pe: PathElement, below: FieldSet) {
        if below.is_empty() {
            return;
        }
        match self.children.get_mut(&pe) {
            Some(mine) => mine.union_with(below),
            None => {
                self.children.insert(pe, below);
            }
        }
    }

    /// Whether `path` is a member.
    pub(crate) fn has(&self, path: &[PathElement]) -> bool {
        match path {
            [] => false,
            [pe] => self.members.contains(pe),
            [pe, rest @ ..] => self.children.get(pe).is_some_and(|c| c.has(rest)),
        }
    }

    /// Whether `pe` is a member at this level.
    pub(crate) fn has_member(&self, pe: &PathElement) -> bool {
        self.members.contains(pe)
    }

    /// [`FieldSet::has_member`] of a field, by name (no path element to build).
    pub(crate) fn has_field_member(&self, name: &str) -> bool {
        self.members
            .iter()
            .any(|pe| matches!(pe, PathElement::Field(n) if n == name))
    }

    /// [`FieldSet::child`] of a field, by name.
    pub(crate) fn field_child(&self, name: &str) -> Option<&FieldSet> {
        self.children.iter().find_map(|(pe, c)| match pe {
            PathElement::Field(n) if n == name => Some(c),
            _ => None,
        })
    }

    /// The paths below `pe`, without the prefix.
    pub(crate) fn child(&self, pe: &PathElement) -> Option<&FieldSet> {
        self.children.get(pe)
    }

    /// Members and children of this level, for walkers.
    pub(crate) fn parts(&self) -> (&BTreeSet<PathElement>, &BTreeMap<PathElement, FieldSet>) {
        (&self.members, &self.children)
    }

    /// Builds a set from its parts, dropping empty children.
    pub(crate) fn from_parts(
        members: BTreeSet<PathElement>,
        children: BTreeMap<PathElement, FieldSet>,
    ) -> FieldSet {
        let children = children
            .into_iter()
            .filter(|(_, c)| !c.is_empty())
            .collect();
        FieldSet { members, children }
    }

    /// Paths in either set.
    pub(crate) fn union(&self, other: &FieldSet) -> FieldSet {
        let mut out = self.clone();
        out.union_in(other);
        out
    }

    /// [`FieldSet::union`] into `self`, taking `other`'s levels instead of copying them.
    pub(crate) fn union_with(&mut self, other: FieldSet) {
        if self.is_empty() {
            *self = other;
            return;
        }
        self.members.extend(other.members);
        for (pe, c) in other.children {
            match self.children.entry(pe) {
                std::collections::btree_map::Entry::Occupied(mut mine) => {
                    mine.get_mut().union_with(c)
                }
                std::collections::btree_map::Entry::Vacant(slot) => {
                    slot.insert(c);
                }
            }
        }
    }

    /// [`FieldSet::difference`] in place: what stays is not copied.
    pub(crate) fn difference_in(&mut self, other: &FieldSet) {
        if !other.members.is_empty() {
            self.members.retain(|pe| !other.members.contains(pe));
        }
        self.children.retain(|pe, c| {
            if let Some(o) = other.children.get(pe) {
                c.difference_in(o);
            }
            !c.is_empty()
        });
    }

    /// [`FieldSet::union`] into `self`.
    pub(crate) fn union_in(&mut self, other: &FieldSet) {
        self.members.extend(other.members.iter().cloned());
        for (pe, c) in &other.children {
            match self.children.get_mut(pe) {
                Some(mine) => mine.union_in(c),
                None => {
                    self.children.insert(pe.clone(), c.clone());
                }
            }
        }
    }

    /// Paths in both sets (level by level, as smd).
    pub(crate) fn intersection(&self, other: &FieldSet) -> FieldSet {
        let members = self.members.intersection(&other.members).cloned().collect();
        let children = self.zip_children(other, |_, c, o| o.map(|o| c.intersection(o)));
        FieldSet::from_parts(members, children)
    }

    /// Paths of `self` not in `other`, level by level: removing a parent does not remove its
    /// children (smd's `Difference`).
    pub(crate) fn difference(&self, other: &FieldSet) -> FieldSet {
        let members = self.members.difference(&other.members).cloned().collect();
        let children = self.zip_children(other, |_, c, o| {
            Some(o.map_or_else(|| c.clone(), |o| c.difference(o)))
        });
        FieldSet::from_parts(members, children)
    }

    /// Paths of `self` not in `other`, where a member of `other` also removes everything below
    /// it (smd's `RecursiveDifference`, used for reset fields).
    pub(crate) fn recursive_difference(&self, other: &FieldSet) -> FieldSet {
        let members = self.members.difference(&other.members).cloned().collect();
        let children = self.zip_children(other, |pe, c, o| {
            (!other.members.contains(pe))
                .then(|| o.map_or_else(|| c.clone(), |o| c.recursive_difference(o)))
        });
        FieldSet::from_parts(members, children)
    }

    /// Whether [`FieldSet::difference`] with `other` would remove anything: a path is a member
    /// of both.
    pub(crate) fn shares_member(&self, other: &FieldSet) -> bool {
        other.members.iter().any(|pe| self.members.contains(pe))
            || other
                .children
                .iter()
                .any(|(pe, o)| self.children.get(pe).is_some_and(|c| c.shares_member(o)))
    }

    /// Whether [`FieldSet::recursive_difference`] with `other` would remove anything.
    pub(crate) fn touches(&self, other: &FieldSet) -> bool {
        other
            .members
            .iter()
            .any(|pe| self.members.contains(pe) || self.children.contains_key(pe))
            || other
                .children
                .iter()
                .any(|(pe, o)| self.children.get(pe).is_some_and(|c| c.touches(o)))
    }

    /// The children of a set operation: each child of `self`, with the same child of `other`
    /// if any, becomes what `op` makes of it (None: dropped).
    fn zip_children(
        &self,
        other: &FieldSet,
        op: impl Fn(&PathElement, &FieldSet, Option<&FieldSet>) -> Option<FieldSet>,
    ) -> BTreeMap<PathElement, FieldSet> {
        self.children
            .iter()
            .filter_map(|(pe, c)| op(pe, c, other.children.get(pe)).map(|x| (pe.clone(), x)))
            .collect()
    }

    /// Every member path, in smd's iteration order (members of a level, then each child).
    pub(crate) fn paths(&self) -> Vec<Vec<PathElement>> {
        let mut out = Vec::new();
        let mut prefix = Vec::new();
        self.collect_paths(&mut prefix, &mut out);
        out
    }

    fn collect_paths(&self, prefix: &mut Vec<PathElement>, out: &mut Vec<Vec<PathElement>>) {
        for pe in &self.members {
            let mut p = prefix.clone();
            p.push(pe.clone());
            out.push(p);
        }
        for (pe, c) in &self.children {
            prefix.push(pe.clone());
            c.collect_paths(prefix, out);
            prefix.pop();
        }
    }
}

/// One level of `fieldsV1`: the subset below it (if any) and whether the level itself is a
/// member (`"."`, or a leaf `{}`).
fn parse_level(v: &Value) -> Result<(Option<FieldSet>, bool), FieldsV1Error> {
    let Value::Object(m) = v else {
        return Err(FieldsV1Error::NotAnObject(go_json(v)));
    };
    let mut set: Option<FieldSet> = None;
    let mut is_member = false;
    for (k, x) in m {
        if k == "." {
            is_member = true;
            continue;
        }
        let Some(pe) = PathElement::parse(k)? else {
            continue;
        };
        let (grand, child_member) = parse_level(x)?;
        let s = set.get_or_insert_with(FieldSet::default);
        if child_member {
            s.members.insert(pe.clone());
        }
        if let Some(g) = grand.filter(|g| !g.is_empty()) {
            match s.children.get_mut(&pe) {
                Some(existing) => existing.union_in(&g),
                None => {
                    s.children.insert(pe, g);
                }
            }
        }
    }
    if set.is_none() {
        is_member = true;
    }
    Ok((set, is_member))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fields_v1_errors() {
        let cases = [
            (json!([]), "expected a JSON object in fieldsV1, got []"),
            (
                json!({"f:a": 1}),
                "expected a JSON object in fieldsV1, got 1",
            ),
            (
                json!({"f": {}}),
                "parsing key as path element: key must be 2 characters long:",
            ),
            (
                json!({"fx": {}}),
                "parsing key as path element: missing colon: fx",
            ),
            (
                json!({"k:[1]": {}}),
                "parsing key as path element: k:[1]: expected a JSON object",
            ),
            (
                json!({"v:{": {}}),
                "parsing key as path element: v:{: EOF while parsing an object at line 1 column 1",
            ),
            (
                json!({"i:x": {}}),
                "parsing key as path element: i:x: invalid digit found in string",
            ),
        ];
        for (v, want) in cases {
            let got = FieldSet::from_fields_v1(&v).map_err(|e| e.to_string());
            assert_eq!(got.err().as_deref(), Some(want), "{v}");
        }
    }

    #[test]
    fn set_operations_level_by_level() {
        let set = |v: Value| FieldSet::from_fields_v1(&v).unwrap_or_default();
        let a = set(json!({"f:a": {".": {}, "f:x": {}}, "f:b": {"f:y": {}}}));
        let b = set(json!({"f:a": {}, "f:b": {"f:y": {}, "f:z": {}}}));
        let cases = [
            (a.intersection(&b), json!({"f:a": {}, "f:b": {"f:y": {}}})),
            (a.difference(&b), json!({"f:a": {"f:x": {}}})),
            (a.recursive_difference(&b), json!({})),
            (b.difference(&a), json!({"f:b": {"f:z": {}}})),
        ];
        for (got, want) in cases {
            assert_eq!(got.to_fields_v1(), want);
        }
    }

    #[test]
    fn touching_is_whether_a_recursive_difference_removes_anything() {
        let set = |v: Value| FieldSet::from_fields_v1(&v).unwrap_or_default();
        let sets = [
            set(json!({"f:spec": {}})),
            set(json!({"f:spec": {"f:a": {}}})),
            set(json!({"f:spec": {".": {}, "f:a": {}}, "f:status": {}})),
            set(json!({"f:status": {"f:spec": {}}})),
            set(json!({"f:metadata": {"f:labels": {"f:a": {}}}})),
            set(json!({})),
        ];
        for a in &sets {
            for b in &sets {
                assert_eq!(a.touches(b), a.recursive_difference(b) != *a, "{a:?} {b:?}");
                assert_eq!(a.shares_member(b), a.difference(b) != *a, "{a:?} {b:?}");
            }
        }
    }
}
