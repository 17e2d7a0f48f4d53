//! ObjectMeta rules every resource shares: names, generateName, system fields (uid,
//! creationTimestamp), and what an update may not change. The generic registry's
//! `BeforeCreate`/`BeforeUpdate` in one place.

use serde_json::{json, Map, Value};

use crate::error::{field, StatusCause};
use crate::registry::strategy::Strategy;

/// How a resource's names are validated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameRule {
    /// RFC 1123 subdomain (most resources, custom resources, CRDs).
    Subdomain,
    /// RFC 1123 label (namespaces).
    Label,
    /// Anything usable as one URL path segment (`content.IsPathSegmentName`): RBAC roles and
    /// bindings (`system:controller:x`), PodDisruptionBudgets.
    PathSegment,
    /// An IP address in canonical form (`IsValidIP`): IPAddresses.
    Ip,
}

use crate::machinery::names::{dns1123_label_errors, dns1123_subdomain_errors};
pub use crate::machinery::names::{
    is_dns1123_label, is_dns1123_subdomain, is_label_value, is_qualified_name,
};

/// The apiserver's messages for a name that fails `rule` (empty when it passes).
pub fn name_errors(name: &str, rule: NameRule) -> Vec<String> {
    let mut errs = Vec::new();
    match rule {
        NameRule::Subdomain => errs.extend(dns1123_subdomain_errors(name)),
        NameRule::Label => errs.extend(dns1123_label_errors(name)),
        NameRule::PathSegment => errs.extend(path_segment_errors(name)),
        NameRule::Ip => errs.extend(crate::registry::validation::ip_messages(name)),
    }
    errs
}

/// `content.IsPathSegmentName`: not `.` or `..`, no `/` or `%`.
pub fn path_segment_errors(name: &str) -> Vec<String> {
    if name == "." || name == ".." {
        return vec![format!("may not be '{name}'")];
    }
    ["/", "%"]
        .iter()
        .filter(|c| name.contains(**c))
        .map(|c| format!("may not contain '{c}'"))
        .collect()
}

/// RFC 3339 time in whole seconds, UTC: the format of every `metav1.Time`. Every write asks
/// for it (creationTimestamp, managedFields times), so the rendering is kept for the second
/// it names and formatted again only when the clock moves on.
pub fn now_rfc3339() -> String {
    static LAST: parking_lot::Mutex<(i64, String)> =
        parking_lot::Mutex::new((i64::MIN, String::new()));
    let now = chrono::Utc::now();
    let second = now.timestamp();
    let mut last = LAST.lock();
    if last.0 != second {
        *last = (second, now.format("%Y-%m-%dT%H:%M:%SZ").to_string());
    }
    last.1.clone()
}

/// A new object's uid (and a request's audit ID): a random (version 4) UUID, as the
/// apiserver's. Its bits come from the thread's fast generator rather than the operating
/// system's, which costs a system call per uid: uids must be unique, not secret. Formatted with
/// a table, which is quick in the unoptimised builds tests use as well as in release ones.
pub fn new_uid() -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let random = fastrand::u128(..);
    // The version (4) in the high nibble of byte 6, the variant (0b10) in the top bits of byte 8.
    let version = (random & !(0xf << 76)) | (0x4 << 76);
    let bytes = ((version & !(0x3 << 62)) | (0x2 << 62)).to_be_bytes();
    let mut uid = [b'-'; 36];
    let mut at = 0;
    for (i, byte) in bytes.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            at += 1;
        }
        uid[at] = HEX[usize::from(byte >> 4)];
        uid[at + 1] = HEX[usize::from(byte & 0xf)];
        at += 2;
    }
    String::from_utf8(uid.to_vec()).unwrap_or_default()
}

/// The alphabet of `k8s.io/apimachinery/pkg/util/rand.String`: no vowels, no confusable digits.
const GENERATE_ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";

/// `generateName` + 5 random characters, with the prefix cut so the result fits 63 characters.
pub fn generate_name(prefix: &str) -> String {
    let max_prefix = 63 - 5;
    let prefix = if prefix.len() > max_prefix {
        &prefix[..floor_char_boundary(prefix, max_prefix)]
    } else {
        prefix
    };
    let suffix: String = (0..5)
        .map(|_| GENERATE_ALPHABET[fastrand::usize(..GENERATE_ALPHABET.len())] as char)
        .collect();
    format!("{prefix}{suffix}")
}

fn floor_char_boundary(s: &str, mut i: usize) -> usize {
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The metadata map of an object, created when missing or not an object.
pub fn meta_mut(obj: &mut Value) -> &mut Map<String, Value> {
    if !obj.get("metadata").is_some_and(Value::is_object) {
        obj["metadata"] = json!({});
    }
    match obj.get_mut("metadata").and_then(Value::as_object_mut) {
        Some(m) => m,
        None => unreachable!("metadata was just made an object"),
    }
}

/// A string field of `metadata`, or "".
pub fn meta_str<'a>(obj: &'a Value, key: &str) -> &'a str {
    obj.get("metadata")
        .and_then(|m| m.get(key))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// `metadata.finalizers` as strings.
pub fn finalizers(obj: &Value) -> Vec<String> {
    obj.get("metadata")
        .and_then(|m| m.get("finalizers"))
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

/// Fills the system fields on create, as `rest.BeforeCreate` and `FillObjectMetaSystemFields`
/// do: a generated name, a fresh uid and creationTimestamp, no deletion fields, no
/// resourceVersion; `generation: 1` when the resource tracks generations, else none (or the
/// client's, for a kind that [`Strategy::keeps_sent_generation`]).
pub fn prepare_for_create(obj: &mut Value, namespace: &str, strategy: &dyn Strategy) {
    let meta = meta_mut(obj);
    let name_missing = meta
        .get("name")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty);
    if name_missing {
        if let Some(prefix) = meta.get("generateName").and_then(Value::as_str) {
            if !prefix.is_empty() {
                let generated = generate_name(prefix);
                meta.insert("name".into(), json!(generated));
            }
        }
    }
    if namespace.is_empty() {
        meta.remove("namespace");
    } else {
        meta.insert("namespace".into(), json!(namespace));
    }
    meta.insert("uid".into(), json!(new_uid()));
    meta.insert("creationTimestamp".into(), json!(now_rfc3339()));
    meta.remove("deletionTimestamp");
    meta.remove("deletionGracePeriodSeconds");
    meta.remove("selfLink");
    meta.remove("resourceVersion");
    if strategy.track_generation() {
        meta.insert("generation".into(), json!(1));
    } else if !strategy.keeps_sent_generation() {
        meta.remove("generation");
    }
}

/// Carries over what an update may not change, as `rest.BeforeUpdate` does: creationTimestamp,
/// generation (strategies bump it), deletion fields, and the uid when the client left it empty.
pub fn prepare_for_update(obj: &mut Value, old: &Value) {
    // Read in place: the old metadata (managedFields and all) is never copied whole.
    let empty = Map::new();
    let old_meta = old
        .get("metadata")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let meta = meta_mut(obj);
    for key in [
        "creationTimestamp",
        "generation",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
    ] {
        match old_meta.get(key) {
            Some(v) => meta.insert(key.into(), v.clone()),
            None => meta.remove(key),
        };
    }
    if meta
        .get("uid")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        if let Some(uid) = old_meta.get("uid") {
            meta.insert("uid".into(), uid.clone());
        }
    }
    meta.remove("selfLink");
}

/// `ValidateObjectMeta` for create: the name (or generateName) and basic metadata shape.
pub fn validate_create(obj: &Value, rule: NameRule) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let name = meta_str(obj, "name");
    if name.is_empty() {
        errs.push(field::required(
            "metadata.name",
            "name or generateName is required",
        ));
    } else {
        for msg in name_errors(name, rule) {
            errs.push(field::invalid("metadata.name", &json!(name), &msg));
        }
    }
    errs.extend(validate_common(obj));
    errs
}

/// `ValidateObjectMetaUpdate`: identity fields are immutable.
pub fn validate_update(obj: &Value, old: &Value) -> Vec<StatusCause> {
    let mut errs = validate_common(obj);
    for key in ["name", "namespace", "uid"] {
        let new_v = meta_str(obj, key);
        if new_v != meta_str(old, key) {
            errs.push(field::invalid(
                &format!("metadata.{key}"),
                &json!(new_v),
                "field is immutable",
            ));
        }
    }
    errs
}

/// Label and annotation syntax shared by create and update.
fn validate_common(obj: &Value) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    if let Some(meta) = obj.get("metadata").and_then(Value::as_object) {
        validate_labels_and_annotations(meta, "metadata", &mut errs);
        if let Some(Value::Array(refs)) = meta.get("ownerReferences") {
            validate_owner_references(refs, &mut errs);
        }
    }
    errs
}

/// `ValidateOwnerReferences`: each reference names a version, kind, name and uid and no banned
/// owner; at most one is the controller. Errors are on `metadata.ownerReferences` (no index),
/// as the apiserver reports them.
fn validate_owner_references(refs: &[Value], errs: &mut Vec<StatusCause>) {
    const PATH: &str = "metadata.ownerReferences";
    let mut first_controller: Option<String> = None;
    for r in refs {
        let s = |k: &str| r.get(k).and_then(Value::as_str).unwrap_or("");
        let (api_version, kind) = (s("apiVersion"), s("kind"));
        let version = match api_version.split_once('/') {
            _ if api_version.matches('/').count() > 1 => "",
            Some((_, v)) => v,
            None => api_version,
        };
        if version.is_empty() {
            errs.push(field::invalid(
                &format!("{PATH}.apiVersion"),
                &json!(api_version),
                "version must not be empty",
            ));
        }
        for key in ["kind", "name", "uid"] {
            if s(key).is_empty() {
                errs.push(field::invalid(
                    &format!("{PATH}.{key}"),
                    &json!(""),
                    "must not be empty",
                ));
            }
        }
        if api_version == "v1" && kind == "Event" {
            errs.push(invalid_rendered(
                PATH,
                &go_owner_reference(r),
                "/v1, Kind=Event is disallowed from being an owner",
            ));
        }
        if r.get("controller").and_then(Value::as_bool) == Some(true) {
            let current = format!("{kind}/{}", s("name"));
            match &first_controller {
                Some(first) => {
                    let all: Vec<String> = refs.iter().map(go_owner_reference).collect();
                    errs.push(invalid_rendered(
                        PATH,
                        &format!("[{}]", all.join(",")),
                        &format!("Only one reference can have Controller set to true. Found \"true\" in references for {first} and {current}"),
                    ));
                }
                None => first_controller = Some(current),
            }
        }
    }
}

/// An `Invalid value` cause whose value is already rendered as the apiserver renders it.
fn invalid_rendered(path: &str, rendered: &str, detail: &str) -> StatusCause {
    StatusCause {
        reason: "FieldValueInvalid".into(),
        message: format!("Invalid value: {rendered}: {detail}"),
        field: path.to_string(),
    }
}

/// An OwnerReference as Go's `json.Marshal` writes the struct: its fields in declaration order,
/// the optional booleans only when set.
fn go_owner_reference(r: &Value) -> String {
    let s = |k: &str| json!(r.get(k).and_then(Value::as_str).unwrap_or("")).to_string();
    let mut out = format!(
        "{{\"apiVersion\":{},\"kind\":{},\"name\":{},\"uid\":{}",
        s("apiVersion"),
        s("kind"),
        s("name"),
        s("uid")
    );
    for key in ["controller", "blockOwnerDeletion"] {
        if let Some(b) = r.get(key).and_then(Value::as_bool) {
            out.push_str(&format!(",\"{key}\":{b}"));
        }
    }
    out.push('}');
    out
}

/// `ValidateLabels` and `ValidateAnnotations` of an ObjectMeta at `path` (the root's
/// `metadata`, or an embedded resource's): qualified-name keys, label values, and the 256 KiB
/// annotation budget. Annotation keys are checked lower-cased, as the apiserver does.
pub fn validate_labels_and_annotations(
    meta: &Map<String, Value>,
    path: &str,
    errs: &mut Vec<StatusCause>,
) {
    if let Some(labels) = meta.get("labels").and_then(Value::as_object) {
        for (k, v) in labels {
            if !is_qualified_name(k) {
                errs.push(field::invalid(
                    &format!("{path}.labels"),
                    &json!(k),
                    QUALIFIED_NAME_MSG,
                ));
            }
            let s = v.as_str().unwrap_or("");
            if !is_label_value(s) {
                errs.push(field::invalid(
                    &format!("{path}.labels"),
                    &json!(s),
                    LABEL_VALUE_MSG,
                ));
            }
        }
    }
    if let Some(annotations) = meta.get("annotations").and_then(Value::as_object) {
        let mut total = 0;
        for (k, v) in annotations {
            if !is_qualified_name(&k.to_lowercase()) {
                errs.push(field::invalid(
                    &format!("{path}.annotations"),
                    &json!(k),
                    QUALIFIED_NAME_MSG,
                ));
            }
            total += k.len() + v.as_str().map_or(0, str::len);
        }
        if total > 256 * 1024 {
            errs.push(StatusCause {
                reason: "FieldValueTooLong".into(),
                message: "Too long: may not be more than 262144 bytes".to_string(),
                field: format!("{path}.annotations"),
            });
        }
    }
}

/// The apiserver's message for a key that is not a qualified name.
pub const QUALIFIED_NAME_MSG: &str = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')";
const LABEL_VALUE_MSG: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";

#[cfg(test)]
mod tests {
    use super::*;

    /// A uid is a hyphenated, lowercase version 4 UUID of the RFC 4122 variant, new each time.
    #[test]
    fn uids_are_random_uuids() {
        let uids: std::collections::HashSet<String> = (0..1000).map(|_| new_uid()).collect();
        assert_eq!(uids.len(), 1000);
        for uid in &uids {
            let parsed = uuid::Uuid::parse_str(uid).expect("a UUID");
            assert_eq!(parsed.get_version(), Some(uuid::Version::Random), "{uid}");
            assert_eq!(parsed.get_variant(), uuid::Variant::RFC4122, "{uid}");
            assert_eq!(parsed.hyphenated().to_string(), *uid);
        }
    }

    /// Each expectation is apimachinery's `ValidateOwnerReferences` for the references.
    #[rstest::rstest]
    #[case(json!([{"apiVersion": "v1", "kind": "A", "name": "a", "uid": "1", "controller": true}]), &[])]
    #[case(
        json!([{"apiVersion": "v1", "kind": "A", "name": "a", "uid": "1", "controller": true},
               {"apiVersion": "apps/v1", "kind": "B", "name": "b", "uid": "2", "controller": true, "blockOwnerDeletion": false}]),
        &["metadata.ownerReferences: Invalid value: [{\"apiVersion\":\"v1\",\"kind\":\"A\",\"name\":\"a\",\"uid\":\"1\",\"controller\":true},{\"apiVersion\":\"apps/v1\",\"kind\":\"B\",\"name\":\"b\",\"uid\":\"2\",\"controller\":true,\"blockOwnerDeletion\":false}]: Only one reference can have Controller set to true. Found \"true\" in references for A/a and B/b"]
    )]
    #[case(
        json!([{"apiVersion": "apps/", "kind": "", "name": "", "uid": ""}]),
        &["metadata.ownerReferences.apiVersion: Invalid value: \"apps/\": version must not be empty",
          "metadata.ownerReferences.kind: Invalid value: \"\": must not be empty",
          "metadata.ownerReferences.name: Invalid value: \"\": must not be empty",
          "metadata.ownerReferences.uid: Invalid value: \"\": must not be empty"]
    )]
    #[case(
        json!([{"apiVersion": "v1", "kind": "Event", "name": "e", "uid": "1"}]),
        &["metadata.ownerReferences: Invalid value: {\"apiVersion\":\"v1\",\"kind\":\"Event\",\"name\":\"e\",\"uid\":\"1\"}: /v1, Kind=Event is disallowed from being an owner"]
    )]
    fn owner_references(#[case] refs: Value, #[case] want: &[&str]) {
        let obj = json!({"metadata": {"name": "x", "ownerReferences": refs}});
        let got: Vec<String> = validate_create(&obj, NameRule::Subdomain)
            .iter()
            .map(|c| format!("{}: {}", c.field, c.message))
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn names() {
        assert!(is_dns1123_subdomain("crontabs.stable.example.com"));
        assert!(!is_dns1123_subdomain("Foo"));
        assert!(!is_dns1123_subdomain("a..b"));
        assert!(!is_dns1123_subdomain("-a"));
        assert!(is_dns1123_label("kube-system"));
        assert!(!is_dns1123_label("a.b"));
        assert_eq!(name_errors(&"a".repeat(64), NameRule::Label).len(), 1);
        assert!(name_errors("system:controller:x", NameRule::PathSegment).is_empty());
        assert_eq!(
            name_errors("a/b%", NameRule::PathSegment),
            ["may not contain '/'", "may not contain '%'"]
        );
        assert_eq!(
            name_errors("..", NameRule::PathSegment),
            ["may not be '..'"]
        );
        assert_eq!(
            name_errors("a.b", NameRule::Label),
            ["must not contain dots"]
        );
    }

    #[test]
    fn generated_names_fit_and_use_the_alphabet() {
        let n = generate_name("web-");
        assert_eq!(n.len(), 9);
        assert!(n.starts_with("web-"));
        assert!(n[4..].bytes().all(|c| GENERATE_ALPHABET.contains(&c)));
        assert_eq!(generate_name(&"x".repeat(100)).len(), 63);
    }

    #[test]
    fn create_requires_a_name() {
        let errs = validate_create(&json!({"metadata": {}}), NameRule::Subdomain);
        assert_eq!(errs[0].field, "metadata.name");
        assert_eq!(
            errs[0].message,
            "Required value: name or generateName is required"
        );
    }

    #[test]
    fn qualified_names() {
        assert!(is_qualified_name("app.kubernetes.io/name"));
        assert!(is_qualified_name("app"));
        assert!(!is_qualified_name("/app"));
        assert!(!is_qualified_name("a/b/c"));
        assert!(is_label_value(""));
        assert!(!is_label_value("-x"));
    }
}
