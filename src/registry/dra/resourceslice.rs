//! The resource.k8s.io/v1 ResourceSlice kind: the devices (or shared counters) a driver
//! publishes for one pool, on one node, some nodes, all nodes, or per device. Its driver,
//! pool name and node name are immutable; everything else may change, each spec change
//! bumping the generation (1 on create). Devices are checked for names, attributes,
//! capacities, taints (whose `timeAdded` defaults to now), counter consumption, per-device
//! node selection and binding conditions. With 1.36's default gates, list-valued attributes
//! and node-allocatable resource mappings are dropped unless the stored slice had them. A
//! driver name with upper-case letters is accepted with a warning. Lists may be narrowed to
//! a node or a driver with field selectors.
//!
//! Not as the apiserver: a consumable capacity's request policy is not checked against the
//! capacity (its valid values and range), and node-allocatable resource mappings kept from a
//! stored slice are not validated.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use super::shared::{
    binding_conditions_errors, default_taint_times, effect_errors, go_list, go_opt, go_struct,
    internal_term, invalid_rendered, items, pool_name_errors, qualified_name_errors_at, set_errors,
    slice_errors, text, GROUP,
};
use crate::error::{field, StatusCause};
use crate::registry::builtin;
use crate::registry::resource::ApiResource;
use crate::registry::storage::csidriver::csi_driver_name_errors;
use crate::registry::strategy::{bump_generation, Strategy};
use crate::registry::table::{Column, Columns};
use crate::registry::validation::{
    dns_label_errors, dns_subdomain_errors, immutable, invalid_each, label_value_errors,
    node_selector_errors, qualified_name_errors,
};

const MAX_DEVICES: usize = 128;
/// The most devices when any uses taints, counters or list attributes.
const MAX_DEVICES_WITH_ADVANCED_FEATURES: usize = 64;
const MAX_ATTRIBUTES_AND_CAPACITIES: usize = 32;
const MAX_ATTRIBUTE_VALUES: usize = 48;
const MAX_VALUE_LENGTH: usize = 64;
/// A qualified name's longest domain, a slash and its longest id: longer keys are shortened
/// in paths.
const MAX_KEY_LENGTH: usize = 63 + 1 + 32;
const MAX_TAINTS: usize = 16;
const MAX_COUNTER_SETS: usize = 8;
const MAX_COUNTERS: usize = 32;
const MAX_COUNTER_CONSUMPTIONS: usize = 2;
const LIST_ATTRIBUTES: [&str; 4] = ["bools", "ints", "strings", "versions"];
const NODE_DESCRIPTION: &str = "NodeName identifies the node which provides the resources in this pool. A field selector can be used to list only ResourceSlice objects belonging to a certain node.\n\nThis field can be used to limit access from nodes to ResourceSlices with the same node name. It also indicates to autoscalers that adding new nodes of the same type as some old node might also make new resources available.\n\nExactly one of NodeName, NodeSelector, AllNodes, and PerDeviceNodeSelection must be set. This field is immutable.";
const DRIVER_DESCRIPTION: &str = "Driver identifies the DRA driver providing the capacity information. A field selector can be used to list only ResourceSlice objects with a certain driver name.\n\nMust be a DNS subdomain and should end with a DNS domain owned by the vendor of the driver. It should use only lower case characters. This field is immutable.";
const POOL_DESCRIPTION: &str = "Name is used to identify the pool. For node-local devices, this is often the node name, but this is not required.\n\nIt must not be longer than 253 characters and must consist of one or more DNS sub-domains separated by slashes. This field is immutable.";
const ONE_OF: &str =
    "exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required";
const PER_DEVICE: &str = "exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when `perDeviceNodeSelection` is set to true in the ResourceSlice spec";

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind(
        GROUP,
        "v1",
        "resourceslices",
        Arc::new(ResourceSliceStrategy),
    )
    .with(|r| {
        r.field_selectors(&["metadata.name", "spec.nodeName", "spec.driver"])
            .unsupported_field(unsupported_field)
            .table(columns())
            .delete_returns_object()
    })
    .build()
}

/// How the apiserver refuses a field selector a ResourceSlice does not support.
fn unsupported_field(field: &str, _supported: &[&str]) -> String {
    format!("field label not supported for resource.k8s.io/v1, Kind=ResourceSlice: {field}")
}

/// `printResourceSlice`'s columns.
fn columns() -> Columns {
    Columns::new(vec![
        Column::name(),
        Column::computed("Node", "string", 0, NODE_DESCRIPTION, |o| {
            json!(text(&o["spec"]["nodeName"]))
        }),
        Column::computed("Driver", "string", 0, DRIVER_DESCRIPTION, |o| {
            json!(text(&o["spec"]["driver"]))
        }),
        Column::computed("Pool", "string", 0, POOL_DESCRIPTION, |o| {
            json!(text(&o["spec"]["pool"]["name"]))
        }),
        Column::age("string"),
    ])
}

/// resource/v1 ResourceSlice.
pub struct ResourceSliceStrategy;

impl Strategy for ResourceSliceStrategy {
    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn defaults(&self, obj: &mut Value) {
        if let Some(spec) = obj.get_mut("spec") {
            default_taint_times(spec);
        }
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        drop_disabled_fields(obj, None);
    }

    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        if obj["spec"] != old["spec"] {
            bump_generation(obj, old, true);
        }
        drop_disabled_fields(obj, Some(old));
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        spec_errors(&obj["spec"], None)
    }

    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        spec_errors(&obj["spec"], Some(&old["spec"]))
    }

    fn warnings_on_create(&self, obj: &Value) -> Vec<String> {
        driver_warnings(obj)
    }

    fn warnings_on_update(&self, obj: &Value, _old: &Value) -> Vec<String> {
        driver_warnings(obj)
    }
}

fn driver_warnings(obj: &Value) -> Vec<String> {
    let driver = text(&obj["spec"]["driver"]);
    if driver == driver.to_lowercase() {
        return Vec::new();
    }
    vec![format!(
        "spec.driver: driver names should be lowercase; {driver:?} contains uppercase characters"
    )]
}

/// The devices of a spec, as JSON objects.
fn devices(spec: &Value) -> impl Iterator<Item = &Map<String, Value>> {
    items(&spec["devices"]).iter().filter_map(Value::as_object)
}

/// Whether a device of the slice has an attribute with a list value.
fn has_list_attributes(spec: &Value) -> bool {
    devices(spec).any(|d| {
        let attributes = d.get("attributes").and_then(Value::as_object);
        let values = attributes.into_iter().flat_map(|a| a.values());
        values
            .flat_map(|v| LIST_ATTRIBUTES.map(|k| &v[k]))
            .any(|v| !v.is_null())
    })
}

/// What 1.36's disabled gates drop (DRAListTypeAttributes, DRANodeAllocatableResources),
/// unless the stored slice already used it.
fn drop_disabled_fields(obj: &mut Value, old: Option<&Value>) {
    let old_spec = old.map(|o| &o["spec"]);
    let keep_lists = old_spec.is_some_and(has_list_attributes);
    let keep_mappings = old_spec.is_some_and(|s| {
        devices(s).any(|d| {
            d.get("nodeAllocatableResourceMappings")
                .and_then(Value::as_object)
                .is_some_and(|m| !m.is_empty())
        })
    });
    let list = obj
        .get_mut("spec")
        .and_then(|s| s.get_mut("devices"))
        .and_then(Value::as_array_mut);
    for device in list.into_iter().flatten().filter_map(Value::as_object_mut) {
        if !keep_mappings {
            device.remove("nodeAllocatableResourceMappings");
        }
        let attributes = device.get_mut("attributes").and_then(Value::as_object_mut);
        for attribute in attributes.into_iter().flat_map(|a| a.values_mut()) {
            if let Some(a) = attribute.as_object_mut().filter(|_| !keep_lists) {
                for key in LIST_ATTRIBUTES {
                    a.remove(key);
                }
            }
        }
    }
}

/// `validateResourceSliceSpec` (`old` on update): driver, pool, the immutable fields, where
/// the devices are, the devices and the shared counters.
fn spec_errors(spec: &Value, old: Option<&Value>) -> Vec<StatusCause> {
    let mut errs = csi_driver_name_errors("spec.driver", text(&spec["driver"]));
    let pool = &spec["pool"];
    errs.extend(pool_name_errors(text(&pool["name"]), "spec.pool.name"));
    let count = pool["resourceSliceCount"].as_i64().unwrap_or(0);
    if count <= 0 {
        let msg = "must be greater than zero";
        errs.push(field::invalid(
            "spec.pool.resourceSliceCount",
            &json!(count),
            msg,
        ));
    }
    let generation = pool["generation"].as_i64().unwrap_or(0);
    if generation < 0 {
        let msg = "must be greater than or equal to zero";
        errs.push(field::invalid(
            "spec.pool.generation",
            &json!(generation),
            msg,
        ));
    }
    if let Some(old) = old {
        errs.extend(immutable(
            &pool["name"],
            &old["pool"]["name"],
            "spec.pool.name",
        ));
        errs.extend(immutable(&spec["driver"], &old["driver"], "spec.driver"));
        errs.extend(immutable(
            &spec["nodeName"],
            &old["nodeName"],
            "spec.nodeName",
        ));
    }
    errs.extend(node_selection_errors(spec));
    if !spec["sharedCounters"].is_null() && !spec["devices"].is_null() {
        let msg = "only one of `sharedCounters` or `devices` is allowed";
        errs.push(field::invalid("spec", &json!(""), msg));
    }
    let advanced = has_list_attributes(spec)
        || devices(spec).any(|d| {
            ["taints", "consumesCounters"]
                .iter()
                .any(|k| d.get(*k).is_some_and(|v| !items(v).is_empty()))
        });
    let max = if advanced {
        MAX_DEVICES_WITH_ADVANCED_FEATURES
    } else {
        MAX_DEVICES
    };
    let per_device = spec["perDeviceNodeSelection"] == true;
    errs.extend(set_errors(
        &spec["devices"],
        Some(max),
        "spec.devices",
        |d, p| device_errors(d, old, p, per_device),
        |d| json!(text(&d["name"])),
    ));
    errs.extend(set_errors(
        &spec["sharedCounters"],
        Some(MAX_COUNTER_SETS),
        "spec.sharedCounters",
        |set, p| {
            let mut errs = match text(&set["name"]) {
                "" => vec![field::required(&format!("{p}.name"), "")],
                name => dns_label_errors(&format!("{p}.name"), name),
            };
            errs.extend(counters_errors(&set["counters"], &format!("{p}.counters")));
            errs
        },
        |set| json!(text(&set["name"])),
    ));
    errs
}

/// Exactly one of `nodeName`, `nodeSelector`, `allNodes` and `perDeviceNodeSelection`, each
/// valid.
fn node_selection_errors(spec: &Value) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let mut set = Vec::new();
    match spec["nodeName"].as_str() {
        Some("") => errs.push(field::invalid(
            "spec.nodeName",
            &json!(""),
            "must be either unset or set to a non-empty string",
        )),
        Some(node) => {
            set.push("`nodeName`");
            errs.extend(dns_subdomain_errors("spec.nodeName", node));
        }
        None => {}
    }
    let selector = &spec["nodeSelector"];
    if !selector.is_null() {
        set.push("`nodeSelector`");
        errs.extend(node_selector_errors(selector, "spec.nodeSelector"));
        let terms = &selector["nodeSelectorTerms"];
        if items(terms).len() != 1 {
            errs.push(invalid_rendered(
                "spec.nodeSelector.nodeSelectorTerms",
                &go_list(terms, internal_term),
                "must have exactly one node selector term",
            ));
        }
    }
    for (key, name) in [
        ("allNodes", "`allNodes`"),
        ("perDeviceNodeSelection", "`perDeviceNodeSelection`"),
    ] {
        match spec[key].as_bool() {
            Some(true) => set.push(name),
            Some(false) => errs.push(field::invalid(
                &format!("spec.{key}"),
                &json!(false),
                "must be either unset or set to true",
            )),
            None => {}
        }
    }
    match set.len() {
        0 => errs.push(field::required("spec", ONE_OF)),
        1 => {}
        _ => errs.push(field::invalid(
            "spec",
            &json!(format!("{{{}}}", set.join(", "))),
            &format!("{ONE_OF}, but multiple fields are set"),
        )),
    }
    errs
}

/// `validateDevice`: its name, attributes and capacities, taints (unless as stored),
/// counter consumption, node selection, binding conditions.
fn device_errors(
    device: &Value,
    old: Option<&Value>,
    path: &str,
    per_device: bool,
) -> Vec<StatusCause> {
    let at = |f: &str| format!("{path}.{f}");
    let mut errs = dns_label_errors(&at("name"), text(&device["name"]));
    let map = |k: &str| device[k].as_object().cloned().unwrap_or_default();
    let (attributes, capacity) = (map("attributes"), map("capacity"));
    let total = attributes.len() + capacity.len();
    if total > MAX_ATTRIBUTES_AND_CAPACITIES {
        let msg = format!("the total number of attributes and capacities must not exceed {MAX_ATTRIBUTES_AND_CAPACITIES}");
        errs.push(field::invalid(path, &json!(total), &msg));
    }
    let values: usize = attributes
        .values()
        .map(|a| {
            LIST_ATTRIBUTES
                .iter()
                .map(|k| items(&a[*k]).len())
                .sum::<usize>()
                .max(1)
        })
        .sum();
    if values > MAX_ATTRIBUTE_VALUES {
        let msg =
            format!("the total number of attribute values must not exceed {MAX_ATTRIBUTE_VALUES}");
        errs.push(field::invalid(path, &json!(values), &msg));
    }
    errs.extend(map_errors(&attributes, &at("attributes"), attribute_errors));
    let multiple = device["allowMultipleAllocations"] == true;
    errs.extend(map_errors(&capacity, &at("capacity"), |c, p| {
        if multiple || c["requestPolicy"].is_null() {
            return Vec::new();
        }
        let msg = "allowMultipleAllocations must be true";
        vec![field::forbidden(&format!("{p}.requestPolicy"), msg)]
    }));
    let name = &device["name"];
    let old_device = old.and_then(|o| items(&o["devices"]).iter().find(|d| d["name"] == *name));
    if old_device.is_none_or(|o| o["taints"] != device["taints"]) {
        errs.extend(slice_errors(
            &device["taints"],
            Some(MAX_TAINTS),
            &at("taints"),
            taint_errors,
        ));
    }
    errs.extend(set_errors(
        &device["consumesCounters"],
        Some(MAX_COUNTER_CONSUMPTIONS),
        &at("consumesCounters"),
        |c, p| {
            let mut errs = match text(&c["counterSet"]) {
                "" => vec![field::required(&format!("{p}.counterSet"), "")],
                set => dns_label_errors(&format!("{p}.counterSet"), set),
            };
            errs.extend(counters_errors(&c["counters"], &format!("{p}.counters")));
            errs
        },
        |c| json!(text(&c["counterSet"])),
    ));
    errs.extend(device_node_errors(device, path, per_device));
    errs.extend(binding_conditions_errors(device, path));
    errs
}

/// `validateMap` without a size limit: each key a qualified name (reported at the map's path),
/// each value at `path[key]` (a long key shortened in the middle).
fn map_errors(
    map: &Map<String, Value>,
    path: &str,
    item: impl Fn(&Value, &str) -> Vec<StatusCause>,
) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    for (key, value) in map {
        errs.extend(qualified_name_errors_at(key, path));
        errs.extend(item(
            value,
            &format!("{path}[{}]", truncated(key, MAX_KEY_LENGTH)),
        ));
    }
    errs
}

/// `truncateIfTooLong`: the start and the end of a long key around `...`.
fn truncated(key: &str, max: usize) -> String {
    let max = max.max(16);
    if key.len() <= max || !key.is_ascii() {
        return key.to_string();
    }
    let remaining = max - 3;
    let head = &key[..remaining.div_ceil(2)];
    let tail = &key[key.len() - remaining / 2..];
    format!("{head}...{tail}")
}

/// A counter set's or a consumption's counters: at least one, at most 32, DNS-label names.
fn counters_errors(counters: &Value, path: &str) -> Vec<StatusCause> {
    let map = counters.as_object().cloned().unwrap_or_default();
    if map.is_empty() {
        return vec![field::required(path, "")];
    }
    if map.len() > MAX_COUNTERS {
        return vec![field::too_many(path, map.len(), MAX_COUNTERS)];
    }
    map.keys().flat_map(|k| dns_label_errors(path, k)).collect()
}

/// `validateDeviceAttribute`: exactly one value, strings and versions within 64 bytes,
/// versions semantic.
fn attribute_errors(attribute: &Value, path: &str) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let at = |f: &str| format!("{path}.{f}");
    if let Some(s) = attribute["string"].as_str() {
        errs.extend(value_length_errors(s, &at("string")));
    }
    if let Some(v) = attribute["version"].as_str() {
        errs.extend(version_errors(v, &at("version")));
    }
    for key in LIST_ATTRIBUTES {
        let Some(list) = attribute[key].as_array() else {
            continue;
        };
        if list.is_empty() {
            let msg = "must not be empty if specified";
            errs.push(invalid_rendered(&at(key), "[]", msg));
        }
        for (i, item) in list.iter().enumerate() {
            let p = format!("{}[{i}]", at(key));
            match key {
                "strings" => errs.extend(value_length_errors(text(item), &p)),
                "versions" => errs.extend(version_errors(text(item), &p)),
                _ => {}
            }
        }
    }
    let scalars = ["int", "bool", "string", "version"];
    let set = scalars
        .iter()
        .chain(LIST_ATTRIBUTES.iter())
        .filter(|k| !attribute[**k].is_null());
    match set.count() {
        0 => errs.push(field::invalid(
            path,
            &json!(""),
            "exactly one value must be specified",
        )),
        1 => {}
        _ => errs.push(invalid_rendered(
            path,
            &internal_attribute(attribute),
            "exactly one value must be specified",
        )),
    }
    errs
}

fn value_length_errors(value: &str, path: &str) -> Vec<StatusCause> {
    if value.len() > MAX_VALUE_LENGTH {
        vec![field::too_long(path, MAX_VALUE_LENGTH)]
    } else {
        Vec::new()
    }
}

fn version_errors(version: &str, path: &str) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    if !is_semver(version) {
        let msg = "must be a string compatible with semver.org spec 2.0.0";
        errs.push(field::invalid(path, &json!(version), msg));
    }
    errs.extend(value_length_errors(version, path));
    errs
}

/// A semantic version 2.0.0 (the apiserver's `semverRe`): three numbers without leading
/// zeros, then dot-separated pre-release and build identifiers.
fn is_semver(version: &str) -> bool {
    let number = |id: &str| {
        !id.is_empty()
            && id.bytes().all(|c| c.is_ascii_digit())
            && (id == "0" || !id.starts_with('0'))
    };
    let word =
        |id: &str| !id.is_empty() && id.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-');
    let (rest, build) = match version.split_once('+') {
        Some((rest, build)) => (rest, Some(build)),
        None => (version, None),
    };
    let (core, pre) = match rest.split_once('-') {
        Some((core, pre)) => (core, Some(pre)),
        None => (rest, None),
    };
    let core: Vec<&str> = core.split('.').collect();
    let pre_ok = pre.is_none_or(|p| {
        p.split('.')
            .all(|id| number(id) || (word(id) && !id.bytes().all(|c| c.is_ascii_digit())))
    });
    core.len() == 3
        && core.iter().all(|id| number(id))
        && pre_ok
        && build.is_none_or(|b| b.split('.').all(word))
}

/// The internal `DeviceAttribute` as encoding/json writes it.
fn internal_attribute(a: &Value) -> String {
    go_struct(&[
        ("IntValue", go_opt(&a["int"])),
        ("BoolValue", go_opt(&a["bool"])),
        ("StringValue", go_opt(&a["string"])),
        ("VersionValue", go_opt(&a["version"])),
        ("IntValues", go_opt(&a["ints"])),
        ("BoolValues", go_opt(&a["bools"])),
        ("StringValues", go_opt(&a["strings"])),
        ("VersionValues", go_opt(&a["versions"])),
    ])
}

/// `validateDeviceTaint` of a new taint: a label key, a label value, a known effect.
fn taint_errors(taint: &Value, path: &str) -> Vec<StatusCause> {
    let at = |f: &str| format!("{path}.{f}");
    let mut errs = qualified_name_errors(&at("key"), text(&taint["key"]));
    let value = text(&taint["value"]);
    if !value.is_empty() {
        errs.extend(invalid_each(
            &at("value"),
            &json!(value),
            label_value_errors(value),
        ));
    }
    errs.extend(effect_errors(text(&taint["effect"]), &at("effect"), true));
    errs
}

/// A device's own node selection: exactly one of `nodeName`, `nodeSelector` and `allNodes`
/// when the slice selects per device, none otherwise.
fn device_node_errors(device: &Value, path: &str, per_device: bool) -> Vec<StatusCause> {
    let given = ["nodeName", "nodeSelector", "allNodes"].map(|k| !device[k].is_null());
    if !per_device {
        if !given.contains(&true) {
            return Vec::new();
        }
        let msg = "`nodeName`, `nodeSelector` and `allNodes` can only be set if `perDeviceNodeSelection` is set to true in the ResourceSlice spec";
        return vec![field::invalid(path, &Value::Null, msg)];
    }
    let mut errs = Vec::new();
    let mut set = Vec::new();
    match device["nodeName"].as_str() {
        Some("") => errs.push(field::invalid(
            &format!("{path}.nodeName"),
            &json!(""),
            "must not be empty",
        )),
        Some(node) => {
            set.push("`nodeName`");
            errs.extend(dns_subdomain_errors(&format!("{path}.nodeName"), node));
        }
        None => {}
    }
    if !device["nodeSelector"].is_null() {
        set.push("`nodeSelector`");
        errs.extend(node_selector_errors(
            &device["nodeSelector"],
            &format!("{path}.nodeSelector"),
        ));
    }
    match device["allNodes"].as_bool() {
        Some(true) => set.push("`allNodes`"),
        Some(false) => errs.push(field::invalid(
            &format!("{path}.allNodes"),
            &json!(false),
            "must be either unset or set to true",
        )),
        None => {}
    }
    match set.len() {
        0 => errs.push(field::required(path, PER_DEVICE)),
        1 => {}
        _ => errs.push(field::invalid(
            path,
            &json!(format!("{{{}}}", set.join(", "))),
            PER_DEVICE,
        )),
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::rendered as messages;
    use rstest::rstest;

    const SUBDOMAIN: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";

    fn slice(fields: Value) -> Value {
        let mut spec = json!({"driver": "gpu.example.com", "nodeName": "node-1",
            "pool": {"name": "pool", "resourceSliceCount": 1}});
        for (k, v) in fields.as_object().into_iter().flatten() {
            spec[k] = v.clone();
        }
        let mut obj = json!({"metadata": {"name": "s"}, "spec": spec});
        ResourceSliceStrategy.defaults(&mut obj);
        ResourceSliceStrategy.prepare_for_create(&mut obj);
        obj
    }

    fn errors(fields: Value) -> Vec<String> {
        messages(ResourceSliceStrategy.validate(&slice(fields)))
    }

    #[test]
    fn an_empty_spec() {
        let obj = json!({"spec": {}});
        assert_eq!(
            messages(ResourceSliceStrategy.validate(&obj)),
            vec![
                "spec.driver: Required value",
                "spec.pool.name: Required value",
                "spec.pool.resourceSliceCount: Invalid value: 0: must be greater than zero",
                "spec: Required value: exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required"
            ]
        );
    }

    #[rstest]
    #[case(json!({"devices": [{"name": "dev-0"}]}), Vec::<&str>::new())]
    #[case(json!({"allNodes": true}),
        vec!["spec: Invalid value: \"{`nodeName`, `allNodes`}\": exactly one of `nodeName`, `nodeSelector`, `allNodes`, `perDeviceNodeSelection` is required, but multiple fields are set"])]
    #[case(json!({"nodeName": "", "allNodes": false, "perDeviceNodeSelection": true}),
        vec!["spec.nodeName: Invalid value: \"\": must be either unset or set to a non-empty string",
             "spec.allNodes: Invalid value: false: must be either unset or set to true"])]
    #[case(json!({"nodeName": null, "nodeSelector": {"nodeSelectorTerms": [
            {"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n"]}]}, {}]}}),
        vec!["spec.nodeSelector.nodeSelectorTerms: Invalid value: [{\"MatchExpressions\":null,\"MatchFields\":[{\"Key\":\"metadata.name\",\"Operator\":\"In\",\"Values\":[\"n\"]}]},{\"MatchExpressions\":null,\"MatchFields\":null}]: must have exactly one node selector term"])]
    #[case(json!({"pool": {"name": "a/Q", "resourceSliceCount": 1, "generation": -1}}),
        vec![format!("spec.pool.name: Invalid value: \"Q\": {SUBDOMAIN}"),
             "spec.pool.generation: Invalid value: -1: must be greater than or equal to zero".into()])]
    #[case(json!({"sharedCounters": [{"name": "c", "counters": {"mem": {"value": "1"}}}], "devices": []}),
        vec!["spec: Invalid value: \"\": only one of `sharedCounters` or `devices` is allowed"])]
    #[case(json!({"sharedCounters": [{"name": "C", "counters": {}}, {"name": "C", "counters": {"Mem": {"value": "1"}}}]}),
        vec!["spec.sharedCounters[0].name: Invalid value: \"C\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
             "spec.sharedCounters[0].counters: Required value",
             "spec.sharedCounters[1].name: Invalid value: \"C\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
             "spec.sharedCounters[1].counters: Invalid value: \"Mem\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
             "spec.sharedCounters[1]: Duplicate value: \"C\""])]
    fn specs(#[case] fields: Value, #[case] want: Vec<impl AsRef<str>>) {
        let want: Vec<&str> = want.iter().map(AsRef::as_ref).collect();
        assert_eq!(errors(fields), want);
    }

    #[rstest]
    #[case(json!([{"name": "d0", "attributes": {"model": {"string": "a"}, "dra.example.com/v": {"version": "1.0.0"}},
        "capacity": {"mem": {"value": "1Gi"}}}]), vec![])]
    #[case(json!([{"name": "D0"}, {"name": "D0"}]), vec![
        "spec.devices[0].name: Invalid value: \"D0\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
        "spec.devices[1].name: Invalid value: \"D0\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
        "spec.devices[1]: Duplicate value: \"D0\""])]
    #[case(json!([{"name": "d", "attributes": {"1bad": {}, "v": {"version": "1.0"}, "x/y/z": {"int": 1, "bool": true}, "a": {"ints": [1, 2]}}}]), vec![
        "spec.devices[0].attributes: Invalid value: \"1bad\": a valid C identifier must start with alphabetic character or '_', followed by a string of alphanumeric characters or '_' (e.g. 'my_name',  or 'MY_NAME',  or 'MyName', regex used for validation is '[A-Za-z_][A-Za-z0-9_]*')",
        "spec.devices[0].attributes[1bad]: Invalid value: \"\": exactly one value must be specified",
        "spec.devices[0].attributes[a]: Invalid value: \"\": exactly one value must be specified",
        "spec.devices[0].attributes[v].version: Invalid value: \"1.0\": must be a string compatible with semver.org spec 2.0.0",
        "spec.devices[0].attributes[x/y/z]: Invalid value: {\"IntValue\":1,\"BoolValue\":true,\"StringValue\":null,\"VersionValue\":null,\"IntValues\":null,\"BoolValues\":null,\"StringValues\":null,\"VersionValues\":null}: exactly one value must be specified"])]
    #[case(json!([{"name": "d", "capacity": {"dra.example.com/mem": {"value": "1", "requestPolicy": {}}},
            "taints": [{"key": "", "effect": "Bad"}], "nodeName": "n"}]), vec![
        "spec.devices[0].capacity[dra.example.com/mem].requestPolicy: Forbidden: allowMultipleAllocations must be true",
        "spec.devices[0].taints[0].key: Invalid value: \"\": name part must be non-empty",
        "spec.devices[0].taints[0].key: Invalid value: \"\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
        "spec.devices[0].taints[0].effect: Unsupported value: \"Bad\": supported values: \"NoExecute\", \"NoSchedule\", \"None\"",
        "spec.devices[0]: Invalid value: null: `nodeName`, `nodeSelector` and `allNodes` can only be set if `perDeviceNodeSelection` is set to true in the ResourceSlice spec"])]
    #[case(json!([{"name": "d", "bindingConditions": ["a", "a"], "consumesCounters": [{"counterSet": "", "counters": {}}]}]), vec![
        "spec.devices[0].consumesCounters[0].counterSet: Required value",
        "spec.devices[0].consumesCounters[0].counters: Required value",
        "spec.devices[0].bindingConditions[1]: Duplicate value: \"a\"",
        "spec.devices[0].bindingFailureConditions: Invalid value: null: bindingFailureConditions are required to use bindingConditions"])]
    fn device_rules(#[case] devices: Value, #[case] want: Vec<&str>) {
        assert_eq!(errors(json!({"devices": devices})), want);
    }

    #[test]
    fn per_device_node_selection() {
        let fields = json!({"nodeName": null, "perDeviceNodeSelection": true,
            "devices": [{"name": "a", "nodeName": "n"}, {"name": "b"}, {"name": "c", "nodeName": "n", "allNodes": true}]});
        assert_eq!(
            errors(fields),
            vec![
                "spec.devices[1]: Required value: exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when `perDeviceNodeSelection` is set to true in the ResourceSlice spec",
                "spec.devices[2]: Invalid value: \"{`nodeName`, `allNodes`}\": exactly one of `nodeName`, `nodeSelector`, or `allNodes` is required when `perDeviceNodeSelection` is set to true in the ResourceSlice spec"
            ]
        );
    }

    #[test]
    fn limits() {
        let many = |n: usize, device: Value| {
            let list: Vec<Value> = (0..n)
                .map(|i| {
                    let mut d = device.clone();
                    d["name"] = json!(format!("d{i}"));
                    d
                })
                .collect();
            json!({"devices": list})
        };
        assert_eq!(
            errors(many(129, json!({}))),
            vec!["spec.devices: Too many: 129: must have at most 128 items"]
        );
        let tainted = json!({"taints": [{"key": "k", "effect": "NoSchedule"}]});
        assert_eq!(
            errors(many(65, tainted)),
            vec!["spec.devices: Too many: 65: must have at most 64 items"]
        );
        let attributes: Map<String, Value> = (0..33)
            .map(|i| (format!("a{i}"), json!({"int": i})))
            .collect();
        assert_eq!(
            errors(json!({"devices": [{"name": "d", "attributes": attributes}]})),
            vec![
                "spec.devices[0]: Invalid value: 33: the total number of attributes and capacities must not exceed 32"
            ]
        );
    }

    #[test]
    fn immutable_fields_and_generation() {
        let old = slice(json!({}));
        let mut new = slice(json!({"driver": "b.example.com", "nodeName": "n2",
            "pool": {"name": "q", "resourceSliceCount": 2}}));
        let mut old_stored = old.clone();
        old_stored["metadata"]["generation"] = json!(1);
        ResourceSliceStrategy.prepare_for_update(&mut new, &old_stored);
        assert_eq!(new["metadata"]["generation"], 2);
        assert_eq!(
            messages(ResourceSliceStrategy.validate_update(&new, &old)),
            vec![
                "spec.pool.name: Invalid value: \"q\": field is immutable",
                "spec.driver: Invalid value: \"b.example.com\": field is immutable",
                "spec.nodeName: Invalid value: \"n2\": field is immutable"
            ]
        );
    }

    #[test]
    fn disabled_gates_drop_fields_the_stored_slice_did_not_use() {
        let device = json!({"name": "d", "attributes": {"a": {"ints": [1]}, "b": {"int": 1}},
            "nodeAllocatableResourceMappings": {"cpu": {"capacityKey": "c"}}});
        let created = slice(json!({"devices": [device]}));
        assert_eq!(
            created["spec"]["devices"][0],
            json!({"name": "d", "attributes": {"a": {}, "b": {"int": 1}}})
        );
        let mut stored = created.clone();
        stored["spec"]["devices"][0] = device.clone();
        let mut updated = stored.clone();
        ResourceSliceStrategy.prepare_for_update(&mut updated, &stored);
        assert_eq!(updated["spec"]["devices"][0], device);
    }

    #[test]
    fn taints_get_a_time_and_upper_case_drivers_warn() {
        let obj = slice(
            json!({"driver": "Gpu.example.com", "devices": [{"name": "d",
            "taints": [{"key": "k", "effect": "NoSchedule"}]}]}),
        );
        assert!(obj["spec"]["devices"][0]["taints"][0]["timeAdded"].is_string());
        assert_eq!(
            ResourceSliceStrategy.warnings_on_create(&obj),
            vec!["spec.driver: driver names should be lowercase; \"Gpu.example.com\" contains uppercase characters"]
        );
        assert!(ResourceSliceStrategy.validate(&obj).is_empty());
        assert_eq!(
            unsupported_field("metadata.namespace", &[]),
            "field label not supported for resource.k8s.io/v1, Kind=ResourceSlice: metadata.namespace"
        );
    }

    #[rstest]
    #[case("1.0.0", true)]
    #[case("10.20.30-alpha.1.x-y+build.5", true)]
    #[case("1.0.0-0a", true)]
    #[case("1.0", false)]
    #[case("01.0.0", false)]
    #[case("1.0.0-01", false)]
    #[case("1.0.0-", false)]
    #[case("1.0.0+a..b", false)]
    #[case("v1.0.0", false)]
    fn semantic_versions(#[case] version: &str, #[case] ok: bool) {
        assert_eq!(is_semver(version), ok);
    }

    #[test]
    fn long_keys_are_shortened_in_paths() {
        let key = format!("{}/{}", "d".repeat(63), "x".repeat(40));
        assert_eq!(truncated(&key, MAX_KEY_LENGTH).len(), MAX_KEY_LENGTH);
        assert!(truncated(&key, MAX_KEY_LENGTH).contains("..."));
        assert_eq!(truncated("short", MAX_KEY_LENGTH), "short");
    }
}
