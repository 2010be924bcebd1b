//! Builds the preload (`preload/native_create.rs`) that srt embeds and gives the command's
//! dynamically linked programs. It is a C shared library without std, built with rustc
//! alone: not with the workspace's flags, which link srt statically (`+crt-static` makes
//! no shared library). Where it cannot be built (another architecture, no linker for the
//! target), srt is built without it and every file is made the supervised way.

use std::path::PathBuf;
use std::process::Command;

fn main() {
    link_srt_at_a_fixed_address();
    println!("cargo:rerun-if-changed=preload/native_create.rs");
    println!("cargo:rerun-if-changed=preload/metadata.rs");
    println!("cargo:rerun-if-changed=build.rs");
    let (Some(out), Some(target)) = (std::env::var_os("OUT_DIR"), std::env::var_os("TARGET")) else {
        panic!("cargo sets OUT_DIR and TARGET for build scripts");
    };
    let out = PathBuf::from(out).join("native_create.so");
    let target = target.to_string_lossy().into_owned();
    let supported = target.contains("-linux-") && (target.starts_with("x86_64-") || target.starts_with("aarch64-"));
    let build = |target: &str| {
        let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
        let status = Command::new(rustc)
            .args(["--edition", "2021", "--crate-type", "cdylib", "--crate-name", "srt_native_create"])
            .args(["-C", "panic=abort", "-C", "opt-level=2", "-C", "strip=symbols", "-C", "target-feature=-crt-static"])
            .args(["--target", target])
            .arg("preload/native_create.rs")
            .arg("-o")
            .arg(&out)
            .status();
        matches!(status, Ok(s) if s.success())
    };
    // The preload goes into the command's programs, glibc's or musl's whatever srt itself
    // is linked against. It links no libc, so a musl srt gets the one its glibc twin gets
    // (the -gnu target's, where that is installed).
    let gnu = target.replace("-linux-musl", "-linux-gnu");
    let built = supported && ((gnu != target && build(&gnu)) || build(&target));
    if !built {
        println!("cargo:warning=srt is built without its create preload (target {target}): files are made the supervised way");
        // an empty file: srt sees no preload to install
        if let Err(e) = std::fs::write(&out, b"") {
            panic!("cannot write {}: {e}", out.display());
        }
    }
}

/// A statically linked srt (`scripts/build.sh`) is linked as a fixed-address executable
/// rather than a static PIE: a static PIE relocates itself at every start (about 130 KB
/// of pointers, each page then copied on write, and again after srt forks its auditor),
/// which measured 0.75-0.9 ms of the 4-6 ms srt added to a command on our 2-core VM. What is
/// given up is the randomised address of srt's own code and data (heap, stack and mmap
/// stay randomised); the README says so. The code stays position-independent, so only the
/// link changes, and only for the `srt` binary: `srt-proxy`, which answers network peers,
/// stays a PIE.
fn link_srt_at_a_fixed_address() {
    let static_crt = std::env::var("CARGO_CFG_TARGET_FEATURE").is_ok_and(|f| f.split(',').any(|x| x == "crt-static"));
    let gnu_linux = std::env::var("CARGO_CFG_TARGET_OS").is_ok_and(|o| o == "linux")
        && std::env::var("CARGO_CFG_TARGET_ENV").is_ok_and(|e| e == "gnu");
    if static_crt && gnu_linux && std::env::var_os("SRT_BUILD_PIE").is_none() {
        // after rustc's own -static-pie, these two make gcc link a static, fixed-address
        // executable (the last of -pie/-no-pie and -static/-static-pie wins)
        println!("cargo:rustc-link-arg-bin=srt=-no-pie");
        println!("cargo:rustc-link-arg-bin=srt=-static");
    }
    println!("cargo:rerun-if-env-changed=SRT_BUILD_PIE");
}
