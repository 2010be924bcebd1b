#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The reconciler against a scripted API server: every request it sends is checked
//! (method, path, field manager, body) and answered by the scenario.

mod apiserver_schema;
mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use controller::crd::{AgentStatus, SandboxAgent, SandboxPlatform};
use controller::reconcile::{error_policy, reconcile, Context};
use http::Method;
use kube::runtime::controller::Action;
use serde_json::{json, Value};

type Run = tokio::task::JoinHandle<Result<Action, controller::reconcile::Error>>;

fn start(agent: &SandboxAgent, ctx: &Arc<Context>) -> Run {
    tokio::spawn(reconcile(Arc::new(agent.clone()), ctx.clone()))
}

async fn finish(run: Run) -> Result<Action, controller::reconcile::Error> {
    tokio::time::timeout(Duration::from_secs(5), run).await.expect("reconcile did not finish").unwrap()
}

fn settings_of(cm_body: &Value) -> String {
    cm_body["data"]["srt-settings.json"].as_str().unwrap().to_string()
}

/// Discovery, ConfigMap, ServiceAccount, Sandbox: the requests every deploying reconcile
/// starts with. Returns the ConfigMap and Sandbox bodies.
async fn expect_deploy(handle: &mut ApiHandle, sandbox_status: Value) -> (Value, Value) {
    assert_eq!(answer_discovery(handle, DEFAULT_RELEASE).await.as_deref(), Some("v1beta1"));
    expect_applies(handle, sandbox_status).await
}

/// The next request is an apply of `path`; answer it with what it applied.
async fn applied(handle: &mut ApiHandle, path: &str) {
    let req = next(handle).await;
    req.assert_apply(path);
    req.respond_applied(json!({}));
}

async fn expect_applies(handle: &mut ApiHandle, sandbox_status: Value) -> (Value, Value) {
    absent(handle, CM_PATH).await;
    let cm = next(handle).await;
    cm.assert_apply(CM_PATH);
    let cm_body = cm.body.clone();
    cm.respond_applied(json!({}));

    absent(handle, SECRET_PATH).await;
    let secret = next(handle).await;
    secret.assert_apply(SECRET_PATH);
    assert_eq!(secret.body["kind"], "Secret");
    assert!(secret.body["stringData"]["config.json"].is_string(), "config.json is in the Secret: {}", secret.body);
    secret.respond_applied(json!({}));

    absent(handle, SA_PATH).await;
    let sa = next(handle).await;
    sa.assert_apply(SA_PATH);
    assert_eq!(
        (sa.body["kind"].as_str(), sa.body["metadata"]["name"].as_str()),
        (Some("ServiceAccount"), Some("sandbox-agent"))
    );
    sa.respond_applied(json!({}));

    absent(handle, SANDBOX_PATH).await;
    let sb = next(handle).await;
    sb.assert_apply(SANDBOX_PATH);
    let sb_body = sb.body.clone();
    sb.respond_applied(sandbox_status);
    (cm_body, sb_body)
}

#[tokio::test]
async fn a_new_agent_gets_settings_a_sandbox_and_a_status() {
    let (ctx, mut handle) = mock_context();
    let agent = seed_agent(&["api.github.com", "*.example.com"], 1);
    let run = start(&agent, &ctx);

    let (cm, sb) = expect_deploy(&mut handle, json!({})).await;
    assert_eq!(
        settings_of(&cm),
        r#"{"environment":{"exclude":["OPENAI_API_KEY"],"inherit":"core"},"filesystem":{"allowWrite":[".","/tmp"],"denyRead":["/config","/var/run/secrets"],"denyWrite":[],"listable":["/config","/var/run/secrets"]},"network":{"allowedDomains":["api.github.com","*.example.com"],"deniedDomains":[]}}"#,
        "the ModelConfig's key, rendered as a secretKeyRef, is excluded by name; commands start from srt's core set"
    );
    settings_schema::parse_str(&settings_of(&cm), std::path::Path::new("cm")).unwrap();
    for body in [&cm, &sb] {
        let owner = &body["metadata"]["ownerReferences"][0];
        assert_eq!(owner["kind"], "SandboxAgent");
        assert_eq!(owner["apiVersion"], "kagent.dev/v1alpha2");
        assert_eq!(owner["uid"], "6d1c1f2e-8a4b-4c1e-9a57-3f0e2b7c9d10");
        assert_eq!(owner["controller"], true);
    }
    assert_eq!(sb["apiVersion"], "agents.x-k8s.io/v1beta1");
    assert_eq!(sb["kind"], "Sandbox");
    assert_eq!(sb["spec"]["service"], true);
    assert_eq!(
        schema::check(&schema::sandbox_fixture(DEFAULT_RELEASE)["spec"]["v1beta1"], &sb["spec"], "spec"),
        Vec::<String>::new()
    );
    let pod = &sb["spec"]["podTemplate"]["spec"];
    // the settings and the config Secret (config.json), projected together at /config
    assert_eq!(pod["volumes"][0]["projected"]["sources"][0]["configMap"]["name"], "sandbox-agent-srt-settings");
    assert_eq!(pod["volumes"][0]["projected"]["sources"][1]["secret"]["name"], "sandbox-agent-srt-config");
    let c = &pod["containers"][0];
    assert_eq!(c["securityContext"]["privileged"], false);
    assert_eq!(c["securityContext"]["allowPrivilegeEscalation"], false);
    assert_eq!(c["securityContext"]["capabilities"]["drop"], json!(["ALL"]));
    assert_eq!(pod["securityContext"]["runAsNonRoot"], true);
    assert_eq!(pod["securityContext"]["seccompProfile"]["type"], "RuntimeDefault");

    let status = next(&mut handle).await;
    status.assert_apply(STATUS_PATH);
    assert_eq!(status.body["status"]["observedGeneration"], 1);
    assert_eq!(
        conditions(&status.body),
        vec![
            ("Accepted".into(), "True".into(), "Reconciled".into()),
            ("Ready".into(), "Unknown".into(), "SandboxReadyPending".into()),
        ]
    );
    assert_eq!(status.body["status"]["conditions"][0]["lastTransitionTime"], "2027-01-15T08:00:00Z");
    status.respond_applied(json!({}));

    let event = next(&mut handle).await;
    assert_eq!((event.method.clone(), event.path.as_str()), (Method::POST, EVENTS_PATH));
    assert_eq!(event.body["reason"], "Accepted");
    assert_eq!(event.body["type"], "Normal");
    assert_eq!(event.body["regarding"]["name"], "sandbox-agent");
    event.respond_applied(json!({}));

    assert_eq!(finish(run).await.unwrap(), Action::requeue(Duration::from_secs(60)));
    drop(ctx);
    assert_no_more_requests(handle).await;
}

#[tokio::test]
async fn an_invalid_domain_is_rejected_and_nothing_is_applied() {
    let (ctx, mut handle) = mock_context();
    let agent = seed_agent(&["api.github.com", "https://evil.example.com/x"], 3);
    let run = start(&agent, &ctx);

    let status = next(&mut handle).await;
    status.assert_apply(STATUS_PATH);
    assert_eq!(
        conditions(&status.body),
        vec![
            ("Accepted".into(), "False".into(), "InvalidAllowedDomains".into()),
            ("Ready".into(), "False".into(), "NotAccepted".into()),
        ]
    );
    let message = condition_message(&status.body, "Accepted");
    assert!(message.contains("allowedDomains[1] \"https://evil.example.com/x\": has a scheme"), "{message}");
    assert_eq!(status.body["status"]["observedGeneration"], 3);
    status.respond_applied(json!({}));

    let event = next(&mut handle).await;
    assert_eq!(event.path, EVENTS_PATH);
    assert_eq!(
        (event.body["type"].as_str(), event.body["reason"].as_str()),
        (Some("Warning"), Some("InvalidAllowedDomains"))
    );
    event.respond_applied(json!({}));

    assert_eq!(finish(run).await.unwrap(), Action::await_change());
    drop(ctx);
    // No discovery, no ConfigMap, no Sandbox.
    assert_no_more_requests(handle).await;
}

#[tokio::test]
async fn substrate_is_refused_with_a_condition() {
    let (ctx, mut handle) = mock_context();
    let mut agent = seed_agent(&[], 1);
    agent.spec.platform = Some(SandboxPlatform::Substrate);
    let run = start(&agent, &ctx);

    let status = next(&mut handle).await;
    status.assert_apply(STATUS_PATH);
    assert_eq!(conditions(&status.body)[0], ("Accepted".into(), "False".into(), "UnsupportedPlatform".into()));
    assert!(condition_message(&status.body, "Accepted").contains("substrate"));
    status.respond_applied(json!({}));
    let event = next(&mut handle).await;
    assert_eq!(event.body["reason"], "UnsupportedPlatform");
    event.respond_applied(json!({}));

    assert_eq!(finish(run).await.unwrap(), Action::await_change());
    drop(ctx);
    assert_no_more_requests(handle).await;
}

#[tokio::test]
async fn a_rejected_agent_whose_status_already_says_so_is_not_rewritten() {
    let (ctx, mut handle) = mock_context();
    let mut agent = seed_agent(&["no-dot"], 2);
    // First pass writes the rejection; feed the written status back as the stored one.
    let run = start(&agent, &ctx);
    let status = next(&mut handle).await;
    let stored: AgentStatus = serde_json::from_value(status.body["status"].clone()).unwrap();
    status.respond_applied(json!({}));
    next(&mut handle).await.respond_applied(json!({})); // the Warning event
    finish(run).await.unwrap();

    agent.status = Some(stored);
    let again = start(&agent, &ctx);
    assert_eq!(finish(again).await.unwrap(), Action::await_change());
    drop(ctx);
    assert_no_more_requests(handle).await;
}

#[tokio::test]
async fn a_ready_sandbox_makes_the_agent_ready() {
    let (ctx, mut handle) = mock_context();
    let mut agent = seed_agent(&["api.github.com"], 1);
    agent.status = Some(serde_json::from_value(json!({
        "observedGeneration": 1,
        "conditions": [
            {"type": "Accepted", "status": "True", "reason": "Reconciled", "message": "SandboxAgent configuration accepted",
             "observedGeneration": 1, "lastTransitionTime": "2026-11-01T00:00:00Z"},
            {"type": "Ready", "status": "Unknown", "reason": "SandboxReadyPending", "message": "Sandbox Ready condition not yet reported",
             "observedGeneration": 1, "lastTransitionTime": "2026-11-01T00:00:00Z"}
        ]
    }))
    .unwrap());
    let run = start(&agent, &ctx);

    let ready = json!({"status": {"conditions": [
        {"type": "Ready", "status": "True", "reason": "DependenciesReady", "message": "Pod is Ready; Service Exists",
         "lastTransitionTime": "2026-11-01T00:01:00Z"}
    ]}});
    expect_deploy(&mut handle, ready).await;

    let status = next(&mut handle).await;
    status.assert_apply(STATUS_PATH);
    assert_eq!(
        conditions(&status.body),
        vec![
            ("Accepted".into(), "True".into(), "Reconciled".into()),
            ("Ready".into(), "True".into(), "WorkloadReady".into()),
        ]
    );
    assert_eq!(condition_message(&status.body, "Ready"), "Pod is Ready; Service Exists");
    // Accepted did not change, so it keeps its time; Ready flipped now.
    assert_eq!(status.body["status"]["conditions"][0]["lastTransitionTime"], "2026-11-01T00:00:00Z");
    assert_eq!(status.body["status"]["conditions"][1]["lastTransitionTime"], "2027-01-15T08:00:00Z");
    status.respond_applied(json!({}));

    // Already accepted before: no second "Accepted" event.
    assert_eq!(finish(run).await.unwrap(), Action::requeue(Duration::from_secs(300)));
    drop(ctx);
    assert_no_more_requests(handle).await;
}

#[tokio::test]
async fn editing_domains_reapplies_settings_and_leaves_the_sandbox_body_unchanged() {
    let mut bodies = Vec::new();
    for (domains, generation) in [(vec!["api.github.com"], 1), (vec!["api.github.com", "*.pypi.org"], 2)] {
        let (ctx, mut handle) = mock_context();
        let run = start(&seed_agent(&domains, generation), &ctx);
        let (cm, sb) = expect_deploy(&mut handle, json!({})).await;
        next(&mut handle).await.respond_applied(json!({})); // status
        next(&mut handle).await.respond_applied(json!({})); // event
        finish(run).await.unwrap();
        bodies.push((cm, sb));
    }
    let (cm1, sb1) = &bodies[0];
    let (cm2, sb2) = &bodies[1];
    assert_ne!(settings_of(cm1), settings_of(cm2));
    assert!(settings_of(cm2).contains(r#""allowedDomains":["api.github.com","*.pypi.org"]"#));
    assert_eq!(sb1, sb2, "the Sandbox (and so its pod) must not change when only domains change");
}

#[tokio::test]
async fn a_conflict_is_retried_within_the_reconcile() {
    let (ctx, mut handle) = mock_context();
    let run = start(&seed_agent(&[], 1), &ctx);

    answer_discovery(&mut handle, DEFAULT_RELEASE).await;
    absent(&mut handle, CM_PATH).await;
    let first = next(&mut handle).await;
    first.assert_apply(CM_PATH);
    let body = first.body.clone();
    first.respond_status(409, "Conflict", "Operation cannot be fulfilled: the object has been modified");
    let second = next(&mut handle).await;
    second.assert_apply(CM_PATH);
    assert_eq!(second.body, body, "the retry sends the same object");
    second.respond_applied(json!({}));
    created(&mut handle, SECRET_PATH).await;
    created(&mut handle, SA_PATH).await;
    absent(&mut handle, SANDBOX_PATH).await;
    let sb = next(&mut handle).await;
    sb.assert_apply(SANDBOX_PATH);
    sb.respond_applied(json!({}));
    // The status write meets a conflict too, and is retried with the same body.
    let status = next(&mut handle).await;
    status.assert_apply(STATUS_PATH);
    let status_body = status.body.clone();
    status.respond_status(409, "Conflict", "the object has been modified");
    let again = next(&mut handle).await;
    assert_eq!(again.body, status_body);
    again.respond_applied(json!({}));
    next(&mut handle).await.respond_applied(json!({})); // event

    assert!(finish(run).await.is_ok());
    assert!(ctx.metrics.render(true).contains("srt_controller_conflicts_retried_total 2"));
}

#[tokio::test]
async fn a_server_error_is_reported_and_requeued_with_growing_backoff() {
    let (ctx, mut handle) = mock_context();
    let agent = seed_agent(&[], 1);

    for expected_backoff in [5, 10] {
        let run = start(&agent, &ctx);
        if expected_backoff == 5 {
            answer_discovery(&mut handle, DEFAULT_RELEASE).await;
        }
        let sb = through_to_sandbox(&mut handle, SANDBOX_PATH, None).await;
        sb.respond_status(500, "InternalError", "etcdserver: request timed out");

        let status = next(&mut handle).await;
        status.assert_apply(STATUS_PATH);
        assert_eq!(conditions(&status.body)[0], ("Accepted".into(), "False".into(), "ReconcileFailed".into()));
        let message = condition_message(&status.body, "Accepted");
        assert!(message.contains("Sandbox kagent/sandbox-agent") && message.contains("etcdserver"), "{message}");
        status.respond_applied(json!({}));

        let err = finish(run).await.unwrap_err();
        let action = error_policy(Arc::new(agent.clone()), &err, ctx.clone());
        assert_eq!(action, Action::requeue(Duration::from_secs(expected_backoff)));
    }
    assert!(ctx.metrics.render(true).contains("srt_controller_reconciles_total{result=\"error\"} 2"));
}

#[tokio::test]
async fn a_missing_sandbox_api_gets_a_condition_and_is_picked_up_once_installed() {
    let (ctx, mut handle) = mock_context();
    let agent = seed_agent(&[], 1);

    let run = start(&agent, &ctx);
    assert_eq!(answer_discovery_of(&mut handle, &[], None).await, None);
    let status = next(&mut handle).await;
    status.assert_apply(STATUS_PATH);
    assert_eq!(conditions(&status.body)[0], ("Accepted".into(), "False".into(), "SandboxAPIMissing".into()));
    assert!(condition_message(&status.body, "Accepted").contains("install agent-sandbox"));
    let stored: AgentStatus = serde_json::from_value(status.body["status"].clone()).unwrap();
    status.respond_applied(json!({}));
    let event = next(&mut handle).await;
    assert_eq!(event.body["reason"], "SandboxAPIMissing");
    event.respond_applied(json!({}));
    assert_eq!(finish(run).await.unwrap(), Action::requeue(Duration::from_secs(30)));

    // agent-sandbox is installed; the requeued reconcile (same process) deploys the agent.
    let mut agent = agent;
    agent.status = Some(stored);
    let run = start(&agent, &ctx);
    expect_deploy(&mut handle, json!({})).await;
    let status = next(&mut handle).await;
    assert_eq!(conditions(&status.body)[0], ("Accepted".into(), "True".into(), "Reconciled".into()));
    status.respond_applied(json!({}));
    next(&mut handle).await.respond_applied(json!({})); // Accepted event
    assert!(finish(run).await.is_ok());
}

#[tokio::test]
async fn a_sandbox_api_removed_after_discovery_is_noticed() {
    let (ctx, mut handle) = mock_context();
    let run = start(&seed_agent(&[], 1), &ctx);
    answer_discovery(&mut handle, DEFAULT_RELEASE).await;
    let sb = through_to_sandbox(&mut handle, SANDBOX_PATH, None).await;
    sb.respond_status(404, "NotFound", "the server could not find the requested resource");
    let status = next(&mut handle).await;
    assert_eq!(conditions(&status.body)[0], ("Accepted".into(), "False".into(), "SandboxAPIMissing".into()));
    status.respond_applied(json!({}));
    next(&mut handle).await.respond_applied(json!({})); // event
    assert_eq!(finish(run).await.unwrap(), Action::requeue(Duration::from_secs(30)));
    assert!(!ctx.sandbox_api.known_available());
}

#[tokio::test]
async fn an_unchanged_deployed_agent_costs_three_applies_and_no_status_write() {
    let (ctx, mut handle) = mock_context();
    let mut agent = seed_agent(&["api.github.com"], 4);
    let run = start(&agent, &ctx);
    expect_deploy(&mut handle, json!({})).await;
    let status = next(&mut handle).await;
    let stored: AgentStatus = serde_json::from_value(status.body["status"].clone()).unwrap();
    status.respond_applied(json!({}));
    next(&mut handle).await.respond_applied(json!({}));
    finish(run).await.unwrap();

    agent.status = Some(stored);
    let run = start(&agent, &ctx);
    expect_applies(&mut handle, json!({})).await; // discovery is remembered
    finish(run).await.unwrap();
    drop(ctx);
    assert_no_more_requests(handle).await;
}

/// An account named like the agent that is not the agent's (here the namespace's own, made
/// by someone else) is left alone: no apply, Accepted=False naming it, checked again later.
#[tokio::test]
async fn a_service_account_of_another_owner_is_not_taken() {
    let (ctx, mut handle) = mock_context();
    let run = start(&seed_agent(&[], 1), &ctx);
    answer_discovery(&mut handle, DEFAULT_RELEASE).await;
    created(&mut handle, CM_PATH).await;
    created(&mut handle, SECRET_PATH).await;
    existing(
        &mut handle,
        SA_PATH,
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sandbox-agent", "namespace": "kagent",
            "uid": "sa-1", "ownerReferences": [{"apiVersion": "kagent.dev/v1alpha2", "kind": "SandboxAgent",
            "name": "sandbox-agent", "uid": "an-older-agent-of-that-name", "controller": true}]}}),
    )
    .await;
    let status = next(&mut handle).await;
    status.assert_apply(STATUS_PATH);
    assert_eq!(conditions(&status.body)[0], ("Accepted".into(), "False".into(), "NotOwned".into()));
    let message = condition_message(&status.body, "Accepted");
    assert!(
        message.contains("ServiceAccount kagent/sandbox-agent exists and does not belong to this agent"),
        "{message}"
    );
    status.respond_applied(json!({}));
    next(&mut handle).await.respond_applied(json!({})); // the warning event
    let action = finish(run).await.unwrap();
    assert_eq!(action, Action::requeue(Duration::from_secs(60)));
    drop(ctx);
    assert_no_more_requests(handle).await;
}

/// One the agent owns (made by srt-controller before, or by kagent's controller for the same
/// agent) is applied as usual.
#[tokio::test]
async fn the_agents_own_service_account_is_applied() {
    let (ctx, mut handle) = mock_context();
    let agent = seed_agent(&[], 1);
    let uid = agent.metadata.uid.clone().unwrap();
    let run = start(&agent, &ctx);
    answer_discovery(&mut handle, DEFAULT_RELEASE).await;
    created(&mut handle, CM_PATH).await;
    created(&mut handle, SECRET_PATH).await;
    existing(
        &mut handle,
        SA_PATH,
        json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sandbox-agent", "namespace": "kagent",
            "ownerReferences": [{"apiVersion": "kagent.dev/v1alpha2", "kind": "SandboxAgent", "name": "sandbox-agent",
            "uid": uid, "controller": true}]}}),
    )
    .await;
    applied(&mut handle, SA_PATH).await;
    absent(&mut handle, SANDBOX_PATH).await;
    let sb = next(&mut handle).await;
    sb.assert_apply(SANDBOX_PATH);
    sb.respond_applied(json!({}));
    let status = next(&mut handle).await;
    assert_eq!(conditions(&status.body)[0], ("Accepted".into(), "True".into(), "Reconciled".into()));
    status.respond_applied(json!({}));
    next(&mut handle).await.respond_applied(json!({})); // the Accepted event
    assert!(finish(run).await.is_ok());
}

/// A Sandbox of the agent's name that someone made by hand (no owner) is not written: no
/// apply, no takeover, Accepted=False naming it.
#[tokio::test]
async fn a_sandbox_the_agent_does_not_own_is_not_written() {
    let (ctx, mut handle) = mock_context();
    let run = start(&seed_agent(&[], 1), &ctx);
    answer_discovery(&mut handle, DEFAULT_RELEASE).await;
    created(&mut handle, CM_PATH).await;
    created(&mut handle, SECRET_PATH).await;
    created(&mut handle, SA_PATH).await;
    existing(
        &mut handle,
        SANDBOX_PATH,
        json!({"apiVersion": "agents.x-k8s.io/v1beta1", "kind": "Sandbox",
            "metadata": {"name": "sandbox-agent", "namespace": "kagent", "uid": "hand-made"}}),
    )
    .await;
    let status = next(&mut handle).await;
    status.assert_apply(STATUS_PATH);
    assert_eq!(conditions(&status.body)[0], ("Accepted".into(), "False".into(), "NotOwned".into()));
    let message = condition_message(&status.body, "Accepted");
    assert!(message.contains("Sandbox kagent/sandbox-agent exists and does not belong to this agent"), "{message}");
    status.respond_applied(json!({}));
    next(&mut handle).await.respond_applied(json!({})); // the warning event
    finish(run).await.unwrap();
    drop(ctx);
    assert_no_more_requests(handle).await;
}
