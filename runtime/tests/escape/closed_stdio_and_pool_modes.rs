//! Issue 39, item 6: spots a read of the code found, tried from the command's side.
//!
//! A directory the command makes where the pool hands one out gets its mode from srt,
//! now through srt's descriptor of it before the move (by name after it, a directory the
//! command renamed there in between got it: `fs::pool` tests that); here, that it is still
//! the mode mkdir gives.
//!
//! srt started with descriptors 0-2 closed: without std's start-up (srt enters as a C
//! `main`) the first files srt kept open took those numbers, fd 2 among them the run's
//! journal, so srt's warnings were written into the journal, the check after the run could
//! not read it, and a git config the command planted stayed for host git.

use super::harness::{Env, Output, Scenario};
use super::review_git::{host_git, FSMONITOR};
use crate::escapes;

/// Plants an fsmonitor in a repository the command makes, and notes which of its own
/// descriptors 0-2 are open (each tested before anything is redirected).
const PLANT_AND_LOOK: &str = r#"git init -q x && fsmon x/.git/config pwned
for f in 0 1 2; do if [ -e /proc/$$/fd/$f ]; then echo "open $f" >> fds.txt; else echo "closed $f" >> fds.txt; fi; done"#;

/// No journal or spare in srt's state directory (`$XDG_STATE_HOME/srt/runs`, set to
/// `O/state` for both users) holds a message of srt's, and none was set aside as
/// unreadable.
fn journals_hold_no_message(e: &Env, _: &Output) -> Result<(), String> {
    let runs = e.o("state/srt/runs");
    for ent in std::fs::read_dir(&runs).map_err(|err| format!("{}: {err}", runs.display()))?.flatten() {
        let name = ent.file_name().to_string_lossy().into_owned();
        let bytes = std::fs::read(ent.path()).unwrap_or_default();
        if name.ends_with(".unreadable") || bytes.windows(5).any(|w| w == b"srt: ") {
            return Err(format!("{name} holds srt's messages: {}", String::from_utf8_lossy(&bytes)));
        }
    }
    Ok(())
}

/// Directories made in `.` (split) and in `sub` (there at launch), both handed out by the
/// pool, under umask 027: each with the mode mkdir gives it.
const MKDIR_MODES: &str = r#"python3 -c '
import os
os.umask(0o027)
for p, m in (("a", 0o751), ("sub/b", 0o700), ("c", 0o1777)):
    os.mkdir(p, m)
    print(p, oct(os.stat(p).st_mode & 0o7777))
'"#;

escapes! {
    pool_hand_outs_keep_the_mode_mkdir_gives => Scenario::new(MKDIR_MODES)
        .setup(|e| e.dir(&e.w("sub")))
        .prints("a 0o750\nsub/b 0o700\nc 0o1750\n")
        .check(|e, _| {
            use std::os::unix::fs::MetadataExt;
            let got: Vec<String> = ["a", "sub/b", "c"].iter().map(|p| std::fs::metadata(e.w(p)).map_or("gone".into(), |m| format!("{:o}", m.mode() & 0o7777))).collect();
            if got == ["750", "700", "1750"] { Ok(()) } else { Err(format!("modes on the host: {got:?}")) }
        });

    // the user's closed descriptors reach the command closed, and srt's warning (a /dev/shm
    // entry in allowWrite, said after the journal is open) goes nowhere
    stdio_closed_messages_stay_out_of_the_journal => Scenario::new(&format!("{FSMONITOR}; {PLANT_AND_LOOK}"))
        .with("filesystem.allowWrite", serde_json::json!([".", "/dev/shm"]))
        .wrap(r#""$SRT" "$MODE" -s "$SETTINGS" -c "$CMD" <&- >&- 2>&-; echo "srt exited $?""#)
        .env("XDG_STATE_HOME", "{O}/state")
        .prints("srt exited 0")
        .check(journals_hold_no_message)
        .check(|e, _| {
            let _ = host_git(e, &["-C", "x", "status"]);
            if e.o("pwned").exists() { Err("host git ran the planted fsmonitor: the check was not done".into()) } else { Ok(()) }
        })
        .check(|e, _| match std::fs::read_to_string(e.w("fds.txt")) {
            Ok(s) if s == "closed 0\nclosed 1\nclosed 2\n" => Ok(()),
            other => Err(format!("the command's descriptors 0-2: {other:?}")),
        });
}
