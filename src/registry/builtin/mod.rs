//! The built-in kinds kubefake serves: one line per kind, each kind declared in its own file
//! under its group's folder. The resources are built once per process and shared by every
//! server (they hold no per-server state).
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
use std::sync::{Arc, LazyLock};

use super::apiextensions::ScaleSubresource;
use super::resource::{
    api_version, Action, ApiResource, NameList, Names, OpenApiDefinition, ResourceBuilder,
    Subresource,
};
use super::strategy::Strategy;
use super::{
    admissionregistration, apiextensions, apiregistration, apps, authentication, authorization,
    autoscaling, batch, coordination, core, discovery, events, networking, policy, rbac,
    scheduling, storage,
};

/// Every built-in kind, in discovery order within its group.
#[rustfmt::skip]
const KINDS: &[fn() -> ApiResource] = &[
    core::namespace::resource,
    core::configmap::resource,
    core::endpoints::resource,
    core::event::resource,
    core::limitrange::resource,
    core::node::resource,
    core::persistentvolumeclaim::resource,
    core::persistentvolume::resource,
    core::pod::resource,
    core::podtemplate::resource,
    core::replicationcontroller::resource,
    core::resourcequota::resource,
    core::secret::resource,
    core::serviceaccount::resource,
    core::service::resource,
    apps::controllerrevision::resource,
    apps::daemonset::resource,
    apps::deployment::resource,
    apps::replicaset::resource,
    apps::statefulset::resource,
    events::event::resource,
    authentication::selfsubjectreview::resource,
    authentication::tokenreview::resource,
    authorization::localsubjectaccessreview::resource,
    authorization::selfsubjectaccessreview::resource,
    authorization::selfsubjectrulesreview::resource,
    authorization::subjectaccessreview::resource,
    autoscaling::horizontalpodautoscaler::resource,
    autoscaling::horizontalpodautoscaler_v1::resource,
    batch::cronjob::resource,
    batch::job::resource,
    networking::ingressclass::resource,
    networking::ingress::resource,
    networking::networkpolicy::resource,
    policy::poddisruptionbudget::resource,
    rbac::clusterrolebinding::resource,
    rbac::clusterrole::resource,
    rbac::rolebinding::resource,
    rbac::role::resource,
    storage::storageclass::resource,
    admissionregistration::mutatingadmissionpolicy::resource,
    admissionregistration::mutatingadmissionpolicybinding::resource,
    admissionregistration::mutatingwebhookconfiguration::resource,
    admissionregistration::validatingadmissionpolicy::resource,
    admissionregistration::validatingadmissionpolicybinding::resource,
    admissionregistration::validatingwebhookconfiguration::resource,
    apiextensions::crd::resource,
    apiregistration::apiservice::resource,
    scheduling::priorityclass::resource,
    coordination::lease::resource,
    discovery::endpointslice::resource,
];

static RESOURCES: LazyLock<Vec<Arc<ApiResource>>> =
    LazyLock::new(|| KINDS.iter().map(|kind| Arc::new(kind())).collect());

/// The built-in resources.
pub fn resources() -> &'static [Arc<ApiResource>] {
    &RESOURCES
}

/// Whether `kinds` are exactly the built-in resources (the same `Arc`s, in order): what a
/// server serves before any CRD or kind of a test's own, whose catalog's documents the
/// servers of a process can share.
pub fn is_builtin_set(kinds: &[Arc<ApiResource>]) -> bool {
    let builtin = resources();
    kinds.len() == builtin.len() && kinds.iter().zip(builtin).all(|(a, b)| Arc::ptr_eq(a, b))
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
    use rstest::rstest;

    /// Only the built-in resources themselves, in their order, share the process's rendering.
    #[rstest]
    #[case::the_builtin_set(resources().to_vec(), true)]
    #[case::nothing(Vec::new(), false)]
    #[case::one_kind_fewer(resources()[1..].to_vec(), false)]
    #[case::one_kind_more(resources().iter().chain(&resources()[..1]).cloned().collect(), false)]
    #[case::reordered(resources().iter().rev().cloned().collect(), false)]
    #[case::equal_but_rebuilt(
        std::iter::once(Arc::new(KINDS[0]())).chain(resources()[1..].iter().cloned()).collect(),
        false
    )]
    fn is_builtin_set_knows_the_builtin_arcs(
        #[case] kinds: Vec<Arc<ApiResource>>,
        #[case] expected: bool,
    ) {
        assert_eq!(is_builtin_set(&kinds), expected);
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
