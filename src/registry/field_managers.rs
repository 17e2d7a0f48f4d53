//! The registry's side of [`crate::apply::versions`]: server-side apply and the managedFields
//! of every write are pure and synchronous, but a managedFields entry recorded through another
//! version of the resource is compared in that version, and getting there may take a
//! conversion webhook. [`with_versions`] runs the pure code, answers what it lacked (the other
//! versions' schemas from the catalog, conversions through the codecs) and runs it again, as
//! often as it keeps lacking something (a few rounds at most: each round only follows the
//! conversions the previous one revealed).

use serde_json::Value;

use super::resource::ApiResource;
use crate::apply::versions::{Known, Need, Versions};
use crate::error::ApiError;
use crate::state::State;

/// More rounds than any apply needs (one per version it passes through, plus one).
const MAX_ROUNDS: usize = 8;

/// `run` with every other version it asks about answered. Past a few rounds the last result
/// stands (unknown conversions then compare objects as they are).
pub async fn with_versions<T>(
    state: &State,
    res: &ApiResource,
    run: impl Fn(&Versions<'_>) -> T,
) -> Result<T, ApiError> {
    let own = res.api_version();
    let mut known = Known::default();
    for _ in 0..MAX_ROUNDS {
        let versions = Versions::new(&own, &known);
        let out = run(&versions);
        let needs = versions.into_needs();
        if needs.is_empty() {
            return Ok(out);
        }
        learn(state, res, &mut known, needs).await?;
    }
    Ok(run(&Versions::new(&own, &known)))
}

/// Whether a write's managedFields (the stored ones, or those the client sent) name another
/// version than `api_version`: the writes that need [`with_versions`] at all.
pub fn names_other_versions(objects: &[Option<&Value>], api_version: &str) -> bool {
    objects.iter().flatten().any(|o| {
        o["metadata"]["managedFields"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|e| e["apiVersion"].as_str().is_some_and(|v| v != api_version))
    })
}

async fn learn(
    state: &State,
    res: &ApiResource,
    known: &mut Known,
    needs: Vec<Need>,
) -> Result<(), ApiError> {
    let registry = state.registry();
    let sibling = |api_version: &str| {
        registry
            .served()
            .find(|r| {
                r.group() == res.group
                    && r.plural() == res.plural
                    && crate::registry::resource::api_version(r.group(), r.version()) == api_version
            })
            .map(|r| r.resource().clone())
    };
    for need in needs {
        match need {
            Need::Version(v) => match sibling(&v) {
                Some(r) => known.learn_version(&v, true, r.schema.shared()),
                None => known.learn_version(&v, false, None),
            },
            Need::Conversion { from, to, object } => {
                let converted = match (sibling(&from), sibling(&to)) {
                    (Some(f), Some(t)) => f.codec.convert_to(object.clone(), &t.codec).await?,
                    _ => object.clone(),
                };
                known.learn_conversion(&from, &to, object, converted);
            }
        }
    }
    Ok(())
}
