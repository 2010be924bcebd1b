//! Where an agent's own volumes may go: never over srt, its settings or kagent's token (in
//! any spelling of their paths), sidecars never on srt-controller's volumes, and for a
//! Declarative agent, whose image is the operator's runtime, only side by side under a few
//! data directories. Pure: (deployment spec, options) -> accepted or why not.

use crate::crd::SharedDeploymentSpec;
use crate::options::Options;
use crate::pod_layout::{
    CONTAINER_NAME, INIT_CONTAINER_NAME, SETTINGS_DIR, SETTINGS_VOLUME, SRT_BIN_VOLUME, TOKEN_DIR, TOKEN_VOLUME,
};
use crate::rejection::{Rejection, REASON_INVALID_SPEC};

/// Where a Declarative agent's own volumes may be mounted. Its image is the operator's
/// runtime, whose code, interpreter, libraries and their configuration (kagent's `/.kagent`
/// and `/python`, `/usr`, `/etc/ssl/openssl.cnf`, `/etc/ld.so.preload`, ...) decide whether
/// the real srt is called: an allow-list, since every place that could change that cannot
/// be listed.
pub const DECLARATIVE_MOUNT_DIRS: &[&str] = &["/data", "/mnt", "/srv", "/workspace"];

/// The agent's own volumes, mounts and sidecars may not shadow the settings, srt or
/// kagent's token, nor write into them; a Declarative agent's may not replace its runtime's
/// code either.
pub fn check(d: &SharedDeploymentSpec, opts: &Options, declarative: bool) -> Result<(), Rejection> {
    let invalid = |message: String| Err(Rejection { reason: REASON_INVALID_SPEC, message });
    // srt-controller's volumes, kagent's skills and skills-init volumes and the model's
    // (Google credentials, a GDCH token, TLS CAs, image pull Secrets of skills).
    let reserved_volumes = [
        SETTINGS_VOLUME,
        SRT_BIN_VOLUME,
        TOKEN_VOLUME,
        crate::skills::SKILLS_VOLUME,
        crate::skills::INIT_CONFIG_VOLUME,
        crate::skills::GIT_AUTH_VOLUME,
        "google-creds",
        "gdch-creds",
    ];
    let reserved_prefix = |n: &str| n.starts_with("tls-ca-") || n.starts_with("pull-secret-");
    let srt_dir = clean_path(&opts.srt_bin_dir);
    for v in &d.volumes {
        if reserved_volumes.contains(&v.name.as_str()) || reserved_prefix(&v.name) {
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
        let skills = crate::skills::SKILLS_DIR;
        if [SETTINGS_DIR, srt_dir.as_str(), TOKEN_DIR, skills].iter().any(near)
            || reserved_volumes.contains(&m.name.as_str())
            || reserved_prefix(&m.name)
        {
            return invalid(format!(
                "deployment.volumeMounts: \"{}\" at {} would hide or contain srt's settings ({SETTINGS_DIR}), srt \
                 ({srt_dir}), kagent's token ({TOKEN_DIR}) or skills ({skills}); mount it elsewhere",
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
pub(crate) fn clean_path(path: &str) -> String {
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
pub(crate) fn is_at_or_under(path: &str, dir: &str) -> bool {
    dir == "/" || path == dir || path.strip_prefix(dir).is_some_and(|rest| rest.starts_with('/'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(v: serde_json::Value) -> Result<(), Rejection> {
        super::check(&serde_json::from_value(v).unwrap(), &Options::default(), false)
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
            let r = super::check(&mount(path), &Options::default(), true).expect_err(path);
            assert!(r.message.contains("its volumes go under /data, /mnt, /srv, /workspace"), "{path}: {}", r.message);
            assert_eq!(super::check(&mount(path), &Options::default(), false), Ok(()), "BYO: {path}");
        }
        for path in ["/data", "/data/skills", "/mnt/x", "/srv", "/workspace/repo"] {
            assert_eq!(super::check(&mount(path), &Options::default(), true), Ok(()), "{path}");
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
        let r = super::check(&mounts(&["/data", "/data/cfg"]), &Options::default(), true).unwrap_err();
        assert!(r.message.contains("/data/cfg is inside the mount at /data"), "{}", r.message);
        let r = super::check(&mounts(&["/mnt/a/b/bin", "/mnt/./a"]), &Options::default(), true).unwrap_err();
        assert!(r.message.contains("may not be nested"), "{}", r.message);
        assert_eq!(super::check(&mounts(&["/data/a", "/data/ab", "/mnt"]), &Options::default(), true), Ok(()));
        assert_eq!(super::check(&mounts(&["/data", "/data/cfg"]), &Options::default(), false), Ok(()), "BYO");
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
