//! `config.json` and `agent-card.json` for Declarative agents: the files kagent's runtime
//! images read from `/config` (`--filepath /config`), rendered as far as the SandboxAgent
//! alone determines them.
//!
//! kagent's translator fills the rest from other objects, which this controller does not
//! read: the model (provider, model name, endpoint, API key) from the ModelConfig, MCP tool
//! URLs and headers from RemoteMCPServers/MCPServers/Services and Secrets, remote agents from
//! the referenced agents, the system message from a ConfigMap/Secret or a prompt template,
//! the memory embedding model and the compaction summarizer from ModelConfigs. Those parts are
//! left out (the model as `null`) and named in [`Rendered::unrendered`], which the ConfigMap
//! carries as an annotation.

use serde_json::{json, Map, Value};

use crate::crd::{DeclarativeAgentSpec, SandboxAgentSpec};

pub const CONFIG_KEY: &str = "config.json";
pub const CARD_KEY: &str = "agent-card.json";
/// The annotation on the settings ConfigMap naming what config.json lacks.
pub const ANNOTATION_UNRENDERED: &str = "srt-controller.dev/config-json-unrendered";
/// kagent's default when `declarative.modelConfig` is unset.
pub const DEFAULT_MODEL_CONFIG: &str = "default-model-config";

#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    pub config_json: String,
    pub agent_card_json: String,
    /// What config.json would need other objects for, one phrase each.
    pub unrendered: Vec<String>,
}

pub fn render(name: &str, namespace: &str, spec: &SandboxAgentSpec, d: &DeclarativeAgentSpec) -> Rendered {
    let mut unrendered =
        vec![format!("model (from ModelConfig {})", d.model_config.as_deref().unwrap_or(DEFAULT_MODEL_CONFIG))];
    let mut config = Map::new();
    config.insert("model".into(), Value::Null);
    config.insert("description".into(), json!(spec.description.clone().unwrap_or_default()));
    let instruction = match (&d.system_message, &d.system_message_from, &d.prompt_template) {
        (Some(m), None, None) => m.clone(),
        (_, Some(from), _) => {
            unrendered.push(format!("instruction (from {:?} {} key {})", from.type_, from.name, from.key));
            String::new()
        }
        (Some(_), None, Some(_)) => {
            unrendered.push("instruction (a prompt template over ConfigMaps)".into());
            String::new()
        }
        (None, None, _) => String::new(),
    };
    config.insert("instruction".into(), json!(instruction));
    // kagent's `stream` is a plain bool (always written); `executeCodeBlocks` is written
    // whenever the spec sets it, false included.
    config.insert("stream".into(), json!(d.stream.unwrap_or(false)));
    if let Some(execute) = d.execute_code_blocks {
        config.insert("execute_code".into(), json!(execute));
    }
    if !spec.allowed_domains().is_empty() {
        config.insert("network".into(), json!({ "allowed_domains": spec.allowed_domains() }));
    }
    let mcp: Vec<&str> = d.tools.iter().filter_map(|t| t.mcp_server.as_ref()).map(|m| m.target.name.as_str()).collect();
    if !mcp.is_empty() {
        unrendered.push(format!("http_tools/sse_tools (MCP servers {})", mcp.join(", ")));
    }
    let agents: Vec<&str> = d.tools.iter().filter_map(|t| t.agent.as_ref()).map(|a| a.name.as_str()).collect();
    if !agents.is_empty() {
        unrendered.push(format!("remote_agents (agents {})", agents.join(", ")));
    }
    if d.tools.iter().any(|t| !t.headers_from.is_empty()) {
        unrendered.push("tool headers (headersFrom)".into());
    }
    if let Some(m) = &d.memory {
        unrendered.push(format!("memory (embedding model from ModelConfig {})", m.model_config));
    }
    if let Some(c) = d.context.as_ref().and_then(|c| c.compaction.as_ref()) {
        let mut compaction = Map::new();
        let mut put = |k: &str, v: Option<Value>| {
            if let Some(v) = v {
                compaction.insert(k.into(), v);
            }
        };
        put("compaction_interval", c.compaction_interval.map(Value::from));
        put("overlap_size", c.overlap_size.map(Value::from));
        put("token_threshold", c.token_threshold.map(Value::from));
        put("event_retention_size", c.event_retention_size.map(Value::from));
        if let Some(s) = &c.summarizer {
            put("prompt_template", s.prompt_template.clone().map(Value::from));
            unrendered.push(format!(
                "context_config.compaction.summarizer_model (from ModelConfig {})",
                s.model_config.as_deref().or(d.model_config.as_deref()).unwrap_or(DEFAULT_MODEL_CONFIG)
            ));
        }
        config.insert("context_config".into(), json!({ "compaction": compaction }));
    }

    let skills: Vec<Value> = d
        .a2a_config
        .iter()
        .flat_map(|a| a.skills.iter())
        .map(|s| {
            json!({
                "id": s.id, "name": s.name, "description": s.description.clone().unwrap_or_default(),
                "tags": s.tags, "examples": s.examples, "inputModes": s.input_modes, "outputModes": s.output_modes,
            })
        })
        .collect();
    // kagent's card: the agent's name as a Python identifier, reached through the headless
    // Service agent-sandbox names after the Sandbox, on kagent's port.
    let card = json!({
        "name": name.replace('-', "_"),
        "description": spec.description.clone().unwrap_or_default(),
        "url": format!("http://{name}.{namespace}:8080"),
        "version": "",
        "capabilities": {"streaming": true, "pushNotifications": false, "stateTransitionHistory": true},
        "defaultInputModes": ["text"],
        "defaultOutputModes": ["text"],
        "skills": skills,
    });
    Rendered { config_json: Value::Object(config).to_string(), agent_card_json: card.to_string(), unrendered }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(yaml: &str) -> SandboxAgentSpec {
        serde_yaml::from_str(yaml).unwrap()
    }

    fn rendered(s: &SandboxAgentSpec) -> (Value, Value, Vec<String>) {
        let r = render("k8s-agent", "kagent", s, s.declarative.as_ref().unwrap());
        (serde_json::from_str(&r.config_json).unwrap(), serde_json::from_str(&r.agent_card_json).unwrap(), r.unrendered)
    }

    #[test]
    fn what_the_spec_determines_is_rendered() {
        let s = spec(
            r#"
type: Declarative
description: Answers Kubernetes questions.
sandbox: {network: {allowedDomains: [api.github.com]}}
declarative:
  modelConfig: gpt-4o
  systemMessage: You are a Kubernetes expert.
  stream: true
  executeCodeBlocks: true
  a2aConfig:
    skills:
    - {id: diagnose, name: Diagnose, description: Finds why a pod fails, tags: [k8s], examples: [why does my pod crash?]}
    - {name: Summarize}
  context: {compaction: {compactionInterval: 7}}
"#,
        );
        let (config, card, unrendered) = rendered(&s);
        assert_eq!(config["model"], Value::Null);
        assert_eq!(config["instruction"], "You are a Kubernetes expert.");
        assert_eq!(config["description"], "Answers Kubernetes questions.");
        assert_eq!(config["stream"], true);
        assert_eq!(config["execute_code"], true);
        assert_eq!(config["network"]["allowed_domains"], json!(["api.github.com"]));
        assert_eq!(config["context_config"]["compaction"], json!({"compaction_interval": 7, "overlap_size": 2}));
        assert_eq!(unrendered, vec!["model (from ModelConfig gpt-4o)"]);
        assert_eq!(card["name"], "k8s_agent");
        assert_eq!(card["url"], "http://k8s-agent.kagent:8080");
        assert_eq!(card["skills"][0]["id"], "diagnose");
        assert_eq!(card["skills"][0]["tags"], json!(["k8s"]));
        assert_eq!(card["skills"][1]["name"], "Summarize", "a skill with only a name, as kagent allows");
        assert_eq!(card["capabilities"]["streaming"], true);
    }

    #[test]
    fn what_needs_other_objects_is_named() {
        let s = spec(
            r#"
type: Declarative
declarative:
  systemMessageFrom: {type: ConfigMap, name: prompts, key: k8s}
  tools:
  - {type: McpServer, mcpServer: {name: kagent-tool-server, kind: RemoteMCPServer, toolNames: [k8s_get_resources]}}
  - {type: Agent, agent: {name: helper}}
  memory: {modelConfig: embedder}
"#,
        );
        let (config, card, unrendered) = rendered(&s);
        assert_eq!(config["instruction"], "");
        assert_eq!(card["skills"], json!([]));
        assert_eq!(
            unrendered,
            vec![
                "model (from ModelConfig default-model-config)",
                "instruction (from ConfigMap prompts key k8s)",
                "http_tools/sse_tools (MCP servers kagent-tool-server)",
                "remote_agents (agents helper)",
                "memory (embedding model from ModelConfig embedder)",
            ]
        );
    }
}
