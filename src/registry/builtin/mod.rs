//! The built-in kinds kubefake serves: one line per kind, each kind declared in its own file
//! under its group's folder. A kind's resource is built the first time the process needs more
//! than its names (a request for it, a controller's write), not by a server's start, and is
//! then shared by every server (it holds no per-server state).
//!
//! A kind starts from [`kind`], which takes everything Kubernetes publishes about it from the
//! embedded API definitions ([`data`]): names, scope, verbs, short names, categories, storage
//! version hash, OpenAPI definition names, and the verbs of each subresource the kind serves.
//! The kind's file adds what only code can say: its strategy and its subresources' strategies,
//! its Table columns, its field selectors, the objects every cluster starts with.

pub mod data;
pub mod schema;
pub mod typed;

use std::borrow::Cow;
use std::sync::{Arc, LazyLock, OnceLock};

use super::apiextensions::ScaleSubresource;
use super::resource::{
    api_version, Action, ApiResource, NameList, Names, OpenApiDefinition, ResourceBuilder,
    Subresource,
};
use super::strategy::Strategy;
use super::{
    admissionregistration, apiextensions, apiregistration, apps, authentication, authorization,
    autoscaling, batch, certificates, coordination, core, discovery, dra, events, flowcontrol,
    networking, node, policy, rbac, scheduling, storage,
};
use crate::store::GroupResource;

/// Every built-in kind, in discovery order within its group: its names, and the function
/// that builds its resource.
#[rustfmt::skip]
static KINDS: [Builtin; 68] = [
    Builtin::new("", "v1", "bindings", core::pod::bindings_resource),
    Builtin::new("", "v1", "componentstatuses", core::componentstatus::resource),
    Builtin::new("", "v1", "namespaces", core::namespace::resource),
    Builtin::new("", "v1", "configmaps", core::configmap::resource),
    Builtin::new("", "v1", "endpoints", core::endpoints::resource),
    Builtin::new("", "v1", "events", core::event::resource),
    Builtin::new("", "v1", "limitranges", core::limitrange::resource),
    Builtin::new("", "v1", "nodes", core::node::resource),
    Builtin::new("", "v1", "persistentvolumeclaims", core::persistentvolumeclaim::resource),
    Builtin::new("", "v1", "persistentvolumes", core::persistentvolume::resource),
    Builtin::new("", "v1", "pods", core::pod::resource),
    Builtin::new("", "v1", "podtemplates", core::podtemplate::resource),
    Builtin::new("", "v1", "replicationcontrollers", core::replicationcontroller::resource),
    Builtin::new("", "v1", "resourcequotas", core::resourcequota::resource),
    Builtin::new("", "v1", "secrets", core::secret::resource),
    Builtin::new("", "v1", "serviceaccounts", core::serviceaccount::resource),
    Builtin::new("", "v1", "services", core::service::resource),
    Builtin::new("apps", "v1", "controllerrevisions", apps::controllerrevision::resource),
    Builtin::new("apps", "v1", "daemonsets", apps::daemonset::resource),
    Builtin::new("apps", "v1", "deployments", apps::deployment::resource),
    Builtin::new("apps", "v1", "replicasets", apps::replicaset::resource),
    Builtin::new("apps", "v1", "statefulsets", apps::statefulset::resource),
    Builtin::new("events.k8s.io", "v1", "events", events::event::resource).stored_in_group(""),
    Builtin::new("authentication.k8s.io", "v1", "selfsubjectreviews", authentication::selfsubjectreview::resource),
    Builtin::new("authentication.k8s.io", "v1", "tokenreviews", authentication::tokenreview::resource),
    Builtin::new("authorization.k8s.io", "v1", "localsubjectaccessreviews", authorization::localsubjectaccessreview::resource),
    Builtin::new("authorization.k8s.io", "v1", "selfsubjectaccessreviews", authorization::selfsubjectaccessreview::resource),
    Builtin::new("authorization.k8s.io", "v1", "selfsubjectrulesreviews", authorization::selfsubjectrulesreview::resource),
    Builtin::new("authorization.k8s.io", "v1", "subjectaccessreviews", authorization::subjectaccessreview::resource),
    Builtin::new("autoscaling", "v2", "horizontalpodautoscalers", autoscaling::horizontalpodautoscaler::resource),
    Builtin::new("autoscaling", "v1", "horizontalpodautoscalers", autoscaling::horizontalpodautoscaler_v1::resource),
    Builtin::new("batch", "v1", "cronjobs", batch::cronjob::resource),
    Builtin::new("batch", "v1", "jobs", batch::job::resource),
    Builtin::new("certificates.k8s.io", "v1", "certificatesigningrequests", certificates::certificatesigningrequest::resource),
    Builtin::new("networking.k8s.io", "v1", "ingressclasses", networking::ingressclass::resource),
    Builtin::new("networking.k8s.io", "v1", "ingresses", networking::ingress::resource),
    Builtin::new("networking.k8s.io", "v1", "ipaddresses", networking::ipaddress::resource),
    Builtin::new("networking.k8s.io", "v1", "networkpolicies", networking::networkpolicy::resource),
    Builtin::new("networking.k8s.io", "v1", "servicecidrs", networking::servicecidr::resource),
    Builtin::new("policy", "v1", "poddisruptionbudgets", policy::poddisruptionbudget::resource),
    Builtin::new("rbac.authorization.k8s.io", "v1", "clusterrolebindings", rbac::clusterrolebinding::resource),
    Builtin::new("rbac.authorization.k8s.io", "v1", "clusterroles", rbac::clusterrole::resource),
    Builtin::new("rbac.authorization.k8s.io", "v1", "rolebindings", rbac::rolebinding::resource),
    Builtin::new("rbac.authorization.k8s.io", "v1", "roles", rbac::role::resource),
    Builtin::new("storage.k8s.io", "v1", "csidrivers", storage::csidriver::resource),
    Builtin::new("storage.k8s.io", "v1", "csinodes", storage::csinode::resource),
    Builtin::new("storage.k8s.io", "v1", "csistoragecapacities", storage::csistoragecapacity::resource),
    Builtin::new("storage.k8s.io", "v1", "storageclasses", storage::storageclass::resource),
    Builtin::new("storage.k8s.io", "v1", "volumeattachments", storage::volumeattachment::resource),
    Builtin::new("storage.k8s.io", "v1", "volumeattributesclasses", storage::volumeattributesclass::resource),
    Builtin::new("admissionregistration.k8s.io", "v1", "mutatingadmissionpolicies", admissionregistration::mutatingadmissionpolicy::resource),
    Builtin::new("admissionregistration.k8s.io", "v1", "mutatingadmissionpolicybindings", admissionregistration::mutatingadmissionpolicybinding::resource),
    Builtin::new("admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations", admissionregistration::mutatingwebhookconfiguration::resource),
    Builtin::new("admissionregistration.k8s.io", "v1", "validatingadmissionpolicies", admissionregistration::validatingadmissionpolicy::resource),
    Builtin::new("admissionregistration.k8s.io", "v1", "validatingadmissionpolicybindings", admissionregistration::validatingadmissionpolicybinding::resource),
    Builtin::new("admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations", admissionregistration::validatingwebhookconfiguration::resource),
    Builtin::new("apiextensions.k8s.io", "v1", "customresourcedefinitions", apiextensions::crd::resource),
    Builtin::new("apiregistration.k8s.io", "v1", "apiservices", apiregistration::apiservice::resource),
    Builtin::new("scheduling.k8s.io", "v1", "priorityclasses", scheduling::priorityclass::resource),
    Builtin::new("coordination.k8s.io", "v1", "leases", coordination::lease::resource),
    Builtin::new("node.k8s.io", "v1", "runtimeclasses", node::runtimeclass::resource),
    Builtin::new("resource.k8s.io", "v1", "deviceclasses", dra::deviceclass::resource),
    Builtin::new("resource.k8s.io", "v1", "resourceclaims", dra::resourceclaim::resource),
    Builtin::new("resource.k8s.io", "v1", "resourceclaimtemplates", dra::resourceclaimtemplate::resource),
    Builtin::new("resource.k8s.io", "v1", "resourceslices", dra::resourceslice::resource),
    Builtin::new("discovery.k8s.io", "v1", "endpointslices", discovery::endpointslice::resource),
    Builtin::new("flowcontrol.apiserver.k8s.io", "v1", "flowschemas", flowcontrol::flowschema::resource),
    Builtin::new("flowcontrol.apiserver.k8s.io", "v1", "prioritylevelconfigurations", flowcontrol::prioritylevelconfiguration::resource),
];

/// Every built-in resource, built: for what needs them all (a start through the write path,
/// tests). A request path needs only its own, from [`kinds`].
static RESOURCES: LazyLock<Vec<Arc<ApiResource>>> =
    LazyLock::new(|| KINDS.iter().map(|kind| kind.resource().clone()).collect());

/// The built-in kinds, each built when first needed. Their names are known without building
/// them: a server's catalog is made of those, so that a server's start builds none (building
/// all 51 was a third of a debug build's first start, most of it the first run of each kind's
/// own code) and a process builds a kind when a request or a controller's write needs it (a
/// namespace's deletion builds the kinds it holds), or the discovery documents need them all.
/// Whether a group is one of the built-in kinds' (the apiserver serves each from a go-restful
/// web service rooted at `/apis/{group}`, which answers unknown paths below it with a `Status`).
pub fn is_group(group: &str) -> bool {
    kinds().iter().any(|k| k.group() == group)
}

pub fn kinds() -> &'static [Builtin] {
    &KINDS
}

/// The built-in resources, all built (see [`kinds`]).
pub fn resources() -> &'static [Arc<ApiResource>] {
    &RESOURCES
}

/// A built-in kind: its names, and its resource once something needs it.
pub struct Builtin {
    group: &'static str,
    version: &'static str,
    plural: &'static str,
    /// The group of the store table, when another group's (events.k8s.io's Events are core
    /// Events).
    table_group: &'static str,
    build: fn() -> ApiResource,
    built: OnceLock<Arc<ApiResource>>,
    /// The kind's name, looked up once.
    kind: OnceLock<&'static str>,
}

impl Builtin {
    const fn new(
        group: &'static str,
        version: &'static str,
        plural: &'static str,
        build: fn() -> ApiResource,
    ) -> Builtin {
        Builtin {
            group,
            version,
            plural,
            table_group: group,
            build,
            built: OnceLock::new(),
            kind: OnceLock::new(),
        }
    }

    /// Stored in another group's table.
    const fn stored_in_group(mut self, group: &'static str) -> Builtin {
        self.table_group = group;
        self
    }

    /// The API group (`""` for the core group).
    pub fn group(&self) -> &'static str {
        self.group
    }

    /// The served version.
    pub fn version(&self) -> &'static str {
        self.version
    }

    /// The resource's name in paths.
    pub fn plural(&self) -> &'static str {
        self.plural
    }

    /// The kind's name, from the published discovery facts (what manifests and owner
    /// references name, looked up without building the kind).
    pub fn kind(&self) -> &'static str {
        self.kind.get_or_init(|| {
            data::discovery()
                .resource(&api_version(self.group, self.version), self.plural)
                .map_or("", |info| info.kind)
        })
    }

    /// Whether its objects are in the store table `gr`.
    pub fn stores(&self, gr: &GroupResource) -> bool {
        gr.group == self.table_group && gr.resource == self.plural
    }

    /// The resource, built by the first caller of the process.
    pub fn resource(&self) -> &Arc<ApiResource> {
        self.built.get_or_init(|| Arc::new((self.build)()))
    }
}

pub use data::definition_name;

/// A built-in kind, started from its published discovery facts. See the module documentation.
pub struct Kind {
    builder: ResourceBuilder,
    /// The published facts of the kind's subresources.
    subresources: &'static [data::ResourceInfo],
}

/// Starts the resource of a built-in kind.
pub fn kind(group: &str, version: &str, plural: &str, strategy: Arc<dyn Strategy>) -> Kind {
    let group_version = api_version(group, version);
    let published = data::discovery().resources_of(&group_version);
    let own = published.iter().position(|r| r.name == plural);
    let info = own.map(|i| &published[i]);
    if info.is_none() {
        tracing::error!(%group_version, plural, "a built-in kind missing from the API definitions");
    }
    let kind_name = info.map_or("", |i| i.kind);
    let (name, list_name) = info.map_or(("", ""), |i| (i.definition, i.list_definition));
    let schema = Arc::new(schema::LazySchema::builtin(name));
    let strategy = Arc::new(typed::Typed::new(strategy, group_version, kind_name, name));
    let names = Names {
        group,
        version,
        plural,
        kind: kind_name,
    };
    let mut builder = match info {
        Some(info) => published_builder(names, info, strategy),
        None => ResourceBuilder::new(group, version, plural, kind_name, strategy),
    };
    builder = builder.with(|r| r.schema = schema);
    builder = builder.openapi(OpenApiDefinition {
        name: Cow::Borrowed(name),
        list_name: Cow::Borrowed(list_name),
        schema: serde_json::Value::Null,
    });
    Kind {
        builder,
        subresources: own.map_or(&[], |i| data::subresources_after(published, i)),
    }
}

/// The builder of a published kind, given its published names and verbs from the start
/// rather than the defaults [`ResourceBuilder::new`] would derive and this would replace.
fn published_builder(
    names: Names<'_>,
    info: &data::ResourceInfo,
    strategy: Arc<dyn Strategy>,
) -> ResourceBuilder {
    let singular = info.singular_name.to_string();
    let verbs = NameList::Static(info.verbs);
    let builder = ResourceBuilder::named(names, singular, verbs, strategy);
    builder.with(|r| {
        r.namespaced = info.namespaced;
        r.short_names = NameList::Static(info.short_names);
        r.categories = NameList::Static(info.categories);
        if !info.storage_version_hash.is_empty() {
            r.storage_version_hash = info.storage_version_hash.to_string();
        }
    })
}

impl Kind {
    /// The published facts of one of the kind's subresources (`plural/sub`).
    fn subresource_info(&self, sub: &str) -> Option<&'static data::ResourceInfo> {
        self.subresources
            .iter()
            .find(|r| r.name.split_once('/').map(|(_, s)| s) == Some(sub))
    }

    /// The published verbs of one of the kind's subresources.
    fn verbs(&self, sub: &str) -> NameList {
        self.subresource_info(sub)
            .map(|i| NameList::Static(i.verbs))
            .unwrap_or_default()
    }

    /// Serves a part subresource (`status`, `finalize`) written with its own strategy.
    pub fn part(mut self, name: &str, strategy: Arc<dyn Strategy>) -> Self {
        let verbs = self.verbs(name);
        let mut sub = Subresource::part(name, &[], strategy);
        sub.verbs = verbs;
        self.builder = self.builder.subresource(sub);
        self
    }

    /// Serves `scale` over the replicas at these paths.
    pub fn scale(mut self, config: ScaleSubresource) -> Self {
        let verbs = self.verbs("scale");
        let mut sub = Subresource::scale(config);
        sub.verbs = verbs;
        self.builder = self.builder.subresource(sub);
        self
    }

    /// Serves a subresource written as its own code (`pods/binding`, `pods/log`), with the verbs
    /// and the response kind Kubernetes publishes for it.
    pub fn action(mut self, name: &str, action: Arc<dyn Action>) -> Self {
        let info = self.subresource_info(name);
        let mut sub = Subresource::action(name, &[], action);
        if let Some(info) = info {
            sub.verbs = NameList::Static(info.verbs);
            let group = info.group.unwrap_or_default().to_string();
            let version = info.version.unwrap_or_default().to_string();
            sub.response = Some((group, version, info.kind.to_string()));
        }
        self.builder = self.builder.subresource(sub);
        self
    }

    /// Everything else, as [`ResourceBuilder`] offers it.
    pub fn with(mut self, f: impl FnOnce(ResourceBuilder) -> ResourceBuilder) -> Self {
        self.builder = f(self.builder);
        self
    }

    /// The resource.
    pub fn build(self) -> ApiResource {
        self.builder.build()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What a catalog knows of a kind without building it is what building it gives.
    #[test]
    fn every_kind_names_its_resource() {
        for kind in kinds() {
            let res = kind.resource();
            let names = (kind.group(), kind.version(), kind.plural(), kind.kind());
            let built = (&*res.group, &*res.version, &*res.plural, &*res.kind);
            assert_eq!(names, built);
            assert!(kind.stores(&res.gr), "{names:?} is stored in {:?}", res.gr);
            assert!(Arc::ptr_eq(res, kind.resource()), "{names:?} is built once");
        }
        let built: Vec<_> = kinds().iter().map(|k| k.resource().clone()).collect();
        assert!(built
            .iter()
            .zip(resources())
            .all(|(a, b)| Arc::ptr_eq(a, b)));
        assert_eq!(built.len(), resources().len());
    }

    #[test]
    fn every_kind_is_in_the_published_definitions() {
        for res in resources() {
            let gv = res.api_version();
            assert!(
                data::discovery().resource(&gv, &res.plural).is_some(),
                "{gv} {}",
                res.plural
            );
            assert!(!res.openapi.name.is_empty(), "{gv} {}", res.plural);
            for sub in &res.subresources {
                assert!(!sub.verbs.is_empty(), "{gv} {}/{}", res.plural, sub.name);
            }
        }
        assert_eq!(
            definition_name("apps", "v1", "Deployment"),
            Some("io.k8s.api.apps.v1.Deployment")
        );
    }
}
