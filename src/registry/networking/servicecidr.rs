//! The networking.k8s.io/v1 ServiceCIDR kind: a range Services get their cluster IPs from
//! (one CIDR per IP family, canonical), and the default one, `kubernetes`, that the apiserver
//! makes of `--service-cluster-ip-range` and marks Ready. The Service allocator reads its
//! ranges from these objects ([`crate::registry::core::service_alloc::ranges`]).
//!
//! As on a bare apiserver (envtest's), nothing adds kube-controller-manager's
//! `networking.k8s.io/service-cidr-finalizer`, so a ServiceCIDR is deleted at once, and only
//! the default one has a status. Deliberate difference: a deleted default ServiceCIDR comes
//! back at once, where the apiserver's controller restores it within ten seconds.

use std::sync::Arc;

use serde_json::{json, Value};

use crate::controllers::Work;
use crate::error::{field, StatusCause};
use crate::registry::builtin;
use crate::registry::core::service_alloc::DEFAULT_SERVICE_CIDR;
use crate::registry::object_meta::meta_str;
use crate::registry::resource::{ApiResource, ClusterInfo};
use crate::registry::strategy::{keep_only_status, Strategy};
use crate::registry::table::{Column, Columns};
use crate::registry::validation::cidr_errors;
use crate::store::selector::generic_unsupported_field;
use crate::store::StoredObject;

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind(
        "networking.k8s.io",
        "v1",
        "servicecidrs",
        Arc::new(ServiceCidrStrategy),
    )
    .part("status", Arc::new(StatusStrategy))
    .with(|r| {
        r.unsupported_field(generic_unsupported_field)
            .table(Columns::new(vec![
                Column::name(),
                Column::computed(
                    "CIDRs",
                    "string",
                    0,
                    "CIDRs defines the IP blocks in CIDR notation (e.g. \"192.168.0.0/24\" or \"2001:db8::/64\") from which to assign service cluster IPs. Max of two CIDRs is allowed, one of each IP family. This field is immutable.",
                    |o| json!(cidrs(o).join(",")),
                ),
                Column::age("string"),
            ]))
            .bootstrap(bootstrap)
    })
    .build()
}

fn cidrs(obj: &Value) -> Vec<&str> {
    let list = obj["spec"]["cidrs"].as_array().into_iter().flatten();
    list.filter_map(Value::as_str).collect()
}

/// The default ServiceCIDR, as the apiserver's default-servicecidr controller creates it.
pub fn default_service_cidr(range: &str) -> Value {
    json!({"apiVersion": "networking.k8s.io/v1", "kind": "ServiceCIDR",
        "metadata": {"name": DEFAULT_SERVICE_CIDR}, "spec": {"cidrs": [range]}})
}

/// The status the controller then gives it (its `reason` written, empty).
pub fn ready_status() -> Value {
    json!({"conditions": [{"type": "Ready", "status": "True",
        "lastTransitionTime": crate::registry::object_meta::now_rfc3339(),
        "reason": "", "message": "Kubernetes default Service CIDR is ready"}]})
}

fn bootstrap(cluster: &ClusterInfo) -> Vec<Value> {
    vec![default_service_cidr(cluster.service_cidr)]
}

/// `validateServiceCIDRSpec`.
fn spec_errors(obj: &Value) -> Vec<StatusCause> {
    let list = cidrs(obj);
    if list.is_empty() {
        return vec![field::required("spec.cidrs", "at least one CIDR required")];
    }
    if list.len() > 2 {
        return vec![field::invalid(
            "spec.cidrs",
            &json!({"CIDRs": list}),
            "may only hold up to 2 values",
        )];
    }
    let mut errs = Vec::new();
    for (i, cidr) in list.iter().enumerate() {
        errs.extend(cidr_errors(&format!("spec.cidrs[{i}]"), cidr));
    }
    let family = |c: &str| c.contains(':');
    if errs.is_empty() && list.len() == 2 && family(list[0]) == family(list[1]) {
        errs.push(field::invalid(
            "spec.cidrs",
            &json!(list),
            "may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64",
        ));
    }
    errs
}

/// `ValidateServiceCIDRUpdate`: the CIDRs are immutable, but a single-stack range may gain its
/// second family.
fn update_errors(obj: &Value, old: &Value) -> Vec<StatusCause> {
    let (new, was) = (cidrs(obj), cidrs(old));
    let immutable = "field is immutable";
    match (was.len(), new.len()) {
        (a, b) if a == b => (0..a)
            .filter(|i| new[*i] != was[*i])
            .map(|i| field::invalid(&format!("spec.cidrs[{i}]"), &json!(new[i]), immutable))
            .collect(),
        (1, 2) => {
            let mut errs = Vec::new();
            if new[0] != was[0] {
                errs.push(field::invalid("spec.cidrs[0]", &json!(new[0]), immutable));
            }
            errs.extend(spec_errors(obj));
            errs
        }
        _ => vec![field::invalid("spec.cidrs", &json!(new), immutable)],
    }
}

/// networking/v1 ServiceCIDR.
pub struct ServiceCidrStrategy;

impl Strategy for ServiceCidrStrategy {
    fn track_generation(&self) -> bool {
        false
    }

    fn allow_unconditional_update(&self) -> bool {
        true
    }

    /// ServiceCIDRStatusFieldWiping (on in 1.36): a create's status is dropped.
    fn prepare_for_create(&self, obj: &mut Value) {
        obj["status"] = json!({});
    }

    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        obj["status"] = old.get("status").cloned().unwrap_or(json!({}));
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        spec_errors(obj)
    }

    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        update_errors(obj, old)
    }

    /// The default ServiceCIDR is marked Ready once created (a create's status is dropped).
    fn after_commit(&self, obj: &StoredObject) -> Vec<Work> {
        let obj = obj.value();
        let marked = obj["status"]["conditions"]
            .as_array()
            .is_some_and(|c| !c.is_empty());
        match meta_str(&obj, "name") == DEFAULT_SERVICE_CIDR && !marked {
            true => vec![Work::DefaultServiceCidr],
            false => Vec::new(),
        }
    }

    /// The default ServiceCIDR is restored when it goes.
    fn after_remove(&self, obj: &StoredObject) -> Vec<Work> {
        match meta_str(&obj.value(), "name") == DEFAULT_SERVICE_CIDR {
            true => vec![Work::DefaultServiceCidr],
            false => Vec::new(),
        }
    }
}

/// `servicecidrs/status`: conditions are not validated.
pub struct StatusStrategy;

impl Strategy for StatusStrategy {
    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        keep_only_status(obj, old);
    }

    fn validate_update(&self, _obj: &Value, _old: &Value) -> Vec<StatusCause> {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::rendered as messages;
    use rstest::rstest;

    fn cidr(list: &[&str]) -> Value {
        json!({"spec": {"cidrs": list}})
    }

    #[rstest]
    #[case(&["10.0.0.0/24"], vec![])]
    #[case(&["10.0.0.0/24", "fd00::/64"], vec![])]
    #[case(&[], vec!["spec.cidrs: Required value: at least one CIDR required"])]
    #[case(&["10.0.0.0/24", "10.1.0.0/24", "fd00::/64"],
        vec!["spec.cidrs: Invalid value: {\"CIDRs\":[\"10.0.0.0/24\",\"10.1.0.0/24\",\"fd00::/64\"]}: may only hold up to 2 values"])]
    #[case(&["10.0.0.0/24", "10.1.0.0/24"],
        vec!["spec.cidrs: Invalid value: [\"10.0.0.0/24\",\"10.1.0.0/24\"]: may specify no more than one IP for each IP family, i.e 192.168.0.0/24 and 2001:db8::/64"])]
    #[case(&["x"], vec!["spec.cidrs[0]: Invalid value: \"x\": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"])]
    #[case(&["10.0.0.1/24"], vec!["spec.cidrs[0]: Invalid value: \"10.0.0.1/24\": must not have bits set beyond the prefix length"])]
    #[case(&["2001:DB8::/64"], vec!["spec.cidrs[0]: Invalid value: \"2001:DB8::/64\": must be in canonical form (\"2001:db8::/64\")"])]
    fn cidrs_as_the_apiserver_checks_them(#[case] list: &[&str], #[case] want: Vec<&str>) {
        assert_eq!(messages(spec_errors(&cidr(list))), want);
    }

    #[rstest]
    #[case(&["10.0.0.0/24"], &["10.0.0.0/24", "fd00::/64"], vec![])]
    #[case(&["10.0.0.0/24"], &["10.1.0.0/24"], vec!["spec.cidrs[0]: Invalid value: \"10.1.0.0/24\": field is immutable"])]
    #[case(&["10.0.0.0/24", "fd00::/64"], &["10.0.0.0/24"], vec!["spec.cidrs: Invalid value: [\"10.0.0.0/24\"]: field is immutable"])]
    fn the_cidrs_only_gain_a_family(
        #[case] old: &[&str],
        #[case] new: &[&str],
        #[case] want: Vec<&str>,
    ) {
        assert_eq!(messages(update_errors(&cidr(new), &cidr(old))), want);
    }
}
