//! The storage/v1 VolumeAttachment kind: a request to attach a volume (a PersistentVolume, or
//! an inline CSI volume) to a node, its spec immutable, its status written by the attacher
//! through `/status`.
//!
//! Not as the apiserver: an inline volume other than `csi` is not validated field by field
//! (only that one volume type is given, from PersistentVolumes' list of them).

use std::sync::Arc;

use serde_json::{json, Value};

use super::csidriver::csi_driver_name_errors;
use crate::error::{field, StatusCause};
use crate::machinery::gofmt::go_quote;
use crate::registry::builtin;
use crate::registry::core::persistentvolume::{access_mode_errors, SOURCES};
use crate::registry::object_meta::NameRule;
use crate::registry::resource::ApiResource;
use crate::registry::strategy::Strategy;
use crate::registry::table::{Column, Columns};
use crate::registry::validation::{dns_label_errors, dns_subdomain_errors};
use crate::store::selector::generic_unsupported_field;

const MAX_METADATA_SIZE: usize = 256 * 1024;
const MAX_ERROR_MESSAGE: usize = 1024;

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind(
        "storage.k8s.io",
        "v1",
        "volumeattachments",
        Arc::new(VolumeAttachmentStrategy),
    )
    .part("status", Arc::new(StatusStrategy))
    .with(|r| {
        r.unsupported_field(generic_unsupported_field)
            .table(columns())
            .delete_returns_object()
    })
    .build()
}

fn columns() -> Columns {
    Columns::new(vec![
        Column::name(),
        Column::path(
            "Attacher",
            "string",
            "name",
            "attacher indicates the name of the volume driver that MUST handle this request. This is the name returned by GetPluginName().",
            0,
            ".spec.attacher",
        ),
        Column::computed(
            "PV",
            "string",
            0,
            "persistentVolumeName represents the name of the persistent volume to attach.",
            |o| json!(o["spec"]["source"]["persistentVolumeName"].as_str().unwrap_or("")),
        ),
        Column::computed(
            "Node",
            "string",
            0,
            "nodeName represents the node that the volume should be attached to.",
            |o| json!(o["spec"]["nodeName"].as_str().unwrap_or("")),
        ),
        Column::computed(
            "Attached",
            "boolean",
            0,
            "attached indicates the volume is successfully attached. This field must only be set by the entity completing the attach operation, i.e. the external-attacher.",
            |o| json!(o["status"]["attached"].as_bool().unwrap_or(false)),
        ),
        Column::age("string"),
    ])
}

/// `ValidateVolumeAttachment`: the attacher, the source, the node, the status.
fn attachment_errors(obj: &Value) -> Vec<StatusCause> {
    let spec = &obj["spec"];
    let mut errs = csi_driver_name_errors("spec.attacher", spec["attacher"].as_str().unwrap_or(""));
    let source = &spec["source"];
    let pv = source.get("persistentVolumeName").filter(|v| !v.is_null());
    let inline = source.get("inlineVolumeSpec").filter(|v| !v.is_null());
    const ONE: &str = "must specify exactly one of inlineVolumeSpec and persistentVolumeName";
    match (pv, inline) {
        (None, None) => errs.push(field::required("spec.source", ONE)),
        (Some(_), Some(_)) => errs.push(field::forbidden("spec.source", ONE)),
        (Some(name), None) if name.as_str().unwrap_or("").is_empty() => errs.push(field::required(
            "spec.source.persistentVolumeName",
            "must specify non empty persistentVolumeName",
        )),
        (Some(_), None) => {}
        (None, Some(pv)) => errs.extend(inline_errors("spec.source.inlineVolumeSpec", pv)),
    }
    let node = spec["nodeName"].as_str().unwrap_or("");
    errs.extend(dns_subdomain_errors("spec.nodeName", node));
    errs.extend(status_errors(&obj["status"]));
    if let Some(name) = pv {
        let name = name.as_str().unwrap_or("");
        errs.extend(dns_subdomain_errors(
            "spec.source.persistentVolumeName",
            name,
        ));
    }
    errs
}

/// A PersistentVolume spec inline: a CSI volume, read-write as a PV is, nothing that only a
/// PersistentVolume object may say.
fn inline_errors(path: &str, pv: &Value) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let at = |f: &str| format!("{path}.{f}");
    const INLINE: &str = "may not be specified in the context of inline volumes";
    if !pv["claimRef"].is_null() {
        errs.push(field::forbidden(&at("claimRef"), INLINE));
    }
    if pv["capacity"].as_object().is_some_and(|c| !c.is_empty()) {
        errs.push(field::forbidden(&at("capacity"), INLINE));
    }
    if pv["csi"].is_null() {
        errs.push(field::required(
            &at("csi"),
            "has to be specified in the context of inline volumes",
        ));
    }
    errs.extend(access_mode_errors(
        &pv["accessModes"],
        &at("accessModes"),
        "",
    ));
    if pv["persistentVolumeReclaimPolicy"]
        .as_str()
        .is_some_and(|p| !p.is_empty() && p != "Retain")
    {
        errs.push(field::forbidden(
            &at("persistentVolumeReclaimPolicy"),
            "may only be Retain in the context of inline volumes",
        ));
    }
    if !pv["nodeAffinity"].is_null() {
        errs.push(field::forbidden(&at("nodeAffinity"), INLINE));
    }
    let given: Vec<(&str, &str)> = SOURCES
        .iter()
        .copied()
        .filter(|(key, _)| !pv[*key].is_null())
        .collect();
    for (_, name) in given.iter().skip(1) {
        errs.push(field::forbidden(
            &at(name),
            "may not specify more than 1 volume type",
        ));
    }
    match given.first() {
        None => errs.push(field::required(path, "must specify a volume type")),
        Some(("csi", _)) => errs.extend(csi_errors(&at("csi"), &pv["csi"])),
        Some(_) => {}
    }
    if pv["storageClassName"]
        .as_str()
        .is_some_and(|c| !c.is_empty())
    {
        errs.push(field::forbidden(&at("storageClassName"), INLINE));
    }
    if pv["volumeMode"].as_str().is_some_and(|m| m != "Filesystem") {
        errs.push(field::forbidden(
            &at("volumeMode"),
            "may not specify volumeMode other than Filesystem in the context of inline volumes",
        ));
    }
    errs
}

/// A CSI persistent volume source: its driver, its handle, the secrets it names.
fn csi_errors(path: &str, csi: &Value) -> Vec<StatusCause> {
    let mut errs = csi_driver_name_errors(
        &format!("{path}.driver"),
        csi["driver"].as_str().unwrap_or(""),
    );
    if csi["volumeHandle"].as_str().unwrap_or("").is_empty() {
        errs.push(field::required(&format!("{path}.volumeHandle"), ""));
    }
    for secret in [
        "controllerPublishSecretRef",
        "controllerExpandSecretRef",
        "nodePublishSecretRef",
        "nodeExpandSecretRef",
    ] {
        let Some(r) = csi.get(secret).filter(|r| !r.is_null()) else {
            continue;
        };
        let at = |f: &str| format!("{path}.{secret}.{f}");
        match r["name"].as_str().unwrap_or("") {
            "" => errs.push(field::required(&at("name"), "")),
            name => errs.extend(dns_subdomain_errors(&at("name"), name)),
        }
        match r["namespace"].as_str().unwrap_or("") {
            "" => errs.push(field::required(&at("namespace"), "")),
            ns => errs.extend(dns_label_errors(&at("namespace"), ns)),
        }
    }
    errs
}

/// The attacher's status: metadata within 256 KiB, error messages within 1 KiB (reported with
/// the metadata's limit, as the apiserver does), error codes not negative.
fn status_errors(status: &Value) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let size: usize = status["attachmentMetadata"]
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| k.len() + v.as_str().map_or(0, str::len))
        .sum();
    if size > MAX_METADATA_SIZE {
        errs.push(field::too_long(
            "status.attachmentMetadata",
            MAX_METADATA_SIZE,
        ));
    }
    for key in ["attachError", "detachError"] {
        let e = &status[key];
        if e["message"]
            .as_str()
            .is_some_and(|m| m.len() > MAX_ERROR_MESSAGE)
        {
            errs.push(field::too_long(
                &format!("status.{key}.message"),
                MAX_METADATA_SIZE,
            ));
        }
        if let Some(code) = e["errorCode"].as_i64().filter(|c| *c < 0) {
            errs.push(field::invalid(
                &format!("status.{key}.errorCode"),
                &json!(code),
                "must be between 0 and 2147483647, inclusive",
            ));
        }
    }
    errs
}

/// The spec as the apiserver quotes it when it changed: its internal type written by
/// encoding/json (an inline volume spec written as it was given).
fn internal_spec(spec: &Value) -> String {
    let source = &spec["source"];
    let pv = source["persistentVolumeName"]
        .as_str()
        .map_or("null".into(), go_quote);
    let inline = source
        .get("inlineVolumeSpec")
        .filter(|v| !v.is_null())
        .map_or("null".into(), Value::to_string);
    format!(
        "{{\"Attacher\":{},\"Source\":{{\"PersistentVolumeName\":{pv},\"InlineVolumeSpec\":{inline}}},\"NodeName\":{}}}",
        go_quote(spec["attacher"].as_str().unwrap_or("")),
        go_quote(spec["nodeName"].as_str().unwrap_or("")),
    )
}

fn update_errors(obj: &Value, old: &Value) -> Vec<StatusCause> {
    let mut errs = attachment_errors(obj);
    if obj["spec"] != old["spec"] {
        let mut cause = field::invalid("spec", &Value::Null, "field is immutable");
        cause.message = format!(
            "Invalid value: {}: field is immutable",
            internal_spec(&obj["spec"])
        );
        errs.push(cause);
    }
    errs
}

/// storage/v1 VolumeAttachment.
pub struct VolumeAttachmentStrategy;

impl Strategy for VolumeAttachmentStrategy {
    fn name_rule(&self) -> NameRule {
        NameRule::Subdomain
    }

    fn track_generation(&self) -> bool {
        false
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        obj["status"] = json!({"attached": false});
    }

    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        obj["status"] = old["status"].clone();
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        attachment_errors(obj)
    }

    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        update_errors(obj, old)
    }
}

/// `volumeattachments/status`: the status, and nothing else.
pub struct StatusStrategy;

impl Strategy for StatusStrategy {
    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        crate::registry::strategy::keep_only_status(obj, old);
    }

    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        update_errors(obj, old)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::rendered as messages;
    use rstest::rstest;

    fn attachment(source: Value) -> Value {
        json!({"spec": {"attacher": "csi.example.com", "nodeName": "node-1", "source": source},
            "status": {"attached": false}})
    }

    #[rstest]
    #[case(json!({"persistentVolumeName": "pv-1"}), vec![])]
    #[case(json!({}), vec!["spec.source: Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName"])]
    #[case(json!({"persistentVolumeName": "pv", "inlineVolumeSpec": {}}), vec!["spec.source: Forbidden: must specify exactly one of inlineVolumeSpec and persistentVolumeName"])]
    #[case(json!({"inlineVolumeSpec": {"accessModes": ["ReadWriteOnce"], "csi": {"driver": "d.io", "volumeHandle": "h"}}}), vec![])]
    #[case(json!({"inlineVolumeSpec": {"accessModes": ["ReadWriteOncePod", "ReadWriteOnce"],
            "csi": {"driver": "d.io", "volumeHandle": ""}, "nfs": {"server": "s", "path": "/"}}}),
        vec!["spec.source.inlineVolumeSpec.accessModes: Forbidden: may not use ReadWriteOncePod with other access modes",
             "spec.source.inlineVolumeSpec.csi: Forbidden: may not specify more than 1 volume type",
             ])]
    fn sources(#[case] source: Value, #[case] want: Vec<&str>) {
        assert_eq!(messages(attachment_errors(&attachment(source))), want);
    }

    #[test]
    fn the_spec_is_immutable() {
        let old = attachment(json!({"persistentVolumeName": "pv-1"}));
        let new = attachment(json!({"persistentVolumeName": "pv-2"}));
        assert_eq!(
            messages(update_errors(&new, &old)),
            vec!["spec: Invalid value: {\"Attacher\":\"csi.example.com\",\"Source\":{\"PersistentVolumeName\":\"pv-2\",\"InlineVolumeSpec\":null},\"NodeName\":\"node-1\"}: field is immutable"]
        );
    }

    #[test]
    fn status_limits() {
        let status = json!({"attachError": {"message": "x".repeat(1025), "errorCode": -1}});
        assert_eq!(
            messages(status_errors(&status)),
            vec![
                "status.attachError.message: Too long: may not be more than 262144 bytes",
                "status.attachError.errorCode: Invalid value: -1: must be between 0 and 2147483647, inclusive"
            ]
        );
    }
}
