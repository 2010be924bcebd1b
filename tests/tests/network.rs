//! The launcher and its embedded proxy end to end, with curl inside the sandbox and a TLS
//! origin on loopback named through `--resolve`: in both network modes, as root and as
//! uid 65534.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use srt_tests::{executable_copy, scratch_dir, workspace_binary, TlsOrigin};

const NOBODY: u32 = 65534;

fn is_root() -> bool {
    // SAFETY: geteuid cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// The workspace's `srt`, copied where uid 65534 can run it.
fn srt() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| executable_copy(&workspace_binary("srt"), "net-bin"))
}

struct Fixture {
    dir: PathBuf,
    tls: TlsOrigin,
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let dir = scratch_dir("net");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let tls = TlsOrigin::start(&dir, &["api.example.test", "a.wild.test", "wild.test", "bad.wild.test"]);
        std::fs::set_permissions(&tls.ca, std::fs::Permissions::from_mode(0o644)).unwrap();
        Fixture { dir, tls }
    })
}

fn run(mode: &str, unprivileged: bool, cmd: &str) -> (i32, String) {
    let f = fixture();
    let settings = f.dir.join(format!("settings-{mode}-{unprivileged}.json"));
    std::fs::write(
        &settings,
        r#"{"network":{"allowedDomains":["api.example.test","*.wild.test"],"deniedDomains":["bad.wild.test"]},
            "filesystem":{"denyRead":[],"allowWrite":["."],"denyWrite":[]}}"#,
    )
    .unwrap();
    let mut c = Command::new(srt());
    c.arg(format!("--network-mode={mode}")).arg("-s").arg(&settings);
    for host in ["api.example.test", "a.wild.test", "wild.test", "bad.wild.test"] {
        c.arg("--resolve").arg(format!("{host}:*:127.0.0.1"));
    }
    c.args(["-c", cmd]).current_dir(&f.dir).env("CA", &f.tls.ca).env("PORT", f.tls.port.to_string());
    c.stdin(Stdio::null());
    if unprivileged && is_root() {
        c.uid(NOBODY).gid(NOBODY);
    } else if unprivileged {
        srt_tests::skip(&format!("network {mode} mode as uid 65534"), "not root: ran as this uid instead");
    }
    let o = c.output().unwrap();
    (
        o.status.code().unwrap_or(-1),
        format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr)),
    )
}

fn check(mode: &str, unprivileged: bool) {
    let ctx = format!("{mode} mode, unprivileged={unprivileged}");
    let get = |host: &str| format!("curl -sS --max-time 10 --cacert \"$CA\" https://{host}:$PORT/");
    let (code, out) = run(mode, unprivileged, &get("api.example.test"));
    assert_eq!((code, out.as_str()), (0, "tls-origin-ok\n"), "{ctx}: allowed host");
    let (code, out) = run(mode, unprivileged, &get("a.wild.test"));
    assert_eq!((code, out.as_str()), (0, "tls-origin-ok\n"), "{ctx}: wildcard subdomain");
    for denied in ["wild.test", "bad.wild.test", "other.test"] {
        let (code, out) = run(mode, unprivileged, &get(denied));
        assert_eq!(code, 56, "{ctx}: {denied}: {out}");
        // curl's own words, then srt's line naming the host at exit
        let mut lines = out.lines();
        assert_eq!(lines.next(), Some("curl: (56) CONNECT tunnel failed, response 403"), "{ctx}: {denied}: {out}");
        let hint = lines.next().unwrap_or_default();
        assert!(
            hint.starts_with(&format!("srt: network: refused {denied}:"))
                && hint.ends_with(if denied == "bad.wild.test" {
                    "(in deniedDomains)"
                } else {
                    "(not in allowedDomains)"
                }),
            "{ctx}: {denied}: {out}"
        );
    }
    let (_, out) = run(mode, unprivileged, "curl -s -o /dev/null -w '%{http_code}' --max-time 10 http://other.test/");
    assert!(out.starts_with("403srt: network: refused other.test:80"), "{ctx}: plain http denial: {out}");
    let (code, out) =
        run(mode, unprivileged, "curl -sS --max-time 5 --noproxy '*' -k https://127.0.0.1:$PORT/ && echo LEAKED");
    assert_ne!(code, 0, "{ctx}: direct connection: {out}");
    assert!(!out.contains("LEAKED") && !out.contains("tls-origin-ok"), "{ctx}: {out}");
}

#[test]
fn landlock_mode_as_root() {
    check("landlock", false);
}

#[test]
fn landlock_mode_unprivileged() {
    check("landlock", true);
}

#[test]
fn namespace_mode_as_root() {
    check("namespace", false);
}

#[test]
fn namespace_mode_unprivileged() {
    check("namespace", true);
}

/// `network.httpProxyPort`: srt starts no proxy and routes to an existing one (the pod
/// sidecar), which then makes every decision.
fn with_sidecar(mode: &str) {
    let f = fixture();
    static PROXY: OnceLock<PathBuf> = OnceLock::new();
    let bin = PROXY.get_or_init(|| executable_copy(&workspace_binary("srt-proxy"), "net-proxy-bin"));
    let policy = f.dir.join(format!("sidecar-{mode}.json"));
    std::fs::write(
        &policy,
        r#"{"network":{"allowedDomains":["api.example.test"],"deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}"#,
    )
    .unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let mut sidecar = Command::new(bin)
        .arg("--settings")
        .arg(&policy)
        .args(["--listen", &format!("127.0.0.1:{port}"), "--no-auth", "--resolve", "api.example.test:*:127.0.0.1"])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // the launcher's own settings allow nothing: the sidecar's policy is the one applied
    let settings = f.dir.join(format!("uses-sidecar-{mode}.json"));
    std::fs::write(
        &settings,
        format!(r#"{{"network":{{"allowedDomains":[],"deniedDomains":[],"httpProxyPort":{port}}},"filesystem":{{"denyRead":[],"allowWrite":["."],"denyWrite":[]}}}}"#),
    )
    .unwrap();
    let go = |host: &str| {
        let o = Command::new(srt())
            .arg(format!("--network-mode={mode}"))
            .arg("-s")
            .arg(&settings)
            .args(["-c", &format!("curl -sS --max-time 10 --cacert \"$CA\" https://{host}:$PORT/")])
            .current_dir(&f.dir)
            .env("CA", &f.tls.ca)
            .env("PORT", f.tls.port.to_string())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        (
            o.status.code().unwrap_or(-1),
            format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr)),
        )
    };
    let ok = go("api.example.test");
    let denied = go("other.test");
    // the proxy dies while the command runs: its next request has no way out
    let work = f.dir.join(format!("midrun-{mode}"));
    let _ = std::fs::remove_dir_all(&work);
    std::fs::create_dir_all(&work).unwrap();
    let fetch = "curl -sS --max-time 5 --cacert \"$CA\" https://api.example.test:$PORT/";
    let mut running = Command::new(srt())
        .arg(format!("--network-mode={mode}"))
        .arg("-s")
        .arg(&settings)
        .args(["-c", &format!("{fetch} > first.txt; touch ready; while [ ! -e go ]; do sleep 0.05; done; {fetch} > second.txt 2>&1; echo $? > rc.txt")])
        .current_dir(&work)
        .env("CA", &f.tls.ca)
        .env("PORT", f.tls.port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // if an assertion fails, do not leave the command waiting for `go`
    struct KillOnDrop<'a>(&'a mut std::process::Child);
    impl Drop for KillOnDrop<'_> {
        fn drop(&mut self) {
            let _ = self.0.kill();
            let _ = self.0.wait();
        }
    }
    let guard = KillOnDrop(&mut running);
    let start = std::time::Instant::now();
    while !work.join("ready").exists() {
        assert!(start.elapsed() < std::time::Duration::from_secs(10), "{mode}: the first request never finished");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let _ = sidecar.kill();
    let _ = sidecar.wait();
    std::fs::write(work.join("go"), "").unwrap();
    let _ = guard.0.wait();
    drop(guard);
    assert_eq!(ok, (0, "tls-origin-ok\n".to_string()), "{mode}: through the sidecar");
    assert_eq!(denied.0, 56, "{mode}: {}", denied.1);
    assert_eq!(std::fs::read_to_string(work.join("first.txt")).unwrap(), "tls-origin-ok\n", "{mode}");
    let rc = std::fs::read_to_string(work.join("rc.txt")).unwrap();
    let second = std::fs::read_to_string(work.join("second.txt")).unwrap();
    assert_ne!(rc.trim(), "0", "{mode}: the request after the proxy died got out: {second}");
    assert!(!second.contains("tls-origin-ok"), "{mode}: {second}");
}

#[test]
fn sidecar_proxy_in_landlock_mode() {
    with_sidecar("landlock");
}

#[test]
fn sidecar_proxy_in_namespace_mode() {
    with_sidecar("namespace");
}
