//! The floor every sandbox pod keeps, checked as an allow-list before anything is written:
//! srt confines commands without privileges, so the pod runs as non-root with no
//! capabilities, no privilege escalation, the `RuntimeDefault` seccomp profile and within
//! the restricted Pod Security Standard. A spec may tighten this, never loosen it; asking
//! for less is refused with the field named (not silently weakened).

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::{
    AppArmorProfile, Container, EnvVar, PodSecurityContext, SELinuxOptions, SeccompProfile, SecurityContext, Volume,
};

use crate::crd::SharedDeploymentSpec;
use crate::rejection::{Rejection, REASON_INVALID_SPEC, REASON_UNSAFE_SECURITY_CONTEXT};

/// SELinux types the baseline Pod Security Standard allows (`spc_t` and the like are
/// unconfined).
const SELINUX_TYPES: &[&str] = &["container_t", "container_init_t", "container_kvm_t", "container_engine_t"];

/// Sysctls the kubelet counts as safe: namespaced to the pod, no effect on the node.
const SAFE_SYSCTLS: &[&str] = &[
    "kernel.shm_rmid_forced",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.ip_unprivileged_port_start",
    "net.ipv4.tcp_syncookies",
    "net.ipv4.ping_group_range",
    "net.ipv4.ip_local_reserved_ports",
    "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
];

/// Pod annotations older kubelets read as security settings.
const APPARMOR_ANNOTATION: &str = "container.apparmor.security.beta.kubernetes.io/";
const SECCOMP_POD_ANNOTATION: &str = "seccomp.security.alpha.kubernetes.io/pod";
const SECCOMP_CONTAINER_ANNOTATION: &str = "container.seccomp.security.alpha.kubernetes.io/";

const FLOOR: &str = "sandbox pods always run as non-root with no capabilities, no privilege escalation, the \
                     RuntimeDefault seccomp profile and within the restricted Pod Security Standard";

/// One thing a spec asked for that the floor does not allow.
struct Problem {
    reason: &'static str,
    /// The field and value, under `deployment.`.
    at: String,
    why: &'static str,
}

fn unsafe_field(at: String) -> Problem {
    Problem { reason: REASON_UNSAFE_SECURITY_CONTEXT, at, why: FLOOR }
}

/// Checks a deployment's security-relevant fields against the floor. `operator_image`: a
/// Declarative agent, whose image (kagent's runtime) the operator chose, so the spec may not
/// change which code it runs either.
pub fn check(d: &SharedDeploymentSpec, operator_image: bool) -> Result<(), Rejection> {
    let problem = container(d.security_context.as_ref())
        .map(|p| unsafe_field(format!("securityContext.{p}")))
        .or_else(|| pod(d.pod_security_context.as_ref()).map(|p| unsafe_field(format!("podSecurityContext.{p}"))))
        .or_else(|| {
            d.extra_containers
                .iter()
                .enumerate()
                .find_map(|(i, c)| sidecar(c).map(|p| unsafe_field(format!("extraContainers[{i}].{p}"))))
        })
        .or_else(|| d.volumes.iter().enumerate().find_map(|(i, v)| volume(v).map(|p| (i, p))).map(volume_problem))
        .or_else(|| annotations(&d.annotations).map(|p| unsafe_field(format!("annotations.{p}"))))
        .or_else(|| labels(&d.labels).map(|p| unsafe_field(format!("labels.{p}"))))
        .or_else(|| d.env.iter().enumerate().find_map(|(i, e)| env(i, e, operator_image)));
    match problem {
        None => Ok(()),
        Some(p) => Err(Rejection {
            reason: p.reason,
            message: format!("deployment.{} is refused: {}; remove it", p.at, p.why),
        }),
    }
}

/// A container's own settings: the field and value that break the floor, if any.
fn container(sc: Option<&SecurityContext>) -> Option<String> {
    let sc = sc?;
    if sc.privileged == Some(true) {
        return Some("privileged: true".into());
    }
    if sc.allow_privilege_escalation == Some(true) {
        return Some("allowPrivilegeEscalation: true".into());
    }
    if sc.capabilities.as_ref().and_then(|c| c.add.as_ref()).is_some_and(|a| !a.is_empty()) {
        return Some("capabilities.add".into());
    }
    if sc.run_as_non_root == Some(false) {
        return Some("runAsNonRoot: false".into());
    }
    if sc.run_as_user == Some(0) {
        return Some("runAsUser: 0".into());
    }
    if let Some(m) = sc.proc_mount.as_deref().filter(|m| *m != "Default") {
        return Some(format!("procMount: {m}"));
    }
    if sc.windows_options.as_ref().and_then(|w| w.host_process) == Some(true) {
        return Some("windowsOptions.hostProcess: true".into());
    }
    profiles(sc.seccomp_profile.as_ref(), sc.app_armor_profile.as_ref(), sc.se_linux_options.as_ref())
}

/// The pod-wide settings.
fn pod(sc: Option<&PodSecurityContext>) -> Option<String> {
    let sc = sc?;
    if sc.run_as_non_root == Some(false) {
        return Some("runAsNonRoot: false".into());
    }
    if sc.run_as_user == Some(0) {
        return Some("runAsUser: 0".into());
    }
    if sc.windows_options.as_ref().and_then(|w| w.host_process) == Some(true) {
        return Some("windowsOptions.hostProcess: true".into());
    }
    if let Some(s) = sc.sysctls.iter().flatten().find(|s| !SAFE_SYSCTLS.contains(&s.name.as_str())) {
        return Some(format!("sysctls: {} (not one of the kubelet's safe sysctls)", s.name));
    }
    profiles(sc.seccomp_profile.as_ref(), sc.app_armor_profile.as_ref(), sc.se_linux_options.as_ref())
}

/// seccomp only `RuntimeDefault` (a Localhost profile cannot be checked from here);
/// AppArmor `RuntimeDefault` or `Localhost`; SELinux only the container types.
fn profiles(
    seccomp: Option<&SeccompProfile>,
    apparmor: Option<&AppArmorProfile>,
    selinux: Option<&SELinuxOptions>,
) -> Option<String> {
    if let Some(p) = seccomp.filter(|p| p.type_ != "RuntimeDefault") {
        return Some(format!("seccompProfile.type: {}", p.type_));
    }
    if let Some(p) = apparmor.filter(|p| p.type_ != "RuntimeDefault" && p.type_ != "Localhost") {
        return Some(format!("appArmorProfile.type: {}", p.type_));
    }
    let selinux = selinux?;
    let set = |v: &Option<String>| v.as_deref().is_some_and(|v| !v.is_empty());
    if set(&selinux.user) {
        return Some("seLinuxOptions.user".into());
    }
    if set(&selinux.role) {
        return Some("seLinuxOptions.role".into());
    }
    match selinux.type_.as_deref() {
        Some(t) if !t.is_empty() && !SELINUX_TYPES.contains(&t) => Some(format!("seLinuxOptions.type: {t}")),
        _ => None,
    }
}

/// A sidecar: its security context and no host ports.
fn sidecar(c: &Container) -> Option<String> {
    if let Some(p) = container(c.security_context.as_ref()) {
        return Some(format!("securityContext.{p}"));
    }
    c.ports
        .iter()
        .flatten()
        .enumerate()
        .find_map(|(j, p)| p.host_port.filter(|h| *h != 0).map(|h| format!("ports[{j}].hostPort: {h}")))
}

/// The volume types the restricted Pod Security Standard allows: none of them runs code on
/// the node (`gitRepo`, `flexVolume`) or reaches its files (`hostPath`).
const VOLUME_TYPES: &[&str] =
    &["configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "persistentVolumeClaim", "projected", "secret"];

/// The volume's type if the restricted standard does not allow it.
fn volume(v: &Volume) -> Option<String> {
    // Judged on the serialised form, so a type a newer API adds is refused, not overlooked.
    let json = serde_json::to_value(v).ok()?;
    let fields = json.as_object()?;
    fields.keys().find(|k| k.as_str() != "name" && !VOLUME_TYPES.contains(&k.as_str())).cloned()
}

fn volume_problem((i, kind): (usize, String)) -> Problem {
    Problem {
        reason: REASON_UNSAFE_SECURITY_CONTEXT,
        at: format!("volumes[{i}].{kind}"),
        why: "sandbox pods take only the restricted Pod Security Standard's volume types (configMap, csi, \
              downwardAPI, emptyDir, ephemeral, persistentVolumeClaim, projected, secret): others reach the \
              node's files or run code there; use a persistentVolumeClaim for network storage",
    }
}

/// Annotation prefixes that container runtimes (CRI-O, Kata, gVisor) or agent-sandbox read
/// as settings of the pod: devices, kernel parameters, seccomp profiles, which pod is the
/// Sandbox's. None is the agent's to set.
const RUNTIME_ANNOTATION_PREFIXES: &[&str] = &[
    "agents.x-k8s.io/",
    "io.kubernetes.cri-o.",
    "io.katacontainers.",
    "dev.gvisor.",
    "seccomp-profile.kubernetes.cri-o.io/",
];

/// AppArmor and seccomp as the annotations older kubelets still read, and the runtimes'.
fn annotations(a: &BTreeMap<String, String>) -> Option<String> {
    a.iter()
        .find(|(k, v)| {
            let v = v.as_str();
            (k.starts_with(APPARMOR_ANNOTATION) && v != "runtime/default" && !v.starts_with("localhost/"))
                || ((k.as_str() == SECCOMP_POD_ANNOTATION || k.starts_with(SECCOMP_CONTAINER_ANNOTATION))
                    && v != "runtime/default"
                    && v != "docker/default")
                || RUNTIME_ANNOTATION_PREFIXES.iter().any(|p| k.starts_with(p))
        })
        .map(|(k, v)| format!("{k}: {v}"))
}

/// agent-sandbox labels the pods it makes (`agents.x-k8s.io/sandbox-name-hash`) and
/// policies select on them: not the agent's to set.
fn labels(l: &BTreeMap<String, String>) -> Option<String> {
    l.keys().find(|k| k.starts_with("agents.x-k8s.io/")).cloned()
}

/// Variables that make a program load other code or look for programs elsewhere: the
/// dynamic loader's, the interpreters' and kagent's runtime's own (`BASH_VENV_PATH` goes in
/// front of the PATH it runs `srt` with).
const CODE_LOADING_PREFIXES: &[&str] = &["LD_", "PYTHON", "NODE_", "PERL5", "RUBY", "OPENSSL_", "UV_"];
const CODE_LOADING_ENV: &[&str] = &[
    "BASH_ENV",
    "ENV",
    "BASH_VENV_PATH",
    "GCONV_PATH",
    "GLIBC_TUNABLES",
    "VIRTUAL_ENV",
    // files the runtime's cloud SDKs read that can name a program to run for credentials
    // (botocore's credential_process, google-auth's executable-sourced credentials)
    "HOME",
    "XDG_CONFIG_HOME",
    "AWS_CONFIG_FILE",
    "AWS_SHARED_CREDENTIALS_FILE",
    "GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES",
];
/// kagent's runtimes read `KAGENT_*` for their own configuration (where the config and srt
/// settings are, `KAGENT_BASH_VENV_PATH`, ...): only the ones that say where the agent is
/// may be set by the spec.
const KAGENT_ENV_ALLOWED: &[&str] = &["KAGENT_URL", "KAGENT_NAME", "KAGENT_NAMESPACE"];

/// The agent container's variables. A BYO image is the author's own, so only `PATH` is
/// checked there: srt-controller puts srt's directory in front of it, which needs a plain
/// value. A Declarative agent runs the operator's image, whose runtime must call the real
/// srt: its `PATH` is the image's, and nothing may load other code into it (or into srt).
fn env(i: usize, e: &EnvVar, operator_image: bool) -> Option<Problem> {
    let name = e.name.as_str();
    if operator_image {
        let loads_code = CODE_LOADING_PREFIXES.iter().any(|p| name.starts_with(p))
            || CODE_LOADING_ENV.contains(&name)
            || (name.starts_with("KAGENT_") && !KAGENT_ENV_ALLOWED.contains(&name));
        if loads_code || name == "PATH" {
            return Some(Problem {
                reason: REASON_UNSAFE_SECURITY_CONTEXT,
                at: format!("env[{i}] {name}"),
                why: "a Declarative agent runs the operator's runtime image, which must run its own code and the \
                      real srt: its PATH is the image's, and variables that load other code or move its \
                      configuration (LD_*, PYTHON*, NODE_*, OPENSSL_*, UV_*, BASH_ENV, BASH_VENV_PATH, KAGENT_* but \
                      KAGENT_URL, ...) are not taken; use a BYO agent to change the image",
            });
        }
    }
    if name == "PATH" && (e.value_from.is_some() || e.value.as_deref().unwrap_or("").is_empty()) {
        return Some(Problem {
            reason: REASON_INVALID_SPEC,
            at: format!("env[{i}] PATH without a plain value"),
            why: "srt-controller puts srt's directory in front of PATH, which needs a plain, non-empty value",
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deployment(v: serde_json::Value) -> SharedDeploymentSpec {
        serde_json::from_value(v).unwrap()
    }

    fn refused(v: serde_json::Value) -> Rejection {
        check(&deployment(v.clone()), false).expect_err(&v.to_string())
    }

    #[test]
    fn loosening_security_settings_is_refused_with_the_field_named() {
        for (spec, field) in [
            (json!({"securityContext": {"procMount": "Unmasked"}}), "securityContext.procMount: Unmasked"),
            (
                json!({"securityContext": {"seccompProfile": {"type": "Localhost", "localhostProfile": "u.json"}}}),
                "securityContext.seccompProfile.type: Localhost",
            ),
            (
                json!({"securityContext": {"appArmorProfile": {"type": "Unconfined"}}}),
                "appArmorProfile.type: Unconfined",
            ),
            (json!({"podSecurityContext": {"appArmorProfile": {"type": "Unconfined"}}}), "podSecurityContext.appArmor"),
            (json!({"securityContext": {"seLinuxOptions": {"type": "spc_t"}}}), "seLinuxOptions.type: spc_t"),
            (json!({"podSecurityContext": {"seLinuxOptions": {"user": "system_u"}}}), "seLinuxOptions.user"),
            (json!({"podSecurityContext": {"seccompProfile": {"type": "Unconfined"}}}), "seccompProfile.type"),
            (json!({"podSecurityContext": {"sysctls": [{"name": "kernel.msgmax", "value": "1"}]}}), "kernel.msgmax"),
            (json!({"securityContext": {"windowsOptions": {"hostProcess": true}}}), "windowsOptions.hostProcess: true"),
            (
                json!({"extraContainers": [{"name": "ssh", "image": "x", "ports": [{"containerPort": 22, "hostPort": 22}]}]}),
                "extraContainers[0].ports[0].hostPort: 22",
            ),
            (
                json!({"extraContainers": [{"name": "s", "image": "x", "securityContext": {"seccompProfile": {"type": "Unconfined"}}}]}),
                "extraContainers[0].securityContext.seccompProfile",
            ),
            (json!({"volumes": [{"name": "root", "hostPath": {"path": "/"}}]}), "volumes[0].hostPath"),
            (
                json!({"annotations": {"container.apparmor.security.beta.kubernetes.io/kagent": "unconfined"}}),
                "apparmor.security.beta.kubernetes.io/kagent: unconfined",
            ),
            (json!({"annotations": {"seccomp.security.alpha.kubernetes.io/pod": "unconfined"}}), "pod: unconfined"),
            (
                json!({"annotations": {"io.kubernetes.cri-o.Devices": "/dev/kvm"}}),
                "annotations.io.kubernetes.cri-o.Devices",
            ),
            (json!({"annotations": {"agents.x-k8s.io/pod-name": "other"}}), "annotations.agents.x-k8s.io/pod-name"),
            (json!({"labels": {"agents.x-k8s.io/sandbox-name-hash": "x"}}), "labels.agents.x-k8s.io/sandbox-name-hash"),
        ] {
            let r = refused(spec.clone());
            assert_eq!(r.reason, REASON_UNSAFE_SECURITY_CONTEXT, "{spec}");
            assert!(r.message.contains(field), "{spec}: {}", r.message);
        }
    }

    #[test]
    fn the_operators_runtime_takes_no_code_loading_variables_and_no_path() {
        for name in [
            "LD_PRELOAD",
            "LD_AUDIT",
            "PYTHONPATH",
            "PYTHONSTARTUP",
            "PYTHONHOME",
            "NODE_OPTIONS",
            "BASH_ENV",
            "ENV",
            "BASH_VENV_PATH",
            "GCONV_PATH",
            "GLIBC_TUNABLES",
            "PERL5OPT",
            "RUBYOPT",
            "PATH",
            "OPENSSL_CONF",
            "OPENSSL_MODULES",
            "UV_PYTHON",
            "VIRTUAL_ENV",
            "KAGENT_BASH_VENV_PATH",
            "KAGENT_SRT_SETTINGS_JSON",
            "KAGENT_CONFIG_DIR",
            "HOME",
            "AWS_CONFIG_FILE",
            "GOOGLE_EXTERNAL_ACCOUNT_ALLOW_EXECUTABLES",
        ] {
            let d = deployment(json!({"env": [{"name": "A", "value": "1"}, {"name": name, "value": "/x"}]}));
            let r = check(&d, true).expect_err(name);
            assert_eq!(r.reason, REASON_UNSAFE_SECURITY_CONTEXT, "{name}");
            assert!(r.message.contains(&format!("env[1] {name}")), "{}", r.message);
            // a BYO image is its author's: only PATH's form is checked there
            assert_eq!(check(&d, false), Ok(()), "{name}");
        }
        let ok = deployment(
            json!({"env": [{"name": "OPENAI_API_KEY", "value": "k"}, {"name": "XLD_PRELOAD", "value": "x"},
                {"name": "KAGENT_URL", "value": "http://kagent.example:8083"}, {"name": "SSL_CERT_FILE", "value": "/data/ca.pem"}]}),
        );
        assert_eq!(check(&ok, true), Ok(()));
    }

    #[test]
    fn path_needs_a_plain_value_to_be_put_behind_srt() {
        for e in [
            json!({"name": "PATH", "valueFrom": {"configMapKeyRef": {"name": "c", "key": "k"}}}),
            json!({"name": "PATH"}),
            json!({"name": "PATH", "value": ""}),
        ] {
            let r = refused(json!({ "env": [e] }));
            assert_eq!(r.reason, REASON_INVALID_SPEC, "{e}");
            assert!(r.message.contains("PATH without a plain value"), "{}", r.message);
        }
    }

    #[test]
    fn only_the_restricted_volume_types_are_taken() {
        for (v, kind) in [
            (json!({"name": "v", "gitRepo": {"repository": "https://x"}}), "gitRepo"),
            (json!({"name": "v", "flexVolume": {"driver": "x"}}), "flexVolume"),
            (json!({"name": "v", "nfs": {"server": "s", "path": "/"}}), "nfs"),
            (json!({"name": "v", "iscsi": {"targetPortal": "t", "iqn": "i", "lun": 0}}), "iscsi"),
        ] {
            let r = refused(json!({ "volumes": [{"name": "ok", "emptyDir": {}}, v] }));
            assert!(r.message.contains(&format!("volumes[1].{kind}")), "{}", r.message);
        }
        let ok = json!({"volumes": [{"name": "a", "configMap": {"name": "c"}}, {"name": "b", "secret": {"secretName": "s"}},
            {"name": "c", "persistentVolumeClaim": {"claimName": "p"}}, {"name": "d", "projected": {"sources": []}},
            {"name": "e", "csi": {"driver": "d"}}, {"name": "f", "downwardAPI": {}}, {"name": "g", "ephemeral": {}}]});
        assert_eq!(check(&deployment(ok), false), Ok(()));
    }

    #[test]
    fn tightening_and_the_allowed_values_pass() {
        let ok = deployment(json!({
            "securityContext": {"readOnlyRootFilesystem": true, "procMount": "Default",
                "seccompProfile": {"type": "RuntimeDefault"}, "appArmorProfile": {"type": "Localhost", "localhostProfile": "p"},
                "seLinuxOptions": {"type": "container_t", "level": "s0:c1,c2"}, "capabilities": {"drop": ["ALL"]}},
            "podSecurityContext": {"runAsUser": 2000, "runAsGroup": 0, "fsGroup": 2000,
                "sysctls": [{"name": "net.ipv4.ping_group_range", "value": "0 0"}]},
            "extraContainers": [{"name": "s", "image": "x", "ports": [{"containerPort": 9000}]}],
            "volumes": [{"name": "data", "emptyDir": {}}],
            "annotations": {"container.apparmor.security.beta.kubernetes.io/kagent": "runtime/default", "team": "a"},
            "env": [{"name": "PATH", "value": "/opt/bin:/usr/bin"}, {"name": "XLD_PRELOAD", "value": "x"}]
        }));
        assert_eq!(check(&ok, false), Ok(()));
    }
}
