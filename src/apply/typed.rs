//! The typed operations of structured-merge-diff (`typed` package) over JSON values and a view of
//! the compiled structural schema: `ToFieldSet`, `Merge`, `Compare`, `RemoveItems` and
//! `EnsureNamedFieldsAreMembers`.
//!
//! The schema view follows kube-openapi's `schemaconv` (how the apiserver turns a CRD schema into
//! an smd schema): `type: object` is a map (granular unless `x-kubernetes-map-type: atomic`) whose
//! declared properties are "named fields"; unknown keys use `additionalProperties`, or are deduced
//! when the object preserves unknown fields or declares no properties; a node without `type` may
//! hold anything; lists are atomic unless `x-kubernetes-list-type` is `set` or `map`; a list
//! without `items` holds atomic values. `metadata` at the root is ObjectMeta (labels/annotations
//! granular maps, finalizers a set, ownerReferences a map list keyed by uid, the rest scalars).
//! Deduced values (no schema) are maps merged per key and atomic lists.
//!
//! Where smd fails with a typed-conversion error (a map list item without keys, duplicates in an
//! applied list, a value of the wrong kind), these functions never fail: such a list or value is
//! treated as atomic. [`super::validate_config`] reports those errors for the caller to reject.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use super::fieldpath::{values_equal, FieldSet, PathElement};
use crate::schema::shape::{AdditionalShape, Shape};
use crate::schema::{object_meta_field, MetaFieldType};

/// The smd type of a value position.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Ty<'a> {
    /// The object root: the kind's schema (if any) plus apiVersion, kind and ObjectMeta.
    Root(Option<Shape<'a>>),
    /// A schema node; the flag says whether an ancestor preserves unknown fields.
    Node(Shape<'a>, bool),
    /// `__untyped_deduced_`: the kind follows the value; maps granular, lists atomic.
    Deduced,
    /// `__untyped_atomic_`: anything, always atomic.
    UntypedAtomic,
    /// `ObjectMeta`.
    Meta,
    /// `metadata.ownerReferences`.
    OwnerRefs,
    /// One `OwnerReference`.
    OwnerRef,
    /// `map[string]string` (labels, annotations).
    StrMap,
    /// `[]string` with `listType=set` (finalizers).
    StrSet,
    /// A scalar.
    Scalar,
    /// An atomic list (`metadata.managedFields`).
    AtomicList,
}

/// Which kinds of value a type accepts.
struct Kinds {
    map: bool,
    list: bool,
    scalar: bool,
}

/// How a list's items are identified.
pub(crate) enum ListKind<'a> {
    Atomic,
    Set,
    Map(Vec<&'a str>),
}

/// The list view of a type.
pub(crate) struct ListTy<'a> {
    pub(crate) kind: ListKind<'a>,
    pub(crate) elem: Ty<'a>,
}

const OWNER_REF_FIELDS: &[&str] = &[
    "apiVersion",
    "kind",
    "name",
    "uid",
    "controller",
    "blockOwnerDeletion",
];

impl<'a> Ty<'a> {
    fn kinds(self) -> Kinds {
        let (map, list, scalar) = match self {
            Ty::Root(_) | Ty::Meta | Ty::OwnerRef | Ty::StrMap => (true, false, false),
            Ty::Node(n, _) => match n.ty() {
                "object" => (true, false, false),
                "array" => (false, true, false),
                "" => (true, true, true),
                _ => (false, false, true),
            },
            Ty::Deduced | Ty::UntypedAtomic => (true, true, true),
            Ty::OwnerRefs | Ty::StrSet | Ty::AtomicList => (false, true, false),
            Ty::Scalar => (false, false, true),
        };
        Kinds { map, list, scalar }
    }

    pub(super) fn map_atomic(self) -> bool {
        match self {
            Ty::Node(n, _) => n.map_type() == Some("atomic"),
            Ty::UntypedAtomic => true,
            _ => false,
        }
    }

    /// The type of field `k` of a map, and whether it is a declared ("named") field.
    pub(crate) fn field(self, k: &str) -> (Ty<'a>, bool) {
        match self {
            Ty::Root(schema) => match k {
                "apiVersion" | "kind" => (Ty::Scalar, true),
                "metadata" => (Ty::Meta, true),
                _ => match schema {
                    Some(n) => node_field(n, n.preserve_unknown_fields(), k),
                    None => (Ty::Deduced, false),
                },
            },
            Ty::Node(n, p) => node_field(n, p || n.preserve_unknown_fields(), k),
            Ty::UntypedAtomic => (Ty::UntypedAtomic, false),
            Ty::Meta => match object_meta_field(k) {
                Some(t) => (meta_ty(t), true),
                None => (Ty::Deduced, false),
            },
            Ty::OwnerRef if OWNER_REF_FIELDS.contains(&k) => (Ty::Scalar, true),
            Ty::StrMap => (Ty::Scalar, false),
            _ => (Ty::Deduced, false),
        }
    }

    /// The list view of this type.
    pub(crate) fn list(self) -> ListTy<'a> {
        match self {
            Ty::Node(n, p) => {
                let p = p || n.preserve_unknown_fields();
                let keys = n.list_map_keys();
                let kind = match n.list_type() {
                    Some("set") => ListKind::Set,
                    Some("map") if !keys.is_empty() => ListKind::Map(keys),
                    // A map list without keys is a set in smd (of maps: an error).
                    Some("map") => ListKind::Set,
                    _ => ListKind::Atomic,
                };
                let elem = match n.items() {
                    Some(items) => Ty::Node(items, p),
                    None => Ty::UntypedAtomic,
                };
                ListTy { kind, elem }
            }
            Ty::StrSet => ListTy {
                kind: ListKind::Set,
                elem: Ty::Scalar,
            },
            Ty::OwnerRefs => ListTy {
                kind: ListKind::Map(vec!["uid"]),
                elem: Ty::OwnerRef,
            },
            Ty::UntypedAtomic | Ty::AtomicList => ListTy {
                kind: ListKind::Atomic,
                elem: Ty::UntypedAtomic,
            },
            _ => ListTy {
                kind: ListKind::Atomic,
                elem: Ty::Deduced,
            },
        }
    }

    /// The schema default of a key field of a map list's items.
    fn key_default(self, name: &str) -> Option<&'a Value> {
        match self {
            Ty::Node(n, _) => n.property(name).and_then(Shape::default),
            _ => None,
        }
    }
}

/// Whether a map of this type accepts any value (smd's `atom.Map != nil`).
pub(crate) fn accepts_map(ty: Ty) -> bool {
    ty.kinds().map
}

/// Whether a list of this type accepts any value.
pub(crate) fn accepts_list(ty: Ty) -> bool {
    ty.kinds().list
}

/// Whether smd rejects field `k` of a map of this type as "field not declared in schema" (a
/// struct without an element type).
pub(crate) fn undeclared(ty: Ty, k: &str) -> bool {
    match ty {
        Ty::Root(Some(n)) => {
            !matches!(k, "apiVersion" | "kind" | "metadata")
                && n.property(k).is_none()
                && match n.additional() {
                    Some(AdditionalShape::Schema(_)) | Some(AdditionalShape::Bool(true)) => false,
                    Some(AdditionalShape::Bool(false)) => true,
                    None => !n.preserve_unknown_fields(),
                }
        }
        Ty::Node(n, p) => {
            n.property(k).is_none()
                && match n.additional() {
                    Some(AdditionalShape::Schema(_)) | Some(AdditionalShape::Bool(true)) => false,
                    Some(AdditionalShape::Bool(false)) => true,
                    None => !(p || n.preserve_unknown_fields() || n.no_properties()),
                }
        }
        Ty::Meta => object_meta_field(k).is_none(),
        Ty::OwnerRef => !OWNER_REF_FIELDS.contains(&k),
        _ => false,
    }
}

/// The smd type of an ObjectMeta field: labels and annotations granular maps, finalizers a set,
/// ownerReferences a map list keyed by uid, managedFields atomic, the rest scalars.
fn meta_ty<'a>(t: MetaFieldType) -> Ty<'a> {
    match t {
        MetaFieldType::String | MetaFieldType::Int64 | MetaFieldType::Time => Ty::Scalar,
        MetaFieldType::StringMap => Ty::StrMap,
        MetaFieldType::StringList => Ty::StrSet,
        MetaFieldType::OwnerReferences => Ty::OwnerRefs,
        MetaFieldType::ManagedFields => Ty::AtomicList,
    }
}

fn node_field<'a>(n: Shape<'a>, preserve: bool, k: &str) -> (Ty<'a>, bool) {
    if let Some(c) = n.property(k) {
        return (Ty::Node(c, preserve), true);
    }
    match n.additional() {
        Some(AdditionalShape::Schema(s)) => (Ty::Node(s, preserve), false),
        // `additionalProperties: false` or undeclared fields of a struct are a typed-conversion
        // error in smd; they are deduced here.
        _ => (Ty::Deduced, false),
    }
}

/// How a value is handled under a type (smd's `deduceAtom` + `handleAtom`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum K {
    Leaf,
    Map,
    List,
}

pub(super) fn kind(v: &Value, ty: Ty) -> K {
    let k = ty.kinds();
    match v {
        Value::Object(_) if k.map => K::Map,
        Value::Array(_) if k.list => K::List,
        Value::Null if k.map => K::Map,
        Value::Null if k.scalar => K::Leaf,
        Value::Null if k.list => K::List,
        _ => K::Leaf,
    }
}

/// The path element of a list item, `None` when the item cannot be identified.
pub(crate) fn item_pe(lt: &ListTy, item: &Value) -> Option<PathElement> {
    match &lt.kind {
        ListKind::Atomic => None,
        ListKind::Set => match item {
            Value::Null | Value::Object(_) | Value::Array(_) => None,
            v => Some(PathElement::Value(v.clone())),
        },
        ListKind::Map(keys) => {
            let obj = item.as_object()?;
            let mut fields: Vec<(String, Value)> = Vec::new();
            for k in keys {
                if let Some(v) = obj.get(*k) {
                    fields.push((k.to_string(), v.clone()));
                } else if let Some(d) = lt.elem.key_default(k) {
                    fields.push((k.to_string(), d.clone()));
                }
            }
            if fields.is_empty() {
                return None;
            }
            fields.sort_by(|a, b| a.0.cmp(&b.0));
            fields.dedup_by(|a, b| a.0 == b.0);
            Some(PathElement::Key(fields))
        }
    }
}

/// The path elements of every item, or `None` if one cannot be identified.
pub(super) fn list_pes(items: &[Value], lt: &ListTy) -> Option<Vec<PathElement>> {
    items.iter().map(|i| item_pe(lt, i)).collect()
}

fn is_empty_map(v: &Value) -> bool {
    v.as_object().is_some_and(Map::is_empty)
}

// ---------------------------------------------------------------------------------------------
// ToFieldSet

/// smd's `ToFieldSet`: every field the value sets. Struct (named) fields holding children are not
/// members themselves; map keys, list items, leaves, nulls and empty maps are.
pub(crate) fn to_set(v: &Value, ty: Ty) -> FieldSet {
    set_below(v, ty).0
}

/// The members below a position holding `v`, and whether the position itself is one; built
/// level by level (each path element made once) rather than path by path.
fn set_below(v: &Value, ty: Ty) -> (FieldSet, bool) {
    let mut out = FieldSet::default();
    match kind(v, ty) {
        K::Leaf => return (out, true),
        K::Map => {
            if ty.map_atomic() {
                return (out, true);
            }
            let Some(m) = v.as_object() else {
                return (out, false);
            };
            for (k, cv) in m {
                let (cty, named) = ty.field(k);
                let (below, member) = set_below(cv, cty);
                let pe = PathElement::Field(k.clone());
                if member || cv.is_null() || is_empty_map(cv) || !named {
                    out.add_member(pe.clone());
                }
                out.add_child(pe, below);
            }
        }
        K::List => {
            let lt = ty.list();
            if matches!(lt.kind, ListKind::Atomic) {
                return (out, true);
            }
            let Some(items) = v.as_array() else {
                return (out, false);
            };
            let Some(pes) = list_pes(items, &lt) else {
                return (out, true);
            };
            let mut counts: BTreeMap<&PathElement, usize> = BTreeMap::new();
            for pe in &pes {
                *counts.entry(pe).or_default() += 1;
            }
            for (item, pe) in items.iter().zip(&pes) {
                out.add_member(pe.clone());
                if counts.get(pe).copied().unwrap_or(0) == 1 {
                    out.add_child(pe.clone(), set_below(item, lt.elem).0);
                }
            }
        }
    }
    (out, false)
}

// ---------------------------------------------------------------------------------------------
// Merge

/// smd's `Merge` of `r` (the applied configuration) into `l` (the live object): leaves and atomic
/// values take `r`, maps merge per key, associative lists per item (keeping `l`'s order for its
/// items and inserting `r`'s new items where smd does).
pub(crate) fn merge(l: Option<&Value>, r: Option<&Value>, ty: Ty) -> Option<Value> {
    // What one side alone holds, or both hold alike, merges to itself: copied without a walk.
    let k = match (l, r) {
        (None, None) => return None,
        (Some(v), None) | (None, Some(v)) => return Some(v.clone()),
        (Some(l), Some(r)) if l == r => return Some(r.clone()),
        (_, Some(r)) => kind(r, ty),
    };
    let leaf = || r.or(l).cloned();
    match k {
        K::Leaf => leaf(),
        K::Map => {
            let lm = l.and_then(Value::as_object);
            let rm = r.and_then(Value::as_object);
            let empty = |m: Option<&Map<String, Value>>| m.is_none_or(Map::is_empty);
            if ty.map_atomic() || (empty(lm) && empty(rm)) {
                return leaf();
            }
            let mut out = Map::new();
            for key in union_keys(lm, rm) {
                let cty = ty.field(key).0;
                if let Some(v) = merge(
                    lm.and_then(|m| m.get(key)),
                    rm.and_then(|m| m.get(key)),
                    cty,
                ) {
                    out.insert(key.clone(), v);
                }
            }
            (!out.is_empty()).then_some(Value::Object(out))
        }
        K::List => {
            let la = l
                .and_then(Value::as_array)
                .map(Vec::as_slice)
                .unwrap_or(&[]);
            let ra = r
                .and_then(Value::as_array)
                .map(Vec::as_slice)
                .unwrap_or(&[]);
            let lt = ty.list();
            if matches!(lt.kind, ListKind::Atomic) || (la.is_empty() && ra.is_empty()) {
                return leaf();
            }
            let (Some(lpes), Some(rpes)) = (list_pes(la, &lt), list_pes(ra, &lt)) else {
                return leaf();
            };
            let mut r_obs: BTreeMap<&PathElement, &Value> = BTreeMap::new();
            for (pe, item) in rpes.iter().zip(ra) {
                if r_obs.insert(pe, item).is_some() {
                    // Duplicates in an applied list are an smd error; replace the list whole.
                    return leaf();
                }
            }
            let out = merge_list_items(la, &lpes, &rpes, &r_obs, &lt);
            (!out.is_empty()).then_some(Value::Array(out))
        }
    }
}

/// smd's `visitListItems` of the merging walker.
fn merge_list_items(
    la: &[Value],
    lpes: &[PathElement],
    rpes: &[PathElement],
    r_obs: &BTreeMap<&PathElement, &Value>,
    lt: &ListTy,
) -> Vec<Value> {
    // Duplicated live items are not merged with the applied one: they count as null.
    let mut l_obs: BTreeMap<&PathElement, Option<&Value>> = BTreeMap::new();
    for (pe, item) in lpes.iter().zip(la) {
        l_obs
            .entry(pe)
            .and_modify(|v| *v = None)
            .or_insert(Some(item));
    }
    let null = Value::Null;
    let l_child =
        |pe: &PathElement| -> Option<&Value> { l_obs.get(pe).map(|v| v.unwrap_or(&null)) };
    let mut shared: std::collections::VecDeque<&PathElement> =
        rpes.iter().filter(|pe| l_obs.contains_key(pe)).collect();
    let mut next_shared = shared.pop_front();
    let mut merged_rhs: BTreeSet<&PathElement> = BTreeSet::new();
    let mut out = Vec::new();
    let (llen, rlen) = (lpes.len(), rpes.len());
    let (mut li, mut ri) = (0, 0);
    while li < llen || ri < rlen {
        if li < llen && ri < rlen {
            let pe = &lpes[li];
            if *pe == rpes[ri] {
                merged_rhs.insert(pe);
                if let Some(v) = merge(l_child(pe), r_obs.get(pe).copied(), lt.elem) {
                    out.push(v);
                }
                li += 1;
                ri += 1;
                next_shared = shared.pop_front();
                continue;
            }
            if r_obs.contains_key(pe) && next_shared.is_some_and(|n| n != pe) {
                li += 1;
                continue;
            }
        }
        if li < llen {
            let pe = &lpes[li];
            if !r_obs.contains_key(pe) {
                if let Some(v) = merge(Some(&la[li]), None, lt.elem) {
                    out.push(v);
                }
                li += 1;
                continue;
            } else if merged_rhs.contains(pe) {
                li += 1;
            }
        }
        if ri < rlen {
            let pe = &rpes[ri];
            merged_rhs.insert(pe);
            if let Some(v) = merge(l_child(pe), r_obs.get(pe).copied(), lt.elem) {
                out.push(v);
            }
            ri += 1;
            if next_shared.is_some_and(|n| n == pe) {
                next_shared = shared.pop_front();
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Compare

/// smd's `Comparison`: leaves (and whole added/removed containers) that differ.
#[derive(Debug, Default)]
pub(crate) struct Comparison {
    pub(crate) removed: FieldSet,
    pub(crate) modified: FieldSet,
    pub(crate) added: FieldSet,
}

impl Comparison {
    /// Drops paths under `ignored` from all three sets (smd's `ExcludeFields`).
    pub(crate) fn exclude(&mut self, ignored: &FieldSet) {
        for set in [&mut self.removed, &mut self.modified, &mut self.added] {
            if set.touches(ignored) {
                *set = set.recursive_difference(ignored);
            }
        }
    }
}

/// smd's `Compare` of `l` (before) and `r` (after).
pub(crate) fn compare(l: &Value, r: &Value, ty: Ty) -> Comparison {
    compare_node(Some(l), Some(r), ty, false).0
}

/// [`compare`] of two objects as if neither had `metadata.managedFields`, which every update
/// compares without: no copy of either object is needed to leave them out.
pub(crate) fn compare_without_managed_fields(l: &Value, r: &Value, ty: Ty) -> Comparison {
    compare_node(Some(l), Some(r), ty, true).0
}

/// The fields a create adds, in `fieldsV1` form: [`compare_without_managed_fields`] of an empty
/// object and `v`, minus the members of `not_owned` (level by level, as
/// [`FieldSet::difference`]), written straight as JSON instead of through sets. Everything `v`
/// sets is a member; a container also has its children below it (`"."` beside them).
pub(crate) fn added_fields_v1(v: &Value, ty: Ty, not_owned: &FieldSet) -> Map<String, Value> {
    let mut out = Map::new();
    if let Some(m) = v.as_object() {
        added_fields(m, ty, Some(not_owned), &mut out);
    }
    out
}

fn added_fields(
    m: &Map<String, Value>,
    ty: Ty,
    not_owned: Option<&FieldSet>,
    out: &mut Map<String, Value>,
) {
    for (k, x) in m {
        if matches!(ty, Ty::Meta) && k == "managedFields" {
            continue;
        }
        let below = not_owned.and_then(|n| n.field_child(k));
        let owned = !not_owned.is_some_and(|n| n.has_field_member(k));
        if let Some(node) = added_node(x, ty.field(k).0, below, owned) {
            let mut key = String::with_capacity(k.len() + 2);
            key.push_str("f:");
            key.push_str(k);
            out.insert(key, node);
        }
    }
}

/// The node of a position holding `v`: `None` when it is neither `owned` nor has members below.
fn added_node(v: &Value, ty: Ty, not_owned: Option<&FieldSet>, owned: bool) -> Option<Value> {
    let mut node = Map::new();
    match kind(v, ty) {
        K::Leaf => {}
        K::Map => {
            if let Some(m) = v.as_object().filter(|m| !m.is_empty() && !ty.map_atomic()) {
                added_fields(m, ty, not_owned, &mut node);
            }
        }
        K::List => {
            let lt = ty.list();
            let items = v.as_array().map(Vec::as_slice).unwrap_or(&[]);
            if !matches!(lt.kind, ListKind::Atomic) {
                if let Some(pes) = list_pes(items, &lt) {
                    added_items(items, &pes, &lt, not_owned, &mut node);
                }
            }
        }
    }
    match (owned, node.is_empty()) {
        (false, true) => None,
        (true, false) => {
            node.insert(".".into(), Value::Object(Map::new()));
            Some(Value::Object(node))
        }
        _ => Some(Value::Object(node)),
    }
}

/// A list's items as [`compare_list_items`] adds them: an item given more than once is a
/// member without children.
fn added_items(
    items: &[Value],
    pes: &[PathElement],
    lt: &ListTy,
    not_owned: Option<&FieldSet>,
    out: &mut Map<String, Value>,
) {
    let mut count: BTreeMap<&PathElement, usize> = BTreeMap::new();
    for pe in pes {
        *count.entry(pe).or_default() += 1;
    }
    for (pe, item) in pes.iter().zip(items) {
        let key = pe.serialize();
        if out.contains_key(&key) {
            continue;
        }
        let owned = !not_owned.is_some_and(|n| n.has_member(pe));
        let node = match count.get(pe) {
            Some(1) => added_node(item, lt.elem, not_owned.and_then(|n| n.child(pe)), owned),
            _ => owned.then(|| Value::Object(Map::new())),
        };
        if let Some(node) = node {
            out.insert(key, node);
        }
    }
}

/// The keys of two sorted maps, each once, in order (serde_json's map is a `BTreeMap`).
fn union_keys<'v>(
    l: Option<&'v Map<String, Value>>,
    r: Option<&'v Map<String, Value>>,
) -> impl Iterator<Item = &'v String> {
    let mut l = l.into_iter().flat_map(Map::keys).peekable();
    let mut r = r.into_iter().flat_map(Map::keys).peekable();
    std::iter::from_fn(move || match (l.peek(), r.peek()) {
        (Some(a), Some(b)) => match a.cmp(b) {
            std::cmp::Ordering::Less => l.next(),
            std::cmp::Ordering::Greater => r.next(),
            std::cmp::Ordering::Equal => {
                r.next();
                l.next()
            }
        },
        (Some(_), None) => l.next(),
        (None, _) => r.next(),
    })
}

/// Which of a comparison's sets a position itself is in.
#[derive(Debug, Default, Clone, Copy)]
struct Here {
    removed: bool,
    modified: bool,
    added: bool,
}

impl Comparison {
    /// Adds a child position: `here` says which sets hold it, `below` what differs under it.
    fn attach(&mut self, pe: PathElement, below: Comparison, here: Here) {
        let parts = [
            (&mut self.removed, below.removed, here.removed),
            (&mut self.modified, below.modified, here.modified),
            (&mut self.added, below.added, here.added),
        ];
        // The element is copied for all uses but the last, which takes it.
        let mut uses: usize = parts
            .iter()
            .map(|(_, below, member)| usize::from(*member) + usize::from(!below.is_empty()))
            .sum();
        let mut pe = Some(pe);
        let mut next = || {
            uses = uses.saturating_sub(1);
            if uses == 0 {
                pe.take()
            } else {
                pe.clone()
            }
        };
        for (set, below, member) in parts {
            if member {
                if let Some(pe) = next() {
                    set.add_member(pe);
                }
            }
            if !below.is_empty() {
                if let Some(pe) = next() {
                    set.add_child(pe, below);
                }
            }
        }
    }
}

/// smd's `Compare` of the values at one position (`None`: absent), built level by level: what
/// differs below the position (each path element made once, where a path-by-path build
/// walked from the root for every leaf), and which sets the position itself joins.
/// `skip_managed_fields` leaves out `metadata.managedFields`.
fn compare_node(
    l: Option<&Value>,
    r: Option<&Value>,
    ty: Ty,
    skip_managed_fields: bool,
) -> (Comparison, Here) {
    let mut c = Comparison::default();
    let mut here = Here::default();
    let handle = |k: K, c: &mut Comparison, here: &mut Here| {
        compare_handle(k, l, r, ty, skip_managed_fields, c, here)
    };
    let leafed = match (l, r) {
        (None, None) => return (c, here),
        (Some(lv), None) => handle(kind(lv, ty), &mut c, &mut here),
        (None, Some(rv)) => handle(kind(rv, ty), &mut c, &mut here),
        (Some(lv), Some(rv)) => {
            let (kl, kr) = (kind(lv, ty), kind(rv, ty));
            if kl != kr {
                handle(kl, &mut c, &mut here);
            }
            handle(kr, &mut c, &mut here)
        }
    };
    if !leafed {
        if l.is_none() {
            here.added = true;
        } else if r.is_none() {
            here.removed = true;
        }
    }
    (c, here)
}

fn compare_leaf(l: Option<&Value>, r: Option<&Value>, here: &mut Here) -> bool {
    match (l, r) {
        (None, _) => here.added = true,
        (_, None) => here.removed = true,
        (Some(a), Some(b)) => {
            if !values_equal(a, b) {
                here.modified = true;
            }
        }
    }
    true
}

/// Returns whether the position was handled as a leaf.
fn compare_handle(
    k: K,
    l: Option<&Value>,
    r: Option<&Value>,
    ty: Ty,
    skip_managed_fields: bool,
    c: &mut Comparison,
    here: &mut Here,
) -> bool {
    match k {
        K::Leaf => compare_leaf(l, r, here),
        K::Map => {
            let lm = l.and_then(Value::as_object);
            let rm = r.and_then(Value::as_object);
            let empty = |m: Option<&Map<String, Value>>| m.is_none_or(Map::is_empty);
            if ty.map_atomic() || (empty(lm) && empty(rm)) {
                return compare_leaf(l, r, here);
            }
            let skip = skip_managed_fields && matches!(ty, Ty::Meta);
            for key in union_keys(lm, rm) {
                let (lv, rv) = (lm.and_then(|m| m.get(key)), rm.and_then(|m| m.get(key)));
                // Equal values differ nowhere below: no need to walk them.
                if lv.is_some() && lv == rv || skip && key == "managedFields" {
                    continue;
                }
                let cty = ty.field(key).0;
                // Two scalars (most changed fields): a leaf that changed, or nothing.
                if let (Some(a), Some(b)) = (lv, rv) {
                    if kind(a, cty) == K::Leaf && kind(b, cty) == K::Leaf {
                        if !values_equal(a, b) {
                            c.modified.add_member(PathElement::Field(key.clone()));
                        }
                        continue;
                    }
                }
                let (below, at) = compare_node(lv, rv, cty, skip_managed_fields);
                c.attach(PathElement::Field(key.clone()), below, at);
            }
            false
        }
        K::List => {
            let la = l.and_then(Value::as_array);
            let ra = r.and_then(Value::as_array);
            let lt = ty.list();
            let empty = |a: Option<&Vec<Value>>| a.is_none_or(Vec::is_empty);
            if matches!(lt.kind, ListKind::Atomic) || (empty(la) && empty(ra)) {
                return compare_leaf(l, r, here);
            }
            let la = la.map(Vec::as_slice).unwrap_or(&[]);
            let ra = ra.map(Vec::as_slice).unwrap_or(&[]);
            let (Some(lpes), Some(rpes)) = (list_pes(la, &lt), list_pes(ra, &lt)) else {
                return compare_leaf(l, r, here);
            };
            compare_list_items(la, &lpes, ra, &rpes, &lt, skip_managed_fields, c);
            false
        }
    }
}

/// The items of two lists grouped by their keys (`lpes` and `rpes`, one per item), in the order
/// the keys first appear (the left list's, then the right list's others): (key, left items,
/// right items). A key has at most one item on a side unless the list repeats it.
pub(super) fn items_by_key<'a>(
    la: &'a [Value],
    lpes: &'a [PathElement],
    ra: &'a [Value],
    rpes: &'a [PathElement],
) -> Vec<(&'a PathElement, Vec<&'a Value>, Vec<&'a Value>)> {
    let mut all: Vec<&PathElement> = Vec::new();
    let mut lvals: BTreeMap<&PathElement, Vec<&Value>> = BTreeMap::new();
    for (pe, item) in lpes.iter().zip(la) {
        let e = lvals.entry(pe).or_default();
        if e.is_empty() {
            all.push(pe);
        }
        e.push(item);
    }
    let mut rvals: BTreeMap<&PathElement, Vec<&Value>> = BTreeMap::new();
    for (pe, item) in rpes.iter().zip(ra) {
        let e = rvals.entry(pe).or_default();
        if e.is_empty() && !lvals.contains_key(pe) {
            all.push(pe);
        }
        e.push(item);
    }
    all.into_iter()
        .map(|pe| {
            let l = lvals.remove(pe).unwrap_or_default();
            (pe, l, rvals.remove(pe).unwrap_or_default())
        })
        .collect()
}

fn compare_list_items(
    la: &[Value],
    lpes: &[PathElement],
    ra: &[Value],
    rpes: &[PathElement],
    lt: &ListTy,
    skip_managed_fields: bool,
    c: &mut Comparison,
) {
    let node =
        |l: Option<&Value>, r: Option<&Value>| compare_node(l, r, lt.elem, skip_managed_fields);
    for (pe, ll, rl) in items_by_key(la, lpes, ra, rpes) {
        let (ll, rl) = (ll.as_slice(), rl.as_slice());
        if let ([a], [b]) = (ll, rl) {
            if a == b {
                continue;
            }
        }
        let (below, at) = if ll.len() <= 1 && rl.len() <= 1 {
            node(ll.first().copied(), rl.first().copied())
        } else if ll.len() >= 2 && rl.len() >= 2 {
            let same = ll.len() == rl.len() && ll.iter().zip(rl).all(|(a, b)| values_equal(a, b));
            let at = Here {
                modified: !same,
                ..Here::default()
            };
            (Comparison::default(), at)
        } else if ll.len() >= 2 {
            let (below, mut at) = node(None, rl.first().copied());
            at.removed = true;
            (below, at)
        } else {
            let (below, mut at) = node(ll.first().copied(), None);
            at.added = true;
            (below, at)
        };
        c.attach(pe.clone(), below, at);
    }
}

// ---------------------------------------------------------------------------------------------
// RemoveItems

/// smd's `RemoveItems`: `v` without the members of `to_remove` (a member removes the whole
/// value at its path). `None` is smd's nil: a container left empty becomes `null` in its parent.
pub(crate) fn remove_items(v: &Value, to_remove: &FieldSet, ty: Ty) -> Option<Value> {
    match kind(v, ty) {
        K::Leaf => Some(v.clone()),
        K::Map => {
            let m = v.as_object()?;
            if m.is_empty() || ty.map_atomic() {
                return None;
            }
            let mut out = Map::new();
            for (k, val) in m {
                let pe = PathElement::Field(k.clone());
                if to_remove.has_member(&pe) {
                    continue;
                }
                let nv = match to_remove.child(&pe) {
                    Some(sub) => remove_items(val, sub, ty.field(k).0).unwrap_or(Value::Null),
                    None => val.clone(),
                };
                out.insert(k.clone(), nv);
            }
            (!out.is_empty()).then_some(Value::Object(out))
        }
        K::List => {
            let items = v.as_array()?;
            let lt = ty.list();
            if items.is_empty() || matches!(lt.kind, ListKind::Atomic) {
                return None;
            }
            let Some(pes) = list_pes(items, &lt) else {
                return Some(v.clone());
            };
            let mut out = Vec::new();
            for (item, pe) in items.iter().zip(&pes) {
                if to_remove.has_member(pe) {
                    continue;
                }
                out.push(match to_remove.child(pe) {
                    Some(sub) => remove_items(item, sub, lt.elem).unwrap_or(Value::Null),
                    None => item.clone(),
                });
            }
            (!out.is_empty()).then_some(Value::Array(out))
        }
    }
}

// ---------------------------------------------------------------------------------------------
// EnsureNamedFieldsAreMembers

/// smd's `EnsureNamedFieldsAreMembers`: also makes members of the declared (struct) fields that
/// only have members below them, so that removing the set removes those structs too.
pub(crate) fn ensure_named(s: &FieldSet, ty: Option<Ty>) -> FieldSet {
    let (members, children) = s.parts();
    let mut members = members.clone();
    let mut out_children = BTreeMap::new();
    let map_ty = ty.filter(|t| t.kinds().map);
    let list_ty = ty.filter(|t| t.kinds().list);
    for (pe, child) in children {
        let cty = match pe {
            PathElement::Field(name) => map_ty.map(|t| {
                let (ct, named) = t.field(name);
                if named {
                    members.insert(pe.clone());
                }
                ct
            }),
            PathElement::Key(_) => list_ty.map(|t| t.list().elem),
            _ => None,
        };
        out_children.insert(pe.clone(), ensure_named(child, cty));
    }
    FieldSet::from_parts(members, out_children)
}
