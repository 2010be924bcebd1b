//! kagent's declarative agent (`spec.declarative`): model, system message, tools, A2A
//! skills, memory, context management and the pod settings, with kagent's defaults and CEL
//! rules, so the API server keeps and checks exactly what kagent's would.

use kube::KubeSchema;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::deployment::DeclarativeDeploymentSpec;
use super::schema::string_enum;

fn runtime_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    string_enum(&["python", "go"], Some("python"), "The ADK implementation running the agent: python (default) or go.")
}

fn tool_type_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    string_enum(&["McpServer", "Agent"], None, "The tool provider: McpServer or Agent.")
}

/// A Go `int` as controller-gen writes it: an integer with no format.
fn go_int(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
    schemars::json_schema!({ "type": "integer" })
}

fn compaction_interval_default() -> Option<i64> {
    Some(5)
}

fn overlap_size_default() -> Option<i64> {
    Some(2)
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[x_kube(validation = Rule::new("!has(self.systemMessage) || !has(self.systemMessageFrom)")
    .message("systemMessage and systemMessageFrom are mutually exclusive"))]
#[serde(rename_all = "camelCase")]
pub struct DeclarativeAgentSpec {
    /// `python` (kagent's default) or `go`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "runtime_schema")]
    pub runtime: Option<String>,
    /// The system message (a Go text/template when promptTemplate is set).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_message: Option<String>,
    /// A ConfigMap or Secret key holding the system message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_message_from: Option<ValueSource>,
    /// ConfigMaps whose keys the system message template may include.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_template: Option<PromptTemplateSpec>,
    /// The ModelConfig to use (kagent's default: default-model-config), same namespace.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_config: Option<String>,
    /// Stream the model's response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<bool>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 20))]
    pub tools: Vec<Tool>,
    /// The A2A skills the agent card advertises.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub a2a_config: Option<A2AConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deployment: Option<DeclarativeDeploymentSpec>,
    /// Execute python code blocks in the model's answers (in srt).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub execute_code_blocks: Option<bool>,
    /// Long-term memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<MemorySpec>,
    /// Context management (event compaction).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<ContextConfig>,
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum ValueSourceType {
    #[default]
    ConfigMap,
    Secret,
}

/// A key of a ConfigMap or Secret in the agent's namespace.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ValueSource {
    #[serde(rename = "type")]
    pub type_: ValueSourceType,
    #[schemars(length(max = 253))]
    pub name: String,
    #[schemars(length(max = 253))]
    pub key: String,
}

/// A named value, given inline or from a ConfigMap/Secret key.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[x_kube(validation = Rule::new("(has(self.value) && !has(self.valueFrom)) || (!has(self.value) && has(self.valueFrom))")
    .message("Exactly one of value or valueFrom must be specified"))]
#[serde(rename_all = "camelCase")]
pub struct ValueRef {
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value_from: Option<ValueSource>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[x_kube(
    validation = Rule::new("!(has(self.mcpServer) && self.type != 'McpServer')").message("type.mcpServer must be nil if the type is not McpServer"),
    validation = Rule::new("!(!has(self.mcpServer) && self.type == 'McpServer')").message("type.mcpServer must be specified for McpServer filter.type"),
    validation = Rule::new("!(has(self.agent) && self.type != 'Agent')").message("type.agent must be nil if the type is not Agent"),
    validation = Rule::new("!(!has(self.agent) && self.type == 'Agent')").message("type.agent must be specified for Agent filter.type"),
)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    #[serde(rename = "type", default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "tool_type_schema")]
    pub type_: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mcp_server: Option<McpServerTool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent: Option<TypedReference>,
    /// Headers for requests to the tool, from values or ConfigMap/Secret keys.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub headers_from: Vec<ValueRef>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[x_kube(validation = Rule::new("!has(self.requireApproval) || self.requireApproval.all(x, has(self.toolNames) && x in self.toolNames)")
    .message("each RequireApproval entry must also appear in ToolNames"))]
#[serde(rename_all = "camelCase")]
pub struct McpServerTool {
    #[serde(flatten)]
    pub target: TypedReference,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 50))]
    pub tool_names: Vec<String>,
    /// Tools that need a person's approval before they run.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 50))]
    pub require_approval: Vec<String>,
    /// Headers of the A2A request passed on to the MCP tool calls.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub allowed_headers: Vec<String>,
}

/// A reference to an object by kind, API group, name and (optionally) namespace.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TypedReference {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_group: Option<String>,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PromptTemplateSpec {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 20))]
    pub data_sources: Vec<PromptSource>,
}

/// A ConfigMap whose keys a system message template may include.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct PromptSource {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kind: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub api_group: Option<String>,
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alias: Option<String>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct A2AConfig {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(min = 1))]
    pub skills: Vec<AgentSkill>,
}

/// An A2A agent skill, as the agent card lists it: kagent v0.9.7–v0.9.12 require `name`
/// (non-empty) and make `id` optional.
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AgentSkill {
    /// The unique identifier of the skill.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub id: String,
    /// The human-readable name of the skill.
    #[schemars(length(min = 1))]
    pub name: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 20))]
    pub tags: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 20))]
    pub examples: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub input_modes: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub output_modes: Vec<String>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MemorySpec {
    /// The ModelConfig whose embedding provider makes the memory vectors.
    pub model_config: String,
    /// Days a memory stays valid (kagent: 15 when unset).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "go_int", range(min = 1))]
    pub ttl_days: Option<i64>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContextConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compaction: Option<ContextCompressionConfig>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContextCompressionConfig {
    /// New invocations that trigger a compaction.
    #[serde(default = "compaction_interval_default", skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "go_int", range(min = 1), extend("default" = 5))]
    pub compaction_interval: Option<i64>,
    /// Invocations repeated from the end of the last compacted range.
    #[serde(default = "overlap_size_default", skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "go_int", range(min = 0), extend("default" = 2))]
    pub overlap_size: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summarizer: Option<ContextSummarizerConfig>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "go_int")]
    pub token_threshold: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(schema_with = "go_int")]
    pub event_retention_size: Option<i64>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ContextSummarizerConfig {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_config: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompt_template: Option<String>,
}
