//! The networking/v1 IngressClass kind: the controller that implements a class (a
//! domain-prefixed path, immutable) and a reference to its parameters, scoped to the cluster
//! (the default) or a namespace. Tables mark the default class `(default)`; new Ingresses
//! without a class get it ([`crate::admission::default_class`]).

use std::sync::Arc;

use serde_json::{json, Value};

use crate::error::{field, StatusCause};
use crate::registry::builtin;
use crate::registry::object_meta::path_segment_errors;
use crate::registry::resource::ApiResource;
use crate::registry::strategy::{bump_generation, Strategy};
use crate::registry::table::{Column, Columns};
use crate::registry::validation::{
    dns1123_label_errors, dns1123_subdomain_errors, invalid_each, regex_error,
};
use crate::store::selector::generic_unsupported_field;

/// The annotation that makes a class the default one.
pub const DEFAULT_ANNOTATION: &str = "ingressclass.kubernetes.io/is-default-class";

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind(
        "networking.k8s.io",
        "v1",
        "ingressclasses",
        Arc::new(IngressClassStrategy),
    )
    .with(|r| {
        r.unsupported_field(generic_unsupported_field)
            .table(Columns::new(vec![
                Column::name_computed(name_cell),
                Column::computed(
                    "Controller",
                    "string",
                    0,
                    "Controller that is responsible for handling this class",
                    |o| json!(o["spec"]["controller"].as_str().unwrap_or("")),
                ),
                Column::computed(
                    "Parameters",
                    "string",
                    0,
                    "A reference to a resource with additional parameters",
                    parameters_cell,
                ),
                Column::age("string"),
            ]))
    })
    .build()
}

fn name_cell(obj: &Value) -> Value {
    let name = obj["metadata"]["name"].as_str().unwrap_or("");
    if obj["metadata"]["annotations"][DEFAULT_ANNOTATION] == "true" {
        json!(format!("{name} (default)"))
    } else {
        json!(name)
    }
}

/// `Kind[.apiGroup]/name`, or `<none>`.
fn parameters_cell(obj: &Value) -> Value {
    let p = &obj["spec"]["parameters"];
    if !p.is_object() {
        return json!("<none>");
    }
    let mut out = p["kind"].as_str().unwrap_or("").to_string();
    if let Some(group) = p["apiGroup"].as_str() {
        out = format!("{out}.{group}");
    }
    json!(format!("{out}/{}", p["name"].as_str().unwrap_or("")))
}

/// networking/v1 IngressClass.
pub struct IngressClassStrategy;

/// `IsDomainPrefixedPath`: `host/path`, the host a DNS subdomain.
fn controller_errors(controller: &str) -> Vec<StatusCause> {
    let path = "spec.controller";
    let mut errs = Vec::new();
    if controller.len() > 250 {
        errs.push(field::too_long(path, 250));
    }
    if controller.is_empty() {
        errs.push(field::required(path, ""));
        return errs;
    }
    let Some((host, rest)) = controller
        .split_once('/')
        .filter(|(h, r)| !h.is_empty() && !r.is_empty())
    else {
        errs.push(field::invalid(
            path,
            &json!(controller),
            "must be a domain-prefixed path (such as \"acme.io/foo\")",
        ));
        return errs;
    };
    errs.extend(invalid_each(
        path,
        &json!(host),
        dns1123_subdomain_errors(host),
    ));
    let valid = rest
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"/-._~%!$&'()*+,;=:".contains(&b));
    if !valid {
        let msg = regex_error("Invalid path", r"[A-Za-z0-9/\-._~%!$&'()*+,;=:]+", &[]);
        errs.push(field::invalid(path, &json!(rest), &msg));
    }
    errs
}

/// A path-segment name or kind of a reference, required.
fn reference_part_errors(p: &Value, key: &str, path: &str) -> Vec<StatusCause> {
    match p[key].as_str().unwrap_or("") {
        "" => vec![field::required(&format!("{path}.{key}"), "")],
        v => invalid_each(&format!("{path}.{key}"), &json!(v), path_segment_errors(v)),
    }
}

/// `validateIngressClassParametersReference`.
fn parameters_errors(p: &Value) -> Vec<StatusCause> {
    let path = "spec.parameters";
    if !p.is_object() {
        return Vec::new();
    }
    let mut errs = Vec::new();
    if let Some(group) = p["apiGroup"].as_str() {
        let msgs = dns1123_subdomain_errors(group);
        errs.extend(invalid_each(
            &format!("{path}.apiGroup"),
            &json!(group),
            msgs,
        ));
    }
    errs.extend(reference_part_errors(p, "kind", path));
    errs.extend(reference_part_errors(p, "name", path));
    let namespace = p["namespace"].as_str();
    match p["scope"].as_str() {
        None => errs.push(field::required(&format!("{path}.scope"), "")),
        Some("Namespace") => match namespace {
            None => errs.push(field::required(
                &format!("{path}.namespace"),
                "`parameters.scope` is set to 'Namespace'",
            )),
            Some(ns) => errs.extend(invalid_each(
                &format!("{path}.namespace"),
                &json!(ns),
                dns1123_label_errors(ns),
            )),
        },
        Some("Cluster") if namespace.is_some() => errs.push(field::forbidden(
            &format!("{path}.namespace"),
            "`parameters.scope` is set to 'Cluster'",
        )),
        Some("Cluster") => {}
        Some(other) => errs.push(field::not_supported(
            &format!("{path}.scope"),
            &json!(other),
            &["Cluster", "Namespace"],
        )),
    }
    errs
}

impl Strategy for IngressClassStrategy {
    fn allow_unconditional_update(&self) -> bool {
        true
    }

    /// `SetDefaults_IngressClass`: parameters are cluster-scoped unless said otherwise.
    fn defaults(&self, obj: &mut Value) {
        if let Some(p) = obj["spec"]
            .get_mut("parameters")
            .and_then(Value::as_object_mut)
        {
            if p.get("scope").is_none_or(Value::is_null) {
                p.insert("scope".into(), json!("Cluster"));
            }
        }
    }

    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        bump_generation(obj, old, true);
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        let mut errs = controller_errors(obj["spec"]["controller"].as_str().unwrap_or(""));
        errs.extend(parameters_errors(&obj["spec"]["parameters"]));
        errs
    }

    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        let mut errs = Vec::new();
        let controller = &obj["spec"]["controller"];
        if controller.as_str().unwrap_or("") != old["spec"]["controller"].as_str().unwrap_or("") {
            errs.push(field::invalid(
                "spec.controller",
                &json!(controller.as_str().unwrap_or("")),
                "field is immutable",
            ));
        }
        errs.extend(self.validate(obj));
        errs
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::rendered as messages;

    #[test]
    fn controllers_and_parameters() {
        let mut ok = json!({"spec": {"controller": "example.com/ingress-controller",
            "parameters": {"apiGroup": "k8s.example.com", "kind": "IngressParameters", "name": "p"}}});
        IngressClassStrategy.defaults(&mut ok);
        assert_eq!(ok["spec"]["parameters"]["scope"], "Cluster");
        assert!(IngressClassStrategy.validate(&ok).is_empty());
        assert_eq!(parameters_cell(&ok), "IngressParameters.k8s.example.com/p");
        let bad = json!({"spec": {"controller": "nginx",
            "parameters": {"kind": "", "name": "a/b", "scope": "Namespace"}}});
        assert_eq!(
            messages(IngressClassStrategy.validate(&bad)),
            [
                "spec.controller: Invalid value: \"nginx\": must be a domain-prefixed path (such as \"acme.io/foo\")",
                "spec.parameters.kind: Required value",
                "spec.parameters.name: Invalid value: \"a/b\": may not contain '/'",
                "spec.parameters.namespace: Required value: `parameters.scope` is set to 'Namespace'",
            ]
        );
        let old = json!({"spec": {"controller": "example.com/a"}});
        let new = json!({"spec": {"controller": "example.com/b"}});
        assert_eq!(
            messages(IngressClassStrategy.validate_update(&new, &old)),
            ["spec.controller: Invalid value: \"example.com/b\": field is immutable"]
        );
    }
}
