//! Outside review, findings 6 and 7: code planted for the host's own `git`. `.git/hooks`
//! and `.git/config` are protected only when `.git` exists at launch (6), and git reads
//! configuration from places other than `.git/config`: a `commondir` redirect,
//! `config.worktree`, a submodule's git dir under `.git/modules`, and W itself made to
//! look like a repository (7).
//!
//! After the run each check runs `git` on the host in W, as the scenario's user (as a
//! developer would; git refuses repositories owned by someone else), and asserts that the
//! program the command planted (`touch O/pwned`) did not run.

use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::harness::{Env, Output, Scenario};
use crate::escapes;

/// `program` in W as host git would run there: HOME the scenario's, no system or global
/// config, no GIT_DIR or GIT_WORK_TREE, no stdin.
pub(super) fn host_git_env(e: &Env, program: &str) -> Command {
    let mut c = Command::new(program);
    c.current_dir(&e.w)
        .env("HOME", &e.root)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env_remove("GIT_DIR")
        .env_remove("GIT_WORK_TREE")
        .stdin(Stdio::null());
    c
}

/// Runs `git args...` on the host in W as the scenario's user, with no system or global
/// config; returns its exit status and output. Killed after 20 s.
pub(super) fn host_git(e: &Env, args: &[&str]) -> (bool, String) {
    let mut c = host_git_env(e, "git");
    c.args(args);
    run_as_user(c, e, "git must be installed on the host (scripts/deps.sh)")
}

/// Runs `c` as the scenario's user, its output captured; killed after 20 s. Its exit
/// status and output.
pub(super) fn run_as_user(mut c: Command, e: &Env, missing: &str) -> (bool, String) {
    c.stdout(Stdio::piped()).stderr(Stdio::piped());
    if let Some(uid) = e.uid {
        c.uid(uid).gid(uid);
    }
    let mut child = c.spawn().expect(missing);
    let start = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(20) {
            let _ = child.kill();
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let out = child.wait_with_output().unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    (out.status.success(), text)
}

/// Setup: `git args...` on the host in W as the scenario's user; it must succeed.
pub(super) fn setup_git(e: &Env, args: &[&str]) {
    let (ok, text) = host_git(e, args);
    assert!(ok, "setup: git {args:?} failed: {text}");
}

/// Setup: a repository made by the host in W (`git init`).
pub(super) fn host_repo(e: &Env) {
    setup_git(e, &["init", "-q"]);
}

/// Setup: the host's repository in W with a submodule's git dir in .git/modules/sub
/// (W/sub/.git is a file naming it), as `git submodule` lays them out.
fn host_repo_with_submodule(e: &Env) {
    host_repo(e);
    e.dir(&e.w(".git/modules"));
    setup_git(e, &["init", "-q", "--separate-git-dir=.git/modules/sub", "sub"]);
}

/// After the run, `git args` on the host must not have run the planted `touch O/<marker>`.
pub(super) fn git_runs_nothing(
    args: &'static [&'static str],
    marker: &'static str,
) -> impl Fn(&Env, &Output) -> Result<(), String> {
    move |e, _| {
        let (_, text) = host_git(e, args);
        if e.o(marker).exists() {
            Err(format!("host `git {}` ran a program the command planted (O/{marker} exists): {text}", args.join(" ")))
        } else {
            Ok(())
        }
    }
}

pub(super) const COMMIT: &[&str] =
    &["-c", "user.email=a@b", "-c", "user.name=n", "commit", "--allow-empty", "-qm", "x"];
pub(super) const STATUS: &[&str] = &["status"];
const SUB_STATUS: &[&str] = &["-C", "sub", "status"];
const SUB_COMMIT: &[&str] =
    &["-C", "sub", "-c", "user.email=a@b", "-c", "user.name=n", "commit", "--allow-empty", "-qm", "x"];

/// Shell for the command: writes an executable hook at `$1` that touches `$O/$2`.
pub(super) const HOOK: &str = r#"hook() { printf '#!/bin/sh\ntouch "%s/%s"\n' "$O" "$2" > "$1" && chmod +x "$1"; }"#;

/// Shell for the command: a git config at `$1` whose fsmonitor touches `$O/$2`.
pub(super) const FSMONITOR: &str = r#"fsmon() { printf '[core]\n\tfsmonitor = touch "%s/%s"\n' "$O" "$2" >> "$1"; }"#;

fn attempt(cmd: &str) -> Scenario {
    Scenario::new(&format!("{HOOK}; {FSMONITOR}; {cmd}")).fails()
}

escapes! {
    // finding 6: no .git at launch, so .git/hooks is not protected
    hook_in_repo_made_by_the_command => attempt("git init -q && hook .git/hooks/pre-commit pwned")
        .check(git_runs_nothing(COMMIT, "pwned"));
    // finding 6: nor is .git/config
    fsmonitor_in_repo_made_by_the_command => attempt(r#"git init -q && git config core.fsmonitor "touch $O/pwned2""#)
        .check(git_runs_nothing(STATUS, "pwned2"));

    // finding 7: .git/commondir points git at a config the command wrote
    commondir_redirects_config => attempt(
        r#"mkdir -p build/.g && cp -r .git/HEAD .git/objects .git/refs build/.g/ && fsmon build/.g/config pwned && echo "$PWD/build/.g" > .git/commondir"#)
        .setup(host_repo).check(git_runs_nothing(STATUS, "pwned"));
    // finding 7: the same for hooks: commondir's hooks/ replaces .git/hooks
    commondir_redirects_hooks => attempt(
        r#"mkdir -p build/.g/hooks && cp -r .git/HEAD .git/objects .git/refs .git/config build/.g/ && hook build/.g/hooks/pre-commit pwned && echo "$PWD/build/.g" > .git/commondir"#)
        .setup(host_repo).check(git_runs_nothing(COMMIT, "pwned"));
    // finding 7: config.worktree, read when extensions.worktreeConfig is on (sparse checkouts)
    config_worktree => attempt("fsmon .git/config.worktree pwned")
        .setup(|e| {
            host_repo(e);
            setup_git(e, &["config", "core.repositoryformatversion", "1"]);
            setup_git(e, &["config", "extensions.worktreeConfig", "true"]);
        })
        .check(git_runs_nothing(STATUS, "pwned"));
    // finding 7: a submodule's git dir lives in .git/modules, below the search
    submodule_gitdir_config => attempt("fsmon .git/modules/sub/config pwned")
        .setup(host_repo_with_submodule)
        .check(git_runs_nothing(SUB_STATUS, "pwned"));
    // finding 7: and its hooks
    submodule_gitdir_hook => attempt("hook .git/modules/sub/hooks/pre-commit pwned")
        .setup(host_repo_with_submodule)
        .check(git_runs_nothing(SUB_COMMIT, "pwned"));
    // finding 7: no .git at launch; W itself made to look like a git dir whose config
    // names W as its work tree
    w_made_a_git_dir => attempt(
        r#"mkdir -p objects refs/heads && echo "ref: refs/heads/main" > HEAD && printf '[core]\n\tbare = false\n\tworktree = %s\n' "$PWD" > config && fsmon config pwned"#)
        .check(|e, _| {
            let (ok, text) = host_git(e, &["rev-parse", "--absolute-git-dir"]);
            if ok && text.trim() == e.w.to_str().unwrap() {
                Err(format!("host git takes W for a git dir the command made: {text}"))
            } else {
                Ok(())
            }
        })
        .check(git_runs_nothing(STATUS, "pwned"));
}
