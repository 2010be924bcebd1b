#![allow(clippy::unwrap_used, clippy::expect_used)]
//! Controller figures with 1,000 agents, each as a ratio against a baseline from the same run:
//!
//! 1. reconcile throughput, in process, against a mock API server that answers at once;
//!    baseline: the same requests with the same bodies, computed beforehand, sent by a bare
//!    kube client (so the ratio is the cost of the reconciler's own work);
//! 2. the real `srt-controller run` binary against the in-memory API server: time until all
//!    1,000 agents are Ready (watches included), and its resident memory with 1,000 agents
//!    cached; baseline: the same binary with no agents.
//!
//! `cargo bench -p controller --bench reconcile`

#[path = "../tests/apiserver_schema/mod.rs"]
mod apiserver_schema;
#[path = "../tests/fake_apiserver/mod.rs"]
mod fake_apiserver;

use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, Instant};

use controller::crd::SandboxAgent;
use controller::options::Options;
use controller::reconcile::{reconcile, Context};
use fake_apiserver::{agent_json, write_kubeconfig, FakeApi};

/// The ModelConfig the bench agents use, as a complete lookup.
fn bench_lookup() -> controller::refs::Lookup {
    let mut l = controller::refs::Lookup::complete();
    let r = controller::refs::ObjRef::new(controller::refs::Kind::ModelConfig, "bench", "default-model-config");
    l.insert(r, Some(fake_apiserver::model_config_json("bench")));
    l
}
use http::{Request, Response};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, Patch, PatchParams};
use kube::client::Body;
use kube::Client;
use serde_json::{json, Value};

const AGENTS: usize = 1000;

/// An API server that answers every request at once: discovery with the Sandbox API, an
/// apply with the object it got (plus a Ready Sandbox status), anything else with `{}`.
fn instant_client() -> Client {
    let svc = tower::service_fn(|req: Request<Body>| async move {
        let path = req.uri().path().to_string();
        if path.contains("/modelconfigs/") {
            let mc = serde_json::to_vec(&fake_apiserver::model_config_json("bench")).unwrap();
            return Ok::<_, Infallible>(Response::new(Body::from(mc)));
        }
        let object = ["/configmaps/", "/serviceaccounts/", "/sandboxes/"].iter().any(|k| path.contains(k));
        if req.method() == http::Method::GET && object {
            // the agent's objects do not exist yet
            let status =
                json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "NotFound", "code": 404});
            let mut r = Response::new(Body::from(serde_json::to_vec(&status).unwrap()));
            *r.status_mut() = http::StatusCode::NOT_FOUND;
            return Ok::<_, Infallible>(r);
        }
        let bytes = req.into_body().collect_bytes().await.unwrap();
        let mut body: Value = if bytes.is_empty() { json!({}) } else { serde_json::from_slice(&bytes).unwrap() };
        if path == "/apis/agents.x-k8s.io/v1beta1" {
            body = json!({"kind": "APIResourceList", "groupVersion": "agents.x-k8s.io/v1beta1",
                          "resources": [{"name": "sandboxes", "singularName": "sandbox", "namespaced": true, "kind": "Sandbox", "verbs": ["patch"]}]});
        } else if path == "/openapi/v3/apis/agents.x-k8s.io/v1beta1" {
            body = json!({"components": {"schemas": {"io.x-k8s.agents.v1beta1.Sandbox": {
                "x-kubernetes-group-version-kind": [{"group": "agents.x-k8s.io", "version": "v1beta1", "kind": "Sandbox"}],
                "properties": {"spec": {"properties": {"podTemplate": {}, "service": {}}}}}}}});
        } else {
            if body.get("metadata").is_none() {
                body["metadata"] = json!({"name": "x", "namespace": "bench"});
            }
            if path.ends_with("/status") {
                body["spec"] = json!({"type": "Declarative", "declarative": {}});
            }
            if path.contains("/sandboxes/") {
                body["status"] =
                    json!({"conditions": [{"type": "Ready", "status": "True", "reason": "DependenciesReady"}]});
            }
        }
        Ok::<_, Infallible>(Response::new(Body::from(serde_json::to_vec(&body).unwrap())))
    });
    Client::new(svc, "default")
}

fn agents() -> Vec<SandboxAgent> {
    (0..AGENTS)
        .map(|i| {
            let mut v = agent_json("bench", &format!("agent-{i}"), &["api.github.com", "*.pypi.org"]);
            v["metadata"]["uid"] = json!(format!("uid-{i}"));
            v["metadata"]["generation"] = json!(1);
            serde_json::from_value(v).unwrap()
        })
        .collect()
}

async fn reconcile_all(agents: &[SandboxAgent]) -> Duration {
    let ctx = Arc::new(Context::new(instant_client(), Options::default()));
    let start = Instant::now();
    for a in agents {
        reconcile(Arc::new(a.clone()), ctx.clone()).await.unwrap();
    }
    start.elapsed()
}

/// The API traffic of one reconcile of a new agent, made directly with the same bodies
/// (computed beforehand): the ModelConfig read, the ConfigMap, ServiceAccount and Sandbox each
/// read and applied, the status apply, the event.
async fn bare_calls(agents: &[SandboxAgent]) -> Duration {
    let client = instant_client();
    let params = PatchParams::apply("srt-controller").force();
    let opts = Options::default();
    let prepared: Vec<_> = agents
        .iter()
        .map(|a| {
            let d = controller::objects::desired(a, &opts, &bench_lookup()).unwrap();
            let api = controller::discovery::SandboxApiInfo::for_release("0.5.6").unwrap();
            let sandbox = d.sandbox(&api, &opts);
            let status = json!({"apiVersion": "kagent.dev/v1alpha2", "kind": "SandboxAgent", "status": {
                "observedGeneration": 1, "conditions": [
                    {"type": "Accepted", "status": "True", "reason": "Reconciled", "message": "SandboxAgent configuration accepted",
                     "observedGeneration": 1, "lastTransitionTime": "2026-11-22T00:00:00Z"},
                    {"type": "Ready", "status": "True", "reason": "WorkloadReady", "message": "",
                     "observedGeneration": 1, "lastTransitionTime": "2026-11-22T00:00:00Z"}]}});
            let event: k8s_openapi::api::events::v1::Event = serde_json::from_value(json!({
                "metadata": {"name": format!("{}.1", a.metadata.name.as_deref().unwrap())},
                "eventTime": "2026-11-22T00:00:00.000000Z", "reason": "Accepted", "action": "Reconcile", "type": "Normal",
                "note": "Applied ConfigMap and Sandbox", "reportingController": "srt-controller", "reportingInstance": "srt-controller",
                "regarding": {"apiVersion": "kagent.dev/v1alpha2", "kind": "SandboxAgent", "name": a.metadata.name, "namespace": "bench"}}))
            .unwrap();
            (a.metadata.name.clone().unwrap(), d, sandbox, status, event)
        })
        .collect();
    let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "bench");
    let accounts: Api<k8s_openapi::api::core::v1::ServiceAccount> = Api::namespaced(client.clone(), "bench");
    let sandboxes: Api<kube::api::DynamicObject> =
        Api::namespaced_with(client.clone(), "bench", &controller::discovery::SandboxVersion::V1beta1.resource());
    let statuses: Api<SandboxAgent> = Api::namespaced(client.clone(), "bench");
    let events: Api<k8s_openapi::api::events::v1::Event> = Api::namespaced(client.clone(), "bench");
    let models: Api<kube::api::DynamicObject> = Api::namespaced_with(
        client.clone(),
        "bench",
        &controller::reconcile::api_resource(controller::refs::Kind::ModelConfig),
    );
    let start = Instant::now();
    for (name, d, sandbox, status, event) in &prepared {
        assert!(models.get_opt("default-model-config").await.unwrap().is_some());
        assert!(cms.get_opt(&format!("{name}-srt-settings")).await.unwrap().is_none());
        cms.patch(&format!("{name}-srt-settings"), &params, &Patch::Apply(&d.settings)).await.unwrap();
        if let Some(sa) = &d.service_account {
            assert!(accounts.get_opt(name).await.unwrap().is_none());
            accounts.patch(name, &params, &Patch::Apply(sa)).await.unwrap();
        }
        assert!(sandboxes.get_opt(name).await.unwrap().is_none());
        sandboxes.patch(name, &params, &Patch::Apply(sandbox)).await.unwrap();
        statuses.patch_status(name, &params, &Patch::Apply(status)).await.unwrap();
        events.create(&Default::default(), event).await.unwrap();
    }
    start.elapsed()
}

fn rss_kib(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Runs the binary against the in-memory API server with `n` agents; returns (time until
/// all are Ready, settled RSS KiB, peak RSS KiB).
async fn binary_run(n: usize) -> (Duration, u64, u64) {
    let fake = FakeApi::start().await;
    let api = fake.api.clone();
    api.sandboxes_become_ready.store(true, std::sync::atomic::Ordering::SeqCst);
    for i in 0..n {
        api.create("sandboxagents", agent_json("bench", &format!("agent-{i}"), &["api.github.com", "*.pypi.org"]));
        if i == 0 {
            api.create("modelconfigs", fake_apiserver::model_config_json("bench"));
        }
    }
    let dir = srt_tests::scratch_dir("controller-bench");
    let kubeconfig = write_kubeconfig(&dir, fake.addr);
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_srt-controller"))
        .args(["run", "--metrics-addr", &format!("127.0.0.1:{port}")])
        .env("KUBECONFIG", &kubeconfig)
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env("RUST_LOG", "error")
        .spawn()
        .unwrap();
    let start = Instant::now();
    let deadline = Duration::from_secs(300);
    while api.count_condition("sandboxagents", "Ready", "True") < n {
        assert!(start.elapsed() < deadline, "not all {n} agents Ready within {deadline:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let took = start.elapsed();
    // Let the last status writes come back through the watch and settle in the cache.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let (rss, peak) = rss_kib(child.id());
    let _ = child.kill();
    let _ = child.wait();
    (took, rss, peak)
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async {
        let agents = agents();
        // Warm-up, then interleaved runs; medians reported.
        reconcile_all(&agents[..50]).await;
        bare_calls(&agents[..50]).await;
        let mut rec = Vec::new();
        let mut bare = Vec::new();
        for _ in 0..5 {
            rec.push(reconcile_all(&agents).await);
            bare.push(bare_calls(&agents).await);
        }
        rec.sort();
        bare.sort();
        let (r, b) = (rec[2], bare[2]);
        println!("in-process, mock API answering at once, {AGENTS} new agents (median of 5):");
        println!(
            "  reconcile: {:.1} ms total, {:.0} agents/s, {:.1} us/agent",
            r.as_secs_f64() * 1e3,
            AGENTS as f64 / r.as_secs_f64(),
            r.as_secs_f64() * 1e6 / AGENTS as f64
        );
        println!(
            "  baseline (the same requests and bodies from a bare client): {:.1} ms; reconcile / baseline = {:.2}",
            b.as_secs_f64() * 1e3,
            r.as_secs_f64() / b.as_secs_f64()
        );

        let (_, idle_rss, idle_peak) = binary_run(0).await;
        let (took, rss, peak) = binary_run(AGENTS).await;
        println!("srt-controller run against the in-memory API server:");
        println!(
            "  {AGENTS} agents all Ready after {:.2} s ({:.0} agents/s, watches and status writes included)",
            took.as_secs_f64(),
            AGENTS as f64 / took.as_secs_f64()
        );
        println!(
            "  RSS with {AGENTS} agents cached: {:.1} MiB (peak {:.1} MiB); with none: {:.1} MiB (peak {:.1} MiB); {:.1} KiB per agent",
            rss as f64 / 1024.0,
            peak as f64 / 1024.0,
            idle_rss as f64 / 1024.0,
            idle_peak as f64 / 1024.0,
            (rss.saturating_sub(idle_rss)) as f64 / AGENTS as f64
        );
    });
}
