//! The resource.k8s.io/v1 ResourceClaim kind: a request for devices, its spec defaulted and
//! validated on create, then immutable (quoted as its internal type when it changes); its
//! status reset on create and kept by writes to the main resource, written through `/status`
//! by whoever allocates and reserves (the scheduler, drivers, tests acting as them): consumers
//! in `reservedFor`, an allocation that is immutable once set, per-device status entries
//! (dropped with the allocation of their device). The generation is the client's.
//!
//! Not as the apiserver: `adminAccess` does not require the namespace label
//! `resource.kubernetes.io/admin-access` (strategies do not read other objects), and the
//! `/status` authorization checks (`resourceclaims/binding`, `resourceclaims/driver`) are those
//! of a cluster admin: always allowed.

use std::collections::HashSet;
use std::sync::Arc;

use serde_json::{json, Value};

use super::shared::{
    binding_conditions_errors, claim_spec_errors, default_claim_spec, default_tolerations,
    device_configuration_errors, go_list, go_opt, go_string, go_struct, internal_claim_spec,
    internal_opaque, internal_term, internal_toleration, invalid_rendered, items, pool_name_errors,
    raw_object_errors, request_ref_errors, request_refs_errors, set_errors, slice_errors, text,
    RequestNames, GROUP, MAX_CONFIGS, MAX_REQUESTS,
};
use crate::error::{field, StatusCause};
use crate::registry::builtin;
use crate::registry::resource::ApiResource;
use crate::registry::storage::csidriver::csi_driver_name_errors;
use crate::registry::strategy::{keep_only_status, Strategy};
use crate::registry::table::{Column, Columns};
use crate::registry::validation::{
    conditions_errors, dns_label_errors, node_selector_errors, parse_cidr_sloppy,
};
use crate::store::selector::generic_unsupported_field;

/// `ResourceClaimReservedForMaxSize`.
const MAX_RESERVED_FOR: usize = 256;
/// `AllocatedDeviceStatusMaxConditions`.
const MAX_DEVICE_CONDITIONS: usize = 8;
/// `AllocatedDeviceStatusDataMaxLength`.
const MAX_DEVICE_DATA_LENGTH: usize = 10240;
const MAX_INTERFACE_NAME_LENGTH: usize = 256;
const MAX_HARDWARE_ADDRESS_LENGTH: usize = 128;
const MAX_IPS: usize = 16;
const STATE_DESCRIPTION: &str =
    "A summary of the current state (allocated, pending, reserved, etc.).";

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind(
        GROUP,
        "v1",
        "resourceclaims",
        Arc::new(ResourceClaimStrategy),
    )
    .part("status", Arc::new(StatusStrategy))
    .with(|r| {
        r.unsupported_field(generic_unsupported_field)
            .table(Columns::new(vec![
                Column::name(),
                Column::computed("State", "string", 0, STATE_DESCRIPTION, state_cell),
                Column::age("string"),
            ]))
            .delete_returns_object()
    })
    .build()
}

/// `resourceClaimState`: `deleted`, then `pending` (unless deleted) or `allocated` and maybe
/// `reserved`, joined by commas.
fn state_cell(claim: &Value) -> Value {
    let mut states = Vec::new();
    let deleted = !claim["metadata"]["deletionTimestamp"].is_null();
    if deleted {
        states.push("deleted");
    }
    if claim["status"]["allocation"].is_null() {
        if !deleted {
            states.push("pending");
        }
    } else {
        states.push("allocated");
        if !items(&claim["status"]["reservedFor"]).is_empty() {
            states.push("reserved");
        }
    }
    json!(states.join(","))
}

/// resource/v1 ResourceClaim.
pub struct ResourceClaimStrategy;

impl Strategy for ResourceClaimStrategy {
    fn track_generation(&self) -> bool {
        false
    }

    fn keeps_sent_generation(&self) -> bool {
        true
    }

    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn defaults(&self, obj: &mut Value) {
        if let Some(spec) = obj.get_mut("spec") {
            default_claim_spec(spec);
        }
        let results = obj
            .get_mut("status")
            .and_then(|s| s.get_mut("allocation"))
            .and_then(|a| a.get_mut("devices"))
            .and_then(|d| d.get_mut("results"))
            .and_then(Value::as_array_mut);
        for result in results.into_iter().flatten() {
            if let Some(tolerations) = result.get_mut("tolerations") {
                default_tolerations(tolerations);
            }
        }
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        obj["status"] = json!({});
    }

    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        match old.get("status") {
            Some(status) => obj["status"] = status.clone(),
            None => {
                if let Some(o) = obj.as_object_mut() {
                    o.remove("status");
                }
            }
        }
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        claim_spec_errors(&obj["spec"], "spec")
    }

    /// The spec is only compared: nothing else a client could change is checked again.
    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        if obj["spec"] == old["spec"] {
            return Vec::new();
        }
        let rendered = internal_claim_spec(&obj["spec"]);
        vec![invalid_rendered("spec", &rendered, "field is immutable")]
    }
}

/// `resourceclaims/status`: the status, and nothing else; devices that lost their allocation
/// lose their status entries.
pub struct StatusStrategy;

impl Strategy for StatusStrategy {
    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        keep_only_status(obj, old);
        drop_deallocated_devices(obj, old);
    }

    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        status_update_errors(obj, old)
    }
}

/// A device as allocation results and device statuses name it: driver, pool, device, share.
type DeviceId = (String, String, String, Option<String>);

fn device_id(v: &Value) -> DeviceId {
    let s = |k: &str| text(&v[k]).to_string();
    let share = v["shareID"].as_str().map(str::to_string);
    (s("driver"), s("pool"), s("device"), share)
}

/// The devices of a status's allocation.
fn allocated(status: &Value) -> HashSet<DeviceId> {
    let results = &status["allocation"]["devices"]["results"];
    items(results).iter().map(device_id).collect()
}

/// `dropDeallocatedStatusDevices`: status entries of devices the old allocation had and the
/// new one does not are removed (the list with them, once empty).
fn drop_deallocated_devices(obj: &mut Value, old: &Value) {
    let kept = allocated(&obj["status"]);
    let gone: HashSet<DeviceId> = allocated(&old["status"])
        .into_iter()
        .filter(|d| !kept.contains(d))
        .collect();
    let Some(status) = obj.get_mut("status").and_then(Value::as_object_mut) else {
        return;
    };
    if let Some(Value::Array(devices)) = status.get_mut("devices") {
        devices.retain(|d| !gone.contains(&device_id(d)));
        if !devices.is_empty() {
            return;
        }
    }
    status.remove("devices");
}

/// `ValidateResourceClaimStatusUpdate` (the metadata checked by the store): consumers, device
/// statuses, what may be reserved when, the allocation.
fn status_update_errors(obj: &Value, old: &Value) -> Vec<StatusCause> {
    let (status, old_status) = (&obj["status"], &old["status"]);
    let names = RequestNames::of(&obj["spec"]["devices"]);
    let mut errs = set_errors(
        &status["reservedFor"],
        Some(MAX_RESERVED_FOR),
        "status.reservedFor",
        consumer_errors,
        |c| json!(text(&c["uid"])),
    );
    let allocated = allocated(status);
    errs.extend(set_errors(
        &status["devices"],
        None,
        "status.devices",
        |d, p| device_status_errors(d, p, &allocated),
        |d| json!(internal_device_id(d)),
    ));
    errs.extend(reservation_errors(obj, old));
    let (allocation, old_allocation) = (&status["allocation"], &old_status["allocation"]);
    if !allocation.is_null() && !old_allocation.is_null() {
        if allocation != old_allocation {
            let rendered = internal_allocation(allocation);
            errs.push(invalid_rendered(
                "status.allocation",
                &rendered,
                "field is immutable",
            ));
        }
    } else if !allocation.is_null() {
        errs.extend(allocation_errors(allocation, &names));
    }
    errs
}

/// A consumer reference: resource, name and uid required.
fn consumer_errors(consumer: &Value, path: &str) -> Vec<StatusCause> {
    ["resource", "name", "uid"]
        .into_iter()
        .filter(|k| text(&consumer[*k]).is_empty())
        .map(|k| field::required(&format!("{path}.{k}"), ""))
        .collect()
}

/// Consumers only with an allocation, and none added once the claim is being deleted.
fn reservation_errors(obj: &Value, old: &Value) -> Vec<StatusCause> {
    let reserved = items(&obj["status"]["reservedFor"]);
    if reserved.is_empty() {
        return Vec::new();
    }
    if obj["status"]["allocation"].is_null() {
        let msg = "may not be specified when `allocated` is not set";
        return vec![field::forbidden("status.reservedFor", msg)];
    }
    let deleting = !obj["metadata"]["deletionTimestamp"].is_null();
    let before = items(&old["status"]["reservedFor"]);
    if deleting && reserved.iter().any(|r| !before.contains(r)) {
        let msg = "new entries may not be added while `deallocationRequested` or `deletionTimestamp` are set";
        return vec![field::forbidden("status.reservedFor", msg)];
    }
    Vec::new()
}

/// A device's identity as the apiserver quotes it (`structured.SharedDeviceID`).
fn internal_device_id(d: &Value) -> String {
    go_struct(&[
        ("Driver", go_string(&d["driver"])),
        ("Pool", go_string(&d["pool"])),
        ("Device", go_string(&d["device"])),
        ("ShareID", go_string(&d["shareID"])),
    ])
}

/// `validateDeviceStatus`: the device's names, an allocated device, its conditions, data and
/// network data.
fn device_status_errors(d: &Value, path: &str, allocated: &HashSet<DeviceId>) -> Vec<StatusCause> {
    let at = |f: &str| format!("{path}.{f}");
    let mut errs = csi_driver_name_errors(&at("driver"), text(&d["driver"]));
    errs.extend(pool_name_errors(text(&d["pool"]), &at("pool")));
    errs.extend(dns_label_errors(&at("device"), text(&d["device"])));
    if let Some(share) = d["shareID"].as_str() {
        errs.extend(uid_errors(share, &at("shareID")));
    }
    if !allocated.contains(&device_id(d)) {
        errs.push(invalid_rendered(
            path,
            &internal_device_id(d),
            "must be an allocated device in the claim",
        ));
    }
    let conditions = items(&d["conditions"]);
    if conditions.len() > MAX_DEVICE_CONDITIONS {
        errs.push(field::too_many(
            &at("conditions"),
            conditions.len(),
            MAX_DEVICE_CONDITIONS,
        ));
    }
    errs.extend(conditions_errors(&d["conditions"], &at("conditions")));
    if !d["data"].is_null() {
        errs.extend(raw_object_errors(
            &d["data"],
            &at("data"),
            false,
            MAX_DEVICE_DATA_LENGTH,
        ));
    }
    let network = &d["networkData"];
    if !network.is_null() {
        errs.extend(network_data_errors(network, &at("networkData")));
    }
    errs
}

/// `validateNetworkDeviceData`: name and address lengths, at most 16 unique addresses in
/// canonical CIDR form.
fn network_data_errors(network: &Value, path: &str) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    for (key, max) in [
        ("interfaceName", MAX_INTERFACE_NAME_LENGTH),
        ("hardwareAddress", MAX_HARDWARE_ADDRESS_LENGTH),
    ] {
        if text(&network[key]).len() > max {
            errs.push(field::too_long(&format!("{path}.{key}"), max));
        }
    }
    errs.extend(set_errors(
        &network["ips"],
        Some(MAX_IPS),
        &format!("{path}.ips"),
        |ip, p| interface_address_errors(text(ip), p),
        |ip| json!(text(ip)),
    ));
    errs
}

/// `IsValidInterfaceAddress`: an address and a prefix length, written canonically.
fn interface_address_errors(value: &str, path: &str) -> Vec<StatusCause> {
    let Some(cidr) = parse_cidr_sloppy(value) else {
        let msg = "must be a valid address in CIDR form, (e.g. 10.9.8.7/24 or 2001:db8::1/64)";
        return vec![field::invalid(path, &json!(value), msg)];
    };
    let (ip, prefix) = match cidr.ip {
        std::net::IpAddr::V6(v6) if cidr.prefix >= 96 => match v6.to_ipv4_mapped() {
            Some(v4) => (v4.to_string(), cidr.prefix - 96),
            None => (v6.to_string(), cidr.prefix),
        },
        ip => (ip.to_string(), cidr.prefix),
    };
    let canonical = format!("{ip}/{prefix}");
    if value == canonical {
        return Vec::new();
    }
    let msg = format!("must be in canonical form ({canonical:?})");
    vec![field::invalid(path, &json!(value), &msg)]
}

/// `validateUID` (a share ID): a UUID as `uuid.Validate` reads one, and in its lowercase
/// hyphenated form.
fn uid_errors(uid: &str, path: &str) -> Vec<StatusCause> {
    let b = uid.as_bytes();
    let hyphenated = |s: &[u8]| {
        s.len() == 36
            && s.iter().enumerate().all(|(i, c)| match i {
                8 | 13 | 18 | 23 => *c == b'-',
                _ => c.is_ascii_hexdigit(),
            })
    };
    const FORMAT: &str = "invalid UUID format";
    let problem = match b.len() {
        36 => (!hyphenated(b)).then(|| FORMAT.to_string()),
        45 if !b[..9].eq_ignore_ascii_case(b"urn:uuid:") => Some(format!(
            "invalid urn prefix: {:?}",
            String::from_utf8_lossy(&b[..9])
        )),
        45 => (!hyphenated(&b[9..])).then(|| FORMAT.to_string()),
        38 if b[0] != b'{' || b[37] != b'}' => Some("invalid bracketed UUID format".into()),
        38 => (!hyphenated(&b[1..37])).then(|| FORMAT.to_string()),
        32 => (!b.iter().all(u8::is_ascii_hexdigit)).then(|| FORMAT.to_string()),
        n => Some(format!("invalid UUID length: {n}")),
    };
    let detail = match problem {
        Some(p) => format!("error validating uid: {p}"),
        None if b.len() != 36 || uid != uid.to_lowercase() => "uid must be in RFC 4122 normalized form, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` with lowercase hexadecimal characters".into(),
        None => return Vec::new(),
    };
    vec![field::invalid(path, &json!(uid), &detail)]
}

/// `validateAllocationResult` of a new allocation: its results, its configurations, its
/// node selector.
fn allocation_errors(allocation: &Value, names: &RequestNames) -> Vec<StatusCause> {
    let devices = &allocation["devices"];
    let mut errs = slice_errors(
        &devices["results"],
        Some(MAX_REQUESTS),
        "status.allocation.devices.results",
        |r, p| result_errors(r, p, names),
    );
    errs.extend(slice_errors(
        &devices["config"],
        Some(2 * MAX_CONFIGS),
        "status.allocation.devices.config",
        |c, p| {
            let mut errs = match text(&c["source"]) {
                "" => vec![field::required(&format!("{p}.source"), "")],
                "FromClaim" | "FromClass" => Vec::new(),
                source => vec![field::not_supported(
                    &format!("{p}.source"),
                    &json!(source),
                    &["FromClaim", "FromClass"],
                )],
            };
            errs.extend(request_refs_errors(
                &c["requests"],
                &format!("{p}.requests"),
                names,
            ));
            errs.extend(device_configuration_errors(c, p, false));
            errs
        },
    ));
    if !allocation["nodeSelector"].is_null() {
        errs.extend(node_selector_errors(
            &allocation["nodeSelector"],
            "status.allocation.nodeSelector",
        ));
    }
    errs
}

/// `validateDeviceRequestAllocationResult`.
fn result_errors(result: &Value, path: &str, names: &RequestNames) -> Vec<StatusCause> {
    let at = |f: &str| format!("{path}.{f}");
    let mut errs = request_ref_errors(text(&result["request"]), &at("request"), names);
    errs.extend(csi_driver_name_errors(
        &at("driver"),
        text(&result["driver"]),
    ));
    errs.extend(pool_name_errors(text(&result["pool"]), &at("pool")));
    errs.extend(dns_label_errors(&at("device"), text(&result["device"])));
    errs.extend(binding_conditions_errors(result, path));
    if let Some(share) = result["shareID"].as_str() {
        errs.extend(uid_errors(share, &at("shareID")));
    }
    errs
}

/// The internal `AllocationResult` as encoding/json writes it.
fn internal_allocation(a: &Value) -> String {
    let devices = go_struct(&[
        (
            "Results",
            go_list(&a["devices"]["results"], internal_result),
        ),
        (
            "Config",
            go_list(&a["devices"]["config"], internal_allocation_config),
        ),
    ]);
    let selector = match &a["nodeSelector"] {
        Value::Null => "null".to_string(),
        s => go_struct(&[(
            "NodeSelectorTerms",
            go_list(&s["nodeSelectorTerms"], internal_term),
        )]),
    };
    go_struct(&[
        ("Devices", devices),
        ("NodeSelector", selector),
        ("AllocationTimestamp", go_opt(&a["allocationTimestamp"])),
    ])
}

fn internal_result(r: &Value) -> String {
    go_struct(&[
        ("Request", go_string(&r["request"])),
        ("Driver", go_string(&r["driver"])),
        ("Pool", go_string(&r["pool"])),
        ("Device", go_string(&r["device"])),
        ("AdminAccess", go_opt(&r["adminAccess"])),
        (
            "Tolerations",
            go_list(&r["tolerations"], internal_toleration),
        ),
        ("BindingConditions", go_opt(&r["bindingConditions"])),
        (
            "BindingFailureConditions",
            go_opt(&r["bindingFailureConditions"]),
        ),
        ("ShareID", go_opt(&r["shareID"])),
        ("ConsumedCapacity", go_opt(&r["consumedCapacity"])),
    ])
}

fn internal_allocation_config(c: &Value) -> String {
    let opaque = match &c["opaque"] {
        Value::Null => "null".to_string(),
        o => internal_opaque(o),
    };
    go_struct(&[
        ("Source", go_string(&c["source"])),
        ("Requests", go_opt(&c["requests"])),
        ("Opaque", opaque),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::rendered as messages;
    use rstest::rstest;

    fn claim(status: Value) -> Value {
        let mut obj = json!({"metadata": {"name": "c", "namespace": "ns"},
            "spec": {"devices": {"requests": [
                {"name": "req-0", "exactly": {"deviceClassName": "gpu"}},
                {"name": "req-1", "firstAvailable": [{"name": "a", "deviceClassName": "gpu"}]}]}},
            "status": status});
        ResourceClaimStrategy.defaults(&mut obj);
        obj
    }

    fn allocation(results: Value) -> Value {
        json!({"devices": {"results": results}})
    }

    fn result(request: &str, device: &str) -> Value {
        json!({"request": request, "driver": "gpu.example.com", "pool": "pool", "device": device})
    }

    fn status_errors(status: Value, old_status: Value) -> Vec<String> {
        messages(status_update_errors(&claim(status), &claim(old_status)))
    }

    #[rstest]
    #[case(json!({"allocation": allocation(json!([result("req-0", "dev-1"), result("req-1/a", "dev-2"), result("req-1", "dev-3")])),
        "reservedFor": [{"resource": "pods", "name": "p", "uid": "u1"}]}), vec![])]
    #[case(json!({"reservedFor": [{"resource": "pods", "name": "p", "uid": "u1"}]}),
        vec!["status.reservedFor: Forbidden: may not be specified when `allocated` is not set"])]
    #[case(json!({"allocation": allocation(json!([result("req-0", "d")])),
            "reservedFor": [{"resource": "pods", "name": "p", "uid": "u1"}, {"uid": "u1"}]}),
        vec!["status.reservedFor[1].resource: Required value", "status.reservedFor[1].name: Required value",
             "status.reservedFor[1]: Duplicate value: \"u1\""])]
    #[case(json!({"allocation": allocation(json!([result("nope", "d"), {"request": "req-0"}]))}),
        vec!["status.allocation.devices.results[0].request: Invalid value: \"nope\": must be the name of a request in the claim or the name of a request and a subrequest separated by '/'",
             "status.allocation.devices.results[1].driver: Required value",
             "status.allocation.devices.results[1].pool: Required value",
             "status.allocation.devices.results[1].device: Invalid value: \"\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"])]
    #[case(json!({"allocation": {"devices": {"results": [result("req-0", "d")],
            "config": [{"source": "Foo", "opaque": {"driver": "d.io", "parameters": {}}}, {}]}}}),
        vec!["status.allocation.devices.config[0].source: Unsupported value: \"Foo\": supported values: \"FromClaim\", \"FromClass\"",
             "status.allocation.devices.config[1].source: Required value",
             "status.allocation.devices.config[1].opaque: Required value"])]
    #[case(json!({"allocation": allocation(json!([result("req-0", "dev-1")])),
            "devices": [{"driver": "gpu.example.com", "pool": "pool", "device": "dev-9",
                "networkData": {"ips": ["1.2.3.4", "10.0.0.1/8"]}}]}),
        vec!["status.devices[0]: Invalid value: {\"Driver\":\"gpu.example.com\",\"Pool\":\"pool\",\"Device\":\"dev-9\",\"ShareID\":\"\"}: must be an allocated device in the claim",
             "status.devices[0].networkData.ips[0]: Invalid value: \"1.2.3.4\": must be a valid address in CIDR form, (e.g. 10.9.8.7/24 or 2001:db8::1/64)"])]
    fn status_updates(#[case] status: Value, #[case] want: Vec<&str>) {
        assert_eq!(status_errors(status, json!({})), want);
    }

    #[test]
    fn an_allocation_is_immutable() {
        let old = json!({"allocation": allocation(json!([result("req-0", "dev-1")]))});
        let new = json!({"allocation": allocation(json!([result("req-0", "dev-2")]))});
        assert_eq!(
            status_errors(new, old.clone()),
            vec!["status.allocation: Invalid value: {\"Devices\":{\"Results\":[{\"Request\":\"req-0\",\"Driver\":\"gpu.example.com\",\"Pool\":\"pool\",\"Device\":\"dev-2\",\"AdminAccess\":null,\"Tolerations\":null,\"BindingConditions\":null,\"BindingFailureConditions\":null,\"ShareID\":null,\"ConsumedCapacity\":null}],\"Config\":null},\"NodeSelector\":null,\"AllocationTimestamp\":null}: field is immutable"]
        );
        assert!(
            status_errors(json!({}), old).is_empty(),
            "clearing it is fine"
        );
    }

    #[test]
    fn no_new_consumers_while_deleting() {
        let reserved = |uids: &[&str]| {
            let consumers: Vec<Value> = uids
                .iter()
                .map(|u| json!({"resource": "pods", "name": "p", "uid": u}))
                .collect();
            json!({"allocation": allocation(json!([result("req-0", "d")])), "reservedFor": consumers})
        };
        let mut new = claim(reserved(&["a", "b"]));
        new["metadata"]["deletionTimestamp"] = json!("2026-01-01T00:00:00Z");
        let old = claim(reserved(&["a"]));
        assert_eq!(
            messages(status_update_errors(&new, &old)),
            vec!["status.reservedFor: Forbidden: new entries may not be added while `deallocationRequested` or `deletionTimestamp` are set"]
        );
        let fewer = claim(reserved(&["a"]));
        assert!(status_update_errors(&fewer, &claim(reserved(&["a", "b"]))).is_empty());
    }

    #[rstest]
    #[case("3b241101-e2bb-4255-8caf-4136c566a962", vec![])]
    #[case("3B241101-E2BB-4255-8CAF-4136C566A962", vec!["s: Invalid value: \"3B241101-E2BB-4255-8CAF-4136C566A962\": uid must be in RFC 4122 normalized form, `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` with lowercase hexadecimal characters"])]
    #[case("abc", vec!["s: Invalid value: \"abc\": error validating uid: invalid UUID length: 3"])]
    #[case("3b241101xe2bb-4255-8caf-4136c566a962", vec!["s: Invalid value: \"3b241101xe2bb-4255-8caf-4136c566a962\": error validating uid: invalid UUID format"])]
    fn share_ids(#[case] uid: &str, #[case] want: Vec<&str>) {
        assert_eq!(messages(uid_errors(uid, "s")), want);
    }

    #[rstest]
    #[case("10.0.0.1/8", vec![])]
    #[case("2001:db8::1/64", vec![])]
    #[case("010.0.0.1/8", vec!["p: Invalid value: \"010.0.0.1/8\": must be in canonical form (\"10.0.0.1/8\")"])]
    fn interface_addresses(#[case] ip: &str, #[case] want: Vec<&str>) {
        assert_eq!(messages(interface_address_errors(ip, "p")), want);
    }

    #[test]
    fn deallocation_drops_device_statuses() {
        let device = json!({"driver": "gpu.example.com", "pool": "pool", "device": "dev-1"});
        let old = claim(
            json!({"allocation": allocation(json!([result("req-0", "dev-1")])),
            "devices": [device]}),
        );
        let mut new = claim(json!({"devices": [device]}));
        StatusStrategy.prepare_for_update(&mut new, &old);
        assert_eq!(new["status"], json!({}));
        let mut kept = old.clone();
        StatusStrategy.prepare_for_update(&mut kept, &old);
        assert_eq!(kept["status"]["devices"], json!([device]));
    }

    #[test]
    fn writes_keep_their_side() {
        let old = claim(json!({"allocation": allocation(json!([result("req-0", "dev-1")]))}));
        let mut main = claim(json!({}));
        main["spec"]["devices"]["requests"][0]["exactly"]["count"] = json!(2);
        ResourceClaimStrategy.prepare_for_update(&mut main, &old);
        assert_eq!(main["status"], old["status"]);
        assert_eq!(
            messages(ResourceClaimStrategy.validate_update(&main, &old)),
            vec!["spec: Invalid value: {\"Devices\":{\"Requests\":[{\"Name\":\"req-0\",\"Exactly\":{\"DeviceClassName\":\"gpu\",\"Selectors\":null,\"AllocationMode\":\"ExactCount\",\"Count\":2,\"AdminAccess\":null,\"Tolerations\":null,\"Capacity\":null},\"FirstAvailable\":null},{\"Name\":\"req-1\",\"Exactly\":null,\"FirstAvailable\":[{\"Name\":\"a\",\"DeviceClassName\":\"gpu\",\"Selectors\":null,\"AllocationMode\":\"ExactCount\",\"Count\":1,\"Tolerations\":null,\"Capacity\":null}]}],\"Constraints\":null,\"Config\":null}}: field is immutable"]
        );
        let mut status = old.clone();
        status["spec"] = json!({});
        status["metadata"]["labels"] = json!({"a": "b"});
        StatusStrategy.prepare_for_update(&mut status, &old);
        assert_eq!(status, old);
    }

    #[rstest]
    #[case(json!({"status": {}}), "pending")]
    #[case(json!({"status": {"allocation": {}}}), "allocated")]
    #[case(json!({"status": {"allocation": {}, "reservedFor": [{}]}}), "allocated,reserved")]
    #[case(json!({"metadata": {"deletionTimestamp": "t"}, "status": {}}), "deleted")]
    #[case(json!({"metadata": {"deletionTimestamp": "t"}, "status": {"allocation": {}, "reservedFor": [{}]}}), "deleted,allocated,reserved")]
    fn states(#[case] claim: Value, #[case] want: &str) {
        assert_eq!(state_cell(&claim), want);
    }
}
