#![allow(clippy::unwrap_used, clippy::expect_used)]
//! The SandboxAgent CRD against kagent v0.9.7–v0.9.12's: manifests written like kagent's
//! docs and samples (tests/fixtures/kagent-samples) are neither rejected nor pruned by the
//! schema, survive the controller's own types without losing a field, and render; kagent's
//! defaults and CEL rules sit where kagent's CRD has them.

mod apiserver_schema;
mod common;

use std::path::{Path, PathBuf};

use common::schema;
use controller::discovery::SandboxApiInfo;
use controller::options::Options;
use controller::render;
use serde_json::{json, Value};

fn crd_schema() -> Value {
    let crd: Value = yaml_serde::from_str(&controller::crd_yaml()).unwrap();
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"].clone()
}

fn samples() -> Vec<(String, Value, String)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/kagent-samples");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    assert!(files.len() >= 6, "{files:?}");
    files
        .into_iter()
        .map(|f| {
            let text = std::fs::read_to_string(&f).unwrap();
            (f.file_stem().unwrap().to_string_lossy().into_owned(), yaml_serde::from_str(&text).unwrap(), text)
        })
        .collect()
}

/// Every leaf of `want` is in `got` at the same place (defaults `got` adds are fine).
fn missing(want: &Value, got: &Value, at: &str, out: &mut Vec<String>) {
    match (want, got) {
        (Value::Object(w), Value::Object(g)) => {
            for (k, v) in w {
                match g.get(k) {
                    Some(gv) => missing(v, gv, &format!("{at}.{k}"), out),
                    None if v == &json!({}) || v == &json!([]) => {}
                    None => out.push(format!("{at}.{k}")),
                }
            }
        }
        (Value::Array(w), Value::Array(g)) if w.len() == g.len() => {
            for (i, (a, b)) in w.iter().zip(g).enumerate() {
                missing(a, b, &format!("{at}[{i}]"), out);
            }
        }
        (w, g) if w == g => {}
        _ => out.push(format!("{at}: {want} became {got}")),
    }
}

#[test]
fn kagents_samples_are_neither_rejected_nor_pruned_and_keep_every_field() {
    let root = crd_schema();
    for (name, manifest, _) in samples() {
        // (apiVersion, kind and metadata are the API server's own, not in the CRD's schema)
        let problems = schema::check(&root["properties"]["spec"], &manifest["spec"], "spec");
        assert_eq!(problems, Vec::<String>::new(), "{name}: the API server would refuse or prune");
        // What the controller reads (stored.rs parses the watched object) keeps all of it.
        let obj: kube::api::DynamicObject = serde_json::from_value(manifest.clone()).unwrap();
        let agent = controller::stored::parse(&obj).unwrap_or_else(|e| panic!("{name}: {}", e.rejection.message));
        let mut lost = Vec::new();
        missing(&manifest["spec"], &serde_json::to_value(&agent.spec).unwrap(), "spec", &mut lost);
        assert_eq!(lost, Vec::<String>::new(), "{name}: fields the controller's types drop");
    }
}

#[test]
fn the_schema_check_would_notice_a_pruned_or_mistyped_field() {
    let root = crd_schema();
    let bad = json!({"spec": {"type": "BYO", "byo": {"deployment": {"image": "x", "workDir": "/app", "args": "run"}}}});
    let problems = schema::check(&root, &bad, "");
    assert!(
        problems.contains(&".spec.byo.deployment.workDir: field not declared in schema (pruned)".to_string()),
        "{problems:?}"
    );
    assert!(
        problems
            .iter()
            .any(|p| p.starts_with(".spec.byo.deployment.args: Invalid value: \"string\": must be of type array")),
        "{problems:?}"
    );
    let bounds = json!({"spec": {"declarative": {"memory": {"ttlDays": 0}}, "skills": {"refs": []}}});
    let problems = schema::check(&root, &bounds, "");
    assert!(
        problems.iter().any(|p| p
            .starts_with(".spec.declarative.memory.ttlDays: Invalid value: 0: should be greater than or equal to 1")),
        "{problems:?}"
    );
    assert!(
        problems.iter().any(|p| p.starts_with(".spec.declarative.memory.modelConfig: Required value")),
        "{problems:?}"
    );
    assert!(
        problems.iter().any(|p| p.starts_with(".spec.skills.refs: Invalid value: 0: should have at least 1 items")),
        "{problems:?}"
    );
}

#[test]
fn every_sample_renders_except_the_documented_unsafe_one() {
    let api = SandboxApiInfo::for_release("0.5.6").unwrap();
    for (name, _, text) in samples() {
        let result = render::render(&with_refs(&text), &name, &Options::default(), &api);
        if name.starts_with("unsafe-") {
            let err = result.unwrap_err().to_string();
            assert!(err.contains("(UnsafeSecurityContext)"), "{name}: {err}");
        } else {
            result.unwrap_or_else(|e| panic!("{name}: {e}"));
        }
    }
}

/// A sample followed by the objects the samples refer to (ModelConfigs, tool servers, ...).
fn with_refs(text: &str) -> String {
    let refs = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/kagent-sample-refs.yaml");
    format!("{text}\n---\n{}", std::fs::read_to_string(refs).unwrap())
}

fn docs_of(sample: &str) -> Vec<Value> {
    let (_, _, text) = samples().into_iter().find(|(n, _, _)| n == sample).unwrap();
    let text = with_refs(&text);
    let api = SandboxApiInfo::for_release("0.5.6").unwrap();
    let out = render::render(&text, sample, &Options::default(), &api).unwrap();
    yaml_serde::Deserializer::from_str(&out)
        .map(|d| serde::Deserialize::deserialize(d).unwrap())
        .filter(|v: &Value| !v.is_null())
        .collect()
}

#[test]
fn byo_working_dir_and_sidecars_reach_the_pod_unprivileged() {
    let docs = docs_of("byo-workingdir-extracontainers");
    let pod = &docs.last().unwrap()["spec"]["podTemplate"]["spec"];
    let containers = pod["containers"].as_array().unwrap();
    assert_eq!(containers.len(), 2);
    assert_eq!(containers[0]["workingDir"], "/app");
    assert_eq!(containers[0]["command"], json!(["python"]));
    let sidecar = &containers[1];
    assert_eq!(sidecar["name"], "token-proxy");
    assert_eq!(sidecar["args"], json!(["--listen", "127.0.0.1:9000"]));
    assert_eq!(sidecar["securityContext"]["privileged"], false);
    assert_eq!(sidecar["securityContext"]["allowPrivilegeEscalation"], false);
    assert_eq!(sidecar["securityContext"]["capabilities"]["drop"], json!(["ALL"]));
}

#[test]
fn service_account_config_labels_and_annotates_the_agents_account() {
    let docs = docs_of("service-account-config");
    let sa = docs.iter().find(|d| d["kind"] == "ServiceAccount").unwrap();
    assert_eq!(sa["metadata"]["name"], "cloud-agent");
    assert_eq!(sa["metadata"]["labels"]["team"], "platform");
    assert_eq!(sa["metadata"]["labels"]["kagent"], "cloud-agent");
    assert_eq!(
        sa["metadata"]["annotations"]["iam.gke.io/gcp-service-account"],
        "cloud-agent@example.iam.gserviceaccount.com"
    );
    let pod = &docs.last().unwrap()["spec"]["podTemplate"]["spec"];
    assert_eq!(pod["serviceAccountName"], "cloud-agent");
}

#[test]
fn declarative_agents_get_config_json_and_agent_card_json_beside_the_settings() {
    let docs = docs_of("declarative-everything");
    // in the config Secret, not the settings ConfigMap the namespace's `view` role reads
    assert!(docs[0]["data"].get("config.json").is_none());
    let secret = docs.iter().find(|d| d["kind"] == "Secret").unwrap();
    let config: Value = serde_json::from_str(secret["stringData"]["config.json"].as_str().unwrap()).unwrap();
    assert_eq!(config["model"], json!({"type": "openai", "model": "gpt-4.1-mini", "base_url": ""}));
    assert_eq!(config["description"], "Answers questions about the cluster.");
    assert_eq!(config["instruction"], "You are k8s-agent. Answer with kubectl commands where you can.\n");
    assert_eq!(config["context_config"]["compaction"]["compaction_interval"], 10);
    assert_eq!(config["context_config"]["compaction"]["summarizer_model"]["type"], "anthropic");
    assert_eq!(
        config["memory"],
        json!({"ttl_days": 30, "embedding": {"provider": "openai", "model": "text-embedding-3-small"}})
    );
    assert_eq!(
        config["http_tools"],
        json!([{"params": {"url": "http://kagent-tools.kagent:8084/mcp", "headers": {"X-Tenant": "team-a"}, "timeout": 30},
                "tools": ["k8s_get_resources", "k8s_apply_manifest"], "require_approval": ["k8s_apply_manifest"],
                "allowed_headers": ["x-user-email"]}])
    );
    assert_eq!(
        config["remote_agents"],
        json!([{"name": "kagent__NS__helm_agent", "url": "http://helm-agent.kagent:8080", "description": "Manages Helm releases."}])
    );
    let card: Value = serde_json::from_str(secret["stringData"]["agent-card.json"].as_str().unwrap()).unwrap();
    assert_eq!(card["name"], "k8s_agent");
    assert_eq!(card["url"], "http://k8s-agent.kagent:8080");
    assert_eq!(card["skills"][0]["name"], "Diagnose");
    // the model's key (OpenAI) and the summarizer's (Anthropic) come from their Secrets
    let sandbox = docs.last().unwrap();
    let env = &sandbox["spec"]["podTemplate"]["spec"]["containers"][0]["env"];
    let from_secret: Vec<(String, String)> = env
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| {
            e["valueFrom"]["secretKeyRef"]
                .as_object()
                .map(|r| (e["name"].as_str().unwrap().to_string(), r["name"].as_str().unwrap().to_string()))
        })
        .collect();
    assert!(from_secret.contains(&("ANTHROPIC_API_KEY".into(), "kagent-anthropic".into())), "{from_secret:?}");
    assert!(from_secret.contains(&("OPENAI_API_KEY".into(), "kagent-openai".into())), "{from_secret:?}");
    assert_eq!(
        sandbox["spec"]["podTemplate"]["spec"]["containers"][0]["image"],
        "cr.kagent.dev/kagent-dev/kagent/golang-adk:0.9.12-full"
    );
    let byo = docs_of("byo-workingdir-extracontainers");
    assert!(byo[0]["data"].get("config.json").is_none(), "BYO images bring their own config");
    assert!(!byo.iter().any(|d| d["kind"] == "Secret"), "and get no config Secret");
}

/// kagent's CEL rules, at the schema node where kagent's CRD has them.
#[test]
fn the_crd_carries_kagents_cel_rules() {
    let root = crd_schema();
    let spec = "/properties/spec";
    let deployment = |kind: &str| format!("{spec}/properties/{kind}/properties/deployment");
    let expected: Vec<(String, &str)> = vec![
        (spec.into(), "has(self.type)"),
        (spec.into(), "self.type == 'Declarative' || self.type == 'BYO'"),
        (spec.into(), "(self.type == 'Declarative' && has(self.declarative)) || (self.type == 'BYO' && has(self.byo))"),
        (spec.into(), "!has(self.skills) || self.platform != 'substrate'"),
        (spec.into(), "!has(self.substrate) || self.platform == 'substrate'"),
        (spec.into(), "!has(self.type) || self.type != 'BYO' || self.platform != 'substrate'"),
        (format!("{spec}/properties/declarative"), "!has(self.systemMessage) || !has(self.systemMessageFrom)"),
        (deployment("byo"), "!(has(self.serviceAccountName) && has(self.serviceAccountConfig))"),
        (
            format!("{spec}/properties/declarative/properties/deployment"),
            "!(has(self.serviceAccountName) && has(self.serviceAccountConfig))",
        ),
        (format!("{spec}/properties/allowedNamespaces"), "!(self.from == 'Selector' && !has(self.selector))"),
        (
            format!("{spec}/properties/declarative/properties/tools/items"),
            "!(has(self.mcpServer) && self.type != 'McpServer')",
        ),
        (
            format!("{spec}/properties/declarative/properties/tools/items"),
            "!(!has(self.agent) && self.type == 'Agent')",
        ),
        (
            format!("{spec}/properties/declarative/properties/tools/items/properties/mcpServer"),
            "!has(self.requireApproval) || self.requireApproval.all(x, has(self.toolNames) && x in self.toolNames)",
        ),
        (
            format!("{spec}/properties/declarative/properties/tools/items/properties/headersFrom/items"),
            "(has(self.value) && !has(self.valueFrom)) || (!has(self.value) && has(self.valueFrom))",
        ),
    ];
    for (path, rule) in expected {
        let node = root.pointer(&path).unwrap_or_else(|| panic!("no schema node {path}"));
        let rules: Vec<&str> = node["x-kubernetes-validations"]
            .as_array()
            .map(|a| a.iter().map(|r| r["rule"].as_str().unwrap()).collect())
            .unwrap_or_default();
        assert!(rules.contains(&rule), "{path}: {rule} missing from {rules:?}");
    }
}

#[test]
fn the_crd_applies_kagents_defaults() {
    let root = crd_schema();
    let spec = "/properties/spec/properties";
    for (path, default) in [
        (format!("{spec}/type"), json!("Declarative")),
        (format!("{spec}/platform"), json!("agent-sandbox")),
        (format!("{spec}/declarative/properties/runtime"), json!("python")),
        (format!("{spec}/allowedNamespaces/properties/from"), json!("Same")),
        (format!("{spec}/skills/properties/gitRefs/items/properties/ref"), json!("main")),
        (
            format!("{spec}/declarative/properties/context/properties/compaction/properties/compactionInterval"),
            json!(5),
        ),
        (format!("{spec}/declarative/properties/context/properties/compaction/properties/overlapSize"), json!(2)),
        // Kubernetes' references: name defaults to "" (kagent's CRD, k8s >= 1.30), not required.
        (format!("{spec}/byo/properties/deployment/properties/imagePullSecrets/items/properties/name"), json!("")),
    ] {
        let node = root.pointer(&path).unwrap_or_else(|| panic!("no schema node {path}"));
        assert_eq!(node["default"], default, "{path}");
    }
    assert!(
        root.get("required").is_none_or(|r| !r.as_array().unwrap().contains(&json!("spec"))),
        "spec is optional in kagent"
    );
}
