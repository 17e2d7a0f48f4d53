//! The resource registry: every (group, version, resource) kubefake serves, with the names,
//! scope, verbs, subresources and strategy of each.
//!
//! A [`Registry`] is immutable. When a CRD is established, changed or deleted a new one is built
//! from the stored CRDs (with its discovery documents rendered once) and swapped in atomically;
//! requests only read the current one.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use base64::Engine;
use sha2::{Digest, Sha256};

use super::documents::Documents;
use crate::apiextensions::{self, Crd, ScaleSubresource, Version};
use crate::cel::Rules;
use crate::schema::Schema;
use crate::store::{selector, GroupResource};
use crate::strategy::builtin::{CrdStrategy, NamespaceStrategy};
use crate::strategy::custom_resource::CustomResourceStrategy;
use crate::strategy::Strategy;

/// Verbs of a custom resource, in the order the apiserver lists them.
const CR_VERBS: &[&str] = &[
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "create",
    "update",
    "watch",
];
/// Verbs of a custom resource whose CRD is being deleted.
const CR_TERMINATING_VERBS: &[&str] = &["delete", "deletecollection", "get", "list", "watch"];

/// One served resource in one version.
pub struct ApiResource {
    /// API group (empty for core).
    pub group: String,
    /// API version.
    pub version: String,
    /// Plural, the URL segment.
    pub plural: String,
    /// Singular name.
    pub singular: String,
    /// Kind of objects.
    pub kind: String,
    /// Kind of lists.
    pub list_kind: String,
    /// Namespaced or cluster-scoped.
    pub namespaced: bool,
    /// Short names for kubectl.
    pub short_names: Vec<String>,
    /// Categories (`all`, ...).
    pub categories: Vec<String>,
    /// Verbs allowed on the main resource.
    pub verbs: &'static [&'static str],
    /// Whether `/status` is served.
    pub status_subresource: bool,
    /// `/scale` configuration, when served.
    pub scale: Option<ScaleSubresource>,
    /// Whether `/finalize` is served (namespaces).
    pub finalize_subresource: bool,
    /// The version objects are stored in; responses in other versions rewrite `apiVersion`.
    pub storage_version: String,
    /// Where objects live in the store (shared by every version).
    pub gr: GroupResource,
    /// Field names usable in `fieldSelector`.
    pub field_selectors: &'static [&'static str],
    /// How an unsupported `fieldSelector` field is worded (core kinds differ from the rest).
    pub unsupported_field: fn(&str, &[&str]) -> String,
    /// Per-resource behaviour.
    pub strategy: Arc<dyn Strategy>,
    /// The CRD this resource comes from (none for built-ins).
    pub crd: Option<Arc<Crd>>,
    /// `storageVersionHash` published in discovery.
    pub storage_version_hash: String,
    /// The compiled structural schema of a custom resource version.
    pub schema: Option<Arc<Schema>>,
    /// Its compiled `x-kubernetes-validations` rules, if any.
    pub rules: Option<Arc<Rules>>,
}

impl ApiResource {
    /// `group/version`, or just `version` for core.
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// Whether the resource allows `verb`.
    pub fn allows(&self, verb: &str) -> bool {
        self.verbs.contains(&verb)
    }

    /// Whether the CRD behind it is being deleted.
    pub fn terminating(&self) -> bool {
        self.crd.as_ref().is_some_and(|c| c.terminating)
    }
}

/// `base64(sha256("group/version/kind")[:8])`, as the apiserver computes storageVersionHash.
pub fn storage_version_hash(group: &str, version: &str, kind: &str) -> String {
    let digest = Sha256::digest(format!("{group}/{version}/{kind}").as_bytes());
    base64::engine::general_purpose::STANDARD.encode(&digest[..8])
}

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
    /// group -> version -> plural: nested so that a request looks its resource up by `&str`
    /// without allocating.
    by_gvr: HashMap<String, HashMap<String, HashMap<String, Arc<ApiResource>>>>,
    /// Groups under `/apis`, in discovery order.
    pub groups: Vec<ApiGroup>,
    /// Resources per group-version, in discovery order.
    pub by_group_version: BTreeMap<(String, String), Vec<Arc<ApiResource>>>,
    /// Discovery documents, rendered once.
    pub documents: Documents,
}

impl Registry {
    /// Builds the registry for the built-in resources plus every established CRD.
    pub fn build(crds: &[Arc<Crd>], server_address: &str, previous: Option<&Registry>) -> Registry {
        let mut resources: Vec<Arc<ApiResource>> = builtin_resources();
        let mut crd_groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for crd in crds.iter().filter(|c| c.established) {
            let names = &crd.accepted_names;
            let storage_version = crd.storage_version().to_string();
            for v in crd.spec.versions.iter().filter(|v| v.served) {
                let subresources = v.subresources.clone().unwrap_or_default();
                let status = subresources.status.is_some();
                let (schema, rules) = compiled_schema(previous, crd, v);
                resources.push(Arc::new(ApiResource {
                    group: crd.spec.group.clone(),
                    version: v.name.clone(),
                    plural: names.plural.clone(),
                    singular: names.singular.clone(),
                    kind: names.kind.clone(),
                    list_kind: names.list_kind.clone(),
                    namespaced: crd.namespaced(),
                    short_names: names.short_names.clone(),
                    categories: names.categories.clone(),
                    verbs: if crd.terminating {
                        CR_TERMINATING_VERBS
                    } else {
                        CR_VERBS
                    },
                    status_subresource: status,
                    scale: subresources.scale.clone(),
                    finalize_subresource: false,
                    storage_version: storage_version.clone(),
                    gr: GroupResource::new(&crd.spec.group, &names.plural),
                    field_selectors: &["metadata.name", "metadata.namespace"],
                    unsupported_field: selector::generic_unsupported_field,
                    strategy: Arc::new(CustomResourceStrategy {
                        kind: names.kind.clone(),
                        version: v.name.clone(),
                        status_enabled: status,
                        scale: subresources.scale.clone(),
                        schema: schema.clone(),
                        rules: rules.clone(),
                        preserve_unknown_fields: crd.spec.preserve_unknown_fields == Some(true),
                    }),
                    crd: Some(crd.clone()),
                    storage_version_hash: storage_version_hash(
                        &crd.spec.group,
                        &storage_version,
                        &names.kind,
                    ),
                    schema,
                    rules,
                }));
                let versions = crd_groups.entry(crd.spec.group.clone()).or_default();
                if !versions.contains(&v.name) {
                    versions.push(v.name.clone());
                }
            }
        }

        let mut groups = vec![ApiGroup {
            name: apiextensions::GROUP.to_string(),
            versions: vec!["v1".to_string()],
        }];
        for (name, mut versions) in crd_groups {
            if name == apiextensions::GROUP {
                continue;
            }
            versions.sort_by(|a, b| version_priority(a, b));
            groups.push(ApiGroup { name, versions });
        }

        let mut by_gvr: HashMap<String, HashMap<String, HashMap<String, Arc<ApiResource>>>> =
            HashMap::new();
        let mut by_group_version: BTreeMap<(String, String), Vec<Arc<ApiResource>>> =
            BTreeMap::new();
        for r in resources {
            by_gvr
                .entry(r.group.clone())
                .or_default()
                .entry(r.version.clone())
                .or_default()
                .entry(r.plural.clone())
                .or_insert_with(|| r.clone());
            by_group_version
                .entry((r.group.clone(), r.version.clone()))
                .or_default()
                .push(r);
        }
        for list in by_group_version.values_mut() {
            list.sort_by(|a, b| a.plural.cmp(&b.plural));
        }
        let documents = Documents::render(&groups, &by_group_version, server_address);
        Registry {
            by_gvr,
            groups,
            by_group_version,
            documents,
        }
    }

    /// The resource a request names, if served.
    pub fn resolve(&self, group: &str, version: &str, resource: &str) -> Option<Arc<ApiResource>> {
        self.by_gvr.get(group)?.get(version)?.get(resource).cloned()
    }

    /// Every served (group, version, resource).
    fn all(&self) -> impl Iterator<Item = &Arc<ApiResource>> {
        self.by_gvr
            .values()
            .flat_map(HashMap::values)
            .flat_map(HashMap::values)
    }

    /// The resource serving a kind in a group-version (for manifests, which name kinds).
    pub fn by_kind(&self, group: &str, version: &str, kind: &str) -> Option<Arc<ApiResource>> {
        self.by_group_version
            .get(&(group.to_string(), version.to_string()))
            .and_then(|list| list.iter().find(|r| r.kind == kind).cloned())
    }

    /// Whether a group-version is served at all (for 404 vs. 405 decisions).
    pub fn serves_group_version(&self, group: &str, version: &str) -> bool {
        self.by_group_version
            .contains_key(&(group.to_string(), version.to_string()))
    }

    /// The resource behind a store table (its storage version when served), for controllers
    /// that find objects by table.
    pub fn by_group_resource(&self, gr: &GroupResource) -> Option<Arc<ApiResource>> {
        let mut found: Option<&Arc<ApiResource>> = None;
        for r in self.all().filter(|r| &r.gr == gr) {
            if found.is_none() || r.version == r.storage_version {
                found = Some(r);
            }
        }
        found.cloned()
    }

    /// One served version of each resource (its storage version when served), for work that
    /// spans every resource such as namespace cleanup.
    pub fn each_resource(&self) -> Vec<Arc<ApiResource>> {
        let mut seen: HashMap<&GroupResource, Arc<ApiResource>> = HashMap::new();
        for r in self.all() {
            let replace = match seen.get(&r.gr) {
                None => true,
                Some(cur) => cur.version != cur.storage_version && r.version == r.storage_version,
            };
            if replace {
                seen.insert(&r.gr, r.clone());
            }
        }
        let mut out: Vec<_> = seen.into_values().collect();
        out.sort_by(|a, b| a.gr.cmp(&b.gr));
        out
    }
}

/// A version's compiled schema: reused from the previous registry when the CRD's spec did not
/// change (same uid and generation), compiled otherwise. Requests never compile schemas.
fn compiled_schema(
    previous: Option<&Registry>,
    crd: &Crd,
    v: &Version,
) -> (Option<Arc<Schema>>, Option<Arc<Rules>>) {
    let reuse = previous.and_then(|p| {
        p.all().find(|r| {
            r.version == v.name
                && r.crd
                    .as_ref()
                    .is_some_and(|c| c.uid == crd.uid && c.generation == crd.generation)
        })
    });
    if let Some(r) = reuse {
        return (r.schema.clone(), r.rules.clone());
    }
    let Some(raw) = v.schema.as_ref().and_then(|s| s.get("openAPIV3Schema")) else {
        return (None, None);
    };
    let schema = Schema::compile(raw);
    // A stored CRD passed validation, so its rules compile; a failure here only drops them.
    let rules = Rules::compile(schema.root(), "")
        .ok()
        .filter(|r| !r.is_empty())
        .map(Arc::new);
    (Some(Arc::new(schema)), rules)
}

fn builtin_resources() -> Vec<Arc<ApiResource>> {
    vec![
        Arc::new(ApiResource {
            group: String::new(),
            version: "v1".into(),
            plural: "namespaces".into(),
            singular: "namespace".into(),
            kind: "Namespace".into(),
            list_kind: "NamespaceList".into(),
            namespaced: false,
            short_names: vec!["ns".into()],
            categories: vec![],
            verbs: &[
                "create", "delete", "get", "list", "patch", "update", "watch",
            ],
            status_subresource: true,
            scale: None,
            finalize_subresource: true,
            storage_version: "v1".into(),
            gr: GroupResource::new("", "namespaces"),
            field_selectors: &["metadata.name", "status.phase"],
            unsupported_field: selector::builtin_unsupported_field,
            strategy: Arc::new(NamespaceStrategy),
            crd: None,
            storage_version_hash: storage_version_hash("", "v1", "Namespace"),
            schema: None,
            rules: None,
        }),
        Arc::new(ApiResource {
            group: apiextensions::GROUP.into(),
            version: "v1".into(),
            plural: "customresourcedefinitions".into(),
            singular: "customresourcedefinition".into(),
            kind: "CustomResourceDefinition".into(),
            list_kind: "CustomResourceDefinitionList".into(),
            namespaced: false,
            short_names: vec!["crd".into(), "crds".into()],
            categories: vec!["api-extensions".into()],
            verbs: &[
                "create",
                "delete",
                "deletecollection",
                "get",
                "list",
                "patch",
                "update",
                "watch",
            ],
            status_subresource: true,
            scale: None,
            finalize_subresource: false,
            storage_version: "v1".into(),
            gr: GroupResource::new(apiextensions::GROUP, "customresourcedefinitions"),
            field_selectors: &["metadata.name", "metadata.namespace"],
            unsupported_field: selector::generic_unsupported_field,
            strategy: Arc::new(CrdStrategy),
            crd: None,
            storage_version_hash: storage_version_hash(
                apiextensions::GROUP,
                "v1",
                "CustomResourceDefinition",
            ),
            schema: None,
            rules: None,
        }),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn storage_version_hashes_match_the_apiserver() {
        assert_eq!(storage_version_hash("", "v1", "Namespace"), "Q3oi5N2YM8M=");
        assert_eq!(
            storage_version_hash("apiextensions.k8s.io", "v1", "CustomResourceDefinition"),
            "M5uH+AlWATY="
        );
        assert_eq!(
            storage_version_hash("stable.example.com", "v1", "CronTab"),
            "EdX2FP+L0js="
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
