//! Delayed host execution, the second attacker pass on the journal: a later srt run
//! finishes the journals of runs that died before their check, and a journal decides what
//! that check removes (the run's TMPDIR, its pools) and renames. A command must not be
//! able to leave one for the next run, in any place a state directory may be.

use std::os::unix::process::CommandExt;

use super::harness::Scenario;
use crate::escapes;

/// A journal written by the command into `$O/srt-state-<uid>/runs` (where `TMPDIR` points
/// srt's state-directory candidates) naming `$O/victim` as the dead run's TMPDIR.
const PLANT: &str = r#"umask 077; d="$O/srt-state-$(id -u)/runs"; mkdir -p "$d" && printf 'R%s\0S0.0\0G0\0M%s/victim\0' "$O" "$O" > "$d/run-1-0000000000000001.journal""#;

/// Run 1 (a state directory elsewhere: `XDG_STATE_HOME` set, so `~/.local/state/srt` is
/// not one of its own and `~/.local` is writable) plants a shelf there: a directory of the
/// user's uid, mode 0700, with a file in it. Run 2 (the same user without
/// `XDG_STATE_HOME`) uses `~/.local/state/srt` and must not hand that directory to its
/// command as a new, empty one.
const PLANT_SHELF: &str = r#"cd "$W"
XDG_STATE_HOME="$O/xdg" "$SRT" "$MODE" -s "$SETTINGS" -c 'umask 077; d="$HOME/.local/state/srt/pool/s-000000000000"; mkdir -p "$d/d0" "$d/d1" && echo planted > "$d/d0/planted" && echo planted > "$d/d1/planted" && echo shelf-planted'
"$SRT" "$MODE" -s "$SETTINGS" -c 'mkdir a b c d e f g h; cat */planted 2>/dev/null; true'
exit 0"#;

/// Plants a git directory (`HEAD`, executable files `objects` and `refs`, a config with
/// `core.fsmonitor`) in the first pool directory of its run it may write that it was not
/// given (the shelf in srt's state directory, or the pool in the working directory), and
/// a `.git` file in a directory of its own that names it.
const PLANT_IN_POOL: &str = r#"python3 - <<'PY'
import os, glob
home, w, o = os.environ['HOME'], os.environ['W'], os.environ['O']
cands = glob.glob(home + '/.local/state/srt/pool/r-*/d*') + glob.glob(w + '/.srt-*/d*')
ok = None
for p in sorted(cands, key=lambda x: -int(x.rsplit('/d', 1)[1])):
    try:
        fd = os.open(p + '/HEAD', os.O_CREAT | os.O_WRONLY, 0o644)
        os.write(fd, b'ref: refs/heads/main\n'); os.close(fd)
        for n in ('objects', 'refs'):
            os.close(os.open(p + '/' + n, os.O_CREAT | os.O_WRONLY, 0o755))
        fd = os.open(p + '/config', os.O_CREAT | os.O_WRONLY, 0o644)
        os.write(fd, ('[core]\n\trepositoryformatversion = 0\n\tfsmonitor = touch %s/evidence\n' % o).encode()); os.close(fd)
        ok = p
        break
    except OSError:
        pass
print('planted in', ok)
if ok:
    os.mkdir('sub')
    with open('sub/.git', 'w') as f:
        f.write('gitdir: %s\n' % ok)
PY"#;

escapes! {
    journal_planted_in_another_state_dir => Scenario::new(PLANT)
        .with("filesystem.allowWrite", serde_json::json!([".", "{O}"]))
        .env("TMPDIR", "{O}")
        .setup(|e| e.file(&e.o("victim/keep"), "user's\n"))
        .fails()
        .then("true")
        .holds("o/victim/keep", "user's\n");

    // srt's directory shelf (`~/.local/state/srt/pool`, kept between runs; for uid 65534,
    // whose home is not writable, the pool made in the working directory): the command's
    // Landlock rules reach every directory of its run's pool, also those it was not given.
    // What it writes there must never reach a later run's tree as a "new, empty" directory.
    pool_directory_written_into_is_not_handed_out_again => Scenario::new(
        r#"n=0; for d in "$HOME"/.local/state/srt/pool/r-*/* "$W"/.srt-*/*; do [ -d "$d" ] && printf 'ref: refs/heads/main\n' > "$d/HEAD" && n=$((n+1)); done; echo "planted in $n"; exit 1"#,
    )
    .fails()
    .then("mkdir a b c d e f g h && cat */HEAD; true")
    .lacks("refs/heads/main")
    .check(|e, _| match ["a", "b", "c", "d", "e", "f", "g", "h"].iter().find(|d| e.w(&format!("{d}/HEAD")).exists()) {
        Some(d) => Err(format!("{d}/HEAD: a later run was given a directory the command wrote into")),
        None => Ok(()),
    });

    planted_shelf_directory_is_not_handed_out => Scenario::new("true")
        .with("filesystem.allowWrite", serde_json::json!([".", "~/.local"]))
        .wrap(PLANT_SHELF)
        .check(|e, o| match ["a", "b", "c", "d", "e", "f", "g", "h"].iter().find(|d| e.w(&format!("{d}/planted")).exists()) {
            Some(d) => Err(format!("{d}/planted: a run was given a directory planted on its shelf: {}", o.text)),
            None => Ok(()),
        });

    // the pool kept in srt's state directory lies outside the writable trees the check
    // walks: what was planted there must be checked all the same
    git_dir_planted_in_a_pool_directory_behind_a_gitfile => Scenario::new(PLANT_IN_POOL)
        .check(|e, o| {
            if !e.w("sub/.git").exists() {
                return Ok(()); // nothing could be planted (namespace mode: a read-only mount)
            }
            let mut git = std::process::Command::new("git");
            git.args(["-c", "safe.directory=*", "-C"]).arg(e.w("sub")).arg("status").env("HOME", &e.root);
            git.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null());
            if let Some(uid) = e.uid {
                git.uid(uid).gid(uid);
            }
            let _ = git.status();
            match e.o("evidence").exists() {
                true => Err(format!("a host `git status` in sub ran the hook planted in a pool directory: {}", o.text)),
                false => Ok(()),
            }
        });
}
