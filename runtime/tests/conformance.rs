//! Conformance with srt 0.0.83: the behaviours a drop-in replacement must keep (exit codes,
//! argv handling, refusing bad settings, the filesystem and network rules as curl sees
//! them), each run against the real binary in both network modes. The expected outcomes
//! are srt 0.0.83's, as recorded on Linux; hosts that srt's proxy would have to reach on
//! the internet are pinned to a loopback address nothing serves with `--resolve`, so nothing here
//! leaves the machine.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

/// What a case expects of srt's exit code.
#[derive(Clone, Copy)]
enum Rc {
    Is(i32),
    Nonzero,
}

struct Case {
    settings: Settings,
    cmd: Cmd,
    setup: Option<&'static str>,
    rc: Rc,
    /// One of these must be in stdout+stderr.
    out: &'static [&'static str],
    /// None of these may be.
    not_out: &'static [&'static str],
    /// Shell run in W afterwards, outside the sandbox; must exit 0.
    after: Option<&'static str>,
}

enum Settings {
    Json(Value),
    Verbatim(&'static str),
    /// `-s` names a file that does not exist.
    Missing,
}

enum Cmd {
    Shell(&'static str),
    Argv(&'static [&'static str]),
}

fn settings(
    allowed: &[&str],
    denied: &[&str],
    allow_write: &[&str],
    deny_write: &[&str],
    deny_read: &[&str],
) -> Settings {
    Settings::Json(json!({
        "network": {"allowedDomains": allowed, "deniedDomains": denied},
        "filesystem": {"denyRead": deny_read, "allowWrite": allow_write, "denyWrite": deny_write}
    }))
}

fn plain() -> Settings {
    settings(&[], &[], &["."], &[], &[])
}

fn case(settings: Settings, cmd: &'static str) -> Case {
    Case { settings, cmd: Cmd::Shell(cmd), setup: None, rc: Rc::Is(0), out: &[], not_out: &[], after: None }
}

impl Case {
    fn rc(mut self, rc: Rc) -> Self {
        self.rc = rc;
        self
    }
    fn out(mut self, any_of: &'static [&'static str]) -> Self {
        self.out = any_of;
        self
    }
    fn not_out(mut self, none_of: &'static [&'static str]) -> Self {
        self.not_out = none_of;
        self
    }
    fn setup(mut self, shell: &'static str) -> Self {
        self.setup = Some(shell);
        self
    }
    fn after(mut self, shell: &'static str) -> Self {
        self.after = Some(shell);
        self
    }
}

/// Where hosts srt 0.0.83 would have looked up on the internet are pinned: port 443 of a
/// loopback address nothing serves, so the proxy's dial fails as an unreachable host would.
const UNREACHABLE: &str = "127.0.0.3";

const CURL: &str = "curl -sS -o /dev/null -w 'code=%{http_code}\\n' --max-time 8";

fn run(name: &str, c: &Case, mode: &str) {
    let root = std::env::temp_dir().join(format!("srt-conf-{name}-{mode}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let (w, o) = (root.join("w"), root.join("o"));
    std::fs::create_dir_all(&w).unwrap();
    std::fs::create_dir_all(&o).unwrap();
    let origin_port = srt_tests::http_origin();
    let fill = |s: &str| {
        s.replace("{W}", w.to_str().unwrap())
            .replace("{O}", o.to_str().unwrap())
            .replace("{PORT}", &origin_port.to_string())
            .replace("{CURL}", CURL)
    };
    if let Some(setup) = c.setup {
        assert!(sh(&w, &fill(setup)), "{name}: setup failed");
    }
    let path = o.join("srt-settings.json");
    match &c.settings {
        Settings::Json(v) => std::fs::write(&path, fill(&v.to_string())).unwrap(),
        Settings::Verbatim(s) => std::fs::write(&path, s).unwrap(),
        Settings::Missing => {}
    }
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_srt"));
    cmd.arg("--network-mode").arg(mode);
    for host in ["api.example.com", "a.b.example.com"] {
        cmd.arg("--resolve").arg(format!("{host}:443:{UNREACHABLE}"));
    }
    cmd.arg("-s").arg(&path);
    match &c.cmd {
        Cmd::Shell(s) => {
            cmd.arg("-c").arg(fill(s));
        }
        Cmd::Argv(a) => {
            cmd.args(*a);
        }
    }
    let (code, text) = run_bounded(cmd.current_dir(&w), Duration::from_secs(30));
    let mut why = Vec::new();
    match c.rc {
        Rc::Is(want) if code != Some(want) => why.push(format!("exit {code:?}, wanted {want}")),
        Rc::Nonzero if code == Some(0) => why.push("exit 0, wanted nonzero".to_string()),
        _ => {}
    }
    if !c.out.is_empty() && !c.out.iter().any(|n| text.contains(n)) {
        why.push(format!("output lacks any of {:?}", c.out));
    }
    if let Some(n) = c.not_out.iter().find(|n| text.contains(**n)) {
        why.push(format!("output has {n:?}"));
    }
    if let Some(after) = c.after {
        if !sh(&w, &fill(after)) {
            why.push(format!("after-check failed: {after}"));
        }
    }
    let _ = std::fs::remove_dir_all(&root);
    assert!(why.is_empty(), "{name} in {mode} mode: {}; output: {text}", why.join("; "));
}

fn sh(dir: &Path, script: &str) -> bool {
    Command::new("bash").arg("-c").arg(script).current_dir(dir).status().is_ok_and(|s| s.success())
}

/// Runs `cmd`, killing it after `limit`; its exit code (None if killed) and all its output.
fn run_bounded(cmd: &mut Command, limit: Duration) -> (Option<i32>, String) {
    let out_file = tempfile_path("out");
    let f = std::fs::File::create(&out_file).unwrap();
    let mut child = cmd.stdin(Stdio::null()).stdout(f.try_clone().unwrap()).stderr(f).spawn().unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break Some(s);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    let text = std::fs::read_to_string(&out_file).unwrap_or_default();
    let _ = std::fs::remove_file(&out_file);
    (status.and_then(|s| s.code()), text)
}

fn tempfile_path(tag: &str) -> PathBuf {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    std::env::temp_dir().join(format!("srt-conf-{tag}-{}-{n}", std::process::id()))
}

const NO_NETWORK_SETTINGS_WRONG_TYPE: &str = r#"{"network":{"allowedDomains":"x.com","deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}"#;

/// Declares one test per case and mode.
macro_rules! conformance {
    ($($name:ident => $case:expr;)*) => {
        mod landlock { use super::*; $( #[test] fn $name() { run(stringify!($name), &$case, "landlock") } )* }
        mod namespace { use super::*; $( #[test] fn $name() { run(stringify!($name), &$case, "namespace") } )* }
    };
}

conformance! {
    // process behaviour
    echo => case(plain(), "echo hello").out(&["hello"]);
    exit_code_propagates => case(plain(), "exit 42").rc(Rc::Is(42));
    signal_exit_code => case(plain(), "kill -TERM $$").rc(Rc::Is(143));
    argv_mode_keeps_quoting => Case { cmd: Cmd::Argv(&["printf", "%s|", "a b", "c"]), ..case(plain(), "") }.out(&["a b|c|"]);
    stdin_is_not_required => case(plain(), "cat </dev/null; echo done").out(&["done"]);

    // settings errors: refuse to run, exit 1
    settings_missing_file => Case { settings: Settings::Missing, ..case(plain(), "echo RAN") }.rc(Rc::Is(1)).not_out(&["RAN"]);
    settings_malformed_json => case(Settings::Verbatim(r#"{"network": "#), "echo RAN").rc(Rc::Is(1)).not_out(&["RAN"]);
    settings_wrong_type => case(Settings::Verbatim(NO_NETWORK_SETTINGS_WRONG_TYPE), "echo RAN")
        .rc(Rc::Is(1)).out(&["allowedDomains"]).not_out(&["RAN"]);
    settings_empty_object => case(Settings::Verbatim("{}"), "echo RAN").rc(Rc::Is(1)).not_out(&["RAN"]);
    settings_bad_wildcard => case(settings(&["*.com"], &[], &["."], &[], &[]), "echo RAN").rc(Rc::Is(1)).not_out(&["RAN"]);

    // filesystem
    write_cwd_allowed => case(plain(), "echo data > f.txt").after("grep -q data f.txt");
    write_outside_denied => case(plain(), "echo x > {O}/evil.txt").rc(Rc::Nonzero).after("test ! -e {O}/evil.txt");
    write_tmp_not_listed_denied => case(plain(), "echo x > /tmp/srt-conf-probe-$$ && echo WROTE").rc(Rc::Nonzero).not_out(&["WROTE"]);
    write_tmp_when_listed => case(settings(&[], &[], &[".", "/tmp"], &[], &[]), "f=/tmp/srt-conf-$$; echo x > $f && rm $f && echo OK").out(&["OK"]);
    mandatory_deny_bashrc => case(plain(), "echo evil >> .bashrc").rc(Rc::Nonzero).after("test ! -s .bashrc");
    mandatory_deny_git_hooks => case(plain(), "echo evil > .git/hooks/pre-commit")
        .setup("mkdir -p .git/hooks").rc(Rc::Nonzero).after("test ! -e .git/hooks/pre-commit");
    deny_write_file_in_allowed_dir => case(settings(&[], &[], &["."], &["{W}/locked.txt"], &[]), "echo evil > locked.txt")
        .setup("echo orig > locked.txt").rc(Rc::Nonzero).after("grep -qx orig locked.txt");
    deny_read_file => case(settings(&[], &[], &["."], &[], &["{O}/secret.txt"]), "cat {O}/secret.txt")
        .setup("echo TOPSECRET > {O}/secret.txt").rc(Rc::Nonzero).not_out(&["TOPSECRET"]);
    symlink_escape_denied => case(plain(), "echo x > out/escaped.txt")
        .setup("ln -s {O} out").rc(Rc::Nonzero).after("test ! -e {O}/escaped.txt");

    // network through the proxy, as curl reports it
    net_denied_by_default => case(plain(), "{CURL} https://example.com/")
        .rc(Rc::Is(56)).out(&["CONNECT tunnel failed, response 403"]);
    net_exact_host_allowed => case(settings(&["api.example.com"], &[], &["."], &[], &[]), "{CURL} https://api.example.com/")
        .rc(Rc::Is(56)).out(&["response 502", "response 503", "response 504"]);
    net_wildcard_subdomain_allowed => case(settings(&["*.example.com"], &[], &["."], &[], &[]), "{CURL} https://a.b.example.com/")
        .rc(Rc::Is(56)).out(&["response 502", "response 503", "response 504"]);
    net_wildcard_not_apex => case(settings(&["*.example.com"], &[], &["."], &[], &[]), "{CURL} https://example.com/")
        .rc(Rc::Is(56)).out(&["response 403"]);
    net_denied_overrides_allowed => case(settings(&["*.example.com"], &["bad.example.com"], &["."], &[], &[]), "{CURL} https://bad.example.com/")
        .rc(Rc::Is(56)).out(&["response 403"]);
    net_plain_http_denied => case(plain(), "curl -s -o /dev/null -w 'code=%{http_code}\\n' --max-time 8 http://example.com/")
        .out(&["code=403"]);
    net_localhost_allowed_reaches_origin => case(settings(&["localhost"], &[], &["."], &[], &[]), "curl -sS --noproxy '' --max-time 8 http://localhost:{PORT}/")
        .out(&["origin-ok"]);
    net_direct_connection_fails => case(settings(&["localhost"], &[], &["."], &[], &[]), "curl -sS --noproxy '*' --max-time 5 http://127.0.0.1:{PORT}/ && echo LEAKED")
        .rc(Rc::Nonzero).not_out(&["LEAKED", "origin-ok"]);
    net_proxy_env_set => case(plain(), r#"test -n "$HTTPS_PROXY" && test -n "$HTTP_PROXY" && echo SET"#).out(&["SET"]);
}
