//! The admissionregistration/v1 ValidatingWebhookConfiguration kind: webhooks that may refuse the
//! requests their rules match, with the apiserver's defaults (failure policy `Fail`, match
//! policy `Equivalent`, empty selectors, a 10-second timeout, rule scope `*`, service port
//! 443) and validation. The webhooks are not called yet.

use std::sync::Arc;

use serde_json::Value;

use super::webhook::{columns, configuration_errors, defaults, Options};
use super::{static_suffix_warnings, GROUP};
use crate::error::StatusCause;
use crate::registry::builtin;
use crate::registry::resource::ApiResource;
use crate::registry::strategy::{bump_generation, Strategy};
use crate::store::selector::generic_unsupported_field;

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind(
        GROUP,
        "v1",
        "validatingwebhookconfigurations",
        Arc::new(ValidatingWebhookConfigurationStrategy),
    )
    .with(|r| {
        r.unsupported_field(generic_unsupported_field)
            .table(columns())
    })
    .build()
}

/// admissionregistration/v1 ValidatingWebhookConfiguration.
pub struct ValidatingWebhookConfigurationStrategy;

impl Strategy for ValidatingWebhookConfigurationStrategy {
    fn defaults(&self, obj: &mut Value) {
        defaults(obj, false);
    }

    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        bump_generation(obj, old, true);
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        configuration_errors(obj, Options::create(), false)
    }

    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        configuration_errors(obj, Options::update(obj, old), false)
    }

    fn warnings_on_create(&self, obj: &Value) -> Vec<String> {
        static_suffix_warnings(obj)
    }

    fn warnings_on_update(&self, obj: &Value, _old: &Value) -> Vec<String> {
        static_suffix_warnings(obj)
    }
}
