//! `srt-controller render`: the objects the controller would apply for agents read from
//! YAML, with no cluster. The reconciler applies exactly these objects.

use kube::ResourceExt;
use serde::Deserialize;

use crate::crd::SandboxAgent;
use crate::discovery::SandboxApiInfo;
use crate::objects::{self, Pending};
use crate::options::Options;
use crate::refs::{Kind, Lookup, ObjRef};
use crate::rejection::Rejection;

/// The agent-sandbox release `render` writes for when none is named: the newest known.
pub const DEFAULT_RELEASE: &str = "0.5.6";

#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error("{origin}: document {index} is not YAML this tool can read: {message}")]
    Yaml { origin: String, index: usize, message: String },
    #[error(
        "{origin}: document {index} is {found}; render reads SandboxAgents (kagent.dev/v1alpha2) and the objects \
         they refer to: ModelConfig, RemoteMCPServer, Agent (kagent.dev/v1alpha2), MCPServer (kagent.dev/v1alpha1), \
         Service, ConfigMap, Secret and ServiceAccount (v1; Secrets and ServiceAccounts are skipped: srt-controller never reads them), one document each or as the `objects` of a kagent translator testdata file"
    )]
    NotAnAgent { origin: String, index: usize, found: String },
    #[error("{origin}: no SandboxAgent in the input")]
    Empty { origin: String },
    #[error("SandboxAgent {namespace}/{name} would not be accepted ({}): {}", .rejection.reason, .rejection.message)]
    Rejected { namespace: String, name: String, rejection: Rejection },
}

/// Reads every SandboxAgent in `text` (the other documents go to [`parse`]'s lookup).
pub fn parse_agents(text: &str, origin: &str) -> Result<Vec<SandboxAgent>, RenderError> {
    let (agents, _) = parse(text, origin)?;
    if agents.is_empty() {
        return Err(RenderError::Empty { origin: origin.into() });
    }
    Ok(agents)
}

/// Reads the SandboxAgents in `text` and, as a complete lookup, the objects they may refer
/// to: all in one file (or stream) as YAML documents, or one of kagent's translator testdata
/// files (see [`testdata_documents`]).
pub fn parse(text: &str, origin: &str) -> Result<(Vec<SandboxAgent>, Lookup), RenderError> {
    let mut agents = Vec::new();
    let mut lookup = Lookup::complete();
    let mut documents = Vec::new();
    for (i, doc) in yaml_serde::Deserializer::from_str(text).enumerate() {
        let index = i + 1;
        let value = yaml_serde::Value::deserialize(doc).map_err(|e| RenderError::Yaml {
            origin: origin.into(),
            index,
            message: e.to_string(),
        })?;
        match testdata_documents(&value) {
            Some(objects) => documents.extend(objects.into_iter().map(|o| (index, o))),
            None => documents.push((index, value)),
        }
    }
    for (index, value) in documents {
        if value.is_null() {
            continue; // an empty document, e.g. after a trailing `---`
        }
        let api_version = value.get("apiVersion").and_then(|v| v.as_str()).unwrap_or("");
        let kind = value.get("kind").and_then(|v| v.as_str()).unwrap_or("");
        // Secrets are never read (srt-controller references them from the pod); a
        // ServiceAccount the agent names is the cluster's business (kagent's testdata has one)
        if api_version == "v1" && (kind == "Secret" || kind == "ServiceAccount") {
            continue;
        }
        let json: serde_json::Value = serde_json::to_value(&value).unwrap_or_default();
        if let Some(k) = Kind::of(api_version, kind) {
            let name = json["metadata"]["name"].as_str().unwrap_or_default();
            let ns = json["metadata"]["namespace"].as_str().unwrap_or("default");
            lookup.insert(ObjRef::new(k, ns, name), Some(json.clone()));
        }
        if Kind::of(api_version, kind).is_some_and(|k| k != Kind::SandboxAgent) {
            continue;
        }
        if api_version != "kagent.dev/v1alpha2" || kind != "SandboxAgent" {
            return Err(RenderError::NotAnAgent {
                origin: origin.into(),
                index,
                found: format!("apiVersion {api_version:?}, kind {kind:?}"),
            });
        }
        let agent: SandboxAgent = yaml_serde::from_value(value).map_err(|e| RenderError::Yaml {
            origin: origin.into(),
            index,
            message: e.to_string(),
        })?;
        // a field the types would drop is refused, never dropped (crate::carried)
        if let Some(rejection) = crate::carried::refusal(&crate::carried::not_carried(&json)) {
            return Err(RenderError::Rejected {
                namespace: agent.namespace().unwrap_or_else(|| "default".into()),
                name: agent.name_any(),
                rejection,
            });
        }
        agents.push(agent);
    }
    Ok((agents, lookup))
}

/// The documents of one of kagent's translator testdata files (`operation: translateAgent`,
/// `targetObject`, `namespace`, `objects`: kagent's
/// go/core/internal/controller/translator/agent/testdata/inputs), or `None` for any other
/// document. The objects keep their order, those without a namespace get the file's, and the
/// target Agent becomes the SandboxAgent of the same name and spec (kagent's SandboxAgent
/// spec holds the Agent's), so `render` shows what srt-controller makes of kagent's cases.
pub fn testdata_documents(value: &yaml_serde::Value) -> Option<Vec<yaml_serde::Value>> {
    let objects = value.get("objects")?.as_sequence()?;
    let target = value.get("targetObject")?.as_str()?;
    let namespace = value.get("namespace").and_then(|n| n.as_str()).unwrap_or("default");
    let mut out = Vec::with_capacity(objects.len() + 1);
    for o in objects {
        let mut o = o.clone();
        if let Some(meta) = o.get_mut("metadata").and_then(|m| m.as_mapping_mut()) {
            meta.entry("namespace".into()).or_insert_with(|| namespace.into());
        }
        let is_target = o.get("apiVersion").and_then(|v| v.as_str()) == Some("kagent.dev/v1alpha2")
            && o.get("kind").and_then(|v| v.as_str()) == Some("Agent")
            && o.get("metadata").and_then(|m| m.get("name")).and_then(|n| n.as_str()) == Some(target)
            && o.get("metadata").and_then(|m| m.get("namespace")).and_then(|n| n.as_str()) == Some(namespace);
        if is_target {
            let mut agent = o.clone();
            if let Some(m) = agent.as_mapping_mut() {
                m.insert("kind".into(), "SandboxAgent".into());
                m.remove("status");
            }
            out.push(agent);
        }
        out.push(o);
    }
    Some(out)
}

/// The desired objects of one agent as a multi-document YAML string: the settings
/// ConfigMap, a Declarative agent's config Secret, the agent's ServiceAccount (unless its
/// spec names one) and the Sandbox in the version `api` describes.
pub fn render_agent(
    agent: &SandboxAgent,
    opts: &Options,
    api: &SandboxApiInfo,
    lookup: &Lookup,
) -> Result<String, RenderError> {
    let desired = objects::desired(agent, opts, lookup).map_err(|pending| RenderError::Rejected {
        namespace: agent.namespace().unwrap_or_else(|| "default".into()),
        name: agent.name_any(),
        rejection: match pending {
            Pending::Rejected(r) => r,
            // A complete lookup answers every question; kept for the type's sake.
            Pending::Needs(r) => Rejection { reason: "ReferenceUnknown", message: format!("{r} is not in the input") },
        },
    })?;
    let mut out = format!("---\n{}", to_yaml(&desired.settings));
    if let Some(config) = &desired.config {
        out.push_str(&format!("---\n{}", to_yaml(config)));
    }
    if let Some(sa) = &desired.service_account {
        out.push_str(&format!("---\n{}", to_yaml(sa)));
    }
    out.push_str(&format!("---\n{}", to_yaml(&desired.sandbox(api, opts))));
    Ok(out)
}

/// Renders every agent in `text`; the first rejection stops with its reason.
pub fn render(text: &str, origin: &str, opts: &Options, api: &SandboxApiInfo) -> Result<String, RenderError> {
    render_all(&[(text.to_string(), origin.to_string())], opts, api)
}

/// Renders every agent in several inputs (text, origin), each agent with the objects of all
/// of them: an agent in one file may refer to a ModelConfig in another.
pub fn render_all(inputs: &[(String, String)], opts: &Options, api: &SandboxApiInfo) -> Result<String, RenderError> {
    let mut agents = Vec::new();
    let mut lookup = Lookup::complete();
    for (text, origin) in inputs {
        // a file of referenced objects alone is fine when another file has the agents
        let (a, l) = parse(text, origin)?;
        agents.extend(a);
        lookup.extend(l);
    }
    if agents.is_empty() {
        let origins: Vec<&str> = inputs.iter().map(|(_, o)| o.as_str()).collect();
        return Err(RenderError::Empty { origin: origins.join(", ") });
    }
    let mut out = String::new();
    for agent in agents {
        out.push_str(&render_agent(&agent, opts, api, &lookup)?);
    }
    Ok(out)
}

fn to_yaml<T: serde::Serialize>(v: &T) -> String {
    // Serialising Kubernetes objects (maps, strings, numbers) to YAML cannot fail.
    yaml_serde::to_string(v).unwrap_or_default()
}
