//! The core/v1 Secret kind: `type` defaulted to `Opaque` and immutable, the keys each
//! well-known type requires (`kubernetes.io/service-account-token`, `dockercfg`,
//! `dockerconfigjson`, `basic-auth`, `ssh-auth`, `tls`), `stringData` merged into `data` and
//! dropped as the apiserver's conversion does, data keys checked as ConfigMap keys are, at most
//! 1 MiB of data, `immutable` Secrets, the `type` field selector and kubectl's columns.
//!
//! Not yet: the warning a `kubernetes.io/tls` Secret whose key does not match its certificate
//! raises (it needs an X.509 parser); docker config JSON that does not parse is reported with
//! the first of Go's `encoding/json` syntax messages for it, not always the exact one.

use std::sync::Arc;

use base64::Engine;
use serde_json::{json, Map, Value};

use crate::context::Context;
use crate::error::{field, ApiError, StatusCause};
use crate::registry::builtin;
use crate::registry::resource::ApiResource;
use crate::registry::strategy::Strategy;
use crate::registry::table::{Column, Columns};
use crate::registry::validation::{data_key_errors, go_json_object_error, immutable_data_errors};

/// The most bytes a Secret's `data` may hold (`core.MaxSecretSize`).
pub const MAX_SIZE: usize = 1024 * 1024;

/// The annotation a service-account-token Secret names its ServiceAccount with.
pub const SERVICE_ACCOUNT_NAME_KEY: &str = "kubernetes.io/service-account.name";

/// The served resource.
pub fn resource() -> ApiResource {
    builtin::kind("", "v1", "secrets", Arc::new(SecretStrategy))
        .with(|r| {
            r.field_selectors(&["metadata.name", "metadata.namespace", "type"])
                .table(Columns::new(vec![
                    Column::name(),
                    Column::path("Type", "string", "", "", 0, ".type"),
                    Column::computed("Data", "string", 0, "", data_count),
                    Column::age("string"),
                ]))
        })
        .build()
}

/// The Data column: how many keys `data` holds.
fn data_count(obj: &Value) -> Value {
    json!(obj["data"].as_object().map_or(0, Map::len))
}

/// core/v1 Secret.
pub struct SecretStrategy;

impl Strategy for SecretStrategy {
    fn track_generation(&self) -> bool {
        false
    }

    fn allow_unconditional_update(&self) -> bool {
        true
    }

    fn defaults(&self, obj: &mut Value) {
        if obj["type"].as_str().is_none_or(str::is_empty) {
            obj["type"] = json!("Opaque");
        }
    }

    fn decode(&self, obj: &mut Value, _ctx: &Context) -> Result<(), ApiError> {
        merge_string_data(obj);
        Ok(())
    }

    fn validate(&self, obj: &Value) -> Vec<StatusCause> {
        let mut errs = data_key_errors("data", &obj["data"]);
        let total: usize = data_values(obj).map(|(_, v)| decoded_len(v)).sum();
        if total > MAX_SIZE {
            errs.push(field::too_long("data", MAX_SIZE));
        }
        errs.extend(type_errors(obj));
        errs
    }

    fn validate_update(&self, obj: &Value, old: &Value) -> Vec<StatusCause> {
        let mut errs = Vec::new();
        if obj["type"] != old["type"] {
            errs.push(field::invalid("type", &obj["type"], "field is immutable"));
        }
        errs.extend(immutable_data_errors(obj, old, &["data"]));
        errs.extend(self.validate(obj));
        errs
    }
}

/// `stringData` overwrites `data` key by key (base64-encoded), then goes: the v1 -> internal
/// conversion of the apiserver, which has no `stringData`.
pub fn merge_string_data(obj: &mut Value) {
    let Some(string_data) = obj.as_object_mut().and_then(|o| o.remove("stringData")) else {
        return;
    };
    let Some(entries) = string_data.as_object().filter(|m| !m.is_empty()) else {
        return;
    };
    if !obj["data"].is_object() {
        obj["data"] = json!({});
    }
    for (key, value) in entries {
        let text = value.as_str().unwrap_or("");
        let encoded = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
        obj["data"][key] = json!(encoded);
    }
}

fn data_values(obj: &Value) -> impl Iterator<Item = (&String, &Value)> {
    obj["data"].as_object().into_iter().flatten()
}

/// The bytes a base64 value of `data` decodes to.
fn decoded_len(v: &Value) -> usize {
    let s = v.as_str().unwrap_or("");
    let padding = s.bytes().rev().take_while(|b| *b == b'=').count();
    (s.len() / 4 * 3).saturating_sub(padding)
}

fn decoded(v: &Value) -> Vec<u8> {
    base64::engine::general_purpose::STANDARD
        .decode(v.as_str().unwrap_or(""))
        .unwrap_or_default()
}

/// The keys each well-known Secret type requires (`ValidateSecret`'s switch).
fn type_errors(obj: &Value) -> Vec<StatusCause> {
    let data = &obj["data"];
    let has = |k: &str| data.get(k).is_some();
    let required = |k: &str| field::required(&format!("data[{k}]"), "");
    match obj["type"].as_str().unwrap_or("") {
        "kubernetes.io/service-account-token" => {
            let name = obj["metadata"]["annotations"][SERVICE_ACCOUNT_NAME_KEY]
                .as_str()
                .unwrap_or("");
            if name.is_empty() {
                let path = format!("metadata.annotations[{SERVICE_ACCOUNT_NAME_KEY}]");
                return vec![field::required(&path, "")];
            }
            Vec::new()
        }
        "kubernetes.io/dockercfg" => docker_config_errors(data, ".dockercfg"),
        "kubernetes.io/dockerconfigjson" => docker_config_errors(data, ".dockerconfigjson"),
        "kubernetes.io/basic-auth" if !has("username") && !has("password") => {
            vec![required("username"), required("password")]
        }
        "kubernetes.io/ssh-auth" if decoded_len(&data["ssh-privatekey"]) == 0 => {
            vec![required("ssh-privatekey")]
        }
        "kubernetes.io/tls" => ["tls.crt", "tls.key"]
            .into_iter()
            .filter(|k| !has(k))
            .map(required)
            .collect(),
        _ => Vec::new(),
    }
}

/// A docker config key must be present and hold a JSON object.
fn docker_config_errors(data: &Value, key: &str) -> Vec<StatusCause> {
    let path = format!("data[{key}]");
    let Some(value) = data.get(key) else {
        return vec![field::required(&path, "")];
    };
    match go_json_object_error(&decoded(value)) {
        Some(msg) => vec![field::invalid(
            &path,
            &json!("<secret contents redacted>"),
            &msg,
        )],
        None => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn string_data_is_merged_into_data() {
        let mut s = json!({"data": {"a": "eA==", "b": "eQ=="}, "stringData": {"b": "z", "c": "w"}});
        merge_string_data(&mut s);
        assert_eq!(s, json!({"data": {"a": "eA==", "b": "eg==", "c": "dw=="}}));
        let mut empty = json!({"stringData": {}});
        merge_string_data(&mut empty);
        assert_eq!(empty, json!({}));
    }

    #[test]
    fn required_keys_per_type() {
        let msgs = |obj: Value| -> Vec<String> {
            type_errors(&obj)
                .into_iter()
                .map(|c| format!("{}: {}", c.field, c.message))
                .collect()
        };
        assert_eq!(
            msgs(json!({"type": "kubernetes.io/tls", "data": {"tls.crt": ""}})),
            ["data[tls.key]: Required value"]
        );
        assert_eq!(
            msgs(json!({"type": "kubernetes.io/basic-auth"})),
            [
                "data[username]: Required value",
                "data[password]: Required value"
            ]
        );
        assert!(
            msgs(json!({"type": "kubernetes.io/basic-auth", "data": {"password": ""}})).is_empty()
        );
        assert_eq!(
            msgs(json!({"type": "kubernetes.io/dockerconfigjson", "data": {".dockerconfigjson": "W10="}})),
            ["data[.dockerconfigjson]: Invalid value: \"<secret contents redacted>\": json: cannot unmarshal array into Go value of type map[string]interface {}"]
        );
        assert_eq!(
            msgs(json!({"type": "kubernetes.io/service-account-token"})),
            ["metadata.annotations[kubernetes.io/service-account.name]: Required value"]
        );
        assert_eq!(decoded_len(&json!("eHl6")), 3);
        assert_eq!(decoded_len(&json!("eA==")), 1);
    }
}
