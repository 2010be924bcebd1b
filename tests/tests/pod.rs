//! The controller and the launcher together, in a stand-in for a restricted pod: the
//! settings and environment come from `srt-controller render`, and `srt` runs as uid 1001
//! with no capabilities and a seccomp filter that refuses user namespaces (what a
//! `RuntimeDefault` container gets). srt must fall back to landlock mode and still enforce
//! the agent's allow-list and filesystem rules.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;
use srt_tests::{workspace_binary, TlsOrigin};

const POD_UID: u32 = 1001;

fn is_root() -> bool {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() == 0 }
}

struct Pod {
    root: PathBuf,
    env: Vec<(String, String)>,
    tls: TlsOrigin,
}

impl Drop for Pod {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn mkdir(p: &Path, mode: u32) {
    std::fs::create_dir_all(p).unwrap();
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// Lays out what the rendered pod would mount: `/config` (the ConfigMap), the init
/// container's copy of srt (in a directory the image's PATH already holds) and a working
/// directory, all under a temp root.
fn pod(tag: &str) -> Pod {
    let root = std::env::temp_dir().join(format!("srt-pod-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    mkdir(&root, 0o755);
    let agent = root.join("agent.yaml");
    std::fs::write(
        &agent,
        "apiVersion: kagent.dev/v1alpha2\nkind: SandboxAgent\nmetadata: {name: curl-agent, namespace: kagent}\n\
         spec:\n  type: BYO\n  sandbox: {network: {allowedDomains: [api.example.test]}}\n  \
         byo: {deployment: {image: example.test/agent:1}}\n",
    )
    .unwrap();
    let out = Command::new(workspace_binary("srt-controller")).args(["render", "-f"]).arg(&agent).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let docs: Vec<Value> = yaml_serde::Deserializer::from_str(&String::from_utf8(out.stdout).unwrap())
        .map(|d| serde::Deserialize::deserialize(d).unwrap())
        .filter(|v: &Value| !v.is_null())
        .collect();
    let settings = docs[0]["data"]["srt-settings.json"].as_str().unwrap();
    let sandbox = docs.iter().find(|d| d["kind"] == "Sandbox").unwrap();
    let container = &sandbox["spec"]["podTemplate"]["spec"]["containers"][0];
    let mounts = container["volumeMounts"].as_array().unwrap();
    let mount_of = |volume: &str| {
        let m = mounts.iter().find(|m| m["name"] == volume).unwrap();
        root.join(m["mountPath"].as_str().unwrap().trim_start_matches('/'))
    };

    let config = mount_of("srt-settings");
    mkdir(&config, 0o755);
    std::fs::write(config.join("srt-settings.json"), settings).unwrap();
    let bin_dir = mounts.iter().find(|m| m["name"] == "srt-bin").unwrap()["mountPath"].as_str().unwrap().to_string();
    let bin = mount_of("srt-bin");
    mkdir(&bin, 0o755);
    std::fs::copy(workspace_binary("srt"), bin.join("srt")).unwrap();
    let work = root.join("work");
    mkdir(&work, 0o755);
    if is_root() {
        std::os::unix::fs::chown(&work, Some(POD_UID), Some(POD_UID)).unwrap();
    }

    // The container's environment, with the pod's absolute paths moved under the temp root.
    let rebase = |v: &str| {
        v.split(':')
            .map(|p| {
                if p.starts_with("/config") || p == bin_dir {
                    root.join(&p[1..]).display().to_string()
                } else {
                    p.to_string()
                }
            })
            .collect::<Vec<_>>()
            .join(":")
    };
    let mut env: Vec<(String, String)> = container["env"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| Some((e["name"].as_str()?.to_string(), rebase(e["value"].as_str()?))))
        .collect();
    // The rendered pod leaves PATH to the image; a Debian-like image's default holds srt's
    // directory.
    if !env.iter().any(|(k, _)| k == "PATH") {
        env.push(("PATH".into(), rebase("/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")));
    }
    let tls = TlsOrigin::start(&root, &["api.example.test", "other.example.test"]);
    std::fs::set_permissions(&tls.ca, std::fs::Permissions::from_mode(0o644)).unwrap();
    Pod { root, env, tls }
}

/// Runs `args` (looked up on the pod's PATH) under restricted.py.
fn run_in_pod(p: &Pod, args: &[&str]) -> (i32, String, String) {
    run_in_pod_with(p, &[], args)
}

/// Same, with `extra` added to the environment (restricted.py's own settings).
fn run_in_pod_with(p: &Pod, extra: &[(&str, &str)], args: &[&str]) -> (i32, String, String) {
    let wrapper = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/pod/restricted.py");
    let mut c = Command::new("python3");
    c.arg(wrapper).args(args).current_dir(p.root.join("work")).env_clear();
    for (k, v) in &p.env {
        c.env(k, v);
    }
    for (k, v) in extra {
        c.env(k, v);
    }
    c.env("HOME", p.root.join("work"))
        .env("POD_UID", POD_UID.to_string())
        .env("CA", &p.tls.ca)
        .env("PORT", p.tls.port.to_string())
        .stdin(Stdio::null());
    let o = c.output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn srt_in_a_restricted_pod_enforces_the_rendered_settings() {
    let p = pod("run");
    assert!(
        p.env.iter().any(|(k, v)| k == "SRT_SETTINGS_PATH" && v.ends_with("config/srt-settings.json")),
        "{:?}",
        p.env
    );
    let (code, out, err) = run_in_pod(&p, &["id", "-u"]);
    assert_eq!((code, out.trim()), (0, if is_root() { "1001" } else { out.trim() }), "{err}");

    // What `srt explain` reports in such a pod: namespaces are refused, landlock mode.
    let (code, out, err) = run_in_pod(&p, &["srt", "explain"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("network (landlock mode)"), "{out}");
    assert!(out.contains("mode: landlock (chosen by auto: namespace mode is unavailable here: clone"), "{out}");

    // The rendered settings start commands from srt's core set (`inherit: core`): the
    // origin's CA and port and the settings path are written into the script, not passed
    // as variables the command would not see.
    let (ca, port) = (p.tls.ca.display(), p.tls.port);
    let settings_path = p.root.join("config/srt-settings.json");
    let script = format!(
        "echo hi > out.txt && cat out.txt; \
        curl -sS --max-time 10 --cacert '{ca}' https://api.example.test:{port}/; \
        curl -sS --max-time 10 --cacert '{ca}' https://other.example.test:{port}/; \
        echo x > '{}' || echo SETTINGS-READ-ONLY",
        settings_path.display()
    );
    let resolve = ["--resolve", "api.example.test:*:127.0.0.1", "--resolve", "other.example.test:*:127.0.0.1"];
    let mut args = vec!["srt", "-d"];
    args.extend(resolve);
    args.extend(["-c", script.as_str()]);
    let (code, out, err) = run_in_pod(&p, &args);
    assert_eq!(code, 0, "{out}{err}");
    assert!(err.contains("namespace mode unavailable") && err.contains("using landlock mode"), "{err}");
    assert_eq!(out, "hi\ntls-origin-ok\nSETTINGS-READ-ONLY\n", "{err}");
    assert!(err.contains("curl: (56) CONNECT tunnel failed, response 403"), "{err}");
    assert!(p.root.join("work/out.txt").exists());
    let settings = std::fs::read_to_string(&settings_path).unwrap();
    assert!(
        settings.starts_with("{\"environment\":{\"inherit\":\"core\"},\"filesystem\""),
        "the settings file was changed: {settings}"
    );
}

#[test]
fn without_the_restrictions_srt_would_pick_namespace_mode() {
    // The control for the test above: the restrictions, not this host, force landlock mode.
    let userns = std::fs::read_to_string("/proc/sys/user/max_user_namespaces").unwrap_or_default();
    if userns.trim() == "0" {
        // this host refuses user namespaces to everyone; nothing to compare
        srt_tests::skip("pod::without_the_restrictions_srt_would_pick_namespace_mode", "user namespaces disabled");
        return;
    }
    let p = pod("control");
    let srt = p.env.iter().find(|(k, _)| k == "PATH").unwrap().1.split(':').next().unwrap().to_string() + "/srt";
    let out = Command::new(srt).arg("explain").current_dir(p.root.join("work")).output().unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("network (namespace mode)"), "{text}");
    assert!(text.contains("mode: namespace\n"), "{text}");
}

#[test]
fn namespace_mode_without_pidfd_getfd_refuses_direct_connections_and_says_why() {
    // A profile that allows user namespaces but refuses pidfd_getfd: namespace mode cannot
    // take the command's socket, and a socket of srt's own would be outside the sandbox's
    // network namespace, so direct (transparent) connects fail closed; the proxy works.
    let userns = std::fs::read_to_string("/proc/sys/user/max_user_namespaces").unwrap_or_default();
    if userns.trim() == "0" {
        srt_tests::skip("pod::namespace_mode_without_pidfd_getfd", "user namespaces disabled");
        return;
    }
    let p = pod("nogetfd");
    // (values written into the script: the settings start commands from srt's core set)
    let (ca, port) = (p.tls.ca.display(), p.tls.port);
    let script = format!(
        "curl -sS --max-time 10 --noproxy '*' --cacert '{ca}' https://api.example.test:{port}/; \
        echo direct=$?; curl -sS --max-time 10 --cacert '{ca}' https://api.example.test:{port}/"
    );
    let args = ["srt", "--network-mode", "namespace", "--resolve", "api.example.test:*:127.0.0.1", "-c", &script];
    let (code, out, err) = run_in_pod_with(&p, &[("RESTRICTED_CALLS", "pidfd_getfd")], &args);
    assert_eq!(code, 0, "{out}{err}");
    assert_eq!(out, "direct=7\ntls-origin-ok\n", "{err}");
    assert!(err.contains("Network is unreachable") || err.contains("Couldn't connect"), "{err}");
    assert!(err.contains("namespace mode needs pidfd_getfd"), "{err}");

    // the control: with pidfd_getfd the same direct connection works and nothing is said
    let (code, out, err) = run_in_pod_with(&p, &[("RESTRICTED_CALLS", "kcmp")], &args);
    assert_eq!((code, out.as_str()), (0, "tls-origin-ok\ndirect=0\ntls-origin-ok\n"), "{err}");
    assert!(!err.contains("pidfd_getfd"), "{err}");
}
