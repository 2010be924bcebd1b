//! Issue 19, finding H1: git directories made of files only. git's discovery
//! (`is_git_directory` in setup.c) wants a `HEAD` beside `objects` and `refs` it may enter
//! (`access(X_OK)`: an executable file will do, or a symlink to any directory), or beside a
//! `commondir`. Made as files in a directory that existed at launch, they used to leave no
//! trace in the run's journal, so the check after the run never looked there and the
//! planted config ran on the next host `git` in that directory.
//!
//! `sub/` (and `sub2/`, `d1/`, `src/`) exist before the run, owned by the scenario's user.
//! After the run the host runs, as that user, `git -C <dir> status` and `git -C <dir>
//! branch` on a terminal (through `script`, so that git starts its pager): neither may run
//! what the command planted (`core.fsmonitor`, `core.pager`: `touch O/<marker>`).

use super::harness::{Env, Output, Scenario};
use super::review_git::{host_git, host_git_env, run_as_user};
use crate::escapes;

/// Shell for the command: a git config at `$1` whose pager and fsmonitor touch `$O/$2`.
const PLANT: &str = r#"plant() { printf '[core]\n\tpager = touch "%s/%s"\n\tfsmonitor = touch "%s/%s"\n' "$O" "$2" "$O" "$2" > "$1"; }"#;

/// `$1/HEAD` with valid content.
const HEAD: &str = r#"head() { printf 'ref: refs/heads/main\n' > "$1/HEAD"; }"#;

fn attempt(cmd: &str) -> Scenario {
    Scenario::new(&format!("{PLANT}; {HEAD}; {cmd}")).setup(|e| {
        for d in ["sub", "sub2", "d1", "src"] {
            e.dir(&e.w(d));
        }
    })
}

/// `git -C <dir> branch` on the host, on a terminal (`script`), as the scenario's user.
fn host_git_on_tty(e: &Env, dir: &str) -> String {
    let mut c = host_git_env(e, "script");
    c.args(["-qec", &format!("git -C {dir} branch"), "/dev/null"]).env_remove("PAGER").env_remove("GIT_PAGER");
    let (_, text) = run_as_user(c, e, "script (util-linux) must be installed on the host");
    text
}

/// After the run, host git in `dir` (status, and branch with its pager) must not run what
/// the command planted.
fn git_in_runs_nothing(dir: &'static str, marker: &'static str) -> impl Fn(&Env, &Output) -> Result<(), String> {
    move |e, _| {
        let (_, status) = host_git(e, &["-C", dir, "status"]);
        let branch = host_git_on_tty(e, dir);
        if e.o(marker).exists() {
            Err(format!(
                "host git in {dir} ran a program the command planted (O/{marker} exists): status: {status}; branch: {branch}"
            ))
        } else {
            Ok(())
        }
    }
}

escapes! {
    // files made executable as they are made: open(O_CREAT, 0755)
    git_dir_of_executable_files => attempt(
        r#"head sub && plant sub/config pwned && python3 -c 'import os
for n in ("objects", "refs"): os.close(os.open("sub/" + n, os.O_CREAT | os.O_WRONLY, 0o755))'"#)
        .check(git_in_runs_nothing("sub", "pwned"));
    // made plain, then chmod +x
    git_dir_of_files_chmodded => attempt(r#"head sub && plant sub/config pwned && : > sub/objects && : > sub/refs && chmod +x sub/objects sub/refs"#)
        .check(git_in_runs_nothing("sub", "pwned"));
    // made in a directory the command made, then renamed in
    git_dir_of_files_renamed_in => attempt(
        r#"mkdir new && : > new/a && : > new/b && chmod +x new/a new/b && head sub && plant sub/config pwned && mv new/a sub/objects && mv new/b sub/refs"#)
        .check(git_in_runs_nothing("sub", "pwned"));
    // made in another directory that existed at launch, then renamed in, HEAD and config too
    git_dir_of_files_renamed_across => attempt(
        r#": > src/a && : > src/b && chmod +x src/a src/b && head src && plant src/config pwned && mv src/a sub/objects && mv src/b sub/refs && mv src/HEAD sub/HEAD && mv src/config sub/config"#)
        .check(git_in_runs_nothing("sub", "pwned"));
    // hard links to one executable file
    git_dir_of_hard_links => attempt(
        r#"mkdir new && : > new/x && chmod +x new/x && head sub && plant sub/config pwned && ln new/x sub/objects && ln new/x sub/refs"#)
        .check(git_in_runs_nothing("sub", "pwned"));
    // symlinks to any directory there is
    git_dir_of_symlinks => attempt(r#"head sub && plant sub/config pwned && ln -s / sub/objects && ln -s / sub/refs"#)
        .check(git_in_runs_nothing("sub", "pwned"));
    // FIFOs with execute bits
    git_dir_of_fifos => attempt(
        r#"head sub && plant sub/config pwned && python3 -c 'import os
for n in ("objects", "refs"): os.mkfifo("sub/" + n, 0o755)'"#)
        .check(git_in_runs_nothing("sub", "pwned"));
    // HEAD and a commondir naming a directory made a git directory by files, which holds
    // the config git reads
    git_dir_by_commondir => attempt(
        r#"head sub && echo ../sub2 > sub/commondir && : > sub2/objects && : > sub2/refs && chmod +x sub2/objects sub2/refs && plant sub2/config pwned"#)
        .check(git_in_runs_nothing("sub", "pwned"));
    // a `.git` file in an existing directory, naming a git directory made of files: host
    // `git status` there runs its fsmonitor in that work tree
    gitfile_naming_git_dir_of_files => attempt(
        r#"head sub && : > sub/objects && : > sub/refs && chmod +x sub/objects sub/refs && plant sub/config pwned && echo "gitdir: ../sub" > d1/.git"#)
        .check(git_in_runs_nothing("d1", "pwned"));
    // the same, the `.git` file naming the directory by its absolute path
    gitfile_absolute_naming_git_dir_of_files => attempt(
        r#"head sub && : > sub/objects && : > sub/refs && chmod +x sub/objects sub/refs && plant sub/config pwned && echo "gitdir: $PWD/sub" > d1/.git"#)
        .check(git_in_runs_nothing("d1", "pwned"));
    // one run leaves the shape with plain files, the next one switches it on with chmod
    // (which leaves nothing in that run's journal)
    git_dir_switched_on_by_a_later_run => attempt(r#"head sub && plant sub/config pwned && : > sub/objects && : > sub/refs"#)
        .then("chmod +x sub/objects sub/refs")
        .check(git_in_runs_nothing("sub", "pwned"));
    // the third attacker pass: symlinks in a directory the command made itself
    git_dir_of_symlinks_in_a_new_directory => attempt(r#"mkdir newd && head newd && plant newd/config pwned && ln -s /usr newd/objects && ln -s /usr newd/refs"#)
        .check(git_in_runs_nothing("newd", "pwned"));
    // ... and named by a `.git` file in an existing directory that the host repository's
    // index records as a submodule: host `git status` at the top recurses into it
    submodule_gitfile_naming_a_git_dir_of_symlinks => attempt(
        r#"mkdir gd && head gd && plant gd/config pwned && ln -s /usr gd/objects && ln -s /usr gd/refs && echo "gitdir: ../gd" > src/.git && git update-index --add --cacheinfo 160000,1111111111111111111111111111111111111111,src"#)
        .setup(crate::escape::review_git::host_repo)
        .check(git_in_runs_nothing(".", "pwned"));
    // the fourth attacker pass: a `.git` file read one way by srt and another by git
    // (`gitdir: x ` names `x `, with its space) hid where it pointed: a repository deeper
    // than the search, whose config the command rewrote
    gitfile_with_a_trailing_space => attempt(
        r#"printf '[core]\n\tfsmonitor = touch "%s/pwned"\n' "$O" >> a/b/c/d/deep/.git/config && ln -s ../a/b/c/d/deep/.git "src/x " && printf 'gitdir: x \n' > src/.git && git update-index --add --cacheinfo 160000,1111111111111111111111111111111111111111,src"#)
        .setup(|e| {
            crate::escape::review_git::host_repo(e);
            e.dir(&e.w("a/b/c/d"));
            let (ok, text) = host_git(e, &["init", "-q", "a/b/c/d/deep"]);
            assert!(ok, "setup: {text}");
            e.own_tree(&e.w("a"));
        })
        .check(git_in_runs_nothing(".", "pwned"))
        .check(git_in_runs_nothing("src", "pwned"));
    // `.` itself: HEAD, objects and refs as files
    w_git_dir_of_files => attempt(r#"head . ; plant config pwned; : > objects; : > refs; chmod +x objects refs; true"#)
        .check(git_in_runs_nothing(".", "pwned"));
    // `.` itself: a `.git` file naming a git directory made of files
    w_gitfile_naming_git_dir_of_files => attempt(
        r#"head sub && : > sub/objects && : > sub/refs && chmod +x sub/objects sub/refs && plant sub/config pwned; echo "gitdir: sub" > .git; true"#)
        .check(git_in_runs_nothing(".", "pwned"));
}
