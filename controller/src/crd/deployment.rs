//! The pod settings of kagent's agents: `byo.deployment` and `declarative.deployment`,
//! which share kagent's `SharedDeploymentSpec` (inlined into each, with its CEL rule).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    Affinity, Container, EnvVar, LocalObjectReference, PodSecurityContext, ResourceRequirements, SecurityContext,
    Toleration, Volume, VolumeMount,
};
use kube::KubeSchema;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ByoAgentSpec {
    /// Trust relationship to the agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deployment: Option<ByoDeploymentSpec>,
}

const SA_XOR: &str = "!(has(self.serviceAccountName) && has(self.serviceAccountConfig))";
const SA_XOR_MESSAGE: &str = "serviceAccountName and serviceAccountConfig are mutually exclusive";

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[x_kube(validation = Rule::new(SA_XOR).message(SA_XOR_MESSAGE))]
#[serde(rename_all = "camelCase")]
pub struct ByoDeploymentSpec {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    #[schemars(length(min = 1))]
    pub image: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cmd: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// The container's working directory (kagent v0.9.7+).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub working_dir: Option<String>,
    #[serde(flatten)]
    pub shared: SharedDeploymentSpec,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[x_kube(validation = Rule::new(SA_XOR).message(SA_XOR_MESSAGE))]
#[serde(rename_all = "camelCase")]
pub struct DeclarativeDeploymentSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub image_registry: Option<String>,
    #[serde(flatten)]
    pub shared: SharedDeploymentSpec,
}

/// The pod settings kagent lets both agent types carry.
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
    /// The name of an existing ServiceAccount to use. When set, no ServiceAccount is created
    /// for the agent. Mutually exclusive with serviceAccountConfig.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_account_name: Option<String>,
    /// Labels and annotations for the ServiceAccount created for the agent (named after it)
    /// when serviceAccountName is not set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service_account_config: Option<ServiceAccountConfig>,
    /// Containers run beside the agent (sidecars), held to the same unprivileged floor.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub extra_containers: Vec<Container>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ServiceAccountConfig {
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub labels: BTreeMap<String, String>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub annotations: BTreeMap<String, String>,
}
