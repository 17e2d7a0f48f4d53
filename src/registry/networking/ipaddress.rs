//! The networking.k8s.io/v1 IPAddress kind: one allocated service IP, named by the IP in
//! canonical form, pointing at what holds it (`spec.parentRef`, immutable). The apiserver's
//! allocator writes one per cluster IP of a Service ([`crate::controllers::service_ips`]); one a
//! client writes reserves its IP: no Service is given it.

use std::sync::Arc;

use serde_json::{json, Value};

use crate::error::{field, StatusCause};
use crate::machinery::gofmt::{go_internal_json, GoShape};
use crate::registry::builtin;
use crate::registry::object_meta::{path_segment_errors, NameRule};
use crate::registry::resource::ApiResource;
use crate::registry::strategy::Strategy;
use crate::registry::table::{Column, Columns};
use crate::registry::validation::dns_subdomain_errors;
use crate::store::selector::generic_unsupported_field;

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind(
        "networking.k8s.io",
        "v1",
        "ipaddresses",
        Arc::new(IpAddressStrategy),
    )
    .with(|r| {
        r.unsupported_field(generic_unsupported_field)
            .table(Columns::new(vec![
                Column::name(),
                Column::computed(
                    "ParentRef",
                    "string",
                    0,
                    "ParentRef references the resource that an IPAddress is attached to. An IPAddress must reference a parent object.",
                    |o| json!(parent(&o["spec"]["parentRef"])),
                ),
            ]))
    })
    .build()
}

/// The printer's parent cell: `resource/namespace/name`, with the group when there is one,
/// lowercased.
fn parent(r: &Value) -> String {
    if !r.is_object() {
        return "<none>".into();
    }
    let text = |k: &str| r[k].as_str().unwrap_or("");
    let resource = match text("group") {
        "" => text("resource").to_lowercase(),
        group => format!("{}.{group}", text("resource")).to_lowercase(),
    };
    match text("namespace") {
        "" => format!("{resource}/{}", text("name")),
        ns => format!("{resource}/{ns}/{}", text("name")),
    }
}

/// `validateIPAddressParentReference`.
fn parent_errors(obj: &Value) -> Vec<StatusCause> {
    let r = &obj["spec"]["parentRef"];
    if !r.is_object() {
        return vec![field::required("spec.parentRef", "")];
    }
    let text = |k: &str| r[k].as_str().unwrap_or("");
    let mut errs = Vec::new();
    if !text("group").is_empty() {
        errs.extend(dns_subdomain_errors("spec.parentRef.group", text("group")));
    }
    for (key, required) in [("resource", true), ("name", true), ("namespace", false)] {
        let path = format!("spec.parentRef.{key}");
        match text(key) {
            "" if required => errs.push(field::required(&path, "")),
            "" => {}
            value => errs.extend(
                path_segment_errors(value)
                    .iter()
                    .map(|m| field::invalid(&path, &json!(value), m)),
            ),
        }
    }
    errs
}

/// The internal `ParentReference` as encoding/json writes it (Go field names).
fn internal_parent(r: &Value) -> String {
    const PARENT: GoShape = GoShape::Struct(
        &[
            ("group", "Group", GoShape::Text),
            ("resource", "Resource", GoShape::Text),
            ("namespace", "Namespace", GoShape::Text),
            ("name", "Name", GoShape::Text),
        ],
        true,
    );
    go_internal_json(r, PARENT)
}

/// networking/v1 IPAddress.
pub struct IpAddressStrategy;

impl Strategy for IpAddressStrategy {
    fn name_rule(&self) -> NameRule {
        NameRule::Ip
    }

    fn track_generation(&self) -> bool {
        false
    }

    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        parent_errors(obj)
    }

    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        let mut errs = parent_errors(obj);
        let (new, was) = (&obj["spec"]["parentRef"], &old["spec"]["parentRef"]);
        if new != was {
            let mut cause = field::invalid("spec.parentRef", &Value::Null, "field is immutable");
            cause.message = format!(
                "Invalid value: {}: field is immutable",
                internal_parent(new)
            );
            errs.push(cause);
        }
        errs
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::rendered as messages;
    use crate::registry::object_meta::name_errors;
    use rstest::rstest;

    #[rstest]
    #[case("10.0.0.5", vec![])]
    #[case("fd00::1", vec![])]
    #[case("foo", vec!["must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"])]
    #[case("010.0.0.1", vec!["must not have leading 0s"])]
    #[case("::ffff:1.2.3.4", vec!["must not be an IPv4-mapped IPv6 address"])]
    #[case("2001:db8::0001", vec!["must be in canonical form (\"2001:db8::1\")"])]
    #[case("FD00::1", vec!["must be in canonical form (\"fd00::1\")"])]
    fn names_are_canonical_ips(#[case] name: &str, #[case] want: Vec<&str>) {
        assert_eq!(name_errors(name, NameRule::Ip), want);
    }

    #[rstest]
    #[case(json!({"resource": "services", "namespace": "default", "name": "web"}), vec![])]
    #[case(json!(null), vec!["spec.parentRef: Required value"])]
    #[case(json!({"namespace": "a/b"}), vec![
        "spec.parentRef.resource: Required value",
        "spec.parentRef.name: Required value",
        "spec.parentRef.namespace: Invalid value: \"a/b\": may not contain '/'"])]
    fn parent_references(#[case] parent: Value, #[case] want: Vec<&str>) {
        let obj = json!({"spec": {"parentRef": parent}});
        assert_eq!(messages(parent_errors(&obj)), want);
    }

    #[test]
    fn the_parent_is_immutable_and_printed() {
        let svc = |name: &str| json!({"spec": {"parentRef": {"resource": "services", "namespace": "default", "name": name}}});
        assert_eq!(
            messages(IpAddressStrategy.validate_update(&svc("other"), &svc("web"))),
            vec!["spec.parentRef: Invalid value: {\"Group\":\"\",\"Resource\":\"services\",\"Namespace\":\"default\",\"Name\":\"other\"}: field is immutable"]
        );
        assert_eq!(
            parent(&svc("web")["spec"]["parentRef"]),
            "services/default/web"
        );
    }
}
