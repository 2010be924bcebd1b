//! Whether an agent can be deployed as asked, decided before anything is written. A
//! rejection names the field, the value and what to change; it becomes `Accepted=False`.

use settings_schema::{DomainPattern, ListKind};

use crate::crd::{AgentType, SandboxAgentSpec, SandboxPlatform, SharedDeploymentSpec};
use crate::rejection::{reject, Rejection, REASON_INVALID_DOMAINS, REASON_INVALID_SPEC, REASON_UNSUPPORTED_PLATFORM};

/// Variables srt-controller owns: they must point at the files it mounts.
const RESERVED_ENV: &[&str] = &["KAGENT_SRT_SETTINGS_PATH", "SRT_SETTINGS_PATH", "SRT_AGENT_SPEC_PATH"];

/// Checks an agent spec; on success returns the deployment settings the pod is built from.
pub fn check(spec: &SandboxAgentSpec) -> Result<SharedDeploymentSpec, Rejection> {
    if spec.platform() == SandboxPlatform::Substrate {
        return Err(reject(
            REASON_UNSUPPORTED_PLATFORM,
            "spec.platform \"substrate\" (kagent's Agent Substrate) is not served by srt-controller; \
             remove spec.platform or set it to \"agent-sandbox\"",
        ));
    }
    check_domains(spec.allowed_domains())?;
    let deployment = deployment_of(spec)?;
    if let Some(e) = deployment.env.iter().find(|e| RESERVED_ENV.contains(&e.name.as_str())) {
        return Err(reject(
            REASON_INVALID_SPEC,
            format!(
                "deployment.env: {} is set by srt-controller to the mounted settings; remove it from the spec",
                e.name
            ),
        ));
    }
    crate::floor::check(&deployment, spec.agent_type == AgentType::Declarative)?;
    Ok(deployment)
}

/// How many bad entries a rejection names one by one; the rest are counted. A condition
/// message may hold at most 32768 characters (kagent's schema, `metav1.Condition`), and a
/// status write with a longer one is refused whole.
const NAMED_PROBLEMS: usize = 20;

/// Every entry must parse with srt's allow-list grammar; bad entries are named (the first
/// [`NAMED_PROBLEMS`]) and counted.
pub fn check_domains(domains: &[String]) -> Result<(), Rejection> {
    let problems: Vec<String> = domains
        .iter()
        .enumerate()
        .filter_map(|(i, d)| {
            DomainPattern::parse(d, ListKind::Allowed)
                .err()
                .map(|e| format!("spec.sandbox.network.allowedDomains[{i}] \"{d}\": {e}"))
        })
        .collect();
    if problems.is_empty() {
        return Ok(());
    }
    let mut message = problems.iter().take(NAMED_PROBLEMS).cloned().collect::<Vec<_>>().join("; ");
    if problems.len() > NAMED_PROBLEMS {
        message.push_str(&format!("; and {} more invalid entries", problems.len() - NAMED_PROBLEMS));
    }
    Err(reject(REASON_INVALID_DOMAINS, message))
}

fn deployment_of(spec: &SandboxAgentSpec) -> Result<SharedDeploymentSpec, Rejection> {
    match spec.agent_type {
        AgentType::Byo => {
            let Some(d) = spec.byo.as_ref().and_then(|b| b.deployment.as_ref()) else {
                return Err(reject(REASON_INVALID_SPEC, "spec.byo.deployment is required for type BYO"));
            };
            if d.image.trim().is_empty() {
                return Err(reject(REASON_INVALID_SPEC, "spec.byo.deployment.image is required for type BYO"));
            }
            Ok(d.shared.clone())
        }
        AgentType::Declarative => {
            let Some(d) = spec.declarative.as_ref() else {
                return Err(reject(REASON_INVALID_SPEC, "spec.declarative is required for type Declarative"));
            };
            Ok(d.deployment.as_ref().map(|d| d.shared.clone()).unwrap_or_default())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::crd::{DeclarativeAgentSpec, NetworkConfig, SandboxConfig};
    use crate::rejection::REASON_UNSAFE_SECURITY_CONTEXT;

    fn decl(v: serde_json::Value) -> DeclarativeAgentSpec {
        serde_json::from_value(v).unwrap()
    }

    fn declarative(domains: &[&str]) -> SandboxAgentSpec {
        SandboxAgentSpec {
            declarative: Some(decl(serde_json::json!({"modelConfig": "default-model-config"}))),
            sandbox: Some(SandboxConfig {
                network: Some(NetworkConfig { allowed_domains: domains.iter().map(|d| d.to_string()).collect() }),
            }),
            ..Default::default()
        }
    }

    #[test]
    fn valid_domains_are_accepted() {
        assert!(check(&declarative(&["api.github.com", "*.example.com", "localhost", "10.0.0.1:8080"])).is_ok());
        assert!(check(&declarative(&[])).is_ok());
    }

    #[test]
    fn every_bad_domain_is_named_with_its_index_and_reason() {
        let r = check(&declarative(&["api.github.com", "https://x.example.com", "*.com", "kagent-controller"]))
            .unwrap_err();
        assert_eq!(r.reason, REASON_INVALID_DOMAINS);
        assert!(r.message.contains("allowedDomains[1] \"https://x.example.com\": has a scheme"), "{}", r.message);
        assert!(r.message.contains("allowedDomains[2] \"*.com\": \"*.com\" is too broad"), "{}", r.message);
        assert!(r.message.contains("allowedDomains[3] \"kagent-controller\""), "{}", r.message);
        assert!(!r.message.contains("[0]"), "{}", r.message);
    }

    #[test]
    fn bare_star_is_refused_in_the_allow_list() {
        assert_eq!(check(&declarative(&["*"])).unwrap_err().reason, REASON_INVALID_DOMAINS);
    }

    #[test]
    fn substrate_is_refused_first() {
        let mut spec = declarative(&["https://bad"]);
        spec.platform = Some(SandboxPlatform::Substrate);
        assert_eq!(check(&spec).unwrap_err().reason, REASON_UNSUPPORTED_PLATFORM);
    }

    #[test]
    fn byo_needs_an_image() {
        let spec = SandboxAgentSpec { agent_type: AgentType::Byo, byo: Some(Default::default()), ..Default::default() };
        assert_eq!(check(&spec).unwrap_err().message, "spec.byo.deployment is required for type BYO");
    }

    #[test]
    fn privileged_requests_are_refused() {
        for sc in [
            serde_json::json!({"privileged": true}),
            serde_json::json!({"allowPrivilegeEscalation": true}),
            serde_json::json!({"capabilities": {"add": ["NET_ADMIN"]}}),
            serde_json::json!({"runAsUser": 0}),
            serde_json::json!({"seccompProfile": {"type": "Unconfined"}}),
        ] {
            let spec = SandboxAgentSpec {
                declarative: Some(decl(serde_json::json!({"deployment": {"securityContext": sc}}))),
                ..Default::default()
            };
            let r = check(&spec).unwrap_err();
            assert_eq!(r.reason, REASON_UNSAFE_SECURITY_CONTEXT, "{sc}");
        }
        let tightening = SandboxAgentSpec {
            declarative: Some(decl(
                serde_json::json!({"deployment": {"securityContext": {"readOnlyRootFilesystem": true}}}),
            )),
            ..Default::default()
        };
        assert!(check(&tightening).is_ok());
    }

    #[test]
    fn the_settings_path_cannot_be_pointed_elsewhere() {
        let spec = SandboxAgentSpec {
            declarative: Some(decl(
                serde_json::json!({"deployment": {"env": [{"name": "SRT_SETTINGS_PATH", "value": "/x"}]}}),
            )),
            ..Default::default()
        };
        let r = check(&spec).unwrap_err();
        assert_eq!(r.reason, REASON_INVALID_SPEC);
        assert!(r.message.contains("SRT_SETTINGS_PATH"), "{}", r.message);
    }

    #[test]
    fn a_privileged_sidecar_is_refused() {
        let spec = SandboxAgentSpec {
            declarative: Some(decl(serde_json::json!({"deployment": {"extraContainers": [
                {"name": "proxy", "image": "envoy"},
                {"name": "debug", "image": "busybox", "securityContext": {"privileged": true}}
            ]}}))),
            ..Default::default()
        };
        let r = check(&spec).unwrap_err();
        assert_eq!(r.reason, REASON_UNSAFE_SECURITY_CONTEXT);
        assert!(r.message.contains("deployment.extraContainers[1].securityContext.privileged: true"), "{}", r.message);
    }
}
