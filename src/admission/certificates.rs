//! The signer admission plugins of CertificateSigningRequests, each asking the authorizer
//! about the request's signer (resource `signers` of `certificates.k8s.io`, named by the
//! signer name or by its domain and `/*`):
//! - `CertificateApproval`: an update through `/approval` needs `approve`;
//! - `CertificateSigning`: an update through `/status` that changes the certificate or the
//!   conditions needs `sign`;
//! - `CertificateSubjectRestriction`: a request to `kubernetes.io/kube-apiserver-client` may
//!   not ask for the `system:masters` group.
//!
//! The signer is the stored object's (an update cannot change it).

use futures_util::future::BoxFuture;
use serde_json::Value;

use super::{Attributes, Operation, Validating};
use crate::error::ApiError;
use crate::filters::authorization::{self, Attributes as AuthzAttributes};
use crate::registry::certificates::certificatesigningrequest::{
    request_organizations, GROUP, KUBE_APISERVER_CLIENT,
};
use crate::registry::object_meta::meta_str;

const RESOURCE: &str = "certificatesigningrequests";

/// `CertificateApproval`.
pub struct CertificateApproval;

/// `CertificateSigning`.
pub struct CertificateSigning;

/// `CertificateSubjectRestriction`.
pub struct CertificateSubjectRestriction;

impl Validating for CertificateApproval {
    fn handles(&self, attrs: &Attributes<'_>) -> bool {
        attrs.is_for(GROUP, RESOURCE)
            && attrs.subresource == "approval"
            && attrs.operation == Operation::Update
    }

    fn validate<'a>(
        &'a self,
        attrs: &'a Attributes<'a>,
        _object: Option<&'a Value>,
    ) -> BoxFuture<'a, Result<(), ApiError>> {
        Box::pin(std::future::ready(signer_allows(attrs, "approve")))
    }
}

impl Validating for CertificateSigning {
    fn handles(&self, attrs: &Attributes<'_>) -> bool {
        attrs.is_for(GROUP, RESOURCE)
            && attrs.subresource == "status"
            && attrs.operation == Operation::Update
    }

    fn validate<'a>(
        &'a self,
        attrs: &'a Attributes<'a>,
        object: Option<&'a Value>,
    ) -> BoxFuture<'a, Result<(), ApiError>> {
        let old = attrs.old_object.unwrap_or(&Value::Null);
        let new = object.unwrap_or(&Value::Null);
        // Semantic equality: absent, null and empty are the same.
        let value = |o: &'a Value, key: &str| o["status"].get(key).filter(|v| !is_empty(v));
        let changed = |key: &str| value(new, key) != value(old, key);
        let result = if changed("certificate") || changed("conditions") {
            signer_allows(attrs, "sign")
        } else {
            Ok(())
        };
        Box::pin(std::future::ready(result))
    }
}

impl Validating for CertificateSubjectRestriction {
    fn handles(&self, attrs: &Attributes<'_>) -> bool {
        attrs.is_for(GROUP, RESOURCE)
            && attrs.subresource.is_empty()
            && attrs.operation == Operation::Create
    }

    fn validate<'a>(
        &'a self,
        attrs: &'a Attributes<'a>,
        object: Option<&'a Value>,
    ) -> BoxFuture<'a, Result<(), ApiError>> {
        let obj = object.unwrap_or(&Value::Null);
        let masters = obj["spec"]["signerName"] == KUBE_APISERVER_CLIENT
            && request_organizations(&obj["spec"]["request"])
                .iter()
                .any(|o| o == crate::context::MASTERS);
        let result = if masters {
            Err(forbidden(
                attrs,
                meta_str(obj, "name"),
                "use of kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed",
            ))
        } else {
            Ok(())
        };
        Box::pin(std::future::ready(result))
    }
}

fn is_empty(v: &Value) -> bool {
    v.is_null() || v.as_array().is_some_and(Vec::is_empty) || v.as_str().is_some_and(str::is_empty)
}

/// `IsAuthorizedForSignerName`: the verb on the stored request's signer, or on its domain's
/// `/*`; the apiserver's 403 otherwise.
fn signer_allows(attrs: &Attributes<'_>, verb: &str) -> Result<(), ApiError> {
    let old = attrs.old_object.unwrap_or(&Value::Null);
    let signer = old["spec"]["signerName"].as_str().unwrap_or("");
    let snap = attrs.store.snapshot();
    let allowed = |name: String| {
        let asked = AuthzAttributes {
            verb: verb.into(),
            resource_request: true,
            group: GROUP.into(),
            version: "*".into(),
            resource: "signers".into(),
            name,
            ..AuthzAttributes::default()
        };
        authorization::authorize(attrs.authorization, &snap, &attrs.ctx.user, &asked).allowed()
    };
    let domain = signer.split('/').next().unwrap_or("");
    if allowed(signer.to_string()) || allowed(format!("{domain}/*")) {
        return Ok(());
    }
    let why = format!("user not permitted to {verb} requests with signerName {signer:?}");
    Err(forbidden(attrs, attrs.name, &why))
}

fn forbidden(attrs: &Attributes<'_>, name: &str, why: &str) -> ApiError {
    ApiError::forbidden(&attrs.resource.group, RESOURCE, name, why)
}
