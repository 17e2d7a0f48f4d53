//! The aggregator's CRD registration (kube-apiserver's `crdregistration` and `autoregister`
//! controllers): every group-version a CRD serves has a local APIService, `<version>.<group>`,
//! labelled `kube-aggregator.kubernetes.io/automanaged: "true"`, with group priority 1000 and
//! version priority 100; it goes once no CRD serves that group-version. Its `Available`
//! condition (`Local`) is the APIService strategy's, as for every local APIService. An
//! APIService of the same name without the label is left alone.

use std::collections::BTreeSet;

use serde_json::{json, Value};

use super::APISERVER_MANAGER;
use crate::context::Context;
use crate::registry::apiextensions::Crd;
use crate::registry::apiregistration::apiservice::{AUTOMANAGED_LABEL, GROUP};
use crate::registry::object_meta::meta_str;
use crate::state::State;
use crate::store::GroupResource;

/// The label value of the APIServices kept in step with the CRDs.
const CONTINUOUSLY: &str = "true";

/// Brings the CRDs' APIServices in step with every CRD's served versions.
pub async fn sync(state: &State, ctx: &Context) {
    let Some(res) = state.registry().resolve(GROUP, "v1", "apiservices") else {
        return;
    };
    let ctx = ctx
        .for_controller("crd-registration")
        .managed_by(APISERVER_MANAGER);
    let snap = state.store.snapshot();
    let wanted: BTreeSet<(String, String)> = snap
        .list(&super::crd::crds_gr(), None)
        .filter_map(|(_, o)| Crd::from_value(&o.value()))
        .flat_map(|crd| {
            let group = crd.spec.group.clone();
            crd.spec
                .versions
                .iter()
                .filter(|v| v.served)
                .map(move |v| (group.clone(), v.name.clone()))
                .collect::<Vec<_>>()
        })
        .collect();
    let apiservices = GroupResource::new(GROUP, "apiservices");
    let mut present = BTreeSet::new();
    let mut stale = Vec::new();
    for (key, obj) in snap.list(&apiservices, None) {
        let tree = obj.value();
        present.insert(key.name.to_string());
        let managed = tree["metadata"]["labels"][AUTOMANAGED_LABEL] == CONTINUOUSLY;
        let gv = (
            tree["spec"]["group"].as_str().unwrap_or("").to_string(),
            tree["spec"]["version"].as_str().unwrap_or("").to_string(),
        );
        if managed && !wanted.contains(&gv) {
            stale.push((key.name.to_string(), meta_str(&tree, "uid").to_string()));
        }
    }
    drop(snap);
    for (group, version) in &wanted {
        if !present.contains(&format!("{version}.{group}")) {
            super::create_logged(state, &ctx, &res, "", api_service(group, version)).await;
        }
    }
    for (name, uid) in stale {
        super::delete_logged(state, &ctx, &res, &name, uid).await;
    }
}

/// The APIService of a CRD group-version (`crdregistration`'s `handleVersionUpdate`).
fn api_service(group: &str, version: &str) -> Value {
    json!({"apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService",
        "metadata": {"name": format!("{version}.{group}"),
            "labels": {AUTOMANAGED_LABEL: CONTINUOUSLY}},
        "spec": {"group": group, "version": version,
            "groupPriorityMinimum": 1000, "versionPriority": 100}})
}
