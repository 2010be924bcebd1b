//! kagent's `skills` and `allowedNamespaces`.

use k8s_openapi::api::core::v1::{EnvVar, LocalObjectReference, ResourceRequirements};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector;
use kube::KubeSchema;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// Skills pulled from container images or git repositories into `/skills`.
/// (kagent's Go type says `+kubebuilder:validation:AtLeastOneOf=refs,gitRefs`, which the
/// controller-gen v0.19 that wrote kagent's CRD does not turn into a rule, so neither does
/// this schema: `skills: {}` is accepted and gives an agent without skills, as in kagent.)
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SkillForAgent {
    /// Fetch images insecurely (HTTP, no TLS verification); for development only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub insecure_skip_verify: bool,
    /// Skill images to fetch.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(min = 1, max = 20))]
    pub refs: Vec<String>,
    /// Secrets used to pull skill images from private registries.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(max = 20))]
    pub image_pull_secrets: Vec<LocalObjectReference>,
    /// A Secret with git credentials (`token` or `ssh-privatekey`) for every gitRefs entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_auth_secret_ref: Option<LocalObjectReference>,
    /// Git repositories to fetch skills from.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[schemars(length(min = 1, max = 20))]
    pub git_refs: Vec<GitRepo>,
    /// The skills-init init container.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub init_container: Option<SkillsInitContainer>,
}

fn main_branch() -> String {
    "main".into()
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct GitRepo {
    /// URL of the git repository (HTTPS or SSH).
    pub url: String,
    /// Branch, tag or commit.
    #[serde(default = "main_branch")]
    pub r#ref: String,
    /// Subdirectory used as the skill root.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Name of the skill directory under /skills.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct SkillsInitContainer {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourceRequirements>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<EnvVar>,
}

#[derive(Serialize, Deserialize, Clone, Copy, Debug, Default, PartialEq, Eq, JsonSchema)]
pub enum FromNamespaces {
    All,
    #[default]
    Same,
    Selector,
}

/// Which namespaces may reference this agent as a tool (Gateway API's pattern).
#[derive(Serialize, Deserialize, Clone, Debug, Default, PartialEq, KubeSchema)]
#[x_kube(validation = Rule::new("!(self.from == 'Selector' && !has(self.selector))")
    .message("selector must be specified when from is Selector"))]
#[serde(rename_all = "camelCase")]
pub struct AllowedNamespaces {
    /// All, Same (default) or Selector.
    #[serde(default)]
    pub from: FromNamespaces,
    /// Namespaces allowed when from is Selector.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<LabelSelector>,
}
