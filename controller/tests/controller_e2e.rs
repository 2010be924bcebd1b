#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The real `srt-controller run` binary with its watches, against the in-memory API server
//! in fake_apiserver/: agents are deployed and become Ready, bad ones are refused, edits
//! reach only the settings, a late agent-sandbox install is picked up, SIGTERM stops it.

mod apiserver_schema;
mod fake_apiserver;

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use fake_apiserver::{agent_json, model_config_json, write_kubeconfig, FakeApi, Running};
use serde_json::json;

struct Controller {
    child: Child,
    metrics_port: u16,
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

fn start_controller(fake: &Running, tag: &str, extra: &[&str]) -> Controller {
    let kubeconfig = write_kubeconfig(&srt_tests::scratch_dir(&format!("controller-e2e-{tag}")), fake.addr);
    let metrics_port = free_port();
    let child = Command::new(env!("CARGO_BIN_EXE_srt-controller"))
        .args(["run", "--metrics-addr", &format!("127.0.0.1:{metrics_port}")])
        .args(extra)
        .env("KUBECONFIG", kubeconfig)
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env("RUST_LOG", std::env::var("E2E_LOG").unwrap_or_else(|_| "warn".into()))
        .stdout(Stdio::null())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    Controller { child, metrics_port }
}

impl Drop for Controller {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// (group, resource, verb) triples the ClusterRole grants.
fn granted_by_rbac() -> std::collections::BTreeSet<(String, String, String)> {
    let text =
        std::fs::read_to_string(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("deploy/rbac.yaml")).unwrap();
    let mut out = std::collections::BTreeSet::new();
    for doc in yaml_serde::Deserializer::from_str(&text) {
        let v: serde_json::Value = serde::Deserialize::deserialize(doc).unwrap();
        if v["kind"] != "ClusterRole" {
            continue;
        }
        for rule in v["rules"].as_array().unwrap() {
            for g in rule["apiGroups"].as_array().unwrap() {
                for r in rule["resources"].as_array().unwrap() {
                    for verb in rule["verbs"].as_array().unwrap() {
                        out.insert((
                            g.as_str().unwrap().into(),
                            r.as_str().unwrap().into(),
                            verb.as_str().unwrap().into(),
                        ));
                    }
                }
            }
        }
    }
    out
}

async fn wait_until(what: &str, timeout: Duration, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < timeout, "timed out after {timeout:?} waiting for: {what}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// GET on the controller's metrics port: (status line, body).
async fn http_get(port: u16, path: &str) -> Option<(String, String)> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut s = tokio::net::TcpStream::connect(("127.0.0.1", port)).await.ok()?;
    s.write_all(format!("GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n").as_bytes()).await.ok()?;
    let mut buf = String::new();
    s.read_to_string(&mut buf).await.ok()?;
    let (head, body) = buf.split_once("\r\n\r\n")?;
    Some((head.lines().next()?.to_string(), body.to_string()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agents_are_deployed_made_ready_edited_and_refused() {
    let fake = FakeApi::start().await;
    let api = fake.api.clone();
    api.sandboxes_become_ready.store(true, std::sync::atomic::Ordering::SeqCst);
    api.create("modelconfigs", model_config_json("kagent"));
    api.create("modelconfigs", model_config_json("team-b"));
    api.create("sandboxagents", agent_json("kagent", "alpha", &["api.github.com"]));
    api.create("sandboxagents", agent_json("team-b", "beta", &[]));
    api.create("sandboxagents", agent_json("kagent", "broken", &["https://api.github.com"]));
    // Stored under some other schema: must be refused without blocking the others.
    api.store_raw(
        "sandboxagents",
        json!({"apiVersion": "kagent.dev/v1alpha2", "kind": "SandboxAgent", "metadata": {"name": "garbled", "namespace": "kagent"},
               "spec": {"type": "BYO", "byo": {"deployment": {"image": "x", "env": "LOG_LEVEL=debug"}}}}),
    );

    let mut ctl = start_controller(&fake, "main", &[]);
    let t = Duration::from_secs(30);
    wait_until("alpha and beta Ready=True", t, || api.count_condition("sandboxagents", "Ready", "True") == 2).await;
    wait_until("broken Accepted=False", t, || {
        api.get("sandboxagents", "kagent", "broken")
            .is_some_and(|a| a["status"]["conditions"][0]["reason"] == "InvalidAllowedDomains")
    })
    .await;
    wait_until("garbled Accepted=False naming the bad field", t, || {
        api.get("sandboxagents", "kagent", "garbled").is_some_and(|a| {
            a["status"]["conditions"][0]["reason"] == "InvalidSpec"
                && a["status"]["conditions"][0]["message"]
                    .as_str()
                    .unwrap()
                    .starts_with("spec.byo.deployment: invalid type: string")
        })
    })
    .await;
    assert_eq!(api.count("sandboxes"), 2, "no Sandbox for the refused agents");
    assert_eq!(api.count("configmaps"), 2);
    let alpha = api.get("sandboxagents", "kagent", "alpha").unwrap();
    assert_eq!(alpha["status"]["conditions"][1]["reason"], "WorkloadReady");
    assert_eq!(alpha["status"]["observedGeneration"], 1);

    // Edit alpha's domains: the settings change, the Sandbox object does not.
    let sandbox_before = api.get("sandboxes", "kagent", "alpha").unwrap();
    let mut spec = alpha["spec"].clone();
    spec["sandbox"]["network"]["allowedDomains"] = json!(["api.github.com", "*.pypi.org"]);
    api.update_spec("sandboxagents", "kagent", "alpha", spec);
    wait_until("the settings ConfigMap carries the new domain", t, || {
        api.get("configmaps", "kagent", "alpha-srt-settings")
            .is_some_and(|c| c["data"]["srt-settings.json"].as_str().unwrap().contains("*.pypi.org"))
    })
    .await;
    wait_until("observedGeneration 2", t, || {
        api.get("sandboxagents", "kagent", "alpha").unwrap()["status"]["observedGeneration"] == 2
    })
    .await;
    let sandbox_after = api.get("sandboxes", "kagent", "alpha").unwrap();
    assert_eq!(
        sandbox_before["metadata"]["resourceVersion"], sandbox_after["metadata"]["resourceVersion"],
        "the Sandbox must not be rewritten when only domains change"
    );

    // An invalid edit of a running agent: refused, and its settings stay as they were.
    let settings_before = api.get("configmaps", "kagent", "alpha-srt-settings").unwrap();
    let mut spec = api.get("sandboxagents", "kagent", "alpha").unwrap()["spec"].clone();
    spec["sandbox"]["network"]["allowedDomains"] = json!(["api.github.com", "*"]);
    api.update_spec("sandboxagents", "kagent", "alpha", spec.clone());
    wait_until("alpha Accepted=False after the bad edit", t, || {
        api.get("sandboxagents", "kagent", "alpha")
            .is_some_and(|a| a["status"]["conditions"][0]["reason"] == "InvalidAllowedDomains")
    })
    .await;
    assert_eq!(api.get("configmaps", "kagent", "alpha-srt-settings").unwrap(), settings_before);
    assert_eq!(api.get("sandboxes", "kagent", "alpha").unwrap(), sandbox_after);
    spec["sandbox"]["network"]["allowedDomains"] = json!(["api.github.com", "*.pypi.org"]);
    api.update_spec("sandboxagents", "kagent", "alpha", spec);

    // Fix the broken agent: it is accepted and deployed.
    let mut spec = api.get("sandboxagents", "kagent", "broken").unwrap()["spec"].clone();
    spec["sandbox"]["network"]["allowedDomains"] = json!(["api.github.com"]);
    api.update_spec("sandboxagents", "kagent", "broken", spec);
    wait_until("broken, fixed, becomes Ready", t, || api.count_condition("sandboxagents", "Ready", "True") == 3).await;

    let start = Instant::now();
    loop {
        let (line, _) = http_get(ctl.metrics_port, "/readyz").await.unwrap();
        if line.contains("200") {
            break;
        }
        assert!(line.contains("503"), "{line}");
        assert!(start.elapsed() < Duration::from_secs(5), "/readyz still {line}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (line, _) = http_get(ctl.metrics_port, "/healthz").await.unwrap();
    assert!(line.contains("200"), "{line}");
    let (line, metrics) = http_get(ctl.metrics_port, "/metrics").await.unwrap();
    assert!(line.contains("200"), "{line}");
    assert!(metrics.contains("srt_controller_reconciles_total{result=\"rejected\"}"), "{metrics}");
    assert!(metrics.contains("srt_controller_sandbox_api_available 1"), "{metrics}");
    let (line, _) = http_get(ctl.metrics_port, "/nope").await.unwrap();
    assert!(line.contains("404"), "{line}");

    // Every request the controller made is allowed by controller/deploy/rbac.yaml.
    let granted = granted_by_rbac();
    let used = api.verbs.lock().unwrap().clone();
    for (group, resource, verb) in &used {
        assert!(
            granted.contains(&(group.clone(), resource.clone(), verb.clone())),
            "the controller used {verb} on {group}/{resource}, which deploy/rbac.yaml does not grant"
        );
    }
    for needed in [
        ("kagent.dev", "sandboxagents", "watch"),
        ("agents.x-k8s.io", "sandboxes", "create"),
        ("", "configmaps", "patch"),
    ] {
        assert!(used.contains(&(needed.0.into(), needed.1.into(), needed.2.into())), "{needed:?} not seen: {used:?}");
    }

    // SIGTERM: a clean exit.
    let status = Command::new("kill").args(["-TERM", &ctl.child.id().to_string()]).status().unwrap();
    assert!(status.success());
    let start = Instant::now();
    loop {
        if let Some(code) = ctl.child.try_wait().unwrap() {
            assert!(code.success(), "exit after SIGTERM: {code}");
            break;
        }
        assert!(start.elapsed() < Duration::from_secs(10), "did not stop after SIGTERM");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn agent_sandbox_installed_later_is_picked_up_without_a_restart() {
    let fake = FakeApi::start().await;
    let api = fake.api.clone();
    api.sandbox_api.store(false, std::sync::atomic::Ordering::SeqCst);
    api.create("modelconfigs", model_config_json("kagent"));
    api.create("sandboxagents", agent_json("kagent", "early", &["api.github.com"]));

    let _ctl = start_controller(&fake, "late", &["--sandbox-api-retry-seconds", "1"]);
    let t = Duration::from_secs(30);
    wait_until("early reports the missing Sandbox API", t, || {
        api.get("sandboxagents", "kagent", "early")
            .is_some_and(|a| a["status"]["conditions"][0]["reason"] == "SandboxAPIMissing")
    })
    .await;
    assert_eq!(api.count("configmaps"), 0);
    let message = api.get("sandboxagents", "kagent", "early").unwrap()["status"]["conditions"][0]["message"].clone();
    assert!(message.as_str().unwrap().contains("install agent-sandbox"), "{message}");

    api.sandboxes_become_ready.store(true, std::sync::atomic::Ordering::SeqCst);
    api.sandbox_api.store(true, std::sync::atomic::Ordering::SeqCst);
    wait_until("early deployed and Ready once agent-sandbox is there", t, || {
        api.count_condition("sandboxagents", "Ready", "True") == 1
    })
    .await;
    assert_eq!(api.count("sandboxes"), 1);
}

/// 400 invalid domains: the message names the first ones and counts the rest, so the status
/// fits kagent's schema (condition message at most 32768 characters), which the in-memory
/// API server applies as a real one would.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_list_of_invalid_domains_is_summarised_and_the_status_is_written() {
    let fake = FakeApi::start().await;
    let api = fake.api.clone();
    let domains: Vec<String> =
        (0..400).map(|i| format!("https://host-{i:03}.example.com/with/a/rather/long/path")).collect();
    let refs: Vec<&str> = domains.iter().map(String::as_str).collect();
    api.create("sandboxagents", agent_json("kagent", "many", &refs));
    let _ctl = start_controller(&fake, "many", &[]);
    wait_until("many Accepted=False", Duration::from_secs(30), || {
        api.get("sandboxagents", "kagent", "many")
            .is_some_and(|a| a["status"]["conditions"][0]["reason"] == "InvalidAllowedDomains")
    })
    .await;
    let agent = api.get("sandboxagents", "kagent", "many").unwrap();
    let message = agent["status"]["conditions"][0]["message"].as_str().unwrap();
    assert!(message.chars().count() <= 32768, "{} characters", message.chars().count());
    assert!(
        message.contains("allowedDomains[0] \"https://host-000.example.com/with/a/rather/long/path\""),
        "{message}"
    );
    assert!(message.ends_with("; and 380 more invalid entries"), "{message}");
}

/// `run` reads what a Declarative agent refers to from the API server: a missing ModelConfig
/// is named in the condition, creating it deploys the agent (the ModelConfig watch wakes it),
/// and an edit re-renders config.json. The API key stays a reference to its Secret.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn referenced_objects_are_read_watched_and_named_when_missing() {
    let fake = FakeApi::start().await;
    let api = fake.api.clone();
    api.sandboxes_become_ready.store(true, std::sync::atomic::Ordering::SeqCst);
    let mut agent = agent_json("kagent", "tooled", &[]);
    agent["spec"]["declarative"]["modelConfig"] = json!("gpt");
    agent["spec"]["declarative"]["tools"] =
        json!([{"type": "McpServer", "mcpServer": {"name": "tools", "kind": "RemoteMCPServer", "toolNames": ["t"]}}]);
    api.create("sandboxagents", agent);
    let _ctl = start_controller(&fake, "refs", &[]);
    let t = Duration::from_secs(30);
    let reason = |api: &FakeApi| {
        api.get("sandboxagents", "kagent", "tooled")
            .and_then(|a| a["status"]["conditions"][0]["reason"].as_str().map(String::from))
    };
    wait_until("ModelConfigNotFound", t, || reason(&api).as_deref() == Some("ModelConfigNotFound")).await;
    let message = api.get("sandboxagents", "kagent", "tooled").unwrap()["status"]["conditions"][0]["message"].clone();
    assert!(message.as_str().unwrap().contains("ModelConfig kagent/gpt"), "{message}");
    assert_eq!(api.count("sandboxes"), 0);

    let mut mc = model_config_json("kagent");
    mc["metadata"]["name"] = json!("gpt");
    api.create("modelconfigs", mc.clone());
    wait_until("ToolServerNotFound once the ModelConfig exists", t, || {
        reason(&api).as_deref() == Some("ToolServerNotFound")
    })
    .await;
    api.create(
        "remotemcpservers",
        json!({"apiVersion": "kagent.dev/v1alpha2", "kind": "RemoteMCPServer", "metadata": {"name": "tools", "namespace": "kagent"},
               "spec": {"description": "tools", "url": "http://tools.kagent:8084/mcp"}}),
    );
    wait_until("deployed and Ready", t, || api.count_condition("sandboxagents", "Ready", "True") == 1).await;
    let config = |api: &FakeApi| -> serde_json::Value {
        let secret = api.get("secrets", "kagent", "tooled-srt-config").unwrap();
        serde_json::from_str(secret["stringData"]["config.json"].as_str().unwrap()).unwrap()
    };
    assert_eq!(config(&api)["model"]["model"], "gpt-4o");
    assert_eq!(config(&api)["http_tools"][0]["params"]["url"], "http://tools.kagent:8084/mcp");
    let sandbox = api.get("sandboxes", "kagent", "tooled").unwrap();
    let env = &sandbox["spec"]["podTemplate"]["spec"]["containers"][0]["env"];
    assert!(
        env.as_array().unwrap().contains(&json!({"name": "OPENAI_API_KEY", "valueFrom": {"secretKeyRef": {"name": "openai-secret", "key": "api-key"}}})),
        "{env}"
    );

    // `render` of the same objects, offline, gives what `run` applied: the ConfigMap's data
    // and the pod template's config-hash.
    let input: String = [
        api.get("sandboxagents", "kagent", "tooled").unwrap(),
        api.get("modelconfigs", "kagent", "gpt").unwrap(),
        api.get("remotemcpservers", "kagent", "tools").unwrap(),
    ]
    .iter()
    .map(|o| yaml_serde::to_string(o).unwrap())
    .collect::<Vec<_>>()
    .join("---\n");
    let api_info = controller::discovery::SandboxApiInfo::for_release("0.5.6").unwrap();
    let offline =
        controller::render::render(&input, "e2e", &controller::options::Options::default(), &api_info).unwrap();
    let offline: Vec<serde_json::Value> = yaml_serde::Deserializer::from_str(&offline)
        .map(|d| serde::Deserialize::deserialize(d).unwrap())
        .filter(|v: &serde_json::Value| !v.is_null())
        .collect();
    assert_eq!(offline[0]["data"], api.get("configmaps", "kagent", "tooled-srt-settings").unwrap()["data"]);
    // (the spec as applied; the API server adds its defaults, e.g. ports' protocol)
    assert_eq!(
        offline.last().unwrap()["spec"]["podTemplate"]["metadata"],
        api.get("sandboxes", "kagent", "tooled").unwrap()["spec"]["podTemplate"]["metadata"]
    );

    // A change of the ModelConfig that changes nothing the agent reads (here: the same spec
    // written again, as a label edit or kagent's status write would be): the agent is
    // rendered again, and neither its ConfigMap nor its Sandbox is rewritten, so nothing
    // reaches the pod.
    let hash = |api: &FakeApi| {
        api.get("sandboxes", "kagent", "tooled").unwrap()["spec"]["podTemplate"]["metadata"]["annotations"]
            ["kagent.dev/config-hash"]
            .clone()
    };
    let (sandbox_before, cm_before) = (
        api.get("sandboxes", "kagent", "tooled").unwrap(),
        api.get("configmaps", "kagent", "tooled-srt-settings").unwrap(),
    );
    let hash_before = hash(&api);
    assert!(hash_before.is_string(), "{sandbox_before}");
    let applies = api.applies.load(std::sync::atomic::Ordering::SeqCst);
    let spec = api.get("modelconfigs", "kagent", "gpt").unwrap()["spec"].clone();
    api.update_spec("modelconfigs", "kagent", "gpt", spec);
    wait_until("the ModelConfig's watch event re-renders the agent (its three applies)", t, || {
        api.applies.load(std::sync::atomic::Ordering::SeqCst) >= applies + 3
    })
    .await;
    assert_eq!(api.get("sandboxes", "kagent", "tooled").unwrap(), sandbox_before, "the Sandbox must not change");
    assert_eq!(api.get("configmaps", "kagent", "tooled-srt-settings").unwrap(), cm_before);

    // An edit of the ModelConfig reaches config.json (no edit of the agent needed), and the
    // pod template's config-hash follows it, as kagent's does.
    api.update_spec("modelconfigs", "kagent", "gpt", json!({"provider": "OpenAI", "model": "gpt-4.1", "apiKeySecret": "openai-secret", "apiKeySecretKey": "api-key"}));
    wait_until("config.json follows the ModelConfig", t, || config(&api)["model"]["model"] == "gpt-4.1").await;
    wait_until("the config-hash follows config.json", t, || hash(&api) != hash_before).await;
    // agent-sandbox keeps the running pod (which read the old config.json): a Warning says so
    let restart_events = |api: &FakeApi| -> Vec<String> {
        api.events
            .lock()
            .unwrap()
            .iter()
            .filter(|e| e["reason"] == "PodRestartNeeded")
            .map(|e| e["note"].as_str().unwrap_or_default().to_string())
            .collect()
    };
    wait_until("a PodRestartNeeded event", t, || !restart_events(&api).is_empty()).await;
    let notes = restart_events(&api);
    assert_eq!(notes.len(), 1, "once, for the one change: {notes:?}");
    assert!(notes[0].contains("kubectl delete pod -n kagent -l kagent=tooled"), "{notes:?}");
}
