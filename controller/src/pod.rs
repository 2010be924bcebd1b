//! The sandbox pod: the agent's container with srt on its PATH, its settings and kagent's
//! config files mounted, kagent's variables and ServiceAccount, always unprivileged. Pure:
//! (agent, deployment settings, options) -> PodSpec.

use k8s_openapi::api::core::v1::{
    Capabilities, ConfigMapProjection, ConfigMapVolumeSource, Container, ContainerPort, EmptyDirVolumeSource, EnvVar,
    EnvVarSource, HTTPGetAction, KeyToPath, ObjectFieldSelector, PodSecurityContext, PodSpec, Probe,
    ProjectedVolumeSource, ResourceRequirements, SeccompProfile, SecretProjection, SecretVolumeSource, SecurityContext,
    ServiceAccountTokenProjection, Volume, VolumeMount, VolumeProjection,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;

use crate::agent_config::PodAdditions;
use crate::crd::{AgentType, SandboxAgentSpec, SharedDeploymentSpec};
use crate::options::Options;
use crate::pod_layout::{
    AGENT_PORT, AGENT_SPEC_KEY, CONTAINER_NAME, INIT_CONTAINER_NAME, SETTINGS_DIR, SETTINGS_KEY, SETTINGS_VOLUME,
    SRT_BIN_VOLUME, TOKEN_DIR, TOKEN_VOLUME,
};
use crate::rejection::Rejection;
use crate::skills;

/// Where the init container sees the srt volume (the agent sees it at `--srt-bin-dir`).
const INIT_BIN_DIR: &str = "/srt-bin";

/// Inputs of [`pod_spec`] that come from the agent object rather than its spec.
pub struct PodInputs<'a> {
    pub agent_name: &'a str,
    pub settings_configmap: &'a str,
    /// A Declarative agent's config Secret, projected into `/config` beside the settings.
    pub config_secret: Option<&'a str>,
    /// The ServiceAccount the pod runs as: the spec's, or the agent's own.
    pub service_account: String,
    /// Whether that account is the one srt-controller creates for the agent.
    pub own_service_account: bool,
    pub runtime_class_name: Option<String>,
    /// Env vars, Secret volumes and mounts the agent's model and tools need.
    pub additions: &'a PodAdditions,
    /// Whether the agent fetches skills (a skills-init config exists).
    pub skills: bool,
}

/// kagent's default resources for the agent and skills-init containers, where the spec
/// names none.
pub fn default_resources() -> ResourceRequirements {
    ResourceRequirements {
        requests: Some([("cpu".into(), Quantity("100m".into())), ("memory".into(), Quantity("384Mi".into()))].into()),
        limits: Some([("cpu".into(), Quantity("2".into())), ("memory".into(), Quantity("1Gi".into()))].into()),
        ..Default::default()
    }
}

/// The image of a Declarative agent: the operator's for its runtime, with the spec's
/// `imageRegistry` in place of the registry (kagent's rule).
fn runtime_image(spec: &SandboxAgentSpec, opts: &Options) -> String {
    let d = spec.declarative.as_ref();
    let image = match d.and_then(|d| d.runtime.as_deref()) {
        Some("go") => opts.go_runtime_image.clone(),
        _ => opts.runtime_image.clone(),
    };
    let registry =
        d.and_then(|d| d.deployment.as_ref()).and_then(|d| d.image_registry.as_deref()).filter(|r| !r.is_empty());
    match (registry, image.split_once('/')) {
        // The first segment is a registry when it has a dot or a port, or is localhost.
        (Some(r), Some((first, rest))) if first.contains('.') || first.contains(':') || first == "localhost" => {
            format!("{}/{rest}", r.trim_end_matches('/'))
        }
        (Some(r), _) => format!("{}/{image}", r.trim_end_matches('/')),
        (None, _) => image,
    }
}

pub fn pod_spec(
    spec: &SandboxAgentSpec,
    deployment: &SharedDeploymentSpec,
    inputs: &PodInputs<'_>,
    opts: &Options,
) -> Result<PodSpec, Rejection> {
    crate::mounts::check(deployment, opts, spec.agent_type == AgentType::Declarative)?;
    let (image, command, args, working_dir) = match spec.agent_type {
        AgentType::Byo => {
            let d = spec.byo.as_ref().and_then(|b| b.deployment.as_ref());
            let image = d.map(|d| d.image.clone()).unwrap_or_default();
            let command = d.and_then(|d| d.cmd.clone()).map(|c| vec![c]);
            let args = d.map(|d| d.args.clone()).filter(|a| !a.is_empty());
            (image, command, args, d.and_then(|d| d.working_dir.clone()))
        }
        AgentType::Declarative => (
            runtime_image(spec, opts),
            None,
            Some(["--host", "0.0.0.0", "--port", "8080", "--filepath", SETTINGS_DIR].map(String::from).to_vec()),
            None,
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
            mount_path: opts.srt_bin_dir.clone(),
            read_only: Some(true),
            ..Default::default()
        },
        VolumeMount {
            name: TOKEN_VOLUME.into(),
            mount_path: TOKEN_DIR.into(),
            read_only: Some(true),
            ..Default::default()
        },
    ];
    mounts.extend(deployment.volume_mounts.iter().cloned());
    mounts.extend(inputs.additions.mounts.iter().cloned());
    if inputs.skills {
        mounts.push(VolumeMount {
            name: skills::SKILLS_VOLUME.into(),
            mount_path: skills::SKILLS_DIR.into(),
            read_only: Some(true),
            ..Default::default()
        });
    }

    let mut volumes = vec![
        settings_volume(inputs),
        Volume { name: SRT_BIN_VOLUME.into(), empty_dir: Some(EmptyDirVolumeSource::default()), ..Default::default() },
        Volume {
            name: TOKEN_VOLUME.into(),
            projected: Some(ProjectedVolumeSource {
                sources: Some(vec![VolumeProjection {
                    service_account_token: Some(ServiceAccountTokenProjection {
                        audience: Some("kagent".into()),
                        expiration_seconds: Some(3600),
                        path: "kagent-token".into(),
                    }),
                    ..Default::default()
                }]),
                ..Default::default()
            }),
            ..Default::default()
        },
    ];
    volumes.extend(deployment.volumes.iter().cloned());
    volumes.extend(inputs.additions.volumes.iter().cloned());
    let mut init_containers = Vec::new();
    if inputs.skills {
        let (init, extra) = skills_init(spec, inputs.settings_configmap, opts);
        volumes.extend(extra);
        init_containers.push(init);
    }

    // kagent's probe timings: the Go runtime starts in a second, Python takes its time.
    let go = spec.declarative.as_ref().and_then(|d| d.runtime.as_deref()) == Some("go");
    let (delay, timeout, period) = if go { (1, 5, 1) } else { (15, 15, 15) };
    let readiness_probe = (spec.agent_type == AgentType::Declarative).then(|| Probe {
        http_get: Some(HTTPGetAction {
            path: Some("/.well-known/agent-card.json".into()),
            port: IntOrString::String("http".into()),
            ..Default::default()
        }),
        initial_delay_seconds: Some(delay),
        timeout_seconds: Some(timeout),
        period_seconds: Some(period),
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
        env: Some(env(spec, deployment, inputs, opts)),
        working_dir,
        resources: Some(deployment.resources.clone().unwrap_or_else(default_resources)),
        volume_mounts: Some(mounts),
        readiness_probe,
        security_context: Some(container_security(deployment.security_context.clone())),
        ..Default::default()
    };

    let install_srt = Container {
        name: INIT_CONTAINER_NAME.into(),
        image: Some(opts.srt_image.clone()),
        command: Some(vec!["cp".into(), opts.srt_image_path.clone(), format!("{INIT_BIN_DIR}/srt")]),
        volume_mounts: Some(vec![VolumeMount {
            name: SRT_BIN_VOLUME.into(),
            mount_path: INIT_BIN_DIR.into(),
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

    let mut containers = vec![agent];
    for extra in &deployment.extra_containers {
        let mut c = extra.clone();
        c.security_context = Some(container_security(c.security_context.take()));
        containers.push(c);
    }
    Ok(PodSpec {
        // The account srt-controller creates has no role bindings: its API token would be of
        // no use, so it is not mounted (kagent's token for KAGENT_URL is, above). An account
        // the spec names keeps Kubernetes' default.
        automount_service_account_token: inputs.own_service_account.then_some(false),
        service_account_name: Some(inputs.service_account.clone()),
        runtime_class_name: inputs.runtime_class_name.clone(),
        image_pull_secrets: non_empty(deployment.image_pull_secrets.clone()),
        node_selector: (!deployment.node_selector.is_empty()).then(|| deployment.node_selector.clone()),
        tolerations: non_empty(deployment.tolerations.clone()),
        affinity: deployment.affinity.clone(),
        security_context: Some(pod_security(deployment.pod_security_context.clone(), opts.run_as_user)),
        init_containers: Some([vec![install_srt], init_containers].concat()),
        containers,
        volumes: Some(volumes),
        ..Default::default()
    })
}

/// `/config`: the settings ConfigMap, and for a Declarative agent its config Secret projected
/// beside it (kagent mounts that Secret at `/config`). Both sources are refreshed in the
/// running pod, so edited settings still reach srt.
fn settings_volume(inputs: &PodInputs<'_>) -> Volume {
    let configmap = ConfigMapVolumeSource { name: inputs.settings_configmap.into(), ..Default::default() };
    let Some(secret) = inputs.config_secret else {
        return Volume { name: SETTINGS_VOLUME.into(), config_map: Some(configmap), ..Default::default() };
    };
    let sources = vec![
        VolumeProjection {
            config_map: Some(ConfigMapProjection { name: inputs.settings_configmap.into(), ..Default::default() }),
            ..Default::default()
        },
        VolumeProjection {
            secret: Some(SecretProjection { name: secret.into(), ..Default::default() }),
            ..Default::default()
        },
    ];
    Volume {
        name: SETTINGS_VOLUME.into(),
        projected: Some(ProjectedVolumeSource { sources: Some(sources), ..Default::default() }),
        ..Default::default()
    }
}

fn non_empty<T>(v: Vec<T>) -> Option<Vec<T>> {
    (!v.is_empty()).then_some(v)
}

fn plain(name: &str, value: impl Into<String>) -> EnvVar {
    EnvVar { name: name.into(), value: Some(value.into()), ..Default::default() }
}

fn field(name: &str, path: &str) -> EnvVar {
    EnvVar {
        name: name.into(),
        value_from: Some(EnvVarSource {
            field_ref: Some(ObjectFieldSelector { field_path: path.into(), ..Default::default() }),
            ..Default::default()
        }),
        ..Default::default()
    }
}

/// kagent's order: the spec's variables, then the model's (API keys as `secretKeyRef`),
/// then kagent's own (OTEL passthrough, `KAGENT_*`), then srt-controller's; a later entry
/// of a name replaces an earlier one (kagent's own win, as in kagent's pods, where the
/// container runtime keeps the last). `PATH` is left to the image, which already looks in
/// `--srt-bin-dir`; a `PATH` the spec sets replaces the image's, so it gets that directory in
/// front.
fn env(spec: &SandboxAgentSpec, d: &SharedDeploymentSpec, inputs: &PodInputs<'_>, opts: &Options) -> Vec<EnvVar> {
    let settings_path = format!("{SETTINGS_DIR}/{SETTINGS_KEY}");
    let mut out: Vec<EnvVar> = Vec::new();
    let mut set = |e: EnvVar| {
        out.retain(|o| o.name != e.name);
        out.push(e);
    };
    for e in &d.env {
        let mut e = e.clone();
        if e.name == "PATH" {
            if let Some(v) = e.value.as_mut() {
                *v = format!("{}:{v}", opts.srt_bin_dir);
            }
        }
        set(e);
    }
    inputs.additions.env.iter().cloned().for_each(&mut set);
    opts.otel_env.iter().map(|(k, v)| plain(k, v.clone())).for_each(&mut set);
    set(field("KAGENT_NAMESPACE", "metadata.namespace"));
    set(plain("KAGENT_NAME", inputs.agent_name));
    set(plain("KAGENT_URL", opts.kagent_url.clone()));
    if inputs.skills {
        set(plain("KAGENT_SKILLS_FOLDER", skills::SKILLS_DIR));
    }
    set(plain("KAGENT_SRT_SETTINGS_PATH", settings_path.clone()));
    set(plain("SRT_SETTINGS_PATH", settings_path));
    set(field("SRT_SERVICE_ACCOUNT_NAME", "spec.serviceAccountName"));
    if spec.agent_type == AgentType::Declarative {
        set(plain("SRT_AGENT_SPEC_PATH", format!("{SETTINGS_DIR}/{AGENT_SPEC_KEY}")));
    }
    out
}

/// kagent's skills-init init container (image `--skills-init-image`, its config from the
/// settings ConfigMap's `skills-init.json`, mounted as `/etc/kagent/skills-init/config.json`),
/// held to the same unprivileged floor as every container, and the volumes it needs.
fn skills_init(spec: &SandboxAgentSpec, configmap: &str, opts: &Options) -> (Container, Vec<Volume>) {
    let s = spec.skills.clone().unwrap_or_default();
    let mut volumes = vec![
        Volume {
            name: skills::SKILLS_VOLUME.into(),
            empty_dir: Some(EmptyDirVolumeSource::default()),
            ..Default::default()
        },
        Volume {
            name: skills::INIT_CONFIG_VOLUME.into(),
            config_map: Some(ConfigMapVolumeSource {
                name: configmap.into(),
                items: Some(vec![KeyToPath {
                    key: skills::INIT_CONFIG_DATA_KEY.into(),
                    path: skills::INIT_CONFIG_KEY.into(),
                    ..Default::default()
                }]),
                ..Default::default()
            }),
            ..Default::default()
        },
    ];
    let mut mounts = vec![
        VolumeMount { name: skills::SKILLS_VOLUME.into(), mount_path: skills::SKILLS_DIR.into(), ..Default::default() },
        VolumeMount {
            name: skills::INIT_CONFIG_VOLUME.into(),
            mount_path: skills::INIT_CONFIG_DIR.into(),
            read_only: Some(true),
            ..Default::default()
        },
    ];
    let secret = |name: &str, secret: &str| Volume {
        name: name.into(),
        secret: Some(SecretVolumeSource { secret_name: Some(secret.into()), ..Default::default() }),
        ..Default::default()
    };
    if let Some(auth) = &s.git_auth_secret_ref {
        volumes.push(secret(skills::GIT_AUTH_VOLUME, &auth.name));
        mounts.push(VolumeMount {
            name: skills::GIT_AUTH_VOLUME.into(),
            mount_path: skills::GIT_AUTH_DIR.into(),
            read_only: Some(true),
            ..Default::default()
        });
    }
    for p in &s.image_pull_secrets {
        let name = format!("pull-secret-{}", p.name);
        volumes.push(secret(&name, &p.name));
        mounts.push(VolumeMount {
            name,
            mount_path: format!("{}/{}", skills::DOCKER_SECRETS_DIR, p.name),
            read_only: Some(true),
            ..Default::default()
        });
    }
    let init = s.init_container.clone().unwrap_or_default();
    let container = Container {
        name: skills::INIT_CONTAINER_NAME.into(),
        image: Some(opts.skills_init_image.clone()),
        env: (!init.env.is_empty()).then(|| init.env.clone()),
        resources: Some(init.resources.unwrap_or_else(default_resources)),
        volume_mounts: Some(mounts),
        security_context: Some(container_security(None)),
        ..Default::default()
    };
    (container, volumes)
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
