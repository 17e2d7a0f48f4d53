//! Strategic merge patch: what the apiserver runs for `PATCH` with
//! `Content-Type: application/strategic-merge-patch+json`, i.e.
//! `k8s.io/apimachinery/pkg/util/strategicpatch.StrategicMergeMapPatchUsingLookupPatchMeta`.
//!
//! A pure function over JSON values, [`apply`], told about the object's schema through
//! [`PatchMeta`] ([`OpenApiSchema`] reads OpenAPI v3 schemas, following their `$ref`s through
//! [`Definitions`] one at a time, as the merge reaches them). It reproduces the reference
//! down to its accidents, because clients (kubectl above all) send patches written against it:
//! - maps merge recursively and `null` deletes a key; `$patch: replace` / `$patch: delete` in a
//!   map replace it by the rest of the patch map / by `{}`;
//! - lists whose field has the `merge` strategy merge: lists of maps by their merge key (patch
//!   elements merge into the first original element with an equal key or are appended, elements
//!   `{$patch: delete, <key>: v}` remove every element with that key, `{$patch: replace}` makes
//!   the list the patch's other elements), lists of scalars are a union; other lists are replaced;
//! - `$retainKeys` drops the original's keys it does not list (whatever the field's strategy,
//!   like the reference: the `retainKeys` strategy only tells clients to send it);
//! - `$deleteFromPrimitiveList/<field>` removes values from a list (after `<field>` itself is
//!   merged, see below); `$setElementOrder/<field>` orders the merged list, patch items by the
//!   directive, server-only items kept in their relative order and interleaved the way the
//!   reference's `mergeSortedSlice` does (including its reading of the original list after
//!   in-place deletions, and Go's `sort.SliceStable` on inconsistent comparisons);
//! - values taken from the patch where the original has nothing (or a value of another JSON
//!   type) lose their `null` entries and their `$patch` maps, but elements appended to a merged
//!   list and the patch of a `replace`d map or list are taken verbatim.
//!
//! Numbers follow the apiserver's decoding: integers that fit an `int64` and other numbers
//! (`float64`) are different types, so `1` and `1.0` neither match as merge keys nor merge.
//!
//! The reference iterates Go maps, so where two keys of one patch map interact its result is
//! random; this module processes a map's keys in order, `$setElementOrder/*` first, then plain
//! keys, then `$deleteFromPrimitiveList/*`: a list and its deletion list give "merge, then
//! delete" (what the reference always does when `$setElementOrder` is present too), and of
//! several errors the first in that order is reported.
//!
//! Errors ([`Error`]) render the reference's texts (an apiserver wraps them in a 422 Status):
//! - `unknown patch type: <v> in map: <map>` (a `$patch` other than replace/delete in a map, or
//!   other than replace/delete/merge in a list);
//! - `merging lists cannot yet be specified in the patch` (`$patch: merge` in a list);
//! - `map: <map> does not contain declared merge key: <key>`;
//! - `expected a <type>, but received a <type>` (Go type names: `map[string]interface {}`,
//!   `[]interface {}`, `string`, `int64`, `float64`, `bool`, `%!s(<nil>)`);
//! - `lists of lists are not supported`, `list element types are not identical: [[..] [..]]`,
//!   `no elements in any of the given slices`;
//! - `cannot merge lists without merge key for <type>`;
//! - `invalid patch format of primitive list`, `invalid patch format of retainKeys`,
//!   `invalid patch format of setElementOrder list`;
//! - `The order in patch list:\n<list>\n doesn't match $setElementOrder list:\n<list>\n`;
//! - `value for key <index> is not a map`; `unexpected patch strategy: [..]`;
//! - `unable to find api field "<name>"` (the schema has no such field, as with the reference's
//!   OpenAPI v3 metadata);
//! - where the reference panics (an apiserver answers 500): `runtime error: hash of unhashable
//!   type <type>` (`hash of unhashable type: <type>` when looked up in an empty Go map),
//!   `runtime error: comparing uncomparable type <type>`,
//!   `runtime error: invalid memory address or nil pointer dereference`.
//!
//! Values are printed like Go's `%v` (`map[a:1 b:[x y]]`). Besides, a document that is not a
//! JSON object gives `invalid JSON document`, and one nested deeper than [`MAX_DEPTH`] levels
//! gives `nesting deeper than 100 levels` (the recursion is bounded, the reference's is not).
//!
//! Complexity: lookups by merge key and by value are hashed, the deduplication of scalar lists
//! is `O(n log n)`; only `$patch: delete` elements cost `O(n)` each, as in the reference.

use std::collections::{BTreeSet, HashMap, HashSet};

use serde_json::{Map, Value};

/// The deepest nesting of objects and arrays [`apply`] accepts in the original or the patch:
/// the merge recurses along the documents, so their depth bounds the stack it uses.
pub const MAX_DEPTH: usize = 100;

const DIRECTIVE: &str = "$patch";
const DELETE: &str = "delete";
const REPLACE: &str = "replace";
const MERGE: &str = "merge";
const RETAIN_KEYS: &str = "$retainKeys";
const RETAIN_KEYS_STRATEGY: &str = "retainKeys";
const DELETE_FROM_PRIMITIVE_LIST: &str = "$deleteFromPrimitiveList";
const SET_ELEMENT_ORDER: &str = "$setElementOrder";
const MAP_TYPE: &str = "map[string]interface {}";
const SLICE_TYPE: &str = "[]interface {}";
const NIL_DEREF: &str = "runtime error: invalid memory address or nil pointer dereference";

type Object = Map<String, Value>;

/// What SMP needs to know about a field of the object's schema: the merge of a list depends on
/// the strategy and merge key declared on its field, at any depth.
pub trait PatchMeta: Sized {
    /// The schema of a map field (a property, or additionalProperties for maps). `None` when the
    /// schema has no such field: merging into it then fails, as in the reference.
    fn field(&self, name: &str) -> Option<Self>;
    /// The schema of a list's items (called on what [`PatchMeta::field`] returned); `None` when
    /// nothing is known of them, so their own fields merge without metadata.
    fn items(&self) -> Option<Self>;
    /// `x-kubernetes-patch-strategy` split on ',' (e.g. `["merge"]`, `["retainKeys"]`,
    /// `["merge", "retainKeys"]`); empty when unset. Any other combination is an error when used.
    fn patch_strategies(&self) -> Vec<&str>;
    /// `x-kubernetes-patch-merge-key`: identifies the elements of a merged list of maps.
    fn merge_key(&self) -> Option<&str>;
    /// The type the reference names in `cannot merge lists without merge key for <type>` (its
    /// OpenAPI v3 metadata says the schema's `type`, or `Struct`).
    fn type_name(&self) -> String {
        "Struct".to_owned()
    }
}

/// Why a patch could not be applied; `Display` is the reference's text (see the module docs),
/// which an apiserver returns in the Status message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// `$patch` with an unknown value, in a map or as a list element.
    #[error("unknown patch type: {directive} in map: {map}")]
    UnknownPatchType {
        /// The directive, printed like Go's `%s`.
        directive: String,
        /// The map holding it, printed like Go's `%v`.
        map: String,
    },
    /// `$patch: merge` as a list element.
    #[error("merging lists cannot yet be specified in the patch")]
    MergeDirectiveInList,
    /// An element of a merged list (or of `$setElementOrder`) lacks the merge key.
    #[error("map: {map} does not contain declared merge key: {key}")]
    NoMergeKey {
        /// The element, printed like Go's `%v`.
        map: String,
        /// The merge key.
        key: String,
    },
    /// A value is not of the JSON type the directive or list needs.
    #[error("expected a {expected}, but received a {actual}")]
    BadArgType {
        /// Go's name of the expected type.
        expected: &'static str,
        /// Go's name of the value's type.
        actual: &'static str,
    },
    /// A merged list holds lists.
    #[error("lists of lists are not supported")]
    ListOfLists,
    /// The elements of a merged list (original and patch) are not all of one JSON type.
    #[error("list element types are not identical: {lists}")]
    MixedElementTypes {
        /// Both lists, printed like Go's `%v`.
        lists: String,
    },
    /// `$setElementOrder` for a list that is empty in both documents.
    #[error("no elements in any of the given slices")]
    NoElements,
    /// A list of maps to merge whose field declares no merge key.
    #[error("cannot merge lists without merge key for {type_name}")]
    NoMergeKeyDeclared {
        /// [`PatchMeta::type_name`] of the list's items.
        type_name: String,
    },
    /// A `$deleteFromPrimitiveList` key without `/<field>`.
    #[error("invalid patch format of primitive list")]
    BadDeleteFromPrimitiveList,
    /// `$retainKeys` not a list, or the patch sets a key it does not list.
    #[error("invalid patch format of retainKeys")]
    BadRetainKeys,
    /// A `$setElementOrder` key without `/<field>`.
    #[error("invalid patch format of setElementOrder list")]
    BadSetElementOrder,
    /// The patch list's items are not in the order `$setElementOrder` gives.
    #[error("The order in patch list:\n{patch}\n doesn't match $setElementOrder list:\n{order}\n")]
    OrderMismatch {
        /// The patch list, printed like Go's `%v`.
        patch: String,
        /// The `$setElementOrder` list, printed like Go's `%v`.
        order: String,
    },
    /// An element of `$setElementOrder` is not a map where one was looked up by merge key.
    #[error("value for key {index} is not a map")]
    NotAMap {
        /// Its index.
        index: usize,
    },
    /// `x-kubernetes-patch-strategy` is not one strategy, possibly with `retainKeys`.
    #[error("unexpected patch strategy: {strategies}")]
    UnexpectedPatchStrategy {
        /// The strategies, printed like Go's `%v`.
        strategies: String,
    },
    /// Both documents have a map or list at a field the schema does not know.
    #[error("unable to find api field \"{field}\"")]
    FieldNotFound {
        /// The field's name.
        field: String,
    },
    /// Where the reference panics (an apiserver answers 500); the text is Go's panic value.
    #[error("{0}")]
    Panic(String),
    /// The original or the patch is not a JSON object.
    #[error("invalid JSON document")]
    InvalidDocument,
    /// The original or the patch nests deeper than [`MAX_DEPTH`].
    #[error("nesting deeper than {MAX_DEPTH} levels")]
    TooDeep,
}

/// Applies a strategic merge patch to `original`; `schema` describes the object's root (None:
/// no metadata, every list replaced as in a JSON merge patch).
pub fn apply<M: PatchMeta>(
    original: &Value,
    patch: &Value,
    schema: Option<&M>,
) -> Result<Value, Error> {
    let original = root_object(original)?;
    let patch = root_object(patch)?;
    merge_map(original, patch, schema).map(Value::Object)
}

/// A document as the map the reference works on (`null` decodes to an empty one).
fn root_object(document: &Value) -> Result<Object, Error> {
    check_depth(document)?;
    match document {
        Value::Object(object) => Ok(object.clone()),
        Value::Null => Ok(Object::new()),
        _ => Err(Error::InvalidDocument),
    }
}

/// Rejects documents deeper than [`MAX_DEPTH`], without recursing.
fn check_depth(document: &Value) -> Result<(), Error> {
    let mut stack = vec![(document, 1usize)];
    while let Some((value, depth)) = stack.pop() {
        if !(value.is_array() || value.is_object()) {
            continue;
        }
        if depth > MAX_DEPTH {
            return Err(Error::TooDeep);
        }
        match value {
            Value::Array(items) => stack.extend(items.iter().map(|child| (child, depth + 1))),
            Value::Object(object) => stack.extend(object.values().map(|c| (c, depth + 1))),
            _ => {}
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Maps

/// The reference's `mergeMap`: directives of the patch map, then its fields.
fn merge_map<M: PatchMeta>(
    mut original: Object,
    mut patch: Object,
    schema: Option<&M>,
) -> Result<Object, Error> {
    if let Some(directive) = patch.get(DIRECTIVE).cloned() {
        return map_directive(&directive, patch);
    }
    apply_retain_keys(&mut original, &mut patch)?;
    merge_ordered_lists(&mut original, &mut patch, schema)?;
    let mut deletion_lists = Vec::new();
    for (key, value) in patch {
        if key.starts_with(DELETE_FROM_PRIMITIVE_LIST) {
            deletion_lists.push((key, value));
        } else {
            merge_field(&mut original, key, value, false, schema)?;
        }
    }
    for (key, value) in deletion_lists {
        let field = extract_key(&key, DELETE_FROM_PRIMITIVE_LIST)?;
        // The reference keeps the whole key when nothing follows the '/'.
        let field = if field.is_empty() {
            key.clone()
        } else {
            field.to_owned()
        };
        merge_field(&mut original, field, value, true, schema)?;
    }
    Ok(original)
}

/// `$patch` in a map: the rest of the patch replaces the original, or the map is emptied.
fn map_directive(directive: &Value, mut patch: Object) -> Result<Object, Error> {
    match directive.as_str() {
        Some(REPLACE) => {
            patch.remove(DIRECTIVE);
            Ok(patch)
        }
        Some(DELETE) => Ok(Object::new()),
        _ => Err(Error::UnknownPatchType {
            directive: go_string(directive, Verb::S),
            map: go_string_object(&patch),
        }),
    }
}

/// `$retainKeys`: the original keeps only the keys listed, and the patch may set no other.
fn apply_retain_keys(original: &mut Object, patch: &mut Object) -> Result<(), Error> {
    let Some(retain) = patch.remove(RETAIN_KEYS) else {
        return Ok(());
    };
    let Value::Array(retain) = retain else {
        return Err(Error::BadRetainKeys);
    };
    let mut keep = HashSet::new();
    for value in &retain {
        keep.insert(hash_key(value)?);
    }
    let listed = |key: &str| keep.contains(&Key::Str(key.to_owned()));
    for (key, value) in patch.iter() {
        if value.is_null()
            || key.starts_with(DELETE_FROM_PRIMITIVE_LIST)
            || key.starts_with(SET_ELEMENT_ORDER)
        {
            continue;
        }
        if !listed(key) {
            return Err(Error::BadRetainKeys);
        }
    }
    original.retain(|key, _| listed(key));
    Ok(())
}

/// Merges one patch field into the original map (the body of the reference's `mergeMap` loop);
/// `deletion_list` for the value of a `$deleteFromPrimitiveList/<key>`.
fn merge_field<M: PatchMeta>(
    original: &mut Object,
    key: String,
    patch_value: Value,
    deletion_list: bool,
    schema: Option<&M>,
) -> Result<(), Error> {
    if patch_value.is_null() {
        original.remove(&key);
        return Ok(());
    }
    let Some(current) = original.get_mut(&key) else {
        if !deletion_list {
            insert_patch_value(original, key, patch_value);
        }
        return Ok(());
    };
    if go_type(current) != go_type(&patch_value) {
        if !deletion_list {
            insert_patch_value(original, key, patch_value);
        }
        return Ok(());
    }
    match (current, patch_value) {
        (Value::Object(current), Value::Object(patch)) => {
            let meta = lookup(schema, &key, false)?;
            *current = if meta.strategy == REPLACE {
                patch
            } else {
                merge_map(std::mem::take(current), patch, meta.schema.as_ref())?
            };
        }
        (Value::Array(current), Value::Array(patch)) => {
            let meta = lookup(schema, &key, true)?;
            let (merged, _) =
                merge_list_field(std::mem::take(current), patch, &meta, deletion_list)?;
            *current = merged;
        }
        (current, patch) => *current = patch,
    }
    Ok(())
}

/// A patch value the original does not have (or has with another type): without its nulls and
/// `$patch` maps; dropped altogether when it is itself a `$patch` map.
fn insert_patch_value(original: &mut Object, key: String, mut value: Value) {
    discard_nulls(&mut value);
    match remove_directives(value) {
        Some(value) => {
            original.insert(key, value);
        }
        None => {
            original.remove(&key);
        }
    }
}

/// Removes `null` entries of maps, at any depth (not `null` list elements).
fn discard_nulls(value: &mut Value) {
    match value {
        Value::Object(object) => {
            object.retain(|_, v| !v.is_null());
            object.values_mut().for_each(discard_nulls);
        }
        Value::Array(items) => items.iter_mut().for_each(discard_nulls),
        _ => {}
    }
}

/// Removes maps holding `$patch`, at any depth; `None` when `value` is one.
fn remove_directives(value: Value) -> Option<Value> {
    match value {
        Value::Object(object) => {
            if object.contains_key(DIRECTIVE) {
                return None;
            }
            let cleaned = object
                .into_iter()
                .filter_map(|(k, v)| remove_directives(v).map(|v| (k, v)))
                .collect();
            Some(Value::Object(cleaned))
        }
        Value::Array(items) => Some(Value::Array(
            items.into_iter().filter_map(remove_directives).collect(),
        )),
        other => Some(other),
    }
}

fn has_directive(value: &Value) -> bool {
    value.get(DIRECTIVE).is_some()
}

/// The field of a `$deleteFromPrimitiveList/<field>` or `$setElementOrder/<field>` key.
fn extract_key<'k>(key: &'k str, prefix: &str) -> Result<&'k str, Error> {
    match key.split_once('/') {
        Some((head, field)) if head == prefix => Ok(field),
        _ if prefix == DELETE_FROM_PRIMITIVE_LIST => Err(Error::BadDeleteFromPrimitiveList),
        _ => Err(Error::BadSetElementOrder),
    }
}

// ---------------------------------------------------------------------------------------------
// Schema lookups

/// What the schema says of a field: its own schema (its items' for a list), the strategy other
/// than `retainKeys`, and the merge key ("" when none, like the reference).
struct FieldMeta<M> {
    schema: Option<M>,
    strategy: String,
    merge_key: String,
}

fn lookup<M: PatchMeta>(schema: Option<&M>, key: &str, list: bool) -> Result<FieldMeta<M>, Error> {
    let Some(schema) = schema else {
        return Ok(FieldMeta {
            schema: None,
            strategy: String::new(),
            merge_key: String::new(),
        });
    };
    let field = schema.field(key).ok_or_else(|| Error::FieldNotFound {
        field: key.to_owned(),
    })?;
    let strategy = strategy_besides_retain_keys(&field.patch_strategies())?;
    let merge_key = field.merge_key().unwrap_or_default().to_owned();
    let schema = if list { field.items() } else { Some(field) };
    Ok(FieldMeta {
        schema,
        strategy,
        merge_key,
    })
}

/// The reference's `extractRetainKeysPatchStrategy`, less the flag it ignores on apply.
fn strategy_besides_retain_keys(strategies: &[&str]) -> Result<String, Error> {
    let other = match strategies {
        [] | [RETAIN_KEYS_STRATEGY] => "",
        [one] => one,
        [RETAIN_KEYS_STRATEGY, other] | [other, RETAIN_KEYS_STRATEGY] => other,
        _ => {
            return Err(Error::UnexpectedPatchStrategy {
                strategies: format!("[{}]", strategies.join(" ")),
            })
        }
    };
    Ok(other.to_owned())
}

// ---------------------------------------------------------------------------------------------
// Lists

/// Merges a list field per its strategy: returns the new list and the reference's view of the
/// original list afterwards (what `$setElementOrder` orders server-only items by).
fn merge_list_field<M: PatchMeta>(
    original: Vec<Value>,
    patch: Vec<Value>,
    meta: &FieldMeta<M>,
    deletion_list: bool,
) -> Result<(Vec<Value>, Vec<Value>), Error> {
    if meta.strategy == MERGE || deletion_list {
        merge_list(
            original,
            patch,
            meta.schema.as_ref(),
            &meta.merge_key,
            deletion_list,
        )
    } else {
        Ok((patch, original))
    }
}

/// The reference's `mergeSlice`.
fn merge_list<M: PatchMeta>(
    original: Vec<Value>,
    patch: Vec<Value>,
    schema: Option<&M>,
    merge_key: &str,
    deletion_list: bool,
) -> Result<(Vec<Value>, Vec<Value>), Error> {
    if original.is_empty() && patch.is_empty() {
        return Ok((original, Vec::new()));
    }
    let kind = element_type(&original, &patch)?;
    if kind != GoType::Map {
        if deletion_list {
            let kept = delete_values(&original, &patch)?;
            return Ok((kept, original));
        }
        return merge_scalar_lists(original, patch, merge_key, kind);
    }
    if merge_key.is_empty() {
        let type_name = schema.map_or_else(|| "Struct".to_owned(), PatchMeta::type_name);
        return Err(Error::NoMergeKeyDeclared { type_name });
    }
    merge_map_lists(original, patch, schema, merge_key)
}

/// The type of all elements of both lists (the reference's `sliceElementType`).
fn element_type(original: &[Value], patch: &[Value]) -> Result<GoType, Error> {
    let mut first: Option<GoType> = None;
    for value in original.iter().chain(patch) {
        let ty = go_type(value);
        match first {
            None if ty == GoType::Nil => return Err(Error::Panic(NIL_DEREF.to_owned())),
            None if ty == GoType::Slice => return Err(Error::ListOfLists),
            None => first = Some(ty),
            Some(first) if first != ty => {
                return Err(Error::MixedElementTypes {
                    lists: format!("[{} {}]", go_list(original), go_list(patch)),
                })
            }
            Some(_) => {}
        }
    }
    first.ok_or(Error::NoElements)
}

/// `$deleteFromPrimitiveList`: the original's values that the patch does not list.
fn delete_values(original: &[Value], patch: &[Value]) -> Result<Vec<Value>, Error> {
    let mut delete = HashSet::new();
    for value in patch {
        delete.insert(hash_key(value)?);
    }
    let mut kept = Vec::with_capacity(original.len());
    for value in original {
        if !delete.contains(&hash_key(value)?) {
            kept.push(value.clone());
        }
    }
    Ok(kept)
}

/// The union of two lists of scalars, deduplicated and ordered like the reference.
fn merge_scalar_lists(
    original: Vec<Value>,
    patch: Vec<Value>,
    merge_key: &str,
    kind: GoType,
) -> Result<(Vec<Value>, Vec<Value>), Error> {
    let (merged, server_order) = if patch.is_empty() {
        // Go appends nothing, so it deduplicates the original's own array in place.
        let mut backing = original;
        let len = dedup_scalars(&mut backing)?;
        (backing[..len].to_vec(), backing)
    } else {
        let mut both = original.clone();
        both.extend(patch.iter().cloned());
        let len = dedup_scalars(&mut both)?;
        both.truncate(len);
        (both, original)
    };
    let (patch_items, server_only) = partition(merged, &patch, merge_key)?;
    let ordered = normalize_element_order(
        patch_items,
        server_only,
        &patch,
        &server_order,
        merge_key,
        kind,
    )?;
    Ok((ordered, server_order))
}

/// Go's `deduplicateScalars` (each later duplicate replaced by the current last element),
/// in `O(n log n)`: returns the new length; `values` past it keep what Go's array keeps.
fn dedup_scalars(values: &mut [Value]) -> Result<usize, Error> {
    let mut keys = Vec::with_capacity(values.len());
    let mut positions: HashMap<Key, BTreeSet<usize>> = HashMap::new();
    for (i, value) in values.iter().enumerate() {
        let key = hash_key(value)?;
        positions.entry(key.clone()).or_default().insert(i);
        keys.push(key);
    }
    let mut len = values.len();
    let mut i = 0;
    while i + 1 < len {
        while i + 1 < len {
            let last = len - 1;
            let next = positions
                .get(&keys[i])
                .and_then(|p| p.range(i + 1..=last).next().copied());
            let Some(j) = next else { break };
            if let Some(p) = positions.get_mut(&keys[i]) {
                p.remove(&j);
            }
            if j != last {
                let moved = keys[last].clone();
                if let Some(p) = positions.get_mut(&moved) {
                    p.remove(&last);
                    p.insert(j);
                }
                keys[j] = moved;
                values[j] = values[last].clone();
            }
            len -= 1;
        }
        i += 1;
    }
    Ok(len)
}

/// Merges lists of maps by merge key: `$patch` elements first, then the others.
fn merge_map_lists<M: PatchMeta>(
    original: Vec<Value>,
    patch: Vec<Value>,
    schema: Option<&M>,
    merge_key: &str,
) -> Result<(Vec<Value>, Vec<Value>), Error> {
    let original_len = original.len();
    let mut list = GoSlice {
        items: original,
        len: original_len,
    };
    let mut rest = Vec::new();
    let mut replace = false;
    for element in patch {
        let Some(directive) = element.get(DIRECTIVE) else {
            rest.push(element);
            continue;
        };
        match directive.as_str() {
            Some(DELETE) => match element.get(merge_key) {
                Some(value) => list.delete_matching(merge_key, value)?,
                None => return Err(no_merge_key(&element, merge_key)),
            },
            Some(REPLACE) => replace = true,
            Some(MERGE) => return Err(Error::MergeDirectiveInList),
            _ => {
                return Err(Error::UnknownPatchType {
                    directive: go_string(directive, Verb::S),
                    map: go_string(&element, Verb::V),
                })
            }
        }
    }
    if replace {
        let server_order = stubs(&rest, merge_key);
        let (patch_items, server_only) = partition_maps(rest, &[], merge_key)?;
        let ordered = normalize_element_order(
            patch_items,
            server_only,
            &[],
            &server_order,
            merge_key,
            GoType::Map,
        )?;
        list.items.truncate(original_len);
        return Ok((ordered, list.items));
    }
    merge_keyed_elements(list, rest, schema, merge_key, original_len)
}

/// Merges patch elements (no `$patch`) into the list: into the first element with an equal
/// merge key, else appended; then orders the result.
fn merge_keyed_elements<M: PatchMeta>(
    mut list: GoSlice,
    patch: Vec<Value>,
    schema: Option<&M>,
    merge_key: &str,
    original_len: usize,
) -> Result<(Vec<Value>, Vec<Value>), Error> {
    let kept_len = list.len;
    let mut patch_order = Vec::with_capacity(patch.len());
    let mut finder = Finder::new(&list.items[..list.len], merge_key);
    for element in patch {
        let Value::Object(element) = element else {
            return Err(bad_arg_type(MAP_TYPE, &element));
        };
        let Some(value) = element.get(merge_key) else {
            return Err(no_merge_key_object(&element, merge_key));
        };
        patch_order.push(stub(merge_key, value));
        let Some(index) = finder.find(value)? else {
            finder.add(&Value::Object(element.clone()));
            list.append(Value::Object(element));
            continue;
        };
        let before = merge_key_of(&list.items[index], merge_key);
        if let Value::Object(target) = &mut list.items[index] {
            *target = merge_map(std::mem::take(target), element, schema)?;
        }
        if merge_key_of(&list.items[index], merge_key) != before {
            finder = Finder::new(&list.items[..list.len], merge_key);
        }
    }
    let server_order = stubs(&list.items[..kept_len], merge_key);
    let view = stubs(&list.items[..original_len], merge_key);
    list.items.truncate(list.len);
    let (patch_items, server_only) = partition_maps(list.items, &patch_order, merge_key)?;
    let ordered = normalize_element_order(
        patch_items,
        server_only,
        &patch_order,
        &server_order,
        merge_key,
        GoType::Map,
    )?;
    Ok((ordered, view))
}

/// A Go slice over its backing array: deleting shifts the array left (its last slot keeping its
/// value) and appending writes past `len`, which the reference's view of the original list sees.
struct GoSlice {
    items: Vec<Value>,
    len: usize,
}

impl GoSlice {
    /// Removes every element whose merge key equals `value`, one at a time like the reference.
    fn delete_matching(&mut self, merge_key: &str, value: &Value) -> Result<(), Error> {
        let live = &self.items[..self.len];
        let target = match key_of(value) {
            Ok(target) => target,
            Err(kind) => {
                let same_kind = live
                    .iter()
                    .filter_map(|item| item.get(merge_key))
                    .any(|v| key_of(v).err() == Some(kind));
                return if same_kind {
                    Err(uncomparable(kind))
                } else {
                    Ok(())
                };
            }
        };
        let matches = |item: &Value| {
            item.get(merge_key)
                .is_some_and(|v| key_of(v).ok().as_ref() == Some(&target))
        };
        let count = live.iter().filter(|item| matches(item)).count();
        if count == 0 {
            return Ok(());
        }
        let last = live[self.len - 1].clone();
        let tail = self.items.split_off(self.len);
        self.items.retain(|item| !matches(item));
        self.items.extend(std::iter::repeat_n(last, count));
        self.items.extend(tail);
        self.len -= count;
        Ok(())
    }

    fn append(&mut self, value: Value) {
        if self.len < self.items.len() {
            self.items[self.len] = value;
        } else {
            self.items.push(value);
        }
        self.len += 1;
    }
}

/// Stand-ins for list elements where only their merge key is read again.
fn stubs(items: &[Value], merge_key: &str) -> Vec<Value> {
    items
        .iter()
        .map(|item| match item.get(merge_key) {
            Some(value) => stub(merge_key, value),
            None => Value::Object(Object::new()),
        })
        .collect()
}

fn stub(merge_key: &str, value: &Value) -> Value {
    let mut object = Object::new();
    object.insert(merge_key.to_owned(), value.clone());
    Value::Object(object)
}

fn merge_key_of(item: &Value, merge_key: &str) -> Option<Result<Key, Uncomparable>> {
    item.get(merge_key).map(key_of)
}

// ---------------------------------------------------------------------------------------------
// $setElementOrder

/// Every `$setElementOrder/<field>` of the patch map, with its list (the reference's
/// `mergePatchIntoOriginal`).
fn merge_ordered_lists<M: PatchMeta>(
    original: &mut Object,
    patch: &mut Object,
    schema: Option<&M>,
) -> Result<(), Error> {
    let keys: Vec<String> = patch
        .keys()
        .filter(|key| key.starts_with(SET_ELEMENT_ORDER))
        .cloned()
        .collect();
    for key in keys {
        let Some(order) = patch.remove(&key) else {
            continue; // removed as the list of another `$setElementOrder`
        };
        let Value::Array(order) = order else {
            return Err(bad_arg_type(SLICE_TYPE, &order));
        };
        let field = extract_key(&key, SET_ELEMENT_ORDER)?;
        merge_ordered_list(original, patch, schema, field, order)?;
    }
    Ok(())
}

/// One `$setElementOrder/<field>`: merges the field's lists (if any) and orders the result.
fn merge_ordered_list<M: PatchMeta>(
    original: &mut Object,
    patch: &mut Object,
    schema: Option<&M>,
    field: &str,
    order: Vec<Value>,
) -> Result<(), Error> {
    let original_list = take_list(original, field)?;
    let patch_list = take_list(patch, field)?;
    let meta = lookup(schema, field, true)?;
    let merge_key = meta.merge_key.as_str();
    validate_order(patch_list.as_deref().unwrap_or(&[]), &order, merge_key)?;
    let (types, merged, view) = match (original_list, patch_list) {
        (None, None) => return Ok(()),
        (Some(original_list), None) => {
            let types = element_type(&original_list, &[]);
            (types, original_list.clone(), original_list)
        }
        (None, Some(mut patch_list)) => {
            for item in patch_list.iter_mut().filter(|item| !has_directive(item)) {
                *item = remove_directives(std::mem::take(item)).unwrap_or(Value::Null);
            }
            let types = element_type(&[], &patch_list);
            let merged = patch_list.into_iter().filter(|item| !has_directive(item));
            (types, merged.collect(), Vec::new())
        }
        (Some(original_list), Some(patch_list)) => {
            let types = element_type(&original_list, &patch_list);
            let (merged, view) = merge_list_field(original_list, patch_list, &meta, false)?;
            (types, merged, view)
        }
    };
    let (patch_items, server_only) = partition(merged, &order, merge_key)?;
    let kind = types?;
    let ordered =
        normalize_element_order(patch_items, server_only, &order, &view, merge_key, kind)?;
    original.insert(field.to_owned(), Value::Array(ordered));
    Ok(())
}

/// Removes a field that must be a list, if present.
fn take_list(object: &mut Object, field: &str) -> Result<Option<Vec<Value>>, Error> {
    match object.remove(field) {
        None => Ok(None),
        Some(Value::Array(items)) => Ok(Some(items)),
        Some(other) => Err(bad_arg_type(SLICE_TYPE, &other)),
    }
}

/// The patch list's items (but deletions and other `$patch` items) must appear in
/// `$setElementOrder` in the same order (the reference's `validatePatchWithSetOrderList`).
fn validate_order(patch: &[Value], order: &[Value], merge_key: &str) -> Result<(), Error> {
    if patch.is_empty() || order.is_empty() {
        return Ok(());
    }
    let mut items = Vec::with_capacity(patch.len());
    for item in patch {
        if merge_key.is_empty() {
            items.push(item);
        } else if !item.is_object() {
            return Err(bad_arg_type(MAP_TYPE, item));
        } else if item.get(DIRECTIVE).and_then(Value::as_str) != Some(DELETE) {
            items.push(item);
        }
    }
    let (mut p, mut o) = (0, 0);
    while p < items.len() && o < order.len() {
        if has_directive(items[p]) {
            p += 1;
            continue;
        }
        if merge_key_values_equal(items[p], &order[o], merge_key)? {
            p += 1;
        }
        o += 1;
    }
    if p < items.len() && o >= order.len() {
        return Err(Error::OrderMismatch {
            patch: go_list(patch),
            order: go_list(order),
        });
    }
    Ok(())
}

fn merge_key_values_equal(left: &Value, right: &Value, merge_key: &str) -> Result<bool, Error> {
    if merge_key.is_empty() {
        return go_eq(left, right);
    }
    let (Some(l), Some(r)) = (left.as_object(), right.as_object()) else {
        let wrong = if left.is_object() { right } else { left };
        return Err(bad_arg_type(MAP_TYPE, wrong));
    };
    let Some(lv) = l.get(merge_key) else {
        return Err(no_merge_key(left, merge_key));
    };
    let Some(rv) = r.get(merge_key) else {
        return Err(no_merge_key(right, merge_key));
    };
    go_eq(lv, rv)
}

// ---------------------------------------------------------------------------------------------
// Ordering

/// Splits `merged` into the items present in `by` (the patch, or `$setElementOrder`) and the
/// others, by merge key or by value.
fn partition(
    merged: Vec<Value>,
    by: &[Value],
    merge_key: &str,
) -> Result<(Vec<Value>, Vec<Value>), Error> {
    if merge_key.is_empty() {
        let mut present = HashSet::new();
        for value in by {
            present.insert(hash_key(value)?);
        }
        let mut inside = Vec::new();
        let mut outside = Vec::new();
        for value in merged {
            if present.contains(&lookup_key(&value, present.is_empty())?) {
                inside.push(value);
            } else {
                outside.push(value);
            }
        }
        return Ok((inside, outside));
    }
    partition_maps(merged, by, merge_key)
}

fn partition_maps(
    merged: Vec<Value>,
    by: &[Value],
    merge_key: &str,
) -> Result<(Vec<Value>, Vec<Value>), Error> {
    let finder = Finder::new(by, merge_key);
    let mut inside = Vec::new();
    let mut outside = Vec::new();
    for value in merged {
        let Some(object) = value.as_object() else {
            return Err(bad_arg_type(MAP_TYPE, &value));
        };
        let Some(key) = object.get(merge_key) else {
            return Err(no_merge_key(&value, merge_key));
        };
        if finder.find(key)?.is_some() {
            inside.push(value);
        } else {
            outside.push(value);
        }
    }
    Ok((inside, outside))
}

/// Orders patch items by `patch_order` and server-only items by `server_order`, then
/// interleaves them (the reference's `normalizeElementOrder`).
fn normalize_element_order(
    patch_items: Vec<Value>,
    server_only: Vec<Value>,
    patch_order: &[Value],
    server_order: &[Value],
    merge_key: &str,
    kind: GoType,
) -> Result<Vec<Value>, Error> {
    let patch_items = sort_by_order(patch_items, patch_order, merge_key, kind)?;
    let server_only = sort_by_order(server_only, server_order, merge_key, kind)?;
    let index = OrderIndex::new(server_order, merge_key, kind);
    merge_sorted(server_only, patch_items, &index)
}

/// The reference's `normalizeSliceOrder`: a stable sort by position in `order`, where an item
/// missing from it sorts "before" anything, and `$patch: delete` maps go last.
fn sort_by_order(
    items: Vec<Value>,
    order: &[Value],
    merge_key: &str,
    kind: GoType,
) -> Result<Vec<Value>, Error> {
    let mut deletions = Vec::new();
    let mut items = items;
    if kind == GoType::Map {
        for item in items.iter().chain(order) {
            if !item.is_object() {
                return Err(bad_arg_type(MAP_TYPE, item));
            }
            if item.get(merge_key).is_none() {
                return Err(no_merge_key(item, merge_key));
            }
        }
        let is_deletion =
            |item: &Value| item.get(DIRECTIVE).and_then(Value::as_str) == Some(DELETE);
        (deletions, items) = items.into_iter().partition(is_deletion);
    }
    let index = OrderIndex::new(order, merge_key, kind);
    let mut keyed = Vec::with_capacity(items.len());
    for item in items {
        let position = index.index(&item);
        keyed.push((position, item));
    }
    if keyed.len() > 1 {
        if let Some((Err(error), _)) = keyed.iter().find(|(p, _)| p.is_err()) {
            return Err(error.clone());
        }
    }
    go_stable_sort(&mut keyed, &|a, b| match (&a.0, &b.0) {
        (Ok(Some(a)), Ok(Some(b))) => a < b,
        _ => true,
    });
    let mut sorted: Vec<Value> = keyed.into_iter().map(|(_, item)| item).collect();
    sorted.extend(deletions);
    Ok(sorted)
}

/// The reference's `mergeSortedSlice`: takes a server-only item first only when both it and
/// the next patch item are in `server_order` and it comes first there.
fn merge_sorted(
    left: Vec<Value>,
    right: Vec<Value>,
    server_order: &OrderIndex,
) -> Result<Vec<Value>, Error> {
    let mut merged = Vec::with_capacity(left.len() + right.len());
    let mut left = left.into_iter().peekable();
    let mut right = right.into_iter().peekable();
    loop {
        let take_left = match (left.peek(), right.peek()) {
            (None, None) => break,
            (Some(_), None) => true,
            (None, Some(_)) => false,
            (Some(l), Some(r)) => {
                let li = server_order.index(l)?;
                let ri = server_order.index(r)?;
                matches!((li, ri), (Some(li), Some(ri)) if li < ri)
            }
        };
        let next = if take_left { left.next() } else { right.next() };
        merged.extend(next);
    }
    Ok(merged)
}

/// Go's `sort.SliceStable` (insertion sort of blocks of 20, then `symMerge`), step for step:
/// the reference's comparison is not a strict order, so only the same algorithm gives the same
/// result.
fn go_stable_sort<T>(v: &mut [T], less: &dyn Fn(&T, &T) -> bool) {
    let n = v.len();
    let mut block = 20;
    let (mut a, mut b) = (0, block);
    while b <= n {
        insertion_sort(v, a, b, less);
        a = b;
        b += block;
    }
    insertion_sort(v, a, n, less);
    while block < n {
        a = 0;
        b = 2 * block;
        while b <= n {
            sym_merge(v, a, a + block, b, less);
            a = b;
            b += 2 * block;
        }
        let m = a + block;
        if m < n {
            sym_merge(v, a, m, n, less);
        }
        block *= 2;
    }
}

fn insertion_sort<T>(v: &mut [T], a: usize, b: usize, less: &dyn Fn(&T, &T) -> bool) {
    for i in a + 1..b {
        let mut j = i;
        while j > a && less(&v[j], &v[j - 1]) {
            v.swap(j, j - 1);
            j -= 1;
        }
    }
}

fn sym_merge<T>(v: &mut [T], a: usize, m: usize, b: usize, less: &dyn Fn(&T, &T) -> bool) {
    if m - a == 1 {
        let (mut i, mut j) = (m, b);
        while i < j {
            let h = (i + j) / 2;
            if less(&v[h], &v[a]) {
                i = h + 1;
            } else {
                j = h;
            }
        }
        for k in a..i.saturating_sub(1) {
            v.swap(k, k + 1);
        }
        return;
    }
    if b - m == 1 {
        let (mut i, mut j) = (a, m);
        while i < j {
            let h = (i + j) / 2;
            if !less(&v[m], &v[h]) {
                i = h + 1;
            } else {
                j = h;
            }
        }
        for k in (i + 1..=m).rev() {
            v.swap(k, k - 1);
        }
        return;
    }
    let mid = (a + b) / 2;
    let n = mid + m;
    let (mut start, mut r) = if m > mid { (n - b, mid) } else { (a, m) };
    let p = n - 1;
    while start < r {
        let c = (start + r) / 2;
        if !less(&v[p - c], &v[c]) {
            start = c + 1;
        } else {
            r = c;
        }
    }
    let end = n - start;
    if start < m && m < end {
        v[start..end].rotate_left(m - start);
    }
    if a < start && start < mid {
        sym_merge(v, a, start, mid, less);
    }
    if mid < end && end < b {
        sym_merge(v, mid, end, b, less);
    }
}

// ---------------------------------------------------------------------------------------------
// Go values: types, equality, hashing, printing

/// The Go type a decoded JSON value has in the reference (`int64` or `float64` for numbers).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum GoType {
    Nil,
    Bool,
    Int,
    Float,
    Str,
    Map,
    Slice,
}

fn go_type(value: &Value) -> GoType {
    match value {
        Value::Null => GoType::Nil,
        Value::Bool(_) => GoType::Bool,
        Value::Number(n) if n.is_i64() => GoType::Int,
        Value::Number(_) => GoType::Float,
        Value::String(_) => GoType::Str,
        Value::Array(_) => GoType::Slice,
        Value::Object(_) => GoType::Map,
    }
}

fn go_type_name(value: &Value) -> &'static str {
    match go_type(value) {
        GoType::Nil => "%!s(<nil>)",
        GoType::Bool => "bool",
        GoType::Int => "int64",
        GoType::Float => "float64",
        GoType::Str => "string",
        GoType::Map => MAP_TYPE,
        GoType::Slice => SLICE_TYPE,
    }
}

/// A comparable Go value, as a hash key (Go's `==` on `interface{}`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Key {
    Nil,
    Bool(bool),
    Int(i64),
    Float(u64),
    Str(String),
}

/// Go values that `==` and map keys reject at run time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Uncomparable {
    Map,
    Slice,
}

fn key_of(value: &Value) -> Result<Key, Uncomparable> {
    Ok(match value {
        Value::Null => Key::Nil,
        Value::Bool(b) => Key::Bool(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => Key::Int(i),
            None => {
                let f = n.as_f64().unwrap_or(f64::NAN);
                // 0.0 == -0.0 in Go.
                Key::Float(if f == 0.0 { 0 } else { f.to_bits() })
            }
        },
        Value::String(s) => Key::Str(s.clone()),
        Value::Array(_) => return Err(Uncomparable::Slice),
        Value::Object(_) => return Err(Uncomparable::Map),
    })
}

fn uncomparable_name(kind: Uncomparable) -> &'static str {
    match kind {
        Uncomparable::Map => MAP_TYPE,
        Uncomparable::Slice => SLICE_TYPE,
    }
}

/// The panic of `==` on two maps or two slices.
fn uncomparable(kind: Uncomparable) -> Error {
    Error::Panic(format!(
        "runtime error: comparing uncomparable type {}",
        uncomparable_name(kind)
    ))
}

/// A value as a Go map key, or the panic of using a map or slice as one.
fn hash_key(value: &Value) -> Result<Key, Error> {
    key_of(value).map_err(|kind| {
        Error::Panic(format!(
            "runtime error: hash of unhashable type {}",
            uncomparable_name(kind)
        ))
    })
}

/// A value looked up in a Go map: an empty map panics with another text.
fn lookup_key(value: &Value, map_is_empty: bool) -> Result<Key, Error> {
    match key_of(value) {
        Err(kind) if map_is_empty => Err(Error::Panic(format!(
            "hash of unhashable type: {}",
            uncomparable_name(kind)
        ))),
        _ => hash_key(value),
    }
}

/// Go's `==` on two `interface{}` values.
fn go_eq(left: &Value, right: &Value) -> Result<bool, Error> {
    match (key_of(left), key_of(right)) {
        (Ok(l), Ok(r)) => Ok(l == r),
        (Err(l), Err(r)) if l == r => Err(uncomparable(l)),
        _ => Ok(false),
    }
}

/// First positions of merge-key values in a list, for the reference's
/// `findMapInSliceBasedOnKeyValue` (an element matches when it is a map holding the key with an
/// equal value; a scan stops with an error at a non-map, or panics comparing maps or slices).
struct Finder {
    merge_key: String,
    first: HashMap<Key, usize>,
    first_non_map: Option<usize>,
    first_map_value: Option<usize>,
    first_slice_value: Option<usize>,
    len: usize,
}

impl Finder {
    fn new(items: &[Value], merge_key: &str) -> Self {
        let mut finder = Finder {
            merge_key: merge_key.to_owned(),
            first: HashMap::new(),
            first_non_map: None,
            first_map_value: None,
            first_slice_value: None,
            len: 0,
        };
        items.iter().for_each(|item| finder.add(item));
        finder
    }

    fn add(&mut self, item: &Value) {
        let position = self.len;
        self.len += 1;
        let Some(object) = item.as_object() else {
            self.first_non_map.get_or_insert(position);
            return;
        };
        let Some(value) = object.get(&self.merge_key) else {
            return;
        };
        match key_of(value) {
            Ok(key) => {
                self.first.entry(key).or_insert(position);
            }
            Err(Uncomparable::Map) => {
                self.first_map_value.get_or_insert(position);
            }
            Err(Uncomparable::Slice) => {
                self.first_slice_value.get_or_insert(position);
            }
        }
    }

    fn find(&self, value: &Value) -> Result<Option<usize>, Error> {
        let (hit, panic_at) = match key_of(value) {
            Ok(key) => (self.first.get(&key).copied(), None),
            Err(Uncomparable::Map) => (None, self.first_map_value.map(|p| (p, Uncomparable::Map))),
            Err(Uncomparable::Slice) => (
                None,
                self.first_slice_value.map(|p| (p, Uncomparable::Slice)),
            ),
        };
        let limit = |p: Option<usize>| p.unwrap_or(usize::MAX);
        let non_map = limit(self.first_non_map);
        let panics = limit(panic_at.map(|(p, _)| p));
        match panic_at {
            Some((_, kind)) if panics < non_map => Err(uncomparable(kind)),
            _ if non_map < limit(hit) => Err(Error::NotAMap { index: non_map }),
            _ => Ok(hit),
        }
    }
}

/// Positions in an order list for the reference's `index`: the merge-key value of maps (nil
/// for non-maps and maps without it), the value itself for scalars.
struct OrderIndex {
    first: HashMap<Key, usize>,
    has_map: bool,
    has_slice: bool,
    merge_key: String,
    by_key: bool,
}

impl OrderIndex {
    fn new(order: &[Value], merge_key: &str, kind: GoType) -> Self {
        let mut index = OrderIndex {
            first: HashMap::new(),
            has_map: false,
            has_slice: false,
            merge_key: merge_key.to_owned(),
            by_key: kind == GoType::Map,
        };
        for (position, item) in order.iter().enumerate() {
            match index.key(item) {
                Ok(key) => {
                    index.first.entry(key).or_insert(position);
                }
                Err(Uncomparable::Map) => index.has_map = true,
                Err(Uncomparable::Slice) => index.has_slice = true,
            }
        }
        index
    }

    fn key(&self, item: &Value) -> Result<Key, Uncomparable> {
        if !self.by_key {
            return key_of(item);
        }
        match item.as_object().and_then(|o| o.get(&self.merge_key)) {
            Some(value) => key_of(value),
            None => Ok(Key::Nil),
        }
    }

    fn index(&self, item: &Value) -> Result<Option<usize>, Error> {
        match self.key(item) {
            Ok(key) => Ok(self.first.get(&key).copied()),
            Err(Uncomparable::Map) if self.has_map => Err(uncomparable(Uncomparable::Map)),
            Err(Uncomparable::Slice) if self.has_slice => Err(uncomparable(Uncomparable::Slice)),
            Err(_) => Ok(None),
        }
    }
}

fn bad_arg_type(expected: &'static str, actual: &Value) -> Error {
    Error::BadArgType {
        expected,
        actual: go_type_name(actual),
    }
}

fn no_merge_key(map: &Value, merge_key: &str) -> Error {
    Error::NoMergeKey {
        map: go_string(map, Verb::V),
        key: merge_key.to_owned(),
    }
}

fn no_merge_key_object(map: &Object, merge_key: &str) -> Error {
    Error::NoMergeKey {
        map: go_string_object(map),
        key: merge_key.to_owned(),
    }
}

/// Go's `%v` or `%s`.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Verb {
    V,
    S,
}

fn go_string(value: &Value, verb: Verb) -> String {
    let mut out = String::new();
    if value.is_null() && verb == Verb::S {
        out.push_str("%!s(<nil>)");
    } else {
        write_go(value, verb, &mut out);
    }
    out
}

fn go_string_object(object: &Object) -> String {
    let mut out = String::new();
    write_go_object(object, Verb::V, &mut out);
    out
}

fn go_list(items: &[Value]) -> String {
    let mut out = String::from("[");
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        write_go(item, Verb::V, &mut out);
    }
    out.push(']');
    out
}

/// Go's fmt of a decoded JSON value (maps with sorted keys, `<nil>` for null in containers).
fn write_go(value: &Value, verb: Verb, out: &mut String) {
    let bad = |ty: &str, text: String, out: &mut String| match verb {
        Verb::V => out.push_str(&text),
        Verb::S => out.push_str(&format!("%!s({ty}={text})")),
    };
    match value {
        Value::Null => out.push_str("<nil>"),
        Value::Bool(b) => bad("bool", b.to_string(), out),
        Value::Number(n) => match n.as_i64() {
            Some(i) => bad("int64", i.to_string(), out),
            None => bad("float64", go_float(n.as_f64().unwrap_or(f64::NAN)), out),
        },
        Value::String(s) => out.push_str(s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                write_go(item, verb, out);
            }
            out.push(']');
        }
        Value::Object(object) => write_go_object(object, verb, out),
    }
}

fn write_go_object(object: &Object, verb: Verb, out: &mut String) {
    let mut entries: Vec<(&String, &Value)> = object.iter().collect();
    entries.sort_by(|a, b| a.0.cmp(b.0));
    out.push_str("map[");
    for (i, (key, value)) in entries.into_iter().enumerate() {
        if i > 0 {
            out.push(' ');
        }
        out.push_str(key);
        out.push(':');
        write_go(value, verb, out);
    }
    out.push(']');
}

/// Go's `%v` of a float64: shortest digits, in exponent form below 1e-4 and from 1e6 on (fmt's
/// `%g` with the shortest precision).
fn go_float(f: f64) -> String {
    if f.is_nan() {
        return "NaN".to_owned();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf" } else { "-Inf" }.to_owned();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.to_owned();
    }
    let sci = format!("{:e}", f.abs());
    let (mantissa, exponent) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let sign = if f < 0.0 { "-" } else { "" };
    if !(-4..6).contains(&exponent) {
        return format!("{sign}{}", go_exponent_form(&digits, exponent));
    }
    let dp = exponent + 1;
    let body = if dp <= 0 {
        format!("0.{}{}", "0".repeat(dp.unsigned_abs() as usize), digits)
    } else if dp as usize >= digits.len() {
        format!("{}{}", digits, "0".repeat(dp as usize - digits.len()))
    } else {
        format!("{}.{}", &digits[..dp as usize], &digits[dp as usize..])
    };
    format!("{sign}{body}")
}

fn go_exponent_form(digits: &str, exponent: i32) -> String {
    let (head, tail) = digits.split_at(1.min(digits.len()));
    let mantissa = if tail.is_empty() {
        head.to_owned()
    } else {
        format!("{head}.{tail}")
    };
    let sign = if exponent < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exponent.unsigned_abs())
}

// ---------------------------------------------------------------------------------------------
// OpenAPI v3 metadata

/// Where an [`OpenApiSchema`] finds the definitions its `$ref`s name: a document's
/// `components.schemas`, or the built-in kinds' published definitions, each decoded when a patch
/// first reaches it (so a patch costs the definitions along its paths, not the whole set).
pub trait Definitions {
    /// The schema of a definition (`io.k8s.api.core.v1.PodSpec`), if there is one.
    fn definition(&self, name: &str) -> Option<&Value>;
}

impl Definitions for Object {
    fn definition(&self, name: &str) -> Option<&Value> {
        self.get(name)
    }
}

/// [`PatchMeta`] over an OpenAPI v3 schema (`serde_json::Value`), as the reference's
/// `PatchMetaFromOpenAPIV3`: extensions are read on a field's schema as written, and
/// `allOf: [{$ref}]` / `$ref` (to `#/components/schemas/<name>`) resolved before looking into it,
/// each reference when the merge first steps into it.
/// Unlike the reference, a map's `additionalProperties` schema describes its values.
#[derive(Clone, Copy)]
pub struct OpenApiSchema<'a> {
    declared: &'a Value,
    resolved: &'a Value,
    definitions: &'a dyn Definitions,
}

impl std::fmt::Debug for OpenApiSchema<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenApiSchema")
            .field("declared", self.declared)
            .finish_non_exhaustive()
    }
}

impl<'a> OpenApiSchema<'a> {
    /// A schema whose references resolve against `definitions` (a document's
    /// `components.schemas`, or any other [`Definitions`]).
    pub fn new(schema: &'a Value, definitions: &'a dyn Definitions) -> Self {
        OpenApiSchema {
            declared: schema,
            resolved: resolve(schema, definitions),
            definitions,
        }
    }

    /// The schema named `name` in an OpenAPI v3 document (e.g. `io.k8s.api.apps.v1.Deployment`).
    pub fn from_document(document: &'a Value, name: &str) -> Option<Self> {
        let schemas = document.pointer("/components/schemas")?.as_object()?;
        Some(Self::new(schemas.get(name)?, schemas))
    }
}

/// `allOf[0]`, then one `$ref`, like the reference (an unresolvable `$ref` stays as is).
fn resolve<'a>(schema: &'a Value, definitions: &'a dyn Definitions) -> &'a Value {
    let schema = schema
        .get("allOf")
        .and_then(Value::as_array)
        .and_then(|all| all.first())
        .unwrap_or(schema);
    let Some(reference) = schema.get("$ref").and_then(Value::as_str) else {
        return schema;
    };
    let name = reference
        .strip_prefix("#/components/schemas/")
        .unwrap_or(reference);
    definitions.definition(name).unwrap_or(schema)
}

impl PatchMeta for OpenApiSchema<'_> {
    fn field(&self, name: &str) -> Option<Self> {
        let declared = match self.resolved.get("properties").and_then(|p| p.get(name)) {
            Some(property) => property,
            None => self
                .resolved
                .get("additionalProperties")
                .filter(|schema| schema.is_object())?,
        };
        Some(OpenApiSchema::new(declared, self.definitions))
    }

    fn items(&self) -> Option<Self> {
        // The reference keeps the field's (resolved) schema when it declares no items.
        match self.declared.get("items").filter(|items| items.is_object()) {
            Some(items) => Some(OpenApiSchema::new(items, self.definitions)),
            None => Some(*self),
        }
    }

    fn patch_strategies(&self) -> Vec<&str> {
        match self
            .declared
            .get("x-kubernetes-patch-strategy")
            .and_then(Value::as_str)
        {
            Some(strategies) => strategies.split(',').collect(),
            None => Vec::new(),
        }
    }

    fn merge_key(&self) -> Option<&str> {
        self.declared
            .get("x-kubernetes-patch-merge-key")
            .and_then(Value::as_str)
    }

    fn type_name(&self) -> String {
        match self.resolved.get("type") {
            Some(Value::String(ty)) => ty.clone(),
            Some(Value::Array(types)) if !types.is_empty() => {
                types.iter().filter_map(Value::as_str).collect()
            }
            _ => "Struct".to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A small Pod/Deployment-like OpenAPI v3 schema (components), exercising every strategy.
    fn components() -> Value {
        json!({
            "Root": {"type": "object", "properties": {
                "metadata": {"allOf": [{"$ref": "#/components/schemas/Meta"}]},
                "spec": {"allOf": [{"$ref": "#/components/schemas/Spec"}]}
            }},
            "Meta": {"type": "object", "properties": {
                "name": {"type": "string"},
                "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                "finalizers": {"type": "array", "items": {"type": "string"}, "x-kubernetes-patch-strategy": "merge"}
            }},
            "Spec": {"type": "object", "properties": {
                "replicas": {"type": "integer"},
                "containers": {"type": "array", "items": {"allOf": [{"$ref": "#/components/schemas/Container"}]}, "x-kubernetes-patch-strategy": "merge", "x-kubernetes-patch-merge-key": "name"},
                "ports": {"type": "array", "items": {"type": "object", "properties": {"port": {}, "protocol": {}}}, "x-kubernetes-patch-strategy": "merge", "x-kubernetes-patch-merge-key": "port"},
                "volumes": {"type": "array", "items": {"allOf": [{"$ref": "#/components/schemas/Volume"}]}, "x-kubernetes-patch-strategy": "merge,retainKeys", "x-kubernetes-patch-merge-key": "name"},
                "strategy": {"allOf": [{"$ref": "#/components/schemas/Strategy"}], "x-kubernetes-patch-strategy": "retainKeys"},
                "tolerations": {"type": "array", "items": {"type": "object", "properties": {"key": {}}}},
                "replaced": {"type": "object", "x-kubernetes-patch-strategy": "replace", "properties": {"a": {}, "b": {}}},
                "odd": {"type": "array", "items": {"type": "string"}, "x-kubernetes-patch-strategy": "merge,replace"},
                "keyless": {"type": "array", "items": {"type": "object"}, "x-kubernetes-patch-strategy": "merge"},
                "matrix": {"type": "array", "items": {"type": "array", "items": {"type": "string"}}, "x-kubernetes-patch-strategy": "merge"},
                "selector": {"type": "object", "properties": {"matchLabels": {"type": "object"}}}
            }},
            "Container": {"type": "object", "properties": {
                "name": {"type": "string"},
                "image": {"type": "string"},
                "args": {"type": "array", "items": {"type": "string"}},
                "env": {"type": "array", "items": {"type": "object", "properties": {"name": {}, "value": {}}}, "x-kubernetes-patch-strategy": "merge", "x-kubernetes-patch-merge-key": "name"}
            }},
            "Volume": {"type": "object", "properties": {
                "name": {},
                "configMap": {"type": "object", "properties": {"name": {}}},
                "emptyDir": {"type": "object"}
            }},
            "Strategy": {"type": "object", "properties": {
                "type": {},
                "rollingUpdate": {"type": "object", "properties": {"maxSurge": {}}}
            }}
        })
    }

    /// Numbers compared as float64, as the reference's JSON output does not tell `1` from `1.0`.
    fn normalize(value: &Value) -> Value {
        match value {
            Value::Number(n) => json!(n.as_f64()),
            Value::Array(items) => Value::Array(items.iter().map(normalize).collect()),
            Value::Object(o) => {
                Value::Object(o.iter().map(|(k, v)| (k.clone(), normalize(v))).collect())
            }
            other => other.clone(),
        }
    }

    fn run(original: &Value, patch: &Value, with_schema: bool) -> Result<Value, Error> {
        let components = components();
        let schemas = components.as_object().cloned().unwrap_or_default();
        let root = OpenApiSchema::new(&schemas["Root"], &schemas);
        apply(original, patch, with_schema.then_some(&root))
    }

    /// (name, with schema, original, patch, outcome): the outcomes are what the reference
    /// (apimachinery v0.36.0, `PatchMetaFromOpenAPIV3` over the same schema) returns.
    const CASES: &[(&str, bool, &str, &str, &str)] = &[
        (
            "maps_merge_and_null_deletes",
            true,
            r#"{"metadata": {"name": "n", "labels": {"a": "1", "b": "2"}}, "x": 1}"#,
            r#"{"metadata": {"labels": {"a": null, "c": "3"}}, "x": null, "y": {"z": 1}}"#,
            r#"{"ok": {"metadata": {"labels": {"b": "2", "c": "3"}, "name": "n"}, "y": {"z": 1}}}"#,
        ),
        (
            "map_patch_replace",
            true,
            r#"{"metadata": {"name": "n", "labels": {"a": "1"}}}"#,
            r#"{"metadata": {"$patch": "replace", "labels": {"b": null}}}"#,
            r#"{"ok": {"metadata": {"labels": {"b": null}}}}"#,
        ),
        (
            "map_patch_delete",
            true,
            r#"{"metadata": {"name": "n", "labels": {"a": "1"}}, "k": 1}"#,
            r#"{"metadata": {"$patch": "delete", "name": "m"}}"#,
            r#"{"ok": {"k": 1, "metadata": {}}}"#,
        ),
        (
            "map_patch_unknown",
            true,
            r#"{"metadata": {"labels": {"a": "1"}}}"#,
            r#"{"metadata": {"labels": {"$patch": "bogus", "a": "2"}}}"#,
            r#"{"err": "unknown patch type: bogus in map: map[$patch:bogus a:2]"}"#,
        ),
        (
            "map_patch_merge_is_unknown",
            true,
            r#"{"metadata": {"name": "n"}}"#,
            r#"{"metadata": {"$patch": "merge", "name": "m"}}"#,
            r#"{"err": "unknown patch type: merge in map: map[$patch:merge name:m]"}"#,
        ),
        (
            "map_patch_number_printed_like_go",
            true,
            r#"{"metadata": {"name": "n"}}"#,
            r#"{"metadata": {"$patch": 1.5, "name": 2}}"#,
            r#"{"err": "unknown patch type: %!s(float64=1.5) in map: map[$patch:1.5 name:2]"}"#,
        ),
        (
            "root_patch_replace",
            true,
            r#"{"a": 1, "b": 2}"#,
            r#"{"$patch": "replace", "c": {"d": null}}"#,
            r#"{"ok": {"c": {"d": null}}}"#,
        ),
        (
            "list_merge_update_and_append",
            true,
            r#"{"spec": {"containers": [{"name": "a", "image": "1"}, {"name": "b", "image": "1"}]}}"#,
            r#"{"spec": {"containers": [{"name": "b", "image": "2"}, {"name": "c", "image": "3"}]}}"#,
            r#"{"ok": {"spec": {"containers": [{"image": "1", "name": "a"}, {"image": "2", "name": "b"}, {"image": "3", "name": "c"}]}}}"#,
        ),
        (
            "list_merge_nested_env",
            true,
            r#"{"spec": {"containers": [{"name": "a", "env": [{"name": "E1", "value": "1"}, {"name": "E2", "value": "2"}]}]}}"#,
            r#"{"spec": {"containers": [{"name": "a", "env": [{"name": "E2", "value": "x"}, {"name": "E0", "value": "0"}]}]}}"#,
            r#"{"ok": {"spec": {"containers": [{"env": [{"name": "E1", "value": "1"}, {"name": "E2", "value": "x"}, {"name": "E0", "value": "0"}], "name": "a"}]}}}"#,
        ),
        (
            "list_delete_element",
            true,
            r#"{"spec": {"containers": [{"name": "a"}, {"name": "b"}, {"name": "a"}, {"name": "c"}]}}"#,
            r#"{"spec": {"containers": [{"$patch": "delete", "name": "a"}]}}"#,
            r#"{"ok": {"spec": {"containers": [{"name": "b"}, {"name": "c"}]}}}"#,
        ),
        (
            "list_replace_element",
            true,
            r#"{"spec": {"containers": [{"name": "a"}, {"name": "b"}]}}"#,
            r#"{"spec": {"containers": [{"name": "c", "x": null}, {"$patch": "replace"}]}}"#,
            r#"{"ok": {"spec": {"containers": [{"name": "c", "x": null}]}}}"#,
        ),
        (
            "list_merge_element_rejected",
            true,
            r#"{"spec": {"containers": [{"name": "a"}]}}"#,
            r#"{"spec": {"containers": [{"$patch": "merge"}]}}"#,
            r#"{"err": "merging lists cannot yet be specified in the patch"}"#,
        ),
        (
            "list_unknown_element_directive",
            true,
            r#"{"spec": {"containers": [{"name": "a"}]}}"#,
            r#"{"spec": {"containers": [{"$patch": true, "name": "a"}]}}"#,
            r#"{"err": "unknown patch type: %!s(bool=true) in map: map[$patch:true name:a]"}"#,
        ),
        (
            "list_element_without_merge_key",
            true,
            r#"{"spec": {"containers": [{"name": "a"}]}}"#,
            r#"{"spec": {"containers": [{"image": "x"}]}}"#,
            r#"{"err": "map: map[image:x] does not contain declared merge key: name"}"#,
        ),
        (
            "delete_element_without_merge_key",
            true,
            r#"{"spec": {"containers": [{"name": "a"}]}}"#,
            r#"{"spec": {"containers": [{"$patch": "delete"}]}}"#,
            r#"{"err": "map: map[$patch:delete] does not contain declared merge key: name"}"#,
        ),
        (
            "appended_element_verbatim",
            true,
            r#"{"spec": {"containers": [{"name": "a"}]}}"#,
            r#"{"spec": {"containers": [{"name": "b", "image": null, "env": [{"name": "E", "$patch": "delete"}]}]}}"#,
            r#"{"ok": {"spec": {"containers": [{"env": [{"$patch": "delete", "name": "E"}], "image": null, "name": "b"}, {"name": "a"}]}}}"#,
        ),
        (
            "new_value_without_nulls_and_directives",
            true,
            r#"{"spec": {}}"#,
            r#"{"spec": {"containers": [{"name": "a", "image": null, "env": [{"name": "E", "$patch": "delete"}, {"name": "F"}]}, {"$patch": "delete", "name": "x"}]}}"#,
            r#"{"ok": {"spec": {"containers": [{"env": [{"name": "F"}], "name": "a"}]}}}"#,
        ),
        (
            "new_directive_map_dropped",
            true,
            r#"{"metadata": {"name": "n"}}"#,
            r#"{"metadata": {"labels": {"$patch": "replace", "a": "1"}}, "other": {"$patch": "delete"}}"#,
            r#"{"ok": {"metadata": {"name": "n"}}}"#,
        ),
        (
            "type_change_replaces",
            true,
            r#"{"spec": {"replicas": 1, "containers": [{"name": "a"}]}}"#,
            r#"{"spec": {"replicas": 1.0, "containers": {"name": "a", "x": null}}}"#,
            r#"{"ok": {"spec": {"containers": {"name": "a"}, "replicas": 1}}}"#,
        ),
        (
            "int_and_float_keys_differ",
            true,
            r#"{"spec": {"ports": [{"port": 80}]}}"#,
            r#"{"spec": {"ports": [{"port": 80.0, "protocol": "TCP"}]}}"#,
            r#"{"ok": {"spec": {"ports": [{"port": 80, "protocol": "TCP"}, {"port": 80}]}}}"#,
        ),
        (
            "primitive_union_dedup",
            true,
            r#"{"metadata": {"finalizers": ["a", "b", "a"]}}"#,
            r#"{"metadata": {"finalizers": ["c", "a", "c"]}}"#,
            r#"{"ok": {"metadata": {"finalizers": ["c", "a", "b"]}}}"#,
        ),
        (
            "primitive_dedup_in_place",
            true,
            r#"{"metadata": {"finalizers": ["a", "b", "a", "c", "d"]}}"#,
            r#"{"metadata": {"finalizers": []}}"#,
            r#"{"ok": {"metadata": {"finalizers": ["a", "b", "d", "c"]}}}"#,
        ),
        (
            "delete_from_primitive_list",
            true,
            r#"{"metadata": {"finalizers": ["a", "b", "c", "b"]}}"#,
            r#"{"metadata": {"$deleteFromPrimitiveList/finalizers": ["b", "x"]}}"#,
            r#"{"ok": {"metadata": {"finalizers": ["a", "c"]}}}"#,
        ),
        (
            "delete_from_primitive_list_with_additions",
            true,
            r#"{"metadata": {"finalizers": ["a", "b", "c"]}}"#,
            r#"{"metadata": {"finalizers": ["d"], "$deleteFromPrimitiveList/finalizers": ["b"]}}"#,
            r#"{"ok": {"metadata": {"finalizers": ["d", "a", "c"]}}}"#,
        ),
        (
            "delete_from_missing_list_is_noop",
            true,
            r#"{"metadata": {"name": "n"}}"#,
            r#"{"metadata": {"$deleteFromPrimitiveList/finalizers": ["b"]}}"#,
            r#"{"ok": {"metadata": {"name": "n"}}}"#,
        ),
        (
            "delete_from_primitive_list_null_deletes_field",
            true,
            r#"{"metadata": {"finalizers": ["a"]}}"#,
            r#"{"metadata": {"$deleteFromPrimitiveList/finalizers": null}}"#,
            r#"{"ok": {"metadata": {}}}"#,
        ),
        (
            "bad_delete_from_primitive_list_key",
            true,
            r#"{"metadata": {"finalizers": ["a"]}}"#,
            r#"{"metadata": {"$deleteFromPrimitiveListfinalizers": ["a"]}}"#,
            r#"{"err": "invalid patch format of primitive list"}"#,
        ),
        (
            "list_without_strategy_replaced",
            true,
            r#"{"spec": {"tolerations": [{"key": "a"}, {"key": "b"}]}}"#,
            r#"{"spec": {"tolerations": [{"key": "c", "$patch": "delete"}]}}"#,
            r#"{"ok": {"spec": {"tolerations": [{"$patch": "delete", "key": "c"}]}}}"#,
        ),
        (
            "replace_strategy_map_verbatim",
            true,
            r#"{"spec": {"replaced": {"a": 1, "b": 2}}}"#,
            r#"{"spec": {"replaced": {"a": null, "c": {"$patch": "delete"}}}}"#,
            r#"{"ok": {"spec": {"replaced": {"a": null, "c": {"$patch": "delete"}}}}}"#,
        ),
        (
            "retain_keys_drops_unlisted",
            true,
            r#"{"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}}"#,
            r#"{"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}"#,
            r#"{"ok": {"spec": {"strategy": {"type": "Recreate"}}}}"#,
        ),
        (
            "retain_keys_in_list_element",
            true,
            r#"{"spec": {"volumes": [{"name": "v", "configMap": {"name": "c"}}]}}"#,
            r#"{"spec": {"volumes": [{"name": "v", "emptyDir": {}, "$retainKeys": ["name", "emptyDir"]}]}}"#,
            r#"{"ok": {"spec": {"volumes": [{"emptyDir": {}, "name": "v"}]}}}"#,
        ),
        (
            "retain_keys_must_list_patch_keys",
            true,
            r#"{"spec": {"strategy": {"type": "A"}}}"#,
            r#"{"spec": {"strategy": {"$retainKeys": ["type"], "rollingUpdate": {}}}}"#,
            r#"{"err": "invalid patch format of retainKeys"}"#,
        ),
        (
            "retain_keys_not_a_list",
            true,
            r#"{"spec": {"strategy": {"type": "A"}}}"#,
            r#"{"spec": {"strategy": {"$retainKeys": "type"}}}"#,
            r#"{"err": "invalid patch format of retainKeys"}"#,
        ),
        (
            "retain_keys_unhashable",
            true,
            r#"{"spec": {"strategy": {"type": "A"}}}"#,
            r#"{"spec": {"strategy": {"$retainKeys": [{"a": 1}]}}}"#,
            r#"{"panic": "runtime error: hash of unhashable type map[string]interface {}"}"#,
        ),
        (
            "set_element_order_reorders",
            true,
            r#"{"spec": {"containers": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}}"#,
            r#"{"spec": {"$setElementOrder/containers": [{"name": "c"}, {"name": "a"}, {"name": "b"}]}}"#,
            r#"{"ok": {"spec": {"containers": [{"name": "c"}, {"name": "a"}, {"name": "b"}]}}}"#,
        ),
        (
            "set_element_order_server_only_and_deletion",
            true,
            r#"{"spec": {"containers": [{"name": "a", "image": "x"}, {"name": "s"}, {"name": "b"}]}}"#,
            r#"{"spec": {"$setElementOrder/containers": [{"name": "a"}, {"name": "d"}], "containers": [{"name": "d", "image": "y"}, {"$patch": "delete", "name": "b"}]}}"#,
            r#"{"ok": {"spec": {"containers": [{"image": "x", "name": "a"}, {"name": "s"}, {"image": "y", "name": "d"}]}}}"#,
        ),
        (
            "set_element_order_server_only_interleaved",
            true,
            r#"{"spec": {"containers": [{"name": "s1"}, {"name": "a"}, {"name": "s2"}, {"name": "b"}, {"name": "s3"}]}}"#,
            r#"{"spec": {"$setElementOrder/containers": [{"name": "b"}, {"name": "n"}, {"name": "a"}], "containers": [{"name": "n"}]}}"#,
            r#"{"ok": {"spec": {"containers": [{"name": "s1"}, {"name": "s2"}, {"name": "b"}, {"name": "n"}, {"name": "a"}, {"name": "s3"}]}}}"#,
        ),
        (
            "set_element_order_new_list",
            true,
            r#"{"spec": {}}"#,
            r#"{"spec": {"$setElementOrder/containers": [{"name": "b"}, {"name": "a"}], "containers": [{"name": "b"}, {"name": "a", "x": null}, {"name": "c", "$patch": "delete"}]}}"#,
            r#"{"ok": {"spec": {"containers": [{"name": "b"}, {"name": "a", "x": null}]}}}"#,
        ),
        (
            "set_element_order_primitives",
            true,
            r#"{"metadata": {"finalizers": ["a", "b", "c"]}}"#,
            r#"{"metadata": {"$setElementOrder/finalizers": ["c", "x", "a"], "finalizers": ["x"], "$deleteFromPrimitiveList/finalizers": ["b"]}}"#,
            r#"{"ok": {"metadata": {"finalizers": ["c", "x", "a"]}}}"#,
        ),
        (
            "set_element_order_mismatch",
            true,
            r#"{"spec": {"containers": [{"name": "a"}, {"name": "b"}]}}"#,
            r#"{"spec": {"$setElementOrder/containers": [{"name": "a"}, {"name": "b"}], "containers": [{"name": "b"}, {"name": "a"}]}}"#,
            r#"{"err": "The order in patch list:\n[map[name:b] map[name:a]]\n doesn't match $setElementOrder list:\n[map[name:a] map[name:b]]\n"}"#,
        ),
        (
            "set_element_order_not_a_list",
            true,
            r#"{"spec": {"containers": [{"name": "a"}]}}"#,
            r#"{"spec": {"$setElementOrder/containers": {"name": "a"}}}"#,
            r#"{"err": "expected a []interface {}, but received a map[string]interface {}"}"#,
        ),
        (
            "set_element_order_bad_key",
            true,
            r#"{"spec": {"containers": [{"name": "a"}]}}"#,
            r#"{"spec": {"$setElementOrder": [{"name": "a"}]}}"#,
            r#"{"err": "invalid patch format of setElementOrder list"}"#,
        ),
        (
            "set_element_order_field_not_a_list",
            true,
            r#"{"spec": {"containers": {"name": "a"}}}"#,
            r#"{"spec": {"$setElementOrder/containers": []}}"#,
            r#"{"err": "expected a []interface {}, but received a map[string]interface {}"}"#,
        ),
        (
            "set_element_order_empty_lists",
            true,
            r#"{"spec": {"containers": []}}"#,
            r#"{"spec": {"$setElementOrder/containers": [{"name": "a"}]}}"#,
            r#"{"err": "no elements in any of the given slices"}"#,
        ),
        (
            "set_element_order_item_not_a_map",
            true,
            r#"{"spec": {"containers": [{"name": "a"}]}}"#,
            r#"{"spec": {"$setElementOrder/containers": ["a"], "containers": [{"name": "a"}]}}"#,
            r#"{"err": "expected a map[string]interface {}, but received a string"}"#,
        ),
        (
            "set_element_order_maps_without_merge_key",
            true,
            r#"{"spec": {"tolerations": [{"key": "a"}]}}"#,
            r#"{"spec": {"$setElementOrder/tolerations": [{"key": "a"}]}}"#,
            r#"{"panic": "runtime error: hash of unhashable type map[string]interface {}"}"#,
        ),
        (
            "set_element_order_unknown_field",
            true,
            r#"{"spec": {"containers": [{"name": "a"}]}}"#,
            r#"{"spec": {"$setElementOrder/sidecars": []}}"#,
            r#"{"err": "unable to find api field \"sidecars\""}"#,
        ),
        (
            "unknown_field_when_both_maps",
            true,
            r#"{"spec": {"extra": {"a": 1}}}"#,
            r#"{"spec": {"extra": {"b": 2}}}"#,
            r#"{"err": "unable to find api field \"extra\""}"#,
        ),
        (
            "unknown_field_replaced_when_types_differ",
            true,
            r#"{"spec": {"extra": {"a": 1}}}"#,
            r#"{"spec": {"extra": [1]}}"#,
            r#"{"ok": {"spec": {"extra": [1]}}}"#,
        ),
        (
            "unexpected_patch_strategy",
            true,
            r#"{"spec": {"odd": ["a"]}}"#,
            r#"{"spec": {"odd": ["b"]}}"#,
            r#"{"err": "unexpected patch strategy: [merge replace]"}"#,
        ),
        (
            "lists_of_lists",
            true,
            r#"{"spec": {"matrix": [["a"]]}}"#,
            r#"{"spec": {"matrix": [["b"]]}}"#,
            r#"{"err": "lists of lists are not supported"}"#,
        ),
        (
            "mixed_element_types",
            true,
            r#"{"metadata": {"finalizers": ["a", 1]}}"#,
            r#"{"metadata": {"finalizers": ["b"]}}"#,
            r#"{"err": "list element types are not identical: [[a 1] [b]]"}"#,
        ),
        (
            "null_first_element",
            true,
            r#"{"metadata": {"finalizers": [null, "a"]}}"#,
            r#"{"metadata": {"finalizers": ["b"]}}"#,
            r#"{"panic": "runtime error: invalid memory address or nil pointer dereference"}"#,
        ),
        (
            "no_merge_key_declared",
            true,
            r#"{"spec": {"keyless": [{"a": 1}]}}"#,
            r#"{"spec": {"keyless": [{"a": 2}]}}"#,
            r#"{"err": "cannot merge lists without merge key for object"}"#,
        ),
        (
            "uncomparable_merge_keys",
            true,
            r#"{"spec": {"containers": [{"name": {"x": 1}}]}}"#,
            r#"{"spec": {"containers": [{"name": {"x": 1}}]}}"#,
            r#"{"panic": "runtime error: comparing uncomparable type map[string]interface {}"}"#,
        ),
        (
            "no_schema_replaces_lists",
            false,
            r#"{"metadata": {"finalizers": ["a"]}, "spec": {"containers": [{"name": "a"}]}}"#,
            r#"{"metadata": {"finalizers": ["b"]}, "spec": {"containers": [{"name": "b"}]}}"#,
            r#"{"ok": {"metadata": {"finalizers": ["b"]}, "spec": {"containers": [{"name": "b"}]}}}"#,
        ),
        (
            "no_schema_deletion_list_of_maps",
            false,
            r#"{"spec": {"containers": [{"name": "a"}]}}"#,
            r#"{"spec": {"$deleteFromPrimitiveList/containers": [{"name": "a"}]}}"#,
            r#"{"err": "cannot merge lists without merge key for Struct"}"#,
        ),
        (
            "long_list_order_and_server_only",
            true,
            r#"{"spec": {"containers": [{"name": "c00"}, {"name": "c01"}, {"name": "c02"}, {"name": "c03"}, {"name": "c04"}, {"name": "c05"}, {"name": "c06"}, {"name": "c07"}, {"name": "c08"}, {"name": "c09"}, {"name": "c10"}, {"name": "c11"}, {"name": "c12"}, {"name": "c13"}, {"name": "c14"}, {"name": "c15"}, {"name": "c16"}, {"name": "c17"}, {"name": "c18"}, {"name": "c19"}, {"name": "c20"}, {"name": "c21"}, {"name": "c22"}, {"name": "c23"}, {"name": "c24"}, {"name": "c25"}, {"name": "c26"}, {"name": "c27"}, {"name": "c28"}, {"name": "c29"}, {"name": "c30"}, {"name": "c31"}, {"name": "c32"}, {"name": "c33"}, {"name": "c34"}, {"name": "c35"}, {"name": "c36"}, {"name": "c37"}, {"name": "c38"}, {"name": "c39"}, {"name": "c40"}, {"name": "c41"}, {"name": "c42"}, {"name": "c43"}, {"name": "c44"}]}}"#,
            r#"{"spec": {"$setElementOrder/containers": [{"name": "c42"}, {"name": "c39"}, {"name": "c36"}, {"name": "c33"}, {"name": "c30"}, {"name": "c27"}, {"name": "c24"}, {"name": "c21"}, {"name": "c18"}, {"name": "c15"}, {"name": "c12"}, {"name": "c09"}, {"name": "c06"}, {"name": "c03"}, {"name": "c00"}, {"name": "new"}], "containers": [{"name": "new"}, {"$patch": "delete", "name": "c01"}, {"$patch": "delete", "name": "c06"}, {"$patch": "delete", "name": "c11"}, {"$patch": "delete", "name": "c16"}, {"$patch": "delete", "name": "c21"}, {"$patch": "delete", "name": "c26"}, {"$patch": "delete", "name": "c31"}, {"$patch": "delete", "name": "c36"}, {"$patch": "delete", "name": "c41"}]}}"#,
            r#"{"ok": {"spec": {"containers": [{"name": "c02"}, {"name": "c04"}, {"name": "c05"}, {"name": "c07"}, {"name": "c08"}, {"name": "c10"}, {"name": "c13"}, {"name": "c14"}, {"name": "c17"}, {"name": "c19"}, {"name": "c20"}, {"name": "c22"}, {"name": "c23"}, {"name": "c25"}, {"name": "c28"}, {"name": "c29"}, {"name": "c32"}, {"name": "c34"}, {"name": "c35"}, {"name": "c37"}, {"name": "c38"}, {"name": "c40"}, {"name": "c42"}, {"name": "c39"}, {"name": "c33"}, {"name": "c30"}, {"name": "c27"}, {"name": "c24"}, {"name": "c18"}, {"name": "c15"}, {"name": "c12"}, {"name": "c09"}, {"name": "c03"}, {"name": "c00"}, {"name": "c43"}, {"name": "c44"}, {"name": "new"}]}}}"#,
        ),
        (
            "set_element_order_empty_order_new_items",
            true,
            r#"{"spec": {"containers": [{"name": "c00"}, {"name": "c01"}, {"name": "c02"}, {"name": "c03"}, {"name": "c04"}, {"name": "c05"}, {"name": "c06"}, {"name": "c07"}, {"name": "c08"}, {"name": "c09"}, {"name": "c10"}, {"name": "c11"}, {"name": "c12"}, {"name": "c13"}, {"name": "c14"}, {"name": "c15"}, {"name": "c16"}, {"name": "c17"}, {"name": "c18"}, {"name": "c19"}, {"name": "c20"}, {"name": "c21"}, {"name": "c22"}, {"name": "c23"}, {"name": "c24"}]}}"#,
            r#"{"spec": {"$setElementOrder/containers": [], "containers": [{"name": "z0"}, {"name": "z1"}, {"name": "z2"}, {"$patch": "delete", "name": "c03"}]}}"#,
            r#"{"ok": {"spec": {"containers": [{"name": "c00"}, {"name": "c01"}, {"name": "c02"}, {"name": "c04"}, {"name": "c05"}, {"name": "c06"}, {"name": "c07"}, {"name": "c08"}, {"name": "c09"}, {"name": "c10"}, {"name": "c11"}, {"name": "c12"}, {"name": "c13"}, {"name": "c14"}, {"name": "c15"}, {"name": "c16"}, {"name": "c17"}, {"name": "c18"}, {"name": "c19"}, {"name": "c20"}, {"name": "c21"}, {"name": "c22"}, {"name": "c23"}, {"name": "c24"}, {"name": "z2"}, {"name": "z1"}, {"name": "z0"}]}}}"#,
        ),
    ];

    #[test]
    fn table_matches_reference() {
        for (name, with_schema, original, patch, outcome) in CASES {
            let parse = |text: &str| serde_json::from_str::<Value>(text).expect(name);
            let (original, patch, outcome) = (parse(original), parse(patch), parse(outcome));
            let got = run(&original, &patch, *with_schema);
            match (&got, outcome.as_object().and_then(|o| o.iter().next())) {
                (Ok(value), Some((kind, expected))) if kind == "ok" => {
                    assert_eq!(normalize(value), normalize(expected), "{name}")
                }
                (Err(Error::Panic(text)), Some((kind, expected))) if kind == "panic" => {
                    assert_eq!(text, expected.as_str().unwrap_or_default(), "{name}")
                }
                (Err(error), Some((kind, expected))) if kind == "err" => {
                    assert!(!matches!(error, Error::Panic(_)), "{name}");
                    assert_eq!(
                        error.to_string(),
                        expected.as_str().unwrap_or_default(),
                        "{name}"
                    )
                }
                _ => panic!("{name}: got {got:?}, want {outcome}"),
            }
        }
    }

    #[test]
    fn numbers_keep_their_go_type() {
        let original = json!({"spec": {"replicas": 1}});
        let got = run(&original, &json!({"spec": {"replicas": 2.0}}), true);
        assert_eq!(got, Ok(json!({"spec": {"replicas": 2.0}})));
        let got = run(
            &original,
            &json!({"spec": {"replicas": 18446744073709551615u64}}),
            true,
        );
        assert_eq!(got.map(|v| v["spec"]["replicas"].is_u64()), Ok(true));
    }

    #[test]
    fn documents_must_be_objects() {
        let original = json!({"a": 1});
        assert_eq!(run(&original, &Value::Null, true), Ok(original.clone()));
        assert_eq!(run(&Value::Null, &original, true), Ok(original.clone()));
        assert_eq!(
            run(&original, &json!([1]), true),
            Err(Error::InvalidDocument)
        );
        assert_eq!(
            run(&json!("x"), &original, true),
            Err(Error::InvalidDocument)
        );
        assert_eq!(Error::InvalidDocument.to_string(), "invalid JSON document");
    }

    fn nested(depth: usize) -> Value {
        (1..depth).fold(json!({}), |inner, _| json!({ "a": inner }))
    }

    #[test]
    fn depth_is_bounded() {
        let deep = nested(MAX_DEPTH);
        assert_eq!(run(&deep, &deep, false), Ok(deep.clone()));
        let deeper = nested(MAX_DEPTH + 1);
        assert_eq!(run(&json!({}), &deeper, false), Err(Error::TooDeep));
        assert_eq!(run(&deeper, &json!({}), false), Err(Error::TooDeep));
        let list = json!({ "a": [nested(MAX_DEPTH - 2)] });
        assert_eq!(run(&json!({}), &list, false), Ok(list.clone()));
        assert_eq!(Error::TooDeep.to_string(), "nesting deeper than 100 levels");
    }

    #[test]
    fn additional_properties_describe_map_values() {
        // The reference's OpenAPI metadata finds no field in a map and fails; this describes
        // its values by `additionalProperties`.
        let schemas = json!({
            "Root": {"type": "object", "properties": {"pods": {"type": "object", "additionalProperties": {
                "type": "array", "items": {"type": "object"},
                "x-kubernetes-patch-strategy": "merge", "x-kubernetes-patch-merge-key": "name"
            }}}}
        });
        let schemas = schemas.as_object().cloned().unwrap_or_default();
        let root = OpenApiSchema::new(&schemas["Root"], &schemas);
        let original = json!({"pods": {"p": [{"name": "a", "x": 1}]}});
        let patch = json!({"pods": {"p": [{"name": "a", "y": 2}, {"name": "b"}]}});
        let got = apply(&original, &patch, Some(&root));
        assert_eq!(
            got,
            Ok(json!({"pods": {"p": [{"name": "a", "x": 1, "y": 2}, {"name": "b"}]}}))
        );
    }

    #[test]
    fn openapi_metadata() {
        let document = json!({"components": {"schemas": {
            "Pod": {"properties": {
                "list": {"type": "array", "items": {"$ref": "#/components/schemas/Item"},
                         "x-kubernetes-patch-strategy": "merge,retainKeys", "x-kubernetes-patch-merge-key": "k"},
                "bare": {"allOf": [{"$ref": "#/components/schemas/Item"}]}
            }},
            "Item": {"type": "object", "properties": {"k": {"type": "string"}}}
        }}});
        let pod = OpenApiSchema::from_document(&document, "Pod");
        let Some(pod) = pod else { panic!("no Pod") };
        assert!(OpenApiSchema::from_document(&document, "Nope").is_none());
        let Some(list) = pod.field("list") else {
            panic!("no list")
        };
        assert_eq!(list.patch_strategies(), vec!["merge", "retainKeys"]);
        assert_eq!(list.merge_key(), Some("k"));
        assert_eq!(
            list.items().map(|i| i.type_name()),
            Some("object".to_owned())
        );
        assert!(list.items().and_then(|i| i.field("k")).is_some());
        let Some(bare) = pod.field("bare") else {
            panic!("no bare")
        };
        assert!(bare.patch_strategies().is_empty());
        assert_eq!(bare.merge_key(), None);
        // Without `items`, the reference keeps the field's own (resolved) schema.
        assert!(bare.items().and_then(|i| i.field("k")).is_some());
        assert!(pod.field("missing").is_none());
    }

    /// Go's `deduplicateScalars`, literally.
    fn go_dedup(values: &mut [Value]) -> usize {
        let mut length = values.len() as isize - 1;
        let mut i = 0isize;
        while i < length {
            let mut j = i + 1;
            while j <= length {
                if values[i as usize] == values[j as usize] {
                    values[j as usize] = values[length as usize].clone();
                    length -= 1;
                    j -= 1;
                }
                j += 1;
            }
            i += 1;
        }
        (length + 1) as usize
    }

    #[test]
    fn dedup_matches_go() {
        let mut seed = 7u64;
        let mut next = move |n: u64| {
            seed = seed
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        for _ in 0..2000 {
            let len = next(12) as usize;
            let alphabet = 1 + next(6);
            let values: Vec<Value> = (0..len).map(|_| json!(next(alphabet))).collect();
            let (mut ours, mut theirs) = (values.clone(), values.clone());
            let n = dedup_scalars(&mut ours);
            assert_eq!(n, Ok(go_dedup(&mut theirs)), "{values:?}");
            assert_eq!(ours, theirs, "{values:?}");
        }
    }

    #[test]
    fn go_sort_is_stable_for_consistent_orders() {
        let mut items: Vec<(u32, usize)> = (0..100).map(|i| ((i * 37 % 11) as u32, i)).collect();
        let mut expected = items.clone();
        expected.sort_by_key(|(k, _)| *k);
        go_stable_sort(&mut items, &|a, b| a.0 < b.0);
        assert_eq!(items, expected);
    }

    #[test]
    fn floats_print_like_go() {
        let cases = [
            (1.5, "1.5"),
            (1e6, "1e+06"),
            (123456.0, "123456"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (-2.5e-7, "-2.5e-07"),
            (1e21, "1e+21"),
            (1.8446744073709552e19, "1.8446744073709552e+19"),
            (100.0, "100"),
            (-0.0, "-0"),
        ];
        for (f, text) in cases {
            assert_eq!(go_float(f), text);
        }
    }

    #[test]
    fn large_lists_stay_fast() {
        let names: Vec<Value> = (0..5000)
            .map(|i| json!({ "name": format!("c{i}") }))
            .collect();
        let finalizers: Vec<Value> = (0..20000)
            .map(|i| json!(format!("f{}", i % 7000)))
            .collect();
        let original =
            json!({"metadata": {"finalizers": finalizers}, "spec": {"containers": names}});
        let order: Vec<Value> = (0..5000)
            .rev()
            .step_by(2)
            .map(|i| json!({ "name": format!("c{i}") }))
            .collect();
        let patch = json!({
            "metadata": {"finalizers": ["x"], "$deleteFromPrimitiveList/finalizers": ["f1"]},
            "spec": {"$setElementOrder/containers": order, "containers": [{"name": "c3", "$patch": "delete"}]}
        });
        let started = std::time::Instant::now();
        let got = run(&original, &patch, true);
        assert!(started.elapsed() < std::time::Duration::from_secs(20));
        let got = got.unwrap_or_default();
        assert_eq!(
            got["spec"]["containers"].as_array().map(Vec::len),
            Some(4999)
        );
        assert_eq!(
            got["metadata"]["finalizers"].as_array().map(Vec::len),
            Some(7000)
        );
    }
}
