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
use controller::discovery::SandboxApiInfo;
use controller::options::Options;
use controller::render;
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
    /// The pod is refused with this reason (the pod floor); config.json, rendered alone,
    /// equals kagent's on every field.
    PodRefused(&'static str),
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
    // the spec adds a capability (NET_BIND_SERVICE): the pod floor refuses every added one
    ("agent_with_security_context", Differs::PodRefused("UnsafeSecurityContext")),
];

/// kagent's testdata file as an API server would store its objects: every Agent in it sets
/// `spec.declarative.description`, which kagent v0.9.12's Agent CRD does not declare (the
/// API server prunes it; kagent's Go types ignore it). `render` refuses a field it does not
/// carry (UnsupportedField, cli.rs checks that it names this one), so it goes first.
pub fn as_stored(text: &str) -> String {
    let mut file: Value = yaml_serde::from_str(text).unwrap();
    for o in file["objects"].as_array_mut().unwrap() {
        if let Some(d) = o.pointer_mut("/spec/declarative").and_then(Value::as_object_mut) {
            d.remove("description");
        }
    }
    yaml_serde::to_string(&file).unwrap()
}

fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/upstream/kagent-v0.9.12/translator-testdata")
}

struct Case {
    name: String,
    expected: Value,
    outcome: Result<Value, String>,
    /// config.json rendered alone (without the pod), when it renders.
    config_alone: Option<Value>,
    /// kagent's Deployment pod template and skills-init config, and ours (when accepted).
    kagent_pod: Value,
    kagent_skills_init: Option<Value>,
    ours: Option<(Value, Option<Value>)>,
    /// kagent's agent card (agent-card.json in its Secret) and ours (when accepted).
    cards: (Value, Option<Value>),
    /// Whether kagent's manifest and ours (when accepted) hold a ServiceAccount.
    service_account: (bool, Option<bool>),
}

fn cases() -> Vec<Case> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir().join("inputs")).unwrap().map(|e| e.unwrap().path()).collect();
    files.sort();
    let api = SandboxApiInfo::for_release("0.5.6").unwrap();
    let mut out = Vec::new();
    for f in files {
        let name = f.file_stem().unwrap().to_string_lossy().into_owned();
        // the file as kagent's translator test reads it, through `render`'s own input parser:
        // its objects are the lookup, its target Agent the SandboxAgent rendered
        let (agents, lookup) = render::parse(&as_stored(&std::fs::read_to_string(&f).unwrap()), &name).unwrap();
        assert_eq!(agents.len(), 1, "{name}: one target agent");
        let agent = &agents[0];
        let expected: Value =
            serde_json::from_str(&std::fs::read_to_string(dir().join(format!("outputs/{name}.json"))).unwrap())
                .unwrap();
        // every case kagent renders with a model is compared (today: all of them)
        if agent.spec.declarative.is_none() || expected["config"]["model"].is_null() {
            continue;
        }
        // kagent's translator options the file sets: a global default ServiceAccount (ours:
        // --default-service-account-name); proxyURL has no counterpart (listed below)
        let input: Value = yaml_serde::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
        let opts = Options {
            default_service_account_name: input["defaultServiceAccountName"].as_str().map(String::from),
            ..Options::default()
        };
        let rendered = render::render_agent(agent, &opts, &api, &lookup);
        let (mut our_account, mut our_card) = (None, None);
        let (outcome, ours) = match rendered {
            Ok(yaml) => {
                let docs: Vec<Value> = yaml_serde::Deserializer::from_str(&yaml)
                    .map(|d| serde::Deserialize::deserialize(d).unwrap())
                    .filter(|v: &Value| !v.is_null())
                    .collect();
                let (cm, sandbox) = (&docs[0], docs.last().unwrap());
                // config.json and the card are in the config Secret, as in kagent's
                let secret = docs.iter().find(|d| d["kind"] == "Secret").unwrap();
                our_account = Some(docs.iter().any(|d| d["kind"] == "ServiceAccount"));
                our_card =
                    Some(serde_json::from_str(secret["stringData"]["agent-card.json"].as_str().unwrap()).unwrap());
                let config: Value =
                    serde_json::from_str(secret["stringData"]["config.json"].as_str().unwrap()).unwrap();
                let init =
                    cm["data"].get("skills-init.json").map(|t| serde_json::from_str(t.as_str().unwrap()).unwrap());
                (Ok(config), Some((sandbox["spec"]["podTemplate"].clone(), init)))
            }
            Err(render::RenderError::Rejected { rejection, .. }) => (Err(rejection.reason.to_string()), None),
            Err(e) => panic!("{name}: {e}"),
        };
        let config_alone = agent_config::render(
            &agent.metadata.name.clone().unwrap(),
            agent.metadata.namespace.as_deref().unwrap(),
            &agent.spec,
            agent.spec.declarative.as_ref().unwrap(),
            &lookup,
        )
        .ok()
        .map(|r| serde_json::from_str(&r.config_json).unwrap());
        let manifest = expected["manifest"].as_array().unwrap();
        let kagent_pod = manifest.iter().find(|m| m["kind"] == "Deployment").unwrap()["spec"]["template"].clone();
        let kagent_card: Value = manifest
            .iter()
            .find(|m| m["kind"] == "Secret")
            .and_then(|m| m["stringData"]["agent-card.json"].as_str())
            .map(|t| serde_json::from_str(t).unwrap())
            .unwrap();
        let kagent_skills_init = manifest
            .iter()
            .find(|m| m["metadata"]["name"].as_str().is_some_and(|n| n.ends_with("-skills-init")))
            .map(|m| serde_json::from_str(m["data"]["config.json"].as_str().unwrap()).unwrap());
        out.push(Case {
            name,
            expected: expected["config"].clone(),
            outcome,
            config_alone,
            kagent_pod,
            kagent_skills_init,
            ours,
            service_account: (manifest.iter().any(|m| m["kind"] == "ServiceAccount"), our_account),
            cards: (kagent_card, our_card),
        });
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
    // all 35 of kagent v0.9.12's cases are Declarative agents with a model: none may drop out
    assert_eq!(cases.len(), 35, "{} cases", cases.len());
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
            (Some(Differs::PodRefused(reason)), Err(got))
                if got == reason
                    && c.config_alone.as_ref().is_some_and(|config| {
                        FIELDS.iter().all(|f| without_ids(&config[*f]) == without_ids(&c.expected[*f]))
                    }) => {}
            _ => {
                let ours = c.outcome.as_ref().map(|o| FIELDS.iter().map(|f| (f, o[*f].clone())).collect::<Vec<_>>());
                unexplained
                    .push(format!("{}: differing {differing:?}; ours {ours:?}; kagent's {}", c.name, c.expected));
            }
        }
    }
    // the agent card (agent-card.json) of every accepted case equals kagent's
    for c in &cases {
        if let (kagent, Some(ours)) = &c.cards {
            if kagent != ours {
                unexplained.push(format!("{}: agent card {ours} vs kagent's {kagent}", c.name));
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
/// mounts; the agent container's arguments, port, probe and mounts; the pod's scheduling,
/// ServiceAccount (made or not), pull secrets, sidecars and labels.
#[test]
fn kagents_pods_env_volumes_and_skills_init_are_ours_too() {
    let mut compared = 0;
    for c in cases() {
        let Some((template, init)) = &c.ours else { continue };
        compared += 1;
        let (pod, kagent_template) = (&template["spec"], &c.kagent_pod);
        let kagent_pod = &kagent_template["spec"];
        let kagent = &kagent_pod["containers"][0];
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
        if kagent["resources"] != Value::Null {
            assert_eq!(quantities(&kagent["resources"]), quantities(&ours["resources"]), "{}", c.name);
        }
        let our_volumes = pod["volumes"].as_array().unwrap();
        for v in kagent_pod["volumes"].as_array().unwrap() {
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
        // the agent container: kagent's arguments, port and probe; each of kagent's mounts
        // but its config Secret's at the same path (srt-controller's are all read-only)
        for field in ["args", "ports", "readinessProbe"] {
            assert_eq!(kagent[field], ours[field], "{}: {field}", c.name);
        }
        let mounts: Vec<(Value, Value)> = ours["volumeMounts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|m| (m["name"].clone(), m["mountPath"].clone()))
            .collect();
        for m in kagent["volumeMounts"].as_array().unwrap() {
            if m["name"] == "config" {
                continue;
            }
            assert!(
                mounts.contains(&(m["name"].clone(), m["mountPath"].clone())),
                "{}: kagent's mount {m} is not in ours",
                c.name
            );
        }
        // the pod: scheduling, account, pull secrets, kagent's sidecars as given
        for field in ["nodeSelector", "tolerations", "affinity", "serviceAccountName", "imagePullSecrets"] {
            assert_eq!(kagent_pod[field], pod[field], "{}: {field}", c.name);
        }
        let kagent_sidecars = &kagent_pod["containers"].as_array().unwrap()[1..];
        let our_sidecars = &pod["containers"].as_array().unwrap()[1..];
        assert_eq!(kagent_sidecars.len(), our_sidecars.len(), "{}: sidecars", c.name);
        for (k, o) in kagent_sidecars.iter().zip(our_sidecars) {
            for field in ["name", "image", "command", "args", "env", "ports", "resources", "volumeMounts"] {
                assert_eq!(k[field], o[field], "{}: sidecar {}: {field}", c.name, k["name"]);
            }
        }
        // kagent's pod labels, but managed-by (srt-controller's own)
        for (k, v) in kagent_template["metadata"]["labels"].as_object().unwrap() {
            if k == "app.kubernetes.io/managed-by" {
                continue;
            }
            assert_eq!(&template["metadata"]["labels"][k], v, "{}: label {k}", c.name);
        }
        assert_eq!(Some(c.service_account.0), c.service_account.1, "{}: a ServiceAccount of its own", c.name);
        assert_eq!(&c.kagent_skills_init, init, "{}: skills-init config", c.name);
        let kagent_init = kagent_pod["initContainers"].as_array().cloned().unwrap_or_default();
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
    // every accepted case: the 35 but the five refused (four Secret values, one added capability)
    assert_eq!(compared, 30);
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
