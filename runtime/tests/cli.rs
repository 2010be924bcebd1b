//! The command line as users and agents drive it: exit codes, signals, settings errors,
//! the embedded default, explain, and cleanup.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{dir, out_all, srt, BASE};

fn with_settings(d: &Path, text: &str) -> Command {
    std::fs::write(d.join("s.json"), text).unwrap();
    let mut c = srt(d);
    c.arg("-s").arg(d.join("s.json"));
    c
}

#[test]
fn exit_codes_propagate() {
    let d = dir("exit");
    for (cmd, code) in [
        ("exit 42", 42),
        ("true", 0),
        ("kill -TERM $$", 143),
        ("kill -KILL $$", 137),
        ("kill -SEGV $$", 139),
        ("nonexistent-cmd-xyz", 127),
    ] {
        let mut c = with_settings(&d.0, BASE);
        c.args(["-c", cmd]);
        assert_eq!(out_all(&mut c).0, code, "{cmd}");
    }
}

#[test]
fn argv_mode_keeps_word_boundaries() {
    let d = dir("argv");
    let mut c = with_settings(&d.0, BASE);
    c.args(["--", "printf", "[%s]", "a b", "it's", "$HOME", "x;y"]);
    assert_eq!(out_all(&mut c), (0, "[a b][it's][$HOME][x;y]".into()));
}

#[test]
fn stdin_reaches_the_command() {
    let d = dir("stdin");
    let mut c = with_settings(&d.0, BASE);
    c.args(["-c", "tr a-z A-Z"]).stdin(Stdio::piped()).stdout(Stdio::piped());
    let mut child = c.spawn().unwrap();
    child.stdin.take().unwrap().write_all(b"piped data\n").unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(String::from_utf8_lossy(&o.stdout), "PIPED DATA\n");
}

#[test]
fn usage_errors() {
    let d = dir("usage");
    let (code, text) = out_all(&mut with_settings(&d.0, BASE));
    assert_eq!(code, 1);
    assert!(text.contains("No command specified. Use -c <command> or provide command arguments."), "{text}");
    let mut c = with_settings(&d.0, BASE);
    c.args(["-c", "true", "extra"]);
    let (code, text) = out_all(&mut c);
    assert_eq!(code, 1);
    assert!(text.contains("not both"), "{text}");
    let mut c = srt(&d.0);
    c.arg("--version");
    let (code, text) = out_all(&mut c);
    assert_eq!(code, 0);
    assert!(text.starts_with("srt "), "{text}");
    let mut c = srt(&d.0);
    c.arg("--help");
    let (code, text) = out_all(&mut c);
    assert_eq!(code, 0);
    assert!(text.contains("--settings") && text.contains("explain") && text.contains("--allow-weaker"), "{text}");
}

#[test]
fn settings_errors_refuse_to_run() {
    let d = dir("settings");
    let cases: &[(&str, &str)] = &[
        ("", "is empty"),
        ("{\"network\": ", "is not valid JSON"),
        ("{}", "network: Required"),
        (
            r#"{"network":{"allowedDomains":"x","deniedDomains":[]},"filesystem":{"denyRead":[],"allowWrite":[],"denyWrite":[]}}"#,
            "network.allowedDomains",
        ),
        (&BASE.replace("deniedDomains", "deniedDomain"), "did you mean \"deniedDomains\""),
        (&BASE.replace(r#""allowedDomains":[]"#, r#""allowedDomains":["*.com"]"#), "network.allowedDomains.0"),
        (
            &BASE.replace(r#""network""#, r#""enviroment":{},"network""#),
            "enviroment: unknown key \"enviroment\"; did you mean \"environment\"?",
        ),
        (
            &BASE.replace(
                r#""network""#,
                r#""environment":{"set":{"HTTPS_PROXY":"http://elsewhere.test:1"}},"network""#,
            ),
            "environment.set.HTTPS_PROXY: srt sets HTTPS_PROXY itself",
        ),
    ];
    for (text, want) in cases {
        let mut c = with_settings(&d.0, text);
        c.args(["-c", "echo RAN; touch ran.txt"]);
        let (code, got) = out_all(&mut c);
        assert_eq!(code, 1, "{text}: {got}");
        assert!(got.contains(want), "{text}: {got}");
        assert!(got.contains("Refusing to run"), "{got}");
        assert!(!got.contains("RAN") && !d.0.join("w/ran.txt").exists(), "the command ran: {got}");
    }
    let mut c = srt(&d.0);
    c.args(["-s", "/nonexistent/srt.json", "-c", "echo RAN"]);
    let (code, got) = out_all(&mut c);
    assert_eq!(code, 1);
    assert!(got.contains("/nonexistent/srt.json does not exist."), "{got}");
}

#[test]
fn embedded_default_and_home_settings() {
    let d = dir("default");
    // no ~/.srt-settings.json: the embedded default (writes in . and /tmp, no network)
    let mut c = srt(&d.0);
    c.args([
        "-c",
        "echo ok > here.txt && f=/tmp/srt-cli-default-$$ && echo x > $f && rm $f && echo WROTE; \
                   exec 3<>/dev/tcp/127.0.0.1/9 || echo NONET",
    ]);
    let (code, text) = out_all(&mut c);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("WROTE") && text.contains("NONET"), "{text}");
    assert!(d.0.join("w/here.txt").exists());
    // ~/.srt-settings.json is used when present: here it makes the cwd read-only
    std::fs::write(d.0.join(".srt-settings.json"), BASE.replace(r#""allowWrite":["."]"#, r#""allowWrite":[]"#))
        .unwrap();
    let mut c = srt(&d.0);
    c.args(["-c", "echo x > there.txt"]);
    assert_ne!(out_all(&mut c).0, 0);
    assert!(!d.0.join("w/there.txt").exists());
    // and an invalid one is an error, not a silent fallback
    std::fs::write(d.0.join(".srt-settings.json"), "{").unwrap();
    let mut c = srt(&d.0);
    c.args(["-c", "true"]);
    assert_eq!(out_all(&mut c).0, 1);
}

#[test]
fn srt_settings_path_is_used_when_no_flag_is_given() {
    let d = dir("envpath");
    let read_only = BASE.replace(r#""allowWrite":["."]"#, r#""allowWrite":[]"#);
    std::fs::write(d.0.join("pod.json"), &read_only).unwrap();
    // The variable's settings apply (the cwd is read-only there) ...
    let mut c = srt(&d.0);
    c.env("SRT_SETTINGS_PATH", d.0.join("pod.json")).args(["-c", "echo x > a.txt"]);
    assert_ne!(out_all(&mut c).0, 0);
    assert!(!d.0.join("w/a.txt").exists());
    // ... over ~/.srt-settings.json, and --settings wins over the variable.
    std::fs::write(d.0.join(".srt-settings.json"), BASE).unwrap();
    let mut c = with_settings(&d.0, BASE);
    c.env("SRT_SETTINGS_PATH", d.0.join("pod.json")).args(["-c", "echo x > b.txt"]);
    assert_eq!(out_all(&mut c).0, 0);
    assert!(d.0.join("w/b.txt").exists());
    // Pointing at a missing file refuses to run instead of falling back.
    let mut c = srt(&d.0);
    c.env("SRT_SETTINGS_PATH", d.0.join("missing.json")).args(["-c", "echo x > c.txt"]);
    let (code, text) = out_all(&mut c);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("missing.json does not exist"), "{text}");
    assert!(!d.0.join("w/c.txt").exists());
}

#[test]
fn private_tmpdir_is_writable_and_removed() {
    let d = dir("tmpdir");
    let mut c = with_settings(&d.0, BASE);
    c.args(["-c", "echo x > \"$TMPDIR/f\" && cat \"$TMPDIR/f\" && echo \"$TMPDIR\" && echo \"$SANDBOX_RUNTIME\""]);
    let (code, text) = out_all(&mut c);
    assert_eq!(code, 0, "{text}");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "x");
    assert_eq!(lines[2], "1");
    assert!(!Path::new(lines[1]).exists(), "{} left behind", lines[1]);
}

#[test]
fn explain_reports_mechanisms() {
    let d = dir("explain");
    std::fs::write(d.0.join("s.json"), BASE.replace(r#""denyWrite":[]"#, r#""denyWrite":["locked"]"#)).unwrap();
    let mut c = srt(&d.0);
    c.arg("explain").arg("-s").arg(d.0.join("s.json"));
    let (code, text) = out_all(&mut c);
    assert_eq!(code, 0, "{text}");
    for want in [
        "kernel Landlock ABI:",
        "protected:",
        "(denyWrite)",
        "/w/locked",
        "(mandatory",
        "(settings file)",
        "git directory",
        "hooks/",
        "supervisor",
        "io_uring_setup",
        "LIMIT",
    ] {
        assert!(text.contains(want), "explain lacks {want:?}:\n{text}");
    }
    // the project names are wrapped into lines: `.bashrc` is one word of them
    assert!(text.lines().any(|l| l.split_whitespace().any(|w| w == ".bashrc")), "explain lacks .bashrc:\n{text}");
    let line = |needle: &str| text.lines().find(|l| l.contains(needle)).unwrap_or_default().to_string();
    assert!(line("/w/locked").contains("missing: refused if it is made during the run"), "{text}");
    assert!(line("/s.json").contains("exists:"), "{text}");
    let mut c = with_settings(&d.0, BASE);
    c.arg("--explain");
    assert_eq!(out_all(&mut c).0, 0);
}

/// `srt explain` describes the home rules only where a writable tree reaches the home:
/// holding it, lying below it, or neither (then nothing they name can be written).
#[test]
fn explain_names_the_home_rules_only_where_the_home_is_reached() {
    let d = dir("explain-home");
    std::fs::create_dir_all(d.0.join("h")).unwrap();
    std::fs::write(d.0.join("s.json"), BASE).unwrap();
    let said = |home: &Path| {
        let mut c = srt(&d.0);
        c.env("HOME", home).env_remove("XDG_CONFIG_HOME").env_remove("XDG_DATA_HOME");
        c.arg("explain").arg("-s").arg(d.0.join("s.json"));
        let (code, text) = out_all(&mut c);
        assert_eq!(code, 0, "{text}");
        text.lines().find(|l| l.contains("$HOME (")).map(str::to_string)
    };
    // the default settings make "." (d/w) writable
    assert_eq!(said(&d.0.join("h")), None, "a home no writable tree reaches");
    assert!(said(&d.0.join("w")).is_some_and(|l| l.contains("lies in a writable tree")));
    assert!(said(&d.0).is_some_and(|l| l.contains("holds writable trees")));
}

/// `srt explain` and `-d` name the variables srt leaves out, never their values.
#[test]
fn explain_and_debug_name_dropped_variables_but_never_their_values() {
    let d = dir("explain-env");
    let settings = BASE.replace(
        r#""network""#,
        r#""environment":{"exclude":["MYAPP_*"],"include":["GITHUB_TOKEN"],"set":{"FIXED":"VALUE-OF-FIXED"}},"network""#,
    );
    let secrets = [
        ("OPENAI_API_KEY", "CANARY-sk-proj-1"),
        ("AWS_SECRET_ACCESS_KEY", "CANARY-aws"),
        ("DATABASE_URL", "postgres://app:CANARY-pw@db/app"),
        ("GITHUB_TOKEN", "CANARY-ghp-included"),
        ("MYAPP_DEBUG", "CANARY-excluded"),
    ];
    let mut c = with_settings(&d.0, &settings);
    c.arg("--explain").envs(secrets);
    let (code, text) = out_all(&mut c);
    assert_eq!(code, 0, "{text}");
    assert!(!text.contains("CANARY") && !text.contains("VALUE-OF-FIXED"), "explain shows a value:\n{text}");
    let line = |needle: &str| text.lines().find(|l| l.contains(needle)).unwrap_or_default().to_string();
    let dropped = line("dropped here as credentials:");
    for name in ["OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY", "DATABASE_URL (its value holds a credential)"] {
        assert!(dropped.contains(name), "{name} not listed as dropped:\n{text}");
    }
    assert!(!dropped.contains("GITHUB_TOKEN"), "an included credential is not dropped:\n{text}");
    assert!(line("exclude MYAPP_*").contains("MYAPP_DEBUG"), "{text}");
    assert!(line("  set:").contains("FIXED"), "{text}");

    let mut c = with_settings(&d.0, &settings);
    c.arg("-d").args(["-c", "echo key=${OPENAI_API_KEY-unset} gh=${GITHUB_TOKEN:+set}"]).envs(secrets);
    let (code, text) = out_all(&mut c);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("key=unset gh=set"), "{text}");
    let debug = line_of(&text, "environment:");
    for name in ["OPENAI_API_KEY", "AWS_SECRET_ACCESS_KEY", "DATABASE_URL", "MYAPP_DEBUG"] {
        assert!(debug.contains(name), "-d does not name {name}: {text}");
    }
    assert!(!debug.contains("CANARY") && !debug.contains("GITHUB_TOKEN"), "{debug}");
    // without -d, nothing is said
    let mut c = with_settings(&d.0, &settings);
    c.args(["-c", "true"]).envs(secrets);
    let (_, text) = out_all(&mut c);
    assert!(!text.contains("OPENAI_API_KEY"), "{text}");
}

fn line_of(text: &str, needle: &str) -> String {
    text.lines().find(|l| l.contains(needle)).unwrap_or_default().to_string()
}

#[test]
fn explain_says_where_local_servers_listen_and_which_unix_sockets_are_reached() {
    let d = dir("explain-local");
    let run = |settings: &str, mode: &str| {
        std::fs::write(d.0.join("s.json"), settings).unwrap();
        let mut c = srt(&d.0);
        c.args(["explain", "--network-mode", mode, "-s"]).arg(d.0.join("s.json"));
        let (code, text) = out_all(&mut c);
        assert_eq!(code, 0, "{text}");
        text
    };
    let text = run(BASE, "landlock");
    assert!(text.contains("placed on an address of the run's own in 127.0.0.0/8"), "{text}");
    assert!(text.contains("Unix sockets: none"), "{text}");
    let text = run(BASE, "namespace");
    assert!(text.contains("inside the sandbox's own network namespace"), "{text}");
    let open = BASE.replace(r#""deniedDomains":[]"#, r#""deniedDomains":[],"allowLocalBinding":true"#);
    let text = run(&open, "landlock");
    assert!(
        text.contains("local servers (allowLocalBinding)") && text.contains("reachable from the network"),
        "{text}"
    );
    let listed = BASE
        .replace(r#""deniedDomains":[]"#, r#""deniedDomains":[],"allowUnixSockets":["/var/run/docker.sock","a.sock"]"#);
    let text = run(&listed, "landlock");
    let w = d.0.canonicalize().unwrap();
    assert!(text.contains(&format!("connect only to /run/docker.sock, {}/w/a.sock", w.display())), "{text}");
    assert!(text.contains("WARNING: /run/docker.sock hands the command the host"), "{text}");
    assert!(text.contains("abstract names: refused"), "{text}");
}

fn spawn_sleeper(d: &Path, cmd: &str) -> std::process::Child {
    let mut c = with_settings(d, BASE);
    c.args(["-c", cmd]).stdout(Stdio::null()).stderr(Stdio::null());
    let child = c.spawn().unwrap();
    std::thread::sleep(Duration::from_millis(300));
    child
}

fn wait(mut child: std::process::Child, limit: Duration) -> (i32, Duration) {
    let start = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return (s.code().unwrap_or(-1), start.elapsed());
        }
        assert!(start.elapsed() < limit, "srt did not exit within {limit:?}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn sigterm_is_forwarded() {
    let d = dir("sigterm");
    let child = spawn_sleeper(&d.0, "exec sleep 30");
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
    let (code, took) = wait(child, Duration::from_secs(5));
    assert_eq!(code, 128 + libc::SIGTERM);
    assert!(took < Duration::from_secs(2));
}

#[test]
fn second_signal_kills_a_command_that_ignores_the_first() {
    let d = dir("sigtwice");
    let child = spawn_sleeper(&d.0, "trap '' TERM INT; sleep 30; echo survived");
    let pid = child.id() as i32;
    // SAFETY: signalling our own child.
    unsafe { libc::kill(pid, libc::SIGINT) };
    std::thread::sleep(Duration::from_millis(200));
    unsafe { libc::kill(pid, libc::SIGINT) };
    let (code, took) = wait(child, Duration::from_secs(4));
    assert_eq!(code, 128 + libc::SIGKILL);
    assert!(took < Duration::from_secs(2));
}

#[test]
fn no_orphans_after_exit() {
    let d = dir("orphans");
    let marker = format!("srt-cli-orphan-{}", std::process::id());
    let mut c = with_settings(&d.0, BASE);
    c.args(["-c", &format!("for i in 1 2 3; do (exec -a {marker} sleep 30 >/dev/null 2>&1 &) ; done; setsid -f bash -c 'exec -a {marker} sleep 30' >/dev/null 2>&1; exit 0")]);
    assert_eq!(out_all(&mut c).0, 0);
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        if let Ok(cmd) = std::fs::read(e.path().join("cmdline")) {
            assert!(!String::from_utf8_lossy(&cmd).contains(&marker), "pid {:?} survived", e.file_name());
        }
    }
}

#[test]
fn allow_read_reopens_part_of_a_denied_tree() {
    let d = dir("allowread");
    std::fs::create_dir_all(d.0.join("secret/pub")).unwrap();
    std::fs::write(d.0.join("secret/key"), "KEY").unwrap();
    std::fs::write(d.0.join("secret/pub/p.txt"), "PUBLIC").unwrap();
    let s = BASE.replace(
        r#""denyRead":[]"#,
        &format!(r#""denyRead":["{0}/secret"],"allowRead":["{0}/secret/pub"]"#, d.0.display()),
    );
    let mut c = with_settings(&d.0, &s);
    c.args(["-c", &format!("cat {0}/secret/pub/p.txt; cat {0}/secret/key", d.0.display())]);
    let (code, text) = out_all(&mut c);
    assert_ne!(code, 0);
    assert!(text.contains("PUBLIC") && !text.contains("KEY"), "{text}");
}

#[test]
fn everyday_file_tools_work_in_the_working_directory() {
    let d = dir("tools");
    let mut c = with_settings(&d.0, BASE);
    c.args([
        "-c",
        "touch new.txt && mkdir -p a/b && touch a/b/c && mv new.txt moved.txt && cp moved.txt copy.txt \
                   && ln -s copy.txt link && ln copy.txt hard && echo x >> hard && rm moved.txt && ls",
    ]);
    let (code, text) = out_all(&mut c);
    assert_eq!(code, 0, "{text}");
    assert!(
        d.0.join("w/a/b/c").exists() && d.0.join("w/copy.txt").exists() && !d.0.join("w/moved.txt").exists(),
        "{text}"
    );
}
