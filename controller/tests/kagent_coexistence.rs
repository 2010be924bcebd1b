#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Beside kagent's own SandboxAgent controller: a Sandbox whose spec another manager wrote
//! (kagent made it, or still does) is reported with a ControllerConflict condition; with
//! --take-over-sandboxes it is deleted once (uid precondition) and created again; --opt-in
//! leaves unlabelled agents alone (the real binary against the in-memory API server).

mod apiserver_schema;
mod common;
mod fake_apiserver;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use controller::options::Options;
use controller::reconcile::{reconcile, Context};
use http::Method;
use serde_json::{json, Value};

/// What the API server answers for a Sandbox kagent created with a plain update and
/// srt-controller then applied to: both managers hold spec fields.
fn kagent_written(uid: &str) -> Value {
    // kagent's controller owns it through the same agent, as srt-controller would
    let owner = json!([{"apiVersion": "kagent.dev/v1alpha2", "kind": "SandboxAgent", "name": "sandbox-agent",
        "uid": seed_agent(&[], 1).metadata.uid, "controller": true}]);
    json!({"metadata": {"name": "sandbox-agent", "namespace": "kagent", "uid": uid, "ownerReferences": owner, "managedFields": [
        {"manager": "kagent", "operation": "Update", "apiVersion": "agents.x-k8s.io/v1alpha1",
         "time": "2026-11-20T10:00:00Z", "fieldsType": "FieldsV1",
         "fieldsV1": {"f:spec": {"f:replicas": {}, "f:podTemplate": {"f:spec": {"f:volumes": {}}}}}},
        {"manager": "srt-controller", "operation": "Apply", "apiVersion": "agents.x-k8s.io/v1beta1",
         "time": "2026-11-23T10:00:00Z", "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:podTemplate": {}}}}
    ]}})
}

fn ours_only(uid: &str) -> Value {
    json!({"metadata": {"name": "sandbox-agent", "namespace": "kagent", "uid": uid, "managedFields": [
        {"manager": "srt-controller", "operation": "Apply", "apiVersion": "agents.x-k8s.io/v1beta1",
         "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:podTemplate": {}}}}
    ]}})
}

fn context(take_over: bool) -> (Arc<Context>, ApiHandle) {
    let (service, handle) = tower_test::mock::pair();
    let client = kube::Client::new(service, "default");
    let mut ctx = Context::with_clock(client, Options::default(), fixed_now);
    ctx.take_over_sandboxes = take_over;
    (Arc::new(ctx), handle)
}

async fn finish(run: tokio::task::JoinHandle<Result<kube::runtime::controller::Action, controller::reconcile::Error>>) {
    tokio::time::timeout(Duration::from_secs(5), run).await.unwrap().unwrap().unwrap();
}

#[tokio::test]
async fn a_sandbox_kagent_wrote_is_reported_not_silently_shared() {
    let (ctx, mut handle) = context(false);
    let run = tokio::spawn(reconcile(Arc::new(seed_agent(&[], 1)), ctx.clone()));
    answer_discovery(&mut handle, DEFAULT_RELEASE).await;
    let sb = through_to_sandbox(&mut handle, SANDBOX_PATH, Some(kagent_written("uid-old"))).await;
    sb.respond_applied(kagent_written("uid-old"));

    let status = next(&mut handle).await;
    status.assert_apply(STATUS_PATH);
    assert_eq!(
        conditions(&status.body),
        vec![
            ("Accepted".into(), "True".into(), "Reconciled".into()),
            ("Ready".into(), "Unknown".into(), "SandboxReadyPending".into()),
            ("ControllerConflict".into(), "True".into(), "SandboxSpecWrittenByAnotherManager".into()),
        ]
    );
    let message = condition_message(&status.body, "ControllerConflict");
    assert!(message.contains("\"kagent\" (Update at 2026-11-20T10:00:00Z)"), "{message}");
    assert!(message.contains("delete the old Sandbox (kubectl delete sandbox -n kagent sandbox-agent"), "{message}");
    assert!(message.contains("--take-over-sandboxes"), "{message}");
    status.respond_applied(json!({}));
    let warning = next(&mut handle).await;
    assert_eq!((warning.method.clone(), warning.path.as_str()), (Method::POST, EVENTS_PATH));
    assert_eq!(
        (warning.body["type"].as_str(), warning.body["reason"].as_str()),
        (Some("Warning"), Some("SandboxSpecWrittenByAnotherManager"))
    );
    warning.respond_applied(json!({}));
    next(&mut handle).await.respond_applied(json!({})); // the Accepted event
    finish(run).await;
    drop(ctx);
    assert_no_more_requests(handle).await; // no delete without the flag
}

#[tokio::test]
async fn take_over_deletes_that_sandbox_once_and_applies_it_again() {
    let (ctx, mut handle) = context(true);
    let run = tokio::spawn(reconcile(Arc::new(seed_agent(&[], 1)), ctx.clone()));
    answer_discovery(&mut handle, DEFAULT_RELEASE).await;
    let sb = through_to_sandbox(&mut handle, SANDBOX_PATH, Some(kagent_written("uid-old"))).await;
    let body = sb.body.clone();
    sb.respond_applied(kagent_written("uid-old"));

    let delete = next(&mut handle).await;
    assert_eq!((delete.method.clone(), delete.path.as_str()), (Method::DELETE, SANDBOX_PATH));
    assert_eq!(delete.body["preconditions"]["uid"], "uid-old", "only the Sandbox just seen: {}", delete.body);
    delete.respond(http::StatusCode::OK, json!({"kind": "Status", "apiVersion": "v1", "status": "Success"}));
    let again = next(&mut handle).await;
    again.assert_apply(SANDBOX_PATH);
    assert_eq!(again.body, body, "the same object, now alone");
    again.respond_applied(ours_only("uid-new"));

    let replaced = next(&mut handle).await;
    assert_eq!(
        (replaced.body["type"].as_str(), replaced.body["reason"].as_str()),
        (Some("Normal"), Some("SandboxReplaced"))
    );
    let note = replaced.body["note"].as_str().unwrap();
    assert!(note.contains("whose spec kagent had written, and created it again with srt-controller's"), "{note}");
    replaced.respond_applied(json!({}));
    let status = next(&mut handle).await;
    status.assert_apply(STATUS_PATH);
    assert_eq!(conditions(&status.body).len(), 2, "no conflict left: {:?}", conditions(&status.body));
    status.respond_applied(json!({}));
    next(&mut handle).await.respond_applied(json!({})); // the Accepted event
    finish(run).await;

    // kagent writes it again: no second delete, the condition says another controller runs.
    let run = tokio::spawn(reconcile(Arc::new(seed_agent(&[], 1)), ctx.clone()));
    let sb = through_to_sandbox(&mut handle, SANDBOX_PATH, Some(kagent_written("uid-new"))).await;
    sb.respond_applied(kagent_written("uid-new"));
    let status = next(&mut handle).await;
    status.assert_apply(STATUS_PATH);
    let message = condition_message(&status.body, "ControllerConflict");
    assert!(message.contains("already replaced this Sandbox once"), "{message}");
    status.respond_applied(json!({}));
    next(&mut handle).await.respond_applied(json!({})); // warning
    next(&mut handle).await.respond_applied(json!({})); // Accepted event
    finish(run).await;
    drop(ctx);
    assert_no_more_requests(handle).await;
}

/// A takeover whose delete fails (no rbac-takeover.yaml: 403) did not happen: the reconcile
/// fails and the next one tries the delete again.
#[tokio::test]
async fn a_failed_takeover_is_tried_again() {
    let (ctx, mut handle) = context(true);
    for attempt in 0..2 {
        let run = tokio::spawn(reconcile(Arc::new(seed_agent(&[], 1)), ctx.clone()));
        if attempt == 0 {
            answer_discovery(&mut handle, DEFAULT_RELEASE).await;
        }
        let sb = through_to_sandbox(&mut handle, SANDBOX_PATH, Some(kagent_written("uid-old"))).await;
        sb.respond_applied(kagent_written("uid-old"));
        let delete = next(&mut handle).await;
        assert_eq!((delete.method.clone(), delete.path.as_str()), (Method::DELETE, SANDBOX_PATH), "attempt {attempt}");
        delete.respond_status(403, "Forbidden", "sandboxes.agents.x-k8s.io is forbidden: cannot delete");
        let status = next(&mut handle).await;
        status.assert_apply(STATUS_PATH);
        let message = condition_message(&status.body, "Accepted");
        assert!(message.contains("--take-over-sandboxes") && message.contains("forbidden"), "{message}");
        status.respond_applied(json!({}));
        let result = tokio::time::timeout(Duration::from_secs(5), run).await.unwrap().unwrap();
        assert!(result.is_err(), "the reconcile reports the failed delete");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn opt_in_leaves_unlabelled_agents_to_another_controller() {
    use std::process::{Command, Stdio};
    let fake = fake_apiserver::FakeApi::start().await;
    let api = fake.api.clone();
    api.sandboxes_become_ready.store(true, std::sync::atomic::Ordering::SeqCst);
    let mut mine = fake_apiserver::agent_json("kagent", "mine", &[]);
    mine["metadata"]["labels"] = json!({"srt-controller.dev/enabled": "true"});
    api.create("modelconfigs", fake_apiserver::model_config_json("kagent"));
    api.create("sandboxagents", mine);
    api.create("sandboxagents", fake_apiserver::agent_json("kagent", "kagents", &[]));

    let kubeconfig = fake_apiserver::write_kubeconfig(&srt_tests::scratch_dir("controller-opt-in"), fake.addr);
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut child = Command::new(env!("CARGO_BIN_EXE_srt-controller"))
        .args(["run", "--opt-in", "--metrics-addr", &format!("127.0.0.1:{port}")])
        .env("KUBECONFIG", kubeconfig)
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while api.count_condition("sandboxagents", "Ready", "True") < 1 {
        assert!(start.elapsed() < Duration::from_secs(30), "mine never became Ready");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let _ = child.kill();
    let _ = child.wait();
    assert!(api.get("sandboxes", "kagent", "mine").is_some());
    assert!(api.get("sandboxes", "kagent", "kagents").is_none(), "an agent without the label is not touched");
    assert!(api.get("sandboxagents", "kagent", "kagents").unwrap().get("status").is_none());
}

/// kagent >= v0.10 writes no Sandbox (it runs agents on Agent Substrate), so the Sandbox
/// check cannot see it; its writes of the agent's status conditions do: ControllerConflict,
/// reason StatusWrittenByAnotherController, naming the manager, and a Warning event.
#[tokio::test]
async fn another_controllers_status_writes_are_reported() {
    let (ctx, mut handle) = context(false);
    let mut agent = seed_agent(&[], 1);
    agent.metadata.managed_fields = Some(
        serde_json::from_value(json!([
            {"manager": "kagent-controller", "operation": "Update", "apiVersion": "kagent.dev/v1alpha2",
             "subresource": "status", "fieldsType": "FieldsV1", "fieldsV1": {"f:status": {"f:conditions": {}}}}
        ]))
        .unwrap(),
    );
    let mut held = ours_only("uid-1");
    held["metadata"]["ownerReferences"] = json!([{"apiVersion": "kagent.dev/v1alpha2", "kind": "SandboxAgent",
        "name": "sandbox-agent", "uid": agent.metadata.uid, "controller": true}]);
    let run = tokio::spawn(reconcile(Arc::new(agent), ctx.clone()));
    answer_discovery(&mut handle, DEFAULT_RELEASE).await;
    let sb = through_to_sandbox(&mut handle, SANDBOX_PATH, Some(held.clone())).await;
    sb.respond_applied(held);

    let status = next(&mut handle).await;
    status.assert_apply(STATUS_PATH);
    assert_eq!(
        conditions(&status.body)[2],
        ("ControllerConflict".into(), "True".into(), "StatusWrittenByAnotherController".into())
    );
    let message = condition_message(&status.body, "ControllerConflict");
    assert!(message.contains("\"kagent-controller\" (Update)"), "{message}");
    assert!(message.contains("controller.watchNamespaces"), "{message}");
    status.respond_applied(json!({}));
    let warning = next(&mut handle).await;
    assert_eq!((warning.method.clone(), warning.path.as_str()), (Method::POST, EVENTS_PATH));
    assert_eq!(warning.body["reason"], "StatusWrittenByAnotherController");
    warning.respond_applied(json!({}));
    next(&mut handle).await.respond_applied(json!({})); // the Accepted event
    finish(run).await;
    drop(ctx);
    assert_no_more_requests(handle).await;
}
