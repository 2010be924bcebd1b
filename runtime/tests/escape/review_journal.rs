//! Delayed host execution, the second attacker pass on the journal: a later srt run
//! finishes the journals of runs that died before their check, and a journal decides what
//! that check removes (the run's TMPDIR, its pools) and renames. A command must not be
//! able to leave one for the next run, in any place a state directory may be.

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
}
