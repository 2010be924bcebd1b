#![allow(clippy::unwrap_used, clippy::expect_used)]
//! agent-sandbox v0.3.10, v0.4.6, v0.5.0rc1 and v0.5.6 (v1alpha1 and v1beta1): discovery
//! decides the version and whether `spec.service` is sent, and what is applied fits that
//! release's Sandbox schema (tests/fixtures/sandbox-crd-*.json, hand-written). Each release is
//! played by the scripted API server, every request asserted.

mod apiserver_schema;
mod common;

use std::sync::Arc;
use std::time::Duration;

use common::*;
use controller::discovery::{sandbox_spec_fields, SandboxApiInfo, SandboxVersion};
use controller::options::{Options, ServiceMode};
use controller::reconcile::{reconcile, Context};
use controller::render;
use serde_json::{json, Value};

const RELEASES: &[&str] = &["v0.3.10", "v0.4.6", "v0.5.0rc1", "v0.5.6"];

fn version(v: &str) -> SandboxVersion {
    match v {
        "v1alpha1" => SandboxVersion::V1alpha1,
        "v1beta1" => SandboxVersion::V1beta1,
        other => panic!("{other}"),
    }
}

/// What discovery concludes from the OpenAPI document the API server publishes for
/// `release`/`v`.
fn discovered(release: &str, v: &str) -> SandboxApiInfo {
    let doc = schema::openapi_document(&schema::sandbox_fixture(release), v);
    let fields = sandbox_spec_fields(&doc, version(v)).unwrap();
    SandboxApiInfo { version: version(v), service_declared: Some(fields.iter().any(|f| f == "service")) }
}

fn sandbox_of(out: &str) -> Value {
    yaml_serde::Deserializer::from_str(out)
        .map(|d| serde::Deserialize::deserialize(d).unwrap())
        .find(|v: &Value| v["kind"] == "Sandbox")
        .unwrap()
}

#[test]
fn rendered_sandboxes_fit_every_served_version_of_every_release() {
    let golden = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    for release in RELEASES {
        let fixture = schema::sandbox_fixture(release);
        for v in fixture["served"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()) {
            let api = discovered(release, v);
            // The release table the render command uses agrees with the schema.
            assert_eq!(
                api.service_declared,
                SandboxApiInfo::for_release(release).unwrap().service_declared,
                "{release}"
            );
            for case in ["seed-sandbox-agent", "seed-allowlist", "seed-skills", "byo"] {
                let input = std::fs::read_to_string(golden.join(format!("{case}.yaml"))).unwrap();
                let sandbox = sandbox_of(&render::render(&input, case, &Options::default(), &api).unwrap());
                assert_eq!(sandbox["apiVersion"], format!("agents.x-k8s.io/{v}"), "{release} {case}");
                let problems = schema::check(&fixture["spec"][v], &sandbox["spec"], "spec");
                assert_eq!(problems, Vec::<String>::new(), "{release} {v} {case}");
                assert_eq!(
                    sandbox["spec"].get("service").is_some(),
                    api.service_declared == Some(true),
                    "{release} {v}"
                );
            }
        }
    }
}

#[test]
fn the_schema_check_refuses_service_where_the_release_lacks_it() {
    let input = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/seed-sandbox-agent.yaml"),
    )
    .unwrap();
    // What srt-controller used to send to every cluster.
    let api = SandboxApiInfo { version: SandboxVersion::V1alpha1, service_declared: Some(true) };
    let sandbox = sandbox_of(&render::render(&input, "x", &Options::default(), &api).unwrap());
    let problems = schema::check(&schema::sandbox_fixture("v0.3.10")["spec"]["v1alpha1"], &sandbox["spec"], "spec");
    assert_eq!(problems, vec!["spec.service: field not declared in schema (pruned)".to_string()]);
}

fn context(options: Options) -> (Arc<Context>, ApiHandle) {
    let (service, handle) = tower_test::mock::pair();
    let client = kube::Client::new(service, "default");
    (Arc::new(Context::with_clock(client, options, fixed_now)), handle)
}

/// One reconcile of the seed agent against `release`: discovery, ConfigMap, ServiceAccount,
/// Sandbox (at the discovered version's path), status, event. Returns the Sandbox body.
async fn deploy_against(release: &str, options: Options, agent: controller::crd::SandboxAgent) -> Value {
    let (ctx, mut handle) = context(options);
    let run = tokio::spawn(reconcile(Arc::new(agent), ctx.clone()));
    let v = answer_discovery(&mut handle, release).await.unwrap();
    let sb = through_to_sandbox(&mut handle, &sandbox_path(&v), None).await;
    assert_eq!(sb.body["apiVersion"], format!("agents.x-k8s.io/{v}"));
    let fixture = schema::sandbox_fixture(release);
    assert_eq!(
        schema::check(&fixture["spec"][v.as_str()], &sb.body["spec"], "spec"),
        Vec::<String>::new(),
        "{release}"
    );
    let body = sb.body.clone();
    sb.respond_applied(json!({}));
    let status = next(&mut handle).await;
    status.assert_apply(STATUS_PATH);
    assert_eq!(conditions(&status.body)[0], ("Accepted".into(), "True".into(), "Reconciled".into()));
    status.respond_applied(json!({}));
    next(&mut handle).await.respond_applied(json!({})); // the Accepted event
    tokio::time::timeout(Duration::from_secs(5), run).await.unwrap().unwrap().unwrap();
    drop(ctx);
    assert_no_more_requests(handle).await;
    body
}

#[tokio::test]
async fn v0_3_10_gets_v1alpha1_without_service() {
    let sb = deploy_against("v0.3.10", Options::default(), seed_agent(&[], 1)).await;
    assert_eq!(sb["apiVersion"], "agents.x-k8s.io/v1alpha1");
    assert!(sb["spec"].get("service").is_none(), "{}", sb["spec"]);
}

#[tokio::test]
async fn v0_4_6_gets_v1alpha1_with_service() {
    let sb = deploy_against("v0.4.6", Options::default(), seed_agent(&[], 1)).await;
    assert_eq!(sb["apiVersion"], "agents.x-k8s.io/v1alpha1");
    assert_eq!(sb["spec"]["service"], true);
}

#[tokio::test]
async fn v0_5_0rc1_serving_only_v1beta1_is_found() {
    let sb = deploy_against("v0.5.0rc1", Options::default(), seed_agent(&[], 1)).await;
    assert_eq!(sb["apiVersion"], "agents.x-k8s.io/v1beta1");
    assert_eq!(sb["spec"]["service"], true);
    assert!(sb["spec"].get("replicas").is_none() && sb["spec"].get("operatingMode").is_none());
}

#[tokio::test]
async fn v0_5_6_prefers_v1beta1_over_the_deprecated_v1alpha1() {
    let sb = deploy_against("v0.5.6", Options::default(), seed_agent(&[], 1)).await;
    assert_eq!(sb["apiVersion"], "agents.x-k8s.io/v1beta1");
    assert_eq!(sb["spec"]["service"], true);
}

#[tokio::test]
async fn forcing_service_on_a_release_without_it_still_sends_none() {
    let options = Options { sandbox_service: ServiceMode::True, ..Options::default() };
    let sb = deploy_against("v0.3.10", options, seed_agent(&[], 1)).await;
    assert!(sb["spec"].get("service").is_none());
}

#[tokio::test]
async fn the_annotation_turns_the_service_off_where_it_exists() {
    let mut agent = seed_agent(&[], 1);
    agent.metadata.annotations = Some([("srt-controller.dev/sandbox-service".to_string(), "false".to_string())].into());
    let sb = deploy_against("v0.5.6", Options::default(), agent).await;
    assert_eq!(sb["spec"]["service"], false);
}

/// agent-sandbox upgraded under a running controller (v0.3.10 to v0.4.6): once the remembered
/// answer is old enough, discovery runs again and `service` appears.
#[tokio::test]
async fn an_upgrade_is_noticed_when_the_answer_expires() {
    let (service, mut handle) = tower_test::mock::pair();
    let client = kube::Client::new(service, "default");
    let mut ctx = Context::with_clock(client, Options::default(), fixed_now);
    ctx.sandbox_api = controller::discovery::SandboxApi::with_max_age(Duration::ZERO);
    let ctx = Arc::new(ctx);
    for (release, want_service) in [("v0.3.10", false), ("v0.4.6", true)] {
        let run = tokio::spawn(reconcile(Arc::new(seed_agent(&[], 1)), ctx.clone()));
        answer_discovery(&mut handle, release).await.unwrap();
        let sb = through_to_sandbox(&mut handle, &sandbox_path("v1alpha1"), None).await;
        assert_eq!(sb.body["spec"].get("service").is_some(), want_service, "{release}");
        sb.respond_applied(json!({}));
        next(&mut handle).await.respond_applied(json!({})); // status
        next(&mut handle).await.respond_applied(json!({})); // event
        tokio::time::timeout(Duration::from_secs(5), run).await.unwrap().unwrap().unwrap();
    }
}

/// Without a readable OpenAPI document, v1alpha1 gets no `service` (an older release would
/// refuse it) and v1beta1 gets it (every release serving v1beta1 declares it).
#[tokio::test]
async fn an_unreadable_schema_falls_back_by_version() {
    for (served, want_service) in [(vec!["v1alpha1".to_string()], false), (vec!["v1beta1".to_string()], true)] {
        let (ctx, mut handle) = context(Options::default());
        let run = tokio::spawn(reconcile(Arc::new(seed_agent(&[], 1)), ctx.clone()));
        let v = answer_discovery_of(&mut handle, &served, None).await.unwrap();
        let sb = through_to_sandbox(&mut handle, &sandbox_path(&v), None).await;
        assert_eq!(sb.body["spec"].get("service").is_some(), want_service, "{served:?}");
        sb.respond_applied(json!({}));
        next(&mut handle).await.respond_applied(json!({})); // status
        next(&mut handle).await.respond_applied(json!({})); // event
        tokio::time::timeout(Duration::from_secs(5), run).await.unwrap().unwrap().unwrap();
    }
}
