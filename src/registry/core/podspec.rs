//! The pod spec every workload kind embeds: the apiserver's defaults for `PodSpec` and
//! `PodTemplateSpec` (`SetDefaults_PodSpec`, `_Container`, `_Probe`, `_Volume` and the volume
//! sources, `_ObjectFieldSelector`, and `SetDefaults_Pod` for pods themselves) and the part of
//! `ValidatePodSpec` / `ValidatePodTemplateSpec` that clients and controllers actually hit, with
//! the apiserver's messages and field paths: containers (names, images, ports, env, volume
//! mounts, resources and their quantities, probes, pull and termination message policies),
//! volumes (names, one source each, the common sources' required fields and modes), restart and
//! DNS policies, node selector labels, tolerations, names of service accounts, nodes and
//! priority classes, host and subdomain names.
//!
//! Not yet checked: security contexts, affinity terms, topology spread constraints, DNS config,
//! resource claims, pod-level resources, sysctls, OS-specific rules, the rarer volume sources'
//! own fields. What the declarative `+default` markers give (a container port's `TCP`, RBD's
//! pool) is applied before this module runs.

use serde_json::{json, Map, Value};

use crate::cel::Quantity;
use crate::error::{field, StatusCause};
use crate::registry::object_meta::{
    is_qualified_name, name_errors, validate_labels_and_annotations, NameRule, QUALIFIED_NAME_MSG,
};
use crate::registry::pointer::Pointer;
use crate::registry::validation::not_found;

/// The default `terminationMessagePath`.
pub const TERMINATION_MESSAGE_PATH: &str = "/dev/termination-log";
/// The mode of files in secret, configMap, downwardAPI and projected volumes (0644).
const DEFAULT_MODE: i64 = 420;

/// The keys of `VolumeSource`, in the order `validateVolumeSource` checks them.
pub const VOLUME_SOURCES: &[&str] = &[
    "emptyDir",
    "hostPath",
    "gitRepo",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "secret",
    "nfs",
    "iscsi",
    "glusterfs",
    "flocker",
    "persistentVolumeClaim",
    "rbd",
    "cinder",
    "cephfs",
    "quobyte",
    "downwardAPI",
    "fc",
    "flexVolume",
    "configMap",
    "azureFile",
    "vsphereVolume",
    "photonPersistentDisk",
    "portworxVolume",
    "azureDisk",
    "storageos",
    "projected",
    "scaleIO",
    "csi",
    "ephemeral",
    "image",
];

/// The container lists of a pod spec.
const CONTAINER_LISTS: [&str; 3] = ["initContainers", "containers", "ephemeralContainers"];

// ---------------------------------------------------------------------------------------------
// Defaults
// ---------------------------------------------------------------------------------------------

/// Sets `obj[key]` to `value` when it is absent, null or (for strings) empty: the Go
/// defaulters' `if x == "" { x = ... }` and `if x == nil { x = ... }`.
fn default_field(obj: &mut Value, key: &str, value: Value) {
    let Some(map) = obj.as_object_mut() else {
        return;
    };
    let unset = match map.get(key) {
        None | Some(Value::Null) => true,
        Some(Value::String(s)) => s.is_empty(),
        Some(_) => false,
    };
    if unset {
        map.insert(key.to_string(), value);
    }
}

/// Every item of the array at `obj[key]`, mutably.
fn items_mut<'a>(obj: &'a mut Value, key: &str) -> impl Iterator<Item = &'a mut Value> {
    obj.get_mut(key)
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
}

/// Every item of the array at `obj[key]`.
fn items<'a>(obj: &'a Value, key: &str) -> impl Iterator<Item = &'a Value> {
    obj.get(key).and_then(Value::as_array).into_iter().flatten()
}

/// A string field, or "".
fn text<'a>(obj: &'a Value, key: &str) -> &'a str {
    obj.get(key).and_then(Value::as_str).unwrap_or("")
}

/// Whether a field is present and not null.
fn has(obj: &Value, key: &str) -> bool {
    obj.get(key).is_some_and(|v| !v.is_null())
}

/// `SetDefaults_PodSpec` and the defaults of everything a `PodSpec` holds, as the generated
/// defaulters apply them to every pod spec (pods, templates of workloads): DNS and restart
/// policies, a security context, the grace period, the scheduler, the volumes' sources and
/// modes, the containers' pull and termination message policies, probes and field references.
/// The deprecated `serviceAccount` mirrors `serviceAccountName`, as conversion makes it.
pub fn default_pod_spec(spec: &mut Value) {
    if !spec.is_object() {
        return;
    }
    default_field(spec, "dnsPolicy", json!("ClusterFirst"));
    default_field(spec, "restartPolicy", json!("Always"));
    default_field(spec, "securityContext", json!({}));
    default_field(spec, "terminationGracePeriodSeconds", json!(30));
    default_field(spec, "schedulerName", json!("default-scheduler"));
    sync_service_account(spec);
    for volume in items_mut(spec, "volumes") {
        default_volume(volume);
    }
    for list in CONTAINER_LISTS {
        for container in items_mut(spec, list) {
            default_container(container);
        }
    }
}

/// `serviceAccountName` falls back to the deprecated `serviceAccount`, which then mirrors it.
fn sync_service_account(spec: &mut Value) {
    let Some(map) = spec.as_object_mut() else {
        return;
    };
    let name = match map.get("serviceAccountName").and_then(Value::as_str) {
        Some(n) if !n.is_empty() => n.to_string(),
        _ => map
            .get("serviceAccount")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string(),
    };
    if name.is_empty() {
        map.remove("serviceAccountName");
        map.remove("serviceAccount");
    } else {
        map.insert("serviceAccountName".into(), json!(name));
        map.insert("serviceAccount".into(), json!(name));
    }
}

/// `SetDefaults_Volume` and its sources' defaults.
fn default_volume(volume: &mut Value) {
    let has_source = VOLUME_SOURCES.iter().any(|k| has(volume, k));
    if !has_source {
        volume["emptyDir"] = json!({});
    }
    if let Some(host_path) = volume.get_mut("hostPath").filter(|v| v.is_object()) {
        if host_path.get("type").is_none_or(Value::is_null) {
            host_path["type"] = json!("");
        }
    }
    for source in ["secret", "configMap", "downwardAPI", "projected"] {
        if let Some(s) = volume.get_mut(source).filter(|v| v.is_object()) {
            default_field(s, "defaultMode", json!(DEFAULT_MODE));
        }
    }
    if let Some(downward) = volume.get_mut("downwardAPI").filter(|v| v.is_object()) {
        default_downward_items(downward);
    }
    if let Some(projected) = volume.get_mut("projected").filter(|v| v.is_object()) {
        for source in items_mut(projected, "sources") {
            if let Some(d) = source.get_mut("downwardAPI").filter(|v| v.is_object()) {
                default_downward_items(d);
            }
            if let Some(t) = source
                .get_mut("serviceAccountToken")
                .filter(|v| v.is_object())
            {
                default_field(t, "expirationSeconds", json!(3600));
            }
        }
    }
    if let Some(disk) = volume.get_mut("azureDisk").filter(|v| v.is_object()) {
        default_field(disk, "readOnly", json!(false));
    }
    let claim_spec = volume
        .at_mut("/ephemeral/volumeClaimTemplate/spec")
        .filter(|v| v.is_object());
    if let Some(claim_spec) = claim_spec {
        default_field(claim_spec, "volumeMode", json!("Filesystem"));
    }
}

/// `fieldRef.apiVersion: v1` in downward API items.
fn default_downward_items(source: &mut Value) {
    for item in items_mut(source, "items") {
        if let Some(field_ref) = item.get_mut("fieldRef").filter(|v| v.is_object()) {
            default_field(field_ref, "apiVersion", json!("v1"));
        }
    }
}

/// `SetDefaults_Container` and the defaults of what a container holds.
fn default_container(c: &mut Value) {
    if !c.is_object() {
        return;
    }
    let policy = image_pull_policy(text(c, "image"));
    default_field(c, "imagePullPolicy", json!(policy));
    default_field(c, "terminationMessagePath", json!(TERMINATION_MESSAGE_PATH));
    default_field(c, "terminationMessagePolicy", json!("File"));
    for env in items_mut(c, "env") {
        let Some(from) = env.get_mut("valueFrom").filter(|v| v.is_object()) else {
            continue;
        };
        if let Some(field_ref) = from.get_mut("fieldRef").filter(|v| v.is_object()) {
            default_field(field_ref, "apiVersion", json!("v1"));
        }
        if let Some(file_ref) = from.get_mut("fileKeyRef").filter(|v| v.is_object()) {
            default_field(file_ref, "optional", json!(false));
        }
    }
    for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(p) = c.get_mut(probe).filter(|v| v.is_object()) {
            default_probe(p);
        }
    }
    for hook in ["postStart", "preStop"] {
        let handler = c
            .get_mut("lifecycle")
            .and_then(|l| l.get_mut(hook))
            .filter(|v| v.is_object());
        if let Some(h) = handler {
            default_http_get(h);
        }
    }
}

/// `SetDefaults_Probe` and its handler's defaults.
fn default_probe(p: &mut Value) {
    for (key, value) in [
        ("timeoutSeconds", 1),
        ("periodSeconds", 10),
        ("successThreshold", 1),
        ("failureThreshold", 3),
    ] {
        if p.get(key).and_then(Value::as_i64).unwrap_or(0) == 0 {
            p[key] = json!(value);
        }
    }
    default_http_get(p);
    if let Some(grpc) = p.get_mut("grpc").filter(|v| v.is_object()) {
        default_field(grpc, "service", json!(""));
        if grpc["service"].is_null() {
            grpc["service"] = json!("");
        }
    }
}

/// `SetDefaults_HTTPGetAction`: path `/`, scheme `HTTP`.
fn default_http_get(handler: &mut Value) {
    if let Some(get) = handler.get_mut("httpGet").filter(|v| v.is_object()) {
        default_field(get, "path", json!("/"));
        default_field(get, "scheme", json!("HTTP"));
    }
}

/// The pull policy an image gets by default: `Always` when its tag is `latest` or it names
/// neither a tag nor a digest, `IfNotPresent` otherwise (and for names that do not parse).
pub fn image_pull_policy(image: &str) -> &'static str {
    match image_tag(image) {
        Some("latest") => "Always",
        _ => "IfNotPresent",
    }
}

/// The tag `parsers.ParseImageName` finds: the explicit one, `latest` when the reference has
/// neither tag nor digest, `None` when there is only a digest or the reference is invalid.
fn image_tag(image: &str) -> Option<&str> {
    let (name, digest) = match image.split_once('@') {
        Some((n, d)) => (n, Some(d)),
        None => (image, None),
    };
    if let Some(d) = digest {
        let (algo, hex) = d.split_once(':')?;
        let valid = !algo.is_empty()
            && hex.len() >= 32
            && hex
                .bytes()
                .all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase());
        if !valid {
            return None;
        }
    }
    let last_slash = name.rfind('/').map_or(0, |i| i + 1);
    let (repo, tag) = match name[last_slash..].rfind(':') {
        Some(i) => (&name[..last_slash + i], Some(&name[last_slash + i + 1..])),
        None => (name, None),
    };
    if !valid_repository(repo) {
        return None;
    }
    match tag {
        Some(t) if valid_tag(t) => Some(t),
        Some(_) => None,
        None if digest.is_some() => None,
        None => Some("latest"),
    }
}

/// A repository name of the reference grammar: an optional registry host, then lower-case
/// path components.
fn valid_repository(repo: &str) -> bool {
    if repo.is_empty() {
        return false;
    }
    let mut parts: Vec<&str> = repo.split('/').collect();
    let first = parts[0];
    let is_domain = parts.len() > 1
        && (first.contains('.')
            || first.contains(':')
            || first == "localhost"
            || first.bytes().any(|b| b.is_ascii_uppercase()));
    if is_domain {
        let host_ok = first
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b':' | b'[' | b']'));
        if !host_ok {
            return false;
        }
        parts.remove(0);
    }
    parts.iter().all(|p| valid_path_component(p))
}

/// `[a-z0-9]+((\.|_|__|-+)[a-z0-9]+)*`.
fn valid_path_component(p: &str) -> bool {
    let b = p.as_bytes();
    if b.is_empty() || !is_lower_alnum(b[0]) || !is_lower_alnum(b[b.len() - 1]) {
        return false;
    }
    let mut i = 0;
    while i < b.len() {
        if is_lower_alnum(b[i]) {
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && !is_lower_alnum(b[i]) {
            i += 1;
        }
        let sep = &p[start..i];
        let ok = sep == "." || sep == "_" || sep == "__" || sep.bytes().all(|c| c == b'-');
        if !ok {
            return false;
        }
    }
    true
}

fn is_lower_alnum(b: u8) -> bool {
    b.is_ascii_lowercase() || b.is_ascii_digit()
}

/// `[\w][\w.-]{0,127}`.
fn valid_tag(t: &str) -> bool {
    let b = t.as_bytes();
    let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    !b.is_empty()
        && b.len() <= 128
        && word(b[0])
        && b.iter().all(|&c| word(c) || c == b'.' || c == b'-')
}

/// `SetDefaults_Pod`, what only pods (not templates) get: requests default to limits, service
/// links are enabled, and host-network pods' ports get host ports.
pub fn default_pod_only(spec: &mut Value) {
    if !spec.is_object() {
        return;
    }
    for list in ["containers", "initContainers"] {
        for c in items_mut(spec, list) {
            requests_from_limits(c);
        }
    }
    default_field(spec, "enableServiceLinks", json!(true));
    if spec["hostNetwork"] == true {
        for list in ["containers", "initContainers"] {
            for c in items_mut(spec, list) {
                for port in items_mut(c, "ports") {
                    if port["hostPort"].as_i64().unwrap_or(0) == 0 {
                        port["hostPort"] = port["containerPort"].clone();
                    }
                }
            }
        }
    }
}

/// A container's requests take every limit they do not set.
fn requests_from_limits(c: &mut Value) {
    let Some(limits) = c.at("/resources/limits").and_then(Value::as_object) else {
        return;
    };
    let limits = limits.clone();
    let resources = &mut c["resources"];
    if !resources["requests"].is_object() {
        resources["requests"] = json!({});
    }
    if let Some(requests) = resources["requests"].as_object_mut() {
        for (k, v) in limits {
            requests.entry(k).or_insert(v);
        }
    }
}

/// The `qosClass` the apiserver computes on create (`qos.GetPodQOS`): `BestEffort` without CPU
/// or memory requests and limits, `Guaranteed` when every container limits both and requests
/// equal limits, `Burstable` otherwise.
pub fn qos_class(spec: &Value) -> &'static str {
    let compute = ["cpu", "memory"];
    let mut requests: Map<String, Value> = Map::new();
    let mut limits: Map<String, Value> = Map::new();
    let mut guaranteed = true;
    let containers = items(spec, "containers").chain(items(spec, "initContainers"));
    for c in containers {
        let sum = |acc: &mut Map<String, Value>, list: Option<&Value>| -> Vec<String> {
            let mut found = Vec::new();
            for (name, q) in list.and_then(Value::as_object).into_iter().flatten() {
                let Some(q) = q.as_str().and_then(Quantity::parse) else {
                    continue;
                };
                if !compute.contains(&name.as_str()) || q.sign() <= 0 {
                    continue;
                }
                found.push(name.clone());
                let total = acc
                    .get(name)
                    .and_then(Value::as_str)
                    .and_then(Quantity::parse)
                    .and_then(|t| t.add(&q, 1))
                    .unwrap_or(q);
                acc.insert(
                    name.clone(),
                    json!(format!("{}e{}", total.mantissa, total.exp)),
                );
            }
            found
        };
        sum(&mut requests, c.at("/resources/requests"));
        let limited = sum(&mut limits, c.at("/resources/limits"));
        if !compute.iter().all(|r| limited.iter().any(|l| l == r)) {
            guaranteed = false;
        }
    }
    if requests.is_empty() && limits.is_empty() {
        return "BestEffort";
    }
    let parse = |v: &Value| v.as_str().and_then(Quantity::parse);
    let equal = requests
        .iter()
        .all(|(k, r)| match (limits.get(k).and_then(parse), parse(r)) {
            (Some(l), Some(r)) => l.cmp_to(&r).is_eq(),
            _ => false,
        });
    if guaranteed && equal && requests.len() == limits.len() {
        return "Guaranteed";
    }
    "Burstable"
}

// ---------------------------------------------------------------------------------------------
// Validation
// ---------------------------------------------------------------------------------------------

/// The field errors of one validation pass.
struct Errors(Vec<StatusCause>);

impl Errors {
    fn push(&mut self, cause: StatusCause) {
        self.0.push(cause);
    }
}

/// `ValidatePodTemplateSpec` at `path` (`spec.template`): the template's labels and
/// annotations (reported at `<path>.labels`, as Go's promoted fields name them), its spec, and
/// no ephemeral containers.
pub fn validate_pod_template_spec(template: &Value, path: &str) -> Vec<StatusCause> {
    let mut errs = Errors(Vec::new());
    if let Some(meta) = template.get("metadata").and_then(Value::as_object) {
        validate_labels_and_annotations(meta, path, &mut errs.0);
    }
    let spec = &template["spec"];
    validate_pod_spec(spec, &format!("{path}.spec"), &mut errs);
    if items(spec, "ephemeralContainers").next().is_some() {
        errs.push(field::forbidden(
            &format!("{path}.spec.ephemeralContainers"),
            "ephemeral containers not allowed in pod template",
        ));
    }
    errs.0
}

/// `ValidatePodSpec` at `path` (`spec`), for the fields this module checks (see the module
/// documentation).
pub fn pod_spec_errors(spec: &Value, path: &str) -> Vec<StatusCause> {
    let mut errs = Errors(Vec::new());
    validate_pod_spec(spec, path, &mut errs);
    errs.0
}

fn validate_pod_spec(spec: &Value, path: &str, errs: &mut Errors) {
    if !has(spec, "terminationGracePeriodSeconds") {
        errs.push(field::required(
            &format!("{path}.terminationGracePeriodSeconds"),
            "",
        ));
    }
    let volumes = validate_volumes(spec, &format!("{path}.volumes"), errs);
    validate_containers(spec, &volumes, path, errs);
    validate_init_containers(spec, &volumes, path, errs);
    validate_ephemeral_containers(spec, &volumes, path, errs);
    validate_enum(
        spec,
        "restartPolicy",
        path,
        &["Always", "OnFailure", "Never"],
        errs,
    );
    validate_enum(
        spec,
        "dnsPolicy",
        path,
        &["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"],
        errs,
    );
    if let Some(selector) = spec.get("nodeSelector").and_then(Value::as_object) {
        let mut meta = Map::new();
        meta.insert("labels".into(), Value::Object(selector.clone()));
        let mut found = Vec::new();
        validate_labels_and_annotations(&meta, path, &mut found);
        for mut e in found {
            e.field = format!("{path}.nodeSelector");
            errs.push(e);
        }
    }
    validate_names(spec, path, errs);
}

/// A required enum field: `Required value` when empty, `Unsupported value` when unknown.
fn validate_enum(obj: &Value, key: &str, path: &str, allowed: &[&str], errs: &mut Errors) {
    let v = text(obj, key);
    let at = format!("{path}.{key}");
    if v.is_empty() {
        errs.push(field::required(&at, ""));
    } else if !allowed.contains(&v) {
        errs.push(field::not_supported(&at, &json!(v), allowed));
    }
}

/// The names a pod spec refers to (service account, node, host and subdomain, priority class),
/// `activeDeadlineSeconds`' range and the tolerations, in `ValidatePodSpec`'s order.
fn validate_names(spec: &Value, path: &str, errs: &mut Errors) {
    let subdomain = |key: &str, errs: &mut Errors| {
        let v = text(spec, key);
        if v.is_empty() {
            return;
        }
        for msg in name_errors(v, NameRule::Subdomain) {
            errs.push(field::invalid(&format!("{path}.{key}"), &json!(v), &msg));
        }
    };
    subdomain("serviceAccountName", errs);
    subdomain("nodeName", errs);
    if let Some(v) = spec.get("activeDeadlineSeconds").and_then(Value::as_i64) {
        if !(1..=i64::from(i32::MAX)).contains(&v) {
            errs.push(field::invalid(
                &format!("{path}.activeDeadlineSeconds"),
                &json!(v),
                "must be between 1 and 2147483647, inclusive",
            ));
        }
    }
    for key in ["hostname", "subdomain"] {
        let v = text(spec, key);
        if v.is_empty() {
            continue;
        }
        for msg in name_errors(v, NameRule::Label) {
            errs.push(field::invalid(&format!("{path}.{key}"), &json!(v), &msg));
        }
    }
    validate_tolerations(spec, &format!("{path}.tolerations"), errs);
    subdomain("priorityClassName", errs);
}

/// `ValidateVolumes`: unique DNS-label names, exactly one source each, and the common
/// sources' own fields. Returns the names of the valid volumes (what mounts may refer to).
fn validate_volumes(spec: &Value, path: &str, errs: &mut Errors) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for (i, vol) in items(spec, "volumes").enumerate() {
        let at = format!("{path}[{i}]");
        let mut el = volume_source_errors(vol, &at);
        let name = text(vol, "name");
        if name.is_empty() {
            el.push(field::required(&format!("{at}.name"), ""));
        } else {
            for msg in name_errors(name, NameRule::Label) {
                el.push(field::invalid(&format!("{at}.name"), &json!(name), &msg));
            }
        }
        if names.iter().any(|n| n == name) {
            el.push(field::duplicate(&format!("{at}.name"), &json!(name)));
        }
        if el.is_empty() {
            names.push(name.to_string());
        } else {
            errs.0.extend(el);
        }
    }
    names
}

/// `validateVolumeSource`: one source, and the fields of the sources clients use most.
fn volume_source_errors(vol: &Value, at: &str) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let mut count = 0;
    for key in VOLUME_SOURCES {
        let Some(source) = vol.get(*key).filter(|v| !v.is_null()) else {
            continue;
        };
        // Go's own typo, kept: the apiserver reports a second downward API source here.
        let named = if *key == "downwardAPI" {
            "downwarAPI"
        } else {
            key
        };
        if count > 0 {
            errs.push(field::forbidden(
                &format!("{at}.{named}"),
                "may not specify more than 1 volume type",
            ));
            continue;
        }
        count += 1;
        errs.extend(source_errors(key, source, &format!("{at}.{key}")));
    }
    if count == 0 {
        errs.push(field::required(at, "must specify a volume type"));
    }
    errs
}

/// The required fields and modes of the common volume sources.
fn source_errors(key: &str, source: &Value, at: &str) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let required = |errs: &mut Vec<StatusCause>, f: &str| {
        if text(source, f).is_empty() {
            errs.push(field::required(&format!("{at}.{f}"), ""));
        }
    };
    match key {
        "secret" => required(&mut errs, "secretName"),
        "configMap" => required(&mut errs, "name"),
        "persistentVolumeClaim" => required(&mut errs, "claimName"),
        "hostPath" => {
            required(&mut errs, "path");
            if !errs.is_empty() {
                return errs;
            }
            errs.extend(no_backsteps(text(source, "path"), &format!("{at}.path")));
            let t = text(source, "type");
            let types = [
                "",
                "BlockDevice",
                "CharDevice",
                "Directory",
                "DirectoryOrCreate",
                "File",
                "FileOrCreate",
                "Socket",
            ];
            if !types.contains(&t) {
                errs.push(field::not_supported(
                    &format!("{at}.type"),
                    &json!(t),
                    &types,
                ));
            }
            return errs;
        }
        "nfs" => {
            required(&mut errs, "server");
            required(&mut errs, "path");
        }
        "csi" => required(&mut errs, "driver"),
        _ => {}
    }
    if matches!(key, "secret" | "configMap" | "downwardAPI" | "projected") {
        errs.extend(mode_errors(source, "defaultMode", at));
    }
    if matches!(key, "secret" | "configMap") {
        for (i, item) in items(source, "items").enumerate() {
            errs.extend(key_to_path_errors(item, &format!("{at}.items[{i}]")));
        }
    }
    errs
}

/// A file mode between 0 and 0777.
fn mode_errors(obj: &Value, key: &str, at: &str) -> Vec<StatusCause> {
    match obj.get(key).and_then(Value::as_i64) {
        Some(m) if !(0..=0o777).contains(&m) => vec![field::invalid(
            &format!("{at}.{key}"),
            &json!(m),
            "must be a number between 0 and 0777 (octal), both inclusive",
        )],
        _ => Vec::new(),
    }
}

/// `validateKeyToPath`.
fn key_to_path_errors(item: &Value, at: &str) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    if text(item, "key").is_empty() {
        errs.push(field::required(&format!("{at}.key"), ""));
    }
    let path = text(item, "path");
    if path.is_empty() {
        errs.push(field::required(&format!("{at}.path"), ""));
    }
    errs.extend(local_non_reserved_path(path, &format!("{at}.path")));
    errs.extend(mode_errors(item, "mode", at));
    errs
}

/// `ValidateLocalNonReservedPath`: relative, no `..` element, not starting with `..`.
fn local_non_reserved_path(path: &str, at: &str) -> Vec<StatusCause> {
    let mut errs = local_descending_path(path, at);
    if path.starts_with("..") && !path.starts_with("../") {
        errs.push(field::invalid(at, &json!(path), "must not start with '..'"));
    }
    errs
}

/// `validateLocalDescendingPath`: relative and without `..` elements.
fn local_descending_path(path: &str, at: &str) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    if path.starts_with('/') {
        errs.push(field::invalid(at, &json!(path), "must be a relative path"));
    }
    errs.extend(no_backsteps(path, at));
    errs
}

/// `validatePathNoBacksteps`.
fn no_backsteps(path: &str, at: &str) -> Vec<StatusCause> {
    if path.split('/').any(|p| p == "..") {
        return vec![field::invalid(at, &json!(path), "must not contain '..'")];
    }
    Vec::new()
}

/// `validateContainers`: at least one, unique names, each container's own rules and probes.
fn validate_containers(spec: &Value, volumes: &[String], path: &str, errs: &mut Errors) {
    let at = format!("{path}.containers");
    let containers: Vec<&Value> = items(spec, "containers").collect();
    if containers.is_empty() {
        errs.push(field::required(&at, ""));
        return;
    }
    let mut names: Vec<&str> = Vec::new();
    for (i, c) in containers.iter().enumerate() {
        let cat = format!("{at}[{i}]");
        validate_container_common(c, volumes, &cat, errs);
        let name = text(c, "name");
        if names.contains(&name) {
            errs.push(field::duplicate(&format!("{cat}.name"), &json!(name)));
        } else {
            names.push(name);
        }
        for probe in ["livenessProbe", "readinessProbe", "startupProbe"] {
            validate_probe(c, probe, &cat, errs);
        }
        container_restart_policy(c, &cat, errs);
    }
}

/// `validateContainerRestartPolicy` (container restart rules are enabled in 1.36): a policy
/// among `Always`, `Never`, `OnFailure`.
fn container_restart_policy(c: &Value, at: &str, errs: &mut Errors) {
    if !has(c, "restartPolicy") {
        return;
    }
    let policy = text(c, "restartPolicy");
    let allowed = ["Always", "Never", "OnFailure"];
    if !allowed.contains(&policy) {
        errs.push(field::not_supported(
            &format!("{at}.restartPolicy"),
            &json!(policy),
            &allowed,
        ));
    }
}

/// `validateInitContainers`: names unique across init and regular containers; without
/// `restartPolicy: Always` an init container may have no probes or lifecycle hooks.
fn validate_init_containers(spec: &Value, volumes: &[String], path: &str, errs: &mut Errors) {
    let at = format!("{path}.initContainers");
    let mut names: Vec<&str> = items(spec, "containers").map(|c| text(c, "name")).collect();
    for (i, c) in items(spec, "initContainers").enumerate() {
        let cat = format!("{at}[{i}]");
        validate_container_common(c, volumes, &cat, errs);
        let policy = text(c, "restartPolicy");
        if policy != "Always" {
            container_restart_policy(c, &cat, errs);
        }
        let name = text(c, "name");
        if names.contains(&name) {
            errs.push(field::duplicate(&format!("{cat}.name"), &json!(name)));
        } else if !name.is_empty() {
            names.push(name);
        }
        let sidecar = policy == "Always";
        for key in [
            "lifecycle",
            "livenessProbe",
            "readinessProbe",
            "startupProbe",
        ] {
            if sidecar {
                if key != "lifecycle" {
                    validate_probe(c, key, &cat, errs);
                }
            } else if has(c, key) {
                errs.push(field::forbidden(
                    &format!("{cat}.{key}"),
                    "may not be set for init containers without restartPolicy=Always",
                ));
            }
        }
    }
}

/// The fields an ephemeral container may not set, in the order Go's allow list walks them.
const EPHEMERAL_FORBIDDEN: [&str; 9] = [
    "ports",
    "resources",
    "resizePolicy",
    "restartPolicy",
    "restartPolicyRules",
    "livenessProbe",
    "readinessProbe",
    "startupProbe",
    "lifecycle",
];

/// `validateEphemeralContainers`: names unique across every container, a target that is a
/// regular or init container, no probes, ports, resources or sub-path mounts.
fn validate_ephemeral_containers(spec: &Value, volumes: &[String], path: &str, errs: &mut Errors) {
    let at = format!("{path}.ephemeralContainers");
    let others: Vec<&str> = items(spec, "containers")
        .chain(items(spec, "initContainers"))
        .map(|c| text(c, "name"))
        .collect();
    let mut names = others.clone();
    for (i, c) in items(spec, "ephemeralContainers").enumerate() {
        let cat = format!("{at}[{i}]");
        validate_container_common(c, volumes, &cat, errs);
        let image = text(c, "image");
        if image.len() != image.trim().len() {
            errs.push(field::invalid(
                &format!("{cat}.image"),
                &json!(image),
                "must not have leading or trailing whitespace",
            ));
        }
        let name = text(c, "name");
        if names.contains(&name) {
            errs.push(field::duplicate(&format!("{cat}.name"), &json!(name)));
        } else {
            names.push(name);
        }
        let target = text(c, "targetContainerName");
        if !target.is_empty() && !others.contains(&target) {
            errs.push(not_found(
                &format!("{cat}.targetContainerName"),
                &json!(target),
            ));
        }
        for key in EPHEMERAL_FORBIDDEN {
            let set = match c.get(key) {
                None | Some(Value::Null) => false,
                Some(Value::Object(m)) if key == "resources" => !m.is_empty(),
                Some(_) => true,
            };
            if set {
                errs.push(field::forbidden(
                    &format!("{cat}.{key}"),
                    "cannot be set for an Ephemeral Container",
                ));
            }
        }
        for (j, m) in items(c, "volumeMounts").enumerate() {
            for key in ["subPath", "subPathExpr"] {
                if !text(m, key).is_empty() {
                    errs.push(field::forbidden(
                        &format!("{cat}.volumeMounts[{j}].{key}"),
                        "cannot be set for an Ephemeral Container",
                    ));
                }
            }
        }
    }
}

/// `validateContainerCommon`: name, image, termination message policy, ports, env, mounts,
/// pull policy, resources.
fn validate_container_common(c: &Value, volumes: &[String], at: &str, errs: &mut Errors) {
    let name = text(c, "name");
    if name.is_empty() {
        errs.push(field::required(&format!("{at}.name"), ""));
    } else {
        for msg in name_errors(name, NameRule::Label) {
            errs.push(field::invalid(&format!("{at}.name"), &json!(name), &msg));
        }
    }
    if text(c, "image").is_empty() {
        errs.push(field::required(&format!("{at}.image"), ""));
    }
    validate_enum(
        c,
        "terminationMessagePolicy",
        at,
        &["File", "FallbackToLogsOnError"],
        errs,
    );
    validate_ports(c, &format!("{at}.ports"), errs);
    validate_env(c, &format!("{at}.env"), errs);
    validate_env_from(c, &format!("{at}.envFrom"), errs);
    validate_mounts(c, volumes, &format!("{at}.volumeMounts"), errs);
    validate_enum(
        c,
        "imagePullPolicy",
        at,
        &["Always", "IfNotPresent", "Never"],
        errs,
    );
    validate_resources(&c["resources"], &format!("{at}.resources"), errs);
}

/// `validateContainerPorts`: names (IANA service names, unique), port numbers, protocols.
fn validate_ports(c: &Value, at: &str, errs: &mut Errors) {
    let mut names: Vec<&str> = Vec::new();
    for (i, port) in items(c, "ports").enumerate() {
        let pat = format!("{at}[{i}]");
        let name = text(port, "name");
        if !name.is_empty() {
            let msgs = port_name_errors(name);
            if !msgs.is_empty() {
                for msg in msgs {
                    errs.push(field::invalid(&format!("{pat}.name"), &json!(name), msg));
                }
            } else if names.contains(&name) {
                errs.push(field::duplicate(&format!("{pat}.name"), &json!(name)));
            } else {
                names.push(name);
            }
        }
        let container_port = port["containerPort"].as_i64().unwrap_or(0);
        if container_port == 0 {
            errs.push(field::required(&format!("{pat}.containerPort"), ""));
        } else if !(1..=65535).contains(&container_port) {
            errs.push(port_range_error(
                &format!("{pat}.containerPort"),
                container_port,
            ));
        }
        let host_port = port["hostPort"].as_i64().unwrap_or(0);
        if host_port != 0 && !(1..=65535).contains(&host_port) {
            errs.push(port_range_error(&format!("{pat}.hostPort"), host_port));
        }
        let protocol = text(port, "protocol");
        if protocol.is_empty() {
            errs.push(field::required(&format!("{pat}.protocol"), ""));
        } else if !["SCTP", "TCP", "UDP"].contains(&protocol) {
            errs.push(field::not_supported(
                &format!("{pat}.protocol"),
                &json!(protocol),
                &["SCTP", "TCP", "UDP"],
            ));
        }
    }
}

fn port_range_error(at: &str, port: i64) -> StatusCause {
    field::invalid(at, &json!(port), "must be between 1 and 65535, inclusive")
}

/// `IsValidPortName`: an IANA service name.
pub fn port_name_errors(name: &str) -> Vec<&'static str> {
    let mut errs = Vec::new();
    if name.len() > 15 {
        errs.push("must be no more than 15 characters");
    }
    if name.is_empty() || !name.bytes().all(|b| is_lower_alnum(b) || b == b'-') {
        errs.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)");
    }
    if !name.bytes().any(|b| b.is_ascii_lowercase()) {
        errs.push("must contain at least one letter (a-z)");
    }
    if name.contains("--") {
        errs.push("must not contain consecutive hyphens");
    }
    if name.starts_with('-') || name.ends_with('-') {
        errs.push("must not begin or end with a hyphen");
    }
    errs
}

/// `IsRelaxedEnvVarName`: printable ASCII other than `=`.
fn env_name_errors(name: &str) -> Vec<&'static str> {
    let mut errs = Vec::new();
    if name.is_empty() {
        errs.push("environment variable name must be non-empty");
    }
    if name.chars().any(|c| !(' '..='~').contains(&c) || c == '=') {
        errs.push(
            "a valid environment variable name must consist only of printable ASCII characters other than '='",
        );
    }
    errs
}

/// `ValidateEnv`: names, and one source in `valueFrom`.
fn validate_env(c: &Value, at: &str, errs: &mut Errors) {
    for (i, env) in items(c, "env").enumerate() {
        let eat = format!("{at}[{i}]");
        let name = text(env, "name");
        if name.is_empty() {
            errs.push(field::required(&format!("{eat}.name"), ""));
        } else {
            for msg in env_name_errors(name) {
                errs.push(field::invalid(&format!("{eat}.name"), &json!(name), msg));
            }
        }
        let Some(from) = env.get("valueFrom").filter(|v| v.is_object()) else {
            continue;
        };
        let fat = format!("{eat}.valueFrom");
        let sources = [
            "fieldRef",
            "resourceFieldRef",
            "configMapKeyRef",
            "secretKeyRef",
            "fileKeyRef",
        ];
        let count = sources.iter().filter(|s| has(from, s)).count();
        for key in ["configMapKeyRef", "secretKeyRef"] {
            if let Some(r) = from.get(key).filter(|v| v.is_object()) {
                let name = text(r, "name");
                for msg in name_errors(name, NameRule::Subdomain) {
                    errs.push(field::invalid(
                        &format!("{fat}.{key}.name"),
                        &json!(name),
                        &msg,
                    ));
                }
                let k = text(r, "key");
                if k.is_empty() {
                    errs.push(field::required(&format!("{fat}.{key}.key"), ""));
                }
                for msg in crate::registry::validation::config_map_key_errors(k) {
                    if !k.is_empty() {
                        errs.push(field::invalid(&format!("{fat}.{key}.key"), &json!(k), msg));
                    }
                }
            }
        }
        if let Some(r) = from.get("fieldRef").filter(|v| v.is_object()) {
            if text(r, "fieldPath").is_empty() {
                errs.push(field::required(&format!("{fat}.fieldRef.fieldPath"), ""));
            }
        }
        let detail = match count {
            0 => "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef`, `secretKeyRef` or `fileKeyRef`",
            _ if !text(env, "value").is_empty() => "may not be specified when `value` is not empty",
            1 => continue,
            _ => "may not have more than one field specified at a time",
        };
        errs.push(field::invalid(&fat, &json!(""), detail));
    }
}

/// `ValidateEnvFrom`: prefixes, one source each.
fn validate_env_from(c: &Value, at: &str, errs: &mut Errors) {
    for (i, env) in items(c, "envFrom").enumerate() {
        let prefix = text(env, "prefix");
        if !prefix.is_empty() {
            for msg in env_name_errors(prefix) {
                errs.push(field::invalid(
                    &format!("{at}[{i}].prefix"),
                    &json!(prefix),
                    msg,
                ));
            }
        }
        let count = ["configMapRef", "secretRef"]
            .iter()
            .filter(|k| has(env, k))
            .count();
        let detail = match count {
            0 => "must specify one of: `configMapRef` or `secretRef`",
            1 => continue,
            _ => "may not have more than one field specified at a time",
        };
        errs.push(field::invalid(at, &json!(""), detail));
    }
}

/// `ValidateVolumeMounts`: a known volume, a unique mount path, relative sub-paths.
fn validate_mounts(c: &Value, volumes: &[String], at: &str, errs: &mut Errors) {
    let mut paths: Vec<&str> = Vec::new();
    for (i, m) in items(c, "volumeMounts").enumerate() {
        let mat = format!("{at}[{i}]");
        let name = text(m, "name");
        if name.is_empty() {
            errs.push(field::required(&format!("{mat}.name"), ""));
        }
        if !volumes.iter().any(|v| v == name) {
            errs.push(not_found(&format!("{mat}.name"), &json!(name)));
        }
        let mount_path = text(m, "mountPath");
        if mount_path.is_empty() {
            errs.push(field::required(&format!("{mat}.mountPath"), ""));
        }
        if paths.contains(&mount_path) {
            errs.push(field::invalid(
                &format!("{mat}.mountPath"),
                &json!(mount_path),
                "must be unique",
            ));
        }
        paths.push(mount_path);
        let sub_path = text(m, "subPath");
        if !sub_path.is_empty() {
            errs.0
                .extend(local_descending_path(sub_path, &format!("{at}.subPath")));
        }
        let expr = text(m, "subPathExpr");
        if !expr.is_empty() {
            if !sub_path.is_empty() {
                errs.push(field::invalid(
                    &format!("{mat}.subPathExpr"),
                    &json!(expr),
                    "subPathExpr and subPath are mutually exclusive",
                ));
            }
            errs.0
                .extend(local_descending_path(expr, &format!("{at}.subPathExpr")));
        }
    }
}

/// The standard resources containers may request.
fn is_standard_container_resource(name: &str) -> bool {
    matches!(name, "cpu" | "memory" | "ephemeral-storage") || name.starts_with("hugepages-")
}

/// Resources whose requests may be below their limits (the native ones, but hugepages).
fn overcommit_allowed(name: &str) -> bool {
    let native = !name.contains('/') || name.contains("kubernetes.io/");
    native && !name.starts_with("hugepages-")
}

/// The resource names `IsStandardResourceName` knows (quota and container resources).
fn is_standard_resource(name: &str) -> bool {
    const STANDARD: &[&str] = &[
        "cpu",
        "memory",
        "ephemeral-storage",
        "requests.cpu",
        "requests.memory",
        "requests.ephemeral-storage",
        "limits.cpu",
        "limits.memory",
        "limits.ephemeral-storage",
        "pods",
        "services",
        "replicationcontrollers",
        "resourcequotas",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "storage",
        "requests.storage",
        "services.nodeports",
        "services.loadbalancers",
    ];
    STANDARD.contains(&name)
        || name.starts_with("hugepages-")
        || name.starts_with("requests.hugepages-")
}

/// `validateContainerResourceName`: a qualified name, a standard resource when unqualified
/// (one a container may use), an extended resource name when qualified.
fn resource_name_errors(name: &str, at: &str) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    if !is_qualified_name(name) {
        errs.push(field::invalid(at, &json!(name), QUALIFIED_NAME_MSG));
    } else if !name.contains('/') && !is_standard_resource(name) {
        errs.push(field::invalid(
            at,
            &json!(name),
            "must be a standard resource type or fully qualified",
        ));
    }
    if !name.contains('/') {
        if !is_standard_container_resource(name) {
            errs.push(field::invalid(
                at,
                &json!(name),
                "must be a standard resource for containers",
            ));
        }
    } else if !name.contains("kubernetes.io/")
        && (name.starts_with("requests.") || !is_qualified_name(&format!("requests.{name}")))
    {
        errs.push(field::invalid(
            at,
            &json!(name),
            "doesn't follow extended resource name standard",
        ));
    }
    errs
}

/// `validateResourceRequirements`: names, non-negative (integral for extended resources)
/// quantities, requests no greater than limits (equal for resources that cannot overcommit).
fn validate_resources(resources: &Value, at: &str, errs: &mut Errors) {
    let limits = resources.get("limits").and_then(Value::as_object);
    let requests = resources.get("requests").and_then(Value::as_object);
    let names = || limits.into_iter().chain(requests).flat_map(|m| m.keys());
    let huge = names().any(|n| n.starts_with("hugepages-"));
    let compute = names().any(|n| n == "cpu" || n == "memory");
    for (name, q) in limits.into_iter().flatten() {
        let qat = format!("{at}.limits[{name}]");
        errs.0.extend(resource_name_errors(name, &qat));
        errs.0.extend(quantity_errors(name, q, &qat));
    }
    for (name, q) in requests.into_iter().flatten() {
        let qat = format!("{at}.requests[{name}]");
        errs.0.extend(resource_name_errors(name, &qat));
        errs.0.extend(quantity_errors(name, q, &qat));
        let text = q.as_str().unwrap_or("");
        let request = Quantity::parse(text);
        match limits.and_then(|l| l.get(name)) {
            Some(limit) => {
                let limit_text = limit.as_str().unwrap_or("");
                let (Some(r), Some(l)) = (request, Quantity::parse(limit_text)) else {
                    continue;
                };
                let detail = if !r.cmp_to(&l).is_eq() && !overcommit_allowed(name) {
                    format!("must be equal to {name} limit of {limit_text}")
                } else if r.cmp_to(&l).is_gt() {
                    format!("must be less than or equal to {name} limit of {limit_text}")
                } else {
                    continue;
                };
                errs.push(field::invalid(
                    &format!("{at}.requests"),
                    &json!(text),
                    &detail,
                ));
            }
            None if !overcommit_allowed(name) => errs.push(field::required(
                &format!("{at}.limits"),
                "Limit must be set for non overcommitable resources",
            )),
            None => {}
        }
    }
    if huge && !compute {
        errs.push(field::forbidden(at, "HugePages require cpu or memory"));
    }
}

/// `ValidateResourceQuantityValue`.
fn quantity_errors(name: &str, q: &Value, at: &str) -> Vec<StatusCause> {
    let text = q.as_str().unwrap_or("");
    let Some(parsed) = Quantity::parse(text) else {
        return Vec::new();
    };
    let mut errs = Vec::new();
    if parsed.sign() < 0 {
        errs.push(field::invalid(
            at,
            &json!(text),
            "must be greater than or equal to 0",
        ));
    }
    let integer_resource = !overcommit_allowed(name) && !name.starts_with("hugepages-");
    if integer_resource && parsed.exp < 0 {
        errs.push(field::invalid(at, &json!(text), "must be an integer"));
    }
    errs
}

/// The probe at `c[key]`: one handler, non-negative numbers, `successThreshold` 1 for liveness
/// and startup probes.
fn validate_probe(c: &Value, key: &str, at: &str, errs: &mut Errors) {
    let Some(p) = c.get(key).filter(|v| v.is_object()) else {
        return;
    };
    let pat = format!("{at}.{key}");
    validate_handler(p, &pat, errs);
    for f in [
        "initialDelaySeconds",
        "timeoutSeconds",
        "periodSeconds",
        "successThreshold",
        "failureThreshold",
    ] {
        let v = p[f].as_i64().unwrap_or(0);
        if v < 0 {
            errs.push(field::invalid(
                &format!("{pat}.{f}"),
                &json!(v),
                "must be greater than or equal to 0",
            ));
        }
    }
    if let Some(g) = p["terminationGracePeriodSeconds"].as_i64() {
        if key == "readinessProbe" {
            errs.push(field::invalid(
                &format!("{pat}.terminationGracePeriodSeconds"),
                &json!(g),
                "must not be set for readinessProbes",
            ));
        } else if g <= 0 {
            errs.push(field::invalid(
                &format!("{pat}.terminationGracePeriodSeconds"),
                &json!(g),
                "must be greater than 0",
            ));
        }
    }
    let success = p["successThreshold"].as_i64().unwrap_or(0);
    if key != "readinessProbe" && success != 1 {
        errs.push(field::invalid(
            &format!("{pat}.successThreshold"),
            &json!(success),
            "must be 1",
        ));
    }
}

/// `validateHandler`: exactly one of exec, httpGet, tcpSocket, grpc, sleep.
fn validate_handler(h: &Value, at: &str, errs: &mut Errors) {
    let mut count = 0;
    for key in ["exec", "httpGet", "tcpSocket", "grpc", "sleep"] {
        let Some(handler) = h.get(key).filter(|v| !v.is_null()) else {
            continue;
        };
        let hat = format!("{at}.{key}");
        if count > 0 {
            errs.push(field::forbidden(
                &hat,
                "may not specify more than 1 handler type",
            ));
            continue;
        }
        count += 1;
        match key {
            "exec" if items(handler, "command").next().is_none() => {
                errs.push(field::required(&format!("{hat}.command"), ""));
            }
            "httpGet" | "tcpSocket" | "grpc" => {
                validate_port_num_or_name(&handler["port"], &format!("{hat}.port"), errs);
            }
            _ => {}
        }
    }
    if count == 0 {
        errs.push(field::required(at, "must specify a handler type"));
    }
}

/// `ValidatePortNumOrName`.
fn validate_port_num_or_name(port: &Value, at: &str, errs: &mut Errors) {
    match port {
        Value::String(name) => {
            for msg in port_name_errors(name) {
                errs.push(field::invalid(at, port, msg));
            }
        }
        _ => {
            let n = port.as_i64().unwrap_or(0);
            if !(1..=65535).contains(&n) {
                errs.push(port_range_error(at, n));
            }
        }
    }
}

/// [`validate_tolerations`] of `obj["tolerations"]` (a RuntimeClass's scheduling).
pub(crate) fn tolerations_errors(obj: &Value, at: &str) -> Vec<StatusCause> {
    let mut errs = Errors(Vec::new());
    validate_tolerations(obj, at, &mut errs);
    errs.0
}

/// [`validate_resources`] of a resource list given as limits (a RuntimeClass's overhead).
pub(crate) fn limits_errors(limits: &Value, at: &str) -> Vec<StatusCause> {
    let mut errs = Errors(Vec::new());
    validate_resources(&json!({"limits": limits}), at, &mut errs);
    errs.0
}

/// `ValidateTolerations`.
fn validate_tolerations(spec: &Value, at: &str, errs: &mut Errors) {
    for (i, t) in items(spec, "tolerations").enumerate() {
        let tat = format!("{at}[{i}]");
        let key = text(t, "key");
        let op = text(t, "operator");
        let effect = text(t, "effect");
        let value = text(t, "value");
        if !key.is_empty() && !is_qualified_name(key) {
            errs.push(field::invalid(
                &format!("{tat}.key"),
                &json!(key),
                QUALIFIED_NAME_MSG,
            ));
        }
        if key.is_empty() && op != "Exists" {
            errs.push(field::invalid(
                &format!("{tat}.operator"),
                &json!(op),
                "operator must be Exists when `key` is empty, which means \"match all values and all keys\"",
            ));
        }
        if has(t, "tolerationSeconds") && effect != "NoExecute" {
            errs.push(field::invalid(
                &format!("{tat}.effect"),
                &json!(effect),
                "effect must be 'NoExecute' when `tolerationSeconds` is set",
            ));
        }
        match op {
            "" | "Equal" => {
                if !crate::registry::object_meta::is_label_value(value) {
                    errs.push(field::invalid(
                        &format!("{tat}.operator"),
                        &json!(value),
                        LABEL_VALUE_ERRORS,
                    ));
                }
            }
            "Exists" if !value.is_empty() => errs.push(field::invalid(
                &format!("{tat}.operator"),
                &json!(value),
                "value must be empty when `operator` is 'Exists'",
            )),
            "Exists" => {}
            other => errs.push(field::not_supported(
                &format!("{tat}.operator"),
                &json!(other),
                &["Equal", "Exists"],
            )),
        }
        if !effect.is_empty() && !["NoSchedule", "PreferNoSchedule", "NoExecute"].contains(&effect)
        {
            errs.push(field::not_supported(
                &format!("{tat}.effect"),
                &json!(effect),
                &["NoSchedule", "PreferNoSchedule", "NoExecute"],
            ));
        }
    }
}

/// `IsValidLabelValue`'s message for a value that is not one.
const LABEL_VALUE_ERRORS: &str = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')";
