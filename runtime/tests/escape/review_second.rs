//! Second outside review: what the first round's fixes left open.
//!
//! - W made a bare repository while it has a `.git`: git falls back to W itself when
//!   `.git/HEAD` is invalid, and runs W/config.
//! - New repositories made anywhere in the writable tree (`git init vendor/lib`), registered
//!   in W's index as a submodule so that a host `git status` in W recurses into them, or made
//!   bare in a subdirectory: moved aside by the audit after the run ([`srt_runtime::git::audit`]).
//! - `core.worktree` leading out of W: a later host `git stash`/`checkout` writes there.
//! - A FIFO in a denyRead directory, opened with O_CREAT so that the supervisor opens it.
//! - Processes that keep changing their pid to outlast srt's kill loop.

use std::time::Duration;

use super::harness::{no_process_with, Env, Scenario};
use super::review_git::{git_runs_nothing, host_git, host_repo, setup_git, COMMIT, FSMONITOR, HOOK, STATUS};
use crate::escapes;

fn host_repo_with_commit(e: &Env) {
    host_repo(e);
    setup_git(e, COMMIT);
}

fn attempt(cmd: &str) -> Scenario {
    Scenario::new(&format!("{HOOK}; {FSMONITOR}; {cmd}"))
}

/// After the run, `git args` in W's subdirectory `dir` on the host must not run `touch O/marker`.
fn git_in_runs_nothing(
    dir: &'static str,
    args: &'static [&'static str],
    marker: &'static str,
) -> impl Fn(&Env, &super::harness::Output) -> Result<(), String> {
    move |e, _| {
        let mut all = vec!["-C", dir];
        all.extend_from_slice(args);
        let (_, text) = host_git(e, &all);
        if e.o(marker).exists() {
            Err(format!("host `git -C {dir} {}` ran a program the command planted: {text}", args.join(" ")))
        } else {
            Ok(())
        }
    }
}

/// The host's git must not take W itself for its git directory.
fn w_is_no_git_dir(e: &Env, _: &super::harness::Output) -> Result<(), String> {
    let (ok, text) = host_git(e, &["rev-parse", "--absolute-git-dir"]);
    if ok && text.trim() == e.w.to_str().unwrap_or_default() {
        Err(format!("host git takes W for a git dir the command made: {text}"))
    } else {
        Ok(())
    }
}

/// A process that forks and lets its parent exit, over and over, in 8 chains, for 10 s,
/// appending to W/alive while it lives; the command itself exits after half a second.
const HOPPER: &str = r#"/usr/bin/python3 - "srt-escape-hopper-$PWD" <<'PY' &
import os, time
start = time.time()
for _ in range(7):
    if os.fork() == 0:
        break
while time.time() - start < 10:
    if os.fork():
        os._exit(0)
    with open("alive", "a") as f:
        f.write("x")
PY
sleep 0.5; exit 0"#;

escapes! {
    // an existing repository: W/HEAD was not protected, and git falls back to W as a bare
    // repository when .git/HEAD is made invalid
    bare_fallback_beside_a_valid_git => attempt(
        r#"cp -r .git/objects .git/refs . && echo "ref: refs/heads/master" > HEAD && fsmon config pwned && echo garbage > .git/HEAD"#)
        .fails()
        .setup(host_repo_with_commit)
        .absent("w/HEAD")
        .check(w_is_no_git_dir);
    // a new repository in W's tree, recorded as a submodule in W's index (open data): a
    // host `git status` in W runs `git status` inside it
    new_repository_as_submodule => attempt(
        r#"git init -q vendor/lib && git -C vendor/lib config core.fsmonitor "touch $O/pwned; false" && git -C vendor/lib -c user.email=a@b -c user.name=n commit -q --allow-empty -m x && git update-index --add --cacheinfo 160000,$(git -C vendor/lib rev-parse HEAD),vendor/lib"#)
        .setup(host_repo_with_commit)
        .check(git_runs_nothing(STATUS, "pwned"))
        .check(git_in_runs_nothing("vendor/lib", STATUS, "pwned"));
    // the same where W had no repository at all: the command makes both
    new_superproject_and_submodule => attempt(
        r#"git init -q && git init -q vendor/lib && git -C vendor/lib config core.fsmonitor "touch $O/pwned; false" && git -C vendor/lib -c user.email=a@b -c user.name=n commit -q --allow-empty -m x && git update-index --add --cacheinfo 160000,$(git -C vendor/lib rev-parse HEAD),vendor/lib"#)
        .check(git_runs_nothing(STATUS, "pwned"));
    // a repository made below a directory that existed at launch (the kernel judges
    // creations there in landlock mode; the supervisor never sees the names)
    new_repository_below_an_existing_directory => attempt(
        r#"git init -q src/x && fsmon src/x/.git/config pwned && hook src/x/.git/hooks/pre-commit pwned2"#)
        .setup(|e| e.dir(&e.w("src")))
        .check(git_in_runs_nothing("src/x", STATUS, "pwned"))
        .check(git_in_runs_nothing("src/x", &["-c", "user.email=a@b", "-c", "user.name=n", "commit", "--allow-empty", "-qm", "x"], "pwned2"));
    // a bare repository in a subdirectory: HEAD, objects/, refs/ and a config
    bare_repository_in_a_subdirectory => attempt(
        r#"mkdir -p src/b/objects src/b/refs/heads && echo "ref: refs/heads/main" > src/b/HEAD && fsmon src/b/config pwned && hook src/b/hooks/post-update pwned"#)
        .setup(|e| e.dir(&e.w("src")))
        .absent("w/src/b/config")
        .absent("w/src/b/hooks/post-update");
    // core.worktree leading out of W: a host `git stash` writes the command's .bashrc there
    worktree_outside_w => attempt(
        r#"git init -q && git config core.worktree ../../o && b=$(echo "touch $O/pwned" | git hash-object -w --stdin) && git update-index --add --cacheinfo 100644,$b,.bashrc && git -c user.email=a@b -c user.name=n commit -qm x"#)
        .setup(|e| e.file(&e.o(".bashrc"), "original\n"))
        .check(|e, _| {
            host_git(e, &["stash", "-q"]);
            host_git(e, &["checkout", "-q", "--", "."]);
            Ok(())
        })
        .holds("o/.bashrc", "original\n");
    // the audit checks a worktree in a new nested repository the same way
    worktree_outside_from_nested_repository => attempt(
        r#"git init -q src/x && printf '[core]\n\tworktree = ../../../../o\n' >> src/x/.git/config"#)
        .setup(|e| e.dir(&e.w("src")))
        .absent("w/src/x/.git/config");
    // a FIFO in a denyRead directory, opened with O_CREAT: the supervisor opens it
    fifo_in_denied_directory => Scenario::new(&format!(
        "timeout 1 cat $O/secret/fifo; {}",
        crate::escape::harness::py("import os, time; fd = os.open(os.environ[\"O\"] + \"/secret/fifo\", os.O_RDONLY | os.O_CREAT); time.sleep(0.3); print(os.read(fd, 100))")))
        .with("filesystem.denyRead", serde_json::json!(["{O}/secret"]))
        .setup(|e| {
            e.dir(&e.o("secret"));
            let fifo = e.o("secret/fifo");
            assert!(std::process::Command::new("mkfifo").args(["-m", "666"]).arg(&fifo).status().unwrap().success());
            // a host process hands a secret to whoever opens the FIFO (bounded)
            let mut writer = std::process::Command::new("timeout")
                .args(["8", "sh", "-c", &format!("echo host-secret-42 > {}", fifo.display())])
                .spawn()
                .unwrap();
            std::thread::spawn(move || writer.wait());
        })
        .lacks("host-secret-42");
    // pid hopping: the kill loop must outpace processes that change their pid
    pid_hoppers_do_not_outlive_srt => Scenario::new(HOPPER)
        .within(Duration::from_secs(25))
        .check(|e, _| {
            let before = std::fs::metadata(e.w("alive")).map(|m| m.len()).unwrap_or(0);
            std::thread::sleep(Duration::from_millis(500));
            let after = std::fs::metadata(e.w("alive")).map(|m| m.len()).unwrap_or(0);
            if after != before {
                return Err(format!("W/alive grew from {before} to {after} bytes after srt exited"));
            }
            no_process_with(&format!("srt-escape-hopper-{}", e.w.display()))
        });
}
