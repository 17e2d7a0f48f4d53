//! The kube-apiserver's checks of `--feature-gates` and `--runtime-config`, against what a 1.36
//! apiserver registers (`data/k8s-1.36/apiserver-flags.json`, written by
//! `scripts/gen-apiserver-flags`): an unknown gate, a gate locked to its default, a malformed
//! value, an unknown group-version are refused at start with the apiserver's own words.
//!
//! What passes is what kubefake can honour or shows as such: a gate may be set (kubefake serves
//! 1.36's default behaviour whatever its value, and says so on stderr); `--runtime-config` may
//! enable what kubefake serves anyway, and is refused where it would disable a served API or
//! enable one kubefake does not serve.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::LazyLock;

use serde::Deserialize;

use super::Refusal;
use crate::machinery::gofmt::{aggregate, parse_bool};

/// One feature gate of the apiserver.
#[derive(Debug, Deserialize)]
struct Gate {
    name: String,
    default: bool,
    locked: bool,
    stage: String,
    #[serde(default, rename = "dependsOn")]
    depends_on: Vec<String>,
}

#[derive(Deserialize, Default)]
struct Flags {
    #[serde(rename = "featureGates")]
    feature_gates: Vec<Gate>,
    #[serde(rename = "groupVersions")]
    group_versions: Vec<String>,
    #[serde(rename = "admissionPlugins")]
    admission_plugins: Vec<String>,
    #[serde(rename = "defaultOffAdmissionPlugins")]
    default_off_admission_plugins: Vec<String>,
}

static FLAGS: LazyLock<Flags> = LazyLock::new(|| {
    serde_json::from_str(include_str!("../data/k8s-1.36/apiserver-flags.json")).unwrap_or_default()
});

fn gate(name: &str) -> Option<&'static Gate> {
    FLAGS.feature_gates.iter().find(|g| g.name == name)
}

/// The gates `--feature-gates` sets (every value of the repeated flag), in the order first
/// named, or the apiserver's error.
pub fn feature_gates(values: &[String]) -> Result<Vec<(String, bool)>, String> {
    let mut prefixes = BTreeSet::new();
    let mut pieces = Vec::new();
    for piece in values.iter().flat_map(|v| v.split(',')) {
        let piece = piece.trim();
        if piece.is_empty() {
            continue;
        }
        let (component, setting) = match piece.split_once(':') {
            Some((c, rest)) if !c.contains('=') => (c.trim(), rest.trim()),
            _ => ("", piece),
        };
        if !matches!(component, "" | "kube") {
            return Err(format!("component not registered: {component}"));
        }
        prefixes.insert(piece.contains(':') && component == "kube");
        pieces.push(setting);
    }
    if prefixes.len() > 1 {
        return Err("set kube feature gates with default empty prefix or kube: prefix consistently, do not mix use".into());
    }
    let mut order: Vec<String> = Vec::new();
    let mut set: BTreeMap<String, bool> = BTreeMap::new();
    for piece in pieces {
        let Some((k, v)) = piece.split_once('=') else {
            return Err(format!("missing bool value for {}", piece.trim()));
        };
        let (k, v) = (k.trim(), v.trim());
        let Some(on) = parse_bool(v) else {
            return Err(format!(
                "invalid value of {k}={v}, err: strconv.ParseBool: parsing {v:?}: invalid syntax"
            ));
        };
        if set.insert(k.to_string(), on).is_none() {
            order.push(k.to_string());
        }
    }
    let mut errs = Vec::new();
    for k in &order {
        let on = set[k];
        match gate(k) {
            None => {
                errs.push(format!("unrecognized feature gate: {k}"));
                break;
            }
            Some(g) if g.locked && on != g.default => errs.push(format!(
                "cannot set feature gate {k} to {on}, feature is locked to {}",
                g.default
            )),
            Some(_) => {}
        }
    }
    if errs.is_empty() {
        errs = dependency_errors(&set);
    }
    match errs.is_empty() {
        true => Ok(order.into_iter().map(|k| (k.clone(), set[&k])).collect()),
        false => Err(aggregate(&errs)),
    }
}

/// Gates enabled while a gate they depend on is not.
fn dependency_errors(set: &BTreeMap<String, bool>) -> Vec<String> {
    let enabled = |name: &str| {
        set.get(name)
            .copied()
            .or_else(|| gate(name).map(|g| g.default))
            .unwrap_or(false)
    };
    FLAGS
        .feature_gates
        .iter()
        .filter(|g| enabled(&g.name))
        .filter_map(|g| {
            let missing: Vec<&str> = g
                .depends_on
                .iter()
                .map(String::as_str)
                .filter(|d| !enabled(d))
                .collect();
            (!missing.is_empty()).then(|| {
                format!(
                    "{} is enabled, but depends on features that are disabled: [{}]",
                    g.name,
                    missing.join(" ")
                )
            })
        })
        .collect()
}

/// The warning the apiserver logs for a gate set that will go away.
pub fn gate_warning(name: &str) -> Option<&'static str> {
    match gate(name)?.stage.as_str() {
        "" => Some("Warning: setting GA feature gate. It will be removed in a future release."),
        "DEPRECATED" => Some(
            "Warning: setting deprecated feature gate. It will be removed in a future release.",
        ),
        _ => None,
    }
}

/// Checks `--enable-admission-plugins` and `--disable-admission-plugins` against the plugins the
/// apiserver has; kubefake runs those on by default that it implements, and cannot turn on one
/// that is off by default.
pub fn admission_plugins(enable: &[String], disable: &[String]) -> Result<(), Refusal> {
    let known = |name: &String| FLAGS.admission_plugins.contains(name);
    let mut errs: Vec<String> = Vec::new();
    for (flag, names) in [("enable", enable), ("disable", disable)] {
        let unknown = names.iter().filter(|n| !known(n));
        errs.extend(unknown.map(|n| format!("{flag}-admission-plugins plugin {n:?} is unknown")));
    }
    if !errs.is_empty() {
        return Err(Refusal::Apiserver(aggregate(&errs)));
    }
    match enable.iter().find(|n| FLAGS.default_off_admission_plugins.contains(n)) {
        Some(name) => Err(Refusal::Kubefake(format!(
            "--enable-admission-plugins={name}: kubefake does not implement this plugin, off by default"
        ))),
        None => Ok(()),
    }
}

/// Whether kubefake serves a group-version (`""` group for core).
pub type Served<'a> = &'a dyn Fn(&str, &str) -> bool;

/// Checks `--runtime-config` (every value of the repeated flag) as the apiserver does, then
/// what kubefake can honour: it serves every API of a default apiserver, always.
pub fn runtime_config(values: &[String], served: Served<'_>) -> Result<(), Refusal> {
    let checked = checked_runtime_config(values).map_err(Refusal::Apiserver)?;
    for (key, value) in &checked {
        honoured(key, value, served)?;
    }
    Ok(())
}

/// The apiserver's own checks of `--runtime-config`, before it reads any value: its entries.
fn checked_runtime_config(values: &[String]) -> Result<Vec<(String, String)>, String> {
    let mut entries = Vec::new();
    for piece in values
        .iter()
        .flat_map(|v| v.split(','))
        .map(str::trim)
        .filter(|p| !p.is_empty())
    {
        let (key, value) = piece.split_once('=').unwrap_or((piece, ""));
        let key = match key {
            "v1" | "v1/*" | "api/v1" | "api/v1/*" => "/v1",
            "api/legacy" => continue,
            k => k,
        };
        entries.push((key.to_string(), value.to_string()));
    }
    let all_off = entries.iter().any(|(k, v)| k == "api/all" && v == "false");
    if all_off && entries.len() == 1 {
        return Err("invalid runtime-config with only api/all=false".into());
    }
    let groups: BTreeSet<&str> = FLAGS
        .group_versions
        .iter()
        .map(|gv| gv.split_once('/').map_or("", |(g, _)| g))
        .collect();
    let mut unknown = BTreeSet::new();
    for (key, _) in &entries {
        if matches!(
            key.as_str(),
            "api/all" | "api/ga" | "api/beta" | "api/alpha"
        ) {
            continue;
        }
        let parts: Vec<&str> = key.split('/').collect();
        if !(2..=3).contains(&parts.len()) {
            return Err(format!("runtime-config invalid key {key}"));
        }
        if !groups.contains(parts[0]) {
            unknown.insert(format!("{}/{}", parts[0], parts[1]));
        }
    }
    if !unknown.is_empty() {
        return Err(format!(
            "unknown api groups {}",
            unknown.into_iter().collect::<Vec<_>>().join(",")
        ));
    }
    Ok(entries)
}

/// One entry's value, as the apiserver reads it, and whether kubefake can honour it.
fn honoured(key: &str, value: &str, served: Served<'_>) -> Result<(), Refusal> {
    let refuse = |why: &str| {
        Err(Refusal::Kubefake(format!(
            "--runtime-config={key}={value}: {why}"
        )))
    };
    let apiserver = |why: String| Refusal::Apiserver(why);
    if key.starts_with("api/") {
        return match value {
            "true" => Ok(()),
            "false" => refuse(
                "kubefake serves every API of a default 1.36 apiserver and cannot disable them",
            ),
            other => Err(apiserver(format!("invalid value {key}={other}"))),
        };
    }
    let on = match value {
        "" => true,
        v => parse_bool(v).ok_or_else(|| apiserver(format!("invalid value of {key}: {v}, err: strconv.ParseBool: parsing {v:?}: invalid syntax")))?,
    };
    let mut parts = key.split('/');
    let (group, version) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    if !FLAGS
        .group_versions
        .iter()
        .any(|gv| gv == &format!("{group}/{version}") || (group.is_empty() && gv == version))
    {
        return Err(apiserver(format!(
            "group version {group}/{version} that has not been registered"
        )));
    }
    match (on, served(group, version)) {
        (true, true) => Ok(()),
        (true, false) => refuse("kubefake does not serve this group-version"),
        (false, _) => {
            refuse("kubefake serves every API of a default 1.36 apiserver and cannot disable them")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rstest::rstest;

    fn values(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[rstest]
    #[case(&["Foo=true"], "unrecognized feature gate: Foo")]
    #[case(&["kube:Foo=true"], "unrecognized feature gate: Foo")]
    #[case(&["=true"], "unrecognized feature gate: ")]
    #[case(&["Foo"], "missing bool value for Foo")]
    #[case(&["Foo=maybe"], "invalid value of Foo=maybe, err: strconv.ParseBool: parsing \"maybe\": invalid syntax")]
    #[case(&["APIServerTracing=false"], "cannot set feature gate APIServerTracing to false, feature is locked to true")]
    #[case(&["GitRepoVolumeDriver=true"], "cannot set feature gate GitRepoVolumeDriver to true, feature is locked to false")]
    #[case(&["APIServerTracing=false", "Foo=true"], "[cannot set feature gate APIServerTracing to false, feature is locked to true, unrecognized feature gate: Foo]")]
    #[case(&["APIServerIdentity=false"], "UnknownVersionInteroperabilityProxy is enabled, but depends on features that are disabled: [APIServerIdentity]")]
    #[case(&["Bar:Foo=true"], "component not registered: Bar")]
    #[case(&["AggregatedDiscoveryEndpoint=false"], "unrecognized feature gate: AggregatedDiscoveryEndpoint")]
    fn refused_as_the_apiserver_refuses(#[case] v: &[&str], #[case] want: &str) {
        assert_eq!(feature_gates(&values(v)).unwrap_err(), want);
    }

    #[test]
    fn accepted() {
        let set = feature_gates(&values(&[
            "APIServerTracing=true, KMSv1=TRUE",
            "",
            "MutatingAdmissionPolicy=false",
        ]));
        assert_eq!(
            set.expect("accepted"),
            [
                ("APIServerTracing".to_string(), true),
                ("KMSv1".to_string(), true),
                ("MutatingAdmissionPolicy".to_string(), false)
            ]
        );
        assert!(gate_warning("APIServerTracing").is_some_and(|w| w.contains("GA")));
    }

    #[test]
    fn admission_plugins_as_checked() {
        let names = |v: &[&str]| values(v);
        assert_eq!(
            admission_plugins(
                &names(&["NamespaceLifecycle", "ResourceQuota"]),
                &names(&["ServiceAccount"])
            ),
            Ok(())
        );
        assert_eq!(
            admission_plugins(&names(&["Foo"]), &names(&["Bar"])).map_err(|e| e.to_string()),
            Err("[enable-admission-plugins plugin \"Foo\" is unknown, disable-admission-plugins plugin \"Bar\" is unknown]".to_string())
        );
        assert_eq!(
            admission_plugins(&names(&["AlwaysPullImages"]), &[]),
            Err(Refusal::Kubefake("--enable-admission-plugins=AlwaysPullImages: kubefake does not implement this plugin, off by default".into()))
        );
    }

    #[rstest]
    #[case(&["foo/v1=true"], Err("unknown api groups foo/v1"))]
    #[case(&["foo/v1=true,bar.example.com/v2=true"], Err("unknown api groups bar.example.com/v2,foo/v1"))]
    #[case(&["apps"], Err("runtime-config invalid key apps"))]
    #[case(&["apps/v1=maybe"], Err("invalid value of apps/v1: maybe, err: strconv.ParseBool: parsing \"maybe\": invalid syntax"))]
    #[case(&["apps/v9=true"], Err("group version apps/v9 that has not been registered"))]
    #[case(&["api/all=false"], Err("invalid runtime-config with only api/all=false"))]
    #[case(&["api/all=1"], Err("invalid value api/all=1"))]
    #[case(&["apps/v1=true", "v1=true", "api/all=true"], Ok(()))]
    #[case(&["batch/v1=false"], Err("--runtime-config=batch/v1=false: kubefake serves every API of a default 1.36 apiserver and cannot disable them"))]
    #[case(&["resource.k8s.io/v1alpha3=true"], Err("--runtime-config=resource.k8s.io/v1alpha3=true: kubefake does not serve this group-version"))]
    fn runtime_config_as_checked(#[case] v: &[&str], #[case] want: Result<(), &str>) {
        let served = |_: &str, version: &str| version == "v1";
        let got = runtime_config(&values(v), &served).map_err(|e| e.to_string());
        assert_eq!(got, want.map_err(str::to_string));
    }
}
