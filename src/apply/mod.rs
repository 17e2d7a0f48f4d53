//! Server-side apply and field ownership: what `k8s.io/apimachinery/pkg/util/managedfields`
//! (the apiserver's field manager) and `sigs.k8s.io/structured-merge-diff` do, over JSON values.
//!
//! Pure functions, no I/O: the PATCH handler calls [`apply`] for `application/apply-patch+yaml`
//! and every other write calls [`record_update`], both returning the object with
//! `metadata.managedFields` rewritten. The layers of the apiserver's field manager are all here,
//! in its order:
//! - version check, `metadata.managedFields must be nil` in the patch: the caller's job (they are
//!   400s; [`validate_config`] gives the typed-conversion errors of the patch);
//! - kubectl's client-side-apply upgrade (`lastAppliedManager`/`lastAppliedUpdater`, only for the
//!   manager `kubectl`): conflicts with fields the last-applied annotation set to their live
//!   values are forced, and the annotation is kept in sync with the applied configuration;
//! - `skipNonApplied`: an object without managedFields is only tracked from its creation or its
//!   first apply (which first records everything already there as `before-first-apply`);
//! - manager identities: one entry per (manager, Apply, subresource) for appliers and per
//!   (manager, Update, apiVersion, subresource) for updaters; `time` changes only when the
//!   operation changed the object;
//! - `stripMeta`: apiVersion, kind and the server-set metadata fields are never owned;
//! - the merge itself (`merge.Updater`), with the reset fields of the `status` subresource
//!   (`spec`) never owned by status writers; each manager's fields compared in the version it
//!   wrote through ([`versions`]).
//!
//! Non-apply writes whose entries are in the form this server writes them (most: a patch keeps
//! them, a PUT sends back what it read) edit those entries as JSON (`in_place`) instead of
//! decoding every manager's fields into sets and encoding them again; the set algebra takes the
//! rest, and the tests run both paths on the same writes.
//!
//! After a non-apply write, the apiserver's cap on update managers (`cap`: the oldest beyond
//! 10 merged into `ancient-changes`).

mod cap;
mod fieldpath;
mod in_place;
pub mod json_patch;
pub mod scale;
pub mod strategic;
#[cfg(test)]
mod tests;
mod typed;
pub mod versions;

use std::borrow::Cow;
use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::error::{ApiError, StatusCause, StatusDetails};
use crate::machinery::gofmt::{go_json, go_quote};
use crate::schema::Shape;
use fieldpath::{path_string, PathElement};
use typed::{
    compare, compare_without_managed_fields, ensure_named, merge, remove_items, to_set, Ty,
};
use versions::{Version, Versions};

pub(crate) use in_place::in_server_form;

pub use fieldpath::{FieldSet, FieldsV1Error};

/// Why `metadata.managedFields` does not decode (the apiserver's `DecodeManagedFields`), or why an
/// apply configuration does not convert to its typed form (structured-merge-diff's
/// `ValidationErrors`). The texts are the apiserver's: they reach users in 400 and 500 Statuses.
#[derive(Debug, thiserror::Error)]
pub enum ApplyError {
    /// An entry of `metadata.managedFields` is not an object.
    #[error("managed fields entry {0} is not an object")]
    EntryNotAnObject(usize),
    /// An entry's operation is neither `Apply` nor `Update`.
    #[error("operation must be `Apply` or `Update`")]
    InvalidOperation,
    /// An entry without apiVersion.
    #[error("apiVersion must not be empty")]
    MissingApiVersion,
    /// An entry without fieldsType.
    #[error("missing fieldsType in managed fields entry {0}")]
    MissingFieldsType(usize),
    /// An entry whose fieldsType is not `FieldsV1`.
    #[error("invalid fieldsType {} in managed fields entry {index}", go_quote(.fields_type))]
    InvalidFieldsType {
        /// The fieldsType found.
        fields_type: String,
        /// The entry's position.
        index: usize,
    },
    /// An entry whose `fieldsV1` does not decode.
    #[error("error decoding versioned set: error decoding set: {0}")]
    FieldsV1(#[source] FieldsV1Error),
    /// `metadata.managedFields` is not a list.
    #[error("metadata.managedFields must be a list")]
    NotAList,
    /// The apply configuration's typed-conversion errors (one, or several as `errors:` and one
    /// indented line each).
    #[error("{}", validation_errors(.0))]
    InvalidConfig(Vec<ValidationError>),
}

/// One structured-merge-diff `ValidationError`: where in the configuration, and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidationError {
    /// smd's path (`.spec.ports`), empty at the root.
    pub path: String,
    /// What is wrong there.
    pub message: String,
}

impl std::fmt::Display for ValidationError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

/// smd's `ValidationErrors.Error()`.
fn validation_errors(errs: &[ValidationError]) -> String {
    match errs {
        [one] => one.to_string(),
        _ => {
            let lines: Vec<String> = errs.iter().map(|e| format!("  {e}")).collect();
            format!("errors:\n{}", lines.join("\n"))
        }
    }
}

/// kubectl's client-side apply annotation.
const LAST_APPLIED: &str = "kubectl.kubernetes.io/last-applied-configuration";

/// The manager name the apiserver uses when a request names none.
const UNKNOWN_MANAGER: &str = "unknown";

/// The manager that owns what an object held before its first apply.
const BEFORE_FIRST_APPLY: &str = "before-first-apply";

/// The apiserver's limit on a field manager name.
const FIELD_MANAGER_MAX_LENGTH: usize = 128;

/// One `metadata.managedFields` entry: who owns which fields, through which kind of operation.
/// Clients read these (kubectl `--show-managed-fields`, kube-rs), and the next apply or update
/// needs them to know who owns what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManagedFields {
    /// The field manager (`fieldManager`, or derived from the User-Agent).
    pub manager: String,
    /// `Apply` (server-side apply) or `Update` (create, update, non-apply patch).
    pub operation: String,
    /// The API version the fields were written through.
    pub api_version: String,
    /// RFC 3339 time of the last operation that changed the object ("" when unknown: the
    /// apiserver leaves it unset when an apply changed ownership but not the object).
    pub time: String,
    /// `status`, `scale`, or "" for the main resource.
    pub subresource: String,
    /// The owned fields (`fieldsType: FieldsV1`).
    pub fields: FieldSet,
}

impl ManagedFields {
    fn to_json(&self) -> Value {
        entry_json(
            &self.manager,
            &self.operation,
            &self.api_version,
            &self.time,
            &self.subresource,
            &self.fields,
        )
    }

    fn from_json(v: &Value, i: usize) -> Result<ManagedFields, ApplyError> {
        let Value::Object(m) = v else {
            return Err(ApplyError::EntryNotAnObject(i));
        };
        let s = |k: &str| m.get(k).and_then(Value::as_str).unwrap_or("").to_string();
        let operation = s("operation");
        if operation != "Apply" && operation != "Update" {
            return Err(ApplyError::InvalidOperation);
        }
        let api_version = s("apiVersion");
        if api_version.is_empty() {
            return Err(ApplyError::MissingApiVersion);
        }
        match s("fieldsType").as_str() {
            "FieldsV1" => {}
            "" => return Err(ApplyError::MissingFieldsType(i)),
            other => {
                return Err(ApplyError::InvalidFieldsType {
                    fields_type: other.to_string(),
                    index: i,
                })
            }
        }
        let fields = match m.get("fieldsV1") {
            None | Some(Value::Null) => FieldSet::default(),
            Some(f) => FieldSet::from_fields_v1(f).map_err(ApplyError::FieldsV1)?,
        };
        Ok(ManagedFields {
            manager: s("manager"),
            operation,
            api_version,
            time: s("time"),
            subresource: s("subresource"),
            fields,
        })
    }
}

/// One entry as the apiserver writes it: empty manager, time and subresource left out.
fn entry_json(
    manager: &str,
    operation: &str,
    api_version: &str,
    time: &str,
    subresource: &str,
    fields: &FieldSet,
) -> Value {
    let mut m = Map::new();
    let mut text = |k: &str, v: &str| {
        if !v.is_empty() {
            m.insert(k.into(), Value::String(v.to_string()));
        }
    };
    text("manager", manager);
    text("time", time);
    text("subresource", subresource);
    for (k, v) in [
        ("operation", operation),
        ("apiVersion", api_version),
        ("fieldsType", "FieldsV1"),
    ] {
        m.insert(k.into(), Value::String(v.to_string()));
    }
    m.insert("fieldsV1".into(), fields.to_fields_v1());
    Value::Object(m)
}

/// Parses `metadata.managedFields` (absent or null: no entries). Fails, as the apiserver's
/// `DecodeManagedFields` does, on an entry whose operation is not Apply/Update, whose apiVersion
/// is empty, whose fieldsType is not `FieldsV1`, or whose fieldsV1 does not parse; [`apply`] and
/// [`record_update`] then fall back as the apiserver does (to the live object's entries, or to
/// none).
pub fn read_managed_fields(obj: &Value) -> Result<Vec<ManagedFields>, ApplyError> {
    match obj.get("metadata").and_then(|m| m.get("managedFields")) {
        None | Some(Value::Null) => Ok(Vec::new()),
        Some(Value::Array(a)) => a
            .iter()
            .enumerate()
            .map(|(i, e)| ManagedFields::from_json(e, i))
            .collect(),
        Some(_) => Err(ApplyError::NotAList),
    }
}

/// Drops a top-level field from every managedFields entry, and the entries then owning
/// nothing: the reset fields of a main resource with a status subresource (`status`, which
/// its strategy sets on create), which the apiserver's field manager never lets a write
/// through the main resource own.
pub fn disown(obj: &mut Value, field: &str) {
    let key = format!("f:{field}");
    let entries = obj
        .get_mut("metadata")
        .and_then(|m| m.get_mut("managedFields"));
    let Some(Value::Array(entries)) = entries else {
        return;
    };
    entries.retain_mut(|e| match e.get_mut("fieldsV1") {
        Some(Value::Object(set)) => {
            set.remove(&key);
            !set.is_empty()
        }
        _ => true,
    });
    if entries.is_empty() {
        write_managed_fields(obj, &[]);
    }
}

/// Writes `metadata.managedFields` (in the given order; no entries removes the field, as the
/// apiserver omits an empty list). Does nothing on a value that is not an object.
pub fn write_managed_fields(obj: &mut Value, entries: &[ManagedFields]) {
    write_entries(obj, entries.iter().map(ManagedFields::to_json).collect());
}

/// [`write_managed_fields`] of entries already in JSON.
fn write_entries(obj: &mut Value, entries: Vec<Value>) {
    let Value::Object(o) = obj else { return };
    if entries.is_empty() {
        if let Some(Value::Object(meta)) = o.get_mut("metadata") {
            meta.remove("managedFields");
        }
        return;
    }
    let meta = o
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(meta) = meta {
        meta.insert("managedFields".into(), Value::Array(entries));
    }
}

fn strip_managed_fields(obj: &mut Value) {
    if let Some(Value::Object(meta)) = obj.get_mut("metadata") {
        meta.remove("managedFields");
    }
}

// ---------------------------------------------------------------------------------------------
// Manager identities and the decoded managedFields

/// A manager identity (`BuildManagerIdentifier`): appliers are not split by apiVersion.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Id {
    manager: String,
    operation: String,
    api_version: String,
    subresource: String,
}

impl Id {
    fn new(manager: &str, operation: &str, api_version: &str, subresource: &str) -> Id {
        Id {
            manager: manager.to_string(),
            operation: operation.to_string(),
            api_version: if operation == "Apply" {
                String::new()
            } else {
                api_version.to_string()
            },
            subresource: subresource.to_string(),
        }
    }

    /// The managedFieldsUpdater's temporary identity of the current update.
    fn current_operation() -> Id {
        Id {
            manager: "current-operation".into(),
            operation: String::new(),
            api_version: String::new(),
            subresource: String::new(),
        }
    }

    /// The identity as the apiserver spells it (JSON of the entry without fields and time); the
    /// order conflicts are grouped in.
    fn key(&self) -> String {
        let mut s = String::from("{");
        let mut field = |name: &str, v: &str| {
            if v.is_empty() {
                return;
            }
            if s.len() > 1 {
                s.push(',');
            }
            s.push_str(&format!("\"{name}\":{}", go_json(&Value::String(v.into()))));
        };
        field("manager", &self.manager);
        field("operation", &self.operation);
        field("apiVersion", &self.api_version);
        field("subresource", &self.subresource);
        s.push('}');
        s
    }
}

#[derive(Debug, Clone)]
struct Entry {
    set: FieldSet,
    api_version: String,
    applied: bool,
}

/// `fieldpath.ManagedFields` plus the times, keyed by identity.
#[derive(Debug, Clone, Default)]
struct Managed {
    fields: BTreeMap<Id, Entry>,
    times: BTreeMap<Id, String>,
}

impl Managed {
    fn decode(entries: Vec<ManagedFields>) -> Managed {
        let mut m = Managed::default();
        for e in entries {
            let id = Id::new(&e.manager, &e.operation, &e.api_version, &e.subresource);
            if e.time.is_empty() {
                m.times.remove(&id);
            } else {
                m.times.insert(id.clone(), e.time);
            }
            let applied = e.operation == "Apply";
            m.fields.insert(
                id,
                Entry {
                    set: e.fields,
                    api_version: e.api_version,
                    applied,
                },
            );
        }
        m
    }

    /// The entries in JSON, sorted as `sortEncodedManagedFields`: operation, time, manager,
    /// apiVersion, subresource.
    fn encode(&self) -> Vec<Value> {
        let operation = |e: &Entry| if e.applied { "Apply" } else { "Update" };
        let time = |id: &Id| self.times.get(id).map_or("", String::as_str);
        let mut entries: Vec<(&Id, &Entry)> = self.fields.iter().collect();
        entries.sort_by(|(p, pe), (q, qe)| {
            operation(pe)
                .cmp(operation(qe))
                .then_with(|| unix_seconds(time(p)).cmp(&unix_seconds(time(q))))
                .then_with(|| p.manager.cmp(&q.manager))
                .then_with(|| pe.api_version.cmp(&qe.api_version))
                .then_with(|| p.subresource.cmp(&q.subresource))
        });
        entries
            .into_iter()
            .map(|(id, e)| {
                entry_json(
                    &id.manager,
                    operation(e),
                    &e.api_version,
                    time(id),
                    &id.subresource,
                    &e.set,
                )
            })
            .collect()
    }

    fn decode_obj(obj: &Value) -> Result<Managed, ApplyError> {
        read_managed_fields(obj).map(Managed::decode)
    }
}

fn unix_seconds(t: &str) -> i64 {
    chrono::DateTime::parse_from_rfc3339(t)
        .map(|d| d.timestamp())
        .unwrap_or(0)
}

/// The fields `stripMeta` never lets anyone own, built once: every write subtracts them.
fn strip_set() -> &'static FieldSet {
    static SET: std::sync::LazyLock<FieldSet> = std::sync::LazyLock::new(build_strip_set);
    &SET
}

fn build_strip_set() -> FieldSet {
    let mut s = FieldSet::default();
    for p in ["apiVersion", "kind", "metadata"] {
        s.insert(&[PathElement::Field(p.into())]);
    }
    for p in [
        "name",
        "namespace",
        "creationTimestamp",
        "selfLink",
        "uid",
        "clusterName",
        "generation",
        "managedFields",
        "resourceVersion",
    ] {
        s.insert(&[
            PathElement::Field("metadata".into()),
            PathElement::Field(p.into()),
        ]);
    }
    s
}

fn strip_meta(managed: &mut Managed, id: &Id) {
    if let Some(e) = managed.fields.get_mut(id) {
        e.set.difference_in(strip_set());
        if e.set.is_empty() {
            managed.fields.remove(id);
        }
    }
}

/// The fields a write through `subresource` may not own (the CRD status strategy's reset
/// fields: a status write never owns `spec`).
fn reset_fields(subresource: &str) -> Option<FieldSet> {
    (subresource == "status").then(|| {
        let mut s = FieldSet::default();
        s.insert(&[PathElement::Field("spec".into())]);
        s
    })
}

/// What the merge needs besides the objects.
struct Ctx<'a> {
    root: Ty<'a>,
    api_version: &'a str,
    ignore: Option<FieldSet>,
    now: &'a str,
    versions: &'a Versions<'a>,
}

impl<'a> Ctx<'a> {
    fn new(
        schema: Option<Shape<'a>>,
        versions: &'a Versions<'a>,
        subresource: &str,
        now: &'a str,
    ) -> Ctx<'a> {
        Ctx {
            root: Ty::Root(schema),
            api_version: versions.own(),
            ignore: reset_fields(subresource),
            now,
            versions,
        }
    }

    /// `live` and `new` (in the request's version) compared in `version`, the reset fields
    /// excluded; `None` for a version the resource no longer serves.
    fn compare_in(&self, live: &Value, new: &Value, version: &str) -> Option<typed::Comparison> {
        let mut cmp = match self.versions.version(version) {
            Version::Own => compare_without_managed_fields(live, new, self.root),
            Version::NotServed => return None,
            Version::Other(schema) => {
                let convert =
                    |o: &Value| self.versions.convert(o.clone(), self.api_version, version);
                let root = Ty::Root(schema.map(Shape::Compiled));
                compare_without_managed_fields(&convert(live), &convert(new), root)
            }
        };
        if let Some(ig) = &self.ignore {
            cmp.exclude(ig);
        }
        Some(cmp)
    }

    /// The root type of `version` (the request's own when it is not known).
    fn root_of(&self, version: &str) -> Ty<'a> {
        match self.versions.version(version) {
            Version::Other(schema) => Ty::Root(schema.map(Shape::Compiled)),
            Version::Own | Version::NotServed => self.root,
        }
    }

    fn filter(&self, s: FieldSet) -> FieldSet {
        match &self.ignore {
            Some(ig) if s.touches(ig) => s.recursive_difference(ig),
            _ => s,
        }
    }
}

type ConflictSets = Vec<(Id, FieldSet)>;

/// `Updater.update`: compares the objects, takes changed fields from the other managers (or
/// reports them as conflicts unless forced) and drops removed fields from everyone. Each
/// manager's set is compared in the version it was recorded through; managers of versions no
/// longer served are dropped.
fn update_managers(
    live: &Value,
    new: &Value,
    managed: &mut Managed,
    me: &Id,
    force: bool,
    ctx: &Ctx,
) -> Result<typed::Comparison, ConflictSets> {
    let Some(own) = ctx.compare_in(live, new, ctx.api_version) else {
        return Ok(typed::Comparison::default());
    };
    let mut by_version: BTreeMap<&str, Option<typed::Comparison>> = BTreeMap::new();
    let mut conflicts: ConflictSets = Vec::new();
    let mut removed: Vec<(Id, FieldSet)> = Vec::new();
    let mut gone: Vec<Id> = Vec::new();
    // What this write changed, in the request's version: taken from the managers of that
    // version (most often all of them), so built once, when there is one.
    let mut own_changed: Option<FieldSet> = None;
    for (id, e) in managed.fields.iter().filter(|(id, _)| *id != me) {
        let cmp = if e.api_version == ctx.api_version {
            Some(&own)
        } else {
            by_version
                .entry(e.api_version.as_str())
                .or_insert_with(|| ctx.compare_in(live, new, &e.api_version))
                .as_ref()
        };
        let Some(cmp) = cmp else {
            gone.push(id.clone());
            continue;
        };
        let taken = if e.api_version == ctx.api_version {
            e.set
                .intersection(own_changed.get_or_insert_with(|| own.modified.union(&own.added)))
        } else {
            e.set.intersection(&cmp.modified.union(&cmp.added))
        };
        if !taken.is_empty() {
            conflicts.push((id.clone(), taken));
        }
        if !cmp.removed.is_empty() {
            removed.push((id.clone(), cmp.removed.clone()));
        }
    }
    if !force && !conflicts.is_empty() {
        return Err(conflicts);
    }
    for (id, s) in conflicts.iter().chain(&removed) {
        if let Some(e) = managed.fields.get_mut(id) {
            e.set.difference_in(s);
        }
    }
    for id in &gone {
        managed.fields.remove(id);
    }
    managed.fields.retain(|_, e| !e.set.is_empty());
    Ok(own)
}

/// `Updater.Update`: `me` owns what changed between `live` and `new`.
fn structured_update(live: &Value, new: &Value, managed: &mut Managed, me: &Id, ctx: &Ctx) {
    let Ok(cmp) = update_managers(live, new, managed, me, true, ctx) else {
        return;
    };
    let mut set = managed
        .fields
        .get(me)
        .map(|e| e.set.difference(&cmp.removed))
        .unwrap_or_default();
    set.union_with(cmp.modified);
    set.union_with(cmp.added);
    let set = ctx.filter(set);
    if set.is_empty() {
        managed.fields.remove(me);
    } else {
        managed.fields.insert(
            me.clone(),
            Entry {
                set,
                api_version: ctx.api_version.to_string(),
                applied: false,
            },
        );
    }
}

/// `managedFieldsUpdater.Update` around `stripMeta` and the structured update: the entry of `id`
/// grows (and its time moves) only when the write changed something.
fn tracked_update(live: &Value, new: &Value, managed: &mut Managed, id: &Id, ctx: &Ctx) {
    let temp = Id::current_operation();
    structured_update(live, new, managed, &temp, ctx);
    strip_meta(managed, &temp);
    if let Some(e) = managed.fields.remove(&temp) {
        let mut set = e.set;
        if let Some(prev) = managed.fields.get(id) {
            set.union_in(&prev.set);
        }
        managed.fields.insert(
            id.clone(),
            Entry {
                set,
                api_version: e.api_version,
                applied: false,
            },
        );
        managed.times.insert(id.clone(), ctx.now.to_string());
    }
}

/// `Updater.prune`: removes what the applier owned last time and no longer applies, unless
/// another manager owns it. Done in the version the applier last applied through (`last`),
/// each other manager's fields added back in its own version; the result is in the request's.
fn prune(merged: Value, managed: &Managed, last: Option<&Entry>, ctx: &Ctx) -> Value {
    let Some(last) = last.filter(|l| !l.set.is_empty()) else {
        return merged;
    };
    let versions = ctx.versions;
    let or_empty = |v: Option<Value>| v.unwrap_or_else(|| Value::Object(Map::new()));
    let mut version = last.api_version.as_str();
    let mut merged = versions.convert(merged, ctx.api_version, version);
    let root = ctx.root_of(version);
    let mut pruned = or_empty(remove_items(
        &merged,
        &ensure_named(&last.set, Some(root)),
        root,
    ));
    // addBackOwnedItems, the last-applied version first.
    let mut owned: BTreeMap<&str, FieldSet> = BTreeMap::new();
    for e in managed.fields.values() {
        let set = owned.entry(e.api_version.as_str()).or_default();
        set.union_in(&e.set);
    }
    let first = owned.remove_entry(version);
    for (v, set) in first.into_iter().chain(owned) {
        if v != version {
            merged = versions.convert(merged, version, v);
            pruned = versions.convert(pruned, version, v);
            version = v;
        }
        let root = ctx.root_of(v);
        let ens = |s: &FieldSet| ensure_named(s, Some(root));
        let merged_set = ens(&to_set(&merged, root));
        let pruned_set = ens(&to_set(&pruned, root));
        let to_remove = merged_set.difference(&pruned_set.union(&ens(&set)));
        pruned = or_empty(remove_items(&merged, &to_remove, root));
    }
    // addBackDanglingItems, in the last-applied version.
    let last_version = last.api_version.as_str();
    let merged = versions.convert(merged, version, last_version);
    let pruned = versions.convert(pruned, version, last_version);
    let root = ctx.root_of(last_version);
    let ens = |s: &FieldSet| ensure_named(s, Some(root));
    let merged_set = ens(&to_set(&merged, root));
    let pruned_set = ens(&to_set(&pruned, root));
    let to_remove = merged_set
        .difference(&pruned_set)
        .intersection(&ens(&last.set));
    let out = or_empty(remove_items(&merged, &to_remove, root));
    versions.convert(out, last_version, ctx.api_version)
}

/// `managedFieldsUpdater.Apply` around `stripMeta` and `Updater.Apply`. Returns the new object
/// (`None`: unchanged) and the managers.
fn apply_inner(
    live: &Value,
    config: &Value,
    mut managed: Managed,
    id: &Id,
    force: bool,
    ctx: &Ctx,
) -> Result<(Option<Value>, Managed), (ConflictSets, Managed)> {
    let root = ctx.root;
    let merged = merge(Some(live), Some(config), root).unwrap_or_else(|| Value::Object(Map::new()));
    let last = managed.fields.get(id).cloned();
    let set = ctx.filter(to_set(config, root));
    managed.fields.insert(
        id.clone(),
        Entry {
            set,
            api_version: ctx.api_version.to_string(),
            applied: true,
        },
    );
    let merged = prune(merged, &managed, last.as_ref(), ctx);
    if let Err(conflicts) = update_managers(live, &merged, &mut managed, id, force, ctx) {
        // The conflicts name other managers, whose entries are as they were.
        return Err((conflicts, managed));
    }
    let unchanged = fieldpath::values_equal(live, &merged);
    strip_meta(&mut managed, id);
    if unchanged {
        return Ok((None, managed));
    }
    managed.times.insert(id.clone(), ctx.now.to_string());
    Ok((Some(merged), managed))
}

/// `lastAppliedManager.allowedConflictsFromLastApplied`: the fields kubectl's client-side apply
/// set to what they still are.
fn allowed_from_last_applied(live: &Value, ctx: &Ctx) -> Option<FieldSet> {
    let text = live
        .get("metadata")?
        .get("annotations")?
        .get(LAST_APPLIED)?
        .as_str()
        .filter(|s| !s.is_empty())?;
    let last: Value = serde_json::from_str(text).ok()?;
    if !last.is_object() || last.get("apiVersion").and_then(Value::as_str) != Some(ctx.api_version)
    {
        return None;
    }
    let set = to_set(&last, ctx.root);
    let cmp = compare(&last, live, ctx.root);
    Some(
        set.difference(&cmp.modified)
            .difference(&cmp.added)
            .difference(&cmp.removed),
    )
}

/// `lastAppliedUpdater`: the annotation becomes the applied configuration (without itself),
/// as `json.Encoder` writes it; dropped if the annotations would exceed 256 KiB.
fn set_last_applied(obj: &mut Value, config: &Value) {
    let mut cfg = config.clone();
    if let Some(Value::Object(a)) = cfg
        .get_mut("metadata")
        .and_then(|m| m.get_mut("annotations"))
    {
        a.remove(LAST_APPLIED);
    }
    let text = format!("{}\n", go_json(&cfg));
    let Some(Value::Object(annotations)) = obj
        .get_mut("metadata")
        .and_then(|m| m.get_mut("annotations"))
    else {
        return;
    };
    annotations.insert(LAST_APPLIED.into(), Value::String(text));
    let size: usize = annotations
        .iter()
        .map(|(k, v)| k.len() + v.as_str().map_or(0, str::len))
        .sum();
    if size > 256 * 1024 {
        annotations.remove(LAST_APPLIED);
    }
}

fn has_last_applied(obj: &Value) -> bool {
    obj.get("metadata")
        .and_then(|m| m.get("annotations"))
        .and_then(|a| a.get(LAST_APPLIED))
        .and_then(Value::as_str)
        .is_some_and(|s| !s.is_empty())
}

/// Merges an apply configuration into an object as server-side apply merges (maps per key,
/// associative lists per item, the rest replaced), typed by `schema` (none: the value's own
/// shape): what a MutatingAdmissionPolicy's `ApplyConfiguration` mutation does.
pub fn merge_configuration(live: &Value, config: &Value, schema: Option<Shape<'_>>) -> Value {
    typed::merge(Some(live), Some(config), typed::Ty::Root(schema)).unwrap_or_else(|| live.clone())
}

/// Server-side apply (PATCH with `application/apply-patch+yaml`): merges `config` (the applier's
/// intent) into `live` (`None`: the object is being created) by the schema, removes what this
/// manager applied before and no longer applies (unless someone else owns it), and records the
/// applier as owner of everything in `config`.
///
/// `schema` is the CRD version's structural schema root; `None` treats everything as schemaless
/// data (maps merged per key, lists atomic), with `metadata` always merged as ObjectMeta.
/// `subresource` is "" or `status` (a status apply never owns `spec`; the caller strips `status`
/// from main-resource applies when the status subresource is enabled). `now` is the RFC 3339 time
/// written to the entries of managers whose operation changed the object.
///
/// Returns the new object with `metadata.managedFields`; when the apply changed nothing it is
/// `live` itself, with the same managedFields unless ownership changed (so comparing with `live`
/// detects a no-op). `Err` lists the fields other managers own with a different value
/// (`force` takes them instead). The caller rejects beforehand what the apiserver rejects before
/// merging: a `config` with `metadata.managedFields` (it is ignored here), a wrong
/// apiVersion/kind, and [`validate_config`] errors. The `kubectl` manager's client-side-apply
/// upgrade is honoured.
#[allow(clippy::too_many_arguments)]
pub fn apply(
    live: Option<&Value>,
    config: &Value,
    manager: &str,
    subresource: &str,
    versions: &Versions<'_>,
    force: bool,
    schema: Option<Shape<'_>>,
    now: &str,
) -> Result<Value, Conflicts> {
    let ctx = Ctx::new(schema, versions, subresource, now);
    let api_version = versions.own();
    let manager = manager_or_unknown(manager);
    // The apiserver fails the request on undecodable managedFields; they are dropped here.
    let mut managed = live
        .map_or(Ok(Managed::default()), Managed::decode_obj)
        .unwrap_or_default();
    let live_obj = live
        .filter(|v| v.is_object())
        .map_or_else(|| Value::Object(Map::new()), without_managed_fields);
    let config = match config.get("metadata").and_then(|m| m.get("managedFields")) {
        None if config.is_object() => Cow::Borrowed(config),
        _ => {
            let mut config = object_or_empty(Some(config));
            strip_managed_fields(&mut config);
            Cow::Owned(config)
        }
    };

    if managed.fields.is_empty() {
        let before = Id::new(BEFORE_FIRST_APPLY, "Update", api_version, subresource);
        let empty = Value::Object(Map::new());
        tracked_update(&empty, &live_obj, &mut managed, &before, &ctx);
    }

    let id = Id::new(manager, "Apply", api_version, subresource);
    // kubectl may retry, forcing what its client-side apply set: from the same managers.
    let retry = (manager == "kubectl").then(|| managed.clone());
    let result = match (
        apply_inner(&live_obj, &config, managed, &id, force, &ctx),
        retry,
    ) {
        (Err((conflicts, tried)), Some(managed)) => {
            match allowed_from_last_applied(&live_obj, &ctx) {
                Some(allowed) => match not_allowed(conflicts, &allowed) {
                    rest if rest.is_empty() => {
                        apply_inner(&live_obj, &config, managed, &id, true, &ctx)
                    }
                    rest => Err((rest, tried)),
                },
                None => Err((conflicts, tried)),
            }
        }
        (r, _) => r,
    };
    let (obj, managed) = result.map_err(|(c, managed)| Conflicts::from_sets(c, &managed))?;
    let mut out = obj.unwrap_or(live_obj);
    if manager == "kubectl" && has_last_applied(&out) {
        set_last_applied(&mut out, &config);
    }
    write_entries(&mut out, managed.encode());
    Ok(out)
}

/// The conflicts left once those on `allowed` fields are forced.
fn not_allowed(conflicts: ConflictSets, allowed: &FieldSet) -> ConflictSets {
    conflicts
        .into_iter()
        .map(|(cid, s)| {
            let mut kept = FieldSet::default();
            for p in s.paths() {
                if !allowed.has(&p) {
                    kept.insert(&p);
                }
            }
            (cid, kept)
        })
        .filter(|(_, s)| !s.is_empty())
        .collect()
}

/// The manager of a write that names none is `unknown`.
fn manager_or_unknown(manager: &str) -> &str {
    if manager.is_empty() {
        UNKNOWN_MANAGER
    } else {
        manager
    }
}

/// A copy of an object to work on: an empty one for none, or for a value that is not an object.
fn object_or_empty(v: Option<&Value>) -> Value {
    v.filter(|v| v.is_object())
        .cloned()
        .unwrap_or_else(|| Value::Object(Map::new()))
}

/// A copy of `obj` without `metadata.managedFields`, which is never copied: every update
/// compares against the live object without them.
fn without_managed_fields(obj: &Value) -> Value {
    let Value::Object(o) = obj else {
        return obj.clone();
    };
    let copy = o
        .iter()
        .map(|(k, v)| {
            let v = match (k.as_str(), v) {
                ("metadata", Value::Object(meta)) => Value::Object(
                    meta.iter()
                        .filter(|(k, _)| *k != "managedFields")
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect(),
                ),
                _ => v.clone(),
            };
            (k.clone(), v)
        })
        .collect();
    Value::Object(copy)
}

/// Records a non-apply write (create, update, JSON/merge/strategic patch) by `manager`: the
/// fields it changed between `old` (`None`: create) and `new` become its own (operation Update,
/// one entry per manager, apiVersion and subresource) and are taken from other managers; fields
/// it removed are dropped from everyone. Rewrites `new`'s `metadata.managedFields`.
///
/// As the apiserver: managedFields sent in `new` replace the live ones when they decode and are
/// non-empty (an empty list, or a single empty entry, resets them), and are ignored on
/// subresources; an existing object without managedFields stays untracked until its next apply.
/// Call it on the object as it will be stored (after the strategy reset status or spec), so
/// fields the write could not change are not counted.
#[allow(clippy::too_many_arguments)]
pub fn record_update(
    old: Option<&Value>,
    new: &mut Value,
    manager: &str,
    subresource: &str,
    versions: &Versions<'_>,
    schema: Option<Shape<'_>>,
    now: &str,
) {
    if !new.is_object() {
        return;
    }
    let ctx = Ctx::new(schema, versions, subresource, now);
    let api_version = versions.own();
    let id = Id::new(
        manager_or_unknown(manager),
        "Update",
        api_version,
        subresource,
    );
    if !in_place::record_update(old, new, &id, &ctx) {
        record_update_by_sets(old, new, &id, &ctx);
    }
    cap::cap_update_managers(new);
}

/// [`record_update`] on the decoded entries: the general path, for entries in any form and
/// managers of other versions.
fn record_update_by_sets(old: Option<&Value>, new: &mut Value, id: &Id, ctx: &Ctx) {
    let empty = Value::Object(Map::new());
    let live = old.filter(|v| v.is_object()).unwrap_or(&empty);
    let live_managed = || {
        old.map_or(Ok(Managed::default()), Managed::decode_obj)
            .unwrap_or_default()
    };
    let mut managed = if !id.subresource.is_empty() {
        live_managed()
    } else if is_reset_managed_fields(new) {
        Managed::default()
    } else {
        match Managed::decode_obj(new) {
            Ok(m) if !m.fields.is_empty() => m,
            _ => live_managed(),
        }
    };
    strip_managed_fields(new);

    let is_create = live
        .get("metadata")
        .and_then(|m| m.get("uid"))
        .and_then(Value::as_str)
        .is_none_or(str::is_empty);
    if managed.fields.is_empty() && !is_create {
        return;
    }
    tracked_update(live, new, &mut managed, id, ctx);
    write_entries(new, managed.encode());
}

/// `isResetManagedFields`: `managedFields: []` or a single empty entry.
fn is_reset_managed_fields(obj: &Value) -> bool {
    match obj.get("metadata").and_then(|m| m.get("managedFields")) {
        Some(Value::Array(a)) => {
            a.is_empty() || (a.len() == 1 && a[0].as_object().is_some_and(Map::is_empty))
        }
        _ => false,
    }
}

// ---------------------------------------------------------------------------------------------
// Conflicts

/// One conflicting field of an apply: the path and a manager owning it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    /// The owning manager.
    pub manager: String,
    /// Its operation (`Apply` or `Update`): an Update manager is printed with its apiVersion.
    pub operation: String,
    /// The apiVersion of its entry.
    pub api_version: String,
    /// Its subresource ("" for the main resource).
    pub subresource: String,
    /// The path as the apiserver prints it: `.spec.replicas`, `.spec.list[name="a"].image`.
    pub field: String,
}

impl Conflict {
    fn id(&self) -> Id {
        Id::new(
            &self.manager,
            &self.operation,
            &self.api_version,
            &self.subresource,
        )
    }

    /// `printManager`: `"m"`, `"m" with subresource "status"`, `"m" using v1`.
    fn print_manager(&self) -> String {
        let mut s = go_quote(&self.manager);
        if !self.subresource.is_empty() {
            s.push_str(&format!(
                " with subresource {}",
                go_quote(&self.subresource)
            ));
        }
        if self.operation == "Update" {
            s.push_str(&format!(" using {}", self.api_version));
        }
        s
    }
}

/// Why an apply was refused: each field another manager owns with a different value, grouped by
/// manager (in the apiserver's order of manager identities, then paths).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflicts(pub Vec<Conflict>);

impl Conflicts {
    fn from_sets(sets: ConflictSets, managed: &Managed) -> Conflicts {
        let mut sets = sets;
        sets.sort_by_key(|(id, _)| id.key());
        let mut out = Vec::new();
        for (id, set) in sets {
            let api_version = managed
                .fields
                .get(&id)
                .map(|e| e.api_version.clone())
                .unwrap_or_else(|| id.api_version.clone());
            for p in set.paths() {
                out.push(Conflict {
                    manager: id.manager.clone(),
                    operation: id.operation.clone(),
                    api_version: api_version.clone(),
                    subresource: id.subresource.clone(),
                    field: path_string(&p),
                });
            }
        }
        Conflicts(out)
    }

    /// The apiserver's message: `Apply failed with 1 conflict: conflict with "m" using v1:
    /// .spec.replicas`, or for several `Apply failed with 2 conflicts: conflicts with "m":` and
    /// one `- <path>` line per field.
    pub fn message(&self) -> String {
        if self.0.len() == 1 {
            let c = &self.0[0];
            return format!(
                "Apply failed with 1 conflict: conflict with {}: {}",
                c.print_manager(),
                c.field
            );
        }
        let mut groups: BTreeMap<String, (String, Vec<&str>)> = BTreeMap::new();
        for c in &self.0 {
            groups
                .entry(c.id().key())
                .or_insert_with(|| (c.print_manager(), Vec::new()))
                .1
                .push(&c.field);
        }
        let mut lines = Vec::new();
        for (printed, fields) in groups.values() {
            lines.push(format!("conflicts with {printed}:"));
            for f in fields {
                lines.push(format!("- {f}"));
            }
        }
        format!(
            "Apply failed with {} conflicts: {}",
            self.0.len(),
            lines.join("\n")
        )
    }

    /// The apiserver's 409 (`errors.NewApplyConflict`): reason Conflict, [`Conflicts::message`],
    /// and one `FieldManagerConflict` cause per field. The apiserver puts no name, group or kind
    /// in these details (a TODO in apimachinery), so the arguments only serve callers' logging
    /// symmetry with the other constructors and are not rendered.
    pub fn to_api_error(&self, group: &str, resource: &str, name: &str) -> ApiError {
        let _ = (group, resource, name);
        let causes = self
            .0
            .iter()
            .map(|c| StatusCause {
                reason: "FieldManagerConflict".into(),
                message: format!("conflict with {}", c.print_manager()),
                field: c.field.clone(),
            })
            .collect();
        ApiError {
            code: 409,
            reason: "Conflict".into(),
            message: self.message(),
            details: Some(Box::new(StatusDetails {
                causes,
                ..Default::default()
            })),
            continue_token: None,
        }
    }
}

impl std::fmt::Display for Conflicts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message())
    }
}

impl std::error::Error for Conflicts {}

// ---------------------------------------------------------------------------------------------
// Default manager and config validation

/// Go's `unicode.IsPrint`, approximately: letters, marks, numbers, punctuation, symbols and the
/// ASCII space.
fn is_print(c: char) -> bool {
    if c == ' ' {
        return true;
    }
    !(c.is_control()
        || c.is_whitespace()
        || matches!(c, '\u{ad}' | '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}'
            | '\u{2060}'..='\u{206f}' | '\u{feff}' | '\u{fff9}'..='\u{fffb}'
            | '\u{e000}'..='\u{f8ff}' | '\u{f0000}'..='\u{10ffff}'))
}

/// The field manager of a write that names none (`prefixFromUserAgent`): the User-Agent up to
/// its first `/`, without unprintable characters, cut at 128 bytes. kubectl sends
/// `kubectl/v1.30.0 (linux/amd64) ...` (giving `kubectl`), client-go programs their binary name.
pub fn default_manager(user_agent: &str) -> String {
    let prefix = user_agent.split('/').next().unwrap_or("");
    let mut out = String::new();
    for c in prefix.chars().filter(|c| is_print(*c)) {
        if out.len() + c.len_utf8() > FIELD_MANAGER_MAX_LENGTH {
            break;
        }
        out.push(c);
    }
    out
}

/// The errors structured-merge-diff reports converting an apply configuration to its typed form
/// (the apiserver answers them with a 500 `failed to create typed patch object (<ns>/<name>;
/// <gvk>): <this>`): list items that cannot be identified (`.spec.ports: element 0: associative
/// list with keys has an element that omits all key fields ["name"] (and doesn't have default
/// values for any key fields)`), `duplicate entries for key [name="a"]`, and fields a schema
/// without `additionalProperties` or preserve-unknown-fields does not declare (`.spec.foo: field
/// not declared in schema`). Scalar type mismatches are left to schema validation. [`apply`]
/// never fails on these: it treats such lists as atomic.
pub fn validate_config(config: &Value, schema: Option<Shape<'_>>) -> Result<(), ApplyError> {
    let mut errs = Vec::new();
    let mut path = Vec::new();
    validate_at(config, Ty::Root(schema), &mut path, &mut errs);
    if errs.is_empty() {
        Ok(())
    } else {
        Err(ApplyError::InvalidConfig(errs))
    }
}

fn validation_error(path: &[PathElement], message: String) -> ValidationError {
    ValidationError {
        path: path_string(path),
        message,
    }
}

fn validate_at(v: &Value, ty: Ty, path: &mut Vec<PathElement>, errs: &mut Vec<ValidationError>) {
    match v {
        Value::Object(m) if typed::accepts_map(ty) => {
            for (k, x) in m {
                path.push(PathElement::Field(k.clone()));
                if typed::undeclared(ty, k) {
                    errs.push(validation_error(
                        path,
                        "field not declared in schema".into(),
                    ));
                    path.pop();
                    return;
                }
                validate_at(x, ty.field(k).0, path, errs);
                path.pop();
            }
        }
        Value::Array(items) if typed::accepts_list(ty) => validate_list(items, ty, path, errs),
        _ => {}
    }
}

/// The items of a list: each must be identifiable (by its keys in a map list, by value in a
/// set), once.
fn validate_list(
    items: &[Value],
    ty: Ty,
    path: &mut Vec<PathElement>,
    errs: &mut Vec<ValidationError>,
) {
    let lt = ty.list();
    let mut seen = std::collections::BTreeSet::new();
    for (i, item) in items.iter().enumerate() {
        let pe = if matches!(lt.kind, typed::ListKind::Atomic) {
            PathElement::Index(i as i64)
        } else {
            let Some(pe) = typed::item_pe(&lt, item) else {
                let why = unidentifiable_item(&lt.kind, item);
                errs.push(validation_error(path, format!("element {i}: {why}")));
                return;
            };
            if !seen.insert(pe.clone()) {
                errs.push(validation_error(
                    path,
                    format!("duplicate entries for key {pe}"),
                ));
            }
            pe
        };
        path.push(pe);
        validate_at(item, lt.elem, path, errs);
        path.pop();
    }
}

/// Why smd cannot name an item of an associative list.
fn unidentifiable_item(kind: &typed::ListKind, item: &Value) -> String {
    use typed::ListKind;
    match (kind, item) {
        (ListKind::Map(_), Value::Null) => {
            "associative list with keys may not have a null element".to_string()
        }
        (ListKind::Map(keys), Value::Object(_)) => {
            let keys: Vec<String> = keys.iter().map(|k| go_quote(k)).collect();
            format!(
                "associative list with keys has an element that omits all key fields [{}] (and doesn't have default values for any key fields)",
                keys.join(" ")
            )
        }
        (ListKind::Map(_), _) => {
            "associative list with keys may not have non-map elements".to_string()
        }
        (_, Value::Object(_)) => {
            "associative list without keys has an element that's a map type".to_string()
        }
        (_, Value::Array(_)) => {
            "not supported: associative list with lists as elements".to_string()
        }
        _ => "associative list without keys has an element that's an explicit null".to_string(),
    }
}
