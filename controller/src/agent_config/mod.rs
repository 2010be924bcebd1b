//! `config.json` and `agent-card.json` for Declarative agents, as kagent v0.9.12's
//! translator writes them (the files kagent's runtime images read from `/config`), from the
//! SandboxAgent and the objects it refers to ([`crate::refs::Lookup`]): the model from its
//! ModelConfig (API key as a `secretKeyRef` env var, never copied), MCP tools from their
//! RemoteMCPServers/MCPServers/Services, agents as tools, the system message from a ConfigMap
//! or a prompt template, memory and the compaction summarizer from their ModelConfigs.
//!
//! What cannot be rendered without reading a Secret's value (a header or system message taken
//! from a Secret) is refused with a condition naming it: srt-controller reads no Secrets.

mod model;
mod prompt;
mod resolve;
mod tools;

use std::collections::BTreeMap;

use serde_json::{json, Map, Value};

use crate::crd::{DeclarativeAgentSpec, SandboxAgentSpec, ValueSourceType};
use crate::refs::{Kind, Lookup, ObjRef};

pub use model::{from_secret, PodAdditions};
pub use resolve::{Problem, Resolver};

pub const CONFIG_KEY: &str = "config.json";
pub const CARD_KEY: &str = "agent-card.json";
/// kagent's default when `declarative.modelConfig` is unset (its docs' default; kagent
/// v0.9.12's translator itself fails on an empty name).
pub const DEFAULT_MODEL_CONFIG: &str = "default-model-config";
/// kagent's limit on chains of agents calling agents.
const MAX_DEPTH: usize = 10;

#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    pub config_json: String,
    pub agent_card_json: String,
    /// Env vars, Secret volumes and mounts the model and tools add to the agent container.
    pub pod: PodAdditions,
}

/// The references an agent needs first (so `run` can fetch them in one round).
pub fn direct_references(namespace: &str, d: &DeclarativeAgentSpec) -> Vec<ObjRef> {
    let mut out = vec![ObjRef::new(Kind::ModelConfig, namespace, model_config_name(d))];
    if let Some(f) = d.system_message_from.as_ref().filter(|f| f.type_ == ValueSourceType::ConfigMap) {
        out.push(ObjRef::new(Kind::ConfigMap, namespace, &f.name));
    }
    out
}

fn model_config_name(d: &DeclarativeAgentSpec) -> &str {
    d.model_config.as_deref().filter(|m| !m.is_empty()).unwrap_or(DEFAULT_MODEL_CONFIG)
}

fn translate_model(r: &mut Resolver<'_>, ns: &str, name: &str, why: &str) -> Result<(Value, PodAdditions), Problem> {
    let mc = r.require_for(&ObjRef::new(Kind::ModelConfig, ns, name), why)?;
    model::translate(name, mc)
}

/// kagent's validateAgent: no agent reaches itself through Agent tools, at most 10 deep.
fn check_cycles(
    r: &mut Resolver<'_>,
    start: (Kind, String, String),
    tools: Vec<crate::crd::TypedReference>,
) -> Result<(), Problem> {
    fn walk(
        r: &mut Resolver<'_>,
        path: &mut Vec<(Kind, String, String)>,
        tools: Vec<crate::crd::TypedReference>,
    ) -> Result<(), Problem> {
        let Some((_, ns, _)) = path.last().cloned() else { return Ok(()) };
        if path.len() > MAX_DEPTH + 1 {
            return Err(Problem::Cycle(format!("recursion limit reached in agent tool chain at {ns}")));
        }
        for t in tools {
            let kind = if t.kind.as_deref() == Some("SandboxAgent") { Kind::SandboxAgent } else { Kind::Agent };
            let tns = t.namespace.clone().filter(|n| !n.is_empty()).unwrap_or_else(|| ns.clone());
            let key = (kind, tns.clone(), t.name.clone());
            if path.contains(&key) {
                let chain: Vec<String> =
                    path.iter().chain([&key]).map(|(k, n, m)| format!("{} {n}/{m}", k.name())).collect();
                return Err(Problem::Cycle(format!("cycle detected in agent tool chain: {}", chain.join(" -> "))));
            }
            let target = r.require(&ObjRef::new(kind, &tns, &t.name))?;
            let next = tools::agent_tools(&target["spec"]);
            path.push(key);
            walk(r, path, next)?;
            path.pop();
        }
        Ok(())
    }
    walk(r, &mut vec![start], tools)
}

/// Renders an agent's config.json and agent card.
pub fn render(
    name: &str,
    namespace: &str,
    spec: &SandboxAgentSpec,
    d: &DeclarativeAgentSpec,
    lookup: &Lookup,
) -> Result<Rendered, Problem> {
    let r = &mut Resolver { lookup };
    let agent_tools: Vec<_> = d.tools.iter().filter_map(|t| t.agent.clone()).collect();
    check_cycles(r, (Kind::SandboxAgent, namespace.to_string(), name.to_string()), agent_tools)?;

    let model_name = model_config_name(d);
    let (model, mut pod) = translate_model(r, namespace, model_name, "spec.declarative.modelConfig")?;
    let instruction = match (&d.system_message_from, &d.system_message) {
        (Some(f), _) if f.type_ == ValueSourceType::Secret => {
            return Err(Problem::SecretValue(format!(
                "spec.declarative.systemMessageFrom names Secret {namespace}/{} key {}",
                f.name, f.key
            )))
        }
        (Some(f), _) => r.configmap_key(namespace, &f.name, &f.key, "spec.declarative.systemMessageFrom")?,
        (None, Some(m)) if !m.is_empty() => m.clone(),
        _ => return Err(Problem::SystemMessage),
    };
    let mut config = Map::new();
    config.insert("model".into(), model.clone());
    config.insert("description".into(), json!(spec.description.clone().unwrap_or_default()));
    config.insert("instruction".into(), json!(instruction));
    if let Some(execute) = d.execute_code_blocks {
        config.insert("execute_code".into(), json!(execute));
    }
    // kagent's `stream` is a plain bool, always written.
    config.insert("stream".into(), json!(d.stream.unwrap_or(false)));
    if let Some(n) = spec.sandbox.as_ref().and_then(|s| s.network.as_ref()) {
        let mut network = Map::new();
        if !n.allowed_domains.is_empty() {
            network.insert("allowed_domains".into(), json!(n.allowed_domains));
        }
        config.insert("network".into(), Value::Object(network));
    }
    if let Some(c) = d.context.as_ref() {
        let mut ctx = Map::new();
        if let Some(c) = c.compaction.as_ref() {
            let mut comp = Map::new();
            for (k, v) in [
                ("compaction_interval", c.compaction_interval),
                ("overlap_size", c.overlap_size),
                ("token_threshold", c.token_threshold),
                ("event_retention_size", c.event_retention_size),
            ] {
                if let Some(v) = v {
                    comp.insert(k.into(), json!(v));
                }
            }
            if let Some(s) = &c.summarizer {
                if let Some(p) = s.prompt_template.as_ref().filter(|p| !p.is_empty()) {
                    comp.insert("prompt_template".into(), json!(p));
                }
                let summarizer = s.model_config.as_deref().unwrap_or("");
                let summarizer_model = if summarizer.is_empty() || summarizer == model_name {
                    model.clone()
                } else {
                    let (m, p) =
                        translate_model(r, namespace, summarizer, "context.compaction.summarizer.modelConfig")?;
                    pod.merge(p);
                    m
                };
                comp.insert("summarizer_model".into(), summarizer_model);
            }
            ctx.insert("compaction".into(), Value::Object(comp));
        }
        config.insert("context_config".into(), Value::Object(ctx));
    }
    if let Some(m) = &d.memory {
        let (emb, p) = translate_model(r, namespace, &m.model_config, "spec.declarative.memory.modelConfig")?;
        pod.merge(p);
        let mut memory = Map::new();
        if let Some(days) = m.ttl_days.filter(|d| *d != 0) {
            memory.insert("ttl_days".into(), json!(days));
        }
        memory.insert("embedding".into(), model::embedding(&emb));
        config.insert("memory".into(), Value::Object(memory));
    }
    for tool in &d.tools {
        let headers = tools::headers(r, namespace, &tool.headers_from, "tool")?;
        if let Some(m) = &tool.mcp_server {
            tools::mcp(r, &mut config, &mut pod, namespace, m, headers)?;
        } else if let Some(a) = &tool.agent {
            tools::agent(r, &mut config, namespace, name, a, headers)?;
        } else {
            return Err(Problem::InvalidToolServer("tool must have a provider or tool server".into()));
        }
    }
    if let Some(p) = d.prompt_template.as_ref().filter(|p| !p.data_sources.is_empty()) {
        let mut lookup = BTreeMap::new();
        for src in &p.data_sources {
            let id = src.alias.as_deref().filter(|a| !a.is_empty()).unwrap_or(&src.name);
            let cm =
                r.require_for(&ObjRef::new(Kind::ConfigMap, namespace, &src.name), "a promptTemplate data source")?;
            for (k, v) in cm["data"].as_object().into_iter().flatten() {
                let key = format!("{id}/{k}");
                if lookup.contains_key(&key) {
                    return Err(Problem::Template(format!(
                        "duplicate prompt template identifier {key:?} from prompt source {:?}",
                        src.name
                    )));
                }
                lookup.insert(key, v.as_str().unwrap_or_default().to_string());
            }
        }
        let tool_names = ["http_tools", "sse_tools"]
            .iter()
            .flat_map(|k| config.get(*k).and_then(Value::as_array).cloned().unwrap_or_default())
            .flat_map(|t| t["tools"].as_array().cloned().unwrap_or_default())
            .filter_map(|t| t.as_str().map(String::from))
            .collect();
        let ctx = prompt::Context {
            agent_name: name,
            agent_namespace: namespace,
            description: spec.description.as_deref().unwrap_or(""),
            tool_names,
            skill_names: crate::skills::names(spec),
        };
        let rendered = prompt::render(&instruction, &lookup, &ctx)?;
        config.insert("instruction".into(), json!(rendered));
    }
    Ok(Rendered {
        config_json: Value::Object(config).to_string(),
        agent_card_json: card(name, namespace, spec, d).to_string(),
        pod,
    })
}

/// kagent v0.9.12's agent card (a2a-go's v0.3-compatible JSON): the agent's name as a Python
/// identifier, reached through the headless Service agent-sandbox names after the Sandbox,
/// on kagent's port, over JSON-RPC, A2A 0.3 and 1.0.
pub fn card(name: &str, namespace: &str, spec: &SandboxAgentSpec, d: &DeclarativeAgentSpec) -> Value {
    let url = format!("http://{name}.{namespace}:8080");
    let skills: Vec<Value> = d
        .a2a_config
        .iter()
        .flat_map(|a| a.skills.iter())
        .map(|s| {
            let mut v = json!({"id": s.id, "name": s.name, "description": s.description.clone().unwrap_or_default(), "tags": s.tags});
            if s.tags.is_empty() {
                v["tags"] = Value::Null;
            }
            for (k, list) in [("examples", &s.examples), ("inputModes", &s.input_modes), ("outputModes", &s.output_modes)] {
                if !list.is_empty() {
                    v[k] = json!(list);
                }
            }
            v
        })
        .collect();
    json!({
        "name": name.replace('-', "_"),
        "description": spec.description.clone().unwrap_or_default(),
        "version": "",
        "capabilities": {"streaming": true},
        "defaultInputModes": ["text"],
        "defaultOutputModes": ["text"],
        "skills": skills,
        "supportedInterfaces": [
            {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "0.3"},
            {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        ],
        "url": url,
        "protocolVersion": "0.3",
        "preferredTransport": "JSONRPC",
    })
}

#[cfg(test)]
mod tests;
