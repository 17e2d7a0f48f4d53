//! The batch/v1 CronJob kind: `SetDefaults_CronJob` (concurrency Allow, not suspended, three
//! successful and one failed Job kept) and the job template's pod defaults; the schedule
//! checked by the cron parser's rules ([`super::cron`]), `TZ=` refused in new schedules in
//! favour of `timeZone`, which must name an IANA zone; the job template validated as a Job's
//! spec with a selector left to generation; names of at most 52 characters; the `status`
//! subresource; `kubectl get cronjobs`' columns.
//!
//! Unless the server simulates a cluster ([`crate::controllers::simulated::cronjob`]), no
//! controller runs: a CronJob creates no Jobs and its status stays as clients write it.

use std::sync::Arc;

use serde_json::{json, Value};

use super::cron;
use super::job::{default_job_template_spec, job_spec_errors};
use crate::controllers::{simulated, Work};
use crate::error::{field, StatusCause};
use crate::registry::apps::workload::{
    self, container_cells, format_label_selector, Rules, Workload,
};
use crate::registry::builtin;
use crate::registry::object_meta::{meta_str, name_errors, NameRule};
use crate::registry::pointer::Pointer;
use crate::registry::resource::ApiResource;
use crate::registry::strategy::Strategy;
use crate::registry::table::{age, Column, Columns};
use crate::registry::validation::nonnegative;
use crate::store::StoredObject;

/// The longest CronJob name: its Jobs' names add an 11-character suffix to it.
pub const MAX_NAME_LENGTH: usize = 52;

/// The served resource.
pub fn resource() -> ApiResource {
    let rules = Rules::new(defaults, || json!({}), validate, validate_update)
        .reconciled_by(simulated::Workload::CronJob);
    builtin::kind(
        "batch",
        "v1",
        "cronjobs",
        Arc::new(CronJobStrategy(Workload(rules))),
    )
    .part("status", workload::status(false, |_, _| Vec::new()))
    .with(|r| r.table(columns()))
    .build()
}

/// `kubectl get cronjobs` (`-o wide` adds the job template's containers, images, selector).
fn columns() -> Columns {
    Columns::new(vec![
        Column::name(),
        Column::computed("Schedule", "string", 0, "", |c| {
            c["spec"]["schedule"].clone()
        }),
        Column::computed("Timezone", "string", 0, "", |c| {
            json!(c["spec"]["timeZone"].as_str().unwrap_or("<none>"))
        }),
        Column::computed("Suspend", "boolean", 0, "", |c| {
            json!(match c["spec"]["suspend"].as_bool() {
                Some(true) => "True",
                Some(false) => "False",
                None => "<unset>",
            })
        }),
        Column::computed("Active", "integer", 0, "", |c| {
            json!(c["status"]["active"].as_array().map_or(0, Vec::len))
        }),
        Column::computed("Last Schedule", "string", 0, "", |c| {
            json!(match c["status"]["lastScheduleTime"].as_str() {
                Some(t) => age(Some(t)),
                None => "<none>".into(),
            })
        }),
        Column::age("string"),
        Column::computed(
            "Containers",
            "string",
            1,
            "Names of each container in the template.",
            |c| json!(container_cells(&c["spec"]["jobTemplate"]["spec"]["template"]).0),
        ),
        Column::computed(
            "Images",
            "string",
            1,
            "Images referenced by each container in the template.",
            |c| json!(container_cells(&c["spec"]["jobTemplate"]["spec"]["template"]).1),
        ),
        Column::computed("Selector", "string", 1, "", |c| {
            json!(format_label_selector(
                &c["spec"]["jobTemplate"]["spec"]["selector"]
            ))
        }),
    ])
}

/// The CronJob's strategy: the workload shape and its warnings.
struct CronJobStrategy(Workload);

impl Strategy for CronJobStrategy {
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
        let errs = name_errors(meta_str(obj, "name"), NameRule::Label);
        if errs.is_empty() {
            return Vec::new();
        }
        vec![format!(
            "metadata.name: this is used in Pod names and hostnames, which can result in surprising behavior; a DNS label is recommended: [{}]",
            errs.join(" ")
        )]
    }

    fn after_commit(&self, obj: &StoredObject) -> Vec<Work> {
        self.0.after_commit(obj)
    }

    fn after_remove(&self, obj: &StoredObject) -> Vec<Work> {
        self.0.after_remove(obj)
    }

    fn warnings_on_update(&self, obj: &Value, _old: &Value) -> Vec<String> {
        if obj["spec"]["schedule"]
            .as_str()
            .unwrap_or("")
            .contains("TZ")
        {
            // The apiserver names the field this way.
            return vec!["cannot use TZ or CRON_TZ in spec.spec.schedule, use timeZone instead, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details".into()];
        }
        Vec::new()
    }
}

/// `SetDefaults_CronJob` and the job template's pod defaults.
fn defaults(obj: &mut Value) {
    let Some(spec) = obj.get_mut("spec").filter(|s| s.is_object()) else {
        return;
    };
    if spec["concurrencyPolicy"].as_str().unwrap_or("").is_empty() {
        spec["concurrencyPolicy"] = json!("Allow");
    }
    for (key, value) in [
        ("suspend", json!(false)),
        ("successfulJobsHistoryLimit", json!(3)),
        ("failedJobsHistoryLimit", json!(1)),
    ] {
        if spec.get(key).is_none_or(Value::is_null) {
            spec[key] = value;
        }
    }
    if let Some(job_spec) = spec.at_mut("/jobTemplate/spec") {
        default_job_template_spec(job_spec);
    }
}

/// `ValidateCronJobCreate`: the spec, and a name short enough for its Jobs'.
fn validate(obj: &Value) -> Vec<StatusCause> {
    let mut errs = spec_errors(&obj["spec"], None);
    let name = meta_str(obj, "name");
    if name.len() > MAX_NAME_LENGTH {
        errs.push(field::invalid(
            "metadata.name",
            &json!(name),
            "must be no more than 52 characters",
        ));
    }
    errs
}

/// `ValidateCronJobUpdate`: the spec (long names of old CronJobs stay updatable).
fn validate_update(obj: &Value, old: &Value) -> Vec<StatusCause> {
    spec_errors(&obj["spec"], Some(&old["spec"]))
}

/// `validateCronJobSpec`.
fn spec_errors(spec: &Value, old: Option<&Value>) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let schedule = spec["schedule"].as_str().unwrap_or("");
    if schedule.is_empty() {
        errs.push(field::required("spec.schedule", ""));
    } else {
        let allow_tz = old.is_some_and(|o| o["schedule"].as_str().unwrap_or("").contains("TZ"));
        errs.extend(schedule_errors(schedule, allow_tz, &spec["timeZone"]));
    }
    errs.extend(nonnegative(
        spec,
        "/startingDeadlineSeconds",
        "spec.startingDeadlineSeconds",
    ));
    if old.is_none_or(|o| o["timeZone"] != spec["timeZone"]) {
        errs.extend(time_zone_errors(&spec["timeZone"]));
    }
    match spec["concurrencyPolicy"].as_str().unwrap_or("") {
        "Allow" | "Forbid" | "Replace" => {}
        "" => errs.push(field::required("spec.concurrencyPolicy", "")),
        other => errs.push(field::not_supported(
            "spec.concurrencyPolicy",
            &json!(other),
            &["Allow", "Forbid", "Replace"],
        )),
    }
    errs.extend(job_template_errors(&spec["jobTemplate"]["spec"]));
    for key in ["successfulJobsHistoryLimit", "failedJobsHistoryLimit"] {
        errs.extend(nonnegative(
            spec,
            &format!("/{key}"),
            &format!("spec.{key}"),
        ));
    }
    errs
}

/// `validateScheduleFormat`.
fn schedule_errors(schedule: &str, allow_tz: bool, time_zone: &Value) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let value = json!(schedule);
    if let Err(e) = cron::parse(schedule) {
        errs.push(field::invalid("spec.schedule", &value, &e));
    }
    let has_tz = schedule.contains("TZ");
    if allow_tz && has_tz && !time_zone.is_null() {
        errs.push(field::invalid(
            "spec.schedule",
            &value,
            "cannot use both timeZone field and TZ or CRON_TZ in schedule",
        ));
    } else if !allow_tz && has_tz {
        errs.push(field::invalid(
            "spec.schedule",
            &value,
            "cannot use TZ or CRON_TZ in schedule, use timeZone field instead",
        ));
    }
    errs
}

/// `validateTimeZone`: an IANA zone name, not `Local`.
fn time_zone_errors(time_zone: &Value) -> Vec<StatusCause> {
    let Some(zone) = time_zone.as_str() else {
        return Vec::new();
    };
    let path = "spec.timeZone";
    if zone.is_empty() {
        return vec![field::invalid(
            path,
            time_zone,
            "timeZone must be nil or non-empty string",
        )];
    }
    let part_ok = |p: &str| {
        p != "."
            && p != ".."
            && !p.starts_with('-')
            && (1..=14).contains(&p.len())
            && p.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b".-_+".contains(&b))
    };
    if !zone.split('/').all(part_ok) {
        return vec![field::invalid(
            path,
            time_zone,
            &format!("unknown time zone {zone}"),
        )];
    }
    let mut errs = Vec::new();
    if zone.eq_ignore_ascii_case("Local") {
        errs.push(field::invalid(
            path,
            time_zone,
            "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones",
        ));
    }
    if let Err(e) = cron::load_location(zone) {
        errs.push(field::invalid(path, time_zone, &e));
    }
    errs
}

/// `ValidateJobTemplateSpec`: a Job's spec whose selector is left to generation.
fn job_template_errors(spec: &Value) -> Vec<StatusCause> {
    let path = "spec.jobTemplate.spec";
    let mut errs = job_spec_errors(spec, path);
    if !spec["selector"].is_null() {
        let mut cause =
            workload::selector_invalid(&spec["selector"], "`selector` will be auto-generated");
        cause.field = format!("{path}.selector");
        errs.push(cause);
    }
    if spec["manualSelector"] == true {
        errs.push(field::not_supported(
            &format!("{path}.manualSelector"),
            &json!(true),
            &["nil", "false"],
        ));
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_and_time_zones() {
        let mut c = json!({"spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {
            "template": {"spec": {"containers": [{"name": "a", "image": "b"}]}}}}}});
        defaults(&mut c);
        assert_eq!(c["spec"]["concurrencyPolicy"], "Allow");
        assert_eq!(c["spec"]["suspend"], false);
        assert_eq!(c["spec"]["successfulJobsHistoryLimit"], 3);
        assert_eq!(c["spec"]["failedJobsHistoryLimit"], 1);
        assert!(c["spec"]["jobTemplate"]["spec"]["completions"].is_null());
        assert_eq!(
            c["spec"]["jobTemplate"]["spec"]["template"]["spec"]["restartPolicy"],
            "Always"
        );

        assert!(time_zone_errors(&json!("Europe/Berlin")).is_empty());
        let messages = |z: &str| -> Vec<String> {
            time_zone_errors(&json!(z))
                .into_iter()
                .map(|c| c.message)
                .collect()
        };
        assert_eq!(
            messages("Mars/Base"),
            ["Invalid value: \"Mars/Base\": unknown time zone Mars/Base"]
        );
        assert_eq!(messages("Local"), ["Invalid value: \"Local\": timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones"]);
    }
}
