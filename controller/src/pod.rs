//! The sandbox pod: the agent's container with srt on its PATH, its settings and kagent's
//! config files mounted, kagent's variables and ServiceAccount, always unprivileged. Pure:
//! (agent, deployment settings, options) -> PodSpec.

use k8s_openapi::api::core::v1::{
    Capabilities, ConfigMapVolumeSource, Container, ContainerPort, EmptyDirVolumeSource, EnvVar, EnvVarSource,
    HTTPGetAction, ObjectFieldSelector, PodSecurityContext, PodSpec, Probe, ProjectedVolumeSource,
    ResourceRequirements, SeccompProfile, SecurityContext, ServiceAccountTokenProjection, Volume, VolumeMount,
    VolumeProjection,
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
/// The Declarative agent's spec, as JSON, next to the settings.
pub const AGENT_SPEC_KEY: &str = "agent-spec.json";
pub const SETTINGS_VOLUME: &str = "srt-settings";
pub const SRT_BIN_VOLUME: &str = "srt-bin";
/// kagent's projected ServiceAccount token for calls to KAGENT_URL (audience `kagent`, so
/// the API server does not accept it).
pub const TOKEN_VOLUME: &str = "kagent-token";
pub const TOKEN_DIR: &str = "/var/run/secrets/tokens";
/// Where the init container sees the srt volume (the agent sees it at `--srt-bin-dir`).
const INIT_BIN_DIR: &str = "/srt-bin";
pub const CONTAINER_NAME: &str = "kagent";
pub const INIT_CONTAINER_NAME: &str = "install-srt";
pub const AGENT_PORT: i32 = 8080;

/// Inputs of [`pod_spec`] that come from the agent object rather than its spec.
pub struct PodInputs<'a> {
    pub agent_name: &'a str,
    pub settings_configmap: &'a str,
    /// The ServiceAccount the pod runs as: the spec's, or the agent's own.
    pub service_account: String,
    /// Whether that account is the one srt-controller creates for the agent.
    pub own_service_account: bool,
    pub runtime_class_name: Option<String>,
}

pub fn pod_spec(
    spec: &SandboxAgentSpec,
    deployment: &SharedDeploymentSpec,
    inputs: &PodInputs<'_>,
    opts: &Options,
) -> Result<PodSpec, Rejection> {
    check_reserved_names(deployment, opts, spec.agent_type == AgentType::Declarative)?;
    let (image, command, args, working_dir) = match spec.agent_type {
        AgentType::Byo => {
            let d = spec.byo.as_ref().and_then(|b| b.deployment.as_ref());
            let image = d.map(|d| d.image.clone()).unwrap_or_default();
            let command = d.and_then(|d| d.cmd.clone()).map(|c| vec![c]);
            let args = d.map(|d| d.args.clone()).filter(|a| !a.is_empty());
            (image, command, args, d.and_then(|d| d.working_dir.clone()))
        }
        AgentType::Declarative => (
            opts.runtime_image.clone(),
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

    let mut volumes = vec![
        Volume {
            name: SETTINGS_VOLUME.into(),
            config_map: Some(ConfigMapVolumeSource { name: inputs.settings_configmap.into(), ..Default::default() }),
            ..Default::default()
        },
        Volume { name: SRT_BIN_VOLUME.into(), empty_dir: Some(EmptyDirVolumeSource::default()), ..Default::default() },
        Volume {
            name: TOKEN_VOLUME.into(),
            projected: Some(ProjectedVolumeSource {
                sources: Some(vec![VolumeProjection {
                    service_account_token: Some(ServiceAccountTokenProjection {
                        audience: Some("kagent".into()),
                        expiration_seconds: Some(3600),
                        path: "kagent-token".into(),
                        ..Default::default()
                    }),
                    ..Default::default()
                }]),
                ..Default::default()
            }),
            ..Default::default()
        },
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
        env: Some(env(spec, deployment, inputs.agent_name, opts)),
        working_dir,
        resources: deployment.resources.clone(),
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
        init_containers: Some(vec![install_srt]),
        containers,
        volumes: Some(volumes),
        ..Default::default()
    })
}

fn non_empty<T>(v: Vec<T>) -> Option<Vec<T>> {
    (!v.is_empty()).then_some(v)
}

/// Where a Declarative agent's own volumes may be mounted. Its image is the operator's
/// runtime, whose code, interpreter, libraries and their configuration (kagent's `/.kagent`
/// and `/python`, `/usr`, `/etc/ssl/openssl.cnf`, `/etc/ld.so.preload`, ...) decide whether
/// the real srt is called: an allow-list, since every place that could change that cannot
/// be listed.
pub const DECLARATIVE_MOUNT_DIRS: &[&str] = &["/data", "/mnt", "/srv", "/workspace"];

/// The agent's own volumes, mounts and sidecars may not shadow the settings, srt or
/// kagent's token, nor write into them; a Declarative agent's may not replace its runtime's
/// code either.
fn check_reserved_names(d: &SharedDeploymentSpec, opts: &Options, declarative: bool) -> Result<(), Rejection> {
    let invalid = |message: String| Err(Rejection { reason: REASON_INVALID_SPEC, message });
    let reserved_volumes = [SETTINGS_VOLUME, SRT_BIN_VOLUME, TOKEN_VOLUME];
    let srt_dir = clean_path(&opts.srt_bin_dir);
    for v in &d.volumes {
        if reserved_volumes.contains(&v.name.as_str()) {
            return invalid(format!(
                "deployment.volumes: the name \"{}\" is reserved by srt-controller; rename it",
                v.name
            ));
        }
    }
    for m in &d.volume_mounts {
        let path = clean_path(&m.mount_path);
        // at or under: shadows them; above: the volume's own layout (a ConfigMap's symlinks)
        // would decide where they end up
        let near = |r: &&str| is_at_or_under(&path, r) || is_at_or_under(r, &path);
        if [SETTINGS_DIR, srt_dir.as_str(), TOKEN_DIR].iter().any(near) || reserved_volumes.contains(&m.name.as_str()) {
            return invalid(format!(
                "deployment.volumeMounts: \"{}\" at {} would hide or contain srt's settings ({SETTINGS_DIR}), srt \
                 ({srt_dir}) or kagent's token ({TOKEN_DIR}); mount it elsewhere",
                m.name, m.mount_path
            ));
        }
        if declarative && !DECLARATIVE_MOUNT_DIRS.iter().any(|d| is_at_or_under(&path, d)) {
            return invalid(format!(
                "deployment.volumeMounts: \"{}\" at {}: a Declarative agent runs the operator's runtime image, \
                 whose files decide whether the real srt is called, so its volumes go under {}; or use a BYO agent",
                m.name,
                m.mount_path,
                DECLARATIVE_MOUNT_DIRS.join(", ")
            ));
        }
    }
    if declarative {
        // The runtime resolves a mount's path inside the container, following symlinks in
        // volumes mounted before it: one volume under another could carry (or be given by a
        // sidecar) a link that sends the inner mount onto /config or srt's directory.
        let paths: Vec<(String, &str)> =
            d.volume_mounts.iter().map(|m| (clean_path(&m.mount_path), m.mount_path.as_str())).collect();
        for (i, (outer, outer_raw)) in paths.iter().enumerate() {
            if let Some((_, inner_raw)) =
                paths.iter().enumerate().find(|(j, (inner, _))| *j != i && is_at_or_under(inner, outer)).map(|(_, p)| p)
            {
                return invalid(format!(
                    "deployment.volumeMounts: {inner_raw} is inside the mount at {outer_raw}; a Declarative agent's \
                     volumes may not be nested (a link in the outer one could send the inner one anywhere); mount them \
                     side by side"
                ));
            }
        }
    }
    for (i, c) in d.extra_containers.iter().enumerate() {
        if c.name == CONTAINER_NAME || c.name == INIT_CONTAINER_NAME {
            return invalid(format!(
                "deployment.extraContainers: the name \"{}\" is the agent's own container's; rename it",
                c.name
            ));
        }
        // a sidecar that shared srt's volume could put another program where srt is
        if let Some(m) = c.volume_mounts.iter().flatten().find(|m| reserved_volumes.contains(&m.name.as_str())) {
            return invalid(format!(
                "deployment.extraContainers[{i}].volumeMounts: \"{}\" is srt-controller's volume (srt, its \
                 settings or kagent's token); sidecars may not mount it",
                m.name
            ));
        }
    }
    Ok(())
}

/// A mount path as the container runtime resolves it: `.`, `..` and repeated or trailing
/// slashes removed, always absolute.
fn clean_path(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            p => parts.push(p),
        }
    }
    format!("/{}", parts.join("/"))
}

/// Both cleaned ([`clean_path`]).
fn is_at_or_under(path: &str, dir: &str) -> bool {
    dir == "/" || path == dir || path.strip_prefix(dir).is_some_and(|rest| rest.starts_with('/'))
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

/// kagent's variables (KAGENT_URL included), the settings path under both names, the pod's
/// ServiceAccount, then the agent's own variables (which may override kagent's). `PATH` is
/// left to the image, which already looks in `--srt-bin-dir`; a `PATH` the spec sets replaces
/// the image's, so it gets that directory in front.
fn env(spec: &SandboxAgentSpec, d: &SharedDeploymentSpec, agent_name: &str, opts: &Options) -> Vec<EnvVar> {
    let settings_path = format!("{SETTINGS_DIR}/{SETTINGS_KEY}");
    let mut out = vec![
        field("KAGENT_NAMESPACE", "metadata.namespace"),
        plain("KAGENT_NAME", agent_name),
        plain("KAGENT_URL", opts.kagent_url.clone()),
        plain("KAGENT_SRT_SETTINGS_PATH", settings_path.clone()),
        plain("SRT_SETTINGS_PATH", settings_path),
        field("SRT_SERVICE_ACCOUNT_NAME", "spec.serviceAccountName"),
    ];
    if spec.agent_type == AgentType::Declarative {
        out.push(plain("SRT_AGENT_SPEC_PATH", format!("{SETTINGS_DIR}/{AGENT_SPEC_KEY}")));
    }
    for e in &d.env {
        let mut e = e.clone();
        if e.name == "PATH" {
            if let Some(v) = e.value.as_mut() {
                *v = format!("{}:{v}", opts.srt_bin_dir);
            }
        }
        match out.iter_mut().find(|o| o.name == e.name) {
            Some(existing) => *existing = e,
            None => out.push(e),
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(v: serde_json::Value) -> Result<(), Rejection> {
        check_reserved_names(&serde_json::from_value(v).unwrap(), &Options::default(), false)
    }

    #[test]
    fn paths_are_cleaned_like_the_runtime_does() {
        assert_eq!(clean_path("//config/./x/../"), "/config");
        assert_eq!(clean_path("/usr/local/sbin/./srt"), "/usr/local/sbin/srt");
        assert_eq!(clean_path("config"), "/config");
        assert_eq!(clean_path("/../.."), "/");
        assert!(is_at_or_under("/config/a", "/config") && is_at_or_under("/config", "/config"));
        assert!(!is_at_or_under("/configs", "/config") && !is_at_or_under("/", "/config"));
        assert!(is_at_or_under("/config", "/"));
    }

    #[test]
    fn no_spelling_of_a_reserved_path_and_nothing_under_it_may_be_mounted() {
        for path in [
            "/config",
            "//config",
            "/config/.",
            "/config/../config",
            "/config/srt-settings.json",
            "/usr/local/sbin/srt",
            "/usr/local/sbin/./",
            "/var/run/secrets/tokens/kagent-token",
        ] {
            let r = check(json!({"volumes": [{"name": "fake", "emptyDir": {}}],
                "volumeMounts": [{"name": "fake", "mountPath": path, "subPath": "x"}]}))
            .expect_err(path);
            assert_eq!(r.reason, REASON_INVALID_SPEC, "{path}");
            assert!(r.message.contains(path), "{path}: {}", r.message);
        }
        // above them too: a ConfigMap at /usr/local with an item sbin/srt makes sbin a symlink
        for path in ["/usr/local", "/usr", "/var/run/secrets", "/var", "/"] {
            let r = check(json!({"volumes": [{"name": "d", "configMap": {"name": "c"}}],
                "volumeMounts": [{"name": "d", "mountPath": path}]}))
            .expect_err(path);
            assert!(r.message.contains("would hide or contain"), "{path}: {}", r.message);
        }
        for path in ["/configs", "/data", "/usr/local/bin", "/var/run/secrets/other", "/opt/x"] {
            assert_eq!(
                check(
                    json!({"volumes": [{"name": "d", "emptyDir": {}}], "volumeMounts": [{"name": "d", "mountPath": path}]})
                ),
                Ok(()),
                "{path}"
            );
        }
    }

    #[test]
    fn a_declarative_agents_volumes_go_only_under_the_data_directories() {
        let mount = |path: &str| -> SharedDeploymentSpec {
            serde_json::from_value(json!({"volumes": [{"name": "d", "emptyDir": {}}],
                "volumeMounts": [{"name": "d", "mountPath": path, "subPath": "x"}]}))
            .unwrap()
        };
        for path in [
            "/.kagent/.venv/bin/srt",
            "/python/cpython-3.13/lib/python3.13/sitecustomize.py",
            "/etc/ssl/openssl.cnf",
            "/etc/ld.so.preload",
            "/usr/local/bin",
            "/app/x",
            "/tmp",
            "/home/agent",
            "/data/../etc",
            "/database",
        ] {
            let r = check_reserved_names(&mount(path), &Options::default(), true).expect_err(path);
            assert!(r.message.contains("its volumes go under /data, /mnt, /srv, /workspace"), "{path}: {}", r.message);
            assert_eq!(check_reserved_names(&mount(path), &Options::default(), false), Ok(()), "BYO: {path}");
        }
        for path in ["/data", "/data/skills", "/mnt/x", "/srv", "/workspace/repo"] {
            assert_eq!(check_reserved_names(&mount(path), &Options::default(), true), Ok(()), "{path}");
        }
    }

    #[test]
    fn a_declarative_agents_volumes_are_not_nested() {
        let mounts = |paths: &[&str]| -> SharedDeploymentSpec {
            let volumes: Vec<_> = (0..paths.len()).map(|i| json!({"name": format!("v{i}"), "emptyDir": {}})).collect();
            let mounts: Vec<_> =
                paths.iter().enumerate().map(|(i, p)| json!({"name": format!("v{i}"), "mountPath": p})).collect();
            serde_json::from_value(json!({"volumes": volumes, "volumeMounts": mounts})).unwrap()
        };
        let r = check_reserved_names(&mounts(&["/data", "/data/cfg"]), &Options::default(), true).unwrap_err();
        assert!(r.message.contains("/data/cfg is inside the mount at /data"), "{}", r.message);
        let r = check_reserved_names(&mounts(&["/mnt/a/b/bin", "/mnt/./a"]), &Options::default(), true).unwrap_err();
        assert!(r.message.contains("may not be nested"), "{}", r.message);
        assert_eq!(check_reserved_names(&mounts(&["/data/a", "/data/ab", "/mnt"]), &Options::default(), true), Ok(()));
        assert_eq!(check_reserved_names(&mounts(&["/data", "/data/cfg"]), &Options::default(), false), Ok(()), "BYO");
    }

    #[test]
    fn sidecars_may_not_mount_srt_controllers_volumes() {
        for volume in [SRT_BIN_VOLUME, SETTINGS_VOLUME, TOKEN_VOLUME] {
            let r = check(json!({"extraContainers": [{"name": "ok", "image": "x"},
                {"name": "helper", "image": "busybox", "volumeMounts": [{"name": volume, "mountPath": "/b"}]}]}))
            .expect_err(volume);
            assert!(r.message.contains("extraContainers[1].volumeMounts"), "{}", r.message);
        }
    }
}
