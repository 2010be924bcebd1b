#![allow(clippy::unwrap_used, clippy::expect_used)]
//! A Declarative agent's config Secret (config.json, agent card, spec) against a scripted API
//! server: only the metadata of an existing Secret of its name is read, and one that is not
//! the agent's is never written.

mod apiserver_schema;
mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use controller::reconcile::{reconcile, Context};
use kube::runtime::controller::Action;
use serde_json::json;

async fn finish(
    run: tokio::task::JoinHandle<Result<Action, controller::reconcile::Error>>,
) -> Result<Action, controller::reconcile::Error> {
    tokio::time::timeout(Duration::from_secs(5), run).await.expect("reconcile did not finish").unwrap()
}

fn start(
    agent: &controller::crd::SandboxAgent,
    ctx: &Arc<Context>,
) -> tokio::task::JoinHandle<Result<Action, controller::reconcile::Error>> {
    tokio::spawn(reconcile(Arc::new(agent.clone()), ctx.clone()))
}

/// A Secret of the config Secret's name that is not the agent's is neither read (metadata
/// only) nor written: Accepted=False naming it.
#[tokio::test]
async fn a_config_secret_of_another_owner_is_not_written() {
    let (ctx, mut handle) = mock_context();
    let run = start(&seed_agent(&[], 1), &ctx);
    answer_discovery(&mut handle, DEFAULT_RELEASE).await;
    created(&mut handle, CM_PATH).await;
    existing(
        &mut handle,
        SECRET_PATH,
        json!({"apiVersion": "meta.k8s.io/v1", "kind": "PartialObjectMetadata",
               "metadata": {"name": "sandbox-agent-srt-config", "namespace": "kagent", "uid": "s-1"}}),
    )
    .await;
    let status = next(&mut handle).await;
    status.assert_apply(STATUS_PATH);
    assert_eq!(conditions(&status.body)[0], ("Accepted".into(), "False".into(), "NotOwned".into()));
    let message = condition_message(&status.body, "Accepted");
    assert!(message.contains("Secret kagent/sandbox-agent-srt-config exists and does not belong"), "{message}");
    status.respond_applied(json!({}));
    next(&mut handle).await.respond_applied(json!({})); // the warning event
    assert_eq!(finish(run).await.unwrap(), Action::requeue(Duration::from_secs(60)));
    drop(ctx);
    assert_no_more_requests(handle).await;
}
