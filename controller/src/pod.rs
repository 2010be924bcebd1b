//! The sandbox pod: the agent's container with srt on its PATH and its settings mounted,
//! always unprivileged. Pure: (agent, deployment settings, options) -> PodSpec.

use k8s_openapi::api::core::v1::{
    Capabilities, ConfigMapVolumeSource, Container, ContainerPort, EmptyDirVolumeSource, EnvVar, EnvVarSource,
    HTTPGetAction, ObjectFieldSelector, PodSecurityContext, PodSpec, Probe, ResourceRequirements, SeccompProfile,
    SecurityContext, Volume, VolumeMount,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::accept::{Rejection, REASON_INVALID_SPEC};
use crate::crd::{AgentType, SandboxAgentSpec, SharedDeploymentSpec};
use crate::options::Options;
use crate::settings::SETTINGS_KEY;

/// Where the settings ConfigMap is mounted (kagent's `/config`). A directory mount, never
/// `subPath`, so the kubelet swaps in edited settings while the pod runs.
pub const SETTINGS_DIR: &str = "/config";
/// Where the init container puts `srt`; first on the agent's PATH.
pub const SRT_BIN_DIR: &str = "/opt/srt/bin";
/// The Declarative agent's spec, as JSON, next to the settings.
pub const AGENT_SPEC_KEY: &str = "agent-spec.json";
pub const SETTINGS_VOLUME: &str = "srt-settings";
pub const SRT_BIN_VOLUME: &str = "srt-bin";
pub const CONTAINER_NAME: &str = "kagent";
pub const AGENT_PORT: i32 = 8080;
/// The PATH the agent gets when its spec sets none. Kubernetes cannot prepend to an
/// image's PATH, so this is the common Linux default with srt's directory first.
pub const DEFAULT_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// Inputs of [`pod_spec`] that come from the agent object rather than its spec.
pub struct PodInputs<'a> {
    pub agent_name: &'a str,
    pub settings_configmap: &'a str,
    pub runtime_class_name: Option<String>,
}

pub fn pod_spec(
    spec: &SandboxAgentSpec,
    deployment: &SharedDeploymentSpec,
    inputs: &PodInputs<'_>,
    opts: &Options,
) -> Result<PodSpec, Rejection> {
    check_reserved_names(deployment)?;
    let (image, command, args) = match spec.agent_type {
        AgentType::Byo => {
            let d = spec.byo.as_ref().and_then(|b| b.deployment.as_ref());
            let image = d.map(|d| d.image.clone()).unwrap_or_default();
            let command = d.and_then(|d| d.cmd.clone()).map(|c| vec![c]);
            let args = d.map(|d| d.args.clone()).filter(|a| !a.is_empty());
            (image, command, args)
        }
        AgentType::Declarative => (
            opts.runtime_image.clone(),
            None,
            Some(["--host", "0.0.0.0", "--port", "8080", "--filepath", SETTINGS_DIR].map(String::from).to_vec()),
        ),
    };

    let mut mounts = vec![
        VolumeMount {
            name: SETTINGS_VOLUME.into(),
            mount_path: SETTINGS_DIR.into(),
            read_only: Some(true),
            ..Default::default()
        },
        VolumeMount {
            name: SRT_BIN_VOLUME.into(),
            mount_path: SRT_BIN_DIR.into(),
            read_only: Some(true),
            ..Default::default()
        },
    ];
    mounts.extend(deployment.volume_mounts.iter().cloned());

    let mut volumes = vec![
        Volume {
            name: SETTINGS_VOLUME.into(),
            config_map: Some(ConfigMapVolumeSource { name: inputs.settings_configmap.into(), ..Default::default() }),
            ..Default::default()
        },
        Volume { name: SRT_BIN_VOLUME.into(), empty_dir: Some(EmptyDirVolumeSource::default()), ..Default::default() },
    ];
    volumes.extend(deployment.volumes.iter().cloned());

    let readiness_probe = (spec.agent_type == AgentType::Declarative).then(|| Probe {
        http_get: Some(HTTPGetAction {
            path: Some("/.well-known/agent-card.json".into()),
            port: IntOrString::String("http".into()),
            ..Default::default()
        }),
        initial_delay_seconds: Some(15),
        timeout_seconds: Some(15),
        period_seconds: Some(15),
        ..Default::default()
    });

    let agent = Container {
        name: CONTAINER_NAME.into(),
        image: Some(image),
        image_pull_policy: deployment.image_pull_policy.clone(),
        command,
        args,
        ports: Some(vec![ContainerPort {
            name: Some("http".into()),
            container_port: AGENT_PORT,
            ..Default::default()
        }]),
        env: Some(env(spec, deployment, inputs.agent_name)),
        resources: deployment.resources.clone(),
        volume_mounts: Some(mounts),
        readiness_probe,
        security_context: Some(container_security(deployment.security_context.clone())),
        ..Default::default()
    };

    let install_srt = Container {
        name: "install-srt".into(),
        image: Some(opts.srt_image.clone()),
        command: Some(vec!["cp".into(), opts.srt_image_path.clone(), format!("{SRT_BIN_DIR}/srt")]),
        volume_mounts: Some(vec![VolumeMount {
            name: SRT_BIN_VOLUME.into(),
            mount_path: SRT_BIN_DIR.into(),
            ..Default::default()
        }]),
        resources: Some(ResourceRequirements {
            requests: Some([("cpu".into(), Quantity("10m".into())), ("memory".into(), Quantity("16Mi".into()))].into()),
            limits: Some([("memory".into(), Quantity("64Mi".into()))].into()),
            ..Default::default()
        }),
        security_context: Some(container_security(None)),
        ..Default::default()
    };

    let service_account = deployment.service_account_name.clone();
    Ok(PodSpec {
        // Without an account of its own the agent has no business with the API server.
        automount_service_account_token: service_account.is_none().then_some(false),
        service_account_name: service_account,
        runtime_class_name: inputs.runtime_class_name.clone(),
        image_pull_secrets: non_empty(deployment.image_pull_secrets.clone()),
        node_selector: (!deployment.node_selector.is_empty()).then(|| deployment.node_selector.clone()),
        tolerations: non_empty(deployment.tolerations.clone()),
        affinity: deployment.affinity.clone(),
        security_context: Some(pod_security(deployment.pod_security_context.clone(), opts.run_as_user)),
        init_containers: Some(vec![install_srt]),
        containers: vec![agent],
        volumes: Some(volumes),
        ..Default::default()
    })
}

fn non_empty<T>(v: Vec<T>) -> Option<Vec<T>> {
    (!v.is_empty()).then_some(v)
}

/// The agent's own volumes and mounts may not shadow the settings or srt.
fn check_reserved_names(d: &SharedDeploymentSpec) -> Result<(), Rejection> {
    for v in &d.volumes {
        if v.name == SETTINGS_VOLUME || v.name == SRT_BIN_VOLUME {
            return Err(Rejection {
                reason: REASON_INVALID_SPEC,
                message: format!(
                    "deployment.volumes: the name \"{}\" is reserved by srt-controller; rename it",
                    v.name
                ),
            });
        }
    }
    for m in &d.volume_mounts {
        let path = m.mount_path.trim_end_matches('/');
        if path == SETTINGS_DIR || path == SRT_BIN_DIR || m.name == SETTINGS_VOLUME || m.name == SRT_BIN_VOLUME {
            return Err(Rejection {
                reason: REASON_INVALID_SPEC,
                message: format!(
                    "deployment.volumeMounts: \"{}\" at {} would hide srt's settings ({SETTINGS_DIR}) or binary \
                     ({SRT_BIN_DIR}); mount it elsewhere",
                    m.name, m.mount_path
                ),
            });
        }
    }
    Ok(())
}

fn plain(name: &str, value: impl Into<String>) -> EnvVar {
    EnvVar { name: name.into(), value: Some(value.into()), ..Default::default() }
}

/// kagent's variables, the settings path under both names, srt on PATH, then the agent's own
/// variables (which may override kagent's). The agent's PATH, if it sets one, keeps srt's
/// directory in front.
fn env(spec: &SandboxAgentSpec, d: &SharedDeploymentSpec, agent_name: &str) -> Vec<EnvVar> {
    let settings_path = format!("{SETTINGS_DIR}/{SETTINGS_KEY}");
    let user_path = d.env.iter().find(|e| e.name == "PATH").and_then(|e| e.value.clone());
    let mut out = vec![
        EnvVar {
            name: "KAGENT_NAMESPACE".into(),
            value_from: Some(EnvVarSource {
                field_ref: Some(ObjectFieldSelector { field_path: "metadata.namespace".into(), ..Default::default() }),
                ..Default::default()
            }),
            ..Default::default()
        },
        plain("KAGENT_NAME", agent_name),
        plain("KAGENT_SRT_SETTINGS_PATH", settings_path.clone()),
        plain("SRT_SETTINGS_PATH", settings_path),
        plain("PATH", format!("{SRT_BIN_DIR}:{}", user_path.as_deref().unwrap_or(DEFAULT_PATH))),
    ];
    if spec.agent_type == AgentType::Declarative {
        out.push(plain("SRT_AGENT_SPEC_PATH", format!("{SETTINGS_DIR}/{AGENT_SPEC_KEY}")));
    }
    for e in &d.env {
        // accept.rs refused the settings variables; PATH was folded in above.
        if e.name == "PATH" {
            continue;
        }
        match out.iter_mut().find(|o| o.name == e.name) {
            Some(existing) => *existing = e.clone(),
            None => out.push(e.clone()),
        }
    }
    out
}

fn runtime_default() -> SeccompProfile {
    SeccompProfile { type_: "RuntimeDefault".into(), ..Default::default() }
}

/// The agent's container settings with the unprivileged floor forced on top (accept.rs has
/// already refused specs that asked for less).
fn container_security(user: Option<SecurityContext>) -> SecurityContext {
    let mut sc = user.unwrap_or_default();
    sc.privileged = Some(false);
    sc.allow_privilege_escalation = Some(false);
    sc.run_as_non_root = Some(true);
    let mut caps = sc.capabilities.take().unwrap_or_default();
    let mut drop = caps.drop.take().unwrap_or_default();
    if !drop.iter().any(|c| c == "ALL") {
        drop.insert(0, "ALL".into());
    }
    sc.capabilities = Some(Capabilities { add: None, drop: Some(drop) });
    if sc.seccomp_profile.is_none() {
        sc.seccomp_profile = Some(runtime_default());
    }
    sc
}

fn pod_security(user: Option<PodSecurityContext>, uid: i64) -> PodSecurityContext {
    let mut sc = user.unwrap_or_default();
    sc.run_as_non_root = Some(true);
    let uid = *sc.run_as_user.get_or_insert(uid);
    sc.run_as_group.get_or_insert(uid);
    sc.fs_group.get_or_insert(uid);
    if sc.seccomp_profile.is_none() {
        sc.seccomp_profile = Some(runtime_default());
    }
    sc
}
