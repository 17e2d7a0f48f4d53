//! The `/scale` subresource of custom resources: an `autoscaling/v1 Scale` view of the object,
//! read from and written to the JSON paths the CRD names (`specReplicasPath`,
//! `statusReplicasPath`, `labelSelectorPath`).

use serde_json::{json, Map, Value};

use crate::error::{field, ApiError};
use crate::machinery::selector::{label_selector_string, set_string};
use crate::registry::apiextensions::{ScaleSubresource, SelectorFormat};

fn segments(path: &str) -> impl Iterator<Item = &str> {
    path.split('.').filter(|s| !s.is_empty())
}

fn lookup<'a>(obj: &'a Value, path: &str) -> Option<&'a Value> {
    segments(path).try_fold(obj, |v, seg| v.get(seg))
}

/// The Scale of an object.
pub fn to_scale(cfg: &ScaleSubresource, obj: &Value) -> Result<Value, ApiError> {
    let spec = match lookup(obj, &cfg.spec_replicas_path) {
        Some(v) => v.as_i64().ok_or_else(|| {
            ApiError::internal(format!(
                "the spec replicas field {:?} cannot be converted to int64",
                cfg.spec_replicas_path
            ))
        })?,
        None => {
            return Err(ApiError::internal(format!(
                "the spec replicas field {:?} does not exist",
                cfg.spec_replicas_path
            )))
        }
    };
    let status_replicas = lookup(obj, &cfg.status_replicas_path)
        .and_then(Value::as_i64)
        .unwrap_or(0);
    let at_path = cfg
        .label_selector_path
        .as_deref()
        .and_then(|p| lookup(obj, p));
    let selector = match (cfg.selector_format, at_path) {
        (_, None) => String::new(),
        (SelectorFormat::Text, Some(v)) => v.as_str().unwrap_or("").to_string(),
        (SelectorFormat::LabelSelector, Some(v)) => label_selector_string(v).unwrap_or_default(),
        (SelectorFormat::Map, Some(v)) => set_string(v),
    };
    let meta = &obj["metadata"];
    let mut metadata = Map::new();
    for key in [
        "name",
        "namespace",
        "uid",
        "resourceVersion",
        "creationTimestamp",
    ] {
        if let Some(v) = meta.get(key) {
            metadata.insert(key.into(), v.clone());
        }
    }
    let mut scale = json!({
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": metadata,
        "spec": {},
        "status": {"replicas": status_replicas},
    });
    if spec != 0 {
        scale["spec"]["replicas"] = json!(spec);
    }
    if !selector.is_empty() {
        scale["status"]["selector"] = json!(selector);
    }
    Ok(scale)
}

/// Decodes a Scale sent by a client (`autoscaling/v1`), validates it where the subresource does
/// (`spec.replicas >= 0`), and returns the desired replicas.
pub fn desired_replicas(
    cfg: &ScaleSubresource,
    scale: &Value,
    name: &str,
) -> Result<i64, ApiError> {
    let api_version = scale["apiVersion"].as_str().unwrap_or("autoscaling/v1");
    let kind = scale["kind"].as_str().unwrap_or("Scale");
    if api_version != "autoscaling/v1" || kind != "Scale" {
        return Err(ApiError::bad_request(format!(
            "{kind} in version {:?} cannot be handled as a Scale: no kind {kind:?} is registered for version {api_version:?} in scheme",
            api_version.rsplit('/').next().unwrap_or("")
        )));
    }
    let replicas = match scale["spec"].get("replicas") {
        None | Some(Value::Null) => 0,
        Some(v) => v.as_i64().ok_or_else(|| {
            ApiError::bad_request(format!(
                "Scale in version \"v1\" cannot be handled as a Scale: json: cannot unmarshal {} into Go struct field ScaleSpec.spec.replicas of type int32",
                if v.is_string() { "string" } else { "number" }
            ))
        })?,
    };
    if replicas < 0 && cfg.validates_scale {
        return Err(ApiError::invalid(
            "autoscaling",
            "Scale",
            name,
            vec![field::invalid(
                "spec.replicas",
                &json!(replicas),
                "must be greater than or equal to 0",
            )],
        ));
    }
    Ok(replicas)
}

/// Writes the desired replicas into an object at `specReplicasPath`.
pub fn set_replicas(cfg: &ScaleSubresource, obj: &mut Value, replicas: i64) {
    let mut node = obj;
    let parts: Vec<&str> = segments(&cfg.spec_replicas_path).collect();
    let Some((last, parents)) = parts.split_last() else {
        return;
    };
    for seg in parents {
        if !node.get(*seg).is_some_and(Value::is_object) {
            node[*seg] = json!({});
        }
        node = &mut node[*seg];
    }
    node[*last] = json!(replicas);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cfg(selector: Option<&str>) -> ScaleSubresource {
        ScaleSubresource {
            spec_replicas_path: ".spec.replicas".into(),
            status_replicas_path: ".status.replicas".into(),
            label_selector_path: selector.map(str::to_string),
            ..Default::default()
        }
    }

    #[test]
    fn scale_view() {
        let obj = json!({"metadata": {"name": "c", "namespace": "d", "resourceVersion": "5"},
                         "spec": {"replicas": 3}, "status": {"replicas": 2, "labelSelector": "app=x"}});
        let s = to_scale(&cfg(Some(".status.labelSelector")), &obj).expect("scale");
        assert_eq!(s["spec"]["replicas"], 3);
        assert_eq!(s["status"], json!({"replicas": 2, "selector": "app=x"}));
        assert_eq!(s["metadata"]["resourceVersion"], "5");
        let no_status = json!({"metadata": {"name": "c"}, "spec": {"replicas": 0}});
        let s = to_scale(&cfg(None), &no_status).expect("scale");
        assert_eq!(s["spec"], json!({}));
        assert_eq!(s["status"], json!({"replicas": 0}));
    }

    #[test]
    fn missing_spec_replicas_is_the_apiservers_500() {
        let err = to_scale(&cfg(None), &json!({"metadata": {}, "spec": {}})).expect_err("missing");
        assert_eq!(err.code, 500);
        assert_eq!(
            err.message,
            "Internal error occurred: the spec replicas field \".spec.replicas\" does not exist"
        );
    }

    #[test]
    fn selectors_print_as_the_apiserver_prints_them() {
        let sel = json!({"matchLabels": {"b": "2", "a": "1"},
            "matchExpressions": [{"key": "c", "operator": "In", "values": ["y", "x"]},
                                 {"key": "aa", "operator": "DoesNotExist"}]});
        assert_eq!(
            label_selector_string(&sel).as_deref(),
            Some("a=1,!aa,b=2,c in (x,y)")
        );
        assert_eq!(label_selector_string(&json!({})).as_deref(), Some(""));
        assert_eq!(set_string(&json!({"z": "1", "a": "2"})), "a=2,z=1");
        let cfg = ScaleSubresource {
            spec_replicas_path: ".spec.replicas".into(),
            status_replicas_path: ".status.replicas".into(),
            label_selector_path: Some(".spec.selector".into()),
            selector_format: SelectorFormat::LabelSelector,
            validates_scale: true,
        };
        let obj = json!({"metadata": {"name": "d"}, "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "x"}}}});
        assert_eq!(
            to_scale(&cfg, &obj).expect("scale")["status"]["selector"],
            "app=x"
        );
    }

    #[test]
    fn writing_replicas() {
        let mut obj = json!({"metadata": {}});
        set_replicas(&cfg(None), &mut obj, 5);
        assert_eq!(obj["spec"]["replicas"], 5);
        let validated = ScaleSubresource {
            validates_scale: true,
            ..cfg(None)
        };
        let negative =
            json!({"apiVersion": "autoscaling/v1", "kind": "Scale", "spec": {"replicas": -1}});
        assert_eq!(desired_replicas(&cfg(None), &negative, "c").ok(), Some(-1));
        let err = desired_replicas(
            &validated,
            &json!({"apiVersion": "autoscaling/v1", "kind": "Scale", "spec": {"replicas": -1}}),
            "c",
        )
        .expect_err("negative");
        assert_eq!(err.message, "Scale.autoscaling \"c\" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0");
    }
}
