//! What the kinds of resource.k8s.io/v1 share: the device claim of ResourceClaims and
//! ResourceClaimTemplates (requests with `exactly` or `firstAvailable`, device classes,
//! allocation modes and counts, CEL selectors, tolerations, constraints, opaque
//! configurations) validated as `pkg/apis/resource/validation` validates it and quoted as its
//! internal Go type; the selectors and configurations DeviceClasses also have; the list rules
//! (`validateSlice`, `validateSet`) every kind's lists follow; the group's v1 defaulting.
//!
//! Not as the apiserver: a selector's expression is type-checked with attribute and capacity
//! values `dyn` (cel-go declares them `any` and `kubernetes.Quantity`, which type errors
//! name), and its estimated cost is not held against the limit.

use std::collections::{HashMap, HashSet};

use serde_json::{json, Map, Value};

use crate::cel::TypeEnv;
use crate::error::{field, StatusCause};
use crate::machinery::gofmt::go_json;
use crate::registry::object_meta::now_rfc3339;
use crate::registry::storage::csidriver::csi_driver_name_errors;
use crate::registry::validation::{
    c_identifier_messages, dns_label_errors, dns_subdomain_errors, invalid_each,
    label_value_errors, qualified_name_errors,
};

/// The group.
pub const GROUP: &str = "resource.k8s.io";

/// `DeviceRequestsMaxSize` (also the most results an allocation has, and the most request
/// names a constraint or a configuration lists).
pub(crate) const MAX_REQUESTS: usize = 32;
const MAX_FIRST_AVAILABLE: usize = 8;
const MAX_SELECTORS: usize = 32;
const MAX_CONSTRAINTS: usize = 32;
/// `DeviceConfigMaxSize`.
pub(crate) const MAX_CONFIGS: usize = 32;
const MAX_EXPRESSION_LENGTH: usize = 10240;
const MAX_PARAMETERS_LENGTH: usize = 10240;
/// `DeviceMaxIDLength`: the id part of attribute and capacity names.
const MAX_ID_LENGTH: usize = 32;
/// `PoolNameMaxLength`.
const MAX_POOL_NAME_LENGTH: usize = 253;
/// `BindingConditionsMaxSize`, and the same for failure conditions.
const MAX_BINDING_CONDITIONS: usize = 4;
const REQUEST_REF: &str = "must be the name of a request in the claim or the name of a request and a subrequest separated by '/'";
const EFFECTS: [&str; 3] = ["NoExecute", "NoSchedule", "None"];

/// The string at `v` ("" when absent).
pub(crate) fn text(v: &Value) -> &str {
    v.as_str().unwrap_or("")
}

/// The items of a JSON list (none when absent).
pub(crate) fn items(v: &Value) -> &[Value] {
    v.as_array().map_or(&[], Vec::as_slice)
}

/// `validateSlice`: more than `max` items is the only error; else each item's.
pub(crate) fn slice_errors(
    list: &Value,
    max: Option<usize>,
    path: &str,
    item: impl Fn(&Value, &str) -> Vec<StatusCause>,
) -> Vec<StatusCause> {
    let list = items(list);
    if let Some(max) = max.filter(|m| list.len() > *m) {
        return vec![field::too_many(path, list.len(), max)];
    }
    let mut errs = Vec::new();
    for (i, v) in list.iter().enumerate() {
        errs.extend(item(v, &format!("{path}[{i}]")));
    }
    errs
}

/// `validateSet`: [`slice_errors`], then a `Duplicate` of its key for each item whose key an
/// earlier item has.
pub(crate) fn set_errors(
    list: &Value,
    max: Option<usize>,
    path: &str,
    item: impl Fn(&Value, &str) -> Vec<StatusCause>,
    key: impl Fn(&Value) -> Value,
) -> Vec<StatusCause> {
    let mut errs = slice_errors(list, max, path, item);
    if max.is_some_and(|m| items(list).len() > m) {
        return errs;
    }
    let mut seen = HashSet::new();
    for (i, v) in items(list).iter().enumerate() {
        let k = key(v);
        if !seen.insert(k.to_string()) {
            errs.push(field::duplicate(&format!("{path}[{i}]"), &k));
        }
    }
    errs
}

/// An `Invalid` cause whose value is already rendered (a Go struct written by encoding/json).
pub(crate) fn invalid_rendered(path: &str, rendered: &str, detail: &str) -> StatusCause {
    let mut cause = field::invalid(path, &Value::Null, detail);
    cause.message = format!("Invalid value: {rendered}: {detail}");
    cause
}

/// The request names of a claim's devices, each with its subrequests' names (`None` for an
/// `exactly` request): what `request` and `request/subrequest` references may name.
pub(crate) struct RequestNames(HashMap<String, Option<HashSet<String>>>);

impl RequestNames {
    /// `gatherRequestNames`.
    pub(crate) fn of(devices: &Value) -> RequestNames {
        let names = items(&devices["requests"]).iter().map(|r| {
            let subs = items(&r["firstAvailable"]);
            let subs = (!subs.is_empty())
                .then(|| subs.iter().map(|s| text(&s["name"]).to_string()).collect());
            (text(&r["name"]).to_string(), subs)
        });
        RequestNames(names.collect())
    }

    /// Whether `name` is a request, or `request/subrequest`.
    fn has(&self, name: &str) -> bool {
        let segments: Vec<&str> = name.split('/').collect();
        match (segments.as_slice(), self.0.get(segments[0])) {
            (_, None) => false,
            ([_], Some(_)) => true,
            ([_, sub], Some(subs)) => subs.as_ref().is_some_and(|s| s.contains(*sub)),
            _ => false,
        }
    }
}

/// `validateRequestNameRef`: at most one `/`, DNS labels, naming a request (or subrequest).
pub(crate) fn request_ref_errors(name: &str, path: &str, names: &RequestNames) -> Vec<StatusCause> {
    let segments: Vec<&str> = name.split('/').collect();
    if segments.len() > 2 {
        return vec![field::invalid(path, &json!(name), REQUEST_REF)];
    }
    let mut errs: Vec<StatusCause> = segments
        .iter()
        .flat_map(|s| dns_label_errors(path, s))
        .collect();
    if !names.has(name) {
        errs.push(field::invalid(path, &json!(name), REQUEST_REF));
    }
    errs
}

/// A set of request references (a constraint's, a configuration's): at most 32, unique.
pub(crate) fn request_refs_errors(
    list: &Value,
    path: &str,
    names: &RequestNames,
) -> Vec<StatusCause> {
    set_errors(
        list,
        Some(MAX_REQUESTS),
        path,
        |v, p| request_ref_errors(text(v), p, names),
        |v| json!(text(v)),
    )
}

/// `validateResourceClaimSpec` at `path` (`spec`, or a template's `spec.spec`).
pub(crate) fn claim_spec_errors(spec: &Value, path: &str) -> Vec<StatusCause> {
    let devices = &spec["devices"];
    let at = |f: &str| format!("{path}.devices.{f}");
    let names = RequestNames::of(devices);
    let mut errs = set_errors(
        &devices["requests"],
        Some(MAX_REQUESTS),
        &at("requests"),
        request_errors,
        |r| json!(text(&r["name"])),
    );
    errs.extend(slice_errors(
        &devices["constraints"],
        Some(MAX_CONSTRAINTS),
        &at("constraints"),
        |c, p| constraint_errors(c, p, &names),
    ));
    errs.extend(slice_errors(
        &devices["config"],
        Some(MAX_CONFIGS),
        &at("config"),
        |c, p| {
            let mut errs = request_refs_errors(&c["requests"], &format!("{p}.requests"), &names);
            errs.extend(device_configuration_errors(c, p, false));
            errs
        },
    ));
    errs
}

/// `validateDeviceRequest`: a DNS-label name and exactly one of `exactly` or `firstAvailable`.
fn request_errors(request: &Value, path: &str) -> Vec<StatusCause> {
    let mut errs = dns_label_errors(&format!("{path}.name"), text(&request["name"]));
    let first_available = !items(&request["firstAvailable"]).is_empty();
    let exactly = !request["exactly"].is_null();
    match (exactly, first_available) {
        (false, false) => errs.push(field::required(
            path,
            "exactly one of `exactly` or `firstAvailable` is required",
        )),
        (true, true) => errs.push(field::invalid(
            path,
            &Value::Null,
            "exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set",
        )),
        (false, true) => errs.extend(set_errors(
            &request["firstAvailable"],
            Some(MAX_FIRST_AVAILABLE),
            &format!("{path}.firstAvailable"),
            |sub, p| {
                let mut errs = dns_label_errors(&format!("{p}.name"), text(&sub["name"]));
                errs.extend(device_request_errors(sub, p));
                errs
            },
            |sub| json!(text(&sub["name"])),
        )),
        (true, false) => {
            errs.extend(device_request_errors(
                &request["exactly"],
                &format!("{path}.exactly"),
            ));
        }
    }
    errs
}

/// What `exactly` and a subrequest both have: the device class, the selectors, the allocation
/// mode and count, the tolerations.
fn device_request_errors(request: &Value, path: &str) -> Vec<StatusCause> {
    let at = |f: &str| format!("{path}.{f}");
    let mut errs = match text(&request["deviceClassName"]) {
        "" => vec![field::required(&at("deviceClassName"), "")],
        class => dns_subdomain_errors(&at("deviceClassName"), class),
    };
    errs.extend(selectors_errors(&request["selectors"], &at("selectors")));
    errs.extend(allocation_mode_errors(request, path));
    for (i, t) in items(&request["tolerations"]).iter().enumerate() {
        errs.extend(toleration_errors(t, &format!("{path}.tolerations[{i}]")));
    }
    errs
}

/// `validateDeviceAllocationMode`: a count for `ExactCount`, none for `All`.
fn allocation_mode_errors(request: &Value, path: &str) -> Vec<StatusCause> {
    let count = request["count"].as_i64().unwrap_or(0);
    let count_path = format!("{path}.count");
    match text(&request["allocationMode"]) {
        "All" if count != 0 => vec![field::invalid(
            &count_path,
            &json!(count),
            "must not be specified when allocationMode is 'All'",
        )],
        "ExactCount" if count <= 0 => vec![field::invalid(
            &count_path,
            &json!(count),
            "must be greater than zero",
        )],
        "All" | "ExactCount" => Vec::new(),
        mode => vec![field::not_supported(
            &format!("{path}.allocationMode"),
            &json!(mode),
            &["All", "ExactCount"],
        )],
    }
}

/// A list of device selectors (a request's, a DeviceClass's): at most 32, each a CEL
/// expression that compiles.
pub(crate) fn selectors_errors(list: &Value, path: &str) -> Vec<StatusCause> {
    slice_errors(list, Some(MAX_SELECTORS), path, |selector, p| {
        let at = format!("{p}.cel");
        let Some(cel) = selector.get("cel").filter(|c| !c.is_null()) else {
            return vec![field::required(&at, "")];
        };
        let at = format!("{at}.expression");
        let expression = text(&cel["expression"]);
        if expression.len() > MAX_EXPRESSION_LENGTH {
            return vec![field::too_long(&at, MAX_EXPRESSION_LENGTH)];
        }
        let detail = expression_error(expression);
        detail
            .map(|d| field::invalid(&at, &json!(expression), &d))
            .into_iter()
            .collect()
    })
}

/// Why a selector's expression is refused: it does not compile with `device` declared, or it
/// does not evaluate to a boolean.
pub(crate) fn expression_error(expression: &str) -> Option<String> {
    let mut env = TypeEnv::new(&[]);
    env.dra_device("device");
    match env.check(expression) {
        Err(e) => Some(format!("compilation failed: {e}")),
        Ok(t) if t.is_bool_or_dyn() => None,
        Ok(t) => Some(format!(
            "must evaluate to bool or the unknown type, not {t}"
        )),
    }
}

/// `validateDeviceToleration`: a label key, an operator its value agrees with, a known effect.
fn toleration_errors(t: &Value, path: &str) -> Vec<StatusCause> {
    let at = |f: &str| format!("{path}.{f}");
    let mut errs = match text(&t["key"]) {
        "" => Vec::new(),
        key => qualified_name_errors(&at("key"), key),
    };
    let value = text(&t["value"]);
    match text(&t["operator"]) {
        "Exists" if !value.is_empty() => errs.push(field::invalid(
            &at("value"),
            &json!(value),
            "must be empty for operator `Exists`",
        )),
        "Exists" => {}
        "Equal" => errs.extend(invalid_each(
            &at("value"),
            &json!(value),
            label_value_errors(value),
        )),
        "" => errs.push(field::required(&at("operator"), "")),
        op => errs.push(field::not_supported(
            &at("operator"),
            &json!(op),
            &["Equal", "Exists"],
        )),
    }
    errs.extend(effect_errors(text(&t["effect"]), &at("effect"), false));
    errs
}

/// A taint effect (`required` for a taint's, optional for a toleration's).
pub(crate) fn effect_errors(effect: &str, path: &str, required: bool) -> Vec<StatusCause> {
    match effect {
        "" if required => vec![field::required(path, "")],
        "" => Vec::new(),
        e if EFFECTS.contains(&e) => Vec::new(),
        e => vec![field::not_supported(path, &json!(e), &EFFECTS)],
    }
}

/// `validateDeviceConstraint`: its request references, then the attribute it is about.
fn constraint_errors(c: &Value, path: &str, names: &RequestNames) -> Vec<StatusCause> {
    let mut errs = request_refs_errors(&c["requests"], &format!("{path}.requests"), names);
    let attribute = ["matchAttribute", "distinctAttribute"]
        .into_iter()
        .find(|k| !c[*k].is_null());
    match attribute {
        Some(k) => errs.extend(fully_qualified_name_errors(
            text(&c[k]),
            &format!("{path}.{k}"),
        )),
        None => errs.push(field::required(
            path,
            "exactly one of \"matchAttribute\" or \"distinctAttribute\" is required, but multiple fields are set",
        )),
    }
    errs
}

/// `validateQualifiedName` (attribute and capacity names): a C identifier, or a driver-name
/// domain and a C identifier (more slashes go unchecked, as in the apiserver).
pub(crate) fn qualified_name_errors_at(name: &str, path: &str) -> Vec<StatusCause> {
    let parts: Vec<&str> = name.split('/').collect();
    match parts.as_slice() {
        [id] => c_identifier_errors(id, path),
        [domain, id] => {
            let mut errs = match *domain {
                "" => vec![field::invalid(
                    path,
                    &json!(""),
                    "the domain must not be empty",
                )],
                d => csi_driver_name_errors(path, d),
            };
            errs.extend(match *id {
                "" => vec![field::invalid(
                    path,
                    &json!(""),
                    "the name must not be empty",
                )],
                id => c_identifier_errors(id, path),
            });
            errs
        }
        _ => Vec::new(),
    }
}

/// `validateFullyQualifiedName`: a qualified name with a domain.
fn fully_qualified_name_errors(name: &str, path: &str) -> Vec<StatusCause> {
    let mut errs = qualified_name_errors_at(name, path);
    if !name.contains('/') {
        errs.push(field::invalid(
            path,
            &json!(name),
            "a fully qualified name must be a domain and a name separated by a slash",
        ));
    }
    errs
}

/// `validateCIdentifier`: at most 32 bytes, a C identifier.
fn c_identifier_errors(id: &str, path: &str) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    if id.len() > MAX_ID_LENGTH {
        errs.push(field::too_long(path, MAX_ID_LENGTH));
    }
    errs.extend(invalid_each(path, &json!(id), c_identifier_messages(id)));
    errs
}

/// `validatePoolName`: required, at most 253 bytes, DNS subdomains separated by slashes.
pub(crate) fn pool_name_errors(name: &str, path: &str) -> Vec<StatusCause> {
    if name.is_empty() {
        return vec![field::required(path, "")];
    }
    let mut errs = Vec::new();
    if name.len() > MAX_POOL_NAME_LENGTH {
        errs.push(field::too_long(path, MAX_POOL_NAME_LENGTH));
    }
    for part in name.split('/') {
        errs.extend(dns_subdomain_errors(path, part));
    }
    errs
}

/// `validateDeviceBindingParameters` (a device's, an allocation result's): at most 4 of each
/// kind of condition, each a label key, none twice, none of both kinds, both kinds or none.
pub(crate) fn binding_conditions_errors(obj: &Value, path: &str) -> Vec<StatusCause> {
    let at = |f: &str| format!("{path}.{f}");
    let (ok, failed) = (&obj["bindingConditions"], &obj["bindingFailureConditions"]);
    let label_name = |v: &Value, p: &str| qualified_name_errors(p, text(v));
    let mut errs = slice_errors(
        ok,
        Some(MAX_BINDING_CONDITIONS),
        &at("bindingConditions"),
        label_name,
    );
    errs.extend(slice_errors(
        failed,
        Some(MAX_BINDING_CONDITIONS),
        &at("bindingFailureConditions"),
        label_name,
    ));
    let ok_names: Vec<&str> = items(ok).iter().map(text).collect();
    let mut seen = HashSet::new();
    for (i, c) in ok_names.iter().enumerate() {
        if !seen.insert(*c) {
            errs.push(field::duplicate(
                &format!("{}[{i}]", at("bindingConditions")),
                &json!(c),
            ));
        }
    }
    let mut seen = HashSet::new();
    for (i, c) in items(failed).iter().map(text).enumerate() {
        let p = format!("{}[{i}]", at("bindingFailureConditions"));
        if !seen.insert(c) {
            errs.push(field::duplicate(&p, &json!(c)));
        }
        if ok_names.contains(&c) {
            let msg = "bindingFailureConditions must not overlap with bindingConditions";
            errs.push(field::invalid(&p, &json!(c), msg));
        }
    }
    match (items(ok).is_empty(), items(failed).is_empty()) {
        (true, false) => errs.push(invalid_rendered(
            &at("bindingConditions"),
            &go_opt(ok),
            "bindingConditions are required to use bindingFailureConditions",
        )),
        (false, true) => errs.push(invalid_rendered(
            &at("bindingFailureConditions"),
            &go_opt(failed),
            "bindingFailureConditions are required to use bindingConditions",
        )),
        _ => {}
    }
    errs
}

/// `validateDeviceConfiguration`: an opaque configuration (a driver name, a JSON object of
/// parameters at most 10 KiB unless `stored`, i.e. unchanged).
pub(crate) fn device_configuration_errors(
    config: &Value,
    path: &str,
    stored: bool,
) -> Vec<StatusCause> {
    let at = format!("{path}.opaque");
    let opaque = &config["opaque"];
    if opaque.is_null() {
        return vec![field::required(&at, "")];
    }
    let mut errs = csi_driver_name_errors(&format!("{at}.driver"), text(&opaque["driver"]));
    errs.extend(raw_object_errors(
        &opaque["parameters"],
        &format!("{at}.parameters"),
        stored,
        MAX_PARAMETERS_LENGTH,
    ));
    errs
}

/// `validateRawExtension`: present, at most `max` bytes (unless `stored`), a JSON object.
pub(crate) fn raw_object_errors(
    raw: &Value,
    path: &str,
    stored: bool,
    max: usize,
) -> Vec<StatusCause> {
    match raw {
        Value::Null => vec![field::required(path, "")],
        _ if !stored && raw.to_string().len() > max => vec![field::too_long(path, max)],
        Value::Object(_) => Vec::new(),
        _ => vec![field::invalid(
            path,
            &json!("<value omitted>"),
            "must be a valid JSON object",
        )],
    }
}

/// The v1 defaults of a claim spec (a claim's `spec`, a template's `spec.spec`): each
/// request's (and subrequest's) allocation mode `ExactCount`, then a count of 1 for
/// `ExactCount`; tolerations' operator `Equal`.
pub(crate) fn default_claim_spec(spec: &mut Value) {
    let requests = spec
        .get_mut("devices")
        .and_then(|d| d.get_mut("requests"))
        .and_then(Value::as_array_mut);
    for request in requests.into_iter().flatten() {
        if let Some(exactly) = request.get_mut("exactly").and_then(Value::as_object_mut) {
            default_device_request(exactly);
        }
        let subs = request
            .get_mut("firstAvailable")
            .and_then(Value::as_array_mut);
        for sub in subs.into_iter().flatten().filter_map(Value::as_object_mut) {
            default_device_request(sub);
        }
    }
}

fn default_device_request(request: &mut Map<String, Value>) {
    if request
        .get("allocationMode")
        .is_none_or(|m| text(m).is_empty())
    {
        request.insert("allocationMode".into(), json!("ExactCount"));
    }
    let exact = request
        .get("allocationMode")
        .is_some_and(|m| m == "ExactCount");
    if exact
        && request
            .get("count")
            .is_none_or(|c| c.as_i64() == Some(0) || c.is_null())
    {
        request.insert("count".into(), json!(1));
    }
    if let Some(tolerations) = request.get_mut("tolerations") {
        default_tolerations(tolerations);
    }
}

/// Each toleration's operator `Equal` when unset.
pub(crate) fn default_tolerations(tolerations: &mut Value) {
    let list = tolerations.as_array_mut().into_iter().flatten();
    for t in list.filter_map(Value::as_object_mut) {
        if t.get("operator").is_none_or(|o| text(o).is_empty()) {
            t.insert("operator".into(), json!("Equal"));
        }
    }
}

/// Each device taint's `timeAdded` now (to the second) when unset.
pub(crate) fn default_taint_times(spec: &mut Value) {
    let devices = spec.get_mut("devices").and_then(Value::as_array_mut);
    for device in devices.into_iter().flatten() {
        let taints = device.get_mut("taints").and_then(Value::as_array_mut);
        for taint in taints
            .into_iter()
            .flatten()
            .filter_map(Value::as_object_mut)
        {
            if taint.get("timeAdded").is_none_or(Value::is_null) {
                taint.insert("timeAdded".into(), json!(now_rfc3339()));
            }
        }
    }
}

/// A Go struct as encoding/json writes it: its fields, in declaration order, already written.
pub(crate) fn go_struct(fields: &[(&str, String)]) -> String {
    let body: Vec<String> = fields.iter().map(|(k, v)| format!("\"{k}\":{v}")).collect();
    format!("{{{}}}", body.join(","))
}

/// A Go string field ("" when absent).
pub(crate) fn go_string(v: &Value) -> String {
    go_json(&json!(text(v)))
}

/// A Go pointer, slice or map of JSON-shaped values: `null` when absent.
pub(crate) fn go_opt(v: &Value) -> String {
    if v.is_null() {
        "null".into()
    } else {
        go_json(v)
    }
}

/// A Go integer field (0 when absent).
pub(crate) fn go_int(v: &Value) -> String {
    v.as_i64().unwrap_or(0).to_string()
}

/// A Go slice of structs: `null` when absent, else each item written by `item`.
pub(crate) fn go_list(v: &Value, item: fn(&Value) -> String) -> String {
    match v.as_array() {
        None => "null".into(),
        Some(list) => {
            let written: Vec<String> = list.iter().map(item).collect();
            format!("[{}]", written.join(","))
        }
    }
}

/// A Go pointer to a struct: `null` when absent, else written by `item`.
fn go_ptr(v: &Value, item: fn(&Value) -> String) -> String {
    if v.is_null() {
        "null".into()
    } else {
        item(v)
    }
}

/// The internal `ResourceClaimSpec` as encoding/json writes it: what `spec: Invalid value:
/// ...: field is immutable` quotes.
pub(crate) fn internal_claim_spec(spec: &Value) -> String {
    let devices = &spec["devices"];
    let claim = go_struct(&[
        ("Requests", go_list(&devices["requests"], internal_request)),
        (
            "Constraints",
            go_list(&devices["constraints"], internal_constraint),
        ),
        ("Config", go_list(&devices["config"], internal_claim_config)),
    ]);
    go_struct(&[("Devices", claim)])
}

fn internal_request(r: &Value) -> String {
    go_struct(&[
        ("Name", go_string(&r["name"])),
        ("Exactly", go_ptr(&r["exactly"], internal_exact)),
        (
            "FirstAvailable",
            go_list(&r["firstAvailable"], internal_subrequest),
        ),
    ])
}

fn internal_exact(e: &Value) -> String {
    go_struct(&[
        ("DeviceClassName", go_string(&e["deviceClassName"])),
        ("Selectors", go_list(&e["selectors"], internal_selector)),
        ("AllocationMode", go_string(&e["allocationMode"])),
        ("Count", go_int(&e["count"])),
        ("AdminAccess", go_opt(&e["adminAccess"])),
        (
            "Tolerations",
            go_list(&e["tolerations"], internal_toleration),
        ),
        ("Capacity", go_ptr(&e["capacity"], internal_capacity)),
    ])
}

fn internal_subrequest(s: &Value) -> String {
    go_struct(&[
        ("Name", go_string(&s["name"])),
        ("DeviceClassName", go_string(&s["deviceClassName"])),
        ("Selectors", go_list(&s["selectors"], internal_selector)),
        ("AllocationMode", go_string(&s["allocationMode"])),
        ("Count", go_int(&s["count"])),
        (
            "Tolerations",
            go_list(&s["tolerations"], internal_toleration),
        ),
        ("Capacity", go_ptr(&s["capacity"], internal_capacity)),
    ])
}

fn internal_capacity(c: &Value) -> String {
    go_struct(&[("Requests", go_opt(&c["requests"]))])
}

fn internal_selector(s: &Value) -> String {
    let cel = go_ptr(&s["cel"], |c| {
        go_struct(&[("Expression", go_string(&c["expression"]))])
    });
    go_struct(&[("CEL", cel)])
}

/// The internal `DeviceToleration`.
pub(crate) fn internal_toleration(t: &Value) -> String {
    go_struct(&[
        ("Key", go_string(&t["key"])),
        ("Operator", go_string(&t["operator"])),
        ("Value", go_string(&t["value"])),
        ("Effect", go_string(&t["effect"])),
        ("TolerationSeconds", go_opt(&t["tolerationSeconds"])),
    ])
}

fn internal_constraint(c: &Value) -> String {
    go_struct(&[
        ("Requests", go_opt(&c["requests"])),
        ("MatchAttribute", go_opt(&c["matchAttribute"])),
        ("DistinctAttribute", go_opt(&c["distinctAttribute"])),
    ])
}

fn internal_claim_config(c: &Value) -> String {
    go_struct(&[
        ("Requests", go_opt(&c["requests"])),
        ("Opaque", go_ptr(&c["opaque"], internal_opaque)),
    ])
}

/// The internal `OpaqueDeviceConfiguration` (its parameters as written).
pub(crate) fn internal_opaque(o: &Value) -> String {
    go_struct(&[
        ("Driver", go_string(&o["driver"])),
        ("Parameters", go_opt(&o["parameters"])),
    ])
}

/// An internal `NodeSelectorTerm`.
pub(crate) fn internal_term(t: &Value) -> String {
    let requirement = |r: &Value| {
        go_struct(&[
            ("Key", go_string(&r["key"])),
            ("Operator", go_string(&r["operator"])),
            ("Values", go_opt(&r["values"])),
        ])
    };
    go_struct(&[
        (
            "MatchExpressions",
            go_list(&t["matchExpressions"], requirement),
        ),
        ("MatchFields", go_list(&t["matchFields"], requirement)),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::rendered as messages;
    use rstest::rstest;

    const LABEL: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";
    const SUBDOMAIN: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

    /// A claim spec with these requests, defaulted.
    fn spec(requests: Value) -> Value {
        let mut spec = json!({"devices": {"requests": requests}});
        default_claim_spec(&mut spec);
        spec
    }

    fn errors(requests: Value) -> Vec<String> {
        messages(claim_spec_errors(&spec(requests), "spec"))
    }

    #[test]
    fn defaults() {
        let s = spec(json!([
            {"name": "a", "exactly": {"deviceClassName": "gpu", "tolerations": [{"key": "k"}]}},
            {"name": "b", "exactly": {"deviceClassName": "gpu", "allocationMode": "All"}},
            {"name": "c", "firstAvailable": [{"name": "x", "deviceClassName": "gpu", "count": 0}]}
        ]));
        let r = &s["devices"]["requests"];
        assert_eq!(
            r[0]["exactly"],
            json!({"deviceClassName": "gpu", "allocationMode": "ExactCount", "count": 1,
                "tolerations": [{"key": "k", "operator": "Equal"}]})
        );
        assert_eq!(r[1]["exactly"].get("count"), None);
        assert_eq!(r[2]["firstAvailable"][0]["count"], 1);
    }

    #[rstest]
    #[case(json!([{"name": "a", "exactly": {"deviceClassName": "gpu"}}]), Vec::<&str>::new())]
    #[case(json!([{"name": "a"}]),
        vec!["spec.devices.requests[0]: Required value: exactly one of `exactly` or `firstAvailable` is required"])]
    #[case(json!([{"name": "a", "exactly": {"deviceClassName": "gpu"},
            "firstAvailable": [{"name": "x", "deviceClassName": "gpu"}]}]),
        vec!["spec.devices.requests[0]: Invalid value: null: exactly one of `exactly` or `firstAvailable` is required, but multiple fields are set"])]
    #[case(json!([{"name": "A_b", "exactly": {"deviceClassName": "gpu"}},
            {"name": "a.b", "exactly": {"deviceClassName": "gpu"}}]),
        vec![format!("spec.devices.requests[0].name: Invalid value: \"A_b\": {LABEL}"),
             "spec.devices.requests[1].name: Invalid value: \"a.b\": must not contain dots".into()])]
    #[case(json!([{"name": "", "exactly": {"deviceClassName": "gpu"}}]),
        vec![format!("spec.devices.requests[0].name: Invalid value: \"\": {LABEL}")])]
    #[case(json!([{"name": "a", "exactly": {"deviceClassName": "gpu"}},
            {"name": "a", "exactly": {"deviceClassName": ""}}]),
        vec!["spec.devices.requests[1].exactly.deviceClassName: Required value",
             "spec.devices.requests[1]: Duplicate value: \"a\""])]
    #[case(json!([{"name": "a", "exactly": {"deviceClassName": "Bad_Class"}}]),
        vec![format!("spec.devices.requests[0].exactly.deviceClassName: Invalid value: \"Bad_Class\": {SUBDOMAIN}")])]
    #[case(json!([{"name": "a", "firstAvailable": [{"name": "x", "deviceClassName": "gpu"},
            {"name": "x", "deviceClassName": ""}]}]),
        vec!["spec.devices.requests[0].firstAvailable[1].deviceClassName: Required value",
             "spec.devices.requests[0].firstAvailable[1]: Duplicate value: \"x\""])]
    fn request_rules(#[case] requests: Value, #[case] want: Vec<impl AsRef<str>>) {
        let want: Vec<&str> = want.iter().map(AsRef::as_ref).collect();
        assert_eq!(errors(requests), want);
    }

    #[rstest]
    #[case(json!({"count": -1}), vec!["spec.devices.requests[0].exactly.count: Invalid value: -1: must be greater than zero"])]
    #[case(json!({"allocationMode": "All", "count": 2}),
        vec!["spec.devices.requests[0].exactly.count: Invalid value: 2: must not be specified when allocationMode is 'All'"])]
    #[case(json!({"allocationMode": "Foo"}),
        vec!["spec.devices.requests[0].exactly.allocationMode: Unsupported value: \"Foo\": supported values: \"All\", \"ExactCount\""])]
    #[case(json!({"tolerations": [{"key": "k", "operator": "Exists", "value": "x"},
            {"key": "-k", "operator": "Foo", "effect": "Bar"}]}),
        vec!["spec.devices.requests[0].exactly.tolerations[0].value: Invalid value: \"x\": must be empty for operator `Exists`",
             "spec.devices.requests[0].exactly.tolerations[1].key: Invalid value: \"-k\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
             "spec.devices.requests[0].exactly.tolerations[1].operator: Unsupported value: \"Foo\": supported values: \"Equal\", \"Exists\"",
             "spec.devices.requests[0].exactly.tolerations[1].effect: Unsupported value: \"Bar\": supported values: \"NoExecute\", \"NoSchedule\", \"None\""])]
    fn exactly(#[case] fields: Value, #[case] want: Vec<&str>) {
        let mut exactly = json!({"deviceClassName": "gpu"});
        for (k, v) in fields.as_object().into_iter().flatten() {
            exactly[k] = v.clone();
        }
        assert_eq!(errors(json!([{"name": "a", "exactly": exactly}])), want);
    }

    #[rstest]
    #[case("true", None)]
    #[case("device.driver == \"x\"", None)]
    #[case("device.attributes[\"dra.example.com\"].model == \"a\"", None)]
    #[case("device.attributes[\"dra.example.com\"].enabled", None)]
    #[case("device.allowMultipleAllocations", None)]
    #[case(
        "device.capacity[\"x.com\"].mem.compareTo(quantity(\"1Gi\")) >= 0",
        None
    )]
    #[case(
        "cel.bind(dra, device.attributes[\"dra.example.com\"], dra.a && dra.b)",
        None
    )]
    #[case(
        "device.driver",
        Some("must evaluate to bool or the unknown type, not string")
    )]
    #[case("1", Some("must evaluate to bool or the unknown type, not int"))]
    #[case("noSuchVar", Some("compilation failed: ERROR: <input>:1:1: undeclared reference to 'noSuchVar' (in container '')\n | noSuchVar\n | ^"))]
    fn expressions(#[case] expression: &str, #[case] want: Option<&str>) {
        assert_eq!(expression_error(expression).as_deref(), want);
    }

    const EXPECTING: &str = "expecting {'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}";

    #[test]
    fn syntax_errors_are_cel_gos() {
        assert_eq!(
            expression_error("").unwrap_or_default(),
            format!("compilation failed: ERROR: <input>:1:0: Syntax error: mismatched input '<EOF>' {EXPECTING}")
        );
        assert_eq!(
            expression_error("1 +").unwrap_or_default(),
            format!("compilation failed: ERROR: <input>:1:4: Syntax error: mismatched input '<EOF>' {EXPECTING}\n | 1 +\n | ...^")
        );
        assert_eq!(
            expression_error("device.nope == 1").unwrap_or_default(),
            "compilation failed: ERROR: <input>:1:7: undefined field 'nope'\n | device.nope == 1\n | ......^"
        );
    }

    #[test]
    fn selectors() {
        let selectors = json!([{"cel": {"expression": "true"}}, {}, {"cel": {"expression": "x".repeat(10241)}}]);
        assert_eq!(
            messages(selectors_errors(&selectors, "s")),
            vec![
                "s[1].cel: Required value",
                "s[2].cel.expression: Too long: may not be more than 10240 bytes"
            ]
        );
        let many = Value::Array(vec![json!({"cel": {"expression": "true"}}); 33]);
        assert_eq!(
            messages(selectors_errors(&many, "s")),
            vec!["s: Too many: 33: must have at most 32 items"]
        );
    }

    #[rstest]
    #[case(json!({"matchAttribute": "dra.example.com/model"}), vec![])]
    #[case(json!({}), vec!["spec.devices.constraints[0]: Required value: exactly one of \"matchAttribute\" or \"distinctAttribute\" is required, but multiple fields are set"])]
    #[case(json!({"matchAttribute": "model"}), vec!["spec.devices.constraints[0].matchAttribute: Invalid value: \"model\": a fully qualified name must be a domain and a name separated by a slash"])]
    #[case(json!({"distinctAttribute": "/1x"}), vec![
        "spec.devices.constraints[0].distinctAttribute: Invalid value: \"\": the domain must not be empty",
        "spec.devices.constraints[0].distinctAttribute: Invalid value: \"1x\": a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for validation is '[A-Za-z_][A-Za-z0-9_]*')"])]
    #[case(json!({"requests": ["a", "a", "b", "a/x/y"], "matchAttribute": "d.io/m"}), vec![
        "spec.devices.constraints[0].requests[2]: Invalid value: \"b\": must be the name of a request in the claim or the name of a request and a subrequest separated by '/'",
        "spec.devices.constraints[0].requests[3]: Invalid value: \"a/x/y\": must be the name of a request in the claim or the name of a request and a subrequest separated by '/'",
        "spec.devices.constraints[0].requests[1]: Duplicate value: \"a\""])]
    fn constraints(#[case] constraint: Value, #[case] want: Vec<&str>) {
        let mut s = spec(json!([{"name": "a", "exactly": {"deviceClassName": "gpu"}}]));
        s["devices"]["constraints"] = json!([constraint]);
        assert_eq!(messages(claim_spec_errors(&s, "spec")), want);
    }

    #[rstest]
    #[case(json!({"opaque": {"driver": "gpu.example.com", "parameters": {"a": 1}}}), vec![])]
    #[case(json!({"requests": ["r/x"]}), vec!["spec.devices.config[0].opaque: Required value"])]
    #[case(json!({"requests": ["r/y"], "opaque": {"driver": "", "parameters": null}}), vec![
        "spec.devices.config[0].requests[0]: Invalid value: \"r/y\": must be the name of a request in the claim or the name of a request and a subrequest separated by '/'",
        "spec.devices.config[0].opaque.driver: Required value",
        "spec.devices.config[0].opaque.parameters: Required value"])]
    #[case(json!({"opaque": {"driver": "d.io", "parameters": [1]}}),
        vec!["spec.devices.config[0].opaque.parameters: Invalid value: \"<value omitted>\": must be a valid JSON object"])]
    #[case(json!({"opaque": {"driver": "d.io", "parameters": {"a": "x".repeat(10240)}}}),
        vec!["spec.devices.config[0].opaque.parameters: Too long: may not be more than 10240 bytes"])]
    fn configs(#[case] config: Value, #[case] want: Vec<&str>) {
        let mut s = spec(
            json!([{"name": "r", "firstAvailable": [{"name": "x", "deviceClassName": "gpu"}]}]),
        );
        s["devices"]["config"] = json!([config]);
        assert_eq!(messages(claim_spec_errors(&s, "spec")), want);
    }

    #[test]
    fn too_many_requests_skip_the_rest() {
        let one = json!({"name": "A", "exactly": {"deviceClassName": "gpu"}});
        let requests = Value::Array(vec![one; 33]);
        assert_eq!(
            errors(requests),
            vec!["spec.devices.requests: Too many: 33: must have at most 32 items"]
        );
    }

    #[test]
    fn the_internal_spec_has_go_field_names() {
        let s = spec(json!([{"name": "req-0", "exactly": {"deviceClassName": "gpu", "count": 2}}]));
        assert_eq!(
            internal_claim_spec(&s),
            "{\"Devices\":{\"Requests\":[{\"Name\":\"req-0\",\"Exactly\":{\"DeviceClassName\":\"gpu\",\"Selectors\":null,\"AllocationMode\":\"ExactCount\",\"Count\":2,\"AdminAccess\":null,\"Tolerations\":null,\"Capacity\":null},\"FirstAvailable\":null}],\"Constraints\":null,\"Config\":null}}"
        );
        let mut s = spec(
            json!([{"name": "r", "firstAvailable": [{"name": "x", "deviceClassName": "gpu",
            "selectors": [{"cel": {"expression": "a < b"}}], "tolerations": [{"key": "k", "tolerationSeconds": 5}],
            "capacity": {"requests": {"d.io/mem": "1Gi"}}}]}]),
        );
        s["devices"]["constraints"] = json!([{"requests": ["r"], "matchAttribute": "d.io/m"}]);
        s["devices"]["config"] =
            json!([{"opaque": {"driver": "d.io", "parameters": {"b": 1, "a": [true]}}}]);
        assert_eq!(
            internal_claim_spec(&s),
            "{\"Devices\":{\"Requests\":[{\"Name\":\"r\",\"Exactly\":null,\"FirstAvailable\":[{\"Name\":\"x\",\"DeviceClassName\":\"gpu\",\"Selectors\":[{\"CEL\":{\"Expression\":\"a \\u003c b\"}}],\"AllocationMode\":\"ExactCount\",\"Count\":1,\"Tolerations\":[{\"Key\":\"k\",\"Operator\":\"Equal\",\"Value\":\"\",\"Effect\":\"\",\"TolerationSeconds\":5}],\"Capacity\":{\"Requests\":{\"d.io/mem\":\"1Gi\"}}}]}],\"Constraints\":[{\"Requests\":[\"r\"],\"MatchAttribute\":\"d.io/m\",\"DistinctAttribute\":null}],\"Config\":[{\"Requests\":null,\"Opaque\":{\"Driver\":\"d.io\",\"Parameters\":{\"a\":[true],\"b\":1}}}]}}"
        );
    }
}
