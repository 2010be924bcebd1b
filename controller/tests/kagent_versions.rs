#![allow(clippy::unwrap_used, clippy::expect_used)]
//! srt-controller beside each kagent CRD: kagent v0.9.12's (equal to ours), v0.10.0-rc3's
//! and HEAD's (newer: Substrate only, HEAD with v1alpha3). `crd --installed` never prints a
//! CRD that would drop what the installed one serves; `run` reads v1alpha3 where served.

mod apiserver_schema;
mod fake_apiserver;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

fn upstream(rel: &str) -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/upstream").join(rel)).unwrap()
}

fn ours() -> Value {
    yaml_serde::from_str(&controller::crd_yaml()).unwrap()
}

#[test]
fn only_a_newer_kagents_crd_would_lose_anything() {
    let v0912: Value = yaml_serde::from_str(&upstream("kagent-v0.9.12/kagent.dev_sandboxagents.yaml")).unwrap();
    assert_eq!(controller::kagent_crd::would_lose(&v0912, &ours()), Vec::<String>::new());
    let rc3: Value = yaml_serde::from_str(&upstream("kagent-v0.10.0-rc3/kagent.dev_sandboxagents.yaml")).unwrap();
    let lost = controller::kagent_crd::would_lose(&rc3, &ours());
    assert!(!lost.is_empty(), "v0.10.0-rc3 has fields v0.9.12 lacks");
    let head: Value = yaml_serde::from_str(&upstream("kagent-HEAD/kagent.dev_sandboxagents.yaml")).unwrap();
    let lost = controller::kagent_crd::would_lose(&head, &ours());
    assert!(lost.contains(&"served version v1alpha3".to_string()), "{lost:?}");
}

fn crd_over(installed: &str) -> std::process::Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_srt-controller"))
        .args(["crd", "--installed", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(installed.as_bytes()).unwrap();
    child.wait_with_output().unwrap()
}

#[test]
fn crd_installed_prints_ours_over_v0_9_and_refuses_to_downgrade_a_newer_one() {
    let out = crd_over(&upstream("kagent-v0.9.12/kagent.dev_sandboxagents.yaml"));
    assert!(out.status.success());
    assert_eq!(String::from_utf8(out.stdout).unwrap(), controller::crd_yaml());
    for newer in ["kagent-v0.10.0-rc3/kagent.dev_sandboxagents.yaml", "kagent-HEAD/kagent.dev_sandboxagents.yaml"] {
        let out = crd_over(&upstream(newer));
        assert_eq!(out.status.code(), Some(1), "{newer}");
        assert!(out.stdout.is_empty(), "{newer}: nothing to apply");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(err.contains("leave the installed CRD in place"), "{err}");
    }
}

/// kagent HEAD's CRD installed (v1alpha2 storage, v1alpha3 served): an agent written as
/// v1alpha3 with the flattened `byo` is read through v1alpha3 and deployed with its image.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agents_written_as_v1alpha3_are_read_through_v1alpha3() {
    let fake = fake_apiserver::FakeApi::start().await;
    let api = fake.api.clone();
    api.install_crd(&yaml_serde::from_str(&upstream("kagent-HEAD/kagent.dev_sandboxagents.yaml")).unwrap());
    api.kagent_v1alpha3.store(true, std::sync::atomic::Ordering::SeqCst);
    api.sandboxes_become_ready.store(true, std::sync::atomic::Ordering::SeqCst);
    api.create(
        "sandboxagents",
        json!({"apiVersion": "kagent.dev/v1alpha3", "kind": "SandboxAgent", "metadata": {"name": "flat", "namespace": "team"},
               "spec": {"type": "BYO", "byo": {"image": "ghcr.io/example/agent:1", "args": ["serve"]}}}),
    );
    // a field HEAD declares and srt-controller does not carry: refused by name, never dropped
    api.create(
        "sandboxagents",
        json!({"apiVersion": "kagent.dev/v1alpha3", "kind": "SandboxAgent", "metadata": {"name": "iconic", "namespace": "team"},
               "spec": {"type": "BYO", "iconUrl": "https://example.com/icon.png",
                        "byo": {"image": "ghcr.io/example/agent:1"}}}),
    );
    let dir = srt_tests::scratch_dir("kagent-v1alpha3");
    let kubeconfig = fake_apiserver::write_kubeconfig(&dir, fake.addr);
    let metrics = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_srt-controller"))
        .args(["run", "--metrics-addr", &metrics.to_string()])
        .env("KUBECONFIG", kubeconfig)
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let refused = |api: &fake_apiserver::FakeApi| {
        api.get("sandboxagents", "team", "iconic")
            .and_then(|a| a["status"]["conditions"].as_array().cloned())
            .and_then(|c| c.into_iter().find(|c| c["type"] == "Accepted"))
    };
    while api.get("sandboxes", "team", "flat").is_none() || refused(&api).is_none() {
        if start.elapsed() > Duration::from_secs(30) {
            let _ = child.kill();
            panic!("no Sandbox for the v1alpha3 agent: {:?}", api.get("sandboxagents", "team", "flat"));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let _ = child.kill();
    let _ = child.wait();
    let sandbox = api.get("sandboxes", "team", "flat").unwrap();
    let c = &sandbox["spec"]["podTemplate"]["spec"]["containers"][0];
    assert_eq!(c["image"], "ghcr.io/example/agent:1");
    assert_eq!(c["args"], json!(["serve"]));
    let accepted = refused(&api).unwrap();
    assert_eq!((accepted["status"].as_str(), accepted["reason"].as_str()), (Some("False"), Some("UnsupportedField")));
    assert!(accepted["message"].as_str().unwrap().starts_with("spec.iconUrl: "), "{accepted}");
    assert!(api.get("sandboxes", "team", "iconic").is_none(), "nothing is created for a refused agent");
}
