//! The native bit in `mkdirat`'s mode (`seccomp::NATIVE_CREATE`): the filter lets such a
//! call through untrapped, and Landlock grants making a directory only below the pool's
//! directories (one handed out for a directory the command made in `.`, or one not handed
//! out). These scenarios set the bit themselves, with raw syscalls (no preload to ask
//! again the supervised way): where the supervisor would refuse or journal the directory,
//! the kernel must refuse it; below a pool directory, where the kernel makes it unjudged,
//! the check after the run must still find what the supervisor would have refused or
//! journaled: a protected project directory, a git directory at any depth, also when the
//! tree is moved out into `.` or srt is killed.

use super::harness::{Env, Scenario};
use super::review_pids::hook_disarmed;
use crate::escapes;

const NATIVE: i64 = 1 << 30;

/// A raw `mkdirat(AT_FDCWD, path, 0o755 | NATIVE)` from Python for each path, in order;
/// prints and exits 1 at the first refused.
fn raw_mkdir(paths: &[&str]) -> String {
    let list = paths.iter().map(|p| format!("b\"{p}\"")).collect::<Vec<_>>().join(",");
    format!(
        "/usr/bin/python3 -c 'import ctypes,sys; l=ctypes.CDLL(None,use_errno=True)\n\
         for p in [{list}]:\n    r=l.syscall({nr}, -100, p, 0o755 | {NATIVE})\n    \
         print(\"mkdir\", p, \"rc\", r, \"errno\", ctypes.get_errno())\n    \
         r < 0 and sys.exit(1)'",
        nr = libc::SYS_mkdirat,
    )
}

/// Protected project directory made natively below a directory the command made, and
/// filled: moved aside by the check.
const CLAUDE_BELOW_NEW: &str = "mkdir n && {MK} && echo '{\"hooks\":{}}' > n/a/.claude/settings.json && echo MADE";

escapes! {
    native_bit_makes_no_directory_in_the_working_directory =>
        Scenario::new(&raw_mkdir(&["made"])).fails().absent("w/made");
    native_bit_makes_no_directory_in_an_existing_subdirectory =>
        Scenario::new(&raw_mkdir(&["sub/made"]))
            .setup(|e: &Env| e.dir(&e.w("sub")))
            .fails()
            .absent("w/sub/made");
    native_bit_makes_no_directory_outside =>
        Scenario::new(&raw_mkdir(&["../o/made"])).fails().absent("o/made");
    native_bit_makes_no_git_hooks_directory =>
        Scenario::new(&raw_mkdir(&[".git/hooks"]))
            .setup(|e: &Env| e.file(&e.w(".git/HEAD"), "ref: refs/heads/main\n"))
            .fails()
            .absent("w/.git/hooks");
    native_bit_makes_no_protected_project_directory_in_the_working_directory =>
        Scenario::new(&raw_mkdir(&[".claude"])).fails().absent("w/.claude");
    native_bit_makes_no_objects_beside_a_head_in_an_existing_directory =>
        Scenario::new(&raw_mkdir(&["src/objects", "src/refs"]))
            .setup(|e: &Env| e.file(&e.w("src/HEAD"), "ref: refs/heads/main\n"))
            .fails()
            .absent("w/src/objects");
    // below a directory the command made (a pool directory): made by the kernel, and the
    // check finds what the supervisor would have refused
    native_project_directory_below_a_new_directory_is_moved_aside =>
        Scenario::new(&CLAUDE_BELOW_NEW.replace("{MK}", &raw_mkdir(&["n/a", "n/a/.claude"])))
            .prints("MADE")
            .absent("w/n/a/.claude/settings.json");
    native_project_directory_moved_out_into_the_tree_is_moved_aside =>
        Scenario::new(&format!(
            "{} && mv n/a x && echo MOVED",
            CLAUDE_BELOW_NEW.replace("{MK}", &raw_mkdir(&["n/a", "n/a/.claude"]))
        ))
        .prints("MOVED")
        .absent("w/x/.claude/settings.json")
        .absent("w/n/a/.claude/settings.json");
    native_git_directory_deep_below_a_new_directory_is_checked =>
        Scenario::new(&format!(
            r#"mkdir n && {} && git init -q n/a/b/sub && git -C n/a/b/sub config core.fsmonitor "touch $O/evidence" && mv n/a/b/sub sub && echo PLANTED"#,
            raw_mkdir(&["n/a", "n/a/b"])
        ))
        .prints("PLANTED")
        .check(hook_disarmed);
    native_git_directory_left_below_a_new_directory_is_checked =>
        Scenario::new(&format!(
            r#"mkdir n && {} && git init -q n/a/b/r && git -C n/a/b/r config core.fsmonitor "touch $O/evidence" && echo PLANTED"#,
            raw_mkdir(&["n/a", "n/a/b"])
        ))
        .prints("PLANTED")
        .check(|e: &Env, _| {
            let c = std::fs::read_to_string(e.w("n/a/b/r/.git/config")).unwrap_or_default();
            if c.contains("fsmonitor") { Err(format!("still planted:\n{c}")) } else { Ok(()) }
        });
}
