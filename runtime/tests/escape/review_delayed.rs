//! Delayed host execution, the issue-19 review: files inside git directories that host git
//! later writes by following their names (a reflog symlinked to `~/.bashrc`, `refs/heads`
//! made a symlink to a directory), repositories made or moved where no rule follows them,
//! a second writable tree holding a home's files, and trees too big for the launch's
//! search, where the supervisor must recognise what is protected as it goes.
//!
//! Each attempt is followed by the host's own `git` where that is what would run the
//! planted code, and the checks look at what the host has afterwards.

use std::time::Duration;

use super::harness::{Env, Output, Scenario};
use super::review_git::{host_git, host_repo, COMMIT, FSMONITOR};
use crate::escapes;

/// O/bashrc stands for `~/.bashrc`: what host git appends through a planted link lands
/// there.
fn bashrc(e: &Env) {
    e.file(&e.o("bashrc"), "# user's\n");
}

/// O/bashrc holds only what the setup put there.
fn bashrc_unchanged(e: &Env, _: &Output) -> Result<(), String> {
    match std::fs::read_to_string(e.o("bashrc")) {
        Ok(s) if s == "# user's\n" => Ok(()),
        Ok(s) => Err(format!("O/bashrc was written through a link in a git directory: {s:?}")),
        Err(err) => Err(format!("O/bashrc is gone: {err}")),
    }
}

/// A host repository in W with one commit, and O/bashrc.
fn repo_with_commit(e: &Env) {
    bashrc(e);
    host_repo(e);
    let (ok, text) = host_git(e, COMMIT);
    assert!(ok, "setup commit: {text}");
}

/// After the run the host commits in `dir` (relative to W, "." for W itself): nothing may
/// reach O/bashrc, and no link may be left inside `dir`'s git directory.
fn host_commit_in(dir: &'static str) -> impl Fn(&Env, &Output) -> Result<(), String> {
    move |e, o| {
        let args: Vec<&str> = ["-C", dir].iter().chain(COMMIT).copied().collect();
        let _ = host_git(e, &args);
        let _ = host_git(e, &["-C", dir, "fetch", "-q", "."]);
        bashrc_unchanged(e, o)
    }
}

/// No symlink anywhere below `rel` (W-relative) on the host, but those srt moved aside
/// (`*.srt-quarantined`: no name git opens).
fn no_links_below(rel: &'static str) -> impl Fn(&Env, &Output) -> Result<(), String> {
    move |e, _| {
        let mut stack = vec![e.w(rel)];
        while let Some(d) = stack.pop() {
            let Ok(rd) = std::fs::read_dir(&d) else { continue };
            for ent in rd.flatten() {
                let t = ent.file_type().unwrap();
                if t.is_symlink() && !ent.file_name().to_string_lossy().ends_with(".srt-quarantined") {
                    return Err(format!("{} is a symlink on the host", ent.path().display()));
                }
                if t.is_dir() {
                    stack.push(ent.path());
                }
            }
        }
        Ok(())
    }
}

fn link_in_repo(cmd: &str) -> Scenario {
    Scenario::new(cmd).setup(repo_with_commit).fails().check(host_commit_in(".")).check(no_links_below(".git"))
}

fn link_in_new_repo(cmd: &str) -> Scenario {
    Scenario::new(&format!("git init -q sub && {cmd}"))
        .setup(bashrc)
        .check(host_commit_in("sub"))
        .check(no_links_below("sub/.git"))
}

/// A tree bigger than the launch's search may read (it then leaves the rest to the
/// supervisor), with the host's repository below it.
fn big_tree_with_repo(e: &Env) {
    bashrc(e);
    e.dir(&e.w("big/deep"));
    for i in 0..9_000 {
        std::fs::write(e.w(&format!("big/f{i}")), "").unwrap();
    }
    e.own_tree(&e.w("big"));
    let (ok, text) = host_git(e, &["init", "-q", "big/deep/repo"]);
    assert!(ok, "setup: {text}");
}

escapes! {
    // finding 1: the reflog replaced by a symlink to ~/.bashrc; the next host commit appends
    reflog_symlink_to_bashrc => link_in_repo(r#"rm -f .git/logs/HEAD && ln -s "$O/bashrc" .git/logs/HEAD"#);
    // finding 1: the same through COMMIT_EDITMSG, FETCH_HEAD and ORIG_HEAD
    commit_editmsg_symlink => link_in_repo(r#"ln -sf "$O/bashrc" .git/COMMIT_EDITMSG"#);
    fetch_head_symlink => link_in_repo(r#"ln -sf "$O/bashrc" .git/FETCH_HEAD"#);
    orig_head_symlink => link_in_repo(r#"ln -sf "$O/bashrc" .git/ORIG_HEAD"#);
    // finding 1: refs/heads made a symlink to a directory (git then writes <dir>/<branch>)
    refs_heads_dir_symlink => link_in_repo(r#"mv .git/refs/heads .git/refs/h && ln -s "$O" .git/refs/heads"#)
        .check(|e, _| if e.o("master").exists() || e.o("main").exists() { Err("a ref was written into O".into()) } else { Ok(()) });
    // finding 1: a symlink made elsewhere and moved in
    reflog_symlink_moved_in => link_in_repo(r#"ln -s "$O/bashrc" lnk && rm -f .git/logs/HEAD && mv lnk .git/logs/HEAD"#);
    // finding 1: a hard link to the outside file instead
    reflog_hard_link => link_in_repo(r#"rm -f .git/logs/HEAD && ln "$O/bashrc" .git/logs/HEAD"#);
    // finding 1, in a repository the command made: refused as it is made
    reflog_symlink_new_repo => link_in_new_repo(r#"ln -sf "$O/bashrc" sub/.git/logs/HEAD"#).fails();
    // finding 1, the link made before the directory is a git directory: the check moves it aside
    link_then_repo => Scenario::new(
        r#"mkdir -p x/logs && ln -s "$O/bashrc" x/logs/HEAD && mkdir x/objects x/refs && echo 'ref: refs/heads/m' > x/HEAD && printf '[core]\n\tbare = true\n' > x/config"#)
        .setup(bashrc)
        .check(no_links_below("x"))
        .check(|e, o| { let _ = host_git(e, &["--git-dir", e.w("x").to_str().unwrap(), "update-ref", "-m", "evil", "HEAD", "HEAD"]); bashrc_unchanged(e, o) });
    // finding 1: a FIFO in a git directory blocks host git
    fifo_in_git_dir => link_in_repo("rm -f .git/logs/HEAD && mkfifo .git/logs/HEAD").within(Duration::from_secs(40));

    // finding 4: the repository's own config points core.hooksPath into the work tree
    // (husky): its hooks are plain files there, protected like .git/hooks
    hooks_path_in_work_tree => Scenario::new(r#"printf '#!/bin/sh\ntouch "$O/pwned"\n' > .husky/_/pre-commit"#)
        .setup(|e| {
            repo_with_commit(e);
            e.file(&e.w(".husky/_/pre-commit"), "#!/bin/sh\nexit 0\n");
            std::fs::set_permissions(e.w(".husky/_/pre-commit"), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
            let (ok, text) = host_git(e, &["config", "core.hooksPath", ".husky/_"]);
            assert!(ok, "{text}");
        })
        .fails()
        .holds("w/.husky/_/pre-commit", "#!/bin/sh\nexit 0\n")
        .check(|e, _| {
            let _ = host_git(e, COMMIT);
            if e.o("pwned").exists() { Err("host git ran a hook the command wrote".into()) } else { Ok(()) }
        });
    hooks_path_new_hook => Scenario::new(r#"printf '#!/bin/sh\ntouch "$O/pwned"\n' > .husky/_/pre-commit && chmod +x .husky/_/pre-commit"#)
        .setup(|e| {
            repo_with_commit(e);
            e.dir(&e.w(".husky/_"));
            let (ok, text) = host_git(e, &["config", "core.hooksPath", ".husky/_"]);
            assert!(ok, "{text}");
        })
        .fails()
        .absent("w/.husky/_/pre-commit");

    // a repository prepared in TMPDIR (or anywhere) and moved into place whole
    repo_moved_in => Scenario::new(&format!(
        r#"{FSMONITOR}; git init -q "$TMPDIR/r" && fsmon "$TMPDIR/r/.git/config" pwned && mv "$TMPDIR/r" sub"#))
        .check(|e, _| {
            let _ = host_git(e, &["-C", "sub", "status"]);
            if e.o("pwned").exists() { Err("host git in sub ran the planted fsmonitor".into()) } else { Ok(()) }
        });
    // a directory that already holds objects/ and refs/ (left by anyone): one HEAD from a repository
    dormant_bare_shape => Scenario::new(&format!(
        r#"{FSMONITOR}; echo 'ref: refs/heads/m' > d/HEAD && fsmon d/config pwned"#))
        .setup(|e| { e.dir(&e.w("d/objects")); e.dir(&e.w("d/refs")); })
        .check(|e, _| {
            let _ = host_git(e, &["--git-dir", e.w("d").to_str().unwrap(), "status"]);
            if e.o("pwned").exists() { Err("host git ran the planted fsmonitor".into()) } else { Ok(()) }
        });

    // second review: a second writable tree gets the protected names at its top too
    second_tree_bashrc => Scenario::new(r#"echo evil >> "$O/.bashrc""#)
        .with("filesystem.allowWrite", serde_json::json!([".", "{O}"]))
        .setup(|e| e.file(&e.o(".bashrc"), "# user's\n"))
        .fails().holds("o/.bashrc", "# user's\n");
    second_tree_gitconfig => Scenario::new(r#"printf '[core]\n\tpager = evil\n' > "$O/.gitconfig""#)
        .with("filesystem.allowWrite", serde_json::json!([".", "{O}"]))
        .fails().absent("o/.gitconfig");
    second_tree_mcp_json => Scenario::new(r#"echo '{}' > "$O/.mcp.json""#)
        .with("filesystem.allowWrite", serde_json::json!([".", "{O}"]))
        .fails().absent("o/.mcp.json");
    second_tree_hooks => Scenario::new(r#"git init -q "$O" && mkdir -p "$O/.git/hooks" && printf '#!/bin/sh\ntouch "$O/pwned"\n' > "$O/.git/hooks/pre-commit""#)
        .with("filesystem.allowWrite", serde_json::json!([".", "{O}"]))
        .fails().absent("o/.git/hooks/pre-commit");

    // second attacker pass: a repository nested in a second writable tree (below its
    // top) is guarded like one in the project
    second_tree_deep_repo_config => Scenario::new(&format!(r#"{FSMONITOR}; fsmon "$O/a/b/c/.git/config" pwned"#))
        .with("filesystem.allowWrite", serde_json::json!([".", "{O}"]))
        .setup(|e| {
            e.dir(&e.o("a/b"));
            let repo = e.o("a/b/c");
            let (ok, text) = host_git(e, &["init", "-q", repo.to_str().unwrap()]);
            assert!(ok, "setup: {text}");
            e.own_tree(&e.o("a"));
        })
        .check(|e, _| {
            let repo = e.o("a/b/c");
            let _ = host_git(e, &["-C", repo.to_str().unwrap(), "status"]);
            if e.o("pwned").exists() { Err("host git ran the planted fsmonitor".into()) } else { Ok(()) }
        });

    // the third attacker pass: every numbered quarantine name taken first, so that the
    // check's rename had nowhere to go and the planted config stayed
    quarantine_names_taken => Scenario::new(&format!(
        r#"{FSMONITOR}; git init -q x && fsmon cfg pwned && mv cfg x/.git/config && touch x/.git/config.srt-quarantined && for i in $(seq 1 99); do touch x/.git/config.srt-quarantined.$i; done"#
    ))
    .check(|e, _| {
        let _ = host_git(e, &["-C", "x", "status"]);
        if e.o("pwned").exists() { Err("host git ran the planted fsmonitor".into()) } else { Ok(()) }
    });

    // a tree the launch's search could not list whole: the supervisor still knows a git
    // directory's config and hooks, and the protected names, when it meets them
    big_tree_repo_config => Scenario::new(&format!("{FSMONITOR}; fsmon big/deep/repo/.git/config pwned"))
        .setup(big_tree_with_repo).fails()
        .check(|e, _| {
            let _ = host_git(e, &["-C", "big/deep/repo", "status"]);
            if e.o("pwned").exists() { Err("host git ran the planted fsmonitor".into()) } else { Ok(()) }
        })
        .within(Duration::from_secs(60));
    big_tree_repo_hook => Scenario::new(r#"printf '#!/bin/sh\ntouch "$O/pwned"\n' > big/deep/repo/.git/hooks/pre-commit && chmod +x big/deep/repo/.git/hooks/pre-commit"#)
        .setup(big_tree_with_repo).fails().absent("w/big/deep/repo/.git/hooks/pre-commit")
        .within(Duration::from_secs(60));
    big_tree_bashrc => Scenario::new("echo evil > big/.bashrc")
        .setup(big_tree_with_repo).fails().absent("w/big/.bashrc")
        .within(Duration::from_secs(60));
}
