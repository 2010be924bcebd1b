//! One reconcile of one SandboxAgent, as a function of (agent, context): decide, apply the
//! settings ConfigMap, the agent's ServiceAccount and the Sandbox with server-side apply,
//! then write the status.

use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{ConfigMap, Secret, ServiceAccount};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams, Preconditions};
use kube::runtime::controller::Action;
use kube::runtime::events::EventType;
use kube::{Resource, ResourceExt};
use serde::Serialize;

use crate::conditions::{self as cond, Cond};
use crate::conflict::{self, FIELD_MANAGER};
use crate::crd::SandboxAgent;
use crate::metrics::Outcome;
use crate::objects;
use crate::stored;

mod context;
mod references;
mod report;
use context::{key, MAX_FETCHES};
pub use context::{Context, Error, CONFLICT_RETRIES, MAX_BACKOFF, NOT_READY_RESYNC, RESYNC, SANDBOX_API_RETRY};
pub use references::{api_resource, RefIndex};
use report::{event, failed, reject, wait_for_sandbox_api, write_status};

/// Reconciles an agent as the watch delivers it (untyped, see stored.rs): a valid one as
/// [`reconcile`] does, an unreadable one is refused with the path of the problem.
pub async fn reconcile_stored(obj: Arc<DynamicObject>, ctx: Arc<Context>) -> Result<Action, Error> {
    match stored::parse(&obj) {
        Ok(agent) => reconcile(Arc::new(agent), ctx).await,
        Err(bad) => {
            let started = Instant::now();
            let result = reject(&bad.shell, &ctx, &bad.rejection).await;
            let outcome = if result.is_ok() { Outcome::Rejected } else { Outcome::Error };
            ctx.metrics.record(outcome, started.elapsed());
            result.map(|()| Action::await_change())
        }
    }
}

/// [`error_policy`] for the untyped watch.
pub fn error_policy_stored(obj: Arc<DynamicObject>, err: &Error, ctx: Arc<Context>) -> Action {
    retry_after_failure(&obj.metadata, err, &ctx)
}

/// Reconciles one agent. Idempotent: an unchanged agent costs three no-op applies
/// (ConfigMap, ServiceAccount, Sandbox) and no status write.
pub async fn reconcile(agent: Arc<SandboxAgent>, ctx: Arc<Context>) -> Result<Action, Error> {
    let started = Instant::now();
    let result = reconcile_inner(&agent, &ctx).await;
    let outcome = match &result {
        Ok((_, o)) => *o,
        Err(_) => Step::Failed,
    };
    ctx.metrics.record(outcome.into(), started.elapsed());
    if result.is_ok() {
        ctx.failures().remove(&key(&agent.metadata));
    }
    result.map(|(action, _)| action)
}

/// What a reconcile ended with, for metrics.
#[derive(Clone, Copy)]
enum Step {
    Deployed,
    Rejected,
    WaitingForApi,
    Failed,
}

impl From<Step> for Outcome {
    fn from(s: Step) -> Outcome {
        match s {
            Step::Deployed => Outcome::Ok,
            Step::Rejected => Outcome::Rejected,
            Step::WaitingForApi => Outcome::SandboxApiMissing,
            Step::Failed => Outcome::Error,
        }
    }
}

async fn reconcile_inner(agent: &SandboxAgent, ctx: &Context) -> Result<(Action, Step), Error> {
    if agent.meta().deletion_timestamp.is_some() {
        // Owner references let the garbage collector remove the children.
        return Ok((Action::await_change(), Step::Deployed));
    }
    let namespace = agent.namespace().unwrap_or_else(|| "default".into());
    let name = agent.name_any();

    // Render with what the API server holds: each object the agent turns out to need is read
    // and the render run again (a handful of rounds: a ModelConfig, tool servers, agents).
    let mut lookup = crate::refs::Lookup::default();
    let mut fetches = 0;
    let outcome = loop {
        match objects::desired(agent, &ctx.options, &lookup) {
            Err(objects::Pending::Needs(r)) => {
                fetches += 1;
                if fetches > MAX_FETCHES {
                    return Err(failed(agent, ctx, Error::TooManyReferences).await);
                }
                match references::fetch(&ctx.client, &r).await {
                    Ok(o) => lookup.insert(r, o),
                    Err(source) => {
                        let err = Error::Reference { object: r.to_string(), source };
                        return Err(failed(agent, ctx, err).await);
                    }
                }
            }
            other => break other,
        }
    };
    ctx.references.record((namespace.clone(), name.clone()), lookup.references().cloned().collect());
    let desired = match outcome {
        Ok(d) => d,
        Err(objects::Pending::Rejected(rejection)) => {
            reject(agent, ctx, &rejection).await?;
            // A missing object may appear without a watch event reaching us (its kind not
            // served at start-up): look again later too.
            let next = if fetches > 0 { Action::requeue(NOT_READY_RESYNC) } else { Action::await_change() };
            return Ok((next, Step::Rejected));
        }
        Err(objects::Pending::Needs(_)) => return Err(failed(agent, ctx, Error::TooManyReferences).await),
    };

    let Some(api) = ctx.sandbox_api.discover(&ctx.client).await.map_err(Error::Discovery)? else {
        wait_for_sandbox_api(agent, ctx).await?;
        return Ok((Action::requeue(ctx.sandbox_api_retry), Step::WaitingForApi));
    };

    let params = PatchParams::apply(FIELD_MANAGER).force();
    let configmaps: Api<ConfigMap> = Api::namespaced(ctx.client.clone(), &namespace);
    let cm_name = objects::settings_name(&name);
    if let Existing::Refused(step) = read_own(agent, ctx, &configmaps, "ConfigMap", &namespace, &cm_name).await? {
        return Ok(step);
    }
    if let Err(source) = apply(ctx, &configmaps, &cm_name, &params, &desired.settings).await {
        return Err(failed(agent, ctx, Error::Apply { kind: "ConfigMap", namespace, name: cm_name, source }).await);
    }

    if let Some(config) = &desired.config {
        let secrets: Api<Secret> = Api::namespaced(ctx.client.clone(), &namespace);
        let secret_name = objects::config_secret_name(&name);
        // only the metadata of what is there: a Secret of this name that is not the agent's
        // is never read, let alone written
        match secrets.get_metadata_opt(&secret_name).await {
            Ok(Some(existing)) if !objects::owned_by(&existing.metadata, agent) => {
                reject(agent, ctx, &objects::not_owned("Secret", &namespace, &secret_name)).await?;
                return Ok((Action::requeue(NOT_READY_RESYNC), Step::Rejected));
            }
            Ok(_) => {}
            Err(source) => {
                let err = Error::Read { kind: "Secret", namespace: namespace.clone(), name: secret_name, source };
                return Err(failed(agent, ctx, err).await);
            }
        }
        if let Err(source) = apply(ctx, &secrets, &secret_name, &params, config).await {
            return Err(failed(agent, ctx, Error::Apply { kind: "Secret", namespace, name: secret_name, source }).await);
        }
    }

    if let Some(sa) = &desired.service_account {
        let accounts: Api<ServiceAccount> = Api::namespaced(ctx.client.clone(), &namespace);
        if let Existing::Refused(step) = read_own(agent, ctx, &accounts, "ServiceAccount", &namespace, &name).await? {
            return Ok(step);
        }
        if let Err(source) = apply(ctx, &accounts, &name, &params, sa).await {
            let err = Error::Apply { kind: "ServiceAccount", namespace, name, source };
            return Err(failed(agent, ctx, err).await);
        }
    }

    let sandboxes: Api<DynamicObject> = Api::namespaced_with(ctx.client.clone(), &namespace, &api.version.resource());
    let body = desired.sandbox(&api, &ctx.options);
    let previous = match read_own(agent, ctx, &sandboxes, "Sandbox", &namespace, &name).await? {
        Existing::Own(previous) => previous,
        Existing::Refused(step) => return Ok(step),
    };
    let mut sandbox = match apply(ctx, &sandboxes, &name, &params, &body).await {
        Ok(s) => s,
        Err(kube::Error::Api(status)) if status.code == 404 => {
            // The CRD (or this version of it) went away between discovery and now.
            ctx.sandbox_api.forget();
            wait_for_sandbox_api(agent, ctx).await?;
            return Ok((Action::requeue(ctx.sandbox_api_retry), Step::WaitingForApi));
        }
        Err(source) => {
            return Err(failed(agent, ctx, Error::Apply { kind: "Sandbox", namespace, name, source }).await);
        }
    };

    // (another manager's Sandbox, replaced below, restarts its pod anyway)
    let mut restart_note = restart_needed(previous.as_ref(), &body, &namespace, &name);
    let mut writers = conflict::foreign_spec_writers(&sandbox);
    let mut took_over_before = false;
    if !writers.is_empty() && ctx.take_over_sandboxes {
        if ctx.first_takeover(&key(&agent.metadata)) {
            restart_note = None;
            sandbox = match take_over(ctx, &sandboxes, &sandbox, &params, &body, &writers).await {
                Ok(s) => s,
                Err(source) => {
                    ctx.takeover_failed(&key(&agent.metadata));
                    return Err(failed(agent, ctx, Error::TakeOver { namespace, name, source }).await);
                }
            };
            let note = format!(
                "Deleted Sandbox {namespace}/{name}, whose spec {} had written, and created it again with \
                 srt-controller's fields only",
                writers.iter().map(|w| w.manager.as_str()).collect::<Vec<_>>().join(", ")
            );
            event(agent, ctx, EventType::Normal, conflict::REASON_TOOK_OVER, note).await;
            writers = conflict::foreign_spec_writers(&sandbox);
        } else {
            took_over_before = true;
        }
    }

    if let Some(note) = restart_note {
        tracing::info!(agent = %key(&agent.metadata), %note, "config.json changed");
        event(agent, ctx, EventType::Warning, REASON_POD_RESTART_NEEDED, note).await;
    }

    let ready = cond::ready_from_sandbox(Some(&sandbox));
    let is_ready = ready.status == "True";
    let newly_accepted = cond::condition_status(agent.status.as_ref(), cond::ACCEPTED) != Some("True");
    let mut conds = vec![cond::accepted(), ready];
    let status_writers = conflict::foreign_status_writers(agent.metadata.managed_fields.as_deref().unwrap_or(&[]));
    if !writers.is_empty() {
        let message = conflict::message(&namespace, &name, &writers, took_over_before);
        tracing::warn!(agent = %key(&agent.metadata), %message, "another controller writes this agent's Sandbox");
        conds.push(Cond::new(conflict::CONDITION, "True", conflict::REASON_FOREIGN_FIELDS, message));
    } else if !status_writers.is_empty() {
        let message = conflict::status_message(&status_writers);
        tracing::warn!(agent = %key(&agent.metadata), %message, "another controller writes this agent's status");
        conds.push(Cond::new(conflict::CONDITION, "True", conflict::REASON_FOREIGN_STATUS, message));
    }
    if write_status(agent, ctx, &conds).await? && conds.len() > 2 {
        let (reason, message) = (conds[2].reason.clone(), conds[2].message.clone());
        event(agent, ctx, EventType::Warning, &reason, message).await;
    }
    if newly_accepted {
        let note = format!("Applied ConfigMap {} and Sandbox {name}", objects::settings_name(&name));
        event(agent, ctx, EventType::Normal, "Accepted", note).await;
    }
    let next = if is_ready { RESYNC } else { NOT_READY_RESYNC };
    Ok((Action::requeue(next), Step::Deployed))
}

/// The event reason for a Sandbox whose pod runs an older config.json than the one just
/// written.
pub const REASON_POD_RESTART_NEEDED: &str = "PodRestartNeeded";

/// kagent's runtimes read config.json (and the card, the skills) once, at start. kagent's
/// Deployment rolls its pod when the config-hash changes; agent-sandbox never replaces a
/// running pod (from v0.4.6 it copies the template's annotations onto it, so the pod's own
/// config-hash follows the Sandbox's and cannot tell). So when the hash changes under an
/// existing Sandbox, say so, once, with what to do.
fn restart_needed(
    previous: Option<&DynamicObject>,
    next: &DynamicObject,
    namespace: &str,
    name: &str,
) -> Option<String> {
    let pointer = format!("/spec/podTemplate/metadata/annotations/{}", objects::CONFIG_HASH.replace('/', "~1"));
    let old = previous?.data.pointer(&pointer)?.as_str()?;
    let new = next.data.pointer(&pointer)?.as_str()?;
    (old != new).then(|| {
        format!(
            "config.json changed (kagent.dev/config-hash {old} -> {new}); agent-sandbox keeps the running pod, which \
             read the old one at start: delete it to restart the agent with the new one \
             (kubectl delete pod -n {namespace} -l kagent={name})"
        )
    })
}

/// What is stored under a name srt-controller would write.
enum Existing<K> {
    /// Nothing, or the agent's own object.
    Own(Option<K>),
    /// Another's: the agent was refused.
    Refused((Action, Step)),
}

/// An object of the name srt-controller would write that is not the agent's (the namespace's
/// `default` ServiceAccount for an agent named `default`, a Sandbox someone made by hand)
/// is never written: the apply would merge the agent's fields and owner into it, and
/// deleting the agent would then delete it. The agent is refused and looked at again later.
async fn read_own<K>(
    agent: &SandboxAgent,
    ctx: &Context,
    api: &Api<K>,
    kind: &'static str,
    namespace: &str,
    name: &str,
) -> Result<Existing<K>, Error>
where
    K: Resource + Clone + serde::de::DeserializeOwned + std::fmt::Debug,
{
    match api.get_opt(name).await {
        Ok(Some(existing)) if !objects::owned_by(existing.meta(), agent) => {
            reject(agent, ctx, &objects::not_owned(kind, namespace, name)).await?;
            Ok(Existing::Refused((Action::requeue(NOT_READY_RESYNC), Step::Rejected)))
        }
        Ok(existing) => Ok(Existing::Own(existing)),
        Err(source) => {
            let err = Error::Read { kind, namespace: namespace.into(), name: name.into(), source };
            Err(failed(agent, ctx, err).await)
        }
    }
}

/// Deletes the Sandbox (only the one just seen: uid precondition) and applies it afresh, so
/// it holds srt-controller's fields only. agent-sandbox then replaces the pod.
async fn take_over(
    ctx: &Context,
    sandboxes: &Api<DynamicObject>,
    old: &DynamicObject,
    params: &PatchParams,
    body: &DynamicObject,
    writers: &[conflict::ForeignWriter],
) -> Result<DynamicObject, kube::Error> {
    let name = old.name_any();
    tracing::info!(sandbox = %name, ?writers, "taking over a Sandbox another manager wrote");
    let delete = DeleteParams {
        preconditions: Some(Preconditions { uid: old.uid(), resource_version: None }),
        ..Default::default()
    };
    match sandboxes.delete(&name, &delete).await {
        Ok(_) => {}
        Err(kube::Error::Api(status)) if status.code == 404 || status.code == 409 => {}
        Err(e) => return Err(e),
    }
    apply(ctx, sandboxes, &name, params, body).await
}

/// Server-side apply, retrying 409 Conflict answers a few times.
async fn apply<K>(ctx: &Context, api: &Api<K>, name: &str, params: &PatchParams, obj: &K) -> Result<K, kube::Error>
where
    K: Clone + serde::de::DeserializeOwned + Serialize + std::fmt::Debug,
{
    let mut attempt = 0;
    loop {
        match api.patch(name, params, &Patch::Apply(obj)).await {
            Err(kube::Error::Api(status)) if status.code == 409 && attempt < CONFLICT_RETRIES => {
                attempt += 1;
                ctx.metrics.conflict_retried();
                tracing::debug!(name, attempt, "conflict; retrying the apply");
                tokio::time::sleep(Duration::from_millis(50 * u64::from(attempt))).await;
            }
            other => return other,
        }
    }
}

/// Retry with per-agent exponential backoff: 5s, 10s, 20s, ... capped at five minutes.
pub fn error_policy(agent: Arc<SandboxAgent>, err: &Error, ctx: Arc<Context>) -> Action {
    retry_after_failure(&agent.metadata, err, &ctx)
}

fn retry_after_failure(meta: &ObjectMeta, err: &Error, ctx: &Context) -> Action {
    let agent = key(meta);
    let delay = {
        let mut failures = ctx.failures();
        let n = failures.entry(agent.clone()).or_insert(0);
        *n = n.saturating_add(1);
        backoff(*n)
    };
    tracing::warn!(%agent, error = %err, retry_in_s = delay.as_secs(), "reconcile failed");
    Action::requeue(delay)
}

/// The delay before retry number `n` (1-based).
pub fn backoff(n: u32) -> Duration {
    let secs = 5u64.saturating_mul(1u64 << n.saturating_sub(1).min(16));
    Duration::from_secs(secs).min(MAX_BACKOFF)
}

#[cfg(test)]
mod tests {
    use super::backoff;
    use std::time::Duration;

    #[test]
    fn backoff_doubles_and_caps() {
        let d: Vec<u64> = (1..=9).map(|n| backoff(n).as_secs()).collect();
        assert_eq!(d, vec![5, 10, 20, 40, 80, 160, 300, 300, 300]);
        assert_eq!(backoff(u32::MAX), Duration::from_secs(300));
    }
}
