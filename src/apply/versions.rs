//! Managers recorded through other versions of the resource. A managedFields entry keeps the
//! apiVersion its manager wrote through, and its field set is in that version's paths (a CRD's
//! v1 `spec.cronSpec` may be v2's `spec.schedule`). As structured-merge-diff's `Updater` does,
//! an entry is compared in its own version: the objects are converted there and typed by that
//! version's schema, and the applier's pruning of what it stopped applying is done in the
//! version it last applied through.
//!
//! Conversion may call a webhook (it is async) while the merge is pure and synchronous, so the
//! two meet through memoisation: the pure code asks [`Versions`] for a version's schema or an
//! object's conversion; what is not known yet is recorded as [`Need`]ed and the object is taken
//! as it is. The caller then converts what was needed, adds it to its [`Known`] and runs the
//! pure code again, which is deterministic and so asks for the same things (and, past them, for
//! the next ones) until nothing is missing. The common case, every manager in the request's
//! version, asks for nothing and runs once.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::Arc;

use serde_json::Value;

use crate::schema::{Node, Schema};

/// What the caller has learnt about the resource's other versions.
#[derive(Default)]
pub struct Known {
    /// Each version asked for: its schema (`None` inside when it has none), or `None` when the
    /// resource does not serve it (structured-merge-diff drops such managers).
    schemas: HashMap<String, Option<Option<Arc<Schema>>>>,
    conversions: Vec<Conversion>,
}

/// One object converted between two versions.
pub struct Conversion {
    from: String,
    to: String,
    object: Value,
    converted: Value,
}

/// What a run of the pure code could not answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Need {
    /// The schema of an apiVersion (and whether the resource serves it).
    Version(String),
    /// `object`, in apiVersion `from`, converted to `to`.
    Conversion {
        /// The object's apiVersion.
        from: String,
        /// The apiVersion wanted.
        to: String,
        /// The object.
        object: Value,
    },
}

impl Known {
    /// Records a version's schema; `served: false` for a version the resource does not serve.
    pub fn learn_version(&mut self, version: &str, served: bool, schema: Option<Arc<Schema>>) {
        self.schemas
            .insert(version.to_string(), served.then_some(schema));
    }

    /// Records a conversion.
    pub fn learn_conversion(&mut self, from: &str, to: &str, object: Value, converted: Value) {
        self.conversions.push(Conversion {
            from: from.to_string(),
            to: to.to_string(),
            object,
            converted,
        });
    }
}

/// A version as the pure code sees it.
pub(crate) enum Version<'a> {
    /// Compare in the request's version (it is that version, or it is not known yet).
    Own,
    /// Not served: its managers are dropped.
    NotServed,
    /// Another served version, with its schema.
    Other(Option<&'a Node>),
}

/// `run` knowing nothing about other versions: entries of other versions are compared in the
/// request's (for writes whose managers are all in one version, and kubefake's own
/// controllers).
pub fn single_version<T>(own: &str, run: impl FnOnce(&Versions<'_>) -> T) -> T {
    let known = Known::default();
    run(&Versions::new(own, &known))
}

/// The pure code's view of [`Known`], recording what it lacked.
pub struct Versions<'a> {
    own: &'a str,
    known: &'a Known,
    needs: RefCell<Vec<Need>>,
}

impl<'a> Versions<'a> {
    /// A run for a request in apiVersion `own`.
    pub fn new(own: &'a str, known: &'a Known) -> Versions<'a> {
        Versions {
            own,
            known,
            needs: RefCell::new(Vec::new()),
        }
    }

    /// What this run lacked (empty: its result stands).
    pub fn into_needs(self) -> Vec<Need> {
        self.needs.into_inner()
    }

    fn need(&self, need: Need) {
        let mut needs = self.needs.borrow_mut();
        if !needs.contains(&need) {
            needs.push(need);
        }
    }

    /// The request's apiVersion.
    pub(crate) fn own(&self) -> &'a str {
        self.own
    }

    /// How entries of `version` are compared.
    pub(crate) fn version(&self, version: &str) -> Version<'a> {
        if version == self.own {
            return Version::Own;
        }
        match self.known.schemas.get(version) {
            Some(Some(schema)) => Version::Other(schema.as_deref().map(Schema::root)),
            Some(None) => Version::NotServed,
            None => {
                self.need(Need::Version(version.to_string()));
                Version::Own
            }
        }
    }

    /// `object` (in `from`) as `to` shows it; `object` itself until the conversion is known.
    pub(crate) fn convert(&self, object: Value, from: &str, to: &str) -> Value {
        if from == to {
            return object;
        }
        let found = self
            .known
            .conversions
            .iter()
            .find(|c| c.from == from && c.to == to && c.object == object);
        match found {
            Some(c) => c.converted.clone(),
            None => {
                self.need(Need::Conversion {
                    from: from.to_string(),
                    to: to.to_string(),
                    object: object.clone(),
                });
                object
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn unknown_versions_and_conversions_are_needed_once_then_answered() {
        let mut known = Known::default();
        let obj = json!({"apiVersion": "g/v2", "spec": {"schedule": "x"}});
        let versions = Versions::new("g/v2", &known);
        assert!(matches!(versions.version("g/v2"), Version::Own));
        assert!(matches!(versions.version("g/v1"), Version::Own));
        assert_eq!(versions.convert(obj.clone(), "g/v2", "g/v1"), obj);
        assert_eq!(versions.convert(obj.clone(), "g/v2", "g/v1"), obj);
        let needs = versions.into_needs();
        assert_eq!(needs.len(), 2, "{needs:?}");

        known.learn_version("g/v1", true, None);
        known.learn_version("g/v0", false, None);
        let converted = json!({"apiVersion": "g/v1", "spec": {"cronSpec": "x"}});
        known.learn_conversion("g/v2", "g/v1", obj.clone(), converted.clone());
        let versions = Versions::new("g/v2", &known);
        assert!(matches!(versions.version("g/v1"), Version::Other(None)));
        assert!(matches!(versions.version("g/v0"), Version::NotServed));
        assert_eq!(versions.convert(obj, "g/v2", "g/v1"), converted);
        assert!(versions.into_needs().is_empty());
    }
}
