//! Third outside review: ways around the git audit that runs after the command
//! ([`srt_runtime::git::audit`]). Each plants `core.fsmonitor` in a repository that W's index
//! records as a submodule, so a later host `git status` in W would run it.
//!
//! - Dormant: a repository prepared in one run with its `HEAD` removed (no git directory,
//!   so nothing to check), switched on by a later run that only adds `HEAD` (the config is
//!   then older than that run), or a `commondir` pointing at it.
//! - The private TMPDIR kept by taking write permission away from a directory in it, with
//!   a `.git` file in W naming a repository there.
//! - Directories the audit cannot list or rename in (`chmod 111`, `chmod 555`), and a git
//!   directory that can be listed but not searched (`chmod 444`, as root without
//!   capabilities).

use super::harness::{Env, Scenario};
use super::review_git::{git_runs_nothing, host_git, setup_git, COMMIT, STATUS};
use crate::escapes;

fn host_repo_with_commit(e: &Env) {
    setup_git(e, &["init", "-q"]);
    setup_git(e, COMMIT);
}

/// Shell: a repository at `$1` with a commit and `core.fsmonitor` touching `$O/pwned`,
/// recorded in W's index as a submodule at `$2`.
const PLANT: &str = r#"plant() { git init -q "$1" && git -C "$1" config core.fsmonitor "touch $O/pwned; false" && git -C "$1" -c user.email=a@b -c user.name=n commit -q --allow-empty -m x && git update-index --add --cacheinfo 160000,$(git -C "$1" rev-parse HEAD),"$2"; }"#;

fn attempt(cmd: &str) -> Scenario {
    Scenario::new(&format!("{PLANT}; {cmd}")).setup(host_repo_with_commit)
}

/// Nothing the command planted may run, and `git status` must not find the planted
/// config where it was (it may find it quarantined).
fn status_runs_nothing(e: &Env, o: &super::harness::Output) -> Result<(), String> {
    git_runs_nothing(STATUS, "pwned")(e, o)?;
    let (_, text) = host_git(e, &["-C", "vendor/lib", "config", "core.fsmonitor"]);
    if text.contains("pwned") {
        return Err(format!("vendor/lib's git still has the planted fsmonitor: {text}"));
    }
    Ok(())
}

escapes! {
    // run 1 leaves a configured git dir without HEAD; run 2 only puts HEAD back
    dormant_config_switched_on_by_head => attempt(
        r#"printf '[core]\n\tfsmonitor = "touch %s/pwned; false"\n' "$O" > cfg && plant vendor/lib vendor/lib && cp cfg vendor/lib/.git/config && cp vendor/lib/.git/HEAD head.saved && rm vendor/lib/.git/HEAD"#)
        .then("cp head.saved vendor/lib/.git/HEAD")
        .check(status_runs_nothing);
    // run 1 moves the configured git dir to vendor/store (no HEAD there) behind a .git
    // file; run 2 makes the worktree git dir the .git file names, with commondir = ..
    dormant_config_switched_on_by_commondir => attempt(
        r#"plant vendor/lib vendor/lib && printf '[core]\n\tfsmonitor = "touch %s/pwned; false"\n' "$O" > vendor/lib/.git/config && cp vendor/lib/.git/HEAD head.saved && rm vendor/lib/.git/HEAD && mv vendor/lib/.git vendor/store && echo "gitdir: ../store/wt" > vendor/lib/.git"#)
        .then("mkdir vendor/store/wt && cp head.saved vendor/store/wt/HEAD && echo .. > vendor/store/wt/commondir")
        .check(git_runs_nothing(STATUS, "pwned"));
    // a bare repository in the private TMPDIR, kept by `chmod 555`, named by a .git file
    tmpdir_kept_and_named_by_a_gitfile => attempt(
        r#"git init -q --bare "$TMPDIR/r" && c=$(git -C "$TMPDIR/r" -c user.email=a@b -c user.name=n commit-tree -m x $(git -C "$TMPDIR/r" mktree </dev/null)) && git -C "$TMPDIR/r" update-ref refs/heads/master $c && printf '[core]\n\tbare = false\n\tfsmonitor = "touch %s/pwned; false"\n' "$O" > "$TMPDIR/r/config" && mkdir -p vendor/lib && echo "gitdir: $TMPDIR/r" > vendor/lib/.git && git update-index --add --cacheinfo 160000,$c,vendor/lib && chmod 555 "$TMPDIR/r" && echo "$TMPDIR" > tmpdir-was"#)
        .check(git_runs_nothing(STATUS, "pwned"))
        .check(|e, _| {
            let t = std::fs::read_to_string(e.w("tmpdir-was")).unwrap_or_default();
            let t = t.trim();
            if !t.is_empty() && std::path::Path::new(t).exists() {
                Err(format!("the private TMPDIR {t} is still on the host"))
            } else {
                Ok(())
            }
        });
    // a directory above the repository that srt cannot list
    repository_below_an_unlistable_directory => attempt("plant vendor/x/lib vendor/x/lib && chmod 111 vendor/x")
        .check(|e, o| {
            git_runs_nothing(STATUS, "pwned")(e, o)?;
            let (_, text) = host_git(e, &["-C", "vendor/x/lib", "config", "core.fsmonitor"]);
            if text.contains("pwned") { Err(format!("planted fsmonitor still in place: {text}")) } else { Ok(()) }
        });
    // the git directory itself read-only: its config cannot be renamed aside
    read_only_git_directory => attempt("plant vendor/lib vendor/lib && chmod 555 vendor/lib/.git")
        .check(status_runs_nothing);
    // listable but not searchable: looking up config fails with EACCES
    unsearchable_git_directory => attempt(
        "plant vendor/lib vendor/lib && mkdir vendor/store && mv vendor/lib/.git/objects vendor/lib/.git/refs vendor/store/ && rm -rf vendor/lib/.git/hooks vendor/lib/.git/logs vendor/lib/.git/info && ln -s ../../store/objects vendor/lib/.git/objects && ln -s ../../store/refs vendor/lib/.git/refs && chmod 444 vendor/lib/.git")
        .check(git_runs_nothing(STATUS, "pwned"));
}
