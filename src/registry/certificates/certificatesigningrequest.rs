//! The certificates.k8s.io/v1 CertificateSigningRequest kind: a PKCS#10 request signed by its
//! key, its requester taken from the creating user, approval (`/approval`: `Approved` and
//! `Denied` conditions) and issuance (`/status`: the certificate, `Failed` and other
//! conditions) each through their own subresource, and kubectl's columns.
//!
//! The main resource changes only metadata; `/status` and `/approval` keep the request's
//! metadata and fill in conditions' missing timestamps. The signer admission plugins are in
//! [`crate::admission::certificates`].
//!
//! Not as the apiserver: a request that is not DER at all is refused with one fixed text
//! (Go's asn1 errors name the exact structure that failed).

use std::sync::Arc;

use base64::Engine;
use serde_json::{json, Map, Value};

use super::signer::signer_name_errors;
use crate::context::Context;
use crate::error::{field, ApiError, StatusCause};
use crate::registry::builtin;
use crate::registry::object_meta::{now_rfc3339, NameRule};
use crate::registry::resource::ApiResource;
use crate::registry::strategy::Strategy;
use crate::registry::table::{human_duration, Column, Columns};
use crate::store::selector::builtin_unsupported_field;

/// The group.
pub const GROUP: &str = "certificates.k8s.io";
/// The signer whose certificates authenticate to the apiserver.
pub const KUBE_APISERVER_CLIENT: &str = "kubernetes.io/kube-apiserver-client";
/// The signer name v1 no longer accepts for new requests.
const LEGACY_UNKNOWN: &str = "kubernetes.io/legacy-unknown";
/// The least `expirationSeconds` a request may ask for.
const MIN_EXPIRATION_SECONDS: i64 = 600;

/// Every key usage a request may name, sorted.
const USAGES: [&str; 23] = [
    "any",
    "cert sign",
    "client auth",
    "code signing",
    "content commitment",
    "crl sign",
    "data encipherment",
    "decipher only",
    "digital signature",
    "email protection",
    "encipher only",
    "ipsec end system",
    "ipsec tunnel",
    "ipsec user",
    "key agreement",
    "key encipherment",
    "microsoft sgc",
    "netscape sgc",
    "ocsp signing",
    "s/mime",
    "server auth",
    "signing",
    "timestamping",
];

const SIGNER_DESCRIPTION: &str = "Requested signer for the request. It is a qualified name in the form: `scope-hostname.io/name`. If empty, it will be defaulted:\n 1. If it's a kubelet client certificate, it is assigned\n    \"kubernetes.io/kube-apiserver-client-kubelet\".\n 2. If it's a kubelet serving certificate, it is assigned\n    \"kubernetes.io/kubelet-serving\".\n 3. Otherwise, it is assigned \"kubernetes.io/legacy-unknown\".\nDistribution of trust for signers happens out of band. You can select on this field using `spec.signerName`.";
const EXPIRATION_DESCRIPTION: &str = "expirationSeconds is the requested duration of validity of the issued certificate. The certificate signer may issue a certificate with a different validity duration so a client must check the delta between the notBefore and and notAfter fields in the issued certificate to determine the actual duration.\n\nThe v1.22+ in-tree implementations of the well-known Kubernetes signers will honor this field as long as the requested duration is not greater than the maximum duration they will honor per the --cluster-signing-duration CLI flag to the Kubernetes controller manager.\n\nCertificate signers may not honor this field for various reasons:\n\n  1. Old signer that is unaware of the field (such as the in-tree\n     implementations prior to v1.22)\n  2. Signer whose configured maximum is shorter than the requested duration\n  3. Signer whose configured minimum is longer than the requested duration\n\nThe minimum valid value for expirationSeconds is 600, i.e. 10 minutes.";

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind(
        GROUP,
        "v1",
        "certificatesigningrequests",
        Arc::new(CsrStrategy),
    )
    .part("status", Arc::new(Part::Status))
    .part("approval", Arc::new(Part::Approval))
    .with(|r| {
        r.field_selectors(&["metadata.name", "spec.signerName"])
            .unsupported_field(builtin_unsupported_field)
            .table(columns())
    })
    .build()
}

/// `kubectl get csr`.
fn columns() -> Columns {
    Columns::new(vec![
        Column::name(),
        Column::age("string"),
        Column::computed("SignerName", "string", 0, SIGNER_DESCRIPTION, |o| {
            json!(text_or_none(&o["spec"]["signerName"]))
        }),
        Column::computed(
            "Requestor",
            "string",
            0,
            "Base64-encoded PKCS#10 CSR data",
            |o| json!(o["spec"]["username"].as_str().unwrap_or("")),
        ),
        Column::computed(
            "RequestedDuration",
            "string",
            0,
            EXPIRATION_DESCRIPTION,
            |o| match o["spec"]["expirationSeconds"].as_i64() {
                Some(s) => json!(human_duration(s)),
                None => json!("<none>"),
            },
        ),
        Column::computed(
            "Condition",
            "string",
            0,
            "Conditions applied to the request, such as approval or denial.",
            condition_cell,
        ),
    ])
}

fn text_or_none(v: &Value) -> &str {
    v.as_str().filter(|s| !s.is_empty()).unwrap_or("<none>")
}

/// The Condition column: `Denied`, `Approved` or `Pending`, then `,Failed` and `,Issued`.
fn condition_cell(obj: &Value) -> Value {
    let has = |t: &str| conditions(obj).iter().any(|c| c["type"] == t);
    let mut cell = String::from(if has("Denied") {
        "Denied"
    } else if has("Approved") {
        "Approved"
    } else {
        "Pending"
    });
    if has("Failed") {
        cell.push_str(",Failed");
    }
    if obj["status"]["certificate"]
        .as_str()
        .is_some_and(|c| !c.is_empty())
    {
        cell.push_str(",Issued");
    }
    json!(cell)
}

fn conditions(obj: &Value) -> &[Value] {
    obj["status"]["conditions"]
        .as_array()
        .map_or(&[], Vec::as_slice)
}

/// certificates/v1 CertificateSigningRequest: the main resource.
pub struct CsrStrategy;

impl Strategy for CsrStrategy {
    fn name_rule(&self) -> NameRule {
        NameRule::PathSegment
    }

    fn track_generation(&self) -> bool {
        false
    }

    fn allow_unconditional_update(&self) -> bool {
        true
    }

    /// The requester is who creates it, whatever the body says.
    fn decode(&self, obj: &mut Value, ctx: &Context) -> Result<(), ApiError> {
        let Some(o) = obj.as_object_mut() else {
            return Ok(());
        };
        let spec = o.entry("spec").or_insert_with(|| json!({}));
        if let Some(spec) = spec.as_object_mut() {
            let user = &ctx.user;
            for key in ["username", "uid", "groups", "extra"] {
                spec.remove(key);
            }
            if !user.name.is_empty() {
                spec.insert("username".into(), json!(user.name));
            }
            if !user.uid.is_empty() {
                spec.insert("uid".into(), json!(user.uid));
            }
            if !user.groups.is_empty() {
                spec.insert("groups".into(), json!(user.groups));
            }
            if !user.extra.is_empty() {
                spec.insert("extra".into(), json!(user.extra));
            }
        }
        Ok(())
    }

    fn decode_update(
        &self,
        _obj: &mut Value,
        _old: &Value,
        _ctx: &Context,
    ) -> Result<(), ApiError> {
        Ok(())
    }

    fn prepare_for_create(&self, obj: &mut Value) {
        obj["status"] = json!({});
    }

    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        obj["spec"] = old["spec"].clone();
        obj["status"] = old["status"].clone();
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        validate(obj, &Relaxed::default())
    }
}

/// What an update may keep of an older, now invalid, object (`getValidationOptions`).
#[derive(Default)]
struct Relaxed {
    legacy_signer: bool,
    unknown_usages: bool,
    duplicate_usages: bool,
    duplicate_conditions: bool,
    empty_condition_type: bool,
    approved_and_denied: bool,
    any_certificate: bool,
}

impl Relaxed {
    fn from(new: &Value, old: &Value) -> Relaxed {
        let usages = usages(old);
        let types: Vec<&str> = conditions(old)
            .iter()
            .map(|c| c["type"].as_str().unwrap_or(""))
            .collect();
        let mut seen = std::collections::HashSet::new();
        let certificate = |o: &Value| {
            o["status"]["certificate"]
                .as_str()
                .unwrap_or("")
                .to_string()
        };
        Relaxed {
            legacy_signer: old["spec"]["signerName"] == LEGACY_UNKNOWN,
            unknown_usages: usages.iter().any(|u| !USAGES.contains(u)),
            duplicate_usages: {
                let mut seen = std::collections::HashSet::new();
                !usages.iter().all(|u| seen.insert(*u))
            },
            duplicate_conditions: !types.iter().all(|t| seen.insert(*t)),
            empty_condition_type: types.contains(&""),
            approved_and_denied: types.contains(&"Approved") && types.contains(&"Denied"),
            any_certificate: certificate(new) == certificate(old)
                || certificate_error(&certificate(old)).is_some(),
        }
    }
}

fn usages(obj: &Value) -> Vec<&str> {
    obj["spec"]["usages"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|u| u.as_str().unwrap_or(""))
        .collect()
}

/// `validateCertificateSigningRequest`.
fn validate(obj: &Value, relaxed: &Relaxed) -> Vec<StatusCause> {
    let spec = &obj["spec"];
    let mut errs = Vec::new();
    if let Some(why) = request_error(&spec["request"]) {
        errs.push(field::invalid("spec.request", &spec["request"], &why));
    }
    errs.extend(usage_errors(obj, relaxed));
    let signer = spec["signerName"].as_str().unwrap_or("");
    if signer == LEGACY_UNKNOWN && !relaxed.legacy_signer {
        errs.push(field::invalid(
            "spec.signerName",
            &json!(signer),
            "the legacy signerName is not allowed via this API version",
        ));
    } else if signer != LEGACY_UNKNOWN {
        errs.extend(signer_name_errors("spec.signerName", signer));
    }
    if let Some(seconds) = spec["expirationSeconds"]
        .as_i64()
        .filter(|s| *s < MIN_EXPIRATION_SECONDS)
    {
        errs.push(field::invalid(
            "spec.expirationSeconds",
            &json!(seconds),
            "may not specify a duration less than 600 seconds (10 minutes)",
        ));
    }
    errs.extend(condition_errors(obj, relaxed));
    let certificate = obj["status"]["certificate"].as_str().unwrap_or("");
    if !relaxed.any_certificate {
        if let Some(why) = certificate_error(certificate) {
            errs.push(field::invalid(
                "status.certificate",
                &json!("<certificate data>"),
                &why,
            ));
        }
    }
    errs
}

fn usage_errors(obj: &Value, relaxed: &Relaxed) -> Vec<StatusCause> {
    let usages = usages(obj);
    if usages.is_empty() {
        return vec![field::required("spec.usages", "")];
    }
    let mut errs = Vec::new();
    if !relaxed.unknown_usages {
        for (i, usage) in usages.iter().enumerate() {
            if !USAGES.contains(usage) {
                let path = format!("spec.usages[{i}]");
                errs.push(field::not_supported(&path, &json!(usage), &USAGES));
            }
        }
    }
    if !relaxed.duplicate_usages {
        let mut seen = std::collections::HashSet::new();
        for (i, usage) in usages.iter().enumerate() {
            if !seen.insert(*usage) {
                let path = format!("spec.usages[{i}]");
                errs.push(field::duplicate(&path, &json!(usage)));
            }
        }
    }
    errs
}

/// `validateConditions`: a type each, the statuses the approval types allow, not both
/// Approved and Denied, no type twice.
fn condition_errors(obj: &Value, relaxed: &Relaxed) -> Vec<StatusCause> {
    let mut errs = Vec::new();
    let mut seen = std::collections::HashSet::new();
    let (mut approved, mut denied) = (false, false);
    for (i, c) in conditions(obj).iter().enumerate() {
        let kind = c["type"].as_str().unwrap_or("");
        if kind.is_empty() && !relaxed.empty_condition_type {
            errs.push(field::required(&format!("status.conditions[{i}].type"), ""));
        }
        let allowed: &[&str] = match kind {
            "Approved" | "Denied" | "Failed" => &["True"],
            _ => &["False", "True", "Unknown"],
        };
        let status = c["status"].as_str().unwrap_or("");
        let status_path = format!("status.conditions[{i}].status");
        if status.is_empty() {
            errs.push(field::required(&status_path, ""));
        } else if !allowed.contains(&status) {
            errs.push(field::not_supported(&status_path, &json!(status), allowed));
        }
        if !relaxed.approved_and_denied {
            approved |= kind == "Approved";
            denied |= kind == "Denied";
            if approved && denied && (kind == "Approved" || kind == "Denied") {
                errs.push(field::invalid(
                    "status.conditions",
                    &json!(kind),
                    "Approved and Denied conditions are mutually exclusive",
                ));
            }
        }
        if !seen.insert(kind) && !relaxed.duplicate_conditions {
            errs.push(field::duplicate(
                &format!("status.conditions[{i}].type"),
                &json!(kind),
            ));
        }
    }
    errs
}

fn decode_bytes(v: &Value) -> Option<Vec<u8>> {
    base64::engine::general_purpose::STANDARD
        .decode(v.as_str()?)
        .ok()
}

/// Why `spec.request` is not a signed PKCS#10 request in PEM (its first PEM block).
fn request_error(request: &Value) -> Option<String> {
    const WRONG_BLOCK: &str = "PEM block type must be CERTIFICATE REQUEST";
    let bytes = decode_bytes(request).unwrap_or_default();
    let Some(Ok(pem)) = x509_parser::pem::Pem::iter_from_buffer(&bytes).next() else {
        return Some(WRONG_BLOCK.into());
    };
    if pem.label != "CERTIFICATE REQUEST" {
        return Some(WRONG_BLOCK.into());
    }
    use x509_parser::prelude::FromDer;
    let csr =
        match x509_parser::certification_request::X509CertificationRequest::from_der(&pem.contents)
        {
            Ok((_, csr)) => csr,
            Err(_) => return Some("asn1: syntax error: data truncated".into()),
        };
    if csr.verify_signature().is_ok() || unverifiable_here(&csr) {
        return None;
    }
    let algorithm = &csr
        .certification_request_info
        .subject_pki
        .algorithm
        .algorithm;
    let oid = algorithm.to_id_string();
    Some(
        match oid.as_str() {
            "1.2.840.10045.2.1" => "x509: ECDSA verification failure",
            "1.3.101.112" => "x509: Ed25519 verification failure",
            _ => "crypto/rsa: verification error",
        }
        .into(),
    )
}

/// The organizations (`O=`) of the subject a request asks for (none when it does not parse).
pub fn request_organizations(request: &Value) -> Vec<String> {
    use x509_parser::prelude::FromDer;
    let bytes = decode_bytes(request).unwrap_or_default();
    let Some(Ok(pem)) = x509_parser::pem::Pem::iter_from_buffer(&bytes).next() else {
        return Vec::new();
    };
    let Ok((_, csr)) =
        x509_parser::certification_request::X509CertificationRequest::from_der(&pem.contents)
    else {
        return Vec::new();
    };
    let subject = &csr.certification_request_info.subject;
    subject
        .iter_organization()
        .filter_map(|o| o.as_str().ok().map(str::to_string))
        .collect()
}

/// Whether the request's signature uses what Go verifies but ring does not (RSA keys under
/// 2048 bits, P-521, ECDSA with SHA-512, RSA-PSS): it is then taken as Go would find it,
/// rather than refused as forged.
fn unverifiable_here(
    csr: &x509_parser::certification_request::X509CertificationRequest<'_>,
) -> bool {
    use x509_parser::public_key::PublicKey;
    let signature = csr.signature_algorithm.algorithm.to_id_string();
    if matches!(
        signature.as_str(),
        "1.2.840.10045.4.3.4" | "1.2.840.113549.1.1.10"
    ) {
        return true;
    }
    let key = &csr.certification_request_info.subject_pki;
    match key.parsed() {
        Ok(PublicKey::RSA(rsa)) => rsa.key_size() < 2048,
        Ok(PublicKey::EC(_)) => key
            .algorithm
            .parameters
            .as_ref()
            .and_then(|p| p.as_oid().ok())
            .is_some_and(|curve| curve.to_id_string() == "1.3.132.0.35"),
        _ => false,
    }
}

/// Why an issued certificate is not a chain of PEM `CERTIFICATE` blocks (`validateCertificate`);
/// empty is fine.
fn certificate_error(certificate: &str) -> Option<String> {
    if certificate.is_empty() {
        return None;
    }
    let bytes = decode_bytes(&json!(certificate)).unwrap_or_default();
    let mut blocks = 0;
    for pem in x509_parser::pem::Pem::iter_from_buffer(&bytes) {
        let Ok(pem) = pem else { break };
        if pem.label != "CERTIFICATE" {
            return Some(format!(
                "only CERTIFICATE PEM blocks are allowed, found {:?}",
                pem.label
            ));
        }
        blocks += 1;
        if pem.contents.is_empty() {
            return Some("found CERTIFICATE PEM block containing 0 certificates".into());
        }
        if x509_parser::parse_x509_certificate(&pem.contents).is_err() {
            return Some("x509: malformed certificate".into());
        }
    }
    (blocks == 0).then(|| "must contain at least one CERTIFICATE PEM block".into())
}

/// The strategies of `/status` (signers: the certificate and conditions other than approval)
/// and `/approval` (approvers: the conditions).
pub enum Part {
    /// `/status`.
    Status,
    /// `/approval`.
    Approval,
}

impl Strategy for Part {
    fn name_rule(&self) -> NameRule {
        NameRule::PathSegment
    }

    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        obj["spec"] = old["spec"].clone();
        match self {
            Part::Status => {
                for kind in ["Approved", "Denied"] {
                    preserve_instances(obj, old, kind);
                }
                fill_timestamps(obj, old);
            }
            Part::Approval => {
                fill_timestamps(obj, old);
                let conditions = obj["status"].get("conditions").cloned();
                let mut status = old["status"].clone();
                if !status.is_object() {
                    status = json!({});
                }
                match conditions {
                    Some(c) => status["conditions"] = c,
                    None => {
                        if let Some(s) = status.as_object_mut() {
                            s.remove("conditions");
                        }
                    }
                }
                obj["status"] = status;
            }
        }
    }

    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        let mut errs = validate(obj, &Relaxed::from(obj, old));
        let count = |o: &Value, t: &str| conditions(o).iter().filter(|c| c["type"] == t).count();
        for kind in ["Approved", "Denied", "Failed"] {
            if count(obj, kind) < count(old, kind) {
                let why = format!("updates may not remove a condition of type {kind:?}");
                errs.push(field::forbidden("status.conditions", &why));
            }
        }
        if matches!(self, Part::Status) {
            for kind in ["Approved", "Denied"] {
                if count(obj, kind) > count(old, kind) {
                    let why = format!("updates may not add a condition of type {kind:?}");
                    errs.push(field::forbidden("status.conditions", &why));
                }
            }
            let certificate = |o: &Value| {
                o["status"]["certificate"]
                    .as_str()
                    .unwrap_or("")
                    .to_string()
            };
            if certificate(obj) != certificate(old) && !certificate(old).is_empty() {
                errs.push(field::forbidden(
                    "status.certificate",
                    "updates may not modify existing certificate content",
                ));
            }
        }
        errs
    }
}

/// `preserveConditionInstances`: with as many conditions of `kind` as before, each keeps its
/// stored form (a signer may not edit an approval).
fn preserve_instances(obj: &mut Value, old: &Value, kind: &str) {
    let before: Vec<Value> = conditions(old)
        .iter()
        .filter(|c| c["type"] == kind)
        .cloned()
        .collect();
    let Some(list) = obj["status"]
        .get_mut("conditions")
        .and_then(Value::as_array_mut)
    else {
        return;
    };
    let now = list.iter().filter(|c| c["type"] == kind).count();
    if now != before.len() {
        return;
    }
    let mut stored = before.into_iter();
    for c in list.iter_mut().filter(|c| c["type"] == kind) {
        if let Some(s) = stored.next() {
            *c = s;
        }
    }
}

/// `populateConditionTimestamps`: a condition without `lastUpdateTime` was updated now; one
/// without `lastTransitionTime` keeps the stored one of its type and status, or is now.
fn fill_timestamps(obj: &mut Value, old: &Value) {
    let now = now_rfc3339();
    let Some(list) = obj["status"]
        .get_mut("conditions")
        .and_then(Value::as_array_mut)
    else {
        return;
    };
    for c in list.iter_mut().filter_map(Value::as_object_mut) {
        if c.get("lastUpdateTime").is_none_or(Value::is_null) {
            c.insert("lastUpdateTime".into(), json!(now));
        }
        if c.get("lastTransitionTime").is_none_or(Value::is_null) {
            let stored = conditions(old).iter().find_map(|o| {
                let same = &o["type"] == c_get(c, "type") && &o["status"] == c_get(c, "status");
                same.then(|| o["lastTransitionTime"].as_str())
                    .flatten()
                    .filter(|t| !t.is_empty())
            });
            c.insert(
                "lastTransitionTime".into(),
                json!(stored.map_or(now.clone(), str::to_string)),
            );
        }
    }
}

fn c_get<'a>(c: &'a Map<String, Value>, key: &str) -> &'a Value {
    c.get(key).unwrap_or(&Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::rendered as messages;
    use rstest::rstest;

    /// An RSA-2048 request with a valid signature (made with openssl).
    const REQUEST: &str = include_str!("../../../fixtures/certificates/request.pem");

    fn encoded(pem: &str) -> Value {
        json!(base64::engine::general_purpose::STANDARD.encode(pem))
    }

    fn csr(usages: Value, signer: &str) -> Value {
        json!({"metadata": {"name": "c"},
            "spec": {"request": encoded(REQUEST), "signerName": signer, "usages": usages}})
    }

    #[test]
    fn a_signed_request_is_valid() {
        let obj = csr(json!(["client auth"]), "org.io/my-signer");
        assert_eq!(
            messages(validate(&obj, &Relaxed::default())),
            Vec::<String>::new()
        );
    }

    #[rstest]
    #[case(json!(["client auth"]), "kubernetes.io/legacy-unknown", "spec.signerName: Invalid value: \"kubernetes.io/legacy-unknown\": the legacy signerName is not allowed via this API version")]
    #[case(json!([]), "org.io/s", "spec.usages: Required value")]
    #[case(json!(["client auth", "client auth"]), "org.io/s", "spec.usages[1]: Duplicate value: \"client auth\"")]
    #[case(json!(["nope"]), "org.io/s", "spec.usages[0]: Unsupported value: \"nope\": supported values: \"any\", \"cert sign\", \"client auth\", \"code signing\", \"content commitment\", \"crl sign\", \"data encipherment\", \"decipher only\", \"digital signature\", \"email protection\", \"encipher only\", \"ipsec end system\", \"ipsec tunnel\", \"ipsec user\", \"key agreement\", \"key encipherment\", \"microsoft sgc\", \"netscape sgc\", \"ocsp signing\", \"s/mime\", \"server auth\", \"signing\", \"timestamping\"")]
    fn spec_errors(#[case] usages: Value, #[case] signer: &str, #[case] want: &str) {
        let obj = csr(usages, signer);
        assert_eq!(
            messages(validate(&obj, &Relaxed::default())),
            vec![want.to_string()]
        );
    }

    #[rstest]
    #[case(
        "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----",
        "PEM block type must be CERTIFICATE REQUEST"
    )]
    #[case("not pem", "PEM block type must be CERTIFICATE REQUEST")]
    #[case(
        "-----BEGIN CERTIFICATE REQUEST-----\nAAAA\n-----END CERTIFICATE REQUEST-----",
        "asn1: syntax error: data truncated"
    )]
    fn request_errors(#[case] pem: &str, #[case] want: &str) {
        assert_eq!(request_error(&encoded(pem)).as_deref(), Some(want));
        assert_eq!(
            request_error(&Value::Null).as_deref(),
            Some("PEM block type must be CERTIFICATE REQUEST")
        );
    }

    /// Signatures Go verifies and ring does not are not refused as forged.
    #[rstest]
    #[case(include_str!("../../../fixtures/certificates/rsa1024-request.pem"))]
    #[case(include_str!("../../../fixtures/certificates/p521-request.pem"))]
    fn requests_ring_cannot_verify_are_accepted(#[case] pem: &str) {
        assert_eq!(request_error(&encoded(pem)), None);
    }

    #[test]
    fn a_tampered_request_fails_its_signature() {
        let tampered = REQUEST.replace("a3ViZWZha2Ux", "a3ViZWZha2Vx");
        assert_eq!(
            request_error(&encoded(&tampered)).as_deref(),
            Some("crypto/rsa: verification error")
        );
    }

    #[rstest]
    #[case(json!([{"type": "Approved", "status": "True"}, {"type": "Denied", "status": "True"}]),
        vec!["status.conditions: Invalid value: \"Denied\": Approved and Denied conditions are mutually exclusive"])]
    #[case(json!([{"type": "Approved", "status": "False"}]),
        vec!["status.conditions[0].status: Unsupported value: \"False\": supported values: \"True\""])]
    #[case(json!([{"type": "", "status": ""}]),
        vec!["status.conditions[0].type: Required value", "status.conditions[0].status: Required value"])]
    #[case(json!([{"type": "X", "status": "True"}, {"type": "X", "status": "Unknown"}]),
        vec!["status.conditions[1].type: Duplicate value: \"X\""])]
    fn condition_rules(#[case] list: Value, #[case] want: Vec<&str>) {
        let obj = json!({"status": {"conditions": list}});
        assert_eq!(messages(condition_errors(&obj, &Relaxed::default())), want);
    }

    #[test]
    fn the_condition_column() {
        let with = |types: &[&str], cert: &str| {
            let list: Vec<Value> = types.iter().map(|t| json!({"type": t})).collect();
            condition_cell(&json!({"status": {"conditions": list, "certificate": cert}}))
        };
        assert_eq!(with(&[], ""), "Pending");
        assert_eq!(with(&["Approved"], "x"), "Approved,Issued");
        assert_eq!(with(&["Approved", "Denied", "Failed"], ""), "Denied,Failed");
    }

    #[test]
    fn approval_keeps_only_the_conditions_and_fills_their_times() {
        let mut old = csr(json!(["client auth"]), "a.io/b");
        old["status"] = json!({"certificate": "Y2VydA==", "conditions": [
            {"type": "X", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z"}]});
        let mut new = json!({"spec": {"signerName": "changed.io/b"},
            "status": {"certificate": "", "conditions": [
                {"type": "X", "status": "True", "lastUpdateTime": null, "lastTransitionTime": null},
                {"type": "Approved", "status": "True"}]}});
        Part::Approval.prepare_for_update(&mut new, &old);
        assert_eq!(new["spec"], old["spec"]);
        assert_eq!(new["status"]["certificate"], "Y2VydA==");
        let conditions = new["status"]["conditions"].as_array().expect("list");
        assert_eq!(conditions[0]["lastTransitionTime"], "2026-01-01T00:00:00Z");
        assert!(conditions[1]["lastUpdateTime"].is_string());
        assert_eq!(
            messages(Part::Approval.validate_update(&new, &old)),
            Vec::<String>::new()
        );
        assert_eq!(
            messages(Part::Status.validate_update(&new, &old)),
            vec!["status.conditions: Forbidden: updates may not add a condition of type \"Approved\""]
        );
    }
}
