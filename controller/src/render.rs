//! `srt-controller render`: the objects the controller would apply for agents read from
//! YAML, with no cluster. The reconciler applies exactly these objects.

use kube::ResourceExt;
use serde::Deserialize;

use crate::accept::Rejection;
use crate::crd::SandboxAgent;
use crate::discovery::SandboxApiInfo;
use crate::objects;
use crate::options::Options;

/// The agent-sandbox release `render` writes for when none is named: the newest known.
pub const DEFAULT_RELEASE: &str = "0.5.6";

#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error("{origin}: document {index} is not YAML this tool can read: {message}")]
    Yaml { origin: String, index: usize, message: String },
    #[error("{origin}: document {index} is {found}; expected apiVersion kagent.dev/v1alpha2, kind SandboxAgent")]
    NotAnAgent { origin: String, index: usize, found: String },
    #[error("{origin}: no SandboxAgent in the input")]
    Empty { origin: String },
    #[error("SandboxAgent {namespace}/{name} would not be accepted ({}): {}", .rejection.reason, .rejection.message)]
    Rejected { namespace: String, name: String, rejection: Rejection },
}

/// Reads every YAML document in `text` as a SandboxAgent.
pub fn parse_agents(text: &str, origin: &str) -> Result<Vec<SandboxAgent>, RenderError> {
    let mut agents = Vec::new();
    for (i, doc) in serde_yaml::Deserializer::from_str(text).enumerate() {
        let index = i + 1;
        let value = serde_yaml::Value::deserialize(doc).map_err(|e| RenderError::Yaml {
            origin: origin.into(),
            index,
            message: e.to_string(),
        })?;
        if value.is_null() {
            continue; // an empty document, e.g. after a trailing `---`
        }
        let api_version = value.get("apiVersion").and_then(|v| v.as_str()).unwrap_or("");
        let kind = value.get("kind").and_then(|v| v.as_str()).unwrap_or("");
        if api_version != "kagent.dev/v1alpha2" || kind != "SandboxAgent" {
            return Err(RenderError::NotAnAgent {
                origin: origin.into(),
                index,
                found: format!("apiVersion {api_version:?}, kind {kind:?}"),
            });
        }
        let agent: SandboxAgent = serde_yaml::from_value(value).map_err(|e| RenderError::Yaml {
            origin: origin.into(),
            index,
            message: e.to_string(),
        })?;
        agents.push(agent);
    }
    if agents.is_empty() {
        return Err(RenderError::Empty { origin: origin.into() });
    }
    Ok(agents)
}

/// The desired objects of one agent as a multi-document YAML string: the settings
/// ConfigMap, the agent's ServiceAccount (unless its spec names one) and the Sandbox in the
/// version `api` describes.
pub fn render_agent(agent: &SandboxAgent, opts: &Options, api: &SandboxApiInfo) -> Result<String, RenderError> {
    let desired = objects::desired(agent, opts).map_err(|rejection| RenderError::Rejected {
        namespace: agent.namespace().unwrap_or_else(|| "default".into()),
        name: agent.name_any(),
        rejection,
    })?;
    let mut out = format!("---\n{}", to_yaml(&desired.settings));
    if let Some(sa) = &desired.service_account {
        out.push_str(&format!("---\n{}", to_yaml(sa)));
    }
    out.push_str(&format!("---\n{}", to_yaml(&desired.sandbox(api, opts))));
    Ok(out)
}

/// Renders every agent in `text`; the first rejection stops with its reason.
pub fn render(text: &str, origin: &str, opts: &Options, api: &SandboxApiInfo) -> Result<String, RenderError> {
    let mut out = String::new();
    for agent in parse_agents(text, origin)? {
        out.push_str(&render_agent(&agent, opts, api)?);
    }
    Ok(out)
}

fn to_yaml<T: serde::Serialize>(v: &T) -> String {
    // Serialising Kubernetes objects (maps, strings, numbers) to YAML cannot fail.
    serde_yaml::to_string(v).unwrap_or_default()
}
