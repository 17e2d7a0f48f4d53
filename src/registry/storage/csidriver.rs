//! The storage/v1 CSIDriver kind: how the kubelet and the attach controller treat a CSI
//! driver. Its spec is defaulted as 1.36 defaults it (attach required, no pod info, no storage
//! capacity, `ReadWriteOnceWithFSType`, `Persistent` volumes, no republish, no SELinux mount;
//! `preventPodSchedulingIfMissing` is dropped, its gate off), validated, and its generation
//! follows spec changes; `attachRequired` and the lifecycle modes are immutable.
//!
//! Also the driver-name rule other kinds name CSI drivers with ([`csi_driver_name_errors`]).

use std::sync::Arc;

use serde_json::{json, Value};

use crate::error::{field, StatusCause};
use crate::registry::builtin;
use crate::registry::resource::ApiResource;
use crate::registry::strategy::{bump_generation, Strategy};
use crate::registry::table::{Column, Columns};
use crate::registry::validation::{dns1123_subdomain_errors, immutable, invalid_each};
use crate::store::selector::generic_unsupported_field;

const ATTACH_REQUIRED_DESCRIPTION: &str = "attachRequired indicates this CSI volume driver requires an attach operation (because it implements the CSI ControllerPublishVolume() method), and that the Kubernetes attach detach controller should call the attach volume interface which checks the volumeattachment status and waits until the volume is attached before proceeding to mounting. The CSI external-attacher coordinates with CSI volume driver and updates the volumeattachment status when the attach operation is complete. If the value is specified to false, the attach operation will be skipped. Otherwise the attach operation will be called.\n\nThis field is immutable.";
const POD_INFO_DESCRIPTION: &str = "podInfoOnMount indicates this CSI volume driver requires additional pod information (like podName, podUID, etc.) during mount operations, if set to true. If set to false, pod information will not be passed on mount. Default is false.\n\nThe CSI driver specifies podInfoOnMount as part of driver deployment. If true, Kubelet will pass pod information as VolumeContext in the CSI NodePublishVolume() calls. The CSI driver is responsible for parsing and validating the information passed in as VolumeContext.\n\nThe following VolumeContext will be passed if podInfoOnMount is set to true. This list might grow, but the prefix will be used. \"csi.storage.k8s.io/pod.name\": pod.Name \"csi.storage.k8s.io/pod.namespace\": pod.Namespace \"csi.storage.k8s.io/pod.uid\": string(pod.UID) \"csi.storage.k8s.io/ephemeral\": \"true\" if the volume is an ephemeral inline volume\n                                defined by a CSIVolumeSource, otherwise \"false\"\n\n\"csi.storage.k8s.io/ephemeral\" is a new feature in Kubernetes 1.16. It is only required for drivers which support both the \"Persistent\" and \"Ephemeral\" VolumeLifecycleMode. Other drivers can leave pod info disabled and/or ignore this field. As Kubernetes 1.15 doesn't support this field, drivers can only support one mode when deployed on such a cluster and the deployment determines which mode that is, for example via a command line parameter of the driver.\n\nThis field was immutable in Kubernetes < 1.29 and now is mutable.";
const STORAGE_CAPACITY_DESCRIPTION: &str = "storageCapacity indicates that the CSI volume driver wants pod scheduling to consider the storage capacity that the driver deployment will report by creating CSIStorageCapacity objects with capacity information, if set to true.\n\nThe check can be enabled immediately when deploying a driver. In that case, provisioning new volumes with late binding will pause until the driver deployment has published some suitable CSIStorageCapacity object.\n\nAlternatively, the driver can be deployed with the field unset or false and it can be flipped later when storage capacity information has been published.\n\nThis field was immutable in Kubernetes <= 1.22 and now is mutable.";
const TOKEN_REQUESTS_DESCRIPTION: &str = "tokenRequests indicates the CSI driver needs pods' service account tokens it is mounting volume for to do necessary authentication. Kubelet will pass the tokens in VolumeContext in the CSI NodePublishVolume calls. The CSI driver should parse and validate the following VolumeContext: \"csi.storage.k8s.io/serviceAccount.tokens\": {\n  \"<audience>\": {\n    \"token\": <token>,\n    \"expirationTimestamp\": <expiration timestamp in RFC3339>,\n  },\n  ...\n}\n\nNote: Audience in each TokenRequest should be different and at most one token is empty string. To receive a new token after expiry, RequiresRepublish can be used to trigger NodePublishVolume periodically.";
const REQUIRES_REPUBLISH_DESCRIPTION: &str = "requiresRepublish indicates the CSI driver wants `NodePublishVolume` being periodically called to reflect any possible change in the mounted volume. This field defaults to false.\n\nNote: After a successful initial NodePublishVolume call, subsequent calls to NodePublishVolume should only update the contents of the volume. New mount points will not be seen by a running container.";
const MODES_DESCRIPTION: &str = "volumeLifecycleModes defines what kind of volumes this CSI volume driver supports. The default if the list is empty is \"Persistent\", which is the usage defined by the CSI specification and implemented in Kubernetes via the usual PV/PVC mechanism.\n\nThe other mode is \"Ephemeral\". In this mode, volumes are defined inline inside the pod spec with CSIVolumeSource and their lifecycle is tied to the lifecycle of that pod. A driver has to be aware of this because it is only going to get a NodePublishVolume call for such a volume.\n\nFor more information about implementing this mode, see https://kubernetes-csi.github.io/docs/ephemeral-local-volumes.html A driver can support one or more of these modes and more modes may be added in the future.\n\nThis field is beta. This field is immutable.";
const TOKEN_SECRETS_WARNING: &str = "spec.serviceAccountTokenInSecrets is unset; if supported by this CSI driver, set to true to prevent possible logging of tokens in volume attributes";

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind(
        "storage.k8s.io",
        "v1",
        "csidrivers",
        Arc::new(CsiDriverStrategy),
    )
    .with(|r| {
        r.unsupported_field(generic_unsupported_field)
            .table(columns())
            .delete_returns_object()
    })
    .build()
}

/// `printCSIDriver`'s columns (descriptions are the spec fields' own).
fn columns() -> Columns {
    Columns::new(vec![
        Column::name(),
        Column::computed(
            "AttachRequired",
            "boolean",
            0,
            ATTACH_REQUIRED_DESCRIPTION,
            |o| json!(o["spec"]["attachRequired"].as_bool().unwrap_or(true)),
        ),
        Column::computed("PodInfoOnMount", "boolean", 0, POD_INFO_DESCRIPTION, |o| {
            json!(o["spec"]["podInfoOnMount"].as_bool().unwrap_or(false))
        }),
        Column::computed(
            "StorageCapacity",
            "boolean",
            0,
            STORAGE_CAPACITY_DESCRIPTION,
            |o| json!(o["spec"]["storageCapacity"].as_bool().unwrap_or(false)),
        ),
        Column::computed(
            "TokenRequests",
            "string",
            0,
            TOKEN_REQUESTS_DESCRIPTION,
            |o| match o["spec"]["tokenRequests"].as_array() {
                None => json!("<unset>"),
                Some(list) => {
                    let audiences: Vec<&str> = list
                        .iter()
                        .map(|t| t["audience"].as_str().unwrap_or(""))
                        .collect();
                    json!(audiences.join(","))
                }
            },
        ),
        Column::computed(
            "RequiresRepublish",
            "boolean",
            0,
            REQUIRES_REPUBLISH_DESCRIPTION,
            |o| json!(o["spec"]["requiresRepublish"].as_bool().unwrap_or(false)),
        ),
        Column::computed("Modes", "string", 0, MODES_DESCRIPTION, |o| {
            let modes: Vec<&str> = o["spec"]["volumeLifecycleModes"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            json!(if modes.is_empty() {
                "<none>".to_string()
            } else {
                modes.join(",")
            })
        }),
        Column::age("string"),
    ])
}

/// `ValidateCSIDriverName`: required, at most 63 bytes, a DNS subdomain once lower-cased
/// (the value as given quoted).
pub fn csi_driver_name_errors(path: &str, name: &str) -> Vec<StatusCause> {
    if name.is_empty() {
        return vec![field::required(path, "")];
    }
    let mut errs = Vec::new();
    if name.len() > 63 {
        errs.push(field::too_long(path, 63));
    }
    errs.extend(invalid_each(
        path,
        &json!(name),
        dns1123_subdomain_errors(&name.to_lowercase()),
    ));
    errs
}

/// storage/v1 CSIDriver.
pub struct CsiDriverStrategy;

fn spec_errors(obj: &Value) -> Vec<StatusCause> {
    let spec = &obj["spec"];
    let mut errs = Vec::new();
    for (path, key) in [
        ("spec.attachedRequired", "attachRequired"),
        ("spec.podInfoOnMount", "podInfoOnMount"),
        ("spec.storageCapacity", "storageCapacity"),
    ] {
        if spec[key].is_null() {
            errs.push(field::required(path, ""));
        }
    }
    if let Some(policy) = spec["fsGroupPolicy"].as_str() {
        const POLICIES: [&str; 3] = ["File", "None", "ReadWriteOnceWithFSType"];
        if !POLICIES.contains(&policy) {
            errs.push(field::not_supported(
                "spec.fsGroupPolicy",
                &json!(policy),
                &POLICIES,
            ));
        }
    }
    errs.extend(token_request_errors(spec));
    for mode in spec["volumeLifecycleModes"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let mode = mode.as_str().unwrap_or("");
        if mode != "Persistent" && mode != "Ephemeral" {
            errs.push(field::not_supported(
                "spec.volumeLifecycleModes",
                &json!(mode),
                &["Persistent", "Ephemeral"],
            ));
        }
    }
    if spec["seLinuxMount"].is_null() {
        errs.push(field::required("spec.seLinuxMount", ""));
    }
    if let Some(period) = spec["nodeAllocatableUpdatePeriodSeconds"].as_i64() {
        if period < 10 {
            errs.push(field::invalid(
                "spec.nodeAllocatableUpdatePeriodSeconds",
                &json!(period),
                "must be greater than or equal to 10 seconds",
            ));
        }
    }
    let no_tokens = spec["tokenRequests"].as_array().is_none_or(Vec::is_empty);
    if let Some(in_secrets) = spec["serviceAccountTokenInSecrets"].as_bool() {
        if no_tokens {
            errs.push(field::invalid(
                "spec.serviceAccountTokenInSecrets",
                &json!(in_secrets),
                "serviceAccountTokenInSecrets is set but no tokenRequests are specified",
            ));
        }
    }
    errs
}

/// `validateTokenRequests`: audiences unique (one may be empty), expirations between ten
/// minutes and 2^32 seconds.
fn token_request_errors(spec: &Value) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (i, t) in spec["tokenRequests"]
        .as_array()
        .into_iter()
        .flatten()
        .enumerate()
    {
        let audience = t["audience"].as_str().unwrap_or("");
        if !seen.insert(audience) {
            let path = format!("spec.tokenRequests[{i}].audience");
            errs.push(field::duplicate(&path, &json!(audience)));
            continue;
        }
        let Some(seconds) = t["expirationSeconds"].as_i64() else {
            continue;
        };
        let path = format!("spec.tokenRequests[{i}].expirationSeconds");
        if seconds < 600 {
            errs.push(field::invalid(
                &path,
                &json!(seconds),
                "may not specify a duration less than 10 minutes",
            ));
        } else if seconds > 1 << 32 {
            errs.push(field::invalid(
                &path,
                &json!(seconds),
                "may not specify a duration larger than 2^32 seconds",
            ));
        }
    }
    errs
}

fn token_secrets_warning(obj: &Value) -> Vec<String> {
    let spec = &obj["spec"];
    let tokens = spec["tokenRequests"]
        .as_array()
        .is_some_and(|t| !t.is_empty());
    if tokens && spec["serviceAccountTokenInSecrets"].is_null() {
        vec![TOKEN_SECRETS_WARNING.to_string()]
    } else {
        Vec::new()
    }
}

impl Strategy for CsiDriverStrategy {
    fn track_generation(&self) -> bool {
        false
    }

    fn defaults(&self, obj: &mut Value) {
        if !obj["spec"].is_object() {
            obj["spec"] = json!({});
        }
        let spec = &mut obj["spec"];
        for (key, default) in [
            ("attachRequired", json!(true)),
            ("podInfoOnMount", json!(false)),
            ("storageCapacity", json!(false)),
            ("fsGroupPolicy", json!("ReadWriteOnceWithFSType")),
            ("requiresRepublish", json!(false)),
            ("seLinuxMount", json!(false)),
        ] {
            if spec[key].is_null() {
                spec[key] = default;
            }
        }
        if spec["volumeLifecycleModes"]
            .as_array()
            .is_none_or(Vec::is_empty)
        {
            spec["volumeLifecycleModes"] = json!(["Persistent"]);
        }
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        if let Some(spec) = obj["spec"].as_object_mut() {
            spec.remove("preventPodSchedulingIfMissing");
        }
    }

    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        if let Some(spec) = obj["spec"].as_object_mut() {
            spec.remove("preventPodSchedulingIfMissing");
        }
        if obj["spec"] != old["spec"] {
            bump_generation(obj, old, true);
        }
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        spec_errors(obj)
    }

    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        let mut errs = spec_errors(obj);
        let (new_spec, old_spec) = (&obj["spec"], &old["spec"]);
        let attach = |s: &Value| s["attachRequired"].clone();
        errs.extend(immutable(
            &attach(new_spec),
            &attach(old_spec),
            "spec.attachedRequired",
        ));
        let modes = |s: &Value| s["volumeLifecycleModes"].clone();
        errs.extend(immutable(
            &modes(new_spec),
            &modes(old_spec),
            "spec.volumeLifecycleModes",
        ));
        errs
    }

    fn warnings_on_create(&self, obj: &Value) -> Vec<String> {
        token_secrets_warning(obj)
    }

    fn warnings_on_update(&self, obj: &Value, old: &Value) -> Vec<String> {
        if obj["spec"]["tokenRequests"] == old["spec"]["tokenRequests"] {
            return Vec::new();
        }
        token_secrets_warning(obj)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::rendered as messages;
    use rstest::rstest;

    fn defaulted(spec: Value) -> Value {
        let mut obj = json!({"metadata": {"name": "d"}, "spec": spec});
        CsiDriverStrategy.defaults(&mut obj);
        obj
    }

    #[test]
    fn defaults() {
        assert_eq!(
            defaulted(json!({}))["spec"],
            json!({"attachRequired": true, "podInfoOnMount": false, "storageCapacity": false,
                "fsGroupPolicy": "ReadWriteOnceWithFSType", "requiresRepublish": false,
                "seLinuxMount": false, "volumeLifecycleModes": ["Persistent"]})
        );
    }

    #[rstest]
    #[case(json!({"fsGroupPolicy": "Foo"}), vec!["spec.fsGroupPolicy: Unsupported value: \"Foo\": supported values: \"File\", \"None\", \"ReadWriteOnceWithFSType\""])]
    #[case(json!({"volumeLifecycleModes": ["Other"]}), vec!["spec.volumeLifecycleModes: Unsupported value: \"Other\": supported values: \"Persistent\", \"Ephemeral\""])]
    #[case(json!({"tokenRequests": [{"audience": "a", "expirationSeconds": 60}, {"audience": "a"}]}),
        vec!["spec.tokenRequests[0].expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes",
             "spec.tokenRequests[1].audience: Duplicate value: \"a\""])]
    #[case(json!({"serviceAccountTokenInSecrets": false, "nodeAllocatableUpdatePeriodSeconds": 5}),
        vec!["spec.nodeAllocatableUpdatePeriodSeconds: Invalid value: 5: must be greater than or equal to 10 seconds",
             "spec.serviceAccountTokenInSecrets: Invalid value: false: serviceAccountTokenInSecrets is set but no tokenRequests are specified"])]
    fn create(#[case] spec: Value, #[case] want: Vec<&str>) {
        assert_eq!(messages(spec_errors(&defaulted(spec))), want);
    }

    #[test]
    fn immutable_fields() {
        let old = defaulted(json!({}));
        let new = defaulted(
            json!({"attachRequired": false, "volumeLifecycleModes": ["Persistent", "Ephemeral"]}),
        );
        assert_eq!(
            messages(CsiDriverStrategy.validate_update(&new, &old)),
            vec![
                "spec.attachedRequired: Invalid value: false: field is immutable",
                "spec.volumeLifecycleModes: Invalid value: [\"Persistent\",\"Ephemeral\"]: field is immutable"
            ]
        );
    }

    #[rstest]
    #[case("", vec!["p: Required value"])]
    #[case("Csi.Example.COM", vec![])]
    #[case("bad_name", vec!["p: Invalid value: \"bad_name\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"])]
    fn driver_names(#[case] name: &str, #[case] want: Vec<&str>) {
        assert_eq!(messages(csi_driver_name_errors("p", name)), want);
    }
}
