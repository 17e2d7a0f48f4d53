//! The resource registry: every (group, version, resource) kubefake serves, with the names,
//! scope, verbs, subresources and strategy of each.
//!
//! A [`Registry`] is immutable. When a CRD is established, changed or deleted a new one is built
//! from the stored CRDs and swapped in atomically; requests only read the current one. Its
//! discovery and OpenAPI documents are rendered once, when first asked for: a server start, or a
//! run of CRD changes, renders nothing that no client reads. Likewise a registry is made of the
//! built-in kinds' names ([`Served`]): a kind's resource is built when something first needs
//! more than its names (a request for it, a controller's write, or the discovery documents,
//! which describe every one), not by a server's start.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, OnceLock};

use crate::discovery::documents::Documents;
use crate::discovery::openapi::OpenApi;
use crate::discovery::GIT_VERSION;
use crate::registry::builtin::Builtin;
pub use crate::registry::resource::{storage_version_hash, ApiResource};
use crate::store::GroupResource;

/// Orders versions the way Kubernetes prefers them: GA before beta before alpha, higher numbers
/// first, anything else after in lexical order.
pub fn version_priority(a: &str, b: &str) -> std::cmp::Ordering {
    fn parse(v: &str) -> Option<(u8, u64, u64)> {
        let rest = v.strip_prefix('v')?;
        let digits = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let major: u64 = rest[..digits].parse().ok()?;
        let tail = &rest[digits..];
        if tail.is_empty() {
            return Some((3, major, 0));
        }
        let (class, num) = if let Some(n) = tail.strip_prefix("beta") {
            (2, n)
        } else if let Some(n) = tail.strip_prefix("alpha") {
            (1, n)
        } else {
            return None;
        };
        Some((class, major, num.parse().ok()?))
    }
    match (parse(a), parse(b)) {
        (Some(x), Some(y)) => y.cmp(&x),
        (Some(_), None) => std::cmp::Ordering::Less,
        (None, Some(_)) => std::cmp::Ordering::Greater,
        (None, None) => a.cmp(b),
    }
}

/// A served group and its versions, preferred first.
#[derive(Debug, Clone)]
pub struct ApiGroup {
    /// Group name.
    pub name: String,
    /// Served versions, preferred first.
    pub versions: Vec<String>,
}

/// An immutable view of everything served. See the module documentation.
pub struct Registry {
    /// Where resources are looked up.
    index: Arc<Index>,
    /// The address `/api` names.
    server_address: String,
    /// Whether this is the built-in catalog alone, whose index and documents every server of
    /// the process shares (but for `/api`).
    builtin_only: bool,
    /// Discovery documents, rendered on first use.
    documents: OnceLock<Documents>,
    /// OpenAPI documents, rendered on first use.
    openapi: OnceLock<Arc<OpenApi>>,
}

/// A served resource: a built-in kind, whose resource the process builds when something first
/// needs more than its names, or a resource built already (a CRD's version, a test's kind).
#[derive(Clone)]
pub enum Served {
    /// A built-in kind, built on first use.
    Builtin(&'static Builtin),
    /// A resource built as such.
    Resource(Arc<ApiResource>),
}

impl Served {
    /// The API group (`""` for the core group).
    pub fn group(&self) -> &str {
        match self {
            Served::Builtin(b) => b.group(),
            Served::Resource(r) => &r.group,
        }
    }

    /// The served version.
    pub fn version(&self) -> &str {
        match self {
            Served::Builtin(b) => b.version(),
            Served::Resource(r) => &r.version,
        }
    }

    /// The resource's name in paths.
    pub fn plural(&self) -> &str {
        match self {
            Served::Builtin(b) => b.plural(),
            Served::Resource(r) => &r.plural,
        }
    }

    /// The kind's name.
    pub fn kind(&self) -> &str {
        match self {
            Served::Builtin(b) => b.kind(),
            Served::Resource(r) => &r.kind,
        }
    }

    /// Whether its objects are in the store table `gr`.
    pub fn stores(&self, gr: &GroupResource) -> bool {
        match self {
            Served::Builtin(b) => b.stores(gr),
            Served::Resource(r) => r.gr == *gr,
        }
    }

    /// The resource (a built-in kind's built on first use).
    pub fn resource(&self) -> &Arc<ApiResource> {
        match self {
            Served::Builtin(b) => b.resource(),
            Served::Resource(r) => r,
        }
    }

    /// The resource, when it is not a built-in kind's (a CRD's version, a test's kind).
    pub fn as_resource(&self) -> Option<&Arc<ApiResource>> {
        match self {
            Served::Builtin(_) => None,
            Served::Resource(r) => Some(r),
        }
    }
}

/// A level of [`Index::by_gvr`]. Every request resolves its resource here, three lookups by
/// name: foldhash (seeded per process) hashes those short names several times faster than the
/// standard SipHash.
type ByName<V> = HashMap<String, V, foldhash::fast::RandomState>;

/// What a registry looks its resources up in: made from the resources' names alone, so the
/// built-in catalog's is built once per process, without building a kind, and shared by every
/// server's registry until a CRD comes.
struct Index {
    /// group -> version -> plural: nested so that a request looks its resource up by `&str`
    /// without allocating.
    by_gvr: ByName<ByName<ByName<Served>>>,
    /// Groups under `/apis`, in discovery order.
    groups: Vec<ApiGroup>,
    /// Resources per group-version, in discovery order.
    by_group_version: BTreeMap<(String, String), Vec<Served>>,
}

impl Registry {
    /// Builds the registry for the built-in kinds, then `kinds` (a test's own, served as
    /// built-in ones), then the custom resources of the established CRDs. Groups are listed
    /// built-ins first (in the order of their resources), then custom groups by name;
    /// versions within a group by Kubernetes version priority.
    pub fn build(
        kinds: &[Arc<ApiResource>],
        custom: Vec<Arc<ApiResource>>,
        server_address: &str,
    ) -> Registry {
        let builtin_only = custom.is_empty() && kinds.is_empty();
        let builtin = || {
            let builtin = crate::registry::builtin::kinds()
                .iter()
                .map(Served::Builtin);
            let kinds = kinds.iter().cloned().map(Served::Resource);
            builtin.chain(kinds).collect::<Vec<_>>()
        };
        let index = if builtin_only {
            static BUILTIN: OnceLock<Arc<Index>> = OnceLock::new();
            let build = || Arc::new(Index::build(builtin(), Vec::new()));
            BUILTIN.get_or_init(build).clone()
        } else {
            Arc::new(Index::build(builtin(), custom))
        };
        Registry {
            index,
            server_address: server_address.to_string(),
            builtin_only,
            documents: OnceLock::new(),
            openapi: OnceLock::new(),
        }
    }

    /// Groups under `/apis`, in discovery order.
    pub fn groups(&self) -> &[ApiGroup] {
        &self.index.groups
    }

    /// Resources per group-version, in discovery order, every built-in kind built (for the
    /// documents, which describe every one): a copy, made per call.
    pub(crate) fn all_built_by_group_version(
        &self,
    ) -> BTreeMap<(String, String), Vec<Arc<ApiResource>>> {
        let built = |list: &Vec<Served>| list.iter().map(|s| s.resource().clone()).collect();
        self.index
            .by_group_version
            .iter()
            .map(|(gv, list)| (gv.clone(), built(list)))
            .collect()
    }
}

impl Index {
    /// See [`Registry::build`].
    fn build(builtin: Vec<Served>, custom: Vec<Arc<ApiResource>>) -> Index {
        let mut groups: Vec<ApiGroup> = Vec::new();
        let mut custom_groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for r in builtin.iter().filter(|r| !r.group().is_empty()) {
            let (group, version) = (r.group(), r.version());
            match groups.iter_mut().find(|g| g.name == group) {
                Some(g) if !g.versions.iter().any(|v| v == version) => {
                    g.versions.push(version.to_string())
                }
                Some(_) => {}
                None => groups.push(ApiGroup {
                    name: group.to_string(),
                    versions: vec![version.to_string()],
                }),
            }
        }
        for r in &custom {
            if groups.iter().any(|g| g.name == r.group) {
                continue;
            }
            let versions = custom_groups.entry(r.group.clone()).or_default();
            if !versions.contains(&r.version) {
                versions.push(r.version.clone());
            }
        }
        for (name, versions) in custom_groups {
            groups.push(ApiGroup { name, versions });
        }
        for g in &mut groups {
            g.versions.sort_by(|a, b| version_priority(a, b));
        }

        // Sized up front, as each run's resources below: growing a map hashes its keys again.
        let mut by_gvr: ByName<ByName<ByName<Served>>> =
            ByName::with_capacity_and_hasher(groups.len() + 1, Default::default());
        let mut by_group_version: BTreeMap<(String, String), Vec<Served>> = BTreeMap::new();
        let all: Vec<Served> = builtin
            .into_iter()
            .chain(custom.into_iter().map(Served::Resource))
            .collect();
        // Resources of a group-version are mostly listed together: their group and version
        // are looked up once per run, not once per resource (hashing is most of the index's
        // cost in a debug build, every test's first server).
        for run in all.chunk_by(|a, b| a.group() == b.group() && a.version() == b.version()) {
            let (group, version) = (run[0].group(), run[0].version());
            let plurals = by_gvr
                .entry(group.to_string())
                .or_default()
                .entry(version.to_string())
                .or_default();
            plurals.reserve(run.len());
            for r in run {
                plurals
                    .entry(r.plural().to_string())
                    .or_insert_with(|| r.clone());
            }
            by_group_version
                .entry((group.to_string(), version.to_string()))
                .or_default()
                .extend(run.iter().cloned());
        }
        for list in by_group_version.values_mut() {
            list.sort_by(|a, b| a.plural().cmp(b.plural()));
        }
        Index {
            by_gvr,
            groups,
            by_group_version,
        }
    }
}

impl Registry {
    /// The discovery documents, rendered on first use. Every server of the process serves the
    /// same built-in catalog until a CRD comes: the first to be asked renders its documents,
    /// the others share them, each with its own `/api`.
    pub fn documents(&self) -> &Documents {
        self.documents.get_or_init(|| {
            let render =
                || Documents::render(&self.index.groups, &self.all_built_by_group_version());
            if self.builtin_only {
                static BUILTIN: OnceLock<Documents> = OnceLock::new();
                BUILTIN.get_or_init(render).for_server(&self.server_address)
            } else {
                render().for_server(&self.server_address)
            }
        })
    }

    /// The OpenAPI documents, rendered on first use and shared as [`Registry::documents`] are.
    pub fn openapi(&self) -> &Arc<OpenApi> {
        self.openapi.get_or_init(|| {
            let render = || {
                Arc::new(OpenApi::render(
                    &self.all_built_by_group_version(),
                    GIT_VERSION,
                ))
            };
            if self.builtin_only {
                static BUILTIN: OnceLock<Arc<OpenApi>> = OnceLock::new();
                BUILTIN.get_or_init(render).clone()
            } else {
                render()
            }
        })
    }

    /// The resource a request names, if served.
    pub fn resolve(&self, group: &str, version: &str, resource: &str) -> Option<Arc<ApiResource>> {
        let served = self.index.by_gvr.get(group)?.get(version)?.get(resource)?;
        Some(served.resource().clone())
    }

    /// Every served (group, version, resource), unbuilt: what looks for a resource by its
    /// names builds only the one it finds.
    pub fn served(&self) -> impl Iterator<Item = &Served> {
        self.index
            .by_gvr
            .values()
            .flat_map(ByName::values)
            .flat_map(ByName::values)
    }

    /// Every served (group, version, resource), built (for work that needs them all).
    pub fn resources(&self) -> impl Iterator<Item = &Arc<ApiResource>> {
        self.served().map(Served::resource)
    }

    /// The resource serving a kind in a group-version (for manifests, which name kinds).
    pub fn by_kind(&self, group: &str, version: &str, kind: &str) -> Option<Arc<ApiResource>> {
        self.index
            .by_group_version
            .get(&(group.to_string(), version.to_string()))
            .and_then(|list| list.iter().find(|r| r.kind() == kind))
            .map(|r| r.resource().clone())
    }

    /// Whether a group-version is served at all (for 404 vs. 405 decisions).
    pub fn serves_group_version(&self, group: &str, version: &str) -> bool {
        self.index
            .by_group_version
            .contains_key(&(group.to_string(), version.to_string()))
    }

    /// The resource behind a store table (its storage version when served), for controllers
    /// that find objects by table.
    pub fn by_group_resource(&self, gr: &GroupResource) -> Option<Arc<ApiResource>> {
        self.served()
            .filter(|r| r.stores(gr))
            .map(Served::resource)
            .max_by_key(|r| table_owner_rank(r))
            .cloned()
    }

    /// One served version of each resource (its storage version when served), for work that
    /// spans every resource such as namespace cleanup.
    pub fn each_resource(&self) -> Vec<Arc<ApiResource>> {
        let mut seen: HashMap<&GroupResource, Arc<ApiResource>> = HashMap::new();
        for r in self.resources() {
            let replace = seen
                .get(&r.gr)
                .is_none_or(|cur| table_owner_rank(r) > table_owner_rank(cur));
            if replace {
                seen.insert(&r.gr, r.clone());
            }
        }
        let mut out: Vec<_> = seen.into_values().collect();
        out.sort_by(|a, b| a.gr.cmp(&b.gr));
        out
    }
}

/// Which of the resources sharing a store table speaks for it: the one whose group owns the
/// table (core Events, not events.k8s.io's view of them), in its storage version, then the
/// lowest version name, so the choice never depends on hash order.
fn table_owner_rank(r: &ApiResource) -> (bool, bool, std::cmp::Reverse<&str>) {
    (
        r.group == r.gr.group,
        r.version == r.storage_version,
        std::cmp::Reverse(r.version.as_str()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shared_tables_speak_through_their_owner() {
        let registry = Registry::build(&[], Vec::new(), "x");
        let events = registry
            .by_group_resource(&GroupResource::new("", "events"))
            .expect("served");
        assert_eq!((events.group.as_str(), events.version.as_str()), ("", "v1"));
        let each = registry.each_resource();
        let tables = each.iter().filter(|r| r.gr == events.gr).count();
        assert_eq!(tables, 1);
        assert_eq!(
            each.iter()
                .find(|r| r.gr == events.gr)
                .map(|r| r.group.as_str()),
            Some("")
        );
    }

    #[test]
    fn kube_aware_version_order() {
        let mut v = vec![
            "v1alpha1", "v1beta2", "foo", "v2", "v1", "v1beta1", "v10", "v2alpha1",
        ];
        v.sort_by(|a, b| version_priority(a, b));
        assert_eq!(
            v,
            ["v10", "v2", "v1", "v1beta2", "v1beta1", "v2alpha1", "v1alpha1", "foo"]
        );
    }
}
