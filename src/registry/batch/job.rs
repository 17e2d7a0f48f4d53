//! The batch/v1 Job kind: `SetDefaults_Job` (one completion at parallelism one, six retries,
//! NonIndexed, not suspended, pods replaced once terminated or failed) and the template's pod
//! spec defaults; the selector the apiserver generates from the Job's uid (`controller-uid`)
//! and the labels it stamps on the template; the Job's labels copied from its template; the
//! spec's validation (restart policy OnFailure or Never, selector matching the template, pod
//! failure and success policies, Indexed limits); what an update may change (the template
//! only while suspended, and then only its scheduling directives and resources); the status
//! transitions the apiserver refuses; `kubectl get jobs`' columns; `status.successful` as a
//! field selector; and DELETE orphaning the Job's pods unless told otherwise, with the
//! apiserver's `Warning`.
//!
//! Unless the server simulates a cluster ([`crate::controllers::simulated::job`]), no
//! controller runs: a Job creates no pods and its status stays as clients write it. Pod
//! template warnings are not raised, and values of internal Go types in messages (a whole pod
//! template that may not change) are printed as their v1 JSON.

use std::sync::Arc;

use serde_json::{json, Map, Value};

use crate::controllers::{simulated, Work};
use crate::error::{field, StatusCause};
use crate::registry::apps::deployment::selector_immutable;
use crate::registry::apps::workload::{self, int_at, Rules, Workload};
use crate::registry::builtin;
use crate::registry::core::podspec::{default_pod_spec, validate_pod_template_spec};
use crate::registry::object_meta::{
    self, is_dns1123_label, is_qualified_name, meta_str, name_errors, NameRule, QUALIFIED_NAME_MSG,
};
use crate::registry::pointer::Pointer;
use crate::registry::resource::ApiResource;
use crate::registry::store::Propagation;
use crate::registry::strategy::Strategy;
use crate::registry::table::{human_duration, Column, Columns};
use crate::registry::validation::{
    immutable, label_selector_errors, nonnegative, selector_matches,
};
use crate::store::StoredObject;

/// The label naming the Job on its pods (and the legacy one).
pub const JOB_NAME_LABELS: [&str; 2] = ["job-name", "batch.kubernetes.io/job-name"];
/// The label carrying the Job's uid on its pods (and the legacy one).
pub const CONTROLLER_UID_LABELS: [&str; 2] =
    ["controller-uid", "batch.kubernetes.io/controller-uid"];

/// The `Warning` of a batch/v1 DELETE that names no propagation.
pub const DELETE_WARNING: &str = "child pods are preserved by default when jobs are deleted; set propagationPolicy=Background to remove them or set propagationPolicy=Orphan to suppress this warning";

/// The fields Jobs may be selected by (`JobToSelectableFields`).
const FIELD_SELECTORS: &[&str] = &[
    "metadata.name",
    "metadata.namespace",
    "status.successful=status.succeeded|0",
];

/// The served resource.
pub fn resource() -> ApiResource {
    let rules = Rules {
        prepare_create,
        ..Rules::new(defaults, || json!({}), validate, validate_update)
    }
    .reconciled_by(simulated::Workload::Job);
    builtin::kind(
        "batch",
        "v1",
        "jobs",
        Arc::new(JobStrategy(Workload(rules))),
    )
    .part("status", workload::status(false, validate_status))
    .with(|r| r.table(columns()).field_selectors(FIELD_SELECTORS))
    .build()
}

/// `kubectl get jobs` (`-o wide` adds containers, images and the selector).
fn columns() -> Columns {
    Columns::new(vec![
        Column::name(),
        Column::computed("Status", "string", 0, "Status of the job.", status_cell),
        Column::computed("Completions", "string", 0, "", completions_cell),
        Column::computed(
            "Duration",
            "string",
            0,
            "Time required to complete the job.",
            duration_cell,
        ),
        Column::age("string"),
        Column::computed(
            "Containers",
            "string",
            1,
            "Names of each container in the template.",
            workload::containers_cell,
        ),
        Column::computed(
            "Images",
            "string",
            1,
            "Images referenced by each container in the template.",
            workload::images_cell,
        ),
        Column::computed("Selector", "string", 1, "", workload::selector_cell),
    ])
}

/// `hasJobCondition`: the first condition of the type decides.
fn has_condition(obj: &Value, kind: &str) -> bool {
    conditions(obj)
        .find(|c| c["type"] == kind)
        .is_some_and(|c| c["status"] == "True")
}

fn conditions(obj: &Value) -> impl Iterator<Item = &Value> {
    obj["status"]["conditions"].as_array().into_iter().flatten()
}

/// `IsConditionTrue`: any condition of the type that is True.
fn condition_true(obj: &Value, kind: &str) -> bool {
    conditions(obj).any(|c| c["type"] == kind && c["status"] == "True")
}

fn status_cell(obj: &Value) -> Value {
    let status = if has_condition(obj, "Complete") {
        "Complete"
    } else if has_condition(obj, "Failed") {
        "Failed"
    } else if obj["metadata"].get("deletionTimestamp").is_some() {
        "Terminating"
    } else if has_condition(obj, "Suspended") {
        "Suspended"
    } else if has_condition(obj, "FailureTarget") {
        "FailureTarget"
    } else if has_condition(obj, "SuccessCriteriaMet") {
        "SuccessCriteriaMet"
    } else {
        "Running"
    };
    json!(status)
}

fn completions_cell(obj: &Value) -> Value {
    let succeeded = int_at(obj, "/status/succeeded");
    let text = match obj["spec"]["completions"].as_i64() {
        Some(c) => format!("{succeeded}/{c}"),
        None => match int_at(obj, "/spec/parallelism") {
            p if p > 1 => format!("{succeeded}/1 of {p}"),
            _ => format!("{succeeded}/1"),
        },
    };
    json!(text)
}

fn duration_cell(obj: &Value) -> Value {
    let time = |k: &str| {
        obj["status"][k]
            .as_str()
            .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
    };
    let text = match (time("startTime"), time("completionTime")) {
        (None, _) => String::new(),
        (Some(start), None) => human_duration(
            chrono::Utc::now()
                .signed_duration_since(start)
                .num_seconds(),
        ),
        (Some(start), Some(end)) => human_duration(end.signed_duration_since(start).num_seconds()),
    };
    json!(text)
}

/// The Job's strategy: the workload shape, the name warning and the orphaning default.
struct JobStrategy(Workload);

impl Strategy for JobStrategy {
    fn name_rule(&self) -> NameRule {
        self.0.name_rule()
    }

    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn defaults(&self, obj: &mut Value) {
        self.0.defaults(obj);
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        self.0.prepare_for_create(obj);
    }

    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        self.0.prepare_for_update(obj, old);
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        self.0.validate(obj)
    }

    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        self.0.validate_update(obj, old)
    }

    fn warnings_on_create(&self, obj: &Value) -> Vec<String> {
        let name = meta_str(obj, "name");
        let errs = name_errors(name, NameRule::Label);
        if errs.is_empty() {
            return Vec::new();
        }
        vec![format!(
            "metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: [{}]",
            errs.join(" ")
        )]
    }

    fn default_propagation(&self) -> Option<(Propagation, &'static str)> {
        Some((Propagation::Orphan, DELETE_WARNING))
    }

    fn after_commit(&self, obj: &StoredObject) -> Vec<Work> {
        self.0.after_commit(obj)
    }

    fn after_remove(&self, obj: &StoredObject) -> Vec<Work> {
        self.0.after_remove(obj)
    }
}

/// `SetDefaults_Job`, the pod failure policy's pattern defaults and the template's pod spec
/// defaults.
fn defaults(obj: &mut Value) {
    let template_labels = obj
        .at("/spec/template/metadata/labels")
        .filter(|l| l.is_object())
        .cloned();
    if let Some(spec) = obj.get_mut("spec").filter(|s| s.is_object()) {
        default_job_spec(spec);
    }
    let has_labels = obj["metadata"]["labels"]
        .as_object()
        .is_some_and(|m| !m.is_empty());
    if let (Some(labels), false) = (template_labels, has_labels) {
        object_meta::meta_mut(obj).insert("labels".into(), labels);
    }
}

/// The defaults of a Job's spec (a CronJob's job template gets them too).
pub fn default_job_spec(spec: &mut Value) {
    let unset = |s: &Value, k: &str| s.get(k).is_none_or(Value::is_null);
    if unset(spec, "completions") && unset(spec, "parallelism") {
        spec["completions"] = json!(1);
        spec["parallelism"] = json!(1);
    }
    if unset(spec, "parallelism") {
        spec["parallelism"] = json!(1);
    }
    if unset(spec, "backoffLimit") {
        let limit = if unset(spec, "backoffLimitPerIndex") {
            6
        } else {
            i64::from(i32::MAX)
        };
        spec["backoffLimit"] = json!(limit);
    }
    if unset(spec, "completionMode") {
        spec["completionMode"] = json!("NonIndexed");
    }
    if unset(spec, "suspend") {
        spec["suspend"] = json!(false);
    }
    if unset(spec, "podReplacementPolicy") {
        let policy = if unset(spec, "podFailurePolicy") {
            "TerminatingOrFailed"
        } else {
            "Failed"
        };
        spec["podReplacementPolicy"] = json!(policy);
    }
    if unset(spec, "manualSelector") {
        spec["manualSelector"] = json!(false);
    }
    default_job_template_spec(spec);
}

/// The defaults a Job spec gets inside a CronJob's job template too: pod failure policy
/// patterns `True`, and the pod spec's defaults.
pub fn default_job_template_spec(spec: &mut Value) {
    if let Some(rules) = spec
        .at_mut("/podFailurePolicy/rules")
        .and_then(Value::as_array_mut)
    {
        let patterns = rules
            .iter_mut()
            .filter_map(|r| r.get_mut("onPodConditions").and_then(Value::as_array_mut))
            .flatten();
        for pattern in patterns {
            if pattern["status"].as_str().unwrap_or("").is_empty() {
                pattern["status"] = json!("True");
            }
        }
    }
    if let Some(pod_spec) = spec.at_mut("/template/spec") {
        default_pod_spec(pod_spec);
    }
}

/// `generateSelectorIfNeeded`: unless `manualSelector`, the template gets the job-name and
/// controller-uid labels (where the client set none) and the selector matches the uid. The
/// Job's labels follow its template's when it has none (the storage decode defaults them).
fn prepare_create(obj: &mut Value) {
    if obj["spec"]["manualSelector"] != true && obj["spec"].is_object() {
        let name = meta_str(obj, "name").to_string();
        let uid = meta_str(obj, "uid").to_string();
        let template = &mut obj["spec"]["template"];
        if !template.is_object() {
            *template = json!({});
        }
        if !template["metadata"].is_object() {
            template["metadata"] = json!({});
        }
        let labels = &mut template["metadata"]["labels"];
        if !labels.is_object() {
            *labels = json!({});
        }
        for (keys, value) in [(JOB_NAME_LABELS, &name), (CONTROLLER_UID_LABELS, &uid)] {
            for key in keys {
                if labels.get(key).is_none() {
                    labels[key] = json!(value);
                }
            }
        }
        let selector = &mut obj["spec"]["selector"];
        if !selector.is_object() {
            *selector = json!({});
        }
        if !selector["matchLabels"].is_object() {
            selector["matchLabels"] = json!({});
        }
        let key = CONTROLLER_UID_LABELS[1];
        if selector["matchLabels"].get(key).is_none() {
            selector["matchLabels"][key] = json!(uid);
        }
    }
    let template_labels = obj
        .at("/spec/template/metadata/labels")
        .filter(|l| l.as_object().is_some_and(|m| !m.is_empty()))
        .cloned();
    let has_labels = obj["metadata"]["labels"]
        .as_object()
        .is_some_and(|m| !m.is_empty());
    if let (Some(labels), false) = (template_labels, has_labels) {
        object_meta::meta_mut(obj).insert("labels".into(), labels);
    }
}

/// `ValidateJob` on create (the prefixed labels required).
fn validate(obj: &Value) -> Vec<StatusCause> {
    validate_job(obj, true)
}

/// `ValidateJob`: the generated selector, the spec, and Indexed pod hostnames.
fn validate_job(obj: &Value, prefixed_labels: bool) -> Vec<StatusCause> {
    let mut errs = generated_selector_errors(obj, prefixed_labels);
    errs.extend(validate_job_spec(&obj["spec"]));
    let spec = &obj["spec"];
    if let (Some("Indexed"), Some(c)) = (
        spec["completionMode"].as_str(),
        spec["completions"].as_i64(),
    ) {
        let name = meta_str(obj, "name");
        let hostname = format!("{name}-{}", c - 1);
        if c > 0 && (hostname.len() > 63 || !is_dns1123_label(&hostname)) {
            errs.push(field::invalid(
                "metadata.name",
                &json!(name),
                &format!("will not able to create pod with invalid DNS label: {hostname}"),
            ));
        }
    }
    errs
}

/// `validateGeneratedSelector`: the labels generation put on the template, and a selector
/// that selects them.
fn generated_selector_errors(obj: &Value, prefixed_labels: bool) -> Vec<StatusCause> {
    let spec = &obj["spec"];
    if spec["manualSelector"] == true || !spec["selector"].is_object() {
        return Vec::new();
    }
    let mut errs = Vec::new();
    let (name, uid) = (meta_str(obj, "name"), meta_str(obj, "uid"));
    if uid.is_empty() {
        errs.push(field::required("metadata.uid", ""));
    }
    let labels = spec.at("/template/metadata/labels").unwrap_or(&Value::Null);
    let mut expected = vec![(CONTROLLER_UID_LABELS[0], uid), (JOB_NAME_LABELS[0], name)];
    if prefixed_labels {
        expected.push((CONTROLLER_UID_LABELS[1], uid));
        expected.push((JOB_NAME_LABELS[1], name));
    }
    for (key, value) in &expected {
        let at = format!("spec.template.metadata.labels[{key}]");
        match labels.get(key) {
            None => errs.push(field::required(&at, &format!("must be '{value}'"))),
            Some(v) if v != value => {
                errs.push(field::invalid(&at, labels, &format!("must be '{value}'")))
            }
            Some(_) => {}
        }
    }
    let expected: Map<String, Value> = expected
        .iter()
        .map(|(k, v)| (k.to_string(), json!(v)))
        .collect();
    if selector_matches(&spec["selector"], &Value::Object(expected)) == Some(false) {
        errs.push(workload::selector_invalid(
            &spec["selector"],
            "`selector` not auto-generated",
        ));
    }
    errs
}

/// `ValidateJobSpec`: the spec's fields, a required valid selector that selects the template.
fn validate_job_spec(spec: &Value) -> Vec<StatusCause> {
    let mut errs = job_spec_errors(spec, "spec");
    let selector = &spec["selector"];
    if selector.is_object() {
        errs.extend(label_selector_errors(selector, "spec.selector", false));
    } else {
        errs.push(field::required("spec.selector", ""));
    }
    let labels = spec.at("/template/metadata/labels").unwrap_or(&Value::Null);
    if selector_matches(selector, labels) == Some(false) {
        errs.push(workload::selector_mismatch(labels));
    }
    errs
}

/// `validateJobSpec` at `path` (`spec`, or a CronJob's `spec.jobTemplate.spec`).
pub fn job_spec_errors(spec: &Value, path: &str) -> Vec<StatusCause> {
    let at = |k: &str| format!("{path}.{k}");
    let mut errs = Vec::new();
    for key in [
        "parallelism",
        "completions",
        "activeDeadlineSeconds",
        "backoffLimit",
        "ttlSecondsAfterFinished",
        "backoffLimitPerIndex",
        "maxFailedIndexes",
    ] {
        errs.extend(nonnegative(spec, &format!("/{key}"), &at(key)));
    }
    let set = |k: &str| spec.get(k).is_some_and(|v| !v.is_null());
    if set("maxFailedIndexes") && !set("backoffLimitPerIndex") {
        errs.push(field::required(
            &at("backoffLimitPerIndex"),
            "when maxFailedIndexes is specified",
        ));
    }
    if let Some(managed) = spec["managedBy"].as_str() {
        errs.extend(managed_by_errors(managed, &at("managedBy")));
    }
    errs.extend(completion_mode_errors(spec, path));
    if set("podFailurePolicy") {
        errs.extend(pod_failure_policy_errors(spec, &at("podFailurePolicy")));
    }
    if set("successPolicy") {
        if spec["completionMode"] != "Indexed" {
            errs.push(field::invalid(
                &at("successPolicy"),
                &spec["successPolicy"],
                "requires indexed completion mode",
            ));
        } else {
            errs.extend(success_policy_errors(spec, &at("successPolicy")));
        }
    }
    errs.extend(pod_replacement_policy_errors(
        spec,
        &at("podReplacementPolicy"),
    ));
    errs.extend(validate_pod_template_spec(
        &spec["template"],
        &at("template"),
    ));
    errs.extend(restart_policy_errors(spec, path));
    errs
}

/// `IsDomainPrefixedPath` and the 63-character limit of `managedBy`.
fn managed_by_errors(managed: &str, path: &str) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    match managed.split_once('/') {
        Some((host, rest)) if !host.is_empty() && !rest.is_empty() => {
            if !object_meta::is_dns1123_subdomain(host) {
                errs.push(field::invalid(path, &json!(host), "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"));
            }
            let valid_path = rest
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"/-._~%!$&'()*+,;=:".contains(&b));
            if !valid_path {
                errs.push(field::invalid(path, &json!(rest), "Invalid path"));
            }
        }
        _ => errs.push(field::invalid(
            path,
            &json!(managed),
            "must be a domain-prefixed path (such as \"acme.io/foo\")",
        )),
    }
    if managed.len() > 63 {
        let mut cause = field::too_long(path, 63);
        cause.message = "Too long: may not be more than 63 bytes".into();
        errs.push(cause);
    }
    errs
}

/// The completion mode's value and the Indexed limits.
fn completion_mode_errors(spec: &Value, path: &str) -> Vec<StatusCause> {
    let at = |k: &str| format!("{path}.{k}");
    let mut errs = Vec::new();
    let mode = spec["completionMode"].as_str();
    let int = |k: &str| spec[k].as_i64();
    match mode {
        None | Some("NonIndexed") => {
            for key in ["backoffLimitPerIndex", "maxFailedIndexes"] {
                if let Some(v) = int(key) {
                    errs.push(field::invalid(
                        &at(key),
                        &json!(v),
                        "requires indexed completion mode",
                    ));
                }
            }
        }
        Some("Indexed") => {
            let completions = int("completions");
            if completions.is_none() {
                errs.push(field::required(
                    &at("completions"),
                    "when completion mode is Indexed",
                ));
            }
            if let Some(p) = int("parallelism").filter(|p| *p > 100_000) {
                errs.push(field::invalid(
                    &at("parallelism"),
                    &json!(p),
                    "must be less than or equal to 100000 when completion mode is Indexed",
                ));
            }
            if let Some(m) = int("maxFailedIndexes") {
                if completions.is_some_and(|c| m > c) {
                    errs.push(field::invalid(
                        &at("maxFailedIndexes"),
                        &json!(m),
                        "must be less than or equal to completions",
                    ));
                }
                if m > 100_000 {
                    errs.push(field::invalid(
                        &at("maxFailedIndexes"),
                        &json!(m),
                        "must be less than or equal to 100000",
                    ));
                }
            }
            errs.extend(high_completions_errors(spec, path));
        }
        Some(other) => errs.push(field::not_supported(
            &at("completionMode"),
            &json!(other),
            &["NonIndexed", "Indexed"],
        )),
    }
    errs
}

/// The limits of Indexed Jobs with more than 10^5 completions and a backoff limit per index.
fn high_completions_errors(spec: &Value, path: &str) -> Vec<StatusCause> {
    let at = |k: &str| format!("{path}.{k}");
    let mut errs = Vec::new();
    let high = spec["completions"].as_i64().is_some_and(|c| c > 100_000);
    if !high || spec["backoffLimitPerIndex"].is_null() {
        return errs;
    }
    const SUFFIX: &str = "when completions are above 100000 and used with backoff limit per index";
    match spec["maxFailedIndexes"].as_i64() {
        None => errs.push(field::required(
            &at("maxFailedIndexes"),
            "must be specified when completions is above 100000",
        )),
        Some(m) if m > 10_000 => errs.push(field::invalid(
            &at("maxFailedIndexes"),
            &json!(m),
            &format!("must be less than or equal to 10000 {SUFFIX}"),
        )),
        Some(_) => {}
    }
    if let Some(p) = spec["parallelism"].as_i64().filter(|p| *p > 10_000) {
        errs.insert(
            usize::from(spec["maxFailedIndexes"].is_null()),
            field::invalid(
                &at("parallelism"),
                &json!(p),
                &format!("must be less than or equal to 10000 {SUFFIX}"),
            ),
        );
    }
    errs
}

/// `Invalid value: <detail>` without a value (`field.OmitValueType`).
fn invalid_omitted(path: &str, detail: &str) -> StatusCause {
    StatusCause {
        reason: "FieldValueInvalid".into(),
        message: format!("Invalid value: {detail}"),
        field: path.into(),
    }
}

/// `Too many: <n>: must have at most <max> items`.
fn too_many(path: &str, n: usize, max: usize) -> StatusCause {
    StatusCause {
        reason: "FieldValueTooMany".into(),
        message: format!("Too many: {n}: must have at most {max} items"),
        field: path.into(),
    }
}

fn items<'a>(v: &'a Value, key: &str) -> &'a [Value] {
    v[key].as_array().map_or(&[], Vec::as_slice)
}

/// `validatePodFailurePolicy`.
fn pod_failure_policy_errors(spec: &Value, path: &str) -> Vec<StatusCause> {
    let rules = items(&spec["podFailurePolicy"], "rules");
    let mut errs = Vec::new();
    if rules.len() > 20 {
        errs.push(too_many(&format!("{path}.rules"), rules.len(), 20));
    }
    let pod_spec = &spec["template"]["spec"];
    let names: Vec<&str> = items(pod_spec, "containers")
        .iter()
        .chain(items(pod_spec, "initContainers"))
        .filter_map(|c| c["name"].as_str())
        .collect();
    for (i, rule) in rules.iter().enumerate() {
        errs.extend(pod_failure_rule_errors(
            spec,
            rule,
            &format!("{path}.rules[{i}]"),
            &names,
        ));
    }
    errs
}

/// `validatePodFailurePolicyRule`.
fn pod_failure_rule_errors(
    spec: &Value,
    rule: &Value,
    path: &str,
    names: &[&str],
) -> Vec<StatusCause> {
    const ACTIONS: [&str; 4] = ["Count", "FailIndex", "FailJob", "Ignore"];
    let mut errs = Vec::new();
    let action_path = format!("{path}.action");
    match rule["action"].as_str().unwrap_or("") {
        "" => errs.push(field::required(
            &action_path,
            "valid values: [\"Count\" \"FailIndex\" \"FailJob\" \"Ignore\"]",
        )),
        "FailIndex" if spec["backoffLimitPerIndex"].is_null() => errs.push(field::invalid(
            &action_path,
            &json!("FailIndex"),
            "requires the backoffLimitPerIndex to be set",
        )),
        a if !ACTIONS.contains(&a) => {
            errs.push(field::not_supported(&action_path, &json!(a), &ACTIONS))
        }
        _ => {}
    }
    let on_exit = rule.get("onExitCodes").filter(|v| !v.is_null());
    let on_conditions = items(rule, "onPodConditions");
    if let Some(on_exit) = on_exit {
        errs.extend(on_exit_codes_errors(
            on_exit,
            &format!("{path}.onExitCodes"),
            names,
        ));
    }
    if !on_conditions.is_empty() {
        let at = format!("{path}.onPodConditions");
        if on_conditions.len() > 20 {
            errs.push(too_many(&at, on_conditions.len(), 20));
        }
        for (j, pattern) in on_conditions.iter().enumerate() {
            let kind = pattern["type"].as_str().unwrap_or("");
            if !is_qualified_name(kind) {
                errs.push(field::invalid(
                    &format!("{at}[{j}].type"),
                    &json!(kind),
                    QUALIFIED_NAME_MSG,
                ));
            }
            let status_path = format!("{at}[{j}].status");
            match pattern["status"].as_str().unwrap_or("") {
                "" => errs.push(field::required(
                    &status_path,
                    "valid values: [\"False\" \"True\" \"Unknown\"]",
                )),
                "False" | "True" | "Unknown" => {}
                s => errs.push(field::not_supported(
                    &status_path,
                    &json!(s),
                    &["False", "True", "Unknown"],
                )),
            }
        }
    }
    match (on_exit.is_some(), on_conditions.is_empty()) {
        (true, false) => errs.push(invalid_omitted(
            path,
            "specifying both OnExitCodes and OnPodConditions is not supported",
        )),
        (false, true) => errs.push(invalid_omitted(
            path,
            "specifying one of OnExitCodes and OnPodConditions is required",
        )),
        _ => {}
    }
    errs
}

/// `validatePodFailurePolicyRuleOnExitCodes`.
fn on_exit_codes_errors(on_exit: &Value, path: &str, names: &[&str]) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let operator = on_exit["operator"].as_str().unwrap_or("");
    match operator {
        "" => errs.push(field::required(
            &format!("{path}.operator"),
            "valid values: [\"In\" \"NotIn\"]",
        )),
        "In" | "NotIn" => {}
        o => errs.push(field::not_supported(
            &format!("{path}.operator"),
            &json!(o),
            &["In", "NotIn"],
        )),
    }
    if let Some(name) = on_exit["containerName"].as_str() {
        if !names.contains(&name) {
            errs.push(field::invalid(
                &format!("{path}.containerName"),
                &json!(name),
                "must be one of the container or initContainer names in the pod template",
            ));
        }
    }
    let values: Vec<i64> = items(on_exit, "values")
        .iter()
        .filter_map(Value::as_i64)
        .collect();
    let values_path = format!("{path}.values");
    if values.is_empty() {
        errs.push(
            field::invalid(&values_path, &json!([]), "at least one value is required")
                .with_raw_value("null"),
        );
    } else if values.len() > 255 {
        errs.push(too_many(&values_path, values.len(), 255));
    }
    let mut seen = Vec::new();
    for (j, v) in values.iter().enumerate() {
        let at = format!("{values_path}[{j}]");
        if operator == "In" && *v == 0 {
            errs.push(field::invalid(
                &at,
                &json!(0),
                "must not be 0 for the In operator",
            ));
        }
        if seen.contains(v) {
            errs.push(field::duplicate(&at, &json!(v)));
        } else {
            seen.push(*v);
        }
    }
    if values.windows(2).any(|w| w[0] > w[1]) {
        errs.push(field::invalid(
            &values_path,
            &json!(values),
            "must be ordered",
        ));
    }
    errs
}

/// `validateSuccessPolicy` (Indexed Jobs).
fn success_policy_errors(spec: &Value, path: &str) -> Vec<StatusCause> {
    let rules = items(&spec["successPolicy"], "rules");
    let rules_path = format!("{path}.rules");
    let mut errs = Vec::new();
    if rules.is_empty() {
        errs.push(field::required(
            &rules_path,
            "at least one rules must be specified when the successPolicy is specified",
        ));
    }
    if rules.len() > 20 {
        errs.push(too_many(&rules_path, rules.len(), 20));
    }
    let completions = spec["completions"].as_i64().unwrap_or(0);
    for (i, rule) in rules.iter().enumerate() {
        let at = format!("{rules_path}[{i}]");
        let count = rule["succeededCount"].as_i64();
        let indexes = rule["succeededIndexes"].as_str();
        if count.is_none() && indexes.is_none() {
            errs.push(field::required(
                &at,
                "at least one of succeededCount or succeededIndexes must be specified",
            ));
        }
        let mut total = 0;
        if let Some(indexes) = indexes {
            let p = format!("{at}.succeededIndexes");
            if indexes.len() > 64 * 1024 {
                errs.push(field::too_long(&p, 64 * 1024));
            }
            match indexes_format(indexes, completions) {
                Ok(t) => total = t,
                Err(e) => errs.push(field::invalid(
                    &p,
                    &json!(indexes),
                    &format!("error parsing succeededIndexes: {e}"),
                )),
            }
        }
        if let Some(count) = count {
            let p = format!("{at}.succeededCount");
            errs.extend(nonnegative(rule, "/succeededCount", &p));
            if count > completions {
                errs.push(field::invalid(&p, &json!(count), &format!("must be less than or equal to {completions} (the number of specified completions)")));
            }
            if indexes.is_some() && count > total {
                errs.push(field::invalid(&p, &json!(count), &format!("must be less than or equal to {total} (the number of indexes in the specified succeededIndexes field)")));
            }
        }
    }
    errs
}

/// `validateIndexesFormat`: comma-separated increasing indexes and ranges below
/// `completions`; the number of indexes they name.
pub fn indexes_format(text: &str, completions: i64) -> Result<i64, String> {
    if text.is_empty() {
        return Ok(0);
    }
    let mut last: Option<i64> = None;
    let mut total = 0;
    for interval in text.split(',') {
        let (x, y) = index_interval(interval, completions)?;
        if let Some(l) = last.filter(|l| *l >= x) {
            return Err(format!("non-increasing order, previous: {l}, current: {x}"));
        }
        total += y - x + 1;
        last = Some(y);
    }
    Ok(total)
}

/// `parseIndexInterval`.
fn index_interval(text: &str, completions: i64) -> Result<(i64, i64), String> {
    let parts: Vec<&str> = text.split('-').collect();
    if parts.len() > 2 {
        return Err(format!("the fragment {text:?} violates the requirement that an index interval can have at most two parts separated by '-'"));
    }
    let parse = |s: &str| -> Result<i64, String> {
        let n: i64 = s
            .parse()
            .map_err(|_| format!("cannot convert string to integer for index: {s:?}"))?;
        if n >= completions {
            return Err(format!("too large index: {s:?}"));
        }
        Ok(n)
    };
    let x = parse(parts[0])?;
    match parts.get(1) {
        None => Ok((x, x)),
        Some(second) => {
            let y = parse(second)?;
            if x >= y {
                return Err(format!("non-increasing order, previous: {x}, current: {y}"));
            }
            Ok((x, y))
        }
    }
}

/// `validatePodReplacementPolicy`.
fn pod_replacement_policy_errors(spec: &Value, path: &str) -> Vec<StatusCause> {
    let Some(policy) = spec["podReplacementPolicy"].as_str() else {
        return Vec::new();
    };
    if !spec["podFailurePolicy"].is_null() {
        if policy != "Failed" {
            return vec![field::not_supported(path, &json!(policy), &["Failed"])];
        }
    } else if !["Failed", "TerminatingOrFailed"].contains(&policy) {
        return vec![field::not_supported(
            path,
            &json!(policy),
            &["Failed", "TerminatingOrFailed"],
        )];
    }
    Vec::new()
}

/// A Job's pods restart OnFailure or Never (only Never with a pod failure policy).
fn restart_policy_errors(spec: &Value, path: &str) -> Vec<StatusCause> {
    let at = format!("{path}.template.spec.restartPolicy");
    let policy = spec
        .at("/template/spec/restartPolicy")
        .and_then(Value::as_str)
        .unwrap_or("");
    match policy {
        "" | "Always" => vec![field::required(
            &at,
            "valid values: \"OnFailure\", \"Never\"",
        )],
        "OnFailure" if !spec["podFailurePolicy"].is_null() => vec![field::invalid(
            &at,
            &json!(policy),
            "only \"Never\" is supported when podFailurePolicy is specified",
        )],
        "OnFailure" | "Never" => Vec::new(),
        other => vec![field::not_supported(
            &at,
            &json!(other),
            &["OnFailure", "Never"],
        )],
    }
}

/// `ValidateJob` and `ValidateJobSpecUpdate`: completions fixed unless Indexed (and then
/// with parallelism), and the selector, template, completion mode and policies fixed.
fn validate_update(obj: &Value, old: &Value) -> Vec<StatusCause> {
    let old_labels = old
        .at("/spec/template/metadata/labels")
        .unwrap_or(&Value::Null);
    let prefixed = old_labels.get(JOB_NAME_LABELS[1]).is_some()
        && old_labels.get(CONTROLLER_UID_LABELS[1]).is_some();
    let mut errs = validate_job(obj, prefixed);
    let (spec, before) = (&obj["spec"], &old["spec"]);
    if spec["completionMode"] == "Indexed" {
        let changed = spec["completions"] != before["completions"];
        if changed && !spec["completions"].is_null() && spec["completions"] != spec["parallelism"] {
            errs.push(field::invalid(
                "spec.completions",
                &spec["completions"],
                "can only be modified in tandem with spec.parallelism",
            ));
        }
    } else {
        errs.extend(immutable(
            &spec["completions"],
            &before["completions"],
            "spec.completions",
        ));
    }
    errs.extend(selector_immutable(obj, old));
    errs.extend(template_update_errors(obj, old));
    for key in [
        "completionMode",
        "podFailurePolicy",
        "backoffLimitPerIndex",
        "managedBy",
        "successPolicy",
    ] {
        errs.extend(immutable(&spec[key], &before[key], &format!("spec.{key}")));
    }
    errs
}

/// `validatePodTemplateUpdate`: the template is fixed, except that a suspended Job that has no
/// active pods may change its scheduling directives, labels, annotations and resources.
fn template_update_errors(obj: &Value, old: &Value) -> Vec<StatusCause> {
    let new = &obj["spec"]["template"];
    let mut before = old["spec"]["template"].clone();
    let mutable = old["spec"]["suspend"] == true
        && condition_true(old, "Suspended")
        && int_at(old, "/status/active") == 0;
    if mutable {
        if let Some(meta) = before.get_mut("metadata") {
            for key in ["labels", "annotations"] {
                copy_field(meta, &new["metadata"], key);
            }
        }
        for key in ["nodeSelector", "tolerations", "schedulingGates"] {
            copy_field(&mut before["spec"], &new["spec"], key);
        }
        copy_node_affinity(&mut before["spec"], &new["spec"]);
        for kind in ["containers", "initContainers"] {
            copy_resources(&mut before["spec"], &new["spec"], kind);
        }
    }
    immutable(new, &before, "spec.template")
}

/// Sets `to[key]` to `from[key]` (or removes it).
fn copy_field(to: &mut Value, from: &Value, key: &str) {
    let Some(to) = to.as_object_mut() else {
        return;
    };
    match from.get(key) {
        Some(v) => to.insert(key.into(), v.clone()),
        None => to.remove(key),
    };
}

/// The node affinity may change (and the affinity go when nothing else was in it).
fn copy_node_affinity(before: &mut Value, new: &Value) {
    match (
        new.get("affinity").filter(|a| a.is_object()),
        before["affinity"].is_object(),
    ) {
        (None, true) => {
            if let Some(a) = before["affinity"].as_object_mut() {
                a.remove("nodeAffinity");
                if a.is_empty() {
                    copy_field(before, new, "affinity");
                }
            }
        }
        (Some(a), false) => {
            if let Some(node) = a.get("nodeAffinity") {
                before["affinity"] = json!({"nodeAffinity": node});
            } else {
                before["affinity"] = json!({});
            }
        }
        (Some(a), true) => copy_field(&mut before["affinity"], a, "nodeAffinity"),
        (None, false) => {}
    }
}

/// Container resources may change where the containers line up by position and name.
fn copy_resources(before: &mut Value, new: &Value, kind: &str) {
    let new_list = items(new, kind);
    let Some(old_list) = before.get_mut(kind).and_then(Value::as_array_mut) else {
        return;
    };
    if old_list.len() != new_list.len() {
        return;
    }
    for (o, n) in old_list.iter_mut().zip(new_list) {
        if o["name"] == n["name"] {
            copy_field(o, n, "resources");
        }
    }
}

/// `ValidateJobUpdateStatus` with the apiserver's options: counters, the conditions' rules and
/// the transitions refused once seen.
fn validate_status(obj: &Value, old: &Value) -> Vec<StatusCause> {
    let (status, before) = (&obj["status"], &old["status"]);
    let changed = |k: &str| status.get(k) != before.get(k);
    let mut errs = Vec::new();
    for key in ["active", "succeeded", "failed", "ready", "terminating"] {
        errs.extend(nonnegative(
            status,
            &format!("/{key}"),
            &format!("status.{key}"),
        ));
    }
    errs.extend(uncounted_errors(&status["uncountedTerminatedPods"]));
    let finished = |o: &Value| condition_true(o, "Complete") || condition_true(o, "Failed");
    let finished_changed = finished(obj) != finished(old);
    let complete_changed = condition_true(obj, "Complete") != condition_true(old, "Complete");
    let complete = condition_true(obj, "Complete");
    let has_time = |k: &str| status.get(k).is_some_and(|v| !v.is_null());
    if (complete_changed || changed("completionTime")) && complete && !has_time("completionTime") {
        errs.push(field::required(
            "status.completionTime",
            "completionTime is required for Complete jobs",
        ));
    }
    if (complete_changed || changed("completionTime")) && !complete && has_time("completionTime") {
        errs.push(field::invalid(
            "status.completionTime",
            &status["completionTime"],
            "cannot set completionTime when there is no Complete=True condition",
        ));
    }
    if (finished_changed || changed("active")) && finished(obj) && int_at(obj, "/status/active") > 0
    {
        errs.push(field::invalid(
            "status.active",
            &status["active"],
            "active>0 is invalid for finished job",
        ));
    }
    let zero_suspended = obj["spec"]["suspend"] == true && obj["spec"]["completions"] == 0;
    if (finished_changed || changed("startTime"))
        && !zero_suspended
        && finished(obj)
        && !has_time("startTime")
    {
        errs.push(field::required(
            "status.startTime",
            "startTime is required for finished job",
        ));
    }
    if (changed("ready") || changed("active"))
        && status["ready"]
            .as_i64()
            .is_some_and(|r| r > int_at(obj, "/status/active"))
    {
        errs.push(field::invalid(
            "status.ready",
            &status["ready"],
            "cannot set more ready pods than active",
        ));
    }
    errs.extend(terminal_condition_errors(obj, old));
    errs.extend(counter_errors(obj, old));
    errs
}

/// Every uid in `uncountedTerminatedPods` non-empty and listed once.
fn uncounted_errors(uncounted: &Value) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let mut seen: Vec<&str> = Vec::new();
    for key in ["succeeded", "failed"] {
        for (i, uid) in items(uncounted, key).iter().enumerate() {
            let uid = uid.as_str().unwrap_or("");
            let at = format!("status.uncountedTerminatedPods.{key}[{i}]");
            if uid.is_empty() {
                errs.push(field::invalid(&at, &json!(uid), "must not be empty"));
            } else if seen.contains(&uid) {
                errs.push(field::duplicate(&at, &json!(uid)));
            } else {
                seen.push(uid);
            }
        }
    }
    errs
}

/// The conditions a finished Job needs, and terminal conditions that may not go away.
fn terminal_condition_errors(obj: &Value, old: &Value) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let at = "status.conditions";
    let now = |k: &str| condition_true(obj, k);
    let was = |k: &str| condition_true(old, k);
    let changed = |k: &str| now(k) != was(k);
    if (changed("Complete") || changed("Failed")) && now("Complete") && now("Failed") {
        errs.push(invalid_omitted(
            at,
            "cannot set Complete=True and Failed=true conditions",
        ));
    }
    if (changed("Complete") || changed("FailureTarget")) && now("Complete") && now("FailureTarget")
    {
        errs.push(invalid_omitted(
            at,
            "cannot set Complete=True and FailureTarget=true conditions",
        ));
    }
    let failed_indexes_changed =
        obj["status"].get("failedIndexes") != old["status"].get("failedIndexes");
    if (changed("Failed") || failed_indexes_changed) && now("Failed") && !now("FailureTarget") {
        errs.push(invalid_omitted(
            at,
            "cannot set Failed=True condition without the FailureTarget=true condition",
        ));
    }
    if (changed("Complete") || changed("SuccessCriteriaMet"))
        && now("Complete")
        && !now("SuccessCriteriaMet")
    {
        errs.push(invalid_omitted(
            at,
            "cannot set Complete=True condition without the SuccessCriteriaMet=true condition",
        ));
    }
    if now("SuccessCriteriaMet") && now("Failed") {
        errs.push(invalid_omitted(
            at,
            "cannot set SuccessCriteriaMet=True and Failed=true conditions",
        ));
    }
    if now("SuccessCriteriaMet") && now("FailureTarget") {
        errs.push(invalid_omitted(
            at,
            "cannot set SuccessCriteriaMet=True and FailureTarget=true conditions",
        ));
    }
    if !obj["spec"]["successPolicy"].is_null() && !now("SuccessCriteriaMet") && now("Complete") {
        errs.push(invalid_omitted(
            at,
            "cannot set Complete=True for Job with SuccessPolicy unless SuccessCriteriaMet=True",
        ));
    }
    for kind in ["Failed", "Complete", "FailureTarget"] {
        if was(kind) && !now(kind) {
            errs.push(invalid_omitted(
                at,
                &format!("cannot disable the terminal {kind}=True condition"),
            ));
        }
    }
    errs
}

/// Counters that may not go down, and a completion time that may not change.
fn counter_errors(obj: &Value, old: &Value) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let n = |o: &Value, k: &str| int_at(o, &format!("/status/{k}"));
    if n(obj, "failed") < n(old, "failed") {
        errs.push(field::invalid(
            "status.failed",
            &json!(n(obj, "failed")),
            "cannot decrease the failed counter",
        ));
    }
    let spec = &obj["spec"];
    let scalable =
        spec["completionMode"] == "Indexed" && spec["completions"] == spec["parallelism"];
    if !scalable && n(obj, "succeeded") < n(old, "succeeded") {
        errs.push(field::invalid(
            "status.succeeded",
            &json!(n(obj, "succeeded")),
            "cannot decrease the succeeded counter",
        ));
    }
    let (new_time, old_time) = (
        &obj["status"]["completionTime"],
        &old["status"]["completionTime"],
    );
    if !new_time.is_null() && !old_time.is_null() && new_time != old_time {
        errs.push(field::invalid(
            "status.completionTime",
            new_time,
            "field is immutable",
        ));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_as_set_defaults_job() {
        let mut job = json!({"metadata": {"name": "pi"}, "spec": {"template": {
            "metadata": {"labels": {"app": "pi"}},
            "spec": {"containers": [{"name": "pi", "image": "perl"}], "restartPolicy": "Never"}}}});
        defaults(&mut job);
        let spec = &job["spec"];
        assert_eq!(
            (spec["completions"].clone(), spec["parallelism"].clone()),
            (json!(1), json!(1))
        );
        assert_eq!(spec["backoffLimit"], 6);
        assert_eq!(spec["completionMode"], "NonIndexed");
        assert_eq!(spec["suspend"], false);
        assert_eq!(spec["manualSelector"], false);
        assert_eq!(spec["podReplacementPolicy"], "TerminatingOrFailed");
        assert_eq!(job["metadata"]["labels"], json!({"app": "pi"}));

        let mut per_index = json!({"spec": {"parallelism": 3, "backoffLimitPerIndex": 1,
            "podFailurePolicy": {"rules": [{"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"}]}]}}});
        defaults(&mut per_index);
        assert_eq!(per_index["spec"]["backoffLimit"], i64::from(i32::MAX));
        assert!(per_index["spec"]["completions"].is_null());
        assert_eq!(per_index["spec"]["podReplacementPolicy"], "Failed");
        assert_eq!(
            per_index["spec"]["podFailurePolicy"]["rules"][0]["onPodConditions"][0]["status"],
            "True"
        );
    }

    #[test]
    fn generated_selector_and_labels() {
        let mut job = json!({"metadata": {"name": "pi", "uid": "u-1"}, "spec": {"manualSelector": false,
            "template": {"spec": {}}}});
        prepare_create(&mut job);
        assert_eq!(
            job["spec"]["selector"],
            json!({"matchLabels": {"batch.kubernetes.io/controller-uid": "u-1"}})
        );
        assert_eq!(
            job["spec"]["template"]["metadata"]["labels"],
            json!({"batch.kubernetes.io/controller-uid": "u-1", "batch.kubernetes.io/job-name": "pi",
                   "controller-uid": "u-1", "job-name": "pi"})
        );
        assert_eq!(
            job["metadata"]["labels"],
            job["spec"]["template"]["metadata"]["labels"]
        );
        assert!(generated_selector_errors(&job, true).is_empty());
    }

    #[test]
    fn a_suspended_job_without_init_containers_keeps_its_template() {
        let job = json!({"spec": {"suspend": true, "template": {"spec": {
            "containers": [{"name": "c", "image": "perl"}]}}},
            "status": {"conditions": [{"type": "Suspended", "status": "True"}]}});
        let mut resumed = job.clone();
        resumed["spec"]["suspend"] = json!(false);
        assert!(template_update_errors(&resumed, &job).is_empty());
    }

    #[test]
    fn index_formats() {
        assert_eq!(indexes_format("0-2,5", 10), Ok(4));
        assert_eq!(
            indexes_format("3,1", 10),
            Err("non-increasing order, previous: 3, current: 1".into())
        );
        assert_eq!(
            indexes_format("12", 10),
            Err("too large index: \"12\"".into())
        );
    }
}
