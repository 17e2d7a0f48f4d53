//! The MutatingAdmissionWebhook and ValidatingAdmissionWebhook plugins: every create, update,
//! delete and connect of every resource (custom and built-in, subresources included; mutating
//! webhooks see deletes with a null object and may not patch them) goes to the webhooks of
//! the stored Mutating/ValidatingWebhookConfigurations whose `rules`, `namespaceSelector` and
//! `objectSelector` select it, as an `admission.k8s.io/v1` (or `v1beta1`) AdmissionReview.
//!
//! Mutating webhooks run in turn (configurations by name, webhooks in order), each seeing the
//! object the previous ones produced; JSONPatch responses are applied, and once every webhook
//! has run, those with `reinvocationPolicy: IfNeeded` that ran before a later change run once
//! more; in the admission chain's second run (a later plugin changed the object) they run again
//! only if the object changed since the webhooks last returned it, and a webhook the first run
//! did not invoke is not invoked for the first time. The patched object is then decoded and defaulted again (custom resources pruned to their
//! schema). Validating webhooks run concurrently; the first refusal, in configuration order,
//! wins. `failurePolicy`, `timeoutSeconds` (10 s by default), `sideEffects` on dry runs and
//! response `warnings` behave as in the apiserver, and every refusal is worded as it words it.
//! Configurations are read from the store on each request, so a webhook takes effect on the
//! first request after its configuration's create returns. The admission kinds themselves are
//! never intercepted. `matchConditions` are CEL over `object`, `oldObject`, `request` and
//! `authorizer`. Under `matchPolicy: Equivalent` (the default) a webhook registered for another
//! served version of the resource is called too, with the objects converted to its version (and
//! a mutating webhook's patch applied there and converted back), and its `matchConditions` see
//! the objects in its version.

use std::collections::HashSet;
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use base64::Engine;
use futures_util::future::{join_all, BoxFuture};
use serde_json::{json, Value};

use super::equivalent::{self, Converted};
use super::{Attributes, Mutating, Operation, Validating};
use crate::cel::{Bindings, ExpressionCache};
use crate::context::ReinvocationMemo;
use crate::error::ApiError;
use crate::registry::resource::ApiResource;
use crate::registry::validation::selector_matches;
use crate::store::{GroupResource, Snapshot};
use crate::webhook::{ClientConfig, WebhookClient};

/// The group of the admission configuration kinds, which admission never intercepts.
pub(super) const EXEMPT_GROUP: &str = "admissionregistration.k8s.io";
/// Resources of [`EXEMPT_GROUP`] exempt from admission
/// (`IsExemptAdmissionConfigurationResource`).
const EXEMPT: &[&str] = &[
    "mutatingwebhookconfigurations",
    "validatingwebhookconfigurations",
    "validatingadmissionpolicies",
    "validatingadmissionpolicybindings",
    "mutatingadmissionpolicies",
    "mutatingadmissionpolicybindings",
];
/// Whether the request is for an admission configuration kind, which admission never
/// intercepts.
pub(super) fn is_exempt(attrs: &Attributes<'_>) -> bool {
    let res = attrs.resource;
    res.group == EXEMPT_GROUP && EXEMPT.contains(&res.plural.as_str())
}

/// A webhook's timeout when its configuration names none.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// Calls mutating admission webhooks. See the module documentation.
pub struct MutatingWebhooks {
    client: Arc<WebhookClient>,
}

/// Calls validating admission webhooks. See the module documentation.
pub struct ValidatingWebhooks {
    client: Arc<WebhookClient>,
}

impl MutatingWebhooks {
    /// Calls webhooks through `client`.
    pub fn new(client: Arc<WebhookClient>) -> Self {
        MutatingWebhooks { client }
    }
}

impl ValidatingWebhooks {
    /// Calls webhooks through `client`.
    pub fn new(client: Arc<WebhookClient>) -> Self {
        ValidatingWebhooks { client }
    }
}

/// The webhooks of every configuration of `resource` that select this request, in order:
/// configurations by name, webhooks as listed; an error when a webhook's `matchConditions`
/// cannot be evaluated and its failure policy is Fail.
async fn selected_hooks(
    attrs: &Attributes<'_>,
    snap: &Snapshot,
    resource: &str,
    object: Option<&Value>,
) -> Result<Vec<Invocation>, ApiError> {
    if is_exempt(attrs) {
        return Ok(Vec::new());
    }
    let gr = GroupResource::new(EXEMPT_GROUP, resource);
    let mut configs: Vec<_> = snap.list(&gr, None).map(|(_, o)| o.value()).collect();
    configs.sort_by(|a, b| {
        a["metadata"]["name"]
            .as_str()
            .cmp(&b["metadata"]["name"].as_str())
    });
    let mut selected = Vec::new();
    let mut hooks: Vec<(&str, &Value)> = Vec::new();
    for config in &configs {
        let name = config["metadata"]["name"].as_str().unwrap_or("");
        let each = config["webhooks"].as_array().into_iter().flatten();
        hooks.extend(each.map(|h| (name, h)));
    }
    for (config, hook) in hooks {
        let Some(target) = matched_version(hook, attrs) else {
            continue;
        };
        if selectors_select(hook, attrs, snap, object)
            && conditions_match_in_version(hook, attrs, object, target.as_deref()).await?
        {
            selected.push(Invocation {
                config: config.to_string(),
                hook: hook.clone(),
                target,
            });
        }
    }
    Ok(selected)
}

/// A webhook to call, and the version of the resource it registered for when that is not the
/// request's (`matchPolicy: Equivalent`): it then sees the object in that version.
struct Invocation {
    /// The configuration's name: with the webhook's, its identity.
    config: String,
    hook: Value,
    target: Option<Arc<ApiResource>>,
}

impl Invocation {
    /// The webhook's identity across the chain's two runs.
    fn id(&self) -> String {
        format!(
            "{}/{}",
            self.config,
            self.hook["name"].as_str().unwrap_or("")
        )
    }
}

/// The mutating webhooks' plugin name, under which their reinvocation memo is kept.
const PLUGIN: &str = "MutatingAdmissionWebhook";

/// Whether a webhook's rules select the request: in its own version (`Some(None)`), or, under
/// `matchPolicy: Equivalent` (the default), in another served version of the same resource
/// (`Some(Some(version))`, the first such version).
fn matched_version(hook: &Value, attrs: &Attributes<'_>) -> Option<Option<Arc<ApiResource>>> {
    let rules = hook["rules"].as_array().map_or(&[][..], Vec::as_slice);
    if rules.iter().any(|r| rule_matches(r, attrs)) {
        return Some(None);
    }
    if hook["matchPolicy"] == "Exact" {
        return None;
    }
    equivalent::first_match(attrs, |a| rules.iter().any(|r| rule_matches(r, a))).map(Some)
}

/// The variables `matchConditions` may use (`authorizer` is not offered: no authorization yet).
const CONDITION_VARS: [&str; 4] = ["object", "oldObject", "request", "authorizer"];
/// `matchConditions`, compiled once per source for every server of the process.
static CONDITIONS: LazyLock<ExpressionCache> =
    LazyLock::new(|| ExpressionCache::new(&CONDITION_VARS));

/// `matchConditions`: every condition must hold. One that is false skips the webhook; one that
/// cannot be compiled or evaluated fails the request (403) under `failurePolicy: Fail`, and
/// skips the webhook under Ignore.
/// Whether a webhook's `matchConditions` hold, over the objects in the version it is called
/// with (its own under `matchPolicy: Equivalent`, converted there only when it has conditions).
async fn conditions_match_in_version(
    hook: &Value,
    attrs: &Attributes<'_>,
    object: Option<&Value>,
    target: Option<&ApiResource>,
) -> Result<bool, ApiError> {
    let has_conditions = hook["matchConditions"]
        .as_array()
        .is_some_and(|c| !c.is_empty());
    match target {
        Some(target) if has_conditions => {
            let converted = Converted::new(attrs, target, object).await?;
            let as_target = converted.attributes(attrs, target);
            conditions_match(hook, &as_target, converted.object.as_ref())
        }
        _ => conditions_match(hook, attrs, object),
    }
}

fn conditions_match(
    hook: &Value,
    attrs: &Attributes<'_>,
    object: Option<&Value>,
) -> Result<bool, ApiError> {
    let Some(conditions) = hook["matchConditions"].as_array().filter(|c| !c.is_empty()) else {
        return Ok(true);
    };
    let request = review(hook, attrs, object, "")["request"].take();
    let (object, old) = (
        object.cloned().unwrap_or(Value::Null),
        attrs.old_object.cloned().unwrap_or(Value::Null),
    );
    let snap = attrs.store.snapshot();
    let vars = Bindings::new(&[
        ("object", &object),
        ("oldObject", &old),
        ("request", &request),
    ])
    .authorizer("authorizer", super::authorizer(attrs, &snap));
    let mut errors = Vec::new();
    for condition in conditions {
        let src = condition["expression"].as_str().unwrap_or("");
        let result = CONDITIONS
            .get(src)
            .map_err(|e| e.to_string())
            .and_then(|e| {
                e.eval_bound(&vars)
                    .and_then(|v| v.as_bool().ok_or(crate::cel::EvalError::NoOverload))
                    .map_err(|e| format!("expression '{src}' resulted in error: {e}"))
            });
        match result {
            Ok(false) => return Ok(false),
            Ok(true) => {}
            Err(e) => errors.push(e),
        }
    }
    if errors.is_empty() || hook["failurePolicy"] == "Ignore" {
        return Ok(errors.is_empty());
    }
    let why = match errors.as_slice() {
        [one] => one.clone(),
        _ => format!("[{}]", errors.join(", ")),
    };
    let res = attrs.resource;
    Err(ApiError::forbidden(
        &res.group,
        &res.plural,
        attrs.name,
        &why,
    ))
}

/// Whether a webhook's object and namespace selectors select the request.
fn selectors_select(
    hook: &Value,
    attrs: &Attributes<'_>,
    snap: &Snapshot,
    object: Option<&Value>,
) -> bool {
    // `MatchObjectSelector`: an empty selector selects all; else the new or the old object.
    let selector = &hook["objectSelector"];
    let selector_empty = selector.as_object().is_none_or(|s| s.is_empty());
    let object_selected = selector_empty
        || [object, attrs.old_object]
            .into_iter()
            .flatten()
            .any(|o| selector_matches(selector, &o["metadata"]["labels"]).unwrap_or(false));
    if !object_selected {
        return false;
    }
    selector_or_all(
        &hook["namespaceSelector"],
        &namespace_labels(attrs, snap, object),
    )
}

/// A `LabelSelector` that is absent or empty selects everything.
pub(super) fn selector_or_all(selector: &Value, labels: &Value) -> bool {
    if selector.as_object().is_none_or(|s| s.is_empty()) {
        return true;
    }
    selector_matches(selector, labels).unwrap_or(false)
}

/// The labels a `namespaceSelector` sees: the namespace's (a namespace's own for namespaces;
/// cluster-scoped objects always match, which an empty label set with an empty selector gives).
pub(super) fn namespace_labels(
    attrs: &Attributes<'_>,
    snap: &Snapshot,
    object: Option<&Value>,
) -> Value {
    let res = attrs.resource;
    if res.group.is_empty() && res.plural == "namespaces" {
        return object
            .or(attrs.old_object)
            .map_or(Value::Null, |o| o["metadata"]["labels"].clone());
    }
    if attrs.namespace.is_empty() {
        return Value::Null;
    }
    let key = crate::store::ObjectKey::new("", attrs.namespace);
    snap.get(&GroupResource::new("", "namespaces"), &key)
        .map_or(Value::Null, |ns| ns.value()["metadata"]["labels"].clone())
}

/// One rule (`RuleWithOperations`) against the request: operation, group, version,
/// `resource[/subresource]` with `*` wildcards, and scope.
pub(super) fn rule_matches(rule: &Value, attrs: &Attributes<'_>) -> bool {
    let res = attrs.resource;
    let any = |key: &str, want: &str| {
        rule[key]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .any(|v| v == "*" || v == want)
    };
    let resource_matches = rule["resources"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .any(|r| {
            let (name, sub) = r.split_once('/').unwrap_or((r, ""));
            (name == "*" || name == res.plural) && (sub == "*" || sub == attrs.subresource)
        });
    let scope = match rule["scope"].as_str().unwrap_or("*") {
        "Cluster" => !res.namespaced,
        "Namespaced" => res.namespaced,
        _ => true,
    };
    any("operations", attrs.operation.as_str())
        && any("apiGroups", &res.group)
        && any("apiVersions", &res.version)
        && resource_matches
        && scope
}

/// The AdmissionReview sent to `hook`.
fn review(hook: &Value, attrs: &Attributes<'_>, object: Option<&Value>, uid: &str) -> Value {
    let mut request = request_fields(attrs, object);
    request["uid"] = json!(uid);
    json!({"kind": "AdmissionReview", "apiVersion": review_api_version(hook), "request": request})
}

/// The review a webhook registered for another version of the resource gets: `kind` and
/// `resource` name that version, and the objects are converted to it (`requestKind` and
/// `requestResource` still name the request's).
async fn equivalent_review(
    hook: &Value,
    attrs: &Attributes<'_>,
    object: Option<&Value>,
    uid: &str,
    target: &ApiResource,
) -> Result<Value, ApiError> {
    let converted = Converted::new(attrs, target, object).await?;
    let mut body = review(hook, attrs, object, uid);
    let request = &mut body["request"];
    request["kind"] =
        json!({"group": target.group, "version": target.version, "kind": target.kind});
    request["resource"] =
        json!({"group": target.group, "version": target.version, "resource": target.plural});
    for (field, value) in [("object", converted.object), ("oldObject", converted.old)] {
        if let Some(v) = value {
            request[field] = v;
        }
    }
    Ok(body)
}

/// The `AdmissionRequest` of a request, every field the apiserver fills but the uid (the
/// `request` of webhooks' reviews and of admission expressions).
pub(super) fn request_fields(attrs: &Attributes<'_>, object: Option<&Value>) -> Value {
    let res = attrs.resource;
    let ctx = attrs.ctx;
    let mut kind = json!({"group": res.group, "version": res.version, "kind": res.kind});
    if attrs.operation == Operation::Connect {
        // The kind of a connection is its options' (`PodExecOptions`).
        if let Some((_, _, options)) = res
            .subresource(attrs.subresource)
            .and_then(|s| s.response.clone())
        {
            kind["kind"] = json!(options);
        }
    }
    let resource = json!({"group": res.group, "version": res.version, "resource": res.plural});
    let (mut request_kind, mut request_resource) = (kind.clone(), resource.clone());
    let asked = attrs.request_resource;
    request_kind["version"] = json!(asked.version);
    request_resource["version"] = json!(asked.version);
    let mut request = json!({
        "uid": "", "kind": kind, "resource": resource, "requestKind": request_kind,
        "requestResource": request_resource, "operation": attrs.operation.as_str(),
        "userInfo": {"username": ctx.user.name, "groups": ctx.user.groups},
        "object": object.cloned().unwrap_or(Value::Null),
        "oldObject": attrs.old_object.cloned().unwrap_or(Value::Null),
        "dryRun": ctx.dry_run, "options": options(attrs),
    });
    for (key, value) in [
        ("subResource", attrs.subresource),
        ("requestSubResource", attrs.subresource),
        ("name", attrs.name),
        ("namespace", attrs.namespace),
    ] {
        if !value.is_empty() {
            request[key] = json!(value);
        }
    }
    if !ctx.user.uid.is_empty() {
        request["userInfo"]["uid"] = json!(ctx.user.uid);
    }
    request
}

/// The operation's options object (`CreateOptions`, ...), as the request gave them; none for a
/// connection (its options are the object).
fn options(attrs: &Attributes<'_>) -> Value {
    let kind = match attrs.operation {
        Operation::Create => "CreateOptions",
        Operation::Update => "UpdateOptions",
        Operation::Delete => "DeleteOptions",
        Operation::Connect => return Value::Null,
    };
    let mut options = json!({"kind": kind, "apiVersion": "meta.k8s.io/v1"});
    if attrs.ctx.dry_run {
        options["dryRun"] = json!(["All"]);
    }
    if let Some(manager) = &attrs.ctx.field_manager {
        options["fieldManager"] = json!(manager);
    }
    options
}

/// `admission.k8s.io/v1`, or `v1beta1` when the webhook lists it first.
fn review_api_version(hook: &Value) -> &'static str {
    let versions = hook["admissionReviewVersions"].as_array();
    let first = versions
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .find(|v| *v == "v1" || *v == "v1beta1");
    match first {
        Some("v1beta1") => "admission.k8s.io/v1beta1",
        _ => "admission.k8s.io/v1",
    }
}

/// What a webhook answered.
struct Answer {
    allowed: bool,
    /// The JSONPatch of a mutating webhook.
    patch: Option<Value>,
    warnings: Vec<String>,
    status: Value,
}

/// Why a webhook could not be used (`ErrCallingWebhook`): subject to `failurePolicy`.
struct CallError(String);

/// `VerifyAdmissionResponse`.
fn verify(response: &Value, hook: &Value, uid: &str, mutating: bool) -> Result<Answer, String> {
    let v1 = review_api_version(hook) == "admission.k8s.io/v1";
    let Some(resp) = response.get("response").filter(|r| r.is_object()) else {
        return Err("webhook response was absent".into());
    };
    if v1 {
        let got = resp["uid"].as_str().unwrap_or("");
        if got != uid {
            return Err(format!("expected response.uid={uid:?}, got {got:?}"));
        }
        let gvk = format!(
            "{}, Kind={}",
            response["apiVersion"].as_str().unwrap_or(""),
            response["kind"].as_str().unwrap_or("")
        );
        if gvk != "admission.k8s.io/v1, Kind=AdmissionReview" {
            return Err(format!(
                "expected webhook response of admission.k8s.io/v1, Kind=AdmissionReview, got {gvk}"
            ));
        }
    }
    let patch = resp["patch"].as_str().filter(|p| !p.is_empty());
    let patch_type = resp["patchType"].as_str().filter(|p| !p.is_empty());
    match (patch, patch_type, mutating) {
        (Some(_), None, true) => {
            return Err("webhook returned response.patch but not response.patchType".into())
        }
        (None, Some(_), true) => {
            return Err("webhook returned response.patchType but not response.patch".into())
        }
        (Some(_), Some(t), true) if t != "JSONPatch" => {
            return Err(format!(
                "webhook returned invalid response.patchType of {t:?}"
            ))
        }
        (Some(_), _, false) => {
            return Err("validating webhook may not return response.patch".into())
        }
        (_, Some(_), false) => {
            return Err("validating webhook may not return response.patchType".into())
        }
        _ => {}
    }
    let patch = match patch {
        Some(p) => {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(p)
                .map_err(|e| format!("illegal base64 data in response.patch: {e}"))?;
            Some(serde_json::from_slice(&bytes).map_err(|e| {
                let why =
                    crate::typed::syntax::syntax_error(&bytes).unwrap_or_else(|| e.to_string());
                format!("received undecodable patch in webhook response: {why}")
            })?)
        }
        None => None,
    };
    let warnings = resp["warnings"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|w| w.as_str().map(str::to_string))
        .collect();
    Ok(Answer {
        allowed: resp["allowed"].as_bool().unwrap_or(false),
        patch,
        warnings,
        status: resp["status"].clone(),
    })
}

/// Calls one webhook; `Err(Ok(..))` is a refusal that ends the request whatever the failure
/// policy (a dry run the webhook cannot take), `Err(Err(..))` a failed call.
async fn call(
    client: &WebhookClient,
    inv: &Invocation,
    attrs: &Attributes<'_>,
    object: Option<&Value>,
    mutating: bool,
) -> Result<Answer, Result<ApiError, CallError>> {
    let hook = &inv.hook;
    let name = hook["name"].as_str().unwrap_or("");
    if attrs.ctx.dry_run && !matches!(hook["sideEffects"].as_str(), Some("None" | "NoneOnDryRun")) {
        return Err(Ok(ApiError::bad_request(format!(
            "admission webhook {name:?} does not support dry run"
        ))));
    }
    let fail = |why: String| {
        Err(Err(CallError(format!(
            "failed calling webhook {name:?}: {why}"
        ))))
    };
    let config = match ClientConfig::from_value(&hook["clientConfig"]) {
        Ok(c) => c,
        Err(e) => return fail(format!("could not get REST client: {e}")),
    };
    let uid = uuid::Uuid::new_v4().to_string();
    let timeout = hook["timeoutSeconds"]
        .as_u64()
        .map_or(DEFAULT_TIMEOUT, Duration::from_secs);
    let body = match &inv.target {
        None => review(hook, attrs, object, &uid),
        Some(target) => equivalent_review(hook, attrs, object, &uid, target)
            .await
            .map_err(Ok)?,
    };
    let response = match client.post(&config, &body, timeout).await {
        Ok(r) => r,
        Err(e) => return fail(format!("failed to call webhook: {e}")),
    };
    match verify(&response, hook, &uid, mutating) {
        Ok(answer) => Ok(answer),
        Err(e) => fail(format!("received invalid webhook response: {e}")),
    }
}

/// `ToStatusErr`: a webhook's refusal, at least a 400, worded `admission webhook "name" denied
/// the request: ...`.
fn denial(hook: &Value, status: &Value) -> ApiError {
    let name = hook["name"].as_str().unwrap_or("");
    let denied = format!("admission webhook {name:?} denied the request");
    let code = status["code"]
        .as_u64()
        .and_then(|c| u16::try_from(c).ok())
        .filter(|c| *c >= 400)
        .unwrap_or(400);
    let reason = status["reason"].as_str().unwrap_or("").to_string();
    let message = match (
        status["message"].as_str().filter(|m| !m.is_empty()),
        reason.is_empty(),
    ) {
        (Some(m), _) => format!("{denied}: {m}"),
        (None, false) => format!("{denied}: {reason}"),
        (None, true) => format!("{denied} without explanation"),
    };
    ApiError::rejection(code, reason, message)
}

/// Whether a failed call is ignored (`failurePolicy: Ignore`) or fails the request.
fn failed(hook: &Value, err: CallError) -> Result<(), ApiError> {
    if hook["failurePolicy"] == "Ignore" {
        tracing::warn!(webhook = %hook["name"], "failed calling webhook, failing open: {}", err.0);
        Ok(())
    } else {
        Err(ApiError::internal(err.0))
    }
}

impl MutatingWebhooks {
    /// Calls one mutating webhook and applies its patch; returns whether the object changed.
    async fn run(
        &self,
        inv: &Invocation,
        attrs: &Attributes<'_>,
        object: &mut Value,
    ) -> Result<bool, ApiError> {
        let hook = &inv.hook;
        let answer = match call(&self.client, inv, attrs, Some(object), true).await {
            Ok(a) => a,
            Err(Ok(refusal)) => return Err(refusal),
            Err(Err(e)) => return failed(hook, e).map(|()| false),
        };
        for w in &answer.warnings {
            attrs.ctx.warn(w.clone());
        }
        if !answer.allowed {
            return Err(denial(hook, &answer.status));
        }
        let Some(patch) = answer.patch else {
            return Ok(false);
        };
        // Applied by the apiserver's JSON patch library, with its leniencies and messages.
        let patch = match crate::apply::json_patch::decode(&patch) {
            Ok(p) => p,
            Err(e) => {
                let why = format!(
                    "failed calling webhook {:?}: received undecodable patch in webhook response: {e}",
                    hook["name"].as_str().unwrap_or("")
                );
                return failed(hook, CallError(why)).map(|()| false);
            }
        };
        if patch.is_empty() {
            return Ok(false);
        }
        let before = object.clone();
        match &inv.target {
            None => patch.apply(object).map_err(ApiError::internal)?,
            Some(target) => {
                // Patched in the webhook's version, then converted back.
                let codec = &attrs.resource.codec;
                let mut seen = codec.convert_to(object.clone(), &target.codec).await?;
                patch.apply(&mut seen).map_err(ApiError::internal)?;
                *object = target.codec.convert_to(seen, codec).await?;
            }
        }
        Ok(*object != before)
    }
}

impl Mutating for MutatingWebhooks {
    /// Any request, once a MutatingWebhookConfiguration exists (deletes included).
    fn handles(&self, attrs: &Attributes<'_>) -> bool {
        static CONFIGS: LazyLock<GroupResource> =
            LazyLock::new(|| super::configs("mutatingwebhookconfigurations"));
        !super::none_configured(attrs, &CONFIGS)
    }

    fn admit<'a>(
        &'a self,
        attrs: &'a Attributes<'a>,
        object: &'a mut Value,
    ) -> BoxFuture<'a, Result<(), ApiError>> {
        Box::pin(async move {
            let snap = attrs.store.snapshot();
            let mut hooks =
                selected_hooks(attrs, &snap, "mutatingwebhookconfigurations", Some(object)).await?;
            let if_needed = |inv: &Invocation| inv.hook["reinvocationPolicy"] == "IfNeeded";
            if attrs.ctx.reinvocation().reinvoking {
                // The chain's second run: the IfNeeded webhooks the first invoked, once each,
                // when a later plugin changed the object since.
                let Some(memo) = attrs.ctx.memo(PLUGIN).filter(|m| m.output != *object) else {
                    return Ok(());
                };
                hooks.retain(|inv| memo.invoked.contains(&inv.id()));
            } else if hooks.iter().any(if_needed) {
                attrs.ctx.invoked_if_needed();
            }
            if hooks.is_empty() {
                return Ok(());
            }
            // Round one: every hook; a change makes the IfNeeded hooks that ran before it due
            // for a second round.
            let reinvoking = attrs.ctx.reinvocation().reinvoking;
            let mut invoked: HashSet<usize> = HashSet::new();
            let mut again: HashSet<usize> = HashSet::new();
            let mut changed_any = false;
            for (i, inv) in hooks.iter().enumerate() {
                if self.run(inv, attrs, object).await? {
                    if !reinvoking {
                        again.extend(invoked.iter().copied());
                    }
                    changed_any = true;
                }
                if if_needed(inv) {
                    invoked.insert(i);
                }
            }
            for (i, inv) in hooks.iter().enumerate().filter(|(i, _)| again.contains(i)) {
                debug_assert!(invoked.contains(&i));
                changed_any |= self.run(inv, attrs, object).await?;
            }
            if changed_any {
                // The patched object is decoded and defaulted again (custom resources pruned).
                let quiet = attrs.ctx.for_controller("admission");
                attrs.resource.strategy.decode(object, &quiet)?;
            }
            if !reinvoking && !invoked.is_empty() {
                let invoked = invoked.iter().map(|&i| hooks[i].id()).collect();
                let output = object.clone();
                attrs
                    .ctx
                    .remember(PLUGIN, ReinvocationMemo { output, invoked });
            }
            Ok(())
        })
    }

    fn admit_delete<'a>(
        &'a self,
        attrs: &'a Attributes<'a>,
    ) -> BoxFuture<'a, Result<(), ApiError>> {
        Box::pin(async move {
            let snap = attrs.store.snapshot();
            let hooks = selected_hooks(attrs, &snap, "mutatingwebhookconfigurations", None).await?;
            for inv in &hooks {
                self.run_delete(inv, attrs).await?;
            }
            Ok(())
        })
    }
}

impl MutatingWebhooks {
    /// One mutating webhook called for a delete: `object` is null, so any patch is refused
    /// as the apiserver refuses it.
    async fn run_delete(&self, inv: &Invocation, attrs: &Attributes<'_>) -> Result<(), ApiError> {
        let hook = &inv.hook;
        let answer = match call(&self.client, inv, attrs, None, true).await {
            Ok(a) => a,
            Err(Ok(refusal)) => return Err(refusal),
            Err(Err(e)) => return failed(hook, e),
        };
        for w in &answer.warnings {
            attrs.ctx.warn(w.clone());
        }
        if !answer.allowed {
            return Err(denial(hook, &answer.status));
        }
        let ops = answer
            .patch
            .as_ref()
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        if ops > 0 {
            let name = hook["name"].as_str().unwrap_or("");
            return Err(ApiError::internal(format!(
                "admission webhook {name:?} attempted to modify the object, which is not supported for this operation"
            )));
        }
        Ok(())
    }
}

impl Validating for ValidatingWebhooks {
    /// Any request, once a ValidatingWebhookConfiguration exists.
    fn handles(&self, attrs: &Attributes<'_>) -> bool {
        static CONFIGS: LazyLock<GroupResource> =
            LazyLock::new(|| super::configs("validatingwebhookconfigurations"));
        !super::none_configured(attrs, &CONFIGS)
    }

    fn validate<'a>(
        &'a self,
        attrs: &'a Attributes<'a>,
        object: Option<&'a Value>,
    ) -> BoxFuture<'a, Result<(), ApiError>> {
        Box::pin(async move {
            let snap = attrs.store.snapshot();
            let hooks =
                selected_hooks(attrs, &snap, "validatingwebhookconfigurations", object).await?;
            if hooks.is_empty() {
                return Ok(());
            }
            let calls = hooks.iter().map(|inv| async move {
                (
                    &inv.hook,
                    call(&self.client, inv, attrs, object, false).await,
                )
            });
            for (hook, result) in join_all(calls).await {
                match result {
                    Ok(answer) => {
                        for w in &answer.warnings {
                            attrs.ctx.warn(w.clone());
                        }
                        if !answer.allowed {
                            return Err(denial(hook, &answer.status));
                        }
                    }
                    Err(Ok(refusal)) => return Err(refusal),
                    Err(Err(e)) => failed(hook, e)?,
                }
            }
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn denials_are_worded_as_the_apiserver_words_them() {
        let hook = json!({"name": "deny.example.com"});
        let d = denial(
            &hook,
            &json!({"message": "no pods on Fridays", "code": 403, "reason": "Forbidden"}),
        );
        assert_eq!((d.code, &*d.reason), (403, "Forbidden"));
        assert_eq!(
            d.message,
            "admission webhook \"deny.example.com\" denied the request: no pods on Fridays"
        );
        let d = denial(&hook, &json!({"code": 200}));
        assert_eq!(d.code, 400, "never below 400");
        assert_eq!(
            d.message,
            "admission webhook \"deny.example.com\" denied the request without explanation"
        );
        let d = denial(&hook, &json!({"reason": "Teapot"}));
        assert_eq!(
            d.message,
            "admission webhook \"deny.example.com\" denied the request: Teapot"
        );
    }

    #[test]
    fn responses_are_verified() {
        let hook = json!({"name": "h", "admissionReviewVersions": ["v1"]});
        let ok = |resp: Value| json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": resp});
        let err = |resp: Value, mutating: bool| verify(&ok(resp), &hook, "u", mutating).err();
        assert_eq!(err(json!({"uid": "u", "allowed": true}), false), None);
        assert_eq!(
            err(json!({"uid": "x", "allowed": true}), false).as_deref(),
            Some("expected response.uid=\"u\", got \"x\"")
        );
        assert_eq!(
            err(json!({"uid": "u", "allowed": true, "patch": "W10="}), true).as_deref(),
            Some("webhook returned response.patch but not response.patchType")
        );
        assert_eq!(
            err(
                json!({"uid": "u", "allowed": true, "patch": "W10=", "patchType": "JSONPatch"}),
                false
            )
            .as_deref(),
            Some("validating webhook may not return response.patch")
        );
        assert_eq!(
            verify(&json!({}), &hook, "u", false).err().as_deref(),
            Some("webhook response was absent")
        );
        let answer = verify(
            &ok(
                json!({"uid": "u", "allowed": true, "patch": "W10=", "patchType": "JSONPatch",
            "warnings": ["careful"]}),
            ),
            &hook,
            "u",
            true,
        )
        .expect("valid");
        assert_eq!(answer.patch, Some(json!([])));
        assert_eq!(answer.warnings, ["careful"]);
    }
}
