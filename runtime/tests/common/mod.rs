//! Helpers the command-line tests share: a scratch home with a working directory, `srt`
//! started there with none of the caller's srt variables, and its exit code and output.

#![allow(dead_code)] // each test crate uses its own subset

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Settings that allow no network and writes only in the working directory.
pub const BASE: &str = r#"{"network":{"allowedDomains":[],"deniedDomains":[]},
 "filesystem":{"denyRead":[],"allowWrite":["."],"denyWrite":[]}}"#;

/// A scratch directory (the command's HOME, with `w/` as its working directory and
/// `s.json` holding [`BASE`]), removed when dropped.
pub struct Dir(pub PathBuf);
impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A fresh [`Dir`] named after the test crate, `tag` and this process.
pub fn dir(tag: &str) -> Dir {
    let p = std::env::temp_dir().join(format!("srt-{}-{tag}-{}", env!("CARGO_CRATE_NAME"), std::process::id()));
    let _ = std::fs::remove_dir_all(&p);
    std::fs::create_dir_all(p.join("w")).unwrap();
    std::fs::write(p.join("s.json"), BASE).unwrap();
    Dir(p.canonicalize().unwrap())
}

/// `srt` in `d/w` with HOME=`d`, no stdin, and none of the caller's srt variables.
pub fn srt(d: &Path) -> Command {
    in_scratch(Command::new(env!("CARGO_BIN_EXE_srt")), d)
}

/// [`srt`] from a copy any user may execute (the build tree may sit in a directory only its
/// owner can enter, as CI's fresh clone does): for a test that drops to another uid.
pub fn srt_for_any_user(d: &Path) -> Command {
    let copy = srt_tests::executable_copy(Path::new(env!("CARGO_BIN_EXE_srt")), "srt-any-user");
    in_scratch(Command::new(copy), d)
}

fn in_scratch(mut c: Command, d: &Path) -> Command {
    c.current_dir(d.join("w"))
        .env("HOME", d)
        .env_remove("SRT_DEBUG")
        .env_remove("SRT_LOG")
        .env_remove("SRT_SETTINGS_PATH")
        .stdin(Stdio::null());
    c
}

/// A finished command: exit code (-1 for a signal), stdout, stderr.
pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `c` to its end.
pub fn run(c: &mut Command) -> Out {
    let o = c.output().unwrap();
    Out {
        code: o.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&o.stdout).into(),
        stderr: String::from_utf8_lossy(&o.stderr).into(),
    }
}

/// Runs `c`: exit code, stdout, stderr.
pub fn out(c: &mut Command) -> (i32, String, String) {
    let o = run(c);
    (o.code, o.stdout, o.stderr)
}

/// `srt` as the network tests run it: in `dir/w` (also its HOME), as uid 65534 when
/// `nobody`, with `--network-mode mode -s settings`, allowed.test and evil.test resolved to
/// loopback, running `script`; `D` names `dir`.
pub fn srt_resolving(dir: &Path, mode: &str, nobody: bool, settings: &Path, script: &str) -> Command {
    let bin = Path::new(env!("CARGO_BIN_EXE_srt"));
    let mut c = if nobody { srt_tests::command_as(bin, 65534) } else { Command::new(bin) };
    c.current_dir(dir.join("w"))
        .env("HOME", dir.join("w"))
        .env("D", dir)
        .env_remove("SRT_SETTINGS_PATH")
        .env_remove("SRT_DEBUG")
        .args(["--network-mode", mode, "-s"])
        .arg(settings)
        .args(["--resolve", "allowed.test:*:127.0.0.1", "--resolve", "evil.test:*:127.0.0.1", "-c", script])
        .stdin(Stdio::null());
    c
}

/// Runs `c`: exit code and stdout followed by stderr.
pub fn out_all(c: &mut Command) -> (i32, String) {
    let (code, stdout, stderr) = out(c);
    (code, stdout + &stderr)
}
