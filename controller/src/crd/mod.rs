//! The `SandboxAgent` custom resource (`kagent.dev/v1alpha2`), schema-compatible with kagent
//! v0.9.7–v0.9.12 field for field: the same properties, defaults, validation and CEL rules, so
//! every manifest kagent accepts applies unchanged, nothing kagent keeps is pruned, and what
//! kagent's API server refuses is refused here too. Only `substrate` (kagent's other
//! platform, refused by this controller) stays an open object.

// Two `printcolumn(...)` entries both say `type_ = "string"`, which clippy mistakes for a
// repeated attribute.
#![allow(clippy::duplicated_attributes)]

mod declarative;
mod deployment;
pub mod generate;
mod k8s_markers;
pub mod schema;
mod skills;

pub use declarative::*;
pub use deployment::*;
pub use skills::*;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use schema::string_enum;

/// kagent's `platform` enum with its default.
fn platform_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    string_enum(
        &["agent-sandbox", "substrate"],
        Some("agent-sandbox"),
        "The platform running the agent (kagent v0.9.7+). Only `agent-sandbox` is served by srt-controller.",
    )
}

/// SandboxAgent declares an agent that runs in an isolated sandbox (agent-sandbox Sandbox CR).
#[derive(CustomResource, KubeSchema, Serialize, Deserialize, Clone, Debug, Default, PartialEq)]
#[kube(
    group = "kagent.dev",
    version = "v1alpha2",
    kind = "SandboxAgent",
    namespaced,
    status = "AgentStatus",
    doc = "SandboxAgent declares an agent that runs in an isolated sandbox (agent-sandbox Sandbox CR).",
    printcolumn(
        name = "Ready",
        type_ = "string",
        json_path = ".status.conditions[?(@.type=='Ready')].status",
        description = "Whether the sandbox workload is ready."
    ),
    printcolumn(
        name = "Accepted",
        type_ = "string",
        json_path = ".status.conditions[?(@.type=='Accepted')].status",
        description = "Whether configuration was accepted."
    )
)]
// In kagent's order: SandboxAgentSpec's own rules, then those of the inlined AgentSpec.
#[x_kube(
    validation = Rule::new("!has(self.skills) || self.platform != 'substrate'").message("spec.skills is not supported when spec.platform is substrate"),
    validation = Rule::new("!has(self.substrate) || self.platform == 'substrate'").message("spec.substrate may only be set when spec.platform is substrate"),
    validation = Rule::new("!has(self.type) || self.type != 'BYO' || self.platform != 'substrate'").message("BYO agents are not supported when spec.platform is substrate"),
    validation = Rule::new("has(self.type)").message("type must be specified"),
    validation = Rule::new("self.type == 'Declarative' || self.type == 'BYO'").message("type must be either Declarative or BYO"),
    validation = Rule::new("(self.type == 'Declarative' && has(self.declarative)) || (self.type == 'BYO' && has(self.byo))")
        .message("declarative must be specified if type is Declarative, or byo must be specified if type is BYO"),
)]
#[serde(rename_all = "camelCase")]
pub struct SandboxAgentSpec {
    #[serde(rename = "type", default)]
    pub agent_type: AgentType,

    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub byo: Option<ByoAgentSpec>,

    /// kagent's declarative agent (model, system message, tools, deployment).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub declarative: Option<DeclarativeAgentSpec>,

    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,

    /// Skills to load into the agent, under /skills.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skills: Option<SkillForAgent>,

    /// Which namespaces may reference this agent as a tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub allowed_namespaces: Option<AllowedNamespaces>,

    /// Sandbox configures sandboxed execution behavior shared across runtimes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxConfig>,

    /// The platform running the agent (kagent v0.9.7+). Only `agent-sandbox` is served here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "platform_schema")]
    pub platform: Option<SandboxPlatform>,

    /// kagent's Agent Substrate settings; refused by this controller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub substrate: Option<SandboxSubstrateSpec>,
}

/// kagent v0.9.7-v0.9.12's Agent Substrate settings (read only to be refused).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SandboxSubstrateSpec {
    /// An existing ate.dev WorkerPool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_pool_ref: Option<TypedLocalReference>,
    /// Where actor memory snapshots go.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub snapshots_config: Option<SubstrateSnapshotsConfig>,
}

/// A reference to an object in the agent's namespace by kind, API group and name.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TypedLocalReference {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_group: Option<String>,
    pub name: String,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SubstrateSnapshotsConfig {
    /// A `gs://` URL.
    #[schemars(regex(pattern = "^gs://"))]
    pub location: String,
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum AgentType {
    #[default]
    Declarative,
    #[serde(rename = "BYO")]
    Byo,
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum SandboxPlatform {
    #[default]
    #[serde(rename = "agent-sandbox")]
    AgentSandbox,
    #[serde(rename = "substrate")]
    Substrate,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SandboxConfig {
    /// When unset or when allowedDomains is empty, outbound access is denied by default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<NetworkConfig>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct NetworkConfig {
    /// Wildcards such as *.example.com are supported by the sandbox runtime.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed_domains: Vec<String>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
#[schemars(transform = no_observed_generation_default)]
pub struct AgentStatus {
    #[serde(default)]
    pub observed_generation: i64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
}

/// kagent's status has no default for `observedGeneration` (schemars writes the serde
/// default, 0, which the API server would then fill into every status).
fn no_observed_generation_default(schema: &mut schemars::Schema) {
    if let Some(g) = schema.get_mut("properties").and_then(|p| p.get_mut("observedGeneration")) {
        if let Some(g) = g.as_object_mut() {
            g.remove("default");
        }
    }
}

impl SandboxAgentSpec {
    /// The agent's `allowedDomains`, in order (empty when unset).
    pub fn allowed_domains(&self) -> &[String] {
        self.sandbox.as_ref().and_then(|s| s.network.as_ref()).map(|n| n.allowed_domains.as_slice()).unwrap_or(&[])
    }

    pub fn platform(&self) -> SandboxPlatform {
        self.platform.unwrap_or_default()
    }
}
