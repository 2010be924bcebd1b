//! Writes outside allowWrite and into denyWrite / mandatory-deny paths.

use serde_json::json;

use super::harness::Scenario;
use crate::escapes;

fn locked() -> Scenario {
    Scenario::new("")
        .with("filesystem.denyWrite", json!(["{W}/locked.txt", "{W}/future.txt"]))
        .setup(|e| e.file(&e.w("locked.txt"), "orig\n"))
}

fn attempt(cmd: &str) -> Scenario {
    let mut s = locked();
    s.cmd = cmd.into();
    s
}

escapes! {
    write_outside_allow_write => Scenario::new(r#"echo x > "$O/evil.txt""#).fails().absent("o/evil.txt");
    write_into_system_dir => Scenario::new("echo x > /usr/srt-escape-probe").fails().check(|_, _| {
        if std::path::Path::new("/usr/srt-escape-probe").exists() { Err("/usr/srt-escape-probe exists".into()) } else { Ok(()) }
    });
    overwrite_file_outside => Scenario::new(r#"echo evil > "$O/existing.txt""#)
        .setup(|e| e.file(&e.o("existing.txt"), "orig\n")).fails().holds("o/existing.txt", "orig\n");
    truncate_deny_write_file => attempt(": > locked.txt").fails().holds("w/locked.txt", "orig\n");
    append_deny_write_file => attempt("echo evil >> locked.txt").fails().holds("w/locked.txt", "orig\n");
    truncate_syscall_deny_write_file => attempt("truncate -s 0 locked.txt").fails().holds("w/locked.txt", "orig\n");
    rename_deny_write_file_away => attempt("mv locked.txt moved.txt").fails()
        .holds("w/locked.txt", "orig\n").absent("w/moved.txt");
    unlink_deny_write_file => attempt("rm -f locked.txt; test ! -e locked.txt").fails().holds("w/locked.txt", "orig\n");
    replace_deny_write_file_by_rename => attempt("echo evil > new.txt && mv -f new.txt locked.txt").fails()
        .holds("w/locked.txt", "orig\n");
    create_missing_deny_write_path => attempt("echo x > future.txt").fails().absent("w/future.txt");
    mkdir_missing_deny_write_path => attempt("mkdir future.txt").fails().absent("w/future.txt");
    symlink_at_missing_deny_write_path => attempt("ln -s /tmp future.txt").fails().absent("w/future.txt");
    mandatory_bashrc => Scenario::new("echo evil >> .bashrc").fails().absent("w/.bashrc");
    mandatory_git_hook => Scenario::new("echo evil > .git/hooks/pre-commit")
        .setup(|e| e.dir(&e.w(".git/hooks"))).fails().absent("w/.git/hooks/pre-commit");
    mandatory_git_config => Scenario::new("echo evil >> .git/config")
        .setup(|e| { e.dir(&e.w(".git/hooks")); e.file(&e.w(".git/config"), "[core]\n") })
        .fails().holds("w/.git/config", "[core]\n");
    mandatory_nested_repo_hook => Scenario::new("echo evil > sub/.git/hooks/pre-commit")
        .setup(|e| { e.dir(&e.w("sub/.git/hooks")); e.file(&e.w("sub/.git/HEAD"), "ref: x\n") })
        .fails().absent("w/sub/.git/hooks/pre-commit");
    mandatory_nested_bashrc => Scenario::new("echo evil >> a/b/.bashrc")
        .setup(|e| e.file(&e.w("a/b/.bashrc"), "orig\n")).fails().holds("w/a/b/.bashrc", "orig\n");
    rename_protected_parent => Scenario::new("mv .git gitx; mkdir -p .git/hooks && echo evil > .git/hooks/pre-commit")
        .setup(|e| { e.dir(&e.w(".git/hooks")); e.file(&e.w(".git/hooks/sample"), "s") })
        .fails().absent("w/gitx").absent("w/.git/hooks/pre-commit").holds("w/.git/hooks/sample", "s");
    remove_protected_dir => Scenario::new("rm -rf .git/hooks; test ! -e .git/hooks/sample")
        .setup(|e| { e.dir(&e.w(".git/hooks")); e.file(&e.w(".git/hooks/sample"), "s") })
        .fails().holds("w/.git/hooks/sample", "s");
    tmpdir_parent_escape => Scenario::new(r#"echo x > "$TMPDIR/../srt-escape-$PPID-tmp" && echo WROTE"#)
        .fails().lacks("WROTE");
    write_tmp_when_not_listed => Scenario::new("echo x > /tmp/srt-escape-probe-$$ && echo WROTE").fails().lacks("WROTE");
    device_node => Scenario::new("mknod dev c 1 3").fails().absent("w/dev");
}
