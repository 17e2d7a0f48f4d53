//! What validating and mutating webhook configurations share: each webhook's defaults and
//! validation (a fully qualified name, rules, policies, side effects, timeout, selectors, the
//! client config, match conditions, admission review versions), and the allowances an update
//! makes for what the stored configuration already holds.

use std::collections::HashSet;

use serde_json::{json, Value};

use super::{default_rule_scopes, match_conditions_errors, rule_errors};
use crate::error::{field, StatusCause};
use crate::registry::table::{Column, Columns};
use crate::registry::validation::{
    dns1035_label_errors, dns1123_subdomain_errors, label_selector_errors,
    selector_has_invalid_values, webhook_client_config_errors,
};

/// The admission review versions this apiserver's predecessor understands.
const ACCEPTED_REVIEW_VERSIONS: [&str; 2] = ["v1", "v1beta1"];
const NO_SIDE_EFFECTS: [&str; 2] = ["None", "NoneOnDryRun"];
const ALL_SIDE_EFFECTS: [&str; 4] = ["None", "NoneOnDryRun", "Some", "Unknown"];

/// The Table of both configuration kinds: Name, Webhooks (how many), Age.
pub fn columns() -> Columns {
    Columns::new(vec![
        Column::name(),
        Column::computed(
            "Webhooks",
            "integer",
            0,
            "Webhooks indicates the number of webhooks registered in this configuration",
            |o| json!(o["webhooks"].as_array().map_or(0, Vec::len)),
        ),
        Column::age("string"),
    ])
}

/// The rules that loosen on update, when the stored configuration already broke them.
#[derive(Clone, Copy)]
pub struct Options {
    ignore_match_conditions: bool,
    require_no_side_effects: bool,
    require_recognized_review_version: bool,
    require_unique_names: bool,
    allow_invalid_label_values: bool,
}

impl Options {
    /// The rules of a create.
    pub fn create() -> Options {
        Options {
            ignore_match_conditions: false,
            require_no_side_effects: true,
            require_recognized_review_version: true,
            require_unique_names: true,
            allow_invalid_label_values: false,
        }
    }

    /// The rules of an update from `old`.
    pub fn update(obj: &Value, old: &Value) -> Options {
        let hooks = |v: &Value| v["webhooks"].as_array().cloned().unwrap_or_default();
        let (new_hooks, old_hooks) = (hooks(obj), hooks(old));
        let same_conditions = new_hooks.len() == old_hooks.len()
            && new_hooks
                .iter()
                .zip(&old_hooks)
                .all(|(n, o)| n["matchConditions"] == o["matchConditions"]);
        let mut names = HashSet::new();
        Options {
            ignore_match_conditions: same_conditions,
            require_no_side_effects: old_hooks.iter().all(|h| {
                h["sideEffects"]
                    .as_str()
                    .is_some_and(|s| NO_SIDE_EFFECTS.contains(&s))
            }),
            require_recognized_review_version: old_hooks.iter().all(|h| {
                let versions = h["admissionReviewVersions"]
                    .as_array()
                    .into_iter()
                    .flatten();
                versions
                    .into_iter()
                    .any(|v| ACCEPTED_REVIEW_VERSIONS.contains(&v.as_str().unwrap_or("")))
            }),
            require_unique_names: old_hooks
                .iter()
                .all(|h| names.insert(h["name"].as_str().unwrap_or("").to_string())),
            allow_invalid_label_values: old_hooks.iter().any(|h| {
                selector_has_invalid_values(&h["namespaceSelector"])
                    || selector_has_invalid_values(&h["objectSelector"])
            }),
        }
    }
}

/// `SetDefaults_ValidatingWebhook` / `SetDefaults_MutatingWebhook`, the service port and the
/// rules' scopes, for every webhook.
pub fn defaults(obj: &mut Value, mutating: bool) {
    let hooks = obj.get_mut("webhooks").and_then(Value::as_array_mut);
    for hook in hooks.into_iter().flatten().filter(|h| h.is_object()) {
        let mut set = |key: &str, value: Value| {
            if hook.get(key).is_none_or(Value::is_null) {
                hook[key] = value;
            }
        };
        set("failurePolicy", json!("Fail"));
        set("matchPolicy", json!("Equivalent"));
        set("namespaceSelector", json!({}));
        set("objectSelector", json!({}));
        set("timeoutSeconds", json!(10));
        if mutating {
            set("reinvocationPolicy", json!("Never"));
        }
        if let Some(service) = hook["clientConfig"]
            .get_mut("service")
            .and_then(Value::as_object_mut)
        {
            if service.get("port").is_none_or(Value::is_null) {
                service.insert("port".into(), json!(443));
            }
        }
        default_rule_scopes(hook.get_mut("rules"));
    }
}

/// `IsFullyQualifiedName`: a DNS subdomain of at least three segments.
fn name_errors(name: &str, path: &str) -> Vec<StatusCause> {
    if name.is_empty() {
        return vec![field::required(path, "")];
    }
    let errs = dns1123_subdomain_errors(name);
    if !errs.is_empty() {
        return vec![field::invalid(path, &json!(name), &errs.join(","))];
    }
    if name.split('.').count() < 3 {
        return vec![field::invalid(
            path,
            &json!(name),
            "should be a domain with at least three segments separated by dots",
        )];
    }
    Vec::new()
}

/// A value from a fixed set (`supported` sorted as the apiserver lists it), when set.
fn enum_errors(v: &Value, path: &str, supported: &[&str]) -> Vec<StatusCause> {
    match v.as_str() {
        Some(s) if !supported.contains(&s) => {
            vec![field::not_supported(path, &json!(s), supported)]
        }
        _ => Vec::new(),
    }
}

/// `validateValidatingWebhook` / `validateMutatingWebhook`.
fn webhook_errors(hook: &Value, path: &str, opts: Options, mutating: bool) -> Vec<StatusCause> {
    let mut errs = name_errors(hook["name"].as_str().unwrap_or(""), &format!("{path}.name"));
    let rules = hook["rules"].as_array().into_iter().flatten();
    for (i, rule) in rules.enumerate() {
        errs.extend(rule_errors(rule, &format!("{path}.rules[{i}]")));
    }
    errs.extend(enum_errors(
        &hook["failurePolicy"],
        &format!("{path}.failurePolicy"),
        &["Fail", "Ignore"],
    ));
    errs.extend(enum_errors(
        &hook["matchPolicy"],
        &format!("{path}.matchPolicy"),
        &["Equivalent", "Exact"],
    ));
    let allowed: &[&str] = if opts.require_no_side_effects {
        &NO_SIDE_EFFECTS
    } else {
        &ALL_SIDE_EFFECTS
    };
    let side_path = format!("{path}.sideEffects");
    if hook["sideEffects"].is_null() {
        let detail = format!("must specify one of {}", allowed.join(", "));
        errs.push(field::required(&side_path, &detail));
    }
    errs.extend(enum_errors(&hook["sideEffects"], &side_path, allowed));
    if let Some(t) = hook["timeoutSeconds"]
        .as_i64()
        .filter(|t| !(1..=30).contains(t))
    {
        let msg = "the timeout value must be between 1 and 30 seconds";
        errs.push(field::invalid(
            &format!("{path}.timeoutSeconds"),
            &json!(t),
            msg,
        ));
    }
    for key in ["namespaceSelector", "objectSelector"] {
        let p = format!("{path}.{key}");
        errs.extend(label_selector_errors(
            &hook[key],
            &p,
            opts.allow_invalid_label_values,
        ));
    }
    if mutating {
        let p = format!("{path}.reinvocationPolicy");
        errs.extend(enum_errors(
            &hook["reinvocationPolicy"],
            &p,
            &["IfNeeded", "Never"],
        ));
    }
    errs.extend(webhook_client_config_errors(
        &hook["clientConfig"],
        &format!("{path}.clientConfig"),
    ));
    if !opts.ignore_match_conditions {
        let p = format!("{path}.matchConditions");
        errs.extend(match_conditions_errors(&hook["matchConditions"], &p));
    }
    errs
}

/// `validateAdmissionReviewVersions`.
fn review_versions_errors(
    versions: &Value,
    path: &str,
    require_recognized: bool,
) -> Vec<StatusCause> {
    let list = versions.as_array().map_or(&[][..], Vec::as_slice);
    if list.is_empty() {
        let detail = format!(
            "must specify one of {}",
            ACCEPTED_REVIEW_VERSIONS.join(", ")
        );
        return vec![field::required(path, &detail)];
    }
    let mut errs = Vec::new();
    let mut seen = HashSet::new();
    let mut accepted = false;
    for (i, v) in list.iter().enumerate() {
        let v = v.as_str().unwrap_or("");
        let p = format!("{path}[{i}]");
        if !seen.insert(v) {
            errs.push(field::invalid(&p, &json!(v), "duplicate version"));
            continue;
        }
        for msg in dns1035_label_errors(v) {
            errs.push(field::invalid(&p, &json!(v), &msg));
        }
        accepted |= ACCEPTED_REVIEW_VERSIONS.contains(&v);
    }
    if require_recognized && !accepted {
        let msg = format!(
            "must include at least one of {}",
            ACCEPTED_REVIEW_VERSIONS.join(", ")
        );
        errs.push(field::invalid(path, versions, &msg));
    }
    errs
}

/// A configuration's validation: each webhook, its review versions, unique names.
pub fn configuration_errors(obj: &Value, opts: Options, mutating: bool) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let mut names = HashSet::new();
    let hooks = obj["webhooks"].as_array().into_iter().flatten();
    for (i, hook) in hooks.enumerate() {
        let path = format!("webhooks[{i}]");
        errs.extend(webhook_errors(hook, &path, opts, mutating));
        let versions_path = format!("{path}.admissionReviewVersions");
        let require = opts.require_recognized_review_version;
        errs.extend(review_versions_errors(
            &hook["admissionReviewVersions"],
            &versions_path,
            require,
        ));
        let name = hook["name"].as_str().unwrap_or("");
        if opts.require_unique_names && !name.is_empty() && !names.insert(name) {
            errs.push(field::duplicate(&format!("{path}.name"), &json!(name)));
        }
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::rendered as messages;

    #[test]
    fn defaults_fill_every_webhook() {
        let mut c = json!({"webhooks": [{"name": "a.b.c", "clientConfig": {"service": {"name": "s", "namespace": "n"}},
            "rules": [{"operations": ["CREATE"]}]}]});
        defaults(&mut c, true);
        let h = &c["webhooks"][0];
        assert_eq!(h["failurePolicy"], "Fail");
        assert_eq!(h["matchPolicy"], "Equivalent");
        assert_eq!(h["namespaceSelector"], json!({}));
        assert_eq!(h["timeoutSeconds"], 10);
        assert_eq!(h["reinvocationPolicy"], "Never");
        assert_eq!(h["clientConfig"]["service"]["port"], 443);
        assert_eq!(h["rules"][0]["scope"], "*");
    }

    #[test]
    fn webhooks_as_the_apiserver_words_them() {
        let c = json!({"webhooks": [
            {"name": "hook", "clientConfig": {"url": "http://user@host?x=1#frag"},
                "timeoutSeconds": 31, "sideEffects": "Some", "admissionReviewVersions": ["v2", "v2"]},
            {"name": "a.b.c", "clientConfig": {"service": {"name": "s", "namespace": "n", "port": 0, "path": "x//Y"}},
                "admissionReviewVersions": ["v1"]},
            {"name": "a.b.c", "clientConfig": {}, "sideEffects": "None", "admissionReviewVersions": ["v1"]}]});
        assert_eq!(
            messages(configuration_errors(&c, Options::create(), false)),
            [
                "webhooks[0].name: Invalid value: \"hook\": should be a domain with at least three segments separated by dots",
                "webhooks[0].sideEffects: Unsupported value: \"Some\": supported values: \"None\", \"NoneOnDryRun\"",
                "webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds",
                "webhooks[0].clientConfig.url: Invalid value: \"http\": 'https' is the only allowed URL scheme; desired format: https://host[/path]",
                "webhooks[0].clientConfig.url: Invalid value: \"user\": user information is not permitted in the URL",
                "webhooks[0].clientConfig.url: Invalid value: \"frag\": fragments are not permitted in the URL",
                "webhooks[0].clientConfig.url: Invalid value: \"x=1\": query parameters are not permitted in the URL",
                "webhooks[0].admissionReviewVersions[1]: Invalid value: \"v2\": duplicate version",
                "webhooks[0].admissionReviewVersions: Invalid value: [\"v2\",\"v2\"]: must include at least one of v1, v1beta1",
                "webhooks[1].sideEffects: Required value: must specify one of None, NoneOnDryRun",
                "webhooks[1].clientConfig.service.port: Invalid value: 0: port is not valid: must be between 1 and 65535, inclusive",
                "webhooks[1].clientConfig.service.path: Invalid value: \"x//Y\": must start with a '/'",
                "webhooks[1].clientConfig.service.path: Invalid value: \"x//Y\": segment[0] may not be empty",
                "webhooks[1].clientConfig.service.path: Invalid value: \"x//Y\": segment[1] may not be empty",
                "webhooks[1].clientConfig.service.path: Invalid value: \"x//Y\": segment[2]: a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                "webhooks[2].clientConfig: Required value: exactly one of url or service is required",
                "webhooks[2].name: Duplicate value: \"a.b.c\"",
            ]
        );
    }
}
