//! The IPAddress objects of the Services' cluster IPs, as the apiserver's IP allocator keeps
//! them since MultiCIDRServiceAllocator (locked on in 1.36): one per allocated IP, named by the
//! IP, labelled with its family and `ipallocator.k8s.io` as its manager, its `parentRef` the
//! Service; gone when the Service lets the IP go. The apiserver's own work, under envtest too.
//!
//! Deliberate difference: the apiserver creates the IPAddress before it stores the Service
//! (the IPAddress is the allocation); kubefake allocates from what the store holds in the
//! Service's write (see [`crate::registry::core::service_alloc`]) and writes the IPAddress
//! right after it, within the same request.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{json, Value};

use super::APISERVER_MANAGER;
use crate::context::Context;
use crate::registry::core::service_alloc::{family_of, DEFAULT_SERVICE_CIDR};
use crate::registry::networking::servicecidr;
use crate::registry::object_meta::meta_str;
use crate::registry::store::{self as rest, Target, UpdateSource};
use crate::state::State;
use crate::store::{GroupResource, ObjectKey, StoredObject};

/// The label naming the allocator that manages an IPAddress.
const MANAGED_BY: &str = "ipaddress.kubernetes.io/managed-by";
/// The allocator's name there.
const ALLOCATOR: &str = "ipallocator.k8s.io";
/// The label with the address's family.
const FAMILY: &str = "ipaddress.kubernetes.io/ip-family";

/// The IPAddresses table.
fn addresses_gr() -> GroupResource {
    GroupResource::new("networking.k8s.io", "ipaddresses")
}

/// The IPAddress the allocator writes for one IP of a Service.
fn address(ip: &str, service: &ObjectKey) -> Value {
    json!({"apiVersion": "networking.k8s.io/v1", "kind": "IPAddress",
        "metadata": {"name": ip, "labels": {FAMILY: family_of(ip), MANAGED_BY: ALLOCATOR}},
        "spec": {"parentRef": {"resource": "services", "namespace": service.namespace,
            "name": service.name}}})
}

/// The cluster IPs a stored Service holds.
fn held(svc: &Value) -> BTreeSet<String> {
    let ips = svc["spec"]["clusterIPs"].as_array().into_iter().flatten();
    ips.filter_map(Value::as_str)
        .filter(|ip| !ip.is_empty() && *ip != "None")
        .map(str::to_string)
        .collect()
}

/// Brings the IPAddresses of one Service (created, changed or gone) in step with its IPs.
pub async fn reconcile(state: &State, ctx: &Context, service: &ObjectKey) {
    let Some(res) = state.registry().by_group_resource(&addresses_gr()) else {
        return;
    };
    let ctx = ctx
        .for_controller("ipallocator")
        .managed_by(APISERVER_MANAGER);
    let snapshot = state.store.snapshot();
    let wanted = snapshot
        .get(&GroupResource::new("", "services"), service)
        .map_or_else(BTreeSet::new, |svc| held(&svc.value()));
    // A Service's cluster IPs do not change while it keeps any (they are immutable but for
    // going with the type ExternalName), so its own addresses are looked up by name; only a
    // Service that went, or holds none, has its addresses looked for among them all.
    let candidates: Vec<(String, Arc<StoredObject>)> = if wanted.is_empty() {
        let all = snapshot.list(&addresses_gr(), None);
        all.map(|(key, obj)| (key.name.to_string(), obj.clone()))
            .collect()
    } else {
        let by_name = |ip: &String| snapshot.get(&addresses_gr(), &ObjectKey::new("", ip.as_str()));
        wanted
            .iter()
            .filter_map(|ip| Some((ip.clone(), by_name(ip)?)))
            .collect()
    };
    let mut present = BTreeSet::new();
    let mut stale = Vec::new();
    for (name, obj) in candidates {
        let obj = obj.value();
        let parent = &obj["spec"]["parentRef"];
        let ours = parent["resource"] == "services"
            && parent["namespace"] == service.namespace.as_str()
            && parent["name"] == service.name.as_str();
        let allocated = obj["metadata"]["labels"][MANAGED_BY] == ALLOCATOR;
        let wanted_here = wanted.contains(name.as_str());
        match ours {
            true if wanted_here => {
                present.insert(name);
            }
            true if allocated => stale.push((name, meta_str(&obj, "uid").to_string())),
            // Another Service's address of an IP it let go, written late (its reconcile
            // raced its deletion): the apiserver's repair loop would release it.
            false if allocated && wanted_here && !parent_holds(&snapshot, parent, &name) => {
                stale.push((name, meta_str(&obj, "uid").to_string()));
            }
            _ => {}
        }
    }
    drop(snapshot);
    for (name, uid) in stale {
        super::delete_logged(state, &ctx, &res, &name, uid).await;
    }
    for ip in wanted.difference(&present) {
        super::create_logged(state, &ctx, &res, "", address(ip, service)).await;
    }
}

/// Whether the Service an IPAddress names still holds its IP.
fn parent_holds(snapshot: &crate::store::Snapshot, parent: &Value, ip: &str) -> bool {
    let key = ObjectKey::new(
        parent["namespace"].as_str().unwrap_or(""),
        parent["name"].as_str().unwrap_or(""),
    );
    snapshot
        .get(&GroupResource::new("", "services"), &key)
        .is_some_and(|svc| held(&svc.value()).contains(ip))
}

/// The apiserver's default-servicecidr controller: the default ServiceCIDR exists (made of
/// `--service-cluster-ip-range`) and is Ready.
pub async fn default_service_cidr(state: &State, ctx: &Context) {
    let gr = GroupResource::new("networking.k8s.io", "servicecidrs");
    let Some(res) = state.registry().by_group_resource(&gr) else {
        return;
    };
    let ctx = ctx
        .for_controller("default-servicecidr-controller")
        .managed_by(APISERVER_MANAGER);
    let key = ObjectKey::new("", DEFAULT_SERVICE_CIDR);
    match state.store.snapshot().get(&gr, &key) {
        None => {
            let obj = servicecidr::default_service_cidr(&state.options.service_cidr);
            super::create_logged(state, &ctx, &res, "", obj).await;
        }
        // `syncStatus` leaves a marked one, or one being deleted, alone.
        Some(current) => {
            let current = current.value();
            let marked = current["status"]["conditions"].as_array().is_some_and(|c| {
                c.iter()
                    .any(|c| c["type"] == "Ready" && c["status"] != "Unknown")
            });
            if marked || !current["metadata"]["deletionTimestamp"].is_null() {
                return;
            }
        }
    }
    let Some(status) = res.subresource("status").cloned() else {
        return;
    };
    let mark = |current: &Value| {
        let mut out = current.clone();
        out["status"] = servicecidr::ready_status();
        Ok(out)
    };
    let marked = rest::update(
        state,
        &ctx,
        &res,
        "",
        DEFAULT_SERVICE_CIDR,
        Target::Part(status),
        UpdateSource::Patch(&mark),
    )
    .await;
    if let Err(e) = marked {
        tracing::warn!(error = %e, "marking the default ServiceCIDR Ready");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_a_service_holds() {
        let svc = json!({"spec": {"clusterIPs": ["10.0.0.7", "fd00::7"]}});
        assert_eq!(held(&svc).len(), 2);
        assert!(held(&json!({"spec": {"clusterIPs": ["None"]}})).is_empty());
        assert!(held(&json!({"spec": {"type": "ExternalName"}})).is_empty());
        let written = address("10.0.0.7", &ObjectKey::new("default", "web"));
        assert_eq!(
            written["metadata"]["labels"],
            json!({FAMILY: "IPv4", MANAGED_BY: ALLOCATOR})
        );
        assert_eq!(written["spec"]["parentRef"]["resource"], "services");
    }
}
