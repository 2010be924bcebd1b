//! The black-box conformance suite recorded from srt 0.0.83 (../shared/conformance),
//! run against the real binary: every public case, network ones included.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::path::PathBuf;
use std::process::Command;

fn suite() -> PathBuf {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/conformance");
    assert!(p.join("run.py").exists(), "the conformance suite is expected at {}", p.display());
    p
}

fn all_public_cases(mode: &str) {
    let dir = suite();
    let out = Command::new("python3")
        .arg(dir.join("run.py"))
        .arg("--bin")
        .arg(format!("{} --network-mode {mode}", env!("CARGO_BIN_EXE_srt")))
        .arg(dir.join("cases_public.py"))
        .output()
        .expect("python3 runs the conformance suite");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    assert!(text.contains("28 passed, 0 failed"), "{text}");
}

#[test]
fn all_public_cases_in_landlock_mode() {
    all_public_cases("landlock");
}

#[test]
fn all_public_cases_in_namespace_mode() {
    all_public_cases("namespace");
}
