//! Everyday work the protections must not break, in both network modes: git in a fresh
//! directory (the repository the command makes is guarded, yet usable), pseudo-terminals,
//! FIFOs, scripts made executable in the working directory.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

const SETTINGS: &str = r#"{"network":{"allowedDomains":[],"deniedDomains":[]},
 "filesystem":{"denyRead":[],"allowWrite":["."],"denyWrite":[]}}"#;

fn dir(tag: &str) -> PathBuf {
    let d = srt_tests::scratch_dir(tag);
    std::fs::create_dir_all(d.join("w")).unwrap();
    std::fs::write(d.join("s.json"), SETTINGS).unwrap();
    d.canonicalize().unwrap()
}

/// srt running `cmd` in `d/w`, started through `wrapper` (a program and its arguments
/// that then run srt, e.g. `timeout`) when it is not empty.
fn srt_command(d: &Path, mode: &str, cmd: &str, wrapper: &[&str]) -> Command {
    let srt = env!("CARGO_BIN_EXE_srt");
    let mut c = Command::new(wrapper.first().copied().unwrap_or(srt));
    if let Some((_, args)) = wrapper.split_first() {
        c.args(args).arg(srt);
    }
    c.current_dir(d.join("w"))
        .env("HOME", d)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .arg(format!("--network-mode={mode}"))
        .arg("-s")
        .arg(d.join("s.json"))
        .args(["-c", cmd])
        .stdin(Stdio::null());
    c
}

/// Runs `cmd` under srt in `d/w`; returns (exit code, stdout+stderr).
fn srt(d: &Path, mode: &str, cmd: &str) -> (i32, String) {
    let out = srt_command(d, mode, cmd, &[]).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)),
    )
}

fn host_git(d: &Path, args: &[&str]) -> (bool, String) {
    let out = Command::new("git")
        .current_dir(d.join("w"))
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .args(args)
        .output()
        .unwrap();
    (out.status.success(), format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)))
}

const GIT: &str = "git -c user.email=a@b -c user.name=n";

fn git_in_a_fresh_directory(mode: &str) {
    let d = dir(&format!("wf-git-{mode}"));
    let cmd = format!(
        "mkdir -p src && echo hi > src/a.txt && git init -q && {GIT} add -A && {GIT} commit -qm first && \
         git config user.email me@example.com && git remote add origin https://example.com/r.git && \
         git branch -M main && echo OK"
    );
    let (code, text) = srt(&d, mode, &cmd);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("OK"), "{text}");
    // the host can use the repository the command made
    let (ok, log) = host_git(&d, &["log", "--oneline"]);
    assert!(ok && log.contains("first"), "{log}");
    let config = std::fs::read_to_string(d.join("w/.git/config")).unwrap();
    assert!(config.contains("me@example.com") && config.contains("https://example.com/r.git"), "{config}");
    // hooks and config keys that run programs are refused, and say so
    let (code, text) = srt(&d, mode, "git config core.fsmonitor 'touch pwned'");
    assert_ne!(code, 0, "{text}");
    assert!(text.contains("core.fsmonitor"), "the refusal names the key: {text}");
    let (code, _) = srt(&d, mode, "printf '#!/bin/sh\\ntouch pwned\\n' > .git/hooks/pre-commit");
    assert_ne!(code, 0);
    assert!(!d.join("w/.git/hooks/pre-commit").exists());
    let (ok, _) = host_git(&d, &["-c", "user.email=a@b", "-c", "user.name=n", "commit", "--allow-empty", "-qm", "x"]);
    assert!(ok && !d.join("w/pwned").exists());
    // a repository the run made may be removed again by a later run? no: by the same run
    let (code, text) = srt(&d, mode, "rm -rf sub2 && mkdir sub2 && cd sub2 && true");
    assert_eq!(code, 0, "{text}");
    let (code, text) = srt(&d, mode, "mkdir -p again && cd again && git init -q && cd .. && echo kept");
    assert_eq!(code, 0, "{text}");
    let e = dir(&format!("wf-git-rm-{mode}"));
    let (code, text) = srt(&e, mode, "git init -q && rm -rf .git && test ! -e .git && git init -q && echo REDONE");
    assert_eq!(code, 0, "a repository made by this run can be removed and made again: {text}");
    assert!(text.contains("REDONE"), "{text}");
}

#[test]
fn git_in_a_fresh_directory_landlock() {
    git_in_a_fresh_directory("landlock");
}

#[test]
fn git_in_a_fresh_directory_namespace() {
    git_in_a_fresh_directory("namespace");
}

fn terminals_fifos_and_scripts(mode: &str) {
    let d = dir(&format!("wf-misc-{mode}"));
    let cmd = r#"
/usr/bin/python3 -c 'import os,pty; m,s=pty.openpty(); os.write(s,b"PTY-OK\n"); print(os.read(m,20).decode().strip())' &&
mkfifo ff && (echo FIFO-OK > ff &) && cat ff &&
printf '#!/bin/sh\necho SCRIPT-OK\n' > run.sh && chmod +x run.sh && ./run.sh &&
mkdir -p out/deep && echo x > out/deep/f && chmod 600 out/deep/f && touch -d 2001-01-01 out/deep/f && echo >> out/deep/f &&
echo again >> run.sh && echo WRITE-OK"#;
    let (code, text) = srt(&d, mode, cmd);
    assert_eq!(code, 0, "{text}");
    for want in ["PTY-OK", "FIFO-OK", "SCRIPT-OK", "WRITE-OK"] {
        assert!(text.contains(want), "{want} missing: {text}");
    }
    use std::os::unix::fs::PermissionsExt;
    let mode_of = |p: &str| std::fs::metadata(d.join("w").join(p)).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode_of("run.sh") & 0o100, 0o100);
    assert_eq!(mode_of("out/deep/f"), 0o600);
}

/// A call stuck in the supervisor (a FIFO opened for writing, waiting for a reader) must
/// not hold up the command's other mediated calls: srt adds a receiver for them. Without
/// one, `made.txt` would wait for the FIFO's reader, which only comes after it: the run
/// would hang (bounded here by `timeout`, which then ends srt).
fn a_stuck_call_does_not_hold_up_the_others(mode: &str) {
    let d = dir(&format!("wf-stuck-{mode}"));
    let cmd = r#"mkfifo ff; bash -c 'echo X > ff' & w=$!
sleep 0.3; echo Y > made.txt; kill -0 $w && echo WRITER-STILL-WAITING; cat ff; cat made.txt"#;
    let started = std::time::Instant::now();
    let out = srt_command(&d, mode, cmd, &["timeout", "-s", "TERM", "20"]).output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "after {:?}: {text}", started.elapsed());
    assert_eq!(String::from_utf8_lossy(&out.stdout), "WRITER-STILL-WAITING\nX\nY\n", "{text}");
}

#[test]
fn a_stuck_call_does_not_hold_up_the_others_landlock() {
    a_stuck_call_does_not_hold_up_the_others("landlock");
}

#[test]
fn a_stuck_call_does_not_hold_up_the_others_namespace() {
    a_stuck_call_does_not_hold_up_the_others("namespace");
}

#[test]
fn terminals_fifos_and_scripts_landlock() {
    terminals_fifos_and_scripts("landlock");
}

#[test]
fn terminals_fifos_and_scripts_namespace() {
    terminals_fifos_and_scripts("namespace");
}
