//! Which of kube-controller-manager's controllers a server runs. `Server::start()` and
//! `kubefake serve` run them all; kubefake started by envtest as its `kube-apiserver` runs none,
//! as envtest's bare apiserver has no kube-controller-manager beside it (a suite opts in with
//! `--kubefake-controllers` or `KUBEFAKE_CONTROLLERS`). The apiserver's own controllers (CRD
//! naming and establishing, APIService registration, admission policy status, bootstrap
//! objects) always run.

use std::collections::BTreeSet;

use super::Work;

/// The controllers by kube-controller-manager's `--controllers` names.
pub const NAMES: [&str; 9] = [
    "clusterrole-aggregation-controller",
    "endpoints-controller",
    "endpointslice-controller",
    "garbage-collector-controller",
    "namespace-controller",
    "persistentvolume-protection-controller",
    "persistentvolumeclaim-protection-controller",
    "root-ca-certificate-publisher-controller",
    "serviceaccount-controller",
];

/// A set of kube-controller-manager controllers.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct KubeControllers(BTreeSet<&'static str>);

impl Default for KubeControllers {
    fn default() -> Self {
        KubeControllers::all()
    }
}

impl KubeControllers {
    /// Every controller kubefake has.
    pub fn all() -> Self {
        KubeControllers(NAMES.into_iter().collect())
    }

    /// None of them.
    pub fn none() -> Self {
        KubeControllers(BTreeSet::new())
    }

    /// A comma-separated list as kube-controller-manager's `--controllers` reads it: names
    /// (with or without the `-controller` suffix), `*` for all, `-name` to leave one out; empty
    /// for none.
    pub fn parse(list: &str) -> Result<Self, String> {
        let mut set = BTreeSet::new();
        let mut off = Vec::new();
        for entry in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            if entry == "*" {
                set.extend(NAMES);
                continue;
            }
            let (name, disable) = match entry.strip_prefix('-') {
                Some(name) => (name, true),
                None => (entry, false),
            };
            let full = if name.ends_with("-controller") {
                name.to_string()
            } else {
                format!("{name}-controller")
            };
            let Some(known) = NAMES.iter().find(|n| **n == full) else {
                return Err(format!(
                    "{name:?} is not a controller kubefake runs; it has: {}",
                    NAMES.join(", ")
                ));
            };
            if disable {
                off.push(*known);
            } else {
                set.insert(*known);
            }
        }
        for name in off {
            set.remove(name);
        }
        Ok(KubeControllers(set))
    }

    /// Whether the controller of this name runs.
    pub fn runs(&self, name: &str) -> bool {
        self.0.contains(name)
    }

    /// Whether the controller a work item belongs to runs (the apiserver's own always do).
    pub(crate) fn runs_work(&self, work: &Work) -> bool {
        let name = match work {
            Work::Namespace(_) => "namespace-controller",
            Work::Owner(_) | Work::Dependent(..) => "garbage-collector-controller",
            Work::StorageProtection(gr, _) if gr.resource == "persistentvolumes" => {
                "persistentvolume-protection-controller"
            }
            Work::StorageProtection(..) => "persistentvolumeclaim-protection-controller",
            Work::ClusterRoleAggregation => "clusterrole-aggregation-controller",
            Work::ServiceAccounts(_) => "serviceaccount-controller",
            Work::RootCaCert(_) => "root-ca-certificate-publisher-controller",
            // A pod's change fans out to both controllers' work, each gated on its own.
            Work::PodServices(_) => {
                return self.runs("endpoints-controller") || self.runs("endpointslice-controller")
            }
            Work::Endpoints(_) => "endpoints-controller",
            Work::EndpointSlices(_) => "endpointslice-controller",
            Work::Crd(_)
            | Work::PolicyStatus(_)
            | Work::ServiceIps(_)
            | Work::DefaultServiceCidr
            | Work::FlowSchemaStatus
            | Work::FlowControlBootstrap
            | Work::FlowControlRestore
            | Work::Simulated(_) => return true,
        };
        self.runs(name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    #[rstest]
    #[case("", &[])]
    #[case("garbage-collector-controller", &["garbage-collector-controller"])]
    #[case(" namespace , serviceaccount", &["namespace-controller", "serviceaccount-controller"])]
    fn lists(#[case] list: &str, #[case] names: &[&str]) {
        let parsed = KubeControllers::parse(list).expect("parsed");
        for name in NAMES {
            assert_eq!(parsed.runs(name), names.contains(&name), "{list:?} {name}");
        }
    }

    #[test]
    fn a_star_is_all_and_unknown_names_are_refused() {
        assert_eq!(KubeControllers::parse("*"), Ok(KubeControllers::all()));
        let most = KubeControllers::parse("*,-garbage-collector").expect("parsed");
        assert!(!most.runs("garbage-collector-controller"));
        assert!(most.runs("namespace-controller"));
        let slices = KubeControllers::parse("endpointslice").expect("parsed");
        let pod = crate::store::ObjectKey::new("default", "p");
        assert!(slices.runs_work(&Work::PodServices(pod)));
        let err = KubeControllers::parse("namespace,cronjob").expect_err("refused");
        assert!(
            err.starts_with("\"cronjob\" is not a controller kubefake runs"),
            "{err}"
        );
    }

    #[test]
    fn the_apiservers_own_work_always_runs() {
        let none = KubeControllers::none();
        assert!(none.runs_work(&Work::Crd("x".into())));
        assert!(!none.runs_work(&Work::Namespace("x".into())));
        assert!(!none.runs_work(&Work::Owner("uid".into())));
    }
}
