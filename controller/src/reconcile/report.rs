//! What a reconcile reports: the agent's status (written only when it changes) and
//! Kubernetes events, for acceptance, rejection, a missing Sandbox API and failures.

use k8s_openapi::api::core::v1::ObjectReference;
use kube::api::{Api, DynamicObject, Patch, PatchParams};
use kube::runtime::events::{Event, EventType};
use kube::ResourceExt;
use serde_json::json;

use super::context::{key, Context, Error, CONFLICT_RETRIES};
use crate::conditions::{self as cond, Cond};
use crate::conflict::FIELD_MANAGER;
use crate::crd::SandboxAgent;
use crate::discovery::MISSING_MESSAGE;
use crate::rejection::Rejection;
use crate::stored;

/// `Accepted=False` with the reason, nothing else touched; a Warning event once per change.
pub(super) async fn reject(agent: &SandboxAgent, ctx: &Context, r: &Rejection) -> Result<(), Error> {
    tracing::info!(agent = %key(&agent.metadata), reason = r.reason, message = %r.message, "SandboxAgent not accepted");
    let conds = [
        Cond::new(cond::ACCEPTED, "False", r.reason, r.message.clone()),
        Cond::new(cond::READY, "False", cond::REASON_NOT_ACCEPTED, "the SandboxAgent was not accepted; see Accepted"),
    ];
    if write_status(agent, ctx, &conds).await? {
        event(agent, ctx, EventType::Warning, r.reason, r.message.clone()).await;
    }
    Ok(())
}

pub(super) async fn wait_for_sandbox_api(agent: &SandboxAgent, ctx: &Context) -> Result<(), Error> {
    let conds = [
        Cond::new(cond::ACCEPTED, "False", cond::REASON_SANDBOX_API_MISSING, MISSING_MESSAGE),
        Cond::new(cond::READY, "False", cond::REASON_SANDBOX_API_MISSING, MISSING_MESSAGE),
    ];
    if write_status(agent, ctx, &conds).await? {
        event(agent, ctx, EventType::Warning, cond::REASON_SANDBOX_API_MISSING, MISSING_MESSAGE.into()).await;
    }
    Ok(())
}

/// Best effort `Accepted=False/ReconcileFailed` naming the failed request, then the error
/// goes back to the controller for a retry with backoff.
pub(super) async fn failed(agent: &SandboxAgent, ctx: &Context, err: Error) -> Error {
    let conds = [
        Cond::new(cond::ACCEPTED, "False", cond::REASON_RECONCILE_FAILED, err.to_string()),
        Cond::new(cond::READY, "Unknown", cond::REASON_RECONCILE_FAILED, "the last reconcile failed; see Accepted"),
    ];
    if let Err(e) = write_status(agent, ctx, &conds).await {
        tracing::debug!(error = %e, "could not record the failure in the status");
    }
    err
}

/// Writes the status when it differs from the stored one; returns whether it wrote.
pub(super) async fn write_status(agent: &SandboxAgent, ctx: &Context, conds: &[Cond]) -> Result<bool, Error> {
    let generation = agent.metadata.generation.unwrap_or(0);
    let next = cond::status(agent.status.as_ref(), conds, generation, &(ctx.now)());
    if !cond::changed(agent.status.as_ref(), &next) {
        return Ok(false);
    }
    let namespace = agent.namespace().unwrap_or_else(|| "default".into());
    let name = agent.name_any();
    // Untyped, so the answer (the whole stored object) is read back even when its spec does
    // not fit the types (stored.rs).
    let api: Api<DynamicObject> = Api::namespaced_with(ctx.client.clone(), &namespace, &stored::agent_resource());
    let body = json!({
        "apiVersion": "kagent.dev/v1alpha2",
        "kind": "SandboxAgent",
        "status": next,
    });
    let params = PatchParams::apply(FIELD_MANAGER).force();
    let mut attempt = 0;
    loop {
        match api.patch_status(&name, &params, &Patch::Apply(&body)).await {
            Ok(_) => return Ok(true),
            Err(kube::Error::Api(status)) if status.code == 409 && attempt < CONFLICT_RETRIES => {
                attempt += 1;
                ctx.metrics.conflict_retried();
            }
            Err(source) => return Err(Error::Status { namespace, name, source }),
        }
    }
}

/// Events are for people; failing to record one never fails the reconcile.
pub(super) async fn event(agent: &SandboxAgent, ctx: &Context, type_: EventType, reason: &str, note: String) {
    let reference = ObjectReference {
        api_version: Some("kagent.dev/v1alpha2".into()),
        kind: Some("SandboxAgent".into()),
        name: Some(agent.name_any()),
        namespace: agent.namespace(),
        uid: agent.uid(),
        ..Default::default()
    };
    // The events API caps a note at 1 kB.
    let note: String = note.chars().take(1000).collect();
    let ev = Event { type_, reason: reason.into(), note: Some(note), action: "Reconcile".into(), secondary: None };
    if let Err(e) = ctx.recorder.publish(&ev, &reference).await {
        tracing::debug!(error = %e, "could not publish an event");
    }
}
