//! The strategy of every custom resource: the status/spec split and generation rules that depend
//! on whether the CRD version enables the `/status` subresource. Schema validation, pruning and
//! defaulting plug in here as they are built.

use serde_json::Value;

use super::{bump_generation, Strategy};

/// Strategy for one served version of a CRD.
pub struct CustomResourceStrategy {
    /// Whether `/status` is enabled: main-resource writes then leave `.status` alone.
    pub status_enabled: bool,
}

impl Strategy for CustomResourceStrategy {
    fn prepare_for_create(&self, obj: &mut Value) {
        if self.status_enabled {
            if let Some(o) = obj.as_object_mut() {
                o.remove("status");
            }
        }
    }

    fn prepare_for_update(&self, obj: &mut Value, old: &Value) {
        if self.status_enabled {
            match old.get("status") {
                Some(s) => obj["status"] = s.clone(),
                None => {
                    if let Some(o) = obj.as_object_mut() {
                        o.remove("status");
                    }
                }
            }
        }
        bump_generation(obj, old, self.status_enabled);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn status_is_server_owned_only_with_the_subresource() {
        let with = CustomResourceStrategy {
            status_enabled: true,
        };
        let mut obj = json!({"metadata": {}, "status": {"x": 1}});
        with.prepare_for_create(&mut obj);
        assert!(obj.get("status").is_none());

        let without = CustomResourceStrategy {
            status_enabled: false,
        };
        let mut obj = json!({"metadata": {}, "status": {"x": 1}});
        without.prepare_for_create(&mut obj);
        assert_eq!(obj["status"]["x"], 1);
    }
}
