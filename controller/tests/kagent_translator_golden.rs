#![allow(clippy::unwrap_used, clippy::expect_used)]
//! kagent v0.9.12's own translator golden tests (tests/fixtures/upstream/kagent-v0.9.12/
//! translator-testdata: each input's objects, and the config kagent's translator wrote for
//! its target agent), rendered by srt-controller: every Declarative case with a model, its
//! target Agent run as a SandboxAgent with the same spec, the other objects as the lookup.
//! `config.json` must equal kagent's on `model`, `instruction`, `http_tools`, `sse_tools`,
//! `remote_agents`, `execute_code` and `stream`; each case that differs is listed below with
//! the reason (the README's list), and the test fails if it differs otherwise or no longer.

use std::path::{Path, PathBuf};

use controller::agent_config;
use controller::crd::{SandboxAgent, SandboxAgentSpec};
use controller::discovery::SandboxApiInfo;
use controller::objects;
use controller::options::Options;
use controller::refs::{Kind, Lookup, ObjRef};
use serde_json::Value;

/// The fields the issue names, and the rest of config.json kagent writes.
const FIELDS: &[&str] = &[
    "model",
    "instruction",
    "http_tools",
    "sse_tools",
    "remote_agents",
    "execute_code",
    "stream",
    "description",
    "memory",
    "context_config",
    "network",
];

/// Cases that differ, with what the test expects instead of kagent's config.
enum Differs {
    /// Refused with this condition reason (kagent reads a Secret's value into config.json).
    Refused(&'static str),
    /// These fields differ (kagent's --proxy-url, which srt-controller does not have).
    Fields(&'static [&'static str]),
}

const LISTED: &[(&str, Differs)] = &[
    // a header value from a Secret
    ("agent_with_http_toolserver", Differs::Refused("SecretValueNotRead")),
    ("agent_with_nested_agent", Differs::Refused("SecretValueNotRead")),
    ("agent_with_cross_namespace_tools", Differs::Refused("SecretValueNotRead")),
    // the system message from a Secret
    ("agent_with_system_message_from_secret", Differs::Refused("SecretValueNotRead")),
    // kagent's translator runs with a proxy URL for these; srt-controller has no proxy option
    ("agent_with_proxy", Differs::Fields(&["http_tools", "remote_agents"])),
    ("agent_with_proxy_mcpserver", Differs::Fields(&["http_tools"])),
    ("agent_with_proxy_mcpserver_custom_timeout", Differs::Fields(&["http_tools"])),
    ("agent_with_proxy_service", Differs::Fields(&["http_tools"])),
];

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/upstream/kagent-v0.9.12/translator-testdata")
}

struct Case {
    name: String,
    expected: Value,
    outcome: Result<Value, String>,
    /// kagent's Deployment pod spec and skills-init config, and ours (when accepted).
    kagent_pod: Value,
    kagent_skills_init: Option<Value>,
    ours: Option<(Value, Option<Value>)>,
}

fn cases() -> Vec<Case> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir().join("inputs")).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let name = f.file_stem().unwrap().to_string_lossy().into_owned();
        let input: Value = serde_yaml::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
        let ns = input["namespace"].as_str().unwrap();
        let target = input["targetObject"].as_str().unwrap();
        let mut lookup = Lookup::complete();
        let mut agent = None;
        for o in input["objects"].as_array().unwrap() {
            let (api, kind) = (o["apiVersion"].as_str().unwrap(), o["kind"].as_str().unwrap());
            let on = o["metadata"]["namespace"].as_str().unwrap_or(ns);
            let oname = o["metadata"]["name"].as_str().unwrap();
            if kind == "Agent" && oname == target && on == ns {
                agent = Some(o.clone());
            }
            if let Some(k) = Kind::of(api, kind) {
                lookup.insert(ObjRef::new(k, on, oname), Some(o.clone()));
            }
        }
        let agent = agent.unwrap();
        let spec: SandboxAgentSpec = serde_json::from_value(agent["spec"].clone()).unwrap();
        let Some(d) = spec.declarative.clone() else { continue };
        let expected: Value =
            serde_json::from_str(&std::fs::read_to_string(dir().join(format!("outputs/{name}.json"))).unwrap())
                .unwrap();
        if expected["config"]["model"].is_null() {
            continue;
        }
        let outcome = agent_config::render(target, ns, &spec, &d, &lookup)
            .map(|r| serde_json::from_str(&r.config_json).unwrap())
            .map_err(|p| p.rejection().map(|r| r.reason.to_string()).unwrap_or_else(|| format!("{p:?}")));
        let manifest = expected["manifest"].as_array().unwrap();
        let kagent_pod =
            manifest.iter().find(|m| m["kind"] == "Deployment").unwrap()["spec"]["template"]["spec"].clone();
        let kagent_skills_init = manifest
            .iter()
            .find(|m| m["metadata"]["name"].as_str().is_some_and(|n| n.ends_with("-skills-init")))
            .map(|m| serde_json::from_str(m["data"]["config.json"].as_str().unwrap()).unwrap());
        let sandbox_agent: SandboxAgent = serde_json::from_value(serde_json::json!({
            "apiVersion": "kagent.dev/v1alpha2", "kind": "SandboxAgent", "metadata": agent["metadata"], "spec": agent["spec"]}))
        .unwrap();
        let ours = objects::desired(&sandbox_agent, &Options::default(), &lookup).ok().map(|d| {
            let api = SandboxApiInfo::for_release("0.5.6").unwrap();
            let pod = d.sandbox(&api, &Options::default()).data["spec"]["podTemplate"]["spec"].clone();
            let init =
                d.settings.data.as_ref().unwrap().get("skills-init.json").map(|t| serde_json::from_str(t).unwrap());
            (pod, init)
        });
        out.push(Case { name, expected: expected["config"].clone(), outcome, kagent_pod, kagent_skills_init, ours });
    }
    out
}

/// kagent's golden files drop every `id` key (non-deterministic fields, they say).
fn without_ids(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            Value::Object(m.iter().filter(|(k, _)| *k != "id").map(|(k, v)| (k.clone(), without_ids(v))).collect())
        }
        Value::Array(a) => Value::Array(a.iter().map(without_ids).collect()),
        other => other.clone(),
    }
}

#[test]
fn kagents_translator_testdata_renders_to_kagents_config() {
    let cases = cases();
    assert!(cases.len() >= 30, "{} cases", cases.len());
    let mut unexplained = Vec::new();
    for c in &cases {
        let listed = LISTED.iter().find(|(n, _)| *n == c.name).map(|(_, d)| d);
        let differing: Vec<&str> = match &c.outcome {
            Ok(config) => {
                FIELDS.iter().copied().filter(|f| without_ids(&config[*f]) != without_ids(&c.expected[*f])).collect()
            }
            Err(_) => Vec::new(),
        };
        match (listed, &c.outcome) {
            (None, Ok(_)) if differing.is_empty() => {}
            (Some(Differs::Refused(reason)), Err(got)) if got == reason => {}
            (Some(Differs::Fields(fields)), Ok(_)) if differing == *fields => {}
            _ => {
                let ours = c.outcome.as_ref().map(|o| FIELDS.iter().map(|f| (f, o[*f].clone())).collect::<Vec<_>>());
                unexplained
                    .push(format!("{}: differing {differing:?}; ours {ours:?}; kagent's {}", c.name, c.expected));
            }
        }
    }
    assert!(
        unexplained.is_empty(),
        "cases that differ from kagent's translator other than as listed:\n{}",
        unexplained.join("\n")
    );
    // and every key of config.json is one of FIELDS, so nothing kagent writes goes unchecked
    for c in &cases {
        for k in c.expected.as_object().unwrap().keys() {
            assert!(FIELDS.contains(&k.as_str()), "{}: kagent writes {k}, which this test does not compare", c.name);
        }
    }
    let same = cases.iter().filter(|c| !LISTED.iter().any(|(n, _)| *n == c.name)).count();
    println!("{} cases, {same} equal to kagent's on every field, {} listed", cases.len(), LISTED.len());
}

/// The pod kagent's translator wrote for each accepted case, against ours, where srt-controller
/// means to match it: every env var kagent's agent container gets (the model's API key as the
/// same `secretKeyRef`, provider variables, KAGENT_*), its default resources, kagent's
/// volumes other than its config Secret (srt-controller mounts a ConfigMap there instead),
/// the skills-init config, and the skills-init container's image repository, resources and
/// mounts.
#[test]
fn kagents_pods_env_volumes_and_skills_init_are_ours_too() {
    let mut compared = 0;
    for c in cases() {
        let Some((pod, init)) = &c.ours else { continue };
        compared += 1;
        let kagent = &c.kagent_pod["containers"][0];
        let ours = &pod["containers"][0];
        // Bedrock: kagent reads the Secret to pick the bearer token or the access keys;
        // srt-controller references all four keys, optional (README), so compare without
        // `optional` there.
        let env: Vec<Value> = ours["env"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| {
                let mut e = e.clone();
                if c.name == "bedrock_agent" {
                    if let Some(r) = e.pointer_mut("/valueFrom/secretKeyRef").and_then(Value::as_object_mut) {
                        r.remove("optional");
                    }
                }
                e
            })
            .collect();
        for e in kagent["env"].as_array().unwrap() {
            assert!(env.contains(e), "{}: kagent's env {e} is not in ours: {:?}", c.name, ours["env"]);
        }
        if c.kagent_pod["containers"][0]["resources"] != Value::Null {
            assert_eq!(quantities(&kagent["resources"]), quantities(&ours["resources"]), "{}", c.name);
        }
        let our_volumes = pod["volumes"].as_array().unwrap();
        for v in c.kagent_pod["volumes"].as_array().unwrap() {
            if v["name"] == "config" {
                continue;
            }
            let mut want = v.clone();
            if want["name"] == "skills-init-config" {
                // kagent's own ConfigMap; ours is the key skills-init.json of the settings ConfigMap
                want = our_volumes.iter().find(|o| o["name"] == "skills-init-config").cloned().unwrap_or(Value::Null);
                assert_eq!(want["configMap"]["items"][0]["path"], "config.json", "{}", c.name);
            }
            assert!(our_volumes.contains(&want), "{}: kagent's volume {v} is not in ours", c.name);
        }
        assert_eq!(&c.kagent_skills_init, init, "{}: skills-init config", c.name);
        let kagent_init = c.kagent_pod["initContainers"].as_array().cloned().unwrap_or_default();
        let our_init = pod["initContainers"].as_array().unwrap();
        for k in &kagent_init {
            let o = our_init
                .iter()
                .find(|o| o["name"] == k["name"])
                .unwrap_or_else(|| panic!("{}: no {}", c.name, k["name"]));
            let repo = |i: &Value| i["image"].as_str().unwrap().rsplit_once(':').unwrap().0.to_string();
            assert_eq!(repo(k), repo(o), "{}", c.name);
            assert_eq!(quantities(&k["resources"]), quantities(&o["resources"]), "{}", c.name);
            assert_eq!(k["volumeMounts"], o["volumeMounts"], "{}", c.name);
        }
    }
    assert!(compared >= 25, "{compared}");
}

/// Resource quantities by value (kagent's Deployment shows Go's canonical form, "3" for
/// "3000m"; a custom resource keeps the spec's spelling).
fn quantities(v: &Value) -> Value {
    fn amount(q: &str) -> f64 {
        let units = [
            ("Ki", 1024f64),
            ("Mi", 1024f64.powi(2)),
            ("Gi", 1024f64.powi(3)),
            ("m", 1e-3),
            ("k", 1e3),
            ("M", 1e6),
            ("G", 1e9),
        ];
        for (suffix, scale) in units {
            if let Some(n) = q.strip_suffix(suffix) {
                return n.parse::<f64>().unwrap() * scale;
            }
        }
        q.parse().unwrap()
    }
    match v {
        Value::Object(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), quantities(v))).collect()),
        Value::String(q) => serde_json::json!(amount(q)),
        other => other.clone(),
    }
}
