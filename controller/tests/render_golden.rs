#![allow(clippy::unwrap_used, clippy::expect_used)]
//! `render` output against committed golden files, and the properties every rendered
//! Sandbox must have whatever the input. Regenerate with `SRT_BLESS=1 cargo test -p controller`.

use std::path::{Path, PathBuf};

use controller::discovery::SandboxApiInfo;
use controller::options::Options;
use controller::render;
use serde_json::Value;

const CASES: &[&str] = &["seed-sandbox-agent", "seed-allowlist", "seed-skills", "byo", "vault-injector"];

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

fn rendered(case: &str) -> String {
    let input = std::fs::read_to_string(dir().join(format!("{case}.yaml"))).unwrap();
    render::render(&input, case, &Options::default(), &api()).unwrap_or_else(|e| panic!("{case}: {e}"))
}

/// What `render` assumes without --agent-sandbox.
fn api() -> SandboxApiInfo {
    SandboxApiInfo::for_release(render::DEFAULT_RELEASE).unwrap()
}

fn documents(yaml: &str) -> Vec<Value> {
    yaml_serde::Deserializer::from_str(yaml)
        .map(|d| serde::Deserialize::deserialize(d).unwrap())
        .filter(|v: &Value| !v.is_null())
        .collect()
}

#[test]
fn render_matches_the_golden_files() {
    let bless = std::env::var_os("SRT_BLESS").is_some();
    for case in CASES {
        let out = rendered(case);
        let golden = dir().join(format!("{case}.rendered.yaml"));
        if bless {
            std::fs::write(&golden, &out).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&golden).unwrap_or_default();
        pretty_assertions::assert_eq!(want, out, "{case}: render output changed; SRT_BLESS=1 regenerates");
    }
}

#[test]
fn every_rendered_sandbox_is_unprivileged_and_mounts_valid_settings() {
    for case in CASES {
        let docs = documents(&rendered(case));
        let (cm, sandbox) = (&docs[0], docs.last().unwrap());
        assert_eq!(cm["kind"], "ConfigMap");
        assert_eq!(sandbox["kind"], "Sandbox");
        assert_eq!(sandbox["apiVersion"], "agents.x-k8s.io/v1beta1");
        let pod = &sandbox["spec"]["podTemplate"]["spec"];
        // a Declarative agent's config.json, card and spec are in a Secret, never the ConfigMap
        let secret = docs.iter().find(|d| d["kind"] == "Secret");
        for key in ["config.json", "agent-card.json", "agent-spec.json"] {
            assert!(cm["data"].get(key).is_none(), "{case}: {key} in the ConfigMap");
        }
        if let Some(secret) = secret {
            assert_eq!(docs[1], *secret, "{case}: the Secret follows the ConfigMap");
            assert!(secret["stringData"]["config.json"].is_string(), "{case}");
            let sources = &pod["volumes"][0]["projected"]["sources"];
            assert_eq!(sources[0]["configMap"]["name"], cm["metadata"]["name"], "{case}");
            assert_eq!(sources[1]["secret"]["name"], secret["metadata"]["name"], "{case}");
        }
        let docs: Vec<&Value> = docs.iter().filter(|d| d["kind"] != "Secret").collect();
        if docs.len() == 3 {
            assert_eq!(docs[1]["kind"], "ServiceAccount", "{case}");
            assert_eq!(docs[1]["metadata"]["name"], sandbox["metadata"]["name"], "{case}");
            assert_eq!(pod["serviceAccountName"], sandbox["metadata"]["name"], "{case}: runs as its own account");
            assert_eq!(pod["automountServiceAccountToken"], false, "{case}");
        } else {
            assert_eq!(docs.len(), 2, "{case}: a ConfigMap, a ServiceAccount unless the spec names one, a Sandbox");
        }

        let settings = cm["data"]["srt-settings.json"].as_str().unwrap();
        settings_schema::parse_str(settings, Path::new(case)).unwrap_or_else(|e| panic!("{case}: {e}"));
        // the pod's plain variables reach commands only when the settings name them
        let environment: Value = serde_json::from_str::<Value>(settings).unwrap()["environment"].clone();
        assert_eq!(environment["inherit"], "core", "{case}");

        assert_eq!(pod["securityContext"]["runAsNonRoot"], true, "{case}");
        assert_eq!(pod["securityContext"]["seccompProfile"]["type"], "RuntimeDefault", "{case}");
        assert_ne!(pod["securityContext"]["runAsUser"], 0, "{case}");
        assert!(pod.get("hostNetwork").is_none() && pod.get("hostPID").is_none(), "{case}");
        let containers: Vec<&Value> =
            pod["containers"].as_array().unwrap().iter().chain(pod["initContainers"].as_array().unwrap()).collect();
        for c in containers {
            let sc = &c["securityContext"];
            assert_eq!(sc["privileged"], false, "{case}");
            assert_eq!(sc["allowPrivilegeEscalation"], false, "{case}");
            assert!(sc["capabilities"].get("add").is_none(), "{case}: no capability may be added");
            assert!(sc["capabilities"]["drop"].as_array().unwrap().contains(&Value::from("ALL")), "{case}");
            for m in c["volumeMounts"].as_array().unwrap() {
                assert!(m.get("subPath").is_none() && m.get("subPathExpr").is_none(), "{case}: {m}");
            }
        }

        // The rest of the `restricted` Pod Security Standard: only these volume types, no host
        // namespaces or ports.
        let allowed = [
            "configMap",
            "emptyDir",
            "secret",
            "projected",
            "downwardAPI",
            "persistentVolumeClaim",
            "ephemeral",
            "csi",
        ];
        for v in pod["volumes"].as_array().unwrap() {
            let kind = v.as_object().unwrap().keys().find(|k| *k != "name").unwrap();
            assert!(allowed.contains(&kind.as_str()), "{case}: volume type {kind}");
        }
        assert!(pod.get("hostIPC").is_none(), "{case}");
        for c in pod["containers"].as_array().unwrap() {
            for port in c["ports"].as_array().unwrap() {
                assert!(port.get("hostPort").is_none(), "{case}");
            }
        }

        let agent = &pod["containers"][0];
        let env = |name: &str| {
            agent["env"].as_array().unwrap().iter().find(|e| e["name"] == name).map(|e| e["value"].clone())
        };
        assert_eq!(env("KAGENT_SRT_SETTINGS_PATH"), Some(Value::from("/config/srt-settings.json")), "{case}");
        assert_eq!(env("SRT_SETTINGS_PATH"), Some(Value::from("/config/srt-settings.json")), "{case}");
        assert_eq!(env("KAGENT_URL"), Some(Value::from("http://kagent-controller.kagent:8083")), "{case}");
        if let Some(path) = env("PATH") {
            assert!(path.as_str().unwrap().starts_with("/usr/local/sbin:"), "{case}: a PATH the spec sets keeps srt");
        }
        let srt = agent["volumeMounts"].as_array().unwrap().iter().find(|m| m["name"] == "srt-bin").unwrap();
        assert_eq!(srt["mountPath"], "/usr/local/sbin", "{case}: srt where image PATHs already look");
        let settings_volume = pod["volumes"].as_array().unwrap().iter().find(|v| v["name"] == "srt-settings").unwrap();
        let settings_cm = settings_volume["configMap"]["name"]
            .as_str()
            .or(settings_volume["projected"]["sources"][0]["configMap"]["name"].as_str());
        assert_eq!(settings_cm, cm["metadata"]["name"].as_str(), "{case}");
        let mount = agent["volumeMounts"].as_array().unwrap().iter().find(|m| m["name"] == "srt-settings").unwrap();
        assert_eq!(mount["mountPath"], "/config", "{case}");

        // what srt's commands may not see: every variable from a Secret, kagent's token
        // directory and every Secret or token volume the agent mounts
        let parsed: Value = serde_json::from_str(settings).unwrap();
        let excluded = parsed["environment"]["exclude"].as_array().cloned().unwrap_or_default();
        for e in agent["env"].as_array().unwrap() {
            if e["valueFrom"].get("secretKeyRef").is_some() {
                assert!(excluded.contains(&e["name"]), "{case}: {} comes from a Secret: {settings}", e["name"]);
            }
        }
        let denied = parsed["filesystem"]["denyRead"].as_array().unwrap();
        assert!(denied.contains(&Value::from("/var/run/secrets")), "{case}: kagent's token directory: {settings}");
        assert_eq!(parsed["filesystem"]["listable"].as_array(), Some(denied), "{case}: `ls /` keeps working");
        for m in agent["volumeMounts"].as_array().unwrap() {
            let volume = pod["volumes"].as_array().unwrap().iter().find(|v| v["name"] == m["name"]).unwrap();
            let path = m["mountPath"].as_str().unwrap();
            let credential = volume.get("secret").is_some()
                || volume["projected"]["sources"].as_array().is_some_and(|s| {
                    s.iter().any(|x| x.get("secret").is_some() || x.get("serviceAccountToken").is_some())
                });
            if credential {
                assert!(
                    denied.iter().any(|d| path == d || path.starts_with(&format!("{}/", d.as_str().unwrap()))),
                    "{case}: {path} holds credentials: {settings}"
                );
            }
        }
    }
}

#[test]
fn byo_carries_the_deployment_and_options() {
    let docs = documents(&rendered("byo"));
    assert_eq!(docs.len(), 2, "the spec names its account: no ServiceAccount is made");
    let sandbox = &docs[1];
    let pod = &sandbox["spec"]["podTemplate"]["spec"];
    assert_eq!(pod["runtimeClassName"], "gvisor");
    assert_eq!(pod["serviceAccountName"], "research-bot");
    assert!(pod.get("automountServiceAccountToken").is_none(), "an agent with its own account keeps its token");
    assert_eq!(pod["securityContext"]["runAsUser"], 2000);
    let agent = &pod["containers"][0];
    assert_eq!(agent["image"], "registry.example.com/research-bot:1.4.2");
    assert_eq!(agent["command"], serde_json::json!(["/app/agent"]));
    assert_eq!(agent["securityContext"]["readOnlyRootFilesystem"], true);
    let path = agent["env"].as_array().unwrap().iter().find(|e| e["name"] == "PATH").unwrap();
    assert_eq!(path["value"], "/usr/local/sbin:/app/bin:/usr/bin:/bin");
    assert_eq!(sandbox["metadata"]["labels"]["team"], "research");
    assert_eq!(sandbox["spec"]["podTemplate"]["metadata"]["labels"]["tier"], "agents");
    assert_eq!(sandbox["metadata"]["annotations"]["example.com/owner"], "research-team");
    assert!(sandbox["metadata"]["annotations"].get("kubectl.kubernetes.io/last-applied-configuration").is_none());
    assert_eq!(sandbox["metadata"]["ownerReferences"][0]["uid"], "0b8e6a3c-5f7d-4e21-8c9a-1d2e3f4a5b6c");
    assert!(docs[0]["data"].get("agent-spec.json").is_none(), "BYO agents get no declarative spec file");
}

#[test]
fn an_agent_that_would_be_rejected_renders_nothing_and_names_the_entries() {
    let input = std::fs::read_to_string(dir().join("invalid-domains.yaml")).unwrap();
    let err = render::render(&input, "invalid-domains.yaml", &Options::default(), &api()).unwrap_err().to_string();
    assert!(err.contains("kagent/sandbox-agent would not be accepted (InvalidAllowedDomains)"), "{err}");
    assert!(err.contains("allowedDomains[1] \"https://api.openai.com/v1\": has a scheme"), "{err}");
    assert!(err.contains("allowedDomains[2] \"kagent-controller\""), "{err}");
    assert!(!err.contains("[0]"), "{err}");
}

#[test]
fn other_kinds_are_refused_by_document_number() {
    let err = render::render(
        "apiVersion: v1\nkind: ConfigMap\n---\napiVersion: apps/v1\nkind: Deployment\n",
        "x.yaml",
        &Options::default(),
        &api(),
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.starts_with(
            "x.yaml: document 2 is apiVersion \"apps/v1\", kind \"Deployment\"; render reads SandboxAgents"
        ),
        "{err}"
    );
    // referenced objects alone are no agent to render
    let err = render::render("apiVersion: v1\nkind: ConfigMap\n", "x.yaml", &Options::default(), &api()).unwrap_err();
    assert_eq!(err.to_string(), "x.yaml: no SandboxAgent in the input");
    assert!(render::render("", "empty.yaml", &Options::default(), &api()).is_err());
}

/// The API-key variable a ModelConfig adds to a Declarative agent's container is not in the
/// spec: only the pod as built shows it, and the rendered settings exclude it by name all
/// the same, beside a spec variable from a Secret whose name no credential rule knows. A
/// spec variable of the key's name gives way to the model's (kagent's order: a later entry
/// wins), so the pod holds one, from the Secret, and it stays excluded.
#[test]
fn a_declarative_agents_model_key_is_kept_from_commands() {
    let input = r#"
apiVersion: kagent.dev/v1alpha2
kind: SandboxAgent
metadata: {name: claude-agent, namespace: team}
spec:
  declarative:
    modelConfig: claude
    systemMessage: You hold a key.
    deployment:
      env:
      - {name: ANTHROPIC_API_KEY, value: sk-ant-spec-copy}
      - name: ACME_LICENSE
        valueFrom: {secretKeyRef: {name: acme, key: license}}
---
apiVersion: kagent.dev/v1alpha2
kind: ModelConfig
metadata: {name: claude, namespace: team}
spec: {provider: Anthropic, model: claude-sonnet-4-5, apiKeySecret: anthropic-key, apiKeySecretKey: key}
"#;
    let docs = documents(&render::render(input, "claude.yaml", &Options::default(), &api()).unwrap());
    let secret = docs.iter().find(|d| d["kind"] == "Secret").unwrap();
    let config: Value = serde_json::from_str(secret["stringData"]["config.json"].as_str().unwrap()).unwrap();
    assert_eq!(config["model"]["type"], "anthropic", "{config}");
    let agent = &docs.last().unwrap()["spec"]["podTemplate"]["spec"]["containers"][0];
    let keys: Vec<&Value> =
        agent["env"].as_array().unwrap().iter().filter(|e| e["name"] == "ANTHROPIC_API_KEY").collect();
    assert_eq!(keys.len(), 1, "{keys:?}");
    assert_eq!(keys[0]["valueFrom"]["secretKeyRef"], serde_json::json!({"name": "anthropic-key", "key": "key"}));
    assert!(keys[0].get("value").is_none(), "the spec's copy is gone: {keys:?}");
    let settings: Value = serde_json::from_str(docs[0]["data"]["srt-settings.json"].as_str().unwrap()).unwrap();
    assert_eq!(
        settings["environment"]["exclude"],
        serde_json::json!(["ACME_LICENSE", "ANTHROPIC_API_KEY"]),
        "{settings}"
    );
}

/// The Vault Agent Injector adds /vault/secrets (and a moved secret's path) after render: the
/// rendered settings deny them to commands, listable, with only the named CA readable; srt
/// enforces exactly these rules in both modes, as root and as uid 65534
/// (runtime/tests/escape/fs_read.rs: read_inside_deny_read_dir,
/// listable_denied_tree_shows_names_only, deeper_deny_inside_allow_read).
#[test]
fn a_secret_injectors_paths_are_denied_to_commands() {
    let docs = documents(&rendered("vault-injector"));
    let settings: Value = serde_json::from_str(docs[0]["data"]["srt-settings.json"].as_str().unwrap()).unwrap();
    let fs = &settings["filesystem"];
    for path in ["/vault/secrets", "/srv/db", "/mnt/keys"] {
        assert!(fs["denyRead"].as_array().unwrap().contains(&Value::from(path)), "{path}: {fs}");
        assert!(fs["listable"].as_array().unwrap().contains(&Value::from(path)), "{path}: {fs}");
    }
    assert_eq!(fs["allowRead"], serde_json::json!(["/vault/secrets/ca.pem"]));
    assert_eq!(settings["environment"], serde_json::json!({"include": ["LOG_LEVEL"], "inherit": "core"}));
    let pod = &docs.last().unwrap()["spec"]["podTemplate"];
    assert_eq!(pod["metadata"]["annotations"]["vault.hashicorp.com/agent-inject"], "true", "the webhook still sees it");
}
