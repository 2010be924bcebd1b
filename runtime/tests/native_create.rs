//! The create preload in both network modes: the command's dynamically linked programs get
//! srt's library in `LD_PRELOAD` (after an inherited one), files below directories made
//! during the run are made by the kernel without a supervisor round trip, files elsewhere
//! still are made by the supervisor, `--no-preload` leaves it out, and a state directory in
//! the shared temporary directory keeps nothing once the run is over.

#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::path::{Path, PathBuf};
use std::process::Command;

const SETTINGS: &str = r#"{"network":{"allowedDomains":[],"deniedDomains":[]},
 "filesystem":{"denyRead":[],"allowWrite":["."],"denyWrite":[]}}"#;

fn dir(tag: &str) -> PathBuf {
    let d = srt_tests::scratch_dir(tag);
    std::fs::create_dir_all(d.join("w")).unwrap();
    std::fs::write(d.join("s.json"), SETTINGS).unwrap();
    d.canonicalize().unwrap()
}

/// Runs `cmd` under srt (with `flags` before `-c`) in `d/w` with HOME `d`; returns
/// (exit code, stdout, stderr).
fn srt(d: &Path, mode: &str, flags: &[&str], env: &[(&str, &str)], cmd: &str) -> (i32, String, String) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_srt"));
    c.current_dir(d.join("w")).env("HOME", d).env_remove("LD_PRELOAD").env_remove("XDG_STATE_HOME");
    for (k, v) in env {
        c.env(k, v);
    }
    let out = c
        .arg(format!("--network-mode={mode}"))
        .arg("-s")
        .arg(d.join("s.json"))
        .args(flags)
        .args(["-c", cmd])
        .output()
        .unwrap();
    let s = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    (out.status.code().unwrap_or(-1), s(&out.stdout), s(&out.stderr))
}

/// Supervised `openat` calls, from srt's `-d` log (one the supervisor lets the kernel
/// perform names no path).
fn supervised_opens(log: &str) -> usize {
    log.lines().filter(|l| l.contains("mediated") && l.contains("syscall=\"openat\"")).count()
}

const MAKE_FILES: &str = "mkdir n && for i in $(seq 40); do echo $i > n/f$i; done && \
    python3 -c 'open(\"n/py\", \"w\").write(\"x\")' && echo top > top && cat n/f40 n/py top";

fn files_below_new_directories_are_made_by_the_kernel(mode: &str) {
    let d = dir(&format!("native-create-{mode}"));
    let (code, out, log) = srt(&d, mode, &["-d"], &[], MAKE_FILES);
    assert_eq!(code, 0, "{out}{log}");
    assert_eq!(out, "40\nxtop\n");
    // the one in the directory that existed at launch, and none of the 41 below n/
    assert_eq!(supervised_opens(&log), 1, "opens below the new directory reached the supervisor:\n{log}");
    // a directory that existed at launch: refused by Landlock, asked again, made by srt
    assert!(log.lines().any(|l| l.contains("w/top") && l.contains("rule=\"created\"")), "{log}");
    let (code, out, log) = srt(&d, mode, &["-d", "--no-preload"], &[], &format!("rm -rf n top && {MAKE_FILES}"));
    assert_eq!(code, 0, "{out}{log}");
    assert_eq!(out, "40\nxtop\n");
    assert!(supervised_opens(&log) >= 42, "without the preload every create is supervised:\n{log}");
}

#[test]
fn files_below_new_directories_are_made_by_the_kernel_landlock() {
    files_below_new_directories_are_made_by_the_kernel("landlock");
}

#[test]
fn files_below_new_directories_are_made_by_the_kernel_namespace() {
    files_below_new_directories_are_made_by_the_kernel("namespace");
}

/// Supervised `mkdir`/`mkdirat` calls that made a directory, from srt's `-d` log.
fn supervised_mkdirs(log: &str) -> usize {
    let made = |l: &&str| l.contains("mediated") && l.contains("syscall=\"mkdir") && l.contains("rule=\"created\"");
    log.lines().filter(made).count()
}

/// Directories below one the command made (one of the pool's, moved there) are made by the
/// kernel too; the one in the working directory by the supervisor.
fn directories_below_new_directories_are_made_by_the_kernel(mode: &str) {
    let d = dir(&format!("native-mkdir-{mode}"));
    let cmd = "mkdir n && mkdir -p n/a/b/c && python3 -c 'import os; os.makedirs(\"n/p/q\")' && ls n n/a/b";
    let (code, out, log) = srt(&d, mode, &["-d"], &[], cmd);
    assert_eq!(code, 0, "{out}{log}");
    assert_eq!(out, "n:\na\np\n\nn/a/b:\nc\n");
    assert_eq!(supervised_mkdirs(&log), 1, "directories below the new one reached the supervisor:\n{log}");
    let (code, out, log) = srt(&d, mode, &["-d", "--no-preload"], &[], &format!("rm -rf n && {cmd}"));
    assert_eq!(code, 0, "{out}{log}");
    assert_eq!(supervised_mkdirs(&log), 6, "without the preload every directory is supervised:\n{log}");
}

#[test]
fn directories_below_new_directories_are_made_by_the_kernel_landlock() {
    directories_below_new_directories_are_made_by_the_kernel("landlock");
}

#[test]
fn directories_below_new_directories_are_made_by_the_kernel_namespace() {
    directories_below_new_directories_are_made_by_the_kernel("namespace");
}

/// Directories the program made get their times and owner through a descriptor (what
/// `tar x` sets on each directory it makes, by path): no round trip, the same result. A
/// directory it did not make is passed on as the program asked, and refused outside
/// allowWrite.
const DIR_METADATA: &str = r#"python3 -c '
import os
os.mkdir("dm"); os.mkdir("dm/sub")
os.utime("dm/sub", (1000000000, 1000000000), follow_symlinks=False)
os.chown("dm/sub", os.getuid(), os.getgid(), follow_symlinks=False)
os.utime("dm", (1200000000, 1200000000))
print(int(os.stat("dm/sub").st_mtime), int(os.stat("dm").st_mtime))
try:
    os.utime("..", (1, 1)); print("outside CHANGED")
except OSError: print("outside refused")
'"#;

/// Supervised times and owner calls, from srt's `-d` log (a call judged before names no
/// path there).
fn supervised_metadata(log: &str) -> usize {
    let meta = ["syscall=\"utimensat\"", "syscall=\"fchownat\"", "syscall=\"lchown\""];
    log.lines().filter(|l| l.contains("mediated") && meta.iter().any(|m| l.contains(m))).count()
}

fn own_directories_metadata_through_a_descriptor(mode: &str) {
    let d = dir(&format!("native-dir-meta-{mode}"));
    let (code, out, log) = srt(&d, mode, &["-d"], &[], DIR_METADATA);
    assert_eq!(code, 0, "{out}{log}");
    assert_eq!(out, "1000000000 1200000000\noutside refused\n", "{log}");
    // only the one on `..`, in landlock mode (namespace mode traps none)
    let outside = usize::from(mode == "landlock");
    assert_eq!(supervised_metadata(&log), outside, "metadata of the program's own directories was supervised:\n{log}");
    if mode == "landlock" {
        // the same calls without the library: each one a round trip
        let (code, out, log) = srt(&d, mode, &["-d", "--no-preload"], &[], &format!("rm -rf dm && {DIR_METADATA}"));
        assert_eq!(code, 0, "{out}{log}");
        assert_eq!(out, "1000000000 1200000000\noutside refused\n", "{log}");
        assert_eq!(supervised_metadata(&log), 4, "{log}");
    }
}

#[test]
fn own_directories_metadata_through_a_descriptor_landlock() {
    own_directories_metadata_through_a_descriptor("landlock");
}

#[test]
fn own_directories_metadata_through_a_descriptor_namespace() {
    own_directories_metadata_through_a_descriptor("namespace");
}

/// A dynamically linked musl program (Alpine-based images): musl's loader honours
/// `LD_PRELOAD` too, the library finds `syscall` and `__errno_location` in musl, and the
/// program's files below a new directory are made by the kernel; a create outside is still
/// refused and `fopen` still works.
const MUSL_PROGRAM: &str = r#"#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
int main(void) {
    char p[64], l[512];
    int n = 0;
    mkdir("m", 0755);
    for (int i = 0; i < 40; i++) {
        snprintf(p, sizeof p, "m/f%d", i);
        int fd = open(p, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0) { printf("open %s: %s\n", p, strerror(errno)); return 1; }
        close(fd);
    }
    FILE *f = fopen("m/g", "w");
    int out = open("../outside", O_WRONLY | O_CREAT, 0644);
    FILE *maps = fopen("/proc/self/maps", "r");
    while (maps && fgets(l, sizeof l, maps)) n += strstr(l, "/native-create-") && strstr(l, ".so");
    printf("fopen %s, outside %s, mapped %s\n", f ? "ok" : "failed", out < 0 ? "refused" : "MADE", n ? "yes" : "no");
    return 0;
}
"#;

fn musl_programs_get_the_preload(mode: &str) {
    let d = dir(&format!("native-create-musl-{mode}"));
    std::fs::write(d.join("t.c"), MUSL_PROGRAM).unwrap();
    let built = Command::new("musl-gcc").arg("-o").arg(d.join("w/t")).arg(d.join("t.c")).output();
    if !built.as_ref().is_ok_and(|o| o.status.success()) {
        srt_tests::skip("musl_programs_get_the_preload", "musl-gcc is missing (scripts/deps.sh installs musl-tools)");
        return;
    }
    let (code, out, log) = srt(&d, mode, &["-d"], &[], "./t");
    assert_eq!((code, out.as_str()), (0, "fopen ok, outside refused, mapped yes\n"), "{log}");
    // musl's own open() is syscall 2 (open), its fopen() too: the supervised ones are that
    // fopen and the create outside (refused by Landlock, asked again, refused), none of the
    // 40 below m/
    let opens = |log: &str| {
        log.lines()
            .filter(|l| l.contains("mediated") && (l.contains("syscall=\"open\"") || l.contains("syscall=\"openat\"")))
            .count()
    };
    assert!(opens(&log) <= 2, "a musl program's creates below m/ reached the supervisor:\n{log}");
    assert!(log.lines().any(|l| l.contains("/outside") && l.contains("outside allowWrite")), "{log}");
    let (code, out, log) = srt(&d, mode, &["-d", "--no-preload"], &[], "rm -rf m && ./t");
    assert_eq!((code, out.as_str()), (0, "fopen ok, outside refused, mapped no\n"), "{log}");
    assert!(opens(&log) >= 42, "without the preload every create is supervised:\n{log}");
}

#[test]
fn musl_programs_get_the_preload_landlock() {
    musl_programs_get_the_preload("landlock");
}

#[test]
fn musl_programs_get_the_preload_namespace() {
    musl_programs_get_the_preload("namespace");
}

/// A shared library every system has, harmless to preload.
fn some_library() -> String {
    let out = Command::new("python3")
        .args(["-c", "import ctypes.util, ctypes, os; n = ctypes.util.find_library('m'); print(n)"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

fn the_environment_names_the_library(mode: &str) {
    let d = dir(&format!("native-create-env-{mode}"));
    let show = r#"echo "[${LD_PRELOAD-unset}]"; grep -c native-create /proc/self/maps"#;
    let (code, out, err) = srt(&d, mode, &[], &[], show);
    assert_eq!(code, 0, "{out}{err}");
    // where no environment moves it: /tmp/srt-state-<uid>, not the test's HOME
    let state = PathBuf::from(format!("/tmp/srt-state-{}", unsafe { libc::getuid() }));
    // (other builds' libraries may be there too, each under its own name)
    let first = out.lines().next().unwrap();
    let named = first.trim_start_matches('[').trim_end_matches(']');
    let lib = PathBuf::from(named);
    assert_eq!(lib.parent(), Some(state.as_path()), "{first}");
    assert!(lib.file_name().unwrap().to_string_lossy().starts_with("native-create-"), "{first}");
    assert!(lib.is_file(), "{first} is not in {}", state.display());
    assert_ne!(out.lines().nth(1).unwrap(), "0", "the library is not loaded: {out}");
    // an inherited preload comes first
    let m = some_library();
    let (_, out, _) = srt(&d, mode, &[], &[("LD_PRELOAD", m.as_str())], show);
    assert_eq!(out.lines().next().unwrap(), format!("[{m}:{}]", lib.display()));
    // --no-preload: the environment as it was
    let (_, out, _) = srt(&d, mode, &["--no-preload"], &[], show);
    assert_eq!(out, "[unset]\n0\n");
    let (_, out, _) = srt(&d, mode, &["--no-preload"], &[("LD_PRELOAD", m.as_str())], show);
    assert_eq!(out.lines().next().unwrap(), format!("[{m}]"));
}

#[test]
fn the_environment_names_the_library_landlock() {
    the_environment_names_the_library("landlock");
}

#[test]
fn the_environment_names_the_library_namespace() {
    the_environment_names_the_library("namespace");
}

/// No usable home (HOME is a file): the state directory is `$TMPDIR/srt-state-<uid>`, and
/// it goes when the run is over: the library is in `/tmp/srt-state-<uid>` as for every run.
fn a_shared_state_directory_keeps_nothing(mode: &str) {
    let d = dir(&format!("native-create-tmp-{mode}"));
    let tmp = d.join("tmp");
    std::fs::create_dir(&tmp).unwrap();
    std::fs::write(d.join("homefile"), "").unwrap();
    let mut c = Command::new(env!("CARGO_BIN_EXE_srt"));
    let out = c
        .current_dir(d.join("w"))
        .env("HOME", d.join("homefile"))
        .env("TMPDIR", &tmp)
        .env_remove("XDG_STATE_HOME")
        .env_remove("LD_PRELOAD")
        .arg(format!("--network-mode={mode}"))
        .arg("-s")
        .arg(d.join("s.json"))
        .args(["-c", r#"echo "$LD_PRELOAD"; mkdir n && echo x > n/f && cat n/f"#])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}{}", String::from_utf8_lossy(&out.stderr));
    let state = format!("/tmp/srt-state-{}/native-create-", unsafe { libc::getuid() });
    let first = text.lines().next().unwrap_or_default();
    assert!(first.starts_with(&state) && first.ends_with(".so"), "{text}");
    assert!(text.ends_with("x\n"), "{text}");
    let left: Vec<_> = std::fs::read_dir(&tmp).unwrap().flatten().map(|e| e.file_name()).collect();
    assert!(left.is_empty(), "left in TMPDIR: {left:?}");
}

#[test]
fn a_shared_state_directory_keeps_nothing_landlock() {
    a_shared_state_directory_keeps_nothing("landlock");
}

#[test]
fn a_shared_state_directory_keeps_nothing_namespace() {
    a_shared_state_directory_keeps_nothing("namespace");
}

/// A program built with `gcc -fsanitize=address` (libasan linked dynamically, gcc's
/// default) checks at start that its runtime comes first in the list of loaded libraries,
/// and aborts ("ASan runtime does not come first in initial library list") when another
/// library is preloaded: srt adds `verify_asan_link_order=0` to the command's ASAN_OPTIONS
/// with its library (LeakSanitizer needs `detect_leaks=0` either way: it cannot stop the
/// world under srt's filter).
fn asan_programs_run(mode: &str) {
    let d = dir(&format!("native-create-asan-{mode}"));
    std::fs::write(d.join("t.c"), "#include <stdio.h>\nint main(void){puts(\"asan ok\");return 0;}\n").unwrap();
    let built = Command::new("gcc")
        .args(["-fsanitize=address", "-o"])
        .arg(d.join("w/t"))
        .arg(d.join("t.c"))
        .output()
        .is_ok_and(|o| o.status.success());
    if !built {
        srt_tests::skip("asan_programs_run", "gcc cannot build with -fsanitize=address here");
        return;
    }
    for flags in [&[][..], &["--no-preload"][..]] {
        let (code, out, err) = srt(&d, mode, flags, &[("ASAN_OPTIONS", "detect_leaks=0")], "./t; echo $ASAN_OPTIONS");
        let options = if flags.is_empty() { "detect_leaks=0:verify_asan_link_order=0" } else { "detect_leaks=0" };
        assert_eq!((code, out.as_str()), (0, format!("asan ok\n{options}\n").as_str()), "{flags:?}: {err}");
        // ASAN_OPTIONS set by the command itself (a test runner, a Makefile, the user's
        // own `ASAN_OPTIONS=... ./t`) replaces srt's: the library's __asan_default_options
        // still lets the program start; an explicit verify_asan_link_order=1 still wins
        let (code, out, err) = srt(&d, mode, flags, &[], "ASAN_OPTIONS=detect_leaks=0 ./t");
        assert_eq!((code, out.as_str()), (0, "asan ok\n"), "{flags:?}, ASAN_OPTIONS set by the command: {err}");
    }
    let (code, _, err) = srt(&d, mode, &[], &[], "ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=1 ./t");
    assert_ne!(code, 0, "the command's verify_asan_link_order=1 stands: {err}");
}

#[test]
fn asan_programs_run_landlock() {
    asan_programs_run("landlock");
}

#[test]
fn asan_programs_run_namespace() {
    asan_programs_run("namespace");
}
