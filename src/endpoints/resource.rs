//! Resource requests: resolve the resource a request names, check its scope, subresource and
//! verb the way the apiserver's installed routes do, set the request's options on its context,
//! and dispatch to the verb family.

use std::sync::Arc;

use warp::reply::Response;

use warp::http::StatusCode;

use bytes::Bytes;

use super::accept::{self, Output};
use super::negotiation::{json_value, plain_not_found, Request};
use super::{action, apply, delete, options, read, scale, watch, write};
use crate::context::Context;
use crate::error::ApiError;
use crate::filters::request_info::{RequestInfo, Verb};
use crate::registry::resource::{Action, ApiResource, Subresource, SubresourceKind, UnservedVerb};
use crate::registry::store::{self as rest, Target, UpdateSource};
use crate::state::State;
use crate::store::StoredObject;

/// Everything a verb handler needs about the request it serves.
pub struct Endpoint<'a> {
    /// The server.
    pub state: &'a Arc<State>,
    /// The HTTP request.
    pub req: &'a Request,
    /// Its API coordinates.
    pub info: &'a RequestInfo,
    /// The resource it names, in the version it names.
    pub res: Arc<ApiResource>,
    /// The part of the object a write targets.
    pub target: Target,
    /// The request's context (options set from the query).
    pub ctx: &'a Context,
    /// The negotiated response.
    pub output: Output,
}

impl Endpoint<'_> {
    /// The request's namespace ("" for cluster-scoped requests).
    pub fn namespace(&self) -> &str {
        &self.info.namespace
    }

    /// The object's name ("" for collections).
    pub fn name(&self) -> &str {
        &self.info.name
    }

    /// Updates the named object (or `target` part of it) through the registry store.
    pub async fn update(
        &self,
        target: Target,
        source: UpdateSource<'_>,
    ) -> Result<Arc<StoredObject>, ApiError> {
        rest::update(
            self.state,
            self.ctx,
            &self.res,
            self.namespace(),
            self.name(),
            target,
            source,
        )
        .await
    }

    /// A response with a stored object as this endpoint's version shows it, in the
    /// negotiated format and shape: the object, its metadata only, or a one-row Table
    /// (`transformResponseObject`; for a write, after the write, as the apiserver does, so a
    /// list shape asked of one object is a 406 for a write already made).
    pub async fn respond(
        &self,
        status: StatusCode,
        obj: &Arc<StoredObject>,
    ) -> Result<Response, ApiError> {
        if let Some(only) = self.output.metadata {
            if only.list {
                return Err(only.wrong_shape(&self.res, false));
            }
            return self.respond_json(status, Bytes::from(only.encode(&obj.value())));
        }
        if let Some(include) = self.output.table {
            let shown = self.res.codec.from_storage_one(obj).await?;
            let table = self.res.table.table(&[&shown], "", include, true);
            return Ok(json_value(status, &table));
        }
        let json = self.res.codec.encode(obj).await?;
        accept::render(status, self.output.format, json)
    }

    /// A response with a JSON document in the negotiated format.
    pub fn respond_json(&self, status: StatusCode, json: Bytes) -> Result<Response, ApiError> {
        accept::render(status, self.output.format, json)
    }
}

/// Serves a resource request.
pub async fn serve(
    state: &Arc<State>,
    req: &Request,
    info: &RequestInfo,
    ctx: &mut Context,
) -> Result<Response, ApiError> {
    let Some(res) = state
        .registry()
        .resolve(&info.group, &info.version, &info.resource)
    else {
        // Unknown paths below a built-in group (or `/api`) are go-restful's to answer, with a
        // Status; everything else falls through to the apiserver's plain-text not-found
        // handler.
        if crate::registry::builtin::is_group(&info.group) {
            return Err(ApiError::path_not_found());
        }
        return Ok(plain_not_found());
    };
    for warning in &res.warnings {
        ctx.warn(warning.clone());
    }
    if !scope_matches(&res, info) {
        return Ok(plain_not_found());
    }
    let reads = matches!(info.verb, Verb::Get | Verb::List | Verb::Watch);
    // Every verb's answer may be transformed (`AllowsMediaTypeTransform`): a write with
    // `as=PartialObjectMetadata` is applied and answered with the object's metadata.
    let output = accept::negotiate(
        req.header("accept"),
        &res,
        true,
        info.verb == Verb::Watch,
        req.query.get("includeObject"),
    )?;
    let sub = subresource(&res, info)?;
    if let Some(own) = served_by_code(&res, sub.as_ref()) {
        let allowed = match &sub {
            Some(sub) => sub.allows(info.verb.as_str()),
            None => res.allows(info.verb.as_str()),
        };
        if !allowed {
            // A list route serves `?watch`, and refuses it for storage that cannot watch.
            if info.verb == Verb::Watch && sub.is_none() && res.allows("list") {
                return Err(ApiError::method_not_supported(
                    &res.group,
                    &res.plural,
                    "watch",
                ));
            }
            return Err(ApiError::method_not_allowed());
        }
        if !reads {
            options::set_write_options(ctx, req)?;
        }
        let ep = Endpoint {
            state,
            req,
            info,
            res,
            target: Target::Main,
            ctx,
            output,
        };
        return match own {
            Own::Action(act) => action::serve(&ep, &act).await,
            Own::Scale => scale::serve(&ep).await,
        };
    }
    let target = sub.map_or(Target::Main, Target::Part);
    check_verb(&res, info, &target)?;
    if !reads {
        options::set_write_options(ctx, req)?;
    }
    let delete_opts = match info.verb {
        Verb::Delete | Verb::DeleteCollection => options::delete_options(req, ctx)?,
        _ => Default::default(),
    };
    let ep = Endpoint {
        state,
        req,
        info,
        res,
        target,
        ctx,
        output,
    };
    match info.verb {
        Verb::Get => read::get(&ep).await,
        Verb::List => read::list(&ep).await,
        Verb::Watch => watch::start(&ep).await,
        Verb::Create => write::create(&ep).await,
        Verb::Update => write::update(&ep).await,
        Verb::Patch if apply::is_apply(req) => apply::apply(&ep).await,
        Verb::Patch => write::patch(&ep).await,
        Verb::Delete => delete::delete(&ep, &delete_opts).await,
        Verb::DeleteCollection => delete::delete_collection(&ep, &delete_opts).await,
        Verb::Unsupported => Err(ApiError::method_not_allowed()),
    }
}

/// What serves a request with its own code rather than the generic store.
enum Own {
    /// An action: a top-level resource that is never stored (the reviews), or a subresource
    /// (`pods/binding`, `pods/exec`).
    Action(Arc<dyn Action>),
    /// The `scale` subresource.
    Scale,
}

/// The code that serves the resource or subresource a request names, if it is not the
/// generic store's verbs.
fn served_by_code(res: &ApiResource, sub: Option<&Arc<Subresource>>) -> Option<Own> {
    match sub {
        None => res.action.clone().map(Own::Action),
        Some(sub) => match &sub.kind {
            SubresourceKind::Part(_) => None,
            SubresourceKind::Scale(_) => Some(Own::Scale),
            SubresourceKind::Action(act) => Some(Own::Action(act.clone())),
        },
    }
}

/// Whether the path's scope fits the resource: namespaced objects are only reached through
/// `/namespaces/{ns}/` (collections may also be listed and watched across namespaces),
/// cluster-scoped ones never are.
fn scope_matches(res: &ApiResource, info: &RequestInfo) -> bool {
    let collection_verb = matches!(info.verb, Verb::List | Verb::Watch) && info.name.is_empty();
    if res.namespaced {
        info.namespaced_path || collection_verb
    } else {
        !info.namespaced_path
    }
}

/// The subresource a request names, if any; 404 for one the resource does not have.
fn subresource(
    res: &ApiResource,
    info: &RequestInfo,
) -> Result<Option<Arc<Subresource>>, ApiError> {
    if info.subresource.is_empty() {
        return Ok(None);
    }
    res.subresource(&info.subresource)
        .cloned()
        .map(Some)
        .ok_or_else(|| ApiError::not_found(&res.group, &res.plural, &info.name))
}

/// Refuses verbs the resource (or subresource) does not serve.
fn check_verb(res: &ApiResource, info: &RequestInfo, target: &Target) -> Result<(), ApiError> {
    let verb = info.verb.as_str();
    let verb_ok = match target {
        // Discovery hides update and patch of a terminating CRD's objects, but the handler
        // still serves them (finalizers must be removable); only create is refused.
        Target::Main => {
            res.allows(verb)
                || (res.terminating
                    && matches!(info.verb, Verb::Update | Verb::Patch | Verb::Create))
        }
        Target::Part(sub) => sub.allows(verb),
    };
    if verb_ok {
        return Ok(());
    }
    if res.unserved_verb == UnservedVerb::Described && info.verb != Verb::Unsupported {
        return Err(ApiError::method_not_supported(
            &res.group,
            &res.plural,
            verb,
        ));
    }
    Err(ApiError::method_not_allowed())
}
