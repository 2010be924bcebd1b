//! Reading the objects an agent refers to through the lookup, and why a config is not
//! rendered (yet): the model, prompt and tools translations all build on this.

use serde_json::Value;

use crate::refs::{Found, Kind, Lookup, ObjRef};
use crate::rejection::Rejection;

/// Why a config is not rendered (yet).
#[derive(Debug, Clone, PartialEq)]
pub enum Problem {
    /// The lookup does not know this object yet: fetch it and render again.
    Needs(ObjRef),
    NotFound(ObjRef, String),
    ConfigMapKeyNotFound(String),
    SecretValue(String),
    InvalidModel(String),
    InvalidToolServer(String),
    CrossNamespace(String),
    Cycle(String),
    SystemMessage,
    Template(String),
}

impl Problem {
    pub(super) fn invalid_model(name: &str, what: String) -> Problem {
        Problem::InvalidModel(format!("ModelConfig {name}: {what}"))
    }

    /// The condition a problem becomes (`None` for [`Problem::Needs`]).
    pub fn rejection(&self) -> Option<Rejection> {
        let (reason, message) = match self {
            Problem::Needs(_) => return None,
            Problem::NotFound(r, what) => {
                let reason = match r.kind {
                    Kind::ModelConfig => "ModelConfigNotFound",
                    Kind::RemoteMCPServer | Kind::MCPServer | Kind::Service => "ToolServerNotFound",
                    Kind::Agent | Kind::SandboxAgent => "ToolAgentNotFound",
                    Kind::ConfigMap => "ConfigMapNotFound",
                };
                (reason, format!("{r} ({what}) does not exist; create it or change the reference"))
            }
            Problem::ConfigMapKeyNotFound(m) => ("ConfigMapKeyNotFound", m.clone()),
            Problem::SecretValue(m) => (
                "SecretValueNotRead",
                format!(
                    "{m}: srt-controller reads no Secrets, so it cannot write that value into config.json; \
                     take the value from a ConfigMap (headersFrom/systemMessageFrom type ConfigMap) or write it inline"
                ),
            ),
            Problem::InvalidModel(m) => ("InvalidModelConfig", m.clone()),
            Problem::InvalidToolServer(m) => ("InvalidToolServer", m.clone()),
            Problem::CrossNamespace(m) => ("CrossNamespaceReferenceNotAllowed", m.clone()),
            Problem::Cycle(m) => ("AgentToolCycle", m.clone()),
            Problem::SystemMessage => (
                "SystemMessageMissing",
                "spec.declarative needs systemMessage or systemMessageFrom (kagent's translator requires one)"
                    .to_string(),
            ),
            Problem::Template(m) => ("InvalidPromptTemplate", format!("spec.declarative.systemMessage: {m}")),
        };
        Some(Rejection { reason, message })
    }
}

/// Reads referenced objects through the lookup.
pub struct Resolver<'a> {
    pub(super) lookup: &'a Lookup,
}

impl<'a> Resolver<'a> {
    pub fn require(&mut self, r: &ObjRef) -> Result<&'a Value, Problem> {
        self.require_for(r, "referenced by the agent")
    }

    pub(super) fn require_for(&mut self, r: &ObjRef, why: &str) -> Result<&'a Value, Problem> {
        match self.lookup.get(r) {
            Found::Present(v) => Ok(v),
            Found::Absent => Err(Problem::NotFound(r.clone(), why.to_string())),
            Found::Unknown => Err(Problem::Needs(r.clone())),
        }
    }

    pub(super) fn configmap_key(&mut self, ns: &str, name: &str, key: &str, what: &str) -> Result<String, Problem> {
        let cm = self.require_for(&ObjRef::new(Kind::ConfigMap, ns, name), what)?;
        cm["data"][key]
            .as_str()
            .map(String::from)
            .ok_or_else(|| Problem::ConfigMapKeyNotFound(format!("{what}: ConfigMap {ns}/{name} has no key {key:?}")))
    }
}
