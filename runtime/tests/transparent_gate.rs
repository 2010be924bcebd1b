//! The first-flight gate inside srt, in both network modes, as root and as uid 65534: the
//! three ways past it an outside review found (a TLS alert before the ClientHello, empty
//! lines before an HTTP request, a request line longer than the gate reads), tried from
//! the command over CONNECT, SOCKS5 and a direct (transparent) connect against origins
//! that read requests as leniently as rustls, Go, nginx and Node do; protocols that are
//! neither TLS nor HTTP, refused with a hint naming the setting or allowed by it; and a
//! command holding 2,000 idle tunnels under `ulimit -n 1024` while its next connects work.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod common;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use common::Out;
use srt_tests::vhost::{Certs, LenientHttp, VhostTls};

const MODES: [&str; 2] = ["landlock", "namespace"];

struct Fixture {
    dir: PathBuf,
    certs: Certs,
    tls: VhostTls,
    http: LenientHttp,
}

fn fixture(tag: &str) -> Fixture {
    let dir = srt_tests::scratch_dir(&format!("gate-{tag}"));
    std::fs::create_dir_all(dir.join("w")).unwrap();
    for p in [&dir, &dir.join("w")] {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o777)).unwrap();
    }
    for f in ["attack.py", "hold.py"] {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/gate").join(f);
        std::fs::copy(src, dir.join(f)).unwrap();
    }
    let certs = Certs::new(&dir, &["allowed.test", "evil.test"]);
    Fixture { tls: VhostTls::start(&certs), http: LenientHttp::start(), certs, dir }
}

fn settings(f: &Fixture, extra: serde_json::Value) -> PathBuf {
    let mut v = serde_json::json!({
        "network": {"allowedDomains": ["allowed.test"], "deniedDomains": []},
        "filesystem": {"denyRead": [], "allowWrite": ["."], "denyWrite": []}
    });
    for (k, x) in extra.as_object().unwrap() {
        v["network"][k] = x.clone();
    }
    let path = f.dir.join(format!("s{}.json", extra.to_string().len()));
    std::fs::write(&path, v.to_string()).unwrap();
    path
}

fn srt(f: &Fixture, mode: &str, nobody: bool, settings: &Path, script: &str, pre: impl FnOnce(&mut Command)) -> Out {
    let mut c = common::srt_resolving(&f.dir, mode, nobody, settings, script);
    c.env("VCA", &f.certs.ca).env("TLS", f.tls.port.to_string()).env("HTTP", f.http.port.to_string());
    pre(&mut c);
    common::run(&mut c)
}

/// Root, and uid 65534 when we are root.
fn whos(test: &str) -> Vec<bool> {
    // SAFETY: geteuid cannot fail.
    if unsafe { libc::geteuid() } == 0 {
        vec![false, true]
    } else {
        srt_tests::skip(test, "not root: the uid 65534 half needs root to switch uids");
        vec![false]
    }
}

#[test]
fn fronting_findings_are_refused_over_connect_socks5_and_direct_connects() {
    let test = "fronting_findings_are_refused_over_connect_socks5_and_direct_connects";
    let f = fixture("findings");
    let s = settings(&f, serde_json::json!({}));
    let script = r#"for via in connect socks direct; do
  python3 "$D/attack.py" $via alert "$TLS"; python3 "$D/attack.py" $via empty "$HTTP"; python3 "$D/attack.py" $via long "$HTTP"
done"#;
    for nobody in whos(test) {
        for mode in MODES {
            let before = f.tls.served.lock().unwrap().len() + f.http.served.lock().unwrap().len();
            let o = srt(&f, mode, nobody, &s, script, |_| {});
            let ctx = format!("{mode} nobody={nobody}:\n{}\n{}", o.stdout, o.stderr);
            assert_eq!(o.code, 0, "{ctx}");
            assert_eq!(o.stdout.lines().count(), 9, "{ctx}");
            for l in o.stdout.lines() {
                assert!(l.contains("evil=no") && l.contains("honest=ok"), "{l}\n{ctx}");
            }
            for reason in
                ["the TLS server name or HTTP Host asked for another host", "spelled so that servers could read"]
            {
                assert!(o.stderr.contains(reason), "srt names the refusal at exit: {ctx}");
            }
            let tls = f.tls.served.lock().unwrap().clone();
            let http = f.http.served.lock().unwrap().clone();
            assert!(!tls.iter().chain(http.iter()).any(|n| n == "evil.test"), "{tls:?} {http:?}");
            assert_eq!(tls.len() + http.len() - before, 9, "only the honest requests were served: {ctx}");
        }
    }
}

/// A server that speaks first (`SSH-2.0-srt-test`), then answers the client's line.
fn ssh_like() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut s in l.incoming().flatten() {
            std::thread::spawn(move || {
                let _ = s.write_all(b"SSH-2.0-srt-test\r\n");
                let mut line = String::new();
                let _ = BufReader::new(s.try_clone().unwrap()).read_line(&mut line);
                let _ = writeln!(s, "hello {}", line.trim_end());
            });
        }
    });
    port
}

#[test]
fn other_protocols_need_allow_other_protocols() {
    let test = "other_protocols_need_allow_other_protocols";
    let f = fixture("other");
    let port = ssh_like();
    let off = settings(&f, serde_json::json!({}));
    let on = settings(&f, serde_json::json!({"allowOtherProtocols": [format!("allowed.test:{port}")]}));
    // an ssh-like exchange, directly and through the proxy as GIT_SSH_COMMAND's nc would
    let script = format!(
        r#"python3 -c 'import socket
s = socket.create_connection(("allowed.test", {port}), timeout=10); f = s.makefile("rb")
print("direct", f.readline().strip()); s.sendall(b"SSH-2.0-OpenSSH_9.2\r\n"); print("direct", f.readline().strip())'
curl -sS -m 10 -p -x "$HTTPS_PROXY" "telnet://allowed.test:{port}" <<< "SSH-2.0-curl" || echo "curl failed"
"#
    );
    for (file, says) in [
        (&off, "other protocols (neither TLS nor HTTP: SSH, databases, git://): refused (network.allowOtherProtocols"),
        (&on, &*format!("other protocols (neither TLS nor HTTP: SSH, databases, git://): only to allowed.test:{port}")),
    ] {
        let o = Command::new(env!("CARGO_BIN_EXE_srt")).arg("explain").arg("-s").arg(file).output().unwrap();
        let text = String::from_utf8_lossy(&o.stdout);
        assert!(text.contains(says), "{text}");
    }
    for nobody in whos(test) {
        for mode in MODES {
            let o = srt(&f, mode, nobody, &off, &script, |_| {});
            let ctx = format!("{mode} nobody={nobody} off:\n{}\n{}", o.stdout, o.stderr);
            assert!(!o.stdout.contains("hello"), "{ctx}");
            assert!(o.stdout.contains("direct b'SSH-2.0-srt-test'"), "the server still speaks first: {ctx}");
            assert!(o.stderr.contains("network.allowOtherProtocols allows them"), "{ctx}");
            let o = srt(&f, mode, nobody, &on, &script, |_| {});
            let ctx = format!("{mode} nobody={nobody} on:\n{}\n{}", o.stdout, o.stderr);
            assert!(o.stdout.contains("direct b'hello SSH-2.0-OpenSSH_9.2'"), "{ctx}");
            assert!(o.stdout.contains("hello SSH-2.0-curl"), "{ctx}");
        }
    }
}

#[test]
fn two_thousand_idle_tunnels_under_ulimit_1024_leave_new_connects_working() {
    let f = fixture("nofile");
    let s = settings(&f, serde_json::json!({}));
    // four processes of 500 tunnels each (each under the command's own limit of 1024)
    let script = r#"ulimit -Sn
for i in 1 2 3 4; do python3 "$D/hold.py" "$HTTP" 500 25 > "held.$i" & done
for i in $(seq 600); do [ "$(cat held.* 2>/dev/null | grep -c '^held')" = 4 ] && break; sleep 0.05; done
cat held.*
curl -sS -m 10 "http://allowed.test:$HTTP/" -H 'Host: allowed.test'
curl -sS -m 10 --noproxy '*' "http://allowed.test:$HTTP/"
kill %1 %2 %3 %4"#;
    for mode in MODES {
        let o = srt(&f, mode, false, &s, script, |c| {
            // SAFETY: setrlimit in the child before exec: a soft limit of 1024, the hard as is.
            unsafe {
                c.pre_exec(|| {
                    let mut r: libc::rlimit = std::mem::zeroed();
                    libc::getrlimit(libc::RLIMIT_NOFILE, &mut r);
                    r.rlim_cur = 1024;
                    libc::setrlimit(libc::RLIMIT_NOFILE, &r);
                    Ok(())
                });
            }
        });
        let ctx = format!("{mode}:\n{}\n{}", o.stdout, o.stderr);
        assert_eq!(o.stdout.lines().next(), Some("1024"), "the command keeps its own limit: {ctx}");
        assert_eq!(o.stdout.matches("held 500").count(), 4, "{ctx}");
        assert_eq!(o.stdout.matches("vhost=allowed.test").count(), 2, "new connects work: {ctx}");
    }
}

/// The OpenSSL server of `gate/retrying.py`: its port and the file of names it was asked
/// for; killed on drop.
struct Retrying {
    port: u16,
    names: PathBuf,
    child: std::process::Child,
}

impl Drop for Retrying {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn retrying(f: &Fixture) -> Retrying {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/gate/retrying.py");
    let names = f.dir.join("retry-names");
    let mut child = Command::new("python3")
        .arg(src)
        .arg(&f.certs.cert)
        .arg(&f.certs.key)
        .arg(&names)
        .stdout(Stdio::piped())
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let port = line.trim().strip_prefix("tls=").and_then(|p| p.parse().ok()).expect("retrying.py did not start");
    Retrying { port, names, child }
}

#[test]
fn a_second_client_hello_after_a_retry_request_is_judged_over_connect_socks5_and_direct_connects() {
    let test = "a_second_client_hello_after_a_retry_request_is_judged_over_connect_socks5_and_direct_connects";
    let f = fixture("retry");
    let server = retrying(&f);
    let s = settings(&f, serde_json::json!({}));
    let script = r#"for via in connect socks direct; do python3 "$D/attack.py" $via hrr "$RETRY"; done"#;
    for nobody in whos(test) {
        for mode in MODES {
            let o = srt(&f, mode, nobody, &s, script, |c| {
                c.env("RETRY", server.port.to_string());
            });
            let ctx = format!("{mode} nobody={nobody}:\n{}\n{}", o.stdout, o.stderr);
            assert_eq!(o.code, 0, "{ctx}");
            assert_eq!(o.stdout.lines().count(), 3, "{ctx}");
            for l in o.stdout.lines() {
                // honest: Python's ssl offers X25519, is asked for P-256, and is served
                assert!(l.contains("evil=no") && l.contains("honest=ok"), "{l}\n{ctx}");
            }
            assert!(o.stderr.contains("the TLS server name or HTTP Host asked for another host"), "{ctx}");
            let names = std::fs::read_to_string(&server.names).unwrap_or_default();
            assert!(!names.contains("evil.test"), "the server was asked for evil.test: {names}\n{ctx}");
        }
    }
}
