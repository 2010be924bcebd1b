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

    // the pool directories not handed out have MakeDir too: what the command makes there by
    // name (the per-run pool in `.`, a shelf it can name) is walked like a handed-out tree
    native_directories_in_pool_directories_not_handed_out_are_checked =>
        Scenario::new(&plant_in_pool()).prints("PLANTED").check(nothing_planted_left);
    // a symlink (made by the supervisor) below a pool directory leads the kernel back up:
    // Landlock judges the directory the name lands in, which grants no MakeDir
    native_bit_through_a_symlink_below_a_new_directory_makes_nothing_above =>
        Scenario::new(&format!("mkdir n && ln -s .. n/up && {}", raw_mkdir(&["n/up/.claude"])))
            .fails()
            .absent("w/.claude");
    native_bit_through_dot_dot_below_a_new_directory_makes_nothing_above =>
        Scenario::new(&format!("mkdir n && {}", raw_mkdir(&["n/a", "n/a/../../.vscode"])))
            .fails()
            .absent("w/.vscode");
    // a directory the kernel made, renamed to a protected name in `.`: the supervisor
    // judges the rename as it judges a mkdir
    native_directory_renamed_to_a_protected_name_is_refused =>
        Scenario::new(&format!(
            "mkdir n && {} && echo x > n/a/tasks.json && mv n/a .vscode",
            raw_mkdir(&["n/a"])
        ))
        .fails()
        .absent("w/.vscode/tasks.json");
    // a tree the kernel made, moved into a directory that existed at launch and renamed
    // there to a protected name one level down
    native_tree_moved_into_an_existing_directory_is_checked =>
        Scenario::new(&format!(
            "{} && echo '{{}}' > n/a/.claude/settings.json && mv n/a sub/a && echo MOVED",
            raw_mkdir(&["n/a", "n/a/.claude"]).replace("/usr/bin/python3", "mkdir n && /usr/bin/python3")
        ))
        .setup(|e: &Env| e.dir(&e.w("sub")))
        .prints("MOVED")
        .absent("w/sub/a/.claude/settings.json");

    // the check moves aside a directory with a protected name made or changed during the
    // run; a user's own one, older than the run, must not reach a walk with a fresh ctime:
    // the command cannot chmod it, nor move a tree holding it (then walked whole), and srt's
    // own opening up of a locked one (a fchmod, a ctime) in one walk never meets a second
    users_protected_directory_is_not_moved_aside_by_the_check =>
        Scenario::new("chmod 755 sub/in/.vscode; mv sub sub2; mv sub/in sub/in2; echo DONE")
            .setup(|e: &Env| users_vscode(e, "sub/in", 0o555))
            .prints("DONE")
            .check(users_vscode_kept("sub/in"));
}

/// Python that makes, with the native bit, in every pool directory the command can name
/// (the per-run pool `.srt-*` in `.`, a shelf in the state directory), a `.claude` with
/// settings and a bare git repository whose config runs a program; prints `PLANTED n`.
const PLANT_IN_POOL: &str = r#"import ctypes, glob, os
l = ctypes.CDLL(None, use_errno=True)
NR, NATIVE = MKDIRAT, 1 << 30
def mk(p):
    r = l.syscall(NR, -100, p.encode(), 0o755 | NATIVE)
    return r == 0 or print("refused", p, ctypes.get_errno())
state = os.environ.get("XDG_STATE_HOME") or os.path.expanduser("~/.local/state")
ds = sorted(glob.glob(".srt-*/d*") + glob.glob(state + "/srt/pool/*/d*") + glob.glob(state + "/srt/*/pool/*/d*"))
print("pool dirs", ds)
n = 0
for d in ds:
    if mk(d + "/.claude"):
        open(d + "/.claude/settings.json", "w").write("{\"hooks\":{}}")
        n += 1
    if mk(d + "/r") and mk(d + "/r/objects") and mk(d + "/r/refs"):
        open(d + "/r/HEAD", "w").write("ref: refs/heads/main\n")
        open(d + "/r/config", "w").write("[core]\n\tfsmonitor = touch " + os.environ["O"] + "/evidence\n")
        n += 1
print("PLANTED", n)
"#;

/// Nothing below the scenario's root is a `.claude/settings.json` or a git `config` with
/// `fsmonitor` that the check left in place (moved aside: renamed `*.srt-quarantined*`).
fn nothing_planted_left(e: &Env, _: &super::harness::Output) -> Result<(), String> {
    fn walk(p: &std::path::Path, found: &mut Vec<String>) {
        let Ok(rd) = std::fs::read_dir(p) else { return };
        for ent in rd.flatten() {
            let path = ent.path();
            let Ok(m) = path.symlink_metadata() else { continue };
            let name = ent.file_name().to_string_lossy().into_owned();
            if m.is_dir() {
                if !name.contains("srt-quarantined") {
                    walk(&path, found);
                }
                continue;
            }
            let parent = p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            if name == "settings.json" && parent == ".claude" {
                found.push(path.display().to_string());
            }
            if name == "config" && std::fs::read_to_string(&path).unwrap_or_default().contains("fsmonitor") {
                found.push(path.display().to_string());
            }
        }
    }
    let mut found = Vec::new();
    walk(&e.root, &mut found);
    if found.is_empty() {
        Ok(())
    } else {
        Err(format!("left in place: {found:?}"))
    }
}

fn plant_in_pool() -> String {
    format!("/usr/bin/python3 -c '{}'", PLANT_IN_POOL.replace("MKDIRAT", &libc::SYS_mkdirat.to_string()))
}

/// The user's own `.vscode` (made before the run, with its `tasks.json`) is still in place
/// and not renamed `*.srt-quarantined`.
fn users_vscode_kept(rel: &'static str) -> impl Fn(&Env, &super::harness::Output) -> Result<(), String> {
    move |e: &Env, _| {
        let t = e.w(rel).join(".vscode/tasks.json");
        let left: Vec<String> = std::fs::read_dir(e.w(rel))
            .map(|rd| rd.flatten().map(|d| d.file_name().to_string_lossy().into_owned()).collect())
            .unwrap_or_default();
        if t.exists() {
            Ok(())
        } else {
            Err(format!("the user's .vscode was moved aside: {left:?}"))
        }
    }
}

fn users_vscode(e: &Env, rel: &str, mode: u32) {
    use std::os::unix::fs::PermissionsExt;
    e.file(&e.w(&format!("{rel}/.vscode/tasks.json")), "{}");
    let p = e.w(&format!("{rel}/.vscode"));
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).unwrap();
}
