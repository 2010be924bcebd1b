//! The `SandboxAgent` custom resource (`kagent.dev/v1alpha2`), schema-compatible with kagent
//! v0.9.x: every manifest written for kagent's SandboxAgent applies unchanged.
//!
//! Only the parts this controller reads are typed (`type`, `byo.deployment`, `sandbox`,
//! `platform`); `declarative`, `skills`, `allowedNamespaces` and `substrate` are kept as open
//! objects, so fields kagent adds later are stored rather than pruned.

// Two `printcolumn(...)` entries both say `type_ = "string"`, which clippy mistakes for a
// repeated attribute.
#![allow(clippy::duplicated_attributes)]

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Affinity, EnvVar, LocalObjectReference, PodSecurityContext, ResourceRequirements, SecurityContext, Toleration,
    Volume, VolumeMount,
};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;
use kube::{CustomResource, KubeSchema};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// An object the API server stores as given (`x-kubernetes-preserve-unknown-fields`).
fn open_object(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": true
    })
}

/// kagent's `platform` enum with its default (a plain string enum, no `null` member).
fn platform_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({
        "type": "string",
        "enum": ["agent-sandbox", "substrate"],
        "default": "agent-sandbox",
        "description": "The platform running the agent (kagent v0.9.7+). Only `agent-sandbox` is served by srt-controller."
    })
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
#[x_kube(
    validation = Rule::new("has(self.type)").message("type must be specified"),
    validation = Rule::new("self.type == 'Declarative' || self.type == 'BYO'").message("type must be either Declarative or BYO"),
    validation = Rule::new("(self.type == 'Declarative' && has(self.declarative)) || (self.type == 'BYO' && has(self.byo))")
        .message("declarative must be specified if type is Declarative, or byo must be specified if type is BYO"),
    validation = Rule::new("!has(self.substrate) || self.platform == 'substrate'").message("substrate may only be set when platform is substrate"),
)]
#[serde(rename_all = "camelCase")]
pub struct SandboxAgentSpec {
    #[serde(rename = "type", default)]
    pub agent_type: AgentType,

    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub byo: Option<ByoAgentSpec>,

    /// kagent's declarative agent (model, system message, tools, deployment). Stored as given;
    /// this controller reads `deployment` and mounts the whole spec into the pod as JSON.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "open_object")]
    pub declarative: Option<serde_json::Value>,

    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,

    /// Skills to load into the agent (kagent's `refs` / `gitRefs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "open_object")]
    pub skills: Option<serde_json::Value>,

    /// Which namespaces may reference this agent as a tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "open_object")]
    pub allowed_namespaces: Option<serde_json::Value>,

    /// Sandbox configures sandboxed execution behavior shared across runtimes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<SandboxConfig>,

    /// The platform running the agent (kagent v0.9.7+). Only `agent-sandbox` is served here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "platform_schema")]
    pub platform: Option<SandboxPlatform>,

    /// kagent's Agent Substrate settings; refused by this controller.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "open_object")]
    pub substrate: Option<serde_json::Value>,
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
pub struct ByoAgentSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deployment: Option<ByoDeploymentSpec>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ByoDeploymentSpec {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub image: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cmd: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    #[serde(flatten)]
    pub shared: SharedDeploymentSpec,
}

/// The pod settings kagent lets both agent types carry (`byo.deployment`,
/// `declarative.deployment`).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SharedDeploymentSpec {
    /// Accepted for compatibility; a Sandbox always runs exactly one pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replicas: Option<i32>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub image_pull_secrets: Vec<LocalObjectReference>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub volumes: Vec<Volume>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub volume_mounts: Vec<VolumeMount>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<EnvVar>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_pull_policy: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourceRequirements>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tolerations: Vec<Toleration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub affinity: Option<Affinity>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub node_selector: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub security_context: Option<SecurityContext>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pod_security_context: Option<PodSecurityContext>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_account_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "open_object")]
    pub service_account_config: Option<serde_json::Value>,
}

/// The typed view of `declarative` this controller needs; everything else in it is passed
/// through untouched.
#[derive(Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct DeclarativeView {
    #[serde(default)]
    pub deployment: Option<DeclarativeDeployment>,
}

#[derive(Deserialize, Clone, Debug, Default, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct DeclarativeDeployment {
    #[serde(default)]
    pub image_registry: Option<String>,
    #[serde(flatten)]
    pub shared: SharedDeploymentSpec,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentStatus {
    #[serde(default)]
    pub observed_generation: i64,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
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
